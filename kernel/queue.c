// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - the job core: contexts, submitters, workers and jobs; each
 * job's state machine (iopa.h), dispatch, requeue, death and accounting.
 *
 * Front-ends above it: ioctl.c (the ioctl commands, which check their
 * arguments before calling in here), uring.c (io_uring commands),
 * state.c, and main.c's file operations.  It calls them only
 * through ops they set: a job's ops (job->ops: a front-end that reports
 * the job's end itself) and a context's park ops (runq.c).  Below it:
 * the limit layer (limit.c: each submitter's cycle), measure.c, the run
 * queue (runq.c), dispatch order (order.c), user.c and params.c.
 *
 * A context (an open of /dev/iopa) creates submitter and worker fds.
 * Submitters queue jobs; workers fetch them.  Dispatch serves the
 * context's runnable submitters (those with a pending job and fewer than
 * their limit running) round-robin, one job per turn, each submitter's
 * jobs in FIFO order.  A fetched job hands the worker a new fd for the
 * job's file.  A worker's COMPLETE moves the job to its submitter's done
 * list, from which REAP copies completions out.
 *
 * Death.  A worker fd that is released with jobs held requeues each at
 * the head of its submitter's queue once, or cancels it (-ECANCELED).
 * A submitter fd that is released cancels its pending jobs and drops its
 * unreaped completions; its running jobs finish into nothing.
 *
 * Bounds.  A submitter has at most max_jobs jobs outstanding (pending,
 * running or unreaped, counted with the room a SUBMIT has reserved before
 * allocating), a context at most max_submitters submitters and
 * max_workers workers, a worker at most IOPA_WORKER_MAX_JOBS jobs.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/jiffies.h>
#include <linux/poll.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "iopa.h"
#include "trace.h"

static struct kmem_cache *iopa_job_cache;
static atomic_t iopa_next_ctx_id = ATOMIC_INIT(0);

/* Every context, for debugfs. */
LIST_HEAD(iopa_ctx_list);
DEFINE_MUTEX(iopa_ctx_list_lock);	/* protects iopa_ctx_list */

/* The submitter and worker files' operations (main.c), from init. */
static const struct file_operations *iopa_sub_fops;
static const struct file_operations *iopa_worker_fops;

/* ---- counters --------------------------------------------------------- */

/* The process a job event happens in, for the trace: 0 in a kernel thread. */
static s32 iopa_trace_tgid(void)
{
	return current->flags & PF_KTHREAD ? 0 : task_tgid_nr(current);
}

static void iopa_stat_add(struct iopa_submitter *sub, enum iopa_stat s,
			  long delta)
{
	sub->stat[s] += delta;
	sub->ctx->stat[s] += delta;
	this_cpu_add(iopa_pcpu_totals.stat[s], delta);
}

/* Move @job to state @to, keeping the per-state gauges right. */
static void iopa_job_set_state(struct iopa_kjob *job, enum iopa_job_state to)
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_submitter *sub = job->sub;

	lockdep_assert_held(&sub->ctx->lock);
	if (job->state == IOPA_JOB_PENDING)
		iopa_order_leave(job);
	else if (job->state == IOPA_JOB_RUNNING)
		list_del(&job->run_node);
	if (job->state < IOPA_JOB_NR_COUNTED) {
		sub->nr[job->state]--;
		sub->ctx->nr[job->state]--;
		this_cpu_dec(iopa_pcpu_totals.nr[job->state]);
	}
	/* Ended, taken back or given back: a turn's drain may go on. */
	if (job->state == IOPA_JOB_RUNNING)
		iopa_group_job_left(sub);
	if (to < IOPA_JOB_NR_COUNTED) {
		sub->nr[to]++;
		sub->ctx->nr[to]++;
		this_cpu_inc(iopa_pcpu_totals.nr[to]);
	}
	job->state = to;
	if (to == IOPA_JOB_PENDING)
		iopa_order_pending(job);
	else if (to == IOPA_JOB_RUNNING)
		list_add_tail(&job->run_node, &sub->running);
}

/*
 * Parked io_uring REAPs of @sub may be served now: completions came, or
 * fewer jobs are outstanding (a REAP takes fewer than its min once none
 * can come).  Context: ctx->lock held.
 */
static void iopa_sub_reap_check(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	if (sub->ctx->nr_reapers)
		sub->ctx->park_ops->reap(sub);
}

/*
 * Wake @sub's reapers, room waiters and pollers, if any: most job ends
 * have none, and wake_up() takes the waitqueue's lock each time.  Every
 * change they wait for is made under ctx->lock, and every waiter looks
 * at it under ctx->lock after queueing itself (prepare_to_wait(),
 * poll_wait()): one that queued after wq_has_sleeper() looked (its
 * barrier) sees the change.
 */
static void iopa_sub_wake(struct iopa_submitter *sub)
{
	if (wq_has_sleeper(&sub->wq))
		wake_up(&sub->wq);
}

/* ---- lifetimes -------------------------------------------------------- */

static void iopa_ctx_release(struct kref *ref)
{
	struct iopa_ctx *ctx = container_of(ref, struct iopa_ctx, ref);

	WARN_ON_ONCE(!list_empty(&ctx->workers));
	mutex_lock(&iopa_ctx_list_lock);
	list_del(&ctx->node);
	mutex_unlock(&iopa_ctx_list_lock);
	kfree(ctx);
	atomic_long_dec(&iopa_totals.contexts);
}

/**
 * iopa_ctx_put() - drop a reference on a context
 * @ctx: the context
 *
 * Frees the context with its last reference.
 */
void iopa_ctx_put(struct iopa_ctx *ctx)
{
	kref_put(&ctx->ref, iopa_ctx_release);
}

/**
 * iopa_ctx_alloc() - create a context for a new open of /dev/iopa
 *
 * Return: the context holding one reference (the file's), or NULL.
 */
struct iopa_ctx *iopa_ctx_alloc(void)
{
	struct iopa_ctx *ctx;

	ctx = kzalloc(sizeof(*ctx), GFP_KERNEL_ACCOUNT);
	if (!ctx)
		return NULL;
	spin_lock_init(&ctx->lock);
	kref_init(&ctx->ref);
	INIT_LIST_HEAD(&ctx->runnable);
	INIT_LIST_HEAD(&ctx->workers);
	INIT_LIST_HEAD(&ctx->subs);
	INIT_LIST_HEAD(&ctx->parked);
	INIT_LIST_HEAD(&ctx->uring_jobs);
	INIT_LIST_HEAD(&ctx->reapers);
	init_waitqueue_head(&ctx->fetch_wq);
	ctx->id = atomic_inc_return(&iopa_next_ctx_id);
	mutex_lock(&iopa_ctx_list_lock);
	list_add_tail(&ctx->node, &iopa_ctx_list);
	mutex_unlock(&iopa_ctx_list_lock);
	atomic_long_inc(&iopa_totals.contexts);
	return ctx;
}

static void iopa_sub_release_ref(struct kref *ref)
{
	struct iopa_submitter *sub = container_of(ref, struct iopa_submitter,
						  ref);

	iopa_ctx_put(sub->ctx);
	put_pid(sub->pid);
	kfree(sub);
	atomic_long_dec(&iopa_totals.submitters);
}

/**
 * iopa_sub_put() - drop a reference to @sub, freeing it with the last
 * @sub: the submitter
 */
void iopa_sub_put(struct iopa_submitter *sub)
{
	kref_put(&sub->ref, iopa_sub_release_ref);
}

/**
 * iopa_sub_find_get() - an open submitter by its ids, with a reference
 * @ctx_id: its context's id
 * @sub_id: its id within the context
 *
 * Context: may sleep.
 * Return: the submitter (iopa_sub_put() when done; it may close
 * meanwhile), or NULL if no such submitter is open.
 */
struct iopa_submitter *iopa_sub_find_get(u32 ctx_id, u32 sub_id)
{
	struct iopa_submitter *sub, *found = NULL;
	struct iopa_ctx *ctx;

	mutex_lock(&iopa_ctx_list_lock);
	list_for_each_entry(ctx, &iopa_ctx_list, node) {
		if (ctx->id != ctx_id)
			continue;
		iopa_ctx_lock(ctx);
		list_for_each_entry(sub, &ctx->subs, ctx_node) {
			if (sub->id == sub_id) {
				kref_get(&sub->ref);
				found = sub;
				break;
			}
		}
		iopa_ctx_unlock(ctx);
		break;
	}
	mutex_unlock(&iopa_ctx_list_lock);
	return found;
}

/*
 * Charge up to @want jobs against max_total_jobs; returns how many were
 * charged (0 when the module is at the cap).  iopa_total_uncharge()
 * gives them back: for room not used, and for each job freed.
 */
static u32 iopa_total_charge(u32 want)
{
	long max = READ_ONCE(iopa_tunables.max_total_jobs);
	long cur = atomic_long_read(&iopa_totals.jobs);
	long got;

	do {
		if (cur >= max)
			return 0;
		got = min_t(long, want, max - cur);
	} while (!atomic_long_try_cmpxchg(&iopa_totals.jobs, &cur, cur + got));
	return got;
}

