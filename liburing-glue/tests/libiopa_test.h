/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * Shared helpers of libiopa's guest tests.  Blocking waits are always
 * bounded: a broken module or pool makes a test fail, never hang.
 *
 * Include this file first (it defines _GNU_SOURCE).
 */
#ifndef LIBIOPA_TEST_H
#define LIBIOPA_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libiopa.h>

/* The 6.12 harness is not -Wextra clean (unused handler argument). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"

#define T_MS_NS(ms)	((uint64_t)(ms) * 1000000ULL)
/* Upper bound for anything that should happen "soon". */
#define T_LONG_MS	10000
#define T_SYSFS		"/sys/class/misc/iopa"

static inline int64_t t_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline void t_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Poll @cond (an expression) every 5 ms for at most @ms milliseconds;
 * evaluates to true if it became true.
 */
#define T_WAIT_UNTIL(cond, ms) ({					\
	int64_t __deadline = t_now_ms() + (ms);				\
	bool __ok;							\
	while (!(__ok = (cond)) && t_now_ms() < __deadline)		\
		t_sleep_ms(5);						\
	__ok;								\
})

/*
 * A job file in /tmp (tmpfs in the guest), @size bytes, unlinked at
 * once.  Returns an O_RDWR fd or -errno.
 */
static inline int t_job_file(size_t size)
{
	char path[] = "/tmp/libiopa-test-XXXXXX";
	int fd = mkstemp(path);

	if (fd < 0)
		return -errno;
	unlink(path);
	if (ftruncate(fd, (off_t)size)) {
		int e = -errno;

		close(fd);
		return e;
	}
	return fd;
}

/* Open file descriptors of this process. */
static inline int t_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own fd */
}

static inline int t_sysfs_read(const char *name, unsigned long *val)
{
	char path[128], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), T_SYSFS "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = 0;
	*val = strtoul(buf, NULL, 10);
	return 0;
}

static inline int t_sysfs_write(const char *name, unsigned long val)
{
	char path[128], buf[32];
	int fd, n, r = 0;

	snprintf(path, sizeof(path), T_SYSFS "/%s", name);
	n = snprintf(buf, sizeof(buf), "%lu\n", val);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, n) != n)
		r = -errno;
	close(fd);
	return r;
}

/* The context's live workers and workers waiting in FETCH. */
static inline int t_ctx_workers(int ctx, unsigned int *waiting)
{
	struct iopa_stats st;
	int r = iopa_get_stats(ctx, &st);

	if (r < 0)
		return r;
	if (waiting)
		*waiting = st.nr_waiting;
	return (int)st.nr_workers;
}

static inline int t_ctx_waiting(int ctx)
{
	unsigned int w = 0;
	int r = t_ctx_workers(ctx, &w);

	return r < 0 ? r : (int)w;
}

#endif /* LIBIOPA_TEST_H */
