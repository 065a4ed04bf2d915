// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * libiopa: the worker pool without the module.
 *
 * When /dev/iopa is absent (or the application passes IOPA_POOL_F_INPROC)
 * the pool of src/pool.c takes its jobs from here instead of from a
 * submitter and worker fds: the same threads, the same callbacks, the
 * same growth and shrinking, and the same admission limit, adjusted by
 * the module's own controller (kernel/ctl.c, built into the library: it
 * depends on no kernel facility).  What the module measures, this file
 * measures in the process:
 *
 * - Bytes.  A job's bytes are those its pool thread was charged for block
 *   I/O while it ran the user function: read_bytes + write_bytes of
 *   /proc/thread-self/io, the counters the module reads in the kernel
 *   (task I/O accounting).  One read per job: the value read when a job
 *   ends is the mark of the thread's next job.  Without the file (no
 *   CONFIG_TASK_IO_ACCOUNTING, no /proc) every job counts 0 bytes and the
 *   throughput is in jobs per second, as for jobs that do no I/O.
 * - CPU.  Idle + iowait time of all CPUs from /proc/stat, for the
 *   controller's CPU guard.
 * - Device.  A job whose file lies on a rotational disk (sysfs
 *   queue/rotational of the file's device) starts the limit at 1, as the
 *   module does; but INPROC_ROT_HITS jobs in a row that read nothing
 *   from the disk (page-cache hits: a tree hashed again) before the
 *   first cycle's end lift it as on any disk (8, or the cached knee,
 *   iopa_ctl_lift_start()).  One job at a time guards a disk against seeks between
 *   streams; hits make none, and a run of a tenth of a second would
 *   spend its whole first cycle at 1.
 *
 * Cycles end where the module's delayed work would end them: on the
 * completion that gives the controller enough evidence (no sooner than
 * INPROC_MIN_CYCLE_MS, shorter than the module's), or once the
 * cycle's length has passed, noticed by the next completion, the next
 * tick of a waiting pool thread or of iopa_pool_wait().  A pool with
 * nothing queued or running has no cycle under way; the next job starts
 * one.
 *
 * What differs from the module (libiopa(7), "Without the module"): the
 * limit is this process's alone (nothing shares a device with other
 * processes' pools, no sysfs tunables: the controller's defaults);
 * a job's fd is dup()ed at submission (it counts against RLIMIT_NOFILE
 * until the job ends; at most fd_cap at once, the pool's share) and any
 * open fd is accepted; jobs run in
 * submission order; at most INPROC_MAX_JOBS are outstanding.
 *
 * Locking: q->lock guards everything below it in struct inproc; the
 * controller is called under it, as the module calls it under its
 * context lock.  No system call is made under it: the fds' dup()s, sysfs
 * and /proc/stat are read with it dropped (a cycle's end drops it for
 * /proc/stat, q->ending keeping out a second end meanwhile).
 */
#include "pool.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"

/*
 * The shortest cycle (the module's is 100 ms, IOPA_CTL_MIN_CYCLE_MS).
 * Each job's bytes are its own thread's, read as it ends, not a device's
 * counters sampled; and a run here is often a tool's on a tree, well
 * under a second, where four 100 ms cycles a step (a transient and a
 * measurement each, for the start and its doubling) are the whole run.
 * iopa-sum -p on 20,000 cold 4 KiB files of a cloud volume (knee 32-64):
 * 340 ms at 100 ms, 236-279 ms at 25 (-l 64: 225-248 ms).  The evidence
 * rule (max(8, limit) completions over mean service times) still holds.
 */
#define INPROC_MIN_CYCLE_MS	25
/* The CPUs' time a cycle needs for the CPU guard's verdict: 20 ticks. */
#define INPROC_CPU_MIN_MS	200
/*
 * Successful jobs in a row that read nothing from a rotational disk (of
 * threads whose I/O counter works) that undo its start of 1: the least
 * evidence a cycle of the controller takes (IOPA_CTL_BR_MIN_JOBS).
 */
#define INPROC_ROT_HITS		8

struct inproc_job {
	struct iopa_work w;
};

