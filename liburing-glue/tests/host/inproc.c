// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The libiopa worker pool without the module (IOPA_POOL_F_INPROC, or no
 * /dev/iopa): a host test, kselftest harness, nothing of the kernel's.
 *
 * The pool's contract as with the module: every job's completion
 * reaches done once, with the user function's result and the job's
 * user_data; the function gets its own fd of the job's file (closed by
 * the pool) or, lent, the application's; the limit binds; a full queue,
 * and a process out of fds, make iopa_pool_submit() reap rather than
 * fail; close ends the threads and closes what never ran.  And the
 * limit adapts: up for jobs that overlap, not up for jobs that
 * serialise on one resource.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libiopa.h>

/* The 6.12 harness is not -Wextra clean (unused handler argument). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
#pragma GCC diagnostic ignored "-Wclobbered"

#define NJOBS	512

struct tb {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int gate;		/* fn waits until this many run */
	bool serial;			/* fn holds one shared lock while it works */
	pthread_mutex_t serial_lock;
	unsigned int work_us;		/* fn's work: this long (sleep) */
	bool read_all;			/* fn reads the job's file through */
	atomic_int running, max_running, calls;
	atomic_int fd_bad, lent, lent_wrong, same_file_wrong;
	int lent_fd;
	struct stat file_st;		/* the job file's identity */
	/* done */
	atomic_int done_calls;
	atomic_int dup_done;
	int res[NJOBS * 16];
	unsigned char seen[NJOBS * 16];
};

static void tb_init(struct tb *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	pthread_mutex_init(&t->serial_lock, NULL);
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (long)(us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static int job_fn(void *arg, const struct iopa_work *w)
{
	struct tb *t = arg;
	int now = atomic_fetch_add(&t->running, 1) + 1;
	int max = atomic_load(&t->max_running);
	struct stat st;

	while (now > max &&
	       !atomic_compare_exchange_weak(&t->max_running, &max, now))
		;
	atomic_fetch_add(&t->calls, 1);
	if (fstat(w->fd, &st) < 0)
		atomic_fetch_add(&t->fd_bad, 1);
	else if (st.st_ino != t->file_st.st_ino ||
		 st.st_dev != t->file_st.st_dev)
		atomic_fetch_add(&t->same_file_wrong, 1);
	if (w->flags & IOPA_WORK_F_BORROWED) {
		atomic_fetch_add(&t->lent, 1);
		if (w->fd != t->lent_fd)
			atomic_fetch_add(&t->lent_wrong, 1);
	}
	if (t->gate) {
		/* Hold until `gate` jobs run at once (or give up after 10 s). */
		struct timespec dl;

		clock_gettime(CLOCK_REALTIME, &dl);
		dl.tv_sec += 10;
		pthread_mutex_lock(&t->lock);
		pthread_cond_broadcast(&t->cond);
		while (atomic_load(&t->max_running) < (int)t->gate &&
		       pthread_cond_timedwait(&t->cond, &t->lock, &dl) == 0)
			;
		pthread_mutex_unlock(&t->lock);
	}
	if (t->read_all) {
		char buf[65536];
		off_t off = 0;
		ssize_t n;

		while ((n = pread(w->fd, buf, sizeof(buf), off)) > 0)
			off += n;
	}
	if (t->serial)
		pthread_mutex_lock(&t->serial_lock);
	if (t->work_us)
		sleep_us(t->work_us);
	if (t->serial)
		pthread_mutex_unlock(&t->serial_lock);
	atomic_fetch_sub(&t->running, 1);
	return (int)(w->user_data * 3);
}

static void done_fn(void *arg, const struct iopa_cqe *cqe)
{
	struct tb *t = arg;

	atomic_fetch_add(&t->done_calls, 1);
	if (cqe->user_data < NJOBS * 16) {
		if (t->seen[cqe->user_data]++)
			atomic_fetch_add(&t->dup_done, 1);
		t->res[cqe->user_data] = cqe->res;
	}
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the DIR's own */
}

/*
 * A gate on /proc/stat, the file the pool reads at a cycle's end: once
 * armed, the next open of it by a thread other than the test's waits in
 * open() until the gate is released.  (This open() takes the place of
 * libc's for the library too, as an executable's symbols do.)
 */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t test_thread;
	bool armed, held;
} stat_gate = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
};

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;

	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	if (!strcmp(path, "/proc/stat")) {
		pthread_mutex_lock(&stat_gate.lock);
		if (stat_gate.armed &&
		    !pthread_equal(pthread_self(), stat_gate.test_thread)) {
			stat_gate.armed = false;
			stat_gate.held = true;
			pthread_cond_broadcast(&stat_gate.cond);
			while (stat_gate.held)
				pthread_cond_wait(&stat_gate.cond,
						  &stat_gate.lock);
		}
		pthread_mutex_unlock(&stat_gate.lock);
	}
	return openat(AT_FDCWD, path, flags, mode);
}

