// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - sysfs: tunables and module totals under /sys/class/misc/iopa/.
 *
 * Documented in Documentation/ABI/testing/sysfs-class-misc-iopa.
 */
#include <linux/device.h>
#include <linux/kernel.h>
#include <linux/sysfs.h>

#include "iopa.h"

struct iopa_totals iopa_totals;

struct iopa_tunables iopa_tunables = {
	.max_jobs	= 16384,
	.max_submitters	= 256,
	.max_workers	= 1024,
};

/*
 * A root-writable unsigned tunable in [min, max].  A value that does not
 * parse or is out of range is refused with -EINVAL; the old value stays.
 */
#define IOPA_TUNABLE(_name, _min, _max)					\
static ssize_t _name##_show(struct device *dev,				\
			    struct device_attribute *attr, char *buf)	\
{									\
	return sysfs_emit(buf, "%u\n", READ_ONCE(iopa_tunables._name));	\
}									\
static ssize_t _name##_store(struct device *dev,			\
			     struct device_attribute *attr,		\
			     const char *buf, size_t count)		\
{									\
	unsigned int val;						\
									\
	if (kstrtouint(buf, 0, &val) || val < (_min) || val > (_max))	\
		return -EINVAL;						\
	WRITE_ONCE(iopa_tunables._name, val);				\
	return count;							\
}									\
static DEVICE_ATTR_RW(_name)

IOPA_TUNABLE(max_jobs, 1, 1048576);
IOPA_TUNABLE(max_submitters, 1, 65536);
IOPA_TUNABLE(max_workers, 1, 65536);

static struct attribute *iopa_tunable_attrs[] = {
	&dev_attr_max_jobs.attr,
	&dev_attr_max_submitters.attr,
	&dev_attr_max_workers.attr,
	NULL,
};

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

IOPA_TOTAL(submitted, atomic64_read(&iopa_totals.stat[IOPA_STAT_SUBMITTED]));
IOPA_TOTAL(dispatched, atomic64_read(&iopa_totals.stat[IOPA_STAT_DISPATCHED]));
IOPA_TOTAL(completed, atomic64_read(&iopa_totals.stat[IOPA_STAT_COMPLETED]));
IOPA_TOTAL(cancelled, atomic64_read(&iopa_totals.stat[IOPA_STAT_CANCELLED]));
IOPA_TOTAL(requeued, atomic64_read(&iopa_totals.stat[IOPA_STAT_REQUEUED]));
IOPA_TOTAL(pending, atomic_long_read(&iopa_totals.nr[IOPA_JOB_PENDING]));
IOPA_TOTAL(inflight, atomic_long_read(&iopa_totals.nr[IOPA_JOB_RUNNING]));
IOPA_TOTAL(unreaped, atomic_long_read(&iopa_totals.nr[IOPA_JOB_DONE]));
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
