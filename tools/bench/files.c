// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-bench-files: the file-processing microbenchmark of the IOPA paper
 * through /dev/iopa.
 *
 *   iopa-bench-files [-m MODE] [-o ORDER] [-w WORKERS] [-t SECS]
 *                    [-q OUTSTANDING] [-b BATCH] [-i MS] [-s FILE]
 *                    [-p PREFIX] [-l LABEL] [-D FILE] [-r] [-d]
 *                    [-c PASSES] [-T SECS:DIR2 | -W N1:N2:DIR2]
 *                    [-n TENANTS [-j SECS]] [-k] DIR
 *
 * One submitter walks DIR (recursively, in readdir order: on ext4 with
 * dir_index that is hash order, unrelated to where the files lie), opens
 * each regular file, submits one job for its whole length, closes its own
 * fd (the job holds the file) and reaps completions, keeping at most
 * OUTSTANDING jobs submitted and not reaped.  WORKERS threads (the same
 * number whatever the mode: only the kernel's limit differs, the surplus
 * waits in FETCH) each fetch a job, pread() the whole file into a buffer,
 * checksum it, close the job's fd and COMPLETE_AND_FETCH.
 *
 *   -m fixed:N         IOPA_IOC_SET_LIMIT N (pinned)
 *   -m adapt:default   SET_LIMIT 0 and no SET_ADAPT: the policy is the
 *                      module's default_policy (sysfs) (the default mode)
 *   -m adapt:POLICY    SET_LIMIT 0 + SET_ADAPT POLICY: iopa (1),
 *                      hillclimb (2), bracket (3) or a number
 *   -o fifo|sorted     IOPA_IOC_SET_ORDER, before the first submission
 *                      (default fifo; sorted needs IOPA_FEAT_ORDER)
 *   -w WORKERS         worker threads (default 64)
 *   -t SECS            stop after SECS seconds (0: run until every file
 *                      is done, the default): pending jobs are cancelled,
 *                      running ones stop reading at their next chunk, and
 *                      the bytes read until then count
 *   -q OUTSTANDING     most jobs submitted and not reaped (default 4096)
 *   -b BATCH           jobs per SUBMIT (default 64)
 *   -i MS              sampling interval (default 100)
 *   -s FILE            write the time series to FILE ("-": stdout; with
 *                      -n, tenant K writes FILE.K)
 *   -p PREFIX          first word of each time-series line (default "ts")
 *   -l LABEL           added to the summary as label=LABEL
 *   -D FILE            write, per fetched job in fetch order, "t_us job_id
 *                      worker block" (block: FIBMAP of the file's first
 *                      block, -1 if refused; needs CAP_SYS_RAWIO): to check
 *                      the dispatch order
 *   -r                 repeat: walk DIR again each time the walk ends,
 *                      until the time cap (needs -t)
 *   -d                 drop each file's pages from the page cache when its
 *                      job is done (POSIX_FADV_DONTNEED), so that a repeated
 *                      walk reads the device again
 *   -c PASSES          CPU-bound jobs: PASSES more checksum passes over
 *                      each chunk read (on cached files: the CPUs, not the
 *                      device, are the limit)
 *   -T SECS:DIR2       switch: from SECS seconds on, walk DIR2 instead of
 *                      DIR (jobs already submitted still run; -q bounds
 *                      them); with -r each is repeated until then,
 *                      without -r DIR2 starts early if DIR ends early
 *   -W N1:N2:DIR2      a batch: N1 files of DIR (walked again as needed),
 *                      then N2 files of DIR2 (the same), then the run ends
 *                      when every job is done (-t stays a safety cap): a
 *                      fixed amount of work, so that a phase run slowly
 *                      costs its own time (switch_ms: when DIR2 began)
 *   -n TENANTS         TENANTS processes, each with its own /dev/iopa
 *                      context, submitter and WORKERS workers, in the same
 *                      MODE; tenant K takes the files K, K + TENANTS, ...
 *                      of each walk; one time base and cap for all
 *   -j SECS            with -n: the last tenant starts (opens /dev/iopa)
 *                      SECS seconds after the others
 *   -k                 only check that the module takes MODE (creates the
 *                      submitter, sets the limit and policy) and exit: 0
 *                      if it does, 1 with a message if not
 *
 * Output, one line on stdout per tenant:
 *
 *   files mode=M order=O workers=W files=N bytes=B secs=S mbps=X
 *         first_job_ms=T limit_final=L limit_mean=L limit_min=L
 *         limit_max=L stopped=done|cap policy=P cycles=C [passes=N]
 *         [switch_ms=T] [tenant=K tenants=N start_ms=T] [label=LABEL]
 *
 * (MB = 10^6 bytes; secs from the tenant's start to the last completion,
 * or the cap; first_job_ms when its first SUBMIT took a job, on the time
 * series' clock, -1 if none did: the walk of a cold directory and the
 * opening of a first batch come before it; the limit from IOPA_IOC_GET_STATE at each sample, its mean
 * over the samples; policy and cycles from the last GET_STATE: the
 * submitter's policy by name, "policyN" if unknown, and its controller
 * cycles.)  The time series has one line per sample after a
 * "# PREFIX columns" line:
 *
 *   PREFIX t_ms bytes files limit mode inflight pending cycles group_cycles
 *
 * cumulative bytes and files done at t_ms after the start (of the first
 * tenants, with -n); mode as IOPA_MODE_* names.  Exit status 0, or 1 with
 * a message on stderr.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/iopa.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sys/wait.h>

