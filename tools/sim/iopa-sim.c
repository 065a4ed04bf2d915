// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-sim - run kernel/ctl.c against simulated devices.
 *
 *   iopa-sim                 one line per scenario and policy (legacy, then
 *                            guest-like, with their step and tenants lines)
 *   iopa-sim --table         guest-like scenarios over 16 seeds: the best
 *                            fixed limit, each policy's median and minimum
 *                            mean_pct_of_best (for tuning)
 *   iopa-sim --fit           the guest's bench table (fixed limits and
 *                            policies) against the model
 *   iopa-sim --curve         guest-like scenarios at fixed limits, per phase
 *   iopa-sim --noise         what the controller and the bench measure at
 *                            fixed limits: spread, lag-1 autocorrelation
 *   iopa-sim --trace [-s S] [-p P]   every cycle of the chosen runs
 *   iopa-sim --seeds N       every scenario over seeds 1..N: mean, min
 *   iopa-sim --sweep         the legacy parameter sweeps behind the defaults
 *   iopa-sim --list          the scenarios
 *
 * Options: -s SCENARIO, -p POLICY, --seed N, --ncpus N (default: the
 * scenario's, 32 legacy, 2 guest-like), --duration MS, --fixed N,
 * --job-scale X (legacy job length), --set PARAM=VALUE (a field of struct
 * iopa_ctl_params; repeatable), --model NAME=VALUE (a field of struct
 * sim_model; repeatable), --csum-ms X (guest-like: CPU ms per 100 KiB
 * read), --quiet (guest-like: no TCG noise).  See README for the models
 * and the metrics.  Everything is deterministic: the same command prints
 * the same output.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: iopa-sim [--table | --fit | --curve | --noise | --list | --sweep |\n"
		"                 --seeds N | --trace] [-s SCENARIO] [-p POLICY] [--seed N]\n"
		"                [--ncpus N] [--duration MS] [--fixed N] [--knee N] [--rotational]\n"
		"                [--knee-kb KIB] [--job-scale X]\n"
		"                [--set PARAM=VALUE]... [--model NAME=VALUE]... [--csum-ms X]\n"
		"                [--quiet]\n");
	exit(2);
}

static void oom(void)
{
	fprintf(stderr, "iopa-sim: out of memory\n");
	exit(1);
}

/* --set NAME=VALUE: override one parameter after the defaults. */
static int set_param(struct iopa_ctl_params *p, const char *arg)
{
	static const struct { const char *name; size_t off; } f[] = {
#define F(x) { #x, offsetof(struct iopa_ctl_params, x) }
		F(increase_permille), F(decrease_permille), F(fast_cycle_ms),
		F(normal_cycle_ms), F(hold_cycle_ms), F(history),
		F(init_limit), F(fast_cap), F(max_limit),
#undef F
	};
	const char *eq = strchr(arg, '=');
	unsigned int i;

	if (!eq)
		return -1;
	for (i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (strlen(f[i].name) == (size_t)(eq - arg) &&
		    !strncmp(f[i].name, arg, eq - arg)) {
			*(u32 *)((char *)p + f[i].off) = strtoul(eq + 1, NULL, 0);
			return 0;
		}
	}
	return -1;
}

/* The parameters: module defaults for @ncpus, then the --set ones. */
struct cli {
	struct sim_opts o;
	const char *sets[16];
	int nset;
	int sc, pol;
};

static void params_for(const struct cli *cl, unsigned int ncpus,
		       struct iopa_ctl_params *p)
{
	int i;

	iopa_ctl_params_default(p, ncpus);
	for (i = 0; i < cl->nset; i++)
		if (set_param(p, cl->sets[i]))
			usage();
	if (iopa_ctl_params_check(p)) {
		fprintf(stderr, "iopa-sim: inconsistent parameters\n");
		exit(2);
	}
}

static unsigned int ncpus_of(const struct cli *cl, int sc)
{
	if (cl->o.ncpus)
		return cl->o.ncpus;
	return sc < SIM_G_FIRST ? SIM_NCPUS : SIM_G_NCPUS;
}

