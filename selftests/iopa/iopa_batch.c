// SPDX-License-Identifier: GPL-2.0
/*
 * iopa batched worker protocol and borrowed fds (IOPA_FEAT_BATCH,
 * IOPA_FEAT_BORROW): IOPA_IOC_WORK_BATCH's successes and errors, the cap
 * of a batch at the limit and the worker's room, the exactly-once rules
 * for jobs held in batches, and when a lent fd is handed over as is.
 * The io_uring WORK_BATCH command is tested in iopa_uring.c.
 */
#include "iopa_test.h"

#define NR	IOPA_WORKER_MAX_JOBS

FIXTURE(batch) {
	int ctx;	/* context */
	int sub;	/* submitter, limit 64 */
	int wrk;	/* worker, takes lent fds */
	int file;	/* job file */
	char path[64];
	struct iopa_done done[NR];
	struct iopa_work work[NR];
};

static int worker_create_flags(int ctx, uint32_t flags)
{
	struct iopa_worker_create c = { .flags = flags };

	return iopa_ioctl(ctx, IOPA_IOC_WORKER_CREATE, &c);
}

/* IOPA_IOC_WORK_BATCH; *completed gets the count the kernel wrote. */
static int work_batch(int wfd, struct iopa_done *done, uint32_t nr_done,
		      struct iopa_work *work, uint32_t nr_work, uint32_t flags,
		      uint64_t timeout_ns, uint32_t *completed)
{
	struct iopa_batch b = {
		.done = (uintptr_t)done, .nr_done = nr_done,
		.work = (uintptr_t)work, .nr_work = nr_work,
		.flags = flags, .timeout_ns = timeout_ns,
		.completed = 0xdead,
	};
	int r = iopa_ioctl(wfd, IOPA_IOC_WORK_BATCH, &b);

	if (completed)
		*completed = b.completed;
	return r;
}

static int fetch_many_nb(int wfd, struct iopa_work *work, uint32_t nr)
{
	return work_batch(wfd, NULL, 0, work, nr, IOPA_FETCH_F_NONBLOCK, 0,
			  NULL);
}

/* Jobs for @fd, user_data first..first + count - 1, with @job_flags. */
static int submit_flags(int sfd, int fd, uint64_t first, int count,
			uint32_t job_flags)
{
	struct iopa_job jobs[NR + 8];
	int i;

	if (count > (int)IOPA_ARRAY_SIZE(jobs))
		return -E2BIG;

	for (i = 0; i < count; i++) {
		iopa_job_init(&jobs[i], fd, first + i);
		jobs[i].flags = job_flags;
	}
	return iopa_submit(sfd, jobs, count, 0);
}

/* Close the fds of @work[0..n) that are the worker's own. */
static void close_owned(const struct iopa_work *work, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!(work[i].flags & IOPA_WORK_F_BORROWED))
			close(work[i].fd);
}

FIXTURE_SETUP(batch)
{
	struct iopa_features f;

	self->ctx = self->sub = self->wrk = self->file = -1;
	self->path[0] = 0;
	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	if (!(f.features & IOPA_FEAT_BATCH) || !(f.features & IOPA_FEAT_BORROW))
		SKIP(return, "module without IOPA_FEAT_BATCH / _BORROW");
	self->sub = iopa_submitter_create(self->ctx, 64);
	ASSERT_LE(0, self->sub);
	self->wrk = worker_create_flags(self->ctx, IOPA_WORKER_F_BORROW);
	ASSERT_LE(0, self->wrk);
	self->file = iopa_job_file(self->path, O_RDWR);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(batch)
{
	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	iopa_close(&self->file);
	if (self->path[0])
		unlink(self->path);
}

/* ---- borrowed fds ------------------------------------------------------ */

TEST_F(batch, borrow_same_process_gets_submitter_fd)
{
	struct iopa_work w;
	int next = iopa_next_fd();

	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1,
				  IOPA_JOB_F_BORROW));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(self->file, w.fd);
	EXPECT_EQ(IOPA_WORK_F_BORROWED, w.flags);
	/* no fd was installed */
	EXPECT_EQ(next, iopa_next_fd());
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	/* and the lent fd is still the submitter's */
	EXPECT_LE(0, fcntl(self->file, F_GETFD));
}

