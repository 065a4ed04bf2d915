// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - the io_uring commands (IORING_OP_URING_CMD).
 *
 * Same semantics and errors as the ioctls, on the same code underneath
 * (queue.c):
 *
 * - IOPA_URING_CMD_SUBMIT (submitter fd, SQE128): one job per SQE.  The
 *   job keeps the command (job->ucmd) and this file's job ops
 *   (job->ops): when the job ends, however it ends, the core calls them
 *   and the command completes in its task with the job's result instead
 *   of a completion being queued for IOPA_IOC_REAP.
 * - IOPA_URING_CMD_FETCH / _COMMIT_AND_FETCH (worker fd): if a job can
 *   be dispatched at once it is handed over in the issuing task;
 *   otherwise the command parks on ctx->parked.  The run queue
 *   (iopa_kick_workers()) calls back iopa_uring_serve() through
 *   ctx->park_ops before waking ioctl waiters: the job is dispatched
 *   under ctx->lock and handed over (fields, then the fd) in the ring's
 *   task, from task work, exactly as the ioctl does.
 *
 * Going away.  On kernels with cancelable commands (6.7+) both kinds are
 * marked cancelable: io_uring's cancel when the ring closes or its task
 * execs (not when one thread exits: its commands stay, and complete later
 * from io_uring's fallback work) completes a parked fetch with
 * -ECANCELED (a WORK_BATCH whose completions took effect: 0), and a
 * SUBMIT with -ECANCELED
 * too, detaching it from its job (iopa_uring_detach()): a pending job
 * is cancelled; a running one is not preempted but runs on for nobody
 * (an orphan), its worker's COMPLETE accepted, and is cancelled instead
 * of requeued if its worker dies.  Since that CQE comes while the run
 * goes on, a SUBMIT's job is never lent the submitter's fd number.
 * (IORING_OP_ASYNC_CANCEL does not reach uring_cmd requests.)  A fetch
 * whose ring is closing is never handed a job, even before that cancel
 * runs.  Without cancelable commands (6.1), a monitor looks every
 * IOPA_URING_MONITOR_MS, while any command is outstanding, for commands
 * whose task is exec'ing or whose ring is closing, and does the same, as
 * ublk did before 6.7: the same program gets the same CQEs on both.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#ifdef IOPA_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif
#include <linux/io_uring_types.h>
#include <linux/percpu-refcount.h>

#include "iopa.h"

/*
 * The command's ring is being torn down (closed): a CQE posted now would
 * be lost with it.  The ring's references are killed first thing when it
 * closes, before its requests are cancelled, so this also covers the
 * window in which a parked command is not cancelled yet.
 */
static bool iopa_uring_ring_dying(struct io_uring_cmd *cmd)
{
	return percpu_ref_is_dying(&cmd_to_io_kiocb(cmd)->ctx->refs);
}

/* The command area of an SQE of a ring set up with IORING_SETUP_SQE128. */
#define IOPA_SQE128_CMD_LEN	(2 * sizeof(struct io_uring_sqe) - \
				 offsetof(struct io_uring_sqe, cmd))

/* The command area of the SQE, valid only while the command is issued. */
static const void *iopa_uring_payload(const struct io_uring_cmd *cmd)
{
#ifdef IOPA_HAVE_IO_URING_CMD_H
	return io_uring_sqe_cmd(cmd->sqe);
#else
	return cmd->cmd;
#endif
}

/**
 * struct iopa_ufetch - a FETCH or WORK_BATCH command, parked or being
 *	handed jobs
 * @node: L: on ctx->parked while @parked
 * @cmd: the command
 * @w: the worker fd it was issued on
 * @uwork: the user's struct iopa_work array, of @max
 * @task: the issuing task, referenced (the 6.1 monitor checks it)
 * @max: jobs it may take: the places it holds while parked
 *	(w->nr_parked)
 * @n: jobs dispatched to it, in @h (from dispatch to hand-over)
 * @completed: completions of its issue that took effect
 * @nr_done: completions its issue asked for
 * @batch: a WORK_BATCH, whose CQE says how many jobs it got; a FETCH's
 *	says 0
 * @parked: L: waiting for jobs
 * @h: the jobs: served, then claimed (iopa_worker_claim()) and handed over
 */
struct iopa_ufetch {
	struct list_head	node;
	struct io_uring_cmd	*cmd;
	struct iopa_worker	*w;
	struct iopa_work __user	*uwork;
	struct task_struct	*task;
	u32			max;
	u32			n;
	u32			completed;
	u32			nr_done;
	bool			batch;
	bool			parked;
	struct iopa_handout	h[] __counted_by(max);
};

/**
 * struct iopa_ureap - a REAP command, parked or being handed completions
 * @node: L: on ctx->reapers while @parked
 * @cmd: the command
 * @sub: the submitter fd it was issued on
 * @ucqes: the user's array of @nr struct iopa_cqe
 * @task: the issuing task, referenced (the 6.1 monitor checks it)
 * @taken: the completions claimed for it (iopa_sub_claim_locked()), from
 *	its serving to its task work
 * @nr: room in @ucqes
 * @min: completions it waits for
 * @parked: L: waiting
 */
struct iopa_ureap {
	struct list_head	node;
	struct io_uring_cmd	*cmd;
	struct iopa_submitter	*sub;
	struct iopa_cqe __user	*ucqes;
	struct task_struct	*task;
	struct list_head	taken;
	u32			nr;
	u32			min;
	bool			parked;
};

