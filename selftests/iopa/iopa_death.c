// SPDX-License-Identifier: GPL-2.0
/*
 * iopa failure tests: workers and submitters that die (SIGKILL, exit,
 * close) while holding or owning jobs.  Jobs are never lost nor run twice,
 * the stats stay consistent, and the job files are really released (seen
 * with inotify: IN_CLOSE_* fires when the last reference to the struct
 * file is dropped).
 */
#include "iopa_test.h"

FIXTURE(death) {
	int ctx;
	int sub;	/* limit 16 */
	int wrk;
	int ifd;	/* inotify on path: close events */
	char path[64];	/* job file; nobody holds it open after setup */
};

FIXTURE_SETUP(death)
{
	self->ctx = self->sub = self->wrk = self->ifd = -1;
	self->path[0] = 0;

	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	self->sub = iopa_submitter_create(self->ctx, 16);
	ASSERT_LE(0, self->sub);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	ASSERT_EQ(0, iopa_job_file(self->path, -1));
	self->ifd = iopa_watch_close(self->path);
	ASSERT_LE(0, self->ifd);
}

FIXTURE_TEARDOWN(death)
{
	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	iopa_close(&self->ifd);
	if (self->path[0])
		unlink(self->path);
}

/* Open the job file; the caller closes its fd after submitting. */
static int open_job_file(const char *path)
{
	return iopa_err(open(path, O_RDONLY | O_CLOEXEC));
}

/*
 * A worker in another process: it creates a worker on @ctx, fetches one
 * job (bounded wait), reports { rc, work } on a pipe and then holds the
 * job until it is killed (or its hold pipe is closed).
 */
struct child_report {
	int rc;
	struct iopa_work w;
};

struct worker_child {
	pid_t pid;
	int report;	/* read end */
	int hold;	/* write end; the child blocks reading the other end */
};

static int spawn_worker_child(int ctx, struct worker_child *c)
{
	int rp[2], hp[2];

	if (pipe2(rp, O_CLOEXEC) || pipe2(hp, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		struct child_report rep = { 0 };
		int wfd;

		close(rp[0]);
		close(hp[1]);
		wfd = iopa_worker_create(ctx);
		rep.rc = wfd < 0 ? wfd : iopa_fetch_wait(wfd, &rep.w);
		if (iopa_write_full(rp[1], &rep, sizeof(rep)))
			_exit(1);
		/* hold the job (and its fd) until killed; 60 s bound for strays */
		iopa_wait_readable(hp[0], 60000);
		_exit(0);
	}
	close(rp[1]);
	close(hp[0]);
	c->report = rp[0];
	c->hold = hp[1];
	return 0;
}

/* Wait for the child's report; returns the child's rc or -errno. */
static int worker_child_report(struct worker_child *c, struct iopa_work *w)
{
	struct child_report rep;
	int r = iopa_read_full(c->report, &rep, sizeof(rep));

	if (r)
		return r;
	*w = rep.w;
	return rep.rc;
}

static int worker_child_kill(struct worker_child *c)
{
	int r = iopa_kill_wait(c->pid);

	close(c->report);
	close(c->hold);
	return r;
}

/* ---- worker death ------------------------------------------------------ */

TEST_F(death, worker_killed_requeued)
{
	struct worker_child child;
	struct iopa_work cw, w;
	struct iopa_cqe c[4];
	struct iopa_stats st;
	int fd;

	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(2, iopa_submit_many(self->sub, fd, 1, 2));
	close(fd);

	ASSERT_EQ(0, spawn_worker_child(self->ctx, &child));
	ASSERT_EQ(0, worker_child_report(&child, &cw));
	EXPECT_EQ(1ULL, cw.user_data);
	EXPECT_EQ(0U, cw.flags);
	ASSERT_EQ(0, worker_child_kill(&child));

	/* the same job, requeued at the head (before job 2), marked so */
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	close(w.fd);
	/* a rerun: its own run id, the same job */
	EXPECT_EQ(cw.job_id | IOPA_JOB_ID_RERUN, w.job_id);
	EXPECT_EQ(cw.job_id, IOPA_JOB_ID(w.job_id));
	EXPECT_EQ(1ULL, w.user_data);
	EXPECT_EQ((__u32)IOPA_WORK_F_REQUEUED, w.flags);
	EXPECT_EQ(cw.offset, w.offset);
	EXPECT_EQ(cw.len, w.len);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 42));

	/* exactly one cqe for it, with the worker's result */
	ASSERT_EQ(1, iopa_reap_one(self->sub, &c[0]));
	EXPECT_EQ(cw.job_id, c[0].job_id);
	EXPECT_EQ(42, c[0].res);
	EXPECT_EQ((__u32)IOPA_CQE_F_REQUEUED, c[0].flags);
	ASSERT_EQ(-EAGAIN, iopa_reap_nb(self->sub, c, 4));

	/* job 2 is untouched */
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(2ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));

	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.requeued);
	EXPECT_EQ(3ULL, st.dispatched);
	EXPECT_EQ(2ULL, st.completed);
	EXPECT_EQ(0ULL, st.cancelled);
	EXPECT_EQ(1U, st.nr_workers);
	EXPECT_TRUE(iopa_stats_consistent(&st));
}

