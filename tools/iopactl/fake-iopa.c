// SPDX-License-Identifier: GPL-2.0
/*
 * fake-iopa.so: an LD_PRELOAD stand-in for the module, for host tests of
 * iopactl and ctl-load (test-iopactl.c, host-guest-check.sh).  Not a
 * model of iopa's scheduling: a FIFO queue per process, enough for
 * ctl-load's workloads, and the calls answered the way the ABI says
 * (reserved fields and unknown flags EINVAL, nr > IOPA_LIST_MAX EINVAL,
 * F_ALL without privilege EPERM, nr 0 only counts).
 *
 *  - open("/dev/iopa") gives a context (an fd of /dev/null);
 *    SUBMITTER_CREATE and WORKER_CREATE give more such fds.  One
 *    submitter per process; SUBMIT, REAP, FETCH, COMPLETE(_AND_FETCH),
 *    GET/SET_LIMIT, SET_ADAPT, SET_ORDER, GET_STATE, GET_STATS.
 *  - a new submitter takes the policy $FAKE_IOPA_ROOT/class/default_policy
 *    names (bracket if there is none); cycles pass every 500 ms, and
 *    GET_STATE's wait_us, svc_us, completions and noise_permille are
 *    those of the last one, from the jobs' real submit, fetch and
 *    complete times (the noise as the kernel estimates it).
 *  - each process with a submitter writes its struct iopa_sub_info to
 *    $FAKE_IOPA_ROOT/subs/<pid>; LIST_SUBMITTERS with IOPA_LIST_F_ALL
 *    reads those of live processes (or FAKE_IOPA_NSUBS canned ones).
 *  - /dev/iopa opens as $FAKE_IOPA_ROOT/node would, if that file exists
 *    (its mode stands for the node's).
 *  - /sys/class/misc/iopa and /sys/module/iopa are $FAKE_IOPA_ROOT/class
 *    and /module; /sys/kernel/tracing is $FAKE_IOPA_ROOT/tracing if that
 *    exists (trace_pipe: a FIFO the test writes); a write to a tunable is checked against the ranges of
 *    the ABI document (EINVAL keeps the old value), file modes do the
 *    rest (a user other than root gets EACCES).
 *
 * Environment:
 *   FAKE_IOPA_ROOT    the directory above (required for sysfs and lists)
 *   FAKE_IOPA_LIST    all (default): root lists everything, others get
 *                     EPERM for F_ALL; eperm: F_ALL refused even to root;
 *                     enotty: the ioctl is unknown; nofeat: no
 *                     IOPA_FEAT_LIST; noopen: /dev/iopa gives EACCES
 *   FAKE_IOPA_NSUBS   list that many canned submitters instead
 *   FAKE_IOPA_CGROUP_ID  the cgroup id of the canned ones (default 0)
 *   FAKE_IOPA_GROW    after the first call, that many more canned ones
 *   FAKE_IOPA_EINVAL  a tunable whose writes always fail with EINVAL
 *   FAKE_IOPA_EACCES  a tunable that cannot be opened for writing
 *   FAKE_IOPA_FEATURES  the feature bits GET_FEATURES reports (strtoull,
 *                     base 0; default 0x20ff: the first eight and
 *                     IOPA_FEAT_METRICS, whose counters and histograms
 *                     the fake keeps)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <linux/iopa.h>

#define MAX_FDS 1024

enum { K_NONE, K_CTX, K_SUB, K_WORKER, K_TUNABLE };

static char fd_kind[MAX_FDS];
static signed char fd_tun[MAX_FDS];	/* K_TUNABLE: index in tunables[] */
static int list_calls;

static int (*real_open)(const char *, int, ...);
static int (*real_stat)(const char *, struct stat *);
static int (*real_access)(const char *, int);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, ...);

__attribute__((constructor)) static void fake_init(void)
{
	real_open = dlsym(RTLD_NEXT, "open");
	real_stat = dlsym(RTLD_NEXT, "stat");
	real_access = dlsym(RTLD_NEXT, "access");
	real_write = dlsym(RTLD_NEXT, "write");
	real_close = dlsym(RTLD_NEXT, "close");
	real_ioctl = dlsym(RTLD_NEXT, "ioctl");
}

