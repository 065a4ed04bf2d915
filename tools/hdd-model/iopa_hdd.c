// SPDX-License-Identifier: GPL-2.0
/*
 * iopa_hdd: a memory-backed blk-mq disk that takes the time a single-actuator
 * hard disk would take.
 *
 * Nothing in the kernel models an HDD: null_blk, brd and scsi_debug charge a
 * fixed (or no) latency per request, so interleaving sequential streams costs
 * them nothing.  This device serves its requests one at a time, in arrival
 * order (FIFO, no reordering: the actuator is the only "hardware queue"), and
 * each takes
 *
 *	service = seek + rotational latency + transfer
 *
 * Seek: Ruemmler and Wilkes, "An introduction to disk drive modeling",
 * IEEE Computer 27(3), 1994.  For a distance of d cylinders (a cylinder is
 * capacity / cylinders bytes; the head rests where the previous request
 * ended):
 *
 *	d = 0:		0
 *	0 < d < d0:	a + b * sqrt(d)
 *	d >= d0:	c + e * d
 *
 * The four constants are derived at load time from three figures a data
 * sheet gives: track-to-track (d = 1), average (one third of the stroke,
 * d = S / 3, S = cylinders - 1) and full stroke (d = S).  The linear part goes
 * through the average and full-stroke points, the square-root part through
 * the track-to-track point, and d0 is where the two meet with the same slope
 * (a smooth curve):
 *
 *	e = 3 (full - avg) / (2 S)		c = (3 avg - full) / 2
 *	sqrt(d0) = 1 + sqrt(1 + (c - t2t) / e)
 *	b = (c + e d0 - t2t) / (sqrt(d0) - 1)	a = t2t - b
 *
 * With the defaults (0.8, 8.5 and 17 ms, 50000 cylinders; a 7200 rpm desktop
 * disk): e = 255 ns/cylinder, c = 4.25 ms, d0 = 117^2 = 13689 cylinders,
 * b = 59.8 us, a = 0.74 ms.
 *
 * Rotation: the platter turns at rpm from time 0 (8.33 ms per revolution at
 * 7200 rpm, 4.17 ms on average).  A track holds what passes under the head in
 * one revolution at the media rate (sectors per track = media rate *
 * revolution / 512: 1627 at 100 MB/s), and a sector's angle is its index
 * within its track over the sectors per track.  After the seek, the request
 * waits until its first sector's angle comes under the head.  Tracks are not
 * tied to cylinders (the toy geometry has fewer bytes per cylinder than per
 * track): seek distance uses cylinders, rotation uses tracks.  A request
 * that starts where the previous one ended (sequential) costs neither seek
 * nor rotation, as if the drive had kept streaming.
 *
 * Transfer: bytes / media rate (MB = 10^6 bytes).  Flushes cost nothing and
 * do not move the head.
 *
 * The model runs on a virtual clock: a request starts at the later of its
 * arrival and the modelled end of the previous one, and completes at start +
 * service.  Host and emulation overheads therefore do not add up to the
 * modelled times as long as they are shorter than the service times, and the
 * angle of the platter is a function of that clock alone.
 *
 * Execution: queue_rq() only queues the request on a FIFO list.  An ordered
 * (max_active = 1) workqueue item takes the head of the list, copies its data
 * (it may sleep: pages are allocated with GFP_NOIO on first write, as brd
 * does, so no atomic allocation can fail a write) and arms an hrtimer at the
 * modelled completion time; the timer callback ends the request and queues
 * the work item again for the next one.  So exactly one request is in
 * service, nothing busy-waits, and a workqueue (rather than a kthread) gives
 * us process context without our own thread life cycle to manage.
 *
 * Data: pages in an xarray indexed by page number, allocated on first write;
 * reads of unwritten sectors return zeros.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blk-mq.h>
#include <linux/blkdev.h>
#include <linux/hrtimer.h>
#include <linux/highmem.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

static unsigned int capacity_mb = 1024;
module_param(capacity_mb, uint, 0444);
MODULE_PARM_DESC(capacity_mb, "Capacity in MiB (default 1024)");

static unsigned int rpm = 7200;
module_param(rpm, uint, 0444);
MODULE_PARM_DESC(rpm, "Spindle speed in revolutions per minute (default 7200)");

static unsigned int media_mbps = 100;
module_param(media_mbps, uint, 0444);
MODULE_PARM_DESC(media_mbps, "Media transfer rate in MB/s, 10^6 bytes (default 100)");

static unsigned int cylinders = 50000;
module_param(cylinders, uint, 0444);
MODULE_PARM_DESC(cylinders, "Number of cylinders (default 50000)");

static unsigned int track_to_track_us = 800;
module_param(track_to_track_us, uint, 0444);
MODULE_PARM_DESC(track_to_track_us, "Seek time over one cylinder in us (default 800)");

static unsigned int avg_seek_us = 8500;
module_param(avg_seek_us, uint, 0444);
MODULE_PARM_DESC(avg_seek_us, "Seek time over a third of the stroke in us (default 8500)");

static unsigned int full_stroke_us = 17000;
module_param(full_stroke_us, uint, 0444);
MODULE_PARM_DESC(full_stroke_us, "Seek time over the full stroke in us (default 17000)");

static unsigned int queue_depth = 64;
module_param(queue_depth, uint, 0444);
MODULE_PARM_DESC(queue_depth, "blk-mq tag depth; requests are still served one at a time (default 64)");

#define IOPA_HDD_FP_SHIFT	16
#define IOPA_HDD_MAX_CYLINDERS	BIT(24)
#define IOPA_HDD_MAX_HW_SECTORS	2048	/* 1 MiB */
#define IOPA_HDD_MAX_SEGMENTS	512

