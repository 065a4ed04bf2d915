// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-sum: SHA-256 of files and of every regular file under the given
 * trees, computed by a libiopa worker pool, so the kernel's adaptive
 * in-flight limit decides how many files are read at once; a drop-in for
 * sha256sum (GNU coreutils'), whose output, options (-c with --quiet,
 * --status, --strict, -w, --ignore-missing; -b, -t, -z, --tag; - and
 * standard input) and exit statuses it has:
 *
 *	<64 hex digits>  <path>
 *
 * one line per file, operands in the order given, the files under a
 * directory operand sorted by path (byte-wise, as `LC_ALL=C sort`), so
 * `sha256sum -c` accepts it and, for a directory, it compares equal to
 * `find DIR -type f | LC_ALL=C sort | xargs sha256sum` (sha256sum itself
 * refuses a directory).  --files0-from reads the operands from a file.
 *
 * Structure: the main thread walks the operands (or reads the check
 * lists), opens and submits one job per file (the kernel holds its own
 * reference, so the fd is closed at once) and reaps the completions
 * through the pool; pool threads hash (OpenSSL's EVP SHA-256, pread() to
 * EOF) into a per-file slot.  Standard input, devices and FIFOs are
 * hashed in the main thread.  Each entry's line (and its error, on
 * stderr) is printed in order as soon as every earlier one is done, from
 * the pool's done callback (main thread), so stdout and stderr come out
 * as sha256sum's.  A progress thread writes a status line to stderr when
 * it is a terminal.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <locale.h>
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

/* What an entry of the output is. */
enum kind {
	K_FILE,		/* a file to hash (and, with -c, to check) */
	K_BADLINE,	/* -c: an improperly formatted line (-w says so) */
	K_LISTEND,	/* -c: the end of a check list: its summary */
};

/* One entry, in output order. */
struct file {
	char *path;			/* K_FILE: the file; else unused */
	unsigned char md[32];		/* written by the hashing thread */
	atomic_int hashed;		/* 1: md is valid (release/acquire) */
	int res;			/* main: the job's result, or -errno */
	bool ended;			/* main: completion seen, or failed early */
	bool here;			/* hashed in the main thread */
	unsigned char kind;		/* enum kind */
	unsigned int list;		/* -c: its check list (S.lists) */
	unsigned long line;		/* K_BADLINE: its line number */
	unsigned char want[32];		/* -c: the digest the line gives */
};

/* -c: a check list and what its lines came to. */
struct list {
	char *name;			/* as messages name it */
	unsigned long proper, bad, unread, mismatch, matched;
};

struct sum {
	struct file *files;
	size_t nr, cap;
	size_t next_out;		/* main: first file not printed yet */
	unsigned long failed;		/* main: files (or -c lists) that failed */
	const EVP_MD *sha256;
	struct iopa_pool *pool;