TEST_F(batch, borrow_needs_worker_flag)
{
	struct iopa_work w;
	int plain = iopa_worker_create(self->ctx);

	ASSERT_LE(0, plain);
	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1,
				  IOPA_JOB_F_BORROW));
	ASSERT_EQ(0, iopa_fetch_nb(plain, &w));
	EXPECT_NE(self->file, w.fd);
	EXPECT_EQ(0U, w.flags);
	close(w.fd);
	close(plain);
}

TEST_F(batch, borrow_needs_job_flag)
{
	struct iopa_work w;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_NE(self->file, w.fd);
	EXPECT_EQ(0U, w.flags);
	close(w.fd);
}

/* The lent fd was closed before the fetch: a new fd, for the job's file. */
TEST_F(batch, borrow_closed_fd_gets_new_fd)
{
	struct stat a, b;
	struct iopa_work w;
	int lent = dup(self->file);

	ASSERT_LE(0, lent);
	ASSERT_EQ(1, submit_flags(self->sub, lent, 1, 1, IOPA_JOB_F_BORROW));
	close(lent);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(0U, w.flags);
	ASSERT_LE(0, w.fd);
	ASSERT_EQ(0, fstat(self->file, &a));
	ASSERT_EQ(0, fstat(w.fd, &b));
	EXPECT_EQ(a.st_ino, b.st_ino);
	close(w.fd);
}

/* The lent fd's number names another file by then: not handed over. */
TEST_F(batch, borrow_reused_number_gets_new_fd)
{
	struct stat a, b;
	struct iopa_work w;
	int lent = dup(self->file), other;

	ASSERT_LE(0, lent);
	ASSERT_EQ(1, submit_flags(self->sub, lent, 1, 1, IOPA_JOB_F_BORROW));
	other = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, other);
	ASSERT_EQ(lent, dup2(other, lent));
	close(other);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(0U, w.flags);
	EXPECT_NE(lent, w.fd);
	ASSERT_EQ(0, fstat(self->file, &a));
	ASSERT_EQ(0, fstat(w.fd, &b));
	EXPECT_EQ(a.st_ino, b.st_ino);
	close(w.fd);
	close(lent);
}

/*
 * A worker in another process whose table does not have the file at
 * that number gets a new fd; its own copy of the table is what counts.
 */