/*
 * The command's private area (pdu): which request it is.  A SUBMIT's
 * @job is cleared under ctx->lock when the job ends, before the job is
 * freed, so a late cancel never sees a freed job.
 */
struct iopa_uring_pdu {
	struct iopa_kjob	*job;
	union {
		struct iopa_ufetch	*uf;
		struct iopa_ureap	*ur;
	};
	s32			res;
	struct task_struct	*task;
};

static struct iopa_uring_pdu *iopa_pdu(struct io_uring_cmd *cmd)
{
	BUILD_BUG_ON(sizeof(struct iopa_uring_pdu) >
		     sizeof_field(struct io_uring_cmd, pdu));
	return (struct iopa_uring_pdu *)cmd->pdu;
}

#ifdef IOPA_HAVE_URING_CANCEL
static void iopa_uring_mark_cancelable(struct io_uring_cmd *cmd,
				       unsigned int issue_flags)
{
	io_uring_cmd_mark_cancelable(cmd, issue_flags);
}

static bool iopa_uring_is_cancel(unsigned int issue_flags)
{
	return issue_flags & IO_URING_F_CANCEL;
}

/* Cancelable commands need no watching. */
static void iopa_uring_watch(struct io_uring_cmd *cmd,
			     struct task_struct **task)
{
}
#else
#define IOPA_URING_MONITOR_MS	100
static void iopa_uring_monitor_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(iopa_uring_monitor, iopa_uring_monitor_fn);

static void iopa_uring_mark_cancelable(struct io_uring_cmd *cmd,
				       unsigned int issue_flags)
{
}

static bool iopa_uring_is_cancel(unsigned int issue_flags)
{
	return false;
}

static void iopa_uring_monitor_arm(void)
{
	queue_delayed_work(system_wq, &iopa_uring_monitor,
			   msecs_to_jiffies(IOPA_URING_MONITOR_MS));
}

/*
 * Remember the task the request belongs to, for the monitor to see it
 * exit: the ring's submitting task, not current, which is an io-wq
 * worker for a punted request (one that idles out exits, while the ring
 * and its task live on).
 */
static void iopa_uring_watch(struct io_uring_cmd *cmd,
			     struct task_struct **task)
{
	/* A fetch parks again after its jobs went back: watched already. */
	if (!*task)
		*task = get_task_struct(cmd_to_io_kiocb(cmd)->task);
	iopa_uring_monitor_arm();
}
#endif

/*
 * A SUBMIT's CQE, from task work: lazily where the kernel can (6.6+),
 * so that on a ring set up with IORING_SETUP_DEFER_TASKRUN a waiter is
 * woken once as many completions are queued as it waits for, not once
 * per job (as ublk completes its requests); elsewhere, as usual.
 */
static void iopa_uring_done_lazy(struct io_uring_cmd *cmd,
				 void (*cb)(struct io_uring_cmd *, unsigned int))
{
#ifdef IOPA_HAVE_URING_LAZY
	io_uring_cmd_do_in_task_lazy(cmd, cb);
#else
	io_uring_cmd_complete_in_task(cmd, cb);
#endif
}

/* ---- SUBMIT ----------------------------------------------------------- */

static void iopa_uring_submit_done_tw(struct io_uring_cmd *cmd,
				      unsigned int issue_flags)
{
	io_uring_cmd_done(cmd, iopa_pdu(cmd)->res, 0, issue_flags);
}

/* Job ops: an io_uring job was queued, PENDING: a cancel may find it. */
static void iopa_uring_job_queued(struct iopa_ctx *ctx, struct iopa_kjob *job)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	list_add_tail(&job->unode, &ctx->uring_jobs);
	ctx->nr_uring_jobs++;
}

/* Job ops: an io_uring job ended: a cancel no longer finds it. */
static void iopa_uring_job_ended(struct iopa_ctx *ctx, struct iopa_kjob *job)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	iopa_pdu(job->ucmd)->job = NULL;
	if (!list_empty(&job->unode)) {
		list_del_init(&job->unode);
		ctx->nr_uring_jobs--;
	}
}

/*
 * The command of @job goes away (its ring or its task): detach it from
 * the job, which no longer reports its end to anyone (an orphan).  A
 * pending job is cancelled (to @gc); a running one runs on, and is
 * cancelled rather than requeued if its worker dies.  The caller
 * completes the command, with -ECANCELED.
 *
 * Return: the command.
 */
static struct io_uring_cmd *iopa_uring_detach(struct iopa_ctx *ctx,
					      struct iopa_kjob *job,
					      struct list_head *gc)
	__must_hold(&ctx->lock)
{
	struct io_uring_cmd *cmd = job->ucmd;

	lockdep_assert_held(&ctx->lock);
	iopa_uring_job_ended(ctx, job);
	job->ucmd = NULL;
	iopa_job_orphan(job, gc);
	return cmd;
}

/* Job ops: an io_uring job, GONE, is being freed: post its CQE. */
static void iopa_uring_job_free(struct iopa_kjob *job, s32 res)
{
	struct iopa_uring_pdu *pdu = iopa_pdu(job->ucmd);

	pdu->res = res;
	if (pdu->task) {
		put_task_struct(pdu->task);
		pdu->task = NULL;
	}
	iopa_uring_done_lazy(job->ucmd, iopa_uring_submit_done_tw);
	job->ucmd = NULL;
}