static const char *env(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* The ranges of Documentation/ABI/testing/sysfs-class-misc-iopa. */
static const struct { const char *name; unsigned long min, max; } tunables[] = {
	{ "max_jobs", 1, 1048576 }, { "max_submitters", 1, 65536 },
	{ "max_user_submitters", 1, 1048576 },
	{ "max_workers", 1, 65536 }, { "max_total_jobs", 1, 16777216 },
	{ "learn_knees", 0, 1 },
	{ "increase_threshold", 1001, 10000 }, { "decrease_threshold", 1, 999 },
	{ "fast_cycle_ms", 1, 3600000 }, { "normal_cycle_ms", 1, 3600000 },
	{ "hold_cycle_ms", 1, 3600000 }, { "history", 1, 8 },
	{ "init_limit", 0, 4096 }, { "fast_cap", 0, 4096 },
	{ "max_limit", 1, 4096 }, { "gain_threshold", 1001, 10000 },
	{ "default_policy", 0, 0 },
};

/* ---- paths ------------------------------------------------------------------ */

static const char *map(const char *path, char *buf, size_t len)
{
	static const char cls[] = "/sys/class/misc/iopa", mod[] = "/sys/module/iopa",
		trc[] = "/sys/kernel/tracing";
	const char *root = env("FAKE_IOPA_ROOT", NULL);

	if (!real_access)
		fake_init();
	if (!root || !path)
		return path;
	if (!strncmp(path, cls, sizeof(cls) - 1) &&
	    (path[sizeof(cls) - 1] == '/' || !path[sizeof(cls) - 1])) {
		snprintf(buf, len, "%s/class%s", root, path + sizeof(cls) - 1);
		return buf;
	}
	if (!strncmp(path, mod, sizeof(mod) - 1) &&
	    (path[sizeof(mod) - 1] == '/' || !path[sizeof(mod) - 1])) {
		snprintf(buf, len, "%s/module%s", root, path + sizeof(mod) - 1);
		return buf;
	}
	if (!strncmp(path, trc, sizeof(trc) - 1) &&
	    (path[sizeof(trc) - 1] == '/' || !path[sizeof(trc) - 1])) {
		snprintf(buf, len, "%s/tracing", root);
		if (real_access(buf, F_OK))
			return path;	/* no fake tracefs */
		snprintf(buf, len, "%s/tracing%s", root, path + sizeof(trc) - 1);
		return buf;
	}
	return path;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int new_fd(int kind)
{
	int fd = real_open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd >= MAX_FDS) {
		real_close(fd);
		errno = EMFILE;
		return -1;
	}
	if (fd >= 0)
		fd_kind[fd] = (char)kind;
	return fd;
}

static int do_open(const char *path, int flags, mode_t mode)
{
	char buf[512];
	const char *p;
	int fd, i;

	if (!real_open)
		fake_init();
	if (path && !strcmp(path, "/dev/iopa")) {
		const char *root = env("FAKE_IOPA_ROOT", NULL);

		if (!strcmp(env("FAKE_IOPA_LIST", "all"), "noopen")) {
			errno = EACCES;
			return -1;
		}
		/* $FAKE_IOPA_ROOT/node, if there, stands for the node's mode. */
		if (root) {
			snprintf(buf, sizeof(buf), "%s/node", root);
			if (!real_access(buf, F_OK) &&
			    real_access(buf, R_OK | W_OK)) {
				errno = EACCES;
				return -1;
			}
		}
		return new_fd(K_CTX);
	}
	p = map(path, buf, sizeof(buf));
	if (p == buf && (flags & O_ACCMODE) != O_RDONLY &&
	    !strcmp(base(p), env("FAKE_IOPA_EACCES", "-"))) {
		errno = EACCES;
		return -1;
	}
	/* Like sysfs: no O_TRUNC; a valid write() replaces the value. */
	fd = real_open(p, p == buf ? flags & ~O_TRUNC : flags, mode);
	if (fd < 0 || fd >= MAX_FDS)
		return fd;
	fd_kind[fd] = K_NONE;
	if (p == buf && (flags & O_ACCMODE) != O_RDONLY)
		for (i = 0; i < (int)(sizeof(tunables) / sizeof(tunables[0])); i++)
			if (!strcmp(base(p), tunables[i].name)) {
				fd_kind[fd] = K_TUNABLE;
				fd_tun[fd] = (signed char)i;
			}
	return fd;
}

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return do_open(path, flags, mode);
}

