// SPDX-License-Identifier: GPL-2.0
/*
 * Host unit tests of kernel/ctl.c (the admission-limit controller), one
 * behaviour per test, and the done criteria of the simulator.
 *
 *   make -C tools/sim test
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

/*
 * The harness is not -Wextra clean: TEST() leaves its variant argument
 * unused, TEST_F() keeps a local across setjmp(), and EXPECT_EQ(10, x)
 * compares an int literal with the controller's u32 limits.
 */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wclobbered"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"

#include "ctl.h"
#include "sim.h"

#define NCPUS	32

static void params(struct iopa_ctl_params *p)
{
	iopa_ctl_params_default(p, NCPUS);
}

/*
 * Jobs completed in a fed cycle, each taking FEED_SVC_US (feed(): at a
 * throughput of 1000 per job in flight; FEED_SVC_MAX at most).
 */
#define FEED_JOBS	256
#define FEED_SVC_US	10000ULL
#define FEED_SVC_MAX	10000000ULL

/*
 * A fed cycle's sample: throughput @tput over @elapsed_ms, with demand,
 * FEED_JOBS completions of identical service times, so the bracket
 * policy's noise estimate is small (2.1%: the floor and the cycle's
 * edges), of jobs that read a device (block I/O: a device model's).
 * feed() ends the current cycle with it; @saturated there makes the
 * jobs CPU-bound ones (no block I/O), and their service time is what
 * Little's law gives for the limit's jobs in flight at @tput (the device
 * models' unit, 1000, is one job in flight's worth of FEED_SVC_US jobs).
 */
static struct iopa_ctl_sample fed(u64 tput, u32 elapsed_ms)
{
	struct iopa_ctl_sample s = {
		.tput = tput,
		.elapsed_ms = elapsed_ms,
		.demand = true,
		.block_io = true,
		.completions = FEED_JOBS,
		.svc_us = FEED_JOBS * FEED_SVC_US,
		.svc_sq = FEED_JOBS * FEED_SVC_US * FEED_SVC_US,
	};

	return s;
}

static bool feed(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		 u64 tput, bool saturated, bool demand)
{
	struct iopa_ctl_sample s = fed(tput, iopa_ctl_next_cycle_ms(c, p));
	u64 svc = tput ? FEED_SVC_US * 1000 * iopa_ctl_limit(c) / tput :
		  FEED_SVC_US;

	if (svc > FEED_SVC_MAX)
		svc = FEED_SVC_MAX;
	if (!svc)
		svc = 1;
	s.svc_us = FEED_JOBS * svc;
	s.svc_sq = FEED_JOBS * svc * svc;
	s.cpu_saturated = saturated;
	s.block_io = !saturated;
	s.demand = demand;
	return iopa_ctl_update(c, p, &s, NULL);
}

/* The start limit of each policy at the defaults on NCPUS CPUs. */
static u32 init_limit(int pol)
{
	return pol == IOPA_CTL_POLICY_BRACKET ? 8 : 10;
}

/* Devices: throughput at n running jobs. */
static u64 dev_linear(u32 n)
{
	return 1000ULL * n;
}

/* Linear up to 16 jobs (a device with 16 tags), flat beyond. */
static u64 dev_knee16(u32 n)
{
	return 1000ULL * (n < 16 ? n : 16);
}

/* Linear up to 3 jobs (a shallow device: 3 tags), flat beyond. */
static u64 dev_knee3(u32 n)
{
	return 1000ULL * (n < 3 ? n : 3);
}

static u64 dev_const(u32 n)
{
	(void)n;
	return 50000;
}

/* Peaks at 12, falls 5% per job on either side. */
static u64 dev_peak12(u32 n)
{
	u32 d = n > 12 ? n - 12 : 12 - n;

	return d >= 20 ? 1000 : 100000 - 5000ULL * d;
}

/* Run @cycles cycles against @dev (scaled by @scale per mille). */
static int run(struct iopa_ctl *c, const struct iopa_ctl_params *p,
	       u64 (*dev)(u32), u32 scale, int cycles)
{
	int changes = 0;

	while (cycles--)
		changes += feed(c, p, dev(iopa_ctl_limit(c)) * scale / 1000,
				false, true);
	return changes;
}

TEST(policy_name_parse_round_trip)
{
	int p;

	for (p = 0; p < IOPA_CTL_NR_POLICIES; p++) {
		const char *n = iopa_ctl_policy_name(p);
		char buf[32];

		ASSERT_EQ(p, iopa_ctl_policy_parse(n, strlen(n)));
		snprintf(buf, sizeof(buf), "%s\n", n);
		ASSERT_EQ(p, iopa_ctl_policy_parse(buf, strlen(buf)));
	}
	EXPECT_STREQ("iopa", iopa_ctl_policy_name(IOPA_CTL_POLICY_IOPA));
	EXPECT_STREQ("hillclimb",
		     iopa_ctl_policy_name(IOPA_CTL_POLICY_HILLCLIMB));
	EXPECT_EQ(-EINVAL, iopa_ctl_policy_parse("iop", 3));
	EXPECT_EQ(-EINVAL, iopa_ctl_policy_parse("iopax", 5));
	EXPECT_EQ(-EINVAL, iopa_ctl_policy_parse("", 0));
	EXPECT_EQ(-EINVAL, iopa_ctl_policy_parse("\n", 1));
	/* len bounds the name: no NUL needed */
	EXPECT_EQ(IOPA_CTL_POLICY_IOPA, iopa_ctl_policy_parse("iopa-x", 4));
	EXPECT_STREQ("?", iopa_ctl_policy_name(IOPA_CTL_NR_POLICIES));
	EXPECT_STREQ("steady", iopa_ctl_mode_name(IOPA_CTL_MODE_STEADY));
	EXPECT_STREQ("?", iopa_ctl_mode_name(IOPA_CTL_NR_MODES));
}

TEST(params_default_and_check)
{
	struct iopa_ctl_params p, q;
	struct iopa_ctl c;

	params(&p);
	ASSERT_EQ(0, iopa_ctl_params_check(&p));
	EXPECT_EQ(1100, p.increase_permille);
	EXPECT_EQ(900, p.decrease_permille);
	EXPECT_EQ(500, p.fast_cycle_ms);
	EXPECT_EQ(1000, p.normal_cycle_ms);
	EXPECT_EQ(6000, p.hold_cycle_ms);
	EXPECT_EQ(3, p.history);
	/* not derived from the CPUs: an I/O knee is depth x latency */
	EXPECT_EQ(256, p.max_limit);
	/* 30% of 32 CPUs, rounded up as the paper's 8 of 24 */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_IOPA);
	EXPECT_EQ(10, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	iopa_ctl_params_default(&q, 0);
	EXPECT_EQ(0, iopa_ctl_params_check(&q));
	iopa_ctl_params_default(&q, 4096);
	EXPECT_EQ(256, q.max_limit);

#define BAD(field, value) do {					\
		q = p;						\
		q.field = (value);				\
		EXPECT_EQ(-EINVAL, iopa_ctl_params_check(&q));	\
	} while (0)
	BAD(decrease_permille, 1100);		/* decrease >= increase */
	BAD(decrease_permille, 1000);
	BAD(decrease_permille, 0);
	BAD(increase_permille, 1000);
	BAD(increase_permille, 10001);
	BAD(fast_cycle_ms, 0);
	BAD(normal_cycle_ms, 0);
	BAD(hold_cycle_ms, 0);
	BAD(normal_cycle_ms, 3600 * 1000 + 1);
	BAD(history, 0);
	BAD(history, IOPA_CTL_HIST_MAX + 1);
	BAD(max_limit, 0);
	BAD(max_limit, IOPA_CTL_LIMIT_MAX + 1);
	BAD(init_limit, IOPA_CTL_LIMIT_MAX + 1);
	BAD(fast_cap, IOPA_CTL_LIMIT_MAX + 1);
	BAD(ncpus, 0);
#undef BAD
}

TEST(init_limit_clamped_to_max_limit)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	params(&p);
	p.init_limit = 500;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	EXPECT_EQ(p.max_limit, iopa_ctl_limit(&c));
	p.init_limit = 7;
	iopa_ctl_init(&c, &p, 99);	/* unknown policy: iopa */
	EXPECT_EQ(7, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_POLICY_IOPA, iopa_ctl_policy(&c));
}

TEST(iopa_fast_doubles_while_r_above_increase_until_cap)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_IOPA);
	EXPECT_EQ(p.fast_cycle_ms, iopa_ctl_next_cycle_ms(&c, &p));
	/* The first cycle has no reference: doubles. */
	EXPECT_TRUE(feed(&c, &p, dev_linear(10), false, true));
	EXPECT_EQ(20, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* R = 2 > 1.1: doubles, capped at 90% of 32 = 29 (rounded up) */
	EXPECT_TRUE(feed(&c, &p, dev_linear(20), false, true));
	EXPECT_EQ(29, iopa_ctl_limit(&c));
	/* The cap ends FAST mode. */
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
	EXPECT_EQ(p.normal_cycle_ms, iopa_ctl_next_cycle_ms(&c, &p));
}

TEST(iopa_fast_to_normal_when_gain_stalls)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 r = 0;
	struct iopa_ctl_sample s = { .tput = 50000, .elapsed_ms = 500,
				     .demand = true };

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_IOPA);
	EXPECT_TRUE(feed(&c, &p, dev_const(10), false, true));
	EXPECT_EQ(20, iopa_ctl_limit(&c));
	/* R = 1.0 <= 1.1: stays at 20, NORMAL */
	EXPECT_FALSE(iopa_ctl_update(&c, &p, &s, &r));
	EXPECT_EQ(1000, r);
	EXPECT_EQ(20, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
}

TEST(iopa_normal_plus_one_minus_one_and_hold)
{
	struct iopa_ctl_sample early = { .tput = 10, .elapsed_ms = 1000,
					 .demand = true };
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	params(&p);
	p.init_limit = 16;
	p.fast_cap = 16;		/* start in NORMAL at 16 */
	p.hold_cycle_ms = 3000;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_IOPA);
	EXPECT_FALSE(feed(&c, &p, 1000, false, true));
	ASSERT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
	/* R = 1.2 > 1.1 against the previous cycles: +1 */
	EXPECT_TRUE(feed(&c, &p, 1200, false, true));
	EXPECT_EQ(17, iopa_ctl_limit(&c));
	/* within the thresholds (avg of 1000, 1200 = 1100; R = 1.0): keep */
	EXPECT_FALSE(feed(&c, &p, 1100, false, true));
	EXPECT_EQ(17, iopa_ctl_limit(&c));
	/* R = 800 / 1100 < 0.9: -1 and HOLD */
	EXPECT_TRUE(feed(&c, &p, 800, false, true));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_HOLD, iopa_ctl_mode(&c));
	EXPECT_EQ(p.hold_cycle_ms, iopa_ctl_next_cycle_ms(&c, &p));
	/* HOLD ignores R, lasts hold_cycle_ms, then NORMAL */
	EXPECT_FALSE(feed(&c, &p, 100, false, true));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
	/* A timer that fires early does not cut HOLD short. */
	for (i = 0; i < 3; i++)
		feed(&c, &p, 100000, false, true);	/* grow a bit */
	EXPECT_TRUE(feed(&c, &p, 10, false, true));
	ASSERT_EQ(IOPA_CTL_MODE_HOLD, iopa_ctl_mode(&c));
	iopa_ctl_update(&c, &p, &early, NULL);
	EXPECT_EQ(IOPA_CTL_MODE_HOLD, iopa_ctl_mode(&c));
	EXPECT_EQ(2000, iopa_ctl_next_cycle_ms(&c, &p));
	early.elapsed_ms = 2000;
	iopa_ctl_update(&c, &p, &early, NULL);
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
}

TEST(no_growth_when_cpu_saturated)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int pol, i;

	params(&p);
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		iopa_ctl_init(&c, &p, pol);
		for (i = 0; i < 40; i++) {
			feed(&c, &p, dev_linear(iopa_ctl_limit(&c)), true,
			     true);
			ASSERT_LE(iopa_ctl_limit(&c), 10);
		}
	}
	/*
	 * bracket, jobs that do block I/O: the CPUs may be busy on the jobs'
	 * I/O path while the device still pays (the demo's guest: 4 jobs
	 * read "saturated", 16 read 7% more than 8).  The start-up doubles
	 * while a doubling pays and stops where one no longer does (a
	 * device flat from 16 jobs: 32 tried and undone); probes up after
	 * it by the finest step only.
	 */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 40; i++) {
		struct iopa_ctl_sample smp = {
			.tput = dev_knee16(iopa_ctl_limit(&c)),
			.elapsed_ms = iopa_ctl_next_cycle_ms(&c, &p),
			.cpu_saturated = true, .demand = true, .block_io = true,
			.completions = FEED_JOBS,
			.svc_us = FEED_JOBS * FEED_SVC_US,
			.svc_sq = FEED_JOBS * FEED_SVC_US * FEED_SVC_US,
		};

		iopa_ctl_update(&c, &p, &smp, NULL);
		ASSERT_LE(iopa_ctl_limit(&c), 32);
	}
	EXPECT_LE(16, c.base);
	EXPECT_GE(18, c.base);
	/* iopa in NORMAL: R > increase, but saturated: keep */
	p.init_limit = 16;
	p.fast_cap = 16;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_IOPA);
	feed(&c, &p, 1000, false, true);
	EXPECT_FALSE(feed(&c, &p, 5000, true, true));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
}

TEST(no_growth_and_sample_ignored_without_demand)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int pol, i;

	params(&p);
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		iopa_ctl_init(&c, &p, pol);
		for (i = 0; i < 40; i++) {
			EXPECT_FALSE(feed(&c, &p, dev_linear(100 + i), false,
					  false));
			ASSERT_EQ(init_limit(pol), iopa_ctl_limit(&c));
		}
	}
	/* A hillclimb trial without demand is dropped: back to the base. */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	EXPECT_TRUE(feed(&c, &p, dev_linear(10), false, true));
	ASSERT_EQ(20, iopa_ctl_limit(&c));
	EXPECT_TRUE(feed(&c, &p, 0, false, false));
	EXPECT_EQ(10, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
}

TEST(bounds_clamp_and_are_honoured)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int pol, i;

	params(&p);
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		iopa_ctl_init(&c, &p, pol);
		EXPECT_EQ(-EINVAL, iopa_ctl_set_bounds(&c, &p, 9, 8));
		EXPECT_EQ(-EINVAL, iopa_ctl_set_bounds(&c, &p, 0,
				IOPA_CTL_LIMIT_MAX + 1));
		EXPECT_EQ(init_limit(pol), iopa_ctl_limit(&c));
		/* max below the limit clamps at once */
		ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 3));
		EXPECT_EQ(3, iopa_ctl_limit(&c));
		ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 6));
		/* growth stops at max */
		for (i = 0; i < 60; i++) {
			feed(&c, &p, dev_linear(iopa_ctl_limit(&c)), false,
			     true);
			ASSERT_LE(iopa_ctl_limit(&c), 6);
		}
		EXPECT_EQ(6, iopa_ctl_limit(&c));
		/* min above the limit clamps at once; decreases stop at it */
		ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 40, 50));
		EXPECT_EQ(40, iopa_ctl_limit(&c));
		for (i = 0; i < 60; i++) {
			feed(&c, &p, 100000 - 1000ULL * iopa_ctl_limit(&c),
			     false, true);
			ASSERT_GE(iopa_ctl_limit(&c), 40);
			ASSERT_LE(iopa_ctl_limit(&c), 50);
		}
		/* no bounds: back to the global ceiling only */
		ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 0));
		/* the global max_limit wins over a min above it */
		ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, p.max_limit + 44, 0));
		EXPECT_EQ(p.max_limit, iopa_ctl_limit(&c));
		/* a lower max_limit (sysfs) applies at the next update */
		p.max_limit = 20;
		feed(&c, &p, 1000, false, true);
		EXPECT_LE(iopa_ctl_limit(&c), 20);
		params(&p);
	}
}