/* Let the thread held in open() go on. */
static void stat_gate_release(void)
{
	pthread_mutex_lock(&stat_gate.lock);
	stat_gate.armed = false;
	stat_gate.held = false;
	pthread_cond_broadcast(&stat_gate.cond);
	pthread_mutex_unlock(&stat_gate.lock);
}

/* Released after 10 s unless the test's submit returned before. */
static atomic_bool stat_gate_submitted;

static void *stat_gate_watchdog(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 1000 && !atomic_load(&stat_gate_submitted); i++)
		sleep_us(10000);
	stat_gate_release();
	return NULL;
}

FIXTURE(inproc) {
	int file;
	struct iopa_pool *pool;
	struct iopa_pool_opts o;
	struct tb tb;
};

FIXTURE_SETUP(inproc)
{
	char path[] = "/tmp/iopa-inproc.XXXXXX";

	tb_init(&self->tb);
	self->pool = NULL;
	self->file = mkstemp(path);
	ASSERT_LE(0, self->file);
	unlink(path);
	ASSERT_EQ(0, fstat(self->file, &self->tb.file_st));
	memset(&self->o, 0, sizeof(self->o));
	/* No knee cache but the tests' own (knee_cache_*). */
	setenv("IOPA_KNEES_CACHE", "", 1);
	self->o.flags = IOPA_POOL_F_INPROC;
	self->o.done = done_fn;
	self->o.done_arg = &self->tb;
}

FIXTURE_TEARDOWN(inproc)
{
	if (self->pool)
		iopa_pool_close(self->pool);
	if (self->file >= 0)
		close(self->file);
}

/* Start the pool with the fixture's options. */
static int start(FIXTURE_DATA(inproc) *self)
{
	int r = iopa_pool_init(&self->pool, -1, &self->o);

	if (r == 0) {
		r = iopa_pool_create_threads(self->pool, job_fn, &self->tb);
		if (r < 0) {
			iopa_pool_close(self->pool);
			self->pool = NULL;
		}
	}
	return r;
}

/* Submit jobs [from, to) on the fixture's file; user_data = index. */
static int submit_range(FIXTURE_DATA(inproc) *self, unsigned int from,
			unsigned int to, unsigned int flags)
{
	while (from < to) {
		struct iopa_job j = {
			.fd = self->file, .flags = flags, .user_data = from,
		};
		int r = iopa_pool_submit(self->pool, &j, 1);

		if (r != 1)
			return r < 0 ? r : -EIO;
		from++;
	}
	return 0;
}

TEST_F(inproc, info_says_inproc_and_no_fds)
{
	struct iopa_pool_info info;

	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(IOPA_POOL_INFO_F_INPROC, info.flags & IOPA_POOL_INFO_F_INPROC);
	EXPECT_LE(1u, info.limit);
	EXPECT_EQ(-ENODEV, iopa_pool_ctx_fd(self->pool));
	EXPECT_EQ(-ENODEV, iopa_pool_submitter_fd(self->pool));
}

/*
 * The default max_threads without the module: the module's default
 * ceiling for adaptive limits (max_limit, 256) and the spare, as with the
 * module (its sysfs max_limit); not a CPU count.
 */
