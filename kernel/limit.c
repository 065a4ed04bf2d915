// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - the limit layer: each submitter's adjustment cycle, and the
 * commands that pin, bound or free its limit.
 *
 * The decision itself is kernel/ctl.c's, which is free of kernel APIs so
 * the host simulator runs the same code; the measurement is measure.c's;
 * submitters sharing a device are group.c's.  This file runs the cycles:
 *
 * - A cycle whose jobs completed without block I/O although earlier ones
 *   did is "cached": it says nothing about the device and the controller
 *   ignores it (it is not a collapse of the byte rate).
 * - The controller uses the service times' spread to estimate a
 *   sample's noise within its cycle, and (bracket policy) ends a cycle
 *   as soon as it holds enough evidence: the completion that brings it
 *   there queues the cycle's end.
 * - Demand.  A cycle tells something about the limit only if jobs were
 *   pending while the limit was reached; other samples are ignored.
 *
 * Each open, adaptive submitter has a delayed work that ends its cycle
 * after the length the controller asks for, feeds the sample, applies the
 * new limit (a drop never preempts; surplus workers park after their
 * job), wakes workers for a raise, traces and re-arms.  A pinned
 * limit keeps its cycles, which then only measure.
 *
 * Called by the job core (queue.c) as submitters open and close and jobs
 * are queued and end; calls group.c, measure.c, ctl.c and the run queue.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/capability.h>
#include <linux/math64.h>

#include "iopa.h"
#include "trace.h"

/**
 * iopa_limit_job_done() - a worker completed @job
 * @job: the job, still RUNNING
 * @now_ns: ktime_get_ns(), read once for a batch of completions
 *
 * Charges its cost to its submitter's cycle (and its device group's),
 * and ends the cycle now if it holds enough evidence.
 *
 * Context: ctx->lock held.
 */
void iopa_limit_job_done(struct iopa_kjob *job, u64 now_ns)
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_submitter *sub = job->sub;
	struct iopa_adapt_cycle *cyc = &sub->cyc;
	u64 svc, bytes;

	lockdep_assert_held(&sub->ctx->lock);
	bytes = iopa_measure_job_done(job, now_ns, &svc);
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
static void iopa_limit_apply(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	u32 old = sub->limit;

	lockdep_assert_held(&sub->ctx->lock);
	sub->limit = iopa_ctl_limit(&sub->ctl);
	iopa_sub_update(sub);
	if (sub->limit > old)
		iopa_kick_workers(sub->ctx, sub->limit - old);
}

/**
 * iopa_limit_note_file() - remember the device of a job's file
 * @sub: the submitter
 * @file: the job's file
 *
 * Context: ctx->lock held.
 */
void iopa_limit_note_file(struct iopa_submitter *sub, const struct file *file)
	__must_hold(&sub->ctx->lock)
{
	const struct inode *inode = file_inode(file);
	dev_t dev = S_ISBLK(inode->i_mode) ? inode->i_rdev : inode->i_sb->s_dev;
	struct block_device *bdev;
	struct iopa_ctl_params p;
	bool changed;
	u32 i, knee, job_kb;

	lockdep_assert_held(&sub->ctx->lock);
	for (i = 0; i < sub->nr_devs; i++)
		if (sub->devs[i] == dev)
			return;
	if (sub->nr_devs < IOPA_STATE_MAX_DEVS)
		sub->devs[sub->nr_devs++] = dev;
	if (sub->nr_devs != 1)
		return;
	/*
	 * The first device: its remembered knee, if the module has one
	 * (knee.c), is where the limit starts; else a rotational disk
	 * starts at one job (see kernel/ctl.c, 5.).  The device: the file
	 * system's device of a regular file or a directory (none for
	 * tmpfs, overlayfs, btrfs, network file systems), or an opened
	 * block device (the only job files iopa_job_file_ok() takes); a
	 * device-mapper or md device is rotational if one of its legs is.
	 * The job's file keeps the device alive; an opened block device
	 * file's mapping is the device's (fget() gives no O_PATH file).
	 */
	bdev = S_ISBLK(inode->i_mode) ? I_BDEV(file->f_mapping->host) :
	       inode->i_sb->s_bdev;
	if (!bdev)
		return;
	sub->diskseq = READ_ONCE(bdev->bd_disk->diskseq);
	knee = iopa_knee_lookup(dev, sub->diskseq, &job_kb);
	iopa_params_get(&p);
	/* The rotational start first: the floor of restarts, and probed. */
	changed = !bdev_nonrot(bdev) && iopa_ctl_set_start(&sub->ctl, &p, 1);
	if (knee)
		changed |= iopa_ctl_set_known(&sub->ctl, &p, knee, job_kb);
	if (!changed)
		return;
	sub->changes++;
	trace_iopa_limit_change(sub->ctx->id, sub->id, sub->limit,
				iopa_ctl_limit(&sub->ctl),
				iopa_ctl_mode(&sub->ctl), 1000, 0);
	iopa_limit_apply(sub);
}