static const struct iopa_job_ops iopa_uring_job_ops = {
	.queued	= iopa_uring_job_queued,
	.ended	= iopa_uring_job_ended,
	.free	= iopa_uring_job_free,
};

static int iopa_uring_submit(struct iopa_submitter *sub,
			     struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct iopa_uring_pdu *pdu = iopa_pdu(cmd);
	struct iopa_kjob *job;
	struct iopa_job desc;
	LIST_HEAD(batch);
	int ret;

	if (!(issue_flags & IO_URING_F_SQE128))
		return -EINVAL;
	/*
	 * Locating the job may read metadata (bmap()): not in the
	 * non-blocking issue.  -EAGAIN asks io_uring to issue it again
	 * from io-wq, where it may block.
	 */
	if ((issue_flags & IO_URING_F_NONBLOCK) && iopa_order_may_block(sub))
		return -EAGAIN;
	/*
	 * The SQE is the user's: copy it once, then check the copy.  The
	 * rest of the 80-byte command area must be zero, room for later.
	 */
	memcpy(&desc, iopa_uring_payload(cmd), sizeof(desc));
	if (memchr_inv(iopa_uring_payload(cmd) + sizeof(desc), 0,
		       IOPA_SQE128_CMD_LEN - sizeof(desc)))
		return -EINVAL;
	ret = iopa_sub_reserve(sub, 1, false);
	if (ret == -EAGAIN) {
		/*
		 * Full: that is the answer.  Returned, -EAGAIN would read as
		 * "issue again, blocking" and punt the command to io-wq (as
		 * ublk, post the result and say it is queued).
		 */
		io_uring_cmd_done(cmd, ret, 0, issue_flags);
		return -EIOCBQUEUED;
	}
	if (ret < 0)
		return ret;
	ret = iopa_kjob_new(sub, &desc, &batch, &job);
	if (ret) {
		iopa_sub_enqueue(sub, &batch, 0, 1);
		return ret;
	}
	memset(pdu, 0, sizeof(*pdu));
	pdu->job = job;
	job->ucmd = cmd;
	job->ops = &iopa_uring_job_ops;
	INIT_LIST_HEAD(&job->unode);
	iopa_uring_watch(cmd, &pdu->task);
	iopa_uring_mark_cancelable(cmd, issue_flags);
	iopa_sub_enqueue(sub, &batch, 1, 0);
	return -EIOCBQUEUED;
}

/*
 * Cancel a SUBMIT (its ring or task is going away): the command is
 * detached from its job (iopa_uring_detach()) and completes now with
 * -ECANCELED.  A job still being queued (NEW) is left for io_uring's
 * next try.
 */
static void iopa_uring_submit_cancel(struct iopa_submitter *sub,
				     struct io_uring_cmd *cmd,
				     unsigned int issue_flags)
{
	struct iopa_ctx *ctx = sub->ctx;
	bool detached = false;
	struct iopa_kjob *job;
	LIST_HEAD(gc);

	iopa_ctx_lock(ctx);
	job = iopa_pdu(cmd)->job;
	if (job && !iopa_job_is_new(job)) {
		iopa_uring_detach(ctx, job, &gc);
		detached = true;
	}
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
	if (detached)
		io_uring_cmd_done(cmd, -ECANCELED, 0, issue_flags);
}

/* ---- SUBMIT_MANY, REAP ------------------------------------------------- */

static int iopa_uring_submit_many(struct iopa_submitter *sub,
				  struct io_uring_cmd *cmd,
				  unsigned int issue_flags)
{
	struct iopa_uring_submit arg;

	memcpy(&arg, iopa_uring_payload(cmd), sizeof(arg));
	if (arg.flags || !arg.nr || arg.nr > IOPA_BATCH_MAX)
		return -EINVAL;
	/* Locating jobs may read metadata: from io-wq (see SUBMIT). */
	if ((issue_flags & IO_URING_F_NONBLOCK) && iopa_order_may_block(sub))
		return -EAGAIN;
	/*
	 * Never waits for room; -EAGAIN (full) is the answer, posted here
	 * so that io_uring does not take it for "issue again, blocking".
	 */
	io_uring_cmd_done(cmd, iopa_sub_submit(sub, u64_to_user_ptr(arg.jobs),
					       arg.nr, false),
			  0, issue_flags);
	return -EIOCBQUEUED;
}

static const struct iopa_park_ops iopa_uring_park_ops;

/* Can @ur be served: enough completions, or no more to come? */
static bool iopa_ureap_ready(const struct iopa_ureap *ur)
	__must_hold(&ur->sub->ctx->lock)
{
	const struct iopa_submitter *sub = ur->sub;
	/* Those another REAP claimed and copies out are not there. */
	u32 done = sub->nr[IOPA_JOB_DONE] - sub->nr_claimed;

	return done >= ur->min ||
	       (done && !sub->nr[IOPA_JOB_PENDING] &&
		!sub->nr[IOPA_JOB_RUNNING] && !sub->nr_reserved);
}

static void iopa_ureap_unpark(struct iopa_ureap *ur)
	__must_hold(&ur->sub->ctx->lock)
{
	struct iopa_ctx *ctx = ur->sub->ctx;

	lockdep_assert_held(&ctx->lock);
	list_del_init(&ur->node);
	ur->parked = false;
	ctx->nr_reapers--;
	ur->sub->nr_reapers--;
}

static void iopa_ureap_free(struct iopa_ureap *ur)
{
	if (ur->task)
		put_task_struct(ur->task);
	kfree(ur);
}

