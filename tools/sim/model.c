// SPDX-License-Identifier: GPL-2.0
/*
 * iopa simulator: the guest-like model.
 *
 * A discrete-event simulation of what the guest benchmark (tools/bench,
 * bench/README.md) runs: submitters keep one job per file queued, 64
 * worker threads per submitter run at most `limit' of them, each job
 * reads its file and checksums it, and kernel/ctl.c, compiled unchanged,
 * adapts each submitter's limit from what the module measures.
 *
 * 1. Jobs
 *
 * A job is fetched (its service time starts), spends pre_us of CPU
 * (fetch, fd, syscalls, complete), then reads its file as requests in
 * file order, one per readahead window (the first req bytes, each next
 * twice as large up to req_max): the first alone (the synchronous
 * readahead); when the worker starts on the data of request i, request
 * i + 1 if not yet (the marker in the window); when it is done with
 * request i, every request up to i + ra (the marker at the start of the
 * window it wants next).  The worker takes the data of each request in
 * order, spending us_per_kib of CPU per KiB (copy to user and
 * checksum).  After the last one the job completes: its bytes are
 * credited to the submitter's cycle then, all at once, as the module
 * does (task I/O accounting read at COMPLETE).  A job that hits the page
 * cache issues no request, spends the same CPU and credits no block
 * bytes (the module then measures jobs/s, and flags the cycle that
 * switched units as cached).  A CPU-only job spends cpu_us.  The worker
 * pool is closed: a completion fetches the next job if the limit allows;
 * a lower limit does not preempt running jobs.  Each submitter has its
 * own controller and sees only its own jobs; after each completion
 * iopa_ctl_cycle_enough() may end its cycle there.
 *
 * 2. CPUs
 *
 * ncpus processors shared equally by the runnable CPU phases (processor
 * sharing); beyond ncpus each extra runnable phase slows all of them by
 * switch_cost.  CPU busy time feeds cpu_saturated (idle below 10% of
 * the cycle, as the module computes it).
 *
 * 3. Devices
 *
 * ssd: null_blk (queue_mode=2, irqmode=2, scheduler none): `tags'
 * requests exist at once (a request holds its tag from submission to
 * completion; others wait for one, in order), each completes lat_us
 * after it starts (the bench runs null_blk unthrottled).
 *
 * hdd: tools/hdd-model's iopa_hdd with its defaults: one request in
 * service at a time, in arrival order (64 driver tags; requests beyond
 * wait in mq-deadline, which dispatches them in sector order), each
 * taking seek (Ruemmler-Wilkes, the module's constants) + rotational
 * latency (the platter's angle on the device clock) + transfer at
 * 100 MB/s; a request starting where the previous one ended costs no
 * seek and no rotation.  Its waiter runs done_us after the modelled end
 * (timer, workqueue, wake-up); the actuator does not wait for that.
 *
 * A submitter's first job is there cold_ms after it starts (its first
 * directory and inode reads; in the guest the first completion came
 * after ~560 ms on null_blk with 10k and 100k files, ~250 ms with 1 MiB
 * files, 100-200 ms on iopa_hdd): until then nothing completes.  The
 * controller's samples have no demand then (the bench submits its first
 * batch of 64 files after those reads: GET_STATE showed no pending job
 * before), unless cold_demand says they do (jobs queued from the start,
 * waiting on the reads).
 *
 * Files lie in a region of the device, a directory of per_dir files
 * after another; a submitter reads one directory after another, each in
 * a random order (ext4's hash order).  Only the hdd cares where.
 *
 * 4. Noise
 *
 * Besides whole-job crediting (a 200 ms cycle with 1 MB files holds a
 * handful of completions): a slowly varying factor (log-normal AR(1),
 * correlation time jit_tau_ms) on CPU times and iopa_hdd's completion
 * latency; slow jobs (probability slow_p, those slow_lo..slow_hi times
 * longer); own factors (log-normal, own_sigma) on every CPU phase and
 * latency, null_blk's included.  null_blk's timer runs on the host's
 * clock: a slow or jittery vCPU delays the job's CPU work, not the
 * request's completion (the guest's 1 s throughput on null_blk varied
 * by 0.4-2%);
 * device pauses (Poisson, pause_lo_ms..pause_hi_ms long) during which
 * nothing completes: what falls due in one completes when it ends, as
 * timers do when TCG did not run the guest (null_blk's timers and
 * iopa_hdd's virtual clock keep their schedule).
 *
 * Random numbers come from splitmix64 hashes of (seed, stream, index):
 * job k of a submitter, file k of its walk, the pause and jitter
 * timelines are the same whatever the limit or policy, so runs of one
 * seed compare like with like.  No clock, no threads: deterministic.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* ---- random numbers ------------------------------------------------- */

