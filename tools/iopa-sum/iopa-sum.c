// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-sum: SHA-256 of every regular file under the given trees, computed
 * by a libiopa worker pool, so the kernel's adaptive in-flight limit
 * decides how many files are read at once.  The output is sha256sum's:
 *
 *	<64 hex digits>  <path>
 *
 * one line per file, sorted by path (byte-wise, as `LC_ALL=C sort`), so
 * `sha256sum -c` accepts it and it compares equal to
 * `find ARGS -type f | LC_ALL=C sort | xargs sha256sum`.
 *
 * Structure: the main thread walks the operands, sorts the paths, opens
 * and submits one job per file (the kernel holds its own reference, so
 * the fd is closed at once) and reaps the completions through the pool;
 * pool threads hash (OpenSSL's EVP SHA-256, pread() to EOF) into a
 * per-file slot.  Lines are printed in order as soon as every earlier
 * file is done, from the pool's done callback (main thread).  A progress
 * thread writes a status line to stderr when it is a terminal.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <libiopa.h>

#define PROG		"iopa-sum"
#define VERSION		"1.0"
#define READ_BUF	(128 * 1024)
#define SUBMIT_BATCH	64
#define PROGRESS_MS	200

/* One file, in output order. */
struct file {
	char *path;
	unsigned char md[32];		/* written by the hashing thread */
	atomic_int hashed;		/* 1: md is valid (release/acquire) */
	int res;			/* main: the job's result, or -errno */
	bool ended;			/* main: completion seen, or failed early */
};

struct sum {
	struct file *files;
	size_t nr, cap;
	size_t next_out;		/* main: first file not printed yet */
	unsigned long failed;		/* main: files that failed */
	const EVP_MD *sha256;
	struct iopa_pool *pool;

	/* progress */
	atomic_size_t done;
	atomic_ullong bytes;
	atomic_bool stop_progress;
	bool progress;			/* show the status line */
	bool verbose;			/* summary at the end */
	unsigned int lim_lo, lim_hi;	/* limits seen by the sampler */
	pthread_mutex_t err_lock;	/* stderr: messages vs progress line */
	bool line_shown;		/* err_lock */
};

static struct sum S;

/*
 * The file array as the pool threads see it: published (release) once
 * the walk and the sort are done, before the first job is submitted.
 * The kernel's SUBMIT -> FETCH hand-off orders this already; the atomic
 * says so in the code (and to ThreadSanitizer).
 */
static _Atomic(struct file *) files_pub;
static atomic_size_t nr_pub;

static void clear_progress_locked(void)
{
	if (S.line_shown) {
		fputs("\r\033[K", stderr);
		S.line_shown = false;
	}
}

static void __attribute__((format(printf, 2, 3)))
file_error(const char *path, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&S.err_lock);
	clear_progress_locked();
	fprintf(stderr, "%s: %s: ", PROG, path);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&S.err_lock);
}

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "%s: out of memory\n", PROG);
		exit(1);
	}
	return p;
}

static void add_file(char *path)
{
	if (S.nr == S.cap) {
		S.cap = S.cap ? 2 * S.cap : 1024;
		S.files = xrealloc(S.files, S.cap * sizeof(*S.files));
	}
	memset(&S.files[S.nr], 0, sizeof(S.files[0]));
	S.files[S.nr++].path = path;
}

static char *join(const char *dir, const char *name)
{
	size_t ld = strlen(dir), ln = strlen(name);
	bool slash = ld && dir[ld - 1] != '/';
	char *p = xrealloc(NULL, ld + slash + ln + 1);

	memcpy(p, dir, ld);
	if (slash)
		p[ld] = '/';
	memcpy(p + ld + slash, name, ln + 1);
	return p;
}

/*
 * Every regular file under @dir, as `find DIR -type f` lists them:
 * symlinks are not followed, other file types are skipped.  One
 * directory open at a time, whatever the depth: its subdirectories are
 * walked once it is closed (a tree 11 deep took 11 fds, all there are
 * under ulimit -n 16).
 */