/* What the cycle under way has seen (the module's struct iopa_adapt_cycle). */
struct inproc_cycle {
	int64_t start_ns;
	uint64_t idle_ms;	/* CPUs' idle time at the start; UINT64_MAX: unknown */
	uint32_t len_ms;	/* longest the controller wants it to last */
	uint64_t bytes;
	uint64_t jobs;
	uint64_t svc_us;
	uint64_t svc_sq;
	bool demand;		/* jobs waited on the limit */
};

struct inproc {
	pthread_mutex_t lock;
	pthread_cond_t work_cv;		/* a job may be taken, or stop */
	pthread_cond_t done_cv;		/* a completion is there */
	bool borrow;			/* lent fds reach the threads as is */
	unsigned int fd_cap;		/* most job fds of ours held at once */
	atomic_uint nr_fds;		/* job fds of ours held (no lock) */
	bool stop;
	bool dev_seen;			/* the first job's device was looked at */
	char dev_id[IOPA_KNEES_ID_LEN];	/* its identity (knees.c), or "" */
	bool rot_start;			/* started at 1 for a rotational disk,
					 * and may yet undo it (hits) */
	unsigned int rot_hits;		/* jobs in a row that read nothing */

	struct inproc_job *pend;	/* ring of INPROC_MAX_JOBS */
	unsigned int pend_head;
	unsigned int nr_pend;
	struct iopa_cqe *cq;		/* ring of INPROC_MAX_JOBS */
	unsigned int cq_head;
	unsigned int nr_cq;
	unsigned int outstanding;	/* queued + running + unreaped */
	unsigned int running;
	unsigned int waiting;		/* threads waiting for a job */
	uint64_t next_id;

	struct iopa_ctl ctl;
	struct iopa_ctl_params params;
	unsigned int limit;		/* iopa_ctl_limit(&ctl), applied */
	bool idle;			/* no cycle under way */
	bool ending;			/* a thread ends the cycle, unlocked */
	bool tput_bytes;		/* the throughput unit is bytes/s */
	bool unit_known;
	struct inproc_cycle cyc;
};

static int64_t inproc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* @timeout_ns from now, for pthread_cond_timedwait() on our conditions. */
static void inproc_deadline(uint64_t timeout_ns, struct timespec *ts)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += (time_t)(timeout_ns / 1000000000ULL);
	ts->tv_nsec += (long)(timeout_ns % 1000000000ULL);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

/* Read a small /proc or /sys file into @buf; returns its length or -1. */
static ssize_t inproc_read_small(int dirfd_or_fd, const char *path, char *buf,
				 size_t size)
{
	ssize_t n;
	int fd = dirfd_or_fd;

	if (path) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
	}
	n = pread(fd, buf, size - 1, 0);
	if (path)
		close(fd);
	if (n < 0)
		return -1;
	buf[n] = 0;
	return n;
}

/* Idle + iowait time of all CPUs, ms; UINT64_MAX if /proc/stat says nothing. */
static uint64_t inproc_cpu_idle_ms(void)
{
	unsigned long long f[5];
	long hz = sysconf(_SC_CLK_TCK);
	char buf[256];

	if (hz <= 0 || inproc_read_small(-1, "/proc/stat", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "cpu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2],
		   &f[3], &f[4]) != 5)
		return UINT64_MAX;
	return (uint64_t)(f[3] + f[4]) * 1000 / (uint64_t)hz;
}

/* The block I/O bytes the calling thread has been charged so far. */
static uint64_t inproc_io_bytes(struct inproc_worker *iw)
{
	unsigned long long rb = 0, wb = 0;
	char buf[512], *s;

	if (iw->io_fd < 0)
		return 0;
	if (inproc_read_small(iw->io_fd, NULL, buf, sizeof(buf)) < 0) {
		close(iw->io_fd);
		iw->io_fd = -1;
		return 0;
	}
	s = strstr(buf, "\nread_bytes:");
	if (s)
		rb = strtoull(s + 12, NULL, 10);
	s = strstr(buf, "\nwrite_bytes:");
	if (s)
		wb = strtoull(s + 13, NULL, 10);
	return rb + wb;
}

