/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iopa - private definitions shared by the module's files.
 *
 * Locking rules.  Each field below carries one of these tags:
 *
 * I: set before the object is published, then read-only.
 * L: protected by the owning context's ctx->lock (a spinlock; never held
 *    across a user copy, an allocation or a sleep).
 * A: atomic, no lock.
 *
 * Lock order: iopa_groups_lock (a mutex) -> a device group's lock (a
 * mutex) -> ctx->lock (group.c); iopa_groups_lock -> blkstat.c's
 * iopa_blkdevs_lock (a mutex, a leaf of the module's).  ctx->lock is the
 * outermost spinlock of the module.  Under it
 * only the core's own leaf locks are taken: waitqueue locks (wake_up(),
 * finish_wait()) and what they nest (scheduler, epoll), the
 * workqueue's (mod_delayed_work()) and params.c's iopa_params_lock
 * (iopa_params_get()), leaves.  Nothing under
 * ctx->lock sleeps, copies from or to user memory, or allocates.
 * fput() is called under ctx->lock: it defers the final __fput() to
 * task work or a workqueue and never sleeps.
 *
 * Lifetimes.  A context is referenced by its /dev/iopa file and by each
 * submitter and worker it created.  A submitter is referenced by its fd
 * and by each job it owns, so the jobs it left running can finish after
 * its fd is gone.  A job belongs to exactly one list at a time (see
 * enum iopa_job_state).  Jobs and submitters are freed outside ctx->lock.
 */
#ifndef _IOPA_PRIV_H
#define _IOPA_PRIV_H

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/jiffies.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <linux/iopa.h>

#include "ctl.h"
#include "share.h"

/* Event counters kept per submitter, per context and per module. */
enum iopa_stat {
	IOPA_STAT_SUBMITTED,
	IOPA_STAT_DISPATCHED,
	IOPA_STAT_COMPLETED,
	IOPA_STAT_CANCELLED,
	IOPA_STAT_REQUEUED,
	IOPA_NR_STATS,
};

/*
 * Job states.  The first IOPA_JOB_NR_COUNTED are counted (gauges) per
 * submitter, per context and per module.
 *
 *   PENDING  on sub->pending, waiting for dispatch
 *   RUNNING  on worker->held, the worker has the job
 *   DONE     on sub->done, the completion waits to be reaped
 *   NEW      being built by SUBMIT, on no shared list
 *   GONE     on a private list, about to be freed
 *
 * Transitions:
 *   NEW -> PENDING                         SUBMIT
 *   PENDING -> RUNNING                     dispatch to a worker
 *   RUNNING -> PENDING                     worker died or lease ended
 *                                          (once per job), or FETCH could
 *                                          not hand it over
 *   RUNNING -> DONE                        COMPLETE, worker died or lease
 *                                          ended (cancel)
 *   PENDING -> DONE                        CANCEL
 *   PENDING, RUNNING, DONE -> GONE         submitter closed, or REAP
 */
enum iopa_job_state {
	IOPA_JOB_PENDING,
	IOPA_JOB_RUNNING,
	IOPA_JOB_DONE,
	IOPA_JOB_NR_COUNTED,
	IOPA_JOB_NEW = IOPA_JOB_NR_COUNTED,
	IOPA_JOB_GONE,
};

/**
 * struct iopa_ctx - one open of /dev/iopa
 * @lock: protects every L field of the context, its submitters, workers
 *	and jobs
 * @ref: A: references: the context file, each submitter, each worker
 * @runnable: L: submitters with a job that may be dispatched now, in
 *	round-robin order
 * @workers: L: live workers
 * @fetch_wq: workers waiting in FETCH (exclusive waits)
 * @next_job_id: L: last job id given out
 * @stat: L: event counters over every submitter the context has had
 * @nr: L: jobs per counted state
 * @nr_submitters: L: live (open) submitters
 * @nr_workers: L: live workers
 * @nr_waiting: L: workers sleeping in FETCH
 * @id: I: module-wide number, for tracing and debugfs
 * @next_sub_id: L: last submitter id given out
 * @subs: L: open submitters
 * @node: on iopa_ctx_list, protected by iopa_ctx_list_lock
 * @parked: L: io_uring FETCH commands waiting for a job (uring.c)
 * @nr_parked: L: length of @parked
 * @park_ops: L: the front-end of the commands on @parked, set when it
 *	parks the first
 * @uring_jobs: L: jobs with an io_uring SUBMIT command (job->ucmd), from
 *	queueing to their end or the command's cancel (uring.c)
 * @nr_uring_jobs: L: length of @uring_jobs
 * @reapers: L: io_uring REAP commands waiting for completions (uring.c)
 * @nr_reapers: L: length of @reapers
 */