TEST_F(batch, borrow_other_process_gets_new_fd)
{
	int lent = dup(self->file), st;
	pid_t pid;

	ASSERT_LE(0, lent);
	ASSERT_EQ(1, submit_flags(self->sub, lent, 1, 1, IOPA_JOB_F_BORROW));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct iopa_work w;

		close(lent);
		if (iopa_fetch_nb(self->wrk, &w))
			_exit(2);
		if (w.flags != 0 || w.fd < 0)
			_exit(3);
		_exit(iopa_complete(self->wrk, w.job_id, 0) ? 4 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(lent);
}

static int set_files(int wfd, const int *fds, uint32_t nr)
{
	struct iopa_worker_files f = { .fds = (uintptr_t)fds, .nr = nr };

	return iopa_ioctl(wfd, IOPA_IOC_WORKER_SET_FILES, &f);
}

/*
 * A worker process that has the job's file open at another number, and
 * named it with WORKER_SET_FILES, is lent that fd: no new fd.
 */
TEST_F(batch, set_files_lends_a_named_fd)
{
	int lent = dup(self->file), st;
	pid_t pid;

	ASSERT_LE(0, lent);
	ASSERT_EQ(2, submit_flags(self->sub, lent, 1, 2, IOPA_JOB_F_BORROW));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct iopa_work w;
		int mine = lent + 10, next;

		/* the file at another number here; the lent one gone */
		if (dup2(lent, mine) != mine || close(lent))
			_exit(2);
		/* unnamed: a new fd */
		if (iopa_fetch_nb(self->wrk, &w) || w.flags || w.fd == mine)
			_exit(3);
		close(w.fd);
		if (iopa_complete(self->wrk, w.job_id, 0))
			_exit(4);
		if (set_files(self->wrk, &mine, 1))
			_exit(5);
		next = iopa_next_fd();
		if (iopa_fetch_nb(self->wrk, &w) ||
		    w.flags != IOPA_WORK_F_BORROWED || w.fd != mine ||
		    iopa_next_fd() != next)
			_exit(6);
		_exit(iopa_complete(self->wrk, w.job_id, 0) ? 7 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(lent);
}

TEST_F(batch, set_files_errors)
{
	struct iopa_worker_files f;
	int fds[IOPA_WORKER_MAX_FILES + 1], i, plain;

	for (i = 0; i <= IOPA_WORKER_MAX_FILES; i++)
		fds[i] = self->file;
	EXPECT_EQ(0, set_files(self->wrk, fds, IOPA_WORKER_MAX_FILES));
	EXPECT_EQ(0, set_files(self->wrk, NULL, 0));	/* forget them */
	EXPECT_EQ(-EINVAL, set_files(self->wrk, fds, IOPA_WORKER_MAX_FILES + 1));
	fds[1] = -1;
	EXPECT_EQ(-EBADF, set_files(self->wrk, fds, 2));
	fds[1] = 1000000;
	EXPECT_EQ(-EBADF, set_files(self->wrk, fds, 2));
	EXPECT_EQ(-EFAULT, set_files(self->wrk, (int *)8, 2));
	memset(&f, 0, sizeof(f));
	f.fds = (uintptr_t)fds;
	f.flags = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_WORKER_SET_FILES, &f));
	f.flags = 0;
	f.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_WORKER_SET_FILES, &f));
	/* a worker that takes no lent fds */
	plain = iopa_worker_create(self->ctx);
	ASSERT_LE(0, plain);
	EXPECT_EQ(-EINVAL, set_files(plain, fds, 1));
	EXPECT_EQ(-ENOTTY, set_files(self->sub, fds, 1));
	close(plain);
}

TEST_F(batch, worker_create_unknown_flag_einval)
{
	EXPECT_EQ(-EINVAL, worker_create_flags(self->ctx,
					       IOPA_WORKER_F_MASK << 1));
}

/* ---- IOPA_IOC_WORK_BATCH ------------------------------------------------ */

TEST_F(batch, fetches_up_to_nr_work)
{
	struct iopa_stats st;
	uint32_t i;
	int n;

	ASSERT_EQ(10, submit_flags(self->sub, self->file, 100, 10, 0));
	n = fetch_many_nb(self->wrk, self->work, 8);
	ASSERT_EQ(8, n);
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(100 + i, self->work[i].user_data);
		EXPECT_LE(0, self->work[i].fd);
		EXPECT_NE(self->file, self->work[i].fd);
	}
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(8ULL, st.inflight);
	EXPECT_EQ(2ULL, st.pending);
	close_owned(self->work, n);
}

TEST_F(batch, completes_then_fetches_rest)
{
	struct iopa_cqe cqes[16];
	struct iopa_stats st;
	uint32_t completed;
	int i, n;

	ASSERT_EQ(10, submit_flags(self->sub, self->file, 100, 10,
				   IOPA_JOB_F_BORROW));
	ASSERT_EQ(8, fetch_many_nb(self->wrk, self->work, 8));
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(self->file, self->work[i].fd);
		self->done[i].job_id = self->work[i].job_id;
		self->done[i].res = i;
	}
	n = work_batch(self->wrk, self->done, 8, self->work, 8,
		       IOPA_FETCH_F_NONBLOCK, 0, &completed);
	ASSERT_EQ(2, n);
	EXPECT_EQ(8U, completed);
	EXPECT_EQ(108ULL, self->work[0].user_data);
	EXPECT_EQ(109ULL, self->work[1].user_data);
	ASSERT_EQ(8, iopa_reap_nb(self->sub, cqes, 16));
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(100ULL + i, cqes[i].user_data);
		EXPECT_EQ(i, cqes[i].res);
	}
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(2ULL, st.inflight);
	EXPECT_EQ(0ULL, st.pending);
}

