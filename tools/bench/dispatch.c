// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-bench-dispatch: the cost of dispatching a job, through /dev/iopa
 * and through an in-process pool that does the same work, in one run.
 *
 * Every path moves the same payload: a 40-byte job descriptor (struct
 * iopa_job) from the submitter to a worker, a result back, completions
 * reaped by user_data (each checked to come exactly once), with the same
 * outstanding window (WINDOW jobs) and the same number of workers:
 *
 *   inproc  a mutex-and-condvar queue of descriptors and one of results;
 *           the submitter queues and reaps BATCH at a time, a worker
 *           takes and returns up to BATCH at a time
 *   ioctl   SUBMIT and REAP BATCH at a time; each worker completes
 *           the jobs it holds and fetches up to BATCH more in one
 *           IOPA_IOC_WORK_BATCH (at most IOPA_WORKER_MAX_JOBS)
 *   uring   the submitter queues up to BATCH jobs with one
 *           IOPA_URING_CMD_SUBMIT_MANY and reaps them with an
 *           IOPA_URING_CMD_REAP (up to BATCH, at least 1), both
 *           normal SQEs, in one io_uring_enter; each worker keeps
 *           one IOPA_URING_CMD_WORK_BATCH on its ring (two at batch
 *           1), which completes the jobs it took and takes up to BATCH
 *           more (at most IOPA_WORKER_MAX_JOBS); rings set up with
 *           SINGLE_ISSUER and
 *           DEFER_TASKRUN (-u coop: COOP_TASKRUN; -u none: no flags)
 *
 * fd=install: the worker gets a descriptor of its own for the job's file
 * and closes it (iopa installs one per job; inproc dup()s and close()s).
 * fd=borrow: the worker uses the submitter's descriptor (iopa: jobs
 * submitted with IOPA_JOB_F_BORROW to workers created with
 * IOPA_WORKER_F_BORROW, which get IOPA_WORK_F_BORROWED).
 *
 * Each configuration runs RUNS times, interleaved (run 1 of every
 * configuration, then run 2...); a line gives the median, a comment line
 * the range:
 *   bench dispatch path=<p> batch=<n> fd=<borrow|install> jobs_per_s=<f>
 *     cpu_us_per_job=<f> ratio_to_inproc=<f>
 * cpu_us_per_job is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID:
 * user and kernel time of all its threads, task work included; not the
 * kernel's workqueues) over the jobs.  ratio_to_inproc divides jobs_per_s
 * by inproc's at the same batch and fd mode.  Then the latency of one job
 * on an idle queue, submit to reaped completion:
 *   bench dispatch-latency path=<p> us_median=<f> us_min=<f> us_max=<f>
 * Figures are printed, not asserted.
 *
 *   iopa-bench-dispatch [-n JOBS] [-w WORKERS] [-r RUNS] [-l LAT_JOBS]
 *                       [-o PATH:BATCH:FD] [-u defer|coop|none]
 *
 * -o runs that one configuration only, RUNS times, and prints its "# run"
 * lines (to profile it: tools/bench/profile-dispatch.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/iopa.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define WINDOW		256	/* jobs outstanding, every path */
#define MAX_WORKERS	64
#define MAX_RUNS	15

static const unsigned int batches[] = { 1, 8, 64, 256 };
#define NR_BATCHES	(sizeof(batches) / sizeof(batches[0]))

enum path { P_INPROC, P_IOCTL, P_URING, NR_PATHS };
static const char *const path_name[NR_PATHS] = { "inproc", "ioctl", "uring" };
enum fdmode { FD_INSTALL, FD_BORROW, NR_FD };
static const char *const fd_name[NR_FD] = { "install", "borrow" };

static unsigned long nr_jobs = 50000;
static unsigned int nr_workers = 2, nr_runs = 5, lat_jobs = 200;
static int job_file;
/*
 * Setup flags of every ring (each is used by one thread only): -u
 * defer (the default) SINGLE_ISSUER | DEFER_TASKRUN, coop COOP_TASKRUN,
 * none.
 */
static unsigned int ring_flags = IORING_SETUP_SINGLE_ISSUER |
				 IORING_SETUP_DEFER_TASKRUN;
static const char *ring_flags_name = "SINGLE_ISSUER|DEFER_TASKRUN";
/* IOPA_JOB_F_BORROW in fd=borrow runs. */
static __u32 job_flags;
/* Jobs outstanding: WINDOW, or 1 to time each job alone (lat_us). */
static unsigned int window = WINDOW;
static double *lat_us, lat_t0;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* The submitter's check that each job's completion comes exactly once. */
struct seen {
	unsigned char *bit;
	unsigned long n;
};

static void seen_init(struct seen *s, unsigned long n)
{
	s->bit = calloc(n, 1);
	if (!s->bit)
		die("calloc");
	s->n = n;
}

static void seen_mark(struct seen *s, __u64 user_data)
{
	if (lat_us && user_data < s->n)
		lat_us[user_data] = (now_s() - lat_t0) * 1e6;
	if (user_data >= s->n || s->bit[user_data]++) {
		fprintf(stderr, "job %llu completed twice or unknown\n",
			(unsigned long long)user_data);
		exit(1);
	}
}

static void job_desc(struct iopa_job *j, unsigned long id)
{
	if (lat_us)
		lat_t0 = now_s();
	memset(j, 0, sizeof(*j));
	j->fd = job_file;
	j->flags = job_flags;
	j->offset = id * 4096;
	j->len = 4096;
	j->user_data = id;
}

/* ---- inproc: the reference pool ----------------------------------------- */

struct result {
	__u64 user_data;
	__s64 res;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	struct iopa_job q[WINDOW];
	struct result c[WINDOW];
	unsigned int qh, qn, ch, cn;
	unsigned int batch;
	enum fdmode fd;
	bool stop;
} pq = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER,
};