struct iopa_ctx {
	spinlock_t		lock;	/* the L rule */
	struct kref		ref;		/* A */
	struct list_head	runnable;	/* L */
	struct list_head	workers;	/* L */
	wait_queue_head_t	fetch_wq;
	u64			next_job_id;	/* L */
	u64			stat[IOPA_NR_STATS]; /* L */
	u32			nr[IOPA_JOB_NR_COUNTED]; /* L */
	u32			nr_submitters;	/* L */
	u32			nr_workers;	/* L */
	u32			nr_waiting;	/* L */
	u32			id;		/* I */
	u32			next_sub_id;	/* L */
	struct list_head	subs;		/* L */
	struct list_head	node;
	struct list_head	parked;		/* L */
	u32			nr_parked;	/* L */
	const struct iopa_park_ops *park_ops;	/* L */
	struct list_head	uring_jobs;	/* L */
	u32			nr_uring_jobs;	/* L */
	struct list_head	reapers;	/* L */
	u32			nr_reapers;	/* L */
};

/**
 * struct iopa_adapt_cycle - what one adjustment cycle measured so far
 * @start_ns: when the cycle started (ktime_get_ns())
 * @idle_us: CPU idle + iowait time of all CPUs at @start_ns
 * @bytes: block-layer bytes moved by the submitter's jobs that completed
 * @jobs: the submitter's jobs completed
 * @svc_us: sum of their service times (fetch to complete), microseconds
 * @svc_sq: sum of the squares of those, saturated at U64_MAX
 * @wait_us: sum of the queue waits (submit to fetch) of jobs dispatched
 * @dispatched: jobs dispatched (first fetch of a job, or after a requeue)
 * @demand: at some point jobs were pending while the limit was reached
 * @ending: the cycle holds enough evidence and its end is queued
 */
struct iopa_adapt_cycle {
	u64			start_ns;
	u64			idle_us;
	u64			bytes;
	u64			jobs;
	u64			svc_us;
	u64			svc_sq;
	u64			wait_us;
	u64			dispatched;
	bool			demand;
	bool			ending;
};

/**
 * struct iopa_sub_metrics - a submitter's cumulative counters, for
 * IOPA_IOC_LIST_SUBMITTERS (struct iopa_metrics)
 * @io_bytes: block I/O bytes charged to its jobs
 * @failed: jobs completed with a negative result
 * @wait_us: sum of the queue waits of the jobs dispatched
 * @svc_us: sum of the service times of the jobs completed
 * @wait_hist: the queue waits, in buckets of iopa_hist_bucket()
 * @svc_hist: the service times, the same way
 * @turn_waits: times it waited for its turn on a shared device (group.c)
 * @turn_wait_us: the time it waited, the wait under way excepted
 */
struct iopa_sub_metrics {
	u64			io_bytes;
	u64			failed;
	u64			wait_us;
	u64			svc_us;
	u64			wait_hist[IOPA_HIST_BUCKETS];
	u64			svc_hist[IOPA_HIST_BUCKETS];
	u64			turn_waits;
	u64			turn_wait_us;
};