/*
 * Is @fd's file on a rotational disk (sysfs)?  Without the queue's lock.
 * The first job's is: start at one job, as the module does
 * (kernel/limit.c, iopa_limit_note_file()).
 */
static bool inproc_rotational(int fd)
{
	char path[96], buf[8];
	unsigned int maj, min;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	maj = major(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	min = minor(S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev);
	snprintf(path, sizeof(path), "/sys/dev/block/%u:%u/queue/rotational",
		 maj, min);
	if (inproc_read_small(-1, path, buf, sizeof(buf)) < 0) {
		/* A partition: its disk's queue. */
		snprintf(path, sizeof(path),
			 "/sys/dev/block/%u:%u/../queue/rotational", maj, min);
		if (inproc_read_small(-1, path, buf, sizeof(buf)) < 0)
			return false;
	}
	return buf[0] == '1';
}

/*
 * The first job's device was looked at: its cached knee is where the
 * limit starts (knees.c); else a rotational disk starts at 1.
 */
static void inproc_note_device_locked(struct inproc *q, bool rotational,
				      const char *id, unsigned int knee,
				      unsigned int job_kb)
{
	bool changed;

	q->dev_seen = true;
	snprintf(q->dev_id, sizeof(q->dev_id), "%s", id);
	/* As kernel/limit.c: the rotational start first, then the knee. */
	changed = rotational && iopa_ctl_set_start(&q->ctl, &q->params, 1);
	q->rot_start = changed;
	if (knee)
		changed |= iopa_ctl_set_known(&q->ctl, &q->params, knee,
					      job_kb);
	if (changed)
		q->limit = iopa_ctl_limit(&q->ctl);
}

/*
 * A job succeeded since a rotational start, none measured yet: after
 * INPROC_ROT_HITS in a row that read nothing from the disk (page-cache
 * hits), the start-up begins as on a disk that is not rotational (at 8,
 * or at the cached knee, unprobed: iopa_ctl_lift_start()): jobs that
 * wait get the room at once.  A job that read the disk, a thread without an I/O
 * counter (0 bytes would prove nothing), or a cycle measured first (the
 * controller's own rule for hits then decides) keeps the start.
 */
static void inproc_rot_done_locked(struct inproc *q,
				   const struct inproc_worker *iw,
				   uint64_t bytes)
{
	unsigned int old = q->limit;

	if (bytes || iw->io_fd < 0) {
		q->rot_start = false;
		return;
	}
	if (++q->rot_hits < INPROC_ROT_HITS)
		return;
	q->rot_start = false;
	iopa_ctl_lift_start(&q->ctl, &q->params);
	q->limit = iopa_ctl_limit(&q->ctl);
	if (q->limit > old)
		pthread_cond_broadcast(&q->work_cv);
}

/* Jobs wait while the limit is reached: the cycle says something. */
static void inproc_note_demand_locked(struct inproc *q)
{
	if (q->nr_pend && q->running >= q->limit)
		q->cyc.demand = true;
}

static void inproc_cycle_begin_locked(struct inproc *q, int64_t now,
				      uint64_t idle_ms)
{
	memset(&q->cyc, 0, sizeof(q->cyc));
	q->cyc.start_ns = now;
	q->cyc.idle_ms = idle_ms;
	q->cyc.len_ms = iopa_ctl_next_cycle_ms(&q->ctl, &q->params);
	q->idle = false;
	inproc_note_demand_locked(q);
}

/*
 * The module's iopa_limit_work_fn(): feed the sample, apply the limit.
 * @idle: the CPUs' idle time now (read without the lock), or UINT64_MAX.
 */
static void inproc_cycle_end_locked(struct inproc *q, int64_t now,
				    uint64_t idle)
{
	struct iopa_ctl_sample s;
	struct inproc_cycle *cyc = &q->cyc;
	uint64_t elapsed_ms, idle_ms;
	unsigned int old = q->limit;
	uint32_t r = 0;

	memset(&s, 0, sizeof(s));
	q->rot_start = false;	/* measured: the controller decides (hits) */
	elapsed_ms = now > cyc->start_ns ?
		     (uint64_t)(now - cyc->start_ns) / 1000000 : 0;
	if (!elapsed_ms)
		elapsed_ms = 1;
	idle_ms = idle != UINT64_MAX && cyc->idle_ms != UINT64_MAX &&
		  idle >= cyc->idle_ms ? idle - cyc->idle_ms : UINT64_MAX;

	/* Bytes/s while the jobs do block I/O, else jobs/s (x 1000). */
	if (cyc->jobs && !!cyc->bytes != q->tput_bytes) {
		s.cached = q->unit_known;
		q->tput_bytes = !!cyc->bytes;
	}
	if (cyc->jobs)
		q->unit_known = true;
	s.tput = q->tput_bytes ? cyc->bytes * 1000 / elapsed_ms :
		 cyc->jobs * 1000000 / elapsed_ms;
	s.elapsed_ms = elapsed_ms > UINT32_MAX ? UINT32_MAX : elapsed_ms;
	s.demand = cyc->demand || (q->nr_pend && q->running >= q->limit);
	/*
	 * /proc/stat counts in ticks (10 ms): under INPROC_CPU_MIN_MS of
	 * the CPUs' time (a 25 ms cycle on 2 CPUs is 5 ticks) "less than
	 * 10% idle" would be a coin toss; no verdict (not saturated), the
	 * throughput judges alone.
	 */
	s.cpu_saturated = idle_ms != UINT64_MAX &&
			  elapsed_ms * q->params.ncpus >= INPROC_CPU_MIN_MS &&
			  idle_ms * 10 < elapsed_ms * q->params.ncpus;
	s.block_io = q->tput_bytes;
	s.completions = cyc->jobs > UINT32_MAX ? UINT32_MAX : cyc->jobs;
	s.svc_us = cyc->svc_us;
	s.svc_sq = cyc->svc_sq;

	iopa_ctl_update(&q->ctl, &q->params, &s, &r);
	q->limit = iopa_ctl_limit(&q->ctl);
	if (q->limit > old)
		pthread_cond_broadcast(&q->work_cv);
	if (!cyc->jobs && !q->nr_pend && !q->running)
		q->idle = true;		/* nothing to measure: no cycle */
	else
		inproc_cycle_begin_locked(q, now, idle);
}

/*
 * End the cycle if it has lasted long enough or holds enough evidence.
 * The CPUs' idle time is read with q->lock dropped: true if it was, and
 * the caller must look again at what it waits for.
 */
static bool inproc_cycle_check_locked(struct inproc *q, int64_t now)
{
	uint64_t ms, idle;

	if (q->idle || q->ending)
		return false;
	ms = now > q->cyc.start_ns ? (uint64_t)(now - q->cyc.start_ns) / 1000000 : 0;
	if (ms < q->cyc.len_ms &&
	    !iopa_ctl_cycle_enough(&q->ctl, ms > UINT32_MAX ? UINT32_MAX : ms,
				   q->cyc.jobs > UINT32_MAX ? UINT32_MAX :
				   (uint32_t)q->cyc.jobs, q->cyc.svc_us))
		return false;
	/* No other end, nor a new cycle (q->idle stays false), meanwhile. */
	q->ending = true;
	pthread_mutex_unlock(&q->lock);
	idle = inproc_cpu_idle_ms();
	pthread_mutex_lock(&q->lock);
	q->ending = false;
	/* The jobs that ended meanwhile are the cycle's: its end is now. */
	inproc_cycle_end_locked(q, inproc_now_ns(), idle);
	return true;
}

/**
 * iopa_inproc_create() - a job source without the module
 * @q: set to the new source
 * @fixed_limit: 0 to adapt the limit, else the limit (1..IOPA_LIMIT_MAX)
 * @max_limit: the most the adaptive limit may reach (the pool's threads)
 * @borrow: jobs with IOPA_JOB_F_BORROW reach the threads with the
 *	application's own fd (IOPA_POOL_F_BORROW)
 * @fd_cap: the most fds of jobs (dup()s) held at once, at least 1
 *
 * Return: 0, or -ENOMEM.
 */
int iopa_inproc_create(struct inproc **q, unsigned int fixed_limit,
		  unsigned int max_limit, bool borrow, unsigned int fd_cap)
{
	pthread_condattr_t ca;
	struct inproc *n;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->pend = calloc(INPROC_MAX_JOBS, sizeof(*n->pend));
	n->cq = calloc(INPROC_MAX_JOBS, sizeof(*n->cq));
	if (!n->pend || !n->cq) {
		free(n->pend);
		free(n->cq);
		free(n);
		return -ENOMEM;
	}
	/* Waits on the monotonic clock: a clock step changes no timeout. */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->work_cv, &ca);
	pthread_cond_init(&n->done_cv, &ca);
	pthread_condattr_destroy(&ca);
	n->borrow = borrow;
	n->fd_cap = fd_cap ? fd_cap : 1;
	n->next_id = 1;
	iopa_ctl_params_default(&n->params, cpus > 0 ? (u32)cpus : 1);
	if (max_limit < 1)
		max_limit = 1;
	if (max_limit > IOPA_CTL_LIMIT_MAX)
		max_limit = IOPA_CTL_LIMIT_MAX;
	n->params.max_limit = max_limit;
	n->params.min_cycle_ms = INPROC_MIN_CYCLE_MS;
	iopa_ctl_init(&n->ctl, &n->params, IOPA_CTL_POLICY_BRACKET);
	if (fixed_limit)
		iopa_ctl_set_fixed(&n->ctl, fixed_limit);
	n->limit = iopa_ctl_limit(&n->ctl);
	n->idle = true;
	*q = n;
	return 0;
}