/*
 * In the ring's task: copy the completions claimed for the command out
 * and post its CQE.  With nowhere to copy them to (a dying task, a
 * fallback worker, a closing ring) they go back to the queue.
 */
static void iopa_uring_reap_tw(struct io_uring_cmd *cmd,
			       unsigned int issue_flags)
{
	struct iopa_ureap *ur = iopa_pdu(cmd)->ur;
	long ret;

	if ((current->flags & (PF_EXITING | PF_KTHREAD)) ||
	    iopa_uring_ring_dying(cmd)) {
		iopa_sub_deliver(ur->sub, &ur->taken, NULL);
		ret = -ECANCELED;
	} else {
		ret = iopa_sub_deliver(ur->sub, &ur->taken, ur->ucqes);
	}
	io_uring_cmd_done(cmd, ret, 0, issue_flags);
	iopa_ureap_free(ur);
}

/*
 * Park ops: a job of @sub ended: serve its parked REAP commands that
 * can be, oldest first.  Context: ctx->lock held; the copy runs later in
 * each command's task.
 */
static void iopa_uring_reap_serve(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_ureap *ur, *tmp;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry_safe(ur, tmp, &ctx->reapers, node) {
		/* A closing ring's REAP takes nothing (its cancel comes). */
		if (ur->sub != sub || !iopa_ureap_ready(ur) ||
		    iopa_uring_ring_dying(ur->cmd))
			continue;
		/* (A concurrent IOPA_IOC_REAP may hold some: fewer.) */
		if (!iopa_sub_claim_locked(sub, &ur->taken, ur->nr))
			break;
		iopa_ureap_unpark(ur);
		io_uring_cmd_complete_in_task(ur->cmd, iopa_uring_reap_tw);
	}
}

static int iopa_uring_reap(struct iopa_submitter *sub,
			   struct io_uring_cmd *cmd, unsigned int issue_flags)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_uring_reap arg;
	struct iopa_ureap *ur;
	LIST_HEAD(taken);

	memcpy(&arg, iopa_uring_payload(cmd), sizeof(arg));
	if (arg.flags || !arg.nr || arg.nr > IOPA_BATCH_MAX || !arg.min ||
	    arg.min > arg.nr)
		return -EINVAL;
	ur = kzalloc(sizeof(*ur), GFP_KERNEL_ACCOUNT);
	if (!ur)
		return -ENOMEM;
	INIT_LIST_HEAD(&ur->node);
	INIT_LIST_HEAD(&ur->taken);
	ur->cmd = cmd;
	ur->sub = sub;
	ur->ucqes = u64_to_user_ptr(arg.cqes);
	ur->nr = arg.nr;
	ur->min = arg.min;
	memset(iopa_pdu(cmd), 0, sizeof(struct iopa_uring_pdu));
	iopa_pdu(cmd)->ur = ur;
	iopa_uring_mark_cancelable(cmd, issue_flags);

	iopa_ctx_lock(ctx);
	if (iopa_ureap_ready(ur) &&
	    iopa_sub_claim_locked(sub, &taken, ur->nr)) {
		/* Completions at once: copy them here, in the issuing task. */
		iopa_ctx_unlock(ctx);
		io_uring_cmd_done(cmd, iopa_sub_deliver(sub, &taken, ur->ucqes),
				  0, issue_flags);
		kfree(ur);
		return -EIOCBQUEUED;
	}
	/* Bounded: each job end of the context looks at every one. */
	if (sub->nr_reapers >= IOPA_SUB_MAX_REAPERS) {
		iopa_ctx_unlock(ctx);
		io_uring_cmd_done(cmd, -EBUSY, 0, issue_flags);
		kfree(ur);
		return -EIOCBQUEUED;
	}
	ctx->park_ops = &iopa_uring_park_ops;
	ur->parked = true;
	list_add_tail(&ur->node, &ctx->reapers);
	ctx->nr_reapers++;
	sub->nr_reapers++;
	iopa_uring_watch(cmd, &ur->task);
	iopa_ctx_unlock(ctx);
	return -EIOCBQUEUED;
}

/* Cancel a parked REAP: it completes with -ECANCELED, taking nothing. */
static void iopa_uring_reap_cancel(struct iopa_submitter *sub,
				   struct io_uring_cmd *cmd,
				   unsigned int issue_flags)
{
	struct iopa_ureap *ur = iopa_pdu(cmd)->ur;
	bool parked;

	iopa_ctx_lock(sub->ctx);
	parked = ur->parked;
	if (parked)
		iopa_ureap_unpark(ur);
	iopa_ctx_unlock(sub->ctx);
	if (!parked)
		return;		/* being served: its CQE is on the way */
	io_uring_cmd_done(cmd, -ECANCELED, 0, issue_flags);
	iopa_ureap_free(ur);
}

/* ---- FETCH ------------------------------------------------------------ */

static void iopa_ufetch_park(struct iopa_ufetch *uf)
	__must_hold(&uf->w->ctx->lock)
{
	struct iopa_ctx *ctx = uf->w->ctx;

	lockdep_assert_held(&ctx->lock);
	ctx->park_ops = &iopa_uring_park_ops;
	uf->parked = true;
	list_add_tail(&uf->node, &ctx->parked);
	ctx->nr_parked++;
	uf->w->nr_parked += uf->max;
}