static void header(const struct iopa_ctl_params *p, unsigned long long seed)
{
	struct iopa_ctl c;

	iopa_ctl_init(&c, p, IOPA_CTL_POLICY_IOPA);
	printf("# iopa-sim: kernel/ctl.c on simulated devices; legacy scenarios: %u CPUs (init limit %u, fast cap %u, max limit %u),\n",
	       p->ncpus, iopa_ctl_limit(&c),
	       p->fast_cap ? p->fast_cap : (p->ncpus * 90 + 99) / 100,
	       p->max_limit);
	printf("#   %u normal cycles of %u ms (fast %u, hold %u), thresholds %u/%u per mille, history %u, seed %llu\n",
	       SIM_RUN_CYCLES, p->normal_cycle_ms, p->fast_cycle_ms,
	       p->hold_cycle_ms, p->increase_permille, p->decrease_permille,
	       p->history, seed);
	printf("# cycles_to_90: run time, in normal cycles rounded up, to the end of the first\n"
	       "#   controller cycle whose throughput (legacy: noise-free; guest-like: over the\n"
	       "#   last normal cycle) reached 90%% of the best fixed limit's over the same time\n"
	       "#   (-1: never)\n"
	       "# mean_pct_of_best: the run's throughput over that of the best fixed limit\n"
	       "#   (legacy: 1..max limit; guest-like: 1..64; step scenarios: the best fixed\n"
	       "#   limit of each phase), in percent\n"
	       "# changes_after_settle: limit changes after the first third of the run\n");
}

static void guest_header(const struct iopa_ctl_params *p)
{
	printf("# guest-like scenarios: %u CPUs, %u ms runs, module defaults (max limit %u,\n"
	       "#   cycles %u/%u ms); bytes credited when a job completes; step scenarios add\n"
	       "#   pct_of_best_fixed (against the best single fixed limit), tenants add the\n"
	       "#   total, Jain's index once all run, the late one's normal cycles to 90%% of a\n"
	       "#   fair share\n",
	       p->ncpus, SIM_G_RUN_MS, p->max_limit, p->fast_cycle_ms,
	       p->normal_cycle_ms);
}

static void run_one(int sc, int pol, const struct iopa_ctl_params *p,
		    const struct sim_opts *o, struct sim_result *r)
{
	if (sim_run(sc, pol, p, o, r))
		oom();
}

static void one(int sc, int pol, const struct iopa_ctl_params *p,
		const struct sim_opts *o)
{
	const char *s = sim_scenario_name(sc), *pn = iopa_ctl_policy_name(pol);
	struct sim_result r;

	run_one(sc, pol, p, o, &r);
	printf("sim scenario=%s policy=%s cycles_to_90=%d mean_pct_of_best=%.2f changes_after_settle=%d\n",
	       s, pn, r.cycles_to_90, r.mean_pct_of_best,
	       r.changes_after_settle);
	if (r.kind == SIM_KIND_STEP)
		printf("sim step scenario=%s policy=%s pct_of_best_fixed=%.2f\n",
		       s, pn, r.pct_of_best_fixed);
	if (r.kind == SIM_KIND_TENANTS)
		printf("sim tenants scenario=%s policy=%s n=%u total_pct_of_best=%.2f jain=%.3f join_cycles=%d\n",
		       s, pn, r.ntenants, r.total_pct_of_best, r.jain,
		       r.join_cycles);
	if (o->trace) {
		printf("# best fixed limit %u; final limit %u (seen %u..%u), %d changes in %d cycles (%d ended early)\n",
		       r.best_limit, r.final_limit, r.min_limit_seen,
		       r.max_limit_seen, r.changes, r.cycles, r.early_cycles);
		if (r.kind != SIM_KIND_LEGACY)
			printf("# %.3f against %.3f (MB/s, jobs/s if CPU-only), mean limit %.1f, %llu events\n",
			       r.mean_tput, r.best_tput, r.mean_limit,
			       r.events);
	}
}

/* Over seeds 1..@n: mean and min of mean_pct_of_best, worst of the rest. */
struct agg {
	double mean_pct, min_pct;
	int worst_c90, worst_changes;
};

static void aggregate(int sc, int pol, const struct iopa_ctl_params *p,
		      const struct sim_opts *o, int n, struct agg *a)
{
	struct sim_opts so = *o;
	struct sim_result r;
	int i;

	a->mean_pct = 0;
	a->min_pct = 1e9;
	a->worst_c90 = 0;
	a->worst_changes = 0;
	for (i = 1; i <= n; i++) {
		so.seed = i;
		run_one(sc, pol, p, &so, &r);
		a->mean_pct += r.mean_pct_of_best / n;
		if (r.mean_pct_of_best < a->min_pct)
			a->min_pct = r.mean_pct_of_best;
		if (r.cycles_to_90 < 0 || a->worst_c90 < 0)
			a->worst_c90 = -1;
		else if (r.cycles_to_90 > a->worst_c90)
			a->worst_c90 = r.cycles_to_90;
		if (r.changes_after_settle > a->worst_changes)
			a->worst_changes = r.changes_after_settle;
	}
}