TEST_F(batch, complete_only)
{
	struct iopa_cqe cqes[4];
	uint32_t completed;

	ASSERT_EQ(2, submit_flags(self->sub, self->file, 1, 2, 0));
	ASSERT_EQ(2, fetch_many_nb(self->wrk, self->work, 2));
	close_owned(self->work, 2);
	self->done[0].job_id = self->work[0].job_id;
	self->done[1].job_id = self->work[1].job_id;
	/* no work asked: returns at once, even without NONBLOCK */
	ASSERT_EQ(0, work_batch(self->wrk, self->done, 2, NULL, 0, 0, 0,
				&completed));
	EXPECT_EQ(2U, completed);
	ASSERT_EQ(2, iopa_reap_nb(self->sub, cqes, 4));
}

/* A batch takes no more of a submitter's jobs than its limit lets run. */
TEST_F(batch, capped_by_limit)
{
	struct iopa_stats st;

	ASSERT_EQ(0, iopa_set_limit(self->sub, 3));
	ASSERT_EQ(10, submit_flags(self->sub, self->file, 1, 10, 0));
	ASSERT_EQ(3, fetch_many_nb(self->wrk, self->work, 8));
	close_owned(self->work, 3);
	EXPECT_EQ(-EAGAIN, fetch_many_nb(self->wrk, self->work, 8));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(3ULL, st.inflight);
	EXPECT_EQ(7ULL, st.pending);
}

/* ... and no more than the worker may hold. */
TEST_F(batch, capped_by_worker_room)
{
	int sub2 = iopa_submitter_create(self->ctx, IOPA_LIMIT_MAX);

	ASSERT_LE(0, sub2);
	ASSERT_EQ(NR + 4, submit_flags(sub2, self->file, 1, NR + 4,
				       IOPA_JOB_F_BORROW));
	ASSERT_EQ(NR - 2, fetch_many_nb(self->wrk, self->work, NR - 2));
	ASSERT_EQ(2, fetch_many_nb(self->wrk, self->work, NR));
	EXPECT_EQ(-EBUSY, fetch_many_nb(self->wrk, self->work, 1));
	close(sub2);
}

TEST_F(batch, stops_at_failed_completion)
{
	struct iopa_cqe cqe;
	struct iopa_stats st;
	uint32_t completed;

	ASSERT_EQ(3, submit_flags(self->sub, self->file, 1, 3, 0));
	ASSERT_EQ(2, fetch_many_nb(self->wrk, self->work, 2));
	close_owned(self->work, 2);
	self->done[0].job_id = self->work[0].job_id;
	self->done[1].job_id = 0xfffffff;	/* not held */
	self->done[2].job_id = self->work[1].job_id;
	EXPECT_EQ(-ENOENT, work_batch(self->wrk, self->done, 3, self->work, 4,
				      IOPA_FETCH_F_NONBLOCK, 0, &completed));
	EXPECT_EQ(1U, completed);
	/* the first took effect, the third did not, nothing was fetched */
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &cqe, 1));
	EXPECT_EQ(1ULL, cqe.user_data);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.inflight);
	EXPECT_EQ(1ULL, st.pending);
}

TEST_F(batch, bad_args_einval)
{
	struct iopa_batch b;
	struct iopa_stats st;

	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1, 0));
	/* nothing asked */
	EXPECT_EQ(-EINVAL, work_batch(self->wrk, NULL, 0, NULL, 0, 0, 0, NULL));
	EXPECT_EQ(-EINVAL, work_batch(self->wrk, NULL, 0, self->work, NR + 1,
				      IOPA_FETCH_F_NONBLOCK, 0, NULL));
	EXPECT_EQ(-EINVAL, work_batch(self->wrk, self->done, NR + 1,
				      self->work, 1, IOPA_FETCH_F_NONBLOCK, 0,
				      NULL));
	EXPECT_EQ(-EINVAL, work_batch(self->wrk, NULL, 0, self->work, 1,
				      IOPA_FETCH_F_MASK << 1, 0, NULL));
	memset(&b, 0, sizeof(b));
	b.work = (uintptr_t)self->work;
	b.nr_work = 1;
	b.flags = IOPA_FETCH_F_NONBLOCK;
	b.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_WORK_BATCH, &b));
	/* a completion with flags: none takes effect */
	memset(self->done, 0, sizeof(self->done));
	self->done[0].flags = 1;
	EXPECT_EQ(-EINVAL, work_batch(self->wrk, self->done, 1, self->work, 1,
				      IOPA_FETCH_F_NONBLOCK, 0, NULL));
	self->done[0].flags = 0;
	self->done[0].reserved = 1;
	EXPECT_EQ(-EINVAL, work_batch(self->wrk, self->done, 1, self->work, 1,
				      IOPA_FETCH_F_NONBLOCK, 0, NULL));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
}

