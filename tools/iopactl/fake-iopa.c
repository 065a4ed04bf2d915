// SPDX-License-Identifier: GPL-2.0
/*
 * fake-iopa.so: an LD_PRELOAD stand-in for the module, for the host tests
 * of iopactl (test-iopactl.c).  Not a model of iopa: it answers
 * IOPA_IOC_GET_FEATURES and IOPA_IOC_LIST_SUBMITTERS the way the ABI
 * says (reserved fields and unknown flags EINVAL, nr > IOPA_LIST_MAX
 * EINVAL, F_ALL without privilege EPERM, nr 0 only counts) and maps
 * /sys/class/misc/iopa and /sys/module/iopa to a directory of plain
 * files, so that iopactl's system-facing code runs on a host.
 *
 * Environment:
 *   FAKE_IOPA_ROOT    directory with class/ (the tunables, stats/) and
 *                     module/ (version, srcversion)
 *   FAKE_IOPA_LIST    all: root, lists everything; eperm: F_ALL refused
 *                     (own context: empty); enotty: the ioctl is
 *                     unknown; nofeat: no IOPA_FEAT_LIST; noopen:
 *                     /dev/iopa gives EACCES
 *   FAKE_IOPA_NSUBS   submitters there are (default 3)
 *   FAKE_IOPA_GROW    after the first call, that many more
 *   FAKE_IOPA_EINVAL  a tunable whose writes fail with EINVAL
 *   FAKE_IOPA_EACCES  a tunable that cannot be opened for writing
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/iopa.h>

#define MAX_FDS 1024

static char fd_kind[MAX_FDS];	/* 1: fake context, 2: refuses writes */
static int list_calls;

static const char *env(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

/* The fake path for @path, in @buf, or @path itself. */
static const char *map(const char *path, char *buf, size_t len)
{
	static const char cls[] = "/sys/class/misc/iopa", mod[] = "/sys/module/iopa";
	const char *root = env("FAKE_IOPA_ROOT", NULL);

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
	return path;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int do_open(const char *path, int flags, mode_t mode)
{
	int (*real)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
	char buf[512];
	int fd;

	if (path && !strcmp(path, "/dev/iopa")) {
		if (!strcmp(env("FAKE_IOPA_LIST", "all"), "noopen")) {
			errno = EACCES;
			return -1;
		}
		fd = real("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0 && fd < MAX_FDS)
			fd_kind[fd] = 1;
		return fd;
	}
	path = map(path, buf, sizeof(buf));
	if (path == buf && (flags & O_ACCMODE) != O_RDONLY &&
	    !strcmp(base(path), env("FAKE_IOPA_EACCES", "-"))) {
		errno = EACCES;
		return -1;
	}
	fd = real(path, flags, mode);
	if (fd >= 0 && fd < MAX_FDS)
		fd_kind[fd] = path == buf &&
			      !strcmp(base(path), env("FAKE_IOPA_EINVAL", "-")) ? 2 : 0;
	/* Like sysfs: a write replaces the value. */
	if (fd >= 0 && path == buf && (flags & O_ACCMODE) != O_RDONLY &&
	    (fd >= MAX_FDS || fd_kind[fd] != 2) && ftruncate(fd, 0))
		return -1;
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

int stat(const char *path, struct stat *st)
{
	int (*real)(const char *, struct stat *) = dlsym(RTLD_NEXT, "stat");
	char buf[512];

	return real(map(path, buf, sizeof(buf)), st);
}

int access(const char *path, int mode)
{
	int (*real)(const char *, int) = dlsym(RTLD_NEXT, "access");
	char buf[512];

	return real(map(path, buf, sizeof(buf)), mode);
}

ssize_t write(int fd, const void *p, size_t n)
{
	ssize_t (*real)(int, const void *, size_t) = dlsym(RTLD_NEXT, "write");

	if (fd >= 0 && fd < MAX_FDS && fd_kind[fd] == 2) {
		errno = EINVAL;
		return -1;
	}
	return real(fd, p, n);
}

int close(int fd)
{
	int (*real)(int) = dlsym(RTLD_NEXT, "close");

	if (fd >= 0 && fd < MAX_FDS)
		fd_kind[fd] = 0;
	return real(fd);
}

static int fake_list(struct iopa_list *l)
{
	const char *mode = env("FAKE_IOPA_LIST", "all");
	uint32_t total = (uint32_t)atoi(env("FAKE_IOPA_NSUBS", "3")), i;
	struct iopa_sub_info *subs = (struct iopa_sub_info *)(uintptr_t)l->subs;

	if (!strcmp(mode, "enotty") || !strcmp(mode, "nofeat")) {
		errno = ENOTTY;
		return -1;
	}
	if (l->reserved[0] || l->reserved[1] || (l->flags & ~IOPA_LIST_F_MASK) ||
	    l->nr > IOPA_LIST_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (l->nr && !subs) {
		errno = EFAULT;
		return -1;
	}
	if (!strcmp(mode, "eperm")) {
		if (l->flags & IOPA_LIST_F_ALL) {
			errno = EPERM;
			return -1;
		}
		total = 0;
	}
	if (list_calls++)
		total += (uint32_t)atoi(env("FAKE_IOPA_GROW", "0"));
	l->total = total;
	l->filled = total < l->nr ? total : l->nr;
	for (i = 0; i < l->filled; i++) {
		struct iopa_sub_info *si = &subs[i];

		memset(si, 0, sizeof(*si));
		si->ctx_id = 1 + i / 2;
		si->sub_id = 1 + i % 2;
		si->pid = (int32_t)(1000 + i);
		snprintf(si->comm, sizeof(si->comm), "fake\"%u\n", i % 10000);
		si->ctx_workers = 2;
		si->state.limit = 1 + i % 8;
		si->state.mode = i % 6;
		si->state.policy = 1 + i % 2;
		si->state.bytes_per_s = (uint64_t)i * 1000000;
		si->state.jobs_per_s = i;
		si->stats.submitted = 10 * i;
	}
	return 0;
}

int ioctl(int fd, unsigned long req, ...)
{
	int (*real)(int, unsigned long, ...) = dlsym(RTLD_NEXT, "ioctl");
	void *arg;
	va_list ap;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fd < 0 || fd >= MAX_FDS || fd_kind[fd] != 1)
		return real(fd, req, arg);
	if (req == IOPA_IOC_GET_FEATURES) {
		struct iopa_features *f = arg;

		memset(f, 0, sizeof(*f));
		f->abi_version = IOPA_ABI_VERSION;
		f->features = 0x3f;
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
		return fake_list(arg);
	}
	errno = ENOTTY;
	return -1;
}