/* Per request (blk-mq PDU). */
struct iopa_hdd_cmd {
	struct list_head node;
	u64 arrival_ns;
};

struct iopa_hdd {
	struct blk_mq_tag_set tag_set;
	struct gendisk *disk;
	struct xarray pages;
	struct workqueue_struct *wq;
	struct work_struct work;
	struct hrtimer timer;

	spinlock_t lock;		/* fifo, busy */
	struct list_head fifo;		/* queued, not yet in service */
	bool busy;			/* the work item or the timer owns the actuator */

	/* Owned by the work item and the timer, which never run together. */
	struct request *cur;		/* in service */
	blk_status_t cur_status;
	u64 free_ns;			/* modelled end of the previous request */
	sector_t next_sector;		/* where the head is: end of the previous one */

	/* Model constants, in ns (slopes scaled by 2^IOPA_HDD_FP_SHIFT). */
	u64 sectors;
	u64 t2t_ns;
	u64 b_ns;			/* a + b sqrt(d) = t2t + b (sqrt(d) - 1) */
	u64 d0;
	u64 c_ns;
	u64 e_fp;
	u64 rev_ns;
	u64 spt;			/* sectors per track */
};

static struct iopa_hdd *iopa_hdd_dev;

/**
 * iopa_hdd_seek_ns() - seek time over a distance (Ruemmler and Wilkes)
 * @hdd: the device
 * @d: seek distance in cylinders
 *
 * Return: the seek time in ns.
 */
static u64 iopa_hdd_seek_ns(const struct iopa_hdd *hdd, u64 d)
{
	u64 sqrt_fp;

	if (!d)
		return 0;
	if (d >= hdd->d0)
		return hdd->c_ns + ((hdd->e_fp * d) >> IOPA_HDD_FP_SHIFT);
	/* sqrt(d) * 2^16; d < 2^24 so d << 32 fits. */
	sqrt_fp = int_sqrt64(d << (2 * IOPA_HDD_FP_SHIFT));
	if (sqrt_fp < (1ULL << IOPA_HDD_FP_SHIFT))
		sqrt_fp = 1ULL << IOPA_HDD_FP_SHIFT;
	return hdd->t2t_ns + ((hdd->b_ns * (sqrt_fp - (1ULL << IOPA_HDD_FP_SHIFT)))
			      >> IOPA_HDD_FP_SHIFT);
}