/**
 * struct iopa_submitter - a submitter fd
 * @ctx: I: the context
 * @ref: A: references: the fd, each job
 * @pending: L: PENDING jobs, oldest first (a requeued job at the head)
 * @done: L: DONE jobs, in completion order
 * @running: L: RUNNING jobs, whichever worker holds them, in the order
 *	their leases started: their dispatch, or for a job served to a
 *	parked io_uring command its claim (the lease work's order)
 * @lease_ns: L: a job running longer is taken back (0: no lease)
 * @lease_work: takes back the jobs whose lease ended; armed while the
 *	submitter is open and has a lease, for the next lease to end
 * @rr_node: L: on ctx->runnable iff iopa_sub_dispatchable()
 * @wq: reapers, submitters waiting for room, poll
 * @limit: L: most jobs of this submitter that may be RUNNING
 * @nr_reserved: L: room taken by a SUBMIT that is building its jobs
 * @nr_claimed: L: DONE jobs off @done, claimed by a REAP copying them out
 *	(iopa_sub_claim_locked() to iopa_sub_deliver())
 * @nr_reapers: L: io_uring REAP commands of this submitter parked on
 *	ctx->reapers
 * @nr: L: jobs per counted state
 * @stat: L: event counters
 * @closed: L: the fd is released; jobs that end are freed, not queued
 * @id: I: number within the context
 * @ctx_node: L: on ctx->subs while open
 * @ctl: L: the limit controller; @limit follows iopa_ctl_limit()
 * @cyc: L: the cycle being measured
 * @adapt_work: runs the controller at the end of each cycle; armed
 *	while the submitter is open and not idle
 * @adapt_idle: L: the last cycle saw no job and none is queued: no
 *	cycle is armed until one is (iopa_limit_wake())
 * @tput_bytes: L: the last cycle measured bytes (its jobs did block
 *	I/O), else jobs
 * @unit_known: L: a cycle with completions has set @tput_bytes
 * @bytes_per_s: L: last cycle's block-layer bytes per second
 * @jobs_per_s: L: last cycle's completed jobs per second
 * @last_wait_us: L: last cycle's mean queue wait of dispatched jobs
 * @last_svc_us: L: last cycle's mean service time of completed jobs
 * @last_jobs: L: last cycle's completed jobs
 * @last_noise: L: last cycle's throughput standard error, per mille
 * @cycles: L: cycles run
 * @changes: L: limit changes made by the controller
 * @r_permille: L: the controller's last ratio
 * @nr_devs: L: entries used in @devs
 * @devs: L: devices of the jobs' files, first seen first
 * @diskseq: L: the diskseq of @devs[0]'s disk (knee.c), 0 if none
 * @order: L (written), A (read at submission): IOPA_ORDER_*
 * @sorted: L: in SORTED or CSCAN order, the PENDING jobs by (location, id)
 * @reindex: L: the next PENDING job that IOPA_IOC_SET_ORDER has yet to
 *	index (or to take out of @sorted, after a switch to FIFO); NULL
 *	when none is left
 * @sweep_pos: L: location of the job the sweep dispatched last
 * @sweep_cut: L: the last job id given out when the sweep reached
 *	@sweep_pos: jobs there with a higher id wait for the next pass
 * @sweep_down: L: the sweep is going down
 * @pid: I: thread group of the creating process (IOPA_IOC_LIST_SUBMITTERS)
 * @comm: I: its command name then
 * @cgroup_id: I: the creating task's cgroup (v2), the unit of the split
 *	of a device's budget
 * @weight: A (written under L): weight in that split, IOPA_WEIGHT_*
 * @user: I: the creating user's charge (user.c), given back at close
 * @group: L and the group's lock (written under both): the device group
 *	whose budget the submitter shares, or NULL (group.c)
 * @group_node: the group's lock: on the group's members
 * @group_demand: L: demand since the group's last cycle
 * @group_active: the group's lock: active at the last split
 * @group_weight: the group's lock: @weight as of the last split
 * @group_cg: the group's lock: its cgroup's entry in the group (group.c)
 * @group_share: the group's lock: its share of its cgroup's part, over
 *	time (share.h)
 * @turn_wait_ns: L: when it began to wait for its turn (its limit 0 by
 *	the group's split), 0 if it does not wait
 * @turn_holder: L: it runs jobs by the group's last split (an active
 *	member with a limit above 0): its last job ending hands its turn
 *	on if others wait
 * @group_part: the group's lock: its part at the last split (1 if idle)
 * @group_target: the group's lock: and the limit it gives, within the
 *	member's bounds (0: it waits for its turn)
 * @group_run: the group's lock: its running jobs when the parts were
 *	last applied
 * @group_budget: L: the group's budget at the last split
 * @group_sharers: L: the cgroups sharing it at the last split
 * @group_cycles: L: the group's cycles at the last split
 * @group_mode: L: the group's controller's mode at the last split
 * @group_cycle_ms: L: and the length of its cycle then begun
 * @group_knee: L: and its knee (iopa_ctl_knee())
 * @m: L: cumulative counters (IOPA_FEAT_METRICS)
 */
struct iopa_submitter {
	struct iopa_ctx		*ctx;		/* I */
	struct kref		ref;		/* A */
	struct list_head	pending;	/* L */
	struct list_head	done;		/* L */
	struct list_head	running;	/* L */
	u64			lease_ns;	/* L */
	struct delayed_work	lease_work;
	struct list_head	rr_node;	/* L */
	wait_queue_head_t	wq;
	u32			limit;		/* L */
	u32			nr_reserved;	/* L */
	u32			nr_claimed;	/* L */
	u32			nr_reapers;	/* L */
	u32			nr[IOPA_JOB_NR_COUNTED]; /* L */
	u64			stat[IOPA_NR_STATS]; /* L */
	bool			closed;		/* L */
	u32			id;		/* I */
	struct list_head	ctx_node;	/* L */
	struct iopa_ctl		ctl;		/* L */
	struct iopa_adapt_cycle	cyc;		/* L */
	struct delayed_work	adapt_work;
	bool			adapt_idle;	/* L */
	bool			tput_bytes;	/* L */
	bool			unit_known;	/* L */
	u64			bytes_per_s;	/* L */
	u64			jobs_per_s;	/* L */
	u32			last_wait_us;	/* L */
	u32			last_svc_us;	/* L */
	u32			last_jobs;	/* L */
	u32			last_noise;	/* L */
	u64			cycles;		/* L */
	u64			changes;	/* L */
	u32			r_permille;	/* L */
	u32			nr_devs;	/* L */
	dev_t			devs[IOPA_STATE_MAX_DEVS]; /* L */
	u64			diskseq;	/* L */
	u32			order;		/* L, A read */
	struct rb_root		sorted;		/* L */
	struct iopa_kjob	*reindex;	/* L */
	u64			sweep_pos;	/* L */
	u64			sweep_cut;	/* L */
	bool			sweep_down;	/* L */
	struct pid		*pid;		/* I */
	char			comm[TASK_COMM_LEN]; /* I */
	u64			cgroup_id;	/* I */
	u32			weight;		/* A */
	struct iopa_user	*user;		/* I */
	struct iopa_group	*group;		/* L + group */
	struct list_head	group_node;	/* group */
	bool			group_demand;	/* L */
	bool			group_active;	/* group */
	u32			group_weight;	/* group */
	struct iopa_group_cg	*group_cg;	/* group */
	struct iopa_share	group_share;	/* group */
	u64			turn_wait_ns;	/* L */
	bool			turn_holder;	/* L */
	u32			group_part;	/* group */
	u32			group_target;	/* group */
	u32			group_run;	/* group */
	u32			group_budget;	/* L */
	u32			group_sharers;	/* L */
	u32			group_cycles;	/* L */
	u32			group_mode;	/* L */
	u32			group_cycle_ms;	/* L */
	u32			group_knee;	/* L */
	struct iopa_sub_metrics	m;		/* L */
};

