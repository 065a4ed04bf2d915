// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - block-layer throughput per device.
 *
 * Bytes and requests completed by a block device, counted from the
 * block_rq_complete tracepoint, for the devices a device group needs
 * (group.c: the device's reads by everyone, beside its members' own).
 * Why the tracepoint rather than part_stat deltas: part_stat_read()
 * needs a struct block_device, which a module can only keep by opening
 * the device, while the tracepoint hands over every completed request
 * with its size and device, and nothing has to be held.  The tracepoint
 * is not exported to modules; it is found by name with
 * for_each_kernel_tracepoint().  It fires for blk-mq devices only: I/O
 * to a dm or md device is counted on the devices beneath it, which are
 * not the one the job's file names.
 *
 * What it costs the host.  The probe is attached from load to unload:
 * attaching and detaching it with the groups would patch the tracepoint's
 * jump label while requests complete on other CPUs, which crashed QEMU
 * TCG guests (an int3 of the patching hit in trace_block_rq_complete).
 * With no device counted, a completion anywhere reads one counter and
 * returns.  Otherwise it looks its device up in a small RCU hash (a miss
 * for a device nobody counts), and a counted device's completion adds to
 * per-CPU counters, as blk-stat and blk-iocost keep theirs: no shared
 * cache line is written.  A reader sums the CPUs.
 *
 * Lifetime.  An entry lives while a group holds it: bounded by the
 * groups, one per device with adaptive submitters reading it.  A device
 * whose last group went is forgotten, so a dev_t reused by another
 * device later starts from zero.  Shown in <debugfs>/iopa/devices.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/debugfs.h>
#include <linux/hashtable.h>
#include <linux/percpu.h>
#include <linux/rculist.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracepoint.h>

#include "iopa.h"

/**
 * struct iopa_blkdev_pcpu - one CPU's counts of a device's completions
 * @bytes: bytes of requests completed
 * @reqs: requests completed
 * @read_bytes: bytes of read requests completed
 */
struct iopa_blkdev_pcpu {
	u64			bytes;
	u64			reqs;
	u64			read_bytes;
};

/**
 * struct iopa_blkdev - a counted block device
 * @node: on iopa_blkdevs, RCU (the probe looks it up)
 * @dev: I: the device
 * @users: B: holders (iopa_blkstat_get())
 * @pc: I: the counts, per CPU
 * @rcu: frees it after the probes that may see it
 */
struct iopa_blkdev {
	struct hlist_node	node;
	dev_t			dev;
	unsigned int		users;		/* B */
	struct iopa_blkdev_pcpu __percpu *pc;	/* I */
	struct rcu_head		rcu;
};

/* B: the table and its entries' holders. */
static DEFINE_MUTEX(iopa_blkdevs_lock);
static DEFINE_HASHTABLE(iopa_blkdevs, 6);	/* B (writers), RCU (probe) */
/* Entries in the table: written under B, read by the probe without it. */
static unsigned int iopa_nr_blkdevs;
static struct tracepoint *iopa_rq_complete_tp;

/* Runs with preemption disabled (the tracepoint's RCU read side). */
static void iopa_rq_complete(void *data, struct request *rq,
			     blk_status_t error, unsigned int nr_bytes)
{
	struct iopa_blkdev *d;
	dev_t dev;

	/* Nothing counted (no device group): the common case, cheapest. */
	if (!READ_ONCE(iopa_nr_blkdevs) || !rq->part)
		return;
	dev = rq->part->bd_dev;
	hash_for_each_possible_rcu(iopa_blkdevs, d, node, dev) {
		if (d->dev != dev)
			continue;
		this_cpu_add(d->pc->bytes, nr_bytes);
		this_cpu_inc(d->pc->reqs);
		if (req_op(rq) == REQ_OP_READ)
			this_cpu_add(d->pc->read_bytes, nr_bytes);
		return;
	}
}

static struct iopa_blkdev *iopa_blkdev_lookup(dev_t dev)
{
	struct iopa_blkdev *d;

	lockdep_assert_held(&iopa_blkdevs_lock);
	hash_for_each_possible(iopa_blkdevs, d, node, dev)
		if (d->dev == dev)
			return d;
	return NULL;
}

static void iopa_blkdev_free_rcu(struct rcu_head *rcu)
{
	struct iopa_blkdev *d = container_of(rcu, struct iopa_blkdev, rcu);

	free_percpu(d->pc);
	kfree(d);
}

/**
 * iopa_blkstat_get() - count the block-layer traffic of a device
 * @dev: the device (a job's file's, a group's)
 *
 * Counting starts now (the counts a device had before its last holder
 * went are forgotten).
 *
 * Context: may sleep.
 * Return: the device's entry, to read with iopa_blkstat_read_bytes() and
 * give back with iopa_blkstat_put(); NULL for a device that sees no
 * requests (major 0: tmpfs, memfd...), without the tracepoint, or when
 * out of memory (reads 0).
 */