static void walk(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **subs = NULL;
	size_t nsubs = 0, i;

	if (!d) {
		file_error(dir, "%s", strerror(errno));
		S.failed++;
		return;
	}
	for (;;) {
		struct stat st;
		char *path;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				file_error(dir, "%s", strerror(errno));
				S.failed++;
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		path = join(dir, de->d_name);
		if (de->d_type == DT_REG) {
			add_file(path);
			continue;
		}
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN) {
			free(path);	/* symlink, fifo, socket, device */
			continue;
		}
		if (lstat(path, &st)) {
			file_error(path, "%s", strerror(errno));
			S.failed++;
			free(path);
		} else if (S_ISDIR(st.st_mode)) {
			subs = xrealloc(subs, (nsubs + 1) * sizeof(*subs));
			subs[nsubs++] = path;
		} else if (S_ISREG(st.st_mode)) {
			add_file(path);
		} else {
			free(path);
		}
	}
	closedir(d);
	for (i = 0; i < nsubs; i++) {
		walk(subs[i]);
		free(subs[i]);
	}
	free(subs);
}

/* An operand: followed if a symlink, like sha256sum and find. */
static void add_operand(const char *arg)
{
	struct stat st;

	if (stat(arg, &st)) {
		file_error(arg, "%s", strerror(errno));
		S.failed++;
	} else if (S_ISDIR(st.st_mode)) {
		walk(arg);
	} else if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode)) {
		size_t len = strlen(arg) + 1;

		add_file(memcpy(xrealloc(NULL, len), arg, len));
	} else {
		file_error(arg, "not a regular file, directory or block device");
		S.failed++;
	}
}

static int path_cmp(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->path,
		      ((const struct file *)b)->path);
}

/* ---- the job: SHA-256 of the whole file, in a pool thread ------------- */

/* One digest context per pool thread, freed when the thread ends. */
static pthread_key_t ctx_key;

static void ctx_free(void *ctx)
{
	EVP_MD_CTX_free(ctx);
}

static EVP_MD_CTX *thread_ctx(void)
{
	EVP_MD_CTX *ctx = pthread_getspecific(ctx_key);

	if (!ctx) {
		ctx = EVP_MD_CTX_new();
		if (ctx && pthread_setspecific(ctx_key, ctx)) {
			EVP_MD_CTX_free(ctx);
			ctx = NULL;
		}
	}
	return ctx;
}

static int sum_job(void *arg, const struct iopa_work *w)
{
	unsigned char buf[READ_BUF];
	struct file *f;
	EVP_MD_CTX *ctx;
	unsigned int mdlen = 0;
	uint64_t off = 0;
	int res = 0;

	(void)arg;
	f = atomic_load_explicit(&files_pub, memory_order_acquire);
	if (!f || w->user_data >= atomic_load(&nr_pub))
		return -EINVAL;
	f += w->user_data;
	ctx = thread_ctx();
	if (!ctx || !EVP_DigestInit_ex2(ctx, S.sha256, NULL))
		return -ENOMEM;
	/* Larger readahead, for files that take more than one read. */
	if (w->len > READ_BUF)
		posix_fadvise(w->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		ssize_t n = pread(w->fd, buf, sizeof(buf), (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			res = -errno;
			break;
		}
		if (n == 0)
			break;
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n)) {
			res = -EIO;
			break;
		}
		off += (uint64_t)n;
		atomic_fetch_add(&S.bytes, (unsigned long long)n);
	}
	if (!res && (!EVP_DigestFinal_ex(ctx, f->md, &mdlen) || mdlen != 32))
		res = -EIO;
	if (!res)
		atomic_store_explicit(&f->hashed, 1, memory_order_release);
	atomic_fetch_add(&S.done, 1);
	return res;
}

