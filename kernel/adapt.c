// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - adaptive limits: measurement, the per-submitter cycle, the
 * adaptation ioctls, the controller's global parameters and debugfs.
 *
 * The decision itself is kernel/ctl.c's, which is free of kernel APIs so
 * the host simulator runs the same code.  This file feeds it:
 *
 * - Bytes.  The bytes a job moves through the block layer are those its
 *   worker thread is charged between FETCH and COMPLETE in its task I/O
 *   accounting (read_bytes at bio submission, write_bytes at dirtying),
 *   the same counters as /proc/<pid>/io.  Page-cache hits count nothing,
 *   unlike the sys_read/sys_write volume the IOPA paper used.  A thread
 *   holding several jobs at once charges each byte once: to the first
 *   of its jobs to complete after the byte moved (the worker remembers
 *   how far its thread's counter has been charged).
 * - Jobs.  Completions per second; the throughput signal for a
 *   submitter whose jobs never did block I/O (CPU-bound or cached).  A
 *   cycle whose jobs completed without block I/O although earlier ones
 *   did is "cached": it says nothing about the device and the controller
 *   ignores it (it is not a collapse of the byte rate).
 * - Times.  Each job's queue wait (submit, or requeue, to fetch) and
 *   service time (fetch to complete).  The controller uses the service
 *   times' spread to estimate a sample's noise within its cycle, and
 *   (bracket policy) ends a cycle as soon as it holds enough evidence:
 *   the completion that brings it there queues the cycle's end.
 * - Demand.  A cycle tells something about the limit only if jobs were
 *   pending while the limit was reached; other samples are ignored.
 * - CPU.  Like seed 001, no growth while the CPUs are saturated: idle +
 *   iowait time of all online CPUs over the cycle below 10%.
 *
 * Each open, adaptive submitter has a delayed work that ends its cycle
 * after the length the controller asks for, feeds the sample, applies the
 * new limit (a drop never preempts; surplus workers park after their
 * job), wakes workers for a raise, traces and re-arms.  A pinned
 * limit keeps its cycles, which then only measure.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/kernel_stat.h>
#include <linux/math64.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/seq_file.h>
#include <linux/task_io_accounting_ops.h>
#include <linux/tick.h>

#include "iopa.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* The controller's parameters: sysfs writes them, each cycle reads them. */
static struct iopa_ctl_params iopa_params;
static enum iopa_ctl_policy iopa_default_policy = IOPA_CTL_POLICY_BRACKET;
/* Protects iopa_params and iopa_default_policy. */
static DEFINE_SPINLOCK(iopa_params_lock);

static struct dentry *iopa_debugfs_dir;

/* ---- parameters ------------------------------------------------------- */

/**
 * iopa_params_init() - set the controller's parameters to their defaults
 */
void iopa_params_init(void)
{
	iopa_ctl_params_default(&iopa_params, num_online_cpus());
}

/**
 * iopa_params_get() - a consistent copy of the controller's parameters
 * @p: filled in, with ncpus set to the CPUs online now
 */
void iopa_params_get(struct iopa_ctl_params *p)
{
	spin_lock(&iopa_params_lock);
	*p = iopa_params;
	spin_unlock(&iopa_params_lock);
	p->ncpus = num_online_cpus();
}

/**
 * iopa_params_read() - one parameter
 * @off: offsetof() the u32 field in struct iopa_ctl_params
 *
 * Return: its value.
 */
u32 iopa_params_read(size_t off)
{
	u32 val;

	spin_lock(&iopa_params_lock);
	val = *(u32 *)((char *)&iopa_params + off);
	spin_unlock(&iopa_params_lock);
	return val;
}

/**
 * iopa_params_set() - set one parameter, if the whole set stays valid
 * @off: offsetof() the u32 field in struct iopa_ctl_params
 * @val: the new value
 *
 * Return: 0, or -EINVAL (the old value stays) if iopa_ctl_params_check()
 * refuses the result.
 */
int iopa_params_set(size_t off, u32 val)
{
	struct iopa_ctl_params p;
	int ret;

	spin_lock(&iopa_params_lock);
	p = iopa_params;
	*(u32 *)((char *)&p + off) = val;
	p.ncpus = num_online_cpus();
	ret = iopa_ctl_params_check(&p);
	if (!ret)
		iopa_params = p;
	spin_unlock(&iopa_params_lock);
	return ret;
}

/**
 * iopa_default_policy_get() - the policy of new adaptive submitters
 *
 * Return: the policy.
 */
enum iopa_ctl_policy iopa_default_policy_get(void)
{
	enum iopa_ctl_policy pol;

	spin_lock(&iopa_params_lock);
	pol = iopa_default_policy;
	spin_unlock(&iopa_params_lock);
	return pol;
}

/**
 * iopa_default_policy_set() - set the policy of new adaptive submitters
 * @pol: the policy
 */
void iopa_default_policy_set(enum iopa_ctl_policy pol)
{
	spin_lock(&iopa_params_lock);
	iopa_default_policy = pol;
	spin_unlock(&iopa_params_lock);
}

/* ---- measurement ------------------------------------------------------ */

/* Bytes @task has been charged for block I/O, reads and writes. */
static u64 iopa_task_io_bytes(const struct task_struct *task)
{
	return ((u64)task_io_get_inblock(task) +
		task_io_get_oublock(task)) << 9;
}

/**
 * iopa_adapt_cpu_idle_us() - idle + iowait time of all online CPUs
 *
 * Return: the sum, in microseconds.
 */
u64 iopa_adapt_cpu_idle_us(void)
{
	u64 sum = 0, t;
	int cpu;

	for_each_online_cpu(cpu) {
		t = get_cpu_idle_time_us(cpu, NULL);
		if (t == (u64)-1) {
			/* No NOHZ accounting: the tick's. */
			struct kernel_cpustat kcs;

			kcpustat_cpu_fetch(&kcs, cpu);
			sum += div_u64(kcs.cpustat[CPUTIME_IDLE] +
				       kcs.cpustat[CPUTIME_IOWAIT],
				       NSEC_PER_USEC);
			continue;
		}
		sum += t;
		t = get_cpu_iowait_time_us(cpu, NULL);
		if (t != (u64)-1)
			sum += t;
	}
	return sum;
}

/**
 * iopa_adapt_job_started() - a worker thread took @job
 * @job: the job, just dispatched to the current task
 *
 * Context: ctx->lock held, in the fetching worker thread.
 */
void iopa_adapt_job_started(struct iopa_kjob *job)
{
	struct iopa_submitter *sub = job->sub;
	u64 now;

	job->io_task = current;
	job->io_mark = iopa_task_io_bytes(current);
	if (job->fetch_ns)
		return;		/* the same fetch, handed over */
	now = ktime_get_ns();
	job->fetch_ns = now;
	if (now > job->submit_ns)
		sub->cyc.wait_us += div_u64(now - job->submit_ns, NSEC_PER_USEC);
	sub->cyc.dispatched++;
}

/**
 * iopa_adapt_job_done() - a worker completed @job: charge its I/O
 * @job: the job, still RUNNING
 *
 * The I/O of the completing thread since it fetched the job is the
 * job's; a job completed by another thread than the one that fetched it
 * counts as a job but moves no bytes.
 *
 * Context: ctx->lock held.
 */
void iopa_adapt_job_done(struct iopa_kjob *job)
{
	struct iopa_submitter *sub = job->sub;
	struct iopa_worker *w = job->worker;
	struct iopa_adapt_cycle *cyc = &sub->cyc;
	u64 bytes = 0, now_ns = ktime_get_ns(), svc = 0, sq;

	lockdep_assert_held(&sub->ctx->lock);
	if (job->io_task == current) {
		u64 now = iopa_task_io_bytes(current), from = job->io_mark;

		/* Bytes already charged to another job of this thread: not again. */
		if (w && w->io_task == current && w->io_charged > from)
			from = w->io_charged;
		/* (A dead fetcher's task_struct may be reused.) */
		if (now >= from)
			bytes = now - from;
		if (w) {
			w->io_task = current;
			w->io_charged = now;
		}
	}
	job->io_task = NULL;
	cyc->bytes += bytes;
	cyc->jobs++;
	if (job->fetch_ns && now_ns > job->fetch_ns)
		svc = div_u64(now_ns - job->fetch_ns, NSEC_PER_USEC);
	cyc->svc_us += svc;
	sq = svc < U32_MAX ? svc * svc : U64_MAX;
	cyc->svc_sq = cyc->svc_sq > U64_MAX - sq ? U64_MAX : cyc->svc_sq + sq;
	/* A member of a device group feeds the group's cycle too. */
	iopa_group_job_done(sub, bytes, svc, now_ns);

	if (cyc->ending || sub->closed)
		return;
	/*
	 * Enough evidence: end the cycle now rather than at its timer.  Or
	 * a newcomer's first bytes while devices are shared: that its jobs
	 * do block I/O is all it needs to join its device's group (at the
	 * end of the cycle, iopa_group_join()), rather than a cycle at its
	 * start limit, crowded out by the members.  Its own controller
	 * does not judge that first cycle (a transient).
	 */
	if (iopa_ctl_cycle_enough(&sub->ctl,
				  min_t(u64, div_u64(now_ns - cyc->start_ns,
						     NSEC_PER_MSEC), U32_MAX),
				  min_t(u64, cyc->jobs, U32_MAX), cyc->svc_us) ||
	    (bytes && !sub->unit_known && !sub->group && iopa_group_any() &&
	     iopa_ctl_policy(&sub->ctl) == IOPA_CTL_POLICY_BRACKET &&
	     iopa_ctl_mode(&sub->ctl) != IOPA_CTL_MODE_FIXED)) {
		cyc->ending = true;
		mod_delayed_work(system_unbound_wq, &sub->adapt_work, 0);
	}
}

/* Make the dispatch limit follow the controller's. */
static void iopa_adapt_apply(struct iopa_submitter *sub)
{
	u32 old = sub->limit;

	lockdep_assert_held(&sub->ctx->lock);
	sub->limit = iopa_ctl_limit(&sub->ctl);
	iopa_sub_update(sub);
	if (sub->limit > old)
		iopa_kick_workers(sub->ctx, sub->limit - old);
}

/**
 * iopa_adapt_note_file() - remember the device of a job's file
 * @sub: the submitter
 * @file: the job's file
 *
 * Context: ctx->lock held.
 */
void iopa_adapt_note_file(struct iopa_submitter *sub, const struct file *file)
{
	const struct inode *inode = file_inode(file);
	dev_t dev = S_ISBLK(inode->i_mode) ? inode->i_rdev : inode->i_sb->s_dev;
	struct block_device *bdev;
	struct iopa_ctl_params p;
	u32 i;

	for (i = 0; i < sub->nr_devs; i++)
		if (sub->devs[i] == dev)
			return;
	if (sub->nr_devs < IOPA_STATE_MAX_DEVS)
		sub->devs[sub->nr_devs++] = dev;
	iopa_blkstat_track(dev);
	if (sub->nr_devs != 1)
		return;
	/*
	 * The first device: a rotational disk starts at one job (see
	 * kernel/ctl.c, 5.).  A hint: the file system's device of a regular
	 * file or a directory (none for tmpfs, overlayfs, btrfs, network
	 * file systems), or an opened block device (the only job files
	 * iopa_job_file_ok() takes); a device-mapper or md device is
	 * rotational if one of its legs is.  The job's file keeps the
	 * device alive; an opened block device file's mapping is the
	 * device's (fget() gives no O_PATH file).
	 */
	bdev = S_ISBLK(inode->i_mode) ? I_BDEV(file->f_mapping->host) :
	       inode->i_sb->s_bdev;
	if (!bdev || bdev_nonrot(bdev))
		return;
	iopa_params_get(&p);
	if (!iopa_ctl_set_start(&sub->ctl, &p, 1))
		return;
	sub->changes++;
	trace_iopa_limit_change(sub->ctx->id, sub->id, sub->limit,
				iopa_ctl_limit(&sub->ctl),
				iopa_ctl_mode(&sub->ctl), 1000, 0);
	iopa_adapt_apply(sub);
}

/* ---- the cycle -------------------------------------------------------- */

static void iopa_adapt_cycle_begin(struct iopa_submitter *sub, u64 now_ns,
				   u64 idle_us)
{
	sub->cyc.start_ns = now_ns;
	sub->cyc.idle_us = idle_us;
	sub->cyc.bytes = 0;
	sub->cyc.jobs = 0;
	sub->cyc.svc_us = 0;
	sub->cyc.svc_sq = 0;
	sub->cyc.wait_us = 0;
	sub->cyc.dispatched = 0;
	sub->cyc.demand = false;
	sub->cyc.ending = false;
}

/*
 * Arm the end of the cycle now starting.  A pinned limit keeps its
 * cycles too: they measure (GET_STATE, debugfs) without adapting.
 */
static void iopa_adapt_arm(struct iopa_submitter *sub,
			   const struct iopa_ctl_params *p)
{
	lockdep_assert_held(&sub->ctx->lock);
	if (sub->closed)
		return;
	sub->adapt_idle = false;
	mod_delayed_work(system_unbound_wq, &sub->adapt_work,
			 msecs_to_jiffies(iopa_ctl_next_cycle_ms(&sub->ctl, p)));
}

/*
 * Begin the next cycle and arm its end, unless the submitter is idle: the
 * cycle that ended saw no job, and none is queued or running.  An idle
 * submitter costs no timer (as blk-iocost stops its period timer when no
 * group is active); the next job queued wakes it (iopa_adapt_wake()).
 * Its controller missed nothing: a cycle without a job says nothing.
 */
static void iopa_adapt_next(struct iopa_submitter *sub,
			    const struct iopa_ctl_params *p, u64 now, u64 idle)
{
	bool idle_sub = !sub->cyc.jobs && !sub->cyc.dispatched &&
			!sub->nr[IOPA_JOB_PENDING] &&
			!sub->nr[IOPA_JOB_RUNNING];

	iopa_adapt_cycle_begin(sub, now, idle);
	if (idle_sub)
		sub->adapt_idle = true;
	else
		iopa_adapt_arm(sub, p);
}

/**
 * iopa_adapt_wake() - a job was queued: measure again if idle
 * @sub: the submitter
 *
 * Context: ctx->lock held.
 */
void iopa_adapt_wake(struct iopa_submitter *sub)
{
	struct iopa_ctl_params p;

	lockdep_assert_held(&sub->ctx->lock);
	if (!sub->adapt_idle)
		return;
	iopa_params_get(&p);
	iopa_adapt_cycle_begin(sub, ktime_get_ns(), iopa_adapt_cpu_idle_us());
	iopa_adapt_arm(sub, &p);
}

static void iopa_adapt_work_fn(struct work_struct *work)
{
	struct iopa_submitter *sub = container_of(to_delayed_work(work),
						  struct iopa_submitter,
						  adapt_work);
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_ctl_sample sample = { };
	struct iopa_ctl_params p;
	u64 now, idle, elapsed_ms, idle_ms;
	u32 old, mode, r = 0;
	bool changed;

	iopa_params_get(&p);
	idle = iopa_adapt_cpu_idle_us();
	now = ktime_get_ns();

	spin_lock(&ctx->lock);
	if (sub->closed) {
		spin_unlock(&ctx->lock);
		return;
	}
	elapsed_ms = max_t(u64, div_u64(now - sub->cyc.start_ns,
					NSEC_PER_MSEC), 1);
	/* A CPU that went offline takes its idle time out of the sum. */
	idle_ms = idle >= sub->cyc.idle_us ?
		  div_u64(idle - sub->cyc.idle_us, USEC_PER_MSEC) : U64_MAX;
	/* No overflow, however many bytes a cycle of up to an hour saw. */
	sub->bytes_per_s = mul_u64_u64_div_u64(sub->cyc.bytes, MSEC_PER_SEC,
					       elapsed_ms);
	sub->jobs_per_s = mul_u64_u64_div_u64(sub->cyc.jobs, MSEC_PER_SEC,
					      elapsed_ms);

	/*
	 * The unit: bytes/s while the jobs do block I/O, else jobs/s (scaled
	 * by 1000 to keep some resolution).  A cycle in another unit than
	 * the one before, e.g. jobs served from the page cache after jobs
	 * that read the device, is not comparable: "cached".
	 */
	if (sub->cyc.jobs && !!sub->cyc.bytes != sub->tput_bytes) {
		sample.cached = sub->unit_known;
		sub->tput_bytes = !!sub->cyc.bytes;
	}
	if (sub->cyc.jobs)
		sub->unit_known = true;
	sample.tput = sub->tput_bytes ? sub->bytes_per_s :
		      mul_u64_u64_div_u64(sub->cyc.jobs, MSEC_PER_SEC * 1000,
					  elapsed_ms);
	sample.elapsed_ms = min_t(u64, elapsed_ms, U32_MAX);
	sample.demand = sub->cyc.demand ||
			(sub->nr[IOPA_JOB_PENDING] &&
			 sub->nr[IOPA_JOB_RUNNING] >= sub->limit);
	sample.cpu_saturated = idle_ms * 10 < elapsed_ms * p.ncpus;
	sample.block_io = sub->tput_bytes;
	sample.completions = min_t(u64, sub->cyc.jobs, U32_MAX);
	sample.svc_us = sub->cyc.svc_us;
	sample.svc_sq = sub->cyc.svc_sq;
	sub->last_jobs = sample.completions;
	sub->last_svc_us = sub->cyc.jobs ?
			   min_t(u64, div64_u64(sub->cyc.svc_us, sub->cyc.jobs),
				 U32_MAX) : 0;
	sub->last_wait_us = sub->cyc.dispatched ?
			    min_t(u64, div64_u64(sub->cyc.wait_us,
						 sub->cyc.dispatched),
				  U32_MAX) : 0;
	sub->last_noise = iopa_ctl_sample_noise(&sample, sub->limit);

	/* The limit and mode the cycle ran with. */
	old = sub->limit;
	mode = iopa_ctl_mode(&sub->ctl);
	trace_iopa_cycle(ctx->id, sub->id, old, mode, &sample,
			 sub->bytes_per_s, sub->jobs_per_s, sub->last_wait_us,
			 sub->last_svc_us, sub->last_noise);
	if (sub->group) {
		/* The group sets the limit: this cycle only measures. */
		sub->cycles++;
		iopa_adapt_next(sub, &p, now, idle);
		spin_unlock(&ctx->lock);
		return;
	}
	changed = iopa_ctl_update(&sub->ctl, &p, &sample, &r);
	sub->r_permille = r;
	sub->cycles++;
	if (changed && iopa_ctl_limit(&sub->ctl) != old) {
		sub->changes++;
		trace_iopa_limit_change(ctx->id, sub->id, old,
					iopa_ctl_limit(&sub->ctl),
					iopa_ctl_mode(&sub->ctl), r,
					sample.tput);
	}
	iopa_adapt_apply(sub);
	iopa_adapt_next(sub, &p, now, idle);
	spin_unlock(&ctx->lock);
	/* Jobs on a device, adapting with bracket: share the device. */
	iopa_group_join(sub);
}

/**
 * iopa_adapt_init() - set up a new submitter's controller
 * @sub: the submitter, not yet visible to anyone
 * @fixed_limit: 0 to adapt, else the fixed limit
 */
void iopa_adapt_init(struct iopa_submitter *sub, u32 fixed_limit)
{
	struct iopa_ctl_params p;

	iopa_params_get(&p);
	iopa_ctl_init(&sub->ctl, &p, iopa_default_policy_get());
	if (fixed_limit)
		iopa_ctl_set_fixed(&sub->ctl, fixed_limit);
	sub->limit = iopa_ctl_limit(&sub->ctl);
	sub->weight = IOPA_WEIGHT_DEFAULT;
	sub->cgroup_id = iopa_sub_cgroup_id();
	INIT_LIST_HEAD(&sub->group_node);
	INIT_DELAYED_WORK(&sub->adapt_work, iopa_adapt_work_fn);
	iopa_adapt_cycle_begin(sub, ktime_get_ns(), iopa_adapt_cpu_idle_us());
}

/**
 * iopa_adapt_start() - start adapting a submitter that has been published
 * @sub: the submitter
 */
void iopa_adapt_start(struct iopa_submitter *sub)
{
	struct iopa_ctl_params p;

	iopa_params_get(&p);
	spin_lock(&sub->ctx->lock);
	iopa_adapt_arm(sub, &p);
	spin_unlock(&sub->ctx->lock);
}

/**
 * iopa_adapt_stop() - stop adapting a submitter whose fd is released
 * @sub: the submitter, already marked closed (so the work does not re-arm)
 *
 * Context: may sleep.
 */
void iopa_adapt_stop(struct iopa_submitter *sub)
{
	cancel_delayed_work_sync(&sub->adapt_work);
	/* Closed: it cannot join again. */
	iopa_group_leave(sub);
}

/* ---- ioctls ----------------------------------------------------------- */

static long iopa_sub_set_limit(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_ctl_params p;
	struct iopa_limit arg;
	bool was_fixed;
	u64 now, idle;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;
	if (arg.limit > IOPA_LIMIT_MAX)
		return -EINVAL;

	iopa_params_get(&p);
	idle = iopa_adapt_cpu_idle_us();
	now = ktime_get_ns();
	spin_lock(&ctx->lock);
	was_fixed = iopa_ctl_mode(&sub->ctl) == IOPA_CTL_MODE_FIXED;
	/* Unpinned, the limit comes into today's bounds and ceiling. */
	if (!arg.limit && was_fixed)
		iopa_ctl_set_bounds(&sub->ctl, &p, sub->ctl.min, sub->ctl.max);
	iopa_ctl_set_fixed(&sub->ctl, arg.limit);
	/* In a group (unpinning what is not pinned), the group decides. */
	if (!sub->group)
		iopa_adapt_apply(sub);
	if (!arg.limit && was_fixed) {
		/* Adapting again: a fresh cycle. */
		iopa_adapt_cycle_begin(sub, now, idle);
		iopa_adapt_arm(sub, &p);
	}
	spin_unlock(&ctx->lock);
	/*
	 * A pinned limit is the submitter's own.  Pinned first, then out of
	 * the group: a join racing with this sees it pinned and stays out.
	 */
	if (arg.limit)
		iopa_group_leave(sub);
	return 0;
}

static long iopa_sub_get_limit(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_limit arg = { };

	spin_lock(&sub->ctx->lock);
	arg.limit = sub->limit;
	if (iopa_ctl_mode(&sub->ctl) == IOPA_CTL_MODE_FIXED)
		arg.flags |= IOPA_LIMIT_F_FIXED;
	spin_unlock(&sub->ctx->lock);
	return copy_to_user(argp, &arg, sizeof(arg)) ? -EFAULT : 0;
}

static long iopa_sub_set_adapt(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_ctl_params p;
	struct iopa_adapt arg;
	int ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~IOPA_ADAPT_F_MASK) || arg.reserved0 || arg.reserved)
		return -EINVAL;
	if (arg.policy > IOPA_POLICY_MAX || arg.min > IOPA_LIMIT_MAX ||
	    arg.max > IOPA_LIMIT_MAX || (arg.max && arg.min > arg.max))
		return -EINVAL;
	if (arg.flags & IOPA_ADAPT_F_WEIGHT) {
		if (arg.weight < IOPA_WEIGHT_MIN ||
		    arg.weight > IOPA_WEIGHT_MAX)
			return -EINVAL;
		/* More than the default share of a device is a privilege. */
		if (arg.weight > IOPA_WEIGHT_DEFAULT && !capable(CAP_SYS_NICE))
			return -EPERM;
	} else if (arg.weight) {
		return -EINVAL;
	}
	iopa_params_get(&p);
	spin_lock(&ctx->lock);
	ret = iopa_ctl_set_bounds(&sub->ctl, &p, arg.min, arg.max);
	if (!ret && arg.policy != IOPA_POLICY_KEEP)
		iopa_ctl_set_policy(&sub->ctl, arg.policy - 1);
	if (!ret && (arg.flags & IOPA_ADAPT_F_WEIGHT))
		WRITE_ONCE(sub->weight, arg.weight);
	/*
	 * The cycle under way goes on: its end feeds the new settings.  In
	 * a group, the group's next split applies the bounds and weight.
	 */
	if (!ret && !sub->group) {
		iopa_adapt_apply(sub);
	} else if (!ret) {
		u32 old = sub->limit;

		/* The bounds hold at once in a group too. */
		sub->limit = iopa_ctl_clamp_limit(&sub->ctl, &p, sub->limit);
		iopa_sub_update(sub);
		if (sub->limit > old)
			iopa_kick_workers(ctx, sub->limit - old);
	}
	spin_unlock(&ctx->lock);
	/*
	 * Only bracket submitters share a device's budget.  The policy is
	 * set first, so a racing join sees it and stays out.
	 */
	if (!ret && arg.policy != IOPA_POLICY_KEEP &&
	    arg.policy != IOPA_POLICY_BRACKET)
		iopa_group_leave(sub);
	return ret;
}