TEST(fixed_freezes_and_unfreeze_resumes)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int pol, i;

	params(&p);
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		iopa_ctl_init(&c, &p, pol);
		iopa_ctl_set_fixed(&c, 3);
		EXPECT_EQ(3, iopa_ctl_limit(&c));
		EXPECT_EQ(IOPA_CTL_MODE_FIXED, iopa_ctl_mode(&c));
		for (i = 0; i < 20; i++)
			EXPECT_FALSE(feed(&c, &p, dev_linear(3 + 10 * i),
					  false, true));
		EXPECT_EQ(3, iopa_ctl_limit(&c));
		/* clamped to the bounds */
		/* a pinned count holds as given, up to the ABI maximum */
		iopa_ctl_set_fixed(&c, p.max_limit + 7);
		EXPECT_EQ(p.max_limit + 7, iopa_ctl_limit(&c));
		iopa_ctl_set_fixed(&c, IOPA_CTL_LIMIT_MAX + 5);
		EXPECT_EQ(IOPA_CTL_LIMIT_MAX, iopa_ctl_limit(&c));
		iopa_ctl_set_fixed(&c, 3);
		/* 0 unfreezes: adapting again from 3 */
		iopa_ctl_set_fixed(&c, 0);
		EXPECT_EQ(pol == IOPA_CTL_POLICY_IOPA ? IOPA_CTL_MODE_FAST :
			  IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
		EXPECT_EQ(3, iopa_ctl_limit(&c));
		run(&c, &p, dev_linear, 1000, 30);
		EXPECT_GT(iopa_ctl_limit(&c), 3);
		/* unfreezing what is not frozen does nothing */
		i = iopa_ctl_limit(&c);
		iopa_ctl_set_fixed(&c, 0);
		EXPECT_EQ(i, iopa_ctl_limit(&c));
	}
}

/* A count the program pins holds; the bounds apply once it adapts again. */
TEST(fixed_ignores_bounds_until_unfrozen)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 2, 4));
	iopa_ctl_set_fixed(&c, 10);
	EXPECT_EQ(10, iopa_ctl_limit(&c));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 1, 3));
	EXPECT_EQ(10, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FIXED, iopa_ctl_mode(&c));
	iopa_ctl_set_fixed(&c, 0);
	EXPECT_EQ(3, iopa_ctl_limit(&c));
	EXPECT_NE(IOPA_CTL_MODE_FIXED, iopa_ctl_mode(&c));
}

TEST(set_policy_keeps_the_limit)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_IOPA);
	run(&c, &p, dev_linear, 1000, 2);
	ASSERT_EQ(29, iopa_ctl_limit(&c));
	iopa_ctl_set_policy(&c, IOPA_CTL_POLICY_HILLCLIMB);
	EXPECT_EQ(IOPA_CTL_POLICY_HILLCLIMB, iopa_ctl_policy(&c));
	EXPECT_EQ(29, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
	iopa_ctl_set_policy(&c, IOPA_CTL_NR_POLICIES);
	EXPECT_EQ(IOPA_CTL_POLICY_HILLCLIMB, iopa_ctl_policy(&c));
	/* a hillclimb trial is dropped, not kept, on a switch */
	feed(&c, &p, dev_linear(29), false, true);
	ASSERT_NE(29, iopa_ctl_limit(&c));
	iopa_ctl_set_policy(&c, IOPA_CTL_POLICY_IOPA);
	EXPECT_EQ(29, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
}

TEST(hillclimb_reverts_a_trial_that_does_not_pay)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	/* constant throughput: the doubling to 20 gains nothing */
	feed(&c, &p, dev_const(10), false, true);
	ASSERT_EQ(20, iopa_ctl_limit(&c));
	for (i = 0; i < 10 && iopa_ctl_limit(&c) == 20; i++)
		feed(&c, &p, dev_const(20), false, true);
	EXPECT_EQ(10, iopa_ctl_limit(&c));
	/* and it settles at or below 10 (fewer workers, same throughput) */
	run(&c, &p, dev_const, 1000, 60);
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_LE(iopa_ctl_limit(&c), 10);
}

TEST(hillclimb_settles_at_the_peak)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int changes;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	run(&c, &p, dev_peak12, 1000, 30);
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_EQ(12, iopa_ctl_limit(&c));
	/* settled: at most one timed probe (2 changes) in 30 more cycles */
	changes = run(&c, &p, dev_peak12, 1000, 30);
	EXPECT_LE(changes, 2);
	EXPECT_EQ(12, iopa_ctl_limit(&c));
}

TEST(hillclimb_reprobes_after_a_step)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i, left_steady = 0;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	run(&c, &p, dev_peak12, 1000, 30);
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	/* The device halves: the level shift starts a new search ... */
	for (i = 0; i < 4; i++) {
		feed(&c, &p, dev_peak12(iopa_ctl_limit(&c)) / 2, false, true);
		left_steady |= iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	}
	EXPECT_TRUE(left_steady);
	/* ... which settles again at the peak (same shape). */
	run(&c, &p, dev_peak12, 500, 30);
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_EQ(12, iopa_ctl_limit(&c));
}

TEST(hillclimb_finds_the_cpus_on_cpu_bound_jobs)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	for (i = 0; i < 40; i++) {
		u32 n = iopa_ctl_limit(&c);

		/* one job per CPU; more only cost */
		feed(&c, &p, n <= NCPUS ? 1000ULL * n :
		     1000ULL * NCPUS * 100 / (100 + n - NCPUS), n >= NCPUS,
		     true);
	}
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_EQ(NCPUS, iopa_ctl_limit(&c));
}

TEST(limit_always_within_bounds)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	unsigned long long seed = 7;
	int pol, i;

	params(&p);
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		iopa_ctl_init(&c, &p, pol);
		ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 3, 40));
		for (i = 0; i < 2000; i++) {
			seed = seed * 6364136223846793005ULL + 1;
			feed(&c, &p, seed >> 44, (seed >> 20) & 1,
			     ((seed >> 21) & 7) != 0);
			ASSERT_GE(iopa_ctl_limit(&c), 3);
			ASSERT_LE(iopa_ctl_limit(&c), 40);
			ASSERT_LT(iopa_ctl_mode(&c), IOPA_CTL_NR_MODES);
		}
	}
}

/* ---- policy bracket ----------------------------------------------------- */

/* Linear up to 40 jobs, flat beyond. */
static u64 dev_knee40(u32 n)
{
	return 1000ULL * (n < 40 ? n : 40);
}

/* Feed @dev until the controller is STEADY; the cycles it took, or -1. */
/*
 * Feed @dev until STEADY, at most @most cycles; the highest limit seen
 * in *@top if @top.  Return: the cycles fed, -1 if never STEADY.
 */
static int until_steady_top(struct iopa_ctl *c,
			    const struct iopa_ctl_params *p,
			    u64 (*dev)(u32), int most, u32 *top)
{
	int i;

	for (i = 0; i < most; i++) {
		if (top && iopa_ctl_limit(c) > *top)
			*top = iopa_ctl_limit(c);
		if (iopa_ctl_mode(c) == IOPA_CTL_MODE_STEADY)
			return i;
		feed(c, p, dev(iopa_ctl_limit(c)), false, true);
	}
	return -1;
}

/*
 * A bracket controller at the defaults on 2 CPUs, started as on a disk
 * that says it is rotational (from one job: iopa_ctl_set_start()).
 */
static void bracket_from_one(struct iopa_ctl *c, struct iopa_ctl_params *p)
{
	iopa_ctl_params_default(p, 2);
	iopa_ctl_init(c, p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(c, p, 1);
}

static int until_steady(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			u64 (*dev)(u32), int most)
{
	return until_steady_top(c, p, dev, most, NULL);
}

TEST(bracket_is_named_and_starts_at_8)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	EXPECT_STREQ("bracket", iopa_ctl_policy_name(IOPA_CTL_POLICY_BRACKET));
	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_EQ(8, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* init_limit still wins when set */
	p.init_limit = 7;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_EQ(7, iopa_ctl_limit(&c));
}

/* On 2 CPUs, an I/O device whose knee is at 40 jobs: no CPU-derived cap. */
TEST(bracket_doubles_past_the_cpu_count)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 12; i++) {
		feed(&c, &p, dev_knee40(iopa_ctl_limit(&c)), false, true);
		if (iopa_ctl_limit(&c) > most)
			most = iopa_ctl_limit(&c);
	}
	/* 8, 16, 32 and 64 (+25%) paid; 128 was tried */
	EXPECT_EQ(128, most);
	/* then the probes bring it down to the knee */
	ASSERT_LT(0, until_steady(&c, &p, dev_knee40, 60));
	EXPECT_GE(iopa_ctl_limit(&c), 40);
	EXPECT_LE(iopa_ctl_limit(&c), 44);
	/* a timed probe later changes nothing for good */
	run(&c, &p, dev_knee40, 1000, 60);
	EXPECT_EQ(40, c.base);
}

/* Each doubling costs a transient cycle and one measurement (from 4). */
TEST(bracket_transient_cycle_is_not_judged)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	p.init_limit = 4;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	/* the first cycle: any value, no verdict */
	EXPECT_FALSE(feed(&c, &p, 1, false, true));
	EXPECT_EQ(4, iopa_ctl_limit(&c));
	EXPECT_TRUE(feed(&c, &p, dev_knee16(4), false, true));
	ASSERT_EQ(8, iopa_ctl_limit(&c));
	/* the cycle after the change: any value, no verdict */
	EXPECT_FALSE(feed(&c, &p, 1, false, true));
	EXPECT_EQ(8, iopa_ctl_limit(&c));
	/*
	 * the measurement: 8 paid over 4, and the device queued none of
	 * the jobs added (their service time held): leap 4x
	 */
	EXPECT_TRUE(feed(&c, &p, dev_knee16(8), false, true));
	EXPECT_EQ(32, iopa_ctl_limit(&c));
}

/* Feed one measured level: its transient cycle, then one sample. */
static void feed_level(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		       u64 (*dev)(u32))
{
	feed(c, p, 1, false, true);
	feed(c, p, dev(iopa_ctl_limit(c)), false, true);
}

/*
 * A device far below its knee (linear): each doubling that keeps the
 * jobs' service time and doubles throughput is followed by a leap of
 * 4x, so the start-up from 8 reaches 256 in four levels (8, 16, 64,
 * 256), where doublings took six.
 */
TEST(bracket_leaps_where_the_device_queues_no_job)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_level(&c, &p, dev_linear);
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	feed_level(&c, &p, dev_linear);
	ASSERT_EQ(64, iopa_ctl_limit(&c));
	feed_level(&c, &p, dev_linear);
	ASSERT_EQ(256, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
}

/*
 * Throughput doubled but the jobs' service time grew by a third: the
 * jobs shrank, or the device queued some; either way no evidence of a
 * knee far above, so the next step is a doubling.
 */
TEST(bracket_no_leap_when_service_time_grows)
{
	struct iopa_ctl_params p;
	struct iopa_ctl_sample s;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_level(&c, &p, dev_linear);
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	feed(&c, &p, 1, false, true);
	s = fed(dev_linear(16), iopa_ctl_next_cycle_ms(&c, &p));
	s.svc_us = s.svc_us * 4 / 3;
	s.svc_sq = s.svc_sq * 16 / 9;
	iopa_ctl_update(&c, &p, &s, NULL);
	EXPECT_EQ(32, iopa_ctl_limit(&c));
}

/*
 * The jobs' service time held, but throughput grew by 60% for twice the
 * jobs (under IOPA_CTL_BR_UNQ_TPUT_PERMILLE of their growth): a gain,
 * but not one of a device that queued none of them (larger jobs, other
 * load): a doubling next, not a leap.
 */
TEST(bracket_no_leap_when_throughput_lags_the_jobs)
{
	struct iopa_ctl_params p;
	struct iopa_ctl_sample s;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_level(&c, &p, dev_linear);
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	feed(&c, &p, 1, false, true);
	s = fed(dev_linear(8) * 16 / 10, iopa_ctl_next_cycle_ms(&c, &p));
	iopa_ctl_update(&c, &p, &s, NULL);
	EXPECT_EQ(32, iopa_ctl_limit(&c));
}

/*
 * A leap that found the knee below it ends the leaps of the start-up,
 * even if a cached cycle (page-cache hits: another unit) sends the
 * limit back to its base in between.
 */
TEST(bracket_leaps_stay_ended_across_a_cached_cycle)
{
	struct iopa_ctl_params p;
	struct iopa_ctl_sample s;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	p.init_limit = 4;
	/* no walk past the flat top (iopa_ctl_br_walk_on()): leaps alone */
	p.max_limit = 32;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_level(&c, &p, dev_knee16);
	feed_level(&c, &p, dev_knee16);
	ASSERT_EQ(32, iopa_ctl_limit(&c));
	feed_level(&c, &p, dev_knee16);
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	s = fed(dev_knee16(16), iopa_ctl_next_cycle_ms(&c, &p));
	s.cached = true;
	iopa_ctl_update(&c, &p, &s, NULL);
	for (i = 0; i < 40 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		if (iopa_ctl_limit(&c) > most)
			most = iopa_ctl_limit(&c);
		feed(&c, &p, dev_knee16(iopa_ctl_limit(&c)), false, true);
	}
	EXPECT_GE(32, most);
	EXPECT_GE(iopa_ctl_limit(&c), 16);
	EXPECT_LE(iopa_ctl_limit(&c), 18);
}

/*
 * A hard knee at 16 from a start of 4: 8 queued nothing, so 32 is a
 * leap; it paid (twice 8's throughput) but queued half its jobs, so
 * the knee lies below it: the doubling it skipped, 16, is judged
 * against 8, and from 16 the start-up doubles without leaping, and
 * settles at the knee.
 */
TEST(bracket_leap_that_queues_takes_the_skipped_doubling)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	p.init_limit = 4;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_level(&c, &p, dev_knee16);
	ASSERT_EQ(8, iopa_ctl_limit(&c));
	feed_level(&c, &p, dev_knee16);
	ASSERT_EQ(32, iopa_ctl_limit(&c));
	feed_level(&c, &p, dev_knee16);
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	feed_level(&c, &p, dev_knee16);
	ASSERT_EQ(32, iopa_ctl_limit(&c));
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 40));
	EXPECT_GE(iopa_ctl_limit(&c), 16);
	EXPECT_LE(iopa_ctl_limit(&c), 18);
}