static void iopa_ufetch_unpark(struct iopa_ufetch *uf)
	__must_hold(&uf->w->ctx->lock)
{
	struct iopa_ctx *ctx = uf->w->ctx;

	lockdep_assert_held(&ctx->lock);
	list_del_init(&uf->node);
	uf->parked = false;
	ctx->nr_parked--;
	uf->w->nr_parked -= uf->max;
}

/* A fetch command taking up to @max jobs into the user's @uwork. */
static struct iopa_ufetch *iopa_ufetch_alloc(struct iopa_worker *w,
					     struct io_uring_cmd *cmd,
					     u64 uwork, u32 max)
{
	struct iopa_ufetch *uf;

	uf = kzalloc(struct_size(uf, h, max), GFP_KERNEL_ACCOUNT);
	if (!uf)
		return NULL;
	uf->max = max;
	INIT_LIST_HEAD(&uf->node);
	uf->cmd = cmd;
	uf->w = w;
	uf->uwork = u64_to_user_ptr(uwork);
	return uf;
}

static void iopa_ufetch_free(struct iopa_ufetch *uf)
{
	if (uf->task)
		put_task_struct(uf->task);
	kfree(uf);
}

/*
 * What the CQE of @uf says, @ret being the jobs handed over or an errno:
 * a FETCH's 0 for its job; a WORK_BATCH's the jobs, or, where its
 * completions all took effect, 0 for a fetch part that failed
 * (iopa_batch_result(), the ioctl's rule), whenever that failure comes:
 * at the issue, at the hand-over from task work, or at a cancel.
 */
static int iopa_ufetch_res(const struct iopa_ufetch *uf, int ret)
{
	if (!uf->batch)
		return ret > 0 ? 0 : ret;
	return iopa_batch_result(ret, uf->completed, uf->nr_done);
}

static int iopa_ufetch_issue(struct iopa_ufetch *uf,
			     const struct iopa_done *done, u32 nr_done,
			     u32 flags, u32 __user *ucompleted,
			     unsigned int issue_flags);

/*
 * In the ring's task: claim the jobs served (those the lease left), install
 * the fds, write the work, post the CQE.  A command that was served no
 * job (its ring is closing) posts -ECANCELED.  One whose every job the
 * lease took back meanwhile is issued again, here: it takes what can be
 * dispatched now, or parks again, as if it had never been served.
 */
static void iopa_uring_fetch_tw(struct io_uring_cmd *cmd,
				unsigned int issue_flags)
{
	struct iopa_ufetch *uf = iopa_pdu(cmd)->uf;
	bool gone;
	int ret;
	u32 n;

	/*
	 * No fd table to install into (a dying or exec'ing task, a fallback
	 * worker), or nobody to read the CQE (a closing ring).
	 */
	gone = (current->flags & (PF_EXITING | PF_KTHREAD)) ||
	       current->in_execve || iopa_uring_ring_dying(cmd);
	n = uf->n ? iopa_worker_claim(uf->w, uf->h, uf->n) : 0;
	if (!n && uf->n && !gone) {
		iopa_ufetch_issue(uf, NULL, 0, 0, NULL, issue_flags);
		return;
	}
	if (!n || gone) {
		if (n)
			iopa_worker_give_back(uf->w, uf->h, n);
		ret = -ECANCELED;
	} else {
		ret = iopa_worker_hand_over(uf->w, uf->h, n, uf->uwork);
	}
	io_uring_cmd_done(cmd, iopa_ufetch_res(uf, ret), 0, issue_flags);
	iopa_ufetch_free(uf);
}

/*
 * Park ops: hand dispatchable jobs to parked fetch commands, each up to
 * the places it holds.  Context: ctx->lock held; the hand-over runs
 * later in each command's task.
 */
static void iopa_uring_serve(struct iopa_ctx *ctx)
	__must_hold(&ctx->lock)
{
	struct iopa_ufetch *uf, *tmp;

	lockdep_assert_held(&ctx->lock);
	list_for_each_entry_safe(uf, tmp, &ctx->parked, node) {
		if (list_empty(&ctx->runnable))
			break;
		iopa_ufetch_unpark(uf);
		/* A closing ring's fetch gets no job, only its -ECANCELED. */
		if (!iopa_uring_ring_dying(uf->cmd))
			uf->n = iopa_worker_take_locked(uf->w, uf->h, uf->max,
							false);
		io_uring_cmd_complete_in_task(uf->cmd, iopa_uring_fetch_tw);
	}
}

static const struct iopa_park_ops iopa_uring_park_ops = {
	.serve	= iopa_uring_serve,
	.reap	= iopa_uring_reap_serve,
};

/*
 * Write the count of completions of a WORK_BATCH to the user, before its
 * CQE can be seen.  It cannot fault (it was written at issue) unless
 * another thread unmapped it since.
 */
static void iopa_ufetch_tell(u32 __user *ucompleted, u32 completed)
{
	if (ucompleted && put_user(completed, ucompleted))
		pr_debug("WORK_BATCH: completed %u, count lost\n", completed);
}

/*
 * Issue a fetch command: complete @done (IOPA_IOC_WORK_BATCH's rules;
 * a WORK_BATCH's count goes to @ucompleted, NULL for the others), then
 * hand @uf jobs here, in the issuing task, if any can be dispatched; or
 * park it for iopa_uring_serve().  @uf is the command's from now on.
 * With @done NULL (and @nr_done 0): the same command again, in its task,
 * after the jobs served to it went back.
 *
 * Return: -EIOCBQUEUED (the CQE was posted, or will be).
 */
