/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the iopa kselftests.
 *
 * Every helper returns a value >= 0 on success and -errno on failure, so a
 * test reads ASSERT_EQ(-EINVAL, iopa_submit(...)).  Blocking helpers always
 * take a timeout: a broken module makes a test fail, never hang.
 *
 * Include this file first (it defines _GNU_SOURCE).
 */
#ifndef IOPA_TEST_H
#define IOPA_TEST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/io_uring.h>
#include <linux/iopa.h>

/* The 6.12 harness itself is not -Wextra clean (unused handler argument). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include "kselftest_harness.h"
#pragma GCC diagnostic pop
/*
 * TEST_F() keeps a local across setjmp()/longjmp() in the harness's own
 * wrapper; -Wclobbered fires on that expansion, not on test code.
 */
#pragma GCC diagnostic ignored "-Wclobbered"

#define IOPA_DEV_PATH		"/dev/iopa"
#define IOPA_SYSFS		"/sys/class/misc/iopa"

#define IOPA_MS_NS(ms)		((int64_t)(ms) * 1000000LL)
/* Upper bound for anything that should happen "soon"; never a sleep. */
#define IOPA_LONG_MS		10000
#define IOPA_LONG_NS		IOPA_MS_NS(IOPA_LONG_MS)
/* How long something that must stay blocked is watched. */
#define IOPA_BLOCKED_MS		150

#define IOPA_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static inline int iopa_err(int r)
{
	return r < 0 ? -errno : r;
}

/* ---- objects ----------------------------------------------------------- */

static inline int iopa_open_ctx(void)
{
	return iopa_err(open(IOPA_DEV_PATH, O_RDWR | O_CLOEXEC));
}

static inline int iopa_ioctl(int fd, unsigned long cmd, void *arg)
{
	return iopa_err(ioctl(fd, cmd, arg));
}

static inline int iopa_submitter_create(int ctx, uint32_t limit)
{
	struct iopa_submitter_create c = { .limit = limit };

	return iopa_ioctl(ctx, IOPA_IOC_SUBMITTER_CREATE, &c);
}

static inline int iopa_worker_create(int ctx)
{
	struct iopa_worker_create c = { 0 };

	return iopa_ioctl(ctx, IOPA_IOC_WORKER_CREATE, &c);
}

static inline int iopa_get_features(int fd, struct iopa_features *f)
{
	memset(f, 0, sizeof(*f));
	return iopa_ioctl(fd, IOPA_IOC_GET_FEATURES, f);
}

static inline int iopa_get_stats(int fd, struct iopa_stats *st)
{
	memset(st, 0, sizeof(*st));
	return iopa_ioctl(fd, IOPA_IOC_GET_STATS, st);
}

static inline int iopa_set_limit(int sfd, uint32_t limit)
{
	struct iopa_limit l = { .limit = limit };

	return iopa_ioctl(sfd, IOPA_IOC_SET_LIMIT, &l);
}

/* Returns the limit, or -errno. */
static inline int iopa_get_limit(int sfd)
{
	struct iopa_limit l = { 0 };
	int r = iopa_ioctl(sfd, IOPA_IOC_GET_LIMIT, &l);

	return r < 0 ? r : (int)l.limit;
}

/* Returns the GET_LIMIT flags (IOPA_LIMIT_F_*), or -errno. */
static inline int iopa_get_limit_flags(int sfd)
{
	struct iopa_limit l = { 0 };
	int r = iopa_ioctl(sfd, IOPA_IOC_GET_LIMIT, &l);

	return r < 0 ? r : (int)l.flags;
}

static inline int iopa_set_adapt(int sfd, uint32_t policy, uint32_t min,
				 uint32_t max)
{
	struct iopa_adapt a = { .policy = policy, .min = min, .max = max };

	return iopa_ioctl(sfd, IOPA_IOC_SET_ADAPT, &a);
}

/* SET_ADAPT with a weight (IOPA_ADAPT_F_WEIGHT). */
static inline int iopa_set_adapt_weight(int sfd, uint32_t policy, uint32_t min,
					uint32_t max, uint32_t weight)
{
	struct iopa_adapt a = {
		.policy = policy, .min = min, .max = max,
		.flags = IOPA_ADAPT_F_WEIGHT, .weight = weight,
	};

	return iopa_ioctl(sfd, IOPA_IOC_SET_ADAPT, &a);
}

