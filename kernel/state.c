// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - what the module shows of its submitters: IOPA_IOC_GET_STATE,
 * IOPA_IOC_LIST_SUBMITTERS and <debugfs>/iopa/.
 *
 * A front-end: it reads the job core's contexts and the limit layer's
 * state, under each context's lock, and is called by nothing but main.c.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/capability.h>
#include <linux/debugfs.h>
#include <linux/mm.h>
#include <linux/pid.h>
#include <linux/seq_file.h>

#include "iopa.h"

static struct dentry *iopa_debugfs_dir;

static void iopa_state_fill(struct iopa_submitter *sub, struct iopa_state *st,
			    const struct iopa_ctl_params *p)
	__must_hold(&sub->ctx->lock)
{
	u32 i;

	lockdep_assert_held(&sub->ctx->lock);
	st->limit = sub->limit;
	st->mode = iopa_ctl_mode(&sub->ctl);
	st->policy = iopa_ctl_policy(&sub->ctl) + 1;
	if (st->mode == IOPA_CTL_MODE_FIXED)
		st->flags |= IOPA_LIMIT_F_FIXED;
	if (sub->turn_wait_ns)
		st->flags |= IOPA_LIMIT_F_WAITING;
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

/* The cumulative counters; @st is the submitter's state, just filled. */
static void iopa_metrics_fill(struct iopa_submitter *sub,
			      struct iopa_metrics *m,
			      const struct iopa_state *st)
	__must_hold(&sub->ctx->lock)
{
	lockdep_assert_held(&sub->ctx->lock);
	BUILD_BUG_ON(ARRAY_SIZE(m->wait_hist) != ARRAY_SIZE(sub->m.wait_hist));
	m->cgroup_id = sub->cgroup_id;
	m->io_bytes = sub->m.io_bytes;
	m->failed = sub->m.failed;
	m->wait_us = sub->m.wait_us;
	m->svc_us = sub->m.svc_us;
	memcpy(m->wait_hist, sub->m.wait_hist, sizeof(m->wait_hist));
	memcpy(m->svc_hist, sub->m.svc_hist, sizeof(m->svc_hist));
	/* A member of a device group: the group's controller's, as @st. */
	m->knee = st->budget ? sub->group_knee : iopa_ctl_knee(&sub->ctl);
	m->turn_waits = sub->m.turn_waits;
	m->turn_wait_us = sub->m.turn_wait_us;
	if (sub->turn_wait_ns) {
		u64 now = ktime_get_ns();

		if (now > sub->turn_wait_ns)
			m->turn_wait_us += div_u64(now - sub->turn_wait_ns,
						   NSEC_PER_USEC);
	}
}

/*
 * GET_STATE into the caller's struct of @size bytes, at least this
 * module's: a caller built for a later ABI, whose struct is larger, gets
 * this module's part and zeros after it.
 */
static long iopa_sub_get_state(struct iopa_submitter *sub, void __user *argp,
			       size_t size)
{
	struct iopa_ctl_params p;
	struct iopa_state st = { };

	iopa_params_get(&p);
	iopa_ctx_lock(sub->ctx);
	iopa_state_fill(sub, &st, &p);
	iopa_ctx_unlock(sub->ctx);
	if (copy_to_user(argp, &st, sizeof(st)) ||
	    clear_user(argp + sizeof(st), size - sizeof(st)))
		return -EFAULT;
	return 0;
}

static void iopa_sub_info_fill(struct iopa_submitter *sub,
			       struct iopa_sub_info *info,
			       const struct iopa_ctl_params *p)
	__must_hold(&sub->ctx->lock)
{
	struct iopa_ctx *ctx = sub->ctx;

	lockdep_assert_held(&ctx->lock);
	info->ctx_id = ctx->id;
	info->sub_id = sub->id;
	/* Its number once it exited may be another process's by now. */
	info->pid = pid_has_task(sub->pid, PIDTYPE_TGID) ? pid_vnr(sub->pid) : 0;
	info->ctx_workers = ctx->nr_workers;
	info->ctx_waiting = ctx->nr_waiting;
	strscpy(info->comm, sub->comm, sizeof(info->comm));
	iopa_state_fill(sub, &info->state, p);
	iopa_stats_fill(&info->stats, sub->stat, sub->nr);
	iopa_metrics_fill(sub, &info->metrics, &info->state);
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

	iopa_ctx_lock(ctx);
	list_for_each_entry(sub, &ctx->subs, ctx_node) {
		if (*filled < nr)
			iopa_sub_info_fill(sub, &info[(*filled)++], p);
		(*total)++;
	}
	iopa_ctx_unlock(ctx);
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
	BUILD_BUG_ON(offsetof(struct iopa_sub_info, metrics) !=
		     IOPA_SUB_INFO_SIZE_V1);
	BUILD_BUG_ON(sizeof(*info) != IOPA_SUB_INFO_SIZE_V2);
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
 * iopa_ctx_sub_admin() - IOPA_IOC_SUB_ADMIN
 * @argp: the user's struct iopa_sub_admin
 *
 * Root's command on any open submitter, named by its ids as the listing
 * names it: what its own fd's SET_LIMIT or SET_ADAPT would do.  Needs
 * CAP_SYS_ADMIN, as listing every context does.  The submitter is held
 * by a reference, not its fd: it may close meanwhile (-ESRCH then).
 *
 * Return: 0, -EFAULT, -EINVAL, -EPERM, -ESRCH, or an errno of the command.
 */
long iopa_ctx_sub_admin(void __user *argp)
{
	struct iopa_submitter *sub;
	struct iopa_sub_admin a;
	long ret;

	/* First: the answer to anyone else never depends on the argument. */
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&a, argp, sizeof(a)))
		return -EFAULT;
	if (a.reserved0 || memchr_inv(a.reserved, 0, sizeof(a.reserved)))
		return -EINVAL;
	sub = iopa_sub_find_get(a.ctx_id, a.sub_id);
	if (!sub)
		return -ESRCH;
	ret = iopa_limit_admin(sub, &a);
	iopa_sub_put(sub);
	return ret;
}

/**
 * iopa_state_ioctl() - the state commands of a submitter fd
 * @sub: the submitter
 * @cmd: IOPA_IOC_GET_STATE, of any size from IOPA_STATE_SIZE_V1 (the
 *	size the ioctl number carries: a later ABI's larger struct)
 * @argp: the user argument
 *
 * Return: 0, a negative errno (-EINVAL: a size below IOPA_STATE_SIZE_V1),
 * or -ENOTTY for another command.
 */
long iopa_state_ioctl(struct iopa_submitter *sub, unsigned int cmd,
		      void __user *argp)
{
	if (_IOC_TYPE(cmd) == _IOC_TYPE(IOPA_IOC_GET_STATE) &&
	    _IOC_NR(cmd) == _IOC_NR(IOPA_IOC_GET_STATE) &&
	    _IOC_DIR(cmd) == _IOC_READ) {
		BUILD_BUG_ON(sizeof(struct iopa_state) != IOPA_STATE_SIZE_V1);
		if (_IOC_SIZE(cmd) < IOPA_STATE_SIZE_V1)
			return -EINVAL;
		return iopa_sub_get_state(sub, argp, _IOC_SIZE(cmd));
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
		iopa_ctx_lock(ctx);
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
		iopa_ctx_unlock(ctx);
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
