// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the split of a budget over time (kernel/share.c), on the
 * host: the passes of iopa_group_split() (kernel/group.c) over cgroups
 * and their members, driven with splits of random lengths, against the
 * shares the weights ask for.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "share.h"
/* The harness's own code, under -Wextra. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"

/* |got - want| <= tol, in millionths. */
#define EXPECT_NEAR(want, got, tol) \
	EXPECT_GE((long)((tol) * 1e6), \
		  (long)(fabs((double)(got) - (double)(want)) * 1e6))

#define MAX_CG		8
#define MAX_MEM		16

struct member {
	struct iopa_share s;
	int cg;
	bool active;
	bool was;
	double ran;		/* job-ms run */
	unsigned int waits;	/* splits in a row at 0 */
	unsigned int max_waits;
	double wait_ms;		/* time in a row at 0 */
	double max_wait_ms;
};

struct cgroup {
	struct iopa_share s;
	u64 weight;
	unsigned int nr_active;
	u32 left;
	bool was;
	double ran;
};

struct split {
	struct cgroup cg[MAX_CG];
	struct member m[MAX_MEM];
	unsigned int ncg, nm;
	double time;
	s64 max_credit;
	u32 left;		/* of the budget, after the cgroups' passes */
	unsigned int first;	/* the member at the head of the list */
};

static uint64_t rng = 88172645463325252ULL;

static uint64_t xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void add_member(struct split *x, int cg)
{
	x->m[x->nm].cg = cg;
	x->m[x->nm].active = true;
	x->nm++;
}

/*
 * One split, as iopa_group_split() makes it, after @dt_ms at the last:
 * the members in their list's order (rotated after each split to start
 * after the last one given a job of the rest), the cgroups in the order
 * of their first active member.
 */
static void split_once(struct split *x, u32 budget, u32 dt_ms)
{
	unsigned int i, k, order[MAX_CG], nord = 0;
	int rest = -1;
	u64 wsum = 0;
	u32 left = budget;

	/* account the interval that ends, at the parts of the last split */
	for (i = 0; i < x->nm; i++) {
		struct member *m = &x->m[i];

		if (m->was)
			m->ran += (double)iopa_share_part(&m->s) * dt_ms;
		if (m->was && m->waits) {
			m->wait_ms += dt_ms;
			if (m->wait_ms > m->max_wait_ms)
				m->max_wait_ms = m->wait_ms;
		}
	}
	for (i = 0; i < x->ncg; i++)
		if (x->cg[i].was)
			x->cg[i].ran += (double)iopa_share_part(&x->cg[i].s) *
					dt_ms;
	x->time += dt_ms;

	for (i = 0; i < x->ncg; i++) {
		if (x->cg[i].was)
			iopa_share_charge(&x->cg[i].s, dt_ms);
		x->cg[i].nr_active = 0;
	}
	for (k = 0; k < x->nm; k++) {
		struct member *m = &x->m[(x->first + k) % x->nm];
		struct cgroup *c = &x->cg[m->cg];

		if (!m->active) {
			iopa_share_forget(&m->s);
			m->was = false;
			continue;
		}
		if (m->was)
			iopa_share_charge(&m->s, dt_ms);
		else
			iopa_share_forget(&m->s);
		if (!c->nr_active++) {
			if (!c->was)
				iopa_share_forget(&c->s);
			order[nord++] = (unsigned int)m->cg;
		}
	}
	for (i = 0; i < x->ncg; i++)
		x->cg[i].was = x->cg[i].nr_active;
	for (k = 0; k < nord; k++)
		wsum += x->cg[order[k]].weight;
	for (k = 0; k < nord; k++)
		left -= iopa_share_base(&x->cg[order[k]].s, budget,
					x->cg[order[k]].weight, wsum);
	for (k = 0; k < nord; k++)
		if (left && iopa_share_owed(&x->cg[order[k]].s)) {
			iopa_share_give(&x->cg[order[k]].s);
			left--;
		}
	for (k = 0; k < nord; k++) {
		struct cgroup *c = &x->cg[order[k]];

		if (left && !iopa_share_had_rest(&c->s)) {
			iopa_share_give(&c->s);
			left--;
		}
		c->left = iopa_share_part(&c->s);
	}
	for (k = 0; k < x->nm; k++) {
		struct member *m = &x->m[(x->first + k) % x->nm];
		struct cgroup *c = &x->cg[m->cg];

		if (m->active)
			c->left -= iopa_share_base(&m->s, iopa_share_part(&c->s),
						   1, c->nr_active);
	}
	for (k = 0; k < x->nm; k++) {
		unsigned int j = (x->first + k) % x->nm;
		struct member *m = &x->m[j];
		struct cgroup *c = &x->cg[m->cg];

		if (m->active && c->left && iopa_share_owed(&m->s)) {
			iopa_share_give(&m->s);
			c->left--;
			rest = (int)j;
		}
	}
	for (k = 0; k < x->nm; k++) {
		unsigned int j = (x->first + k) % x->nm;
		struct member *m = &x->m[j];
		struct cgroup *c = &x->cg[m->cg];

		if (m->active && c->left && !iopa_share_had_rest(&m->s)) {
			iopa_share_give(&m->s);
			c->left--;
			rest = (int)j;
		}
		m->was = m->active;
		if (m->active && !iopa_share_part(&m->s)) {
			if (++m->waits > m->max_waits)
				m->max_waits = m->waits;
		} else {
			m->waits = 0;
			m->wait_ms = 0;
		}
		if (m->s.credit > x->max_credit)
			x->max_credit = m->s.credit;
		if (-m->s.credit > x->max_credit)
			x->max_credit = -m->s.credit;
	}
	if (rest >= 0)
		x->first = ((unsigned int)rest + 1) % x->nm;
	x->left = left;
}