static void iopa_state_fill(struct iopa_submitter *sub, struct iopa_state *st,
			    const struct iopa_ctl_params *p)
{
	u32 i;

	lockdep_assert_held(&sub->ctx->lock);
	st->limit = sub->limit;
	st->mode = iopa_ctl_mode(&sub->ctl);
	st->policy = iopa_ctl_policy(&sub->ctl) + 1;
	if (st->mode == IOPA_CTL_MODE_FIXED)
		st->flags |= IOPA_LIMIT_F_FIXED;
	st->min = sub->ctl.min;
	st->max = sub->ctl.max;
	st->inflight = sub->nr[IOPA_JOB_RUNNING];
	st->pending = sub->nr[IOPA_JOB_PENDING];
	st->cycle_ms = iopa_ctl_next_cycle_ms(&sub->ctl, p);
	st->r_permille = sub->r_permille;
	st->cycles = sub->cycles;
	st->changes = sub->changes;
	st->bytes_per_s = sub->bytes_per_s;
	st->jobs_per_s = sub->jobs_per_s;
	st->nr_devs = sub->nr_devs;
	st->order = sub->order;
	st->wait_us = sub->last_wait_us;
	st->svc_us = sub->last_svc_us;
	st->completions = sub->last_jobs;
	st->noise_permille = sub->last_noise;
	iopa_group_fill_state(sub, st);
	for (i = 0; i < sub->nr_devs; i++)
		st->devs[i] = sub->devs[i];
}

