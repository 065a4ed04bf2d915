// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - a kernel-resident adaptive work queue for file-processing jobs.
 *
 * This file: the module and the /dev/iopa misc device.  Each open of
 * /dev/iopa is a context (see queue.c); the ABI is in
 * include/uapi/linux/iopa.h and Documentation/iopa.rst.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/build_bug.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

#include "iopa.h"

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
	return iopa_ctx_ioctl(file->private_data, cmd, arg);
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
	BUILD_BUG_ON(sizeof(struct iopa_state) != 128);
}

static int __init iopa_init(void)
{
	int ret;

	iopa_check_abi();
	iopa_params_init();
	ret = iopa_queue_init();
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
	iopa_pin_exit();
}

module_init(iopa_init);
module_exit(iopa_exit);

MODULE_DESCRIPTION("iopa: adaptive work queue for file-processing jobs");
MODULE_LICENSE("GPL");
MODULE_VERSION(IOPA_VERSION);
