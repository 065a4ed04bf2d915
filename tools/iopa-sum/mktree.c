// SPDX-License-Identifier: GPL-2.0
/*
 * mktree: the test tree of iopa-sum's check.sh.
 *
 *   mktree DIR NFILES
 *
 * Creates DIR with at least NFILES regular files of deterministic
 * pseudo-random content and prints how many regular files it made.
 * Besides the bulk (100 files per directory, two levels), it holds what
 * a sha256sum clone gets wrong:
 *  - sizes around SHA-256's 64-byte block and padding (0, 1, 55, 56, 63,
 *    64, 65, 119, 120, ...), iopa-sum's 128 KiB read size, a few MiB;
 *  - names with spaces, UTF-8, leading '-' and '.', and the three
 *    characters sha256sum escapes: backslash, newline, carriage return;
 *  - names whose byte-wise order differs from a per-directory walk
 *    ("a-b", "a.b", "a/z", "a0");
 *  - a directory 24 levels deep, empty directories;
 *  - symlinks (to a file, to a directory, dangling) and a FIFO, which
 *    `find -type f` and iopa-sum leave out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned long nr_files;
static const char *top;

static void die(const char *what, const char *path)
{
	fprintf(stderr, "mktree: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void mkdir_or_die(const char *path)
{
	if (mkdir(path, 0755) && errno != EEXIST)
		die("mkdir", path);
}

static uint64_t next(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void put_file(const char *rel, size_t size, uint64_t seed)
{
	static unsigned char buf[1 << 16];
	char path[4096];
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("create", path);
	while (size) {
		size_t n = size < sizeof(buf) ? size : sizeof(buf), i;

		for (i = 0; i < n; i += 8) {
			uint64_t r = next(&x);

			memcpy(buf + i, &r, n - i < 8 ? n - i : 8);
		}
		if (write(fd, buf, n) != (ssize_t)n)
			die("write", path);
		size -= n;
	}
	if (close(fd))
		die("close", path);
	nr_files++;
}

static void put_dir(const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", top, rel);
	mkdir_or_die(path);
}

int main(int argc, char **argv)
{
	static const size_t edge[] = {
		0, 1, 2, 3, 31, 32, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128,
		129, 1000, 4095, 4096, 4097, 65535, 65536, 65537,
		131071, 131072, 131073, 262144 + 17, 1048576, 3 * 1048576 + 5,
	};
	static const char *const odd[] = {
		"odd/with space", "odd/  leading spaces", "odd/trailing space ",
		"odd/-leading-dash", "odd/--", "odd/.hidden", "odd/..dots",
		"odd/caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x93\x81",
		"odd/tab\there", "odd/star*", "odd/question?", "odd/[brackets]",
		"odd/back\\slash", "odd/new\nline", "odd/carriage\rreturn",
		"odd/\\\n\r all three", "odd/quote'\"",
		"sort/a-b", "sort/a.b", "sort/a/z", "sort/a0", "sort/A",
		"sort/a/b/c",
	};
	unsigned long want, i;
	char rel[4096], deep[4096];
	size_t d;

	if (argc != 3) {
		fprintf(stderr, "usage: mktree DIR NFILES\n");
		return 2;
	}
	top = argv[1];
	want = strtoul(argv[2], NULL, 10);
	mkdir_or_die(top);

	put_dir("edge");
	for (i = 0; i < sizeof(edge) / sizeof(edge[0]); i++) {
		snprintf(rel, sizeof(rel), "edge/size-%zu", edge[i]);
		put_file(rel, edge[i], 1000 + i);
	}
	put_dir("odd");
	put_dir("sort");
	put_dir("sort/a");
	put_dir("sort/a/b");
	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		put_file(odd[i], 100 + 37 * i, 2000 + i);

	strcpy(deep, "deep");
	put_dir(deep);
	for (d = 1; d < 24; d++) {
		snprintf(deep + strlen(deep), sizeof(deep) - strlen(deep),
			 "/level-%02zu", d);
		put_dir(deep);
	}
	snprintf(rel, sizeof(rel), "%s/bottom", deep);
	put_file(rel, 4242, 3000);
	put_dir("empty");
	put_dir("empty/nested-empty");

	put_dir("special");
	snprintf(rel, sizeof(rel), "%s/special/fifo", top);
	if (mkfifo(rel, 0644))
		die("mkfifo", rel);
	snprintf(rel, sizeof(rel), "%s/special/link-to-file", top);
	if (symlink("../edge/size-1000", rel))
		die("symlink", rel);
	snprintf(rel, sizeof(rel), "%s/special/link-to-dir", top);
	if (symlink("../odd", rel))
		die("symlink", rel);
	snprintf(rel, sizeof(rel), "%s/special/dangling", top);
	if (symlink("no-such-file", rel))
		die("symlink", rel);

	/* The bulk: 100 files per directory, 100 directories per group. */
	for (i = 0; nr_files < want; i++) {
		if (i % 10000 == 0) {
			snprintf(rel, sizeof(rel), "bulk%02lu", i / 10000);
			put_dir(rel);
		}
		if (i % 100 == 0) {
			snprintf(rel, sizeof(rel), "bulk%02lu/d%03lu", i / 10000,
				 (i / 100) % 100);
			put_dir(rel);
		}
		snprintf(rel, sizeof(rel), "bulk%02lu/d%03lu/f%06lu.dat",
			 i / 10000, (i / 100) % 100, i);
		/* 0..16 KiB, small ones more often. */
		put_file(rel, (size_t)((i * 2654435761UL) % 16384) >> (i % 4),
			 i);
	}
	printf("%lu\n", nr_files);
	return 0;
}