/*
 * 24 workers on a linear device: the leap from 16 to 64 fills no more
 * than 24, so it is the doubling it skipped, 32, that is tried next (in
 * FAST), not a bracket around 16.
 */
TEST(bracket_leap_without_demand_takes_the_skipped_doubling)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_level(&c, &p, dev_linear);
	feed_level(&c, &p, dev_linear);
	ASSERT_EQ(64, iopa_ctl_limit(&c));
	feed(&c, &p, 1, false, true);
	feed(&c, &p, dev_linear(24), false, false);
	EXPECT_EQ(32, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	for (i = 0; i < 40 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY; i++) {
		u32 n = iopa_ctl_limit(&c);

		feed(&c, &p, dev_linear(n < 24 ? n : 24), false, n <= 24);
	}
	EXPECT_GE(iopa_ctl_limit(&c), 24);
	EXPECT_LE(iopa_ctl_limit(&c), 32);
}

/*
 * The transient after a move down keeps min_cycle_ms: limit completions
 * do not drain the jobs of the higher limit still running.  So does the
 * first cycle when new bounds move its limit up before it ended.
 */
TEST(bracket_transient_after_a_move_down_keeps_the_min_cycle)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	/* no walk past the flat top: the doubling's undoing is the move */
	p.max_limit = 16;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_level(&c, &p, dev_knee3);
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 20, 1000, 1000 * 10));
	for (i = 0; i < 10 && iopa_ctl_limit(&c) == 16; i++)
		feed(&c, &p, dev_knee3(16), false, true);
	ASSERT_GT(16, iopa_ctl_limit(&c));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 99, 1000, 1000 * 10));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 100, 1000, 1000 * 10));

	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 4));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 0));
	ASSERT_EQ(8, iopa_ctl_limit(&c));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 99, 1000, 1000 * 10));
}

/* A hard knee at 16: bracket stays at 16-18 (above costs nothing). */
TEST(bracket_settles_at_a_hard_knee)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	/* the doublings and the bracket around 16, each with its transient */
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 40));
	EXPECT_GE(iopa_ctl_limit(&c), 16);
	EXPECT_LE(iopa_ctl_limit(&c), 18);
	/* settled: nothing moves for the next 7 normal cycles' worth */
	EXPECT_EQ(0, run(&c, &p, dev_knee16, 1000, 7));
}

/* A device that thrashes past 12 jobs: bracket comes down to the peak. */
TEST(bracket_comes_down_on_a_thrashing_device)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	p.init_limit = 32;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_LT(0, until_steady(&c, &p, dev_peak12, 60));
	EXPECT_GE(iopa_ctl_limit(&c), 10);
	EXPECT_LE(iopa_ctl_limit(&c), 14);
}

/*
 * A probe is judged against the base measured just before it: a load
 * that halves the device between pairs (not within them) changes
 * nothing, where comparing with older cycles would.
 */
TEST(bracket_pairs_cancel_a_load_change)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 scale = 1000;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_LT(0, until_steady(&c, &p, dev_peak12, 60));
	ASSERT_GE(iopa_ctl_limit(&c), 10);
	ASSERT_LE(iopa_ctl_limit(&c), 14);
	for (i = 0; i < 120; i++) {
		/* the load switches whenever the controller is at its base */
		if (iopa_ctl_mode(&c) == IOPA_CTL_MODE_NORMAL)
			scale = scale == 1000 ? 500 : 1000;
		feed(&c, &p, dev_peak12(iopa_ctl_limit(&c)) * scale / 1000,
		     false, true);
		ASSERT_GE(iopa_ctl_limit(&c), 8);
		ASSERT_LE(iopa_ctl_limit(&c), 16);
	}
}

/* After a shift, steps double on repeated success: 8 -> 40 in few cycles. */
TEST(bracket_steps_grow_on_repeated_success)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	p.init_limit = 8;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_fixed(&c, 8);
	iopa_ctl_set_fixed(&c, 0);
	ASSERT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
	for (i = 0; i < 16 && iopa_ctl_limit(&c) < 32; i++)
		feed(&c, &p, dev_knee40(iopa_ctl_limit(&c)), false, true);
	/* +1 per two cycles would need 48 cycles */
	EXPECT_GE(iopa_ctl_limit(&c), 32);
}

/* The model disk reading 1 MB files: best at 1 job, 35% lower from 2 on. */
static u64 dev_disk1m(u32 n)
{
	return n <= 1 ? 45000 : 29500;
}

/* The model disk reading 10 KB files: +32% at 2 jobs, then flat. */
static u64 dev_disk10k(u32 n)
{
	return n <= 1 ? 1280 : n == 2 ? 1690 : 1720;
}

/*
 * The HDD model with 23 tags reading 10 KB files (guest, bench matrix):
 * one job 1310, 2 to 16 within 1% of 1720, 32 2050, 64 2350 (past the
 * tags the elevator sorts the jobs).
 */
static u64 dev_plateau_rise(u32 n)
{
	return n <= 1 ? 1310 : n < 32 ? 1720 : n < 64 ? 2050 : 2350;
}

/*
 * No doubling on the plateau pays, so the start-up used to end on it
 * (the matrix read 74-77% of limit 64 there).  FAST walks on past the
 * flat doubling, judging each trial against the base, and takes the far
 * end where it pays for its doublings; then doubles on from there.
 */
TEST(bracket_walks_a_plateau_to_its_far_rise)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	u32 most = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	i = until_steady_top(&c, &p, dev_plateau_rise, 80, &most);
	TH_LOG("steady at %u after %d cycles", iopa_ctl_limit(&c), i);
	ASSERT_LT(0, i);
	EXPECT_GE(iopa_ctl_limit(&c), 56);
	EXPECT_LE(iopa_ctl_limit(&c), 80);
	/* one walk a start-up: the flat doubling past 64 ends it */
	EXPECT_EQ(128, most);
}

/*
 * A walk's trial is taken on two samples at least: one high sample (a
 * quarter above a flat plateau) followed by two level ones is no gain.
 */
TEST(bracket_walk_takes_no_single_sample)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 20 && iopa_ctl_limit(&c) != 32; i++)
		feed(&c, &p, dev_knee3(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(32, iopa_ctl_limit(&c));
	ASSERT_EQ(8, c.base);
	/* the transient, then one high sample and two level ones */
	feed(&c, &p, 1, false, true);
	feed(&c, &p, dev_knee3(32) * 5 / 4, false, true);
	EXPECT_EQ(32, iopa_ctl_limit(&c));
	feed(&c, &p, dev_knee3(32), false, true);
	feed(&c, &p, dev_knee3(32), false, true);
	EXPECT_EQ(8, c.base);
	EXPECT_EQ(64, iopa_ctl_limit(&c));
}

/* The same at one cycle of history: a walk's gain needs a second sample. */
TEST(bracket_walk_pays_at_one_cycle_of_history)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	p.history = 1;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_LT(0, until_steady(&c, &p, dev_plateau_rise, 80));
	EXPECT_GE(iopa_ctl_limit(&c), 56);
}

/*
 * A walk goes no further than IOPA_CTL_BR_WALK_MAX (32) times its base,
 * whatever max_limit allows: a flat top past 3 jobs, from 8, walks to
 * 256, not to 4096.
 */
TEST(bracket_walk_stops_at_32x_the_base)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;

	iopa_ctl_params_default(&p, 2);
	p.max_limit = 4096;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_LT(0, until_steady_top(&c, &p, dev_knee3, 60, &most));
	EXPECT_EQ(256, most);
}

/*
 * No walk after a leap for jobs the device did not queue failed: the
 * leap looked past the plateau already (16 to 64 on a hard knee of 16,
 * then the doubling it skipped, 32, flat), and a walk would try 64 again
 * against a lower bar.
 */
TEST(bracket_no_walk_after_a_failed_leap)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_LT(0, until_steady_top(&c, &p, dev_knee16, 60, &most));
	EXPECT_EQ(64, most);
	EXPECT_EQ(16, iopa_ctl_limit(&c));
}

/*
 * A disk that says it is rotational whose two jobs read 1.6x one, flat
 * from 2 to 31 jobs and 37% more from 32 on (past its tags).
 */
static u64 dev_rot_plateau(u32 n)
{
	return n <= 1 ? 1000 : n < 32 ? 1600 : 2200;
}

/*
 * A rotational start's leap that neither paid nor lost stood on the
 * plateau: from 1, 2 pays 1.6x and leaps to 8 (flat), back to the
 * doubling it skipped, 4 (flat); the walk goes on past the leap, to 16,
 * not to 8 again, and on to the rise at 32.
 */
TEST(bracket_walk_goes_past_a_rotational_leap)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 20 && iopa_ctl_limit(&c) <= 2; i++)
		feed(&c, &p, dev_rot_plateau(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(8, iopa_ctl_limit(&c));
	for (i = 0; i < 20 && iopa_ctl_limit(&c) == 8; i++)
		feed(&c, &p, dev_rot_plateau(8), false, true);
	ASSERT_EQ(4, iopa_ctl_limit(&c));
	ASSERT_EQ(2, c.base);
	for (i = 0; i < 20 && iopa_ctl_limit(&c) == 4; i++)
		feed(&c, &p, dev_rot_plateau(4), false, true);
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	ASSERT_LT(0, until_steady_top(&c, &p, dev_rot_plateau, 80, &most));
	EXPECT_GE(iopa_ctl_limit(&c), 28);
}

/* Two jobs read 1.6x one, 4 as much as 2, and 8 on 25% less. */
static u64 dev_rot_thrash8(u32 n)
{
	return n <= 1 ? 1000 : n < 8 ? 1600 : 1200;
}

/*
 * A rotational start's leap that lost outright was no plateau: from 2,
 * the leap to 8 lost, 4 (the doubling it skipped) reads flat, and there
 * is no walk past it: the start-up never goes above 8.
 */
TEST(bracket_no_walk_past_a_leap_that_lost)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;

	bracket_from_one(&c, &p);
	ASSERT_LT(0, until_steady_top(&c, &p, dev_rot_thrash8, 80, &most));
	EXPECT_EQ(8U, most);
	EXPECT_GE(4, iopa_ctl_limit(&c));
}

/*
 * After a doubling that paid, one that read a stall's low sample (15%
 * under a flat plateau: lost outright) still walks, judged against the
 * base's level alone; the plateau's rise at 32 is found.  Where the
 * start-up's first doubling lost, there is no walk (next test).
 */
TEST(bracket_walk_after_a_paid_doubling_lost_to_a_stall)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 20 && iopa_ctl_limit(&c) < 4; i++)
		feed(&c, &p, dev_plateau_rise(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(4, iopa_ctl_limit(&c));
	ASSERT_EQ(2, c.base);
	/* the transient, then the stall's sample */
	feed(&c, &p, 1, false, true);
	feed(&c, &p, dev_plateau_rise(4) * 85 / 100, false, true);
	EXPECT_EQ(8, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	ASSERT_LT(0, until_steady_top(&c, &p, dev_plateau_rise, 80, &most));
	EXPECT_GE(iopa_ctl_limit(&c), 32);
}

/*
 * The same stall where the plateau is a loss: 4 and up read 15% under
 * 2, after 2 paid.  The walk's first trial reads as low against the
 * base alone and ends it: back to 2, never above 8.
 */
static u64 dev_loss_past2(u32 n)
{
	return n <= 1 ? 1310 : n == 2 ? 1720 : 1462;
}

TEST(bracket_walk_ends_on_a_loss_past_a_paid_doubling)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;

	bracket_from_one(&c, &p);
	ASSERT_LT(0, until_steady_top(&c, &p, dev_loss_past2, 80, &most));
	/* the walk's one trial, 8, and no further */
	EXPECT_EQ(8U, most);
	EXPECT_EQ(2, iopa_ctl_limit(&c));
}

/*
 * A rotational disk's plateau, flat from 2 to 63 jobs, 30% more from 64
 * (the HDD model with 42 tags reading 100 KB files: 16.5 and 18.4 MB/s
 * at 32 and 64 over 13.1 from 2 to 16, simulator).
 */
static u64 dev_far_rise(u32 n)
{
	return n <= 1 ? 1000 : n < 64 ? 1600 : 2080;
}

/*
 * The walk's last trial (32x the base: 64 from 2) read 30% over the
 * base, beyond the noise, but within it of the 27.6% its five doublings
 * owe: as the last, it owes one doubling's need, and it is taken, not
 * the base.  Before, such a tie went back to 2.
 */
TEST(bracket_walk_takes_a_last_trial_that_leans_past_its_need)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;

	bracket_from_one(&c, &p);
	ASSERT_LT(0, until_steady_top(&c, &p, dev_far_rise, 80, &most));
	EXPECT_EQ(128U, most);
	EXPECT_LE(48, iopa_ctl_limit(&c));
}

/*
 * A plateau of 1600 from 2 to 63 jobs and 1952 from 64 (22% more, the
 * guest's HDD model with 10 tags reading 100 KB files: 12.8 and 16.5
 * MB/s), measured cleanly.  The walk's last trial, 64, owes 27.6% for its
 * five doublings, and reads 22% over the plateau: beyond the noise by
 * more than one doubling's need, it is taken at once, not after a way
 * back to the base and a trial again (iopa_ctl_br_far_judge()).
 */
static u64 dev_rise22_at64(u32 n)
{
	return n <= 1 ? 1000 : n < 64 ? 1600 : 1952;
}

TEST(bracket_walk_last_trial_leans_past_one_doubling)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 low = 0;
	bool seen = false;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 80; i++) {
		u32 n = iopa_ctl_limit(&c);

		seen |= n >= 64;
		if (seen && (!low || n < low))
			low = n;
		feed(&c, &p, dev_rise22_at64(n), false, true);
	}
	ASSERT_TRUE(seen);
	EXPECT_LE(32U, low) TH_LOG("down to %u after 64", low);
	EXPECT_LE(48U, iopa_ctl_limit(&c));
}

/*
 * The same lean on samples of 4 jobs each (noise of +-58%): 28% over the
 * base, past the trial's 27.6% need, but not beyond the trial's own
 * noise.  No gain: back to the base.
 */
TEST(bracket_walk_lean_is_beyond_the_noise)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 80 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		u32 n = iopa_ctl_limit(&c);
		struct iopa_ctl_sample s;

		if (n < 64) {
			feed(&c, &p, dev_far_rise(n), false, true);
			continue;
		}
		s = fed(1600 * 128 / 100, iopa_ctl_next_cycle_ms(&c, &p));
		s.completions = 4;
		s.svc_us = 4 * FEED_SVC_US;
		s.svc_sq = 4 * FEED_SVC_US * FEED_SVC_US;
		iopa_ctl_update(&c, &p, &s, NULL);
	}
	EXPECT_GE(4, iopa_ctl_limit(&c));
}

/*
 * A 100 ms sample of @tput: 50 completions whose service times spread
 * (cv^2 0.25), a standard error of 7.3% (the guest's HDD model at 2 to
 * 64 jobs: 5.5-7%).
 */