/*
 * A readable regular file that the module refuses as a job (EINVAL: a
 * file without the usual read path, such as /proc/self/personality),
 * hashed here, in the submitting thread, as a pool thread would: its
 * I/O is not the kernel's to measure.  Returns the job's result.
 */
static int sum_here(const struct iopa_job *job)
{
	struct iopa_work w;

	memset(&w, 0, sizeof(w));
	w.fd = job->fd;
	w.user_data = job->user_data;
	w.len = job->len;
	return sum_job(NULL, &w);
}

/* ---- output, in path order ---------------------------------------------- */

/*
 * sha256sum's line: a name with a backslash, newline or carriage return
 * is escaped (\\, \n, \r) and the line starts with a backslash.
 */
static void print_line(const struct file *f)
{
	static const char hex[] = "0123456789abcdef";
	const char *p = f->path;
	char line[64];
	int i;

	for (i = 0; i < 32; i++) {
		line[2 * i] = hex[f->md[i] >> 4];
		line[2 * i + 1] = hex[f->md[i] & 15];
	}
	if (strpbrk(p, "\\\n\r"))
		putchar('\\');
	fwrite(line, 1, sizeof(line), stdout);
	fputs("  ", stdout);
	for (; *p; p++) {
		switch (*p) {
		case '\\': fputs("\\\\", stdout); break;
		case '\n': fputs("\\n", stdout); break;
		case '\r': fputs("\\r", stdout); break;
		default: putchar(*p);
		}
	}
	putchar('\n');
}

static void flush_in_order(void)
{
	while (S.next_out < S.nr && S.files[S.next_out].ended) {
		const struct file *f = &S.files[S.next_out++];

		if (!f->res)
			print_line(f);
	}
}

/* A file ended: its job's completion, or a failure before submission. */
static void file_ended(size_t i, int res)
{
	struct file *f = &S.files[i];

	if (f->ended)
		return;
	if (!res && !atomic_load_explicit(&f->hashed, memory_order_acquire))
		res = -EPROTO;
	f->res = res;
	f->ended = true;
	if (res) {
		S.failed++;
		file_error(f->path, "%s", strerror(-res));
	}
	flush_in_order();
}

/* The pool's done callback: main thread, inside submit or wait. */
static void sum_done(void *arg, const struct iopa_cqe *cqe)
{
	(void)arg;
	if (cqe->user_data < S.nr)
		file_ended(cqe->user_data, cqe->res > 0 ? 0 : cqe->res);
}

/* ---- progress ------------------------------------------------------------ */

static void note_limit(int limit)
{
	if (limit <= 0)
		return;
	if (!S.lim_lo || (unsigned int)limit < S.lim_lo)
		S.lim_lo = limit;
	if ((unsigned int)limit > S.lim_hi)
		S.lim_hi = limit;
}

/* The sampler: the limit in force (for -v), the status line (progress). */
static void *progress_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&S.stop_progress)) {
		struct iopa_pool_info info;
		struct timespec ts = { 0, PROGRESS_MS * 1000000L };
		int limit;

		iopa_pool_get_info(S.pool, &info);
		limit = (int)info.limit;
		note_limit(limit);
		nanosleep(&ts, NULL);
		if (atomic_load(&S.stop_progress) || !S.progress)
			continue;
		pthread_mutex_lock(&S.err_lock);
		fprintf(stderr, "\r\033[K%s: %zu/%zu files, %.1f MiB, %u threads, limit %d",
			PROG, atomic_load(&S.done), S.nr,
			atomic_load(&S.bytes) / 1048576.0, info.threads, limit);
		S.line_shown = true;
		pthread_mutex_unlock(&S.err_lock);
	}
	return NULL;
}

