// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - the per-user charge of the files jobs pin.
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
 * One counter per user that has submitted since the module was loaded,
 * freed at unload: at most one small object per uid.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/xarray.h>

#include "iopa.h"

/**
 * struct iopa_pin - the files a user's jobs pin
 * @nr: A: how many
 */
struct iopa_pin {
	atomic_long_t		nr;
};

/* uid (in the initial namespace) -> struct iopa_pin */
static DEFINE_XARRAY(iopa_pins);

/* The counter of @uid, made on first use; an ERR_PTR() if none can be. */
static struct iopa_pin *iopa_pin_of(kuid_t uid)
{
	unsigned long idx = from_kuid(&init_user_ns, uid);
	struct iopa_pin *pin, *old;

	pin = xa_load(&iopa_pins, idx);
	if (pin)
		return pin;
	pin = kzalloc(sizeof(*pin), GFP_KERNEL);
	if (!pin)
		return ERR_PTR(-ENOMEM);
	old = xa_cmpxchg(&iopa_pins, idx, NULL, pin, GFP_KERNEL);
	if (!old)
		return pin;
	kfree(pin);
	return xa_is_err(old) ? ERR_PTR(xa_err(old)) : old;
}

/**
 * iopa_pin_charge() - charge one pinned file to the calling user
 *
 * Context: process context (the submitting task, or io-wq on its
 * behalf), may sleep.
 * Return: the counter to give back to iopa_pin_uncharge(), or
 * ERR_PTR(-ETOOMANYREFS) beyond RLIMIT_NOFILE, or ERR_PTR(-ENOMEM).
 */
struct iopa_pin *iopa_pin_charge(void)
{
	struct iopa_pin *pin = iopa_pin_of(current_uid());

	if (IS_ERR(pin))
		return pin;
	if (atomic_long_read(&pin->nr) >= rlimit(RLIMIT_NOFILE) &&
	    !capable(CAP_SYS_RESOURCE) && !capable(CAP_SYS_ADMIN))
		return ERR_PTR(-ETOOMANYREFS);
	atomic_long_inc(&pin->nr);
	return pin;
}

/**
 * iopa_pin_uncharge() - the file charged to @pin is no longer pinned
 * @pin: what iopa_pin_charge() returned
 *
 * Context: any; ctx->lock may be held.
 */
void iopa_pin_uncharge(struct iopa_pin *pin)
{
	atomic_long_dec(&pin->nr);
}

/**
 * iopa_pin_exit() - module unload: free the counters (every job is gone)
 */
void iopa_pin_exit(void)
{
	struct iopa_pin *pin;
	unsigned long idx;

	xa_for_each(&iopa_pins, idx, pin) {
		WARN_ON_ONCE(atomic_long_read(&pin->nr));
		kfree(pin);
	}
	xa_destroy(&iopa_pins);
}