static struct iopa_ctl_sample cv_sample(u64 tput)
{
	struct iopa_ctl_sample smp = fed(tput, 100);

	smp.completions = 50;
	smp.svc_us = 50 * FEED_SVC_US;
	smp.svc_sq = 50 * FEED_SVC_US * FEED_SVC_US * 5 / 4;
	return smp;
}

/*
 * A walk's trial whose first sample a stall cut by 21% (the guest's HDD
 * model with 42 tags, 10 KB files: 100 ms samples of 20 jobs, the walk's
 * 8 read 0.80x of the plateau once and the start-up stayed at 2, 75% of
 * the best fixed limit): one sample is no loss, the walk measures again
 * and goes on to the far end (1600 from 2 to 63 jobs, 2080 from 64, in
 * samples of 7.3%: cv_sample()).
 */
TEST(bracket_walk_loss_takes_two_samples)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 at16 = 0, most = 0;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 80; i++) {
		u32 n = iopa_ctl_limit(&c);
		u64 t = n <= 1 ? 1000 : n < 64 ? 1600 : 2080;
		struct iopa_ctl_sample smp;

		if (n == 16 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_FAST &&
		    ++at16 == 2)
			t = 1264;	/* the transient, then the stall */
		if (n > most)
			most = n;
		smp = cv_sample(t);
		iopa_ctl_update(&c, &p, &smp, NULL);
	}
	ASSERT_LE(2U, at16);
	EXPECT_LE(64U, most);
	EXPECT_LE(48U, iopa_ctl_limit(&c));
}

/*
 * The guest's HDD model with 10 tags reading 100 KB files (bench matrix,
 * seed 11982533): 2 to 8 jobs read alike, 16 1.12x, 32 1.28x, 64 1.31x;
 * one job 0.8x.  FAST measured the base, 2, on one sample 18% high, so
 * its doubling to 4 read as a loss (0.86x over two samples), and the
 * walk's trial at 8, judged against that sample alone, as another: the
 * start-up went back to 2 and stayed there, 75.5% of the best fixed
 * limit.  The trial read as much as the doubling: it is held, the base
 * measured afresh, and as the trial does not lose against that, the
 * walk resumes past it, to the far end (iopa_ctl_br_walk_hold()).
 * Without: 2 for the rest of the run.
 */
static u64 dev_hdd_tags10(u32 n)
{
	return n >= 64 ? 1310 : n >= 32 ? 1280 : n >= 16 ? 1120 :
	       n >= 2 ? 1000 : 800;
}

TEST(bracket_walk_goes_on_past_a_doubling_lost_to_one_high_sample)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 at2 = 0, most = 0;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 100; i++) {
		u32 n = iopa_ctl_limit(&c);
		u64 t = dev_hdd_tags10(n);
		struct iopa_ctl_sample smp;

		/* the transient at 2, then FAST's one sample, high */
		if (n == 2 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_FAST &&
		    ++at2 == 2)
			t = 1180;
		/* the walk's trial at 8 reads 6% low (the noise) */
		if (n == 8 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_FAST)
			t = 940;
		if (n > most)
			most = n;
		/* samples of 3.5% (cv_sample()'s jobs, 4x as many) */
		smp = cv_sample(t);
		smp.completions *= 4;
		smp.svc_us *= 4;
		smp.svc_sq *= 4;
		iopa_ctl_update(&c, &p, &smp, NULL);
	}
	TH_LOG("most %u, at %u after 10 s", most, iopa_ctl_limit(&c));
	ASSERT_LE(2U, at2);
	/* the walk got to its trial at 8 */
	ASSERT_LE(8U, most);
	EXPECT_LE(32U, most);
	EXPECT_LE(32U, iopa_ctl_limit(&c));
}

/* What far_run() does once the walk is back at the base. */
enum far_twist {
	FAR_PLAIN,
	FAR_BOUNDS,	/* the upper bound set to 16 */
	FAR_CPUS,	/* every sample from then on with saturated CPUs */
	FAR_REFIXED,	/* a fixed limit set and lifted (a group's leaver) */
	FAR_CACHED,	/* one sample of cache hits (another unit) */
};

/*
 * A plateau of 1600 from 2 jobs on, rising to @far at 64, fed from one
 * job with samples of 7.3% (cv_sample()), where FAST measured the base,
 * 2, at 1776 (11% high: within the noise of one sample), 64 and up read
 * @far in FAST and @again after (counted in *@retries), and every other
 * sample reads the device's level; @twist once the walk is back at 2.
 * *@next (if not NULL, 0 before) is set to the first limit after a
 * retry that is neither 2 nor 64.  Return: the limit after 80 cycles.
 */
static u32 far_run(u64 far, u64 again, enum far_twist twist, u32 *most,
		   u32 *retries, u32 *next)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	bool back = false;
	int i;

	*retries = 0;
	bracket_from_one(&c, &p);
	for (i = 0; i < 80; i++) {
		u32 n = iopa_ctl_limit(&c);
		u64 t = n <= 1 ? 1000 : n < 64 ? 1600 : far;
		struct iopa_ctl_sample smp;

		if (n == 2 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_FAST)
			t = 1776;
		/* 64 read @far in FAST, @again after */
		if (n >= 64 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_FAST) {
			t = again;
			(*retries)++;
		}
		if (n > *most)
			*most = n;
		/* the first limit after a retry, neither the base nor 64 */
		if (next && *retries && !*next && n != 2 && n < 64)
			*next = n;
		if (!back && *most >= 64 && n == 2) {
			back = true;
			if (twist == FAR_BOUNDS)
				if (iopa_ctl_set_bounds(&c, &p, 0, 16))
					return 0;
			if (twist == FAR_REFIXED) {
				iopa_ctl_set_fixed(&c, 2);
				iopa_ctl_set_fixed(&c, 0);
			}
		}
		smp = cv_sample(t);
		smp.cpu_saturated = back && twist == FAR_CPUS;
		if (back && twist == FAR_CACHED) {
			smp.cached = true;
			twist = FAR_PLAIN;
		}
		iopa_ctl_update(&c, &p, &smp, NULL);
	}
	return iopa_ctl_limit(&c);
}

static u32 far_after_a_high_base(u64 far, u64 again, u32 *most,
				 u32 *retries)
{
	return far_run(far, again, FAR_PLAIN, most, retries, NULL);
}

/*
 * The walk's last trial, 64, read 1952: 22% over the plateau, but only
 * 15.6% over the level the walk measured it against (the high base and
 * the doubling's 1600), not beyond the noise of one doubling's need.  It
 * is kept, and the base, measured afresh over three samples at 1600,
 * shows the gain: the far end is taken.  Before, back to 2 for good (the
 * guest's HDD model with 10 tags: 85% of the best fixed limit).
 */
TEST(bracket_walk_far_trial_judged_against_a_fresh_base)
{
	u32 most = 0, retries, end;

	end = far_after_a_high_base(1952, 1952, &most, &retries);

	EXPECT_LE(64U, most);
	EXPECT_LE(48U, end) TH_LOG("ended at %u", end);
}

/*
 * The same with the far end 12.5% over the plateau: kept (6.6% over the
 * walk's level), but within the noise of the fresh base by its need.
 * Not tried again, not taken: back to the plateau.
 */
TEST(bracket_walk_far_trial_must_beat_the_fresh_base_beyond_noise)
{
	u32 most = 0, retries, end;

	end = far_after_a_high_base(1800, 1800, &most, &retries);
	EXPECT_EQ(64U, most);
	/* not even tried again */
	EXPECT_EQ(0U, retries);
	EXPECT_GE(4U, end) TH_LOG("ended at %u", end);
}

/*
 * 1600 from 2 to 31 jobs, 1952 from 32 (22% more); no job waits beyond
 * 40 (a tool with 40 workers).  The walk's trial at 32 ties with its
 * four doublings' need; the next, 64, is never filled.  The trial at 32
 * was kept, and is the walk's last: it pays a doubling's need, and is
 * taken (iopa_ctl_br_far_last()).  Before, back to 2 (the guest: 64
 * workers, a walk whose 128 went unfilled went back to 4 where its 64
 * had read 1.25x).
 */
TEST(bracket_walk_far_trial_kept_past_an_unfilled_one)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 low = 0;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 80; i++) {
		u32 n = iopa_ctl_limit(&c);

		if ((low || n >= 64) && (!low || n < low))
			low = n;
		feed(&c, &p, n <= 1 ? 1000 : n < 32 ? 1600 : 1952, false,
		     n <= 40);
	}
	/* taken at once: no way back to the base */
	EXPECT_LE(16U, low) TH_LOG("down to %u after 64", low);
	EXPECT_LE(24U, iopa_ctl_limit(&c))
		TH_LOG("ended at %u", iopa_ctl_limit(&c));
	EXPECT_GE(40U, iopa_ctl_limit(&c));
}

/*
 * The same with 32 reading 10% over the plateau in samples of 7.3%
 * (cv_sample()): past its need by less than the noise, the kept trial
 * is not taken at the unfilled one; back to the base.
 */
TEST(bracket_walk_unfilled_far_trial_within_noise_not_taken)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 low = 0;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 80; i++) {
		u32 n = iopa_ctl_limit(&c);
		struct iopa_ctl_sample smp;

		if ((low || n >= 64) && (!low || n < low))
			low = n;
		smp = cv_sample(n <= 1 ? 1000 : n < 32 ? 1600 : 1760);
		smp.demand = n <= 40;
		iopa_ctl_update(&c, &p, &smp, NULL);
	}
	ASSERT_LT(0U, low);
	EXPECT_GE(4U, low);
}

/*
 * 1600 from 2 to 31 jobs, 1920 from 32 to 63 (20% more), 1700 from 64:
 * the walk's trial at 32 ties with its four doublings' need, its last,
 * 64, with its one (6% more).  Of the two, the one that read more is
 * kept and judged: 32 is taken.
 */
TEST(bracket_walk_keeps_its_best_far_trial)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 80; i++) {
		u32 n = iopa_ctl_limit(&c);

		feed(&c, &p, n <= 1 ? 1000 : n < 32 ? 1600 : n < 64 ? 1920 :
		     1700, false, true);
	}
	EXPECT_LE(16U, iopa_ctl_limit(&c))
		TH_LOG("ended at %u", iopa_ctl_limit(&c));
	EXPECT_GE(48U, iopa_ctl_limit(&c));
}

/*
 * A far trial that read 22% over the plateau in the walk and 6% when
 * tried again: its first reading was noise that the fresh base alone
 * cannot tell (it was kept for reading high).  Not taken.
 */
TEST(bracket_walk_far_trial_must_pay_when_tried_again)
{
	u32 most = 0, retries, end;

	end = far_after_a_high_base(1952, 1700, &most, &retries);

	EXPECT_LE(64U, most);
	EXPECT_GE(4U, end) TH_LOG("ended at %u", end);
}

/* A retry that lost goes on as any walk that did not pay: down first. */
TEST(bracket_walk_far_retry_lost_searches_down_first)
{
	u32 most = 0, retries, next = 0;

	far_run(1952, 1700, FAR_PLAIN, &most, &retries, &next);
	ASSERT_LT(0U, retries);
	EXPECT_EQ(1U, next);
}

/*
 * Bounds lowered to 16 while the base is measured afresh: the far trial
 * kept, 64, is past them and not tried (it was measured where the bounds
 * no longer reach).
 */
TEST(bracket_walk_far_trial_not_past_new_bounds)
{
	u32 most = 0, retries, end;

	end = far_run(1952, 1952, FAR_BOUNDS, &most, &retries, NULL);
	ASSERT_LT(0U, end);
	EXPECT_EQ(0U, retries);
	EXPECT_GE(16U, end);
}

/*
 * While the base is measured afresh, something makes the far trial kept
 * stale: it is not tried again.
 * - on_saturated_cpus: every sample from then on saturated the CPUs;
 * - on_resume: a fixed limit set and lifted (what a device group does to
 *   a member that leaves it): the controller resumes with a search of
 *   its own, and the far trial, of another context, is forgotten;
 * - on_a_unit_change: a sample of cache hits: what follows is in another
 *   unit, and the far trial, measured in the old one, is forgotten.
 */
FIXTURE(far_stale) {
};

FIXTURE_VARIANT(far_stale) {
	enum far_twist twist;
};

FIXTURE_VARIANT_ADD(far_stale, on_saturated_cpus) {
	.twist = FAR_CPUS,
};

FIXTURE_VARIANT_ADD(far_stale, on_resume) {
	.twist = FAR_REFIXED,
};

FIXTURE_VARIANT_ADD(far_stale, on_a_unit_change) {
	.twist = FAR_CACHED,
};

FIXTURE_SETUP(far_stale)
{
}

FIXTURE_TEARDOWN(far_stale)
{
}

TEST_F(far_stale, bracket_walk_far_trial_not_tried_again)
{
	u32 most = 0, retries;

	far_run(1952, 1952, variant->twist, &most, &retries, NULL);
	EXPECT_LE(64U, most);
	EXPECT_EQ(0U, retries);
}

/*
 * With a history of one sample, the walk's last trial still needs two:
 * 64 read 25% over the plateau once, then 12.5% under it.  Not taken.
 */
TEST(bracket_walk_last_trial_takes_no_single_sample)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 at64 = 0, most = 0;
	int i;

	bracket_from_one(&c, &p);
	p.history = 1;
	for (i = 0; i < 60; i++) {
		u32 n = iopa_ctl_limit(&c);
		u64 t = n <= 1 ? 1000 : 1600;

		if (n > most)
			most = n;
		if (n >= 64 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_FAST) {
			at64++;
			/* the transient, then 2000, then 1400 */
			t = at64 == 2 ? 2000 : 1400;
		}
		feed(&c, &p, t, false, true);
	}
	ASSERT_LE(2U, at64);
	/* not taken: no doubling from it */
	EXPECT_EQ(64U, most);
	EXPECT_GE(8U, iopa_ctl_limit(&c))
		TH_LOG("ended at %u", iopa_ctl_limit(&c));
}

/*
 * A walk from 2 keeps its trial at 16 (8% over the plateau), then its
 * trial at 32 pays (30%) and the start-up goes on from 32; 64 reads as
 * 32.  Back at 32 the kept trial is another base's: forgotten, and the
 * base is probed after one sample, not measured over history samples
 * for a far trial to judge.
 */
TEST(bracket_walk_far_trial_forgotten_when_the_walk_pays)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 at32 = 0;
	bool back = false;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 60; i++) {
		u32 n = iopa_ctl_limit(&c);

		if (n == 64)
			back = true;
		if (back && n == 32 &&
		    iopa_ctl_mode(&c) == IOPA_CTL_MODE_NORMAL)
			at32++;
		if (back && n != 32 && n != 64)
			break;
		feed(&c, &p, n <= 1 ? 1000 : n < 16 ? 1600 : n < 32 ? 1728 :
		     2080, false, true);
	}
	ASSERT_TRUE(back);
	/* the transient and one sample */
	EXPECT_EQ(2U, at32);
}

