// SPDX-License-Identifier: GPL-2.0
/*
 * iopa io_uring tests: IORING_OP_URING_CMD with IOPA_URING_CMD_SUBMIT,
 * _FETCH and _COMMIT_AND_FETCH.  Round trips, every error path, a
 * 10,000-job run, workers on a ring (parked fetches, the limit), rings
 * and tasks going away with parked fetches or pending submits, ioctl and
 * io_uring submitters in one context, and a ring worker killed while it
 * holds a job.
 *
 * Commands are built by hand (liburing 2.3 has no io_uring_prep_cmd):
 * the SQE is cleared (64 bytes, or 128 on an IORING_SETUP_SQE128 ring),
 * then opcode, fd, cmd_op and the payload in sqe->cmd.
 *
 * Rings and tasks going away: on 6.7+ io_uring cancels the commands
 * itself (cancelable commands); on 6.1 the module's monitor does, within
 * about 100 ms.  The tests wait for the effects with bounded waits.
 */
#include "iopa_test.h"

#include <dirent.h>

#include <liburing.h>

/* ---- rings -------------------------------------------------------------- */

/* Offset of the command area in an SQE: 16 bytes of 64, 80 of 128. */
#define SQE_CMD_OFF	offsetof(struct io_uring_sqe, cmd)

static size_t ring_sqe_size(const struct io_uring *r)
{
	return (r->flags & IORING_SETUP_SQE128) ? 128 : 64;
}

/* io_uring_queue_init() as -errno; -ENOSYS/-EPERM mean "no io_uring here". */
static int ring_init(struct io_uring *r, unsigned int entries, bool sqe128)
{
	memset(r, 0, sizeof(*r));
	return io_uring_queue_init(entries, r, sqe128 ? IORING_SETUP_SQE128 : 0);
}

/*
 * Queue one IORING_OP_URING_CMD (not submitted yet).  @len bytes of
 * @payload go to sqe->cmd, at most what the SQE has room for.
 */
static int ring_prep(struct io_uring *r, int fd, __u32 op, const void *payload,
		     size_t len, __u64 user_data)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(r);
	size_t room = ring_sqe_size(r) - SQE_CMD_OFF;

	if (!sqe)
		return -EBUSY;
	memset(sqe, 0, ring_sqe_size(r));
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = fd;
	sqe->cmd_op = op;
	memcpy(sqe->cmd, payload, len < room ? len : room);
	sqe->user_data = user_data;
	return 0;
}

/* Submit what was prepared; returns 0 if all @n went in, else -errno/-EIO. */
static int ring_submit(struct io_uring *r, int n)
{
	int ret = io_uring_submit(r);

	if (ret < 0)
		return ret;
	return ret == n ? 0 : -EIO;
}

/*
 * Wait at most @ms (0: only what is there once pending task work ran)
 * for one CQE; copy it out and consume it.  Returns 0, -ETIME, -errno.
 */
static int ring_wait(struct io_uring *r, struct io_uring_cqe *out, int ms)
{
	int64_t deadline = iopa_now_ns() + IOPA_MS_NS(ms);

	for (;;) {
		int64_t left = deadline - iopa_now_ns();
		struct __kernel_timespec ts = { 0 };
		struct io_uring_cqe *cqe;
		int ret;

		if (left > 0) {
			ts.tv_sec = left / 1000000000LL;
			ts.tv_nsec = left % 1000000000LL;
		}
		ret = io_uring_wait_cqe_timeout(r, &cqe, &ts);
		if (ret == -EINTR && left > 0)
			continue;
		if (ret)
			return ret;
		*out = *cqe;
		io_uring_cqe_seen(r, cqe);
		return 0;
	}
}

/*
 * Issue one command and wait (bounded) for its CQE: the CQE's res;
 * -ETIME if none came, -EPROTO if it was not this command's.
 */
static int ring_cmd(struct io_uring *r, int fd, __u32 op, const void *payload,
		    size_t len, __u64 user_data)
{
	struct io_uring_cqe cqe;
	int ret;

	ret = ring_prep(r, fd, op, payload, len, user_data);
	if (!ret)
		ret = ring_submit(r, 1);
	if (!ret)
		ret = ring_wait(r, &cqe, IOPA_LONG_MS);
	if (ret)
		return ret == -ETIME ? -ETIME : -EPROTO;
	return cqe.user_data == user_data ? cqe.res : -EPROTO;
}

static int ring_submit_job(struct io_uring *r, int sfd, const struct iopa_job *j,
			   __u64 user_data)
{
	int ret = ring_prep(r, sfd, IOPA_URING_CMD_SUBMIT, j, sizeof(*j),
			    user_data);

	return ret ? ret : ring_submit(r, 1);
}

static int ring_prep_fetch(struct io_uring *r, int wfd, __u32 op,
			   struct iopa_work *work, int32_t res, __u64 user_data)
{
	struct iopa_uring_fetch f = {
		.work = (uintptr_t)work,
		.res = res,
	};

	return ring_prep(r, wfd, op, &f, sizeof(f), user_data);
}

/* ---- misc --------------------------------------------------------------- */

/* An address with nothing mapped there. */
static void *unmapped_page(void)
{
	void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, 4096);
	return p;
}

/* The result the workers give job @ud: distinct per job, never 0. */
static int32_t res_for(uint64_t ud)
{
	return (int32_t)((ud * 2654435761ULL) % 1000003) + 1;
}

/* user_data bit of the jobs that tell a worker thread to stop. */
#define POISON		(1ULL << 62)

/* Bounded wait for a context stat: nr_workers == @n.  0 or -ETIMEDOUT. */
static int wait_nr_workers(int ctx, uint32_t n, int ms, struct iopa_stats *st)
{
	int64_t deadline = iopa_now_ns() + IOPA_MS_NS(ms);
	int r;

	for (;;) {
		r = iopa_get_stats(ctx, st);
		if (r < 0)
			return r;
		if (st->nr_workers == n)
			return 0;
		if (iopa_now_ns() > deadline)
			return -ETIMEDOUT;
		poll(NULL, 0, 5);
	}
}

/* Bounded wait for /sys/class/misc/iopa/stats/jobs == @n. */
static int wait_sysfs_jobs(uint64_t n, int ms, uint64_t *val)
{
	int64_t deadline = iopa_now_ns() + IOPA_MS_NS(ms);
	int r;

	for (;;) {
		r = iopa_sysfs_read("stats/jobs", val);
		if (r < 0)
			return r;
		if (*val == n)
			return 0;
		if (iopa_now_ns() > deadline)
			return -ETIMEDOUT;
		poll(NULL, 0, 10);
	}
}

/* fstat()s @a and @b: 1 if they are the same inode, 0 if not, -errno. */
static int same_inode(int a, int b)
{
	struct stat sa, sb;

	if (fstat(a, &sa) || fstat(b, &sb))
		return -errno;
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/*
 * Can this process set up an SQE128 ring?  Tried in a child, so that the
 * test's own thread has no io_uring state (nor task work from a closed
 * ring arriving later) but that of the test.
 */
static int uring_probe(void)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		struct io_uring r;
		int ret = ring_init(&r, 2, true);

		_exit(ret < 0 ? -ret : 0);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

/* ---- fixture ------------------------------------------------------------ */

FIXTURE(uring) {
	int ctx;
	int sub;	/* ioctl or io_uring submitter, limit 64 */
	int wrk;	/* ioctl worker */
	int file;	/* the job file, O_RDONLY */
	char path[64];
};

FIXTURE_SETUP(uring)
{
	struct iopa_features f;
	int ret;

	self->ctx = self->sub = self->wrk = self->file = -1;
	self->path[0] = 0;

	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	if (!(f.features & IOPA_FEAT_URING_CMD))
		SKIP(return, "no IOPA_FEAT_URING_CMD");
	ret = uring_probe();
	if (ret == -ENOSYS || ret == -EPERM)
		SKIP(return, "io_uring not available (%d)", ret);
	ASSERT_EQ(0, ret);

	self->sub = iopa_submitter_create(self->ctx, 64);
	ASSERT_LE(0, self->sub);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->file = iopa_job_file(self->path, O_RDONLY);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(uring)
{
	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	iopa_close(&self->file);
	if (self->path[0])
		unlink(self->path);
}

/* ---- 1. SUBMIT round trip ----------------------------------------------- */

TEST_F(uring, submit_round_trip)
{
	struct io_uring r;
	struct io_uring_cqe cqe;
	struct iopa_stats st;
	struct iopa_cqe c;
	struct iopa_work w;
	struct iopa_job j;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 0xabc0000000001234ULL);
	j.offset = 8192;
	j.len = 12345;
	ASSERT_EQ(0, ring_submit_job(&r, self->sub, &j, 0x5eedULL));

	/* pending: no CQE */
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.submitted);
	EXPECT_EQ(1ULL, st.pending);

	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	EXPECT_EQ(j.user_data, w.user_data);
	EXPECT_EQ(8192ULL, w.offset);
	EXPECT_EQ(12345ULL, w.len);
	EXPECT_EQ(0U, w.flags);
	EXPECT_EQ(1, same_inode(w.fd, self->file));
	close(w.fd);
	/* running: still no CQE */
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));

	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 1234));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(1234, cqe.res);
	EXPECT_EQ(0x5eedULL, (unsigned long long)cqe.user_data);
	/* exactly one CQE, and the job never shows in REAP */
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, &c, 1));

	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	io_uring_queue_exit(&r);
}

/* ---- SUBMIT and ioctl workers: when the CQE comes, what it interrupts -- */

/*
 * An ioctl worker thread: fetches a job, reports on @efd, completes it
 * with @res by COMPLETE_AND_FETCH, which waits (long) for the next job;
 * completes that one and reports again.
 */
struct caf_worker {
	int wfd;
	int efd;
	int rc1, rc2, rc3;
	int32_t res;
	struct iopa_work w1, w2;
};

static void *caf_worker_fn(void *arg)
{
	struct caf_worker *t = arg;

	t->rc1 = iopa_fetch(t->wfd, &t->w1, 0, IOPA_THREAD_NS);
	if (!t->rc1)
		close(t->w1.fd);
	iopa_efd_signal(t->efd);
	if (t->rc1)
		return NULL;
	t->rc2 = iopa_complete_and_fetch(t->wfd, t->w1.job_id, t->res, &t->w2,
					 0, IOPA_THREAD_NS);
	if (!t->rc2) {
		close(t->w2.fd);
		t->rc3 = iopa_complete(t->wfd, t->w2.job_id, 0);
	}
	iopa_efd_signal(t->efd);
	return NULL;
}

/* Wait (bounded) until @efd's counter reached @n in total. */
static int efd_wait(int efd, uint64_t *count, uint64_t n)
{
	while (*count < n) {
		uint64_t v;
		int r = iopa_wait_readable(efd, IOPA_LONG_MS);

		if (r <= 0)
			return r ? r : -ETIMEDOUT;
		if (read(efd, &v, sizeof(v)) != sizeof(v))
			return -errno;
		*count += v;
	}
	return 0;
}

/*
 * IOPA_IOC_COMPLETE_AND_FETCH completes an io_uring job: its CQE comes
 * at once, not when the same call's fetch part returns.
 */
TEST_F_TIMEOUT(uring, complete_and_fetch_posts_cqe, 60)
{
	struct caf_worker t = { .res = 555 };
	struct io_uring_cqe cqe = { 0 };
	uint64_t events = 0;
	struct io_uring r;
	struct iopa_job j;
	pthread_t th;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 21);
	ASSERT_EQ(0, ring_submit_job(&r, self->sub, &j, 0x21));
	t.wfd = self->wrk;
	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, caf_worker_fn, &t));
	ASSERT_EQ(0, efd_wait(t.efd, &events, 1));
	ASSERT_EQ(0, t.rc1);
	EXPECT_EQ(21ULL, t.w1.user_data);

	/* the worker now waits in the fetch part, with nothing to fetch */
	ASSERT_EQ(0, iopa_wait_nr_waiting(self->ctx, 1));
	EXPECT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS))
		TH_LOG("no CQE while the worker waits for its next job");
	EXPECT_EQ(555, cqe.res);
	EXPECT_EQ(0x21ULL, (unsigned long long)cqe.user_data);

	/* let the worker go: one more job */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 22));
	EXPECT_EQ(0, efd_wait(t.efd, &events, 2));
	iopa_thread_finish(th, t.efd);
	EXPECT_EQ(0, t.rc2);
	EXPECT_EQ(22ULL, t.w2.user_data);
	EXPECT_EQ(0, t.rc3);
	ASSERT_STATS_INVARIANT(self->ctx);
	close(t.efd);
	io_uring_queue_exit(&r);
}

/*
 * A thread that owns a ring: it SUBMITs one job through it, then waits
 * in IOPA_IOC_FETCH.  The CQE of its SUBMIT is task work for it.
 */
