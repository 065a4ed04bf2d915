// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-demo: a small file-processing workload on top of /dev/iopa.
 *
 *   iopa-demo gen DIR NFILES SIZE
 *	Write NFILES files of SIZE bytes (suffixes k, m, g) of deterministic
 *	pseudo-random content under DIR, fsync them, and print the combined
 *	checksum of what was written.
 *
 *   iopa-demo run [-w WORKERS] [-l LIMIT] [-b BATCH] [-p PASSES] [--drop]
 *                 [-v] [--check] DIR
 *	Checksum every regular file under DIR through iopa: one submitter,
 *	WORKERS worker threads (each with its own worker fd), one job per
 *	file, and the whole list PASSES times over (default 1; every pass
 *	must give the same checksum); --drop drops each file's pages from
 *	the page cache once its job is done, so that every pass reads the
 *	disk.  Prints throughput, the context's counters and the combined
 *	checksum; --check recomputes the checksum without iopa and compares.
 *
 *   iopa-demo check DIR
 *	Compute the combined checksum single-threaded, without iopa.
 *
 * The per-file hash is hash64 below (a word-at-a-time multiply/xorshift
 * hash, not cryptographic); the combined checksum is an ordered fold of
 * the per-file hashes, files taken in the order of a byte-wise sorted,
 * recursive walk of DIR.  It therefore does not depend on which worker
 * ran which job, and `gen` can predict it.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
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

#include <linux/iopa.h>

#define DEV_PATH		"/dev/iopa"
#define DEFAULT_WORKERS		8
#define DEFAULT_BATCH		64
#define MAX_WORKERS		1024
#define IO_BUF_SIZE		(256 * 1024)
#define REAP_BATCH		256
/* How long a blocked FETCH / REAP waits before it looks at the stop flag. */
#define POLL_NS			(100 * 1000 * 1000ULL)

static const char *prog = "iopa-demo";

/* ---------------------------------------------------------------------
 * hash64: streaming, word-at-a-time, 64-bit.  Not cryptographic: it only
 * has to make a wrong byte, a short read or a swapped file visible.
 */
#define H_SEED	0x9e3779b97f4a7c15ULL
#define H_MUL	0xff51afd7ed558ccdULL
#define H_MUL2	0xc4ceb9fe1a85ec53ULL

struct hash64 {
	uint64_t h;
	uint64_t total;
	unsigned char tail[8];
	unsigned int ntail;
};

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= H_MUL;
	x ^= x >> 33;
	x *= H_MUL2;
	x ^= x >> 33;
	return x;
}

static inline uint64_t load_le64(const unsigned char *p)
{
	uint64_t w = 0;
	int i;

	for (i = 7; i >= 0; i--)
		w = (w << 8) | p[i];
	return w;
}

static inline uint64_t hash64_word(uint64_t h, uint64_t w)
{
	h ^= w;
	h *= H_MUL;
	h ^= h >> 32;
	return h;
}

static void hash64_init(struct hash64 *s)
{
	memset(s, 0, sizeof(*s));
	s->h = H_SEED;
}

static void hash64_update(struct hash64 *s, const void *buf, size_t n)
{
	const unsigned char *p = buf;

	s->total += n;
	while (s->ntail && n) {
		s->tail[s->ntail++] = *p++;
		n--;
		if (s->ntail == 8) {
			s->h = hash64_word(s->h, load_le64(s->tail));
			s->ntail = 0;
		}
	}
	for (; n >= 8; p += 8, n -= 8)
		s->h = hash64_word(s->h, load_le64(p));
	while (n--)
		s->tail[s->ntail++] = *p++;
}

static uint64_t hash64_final(const struct hash64 *s)
{
	uint64_t h = s->h;
	unsigned int i;

	if (s->ntail) {
		unsigned char last[8] = { 0 };

		for (i = 0; i < s->ntail; i++)
			last[i] = s->tail[i];
		h = hash64_word(h, load_le64(last) ^ ((uint64_t)s->ntail << 56));
	}
	return mix64(h ^ s->total);
}

/* Ordered fold of per-file hashes into the combined checksum. */
static inline uint64_t fold(uint64_t acc, uint64_t file_hash)
{
	return mix64(acc * H_MUL2 + file_hash);
}

/* ---------------------------------------------------------------------
 * Small helpers.
 */
static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (!p) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return p;
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", prog);
		exit(1);
	}
	return p;
}

/* "4096", "4k", "64K", "1m", "2g" -> bytes; -1 on a malformed size. */
static long long parse_size(const char *s)
{
	unsigned long long v, mul = 1;
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		mul = 1ULL << 10;
		end++;
		break;
	case 'm': case 'M':
		mul = 1ULL << 20;
		end++;
		break;
	case 'g': case 'G':
		mul = 1ULL << 30;
		end++;
		break;
	default:
		return -1;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end || v > (unsigned long long)LLONG_MAX / mul)
		return -1;
	return (long long)(v * mul);
}