static inline int iopa_get_state(int sfd, struct iopa_state *st)
{
	memset(st, 0, sizeof(*st));
	return iopa_ioctl(sfd, IOPA_IOC_GET_STATE, st);
}

/* ---- submitter side ---------------------------------------------------- */

static inline void iopa_job_init(struct iopa_job *j, int fd, uint64_t user_data)
{
	memset(j, 0, sizeof(*j));
	j->fd = fd;
	j->offset = (user_data % 1024) * 4096;
	j->len = 4096;
	j->user_data = user_data;
}

static inline int iopa_submit(int sfd, const struct iopa_job *jobs, uint32_t nr,
			      uint32_t flags)
{
	struct iopa_submit s = {
		.jobs = (uintptr_t)jobs,
		.nr = nr,
		.flags = flags,
	};

	return iopa_ioctl(sfd, IOPA_IOC_SUBMIT, &s);
}

static inline int iopa_submit_one_flags(int sfd, int fd, uint64_t user_data,
					uint32_t job_flags, uint32_t submit_flags)
{
	struct iopa_job j;

	iopa_job_init(&j, fd, user_data);
	j.flags = job_flags;
	return iopa_submit(sfd, &j, 1, submit_flags);
}

static inline int iopa_submit_one(int sfd, int fd, uint64_t user_data)
{
	return iopa_submit_one_flags(sfd, fd, user_data, 0, 0);
}

/*
 * Submit @count jobs for @fd with user_data first, first + 1, ... in
 * batches of at most IOPA_BATCH_MAX.  Returns the number accepted.
 */
static inline int iopa_submit_many(int sfd, int fd, uint64_t first, int count)
{
	static struct iopa_job jobs[IOPA_BATCH_MAX];
	int done = 0;

	while (done < count) {
		int n = count - done, i, r;

		if (n > IOPA_BATCH_MAX)
			n = IOPA_BATCH_MAX;
		for (i = 0; i < n; i++)
			iopa_job_init(&jobs[i], fd, first + done + i);
		r = iopa_submit(sfd, jobs, n, 0);
		if (r < 0)
			return done ? done : r;
		done += r;
		if (r != n)
			break;
	}
	return done;
}

static inline int iopa_reap(int sfd, struct iopa_cqe *cqes, uint32_t nr,
			    uint32_t flags, uint64_t timeout_ns)
{
	struct iopa_reap r = {
		.cqes = (uintptr_t)cqes,
		.nr = nr,
		.flags = flags,
		.timeout_ns = timeout_ns,
	};

	return iopa_ioctl(sfd, IOPA_IOC_REAP, &r);
}

/* The listing entry of submitter @sub_id of context @ctx (V2): 0 or -errno. */
static inline int iopa_sub_info_of(int ctx, uint32_t sub_id,
				   struct iopa_sub_info *out)
{
	struct iopa_sub_info info[4];
	struct iopa_list l = {
		.subs = (uintptr_t)info, .nr = 4,
		.entry_size = sizeof(info[0]),
	};
	uint32_t i;

	if (ioctl(ctx, IOPA_IOC_LIST_SUBMITTERS, &l) < 0)
		return -errno;
	for (i = 0; i < l.filled; i++) {
		if (info[i].sub_id == sub_id) {
			*out = info[i];
			return 0;
		}
	}
	return -ENOENT;
}

/* Wait (bounded) for one completion. */
static inline int iopa_reap_one(int sfd, struct iopa_cqe *cqe)
{
	memset(cqe, 0, sizeof(*cqe));
	return iopa_reap(sfd, cqe, 1, IOPA_REAP_F_WAIT, IOPA_LONG_NS);
}

static inline int iopa_reap_nb(int sfd, struct iopa_cqe *cqes, uint32_t nr)
{
	return iopa_reap(sfd, cqes, nr, 0, 0);
}

static inline int iopa_cancel(int sfd, uint64_t user_data, uint32_t flags)
{
	struct iopa_cancel c = { .user_data = user_data, .flags = flags };

	return iopa_ioctl(sfd, IOPA_IOC_CANCEL, &c);
}

/* Set the submitter's job lease (0: none): 0 or -errno. */
static inline int iopa_set_lease(int sfd, uint64_t lease_ns)
{
	struct iopa_lease l = { .lease_ns = lease_ns };

	return iopa_ioctl(sfd, IOPA_IOC_SET_LEASE, &l);
}

/* ---- worker side ------------------------------------------------------- */