struct ring_owner {
	int sfd;
	int wfd;
	int file;
	int efd_ready;		/* written once the SUBMIT is in */
	int efd_go;		/* FETCH once this is written */
	int efd_done;		/* written when the FETCH returned */
	int submit_rc;
	int fetch_rc;
	int cqe_rc;
	struct iopa_work w;
	struct io_uring_cqe cqe;
};

static void *ring_owner_fn(void *arg)
{
	struct ring_owner *t = arg;
	struct io_uring r;
	struct iopa_job j;

	t->submit_rc = ring_init(&r, 4, true);
	if (!t->submit_rc) {
		iopa_job_init(&j, t->file, 31);
		t->submit_rc = ring_submit_job(&r, t->sfd, &j, 0x31);
	}
	iopa_efd_signal(t->efd_ready);
	if (t->submit_rc)
		return NULL;
	/* its job goes to another worker first */
	if (iopa_wait_readable(t->efd_go, IOPA_THREAD_MS) != 1)
		t->fetch_rc = -ETIMEDOUT;
	else
		t->fetch_rc = iopa_fetch(t->wfd, &t->w, 0, IOPA_THREAD_NS);
	if (!t->fetch_rc)
		close(t->w.fd);
	iopa_efd_signal(t->efd_done);
	t->cqe_rc = ring_wait(&r, &t->cqe, IOPA_LONG_MS);
	io_uring_queue_exit(&r);
	return NULL;
}

/*
 * A thread waiting in IOPA_IOC_FETCH is not interrupted by io_uring work
 * for it (the CQE of its own SUBMIT): no signal arrived, so no EINTR
 * ("a signal arrived while waiting"); it keeps waiting for a job.
 */
TEST_F_TIMEOUT(uring, fetch_wait_not_interrupted_by_cqe, 60)
{
	struct ring_owner t = { 0 };
	struct iopa_work w;
	uint64_t ready = 0;
	pthread_t th;
	int w2, blocked;

	t.sfd = self->sub;
	t.wfd = self->wrk;
	t.file = self->file;
	t.efd_ready = eventfd(0, EFD_CLOEXEC);
	t.efd_go = eventfd(0, EFD_CLOEXEC);
	t.efd_done = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd_ready);
	ASSERT_LE(0, t.efd_go);
	ASSERT_LE(0, t.efd_done);
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	ASSERT_EQ(0, pthread_create(&th, NULL, ring_owner_fn, &t));
	ASSERT_EQ(0, efd_wait(t.efd_ready, &ready, 1));
	ASSERT_EQ(0, t.submit_rc);

	/* take its job, wait until it sleeps in FETCH, complete the job */
	ASSERT_EQ(0, iopa_fetch_nb(w2, &w));
	close(w.fd);
	EXPECT_EQ(31ULL, w.user_data);
	iopa_efd_signal(t.efd_go);
	ASSERT_EQ(0, iopa_wait_nr_waiting(self->ctx, 1));
	ASSERT_EQ(0, iopa_complete(w2, w.job_id, 31));
	/* its FETCH must keep waiting */
	blocked = !iopa_wait_readable(t.efd_done, IOPA_BLOCKED_MS);
	EXPECT_TRUE(blocked);
	/* a job for it */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 32));
	EXPECT_EQ(1, iopa_wait_readable(t.efd_done, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd_done);
	EXPECT_EQ(0, t.fetch_rc)
		TH_LOG("FETCH returned %d (%s)", t.fetch_rc,
		       strerror(-t.fetch_rc));
	if (!t.fetch_rc) {
		EXPECT_EQ(32ULL, t.w.user_data);
		ASSERT_EQ(0, iopa_complete(self->wrk, t.w.job_id, 0));
	} else {
		ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	}
	/* and its SUBMIT's CQE came */
	EXPECT_EQ(0, t.cqe_rc);
	EXPECT_EQ(31, t.cqe.res);
	EXPECT_EQ(0x31ULL, (unsigned long long)t.cqe.user_data);
	ASSERT_STATS_INVARIANT(self->ctx);
	close(w2);
	close(t.efd_ready);
	close(t.efd_go);
	close(t.efd_done);
}

/* ---- 2. errors ---------------------------------------------------------- */

/* Nothing was accepted: the context has no job. */
#define ASSERT_NO_JOBS(ctx) do { \
	struct iopa_stats __s; \
	ASSERT_EQ(0, iopa_get_stats((ctx), &__s)); \
	EXPECT_EQ(0ULL, __s.submitted); \
	EXPECT_EQ(0ULL, __s.pending); \
} while (0)

TEST_F(uring, submit_needs_sqe128)
{
	struct io_uring r;
	struct iopa_job j;

	ASSERT_EQ(0, ring_init(&r, 4, false));
	iopa_job_init(&j, self->file, 1);
	/* only the first 16 bytes of the job fit a 64-byte SQE */
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 1));
	ASSERT_NO_JOBS(self->ctx);
	io_uring_queue_exit(&r);
}

TEST_F(uring, submit_bad_job_flags)
{
	struct io_uring r;
	struct iopa_job j;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 1);
	j.flags = 0x80;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 1));
	j.flags = ~IOPA_JOB_F_MASK;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 2));
	ASSERT_NO_JOBS(self->ctx);
	io_uring_queue_exit(&r);
}

TEST_F(uring, submit_bad_reserved)
{
	struct io_uring r;
	struct iopa_job j;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 1);
	j.reserved = 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 1));
	ASSERT_NO_JOBS(self->ctx);
	io_uring_queue_exit(&r);
}

/*
 * The 80-byte command area of a SUBMIT past its struct iopa_job must be
 * zero: room for later, refused if set (Core round 2, item 12).
 */
TEST_F(uring, submit_sqe128_tail_not_zero)
{
	unsigned char area[80];
	struct io_uring r;
	struct iopa_job j;
	size_t off;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 1);
	for (off = sizeof(j); off < sizeof(area); off += 13) {
		memset(area, 0, sizeof(area));
		memcpy(area, &j, sizeof(j));
		area[off] = 1;
		EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub,
					    IOPA_URING_CMD_SUBMIT, area,
					    sizeof(area), off))
			TH_LOG("byte %zu of the command area", off);
	}
	area[sizeof(area) - 1] = 0x80;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    area, sizeof(area), 99));
	ASSERT_NO_JOBS(self->ctx);
	io_uring_queue_exit(&r);
}

TEST_F(uring, submit_bad_fd)
{
	struct io_uring r;
	struct iopa_job j;
	int closed;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	closed = iopa_next_fd();
	ASSERT_LE(0, closed);
	iopa_job_init(&j, closed, 1);
	EXPECT_EQ(-EBADF, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				   &j, sizeof(j), 1));
	iopa_job_init(&j, -1, 2);
	EXPECT_EQ(-EBADF, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				   &j, sizeof(j), 2));
	ASSERT_NO_JOBS(self->ctx);
	io_uring_queue_exit(&r);
}

TEST_F(uring, submit_pipe_fd)
{
	struct io_uring r;
	struct iopa_job j;
	int p[2];

	ASSERT_EQ(0, ring_init(&r, 4, true));
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	iopa_job_init(&j, p[0], 1);
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 1));
	/* nor the ring itself */
	iopa_job_init(&j, r.ring_fd, 2);
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 2));
	ASSERT_NO_JOBS(self->ctx);
	close(p[0]);
	close(p[1]);
	io_uring_queue_exit(&r);
}

/*
 * max_jobs into *@old, written back as it was: 0 if the tunables can be
 * written (the caller sets and restores it), else -errno.
 */
static int max_jobs_writable(uint64_t *old)
{
	int ret = iopa_sysfs_read("max_jobs", old);

	return ret ? ret : iopa_sysfs_write("max_jobs", *old);
}

/*
 * A SUBMIT at a job cap ends at once: -EAGAIN when the submitter has
 * max_jobs outstanding, -ENOSPC when the module has max_total_jobs.
 */
TEST_F(uring, submit_at_caps)
{
	uint64_t old_max = 0, old_total = 0, jobs = 0;
	struct io_uring r;
	struct iopa_job j;
	int ret;

	ASSERT_EQ(0, iopa_sysfs_read("max_total_jobs", &old_total));
	ret = max_jobs_writable(&old_max);
	if (ret == -EACCES || ret == -EPERM)
		SKIP(return, "cannot write the tunables (not root?)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ring_init(&r, 4, true));

	/* EXPECTs from here on, so that the tunables are put back */
	EXPECT_EQ(0, iopa_sysfs_write("max_jobs", 2));
	EXPECT_EQ(2, iopa_submit_many(self->sub, self->file, 0, 2));
	iopa_job_init(&j, self->file, 1);
	EXPECT_EQ(-EAGAIN, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 1));
	EXPECT_EQ(0, iopa_sysfs_write("max_jobs", old_max));
	EXPECT_EQ(0, iopa_sysfs_read("stats/jobs", &jobs));
	EXPECT_EQ(0, iopa_sysfs_write("max_total_jobs", jobs));
	EXPECT_EQ(-ENOSPC, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 2));
	EXPECT_EQ(0, iopa_sysfs_write("max_total_jobs", old_total));
	EXPECT_EQ(1, iopa_cancel(self->sub, 0, 0));
	EXPECT_EQ(1, iopa_cancel(self->sub, 1, 0));
	io_uring_queue_exit(&r);
}

/* This process's io_uring worker threads (iou-wrk-*), or -errno. */
static int count_iou_wrk(void)
{
	struct dirent *de;
	char path[300], comm[32];
	int n = 0;
	DIR *d = opendir("/proc/self/task");

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		ssize_t len;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm",
			 de->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		len = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (len > 0) {
			comm[len] = 0;
			n += !strncmp(comm, "iou-wrk", 7);
		}
	}
	closedir(d);
	return n;
}

/*
 * A SUBMIT at max_jobs is answered -EAGAIN in its CQE at once, from the
 * issue: returned by ->uring_cmd, -EAGAIN made io_uring issue it again
 * from an io-wq worker, blocking, which took a file and its location
 * again before failing the same way.
 */
TEST_F(uring, submit_full_not_punted_to_io_wq)
{
	uint64_t old_max = 0;
	struct io_uring r;
	struct iopa_job j;
	int ret, before;

	ret = max_jobs_writable(&old_max);
	if (ret == -EACCES || ret == -EPERM)
		SKIP(return, "cannot write the tunables (not root?)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ring_init(&r, 4, true));
	before = count_iou_wrk();
	ASSERT_LE(0, before);

	/* EXPECTs from here on, so that max_jobs is put back */
	EXPECT_EQ(0, iopa_sysfs_write("max_jobs", 2));
	EXPECT_EQ(2, iopa_submit_many(self->sub, self->file, 0, 2));
	iopa_job_init(&j, self->file, 5);
	EXPECT_EQ(-EAGAIN, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 5));
	/* no io-wq worker was started for it */
	EXPECT_EQ(before, count_iou_wrk());
	EXPECT_EQ(0, iopa_sysfs_write("max_jobs", old_max));
	EXPECT_EQ(1, iopa_cancel(self->sub, 0, 0));
	EXPECT_EQ(1, iopa_cancel(self->sub, 1, 0));
	io_uring_queue_exit(&r);
}

/* An ioctl SUBMIT with IOPA_SUBMIT_F_WAIT, in a thread: 1 or -errno. */
struct wait_submit {
	int sfd, file, efd, rc;
};

static void noop_handler(int sig)
{
	(void)sig;
}

static void *wait_submit_fn(void *arg)
{
	struct wait_submit *t = arg;

	t->rc = iopa_submit_one_flags(t->sfd, t->file, 77, 0,
				      IOPA_SUBMIT_F_WAIT);
	iopa_efd_signal(t->efd);
	return NULL;
}

/*
 * The end of an io_uring job makes room at max_jobs: a SUBMIT waiting
 * for room (IOPA_SUBMIT_F_WAIT) wakes.  It slept on: the submitter's
 * waitqueue was woken only for jobs whose completion is reaped.
 */
TEST_F_TIMEOUT(uring, uring_job_end_wakes_room_waiter, 60)
{
	struct wait_submit t = { .sfd = self->sub, .file = self->file };
	struct sigaction sa = { .sa_handler = noop_handler };
	struct io_uring_cqe cqe = { 0 };
	uint64_t old_max = 0, events = 0;
	struct iopa_work w;
	struct io_uring r;
	struct iopa_job j;
	pthread_t th;
	int ret, i;

	ret = max_jobs_writable(&old_max);
	if (ret == -EACCES || ret == -EPERM)
		SKIP(return, "cannot write the tunables (not root?)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, ring_init(&r, 4, true));
	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	/* no SA_RESTART: a signal gets the thread out of a wait that lasts */
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));

	/* EXPECTs from here on, so that max_jobs is put back */
	EXPECT_EQ(0, iopa_sysfs_write("max_jobs", 2));
	for (i = 0; i < 2; i++) {
		iopa_job_init(&j, self->file, 100 + i);
		EXPECT_EQ(0, ring_submit_job(&r, self->sub, &j, 100 + i));
	}
	EXPECT_EQ(-EAGAIN, iopa_submit_one(self->sub, self->file, 1));
	EXPECT_EQ(0, pthread_create(&th, NULL, wait_submit_fn, &t));
	/* the thread waits for room: nothing signalled yet */
	EXPECT_EQ(0, iopa_wait_readable(t.efd, 200));
	/* one io_uring job ends: its CQE, and room for the waiter */
	EXPECT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	EXPECT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ret = efd_wait(t.efd, &events, 1);
	EXPECT_EQ(0, ret);
	if (ret)
		pthread_kill(th, SIGUSR1);	/* it slept on: -EINTR */
	pthread_join(th, NULL);
	EXPECT_EQ(1, t.rc);
	EXPECT_EQ(0, iopa_sysfs_write("max_jobs", old_max));
	/* the other io_uring job (its CQE: -ECANCELED), the thread's */
	EXPECT_EQ(1, iopa_cancel(self->sub, 201 - w.user_data, 0));
	EXPECT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(-ECANCELED, cqe.res);
	if (t.rc == 1)
		EXPECT_EQ(1, iopa_cancel(self->sub, 77, 0));
	close(t.efd);
	io_uring_queue_exit(&r);
}