/* 8000 at 8 and 16 jobs, 8900 from 32 on, where the CPUs saturate. */
static u64 dev_sat_rise32(u32 n)
{
	return n < 32 ? 8000 : 8900;
}

/*
 * A walk's trial that leans but at which the CPUs saturate is no last
 * trial: the walk stops there (iopa_ctl_br_walk_on()), and the start-up
 * goes back to the base, not on from the trial.
 */
TEST(bracket_walk_lean_not_on_saturated_cpus)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 80 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		u32 n = iopa_ctl_limit(&c);
		struct iopa_ctl_sample s = fed(dev_sat_rise32(n),
					       iopa_ctl_next_cycle_ms(&c, &p));

		if (n > most)
			most = n;
		s.cpu_saturated = n >= 32;
		iopa_ctl_update(&c, &p, &s, NULL);
	}
	EXPECT_EQ(32U, most);
	EXPECT_GE(8, iopa_ctl_limit(&c));
}

/*
 * The same with 32 the upper bound: the walk's last trial, where the CPUs
 * saturate, owes its doublings' need, not one (iopa_ctl_br_walk_last()):
 * back to the base.
 */
TEST(bracket_walk_last_trial_not_on_saturated_cpus)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 32));
	for (i = 0; i < 80 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		u32 n = iopa_ctl_limit(&c);
		struct iopa_ctl_sample s = fed(dev_sat_rise32(n),
					       iopa_ctl_next_cycle_ms(&c, &p));

		if (n > most)
			most = n;
		s.cpu_saturated = n >= 32;
		iopa_ctl_update(&c, &p, &s, NULL);
	}
	EXPECT_EQ(32U, most);
	EXPECT_GE(8, iopa_ctl_limit(&c));
}

/*
 * Whether a leap lost is judged on its own measurement's noise, not on
 * the base's alone: a leap to 8 that read 12% under 2 on 8 jobs (within
 * its noise: no outright loss) stood on the plateau, and the walk goes
 * past it from 4.
 */
TEST(bracket_leap_loss_judged_on_its_own_noise)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	struct iopa_ctl_sample s;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 20 && iopa_ctl_limit(&c) <= 2; i++)
		feed(&c, &p, dev_rot_plateau(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(8, iopa_ctl_limit(&c));
	feed(&c, &p, 1, false, true);		/* the transient */
	s = fed(dev_rot_plateau(2) * 88 / 100, iopa_ctl_next_cycle_ms(&c, &p));
	s.completions = 8;
	s.svc_us = 8 * FEED_SVC_US;
	s.svc_sq = 8 * FEED_SVC_US * FEED_SVC_US;
	iopa_ctl_update(&c, &p, &s, NULL);
	ASSERT_EQ(4, iopa_ctl_limit(&c));
	EXPECT_EQ(8U, c.br_leapt);
	for (i = 0; i < 20 && iopa_ctl_limit(&c) == 4; i++)
		feed(&c, &p, dev_rot_plateau(4), false, true);
	EXPECT_EQ(16, iopa_ctl_limit(&c));
}

/*
 * A leap the bounds cut (max_limit 6: to 6, not 8) that read flat: the
 * walk from 4 would go to 6 again, the leap's own limit, against a lower
 * bar; there is none.
 */
TEST(bracket_no_walk_back_to_a_cut_leap)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	p.max_limit = 6;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	for (i = 0; i < 20 && iopa_ctl_limit(&c) <= 2; i++)
		feed(&c, &p, dev_rot_plateau(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(6, iopa_ctl_limit(&c));
	for (i = 0; i < 20 && iopa_ctl_limit(&c) == 6; i++)
		feed(&c, &p, dev_rot_plateau(6), false, true);
	ASSERT_EQ(4, iopa_ctl_limit(&c));
	for (i = 0; i < 20 && iopa_ctl_limit(&c) == 4; i++)
		feed(&c, &p, dev_rot_plateau(4), false, true);
	EXPECT_GT(6, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));
}

/*
 * Cache hits' jump from a rotational start to the default start (1 to
 * 8) is no leap from 2: if it does not pay, no walk past it.
 */
TEST(bracket_no_walk_past_the_jump_of_cache_hits)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 40 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		struct iopa_ctl_sample s = fed(5000,
					       iopa_ctl_next_cycle_ms(&c, &p));

		if (iopa_ctl_limit(&c) > most)
			most = iopa_ctl_limit(&c);
		s.block_io = false;
		iopa_ctl_update(&c, &p, &s, NULL);
	}
	EXPECT_EQ(8U, most);
	EXPECT_EQ(0U, c.br_leapt);
}

/* Flat from 1 to 3, 80% more from 4 on. */
static u64 dev_rise_at4(u32 n)
{
	return n < 4 ? 1000 : 1800;
}

/*
 * A walk that pays is no first doubling: from a rotational start of 1,
 * 2 flat and a walk to 4 that paid 1.8x, the next step is a doubling to
 * 8, not the rotational start's leap of 4x (iopa_ctl_br_double()).
 */
TEST(bracket_walk_win_is_no_rotational_leap)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 20 && c.base < 4; i++)
		feed(&c, &p, dev_rise_at4(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(4, c.base);
	EXPECT_EQ(8, iopa_ctl_limit(&c));
}

/* Flat from 8 to 32, half of it from 64 on (a device that thrashes). */
static u64 dev_plateau_drop(u32 n)
{
	return n < 8 ? 1000ULL * n : n < 64 ? 8000 : 4000;
}

/*
 * A walk's trial that reads less than the base ends the walk: back to
 * the base and bracket it, never above that trial.
 */
TEST(bracket_walk_ends_where_the_plateau_loses)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 60 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		u32 n = iopa_ctl_limit(&c);

		if (n > most)
			most = n;
		feed(&c, &p, dev_plateau_drop(n), false, true);
		/* the trial that lost is not probed again in this search */
		if (n == 64 && iopa_ctl_limit(&c) != 64)
			EXPECT_EQ(64, c.from);
	}
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_EQ(64, most);
	EXPECT_GE(iopa_ctl_limit(&c), 8);
	EXPECT_LE(iopa_ctl_limit(&c), 18);
}

/*
 * A walk's trial the submitter cannot fill (32 workers) ends the walk
 * there; the start-up walks no more.
 */
TEST(bracket_walk_ends_without_demand)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 60 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		u32 n = iopa_ctl_limit(&c);

		if (n > most)
			most = n;
		feed(&c, &p, dev_knee3(n < 32 ? n : 32), false, n <= 32);
		/* back to the base at once, that trial not tried again */
		if (n == 64) {
			EXPECT_EQ(8, iopa_ctl_limit(&c));
			EXPECT_EQ(64, c.rejected);
		}
	}
	EXPECT_EQ(64, most);
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_LE(iopa_ctl_limit(&c), 10);
}

/*
 * No walk where the doubling lost outright (a disk whose best is one
 * job: 1 MB files, 35% less at two), nor where the CPUs are what the
 * jobs wait on.
 */
TEST(bracket_no_walk_when_the_doubling_lost_or_the_cpus_saturate)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	bracket_from_one(&c, &p);
	feed_level(&c, &p, dev_disk1m);
	ASSERT_EQ(2, iopa_ctl_limit(&c));
	feed_level(&c, &p, dev_disk1m);
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_NORMAL, iopa_ctl_mode(&c));

	/* flat from 8 on the CPUs, which saturate, with block I/O */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 12; i++) {
		struct iopa_ctl_sample s = fed(8000,
					       iopa_ctl_next_cycle_ms(&c, &p));

		s.cpu_saturated = true;
		iopa_ctl_update(&c, &p, &s, NULL);
		EXPECT_GE(16, iopa_ctl_limit(&c));
	}
}

/*
 * A rotational disk starts at one job: set_start moves a controller that
 * has measured nothing, and then only sets where restarts begin; an
 * operator's init_limit wins; other policies ignore it.
 */
TEST(bracket_starts_at_1_on_a_rotational_disk)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_TRUE(iopa_ctl_set_start(&c, &p, 1));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* 1 -> 2 loses 35%: it stays at 1 */
	ASSERT_LT(0, until_steady(&c, &p, dev_disk1m, 40));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	/* 1 -> 2 pays 32%, 2 -> 4 2%: it settles at 2 */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	ASSERT_LT(0, until_steady(&c, &p, dev_disk10k, 40));
	EXPECT_EQ(2, iopa_ctl_limit(&c));
	/* once the start is measured, the limit stays */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed(&c, &p, dev_knee16(4), false, true);	/* transient */
	EXPECT_TRUE(iopa_ctl_set_start(&c, &p, 1));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed(&c, &p, dev_knee16(8), false, true);	/* transient */
	feed(&c, &p, dev_knee16(8), false, true);
	EXPECT_FALSE(iopa_ctl_set_start(&c, &p, 1));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	/* init_limit wins, and the other policies keep their start */
	p.init_limit = 6;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_FALSE(iopa_ctl_set_start(&c, &p, 1));
	EXPECT_EQ(6, iopa_ctl_limit(&c));
	p.init_limit = 0;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	EXPECT_FALSE(iopa_ctl_set_start(&c, &p, 1));
	EXPECT_EQ(iopa_ctl_limit(&c), c.base);
}

/* The demo's virtio disk (64 KiB files), MB/s: it says it is rotational. */
static u64 dev_virtio(u32 n)
{
	static const u64 mbs[] = { 0, 59, 97, 110, 119, 124, 128, 130, 134 };

	return n < 9 ? mbs[n] : 135;
}

/* +60% at 2 jobs, then +6-7% a doubling up to 16. */
static u64 dev_gentle(u32 n)
{
	return n <= 1 ? 1000 : n < 4 ? 1600 : n < 8 ? 1700 : n < 16 ? 1810 :
	       1930;
}

/*
 * A rotational start whose first doubling scaled (1.5x and more) leaps
 * to 8: the demo's virtio disk says rotational.  One whose doubling paid
 * less (the model disk on 10 KB files: +32%) doubles as before, and one
 * whose doubling lost stays at 1; so does a start of 1 the operator set.
 */
TEST(bracket_rotational_start_leaps_where_two_jobs_scale)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 seen[4] = { 0 }, i, n = 0;

	bracket_from_one(&c, &p);
	for (i = 0; i < 12 && n < 4; i++) {
		if (!n || seen[n - 1] != iopa_ctl_limit(&c))
			seen[n++] = iopa_ctl_limit(&c);
		feed(&c, &p, dev_virtio(iopa_ctl_limit(&c)), false, true);
	}
	EXPECT_EQ(1U, seen[0]);
	EXPECT_EQ(2U, seen[1]);
	EXPECT_EQ(8U, seen[2]);
	/* +32% at 2: 4 next, not 8 */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	for (i = 0; i < 12 && iopa_ctl_limit(&c) < 3; i++)
		feed(&c, &p, dev_disk10k(iopa_ctl_limit(&c)), false, true);
	EXPECT_EQ(4U, iopa_ctl_limit(&c));
	/*
	 * A leap that loses (2 to 8 must gain 15%; this disk gains 6-7% a
	 * doubling from 2 to 16) tries the doubling it skipped: it climbs
	 * on, where it would have bracketed 2 a job at a time.
	 */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	ASSERT_LT(0, until_steady(&c, &p, dev_gentle, 60));
	EXPECT_LE(8U, iopa_ctl_limit(&c));
	/* an operator's start of 1 doubles */
	p.init_limit = 1;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 12 && iopa_ctl_limit(&c) < 3; i++)
		feed(&c, &p, dev_virtio(iopa_ctl_limit(&c)), false, true);
	EXPECT_EQ(4U, iopa_ctl_limit(&c));
}

/*
 * A remembered knee (kernel/knee.c) is where the start-up begins; at or
 * below the start limit it changes nothing; an operator's init_limit and
 * the other policies keep their start.
 */
TEST(bracket_starts_at_a_known_knee)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 16, 0));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/*
	 * the knee checked, it stays (a hard knee at 16), after a walk
	 * over the flat top to 256 (iopa_ctl_br_walk_on())
	 */
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 60));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	/* at the start limit: nothing to skip */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_FALSE(iopa_ctl_set_known(&c, &p, 8, 0));
	EXPECT_EQ(8, iopa_ctl_limit(&c));
	/* below the start (a shallow device): it starts there, and stays */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 3, 0));
	EXPECT_EQ(3, iopa_ctl_limit(&c));
	ASSERT_LT(0, until_steady(&c, &p, dev_knee3, 40));
	EXPECT_EQ(3, iopa_ctl_limit(&c));
	/* a knee too low: the doublings leave it */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 10, 0));
	ASSERT_LT(0, until_steady(&c, &p, dev_knee40, 60));
	EXPECT_LE(40, iopa_ctl_limit(&c));
	EXPECT_GE(44, iopa_ctl_limit(&c));
	/* once the start is measured, too late */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed(&c, &p, dev_knee16(8), false, true);	/* transient */
	feed(&c, &p, dev_knee16(8), false, true);
	EXPECT_FALSE(iopa_ctl_set_known(&c, &p, 16, 0));
	p.init_limit = 6;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_FALSE(iopa_ctl_set_known(&c, &p, 16, 0));
	EXPECT_EQ(6, iopa_ctl_limit(&c));
	p.init_limit = 0;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	EXPECT_FALSE(iopa_ctl_set_known(&c, &p, 16, 0));
}

/*
 * On a disk that says it is rotational, a known knee's start probes one
 * job first: a knee of small files (4) is far too high for 1 MB files
 * (flat from 2 up, 1 a third better), and the bracket of quarters would
 * stay on the plateau; on a disk that gains from depth the probe loses
 * and the knee stays.
 */
TEST(bracket_known_knee_on_a_rotational_disk_probes_one_job)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	bracket_from_one(&c, &p);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 8, 0));
	EXPECT_EQ(8, iopa_ctl_limit(&c));
	ASSERT_LT(0, until_steady(&c, &p, dev_disk1m, 60));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	/* a virtio disk that says "rotational": the knee holds */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 16, 0));
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 60));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	/* a knee of 2 saves less than the probe costs: not used */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	EXPECT_FALSE(iopa_ctl_set_known(&c, &p, 2, 0));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	/* unless the size of its jobs is known: the same jobs skip the probe */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 2, 100));
	EXPECT_EQ(2, iopa_ctl_limit(&c));
	/* the probe keeps within the bounds (a group of two: min 2) */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 8, 0));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 2, 0));
	for (int i = 0; i < 4; i++) {
		feed(&c, &p, dev_knee16(iopa_ctl_limit(&c)), false, true);
		EXPECT_LE(2, iopa_ctl_limit(&c));
	}
}

/*
 * The model disk's 100 KB files (+33% from 1 job to 4, flat beyond), in
 * samples that say how much the jobs read: @kb KiB a job.
 */
static bool feed_disk100k(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			  u32 kb)
{
	u32 n = iopa_ctl_limit(c), ms = iopa_ctl_next_cycle_ms(c, p);
	u32 permille = n <= 1 ? 746 : n < 4 ? 902 : 1000;
	struct iopa_ctl_sample s = fed(0, ms);

	/* up to FEED_JOBS jobs of @kb KiB each in @ms */
	s.completions = FEED_JOBS * permille / 1000;
	s.tput = (u64)s.completions * kb * 1024 * 1000 / ms;
	s.block_io = true;
	return iopa_ctl_update(c, p, &s, NULL);
}

