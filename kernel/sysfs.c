// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - sysfs: tunables and module totals under /sys/class/misc/iopa/
 * (the values themselves are params.c's).
 *
 * Documented in Documentation/ABI/testing/sysfs-class-misc-iopa.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/sysfs.h>

#include "iopa.h"

/**
 * struct iopa_tunable_attr - a root-writable unsigned tunable in [min, max]
 * @dattr: the sysfs attribute
 * @val: the value it shows and sets
 * @min: smallest value accepted
 * @max: largest value accepted
 *
 * A value that does not parse or is out of range is refused with -EINVAL
 * and the old value stays.
 */
struct iopa_tunable_attr {
	struct device_attribute	dattr;
	unsigned int		*val;
	unsigned int		min;
	unsigned int		max;
};

#define to_iopa_tunable(a) container_of(a, struct iopa_tunable_attr, dattr)

static ssize_t iopa_tunable_show(struct device *dev,
				 struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(*to_iopa_tunable(attr)->val));
}

static ssize_t iopa_tunable_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t count)
{
	struct iopa_tunable_attr *t = to_iopa_tunable(attr);
	unsigned int val;

	if (kstrtouint(buf, 0, &val) || val < t->min || val > t->max)
		return -EINVAL;
	WRITE_ONCE(*t->val, val);
	return count;
}

static struct iopa_tunable_attr iopa_tunable_attr_tbl[] = {
	{
		.dattr	= __ATTR(max_jobs, 0644, iopa_tunable_show,
				 iopa_tunable_store),
		.val	= &iopa_tunables.max_jobs,
		.min	= 1,
		.max	= 1048576,
	}, {
		.dattr	= __ATTR(max_submitters, 0644, iopa_tunable_show,
				 iopa_tunable_store),
		.val	= &iopa_tunables.max_submitters,
		.min	= 1,
		.max	= 65536,
	}, {
		.dattr	= __ATTR(max_user_submitters, 0644, iopa_tunable_show,
				 iopa_tunable_store),
		.val	= &iopa_tunables.max_user_submitters,
		.min	= 1,
		.max	= 1048576,
	}, {
		.dattr	= __ATTR(max_workers, 0644, iopa_tunable_show,
				 iopa_tunable_store),
		.val	= &iopa_tunables.max_workers,
		.min	= 1,
		.max	= 65536,
	}, {
		.dattr	= __ATTR(max_total_jobs, 0644, iopa_tunable_show,
				 iopa_tunable_store),
		.val	= &iopa_tunables.max_total_jobs,
		.min	= 1,
		.max	= 16777216,
	}, {
		.dattr	= __ATTR(learn_knees, 0644, iopa_tunable_show,
				 iopa_tunable_store),
		.val	= &iopa_tunables.learn_knees,
		.min	= 0,
		.max	= 1,
	},
};

/**
 * struct iopa_param_attr - a controller parameter (struct iopa_ctl_params)
 * @dattr: the sysfs attribute
 * @param: which
 *
 * A value that does not parse, or that iopa_ctl_params_check() refuses
 * together with the other parameters, is refused with -EINVAL and the
 * old value stays.
 */
struct iopa_param_attr {
	struct device_attribute	dattr;
	enum iopa_param		param;
};

#define to_iopa_param(a) container_of(a, struct iopa_param_attr, dattr)

static ssize_t iopa_param_show(struct device *dev,
			       struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", iopa_param_read(to_iopa_param(attr)->param));
}

static ssize_t iopa_param_store(struct device *dev,
				struct device_attribute *attr,
				const char *buf, size_t count)
{
	unsigned int val;

	if (kstrtouint(buf, 0, &val) ||
	    iopa_param_set(to_iopa_param(attr)->param, val))
		return -EINVAL;
	return count;
}

#define IOPA_PARAM_ATTR(_file, _param) {				\
	.dattr	= __ATTR(_file, 0644, iopa_param_show, iopa_param_store), \
	.param	= _param,						\
}

static struct iopa_param_attr iopa_param_attr_tbl[] = {
	IOPA_PARAM_ATTR(increase_threshold, IOPA_PARAM_INCREASE),
	IOPA_PARAM_ATTR(decrease_threshold, IOPA_PARAM_DECREASE),
	IOPA_PARAM_ATTR(fast_cycle_ms, IOPA_PARAM_FAST_CYCLE),
	IOPA_PARAM_ATTR(normal_cycle_ms, IOPA_PARAM_NORMAL_CYCLE),
	IOPA_PARAM_ATTR(hold_cycle_ms, IOPA_PARAM_HOLD_CYCLE),
	IOPA_PARAM_ATTR(history, IOPA_PARAM_HISTORY),
	IOPA_PARAM_ATTR(init_limit, IOPA_PARAM_INIT_LIMIT),
	IOPA_PARAM_ATTR(fast_cap, IOPA_PARAM_FAST_CAP),
	IOPA_PARAM_ATTR(max_limit, IOPA_PARAM_MAX_LIMIT),
	IOPA_PARAM_ATTR(gain_threshold, IOPA_PARAM_GAIN),
};