static long iopa_sub_get_state(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_ctl_params p;
	struct iopa_state st = { };

	iopa_params_get(&p);
	spin_lock(&sub->ctx->lock);
	iopa_state_fill(sub, &st, &p);
	spin_unlock(&sub->ctx->lock);
	return copy_to_user(argp, &st, sizeof(st)) ? -EFAULT : 0;
}

static void iopa_sub_info_fill(struct iopa_submitter *sub,
			       struct iopa_sub_info *info,
			       const struct iopa_ctl_params *p)
{
	struct iopa_ctx *ctx = sub->ctx;

	lockdep_assert_held(&ctx->lock);
	info->ctx_id = ctx->id;
	info->sub_id = sub->id;
	info->pid = pid_vnr(sub->pid);
	info->ctx_workers = ctx->nr_workers;
	info->ctx_waiting = ctx->nr_waiting;
	strscpy(info->comm, sub->comm, sizeof(info->comm));
	iopa_state_fill(sub, &info->state, p);
	iopa_stats_fill(&info->stats, sub->stat, sub->nr);
}

/* Largest struct iopa_sub_info a caller may say it has (a later ABI's). */
#define IOPA_LIST_ENTRY_MAX	4096

/*
 * The open submitters of @ctx into @info (room for @nr), counting all of
 * them in *@total; *@filled entries used so far.
 */