/**
 * iopa_inproc_put_fd() - close a job's fd of ours (not a lent one)
 * @q: the source
 * @fd: the fd a job got from iopa_inproc_next()
 */
void iopa_inproc_put_fd(struct inproc *q, int fd)
{
	close(fd);
	atomic_fetch_sub(&q->nr_fds, 1);
}

/**
 * iopa_inproc_default_max() - the default ceiling of an adaptive limit
 *
 * Return: the module's default max_limit (kernel/ctl.c), the pool's
 * ceiling where sysfs shows none.
 */
unsigned int iopa_inproc_default_max(void)
{
	struct iopa_ctl_params p;

	iopa_ctl_params_default(&p, 1);
	return p.max_limit;
}

/**
 * iopa_inproc_stop() - wake every thread waiting for a job or a completion
 * @q: the source
 *
 * Waiting pool threads return 0 (no job) from then on.
 */
void iopa_inproc_stop(struct inproc *q)
{
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->work_cv);
	pthread_cond_broadcast(&q->done_cv);
	pthread_mutex_unlock(&q->lock);
}

/**
 * iopa_inproc_destroy() - free a source no thread uses any more
 * @q: the source
 *
 * Closes the fds of the jobs still queued (they never ran).
 */
void iopa_inproc_destroy(struct inproc *q)
{
	unsigned int i;

	/*
	 * A knee found, or where a search that never ended got (a run of
	 * seconds; the knee is not below it), as the module's device groups
	 * leave it (kernel/knee.c): the next run starts there.
	 */
	if (q->dev_id[0])
		iopa_knees_save(q->dev_id, iopa_ctl_left_knee(&q->ctl),
				iopa_ctl_job_kb(&q->ctl));

	for (i = 0; i < q->nr_pend; i++) {
		struct iopa_work *w = &q->pend[(q->pend_head + i) %
					       INPROC_MAX_JOBS].w;

		if (!(w->flags & IOPA_WORK_F_BORROWED))
			iopa_inproc_put_fd(q, w->fd);
	}
	pthread_cond_destroy(&q->done_cv);
	pthread_cond_destroy(&q->work_cv);
	pthread_mutex_destroy(&q->lock);
	free(q->pend);
	free(q->cq);
	free(q);
}