static int parse_uint(const char *s, unsigned int max, unsigned int *out)
{
	unsigned long v;
	char *end;

	if (!*s || *s == '-')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = (unsigned int)v;
	return 0;
}

/* ---------------------------------------------------------------------
 * Deterministic content for `gen`: xorshift64* seeded from the file index.
 */
static uint64_t gen_seed(unsigned long idx)
{
	return mix64(H_SEED + idx) | 1;
}

static void gen_fill(uint64_t *state, unsigned char *buf, size_t n)
{
	uint64_t x = *state;
	size_t i, j;

	for (i = 0; i < n; i += 8) {
		uint64_t r;

		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		r = x * 0x2545f4914f6cdd1dULL;
		for (j = 0; j < 8 && i + j < n; j++)
			buf[i + j] = (unsigned char)(r >> (8 * j));
	}
	*state = x;
}

static int mkdir_p(const char *path)
{
	char *tmp = strdup(path), *p;
	int ret = 0;

	if (!tmp)
		return -ENOMEM;
	for (p = tmp + 1; ; p++) {
		if (*p == '/' || *p == '\0') {
			char c = *p;

			*p = '\0';
			if (mkdir(tmp, 0755) && errno != EEXIST) {
				ret = -errno;
				break;
			}
			*p = c;
			if (!c)
				break;
		}
	}
	free(tmp);
	return ret;
}

static int fsync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		ret = -errno;
	close(fd);
	return ret;
}

#define GEN_FILES_PER_DIR	256

static int cmd_gen(int argc, char **argv)
{
	unsigned long nfiles, i, ndirs = 0;
	long long size;
	const char *dir;
	unsigned char *buf;
	size_t bufsz;
	uint64_t combined = 0;
	char sub[PATH_MAX], path[PATH_MAX + 32];
	double t0;
	int ret;

	if (argc != 4) {
		fprintf(stderr, "usage: %s gen DIR NFILES SIZE\n", prog);
		return 2;
	}
	dir = argv[1];
	errno = 0;
	nfiles = strtoul(argv[2], NULL, 10);
	size = parse_size(argv[3]);
	if (errno || argv[2][0] == '-' || nfiles == 0 || size < 0) {
		fprintf(stderr, "%s gen: bad NFILES '%s' or SIZE '%s'\n",
			prog, argv[2], argv[3]);
		return 2;
	}
	if (strlen(dir) > PATH_MAX - 64) {
		fprintf(stderr, "%s gen: path too long: %s\n", prog, dir);
		return 2;
	}
	ret = mkdir_p(dir);
	if (ret) {
		fprintf(stderr, "%s gen: mkdir %s: %s\n", prog, dir, strerror(-ret));
		return 1;
	}

	bufsz = size < IO_BUF_SIZE ? (size_t)size : IO_BUF_SIZE;
	buf = xmalloc(bufsz);
	t0 = now_s();
	for (i = 0; i < nfiles; i++) {
		unsigned long long left = size;
		uint64_t state = gen_seed(i);
		struct hash64 hs;
		int fd;

		snprintf(sub, sizeof(sub), "%s/d%03lu", dir, i / GEN_FILES_PER_DIR);
		if (i % GEN_FILES_PER_DIR == 0) {
			if (mkdir(sub, 0755) && errno != EEXIST) {
				fprintf(stderr, "%s gen: mkdir %s: %s\n", prog, sub,
					strerror(errno));
				goto out_fail;
			}
			ndirs++;
		}
		snprintf(path, sizeof(path), "%s/f%06lu.dat", sub, i);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "%s gen: %s: %s\n", prog, path, strerror(errno));
			goto out_fail;
		}
		hash64_init(&hs);
		while (left) {
			size_t n = left < bufsz ? (size_t)left : bufsz;
			size_t off = 0;

			gen_fill(&state, buf, n);
			hash64_update(&hs, buf, n);
			while (off < n) {
				ssize_t w = write(fd, buf + off, n - off);

				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					fprintf(stderr, "%s gen: write %s: %s\n", prog,
						path, w < 0 ? strerror(errno) : "short write");
					close(fd);
					goto out_fail;
				}
				off += w;
			}
			left -= n;
		}
		if (fsync(fd) || close(fd)) {
			fprintf(stderr, "%s gen: fsync %s: %s\n", prog, path,
				strerror(errno));
			goto out_fail;
		}
		combined = fold(combined, hash64_final(&hs));
	}
	for (i = 0; i < ndirs; i++) {
		snprintf(sub, sizeof(sub), "%s/d%03lu", dir, i);
		fsync_path(sub);
	}
	fsync_path(dir);
	free(buf);

	printf("gen: wrote %lu files x %lld bytes = %llu bytes in %lu directories under %s (%.2f s, fsynced)\n",
	       nfiles, size, (unsigned long long)nfiles * size, ndirs, dir,
	       now_s() - t0);
	printf("gen: checksum=%016" PRIx64 " (what any later run over %s must print, if it holds nothing else)\n",
	       combined, dir);
	return 0;