unsigned long long gm_mix(unsigned long long x)
{
	unsigned long long z = x + 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

unsigned long long gm_hash(unsigned long long a, unsigned long long b,
			   unsigned long long c)
{
	return gm_mix(gm_mix(gm_mix(a) ^ b) ^ c);
}

/* Uniform in (0, 1). */
double gm_unit(unsigned long long h)
{
	return ((h >> 11) + 0.5) / 9007199254740992.0;
}

/* Streams of gm_hash(seed, stream, index). */
enum {
	GM_RS_JOB = 1,		/* + tenant: slow jobs */
	GM_RS_WALK = 16,	/* + tenant * 2 + set: file order */
	GM_RS_COMP = 32,	/* competitor positions */
	GM_RS_PAUSE = 33,
	GM_RS_JIT = 34,
	GM_RS_DONE = 35,	/* hdd completion latencies */
	GM_RS_REQ = 40,		/* + tenant: a request's own spread */
	GM_RS_CPU = 48,		/* + tenant: a CPU phase's own spread */
};

static double gm_normal(unsigned long long seed, unsigned long long stream,
			unsigned long long i)
{
	double u1 = gm_unit(gm_hash(seed, stream, 2 * i));
	double u2 = gm_unit(gm_hash(seed, stream, 2 * i + 1));

	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}

/* A log-normal factor of mean 1 and log-sigma @sigma, or 1. */
static double gm_lognormal(double sigma, unsigned long long seed,
			   unsigned long long stream, unsigned long long i)
{
	if (sigma <= 0)
		return 1.0;
	return exp(sigma * gm_normal(seed, stream, i) - sigma * sigma / 2);
}

/* ---- the hdd: tools/hdd-model/iopa_hdd.c with its defaults ---------- */

#define HDD_SECTORS	(1024ULL << 11)	/* 1 GiB of 512-byte ones */
#define HDD_CYLINDERS	50000ULL
#define HDD_T2T_US	800.0
#define HDD_AVG_US	8500.0
#define HDD_FULL_US	17000.0
#define HDD_REV_US	(60e6 / 7200)
#define HDD_MEDIA_MBPS	100.0

struct gm_hdd_geo {
	double c, e, b;
	unsigned long long d0;
};

static void gm_hdd_geo_init(struct gm_hdd_geo *g)
{
	double stroke = HDD_CYLINDERS - 1, q;
	unsigned long long s;

	g->c = (3 * HDD_AVG_US - HDD_FULL_US) / 2;
	g->e = 3 * (HDD_FULL_US - HDD_AVG_US) / (2 * stroke);
	q = (g->c - HDD_T2T_US) / g->e;
	s = 1 + (unsigned long long)sqrt(1 + floor(q));
	g->d0 = s * s;
	g->b = (g->c + g->e * g->d0 - HDD_T2T_US) / (double)(s - 1);
}

static double gm_hdd_seek(const struct gm_hdd_geo *g, unsigned long long d)
{
	double r;

	if (!d)
		return 0;
	if (d >= g->d0)
		return g->c + g->e * d;
	r = sqrt((double)d);
	return HDD_T2T_US + g->b * (r - 1);
}

/* ---- state ---------------------------------------------------------- */

enum gm_ev_type {
	GM_EV_REQ_DONE,		/* the device finished a request */
	GM_EV_REQ_NOTIFY,	/* hdd: its waiter runs */
	GM_EV_CYCLE,		/* a submitter's cycle timer */
	GM_EV_JOIN,		/* a submitter starts */
	GM_EV_AVAIL,		/* its first jobs are there */
	GM_EV_COMP,		/* the competitor starts */
};

struct gm_ev {
	double t;
	unsigned long long seq;
	int type;
	int a;
	unsigned int gen;
};

struct gm_req {
	int job;			/* -1: the competitor */
	unsigned int i;			/* index in its job */
	unsigned int bytes;
	unsigned long long sector;
	double t_arr;
	double scale;			/* noise factor on its latency */
	int next;			/* queue or free list */
};

enum gm_task_kind { GM_T_PRE, GM_T_DATA, GM_T_CACHED, GM_T_SUB };

struct gm_task {
	int job;
	int kind;
	double rem;			/* us of CPU left */
};

struct gm_job {
	int tenant;			/* -1: free */
	int next_free;
	double t_fetch;
	const struct gm_files *f;
	unsigned int nreq, issued, consumed;
	unsigned long long done_mask;
	bool consuming, cached;
	unsigned long long sector;
	double slow;
	unsigned long long seq;		/* the submitter's job number */
	unsigned int ncpu;		/* CPU phases so far */
	unsigned long long blk;		/* block-layer bytes */
};

struct gm_walk {
	const struct gm_files *f;
	unsigned long long stream, n;	/* files handed out */
	unsigned int dir, k, ndirs, in_dir;
	unsigned int *perm;
	unsigned int cap;
};

struct gm_ten {
	struct iopa_ctl c;
	bool active;			/* started, jobs there */
	bool cold;			/* joined, first jobs not yet there */
	unsigned int running;
	unsigned long long jobseq;
	struct gm_walk w[2];
	/* the cycle under way */
	double t0, busy0, bound_ms;
	unsigned int gen;
	u64 bytes, svc_us, svc_sq;
	u64 dev0;			/* g->dev_bytes at the cycle's start */
	u32 jobs;
	bool demand;
	/* the module's unit: bytes/s while jobs do block I/O, else jobs/s */
	bool tput_bytes;
	bool unit_known;		/* a cycle had completions */
	unsigned int cycles;
};

struct gm_fifo {
	int head, tail;
};

struct gm {
	struct gm_run *r;
	const struct gm_scen *sc;
	double now, end;		/* us */

	struct gm_ev *heap;
	unsigned int nheap, heap_cap;
	unsigned long long seq;

	struct gm_task *task;
	unsigned int ntask, task_cap;
	double busy;			/* CPU-us */

	struct gm_job *job;
	unsigned int job_cap;
	int job_free;

	struct gm_req *req;
	unsigned int req_cap;
	int req_free;

	struct gm_ten ten[GM_MAX_TENANTS];

	/* ssd */
	unsigned int tags_free;
	struct gm_fifo tagq;
	/* hdd */
	struct gm_hdd_geo geo;
	struct gm_fifo drv, sched;
	unsigned int in_drv;
	bool busy_disk;
	double free_dev;		/* device clock: end of the last one */
	unsigned long long head;	/* sector after the last one */
	unsigned long long last_disp;	/* mq-deadline's sort position */
	unsigned long long done_seq;
	/* competitor */
	unsigned long long comp_seq;
	/* bytes the device completed, everyone's (the module's blkstat) */
	u64 dev_bytes;
	/* noise timelines */
	double *jit;
	unsigned int njit;
	double *ps, *pe;		/* pauses: start, end */
	unsigned int npause;
};

/* ---- event heap ------------------------------------------------------ */

static bool gm_ev_before(const struct gm_ev *a, const struct gm_ev *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int gm_push(struct gm *g, double t, int type, int a, unsigned int gen)
{
	struct gm_ev e = { t, g->seq++, type, a, gen };
	unsigned int i;

	if (g->nheap == g->heap_cap) {
		unsigned int cap = g->heap_cap ? 2 * g->heap_cap : 256;
		struct gm_ev *h = realloc(g->heap, cap * sizeof(*h));

		if (!h)
			return -1;
		g->heap = h;
		g->heap_cap = cap;
	}
	i = g->nheap++;
	while (i) {
		unsigned int up = (i - 1) / 2;

		if (!gm_ev_before(&e, &g->heap[up]))
			break;
		g->heap[i] = g->heap[up];
		i = up;
	}
	g->heap[i] = e;
	return 0;
}

static struct gm_ev gm_pop(struct gm *g)
{
	struct gm_ev top = g->heap[0], last = g->heap[--g->nheap];
	unsigned int i = 0;

	for (;;) {
		unsigned int l = 2 * i + 1, m = i;

		if (l >= g->nheap)
			break;
		m = l;
		if (l + 1 < g->nheap &&
		    gm_ev_before(&g->heap[l + 1], &g->heap[l]))
			m = l + 1;
		if (!gm_ev_before(&g->heap[m], &last))
			break;
		g->heap[i] = g->heap[m];
		i = m;
	}
	g->heap[i] = last;
	return top;
}

/* ---- noise ----------------------------------------------------------- */

#define GM_JIT_STEP_US	10000.0

static int gm_noise_init(struct gm *g)
{
	const struct gm_noise *n = &g->sc->noise;
	unsigned long long seed = g->r->seed;
	double rho, x, t;
	unsigned int i, cap = 0;

	g->njit = (unsigned int)(g->end / GM_JIT_STEP_US) + 2;
	g->jit = malloc(g->njit * sizeof(*g->jit));
	if (!g->jit)
		return -1;
	rho = 0;
	if (n->jit_tau_ms > 0)
		rho = exp(-GM_JIT_STEP_US / 1000 / n->jit_tau_ms);
	x = gm_normal(seed, GM_RS_JIT, 0);
	for (i = 0; i < g->njit; i++) {
		g->jit[i] = n->jit_sigma > 0 ?
			    exp(n->jit_sigma * x -
				n->jit_sigma * n->jit_sigma / 2) : 1.0;
		x = rho * x + sqrt(1 - rho * rho) *
		    gm_normal(seed, GM_RS_JIT, i + 1);
	}
	if (n->pause_ms <= 0)
		return 0;
	t = 0;
	for (i = 0;; i++) {
		double gap = -log(gm_unit(gm_hash(seed, GM_RS_PAUSE, 2 * i))) *
			     n->pause_ms * 1000;
		double u = gm_unit(gm_hash(seed, GM_RS_PAUSE, 2 * i + 1));
		double len = (n->pause_lo_ms +
			      (n->pause_hi_ms - n->pause_lo_ms) * u) * 1000;

		t += gap;
		if (t >= g->end)
			break;
		if (g->npause == cap) {
			double *ps, *pe;

			cap = cap ? 2 * cap : 16;
			ps = realloc(g->ps, cap * sizeof(double));
			if (!ps)
				return -1;
			g->ps = ps;
			pe = realloc(g->pe, cap * sizeof(double));
			if (!pe)
				return -1;
			g->pe = pe;
		}
		g->ps[g->npause] = t;
		g->pe[g->npause] = t + len;
		t += len;
		g->npause++;
	}
	return 0;
}

static double gm_jit(const struct gm *g)
{
	unsigned int k = (unsigned int)(g->now / GM_JIT_STEP_US);

	return g->jit[k < g->njit ? k : g->njit - 1];
}

/*
 * When something due at @t happens: at the end of the pause @t falls in
 * (the guest did not run; timers due in it fire together when it ends).
 */
static double gm_defer(const struct gm *g, double t)
{
	unsigned int i;

	for (i = 0; i < g->npause && g->ps[i] <= t; i++)
		if (t < g->pe[i])
			return g->pe[i];
	return t;
}

/* ---- allocation ------------------------------------------------------ */

static int gm_req_alloc(struct gm *g)
{
	int i;

	if (g->req_free < 0) {
		unsigned int cap = g->req_cap ? 2 * g->req_cap : 256, k;
		struct gm_req *q = realloc(g->req, cap * sizeof(*q));

		if (!q)
			return -1;
		g->req = q;
		for (k = g->req_cap; k < cap; k++)
			q[k].next = k + 1 < cap ? (int)k + 1 : -1;
		g->req_free = g->req_cap;
		g->req_cap = cap;
	}
	i = g->req_free;
	g->req_free = g->req[i].next;
	g->req[i].next = -1;
	return i;
}

static void gm_req_put(struct gm *g, int i)
{
	g->req[i].next = g->req_free;
	g->req_free = i;
}

static void gm_fifo_push(struct gm *g, struct gm_fifo *q, int i)
{
	g->req[i].next = -1;
	if (q->tail >= 0)
		g->req[q->tail].next = i;
	else
		q->head = i;
	q->tail = i;
}

static int gm_fifo_pop(struct gm *g, struct gm_fifo *q)
{
	int i = q->head;

	if (i < 0)
		return -1;
	q->head = g->req[i].next;
	if (q->head < 0)
		q->tail = -1;
	g->req[i].next = -1;
	return i;
}

static int gm_task_add(struct gm *g, int job, int kind, double work)
{
	if (g->ntask == g->task_cap) {
		unsigned int cap = g->task_cap ? 2 * g->task_cap : 64;
		struct gm_task *t = realloc(g->task, cap * sizeof(*t));

		if (!t)
			return -1;
		g->task = t;
		g->task_cap = cap;
	}
	g->task[g->ntask].job = job;
	g->task[g->ntask].kind = kind;
	g->task[g->ntask].rem = work > 0 ? work : 0;
	g->ntask++;
	return 0;
}

/* ---- files ----------------------------------------------------------- */

static int gm_walk_dir(struct gm_walk *w)
{
	const struct gm_files *f = w->f;
	unsigned int i, n;

	n = f->nfiles - w->dir * f->per_dir;
	if (n > f->per_dir)
		n = f->per_dir;
	if (n > w->cap) {
		unsigned int *p = realloc(w->perm, n * sizeof(*p));

		if (!p)
			return -1;
		w->perm = p;
		w->cap = n;
	}
	for (i = 0; i < n; i++)
		w->perm[i] = i;
	w->in_dir = n;
	w->k = 0;
	return 0;
}

/* First sector of the next file of the walk. */
static unsigned long long gm_walk_next(struct gm *g, struct gm_walk *w)
{
	const struct gm_files *f = w->f;
	double span, slot, pos;
	unsigned int j, i;

	if (w->k >= w->in_dir) {
		w->dir = w->dir + 1 < w->ndirs ? w->dir + 1 : 0;
		gm_walk_dir(w);	/* cannot fail: the array only shrinks */
	}
	/* Fisher-Yates, one draw per file handed out. */
	i = w->k + (unsigned int)(gm_unit(gm_hash(g->r->seed, w->stream,
						  w->n)) * (w->in_dir - w->k));
	if (i >= w->in_dir)
		i = w->in_dir - 1;
	j = w->perm[i];
	w->perm[i] = w->perm[w->k];
	w->perm[w->k] = j;
	w->k++;
	w->n++;
	span = (f->hi_mb - f->lo_mb) * 1e6 / w->ndirs;
	slot = span / w->in_dir;
	pos = f->lo_mb * 1e6 + w->dir * span + j * slot;
	return ((unsigned long long)pos / 4096) * 8;
}

static int gm_walk_init(struct gm *g, struct gm_walk *w,
			const struct gm_files *f, unsigned long long stream)
{
	memset(w, 0, sizeof(*w));
	w->f = f;
	w->stream = stream;
	if (!f->size)
		return 0;
	w->ndirs = (f->nfiles + f->per_dir - 1) / f->per_dir;
	(void)g;
	return gm_walk_dir(w);
}

/* ---- devices --------------------------------------------------------- */

static int gm_deliver(struct gm *g, int ri);

static int gm_ssd_service(struct gm *g, int ri)
{
	struct gm_req *q = &g->req[ri];
	double d = g->now + g->sc->dev.lat_us * q->scale;

	return gm_push(g, gm_defer(g, d), GM_EV_REQ_DONE, ri, 0);
}

/* iopa_hdd_service_ns(): seek + rotation + transfer; moves the head. */
static double gm_hdd_service(struct gm *g, const struct gm_req *q,
			     double start)
{
	double rev = g->sc->dev.rev_us > 0 ? g->sc->dev.rev_us : HDD_REV_US;
	/* iopa_hdd: a track holds what passes under the head in a turn */
	unsigned long long spt = (unsigned long long)(HDD_MEDIA_MBPS * rev / 512);
	double seek = 0, rot = 0, target, pos;

	if (q->sector != g->head) {
		unsigned long long from = g->head * HDD_CYLINDERS / HDD_SECTORS;
		unsigned long long to = q->sector * HDD_CYLINDERS / HDD_SECTORS;

		seek = gm_hdd_seek(&g->geo, from > to ? from - to : to - from);
		if (!spt)
			spt = 1;
		target = (double)(q->sector % spt) * rev / spt;
		pos = fmod(start + seek, rev);
		rot = target >= pos ? target - pos : target + rev - pos;
	}
	g->head = q->sector + q->bytes / 512;
	return seek + rot + q->bytes / HDD_MEDIA_MBPS;
}

static int gm_hdd_next(struct gm *g)
{
	double start, svc, t;
	int ri;

	if (g->busy_disk)
		return 0;
	ri = gm_fifo_pop(g, &g->drv);
	if (ri < 0)
		return 0;
	g->busy_disk = true;
	/* iopa_hdd's virtual clock: max(arrival, modelled end before) */
	start = g->req[ri].t_arr;
	if (start < g->free_dev)
		start = g->free_dev;
	svc = gm_hdd_service(g, &g->req[ri], start);
	g->free_dev = start + svc;
	t = gm_defer(g, g->free_dev);
	return gm_push(g, t > g->now ? t : g->now, GM_EV_REQ_DONE, ri, 0);
}

/*
 * mq-deadline, for what waits beyond the driver's tags: the oldest read
 * if it waited 500 ms, else the next in sector order from the last
 * dispatched (one direction, wrapping).
 */
static int gm_sched_pick(struct gm *g)
{
	int i, prev = -1, best = -1, bprev = -1, low = -1, lprev = -1;

	i = g->sched.head;
	if (i >= 0 && g->now - g->req[i].t_arr >= 500000) {
		best = i;
		bprev = -1;
	} else {
		for (; i >= 0; prev = i, i = g->req[i].next) {
			unsigned long long s = g->req[i].sector;

			if (s >= g->last_disp &&
			    (best < 0 || s < g->req[best].sector)) {
				best = i;
				bprev = prev;
			}
			if (low < 0 || s < g->req[low].sector) {
				low = i;
				lprev = prev;
			}
		}
		if (best < 0) {
			best = low;
			bprev = lprev;
		}
	}
	if (best < 0)
		return -1;
	if (bprev < 0)
		g->sched.head = g->req[best].next;
	else
		g->req[bprev].next = g->req[best].next;
	if (g->sched.tail == best)
		g->sched.tail = bprev;
	g->req[best].next = -1;
	g->last_disp = g->req[best].sector;
	return best;
}

static int gm_submit(struct gm *g, int ri)
{
	switch (g->sc->dev.kind) {
	case GM_DEV_SSD:
		if (g->tags_free) {
			g->tags_free--;
			return gm_ssd_service(g, ri);
		}
		gm_fifo_push(g, &g->tagq, ri);
		return 0;
	case GM_DEV_HDD:
		if (g->in_drv < g->sc->dev.qd) {
			g->in_drv++;
			gm_fifo_push(g, &g->drv, ri);
			return gm_hdd_next(g);
		}
		gm_fifo_push(g, &g->sched, ri);
		return 0;
	default:
		return gm_deliver(g, ri);
	}
}

static int gm_req_done(struct gm *g, int ri)
{
	double d;
	int next;

	if (g->sc->dev.kind == GM_DEV_SSD) {
		next = gm_fifo_pop(g, &g->tagq);
		if (next >= 0) {
			if (gm_ssd_service(g, next))
				return -1;
		} else {
			g->tags_free++;
		}
		return gm_deliver(g, ri);
	}
	g->busy_disk = false;
	g->in_drv--;
	next = gm_sched_pick(g);
	if (next >= 0) {
		g->in_drv++;
		gm_fifo_push(g, &g->drv, next);
	}
	if (gm_hdd_next(g))
		return -1;
	d = g->sc->dev.done_us * g->req[ri].scale;
	if (g->sc->dev.done_exp)
		d *= -log(gm_unit(gm_hash(g->r->seed, GM_RS_DONE,
					  g->done_seq++)));
	return gm_push(g, gm_defer(g, g->now + d), GM_EV_REQ_NOTIFY, ri, 0);
}

/* ---- the competitor -------------------------------------------------- */

static int gm_comp_issue(struct gm *g)
{
	const struct gm_comp *c = &g->sc->comp;
	double span = (c->hi_mb - c->lo_mb) * 1e6;
	unsigned long long n = (unsigned long long)(span / c->bs);
	unsigned long long k;
	int ri = gm_req_alloc(g);

	if (ri < 0)
		return -1;
	k = (unsigned long long)(gm_unit(gm_hash(g->r->seed, GM_RS_COMP,
						 g->comp_seq++)) * n);
	g->req[ri].job = -1;
	g->req[ri].i = 0;
	g->req[ri].bytes = c->bs;
	g->req[ri].sector = ((unsigned long long)(c->lo_mb * 1e6) / 4096) * 8 +
			    k * c->bs / 512;
	g->req[ri].t_arr = g->now;
	g->req[ri].scale = g->sc->dev.kind == GM_DEV_SSD ? 1.0 : gm_jit(g);
	return gm_submit(g, ri);
}

/* ---- jobs ------------------------------------------------------------ */

static int gm_cycle_end(struct gm *g, unsigned int t, bool early);
static int gm_dispatch(struct gm *g, unsigned int t);

static const struct gm_files *gm_files_now(const struct gm *g,
					   unsigned int t, int *set)
{
	const struct gm_tenant *tn = &g->sc->t[t];

	*set = tn->switch_ms > 0 && g->now >= tn->switch_ms * 1000;
	return &tn->f[*set];
}

/*
 * Readahead windows: the first is req bytes, each next one twice the
 * one before, up to req_max (0: req), the last one cut at the end of the
 * file.  Window @i of the file: its offset in *@off, its size returned
 * (0 past the end).
 */
static unsigned int gm_window(const struct gm_files *f, unsigned int i,
			      unsigned int *off)
{
	unsigned int o = 0, w = f->req, max = f->req_max > f->req ?
					     f->req_max : f->req;

	while (i-- && o < f->size) {
		o += w;
		w = 2 * w < max ? 2 * w : max;
	}
	*off = o;
	if (o >= f->size)
		return 0;
	return f->size - o < w ? f->size - o : w;
}

static unsigned int gm_req_bytes(const struct gm_job *j, unsigned int i)
{
	unsigned int off;

	return gm_window(j->f, i, &off);
}

static void gm_bin_add(struct gm *g, double *bins, double v)
{
	unsigned int b = (unsigned int)(g->now / (GM_BIN_MS * 1000.0));

	if (b < g->r->nbins)
		bins[b] += v;
}

/* Noise on a CPU phase of @j starting now. */
static double gm_cpu_scale(struct gm *g, struct gm_job *j)
{
	return gm_jit(g) * j->slow *
	       gm_lognormal(g->sc->noise.own_sigma, g->r->seed,
			    GM_RS_CPU + j->tenant, j->seq * 128 + j->ncpu++);
}

static int gm_job_start(struct gm *g, unsigned int t)
{
	struct gm_ten *tn = &g->ten[t];
	const struct gm_noise *n = &g->sc->noise;
	const struct gm_tenant *spec = &g->sc->t[t];
	unsigned long long h;
	struct gm_job *j;
	int ji = g->job_free, set;
	unsigned int i;

	if (ji < 0)
		return -1;
	j = &g->job[ji];
	g->job_free = j->next_free;
	memset(j, 0, sizeof(*j));
	j->tenant = t;
	j->t_fetch = g->now;
	j->f = gm_files_now(g, t, &set);
	j->seq = tn->jobseq++;
	h = gm_hash(g->r->seed, GM_RS_JOB + t, j->seq);
	j->slow = 1.0;
	if (n->slow_p > 0 && gm_unit(h) < n->slow_p)
		j->slow = n->slow_lo + (n->slow_hi - n->slow_lo) *
			  gm_unit(gm_mix(h));
	if (j->f->size) {
		while (gm_req_bytes(j, j->nreq))
			j->nreq++;
		j->cached = spec->cache_to_ms > 0 &&
			    g->now >= spec->cache_from_ms * 1000 &&
			    g->now < spec->cache_to_ms * 1000;
		j->sector = gm_walk_next(g, &tn->w[set]);
		for (i = 0; !j->cached && i < j->nreq; i++)
			j->blk += (gm_req_bytes(j, i) + 4095) / 4096 * 4096;
	}
	tn->running++;
	if (g->sc->cpu.sub_us > 0 &&
	    gm_task_add(g, -1, GM_T_SUB, g->sc->cpu.sub_us * gm_jit(g)))
		return -1;
	return gm_task_add(g, ji, GM_T_PRE, (g->sc->cpu.pre_us + j->f->cpu_us) *
			   gm_cpu_scale(g, j));
}

static int gm_issue(struct gm *g, int ji)
{
	struct gm_job *j = &g->job[ji];
	int ri = gm_req_alloc(g);
	unsigned int i, off;

	if (ri < 0)
		return -1;
	j = &g->job[ji];
	i = j->issued++;
	g->req[ri].job = ji;
	g->req[ri].i = i;
	g->req[ri].bytes = (gm_window(j->f, i, &off) + 4095) / 4096 * 4096;
	g->req[ri].sector = j->sector + off / 512;
	g->req[ri].t_arr = g->now;
	/* null_blk's timer: its own spread only (see 4. above) */
	g->req[ri].scale = (g->sc->dev.kind == GM_DEV_SSD ? 1.0 :
			    gm_jit(g) * j->slow) *
			   gm_lognormal(g->sc->noise.own_sigma, g->r->seed,
					GM_RS_REQ + j->tenant,
					j->seq * 64 + i);
	return gm_submit(g, ri);
}

static int gm_job_done(struct gm *g, int ji)
{
	struct gm_job *j = &g->job[ji];
	unsigned int t = j->tenant;
	struct gm_ten *tn = &g->ten[t];
	double svc = g->now - j->t_fetch, sq = svc * svc;
	u32 ms;

	if (!j->f->size)
		gm_bin_add(g, g->r->bins[t], 1.0);
	tn->running--;
	tn->jobs++;
	tn->bytes += j->blk;
	tn->svc_us += (u64)svc;
	tn->svc_sq = sq >= 1.8e19 || tn->svc_sq + (u64)sq < tn->svc_sq ?
		     ~0ULL : tn->svc_sq + (u64)sq;
	j->tenant = -1;
	j->next_free = g->job_free;
	g->job_free = ji;
	ms = (u32)((g->now - tn->t0) / 1000);
	if (iopa_ctl_cycle_enough(&tn->c, ms, tn->jobs, tn->svc_us))
		return gm_cycle_end(g, t, true);
	return gm_dispatch(g, t);
}

/* The worker starts on the data of its next request, if it is there. */
static int gm_consume(struct gm *g, int ji)
{
	struct gm_job *j = &g->job[ji];
	unsigned int i = j->consumed, kb;

	if (j->consuming || i >= j->nreq || !(j->done_mask & (1ULL << i)))
		return 0;
	j->consuming = true;
	kb = gm_req_bytes(j, i);
	gm_bin_add(g, g->r->bins[j->tenant], kb);
	/* reading its first page: the next window's marker */
	while (j->issued < j->nreq && j->issued < i + 2)
		if (gm_issue(g, ji))
			return -1;
	j = &g->job[ji];
	return gm_task_add(g, ji, GM_T_DATA, g->sc->cpu.us_per_kib * kb / 1024 *
			   gm_cpu_scale(g, j));
}

static int gm_deliver(struct gm *g, int ri)
{
	struct gm_req *q = &g->req[ri];
	int ji = q->job;

	g->dev_bytes += q->bytes;
	if (ji < 0) {
		gm_req_put(g, ri);
		if (g->now < g->sc->comp.to_ms * 1000)
			return gm_comp_issue(g);
		return 0;
	}
	g->job[ji].done_mask |= 1ULL << q->i;
	gm_req_put(g, ri);
	return gm_consume(g, ji);
}

static int gm_task_done(struct gm *g, const struct gm_task *tk)
{
	struct gm_job *j;

	if (tk->kind == GM_T_SUB)
		return 0;	/* the submitter's part: nobody waits on it */
	j = &g->job[tk->job];
	switch (tk->kind) {
	case GM_T_PRE:
		if (!j->f->size)
			return gm_job_done(g, tk->job);
		if (j->cached) {
			gm_bin_add(g, g->r->bins[j->tenant], j->f->size);
			return gm_task_add(g, tk->job, GM_T_CACHED,
					   g->sc->cpu.us_per_kib *
					   j->f->size / 1024 *
					   gm_cpu_scale(g, j));
		}
		/* the synchronous readahead: one request, the rest follow */
		while (j->issued < j->nreq && j->issued < 1) {
			if (gm_issue(g, tk->job))
				return -1;
			j = &g->job[tk->job];
		}
		return 0;
	case GM_T_DATA:
		j->consuming = false;
		if (++j->consumed == j->nreq)
			return gm_job_done(g, tk->job);
		/* wanting the next one: windows up to ra ahead of it */
		while (j->issued < j->nreq &&
		       j->issued < j->consumed + j->f->ra) {
			if (gm_issue(g, tk->job))
				return -1;
			j = &g->job[tk->job];
		}
		return gm_consume(g, tk->job);
	default:
		return gm_job_done(g, tk->job);
	}
}

/* ---- CPUs: processor sharing ------------------------------------------ */

static double gm_cpu_rate(const struct gm *g)
{
	double n = g->ntask, c = g->r->ncpus;

	if (n <= c)
		return 1.0;
	return c / n / (1 + g->sc->cpu.switch_cost * (n - c));
}

static double gm_cpu_next(const struct gm *g)
{
	double m = INFINITY;
	unsigned int i;

	for (i = 0; i < g->ntask; i++)
		if (g->task[i].rem < m)
			m = g->task[i].rem;
	return g->ntask ? g->now + m / gm_cpu_rate(g) : INFINITY;
}

static void gm_cpu_advance(struct gm *g, double t)
{
	double dt = t - g->now, w;
	unsigned int i;

	if (dt <= 0 || !g->ntask)
		return;
	w = dt * gm_cpu_rate(g);
	for (i = 0; i < g->ntask; i++)
		g->task[i].rem -= w;
	g->busy += dt * (g->ntask < g->r->ncpus ? g->ntask : g->r->ncpus);
}

static int gm_cpu_complete(struct gm *g)
{
	struct gm_task done[16];
	unsigned int i, k, n;
	bool first = true;

	do {
		unsigned int min = first ? 0 : ~0U;

		/*
		 * Done: what is within rounding of 0; at least the one that
		 * set the time, so that the clock always moves on.
		 */
		for (i = 1; first && i < g->ntask; i++)
			if (g->task[i].rem < g->task[min].rem)
				min = i;
		first = false;
		n = 0;
		for (i = 0, k = 0; i < g->ntask; i++) {
			if ((g->task[i].rem <= 1e-6 || i == min) && n < 16)
				done[n++] = g->task[i];
			else
				g->task[k++] = g->task[i];
		}
		g->ntask = k;
		for (i = 0; i < n; i++)
			if (gm_task_done(g, &done[i]))
				return -1;
	} while (n == 16);
	return 0;
}

/* ---- submitters and their controllers ----------------------------------- */

static int gm_cycle_begin(struct gm *g, unsigned int t)
{
	struct gm_ten *tn = &g->ten[t];
	u32 ms = iopa_ctl_next_cycle_ms(&tn->c, g->r->p);

	tn->t0 = g->now;
	tn->busy0 = g->busy;
	tn->bound_ms = ms;
	tn->bytes = 0;
	tn->dev0 = g->dev_bytes;
	tn->jobs = 0;
	tn->svc_us = 0;
	tn->svc_sq = 0;
	tn->demand = false;
	tn->gen++;
	return gm_push(g, g->now + ms * 1000.0, GM_EV_CYCLE, t, tn->gen);
}

static int gm_log_cycle(struct gm *g, const struct gm_cycle *cy)
{
	struct gm_run *r = g->r;

	if (r->ncyc == r->cyc_cap) {
		unsigned int cap = r->cyc_cap ? 2 * r->cyc_cap : 256;
		struct gm_cycle *c = realloc(r->cyc, cap * sizeof(*c));

		if (!c)
			return -1;
		r->cyc = c;
		r->cyc_cap = cap;
	}
	r->cyc[r->ncyc++] = *cy;
	return 0;
}

static int gm_cycle_end(struct gm *g, unsigned int t, bool early)
{
	struct gm_ten *tn = &g->ten[t];
	struct iopa_ctl_sample s = { 0 };
	struct gm_cycle cy = { 0 };
	unsigned int ncpus = g->r->ncpus;
	double us = g->now - tn->t0, idle;
	u64 ms = (u64)(us / 1000);

	if (!ms)
		ms = 1;
	idle = ncpus * us - (g->busy - tn->busy0);
	/*
	 * As the module: a cycle in another unit than the one before (cache
	 * hits after device reads, or the reverse) is "cached", unless no
	 * cycle before had completions (the first bytes after empty
	 * start-up cycles are not).
	 */
	if (g->sc->sticky_unit) {
		/* an older module: bytes/s from the first bytes on */
		if (tn->bytes)
			tn->tput_bytes = true;
	} else if (tn->jobs && !!tn->bytes != tn->tput_bytes) {
		s.cached = tn->unit_known;
		tn->tput_bytes = !!tn->bytes;
	}
	if (tn->jobs)
		tn->unit_known = true;
	tn->cycles++;
	s.tput = tn->tput_bytes ? tn->bytes * 1000 / ms :
		 (u64)tn->jobs * 1000 * 1000 / ms;
	s.elapsed_ms = (u32)ms;
	s.cpu_saturated = (u64)(idle / 1000) * 10 < ms * ncpus;
	s.block_io = tn->tput_bytes;
	/* cold_demand: jobs queued from the start, waiting on first reads */
	s.demand = (g->sc->cold_demand && tn->cold) || tn->demand ||
		   tn->running >= iopa_ctl_limit(&tn->c);
	s.completions = tn->jobs;
	s.svc_us = tn->svc_us;
	s.svc_sq = tn->svc_sq;
	if (tn->tput_bytes && !g->sc->no_dev_tput)
		s.dev_tput = (g->dev_bytes - tn->dev0) * 1000 / ms;

	cy.t_ms = g->now / 1000;
	cy.bound_ms = tn->bound_ms;
	cy.early = early;
	cy.in_jobs = !tn->tput_bytes;
	cy.tenant = t;
	cy.limit = iopa_ctl_limit(&tn->c);
	cy.mode = iopa_ctl_mode(&tn->c);
	cy.changed = iopa_ctl_update(&tn->c, g->r->p, &s, NULL);
	cy.new_limit = iopa_ctl_limit(&tn->c);
	cy.new_mode = iopa_ctl_mode(&tn->c);
	cy.s = s;
	if (gm_log_cycle(g, &cy))
		return -1;
	if (g->r->trace)
		printf("# t=%8.1f%s T%u %-6s limit=%3u run=%3u n=%4u svc=%7.1fms tput=%8.3f%s%s%s%s -> %-6s limit=%3u\n",
		       cy.t_ms, early ? "e" : " ", t,
		       iopa_ctl_mode_name(cy.mode), cy.limit,
		       tn->running, s.completions,
		       s.completions ? s.svc_us / 1000.0 / s.completions : 0,
		       tn->tput_bytes ? s.tput / 1e6 : s.tput / 1e3,
		       tn->tput_bytes ? "MB/s" : "jobs/s",
		       s.cpu_saturated ? " sat" : "",
		       s.cached ? " cached" : "", s.demand ? "" : " nodemand",
		       iopa_ctl_mode_name(cy.new_mode), cy.new_limit);
	if (gm_cycle_begin(g, t))
		return -1;
	return gm_dispatch(g, t);
}

static int gm_dispatch(struct gm *g, unsigned int t)
{
	struct gm_ten *tn = &g->ten[t];
	unsigned int limit = iopa_ctl_limit(&tn->c);
	unsigned int cap = limit < g->sc->workers ? limit : g->sc->workers;

	if (!tn->active)
		return 0;
	while (tn->running < cap)
		if (gm_job_start(g, t))
			return -1;
	if (limit <= g->sc->workers)
		tn->demand = true;
	return 0;
}

static int gm_join(struct gm *g, unsigned int t)
{
	struct gm_ten *tn = &g->ten[t];

	/*
	 * As the bench: the module creates the submitter with its default
	 * policy (kernel/limit.c: bracket, which starts at 8), and an
	 * explicit policy is switched to after (IOPA_IOC_SET_ADAPT), from
	 * the limit it has (iopa_ctl_set_policy()); the first cycle, armed
	 * when the submitter is created, keeps bracket's length.
	 */
	iopa_ctl_init(&tn->c, g->r->p, IOPA_CTL_POLICY_BRACKET);
	if (gm_cycle_begin(g, t))
		return -1;
	iopa_ctl_set_policy(&tn->c, g->r->policy);
	/*
	 * kernel/limit.c: a disk that says it is rotational starts at one
	 * job; then a remembered knee, if any (kernel/knee.c).
	 */
	if (g->sc->dev.kind == GM_DEV_HDD || g->r->rotational)
		iopa_ctl_set_start(&tn->c, g->r->p, 1);
	if (g->r->knee)
		iopa_ctl_set_known(&tn->c, g->r->p, g->r->knee,
				   g->r->knee_kb);
	if (g->r->fixed)
		iopa_ctl_set_fixed(&tn->c, g->r->fixed);
	tn->cold = true;
	return gm_push(g, g->now + g->sc->dev.cold_ms * 1000, GM_EV_AVAIL, t,
		       0);
}

/* ---- the run ----------------------------------------------------------- */

static int gm_event(struct gm *g, const struct gm_ev *e)
{
	switch (e->type) {
	case GM_EV_REQ_DONE:
		return gm_req_done(g, e->a);
	case GM_EV_REQ_NOTIFY:
		return gm_deliver(g, e->a);
	case GM_EV_CYCLE:
		if (e->gen != g->ten[e->a].gen)
			return 0;	/* the cycle ended early */
		return gm_cycle_end(g, e->a, false);
	case GM_EV_JOIN:
		return gm_join(g, e->a);
	case GM_EV_AVAIL:
		g->ten[e->a].active = true;
		g->ten[e->a].cold = false;
		return gm_dispatch(g, e->a);
	case GM_EV_COMP: {
		unsigned int i;

		for (i = 0; i < g->sc->comp.qd; i++)
			if (gm_comp_issue(g))
				return -1;
		return 0;
	}
	}
	return 0;
}

static int gm_setup(struct gm *g)
{
	const struct gm_scen *sc = g->sc;
	struct gm_run *r = g->r;
	unsigned int t, i;

	r->nbins = (unsigned int)(r->dur_ms / GM_BIN_MS) + 1;
	for (t = 0; t < sc->ntenants; t++) {
		r->bins[t] = calloc(r->nbins, sizeof(double));
		if (!r->bins[t])
			return -1;
	}
	g->job_cap = sc->workers * sc->ntenants;
	g->job = calloc(g->job_cap, sizeof(*g->job));
	if (!g->job)
		return -1;
	for (i = 0; i < g->job_cap; i++) {
		g->job[i].tenant = -1;
		g->job[i].next_free = i + 1 < g->job_cap ? (int)i + 1 : -1;
	}
	g->job_free = 0;
	g->req_free = -1;
	g->tagq.head = -1;
	g->tagq.tail = -1;
	g->drv.head = -1;
	g->drv.tail = -1;
	g->sched.head = -1;
	g->sched.tail = -1;
	g->tags_free = sc->dev.tags;
	gm_hdd_geo_init(&g->geo);
	if (gm_noise_init(g))
		return -1;
	for (t = 0; t < sc->ntenants; t++) {
		for (i = 0; i < 2; i++)
			if (gm_walk_init(g, &g->ten[t].w[i], &sc->t[t].f[i],
					 GM_RS_WALK + 2 * t + i))
				return -1;
		if (gm_push(g, sc->t[t].join_ms * 1000, GM_EV_JOIN, t, 0))
			return -1;
	}
	if (sc->comp.to_ms > 0 &&
	    gm_push(g, sc->comp.from_ms * 1000, GM_EV_COMP, 0, 0))
		return -1;
	return 0;
}

static void gm_teardown(struct gm *g)
{
	unsigned int t, i;

	for (t = 0; t < GM_MAX_TENANTS; t++)
		for (i = 0; i < 2; i++)
			free(g->ten[t].w[i].perm);
	free(g->heap);
	free(g->task);
	free(g->job);
	free(g->req);
	free(g->jit);
	free(g->ps);
	free(g->pe);
}

/**
 * gm_simulate() - one run of a guest-like scenario
 * @r: inputs filled in, outputs zeroed
 *
 * Return: 0, or -1 if out of memory (free @r with gm_free() either way).
 */
int gm_simulate(struct gm_run *r)
{
	struct gm g;
	int ret = -1;

	memset(&g, 0, sizeof(g));
	g.r = r;
	g.sc = r->sc;
	g.end = r->dur_ms * 1000;
	if (gm_setup(&g))
		goto out;
	for (;;) {
		double te = g.nheap ? g.heap[0].t : INFINITY;
		double tc = gm_cpu_next(&g);
		double t = te < tc ? te : tc;

		if (t >= g.end) {
			gm_cpu_advance(&g, g.end);
			break;
		}
		gm_cpu_advance(&g, t);
		g.now = t;
		r->events++;
		if (tc <= te) {
			if (gm_cpu_complete(&g))
				goto out;
		} else {
			struct gm_ev e = gm_pop(&g);

			if (gm_event(&g, &e))
				goto out;
		}
	}
	ret = 0;
out:
	gm_teardown(&g);
	return ret;
}

void gm_free(struct gm_run *r)
{
	unsigned int t;

	for (t = 0; t < GM_MAX_TENANTS; t++) {
		free(r->bins[t]);
		r->bins[t] = NULL;
	}
	free(r->cyc);
	r->cyc = NULL;
	r->ncyc = 0;
	r->cyc_cap = 0;
}