static void seeds(const struct cli *cl, int n)
{
	struct iopa_ctl_params p;
	int sc, pol;

	printf("# over seeds 1..%d: mean and min of mean_pct_of_best, worst cycles_to_90 and changes_after_settle\n",
	       n);
	for (sc = 0; sc < SIM_NR_ALL; sc++) {
		if (cl->sc >= 0 && sc != cl->sc)
			continue;
		params_for(cl, ncpus_of(cl, sc), &p);
		for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
			struct agg a;

			if (cl->pol >= 0 && pol != cl->pol)
				continue;
			aggregate(sc, pol, &p, &cl->o, n, &a);
			printf("# seeds scenario=%s policy=%s mean_pct=%.2f min_pct=%.2f worst_cycles_to_90=%d worst_changes_after_settle=%d\n",
			       sim_scenario_name(sc), iopa_ctl_policy_name(pol),
			       a.mean_pct, a.min_pct, a.worst_c90,
			       a.worst_changes);
		}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define TABLE_SEEDS	16

/*
 * --table: per guest-like scenario, over seeds 1..16, the best fixed
 * limit (median over the seeds, and its range) and per policy the median
 * and minimum of mean_pct_of_best; step scenarios also the median against
 * the best single fixed limit, tenants the median Jain's index.
 */
static void table(const struct cli *cl)
{
	double pct[TABLE_SEEDS], fix[TABLE_SEEDS], jain[TABLE_SEEDS];
	double best[TABLE_SEEDS], knee[TABLE_SEEDS];
	struct iopa_ctl_params p;
	struct sim_opts o = cl->o;
	int sc, pol, i;

	params_for(cl, cl->o.ncpus ? cl->o.ncpus : SIM_G_NCPUS, &p);
	guest_header(&p);
	printf("# table: over seeds 1..%d; best = the best fixed limit of 1..%u (median over\n"
	       "#   the seeds [range]); knee = the smallest within 2%% of it (median); per\n"
	       "#   policy median/min of mean_pct_of_best (step scenarios: against the best\n"
	       "#   limit of each phase; f: median against the best single fixed limit;\n"
	       "#   tenants: j: median Jain's index)\n",
	       TABLE_SEEDS, o.best_max ? o.best_max : SIM_G_BEST_MAX);
	printf("# %-12s %-11s %4s", "scenario", "best", "knee");
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++)
		printf(" %22s", iopa_ctl_policy_name(pol));
	printf("\n");
	for (sc = SIM_G_FIRST; sc < SIM_NR_ALL; sc++) {
		char bs[32];
		double lo = 1e9, hi = 0;

		if (cl->sc >= 0 && sc != cl->sc)
			continue;
		for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
			int kind = sim_scenario_kind(sc);
			char cell[64];
			double med;

			for (i = 0; i < TABLE_SEEDS; i++) {
				struct sim_result r;

				o.seed = i + 1;
				run_one(sc, pol, &p, &o, &r);
				pct[i] = r.mean_pct_of_best;
				fix[i] = r.pct_of_best_fixed;
				jain[i] = r.jain;
				best[i] = r.best_limit;
				knee[i] = r.knee_limit;
				if (best[i] < lo)
					lo = best[i];
				if (best[i] > hi)
					hi = best[i];
			}
			if (!pol) {
				med = median(best, TABLE_SEEDS);
				snprintf(bs, sizeof(bs), lo == hi ? "%.0f" :
					 "%.0f [%.0f-%.0f]", med, lo, hi);
				printf("%-14s %-11s %4.0f", sim_scenario_name(sc),
				       bs, median(knee, TABLE_SEEDS));
			}
			med = median(pct, TABLE_SEEDS);	/* sorts */
			snprintf(cell, sizeof(cell), "%.1f/%.1f", med, pct[0]);
			if (kind == SIM_KIND_STEP)
				snprintf(cell + strlen(cell),
					 sizeof(cell) - strlen(cell), " f%.1f",
					 median(fix, TABLE_SEEDS));
			if (kind == SIM_KIND_TENANTS)
				snprintf(cell + strlen(cell),
					 sizeof(cell) - strlen(cell), " j%.2f",
					 median(jain, TABLE_SEEDS));
			printf(" %22s", cell);
		}
		printf("\n");
		fflush(stdout);
	}
}

#define FIT_SEEDS	3
#define FIT_POL_SEEDS	16
#define FIT_POINTS	5.0

/* The policies in the order of the guest's table: default first. */
static const int fit_pols[] = {
	IOPA_CTL_POLICY_BRACKET, IOPA_CTL_POLICY_IOPA,
	IOPA_CTL_POLICY_HILLCLIMB,
};