/*
 * Check one job and give it its own fd (a dup(), as the module installs
 * one), or the lent one: 0 or -errno.  Without the queue's lock: the
 * system calls of a submission do not hold up the pool's threads.
 */
static int inproc_prepare(struct inproc *q, const struct iopa_job *job,
			  struct iopa_work *w)
{
	int fd = job->fd;

	if ((job->flags & ~IOPA_JOB_F_MASK) || job->reserved)
		return -EINVAL;
	if (fd < 0)
		return -EBADF;
	if (q->borrow && (job->flags & IOPA_JOB_F_BORROW)) {
		if (fcntl(fd, F_GETFD) < 0)
			return -EBADF;
	} else {
		/*
		 * At most fd_cap of ours (the pool's share of RLIMIT_NOFILE):
		 * the application keeps fds to open its next files with.
		 * Beyond, as out of fds: the pool reaps and tries again.
		 */
		if (atomic_fetch_add(&q->nr_fds, 1) >= q->fd_cap) {
			atomic_fetch_sub(&q->nr_fds, 1);
			return -ETOOMANYREFS;
		}
		fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (fd < 0) {
			atomic_fetch_sub(&q->nr_fds, 1);
			return errno == EMFILE ? -ETOOMANYREFS : -errno;
		}
	}
	memset(w, 0, sizeof(*w));
	w->user_data = job->user_data;
	w->offset = job->offset;
	w->len = job->len;
	w->fd = fd;
	w->flags = fd == job->fd ? IOPA_WORK_F_BORROWED : 0;
	return 0;
}