int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	va_list ap;

	va_start(ap, flags);
	if (flags & O_CREAT)
		mode = va_arg(ap, mode_t);
	va_end(ap);
	return do_open(path, flags, mode);
}

int __open_2(const char *path, int flags)
{
	return do_open(path, flags, 0);
}

int __open64_2(const char *path, int flags)
{
	return do_open(path, flags, 0);
}

int stat(const char *path, struct stat *st)
{
	char buf[512];

	if (!real_stat)
		fake_init();
	return real_stat(map(path, buf, sizeof(buf)), st);
}

int access(const char *path, int mode)
{
	char buf[512];

	if (!real_access)
		fake_init();
	return real_access(map(path, buf, sizeof(buf)), mode);
}

/* A tunable's store(): kstrtouint(buf, 0) in range, or a policy name. */
static int tunable_ok(int i, const char *p, size_t n)
{
	char v[64];
	unsigned long x;
	char *end;

	if (n == 0 || n >= sizeof(v))
		return 0;
	memcpy(v, p, n);
	v[n] = '\0';
	if (v[n - 1] == '\n')
		v[--n] = '\0';
	if (!strcmp(tunables[i].name, "default_policy"))
		return !strcmp(v, "iopa") || !strcmp(v, "hillclimb") ||
		       !strcmp(v, "bracket");
	if (!n || v[0] == '-' || v[0] == '+' || v[0] == ' ')
		return 0;
	errno = 0;
	x = strtoul(v, &end, 0);
	return !errno && !*end && x <= 0xffffffffUL && x >= tunables[i].min &&
	       x <= tunables[i].max &&
	       strcmp(tunables[i].name, env("FAKE_IOPA_EINVAL", "-"));
}

ssize_t write(int fd, const void *p, size_t n)
{
	if (!real_write)
		fake_init();
	if (fd >= 0 && fd < MAX_FDS && fd_kind[fd] == K_TUNABLE) {
		if (!tunable_ok(fd_tun[fd], p, n)) {
			errno = EINVAL;
			return -1;
		}
		if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
			return -1;
	}
	return real_write(fd, p, n);
}

int close(int fd)
{
	if (!real_close)
		fake_init();
	if (fd >= 0 && fd < MAX_FDS)
		fd_kind[fd] = K_NONE;
	return real_close(fd);
}

/* ---- the queue (one submitter per process) --------------------------------- */

struct fjob {
	struct iopa_job	job;		/* .fd: our dup, -1 once ended */
	uint64_t	id;
	int		state;		/* 0 pending, 1 running, 2 done, 3 reaped */
	int		res;
	uint64_t	submit_us;	/* CLOCK_MONOTONIC */
	uint64_t	fetch_us;
};

/* What a cycle saw of the jobs' times, as the kernel sums them. */
struct fcycle {
	uint64_t	wait_us;	/* sum of the waits of jobs dispatched */
	uint64_t	dispatched;
	uint64_t	svc_us;		/* sum of the service times completed */
	uint64_t	svc_sq;		/* ... of their squares */
	uint64_t	jobs;		/* completed */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static struct fjob *jobs;
static size_t nr_jobs, cap_jobs, first_pending, first_done;
static struct iopa_sub_info me;		/* our submitter, as listed */
static int have_sub, nr_workers, nr_waiting;
static struct timespec created;
static struct fcycle cyc_now, cyc_last;	/* the cycle under way, the last */
static uint64_t cyc_index;		/* cycles ended when cyc_now began */

static uint64_t ms_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)(now.tv_sec - t->tv_sec) * 1000 +
	       (uint64_t)(now.tv_nsec / 1000000) - (uint64_t)(t->tv_nsec / 1000000);
}

static uint64_t now_us(void)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
}

static uint64_t isqrt(uint64_t x)
{
	uint64_t r = 0, b = 1ULL << 62;

	while (b > x)
		b >>= 2;
	while (b) {
		if (x >= r + b) {
			x -= r + b;
			r = (r >> 1) + b;
		} else {
			r >>= 1;
		}
		b >>= 2;
	}
	return r;
}