#define FIT_NPOLS	(sizeof(fit_pols) / sizeof(fit_pols[0]))

static double fit_guest_mbps(const struct sim_guest_cell *g, int pol)
{
	switch (pol) {
	case IOPA_CTL_POLICY_BRACKET:
		return g->bracket_mbps;
	case IOPA_CTL_POLICY_IOPA:
		return g->iopa_mbps;
	default:
		return g->hillclimb_mbps;
	}
}

/* "bracket>iopa>hillclimb": the policies by @pct, best first. */
static void fit_rank(const double *pct, char *buf, size_t len)
{
	unsigned int i, j, k, ord[FIT_NPOLS];

	for (i = 0; i < FIT_NPOLS; i++)
		ord[i] = i;
	for (i = 1; i < FIT_NPOLS; i++)
		for (j = i; j > 0 && pct[ord[j]] > pct[ord[j - 1]]; j--) {
			k = ord[j];
			ord[j] = ord[j - 1];
			ord[j - 1] = k;
		}
	buf[0] = 0;
	for (i = 0; i < FIT_NPOLS; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%s%s",
			 i ? ">" : "", iopa_ctl_policy_name(fit_pols[ord[i]]));
}

/*
 * One cell's policies: % of the best of the fixed limits 1, 2, ..., 64,
 * guest and model (mean over seeds 1..FIT_POL_SEEDS), and the ranking.
 * Return: the largest difference, in points.
 */
static double fit_policies(const struct sim_guest_cell *g,
			   const struct iopa_ctl_params *p,
			   const struct sim_opts *base)
{
	double gp[FIT_NPOLS], mp[FIT_NPOLS], gb = 0, worst = 0;
	struct sim_opts o = *base;
	char gr[64], mr[64];
	unsigned int k;
	int l, s;

	for (l = 0; l < 7; l++)
		if (g->mbps[l] > gb)
			gb = g->mbps[l];
	for (k = 0; k < FIT_NPOLS; k++) {
		gp[k] = 100 * fit_guest_mbps(g, fit_pols[k]) / gb;
		mp[k] = 0;
	}
	for (s = 1; s <= FIT_POL_SEEDS; s++) {
		struct sim_result r;
		double best = 0;

		o.seed = s;
		/* against the best of the guest's limits, this seed */
		for (l = 0; l < 7; l++) {
			o.fixed = sim_guest_limits[l];
			run_one(g->id, 0, p, &o, &r);
			if (r.mean_tput > best)
				best = r.mean_tput;
		}
		o.fixed = 0;
		for (k = 0; k < FIT_NPOLS; k++) {
			run_one(g->id, fit_pols[k], p, &o, &r);
			mp[k] += 100 * r.mean_tput / best / FIT_POL_SEEDS;
		}
	}
	printf("fit policies cell=%s", sim_scenario_name(g->id));
	for (k = 0; k < FIT_NPOLS; k++) {
		double d = mp[k] - gp[k];

		printf(" %s=%.1f/%.1f", iopa_ctl_policy_name(fit_pols[k]),
		       gp[k], mp[k]);
		if (d < 0)
			d = -d;
		if (d > worst)
			worst = d;
	}
	fit_rank(gp, gr, sizeof(gr));
	fit_rank(mp, mr, sizeof(mr));
	printf(" max_diff=%.1f rank=%s/%s\n", worst, gr, mr);
	return worst;
}

/*
 * --fit: each cell of the guest's table at the fixed limits 1..64, the
 * guest's MB/s and the model's (mean of 3 seeds, as the bench's 3 runs),
 * each relative to its best; then the policies, as the bench ran them:
 * the module's defaults.
 */
