// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - block-layer throughput per device.
 *
 * Bytes and requests completed by each block device that a submitter's
 * job files live on, counted from the block_rq_complete tracepoint.
 * Why the tracepoint rather than part_stat deltas: part_stat_read()
 * needs a struct block_device, which a module can only keep by opening
 * the device, while the tracepoint hands over every completed request
 * with its size and device, and nothing has to be held.  The tracepoint
 * is not exported to modules; it is found by name with
 * for_each_kernel_tracepoint().  It fires for blk-mq devices only: I/O
 * to a dm or md device is counted on the devices beneath it, which are
 * not the one the job's file names.
 *
 * The table is fixed (IOPA_BLK_MAX_DEVS); a device is added when a job
 * on it is submitted and stays until unload.  Shown in
 * <debugfs>/iopa/devices.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "iopa.h"

#define IOPA_BLK_MAX_DEVS	64

/**
 * struct iopa_blkdev - counters of one block device
 * @dev: A: the device, 0 while the slot is free; set once
 * @bytes: A: bytes of requests completed
 * @reqs: A: requests completed
 * @read_bytes: A: bytes of read requests completed
 */
struct iopa_blkdev {
	u32			dev;
	atomic64_t		bytes;
	atomic64_t		reqs;
	atomic64_t		read_bytes;
};

static struct iopa_blkdev iopa_blkdevs[IOPA_BLK_MAX_DEVS];
/* Slots in use, at the front of iopa_blkdevs[]. */
static atomic_t iopa_nr_blkdevs = ATOMIC_INIT(0);
static struct tracepoint *iopa_rq_complete_tp;

static struct iopa_blkdev *iopa_blkdev_find(u32 dev)
{
	int i, n = atomic_read_acquire(&iopa_nr_blkdevs);

	for (i = 0; i < n; i++)
		if (READ_ONCE(iopa_blkdevs[i].dev) == dev)
			return &iopa_blkdevs[i];
	return NULL;
}

static void iopa_rq_complete(void *data, struct request *rq,
			     blk_status_t error, unsigned int nr_bytes)
{
	struct iopa_blkdev *d;

	if (!rq->part || !atomic_read(&iopa_nr_blkdevs))
		return;
	d = iopa_blkdev_find(rq->part->bd_dev);
	if (!d)
		return;
	atomic64_add(nr_bytes, &d->bytes);
	atomic64_inc(&d->reqs);
	if (req_op(rq) == REQ_OP_READ)
		atomic64_add(nr_bytes, &d->read_bytes);
}

/* Serialises adding devices. */
static DEFINE_SPINLOCK(iopa_blkdevs_lock);

/**
 * iopa_blkstat_track() - count the block-layer traffic of a device
 * @dev: the device a job's file lives on
 *
 * Devices beyond the table's size are not counted.
 */
void iopa_blkstat_track(dev_t dev)
{
	int n;

	/* Major 0: anonymous devices (tmpfs, memfd, ...) see no requests. */
	if (!MAJOR(dev) || iopa_blkdev_find(dev))
		return;
	spin_lock(&iopa_blkdevs_lock);
	n = atomic_read(&iopa_nr_blkdevs);
	if (!iopa_blkdev_find(dev) && n < IOPA_BLK_MAX_DEVS) {
		WRITE_ONCE(iopa_blkdevs[n].dev, dev);
		atomic_set_release(&iopa_nr_blkdevs, n + 1);
	}
	spin_unlock(&iopa_blkdevs_lock);
}

/**
 * iopa_blkstat_read_bytes() - bytes a device has read, for everyone
 * @dev: the device
 *
 * Reads only: writeback, journal writes and discards come when the
 * kernel issues them, not when a job dirtied the pages, and would read
 * as another program's traffic.
 *
 * Return: the bytes of the read requests @dev completed since it was
 * first tracked (iopa_blkstat_track()); 0 if it is not tracked or the
 * tracepoint could not be attached.
 */
u64 iopa_blkstat_read_bytes(dev_t dev)
{
	struct iopa_blkdev *d = iopa_blkdev_find(dev);

	return d ? atomic64_read(&d->read_bytes) : 0;
}

static int iopa_devices_show(struct seq_file *m, void *v)
{
	int i, n = atomic_read_acquire(&iopa_nr_blkdevs);

	seq_printf(m, "# block_rq_complete %s\n",
		   iopa_rq_complete_tp ? "attached" : "not found");
	seq_puts(m, "dev bytes requests read_bytes\n");
	for (i = 0; i < n; i++)
		seq_printf(m, "%u:%u %lld %lld %lld\n",
			   MAJOR(iopa_blkdevs[i].dev),
			   MINOR(iopa_blkdevs[i].dev),
			   (long long)atomic64_read(&iopa_blkdevs[i].bytes),
			   (long long)atomic64_read(&iopa_blkdevs[i].reqs),
			   (long long)atomic64_read(&iopa_blkdevs[i].read_bytes));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(iopa_devices);

/**
 * iopa_blkstat_debugfs() - create <debugfs>/iopa/devices
 * @dir: <debugfs>/iopa
 */
void iopa_blkstat_debugfs(struct dentry *dir)
{
	debugfs_create_file("devices", 0400, dir, NULL, &iopa_devices_fops);
}

static void iopa_find_rq_complete(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "block_rq_complete"))
		iopa_rq_complete_tp = tp;
}

/**
 * iopa_blkstat_init() - attach to the block_rq_complete tracepoint
 *
 * Without it (not found, or registration failed) the module works and
 * the device counters stay at zero.
 */
void iopa_blkstat_init(void)
{
	int ret;

	for_each_kernel_tracepoint(iopa_find_rq_complete, NULL);
	if (!iopa_rq_complete_tp) {
		pr_info("no block_rq_complete tracepoint: no device counters\n");
		return;
	}
	ret = tracepoint_probe_register(iopa_rq_complete_tp, iopa_rq_complete,
					NULL);
	if (ret) {
		pr_info("block_rq_complete: %d: no device counters\n", ret);
		iopa_rq_complete_tp = NULL;
	}
}

/**
 * iopa_blkstat_exit() - detach from the tracepoint; no probe runs after
 */
void iopa_blkstat_exit(void)
{
	if (!iopa_rq_complete_tp)
		return;
	tracepoint_probe_unregister(iopa_rq_complete_tp, iopa_rq_complete,
				    NULL);
	tracepoint_synchronize_unregister();
}
