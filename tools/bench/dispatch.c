// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-bench-dispatch: jobs per second for empty jobs, through
 *   ioctl    SUBMIT batches / REAP; workers COMPLETE_AND_FETCH by ioctl
 *   uring    SUBMIT SQEs in batches on an SQE128 ring; each worker keeps
 *            its fetches parked on its own ring, COMMIT_AND_FETCH batched
 *   pthread  an in-process pool: one mutex + condvar queue, the same
 *            number of threads, the reference
 * in one run, printing one line per path:
 *   bench dispatch path=<p> jobs_per_s=<float> ratio_to_pthread=<float>
 * An iopa job is dispatched with a new fd for its file, which the worker
 * closes: that is part of the measured cost.  Figures are printed, not
 * asserted: the machines are shared and noisy, compare ratios of one run.
 *
 *   iopa-bench-dispatch [-n JOBS] [-w WORKERS] [-b BATCH]
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

#define RING_FETCHES	8

static unsigned long nr_jobs = 100000;
static unsigned int nr_workers = 2, batch = 256;
static int job_file;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* ---- iopa setup shared by the ioctl and uring paths ------------------- */

struct iopa_run {
	int ctx, sub;
	int wfd[64];
	atomic_bool stop;
	pthread_t thr[64];
};

static void iopa_setup(struct iopa_run *r)
{
	struct iopa_submitter_create sc = { .limit = 64 };
	struct iopa_worker_create wc = { 0 };
	unsigned int i;

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

/* Submit nr_jobs by ioctl in batches, reaping as it goes; returns seconds. */
static double ioctl_submitter(struct iopa_run *r)
{
	struct iopa_job *jobs = calloc(batch, sizeof(*jobs));
	struct iopa_cqe *cqes = calloc(batch, sizeof(*cqes));
	unsigned long sent = 0, reaped = 0;
	double t0 = now_s();
	unsigned int i;

	for (i = 0; i < batch; i++)
		jobs[i].fd = job_file;
	while (reaped < nr_jobs) {
		if (sent < nr_jobs) {
			struct iopa_submit s = {
				.jobs = (uintptr_t)jobs,
				.nr = nr_jobs - sent < batch ? nr_jobs - sent : batch,
			};
			int n = ioctl(r->sub, IOPA_IOC_SUBMIT, &s);

			if (n > 0)
				sent += n;
			else if (errno != EAGAIN)
				die("SUBMIT");
		}
		struct iopa_reap rp = {
			.cqes = (uintptr_t)cqes, .nr = batch,
			.flags = sent == nr_jobs || sent - reaped >= 4 * batch ?
				 IOPA_REAP_F_WAIT : 0,
		};
		int n = ioctl(r->sub, IOPA_IOC_REAP, &rp);

		if (n > 0)
			reaped += n;
		else if (errno != EAGAIN && errno != ETIMEDOUT)
			die("REAP");
	}
	free(jobs);
	free(cqes);
	return now_s() - t0;
}

/* ---- ioctl workers ------------------------------------------------------ */

struct wctx {
	struct iopa_run *r;
	int fd;
};

static void *ioctl_worker(void *arg)
{
	struct wctx *wc = arg;
	struct iopa_fetch f = { .timeout_ns = 20000000 };
	bool have = false;

	while (!atomic_load(&wc->r->stop)) {
		unsigned long cmd = have ? IOPA_IOC_COMPLETE_AND_FETCH :
					   IOPA_IOC_FETCH;

		if (have) {
			f.done.job_id = f.work.job_id;
			f.done.res = 0;
		} else {
			memset(&f.done, 0, sizeof(f.done));
		}
		if (ioctl(wc->fd, cmd, &f) == 0) {
			close(f.work.fd);
			have = true;
			continue;
		}
		if (errno != ETIMEDOUT && errno != EINTR)
			die("FETCH");
		/* The completion (if any) took effect; fetch afresh. */
		have = false;
	}
	return NULL;
}

static double run_ioctl(void)
{
	struct wctx wc[64];
	struct iopa_run r;
	unsigned int i;
	double secs;

	iopa_setup(&r);
	for (i = 0; i < nr_workers; i++) {
		wc[i].r = &r;
		wc[i].fd = r.wfd[i];
		pthread_create(&r.thr[i], NULL, ioctl_worker, &wc[i]);
	}
	secs = ioctl_submitter(&r);
	iopa_teardown(&r);
	return secs;
}

/* ---- io_uring ----------------------------------------------------------- */

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

static void *uring_worker(void *arg)
{
	struct wctx *wc = arg;
	struct iopa_work work[RING_FETCHES];
	struct io_uring ring;
	unsigned int i, parked = RING_FETCHES;

	if (io_uring_queue_init(2 * RING_FETCHES, &ring, 0))
		die("worker ring");
	for (i = 0; i < RING_FETCHES; i++) {
		struct iopa_uring_fetch f = { .work = (uintptr_t)&work[i] };

		prep_cmd(io_uring_get_sqe(&ring), 64, wc->fd,
			 IOPA_URING_CMD_FETCH, &f, sizeof(f), i);
	}
	io_uring_submit(&ring);
	while (!atomic_load(&wc->r->stop) || parked < RING_FETCHES) {
		struct __kernel_timespec ts = { .tv_nsec = 20000000 };
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;

		if (atomic_load(&wc->r->stop))
			break;	/* the ring's exit cancels what is parked */
		if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			continue;
		io_uring_for_each_cqe(&ring, head, cqe) {
			unsigned int k = cqe->user_data;

			seen++;
			if (cqe->res < 0)
				continue;	/* cancelled */
			close(work[k].fd);
			struct iopa_uring_fetch f = {
				.work = (uintptr_t)&work[k], .res = 0,
			};
			prep_cmd(io_uring_get_sqe(&ring), 64, wc->fd,
				 IOPA_URING_CMD_COMMIT_AND_FETCH, &f, sizeof(f),
				 k);
		}
		io_uring_cq_advance(&ring, seen);
		io_uring_submit(&ring);
	}
	io_uring_queue_exit(&ring);
	return NULL;
}

static double uring_submitter(struct iopa_run *r)
{
	unsigned long sent = 0, done = 0;
	struct io_uring ring;
	double t0;

	if (io_uring_queue_init(2 * batch, &ring, IORING_SETUP_SQE128))
		die("submitter ring");
	t0 = now_s();
	while (done < nr_jobs) {
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;

		while (sent < nr_jobs && sent - done < batch) {
			struct iopa_job j = { .fd = job_file, .user_data = sent };
			struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

			if (!sqe)
				break;
			prep_cmd(sqe, 128, r->sub, IOPA_URING_CMD_SUBMIT, &j,
				 sizeof(j), sent);
			sent++;
		}
		io_uring_submit_and_wait(&ring, 1);
		io_uring_for_each_cqe(&ring, head, cqe) {
			if (cqe->res < 0) {
				fprintf(stderr, "uring job: %s\n",
					strerror(-cqe->res));
				exit(1);
			}
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		done += seen;
	}
	t0 = now_s() - t0;
	io_uring_queue_exit(&ring);
	return t0;
}

static double run_uring(void)
{
	struct wctx wc[64];
	struct iopa_run r;
	unsigned int i;
	double secs;

	iopa_setup(&r);
	for (i = 0; i < nr_workers; i++) {
		wc[i].r = &r;
		wc[i].fd = r.wfd[i];
		pthread_create(&r.thr[i], NULL, uring_worker, &wc[i]);
	}
	secs = uring_submitter(&r);
	iopa_teardown(&r);
	return secs;
}

/* ---- the pthread reference pool ----------------------------------------- */

static pthread_mutex_t pq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pq_work = PTHREAD_COND_INITIALIZER;
static pthread_cond_t pq_done = PTHREAD_COND_INITIALIZER;
static unsigned long pq_queued, pq_taken, pq_completed;
static bool pq_stop;

static void *pool_worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&pq_lock);
	for (;;) {
		while (pq_taken == pq_queued && !pq_stop)
			pthread_cond_wait(&pq_work, &pq_lock);
		if (pq_stop)
			break;
		pq_taken++;
		pthread_mutex_unlock(&pq_lock);
		/* the empty job */
		pthread_mutex_lock(&pq_lock);
		pq_completed++;
		pthread_cond_signal(&pq_done);
	}
	pthread_mutex_unlock(&pq_lock);
	return NULL;
}