static void iopa_list_ctx(struct iopa_ctx *ctx, struct iopa_sub_info *info,
			  u32 nr, u32 *filled, u32 *total,
			  const struct iopa_ctl_params *p)
{
	struct iopa_submitter *sub;

	spin_lock(&ctx->lock);
	list_for_each_entry(sub, &ctx->subs, ctx_node) {
		if (*filled < nr)
			iopa_sub_info_fill(sub, &info[(*filled)++], p);
		(*total)++;
	}
	spin_unlock(&ctx->lock);
}

/* Copy @n entries to user space with a stride of @usize bytes. */
static int iopa_list_copy_out(void __user *dst, const struct iopa_sub_info *info,
			      u32 n, u32 usize)
{
	size_t copy = min_t(size_t, usize, sizeof(*info));
	u32 i;

	for (i = 0; i < n; i++, dst += usize) {
		if (copy_to_user(dst, &info[i], copy))
			return -EFAULT;
		if (usize > copy && clear_user(dst + copy, usize - copy))
			return -EFAULT;
	}
	return 0;
}

/**
 * iopa_ctx_list_subs() - IOPA_IOC_LIST_SUBMITTERS
 * @self: the context the command came on
 * @argp: the user's struct iopa_list
 *
 * A snapshot of the open submitters of @self (only its lock is taken:
 * the caller's fd pins it), or of every context with IOPA_LIST_F_ALL,
 * which needs CAP_SYS_ADMIN: the listing shows other users' processes
 * and their rates.
 *
 * Return: 0, -EFAULT, -EINVAL, -EPERM or -ENOMEM.
 */