static void *inproc_worker(void *arg)
{
	struct iopa_job mine[WINDOW];
	struct result res[WINDOW];
	unsigned int n, i;

	(void)arg;
	pthread_mutex_lock(&pq.lock);
	for (;;) {
		while (!pq.qn && !pq.stop)
			pthread_cond_wait(&pq.work, &pq.lock);
		if (pq.stop)
			break;
		for (n = 0; n < pq.batch && pq.qn; n++) {
			mine[n] = pq.q[pq.qh];
			pq.qh = (pq.qh + 1) % WINDOW;
			pq.qn--;
		}
		pthread_mutex_unlock(&pq.lock);
		for (i = 0; i < n; i++) {
			int fd = mine[i].fd;

			if (pq.fd == FD_INSTALL) {
				fd = dup(fd);
				if (fd < 0)
					die("dup");
				close(fd);
			}
			res[i].user_data = mine[i].user_data;
			res[i].res = 0;
		}
		pthread_mutex_lock(&pq.lock);
		for (i = 0; i < n; i++) {
			pq.c[(pq.ch + pq.cn) % WINDOW] = res[i];
			pq.cn++;
		}
		pthread_cond_signal(&pq.done);
	}
	pthread_mutex_unlock(&pq.lock);
	return NULL;
}

static void run_inproc(unsigned int batch, enum fdmode fd, struct seen *s)
{
	pthread_t thr[MAX_WORKERS];
	unsigned long sent = 0, reaped = 0;
	unsigned int i;

	pq.qh = pq.qn = pq.ch = pq.cn = 0;
	pq.batch = batch;
	pq.fd = fd;
	pq.stop = false;
	for (i = 0; i < nr_workers; i++)
		pthread_create(&thr[i], NULL, inproc_worker, NULL);
	pthread_mutex_lock(&pq.lock);
	while (reaped < nr_jobs) {
		unsigned int n = 0;

		/* Queue up to a batch, within the window. */
		while (n < batch && sent + n < nr_jobs &&
		       sent - reaped + n < window) {
			job_desc(&pq.q[(pq.qh + pq.qn) % WINDOW], sent + n);
			pq.qn++;
			n++;
		}
		sent += n;
		if (n)
			pthread_cond_broadcast(&pq.work);
		/* Reap up to a batch; wait when there is nothing to queue. */
		while (!pq.cn && (sent == nr_jobs || sent - reaped >= window))
			pthread_cond_wait(&pq.done, &pq.lock);
		for (n = 0; n < batch && pq.cn; n++) {
			seen_mark(s, pq.c[pq.ch].user_data);
			pq.ch = (pq.ch + 1) % WINDOW;
			pq.cn--;
		}
		reaped += n;
	}
	pq.stop = true;
	pthread_cond_broadcast(&pq.work);
	pthread_mutex_unlock(&pq.lock);
	for (i = 0; i < nr_workers; i++)
		pthread_join(thr[i], NULL);
}

