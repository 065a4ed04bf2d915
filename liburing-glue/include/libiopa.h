/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * libiopa: user-space library for /dev/iopa.
 *
 * Three layers, each usable on its own:
 *
 *  - ioctl wrappers, one per IOPA_IOC_* command: iopa_open(),
 *    iopa_submit(), iopa_fetch()...  They return a value >= 0 on success
 *    and -errno on failure; errno itself is left as the system call left
 *    it.
 *  - io_uring SQE helpers, static inline like liburing's
 *    io_uring_prep_*(): iopa_prep_submit(), iopa_prep_fetch(),
 *    iopa_prep_commit_and_fetch() fill an SQE for IORING_OP_URING_CMD.
 *    liburing 2.3 (Debian 12) has no io_uring_prep_cmd(); these do not
 *    need it.
 *  - a worker pool modelled on the IOPA paper's four calls (init, create
 *    threads with a user function and argument, wait, close):
 *    iopa_pool_init(), iopa_pool_create_threads(), iopa_pool_wait(),
 *    iopa_pool_close(), plus iopa_pool_submit() to feed it.  Its threads
 *    are iopa workers: the kernel parks them in FETCH and wakes them as
 *    its in-flight limit allows; the pool adds a thread when jobs wait
 *    and every thread is busy, and ends threads that stay idle.  Where
 *    there is no /dev/iopa (or with IOPA_POOL_F_INPROC) the same pool,
 *    and the same adaptive limit, run in the process.
 *
 * See libiopa(7) and one man page per function.  The ABI itself is
 * <linux/iopa.h>, described in the kernel's Documentation/iopa.rst.
 */
#ifndef LIBIOPA_H
#define LIBIOPA_H

/*
 * <liburing.h> first: it defines _XOPEN_SOURCE for glibc to declare
 * sigset_t under strict ISO C (-std=c99, c11, c17), which only works if
 * no libc header came before it.  A program built so that includes libc
 * headers before this one defines _XOPEN_SOURCE (or _GNU_SOURCE) itself,
 * as with <liburing.h>.
 */
#include <liburing.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <linux/iopa.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LIBIOPA_VERSION_MAJOR	1
#define LIBIOPA_VERSION_MINOR	7

/* The device iopa_open() opens. */
#define LIBIOPA_DEV_PATH	"/dev/" IOPA_DEV_NAME

/* ---- ioctl wrappers ------------------------------------------------------ */

int iopa_open(void);
int iopa_get_features(int fd, struct iopa_features *features);
int iopa_submitter_create(int ctx_fd, unsigned int limit, unsigned int flags);
int iopa_worker_create(int ctx_fd, unsigned int flags);
int iopa_get_stats(int fd, struct iopa_stats *stats);

int iopa_submit(int sub_fd, const struct iopa_job *jobs, unsigned int nr,
		unsigned int flags);
int iopa_reap(int sub_fd, struct iopa_cqe *cqes, unsigned int nr,
	      unsigned int flags, uint64_t timeout_ns);
int iopa_cancel(int sub_fd, uint64_t user_data, unsigned int flags);
int iopa_set_limit(int sub_fd, unsigned int limit);
int iopa_set_order(int sub_fd, unsigned int order);
int iopa_set_lease(int sub_fd, uint64_t lease_ns);
int iopa_get_lease(int sub_fd, uint64_t *lease_ns);
int iopa_list_submitters(int ctx_fd, struct iopa_sub_info *subs,
			 unsigned int nr, unsigned int flags,
			 unsigned int *total);
int iopa_get_limit(int sub_fd, unsigned int *flags);
int iopa_set_adapt(int sub_fd, unsigned int policy, unsigned int min,
		   unsigned int max);
int iopa_set_adapt_weight(int sub_fd, unsigned int policy, unsigned int min,
			  unsigned int max, unsigned int weight);
int iopa_get_state(int sub_fd, struct iopa_state *state);
/* libiopa 1.6: root's command on any submitter (IOPA_FEAT_ADMIN). */
int iopa_sub_admin(int ctx_fd, const struct iopa_sub_admin *admin);

int iopa_fetch(int worker_fd, struct iopa_work *work, unsigned int flags,
	       uint64_t timeout_ns);