TEST_F(uring, unknown_cmd_op)
{
	struct iopa_uring_fetch f = { 0 };
	struct iopa_work w = { 0 };
	struct io_uring r;
	struct iopa_job j;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 1);
	f.work = (uintptr_t)&w;
	/* a free number of the command range, and ioctl numbers */
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->sub,
				    _IOW(IOPA_IOC_MAGIC, 0x3f, struct iopa_job),
				    &j, sizeof(j), 1));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->sub, IOPA_IOC_SUBMIT,
				    &j, sizeof(j), 2));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->sub, 0, &j, sizeof(j), 3));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->wrk,
				    _IOWR(IOPA_IOC_MAGIC, 0x3f,
					  struct iopa_uring_fetch),
				    &f, sizeof(f), 4));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->wrk, IOPA_IOC_FETCH,
				    &f, sizeof(f), 5));
	ASSERT_NO_JOBS(self->ctx);
	io_uring_queue_exit(&r);
}

TEST_F(uring, cmd_on_wrong_fd_kind)
{
	struct iopa_uring_fetch f = { 0 };
	struct iopa_work w = { 0 };
	struct iopa_stats st;
	struct io_uring r;
	struct iopa_job j;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	iopa_job_init(&j, self->file, 1);
	f.work = (uintptr_t)&w;
	w.fd = -1;

	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->wrk, IOPA_URING_CMD_SUBMIT,
				    &j, sizeof(j), 1));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->sub, IOPA_URING_CMD_FETCH,
				    &f, sizeof(f), 2));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->sub,
				    IOPA_URING_CMD_COMMIT_AND_FETCH,
				    &f, sizeof(f), 3));
	/* nothing submitted, nothing fetched: the one ioctl job is pending */
	EXPECT_EQ(-1, w.fd);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.submitted);
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.dispatched);
	io_uring_queue_exit(&r);
}

TEST_F(uring, fetch_bad_res_or_flags)
{
	struct iopa_uring_fetch f = { 0 };
	struct iopa_work w;
	struct iopa_stats st;
	struct io_uring r;

	ASSERT_EQ(0, ring_init(&r, 4, false));
	/* a job is there: none of these may take it */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	memset(&w, 0, sizeof(w));
	w.fd = -1;
	f.work = (uintptr_t)&w;

	f.res = 5;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk, IOPA_URING_CMD_FETCH,
				    &f, sizeof(f), 1));
	f.res = 0;
	f.flags = 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk, IOPA_URING_CMD_FETCH,
				    &f, sizeof(f), 2));
	f.flags = 0x80000000U;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk,
				    IOPA_URING_CMD_COMMIT_AND_FETCH,
				    &f, sizeof(f), 3));
	EXPECT_EQ(-1, w.fd);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0ULL, st.dispatched);
	EXPECT_EQ(1ULL, st.pending);

	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(7ULL, w.user_data);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	io_uring_queue_exit(&r);
}

TEST_F(uring, commit_unknown_job)
{
	struct iopa_uring_fetch f = { 0 };
	struct iopa_work held, uw, w;
	struct iopa_stats st;
	struct io_uring r;
	int w2;

	ASSERT_EQ(0, ring_init(&r, 4, false));
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	/* job 1 held by the ioctl worker, job 2 pending */
	ASSERT_EQ(2, iopa_submit_many(self->sub, self->file, 1, 2));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &held));
	close(held.fd);
	ASSERT_EQ(1ULL, held.user_data);

	/* w2 holds nothing: committing a job id nobody has, then wrk's */
	memset(&uw, 0, sizeof(uw));
	uw.job_id = 999999;
	uw.fd = -1;
	f.work = (uintptr_t)&uw;
	f.res = 3;
	EXPECT_EQ(-ENOENT, ring_cmd(&r, w2, IOPA_URING_CMD_COMMIT_AND_FETCH,
				    &f, sizeof(f), 1));
	EXPECT_EQ(999999ULL, uw.job_id);
	EXPECT_EQ(-1, uw.fd);
	uw.job_id = held.job_id;
	EXPECT_EQ(-ENOENT, ring_cmd(&r, w2, IOPA_URING_CMD_COMMIT_AND_FETCH,
				    &f, sizeof(f), 2));
	EXPECT_EQ(held.job_id, uw.job_id);
	EXPECT_EQ(-1, uw.fd);

	/* no job was fetched: job 2 is pending, job 1 still wrk's */
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.dispatched);
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(1ULL, st.inflight);
	EXPECT_EQ(0ULL, st.completed);
	ASSERT_EQ(0, iopa_complete(self->wrk, held.job_id, 0));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(2ULL, w.user_data);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	close(w2);
	io_uring_queue_exit(&r);
}

/* FETCH with a job at once, work buffer unmapped: -EFAULT, job back. */
TEST_F(uring, fetch_efault)
{
	struct iopa_uring_fetch f = { 0 };
	struct iopa_stats st;
	struct iopa_work w;
	struct io_uring r;
	int next;

	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	f.work = (uintptr_t)unmapped_page();
	ASSERT_NE(0ULL, f.work);
	next = iopa_next_fd();
	EXPECT_EQ(-EFAULT, ring_cmd(&r, self->wrk, IOPA_URING_CMD_FETCH,
				    &f, sizeof(f), 1));
	/* no fd was installed for it */
	EXPECT_EQ(next, iopa_next_fd());

	/* the job is pending again, fetchable, and was not "requeued" */
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(0ULL, st.requeued);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(7ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	io_uring_queue_exit(&r);
}

/* The same, for a FETCH that was parked when the job came. */
TEST_F(uring, parked_fetch_efault)
{
	struct iopa_uring_fetch f = { 0 };
	struct io_uring_cqe cqe;
	struct iopa_work w;
	struct io_uring r;
	int next;

	ASSERT_EQ(0, ring_init(&r, 4, false));
	f.work = (uintptr_t)unmapped_page();
	ASSERT_NE(0ULL, f.work);
	next = iopa_next_fd();
	ASSERT_EQ(0, ring_prep(&r, self->wrk, IOPA_URING_CMD_FETCH, &f,
			       sizeof(f), 1));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* parked */

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(-EFAULT, cqe.res);
	EXPECT_EQ(1ULL, (unsigned long long)cqe.user_data);
	EXPECT_EQ(next, iopa_next_fd());

	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(7ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	ASSERT_STATS_INVARIANT(self->ctx);
	io_uring_queue_exit(&r);
}

/* COMMIT_AND_FETCH cannot even read the job id: -EFAULT, nothing done. */
TEST_F(uring, commit_efault)
{
	struct iopa_uring_fetch f = { 0 };
	struct iopa_stats st;
	struct iopa_work held;
	struct io_uring r;

	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(2, iopa_submit_many(self->sub, self->file, 1, 2));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &held));
	close(held.fd);
	f.work = (uintptr_t)unmapped_page();
	ASSERT_NE(0ULL, f.work);
	f.res = 9;
	EXPECT_EQ(-EFAULT, ring_cmd(&r, self->wrk,
				    IOPA_URING_CMD_COMMIT_AND_FETCH,
				    &f, sizeof(f), 1));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.inflight);
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.completed);
	ASSERT_EQ(0, iopa_complete(self->wrk, held.job_id, 0));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	io_uring_queue_exit(&r);
}

/*
 * Parked fetches count against IOPA_WORKER_MAX_JOBS like held jobs: one
 * more is refused with EBUSY at once.  Then a job for each parked one.
 */
TEST_F_TIMEOUT(uring, parked_fetches_ebusy_at_max_jobs, 60)
{
	static struct iopa_work work[IOPA_WORKER_MAX_JOBS + 1];
	struct iopa_uring_fetch f = { 0 };
	unsigned char seen[IOPA_WORKER_MAX_JOBS] = { 0 };
	struct io_uring_cqe cqe;
	struct iopa_features ft;
	struct io_uring r;
	int i, max, w2;

	ASSERT_EQ(0, iopa_get_features(self->ctx, &ft));
	max = ft.worker_max_jobs;
	ASSERT_GE(IOPA_WORKER_MAX_JOBS, max);
	ASSERT_EQ(0, ring_init(&r, 2 * IOPA_WORKER_MAX_JOBS, false));
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	for (i = 0; i < max; i++)
		ASSERT_EQ(0, ring_prep_fetch(&r, w2, IOPA_URING_CMD_FETCH,
					     &work[i], 0, i));
	ASSERT_EQ(0, ring_submit(&r, max));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* all parked */

	f.work = (uintptr_t)&work[max];
	EXPECT_EQ(-EBUSY, ring_cmd(&r, w2, IOPA_URING_CMD_FETCH, &f,
				   sizeof(f), 1000));
	/* the ioctl counts them too (it looked at the jobs held only) */
	EXPECT_EQ(-EBUSY, iopa_fetch_nb(w2, &work[max]));

	/* each parked fetch gets a job */
	ASSERT_EQ(max, iopa_submit_many(self->sub, self->file, 0, max));
	for (i = 0; i < max; i++) {
		struct iopa_work *w;

		ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
		ASSERT_EQ(0, cqe.res);
		ASSERT_GT((uint64_t)max, cqe.user_data);
		w = &work[cqe.user_data];
		close(w->fd);
		ASSERT_GT((uint64_t)max, w->user_data);
		EXPECT_EQ(0, seen[w->user_data]++);
		ASSERT_EQ(0, iopa_complete(w2, w->job_id, 0));
	}
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	ASSERT_STATS_INVARIANT(self->ctx);
	close(w2);
	io_uring_queue_exit(&r);
}

/* ---- 3. 10,000 jobs over io_uring, ioctl workers ------------------------ */

#define MANY_JOBS	10000
#define MANY_WORKERS	4
#define MANY_BATCH	128
#define MANY_INFLIGHT	512	/* the CQ ring's size */
#define MANY_SQE_UD	(1ULL << 40)	/* SQE user_data = this + job's */

struct many {
	int wfd[MANY_WORKERS];
	atomic_int fetched[MANY_JOBS];
	atomic_int bad;
	atomic_int errors;
	atomic_int last_err;
};

struct many_arg {
	struct many *m;
	int idx;
};

/*
 * An ioctl worker: FETCH, COMPLETE until it gets a poison job.  (Not
 * COMPLETE_AND_FETCH: complete_and_fetch_posts_cqe tests that one.)
 */
static void *many_worker(void *arg)
{
	struct many_arg *a = arg;
	struct many *m = a->m;
	int wfd = m->wfd[a->idx];
	struct iopa_work w;
	int r;

	for (;;) {
		uint64_t ud;

		r = iopa_fetch(wfd, &w, 0, IOPA_THREAD_NS);
		if (r)
			break;
		ud = w.user_data;
		close(w.fd);
		if (ud & POISON) {
			r = iopa_complete(wfd, w.job_id, 0);
			break;
		}
		if (ud >= MANY_JOBS)
			atomic_fetch_add(&m->bad, 1);
		else
			atomic_fetch_add(&m->fetched[ud], 1);
		r = iopa_complete(wfd, w.job_id, res_for(ud));
		if (r)
			break;
	}
	if (r) {
		atomic_store(&m->last_err, r);
		atomic_fetch_add(&m->errors, 1);
	}
	return NULL;
}

