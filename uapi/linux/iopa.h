/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * iopa: a kernel-resident adaptive work queue for file-processing jobs.
 *
 * User-space ABI, version 1.  See Documentation/iopa.rst for the model.
 *
 * Three kinds of file descriptor carry the ABI:
 *
 *  - a *context* fd: each open() of /dev/iopa.  Jobs only flow between
 *    the submitters and workers created from one context.
 *  - a *submitter* fd: IOPA_IOC_SUBMITTER_CREATE on a context fd.  Submits
 *    jobs, reaps their completions (poll()able), cancels them, and owns a
 *    limit: how many of its jobs may run at once.
 *  - a *worker* fd: IOPA_IOC_WORKER_CREATE on a context fd.  Fetches jobs
 *    (receiving a new fd for each job's file) and completes them.
 *
 * Closing a submitter fd cancels its pending jobs; closing a worker fd
 * requeues (once) or cancels the jobs it holds.  New fds are O_CLOEXEC.
 *
 * All commands are _IOC numbers with type IOPA_IOC_MAGIC.  Every structure
 * has explicit padding; reserved fields must be zero and unknown flags are
 * rejected with -EINVAL, so they can be given a meaning later.
 */
#ifndef _UAPI_LINUX_IOPA_H
#define _UAPI_LINUX_IOPA_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

#define IOPA_DEV_NAME		"iopa"
#define IOPA_ABI_VERSION	1

/*
 * ioctl type, free in Documentation/userspace-api/ioctl/ioctl-number.rst
 * (checked by `make check`).  iopa uses sequence numbers 0x00-0x3f.
 */
#define IOPA_IOC_MAGIC		0xB9

/* Largest batch accepted by IOPA_IOC_SUBMIT and IOPA_IOC_REAP. */
#define IOPA_BATCH_MAX		4096
/* Largest in-flight limit a submitter may be given. */
#define IOPA_LIMIT_MAX		4096
/* Most jobs one worker may hold (fetched, not yet completed) at once. */
#define IOPA_WORKER_MAX_JOBS	64
/* Most fds a worker may name with IOPA_IOC_WORKER_SET_FILES. */
#define IOPA_WORKER_MAX_FILES	16

/* Feature bits reported by IOPA_IOC_GET_FEATURES. */
/* The ioctl commands of ABI version 1. */
#define IOPA_FEAT_IOCTL		_BITULL(0)
/* Submitter fds support poll(): EPOLLIN completions, EPOLLOUT room. */
#define IOPA_FEAT_POLL		_BITULL(1)
/* Adaptive limits: IOPA_IOC_SET_ADAPT, IOPA_IOC_GET_STATE, SET_LIMIT 0. */
#define IOPA_FEAT_ADAPTIVE	_BITULL(2)
/* IORING_OP_URING_CMD: IOPA_URING_CMD_SUBMIT, _FETCH, _COMMIT_AND_FETCH. */
#define IOPA_FEAT_URING_CMD	_BITULL(3)
/* Dispatch order: IOPA_IOC_SET_ORDER, struct iopa_state.order. */
#define IOPA_FEAT_ORDER		_BITULL(4)
/* Listing submitters: IOPA_IOC_LIST_SUBMITTERS. */
#define IOPA_FEAT_LIST		_BITULL(5)
/* The bracket policy (IOPA_POLICY_BRACKET), the default. */
#define IOPA_FEAT_BRACKET	_BITULL(6)
/* struct iopa_state.wait_us, svc_us, completions, noise_permille. */
#define IOPA_FEAT_TIMES		_BITULL(7)
/*
 * Device-wide admission: bracket submitters whose jobs read one device
 * share its budget; IOPA_ADAPT_F_WEIGHT; struct iopa_state.budget,
 * weight, sharers, group_cycles.
 */
#define IOPA_FEAT_SHARE		_BITULL(8)
/* Job leases: IOPA_IOC_SET_LEASE, _GET_LEASE, IOPA_CQE_F_LEASE_EXPIRED. */
#define IOPA_FEAT_LEASE		_BITULL(9)
/*
 * Borrowed fds: IOPA_JOB_F_BORROW, IOPA_WORKER_F_BORROW,
 * IOPA_WORK_F_BORROWED, IOPA_IOC_WORKER_SET_FILES.
 */
#define IOPA_FEAT_BORROW	_BITULL(10)
/*
 * The batched worker protocol: IOPA_IOC_WORK_BATCH and
 * IOPA_URING_CMD_WORK_BATCH (struct iopa_batch).
 */
#define IOPA_FEAT_BATCH		_BITULL(11)
/*
 * Batched io_uring submission and reaping: IOPA_URING_CMD_SUBMIT_MANY
 * and IOPA_URING_CMD_REAP.
 */
#define IOPA_FEAT_URING_BATCH	_BITULL(12)
/*
 * Cumulative per-submitter metrics in IOPA_IOC_LIST_SUBMITTERS: struct
 * iopa_sub_info.metrics (IOPA_SUB_INFO_SIZE_V2), with the queue-wait and
 * service-time histograms.
 */
#define IOPA_FEAT_METRICS	_BITULL(13)
/*
 * Root's commands on any open submitter, by its ids: IOPA_IOC_SUB_ADMIN
 * (struct iopa_sub_admin).
 */
#define IOPA_FEAT_ADMIN		_BITULL(14)
/*
 * Turns on a shared device: a device's budget may be below the number
 * of its sharers, and a submitter whose part is below one job waits for
 * its turn (limit 0, IOPA_LIMIT_F_WAITING); struct iopa_metrics
 * .turn_waits and .turn_wait_us.
 */
#define IOPA_FEAT_TURNS		_BITULL(15)

/**
 * struct iopa_features - answer of IOPA_IOC_GET_FEATURES
 * @abi_version: IOPA_ABI_VERSION of the running module
 * @reserved0: zero
 * @features: IOPA_FEAT_* bits
 * @batch_max: IOPA_BATCH_MAX of the running module
 * @limit_max: IOPA_LIMIT_MAX of the running module
 * @worker_max_jobs: IOPA_WORKER_MAX_JOBS of the running module
 * @reserved1: zero
 * @reserved: zero
 */
struct iopa_features {
	__u32	abi_version;
	__u32	reserved0;
	__u64	features;
	__u32	batch_max;
	__u32	limit_max;
	__u32	worker_max_jobs;
	__u32	reserved1;
	__u64	reserved[4];
};

/**
 * struct iopa_submitter_create - argument of IOPA_IOC_SUBMITTER_CREATE
 * @flags: zero (no flags are defined yet)
 * @limit: 0: the kernel adapts the limit (policy: the sysfs default);
 *	1..IOPA_LIMIT_MAX: the limit is fixed at this value (as after
 *	IOPA_IOC_SET_LIMIT)
 * @reserved: zero
 */
struct iopa_submitter_create {
	__u32	flags;
	__u32	limit;
	__u64	reserved[3];
};

/* Worker flags (struct iopa_worker_create.flags). */
/*
 * The worker takes borrowed fds (IOPA_FEAT_BORROW): a job submitted with
 * IOPA_JOB_F_BORROW may come with the submitter's own fd
 * (IOPA_WORK_F_BORROWED), which the worker uses and does not close.
 */
#define IOPA_WORKER_F_BORROW	0x1U
#define IOPA_WORKER_F_MASK	(IOPA_WORKER_F_BORROW)

/**
 * struct iopa_worker_create - argument of IOPA_IOC_WORKER_CREATE
 * @flags: IOPA_WORKER_F_*
 * @reserved0: zero
 * @reserved: zero
 */
struct iopa_worker_create {
	__u32	flags;
	__u32	reserved0;
	__u64	reserved[3];
};

/* Job flags (struct iopa_job.flags). */
/* If the worker holding the job dies, complete it with -ECANCELED. */
#define IOPA_JOB_F_NO_REQUEUE	0x1U
/*
 * Lend @fd (IOPA_FEAT_BORROW): the submitter keeps it open, naming the
 * job's file, until the job's completion is reaped (or its CQE comes).
 * A worker created with IOPA_WORKER_F_BORROW in whose file table, when
 * it is handed the job, @fd names that same file (a thread of the
 * submitting process, say), or one of the fds it named with
 * IOPA_IOC_WORKER_SET_FILES does (a worker process that has the file
 * open already), is given that fd itself, with IOPA_WORK_F_BORROWED,
 * instead of a new fd; any other worker gets a new fd as usual.  The
 * submitter sees the end of a lent run only once its worker gave the
 * number back (completed the job, or its worker fd went): a lease set
 * later spares the run.  Not lent (a new fd every time): while the
 * submitter has a lease, and for a job of IOPA_URING_CMD_SUBMIT, whose
 * CQE a cancel may post while the run goes on.
 */
#define IOPA_JOB_F_BORROW	0x2U
#define IOPA_JOB_F_MASK		(IOPA_JOB_F_NO_REQUEUE | IOPA_JOB_F_BORROW)

/**
 * struct iopa_job - one job, as submitted
 * @fd: open file the job is about: a regular file (one with read or
 *	write I/O: not a pidfd or namespace file), a directory or a block
 *	device.  The kernel takes its own reference at submit time.
 * @flags: IOPA_JOB_F_*
 * @offset: start of the byte range to process
 * @len: length of the byte range; offset + len must not exceed 2^63 - 1
 * @user_data: opaque, returned in the completion
 * @reserved: zero
 */
struct iopa_job {
	__s32	fd;
	__u32	flags;
	__u64	offset;
	__u64	len;
	__u64	user_data;
	__u64	reserved;
};

/* Submit flags (struct iopa_submit.flags). */
/*
 * Until the first job is accepted, wait while the submitter has max_jobs
 * jobs outstanding, instead of failing with -EAGAIN.
 */
#define IOPA_SUBMIT_F_WAIT	0x1U
#define IOPA_SUBMIT_F_MASK	(IOPA_SUBMIT_F_WAIT)

/**
 * struct iopa_submit - argument of IOPA_IOC_SUBMIT
 * @jobs: user pointer to an array of @nr struct iopa_job
 * @nr: number of jobs, 1..IOPA_BATCH_MAX
 * @flags: IOPA_SUBMIT_F_*
 * @reserved: zero
 *
 * Returns the number of jobs accepted (the first ones of the array), or a
 * negative errno if the first job could not be accepted.
 */
struct iopa_submit {
	__u64	jobs;
	__u32	nr;
	__u32	flags;
	__u64	reserved[2];
};

/* Completion flags (struct iopa_cqe.flags). */
/* The job never ran to completion: cancelled, or its worker died. */
#define IOPA_CQE_F_CANCELED	0x1U
/*
 * The job was requeued once because the worker holding it died (or its
 * lease ended: then IOPA_CQE_F_LEASE_EXPIRED too).
 */
#define IOPA_CQE_F_REQUEUED	0x2U
/* The job ended because the worker holding it died. */
#define IOPA_CQE_F_WORKER_DIED	0x4U
/*
 * The job ran past its submitter's lease and was taken back from its
 * worker, as from a worker that died: with IOPA_CQE_F_REQUEUED if it was
 * requeued (and ran again), with IOPA_CQE_F_CANCELED if it was not.
 */
#define IOPA_CQE_F_LEASE_EXPIRED	0x8U

/**
 * struct iopa_cqe - one completion, as reaped
 * @user_data: the job's user_data
 * @job_id: the id the kernel gave the job (unique within the context)
 * @res: the worker's result, or -ECANCELED
 * @flags: IOPA_CQE_F_*
 */
struct iopa_cqe {
	__u64	user_data;
	__u64	job_id;
	__s32	res;
	__u32	flags;
};

/* Reap flags (struct iopa_reap.flags). */
/* Wait for at least one completion instead of returning -EAGAIN. */
#define IOPA_REAP_F_WAIT	0x1U
#define IOPA_REAP_F_MASK		(IOPA_REAP_F_WAIT)

/**
 * struct iopa_reap - argument of IOPA_IOC_REAP
 * @cqes: user pointer to an array of @nr struct iopa_cqe
 * @nr: room in @cqes, 1..IOPA_BATCH_MAX
 * @flags: IOPA_REAP_F_*
 * @timeout_ns: with IOPA_REAP_F_WAIT, give up after this long with
 *	-ETIMEDOUT; 0 waits without a time limit
 * @reserved: zero
 *
 * Returns the number of completions copied to @cqes.
 */
struct iopa_reap {
	__u64	cqes;
	__u32	nr;
	__u32	flags;
	__u64	timeout_ns;
	__u64	reserved[2];
};

/* Cancel flags (struct iopa_cancel.flags). */
/* Cancel every pending job with this user_data, not just the oldest. */
#define IOPA_CANCEL_F_ALL	0x1U
#define IOPA_CANCEL_F_MASK	(IOPA_CANCEL_F_ALL)

/**
 * struct iopa_cancel - argument of IOPA_IOC_CANCEL
 * @user_data: cancel the pending job(s) submitted with this user_data
 * @flags: IOPA_CANCEL_F_*
 * @reserved0: zero
 *
 * Returns the number of jobs cancelled, -EALREADY if the only matches are
 * running, -ENOENT if nothing matches.
 */
struct iopa_cancel {
	__u64	user_data;
	__u32	flags;
	__u32	reserved0;
};

/**
 * struct iopa_limit - argument of IOPA_IOC_SET_LIMIT / IOPA_IOC_GET_LIMIT
 * @limit: SET: 1..IOPA_LIMIT_MAX fixes the limit at this value and stops
 *	adapting it; 0 resumes adapting from the current limit.  GET: the
 *	limit in force (how many of the submitter's jobs may run at once)
 * @flags: SET: zero.  GET: IOPA_LIMIT_F_FIXED if the limit is fixed;
 *	IOPA_LIMIT_F_WAITING if the submitter waits for its turn on a
 *	shared device (the limit is then 0: no job of it is dispatched
 *	until its turn comes; IOPA_FEAT_TURNS)
 * @reserved: zero
 */
struct iopa_limit {
	__u32	limit;
	__u32	flags;
	__u64	reserved[3];
};

/* Limit flags (struct iopa_limit.flags from GET_LIMIT, iopa_state.flags). */
#define IOPA_LIMIT_F_FIXED	0x1U
/* Waiting for its turn on a shared device: limit 0 (IOPA_FEAT_TURNS). */
#define IOPA_LIMIT_F_WAITING	0x2U

/* Adaptation policies (struct iopa_adapt.policy, struct iopa_state). */
/* Keep the submitter's policy (SET_ADAPT only). */
#define IOPA_POLICY_KEEP	0
/* The IOPA paper's algorithm: fast doubling, +1/-1 on R, hold. */
#define IOPA_POLICY_IOPA	1
/* Probe-and-revert hill climbing on the marginal throughput. */
#define IOPA_POLICY_HILLCLIMB	2
/*
 * The default (IOPA_FEAT_BRACKET): double until a doubling no longer
 * pays beyond the noise, then probe a step above and below the limit,
 * each against a measurement of the limit just before it; cycles end on
 * enough evidence.
 */
#define IOPA_POLICY_BRACKET	3
#define IOPA_POLICY_MAX		IOPA_POLICY_BRACKET

/* Controller modes (struct iopa_state.mode). */
#define IOPA_MODE_FAST		0
#define IOPA_MODE_NORMAL	1
#define IOPA_MODE_HOLD		2
#define IOPA_MODE_FIXED		3
#define IOPA_MODE_PROBE		4
#define IOPA_MODE_STEADY	5

/**
 * struct iopa_adapt - argument of IOPA_IOC_SET_ADAPT
 * @policy: IOPA_POLICY_*; IOPA_POLICY_KEEP leaves it as it is
 * @min: lower bound of the limit while it adapts, 0 for none
 * @max: upper bound of the limit while it adapts, 0 for none; if both
 *	are set, min <= max.  Both at most IOPA_LIMIT_MAX
 * @flags: IOPA_ADAPT_F_WEIGHT to set @weight, else zero
 * @weight: with IOPA_ADAPT_F_WEIGHT, the submitter's weight in the split
 *	of a device's budget (IOPA_WEIGHT_MIN..IOPA_WEIGHT_MAX; above
 *	IOPA_WEIGHT_DEFAULT needs CAP_SYS_NICE); else zero
 * @reserved: zero (an array, as before @weight took its first four
 *	bytes: a caller that zeroes it by name still builds)
 *
 * The bounds clamp an adapting limit at once and every later
 * adjustment; a pinned limit (IOPA_IOC_SET_LIMIT) holds as set and is
 * brought into the bounds when it adapts again.
 */
struct iopa_adapt {
	__u32	policy;
	__u32	min;
	__u32	max;
	__u32	flags;
	__u32	weight;
	__u32	reserved[3];
};

/* struct iopa_adapt.flags: set the weight (IOPA_FEAT_SHARE). */
#define IOPA_ADAPT_F_WEIGHT	0x1U
#define IOPA_ADAPT_F_MASK	IOPA_ADAPT_F_WEIGHT

/*
 * Weights in the split of a device's budget among the cgroups whose
 * submitters share the device (IOPA_FEAT_SHARE): a cgroup's share is
 * proportional to the largest weight of its submitters.
 */
#define IOPA_WEIGHT_MIN		1
#define IOPA_WEIGHT_DEFAULT	100
#define IOPA_WEIGHT_MAX		10000

/* Dispatch orders (struct iopa_order.order, struct iopa_state.order). */
/* Submission order, a requeued job first (the default). */
#define IOPA_ORDER_FIFO		0
/*
 * On-disk order, for rotational devices: jobs are keyed by the physical
 * block of their range's first byte (bmap() of a regular file, the offset
 * of a block device) and dispatched sweeping up, then down, like an
 * elevator.
 */
#define IOPA_ORDER_SORTED	1
/*
 * On-disk order, sweeping up only: after the highest pending job the
 * sweep starts again from the lowest (C-SCAN).  A disk reading a run of
 * neighbouring files backwards waits most of a revolution for each, so
 * this is the better choice for most rotational disks.
 */
#define IOPA_ORDER_CSCAN	2
#define IOPA_ORDER_MAX		IOPA_ORDER_CSCAN

/**
 * struct iopa_order - argument of IOPA_IOC_SET_ORDER
 * @order: IOPA_ORDER_*
 * @flags: zero (no flags are defined yet)
 * @reserved: zero
 *
 * Jobs submitted while a submitter is in IOPA_ORDER_SORTED or _CSCAN are
 * located at submission: a block device by offset; a regular file by its
 * physical block (bmap(), as FIBMAP) for a caller with CAP_SYS_RAWIO
 * unless it has dirty pages, else by inode number.  Jobs submitted in
 * FIFO order, and jobs whose file has no location (dirty, a hole, inline
 * data), sort as 0.
 */
struct iopa_order {
	__u32	order;
	__u32	flags;
	__u64	reserved[2];
};

/* Most block devices reported per submitter in struct iopa_state. */
#define IOPA_STATE_MAX_DEVS	4

/**
 * struct iopa_state - answer of IOPA_IOC_GET_STATE (submitter fd)
 * @limit: the limit in force; 0 while the submitter waits for its turn
 *	on a shared device (IOPA_LIMIT_F_WAITING)
 * @mode: IOPA_MODE_* of the controller that sets the limit: the device
 *	group's while the submitter shares a device (@budget non-zero; its
 *	@cycle_ms too)
 * @policy: IOPA_POLICY_*
 * @flags: IOPA_LIMIT_F_FIXED if the limit is fixed; IOPA_LIMIT_F_WAITING
 *	if the submitter waits for its turn on a shared device
 * @min: lower bound, 0 for none
 * @max: upper bound, 0 for none
 * @inflight: jobs held by workers
 * @pending: jobs waiting to be dispatched
 * @cycle_ms: length of the next cycle, with today's settings (a device
 *	group's: with the settings of its last split)
 * @r_permille: the controller's last throughput ratio, in 1/1000 (the
 *	submitter's own controller's, as @cycles: a device group's cycles
 *	are @group_cycles)
 * @cycles: adjustment cycles run so far
 * @changes: limit changes made by the controller so far
 * @bytes_per_s: in the last cycle, per second: the block I/O charged to
 *	the worker threads while they held the submitter's jobs (bytes
 *	read from devices and bytes of pages dirtied, as /proc/PID/io
 *	read_bytes and write_bytes; a thread holding several jobs at once
 *	charges each byte once, to the first of them to complete after it)
 * @jobs_per_s: the submitter's jobs completed in the last cycle, per
 *	second
 * @nr_devs: entries used in @devs
 * @order: IOPA_ORDER_* (zero, FIFO, from modules without IOPA_FEAT_ORDER)
 * @devs: devices of the files of the submitter's jobs, as
 *	(major << 20 | minor), first seen first
 * @wait_us: in the last cycle, the mean queue wait (submit or requeue
 *	to fetch) of the jobs dispatched, microseconds (IOPA_FEAT_TIMES)
 * @svc_us: in the last cycle, the mean service time (fetch to
 *	complete) of the jobs completed, microseconds (IOPA_FEAT_TIMES)
 * @completions: jobs completed in the last cycle (IOPA_FEAT_TIMES)
 * @noise_permille: the controller's estimate of the last cycle's
 *	throughput standard error, in 1/1000 of it: from the cycle's own
 *	completions; under policy bracket, for a submitter whose limit is
 *	its own (@budget 0), scaled by what the spread of its earlier
 *	cycles showed (IOPA_FEAT_TIMES)
 * @budget: the budget of the device the submitter shares with others
 *	(devs[0]): how many jobs of all its sharers may run at once; 0 if
 *	the submitter's limit is its own (IOPA_FEAT_SHARE)
 * @weight: the submitter's weight (IOPA_FEAT_SHARE)
 * @sharers: cgroups whose active submitters split @budget, 0 if none
 *	(IOPA_FEAT_SHARE)
 * @group_cycles: cycles the controller of @budget has run (modulo 2^32),
 *	as of its last split; 0 if none (IOPA_FEAT_SHARE)
 *
 * Its size is IOPA_STATE_SIZE_V1, and stays so (struct iopa_sub_info
 * embeds it).  A later ABI that reports more adds a larger struct that
 * begins with this one, and passes its size in the ioctl number
 * (_IOR(IOPA_IOC_MAGIC, 0x16, that struct)): the module answers any size
 * from IOPA_STATE_SIZE_V1 on, with what it knows and zeros after it, as
 * IOPA_IOC_LIST_SUBMITTERS does with entry_size.
 */
struct iopa_state {
	__u32	limit;
	__u32	mode;
	__u32	policy;
	__u32	flags;
	__u32	min;
	__u32	max;
	__u32	inflight;
	__u32	pending;
	__u32	cycle_ms;
	__u32	r_permille;
	__u64	cycles;
	__u64	changes;
	__u64	bytes_per_s;
	__u64	jobs_per_s;
	__u32	nr_devs;
	__u32	order;
	__u32	devs[IOPA_STATE_MAX_DEVS];
	__u32	wait_us;
	__u32	svc_us;
	__u32	completions;
	__u32	noise_permille;
	__u32	budget;
	__u32	weight;
	__u32	sharers;
	__u32	group_cycles;
};

/**
 * struct iopa_done - argument of IOPA_IOC_COMPLETE
 * @job_id: a job this worker holds
 * @res: the result handed to the submitter (e.g. 0 or -errno)
 * @flags: zero (no flags are defined yet)
 * @reserved: zero
 */
struct iopa_done {
	__u64	job_id;
	__s32	res;
	__u32	flags;
	__u64	reserved;
};

/**
 * struct iopa_lease - argument of IOPA_IOC_SET_LEASE and _GET_LEASE
 * @lease_ns: how long a job of the submitter may run (from its fetch)
 *	before it is taken back from its worker; 0: no lease
 * @flags: zero (no flags are defined yet)
 * @reserved0: zero
 * @reserved: zero
 *
 * A job taken back is requeued once, or cancelled (IOPA_JOB_F_NO_REQUEUE,
 * or it was requeued already), exactly as a job whose worker died; its
 * completion has IOPA_CQE_F_LEASE_EXPIRED.  The worker's COMPLETE of it
 * then fails with ETIME.
 */
struct iopa_lease {
	__u64	lease_ns;
	__u32	flags;
	__u32	reserved0;
	__u64	reserved[2];
};

/* The shortest and longest lease (0 is none). */
#define IOPA_LEASE_MIN_NS	1000000ULL		/* 1 ms */
#define IOPA_LEASE_MAX_NS	86400000000000ULL	/* a day */

/*
 * Set in struct iopa_work.job_id for a job's second run (after its
 * worker died or its lease ended), by modules with IOPA_FEAT_LEASE
 * (older ones hand a rerun out under the job's id); IOPA_JOB_ID() gives
 * the job's id, as the submitter knows it.  Job ids never have this bit
 * set.
 */
#define IOPA_JOB_ID_RERUN	_BITULL(63)
#define IOPA_JOB_ID(run_id)	((run_id) & ~IOPA_JOB_ID_RERUN)

/* Work flags (struct iopa_work.flags). */
/*
 * The job was requeued after the worker that held it before died (or
 * its lease ended: IOPA_FEAT_LEASE).
 */
#define IOPA_WORK_F_REQUEUED	0x1U
/*
 * @fd is the submitter's, lent with IOPA_JOB_F_BORROW: the worker uses
 * it while it holds the job, and does not close it (IOPA_FEAT_BORROW).
 */
#define IOPA_WORK_F_BORROWED	0x2U

/**
 * struct iopa_work - a job, as fetched by a worker
 * @job_id: id to pass back in struct iopa_done: it names this run of the
 *	job: the submitter's job id, with IOPA_JOB_ID_RERUN set when the
 *	job was requeued (IOPA_WORK_F_REQUEUED), so a late COMPLETE of the
 *	run taken back fails (ETIME) instead of ending the rerun
 * @user_data: the submitter's user_data
 * @offset: byte range start
 * @len: byte range length
 * @fd: a new O_CLOEXEC fd, in the fetching process, for the job's file;
 *	the worker owns it and closes it.  With IOPA_WORK_F_BORROWED, the
 *	submitter's fd for it instead, which the worker must not close
 * @flags: IOPA_WORK_F_*
 */
struct iopa_work {
	__u64	job_id;
	__u64	user_data;
	__u64	offset;
	__u64	len;
	__s32	fd;
	__u32	flags;
};

/* Fetch flags (struct iopa_fetch.flags). */
/* Return -EAGAIN instead of waiting when no job can be dispatched. */
#define IOPA_FETCH_F_NONBLOCK	0x1U
#define IOPA_FETCH_F_MASK	(IOPA_FETCH_F_NONBLOCK)

/**
 * struct iopa_fetch - argument of IOPA_IOC_FETCH / IOPA_IOC_COMPLETE_AND_FETCH
 * @timeout_ns: give up waiting after this long with -ETIMEDOUT; 0 waits
 *	without a time limit
 * @flags: IOPA_FETCH_F_*
 * @reserved0: zero
 * @done: IOPA_IOC_COMPLETE_AND_FETCH: the job to complete first;
 *	IOPA_IOC_FETCH: zero
 * @work: out: the job fetched
 * @reserved: zero
 */
struct iopa_fetch {
	__u64	timeout_ns;
	__u32	flags;
	__u32	reserved0;
	struct iopa_done done;
	struct iopa_work work;
	__u64	reserved[2];
};

/**
 * struct iopa_worker_files - argument of IOPA_IOC_WORKER_SET_FILES
 * @fds: user pointer to @nr fds of the calling process: files that jobs
 *	lent with IOPA_JOB_F_BORROW may name, which the worker keeps open
 * @nr: 0..IOPA_WORKER_MAX_FILES; 0 forgets the fds named before
 * @flags: zero (no flags are defined yet)
 * @reserved: zero
 *
 * The fds replace those named before.  A lent job whose file one of them
 * names in the worker's file table when it is handed over comes with
 * that fd (IOPA_WORK_F_BORROWED); each is looked up again then, so an fd
 * closed or reused since only costs the job a new fd.  Only for workers
 * created with IOPA_WORKER_F_BORROW (IOPA_FEAT_BORROW).
 */
struct iopa_worker_files {
	__u64	fds;
	__u32	nr;
	__u32	flags;
	__u64	reserved[2];
};

/**
 * struct iopa_batch - argument of IOPA_IOC_WORK_BATCH, and the buffer
 *	IOPA_URING_CMD_WORK_BATCH points at (IOPA_FEAT_BATCH)
 * @done: user pointer to @nr_done struct iopa_done: jobs this worker
 *	holds, completed first, in order
 * @work: user pointer to room for @nr_work struct iopa_work: then up to
 *	@nr_work jobs are fetched into it, the first ones of the array
 * @timeout_ns: as in struct iopa_fetch (IOPA_URING_CMD_WORK_BATCH: zero)
 * @nr_done: 0..IOPA_WORKER_MAX_JOBS
 * @nr_work: 0..IOPA_WORKER_MAX_JOBS; 0 completes only, and never waits
 *	(@nr_done and @nr_work are not both 0)
 * @flags: IOPA_FETCH_F_*
 * @completed: out: how many of the completions took effect, the first
 *	ones of @done.  A completion that fails stops the command, which
 *	returns its errno: it is done[@completed].  A command whose
 *	completions all took effect (not none) succeeds: if its fetch part
 *	fails, it returns 0 jobs
 * @reserved: zero
 *
 * One call completes a worker's jobs and fetches the next ones: it waits
 * (unless IOPA_FETCH_F_NONBLOCK) until at least one job can be
 * dispatched, then takes as many as are dispatchable at once, up to
 * @nr_work and as many as the worker may still hold
 * (IOPA_WORKER_MAX_JOBS, its parked io_uring fetches counted).  Each job
 * taken counts against its submitter's limit as it is taken, so a batch
 * never runs more of a submitter's jobs than its limit allows.
 *
 * Returns the number of jobs fetched (0 if @nr_work is 0, or if the fetch
 * part failed after completions), or a negative errno with nothing
 * fetched.  The jobs and completions are those of
 * IOPA_IOC_FETCH and IOPA_IOC_COMPLETE, each: fds installed (or borrowed)
 * and the exactly-once rules of a worker's death, for every job held.
 */
struct iopa_batch {
	__u64	done;
	__u64	work;
	__u64	timeout_ns;
	__u32	nr_done;
	__u32	nr_work;
	__u32	flags;
	__u32	completed;
	__u64	reserved[2];
};

/**
 * struct iopa_stats - answer of IOPA_IOC_GET_STATS
 * @submitted: jobs accepted by IOPA_IOC_SUBMIT
 * @dispatched: jobs handed to a worker (a requeued job counts again)
 * @completed: jobs ended with a worker's result
 * @cancelled: jobs ended without one (cancel, close, worker death)
 * @requeued: jobs put back in the queue after their worker died
 * @pending: jobs waiting to be dispatched
 * @inflight: jobs held by workers
 * @unreaped: ended jobs whose completion has not been reaped yet
 * @nr_submitters: live submitters (context fd only; 0 on a submitter fd)
 * @nr_workers: live workers (context fd only; 0 on a submitter fd)
 * @nr_waiting: workers waiting in fetch (context fd only)
 * @reserved0: zero
 * @reserved: zero
 *
 * submitted == completed + cancelled + pending + inflight at all times.
 * On a context fd the counts cover every submitter the context has had.
 */
struct iopa_stats {
	__u64	submitted;
	__u64	dispatched;
	__u64	completed;
	__u64	cancelled;
	__u64	requeued;
	__u64	pending;
	__u64	inflight;
	__u64	unreaped;
	__u32	nr_submitters;
	__u32	nr_workers;
	__u32	nr_waiting;
	__u32	reserved0;
	__u64	reserved[4];
};

/* Most entries one IOPA_IOC_LIST_SUBMITTERS fills. */
#define IOPA_LIST_MAX		4096

/* IOPA_IOC_LIST_SUBMITTERS: every context's, not only the caller's. */
#define IOPA_LIST_F_ALL		0x1U
#define IOPA_LIST_F_MASK	(IOPA_LIST_F_ALL)

/*
 * Buckets of the histograms of struct iopa_metrics.  Bucket i counts the
 * values v (microseconds, truncated) with 2^(i-1) < v <= 2^i (bucket 0:
 * v <= 1); the last one, every v above 2^(IOPA_HIST_BUCKETS - 2) (about
 * 18 min).
 */
#define IOPA_HIST_BUCKETS	32

/**
 * struct iopa_metrics - a submitter's cumulative counters (IOPA_FEAT_METRICS)
 * @cgroup_id: the cgroup (v2) of the process that created the submitter,
 *	as it was then: the inode number of its directory in the cgroup2
 *	file system on a 64-bit kernel (the unit among which a device's
 *	budget is split); 0 if unknown
 * @io_bytes: block I/O bytes charged to the submitter's jobs so far (as
 *	struct iopa_state.bytes_per_s counts them)
 * @failed: jobs completed by a worker with a negative result
 * @wait_us: sum of the queue waits (submit, or requeue, to fetch) of the
 *	jobs dispatched so far, microseconds
 * @svc_us: sum of the service times (fetch to complete) of the jobs
 *	completed so far, microseconds
 * @wait_hist: the queue waits, IOPA_HIST_BUCKETS buckets (one count per
 *	dispatch: the buckets add up to struct iopa_stats.dispatched)
 * @svc_hist: the service times (one count per completion by a worker)
 * @knee: the base limit the controller that sets the submitter's limit
 *	(its device group's while it shares a device) probes around: the
 *	best it has found, or, just after the limit was unpinned or the
 *	policy changed, the limit it resumes from until a probe judges it;
 *	0 while it starts up, is pinned, or has a policy without one (iopa)
 * @reserved0: zero
 * @turn_waits: times the submitter began to wait for its turn on a
 *	shared device (IOPA_FEAT_TURNS)
 * @turn_wait_us: microseconds it waited for its turns, the wait under
 *	way included (IOPA_FEAT_TURNS)
 * @reserved: zero
 */
struct iopa_metrics {
	__u64	cgroup_id;
	__u64	io_bytes;
	__u64	failed;
	__u64	wait_us;
	__u64	svc_us;
	__u64	wait_hist[IOPA_HIST_BUCKETS];
	__u64	svc_hist[IOPA_HIST_BUCKETS];
	__u32	knee;
	__u32	reserved0;
	__u64	turn_waits;
	__u64	turn_wait_us;
	__u64	reserved[2];
};

/**
 * struct iopa_sub_info - one submitter, as IOPA_IOC_LIST_SUBMITTERS sees it
 * @ctx_id: its context's number (from 1, unique while the module is loaded)
 * @sub_id: its number within the context (from 1)
 * @pid: the thread group id of the process that created it, in the
 *	caller's pid namespace; 0 if that process is not visible there or
 *	has exited (and been reaped: its number may be another's now)
 * @ctx_workers: live workers of the context
 * @ctx_waiting: workers of the context waiting in FETCH
 * @reserved0: zero
 * @comm: the creating process's command name at creation, NUL terminated
 * @state: what IOPA_IOC_GET_STATE on the submitter answers
 * @stats: what IOPA_IOC_GET_STATS on the submitter answers
 * @reserved: zero
 * @metrics: its cumulative counters (IOPA_FEAT_METRICS; entry_size
 *	IOPA_SUB_INFO_SIZE_V2 or more; zero from a module without the feature)
 */
struct iopa_sub_info {
	__u32	ctx_id;
	__u32	sub_id;
	__s32	pid;
	__u32	ctx_workers;
	__u32	ctx_waiting;
	__u32	reserved0;
	char	comm[16];
	struct iopa_state state;
	struct iopa_stats stats;
	__u64	reserved[4];
	struct iopa_metrics metrics;
};

/**
 * struct iopa_list - argument of IOPA_IOC_LIST_SUBMITTERS (context fd)
 * @subs: user pointer to room for @nr entries of @entry_size bytes
 * @nr: entries there is room for, 0..IOPA_LIST_MAX (0: only count)
 * @flags: IOPA_LIST_F_ALL: the open submitters of every context (needs
 *	CAP_SYS_ADMIN); without it, those of the caller's context
 * @total: out: the submitters there are (may be more than @nr)
 * @filled: out: entries written, min(@nr, @total), in order of context
 *	then submitter creation
 * @entry_size: in: sizeof(struct iopa_sub_info) as the caller knows it
 *	(IOPA_SUB_INFO_SIZE_V1..4096), the stride of @subs; out: the
 *	module's.  A later ABI may grow struct iopa_sub_info at its end:
 *	the module writes the first @entry_size bytes of each entry, and
 *	zeroes what it does not know of a larger one
 * @reserved0: zero
 * @reserved: zero
 */
struct iopa_list {
	__u64	subs;
	__u32	nr;
	__u32	flags;
	__u32	total;
	__u32	filled;
	__u32	entry_size;
	__u32	reserved0;
	__u64	reserved;
};

/* struct iopa_sub_admin.op */
#define IOPA_ADMIN_SET_LIMIT	1	/* IOPA_IOC_SET_LIMIT with @limit */
#define IOPA_ADMIN_SET_ADAPT	2	/* IOPA_IOC_SET_ADAPT with @adapt */

/**
 * struct iopa_sub_admin - argument of IOPA_IOC_SUB_ADMIN (context fd)
 * @ctx_id: the submitter's context, as IOPA_IOC_LIST_SUBMITTERS names it
 * @sub_id: the submitter within it
 * @op: IOPA_ADMIN_*
 * @reserved0: zero
 * @limit: IOPA_ADMIN_SET_LIMIT: what IOPA_IOC_SET_LIMIT takes (pin, or
 *	0 to adapt again); else zero
 * @adapt: IOPA_ADMIN_SET_ADAPT: what IOPA_IOC_SET_ADAPT takes (policy,
 *	bounds, weight); else zero
 * @reserved: zero
 *
 * Needs CAP_SYS_ADMIN (as IOPA_LIST_F_ALL): the command acts on any
 * process's submitter, of any context, as the submitter's own fd would;
 * its owner may change it again.  -ESRCH if there is no such open
 * submitter (it closed meanwhile).
 */
struct iopa_sub_admin {
	__u32	ctx_id;
	__u32	sub_id;
	__u32	op;
	__u32	reserved0;
	struct iopa_limit limit;
	struct iopa_adapt adapt;
	__u64	reserved[2];
};

/* sizeof(struct iopa_sub_info) in ABI version 1: without @metrics. */
#define IOPA_SUB_INFO_SIZE_V1	312
/* Size of struct iopa_state, the least IOPA_IOC_GET_STATE answers. */
#define IOPA_STATE_SIZE_V1	128
/* With @metrics (IOPA_FEAT_METRICS). */
#define IOPA_SUB_INFO_SIZE_V2	904

/**
 * struct iopa_uring_fetch - command payload of IOPA_URING_CMD_FETCH and
 * IOPA_URING_CMD_COMMIT_AND_FETCH (16 bytes: fits a normal SQE)
 * @work: user pointer to a struct iopa_work, filled in (with a new fd
 *	in the fetching task) when the command completes with res 0.
 *	COMMIT_AND_FETCH first completes the job named by its job_id
 * @res: COMMIT_AND_FETCH: the result of the job completed first;
 *	FETCH: zero
 * @flags: zero (no flags are defined yet)
 *
 * The buffer at @work is read and written while the command is under
 * way; it must stay valid until its CQE arrives.
 */
struct iopa_uring_fetch {
	__u64	work;
	__s32	res;
	__u32	flags;
};

/**
 * struct iopa_uring_batch - command payload of IOPA_URING_CMD_WORK_BATCH
 * (16 bytes: fits a normal SQE)
 * @batch: user pointer to a struct iopa_batch, read (and its completed
 *	written) when the command is issued; its work array must stay valid
 *	until the CQE arrives
 * @flags: zero (no flags are defined yet)
 * @reserved: zero
 */
struct iopa_uring_batch {
	__u64	batch;
	__u32	flags;
	__u32	reserved;
};

/**
 * struct iopa_uring_submit - command payload of IOPA_URING_CMD_SUBMIT_MANY
 * (16 bytes: fits a normal SQE)
 * @jobs: user pointer to an array of @nr struct iopa_job, read when the
 *	command is issued
 * @nr: 1..IOPA_BATCH_MAX
 * @flags: zero (no flags are defined yet)
 */
struct iopa_uring_submit {
	__u64	jobs;
	__u32	nr;
	__u32	flags;
};

/**
 * struct iopa_uring_reap - command payload of IOPA_URING_CMD_REAP
 * (16 bytes: fits a normal SQE)
 * @cqes: user pointer to room for @nr struct iopa_cqe; it must stay valid
 *	until the CQE arrives
 * @nr: 1..IOPA_BATCH_MAX
 * @min: 1..@nr: complete once this many completions can be reaped (or
 *	fewer, at least one, once none of the submitter's jobs is pending
 *	or running)
 * @flags: zero (no flags are defined yet)
 *
 * @min was a __u32 before @flags took its upper half: on a little-endian
 * machine the bytes of every valid command are the same.
 */
struct iopa_uring_reap {
	__u64	cqes;
	__u32	nr;
	__u16	min;
	__u16	flags;
};

/*
 * io_uring commands (IORING_OP_URING_CMD, sqe->cmd_op).  They share the
 * ioctls' semantics and errors; the CQE's res carries the result.
 *
 * IOPA_URING_CMD_SUBMIT, on a submitter fd, needs a ring set up with
 * IORING_SETUP_SQE128: the SQE's command area holds one struct iopa_job.
 * The CQE arrives when the job ends: res is the worker's result, or
 * -ECANCELED (cancelled; worker died).  Such jobs never show in
 * IOPA_IOC_REAP.  The ring closing, or its task's exec, cancels the job
 * if it is still pending (IORING_OP_ASYNC_CANCEL does not reach
 * uring_cmds); one thread's exit does not.  Such a job is never lent the
 * submitter's fd (IOPA_JOB_F_BORROW): its CQE may come at the cancel.
 *
 * IOPA_URING_CMD_FETCH and IOPA_URING_CMD_COMMIT_AND_FETCH, on a worker
 * fd, with struct iopa_uring_fetch: the CQE arrives (res 0) when a job
 * is dispatched to the worker and written to the work buffer, or with a
 * negative errno.  A fetch whose ring closes, or whose task execs,
 * completes with -ECANCELED and holds no job.
 *
 * IOPA_URING_CMD_WORK_BATCH, on a worker fd, with struct
 * iopa_uring_batch (IOPA_FEAT_BATCH): IOPA_IOC_WORK_BATCH.  The
 * completions take effect (and @completed is written) when it is
 * issued; the CQE arrives when jobs are fetched, res their number, or
 * with a negative errno.  While it waits for jobs it holds a place for
 * @nr_work of them (IOPA_WORKER_MAX_JOBS).
 *
 * IOPA_URING_CMD_SUBMIT_MANY, on a submitter fd, with struct
 * iopa_uring_submit (IOPA_FEAT_URING_BATCH; a normal SQE): IOPA_IOC_SUBMIT
 * of @nr jobs, without IOPA_SUBMIT_F_WAIT; the CQE's res is the number
 * accepted, or a negative errno.  The jobs' completions are queued for
 * reaping, as an ioctl SUBMIT's, not posted one CQE each.
 *
 * IOPA_URING_CMD_REAP, on a submitter fd, with struct iopa_uring_reap
 * (IOPA_FEAT_URING_BATCH): waits until @min completions can be reaped,
 * then copies up to @nr of them to @cqes, as IOPA_IOC_REAP; the CQE's res
 * is how many.  Completions of IOPA_URING_CMD_SUBMIT jobs never show here.
 * At most IOPA_SUB_MAX_REAPERS wait per submitter (-EBUSY).
 */
#define IOPA_SUB_MAX_REAPERS	16
#define IOPA_URING_CMD_SUBMIT	_IOW(IOPA_IOC_MAGIC, 0x30, struct iopa_job)
#define IOPA_URING_CMD_FETCH \
	_IOWR(IOPA_IOC_MAGIC, 0x31, struct iopa_uring_fetch)
#define IOPA_URING_CMD_COMMIT_AND_FETCH \
	_IOWR(IOPA_IOC_MAGIC, 0x32, struct iopa_uring_fetch)
#define IOPA_URING_CMD_WORK_BATCH \
	_IOWR(IOPA_IOC_MAGIC, 0x33, struct iopa_uring_batch)
#define IOPA_URING_CMD_SUBMIT_MANY \
	_IOW(IOPA_IOC_MAGIC, 0x34, struct iopa_uring_submit)
#define IOPA_URING_CMD_REAP \
	_IOWR(IOPA_IOC_MAGIC, 0x35, struct iopa_uring_reap)

/* Any iopa fd. */
#define IOPA_IOC_GET_FEATURES	_IOR(IOPA_IOC_MAGIC, 0x00, struct iopa_features)
/* Context fd; returns the new fd. */
#define IOPA_IOC_SUBMITTER_CREATE \
	_IOW(IOPA_IOC_MAGIC, 0x01, struct iopa_submitter_create)
#define IOPA_IOC_WORKER_CREATE	_IOW(IOPA_IOC_MAGIC, 0x02, struct iopa_worker_create)
/* Context or submitter fd. */
#define IOPA_IOC_GET_STATS	_IOR(IOPA_IOC_MAGIC, 0x03, struct iopa_stats)
/* Context fd: a snapshot of the open submitters; 0 or -errno. */
#define IOPA_IOC_LIST_SUBMITTERS \
	_IOWR(IOPA_IOC_MAGIC, 0x04, struct iopa_list)
/* Context fd, CAP_SYS_ADMIN: a command on any submitter; 0 or -errno. */
#define IOPA_IOC_SUB_ADMIN	_IOW(IOPA_IOC_MAGIC, 0x05, struct iopa_sub_admin)

/* Submitter fd. */
#define IOPA_IOC_SUBMIT		_IOW(IOPA_IOC_MAGIC, 0x10, struct iopa_submit)
#define IOPA_IOC_REAP		_IOW(IOPA_IOC_MAGIC, 0x11, struct iopa_reap)
#define IOPA_IOC_CANCEL		_IOW(IOPA_IOC_MAGIC, 0x12, struct iopa_cancel)
#define IOPA_IOC_SET_LIMIT	_IOW(IOPA_IOC_MAGIC, 0x13, struct iopa_limit)
#define IOPA_IOC_GET_LIMIT	_IOR(IOPA_IOC_MAGIC, 0x14, struct iopa_limit)
#define IOPA_IOC_SET_ADAPT	_IOW(IOPA_IOC_MAGIC, 0x15, struct iopa_adapt)
#define IOPA_IOC_GET_STATE	_IOR(IOPA_IOC_MAGIC, 0x16, struct iopa_state)
#define IOPA_IOC_SET_ORDER	_IOW(IOPA_IOC_MAGIC, 0x17, struct iopa_order)
#define IOPA_IOC_SET_LEASE	_IOW(IOPA_IOC_MAGIC, 0x18, struct iopa_lease)
#define IOPA_IOC_GET_LEASE	_IOR(IOPA_IOC_MAGIC, 0x19, struct iopa_lease)

/* Worker fd. */
#define IOPA_IOC_FETCH		_IOWR(IOPA_IOC_MAGIC, 0x20, struct iopa_fetch)
#define IOPA_IOC_COMPLETE	_IOW(IOPA_IOC_MAGIC, 0x21, struct iopa_done)
#define IOPA_IOC_COMPLETE_AND_FETCH \
	_IOWR(IOPA_IOC_MAGIC, 0x22, struct iopa_fetch)
#define IOPA_IOC_WORK_BATCH	_IOWR(IOPA_IOC_MAGIC, 0x23, struct iopa_batch)
#define IOPA_IOC_WORKER_SET_FILES \
	_IOW(IOPA_IOC_MAGIC, 0x24, struct iopa_worker_files)

#endif /* _UAPI_LINUX_IOPA_H */