TEST_F(batch, bad_pointers_efault)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct iopa_batch *ro;
	struct iopa_stats st;
	int next;

	ASSERT_EQ(2, submit_flags(self->sub, self->file, 1, 2, 0));
	/* the completions unreadable */
	EXPECT_EQ(-EFAULT, work_batch(self->wrk, (void *)8, 1, self->work, 1,
				      IOPA_FETCH_F_NONBLOCK, 0, NULL));
	/* the work array unwritable: the jobs go back, no fd is left */
	next = iopa_next_fd();
	EXPECT_EQ(-EFAULT, work_batch(self->wrk, NULL, 0, (void *)8, 2,
				      IOPA_FETCH_F_NONBLOCK, 0, NULL));
	EXPECT_EQ(next, iopa_next_fd());
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(2ULL, st.pending);
	EXPECT_EQ(0ULL, st.dispatched);
	/* the argument read-only: refused before anything takes effect */
	ro = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	ro->work = (uintptr_t)self->work;
	ro->nr_work = 1;
	ro->flags = IOPA_FETCH_F_NONBLOCK;
	ASSERT_EQ(0, mprotect(ro, pg, PROT_READ));
	EXPECT_EQ(-EFAULT, iopa_ioctl(self->wrk, IOPA_IOC_WORK_BATCH, ro));
	munmap(ro, pg);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(2ULL, st.pending);
}

/* Out of fds midway: the jobs handed over stand, the others go back. */
TEST_F(batch, emfile_midway_returns_the_first)
{
	struct rlimit old, rl;
	struct iopa_stats st;
	int next, r;

	ASSERT_EQ(4, submit_flags(self->sub, self->file, 1, 4, 0));
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	next = iopa_next_fd();
	ASSERT_LT(0, next);
	rl = old;
	rl.rlim_cur = next + 2;	/* room for two new fds */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	r = fetch_many_nb(self->wrk, self->work, 4);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	ASSERT_EQ(2, r);
	EXPECT_EQ(1ULL, self->work[0].user_data);
	EXPECT_EQ(2ULL, self->work[1].user_data);
	close_owned(self->work, 2);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(2ULL, st.inflight);
	EXPECT_EQ(2ULL, st.pending);
	EXPECT_EQ(2ULL, st.dispatched);
	/* in their order */
	ASSERT_EQ(2, fetch_many_nb(self->wrk, self->work, 4));
	EXPECT_EQ(3ULL, self->work[0].user_data);
	EXPECT_EQ(4ULL, self->work[1].user_data);
	close_owned(self->work, 2);
}

/* The fetch part failing after completions: 0 jobs, not its errno. */
TEST_F(batch, fetch_failure_after_completions_is_success)
{
	uint32_t completed;

	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1, 0));
	ASSERT_EQ(1, fetch_many_nb(self->wrk, self->work, 1));
	close_owned(self->work, 1);
	self->done[0].job_id = self->work[0].job_id;
	ASSERT_EQ(0, work_batch(self->wrk, self->done, 1, self->work, 4,
				IOPA_FETCH_F_NONBLOCK, 0, &completed));
	EXPECT_EQ(1U, completed);
	/* without completions the errno comes back */
	EXPECT_EQ(-EAGAIN, fetch_many_nb(self->wrk, self->work, 4));
}