out_fail:
	free(buf);
	return 1;
}

/* ---------------------------------------------------------------------
 * The file list: a recursive walk, entries sorted byte-wise, regular files
 * only (symlinks are not followed).
 */
struct file_list {
	char **paths;
	size_t nr, cap;
	unsigned long errors;
};

static int name_cmp(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static void walk(struct file_list *fl, const char *dir)
{
	struct dirent **ents;
	int n, i;

	n = scandir(dir, &ents, NULL, name_cmp);
	if (n < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(errno));
		fl->errors++;
		return;
	}
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		struct stat st;
		size_t len;
		char *path;

		if (!strcmp(name, ".") || !strcmp(name, "..")) {
			free(ents[i]);
			continue;
		}
		len = strlen(dir) + strlen(name) + 2;
		path = xmalloc(len);
		snprintf(path, len, "%s/%s", dir, name);
		free(ents[i]);
		if (lstat(path, &st)) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
			fl->errors++;
			free(path);
		} else if (S_ISDIR(st.st_mode)) {
			walk(fl, path);
			free(path);
		} else if (S_ISREG(st.st_mode)) {
			if (fl->nr == fl->cap) {
				fl->cap = fl->cap ? 2 * fl->cap : 1024;
				fl->paths = xrealloc(fl->paths, fl->cap * sizeof(char *));
			}
			fl->paths[fl->nr++] = path;
		} else {
			free(path);
		}
	}
	free(ents);
}

static void file_list_free(struct file_list *fl)
{
	size_t i;

	for (i = 0; i < fl->nr; i++)
		free(fl->paths[i]);
	free(fl->paths);
}

/* Hash [off, off + len) of fd.  Returns bytes read or -errno. */
static long long hash_range(int fd, unsigned long long off,
			    unsigned long long len, unsigned char *buf,
			    uint64_t *out)
{
	unsigned long long done = 0;
	struct hash64 hs;

	hash64_init(&hs);
	while (done < len) {
		size_t want = len - done < IO_BUF_SIZE ? len - done : IO_BUF_SIZE;
		ssize_t r = pread(fd, buf, want, off + done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		hash64_update(&hs, buf, r);
		done += r;
	}
	*out = hash64_final(&hs);
	return done;
}

/* ---------------------------------------------------------------------
 * check: the same checksum, single-threaded, without iopa.
 */
static int checksum_plain(struct file_list *fl, uint64_t *combined,
			  double *secs)
{
	unsigned char *buf = xmalloc(IO_BUF_SIZE);
	unsigned long failed = 0;
	double t0 = now_s();
	uint64_t acc = 0;
	size_t i;

	for (i = 0; i < fl->nr; i++) {
		struct stat st;
		long long r;
		uint64_t h;
		int fd;

		fd = open(fl->paths[i], O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			fprintf(stderr, "%s: %s: %s\n", prog, fl->paths[i],
				strerror(errno));
			if (fd >= 0)
				close(fd);
			failed++;
			continue;
		}
		r = hash_range(fd, 0, st.st_size, buf, &h);
		close(fd);
		if (r < 0 || r != st.st_size) {
			fprintf(stderr, "%s: %s: %s\n", prog, fl->paths[i],
				r < 0 ? strerror(-r) : "short read");
			failed++;
			continue;
		}
		acc = fold(acc, h);
	}
	free(buf);
	*combined = acc;
	*secs = now_s() - t0;
	return failed ? -EIO : 0;
}

static int cmd_check(int argc, char **argv)
{
	struct file_list fl = { 0 };
	uint64_t combined;
	double secs;
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s check DIR\n", prog);
		return 2;
	}
	walk(&fl, argv[1]);
	ret = checksum_plain(&fl, &combined, &secs);
	printf("check: files=%zu checksum=%016" PRIx64 " seconds=%.3f (single thread, no iopa)\n",
	       fl.nr, combined, secs);
	file_list_free(&fl);
	return ret || fl.errors ? 1 : 0;
}

/* ---------------------------------------------------------------------
 * run: the iopa workload.
 */
#ifndef IOPA_POLICY_BRACKET
#define IOPA_POLICY_BRACKET	3	/* older uapi headers */
#endif

static const char *policy_name(unsigned int p)
{
	switch (p) {
	case IOPA_POLICY_IOPA:
		return "iopa";
	case IOPA_POLICY_HILLCLIMB:
		return "hillclimb";
	case IOPA_POLICY_BRACKET:
		return "bracket";
	default:
		return "?";
	}
}