/* ---- iopa setup shared by the ioctl and io_uring paths ---------------- */

struct iopa_run {
	int ctx, sub;
	int wfd[MAX_WORKERS];
	unsigned int batch;	/* the submitter's */
	unsigned int wbatch;	/* a worker's: at most IOPA_WORKER_MAX_JOBS */
	atomic_bool stop;
	pthread_t thr[MAX_WORKERS];
};

static void iopa_setup(struct iopa_run *r, unsigned int batch, enum fdmode fd)
{
	struct iopa_submitter_create sc = { .limit = 64 };
	struct iopa_worker_create wc = {
		.flags = fd == FD_BORROW ? IOPA_WORKER_F_BORROW : 0,
	};
	unsigned int i;

	job_flags = fd == FD_BORROW ? IOPA_JOB_F_BORROW : 0;
	r->batch = batch;
	r->wbatch = batch < IOPA_WORKER_MAX_JOBS ? batch : IOPA_WORKER_MAX_JOBS;
	r->ctx = open("/dev/iopa", O_RDWR | O_CLOEXEC);
	if (r->ctx < 0)
		die("/dev/iopa");
	r->sub = ioctl(r->ctx, IOPA_IOC_SUBMITTER_CREATE, &sc);
	if (r->sub < 0)
		die("SUBMITTER_CREATE");
	for (i = 0; i < nr_workers; i++) {
		r->wfd[i] = ioctl(r->ctx, IOPA_IOC_WORKER_CREATE, &wc);
		if (r->wfd[i] < 0)
			die("WORKER_CREATE");
	}
	atomic_store(&r->stop, false);
}

static void iopa_teardown(struct iopa_run *r)
{
	unsigned int i;

	atomic_store(&r->stop, true);
	for (i = 0; i < nr_workers; i++)
		pthread_join(r->thr[i], NULL);
	for (i = 0; i < nr_workers; i++)
		close(r->wfd[i]);
	close(r->sub);
	close(r->ctx);
}

/* ---- ioctl --------------------------------------------------------------- */

struct wctx {
	struct iopa_run *r;
	int fd;
};

/* Close the fds of @work[0..n) that are the worker's own. */
static void close_owned(const struct iopa_work *work, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!(work[i].flags & IOPA_WORK_F_BORROWED))
			close(work[i].fd);
}

/* Fill @done with the completions of @work[0..n), result 0. */
static void done_of(struct iopa_done *done, const struct iopa_work *work,
		    unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		memset(&done[i], 0, sizeof(done[i]));
		done[i].job_id = work[i].job_id;
	}
}

static void *ioctl_worker(void *arg)
{
	struct wctx *wc = arg;
	struct iopa_done done[IOPA_WORKER_MAX_JOBS];
	struct iopa_work work[IOPA_WORKER_MAX_JOBS];
	unsigned int held = 0;

	while (!atomic_load(&wc->r->stop)) {
		struct iopa_batch b = {
			.done = (uintptr_t)done, .nr_done = held,
			.work = (uintptr_t)work, .nr_work = wc->r->wbatch,
			.timeout_ns = 20000000,
		};
		int got = ioctl(wc->fd, IOPA_IOC_WORK_BATCH, &b);

		if (got < 0 && errno != ETIMEDOUT && errno != EINTR)
			die("WORK_BATCH");
		if (got < 0 && b.completed != held)
			die("WORK_BATCH completions");
		held = got > 0 ? got : 0;
		close_owned(work, held);
		done_of(done, work, held);
	}
	return NULL;
}