static void iopa_total_uncharge(u32 nr)
{
	atomic_long_sub(nr, &iopa_totals.jobs);
}

/* The job lets go of its file, and of the file's charge to its user. */
static void iopa_job_put_file(struct iopa_kjob *job)
{
	fput(job->file);
	job->file = NULL;
	iopa_user_unpin(job->user);
}

/* Free a job that is GONE or NEW, outside ctx->lock. */
static void iopa_job_free(struct iopa_kjob *job)
{
	if (job->ops)
		job->ops->free(job, job->res);
	if (job->file)
		iopa_job_put_file(job);
	iopa_sub_put(job->sub);
	kmem_cache_free(iopa_job_cache, job);
}

/**
 * iopa_job_free_list() - free the jobs on @gc
 * @gc: jobs that are GONE (or NEW, or dropped with their submitter), on
 *	no shared list
 *
 * Context: process context, ctx->lock not held.
 */
void iopa_job_free_list(struct list_head *gc)
{
	struct iopa_kjob *job, *tmp;
	u32 n = 0;

	list_for_each_entry_safe(job, tmp, gc, node) {
		list_del(&job->node);
		iopa_job_free(job);
		n++;
		cond_resched();
	}
	/* Once for the list: the count is shared by every CPU. */
	if (n)
		iopa_total_uncharge(n);
}

/* ---- dispatch --------------------------------------------------------- */

/*
 * Be at the lease work at @end_ns, not at the time a timer still pending
 * was armed for (a longer lease since changed, with no job running): mod,
 * not queue.
 */
static void iopa_lease_arm(struct iopa_submitter *sub, u64 end_ns, u64 now)
	__must_hold(&sub->ctx->lock)
{
	lockdep_assert_held(&sub->ctx->lock);
	mod_delayed_work(system_wq, &sub->lease_work,
			 end_ns > now ? nsecs_to_jiffies(end_ns - now) + 1 : 0);
}

/*
 * A run of @sub started at @now: its lease ends at @now + lease.  A work
 * already pending is for a run that started earlier, so ends earlier
 * (or for a shorter lease since set): it re-arms itself for the next.
 */
static void iopa_lease_start(struct iopa_submitter *sub, u64 now)
	__must_hold(&sub->ctx->lock)
{
	/* Closed: iopa_sub_close() cancelled the work for good. */
	if (sub->lease_ns && !sub->closed &&
	    !delayed_work_pending(&sub->lease_work))
		iopa_lease_arm(sub, now + sub->lease_ns, now);
}

/*
 * iopa_dispatch() - hand the next job to @w
 * @w: the worker
 * @now: ktime_get_ns(), read once for a batch of jobs
 * @here: the hand-over runs in the current task, which is the worker's:
 *	the job's service starts now.  Else (an io_uring fetch served from
 *	the run queue) the job is served, and its service starts when the
 *	command's task claims it (iopa_worker_claim())
 *
 * Round-robin over the context's runnable submitters; within each, FIFO
 * or the sweep of IOPA_ORDER_SORTED (order.c).  The job is RUNNING from
 * now, counted against its submitter's limit, and handing until its
 * hand-over ends.
 *
 * Context: ctx->lock held.
 * Return: the job, now RUNNING and held by @w, or NULL.
 */
static struct iopa_kjob *iopa_dispatch(struct iopa_worker *w, u64 now,
				       bool here)
	__must_hold(&w->ctx->lock)
{
	struct iopa_ctx *ctx = w->ctx;
	struct iopa_submitter *sub;
	struct iopa_kjob *job;

	lockdep_assert_held(&ctx->lock);
	sub = list_first_entry_or_null(&ctx->runnable, struct iopa_submitter,
				       rr_node);
	if (!sub)
		return NULL;
	job = iopa_order_next(sub);
	iopa_job_set_state(job, IOPA_JOB_RUNNING);
	list_move_tail(&job->node, &w->held);
	job->worker = w;
	job->handing = true;
	w->nr_held++;
	iopa_stat_add(sub, IOPA_STAT_DISPATCHED, 1);
	if (here) {
		iopa_measure_job_started(job, now);
	} else {
		job->served = true;
		job->serve_ns = now;
	}
	iopa_lease_start(sub, now);
	/* Next turn goes to the next submitter. */
	list_del_init(&sub->rr_node);
	iopa_sub_update(sub);
	return job;
}

/*
 * Put a RUNNING job at the head of its submitter's queue.  Its next
 * dispatch is a new fetch; its wait goes on from submit_ns (the caller
 * restarts it for a requeue after a run).
 */
static void iopa_job_queue_head(struct iopa_kjob *job)
{
	job->fetch_ns = 0;
	job->handing = false;
	job->served = false;
	job->ho = NULL;
	job->lent = false;
	if (job->worker) {
		job->worker->nr_held--;
		job->worker = NULL;
	}
	iopa_job_set_state(job, IOPA_JOB_PENDING);
	list_move(&job->node, &job->sub->pending);
	iopa_sub_update(job->sub);
}

/*
 * End @job for good with @res.  Its file is released now.  If its
 * submitter is open the completion is queued to be reaped; otherwise the
 * job moves to @gc, to be freed by the caller after unlocking.
 */
static void iopa_job_end(struct iopa_kjob *job, s32 res, u32 cqe_flags,
			 enum iopa_stat stat, struct list_head *gc)
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_submitter *sub = job->sub;

	lockdep_assert_held(&sub->ctx->lock);
	if (job->worker) {
		job->worker->nr_held--;
		job->worker = NULL;
	}
	if (job->ops)
		job->ops->ended(sub->ctx, job);
	iopa_job_put_file(job);
	job->res = res;
	job->cqe_flags |= cqe_flags;
	iopa_stat_add(sub, stat, 1);
	if (stat == IOPA_STAT_CANCELLED)
		trace_iopa_job_cancel(sub->ctx->id, sub->id, job->id,
				      iopa_trace_tgid(), job->cqe_flags, res);
	if (sub->closed || job->ops || job->orphan) {
		/* Its front-end reports the end (an io_uring CQE), or nobody. */
		iopa_job_set_state(job, IOPA_JOB_GONE);
		list_move_tail(&job->node, gc);
		/* Room for a SUBMIT waiting at max_jobs, or an EPOLLOUT. */
		if (!sub->closed)
			iopa_sub_wake(sub);
	} else {
		iopa_job_set_state(job, IOPA_JOB_DONE);
		list_move_tail(&job->node, &sub->done);
		iopa_sub_wake(sub);
	}
	iopa_sub_update(sub);
	iopa_sub_reap_check(sub);
}

/**
 * iopa_job_orphan() - @job's front-end lets go of it: nobody sees its end
 * @job: the job, queued (not NEW)
 * @gc: where it goes if it needs freeing
 *
 * Its ops are dropped.  A pending job is cancelled; a running one runs
 * on for nobody (its worker's COMPLETE accepted), and is cancelled
 * rather than requeued if its worker dies (iopa_job_unwanted()).
 *
 * Context: ctx->lock held.
 */
void iopa_job_orphan(struct iopa_kjob *job, struct list_head *gc)
	__must_hold(&job->sub->ctx->lock)
{
	lockdep_assert_held(&job->sub->ctx->lock);
	job->ops = NULL;
	job->orphan = true;
	if (job->state == IOPA_JOB_PENDING)
		iopa_job_end(job, -ECANCELED, IOPA_CQE_F_CANCELED,
			     IOPA_STAT_CANCELLED, gc);
}

/**
 * iopa_job_is_new() - is @job still being built, not yet queued?
 * @job: the job
 *
 * Context: ctx->lock held.
 * Return: true while SUBMIT builds it.
 */
bool iopa_job_is_new(const struct iopa_kjob *job)
{
	return job->state == IOPA_JOB_NEW;
}

/*
 * The id a worker names this run of @job by: the job's own id, with
 * IOPA_JOB_ID_RERUN once it was requeued.  A late COMPLETE of the run
 * taken back (its lease ended) then cannot end the next run, even when
 * the same worker fd fetched it again.
 */
static u64 iopa_job_run_id(const struct iopa_kjob *job)
{
	return job->id | (job->cqe_flags & IOPA_CQE_F_REQUEUED ?
			  IOPA_JOB_ID_RERUN : 0);
}

/* A job was bound to the current worker thread: its dispatch event. */
static void iopa_trace_dispatch(const struct iopa_kjob *job)
{
	if (trace_iopa_job_dispatch_enabled())
		trace_iopa_job_dispatch(job->sub->ctx->id, job->sub->id,
					iopa_job_run_id(job), iopa_trace_tgid(),
					job->fetch_ns > job->submit_ns ?
					min_t(u64, U32_MAX,
					      div_u64(job->fetch_ns - job->submit_ns,
						      NSEC_PER_USEC)) : 0);
}