struct result {
	uint64_t hash;
	uint64_t bytes;		/* read by the worker */
	uint64_t size;		/* st_size at submit time */
	atomic_int state;	/* 0 not run, 1 worker finished, 2 reaped */
	bool failed;
};

struct run {
	struct file_list fl;
	struct result *res;		/* fl.nr per pass, passes of them */
	size_t nr_jobs;			/* fl.nr * passes */
	bool drop;			/* POSIX_FADV_DONTNEED after a job */
	int sub_fd;
	bool verbose;

	atomic_bool stop;		/* workers and reaper: time to go */
	atomic_bool submit_done;	/* main: no more submissions */
	atomic_ulong nr_submitted;	/* main */
	unsigned long nr_reaped;	/* reaper only */
	unsigned long nr_stray;		/* reaper: completions of no job of ours */
	double t_last_reap;		/* reaper only */
	atomic_int fatal;		/* any thread: an ABI call failed */
	atomic_uint running;		/* workers: jobs being processed now */
	atomic_uint max_running;	/* workers: the most seen at once */
	bool adaptive;			/* the kernel adapts the limit */
	unsigned int lim_lo, lim_hi;	/* reaper: limits seen (adaptive) */
};

/* Adaptive: note the limit in force (GET_STATE after each reap). */
static void note_limit(struct run *r)
{
	struct iopa_state st = { 0 };

	if (!r->adaptive || ioctl(r->sub_fd, IOPA_IOC_GET_STATE, &st))
		return;
	if (!r->lim_lo || st.limit < r->lim_lo)
		r->lim_lo = st.limit;
	if (st.limit > r->lim_hi)
		r->lim_hi = st.limit;
}

struct worker {
	struct run *run;
	pthread_t thread;
	int fd;
	unsigned long jobs;
};

static void fatal_err(struct run *r, const char *what, int err)
{
	fprintf(stderr, "%s: %s: %s\n", prog, what, strerror(err));
	atomic_store(&r->fatal, 1);
	atomic_store(&r->stop, true);
}

/*
 * A worker starts on a job.  The count goes down before the job is
 * completed, so the maximum seen is never above the submitter's limit
 * unless the kernel ran more jobs at once than the limit allows.
 */
static void note_running(struct run *r)
{
	unsigned int now = atomic_fetch_add(&r->running, 1) + 1;
	unsigned int max = atomic_load(&r->max_running);

	while (now > max &&
	       !atomic_compare_exchange_weak(&r->max_running, &max, now))
		;
}

/* One worker thread: COMPLETE_AND_FETCH until told to stop. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct run *r = w->run;
	unsigned char *buf = xmalloc(IO_BUF_SIZE);
	struct iopa_done done = { 0 };
	bool have_done = false;

	for (;;) {
		struct iopa_fetch f;
		struct iopa_work *wk = &f.work;
		unsigned long cmd;
		long long got;
		uint64_t h = 0;

		memset(&f, 0, sizeof(f));
		f.timeout_ns = POLL_NS;
		cmd = IOPA_IOC_FETCH;
		if (have_done) {
			f.done = done;
			cmd = IOPA_IOC_COMPLETE_AND_FETCH;
		}
		if (ioctl(w->fd, cmd, &f) < 0) {
			int err = errno;

			/*
			 * ETIMEDOUT / EINTR / EAGAIN come from the fetch
			 * half: the completion, if any, went through.
			 */
			if (err == ETIMEDOUT || err == EINTR || err == EAGAIN) {
				have_done = false;
				if (atomic_load(&r->stop))
					break;
				continue;
			}
			fatal_err(r, have_done ? "COMPLETE_AND_FETCH" : "FETCH", err);
			break;
		}
		have_done = true;
		done.job_id = wk->job_id;
		done.flags = 0;
		w->jobs++;
		note_running(r);

		if (wk->user_data >= r->nr_jobs) {
			fprintf(stderr, "%s: job %llu: unexpected user_data %llu\n",
				prog, (unsigned long long)wk->job_id,
				(unsigned long long)wk->user_data);
			close(wk->fd);
			done.res = -EINVAL;
			atomic_fetch_sub(&r->running, 1);
			continue;
		}
		got = hash_range(wk->fd, wk->offset, wk->len, buf, &h);
		if (r->drop)
			posix_fadvise(wk->fd, 0, 0, POSIX_FADV_DONTNEED);
		close(wk->fd);
		if (got >= 0) {
			struct result *res = &r->res[wk->user_data];

			res->hash = h;
			res->bytes = got;
			atomic_store_explicit(&res->state, 1, memory_order_release);
			done.res = got > INT32_MAX ? INT32_MAX : (int32_t)got;
		} else {
			done.res = (int32_t)got;
		}
		/* Before COMPLETE: the kernel may then dispatch the next job. */
		atomic_fetch_sub(&r->running, 1);
	}
	/* A completion still owed when stopping on a fatal error. */
	if (have_done)
		ioctl(w->fd, IOPA_IOC_COMPLETE, &done);
	free(buf);
	return NULL;
}