static void ioctl_submitter(struct iopa_run *r, struct seen *s)
{
	struct iopa_job jobs[WINDOW];
	struct iopa_cqe cqes[WINDOW];
	unsigned long sent = 0, reaped = 0;
	unsigned int i;

	while (reaped < nr_jobs) {
		unsigned long room = window - (sent - reaped);
		unsigned long n = nr_jobs - sent;

		if (n > r->batch)
			n = r->batch;
		if (n > room)
			n = room;
		if (n) {
			struct iopa_submit sb = { .jobs = (uintptr_t)jobs,
						  .nr = n };
			int got;

			for (i = 0; i < n; i++)
				job_desc(&jobs[i], sent + i);
			got = ioctl(r->sub, IOPA_IOC_SUBMIT, &sb);
			if (got > 0)
				sent += got;
			else if (errno != EAGAIN)
				die("SUBMIT");
		}
		struct iopa_reap rp = {
			.cqes = (uintptr_t)cqes, .nr = r->batch,
			.flags = sent == nr_jobs || sent - reaped >= window ?
				 IOPA_REAP_F_WAIT : 0,
		};
		int got = ioctl(r->sub, IOPA_IOC_REAP, &rp);

		if (got > 0) {
			for (i = 0; i < (unsigned int)got; i++)
				seen_mark(s, cqes[i].user_data);
			reaped += got;
		} else if (errno != EAGAIN && errno != ETIMEDOUT) {
			die("REAP");
		}
	}
}

static void run_ioctl(unsigned int batch, enum fdmode fd, struct seen *s)
{
	struct wctx wc[MAX_WORKERS];
	struct iopa_run r;
	unsigned int i;

	iopa_setup(&r, batch, fd);
	for (i = 0; i < nr_workers; i++) {
		wc[i].r = &r;
		wc[i].fd = r.wfd[i];
		pthread_create(&r.thr[i], NULL, ioctl_worker, &wc[i]);
	}
	ioctl_submitter(&r, s);
	iopa_teardown(&r);
}

/* ---- io_uring ------------------------------------------------------------- */

static void prep_cmd(struct io_uring_sqe *sqe, size_t sqe_size, int fd,
		     __u32 op, const void *payload, size_t len, __u64 ud)
{
	memset(sqe, 0, sqe_size);
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	sqe->user_data = ud;
	memcpy(sqe->cmd, payload, len);
}

static struct io_uring_sqe *get_sqe(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		die("io_uring_get_sqe");
	return sqe;
}

/*
 * A worker on io_uring: one WORK_BATCH command in flight, taking up to the
 * worker's batch; at batch 1, two, so that the next job is on its way while
 * the thread works on the last one (as ublk keeps a fetch per tag: larger
 * batches carry several jobs already, and a second command there measured
 * slower at batch 8).
 */
#define URING_SLOTS	2

struct uring_slot {
	struct iopa_done done[IOPA_WORKER_MAX_JOBS];
	struct iopa_work work[IOPA_WORKER_MAX_JOBS];
	struct iopa_batch b;
	struct iopa_uring_batch ub;
};