#define CHUNK		(256 * 1024)
#define FETCH_NS	(100 * 1000 * 1000ULL)
#define USER_DATA	1

#ifndef IOPA_POLICY_BRACKET
#define IOPA_POLICY_BRACKET	3	/* older uapi headers */
#endif

static const char *opt_mode = "adapt:default", *opt_order = "fifo";
static const char *opt_series, *opt_prefix = "ts", *opt_label, *opt_dlog;
static const char *opt_dir, *opt_dir2;
static unsigned int nr_workers = 64, max_out = 4096, batch = 64;
static unsigned int interval_ms = 100, fixed_limit;
static unsigned int policy;	/* IOPA_POLICY_*, 0: keep the default */
static bool adaptive;		/* adapt:*, not fixed:N */
static bool opt_repeat, opt_dontneed, opt_check;
static unsigned int opt_passes, nr_tenants = 1, tenant;
static double cap_s, switch_s, join_s;
static unsigned long work_n[2];	/* -W: files of DIR, then of DIR2 */

static int ctx_fd = -1, sub_fd = -1;
static double t0;		/* the time base (of every tenant) */
static double t_first;		/* when the first job was submitted (0: none) */
static double t_start;		/* this tenant's start */

static atomic_ullong bytes_done, files_done;
static atomic_bool stop_io;	/* cap reached: workers stop reading */
static atomic_bool quit;	/* everything reaped: workers exit */
static atomic_int worker_error;

struct sample {
	unsigned int t_ms;
	unsigned long long bytes, files, cycles;
	unsigned int limit, mode, inflight, pending, group_cycles;
};
static struct sample *samples;
static size_t nr_samples, max_samples;
static pthread_mutex_t sample_lock = PTHREAD_MUTEX_INITIALIZER;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "iopa-bench-files: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *mode_name(unsigned int m)
{
	static const char *const names[] = {
		[IOPA_MODE_FAST] = "fast", [IOPA_MODE_NORMAL] = "normal",
		[IOPA_MODE_HOLD] = "hold", [IOPA_MODE_FIXED] = "fixed",
		[IOPA_MODE_PROBE] = "probe", [IOPA_MODE_STEADY] = "steady",
	};

	static char other[16];

	if (m < sizeof(names) / sizeof(names[0]) && names[m])
		return names[m];
	snprintf(other, sizeof(other), "mode%u", m);
	return other;
}

static const char *const policy_names[] = {
	[IOPA_POLICY_IOPA] = "iopa", [IOPA_POLICY_HILLCLIMB] = "hillclimb",
	[IOPA_POLICY_BRACKET] = "bracket",
};
#define NR_POLICY_NAMES	(sizeof(policy_names) / sizeof(policy_names[0]))

static const char *policy_name(unsigned int p)
{
	static char other[16];

	if (p < NR_POLICY_NAMES && policy_names[p])
		return policy_names[p];
	snprintf(other, sizeof(other), "policy%u", p);
	return other;
}

/* ---- dispatch log (-D) -------------------------------------------------- */

struct dlog {
	unsigned long long t_us, job_id;
	unsigned int worker;
	long long block;
};
#define DLOG_MAX	(1 << 20)
static struct dlog *dlog;
static atomic_ulong nr_dlog;

static void dlog_add(unsigned int worker, int fd, unsigned long long job_id)
{
	unsigned long i = atomic_fetch_add(&nr_dlog, 1);
	int blk = 0;

	if (i >= DLOG_MAX)
		return;
	dlog[i].t_us = (unsigned long long)((now_s() - t0) * 1e6);
	dlog[i].job_id = job_id;
	dlog[i].worker = worker;
	dlog[i].block = ioctl(fd, FIBMAP, &blk) < 0 ? -1 : blk;
}

