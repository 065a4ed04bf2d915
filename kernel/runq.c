// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - a context's run queue: which submitters may have a job
 * dispatched now, and waking the workers that wait for one.
 *
 * Below the job core (queue.c) and the limit layer (limit.c, group.c),
 * which both change what may run: a job queued or ended, a limit raised
 * or lowered.  Workers wait in two ways: a FETCH ioctl sleeps on
 * ctx->fetch_wq; an io_uring FETCH parks on ctx->parked, and the front-end
 * that parked it (uring.c) is called back through ctx->park_ops to
 * serve it.
 */
#include "iopa.h"

static bool iopa_sub_dispatchable(const struct iopa_submitter *sub)
{
	return sub->nr[IOPA_JOB_PENDING] &&
	       sub->nr[IOPA_JOB_RUNNING] < sub->limit;
}

/**
 * iopa_sub_update() - after a change of @sub's jobs or limit
 * @sub: the submitter
 *
 * Puts @sub on, or takes it off, its context's runnable list, and notes
 * demand for the controller: jobs pending while the limit is reached.
 *
 * Context: ctx->lock held.
 */
void iopa_sub_update(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	bool queued = !list_empty(&sub->rr_node);

	lockdep_assert_held(&sub->ctx->lock);
	if (sub->nr[IOPA_JOB_PENDING] &&
	    sub->nr[IOPA_JOB_RUNNING] >= sub->limit) {
		sub->cyc.demand = true;
		sub->group_demand = true;
	}
	if (iopa_sub_dispatchable(sub)) {
		if (!queued)
			list_add_tail(&sub->rr_node, &sub->ctx->runnable);
	} else if (queued) {
		list_del_init(&sub->rr_node);
	}
}

/**
 * iopa_kick_workers() - wake up to @n workers waiting in FETCH
 * @ctx: the context
 * @n: how many jobs may have become dispatchable
 *
 * Parked io_uring fetches are served first (they are not asleep: their
 * front-end hands them jobs); then up to @n sleeping FETCH ioctls are
 * woken.  Does nothing if no job can be dispatched.
 *
 * Context: ctx->lock held.
 */
void iopa_kick_workers(struct iopa_ctx *ctx, unsigned int n)
	__must_hold(&ctx->lock)
{
	lockdep_assert_held(&ctx->lock);
	if (!list_empty(&ctx->parked) && !list_empty(&ctx->runnable))
		ctx->park_ops->serve(ctx);
	if (n && ctx->nr_waiting && !list_empty(&ctx->runnable))
		wake_up_nr(&ctx->fetch_wq, n);
}