static inline int iopa_fetch(int wfd, struct iopa_work *w, uint32_t flags,
			     uint64_t timeout_ns)
{
	struct iopa_fetch f = { .timeout_ns = timeout_ns, .flags = flags };
	int r = iopa_ioctl(wfd, IOPA_IOC_FETCH, &f);

	*w = f.work;
	if (r < 0)
		w->fd = -1;
	return r;
}

/* Nothing to wait for: fails with -EAGAIN if no job can be dispatched. */
static inline int iopa_fetch_nb(int wfd, struct iopa_work *w)
{
	return iopa_fetch(wfd, w, IOPA_FETCH_F_NONBLOCK, 0);
}

/* Wait (bounded) for one job. */
static inline int iopa_fetch_wait(int wfd, struct iopa_work *w)
{
	return iopa_fetch(wfd, w, 0, IOPA_LONG_NS);
}

static inline int iopa_complete(int wfd, uint64_t job_id, int32_t res)
{
	struct iopa_done d = { .job_id = job_id, .res = res };

	return iopa_ioctl(wfd, IOPA_IOC_COMPLETE, &d);
}

static inline int iopa_complete_and_fetch(int wfd, uint64_t job_id, int32_t res,
					  struct iopa_work *w, uint32_t flags,
					  uint64_t timeout_ns)
{
	struct iopa_fetch f = {
		.timeout_ns = timeout_ns,
		.flags = flags,
		.done = { .job_id = job_id, .res = res },
	};
	int r = iopa_ioctl(wfd, IOPA_IOC_COMPLETE_AND_FETCH, &f);

	*w = f.work;
	if (r < 0)
		w->fd = -1;
	return r;
}

/* Fetch one job without blocking, close its fd, complete it with @res. */
static inline int iopa_run_one(int wfd, int32_t res, struct iopa_work *out)
{
	struct iopa_work w;
	int r = iopa_fetch_nb(wfd, &w);

	if (r < 0)
		return r;
	close(w.fd);
	if (out)
		*out = w;
	return iopa_complete(wfd, w.job_id, res);
}

/* ---- misc -------------------------------------------------------------- */

static inline void iopa_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Create a job file in /tmp (tmpfs in the guest) with mkstemp, 64 KiB
 * long.  @path must hold 64 bytes.  Returns an fd opened with @oflags
 * (the mkstemp fd is closed first), or -errno.
 */