/* The parts of one split: they add up to the budget. */
static u32 parts_sum(const struct split *x)
{
	unsigned int i;
	u32 sum = 0;

	for (i = 0; i < x->nm; i++)
		if (x->m[i].active)
			sum += iopa_share_part(&x->m[i].s);
	return sum;
}

static void run(struct split *x, u32 budget, unsigned int splits,
		u32 dt_lo, u32 dt_hi, struct __test_metadata *_metadata)
{
	unsigned int i, c;

	for (i = 0; i < splits; i++) {
		u32 dt = dt_lo + (u32)(xorshift() % (dt_hi - dt_lo + 1));

		split_once(x, budget, dt);
		ASSERT_EQ(budget, parts_sum(x));
		ASSERT_EQ(0U, x->left);
		for (c = 0; c < x->ncg; c++)
			ASSERT_EQ(0U, x->cg[c].left);
	}
	/* the last split's parts, run for one more interval */
	split_once(x, budget, dt_lo);
}

/* The share of the job-time a cgroup ran. */
static double cg_share(const struct split *x, unsigned int c)
{
	double all = 0;
	unsigned int i;

	for (i = 0; i < x->ncg; i++)
		all += x->cg[i].ran;
	return all ? x->cg[c].ran / all : 0;
}

/* Two members, one job: they take turns, one split each. */
TEST(one_job_two_members_alternate)
{
	struct split x = { .ncg = 1 };

	x.cg[0].weight = 100;
	add_member(&x, 0);
	add_member(&x, 0);
	run(&x, 1, 400, 200, 200, _metadata);
	EXPECT_GE(1U, x.m[0].max_waits);
	EXPECT_GE(1U, x.m[1].max_waits);
	EXPECT_NEAR(0.5, x.m[0].ran / (x.m[0].ran + x.m[1].ran), 0.01);
}

/* Four members, one job, splits of one length: round robin, exactly. */
TEST(one_job_four_members_round_robin)
{
	struct split x = { .ncg = 1 };
	unsigned int i;

	x.cg[0].weight = 100;
	for (i = 0; i < 4; i++)
		add_member(&x, 0);
	run(&x, 1, 400, 300, 300, _metadata);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(3U, x.m[i].max_waits) TH_LOG("member %u", i);
		EXPECT_NEAR(0.25, x.m[i].ran / x.time, 0.01);
	}
}

/*
 * Four members, one job, splits of random lengths (100..900 ms): each
 * runs a quarter of the time.  Waits are fair in time, not in turns: a
 * member that had a long turn waits until the others' turns add up to
 * three times it (up to 2.7 s), and behind those owed before it.  With
 * the passes in a static order (no rotation) the last member waited
 * 5.1 s.
 */
TEST(one_job_four_members_quarter_each)
{
	struct split x = { .ncg = 1 };
	double all = 0;
	unsigned int i;

	x.cg[0].weight = 100;
	for (i = 0; i < 4; i++)
		add_member(&x, 0);
	run(&x, 1, 4000, 100, 900, _metadata);
	for (i = 0; i < 4; i++)
		all += x.m[i].ran;
	for (i = 0; i < 4; i++) {
		EXPECT_NEAR(0.25, x.m[i].ran / all, 0.02);
		EXPECT_GE(5 * 900, (int)x.m[i].max_wait_ms)
			TH_LOG("member %u waited %.0f ms", i,
			       x.m[i].max_wait_ms);
	}
}

/*
 * The case: V, one submitter, against G, four, on a budget of
 * 1..9.  V's share is half at equal weights, three quarters at 300:100,
 * whatever the budget: opening submitters buys G nothing.
 */
TEST(cgroup_one_against_four)
{
	static const u64 wv[] = { 100, 300 };
	static const double want[] = { 0.5, 0.75 };
	unsigned int w, b, i;

	for (w = 0; w < 2; w++)
		for (b = 1; b < 10; b++) {
			struct split x = { .ncg = 2 };

			x.cg[0].weight = wv[w];
			x.cg[1].weight = 100;
			add_member(&x, 0);
			for (i = 0; i < 4; i++)
				add_member(&x, 1);
			run(&x, b, 2000, 100, 600, _metadata);
			EXPECT_NEAR(want[w], cg_share(&x, 0), 0.01)
				TH_LOG("weight %llu budget %u: %.4f",
				       (unsigned long long)wv[w], b,
				       cg_share(&x, 0));
		}
}

