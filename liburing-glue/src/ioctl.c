// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Thin wrappers for the iopa ioctls: one function per command, the
 * argument structure built from scalar arguments where that is simpler,
 * every reserved field zeroed.  Each returns what the ioctl returns on
 * success (0, a count or a new fd) and -errno on failure.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int iopa_ioctl(int fd, unsigned long cmd, void *arg)
{
	int r = ioctl(fd, cmd, arg);

	return r < 0 ? -errno : r;
}

IOPA_EXPORT int iopa_open(void)
{
	int fd = open(LIBIOPA_DEV_PATH, O_RDWR | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

IOPA_EXPORT int iopa_get_features(int fd, struct iopa_features *features)
{
	if (!features)
		return -EFAULT;
	memset(features, 0, sizeof(*features));
	return iopa_ioctl(fd, IOPA_IOC_GET_FEATURES, features);
}

IOPA_EXPORT int iopa_submitter_create(int ctx_fd, unsigned int limit,
				      unsigned int flags)
{
	struct iopa_submitter_create c;

	memset(&c, 0, sizeof(c));
	c.flags = flags;
	c.limit = limit;
	return iopa_ioctl(ctx_fd, IOPA_IOC_SUBMITTER_CREATE, &c);
}

IOPA_EXPORT int iopa_worker_create(int ctx_fd, unsigned int flags)
{
	struct iopa_worker_create c;

	memset(&c, 0, sizeof(c));
	c.flags = flags;
	return iopa_ioctl(ctx_fd, IOPA_IOC_WORKER_CREATE, &c);
}

IOPA_EXPORT int iopa_get_stats(int fd, struct iopa_stats *stats)
{
	if (!stats)
		return -EFAULT;
	memset(stats, 0, sizeof(*stats));
	return iopa_ioctl(fd, IOPA_IOC_GET_STATS, stats);
}

IOPA_EXPORT int iopa_submit(int sub_fd, const struct iopa_job *jobs,
			    unsigned int nr, unsigned int flags)
{
	struct iopa_submit s;

	memset(&s, 0, sizeof(s));
	s.jobs = (uint64_t)(uintptr_t)jobs;
	s.nr = nr;
	s.flags = flags;
	return iopa_ioctl(sub_fd, IOPA_IOC_SUBMIT, &s);
}

IOPA_EXPORT int iopa_reap(int sub_fd, struct iopa_cqe *cqes, unsigned int nr,
			  unsigned int flags, uint64_t timeout_ns)
{
	struct iopa_reap r;

	memset(&r, 0, sizeof(r));
	r.cqes = (uint64_t)(uintptr_t)cqes;
	r.nr = nr;
	r.flags = flags;
	r.timeout_ns = timeout_ns;
	return iopa_ioctl(sub_fd, IOPA_IOC_REAP, &r);
}

IOPA_EXPORT int iopa_cancel(int sub_fd, uint64_t user_data, unsigned int flags)
{
	struct iopa_cancel c;

	memset(&c, 0, sizeof(c));
	c.user_data = user_data;
	c.flags = flags;
	return iopa_ioctl(sub_fd, IOPA_IOC_CANCEL, &c);
}

IOPA_EXPORT int iopa_list_submitters(int ctx_fd, struct iopa_sub_info *subs,
				     unsigned int nr, unsigned int flags,
				     unsigned int *total)
{
	struct iopa_list l;
	int r;

	memset(&l, 0, sizeof(l));
	l.subs = (uintptr_t)subs;
	l.nr = nr;
	l.flags = flags;
	l.entry_size = sizeof(*subs);
	r = iopa_ioctl(ctx_fd, IOPA_IOC_LIST_SUBMITTERS, &l);
	if (r < 0)
		return r;
	if (total)
		*total = l.total;
	return (int)l.filled;
}

IOPA_EXPORT int iopa_sub_admin(int ctx_fd, const struct iopa_sub_admin *admin)
{
	if (!admin)
		return -EFAULT;
	return iopa_ioctl(ctx_fd, IOPA_IOC_SUB_ADMIN, (void *)admin);
}

IOPA_EXPORT int iopa_set_limit(int sub_fd, unsigned int limit)
{
	struct iopa_limit l;

	memset(&l, 0, sizeof(l));
	l.limit = limit;
	return iopa_ioctl(sub_fd, IOPA_IOC_SET_LIMIT, &l);
}

IOPA_EXPORT int iopa_set_order(int sub_fd, unsigned int order)
{
	struct iopa_order o;

	memset(&o, 0, sizeof(o));
	o.order = order;
	return iopa_ioctl(sub_fd, IOPA_IOC_SET_ORDER, &o);
}

IOPA_EXPORT int iopa_set_lease(int sub_fd, uint64_t lease_ns)
{
	struct iopa_lease l;

	memset(&l, 0, sizeof(l));
	l.lease_ns = lease_ns;
	return iopa_ioctl(sub_fd, IOPA_IOC_SET_LEASE, &l);
}

IOPA_EXPORT int iopa_get_lease(int sub_fd, uint64_t *lease_ns)
{
	struct iopa_lease l;
	int r;

	if (!lease_ns)
		return -EFAULT;
	memset(&l, 0, sizeof(l));
	r = iopa_ioctl(sub_fd, IOPA_IOC_GET_LEASE, &l);
	if (!r)
		*lease_ns = l.lease_ns;
	return r;
}

IOPA_EXPORT int iopa_get_limit(int sub_fd, unsigned int *flags)
{
	struct iopa_limit l;
	int r;

	memset(&l, 0, sizeof(l));
	r = iopa_ioctl(sub_fd, IOPA_IOC_GET_LIMIT, &l);
	if (r < 0)
		return r;
	if (flags)
		*flags = l.flags;
	/* 1..IOPA_LIMIT_MAX: fits an int, and is never mistaken for -errno. */
	return (int)l.limit;
}

IOPA_EXPORT int iopa_set_adapt(int sub_fd, unsigned int policy,
			       unsigned int min, unsigned int max)
{
	struct iopa_adapt a;

	memset(&a, 0, sizeof(a));
	a.policy = policy;
	a.min = min;
	a.max = max;
	return iopa_ioctl(sub_fd, IOPA_IOC_SET_ADAPT, &a);
}

IOPA_EXPORT int iopa_set_adapt_weight(int sub_fd, unsigned int policy,
				      unsigned int min, unsigned int max,
				      unsigned int weight)
{
	struct iopa_adapt a;

	memset(&a, 0, sizeof(a));
	a.policy = policy;
	a.min = min;
	a.max = max;
	a.flags = IOPA_ADAPT_F_WEIGHT;
	a.weight = weight;
	return iopa_ioctl(sub_fd, IOPA_IOC_SET_ADAPT, &a);
}

IOPA_EXPORT int iopa_get_state(int sub_fd, struct iopa_state *state)
{
	if (!state)
		return -EFAULT;
	memset(state, 0, sizeof(*state));
	return iopa_ioctl(sub_fd, IOPA_IOC_GET_STATE, state);
}

/* The job fetched, or fd -1 in @work if none was. */
static int iopa_fetch_cmd(int worker_fd, unsigned long cmd,
			  struct iopa_fetch *f, struct iopa_work *work)
{
	int r = iopa_ioctl(worker_fd, cmd, f);

	if (r < 0) {
		memset(work, 0, sizeof(*work));
		work->fd = -1;
		return r;
	}
	*work = f->work;
	return r;
}

IOPA_EXPORT int iopa_fetch(int worker_fd, struct iopa_work *work,
			   unsigned int flags, uint64_t timeout_ns)
{
	struct iopa_fetch f;

	if (!work)
		return -EFAULT;
	memset(&f, 0, sizeof(f));
	f.timeout_ns = timeout_ns;
	f.flags = flags;
	return iopa_fetch_cmd(worker_fd, IOPA_IOC_FETCH, &f, work);
}

IOPA_EXPORT int iopa_complete(int worker_fd, uint64_t job_id, int res)
{
	struct iopa_done d;

	memset(&d, 0, sizeof(d));
	d.job_id = job_id;
	d.res = res;
	return iopa_ioctl(worker_fd, IOPA_IOC_COMPLETE, &d);
}

IOPA_EXPORT int iopa_complete_and_fetch(int worker_fd, uint64_t job_id,
					int res, struct iopa_work *work,
					unsigned int flags, uint64_t timeout_ns)
{
	struct iopa_fetch f;

	if (!work)
		return -EFAULT;
	memset(&f, 0, sizeof(f));
	f.timeout_ns = timeout_ns;
	f.flags = flags;
	f.done.job_id = job_id;
	f.done.res = res;
	return iopa_fetch_cmd(worker_fd, IOPA_IOC_COMPLETE_AND_FETCH, &f, work);
}

IOPA_EXPORT int iopa_work_batch(int worker_fd, const struct iopa_done *done,
				unsigned int nr_done, struct iopa_work *work,
				unsigned int nr_work, unsigned int flags,
				uint64_t timeout_ns, unsigned int *completed)
{
	struct iopa_batch b;
	int r;

	memset(&b, 0, sizeof(b));
	b.done = (uint64_t)(uintptr_t)done;
	b.nr_done = nr_done;
	b.work = (uint64_t)(uintptr_t)work;
	b.nr_work = nr_work;
	b.flags = flags;
	b.timeout_ns = timeout_ns;
	r = iopa_ioctl(worker_fd, IOPA_IOC_WORK_BATCH, &b);
	if (completed)
		*completed = b.completed;
	return r;
}

IOPA_EXPORT int iopa_worker_set_files(int worker_fd, const int *fds,
				      unsigned int nr)
{
	struct iopa_worker_files f;

	memset(&f, 0, sizeof(f));
	f.fds = (uint64_t)(uintptr_t)fds;
	f.nr = nr;
	return iopa_ioctl(worker_fd, IOPA_IOC_WORKER_SET_FILES, &f);
}