TEST_F_TIMEOUT(uring, ten_thousand_submits, 240)
{
	static struct many m;
	static unsigned char seen[MANY_JOBS];
	struct many_arg args[MANY_WORKERS];
	pthread_t th[MANY_WORKERS];
	int i, sent = 0, got = 0, inflight = 0, psub;
	int dup = 0, bad_ud = 0, bad_res = 0, once = 0, twice = 0;
	struct iopa_stats st;
	struct iopa_cqe c[MANY_WORKERS];
	struct io_uring_cqe cqe;
	struct io_uring r;

	memset(&m, 0, sizeof(m));
	memset(seen, 0, sizeof(seen));
	ASSERT_EQ(0, ring_init(&r, 256, true));
	ASSERT_EQ(MANY_INFLIGHT, (int)*r.cq.kring_entries);
	for (i = 0; i < MANY_WORKERS; i++) {
		m.wfd[i] = iopa_worker_create(self->ctx);
		ASSERT_LE(0, m.wfd[i]);
	}
	for (i = 0; i < MANY_WORKERS; i++) {
		args[i].m = &m;
		args[i].idx = i;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, many_worker, &args[i]));
	}

	while (got < MANY_JOBS) {
		uint64_t ud;
		int ret;

		/* a batch whenever it fits the CQ ring */
		if (sent < MANY_JOBS && inflight + MANY_BATCH <= MANY_INFLIGHT) {
			int n = MANY_JOBS - sent;

			if (n > MANY_BATCH)
				n = MANY_BATCH;
			for (i = 0; i < n; i++) {
				struct iopa_job j;

				iopa_job_init(&j, self->file, sent + i);
				ASSERT_EQ(0, ring_prep(&r, self->sub,
						       IOPA_URING_CMD_SUBMIT,
						       &j, sizeof(j),
						       MANY_SQE_UD + sent + i));
			}
			ASSERT_EQ(0, ring_submit(&r, n));
			sent += n;
			inflight += n;
			continue;
		}
		ret = ring_wait(&r, &cqe, IOPA_LONG_MS);
		if (ret) {
			TH_LOG("no CQE (%d) after %d of %d sent", ret, got, sent);
			break;
		}
		got++;
		inflight--;
		/* the CQE carries the SQE's user_data, res the job's result */
		ud = cqe.user_data - MANY_SQE_UD;
		if (cqe.user_data < MANY_SQE_UD || ud >= MANY_JOBS) {
			bad_ud++;
			continue;
		}
		if (seen[ud]++)
			dup++;
		if (cqe.res != res_for(ud))
			bad_res++;
	}

	/* one poison job per worker, then they are done */
	psub = iopa_submitter_create(self->ctx, MANY_WORKERS);
	ASSERT_LE(0, psub);
	for (i = 0; i < MANY_WORKERS; i++)
		ASSERT_EQ(1, iopa_submit_one(psub, self->file, POISON | i));
	for (i = 0; i < MANY_WORKERS; i++)
		pthread_join(th[i], NULL);
	EXPECT_EQ(MANY_WORKERS, iopa_reap(psub, c, MANY_WORKERS, IOPA_REAP_F_WAIT,
					  IOPA_LONG_NS));

	EXPECT_EQ(0, atomic_load(&m.errors))
		TH_LOG("worker error %d", atomic_load(&m.last_err));
	ASSERT_EQ(MANY_JOBS, got);
	EXPECT_EQ(0, bad_ud);
	EXPECT_EQ(0, dup);
	EXPECT_EQ(0, bad_res);
	EXPECT_EQ(0, atomic_load(&m.bad));
	for (i = 0; i < MANY_JOBS; i++) {
		once += seen[i] == 1;
		twice += atomic_load(&m.fetched[i]) != 1;
	}
	EXPECT_EQ(MANY_JOBS, once);
	EXPECT_EQ(0, twice) TH_LOG("%d jobs not fetched exactly once", twice);
	/* no stray CQE, nothing to REAP */
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, c, 1));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ((__u64)MANY_JOBS, st.submitted);
	EXPECT_EQ((__u64)MANY_JOBS, st.dispatched);
	EXPECT_EQ((__u64)MANY_JOBS, st.completed);
	EXPECT_EQ(0ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(0ULL, st.unreaped);
	for (i = 0; i < MANY_WORKERS; i++)
		close(m.wfd[i]);
	close(psub);
	io_uring_queue_exit(&r);
}

/* ---- 4./5. workers on a ring -------------------------------------------- */

#define RW_SLOTS	8

/*
 * A worker thread with its own ring (64-byte SQEs) and RW_SLOTS FETCH
 * commands.  Each job is completed (with res_for()) by the
 * COMMIT_AND_FETCH that re-arms its slot; a poison job is completed by
 * ioctl and retires its slot.  The thread ends when all slots are
 * retired: nothing is parked any more and its ring can go, on any kernel.
 *
 * With @limit, the thread holds jobs until it has @limit of them (or
 * nothing more can come), then commits them all: it checks that it
 * never sees more than @limit at once and that it does reach @limit.
 */
struct rw {
	int wfd;
	int sfd;		/* the submitter, for GET_STATS */
	int file;		/* the job file, to compare inodes */
	int total;		/* jobs to expect, poisons included */
	int limit;		/* 0: commit each job as it comes */
	int32_t *res;		/* per real job: the res given (0: none) */
	int nreal;
	struct iopa_work work[RW_SLOTS];
	/* results */
	int done;		/* CQEs with a job */
	int max_held;
	uint64_t max_inflight;	/* GET_STATS, sampled after each CQE */
	int errors;
	char err[160];
};

#define RW_FAIL(rw, ...) do { \
	if (!(rw)->errors++) \
		snprintf((rw)->err, sizeof((rw)->err), __VA_ARGS__); \
} while (0)

static void *rw_thread(void *arg)
{
	struct rw *rw = arg;
	struct iopa_work *work = rw->work;
	int held_slot[RW_SLOTS];
	int parked = 0, held = 0, retired = 0, i, ret;
	struct io_uring r;

	ret = ring_init(&r, 4 * RW_SLOTS, false);
	if (ret) {
		RW_FAIL(rw, "ring: %d", ret);
		return NULL;
	}
	for (i = 0; i < RW_SLOTS; i++) {
		memset(&work[i], 0, sizeof(work[i]));
		if (ring_prep_fetch(&r, rw->wfd, IOPA_URING_CMD_FETCH, &work[i],
				    0, i)) {
			RW_FAIL(rw, "no SQE");
			return NULL;
		}
	}
	ret = ring_submit(&r, RW_SLOTS);
	if (ret) {
		RW_FAIL(rw, "submit: %d", ret);
		return NULL;
	}
	parked = RW_SLOTS;

	while (retired < RW_SLOTS) {
		int lim = rw->limit ? rw->limit : 1;
		struct io_uring_cqe cqe;
		struct iopa_work *w;
		int n = 0;

		if (held < lim && parked > 0 && rw->done < rw->total) {
			/* on failure: return; the process exit cancels the rest */
			ret = ring_wait(&r, &cqe, IOPA_LONG_MS);
			if (ret) {
				RW_FAIL(rw, "no CQE (%d) after %d jobs", ret,
					rw->done);
				return NULL;
			}
			if (cqe.user_data >= RW_SLOTS || cqe.res) {
				RW_FAIL(rw, "CQE ud %llu res %d",
					(unsigned long long)cqe.user_data,
					cqe.res);
				return NULL;
			}
			parked--;
			held_slot[held++] = cqe.user_data;
			rw->done++;
			if (held > rw->max_held)
				rw->max_held = held;
			if (rw->limit && held > rw->limit)
				RW_FAIL(rw, "%d jobs held, limit %d", held,
					rw->limit);
			if (rw->limit) {
				struct iopa_stats st;

				ret = iopa_get_stats(rw->sfd, &st);
				if (ret)
					RW_FAIL(rw, "GET_STATS: %d", ret);
				else if (st.inflight > rw->max_inflight)
					rw->max_inflight = st.inflight;
			}
			w = &work[cqe.user_data];
			if (w->fd < 0 || w->fd == rw->file ||
			    same_inode(w->fd, rw->file) != 1 ||
			    iopa_cloexec(w->fd) != 1)
				RW_FAIL(rw, "job %llu: bad fd %d",
					(unsigned long long)w->user_data,
					w->fd);
			if (!(w->user_data & POISON) &&
			    w->user_data >= (uint64_t)rw->nreal)
				RW_FAIL(rw, "bad user_data %llu",
					(unsigned long long)w->user_data);
			continue;
		}
		/* commit everything held */
		for (i = 0; i < held; i++) {
			int k = held_slot[i];

			w = &work[k];
			close(w->fd);
			w->fd = -1;
			if (w->user_data & POISON) {
				ret = iopa_complete(rw->wfd, w->job_id, 0);
				if (ret)
					RW_FAIL(rw, "complete: %d", ret);
				retired++;
				continue;
			}
			if (rw->res[w->user_data])
				RW_FAIL(rw, "job %llu twice",
					(unsigned long long)w->user_data);
			rw->res[w->user_data] = res_for(w->user_data);
			if (ring_prep_fetch(&r, rw->wfd,
					    IOPA_URING_CMD_COMMIT_AND_FETCH, w,
					    res_for(w->user_data), k)) {
				RW_FAIL(rw, "no SQE");
				return NULL;
			}
			n++;
			parked++;
		}
		held = 0;
		if (n) {
			ret = ring_submit(&r, n);
			if (ret) {
				RW_FAIL(rw, "submit: %d", ret);
				return NULL;
			}
		}
	}
	io_uring_queue_exit(&r);
	return NULL;
}

/*
 * Reap @n completions of @sfd (bounded); the real jobs' (user_data <
 * @nreal) must come once each with res_for(), poisons with 0.  With
 * @limit, sample the submitter's inflight (GET_STATS) meanwhile.
 * Returns the number reaped; *@bad counts wrong ones.
 */
static int reap_all(int sfd, int n, int nreal, unsigned char *seen,
		    uint32_t limit, uint64_t *max_inflight, int *bad)
{
	static struct iopa_cqe c[256];
	int64_t deadline = iopa_now_ns() + 6 * IOPA_LONG_NS;
	int got = 0, i;

	while (got < n && iopa_now_ns() < deadline) {
		int r;

		if (limit) {
			struct iopa_stats st;

			if (iopa_get_stats(sfd, &st) == 0 &&
			    st.inflight > *max_inflight)
				*max_inflight = st.inflight;
			r = iopa_reap(sfd, c, 256, IOPA_REAP_F_WAIT,
				      IOPA_MS_NS(2));
			if (r == -ETIMEDOUT)
				continue;
		} else {
			r = iopa_reap(sfd, c, 256, IOPA_REAP_F_WAIT,
				      IOPA_LONG_NS);
		}
		if (r < 0) {
			fprintf(stderr, "# reap: %d after %d of %d\n", r, got, n);
			break;
		}
		for (i = 0; i < r; i++) {
			uint64_t ud = c[i].user_data;

			if (ud & POISON) {
				*bad += c[i].res != 0;
				continue;
			}
			if (ud >= (uint64_t)nreal || seen[ud]++ ||
			    c[i].res != res_for(ud) || c[i].flags)
				(*bad)++;
		}
		got += r;
	}
	return got;
}

#define RW_JOBS		2000

TEST_F_TIMEOUT(uring, ring_worker_commit_and_fetch, 180)
{
	static int32_t res[RW_JOBS];
	static unsigned char seen[RW_JOBS];
	struct rw rw = { 0 };
	struct iopa_stats st;
	struct iopa_work w;
	int i, bad = 0, got, missing = 0;
	uint64_t dummy = 0;
	pthread_t th;

	memset(res, 0, sizeof(res));
	memset(seen, 0, sizeof(seen));
	rw.wfd = iopa_worker_create(self->ctx);
	ASSERT_LE(0, rw.wfd);
	rw.sfd = self->sub;
	rw.file = self->file;
	rw.total = RW_JOBS + RW_SLOTS;
	rw.res = res;
	rw.nreal = RW_JOBS;
	ASSERT_EQ(0, pthread_create(&th, NULL, rw_thread, &rw));

	ASSERT_EQ(RW_JOBS, iopa_submit_many(self->sub, self->file, 0, RW_JOBS));
	for (i = 0; i < RW_SLOTS; i++)
		ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, POISON | i));
	got = reap_all(self->sub, rw.total, RW_JOBS, seen, 0, &dummy, &bad);
	pthread_join(th, NULL);

	EXPECT_EQ(0, rw.errors) TH_LOG("ring worker: %s", rw.err);
	EXPECT_EQ(rw.total, got);
	EXPECT_EQ(rw.total, rw.done);
	EXPECT_EQ(0, bad);
	for (i = 0; i < RW_JOBS; i++)
		missing += seen[i] != 1 || !res[i];
	EXPECT_EQ(0, missing);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ((__u64)rw.total, st.completed);
	EXPECT_EQ((__u64)rw.total, st.dispatched);
	EXPECT_EQ(0ULL, st.requeued);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	/* the ring worker's fd holds nothing any more */
	EXPECT_EQ(-EAGAIN, iopa_fetch_nb(rw.wfd, &w));
	close(rw.wfd);
}

#define LIM_JOBS	300
#define LIM_LIMIT	2