/* ---- workers ----------------------------------------------------------- */

struct worker {
	pthread_t thr;
	unsigned int idx;
	int fd;
	unsigned char *buf;
	size_t cap;
	uint64_t sum;
};

/* Read [0, len) of fd into w->buf; returns 0 or -errno. */
static int process(struct worker *w, int fd, uint64_t off, uint64_t len)
{
	uint64_t a = w->sum, b = 0, done = 0;
	unsigned int p;

	if (len > w->cap) {
		free(w->buf);
		w->cap = len;
		w->buf = malloc(len);
		if (!w->buf)
			return -ENOMEM;
	}
	while (done < len) {
		size_t want = len - done < CHUNK ? len - done : CHUNK;
		ssize_t n, i;

		if (atomic_load_explicit(&stop_io, memory_order_relaxed))
			return -EINTR;
		n = pread(fd, w->buf + done, want, off + done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENODATA;	/* the file shrank */
		/*
		 * The "processing": a Fletcher-like sum over 64-bit words,
		 * 1 + opt_passes times (-c).
		 */
		for (p = 0; p <= opt_passes; p++) {
			for (i = 0; i + 8 <= n; i += 8) {
				uint64_t v;

				memcpy(&v, w->buf + done + i, 8);
				a += v;
				b += a;
			}
			for (; i < n; i++)
				a += w->buf[done + i];
		}
		done += n;
		atomic_fetch_add_explicit(&bytes_done, n, memory_order_relaxed);
	}
	w->sum = a ^ b;
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct iopa_fetch f;
	unsigned long cmd = IOPA_IOC_FETCH;

	memset(&f, 0, sizeof(f));
	for (;;) {
		int res;

		f.timeout_ns = FETCH_NS;
		if (ioctl(w->fd, cmd, &f) < 0) {
			if (errno != ETIMEDOUT && errno != EINTR) {
				fprintf(stderr, "iopa-bench-files: %s: %s\n",
					cmd == IOPA_IOC_FETCH ? "FETCH" :
					"COMPLETE_AND_FETCH", strerror(errno));
				atomic_store(&worker_error, 1);
				break;
			}
			/* The completion part took effect; fetch again. */
			cmd = IOPA_IOC_FETCH;
			memset(&f.done, 0, sizeof(f.done));
			if (atomic_load(&quit))
				break;
			continue;
		}
		if (dlog)
			dlog_add(w->idx, f.work.fd, f.work.job_id);
		res = process(w, f.work.fd, f.work.offset, f.work.len);
		if (opt_dontneed)
			posix_fadvise(f.work.fd, 0, 0, POSIX_FADV_DONTNEED);
		close(f.work.fd);
		if (res == 0)
			atomic_fetch_add_explicit(&files_done, 1,
						  memory_order_relaxed);
		else if (res != -EINTR)
			fprintf(stderr, "iopa-bench-files: job %llu: %s\n",
				(unsigned long long)f.work.job_id,
				strerror(-res));
		memset(&f.done, 0, sizeof(f.done));
		f.done.job_id = f.work.job_id;
		f.done.res = res;
		cmd = IOPA_IOC_COMPLETE_AND_FETCH;
	}
	return NULL;
}

/* ---- sampler ----------------------------------------------------------- */

static atomic_bool capped;	/* the time cap passed (set by the sampler) */
static int cancelled;
static double t_cap;
static unsigned long long bytes_at_cap, files_at_cap;

/*
 * Sampler thread, at the tick of the cap: what was read until now counts,
 * nothing after it; workers stop reading at their next chunk.
 */
static void cap_now(void)
{
	bytes_at_cap = atomic_load(&bytes_done);
	files_at_cap = atomic_load(&files_done);
	t_cap = now_s();
	atomic_store(&stop_io, true);
	atomic_store(&capped, true);
}

static void take_sample(void)
{
	struct iopa_state st;
	struct sample s;

	memset(&st, 0, sizeof(st));
	if (ioctl(sub_fd, IOPA_IOC_GET_STATE, &st) < 0)
		die("GET_STATE: %s", strerror(errno));
	s.t_ms = (unsigned int)((now_s() - t0) * 1000 + 0.5);
	s.bytes = atomic_load(&bytes_done);
	s.files = atomic_load(&files_done);
	s.cycles = st.cycles;
	s.group_cycles = st.group_cycles;
	s.limit = st.limit;
	s.mode = st.mode;
	s.inflight = st.inflight;
	s.pending = st.pending;
	pthread_mutex_lock(&sample_lock);
	if (nr_samples == max_samples) {
		max_samples = max_samples ? 2 * max_samples : 1024;
		samples = realloc(samples, max_samples * sizeof(*samples));
		if (!samples)
			die("out of memory");
	}
	samples[nr_samples++] = s;
	pthread_mutex_unlock(&sample_lock);
}

static atomic_bool sampler_stop;

static void *sampler_main(void *unused)
{
	double next = t_start;

	(void)unused;
	while (!atomic_load(&sampler_stop)) {
		double d;

		next += interval_ms / 1000.0;
		d = next - now_s();
		if (d > 0) {
			struct timespec ts = {
				.tv_sec = (time_t)d,
				.tv_nsec = (long)((d - (time_t)d) * 1e9),
			};

			nanosleep(&ts, NULL);
		}
		if (atomic_load(&sampler_stop))
			break;
		if (cap_s > 0 && !atomic_load(&capped) &&
		    next - t0 >= cap_s - 1e-6)
			cap_now();
		take_sample();
	}
	return NULL;
}

/* ---- submitter --------------------------------------------------------- */

static struct iopa_job *jobs;
static struct iopa_cqe *cqes;
static unsigned int nr_jobs;	/* in the batch being built */
static unsigned long outstanding, submitted, reaped, failed;

/* Submitter thread, once it sees the cap: cancel every pending job. */
static void cancel_all(void)
{
	struct iopa_cancel c = { .user_data = USER_DATA,
				 .flags = IOPA_CANCEL_F_ALL };

	if (cancelled || !atomic_load(&capped))
		return;
	cancelled = 1;
	if (ioctl(sub_fd, IOPA_IOC_CANCEL, &c) < 0 && errno != ENOENT &&
	    errno != EALREADY)
		die("CANCEL: %s", strerror(errno));
}

/* Reap what is there; with wait, at least one completion (or a timeout). */
static void reap(int wait)
{
	for (;;) {
		struct iopa_reap r = {
			.cqes = (uintptr_t)cqes, .nr = 256,
			.flags = wait ? IOPA_REAP_F_WAIT : 0,
			.timeout_ns = 50 * 1000 * 1000ULL,
		};
		int n = ioctl(sub_fd, IOPA_IOC_REAP, &r), i;

		if (n < 0) {
			if (errno == EAGAIN || errno == ETIMEDOUT ||
			    errno == EINTR)
				return;
			die("REAP: %s", strerror(errno));
		}
		for (i = 0; i < n; i++)
			if (cqes[i].res < 0 && cqes[i].res != -ECANCELED &&
			    cqes[i].res != -EINTR)
				failed++;
		outstanding -= n;
		reaped += n;
		if (n < 256)
			return;
		wait = 0;
	}
}

static void flush_batch(void)
{
	unsigned int done = 0, i;

	while (done < nr_jobs) {
		struct iopa_submit s = {
			.jobs = (uintptr_t)(jobs + done), .nr = nr_jobs - done,
		};
		int n = ioctl(sub_fd, IOPA_IOC_SUBMIT, &s);

		if (n < 0) {
			if (errno == EAGAIN) {	/* max_jobs: make room */
				reap(1);
				continue;
			}
			die("SUBMIT: %s", strerror(errno));
		}
		if (n > 0 && !t_first)
			t_first = now_s();
		done += n;
		outstanding += n;
		submitted += n;
	}
	for (i = 0; i < nr_jobs; i++)
		close(jobs[i].fd);
	nr_jobs = 0;
}

static void add_job(int fd, uint64_t len)
{
	struct iopa_job *j = &jobs[nr_jobs++];

	memset(j, 0, sizeof(*j));
	j->fd = fd;
	j->len = len;
	j->user_data = USER_DATA;
	if (nr_jobs == batch)
		flush_batch();
	reap(0);
	while (outstanding + nr_jobs >= max_out && !atomic_load(&capped))
		reap(1);
}

static int phase;		/* 0: DIR, 1: DIR2 (after the -T/-W switch) */
static unsigned long walk_seen;	/* regular files met in this walk */
static unsigned long walk_taken;	/* ... and submitted by this tenant */
static unsigned long phase_taken;	/* -W: submitted in this phase */

/* -W: this phase's files are all submitted. */
static bool work_done(void)
{
	return work_n[0] && phase_taken >= work_n[phase];
}

/*
 * Stop walking: the cap passed, (-T) it is time to switch to DIR2, or
 * (-W) this phase's files are submitted.
 */
static bool walk_stop(void)
{
	return atomic_load(&capped) || work_done() ||
	       (opt_dir2 && !work_n[0] && phase == 0 &&
		now_s() - t0 >= switch_s);
}

static void walk(int dfd, const char *path)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;

	if (!d)
		die("%s: %s", path, strerror(errno));
	while (!walk_stop() && (errno = 0, de = readdir(d))) {
		unsigned char type = de->d_type;
		struct stat st;
		int fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
				die("%s/%s: %s", path, de->d_name,
				    strerror(errno));
			type = S_ISDIR(st.st_mode) ? DT_DIR :
			       S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
		}
		if (type == DT_DIR) {
			char sub[4096];

			fd = openat(dfd, de->d_name,
				    O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (fd < 0)
				die("%s/%s: %s", path, de->d_name,
				    strerror(errno));
			snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
			walk(fd, sub);
			continue;
		}
		if (type != DT_REG)
			continue;
		/* -n: this tenant's share of the files. */
		if (walk_seen++ % nr_tenants != tenant)
			continue;
		walk_taken++;
		phase_taken++;
		fd = openat(dfd, de->d_name, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st))
			die("%s/%s: %s", path, de->d_name, strerror(errno));
		add_job(fd, st.st_size);
	}
	if (errno && !walk_stop())
		die("%s: readdir: %s", path, strerror(errno));
	closedir(d);
}