struct fetch_thread {
	int wfd;
	int efd;
	int rc;
	struct iopa_work w;
};

static void *fetch_thread_fn(void *arg)
{
	struct fetch_thread *t = arg;

	t->rc = iopa_fetch(t->wfd, &t->w, 0, IOPA_THREAD_NS);
	iopa_efd_signal(t->efd);
	return NULL;
}

/* A worker already waiting in FETCH is woken by the requeue. */
TEST_F_TIMEOUT(death, requeue_wakes_waiting_worker, 60)
{
	struct fetch_thread t = { .wfd = self->wrk, .rc = 1 };
	struct worker_child child;
	struct iopa_work cw;
	pthread_t th;
	int fd;

	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 1));
	close(fd);
	ASSERT_EQ(0, spawn_worker_child(self->ctx, &child));
	ASSERT_EQ(0, worker_child_report(&child, &cw));

	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, fetch_thread_fn, &t));
	EXPECT_EQ(0, iopa_wait_nr_waiting(self->ctx, 1));
	EXPECT_EQ(0, iopa_wait_readable(t.efd, 0));
	ASSERT_EQ(0, worker_child_kill(&child));
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	ASSERT_EQ(0, t.rc);
	close(t.w.fd);
	EXPECT_EQ(cw.job_id | IOPA_JOB_ID_RERUN, t.w.job_id);
	EXPECT_EQ((__u32)IOPA_WORK_F_REQUEUED, t.w.flags);
	ASSERT_EQ(0, iopa_complete(self->wrk, t.w.job_id, 0));
	close(t.efd);
}

/*
 * Limit 1: job 1 (NO_REQUEUE) runs in a worker process, job 2 waits for
 * the slot and a worker waits in FETCH.  The death cancels job 1, which
 * frees the slot: the waiting worker must be woken for job 2.
 */
TEST_F_TIMEOUT(death, cancel_on_death_wakes_waiting_worker, 60)
{
	struct fetch_thread t = { .wfd = self->wrk, .rc = 1 };
	struct worker_child child;
	struct iopa_work cw;
	struct iopa_cqe c;
	pthread_t th;
	int fd;

	ASSERT_EQ(0, iopa_set_limit(self->sub, 1));
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one_flags(self->sub, fd, 1, IOPA_JOB_F_NO_REQUEUE, 0));
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 2));
	close(fd);
	ASSERT_EQ(0, spawn_worker_child(self->ctx, &child));
	ASSERT_EQ(0, worker_child_report(&child, &cw));
	EXPECT_EQ(1ULL, cw.user_data);

	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, fetch_thread_fn, &t));
	EXPECT_EQ(0, iopa_wait_nr_waiting(self->ctx, 1));
	/* job 2 is pending but over the limit: the fetcher keeps waiting */
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	ASSERT_EQ(0, worker_child_kill(&child));
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	ASSERT_EQ(0, t.rc);
	close(t.w.fd);
	EXPECT_EQ(2ULL, t.w.user_data);
	ASSERT_EQ(0, iopa_complete(self->wrk, t.w.job_id, 0));

	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(1ULL, c.user_data);
	EXPECT_EQ(-ECANCELED, c.res);
	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(2ULL, c.user_data);
	EXPECT_EQ(0, c.res);
	close(t.efd);
}