TEST_F_TIMEOUT(uring, ring_worker_limit, 180)
{
	static int32_t res[LIM_JOBS];
	static unsigned char seen[LIM_JOBS];
	struct rw rw = { 0 };
	uint64_t max_inflight = 0;
	struct iopa_stats st;
	int i, bad = 0, got, missing = 0;
	pthread_t th;

	memset(res, 0, sizeof(res));
	memset(seen, 0, sizeof(seen));
	ASSERT_EQ(0, iopa_set_limit(self->sub, LIM_LIMIT));
	/* all jobs queued first: the limit is what holds them back */
	ASSERT_EQ(LIM_JOBS, iopa_submit_many(self->sub, self->file, 0, LIM_JOBS));
	for (i = 0; i < RW_SLOTS; i++)
		ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, POISON | i));

	rw.wfd = iopa_worker_create(self->ctx);
	ASSERT_LE(0, rw.wfd);
	rw.sfd = self->sub;
	rw.file = self->file;
	rw.total = LIM_JOBS + RW_SLOTS;
	rw.limit = LIM_LIMIT;
	rw.res = res;
	rw.nreal = LIM_JOBS;
	ASSERT_EQ(0, pthread_create(&th, NULL, rw_thread, &rw));
	got = reap_all(self->sub, rw.total, LIM_JOBS, seen, LIM_LIMIT,
		       &max_inflight, &bad);
	pthread_join(th, NULL);

	EXPECT_EQ(0, rw.errors) TH_LOG("ring worker: %s", rw.err);
	TH_LOG("held at most %d; inflight sampled at most %llu (worker), "
	       "%llu (submitter)", rw.max_held,
	       (unsigned long long)rw.max_inflight,
	       (unsigned long long)max_inflight);
	EXPECT_EQ(LIM_LIMIT, rw.max_held);
	EXPECT_EQ((uint64_t)LIM_LIMIT, rw.max_inflight);
	EXPECT_GE((uint64_t)LIM_LIMIT, max_inflight);
	EXPECT_EQ(rw.total, got);
	EXPECT_EQ(0, bad);
	for (i = 0; i < LIM_JOBS; i++)
		missing += seen[i] != 1 || !res[i];
	EXPECT_EQ(0, missing);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ((__u64)rw.total, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	close(rw.wfd);
}

/* ---- 6. a ring / task going away with parked fetches -------------------- */

#define EXIT_JOBS	8

/*
 * After the parked fetches went away: jobs submitted now all reach the
 * ioctl worker, each once, none lost, requeued or cancelled.  (Not
 * necessarily in order: on 6.1 a job may be handed to a fetch of the
 * dead task before the monitor saw it, and come back to the queue.)
 */
static void check_jobs_reach_ioctl_worker(struct __test_metadata *_metadata,
					  FIXTURE_DATA(uring) *self,
					  uint64_t first)
{
	unsigned char fetched[EXIT_JOBS] = { 0 }, reaped[EXIT_JOBS] = { 0 };
	struct iopa_cqe c[EXIT_JOBS];
	struct iopa_work w;
	int i, n;

	ASSERT_EQ(EXIT_JOBS, iopa_submit_many(self->sub, self->file, first,
					      EXIT_JOBS));
	for (i = 0; i < EXIT_JOBS; i++) {
		int r = iopa_fetch_wait(self->wrk, &w);

		if (r) {
			struct iopa_stats st;

			TH_LOG("job %d of %d not fetched: %d", i, EXIT_JOBS, r);
			if (!iopa_get_stats(self->ctx, &st))
				IOPA_LOG_STATS(&st);
		}
		ASSERT_EQ(0, r);
		close(w.fd);
		ASSERT_LE(first, w.user_data);
		ASSERT_GT(first + EXIT_JOBS, w.user_data);
		EXPECT_EQ(0, fetched[w.user_data - first]++);
		EXPECT_EQ(0U, w.flags);
		ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id,
					   res_for(w.user_data)));
	}
	n = iopa_reap(self->sub, c, EXIT_JOBS, IOPA_REAP_F_WAIT, IOPA_LONG_NS);
	ASSERT_EQ(EXIT_JOBS, n);
	for (i = 0; i < n; i++) {
		ASSERT_LE(first, c[i].user_data);
		ASSERT_GT(first + EXIT_JOBS, c[i].user_data);
		EXPECT_EQ(0, reaped[c[i].user_data - first]++);
		EXPECT_EQ(res_for(c[i].user_data), c[i].res);
		EXPECT_EQ(0U, c[i].flags);
	}
}

/* Close everything; the module's job count must fall back to 0. */
static void check_all_jobs_freed(struct __test_metadata *_metadata,
				 FIXTURE_DATA(uring) *self)
{
	uint64_t jobs = 0;

	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	/* 5 s: on 6.1 the monitor looks every 100 ms */
	EXPECT_EQ(0, wait_sysfs_jobs(0, 5000, &jobs))
		TH_LOG("stats/jobs still %llu", (unsigned long long)jobs);
}

#define EXIT_ITERS	10

/*
 * Closing the ring cancels its parked fetches.  Jobs submitted right
 * after io_uring_queue_exit() returned must not go to them, even before
 * the cancellation ran (in a kernel thread, after the close): they reach
 * an ioctl worker, the work buffers are not written and no fd appears in
 * the process.  The worker fd of the ring stays open (it is the ring that
 * went away, not the worker).  Repeated, to meet that window.
 */
TEST_F_TIMEOUT(uring, parked_fetches_ring_exit, 120)
{
	static struct iopa_work work[RW_SLOTS];
	static unsigned char canary[sizeof(work)];
	struct io_uring_cqe cqe;
	struct iopa_stats st;
	struct io_uring r;
	int i, it, w2, next;

	memset(canary, 0xa5, sizeof(canary));
	for (it = 0; it < EXIT_ITERS; it++) {
		w2 = iopa_worker_create(self->ctx);
		ASSERT_LE(0, w2);
		memset(work, 0, sizeof(work));
		ASSERT_EQ(0, ring_init(&r, 2 * RW_SLOTS, false));
		for (i = 0; i < RW_SLOTS; i++)
			ASSERT_EQ(0, ring_prep_fetch(&r, w2, IOPA_URING_CMD_FETCH,
						     &work[i], 0, i));
		ASSERT_EQ(0, ring_submit(&r, RW_SLOTS));
		ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* all parked */
		io_uring_queue_exit(&r);

		/* from now on the kernel has no business with these */
		memset(work, 0xa5, sizeof(work));
		next = iopa_next_fd();
		check_jobs_reach_ioctl_worker(_metadata, self,
					      100 * (it + 1));
		EXPECT_EQ(0, memcmp(work, canary, sizeof(work)))
			TH_LOG("iteration %d: a work buffer was written after "
			       "the ring exit", it);
		EXPECT_EQ(next, iopa_next_fd())
			TH_LOG("iteration %d: an fd was installed after the "
			       "ring exit", it);
		ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
		EXPECT_EQ(0ULL, st.inflight);
		EXPECT_EQ(0ULL, st.requeued);
		EXPECT_EQ(2U, st.nr_workers);
		close(w2);
		if (_metadata->exit_code)
			break;
		/* w2 is released: no command holds it any more */
		ASSERT_EQ(0, wait_nr_workers(self->ctx, 1, IOPA_LONG_MS, &st));
	}
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(st.submitted, st.completed);
	EXPECT_EQ(0ULL, st.requeued);
	EXPECT_EQ(0ULL, st.cancelled);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	check_all_jobs_freed(_metadata, self);
}

/*
 * A child process with a worker and a ring: it parks RW_SLOTS fetches,
 * reports, and exits when told (or is killed).
 */
struct fetch_child {
	pid_t pid;
	int report;	/* read end */
	int hold;	/* write end */
};

struct fetch_report {
	int rc;
	int fetched;		/* CQEs with a job before reporting */
	struct iopa_work w;	/* the job, if one */
};

/* In the child: the @nr_first commands' CQEs are awaited before reporting. */
static void fetch_child_main(int ctx, int nr_fetch, int nr_first, int rfd,
			     int hfd)
{
	static struct iopa_work work[RW_SLOTS];
	struct fetch_report rep = { 0 };
	struct io_uring r;
	int wfd, i;

	wfd = iopa_worker_create(ctx);
	rep.rc = wfd < 0 ? wfd : ring_init(&r, 2 * RW_SLOTS, false);
	for (i = 0; !rep.rc && i < nr_fetch; i++)
		rep.rc = ring_prep_fetch(&r, wfd, IOPA_URING_CMD_FETCH,
					 &work[i], 0, i);
	if (!rep.rc)
		rep.rc = ring_submit(&r, nr_fetch);
	for (i = 0; !rep.rc && i < nr_first; i++) {
		struct io_uring_cqe cqe;

		rep.rc = ring_wait(&r, &cqe, IOPA_LONG_MS);
		if (!rep.rc && cqe.res)
			rep.rc = cqe.res;
		if (!rep.rc) {
			rep.w = work[cqe.user_data];
			rep.fetched++;
		}
	}
	if (iopa_write_full(rfd, &rep, sizeof(rep)))
		_exit(1);
	/* the ring and the worker go with the process; 60 s for strays */
	iopa_wait_readable(hfd, 60000);
	_exit(0);
}

static int spawn_fetch_child(int ctx, int nr_fetch, int nr_first,
			     struct fetch_child *c)
{
	int rp[2], hp[2];

	if (pipe2(rp, O_CLOEXEC) || pipe2(hp, O_CLOEXEC))
		return -errno;
	c->pid = fork();
	if (c->pid < 0)
		return -errno;
	if (c->pid == 0) {
		close(rp[0]);
		close(hp[1]);
		fetch_child_main(ctx, nr_fetch, nr_first, rp[1], hp[0]);
	}
	close(rp[1]);
	close(hp[0]);
	c->report = rp[0];
	c->hold = hp[1];
	return 0;
}

static int fetch_child_report(struct fetch_child *c, struct fetch_report *rep)
{
	int r = iopa_read_full(c->report, rep, sizeof(*rep));

	return r ? r : rep->rc;
}

/* Tell the child to exit; returns its exit status. */
static int child_exit(pid_t pid, int report, int hold)
{
	int r = iopa_write_full(hold, "x", 1);

	close(hold);
	if (r)
		return r;
	r = iopa_wait_exit(pid);
	close(report);
	return r;
}

/* The task that issued the parked fetches exits. */
TEST_F_TIMEOUT(uring, parked_fetches_task_exit, 60)
{
	struct fetch_report rep;
	struct fetch_child child;
	struct iopa_stats st;

	ASSERT_EQ(0, spawn_fetch_child(self->ctx, RW_SLOTS, 0, &child));
	ASSERT_EQ(0, fetch_child_report(&child, &rep));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(2U, st.nr_workers);
	ASSERT_EQ(0, child_exit(child.pid, child.report, child.hold));

	/* jobs right after the exit: none may go to the dead fetches */
	check_jobs_reach_ioctl_worker(_metadata, self, 100);
	/* the child's worker goes once its commands are gone */
	EXPECT_EQ(0, wait_nr_workers(self->ctx, 1, 5000, &st))
		TH_LOG("nr_workers %u", st.nr_workers);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ((__u64)EXIT_JOBS, st.submitted);
	EXPECT_EQ((__u64)EXIT_JOBS, st.completed);
	EXPECT_EQ((__u64)EXIT_JOBS, st.dispatched);
	EXPECT_EQ(0ULL, st.requeued);
	EXPECT_EQ(0ULL, st.cancelled);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	check_all_jobs_freed(_metadata, self);
}

/* ---- 7. a pending SUBMIT whose ring / task goes away -------------------- */

/* Closing the ring cancels its pending job; the file is released. */
TEST_F_TIMEOUT(uring, pending_submit_ring_exit, 60)
{
	struct io_uring_cqe cqe;
	struct iopa_stats st;
	struct iopa_cqe c;
	struct io_uring r;
	struct iopa_job j;
	int ifd, fd;

	ifd = iopa_watch_close(self->path);
	ASSERT_LE(0, ifd);
	fd = iopa_err(open(self->path, O_RDONLY | O_CLOEXEC));
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, fd, 42);
	ASSERT_EQ(0, ring_submit_job(&r, self->sub, &j, 42));
	close(fd);
	/* the job holds the file now: our close was not the last */
	ASSERT_EQ(0, iopa_close_event(ifd, 0));
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.pending);

	io_uring_queue_exit(&r);
	EXPECT_EQ(1, iopa_close_event(ifd, IOPA_LONG_MS));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, &c, 1));
	close(ifd);
	check_all_jobs_freed(_metadata, self);
}

/*
 * A child submits one job on the (shared) submitter fd with its own ring
 * and file fd, and exits with the job pending.
 */
static void submit_child_main(int sfd, const char *path, int rfd, int hfd)
{
	struct io_uring r;
	struct iopa_job j;
	int rc, fd;

	fd = iopa_err(open(path, O_RDONLY | O_CLOEXEC));
	rc = fd < 0 ? fd : ring_init(&r, 4, true);
	if (!rc) {
		iopa_job_init(&j, fd, 42);
		rc = ring_submit_job(&r, sfd, &j, 42);
	}
	if (fd >= 0)
		close(fd);
	if (iopa_write_full(rfd, &rc, sizeof(rc)))
		_exit(1);
	iopa_wait_readable(hfd, 60000);
	_exit(0);
}