/*
 * The submitter: walk DIR (DIR2 after the switch), again and again with
 * -r, until the cap (or the end of a walk without -r); with -W, walk
 * each until its count of files is submitted.
 */
static void submit_all(void)
{
	for (;;) {
		const char *dir = phase ? opt_dir2 : opt_dir;
		int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		if (dfd < 0)
			die("%s: %s", dir, strerror(errno));
		walk_seen = walk_taken = 0;
		walk(dfd, dir);
		if (atomic_load(&capped))
			return;
		if (work_n[0]) {
			if (!walk_taken)
				die("%s: no regular file", dir);
			if (!work_done())
				continue;	/* walk it again */
			if (phase)
				return;
			phase = 1;
			phase_taken = 0;
			switch_s = now_s() - t0;
			continue;
		}
		if (opt_dir2 && phase == 0 && now_s() - t0 >= switch_s) {
			phase = 1;	/* time to switch (mid-walk or not) */
			continue;
		}
		if (!walk_taken)
			die("%s: no regular file for this tenant", dir);
		if (!opt_repeat) {
			if (opt_dir2 && phase == 0) {
				/* DIR ended before the switch: DIR2 now. */
				phase = 1;
				continue;
			}
			return;
		}
	}
}

/* ---- setup ------------------------------------------------------------- */

