// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - what each user holds: the files its jobs pin, its live
 * submitters.
 *
 * A job holds a reference to its file from SUBMIT until it ends, outside
 * any fd table: without a charge, a user could hold open up to
 * max_total_jobs files (through every context and process) beyond
 * RLIMIT_NOFILE.  As the files in flight in unix sockets are charged to
 * the sending user (SCM_RIGHTS: user->unix_inflight, checked by
 * too_many_unix_fds()), the file of each job is charged to the user who
 * submits it (the real uid of the submitting task, as user_struct is
 * keyed), from submission until the job puts its file: its end (or the
 * release of its submitter).  A SUBMIT that would take a user's charge
 * beyond the submitting task's RLIMIT_NOFILE fails with -ETOOMANYREFS,
 * as sendmsg() with SCM_RIGHTS does, unless the task has CAP_SYS_RESOURCE
 * or CAP_SYS_ADMIN.  Like too_many_unix_fds(), the check reads the count
 * without a lock: concurrent submitters of one user may pass the limit
 * by their number.
 *
 * A submitter is charged to the user who creates it, from SUBMITTER_CREATE
 * until its fd is closed: at most max_user_submitters (a tunable) each,
 * module-wide; beyond, -EDQUOT, as a user's key quota answers
 * (key_alloc(); -EMFILE would say the process has no free fd, as
 * SUBMITTER_CREATE already does).  max_submitters bounds one
 * context, but a user may open any number of contexts: this bounds what
 * one user can make every device group's split walk (group.c) and the
 * memory its submitters take.  The count is exact (a compare-and-swap
 * below the bound).  It binds root too, as it does all the root
 * daemons together: an operator raises the tunable rather than a
 * capability lifting it.
 *
 * One counter pair per user that has submitted or created a submitter
 * since the module was loaded, freed at unload: at most one small object
 * per uid.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "iopa.h"

/**
 * struct iopa_user - what one user holds
 * @pins: A: files its jobs pin
 * @subs: A: its live (open) submitters
 */
struct iopa_user {
	atomic_long_t		pins;
	atomic_t		subs;
};

/* uid (in the initial namespace) -> struct iopa_user */
static DEFINE_XARRAY(iopa_users);

/* The counters of the calling user, made on first use; or an ERR_PTR(). */
static struct iopa_user *iopa_user_current(void)
{
	unsigned long idx = from_kuid(&init_user_ns, current_uid());
	struct iopa_user *u, *old;

	u = xa_load(&iopa_users, idx);
	if (u)
		return u;
	u = kzalloc(sizeof(*u), GFP_KERNEL);
	if (!u)
		return ERR_PTR(-ENOMEM);
	old = xa_cmpxchg(&iopa_users, idx, NULL, u, GFP_KERNEL);
	if (!old)
		return u;
	kfree(u);
	return xa_is_err(old) ? ERR_PTR(xa_err(old)) : old;
}

/**
 * iopa_user_pin() - charge one pinned file to the calling user
 *
 * Context: process context (the submitting task, or io-wq on its
 * behalf), may sleep.
 * Return: the user to give back to iopa_user_unpin(), or
 * ERR_PTR(-ETOOMANYREFS) beyond RLIMIT_NOFILE, or ERR_PTR(-ENOMEM).
 */
struct iopa_user *iopa_user_pin(void)
{
	struct iopa_user *u = iopa_user_current();

	if (IS_ERR(u))
		return u;
	if (atomic_long_read(&u->pins) >= rlimit(RLIMIT_NOFILE) &&
	    !capable(CAP_SYS_RESOURCE) && !capable(CAP_SYS_ADMIN))
		return ERR_PTR(-ETOOMANYREFS);
	atomic_long_inc(&u->pins);
	return u;
}

/**
 * iopa_user_unpin() - the file charged to @u is no longer pinned
 * @u: what iopa_user_pin() returned
 *
 * Context: any; ctx->lock may be held.
 */
void iopa_user_unpin(struct iopa_user *u)
{
	atomic_long_dec(&u->pins);
}

/**
 * iopa_user_add_sub() - charge one live submitter to the calling user
 * @max: the most a user may have (max_user_submitters)
 *
 * Context: process context, may sleep.
 * Return: the user to give back to iopa_user_del_sub(), or
 * ERR_PTR(-EDQUOT) if the user has @max already, or ERR_PTR(-ENOMEM).
 */
struct iopa_user *iopa_user_add_sub(unsigned int max)
{
	struct iopa_user *u = iopa_user_current();
	int c;

	if (IS_ERR(u))
		return u;
	/* No overshoot: a concurrent create is not refused below @max. */
	c = atomic_read(&u->subs);
	do {
		if ((unsigned int)c >= max)
			return ERR_PTR(-EDQUOT);
	} while (!atomic_try_cmpxchg(&u->subs, &c, c + 1));
	return u;
}

/**
 * iopa_user_del_sub() - a submitter charged to @u is closed
 * @u: what iopa_user_add_sub() returned
 *
 * Context: any.
 */
void iopa_user_del_sub(struct iopa_user *u)
{
	atomic_dec(&u->subs);
}

/**
 * iopa_user_exit() - module unload: free the counters (every job and
 * submitter is gone)
 */
void iopa_user_exit(void)
{
	struct iopa_user *u;
	unsigned long idx;

	xa_for_each(&iopa_users, idx, u) {
		WARN_ON_ONCE(atomic_long_read(&u->pins) ||
			     atomic_read(&u->subs));
		kfree(u);
	}
	xa_destroy(&iopa_users);
}