TEST_F_TIMEOUT(uring, pending_submit_task_exit, 60)
{
	struct iopa_stats st;
	struct iopa_cqe c;
	int rp[2], hp[2], rc, ifd;
	pid_t pid;

	ifd = iopa_watch_close(self->path);
	ASSERT_LE(0, ifd);
	ASSERT_EQ(0, pipe2(rp, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(hp, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(rp[0]);
		close(hp[1]);
		submit_child_main(self->sub, self->path, rp[1], hp[0]);
	}
	close(rp[1]);
	close(hp[0]);
	ASSERT_EQ(0, iopa_read_full(rp[0], &rc, sizeof(rc)));
	ASSERT_EQ(0, rc);
	/* the child closed its fd: the job keeps the file */
	ASSERT_EQ(0, iopa_close_event(ifd, 0));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(1U, st.nr_submitters);

	ASSERT_EQ(0, child_exit(pid, rp[0], hp[1]));
	/* the job ends with the task (on 6.1 within a monitor period) */
	EXPECT_EQ(1, iopa_close_event(ifd, IOPA_LONG_MS));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	/* the submitter (ours too) lives on; the job never shows in REAP */
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, &c, 1));
	close(ifd);
	check_all_jobs_freed(_metadata, self);
}

/*
 * A child submits one job on the shared submitter fd with its own ring,
 * reports, waits for the word, then execs a shell that exits: exec
 * cancels the rings' requests and waits for them (io_uring_task_cancel()).
 */
static void exec_child_main(int sfd, const char *path, int rfd, int hfd)
{
	struct io_uring r;
	struct iopa_job j;
	int rc, fd;

	fd = iopa_err(open(path, O_RDONLY | O_CLOEXEC));
	rc = fd < 0 ? fd : ring_init(&r, 4, true);
	if (!rc) {
		iopa_job_init(&j, fd, 43);
		rc = ring_submit_job(&r, sfd, &j, 43);
	}
	if (fd >= 0)
		close(fd);
	if (iopa_write_full(rfd, &rc, sizeof(rc)))
		_exit(1);
	iopa_wait_readable(hfd, 60000);
	execl("/bin/sh", "sh", "-c", "exit 0", (char *)NULL);
	_exit(3);
}

/* Fork a child running @fn; its report pipe in @rp[0], hold pipe @hp[1]. */
static pid_t spawn_submit_child(int sfd, const char *path, int rp[2],
				int hp[2],
				void (*fn)(int, const char *, int, int))
{
	pid_t pid;

	if (pipe2(rp, O_CLOEXEC) || pipe2(hp, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		close(rp[0]);
		close(hp[1]);
		fn(sfd, path, rp[1], hp[0]);
	}
	close(rp[1]);
	close(hp[0]);
	return pid;
}

/* Let the child go on, and wait (bounded) for it to end. */
static int child_go_wait(pid_t pid, int report, int hold, int timeout_ms)
{
	int r = iopa_write_full(hold, "x", 1);

	close(hold);
	if (!r)
		r = iopa_wait_exit_ms(pid, timeout_ms);
	close(report);
	return r;
}

/*
 * A job submitted through io_uring runs while its task execs: the
 * command is detached (CQE -ECANCELED into the dying ring) and the job
 * runs on for nobody; exec does not wait for it.  Its worker's COMPLETE
 * still succeeds, and the job and its file are freed.  On 6.1 (no
 * cancelable commands) the module's monitor does the detaching: before
 * it did, exec waited for the job's end.
 */
TEST_F_TIMEOUT(uring, running_submit_task_exec, 60)
{
	struct iopa_stats st;
	struct iopa_work w;
	int rp[2], hp[2], rc, ifd;
	pid_t pid;

	ifd = iopa_watch_close(self->path);
	ASSERT_LE(0, ifd);
	pid = spawn_submit_child(self->sub, self->path, rp, hp,
				 exec_child_main);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, iopa_read_full(rp[0], &rc, sizeof(rc)));
	ASSERT_EQ(0, rc);
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(43ULL, w.user_data);

	rc = child_go_wait(pid, rp[0], hp[1], IOPA_LONG_MS);
	EXPECT_EQ(0, rc)
		TH_LOG("exec waited for the running job (%d)", rc);
	/* the worker ends the job: accepted, reported nowhere */
	EXPECT_EQ(0, iopa_complete(self->wrk, w.job_id, 9));
	if (rc == -ETIMEDOUT)
		EXPECT_EQ(0, iopa_wait_exit_ms(pid, IOPA_LONG_MS));
	EXPECT_EQ(1, iopa_close_event(ifd, IOPA_LONG_MS));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	close(ifd);
	check_all_jobs_freed(_metadata, self);
}

/*
 * The worker of a job whose command was cancelled (its task exec'd: exec
 * returns only once the command is) dies: nobody waits for the job,
 * which is cancelled, not requeued and run again for nobody.
 */
TEST_F_TIMEOUT(uring, orphan_cancelled_when_worker_dies, 60)
{
	struct iopa_stats st;
	struct iopa_work w;
	int rp[2], hp[2], rc, ifd, w2;
	pid_t pid;

	ifd = iopa_watch_close(self->path);
	ASSERT_LE(0, ifd);
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	pid = spawn_submit_child(self->sub, self->path, rp, hp,
				 exec_child_main);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, iopa_read_full(rp[0], &rc, sizeof(rc)));
	ASSERT_EQ(0, rc);
	ASSERT_EQ(0, iopa_fetch_wait(w2, &w));
	close(w.fd);
	/* the command is cancelled by the exec ... */
	ASSERT_EQ(0, child_go_wait(pid, rp[0], hp[1], IOPA_LONG_MS));

	/* ... then the worker dies */
	close(w2);
	EXPECT_EQ(1, iopa_close_event(ifd, IOPA_LONG_MS));
	EXPECT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(0ULL, st.requeued);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	close(ifd);
	check_all_jobs_freed(_metadata, self);
}

/*
 * An io_uring job requeued after its worker died, whose task then exits
 * with the job pending: it is cancelled, and the ring goes.  On 6.1 the
 * monitor looked only at submit and park time: a requeued job was never
 * watched again and io_uring's exit work waited for it forever.  The
 * 300 ms wait lets the 6.1 monitor see nothing to watch and stop, which
 * is what made the old module lose the job; the test does not depend on
 * it passing.
 */
TEST_F_TIMEOUT(uring, requeued_submit_task_exit, 60)
{
	struct iopa_stats st;
	struct iopa_work w;
	int rp[2], hp[2], rc, ifd, w2;
	pid_t pid;

	ifd = iopa_watch_close(self->path);
	ASSERT_LE(0, ifd);
	pid = spawn_submit_child(self->sub, self->path, rp, hp,
				 submit_child_main);
	ASSERT_LE(0, pid);
	ASSERT_EQ(0, iopa_read_full(rp[0], &rc, sizeof(rc)));
	ASSERT_EQ(0, rc);
	/* made after the fork: the child must not hold it open */
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	ASSERT_EQ(0, iopa_fetch_wait(w2, &w));
	close(w.fd);
	usleep(300 * 1000);
	close(w2);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(1ULL, st.requeued);

	ASSERT_EQ(0, child_go_wait(pid, rp[0], hp[1], IOPA_LONG_MS));
	EXPECT_EQ(1, iopa_close_event(ifd, IOPA_LONG_MS));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	close(ifd);
	check_all_jobs_freed(_metadata, self);
}

/* ---- 8. ioctl and io_uring submitters in one context -------------------- */

#define MIX_JOBS	4
#define MIX_B		1000ULL	/* user_data base of the io_uring submitter */

/* ---- Core round 2: lent numbers, the hand-over limbo, thread exit ------ */

/*
 * A job submitted by an io_uring SUBMIT is never lent the submitter's fd
 * number: io_uring may cancel the command (ring close, exec) and post
 * its CQE while the run goes on, and the submitter may then close or
 * reuse the number (Core round 2, item 1).
 */
TEST_F(uring, submit_job_not_lent)
{
	struct iopa_worker_create c = { .flags = IOPA_WORKER_F_BORROW };
	struct io_uring_cqe cqe;
	struct iopa_features f;
	struct io_uring r;
	struct iopa_work w;
	struct iopa_job j;
	int bw;

	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	if (!(f.features & IOPA_FEAT_BORROW))
		SKIP(return, "no IOPA_FEAT_BORROW");
	bw = iopa_ioctl(self->ctx, IOPA_IOC_WORKER_CREATE, &c);
	ASSERT_LE(0, bw);
	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 9);
	j.flags = IOPA_JOB_F_BORROW;
	ASSERT_EQ(0, ring_submit_job(&r, self->sub, &j, 0x99));
	ASSERT_EQ(0, iopa_fetch_nb(bw, &w));
	EXPECT_EQ(0U, w.flags);
	EXPECT_NE(self->file, w.fd);
	EXPECT_EQ(1, same_inode(self->file, w.fd));
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(bw, w.job_id, 4));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(0x99ULL, cqe.user_data);
	EXPECT_EQ(4, cqe.res);
	io_uring_queue_exit(&r);
	close(bw);
}

/*
 * On a DEFER_TASKRUN ring (its task work runs only when it waits on it),
 * a FETCH of @wfd into @w, parked (nothing queued yet), with a lease of
 * @lease_ms set on the submitter @sfd first.  0, -EINVAL (no
 * DEFER_TASKRUN here) or another -errno.
 */
static int park_deferred_fetch(struct io_uring *r, int wfd, int sfd,
			       uint64_t lease_ms, struct iopa_work *w)
{
	int ret;

	memset(r, 0, sizeof(*r));
	ret = io_uring_queue_init(4, r, IORING_SETUP_SINGLE_ISSUER |
				  IORING_SETUP_DEFER_TASKRUN);
	if (ret)
		return ret;
	ret = iopa_set_lease(sfd, IOPA_MS_NS(lease_ms));
	if (!ret)
		ret = ring_prep_fetch(r, wfd, IOPA_URING_CMD_FETCH, w, 0, 1);
	if (!ret)
		ret = ring_submit(r, 1);
	if (ret)
		io_uring_queue_exit(r);
	return ret;
}

/*
 * A job dispatched to a parked FETCH waits in the ring's task work (on a
 * DEFER_TASKRUN ring, until the worker next waits on the ring): served,
 * not in service.  Its lease counts from there; if it ends first the job
 * goes back to the queue undispatched (not cancelled, not requeued: it
 * never ran), and the FETCH, when its task runs, is issued again: here
 * it takes the same job, as a first run (Core round 2, item 2: the job
 * used to be reported cancelled, and handed over anyway).
 */
TEST_F_TIMEOUT(uring, served_fetch_lease_takes_job_back_undispatched, 60)
{
	struct iopa_sub_info info;
	struct io_uring_cqe cqe;
	struct iopa_stats st;
	struct io_uring r;
	struct iopa_work w;
	struct iopa_cqe c;
	int ret;

	ret = park_deferred_fetch(&r, self->wrk, self->sub, 100, &w);
	if (ret == -EINVAL)
		SKIP(return, "no IORING_SETUP_DEFER_TASKRUN");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, iopa_submit_one_flags(self->sub, self->file, 5,
					   IOPA_JOB_F_NO_REQUEUE, 0));
	/* served at once; 3 leases pass before the ring is waited on */
	EXPECT_EQ(0, iopa_poll1(self->sub, POLLIN, 300));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(0ULL, st.dispatched);
	EXPECT_EQ(0ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.requeued);
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(0, cqe.res);
	/* it runs once, as a first run */
	EXPECT_EQ(5ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 3));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(3, c.res);
	EXPECT_EQ(0U, c.flags);
	ASSERT_EQ(0, iopa_sub_info_of(self->ctx, 1, &info));
	EXPECT_EQ(1ULL, info.stats.dispatched);
	EXPECT_LE(300000ULL, (unsigned long long)info.metrics.wait_us);
	io_uring_queue_exit(&r);
}

/*
 * A served job's service and lease start when its command's task gets it
 * (the hand-over), not at the dispatch: 200 ms served and 300 ms held
 * are more than its 400 ms lease from the dispatch, less from the
 * hand-over.
 */
TEST_F_TIMEOUT(uring, served_fetch_service_starts_at_hand_over, 60)
{
	struct iopa_sub_info info;
	struct io_uring_cqe cqe;
	struct io_uring r;
	struct iopa_work w;
	struct iopa_cqe c;
	int ret;

	ret = park_deferred_fetch(&r, self->wrk, self->sub, 400, &w);
	if (ret == -EINVAL)
		SKIP(return, "no IORING_SETUP_DEFER_TASKRUN");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, iopa_submit_one_flags(self->sub, self->file, 6,
					   IOPA_JOB_F_NO_REQUEUE, 0));
	usleep(200 * 1000);	/* served, not claimed: the time measured */
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(0, cqe.res);
	EXPECT_EQ(6ULL, w.user_data);
	close(w.fd);
	usleep(300 * 1000);	/* held: the service time measured */
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 3));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(3, c.res);
	EXPECT_EQ(0U, c.flags);
	ASSERT_EQ(0, iopa_sub_info_of(self->ctx, 1, &info));
	EXPECT_LE(300000ULL, (unsigned long long)info.metrics.svc_us);
	EXPECT_GT(400000ULL, (unsigned long long)info.metrics.svc_us);
	EXPECT_LE(200000ULL, (unsigned long long)info.metrics.wait_us);
	io_uring_queue_exit(&r);
}