static inline int iopa_job_file(char *path, int oflags)
{
	int fd, r;

	strcpy(path, "/tmp/iopa-job-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	r = ftruncate(fd, 65536);
	close(fd);
	if (r)
		return -errno;
	if (oflags < 0)		/* create only */
		return 0;
	return iopa_err(open(path, oflags | O_CLOEXEC));
}

/*
 * Run a command without a shell, its output discarded; returns its exit
 * status (127: not found) or -errno.
 */
static inline int iopa_run_cmd(const char *cmdline)
{
	char buf[1024], *argv[32], *save = NULL, *tok;
	int argc = 0, status, devnull;
	pid_t pid;

	snprintf(buf, sizeof(buf), "%s", cmdline);
	for (tok = strtok_r(buf, " ", &save); tok && argc < 31;
	     tok = strtok_r(NULL, " ", &save))
		argv[argc++] = tok;
	argv[argc] = NULL;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		devnull = open("/dev/null", O_WRONLY);
		if (devnull >= 0) {
			dup2(devnull, 1);
			dup2(devnull, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

static inline int64_t iopa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* poll() one fd; returns revents (0 on timeout) or -errno. */
static inline int iopa_poll1(int fd, short events, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = events };
	int r = poll(&p, 1, timeout_ms);

	if (r < 0)
		return -errno;
	return r ? p.revents : 0;
}

/* 1 if @fd becomes readable within @timeout_ms, 0 if not, -errno. */
static inline int iopa_wait_readable(int fd, int timeout_ms)
{
	int r = iopa_poll1(fd, POLLIN, timeout_ms);

	return r < 0 ? r : !!(r & POLLIN);
}

/* Send @fd over the unix socket @sock (SCM_RIGHTS): 0 or -errno. */
static inline int iopa_send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte = 'F';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -errno;
}

/* Receive an fd sent by iopa_send_fd() (O_CLOEXEC): the fd or -errno. */
static inline int iopa_recv_fd(int sock)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char byte;
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (iopa_wait_readable(sock, IOPA_LONG_MS) != 1)
		return -ETIMEDOUT;
	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

static inline int iopa_cloexec(int fd)
{
	int r = fcntl(fd, F_GETFD);

	return r < 0 ? -errno : !!(r & FD_CLOEXEC);
}

/* Lowest free fd number, i.e. the number the next new fd will get. */
static inline int iopa_next_fd(void)
{
	int fd = dup(0);

	if (fd < 0)
		fd = open("/dev/null", O_RDONLY);
	if (fd < 0)
		return -errno;
	close(fd);
	return fd;
}

/* Non-iopa read/write of eventfds used as "it happened" flags. */
static inline void iopa_efd_signal(int efd)
{
	uint64_t one = 1;

	if (write(efd, &one, sizeof(one)) != sizeof(one))
		abort();
}

/* ---- inotify: was the last reference to a file dropped? ---------------- */

static inline int iopa_watch_close(const char *path)
{
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);

	if (ifd < 0)
		return -errno;
	if (inotify_add_watch(ifd, path, IN_CLOSE_WRITE | IN_CLOSE_NOWRITE) < 0) {
		int e = errno;

		close(ifd);
		return -e;
	}
	return ifd;
}

/*
 * 1 if a close event arrives within @timeout_ms (0: only look at what is
 * already queued), 0 if not, -errno on error.  Consumes the events read.
 */
static inline int iopa_close_event(int ifd, int timeout_ms)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int64_t deadline = iopa_now_ns() + IOPA_MS_NS(timeout_ms);

	for (;;) {
		int64_t left = (deadline - iopa_now_ns()) / 1000000;
		ssize_t n;
		char *p;
		int r;

		r = iopa_wait_readable(ifd, left > 0 ? (int)left : 0);
		if (r <= 0)
			return r;
		n = read(ifd, buf, sizeof(buf));
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		for (p = buf; p < buf + n;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			if (ev->mask & (IN_CLOSE_WRITE | IN_CLOSE_NOWRITE))
				return 1;
			p += sizeof(*ev) + ev->len;
		}
	}
}

/* ---- sysfs ------------------------------------------------------------- */

static inline int iopa_sysfs_read(const char *name, uint64_t *val)
{
	char path[256], buf[64], *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), IOPA_SYSFS "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	close(fd);
	buf[n] = 0;
	errno = 0;
	*val = strtoull(buf, &end, 0);
	if (errno || end == buf || (*end && *end != '\n'))
		return -EPROTO;
	return 0;
}

/* Write @str to the file @path (sysfs, cgroupfs); 0 or -errno. */
static inline int iopa_write_str(const char *path, const char *str)
{
	ssize_t n;
	int fd, e;

	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, str, strlen(str));
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	return n == (ssize_t)strlen(str) ? 0 : -EIO;
}

/* Write @str to the attribute; -errno of the write (or open) on failure. */
static inline int iopa_sysfs_write_str(const char *name, const char *str)
{
	char path[256];

	snprintf(path, sizeof(path), IOPA_SYSFS "/%s", name);
	return iopa_write_str(path, str);
}

/*
 * Read the attribute as a string, without its trailing newline.  @buf
 * holds @len bytes.  Returns 0 or -errno.
 */
static inline int iopa_sysfs_read_str(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), IOPA_SYSFS "/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	buf[n] = 0;
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = 0;
	return 0;
}

/* IOPA_POLICY_* of the sysfs default_policy, or 0 if unreadable. */
static inline uint32_t iopa_sysfs_default_policy(void)
{
	char buf[32];

	if (iopa_sysfs_read_str("default_policy", buf, sizeof(buf)))
		return 0;
	if (!strcmp(buf, "iopa"))
		return IOPA_POLICY_IOPA;
	if (!strcmp(buf, "hillclimb"))
		return IOPA_POLICY_HILLCLIMB;
	if (!strcmp(buf, "bracket"))
		return IOPA_POLICY_BRACKET;
	return 0;
}

/*
 * The limit a new adaptive submitter of @policy starts at: sysfs
 * init_limit, or when it is 0 the policy's own (bracket: 4; iopa and
 * hillclimb: 30% of the CPUs, rounded up), within max_limit.  0 if sysfs
 * is unreadable.
 */