/* Jobs prepared per hold of the queue's lock (a stack array). */
#define INPROC_SUBMIT_CHUNK	32

/*
 * Up to INPROC_SUBMIT_CHUNK jobs: checked, their fds dup()ed, the first
 * job's device looked at (sysfs, the knee cache) and the CPU time read
 * before the queue's lock is taken.  Returns how many were queued, or -errno for the first.
 */
static int inproc_submit_chunk(struct inproc *q, const struct iopa_job *jobs,
			       unsigned int nr)
{
	struct iopa_work w[INPROC_SUBMIT_CHUNK];
	bool need_dev, was_idle, rotational = false;
	char id[IOPA_KNEES_ID_LEN] = "";
	uint64_t idle_ms = UINT64_MAX;
	unsigned int i, n, wake, knee = 0, job_kb = 0;
	int r = 0;

	if (nr > INPROC_SUBMIT_CHUNK)
		nr = INPROC_SUBMIT_CHUNK;
	for (n = 0; n < nr; n++) {
		r = inproc_prepare(q, &jobs[n], &w[n]);
		if (r < 0)
			break;
	}
	if (!n)
		return r;
	pthread_mutex_lock(&q->lock);
	need_dev = !q->dev_seen;
	was_idle = q->idle;
	pthread_mutex_unlock(&q->lock);
	if (need_dev) {
		rotational = inproc_rotational(w[0].fd);
		if (iopa_knees_id(w[0].fd, id))
			knee = iopa_knees_lookup(id, &job_kb);
	}
	if (was_idle)
		idle_ms = inproc_cpu_idle_ms();

	pthread_mutex_lock(&q->lock);
	if (q->stop) {
		i = 0;
		r = -ESHUTDOWN;
		goto out_unlock;
	}
	if (need_dev && !q->dev_seen)
		inproc_note_device_locked(q, rotational, id, knee, job_kb);
	for (i = 0; i < n; i++) {
		struct iopa_work *pw;

		if (q->outstanding >= INPROC_MAX_JOBS) {
			r = -EAGAIN;
			break;
		}
		pw = &q->pend[(q->pend_head + q->nr_pend) % INPROC_MAX_JOBS].w;
		*pw = w[i];
		pw->job_id = q->next_id++;
		q->nr_pend++;
		q->outstanding++;
	}
	if (i) {
		/*
		 * Became idle meanwhile (rarely): the CPU time unknown for
		 * this cycle rather than read under the lock.
		 */
		if (q->idle)
			inproc_cycle_begin_locked(q, inproc_now_ns(),
						  was_idle ? idle_ms :
						  UINT64_MAX);
		inproc_note_demand_locked(q);
		wake = q->limit > q->running ? q->limit - q->running : 0;
		if (wake > i)
			wake = i;
		while (wake--)
			pthread_cond_signal(&q->work_cv);
	}
out_unlock:
	pthread_mutex_unlock(&q->lock);
	/* The fds of the jobs not queued were ours. */
	while (n > i) {
		n--;
		if (!(w[n].flags & IOPA_WORK_F_BORROWED))
			iopa_inproc_put_fd(q, w[n].fd);
	}
	return i ? (int)i : r;
}