int iopa_complete(int worker_fd, uint64_t job_id, int res);
int iopa_complete_and_fetch(int worker_fd, uint64_t job_id, int res,
			    struct iopa_work *work, unsigned int flags,
			    uint64_t timeout_ns);
int iopa_worker_set_files(int worker_fd, const int *fds, unsigned int nr);
int iopa_work_batch(int worker_fd, const struct iopa_done *done,
		    unsigned int nr_done, struct iopa_work *work,
		    unsigned int nr_work, unsigned int flags,
		    uint64_t timeout_ns, unsigned int *completed);

/* ---- io_uring SQE helpers ------------------------------------------------ */

/*
 * Where the command payload lives: sqe->cmd, 16 bytes in a 64-byte SQE,
 * 80 bytes in a ring set up with IORING_SETUP_SQE128.
 */
#define LIBIOPA_SQE_CMD_OFFSET	48
#define LIBIOPA_SQE_CMD_LEN	16
#define LIBIOPA_SQE128_CMD_LEN	80

static inline void iopa__prep_uring_cmd(struct io_uring_sqe *sqe, int fd,
					unsigned int cmd_op)
{
	/* The 64 bytes every SQE has; user_data too: set it afterwards. */
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = cmd_op;
}

/*
 * IOPA_URING_CMD_SUBMIT: one job for the submitter @sub_fd.  The ring
 * MUST have been set up with IORING_SETUP_SQE128: the job goes into the
 * 80-byte command area, past the first 64 bytes of the SQE.  The job is
 * copied; @job need not outlive the call.  The CQE (res: the worker's
 * result or -errno) arrives when the job ends.
 */
static inline void iopa_prep_submit(struct io_uring_sqe *sqe, int sub_fd,
				    const struct iopa_job *job)
{
	unsigned char *cmd = (unsigned char *)sqe + LIBIOPA_SQE_CMD_OFFSET;

	iopa__prep_uring_cmd(sqe, sub_fd, IOPA_URING_CMD_SUBMIT);
	memcpy(cmd, job, sizeof(*job));
	memset(cmd + sizeof(*job), 0, LIBIOPA_SQE128_CMD_LEN - sizeof(*job));
}

static inline void iopa__prep_fetch_cmd(struct io_uring_sqe *sqe,
					int worker_fd, unsigned int cmd_op,
					struct iopa_work *work, int res)
{
	struct iopa_uring_fetch f;

	memset(&f, 0, sizeof(f));
	f.work = (uint64_t)(uintptr_t)work;
	f.res = res;
	iopa__prep_uring_cmd(sqe, worker_fd, cmd_op);
	memcpy((unsigned char *)sqe + LIBIOPA_SQE_CMD_OFFSET, &f, sizeof(f));
}

/*
 * IOPA_URING_CMD_FETCH on the worker @worker_fd: the CQE arrives (res 0)
 * once a job was written to @work, which must stay valid until then.
 * Fits a 64-byte SQE.
 */
static inline void iopa_prep_fetch(struct io_uring_sqe *sqe, int worker_fd,
				   struct iopa_work *work)
{
	iopa__prep_fetch_cmd(sqe, worker_fd, IOPA_URING_CMD_FETCH, work, 0);
}

/*
 * IOPA_URING_CMD_COMMIT_AND_FETCH: complete the job whose id is in
 * @work->job_id with @res, then fetch the next job into @work.
 */
static inline void iopa_prep_commit_and_fetch(struct io_uring_sqe *sqe,
					      int worker_fd,
					      struct iopa_work *work, int res)
{
	iopa__prep_fetch_cmd(sqe, worker_fd, IOPA_URING_CMD_COMMIT_AND_FETCH,
			     work, res);
}

/*
 * IOPA_URING_CMD_WORK_BATCH (IOPA_FEAT_BATCH) on the worker @worker_fd:
 * complete @batch->nr_done jobs of @batch->done, then take up to
 * @batch->nr_work jobs into @batch->work; the CQE's res is how many.
 * @batch is read (and its completed written) when the command is
 * issued; its work array must stay valid until the CQE.  Fits a 64-byte
 * SQE.
 */