static inline uint32_t iopa_expected_init_limit(uint32_t policy)
{
	uint64_t init = 0, max = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	if (iopa_sysfs_read("init_limit", &init) ||
	    iopa_sysfs_read("max_limit", &max))
		return 0;
	/* bracket's start (kernel/ctl.c, IOPA_CTL_BR_INIT_LIMIT) */
	if (!init && policy == IOPA_POLICY_BRACKET)
		init = 8;
	if (!init)
		init = (cpus * 30 + 99) / 100;
	if (!init)
		init = 1;
	return (uint32_t)(init < max ? init : max);
}

static inline int iopa_sysfs_write(const char *name, uint64_t val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%llu\n", (unsigned long long)val);
	return iopa_sysfs_write_str(name, buf);
}

/* ---- stats ------------------------------------------------------------- */

static inline bool iopa_stats_consistent(const struct iopa_stats *st)
{
	return st->submitted ==
	       st->completed + st->cancelled + st->pending + st->inflight;
}

#define IOPA_LOG_STATS(st) \
	TH_LOG("stats: submitted %llu dispatched %llu completed %llu " \
	       "cancelled %llu requeued %llu pending %llu inflight %llu " \
	       "unreaped %llu submitters %u workers %u waiting %u", \
	       (unsigned long long)(st)->submitted, \
	       (unsigned long long)(st)->dispatched, \
	       (unsigned long long)(st)->completed, \
	       (unsigned long long)(st)->cancelled, \
	       (unsigned long long)(st)->requeued, \
	       (unsigned long long)(st)->pending, \
	       (unsigned long long)(st)->inflight, \
	       (unsigned long long)(st)->unreaped, \
	       (st)->nr_submitters, (st)->nr_workers, (st)->nr_waiting)

/* ASSERT the stats of @fd satisfy submitted == completed+cancelled+pending+inflight. */
#define ASSERT_STATS_INVARIANT(fd) do { \
	struct iopa_stats __st; \
	ASSERT_EQ(0, iopa_get_stats((fd), &__st)); \
	if (!iopa_stats_consistent(&__st)) \
		IOPA_LOG_STATS(&__st); \
	ASSERT_TRUE(iopa_stats_consistent(&__st)); \
} while (0)

/*
 * Wait until the context's stats report @n workers waiting in FETCH, with
 * IOPA_LONG_MS as an upper bound.  Returns 0, or -ETIMEDOUT / -errno.
 */
static inline int iopa_wait_nr_waiting(int ctx, uint32_t n)
{
	int64_t deadline = iopa_now_ns() + IOPA_LONG_NS;
	struct iopa_stats st;
	int r;

	for (;;) {
		r = iopa_get_stats(ctx, &st);
		if (r < 0)
			return r;
		if (st.nr_waiting == n)
			return 0;
		if (iopa_now_ns() > deadline)
			return -ETIMEDOUT;
		sched_yield();
		poll(NULL, 0, 1);
	}
}

/* ---- signals: interrupt a thread blocked in an ioctl ------------------- */

static inline void iopa_nop_handler(int sig)
{
	(void)sig;
}

/* Install a no-op handler for @sig WITHOUT SA_RESTART (so -EINTR surfaces). */
static inline int iopa_install_nop_handler(int sig)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = iopa_nop_handler;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0;
	return iopa_err(sigaction(sig, &sa, NULL));
}

/*
 * A thread that, once @ctx reports @nr_waiting workers in FETCH (if ctx >=
 * 0), keeps sending @sig to @target until @stop is set.  Repeating makes
 * the test independent of when exactly the target reaches its wait; the
 * 20 ms pacing is not a synchronisation point.
 */
struct iopa_sigger {
	pthread_t thread;
	pthread_t target;
	int sig;
	int ctx;
	uint32_t nr_waiting;
	atomic_int stop;
	int wait_rc;
};

static inline void *iopa_sigger_fn(void *arg)
{
	struct iopa_sigger *s = arg;

	if (s->ctx >= 0)
		s->wait_rc = iopa_wait_nr_waiting(s->ctx, s->nr_waiting);
	while (!atomic_load(&s->stop)) {
		pthread_kill(s->target, s->sig);
		poll(NULL, 0, 20);
	}
	return NULL;
}

static inline int iopa_sigger_start(struct iopa_sigger *s, int sig, int ctx,
				    uint32_t nr_waiting)
{
	s->target = pthread_self();
	s->sig = sig;
	s->ctx = ctx;
	s->nr_waiting = nr_waiting;
	s->wait_rc = 0;
	atomic_store(&s->stop, 0);
	return -pthread_create(&s->thread, NULL, iopa_sigger_fn, s);
}