static void reap_one(struct run *r, const struct iopa_cqe *c)
{
	struct result *res;
	const char *path;

	if (c->user_data >= r->nr_jobs) {
		fprintf(stderr, "%s: completion with unknown user_data %llu\n",
			prog, (unsigned long long)c->user_data);
		r->nr_stray++;
		return;
	}
	res = &r->res[c->user_data];
	path = r->fl.paths[c->user_data % r->fl.nr];
	if (atomic_load(&res->state) == 2) {
		fprintf(stderr, "%s: %s: completed twice (job %llu)\n", prog,
			path, (unsigned long long)c->job_id);
		r->nr_stray++;
		return;
	}
	if (c->flags & IOPA_CQE_F_CANCELED) {
		fprintf(stderr, "%s: %s: job cancelled (res %d, flags 0x%x)\n",
			prog, path, c->res, c->flags);
		res->failed = true;
	} else if (c->res < 0) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(-c->res));
		res->failed = true;
	} else if (atomic_load_explicit(&res->state, memory_order_acquire) != 1) {
		fprintf(stderr, "%s: %s: completed but no worker result\n",
			prog, path);
		res->failed = true;
	} else if (res->bytes != res->size) {
		fprintf(stderr, "%s: %s: short read, %llu of %llu bytes\n", prog,
			path, (unsigned long long)res->bytes,
			(unsigned long long)res->size);
		res->failed = true;
	}
	atomic_store(&res->state, 2);
}

/* Reaper thread: REAP_F_WAIT until every submitted job is reaped. */
static void *reaper_main(void *arg)
{
	struct run *r = arg;
	struct iopa_cqe *cqes = xmalloc(REAP_BATCH * sizeof(*cqes));

	for (;;) {
		struct iopa_reap rp = {
			.cqes = (uintptr_t)cqes,
			.nr = REAP_BATCH,
			.flags = IOPA_REAP_F_WAIT,
			.timeout_ns = POLL_NS,
		};
		int n, i;

		if (atomic_load(&r->submit_done) &&
		    r->nr_reaped == atomic_load(&r->nr_submitted))
			break;
		if (atomic_load(&r->fatal))
			break;
		n = ioctl(r->sub_fd, IOPA_IOC_REAP, &rp);
		if (n < 0) {
			if (errno == ETIMEDOUT || errno == EINTR)
				continue;
			fatal_err(r, "REAP", errno);
			break;
		}
		for (i = 0; i < n; i++)
			reap_one(r, &cqes[i]);
		r->nr_reaped += n;
		note_limit(r);
		r->t_last_reap = now_s();
	}
	free(cqes);
	return NULL;
}

/*
 * Submit jobs[0..nr).  A job that fails is reported and skipped; the jobs
 * after it are submitted again.  Returns 0, or -1 on a fatal error.
 */
static int submit_batch(struct run *r, struct iopa_job *jobs, unsigned int nr)
{
	unsigned int k = 0;

	while (k < nr) {
		struct iopa_submit s = {
			.jobs = (uintptr_t)(jobs + k),
			.nr = nr - k,
			.flags = IOPA_SUBMIT_F_WAIT,
		};
		int n = ioctl(r->sub_fd, IOPA_IOC_SUBMIT, &s);

		if (n > 0) {
			atomic_fetch_add(&r->nr_submitted, n);
			k += n;
			continue;
		}
		if (n == 0) {
			fatal_err(r, "SUBMIT returned 0", EPROTO);
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno == EBADF || errno == EINVAL) {
			/* This job's own fault: report it, go on. */
			fprintf(stderr, "%s: %s: submit: %s\n", prog,
				r->fl.paths[jobs[k].user_data % r->fl.nr],
				strerror(errno));
			r->res[jobs[k].user_data].failed = true;
			k++;
			continue;
		}
		fatal_err(r, "SUBMIT", errno);
		return -1;
	}
	return 0;
}

static void usage_run(void)
{
	fprintf(stderr,
		"usage: %s run [-w WORKERS] [-l LIMIT] [-b BATCH] [-p PASSES] [--drop] [-v]\n"
		"              [--check] DIR\n"
		"  -w WORKERS  worker threads, each with its own worker fd (default %d)\n"
		"  -l LIMIT    the submitter's in-flight limit; 0: the kernel adapts it (default 0)\n"
		"  -b BATCH    jobs per IOPA_IOC_SUBMIT (default %d)\n"
		"  -p PASSES   submit every file PASSES times over (default 1)\n"
		"  --drop      drop each file from the page cache after its job\n"
		"  -v          print '<hash>  <path>' for every file\n"
		"  --check     recompute the checksum without iopa and compare\n",
		prog, DEFAULT_WORKERS, DEFAULT_BATCH);
}

