/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iopa simulator: the guest-like model, a discrete-event simulation of
 * the guest benchmark (tools/bench) as closed queueing systems: workers
 * running jobs on a few CPUs (processor sharing) and a device with a
 * finite number of tags (null_blk) or one actuator (iopa_hdd).  model.c
 * has the design; sim.c builds scenarios from it and scores runs.
 */
#ifndef _IOPA_SIM_MODEL_H
#define _IOPA_SIM_MODEL_H

#include "ctl.h"

/* Most submitters (tenants) sharing one device in a scenario. */
#define GM_MAX_TENANTS	4
/* Completed work is recorded in bins of this many ms. */
#define GM_BIN_MS	10

enum gm_dev_kind {
	GM_DEV_CPU,		/* no device: CPU-only jobs */
	GM_DEV_SSD,		/* null_blk: tags, a timer latency */
	GM_DEV_HDD,		/* iopa_hdd: one actuator, seek + rotation */
};

/**
 * struct gm_dev - the block device
 * @kind: enum gm_dev_kind
 * @tags: ssd: null_blk hw_queue_depth (= nr_requests, scheduler none)
 * @lat_us: ssd: how long a request holds its tag once started
 * @qd: hdd: driver tags; requests beyond wait in mq-deadline
 * @rev_us: hdd: one revolution (0: 7200 rpm, iopa_hdd's default)
 * @done_us: hdd: from the modelled end of a request to its waiter
 *	running again (timer, workqueue, wake-up under TCG): the mean ...
 * @done_exp: ... of an exponential distribution if set, else constant
 * @cold_ms: a submitter's first job is there this long after it starts
 *	(its first directory and inode reads)
 */
struct gm_dev {
	enum gm_dev_kind kind;
	unsigned int tags;
	double lat_us;
	unsigned int qd;
	double rev_us;
	double done_us;
	bool done_exp;
	double cold_ms;
};

/**
 * struct gm_files - the jobs of a submitter: one file each
 * @size: bytes per file; 0: CPU-only jobs
 * @req: bytes of the first request (readahead window, capped by the
 *	device's largest request); a file is read as requests in order
 * @req_max: each next request is twice the one before, up to this
 *	(0: @req), the last one cut at the end of the file
 * @ra: readahead depth: the first request goes out alone; when the
 *	worker starts on the data of request i, request i + 1 does; when
 *	it is done with request i, all up to i + @ra do
 * @lo_mb: start of the set's region on the device, MB
 * @hi_mb: end of that region
 * @nfiles: files in the set; they fill the region in directories of
 *	@per_dir files, each directory read in a random (hash) order
 * @per_dir: files per directory
 * @cpu_us: CPU-only jobs: CPU time per job
 */
struct gm_files {
	unsigned int size;
	unsigned int req, req_max;
	unsigned int ra;
	double lo_mb, hi_mb;
	unsigned int nfiles;
	unsigned int per_dir;
	double cpu_us;
};

/**
 * struct gm_tenant - one submitter with its own controller
 * @join_ms: when it starts submitting
 * @f: its files before and after @switch_ms
 * @switch_ms: from then on f[1]; 0: never
 * @cache_from_ms: from then until @cache_to_ms its jobs hit the page
 *	cache (no block I/O); 0, 0: never
 * @cache_to_ms: see @cache_from_ms
 */
struct gm_tenant {
	double join_ms;
	struct gm_files f[2];
	double switch_ms;
	double cache_from_ms, cache_to_ms;
};

/**
 * struct gm_comp - a competing load (fio randread) on the device
 * @from_ms: start; none if @to_ms is 0
 * @to_ms: end
 * @qd: its requests in flight
 * @bs: bytes per request
 * @lo_mb: its region on the device
 * @hi_mb: see @lo_mb
 */
struct gm_comp {
	double from_ms, to_ms;
	unsigned int qd, bs;
	double lo_mb, hi_mb;
};

/**
 * struct gm_noise - what makes the guest noisy beyond whole-job crediting
 * @jit_sigma: a slowly varying factor on every CPU time and iopa_hdd
 *	completion latency: log-normal with this sigma ...
 * @jit_tau_ms: ... and this correlation time (AR(1) on 10 ms steps)
 * @slow_p: a job is slow with this probability: its CPU times and
 *	iopa_hdd completion latencies take @slow_lo..@slow_hi times longer
 * @slow_lo: see @slow_p
 * @slow_hi: see @slow_p
 * @pause_ms: mean interval between device pauses (0: none), when no
 *	request completes for @pause_lo_ms..@pause_hi_ms (TCG stalls);
 *	what fell due completes when the pause ends
 * @pause_lo_ms: see @pause_ms
 * @pause_hi_ms: see @pause_ms
 * @own_sigma: every CPU phase, device latency (ssd) and completion
 *	latency (hdd) also gets a factor of its own, log-normal with this
 *	sigma (what keeps jobs from marching in step)
 */
