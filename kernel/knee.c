// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - what the module remembers of each device: its knee.
 *
 * A device group's controller finds the budget beyond which the device
 * no longer pays for more jobs (its knee).  Found again by every new
 * submitter, it costs each a start-up: from 8 jobs doubling, or from 1
 * on a disk that says it is rotational (which virtio disks, USB flash
 * and many others say whatever they are), a second or more of a short
 * run.  So the module keeps each device's knee while it is loaded, after
 * its submitters leave: the next submitter on the device starts there
 * and doubles from there while a doubling pays (iopa_ctl_set_known()).
 *
 * - Learned, when the learn_knees tunable is 1 (the default), from a
 *   device group with one active member and no one else
 *   reading the device: its controller's base each group cycle it
 *   spends in STEADY (the search ended there: iopa_ctl_settled_knee()),
 *   and when its last member leaves, the base its search had reached
 *   (iopa_ctl_left_knee(): a run of seconds never settles, and the knee
 *   is not below that base).  What a group learns replaces what an
 *   operator set (the device had the last word).
 * - Set by an operator in <sysfs>/class/misc/iopa/knees, one device a
 *   write, in the keyed-line way of blk-iocost's io.cost.model (a
 *   cgroup file there): "MAJ:MIN knee=N [diskseq=S] [job_kb=K]" (N 0
 *   forgets).  Read, one line per device: "MAJ:MIN knee=N diskseq=S
 *   src=learned|set job_kb=K" (all but src= is valid input).  K is the
 *   size of a job, in KiB, of the workload the knee was found with
 *   (iopa_ctl_job_kb(); 0: not known).  One file rather than a
 *   directory per device: entries exist for devices the module has not
 *   seen yet (restored at boot), which a kobject per device could not
 *   name before the device is there.  A unit saves the file
 *   at shutdown and restores it at boot (tools/udev/iopa-knees), mapping
 *   MAJ:MIN to a stable identity (/dev/disk/by-id) and back.
 * - Identity: the dev_t and the disk's diskseq, the number the block
 *   layer gives each disk it adds.  A dev_t that another disk took has
 *   another diskseq: the entry is forgotten at that disk's first job.  An
 *   operator's entry has none (0) until the first job on the device
 *   binds it.
 * - At most IOPA_KNEE_MAX devices (the file stays within a page); a new
 *   one takes the place of the least recently used.
 * - A start from a known knee is checked (iopa_ctl_set_known()): on a
 *   disk that says it is rotational, one job is tried first, as a knee
 *   of another workload may be far too high for this one, unless the
 *   jobs are of the size (within 4x) of those it was found with.
 *
 * Locking: iopa_knee_lock, a leaf spinlock (taken under ctx->lock).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/kdev_t.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/sysfs.h>

#include "iopa.h"

/*
 * Devices remembered: 51 lines of at most 80 bytes ("4095:1048575
 * knee=4096 diskseq=<20 digits> src=learned job_kb=1048576\n", 79) fit
 * the 4095 bytes of a sysfs page.
 */
#define IOPA_KNEE_MAX	51

/**
 * struct iopa_knee - a device's remembered knee
 * @dev: the device; 0 for a free slot
 * @diskseq: its disk's diskseq; 0 until a job binds an operator's entry
 * @used: when it was last looked up or written (iopa_knee_clock)
 * @knee: the knee, a budget of jobs
 * @job_kb: KiB a job of the workload it was found with; 0: not known
 * @set: an operator set it (else a device group learned it)
 */
struct iopa_knee {
	dev_t			dev;
	u64			diskseq;
	u64			used;
	u32			knee;
	u32			job_kb;
	bool			set;
};

static DEFINE_SPINLOCK(iopa_knee_lock);
static struct iopa_knee iopa_knees[IOPA_KNEE_MAX];	/* iopa_knee_lock */
static u64 iopa_knee_clock;				/* iopa_knee_lock */

static struct iopa_knee *iopa_knee_find(dev_t dev)
{
	unsigned int i;

	lockdep_assert_held(&iopa_knee_lock);
	for (i = 0; i < IOPA_KNEE_MAX; i++)
		if (iopa_knees[i].dev == dev)
			return &iopa_knees[i];
	return NULL;
}

/* @dev's entry, or a free one, or the least recently used one, emptied. */
static struct iopa_knee *iopa_knee_slot(dev_t dev)
{
	struct iopa_knee *k = iopa_knee_find(dev), *lru = &iopa_knees[0];
	unsigned int i;

	if (k)
		return k;
	for (i = 0; i < IOPA_KNEE_MAX; i++) {
		if (!iopa_knees[i].dev)
			return &iopa_knees[i];
		if (iopa_knees[i].used < lru->used)
			lru = &iopa_knees[i];
	}
	memset(lru, 0, sizeof(*lru));
	return lru;
}

/* @dev's entry (made if need be) now says @knee, for the disk @diskseq. */
static void iopa_knee_fill(dev_t dev, u64 diskseq, u32 knee, u32 job_kb,
			   bool set)
{
	struct iopa_knee *k = iopa_knee_slot(dev);

	lockdep_assert_held(&iopa_knee_lock);
	k->dev = dev;
	k->diskseq = diskseq;
	k->used = ++iopa_knee_clock;
	k->knee = knee;
	k->job_kb = job_kb;
	k->set = set;
}