static int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "workers", required_argument, NULL, 'w' },
		{ "limit", required_argument, NULL, 'l' },
		{ "batch", required_argument, NULL, 'b' },
		{ "passes", required_argument, NULL, 'p' },
		{ "drop", no_argument, NULL, 'd' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check", no_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned int nworkers = DEFAULT_WORKERS, limit = 0, batch = DEFAULT_BATCH;
	unsigned int passes = 1, pass;
	bool check = false, verbose = false, drop = false;
	struct iopa_submitter_create sc = { 0 };
	struct iopa_worker_create wc = { 0 };
	struct iopa_features feat = { 0 };
	struct iopa_limit lim = { 0 };
	struct iopa_stats st = { 0 };
	struct worker *workers = NULL;
	struct iopa_job *jobs = NULL;
	pthread_t reaper;
	struct run *r;
	unsigned int nstarted = 0, nb = 0, i;
	unsigned long long bytes = 0;
	unsigned long files_ok = 0, jobs_ok = 0, passes_differ = 0;
	uint64_t combined = 0;
	double t0, t1, secs;
	int ctx_fd, opt, ret = 1;
	bool reaper_started = false;
	const char *dir;
	size_t idx, j;

	while ((opt = getopt_long(argc, argv, "w:l:b:p:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 'w':
			if (parse_uint(optarg, MAX_WORKERS, &nworkers) || !nworkers)
				goto bad_arg;
			break;
		case 'l':
			if (parse_uint(optarg, IOPA_LIMIT_MAX, &limit))
				goto bad_arg;
			break;
		case 'b':
			if (parse_uint(optarg, IOPA_BATCH_MAX, &batch) || !batch)
				goto bad_arg;
			break;
		case 'p':
			if (parse_uint(optarg, 10000, &passes) || !passes)
				goto bad_arg;
			break;
		case 'd':
			drop = true;
			break;
		case 'v':
			verbose = true;
			break;
		case 'c':
			check = true;
			break;
		case 'h':
			usage_run();
			return 0;
		default:
			usage_run();
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage_run();
		return 2;
	}
	dir = argv[optind];

	r = calloc(1, sizeof(*r));
	if (!r)
		return 1;
	r->verbose = verbose;
	r->drop = drop;
	walk(&r->fl, dir);
	if (!r->fl.nr) {
		fprintf(stderr, "%s: no regular files under %s\n", prog, dir);
		goto out_free;
	}
	r->nr_jobs = r->fl.nr * passes;
	r->res = calloc(r->nr_jobs, sizeof(*r->res));
	jobs = calloc(batch, sizeof(*jobs));
	workers = calloc(nworkers, sizeof(*workers));
	if (!r->res || !jobs || !workers) {
		fprintf(stderr, "%s: out of memory\n", prog);
		goto out_free;
	}

	ctx_fd = open(DEV_PATH, O_RDWR | O_CLOEXEC);
	if (ctx_fd < 0) {
		fprintf(stderr, "%s: cannot open %s: %s (is the iopa module loaded?)\n",
			prog, DEV_PATH, strerror(errno));
		goto out_free;
	}
	if (ioctl(ctx_fd, IOPA_IOC_GET_FEATURES, &feat)) {
		fprintf(stderr, "%s: GET_FEATURES: %s\n", prog, strerror(errno));
		goto out_close_ctx;
	}
	if (feat.abi_version != IOPA_ABI_VERSION) {
		fprintf(stderr, "%s: module speaks iopa ABI %u, this tool %d\n",
			prog, feat.abi_version, IOPA_ABI_VERSION);
		goto out_close_ctx;
	}
	if (batch > feat.batch_max)
		batch = feat.batch_max;

	sc.limit = limit;
	r->sub_fd = ioctl(ctx_fd, IOPA_IOC_SUBMITTER_CREATE, &sc);
	if (r->sub_fd < 0) {
		fprintf(stderr, "%s: SUBMITTER_CREATE (limit %u): %s\n", prog,
			limit, strerror(errno));
		goto out_close_ctx;
	}
	if (ioctl(r->sub_fd, IOPA_IOC_GET_LIMIT, &lim)) {
		fprintf(stderr, "%s: GET_LIMIT: %s\n", prog, strerror(errno));
		goto out_close_sub;
	}
	r->adaptive = !(lim.flags & IOPA_LIMIT_F_FIXED);

	for (i = 0; i < nworkers; i++) {
		workers[i].run = r;
		workers[i].fd = ioctl(ctx_fd, IOPA_IOC_WORKER_CREATE, &wc);
		if (workers[i].fd < 0) {
			fprintf(stderr, "%s: WORKER_CREATE #%u: %s\n", prog, i,
				strerror(errno));
			goto out_stop;
		}
		errno = pthread_create(&workers[i].thread, NULL, worker_main,
				       &workers[i]);
		if (errno) {
			fprintf(stderr, "%s: pthread_create: %s\n", prog,
				strerror(errno));
			close(workers[i].fd);
			goto out_stop;
		}
		nstarted++;
	}

	printf("iopa-demo: %zu files under %s%s; %u workers, limit %u%s, batch %u\n",
	       r->fl.nr, dir, passes > 1 ? ", every one read in each pass" : "",
	       nworkers, lim.limit,
	       limit ? "" : " to start with, adapted by the kernel", batch);
	if (passes > 1)
		printf("iopa-demo: %u passes, %zu jobs%s\n", passes, r->nr_jobs,
		       drop ? "; each file dropped from the page cache after its job" : "");
	fflush(stdout);

	t0 = now_s();
	r->t_last_reap = t0;
	errno = pthread_create(&reaper, NULL, reaper_main, r);
	if (errno) {
		fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(errno));
		goto out_stop;
	}
	reaper_started = true;

	for (j = 0; j < r->nr_jobs && !atomic_load(&r->fatal); j++) {
		const char *path = r->fl.paths[j % r->fl.nr];
		struct stat sb;
		int fd;

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &sb)) {
			fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
			if (fd >= 0)
				close(fd);
			r->res[j].failed = true;
			continue;
		}
		r->res[j].size = sb.st_size;
		jobs[nb] = (struct iopa_job){
			.fd = fd,
			.offset = 0,
			.len = sb.st_size,
			.user_data = j,
		};
		nb++;
		if (nb == batch || j + 1 == r->nr_jobs) {
			int err = submit_batch(r, jobs, nb);

			/* The kernel holds its own references now. */
			for (i = 0; i < nb; i++)
				close(jobs[i].fd);
			nb = 0;
			if (err)
				break;
		}
	}
	for (i = 0; i < nb; i++)
		close(jobs[i].fd);
	t1 = now_s();
	atomic_store(&r->submit_done, true);
	pthread_join(reaper, NULL);
	reaper_started = false;
	if (r->t_last_reap > t1)
		t1 = r->t_last_reap;
	secs = t1 - t0;

	if (ioctl(ctx_fd, IOPA_IOC_GET_STATS, &st))
		fprintf(stderr, "%s: GET_STATS: %s\n", prog, strerror(errno));

	/* Per pass: its checksum; the first pass's is the run's. */
	for (pass = 0; pass < passes; pass++) {
		uint64_t acc = 0;
		unsigned long ok = 0;

		for (idx = 0; idx < r->fl.nr; idx++) {
			struct result *res = &r->res[pass * r->fl.nr + idx];

			if (res->failed || atomic_load(&res->state) != 2) {
				if (!res->failed)
					fprintf(stderr, "%s: %s: never completed (pass %u)\n",
						prog, r->fl.paths[idx], pass + 1);
				continue;
			}
			ok++;
			bytes += res->bytes;
			acc = fold(acc, res->hash);
			if (r->verbose && pass == 0)
				printf("%016" PRIx64 "  %s\n", res->hash,
				       r->fl.paths[idx]);
		}
		jobs_ok += ok;
		if (pass == 0) {
			combined = acc;
			files_ok = ok;
		} else if (acc != combined || ok != files_ok) {
			fprintf(stderr, "%s: pass %u: checksum %016" PRIx64 " over %lu files, pass 1: %016" PRIx64 " over %lu\n",
				prog, pass + 1, acc, ok, combined, files_ok);
			passes_differ++;
		}
	}

	printf("iopa-demo: files=%lu bytes=%llu seconds=%.3f jobs_per_s=%.0f mbytes_per_s=%.1f passes=%u jobs=%lu\n",
	       files_ok, bytes, secs, secs > 0 ? jobs_ok / secs : 0.0,
	       secs > 0 ? bytes / 1e6 / secs : 0.0, passes, jobs_ok);
	printf("stats submitted=%llu dispatched=%llu completed=%llu cancelled=%llu requeued=%llu pending=%llu inflight=%llu unreaped=%llu\n",
	       (unsigned long long)st.submitted, (unsigned long long)st.dispatched,
	       (unsigned long long)st.completed, (unsigned long long)st.cancelled,
	       (unsigned long long)st.requeued, (unsigned long long)st.pending,
	       (unsigned long long)st.inflight, (unsigned long long)st.unreaped);
	if (r->adaptive) {
		struct iopa_state as = { 0 };

		if (ioctl(r->sub_fd, IOPA_IOC_GET_STATE, &as) == 0)
			printf("iopa-demo: adaptive limit: started at %u, ranged %u..%u, ended at %u; %llu cycles, %llu changes, policy %s, last cycle %llu bytes/s %llu jobs/s\n",
			       lim.limit, r->lim_lo, r->lim_hi, as.limit,
			       (unsigned long long)as.cycles,
			       (unsigned long long)as.changes,
			       policy_name(as.policy),
			       (unsigned long long)as.bytes_per_s,
			       (unsigned long long)as.jobs_per_s);
		printf("iopa-demo: max_running=%u (most jobs the workers processed at once)\n",
		       atomic_load(&r->max_running));
	} else {
		printf("iopa-demo: max_running=%u (most jobs the workers processed at once; limit %u)\n",
		       atomic_load(&r->max_running), lim.limit);
	}
	printf("iopa-demo: checksum=%016" PRIx64 " over %lu files%s\n", combined,
	       files_ok, files_ok == r->fl.nr ? "" : " (INCOMPLETE: some files failed)");

	ret = 0;
	if (atomic_load(&r->fatal))
		ret = 1;
	if (passes_differ) {
		fprintf(stderr, "%s: %lu of %u passes disagree with the first\n",
			prog, passes_differ, passes);
		ret = 1;
	}
	if (files_ok != r->fl.nr || r->fl.errors) {
		fprintf(stderr, "%s: %lu of %zu files failed\n", prog,
			(unsigned long)(r->fl.nr - files_ok), r->fl.nr);
		ret = 1;
	}
	if (st.completed != r->nr_jobs) {
		fprintf(stderr, "%s: kernel counted %llu completed jobs, expected %zu\n",
			prog, (unsigned long long)st.completed, r->nr_jobs);
		ret = 1;
	}
	if (r->nr_stray) {
		fprintf(stderr, "%s: %lu completions matched no outstanding job\n",
			prog, r->nr_stray);
		ret = 1;
	}
	/* A fixed limit can be checked; an adaptive one moves between samples. */
	if (!r->adaptive && atomic_load(&r->max_running) > lim.limit) {
		fprintf(stderr, "%s: %u jobs ran at once, above the limit of %u\n",
			prog, atomic_load(&r->max_running), lim.limit);
		ret = 1;
	}
	if (st.submitted != st.completed + st.cancelled + st.pending + st.inflight) {
		fprintf(stderr, "%s: stats invariant broken: submitted != completed + cancelled + pending + inflight\n",
			prog);
		ret = 1;
	}