TEST_F(inproc, default_max_threads_is_the_modules_ceiling)
{
	struct iopa_pool_info info;
	struct rlimit rl;

	if (access("/sys/class/misc/iopa/max_limit", F_OK) == 0)
		SKIP(return, "this host has the module: its max_limit applies");
	/* room for 257 threads in the fd budget (fd_budget_*), if it can */
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 4096)
		SKIP(return, "RLIMIT_NOFILE's hard limit is below 4096");
	rl.rlim_cur = rl.rlim_max == RLIM_INFINITY ? 65536 : rl.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(257u, info.max_threads);
}

/* In a child under RLIMIT_NOFILE = fds open + 24: the steps, 0 or the failed one. */
static int fd_budget_child(FIXTURE_DATA(inproc) *self)
{
	struct iopa_pool_info info;
	struct rlimit rl;
	unsigned int i;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 10;
	rl.rlim_cur = (rlim_t)count_fds() + 24;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 11;
	/* iopa_fds_left(): 24 left, one fewer with one more open */
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (iopa_fds_left() != 23 || fd < 0)
		return 18;
	close(fd);
	if (iopa_fds_left() != 24)
		return 19;
	self->tb.work_us = 200;
	if (start(self))
		return 12;
	for (i = 0; i < 2000; i++) {
		struct iopa_job j = { .fd = self->file, .user_data = i };

		/* the application's next file: there is always an fd for it */
		fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 13;
		close(fd);
		if (iopa_pool_submit(self->pool, &j, 1) != 1)
			return 14;
	}
	if (iopa_pool_wait(self->pool))
		return 15;
	if (atomic_load(&self->tb.done_calls) != 2000 ||
	    atomic_load(&self->tb.fd_bad))
		return 16;
	if (iopa_pool_get_info(self->pool, &info) || info.max_threads > 24)
		return 17;
	return 0;
}

/*
 * The pool keeps within half of the fds the process may still open
 * (Integrators 2, item 2): under RLIMIT_NOFILE of the fds open + 24, two
 * thousand jobs run while the application opens a file before each
 * submission, and none of those opens fails.  Before, the jobs' dup()s
 * and the threads took every fd: iopa-sum under ulimit -n 64 printed no
 * checksum, each open failing with EMFILE.
 */
TEST_F_TIMEOUT(inproc, fd_budget_keeps_fds_for_the_application, 60)
{
	int status = -1;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(fd_budget_child(self));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("step %d failed (see fd_budget_child())",
		       WEXITSTATUS(status));
}

TEST_F(inproc, without_device_by_itself)
{
	struct iopa_pool_info info;

	if (access(LIBIOPA_DEV_PATH, F_OK) == 0)
		SKIP(return, "this host has " LIBIOPA_DEV_PATH);
	self->o.flags = 0;
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(IOPA_POOL_INFO_F_INPROC, info.flags);
	EXPECT_EQ((unsigned int)ENOENT, info.module_err);	/* why */
	ASSERT_EQ(0, submit_range(self, 0, 8, 0));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(8, atomic_load(&self->tb.done_calls));
}

/*
 * The module or nothing (IOPA_POOL_F_MODULE, libiopa 1.7): without it,
 * the error of opening it; not with IOPA_POOL_F_INPROC.  Asked to run in
 * the process, no error to tell (module_err 0).
 */
TEST_F(inproc, module_only_gets_the_error)
{
	struct iopa_pool_info info;

	if (access(LIBIOPA_DEV_PATH, F_OK) == 0)
		SKIP(return, "this host has " LIBIOPA_DEV_PATH);
	self->o.flags = IOPA_POOL_F_MODULE;
	EXPECT_EQ(-ENOENT, iopa_pool_init(&self->pool, -1, &self->o));
	EXPECT_EQ(NULL, self->pool);
	self->o.flags = IOPA_POOL_F_MODULE | IOPA_POOL_F_INPROC;
	EXPECT_EQ(-EINVAL, iopa_pool_init(&self->pool, -1, &self->o));
	self->o.flags = IOPA_POOL_F_INPROC;
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(0u, info.module_err);
}

TEST_F(inproc, inproc_with_ctx_fd_is_einval)
{
	EXPECT_EQ(-EINVAL, iopa_pool_init(&self->pool, self->file, &self->o));
	EXPECT_EQ(NULL, self->pool);
}