/*
 * A known knee on a "rotational" disk found with jobs of the size the
 * new ones have (within 4x: the same workload run again) is not probed
 * at one job; jobs of another size (10x) are.  A size of 0 (not known)
 * probes, as before.
 */
TEST(bracket_known_knee_of_the_same_jobs_is_not_probed)
{
	static const struct {
		u32 known_kb, kb;
		bool probed;
	} cases[] = {
		{ 100, 100, false }, { 100, 30, false }, { 100, 390, false },
		{ 100, 1000, true }, { 1000, 100, true }, { 0, 100, true },
	};
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	unsigned int i, k;

	iopa_ctl_params_default(&p, 2);
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		bool one = false;

		iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
		iopa_ctl_set_start(&c, &p, 1);
		ASSERT_TRUE(iopa_ctl_set_known(&c, &p, 4, cases[k].known_kb));
		for (i = 0; i < 6; i++) {
			feed_disk100k(&c, &p, cases[k].kb);
			one |= iopa_ctl_limit(&c) == 1;
		}
		EXPECT_EQ(cases[k].probed, one)
			TH_LOG("known %u KiB, jobs of %u", cases[k].known_kb,
			       cases[k].kb);
		/* either way the knee is where it ends */
		for (i = 0; i < 60 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
		     i++)
			feed_disk100k(&c, &p, cases[k].kb);
		EXPECT_LE(4, iopa_ctl_limit(&c));
	}
}

/*
 * Page-cache hits (a tree hashed again: jobs that read nothing from the
 * disk, CPU-bound) on a disk that says it is rotational: one job at a
 * time guards against seeks they do not make.  The start's first
 * measurement of such jobs moves to the default start (8) at once, not
 * through 2; a known knee is not probed at one job for them.  Jobs that
 * read the disk start as before (1, then 2).
 */
static void feed_hits(struct iopa_ctl *c, const struct iopa_ctl_params *p)
{
	struct iopa_ctl_sample s = fed(0, iopa_ctl_next_cycle_ms(c, p));
	u32 n = iopa_ctl_limit(c);

	/* jobs/s: 2 CPUs hash, flat from 2 jobs */
	s.tput = 1000ULL * (n < 2 ? n : 2);
	s.block_io = false;
	iopa_ctl_update(c, p, &s, NULL);
}

TEST(bracket_rotational_start_of_cache_hits_is_the_default)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	bool one = false;
	u32 i;

	bracket_from_one(&c, &p);
	ASSERT_EQ(1U, iopa_ctl_limit(&c));
	/* the first cycle is the start's transient, the next measures it */
	for (i = 0; i < 4 && iopa_ctl_limit(&c) == 1; i++)
		feed_hits(&c, &p);
	EXPECT_EQ(8U, iopa_ctl_limit(&c));
	/* jobs that read the disk: 2 next */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	for (i = 0; i < 4 && iopa_ctl_limit(&c) == 1; i++)
		feed_disk100k(&c, &p, 100);
	EXPECT_EQ(2U, iopa_ctl_limit(&c));
	/* an operator's start of 1 is kept */
	p.init_limit = 1;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 4 && iopa_ctl_limit(&c) == 1; i++)
		feed_hits(&c, &p);
	EXPECT_EQ(2U, iopa_ctl_limit(&c));
	p.init_limit = 0;
	/* a known knee of another size of jobs, their hits: not probed */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	ASSERT_TRUE(iopa_ctl_set_known(&c, &p, 4, 1000));
	for (i = 0; i < 6; i++) {
		feed_hits(&c, &p);
		one |= iopa_ctl_limit(&c) == 1;
	}
	EXPECT_FALSE(one);
	/* ... and read from the disk: probed */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	ASSERT_TRUE(iopa_ctl_set_known(&c, &p, 4, 1000));
	for (i = 0; i < 6 && !one; i++) {
		feed_disk100k(&c, &p, 100);
		one |= iopa_ctl_limit(&c) == 1;
	}
	EXPECT_TRUE(one);
}

/*
 * iopa_ctl_lift_start() (the in-process pool's first jobs were cache
 * hits, before any measurement): a rotational start of 1 lifted to the
 * default, or to the known knee and then not probed at one job, even for
 * jobs of another size that read the disk (without the lift they are).
 * Not once measured, nor with an operator's start.
 */
TEST(bracket_lift_start_for_cache_hits)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	bool one = false;
	u32 i;

	bracket_from_one(&c, &p);
	EXPECT_TRUE(iopa_ctl_lift_start(&c, &p));
	EXPECT_EQ(8U, iopa_ctl_limit(&c));
	/* a known knee: there, no probe at one job for 10x larger jobs */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	iopa_ctl_set_start(&c, &p, 1);
	ASSERT_TRUE(iopa_ctl_set_known(&c, &p, 4, 100));
	iopa_ctl_lift_start(&c, &p);
	EXPECT_EQ(4U, iopa_ctl_limit(&c));
	for (i = 0; i < 6; i++) {
		feed_disk100k(&c, &p, 1000);
		one |= iopa_ctl_limit(&c) == 1;
	}
	EXPECT_FALSE(one);
	/* once measured: nothing */
	EXPECT_FALSE(iopa_ctl_lift_start(&c, &p));
	/* an operator's start of 1 stays */
	p.init_limit = 1;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_FALSE(iopa_ctl_lift_start(&c, &p));
	EXPECT_EQ(1U, iopa_ctl_limit(&c));
}

/*
 * The size of a job is what the measured cycles read over their jobs:
 * none before a cycle with I/O, cache hits not counted, at least 1 KiB
 * once anything was read.
 */
/* A 500 ms cycle of 100 jobs that read @bytes each (0: cache hits). */
static void feed_100_jobs(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			  u64 bytes)
{
	struct iopa_ctl_sample s = fed(100 * bytes * 2, 500);

	s.completions = 100;
	s.block_io = bytes != 0;
	s.cached = !bytes;
	iopa_ctl_update(c, p, &s, NULL);
}

TEST(job_size_is_measured_over_the_cycles)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_EQ(0U, iopa_ctl_job_kb(&c));
	feed_100_jobs(&c, &p, 64 * 1024);
	EXPECT_EQ(64U, iopa_ctl_job_kb(&c));
	/* a cycle of cache hits says nothing of the size */
	feed_100_jobs(&c, &p, 0);
	EXPECT_EQ(64U, iopa_ctl_job_kb(&c));
	/* jobs of 192 KiB: the mean over both, 128 */
	feed_100_jobs(&c, &p, 192 * 1024);
	EXPECT_EQ(128U, iopa_ctl_job_kb(&c));
	/* tiny jobs: 1 KiB at least */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed_100_jobs(&c, &p, 100);
	EXPECT_EQ(1U, iopa_ctl_job_kb(&c));
}

/*
 * Bounds (or max_limit) changed before the start was measured bring the
 * start-up within them and keep it to come (FAST; a rotational disk's
 * start of 1 and a known knee still apply), without rewriting where it
 * began: bounds lifted before the first measurement, or a device group
 * that copies a member's bounded start and lifts them, start from 8,
 * from 1 or from the knee again.  Once the start was measured, bounds
 * clamp as before.
 */
TEST(bracket_bounds_before_the_start_keep_the_start_up)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c, g;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 5));
	EXPECT_EQ(5, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* a group copies the member's controller and lifts its bounds */
	g = c;
	ASSERT_EQ(0, iopa_ctl_set_bounds(&g, &p, 0, 0));
	EXPECT_EQ(8, iopa_ctl_limit(&g));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&g));
	/* the member: a rotational disk's start of 1 */
	EXPECT_TRUE(iopa_ctl_set_start(&c, &p, 1));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* a start of 1 under a min of 4, lifted: 1 again */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 4, 0));
	EXPECT_TRUE(iopa_ctl_set_start(&c, &p, 1));
	EXPECT_EQ(4, iopa_ctl_limit(&c));
	g = c;
	ASSERT_EQ(0, iopa_ctl_set_bounds(&g, &p, 0, 0));
	EXPECT_EQ(1, iopa_ctl_limit(&g));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&g));
	/* a known knee within them */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 6));
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 3, 0));
	EXPECT_EQ(3, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* the knee below a new min: clamped, still the start-up; lifted, back */
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 4, 0));
	EXPECT_EQ(4, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 0));
	EXPECT_EQ(3, iopa_ctl_limit(&c));
	/* a knee above a max that is the start's clamp: the knee comes back */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	EXPECT_TRUE(iopa_ctl_set_known(&c, &p, 20, 0));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 6));
	EXPECT_EQ(6, iopa_ctl_limit(&c));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 0));
	EXPECT_EQ(20, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* bounds first, then a knee their clamp already gives: kept too */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 6));
	EXPECT_FALSE(iopa_ctl_set_known(&c, &p, 20, 0));
	EXPECT_EQ(6, iopa_ctl_limit(&c));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 0));
	EXPECT_EQ(20, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	/* max_limit lowered before the first measurement: the start-up too */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	p.max_limit = 4;
	feed(&c, &p, dev_knee16(iopa_ctl_limit(&c)), false, true);
	EXPECT_EQ(4, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	iopa_ctl_params_default(&p, 2);
	/* the start measured: the bounds clamp, the start-up is over */
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed(&c, &p, dev_knee16(iopa_ctl_limit(&c)), false, true);
	feed(&c, &p, dev_knee16(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 0, 5));
	EXPECT_GE(5, iopa_ctl_limit(&c));
	EXPECT_NE(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
}

/*
 * The guest-like models (iopa-sim --knee): 5 s runs from a remembered
 * knee against cold ones, mean of seeds 1..4.  With the device's own
 * knee the SSD model's 1 MB files are at 96% of the best fixed limit
 * where a cold start gives 86% (83% from a start of 4); said to be
 * rotational (a virtio disk), where the cold start is at 1, 76% against
 * 66%, and a knee 4 times too
 * low is about as good as cold; on the HDD model a knee 8 times too high
 * (another workload's) costs about 7 points at 5 s, where a bracket
 * without the one-job probe stayed at 65%.
 */
static double sim_pct(enum sim_scenario_id id, unsigned int knee, int rot,
		      unsigned int ms, struct __test_metadata *_metadata)
{
	struct iopa_ctl_params p;
	struct sim_opts o = { .duration_ms = ms, .knee = knee,
			      .rotational = rot };
	struct sim_result r;
	double sum = 0;
	int s;

	iopa_ctl_params_default(&p, SIM_G_NCPUS);
	for (s = 1; s <= 4; s++) {
		o.seed = s;
		if (sim_run(id, IOPA_CTL_POLICY_BRACKET, &p, &o, &r))
			return -1;
		sum += r.mean_pct_of_best;
	}
	return sum / 4;
}

TEST(known_knee_short_runs_on_the_models)
{
	double cold, warm;

	cold = sim_pct(SIM_G_SSD_1M, 0, 0, 5000, _metadata);
	warm = sim_pct(SIM_G_SSD_1M, 16, 0, 5000, _metadata);
	TH_LOG("ssd-1m 5 s: cold %.1f%%, knee 16 %.1f%%", cold, warm);
	EXPECT_GE(warm, 93);
	/*
	 * No worse than cold, which gained 11 points when the start-up
	 * walked its plateau (iopa_ctl_br_walk_on(): 85.6% before).
	 */
	EXPECT_GE(warm, cold - 2);
	warm = sim_pct(SIM_G_SSD_100K, 16, 0, 5000, _metadata);
	EXPECT_GE(warm, 98);
	/* a virtio disk saying "rotational": better than its start at 1 */
	cold = sim_pct(SIM_G_SSD_1M, 0, 1, 5000, _metadata);
	warm = sim_pct(SIM_G_SSD_1M, 16, 1, 5000, _metadata);
	TH_LOG("rotational ssd-1m 5 s: cold %.1f%%, knee 16 %.1f%%", cold,
	       warm);
	EXPECT_GE(warm, cold + 3);
	/*
	 * A knee too low (learned in noise): about as good as cold on
	 * 100 KB files (on 1 MB files the one-job probe costs 7 points:
	 * a third of a second at 40 ms a request).
	 */
	cold = sim_pct(SIM_G_SSD_100K, 0, 1, 5000, _metadata);
	warm = sim_pct(SIM_G_SSD_100K, 4, 1, 5000, _metadata);
	EXPECT_GE(warm, cold - 2);
	/* another workload's knee, far too high for 1 MB files */
	warm = sim_pct(SIM_G_HDD_1M, 8, 0, 5000, _metadata);
	TH_LOG("hdd-1m 5 s, knee 8: %.1f%%", warm);
	EXPECT_GE(warm, 85);
	warm = sim_pct(SIM_G_HDD_1M, 8, 0, 20000, _metadata);
	EXPECT_GE(warm, 93);
}

/*
 * The cold start on device settings the defaults were not tuned to,
 * drawn as `make bench-matrix` draws them in the guest: null_blk at 0.5
 * to 50 ms a request and 1 to 128 tags (log-uniform), the HDD model at
 * 5400 to 15000 rpm, files of 10 KB, 100 KB or 1 MB; 10 s runs of a
 * fresh module against the best fixed limit of the same run, two seeds
 * each.  A fixed draw (xorshift from 25), so the test is deterministic;
 * the settings are logged.  The HDD model's tags stay at 64: at a few
 * tags the model's elevator gains far more from depth than the guest's
 * (4 tags, 100 KB files: +40% from 4 jobs to 32, the guest +9%), so its
 * verdict there would be on the model, not the controller.
 */
static unsigned long long mx_state = 25;

static double mx_rand(void)	/* [0, 1) */
{
	mx_state ^= mx_state << 13;
	mx_state ^= mx_state >> 7;
	mx_state ^= mx_state << 17;
	return (double)(mx_state >> 11) / (double)(1ULL << 53);
}

static double mx_logu(double lo, double hi)
{
	return lo * pow(hi / lo, mx_rand());
}

static int mx_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#define MX_N	12

TEST(cold_start_on_a_matrix_of_devices)
{
	static const enum sim_scenario_id ssd[] = {
		SIM_G_SSD_10K, SIM_G_SSD_100K, SIM_G_SSD_1M };
	static const enum sim_scenario_id hdd[] = {
		SIM_G_HDD_10K, SIM_G_HDD_100K, SIM_G_HDD_1M };
	static const char * const size[] = { "10k", "100k", "1m" };
	struct iopa_ctl_params p;
	double pct[MX_N];
	int i, s;

	iopa_ctl_params_default(&p, SIM_G_NCPUS);
	for (i = 0; i < MX_N; i++) {
		struct sim_model m = sim_model_default;
		struct sim_opts o = { .duration_ms = 10000, .model = &m };
		int z = (int)(mx_rand() * 3);
		enum sim_scenario_id id;
		struct sim_result r;
		char what[64];

		if (i % 2 == 0) {
			m.ssd_lat_us = mx_logu(500, 50000);
			m.ssd_tags = (int)mx_logu(1, 128.99);
			id = ssd[z];
			snprintf(what, sizeof(what), "nullb lat_us=%.0f tags=%.0f",
				 m.ssd_lat_us, m.ssd_tags);
		} else {
			m.hdd_rpm = 5400 + 100 * (int)(mx_rand() * 97);
			id = hdd[z];
			snprintf(what, sizeof(what), "hdd rpm=%.0f", m.hdd_rpm);
		}
		pct[i] = 0;
		for (s = 1; s <= 2; s++) {
			o.seed = s;
			ASSERT_EQ(0, sim_run(id, IOPA_CTL_POLICY_BRACKET, &p, &o,
					     &r));
			pct[i] += r.pct_of_best_fixed / 2;
		}
		TH_LOG("%s size=%s: %.1f%% of the best fixed limit (%u)", what,
		       size[z], pct[i], r.best_limit);
		EXPECT_GE(pct[i], 90) TH_LOG("%s size=%s", what, size[z]);
	}
	qsort(pct, MX_N, sizeof(pct[0]), mx_cmp);
	TH_LOG("median %.1f%%, lowest %.1f%%", (pct[MX_N / 2 - 1] +
	       pct[MX_N / 2]) / 2, pct[0]);
	EXPECT_GE((pct[MX_N / 2 - 1] + pct[MX_N / 2]) / 2, 95);
}

/*
 * The first cycle is transient: in the guest its jobs waited on their
 * directories' and inodes' first reads, and a disk reading 1 MB files
 * measured 60% of its rate at one job, so that the doubling to 2 (-35%)
 * passed for a gain and the limit climbed to 8 before coming back.
 */
TEST(bracket_first_cycle_is_transient)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 most = 0;
	int i;

	bracket_from_one(&c, &p);
	/* cold: 60% of the rate at one job; no verdict */
	EXPECT_FALSE(feed(&c, &p, dev_disk1m(1) * 6 / 10, false, true));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	for (i = 0; i < 40 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY;
	     i++) {
		if (iopa_ctl_limit(&c) > most)
			most = iopa_ctl_limit(&c);
		feed(&c, &p, dev_disk1m(iopa_ctl_limit(&c)), false, true);
	}
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	/* one doubling tried, none kept */
	EXPECT_EQ(2, most);
}

/*
 * A 1 s cycle of @dev at the limit: ~30 completions whose service times
 * spread (cv^2 0.3), a standard error of 11% a sample.
 */
static void feed_spread_1s(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			   u64 (*dev)(u32))
{
	struct iopa_ctl_sample smp = {
		.tput = dev(iopa_ctl_limit(c)),
		.elapsed_ms = 1000, .demand = true, .completions = 30,
		.svc_us = 30 * 100000ULL,
		.svc_sq = 30 * 13000000000ULL,
	};

	iopa_ctl_update(c, p, &smp, NULL);
}

/*
 * A level shift starts up again.  Steady at 16 (a 16-tag device), then
 * the bench's disk reading 1 MB files (best 1, flat from 2 on), measured
 * as the guest measures it: probes a quarter of the base apart cross the
 * plateau a pair at a time, each pair within the noise.
 */
TEST(bracket_level_shift_starts_up_again)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	c.br_start = 1;		/* as iopa_ctl_set_start() leaves it */
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 60));
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	/* noisy 1 s cycles of a disk that reads best at one job */
	for (i = 0; i < 80 && iopa_ctl_limit(&c) != 1; i++)
		feed_spread_1s(&c, &p, dev_disk1m);
	TH_LOG("from 16 to 1 in %d cycles", i);
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	EXPECT_LE(i, 16);
	/* and it stays */
	ASSERT_LT(0, until_steady(&c, &p, dev_disk1m, 40));
	run(&c, &p, dev_disk1m, 1000, 40);
	EXPECT_EQ(1, c.base);
}