static int iopa_ufetch_issue(struct iopa_ufetch *uf,
			     const struct iopa_done *done, u32 nr_done,
			     u32 flags, u32 __user *ucompleted,
			     unsigned int issue_flags)
{
	struct io_uring_cmd *cmd = uf->cmd;
	struct iopa_worker *w = uf->w;
	struct iopa_ctx *ctx = w->ctx;
	u32 completed;
	LIST_HEAD(gc);
	int ret;

	memset(iopa_pdu(cmd), 0, sizeof(struct iopa_uring_pdu));
	iopa_pdu(cmd)->uf = uf;
	iopa_uring_mark_cancelable(cmd, issue_flags);

	iopa_ctx_lock(ctx);
	completed = iopa_worker_complete_locked(w, done, nr_done, &gc, &ret);
	/* Issued again (iopa_uring_fetch_tw()): its first issue's count. */
	if (done) {
		uf->completed = completed;
		uf->nr_done = nr_done;
	}
	if (ret || !uf->max)
		goto out_done;
	for (;;) {
		uf->max = min(uf->max, iopa_worker_room(w));
		if (!uf->max) {
			ret = -EBUSY;
			goto out_done;
		}
		uf->n = iopa_worker_take_locked(w, uf->h, uf->max, true);
		if (uf->n)
			goto hand_over;
		if (flags & IOPA_FETCH_F_NONBLOCK) {
			ret = -EAGAIN;
			goto out_done;
		}
		if (!completed || !ucompleted)
			break;
		/*
		 * The count goes out before the command parks: once parked,
		 * it may be served and its CQE posted from the ring's task
		 * while this one (io-wq) still runs.  Then look again.
		 */
		iopa_kick_workers(ctx, completed);
		iopa_ctx_unlock(ctx);
		iopa_job_free_list(&gc);
		iopa_ufetch_tell(ucompleted, completed);
		ucompleted = NULL;
		iopa_ctx_lock(ctx);
	}
	iopa_ufetch_park(uf);
	iopa_uring_watch(cmd, &uf->task);
	/* The slots the completions freed may serve someone else. */
	iopa_kick_workers(ctx, completed);
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
	return -EIOCBQUEUED;

hand_over:
	/* Jobs at once: hand them over here, in the issuing task. */
	iopa_kick_workers(ctx, completed);
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
	iopa_ufetch_tell(ucompleted, completed);
	ret = iopa_worker_hand_over(w, uf->h, uf->n, uf->uwork);
	/* Done (off the cancelable list) before pdu->uf goes. */
	io_uring_cmd_done(cmd, iopa_ufetch_res(uf, ret), 0, issue_flags);
	iopa_ufetch_free(uf);
	return -EIOCBQUEUED;

out_done:
	iopa_kick_workers(ctx, completed);
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
	iopa_ufetch_tell(ucompleted, completed);
	io_uring_cmd_done(cmd, iopa_ufetch_res(uf, ret), 0, issue_flags);
	iopa_ufetch_free(uf);
	return -EIOCBQUEUED;
}

static int iopa_uring_fetch(struct iopa_worker *w, struct io_uring_cmd *cmd,
			    unsigned int issue_flags, bool commit)
{
	struct iopa_done done = { };
	struct iopa_uring_fetch arg;
	struct iopa_ufetch *uf;

	memcpy(&arg, iopa_uring_payload(cmd), sizeof(arg));
	if (arg.flags || (!commit && arg.res))
		return -EINVAL;
	if (commit && get_user(done.job_id, &((struct iopa_work __user *)
					      u64_to_user_ptr(arg.work))->job_id))
		return -EFAULT;
	done.res = arg.res;
	uf = iopa_ufetch_alloc(w, cmd, arg.work, 1);
	if (!uf)
		return -ENOMEM;
	return iopa_ufetch_issue(uf, &done, commit, 0, NULL, issue_flags);
}

static int iopa_uring_work_batch(struct iopa_worker *w,
				 struct io_uring_cmd *cmd,
				 unsigned int issue_flags)
{
	struct iopa_done d_stack[IOPA_BATCH_ONSTACK], *done = d_stack;
	struct iopa_batch __user *ubatch;
	struct iopa_uring_batch ub;
	struct iopa_batch arg;
	struct iopa_ufetch *uf;
	int ret;

	memcpy(&ub, iopa_uring_payload(cmd), sizeof(ub));
	if (ub.flags || ub.reserved)
		return -EINVAL;
	ubatch = u64_to_user_ptr(ub.batch);
	if (copy_from_user(&arg, ubatch, sizeof(arg)))
		return -EFAULT;
	/* No timeout: a parked command waits until its ring goes. */
	if (arg.timeout_ns)
		return -EINVAL;
	if (put_user(0U, &ubatch->completed))
		return -EFAULT;
	ret = iopa_batch_load(&arg, &done);
	if (ret)
		return ret;
	uf = iopa_ufetch_alloc(w, cmd, arg.work, arg.nr_work);
	if (!uf) {
		ret = -ENOMEM;
		goto out;
	}
	uf->batch = true;
	ret = iopa_ufetch_issue(uf, done, arg.nr_done, arg.flags,
				&ubatch->completed, issue_flags);
out:
	if (done != d_stack)
		kfree(done);
	return ret;
}

