// SPDX-License-Identifier: GPL-2.0
/*
 * iopactl: sysfs, /dev/iopa and the terminal.  Everything that needs the
 * module (or a terminal) is here; what is printed is decided in render.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libiopa.h>

#include "sys.h"

int ctl_read_file(const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd, e;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	e = errno;
	close(fd);
	if (n < 0)
		return -e;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' ' ||
			 buf[n - 1] == '\t'))
		n--;
	buf[n] = '\0';
	return 0;
}

int ctl_sysfs_read(const char *rel, char *buf, size_t len)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", CTL_SYSFS_DIR, rel);
	return ctl_read_file(path, buf, len);
}

int ctl_sysfs_write(const char *rel, const char *value)
{
	size_t len = strlen(value);
	char path[256];
	ssize_t n;
	int fd, e;

	snprintf(path, sizeof(path), "%s/%s", CTL_SYSFS_DIR, rel);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* One write: sysfs takes the whole value in one store() call. */
	n = write(fd, value, len);
	e = errno;
	if (close(fd) < 0 && n >= 0)
		return -errno;
	if (n < 0)
		return -e;
	return (size_t)n == len ? 0 : -EIO;
}

int ctl_module_loaded(void)
{
	struct stat st;

	return stat(CTL_SYSFS_DIR, &st) == 0;
}

static void read_value(const char *rel, struct ctl_value *v, int number)
{
	memset(v, 0, sizeof(*v));
	if (ctl_sysfs_read(rel, v->s, sizeof(v->s)))
		return;
	if (!number) {
		v->ok = 1;
		return;
	}
	/* stats/ prints a signed long long; anything else is not shown. */
	v->ok = ctl_parse_u64(v->s, &v->u) == 0;
}

/*
 * Size with nr = 0, then fetch; if submitters were created in between,
 * try again with more room (a few times: the list is a snapshot anyway).
 */
static int list_all(struct ctl_snapshot *s, int fd, uint32_t flags)
{
	uint32_t total = 0, filled = 0, room;
	int r, tries;

	r = iopa_list_submitters(fd, NULL, 0, flags, &total);
	if (r < 0)
		return r;
	for (tries = 0; tries < 8; tries++) {
		struct iopa_sub_info *subs;

		room = total + 16;
		if (room > IOPA_LIST_MAX)
			room = IOPA_LIST_MAX;
		subs = calloc(room, sizeof(*subs));
		if (!subs)
			return -ENOMEM;
		r = iopa_list_submitters(fd, subs, room, flags, &total);
		if (r < 0) {
			free(subs);
			return r;
		}
		filled = r;
		free(s->subs);
		s->subs = subs;
		s->nr = filled;
		s->total = total;
		if (filled >= total || room == IOPA_LIST_MAX)
			break;
	}
	return 0;
}

static void take_list(struct ctl_snapshot *s, int fd)
{
	int r;

	s->scope = CTL_SCOPE_NONE;
	if (!s->feat_err && !(s->feat.features & IOPA_FEAT_LIST)) {
		s->no_list = 1;
		return;
	}
	r = list_all(s, fd, IOPA_LIST_F_ALL);
	if (r == 0) {
		s->scope = CTL_SCOPE_ALL;
		return;
	}
	s->list_err = -r;
	if (r == -ENOTTY) {
		s->no_list = 1;
		return;
	}
	if (r != -EPERM)
		return;
	/* Without CAP_SYS_ADMIN: the caller's context only (ours: empty). */
	r = list_all(s, fd, 0);
	if (r) {
		s->own_err = -r;
		return;
	}
	s->scope = CTL_SCOPE_OWN;
}

/* The knees file: 63 lines of at most ~70 bytes (kernel/knee.c). */
static void take_knees(struct ctl_snapshot *s)
{
	char buf[8192];
	int r = ctl_sysfs_read("knees", buf, sizeof(buf));

	if (!r)
		r = ctl_knees_parse(buf, s->knees, CTL_MAX_KNEES);
	if (r < 0) {
		s->knees_err = -r;
		return;
	}
	s->nr_knees = (size_t)r;
}