/*
 * Nobody will see the job's end: its submitter closed, or its io_uring
 * command was cancelled.  Such a job is cancelled where another would
 * be requeued (its worker died, or could not be handed it).
 */
static bool iopa_job_unwanted(const struct iopa_kjob *job)
{
	return job->sub->closed || job->orphan;
}

/*
 * Take a RUNNING job back from its worker, which died (@why
 * IOPA_CQE_F_WORKER_DIED) or let the job's lease end (@why
 * IOPA_CQE_F_LEASE_EXPIRED): requeue it once, or cancel it if it may not
 * be requeued, already was, or nobody waits for its end.
 */
static void iopa_job_take_back(struct iopa_kjob *job, u32 why,
			       struct list_head *gc)
{
	if (iopa_job_unwanted(job)) {
		iopa_job_end(job, -ECANCELED, why, IOPA_STAT_CANCELLED, gc);
	} else if ((job->flags & IOPA_JOB_F_NO_REQUEUE) ||
		   (job->cqe_flags & IOPA_CQE_F_REQUEUED)) {
		iopa_job_end(job, -ECANCELED, IOPA_CQE_F_CANCELED | why,
			     IOPA_STAT_CANCELLED, gc);
	} else {
		/* A requeue after a lease still says why, in the CQE. */
		job->cqe_flags |= IOPA_CQE_F_REQUEUED |
				  (why & IOPA_CQE_F_LEASE_EXPIRED);
		iopa_stat_add(job->sub, IOPA_STAT_REQUEUED, 1);
		trace_iopa_job_requeue(job->sub->ctx->id, job->sub->id, job->id,
				       iopa_trace_tgid(), why);
		/* A new wait starts: the queue's, until its next run. */
		job->submit_ns = ktime_get_ns();
		iopa_job_queue_head(job);
	}
}

/*
 * Undo the dispatch of a job that never reached its worker: back to the
 * head of its queue, not counted as dispatched nor as requeued, its queue
 * wait going on; or cancelled if nobody waits for its end.  Either way a
 * running slot of its submitter is free.
 */
static void iopa_job_undispatch(struct iopa_kjob *job, struct list_head *gc)
	__must_hold(&job->sub->ctx->lock)
{
	if (iopa_job_unwanted(job)) {
		iopa_job_end(job, -ECANCELED, IOPA_CQE_F_CANCELED,
			     IOPA_STAT_CANCELLED, gc);
		return;
	}
	iopa_stat_add(job->sub, IOPA_STAT_DISPATCHED, -1);
	iopa_measure_job_given_back(job);
	iopa_job_queue_head(job);
}

/* ---- leases ----------------------------------------------------------- */

/* Jobs the lease work takes back per hold of ctx->lock. */
#define IOPA_LEASE_BATCH	64

/*
 * A served job's lease ended before its command's task claimed it (a
 * worker that does not wait on its ring, say): take it out of the
 * command's jobs, whose hand-over will not see it, and undo its dispatch.
 */
static void iopa_job_unserve(struct iopa_kjob *job, struct list_head *gc)
	__must_hold(&job->sub->ctx->lock)
{
	job->ho->job = NULL;	/* holds no file reference yet */
	iopa_job_undispatch(job, gc);
}

/*
 * The lease of some of @sub's running jobs ended: take them back, as from
 * a worker that died (iopa_job_take_back()), each remembered by its
 * worker, whose COMPLETE of it then fails with -ETIME; and be back when
 * the next lease ends.  A job served to a parked io_uring command that
 * its task has not claimed is taken back undispatched.  A job whose
 * hand-over runs is left to it (its lease starts at the latest when it
 * arrives), and a run lent the submitter's fd number keeps it until its
 * worker completes it.
 *
 * @sub->running is in the order the leases started (dispatch; for a
 * served job its claim, which moves it to the tail), so the walk stops at
 * the first lease that has not ended, past those it skips.
 */
static void iopa_lease_work_fn(struct work_struct *work)
{
	struct iopa_submitter *sub = container_of(to_delayed_work(work),
						  struct iopa_submitter,
						  lease_work);
	struct iopa_ctx *ctx = sub->ctx;
	u64 now = ktime_get_ns(), next = U64_MAX, end;
	struct iopa_kjob *job, *tmp;
	unsigned int n = 0;
	LIST_HEAD(gc);

	iopa_ctx_lock(ctx);
	if (sub->closed || !sub->lease_ns)
		goto out;
	list_for_each_entry_safe(job, tmp, &sub->running, run_node) {
		struct iopa_worker *w = job->worker;

		if (job->lent)
			continue;
		end = (job->served ? job->serve_ns : job->fetch_ns) +
		      sub->lease_ns;
		if (!job->served && READ_ONCE(job->handing)) {
			/*
			 * Its hand-over runs (a copy to user memory may
			 * fault in): look again a lease later at the
			 * latest, not in a loop.
			 */
			next = min(next, max(end, now + sub->lease_ns));
			continue;
		}
		if (end > now) {
			next = min(next, end);
			break;
		}
		if (n == IOPA_LEASE_BATCH) {
			next = now;	/* the rest after the lock was let go */
			break;
		}
		n++;
		if (job->served) {
			iopa_job_unserve(job, &gc);
			continue;
		}
		w->expired[w->expired_next++ % IOPA_WORKER_EXPIRED] =
			iopa_job_run_id(job);
		iopa_job_take_back(job, IOPA_CQE_F_LEASE_EXPIRED, &gc);
	}
	if (next != U64_MAX)
		iopa_lease_arm(sub, next, now);
	/* Each job taken back frees a running slot of the submitter. */
	iopa_kick_workers(ctx, n);
out:
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
}

/**
 * iopa_sub_set_lease() - set the lease of @sub's jobs
 * @sub: the submitter
 * @lease_ns: a job running longer is taken back; 0: no lease
 */
void iopa_sub_set_lease(struct iopa_submitter *sub, u64 lease_ns)
{
	iopa_ctx_lock(sub->ctx);
	sub->lease_ns = lease_ns;
	/*
	 * The running jobs' leases count from their fetch: look now.  So
	 * does a work still pending for a longer lease (its jobs are gone):
	 * iopa_lease_start() leaves a pending work alone.
	 */
	if (lease_ns && (!list_empty(&sub->running) ||
			 delayed_work_pending(&sub->lease_work)))
		mod_delayed_work(system_wq, &sub->lease_work, 0);
	iopa_ctx_unlock(sub->ctx);
}

/**
 * iopa_sub_lease() - the lease of @sub's jobs
 * @sub: the submitter
 *
 * Return: the lease in nanoseconds, 0 for none.
 */
u64 iopa_sub_lease(struct iopa_submitter *sub)
{
	u64 ns;

	iopa_ctx_lock(sub->ctx);
	ns = sub->lease_ns;
	iopa_ctx_unlock(sub->ctx);
	return ns;
}

/* ---- submitter -------------------------------------------------------- */

static u32 iopa_sub_outstanding(const struct iopa_submitter *sub)
{
	return sub->nr[IOPA_JOB_PENDING] + sub->nr[IOPA_JOB_RUNNING] +
	       sub->nr[IOPA_JOB_DONE] + sub->nr_reserved;
}

static u32 iopa_sub_room(const struct iopa_submitter *sub)
{
	u32 max = READ_ONCE(iopa_tunables.max_jobs);
	u32 used = iopa_sub_outstanding(sub);

	return used < max ? max - used : 0;
}

static bool iopa_sub_has_room(struct iopa_submitter *sub)
{
	bool room;

	iopa_ctx_lock(sub->ctx);
	room = iopa_sub_room(sub) > 0;
	iopa_ctx_unlock(sub->ctx);
	return room;
}

/**
 * iopa_sub_has_done() - has @sub completions to reap?
 * @sub: the submitter
 *
 * Return: true if a completion is queued.
 */
bool iopa_sub_has_done(struct iopa_submitter *sub)
{
	bool done;

	iopa_ctx_lock(sub->ctx);
	done = !list_empty(&sub->done);
	iopa_ctx_unlock(sub->ctx);
	return done;
}

/**
 * iopa_sub_reserve() - reserve room for up to @want jobs
 * @sub: the submitter
 * @want: jobs to be built
 * @wait: wait (interruptibly) while the submitter has no room
 *
 * Room is taken from the submitter's max_jobs and from the module's
 * max_total_jobs.  Only the first is waited for: the second is a bound
 * on the whole module's memory, freed by other users' reaping, and is
 * answered at once.  iopa_sub_enqueue() gives back what is not used.
 *
 * Return: the room reserved (>= 1), -EAGAIN (the submitter is full),
 * -ENOSPC (the module is full) or -ERESTARTSYS.
 */