	/* sha256sum's options */
	bool check, tag, zero, binary;
	bool quiet_ok, status, strict, warn, ignore_missing;
	struct list *lists;		/* -c */
	unsigned int nr_lists;

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

/*
 * @name on stderr as coreutils' quotef() writes it (gnulib's shell-escape
 * quoting): as is if the shell would take it as one word; else in single
 * quotes, a quote as '\'' and a control byte (or, outside a UTF-8 locale,
 * any byte above 127) as $'\n' or $'\ooo' between quoted parts.
 */
static void put_quoted(const char *name)
{
	static const char safe[] = "%+,-./:=@^_";
	const unsigned char *p = (const unsigned char *)name;
	bool quote = !*p, utf8 = MB_CUR_MAX > 1, esc = false;

	for (; *p && !quote; p++)
		quote = !(isalnum(*p) || strchr(safe, *p) || (*p >= 128 && utf8));
	if (!quote) {
		fputs(name, stderr);
		return;
	}
	/* a quote, and nothing the shell reads inside "": in "" */
	if (strchr(name, '\'') && !strpbrk(name, "\"$`\\")) {
		for (p = (const unsigned char *)name; *p; p++)
			if (*p < 32 || *p == 127 || (*p >= 128 && !utf8))
				break;
		if (!*p) {
			fprintf(stderr, "\"%s\"", name);
			return;
		}
	}
	/* '...', control bytes grouped in $'...' between the quoted parts */
	fputc('\'', stderr);
	for (p = (const unsigned char *)name; *p; p++) {
		bool ctl = *p < 32 || *p == 127 || (*p >= 128 && !utf8);

		if (ctl && !esc)
			fputs("'$'", stderr);
		else if (!ctl && esc)
			fputs("''", stderr);
		esc = ctl;
		if (!ctl && *p == '\'')
			fputs("'\\''", stderr);
		else if (!ctl)
			fputc(*p, stderr);
		else if (*p == '\n')
			fputs("\\n", stderr);
		else if (*p == '\t')
			fputs("\\t", stderr);
		else if (*p == '\r')
			fputs("\\r", stderr);
		else
			fprintf(stderr, "\\%03o", *p);
	}
	fputc('\'', stderr);
}

static void __attribute__((format(printf, 2, 3)))
file_error(const char *path, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&S.err_lock);
	clear_progress_locked();
	fprintf(stderr, "%s: ", PROG);
	put_quoted(path);
	fputs(": ", stderr);
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

static struct file *add_entry(char *path, enum kind kind)
{
	struct file *f;