/*
 * The kernel's estimate of a cycle's throughput standard error, per
 * mille (kernel/ctl.c, iopa_ctl_br_var()): squared coefficient of
 * variation of the service times over the completions, plus the jobs cut
 * by the cycle's edges, plus a floor of 2%; at most 50%.
 */
static uint32_t noise_permille(const struct fcycle *c, uint32_t limit)
{
	uint64_t k = c->jobs, mean, var, cv2 = 0, v;

	if (!k)
		return 500;
	mean = c->svc_us / k;
	if (mean) {
		uint64_t sq = c->svc_sq / k;

		var = sq > mean * mean ? sq - mean * mean : 0;
		cv2 = (uint64_t)((double)var * 1000000 / ((double)mean * mean));
		if (cv2 > 16000000)
			cv2 = 16000000;
	}
	v = cv2 / k + 1000000ULL * limit / (12 * k * k) + 400;
	return (uint32_t)isqrt(v < 250000 ? v : 250000);
}

/* Cycles pass every 500 ms since the submitter was created. */
static uint64_t cycles_now(void)
{
	return have_sub ? ms_since(&created) / 500 : 0;
}

/* End the cycles that have passed: cyc_last is the last one ended. */
static void cycle_roll(void)
{
	uint64_t c = cycles_now();

	if (c == cyc_index)
		return;
	if (c == cyc_index + 1)
		cyc_last = cyc_now;
	else
		memset(&cyc_last, 0, sizeof(cyc_last));	/* an empty one */
	memset(&cyc_now, 0, sizeof(cyc_now));
	cyc_index = c;
}

/* The rates are a function of the cycles; the times are measured. */
static void fill_state(struct iopa_state *st)
{
	cycle_roll();
	*st = me.state;
	st->cycles = cycles_now();
	if (st->cycles) {
		const struct fcycle *c = &cyc_last;

		st->wait_us = (uint32_t)(c->dispatched ?
					 c->wait_us / c->dispatched : 0);
		st->svc_us = (uint32_t)(c->jobs ? c->svc_us / c->jobs : 0);
		st->completions = (uint32_t)c->jobs;
		st->noise_permille = noise_permille(c, me.state.limit);
	}
	st->jobs_per_s = st->cycles * 7;
	st->bytes_per_s = st->cycles * 4096 * 7;
	st->inflight = (uint32_t)me.stats.inflight;
	st->pending = (uint32_t)me.stats.pending;
}

/* Publish our submitter for the LIST_SUBMITTERS of other processes. */
static void publish(void)
{
	const char *root = env("FAKE_IOPA_ROOT", NULL);
	char path[512], tmp[520];
	int fd;

	if (!root || !have_sub)
		return;
	fill_state(&me.state);
	me.ctx_workers = (uint32_t)nr_workers;
	me.ctx_waiting = (uint32_t)nr_waiting;
	snprintf(path, sizeof(path), "%s/subs/%d", root, (int)getpid());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = real_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (real_write(fd, &me, sizeof(me)) == (ssize_t)sizeof(me))
		rename(tmp, path);
	real_close(fd);
}

/* IOPA_POLICY_* of $FAKE_IOPA_ROOT/class/default_policy; bracket if none. */
static uint32_t default_policy(void)
{
	const char *root = env("FAKE_IOPA_ROOT", NULL);
	char path[512], buf[32] = "";
	ssize_t n;
	int fd;

	if (!root)
		return IOPA_POLICY_BRACKET;
	snprintf(path, sizeof(path), "%s/class/default_policy", root);
	fd = real_open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return IOPA_POLICY_BRACKET;
	n = read(fd, buf, sizeof(buf) - 1);
	real_close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (!strcmp(buf, "iopa\n"))
		return IOPA_POLICY_IOPA;
	if (!strcmp(buf, "hillclimb\n"))
		return IOPA_POLICY_HILLCLIMB;
	return IOPA_POLICY_BRACKET;
}

