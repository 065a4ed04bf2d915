// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * libiopa's ioctl wrappers against the real module: each returns what the
 * ioctl returns on success and -errno (not -1) on each error path of
 * Documentation/iopa.rst; struct arguments are built and zeroed right.
 */
#include "libiopa_test.h"

FIXTURE(w) {
	int ctx;
	int sub;	/* limit 4 */
	int wrk;
	int file;
	struct iopa_features feat;
};

FIXTURE_SETUP(w)
{
	self->ctx = self->sub = self->wrk = self->file = -1;
	self->ctx = iopa_open();
	if (self->ctx == -ENOENT)
		SKIP(return, "no /dev/iopa: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->ctx, &self->feat));
	self->sub = iopa_submitter_create(self->ctx, 4, 0);
	ASSERT_LE(0, self->sub);
	self->wrk = iopa_worker_create(self->ctx, 0);
	ASSERT_LE(0, self->wrk);
	self->file = t_job_file(8192);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(w)
{
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

TEST_F(w, open_and_features)
{
	int fds[] = { self->ctx, self->sub, self->wrk };
	unsigned int i;

	EXPECT_EQ(1, fcntl(self->ctx, F_GETFD) & FD_CLOEXEC);
	for (i = 0; i < 3; i++) {
		struct iopa_features f;

		memset(&f, 0xa5, sizeof(f));
		ASSERT_EQ(0, iopa_get_features(fds[i], &f));
		EXPECT_EQ((unsigned int)IOPA_ABI_VERSION, f.abi_version);
		EXPECT_TRUE(!!(f.features & IOPA_FEAT_IOCTL));
		EXPECT_EQ((unsigned int)IOPA_BATCH_MAX, f.batch_max);
		EXPECT_EQ(0U, f.reserved0);
	}
	TH_LOG("features %#llx", (unsigned long long)self->feat.features);
}

TEST_F(w, create_errors)
{
	EXPECT_EQ(-EINVAL, iopa_submitter_create(self->ctx, IOPA_LIMIT_MAX + 1, 0));
	EXPECT_EQ(-EINVAL, iopa_submitter_create(self->ctx, 1, 1));
	EXPECT_EQ(-ENOTTY, iopa_submitter_create(self->sub, 1, 0));
	EXPECT_EQ(-ENOTTY, iopa_submitter_create(self->wrk, 1, 0));
	EXPECT_EQ(-EINVAL, iopa_worker_create(self->ctx, IOPA_WORKER_F_MASK << 1));
	EXPECT_EQ(-ENOTTY, iopa_worker_create(self->sub, 0));
	EXPECT_EQ(-EBADF, iopa_worker_create(-1, 0));
}

TEST_F(w, submit_fetch_complete_reap)
{
	struct iopa_job j = job_of(self->file, 0x1234);
	struct iopa_work work;
	struct iopa_cqe cqe;
	int fd;

	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	ASSERT_EQ(0, iopa_fetch(self->wrk, &work, 0, T_MS_NS(T_LONG_MS)));
	EXPECT_EQ(0x1234ULL, work.user_data);
	EXPECT_EQ(4096ULL, work.len);
	ASSERT_LE(0, work.fd);
	EXPECT_NE(self->file, work.fd);
	fd = work.fd;
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	close(fd);
	EXPECT_EQ(-EAGAIN, iopa_reap(self->sub, &cqe, 1, 0, 0));
	ASSERT_EQ(0, iopa_complete(self->wrk, work.job_id, 123));
	memset(&cqe, 0, sizeof(cqe));
	ASSERT_EQ(1, iopa_reap(self->sub, &cqe, 1, IOPA_REAP_F_WAIT,
			       T_MS_NS(T_LONG_MS)));
	EXPECT_EQ(0x1234ULL, cqe.user_data);
	EXPECT_EQ(work.job_id, cqe.job_id);
	EXPECT_EQ(123, cqe.res);
	EXPECT_EQ(0U, cqe.flags);
	/* Completing it again: it ended. */
	EXPECT_EQ(-ENOENT, iopa_complete(self->wrk, work.job_id, 0));
}

TEST_F(w, submit_errors)
{
	struct iopa_job jobs[2] = { job_of(self->file, 1), job_of(-1, 2) };
	struct iopa_job bad = job_of(self->file, 3);
	int pfd[2];

	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, jobs, 0, 0));
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, jobs, IOPA_BATCH_MAX + 1, 0));
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, jobs, 1, 0x80));
	EXPECT_EQ(-EFAULT, iopa_submit(self->sub, NULL, 1, 0));
	EXPECT_EQ(-EBADF, iopa_submit(self->sub, &jobs[1], 1, 0));
	bad.flags = 0x80;
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &bad, 1, 0));
	bad = job_of(self->file, 3);
	bad.reserved = 1;
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &bad, 1, 0));
	ASSERT_EQ(0, pipe2(pfd, O_CLOEXEC));
	bad = job_of(pfd[0], 3);
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &bad, 1, 0));
	close(pfd[0]);
	close(pfd[1]);
	EXPECT_EQ(-ENOTTY, iopa_submit(self->ctx, jobs, 1, 0));
	EXPECT_EQ(-ENOTTY, iopa_submit(self->wrk, jobs, 1, 0));
	/* Partial success: the first job is queued, 1 is returned. */
	EXPECT_EQ(1, iopa_submit(self->sub, jobs, 2, 0));
}

