// SPDX-License-Identifier: GPL-2.0
/*
 * iopa controller simulator: the device models and one run.
 *
 * A device is a throughput curve tput(n) over the number n of the
 * submitter's jobs running at once.  Jobs share it equally (processor
 * sharing); each job has a random amount of work, so jobs end at random
 * times.  The submitter always has jobs waiting (demand).  When the
 * controller raises the limit, waiting jobs start at once; when it
 * lowers it, running jobs are not preempted: the count drains as they
 * finish (the module's "limits change at job boundaries").
 *
 * At the end of each cycle the controller gets the cycle's throughput
 * (times a noise factor in the noisy scenario), whether the CPUs were
 * saturated, and demand = true.  Metrics use the noise-free throughput.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

struct sim_scen {
	const char *name;
	double (*curve)(unsigned int n, unsigned int ncpus);
	double noise;		/* measured = true * (1 + U(-noise, noise)) */
	int step;		/* curve halves over the middle third */
	double cpu_per_job;	/* CPUs a running job keeps busy */
	double job_ms;		/* mean job length at the curve's best */
};

/* Rises, saturates near n = 24; queueing beyond costs 1% per job. */
static double sim_ssd(unsigned int n, unsigned int ncpus)
{
	double t = 2000.0 * (1.0 - exp(-(double)n / 7.0));

	(void)ncpus;
	return n > 24 ? t / (1.0 + 0.01 * (n - 24)) : t;
}

/* Peaks at n = 6 (elevator sorting); beyond, streams interleave: seeks. */
static double sim_hdd(unsigned int n, unsigned int ncpus)
{
	double d = (6.0 - n) / 5.0;

	(void)ncpus;
	if (n <= 6)
		return 200.0 * (1.0 - 0.5 * d * d);
	return 200.0 / (1.0 + 0.02 * (n - 6));
}

/* CPU-bound: one job per CPU; more only adds switching (1% per job). */
static double sim_flat(unsigned int n, unsigned int ncpus)
{
	if (n <= ncpus)
		return 100.0 * n;
	return 100.0 * ncpus / (1.0 + 0.01 * (n - ncpus));
}

static const struct sim_scen sim_scens[SIM_NR_SCENARIOS] = {
	[SIM_SSD]   = { "ssd",   sim_ssd,  0.0, 0, 0.05, 100 },
	[SIM_HDD]   = { "hdd",   sim_hdd,  0.0, 0, 0.05, 100 },
	[SIM_NOISY] = { "noisy", sim_ssd,  0.2, 0, 0.05, 100 },
	[SIM_STEP]  = { "step",  sim_ssd,  0.0, 1, 0.05, 100 },
	[SIM_FLAT]  = { "flat",  sim_flat, 0.0, 0, 1.00, 100 },
};

const char *sim_scenario_name(enum sim_scenario_id id)
{
	return sim_scens[id].name;
}

int sim_scenario_parse(const char *name)
{
	int i;

	for (i = 0; i < SIM_NR_SCENARIOS; i++)
		if (!strcmp(name, sim_scens[i].name))
			return i;
	return -1;
}

/* splitmix64: small, deterministic, good enough. */
static unsigned long long sim_rand(unsigned long long *s)
{
	unsigned long long z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1). */
static double sim_uniform(unsigned long long *s)
{
	return ((sim_rand(s) >> 11) + 0.5) / 9007199254740992.0;
}

struct sim_state {
	const struct sim_scen *sc;
	unsigned int ncpus;
	double duration;		/* ms */
	double work_mean;		/* mean job work, MB */
	unsigned long long rng_jobs, rng_noise;
	double *rem;			/* remaining work of running jobs */
	unsigned int n, cap;
};

/* Throughput factor at time @t: the step scenario halves mid-run. */
static double sim_factor(const struct sim_state *st, double t)
{
	if (st->sc->step && t >= st->duration / 3 && t < 2 * st->duration / 3)
		return 0.5;
	return 1.0;
}

/* Next time after @t at which the factor changes, or @end. */
static double sim_next_edge(const struct sim_state *st, double t, double end)
{
	double e[2] = { st->duration / 3, 2 * st->duration / 3 };
	int i;

	if (!st->sc->step)
		return end;
	for (i = 0; i < 2; i++)
		if (e[i] > t && e[i] < end)
			return e[i];
	return end;
}

/* Integral of the curve at a fixed @n over [a, b] (ms * MB/s). */
static double sim_integral(const struct sim_state *st, unsigned int n,
			   double a, double b)
{
	double sum = 0, base = st->sc->curve(n, st->ncpus);

	while (a < b) {
		double e = sim_next_edge(st, a, b);

		sum += base * sim_factor(st, a) * (e - a);
		a = e;
	}
	return sum;
}

static double sim_job_work(struct sim_state *st)
{
	return -log(sim_uniform(&st->rng_jobs)) * st->work_mean;
}

static void sim_fill(struct sim_state *st, unsigned int limit)
{
	while (st->n < limit && st->n < st->cap)
		st->rem[st->n++] = sim_job_work(st);
}

/*
 * Run the device from @t for @len ms with @limit.  Returns the work done
 * (MB) and adds the CPU time (CPU-ms) to *@cpu.
 */