static void fit(const struct cli *cl)
{
	double curve_err[SIM_NR_CELLS], pol_err[SIM_NR_CELLS];
	struct iopa_ctl_params p;
	struct sim_opts o = cl->o;
	int c, l, s, ok = 1;

	params_for(cl, o.ncpus ? o.ncpus : SIM_G_NCPUS, &p);
	o.best_max = 64;
	printf("# fit: the guest bench (bench/README.md, fresh-clone run at 4c646f5: 3 runs\n"
	       "#   of 20 s, null_blk unthrottled, module defaults) against the model run\n"
	       "#   the same way (%u CPUs, %u ms, max limit %u, cycles %u/%u ms;\n"
	       "#   fixed limits: mean of seeds 1..%d)\n"
	       "# per limit: guest MB/s / model MB/s, then each relative to its best, and\n"
	       "#   the largest difference of the relative curves\n",
	       p.ncpus, SIM_G_RUN_MS, p.max_limit, p.fast_cycle_ms,
	       p.normal_cycle_ms, FIT_SEEDS);
	for (c = 0; c < SIM_NR_CELLS; c++) {
		const struct sim_guest_cell *g = &sim_guest_cells[c];
		double m[7], gb = 0, mb = 0, err = 0;

		curve_err[c] = -1;
		if (cl->sc >= 0 && (int)g->id != cl->sc)
			continue;
		for (l = 0; l < 7; l++) {
			m[l] = 0;
			for (s = 1; s <= FIT_SEEDS; s++) {
				struct sim_result r;

				o.seed = s;
				o.fixed = sim_guest_limits[l];
				run_one(g->id, 0, &p, &o, &r);
				m[l] += r.mean_tput / FIT_SEEDS;
			}
			if (m[l] > mb)
				mb = m[l];
			if (g->mbps[l] > gb)
				gb = g->mbps[l];
		}
		printf("fit cell=%s", sim_scenario_name(g->id));
		for (l = 0; l < 7; l++)
			printf(" %u:%.2f/%.2f", sim_guest_limits[l], g->mbps[l],
			       m[l]);
		printf("\nfit cell=%s rel", sim_scenario_name(g->id));
		for (l = 0; l < 7; l++) {
			double d = m[l] / mb - g->mbps[l] / gb;

			printf(" %u:%.3f/%.3f", sim_guest_limits[l],
			       g->mbps[l] / gb, m[l] / mb);
			if (d < 0)
				d = -d;
			if (d > err)
				err = d;
		}
		curve_err[c] = 100 * err;
		printf(" max_diff=%.1f%%  # %s\n", 100 * err, g->note);
	}
	printf("# fit: policies, %% of the best of the fixed limits 1, 2, 4, ..., 64: guest /\n"
	       "#   model (mean of seeds 1..%d); max_diff in points; rank: the policies\n"
	       "#   best first, guest / model\n",
	       FIT_POL_SEEDS);
	for (c = 0; c < SIM_NR_CELLS; c++) {
		pol_err[c] = -1;
		if (cl->sc >= 0 && (int)sim_guest_cells[c].id != cl->sc)
			continue;
		pol_err[c] = fit_policies(&sim_guest_cells[c], &p, &o);
		fflush(stdout);
	}
	printf("# fit: within %.0f points (relative curve and every policy):",
	       FIT_POINTS);
	for (c = 0; c < SIM_NR_CELLS; c++) {
		int in;

		if (pol_err[c] < 0)
			continue;
		in = curve_err[c] <= FIT_POINTS && pol_err[c] <= FIT_POINTS;
		ok &= in;
		printf(" %s=%s", sim_scenario_name(sim_guest_cells[c].id),
		       in ? "yes" : "no");
	}
	printf("; all: %s\n", ok ? "yes" : "no");
}

/* --curve: guest-like scenarios at fixed limits, MB/s per phase. */
static void curve(const struct cli *cl)
{
	struct iopa_ctl_params p;
	unsigned int ncpus = cl->o.ncpus ? cl->o.ncpus : SIM_G_NCPUS;
	int sc, l;

	params_for(cl, ncpus, &p);
	printf("# curve: MB/s (jobs/s if CPU-only) at fixed limits, per phase, seed %llu, %u CPUs\n",
	       cl->o.seed ? cl->o.seed : 1, ncpus);
	for (sc = SIM_G_FIRST; sc < SIM_NR_ALL; sc++) {
		unsigned int np = 0, ph;
		double t[7][SIM_MAX_PHASES];

		if (cl->sc >= 0 && sc != cl->sc)
			continue;
		for (l = 0; l < 7; l++)
			if (sim_fixed_phases(sc, &p, &cl->o, sim_guest_limits[l],
					     t[l], &np))
				oom();
		for (ph = 0; ph < np; ph++) {
			printf("curve scenario=%s phase=%u", sim_scenario_name(sc),
			       ph);
			for (l = 0; l < 7; l++)
				printf(" %u:%.2f", sim_guest_limits[l], t[l][ph]);
			printf("\n");
		}
	}
}

/*
 * The guest's 100 ms series at a steady limit (the bench of 4c646f5,
 * bench/results/timeseries.csv, its cells' adaptive runs): medians over
 * the stretches of 30+ samples at one limit after the first second, at
 * 16 and above (ssd 10k, 100k; 10 and above for 1m), at 2 (hdd 10k,
 * 100k), at 1 (hdd 1m); the limit is about their median.
 */