int iopa_sub_reserve(struct iopa_submitter *sub, u32 want, bool wait)
{
	u32 got, charged;

	for (;;) {
		iopa_ctx_lock(sub->ctx);
		got = min(want, iopa_sub_room(sub));
		sub->nr_reserved += got;
		iopa_ctx_unlock(sub->ctx);
		if (got)
			break;
		if (!wait)
			return -EAGAIN;
		if (wait_event_interruptible(sub->wq, iopa_sub_has_room(sub)))
			return -ERESTARTSYS;
	}
	charged = iopa_total_charge(got);
	if (charged < got) {
		iopa_ctx_lock(sub->ctx);
		sub->nr_reserved -= got - charged;
		iopa_sub_reap_check(sub);
		iopa_ctx_unlock(sub->ctx);
		iopa_sub_wake(sub);
	}
	return charged ? charged : -ENOSPC;
}

/*
 * A job's file must be a regular file that can be read or written with
 * the usual I/O paths, a directory or a block device.  That refuses
 * pidfds and namespace files (S_IFREG, but no read_iter) as well as
 * io_uring, epoll and our own fds, which can pin other files, ours
 * among them, and would make reference cycles.
 */
static bool iopa_job_file_ok(const struct file *file)
{
	umode_t mode = file_inode(file)->i_mode;

	if (iopa_is_iopa_file(file))
		return false;
	if (S_ISREG(mode))
		return file->f_op->read_iter || file->f_op->write_iter;
	return S_ISDIR(mode) || S_ISBLK(mode);
}

/**
 * iopa_kjob_new() - check a job description and allocate its job
 * @sub: the submitter
 * @desc: the description, a kernel copy
 * @batch: the new job goes at its tail, for iopa_sub_enqueue()
 * @jobp: the new job (NEW, holding its own file reference), built in room
 *	taken by iopa_sub_reserve()
 *
 * Return: 0, -EINVAL, -EBADF, -ETOOMANYREFS (the user pins as many files
 * through jobs as RLIMIT_NOFILE allows: user.c) or -ENOMEM.
 */
int iopa_kjob_new(struct iopa_submitter *sub, const struct iopa_job *desc,
		  struct list_head *batch, struct iopa_kjob **jobp)
{
	struct iopa_kjob *job;
	struct iopa_user *user;
	struct file *file;

	if ((desc->flags & ~IOPA_JOB_F_MASK) || desc->reserved)
		return -EINVAL;
	if (desc->offset > S64_MAX || desc->len > S64_MAX - desc->offset)
		return -EINVAL;
	file = fget(desc->fd);
	if (!file)
		return -EBADF;
	if (!iopa_job_file_ok(file)) {
		fput(file);
		return -EINVAL;
	}
	user = iopa_user_pin();
	if (IS_ERR(user)) {
		fput(file);
		return PTR_ERR(user);
	}
	job = kmem_cache_zalloc(iopa_job_cache, GFP_KERNEL);
	if (!job) {
		iopa_user_unpin(user);
		fput(file);
		return -ENOMEM;
	}
	kref_get(&sub->ref);
	job->sub = sub;
	job->file = file;
	job->user = user;
	job->user_data = desc->user_data;
	job->offset = desc->offset;
	job->len = desc->len;
	job->flags = desc->flags;
	job->ufd = desc->fd;
	RB_CLEAR_NODE(&job->sort_node);
	if (READ_ONCE(sub->order) != IOPA_ORDER_FIFO)
		job->location = iopa_order_locate(file, desc->offset);
	job->state = IOPA_JOB_NEW;
	list_add_tail(&job->node, batch);
	*jobp = job;
	return 0;
}

/**
 * iopa_sub_enqueue() - queue built jobs
 * @sub: the submitter
 * @batch: @nr NEW jobs
 * @nr: how many
 * @unused: room reserved for jobs that were not built, given back
 */
void iopa_sub_enqueue(struct iopa_submitter *sub, struct list_head *batch,
		      u32 nr, u32 unused)
{
	struct iopa_ctx *ctx = sub->ctx;
	u64 now = nr ? ktime_get_ns() : 0;
	struct iopa_kjob *job, *tmp;

	iopa_ctx_lock(ctx);
	list_for_each_entry_safe(job, tmp, batch, node) {
		job->submit_ns = now;
		job->id = ++ctx->next_job_id;
		trace_iopa_job_submit(ctx->id, sub->id, job->id,
				      iopa_trace_tgid(), job->offset, job->len);
		iopa_limit_note_file(sub, job->file);
		iopa_job_set_state(job, IOPA_JOB_PENDING);
		list_move_tail(&job->node, &sub->pending);
		if (job->ops)
			job->ops->queued(ctx, job);
	}
	sub->nr_reserved -= nr + unused;
	iopa_sub_reap_check(sub);
	iopa_total_uncharge(unused);
	iopa_stat_add(sub, IOPA_STAT_SUBMITTED, nr);
	if (nr)
		iopa_limit_wake(sub);
	iopa_sub_update(sub);
	iopa_kick_workers(ctx, nr);
	if (unused)
		iopa_sub_wake(sub);
	iopa_ctx_unlock(ctx);
}

static void iopa_cqe_fill(struct iopa_cqe *cqe, const struct iopa_kjob *job)
{
	cqe->user_data = job->user_data;
	cqe->job_id = job->id;
	cqe->res = job->res;
	cqe->flags = job->cqe_flags;
}

/* Job descriptions SUBMIT copies in at a time (640 bytes of stack). */
#define IOPA_SUBMIT_CHUNK	16

/**
 * iopa_sub_submit() - SUBMIT: check and queue jobs described in user memory
 * @sub: the submitter
 * @ujobs: the descriptions, an array of @nr
 * @nr: how many, 1..IOPA_BATCH_MAX
 * @wait: until the first job is accepted, wait while the submitter has
 *	max_jobs jobs outstanding
 *
 * Return: how many jobs were accepted (the first ones of the array), or
 * the errno of the first if none was.
 */
long iopa_sub_submit(struct iopa_submitter *sub,
		     const struct iopa_job __user *ujobs, u32 nr, bool wait)
{
	struct iopa_job desc[IOPA_SUBMIT_CHUNK];
	u32 done = 0, built, have, base, n;
	int ret = 0, room;

	while (done < nr) {
		LIST_HEAD(batch);

		/*
		 * Block for room only before the first job is accepted: a
		 * caller that reaps its own completions must get control
		 * back once some of its jobs are in.
		 */
		room = iopa_sub_reserve(sub, nr - done, !done && wait);
		if (room < 0) {
			ret = room;
			break;
		}
		for (built = 0, have = 0, base = 0; built < room; built++) {
			struct iopa_kjob *job;

			if (built == have) {
				/*
				 * The next descriptors, a chunk per copy; those
				 * before a fault in it are still taken.
				 */
				n = min_t(u32, room - built, IOPA_SUBMIT_CHUNK);
				n -= DIV_ROUND_UP(copy_from_user(desc,
								 &ujobs[done + built],
								 n * sizeof(desc[0])),
						  sizeof(desc[0]));
				if (!n) {
					ret = -EFAULT;
					break;
				}
				base = built;
				have = built + n;
			}
			ret = iopa_kjob_new(sub, &desc[built - base], &batch,
					    &job);
			if (ret)
				break;
		}
		iopa_sub_enqueue(sub, &batch, built, room - built);
		done += built;
		if (ret)
			break;
		cond_resched();
	}
	return done ? done : ret;
}

/**
 * iopa_sub_claim_locked() - take up to @nr of @sub's completions
 * @sub: the submitter
 * @taken: they go at its tail, in order, for iopa_sub_deliver()
 * @nr: at most this many
 *
 * Context: ctx->lock held.
 * Return: how many were taken.
 */
u32 iopa_sub_claim_locked(struct iopa_submitter *sub, struct list_head *taken,
			  u32 nr)
	__must_hold(&sub->ctx->lock)
{
	struct iopa_kjob *job, *tmp;
	u32 n = 0;

	lockdep_assert_held(&sub->ctx->lock);
	list_for_each_entry_safe(job, tmp, &sub->done, node) {
		if (n == nr)
			break;
		list_move_tail(&job->node, taken);
		n++;
	}
	sub->nr_claimed += n;
	return n;
}

/**
 * iopa_sub_deliver() - copy claimed completions out, and free them
 * @sub: the submitter
 * @taken: completions taken by iopa_sub_claim_locked(); emptied
 * @ucqes: where, an array with room for all of them, or NULL to put
 *	them all back
 *
 * The completions copied are freed; the others go back to the head of
 * the submitter's queue, in order.
 *
 * Return: how many were copied, or -EFAULT if none could be.
 */