static void *uring_worker(void *arg)
{
	struct wctx *wc = arg;
	unsigned int per = wc->r->wbatch, k, nslots;
	struct uring_slot *sl = calloc(URING_SLOTS, sizeof(*sl));
	struct io_uring ring;

	if (!sl || io_uring_queue_init(2 * URING_SLOTS, &ring, ring_flags))
		die("worker ring");
	nslots = per == 1 ? URING_SLOTS : 1;
	for (k = 0; k < nslots; k++) {
		sl[k].b.work = (uintptr_t)sl[k].work;
		sl[k].b.done = (uintptr_t)sl[k].done;
		sl[k].b.nr_work = per;
		sl[k].ub.batch = (uintptr_t)&sl[k].b;
		prep_cmd(get_sqe(&ring), 64, wc->fd, IOPA_URING_CMD_WORK_BATCH,
			 &sl[k].ub, sizeof(sl[k].ub), k);
	}
	while (!atomic_load(&wc->r->stop)) {
		struct __kernel_timespec ts = { .tv_nsec = 20000000 };
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;

		/*
		 * Submit, then wait only if no CQE is there yet: a wait with
		 * a timeout arms a timer in the kernel every time.
		 */
		io_uring_submit(&ring);
		if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			continue;
		io_uring_for_each_cqe(&ring, head, cqe) {
			struct uring_slot *s = &sl[cqe->user_data];
			int got = cqe->res;

			seen++;
			if (got < 0) {
				fprintf(stderr, "WORK_BATCH: %s\n",
					strerror(-got));
				exit(1);
			}
			/* Its command is done: its arrays are ours again. */
			close_owned(s->work, got);
			done_of(s->done, s->work, got);
			s->b.nr_done = got;
			prep_cmd(get_sqe(&ring), 64, wc->fd,
				 IOPA_URING_CMD_WORK_BATCH, &s->ub,
				 sizeof(s->ub), cqe->user_data);
		}
		io_uring_cq_advance(&ring, seen);
	}
	/* The ring's exit cancels what is parked. */
	io_uring_queue_exit(&ring);
	free(sl);
	return NULL;
}

/*
 * The submitter: SUBMIT_MANY of up to BATCH jobs (a normal SQE) and a
 * REAP of at least one and up to BATCH completions, both in one
 * io_uring_enter; the REAP is kept in flight, its buffer ours again at its
 * CQE.
 */
static void uring_submitter(struct iopa_run *r, struct seen *s)
{
	static struct iopa_job jobs[WINDOW];
	static struct iopa_cqe cqes[WINDOW];
	unsigned long sent = 0, done = 0;
	bool reaping = false, submitting = false;
	struct io_uring ring;

	if (io_uring_queue_init(8, &ring, ring_flags))
		die("submitter ring");
	while (done < nr_jobs) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0, n = 0, i;

		if (!submitting) {
			while (n < r->batch && sent + n < nr_jobs &&
			       sent + n - done < window) {
				job_desc(&jobs[n], sent + n);
				n++;
			}
		}
		if (n) {
			struct iopa_uring_submit a = {
				.jobs = (uintptr_t)jobs, .nr = n,
			};

			prep_cmd(get_sqe(&ring), 64, r->sub,
				 IOPA_URING_CMD_SUBMIT_MANY, &a, sizeof(a), 1);
			submitting = true;
		}
		if (!reaping && sent + n > done) {
			struct iopa_uring_reap a = {
				.cqes = (uintptr_t)cqes, .nr = r->batch, .min = 1,
			};

			prep_cmd(get_sqe(&ring), 64, r->sub, IOPA_URING_CMD_REAP,
				 &a, sizeof(a), 2);
			reaping = true;
		}
		io_uring_submit_and_wait(&ring, 1);
		io_uring_for_each_cqe(&ring, head, cqe) {
			seen++;
			if (cqe->res < 0 && cqe->res != -EAGAIN) {
				fprintf(stderr, "uring %s: %s\n",
					cqe->user_data == 1 ? "SUBMIT_MANY" : "REAP",
					strerror(-cqe->res));
				exit(1);
			}
			if (cqe->user_data == 1) {
				submitting = false;
				if (cqe->res > 0)
					sent += cqe->res;
				continue;
			}
			reaping = false;
			for (i = 0; i < (unsigned int)cqe->res; i++)
				seen_mark(s, cqes[i].user_data);
			done += cqe->res;
		}
		io_uring_cq_advance(&ring, seen);
	}
	io_uring_queue_exit(&ring);
}