static int sub_create(const struct iopa_submitter_create *c)
{
	int fd;

	if (c->flags || c->reserved[0] || c->reserved[1] || c->reserved[2] ||
	    c->limit > IOPA_LIMIT_MAX)
		return -EINVAL;
	if (have_sub)
		return -ENOSPC;	/* the fake holds one per process */
	fd = new_fd(K_SUB);
	if (fd < 0)
		return -errno;
	memset(&me, 0, sizeof(me));
	me.ctx_id = (uint32_t)getpid();
	me.sub_id = 1;
	me.pid = (int32_t)getpid();
	prctl(PR_GET_NAME, me.comm, 0, 0, 0);
	me.state.limit = c->limit ? c->limit : 1;
	me.state.mode = c->limit ? IOPA_MODE_FIXED : IOPA_MODE_FAST;
	me.state.flags = c->limit ? IOPA_LIMIT_F_FIXED : 0;
	me.state.policy = default_policy();
	me.state.weight = IOPA_WEIGHT_DEFAULT;
	me.state.cycle_ms = 1000;
	me.state.nr_devs = 1;
	me.state.devs[0] = 42;
	clock_gettime(CLOCK_MONOTONIC, &created);
	memset(&cyc_now, 0, sizeof(cyc_now));
	memset(&cyc_last, 0, sizeof(cyc_last));
	cyc_index = 0;
	have_sub = 1;
	publish();
	return fd;
}

static int submit(const struct iopa_submit *s)
{
	const struct iopa_job *in = (const struct iopa_job *)(uintptr_t)s->jobs;
	uint32_t i;

	if (!s->nr || s->nr > IOPA_BATCH_MAX || (s->flags & ~IOPA_SUBMIT_F_MASK) ||
	    s->reserved[0] || s->reserved[1])
		return -EINVAL;
	for (i = 0; i < s->nr; i++) {
		struct fjob *j;
		int fd = fcntl(in[i].fd, F_DUPFD_CLOEXEC, 0);

		if (fd < 0)
			return i ? (int)i : -EBADF;
		if (nr_jobs == cap_jobs) {
			size_t cap = cap_jobs ? cap_jobs * 2 : 256;
			struct fjob *nj = realloc(jobs, cap * sizeof(*nj));

			if (!nj) {
				real_close(fd);
				return i ? (int)i : -ENOMEM;
			}
			jobs = nj;
			cap_jobs = cap;
		}
		j = &jobs[nr_jobs];
		memset(j, 0, sizeof(*j));
		j->job = in[i];
		j->job.fd = fd;
		j->submit_us = now_us();
		j->id = ++nr_jobs;
		me.stats.submitted++;
		me.stats.pending++;
	}
	pthread_cond_broadcast(&cv);
	publish();
	return (int)s->nr;
}

static int deadline_wait(uint64_t timeout_ns, const struct timespec *start)
{
	struct timespec t = *start;

	if (!timeout_ns)
		return pthread_cond_wait(&cv, &mu);
	t.tv_sec += (time_t)(timeout_ns / 1000000000);
	t.tv_nsec += (long)(timeout_ns % 1000000000);
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
	return pthread_cond_timedwait(&cv, &mu, &t);
}

static int reap(struct iopa_reap *r)
{
	struct iopa_cqe *out = (struct iopa_cqe *)(uintptr_t)r->cqes;
	struct timespec start;
	uint32_t n = 0;

	if (!r->nr || r->nr > IOPA_BATCH_MAX || (r->flags & ~IOPA_REAP_F_MASK) ||
	    r->reserved[0] || r->reserved[1])
		return -EINVAL;
	clock_gettime(CLOCK_REALTIME, &start);
	for (;;) {
		size_t i;

		for (i = first_done; i < nr_jobs && n < r->nr; i++)
			if (jobs[i].state == 2) {
				jobs[i].state = 3;
				out[n].user_data = jobs[i].job.user_data;
				out[n].job_id = jobs[i].id;
				out[n].res = jobs[i].res;
				out[n].flags = 0;
				me.stats.unreaped--;
				n++;
			}
		while (first_done < nr_jobs && jobs[first_done].state == 3)
			first_done++;
		if (n) {
			publish();
			return (int)n;
		}
		if (!(r->flags & IOPA_REAP_F_WAIT))
			return -EAGAIN;
		if (deadline_wait(r->timeout_ns, &start) == ETIMEDOUT)
			return -ETIMEDOUT;
	}
}

/* The bucket of struct iopa_metrics' histograms that @us falls in. */
static unsigned int hist_bucket(uint64_t us)
{
	unsigned int i = 0;

	while (i < IOPA_HIST_BUCKETS - 1 && us > (1ULL << i))
		i++;
	return i;
}

