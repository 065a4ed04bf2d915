/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iopactl: the parts that touch the system (sys.c).  Functions return 0
 * or a negative errno, like libiopa's.
 */
#ifndef IOPACTL_SYS_H
#define IOPACTL_SYS_H

#include "iopactl.h"

/* Read a small file, trailing whitespace removed. */
int ctl_read_file(const char *path, char *buf, size_t len);
/* @rel relative to /sys/class/misc/iopa. */
int ctl_sysfs_read(const char *rel, char *buf, size_t len);
int ctl_sysfs_write(const char *rel, const char *value);
int ctl_module_loaded(void);

/*
 * Fill @s (zeroed before its first use; ctl_snapshot_free() at the
 * end).  *@ctx_fd is a context fd to reuse, or -1: then /dev/iopa is
 * opened and the fd left in *@ctx_fd (closed by the caller) if it could.
 */
void ctl_snapshot_take(struct ctl_snapshot *s, int *ctx_fd);

/* Rows and columns of the terminal on @fd; 24 x 80 if unknown. */
void ctl_term_size(int fd, unsigned int *rows, unsigned int *cols);

/*
 * The cgroup2 paths of the cgroup ids of @s's submitters, found by one
 * walk of the cgroup2 mount; ctl_cgroup_path() looks one up (@arg: the
 * struct ctl_cgroups).  Ids not found (a cgroup removed since, no
 * cgroup2 mounted) have no path.
 */
struct ctl_cgroups {
	size_t		n;
	uint64_t	*ids;
	char		**paths;
};

void ctl_cgroups_resolve(struct ctl_cgroups *cg, const struct ctl_snapshot *s);
const char *ctl_cgroup_path(uint64_t id, void *arg);
void ctl_cgroups_free(struct ctl_cgroups *cg);

#endif /* IOPACTL_SYS_H */