long iopa_sub_deliver(struct iopa_submitter *sub, struct list_head *taken,
		      struct iopa_cqe __user *ucqes)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_kjob *job, *tmp;
	u32 n = 0, copied, claimed;
	LIST_HEAD(gc);

	claimed = list_count_nodes(taken);
	list_for_each_entry(job, taken, node) {
		struct iopa_cqe cqe;

		if (!ucqes)
			break;
		iopa_cqe_fill(&cqe, job);
		if (copy_to_user(&ucqes[n], &cqe, sizeof(cqe)))
			break;
		n++;
	}
	copied = n;

	/* Free what was copied; put the rest back at the head, in order. */
	iopa_ctx_lock(ctx);
	list_for_each_entry_safe(job, tmp, taken, node) {
		if (!n--)
			break;
		iopa_job_set_state(job, IOPA_JOB_GONE);
		list_move_tail(&job->node, &gc);
	}
	list_splice_init(taken, &sub->done);
	iopa_sub_wake(sub);
	sub->nr_claimed -= claimed;
	/* Completions put back may serve a parked io_uring REAP. */
	if (!list_empty(&sub->done))
		iopa_sub_reap_check(sub);
	iopa_ctx_unlock(ctx);

	iopa_job_free_list(&gc);
	return copied ? copied : -EFAULT;
}

/**
 * iopa_sub_reap() - copy up to @nr of @sub's completions out
 * @sub: the submitter
 * @ucqes: where, an array of @nr
 * @nr: at most this many
 *
 * The completions copied are freed; the others stay queued, in order.
 *
 * Return: how many were copied; 0 if none was queued; -EFAULT if none
 * could be copied.
 */
long iopa_sub_reap(struct iopa_submitter *sub, struct iopa_cqe __user *ucqes,
		   u32 nr)
{
	LIST_HEAD(taken);
	u32 n;

	/* Take up to nr completions, to copy them out unlocked. */
	iopa_ctx_lock(sub->ctx);
	n = iopa_sub_claim_locked(sub, &taken, nr);
	iopa_ctx_unlock(sub->ctx);
	return n ? iopa_sub_deliver(sub, &taken, ucqes) : 0;
}

static bool iopa_sub_running(struct iopa_submitter *sub, u64 user_data)
{
	struct iopa_kjob *job;

	list_for_each_entry(job, &sub->running, run_node)
		if (job->user_data == user_data)
			return true;
	return false;
}

/**
 * iopa_sub_cancel() - cancel @sub's pending jobs of @user_data
 * @sub: the submitter
 * @user_data: the jobs' cookie
 * @all: all of them, else the oldest
 *
 * Return: how many were cancelled; -EALREADY if none is pending but one
 * runs; -ENOENT if none is pending or running.
 */
long iopa_sub_cancel(struct iopa_submitter *sub, u64 user_data, bool all)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_kjob *job, *tmp;
	LIST_HEAD(gc);
	long n = 0;

	iopa_ctx_lock(ctx);
	list_for_each_entry_safe(job, tmp, &sub->pending, node) {
		if (job->user_data != user_data)
			continue;
		iopa_job_end(job, -ECANCELED, IOPA_CQE_F_CANCELED,
			     IOPA_STAT_CANCELLED, &gc);
		n++;
		if (!all)
			break;
	}
	if (!n)
		n = iopa_sub_running(sub, user_data) ? -EALREADY : -ENOENT;
	iopa_ctx_unlock(ctx);
	/* io_uring jobs and orphans end GONE: theirs to free here. */
	iopa_job_free_list(&gc);
	return n;
}

/**
 * iopa_stats_fill() - the counters of struct iopa_stats
 * @st: filled in (the nr_* fields are left alone)
 * @stat: a context's or submitter's event counters
 * @nr: its jobs per counted state
 *
 * Context: the owner's ctx->lock held.
 */
void iopa_stats_fill(struct iopa_stats *st, const u64 *stat, const u32 *nr)
{
	st->submitted = stat[IOPA_STAT_SUBMITTED];
	st->dispatched = stat[IOPA_STAT_DISPATCHED];
	st->completed = stat[IOPA_STAT_COMPLETED];
	st->cancelled = stat[IOPA_STAT_CANCELLED];
	st->requeued = stat[IOPA_STAT_REQUEUED];
	st->pending = nr[IOPA_JOB_PENDING];
	st->inflight = nr[IOPA_JOB_RUNNING];
	st->unreaped = nr[IOPA_JOB_DONE];
}

/**
 * iopa_sub_stats() - a submitter's IOPA_IOC_GET_STATS
 * @sub: the submitter
 * @st: filled in
 */
void iopa_sub_stats(struct iopa_submitter *sub, struct iopa_stats *st)
{
	iopa_ctx_lock(sub->ctx);
	iopa_stats_fill(st, sub->stat, sub->nr);
	iopa_ctx_unlock(sub->ctx);
}

/**
 * iopa_sub_poll() - poll of a submitter fd
 * @sub: the submitter
 * @file: its file
 * @wait: the poll table
 *
 * Return: EPOLLIN with completions to reap, EPOLLOUT with room to submit.
 */
__poll_t iopa_sub_poll(struct iopa_submitter *sub, struct file *file,
		       poll_table *wait)
{
	__poll_t mask = 0;

	poll_wait(file, &sub->wq, wait);
	iopa_ctx_lock(sub->ctx);
	if (!list_empty(&sub->done))
		mask |= EPOLLIN | EPOLLRDNORM;
	if (iopa_sub_room(sub))
		mask |= EPOLLOUT | EPOLLWRNORM;
	iopa_ctx_unlock(sub->ctx);
	return mask;
}

/*
 * Drop every job on @list (all in state @state) from the gauges and move
 * them to @gc, O(1) in the lock however many there are: the caller puts
 * the files and frees the memory, unlocked.  The jobs are not marked
 * GONE one by one: on @gc nothing looks at them again (a submitter being
 * released has no io_uring job, whose command would hold its file).
 */
static u32 iopa_sub_drop_list(struct iopa_submitter *sub,
			      struct list_head *list,
			      enum iopa_job_state state, struct list_head *gc)
	__must_hold(&sub->ctx->lock)
{
	u32 n = sub->nr[state];

	lockdep_assert_held(&sub->ctx->lock);
	if (state == IOPA_JOB_PENDING) {
		struct iopa_kjob *job;

		sub->sorted = RB_ROOT;
		sub->reindex = NULL;
		if (trace_iopa_job_cancel_enabled())
			list_for_each_entry(job, list, node)
				trace_iopa_job_cancel(sub->ctx->id, sub->id,
						      job->id, iopa_trace_tgid(),
						      IOPA_CQE_F_CANCELED,
						      -ECANCELED);
	}
	list_splice_tail_init(list, gc);
	sub->nr[state] = 0;
	sub->ctx->nr[state] -= n;
	this_cpu_sub(iopa_pcpu_totals.nr[state], n);
	return n;
}

/**
 * iopa_sub_close() - the submitter fd is gone
 * @sub: the submitter
 *
 * Cancel what is pending, drop what is unreaped.  Running jobs keep
 * their submitter reference and are freed when their worker completes
 * them or dies.
 */
void iopa_sub_close(struct iopa_submitter *sub)
{
	struct iopa_ctx *ctx = sub->ctx;
	LIST_HEAD(gc);
	u32 n;

	iopa_ctx_lock(ctx);
	sub->closed = true;
	ctx->nr_submitters--;
	iopa_user_del_sub(sub->user);
	list_del(&sub->ctx_node);
	list_del_init(&sub->rr_node);
	n = iopa_sub_drop_list(sub, &sub->pending, IOPA_JOB_PENDING, &gc);
	iopa_stat_add(sub, IOPA_STAT_CANCELLED, n);
	iopa_sub_drop_list(sub, &sub->done, IOPA_JOB_DONE, &gc);
	iopa_ctx_unlock(ctx);

	/* Pending jobs still hold their files: iopa_job_free() puts them. */
	iopa_job_free_list(&gc);
	/* Closed: the work does not arm itself again. */
	cancel_delayed_work_sync(&sub->lease_work);
	iopa_limit_stop(sub);
	iopa_sub_put(sub);
}

/**
 * iopa_sub_create() - a new submitter of @ctx, and its fd
 * @ctx: the context
 * @limit: its fixed limit, 0 to adapt
 *
 * Return: the fd, -ENOMEM, -ENOSPC (max_submitters), -EDQUOT
 * (max_user_submitters) or another errno of anon_inode_getfd().
 */