/* Jobs taken back from a worker whose COMPLETE it answers with -ETIME. */
#define IOPA_WORKER_EXPIRED	8

/**
 * struct iopa_worker - a worker fd
 * @ctx: I: the context
 * @node: L: on ctx->workers
 * @held: L: RUNNING jobs this worker holds
 * @nr_held: L: length of @held
 * @nr_parked: L: places for jobs held by this worker's io_uring fetch
 *	commands on ctx->parked (one per FETCH; per WORK_BATCH, nr_work or
 *	the worker's room if less)
 * @io_task: L: the thread that completed this worker's last job
 * @io_charged: L: @io_task's block I/O bytes already charged to jobs, so
 *	a thread holding several jobs charges each byte to one of them
 * @restart_done: L: the job a COMPLETE_AND_FETCH completed before its
 *	fetch part returned -ERESTARTSYS, which its restart must not
 *	complete again; 0 if none (one at a time: two threads sharing the
 *	worker fd, both interrupted so, keep the later's)
 * @restart_task: L: the thread of that call, compared only (no reference)
 * @expired: L: the last IOPA_WORKER_EXPIRED jobs taken back from this
 *	worker when their lease ended, whose COMPLETE answers -ETIME
 * @expired_next: L: the slot of @expired to fill next
 * @borrow: I: takes lent fds (IOPA_WORKER_F_BORROW)
 * @nr_files: L (written), read without a lock at hand-over: entries used
 *	in @files
 * @files: L (written), read without a lock: the fds the worker named
 *	with IOPA_IOC_WORKER_SET_FILES (each checked at use: a torn read
 *	costs a job a new fd, nothing more)
 */
struct iopa_worker {
	struct iopa_ctx		*ctx;		/* I */
	struct list_head	node;		/* L */
	struct list_head	held;		/* L */
	u32			nr_held;	/* L */
	u32			nr_parked;	/* L */
	const struct task_struct *io_task;	/* L */
	u64			io_charged;	/* L */
	u64			restart_done;	/* L */
	const struct task_struct *restart_task;	/* L */
	u64			expired[IOPA_WORKER_EXPIRED]; /* L */
	u32			expired_next;	/* L */
	bool			borrow;		/* I */
	u32			nr_files;	/* L, unlocked reads */
	s32			files[IOPA_WORKER_MAX_FILES]; /* L, unlocked reads */
};

/**
 * struct iopa_kjob - one submitted job (kernel side)
 * @node: L: on the list its state names
 * @sub: I: the submitter; the job holds a reference on it
 * @worker: L: the holder while RUNNING
 * @file: L: the job's file, referenced until the job ends
 * @user: L: the charge of @file to the submitting user (user.c), with it
 * @id: I: unique within the context once queued
 * @user_data: I: the submitter's cookie
 * @offset: I: byte range start
 * @len: I: byte range length
 * @flags: I: IOPA_JOB_F_*
 * @ufd: I: the submitter's fd for @file, lent with IOPA_JOB_F_BORROW
 * @cqe_flags: L: IOPA_CQE_F_* gathered so far
 * @res: L: result, once DONE
 * @state: L: enum iopa_job_state
 * @io_task: L: the worker thread that fetched the job while RUNNING
 * @io_mark: L: @io_task's block I/O bytes when it fetched the job
 * @submit_ns: L: when it was submitted (ktime_get_ns()), or requeued
 *	after a run (a dispatch given back undone keeps it: its wait goes on)
 * @fetch_ns: L: when its worker got it (its service time starts), 0 while
 *	not RUNNING and while on its way to a worker from another task
 * @handing: L (set), cleared without the lock at the end of the
 *	hand-over (WRITE_ONCE()): dispatched, on its way to its worker
 *	(iopa_worker_take_locked() to iopa_worker_hand_over()).  Counted
 *	against the limit, not yet in service, and no COMPLETE finds it
 * @served: L: handing, to a parked io_uring command, in @ho, until the
 *	command's task claims it (iopa_worker_claim()); only the lease takes
 *	it back meanwhile (iopa_job_unserve()), counted from @serve_ns.
 *	Once claimed nothing ends it before the hand-over ends
 * @lent: L: this run was lent the submitter's fd number
 *	(IOPA_WORK_F_BORROWED): no lease takes it back, since the worker
 *	keeps using the number until it completes the job
 * @serve_ns: L: when it was dispatched to a parked command
 * @ho: L: its place in the command's jobs while @served
 * @ops: L: the front-end that reports the job's end itself (an io_uring
 *	SUBMIT's CQE), or NULL: the end is queued for IOPA_IOC_REAP
 * @orphan: L: its front-end let go of it (an io_uring command was
 *	cancelled): the job's end is reported nowhere, and the job is
 *	cancelled, not requeued, if its worker dies
 * @ucmd: L: uring.c's: the SUBMIT command whose CQE reports the job's end
 * @unode: L: uring.c's: on ctx->uring_jobs while @ops is set and the job
 *	queued
 * @run_node: L: on @sub->running while RUNNING
 * @sort_node: L: on @sub->sorted while PENDING in SORTED or CSCAN order,
 *	else cleared
 * @location: I: physical block of @offset, 0 if unknown or FIFO
 */