TEST_F(w, reap_errors)
{
	struct iopa_cqe cqe[2];
	int64_t t0;

	EXPECT_EQ(-EAGAIN, iopa_reap(self->sub, cqe, 2, 0, 0));
	EXPECT_EQ(-EINVAL, iopa_reap(self->sub, cqe, 0, 0, 0));
	EXPECT_EQ(-EINVAL, iopa_reap(self->sub, cqe, 2, 0x80, 0));
	t0 = t_now_ms();
	EXPECT_EQ(-ETIMEDOUT, iopa_reap(self->sub, cqe, 2, IOPA_REAP_F_WAIT,
					T_MS_NS(20)));
	EXPECT_LE(15, t_now_ms() - t0);
	EXPECT_EQ(-ENOTTY, iopa_reap(self->ctx, cqe, 2, 0, 0));
}

TEST_F(w, cancel)
{
	struct iopa_job j = job_of(self->file, 7);
	struct iopa_work work;
	struct iopa_cqe cqe;

	EXPECT_EQ(-ENOENT, iopa_cancel(self->sub, 7, 0));
	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	ASSERT_EQ(2, iopa_cancel(self->sub, 7, IOPA_CANCEL_F_ALL));
	ASSERT_EQ(1, iopa_reap(self->sub, &cqe, 1, 0, 0));
	EXPECT_EQ(-ECANCELED, cqe.res);
	EXPECT_TRUE(!!(cqe.flags & IOPA_CQE_F_CANCELED));
	EXPECT_EQ(-EINVAL, iopa_cancel(self->sub, 7, 0x80));
	/* Running jobs are not cancelled. */
	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	ASSERT_EQ(0, iopa_fetch(self->wrk, &work, IOPA_FETCH_F_NONBLOCK, 0));
	close(work.fd);
	EXPECT_EQ(-EALREADY, iopa_cancel(self->sub, 7, 0));
	EXPECT_EQ(0, iopa_complete(self->wrk, work.job_id, 0));
	EXPECT_EQ(-ENOTTY, iopa_cancel(self->wrk, 7, 0));
}

TEST_F(w, order)
{
	struct iopa_state state;

	if (!(self->feat.features & IOPA_FEAT_ORDER))
		SKIP(return, "no IOPA_FEAT_ORDER");
	EXPECT_EQ(0, iopa_set_order(self->sub, IOPA_ORDER_SORTED));
	memset(&state, 0xa5, sizeof(state));
	ASSERT_EQ(0, iopa_get_state(self->sub, &state));
	EXPECT_EQ((unsigned int)IOPA_ORDER_SORTED, state.order);
	EXPECT_EQ(-EINVAL, iopa_set_order(self->sub, IOPA_ORDER_MAX + 1));
	EXPECT_EQ(-ENOTTY, iopa_set_order(self->wrk, IOPA_ORDER_FIFO));
	EXPECT_EQ(-EBADF, iopa_set_order(-1, IOPA_ORDER_FIFO));
	EXPECT_EQ(0, iopa_set_order(self->sub, IOPA_ORDER_FIFO));
	ASSERT_EQ(0, iopa_get_state(self->sub, &state));
	EXPECT_EQ((unsigned int)IOPA_ORDER_FIFO, state.order);
}