static const struct {
	int id;
	unsigned int limit;
	double cv, lag1;
} guest_noise[] = {
	{ SIM_G_SSD_10K, 20, 0.099, -0.63 },
	{ SIM_G_SSD_100K, 20, 0.110, -0.70 },
	{ SIM_G_SSD_1M, 12, 0.136, -0.62 },
	{ SIM_G_HDD_10K, 2, 0.160, 0.21 },
	{ SIM_G_HDD_100K, 2, 0.091, -0.10 },
	{ SIM_G_HDD_1M, 1, 0.103, -0.14 },
};

/*
 * --noise: per cell, at the limit the guest's series was steady at: the
 * bench's 100 ms series, guest and model; then what the controller
 * gets at that limit and at the guest's best, in 200 ms and 1 s (default)
 * cycles, with the TCG noise and without.
 */
static void noise(const struct cli *cl)
{
	struct iopa_ctl_params p;
	unsigned int i, k;

	params_for(cl, cl->o.ncpus ? cl->o.ncpus : SIM_G_NCPUS, &p);
	printf("# noise: 100 ms series as the bench counts (bytes when read), guest / model\n"
	       "#   (seed %llu)\n"
	       "# then the controller's samples (bytes when a job completes) at fixed\n"
	       "#   limits, 20 s, module defaults: cv = stdev / mean, lag1 = lag-1\n"
	       "#   autocorrelation, jobs = completions per cycle; quiet = no TCG noise\n",
	       cl->o.seed ? cl->o.seed : 1);
	for (i = 0; i < sizeof(guest_noise) / sizeof(guest_noise[0]); i++) {
		struct sim_opts o = cl->o;
		struct sim_noise_stats ns;

		if (cl->sc >= 0 && guest_noise[i].id != cl->sc)
			continue;
		if (sim_noise(guest_noise[i].id, &p, &o, guest_noise[i].limit,
			      200, &ns))
			oom();
		printf("noise bench scenario=%s limit=%u cv=%.3f/%.3f lag1=%.2f/%.2f\n",
		       sim_scenario_name(guest_noise[i].id),
		       guest_noise[i].limit, guest_noise[i].cv, ns.bench_cv,
		       guest_noise[i].lag1, ns.bench_lag1);
	}
	for (i = 0; i < sizeof(guest_noise) / sizeof(guest_noise[0]); i++) {
		static const unsigned int cyc[] = { 200, 1000 };
		unsigned int lims[2] = { guest_noise[i].limit,
					 sim_guest_cells[i].best };
		unsigned int li;

		if (cl->sc >= 0 && guest_noise[i].id != cl->sc)
			continue;
		for (li = 0; li < 2; li++) {
			if (li && lims[1] == lims[0])
				continue;
			for (k = 0; k < 2; k++) {
				struct sim_noise_stats ns, nq;
				struct sim_opts o = cl->o;

				if (sim_noise(guest_noise[i].id, &p, &o,
					      lims[li], cyc[k], &ns))
					oom();
				o.quiet = 1;
				if (sim_noise(guest_noise[i].id, &p, &o,
					      lims[li], cyc[k], &nq))
					oom();
				printf("noise samples scenario=%s limit=%u cycle_ms=%u cv=%.3f lag1=%.2f jobs=%.1f quiet_cv=%.3f quiet_lag1=%.2f\n",
				       sim_scenario_name(guest_noise[i].id),
				       lims[li], cyc[k], ns.cv, ns.lag1,
				       ns.jobs, nq.cv, nq.lag1);
			}
		}
	}
}

static void list(void)
{
	static const char * const kinds[] = { "legacy", "steady", "step",
					      "tenants" };
	int sc;

	for (sc = 0; sc < SIM_NR_ALL; sc++)
		printf("%-12s %-8s %s\n", sim_scenario_name(sc),
		       kinds[sim_scenario_kind(sc)], sim_scenario_desc(sc));
}

/*
 * One sweep row: for each policy, over SWEEP_SEEDS seeds, the mean
 * mean_pct_of_best per scenario, its minimum over scenarios, and the
 * worst cycles_to_90 and changes_after_settle on ssd and hdd.
 */
#define SWEEP_SEEDS	64