/* One file per parameter. */
static_assert(ARRAY_SIZE(iopa_param_attr_tbl) == IOPA_NR_PARAMS);

static ssize_t default_policy_show(struct device *dev,
				   struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n",
			  iopa_ctl_policy_name(iopa_default_policy_get()));
}

static ssize_t default_policy_store(struct device *dev,
				    struct device_attribute *attr,
				    const char *buf, size_t count)
{
	int pol = iopa_ctl_policy_parse(buf, count);

	if (pol < 0)
		return -EINVAL;
	iopa_default_policy_set(pol);
	return count;
}
static DEVICE_ATTR_RW(default_policy);

/* Each device's remembered knee (knee.c). */
static ssize_t knees_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return iopa_knee_show(buf);
}

static ssize_t knees_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count)
{
	return iopa_knee_store(buf, count);
}
static DEVICE_ATTR_RW(knees);

static struct attribute *iopa_tunable_attrs[] = {
	&iopa_tunable_attr_tbl[0].dattr.attr,
	&iopa_tunable_attr_tbl[1].dattr.attr,
	&iopa_tunable_attr_tbl[2].dattr.attr,
	&iopa_tunable_attr_tbl[3].dattr.attr,
	&iopa_tunable_attr_tbl[4].dattr.attr,
	&iopa_tunable_attr_tbl[5].dattr.attr,
	&iopa_param_attr_tbl[0].dattr.attr,
	&iopa_param_attr_tbl[1].dattr.attr,
	&iopa_param_attr_tbl[2].dattr.attr,
	&iopa_param_attr_tbl[3].dattr.attr,
	&iopa_param_attr_tbl[4].dattr.attr,
	&iopa_param_attr_tbl[5].dattr.attr,
	&iopa_param_attr_tbl[6].dattr.attr,
	&iopa_param_attr_tbl[7].dattr.attr,
	&iopa_param_attr_tbl[8].dattr.attr,
	&iopa_param_attr_tbl[9].dattr.attr,
	&dev_attr_default_policy.attr,
	&dev_attr_knees.attr,
	NULL,
};

/* Every entry of both tables listed (a new tunable was once left out). */
static_assert(ARRAY_SIZE(iopa_tunable_attrs) ==
	      ARRAY_SIZE(iopa_tunable_attr_tbl) +
	      ARRAY_SIZE(iopa_param_attr_tbl) + 3);

static const struct attribute_group iopa_tunable_group = {
	.attrs = iopa_tunable_attrs,
};

/* A read-only module total under stats/. */
#define IOPA_TOTAL(_name, _expr)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%lld\n", (long long)(_expr));		\
}									\
static DEVICE_ATTR_RO(_name)

IOPA_TOTAL(submitted, iopa_totals_stat(IOPA_STAT_SUBMITTED));
IOPA_TOTAL(dispatched, iopa_totals_stat(IOPA_STAT_DISPATCHED));
IOPA_TOTAL(completed, iopa_totals_stat(IOPA_STAT_COMPLETED));
IOPA_TOTAL(cancelled, iopa_totals_stat(IOPA_STAT_CANCELLED));
IOPA_TOTAL(requeued, iopa_totals_stat(IOPA_STAT_REQUEUED));
IOPA_TOTAL(pending, iopa_totals_nr(IOPA_JOB_PENDING));
IOPA_TOTAL(inflight, iopa_totals_nr(IOPA_JOB_RUNNING));
IOPA_TOTAL(unreaped, iopa_totals_nr(IOPA_JOB_DONE));
IOPA_TOTAL(jobs, atomic_long_read(&iopa_totals.jobs));
IOPA_TOTAL(contexts, atomic_long_read(&iopa_totals.contexts));
IOPA_TOTAL(submitters, atomic_long_read(&iopa_totals.submitters));
IOPA_TOTAL(workers, atomic_long_read(&iopa_totals.workers));

static struct attribute *iopa_stats_attrs[] = {
	&dev_attr_submitted.attr,
	&dev_attr_dispatched.attr,
	&dev_attr_completed.attr,
	&dev_attr_cancelled.attr,
	&dev_attr_requeued.attr,
	&dev_attr_pending.attr,
	&dev_attr_inflight.attr,
	&dev_attr_unreaped.attr,
	&dev_attr_jobs.attr,
	&dev_attr_contexts.attr,
	&dev_attr_submitters.attr,
	&dev_attr_workers.attr,
	NULL,
};

static const struct attribute_group iopa_stats_group = {
	.name	= "stats",
	.attrs	= iopa_stats_attrs,
};

const struct attribute_group *iopa_attr_groups[] = {
	&iopa_tunable_group,
	&iopa_stats_group,
	NULL,
};