/*
 * A job served to a parked FETCH outlives its submitter's fd: the
 * hand-over, the run and its completion touch nothing of the closed
 * submitter's lease (its timer was cancelled for good at close; a second
 * reader found the claim re-arming it, a use after free once the last
 * job went).  Waits two leases after, for such a timer to fire.
 */
TEST_F_TIMEOUT(uring, served_job_outlives_closed_submitter, 60)
{
	struct io_uring_cqe cqe;
	struct io_uring r;
	struct iopa_work w;
	int ret, sfd;

	sfd = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, sfd);
	ret = park_deferred_fetch(&r, self->wrk, sfd, 50, &w);
	if (ret == -EINVAL) {
		close(sfd);
		SKIP(return, "no IORING_SETUP_DEFER_TASKRUN");
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(1, iopa_submit_one(sfd, self->file, 8));
	close(sfd);
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(0, cqe.res);
	EXPECT_EQ(8ULL, w.user_data);
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	usleep(100 * 1000);
	io_uring_queue_exit(&r);
}

struct thread_submit {
	struct io_uring *r;
	int sfd;
	int file;
	int ret;
};

static void *submit_then_exit_fn(void *arg)
{
	struct thread_submit *t = arg;
	struct iopa_job j;

	iopa_job_init(&j, t->file, 17);
	t->ret = ring_submit_job(t->r, t->sfd, &j, 0x77);
	return NULL;
}

/*
 * A thread that issued a SUBMIT on a ring another thread reaps exits:
 * the job and its command live on, on every kernel (Core round 2, item
 * 3: 6.1's monitor cancelled it, 6.7+'s io_uring never did).
 */
TEST_F_TIMEOUT(uring, submit_outlives_its_thread, 60)
{
	struct thread_submit t = { .sfd = self->sub, .file = self->file };
	struct io_uring_cqe cqe;
	struct iopa_stats st;
	struct io_uring r;
	struct iopa_work w;
	pthread_t th;

	ASSERT_EQ(0, ring_init(&r, 4, true));
	t.r = &r;
	ASSERT_EQ(0, pthread_create(&th, NULL, submit_then_exit_fn, &t));
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, t.ret);
	/* three periods of 6.1's monitor (100 ms), which cancelled it here */
	usleep(350 * 1000);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.cancelled);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 7));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(0x77ULL, cqe.user_data);
	EXPECT_EQ(7, cqe.res);
	io_uring_queue_exit(&r);
}

TEST_F(uring, mixed_submitters_round_robin)
{
	struct iopa_work w[2 * MIX_JOBS];
	struct iopa_cqe c[MIX_JOBS + 1];
	unsigned char seen[MIX_JOBS] = { 0 };
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i, usub, n;

	usub = iopa_submitter_create(self->ctx, 64);
	ASSERT_LE(0, usub);
	ASSERT_EQ(0, ring_init(&r, 2 * MIX_JOBS, true));
	/* A (ioctl) becomes runnable first, then B (io_uring) */
	ASSERT_EQ(MIX_JOBS, iopa_submit_many(self->sub, self->file, 0, MIX_JOBS));
	for (i = 0; i < MIX_JOBS; i++) {
		struct iopa_job j;

		iopa_job_init(&j, self->file, MIX_B + i);
		ASSERT_EQ(0, ring_prep(&r, usub, IOPA_URING_CMD_SUBMIT, &j,
				       sizeof(j), MIX_B + i));
	}
	ASSERT_EQ(0, ring_submit(&r, MIX_JOBS));

	/* one worker takes them all: A, B, A, B, ... */
	for (i = 0; i < 2 * MIX_JOBS; i++) {
		uint64_t want = (i % 2 ? MIX_B : 0) + i / 2;

		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w[i]));
		close(w[i].fd);
		EXPECT_EQ(want, w[i].user_data)
			TH_LOG("dispatch %d: user_data %llu", i,
			       (unsigned long long)w[i].user_data);
	}
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	for (i = 0; i < 2 * MIX_JOBS; i++)
		ASSERT_EQ(0, iopa_complete(self->wrk, w[i].job_id,
					   res_for(w[i].user_data)));

	/* the ioctl submitter reaps its own, and only those */
	n = iopa_reap(self->sub, c, MIX_JOBS + 1, IOPA_REAP_F_WAIT, IOPA_LONG_NS);
	ASSERT_EQ(MIX_JOBS, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ((uint64_t)i, c[i].user_data);
		EXPECT_EQ(res_for(i), c[i].res);
	}
	/* the io_uring one gets CQEs */
	for (i = 0; i < MIX_JOBS; i++) {
		ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
		ASSERT_LE(MIX_B, cqe.user_data);
		ASSERT_GT(MIX_B + MIX_JOBS, cqe.user_data);
		EXPECT_EQ(0, seen[cqe.user_data - MIX_B]++);
		EXPECT_EQ(res_for(cqe.user_data), cqe.res);
	}
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(usub, c, 1));
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, c, 1));
	ASSERT_STATS_INVARIANT(self->ctx);
	close(usub);
	io_uring_queue_exit(&r);
}

/* ---- 9. a ring worker killed while it holds a job ----------------------- */

TEST_F_TIMEOUT(uring, ring_worker_killed_requeued, 60)
{
	struct fetch_report rep;
	struct fetch_child child;
	struct io_uring_cqe cqe;
	struct iopa_stats st;
	struct iopa_work w;
	struct io_uring r;
	struct iopa_job j;
	int usub;

	usub = iopa_submitter_create(self->ctx, 64);
	ASSERT_LE(0, usub);
	ASSERT_EQ(0, ring_init(&r, 4, true));
	iopa_job_init(&j, self->file, 77);
	ASSERT_EQ(0, ring_submit_job(&r, usub, &j, 0x99));

	/* the child fetches it through its ring, and parks a second fetch */
	ASSERT_EQ(0, spawn_fetch_child(self->ctx, 2, 1, &child));
	ASSERT_EQ(0, fetch_child_report(&child, &rep));
	ASSERT_EQ(1, rep.fetched);
	EXPECT_EQ(77ULL, rep.w.user_data);
	EXPECT_EQ(0U, rep.w.flags);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.inflight);

	ASSERT_EQ(0, iopa_kill_wait(child.pid));
	close(child.report);
	close(child.hold);

	/* requeued once, to another worker */
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(rep.w.job_id | IOPA_JOB_ID_RERUN, w.job_id);
	EXPECT_EQ(77ULL, w.user_data);
	EXPECT_EQ((__u32)IOPA_WORK_F_REQUEUED, w.flags);
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 4321));

	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(4321, cqe.res);
	EXPECT_EQ(0x99ULL, (unsigned long long)cqe.user_data);
	EXPECT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	EXPECT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));

	/* the dead worker is gone once its parked fetch is */
	EXPECT_EQ(0, wait_nr_workers(self->ctx, 1, 5000, &st));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(1ULL, st.requeued);
	EXPECT_EQ(2ULL, st.dispatched);
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.unreaped);
	EXPECT_TRUE(iopa_stats_consistent(&st));
	close(usub);
	io_uring_queue_exit(&r);
}

/* ---- WORK_BATCH ------------------------------------------------------- */

/* The command of a WORK_BATCH on @b (not submitted yet). */
static int ring_prep_batch(struct io_uring *r, int wfd, struct iopa_batch *b,
			   __u64 user_data)
{
	struct iopa_uring_batch ub = { .batch = (uintptr_t)b };

	return ring_prep(r, wfd, IOPA_URING_CMD_WORK_BATCH, &ub, sizeof(ub),
			 user_data);
}

static int batch_feature(int ctx)
{
	struct iopa_features f;

	return !iopa_get_features(ctx, &f) && (f.features & IOPA_FEAT_BATCH);
}

TEST_F(uring, work_batch_takes_what_is_there)
{
	struct iopa_work work[8];
	struct iopa_batch b = {
		.work = (uintptr_t)work, .nr_work = 8, .completed = 7,
	};
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i;

	if (!batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_BATCH");
	ASSERT_EQ(5, iopa_submit_many(self->sub, self->file, 10, 5));
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(0, ring_prep_batch(&r, self->wrk, &b, 1));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(5, cqe.res);
	EXPECT_EQ(0U, b.completed);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(10ULL + i, work[i].user_data);
		EXPECT_EQ(1, same_inode(self->file, work[i].fd));
		close(work[i].fd);
		ASSERT_EQ(0, iopa_complete(self->wrk, work[i].job_id, 0));
	}
	io_uring_queue_exit(&r);
}

/* Parked, it is served when jobs come; a second one completes them. */
TEST_F(uring, work_batch_parked_then_served)
{
	struct iopa_work work[8];
	struct iopa_done done[8];
	struct iopa_batch b = { .work = (uintptr_t)work, .nr_work = 8 };
	struct iopa_cqe cqes[8];
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i;

	if (!batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_BATCH");
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(0, ring_prep_batch(&r, self->wrk, &b, 1));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* parked */
	ASSERT_EQ(3, iopa_submit_many(self->sub, self->file, 20, 3));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(3, cqe.res);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(20ULL + i, work[i].user_data);
		close(work[i].fd);
		memset(&done[i], 0, sizeof(done[i]));
		done[i].job_id = work[i].job_id;
		done[i].res = i;
	}
	/* complete only: the CQE comes at once, res 0 */
	memset(&b, 0, sizeof(b));
	b.done = (uintptr_t)done;
	b.nr_done = 3;
	ASSERT_EQ(0, ring_prep_batch(&r, self->wrk, &b, 2));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(3U, b.completed);
	ASSERT_EQ(3, iopa_reap_nb(self->sub, cqes, 8));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(i, cqes[i].res);
	io_uring_queue_exit(&r);
}

/* A parked WORK_BATCH holds a place for each job it may take. */
TEST_F(uring, work_batch_parked_holds_places)
{
	static struct iopa_work work[IOPA_WORKER_MAX_JOBS];
	struct iopa_batch b = {
		.work = (uintptr_t)work, .nr_work = IOPA_WORKER_MAX_JOBS - 1,
	};
	struct io_uring_cqe cqe;
	struct iopa_work w;
	struct io_uring r;

	if (!batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_BATCH");
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(0, ring_prep_batch(&r, self->wrk, &b, 1));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* parked */
	ASSERT_EQ(1, iopa_submit_many(self->sub, self->file, 1, 1));
	/* it was served at once: the job is the batch's */
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(1, cqe.res);
	close(work[0].fd);
	/* parked again with the job held: no room for another */
	b.nr_work = IOPA_WORKER_MAX_JOBS - 1;
	ASSERT_EQ(0, ring_prep_batch(&r, self->wrk, &b, 2));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	EXPECT_EQ(-EBUSY, iopa_fetch_nb(self->wrk, &w));
	io_uring_queue_exit(&r);
}

TEST_F(uring, work_batch_bad_args)
{
	struct iopa_work work[2];
	struct iopa_done done = { .job_id = 12345 };
	struct iopa_batch b;
	struct iopa_uring_batch ub = { 0 };
	struct io_uring r;
	struct iopa_stats st;

	if (!batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_BATCH");
	ASSERT_EQ(1, iopa_submit_many(self->sub, self->file, 1, 1));
	ASSERT_EQ(0, ring_init(&r, 4, false));
	memset(&b, 0, sizeof(b));
	b.work = (uintptr_t)work;
	b.nr_work = 2;
	ub.batch = (uintptr_t)&b;
	ub.flags = 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk, IOPA_URING_CMD_WORK_BATCH,
				    &ub, sizeof(ub), 1));
	ub.flags = 0;
	ub.reserved = 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk, IOPA_URING_CMD_WORK_BATCH,
				    &ub, sizeof(ub), 2));
	ub.reserved = 0;
	ub.batch = (uintptr_t)unmapped_page();
	EXPECT_EQ(-EFAULT, ring_cmd(&r, self->wrk, IOPA_URING_CMD_WORK_BATCH,
				    &ub, sizeof(ub), 3));
	ub.batch = (uintptr_t)&b;
	b.timeout_ns = 1000;	/* no timeout on a ring */
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk, IOPA_URING_CMD_WORK_BATCH,
				    &ub, sizeof(ub), 4));
	b.timeout_ns = 0;
	b.nr_work = 0;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk, IOPA_URING_CMD_WORK_BATCH,
				    &ub, sizeof(ub), 5));
	b.nr_work = IOPA_WORKER_MAX_JOBS + 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->wrk, IOPA_URING_CMD_WORK_BATCH,
				    &ub, sizeof(ub), 6));
	/* a completion of a job not held stops it: nothing fetched */
	b.nr_work = 2;
	b.done = (uintptr_t)&done;
	b.nr_done = 1;
	b.completed = 9;
	EXPECT_EQ(-ENOENT, ring_cmd(&r, self->wrk, IOPA_URING_CMD_WORK_BATCH,
				    &ub, sizeof(ub), 7));
	EXPECT_EQ(0U, b.completed);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	io_uring_queue_exit(&r);
}

