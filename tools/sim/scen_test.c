// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of the simulator's guest-like scenarios (sim.c, model.c):
 * that they reproduce what the guest benchmark measured and show what
 * each scenario exists to show.  Nothing here judges a policy: the
 * policies change (kernel/ctl.c); `iopa-sim --table' is where to compare
 * them.
 *
 *   make -C tools/sim test
 */
#include <math.h>
#include <string.h>

/* As in ctl_test.c: the harness is not -Wextra clean. */
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wclobbered"
#pragma GCC diagnostic ignored "-Wsign-compare"
#include "kselftest_harness.h"

#include "ctl.h"
#include "sim.h"

#define NLIM	7		/* fixed limits 1, 2, 4, ..., 64 */

/* Module defaults for @ncpus: the guest-like runs' and the bench's. */
static void params(struct iopa_ctl_params *p, unsigned int ncpus)
{
	iopa_ctl_params_default(p, ncpus);
}

/* Mean MB/s over seeds 1..@nseeds at each of the fixed limits 1..64. */
static int fixed_curve(enum sim_scenario_id id, const struct sim_opts *base,
		       int nseeds, double *mbps)
{
	struct iopa_ctl_params p;
	struct sim_opts o = *base;
	struct sim_result r;
	int l, s;

	params(&p, SIM_G_NCPUS);
	for (l = 0; l < NLIM; l++) {
		mbps[l] = 0;
		for (s = 1; s <= nseeds; s++) {
			o.seed = s;
			o.fixed = sim_guest_limits[l];
			if (sim_run(id, 0, &p, &o, &r))
				return -1;
			mbps[l] += r.mean_tput / nseeds;
		}
	}
	return 0;
}

static double curve_max(const double *v, int n)
{
	double m = 0;
	int i;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

/* Index of 1, 2, 4, ..., 64 in sim_guest_limits. */
#define L1	0
#define L2	1
#define L4	2
#define L8	3
#define L16	4
#define L32	5
#define L64	6

/* ---- the fit to the guest ------------------------------------------- */

/*
 * The table is bench/README.md's: each cell's best fixed limit is the
 * one with the most MB/s, and the policies' percentages of it are the
 * README's (its "%" columns, from unrounded means) to 0.05 point.
 */
TEST(guest_table_is_the_bench_table)
{
	static const double pct[SIM_NR_CELLS][3] = {
		/* bracket (the default), iopa, hillclimb */
		{ 97.1, 72.6, 50.8 }, { 97.7, 72.7, 50.7 },
		{ 98.1, 86.8, 64.3 }, { 97.3, 99.6, 99.4 },
		{ 97.9, 99.3, 99.6 }, { 93.6, 65.3, 66.3 },
	};
	int c, l;

	for (c = 0; c < SIM_NR_CELLS; c++) {
		const struct sim_guest_cell *g = &sim_guest_cells[c];
		double gb = curve_max(g->mbps, NLIM);

		EXPECT_EQ(SIM_G_FIRST + c, (int)g->id);
		/* the first of equals, as bench/README.md */
		for (l = 0; g->mbps[l] < gb; l++)
			;
		EXPECT_EQ(g->best, sim_guest_limits[l]);
		EXPECT_LE(fabs(100 * g->bracket_mbps / gb - pct[c][0]), 0.05);
		EXPECT_LE(fabs(100 * g->iopa_mbps / gb - pct[c][1]), 0.05);
		EXPECT_LE(fabs(100 * g->hillclimb_mbps / gb - pct[c][2]), 0.05);
	}
}

/*
 * Run as the bench runs (20 s, module defaults, 3 runs: seeds 1..3),
 * every cell's fixed-limit curve relative to its best is within 5 points
 * of the guest's (README, "The fit": 4.2 at most, ssd-10k at 16 and 64,
 * where the guest lost 2-4% with more jobs than tags and the model does
 * not), and the MB/s themselves within 8% (4% at most).
 */
TEST(fixed_limit_curves_match_the_guest)
{
	struct sim_opts o = { 0 };
	int c, l;

	for (c = 0; c < SIM_NR_CELLS; c++) {
		const struct sim_guest_cell *g = &sim_guest_cells[c];
		double m[NLIM], gb = curve_max(g->mbps, NLIM), mb, err = 0;
		double abs_err = 0;

		ASSERT_EQ(0, fixed_curve(g->id, &o, 3, m));
		mb = curve_max(m, NLIM);
		for (l = 0; l < NLIM; l++) {
			err = fmax(err, fabs(m[l] / mb - g->mbps[l] / gb));
			abs_err = fmax(abs_err, fabs(m[l] / g->mbps[l] - 1));
		}
		TH_LOG("%s: relative curves differ by %.1f points at most, MB/s by %.1f%%",
		       sim_scenario_name(g->id), 100 * err, 100 * abs_err);
		EXPECT_LE(err, 0.05);
		EXPECT_LE(abs_err, 0.08);
	}
}

/*
 * The guest's best fixed limit is nearly as good as the model's best in
 * the model, and the model's nearly as good as the guest's in the guest
 * (within 5%: on ssd-10k the guest's 16 beat its 32 by 2.4%, the
 * model's 32 its 16 by 2.6%); on the flat tops any limit of the top is
 * "the best".  HDD 1 MiB: 1 in both.
 */
TEST(best_fixed_limit_per_cell_as_in_the_guest)
{
	struct sim_opts o = { 0 };
	int c, l;

	for (c = 0; c < SIM_NR_CELLS; c++) {
		const struct sim_guest_cell *g = &sim_guest_cells[c];
		double m[NLIM], mb, gb = curve_max(g->mbps, NLIM);
		int gi = 0, mi = 0;

		ASSERT_EQ(0, fixed_curve(g->id, &o, 3, m));
		mb = curve_max(m, NLIM);
		for (l = 0; l < NLIM; l++) {
			if (sim_guest_limits[l] == g->best)
				gi = l;
			if (m[l] == mb)
				mi = l;
		}
		TH_LOG("%s: guest best %u, model best %u",
		       sim_scenario_name(g->id), g->best,
		       sim_guest_limits[mi]);
		EXPECT_GE(m[gi], 0.95 * mb);
		EXPECT_GE(g->mbps[mi], 0.95 * gb);
		if (g->id == SIM_G_HDD_1M)
			EXPECT_EQ(L1, mi);
	}
}

/*
 * The shapes issue 12 describes (seeds 1 and 2): null_blk is flat
 * from its 16 tags (10k, 100k: one request per job), 1 MiB files get
 * there with fewer jobs (about two requests each); iopa_hdd is flat from
 * 2 with small files and best at 1 with 1 MiB files (one sequential
 * stream; two or more interleave and lose a third).
 */
TEST(guest_like_cells_have_the_guest_shapes)
{
	struct sim_opts o = { 0 };
	double m[NLIM], mb;

	ASSERT_EQ(0, fixed_curve(SIM_G_SSD_10K, &o, 2, m));
	mb = curve_max(m, NLIM);
	EXPECT_GE(m[L16], 0.95 * mb);
	EXPECT_LE(m[L8], 0.55 * mb);
	EXPECT_GE(m[L64], 0.97 * mb);

	ASSERT_EQ(0, fixed_curve(SIM_G_SSD_100K, &o, 2, m));
	mb = curve_max(m, NLIM);
	EXPECT_GE(m[L16], 0.93 * mb);
	EXPECT_LE(m[L8], 0.55 * mb);
	EXPECT_GE(m[L64], 0.97 * mb);

	ASSERT_EQ(0, fixed_curve(SIM_G_SSD_1M, &o, 2, m));
	mb = curve_max(m, NLIM);
	EXPECT_GE(m[L16], 0.95 * mb);
	EXPECT_LE(m[L4], 0.5 * mb);
	EXPECT_GE(m[L8], 0.7 * mb);

	ASSERT_EQ(0, fixed_curve(SIM_G_HDD_10K, &o, 2, m));
	mb = curve_max(m, NLIM);
	EXPECT_GE(m[L2], 0.95 * mb);
	EXPECT_LE(m[L1], 0.85 * mb);

	ASSERT_EQ(0, fixed_curve(SIM_G_HDD_100K, &o, 2, m));
	mb = curve_max(m, NLIM);
	EXPECT_GE(m[L2], 0.95 * mb);
	EXPECT_LE(m[L1], 0.85 * mb);

	ASSERT_EQ(0, fixed_curve(SIM_G_HDD_1M, &o, 2, m));
	EXPECT_EQ(m[L1], curve_max(m, NLIM));
	EXPECT_LE(curve_max(m + 1, NLIM - 1), 0.75 * m[L1]);
	EXPECT_GE(curve_max(m + 1, NLIM - 1), 0.55 * m[L1]);
}

/* ---- the noise ---------------------------------------------------------- */

/*
 * Without any TCG noise, crediting whole jobs when they complete makes
 * 200 ms samples at a steady limit swing by several percent, and
 * consecutive ones lean against each other (a job counted in one cycle
 * is missing from the next).  1 s cycles hold five times the jobs and
 * swing less.
 */
TEST(whole_job_crediting_makes_samples_swing)
{
	static const struct { enum sim_scenario_id id; unsigned int limit; }
	cells[] = {
		{ SIM_G_SSD_10K, 16 }, { SIM_G_SSD_100K, 16 },
		{ SIM_G_HDD_1M, 1 },
	};
	struct sim_opts o = { .quiet = 1 };
	struct iopa_ctl_params p;
	unsigned int i;

	params(&p, SIM_G_NCPUS);
	for (i = 0; i < sizeof(cells) / sizeof(cells[0]); i++) {
		struct sim_noise_stats a, b;

		ASSERT_EQ(0, sim_noise(cells[i].id, &p, &o, cells[i].limit,
				       200, &a));
		ASSERT_EQ(0, sim_noise(cells[i].id, &p, &o, cells[i].limit,
				       1000, &b));
		TH_LOG("%s at %u: 200 ms cv %.3f lag1 %.2f, 1 s cv %.3f",
		       sim_scenario_name(cells[i].id), cells[i].limit, a.cv,
		       a.lag1, b.cv);
		EXPECT_GE(a.n, 50);
		EXPECT_GE(a.cv, 0.03);
		EXPECT_LE(a.cv, 0.2);
		EXPECT_LT(a.lag1, 0);
		EXPECT_LT(b.cv, a.cv);
	}
}

/*
 * The noise is the guest's (bench/results/timeseries.csv, its cells'
 * adaptive runs at a steady limit): on null_blk, 1 s of throughput varied
 * by 0.4-2% and the bench's 100 ms series swung by 10-11%, each sample
 * against the one before (lag-1 -0.6 to -0.7: jobs marching nearly in
 * step); on iopa_hdd 1 s varied by 2-7%.  TCG's jitter and slow jobs
 * still show where they act, on the CPUs and iopa_hdd's completions:
 * with 1 MiB files 1 s samples swing twice as much as crediting alone.
 */
TEST(noise_as_in_the_guest)
{
	static const enum sim_scenario_id ssd[] = {
		SIM_G_SSD_10K, SIM_G_SSD_100K,
	};
	static const enum sim_scenario_id hdd[] = {
		SIM_G_HDD_10K, SIM_G_HDD_100K, SIM_G_HDD_1M,
	};
	struct sim_noise_stats n, q;
	struct sim_opts o = { 0 };
	struct iopa_ctl_params p;
	unsigned int i;

	params(&p, SIM_G_NCPUS);
	for (i = 0; i < sizeof(ssd) / sizeof(ssd[0]); i++) {
		ASSERT_EQ(0, sim_noise(ssd[i], &p, &o, 20, 1000, &n));
		TH_LOG("%s at 20: 1 s cv %.3f; 100 ms series cv %.3f lag1 %.2f",
		       sim_scenario_name(ssd[i]), n.cv, n.bench_cv,
		       n.bench_lag1);
		EXPECT_LE(n.cv, 0.02);
		EXPECT_GE(n.bench_cv, 0.05);
		EXPECT_LE(n.bench_cv, 0.2);
		EXPECT_LT(n.bench_lag1, -0.1);
	}
	for (i = 0; i < sizeof(hdd) / sizeof(hdd[0]); i++) {
		unsigned int lim = hdd[i] == SIM_G_HDD_1M ? 1 : 2;

		ASSERT_EQ(0, sim_noise(hdd[i], &p, &o, lim, 1000, &n));
		TH_LOG("%s at %u: 1 s cv %.3f", sim_scenario_name(hdd[i]), lim,
		       n.cv);
		EXPECT_GE(n.cv, 0.01);
		EXPECT_LE(n.cv, 0.07);
	}
	o.quiet = 1;
	ASSERT_EQ(0, sim_noise(SIM_G_HDD_1M, &p, &o, 1, 1000, &q));
	TH_LOG("hdd-1m at 1, 1 s: tcg cv %.3f, quiet %.3f", n.cv, q.cv);
	EXPECT_GT(n.cv, 1.5 * q.cv);
}

/* ---- what moves under the controller ------------------------------------ */

static void phases(enum sim_scenario_id id, unsigned int limit,
		   double *t, unsigned int *np,
		   struct __test_metadata *_metadata)
{
	struct sim_opts o = { .seed = 1 };
	struct iopa_ctl_params p;

	params(&p, SIM_G_NCPUS);
	ASSERT_EQ(0, sim_fixed_phases(id, &p, &o, limit, t, np));
}

TEST(competitor_moves_the_optimum)
{
	double a[SIM_MAX_PHASES], b[SIM_MAX_PHASES];
	unsigned int n;

	/* null_blk: alone, 16 jobs fill the tags; against fio's 16, more win */
	phases(SIM_G_COMPETE_SSD, 16, a, &n, _metadata);
	phases(SIM_G_COMPETE_SSD, 64, b, &n, _metadata);
	ASSERT_EQ(3, n);
	EXPECT_LE(b[0], 1.08 * a[0]);
	EXPECT_GE(b[1], 1.3 * a[1]);
	EXPECT_LE(b[2], 1.08 * a[2]);
	/* iopa_hdd, 1 MiB files: one stream alone; many against fio */
	phases(SIM_G_COMPETE_HDD, 1, a, &n, _metadata);
	phases(SIM_G_COMPETE_HDD, 64, b, &n, _metadata);
	ASSERT_EQ(3, n);
	EXPECT_GE(a[0], 1.3 * b[0]);
	EXPECT_GE(b[1], 2 * a[1]);
	EXPECT_GE(a[2], 1.3 * b[2]);
}

TEST(file_size_switch_moves_the_knee)
{
	double t[NLIM][SIM_MAX_PHASES];
	unsigned int n, l;

	for (l = 0; l < NLIM; l++)
		phases(SIM_G_SWITCH_HDD, sim_guest_limits[l], t[l], &n,
		       _metadata);
	ASSERT_EQ(2, n);
	/* 100 KiB files: flat from 4; 1 MiB files: best at 1 */
	EXPECT_GE(t[L4][0], 0.95 * t[L64][0]);
	EXPECT_LE(t[L1][0], 0.85 * t[L4][0]);
	EXPECT_GE(t[L1][1], 1.3 * t[L4][1]);

	for (l = 0; l < NLIM; l++)
		phases(SIM_G_SWITCH_SSD, sim_guest_limits[l], t[l], &n,
		       _metadata);
	ASSERT_EQ(2, n);
	/*
	 * 10 KiB files: a request per job, the knee at 16 tags; 1 MiB
	 * files: about two each, nearer 8
	 */
	EXPECT_LE(t[L8][0], 0.55 * t[L32][0]);
	EXPECT_GE(t[L8][1], 0.7 * t[L32][1]);
}

TEST(cache_hits_are_flagged_and_carry_no_bytes)
{
	struct sim_opts o = { .fixed = 8 };
	struct iopa_ctl_params p;
	struct sim_result r;
	double t[SIM_MAX_PHASES];
	unsigned int n;

	params(&p, SIM_G_NCPUS);
	ASSERT_EQ(0, sim_run(SIM_G_CACHE, 0, &p, &o, &r));
	/*
	 * As the module: the cycles of the middle third (20 s / 3 of 1 s
	 * cycles) are measured in jobs/s, the first of them and the first
	 * after them (a change of unit) flagged cached
	 */
	TH_LOG("%d cycles, %d in jobs/s, %d cached", r.cycles, r.jobs_cycles,
	       r.cached_cycles);
	EXPECT_EQ(2, r.cached_cycles);
	EXPECT_GE(r.jobs_cycles, 5);
	EXPECT_LE(r.jobs_cycles, 7);
	/* CPU-only jobs never did block I/O: always jobs/s, never cached */
	o.fixed = 2;
	ASSERT_EQ(0, sim_run(SIM_G_CPU, 0, &p, &o, &r));
	EXPECT_EQ(0, r.cached_cycles);
	EXPECT_EQ(r.cycles, r.jobs_cycles);
	/* the jobs still ran, CPU-bound and faster */
	phases(SIM_G_CACHE, 8, t, &n, _metadata);
	ASSERT_EQ(3, n);
	EXPECT_GT(t[1], 1.5 * t[0]);
}

TEST(cpu_bound_knee_is_the_cpu_count)
{
	static const unsigned int cpus[] = { 2, 8 };
	unsigned int i;

	for (i = 0; i < 2; i++) {
		struct sim_opts o = { .ncpus = cpus[i] };
		struct iopa_ctl_params p;
		struct sim_result r;

		params(&p, cpus[i]);
		ASSERT_EQ(0, sim_run(SIM_G_CPU, 0, &p, &o, &r));
		EXPECT_EQ(cpus[i], r.best_limit);
		/* saturated at the CPU count, not below it */
		o.fixed = cpus[i];
		ASSERT_EQ(0, sim_run(SIM_G_CPU, 0, &p, &o, &r));
		EXPECT_GE(r.saturated_cycles, r.cycles - 1);
		o.fixed = cpus[i] / 2;
		ASSERT_EQ(0, sim_run(SIM_G_CPU, 0, &p, &o, &r));
		EXPECT_EQ(0, r.saturated_cycles);
	}
}

TEST(tenants_share_one_device)
{
	struct sim_opts o = { .fixed = 8 };
	struct iopa_ctl_params p;
	struct sim_result r;
	double t[SIM_MAX_PHASES];
	unsigned int n;

	params(&p, SIM_G_NCPUS);
	ASSERT_EQ(0, sim_run(SIM_G_TENANTS_SSD, 0, &p, &o, &r));
	EXPECT_EQ(3, r.ntenants);
	/* equal limits share fairly once all run */
	TH_LOG("at 8 each: %.2f %.2f %.2f MB/s, jain %.3f, join %d",
	       r.tenant_tput[0], r.tenant_tput[1], r.tenant_tput[2], r.jain,
	       r.join_cycles);
	EXPECT_GE(r.jain, 0.97);
	EXPECT_GE(r.join_cycles, 0);
	EXPECT_LE(r.join_cycles, 2);
	/*
	 * the device's 16 tags are shared: 8 each, with two, nearly fill
	 * them; the third adds jobs, not throughput, and takes its share
	 */
	phases(SIM_G_TENANTS_SSD, 8, t, &n, _metadata);
	ASSERT_EQ(2, n);
	EXPECT_LE(t[1], 1.15 * t[0]);
	EXPECT_LE(r.tenant_tput[0], 0.4 * t[1]);
	/* iopa_hdd, 1 MiB files: two streams cost the device */
	phases(SIM_G_TENANTS_HDD, 1, t, &n, _metadata);
	ASSERT_EQ(2, n);
	EXPECT_LE(t[1], 0.8 * t[0]);
}

/* ---- the harness -------------------------------------------------------- */

/*
 * A cycle ends early only when iopa_ctl_cycle_enough() says so (never for
 * the fixed-cycle policies) and never later than its bound; samples
 * carry completions.
 */
TEST(cycles_follow_the_controller)
{
	struct iopa_ctl_params p;
	int sc, pol;

	params(&p, SIM_G_NCPUS);
	for (sc = SIM_G_FIRST; sc < SIM_NR_ALL; sc++) {
		for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
			struct sim_opts o = { 0 };
			struct sim_result r;

			ASSERT_EQ(0, sim_run(sc, pol, &p, &o, &r));
			EXPECT_EQ(0, r.late_cycles);
			EXPECT_GT(r.cycles, 3);
			if (pol == IOPA_CTL_POLICY_IOPA ||
			    pol == IOPA_CTL_POLICY_HILLCLIMB)
				EXPECT_EQ(0, r.early_cycles);
		}
	}
}

TEST(deterministic)
{
	struct iopa_ctl_params p;
	int sc, pol, differ = 0;

	params(&p, SIM_G_NCPUS);
	for (sc = SIM_G_FIRST; sc < SIM_NR_ALL; sc++) {
		for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
			struct sim_opts o = { .seed = 3 };
			struct sim_result a, b;

			ASSERT_EQ(0, sim_run(sc, pol, &p, &o, &a));
			ASSERT_EQ(0, sim_run(sc, pol, &p, &o, &b));
			EXPECT_EQ(0, memcmp(&a, &b, sizeof(a)));
			o.seed = 4;
			ASSERT_EQ(0, sim_run(sc, pol, &p, &o, &b));
			differ += a.mean_tput != b.mean_tput;
		}
	}
	/* another seed, other job sizes, files and stalls */
	EXPECT_EQ((SIM_NR_ALL - SIM_G_FIRST) * IOPA_CTL_NR_POLICIES, differ);
}

/*
 * A model changed in place (one struct sim_model reused for several
 * device settings, as ctl_test's matrix does) is another device: the
 * best fixed limit is swept again, not taken from the sweep of the
 * model as it was (the cache compared the model through the pointer it
 * kept, so every setting got the first one's sweep).
 */
TEST(model_changed_in_place_is_swept_again)
{
	struct sim_model m = sim_model_default;
	struct sim_opts o = { .seed = 1, .duration_ms = 5000, .model = &m };
	struct iopa_ctl_params p;
	struct sim_result a, b;

	params(&p, SIM_G_NCPUS);
	ASSERT_EQ(0, sim_run(SIM_G_SSD_100K, IOPA_CTL_POLICY_BRACKET, &p, &o,
			     &a));
	m.ssd_tags = 1;
	ASSERT_EQ(0, sim_run(SIM_G_SSD_100K, IOPA_CTL_POLICY_BRACKET, &p, &o,
			     &b));
	/* one tag: a request at a time, a sixteenth of the device */
	EXPECT_LT(b.best_tput * 4, a.best_tput);
	EXPECT_GT(b.mean_tput * 4, b.best_tput * 3);
}

TEST(scenario_names_round_trip)
{
	int sc;

	for (sc = 0; sc < SIM_NR_ALL; sc++) {
		EXPECT_EQ(sc, sim_scenario_parse(sim_scenario_name(sc)));
		EXPECT_EQ(sc < SIM_G_FIRST, sim_scenario_kind(sc) ==
			  SIM_KIND_LEGACY);
	}
	EXPECT_EQ(-1, sim_scenario_parse("nope"));
}

TEST_HARNESS_MAIN
