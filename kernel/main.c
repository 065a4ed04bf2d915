// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - a kernel-resident adaptive work queue for file-processing jobs.
 *
 * This file: the module, the /dev/iopa misc device and the operations of
 * every file the module makes (contexts, submitters, workers), which
 * hand each command to the file that owns it:
 *
 *   params.c   settings and totals         sysfs.c  their sysfs files
 *   trace.c    trace events                ctl.c    the limit policies
 *   share.c    a budget split over time    blkstat.c per-device block counters
 *   user.c     what users hold
 *   knee.c     each device's remembered knee
 *   order.c    dispatch order              runq.c   run queue, wakeups
 *   measure.c  what a job cost             group.c  device groups
 *   limit.c    per-submitter cycles, limit commands
 *   queue.c    the job core: contexts, submitters, workers, jobs
 *   ioctl.c    the ioctl commands          uring.c  the io_uring commands
 *   state.c    GET_STATE, listing, debugfs
 *
 * Each calls only files of lower layers: ctl, share < params, trace, blkstat,
 * knee, user, order < runq, measure < group < limit < queue < ioctl, uring,
 * state, sysfs < main (tools/check/kernel-layers.py checks it on the
 * objects).  Each
 * open of /dev/iopa is a context (queue.c); the ABI is in
 * include/uapi/linux/iopa.h and Documentation/iopa.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/fs.h>
#ifdef IOPA_HAVE_IO_URING_CMD_H
#include <linux/io_uring/cmd.h>
#else
#include <linux/io_uring.h>
#endif
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "iopa.h"

/* ---- submitter files ------------------------------------------------ */

static long iopa_sub_file_ioctl(struct file *file, unsigned int cmd,
				unsigned long arg)
{
	struct iopa_submitter *sub = file->private_data;
	void __user *argp = (void __user *)arg;
	long ret;

	ret = iopa_sub_ioctl(sub, cmd, argp);
	if (ret == -ENOTTY)
		ret = iopa_limit_ioctl(sub, cmd, argp);
	if (ret == -ENOTTY)
		ret = iopa_state_ioctl(sub, cmd, argp);
	return ret;
}

static __poll_t iopa_sub_file_poll(struct file *file, poll_table *wait)
{
	return iopa_sub_poll(file->private_data, file, wait);
}

static int iopa_sub_file_uring_cmd(struct io_uring_cmd *cmd,
				   unsigned int issue_flags)
{
	return iopa_uring_sub_cmd(cmd->file->private_data, cmd, issue_flags);
}

static int iopa_sub_file_release(struct inode *inode, struct file *file)
{
	iopa_sub_close(file->private_data);
	return 0;
}

static const struct file_operations iopa_sub_fops = {
	.owner		= THIS_MODULE,
	.release	= iopa_sub_file_release,
	.poll		= iopa_sub_file_poll,
	.uring_cmd	= iopa_sub_file_uring_cmd,
	.unlocked_ioctl	= iopa_sub_file_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* ---- worker files --------------------------------------------------- */

static long iopa_worker_file_ioctl(struct file *file, unsigned int cmd,
				   unsigned long arg)
{
	return iopa_worker_ioctl(file->private_data, cmd,
				 (void __user *)arg);
}

static int iopa_worker_file_uring_cmd(struct io_uring_cmd *cmd,
				      unsigned int issue_flags)
{
	return iopa_uring_worker_cmd(cmd->file->private_data, cmd,
				     issue_flags);
}

static int iopa_worker_file_release(struct inode *inode, struct file *file)
{
	iopa_worker_close(file->private_data);
	return 0;
}

static const struct file_operations iopa_worker_fops = {
	.owner		= THIS_MODULE,
	.release	= iopa_worker_file_release,
	.uring_cmd	= iopa_worker_file_uring_cmd,
	.unlocked_ioctl	= iopa_worker_file_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

/* ---- /dev/iopa: contexts ------------------------------------------- */

static int iopa_dev_open(struct inode *inode, struct file *file)
{
	struct iopa_ctx *ctx = iopa_ctx_alloc();

	if (!ctx)
		return -ENOMEM;
	file->private_data = ctx;
	return 0;
}

static int iopa_dev_release(struct inode *inode, struct file *file)
{
	iopa_ctx_put(file->private_data);
	return 0;
}

static long iopa_dev_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	if (cmd == IOPA_IOC_LIST_SUBMITTERS)
		return iopa_ctx_list_subs(file->private_data, argp);
	if (cmd == IOPA_IOC_SUB_ADMIN)
		return iopa_ctx_sub_admin(argp);
	return iopa_ctx_ioctl(file->private_data, cmd, argp);
}

static const struct file_operations iopa_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= iopa_dev_open,
	.release	= iopa_dev_release,
	.unlocked_ioctl	= iopa_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice iopa_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= IOPA_DEV_NAME,
	.fops		= &iopa_dev_fops,
	.groups		= iopa_attr_groups,
};

static void __init iopa_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct iopa_features) != 64);
	BUILD_BUG_ON(sizeof(struct iopa_submitter_create) != 32);
	BUILD_BUG_ON(sizeof(struct iopa_worker_create) != 32);
	BUILD_BUG_ON(sizeof(struct iopa_job) != 40);
	BUILD_BUG_ON(sizeof(struct iopa_submit) != 32);
	BUILD_BUG_ON(sizeof(struct iopa_cqe) != 24);
	BUILD_BUG_ON(sizeof(struct iopa_reap) != 40);
	BUILD_BUG_ON(sizeof(struct iopa_cancel) != 16);
	BUILD_BUG_ON(sizeof(struct iopa_limit) != 32);
	BUILD_BUG_ON(sizeof(struct iopa_done) != 24);
	BUILD_BUG_ON(sizeof(struct iopa_work) != 40);
	BUILD_BUG_ON(sizeof(struct iopa_fetch) != 96);
	BUILD_BUG_ON(offsetof(struct iopa_fetch, work) != 40);
	BUILD_BUG_ON(sizeof(struct iopa_stats) != 112);
	BUILD_BUG_ON(sizeof(struct iopa_adapt) != 32);
	BUILD_BUG_ON(sizeof(struct iopa_sub_admin) != 96);
	BUILD_BUG_ON(sizeof(struct iopa_state) != 128);
}

static int __init iopa_init(void)
{
	int ret;

	iopa_check_abi();
	iopa_params_init();
	ret = iopa_queue_init(&iopa_sub_fops, &iopa_worker_fops);
	if (ret)
		return ret;
	iopa_blkstat_init();
	iopa_debugfs_init();
	ret = misc_register(&iopa_misc);
	if (ret)
		goto out_debugfs_exit;
	pr_info("version %s loaded, ABI version %d\n", IOPA_VERSION,
		IOPA_ABI_VERSION);
	return 0;

out_debugfs_exit:
	iopa_debugfs_exit();
	iopa_blkstat_exit();
	iopa_queue_exit();
	return ret;
}

static void __exit iopa_exit(void)
{
	misc_deregister(&iopa_misc);
	iopa_uring_exit();
	iopa_debugfs_exit();
	iopa_blkstat_exit();
	iopa_queue_exit();
	iopa_user_exit();
}

module_init(iopa_init);
module_exit(iopa_exit);

MODULE_DESCRIPTION("iopa: adaptive work queue for file-processing jobs");
MODULE_LICENSE("GPL");
MODULE_VERSION(IOPA_VERSION);