TEST_F(death, worker_killed_no_requeue)
{
	struct worker_child child;
	struct iopa_work cw, w;
	struct iopa_cqe c;
	struct iopa_stats st;
	int fd;

	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one_flags(self->sub, fd, 5, IOPA_JOB_F_NO_REQUEUE, 0));
	close(fd);

	ASSERT_EQ(0, spawn_worker_child(self->ctx, &child));
	ASSERT_EQ(0, worker_child_report(&child, &cw));
	EXPECT_EQ(5ULL, cw.user_data);
	ASSERT_EQ(0, worker_child_kill(&child));

	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(cw.job_id, c.job_id);
	EXPECT_EQ(5ULL, c.user_data);
	EXPECT_EQ(-ECANCELED, c.res);
	EXPECT_EQ((__u32)(IOPA_CQE_F_CANCELED | IOPA_CQE_F_WORKER_DIED), c.flags);
	/* nothing to fetch afterwards, and the file was released */
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));

	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0ULL, st.requeued);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.completed);
	EXPECT_TRUE(iopa_stats_consistent(&st));
}

TEST_F(death, worker_killed_twice)
{
	struct worker_child child;
	struct iopa_work cw1, cw2, w;
	struct iopa_cqe c;
	struct iopa_stats st;
	int fd;

	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 9));
	close(fd);

	ASSERT_EQ(0, spawn_worker_child(self->ctx, &child));
	ASSERT_EQ(0, worker_child_report(&child, &cw1));
	ASSERT_EQ(0, worker_child_kill(&child));

	ASSERT_EQ(0, spawn_worker_child(self->ctx, &child));
	ASSERT_EQ(0, worker_child_report(&child, &cw2));
	EXPECT_EQ(cw1.job_id | IOPA_JOB_ID_RERUN, cw2.job_id);
	EXPECT_EQ((__u32)IOPA_WORK_F_REQUEUED, cw2.flags);
	ASSERT_EQ(0, worker_child_kill(&child));

	/* requeued only once: the second death cancels it */
	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(cw1.job_id, c.job_id);
	EXPECT_EQ(-ECANCELED, c.res);
	/* as iopa.rst's death rules say: it was requeued once, too */
	EXPECT_EQ((__u32)(IOPA_CQE_F_CANCELED | IOPA_CQE_F_WORKER_DIED |
			  IOPA_CQE_F_REQUEUED), c.flags);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));

	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.requeued);
	EXPECT_EQ(2ULL, st.dispatched);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_TRUE(iopa_stats_consistent(&st));
}

TEST_F(death, worker_close_holding_jobs)
{
	struct iopa_job jobs[5];
	struct iopa_work held[3], w;
	struct iopa_cqe c;
	struct iopa_stats st;
	int fd, w2, i, requeued_seen = 0;

	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	for (i = 0; i < 5; i++)
		iopa_job_init(&jobs[i], fd, i);
	jobs[1].flags = IOPA_JOB_F_NO_REQUEUE;
	ASSERT_EQ(5, iopa_submit(self->sub, jobs, 5, 0));
	close(fd);

	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, iopa_fetch_nb(w2, &held[i]));
		close(held[i].fd);
		EXPECT_EQ((__u64)i, held[i].user_data);
	}
	/* closing the worker fd = the worker is gone */
	close(w2);

	/* jobs 0 and 2 come back first (head of the queue), then 3 and 4 */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
		close(w.fd);
		if (i < 2) {
			EXPECT_TRUE(w.user_data == 0 || w.user_data == 2)
				TH_LOG("fetch %d got user_data %llu", i,
				       (unsigned long long)w.user_data);
			EXPECT_EQ((__u32)IOPA_WORK_F_REQUEUED, w.flags);
			requeued_seen += w.flags == IOPA_WORK_F_REQUEUED;
		} else {
			EXPECT_EQ((__u64)i + 1, w.user_data);
			EXPECT_EQ(0U, w.flags);
		}
		ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	}
	EXPECT_EQ(2, requeued_seen);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));

	/* job 1 (NO_REQUEUE) was cancelled as a worker death */
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
		if (c.user_data == 1) {
			EXPECT_EQ(-ECANCELED, c.res);
			EXPECT_EQ((__u32)(IOPA_CQE_F_CANCELED | IOPA_CQE_F_WORKER_DIED),
				  c.flags);
		} else if (c.user_data == 0 || c.user_data == 2) {
			EXPECT_EQ(0, c.res);
			EXPECT_EQ((__u32)IOPA_CQE_F_REQUEUED, c.flags);
		} else {
			EXPECT_EQ(0U, c.flags);
		}
	}
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(2ULL, st.requeued);
	EXPECT_EQ(4ULL, st.completed);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(1U, st.nr_workers);
	EXPECT_TRUE(iopa_stats_consistent(&st));
}

