// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * uring-sum: the sums of pool-sum, with io_uring on both sides.  The main
 * thread submits every file in one IOPA_URING_CMD_SUBMIT_MANY and reaps
 * the completions with IOPA_URING_CMD_REAP; two worker threads each keep
 * one IOPA_URING_CMD_WORK_BATCH on their own ring, which completes the
 * jobs the thread worked on and takes the next ones.  Rings are set up
 * with SINGLE_ISSUER and DEFER_TASKRUN: each is used by one thread, and
 * the kernel's task work (the hand-over of jobs, the copy of completions)
 * runs when that thread waits for its CQEs.
 *
 *   uring-sum FILE...
 *
 * Needs IOPA_FEAT_BATCH and IOPA_FEAT_URING_BATCH.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiopa.h>

#define RING_FLAGS	(IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN)
#define NR_WORKERS	2
#define BATCH		8

static int ctx_fd;
static atomic_bool stop;

/* The ring's next SQE; there is room (one command in flight per ring). */
static struct io_uring_sqe *sqe_of(struct io_uring *ring)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe) {
		fprintf(stderr, "no SQE\n");
		exit(1);
	}
	return sqe;
}

/* The sum of the job's whole file, as pool-sum's (FNV-1a 64, folded). */
static int32_t work_on(const struct iopa_work *w)
{
	uint64_t h = 14695981039346656037ULL;
	unsigned char buf[65536];
	off_t off = 0;
	ssize_t n, i;

	while ((n = pread(w->fd, buf, sizeof(buf), off)) > 0) {
		for (i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
		off += n;
	}
	if (n < 0)
		return -errno;
	return (int32_t)((h ^ (h >> 32)) & 0x7fffffff);
}

static void *worker(void *arg)
{
	struct iopa_work work[BATCH];
	struct iopa_done done[BATCH];
	struct iopa_batch b;
	struct io_uring ring;
	int wfd, i;

	(void)arg;
	wfd = iopa_worker_create(ctx_fd, 0);
	if (wfd < 0 || io_uring_queue_init(4, &ring, RING_FLAGS))
		return (void *)1;
	memset(&b, 0, sizeof(b));
	b.work = (uintptr_t)work;
	b.nr_work = BATCH;
	b.done = (uintptr_t)done;
	iopa_prep_work_batch(sqe_of(&ring), wfd, &b);
	io_uring_submit(&ring);
	while (!atomic_load(&stop)) {
		struct __kernel_timespec ts = { .tv_nsec = 100000000 };
		struct io_uring_cqe *cqe;
		int n;

		if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			continue;
		n = cqe->res;
		io_uring_cqe_seen(&ring, cqe);
		if (n < 0)
			break;
		/* The command is done: its arrays are ours again. */
		for (i = 0; i < n; i++) {
			memset(&done[i], 0, sizeof(done[i]));
			done[i].job_id = work[i].job_id;
			done[i].res = work_on(&work[i]);
			close(work[i].fd);
		}
		b.nr_done = n;
		iopa_prep_work_batch(sqe_of(&ring), wfd, &b);
		io_uring_submit(&ring);
	}
	/* The ring's exit cancels the parked command; it holds no job. */
	io_uring_queue_exit(&ring);
	close(wfd);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t thr[NR_WORKERS];
	struct iopa_features f;
	struct iopa_job *jobs;
	struct iopa_cqe *cqes;
	struct io_uring ring;
	int32_t *res;
	int sub, i, n = 0, got = 0, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	ctx_fd = iopa_open();
	if (ctx_fd < 0) {
		fprintf(stderr, "%s: %s (this example needs the iopa module)\n",
			LIBIOPA_DEV_PATH, strerror(-ctx_fd));
		return 1;
	}
	if (iopa_get_features(ctx_fd, &f) < 0 ||
	    !(f.features & IOPA_FEAT_BATCH) ||
	    !(f.features & IOPA_FEAT_URING_BATCH)) {
		fprintf(stderr, "needs the iopa module with IOPA_FEAT_BATCH and IOPA_FEAT_URING_BATCH\n");
		return 1;
	}
	sub = iopa_submitter_create(ctx_fd, 0, 0);
	jobs = calloc(argc, sizeof(*jobs));
	cqes = calloc(argc, sizeof(*cqes));
	res = calloc(argc, sizeof(*res));
	if (sub < 0 || !jobs || !cqes || !res ||
	    io_uring_queue_init(4, &ring, RING_FLAGS))
		return 1;
	for (i = 0; i < NR_WORKERS; i++)
		pthread_create(&thr[i], NULL, worker, NULL);
	for (i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			res[i] = -errno;
			continue;
		}
		jobs[n].fd = fd;
		jobs[n].user_data = i;
		n++;
	}
	/* One SQE for all the jobs (at most IOPA_BATCH_MAX per command). */
	if (n) {
		struct io_uring_cqe *cqe;

		iopa_prep_submit_many(sqe_of(&ring), sub, jobs, n);
		io_uring_submit_and_wait(&ring, 1);
		if (io_uring_peek_cqe(&ring, &cqe) || cqe->res != n) {
			fprintf(stderr, "SUBMIT_MANY: not all accepted\n");
			return 1;
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	for (i = 0; i < n; i++)
		close(jobs[i].fd);	/* the kernel has its own references */
	while (got < n) {
		struct io_uring_cqe *cqe;
		int k;

		/* At least one completion, up to all that are left. */
		iopa_prep_reap(sqe_of(&ring), sub, cqes, n - got, 1);
		io_uring_submit_and_wait(&ring, 1);
		if (io_uring_peek_cqe(&ring, &cqe) || cqe->res < 0) {
			fprintf(stderr, "REAP failed\n");
			return 1;
		}
		for (k = 0; k < cqe->res; k++)
			res[cqes[k].user_data] = cqes[k].res;
		got += cqe->res;
		io_uring_cqe_seen(&ring, cqe);
	}
	atomic_store(&stop, true);
	for (i = 0; i < NR_WORKERS; i++)
		pthread_join(thr[i], NULL);
	io_uring_queue_exit(&ring);
	close(sub);
	close(ctx_fd);
	for (i = 1; i < argc; i++) {
		if (res[i] < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-res[i]));
			bad = 1;
		} else {
			printf("%08" PRIx32 "  %s\n", (uint32_t)res[i], argv[i]);
		}
	}
	return bad;
}