struct iopa_kjob {
	struct list_head	node;		/* L */
	struct iopa_submitter	*sub;		/* I */
	struct iopa_worker	*worker;	/* L */
	struct file		*file;		/* L */
	struct iopa_user	*user;		/* L */
	u64			id;		/* I */
	u64			user_data;	/* I */
	u64			offset;		/* I */
	u64			len;		/* I */
	u32			flags;		/* I */
	s32			ufd;		/* I */
	u32			cqe_flags;	/* L */
	s32			res;		/* L */
	u8			state;		/* L */
	const struct task_struct *io_task;	/* L */
	u64			io_mark;	/* L */
	u64			submit_ns;	/* L */
	u64			fetch_ns;	/* L */
	bool			handing;	/* L, cleared unlocked */
	bool			served;		/* L */
	bool			lent;		/* L */
	u64			serve_ns;	/* L */
	struct iopa_handout	*ho;		/* L */
	const struct iopa_job_ops *ops;		/* L */
	bool			orphan;		/* L */
	struct io_uring_cmd	*ucmd;		/* L */
	struct list_head	unode;		/* L */
	struct list_head	run_node;	/* L */
	struct rb_node		sort_node;	/* L */
	u64			location;	/* I */
};

/**
 * struct iopa_handout - a job dispatched to a worker, on its way to the
 *	worker's buffer (iopa_worker_take_locked() to iopa_worker_hand_over())
 * @work: what the worker is told.  @work.fd is -1, or the submitter's
 *	lent fd: checked already if IOPA_WORK_F_BORROWED is set, else by
 *	the hand-over, in the worker's task
 * @file: a reference on the job's file for the hand-over, or NULL (a
 *	lent fd checked already, or a served job not claimed yet)
 * @job: the job, RUNNING and @handing until handed over or given back;
 *	NULL once the lease took it back from a parked command (L)
 */
struct iopa_handout {
	struct iopa_work	work;
	struct file		*file;
	struct iopa_kjob	*job;
};

/* Completions and jobs a batch carries on the stack; more are allocated. */
#define IOPA_BATCH_ONSTACK	8

/**
 * struct iopa_job_ops - a front-end that reports the end of its jobs
 *	itself, rather than queueing it for IOPA_IOC_REAP (uring.c)
 * @queued: the job was queued, PENDING.  Context: ctx->lock held
 * @ended: the job ended and is GONE; no cancel of the front-end may find
 *	it any more.  Context: ctx->lock held
 * @free: the job, which ended with result @res, is being freed: report
 *	its end.  Context: ctx->lock not held
 *
 * As blk-mq calls a driver's queue ops, the job core calls these; it
 * never calls a front-end by name.  A front-end touches no field of a
 * job but @ops (set before the job is queued, or cleared by
 * iopa_job_orphan()) and its own (uring.c: @ucmd, @unode).
 */
struct iopa_job_ops {
	void (*queued)(struct iopa_ctx *ctx, struct iopa_kjob *job);
	void (*ended)(struct iopa_ctx *ctx, struct iopa_kjob *job);
	void (*free)(struct iopa_kjob *job, s32 res);
};

/**
 * struct iopa_park_ops - a front-end whose FETCH and REAP commands wait
 *	on ctx->parked and ctx->reapers instead of sleeping (uring.c)
 * @serve: jobs may be dispatchable: hand them to parked commands.
 *	Context: ctx->lock held
 * @reap: a job of @sub ended: completions may be there for its parked
 *	REAP commands.  Context: ctx->lock held
 */
struct iopa_park_ops {
	void (*serve)(struct iopa_ctx *ctx);
	void (*reap)(struct iopa_submitter *sub);
};

/**
 * struct iopa_pcpu_totals - module-wide job counters, one per CPU, summed
 *	by the sysfs reader (iopa_totals_stat(), iopa_totals_nr()): a job's
 *	every step would otherwise write a cache line all CPUs share
 * @stat: events since load
 * @nr: jobs per counted state (one CPU's increments and decrements: the
 *	sum is the gauge)
 */