static int complete(const struct iopa_done *d)
{
	struct fjob *j;

	if (!d->job_id || d->job_id > nr_jobs || d->flags || d->reserved)
		return d->flags || d->reserved ? -EINVAL : -ENOENT;
	j = &jobs[d->job_id - 1];
	if (j->state != 1)
		return -ENOENT;
	j->state = 2;
	j->res = d->res;
	cycle_roll();
	{
		uint64_t svc = now_us() - j->fetch_us;

		cyc_now.svc_us += svc;
		cyc_now.svc_sq += svc * svc;
		cyc_now.jobs++;
		me.metrics.svc_us += svc;
		me.metrics.svc_hist[hist_bucket(svc)]++;
		if (d->res < 0)
			me.metrics.failed++;
	}
	real_close(j->job.fd);
	j->job.fd = -1;
	me.stats.inflight--;
	me.stats.completed++;
	me.stats.unreaped++;
	pthread_cond_broadcast(&cv);
	return 0;
}

static int fetch(struct iopa_fetch *f, int and_complete)
{
	struct timespec start;
	int r;

	if ((f->flags & ~IOPA_FETCH_F_MASK) || f->reserved0 ||
	    f->reserved[0] || f->reserved[1])
		return -EINVAL;
	if (and_complete) {
		r = complete(&f->done);
		if (r)
			return r;
	}
	clock_gettime(CLOCK_REALTIME, &start);
	nr_waiting++;
	for (;;) {
		while (first_pending < nr_jobs && jobs[first_pending].state != 0)
			first_pending++;
		if (have_sub && first_pending < nr_jobs &&
		    me.stats.inflight < me.state.limit) {
			struct fjob *j = &jobs[first_pending];
			int fd = fcntl(j->job.fd, F_DUPFD_CLOEXEC, 0);

			nr_waiting--;
			if (fd < 0)
				return -EMFILE;
			j->state = 1;
			j->fetch_us = now_us();
			cycle_roll();
			cyc_now.wait_us += j->fetch_us - j->submit_us;
			cyc_now.dispatched++;
			me.metrics.wait_us += j->fetch_us - j->submit_us;
			me.metrics.wait_hist[hist_bucket(j->fetch_us -
							 j->submit_us)]++;
			me.stats.pending--;
			me.stats.inflight++;
			me.stats.dispatched++;
			memset(&f->work, 0, sizeof(f->work));
			f->work.job_id = j->id;
			f->work.user_data = j->job.user_data;
			f->work.offset = j->job.offset;
			f->work.len = j->job.len;
			f->work.fd = fd;
			publish();
			return 0;
		}
		if (f->flags & IOPA_FETCH_F_NONBLOCK) {
			nr_waiting--;
			return -EAGAIN;
		}
		if (deadline_wait(f->timeout_ns, &start) == ETIMEDOUT) {
			nr_waiting--;
			return -ETIMEDOUT;
		}
	}
}

/* ---- listing ------------------------------------------------------------------ */

static void canned(struct iopa_sub_info *si, uint32_t i)
{
	memset(si, 0, sizeof(*si));
	si->ctx_id = 1 + i / 2;
	si->sub_id = 1 + i % 2;
	si->pid = (int32_t)(1000 + i);
	snprintf(si->comm, sizeof(si->comm), "fake\"%u\n", i % 10000);
	si->ctx_workers = 2;
	si->state.limit = 1 + i % 8;
	si->state.mode = i % 6;
	si->state.policy = 1 + i % 3;
	si->state.bytes_per_s = (uint64_t)i * 1000000;
	si->state.jobs_per_s = i;
	si->state.cycles = i;
	si->state.wait_us = i * 1234;
	si->state.svc_us = 2000 + i;
	si->state.completions = 10 * i;
	si->state.noise_permille = 20 + i % 481;
	si->stats.submitted = 10 * i;
	si->stats.completed = 9 * i;
	/* Cumulative metrics: one wait and one service time per completion. */
	si->metrics.io_bytes = (uint64_t)i * 4096;
	si->metrics.failed = i % 3;
	si->metrics.wait_hist[i % IOPA_HIST_BUCKETS] = 9 * i;
	si->metrics.svc_hist[(i + 3) % IOPA_HIST_BUCKETS] = 9 * i;
	si->metrics.wait_us = 9ULL * i * (1ULL << (i % IOPA_HIST_BUCKETS));
	si->metrics.svc_us = 9ULL * i * 1000;
	si->metrics.knee = i % 5;
	si->metrics.cgroup_id = strtoull(env("FAKE_IOPA_CGROUP_ID", "0"), NULL, 0);
	/* Every other one shares device 8:0 or 8:16. */
	if (i % 2) {
		si->state.nr_devs = 1;
		si->state.devs[0] = (8U << 20) | (i % 4 == 1 ? 0 : 16);
		si->state.budget = 4 + i % 7;
		si->state.sharers = 1 + i % 3;
		si->state.group_cycles = i;
	}
}

