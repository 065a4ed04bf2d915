// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The libiopa worker pool against the real module: start, grow to the
 * kernel's limit (limit running + one spare), follow the limit up and
 * down, shrink when idle, stop under load; results, the done callback,
 * fd ownership, the full-submitter path and the calls that must refuse.
 *
 * The thread counts are checked both in the pool (iopa_pool_get_info())
 * and in the kernel (GET_STATS on the context: nr_workers, nr_waiting).
 */
#include "libiopa_test.h"

#include <grp.h>
#include <sys/stat.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

/* What the user function does, and what it saw. */
struct tb {
	struct iopa_pool *pool;		/* for the calls fn must not make */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool gate_closed;		/* fn waits while set */
	atomic_uint delay_ms;		/* fn sleeps this long */
	bool fail_odd;			/* odd user_data: return -EIO */
	bool try_forbidden;		/* call iopa_pool_wait/close */
	atomic_int running, max_running;
	atomic_int calls;
	atomic_int fd_bad;		/* work->fd was not a valid fd */
	atomic_int lent;		/* work came with IOPA_WORK_F_BORROWED */
	int lent_fd;			/* ... and this fd, the submitter's */
	atomic_int lent_wrong;		/* ... or another fd */
	atomic_int forbidden_rc;	/* what the forbidden calls returned */
	/* done callback */
	atomic_int done_calls;
	int done_res[4096];
};

static void tb_init(struct tb *t)
{
	memset(t, 0, sizeof(*t));
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
}