TEST_F(death, worker_killed_while_waiting)
{
	struct worker_child child;
	struct iopa_work w;
	struct iopa_stats st;
	int fd;

	/* a child blocked in FETCH with nothing to fetch */
	ASSERT_EQ(0, spawn_worker_child(self->ctx, &child));
	ASSERT_EQ(0, iopa_wait_nr_waiting(self->ctx, 1));
	ASSERT_EQ(0, worker_child_kill(&child));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0U, st.nr_waiting);
	EXPECT_EQ(1U, st.nr_workers);

	/* the next job goes to a live worker, not lost to the dead one */
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 3));
	close(fd);
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(3ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	ASSERT_STATS_INVARIANT(self->ctx);
}

/*
 * Not a death, but the property the death tests lean on: the kernel's
 * reference to a job's file goes when the job ends (complete, cancel), not
 * when its completion is reaped.
 */
TEST_F(death, file_released_at_end_not_reap)
{
	struct iopa_work w;
	struct iopa_cqe c[2];
	int fd;

	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(2, iopa_submit_many(self->sub, fd, 1, 2));
	close(fd);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	/* one job running, one pending: both hold the file */
	ASSERT_EQ(1, iopa_cancel(self->sub, 2, 0));
	EXPECT_EQ(0, iopa_close_event(self->ifd, 0));
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	/* both ended, neither reaped: the file is released already */
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
	ASSERT_EQ(2, iopa_reap_nb(self->sub, c, 2));
}

/* ---- submitter death --------------------------------------------------- */

/*
 * A submitter in another process: creates a submitter on @ctx, opens
 * @path itself, submits @n jobs, closes its own file fd, reports the
 * count accepted and then waits to be told to exit (a byte on the hold
 * pipe: later children inherit its write end, so EOF would not come).
 */
struct sub_child {
	pid_t pid;
	int report;
	int hold;
};

static int spawn_submitter_child(int ctx, const char *path, int n,
				 struct sub_child *c)
{
	int rp[2], hp[2];