TEST_F(inproc, every_job_done_once_with_its_result)
{
	unsigned int i;

	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, NJOBS, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(NJOBS, atomic_load(&self->tb.calls));
	EXPECT_EQ(NJOBS, atomic_load(&self->tb.done_calls));
	EXPECT_EQ(0, atomic_load(&self->tb.dup_done));
	for (i = 0; i < NJOBS; i++)
		ASSERT_EQ((int)i * 3, self->tb.res[i]);
}

TEST_F(inproc, fn_gets_own_fd_of_the_file_closed_after)
{
	int before = count_fds();

	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 64, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(0, atomic_load(&self->tb.fd_bad));
	EXPECT_EQ(0, atomic_load(&self->tb.same_file_wrong));
	EXPECT_EQ(0, atomic_load(&self->tb.lent));
	iopa_pool_close(self->pool);
	self->pool = NULL;
	/* The pool's threads and their counters are gone too. */
	EXPECT_EQ(before, count_fds());
}

TEST_F(inproc, borrowed_fd_is_the_submitters)
{
	int before;

	self->o.flags |= IOPA_POOL_F_BORROW;
	/* one more thread at most (its I/O counter's fd), whatever the limit */
	self->o.max_threads = 2;
	self->tb.lent_fd = self->file;
	ASSERT_EQ(0, start(self));
	before = count_fds();
	ASSERT_EQ(0, submit_range(self, 0, 64, IOPA_JOB_F_BORROW));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(64, atomic_load(&self->tb.lent));
	EXPECT_EQ(0, atomic_load(&self->tb.lent_wrong));
	/* Not closed by the pool: still the file. */
	EXPECT_EQ(0, fcntl(self->file, F_GETFD) < 0);
	EXPECT_GE(before, count_fds() - 2);	/* threads may have come */
}

TEST_F(inproc, borrow_flag_without_pool_borrow_gets_a_dup)
{
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 16, IOPA_JOB_F_BORROW));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(0, atomic_load(&self->tb.lent));
	EXPECT_EQ(0, atomic_load(&self->tb.same_file_wrong));
}

TEST_F(inproc, pinned_limit_binds_and_is_reached)
{
	self->o.limit = 3;
	self->o.max_threads = 8;
	self->tb.gate = 3;
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 64, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(3, atomic_load(&self->tb.max_running));
	EXPECT_EQ(64, atomic_load(&self->tb.done_calls));
}

TEST_F(inproc, max_threads_caps_the_limit)
{
	struct iopa_pool_info info;

	self->o.max_threads = 2;
	self->tb.work_us = 1000;
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 200, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_GE(2, atomic_load(&self->tb.max_running));
	EXPECT_GE(2u, info.peak_threads);
	EXPECT_GE(2u, info.limit);
}

TEST_F(inproc, bad_jobs_refused)
{
	struct iopa_job j = { .fd = self->file };

	ASSERT_EQ(0, start(self));
	j.flags = 0x80;
	EXPECT_EQ(-EINVAL, iopa_pool_submit(self->pool, &j, 1));
	j.flags = 0;
	j.reserved = 1;
	EXPECT_EQ(-EINVAL, iopa_pool_submit(self->pool, &j, 1));
	j.reserved = 0;
	j.fd = -1;
	EXPECT_EQ(-EBADF, iopa_pool_submit(self->pool, &j, 1));
	j.fd = 1000000;
	EXPECT_EQ(-EBADF, iopa_pool_submit(self->pool, &j, 1));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(0, atomic_load(&self->tb.calls));
}

/* More jobs than the queue holds: submit reaps to make room. */
TEST_F(inproc, submit_reaps_when_the_queue_is_full)
{
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, NJOBS * 10, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(NJOBS * 10, atomic_load(&self->tb.done_calls));
	EXPECT_EQ(0, atomic_load(&self->tb.dup_done));
}

/* Out of fds for the jobs' copies: submit reaps, and all jobs run. */
TEST_F(inproc, submit_reaps_when_out_of_fds)
{
	struct rlimit old, rl;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	ASSERT_EQ(0, start(self));
	rl = old;
	rl.rlim_cur = count_fds() + 40;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	EXPECT_EQ(0, submit_range(self, 0, 400, 0));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	setrlimit(RLIMIT_NOFILE, &old);
	EXPECT_EQ(400, atomic_load(&self->tb.done_calls));
	EXPECT_EQ(0, atomic_load(&self->tb.fd_bad));
}

