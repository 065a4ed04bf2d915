// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-bench-hold: keep a device group alive on a device, idle, for
 * `make bench-hostcost` (tools/bench/hostcost.sh).
 *
 *   iopa-bench-hold FILE
 *
 * Opens FILE with O_DIRECT (a file on the device, or the device itself),
 * creates an adaptive submitter with the bracket policy and one worker
 * thread, and runs 4 KiB reads of FILE as jobs until GET_STATE says the
 * submitter shares its device's budget (it joined the device group, so
 * the module counts the device's block-layer traffic).  Then it stops
 * submitting, prints "hold: grouped dev=MAJ:MIN" and waits, its
 * submitter open and idle (the group stays), until SIGTERM or SIGINT.
 * Exit status 0, or 1 with a message (no module, not grouped in 30 s).
 *
 * A plain loop of its own rather than libiopa's pool: the bench images
 * are static and carry no libiopa, and this needs one worker and one
 * GET_STATE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/iopa.h>

#define BLOCK	4096

static atomic_int stop;
static int file_fd;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static void *worker(void *arg)
{
	int wfd = (int)(long)arg;
	struct iopa_fetch f;
	void *buf;

	if (posix_memalign(&buf, BLOCK, BLOCK))
		return NULL;
	memset(&f, 0, sizeof(f));
	f.timeout_ns = 100 * 1000 * 1000ULL;
	while (!atomic_load(&stop)) {
		ssize_t n;
		int r;

		r = ioctl(wfd, f.done.job_id ? IOPA_IOC_COMPLETE_AND_FETCH :
			  IOPA_IOC_FETCH, &f);
		f.done.job_id = 0;
		if (r < 0) {
			if (errno == ETIMEDOUT || errno == EINTR)
				continue;
			perror("hold: fetch");
			break;
		}
		n = pread(f.work.fd, buf, BLOCK, (off_t)f.work.offset);
		close(f.work.fd);
		f.done.job_id = f.work.job_id;
		f.done.res = n == BLOCK ? 0 : -EIO;
	}
	if (f.done.job_id)
		ioctl(wfd, IOPA_IOC_COMPLETE, &f.done);
	free(buf);
	return NULL;
}

/* Reap what completed, waiting up to 100 ms for the first. */
static void reap(int sub)
{
	struct iopa_cqe cqes[64];
	struct iopa_reap rp = {
		.cqes = (uintptr_t)cqes, .nr = 64, .flags = IOPA_REAP_F_WAIT,
		.timeout_ns = 100 * 1000 * 1000ULL,
	};

	ioctl(sub, IOPA_IOC_REAP, &rp);
}

int main(int argc, char **argv)
{
	struct iopa_worker_create wc = { 0 };
	struct iopa_submitter_create sc = { 0 };
	struct iopa_adapt a = { .policy = IOPA_POLICY_BRACKET };
	uint64_t nr_blocks, next = 0;
	struct iopa_state st;
	struct timespec t0, t;
	int ctx, sub, wfd, i;
	struct stat sb;
	pthread_t th;

	if (argc != 2) {
		fprintf(stderr, "usage: iopa-bench-hold FILE\n");
		return 1;
	}
	file_fd = open(argv[1], O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (file_fd < 0 || fstat(file_fd, &sb)) {
		perror(argv[1]);
		return 1;
	}
	nr_blocks = S_ISBLK(sb.st_mode) ? 256ULL * 256 :
		    (uint64_t)sb.st_size / BLOCK;
	if (!nr_blocks) {
		fprintf(stderr, "hold: %s: empty\n", argv[1]);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	ctx = open("/dev/iopa", O_RDWR | O_CLOEXEC);
	if (ctx < 0) {
		perror("/dev/iopa");
		return 1;
	}
	sub = ioctl(ctx, IOPA_IOC_SUBMITTER_CREATE, &sc);
	wfd = ioctl(ctx, IOPA_IOC_WORKER_CREATE, &wc);
	if (sub < 0 || wfd < 0 || ioctl(sub, IOPA_IOC_SET_ADAPT, &a)) {
		perror("hold: submitter, worker, SET_ADAPT");
		return 1;
	}
	if (pthread_create(&th, NULL, worker, (void *)(long)wfd)) {
		fprintf(stderr, "hold: pthread_create failed\n");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct iopa_job jobs[8];
		struct iopa_submit s = {
			.jobs = (uintptr_t)jobs, .nr = 8,
		};

		memset(jobs, 0, sizeof(jobs));
		for (i = 0; i < 8; i++) {
			jobs[i].fd = file_fd;
			jobs[i].offset = (next++ % nr_blocks) * BLOCK;
			jobs[i].len = BLOCK;
		}
		if (ioctl(sub, IOPA_IOC_SUBMIT, &s) < 0 && errno != EAGAIN) {
			perror("hold: submit");
			return 1;
		}
		reap(sub);
		if (!ioctl(sub, IOPA_IOC_GET_STATE, &st) && st.sharers)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 30 || atomic_load(&stop)) {
			fprintf(stderr, "hold: not grouped after 30 s\n");
			return 1;
		}
	}
	/* Drain what is queued, then idle: the group stays while we do. */
	while (!ioctl(sub, IOPA_IOC_GET_STATE, &st) &&
	       (st.pending || st.inflight))
		reap(sub);
	printf("hold: grouped dev=%u:%u\n",
	       S_ISBLK(sb.st_mode) ? major(sb.st_rdev) : major(sb.st_dev),
	       S_ISBLK(sb.st_mode) ? minor(sb.st_rdev) : minor(sb.st_dev));
	fflush(stdout);
	while (!atomic_load(&stop))
		pause();
	pthread_join(th, NULL);
	return 0;
}