	if (S.nr == S.cap) {
		S.cap = S.cap ? 2 * S.cap : 1024;
		S.files = xrealloc(S.files, S.cap * sizeof(*S.files));
	}
	f = &S.files[S.nr++];
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->kind = kind;
	f->ended = kind != K_FILE;	/* nothing to wait for */
	return f;
}

static void add_file(char *path)
{
	add_entry(path, K_FILE);
}

static char *xstrdup(const char *s)
{
	size_t len = strlen(s) + 1;

	return memcpy(xrealloc(NULL, len), s, len);
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

static int path_cmp(const void *a, const void *b)
{
	return strcmp(((const struct file *)a)->path,
		      ((const struct file *)b)->path);
}

/*
 * An operand, in the order given: "-" is standard input; a directory
 * (followed if a symlink, like find) gives its regular files, sorted by
 * path; anything else is a file to hash as sha256sum would (a device or
 * a FIFO in the main thread), its errors reported when its turn comes.
 */
static void add_operand(const char *arg)
{
	size_t from = S.nr;
	struct stat st;

	if (strcmp(arg, "-") && !stat(arg, &st) && S_ISDIR(st.st_mode)) {
		walk(arg);
		qsort(S.files + from, S.nr - from, sizeof(*S.files), path_cmp);
		return;
	}
	add_file(xstrdup(arg));
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
	bool seq = false;
	int res = 0;

	(void)arg;
	f = atomic_load_explicit(&files_pub, memory_order_acquire);
	if (!f || w->user_data >= atomic_load(&nr_pub))
		return -EINVAL;
	f += w->user_data;
	/* standard input from where it is, as sha256sum reads it: "- -" */
	seq = !strcmp(f->path, "-");
	ctx = thread_ctx();
	if (!ctx || !EVP_DigestInit_ex2(ctx, S.sha256, NULL))
		return -ENOMEM;
	/* Larger readahead, for files that take more than one read. */
	if (w->len > READ_BUF)
		posix_fadvise(w->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	for (;;) {
		/* pread() to EOF; read() where there is no offset (a pipe) */
		ssize_t n = seq ? read(w->fd, buf, sizeof(buf)) :
			    pread(w->fd, buf, sizeof(buf), (off_t)off);

		if (n < 0 && !seq && !off && errno == ESPIPE) {
			seq = true;
			continue;
		}
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
 * A file hashed here, in the submitting thread, as a pool thread would:
 * standard input, a device or a FIFO, or a readable regular file that
 * the module refuses as a job (EINVAL: a file without the usual read
 * path, such as /proc/self/personality); their I/O is not the kernel's
 * to measure.  Returns the job's result.
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

/* ---- output, in order -------------------------------------------------- */

static const char hex[] = "0123456789abcdef";

/* @name as sha256sum writes it: \\ \n \r escaped (with @esc). */
static void put_name(const char *name, bool esc)
{
	for (; *name; name++) {
		if (esc && *name == '\\')
			fputs("\\\\", stdout);
		else if (esc && *name == '\n')
			fputs("\\n", stdout);
		else if (esc && *name == '\r')
			fputs("\\r", stdout);
		else
			putchar(*name);
	}
}

/*
 * sha256sum's line: "<hex>  <name>" (with -b "<hex> *<name>"), with
 * --tag "SHA256 (<name>) = <hex>".  A name with a backslash, newline or
 * carriage return is escaped and the line starts with a backslash,
 * unless -z: then lines end in NUL and nothing is escaped.
 */
static void print_line(const struct file *f)
{
	const char *p = f->path;
	bool esc = !S.zero && strpbrk(p, "\\\n\r");
	char line[64];
	int i;

	for (i = 0; i < 32; i++) {
		line[2 * i] = hex[f->md[i] >> 4];
		line[2 * i + 1] = hex[f->md[i] & 15];
	}
	if (esc)
		putchar('\\');
	if (S.tag) {
		fputs("SHA256 (", stdout);
		put_name(p, esc);
		fputs(") = ", stdout);
		fwrite(line, 1, sizeof(line), stdout);
	} else {
		fwrite(line, 1, sizeof(line), stdout);
		fputs(S.binary ? " *" : "  ", stdout);
		put_name(p, esc);
	}
	putchar(S.zero ? '\0' : '\n');
}

/* -c: "<name>: <what>", a name with a newline escaped, as sha256sum does. */
static void print_checked(const struct file *f, const char *what)
{
	bool esc = strchr(f->path, '\n');

	if (esc)
		putchar('\\');
	put_name(f->path, esc);
	printf(": %s\n", what);
}

static void plural(unsigned long n, const char *one, const char *many)
{
	if (n)
		fprintf(stderr, "%s: WARNING: %lu %s\n", PROG, n, n == 1 ? one : many);
}

/* -c: the end of a list: its summary, and whether it failed. */
static void list_end(const struct list *l)
{
	bool ok;

	if (!l->proper) {
		file_error(l->name, "no properly formatted checksum lines found");
		S.failed++;
		return;
	}
	if (!S.status) {
		plural(l->bad, "line is improperly formatted",
		       "lines are improperly formatted");
		plural(l->unread, "listed file could not be read",
		       "listed files could not be read");
		plural(l->mismatch, "computed checksum did NOT match",
		       "computed checksums did NOT match");
		if (S.ignore_missing && !l->matched)
			file_error(l->name, "no file was verified");
	}
	ok = l->matched && !l->mismatch && !l->unread &&
	     !(S.strict && l->bad);
	if (!ok)
		S.failed++;
}

/* An entry whose turn came: its line on stdout, its error on stderr. */
static void print_entry(const struct file *f)
{
	struct list *l = S.check ? &S.lists[f->list] : NULL;

	switch (f->kind) {
	case K_BADLINE:
		if (S.warn)
			file_error(l->name, "%lu: improperly formatted SHA256 checksum line",
				   f->line);
		return;
	case K_LISTEND:
		list_end(l);
		return;
	}
	if (!S.check) {
		if (f->res) {
			S.failed++;
			file_error(f->path, "%s", strerror(-f->res));
		} else {
			print_line(f);
		}
		return;
	}
	if (f->res) {
		if (S.ignore_missing && f->res == -ENOENT)
			return;
		file_error(f->path, "%s", strerror(-f->res));
		l->unread++;
		if (!S.status)
			print_checked(f, "FAILED open or read");
	} else if (memcmp(f->md, f->want, sizeof(f->md))) {
		l->mismatch++;
		if (!S.status)
			print_checked(f, "FAILED");
	} else {
		l->matched++;
		if (!S.status && !S.quiet_ok)
			print_checked(f, "OK");
	}
}

static void flush_in_order(void)
{
	while (S.next_out < S.nr && S.files[S.next_out].ended)
		print_entry(&S.files[S.next_out++]);
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
	flush_in_order();
}

/* The pool's done callback: main thread, inside submit or wait. */
static void sum_done(void *arg, const struct iopa_cqe *cqe)
{
	(void)arg;
	if (cqe->user_data < S.nr)
		file_ended(cqe->user_data, cqe->res > 0 ? 0 : cqe->res);
}

/* ---- -c: the check lists ----------------------------------------------- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 64 hex digits at @s into @md; false if they are not. */
static bool parse_hex(const char *s, unsigned char md[32])
{
	int i, hi, lo;

	for (i = 0; i < 32; i++) {
		hi = hexval(s[2 * i]);
		lo = hi < 0 ? -1 : hexval(s[2 * i + 1]);
		if (lo < 0)
			return false;
		md[i] = (unsigned char)(hi << 4 | lo);
	}
	return true;
}

/* An escaped name (\\, \n, \r) unescaped in place; false if malformed. */
static bool unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (*s != '\\') {
			*d++ = *s;
			continue;
		}
		switch (*++s) {
		case '\\': *d++ = '\\'; break;
		case 'n': *d++ = '\n'; break;
		case 'r': *d++ = '\r'; break;
		default: return false;
		}
	}
	*d = '\0';
	return true;
}

/*
 * One line of a check list, as sha256sum reads it: "<hex>  <name>",
 * "<hex> *<name>", or --tag's "SHA256 (<name>) = <hex>"; a leading
 * backslash marks an escaped name; leading blanks and a trailing CR
 * ignored.  Returns the name (in @line) or NULL, the digest in @md.
 */
static char *parse_line(char *line, unsigned char md[32])
{
	size_t len = strlen(line);
	bool esc = false;
	char *name, *end;

	if (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (len && line[len - 1] == '\r')
		line[--len] = '\0';
	while (*line == ' ' || *line == '\t')
		line++;
	if (*line == '\\') {
		esc = true;
		line++;
	}
	if (!strncmp(line, "SHA256 (", 8)) {
		name = line + 8;
		end = strstr(name, ") = ");
		/* the last ") = ": a name may hold one */
		while (end && strstr(end + 1, ") = "))
			end = strstr(end + 1, ") = ");
		if (!end || strlen(end + 4) != 64 || !parse_hex(end + 4, md))
			return NULL;
		*end = '\0';
	} else {
		if (strlen(line) < 66 || !parse_hex(line, md) || line[64] != ' ' ||
		    (line[65] != ' ' && line[65] != '*'))
			return NULL;
		name = line + 66;
	}
	if (!*name || (esc && !unescape(name)))
		return NULL;
	return name;
}

/*
 * -c: the lines of check list @arg ("-": standard input) become entries:
 * one per file named, one per improperly formatted line (-w reports it
 * in its turn), and the list's end (its summary).
 */
static void read_list(const char *arg)
{
	bool in = !strcmp(arg, "-");
	FILE *fp = in ? stdin : fopen(arg, "re");
	unsigned long lineno = 0;
	struct list *l;
	struct file *f;
	char *line = NULL;
	size_t cap = 0;

	if (!fp) {
		file_error(arg, "%s", strerror(errno));
		S.failed++;
		return;
	}
	S.lists = xrealloc(S.lists, (S.nr_lists + 1) * sizeof(*S.lists));
	l = &S.lists[S.nr_lists];
	memset(l, 0, sizeof(*l));
	l->name = xstrdup(in ? "standard input" : arg);
	while (getline(&line, &cap, fp) > 0) {
		unsigned char md[32];
		char *name;

		lineno++;
		name = parse_line(line, md);
		if (!name) {
			l->bad++;
			f = add_entry(NULL, K_BADLINE);
			f->line = lineno;
		} else {
			l->proper++;
			f = add_entry(xstrdup(name), K_FILE);
			memcpy(f->want, md, sizeof(md));
		}
		f->list = S.nr_lists;
	}
	if (ferror(fp)) {
		file_error(arg, "%s", strerror(errno));
		S.failed++;
	}
	free(line);
	if (!in)
		fclose(fp);
	f = add_entry(NULL, K_LISTEND);
	f->list = S.nr_lists++;
}

/*
 * --files0-from: the operands, NUL-separated, from file @arg ("-":
 * standard input).
 */
static int read_files0(const char *arg)
{
	bool in = !strcmp(arg, "-");
	FILE *fp = in ? stdin : fopen(arg, "re");
	unsigned long n = 0;
	char *name = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!fp) {
		fprintf(stderr, "%s: cannot open '%s' for reading: %s\n", PROG,
			arg, strerror(errno));
		return -1;
	}
	while ((len = getdelim(&name, &cap, '\0', fp)) > 0) {
		n++;
		if (name[len - 1] == '\0')
			len--;
		name[len] = '\0';
		if (!len) {
			fprintf(stderr, "%s: %s:%lu: invalid zero-length file name\n",
				PROG, in ? "-" : arg, n);
			S.failed++;
		} else if (in && !strcmp(name, "-")) {
			fprintf(stderr, "%s: when reading file names from standard input, no file name of '-' allowed\n",
				PROG);
			S.failed++;
		} else {
			add_operand(name);
		}
	}
	free(name);
	if (!in)
		fclose(fp);
	return 0;
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
		"usage: %s [OPTION]... [FILE|DIR]...\n"
		"Print or check SHA-256 checksums, as sha256sum does, of each FILE and\n"
		"of every regular file under each DIR (sorted by path), reading them\n"
		"with a pool of iopa worker threads: the kernel's in-flight limit\n"
		"decides how many at once (without the iopa module, the same adaptive\n"
		"limit runs in the process).  With no FILE, or when FILE is -, read\n"
		"standard input.\n"
		"\n"
		"sha256sum's options:\n"
		"  -b, --binary         '*' before the name (no difference on Linux)\n"
		"  -c, --check          read checksums from the FILEs and check them\n"
		"      --tag            BSD-style lines: SHA256 (FILE) = HEX\n"
		"  -t, --text           ' ' before the name (the default)\n"
		"  -z, --zero           end each line with NUL, no name escaping\n"
		"      --files0-from=F  the operands, NUL-separated, from F (-: stdin)\n"
		"  with -c only:\n"
		"      --ignore-missing no failure or status for missing files\n"
		"  -q, --quiet          no OK lines (and no progress line)\n"
		"      --status         no output; the exit status says it all\n"
		"      --strict         fail on improperly formatted lines\n"
		"  -w, --warn           warn of improperly formatted lines\n"
		"\n"
		"iopa-sum's:\n"
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
		"file was read (with -c: and matched), 1 otherwise, as sha256sum's.\n",
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
	long left = iopa_fds_left();

	if (left < 0)
		return SUBMIT_BATCH;
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

/* Entry @i's file, open at @fd, hashed here: its result. */
static int hash_here(int fd, size_t i)
{
	struct iopa_job job;
	int fl = fcntl(fd, F_GETFL);

	/* A FIFO waits for its writer, as sha256sum's read does. */
	if (fl >= 0 && (fl & O_NONBLOCK))
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	memset(&job, 0, sizeof(job));
	job.fd = fd;
	job.user_data = i;
	return sum_here(&job);
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

			if (S.files[i].ended) {		/* not a file */
				i++;
				continue;
			}
			if (!strcmp(S.files[i].path, "-")) {	/* stdin */
				int r = hash_here(STDIN_FILENO, i);

				file_ended(i++, r);
				continue;
			}
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
			if (S_ISDIR(st.st_mode)) {	/* -c, or a race */
				close(fd);
				file_ended(i++, -EISDIR);
				continue;
			}
			if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
				/* a device, a FIFO: as sha256sum reads them */
				int r = hash_here(fd, i);

				close(fd);
				file_ended(i++, r);
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
		/* sha256sum's */
		{ "binary", no_argument, NULL, 'b' },
		{ "check", no_argument, NULL, 'c' },
		{ "text", no_argument, NULL, 't' },
		{ "zero", no_argument, NULL, 'z' },
		{ "tag", no_argument, NULL, 'T' },
		{ "ignore-missing", no_argument, NULL, 'I' },
		{ "status", no_argument, NULL, 'S' },
		{ "strict", no_argument, NULL, 'X' },
		{ "warn", no_argument, NULL, 'w' },
		{ "files0-from", required_argument, NULL, 'F' },
		{ NULL, 0, NULL, 0 },
	};
	struct iopa_pool_opts po;
	pthread_t progress_thread;
	int opt, r, i, status = 0;
	bool quiet = false, force_progress = false, sampling, text = false;
	const char *files0 = NULL;
	double t0;
	size_t n;

	memset(&po, 0, sizeof(po));
	while ((opt = getopt_long(argc, argv, "bctzwj:l:mpqvhV", opts,
				  NULL)) != -1) {
		switch (opt) {
		case 'b':
			S.binary = true;
			break;
		case 'c':
			S.check = true;
			break;
		case 't':
			text = true;
			S.binary = false;
			break;
		case 'z':
			S.zero = true;
			break;
		case 'T':
			S.tag = true;
			break;
		case 'I':
			S.ignore_missing = true;
			break;
		case 'S':
			S.status = true;
			break;
		case 'X':
			S.strict = true;
			break;
		case 'w':
			S.warn = true;
			break;
		case 'F':
			files0 = optarg;
			break;
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
	if ((po.flags & IOPA_POOL_F_MODULE) && (po.flags & IOPA_POOL_F_INPROC)) {
		fprintf(stderr, "%s: -m and -p exclude each other\n", PROG);
		goto bad_usage;
	}
	/* sha256sum's checks and messages */
	S.quiet_ok = quiet && S.check;
	if (S.check && S.tag) {
		fprintf(stderr, "%s: the --tag option is meaningless when verifying checksums\n", PROG);
		goto bad_usage;
	}
	if (S.check && S.zero) {
		fprintf(stderr, "%s: the --zero option is not supported when verifying checksums\n", PROG);
		goto bad_usage;
	}
	if (S.check && (S.binary || text)) {
		fprintf(stderr, "%s: the --binary and --text options are meaningless when verifying checksums\n", PROG);
		goto bad_usage;
	}
	if (S.tag && text) {
		fprintf(stderr, "%s: --tag does not support --text mode\n", PROG);
		goto bad_usage;
	}
	if (!S.check && (S.ignore_missing || S.status || S.strict || S.warn)) {
		fprintf(stderr, "%s: the --%s option is meaningful only when verifying checksums\n",
			PROG, S.ignore_missing ? "ignore-missing" : S.status ?
			"status" : S.strict ? "strict" : "warn");
		goto bad_usage;
	}
	if (files0 && optind < argc) {
		fprintf(stderr, "%s: extra operand '%s'\n"
			"file operands cannot be combined with --files0-from\n",
			PROG, argv[optind]);
		goto bad_usage;
	}
	/* names on stderr: raw bytes above 127 only in a UTF-8 locale */
	setlocale(LC_CTYPE, "");
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
	/*
	 * The pool first: no walk of a large tree to learn iopa is missing.
	 * No operand: standard input, as sha256sum.
	 */
	if (files0) {
		if (read_files0(files0))
			return 1;
	} else if (S.check) {
		for (i = optind; i < argc; i++)
			read_list(argv[i]);
		if (optind == argc)
			read_list("-");
	} else {
		for (i = optind; i < argc; i++)
			add_operand(argv[i]);
		if (optind == argc)
			add_operand("-");
	}
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
	/* as sha256sum: status 1 */
	fprintf(stderr, "Try '%s --help' for more information.\n", PROG);
	return 1;
}