/*
 * A restart after a level shift begins at a quarter of the base, not
 * above IOPA_CTL_BR_RESTART_MIN (4) on a device that does not say it is
 * rotational: its start of 8 is no floor (a knee that moved below it
 * would have to be searched down to, a quarter at a time).
 */
TEST(bracket_restart_not_held_at_the_start)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 first = 0;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(8, iopa_ctl_limit(&c));
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 60));
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	/* the device now reads best at one job (the shift of the test above) */
	for (i = 0; i < 80 && !first; i++) {
		feed_spread_1s(&c, &p, dev_disk1m);
		if (iopa_ctl_mode(&c) == IOPA_CTL_MODE_FAST)
			first = iopa_ctl_limit(&c);
	}
	EXPECT_EQ(4, first) TH_LOG("restarted at %u", first);
}

/* A 100 ms cycle of @dev at the limit, scaled by @scale per mille. */
static void feed_100ms(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		       u64 (*dev)(u32), u32 scale)
{
	struct iopa_ctl_sample smp = fed(dev(iopa_ctl_limit(c)) * scale / 1000,
					 100);

	iopa_ctl_update(c, p, &smp, NULL);
}

/* Feed 100 ms cycles of @dev until STEADY, at most 60. */
static void steady_100ms(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			 u64 (*dev)(u32))
{
	int i;

	for (i = 0; i < 60 && iopa_ctl_mode(c) != IOPA_CTL_MODE_STEADY; i++)
		feed_100ms(c, p, dev, 1000);
}

/*
 * A stall of two 100 ms cycles (-15%: the host, a journal commit) is not
 * a level shift: in make demo it restarted start-up from 6 at 1.  The
 * same drop lasting 500 ms is one.
 */
TEST(bracket_short_stall_is_not_a_level_shift)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 60));
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	for (i = 0; i < 4; i++)
		feed_100ms(&c, &p, dev_knee16, 1000);
	feed_100ms(&c, &p, dev_knee16, 850);
	feed_100ms(&c, &p, dev_knee16, 850);
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_EQ(16, iopa_ctl_limit(&c));
	for (i = 0; i < 4; i++)
		feed_100ms(&c, &p, dev_knee16, 1000);
	/* the level drops for good */
	for (i = 0; i < 10 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_STEADY; i++)
		feed_100ms(&c, &p, dev_knee16, 850);
	TH_LOG("restarted after %d cycles of 100 ms", i);
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	EXPECT_EQ(5, i);
}

/*
 * 32 workers on a device linear far beyond them: no job waits on a limit
 * above 32.  A probe up without demand is the side up lost, not a trial
 * to drop and try again (the demo alternated 32 and 36 every cycle).
 */
TEST(bracket_settles_where_the_workers_end)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i, changes = 0;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 80; i++) {
		u32 n = iopa_ctl_limit(&c);

		changes += feed(&c, &p, dev_linear(n < 32 ? n : 32), false,
				n <= 32);
		if (i == 40)
			changes = 0;
	}
	TH_LOG("limit %u, %d changes in the last 39 cycles", iopa_ctl_limit(&c),
	       changes);
	EXPECT_EQ(32, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_LE(changes, 4);
}

/* A disk reading 10 KB files: one job loses 12%, two are the top. */
static u64 dev_disk2(u32 n)
{
	return n >= 2 ? 1700 : 1500;
}

/*
 * A probe down that the noise could not judge (FLAT, the point estimate
 * for it) moved the limit to a worse one: while it was measured, one job
 * looked a shade below two (luck), and then settled at its true level,
 * 8% lower, from the first sample in STEADY on (no level shift).  STEADY
 * must look again after a few samples, not after 8 normal cycles (80 of
 * 100 ms: the guest's hdd 10k cell lost 12% of a run to one such move,
 * seen in the bench's time series).
 */
TEST(bracket_reprobes_soon_after_an_unsure_move)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	steady_100ms(&c, &p, dev_disk2);
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	ASSERT_LE(2, iopa_ctl_limit(&c));
	for (i = 0; i < 400 && (iopa_ctl_limit(&c) != 1 ||
				iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY); i++) {
		bool luck = iopa_ctl_limit(&c) == 1 &&
			    iopa_ctl_mode(&c) == IOPA_CTL_MODE_PROBE;

		/*
		 * 1625 of 1700: within the noise, the estimate for 1; and
		 * 1500 is within a level shift's threshold of 1625.
		 */
		feed_100ms(&c, &p, dev_disk2, luck ? 1083 : 1000);
	}
	ASSERT_EQ(1, iopa_ctl_limit(&c));
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	for (i = 0; i < 80 && iopa_ctl_limit(&c) < 2; i++)
		feed_100ms(&c, &p, dev_disk2, 1000);
	TH_LOG("back at %u after %d cycles of 100 ms", iopa_ctl_limit(&c), i);
	EXPECT_LE(2, iopa_ctl_limit(&c));
	EXPECT_GE(16, i);
}

/* A plateau from 2 jobs on, as first measured: one job reads half. */
static u64 dev_flat2(u32 n)
{
	return n >= 2 ? 1700 : 900;
}

/* ... and as it reads later: 4 jobs 8% over 2 (the page cache full). */
static u64 dev_flat2_later(u32 n)
{
	return n >= 4 ? 1840 : n == 3 ? 1770 : n == 2 ? 1700 : 900;
}

/* A 100 ms cycle of @dev at the limit, in samples of 7.3% (cv_sample()). */
static void feed_cv(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		    u64 (*dev)(u32))
{
	struct iopa_ctl_sample s = cv_sample(dev(iopa_ctl_limit(c)));

	iopa_ctl_update(c, p, &s, NULL);
}

/*
 * The search came down a plateau by moves the noise could not judge
 * (ties go to fewer jobs) and then saw one job lose outright: that loss
 * says nothing of the side the base came from, and the base is still
 * an unsure move's.  When the plateau later tilts (null_blk, 1 MB files
 * at 0.6 ms in the guest: 2 and 4 read alike for the first seconds,
 * then 4 reads 15% more, and the run sat at 2 for its last 8 s), STEADY
 * must look up again after a few samples, not after 8 normal cycles.
 */
TEST(bracket_unsure_base_stays_unsure_after_a_loss_below)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	for (i = 0; i < 200 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY; i++)
		feed_cv(&c, &p, dev_flat2);
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	ASSERT_EQ(2, iopa_ctl_limit(&c));
	for (i = 0; i < 80 && iopa_ctl_limit(&c) < 3; i++)
		feed_cv(&c, &p, dev_flat2_later);
	TH_LOG("up at %u after %d cycles of 100 ms", iopa_ctl_limit(&c), i);
	EXPECT_LE(3, iopa_ctl_limit(&c));
	EXPECT_GE(16, i);
}

/* Two tenants' streams on the model disk: 2 + 2 jobs read 8% more than 1 + 1. */
static u64 dev_disk2_two(u32 n)
{
	return n >= 4 ? 1840 : n == 3 ? 1760 : 1700;
}

/*
 * A device group's budget settled at a lone member's knee (2); a second
 * member comes, and the device's knee for two streams is 4: the budget
 * must start up again from where it is, not wait for probes a step
 * apart (the guest's two tenants on the model disk sat at 1 + 1 for 30 s
 * of a 40 s run, 7% below 4 + 4).  With one member more only, and the
 * floor the members' count, as iopa_group_split() sets it.
 */
TEST(bracket_more_sharers_start_up_again)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_TRUE(iopa_ctl_set_start(&c, &p, 1));
	steady_100ms(&c, &p, dev_disk2);
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	ASSERT_EQ(2, iopa_ctl_limit(&c));
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 2, 0));
	EXPECT_TRUE(iopa_ctl_more_sharers(&c));
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	EXPECT_EQ(2, iopa_ctl_limit(&c));
	/* In a start-up already: nothing. */
	EXPECT_FALSE(iopa_ctl_more_sharers(&c));
	for (i = 0; i < 80 && iopa_ctl_limit(&c) < 4; i++)
		feed_100ms(&c, &p, dev_disk2_two, 1000);
	TH_LOG("at %u after %d cycles of 100 ms", iopa_ctl_limit(&c), i);
	EXPECT_LE(4, iopa_ctl_limit(&c));
	EXPECT_GE(8, i);
	/* A fixed limit and the other policies: nothing. */
	iopa_ctl_set_fixed(&c, 3);
	EXPECT_FALSE(iopa_ctl_more_sharers(&c));
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_IOPA);
	EXPECT_FALSE(iopa_ctl_more_sharers(&c));
}

/*
 * What a device group leaves of its knee when its last member leaves: a
 * settled knee; before that, the base its search reached (the knee is
 * not below it: a run of seconds never settles); nothing when pinned or
 * for another policy.
 */
TEST(bracket_left_knee_is_the_base_reached)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	/* a fresh controller: its start */
	EXPECT_EQ(iopa_ctl_limit(&c), iopa_ctl_left_knee(&c));
	/* a doubling paid on a device with a knee at 16: not settled yet */
	for (i = 0; i < 8 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_FAST &&
		    c.base < 16; i++)
		feed_100ms(&c, &p, dev_knee16, 1000);
	ASSERT_NE(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	ASSERT_EQ(16, c.base);
	EXPECT_EQ(0, iopa_ctl_settled_knee(&c));
	EXPECT_EQ(16, iopa_ctl_left_knee(&c));
	/* settled: the knee */
	steady_100ms(&c, &p, dev_knee16);
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	EXPECT_EQ(iopa_ctl_settled_knee(&c), iopa_ctl_left_knee(&c));
	/* pinned, or another policy: nothing */
	iopa_ctl_set_fixed(&c, 3);
	EXPECT_EQ(0, iopa_ctl_left_knee(&c));
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_HILLCLIMB);
	EXPECT_EQ(0, iopa_ctl_left_knee(&c));
}

/* The model disk reading 1 MB files against fio: each job a share. */
static u64 dev_disk1m_fio(u32 n)
{
	return 6000ULL * (n < 8 ? n : 8);
}

/*
 * A competitor comes and goes (the bench's load step on the model disk:
 * fio reading from a third to two thirds of the run).  Alone, one job is
 * best; against fio, jobs hold shares; fio gone, one is best again.  The
 * device's bytes, everyone's, say when fio went: from 5 jobs on ours
 * do not change when it goes (29.5 with fio, 29.5 without), no level
 * shift, and the controller stayed high (the guest: at 10, for the last
 * 10 s of the load step, 30% below limit 1).
 */
static void feed_fio(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		     bool fio)
{
	u32 n = iopa_ctl_limit(c);
	/* against fio, up to 29.5 MB/s: what 2 and more read alone */
	u64 ours = fio ? (6000ULL * n < 29500 ? 6000ULL * n : 29500) :
			 dev_disk1m(n);
	/* fio at depth 4, squeezed by our jobs but never to nothing */
	u64 others = fio ? 30000 - 3000 * (n < 8 ? n : 8) : 0;
	struct iopa_ctl_sample smp = fed(ours, iopa_ctl_next_cycle_ms(c, p));

	smp.dev_tput = ours + others;
	smp.block_io = true;
	iopa_ctl_update(c, p, &smp, NULL);
}