static void sweep_row(const char *what, const struct iopa_ctl_params *p,
		      const struct sim_opts *o)
{
	int sc, pol;

	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		double worst = 1e9, minnoisy = 1e9;
		int c90 = 0, chg = 0;

		printf("# sweep %-24s %-9s", what, iopa_ctl_policy_name(pol));
		for (sc = 0; sc < SIM_NR_SCENARIOS; sc++) {
			struct agg a;

			aggregate(sc, pol, p, o, SWEEP_SEEDS, &a);
			printf(" %s=%6.2f", sim_scenario_name(sc), a.mean_pct);
			if (a.mean_pct < worst)
				worst = a.mean_pct;
			if (sc == SIM_NOISY)
				minnoisy = a.min_pct;
			if (sc == SIM_SSD || sc == SIM_HDD) {
				if (a.worst_c90 < 0 || c90 < 0)
					c90 = -1;
				else if (a.worst_c90 > c90)
					c90 = a.worst_c90;
				if (a.worst_changes > chg)
					chg = a.worst_changes;
			}
		}
		printf(" | worst=%6.2f noisy_min=%6.2f c90=%d chg=%d\n",
		       worst, minnoisy, c90, chg);
	}
}

static void sweep(const struct iopa_ctl_params *def, const struct sim_opts *o)
{
	static const unsigned int inc[] = { 1025, 1050, 1100, 1150, 1200, 1300 };
	static const unsigned int dec[] = { 700, 800, 850, 900, 950 };
	static const unsigned int hist[] = { 1, 2, 3, 4, 6, 8 };
	static const unsigned int hold[] = { 1, 2, 3, 4, 6 };
	static const unsigned int normal[] = { 100, 250, 500, 1000, 2000, 5000, 10000 };
	static const unsigned int pct[] = { 10, 30, 50, 90, 100, 150 };
	struct iopa_ctl_params p;
	struct sim_opts so;
	char what[64];
	unsigned int i, j;

	printf("# sweep: each row changes the defaults as named; mean mean_pct_of_best over %d seeds\n",
	       SWEEP_SEEDS);
	printf("# sweep: worst = lowest scenario; noisy_min = worst noisy seed; c90, chg = worst\n"
	       "#   cycles_to_90 and changes_after_settle over ssd and hdd\n");
	sweep_row("defaults", def, o);

	printf("# sweep 1: increase x decrease thresholds (per mille)\n");
	for (i = 0; i < sizeof(inc) / sizeof(inc[0]); i++) {
		for (j = 0; j < sizeof(dec) / sizeof(dec[0]); j++) {
			p = *def;
			p.increase_permille = inc[i];
			p.decrease_permille = dec[j];
			snprintf(what, sizeof(what), "inc=%u,dec=%u", inc[i],
				 dec[j]);
			sweep_row(what, &p, o);
		}
	}

	printf("# sweep 2: history N\n");
	for (i = 0; i < sizeof(hist) / sizeof(hist[0]); i++) {
		p = *def;
		p.history = hist[i];
		snprintf(what, sizeof(what), "history=%u", hist[i]);
		sweep_row(what, &p, o);
	}

	printf("# sweep 3: hold cycle, in normal cycles\n");
	for (i = 0; i < sizeof(hold) / sizeof(hold[0]); i++) {
		p = *def;
		p.hold_cycle_ms = hold[i] * def->normal_cycle_ms;
		snprintf(what, sizeof(what), "hold=%ux", hold[i]);
		sweep_row(what, &p, o);
	}

	printf("# sweep 4: normal cycle (fast = normal / 2, hold = 3 normal) over a fixed %u s run,\n"
	       "#   jobs of 100 ms (job-scale 1) and 400 ms (job-scale 4) on average\n",
	       SIM_RUN_CYCLES * def->normal_cycle_ms / 1000);
	for (j = 1; j <= 4; j *= 4) {
		for (i = 0; i < sizeof(normal) / sizeof(normal[0]); i++) {
			p = *def;
			p.normal_cycle_ms = normal[i];
			p.fast_cycle_ms = normal[i] / 2;
			p.hold_cycle_ms = 3 * normal[i];
			so = *o;
			so.duration_ms = SIM_RUN_CYCLES * def->normal_cycle_ms;
			so.job_scale = j;
			snprintf(what, sizeof(what), "normal=%ums,jobs=x%u",
				 normal[i], j);
			sweep_row(what, &p, &so);
		}
	}

	printf("# sweep 5: init limit and fast cap, percent of the CPUs\n");
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		p = *def;
		p.init_limit = (p.ncpus * pct[i] + 99) / 100;
		snprintf(what, sizeof(what), "init=%u%%", pct[i]);
		sweep_row(what, &p, o);
	}
	for (i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
		p = *def;
		p.fast_cap = (p.ncpus * pct[i] + 99) / 100;
		snprintf(what, sizeof(what), "fast_cap=%u%%", pct[i]);
		sweep_row(what, &p, o);
	}

	printf("# sweep 6: max limit on an 8-CPU machine (the ssd knee, 24, is above the CPUs;\n"
	       "#   best fixed limit of 1..64)\n");
	for (i = 1; i <= 8; i *= 2) {
		p = *def;
		p.ncpus = 8;
		p.max_limit = 8 * i;
		so = *o;
		so.ncpus = 8;
		so.best_max = 64;
		snprintf(what, sizeof(what), "ncpus=8,max=%ux", i);
		sweep_row(what, &p, &so);
	}
}