static double run_pthread(void)
{
	pthread_t thr[64];
	unsigned long sent = 0;
	unsigned int i;
	double t0;

	pq_queued = pq_taken = pq_completed = 0;
	pq_stop = false;
	for (i = 0; i < nr_workers; i++)
		pthread_create(&thr[i], NULL, pool_worker, NULL);
	t0 = now_s();
	pthread_mutex_lock(&pq_lock);
	while (pq_completed < nr_jobs) {
		if (sent < nr_jobs && sent - pq_completed < 4 * batch) {
			unsigned long n = nr_jobs - sent < batch ?
					  nr_jobs - sent : batch;

			pq_queued += n;
			sent += n;
			pthread_cond_broadcast(&pq_work);
			continue;
		}
		pthread_cond_wait(&pq_done, &pq_lock);
	}
	t0 = now_s() - t0;
	pq_stop = true;
	pthread_cond_broadcast(&pq_work);
	pthread_mutex_unlock(&pq_lock);
	for (i = 0; i < nr_workers; i++)
		pthread_join(thr[i], NULL);
	return t0;
}

int main(int argc, char **argv)
{
	double t_ioctl, t_uring, t_pthread, r_pthread;
	struct iopa_features f;
	int ctx, opt;

	while ((opt = getopt(argc, argv, "n:w:b:")) != -1) {
		switch (opt) {
		case 'n':
			nr_jobs = strtoul(optarg, NULL, 0);
			break;
		case 'w':
			nr_workers = strtoul(optarg, NULL, 0);
			break;
		case 'b':
			batch = strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-n JOBS] [-w WORKERS] [-b BATCH]\n",
				argv[0]);
			return 2;
		}
	}
	if (!nr_jobs || !nr_workers || nr_workers > 64 || !batch ||
	    batch > IOPA_BATCH_MAX) {
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
	printf("# %lu empty jobs, %u workers, batches of %u\n", nr_jobs,
	       nr_workers, batch);
	t_pthread = run_pthread();
	t_ioctl = run_ioctl();
	t_uring = run_uring();
	r_pthread = nr_jobs / t_pthread;
	printf("bench dispatch path=ioctl jobs_per_s=%.0f ratio_to_pthread=%.3f\n",
	       nr_jobs / t_ioctl, nr_jobs / t_ioctl / r_pthread);
	printf("bench dispatch path=uring jobs_per_s=%.0f ratio_to_pthread=%.3f\n",
	       nr_jobs / t_uring, nr_jobs / t_uring / r_pthread);
	printf("bench dispatch path=pthread jobs_per_s=%.0f ratio_to_pthread=%.3f\n",
	       r_pthread, 1.0);
	return 0;
}