static u64 iopa_hdd_cylinder(const struct iopa_hdd *hdd, sector_t sector)
{
	return mul_u64_u64_div_u64(sector, cylinders, hdd->sectors);
}

/**
 * iopa_hdd_service_ns() - modelled service time of a request
 * @hdd: the device (head position and model constants)
 * @rq: the request
 * @start_ns: when the actuator starts on it (virtual clock)
 *
 * Moves the head to the end of the request.
 *
 * Return: seek + rotational latency + transfer time, in ns.
 */
static u64 iopa_hdd_service_ns(struct iopa_hdd *hdd, struct request *rq,
			       u64 start_ns)
{
	sector_t sector = blk_rq_pos(rq);
	u64 bytes = blk_rq_bytes(rq);
	u64 seek = 0, rot = 0, xfer, target, pos, in_track;
	u64 from, to;

	if (req_op(rq) == REQ_OP_FLUSH)
		return 0;

	if (sector != hdd->next_sector) {
		from = iopa_hdd_cylinder(hdd, hdd->next_sector);
		to = iopa_hdd_cylinder(hdd, sector);
		seek = iopa_hdd_seek_ns(hdd, from > to ? from - to : to - from);

		/* Wait for the first sector to come under the head. */
		div64_u64_rem(sector, hdd->spt, &in_track);
		target = div64_u64(in_track * hdd->rev_ns, hdd->spt);
		div64_u64_rem(start_ns + seek, hdd->rev_ns, &pos);
		rot = target >= pos ? target - pos : target + hdd->rev_ns - pos;
	}
	xfer = div_u64(bytes * 1000, media_mbps);
	hdd->next_sector = sector + (bytes >> SECTOR_SHIFT);
	return seek + rot + xfer;
}

/**
 * iopa_hdd_copy() - move a request's data to or from the backing pages
 * @hdd: the device
 * @rq: a read or write request
 *
 * Runs in process context: pages are allocated (GFP_NOIO) on first write.
 *
 * Return: BLK_STS_OK, BLK_STS_IOERR if a page could not be allocated.
 */
static blk_status_t iopa_hdd_copy(struct iopa_hdd *hdd, struct request *rq)
{
	bool write = op_is_write(req_op(rq));
	u64 pos = (u64)blk_rq_pos(rq) << SECTOR_SHIFT;
	struct req_iterator iter;
	struct bio_vec bv;

	rq_for_each_segment(bv, rq, iter) {
		unsigned int done = 0;

		while (done < bv.bv_len) {
			unsigned long idx = pos >> PAGE_SHIFT;
			unsigned int off = offset_in_page(pos);
			unsigned int n = min_t(unsigned int, bv.bv_len - done,
					       PAGE_SIZE - off);
			struct page *page = xa_load(&hdd->pages, idx);
			void *buf, *mem;

			if (!page && write) {
				void *old;

				page = alloc_page(GFP_NOIO | __GFP_ZERO);
				if (!page)
					return BLK_STS_IOERR;
				old = xa_store(&hdd->pages, idx, page, GFP_NOIO);
				if (xa_is_err(old)) {
					__free_page(page);
					return BLK_STS_IOERR;
				}
			}

			buf = kmap_local_page(bv.bv_page);
			if (write) {
				mem = kmap_local_page(page);
				memcpy(mem + off, buf + bv.bv_offset + done, n);
				kunmap_local(mem);
			} else if (page) {
				mem = kmap_local_page(page);
				memcpy(buf + bv.bv_offset + done, mem + off, n);
				kunmap_local(mem);
			} else {
				memset(buf + bv.bv_offset + done, 0, n);
			}
			kunmap_local(buf);
			if (!write)
				flush_dcache_page(bv.bv_page);
			done += n;
			pos += n;
		}
	}
	return BLK_STS_OK;
}

