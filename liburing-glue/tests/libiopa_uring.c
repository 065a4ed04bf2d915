// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The io_uring commands through libiopa's SQE helpers, against the real
 * module: IOPA_URING_CMD_SUBMIT (SQE128 ring), IOPA_URING_CMD_FETCH and
 * IOPA_URING_CMD_COMMIT_AND_FETCH, mixed with the ioctl path, plus
 * cancellation of a parked fetch and a ring going away under one.
 * Every test is skipped if GET_FEATURES lacks IOPA_FEAT_URING_CMD.
 */
#include "libiopa_test.h"

FIXTURE(ur) {
	int ctx, sub, wrk, file;
	struct io_uring ring;	/* SQE128: for SUBMIT */
	bool ring_up;
};

FIXTURE_SETUP(ur)
{
	struct iopa_features feat;

	self->ctx = self->sub = self->wrk = self->file = -1;
	self->ring_up = false;
	self->ctx = iopa_open();
	if (self->ctx == -ENOENT)
		SKIP(return, "no /dev/iopa: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->ctx, &feat));
	if (!(feat.features & IOPA_FEAT_URING_CMD))
		SKIP(return, "module lacks IOPA_FEAT_URING_CMD (features %#llx)",
		     (unsigned long long)feat.features);
	self->sub = iopa_submitter_create(self->ctx, 4, 0);
	ASSERT_LE(0, self->sub);
	self->wrk = iopa_worker_create(self->ctx, 0);
	ASSERT_LE(0, self->wrk);
	self->file = t_job_file(8192);
	ASSERT_LE(0, self->file);
	ASSERT_EQ(0, io_uring_queue_init(16, &self->ring, IORING_SETUP_SQE128));
	self->ring_up = true;
}

FIXTURE_TEARDOWN(ur)
{
	if (self->ring_up)
		io_uring_queue_exit(&self->ring);
	if (self->wrk >= 0)
		close(self->wrk);
	if (self->sub >= 0)
		close(self->sub);
	if (self->ctx >= 0)
		close(self->ctx);
	if (self->file >= 0)
		close(self->file);
}

static struct iopa_job job_of(int fd, uint64_t user_data)
{
	struct iopa_job j;

	memset(&j, 0, sizeof(j));
	j.fd = fd;
	j.len = 4096;
	j.user_data = user_data;
	return j;
}

/* Wait (bounded) for one CQE; copy it out and mark it seen. */
static int wait_cqe(struct io_uring *ring, uint64_t *data, int *res,
		    unsigned int ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000, .tv_nsec = (long long)(ms % 1000) * 1000000,
	};
	struct io_uring_cqe *cqe;
	int r = io_uring_wait_cqe_timeout(ring, &cqe, &ts);

	if (r < 0)
		return r;
	*data = cqe->user_data;
	*res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return 0;
}

static int queue_submit(struct io_uring *ring, int sub_fd,
			const struct iopa_job *job, uint64_t data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -EBUSY;
	iopa_prep_submit(sqe, sub_fd, job);
	io_uring_sqe_set_data64(sqe, data);
	return io_uring_submit(ring);
}

static int queue_fetch(struct io_uring *ring, int wfd, struct iopa_work *w,
		       bool commit, int res, uint64_t data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return -EBUSY;
	if (commit)
		iopa_prep_commit_and_fetch(sqe, wfd, w, res);
	else
		iopa_prep_fetch(sqe, wfd, w);
	io_uring_sqe_set_data64(sqe, data);
	return io_uring_submit(ring);
}

/* SUBMIT through the ring; the worker side uses the ioctls. */
TEST_F(ur, submit_uring_worker_ioctl)
{
	struct iopa_job j = job_of(self->file, 77);
	struct iopa_work work;
	struct iopa_cqe cqe;
	uint64_t data;
	int res;

	ASSERT_EQ(1, queue_submit(&self->ring, self->sub, &j, 5));
	ASSERT_EQ(0, iopa_fetch(self->wrk, &work, 0, T_MS_NS(T_LONG_MS)));
	EXPECT_EQ(77ULL, work.user_data);
	EXPECT_EQ(4096ULL, work.len);
	close(work.fd);
	/* No CQE before the job ends. */
	EXPECT_EQ(-ETIME, wait_cqe(&self->ring, &data, &res, 50));
	ASSERT_EQ(0, iopa_complete(self->wrk, work.job_id, 99));
	ASSERT_EQ(0, wait_cqe(&self->ring, &data, &res, T_LONG_MS));
	EXPECT_EQ(5ULL, data);
	EXPECT_EQ(99, res);
	/* Such jobs never show in REAP. */
	EXPECT_EQ(-EAGAIN, iopa_reap(self->sub, &cqe, 1, 0, 0));
}