static unsigned int parse_uint(const char *s, const char *what,
			       unsigned int lo, unsigned int hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		die("%s: '%s' is not a number in %u..%u", what, s, lo, hi);
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: iopa-bench-files [-m fixed:N|adapt:default|adapt:POLICY]\n"
		"         [-o fifo|sorted] [-w WORKERS] [-t SECS] [-q OUTSTANDING]\n"
		"         [-b BATCH] [-i MS] [-s FILE|-] [-p PREFIX] [-l LABEL] [-D FILE]\n"
		"         [-r] [-d] [-c PASSES] [-T SECS:DIR2 | -W N1:N2:DIR2]\n"
		"         [-n TENANTS [-j SECS]] [-k]\n"
		"         DIR\n"
		"       POLICY: iopa, hillclimb, bracket or a number\n");
	exit(2);
}

static double parse_secs(const char *s, const char *what, char stop)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != stop || v < 0)
		die("%s: '%s' is not a number of seconds", what, s);
	return v;
}

/* -W N1:N2:DIR2 */
static void parse_work(const char *arg)
{
	unsigned long long n[2];
	int len = 0;

	if (sscanf(arg, "%llu:%llu:%n", &n[0], &n[1], &len) != 2 || !len ||
	    !arg[len] || !n[0] || !n[1] || n[0] > 1ULL << 32 ||
	    n[1] > 1ULL << 32)
		die("-W: '%s': use N1:N2:DIR2 (N1, N2 files, 1..2^32)", arg);
	work_n[0] = n[0];
	work_n[1] = n[1];
	opt_dir2 = arg + len;
}