/* Take the head of the FIFO into service; one request at a time. */
static void iopa_hdd_work(struct work_struct *work)
{
	struct iopa_hdd *hdd = container_of(work, struct iopa_hdd, work);
	struct iopa_hdd_cmd *cmd;
	struct request *rq;
	u64 start, done;

	spin_lock_irq(&hdd->lock);
	cmd = list_first_entry_or_null(&hdd->fifo, struct iopa_hdd_cmd, node);
	if (!cmd) {
		hdd->busy = false;
		spin_unlock_irq(&hdd->lock);
		return;
	}
	list_del_init(&cmd->node);
	spin_unlock_irq(&hdd->lock);

	rq = blk_mq_rq_from_pdu(cmd);
	switch (req_op(rq)) {
	case REQ_OP_READ:
	case REQ_OP_WRITE:
		hdd->cur_status = iopa_hdd_copy(hdd, rq);
		break;
	case REQ_OP_FLUSH:
		hdd->cur_status = BLK_STS_OK;
		break;
	default:
		hdd->cur_status = BLK_STS_NOTSUPP;
		break;
	}

	start = max(cmd->arrival_ns, hdd->free_ns);
	done = start + iopa_hdd_service_ns(hdd, rq, start);
	hdd->free_ns = done;
	hdd->cur = rq;
	/* Fires at once if emulation made us late: the model catches up. */
	hrtimer_start(&hdd->timer, ns_to_ktime(done), HRTIMER_MODE_ABS);
}

static enum hrtimer_restart iopa_hdd_timer_fn(struct hrtimer *timer)
{
	struct iopa_hdd *hdd = container_of(timer, struct iopa_hdd, timer);
	struct request *rq = hdd->cur;

	hdd->cur = NULL;
	blk_mq_end_request(rq, hdd->cur_status);
	/* Still busy: the work item serves the next one or goes idle. */
	queue_work(hdd->wq, &hdd->work);
	return HRTIMER_NORESTART;
}

static blk_status_t iopa_hdd_queue_rq(struct blk_mq_hw_ctx *hctx,
				      const struct blk_mq_queue_data *bd)
{
	struct iopa_hdd *hdd = hctx->queue->queuedata;
	struct request *rq = bd->rq;
	struct iopa_hdd_cmd *cmd = blk_mq_rq_to_pdu(rq);
	unsigned long flags;
	bool kick = false;

	blk_mq_start_request(rq);
	cmd->arrival_ns = ktime_get_ns();

	spin_lock_irqsave(&hdd->lock, flags);
	list_add_tail(&cmd->node, &hdd->fifo);
	if (!hdd->busy) {
		hdd->busy = true;
		kick = true;
	}
	spin_unlock_irqrestore(&hdd->lock, flags);
	if (kick)
		queue_work(hdd->wq, &hdd->work);
	return BLK_STS_OK;
}

static const struct blk_mq_ops iopa_hdd_mq_ops = {
	.queue_rq = iopa_hdd_queue_rq,
};

static const struct block_device_operations iopa_hdd_fops = {
	.owner = THIS_MODULE,
};

/**
 * iopa_hdd_model_init() - derive the model constants from the parameters
 * @hdd: the device
 *
 * Return: 0, or -EINVAL if the parameters cannot describe a disk.
 */