static void tb_gate(struct tb *t, bool closed)
{
	pthread_mutex_lock(&t->lock);
	t->gate_closed = closed;
	pthread_cond_broadcast(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

static int job_fn(void *arg, const struct iopa_work *w)
{
	struct tb *t = arg;
	int now = atomic_fetch_add(&t->running, 1) + 1;
	int max = atomic_load(&t->max_running);
	int res;

	while (now > max &&
	       !atomic_compare_exchange_weak(&t->max_running, &max, now))
		;
	atomic_fetch_add(&t->calls, 1);
	if (fcntl(w->fd, F_GETFD) < 0)
		atomic_fetch_add(&t->fd_bad, 1);
	if (w->flags & IOPA_WORK_F_BORROWED) {
		atomic_fetch_add(&t->lent, 1);
		if (w->fd != t->lent_fd)
			atomic_fetch_add(&t->lent_wrong, 1);
	}
	if (t->try_forbidden) {
		int a = iopa_pool_wait(t->pool), b = iopa_pool_close(t->pool);
		int c = iopa_pool_create_threads(t->pool, job_fn, t);

		atomic_store(&t->forbidden_rc,
			     a == -EDEADLK && b == -EDEADLK && c == -EDEADLK ?
			     1 : -1);
	}
	pthread_mutex_lock(&t->lock);
	while (t->gate_closed)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	if (atomic_load(&t->delay_ms))
		t_sleep_ms(atomic_load(&t->delay_ms));
	res = t->fail_odd && (w->user_data & 1) ? -EIO : (int)w->user_data;
	atomic_fetch_sub(&t->running, 1);
	return res;
}

static void done_fn(void *arg, const struct iopa_cqe *cqe)
{
	struct tb *t = arg;

	atomic_fetch_add(&t->done_calls, 1);
	if (cqe->user_data < 4096)
		t->done_res[cqe->user_data] = cqe->res;
}

FIXTURE(pool) {
	int ctx;	/* the test's context; the pool has its own dup */
	int file;
	struct iopa_pool *pool;
	struct tb tb;
	unsigned long max_jobs;	/* sysfs, restored by teardown if set */
	unsigned long max_total_jobs;	/* the same */
};

FIXTURE_SETUP(pool)
{
	self->pool = NULL;
	self->file = -1;
	self->max_jobs = 0;
	self->max_total_jobs = 0;
	tb_init(&self->tb);
	self->ctx = iopa_open();
	if (self->ctx == -ENOENT)
		SKIP(return, "no /dev/iopa: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	self->file = t_job_file(4096);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(pool)
{
	tb_gate(&self->tb, false);
	if (self->pool)
		iopa_pool_close(self->pool);
	if (self->max_jobs)
		t_sysfs_write("max_jobs", self->max_jobs);
	if (self->max_total_jobs)
		t_sysfs_write("max_total_jobs", self->max_total_jobs);
	if (self->file >= 0)
		close(self->file);
	if (self->ctx >= 0)
		close(self->ctx);
}

/* Submit @n jobs for the fixture's file, user_data first..first+n-1. */
static int submit_n(struct iopa_pool *p, int fd, uint64_t first, int n)
{
	struct iopa_job jobs[64];
	int done = 0;

	while (done < n) {
		int k = n - done > 64 ? 64 : n - done, i, r;

		for (i = 0; i < k; i++) {
			memset(&jobs[i], 0, sizeof(jobs[i]));
			jobs[i].fd = fd;
			jobs[i].len = 4096;
			jobs[i].user_data = first + done + i;
		}
		for (i = 0; i < k; i += r) {
			r = iopa_pool_submit(p, jobs + i, k - i);
			if (r < 0)
				return r;
		}
		done += k;
	}
	return done;
}

static unsigned int info_threads(struct iopa_pool *p)
{
	struct iopa_pool_info info;

	return iopa_pool_get_info(p, &info) ? 0 : info.threads;
}

static struct iopa_pool_info info_of(struct iopa_pool *p)
{
	struct iopa_pool_info info;

	memset(&info, 0, sizeof(info));
	iopa_pool_get_info(p, &info);
	return info;
}

static struct iopa_pool_opts opts_of(unsigned int min, unsigned int max,
				     unsigned int idle_ms, unsigned int limit)
{
	struct iopa_pool_opts o;

	memset(&o, 0, sizeof(o));
	o.min_threads = min;
	o.max_threads = max;
	o.idle_ms = idle_ms;
	o.limit = limit;
	return o;
}

/* Start: min threads, registered with the kernel and parked in FETCH. */
TEST_F(pool, start_and_close)
{
	struct iopa_pool_opts o = opts_of(2, 8, 60000, 4);
	struct iopa_pool_info info;
	struct iopa_stats st;
	int64_t t0;

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	EXPECT_NE(self->ctx, iopa_pool_ctx_fd(self->pool));
	EXPECT_LE(0, iopa_pool_submitter_fd(self->pool));
	EXPECT_EQ(4, iopa_get_limit(iopa_pool_submitter_fd(self->pool), NULL));
	/* No thread before create_threads. */
	EXPECT_EQ(0, t_ctx_workers(self->ctx, NULL));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	EXPECT_EQ(-EBUSY, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	info = info_of(self->pool);
	EXPECT_EQ(2U, info.threads);
	EXPECT_EQ(2U, info.idle);
	EXPECT_EQ(2, t_ctx_workers(self->ctx, NULL));
	EXPECT_TRUE(T_WAIT_UNTIL(t_ctx_waiting(self->ctx) == 2, T_LONG_MS));
	/* Nothing to do: they stay parked (min 2), nobody else appears. */
	t_sleep_ms(300);
	EXPECT_EQ(2, t_ctx_workers(self->ctx, NULL));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));

	t0 = t_now_ms();
	EXPECT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	TH_LOG("close took %lld ms", (long long)(t_now_ms() - t0));
	EXPECT_GT(2000, t_now_ms() - t0);
	/* Workers and the pool's submitter are gone; our context stays. */
	EXPECT_EQ(0, t_ctx_workers(self->ctx, NULL));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0U, st.nr_submitters);
}

/* Defaults: min 0; the first thread ends when idle, a job brings one back. */
TEST_F(pool, min_zero_grows_from_nothing)
{
	struct iopa_pool_opts o = opts_of(0, 4, 200, 2);

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	EXPECT_EQ(1U, info_threads(self->pool));
	EXPECT_TRUE(T_WAIT_UNTIL(info_threads(self->pool) == 0, T_LONG_MS));
	EXPECT_TRUE(T_WAIT_UNTIL(t_ctx_workers(self->ctx, NULL) == 0, T_LONG_MS));
	ASSERT_EQ(1, submit_n(self->pool, self->file, 5, 1));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(1, atomic_load(&self->tb.calls));
	EXPECT_LE(1U, info_of(self->pool).threads_started - 1);
}

/*
 * Grow: a pinned limit of 6 and jobs that block.  The pool grows one
 * thread at a time to 6 running + 1 spare parked in FETCH, and no
 * further; nothing ever runs above the limit.
 */
TEST_F(pool, grows_to_limit_plus_spare)
{
	struct iopa_pool_opts o = opts_of(1, 16, 60000, 6);
	struct iopa_pool_info info;

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	tb_gate(&self->tb, true);
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(20, submit_n(self->pool, self->file, 0, 20));
	EXPECT_TRUE(T_WAIT_UNTIL(atomic_load(&self->tb.running) == 6, T_LONG_MS));
	EXPECT_TRUE(T_WAIT_UNTIL(info_threads(self->pool) == 7, T_LONG_MS));
	EXPECT_TRUE(T_WAIT_UNTIL(t_ctx_waiting(self->ctx) == 1, T_LONG_MS));
	t_sleep_ms(300);	/* stable: no more threads */
	info = info_of(self->pool);
	TH_LOG("threads %u idle %u peak %u started %llu", info.threads,
	       info.idle, info.peak_threads,
	       (unsigned long long)info.threads_started);
	EXPECT_EQ(7U, info.threads);
	EXPECT_EQ(1U, info.idle);
	EXPECT_EQ(7U, info.peak_threads);
	EXPECT_EQ(7, t_ctx_workers(self->ctx, NULL));
	EXPECT_EQ(6, atomic_load(&self->tb.running));

	tb_gate(&self->tb, false);
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(20, atomic_load(&self->tb.calls));
	EXPECT_EQ(6, atomic_load(&self->tb.max_running));
	EXPECT_EQ(0, atomic_load(&self->tb.fd_bad));
	info = info_of(self->pool);
	EXPECT_EQ(20ULL, info.completed);
	EXPECT_EQ(0ULL, info.outstanding);
	EXPECT_GE(7U, info.peak_threads);
}

/* max_threads caps the pool below the kernel's limit. */
TEST_F(pool, max_threads_caps)
{
	struct iopa_pool_opts o = opts_of(1, 3, 60000, 6);

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	tb_gate(&self->tb, true);
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(20, submit_n(self->pool, self->file, 0, 20));
	EXPECT_TRUE(T_WAIT_UNTIL(atomic_load(&self->tb.running) == 3, T_LONG_MS));
	t_sleep_ms(300);
	EXPECT_EQ(3U, info_threads(self->pool));
	EXPECT_EQ(3, t_ctx_workers(self->ctx, NULL));
	EXPECT_EQ(3U, info_of(self->pool).peak_threads);
	tb_gate(&self->tb, false);
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(3, atomic_load(&self->tb.max_running));
}

/*
 * Follow the kernel's limit: raised while every thread is busy, the
 * kernel wakes the spare and the pool grows behind it; lowered, the
 * threads the limit no longer lets run end after idle_ms, down to the
 * new limit + 1.
 */
TEST_F_TIMEOUT(pool, follows_limit_up_and_down, 60)
{
	struct iopa_pool_opts o = opts_of(1, 16, 300, 2);
	int sub;

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	sub = iopa_pool_submitter_fd(self->pool);
	tb_gate(&self->tb, true);
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(400, submit_n(self->pool, self->file, 0, 400));
	EXPECT_TRUE(T_WAIT_UNTIL(atomic_load(&self->tb.running) == 2, T_LONG_MS));
	EXPECT_TRUE(T_WAIT_UNTIL(info_threads(self->pool) == 3, T_LONG_MS));

	/* Up: 5 running, 6 threads. */
	ASSERT_EQ(0, iopa_set_limit(sub, 5));
	EXPECT_TRUE(T_WAIT_UNTIL(atomic_load(&self->tb.running) == 5, T_LONG_MS));
	EXPECT_TRUE(T_WAIT_UNTIL(info_threads(self->pool) == 6, T_LONG_MS));
	t_sleep_ms(200);
	EXPECT_EQ(6U, info_threads(self->pool));
	EXPECT_EQ(6, t_ctx_workers(self->ctx, NULL));

	/* Down to 2 while jobs flow (20 ms each): 3 threads remain. */
	self->tb.delay_ms = 20;
	ASSERT_EQ(0, iopa_set_limit(sub, 2));
	tb_gate(&self->tb, false);
	EXPECT_TRUE(T_WAIT_UNTIL(info_threads(self->pool) == 3, T_LONG_MS));
	EXPECT_TRUE(T_WAIT_UNTIL(t_ctx_workers(self->ctx, NULL) == 3, T_LONG_MS));
	TH_LOG("after the drop: %u threads, %d calls so far",
	       info_threads(self->pool), atomic_load(&self->tb.calls));
	EXPECT_GT(400, atomic_load(&self->tb.calls));	/* still under load */
	self->tb.delay_ms = 0;
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(400, atomic_load(&self->tb.calls));
	EXPECT_EQ(5, atomic_load(&self->tb.max_running));
}

/* Shrink: after the load, idle threads end down to min_threads. */
TEST_F(pool, shrinks_after_load)
{
	struct iopa_pool_opts o = opts_of(1, 16, 200, 4);
	struct iopa_pool_info info;

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	self->tb.delay_ms = 5;
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(200, submit_n(self->pool, self->file, 0, 200));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	info = info_of(self->pool);
	TH_LOG("after the load: %u threads, peak %u", info.threads,
	       info.peak_threads);
	EXPECT_LE(4U, info.peak_threads);
	EXPECT_GE(5U, info.peak_threads);
	EXPECT_TRUE(T_WAIT_UNTIL(info_threads(self->pool) == 1, T_LONG_MS));
	EXPECT_TRUE(T_WAIT_UNTIL(t_ctx_workers(self->ctx, NULL) == 1, T_LONG_MS));
	t_sleep_ms(500);
	EXPECT_EQ(1U, info_threads(self->pool));	/* min holds */
	info = info_of(self->pool);
	EXPECT_EQ(info.threads_started - info.threads_exited, 1ULL);
}

/*
 * Stop under load: close with jobs running and many pending.  It returns
 * promptly, the pending jobs are cancelled, every worker is gone, and the
 * user function is not called any more.
 */
TEST_F(pool, close_under_load)
{
	struct iopa_pool_opts o = opts_of(1, 16, 60000, 4);
	struct iopa_stats st;
	int64_t t0;
	int calls;

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	self->tb.delay_ms = 2;
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(2000, submit_n(self->pool, self->file, 0, 2000));
	EXPECT_TRUE(T_WAIT_UNTIL(atomic_load(&self->tb.calls) >= 50, T_LONG_MS));
	t0 = t_now_ms();
	EXPECT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	TH_LOG("close under load took %lld ms after %d calls",
	       (long long)(t_now_ms() - t0), atomic_load(&self->tb.calls));
	EXPECT_GT(2000, t_now_ms() - t0);
	EXPECT_EQ(0, atomic_load(&self->tb.running));
	calls = atomic_load(&self->tb.calls);
	t_sleep_ms(200);
	EXPECT_EQ(calls, atomic_load(&self->tb.calls));
	EXPECT_GT(2000, calls);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0U, st.nr_workers);
	EXPECT_EQ(0U, st.nr_submitters);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(2000ULL, st.submitted);
	EXPECT_EQ((unsigned long long)calls, st.completed);
	EXPECT_EQ(2000ULL - calls, st.cancelled);
}

/* Results reach the done callback and the wait's count; fds are closed. */
TEST_F(pool, results_done_and_fds)
{
	struct iopa_pool_opts o = opts_of(1, 8, 60000, 4);
	int fds_before, i, bad = 0;

	o.done = done_fn;
	o.done_arg = &self->tb;
	self->tb.fail_odd = true;
	fds_before = t_count_fds();
	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(500, submit_n(self->pool, self->file, 0, 500));
	EXPECT_EQ(250, iopa_pool_wait(self->pool));
	EXPECT_EQ(500, atomic_load(&self->tb.done_calls));
	for (i = 0; i < 500; i++)
		if (self->tb.done_res[i] != (i & 1 ? -EIO : i))
			bad++;
	EXPECT_EQ(0, bad);
	EXPECT_EQ(250ULL, info_of(self->pool).failed);
	/* The failures were reported once. */
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(0, atomic_load(&self->tb.fd_bad));
	EXPECT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	/* Every job fd the kernel installed was closed by the pool. */
	EXPECT_EQ(fds_before, t_count_fds());
}

/* fn must not wait for or close its own pool, nor start it again. */
TEST_F(pool, refuses_calls_from_its_threads)
{
	struct iopa_pool_opts o = opts_of(1, 2, 60000, 1);

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	self->tb.pool = self->pool;
	self->tb.try_forbidden = true;
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(1, submit_n(self->pool, self->file, 0, 1));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(1, atomic_load(&self->tb.forbidden_rc));
}

/* Jobs submitted before the threads exist run once they do. */
TEST_F(pool, submit_before_threads)
{
	struct iopa_pool_opts o = opts_of(0, 4, 60000, 2);

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(10, submit_n(self->pool, self->file, 0, 10));
	EXPECT_EQ(-EINVAL, iopa_pool_wait(self->pool));	/* nothing would run */
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(10, atomic_load(&self->tb.calls));
}

/*
 * A full submitter (sysfs max_jobs outstanding): iopa_pool_submit() reaps
 * to make room instead of failing with EAGAIN.
 */
TEST_F(pool, submit_reaps_when_full)
{
	struct iopa_pool_opts o = opts_of(1, 4, 60000, 2);
	unsigned long old;

	o.done = done_fn;
	o.done_arg = &self->tb;
	ASSERT_EQ(0, t_sysfs_read("max_jobs", &old));
	ASSERT_EQ(0, t_sysfs_write("max_jobs", 8));
	self->max_jobs = old;
	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(100, submit_n(self->pool, self->file, 0, 100));
	EXPECT_LT(0, atomic_load(&self->tb.done_calls));	/* reaped early */
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(100, atomic_load(&self->tb.done_calls));
	EXPECT_EQ(100, atomic_load(&self->tb.calls));
}

/*
 * The module full (sysfs max_total_jobs, ENOSPC): with jobs of its own
 * outstanding the pool reaps them to make room; with none, only other
 * users can free the room and the call says ENOSPC.
 */
/*
 * IOPA_POOL_F_BORROW: jobs submitted with IOPA_JOB_F_BORROW reach the
 * function with the application's fd, which the pool leaves open; jobs
 * without the flag still get (and lose) an fd of their own.
 */
TEST_F(pool, borrowed_fds)
{
	struct iopa_pool_opts o = opts_of(1, 4, 60000, 2);
	struct iopa_features f;
	struct iopa_job jobs[8];
	int i;

	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	if (!(f.features & IOPA_FEAT_BORROW) || !(f.features & IOPA_FEAT_BATCH))
		SKIP(return, "module without IOPA_FEAT_BORROW / _BATCH");
	o.flags = IOPA_POOL_F_BORROW;
	self->tb.lent_fd = self->file;
	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	for (i = 0; i < 8; i++) {
		memset(&jobs[i], 0, sizeof(jobs[i]));
		jobs[i].fd = self->file;
		jobs[i].len = 4096;
		jobs[i].user_data = i;
		jobs[i].flags = i < 6 ? IOPA_JOB_F_BORROW : 0;
	}
	ASSERT_EQ(8, iopa_pool_submit(self->pool, jobs, 8));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(8, atomic_load(&self->tb.calls));
	EXPECT_EQ(6, atomic_load(&self->tb.lent));
	EXPECT_EQ(0, atomic_load(&self->tb.lent_wrong));
	EXPECT_EQ(0, atomic_load(&self->tb.fd_bad));
	/* the application's fd is still open */
	EXPECT_LE(0, fcntl(self->file, F_GETFD));
}

TEST_F(pool, submit_reaps_at_module_cap)
{
	struct iopa_pool_opts o = opts_of(1, 4, 60000, 2);
	struct iopa_job j;
	unsigned long old, jobs;
	int other;

	o.done = done_fn;
	o.done_arg = &self->tb;
	ASSERT_EQ(0, t_sysfs_read("max_total_jobs", &old));
	ASSERT_EQ(0, t_sysfs_read("stats/jobs", &jobs));
	ASSERT_EQ(0, t_sysfs_write("max_total_jobs", jobs + 8));
	self->max_total_jobs = old;
	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(100, submit_n(self->pool, self->file, 0, 100));
	EXPECT_LT(0, atomic_load(&self->tb.done_calls));	/* reaped early */
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	EXPECT_EQ(100, atomic_load(&self->tb.calls));
	/*
	 * Nothing of the pool's outstanding: the one job of room left is
	 * taken by another submitter's job, which nobody reaps.
	 */
	ASSERT_EQ(0, t_sysfs_read("stats/jobs", &jobs));
	ASSERT_EQ(0, t_sysfs_write("max_total_jobs", jobs + 1));
	other = iopa_submitter_create(self->ctx, 1, 0);
	ASSERT_LE(0, other);
	memset(&j, 0, sizeof(j));
	j.fd = self->file;
	j.len = 4096;
	ASSERT_EQ(1, iopa_submit(other, &j, 1, 0));
	EXPECT_EQ(-ENOSPC, iopa_pool_submit(self->pool, &j, 1));
	close(other);
}

/*
 * The pool's threads serve every submitter of the context: jobs of a
 * submitter the program made itself run in the pool too.
 */
TEST_F(pool, serves_other_submitters)
{
	struct iopa_pool_opts o = opts_of(1, 8, 60000, 2);
	struct iopa_cqe cqe[16];
	struct iopa_job j;
	int sub, i, got = 0, r;

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	sub = iopa_submitter_create(self->ctx, 3, 0);
	ASSERT_LE(0, sub);
	memset(&j, 0, sizeof(j));
	j.fd = self->file;
	j.len = 1;
	for (i = 0; i < 16; i++) {
		j.user_data = 100 + i;
		ASSERT_EQ(1, iopa_submit(sub, &j, 1, 0));
	}
	while (got < 16) {
		r = iopa_reap(sub, cqe, 16, IOPA_REAP_F_WAIT, T_MS_NS(T_LONG_MS));
		ASSERT_LT(0, r);
		for (i = 0; i < r; i++)
			EXPECT_EQ((int)cqe[i].user_data, cqe[i].res);
		got += r;
	}
	EXPECT_EQ(16, atomic_load(&self->tb.calls));
	EXPECT_EQ(0ULL, info_of(self->pool).submitted);
	close(sub);
}

/*
 * An adaptive limit (limit 0): the kernel picks the parallelism; the pool
 * never has more threads than the module's ceiling for adaptive limits
 * (sysfs max_limit) plus its spare, and every job runs.
 */
TEST_F_TIMEOUT(pool, adaptive_limit, 60)
{
	struct iopa_pool_opts o = opts_of(0, 0, 300, 0);
	struct iopa_features feat;
	struct iopa_state st;
	unsigned long max_limit = 0, want;
	unsigned int lo = ~0U, hi = 0;
	struct iopa_pool_info info;
	long left;

	ASSERT_EQ(0, iopa_get_features(self->ctx, &feat));
	if (!(feat.features & IOPA_FEAT_ADAPTIVE))
		SKIP(return, "no IOPA_FEAT_ADAPTIVE");
	ASSERT_EQ(0, t_sysfs_read("max_limit", &max_limit));
	/*
	 * The default: max_limit + 1, within the fd budget (libiopa(7),
	 * "File descriptors": half the fds left, two a thread).
	 */
	left = iopa_fds_left();
	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	info = info_of(self->pool);
	want = max_limit + 1;
	if (left >= 0 && (unsigned long)(left / 2 < 3 ? 3 : left / 2) / 2 < want)
		want = (left / 2 < 3 ? 3 : left / 2) / 2;
	EXPECT_EQ(want, info.max_threads);
	self->tb.delay_ms = 3;
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(1500, submit_n(self->pool, self->file, 0, 1500));
	/* Completions are reaped by the wait below: count the jobs run. */
	while (atomic_load(&self->tb.calls) < 1500) {
		if (iopa_get_state(iopa_pool_submitter_fd(self->pool), &st) == 0) {
			lo = st.limit < lo ? st.limit : lo;
			hi = st.limit > hi ? st.limit : hi;
		}
		t_sleep_ms(20);
	}
	EXPECT_EQ(0, iopa_pool_wait(self->pool));
	info = info_of(self->pool);
	TH_LOG("adaptive: limit %u..%u, peak threads %u, max running %d",
	       lo, hi, info.peak_threads, atomic_load(&self->tb.max_running));
	EXPECT_EQ(1500, atomic_load(&self->tb.calls));
	EXPECT_GE(max_limit + 1, info.peak_threads);
	EXPECT_GE((int)max_limit, atomic_load(&self->tb.max_running));
}

/* Bad options and calls on the pool. */
/* Open submitters of the context @ctx, all processes' (the listing). */
static int open_submitters(int ctx)
{
	struct iopa_list l;

	memset(&l, 0, sizeof(l));
	l.entry_size = sizeof(struct iopa_sub_info);
	if (ioctl(ctx, IOPA_IOC_LIST_SUBMITTERS, &l) < 0)
		return -errno;
	return (int)l.total;
}

/*
 * A child forked while the pool lives holds none of the pool's fds: the
 * parent's close ends the pool's submitter (cancelling its pending jobs)
 * though the child is still there, and the child's pool calls answer
 * ECHILD (Core round 2, item 9: the child's copy of the submitter fd
 * kept it open).
 */
TEST_F(pool, fork_child_holds_no_pool_fd)
{
	struct iopa_pool_opts o = opts_of(1, 2, 60000, 1);
	int go[2], st, i;
	pid_t pid;

	ASSERT_EQ(0, iopa_pool_init(&self->pool, self->ctx, &o));
	ASSERT_EQ(0, iopa_pool_create_threads(self->pool, job_fn, &self->tb));
	ASSERT_EQ(1, open_submitters(self->ctx));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct iopa_job j = { .fd = self->file, .len = 4096 };
		char c;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(iopa_pool_submit(self->pool, &j, 1) == -ECHILD &&
		      iopa_pool_close(self->pool) == 0 ? 0 : 1);
	}
	close(go[0]);
	ASSERT_EQ(0, iopa_pool_close(self->pool));
	self->pool = NULL;
	/*
	 * Gone, while the child lives on.  fork() may return here before
	 * the child has run its atfork handler, which closes its copies: a
	 * bounded wait for that; a child that kept its copy would hold the
	 * submitter for good.
	 */
	for (i = 0; i < 200 && open_submitters(self->ctx) > 0; i++)
		usleep(10 * 1000);
	EXPECT_EQ(0, open_submitters(self->ctx));
	ASSERT_EQ(1, write(go[1], "x", 1));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_F(pool, errors)
{
	struct iopa_pool_opts o = opts_of(5, 4, 0, 0);
	struct iopa_job j;
	int sub;

	EXPECT_EQ(-EINVAL, iopa_pool_init(&self->pool, self->ctx, &o));
	EXPECT_EQ(NULL, self->pool);
	o = opts_of(0, 0, 0, 0);
	o.reserved0 = 1;
	EXPECT_EQ(-EINVAL, iopa_pool_init(&self->pool, self->ctx, &o));
	/* A submitter fd is not a context. */
	sub = iopa_submitter_create(self->ctx, 1, 0);
	ASSERT_LE(0, sub);
	EXPECT_EQ(-ENOTTY, iopa_pool_init(&self->pool, sub, NULL));
	close(sub);
	ASSERT_EQ(0, iopa_pool_init(&self->pool, -1, NULL));	/* own context */
	EXPECT_EQ(-EINVAL, iopa_pool_create_threads(self->pool, NULL, NULL));
	memset(&j, 0, sizeof(j));
	j.fd = -1;
	EXPECT_EQ(-EBADF, iopa_pool_submit(self->pool, &j, 1));
	EXPECT_EQ(-EINVAL, iopa_pool_submit(self->pool, &j, 0));
	EXPECT_EQ(-EFAULT, iopa_pool_submit(self->pool, NULL, 1));
	EXPECT_EQ(0, iopa_pool_wait(self->pool));	/* nothing outstanding */
	EXPECT_EQ(0ULL, info_of(self->pool).submitted);
}

static int noop_fn(void *arg, const struct iopa_work *w)
{
	(void)arg;
	(void)w;
	return 7;
}

/* As nobody: the steps of fallback_without_permission; the first failed. */
static int fallback_child(int file)
{
	struct iopa_job j = { .fd = file, .len = 4096, .user_data = 1 };
	struct iopa_pool_opts o;
	struct iopa_pool_info info;
	struct iopa_pool *pool = NULL;
	int fd;

	if (setgroups(0, NULL) || setresgid(65534, 65534, 65534) ||
	    setresuid(65534, 65534, 65534))
		return 10;
	fd = open(LIBIOPA_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES)
		return 11;
	memset(&o, 0, sizeof(o));
	o.flags = IOPA_POOL_F_MODULE;
	if (iopa_pool_init(&pool, -1, &o) != -EACCES || pool)
		return 12;
	o.flags = IOPA_POOL_F_MODULE | IOPA_POOL_F_INPROC;
	if (iopa_pool_init(&pool, -1, &o) != -EINVAL)
		return 13;
	if (iopa_pool_init(&pool, -1, NULL))
		return 14;
	if (iopa_pool_get_info(pool, &info) ||
	    !(info.flags & IOPA_POOL_INFO_F_INPROC) ||
	    info.module_err != EACCES)
		return 15;
	if (iopa_pool_create_threads(pool, noop_fn, NULL) ||
	    iopa_pool_submit(pool, &j, 1) != 1 || iopa_pool_wait(pool))
		return 16;
	if (iopa_pool_get_info(pool, &info) || info.completed != 1 ||
	    info.failed)
		return 17;
	return iopa_pool_close(pool) ? 18 : 0;
}

/*
 * /dev/iopa there but not this user's (mode 0600, owned by root: a user
 * not yet in group iopa, the normal state right after make install): a
 * pool opened the default way runs in the process, its jobs done, and
 * says why (module_err EACCES); asked for the module only
 * (IOPA_POOL_F_MODULE), -EACCES.  Until libiopa 1.7 every such pool
 * failed with -EACCES (Integrators 2, item 1).
 */
TEST_F(pool, fallback_without_permission)
{
	struct stat st;
	int status = -1;
	pid_t pid;

	if (geteuid())
		SKIP(return, "needs root, to drop to nobody");
	ASSERT_EQ(0, stat(LIBIOPA_DEV_PATH, &st));
	ASSERT_EQ(0, chmod(LIBIOPA_DEV_PATH, 0600));
	pid = fork();
	if (!pid)
		_exit(fallback_child(self->file));
	if (pid > 0)
		waitpid(pid, &status, 0);
	/* the device's mode back before anything can fail */
	ASSERT_EQ(0, chmod(LIBIOPA_DEV_PATH, st.st_mode & 07777));
	ASSERT_LT(0, pid);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("step %d failed (see fallback_child())",
		       WEXITSTATUS(status));
}

TEST_HARNESS_MAIN