/* The published submitters of live processes, in @out (room @nr). */
static uint32_t published(struct iopa_sub_info *out, uint32_t nr)
{
	const char *root = env("FAKE_IOPA_ROOT", NULL);
	uint32_t total = 0;
	char path[512];
	struct dirent *e;
	DIR *d;

	if (!root)
		return 0;
	snprintf(path, sizeof(path), "%s/subs", root);
	d = opendir(path);
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		int pid = atoi(e->d_name), fd;

		if (pid <= 0 || strchr(e->d_name, '.') ||
		    (kill(pid, 0) && errno == ESRCH))
			continue;
		if (total < nr) {
			snprintf(path, sizeof(path), "%s/subs/%s", root, e->d_name);
			fd = real_open(path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			if (read(fd, &out[total], sizeof(out[0])) != sizeof(out[0])) {
				real_close(fd);
				continue;
			}
			real_close(fd);
		}
		total++;
	}
	closedir(d);
	return total;
}

static int fake_list(int fd, struct iopa_list *l)
{
	const char *mode = env("FAKE_IOPA_LIST", "all");
	struct iopa_sub_info *subs = (struct iopa_sub_info *)(uintptr_t)l->subs;
	uint32_t total, i;

	if (!strcmp(mode, "enotty") || !strcmp(mode, "nofeat"))
		return -ENOTTY;
	if (fd_kind[fd] != K_CTX)
		return -ENOTTY;
	if (l->reserved0 || l->reserved || (l->flags & ~IOPA_LIST_F_MASK) ||
	    l->nr > IOPA_LIST_MAX || l->entry_size != sizeof(*subs))
		return -EINVAL;
	if (l->nr && !subs)
		return -EFAULT;
	if ((l->flags & IOPA_LIST_F_ALL) &&
	    (!strcmp(mode, "eperm") || geteuid() != 0))
		return -EPERM;
	if (!(l->flags & IOPA_LIST_F_ALL)) {
		/* The caller's context: its own submitter, if it has one. */
		total = have_sub ? 1 : 0;
		if (total && l->nr) {
			fill_state(&me.state);
			subs[0] = me;
		}
	} else if (getenv("FAKE_IOPA_NSUBS")) {
		total = (uint32_t)atoi(getenv("FAKE_IOPA_NSUBS"));
		if (list_calls++)
			total += (uint32_t)atoi(env("FAKE_IOPA_GROW", "0"));
		for (i = 0; i < total && i < l->nr; i++)
			canned(&subs[i], i);
	} else {
		total = published(subs, l->nr);
	}
	l->total = total;
	l->filled = total < l->nr ? total : l->nr;
	l->entry_size = sizeof(*subs);
	return 0;
}

/* ---- ioctl ---------------------------------------------------------------------- */