TEST(bracket_follows_a_competitor_both_ways)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	bracket_from_one(&c, &p);
	for (i = 0; i < 40 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_STEADY; i++)
		feed_fio(&c, &p, false);
	ASSERT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
	ASSERT_EQ(1, iopa_ctl_limit(&c));
	for (i = 0; i < 60; i++)
		feed_fio(&c, &p, true);
	TH_LOG("with fio: limit %u", iopa_ctl_limit(&c));
	/* 4 jobs read 24 of 29.5 against fio, 1 read 6 */
	ASSERT_LE(4, iopa_ctl_limit(&c));
	for (i = 0; i < 60 && iopa_ctl_limit(&c) > 1; i++)
		feed_fio(&c, &p, false);
	TH_LOG("fio gone: at %u after %d cycles", iopa_ctl_limit(&c), i);
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	/* without the device's bytes: 12, a probe a quarter down at a time */
	EXPECT_GE(6, i);
}

/*
 * A level shift during the search starts up again.  The disk reading
 * 1 MB files against a competitor (more jobs, a larger share: ~8 best),
 * then the competitor gone (best 1, flat from 2 on) as bracket probes
 * around 8: measured again after the probe, the base is off its own
 * earlier level twice, and start-up from 1 finds 1, where probes a
 * quarter of the base apart would cross the plateau a pair at a time
 * (22 cycles).
 */
TEST(bracket_level_shift_in_the_search_starts_up_again)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int i;

	bracket_from_one(&c, &p);
	/* climb against the competitor, to the first probe of the search */
	for (i = 0; i < 40 && iopa_ctl_mode(&c) != IOPA_CTL_MODE_PROBE; i++)
		feed(&c, &p, dev_disk1m_fio(iopa_ctl_limit(&c)), false, true);
	ASSERT_EQ(IOPA_CTL_MODE_PROBE, iopa_ctl_mode(&c));
	ASSERT_EQ(8, c.base);
	/* the competitor leaves */
	for (i = 0; i < 40 && iopa_ctl_limit(&c) != 1; i++)
		feed(&c, &p, dev_disk1m(iopa_ctl_limit(&c)), false, true);
	TH_LOG("from %u to 1 in %d cycles", c.base, i);
	EXPECT_EQ(1, iopa_ctl_limit(&c));
	EXPECT_LE(i, 12);
}

/* Cache hits (no block I/O) say nothing about the device. */
TEST(bracket_ignores_cached_cycles)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c, before;
	struct iopa_ctl_sample s = {
		.tput = 0, .elapsed_ms = 100, .demand = true, .cached = true,
		.completions = 500, .svc_us = 500 * 100, .svc_sq = 500 * 10000,
	};
	int i;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 40));
	before = c;
	for (i = 0; i < 20; i++)
		EXPECT_FALSE(iopa_ctl_update(&c, &p, &s, NULL));
	EXPECT_EQ(before.limit, iopa_ctl_limit(&c));
	EXPECT_EQ(IOPA_CTL_MODE_STEADY, iopa_ctl_mode(&c));
}

/*
 * A cycle ends on evidence: max(8, limit) completions, 4 service times
 * (from a start of 4, init_limit: below 8 completions).
 */
TEST(bracket_cycle_ends_on_evidence)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	int pol;

	iopa_ctl_params_default(&p, 2);
	p.init_limit = 4;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	/* the first cycle, transient: 4 completions, 1 span */
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 200, 3, 3 * 60000));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 59, 4, 4 * 60000));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 100, 4, 4 * 60000));
	/* ... and min_cycle_ms, with fast jobs too (the first cycle) */
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 99, 1000, 1000 * 10));
	feed(&c, &p, dev_knee16(4), false, true);
	ASSERT_EQ(4, iopa_ctl_limit(&c));
	/* FAST at 4: 8 completions over 2 mean service times of 60 ms */
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 200, 7, 7 * 60000));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 119, 8, 8 * 60000));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 120, 8, 8 * 60000));
	/* never sooner than 100 ms, even with fast jobs */
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 99, 1000, 1000 * 10));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 100, 1000, 1000 * 10));
	/* the transient after the doubling to 8: 8 completions, 1 span */
	feed(&c, &p, dev_knee16(4), false, true);
	ASSERT_EQ(8, iopa_ctl_limit(&c));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 120, 8, 8 * 120000));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 119, 8, 8 * 120000));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 200, 7, 7 * 120000));
	/* a transient after a move up ends on its evidence from 20 ms */
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 20, 8, 8 * 2000));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 19, 8, 8 * 2000));
	/* past FAST at 16: 16 completions over 4 spans */
	ASSERT_LT(0, until_steady(&c, &p, dev_knee16, 40));
	ASSERT_EQ(16, iopa_ctl_limit(&c));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 1000, 15, 15 * 40000));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 159, 16, 16 * 40000));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 160, 16, 16 * 40000));
	/* a fixed limit and the other policies: fixed-length cycles */
	iopa_ctl_set_fixed(&c, 16);
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 10000, 1000, 1000 * 40000));
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		if (pol == IOPA_CTL_POLICY_BRACKET)
			continue;
		iopa_ctl_init(&c, &p, pol);
		EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 10000, 1000,
						   1000 * 40000));
	}
}

/*
 * The shortest cycle is min_cycle_ms as init found it (the in-process
 * pool's 25 ms); 0 is the module's IOPA_CTL_MIN_CYCLE_MS.
 */
TEST(bracket_min_cycle_is_the_params)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	EXPECT_EQ(IOPA_CTL_MIN_CYCLE_MS, p.min_cycle_ms);
	p.init_limit = 4;
	p.min_cycle_ms = 25;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed(&c, &p, dev_knee16(4), false, true);
	ASSERT_EQ(4, iopa_ctl_limit(&c));
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 24, 1000, 1000 * 10));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 25, 1000, 1000 * 10));
	p.min_cycle_ms = 0;
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	feed(&c, &p, dev_knee16(4), false, true);
	EXPECT_FALSE(iopa_ctl_cycle_enough(&c, 99, 1000, 1000 * 10));
	EXPECT_TRUE(iopa_ctl_cycle_enough(&c, 100, 1000, 1000 * 10));
}

/* The noise estimate: from the completions and their spread. */
TEST(bracket_noise_estimated_within_the_cycle)
{
	struct iopa_ctl_sample s = { .tput = 1000, .demand = true };
	struct iopa_ctl_params p;
	struct iopa_ctl c;

	iopa_ctl_params_default(&p, 2);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);

	/* no completion: the most noise there is (50%) */
	EXPECT_EQ(500, iopa_ctl_sample_noise(&c, &s, 8));
	/* 256 identical service times at limit 8: floor and edges, 2.1% */
	s.completions = 256;
	s.svc_us = 256 * 10000ULL;
	s.svc_sq = 256 * 10000ULL * 10000ULL;
	EXPECT_EQ(20, iopa_ctl_sample_noise(&c, &s, 8));
	/* exponential-like spread (cv 1) over 16 jobs: about 1/sqrt(16) */
	s.completions = 16;
	s.svc_us = 16 * 10000ULL;
	s.svc_sq = 16 * 2 * 10000ULL * 10000ULL;
	EXPECT_GE(iopa_ctl_sample_noise(&c, &s, 8), 250);
	EXPECT_LE(iopa_ctl_sample_noise(&c, &s, 8), 270);
	/* a saturated sum of squares is capped, not an overflow */
	s.svc_sq = ~0ULL;
	EXPECT_EQ(500, iopa_ctl_sample_noise(&c, &s, 8));
}

/*
 * The spread of the samples, not only their own estimate: samples of
 * one limit that swing 4% each way while each estimates itself at 2%
 * raise the noise the policy uses toward the swing's (2.7x the
 * estimate); samples that do not swing leave the estimate alone, and
 * so does a lasting drop of 20% (a level shift: the search starts up
 * again), which the old level's noise would have hidden.
 */
TEST(bracket_noise_learned_from_the_spread)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	struct iopa_ctl_sample s;
	int i;

	params(&p);
	iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
	ASSERT_EQ(0, iopa_ctl_set_bounds(&c, &p, 8, 8));
	for (i = 0; i < 64; i++)
		feed_100ms(&c, &p, dev_const, 1000);
	s = fed(50000, 100);
	EXPECT_EQ(20, iopa_ctl_sample_noise(&c, &s, 8));
	/* a level shift is not learned */
	for (i = 0; i < 8 && iopa_ctl_mode(&c) == IOPA_CTL_MODE_STEADY; i++)
		feed_100ms(&c, &p, dev_const, 800);
	EXPECT_EQ(IOPA_CTL_MODE_FAST, iopa_ctl_mode(&c));
	EXPECT_EQ(20, iopa_ctl_sample_noise(&c, &s, 8));
	for (i = 0; i < 64; i++)
		feed_100ms(&c, &p, dev_const, i % 2 ? 1040 : 960);
	EXPECT_EQ(8U, iopa_ctl_limit(&c));
	/* (8%)^2 / 2 against 2.1%^2: 7.3 on the variance */
	EXPECT_LE(52, iopa_ctl_sample_noise(&c, &s, 8));
	EXPECT_GE(58, iopa_ctl_sample_noise(&c, &s, 8));
	/* other policies keep the estimate */
	iopa_ctl_set_policy(&c, IOPA_CTL_POLICY_IOPA);
	EXPECT_EQ(20, iopa_ctl_sample_noise(&c, &s, 8));
}

/* xorshift64: the same sequence on every host */
static u64 xs64(u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/*
 * The guest's throttled null_blk (one tag, 1 ms a request): one job
 * reads 850 requests a second, two or more 1000.  A sample of 55 jobs
 * estimates itself at 2-6% and swings +-15% (TCG).  Over 200 seeds of 45
 * cycles from one job, the search must not wander far above 2.  Judged
 * on the samples' own estimates, with the point estimate settling every
 * tie, 16 seeds ended above 4 (the guest: 1 run of 15, at 10); with the
 * spread learned and ties going to fewer jobs, 5 (5000 seeds: 2.3% above
 * 4, 0.2% above 8, against 9.6% and 2.1%).
 */
TEST(bracket_noisy_flat_device_stays_low)
{
	struct iopa_ctl_params p;
	struct iopa_ctl c;
	u32 worst = 0, high = 0;
	u64 seed;

	iopa_ctl_params_default(&p, 2);
	p.init_limit = 1;
	for (seed = 1; seed <= 200; seed++) {
		u64 x = seed * 0x9e3779b97f4a7c15ULL;
		int i;

		iopa_ctl_init(&c, &p, IOPA_CTL_POLICY_BRACKET);
		for (i = 0; i < 45; i++) {
			u32 lim = iopa_ctl_limit(&c);
			u64 t = lim > 1 ? 4096000 : 3481600;
			u64 j = (lim > 1 ? 1000 : 850) * 55 / 1000;
			u64 m = 1250ULL * lim;
			/* queued at the one tag: service times spread (cv 0.4) */
			struct iopa_ctl_sample smp = {
				.elapsed_ms = 55, .demand = true,
				.completions = (u32)j, .block_io = true,
				.svc_us = j * m,
				.svc_sq = j * m * m * (lim > 1 ? 116 : 100) / 100,
			};

			smp.tput = t * (850 + xs64(&x) % 301) / 1000;
			iopa_ctl_update(&c, &p, &smp, NULL);
		}
		if (iopa_ctl_limit(&c) > worst)
			worst = iopa_ctl_limit(&c);
		high += iopa_ctl_limit(&c) > 4;
	}
	TH_LOG("200 seeds: %u ended above 4, the highest at %u", high, worst);
	EXPECT_GE(10U, high);
	EXPECT_GE(12U, worst);
}

/* ---- the simulator's results: the issue's done criteria ---------------- */

FIXTURE(sim)
{
	struct iopa_ctl_params p;
	struct sim_result r[SIM_NR_SCENARIOS][IOPA_CTL_NR_POLICIES];
};

FIXTURE_SETUP(sim)
{
	struct sim_opts o = { 0 };
	int sc, pol;

	iopa_ctl_params_default(&self->p, SIM_NCPUS);
	for (sc = 0; sc < SIM_NR_SCENARIOS; sc++)
		for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++)
			ASSERT_EQ(0, sim_run(sc, pol, &self->p, &o,
					     &self->r[sc][pol]));
}

FIXTURE_TEARDOWN(sim)
{
}

TEST_F(sim, iopa_reaches_90_pct_within_6_cycles_on_ssd_and_hdd)
{
	struct sim_result *ssd = &self->r[SIM_SSD][IOPA_CTL_POLICY_IOPA];
	struct sim_result *hdd = &self->r[SIM_HDD][IOPA_CTL_POLICY_IOPA];

	EXPECT_GE(ssd->cycles_to_90, 1);
	EXPECT_LE(ssd->cycles_to_90, 6);
	EXPECT_GE(hdd->cycles_to_90, 1);
	EXPECT_LE(hdd->cycles_to_90, 6);
}

TEST_F(sim, hillclimb_at_least_95_pct_of_best_everywhere)
{
	int sc;

	for (sc = 0; sc < SIM_NR_SCENARIOS; sc++) {
		struct sim_result *r = &self->r[sc][IOPA_CTL_POLICY_HILLCLIMB];

		TH_LOG("%s: %.2f", sim_scenario_name(sc), r->mean_pct_of_best);
		EXPECT_GE(r->mean_pct_of_best, 95.0);
	}
}

TEST_F(sim, hillclimb_at_most_3_changes_after_settle_on_ssd_and_hdd)
{
	EXPECT_LE(self->r[SIM_SSD][IOPA_CTL_POLICY_HILLCLIMB]
		  .changes_after_settle, 3);
	EXPECT_LE(self->r[SIM_HDD][IOPA_CTL_POLICY_HILLCLIMB]
		  .changes_after_settle, 3);
}

TEST_F(sim, hillclimb_beats_iopa_on_noisy_and_step)
{
	EXPECT_GT(self->r[SIM_NOISY][IOPA_CTL_POLICY_HILLCLIMB].mean_pct_of_best,
		  self->r[SIM_NOISY][IOPA_CTL_POLICY_IOPA].mean_pct_of_best);
	EXPECT_GT(self->r[SIM_STEP][IOPA_CTL_POLICY_HILLCLIMB].mean_pct_of_best,
		  self->r[SIM_STEP][IOPA_CTL_POLICY_IOPA].mean_pct_of_best);
}

TEST_F(sim, deterministic)
{
	struct sim_opts o = { 0 };
	struct sim_result again;
	int sc, pol;

	for (sc = 0; sc < SIM_NR_SCENARIOS; sc++) {
		for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
			ASSERT_EQ(0, sim_run(sc, pol, &self->p, &o, &again));
			EXPECT_EQ(0, memcmp(&again, &self->r[sc][pol],
					    sizeof(again)));
		}
	}
}

TEST_F(sim, best_fixed_limits_are_the_curves_peaks)
{
	EXPECT_EQ(24, self->r[SIM_SSD][0].best_limit);
	EXPECT_EQ(6, self->r[SIM_HDD][0].best_limit);
	EXPECT_EQ(24, self->r[SIM_STEP][0].best_limit);
	EXPECT_EQ(SIM_NCPUS, self->r[SIM_FLAT][0].best_limit);
}

TEST_HARNESS_MAIN