struct iopa_pcpu_totals {
	s64			stat[IOPA_NR_STATS];
	long			nr[IOPA_JOB_NR_COUNTED];
};

/**
 * struct iopa_totals - module-wide counters, shown in sysfs
 * @jobs: jobs charged against max_total_jobs: job objects allocated and
 *	not yet freed, and room reserved by SUBMITs building their jobs
 * @contexts: live contexts
 * @submitters: live submitter objects (open, or closed with running jobs)
 * @workers: live workers
 *
 * The job counters are per CPU: struct iopa_pcpu_totals.
 */
struct iopa_totals {
	atomic_long_t		jobs;
	atomic_long_t		contexts;
	atomic_long_t		submitters;
	atomic_long_t		workers;
};

/**
 * enum iopa_param - the controller's parameters that sysfs sets, each a
 *	field of struct iopa_ctl_params (params.c)
 * @IOPA_PARAM_INCREASE: increase_permille (increase_threshold)
 * @IOPA_PARAM_DECREASE: decrease_permille (decrease_threshold)
 * @IOPA_PARAM_FAST_CYCLE: fast_cycle_ms
 * @IOPA_PARAM_NORMAL_CYCLE: normal_cycle_ms
 * @IOPA_PARAM_HOLD_CYCLE: hold_cycle_ms
 * @IOPA_PARAM_HISTORY: history
 * @IOPA_PARAM_INIT_LIMIT: init_limit
 * @IOPA_PARAM_FAST_CAP: fast_cap
 * @IOPA_PARAM_MAX_LIMIT: max_limit
 * @IOPA_PARAM_GAIN: gain_permille (gain_threshold)
 * @IOPA_NR_PARAMS: how many
 */
enum iopa_param {
	IOPA_PARAM_INCREASE,
	IOPA_PARAM_DECREASE,
	IOPA_PARAM_FAST_CYCLE,
	IOPA_PARAM_NORMAL_CYCLE,
	IOPA_PARAM_HOLD_CYCLE,
	IOPA_PARAM_HISTORY,
	IOPA_PARAM_INIT_LIMIT,
	IOPA_PARAM_FAST_CAP,
	IOPA_PARAM_MAX_LIMIT,
	IOPA_PARAM_GAIN,
	IOPA_NR_PARAMS,
};

/**
 * struct iopa_tunables - root-writable knobs, shown in sysfs
 * @max_jobs: outstanding (submitted, unreaped) jobs per submitter
 * @max_submitters: live submitters per context
 * @max_user_submitters: live submitters per user, module-wide (user.c)
 * @max_workers: live workers per context
 * @max_total_jobs: jobs of the whole module (iopa_totals.jobs)
 * @learn_knees: 1: device groups learn their devices' knees (knee.c)
 *
 * Read with READ_ONCE(): a new value applies to the next check.
 */
struct iopa_tunables {
	unsigned int		max_jobs;
	unsigned int		max_submitters;
	unsigned int		max_user_submitters;
	unsigned int		max_workers;
	unsigned int		max_total_jobs;
	unsigned int		learn_knees;
};

/*
 * The context lock (the L rule), taken and dropped only through these
 * two, as blk-iocost takes its locks through iocg_lock()/iocg_unlock():
 * sparse sees each function's balance, and the functions that need it
 * held say so with __must_hold() and check it with lockdep.
 */
static inline void iopa_ctx_lock(struct iopa_ctx *ctx)
	__acquires(&ctx->lock)
{
	spin_lock(&ctx->lock);
}

static inline void iopa_ctx_unlock(struct iopa_ctx *ctx)
	__releases(&ctx->lock)
{
	spin_unlock(&ctx->lock);
}

/* A wait of @ns nanoseconds (0: no limit) in jiffies, rounded up. */
static inline long iopa_timeout_jiffies(u64 ns)
{
	if (!ns)
		return MAX_SCHEDULE_TIMEOUT;
	return min_t(u64, nsecs_to_jiffies64(ns), MAX_SCHEDULE_TIMEOUT - 2) + 1;
}

/*
 * iopa_receive_fd() - give the caller a new O_CLOEXEC fd for @file, with
 * the LSM check fd passing gets (security_file_receive()), and store its
 * number at @ufd.  Returns the fd or a negative errno.  Kernels before
 * 6.8 have no receive_fd() that stores the number (Kbuild detects which
 * one this kernel has), and none that modules may call: there the fd is
 * installed first.  The caller wrote @ufd just before (the whole struct
 * iopa_work), so the store can fault only if another thread unmapped it
 * meanwhile; the fd is then left installed and -EFAULT returned.
 * Closing it (close_fd()) could close another file that a dup2() in
 * another thread put in that slot since.
 */
