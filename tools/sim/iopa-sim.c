// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-sim - run kernel/ctl.c against synthetic devices.
 *
 *   iopa-sim                     one line per scenario and policy
 *   iopa-sim --trace [-s S] [-p P]   every cycle of the chosen runs
 *   iopa-sim --seeds N           every scenario over seeds 1..N: mean, min
 *   iopa-sim --sweep             the parameter sweeps behind the defaults
 *
 * Options: -s SCENARIO, -p POLICY, --seed N, --job-scale X (job length
 * multiplier), --ncpus N, --set PARAM=VALUE (a field of struct
 * iopa_ctl_params, e.g. --set history=6; repeatable).  See README for the model and the metrics.
 * Everything is deterministic: the same command prints the same output.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: iopa-sim [--trace] [--seeds N] [--sweep] [-s SCENARIO] [-p POLICY]\n"
		"                [--seed N] [--job-scale X] [--ncpus N] [--set PARAM=VALUE]...\n");
	exit(2);
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

static void header(const struct iopa_ctl_params *p, unsigned long long seed)
{
	struct iopa_ctl c;

	iopa_ctl_init(&c, p, IOPA_CTL_POLICY_IOPA);
	printf("# iopa-sim: kernel/ctl.c on synthetic devices, %u CPUs (init limit %u, fast cap %u, max limit %u),\n",
	       p->ncpus, iopa_ctl_limit(&c),
	       p->fast_cap ? p->fast_cap : (p->ncpus * 90 + 99) / 100,
	       p->max_limit);
	printf("#   %u normal cycles of %u ms (fast %u, hold %u), thresholds %u/%u per mille, history %u, seed %llu\n",
	       SIM_RUN_CYCLES, p->normal_cycle_ms, p->fast_cycle_ms,
	       p->hold_cycle_ms, p->increase_permille, p->decrease_permille,
	       p->history, seed);
	printf("# cycles_to_90: run time, in normal cycles rounded up, to the end of the first\n"
	       "#   controller cycle whose noise-free throughput reached 90%% of the best fixed\n"
	       "#   limit's over the same time (-1: never)\n"
	       "# mean_pct_of_best: time-weighted mean noise-free throughput of the run over\n"
	       "#   that of the best fixed limit (1..max limit), in percent\n"
	       "# changes_after_settle: limit changes after the first third of the run\n");
}

static void one(int sc, int pol, const struct iopa_ctl_params *p,
		const struct sim_opts *o)
{
	struct sim_result r;

	if (sim_run(sc, pol, p, o, &r)) {
		fprintf(stderr, "iopa-sim: out of memory\n");
		exit(1);
	}
	printf("sim scenario=%s policy=%s cycles_to_90=%d mean_pct_of_best=%.2f changes_after_settle=%d\n",
	       sim_scenario_name(sc), iopa_ctl_policy_name(pol),
	       r.cycles_to_90, r.mean_pct_of_best, r.changes_after_settle);
	if (o->trace)
		printf("# best fixed limit %u; final limit %u (seen %u..%u), %d changes in %d cycles\n",
		       r.best_limit, r.final_limit, r.min_limit_seen,
		       r.max_limit_seen, r.changes, r.cycles);
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
		if (sim_run(sc, pol, p, &so, &r)) {
			fprintf(stderr, "iopa-sim: out of memory\n");
			exit(1);
		}
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

static void seeds(const struct iopa_ctl_params *p, const struct sim_opts *o,
		  int n, int only_sc, int only_pol)
{
	int sc, pol;

	printf("# over seeds 1..%d: mean and min of mean_pct_of_best, worst cycles_to_90 and changes_after_settle\n",
	       n);
	for (pol = 0; pol < IOPA_CTL_NR_POLICIES; pol++) {
		if (only_pol >= 0 && pol != only_pol)
			continue;
		for (sc = 0; sc < SIM_NR_SCENARIOS; sc++) {
			struct agg a;

			if (only_sc >= 0 && sc != only_sc)
				continue;
			aggregate(sc, pol, p, o, n, &a);
			printf("# seeds scenario=%s policy=%s mean_pct=%.2f min_pct=%.2f worst_cycles_to_90=%d worst_changes_after_settle=%d\n",
			       sim_scenario_name(sc), iopa_ctl_policy_name(pol),
			       a.mean_pct, a.min_pct, a.worst_c90,
			       a.worst_changes);
		}
	}
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
	struct iopa_ctl_params p;
	struct sim_opts o = { 0 };
	int i, sc = -1, pol = -1, nseeds = 0, do_sweep = 0, nset = 0;
	const char *sets[16];

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--trace")) {
			o.trace = 1;
		} else if (!strcmp(argv[i], "--sweep")) {
			do_sweep = 1;
		} else if (!strcmp(argv[i], "--seeds") && i + 1 < argc) {
			nseeds = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
			o.seed = strtoull(argv[++i], NULL, 0);
		} else if (!strcmp(argv[i], "--job-scale") && i + 1 < argc) {
			o.job_scale = atof(argv[++i]);
		} else if (!strcmp(argv[i], "--ncpus") && i + 1 < argc) {
			o.ncpus = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--set") && i + 1 < argc &&
			   nset < 16) {
			sets[nset++] = argv[++i];
		} else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			sc = sim_scenario_parse(argv[++i]);
			if (sc < 0)
				usage();
		} else if (!strcmp(argv[i], "-p") && i + 1 < argc) {
			i++;
			pol = iopa_ctl_policy_parse(argv[i], strlen(argv[i]));
			if (pol < 0)
				usage();
		} else {
			usage();
		}
	}
	iopa_ctl_params_default(&p, o.ncpus ? o.ncpus : SIM_NCPUS);
	for (i = 0; i < nset; i++)
		if (set_param(&p, sets[i]))
			usage();
	if (iopa_ctl_params_check(&p)) {
		fprintf(stderr, "iopa-sim: inconsistent parameters\n");
		return 2;
	}
	header(&p, o.seed ? o.seed : 1);
	if (do_sweep) {
		sweep(&p, &o);
		return 0;
	}
	if (nseeds > 0) {
		seeds(&p, &o, nseeds, sc, pol);
		return 0;
	}
	for (i = 0; i < SIM_NR_SCENARIOS; i++) {
		int k;

		if (sc >= 0 && i != sc)
			continue;
		for (k = 0; k < IOPA_CTL_NR_POLICIES; k++)
			if (pol < 0 || k == pol)
				one(i, k, &p, &o);
	}
	return 0;
}