/**
 * iopa_knee_lookup() - the remembered knee of a device
 * @dev: the device
 * @diskseq: its disk's diskseq now
 * @job_kb: set to KiB a job of the workload the knee was found with (0:
 *	not known, or no knee)
 *
 * An entry of another disk that had @dev is forgotten; an operator's
 * entry without a disk yet is bound to this one.
 *
 * Context: any; takes a leaf spinlock.
 * Return: the knee, or 0 if none is known.
 */
u32 iopa_knee_lookup(dev_t dev, u64 diskseq, u32 *job_kb)
{
	struct iopa_knee *k;
	u32 knee = 0;

	*job_kb = 0;
	if (!dev)
		return 0;
	spin_lock(&iopa_knee_lock);
	k = iopa_knee_find(dev);
	if (k && k->diskseq && k->diskseq != diskseq) {
		memset(k, 0, sizeof(*k));
	} else if (k) {
		k->diskseq = diskseq;
		k->used = ++iopa_knee_clock;
		knee = k->knee;
		*job_kb = k->job_kb;
	}
	spin_unlock(&iopa_knee_lock);
	return knee;
}

/**
 * iopa_knee_learn() - remember a knee a device group found
 * @dev: the device
 * @diskseq: its disk's diskseq
 * @knee: the knee (0: nothing to learn)
 * @job_kb: KiB a job of the workload it found it with (0: not known)
 *
 * Context: any; takes a leaf spinlock.
 */
void iopa_knee_learn(dev_t dev, u64 diskseq, u32 knee, u32 job_kb)
{
	if (!dev || !knee || !diskseq)
		return;
	spin_lock(&iopa_knee_lock);
	iopa_knee_fill(dev, diskseq, knee, job_kb, false);
	spin_unlock(&iopa_knee_lock);
}

/**
 * iopa_knee_show() - <sysfs>/class/misc/iopa/knees
 * @buf: the sysfs page
 *
 * Return: the bytes written.
 */
ssize_t iopa_knee_show(char *buf)
{
	const struct iopa_knee *k;
	ssize_t n = 0;

	spin_lock(&iopa_knee_lock);
	for (k = iopa_knees; k < iopa_knees + IOPA_KNEE_MAX; k++) {
		if (!k->dev)
			continue;
		n += sysfs_emit_at(buf, n,
				   "%u:%u knee=%u diskseq=%llu src=%s job_kb=%u\n",
				   MAJOR(k->dev), MINOR(k->dev), k->knee,
				   k->diskseq, k->set ? "set" : "learned",
				   k->job_kb);
	}
	spin_unlock(&iopa_knee_lock);
	return n;
}

/* "MAJ:MIN" into @dev: 0 or -EINVAL (major 0: no block device has it). */
static int iopa_knee_parse_dev(char *tok, dev_t *dev)
{
	char *min = strchr(tok, ':');
	unsigned int ma, mi;

	if (!min)
		return -EINVAL;
	*min++ = 0;
	if (kstrtouint(tok, 10, &ma) || kstrtouint(min, 10, &mi) || !ma ||
	    ma > MAJOR(~0U) || mi > MINOR(~0U))
		return -EINVAL;
	*dev = MKDEV(ma, mi);
	return 0;
}

/**
 * iopa_knee_store() - set or forget one device's knee
 * @buf: "MAJ:MIN knee=N [diskseq=S] [job_kb=K]\n" (the last two in
 *	either order): N in 0..IOPA_LIMIT_MAX (0 forgets); S, if given and
 *	not 0, the disk the knee is for (else the disk of the next job on
 *	the device); K in 0..IOPA_CTL_JOB_KB_MAX, KiB a job of the workload
 *	the knee is for (0 or none: not known)
 * @count: its length
 *
 * Return: @count, or -EINVAL for anything else (a number that does not
 * fit, major 0 and a device number out of range, a field twice
 * included).
 */
ssize_t iopa_knee_store(const char *buf, size_t count)
{
	bool have_knee = false, have_seq = false, have_kb = false;
	char line[96], *s = line, *tok;
	unsigned int knee = 0, job_kb = 0;
	struct iopa_knee *k;
	u64 diskseq = 0;
	dev_t dev = 0;
	int i;

	if (count >= sizeof(line))
		return -EINVAL;
	memcpy(line, buf, count);
	line[count] = 0;
	if (count && line[count - 1] == '\n')
		line[count - 1] = 0;
	for (i = 0; (tok = strsep(&s, " ")); i++) {
		if (i == 0) {
			if (iopa_knee_parse_dev(tok, &dev))
				return -EINVAL;
		} else if (i == 1 && !strncmp(tok, "knee=", 5)) {
			if (kstrtouint(tok + 5, 10, &knee) ||
			    knee > IOPA_LIMIT_MAX)
				return -EINVAL;
			have_knee = true;
		} else if (i >= 2 && !have_seq && !strncmp(tok, "diskseq=", 8)) {
			if (kstrtou64(tok + 8, 10, &diskseq))
				return -EINVAL;
			have_seq = true;
		} else if (i >= 2 && !have_kb && !strncmp(tok, "job_kb=", 7)) {
			if (kstrtouint(tok + 7, 10, &job_kb) ||
			    job_kb > IOPA_CTL_JOB_KB_MAX)
				return -EINVAL;
			have_kb = true;
		} else {
			return -EINVAL;
		}
	}
	if (!have_knee)
		return -EINVAL;
	spin_lock(&iopa_knee_lock);
	if (!knee) {
		k = iopa_knee_find(dev);
		if (k)
			memset(k, 0, sizeof(*k));
	} else {
		iopa_knee_fill(dev, diskseq, knee, job_kb, true);
	}
	spin_unlock(&iopa_knee_lock);
	return count;
}