TEST_F(w, lease)
{
	uint64_t ns = 1;

	if (!(self->feat.features & IOPA_FEAT_LEASE))
		SKIP(return, "no IOPA_FEAT_LEASE");
	EXPECT_EQ(0, iopa_get_lease(self->sub, &ns));
	EXPECT_EQ(0ULL, (unsigned long long)ns);
	EXPECT_EQ(0, iopa_set_lease(self->sub, IOPA_LEASE_MIN_NS));
	EXPECT_EQ(0, iopa_get_lease(self->sub, &ns));
	EXPECT_EQ(IOPA_LEASE_MIN_NS, (unsigned long long)ns);
	EXPECT_EQ(-EINVAL, iopa_set_lease(self->sub, 1));
	EXPECT_EQ(-ENOTTY, iopa_set_lease(self->wrk, IOPA_LEASE_MIN_NS));
	EXPECT_EQ(-EBADF, iopa_set_lease(-1, 0));
	EXPECT_EQ(-EFAULT, iopa_get_lease(self->sub, NULL));
	EXPECT_EQ(0, iopa_set_lease(self->sub, 0));
}

TEST_F(w, list_submitters)
{
	struct iopa_sub_info info[2];
	struct iopa_state state;
	unsigned int total = 0;

	if (!(self->feat.features & IOPA_FEAT_LIST))
		SKIP(return, "no IOPA_FEAT_LIST");
	EXPECT_EQ(0, iopa_list_submitters(self->ctx, NULL, 0, 0, &total));
	EXPECT_EQ(1U, total);
	memset(info, 0xa5, sizeof(info));
	ASSERT_EQ(1, iopa_list_submitters(self->ctx, info, 2, 0, NULL));
	ASSERT_EQ(0, iopa_get_state(self->sub, &state));
	EXPECT_EQ(state.limit, info[0].state.limit);
	EXPECT_EQ(getpid(), info[0].pid);
	EXPECT_EQ(-EINVAL, iopa_list_submitters(self->ctx, info, 2, 0x80, NULL));
	EXPECT_EQ(-ENOTTY, iopa_list_submitters(self->sub, info, 2, 0, NULL));
	EXPECT_EQ(-EBADF, iopa_list_submitters(-1, info, 2, 0, NULL));
}

TEST_F(w, limits)
{
	unsigned int flags = 0x55;
	struct iopa_stats st;
	struct iopa_state state;

	EXPECT_EQ(4, iopa_get_limit(self->sub, &flags));
	EXPECT_EQ(IOPA_LIMIT_F_FIXED, flags);
	EXPECT_EQ(0, iopa_set_limit(self->sub, 3));
	EXPECT_EQ(3, iopa_get_limit(self->sub, NULL));
	EXPECT_EQ(-EINVAL, iopa_set_limit(self->sub, IOPA_LIMIT_MAX + 1));
	EXPECT_EQ(3, iopa_get_limit(self->sub, NULL));
	EXPECT_EQ(-ENOTTY, iopa_set_limit(self->ctx, 3));
	EXPECT_EQ(-ENOTTY, iopa_get_limit(self->wrk, &flags));
	EXPECT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1U, st.nr_workers);
	EXPECT_EQ(-ENOTTY, iopa_get_stats(self->wrk, &st));

	if (!(self->feat.features & IOPA_FEAT_ADAPTIVE))
		SKIP(return, "no IOPA_FEAT_ADAPTIVE");
	EXPECT_EQ(0, iopa_set_limit(self->sub, 0));
	flags = 0x55;
	EXPECT_LT(0, iopa_get_limit(self->sub, &flags));
	EXPECT_EQ(0U, flags);
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_MAX + 1, 0, 0));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_IOPA, 3, 2));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP,
					  IOPA_LIMIT_MAX + 1, 0));
	EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_HILLCLIMB, 1, 8));
	memset(&state, 0xa5, sizeof(state));
	ASSERT_EQ(0, iopa_get_state(self->sub, &state));
	EXPECT_EQ((unsigned int)IOPA_POLICY_HILLCLIMB, state.policy);
	EXPECT_EQ(1U, state.min);
	EXPECT_EQ(8U, state.max);
	EXPECT_EQ(0U, state.flags);
	/* alone on no device: no shared budget, the default weight */
	EXPECT_EQ(0U, state.budget);
	EXPECT_EQ(0U, state.sharers);
	EXPECT_EQ(0U, state.group_cycles);
	EXPECT_EQ((unsigned int)IOPA_WEIGHT_DEFAULT, state.weight);
	if (self->feat.features & IOPA_FEAT_SHARE) {
		/* the weight and the bounds in one call */
		EXPECT_EQ(0, iopa_set_adapt_weight(self->sub, IOPA_POLICY_KEEP,
						   2, 9, 50));
		ASSERT_EQ(0, iopa_get_state(self->sub, &state));
		EXPECT_EQ(50U, state.weight);
		EXPECT_EQ(2U, state.min);
		EXPECT_EQ(9U, state.max);
		EXPECT_EQ(-EINVAL, iopa_set_adapt_weight(self->sub,
			  IOPA_POLICY_KEEP, 0, 0, IOPA_WEIGHT_MAX + 1));
		EXPECT_EQ(-EINVAL, iopa_set_adapt_weight(self->sub,
			  IOPA_POLICY_KEEP, 0, 0, 0));
		ASSERT_EQ(0, iopa_get_state(self->sub, &state));
		EXPECT_EQ(50U, state.weight);
		EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_HILLCLIMB,
					    1, 8));
		/* the plain call leaves the weight */
		ASSERT_EQ(0, iopa_get_state(self->sub, &state));
		EXPECT_EQ(50U, state.weight);
	}
	/*
	 * No job ran: nothing waited or completed (0 from a module without
	 * IOPA_FEAT_TIMES too); the noise is 0 before the first cycle, at
	 * most 1000 per mille after.
	 */
	EXPECT_EQ(0U, state.wait_us);
	EXPECT_EQ(0U, state.svc_us);
	EXPECT_EQ(0U, state.completions);
	EXPECT_GE(1000U, state.noise_permille);
	if (self->feat.features & IOPA_FEAT_BRACKET) {
		EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_BRACKET, 0, 0));
		ASSERT_EQ(0, iopa_get_state(self->sub, &state));
		EXPECT_EQ((unsigned int)IOPA_POLICY_BRACKET, state.policy);
		EXPECT_EQ(0U, state.min);
		EXPECT_EQ(0U, state.max);
		EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 2, 0));
		ASSERT_EQ(0, iopa_get_state(self->sub, &state));
		EXPECT_EQ((unsigned int)IOPA_POLICY_BRACKET, state.policy);
	} else {
		EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_BRACKET, 0, 0));
	}
	EXPECT_EQ(-ENOTTY, iopa_get_state(self->ctx, &state));
	EXPECT_EQ(-ENOTTY, iopa_set_adapt(self->wrk, 0, 0, 0));
}