/*
 * Each member of each cgroup gets its share of its cgroup's, not only
 * each cgroup its share: cgroups of 1, 2 and 3 members, budgets 1 to 4,
 * splits of random lengths.  A cgroup given no job at a split kept its
 * members' credit (a cap of 0 used to wipe it: one member of three ran
 * 0.4% of the time).
 */
TEST(every_member_of_every_cgroup)
{
	static const unsigned int sizes[] = { 1, 2, 3 };
	unsigned int b, i, c;

	for (b = 1; b <= 4; b++) {
		struct split x = { .ncg = 3 };
		double all = 0;

		for (c = 0; c < 3; c++) {
			x.cg[c].weight = 100;
			for (i = 0; i < sizes[c]; i++)
				add_member(&x, (int)c);
		}
		run(&x, b, 3000, 100, 600, _metadata);
		for (i = 0; i < x.nm; i++)
			all += x.m[i].ran;
		for (i = 0; i < x.nm; i++) {
			double want = 1.0 / 3 / sizes[x.m[i].cg];

			EXPECT_NEAR(want, x.m[i].ran / all, 0.02)
				TH_LOG("budget %u member %u (cgroup %d): %.4f",
				       b, i, x.m[i].cg, x.m[i].ran / all);
		}
	}
}

/* Whole parts stay whole: 8 jobs, two equal cgroups: 4 each, always. */
TEST(whole_parts_do_not_move)
{
	struct split x = { .ncg = 2 };
	unsigned int i;

	x.cg[0].weight = x.cg[1].weight = 100;
	add_member(&x, 0);
	add_member(&x, 1);
	for (i = 0; i < 50; i++) {
		split_once(&x, 8, 300);
		ASSERT_EQ(4U, iopa_share_part(&x.m[0].s));
		ASSERT_EQ(4U, iopa_share_part(&x.m[1].s));
	}
	EXPECT_EQ(0, x.max_credit);
}

/*
 * The credit stays within a few splits' worth, whatever comes and goes:
 * no sharer builds a claim it could use to crowd the others out later.
 */
TEST(credit_bounded_with_churn)
{
	struct split x = { .ncg = 3 };
	unsigned int i, k, n;
	/* two of the longest splits' worth of the budget: below the clamp */
	s64 cap = (s64)7 * IOPA_SHARE_UNIT * 900 * 2;

	x.cg[0].weight = 100;
	x.cg[1].weight = 50;
	x.cg[2].weight = 1000;
	for (i = 0; i < 9; i++)
		add_member(&x, (int)(i % 3));
	for (k = 0; k < 3000; k++) {
		i = (unsigned int)(xorshift() % 9);
		x.m[i].active = !x.m[i].active;
		split_once(&x, 7, 100 + (u32)(xorshift() % 800));
		for (i = n = 0; i < 9; i++)
			n += x.m[i].active;
		if (n)
			ASSERT_EQ(7U, parts_sum(&x));
	}
	EXPECT_GE(cap, x.max_credit)
		TH_LOG("max credit %lld", (long long)x.max_credit);
	TH_LOG("max credit %.1f job-ms of %u jobs",
	       (double)x.max_credit / IOPA_SHARE_UNIT, 7);
}

/* A newcomer claims no past: it starts at its fair part, no more. */
TEST(newcomer_claims_no_past)
{
	struct split x = { .ncg = 2 };

	x.cg[0].weight = x.cg[1].weight = 100;
	add_member(&x, 0);
	run(&x, 1, 100, 500, 500, _metadata);
	add_member(&x, 1);
	run(&x, 1, 100, 500, 500, _metadata);
	EXPECT_GE(1U, x.m[0].max_waits);
	EXPECT_GE(1U, x.m[1].max_waits);
}

/* Bad weights do not divide by zero nor give more than the budget. */
TEST(degenerate_weights)
{
	struct iopa_share s = { 0 };

	EXPECT_EQ(3U, iopa_share_base(&s, 3, 0, 0));
	EXPECT_EQ(3U, iopa_share_base(&s, 3, 5, 2));
	EXPECT_EQ(0U, iopa_share_base(&s, 3, 1, 4));
	EXPECT_TRUE(iopa_share_owed(&s));
	iopa_share_give(&s);
	EXPECT_TRUE(iopa_share_had_rest(&s));
	iopa_share_charge(&s, 1000000);
	EXPECT_LE(-(s64)3 * IOPA_SHARE_UNIT * IOPA_SHARE_MEMORY_MS, s.credit);
}

TEST_HARNESS_MAIN