int iopa_sub_create(struct iopa_ctx *ctx, u32 limit)
{
	unsigned int max = READ_ONCE(iopa_tunables.max_user_submitters);
	struct iopa_submitter *sub;
	struct iopa_user *user;
	int fd;

	user = iopa_user_add_sub(max);
	if (IS_ERR(user))
		return PTR_ERR(user);
	sub = kzalloc(sizeof(*sub), GFP_KERNEL_ACCOUNT);
	if (!sub) {
		iopa_user_del_sub(user);
		return -ENOMEM;
	}
	sub->user = user;
	kref_init(&sub->ref);
	INIT_LIST_HEAD(&sub->pending);
	sub->sorted = RB_ROOT;
	INIT_LIST_HEAD(&sub->done);
	INIT_LIST_HEAD(&sub->running);
	INIT_DELAYED_WORK(&sub->lease_work, iopa_lease_work_fn);
	INIT_LIST_HEAD(&sub->rr_node);
	init_waitqueue_head(&sub->wq);
	sub->ctx = ctx;
	sub->pid = get_task_pid(current, PIDTYPE_TGID);
	get_task_comm(sub->comm, current);
	iopa_limit_init(sub, limit);

	iopa_ctx_lock(ctx);
	if (ctx->nr_submitters >= READ_ONCE(iopa_tunables.max_submitters)) {
		iopa_ctx_unlock(ctx);
		iopa_user_del_sub(user);
		put_pid(sub->pid);
		kfree(sub);
		return -ENOSPC;
	}
	ctx->nr_submitters++;
	sub->id = ++ctx->next_sub_id;
	list_add_tail(&sub->ctx_node, &ctx->subs);
	iopa_ctx_unlock(ctx);
	kref_get(&ctx->ref);
	atomic_long_inc(&iopa_totals.submitters);

	/* Armed before the fd exists: once it does, it may be closed. */
	iopa_limit_start(sub);
	fd = anon_inode_getfd("[iopa-submitter]", iopa_sub_fops, sub,
			      O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		iopa_ctx_lock(ctx);
		sub->closed = true;
		ctx->nr_submitters--;
		iopa_user_del_sub(user);
		list_del(&sub->ctx_node);
		iopa_ctx_unlock(ctx);
		iopa_limit_stop(sub);
		iopa_sub_put(sub);
	}
	return fd;
}

/* ---- worker ----------------------------------------------------------- */

/* COMPLETE of one job; 0, -ENOENT (not held) or -ETIME (lease ended). */
static int iopa_worker_complete_one(struct iopa_worker *w,
				    const struct iopa_done *done,
				    struct list_head *gc, u64 now)
	__must_hold(&w->ctx->lock)
{
	struct iopa_kjob *job;
	unsigned int i;

	/* In fetch order: a worker completing in that order finds each first. */
	list_for_each_entry(job, &w->held, node) {
		/* One on its way to the worker is not the worker's yet. */
		if (iopa_job_run_id(job) != done->job_id ||
		    READ_ONCE(job->handing))
			continue;
		iopa_limit_job_done(job, now);
		trace_iopa_job_complete(job->sub->ctx->id, job->sub->id,
					done->job_id, iopa_trace_tgid(),
					job->fetch_ns && now > job->fetch_ns ?
					min_t(u64, U32_MAX,
					      div_u64(now - job->fetch_ns,
						      NSEC_PER_USEC)) : 0,
					done->res);
		if (done->res < 0)
			job->sub->m.failed++;
		iopa_job_end(job, done->res, 0, IOPA_STAT_COMPLETED, gc);
		return 0;
	}
	for (i = 0; i < IOPA_WORKER_EXPIRED; i++)
		if (done->job_id && w->expired[i] == done->job_id)
			return -ETIME;	/* taken back: its lease ended */
	return -ENOENT;
}

/**
 * iopa_worker_complete_locked() - COMPLETE of @n jobs, in order, for @w
 * @w: the worker
 * @done: which jobs, with what results
 * @n: how many (0 is fine)
 * @gc: where jobs that need freeing go
 * @err: set to 0, or to the errno of the completion that failed, which
 *	stopped the others: -ENOENT (@w holds no such job) or -ETIME (its
 *	lease ended)
 *
 * Context: ctx->lock held.
 * Return: how many took effect (the first ones).
 */
u32 iopa_worker_complete_locked(struct iopa_worker *w,
				const struct iopa_done *done, u32 n,
				struct list_head *gc, int *err)
	__must_hold(&w->ctx->lock)
{
	u64 now = n ? ktime_get_ns() : 0;
	u32 i;

	lockdep_assert_held(&w->ctx->lock);
	*err = 0;
	for (i = 0; i < n; i++) {
		*err = iopa_worker_complete_one(w, &done[i], gc, now);
		if (*err)
			break;
	}
	return i;
}

/**
 * iopa_worker_complete() - COMPLETE
 * @w: the worker
 * @done: which job, with what result
 *
 * Return: 0, -ENOENT if @w holds no such job, -ETIME if its lease ended.
 */
int iopa_worker_complete(struct iopa_worker *w, const struct iopa_done *done)
{
	struct iopa_ctx *ctx = w->ctx;
	LIST_HEAD(gc);
	int ret;

	iopa_ctx_lock(ctx);
	if (iopa_worker_complete_locked(w, done, 1, &gc, &ret))
		iopa_kick_workers(ctx, 1);
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
	return ret;
}

/* Does @fd name @file in the current task's file table? */
static bool iopa_fd_names(s32 fd, const struct file *file)
{
	struct files_struct *files = current->files;
	bool same;

	if (fd < 0 || !files)
		return false;
	rcu_read_lock();
	same = files_lookup_fd_raw(files, fd) == file;
	rcu_read_unlock();
	return same;
}

/*
 * The fd by which the current task can use @file, lent: the submitter's
 * @ufd if it names @file here, else one of those @w named with
 * IOPA_IOC_WORKER_SET_FILES that does; -1 if none.
 */
static s32 iopa_lend_fd(const struct iopa_worker *w, const struct file *file,
			s32 ufd)
{
	u32 i, nr = min_t(u32, READ_ONCE(w->nr_files), IOPA_WORKER_MAX_FILES);
	s32 fd;

	if (iopa_fd_names(ufd, file))
		return ufd;
	for (i = 0; i < nr; i++) {
		fd = READ_ONCE(w->files[i]);
		if (fd != ufd && iopa_fd_names(fd, file))
			return fd;
	}
	return -1;
}

/*
 * In the task the job is handed over in, ctx->lock held: lend the job
 * the submitter's fd, or take a reference on its file for the hand-over.
 * A job is lent (IOPA_JOB_F_BORROW, to a worker with IOPA_WORKER_F_BORROW)
 * only where nothing but the run itself can report its end, since the
 * submitter may close or reuse the number once it sees the end: not
 * under a lease (set later, it spares lent runs), and not a job whose
 * io_uring SUBMIT command may be cancelled (that CQE comes at the
 * cancel, while the run goes on).  Its dispatch event is traced here.
 */
static void iopa_job_lend(struct iopa_kjob *job, struct iopa_handout *h)
	__must_hold(&job->sub->ctx->lock)
{
	s32 fd = -1;

	if ((job->flags & IOPA_JOB_F_BORROW) && job->worker->borrow &&
	    !job->sub->lease_ns && !job->ops && !iopa_job_unwanted(job))
		fd = iopa_lend_fd(job->worker, job->file, job->ufd);
	if (fd >= 0) {
		h->work.fd = fd;
		h->work.flags |= IOPA_WORK_F_BORROWED;
		h->file = NULL;
		job->lent = true;
	} else {
		h->file = get_file(job->file);
	}
	iopa_trace_dispatch(job);
}

/*
 * What a worker is told of a job just dispatched to it, in @h.  Handed
 * over in the current task (@here): the fd is settled now
 * (iopa_job_lend()); else the job waits, served, in @h for its command's
 * task to claim it (iopa_worker_claim()).
 */
static void iopa_job_work(struct iopa_kjob *job, struct iopa_handout *h,
			  bool here)
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_work *work = &h->work;

	memset(work, 0, sizeof(*work));
	work->job_id = iopa_job_run_id(job);
	work->user_data = job->user_data;
	work->offset = job->offset;
	work->len = job->len;
	work->fd = -1;
	if (job->cqe_flags & IOPA_CQE_F_REQUEUED)
		work->flags |= IOPA_WORK_F_REQUEUED;
	h->job = job;
	h->file = NULL;
	if (here)
		iopa_job_lend(job, h);
	else
		job->ho = h;
}

/**
 * iopa_worker_room() - how many more jobs @w may be dispatched
 * @w: the worker
 *
 * A worker holds at most IOPA_WORKER_MAX_JOBS jobs, counting the places
 * its parked io_uring fetches hold.
 *
 * Context: ctx->lock held.
 * Return: the room.
 */
u32 iopa_worker_room(const struct iopa_worker *w)
	__must_hold(&w->ctx->lock)
{
	u32 used = w->nr_held + w->nr_parked;

	lockdep_assert_held(&w->ctx->lock);
	return used < IOPA_WORKER_MAX_JOBS ? IOPA_WORKER_MAX_JOBS - used : 0;
}

/**
 * iopa_worker_take_locked() - dispatch up to @max jobs to @w
 * @w: the worker, with room for them (iopa_worker_room())
 * @h: filled in, one per job, for iopa_worker_hand_over()
 * @max: at most this many
 * @here: the hand-over will run in the current task
 *
 * Each job taken is RUNNING from now, counted against its submitter's
 * limit, so a batch takes no more than the limits allow.
 *
 * Context: ctx->lock held.
 * Return: how many were taken, 0 if none could be dispatched.
 */