struct gm_noise {
	double own_sigma;
	double jit_sigma, jit_tau_ms;
	double slow_p, slow_lo, slow_hi;
	double pause_ms, pause_lo_ms, pause_hi_ms;
};

/**
 * struct gm_cpu - CPU costs of a job (on the guest's emulated CPUs)
 * @pre_us: per job, on its path: fetch, fd, syscalls, complete
 * @sub_us: per job, off its path: the submitter's walk, open, submit
 *	and reap, the kernel's dispatch (a CPU task nobody waits for)
 * @us_per_kib: per KiB read: copy to user and checksum
 * @switch_cost: runnable tasks beyond the CPUs slow all of them by this
 *	much each (switching, cache misses)
 */
struct gm_cpu {
	double pre_us;
	double sub_us;
	double us_per_kib;
	double switch_cost;
};

/**
 * struct gm_scen - a guest-like scenario
 * @dev: the device
 * @cpu: CPU costs
 * @noise: stalls and jitter
 * @comp: competing load
 * @ntenants: submitters, 1..GM_MAX_TENANTS
 * @t: the submitters
 * @workers: worker threads per submitter (the bench: 64)
 * @sticky_unit: the module an older bench ran: the unit is bytes/s from
 *	the first cycle with bytes on, and no cycle is cached; else the
 *	module as now (a change of unit flags the cycle)
 * @no_dev_tput: the controller is not told the device's bytes (no
 *	block_rq_complete, or a module older than that measurement)
 * @cold_demand: the cycles before a submitter's first jobs are there
 *	have demand (its jobs would be queued, waiting on the first reads);
 *	else none (the bench: its first batch of 64 files is submitted
 *	after the reads, and the module holds no job until then)
 */
struct gm_scen {
	struct gm_dev dev;
	struct gm_cpu cpu;
	struct gm_noise noise;
	struct gm_comp comp;
	unsigned int ntenants;
	struct gm_tenant t[GM_MAX_TENANTS];
	unsigned int workers;
	bool sticky_unit;
	bool no_dev_tput;
	bool cold_demand;
};

/**
 * struct gm_cycle - one controller cycle, as the module would trace it
 * @t_ms: when it ended
 * @tenant: whose
 * @limit: the limit it ran with
 * @new_limit: the limit after iopa_ctl_update()
 * @mode: mode it ran in
 * @new_mode: mode after
 * @changed: iopa_ctl_update() returned true
 * @early: ended before @bound_ms because iopa_ctl_cycle_enough() said so
 * @in_jobs: @s.tput is in jobs/s (x 1000), not bytes/s
 * @bound_ms: iopa_ctl_next_cycle_ms() when it began
 * @s: the sample fed to the controller
 */
struct gm_cycle {
	double t_ms;
	double bound_ms;
	bool early;
	bool in_jobs;
	unsigned int tenant;
	unsigned int limit, new_limit;
	unsigned int mode, new_mode;
	bool changed;
	struct iopa_ctl_sample s;
};

/**
 * struct gm_run - one run: inputs, then outputs
 * @sc: the scenario
 * @p: controller parameters
 * @policy: controller policy
 * @fixed: > 0: every submitter's limit pinned here (cycles still measure)
 * @ncpus: CPUs
 * @dur_ms: simulated time
 * @seed: PRNG seed (job sizes, file order, noise: the same for every
 *	limit and policy of one seed, so runs compare like with like)
 * @trace: print every cycle on stdout as a comment line
 * @nbins: bins of GM_BIN_MS in @bins
 * @bins: per tenant, the work done in each bin as the bench counts it:
 *	the bytes of a request's data when the worker gets it (cached or
 *	not), not when the job completes; CPU-only jobs count 1 each when
 *	they complete
 * @cyc: the controller cycles of all tenants, in time order
 * @ncyc: entries in @cyc
 * @events: events processed (cost)
 */
struct gm_run {
	const struct gm_scen *sc;
	const struct iopa_ctl_params *p;
	int policy;
	unsigned int fixed;
	unsigned int knee;
	unsigned int knee_kb;
	int rotational;
	unsigned int ncpus;
	double dur_ms;
	unsigned long long seed;
	int trace;

	unsigned int nbins;
	double *bins[GM_MAX_TENANTS];
	struct gm_cycle *cyc;
	unsigned int ncyc, cyc_cap;
	unsigned long long events;
};

int gm_simulate(struct gm_run *r);
void gm_free(struct gm_run *r);

/* splitmix64 and its uses, shared with sim.c */
unsigned long long gm_mix(unsigned long long x);
unsigned long long gm_hash(unsigned long long a, unsigned long long b,
			   unsigned long long c);
double gm_unit(unsigned long long h);

#endif /* _IOPA_SIM_MODEL_H */