/* A borrowed fd is not lent under a lease: a new fd, owned. */
TEST_F(batch, borrow_not_under_lease)
{
	struct iopa_work w;

	ASSERT_EQ(0, iopa_set_lease(self->sub, IOPA_MS_NS(10000)));
	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1,
				  IOPA_JOB_F_BORROW));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(0U, w.flags);
	EXPECT_NE(self->file, w.fd);
	close(w.fd);
}

/*
 * A lease set after a job was lent does not take the lent run back: the
 * worker uses the submitter's number until it completes the job, so the
 * submitter must not see the job end before that (Core round 2, item 1:
 * the lease used to end it, the submitter reaped -ECANCELED, closed the
 * fd and opened another file at its number, and the worker's write
 * through the number landed there).
 */
TEST_F(batch, lent_run_not_taken_back_by_later_lease)
{
	struct iopa_cqe cqe;
	struct iopa_work w;

	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1,
				  IOPA_JOB_F_BORROW | IOPA_JOB_F_NO_REQUEUE));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(IOPA_WORK_F_BORROWED, w.flags);
	ASSERT_EQ(self->file, w.fd);
	ASSERT_EQ(0, iopa_set_lease(self->sub, IOPA_MS_NS(1)));
	/* 50 leases long: no completion comes while the worker holds it */
	EXPECT_EQ(0, iopa_poll1(self->sub, POLLIN, 50));
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, &cqe, 1));
	EXPECT_EQ(0, iopa_complete(self->wrk, w.job_id, 5));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &cqe, 1));
	EXPECT_EQ(5, cqe.res);
	EXPECT_EQ(0U, cqe.flags);
}

/* A run that was not lent is still taken back by a later lease. */
TEST_F(batch, unlent_run_taken_back_by_later_lease)
{
	struct iopa_cqe cqe;
	struct iopa_work w;

	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1,
				  IOPA_JOB_F_NO_REQUEUE));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(0U, w.flags);
	close(w.fd);
	ASSERT_EQ(0, iopa_set_lease(self->sub, IOPA_MS_NS(1)));
	ASSERT_EQ(1, iopa_reap_one(self->sub, &cqe));
	EXPECT_EQ(-ECANCELED, cqe.res);
	EXPECT_EQ(IOPA_CQE_F_CANCELED | IOPA_CQE_F_LEASE_EXPIRED, cqe.flags);
	EXPECT_EQ(-ETIME, iopa_complete(self->wrk, w.job_id, 0));
}

TEST_F(batch, nonblock_eagain_and_timeout)
{
	int64_t t0 = iopa_now_ns(), dt;
	uint32_t completed = 1;

	EXPECT_EQ(-EAGAIN, fetch_many_nb(self->wrk, self->work, 4));
	EXPECT_EQ(-ETIMEDOUT, work_batch(self->wrk, NULL, 0, self->work, 4, 0,
					 IOPA_MS_NS(50), &completed));
	dt = iopa_now_ns() - t0;
	EXPECT_LE(IOPA_MS_NS(45), dt);
	EXPECT_EQ(0U, completed);
}

/*
 * A signal while waiting after completions took effect: the call
 * succeeds with no job (a restart would complete them again).
 */
