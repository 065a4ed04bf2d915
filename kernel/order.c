// SPDX-License-Identifier: GPL-2.0
/*
 * iopa: location-aware dispatch (IOPA_ORDER_SORTED).
 *
 * On a rotational disk the order in which a submitter's jobs run decides
 * how far the head travels between them.  A submitter in
 * IOPA_ORDER_SORTED has each job located when it is submitted: the offset
 * itself for a block device; for a regular file the physical block of
 * the first byte of its range, from bmap() (what FIBMAP reports, in
 * filesystem blocks), for a submitter FIBMAP would serve (CAP_SYS_RAWIO),
 * else the file's inode number (see iopa_order_locate()).  Its PENDING
 * jobs are then kept in an rbtree keyed by (location, job id) beside the
 * FIFO list, and dispatch takes the next job at or past the last
 * dispatched location, sweeping up until
 * none is left above, then down (SCAN, the elevator of Denning 1967 and
 * of seed 002).  IOPA_ORDER_CSCAN sweeps up only and starts again from
 * the lowest job (C-SCAN): on a disk, a run of neighbouring files read
 * backwards costs most of a revolution each (measured on the HDD model:
 * 1449 files/s sweeping up, 124 down), which is why Linux's elevators
 * sort one way too.  At each location the sweep serves, oldest first,
 * the jobs that were pending when it got there; jobs submitted to that
 * location meanwhile wait for the next pass (as the "N" of N-step SCAN),
 * or a stream of jobs at one location would hold the sweep there.  So
 * every pending job is passed within two sweeps, a submitter's jobs
 * cannot starve one another, and submitters are still served
 * round-robin.
 *
 * Jobs whose file has no block there (a hole, inline data, dirty pages:
 * see iopa_order_locate()) and jobs submitted while the submitter was in
 * FIFO order sort as location 0.  Locations of different filesystems are
 * not comparable; a submitter whose jobs span several devices gets one
 * interleaved sweep.
 *
 * Cost: O(log n) per submission and dispatch under ctx->lock, n being at
 * most max_jobs; locating happens outside the lock, in the submitter's
 * context (bmap() may read metadata: an io_uring SUBMIT that may call it
 * is punted out of the non-blocking issue, iopa_order_may_block()).
 */

#include <linux/blkdev.h>
#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/pagemap.h>
#include <linux/rbtree.h>

#include "iopa.h"

/* bmap() is for those FIBMAP serves; no audit record for the others. */
static bool iopa_order_may_bmap(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_SYS_RAWIO);
}

/**
 * iopa_order_may_block() - locating @sub's next job may sleep
 * @sub: the submitter
 *
 * Return: true if a job submitted now would be located with bmap() (the
 * submitter sorts, and the caller may call it), which may read metadata.
 */
bool iopa_order_may_block(const struct iopa_submitter *sub)
{
	return READ_ONCE(sub->order) != IOPA_ORDER_FIFO &&
	       iopa_order_may_bmap();
}

/**
 * iopa_order_locate() - where a job's first byte is, to sort by
 * @file: the job's file
 * @offset: the job's offset
 *
 * A block device: the offset, in sectors.  A regular file: for a caller
 * with CAP_SYS_RAWIO (whom FIBMAP serves), its physical block from
 * bmap(), or 0 if the file has dirty pages (ext4's bmap() writes them
 * back first: a sort order is not worth that) or no block there (in
 * data=journal, ext4's bmap() also flushes the journal for a file whose
 * data went through it, dirty or not: as FIBMAP does for the same
 * caller); for any other caller, and on file
 * systems without bmap(), the inode number: with no I/O, no write-back,
 * and nothing stat() does not tell, it follows the layout on file systems
 * that place data near its inode (ext4's block groups, XFS's allocation
 * groups, whose inode numbers encode the location).
 *
 * Context: process context; may sleep with CAP_SYS_RAWIO.
 * Return: a location to sort by; 0 when it has none.
 */
u64 iopa_order_locate(struct file *file, u64 offset)
{
	struct inode *inode = file_inode(file);
	sector_t block;

	if (S_ISBLK(inode->i_mode))
		return offset >> SECTOR_SHIFT;
	if (!S_ISREG(inode->i_mode))
		return 0;
	if (!inode->i_mapping->a_ops->bmap || !iopa_order_may_bmap())
		return inode->i_ino;
	if (mapping_tagged(inode->i_mapping, PAGECACHE_TAG_DIRTY))
		return 0;
	if (offset >= i_size_read(inode))
		offset = 0;
	block = offset >> inode->i_blkbits;
	if (bmap(inode, &block))
		return 0;
	return block;
}

/* The PENDING job after @job on @sub->pending, NULL if it is the last. */
static struct iopa_kjob *iopa_order_after(struct iopa_submitter *sub,
					  struct iopa_kjob *job)
{
	return list_is_last(&job->node, &sub->pending) ? NULL :
	       list_next_entry(job, node);
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
	__must_hold(&job->sub->ctx->lock)
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
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_submitter *sub = job->sub;

	lockdep_assert_held(&sub->ctx->lock);
	if (!RB_EMPTY_NODE(&job->sort_node)) {
		rb_erase(&job->sort_node, &sub->sorted);
		RB_CLEAR_NODE(&job->sort_node);
	}
	if (sub->reindex == job)
		sub->reindex = iopa_order_after(sub, job);
}