static int iopa_hdd_model_init(struct iopa_hdd *hdd)
{
	u64 t2t = (u64)track_to_track_us * NSEC_PER_USEC;
	u64 avg = (u64)avg_seek_us * NSEC_PER_USEC;
	u64 full = (u64)full_stroke_us * NSEC_PER_USEC;
	u64 stroke, q, s;

	if (!capacity_mb || !rpm || !media_mbps || !queue_depth ||
	    cylinders < 4 || cylinders > IOPA_HDD_MAX_CYLINDERS) {
		pr_err("capacity_mb, rpm, media_mbps, queue_depth must be > 0 and cylinders in [4, %lu]\n",
		       IOPA_HDD_MAX_CYLINDERS);
		return -EINVAL;
	}
	/* The linear part must start above the track-to-track time. */
	if (!t2t || avg <= t2t || full <= avg || 3 * avg - full <= 2 * t2t) {
		pr_err("need 0 < track_to_track_us < avg_seek_us < full_stroke_us and 3 avg - full > 2 track_to_track\n");
		return -EINVAL;
	}

	hdd->sectors = (u64)capacity_mb << (20 - SECTOR_SHIFT);
	if (cylinders > hdd->sectors) {
		pr_err("more cylinders than sectors\n");
		return -EINVAL;
	}
	stroke = cylinders - 1;
	hdd->t2t_ns = t2t;
	hdd->c_ns = (3 * avg - full) / 2;
	hdd->e_fp = div64_u64(3 * (full - avg) << IOPA_HDD_FP_SHIFT, 2 * stroke);
	if (!hdd->e_fp)
		hdd->e_fp = 1;
	/* sqrt(d0) = 1 + sqrt(1 + (c - t2t) / e): same slope at d0. */
	q = div64_u64((hdd->c_ns - t2t) << IOPA_HDD_FP_SHIFT, hdd->e_fp);
	s = 1 + int_sqrt64(1 + q);
	hdd->d0 = s * s;
	hdd->b_ns = div64_u64(hdd->c_ns +
			      ((hdd->e_fp * hdd->d0) >> IOPA_HDD_FP_SHIFT) - t2t,
			      s - 1);

	hdd->rev_ns = div_u64(60ULL * NSEC_PER_SEC, rpm);
	hdd->spt = div64_u64((u64)media_mbps * hdd->rev_ns, 512000);
	if (!hdd->spt)
		hdd->spt = 1;

	pr_info("seek: d<%llu: %llu + %llu*sqrt(d) ns; else %llu + %llu.%03llu*d ns; t(1)=%llu t(S/3)=%llu t(S)=%llu ns\n",
		hdd->d0, t2t - hdd->b_ns, hdd->b_ns, hdd->c_ns,
		hdd->e_fp >> IOPA_HDD_FP_SHIFT,
		((hdd->e_fp & ((1ULL << IOPA_HDD_FP_SHIFT) - 1)) * 1000)
			>> IOPA_HDD_FP_SHIFT,
		iopa_hdd_seek_ns(hdd, 1), iopa_hdd_seek_ns(hdd, stroke / 3),
		iopa_hdd_seek_ns(hdd, stroke));
	pr_info("%u MiB, %u cylinders, %u rpm (%llu ns/rev), %u MB/s, %llu sectors/track, queue depth %u\n",
		capacity_mb, cylinders, rpm, hdd->rev_ns, media_mbps, hdd->spt,
		queue_depth);
	return 0;
}

static void iopa_hdd_free_pages(struct iopa_hdd *hdd)
{
	struct page *page;
	unsigned long idx;

	xa_for_each(&hdd->pages, idx, page)
		__free_page(page);
	xa_destroy(&hdd->pages);
}