TEST_F(batch, signal_after_completions_returns_no_job)
{
	struct iopa_sigger sg;
	struct sigaction sa;
	struct iopa_cqe cqe;
	uint32_t completed;
	int r;

	ASSERT_EQ(1, submit_flags(self->sub, self->file, 1, 1, 0));
	ASSERT_EQ(1, fetch_many_nb(self->wrk, self->work, 1));
	close_owned(self->work, 1);
	self->done[0].job_id = self->work[0].job_id;
	/* SA_RESTART: a restart would fail, completing the job again. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = iopa_nop_handler;
	sa.sa_flags = SA_RESTART;
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(0, iopa_sigger_start(&sg, SIGUSR1, self->ctx, 1));
	r = work_batch(self->wrk, self->done, 1, self->work, 4, 0,
		       IOPA_LONG_NS, &completed);
	iopa_sigger_stop(&sg);
	EXPECT_EQ(0, sg.wait_rc);
	ASSERT_EQ(0, r);
	EXPECT_EQ(1U, completed);
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &cqe, 1));
	EXPECT_EQ(0, cqe.res);
}

/* A waiting batch is woken by a submit, and takes what came. */
struct submit_later {
	int sub, file, ctx;
};

static void *submit_later_fn(void *arg)
{
	struct submit_later *s = arg;
	struct iopa_job jobs[3];
	int i;

	if (iopa_wait_nr_waiting(s->ctx, 1))
		return NULL;
	for (i = 0; i < 3; i++)
		iopa_job_init(&jobs[i], s->file, 50 + i);
	iopa_submit(s->sub, jobs, 3, 0);
	return NULL;
}

TEST_F(batch, waits_then_takes_what_came)
{
	struct submit_later s = { self->sub, self->file, self->ctx };
	pthread_t th;
	int n;

	ASSERT_EQ(0, pthread_create(&th, NULL, submit_later_fn, &s));
	n = work_batch(self->wrk, NULL, 0, self->work, 8, 0, IOPA_LONG_NS,
		       NULL);
	pthread_join(th, NULL);
	ASSERT_EQ(3, n);
	EXPECT_EQ(50ULL, self->work[0].user_data);
	EXPECT_EQ(52ULL, self->work[2].user_data);
	close_owned(self->work, n);
}

/* ---- exactly once, for jobs held in batches ------------------------------ */

TEST_F(batch, worker_close_requeues_every_held_job_once)
{
	struct iopa_cqe cqes[NR];
	struct iopa_stats st;
	int w2, n, i;

	ASSERT_EQ(16, submit_flags(self->sub, self->file, 1, 16,
				   IOPA_JOB_F_BORROW));
	ASSERT_EQ(16, fetch_many_nb(self->wrk, self->work, 16));
	iopa_close(&self->wrk);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(16ULL, st.requeued);
	EXPECT_EQ(16ULL, st.pending);
	w2 = worker_create_flags(self->ctx, IOPA_WORKER_F_BORROW);
	ASSERT_LE(0, w2);
	n = fetch_many_nb(w2, self->work, 16);
	ASSERT_EQ(16, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(IOPA_WORK_F_REQUEUED | IOPA_WORK_F_BORROWED,
			  self->work[i].flags);
		EXPECT_NE(0ULL, self->work[i].job_id & IOPA_JOB_ID_RERUN);
		self->done[i].job_id = self->work[i].job_id;
	}
	/* the second holder dies too: cancelled, not run a third time */
	close(w2);
	ASSERT_EQ(16, iopa_reap_nb(self->sub, cqes, NR));
	for (i = 0; i < 16; i++) {
		EXPECT_EQ(-ECANCELED, cqes[i].res);
		EXPECT_EQ(IOPA_CQE_F_CANCELED | IOPA_CQE_F_REQUEUED |
			  IOPA_CQE_F_WORKER_DIED, cqes[i].flags);
	}
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(16ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.inflight);
	ASSERT_STATS_INVARIANT(self->sub);
}

/* A killed batch worker process: every job it held runs again, once. */
TEST_F(batch, killed_worker_process_jobs_run_again)
{
	struct iopa_cqe cqes[NR];
	int efd = eventfd(0, EFD_CLOEXEC), i, n, got = 0;
	uint64_t v;
	pid_t pid;

	ASSERT_LE(0, efd);
	ASSERT_EQ(8, submit_flags(self->sub, self->file, 1, 8, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* its own worker, which dies with it */
		int w = iopa_worker_create(self->ctx);

		if (w < 0 || fetch_many_nb(w, self->work, 8) != 8)
			_exit(1);
		iopa_efd_signal(efd);
		pause();
		_exit(0);
	}
	ASSERT_EQ(8, read(efd, &v, sizeof(v)));
	ASSERT_EQ(0, iopa_kill_wait(pid));
	close(efd);
	n = fetch_many_nb(self->wrk, self->work, 8);
	ASSERT_EQ(8, n);
	for (i = 0; i < n; i++) {
		EXPECT_EQ(IOPA_WORK_F_REQUEUED, self->work[i].flags);
		self->done[i].job_id = self->work[i].job_id;
	}
	close_owned(self->work, n);
	ASSERT_EQ(0, work_batch(self->wrk, self->done, n, NULL, 0, 0, 0, NULL));
	while (got < 8) {
		int r = iopa_reap(self->sub, cqes + got, NR - got,
				  IOPA_REAP_F_WAIT, IOPA_LONG_NS);

		ASSERT_LT(0, r);
		got += r;
	}
	for (i = 0; i < 8; i++) {
		EXPECT_EQ(0, cqes[i].res);
		EXPECT_EQ(IOPA_CQE_F_REQUEUED, cqes[i].flags);
	}
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, cqes, NR));
}

