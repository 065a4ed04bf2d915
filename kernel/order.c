// SPDX-License-Identifier: GPL-2.0
/*
 * iopa: location-aware dispatch (IOPA_ORDER_SORTED).
 *
 * On a rotational disk the order in which a submitter's jobs run decides
 * how far the head travels between them.  A submitter in
 * IOPA_ORDER_SORTED has each job located when it is submitted: the
 * physical block of the first byte of its range, from bmap() for a
 * regular file (what FIBMAP reports, in filesystem blocks) or the offset
 * itself for a block device.  Its PENDING jobs are then kept in an rbtree
 * keyed by (location, job id) beside the FIFO list, and dispatch takes the
 * next job at or past the last dispatched location, sweeping up until
 * none is left above, then down (SCAN, the elevator of Denning 1967 and
 * of seed 002).  IOPA_ORDER_CSCAN sweeps up only and starts again from
 * the lowest job (C-SCAN): on a disk, a run of neighbouring files read
 * backwards costs most of a revolution each (measured on the HDD model:
 * 1449 files/s sweeping up, 124 down), which is why Linux's elevators
 * sort one way too.  The sweep never skips a job for long: every pending
 * job is passed within two sweeps, so a submitter's jobs cannot starve
 * one another, and submitters are still served round-robin.
 *
 * Jobs whose file has no mapping (no ->bmap, a hole, inline data, a pipe)
 * and jobs submitted while the submitter was in FIFO order sort as
 * location 0.  Locations of different filesystems are not comparable;
 * a submitter whose jobs span several devices gets one interleaved sweep.
 *
 * Cost: O(log n) per submission and dispatch under ctx->lock, n being at
 * most max_jobs; locating happens outside the lock, in the submitter's
 * context (bmap() may read metadata, and writes back a dirty ext4 file
 * first, as FIBMAP does).
 */

#include <linux/blkdev.h>
#include <linux/fs.h>
#include <linux/rbtree.h>

#include "iopa.h"

/**
 * iopa_order_locate() - the physical location of a job's first byte
 * @file: the job's file
 * @offset: the job's offset
 *
 * Context: process context, may sleep.
 * Return: a block number to sort by; 0 when it has none.
 */
u64 iopa_order_locate(struct file *file, u64 offset)
{
	struct inode *inode = file_inode(file);
	sector_t block;

	if (S_ISBLK(inode->i_mode))
		return offset >> SECTOR_SHIFT;
	if (!S_ISREG(inode->i_mode) || !inode->i_mapping->a_ops->bmap)
		return 0;
	if (offset >= i_size_read(inode))
		offset = 0;
	block = offset >> inode->i_blkbits;
	if (bmap(inode, &block))
		return 0;
	return block;
}

static bool iopa_order_less(struct rb_node *a, const struct rb_node *b)
{
	const struct iopa_kjob *ja = rb_entry(a, struct iopa_kjob, sort_node);
	const struct iopa_kjob *jb = rb_entry(b, struct iopa_kjob, sort_node);

	if (ja->location != jb->location)
		return ja->location < jb->location;
	return ja->id < jb->id;
}

/**
 * iopa_order_pending() - a job became PENDING: index it if sorting
 * @job: the job
 *
 * Context: ctx->lock held.
 */
void iopa_order_pending(struct iopa_kjob *job)
{
	struct iopa_submitter *sub = job->sub;

	lockdep_assert_held(&sub->ctx->lock);
	if (sub->order != IOPA_ORDER_FIFO && RB_EMPTY_NODE(&job->sort_node))
		rb_add(&job->sort_node, &sub->sorted, iopa_order_less);
}

/**
 * iopa_order_leave() - a job leaves PENDING: drop it from the index
 * @job: the job
 *
 * Context: ctx->lock held.
 */
void iopa_order_leave(struct iopa_kjob *job)
{
	lockdep_assert_held(&job->sub->ctx->lock);
	if (!RB_EMPTY_NODE(&job->sort_node)) {
		rb_erase(&job->sort_node, &job->sub->sorted);
		RB_CLEAR_NODE(&job->sort_node);
	}
}

/*
 * The job at or above @pos with the lowest (location, id) if !@down, at
 * or below @pos with the highest if @down; NULL if there is none.
 */
static struct iopa_kjob *iopa_order_find(struct rb_root *root, u64 pos,
					 bool down)
{
	struct rb_node *n = root->rb_node;
	struct iopa_kjob *best = NULL;

	while (n) {
		struct iopa_kjob *j = rb_entry(n, struct iopa_kjob, sort_node);
		bool ok = down ? j->location <= pos : j->location >= pos;

		if (ok)
			best = j;
		if (ok == down)
			n = n->rb_right;
		else
			n = n->rb_left;
	}
	return best;
}

/**
 * iopa_order_next() - the submitter's next job to dispatch
 * @sub: a submitter with a PENDING job
 *
 * Context: ctx->lock held.
 * Return: the oldest PENDING job in FIFO order; in SORTED and CSCAN
 * order the next one on the sweep, whose location becomes the sweep's
 * position.
 */
struct iopa_kjob *iopa_order_next(struct iopa_submitter *sub)
{
	struct iopa_kjob *job;

	lockdep_assert_held(&sub->ctx->lock);
	if (RB_EMPTY_ROOT(&sub->sorted))
		return list_first_entry(&sub->pending, struct iopa_kjob, node);
	job = iopa_order_find(&sub->sorted, sub->sweep_pos, sub->sweep_down);
	if (!job) {
		if (sub->order == IOPA_ORDER_CSCAN)
			sub->sweep_pos = 0;	/* back to the lowest, still up */
		else
			sub->sweep_down = !sub->sweep_down;
		job = iopa_order_find(&sub->sorted, sub->sweep_pos,
				      sub->sweep_down);
	}
	sub->sweep_pos = job->location;
	return job;
}

/**
 * iopa_sub_set_order() - IOPA_IOC_SET_ORDER
 * @sub: the submitter
 * @argp: user pointer to a struct iopa_order
 *
 * Switching to SORTED or CSCAN indexes the jobs already pending (at the
 * locations they were submitted with) and starts a sweep upward from 0;
 * switching to FIFO returns to submission order.
 *
 * Return: 0, -EFAULT or -EINVAL.
 */
long iopa_sub_set_order(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_order arg;
	struct iopa_kjob *job;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    arg.order > IOPA_ORDER_MAX)
		return -EINVAL;

	spin_lock(&ctx->lock);
	if (arg.order != sub->order) {
		WRITE_ONCE(sub->order, arg.order);
		sub->sweep_pos = 0;
		sub->sweep_down = false;
		list_for_each_entry(job, &sub->pending, node) {
			if (arg.order != IOPA_ORDER_FIFO)
				iopa_order_pending(job);
			else
				iopa_order_leave(job);
		}
	}
	spin_unlock(&ctx->lock);
	return 0;
}
