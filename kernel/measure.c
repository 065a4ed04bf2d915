// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - measurement: what a job cost, for the limit controller.
 *
 * A leaf: the job core calls it as jobs start, the limit layer
 * (limit.c) as they end and as cycles end; it calls nothing of the
 * module.
 *
 * - Bytes.  The bytes a job moves through the block layer are those its
 *   worker thread is charged between FETCH and COMPLETE in its task I/O
 *   accounting (read_bytes at bio submission, write_bytes at dirtying),
 *   the same counters as /proc/<pid>/io.  Page-cache hits count nothing,
 *   unlike the sys_read/sys_write volume the IOPA paper used.  A thread
 *   holding several jobs at once charges each byte once: to the first
 *   of its jobs to complete after the byte moved (the worker remembers
 *   how far its thread's counter has been charged).
 * - Jobs.  Completions per second; the throughput signal for a
 *   submitter whose jobs never did block I/O (CPU-bound or cached).
 * - Times.  Each job's queue wait (submit, or requeue, to fetch) and
 *   service time (fetch to complete): summed over the cycle for the
 *   controller, and kept for good in the submitter's histograms
 *   (IOPA_FEAT_METRICS), where a bucket is a power of two microseconds.
 * - CPU.  Idle + iowait time of all online CPUs, for the controller's
 *   CPU guard (like SGI's dynamic threads in MIPSpro, which follow idle
 *   CPUs: no growth while the CPUs are saturated).
 */
#include <linux/bitops.h>
#include <linux/kernel_stat.h>
#include <linux/math64.h>
#include <linux/task_io_accounting_ops.h>
#include <linux/tick.h>

#include "iopa.h"

/* Bytes @task has been charged for block I/O, reads and writes. */
static u64 iopa_task_io_bytes(const struct task_struct *task)
{
	return ((u64)task_io_get_inblock(task) +
		task_io_get_oublock(task)) << 9;
}

/* The bucket of @us (struct iopa_metrics: bucket i holds (2^(i-1), 2^i]). */
static u32 iopa_hist_bucket(u64 us)
{
	return us <= 1 ? 0 : min_t(u32, fls64(us - 1), IOPA_HIST_BUCKETS - 1);
}

static void iopa_hist_add(u64 *hist, u64 us)
{
	hist[iopa_hist_bucket(us)]++;
}

/**
 * iopa_measure_cpu_idle_us() - idle + iowait time of all online CPUs
 *
 * Return: the sum, in microseconds.
 */
u64 iopa_measure_cpu_idle_us(void)
{
	u64 sum = 0, t;
	int cpu;

	for_each_online_cpu(cpu) {
		t = get_cpu_idle_time_us(cpu, NULL);
		if (t == (u64)-1) {
			/* No NOHZ accounting: the tick's. */
			struct kernel_cpustat kcs;

			kcpustat_cpu_fetch(&kcs, cpu);
			sum += div_u64(kcs.cpustat[CPUTIME_IDLE] +
				       kcs.cpustat[CPUTIME_IOWAIT],
				       NSEC_PER_USEC);
			continue;
		}
		sum += t;
		t = get_cpu_iowait_time_us(cpu, NULL);
		if (t != (u64)-1)
			sum += t;
	}
	return sum;
}

/**
 * iopa_measure_job_started() - a worker thread took @job
 * @job: the job, just dispatched to the current task
 * @now: ktime_get_ns(), read once for a batch of jobs
 *
 * Context: ctx->lock held, in the fetching worker thread.
 */
void iopa_measure_job_started(struct iopa_kjob *job, u64 now)
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_submitter *sub = job->sub;
	u64 wait;

	lockdep_assert_held(&sub->ctx->lock);
	job->io_task = current;
	job->io_mark = iopa_task_io_bytes(current);
	if (job->fetch_ns)
		return;		/* the same fetch, handed over */
	job->fetch_ns = now;
	wait = now > job->submit_ns ?
	       div_u64(now - job->submit_ns, NSEC_PER_USEC) : 0;
	sub->cyc.wait_us += wait;
	sub->cyc.dispatched++;
	sub->m.wait_us += wait;
	iopa_hist_add(sub->m.wait_hist, wait);
}

/**
 * iopa_measure_job_given_back() - @job goes back to the queue undone
 * @job: the job, dispatched but never handed to its worker (its fd could
 *	not be installed, its io_uring request went away)
 *
 * Takes back what iopa_measure_job_started() counted of its dispatch:
 * its next dispatch counts its wait again, whole.
 *
 * Context: ctx->lock held, before the job is queued again.
 */
void iopa_measure_job_given_back(struct iopa_kjob *job)
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_submitter *sub = job->sub;
	u64 wait;

	lockdep_assert_held(&sub->ctx->lock);
	if (!job->fetch_ns)
		return;
	wait = job->fetch_ns > job->submit_ns ?
	       div_u64(job->fetch_ns - job->submit_ns, NSEC_PER_USEC) : 0;
	/* The cycle may have ended since: not below zero. */
	sub->cyc.wait_us -= min(sub->cyc.wait_us, wait);
	if (sub->cyc.dispatched)
		sub->cyc.dispatched--;
	sub->m.wait_us -= wait;
	sub->m.wait_hist[iopa_hist_bucket(wait)]--;
}

/**
 * iopa_measure_job_done() - a worker completed @job: charge its I/O
 * @job: the job, still RUNNING
 * @now_ns: now (ktime_get_ns())
 * @svc_us: set to the job's service time, microseconds
 *
 * The I/O of the completing thread since it fetched the job is the
 * job's; a job completed by another thread than the one that fetched it
 * counts as a job but moves no bytes.  Adds the job to its submitter's
 * cycle.
 *
 * Context: ctx->lock held.
 * Return: the bytes charged to the job.
 */
u64 iopa_measure_job_done(struct iopa_kjob *job, u64 now_ns, u64 *svc_us)
	__must_hold(&job->sub->ctx->lock)
{
	struct iopa_submitter *sub = job->sub;
	struct iopa_worker *w = job->worker;
	struct iopa_adapt_cycle *cyc = &sub->cyc;
	u64 bytes = 0, svc = 0, sq;

	lockdep_assert_held(&sub->ctx->lock);
	if (job->io_task == current) {
		u64 now = iopa_task_io_bytes(current), from = job->io_mark;

		/* Bytes already charged to another job of this thread: not again. */
		if (w && w->io_task == current && w->io_charged > from)
			from = w->io_charged;
		/* (A dead fetcher's task_struct may be reused.) */
		if (now >= from)
			bytes = now - from;
		if (w) {
			w->io_task = current;
			w->io_charged = now;
		}
	}
	job->io_task = NULL;
	cyc->bytes += bytes;
	cyc->jobs++;
	if (job->fetch_ns && now_ns > job->fetch_ns)
		svc = div_u64(now_ns - job->fetch_ns, NSEC_PER_USEC);
	cyc->svc_us += svc;
	sq = svc < U32_MAX ? svc * svc : U64_MAX;
	cyc->svc_sq = cyc->svc_sq > U64_MAX - sq ? U64_MAX : cyc->svc_sq + sq;
	sub->m.io_bytes += bytes;
	sub->m.svc_us += svc;
	iopa_hist_add(sub->m.svc_hist, svc);
	*svc_us = svc;
	return bytes;
}