/* ---- main ---------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

#define JOIN_HINT "to use the module, join group iopa (sudo usermod -aG iopa " \
		  "\"$USER\", then log in again)"

/* -v: whether the pool uses the module, and why not. */
static void say_which(void)
{
	struct iopa_pool_info info;

	if (iopa_pool_get_info(S.pool, &info))
		return;
	if (!(info.flags & IOPA_POOL_INFO_F_INPROC)) {
		fprintf(stderr, "%s: using the iopa module (%s)\n", PROG,
			LIBIOPA_DEV_PATH);
	} else if (!info.module_err) {
		fprintf(stderr, "%s: in process, without the module (-p)\n",
			PROG);
	} else {
		fprintf(stderr, "%s: in process, without the module: %s: %s\n",
			PROG, LIBIOPA_DEV_PATH, strerror((int)info.module_err));
		if (info.module_err == EACCES || info.module_err == EPERM)
			fprintf(stderr, "%s: %s\n", PROG, JOIN_HINT);
	}
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: %s [-j MAXTHREADS] [-l LIMIT] [-m|-p] [-q] [-v] [--progress]\n"
		"          FILE|DIR...\n"
		"Print the SHA-256 of every regular file under each DIR (and of each\n"
		"FILE), in sha256sum's format, sorted by path.  The files are read by\n"
		"a pool of iopa worker threads: the kernel's in-flight limit decides\n"
		"how many at once (without the iopa module, the same adaptive limit\n"
		"runs in the process).\n"
		"\n"
		"  -j, --max-threads N  at most N worker threads (default: the module's\n"
		"                       max_limit + 1; 257 without the module)\n"
		"  -l, --limit N        pin the in-flight limit at N (default 0: the\n"
		"                       kernel adapts it)\n"
		"  -m, --module         the iopa module or nothing: fail if /dev/iopa\n"
		"                       cannot be used (default: the pool runs in the\n"
		"                       process then)\n"
		"  -p, --in-process     run the pool in the process even where the\n"
		"                       module is loaded\n"
		"  -q, --quiet          no progress line (default: shown when stderr\n"
		"                       is a terminal)\n"
		"  -v, --verbose        on stderr, first whether the module is used (and\n"
		"                       why not), at the end a summary: files, bytes,\n"
		"                       time, the limits the kernel chose, threads\n"
		"      --progress       show the progress line even if stderr is not\n"
		"                       a terminal\n"
		"  -h, --help           this text\n"
		"  -V, --version        the version\n"
		"\n"
		"Errors are reported per file on stderr; the exit status is 0 if every\n"
		"file was read, 1 if any failed, 2 on a usage error.\n",
		PROG);
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

/*
 * Files opened at once before their submission: at most a quarter of the
 * fds the process may still open (RLIMIT_NOFILE less those open), so that
 * iopa-sum works wherever `find | xargs sha256sum` does (ulimit -n 16);
 * the pool takes at most half (libiopa(7)).
 */
static unsigned int open_batch(void)
{
	unsigned long open_now = 0, left;
	struct rlimit rl;
	struct dirent *e;
	DIR *d;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1UL << 20))
		return SUBMIT_BATCH;
	d = opendir("/proc/self/fd");
	if (!d)
		return SUBMIT_BATCH;
	while ((e = readdir(d)))
		open_now += e->d_name[0] != '.';
	closedir(d);
	left = rl.rlim_cur > open_now ? rl.rlim_cur - open_now : 0;
	left /= 4;
	return left < 1 ? 1 : left > SUBMIT_BATCH ? SUBMIT_BATCH : (unsigned int)left;
}

/*
 * Out of fds (EMFILE, ENFILE) with jobs of ours in flight: wait for them
 * (their fds are then closed) and try again; true if worth a retry.
 */
static bool fds_freed(void)
{
	struct iopa_pool_info info;
	int r;

	if (iopa_pool_get_info(S.pool, &info) || !info.outstanding)
		return false;
	do
		r = iopa_pool_wait(S.pool);
	while (r == -EINTR);
	return r == 0;
}