out_stop:
	atomic_store(&r->stop, true);
	if (reaper_started) {
		atomic_store(&r->submit_done, true);
		atomic_store(&r->fatal, 1);
		pthread_join(reaper, NULL);
	}
	for (i = 0; i < nstarted; i++) {
		pthread_join(workers[i].thread, NULL);
		close(workers[i].fd);
	}
	if (nstarted < nworkers && ret == 0)
		ret = 1;
	if (ret == 0 && r->verbose)
		for (i = 0; i < nstarted; i++)
			printf("worker %u: %lu jobs\n", i, workers[i].jobs);
out_close_sub:
	close(r->sub_fd);
out_close_ctx:
	close(ctx_fd);

	if (check && nstarted == nworkers) {
		uint64_t plain;
		double psecs;
		int cret = checksum_plain(&r->fl, &plain, &psecs);

		printf("check: checksum=%016" PRIx64 " seconds=%.3f (single thread, no iopa%s)\n",
		       plain, psecs, drop ? "" : ", page cache warm");
		if (cret || plain != combined) {
			printf("verify: FAILED (iopa %016" PRIx64 " != plain %016" PRIx64 ")\n",
			       combined, plain);
			ret = 1;
		} else {
			printf("verify: ok\n");
		}
	}
out_free:
	free(jobs);
	free(workers);
	free(r->res);
	file_list_free(&r->fl);
	free(r);
	return ret;

bad_arg:
	fprintf(stderr, "%s: bad value '%s' for -%c\n", prog, optarg, opt);
	usage_run();
	return 2;
}

static void print_usage(void)
{
	fprintf(stderr,
		"usage: %s gen DIR NFILES SIZE     write a file set (SIZE: 4k, 64k, 1m...)\n"
		"       %s run [-w WORKERS] [-l LIMIT] [-b BATCH] [-v] [--check] DIR\n"
		"                                    checksum every file under DIR through /dev/iopa\n"
		"       %s check DIR                 the same checksum, single-threaded, without iopa\n",
		prog, prog, prog);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		print_usage();
		return 2;
	}
	if (!strcmp(argv[1], "gen"))
		return cmd_gen(argc - 1, argv + 1);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		print_usage();
		return 0;
	}
	print_usage();
	return 2;
}