u32 iopa_worker_take_locked(struct iopa_worker *w, struct iopa_handout *h,
			    u32 max, bool here)
	__must_hold(&w->ctx->lock)
{
	u64 now = ktime_get_ns();
	struct iopa_kjob *job;
	u32 n;

	lockdep_assert_held(&w->ctx->lock);
	for (n = 0; n < max; n++) {
		job = iopa_dispatch(w, now, here);
		if (!job)
			break;
		iopa_job_work(job, &h[n], here);
	}
	return n;
}

/**
 * iopa_worker_give_back() - give back jobs that could not be handed over
 * @w: the worker they were dispatched to (iopa_worker_take_locked())
 * @h: the jobs, claimed if they were served; their file references are
 *	dropped
 * @n: how many
 *
 * Each returns to the head of its queue (or, if its submitter or command
 * went away meanwhile, is cancelled) undispatched (iopa_job_undispatch()).
 * The last first, so the queue gets them back in the order they were
 * taken.  Nothing ended them meanwhile: they were handing.
 */
void iopa_worker_give_back(struct iopa_worker *w, struct iopa_handout *h,
			   u32 n)
{
	struct iopa_ctx *ctx = w->ctx;
	struct iopa_kjob *job;
	u32 i, back = 0;
	LIST_HEAD(gc);

	for (i = 0; i < n; i++)
		if (h[i].file)
			fput(h[i].file);

	iopa_ctx_lock(ctx);
	while (n--) {
		job = h[n].job;
		/* Cannot happen: nothing else moves a job being handed over. */
		if (WARN_ON_ONCE(job->worker != w || !job->handing ||
				 job->served))
			continue;
		iopa_job_undispatch(job, &gc);
		back++;
	}
	iopa_kick_workers(ctx, back);
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
}

/**
 * iopa_worker_claim() - the jobs served to a parked io_uring command
 *	reach its task
 * @w: the worker they were dispatched to (iopa_worker_take_locked())
 * @h: the jobs as served; compacted to those still there
 * @n: how many were served
 *
 * Those the lease took back meanwhile (iopa_job_unserve()) are gone from
 * @h.  The others are the current task's from now: their service, their
 * lease and their I/O start now, and a lent fd is looked up in this
 * task's table (iopa_job_lend()).  Then hand them over or give them back.
 *
 * Return: how many are left in @h (the first ones, in order).
 */
u32 iopa_worker_claim(struct iopa_worker *w, struct iopa_handout *h, u32 n)
{
	struct iopa_kjob *job;
	u32 i, k = 0;
	u64 now;

	iopa_ctx_lock(w->ctx);
	/* Read under the lock: @sub->running stays in lease order. */
	now = ktime_get_ns();
	for (i = 0; i < n; i++) {
		job = h[i].job;
		if (!job)
			continue;
		job->served = false;
		job->ho = NULL;
		/* Its lease starts now: in lease order, the latest. */
		list_move_tail(&job->run_node, &job->sub->running);
		iopa_measure_job_started(job, now);
		iopa_lease_start(job->sub, now);
		if (k != i)
			h[k] = h[i];
		iopa_job_lend(job, &h[k]);
		k++;
	}
	iopa_ctx_unlock(w->ctx);
	return k;
}

/**
 * iopa_worker_hand_over() - give dispatched jobs to the calling task
 * @w: the worker they were dispatched to (iopa_worker_take_locked())
 * @h: the jobs (claimed, if they were served); their file references are
 *	dropped
 * @n: how many
 * @uwork: where the worker reads them, an array of @n
 *
 * Fields first, the fds last (installed in the current task's file
 * table), so no fd is ever installed for a job the worker does not get.
 * A lent fd was looked up already.  The jobs not handed over go back to
 * the head of their queue.  Those handed over are the worker's from the
 * end: COMPLETE finds them, the lease may take them back.
 *
 * Return: how many were handed over (the first ones), or a negative
 * errno (-EFAULT, -EMFILE, an LSM's refusal) if none was.
 */
int iopa_worker_hand_over(struct iopa_worker *w, struct iopa_handout *h,
			  u32 n, struct iopa_work __user *uwork)
{
	u32 i, given = 0;
	int ret = 0;

	for (i = 0; i < n; i++) {
		if (copy_to_user(&uwork[i], &h[i].work, sizeof(h[i].work))) {
			ret = -EFAULT;
			break;
		}
	}
	if (!ret) {
		for (given = 0; given < n; given++) {
			if (h[given].work.flags & IOPA_WORK_F_BORROWED)
				continue;
			ret = iopa_receive_fd(h[given].file, &uwork[given].fd);
			if (ret < 0)
				break;
		}
	}
	if (given < n)
		iopa_worker_give_back(w, h + given, n - given);
	for (i = 0; i < given; i++) {
		/* The worker's now: the job may end (and go) at once. */
		WRITE_ONCE(h[i].job->handing, false);
		if (h[i].file)
			fput(h[i].file);
	}
	return given ? given : ret;
}

/**
 * iopa_batch_load() - check a struct iopa_batch; copy its completions in
 * @arg: the command, a kernel copy
 * @done: in: room for IOPA_BATCH_ONSTACK completions; out: the
 *	completions, there or in a new allocation (kfree() it if it is not
 *	the room given)
 *
 * Every completion is checked before any takes effect.
 *
 * Return: 0, -EINVAL, -EFAULT or -ENOMEM.
 */
int iopa_batch_load(const struct iopa_batch *arg, struct iopa_done **done)
{
	size_t size = arg->nr_done * sizeof(**done);
	struct iopa_done *d = *done;
	int ret = 0;
	u32 i;

	if ((arg->flags & ~IOPA_FETCH_F_MASK) || arg->reserved[0] ||
	    arg->reserved[1])
		return -EINVAL;
	if (arg->nr_done > IOPA_WORKER_MAX_JOBS ||
	    arg->nr_work > IOPA_WORKER_MAX_JOBS ||
	    (!arg->nr_done && !arg->nr_work))
		return -EINVAL;
	/* Found now, not after jobs were taken and given back. */
	if (!access_ok(u64_to_user_ptr(arg->work),
		       arg->nr_work * sizeof(struct iopa_work)))
		return -EFAULT;
	if (arg->nr_done > IOPA_BATCH_ONSTACK) {
		d = kmalloc(size, GFP_KERNEL);
		if (!d)
			return -ENOMEM;
	}
	if (copy_from_user(d, u64_to_user_ptr(arg->done), size))
		ret = -EFAULT;
	for (i = 0; !ret && i < arg->nr_done; i++)
		if (d[i].flags || d[i].reserved)
			ret = -EINVAL;
	if (!ret)
		*done = d;
	else if (d != *done)
		kfree(d);
	return ret;
}

/**
 * iopa_batch_result() - what a WORK_BATCH returns
 * @ret: jobs handed over, or the errno of the call
 * @completed: completions that took effect
 * @nr_done: completions asked for
 *
 * A call whose completions all took effect succeeds: if its fetch part
 * failed (nothing to fetch, a signal, no room, no fd), it returns 0
 * jobs, so a restart can never complete them again.  Only a completion
 * that failed (@completed < @nr_done), or a call in which nothing took
 * effect, returns an errno.
 *
 * Return: the result.
 */
long iopa_batch_result(long ret, u32 completed, u32 nr_done)
{
	if (ret < 0 && completed && completed == nr_done)
		return 0;
	return ret;
}

/**
 * iopa_worker_batch() - complete jobs, then take some: WORK_BATCH, and
 *	COMPLETE_AND_FETCH and FETCH (of one)
 * @w: the worker
 * @done: the completions, a kernel copy, checked
 * @nr_done: how many
 * @h: room for @nr_work jobs
 * @nr_work: take up to this many; 0: complete only
 * @flags: IOPA_FETCH_F_*
 * @timeout_ns: give up waiting after this long (0: no limit)
 * @completed: set to how many completions took effect (the first ones)
 *
 * The completions and the first try to take jobs share one hold of
 * ctx->lock.  A completion that fails stops the call.  Then, with
 * @nr_work, it waits until a job can be dispatched, and takes as many as
 * can at once, up to @nr_work and the worker's room.  Once a completion
 * took effect it stands, whatever the call returns.
 *
 * Return: how many jobs were taken (in @h, for iopa_worker_hand_over()
 * in the current task), or a negative errno: that of the completion that
 * failed, or -EBUSY (no room), -EAGAIN (IOPA_FETCH_F_NONBLOCK),
 * -ETIMEDOUT, -ERESTARTSYS.
 */
