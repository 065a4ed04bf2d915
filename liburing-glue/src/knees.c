// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * libiopa: the in-process pool's memory of each device's knee.
 *
 * The module remembers each device's knee while it is loaded
 * (kernel/knee.c); a pool without the module has only its process's
 * life, so it keeps what its controller found in a per-user cache file
 * and starts the next run on the device there (iopa_ctl_set_known())
 * instead of starting up from 8, or from 1 on a disk that says it is
 * rotational.
 *
 * - Opt-in (a library writes no file in its caller's home unasked;
 *   iopa-sum asks): the file is $IOPA_KNEES_CACHE; "default" for
 *   $XDG_CACHE_HOME/iopa/knees, else $HOME/.cache/iopa/knees (the
 *   directory made 0700); unset or empty, no memory.  Read only through secure_getenv(): a set-id
 *   program gets no memory rather than a path from its caller.
 * - Its format, documented in libiopa(7), one device a line after a
 *   "# iopa knees v1" line:  "fsid=<16 hex digits> knee=<N> job_kb=<K>",
 *   K the size of a job in KiB of the workload the knee was found with
 *   (iopa_ctl_job_kb(); 0 or absent, as older files have it: not known).
 * - The identity: the file system's id (statfs(2) f_fsid) of the first
 *   job's file, stable across reboots for ext4 and btrfs (derived from
 *   their UUID; xfs's is its device's number) and the same for
 *   every file of one file system, which is what the jobs read.  A file
 *   system whose id is 0 gets no memory.
 * - Written when a pool closes: the knee its controller's search ended
 *   at, or the base it had reached (iopa_ctl_left_knee(): a run of
 *   seconds never settles, and the knee is not below that base); that
 *   device's line is replaced or added at the end (not a line of a
 *   known size of jobs by one of cache hits, whose knee is the CPUs'),
 *   the oldest lines beyond IOPA_KNEES_MAX dropped, through a temporary
 *   file renamed over the old one (two pools closing at once: the last
 *   one's file stands).
 * Nothing here fails a pool: a file that cannot be read or written is
 * no memory.
 */
#define _GNU_SOURCE		/* secure_getenv(), mkostemp() */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#define IOPA_KNEES_HEADER	"# iopa knees v1"
/* Devices remembered (the module's table holds 51: a sysfs page). */
#define IOPA_KNEES_MAX		64
/* A line kept: "<id, at most 40> knee=<4 digits> job_kb=<7 digits>". */
#define IOPA_KNEES_LINE		80
/* The largest size of a job kept, KiB: kernel/ctl.h's IOPA_CTL_JOB_KB_MAX. */
#define IOPA_KNEES_JOB_KB_MAX	1048576U

/* The cache file's path in @buf; false for none. */
static bool knees_path(char *buf, size_t len)
{
	const char *e = secure_getenv("IOPA_KNEES_CACHE");
	int n;

	if (!e || !*e)
		return false;
	if (!strcmp(e, "default")) {
		if ((e = secure_getenv("XDG_CACHE_HOME")) && *e == '/')
			n = snprintf(buf, len, "%s/iopa/knees", e);
		else if ((e = secure_getenv("HOME")) && *e == '/')
			n = snprintf(buf, len, "%s/.cache/iopa/knees", e);
		else
			return false;
	} else {
		n = snprintf(buf, len, "%s", e);
	}
	return n > 0 && (size_t)n < len;
}

/**
 * iopa_knees_id() - the identity the cache knows @fd's device by
 * @fd: a job's file
 * @id: set to "fsid=<16 hex digits>"
 *
 * Return: true, or false if the file system has no id.
 */
bool iopa_knees_id(int fd, char id[IOPA_KNEES_ID_LEN])
{
	struct statfs sf;
	unsigned int v[2];

	if (fstatfs(fd, &sf) < 0)
		return false;
	memcpy(v, &sf.f_fsid, sizeof(v));
	if (!v[0] && !v[1])
		return false;
	snprintf(id, IOPA_KNEES_ID_LEN, "fsid=%08x%08x", v[0], v[1]);
	return true;
}

/*
 * The lines of the cache file other than @id's, oldest first, up to
 * IOPA_KNEES_MAX - 1 of the newest; *@knee and *@job_kb set to @id's
 * knee and size of a job (0: none, not known).  Returns how many were
 * kept in @lines.
 */
static unsigned int knees_read(const char *path, const char *id,
			       char lines[IOPA_KNEES_MAX][IOPA_KNEES_LINE],
			       unsigned int *knee, unsigned int *job_kb)
{
	char line[128];
	unsigned int n = 0, k, kb;
	FILE *f;

	*knee = 0;
	*job_kb = 0;
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (!fgets(line, sizeof(line), f) ||
	    strncmp(line, IOPA_KNEES_HEADER "\n", sizeof(line))) {
		fclose(f);
		return 0;
	}
	while (fgets(line, sizeof(line), f)) {
		char name[41];

		kb = 0;
		if (sscanf(line, "%40s knee=%u job_kb=%u", name, &k, &kb) < 2 ||
		    strncmp(name, "fsid=", 5) || !k || k > IOPA_LIMIT_MAX ||
		    kb > IOPA_KNEES_JOB_KB_MAX)
			continue;
		if (!strcmp(name, id)) {
			*knee = k;
			*job_kb = kb;
			continue;
		}
		/* The newest IOPA_KNEES_MAX - 1 others: drop the oldest. */
		if (n == IOPA_KNEES_MAX - 1) {
			memmove(lines[0], lines[1], sizeof(lines[0]) * (n - 1));
			n--;
		}
		snprintf(lines[n++], sizeof(lines[0]), "%s knee=%u job_kb=%u",
			 name, k, kb);
	}
	fclose(f);
	return n;
}

/**
 * iopa_knees_lookup() - the cached knee of a device
 * @id: its identity (iopa_knees_id())
 * @job_kb: set to KiB a job of the workload it was found with (0: not
 *	known, or no knee)
 *
 * Return: the knee, or 0 if the cache has none.
 */
unsigned int iopa_knees_lookup(const char *id, unsigned int *job_kb)
{
	char path[PATH_MAX], lines[IOPA_KNEES_MAX][IOPA_KNEES_LINE];
	unsigned int knee;

	*job_kb = 0;
	if (!knees_path(path, sizeof(path)))
		return 0;
	knees_read(path, id, lines, &knee, job_kb);
	return knee;
}

/* mkdir -p of @path's directory, 0700 for what it makes. */
static void knees_mkdir(char *path)
{
	char *s;

	for (s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*s = '/';
			return;
		}
		*s = '/';
	}
}

