/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iopa controller simulator: kernel/ctl.c driven by simulated devices.
 *
 * Two families of scenarios (README):
 * - legacy (ssd, hdd, noisy, step, flat): abstract throughput curves
 *   shared by running jobs, 32 CPUs, 60 s; kept as the docs quote them;
 * - guest-like (everything from SIM_G_FIRST on): the guest benchmark as
 *   closed queueing systems (model.c), 2 CPUs, 20 s, bytes credited when
 *   a job completes.  These are the ones to tune policies on.
 */
#ifndef _IOPA_SIM_H
#define _IOPA_SIM_H

#include "ctl.h"

enum sim_scenario_id {
	/* legacy */
	SIM_SSD,
	SIM_HDD,
	SIM_NOISY,
	SIM_STEP,
	SIM_FLAT,
	SIM_NR_SCENARIOS,	/* the legacy ones: ctl_test loops on them */
	/* guest-like: the bench's cells ... */
	SIM_G_SSD_10K = SIM_NR_SCENARIOS,
	SIM_G_SSD_100K,
	SIM_G_SSD_1M,
	SIM_G_HDD_10K,
	SIM_G_HDD_100K,
	SIM_G_HDD_1M,
	/* ... and what moves under the controller */
	SIM_G_COMPETE_SSD,
	SIM_G_COMPETE_HDD,
	SIM_G_SWITCH_SSD,
	SIM_G_SWITCH_HDD,
	SIM_G_CACHE,
	SIM_G_CPU,
	SIM_G_TENANTS_SSD,
	SIM_G_TENANTS_HDD,
	SIM_NR_ALL,
};

#define SIM_G_FIRST		SIM_NR_SCENARIOS
/* The guest bench's cells: SIM_G_SSD_10K .. SIM_G_HDD_1M, in that order. */
#define SIM_NR_CELLS		6

enum sim_kind {
	SIM_KIND_LEGACY,	/* abstract curve */
	SIM_KIND_STEADY,	/* guest-like, nothing changes mid-run */
	SIM_KIND_STEP,		/* guest-like, device or jobs change */
	SIM_KIND_TENANTS,	/* guest-like, several submitters */
};

/* Legacy: the simulated machine, as in the IOPA paper (24 threads there). */
#define SIM_NCPUS		32
/* Legacy: a run lasts this many normal cycles of the default parameters. */
#define SIM_RUN_CYCLES		60
/* Guest-like: the guest's vCPUs, a run's length, the largest fixed limit. */
#define SIM_G_NCPUS		2
#define SIM_G_RUN_MS		20000
#define SIM_G_BEST_MAX		64
/* Most submitters in a scenario; most phases (stretches between changes). */
#define SIM_MAX_TENANTS		4
#define SIM_MAX_PHASES		8

/**
 * struct sim_model - the guest-like model's parameters (README, "The fit")
 * @ssd_lat_us: null_blk: how long a request holds its tag once started
 * @ssd_tags: null_blk: its tags (hw_queue_depth)
 * @ssd_cold_ms: null_blk: a submitter's first job is there this late ...
 * @ssd_cold_file_ms: ... plus this per file of its first directory
 * @hdd_done_us: iopa_hdd: modelled end of a request to its reader running
 * @hdd_done_exp: non-zero: that latency is exponential (its mean above)
 * @hdd_cold_ms: iopa_hdd: a submitter's first job is there this late
 * @hdd_rpm: iopa_hdd: spindle speed (rotational latency)
 * @hdd_qd: iopa_hdd: its driver tags (requests beyond wait in the
 *	scheduler)
 * @pre_us: CPU per job on its path: fetch, fd, syscalls, complete
 * @sub_us: CPU per job off its path: the submitter, the dispatch
 * @us_per_kib: CPU per KiB read: copy to user and checksum
 * @switch_cost: slowdown per runnable task beyond the CPUs
 * @ssd_1m_req_kib: ssd, 1 MiB files: first readahead window (a request)
 * @ssd_1m_max_kib: ssd, 1 MiB files: largest window (each next doubles)
 * @ssd_1m_ra: ssd, 1 MiB files: windows ahead of the reader
 * @hdd_1m_req_kib: hdd, 1 MiB files: first readahead window
 * @hdd_1m_max_kib: hdd, 1 MiB files: largest window
 * @hdd_1m_ra: hdd, 1 MiB files: windows ahead of the reader
 * @own_sigma: noise: log-normal sigma of each CPU phase's and request's
 *	own factor
 * @jit_sigma: noise: log-normal sigma of a slowly varying speed factor
 * @jit_tau_ms: noise: its correlation time
 * @slow_p: noise: probability that a job is slow ...
 * @slow_lo: ... by a factor from here ...
 * @slow_hi: ... to here
 * @pause_ms: noise: mean interval between device pauses (0: none) ...
 * @pause_lo_ms: ... lasting from here ...
 * @pause_hi_ms: ... to here
 * @sticky_unit: non-zero: the module an older bench ran (the unit is
 *	bytes/s from the first bytes on, no cycle is cached), not today's
 * @cold_demand: non-zero: a submitter's cycles have demand before its
 *	first jobs are there (jobs queued from the start), not as the bench
 *
 * All doubles, so that --model NAME=VALUE can set any of them.
 */
