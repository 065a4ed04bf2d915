// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-bench-mkset: the file sets of iopa-bench-files.
 *
 *   iopa-bench-mkset [-d PER_DIR] [-S SEED] DIR NFILES SIZE
 *   iopa-bench-mkset -x DIR
 *
 * Creates DIR/dNNNN/fNNNNNNN: NFILES regular files of exactly SIZE bytes
 * (a number with an optional k, m suffix: 10^3, 10^6 bytes; K, M: 2^10,
 * 2^20) of pseudo-random content (xorshift64, seeded per file, so no two
 * files are alike and nothing compresses or dedups), PER_DIR (default
 * 1000) files per subdirectory, written in name order, then fsync()ed.
 * Prints one line:
 *
 *   mkset dir=DIR files=N size=S bytes=B secs=T span_lo=L span_hi=H
 *
 * span_lo/span_hi: the lowest and highest physical byte of the files'
 * extents on their device (FIEMAP), where a fio over the same region
 * should read; 0 0 if the file system does not support FIEMAP.
 * -x DIR only prints that line for an existing set (files, bytes and span
 * over every regular file under DIR).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t span_lo = UINT64_MAX, span_hi;
static unsigned long long nfiles, nbytes;
static int no_fiemap;

static void die(const char *what, const char *path)
{
	fprintf(stderr, "iopa-bench-mkset: %s %s: %s\n", what, path,
		strerror(errno));
	exit(1);
}

static uint64_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		goto bad;
	switch (*end) {
	case 'k': v *= 1000; end++; break;
	case 'm': v *= 1000000; end++; break;
	case 'K': v <<= 10; end++; break;
	case 'M': v <<= 20; end++; break;
	}
	if (*end)
		goto bad;
	return v;
bad:
	fprintf(stderr, "iopa-bench-mkset: '%s' is not a size\n", s);
	exit(2);
}

/* Extend the span with the extents of fd. */
static void span(int fd, const char *path)
{
	union {
		struct fiemap fm;
		char buf[sizeof(struct fiemap) +
			 64 * sizeof(struct fiemap_extent)];
	} u;
	uint64_t start = 0;
	unsigned int i;

	if (no_fiemap)
		return;
	for (;;) {
		memset(&u, 0, sizeof(u));
		u.fm.fm_start = start;
		u.fm.fm_length = FIEMAP_MAX_OFFSET - start;
		u.fm.fm_flags = FIEMAP_FLAG_SYNC;
		u.fm.fm_extent_count = 64;
		if (ioctl(fd, FS_IOC_FIEMAP, &u.fm) < 0) {
			if (errno == EOPNOTSUPP || errno == ENOTTY) {
				no_fiemap = 1;
				return;
			}
			die("FIEMAP", path);
		}
		if (!u.fm.fm_mapped_extents)
			return;
		for (i = 0; i < u.fm.fm_mapped_extents; i++) {
			struct fiemap_extent *e = &u.fm.fm_extents[i];

			if (e->fe_physical < span_lo)
				span_lo = e->fe_physical;
			if (e->fe_physical + e->fe_length > span_hi)
				span_hi = e->fe_physical + e->fe_length;
			start = e->fe_logical + e->fe_length;
			if (e->fe_flags & FIEMAP_EXTENT_LAST)
				return;
		}
	}
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void put_file(const char *path, uint64_t size, uint64_t seed)
{
	static unsigned char buf[1 << 16];
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 0x1234567;
	uint64_t left = size;
	int fd;

	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create", path);
	while (left) {
		size_t n = left < sizeof(buf) ? left : sizeof(buf), i;

		for (i = 0; i < n; i += 8) {
			uint64_t r = next(&x);

			memcpy(buf + i, &r, n - i < 8 ? n - i : 8);
		}
		if (write(fd, buf, n) != (ssize_t)n)
			die("write", path);
		left -= n;
	}
	if (close(fd))
		die("close", path);
	nfiles++;
	nbytes += size;
}

/* Every regular file under path: count it and extend the span. */
static void scan(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (!d)
		die("opendir", path);
	while ((de = readdir(d))) {
		char p[4096];
		struct stat st;
		int fd;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (lstat(p, &st))
			die("stat", p);
		if (S_ISDIR(st.st_mode)) {
			scan(p);
			continue;
		}
		if (!S_ISREG(st.st_mode))
			continue;
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			die("open", p);
		span(fd, p);
		close(fd);
		nfiles++;
		nbytes += st.st_size;
	}
	closedir(d);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: iopa-bench-mkset [-d PER_DIR] [-S SEED] DIR NFILES SIZE\n"
		"       iopa-bench-mkset -x DIR\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long per_dir = 1000, seed = 1, n, i;
	const char *dir;
	uint64_t size = 0;
	struct timespec a, b;
	int c, scan_only = 0;
	char path[4096];

	while ((c = getopt(argc, argv, "d:S:x")) != -1) {
		switch (c) {
		case 'd': per_dir = strtoul(optarg, NULL, 10); break;
		case 'S': seed = strtoul(optarg, NULL, 10); break;
		case 'x': scan_only = 1; break;
		default: usage();
		}
	}
	if (per_dir == 0)
		usage();
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (scan_only) {
		if (optind != argc - 1)
			usage();
		dir = argv[optind];
		scan(dir);
	} else {
		if (optind != argc - 3)
			usage();
		dir = argv[optind];
		n = strtoul(argv[optind + 1], NULL, 10);
		size = parse_size(argv[optind + 2]);
		if (mkdir(dir, 0755) && errno != EEXIST)
			die("mkdir", dir);
		for (i = 0; i < n; i++) {
			if (i % per_dir == 0) {
				snprintf(path, sizeof(path), "%s/d%04lu", dir,
					 i / per_dir);
				if (mkdir(path, 0755) && errno != EEXIST)
					die("mkdir", path);
			}
			snprintf(path, sizeof(path), "%s/d%04lu/f%07lu", dir,
				 i / per_dir, i);
			put_file(path, size, seed * 1000003 + i);
		}
		sync();
		nfiles = nbytes = 0;
		scan(dir);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (span_lo == UINT64_MAX)
		span_lo = span_hi = 0;
	printf("mkset dir=%s files=%llu size=%llu bytes=%llu secs=%.2f "
	       "span_lo=%llu span_hi=%llu\n", dir, nfiles,
	       (unsigned long long)size, nbytes,
	       (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9,
	       (unsigned long long)span_lo, (unsigned long long)span_hi);
	return 0;
}