/* ---- job lifecycle trace events ------------------------------------------ */

/* Lines of @buf with " @event: " and @needle in them. */
static int count_events(const char *buf, const char *event, const char *needle)
{
	char key[64];
	const char *p = buf;
	int n = 0;

	snprintf(key, sizeof(key), " %s: ", event);
	while ((p = strstr(p, key))) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[512];

		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = 0;
		if (!needle || strstr(line, needle))
			n++;
		p += len;
	}
	return n;
}

/*
 * In a tracefs instance of its own: three jobs submitted; one completed,
 * one requeued (its worker closed) then completed, one cancelled.  Each
 * event shows, with this process as tgid and the job's ids.
 */
TEST_F(batch, job_trace_events)
{
	static const char *const events[] = {
		"iopa_job_submit", "iopa_job_dispatch", "iopa_job_complete",
		"iopa_job_requeue", "iopa_job_cancel",
	};
	const char *tfs = tracefs_dir();
	char inst[128], rel[256], tgid[32], *buf;
	struct iopa_work w;
	struct iopa_stats st;
	unsigned int i;
	int w2;

	if (!tfs)
		SKIP(return, "no tracefs");
	snprintf(inst, sizeof(inst), "%s/instances/iopa-batch-%d", tfs,
		 getpid());
	if (mkdir(inst, 0700))
		SKIP(return, "no tracefs instances (%s)", strerror(errno));
	snprintf(inst, sizeof(inst), "instances/iopa-batch-%d", getpid());
	for (i = 0; i < IOPA_ARRAY_SIZE(events); i++) {
		snprintf(rel, sizeof(rel), "%s/events/iopa/%s/enable", inst,
			 events[i]);
		ASSERT_EQ(0, trace_write(tfs, rel, "1"))
			TH_LOG("%s: no such event", events[i]);
	}
	ASSERT_EQ(3, submit_flags(self->sub, self->file, 1, 3, 0));
	/* one completed */
	ASSERT_EQ(0, iopa_run_one(self->wrk, 7, &w));
	/* one requeued: its worker goes away holding it; then completed */
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	ASSERT_EQ(0, iopa_fetch_nb(w2, &w));
	close(w.fd);
	close(w2);
	ASSERT_EQ(0, iopa_run_one(self->wrk, 8, &w));
	/* one cancelled, pending */
	ASSERT_EQ(1, iopa_cancel(self->sub, 3, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(2ULL, st.completed);
	EXPECT_EQ(1ULL, st.cancelled);

	snprintf(rel, sizeof(rel), "%s/trace", inst);
	buf = trace_read_all(tfs, rel);
	ASSERT_NE(NULL, buf);
	snprintf(tgid, sizeof(tgid), "tgid=%d ", getpid());
	EXPECT_EQ(3, count_events(buf, "iopa_job_submit", tgid));
	EXPECT_EQ(3, count_events(buf, "iopa_job_dispatch", "wait_us="));
	EXPECT_EQ(2, count_events(buf, "iopa_job_complete", "svc_us="));
	EXPECT_EQ(1, count_events(buf, "iopa_job_complete", "res=7"));
	EXPECT_EQ(1, count_events(buf, "iopa_job_requeue", "flags=0x4"));
	EXPECT_EQ(1, count_events(buf, "iopa_job_cancel", "flags=0x1 res=-125"));
	if (_metadata->exit_code)
		TH_LOG("trace:\n%s", buf);
	free(buf);
	snprintf(rel, sizeof(rel), "%s/%s", tfs, inst);
	EXPECT_EQ(0, rmdir(rel));
}

TEST_HARNESS_MAIN