/**
 * iopa_knees_save() - remember a device's knee in the cache file
 * @id: its identity (iopa_knees_id())
 * @knee: the knee its controller found
 * @job_kb: KiB a job of the workload it found it with (0: not known)
 */
void iopa_knees_save(const char *id, unsigned int knee, unsigned int job_kb)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	char lines[IOPA_KNEES_MAX][IOPA_KNEES_LINE];
	unsigned int n, i, old, old_kb;
	FILE *f;
	int fd;

	if (!knee || !knees_path(path, sizeof(path)))
		return;
	n = knees_read(path, id, lines, &old, &old_kb);
	/*
	 * Jobs that read nothing from the device (page-cache hits: a tree
	 * hashed again) found the CPUs' knee, not the disk's: it does not
	 * replace a knee found by jobs that read it.
	 */
	if (!job_kb && old_kb)
		return;
	/* Not rewritten for a size of a job that moved less than 25%. */
	if (old == knee && (uint64_t)job_kb * 4 >= (uint64_t)old_kb * 3 &&
	    (uint64_t)job_kb * 4 <= (uint64_t)old_kb * 5)
		return;
	knees_mkdir(path);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		unlink(tmp);
		return;
	}
	fprintf(f, IOPA_KNEES_HEADER "\n");
	for (i = 0; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	fprintf(f, "%s knee=%u job_kb=%u\n", id, knee, job_kb);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		unlink(tmp);
}