static inline void iopa_prep_work_batch(struct io_uring_sqe *sqe,
					int worker_fd, struct iopa_batch *batch)
{
	struct iopa_uring_batch b;

	memset(&b, 0, sizeof(b));
	b.batch = (uint64_t)(uintptr_t)batch;
	iopa__prep_uring_cmd(sqe, worker_fd, IOPA_URING_CMD_WORK_BATCH);
	memcpy((unsigned char *)sqe + LIBIOPA_SQE_CMD_OFFSET, &b, sizeof(b));
}

/*
 * IOPA_URING_CMD_SUBMIT_MANY (IOPA_FEAT_URING_BATCH): @nr jobs of @jobs
 * (read when the command is issued) for the submitter @sub_fd; the CQE's
 * res is how many were accepted.  Their completions are reaped, not
 * posted one CQE each.  Fits a 64-byte SQE.
 */
static inline void iopa_prep_submit_many(struct io_uring_sqe *sqe,
					 int sub_fd,
					 const struct iopa_job *jobs,
					 unsigned int nr)
{
	struct iopa_uring_submit s;

	memset(&s, 0, sizeof(s));
	s.jobs = (uint64_t)(uintptr_t)jobs;
	s.nr = nr;
	iopa__prep_uring_cmd(sqe, sub_fd, IOPA_URING_CMD_SUBMIT_MANY);
	memcpy((unsigned char *)sqe + LIBIOPA_SQE_CMD_OFFSET, &s, sizeof(s));
}

/*
 * IOPA_URING_CMD_REAP (IOPA_FEAT_URING_BATCH): once @min completions of
 * the submitter @sub_fd can be reaped (fewer once none of its jobs is
 * pending or running), copy up to @nr to @cqes, which must stay valid
 * until the CQE; its res is how many.  Fits a 64-byte SQE.
 */
static inline void iopa_prep_reap(struct io_uring_sqe *sqe, int sub_fd,
				  struct iopa_cqe *cqes, unsigned int nr,
				  unsigned int min)
{
	struct iopa_uring_reap r;

	memset(&r, 0, sizeof(r));
	r.cqes = (uint64_t)(uintptr_t)cqes;
	r.nr = nr;
	r.min = min;
	iopa__prep_uring_cmd(sqe, sub_fd, IOPA_URING_CMD_REAP);
	memcpy((unsigned char *)sqe + LIBIOPA_SQE_CMD_OFFSET, &r, sizeof(r));
}

/* ---- the worker pool ----------------------------------------------------- */

struct iopa_pool;

/*
 * The user function: runs in a pool thread for each job; returns the
 * job's result (0 or a positive count for success, -errno for failure),
 * handed to the submitter as the completion's res.  work->fd is the
 * job's file; the pool closes it after the function returns (unless it
 * is the application's own, lent: IOPA_POOL_F_BORROW).
 */
typedef int (*iopa_pool_fn)(void *arg, const struct iopa_work *work);

/* Called for each completion the pool reaps, in the thread reaping it. */
typedef void (*iopa_pool_done_fn)(void *arg, const struct iopa_cqe *cqe);

/*
 * iopa_pool_opts.flags: the pool's threads take lent fds: a job the
 * application submits with IOPA_JOB_F_BORROW (keeping its fd open,
 * naming the job's file, until the job's completion is reaped) reaches
 * the user function with that fd itself instead of a new one, and the
 * pool does not close it (IOPA_FEAT_BORROW; on a module without it the
 * flag is ignored and every job gets its own fd).
 */
#define IOPA_POOL_F_BORROW	0x1U
/*
 * iopa_pool_opts.flags: run the pool in the process, without the module,
 * even where /dev/iopa exists (the pool does so anyway when it opens the
 * device itself, ctx_fd < 0, and there is none): the jobs are queued,
 * limited by the same adaptive controller and completed in the process.
 * See libiopa(7), "Without the module".  Not with a ctx_fd (-EINVAL).
 */
#define IOPA_POOL_F_INPROC	0x2U
/*
 * iopa_pool_opts.flags (libiopa 1.7): the module or nothing.  Without
 * it, a pool that opens the device itself (ctx_fd < 0) and cannot use
 * it runs in the process, whatever the reason: no device (ENOENT,
 * ENODEV, ENXIO), no permission (EACCES, EPERM: a user not yet in group
 * iopa), or a module of an ABI it does not know (EPROTONOSUPPORT,
 * ENOTTY); iopa_pool_info.module_err says why.  With it, iopa_pool_init()
 * returns that error instead.  Not with IOPA_POOL_F_INPROC (-EINVAL).
 */