/* Close with jobs queued: they never run, their fds are closed. */
TEST_F(inproc, close_with_queued_jobs)
{
	int before = count_fds();

	self->o.limit = 1;
	self->o.max_threads = 1;
	self->tb.work_us = 20000;
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 100, 0));
	EXPECT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	EXPECT_GT(100, atomic_load(&self->tb.calls));
	EXPECT_EQ(before, count_fds());
}

/*
 * A pool belongs to the process that made it: in a child every call is
 * -ECHILD (it used to queue jobs for threads the child does not have, or
 * wait on locks a parent's thread held at the fork), close frees the
 * copy, and the parent's pool goes on (Core round 2, item 9).
 */
TEST_F(inproc, forked_child_gets_echild)
{
	struct iopa_job j = { .fd = self->file, .user_data = 1 };
	struct iopa_pool_info info;
	int st;
	pid_t pid;

	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 16, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int bad = 0;

		bad |= (iopa_pool_submit(self->pool, &j, 1) != -ECHILD) << 0;
		bad |= (iopa_pool_wait(self->pool) != -ECHILD) << 1;
		bad |= (iopa_pool_get_info(self->pool, &info) != -ECHILD) << 2;
		bad |= (iopa_pool_create_threads(self->pool, job_fn,
						 &self->tb) != -ECHILD) << 3;
		bad |= (iopa_pool_ctx_fd(self->pool) != -ECHILD) << 4;
		bad |= (iopa_pool_close(self->pool) != 0) << 5;
		_exit(bad);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	/* the parent's pool is untouched */
	ASSERT_EQ(0, submit_range(self, 16, 32, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(32, atomic_load(&self->tb.done_calls));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(32ULL, (unsigned long long)info.submitted);
	EXPECT_EQ(0ULL, (unsigned long long)info.outstanding);
}

/*
 * One submission of more jobs than are checked per hold of the queue's
 * lock: all are queued, each runs once, and a refused job in the middle
 * stops the submission there with the first ones queued.
 */
TEST_F(inproc, submit_many_in_one_call)
{
	struct iopa_job jobs[100];
	unsigned int i;

	ASSERT_EQ(0, start(self));
	for (i = 0; i < 100; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].fd = self->file;
		jobs[i].user_data = i;
	}
	ASSERT_EQ(100, iopa_pool_submit(self->pool, jobs, 100));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(100, atomic_load(&self->tb.done_calls));
	jobs[70].fd = -1;
	ASSERT_EQ(70, iopa_pool_submit(self->pool, jobs, 100));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(170, atomic_load(&self->tb.done_calls));
}

/*
 * Jobs that overlap (each waits 4 ms, nothing shared): the limit doubles
 * from its start (8, or 1 when the test file lies on a rotational disk)
 * while that pays: above 16 within 20 s (16 itself is the first doubling
 * from 8, tried whether it pays or not).  At the default max_threads: no
 * CPU count holds it (it was 4 per CPU, 8 threads on a 2-CPU host).
 */
TEST_F_TIMEOUT(inproc, limit_grows_for_overlapping_jobs, 60)
{
	struct iopa_pool_info info;
	unsigned int next = 0, best = 0;
	time_t end = time(NULL) + 20;

	self->tb.work_us = 4000;
	ASSERT_EQ(0, start(self));
	while (time(NULL) < end && best <= 16) {
		ASSERT_EQ(0, submit_range(self, next, next + 64, 0));
		next += 64;
		if (next >= NJOBS * 16)
			next = 0;
		ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
		if (info.limit > best)
			best = info.limit;
	}
	TH_LOG("limit reached %u", best);
	EXPECT_LT(16u, best);
}

/*
 * Jobs that serialise on one lock: more at once gains nothing, so after
 * 8 s the limit is no higher than the highest start (8).
 */
TEST_F_TIMEOUT(inproc, limit_stays_low_for_serial_jobs, 60)
{
	struct iopa_pool_info info;
	unsigned int next = 0;
	time_t end = time(NULL) + 8;

	self->o.max_threads = 64;
	self->tb.work_us = 1000;
	self->tb.serial = true;
	ASSERT_EQ(0, start(self));
	while (time(NULL) < end) {
		ASSERT_EQ(0, submit_range(self, next, next + 16, 0));
		next += 16;
		if (next >= NJOBS * 16)
			next = 0;
	}
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	TH_LOG("limit %u, most running %d", info.limit,
	       atomic_load(&self->tb.max_running));
	EXPECT_GE(8u, info.limit);
}

/* Does @fd's file lie on a disk that says it is rotational (sysfs)? */
static bool on_rotational(int fd)
{
	char path[96], buf[8] = "";
	struct stat st;
	int sfd;

	if (fstat(fd, &st) < 0)
		return false;
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/rotational",
		 major(st.st_dev), minor(st.st_dev));
	sfd = open(path, O_RDONLY);
	if (sfd < 0) {
		snprintf(path, sizeof(path),
			 "/sys/dev/block/%u:%u/../queue/rotational",
			 major(st.st_dev), minor(st.st_dev));
		sfd = open(path, O_RDONLY);
	}
	if (sfd < 0)
		return false;
	if (read(sfd, buf, sizeof(buf) - 1) < 0)
		buf[0] = 0;
	close(sfd);
	return buf[0] == '1';
}