struct iopa_blkdev *iopa_blkstat_get(dev_t dev)
{
	struct iopa_blkdev *d;

	/* Nothing would count it: no tracepoint, or no requests (major 0). */
	if (!MAJOR(dev) || !iopa_rq_complete_tp)
		return NULL;
	mutex_lock(&iopa_blkdevs_lock);
	d = iopa_blkdev_lookup(dev);
	if (d) {
		d->users++;
		goto out;
	}
	/* Shared by the groups of every user: charged to no one's memcg. */
	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		goto out;
	d->pc = alloc_percpu_gfp(struct iopa_blkdev_pcpu, GFP_KERNEL);
	if (!d->pc) {
		kfree(d);
		d = NULL;
		goto out;
	}
	d->dev = dev;
	d->users = 1;
	hash_add_rcu(iopa_blkdevs, &d->node, dev);
	WRITE_ONCE(iopa_nr_blkdevs, iopa_nr_blkdevs + 1);
out:
	mutex_unlock(&iopa_blkdevs_lock);
	return d;
}

/**
 * iopa_blkstat_put() - a holder of a device's entry is done with it
 * @d: the entry (iopa_blkstat_get()), or NULL
 *
 * The last holder frees it, after the probes that may be adding to it.
 *
 * Context: may sleep.
 */
void iopa_blkstat_put(struct iopa_blkdev *d)
{
	if (!d)
		return;
	mutex_lock(&iopa_blkdevs_lock);
	if (!--d->users) {
		hash_del_rcu(&d->node);
		WRITE_ONCE(iopa_nr_blkdevs, iopa_nr_blkdevs - 1);
		call_rcu(&d->rcu, iopa_blkdev_free_rcu);
	}
	mutex_unlock(&iopa_blkdevs_lock);
}

/* The sums of a device's per-CPU counts. */
static void iopa_blkdev_sum(const struct iopa_blkdev *d,
			    struct iopa_blkdev_pcpu *sum)
{
	int cpu;

	memset(sum, 0, sizeof(*sum));
	for_each_possible_cpu(cpu) {
		const struct iopa_blkdev_pcpu *pc = per_cpu_ptr(d->pc, cpu);

		sum->bytes += READ_ONCE(pc->bytes);
		sum->reqs += READ_ONCE(pc->reqs);
		sum->read_bytes += READ_ONCE(pc->read_bytes);
	}
}

/**
 * iopa_blkstat_read_bytes() - bytes a device has read, for everyone
 * @d: the device's entry (iopa_blkstat_get()), or NULL
 *
 * Reads only: writeback, journal writes and discards come when the
 * kernel issues them, not when a job dirtied the pages, and would read
 * as another program's traffic.
 *
 * Context: any; the caller holds @d.
 * Return: the bytes of the read requests the device completed since its
 * entry was made; 0 for NULL or when the probe could not be attached.
 */
u64 iopa_blkstat_read_bytes(const struct iopa_blkdev *d)
{
	struct iopa_blkdev_pcpu sum;

	if (!d)
		return 0;
	iopa_blkdev_sum(d, &sum);
	return sum.read_bytes;
}

static int iopa_devices_show(struct seq_file *m, void *v)
{
	struct iopa_blkdev_pcpu sum;
	struct iopa_blkdev *d;
	int bkt;

	mutex_lock(&iopa_blkdevs_lock);
	seq_printf(m, "# block_rq_complete %s\n",
		   iopa_rq_complete_tp ? "attached" : "not found");
	seq_puts(m, "dev bytes requests read_bytes holders\n");
	hash_for_each(iopa_blkdevs, bkt, d, node) {
		iopa_blkdev_sum(d, &sum);
		seq_printf(m, "%u:%u %llu %llu %llu %u\n", MAJOR(d->dev),
			   MINOR(d->dev), sum.bytes, sum.reqs, sum.read_bytes,
			   d->users);
	}
	mutex_unlock(&iopa_blkdevs_lock);
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
 * iopa_blkstat_exit() - detach from the tracepoint; no probe runs, and no
 *	entry is left to free, after
 *
 * Every holder (group) is gone by now.
 */
void iopa_blkstat_exit(void)
{
	WARN_ON_ONCE(iopa_nr_blkdevs);
	if (iopa_rq_complete_tp) {
		tracepoint_probe_unregister(iopa_rq_complete_tp,
					    iopa_rq_complete, NULL);
		tracepoint_synchronize_unregister();
	}
	/* The entries' RCU callbacks are this module's code. */
	rcu_barrier();
}