static inline void iopa_sigger_stop(struct iopa_sigger *s)
{
	atomic_store(&s->stop, 1);
	pthread_join(s->thread, NULL);
}

/*
 * Helper threads that block in the kernel (FETCH, REAP, poll...) on
 * behalf of a test use IOPA_THREAD_NS as their own time limit: longer than
 * the IOPA_LONG_MS the test gives the wakeup it checks, so a missing
 * wakeup cannot hide behind the thread's timeout (a waiter that times out
 * re-checks, finds the job and succeeds, only late).  The thread writes
 * @efd when its call returned; iopa_thread_finish() then interrupts it
 * with SIGUSR1 if it is still blocked (the test already failed) and joins.
 */
#define IOPA_THREAD_MS		(3 * IOPA_LONG_MS)
#define IOPA_THREAD_NS		IOPA_MS_NS(IOPA_THREAD_MS)

static inline void iopa_thread_finish(pthread_t th, int efd)
{
	int i;

	iopa_install_nop_handler(SIGUSR1);
	for (i = 0; i < 1000 && iopa_wait_readable(efd, i ? 20 : 0) != 1; i++)
		pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
}

/* ---- child processes --------------------------------------------------- */

/* Read exactly @len bytes from @fd, waiting at most IOPA_LONG_MS. */
static inline int iopa_read_full(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n;
		int r = iopa_wait_readable(fd, IOPA_LONG_MS);

		if (r < 0)
			return r;
		if (r == 0)
			return -ETIMEDOUT;
		n = read(fd, (char *)buf + got, len - got);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EPIPE;
		got += n;
	}
	return 0;
}

static inline int iopa_write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t n = write(fd, (const char *)buf + done, len - done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += n;
	}
	return 0;
}

/* SIGKILL @pid and reap it; returns 0 if it died of SIGKILL. */
static inline int iopa_kill_wait(pid_t pid)
{
	int status;

	if (kill(pid, SIGKILL))
		return -errno;
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ? 0 : -ECHILD;
}

/* Reap @pid; returns its exit status, or -errno / -ECHILD if it was killed. */
static inline int iopa_wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -ECHILD;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open	434
#endif

/*
 * Wait up to @timeout_ms for the child @pid to end (a pidfd turns
 * readable when it has exited), then reap it as iopa_wait_exit() does.
 * -ETIMEDOUT if it is still there (it is not reaped then).
 */
static inline int iopa_wait_exit_ms(pid_t pid, int timeout_ms)
{
	int pfd = syscall(SYS_pidfd_open, pid, 0);
	int r;

	if (pfd < 0)
		return -errno;
	r = iopa_wait_readable(pfd, timeout_ms);
	close(pfd);
	if (r < 0)
		return r;
	if (!r)
		return -ETIMEDOUT;
	return iopa_wait_exit(pid);
}

/* ---- tracefs ----------------------------------------------------------- */

static inline const char *tracefs_dir(void)
{
	static const char * const dirs[] = {
		"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
	};
	unsigned int i;

	for (i = 0; i < IOPA_ARRAY_SIZE(dirs); i++) {
		char p[128];

		snprintf(p, sizeof(p), "%s/trace", dirs[i]);
		if (!access(p, F_OK))
			return dirs[i];
	}
	if (!mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL) &&
	    !access("/sys/kernel/tracing/trace", F_OK))
		return dirs[0];
	return NULL;
}

static inline int trace_write(const char *dir, const char *rel, const char *val)
{
	char path[256];
	int fd, e = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		e = -errno;
	close(fd);
	return e;
}

/* Whole file, NUL-terminated, malloc()ed; NULL on error. */
static inline char *trace_read_all(const char *dir, const char *rel)
{
	size_t cap = 1 << 16, len = 0;
	char path[256], *buf = malloc(cap);
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !buf) {
		if (fd >= 0)
			close(fd);
		free(buf);
		return NULL;
	}
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n <= 0)
			break;
		len += n;
	}
	close(fd);
	buf[len] = 0;
	return buf;
}

static inline int trace_read_int(const char *dir, const char *rel)
{
	char *s = trace_read_all(dir, rel);
	int v;

	if (!s)
		return -1;
	v = atoi(s);
	free(s);
	return v;
}

#endif /* IOPA_TEST_H */