/*
 * A submitter created adaptive (limit 0) gets the policy sysfs
 * default_policy names: "bracket" unless changed, on a module with
 * IOPA_FEAT_BRACKET.
 */
TEST_F(w, default_policy)
{
	static const char *const names[] = {
		[IOPA_POLICY_IOPA] = "iopa",
		[IOPA_POLICY_HILLCLIMB] = "hillclimb",
		[IOPA_POLICY_BRACKET] = "bracket",
	};
	struct iopa_state state;
	char buf[32] = "";
	ssize_t n;
	int fd, sub;

	if (!(self->feat.features & IOPA_FEAT_ADAPTIVE))
		SKIP(return, "no IOPA_FEAT_ADAPTIVE");
	fd = open(T_SYSFS "/default_policy", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(0, n);
	buf[n] = '\0';
	TH_LOG("default_policy %.*s", (int)strcspn(buf, "\n"), buf);
	sub = iopa_submitter_create(self->ctx, 0, 0);
	ASSERT_LE(0, sub);
	ASSERT_EQ(0, iopa_get_state(sub, &state));
	close(sub);
	ASSERT_LE(1U, state.policy);
	ASSERT_GE((unsigned int)IOPA_POLICY_MAX, state.policy);
	EXPECT_EQ(strlen(names[state.policy]) + 1, (size_t)n);
	EXPECT_EQ(0, strncmp(buf, names[state.policy], strlen(names[state.policy])));
	EXPECT_EQ('\n', buf[n - 1]);
}

TEST_F(w, fetch_errors)
{
	struct iopa_job j = job_of(self->file, 9);
	struct iopa_work work;
	struct iopa_cqe cqe;
	int64_t t0;

	memset(&work, 0x5a, sizeof(work));
	EXPECT_EQ(-EAGAIN, iopa_fetch(self->wrk, &work, IOPA_FETCH_F_NONBLOCK, 0));
	EXPECT_EQ(-1, work.fd);
	t0 = t_now_ms();
	EXPECT_EQ(-ETIMEDOUT, iopa_fetch(self->wrk, &work, 0, T_MS_NS(20)));
	EXPECT_LE(15, t_now_ms() - t0);
	EXPECT_EQ(-EINVAL, iopa_fetch(self->wrk, &work, 0x80, 0));
	EXPECT_EQ(-ENOTTY, iopa_fetch(self->sub, &work, IOPA_FETCH_F_NONBLOCK, 0));
	EXPECT_EQ(-ENOENT, iopa_complete(self->wrk, 999999, 0));
	EXPECT_EQ(-ENOENT, iopa_complete_and_fetch(self->wrk, 999999, 0, &work,
						   IOPA_FETCH_F_NONBLOCK, 0));
	EXPECT_EQ(-1, work.fd);
	EXPECT_EQ(-ENOTTY, iopa_complete(self->sub, 1, 0));

	/* COMPLETE_AND_FETCH: the completion stands when the fetch fails. */
	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	ASSERT_EQ(0, iopa_fetch(self->wrk, &work, IOPA_FETCH_F_NONBLOCK, 0));
	close(work.fd);
	EXPECT_EQ(-EAGAIN, iopa_complete_and_fetch(self->wrk, work.job_id, -5,
						   &work, IOPA_FETCH_F_NONBLOCK, 0));
	ASSERT_EQ(1, iopa_reap(self->sub, &cqe, 1, 0, 0));
	EXPECT_EQ(-5, cqe.res);
	EXPECT_EQ(9ULL, cqe.user_data);
}

/* COMPLETE_AND_FETCH hands over the next job in the same call. */
TEST_F(w, complete_and_fetch_chain)
{
	struct iopa_job jobs[3] = {
		job_of(self->file, 1), job_of(self->file, 2), job_of(self->file, 3),
	};
	struct iopa_cqe cqe[3];
	struct iopa_work work;
	uint64_t prev;
	int i;

	ASSERT_EQ(3, iopa_submit(self->sub, jobs, 3, 0));
	ASSERT_EQ(0, iopa_fetch(self->wrk, &work, IOPA_FETCH_F_NONBLOCK, 0));
	for (i = 0; i < 2; i++) {
		EXPECT_EQ((uint64_t)i + 1, work.user_data);
		close(work.fd);
		prev = work.job_id;
		ASSERT_EQ(0, iopa_complete_and_fetch(self->wrk, prev, 10 + i,
						     &work, 0, T_MS_NS(T_LONG_MS)));
	}
	EXPECT_EQ(3ULL, work.user_data);
	close(work.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, work.job_id, 12));
	ASSERT_EQ(3, iopa_reap(self->sub, cqe, 3, 0, 0));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(10 + (int)cqe[i].user_data - 1, cqe[i].res);
}