/**
 * iopa_inproc_submit() - queue jobs
 * @q: the source
 * @jobs: the jobs
 * @nr: how many
 *
 * The system calls a job needs (its fd's dup(), the first job's sysfs
 * look-up, the CPU time) run without the queue's lock.
 *
 * Return: the number queued (the first ones of @jobs), or -errno if the
 * first could not be: -EAGAIN (INPROC_MAX_JOBS outstanding), -ESHUTDOWN,
 * -EINVAL (flags, reserved), -EBADF, -ETOOMANYREFS (no fd left for it).
 */
int iopa_inproc_submit(struct inproc *q, const struct iopa_job *jobs,
		  unsigned int nr)
{
	unsigned int done = 0, n;
	int r;

	while (done < nr) {
		n = nr - done < INPROC_SUBMIT_CHUNK ? nr - done :
		    INPROC_SUBMIT_CHUNK;
		r = inproc_submit_chunk(q, jobs + done, n);
		if (r < 0)
			return done ? (int)done : r;
		done += (unsigned int)r;
		if ((unsigned int)r < n)
			break;
	}
	return (int)done;
}

/**
 * iopa_inproc_worker_init() - a pool thread starts
 * @iw: its state
 *
 * Opens the thread's task I/O counter: in the thread itself.
 */
void iopa_inproc_worker_init(struct inproc_worker *iw)
{
	memset(iw, 0, sizeof(*iw));
	iw->io_fd = open("/proc/thread-self/io", O_RDONLY | O_CLOEXEC);
	iw->io_mark = inproc_io_bytes(iw);
}

/* The job the thread ran is done: complete it.  q->lock held. */
static void inproc_complete_locked(struct inproc *q, struct inproc_worker *iw,
				   const struct iopa_done *done,
				   uint64_t user_data, uint64_t bytes,
				   int64_t now)
{
	struct iopa_cqe *c = &q->cq[(q->cq_head + q->nr_cq) % INPROC_MAX_JOBS];
	uint64_t svc = now > iw->fetch_ns ?
		       (uint64_t)(now - iw->fetch_ns) / 1000 : 0;
	uint64_t sq = svc < UINT32_MAX ? svc * svc : UINT64_MAX;

	c->user_data = user_data;
	c->job_id = done->job_id;
	c->res = done->res;
	c->flags = 0;
	q->nr_cq++;
	q->running--;
	q->cyc.bytes += bytes;
	q->cyc.jobs++;
	q->cyc.svc_us += svc;
	q->cyc.svc_sq = q->cyc.svc_sq > UINT64_MAX - sq ? UINT64_MAX :
			q->cyc.svc_sq + sq;
	if (q->rot_start && done->res >= 0)
		inproc_rot_done_locked(q, iw, bytes);
	pthread_cond_broadcast(&q->done_cv);
	inproc_cycle_check_locked(q, now);
}

/* Bytes the thread moved since its last job started (outside the lock). */
static uint64_t inproc_job_bytes(struct inproc_worker *iw)
{
	uint64_t io = inproc_io_bytes(iw);
	uint64_t bytes = io >= iw->io_mark ? io - iw->io_mark : 0;

	iw->io_mark = io;
	return bytes;
}

/**
 * iopa_inproc_next() - complete the thread's job, if any, and take the next
 * @q: the source
 * @iw: the calling pool thread's state
 * @done: the job to complete (with @have_done)
 * @have_done: the thread holds a job it has run
 * @w: out: the job taken
 * @timeout_ns: how long to wait for one
 *
 * Waits while nothing is queued or the limit is reached.
 *
 * Return: 1 with a job in @w; 0 when none came in time or the pool
 * stops (the completion, if any, took effect).
 */
int iopa_inproc_next(struct inproc *q, struct inproc_worker *iw,
		const struct iopa_done *done, bool have_done,
		struct iopa_work *w, uint64_t timeout_ns)
{
	uint64_t bytes = have_done ? inproc_job_bytes(iw) : 0;
	int64_t now = inproc_now_ns(), end = now + (int64_t)timeout_ns;
	struct timespec deadline;
	int r = 0;