#ifdef IOPA_HAVE_RECEIVE_FD_UFD
static inline int iopa_receive_fd(struct file *file, int __user *ufd)
{
	return receive_fd(file, ufd, O_CLOEXEC);
}
#else
static inline int iopa_receive_fd(struct file *file, int __user *ufd)
{
	int fd = receive_fd(file, O_CLOEXEC);

	if (fd >= 0 && put_user(fd, ufd))
		return -EFAULT;
	return fd;
}
#endif

extern struct iopa_totals iopa_totals;
DECLARE_PER_CPU(struct iopa_pcpu_totals, iopa_pcpu_totals);
extern struct iopa_tunables iopa_tunables;
extern const struct attribute_group *iopa_attr_groups[];
extern struct list_head iopa_ctx_list;
extern struct mutex iopa_ctx_list_lock;

struct io_uring_cmd;
struct iopa_group;

/*
 * The files' functions, lowest layer first: each file calls only those
 * of the layers before its own (main.c has the map;
 * tools/check/kernel-layers.py checks the objects).
 */

/* params.c */
s64 iopa_totals_stat(enum iopa_stat s);
long iopa_totals_nr(enum iopa_job_state state);
void iopa_params_init(void);
void iopa_params_get(struct iopa_ctl_params *p);
u32 iopa_param_read(enum iopa_param i);
int iopa_param_set(enum iopa_param i, u32 val);
enum iopa_ctl_policy iopa_default_policy_get(void);
void iopa_default_policy_set(enum iopa_ctl_policy pol);

/* blkstat.c */
struct iopa_blkdev;
struct iopa_blkdev *iopa_blkstat_get(dev_t dev);
void iopa_blkstat_put(struct iopa_blkdev *d);
u64 iopa_blkstat_read_bytes(const struct iopa_blkdev *d);
void iopa_blkstat_debugfs(struct dentry *dir);
void iopa_blkstat_init(void);
void iopa_blkstat_exit(void);

/* knee.c */
u32 iopa_knee_lookup(dev_t dev, u64 diskseq, u32 *job_kb);
void iopa_knee_learn(dev_t dev, u64 diskseq, u32 knee, u32 job_kb);
ssize_t iopa_knee_show(char *buf);
ssize_t iopa_knee_store(const char *buf, size_t count);

/* user.c */
struct iopa_user;
struct iopa_user *iopa_user_pin(void);
void iopa_user_unpin(struct iopa_user *u);
struct iopa_user *iopa_user_add_sub(unsigned int max);
void iopa_user_del_sub(struct iopa_user *u);
void iopa_user_exit(void);

/* order.c */
u64 iopa_order_locate(struct file *file, u64 offset);
bool iopa_order_may_block(const struct iopa_submitter *sub);
void iopa_order_pending(struct iopa_kjob *job);
void iopa_order_leave(struct iopa_kjob *job);
struct iopa_kjob *iopa_order_next(struct iopa_submitter *sub);
long iopa_sub_set_order(struct iopa_submitter *sub, void __user *argp);

/* runq.c */
void iopa_sub_update(struct iopa_submitter *sub);
void iopa_kick_workers(struct iopa_ctx *ctx, unsigned int n);

/* measure.c */
u64 iopa_measure_cpu_idle_us(void);
void iopa_measure_job_started(struct iopa_kjob *job, u64 now);
void iopa_measure_job_given_back(struct iopa_kjob *job);
u64 iopa_measure_job_done(struct iopa_kjob *job, u64 now_ns, u64 *svc_us);

/* group.c */
u64 iopa_sub_cgroup_id(void);
void iopa_group_job_done(struct iopa_submitter *sub, u64 bytes, u64 svc_us,
			 u64 now_ns);
bool iopa_group_any(void);
void iopa_group_join(struct iopa_submitter *sub);
void iopa_group_leave(struct iopa_submitter *sub);
void iopa_group_fill_state(struct iopa_submitter *sub, struct iopa_state *st);
u32 iopa_group_share_limit(struct iopa_submitter *sub,
			   const struct iopa_ctl_params *p, u32 share);
void iopa_group_note_wait(struct iopa_submitter *sub, bool waits, u64 now);
void iopa_group_job_left(struct iopa_submitter *sub);
void iopa_group_debugfs(struct dentry *dir);

/* limit.c */
void iopa_limit_init(struct iopa_submitter *sub, u32 fixed_limit);
void iopa_limit_start(struct iopa_submitter *sub);
void iopa_limit_stop(struct iopa_submitter *sub);
long iopa_limit_admin(struct iopa_submitter *sub,
		      const struct iopa_sub_admin *a);
void iopa_limit_wake(struct iopa_submitter *sub);
void iopa_limit_job_done(struct iopa_kjob *job, u64 now_ns);
void iopa_limit_note_file(struct iopa_submitter *sub,
			  const struct file *file);
long iopa_limit_ioctl(struct iopa_submitter *sub, unsigned int cmd,
		      void __user *argp);

