/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iopa controller simulator: synthetic devices driven by kernel/ctl.c.
 * See README for the model and the metrics.
 */
#ifndef _IOPA_SIM_H
#define _IOPA_SIM_H

#include "ctl.h"

enum sim_scenario_id {
	SIM_SSD,
	SIM_HDD,
	SIM_NOISY,
	SIM_STEP,
	SIM_FLAT,
	SIM_NR_SCENARIOS,
};

/* The simulated machine, as in the IOPA paper's figures (24 threads there). */
#define SIM_NCPUS		32
/* A run lasts this many normal cycles of the default parameters. */
#define SIM_RUN_CYCLES		60

struct sim_opts {
	unsigned long long seed;	/* PRNG seed; 0: the default */
	unsigned int duration_ms;	/* 0: SIM_RUN_CYCLES normal cycles */
	double job_scale;		/* job length multiplier, 0: 1 */
	unsigned int ncpus;		/* 0: SIM_NCPUS */
	unsigned int best_max;		/* best fixed of 1..this; 0: max_limit */
	int fixed;			/* > 0: no controller, this limit */
	int trace;			/* print every cycle on stdout, as # */
};

struct sim_result {
	int cycles_to_90;		/* -1: never */
	double mean_pct_of_best;
	int changes_after_settle;
	int changes;			/* over the whole run */
	int cycles;			/* controller cycles */
	double mean_tput;		/* noise-free, time-weighted */
	double best_tput;		/* best fixed limit's, same run */
	unsigned int best_limit;
	unsigned int final_limit;
	unsigned int max_limit_seen;
	unsigned int min_limit_seen;
};

const char *sim_scenario_name(enum sim_scenario_id id);
int sim_scenario_parse(const char *name);
int sim_run(enum sim_scenario_id id, enum iopa_ctl_policy pol,
	    const struct iopa_ctl_params *p, const struct sim_opts *o,
	    struct sim_result *r);

#endif /* _IOPA_SIM_H */