	inproc_deadline(timeout_ns, &deadline);

	pthread_mutex_lock(&q->lock);
	if (have_done)
		inproc_complete_locked(q, iw, done, iw->user_data, bytes, now);
	for (;;) {
		if (q->stop)
			break;
		if (q->nr_pend && q->running < q->limit) {
			*w = q->pend[q->pend_head].w;
			q->pend_head = (q->pend_head + 1) % INPROC_MAX_JOBS;
			q->nr_pend--;
			q->running++;
			iw->fetch_ns = inproc_now_ns();
			iw->user_data = w->user_data;
			inproc_note_demand_locked(q);
			r = 1;
			break;
		}
		if (inproc_now_ns() >= end)
			break;
		q->waiting++;
		pthread_cond_timedwait(&q->work_cv, &q->lock, &deadline);
		q->waiting--;
		inproc_cycle_check_locked(q, inproc_now_ns());
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

/**
 * iopa_inproc_worker_exit() - a pool thread ends
 * @q: the source
 * @iw: its state
 * @done: the job it still holds (with @have_done)
 * @have_done: it holds a job it has run
 */
void iopa_inproc_worker_exit(struct inproc *q, struct inproc_worker *iw,
			const struct iopa_done *done, bool have_done)
{
	if (have_done) {
		uint64_t bytes = inproc_job_bytes(iw);

		pthread_mutex_lock(&q->lock);
		inproc_complete_locked(q, iw, done, iw->user_data, bytes,
				       inproc_now_ns());
		pthread_mutex_unlock(&q->lock);
	}
	if (iw->io_fd >= 0)
		close(iw->io_fd);
	iw->io_fd = -1;
}

/**
 * iopa_inproc_reap() - take completions, waiting for one up to @timeout_ns
 * @q: the source
 * @cqes: where to put them
 * @nr: room in @cqes
 * @timeout_ns: how long to wait
 *
 * Return: how many, or -ETIMEDOUT.
 */
int iopa_inproc_reap(struct inproc *q, struct iopa_cqe *cqes, unsigned int nr,
		uint64_t timeout_ns)
{
	int64_t end = inproc_now_ns() + (int64_t)timeout_ns;
	struct timespec deadline;
	unsigned int i, n;

	inproc_deadline(timeout_ns, &deadline);
	pthread_mutex_lock(&q->lock);
	while (!q->nr_cq) {
		int64_t now = inproc_now_ns();

		/* Long jobs, every thread busy: end the cycle on time. */
		if (inproc_cycle_check_locked(q, now))
			continue;
		if (now >= end || q->stop) {
			pthread_mutex_unlock(&q->lock);
			return -ETIMEDOUT;
		}
		pthread_cond_timedwait(&q->done_cv, &q->lock, &deadline);
	}
	n = nr < q->nr_cq ? nr : q->nr_cq;
	for (i = 0; i < n; i++)
		cqes[i] = q->cq[(q->cq_head + i) % INPROC_MAX_JOBS];
	q->cq_head = (q->cq_head + n) % INPROC_MAX_JOBS;
	q->nr_cq -= n;
	q->outstanding -= n;
	pthread_mutex_unlock(&q->lock);
	return (int)n;
}

/**
 * iopa_inproc_demand() - what the pool's growth looks at
 * @q: the source
 * @pending: set to the jobs queued
 * @waiting: set to the threads waiting for a job
 */
void iopa_inproc_demand(struct inproc *q, unsigned int *pending,
		   unsigned int *waiting)
{
	pthread_mutex_lock(&q->lock);
	*pending = q->nr_pend;
	*waiting = q->waiting;
	pthread_mutex_unlock(&q->lock);
}

/**
 * iopa_inproc_limit() - the limit in force
 * @q: the source
 *
 * Return: how many jobs may run at once.
 */
unsigned int iopa_inproc_limit(struct inproc *q)
{
	unsigned int l;

	pthread_mutex_lock(&q->lock);
	l = q->limit;
	pthread_mutex_unlock(&q->lock);
	return l;
}