/* SUBMIT's errors come back in the CQE, as the ioctl's would. */
TEST_F(ur, submit_uring_errors)
{
	struct iopa_job bad = job_of(-1, 1);
	uint64_t data;
	int res, pfd[2];

	ASSERT_EQ(1, queue_submit(&self->ring, self->sub, &bad, 1));
	ASSERT_EQ(0, wait_cqe(&self->ring, &data, &res, T_LONG_MS));
	EXPECT_EQ(-EBADF, res);
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	bad = job_of(pfd[0], 2);
	ASSERT_EQ(1, queue_submit(&self->ring, self->sub, &bad, 2));
	ASSERT_EQ(0, wait_cqe(&self->ring, &data, &res, T_LONG_MS));
	EXPECT_EQ(-EINVAL, res);
	close(pfd[0]);
	close(pfd[1]);
	bad = job_of(self->file, 3);
	bad.flags = 0x80;
	ASSERT_EQ(1, queue_submit(&self->ring, self->sub, &bad, 3));
	ASSERT_EQ(0, wait_cqe(&self->ring, &data, &res, T_LONG_MS));
	EXPECT_EQ(-EINVAL, res);
	/* On a context or worker fd: not a submitter. */
	bad = job_of(self->file, 4);
	ASSERT_EQ(1, queue_submit(&self->ring, self->wrk, &bad, 4));
	ASSERT_EQ(0, wait_cqe(&self->ring, &data, &res, T_LONG_MS));
	EXPECT_EQ(-ENOTTY, res);
}

/* SUBMIT needs SQE128: a 64-byte SQE cannot hold a job. */
TEST_F(ur, submit_needs_sqe128)
{
	struct io_uring ring64;
	struct io_uring_sqe *sqe;
	uint64_t data;
	int res;

	ASSERT_EQ(0, io_uring_queue_init(4, &ring64, 0));
	sqe = io_uring_get_sqe(&ring64);
	ASSERT_NE(NULL, sqe);
	/* By hand: iopa_prep_submit() would write past this SQE. */
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = self->sub;
	sqe->cmd_op = IOPA_URING_CMD_SUBMIT;
	sqe->user_data = 9;
	ASSERT_EQ(1, io_uring_submit(&ring64));
	ASSERT_EQ(0, wait_cqe(&ring64, &data, &res, T_LONG_MS));
	EXPECT_EQ(-EINVAL, res);
	io_uring_queue_exit(&ring64);
}

/* FETCH and COMMIT_AND_FETCH through a ring; SUBMIT/REAP by ioctl. */
TEST_F(ur, fetch_commit_uring_submit_ioctl)
{
	struct iopa_job j1 = job_of(self->file, 11), j2 = job_of(self->file, 12);
	struct io_uring ring;
	struct iopa_work work;
	struct iopa_cqe cqe;
	uint64_t data;
	int res;

	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	memset(&work, 0, sizeof(work));
	ASSERT_EQ(1, queue_fetch(&ring, self->wrk, &work, false, 0, 1));
	/* Parked: nothing to fetch yet. */
	EXPECT_EQ(-ETIME, wait_cqe(&ring, &data, &res, 50));
	ASSERT_EQ(1, iopa_submit(self->sub, &j1, 1, 0));
	ASSERT_EQ(0, wait_cqe(&ring, &data, &res, T_LONG_MS));
	EXPECT_EQ(1ULL, data);
	ASSERT_EQ(0, res);
	EXPECT_EQ(11ULL, work.user_data);
	ASSERT_LE(0, work.fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(work.fd, F_GETFD) & FD_CLOEXEC);
	close(work.fd);

	/* Complete job 11 with 42 and park for the next. */
	ASSERT_EQ(1, queue_fetch(&ring, self->wrk, &work, true, 42, 2));
	ASSERT_EQ(1, iopa_reap(self->sub, &cqe, 1, IOPA_REAP_F_WAIT,
			       T_MS_NS(T_LONG_MS)));
	EXPECT_EQ(11ULL, cqe.user_data);
	EXPECT_EQ(42, cqe.res);
	EXPECT_EQ(-ETIME, wait_cqe(&ring, &data, &res, 50));
	ASSERT_EQ(1, iopa_submit(self->sub, &j2, 1, 0));
	ASSERT_EQ(0, wait_cqe(&ring, &data, &res, T_LONG_MS));
	EXPECT_EQ(2ULL, data);
	ASSERT_EQ(0, res);
	EXPECT_EQ(12ULL, work.user_data);
	close(work.fd);
	EXPECT_EQ(0, iopa_complete(self->wrk, work.job_id, 7));
	ASSERT_EQ(1, iopa_reap(self->sub, &cqe, 1, 0, 0));
	EXPECT_EQ(7, cqe.res);
	io_uring_queue_exit(&ring);
}