/*
 * On a disk that says it is rotational the limit starts at 1 for jobs
 * that read it.  Eight jobs in a row that read nothing from it (page-cache
 * hits: a tree hashed again) start it afresh at the default start (8);
 * before, the whole first cycle (100 ms and more: all of a short run) ran
 * at 1.  Seven are not enough.
 */
TEST_F(inproc, rotational_start_lifted_by_cache_hits)
{
	static char data[64 * 1024];
	struct iopa_pool_info info;

	if (!on_rotational(self->file))
		SKIP(return, "the test file's disk does not say rotational");
	memset(data, 'x', sizeof(data));
	ASSERT_EQ((ssize_t)sizeof(data), pwrite(self->file, data, sizeof(data), 0));
	/* in the page cache: the jobs read it from there */
	ASSERT_EQ((ssize_t)sizeof(data), pread(self->file, data, sizeof(data), 0));
	self->tb.read_all = true;
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 7, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(1u, info.limit);
	ASSERT_EQ(0, submit_range(self, 7, 8, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(8u, info.limit);
}

/* ... and a first job that read the disk keeps the start of 1. */
TEST_F(inproc, rotational_start_kept_for_jobs_that_read_the_disk)
{
	static char data[256 * 1024];
	struct iopa_pool_info info;

	if (!on_rotational(self->file))
		SKIP(return, "the test file's disk does not say rotational");
	memset(data, 'x', sizeof(data));
	ASSERT_EQ((ssize_t)sizeof(data), pwrite(self->file, data, sizeof(data), 0));
	ASSERT_EQ(0, fsync(self->file));
	/* out of the page cache: the job reads the disk */
	ASSERT_EQ(0, posix_fadvise(self->file, 0, 0, POSIX_FADV_DONTNEED));
	self->tb.read_all = true;
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 1, 0));
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(1u, info.limit);
}

/* The cache's line for @fd's file system, as libiopa(7) describes it. */
static void knee_line(int fd, unsigned int knee, char *buf, size_t len)
{
	struct statfs sf;
	unsigned int v[2] = { 0, 0 };

	if (!fstatfs(fd, &sf))
		memcpy(v, &sf.f_fsid, sizeof(v));
	snprintf(buf, len, "fsid=%08x%08x knee=%u\n", v[0], v[1], knee);
}

/*
 * A device in the knee cache starts there (Admission v3: the in-process
 * pool gets the module's start from knowledge), not at 8 (or 1).
 */
TEST_F(inproc, knee_cache_starts_there)
{
	char path[] = "/tmp/iopa-knees.XXXXXX", line[64];
	struct iopa_pool_info info;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	knee_line(self->file, 6, line, sizeof(line));
	ASSERT_LT(0, dprintf(fd, "# iopa knees v1\nfsid=0000000000000001 knee=9\n%s",
			     line));
	close(fd);
	setenv("IOPA_KNEES_CACHE", path, 1);
	self->o.max_threads = 8;
	self->tb.gate = 2;	/* the job waits: the limit is read meanwhile */
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 1, 0));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	self->tb.gate = 0;
	pthread_cond_broadcast(&self->tb.cond);
	/* closed first: a pool writes its knee to the cache at close */
	EXPECT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	unlink(path);
	EXPECT_EQ(6u, info.limit);
}