/* Cancel a parked FETCH: it completes with -ECANCELED, holding nothing. */
static void iopa_uring_fetch_cancel(struct iopa_worker *w,
				    struct io_uring_cmd *cmd,
				    unsigned int issue_flags)
{
	struct iopa_ufetch *uf = iopa_pdu(cmd)->uf;
	struct iopa_ctx *ctx = w->ctx;
	bool parked;

	iopa_ctx_lock(ctx);
	parked = uf->parked;
	if (parked)
		iopa_ufetch_unpark(uf);
	iopa_ctx_unlock(ctx);
	if (!parked)
		return;		/* being handed a job: its CQE is on the way */
	io_uring_cmd_done(cmd, iopa_ufetch_res(uf, -ECANCELED), 0,
			  issue_flags);
	iopa_ufetch_free(uf);
}

/**
 * iopa_uring_worker_cmd() - the io_uring commands of a worker fd
 * @w: the worker
 * @cmd: the command
 * @issue_flags: io_uring's flags for this issue
 *
 * Return: -EIOCBQUEUED when the CQE comes later (or was posted already),
 * else the result to post.
 */
int iopa_uring_worker_cmd(struct iopa_worker *w, struct io_uring_cmd *cmd,
			  unsigned int issue_flags)
{
	if (iopa_uring_is_cancel(issue_flags)) {
		iopa_uring_fetch_cancel(w, cmd, issue_flags);
		return 0;
	}
	switch (cmd->cmd_op) {
	case IOPA_URING_CMD_FETCH:
		return iopa_uring_fetch(w, cmd, issue_flags, false);
	case IOPA_URING_CMD_COMMIT_AND_FETCH:
		return iopa_uring_fetch(w, cmd, issue_flags, true);
	case IOPA_URING_CMD_WORK_BATCH:
		return iopa_uring_work_batch(w, cmd, issue_flags);
	}
	return -ENOTTY;
}

/**
 * iopa_uring_sub_cmd() - the io_uring commands of a submitter fd
 * @sub: the submitter
 * @cmd: the command
 * @issue_flags: io_uring's flags for this issue
 *
 * Return: -EIOCBQUEUED when the CQE comes later (or was posted already),
 * else the result to post.
 */
int iopa_uring_sub_cmd(struct iopa_submitter *sub, struct io_uring_cmd *cmd,
		       unsigned int issue_flags)
{
	if (iopa_uring_is_cancel(issue_flags)) {
		if (cmd->cmd_op == IOPA_URING_CMD_REAP)
			iopa_uring_reap_cancel(sub, cmd, issue_flags);
		else
			iopa_uring_submit_cancel(sub, cmd, issue_flags);
		return 0;
	}
	switch (cmd->cmd_op) {
	case IOPA_URING_CMD_SUBMIT:
		return iopa_uring_submit(sub, cmd, issue_flags);
	case IOPA_URING_CMD_SUBMIT_MANY:
		return iopa_uring_submit_many(sub, cmd, issue_flags);
	case IOPA_URING_CMD_REAP:
		return iopa_uring_reap(sub, cmd, issue_flags);
	}
	return -ENOTTY;
}

#ifndef IOPA_HAVE_URING_CANCEL
/*
 * The task's exec cancels its commands, as io_uring_task_cancel() does
 * on 6.7+ (and waits for them: the monitor must complete them).  A
 * thread that exits does not: its ring and whoever reaps it live on, and
 * its commands complete later from io_uring's fallback work, as on 6.7+,
 * where a thread's exit cancels no command.  A ring that closes (the
 * last of its process's references gone) is iopa_uring_ring_dying()'s.
 */
static bool iopa_uring_task_gone(struct task_struct *t)
{
	return t->in_execve;
}

/*
 * Entries the monitor looks at per ctx->lock hold, and commands it may
 * complete per hold: the lock is dropped (and the CPU offered) between
 * batches, however many commands a context has.
 */
#define IOPA_URING_MONITOR_BATCH	32

/* Whose task or ring is gone: its CQE will never be reaped. */
static bool iopa_uring_cmd_gone(struct io_uring_cmd *cmd,
				struct task_struct *t)
{
	return (t && iopa_uring_task_gone(t)) || iopa_uring_ring_dying(cmd);
}

/*
 * One batch of @ctx's parked fetches, parked REAPs and SUBMIT jobs, up to
 * *@nf, *@nr and *@nj of them (decremented): the commands of gone tasks
 * and rings are taken off (fetches to @dead, REAPs to @dead_reapers,
 * SUBMITs detached, their commands in @cmds, at most
 * IOPA_URING_MONITOR_BATCH); the others go to the tail of their
 * list, to be looked at again by the next batch or monitor run.  A pass
 * over all of a list leaves its order as it was, unless commands were
 * added between two batches (more than IOPA_URING_MONITOR_BATCH parked
 * fetches): then they are served a little out of turn.
 *
 * Return: how many commands are in @cmds.
 */