/*
 * The job with the lowest (location, id) at or above (@loc, @id) if
 * !@below, else the one with the highest (location, id) below it; NULL
 * if there is none.
 */
static struct iopa_kjob *iopa_order_find(struct rb_root *root, u64 loc,
					 u64 id, bool below)
{
	struct rb_node *n = root->rb_node;
	struct iopa_kjob *best = NULL;

	while (n) {
		struct iopa_kjob *j = rb_entry(n, struct iopa_kjob, sort_node);
		bool at_or_above = j->location != loc ? j->location > loc :
				   j->id >= id;

		if (at_or_above != below)
			best = j;
		if (at_or_above)
			n = n->rb_left;
		else
			n = n->rb_right;
	}
	return best;
}

/*
 * The oldest job at the nearest location past @pos in the sweep's
 * direction (@down), @pos itself excluded; NULL if none.
 */
static struct iopa_kjob *iopa_order_beyond(struct rb_root *root, u64 pos,
					   bool down)
{
	struct iopa_kjob *job;

	if (down) {
		job = iopa_order_find(root, pos, 0, true);
		return job ? iopa_order_find(root, job->location, 0, false) :
			     NULL;
	}
	if (pos == U64_MAX)
		return NULL;
	return iopa_order_find(root, pos + 1, 0, false);
}

/**
 * iopa_order_next() - the submitter's next job to dispatch
 * @sub: a submitter with a PENDING job
 *
 * Context: ctx->lock held.
 * Return: the oldest PENDING job in FIFO order; in SORTED and CSCAN
 * order the next one on the sweep: the oldest job at the sweep's
 * location that was pending when the sweep got there, else the oldest
 * at the next location in the sweep's direction (after the last: SORTED
 * turns, CSCAN starts again from the lowest).  Its location becomes the
 * sweep's position.
 */
struct iopa_kjob *iopa_order_next(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	struct rb_root *root = &sub->sorted;
	struct iopa_kjob *job;

	lockdep_assert_held(&sub->ctx->lock);
	/* (After a switch to FIFO, jobs may still be leaving the index.) */
	if (sub->order == IOPA_ORDER_FIFO || RB_EMPTY_ROOT(root))
		return list_first_entry(&sub->pending, struct iopa_kjob, node);
	job = iopa_order_find(root, sub->sweep_pos, 0, false);
	if (job && job->location == sub->sweep_pos &&
	    job->id <= sub->sweep_cut)
		return job;
	job = iopa_order_beyond(root, sub->sweep_pos, sub->sweep_down);
	if (!job) {
		if (sub->order == IOPA_ORDER_CSCAN) {
			/* back to the lowest, still up */
			job = iopa_order_find(root, 0, 0, false);
		} else {
			sub->sweep_down = !sub->sweep_down;
			job = iopa_order_beyond(root, sub->sweep_pos,
						sub->sweep_down);
		}
	}
	/* Only jobs that came since the sweep got here: a new pass. */
	if (!job)
		job = iopa_order_find(root, sub->sweep_pos, 0, false);
	sub->sweep_pos = job->location;
	sub->sweep_cut = sub->ctx->next_job_id;
	return job;
}

/* Jobs IOPA_IOC_SET_ORDER (re)indexes per ctx->lock hold. */
#define IOPA_ORDER_BATCH	256

/**
 * iopa_sub_set_order() - IOPA_IOC_SET_ORDER
 * @sub: the submitter
 * @argp: user pointer to a struct iopa_order
 *
 * Switching to SORTED or CSCAN indexes the jobs already pending (at the
 * locations they were submitted with) and starts a sweep upward from 0;
 * switching to FIFO returns to submission order.  The pending jobs (up to
 * max_jobs) are indexed, or taken out of the index, IOPA_ORDER_BATCH per
 * hold of ctx->lock, from a cursor that a job leaving PENDING meanwhile
 * moves on (iopa_order_leave()); until the last batch, the sweep serves
 * the jobs indexed so far.
 *
 * Return: 0, -EFAULT or -EINVAL.
 */
long iopa_sub_set_order(struct iopa_submitter *sub, void __user *argp)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_order arg;
	struct iopa_kjob *job;
	unsigned int i;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || memchr_inv(arg.reserved, 0, sizeof(arg.reserved)) ||
	    arg.order > IOPA_ORDER_MAX)
		return -EINVAL;

	iopa_ctx_lock(ctx);
	if (arg.order != sub->order) {
		/* SORTED and CSCAN share the index: only FIFO changes it. */
		if (arg.order == IOPA_ORDER_FIFO ||
		    sub->order == IOPA_ORDER_FIFO)
			sub->reindex = list_first_entry_or_null(&sub->pending,
								struct iopa_kjob,
								node);
		WRITE_ONCE(sub->order, arg.order);
		sub->sweep_pos = 0;
		sub->sweep_cut = ctx->next_job_id;
		sub->sweep_down = false;
	}
	while (sub->reindex) {
		for (i = 0; i < IOPA_ORDER_BATCH && sub->reindex; i++) {
			job = sub->reindex;
			sub->reindex = iopa_order_after(sub, job);
			if (sub->order != IOPA_ORDER_FIFO)
				iopa_order_pending(job);
			else
				iopa_order_leave(job);
		}
		iopa_ctx_unlock(ctx);
		cond_resched();
		iopa_ctx_lock(ctx);
	}
	iopa_ctx_unlock(ctx);
	return 0;
}
