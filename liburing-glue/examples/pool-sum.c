// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * pool-sum: a 64-bit FNV-1a checksum of each file named on the command
 * line, computed by a libiopa worker pool, printed in the order given.
 *
 *   pool-sum FILE...
 *
 * The pattern of a service on iopa: open the files, submit one job each,
 * let the kernel decide how many run at once, wait, print.  The jobs lend
 * their fds (IOPA_JOB_F_BORROW, IOPA_POOL_F_BORROW): the files stay open
 * until iopa_pool_wait() has returned, and the pool's threads read them
 * through the same fds.  The worker function does its I/O itself, in the
 * pool thread that runs it: that is the I/O the kernel measures for the
 * job.  Results land in an array indexed by user_data, so the output
 * follows the command line whatever order the jobs end in; what the
 * function writes there is visible to the thread that returns from
 * iopa_pool_wait() (the completion passes through the kernel).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiopa.h>

struct result {
	uint64_t sum;
	int res;	/* 0, or -errno */
};

static struct result *results;

/* Runs in a pool thread, once per job. */
static int sum_file(void *arg, const struct iopa_work *w)
{
	uint64_t h = 14695981039346656037ULL;
	unsigned char buf[65536];
	off_t off = 0;
	ssize_t n, i;

	(void)arg;
	while ((n = pread(w->fd, buf, sizeof(buf), off)) > 0) {
		for (i = 0; i < n; i++)
			h = (h ^ buf[i]) * 1099511628211ULL;
		off += n;
	}
	if (n < 0)
		return -errno;
	results[w->user_data].sum = h;
	return 0;
}

/* Each completion, in the thread that waits: a failed job's errno. */
static void job_done(void *arg, const struct iopa_cqe *cqe)
{
	(void)arg;
	if (cqe->res < 0)
		results[cqe->user_data].res = cqe->res;
}

int main(int argc, char **argv)
{
	struct iopa_pool_opts o = {
		.flags = IOPA_POOL_F_BORROW,
		.done = job_done,
	};
	struct iopa_job *jobs;
	struct iopa_pool *pool;
	int i, n = 0, r, done, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	jobs = calloc(argc, sizeof(*jobs));
	results = calloc(argc, sizeof(*results));
	if (!jobs || !results)
		return 1;
	r = iopa_pool_init(&pool, -1, &o);
	if (r == 0)
		r = iopa_pool_create_threads(pool, sum_file, NULL);
	if (r) {
		fprintf(stderr, "iopa pool: %s\n", strerror(-r));
		return 1;
	}
	for (i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			results[i].res = -errno;
			continue;
		}
		jobs[n].fd = fd;
		jobs[n].flags = IOPA_JOB_F_BORROW;
		jobs[n].user_data = i;
		n++;
	}
	/* A submit may take fewer than asked (a full queue): go on. */
	for (done = 0; done < n; done += r) {
		r = iopa_pool_submit(pool, jobs + done, n - done);
		if (r < 0) {
			fprintf(stderr, "iopa_pool_submit: %s\n", strerror(-r));
			for (i = done; i < n; i++)
				results[jobs[i].user_data].res = r;
			break;
		}
	}
	/* Returns how many jobs failed (job_done() saw them), or -errno. */
	r = iopa_pool_wait(pool);
	if (r < 0)
		fprintf(stderr, "iopa_pool_wait: %s\n", strerror(-r));
	for (i = 0; i < n; i++)
		close(jobs[i].fd);
	iopa_pool_close(pool);
	for (i = 1; i < argc; i++) {
		if (results[i].res) {
			fprintf(stderr, "%s: %s\n", argv[i],
				strerror(-results[i].res));
			bad = 1;
			continue;
		}
		printf("%016" PRIx64 "  %s\n", results[i].sum, argv[i]);
	}
	free(jobs);
	free(results);
	return bad || r < 0 ? 1 : 0;
}