struct sim_model {
	double ssd_lat_us;
	double ssd_tags;
	double ssd_cold_ms;
	double ssd_cold_file_ms;
	double hdd_done_us;
	double hdd_done_exp;
	double hdd_cold_ms;
	double hdd_rpm;
	double hdd_qd;
	double pre_us;
	double sub_us;
	double us_per_kib;
	double switch_cost;
	double ssd_1m_req_kib;
	double ssd_1m_max_kib;
	double ssd_1m_ra;
	double hdd_1m_req_kib;
	double hdd_1m_max_kib;
	double hdd_1m_ra;
	double own_sigma;
	double jit_sigma;
	double jit_tau_ms;
	double slow_p;
	double slow_lo;
	double slow_hi;
	double pause_ms;
	double pause_lo_ms;
	double pause_hi_ms;
	double sticky_unit;
	double cold_demand;
};

extern const struct sim_model sim_model_default;
int sim_model_set(struct sim_model *m, const char *assignment);
void sim_model_print(const struct sim_model *m, const char *prefix);

/**
 * struct sim_opts - how to run
 * @seed: PRNG seed; 0: the default (1)
 * @duration_ms: 0: the scenario's (legacy: 60 normal cycles; guest-like:
 *	20 s, as the bench's cells)
 * @job_scale: legacy: job length multiplier, 0: 1
 * @ncpus: 0: the scenario's (legacy 32, guest-like 2)
 * @best_max: best fixed limit of 1..this; 0: legacy max_limit,
 *	guest-like 64
 * @fixed: > 0: no controller, this limit
 * @knee: guest-like: > 0: the device's remembered knee, given to each
 *	submitter at its first job (iopa_ctl_set_known(), kernel/knee.c)
 * @knee_kb: guest-like: KiB a job of the workload the knee was found with
 *	(0: not known: a "rotational" start from it probes one job)
 * @rotational: guest-like: the device says it is rotational even if it
 *	is not (a virtio disk): the start limit is 1
 * @trace: print every cycle on stdout, as # lines
 * @quiet: guest-like: no jitter, slow jobs or stalls (whole-job crediting
 *	stays)
 * @csum_ms_per_100k: guest-like: CPU per 100 KiB read (copy + checksum);
 *	0: the model's
 * @model: guest-like: the model's parameters; NULL: sim_model_default
 */
struct sim_opts {
	unsigned long long seed;
	unsigned int duration_ms;
	double job_scale;
	unsigned int ncpus;
	unsigned int best_max;
	int fixed;
	unsigned int knee;
	unsigned int knee_kb;
	int rotational;
	int trace;
	int quiet;
	double csum_ms_per_100k;
	const struct sim_model *model;
};

/**
 * struct sim_result - one run's metrics (README, "The metrics")
 * @cycles_to_90: normal cycles until a cycle reached 90% of the best
 *	fixed limit over the same time; -1: never
 * @mean_pct_of_best: the run against the best fixed limit (step
 *	scenarios: the best limit of each phase), percent
 * @changes_after_settle: limit changes after the first third
 * @changes: over the whole run
 * @cycles: controller cycles
 * @mean_tput: legacy: noise-free, time-weighted; guest-like: MB/s (jobs/s
 *	if CPU-only)
 * @best_tput: the best fixed limit's (step: the phases' best), same run
 * @best_limit: the best fixed limit
 * @final_limit: submitter 0's at the end
 * @max_limit_seen: submitter 0's largest
 * @min_limit_seen: submitter 0's smallest
 * @kind: guest-like: enum sim_kind
 * @knee_limit: the smallest fixed limit within 2% of the best one
 * @pct_of_best_fixed: against the best single fixed limit, percent
 * @mean_limit: submitter 0's, time-weighted
 * @ntenants: submitters
 * @total_pct_of_best: tenants: all their bytes against the best fixed
 *	limit (the same for every submitter)
 * @jain: tenants: Jain's fairness index once all run
 * @join_cycles: tenants: normal cycles until the last to join had 90% of
 *	a fair share over a normal cycle; -1: never
 * @tenant_tput: each submitter's, once all run
 * @nsamples: submitter 0's samples with demand, not cached, after 2
 *	normal cycles
 * @sample_cv: their spread (stdev / mean)
 * @sample_lag1: their lag-1 autocorrelation
 * @early_cycles: ended by iopa_ctl_cycle_enough()
 * @late_cycles: longer than iopa_ctl_next_cycle_ms() (never: a check)
 * @cached_cycles: samples with cached set
 * @jobs_cycles: samples in jobs/s (no block I/O), not bytes/s
 * @saturated_cycles: samples with cpu_saturated set
 * @nphases: stretches between changes
 * @phase_ms: where each starts
 * @phase_best: its best fixed limit
 * @events: simulation events (cost)
 */