long iopa_worker_batch(struct iopa_worker *w, const struct iopa_done *done,
		       u32 nr_done, struct iopa_handout *h, u32 nr_work,
		       u32 flags, u64 timeout_ns, u32 *completed)
{
	struct iopa_ctx *ctx = w->ctx;
	DEFINE_WAIT(wait);
	bool waited = false;
	long timeout, ret;
	LIST_HEAD(gc);
	u32 room;
	int err;

	timeout = iopa_timeout_jiffies(timeout_ns);
	iopa_ctx_lock(ctx);
	*completed = iopa_worker_complete_locked(w, done, nr_done, &gc, &err);
	ret = err;
	for (; !ret && nr_work;) {
		room = min(iopa_worker_room(w), nr_work);
		if (!room) {
			ret = -EBUSY;
			break;
		}
		ret = iopa_worker_take_locked(w, h, room, true);
		if (ret)
			break;
		if (flags & IOPA_FETCH_F_NONBLOCK) {
			ret = -EAGAIN;
			break;
		}
		if (signal_pending(current)) {
			/* Restarted for task work and SA_RESTART handlers. */
			ret = -ERESTARTSYS;
			break;
		}
		if (!timeout) {
			ret = -ETIMEDOUT;
			break;
		}
		if (!list_empty(&gc)) {
			/*
			 * Jobs completed are freed before waiting: freeing
			 * posts an io_uring submitter's CQE, which must not
			 * wait for a job.  Then look again.
			 */
			iopa_ctx_unlock(ctx);
			iopa_job_free_list(&gc);
			iopa_ctx_lock(ctx);
			continue;
		}
		prepare_to_wait_exclusive(&ctx->fetch_wq, &wait,
					  TASK_INTERRUPTIBLE);
		ctx->nr_waiting++;
		iopa_ctx_unlock(ctx);
		waited = true;
		timeout = schedule_timeout(timeout);
		iopa_ctx_lock(ctx);
		ctx->nr_waiting--;
	}
	if (waited)
		finish_wait(&ctx->fetch_wq, &wait);
	/*
	 * Slots the completions freed that this call did not fill go to
	 * others, and so does a wakeup it took without taking a job.
	 */
	iopa_kick_workers(ctx, *completed + (ret <= 0 && waited));
	iopa_ctx_unlock(ctx);
	iopa_job_free_list(&gc);
	return ret;
}

/**
 * iopa_worker_fetch() - FETCH, or COMPLETE_AND_FETCH when @complete
 * @w: the worker
 * @arg: the command, a kernel copy, checked
 * @uwork: where the worker reads the job (the command's work field)
 * @complete: complete @arg->done first
 *
 * Then wait for a job, take it, and give the caller a new fd for its
 * file (or the lent one).  Once the complete part succeeded it stands,
 * whatever the fetch part returns; the same call restarted after a
 * signal (-ERESTARTSYS: SA_RESTART, io_uring task work) does not
 * complete it again.
 *
 * Return: 0 or a negative errno (the errors of FETCH in iopa.rst).
 */
long iopa_worker_fetch(struct iopa_worker *w, const struct iopa_fetch *arg,
		       struct iopa_work __user *uwork, bool complete)
{
	struct iopa_ctx *ctx = w->ctx;
	struct iopa_handout h;
	u32 nr_done = complete, completed;
	long ret;

	/* Set only between an interrupted call and its restart. */
	if (READ_ONCE(w->restart_done)) {
		iopa_ctx_lock(ctx);
		if (complete && arg->done.job_id == w->restart_done)
			nr_done = 0;	/* completed before the signal */
		if (w->restart_task == current)
			w->restart_done = 0;
		iopa_ctx_unlock(ctx);
	}
	ret = iopa_worker_batch(w, &arg->done, nr_done, &h, 1, arg->flags,
				arg->timeout_ns, &completed);
	if (ret == -ERESTARTSYS && complete) {
		/*
		 * Its restart must not complete the job again.  The restart
		 * is the interrupted thread's: only its next call forgets the
		 * job (another thread sharing the worker fd does not).
		 */
		iopa_ctx_lock(ctx);
		w->restart_done = arg->done.job_id;
		w->restart_task = current;
		iopa_ctx_unlock(ctx);
	}
	if (ret < 0)
		return ret;
	ret = iopa_worker_hand_over(w, &h, 1, uwork);
	return ret < 0 ? ret : 0;
}

/**
 * iopa_worker_close() - the worker fd is gone (close, exit, kill)
 * @w: the worker
 *
 * Requeue each held job once, or cancel it if it may not be requeued,
 * already was, or nobody waits for its end (iopa_job_unwanted()).
 */
void iopa_worker_close(struct iopa_worker *w)
{
	struct iopa_ctx *ctx = w->ctx;
	struct iopa_kjob *job, *tmp;
	unsigned int released;
	LIST_HEAD(gc);

	iopa_ctx_lock(ctx);
	/* Each job leaving frees a running slot of its submitter. */
	released = w->nr_held;
	list_for_each_entry_safe(job, tmp, &w->held, node)
		iopa_job_take_back(job, IOPA_CQE_F_WORKER_DIED, &gc);
	list_del(&w->node);
	ctx->nr_workers--;
	iopa_kick_workers(ctx, released);
	iopa_ctx_unlock(ctx);

	iopa_job_free_list(&gc);
	kfree(w);
	atomic_long_dec(&iopa_totals.workers);
	iopa_ctx_put(ctx);
}

/**
 * iopa_worker_set_files() - IOPA_IOC_WORKER_SET_FILES
 * @w: the worker
 * @fds: the fds, a kernel copy, each open in the calling process
 * @nr: how many, at most IOPA_WORKER_MAX_FILES (0: none)
 *
 * Return: 0, or -EINVAL if @w does not take lent fds.
 */
int iopa_worker_set_files(struct iopa_worker *w, const s32 *fds, u32 nr)
{
	u32 i;

	if (!w->borrow)
		return -EINVAL;
	iopa_ctx_lock(w->ctx);
	/* Shrunk first, grown last: an unlocked reader sees valid entries. */
	WRITE_ONCE(w->nr_files, min(w->nr_files, nr));
	for (i = 0; i < nr; i++)
		WRITE_ONCE(w->files[i], fds[i]);
	WRITE_ONCE(w->nr_files, nr);
	iopa_ctx_unlock(w->ctx);
	return 0;
}

/**
 * iopa_worker_create() - a new worker of @ctx, and its fd
 * @ctx: the context
 * @flags: IOPA_WORKER_F_*, checked
 *
 * Return: the fd, -ENOMEM, -ENOSPC (max_workers) or another errno of
 * anon_inode_getfd().
 */
int iopa_worker_create(struct iopa_ctx *ctx, u32 flags)
{
	struct iopa_worker *w;
	int fd;

	w = kzalloc(sizeof(*w), GFP_KERNEL_ACCOUNT);
	if (!w)
		return -ENOMEM;
	INIT_LIST_HEAD(&w->held);
	w->ctx = ctx;
	w->borrow = flags & IOPA_WORKER_F_BORROW;

	iopa_ctx_lock(ctx);
	if (ctx->nr_workers >= READ_ONCE(iopa_tunables.max_workers)) {
		iopa_ctx_unlock(ctx);
		kfree(w);
		return -ENOSPC;
	}
	ctx->nr_workers++;
	list_add_tail(&w->node, &ctx->workers);
	iopa_ctx_unlock(ctx);
	kref_get(&ctx->ref);
	atomic_long_inc(&iopa_totals.workers);

	fd = anon_inode_getfd("[iopa-worker]", iopa_worker_fops, w,
			      O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		iopa_ctx_lock(ctx);
		list_del(&w->node);
		ctx->nr_workers--;
		iopa_ctx_unlock(ctx);
		kfree(w);
		atomic_long_dec(&iopa_totals.workers);
		iopa_ctx_put(ctx);
	}
	return fd;
}

/* ---- context ---------------------------------------------------------- */

/**
 * iopa_ctx_stats() - a context's IOPA_IOC_GET_STATS
 * @ctx: the context
 * @st: filled in
 */
void iopa_ctx_stats(struct iopa_ctx *ctx, struct iopa_stats *st)
{
	iopa_ctx_lock(ctx);
	iopa_stats_fill(st, ctx->stat, ctx->nr);
	st->nr_submitters = ctx->nr_submitters;
	st->nr_workers = ctx->nr_workers;
	st->nr_waiting = ctx->nr_waiting;
	iopa_ctx_unlock(ctx);
}

/**
 * iopa_is_iopa_file() - is @file a submitter or worker fd of this module?
 * @file: any file
 *
 * Such files may not be job files: a job would pin its own context.
 *
 * Return: true for a submitter or worker file.
 */
bool iopa_is_iopa_file(const struct file *file)
{
	return file->f_op == iopa_sub_fops || file->f_op == iopa_worker_fops;
}

/**
 * iopa_queue_init() - set up the job cache
 * @sub_fops: the operations of submitter files
 * @worker_fops: the operations of worker files
 *
 * Return: 0 or -ENOMEM.
 */
int iopa_queue_init(const struct file_operations *sub_fops,
		    const struct file_operations *worker_fops)
{
	iopa_sub_fops = sub_fops;
	iopa_worker_fops = worker_fops;
	iopa_job_cache = KMEM_CACHE(iopa_kjob, SLAB_ACCOUNT);
	return iopa_job_cache ? 0 : -ENOMEM;
}

/**
 * iopa_queue_exit() - tear down the job cache; every job is freed by now
 */
void iopa_queue_exit(void)
{
	kmem_cache_destroy(iopa_job_cache);
}