/*
 * A parked WORK_BATCH whose ring closes takes no job: jobs submitted
 * after the exit reach an ioctl worker, the work array is not written.
 */
/*
 * A parked WORK_BATCH whose completions took effect and whose hand-over
 * then fails (no fd left: EMFILE) posts 0 jobs, not the errno, as the
 * ioctl returns 0 (Core round 2, item 6).  The job goes back.
 */
TEST_F(uring, work_batch_parked_failure_after_completions_is_success)
{
	struct iopa_done done = { };
	struct iopa_work work[2], w;
	struct iopa_batch b = {
		.done = (uintptr_t)&done, .nr_done = 1,
		.work = (uintptr_t)work, .nr_work = 2,
	};
	struct io_uring_cqe cqe;
	struct rlimit old, rl;
	struct iopa_stats st;
	struct iopa_cqe c;
	struct io_uring r;
	int next, ret;

	if (!batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_BATCH");
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	done.job_id = w.job_id;
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(0, ring_prep_batch(&r, self->wrk, &b, 1));
	ASSERT_EQ(0, ring_submit(&r, 1));	/* completes, then parks */
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	EXPECT_EQ(1U, b.completed);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	next = iopa_next_fd();
	ASSERT_LT(0, next);
	rl = old;
	rl.rlim_cur = next;	/* no room for one more fd */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ret = iopa_submit_one(self->sub, self->file, 2);
	if (ret == 1)
		ret = ring_wait(&r, &cqe, IOPA_LONG_MS);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	ASSERT_EQ(0, ret);
	EXPECT_EQ(0, cqe.res);
	EXPECT_EQ(1U, b.completed);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.pending);
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(1ULL, c.user_data);
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	io_uring_queue_exit(&r);
}

TEST_F_TIMEOUT(uring, work_batch_ring_exit, 60)
{
	static struct iopa_work work[16];
	static unsigned char canary[sizeof(work)];
	struct iopa_batch b = { .work = (uintptr_t)work, .nr_work = 16 };
	struct io_uring_cqe cqe;
	struct io_uring r;
	int w2, next;

	if (!batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_BATCH");
	memset(canary, 0xa5, sizeof(canary));
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(0, ring_prep_batch(&r, w2, &b, 1));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* parked */
	io_uring_queue_exit(&r);
	memset(work, 0xa5, sizeof(work));
	next = iopa_next_fd();
	check_jobs_reach_ioctl_worker(_metadata, self, 1000);
	EXPECT_EQ(0, memcmp(work, canary, sizeof(work)));
	EXPECT_EQ(next, iopa_next_fd());
	close(w2);
	check_all_jobs_freed(_metadata, self);
}

/* ---- SUBMIT_MANY, REAP -------------------------------------------------- */

static int uring_batch_feature(int ctx)
{
	struct iopa_features f;

	return !iopa_get_features(ctx, &f) &&
	       (f.features & IOPA_FEAT_URING_BATCH);
}

static int ring_submit_many(struct io_uring *r, int sfd,
			    const struct iopa_job *jobs, uint32_t nr, __u64 ud)
{
	struct iopa_uring_submit a = { .jobs = (uintptr_t)jobs, .nr = nr };

	return ring_cmd(r, sfd, IOPA_URING_CMD_SUBMIT_MANY, &a, sizeof(a), ud);
}

static int ring_prep_reap(struct io_uring *r, int sfd, struct iopa_cqe *cqes,
			  uint32_t nr, uint32_t min, __u64 ud)
{
	struct iopa_uring_reap a = {
		.cqes = (uintptr_t)cqes, .nr = nr, .min = min,
	};

	return ring_prep(r, sfd, IOPA_URING_CMD_REAP, &a, sizeof(a), ud);
}

/* Run @n jobs on the ioctl worker, results res_for(user_data). */
static int run_jobs(int wfd, int n)
{
	struct iopa_work w;
	int i, r;

	for (i = 0; i < n; i++) {
		r = iopa_fetch_wait(wfd, &w);
		if (r)
			return r;
		close(w.fd);
		r = iopa_complete(wfd, w.job_id, res_for(w.user_data));
		if (r)
			return r;
	}
	return 0;
}

TEST_F(uring, submit_many_then_reap)
{
	struct iopa_job jobs[5];
	struct iopa_cqe cqes[8];
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i;

	if (!uring_batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_URING_BATCH");
	for (i = 0; i < 5; i++)
		iopa_job_init(&jobs[i], self->file, 40 + i);
	ASSERT_EQ(0, ring_init(&r, 4, false));	/* a normal SQE is enough */
	ASSERT_EQ(5, ring_submit_many(&r, self->sub, jobs, 5, 1));
	ASSERT_EQ(0, run_jobs(self->wrk, 5));
	ASSERT_EQ(0, ring_prep_reap(&r, self->sub, cqes, 8, 5, 2));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(5, cqe.res);
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(40ULL + i, cqes[i].user_data);
		EXPECT_EQ(res_for(40 + i), cqes[i].res);
	}
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, cqes, 8));
	io_uring_queue_exit(&r);
}

/* A REAP waits for min completions, then takes them in one CQE. */
TEST_F(uring, reap_waits_for_min)
{
	struct iopa_job jobs[3];
	struct iopa_cqe cqes[8];
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i;

	if (!uring_batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_URING_BATCH");
	for (i = 0; i < 3; i++)
		iopa_job_init(&jobs[i], self->file, 60 + i);
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(3, ring_submit_many(&r, self->sub, jobs, 3, 1));
	ASSERT_EQ(0, ring_prep_reap(&r, self->sub, cqes, 8, 2, 2));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* parked */
	ASSERT_EQ(0, run_jobs(self->wrk, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* 1 of 2 */
	ASSERT_EQ(0, run_jobs(self->wrk, 1));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(2, cqe.res);
	EXPECT_EQ(60ULL, cqes[0].user_data);
	EXPECT_EQ(61ULL, cqes[1].user_data);
	ASSERT_EQ(0, run_jobs(self->wrk, 1));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, cqes, 8));
	io_uring_queue_exit(&r);
}

/* Fewer than min once nothing is left pending or running. */
TEST_F(uring, reap_takes_fewer_when_nothing_left)
{
	struct iopa_job jobs[2];
	struct iopa_cqe cqes[8];
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i;

	if (!uring_batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_URING_BATCH");
	for (i = 0; i < 2; i++)
		iopa_job_init(&jobs[i], self->file, 70 + i);
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(2, ring_submit_many(&r, self->sub, jobs, 2, 1));
	ASSERT_EQ(0, ring_prep_reap(&r, self->sub, cqes, 8, 8, 2));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));
	ASSERT_EQ(0, run_jobs(self->wrk, 2));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	ASSERT_EQ(2, cqe.res);
	io_uring_queue_exit(&r);
}

TEST_F(uring, submit_many_bad_args)
{
	struct iopa_uring_submit a = { 0 };
	struct iopa_job jobs[2];
	struct io_uring r;
	struct iopa_stats st;

	if (!uring_batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_URING_BATCH");
	ASSERT_EQ(0, ring_init(&r, 4, false));
	iopa_job_init(&jobs[0], self->file, 1);
	iopa_job_init(&jobs[1], self->file, 2);
	a.jobs = (uintptr_t)jobs;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT_MANY,
				    &a, sizeof(a), 1));	/* nr 0 */
	a.nr = IOPA_BATCH_MAX + 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT_MANY,
				    &a, sizeof(a), 2));
	a.nr = 1;
	a.flags = IOPA_SUBMIT_F_WAIT;	/* a ring never waits for room */
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT_MANY,
				    &a, sizeof(a), 3));
	a.flags = 0;
	a.jobs = (uintptr_t)unmapped_page();
	EXPECT_EQ(-EFAULT, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT_MANY,
				    &a, sizeof(a), 4));
	/* the second job bad: the first is accepted */
	jobs[1].fd = -1;
	a.jobs = (uintptr_t)jobs;
	a.nr = 2;
	EXPECT_EQ(1, ring_cmd(&r, self->sub, IOPA_URING_CMD_SUBMIT_MANY,
			      &a, sizeof(a), 5));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->wrk, IOPA_URING_CMD_SUBMIT_MANY,
				    &a, sizeof(a), 6));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.submitted);
	io_uring_queue_exit(&r);
}

TEST_F(uring, reap_bad_args)
{
	struct iopa_uring_reap a = { 0 };
	struct iopa_cqe cqes[4];
	struct io_uring r;
	struct iopa_stats st;

	if (!uring_batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_URING_BATCH");
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, run_jobs(self->wrk, 1));
	a.cqes = (uintptr_t)cqes;
	a.min = 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 1));	/* nr 0 */
	a.nr = 4;
	a.min = 0;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 2));
	a.min = 5;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 3));
	a.nr = IOPA_BATCH_MAX + 1;
	a.min = 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 4));
	/* flags: none defined yet (Core round 2, item 12) */
	a.nr = 4;
	a.flags = 1;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 7));
	a.flags = 0x8000;
	EXPECT_EQ(-EINVAL, ring_cmd(&r, self->sub, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 8));
	a.flags = 0;
	/* nowhere to copy to: the completion stays queued */
	a.nr = 4;
	a.cqes = (uintptr_t)unmapped_page();
	EXPECT_EQ(-EFAULT, ring_cmd(&r, self->sub, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 5));
	EXPECT_EQ(-ENOTTY, ring_cmd(&r, self->wrk, IOPA_URING_CMD_REAP, &a,
				    sizeof(a), 6));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.unreaped);
	ASSERT_EQ(1, iopa_reap_nb(self->sub, cqes, 4));
	io_uring_queue_exit(&r);
}

/*
 * A parked REAP whose ring closes takes nothing: the completions that
 * come after are reaped by the ioctl, the buffer is not written.
 */
TEST_F_TIMEOUT(uring, reap_ring_exit, 60)
{
	static struct iopa_cqe cqes[8];
	static unsigned char canary[sizeof(cqes)];
	struct iopa_job jobs[2];
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i;

	if (!uring_batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_URING_BATCH");
	memset(canary, 0xa5, sizeof(canary));
	for (i = 0; i < 2; i++)
		iopa_job_init(&jobs[i], self->file, 80 + i);
	ASSERT_EQ(0, ring_init(&r, 4, false));
	ASSERT_EQ(2, ring_submit_many(&r, self->sub, jobs, 2, 1));
	ASSERT_EQ(0, ring_prep_reap(&r, self->sub, cqes, 8, 2, 2));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* parked */
	io_uring_queue_exit(&r);
	memset(cqes, 0xa5, sizeof(cqes));
	ASSERT_EQ(0, run_jobs(self->wrk, 2));
	EXPECT_EQ(2, iopa_reap(self->sub, cqes + 4, 4, IOPA_REAP_F_WAIT,
			       IOPA_LONG_NS));
	EXPECT_EQ(0, memcmp(cqes, canary, 4 * sizeof(cqes[0])));
	check_all_jobs_freed(_metadata, self);
}

/* At most IOPA_SUB_MAX_REAPERS parked REAPs per submitter. */
TEST_F(uring, reap_parked_cap)
{
	static struct iopa_cqe cqes[IOPA_SUB_MAX_REAPERS + 1][1];
	struct io_uring_cqe cqe;
	struct io_uring r;
	int i;

	if (!uring_batch_feature(self->ctx))
		SKIP(return, "no IOPA_FEAT_URING_BATCH");
	ASSERT_EQ(0, ring_init(&r, 2 * IOPA_SUB_MAX_REAPERS + 2, false));
	for (i = 0; i < IOPA_SUB_MAX_REAPERS; i++)
		ASSERT_EQ(0, ring_prep_reap(&r, self->sub, cqes[i], 1, 1, i));
	ASSERT_EQ(0, ring_submit(&r, IOPA_SUB_MAX_REAPERS));
	ASSERT_EQ(-ETIME, ring_wait(&r, &cqe, 0));	/* all parked */
	ASSERT_EQ(0, ring_prep_reap(&r, self->sub, cqes[i], 1, 1, 99));
	ASSERT_EQ(0, ring_submit(&r, 1));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(99ULL, cqe.user_data);
	EXPECT_EQ(-EBUSY, cqe.res);
	/* a completion serves the oldest */
	ASSERT_EQ(1, iopa_submit_many(self->sub, self->file, 5, 1));
	ASSERT_EQ(0, run_jobs(self->wrk, 1));
	ASSERT_EQ(0, ring_wait(&r, &cqe, IOPA_LONG_MS));
	EXPECT_EQ(0ULL, cqe.user_data);
	EXPECT_EQ(1, cqe.res);
	io_uring_queue_exit(&r);
}

TEST_HARNESS_MAIN