/*
 * IORING_OP_ASYNC_CANCEL on a parked fetch.  io_uring (6.12 and before)
 * does not look for IORING_OP_URING_CMD requests when cancelling by
 * user_data: the cancel then fails with -ENOENT and the fetch stays
 * parked.  Either way no job may be lost: a cancelled fetch completes
 * with -ECANCELED and the job goes to the next fetch; an uncancelled one
 * receives it.
 */
TEST_F(ur, async_cancel_parked_fetch)
{
	struct iopa_job j = job_of(self->file, 21);
	struct io_uring ring;
	struct io_uring_sqe *sqe;
	struct iopa_work work, w2;
	uint64_t data;
	int res, cancel_res = 1, fetch_res = 1;

	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	memset(&work, 0, sizeof(work));
	ASSERT_EQ(1, queue_fetch(&ring, self->wrk, &work, false, 0, 1));
	EXPECT_EQ(-ETIME, wait_cqe(&ring, &data, &res, 50));
	sqe = io_uring_get_sqe(&ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_cancel64(sqe, 1, 0);
	io_uring_sqe_set_data64(sqe, 2);
	ASSERT_EQ(1, io_uring_submit(&ring));
	while (wait_cqe(&ring, &data, &res, 200) == 0) {
		if (data == 1)
			fetch_res = res;
		else
			cancel_res = res;
	}
	TH_LOG("ASYNC_CANCEL: %d; the fetch: %s", cancel_res,
	       fetch_res == 1 ? "still parked" : strerror(-fetch_res));
	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	if (cancel_res == -ENOENT) {
		EXPECT_EQ(1, fetch_res);
		ASSERT_EQ(0, wait_cqe(&ring, &data, &res, T_LONG_MS));
		EXPECT_EQ(1ULL, data);
		EXPECT_EQ(0, res);
		EXPECT_EQ(21ULL, work.user_data);
		close(work.fd);
		EXPECT_EQ(0, iopa_complete(self->wrk, work.job_id, 0));
	} else {
		EXPECT_EQ(0, cancel_res);
		EXPECT_EQ(-ECANCELED, fetch_res);
		ASSERT_EQ(0, iopa_fetch(self->wrk, &w2, 0, T_MS_NS(T_LONG_MS)));
		EXPECT_EQ(21ULL, w2.user_data);
		close(w2.fd);
		EXPECT_EQ(0, iopa_complete(self->wrk, w2.job_id, 0));
	}
	io_uring_queue_exit(&ring);
}

/*
 * An ioctl that waits may fail with EINTR although no signal came: when
 * the ring's exit leaves io_uring task work for this thread.  Retry.
 */
static int fetch_retry(int wfd, struct iopa_work *w, int *eintr)
{
	int r, i;

	for (i = 0; i < 10; i++) {
		r = iopa_fetch(wfd, w, 0, T_MS_NS(T_LONG_MS));
		if (r != -EINTR)
			break;
		(*eintr)++;
	}
	return r;
}

/*
 * The ring goes away under a parked fetch: the fetch completes with
 * -ECANCELED holding no job, so the next job goes to the worker's next
 * fetch.  @delay_ms: how long after io_uring_queue_exit() the job is
 * submitted (0: at once, racing the ring's asynchronous exit work).
 */
static void ring_exit_parked(struct __test_metadata *_metadata,
			     FIXTURE_DATA(ur) *self, unsigned int delay_ms)
{
	struct iopa_job j = job_of(self->file, 31);
	struct io_uring ring;
	struct iopa_work work, w2;
	struct iopa_stats st;
	uint64_t data;
	int res, eintr = 0, r;

	ASSERT_EQ(0, io_uring_queue_init(8, &ring, 0));
	memset(&work, 0, sizeof(work));
	work.fd = -1;
	ASSERT_EQ(1, queue_fetch(&ring, self->wrk, &work, false, 0, 1));
	EXPECT_EQ(-ETIME, wait_cqe(&ring, &data, &res, 50));
	io_uring_queue_exit(&ring);
	if (delay_ms)
		t_sleep_ms(delay_ms);
	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	r = fetch_retry(self->wrk, &w2, &eintr);
	if (eintr)
		TH_LOG("FETCH failed %d time(s) with EINTR, no signal sent", eintr);
	if (r) {
		ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
		TH_LOG("FETCH: %s; submitter: pending %llu inflight %llu; the dead "
		       "fetch's buffer: user_data %llu fd %d (%s)", strerror(-r),
		       (unsigned long long)st.pending,
		       (unsigned long long)st.inflight,
		       (unsigned long long)work.user_data, work.fd,
		       work.fd >= 0 && fcntl(work.fd, F_GETFD) >= 0 ?
		       "open in this process" : "not open");
	}
	ASSERT_EQ(0, r);
	EXPECT_EQ(31ULL, w2.user_data);
	close(w2.fd);
	EXPECT_EQ(0, iopa_complete(self->wrk, w2.job_id, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
}

TEST_F(ur, ring_exit_with_parked_fetch_then_submit)
{
	ring_exit_parked(_metadata, self, 300);
}

TEST_F(ur, ring_exit_with_parked_fetch_submit_at_once)
{
	ring_exit_parked(_metadata, self, 0);
}

static bool sub_stats(int sub, uint64_t *pending, uint64_t *cancelled,
		      uint64_t *completed)
{
	struct iopa_stats st;

	if (iopa_get_stats(sub, &st))
		return false;
	*pending = st.pending;
	*cancelled = st.cancelled;
	*completed = st.completed;
	return true;
}

/* The submitting ring goes away: its pending job is cancelled. */
TEST_F(ur, ring_exit_cancels_pending_submit)
{
	struct iopa_job j = job_of(self->file, 41);
	uint64_t pending = 0, cancelled = 0, completed = 0;
	struct iopa_work w;

	ASSERT_EQ(1, queue_submit(&self->ring, self->sub, &j, 1));
	EXPECT_TRUE(T_WAIT_UNTIL(sub_stats(self->sub, &pending, &cancelled,
					   &completed) && pending == 1, T_LONG_MS));
	io_uring_queue_exit(&self->ring);
	self->ring_up = false;
	EXPECT_TRUE(T_WAIT_UNTIL(sub_stats(self->sub, &pending, &cancelled,
					   &completed) && cancelled == 1, T_LONG_MS));
	EXPECT_EQ(0ULL, pending);
	/* Nothing left to fetch. */
	EXPECT_EQ(-EAGAIN, iopa_fetch(self->wrk, &w, IOPA_FETCH_F_NONBLOCK, 0));
}

/* ... and a running one is not preempted: its worker completes it. */
TEST_F(ur, ring_exit_running_submit)
{
	struct iopa_job j = job_of(self->file, 51);
	uint64_t pending = 0, cancelled = 0, completed = 0;
	struct iopa_work w;
	int eintr = 0;

	ASSERT_EQ(1, queue_submit(&self->ring, self->sub, &j, 1));
	ASSERT_EQ(0, fetch_retry(self->wrk, &w, &eintr));
	EXPECT_EQ(51ULL, w.user_data);
	close(w.fd);
	io_uring_queue_exit(&self->ring);
	self->ring_up = false;
	t_sleep_ms(100);
	EXPECT_EQ(0, iopa_complete(self->wrk, w.job_id, 5));
	ASSERT_TRUE(sub_stats(self->sub, &pending, &cancelled, &completed));
	EXPECT_EQ(1ULL, completed);
	EXPECT_EQ(0ULL, cancelled);
}

/* Both sides on io_uring: a worker thread with its own ring. */
struct uring_worker {
	int wfd;
	int jobs;
	int err;
};

static void *uring_worker_main(void *arg)
{
	struct uring_worker *uw = arg;
	struct iopa_work work;
	struct io_uring ring;
	uint64_t data;
	int res, i;

	memset(&work, 0, sizeof(work));
	uw->err = io_uring_queue_init(4, &ring, 0);
	if (uw->err)
		return NULL;
	for (i = 0; i <= uw->jobs; i++) {
		/* The last one completes job N and parks; cancelled below. */
		uw->err = queue_fetch(&ring, uw->wfd, &work, i > 0,
				      (int)work.user_data * 2, i);
		if (uw->err != 1)
			break;
		uw->err = 0;
		if (i == uw->jobs)
			break;
		uw->err = wait_cqe(&ring, &data, &res, T_LONG_MS);
		if (uw->err || res) {
			uw->err = uw->err ? uw->err : res;
			break;
		}
		close(work.fd);
	}
	io_uring_queue_exit(&ring);	/* cancels the parked fetch */
	return NULL;
}

TEST_F(ur, roundtrip_both_uring)
{
	struct uring_worker uw = { .wfd = self->wrk, .jobs = 8 };
	bool seen[8] = { false };
	pthread_t th;
	uint64_t data;
	int i, res;

	ASSERT_EQ(0, pthread_create(&th, NULL, uring_worker_main, &uw));
	for (i = 0; i < 8; i++) {
		struct iopa_job j = job_of(self->file, 100 + i);

		ASSERT_EQ(1, queue_submit(&self->ring, self->sub, &j, i));
	}
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, wait_cqe(&self->ring, &data, &res, T_LONG_MS));
		ASSERT_GT(8ULL, data);
		EXPECT_EQ((int)(100 + data) * 2, res);
		EXPECT_FALSE(seen[data]);
		seen[data] = true;
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, uw.err);
}

TEST_HARNESS_MAIN