static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	int kind = fd_kind[fd];

	if (req == IOPA_IOC_GET_FEATURES) {
		struct iopa_features *f = arg;

		memset(f, 0, sizeof(*f));
		f->abi_version = IOPA_ABI_VERSION;
		f->features = strtoull(env("FAKE_IOPA_FEATURES", "0x20ff"), NULL, 0);
		if (!strcmp(env("FAKE_IOPA_LIST", "all"), "nofeat"))
			f->features &= ~IOPA_FEAT_LIST;
		f->batch_max = IOPA_BATCH_MAX;
		f->limit_max = IOPA_LIMIT_MAX;
		f->worker_max_jobs = IOPA_WORKER_MAX_JOBS;
		return 0;
	}
	if (req == IOPA_IOC_LIST_SUBMITTERS) {
		if (!strcmp(env("FAKE_IOPA_LIST", "all"), "nofeat")) {
			/* iopactl must not even ask. */
			fprintf(stderr, "fake-iopa: LIST_SUBMITTERS without IOPA_FEAT_LIST\n");
			abort();
		}
		return fake_list(fd, arg);
	}
	if (kind == K_CTX && req == IOPA_IOC_SUBMITTER_CREATE)
		return sub_create(arg);
	if (kind == K_CTX && req == IOPA_IOC_WORKER_CREATE) {
		int w = new_fd(K_WORKER);

		if (w < 0)
			return -errno;
		nr_workers++;
		publish();
		return w;
	}
	if ((kind == K_CTX || kind == K_SUB) && req == IOPA_IOC_GET_STATS) {
		struct iopa_stats *st = arg;

		*st = me.stats;
		if (kind == K_CTX) {
			st->nr_submitters = (uint32_t)have_sub;
			st->nr_workers = (uint32_t)nr_workers;
			st->nr_waiting = (uint32_t)nr_waiting;
		}
		return 0;
	}
	if (kind == K_SUB) {
		switch (req) {
		case IOPA_IOC_SUBMIT:
			return submit(arg);
		case IOPA_IOC_REAP:
			return reap(arg);
		case IOPA_IOC_GET_STATE:
			/* What others list is as fresh as this answer. */
			publish();
			fill_state(arg);
			return 0;
		case IOPA_IOC_SET_ADAPT: {
			struct iopa_adapt *a = arg;

			if (a->policy > IOPA_POLICY_MAX || a->min > IOPA_LIMIT_MAX ||
			    a->max > IOPA_LIMIT_MAX || (a->max && a->min > a->max) ||
			    (a->flags & ~IOPA_ADAPT_F_MASK) || a->reserved[0] ||
			    a->reserved[1] || a->reserved[2])
				return -EINVAL;
			if ((a->flags & IOPA_ADAPT_F_WEIGHT) ?
			    (a->weight < IOPA_WEIGHT_MIN ||
			     a->weight > IOPA_WEIGHT_MAX) : a->weight != 0)
				return -EINVAL;
			if (a->flags & IOPA_ADAPT_F_WEIGHT)
				me.state.weight = a->weight;
			if (a->policy)
				me.state.policy = a->policy;
			me.state.min = a->min;
			me.state.max = a->max;
			publish();
			return 0;
		}
		case IOPA_IOC_SET_ORDER: {
			struct iopa_order *o = arg;

			if (o->order > IOPA_ORDER_MAX || o->flags ||
			    o->reserved[0] || o->reserved[1])
				return -EINVAL;
			me.state.order = o->order;
			publish();
			return 0;
		}
		case IOPA_IOC_SET_LIMIT: {
			struct iopa_limit *l = arg;

			if (l->limit > IOPA_LIMIT_MAX || l->flags)
				return -EINVAL;
			if (l->limit) {
				me.state.limit = l->limit;
				me.state.mode = IOPA_MODE_FIXED;
				me.state.flags = IOPA_LIMIT_F_FIXED;
			} else if (me.state.flags) {
				me.state.mode = IOPA_MODE_NORMAL;
				me.state.flags = 0;
			}
			pthread_cond_broadcast(&cv);
			publish();
			return 0;
		}
		case IOPA_IOC_GET_LIMIT: {
			struct iopa_limit *l = arg;

			l->limit = me.state.limit;
			l->flags = me.state.flags;
			return 0;
		}
		}
	}
	if (kind == K_WORKER) {
		switch (req) {
		case IOPA_IOC_FETCH:
			return fetch(arg, 0);
		case IOPA_IOC_COMPLETE_AND_FETCH:
			return fetch(arg, 1);
		case IOPA_IOC_COMPLETE:
			return complete(arg);
		}
	}
	return -ENOTTY;
}

int ioctl(int fd, unsigned long req, ...)
{
	void *arg;
	va_list ap;
	int r;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (!real_ioctl)
		fake_init();
	if (fd < 0 || fd >= MAX_FDS || fd_kind[fd] == K_NONE ||
	    fd_kind[fd] == K_TUNABLE)
		return real_ioctl(fd, req, arg);
	pthread_mutex_lock(&mu);
	r = fake_ioctl(fd, req, arg);
	pthread_mutex_unlock(&mu);
	if (r < 0) {
		errno = -r;
		return -1;
	}
	return r;
}