/* queue.c */
void iopa_job_free_list(struct list_head *gc);
int iopa_sub_reserve(struct iopa_submitter *sub, u32 want, bool wait);
int iopa_kjob_new(struct iopa_submitter *sub, const struct iopa_job *desc,
		  struct list_head *batch, struct iopa_kjob **jobp);
void iopa_sub_enqueue(struct iopa_submitter *sub, struct list_head *batch,
		      u32 nr, u32 unused);
long iopa_sub_submit(struct iopa_submitter *sub,
		     const struct iopa_job __user *ujobs, u32 nr, bool wait);
u32 iopa_sub_claim_locked(struct iopa_submitter *sub, struct list_head *taken,
			  u32 nr);
long iopa_sub_deliver(struct iopa_submitter *sub, struct list_head *taken,
		      struct iopa_cqe __user *ucqes);
long iopa_sub_reap(struct iopa_submitter *sub, struct iopa_cqe __user *ucqes,
		   u32 nr);
bool iopa_sub_has_done(struct iopa_submitter *sub);
long iopa_sub_cancel(struct iopa_submitter *sub, u64 user_data, bool all);
void iopa_sub_set_lease(struct iopa_submitter *sub, u64 lease_ns);
u64 iopa_sub_lease(struct iopa_submitter *sub);
void iopa_sub_stats(struct iopa_submitter *sub, struct iopa_stats *st);
__poll_t iopa_sub_poll(struct iopa_submitter *sub, struct file *file,
		       poll_table *wait);
int iopa_sub_create(struct iopa_ctx *ctx, u32 limit);
void iopa_sub_close(struct iopa_submitter *sub);
void iopa_sub_put(struct iopa_submitter *sub);
struct iopa_submitter *iopa_sub_find_get(u32 ctx_id, u32 sub_id);
u32 iopa_worker_complete_locked(struct iopa_worker *w,
				const struct iopa_done *done, u32 n,
				struct list_head *gc, int *err);
int iopa_worker_complete(struct iopa_worker *w, const struct iopa_done *done);
int iopa_batch_load(const struct iopa_batch *arg, struct iopa_done **done);
long iopa_batch_result(long ret, u32 completed, u32 nr_done);
u32 iopa_worker_room(const struct iopa_worker *w);
u32 iopa_worker_take_locked(struct iopa_worker *w, struct iopa_handout *h,
			    u32 max, bool here);
void iopa_worker_give_back(struct iopa_worker *w, struct iopa_handout *h,
			   u32 n);
u32 iopa_worker_claim(struct iopa_worker *w, struct iopa_handout *h, u32 n);
int iopa_worker_hand_over(struct iopa_worker *w, struct iopa_handout *h,
			  u32 n, struct iopa_work __user *uwork);
long iopa_worker_batch(struct iopa_worker *w, const struct iopa_done *done,
		       u32 nr_done, struct iopa_handout *h, u32 nr_work,
		       u32 flags, u64 timeout_ns, u32 *completed);
long iopa_worker_fetch(struct iopa_worker *w, const struct iopa_fetch *arg,
		       struct iopa_work __user *uwork, bool complete);
int iopa_worker_create(struct iopa_ctx *ctx, u32 flags);
int iopa_worker_set_files(struct iopa_worker *w, const s32 *fds, u32 nr);
void iopa_worker_close(struct iopa_worker *w);
void iopa_job_orphan(struct iopa_kjob *job, struct list_head *gc);
bool iopa_job_is_new(const struct iopa_kjob *job);
void iopa_stats_fill(struct iopa_stats *st, const u64 *stat, const u32 *nr);
struct iopa_ctx *iopa_ctx_alloc(void);
void iopa_ctx_put(struct iopa_ctx *ctx);
void iopa_ctx_stats(struct iopa_ctx *ctx, struct iopa_stats *st);
bool iopa_is_iopa_file(const struct file *file);
int iopa_queue_init(const struct file_operations *sub_fops,
		    const struct file_operations *worker_fops);
void iopa_queue_exit(void);

/* ioctl.c */
long iopa_sub_ioctl(struct iopa_submitter *sub, unsigned int cmd,
		    void __user *argp);
long iopa_worker_ioctl(struct iopa_worker *w, unsigned int cmd,
		       void __user *argp);
long iopa_ctx_ioctl(struct iopa_ctx *ctx, unsigned int cmd,
		    void __user *argp);

/* uring.c */
int iopa_uring_sub_cmd(struct iopa_submitter *sub, struct io_uring_cmd *cmd,
		       unsigned int issue_flags);
int iopa_uring_worker_cmd(struct iopa_worker *w, struct io_uring_cmd *cmd,
			  unsigned int issue_flags);
void iopa_uring_exit(void);

/* state.c */
long iopa_state_ioctl(struct iopa_submitter *sub, unsigned int cmd,
		      void __user *argp);
long iopa_ctx_list_subs(struct iopa_ctx *self, void __user *argp);
long iopa_ctx_sub_admin(void __user *argp);
void iopa_debugfs_init(void);
void iopa_debugfs_exit(void);

#endif /* _IOPA_PRIV_H */
