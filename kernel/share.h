/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * iopa - a budget split by weight over time (kernel/share.c).
 *
 * A device group's budget (how many jobs of all its members may run at
 * once) is divided among its sharers: cgroups by weight, then a
 * cgroup's part equally among its members (kernel/group.c).  When a
 * sharer's fair part is a fraction of a job, or less than one job, a
 * split that rounds cannot give it that part at each split; it gives it
 * over time.  Each sharer keeps a credit: the job-milliseconds it was
 * owed and not given (positive) or given beyond its part (negative),
 * since it became active.  A split gives each sharer the whole jobs of
 * its fair part, then the jobs left over one each to the sharers owed
 * (with credit), then to the others: over a few splits, each sharer has run
 * its weight's share of the budget, and a sharer whose part is below
 * one job takes turns with the others (its part is 0, it waits, until
 * its credit gives it one).
 *
 * Like ctl.h, this header and share.c depend on no kernel facility:
 * they build in the module and, unchanged, on the host (tools/sim:
 * share_test).  The caller serialises every call on one sharer (the
 * module: under the group's lock).
 */
#ifndef _IOPA_SHARE_H
#define _IOPA_SHARE_H

#include "ctl.h"

/* Fixed point of a fair part: 1/IOPA_SHARE_UNIT job. */
#define IOPA_SHARE_UNIT		1024
/*
 * A sharer's credit is kept within this many milliseconds of the whole
 * budget, owed or ahead: what it was owed longer ago than that, it no
 * longer claims (a budget that changed, members that came and went).
 */
#define IOPA_SHARE_MEMORY_MS	2000

/**
 * struct iopa_share - one sharer of a budget: a cgroup, or a member
 * @credit: job-milliseconds owed (positive) or given ahead (negative),
 *	in 1/IOPA_SHARE_UNIT job
 * @fair: its fair part at the last split, 1/IOPA_SHARE_UNIT job
 * @part: the jobs it was given then
 * @base: the whole jobs of @fair it was given then (@part less the
 *	one it may have had of the rest)
 * @budget: the budget divided then (bounds @credit)
 */
struct iopa_share {
	s64	credit;
	u64	fair;
	u32	part;
	u32	base;
	u32	budget;
};

void iopa_share_forget(struct iopa_share *s);
void iopa_share_charge(struct iopa_share *s, u32 dt_ms);
u32 iopa_share_base(struct iopa_share *s, u32 budget, u64 weight, u64 wsum);
bool iopa_share_owed(const struct iopa_share *s);
bool iopa_share_had_rest(const struct iopa_share *s);
void iopa_share_give(struct iopa_share *s);

/**
 * iopa_share_part() - the jobs a sharer was given at the last split
 * @s: the sharer
 *
 * Return: its part: 0 if it waits for its turn.
 */
static inline u32 iopa_share_part(const struct iopa_share *s)
{
	return s->part;
}

#endif /* _IOPA_SHARE_H */
