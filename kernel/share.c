// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * iopa - a budget split by weight over time: the arithmetic of turns.
 *
 * A split of a budget B among sharers of weights w_i (kernel/group.c,
 * iopa_group_split()) runs three passes over them, each O(1) a sharer:
 *
 *   1. iopa_share_charge() the time since the last split to each sharer
 *      active then and now (its fair part then less its part then, for
 *      that long), or iopa_share_forget() a newcomer's past; then
 *      iopa_share_base(): the whole jobs of its fair part, B w_i / sum w,
 *      rounded down.  Fewer than the sharers' number are left over.
 *   2. One each of those left, in order, to the sharers iopa_share_owed()
 *      says are owed (credit, or a fraction and no debt that outweighs
 *      it); the caller moves the order on after each split, so that
 *      among those owed the next ones come first.
 *   3. One each of those still left, in order, to the sharers that had
 *      none of the rest in pass 2.
 *
 * A sharer given more than its fair part runs into debt and has none of
 * the rest until the others have had theirs; one given less gathers
 * credit and comes first.  The credit of each sharer stays within a few
 * splits' worth of the budget, so over a few splits each runs its
 * fair share: a part of 1.25 jobs is 1, 1, 1, 2; a part of a third of a
 * job is one split in three (the others it waits: its turn).
 */
#include "share.h"

/**
 * iopa_share_forget() - a sharer starts afresh: owed nothing
 * @s: the sharer (a newcomer, or one that was idle)
 *
 * What it was owed is forgotten; what it was given ahead is not: a
 * sharer that had a turn and went idle for an instant comes back with
 * its debt, not with a clean slate.
 */
void iopa_share_forget(struct iopa_share *s)
{
	if (s->credit > 0)
		s->credit = 0;
	s->fair = 0;
	s->part = 0;
	s->base = 0;
	s->budget = 0;
}

/**
 * iopa_share_charge() - account the time since the last split
 * @s: the sharer, active at the last split and now
 * @dt_ms: milliseconds since the last split
 *
 * For that long the sharer was owed its fair part then and ran its part
 * then: the difference goes to its credit, kept within
 * IOPA_SHARE_MEMORY_MS of the budget of then, either way.
 */
void iopa_share_charge(struct iopa_share *s, u32 dt_ms)
{
	/* A part of 0 jobs at the last split keeps its credit too. */
	s64 cap = (s64)(s->budget ? s->budget : 1) * IOPA_SHARE_UNIT *
		  IOPA_SHARE_MEMORY_MS;
	s64 d = (s64)s->fair - (s64)s->part * IOPA_SHARE_UNIT;

	if (dt_ms > IOPA_SHARE_MEMORY_MS)
		dt_ms = IOPA_SHARE_MEMORY_MS;
	s->credit += d * dt_ms;
	if (s->credit > cap)
		s->credit = cap;
	if (s->credit < -cap)
		s->credit = -cap;
}

/**
 * iopa_share_base() - a sharer's fair part, and the whole jobs of it
 * @s: the sharer
 * @budget: the budget divided
 * @weight: the sharer's weight (at least 1)
 * @wsum: the weights of all the active sharers (at least @weight)
 *
 * Sets the sharer's fair part, and gives it the whole jobs of it.
 *
 * Return: those jobs: budget * weight / wsum, rounded down.
 */
u32 iopa_share_base(struct iopa_share *s, u32 budget, u64 weight, u64 wsum)
{
	if (!wsum || weight > wsum) {
		weight = 1;
		wsum = 1;
	}
	s->budget = budget;
	s->fair = div64_u64((u64)budget * IOPA_SHARE_UNIT * weight, wsum);
	s->base = (u32)div64_u64((u64)budget * weight, wsum);
	s->part = s->base;
	return s->base;
}

/**
 * iopa_share_owed() - should the sharer come first for a job of the rest?
 * @s: the sharer, after iopa_share_base()
 *
 * Return: true if it has credit, or a fraction of a job in its fair part
 * and no debt that outweighs it.
 */
bool iopa_share_owed(const struct iopa_share *s)
{
	s64 frac = (s64)s->fair - (s64)s->base * IOPA_SHARE_UNIT;

	return s->credit + frac > 0;
}

/**
 * iopa_share_had_rest() - was the sharer given a job of the rest?
 * @s: the sharer, after iopa_share_base()
 *
 * Return: true if its part is above the whole jobs of its fair part.
 */
bool iopa_share_had_rest(const struct iopa_share *s)
{
	return s->part > s->base;
}

/**
 * iopa_share_give() - give the sharer a job of the rest
 * @s: the sharer, after iopa_share_base()
 */
void iopa_share_give(struct iopa_share *s)
{
	s->part++;
}