long iopa_ctx_list_subs(struct iopa_ctx *self, void __user *argp)
{
	struct iopa_sub_info *info = NULL;
	struct iopa_ctl_params p;
	struct iopa_list arg;
	struct iopa_ctx *ctx;
	u32 total = 0, filled = 0;
	long ret;

	BUILD_BUG_ON(sizeof(info->comm) != TASK_COMM_LEN);
	BUILD_BUG_ON(sizeof(*info) != IOPA_SUB_INFO_SIZE_V1);
	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~IOPA_LIST_F_MASK) || arg.reserved0 || arg.reserved)
		return -EINVAL;
	if (arg.nr > IOPA_LIST_MAX || arg.entry_size < IOPA_SUB_INFO_SIZE_V1 ||
	    arg.entry_size > IOPA_LIST_ENTRY_MAX)
		return -EINVAL;
	if ((arg.flags & IOPA_LIST_F_ALL) && !capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (arg.nr) {
		info = kvcalloc(arg.nr, sizeof(*info), GFP_KERNEL_ACCOUNT);
		if (!info)
			return -ENOMEM;
	}

	iopa_params_get(&p);
	if (arg.flags & IOPA_LIST_F_ALL) {
		mutex_lock(&iopa_ctx_list_lock);
		list_for_each_entry(ctx, &iopa_ctx_list, node)
			iopa_list_ctx(ctx, info, arg.nr, &filled, &total, &p);
		mutex_unlock(&iopa_ctx_list_lock);
	} else {
		iopa_list_ctx(self, info, arg.nr, &filled, &total, &p);
	}

	ret = iopa_list_copy_out(u64_to_user_ptr(arg.subs), info, filled,
				 arg.entry_size);
	kvfree(info);
	if (ret)
		return ret;
	arg.total = total;
	arg.filled = filled;
	arg.entry_size = sizeof(*info);
	return copy_to_user(argp, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/**
 * iopa_adapt_ioctl() - the submitter commands about its limit
 * @sub: the submitter
 * @cmd: IOPA_IOC_SET_LIMIT, GET_LIMIT, SET_ADAPT or GET_STATE
 * @argp: the user argument
 *
 * Return: 0, a negative errno, or -ENOTTY for another command.
 */
long iopa_adapt_ioctl(struct iopa_submitter *sub, unsigned int cmd,
		      void __user *argp)
{
	BUILD_BUG_ON(IOPA_CTL_LIMIT_MAX != IOPA_LIMIT_MAX);
	BUILD_BUG_ON(IOPA_CTL_POLICY_IOPA + 1 != IOPA_POLICY_IOPA);
	BUILD_BUG_ON(IOPA_CTL_POLICY_HILLCLIMB + 1 != IOPA_POLICY_HILLCLIMB);
	BUILD_BUG_ON(IOPA_CTL_POLICY_BRACKET + 1 != IOPA_POLICY_BRACKET);
	BUILD_BUG_ON(IOPA_CTL_NR_POLICIES != IOPA_POLICY_MAX);
	BUILD_BUG_ON(IOPA_CTL_MODE_FAST != IOPA_MODE_FAST);
	BUILD_BUG_ON(IOPA_CTL_MODE_NORMAL != IOPA_MODE_NORMAL);
	BUILD_BUG_ON(IOPA_CTL_MODE_HOLD != IOPA_MODE_HOLD);
	BUILD_BUG_ON(IOPA_CTL_MODE_FIXED != IOPA_MODE_FIXED);
	BUILD_BUG_ON(IOPA_CTL_MODE_PROBE != IOPA_MODE_PROBE);
	BUILD_BUG_ON(IOPA_CTL_MODE_STEADY != IOPA_MODE_STEADY);

	switch (cmd) {
	case IOPA_IOC_SET_LIMIT:
		return iopa_sub_set_limit(sub, argp);
	case IOPA_IOC_GET_LIMIT:
		return iopa_sub_get_limit(sub, argp);
	case IOPA_IOC_SET_ADAPT:
		return iopa_sub_set_adapt(sub, argp);
	case IOPA_IOC_GET_STATE:
		return iopa_sub_get_state(sub, argp);
	}
	return -ENOTTY;
}

/* ---- debugfs ---------------------------------------------------------- */

/* <debugfs>/iopa/submitters: one line per open submitter. */
static int iopa_submitters_show(struct seq_file *m, void *v)
{
	struct iopa_submitter *sub;
	struct iopa_ctl_params p;
	struct iopa_state st;
	struct iopa_ctx *ctx;
	u32 i;

	iopa_params_get(&p);
	seq_puts(m, "ctx sub policy mode limit min max inflight pending bytes_per_s jobs_per_s cycles changes wait_us svc_us completions noise_permille devs\n");
	mutex_lock(&iopa_ctx_list_lock);
	list_for_each_entry(ctx, &iopa_ctx_list, node) {
		spin_lock(&ctx->lock);
		list_for_each_entry(sub, &ctx->subs, ctx_node) {
			memset(&st, 0, sizeof(st));
			iopa_state_fill(sub, &st, &p);
			seq_printf(m, "%u %u %s %s %u %u %u %u %u %llu %llu %llu %llu %u %u %u %u",
				   ctx->id, sub->id,
				   iopa_ctl_policy_name(st.policy - 1),
				   iopa_ctl_mode_name(st.mode), st.limit,
				   st.min, st.max, st.inflight, st.pending,
				   st.bytes_per_s, st.jobs_per_s, st.cycles,
				   st.changes, st.wait_us, st.svc_us,
				   st.completions, st.noise_permille);
			for (i = 0; i < st.nr_devs; i++)
				seq_printf(m, "%c%u:%u", i ? ',' : ' ',
					   MAJOR(st.devs[i]), MINOR(st.devs[i]));
			seq_putc(m, '\n');
		}
		spin_unlock(&ctx->lock);
	}
	mutex_unlock(&iopa_ctx_list_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(iopa_submitters);

/**
 * iopa_debugfs_init() - create <debugfs>/iopa/
 */
void iopa_debugfs_init(void)
{
	iopa_debugfs_dir = debugfs_create_dir(IOPA_DEV_NAME, NULL);
	debugfs_create_file("submitters", 0400, iopa_debugfs_dir, NULL,
			    &iopa_submitters_fops);
	iopa_blkstat_debugfs(iopa_debugfs_dir);
	iopa_group_debugfs(iopa_debugfs_dir);
}

/**
 * iopa_debugfs_exit() - remove <debugfs>/iopa/
 */
void iopa_debugfs_exit(void)
{
	debugfs_remove_recursive(iopa_debugfs_dir);
}