static unsigned int iopa_uring_monitor_batch(struct iopa_ctx *ctx,
					     u32 *nf, u32 *nj, u32 *nr,
					     struct list_head *dead,
					     struct list_head *dead_reapers,
					     struct list_head *gc,
					     struct io_uring_cmd **cmds,
					     struct task_struct **tasks)
	__must_hold(&ctx->lock)
{
	unsigned int looked = 0, n = 0;
	struct iopa_ufetch *uf;
	struct iopa_ureap *ur;
	struct iopa_kjob *job;

	lockdep_assert_held(&ctx->lock);
	while (*nf && !list_empty(&ctx->parked) &&
	       looked < IOPA_URING_MONITOR_BATCH) {
		uf = list_first_entry(&ctx->parked, struct iopa_ufetch, node);
		(*nf)--;
		looked++;
		if (!iopa_uring_cmd_gone(uf->cmd, uf->task)) {
			list_move_tail(&uf->node, &ctx->parked);
			continue;
		}
		iopa_ufetch_unpark(uf);
		list_add_tail(&uf->node, dead);
	}
	while (*nr && !list_empty(&ctx->reapers) &&
	       looked < IOPA_URING_MONITOR_BATCH) {
		ur = list_first_entry(&ctx->reapers, struct iopa_ureap, node);
		(*nr)--;
		looked++;
		if (!iopa_uring_cmd_gone(ur->cmd, ur->task)) {
			list_move_tail(&ur->node, &ctx->reapers);
			continue;
		}
		iopa_ureap_unpark(ur);
		list_add_tail(&ur->node, dead_reapers);
	}
	while (*nj && !list_empty(&ctx->uring_jobs) &&
	       looked < IOPA_URING_MONITOR_BATCH) {
		struct iopa_uring_pdu *pdu;

		job = list_first_entry(&ctx->uring_jobs, struct iopa_kjob,
				       unode);
		pdu = iopa_pdu(job->ucmd);
		(*nj)--;
		looked++;
		if (!iopa_uring_cmd_gone(job->ucmd, pdu->task)) {
			list_move_tail(&job->unode, &ctx->uring_jobs);
			continue;
		}
		tasks[n] = pdu->task;
		pdu->task = NULL;
		cmds[n++] = iopa_uring_detach(ctx, job, gc);
	}
	return n;
}

/*
 * Without cancelable commands: complete the commands of exec'ing tasks
 * and closing rings (parked fetches; SUBMITs, whose jobs are detached as
 * io_uring's cancel does on 6.7+: a pending job is cancelled, a running
 * one runs on for nobody), or the task's io_uring exit would wait for
 * them forever (a running job: until it ends).  Runs every
 * IOPA_URING_MONITOR_MS while any command is outstanding, requeued jobs'
 * included, and holds each ctx->lock for one batch at a time.
 */
static void iopa_uring_monitor_fn(struct work_struct *work)
{
	struct task_struct *tasks[IOPA_URING_MONITOR_BATCH];
	struct io_uring_cmd *cmds[IOPA_URING_MONITOR_BATCH];
	struct iopa_ureap *ur, *urtmp;
	struct iopa_ufetch *uf, *tmp;
	unsigned int i, n;
	bool again = false;
	struct iopa_ctx *ctx;
	u32 nf, nj, nr;

	mutex_lock(&iopa_ctx_list_lock);
	list_for_each_entry(ctx, &iopa_ctx_list, node) {
		iopa_ctx_lock(ctx);
		nf = ctx->nr_parked;
		nj = ctx->nr_uring_jobs;
		nr = ctx->nr_reapers;
		while (nf || nj || nr) {
			LIST_HEAD(dead_reapers);
			LIST_HEAD(dead);
			LIST_HEAD(gc);

			n = iopa_uring_monitor_batch(ctx, &nf, &nj, &nr, &dead,
						     &dead_reapers, &gc, cmds,
						     tasks);
			if (list_empty(&ctx->parked))
				nf = 0;
			if (list_empty(&ctx->uring_jobs))
				nj = 0;
			if (list_empty(&ctx->reapers))
				nr = 0;
			iopa_ctx_unlock(ctx);

			/*
			 * Still under iopa_ctx_list_lock: the jobs go before
			 * their commands, which hold the submitter file (so
			 * the submitter and ctx) until completed here; the
			 * last ctx reference is never dropped under the mutex.
			 */
			iopa_job_free_list(&gc);
			list_for_each_entry_safe(uf, tmp, &dead, node) {
				struct io_uring_cmd *cmd = uf->cmd;

				int res = iopa_ufetch_res(uf, -ECANCELED);

				iopa_ufetch_free(uf);
				/* Not under uring_lock: say so, as ublk did. */
				io_uring_cmd_done(cmd, res, 0,
						  IO_URING_F_UNLOCKED);
			}
			list_for_each_entry_safe(ur, urtmp, &dead_reapers,
						 node) {
				struct io_uring_cmd *cmd = ur->cmd;

				iopa_ureap_free(ur);
				io_uring_cmd_done(cmd, -ECANCELED, 0,
						  IO_URING_F_UNLOCKED);
			}
			for (i = 0; i < n; i++) {
				io_uring_cmd_done(cmds[i], -ECANCELED, 0,
						  IO_URING_F_UNLOCKED);
				if (tasks[i])
					put_task_struct(tasks[i]);
			}
			cond_resched();
			iopa_ctx_lock(ctx);
		}
		if (ctx->nr_parked || ctx->nr_uring_jobs || ctx->nr_reapers)
			again = true;
		iopa_ctx_unlock(ctx);
	}
	mutex_unlock(&iopa_ctx_list_lock);
	if (again)
		iopa_uring_monitor_arm();
}
#endif

/**
 * iopa_uring_exit() - module unload: the monitor must not run any more
 */
void iopa_uring_exit(void)
{
#ifndef IOPA_HAVE_URING_CANCEL
	cancel_delayed_work_sync(&iopa_uring_monitor);
#endif
}