/* ---- the cycle -------------------------------------------------------- */

static void iopa_limit_cycle_begin(struct iopa_submitter *sub, u64 now_ns,
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
static void iopa_limit_arm(struct iopa_submitter *sub,
			   const struct iopa_ctl_params *p)
	__must_hold(&sub->ctx->lock)
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
 * group is active); the next job queued wakes it (iopa_limit_wake()).
 * Its controller missed nothing: a cycle without a job says nothing.
 */
static void iopa_limit_next(struct iopa_submitter *sub,
			    const struct iopa_ctl_params *p, u64 now, u64 idle)
{
	bool idle_sub = !sub->cyc.jobs && !sub->cyc.dispatched &&
			!sub->nr[IOPA_JOB_PENDING] &&
			!sub->nr[IOPA_JOB_RUNNING];

	iopa_limit_cycle_begin(sub, now, idle);
	if (idle_sub)
		sub->adapt_idle = true;
	else
		iopa_limit_arm(sub, p);
}

/**
 * iopa_limit_wake() - a job was queued: measure again if idle
 * @sub: the submitter
 *
 * Context: ctx->lock held.
 */
void iopa_limit_wake(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	struct iopa_ctl_params p;

	lockdep_assert_held(&sub->ctx->lock);
	if (!sub->adapt_idle)
		return;
	iopa_params_get(&p);
	iopa_limit_cycle_begin(sub, ktime_get_ns(), iopa_measure_cpu_idle_us());
	iopa_limit_arm(sub, &p);
}

static void iopa_limit_work_fn(struct work_struct *work)
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
	idle = iopa_measure_cpu_idle_us();
	now = ktime_get_ns();

	iopa_ctx_lock(ctx);
	if (sub->closed) {
		iopa_ctx_unlock(ctx);
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
	sub->last_noise = iopa_ctl_sample_noise(&sub->ctl, &sample,
						sub->limit);

	/* The limit and mode the cycle ran with. */
	old = sub->limit;
	mode = iopa_ctl_mode(&sub->ctl);
	trace_iopa_cycle(ctx->id, sub->id, old, mode, &sample,
			 sub->bytes_per_s, sub->jobs_per_s, sub->last_wait_us,
			 sub->last_svc_us, sub->last_noise);
	if (sub->group) {
		/* The group sets the limit: this cycle only measures. */
		sub->cycles++;
		iopa_limit_next(sub, &p, now, idle);
		iopa_ctx_unlock(ctx);
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
	iopa_limit_apply(sub);
	iopa_limit_next(sub, &p, now, idle);
	iopa_ctx_unlock(ctx);
	/* Jobs on a device, adapting with bracket: share the device. */
	iopa_group_join(sub);
}

/**
 * iopa_limit_init() - set up a new submitter's controller
 * @sub: the submitter, not yet visible to anyone
 * @fixed_limit: 0 to adapt, else the fixed limit
 */
void iopa_limit_init(struct iopa_submitter *sub, u32 fixed_limit)
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
	INIT_DELAYED_WORK(&sub->adapt_work, iopa_limit_work_fn);
	iopa_limit_cycle_begin(sub, ktime_get_ns(), iopa_measure_cpu_idle_us());
}

/**
 * iopa_limit_start() - start adapting a submitter that has been published
 * @sub: the submitter
 */
void iopa_limit_start(struct iopa_submitter *sub)
{
	struct iopa_ctl_params p;

	iopa_params_get(&p);
	iopa_ctx_lock(sub->ctx);
	iopa_limit_arm(sub, &p);
	iopa_ctx_unlock(sub->ctx);
}

/**
 * iopa_limit_stop() - stop adapting a submitter whose fd is released
 * @sub: the submitter, already marked closed (so the work does not re-arm)
 *
 * Context: may sleep.
 */
void iopa_limit_stop(struct iopa_submitter *sub)
{
	cancel_delayed_work_sync(&sub->adapt_work);
	/* Closed: it cannot join again. */
	iopa_group_leave(sub);
}

/* ---- ioctls ----------------------------------------------------------- */

/*
 * SET_LIMIT, from the submitter's fd or IOPA_IOC_SUB_ADMIN.  -ESRCH if the
 * submitter has closed (only an admin command, which holds a reference
 * and no fd, can find it so): a closed submitter is not made runnable
 * again, nor armed, nor grouped.
 */