static void parse_mode(void)
{
	const char *p;
	unsigned int i;

	if (strncmp(opt_mode, "fixed:", 6) == 0) {
		fixed_limit = parse_uint(opt_mode + 6, "fixed:N", 1, 1 << 20);
		return;
	}
	if (strncmp(opt_mode, "adapt:", 6) != 0)
		goto bad;
	adaptive = true;
	p = opt_mode + 6;
	if (strcmp(p, "default") == 0)
		return;		/* policy 0: no SET_ADAPT */
	for (i = 1; i < NR_POLICY_NAMES; i++)
		if (policy_names[i] && strcmp(p, policy_names[i]) == 0) {
			policy = i;
			return;
		}
	if (*p >= '1' && *p <= '9') {
		policy = parse_uint(p, "adapt:N", 1, 255);
		return;
	}
bad:
	die("-m: '%s': use fixed:N, adapt:default, adapt:iopa, adapt:hillclimb, adapt:bracket or adapt:N",
	    opt_mode);
}

static void setup(void)
{
	struct iopa_features feat;
	struct iopa_submitter_create sc;
	struct iopa_limit lim;
	struct iopa_order ord;

	ctx_fd = open("/dev/iopa", O_RDWR | O_CLOEXEC);
	if (ctx_fd < 0)
		die("/dev/iopa: %s (is the module loaded? are you root?)",
		    strerror(errno));
	memset(&feat, 0, sizeof(feat));
	if (ioctl(ctx_fd, IOPA_IOC_GET_FEATURES, &feat) < 0)
		die("GET_FEATURES: %s", strerror(errno));
	if (adaptive && !(feat.features & IOPA_FEAT_ADAPTIVE))
		die("the module has no adaptive limits (IOPA_FEAT_ADAPTIVE)");
	if (strcmp(opt_order, "sorted") == 0 &&
	    !(feat.features & IOPA_FEAT_ORDER))
		die("the module has no dispatch order (IOPA_FEAT_ORDER)");
	if (fixed_limit > feat.limit_max)
		die("fixed:%u: above the module's limit_max %u", fixed_limit,
		    feat.limit_max);

	memset(&sc, 0, sizeof(sc));
	sc.limit = fixed_limit;	/* 0: adaptive */
	sub_fd = ioctl(ctx_fd, IOPA_IOC_SUBMITTER_CREATE, &sc);
	if (sub_fd < 0)
		die("SUBMITTER_CREATE: %s", strerror(errno));
	memset(&lim, 0, sizeof(lim));
	lim.limit = fixed_limit;
	if (ioctl(sub_fd, IOPA_IOC_SET_LIMIT, &lim) < 0)
		die("SET_LIMIT %u: %s", fixed_limit, strerror(errno));
	if (policy) {
		struct iopa_adapt ad;

		memset(&ad, 0, sizeof(ad));
		ad.policy = policy;
		if (ioctl(sub_fd, IOPA_IOC_SET_ADAPT, &ad) < 0)
			die("SET_ADAPT policy %u (%s): %s%s", policy,
			    policy_name(policy), strerror(errno),
			    errno == EINVAL ? " (a module without this policy?)" :
			    "");
	}
	memset(&ord, 0, sizeof(ord));
	ord.order = strcmp(opt_order, "sorted") == 0 ? IOPA_ORDER_SORTED :
		    IOPA_ORDER_FIFO;
	/* Before any submission: only jobs submitted sorted are located. */
	if ((feat.features & IOPA_FEAT_ORDER) &&
	    ioctl(sub_fd, IOPA_IOC_SET_ORDER, &ord) < 0)
		die("SET_ORDER %s: %s", opt_order, strerror(errno));
}

static void write_series(void)
{
	char path[4096];
	FILE *f;
	size_t i;

	if (!opt_series)
		return;
	if (strcmp(opt_series, "-") == 0) {
		f = stdout;
	} else {
		if (nr_tenants > 1)
			snprintf(path, sizeof(path), "%s.%u", opt_series, tenant);
		else
			snprintf(path, sizeof(path), "%s", opt_series);
		f = fopen(path, "w");
		if (!f)
			die("%s: %s", path, strerror(errno));
	}
	fprintf(f, "# %s columns: t_ms bytes files limit mode inflight pending cycles group_cycles\n",
		opt_prefix);
	for (i = 0; i < nr_samples; i++) {
		const struct sample *s = &samples[i];

		fprintf(f, "%s %u %llu %llu %u %s %u %u %llu %u\n", opt_prefix,
			s->t_ms, s->bytes, s->files, s->limit,
			mode_name(s->mode), s->inflight, s->pending, s->cycles,
			s->group_cycles);
	}
	if (f == stdout ? fflush(f) : fclose(f))
		die("%s: %s", opt_series, strerror(errno));
}

static void sleep_until(double t)
{
	for (;;) {
		double d = t - now_s();
		struct timespec ts;

		if (d <= 0)
			return;
		ts.tv_sec = (time_t)d;
		ts.tv_nsec = (long)((d - (time_t)d) * 1e9);
		nanosleep(&ts, NULL);
	}
}