struct sim_result {
	int cycles_to_90;
	double mean_pct_of_best;
	int changes_after_settle;
	int changes;
	int cycles;
	double mean_tput;
	double best_tput;
	unsigned int best_limit;
	unsigned int final_limit;
	unsigned int max_limit_seen;
	unsigned int min_limit_seen;
	int kind;
	unsigned int knee_limit;
	double pct_of_best_fixed;
	double mean_limit;
	unsigned int ntenants;
	double total_pct_of_best;
	double jain;
	int join_cycles;
	double tenant_tput[SIM_MAX_TENANTS];
	unsigned int nsamples;
	double sample_cv;
	double sample_lag1;
	int early_cycles;
	int late_cycles;
	int cached_cycles;
	int jobs_cycles;
	int saturated_cycles;
	unsigned int nphases;
	double phase_ms[SIM_MAX_PHASES];
	unsigned int phase_best[SIM_MAX_PHASES];
	unsigned long long events;
};

/**
 * struct sim_noise_stats - what a fixed limit's measurements look like
 * @n: controller samples (cycles after the first 2; some may hold no
 *	completion, and say 0)
 * @cv: their spread, stdev / mean
 * @lag1: their lag-1 autocorrelation
 * @jobs: mean completions per cycle
 * @bench_cv: the bench's 100 ms series (bytes when read), spread
 * @bench_lag1: its lag-1 autocorrelation
 */
struct sim_noise_stats {
	unsigned int n;
	double cv, lag1, jobs;
	double bench_cv, bench_lag1;
};

const char *sim_scenario_name(enum sim_scenario_id id);
const char *sim_scenario_desc(enum sim_scenario_id id);
int sim_scenario_parse(const char *name);
int sim_scenario_kind(enum sim_scenario_id id);
int sim_run(enum sim_scenario_id id, enum iopa_ctl_policy pol,
	    const struct iopa_ctl_params *p, const struct sim_opts *o,
	    struct sim_result *r);

/**
 * struct sim_guest_cell - one cell of the guest's bench table
 *	(bench/README.md: the fresh-clone run at 4c646f5, 2 vCPUs, 20 s
 *	runs, null_blk unthrottled, the module at its defaults; means of
 *	3 runs for the 3 best fixed limits of run 1 and the default, 1 run
 *	for the other fixed limits and the explicit policies)
 * @id: the scenario modelling it
 * @mbps: MB/s at the fixed limits 1, 2, 4, ..., 64
 * @best: best fixed limit in the guest
 * @bracket_mbps: the default policy's MB/s (bracket, 3 runs)
 * @iopa_mbps: policy iopa's (1 run)
 * @hillclimb_mbps: policy hillclimb's (1 run)
 * @note: what to know when comparing
 */
struct sim_guest_cell {
	enum sim_scenario_id id;
	double mbps[7];
	unsigned int best;
	double bracket_mbps, iopa_mbps, hillclimb_mbps;
	const char *note;
};

int sim_fixed_phases(enum sim_scenario_id id,
		     const struct iopa_ctl_params *p, const struct sim_opts *o,
		     unsigned int limit, double *tput, unsigned int *nphases);
int sim_noise(enum sim_scenario_id id, const struct iopa_ctl_params *p,
	      const struct sim_opts *o, unsigned int limit,
	      unsigned int cycle_ms, struct sim_noise_stats *ns);

extern const struct sim_guest_cell sim_guest_cells[SIM_NR_CELLS];
extern const unsigned int sim_guest_limits[7];

#endif /* _IOPA_SIM_H */