/* Open and submit files [0, S.nr); failures end their file at once. */
static int submit_all(void)
{
	struct iopa_job jobs[SUBMIT_BATCH];
	size_t idx[SUBMIT_BATCH];
	unsigned int batch = open_batch();
	size_t i = 0;

	while (i < S.nr) {
		unsigned int nb = 0, k = 0;

		while (nb < batch && i < S.nr) {
			struct stat st;
			int fd;

			fd = open(S.files[i].path,
				  O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			/* No fd left: submit those open, or wait for ours. */
			if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
				int e = errno;

				if (nb || fds_freed())
					break;
				errno = e;	/* not even one fits */
			}
			if (fd < 0 || fstat(fd, &st)) {
				int e = errno;

				if (fd >= 0)
					close(fd);
				file_ended(i++, -e);
				continue;
			}
			if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
				close(fd);	/* replaced since the walk */
				file_ended(i++, -EINVAL);
				continue;
			}
			memset(&jobs[nb], 0, sizeof(jobs[nb]));
			jobs[nb].fd = fd;
			jobs[nb].len = S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
			jobs[nb].user_data = i;
			idx[nb++] = i++;
		}
		while (k < nb) {
			int r = iopa_pool_submit(S.pool, jobs + k, nb - k);

			if (r > 0) {
				k += (unsigned int)r;
				continue;
			}
			if (r == -EINTR)
				continue;
			if (r != -EBADF && r != -EINVAL) {
				/* Not this file's fault: give up the run. */
				fprintf(stderr, "%s: submit: %s\n", PROG,
					strerror(-r));
				for (; k < nb; k++)
					close(jobs[k].fd);
				return r;
			}
			if (r == -EINVAL)
				r = sum_here(&jobs[k]);
			file_ended(idx[k], r);
			k++;
		}
		/* The kernel holds its own references. */
		for (k = 0; k < nb; k++)
			close(jobs[k].fd);
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "max-threads", required_argument, NULL, 'j' },
		{ "limit", required_argument, NULL, 'l' },
		{ "module", no_argument, NULL, 'm' },
		{ "in-process", no_argument, NULL, 'p' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "progress", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct iopa_pool_opts po;
	pthread_t progress_thread;
	int opt, r, i, status = 0;
	bool quiet = false, force_progress = false, sampling;
	double t0;
	size_t n;

	memset(&po, 0, sizeof(po));
	while ((opt = getopt_long(argc, argv, "j:l:mpqvhV", opts, NULL)) != -1) {
		switch (opt) {
		case 'j':
			if (parse_uint(optarg, 65536, &po.max_threads) ||
			    !po.max_threads)
				goto bad_arg;
			break;
		case 'l':
			if (parse_uint(optarg, IOPA_LIMIT_MAX, &po.limit))
				goto bad_arg;
			break;
		case 'm':
			po.flags |= IOPA_POOL_F_MODULE;
			break;
		case 'p':
			po.flags |= IOPA_POOL_F_INPROC;
			break;
		case 'q':
			quiet = true;
			break;
		case 'v':
			S.verbose = true;
			break;
		case 'P':
			force_progress = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("%s %s (libiopa %d.%d)\n", PROG, VERSION,
			       LIBIOPA_VERSION_MAJOR, LIBIOPA_VERSION_MINOR);
			return 0;
		default:
			goto bad_usage;
		}
	}
	if (optind == argc)
		goto bad_usage;
	if ((po.flags & IOPA_POOL_F_MODULE) && (po.flags & IOPA_POOL_F_INPROC)) {
		fprintf(stderr, "%s: -m and -p exclude each other\n", PROG);
		goto bad_usage;
	}
	pthread_mutex_init(&S.err_lock, NULL);
	S.progress = !quiet && (force_progress || isatty(STDERR_FILENO));

	if (pthread_key_create(&ctx_key, ctx_free)) {
		fprintf(stderr, "%s: pthread_key_create failed\n", PROG);
		return 1;
	}
	S.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	if (!S.sha256) {
		fprintf(stderr, "%s: OpenSSL has no SHA256\n", PROG);
		return 1;
	}
	po.done = sum_done;
	/*
	 * Without the module, the pool's knee cache (libiopa(7)): a run on
	 * a tree of a disk seen before starts where the last one's search
	 * got.  A library writes no file unasked; a tool run again and
	 * again on the same disks asks, unless the caller said otherwise
	 * (IOPA_KNEES_CACHE empty: none).
	 */
	if (setenv("IOPA_KNEES_CACHE", "default", 0)) {
		fprintf(stderr, "%s: setenv: %s\n", PROG, strerror(errno));
		return 1;
	}
	r = iopa_pool_init(&S.pool, -1, &po);
	if (r == 0) {
		r = iopa_pool_create_threads(S.pool, sum_job, NULL);
		if (r < 0)
			iopa_pool_close(S.pool);
	}
	if (r < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, LIBIOPA_DEV_PATH,
			strerror(-r));
		if (r == -EACCES || r == -EPERM)
			fprintf(stderr, "%s: %s\n", PROG, JOIN_HINT);
		return 1;
	}
	if (S.verbose)
		say_which();
	/* The pool first: no walk of a large tree to learn iopa is missing. */
	for (i = optind; i < argc; i++)
		add_operand(argv[i]);
	qsort(S.files, S.nr, sizeof(*S.files), path_cmp);
	atomic_store(&nr_pub, S.nr);
	atomic_store_explicit(&files_pub, S.files, memory_order_release);

	sampling = S.progress || S.verbose;
	if (sampling &&
	    pthread_create(&progress_thread, NULL, progress_main, NULL))
		sampling = S.progress = false;
	t0 = now_s();

	r = submit_all();
	if (r == 0) {
		do
			r = iopa_pool_wait(S.pool);
		while (r == -EINTR);
	}
	if (r < 0) {
		fprintf(stderr, "%s: %s\n", PROG, strerror(-r));
		status = 1;
	}

	if (sampling) {
		atomic_store(&S.stop_progress, true);
		pthread_join(progress_thread, NULL);
		pthread_mutex_lock(&S.err_lock);
		clear_progress_locked();
		pthread_mutex_unlock(&S.err_lock);
	}
	if (S.verbose) {
		struct iopa_pool_info info;
		double secs = now_s() - t0;

		iopa_pool_get_info(S.pool, &info);
		fprintf(stderr, "%s: %zu files, %.1f MiB in %.2f s (%.0f files/s, %.1f MiB/s); "
			"limit %u..%u%s; threads: peak %u, started %llu\n",
			PROG, S.nr, atomic_load(&S.bytes) / 1048576.0, secs,
			secs > 0 ? S.nr / secs : 0.0,
			secs > 0 ? atomic_load(&S.bytes) / 1048576.0 / secs : 0.0,
			S.lim_lo, S.lim_hi,
			info.flags & IOPA_POOL_INFO_F_INPROC ? " (in process)" : "",
			info.peak_threads,
			(unsigned long long)info.threads_started);
	}
	iopa_pool_close(S.pool);

	/* Anything not ended now never completed. */
	for (n = 0; n < S.nr; n++)
		if (!S.files[n].ended)
			file_ended(n, -ECANCELED);
	flush_in_order();
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "%s: write error: %s\n", PROG, strerror(errno));
		status = 1;
	}
	if (S.failed)
		status = 1;
	EVP_MD_free((EVP_MD *)S.sha256);
	for (n = 0; n < S.nr; n++)
		free(S.files[n].path);
	free(S.files);
	return status;

bad_arg:
	fprintf(stderr, "%s: bad value '%s' for -%c\n", PROG, optarg, opt);
bad_usage:
	fprintf(stderr, "usage: %s [-j MAXTHREADS] [-l LIMIT] [-m|-p] [-q] [-v] FILE|DIR...\n"
		"Try '%s --help' for more information.\n", PROG, PROG);
	return 2;
}