/* One tenant (the only one without -n): its own context, start to end. */
static int run_tenant(void)
{
	struct iopa_state st;
	struct worker *w;
	pthread_t sampler;
	double t_end, secs, lsum = 0;
	unsigned long long bytes, files;
	unsigned int lmin = ~0U, lmax = 0, i;
	size_t n_lim = 0, k;
	char extra[160];
	int len;

	jobs = calloc(batch, sizeof(*jobs));
	cqes = calloc(256, sizeof(*cqes));
	w = calloc(nr_workers, sizeof(*w));
	if (!jobs || !cqes || !w)
		die("out of memory");
	if (opt_dlog) {
		dlog = calloc(DLOG_MAX, sizeof(*dlog));
		if (!dlog)
			die("out of memory");
	}
	sleep_until(t_start);
	setup();

	for (i = 0; i < nr_workers; i++) {
		struct iopa_worker_create wc;

		memset(&wc, 0, sizeof(wc));
		w[i].idx = i;
		w[i].fd = ioctl(ctx_fd, IOPA_IOC_WORKER_CREATE, &wc);
		if (w[i].fd < 0)
			die("WORKER_CREATE: %s", strerror(errno));
		if (pthread_create(&w[i].thr, NULL, worker_main, &w[i]))
			die("pthread_create failed");
	}

	/* A single tenant's time starts now (its workers are up). */
	if (nr_tenants == 1)
		t0 = t_start = now_s();
	take_sample();
	if (pthread_create(&sampler, NULL, sampler_main, NULL))
		die("pthread_create failed");
	submit_all();
	if (!atomic_load(&capped) && nr_jobs)
		flush_batch();
	for (i = 0; i < nr_jobs; i++)	/* capped: never submitted */
		close(jobs[i].fd);
	nr_jobs = 0;
	while (outstanding) {
		if (atomic_load(&worker_error))
			die("a worker failed");
		cancel_all();
		reap(1);
	}
	t_end = now_s();
	if (!atomic_load(&capped))
		take_sample();
	atomic_store(&sampler_stop, true);
	pthread_join(sampler, NULL);
	atomic_store(&quit, true);
	for (i = 0; i < nr_workers; i++)
		pthread_join(w[i].thr, NULL);
	if (atomic_load(&worker_error))
		die("a worker failed");
	if (failed)
		die("%lu jobs failed", failed);
	memset(&st, 0, sizeof(st));
	if (ioctl(sub_fd, IOPA_IOC_GET_STATE, &st) < 0)
		die("GET_STATE: %s", strerror(errno));

	if (atomic_load(&capped)) {
		bytes = bytes_at_cap;
		files = files_at_cap;
		secs = t_cap - t_start;
	} else {
		bytes = atomic_load(&bytes_done);
		files = atomic_load(&files_done);
		secs = t_end - t_start;
	}
	/* Samples up to the end of the measured time. */
	for (k = 0; k < nr_samples; k++) {
		if (samples[k].t_ms > (t_start - t0 + secs) * 1000 + 1)
			break;
		lsum += samples[k].limit;
		if (samples[k].limit < lmin)
			lmin = samples[k].limit;
		if (samples[k].limit > lmax)
			lmax = samples[k].limit;
		n_lim++;
	}
	len = 0;
	extra[0] = 0;
	if (opt_passes)
		len += snprintf(extra + len, sizeof(extra) - len, " passes=%u",
				opt_passes);
	if (opt_dir2)
		len += snprintf(extra + len, sizeof(extra) - len,
				" switch_ms=%.0f", switch_s * 1000);
	if (nr_tenants > 1)
		snprintf(extra + len, sizeof(extra) - len,
			 " tenant=%u tenants=%u start_ms=%.0f", tenant,
			 nr_tenants, (t_start - t0) * 1000);
	printf("files mode=%s order=%s workers=%u files=%llu bytes=%llu "
	       "secs=%.3f mbps=%.3f first_job_ms=%.0f limit_final=%u "
	       "limit_mean=%.2f limit_min=%u limit_max=%u stopped=%s policy=%s "
	       "cycles=%llu%s%s%s\n",
	       opt_mode, opt_order, nr_workers, files, bytes, secs,
	       secs > 0 ? bytes / secs / 1e6 : 0.0,
	       t_first ? (t_first - t0) * 1000 : -1.0,
	       n_lim ? samples[n_lim - 1].limit : 0,
	       n_lim ? lsum / n_lim : 0.0, n_lim ? lmin : 0, lmax,
	       atomic_load(&capped) ? "cap" : "done", policy_name(st.policy),
	       (unsigned long long)st.cycles, extra,
	       opt_label ? " label=" : "", opt_label ? opt_label : "");
	fflush(stdout);
	write_series();
	if (opt_dlog) {
		FILE *f = fopen(opt_dlog, "w");
		unsigned long n = atomic_load(&nr_dlog);

		if (!f)
			die("%s: %s", opt_dlog, strerror(errno));
		if (n > DLOG_MAX)
			n = DLOG_MAX;
		for (k = 0; k < n; k++)
			fprintf(f, "%llu %llu %u %lld\n", dlog[k].t_us,
				dlog[k].job_id, dlog[k].worker, dlog[k].block);
		if (fclose(f))
			die("%s: %s", opt_dlog, strerror(errno));
	}
	for (i = 0; i < nr_workers; i++)
		close(w[i].fd);
	close(sub_fd);
	close(ctx_fd);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned int i, bad = 0;
	char *colon;
	int c;

	while ((c = getopt(argc, argv, "m:o:w:t:q:b:i:s:p:l:D:rdc:T:W:n:j:kh")) != -1) {
		switch (c) {
		case 'm': opt_mode = optarg; break;
		case 'o': opt_order = optarg; break;
		case 'w': nr_workers = parse_uint(optarg, "-w", 1, 1024); break;
		case 't': cap_s = parse_secs(optarg, "-t", 0); break;
		case 'q': max_out = parse_uint(optarg, "-q", 1, 1 << 20); break;
		case 'b': batch = parse_uint(optarg, "-b", 1, IOPA_BATCH_MAX);
			break;
		case 'i': interval_ms = parse_uint(optarg, "-i", 1, 60000); break;
		case 's': opt_series = optarg; break;
		case 'p': opt_prefix = optarg; break;
		case 'l': opt_label = optarg; break;
		case 'D': opt_dlog = optarg; break;
		case 'r': opt_repeat = true; break;
		case 'd': opt_dontneed = true; break;
		case 'c': opt_passes = parse_uint(optarg, "-c", 0, 100000); break;
		case 'T':
			if (work_n[0])
				die("-W works alone: not with -r, -n or -T");
			colon = strchr(optarg, ':');
			if (!colon || !colon[1])
				die("-T: '%s': use SECS:DIR2", optarg);
			switch_s = parse_secs(optarg, "-T", ':');
			opt_dir2 = colon + 1;
			break;
		case 'W':
			if (opt_dir2)
				die("-W works alone: not with -r, -n or -T");
			parse_work(optarg);
			break;
		case 'n': nr_tenants = parse_uint(optarg, "-n", 1, 64); break;
		case 'j': join_s = parse_secs(optarg, "-j", 0); break;
		case 'k': opt_check = true; break;
		default: usage();
		}
	}
	if (optind != argc - 1)
		usage();
	opt_dir = argv[optind];
	parse_mode();
	if (strcmp(opt_order, "fifo") && strcmp(opt_order, "sorted"))
		die("-o: '%s': use fifo or sorted", opt_order);
	if (opt_repeat && cap_s <= 0)
		die("-r needs a time cap (-t)");
	if (work_n[0] && (opt_repeat || nr_tenants > 1))
		die("-W works alone: not with -r, -n or -T");
	if (join_s > 0 && nr_tenants < 2)
		die("-j needs -n 2 or more");
	if (cap_s > 0 && join_s >= cap_s)
		die("-j %g: not before the cap -t %g", join_s, cap_s);
	if (opt_dlog && nr_tenants > 1)
		die("-D works with one tenant only");
	if (opt_series && nr_tenants > 1 && strcmp(opt_series, "-") == 0)
		die("-s -: one tenant only (use -s FILE: tenant K writes FILE.K)");
	if (batch > max_out)
		batch = max_out;
	if (opt_check) {
		setup();
		return 0;
	}

	if (nr_tenants == 1)
		return run_tenant();

	/* Tenants: one process each, one time base. */
	fflush(stdout);
	t0 = now_s() + 0.2;	/* time to fork them all */
	for (i = 0; i < nr_tenants; i++) {
		pid_t pid = fork();

		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			tenant = i;
			t_start = t0 + (i == nr_tenants - 1 ? join_s : 0);
			exit(run_tenant());
		}
	}
	for (i = 0; i < nr_tenants; i++) {
		int status;

		if (wait(&status) < 0)
			die("wait: %s", strerror(errno));
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			bad++;
	}
	if (bad)
		die("%u of %u tenants failed", bad, nr_tenants);
	return 0;
}