/*
 * A cache file of another format is no memory: the start is the one
 * without a cache (8, or 1 on a disk that says it is rotational).
 */
TEST_F(inproc, knee_cache_other_format_ignored)
{
	char path[] = "/tmp/iopa-knees.XXXXXX", line[64];
	struct iopa_pool_info info;
	unsigned int cold;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	knee_line(self->file, 6, line, sizeof(line));
	ASSERT_LT(0, dprintf(fd, "# iopa knees v2\n%s", line));
	close(fd);
	self->o.max_threads = 8;
	/* without a cache */
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 1, 0));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	cold = info.limit;
	ASSERT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	ASSERT_NE(6u, cold);
	setenv("IOPA_KNEES_CACHE", path, 1);
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 1, 2, 0));
	ASSERT_EQ(0, iopa_pool_get_info(self->pool, &info));
	EXPECT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	unlink(path);
	EXPECT_EQ(cold, info.limit);
}

/*
 * A pool whose controller found a knee leaves it in the cache at close,
 * keyed by its file system, with the size of its jobs (job_kb=), the
 * other devices' lines kept (an old line without job_kb= too).
 */
/*
 * The cache file @path read into @buf (@len), then removed; on @fd's
 * line, the knee and job_kb in *@knee and *@kb: 2, or fewer fields
 * found (-1: no file, 0: no line for @fd).
 */
static int cached_knee(const char *path, int fd, char *buf, size_t len,
		       unsigned int *knee, unsigned int *kb)
{
	int cfd = open(path, O_RDONLY | O_CLOEXEC);
	char line[64], *l;
	ssize_t n;

	if (cfd < 0)
		return -1;
	n = read(cfd, buf, len - 1);
	close(cfd);
	unlink(path);
	if (n < 0)
		return -1;
	buf[n] = 0;
	knee_line(fd, 0, line, sizeof(line));
	line[27] = 0;		/* "fsid=<16 hex> knee=" */
	l = strstr(buf, line);
	return l ? sscanf(l + 27, "%u job_kb=%u", knee, kb) : 0;
}

TEST_F_TIMEOUT(inproc, knee_cache_learned_at_close, 60)
{
	char path[] = "/tmp/iopa-knees.XXXXXX", buf[512];
	unsigned int next = 0, knee = 0, kb = 0;
	time_t end = time(NULL) + 4;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	ASSERT_LT(0, dprintf(fd, "# iopa knees v1\nfsid=0000000000000001 knee=9\n"));
	close(fd);
	setenv("IOPA_KNEES_CACHE", path, 1);
	self->o.max_threads = 16;
	self->tb.serial = true;		/* a doubling does not pay: a knee */
	self->tb.work_us = 2000;
	ASSERT_EQ(0, start(self));
	while (time(NULL) < end) {
		ASSERT_EQ(0, submit_range(self, next, next + 16, 0));
		next = (next + 16) % (NJOBS * 16);
	}
	ASSERT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	EXPECT_EQ(2, cached_knee(path, self->file, buf, sizeof(buf), &knee,
				 &kb)) TH_LOG("cache: %s", buf);
	EXPECT_EQ(0, strncmp(buf, "# iopa knees v1\nfsid=0000000000000001 knee=9\n", 44));
	EXPECT_LE(1u, knee);
	EXPECT_GE(16u, knee);
	EXPECT_GE(1048576u, kb);
}

/*
 * A run of cache hits (jobs that read nothing from the disk: the knee it
 * reaches is the CPUs') leaves a cached knee found by reads as it was,
 * size and all; before, it replaced it (job_kb=0), and the next cold run
 * on the disk started from the CPUs' knee and probed one job.
 */