void ctl_snapshot_take(struct ctl_snapshot *s, int *ctx_fd)
{
	size_t i;
	int fd, r;

	free(s->subs);
	memset(s, 0, sizeof(*s));
	s->module_loaded = ctl_module_loaded();
	if (!s->module_loaded)
		return;
	if (ctl_read_file("/sys/module/" IOPA_DEV_NAME "/version", s->version,
			  sizeof(s->version)))
		s->version[0] = '\0';
	if (ctl_read_file("/sys/module/" IOPA_DEV_NAME "/srcversion",
			  s->srcversion, sizeof(s->srcversion)))
		s->srcversion[0] = '\0';
	for (i = 0; i < CTL_NR_TUNABLES; i++)
		read_value(ctl_tunables[i].name, &s->tun[i],
			   ctl_tunables[i].kind == CTL_TUN_UINT);
	for (i = 0; i < CTL_NR_TOTALS; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "stats/%s", ctl_totals[i]);
		read_value(rel, &s->tot[i], 1);
	}
	take_knees(s);

	fd = *ctx_fd;
	if (fd < 0) {
		fd = iopa_open();
		if (fd < 0) {
			s->dev_err = -fd;
			return;
		}
		*ctx_fd = fd;
	}
	r = iopa_get_features(fd, &s->feat);
	s->feat_err = r < 0 ? -r : 0;
	take_list(s, fd);
}

void ctl_term_size(int fd, unsigned int *rows, unsigned int *cols)
{
	struct winsize ws;

	*rows = 24;
	*cols = 80;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
		*rows = ws.ws_row;
		*cols = ws.ws_col;
	}
}

/* ---- cgroup paths ---------------------------------------------------------- */

/* nftw() has no argument for its callback. */
static struct ctl_cgroups *walk_cg;
static size_t walk_root_len;

static int cg_visit(const char *path, const struct stat *st, int type,
		    struct FTW *ftw)
{
	size_t i;

	(void)ftw;
	if (type != FTW_D)
		return 0;
	for (i = 0; i < walk_cg->n; i++) {
		if (walk_cg->paths[i] || walk_cg->ids[i] != (uint64_t)st->st_ino)
			continue;
		walk_cg->paths[i] = strdup(path[walk_root_len] ?
					   path + walk_root_len : "/");
	}
	return 0;
}

/* The mount point of cgroup2 in @buf; 0 or -ENOENT. */
static int cg_mount(char *buf, size_t len)
{
	char line[1024], *p, *q, *mnt;
	int r = -ENOENT;
	FILE *f;

	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		/* id parent maj:min root MOUNTPOINT options... - FSTYPE ... */
		p = strstr(line, " - cgroup2 ");
		if (!p)
			continue;
		mnt = line;
		for (int field = 0; field < 4 && mnt; field++) {
			mnt = strchr(mnt, ' ');
			if (mnt)
				mnt++;
		}
		if (!mnt)
			continue;
		q = strchr(mnt, ' ');
		if (!q || (size_t)(q - mnt) >= len)
			continue;
		memcpy(buf, mnt, (size_t)(q - mnt));
		buf[q - mnt] = '\0';
		r = 0;
		break;
	}
	fclose(f);
	return r;
}

void ctl_cgroups_resolve(struct ctl_cgroups *cg, const struct ctl_snapshot *s)
{
	char root[512];
	size_t i;

	memset(cg, 0, sizeof(*cg));
	if (!s->nr)
		return;
	cg->ids = calloc(s->nr, sizeof(*cg->ids));
	cg->paths = calloc(s->nr, sizeof(*cg->paths));
	if (!cg->ids || !cg->paths) {
		ctl_cgroups_free(cg);
		return;
	}
	for (i = 0; i < s->nr; i++)
		if (s->subs[i].metrics.cgroup_id)
			cg->ids[cg->n++] = s->subs[i].metrics.cgroup_id;
	if (!cg->n || cg_mount(root, sizeof(root)))
		return;
	walk_cg = cg;
	walk_root_len = strlen(root);
	nftw(root, cg_visit, 16, FTW_PHYS | FTW_MOUNT);
	walk_cg = NULL;
}

const char *ctl_cgroup_path(uint64_t id, void *arg)
{
	const struct ctl_cgroups *cg = arg;
	size_t i;

	for (i = 0; i < cg->n; i++)
		if (cg->ids[i] == id)
			return cg->paths[i];
	return NULL;
}

void ctl_cgroups_free(struct ctl_cgroups *cg)
{
	size_t i;

	for (i = 0; cg->paths && i < cg->n; i++)
		free(cg->paths[i]);
	free(cg->paths);
	free(cg->ids);
	memset(cg, 0, sizeof(*cg));
}