	if (pipe2(rp, O_CLOEXEC) || pipe2(hp, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		int sfd, fd, done;

		close(rp[0]);
		close(hp[1]);
		sfd = iopa_submitter_create(ctx, IOPA_LIMIT_MAX);
		fd = open_job_file(path);
		if (sfd < 0 || fd < 0)
			done = sfd < 0 ? sfd : fd;
		else
			done = iopa_submit_many(sfd, fd, 0, n);
		if (fd >= 0)
			close(fd);
		if (iopa_write_full(rp[1], &done, sizeof(done)))
			_exit(1);
		iopa_wait_readable(hp[0], 60000);
		/* exit with the submitter fd (and its jobs) still open */
		_exit(0);
	}
	close(rp[1]);
	close(hp[0]);
	c->report = rp[0];
	c->hold = hp[1];
	return 0;
}

static int submitter_child_report(struct sub_child *c)
{
	int done, r = iopa_read_full(c->report, &done, sizeof(done));

	return r ? r : done;
}

/* Let the child exit on its own; returns its exit status. */
static int submitter_child_exit(struct sub_child *c)
{
	int r = iopa_write_full(c->hold, "x", 1);

	close(c->hold);
	if (r)
		return r;
	r = iopa_wait_exit(c->pid);
	close(c->report);
	return r;
}

#define MANY_PENDING	10000

TEST_F_TIMEOUT(death, submitter_exit_cancels_pending, 120)
{
	struct iopa_stats before, st;
	struct iopa_work w;
	struct sub_child child;

	ASSERT_EQ(0, iopa_get_stats(self->ctx, &before));
	ASSERT_EQ(0, spawn_submitter_child(self->ctx, self->path, MANY_PENDING, &child));
	ASSERT_EQ(MANY_PENDING, submitter_child_report(&child));

	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(before.pending + MANY_PENDING, st.pending);
	EXPECT_EQ(2U, st.nr_submitters);
	/* the child closed its fd; the jobs keep the file open */
	EXPECT_EQ(0, iopa_close_event(self->ifd, 0));

	ASSERT_EQ(0, submitter_child_exit(&child));

	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(before.cancelled + MANY_PENDING, st.cancelled);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(1U, st.nr_submitters);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	/* its unreaped cancellations went with it */
	EXPECT_EQ(0ULL, st.unreaped);
	/* no job of the dead submitter can be fetched */
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	/* and the file's last reference is gone (10 s is an upper bound) */
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
}

TEST_F(death, submitter_exit_with_running)
{
	struct sub_child child;
	struct iopa_stats st;
	struct iopa_work w;

	ASSERT_EQ(0, spawn_submitter_child(self->ctx, self->path, 2, &child));
	ASSERT_EQ(2, submitter_child_report(&child));

	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	/* drop our fd for the job's file right away: only the job holds it */
	close(w.fd);
	EXPECT_EQ(0, iopa_close_event(self->ifd, 0));

	ASSERT_EQ(0, submitter_child_exit(&child));
	/* the pending job was cancelled, the running one keeps the file */
	EXPECT_EQ(0, iopa_close_event(self->ifd, 0));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.inflight);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(1ULL, st.cancelled);

	/* the worker's COMPLETE still succeeds; the result goes nowhere */
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 17));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	/* and only now is the file released */
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
	/* it cannot be completed again */
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, w.job_id, 17));
}

TEST_F(death, submitter_close_drops_unreaped)
{
	struct iopa_stats st;
	uint64_t jobs_before = 0, jobs_after = 0;
	bool have_sysfs;
	int fd, sub2, i;

	have_sysfs = !iopa_sysfs_read("stats/jobs", &jobs_before);
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	sub2 = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, sub2);
	ASSERT_EQ(3, iopa_submit_many(sub2, fd, 0, 3));
	close(fd);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	}
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(2ULL, st.unreaped);
	if (have_sysfs) {
		ASSERT_EQ(0, iopa_sysfs_read("stats/jobs", &jobs_after));
		EXPECT_EQ(jobs_before + 3, jobs_after);
	}

	close(sub2);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(2ULL, st.completed);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
	/* every job object is freed: none pending, running or unreaped */
	if (have_sysfs) {
		ASSERT_EQ(0, iopa_sysfs_read("stats/jobs", &jobs_after));
		EXPECT_EQ(jobs_before, jobs_after);
	}
}

TEST_F(death, dead_submitter_then_worker_dies)
{
	struct sub_child sc;
	struct worker_child wc[2];
	struct iopa_work w;
	struct iopa_stats st;
	int i, n, drained = 0;

	/* two jobs of a submitter process */
	ASSERT_EQ(0, spawn_submitter_child(self->ctx, self->path, 2, &sc));
	ASSERT_EQ(2, submitter_child_report(&sc));
	/* each held by a worker process */
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, spawn_worker_child(self->ctx, &wc[i]));
		ASSERT_EQ(0, worker_child_report(&wc[i], &w));
	}
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(2ULL, st.inflight);

	/* the submitter goes first, then the workers */
	ASSERT_EQ(0, submitter_child_exit(&sc));
	EXPECT_EQ(0, iopa_close_event(self->ifd, 0));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, worker_child_kill(&wc[i]));
	}

	/*
	 * Whatever the module does with a dead submitter's job whose worker
	 * died (cancel it, or requeue it for nobody to reap), nothing may be
	 * left behind once it is drained.
	 */
	for (n = 0; n < 4; n++) {
		if (iopa_fetch_nb(self->wrk, &w))
			break;
		close(w.fd);
		EXPECT_EQ((__u32)IOPA_WORK_F_REQUEUED, w.flags);
		EXPECT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
		drained++;
	}
	TH_LOG("%d requeued job(s) of the dead submitter were fetched", drained);
	EXPECT_GE(2, drained);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));

	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(2ULL, st.submitted);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_EQ(1U, st.nr_submitters);
	EXPECT_EQ(1U, st.nr_workers);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
}