static int __init iopa_hdd_init(void)
{
#ifdef IOPA_HDD_HAVE_ALLOC_DISK_LIM
	struct queue_limits lim = {
		.logical_block_size = SECTOR_SIZE,
		.physical_block_size = PAGE_SIZE,
		.max_hw_sectors = IOPA_HDD_MAX_HW_SECTORS,
		.max_segments = IOPA_HDD_MAX_SEGMENTS,
#ifdef IOPA_HDD_HAVE_BLK_FEAT_ROTATIONAL
		.features = BLK_FEAT_ROTATIONAL,
#endif
	};
#endif
	struct iopa_hdd *hdd;
	struct gendisk *disk;
	int ret;

	hdd = kzalloc(sizeof(*hdd), GFP_KERNEL);
	if (!hdd)
		return -ENOMEM;
	ret = iopa_hdd_model_init(hdd);
	if (ret)
		goto out_free;

	xa_init(&hdd->pages);
	spin_lock_init(&hdd->lock);
	INIT_LIST_HEAD(&hdd->fifo);
	INIT_WORK(&hdd->work, iopa_hdd_work);
	hrtimer_init(&hdd->timer, CLOCK_MONOTONIC, HRTIMER_MODE_ABS);
	hdd->timer.function = iopa_hdd_timer_fn;
	/* Ordered: one request in service; reclaim may write to us. */
	hdd->wq = alloc_ordered_workqueue("iopa_hdd", WQ_MEM_RECLAIM | WQ_HIGHPRI);
	if (!hdd->wq) {
		ret = -ENOMEM;
		goto out_free;
	}

	hdd->tag_set.ops = &iopa_hdd_mq_ops;
	hdd->tag_set.nr_hw_queues = 1;
	hdd->tag_set.queue_depth = queue_depth;
	hdd->tag_set.numa_node = NUMA_NO_NODE;
	hdd->tag_set.cmd_size = sizeof(struct iopa_hdd_cmd);
	hdd->tag_set.flags = BLK_MQ_F_SHOULD_MERGE;
	hdd->tag_set.driver_data = hdd;
	ret = blk_mq_alloc_tag_set(&hdd->tag_set);
	if (ret)
		goto out_wq;

#ifdef IOPA_HDD_HAVE_ALLOC_DISK_LIM
	disk = blk_mq_alloc_disk(&hdd->tag_set, &lim, hdd);
#else
	disk = blk_mq_alloc_disk(&hdd->tag_set, hdd);
#endif
	if (IS_ERR(disk)) {
		ret = PTR_ERR(disk);
		goto out_tags;
	}
#ifndef IOPA_HDD_HAVE_ALLOC_DISK_LIM
	blk_queue_logical_block_size(disk->queue, SECTOR_SIZE);
	blk_queue_physical_block_size(disk->queue, PAGE_SIZE);
	blk_queue_max_hw_sectors(disk->queue, IOPA_HDD_MAX_HW_SECTORS);
	blk_queue_max_segments(disk->queue, IOPA_HDD_MAX_SEGMENTS);
#endif
#ifndef IOPA_HDD_HAVE_BLK_FEAT_ROTATIONAL
	blk_queue_flag_clear(QUEUE_FLAG_NONROT, disk->queue);
#endif
	/* major 0: add_disk() picks a dynamic dev_t (no partitions). */
	disk->fops = &iopa_hdd_fops;
	disk->private_data = hdd;
	strscpy(disk->disk_name, "iopahdd0", DISK_NAME_LEN);
	set_capacity(disk, hdd->sectors);
	hdd->disk = disk;

	ret = add_disk(disk);
	if (ret)
		goto out_disk;
	iopa_hdd_dev = hdd;
	return 0;

out_disk:
	put_disk(disk);
out_tags:
	blk_mq_free_tag_set(&hdd->tag_set);
out_wq:
	destroy_workqueue(hdd->wq);
out_free:
	kfree(hdd);
	return ret;
}

static void __exit iopa_hdd_exit(void)
{
	struct iopa_hdd *hdd = iopa_hdd_dev;

	/* Drains the queue: no request is queued or in service after it. */
	del_gendisk(hdd->disk);
	put_disk(hdd->disk);
	blk_mq_free_tag_set(&hdd->tag_set);
	hrtimer_cancel(&hdd->timer);
	destroy_workqueue(hdd->wq);
	iopa_hdd_free_pages(hdd);
	kfree(hdd);
}

module_init(iopa_hdd_init);
module_exit(iopa_hdd_exit);

MODULE_DESCRIPTION("Memory-backed block device with the timing of a single-actuator hard disk");
MODULE_AUTHOR("iopa");
MODULE_LICENSE("GPL");