#define IOPA_POOL_F_MODULE	0x4U
#define IOPA_POOL_F_MASK	(IOPA_POOL_F_BORROW | IOPA_POOL_F_INPROC | \
				 IOPA_POOL_F_MODULE)

/**
 * struct iopa_pool_opts - settings of iopa_pool_init(); zero = default
 * @min_threads: threads kept when idle (default 0: an idle pool ends
 *	them all; iopa_pool_create_threads() starts max(min_threads, 1))
 * @max_threads: most threads at once (default: sysfs max_limit, else
 *	the module's default max_limit, 256, or @limit if larger; plus one)
 * @idle_ms: a thread idle this long ends, down to @min_threads
 *	(default 2000)
 * @limit: the pool's submitter's in-flight limit: 0 lets the kernel
 *	adapt it, 1..IOPA_LIMIT_MAX pins it
 * @flags: IOPA_POOL_F_*
 * @reserved0: zero
 * @done: called with each completion the pool reaps (optional)
 * @done_arg: first argument of @done
 * @reserved: zero
 */
struct iopa_pool_opts {
	unsigned int min_threads;
	unsigned int max_threads;
	unsigned int idle_ms;
	unsigned int limit;
	unsigned int flags;
	unsigned int reserved0;
	iopa_pool_done_fn done;
	void *done_arg;
	uint64_t reserved[4];
};

/**
 * struct iopa_pool_info - answer of iopa_pool_get_info()
 * @threads: live pool threads (each with its worker fd)
 * @idle: live threads not running the user function
 * @peak_threads: most live threads at once so far
 * @min_threads: the minimum in force
 * @max_threads: the maximum in force
 * @idle_ms: the idle timeout in force
 * @threads_started: threads started so far
 * @threads_exited: threads ended so far (idle timeout, close, error)
 * @submitted: jobs accepted by iopa_pool_submit()
 * @completed: their completions reaped so far
 * @failed: completions reaped with res < 0 (cancelled ones included)
 * @outstanding: @submitted - @completed
 * @flags: IOPA_POOL_INFO_F_*
 * @limit: how many of the pool's jobs may run at once now (0: unknown)
 * @module_err: (libiopa 1.7) why a pool that opened the device itself
 *	runs in the process: the positive errno of opening or using
 *	/dev/iopa (EACCES: not in its group; ENOENT: no module); 0 if it
 *	uses the module or was asked to run in the process
 * @reserved0: zero
 * @reserved: zero
 */
struct iopa_pool_info {
	unsigned int threads;
	unsigned int idle;
	unsigned int peak_threads;
	unsigned int min_threads;
	unsigned int max_threads;
	unsigned int idle_ms;
	uint64_t threads_started;
	uint64_t threads_exited;
	uint64_t submitted;
	uint64_t completed;
	uint64_t failed;
	uint64_t outstanding;
	unsigned int flags;
	unsigned int limit;
	unsigned int module_err;
	unsigned int reserved0;
	uint64_t reserved[2];
};

/* iopa_pool_info.flags: the pool runs in the process, without the module. */
#define IOPA_POOL_INFO_F_INPROC	0x1U

int iopa_pool_init(struct iopa_pool **pool, int ctx_fd,
		   const struct iopa_pool_opts *opts);
int iopa_pool_create_threads(struct iopa_pool *pool, iopa_pool_fn fn,
			     void *arg);
int iopa_pool_submit(struct iopa_pool *pool, const struct iopa_job *jobs,
		     unsigned int nr);
int iopa_pool_wait(struct iopa_pool *pool);
int iopa_pool_close(struct iopa_pool *pool);
int iopa_pool_ctx_fd(const struct iopa_pool *pool);
int iopa_pool_submitter_fd(const struct iopa_pool *pool);
int iopa_pool_get_info(struct iopa_pool *pool, struct iopa_pool_info *info);
/*
 * libiopa 1.7: the file descriptors the process may still open (the soft
 * RLIMIT_NOFILE less those open now), or -1 for no bound worth keeping
 * (above 2^20, or unknown).  A pool holds at most half of them.
 */
long iopa_fds_left(void);

#ifdef __cplusplus
}
#endif

#endif /* LIBIOPA_H */
