// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Host test of libiopa's error paths, no iopa module needed: every
 * wrapper returns -errno (not -1) on a bad fd, on a file that is not an
 * iopa fd, on NULL out-pointers; iopa_fetch() leaves fd -1 in the work it
 * could not fetch; the pool refuses bad options and non-iopa fds.  If
 * this machine happens to have /dev/iopa, the tests that need it absent
 * are skipped.
 *
 * Built twice: against libiopa.so (wrappers) and libiopa.a
 * (wrappers-static).  Exit status: 0 pass, 1 fail.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <libiopa.h>

static int failures, checks;

#define EXPECT_ERR(want, call) do {					\
	int __r;							\
	errno = 0;							\
	__r = (call);							\
	checks++;							\
	if (__r != (want)) {						\
		failures++;						\
		printf("not ok: %s:%d: %s = %d (%s), want %d (%s)\n",	\
		       __FILE__, __LINE__, #call, __r,			\
		       __r < 0 ? strerror(-__r) : "-", (want),		\
		       strerror(-(want)));				\
	}								\
} while (0)

#define CHECK(cond) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		printf("not ok: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
	}								\
} while (0)

static void each_wrapper(int fd, int want)
{
	struct iopa_features feat;
	struct iopa_stats st;
	struct iopa_state state;
	struct iopa_job job;
	struct iopa_cqe cqe;
	struct iopa_work work;
	unsigned int flags = 12345, total = 54321;

	memset(&job, 0, sizeof(job));
	EXPECT_ERR(want, iopa_get_features(fd, &feat));
	EXPECT_ERR(want, iopa_list_submitters(fd, NULL, 0, 0, &total));
	CHECK(total == 54321);	/* untouched on failure */
	EXPECT_ERR(want, iopa_submitter_create(fd, 0, 0));
	EXPECT_ERR(want, iopa_worker_create(fd, 0));
	EXPECT_ERR(want, iopa_get_stats(fd, &st));
	EXPECT_ERR(want, iopa_submit(fd, &job, 1, 0));
	EXPECT_ERR(want, iopa_reap(fd, &cqe, 1, 0, 0));
	EXPECT_ERR(want, iopa_cancel(fd, 1, 0));
	EXPECT_ERR(want, iopa_set_limit(fd, 4));
	EXPECT_ERR(want, iopa_get_limit(fd, &flags));
	CHECK(flags == 12345);	/* untouched on failure */
	EXPECT_ERR(want, iopa_set_adapt(fd, IOPA_POLICY_KEEP, 0, 0));
	EXPECT_ERR(want, iopa_get_state(fd, &state));
	memset(&work, 0x5a, sizeof(work));
	EXPECT_ERR(want, iopa_fetch(fd, &work, 0, 0));
	CHECK(work.fd == -1);
	EXPECT_ERR(want, iopa_complete(fd, 1, 0));
	memset(&work, 0x5a, sizeof(work));
	EXPECT_ERR(want, iopa_complete_and_fetch(fd, 1, 0, &work, 0, 0));
	CHECK(work.fd == -1);
	EXPECT_ERR(want, iopa_worker_set_files(fd, NULL, 0));
	{
		struct iopa_sub_admin a;

		memset(&a, 0, sizeof(a));
		a.op = IOPA_ADMIN_SET_LIMIT;
		EXPECT_ERR(want, iopa_sub_admin(fd, &a));
	}
	flags = 777;
	EXPECT_ERR(want, iopa_work_batch(fd, NULL, 0, &work, 1, 0, 0, &flags));
	CHECK(flags == 0);	/* the count the (failed) call left: none */
}

static void test_pool_errors(int have_dev)
{
	struct iopa_pool_opts o;
	struct iopa_pool *p = (struct iopa_pool *)&o;
	int nul = open("/dev/null", O_RDWR | O_CLOEXEC);

	EXPECT_ERR(-EINVAL, iopa_pool_init(NULL, -1, NULL));
	memset(&o, 0, sizeof(o));
	o.flags = IOPA_POOL_F_MASK << 1;
	EXPECT_ERR(-EINVAL, iopa_pool_init(&p, -1, &o));
	CHECK(p == NULL);
	memset(&o, 0, sizeof(o));
	o.reserved[3] = 1;
	EXPECT_ERR(-EINVAL, iopa_pool_init(&p, -1, &o));
	memset(&o, 0, sizeof(o));
	o.limit = IOPA_LIMIT_MAX + 1;
	EXPECT_ERR(-EINVAL, iopa_pool_init(&p, -1, &o));
	/* A file that is not an iopa context. */
	EXPECT_ERR(-ENOTTY, iopa_pool_init(&p, nul, NULL));
	CHECK(p == NULL);
	/* An fd that is not open. */
	EXPECT_ERR(-EBADF, iopa_pool_init(&p, 1000, NULL));
	/* Both flags' combination with a context fd makes no sense. */
	o.limit = 0;
	o.flags = IOPA_POOL_F_INPROC;
	EXPECT_ERR(-EINVAL, iopa_pool_init(&p, nul, &o));
	o.flags = 0;
	/* No device: the pool runs in the process (tests/host/inproc.c). */
	if (!have_dev) {
		struct iopa_pool_info info;

		EXPECT_ERR(0, iopa_pool_init(&p, -1, NULL));
		CHECK(p && iopa_pool_get_info(p, &info) == 0 &&
		      (info.flags & IOPA_POOL_INFO_F_INPROC));
		EXPECT_ERR(0, iopa_pool_close(p));
	}

	EXPECT_ERR(-EINVAL, iopa_pool_create_threads(NULL, NULL, NULL));
	EXPECT_ERR(-EINVAL, iopa_pool_submit(NULL, NULL, 1));
	EXPECT_ERR(-EINVAL, iopa_pool_wait(NULL));
	EXPECT_ERR(-EINVAL, iopa_pool_close(NULL));
	EXPECT_ERR(-EINVAL, iopa_pool_ctx_fd(NULL));
	EXPECT_ERR(-EINVAL, iopa_pool_submitter_fd(NULL));
	EXPECT_ERR(-EINVAL, iopa_pool_get_info(NULL, NULL));
	close(nul);
}

int main(void)
{
	int have_dev = access(LIBIOPA_DEV_PATH, F_OK) == 0;
	int nul, pfd[2];

	if (!have_dev)
		EXPECT_ERR(-ENOENT, iopa_open());
	else
		printf("# %s exists: not checking iopa_open() -ENOENT\n",
		       LIBIOPA_DEV_PATH);

	/* Not open: EBADF from every wrapper. */
	each_wrapper(-1, -EBADF);
	/* Open, but not an iopa fd: the ioctl is unknown there, ENOTTY. */
	nul = open("/dev/null", O_RDWR | O_CLOEXEC);
	CHECK(nul >= 0);
	each_wrapper(nul, -ENOTTY);
	CHECK(pipe2(pfd, O_CLOEXEC) == 0);
	each_wrapper(pfd[0], -ENOTTY);
	close(pfd[0]);
	close(pfd[1]);
	close(nul);

	/* NULL out-pointers are refused before any system call. */
	EXPECT_ERR(-EFAULT, iopa_get_features(0, NULL));
	EXPECT_ERR(-EFAULT, iopa_get_stats(0, NULL));
	EXPECT_ERR(-EFAULT, iopa_get_state(0, NULL));
	EXPECT_ERR(-EFAULT, iopa_fetch(0, NULL, 0, 0));
	EXPECT_ERR(-EFAULT, iopa_complete_and_fetch(0, 1, 0, NULL, 0, 0));

	test_pool_errors(have_dev);

	printf("wrappers: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