/* ---- leases: a job running too long is taken back ---------------------- */

#define LEASE_NS	(20 * 1000 * 1000ULL)	/* 20 ms */

/*
 * The lease ends while a worker holds the job: the job is requeued to
 * another worker, exactly as if the first had died; the first worker's
 * COMPLETE then fails with ETIME and the completion says why.
 */
TEST_F(death, lease_expired_requeued)
{
	struct iopa_work w1, w2;
	struct iopa_stats st;
	struct iopa_cqe c;
	int fd, hung;

	hung = iopa_worker_create(self->ctx);
	ASSERT_LE(0, hung);
	ASSERT_EQ(0, iopa_set_lease(self->sub, LEASE_NS));
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 7));
	close(fd);
	ASSERT_EQ(0, iopa_fetch_nb(hung, &w1));
	close(w1.fd);

	/* the lease ends: the job comes back, to a worker that waits */
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w2));
	close(w2.fd);
	EXPECT_EQ(w1.job_id | IOPA_JOB_ID_RERUN, w2.job_id);
	EXPECT_EQ((__u32)IOPA_WORK_F_REQUEUED, w2.flags);
	EXPECT_EQ(-ETIME, iopa_complete(hung, w1.job_id, 1));
	ASSERT_EQ(0, iopa_complete(self->wrk, w2.job_id, 2));

	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(2, c.res);
	EXPECT_EQ((__u32)(IOPA_CQE_F_REQUEUED | IOPA_CQE_F_LEASE_EXPIRED),
		  c.flags);
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.requeued);
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	close(hung);
}

/* With IOPA_JOB_F_NO_REQUEUE the job ends cancelled when its lease does. */
TEST_F(death, lease_expired_no_requeue)
{
	struct iopa_work w;
	struct iopa_cqe c;
	int fd;

	ASSERT_EQ(0, iopa_set_lease(self->sub, LEASE_NS));
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one_flags(self->sub, fd, 8,
					   IOPA_JOB_F_NO_REQUEUE, 0));
	close(fd);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);

	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(w.job_id, c.job_id);
	EXPECT_EQ(-ECANCELED, c.res);
	EXPECT_EQ((__u32)(IOPA_CQE_F_CANCELED | IOPA_CQE_F_LEASE_EXPIRED),
		  c.flags);
	EXPECT_EQ(-ETIME, iopa_complete(self->wrk, w.job_id, 0));
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
	EXPECT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
}

/* A job requeued once (its lease ended) is cancelled when it ends again. */
TEST_F(death, lease_expired_twice_cancelled)
{
	struct iopa_work w1, w2;
	struct iopa_cqe c;
	int fd;

	ASSERT_EQ(0, iopa_set_lease(self->sub, LEASE_NS));
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 9));
	close(fd);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w1));
	close(w1.fd);
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w2));
	close(w2.fd);
	EXPECT_EQ(w1.job_id | IOPA_JOB_ID_RERUN, w2.job_id);

	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(-ECANCELED, c.res);
	EXPECT_EQ((__u32)(IOPA_CQE_F_CANCELED | IOPA_CQE_F_REQUEUED |
			  IOPA_CQE_F_LEASE_EXPIRED), c.flags);
	EXPECT_EQ(-ETIME, iopa_complete(self->wrk, w2.job_id, 0));
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
}

