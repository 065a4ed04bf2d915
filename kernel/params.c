// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - the module's settings and totals: the limit controller's
 * parameters, the policy of new submitters, the queue's bounds, and the
 * counters over every context.
 *
 * sysfs.c shows and sets them, the other files read them.  A leaf: it
 * calls nothing of the module but kernel/ctl.c's defaults and checks.
 */
#include <linux/cpumask.h>
#include <linux/spinlock.h>

#include "iopa.h"

struct iopa_totals iopa_totals;
DEFINE_PER_CPU(struct iopa_pcpu_totals, iopa_pcpu_totals);

/**
 * iopa_totals_stat() - a module-wide event counter
 * @s: which
 *
 * Return: the sum over CPUs (a moment's, not a snapshot of all).
 */
s64 iopa_totals_stat(enum iopa_stat s)
{
	s64 sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(iopa_pcpu_totals.stat[s], cpu);
	return sum;
}

/**
 * iopa_totals_nr() - how many jobs of the module are in @state
 * @state: a counted state
 *
 * Return: the sum over CPUs.
 */
long iopa_totals_nr(enum iopa_job_state state)
{
	long sum = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		sum += per_cpu(iopa_pcpu_totals.nr[state], cpu);
	/* A job counted in on one CPU and out on another, read between. */
	return sum < 0 ? 0 : sum;
}

/*
 * The queue's bounds, each with why it is what it is.  A job object is
 * 208 bytes of slab (struct iopa_kjob on x86-64), charged to the
 * submitter's memory cgroup, plus the reference on its file (charged to
 * its user: user.c).
 */
struct iopa_tunables iopa_tunables = {
	/*
	 * A large directory walk queued at once (sorted dispatch sorts
	 * what is queued) in 3.3 MiB of job objects per submitter.
	 */
	.max_jobs	= 16384,
	/* A service's threads, each with its own submitter, per context. */
	.max_submitters	= 256,
	/*
	 * Four contexts' worth: every device group's split walks its
	 * members (group.c), and a user may open any number of contexts.
	 */
	.max_user_submitters = 1024,
	/*
	 * 16 per CPU of a 64-CPU host: well above max_limit's 256 running
	 * jobs, which the workers must be able to cover.
	 */
	.max_workers	= 1024,
	/*
	 * 52 MiB of job objects for the whole module (16 submitters at
	 * max_jobs), however many contexts and users there are.
	 */
	.max_total_jobs	= 262144,
	/*
	 * On: a tool run again on a device starts where the last run's
	 * search got (knee.c), not at 8 or 1.  Off until groups left the
	 * base they reached (iopa_ctl_left_knee()) and a "rotational" disk's
	 * known knee was probed at one job only for jobs of another size
	 * (iopa_ctl_set_known()): low knees learned in the demo disk's noise
	 * cost more than the start-up they saved.  Figures in
	 * Documentation/iopa-controller.rst.  Knees an operator sets are
	 * used either way.
	 */
	.learn_knees	= 1,
};

/* The controller's parameters: sysfs writes them, each cycle reads them. */
static struct iopa_ctl_params iopa_params;
static enum iopa_ctl_policy iopa_default_policy = IOPA_CTL_POLICY_BRACKET;
/* Protects iopa_params and iopa_default_policy; a leaf lock. */
static DEFINE_SPINLOCK(iopa_params_lock);

/**
 * iopa_params_init() - set the controller's parameters to their defaults
 *
 * The defaults, and why, are in iopa_ctl_params_default().
 */
void iopa_params_init(void)
{
	iopa_ctl_params_default(&iopa_params, num_online_cpus());
}

/**
 * iopa_params_get() - a consistent copy of the controller's parameters
 * @p: filled in, with ncpus set to the CPUs online now
 */
void iopa_params_get(struct iopa_ctl_params *p)
{
	spin_lock(&iopa_params_lock);
	*p = iopa_params;
	spin_unlock(&iopa_params_lock);
	p->ncpus = num_online_cpus();
}

/* The field of @p that parameter @i names. */
static u32 *iopa_param_field(struct iopa_ctl_params *p, enum iopa_param i)
{
	switch (i) {
	case IOPA_PARAM_INCREASE:
		return &p->increase_permille;
	case IOPA_PARAM_DECREASE:
		return &p->decrease_permille;
	case IOPA_PARAM_FAST_CYCLE:
		return &p->fast_cycle_ms;
	case IOPA_PARAM_NORMAL_CYCLE:
		return &p->normal_cycle_ms;
	case IOPA_PARAM_HOLD_CYCLE:
		return &p->hold_cycle_ms;
	case IOPA_PARAM_HISTORY:
		return &p->history;
	case IOPA_PARAM_INIT_LIMIT:
		return &p->init_limit;
	case IOPA_PARAM_FAST_CAP:
		return &p->fast_cap;
	case IOPA_PARAM_MAX_LIMIT:
		return &p->max_limit;
	case IOPA_PARAM_GAIN:
		return &p->gain_permille;
	case IOPA_NR_PARAMS:
		break;
	}
	return NULL;
}

/**
 * iopa_param_read() - one controller parameter
 * @i: which
 *
 * Return: its value (0 for a value of @i out of the enum).
 */
u32 iopa_param_read(enum iopa_param i)
{
	u32 *f, val = 0;

	spin_lock(&iopa_params_lock);
	f = iopa_param_field(&iopa_params, i);
	if (f)
		val = *f;
	spin_unlock(&iopa_params_lock);
	return val;
}

/**
 * iopa_param_set() - set one controller parameter, if the whole set
 *	stays valid
 * @i: which
 * @val: the new value
 *
 * Return: 0, or -EINVAL (the old value stays) if iopa_ctl_params_check()
 * refuses the result or @i is out of the enum.
 */
int iopa_param_set(enum iopa_param i, u32 val)
{
	struct iopa_ctl_params p;
	u32 *f;
	int ret = -EINVAL;

	spin_lock(&iopa_params_lock);
	p = iopa_params;
	f = iopa_param_field(&p, i);
	if (f) {
		*f = val;
		p.ncpus = num_online_cpus();
		ret = iopa_ctl_params_check(&p);
		if (!ret)
			iopa_params = p;
	}
	spin_unlock(&iopa_params_lock);
	return ret;
}

/**
 * iopa_default_policy_get() - the policy of new adaptive submitters
 *
 * Return: the policy.
 */
enum iopa_ctl_policy iopa_default_policy_get(void)
{
	enum iopa_ctl_policy pol;

	spin_lock(&iopa_params_lock);
	pol = iopa_default_policy;
	spin_unlock(&iopa_params_lock);
	return pol;
}

/**
 * iopa_default_policy_set() - set the policy of new adaptive submitters
 * @pol: the policy
 */
void iopa_default_policy_set(enum iopa_ctl_policy pol)
{
	spin_lock(&iopa_params_lock);
	iopa_default_policy = pol;
	spin_unlock(&iopa_params_lock);
}