/* iopa_work_batch(): fetch three at once (limit 4), complete them, lent. */
TEST_F(w, work_batch)
{
	struct iopa_job jobs[3] = {
		job_of(self->file, 1), job_of(self->file, 2), job_of(self->file, 3),
	};
	struct iopa_work work[4];
	struct iopa_done done[4];
	struct iopa_cqe cqe[4];
	unsigned int completed = 99;
	int i, wb;

	if (!(self->feat.features & IOPA_FEAT_BATCH) ||
	    !(self->feat.features & IOPA_FEAT_BORROW))
		SKIP(return, "no IOPA_FEAT_BATCH / _BORROW");
	wb = iopa_worker_create(self->ctx, IOPA_WORKER_F_BORROW);
	ASSERT_LE(0, wb);
	for (i = 0; i < 3; i++)
		jobs[i].flags = IOPA_JOB_F_BORROW;
	ASSERT_EQ(3, iopa_submit(self->sub, jobs, 3, 0));
	ASSERT_EQ(3, iopa_work_batch(wb, NULL, 0, work, 4,
				     IOPA_FETCH_F_NONBLOCK, 0, &completed));
	EXPECT_EQ(0U, completed);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(self->file, work[i].fd);
		EXPECT_EQ(IOPA_WORK_F_BORROWED, work[i].flags);
		memset(&done[i], 0, sizeof(done[i]));
		done[i].job_id = work[i].job_id;
		done[i].res = 20 + i;
	}
	/* all completed; nothing more to fetch: 0 jobs, not EAGAIN */
	EXPECT_EQ(0, iopa_work_batch(wb, done, 3, work, 4,
				     IOPA_FETCH_F_NONBLOCK, 0, &completed));
	EXPECT_EQ(3U, completed);
	ASSERT_EQ(3, iopa_reap(self->sub, cqe, 4, 0, 0));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(20 + i, cqe[i].res);
	EXPECT_EQ(-EINVAL, iopa_work_batch(wb, NULL, 0, NULL, 0, 0, 0, NULL));
	close(wb);
}

TEST_HARNESS_MAIN