TEST_F_TIMEOUT(inproc, knee_cache_of_reads_kept_by_cache_hits, 60)
{
	char path[] = "/tmp/iopa-knees.XXXXXX", buf[512], line[64];
	unsigned int knee = 0, kb = 0;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	knee_line(self->file, 0, line, sizeof(line));
	line[27] = 0;		/* "fsid=<16 hex> knee=" */
	ASSERT_LT(0, dprintf(fd, "# iopa knees v1\n%s6 job_kb=64\n", line));
	close(fd);
	setenv("IOPA_KNEES_CACHE", path, 1);
	self->o.max_threads = 16;
	self->tb.work_us = 2000;	/* sleeps: no block I/O */
	ASSERT_EQ(0, start(self));
	ASSERT_EQ(0, submit_range(self, 0, 256, 0));
	ASSERT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	EXPECT_EQ(2, cached_knee(path, self->file, buf, sizeof(buf), &knee,
				 &kb)) TH_LOG("cache: %s", buf);
	EXPECT_EQ(6u, knee);
	EXPECT_EQ(64u, kb);
}

/*
 * A pool closed before its search ended (a run of well under a second)
 * leaves where it got, as the module's device groups do: the next run
 * starts there.  Before, only a search that ended left a knee, and a
 * short run, which never ends one, left none.
 */
TEST_F_TIMEOUT(inproc, knee_cache_left_by_a_short_run, 60)
{
	char path[] = "/tmp/iopa-knees.XXXXXX", buf[512];
	unsigned int knee = 0, kb = 0;
	int fd = mkstemp(path);

	ASSERT_LE(0, fd);
	close(fd);
	unlink(path);		/* no cache file yet */
	setenv("IOPA_KNEES_CACHE", path, 1);
	self->o.max_threads = 8;
	self->tb.work_us = 2000;
	ASSERT_EQ(0, start(self));
	/* 32 jobs of 2 ms: a cycle or two, no search ends in them */
	ASSERT_EQ(0, submit_range(self, 0, 32, 0));
	ASSERT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	EXPECT_LE(1, cached_knee(path, self->file, buf, sizeof(buf), &knee,
				 &kb)) TH_LOG("cache: %s", buf);
	EXPECT_LE(1u, knee);
}

/*
 * A cycle's end reads /proc/stat with the queue's lock dropped (Core
 * round 2, item 9: it read it under the lock, so every submit, fetch
 * and completion of the pool waited for a /proc read): while a pool
 * thread is held in that read, a submit goes through.
 */
TEST_F_TIMEOUT(inproc, cycle_end_reads_proc_stat_unlocked, 60)
{
	struct timespec dl;
	pthread_t wd;
	bool held_at_return, reached = true;
	int r;

	ASSERT_EQ(0, start(self));
	stat_gate.test_thread = pthread_self();
	pthread_mutex_lock(&stat_gate.lock);
	stat_gate.armed = true;
	pthread_mutex_unlock(&stat_gate.lock);
	/* a cycle starts; its end, some hundred ms on, is a pool thread's */
	ASSERT_EQ(0, submit_range(self, 0, 1, 0));
	clock_gettime(CLOCK_REALTIME, &dl);
	dl.tv_sec += 30;
	pthread_mutex_lock(&stat_gate.lock);
	while (!stat_gate.held && reached)
		reached = !pthread_cond_timedwait(&stat_gate.cond,
						  &stat_gate.lock, &dl);
	pthread_mutex_unlock(&stat_gate.lock);
	ASSERT_TRUE(reached) TH_LOG("no cycle end read /proc/stat in 30 s");
	atomic_store(&stat_gate_submitted, false);
	ASSERT_EQ(0, pthread_create(&wd, NULL, stat_gate_watchdog, NULL));
	r = submit_range(self, 1, 2, 0);
	pthread_mutex_lock(&stat_gate.lock);
	held_at_return = stat_gate.held;
	pthread_mutex_unlock(&stat_gate.lock);
	atomic_store(&stat_gate_submitted, true);
	pthread_join(wd, NULL);
	EXPECT_EQ(0, r);
	EXPECT_TRUE(held_at_return)
		TH_LOG("the submit waited for the cycle end's /proc read");
	ASSERT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(2, atomic_load(&self->tb.done_calls));
}

TEST_HARNESS_MAIN
