// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - the ioctl commands of context, submitter and worker fds: the
 * job, worker and context commands (the limit commands are limit.c's,
 * GET_STATE and LIST_SUBMITTERS state.c's, SET_ORDER order.c's).
 *
 * A front-end: each command's argument is copied in and checked here
 * (every bad input answered with its errno before the core is called),
 * the job core (queue.c) does the work, and the result is copied out.
 * Nothing here touches a job; the errors of each command are in
 * Documentation/iopa.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "iopa.h"

static long iopa_get_features(void __user *argp)
{
	struct iopa_features f = {
		.abi_version = IOPA_ABI_VERSION,
		.features = IOPA_FEAT_IOCTL | IOPA_FEAT_POLL |
			    IOPA_FEAT_ADAPTIVE | IOPA_FEAT_URING_CMD |
			    IOPA_FEAT_ORDER | IOPA_FEAT_LIST |
			    IOPA_FEAT_BRACKET | IOPA_FEAT_TIMES |
			    IOPA_FEAT_SHARE | IOPA_FEAT_LEASE |
			    IOPA_FEAT_BORROW | IOPA_FEAT_BATCH |
			    IOPA_FEAT_URING_BATCH | IOPA_FEAT_METRICS |
			    IOPA_FEAT_ADMIN | IOPA_FEAT_TURNS,
		.batch_max = IOPA_BATCH_MAX,
		.limit_max = IOPA_LIMIT_MAX,
		.worker_max_jobs = IOPA_WORKER_MAX_JOBS,
	};

	return copy_to_user(argp, &f, sizeof(f)) ? -EFAULT : 0;
}

static long iopa_stats_out(void __user *argp, const struct iopa_stats *st)
{
	return copy_to_user(argp, st, sizeof(*st)) ? -EFAULT : 0;
}

/* ---- submitter ------------------------------------------------------- */

static long iopa_ioc_submit(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_submit arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~IOPA_SUBMIT_F_MASK) || arg.reserved[0] ||
	    arg.reserved[1])
		return -EINVAL;
	if (!arg.nr || arg.nr > IOPA_BATCH_MAX)
		return -EINVAL;
	return iopa_sub_submit(sub, u64_to_user_ptr(arg.jobs), arg.nr,
			       arg.flags & IOPA_SUBMIT_F_WAIT);
}

static long iopa_ioc_reap(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_reap arg;
	long timeout, n;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~IOPA_REAP_F_MASK) || arg.reserved[0] ||
	    arg.reserved[1])
		return -EINVAL;
	if (!arg.nr || arg.nr > IOPA_BATCH_MAX)
		return -EINVAL;

	timeout = iopa_timeout_jiffies(arg.timeout_ns);
	for (;;) {
		n = iopa_sub_reap(sub, u64_to_user_ptr(arg.cqes), arg.nr);
		if (n)
			return n;
		if (!(arg.flags & IOPA_REAP_F_WAIT))
			return -EAGAIN;
		timeout = wait_event_interruptible_timeout(sub->wq,
							   iopa_sub_has_done(sub),
							   timeout);
		if (timeout < 0)
			return -ERESTARTSYS;
		if (!timeout)
			return -ETIMEDOUT;
	}
}

static long iopa_ioc_cancel(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_cancel arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~IOPA_CANCEL_F_MASK) || arg.reserved0)
		return -EINVAL;
	return iopa_sub_cancel(sub, arg.user_data,
			       arg.flags & IOPA_CANCEL_F_ALL);
}

static long iopa_ioc_set_lease(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_lease arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || arg.reserved0 ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;
	if (arg.lease_ns && (arg.lease_ns < IOPA_LEASE_MIN_NS ||
			     arg.lease_ns > IOPA_LEASE_MAX_NS))
		return -EINVAL;
	iopa_sub_set_lease(sub, arg.lease_ns);
	return 0;
}

static long iopa_ioc_get_lease(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_lease arg = { };

	arg.lease_ns = iopa_sub_lease(sub);
	return copy_to_user(argp, &arg, sizeof(arg)) ? -EFAULT : 0;
}

/**
 * iopa_sub_ioctl() - the job commands of a submitter fd
 * @sub: the submitter
 * @cmd: the command
 * @argp: its argument
 *
 * Return: >= 0 on success, -ENOTTY for a command that is not one of
 * these (the limit and state commands are limit.c's and state.c's), or
 * another negative errno.
 */
long iopa_sub_ioctl(struct iopa_submitter *sub, unsigned int cmd,
		    void __user *argp)
{
	struct iopa_stats st = { };

	switch (cmd) {
	case IOPA_IOC_GET_FEATURES:
		return iopa_get_features(argp);
	case IOPA_IOC_SUBMIT:
		return iopa_ioc_submit(sub, argp);
	case IOPA_IOC_REAP:
		return iopa_ioc_reap(sub, argp);
	case IOPA_IOC_CANCEL:
		return iopa_ioc_cancel(sub, argp);
	case IOPA_IOC_SET_ORDER:
		return iopa_sub_set_order(sub, argp);
	case IOPA_IOC_SET_LEASE:
		return iopa_ioc_set_lease(sub, argp);
	case IOPA_IOC_GET_LEASE:
		return iopa_ioc_get_lease(sub, argp);
	case IOPA_IOC_GET_STATS:
		iopa_sub_stats(sub, &st);
		return iopa_stats_out(argp, &st);
	}
	return -ENOTTY;
}

/* ---- worker ---------------------------------------------------------- */

static long iopa_ioc_complete(struct iopa_worker *w, void __user *argp)
{
	struct iopa_done done;

	if (copy_from_user(&done, argp, sizeof(done)))
		return -EFAULT;
	if (done.flags || done.reserved)
		return -EINVAL;
	return iopa_worker_complete(w, &done);
}