int main(int argc, char **argv)
{
	static struct sim_model model;
	struct cli cl = { .sc = -1, .pol = -1 };
	struct iopa_ctl_params p;
	int i, nseeds = 0, mode = 0, nmodel = 0;
	enum { RUN, SWEEP, SEEDS, TABLE, FIT, CURVE, NOISE, LIST };

	model = sim_model_default;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--trace")) {
			cl.o.trace = 1;
		} else if (!strcmp(a, "--sweep")) {
			mode = SWEEP;
		} else if (!strcmp(a, "--table")) {
			mode = TABLE;
		} else if (!strcmp(a, "--fit")) {
			mode = FIT;
		} else if (!strcmp(a, "--curve")) {
			mode = CURVE;
		} else if (!strcmp(a, "--noise")) {
			mode = NOISE;
		} else if (!strcmp(a, "--list")) {
			mode = LIST;
		} else if (!strcmp(a, "--quiet")) {
			cl.o.quiet = 1;
		} else if (!strcmp(a, "--rotational")) {
			cl.o.rotational = 1;
		} else if (!v) {
			usage();
		} else if (!strcmp(a, "--seeds")) {
			mode = SEEDS;
			nseeds = atoi(argv[++i]);
			if (nseeds < 1)
				usage();
		} else if (!strcmp(a, "--seed")) {
			cl.o.seed = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(a, "--job-scale")) {
			cl.o.job_scale = atof(argv[++i]);
		} else if (!strcmp(a, "--ncpus")) {
			cl.o.ncpus = atoi(argv[++i]);
		} else if (!strcmp(a, "--duration")) {
			cl.o.duration_ms = atoi(argv[++i]);
		} else if (!strcmp(a, "--fixed")) {
			cl.o.fixed = atoi(argv[++i]);
		} else if (!strcmp(a, "--knee")) {
			cl.o.knee = atoi(argv[++i]);
		} else if (!strcmp(a, "--knee-kb")) {
			cl.o.knee_kb = atoi(argv[++i]);
		} else if (!strcmp(a, "--csum-ms")) {
			cl.o.csum_ms_per_100k = atof(argv[++i]);
		} else if (!strcmp(a, "--set") && cl.nset < 16) {
			cl.sets[cl.nset++] = argv[++i];
		} else if (!strcmp(a, "--model")) {
			if (sim_model_set(&model, argv[++i]))
				usage();
			nmodel++;
		} else if (!strcmp(a, "-s")) {
			cl.sc = sim_scenario_parse(argv[++i]);
			if (cl.sc < 0)
				usage();
		} else if (!strcmp(a, "-p")) {
			i++;
			cl.pol = iopa_ctl_policy_parse(argv[i], strlen(argv[i]));
			if (cl.pol < 0)
				usage();
		} else {
			usage();
		}
	}
	if (nmodel)
		cl.o.model = &model;

	switch (mode) {
	case LIST:
		list();
		return 0;
	case SWEEP:
		params_for(&cl, ncpus_of(&cl, SIM_SSD), &p);
		header(&p, cl.o.seed ? cl.o.seed : 1);
		sweep(&p, &cl.o);
		return 0;
	case SEEDS:
		seeds(&cl, nseeds);
		return 0;
	case TABLE:
		table(&cl);
		return 0;
	case FIT:
		fit(&cl);
		return 0;
	case CURVE:
		curve(&cl);
		return 0;
	case NOISE:
		noise(&cl);
		return 0;
	}

	params_for(&cl, ncpus_of(&cl, SIM_SSD), &p);
	header(&p, cl.o.seed ? cl.o.seed : 1);
	for (i = 0; i < SIM_NR_ALL; i++) {
		int k;

		if (cl.sc >= 0 && i != cl.sc)
			continue;
		if (i == SIM_G_FIRST || (cl.sc >= SIM_G_FIRST && i == cl.sc)) {
			params_for(&cl, ncpus_of(&cl, i), &p);
			guest_header(&p);
		}
		for (k = 0; k < IOPA_CTL_NR_POLICIES; k++)
			if (cl.pol < 0 || k == cl.pol)
				one(i, k, &p, &cl.o);
	}
	return 0;
}