/*
 * The same worker fd fetches the job its lease took back: the late
 * COMPLETE of the first run fails with ETIME and leaves the rerun
 * running; the rerun's own COMPLETE ends the job, with its result.
 * (Before run ids, the late COMPLETE ended the rerun and the rerun's
 * COMPLETE failed with ENOENT.)
 */
TEST_F(death, lease_late_complete_spares_rerun)
{
	struct iopa_work w1, w2;
	struct iopa_cqe c;
	int fd, ret;

	/* long enough for the two calls that follow the rerun's fetch */
	ASSERT_EQ(0, iopa_set_lease(self->sub, 10 * LEASE_NS));
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 10));
	close(fd);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w1));
	close(w1.fd);
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w2));
	close(w2.fd);
	ASSERT_EQ((__u32)IOPA_WORK_F_REQUEUED, w2.flags);
	/* clear the lease: the rerun must not be taken back meanwhile */
	ASSERT_EQ(0, iopa_set_lease(self->sub, 0));

	EXPECT_EQ(-ETIME, iopa_complete(self->wrk, w1.job_id, 1));
	ret = iopa_complete(self->wrk, w2.job_id, 2);

	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(w1.job_id, c.job_id);
	if (ret == -ETIME) {
		/* a slow guest: the rerun's lease ended before it was cleared */
		EXPECT_EQ(-ECANCELED, c.res);
		EXPECT_EQ((__u32)(IOPA_CQE_F_CANCELED | IOPA_CQE_F_REQUEUED |
				  IOPA_CQE_F_LEASE_EXPIRED), c.flags);
	} else {
		ASSERT_EQ(0, ret);
		EXPECT_EQ(2, c.res);
		EXPECT_EQ((__u32)(IOPA_CQE_F_REQUEUED |
				  IOPA_CQE_F_LEASE_EXPIRED), c.flags);
	}
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
}

/*
 * Lease 0 is none (the default, and what SET_LEASE 0 restores): a job
 * held for ten times a lease that was set and cleared completes as
 * usual.  GET_LEASE reads back what was set.
 */
TEST_F(death, lease_zero_is_none)
{
	struct iopa_lease l;
	struct iopa_work w;
	struct iopa_cqe c;
	int fd;

	ASSERT_EQ(0, iopa_ioctl(self->sub, IOPA_IOC_GET_LEASE, &l));
	EXPECT_EQ(0ULL, (unsigned long long)l.lease_ns);
	ASSERT_EQ(0, iopa_set_lease(self->sub, LEASE_NS));
	ASSERT_EQ(0, iopa_ioctl(self->sub, IOPA_IOC_GET_LEASE, &l));
	EXPECT_EQ(LEASE_NS, (unsigned long long)l.lease_ns);
	ASSERT_EQ(0, iopa_set_lease(self->sub, 0));
	fd = open_job_file(self->path);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, fd, 10));
	close(fd);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	usleep(10 * LEASE_NS / 1000);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 3));
	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(3, c.res);
	EXPECT_EQ(0U, c.flags);
}

/* Bad arguments: EINVAL, nothing changes; not on a worker fd. */
TEST_F(death, set_lease_bad_args)
{
	struct iopa_lease l = { .lease_ns = LEASE_NS };

	EXPECT_EQ(-EINVAL, iopa_set_lease(self->sub, IOPA_LEASE_MIN_NS - 1));
	EXPECT_EQ(-EINVAL, iopa_set_lease(self->sub, IOPA_LEASE_MAX_NS + 1));
	l.flags = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_LEASE, &l));
	l.flags = 0;
	l.reserved0 = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_LEASE, &l));
	l.reserved0 = 0;
	l.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_LEASE, &l));
	EXPECT_EQ(-ENOTTY, iopa_set_lease(self->wrk, LEASE_NS));
	ASSERT_EQ(0, iopa_ioctl(self->sub, IOPA_IOC_GET_LEASE, &l));
	EXPECT_EQ(0ULL, (unsigned long long)l.lease_ns);
	EXPECT_EQ(0, iopa_set_lease(self->sub, IOPA_LEASE_MIN_NS));
	EXPECT_EQ(0, iopa_set_lease(self->sub, IOPA_LEASE_MAX_NS));
}

TEST_HARNESS_MAIN