static long iopa_limit_set(struct iopa_submitter *sub,
			   const struct iopa_limit *arg)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_ctl_params p;
	bool was_fixed;
	u64 now, idle;

	if (arg->flags || memchr_inv(arg->reserved, 0, sizeof(arg->reserved)))
		return -EINVAL;
	if (arg->limit > IOPA_LIMIT_MAX)
		return -EINVAL;

	iopa_params_get(&p);
	idle = iopa_measure_cpu_idle_us();
	now = ktime_get_ns();
	iopa_ctx_lock(ctx);
	if (sub->closed) {
		iopa_ctx_unlock(ctx);
		return -ESRCH;
	}
	was_fixed = iopa_ctl_mode(&sub->ctl) == IOPA_CTL_MODE_FIXED;
	/* Unpinned, the limit comes into today's bounds and ceiling. */
	if (!arg->limit && was_fixed)
		iopa_ctl_set_bounds(&sub->ctl, &p, sub->ctl.min, sub->ctl.max);
	iopa_ctl_set_fixed(&sub->ctl, arg->limit);
	/* In a group (unpinning what is not pinned), the group decides. */
	if (!sub->group)
		iopa_limit_apply(sub);
	if (!arg->limit && was_fixed) {
		/* Adapting again: a fresh cycle. */
		iopa_limit_cycle_begin(sub, now, idle);
		iopa_limit_arm(sub, &p);
	}
	iopa_ctx_unlock(ctx);
	/*
	 * A pinned limit is the submitter's own.  Pinned first, then out of
	 * the group: a join racing with this sees it pinned and stays out.
	 */
	if (arg->limit)
		iopa_group_leave(sub);
	return 0;
}

static long iopa_sub_set_limit(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_limit arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	return iopa_limit_set(sub, &arg);
}

static long iopa_sub_get_limit(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_limit arg = { };

	iopa_ctx_lock(sub->ctx);
	arg.limit = sub->limit;
	if (iopa_ctl_mode(&sub->ctl) == IOPA_CTL_MODE_FIXED)
		arg.flags |= IOPA_LIMIT_F_FIXED;
	if (sub->turn_wait_ns)
		arg.flags |= IOPA_LIMIT_F_WAITING;
	iopa_ctx_unlock(sub->ctx);
	return copy_to_user(argp, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/* SET_ADAPT, from the submitter's fd or IOPA_IOC_SUB_ADMIN (-ESRCH: closed). */
static long iopa_limit_set_adapt(struct iopa_submitter *sub,
				 const struct iopa_adapt *a)
{
	struct iopa_adapt arg = *a;
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_ctl_params p;
	int ret;

	if ((arg.flags & ~IOPA_ADAPT_F_MASK) ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
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
	iopa_ctx_lock(ctx);
	if (sub->closed) {
		iopa_ctx_unlock(ctx);
		return -ESRCH;
	}
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
		iopa_limit_apply(sub);
	} else if (!ret) {
		u32 old = sub->limit;

		/* The bounds hold at once in a group too. */
		sub->limit = iopa_group_share_limit(sub, &p, sub->limit);
		iopa_group_note_wait(sub, sub->turn_wait_ns, ktime_get_ns());
		iopa_sub_update(sub);
		if (sub->limit > old)
			iopa_kick_workers(ctx, sub->limit - old);
	}
	iopa_ctx_unlock(ctx);
	/*
	 * Only bracket submitters share a device's budget.  The policy is
	 * set first, so a racing join sees it and stays out.
	 */
	if (!ret && arg.policy != IOPA_POLICY_KEEP &&
	    arg.policy != IOPA_POLICY_BRACKET)
		iopa_group_leave(sub);
	return ret;
}

static long iopa_sub_set_adapt(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_adapt arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	return iopa_limit_set_adapt(sub, &arg);
}

/**
 * iopa_limit_admin() - IOPA_IOC_SUB_ADMIN's command on @sub
 * @sub: the submitter, held by a reference (it may close meanwhile)
 * @a: the command, its reserved fields checked
 *
 * Context: may sleep; the caller has checked CAP_SYS_ADMIN.
 * Return: what the submitter's own SET_LIMIT or SET_ADAPT would, or
 * -ESRCH if it has closed, -EINVAL for an unknown @a->op or an argument
 * of the other command that is not zero.
 */
long iopa_limit_admin(struct iopa_submitter *sub,
		      const struct iopa_sub_admin *a)
{
	switch (a->op) {
	case IOPA_ADMIN_SET_LIMIT:
		if (memchr_inv(&a->adapt, 0, sizeof(a->adapt)))
			return -EINVAL;
		return iopa_limit_set(sub, &a->limit);
	case IOPA_ADMIN_SET_ADAPT:
		if (memchr_inv(&a->limit, 0, sizeof(a->limit)))
			return -EINVAL;
		return iopa_limit_set_adapt(sub, &a->adapt);
	}
	return -EINVAL;
}

/**
 * iopa_limit_ioctl() - the submitter commands about its limit
 * @sub: the submitter
 * @cmd: IOPA_IOC_SET_LIMIT, GET_LIMIT or SET_ADAPT
 * @argp: the user argument
 *
 * Return: 0, a negative errno, or -ENOTTY for another command.
 */
long iopa_limit_ioctl(struct iopa_submitter *sub, unsigned int cmd,
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
	}
	return -ENOTTY;
}