static double sim_advance(struct sim_state *st, double t, double len,
			  unsigned int limit, double *cpu)
{
	double end = t + len, done = 0;

	sim_fill(st, limit);
	while (t < end - 1e-9) {
		double rate, dt, step_end = sim_next_edge(st, t, end);
		unsigned int i, k;

		if (!st->n) {
			t = end;
			break;
		}
		rate = st->sc->curve(st->n, st->ncpus) * sim_factor(st, t) /
		       st->n / 1000.0;		/* MB per ms per job */
		dt = step_end - t;
		for (i = 0; i < st->n; i++)
			if (st->rem[i] / rate < dt)
				dt = st->rem[i] / rate;
		for (i = 0; i < st->n; i++)
			st->rem[i] -= rate * dt;
		done += rate * dt * st->n;
		*cpu += dt * fmin(st->n * st->sc->cpu_per_job, st->ncpus);
		t += dt;
		/* Finished jobs leave; a new one starts if the limit allows. */
		for (i = 0, k = 0; i < st->n; i++)
			if (st->rem[i] > 1e-12)
				st->rem[k++] = st->rem[i];
		st->n = k;
		sim_fill(st, limit);
	}
	return done;
}

int sim_run(enum sim_scenario_id id, enum iopa_ctl_policy pol,
	    const struct iopa_ctl_params *p, const struct sim_opts *o,
	    struct sim_result *r)
{
	struct iopa_ctl_params dp;
	struct sim_state st = { .sc = &sim_scens[id] };
	struct iopa_ctl c;
	double t = 0, sum = 0, best = 0, settle, normal;
	unsigned int l, hi;

	memset(r, 0, sizeof(*r));
	st.ncpus = o->ncpus ? o->ncpus : SIM_NCPUS;
	iopa_ctl_params_default(&dp, st.ncpus);
	normal = dp.normal_cycle_ms;
	st.duration = o->duration_ms ? o->duration_ms :
		      (double)SIM_RUN_CYCLES * dp.normal_cycle_ms;
	settle = st.duration / 3;
	hi = o->best_max ? o->best_max : p->max_limit;
	st.cap = hi > p->max_limit ? hi : p->max_limit;
	st.rem = calloc(st.cap + 1, sizeof(*st.rem));
	if (!st.rem)
		return -1;
	st.rng_jobs = (o->seed ? o->seed : 1) * 0x100000001b3ULL + id;
	st.rng_noise = st.rng_jobs ^ 0x5851f42d4c957f2dULL;

	/* The best fixed limit on the noise-free curve. */
	for (l = 1; l <= hi; l++) {
		double v = sim_integral(&st, l, 0, st.duration);

		if (v > best) {
			best = v;
			r->best_limit = l;
		}
	}
	r->best_tput = best / st.duration;
	/* Job work: a job lasts job_ms on average at the best limit. */
	st.work_mean = st.sc->curve(r->best_limit, st.ncpus) /
		       r->best_limit * st.sc->job_ms / 1000.0 *
		       (o->job_scale > 0 ? o->job_scale : 1.0);

	iopa_ctl_init(&c, p, pol);
	if (o->fixed > 0)
		iopa_ctl_set_fixed(&c, o->fixed);
	r->cycles_to_90 = -1;
	r->min_limit_seen = iopa_ctl_limit(&c);
	r->max_limit_seen = iopa_ctl_limit(&c);
	if (o->trace)
		printf("# %s/%s: best fixed limit %u, %.1f/s\n",
		       st.sc->name, iopa_ctl_policy_name(pol), r->best_limit,
		       r->best_tput);
	while (t < st.duration - 1e-9) {
		unsigned int lim = iopa_ctl_limit(&c);
		double len = iopa_ctl_next_cycle_ms(&c, p), cpu = 0, done;
		double ref, tput, meas;
		struct iopa_ctl_sample s = { 0 };
		enum iopa_ctl_mode mode = iopa_ctl_mode(&c);
		u32 rp = 0;
		bool changed;

		if (t + len > st.duration)
			len = st.duration - t;
		done = sim_advance(&st, t, len, lim, &cpu);
		sum += done;
		tput = done / len * 1000.0;			/* MB/s */
		ref = sim_integral(&st, r->best_limit, t, t + len) / len;
		t += len;
		r->cycles++;
		if (r->cycles_to_90 < 0 && tput >= 0.9 * ref)
			r->cycles_to_90 = (int)ceil(t / normal - 1e-9);
		if (t >= st.duration - 1e-9)
			break;		/* the run ends with this cycle */
		meas = tput;
		if (st.sc->noise > 0)
			meas *= 1.0 + st.sc->noise *
				(2.0 * sim_uniform(&st.rng_noise) - 1.0);
		s.tput = (u64)(meas * 1000.0 + 0.5);		/* KB/s */
		s.elapsed_ms = (u32)len;
		s.cpu_saturated = cpu / len >= st.ncpus - 0.5;
		s.demand = true;
		changed = iopa_ctl_update(&c, p, &s, &rp);
		if (changed) {
			r->changes++;
			if (t > settle + 1e-9)
				r->changes_after_settle++;
		}
		l = iopa_ctl_limit(&c);
		if (l < r->min_limit_seen)
			r->min_limit_seen = l;
		if (l > r->max_limit_seen)
			r->max_limit_seen = l;
		if (o->trace)
			printf("# t=%7.0f %-6s limit=%3u run=%3u tput=%7.1f (%5.1f%%) meas=%7.1f R=%4u sat=%d -> %-6s limit=%3u\n",
			       t, iopa_ctl_mode_name(mode), lim, st.n, tput,
			       100 * tput / ref, meas, rp, s.cpu_saturated,
			       iopa_ctl_mode_name(iopa_ctl_mode(&c)), l);
	}
	r->final_limit = iopa_ctl_limit(&c);
	r->mean_tput = sum / st.duration * 1000.0;
	r->mean_pct_of_best = 100.0 * r->mean_tput / r->best_tput;
	free(st.rem);
	return 0;
}