static long iopa_ioc_fetch(struct iopa_worker *w, void __user *argp,
			   bool complete)
{
	struct iopa_fetch __user *ufetch = argp;
	struct iopa_fetch arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~IOPA_FETCH_F_MASK) || arg.reserved0 ||
	    arg.reserved[0] || arg.reserved[1] || arg.done.flags ||
	    arg.done.reserved)
		return -EINVAL;
	if (!complete && (arg.done.job_id || arg.done.res))
		return -EINVAL;
	return iopa_worker_fetch(w, &arg, &ufetch->work, complete);
}

static long iopa_ioc_worker_set_files(struct iopa_worker *w,
				      void __user *argp)
{
	s32 fds[IOPA_WORKER_MAX_FILES];
	struct iopa_worker_files arg;
	struct file *file;
	u32 i;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || arg.reserved[0] || arg.reserved[1] ||
	    arg.nr > IOPA_WORKER_MAX_FILES)
		return -EINVAL;
	if (copy_from_user(fds, u64_to_user_ptr(arg.fds),
			   arg.nr * sizeof(fds[0])))
		return -EFAULT;
	/* Each must be open here now; it is looked up again at each use. */
	for (i = 0; i < arg.nr; i++) {
		file = fds[i] >= 0 ? fget(fds[i]) : NULL;
		if (!file)
			return -EBADF;
		fput(file);
	}
	return iopa_worker_set_files(w, fds, arg.nr);
}

static long iopa_ioc_work_batch(struct iopa_worker *w, void __user *argp)
{
	struct iopa_handout h_stack[IOPA_BATCH_ONSTACK], *h = h_stack;
	struct iopa_done d_stack[IOPA_BATCH_ONSTACK], *done = d_stack;
	struct iopa_batch __user *ubatch = argp;
	struct iopa_batch arg;
	u32 completed = 0;
	long ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	/* Where the count of completions goes must take it, before any. */
	if (put_user(0U, &ubatch->completed))
		return -EFAULT;
	ret = iopa_batch_load(&arg, &done);
	if (ret)
		return ret;
	if (arg.nr_work > IOPA_BATCH_ONSTACK) {
		h = kmalloc_array(arg.nr_work, sizeof(*h), GFP_KERNEL);
		if (!h) {
			ret = -ENOMEM;
			goto out;
		}
	}
	ret = iopa_worker_batch(w, done, arg.nr_done, h, arg.nr_work,
				arg.flags, arg.timeout_ns, &completed);
	/* The count cannot fault unless another thread unmapped it since. */
	if (put_user(completed, &ubatch->completed))
		pr_debug("WORK_BATCH: completed %u, count lost\n", completed);
	if (ret > 0)
		ret = iopa_worker_hand_over(w, h, ret, u64_to_user_ptr(arg.work));
	ret = iopa_batch_result(ret, completed, arg.nr_done);
	if (h != h_stack)
		kfree(h);
out:
	if (done != d_stack)
		kfree(done);
	return ret;
}

/**
 * iopa_worker_ioctl() - the commands of a worker fd
 * @w: the worker
 * @cmd: the command
 * @argp: its argument
 *
 * Return: >= 0 on success, -ENOTTY for a command that is not a worker's,
 * or another negative errno.
 */
long iopa_worker_ioctl(struct iopa_worker *w, unsigned int cmd,
		       void __user *argp)
{
	switch (cmd) {
	case IOPA_IOC_GET_FEATURES:
		return iopa_get_features(argp);
	case IOPA_IOC_FETCH:
		return iopa_ioc_fetch(w, argp, false);
	case IOPA_IOC_COMPLETE:
		return iopa_ioc_complete(w, argp);
	case IOPA_IOC_COMPLETE_AND_FETCH:
		return iopa_ioc_fetch(w, argp, true);
	case IOPA_IOC_WORK_BATCH:
		return iopa_ioc_work_batch(w, argp);
	case IOPA_IOC_WORKER_SET_FILES:
		return iopa_ioc_worker_set_files(w, argp);
	}
	return -ENOTTY;
}

/* ---- context --------------------------------------------------------- */

static long iopa_ioc_sub_create(struct iopa_ctx *ctx, void __user *argp)
{
	struct iopa_submitter_create arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;
	if (arg.limit > IOPA_LIMIT_MAX)
		return -EINVAL;
	return iopa_sub_create(ctx, arg.limit);
}

static long iopa_ioc_worker_create(struct iopa_ctx *ctx, void __user *argp)
{
	struct iopa_worker_create arg;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~IOPA_WORKER_F_MASK) || arg.reserved0 ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;
	return iopa_worker_create(ctx, arg.flags);
}

/**
 * iopa_ctx_ioctl() - the ioctl commands of a context fd
 * @ctx: the context
 * @cmd: the command
 * @argp: its argument
 *
 * Return: >= 0 on success (a new fd for the create commands), -ENOTTY for
 * a command that is not one of these (LIST_SUBMITTERS is state.c's), or
 * another negative errno.
 */
long iopa_ctx_ioctl(struct iopa_ctx *ctx, unsigned int cmd,
		    void __user *argp)
{
	struct iopa_stats st = { };

	switch (cmd) {
	case IOPA_IOC_GET_FEATURES:
		return iopa_get_features(argp);
	case IOPA_IOC_SUBMITTER_CREATE:
		return iopa_ioc_sub_create(ctx, argp);
	case IOPA_IOC_WORKER_CREATE:
		return iopa_ioc_worker_create(ctx, argp);
	case IOPA_IOC_GET_STATS:
		iopa_ctx_stats(ctx, &st);
		return iopa_stats_out(argp, &st);
	}
	return -ENOTTY;
}