static void run_uring(unsigned int batch, enum fdmode fd, struct seen *s)
{
	struct wctx wc[MAX_WORKERS];
	struct iopa_run r;
	unsigned int i;

	iopa_setup(&r, batch, fd);
	for (i = 0; i < nr_workers; i++) {
		wc[i].r = &r;
		wc[i].fd = r.wfd[i];
		pthread_create(&r.thr[i], NULL, uring_worker, &wc[i]);
	}
	uring_submitter(&r, s);
	iopa_teardown(&r);
}

/* ---- one configuration ---------------------------------------------------- */

struct sample {
	double jobs_per_s, cpu_us;
};

static struct sample run_one(enum path p, unsigned int batch, enum fdmode fd)
{
	struct sample out;
	struct seen s;
	double t0, c0;
	unsigned long i;

	seen_init(&s, nr_jobs);
	t0 = now_s();
	c0 = cpu_s();
	switch (p) {
	case P_INPROC:
		run_inproc(batch, fd, &s);
		break;
	case P_IOCTL:
		run_ioctl(batch, fd, &s);
		break;
	default:
		run_uring(batch, fd, &s);
		break;
	}
	out.jobs_per_s = nr_jobs / (now_s() - t0);
	out.cpu_us = (cpu_s() - c0) * 1e6 / nr_jobs;
	for (i = 0; i < nr_jobs; i++)
		if (!s.bit[i]) {
			fprintf(stderr, "job %lu never completed\n", i);
			exit(1);
		}
	free(s.bit);
	return out;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- latency on an idle queue --------------------------------------------- */

/* lat_jobs jobs one at a time, each timed from submission to its reaping. */
static void latency(enum path p)
{
	double us[1000], lo, hi;
	unsigned long saved = nr_jobs;
	unsigned int i;

	lat_us = us;
	window = 1;
	nr_jobs = lat_jobs;
	run_one(p, 1, FD_INSTALL);
	nr_jobs = saved;
	window = WINDOW;
	lat_us = NULL;
	lo = hi = us[0];
	for (i = 1; i < lat_jobs; i++) {
		lo = us[i] < lo ? us[i] : lo;
		hi = us[i] > hi ? us[i] : hi;
	}
	printf("bench dispatch-latency path=%s us_median=%.1f us_min=%.1f us_max=%.1f\n",
	       path_name[p], median(us, lat_jobs), lo, hi);
}

int main(int argc, char **argv)
{
	static struct sample res[NR_PATHS][NR_BATCHES][NR_FD][MAX_RUNS];
	struct iopa_features f;
	unsigned int p, b, d, k;
	int ctx, opt;

	int only_p = -1, only_b = -1, only_d = -1;

	while ((opt = getopt(argc, argv, "n:w:r:l:o:u:")) != -1) {
		switch (opt) {
		case 'n':
			nr_jobs = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			nr_workers = strtoul(optarg, NULL, 0);
			break;
		case 'r':
			nr_runs = strtoul(optarg, NULL, 0);
			break;
		case 'l':
			lat_jobs = strtoul(optarg, NULL, 0);
			break;
		case 'u':
			if (!strcmp(optarg, "coop")) {
				ring_flags = IORING_SETUP_COOP_TASKRUN;
				ring_flags_name = "COOP_TASKRUN";
			} else if (!strcmp(optarg, "none")) {
				ring_flags = 0;
				ring_flags_name = "no flags";
			} else if (strcmp(optarg, "defer")) {
				fprintf(stderr, "-u defer|coop|none\n");
				return 2;
			}
			break;
		case 'o': {
			char pname[16], fname[16];
			unsigned int bv, i;

			if (sscanf(optarg, "%15[a-z]:%u:%15[a-z]", pname, &bv,
				   fname) != 3)
				only_p = -2;
			for (i = 0; i < NR_PATHS; i++)
				if (!strcmp(pname, path_name[i]))
					only_p = i;
			for (i = 0; i < NR_BATCHES; i++)
				if (bv == batches[i])
					only_b = i;
			for (i = 0; i < NR_FD; i++)
				if (!strcmp(fname, fd_name[i]))
					only_d = i;
			if (only_p < 0 || only_b < 0 || only_d < 0) {
				fprintf(stderr, "-o PATH:BATCH:FD, e.g. ioctl:64:borrow\n");
				return 2;
			}
			break;
		}
		default:
			fprintf(stderr, "usage: %s [-n JOBS] [-w WORKERS] [-r RUNS] [-l LAT_JOBS] [-o PATH:BATCH:FD] [-u defer|coop|none]\n",
				argv[0]);
			return 2;
		}
	}
	if (!nr_jobs || !nr_workers || nr_workers > MAX_WORKERS ||
	    !nr_runs || nr_runs > MAX_RUNS || !lat_jobs || lat_jobs > 1000) {
		fprintf(stderr, "bad arguments\n");
		return 2;
	}
	job_file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (job_file < 0)
		die("/proc/self/exe");
	ctx = open("/dev/iopa", O_RDWR | O_CLOEXEC);
	if (ctx < 0 || ioctl(ctx, IOPA_IOC_GET_FEATURES, &f))
		die("/dev/iopa");
	close(ctx);
	if (!(f.features & IOPA_FEAT_URING_CMD)) {
		fprintf(stderr, "the module has no io_uring commands\n");
		return 1;
	}
	printf("# dispatch: %lu jobs of a 40-byte descriptor per run, %u workers, window %d, %u interleaved runs per configuration\n",
	       nr_jobs, nr_workers, WINDOW, nr_runs);
	printf("# io_uring rings (submitter and workers, normal SQEs): %s\n",
	       ring_flags_name);

	if (only_p >= 0) {
		for (k = 0; k < nr_runs; k++) {
			struct sample r = run_one(only_p, batches[only_b], only_d);

			printf("# run %u path=%s batch=%u fd=%s jobs_per_s=%.0f cpu_us_per_job=%.2f\n",
			       k + 1, path_name[only_p], batches[only_b],
			       fd_name[only_d], r.jobs_per_s, r.cpu_us);
		}
		return 0;
	}
	for (k = 0; k < nr_runs; k++)
		for (b = 0; b < NR_BATCHES; b++)
			for (d = 0; d < NR_FD; d++)
				for (p = 0; p < NR_PATHS; p++) {
					res[p][b][d][k] = run_one(p, batches[b], d);
					printf("# run %u path=%s batch=%u fd=%s jobs_per_s=%.0f cpu_us_per_job=%.2f\n",
					       k + 1, path_name[p], batches[b],
					       fd_name[d], res[p][b][d][k].jobs_per_s,
					       res[p][b][d][k].cpu_us);
					fflush(stdout);
				}

	for (b = 0; b < NR_BATCHES; b++)
		for (d = 0; d < NR_FD; d++) {
			double ref = 0;

			for (p = 0; p < NR_PATHS; p++) {
				double jps[MAX_RUNS], cpu[MAX_RUNS], lo, hi, m;

				for (k = 0; k < nr_runs; k++) {
					jps[k] = res[p][b][d][k].jobs_per_s;
					cpu[k] = res[p][b][d][k].cpu_us;
				}
				m = median(jps, nr_runs);
				lo = jps[0];
				hi = jps[nr_runs - 1];
				if (p == P_INPROC)
					ref = m;
				printf("bench dispatch path=%s batch=%u fd=%s jobs_per_s=%.0f cpu_us_per_job=%.2f ratio_to_inproc=%.3f\n",
				       path_name[p], batches[b], fd_name[d], m,
				       median(cpu, nr_runs), m / ref);
				printf("# path=%s batch=%u fd=%s runs=%u jobs_per_s min=%.0f max=%.0f cpu_us_per_job min=%.2f max=%.2f\n",
				       path_name[p], batches[b], fd_name[d], nr_runs,
				       lo, hi, cpu[0], cpu[nr_runs - 1]);
			}
		}
	for (p = 0; p < NR_PATHS; p++)
		latency(p);
	return 0;
}
