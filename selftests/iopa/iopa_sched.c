// SPDX-License-Identifier: GPL-2.0
/*
 * iopa scheduling tests: in-flight limits (also under concurrency and
 * changed at run time), round-robin fairness between submitters, FIFO
 * within one, the per-submitter pending cap (sysfs max_jobs), poll/epoll
 * readiness, and a 10,000-job run through several worker threads.
 */
#include "iopa_test.h"

FIXTURE(sched) {
	int ctx;
	int wrk;
	int file;
	char path[64];
};

FIXTURE_SETUP(sched)
{
	self->ctx = self->wrk = self->file = -1;
	self->path[0] = 0;

	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->file = iopa_job_file(self->path, O_RDONLY);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(sched)
{
	iopa_close(&self->wrk);
	iopa_close(&self->ctx);
	iopa_close(&self->file);
	if (self->path[0])
		unlink(self->path);
}

/* ---- the limit under concurrency --------------------------------------- */

#define CONC_WORKERS	8
#define CONC_LIMIT	3
#define CONC_JOBS	96

struct conc {
	int wfd[CONC_WORKERS];
	atomic_int running;
	atomic_int max_running;
	atomic_int fetched;
	atomic_int errors;
	atomic_int stop;
	atomic_int last_err;
};

struct conc_arg {
	struct conc *c;
	int idx;
};

/* "Work": a short nap, so that other threads get to fetch meanwhile. */
static void short_work(void)
{
	struct timespec ts = { 0, 1000000 };	/* 1 ms */

	nanosleep(&ts, NULL);
}

static void *conc_worker(void *arg)
{
	struct conc_arg *a = arg;
	struct conc *c = a->c;
	int wfd = c->wfd[a->idx];

	while (!atomic_load(&c->stop)) {
		struct iopa_work w;
		int cur, max, r;

		/* the timeout only lets the thread notice "stop" */
		r = iopa_fetch(wfd, &w, 0, IOPA_MS_NS(50));
		if (r == -ETIMEDOUT)
			continue;
		if (r < 0) {
			atomic_store(&c->last_err, r);
			atomic_fetch_add(&c->errors, 1);
			break;
		}
		cur = atomic_fetch_add(&c->running, 1) + 1;
		max = atomic_load(&c->max_running);
		while (cur > max &&
		       !atomic_compare_exchange_weak(&c->max_running, &max, cur))
			;
		atomic_fetch_add(&c->fetched, 1);
		short_work();
		close(w.fd);
		/* leave the count BEFORE giving the slot back */
		atomic_fetch_sub(&c->running, 1);
		r = iopa_complete(wfd, w.job_id, 0);
		if (r) {
			atomic_store(&c->last_err, r);
			atomic_fetch_add(&c->errors, 1);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(sched, limit_under_concurrency, 120)
{
	struct conc c;
	struct conc_arg args[CONC_WORKERS];
	pthread_t th[CONC_WORKERS];
	struct iopa_cqe cqes[64];
	struct iopa_stats st;
	int i, sub, reaped = 0;

	memset(&c, 0, sizeof(c));
	sub = iopa_submitter_create(self->ctx, CONC_LIMIT);
	ASSERT_LE(0, sub);
	for (i = 0; i < CONC_WORKERS; i++) {
		c.wfd[i] = iopa_worker_create(self->ctx);
		ASSERT_LE(0, c.wfd[i]);
	}
	ASSERT_EQ(CONC_JOBS, iopa_submit_many(sub, self->file, 0, CONC_JOBS));
	for (i = 0; i < CONC_WORKERS; i++) {
		args[i].c = &c;
		args[i].idx = i;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, conc_worker, &args[i]));
	}
	while (reaped < CONC_JOBS) {
		int r = iopa_reap(sub, cqes, 64, IOPA_REAP_F_WAIT, IOPA_LONG_NS);

		if (r < 0) {
			TH_LOG("reap failed: %d after %d", r, reaped);
			break;
		}
		/* the kernel's own view never exceeds the limit either */
		EXPECT_EQ(0, iopa_get_stats(sub, &st));
		EXPECT_GE((__u64)CONC_LIMIT, st.inflight);
		reaped += r;
	}
	atomic_store(&c.stop, 1);
	for (i = 0; i < CONC_WORKERS; i++)
		pthread_join(th[i], NULL);

	EXPECT_EQ(0, atomic_load(&c.errors))
		TH_LOG("worker error %d", atomic_load(&c.last_err));
	ASSERT_EQ(CONC_JOBS, reaped);
	EXPECT_EQ(CONC_JOBS, atomic_load(&c.fetched));
	TH_LOG("max running: %d (limit %d)", atomic_load(&c.max_running), CONC_LIMIT);
	ASSERT_LE(atomic_load(&c.max_running), CONC_LIMIT);
	EXPECT_EQ(CONC_LIMIT, atomic_load(&c.max_running));
	for (i = 0; i < CONC_WORKERS; i++)
		close(c.wfd[i]);
	close(sub);
}

/* ---- limit changes at run time ----------------------------------------- */

TEST_F(sched, limit_raise_lower_runtime)
{
	struct iopa_work held[8], w;
	struct iopa_stats st;
	int sub, i, n = 0;

	sub = iopa_submitter_create(self->ctx, 2);
	ASSERT_LE(0, sub);
	ASSERT_EQ(10, iopa_submit_many(sub, self->file, 0, 10));

	for (i = 0; i < 2; i++, n++) {
		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &held[n]));
	}
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));

	/* raise: three more become dispatchable at once */
	ASSERT_EQ(0, iopa_set_limit(sub, 5));
	for (i = 0; i < 3; i++, n++) {
		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &held[n]));
	}
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));

	/* lower below the running count: nothing is preempted */
	ASSERT_EQ(0, iopa_set_limit(sub, 1));
	ASSERT_EQ(0, iopa_get_stats(sub, &st));
	EXPECT_EQ(5ULL, st.inflight);
	EXPECT_EQ(5ULL, st.pending);
	/* ... but nothing is dispatched until inflight < 1 */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, iopa_complete(self->wrk, held[i].job_id, 0));
		ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w))
			TH_LOG("dispatched with %d running over limit 1", 4 - i);
	}
	ASSERT_EQ(0, iopa_complete(self->wrk, held[4].job_id, 0));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(0, iopa_get_stats(sub, &st));
	EXPECT_EQ(1ULL, st.inflight);
	EXPECT_EQ(4ULL, st.pending);
	for (i = 0; i < 5; i++)
		close(held[i].fd);
	close(sub);
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

TEST_F_TIMEOUT(sched, limit_raise_wakes_fetcher, 60)
{
	struct fetch_thread t = { .rc = 1 };
	struct iopa_work held, w;
	pthread_t th;
	uint64_t v = 0;
	int sub;

	sub = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, sub);
	ASSERT_EQ(3, iopa_submit_many(sub, self->file, 0, 3));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &held));
	close(held.fd);

	t.wfd = iopa_worker_create(self->ctx);
	ASSERT_LE(0, t.wfd);
	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, fetch_thread_fn, &t));
	/* the fetcher waits: jobs pending, but the limit is used up */
	EXPECT_EQ(0, iopa_wait_nr_waiting(self->ctx, 1));
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	/* raising the limit makes a job dispatchable and wakes it */
	ASSERT_EQ(0, iopa_set_limit(sub, 2));
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	ASSERT_EQ(0, t.rc);
	EXPECT_EQ(1ULL, t.w.user_data);
	close(t.w.fd);

	/* a completion frees a slot and wakes a waiter too */
	ASSERT_EQ((ssize_t)sizeof(uint64_t), read(t.efd, &v, sizeof(v)));
	t.rc = 1;
	ASSERT_EQ(0, pthread_create(&th, NULL, fetch_thread_fn, &t));
	EXPECT_EQ(0, iopa_wait_nr_waiting(self->ctx, 1));
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	ASSERT_EQ(0, iopa_complete(self->wrk, held.job_id, 0));
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	ASSERT_EQ(0, t.rc);
	EXPECT_EQ(2ULL, t.w.user_data);
	close(t.w.fd);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	close(t.efd);
	close(t.wfd);
	close(sub);
}

/* ---- fairness and order ------------------------------------------------ */

#define FAIR_JOBS	500
#define FAIR_B		100000	/* user_data base of submitter B */

TEST_F(sched, fairness_two_submitters)
{
	int a, b, i, na = 0, nb = 0, bad_prefix = -1;
	uint64_t next_a = 0, next_b = FAIR_B;
	bool fifo = true;

	a = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, a);
	b = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, b);
	/* both queues full before any worker runs */
	ASSERT_EQ(FAIR_JOBS, iopa_submit_many(a, self->file, 0, FAIR_JOBS));
	ASSERT_EQ(FAIR_JOBS, iopa_submit_many(b, self->file, FAIR_B, FAIR_JOBS));

	for (i = 0; i < 2 * FAIR_JOBS; i++) {
		struct iopa_work w;

		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w)) TH_LOG("fetch %d", i);
		close(w.fd);
		ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
		if (w.user_data >= FAIR_B) {
			fifo &= w.user_data == next_b++;
			nb++;
		} else {
			fifo &= w.user_data == next_a++;
			na++;
		}
		/* in any prefix of 2k dispatches, each submitter has k +- 1 */
		if ((i + 1) % 2 == 0 && bad_prefix < 0 &&
		    abs(na - (i + 1) / 2) > 1)
			bad_prefix = i + 1;
	}
	EXPECT_EQ(-1, bad_prefix) TH_LOG("unfair after %d dispatches", bad_prefix);
	EXPECT_TRUE(fifo);
	EXPECT_EQ(FAIR_JOBS, na);
	EXPECT_EQ(FAIR_JOBS, nb);
	close(a);
	close(b);
}

TEST_F(sched, round_robin_skips_full_submitter)
{
	struct iopa_work w[4], x;
	int a, b, i, from_a = 0;

	a = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, a);
	b = iopa_submitter_create(self->ctx, 8);
	ASSERT_LE(0, b);
	ASSERT_EQ(3, iopa_submit_many(a, self->file, 0, 3));
	ASSERT_EQ(3, iopa_submit_many(b, self->file, FAIR_B, 3));
	/* A is capped at one running job: its turn is skipped, B goes on */
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w[i]));
		close(w[i].fd);
		from_a += w[i].user_data < FAIR_B;
	}
	EXPECT_EQ(1, from_a);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &x));
	for (i = 0; i < 4; i++) {
		if (w[i].user_data < FAIR_B) {
			ASSERT_EQ(0, iopa_complete(self->wrk, w[i].job_id, 0));
		}
	}
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &x));
	close(x.fd);
	EXPECT_EQ(1ULL, x.user_data);
	close(a);
	close(b);
}

TEST_F(sched, fifo_within_submitter)
{
	uint64_t last_id = 0;
	int sub, i;

	sub = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, sub);
	/* several batches of different sizes */
	ASSERT_EQ(1, iopa_submit_many(sub, self->file, 0, 1));
	ASSERT_EQ(37, iopa_submit_many(sub, self->file, 1, 37));
	ASSERT_EQ(62, iopa_submit_many(sub, self->file, 38, 62));
	for (i = 0; i < 100; i++) {
		struct iopa_work w;

		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
		close(w.fd);
		ASSERT_EQ((__u64)i, w.user_data);
		/* job ids grow in submission order */
		EXPECT_LT(last_id, w.job_id);
		last_id = w.job_id;
		ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	}
	close(sub);
}

/* ---- poll readiness ---------------------------------------------------- */

TEST_F(sched, poll_readiness)
{
	struct iopa_work w;
	struct iopa_cqe c;
	fd_set rfds, wfds;
	struct timeval tv = { 0, 0 };
	int sub, r;

	sub = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, sub);
	/* empty: room to submit, nothing to reap */
	r = iopa_poll1(sub, POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM, 0);
	EXPECT_EQ(POLLOUT | POLLWRNORM, r);

	/* pending and running jobs are not completions */
	ASSERT_EQ(1, iopa_submit_one(sub, self->file, 1));
	EXPECT_EQ(0, iopa_poll1(sub, POLLIN, 0));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(0, iopa_poll1(sub, POLLIN, 0));

	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	r = iopa_poll1(sub, POLLIN | POLLRDNORM, 0);
	EXPECT_EQ(POLLIN | POLLRDNORM, r & (POLLIN | POLLRDNORM));

	/* select() sees the same */
	FD_ZERO(&rfds);
	FD_ZERO(&wfds);
	FD_SET(sub, &rfds);
	FD_SET(sub, &wfds);
	ASSERT_EQ(2, select(sub + 1, &rfds, &wfds, NULL, &tv));

	/* a cancel completion counts too; reaping everything clears POLLIN */
	ASSERT_EQ(1, iopa_reap_nb(sub, &c, 1));
	EXPECT_EQ(0, iopa_poll1(sub, POLLIN, 0));
	ASSERT_EQ(1, iopa_submit_one(sub, self->file, 2));
	ASSERT_EQ(1, iopa_cancel(sub, 2, 0));
	EXPECT_EQ(POLLIN, iopa_poll1(sub, POLLIN, 0));
	ASSERT_EQ(1, iopa_reap_nb(sub, &c, 1));
	EXPECT_EQ(0, iopa_poll1(sub, POLLIN, 0));
	close(sub);
}

struct poll_thread {
	int fd;
	int efd;
	int epfd;	/* >= 0: epoll_wait on it instead of poll */
	int rc;
	unsigned int revents;
};

static void *poll_thread_fn(void *arg)
{
	struct poll_thread *t = arg;

	if (t->epfd >= 0) {
		struct epoll_event ev = { 0 };

		t->rc = epoll_wait(t->epfd, &ev, 1, IOPA_THREAD_MS);
		t->revents = ev.events;
	} else {
		t->rc = iopa_poll1(t->fd, POLLIN, IOPA_THREAD_MS);
		t->revents = t->rc > 0 ? (unsigned int)t->rc : 0;
	}
	iopa_efd_signal(t->efd);
	return NULL;
}

TEST_F_TIMEOUT(sched, poll_wakeup, 60)
{
	struct poll_thread t = { .epfd = -1 };
	struct iopa_work w;
	pthread_t th;
	int sub;

	sub = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, sub);
	t.fd = sub;
	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(1, iopa_submit_one(sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, poll_thread_fn, &t));
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	EXPECT_TRUE(!!(t.revents & POLLIN));
	close(t.efd);
	close(sub);
}

TEST_F_TIMEOUT(sched, epoll_readiness, 60)
{
	struct epoll_event ev, out[2];
	struct poll_thread t = { .epfd = -1 };
	struct iopa_work w;
	struct iopa_cqe c[2];
	pthread_t th;
	int sub, ep, ep_et;

	sub = iopa_submitter_create(self->ctx, 4);
	ASSERT_LE(0, sub);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	ep_et = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep_et);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | EPOLLOUT;
	ev.data.fd = sub;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, sub, &ev));
	ev.events = EPOLLIN | EPOLLET;
	ASSERT_EQ(0, epoll_ctl(ep_et, EPOLL_CTL_ADD, sub, &ev));

	/* level-triggered: EPOLLOUT only */
	ASSERT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ((uint32_t)EPOLLOUT, out[0].events & (EPOLLIN | EPOLLOUT));
	ASSERT_EQ(0, epoll_wait(ep_et, out, 2, 0));

	/* a blocked epoll_wait is woken by a completion */
	ASSERT_EQ(1, iopa_submit_one(sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	t.epfd = ep_et;
	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, poll_thread_fn, &t));
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	EXPECT_EQ(1, t.rc);
	EXPECT_TRUE(!!(t.revents & EPOLLIN));

	/* level-triggered now reports both */
	ASSERT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ((uint32_t)(EPOLLIN | EPOLLOUT), out[0].events & (EPOLLIN | EPOLLOUT));
	/* edge-triggered: reported once, not again without a new completion */
	ASSERT_EQ(0, epoll_wait(ep_et, out, 2, 0));
	ASSERT_EQ(1, iopa_submit_one(sub, self->file, 2));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(1, epoll_wait(ep_et, out, 2, 0));

	ASSERT_EQ(2, iopa_reap_nb(sub, c, 2));
	ASSERT_EQ(1, epoll_wait(ep, out, 2, 0));
	EXPECT_EQ((uint32_t)EPOLLOUT, out[0].events & (EPOLLIN | EPOLLOUT));
	close(t.efd);
	close(ep);
	close(ep_et);
	close(sub);
}

/* ---- 10,000 jobs through 4 workers ------------------------------------- */

#define MANY_JOBS	10000
#define MANY_WORKERS	4

struct many {
	int wfd[MANY_WORKERS];
	atomic_int fetched[MANY_JOBS];
	atomic_int bad;
	atomic_int errors;
	atomic_int last_err;
	atomic_int stop;
};

struct many_arg {
	struct many *m;
	int idx;
};

static int32_t many_res(uint64_t ud)
{
	return (int32_t)(ud * 7 % 100003);
}

static void *many_worker(void *arg)
{
	struct many_arg *a = arg;
	struct many *m = a->m;
	int wfd = m->wfd[a->idx];

	while (!atomic_load(&m->stop)) {
		struct iopa_work w;
		int r = iopa_fetch(wfd, &w, 0, IOPA_MS_NS(50));

		if (r == -ETIMEDOUT)
			continue;
		if (r < 0) {
			atomic_store(&m->last_err, r);
			atomic_fetch_add(&m->errors, 1);
			break;
		}
		close(w.fd);
		if (w.user_data >= MANY_JOBS)
			atomic_fetch_add(&m->bad, 1);
		else
			atomic_fetch_add(&m->fetched[w.user_data], 1);
		r = iopa_complete(wfd, w.job_id, many_res(w.user_data));
		if (r) {
			atomic_store(&m->last_err, r);
			atomic_fetch_add(&m->errors, 1);
		}
	}
	return NULL;
}

TEST_F_TIMEOUT(sched, ten_thousand_jobs, 240)
{
	static struct many m;
	static struct iopa_cqe cqes[256];
	static unsigned char seen[MANY_JOBS];
	struct many_arg args[MANY_WORKERS];
	pthread_t th[MANY_WORKERS];
	struct iopa_stats st;
	int i, sub, reaped = 0, dup_cqe = 0, bad_cqe = 0, bad_res = 0;
	int once = 0, twice = 0;

	memset(&m, 0, sizeof(m));
	sub = iopa_submitter_create(self->ctx, 8);
	ASSERT_LE(0, sub);
	for (i = 0; i < MANY_WORKERS; i++) {
		m.wfd[i] = iopa_worker_create(self->ctx);
		ASSERT_LE(0, m.wfd[i]);
	}
	for (i = 0; i < MANY_WORKERS; i++) {
		args[i].m = &m;
		args[i].idx = i;
		ASSERT_EQ(0, pthread_create(&th[i], NULL, many_worker, &args[i]));
	}
	/* submit while the workers already run */
	ASSERT_EQ(MANY_JOBS, iopa_submit_many(sub, self->file, 0, MANY_JOBS));
	while (reaped < MANY_JOBS) {
		int r = iopa_reap(sub, cqes, 256, IOPA_REAP_F_WAIT, IOPA_LONG_NS);

		if (r < 0) {
			TH_LOG("reap failed: %d after %d", r, reaped);
			break;
		}
		for (i = 0; i < r; i++) {
			uint64_t ud = cqes[i].user_data;

			if (ud >= MANY_JOBS) {
				bad_cqe++;
				continue;
			}
			if (seen[ud]++)
				dup_cqe++;
			if (cqes[i].res != many_res(ud) || cqes[i].flags)
				bad_res++;
		}
		reaped += r;
	}
	atomic_store(&m.stop, 1);
	for (i = 0; i < MANY_WORKERS; i++)
		pthread_join(th[i], NULL);

	EXPECT_EQ(0, atomic_load(&m.errors))
		TH_LOG("worker error %d", atomic_load(&m.last_err));
	ASSERT_EQ(MANY_JOBS, reaped);
	EXPECT_EQ(0, bad_cqe);
	EXPECT_EQ(0, dup_cqe);
	EXPECT_EQ(0, bad_res);
	EXPECT_EQ(0, atomic_load(&m.bad));
	for (i = 0; i < MANY_JOBS; i++) {
		once += seen[i] == 1;
		twice += atomic_load(&m.fetched[i]) != 1;
	}
	EXPECT_EQ(MANY_JOBS, once);
	EXPECT_EQ(0, twice) TH_LOG("%d jobs not fetched exactly once", twice);
	/* nothing left anywhere */
	ASSERT_EQ(-EAGAIN, iopa_reap_nb(sub, cqes, 1));
	ASSERT_EQ(0, iopa_get_stats(sub, &st));
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
	close(sub);
}

/* ---- sysfs tunables: pending cap, ENOSPC caps -------------------------- */

static const char * const tunables[] = {
	"max_jobs", "max_submitters", "max_workers", "max_total_jobs",
};

FIXTURE(tun) {
	uint64_t old[4];
	bool saved[4];
	uint64_t old_user;	/* max_user_submitters, put back if read */
	bool saved_user;
	int ctx;
	int wrk;
	int file;
	char path[64];
};

FIXTURE_SETUP(tun)
{
	unsigned int i;
	int r;

	self->ctx = self->wrk = self->file = -1;
	self->path[0] = 0;
	memset(self->saved, 0, sizeof(self->saved));
	if (access(IOPA_DEV_PATH, F_OK))
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	for (i = 0; i < IOPA_ARRAY_SIZE(tunables); i++) {
		r = iopa_sysfs_read(tunables[i], &self->old[i]);
		if (r == -ENOENT)
			SKIP(return, IOPA_SYSFS "/%s missing", tunables[i]);
		ASSERT_EQ(0, r);
		/* write back the same value: are we allowed to tune? */
		r = iopa_sysfs_write(tunables[i], self->old[i]);
		if (r == -EACCES || r == -EPERM)
			SKIP(return, "cannot write %s (not root?)", tunables[i]);
		ASSERT_EQ(0, r);
		self->saved[i] = true;
	}
	/* newer than the others: its own test fails without it */
	self->saved_user = !iopa_sysfs_read("max_user_submitters",
					    &self->old_user);
	self->ctx = iopa_open_ctx();
	ASSERT_LE(0, self->ctx);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->file = iopa_job_file(self->path, O_RDONLY);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(tun)
{
	unsigned int i;

	iopa_close(&self->wrk);
	iopa_close(&self->ctx);
	iopa_close(&self->file);
	if (self->path[0])
		unlink(self->path);
	for (i = 0; i < IOPA_ARRAY_SIZE(tunables); i++) {
		if (self->saved[i]) {
			EXPECT_EQ(0, iopa_sysfs_write(tunables[i], self->old[i]))
				TH_LOG("could not restore %s", tunables[i]);
		}
	}
	if (self->saved_user)
		EXPECT_EQ(0, iopa_sysfs_write("max_user_submitters",
					      self->old_user));
}

#define CAP 8

/* A submitter created after max_jobs was set to CAP. */
static int capped_submitter(int ctx)
{
	int r = iopa_sysfs_write("max_jobs", CAP);

	if (r)
		return r;
	return iopa_submitter_create(ctx, CAP);
}

TEST_F(tun, pending_cap_eagain)
{
	struct iopa_job jobs[3];
	struct iopa_cqe c[4];
	struct iopa_work w;
	uint64_t v = 0;
	int sub, sub2, i;

	sub = capped_submitter(self->ctx);
	ASSERT_LE(0, sub);
	ASSERT_EQ(0, iopa_sysfs_read("max_jobs", &v));
	ASSERT_EQ((uint64_t)CAP, v);
	for (i = 0; i < CAP; i++) {
		ASSERT_EQ(1, iopa_submit_one(sub, self->file, i));
	}
	/* the 9th */
	ASSERT_EQ(-EAGAIN, iopa_submit_one(sub, self->file, CAP));
	for (i = 0; i < 3; i++)
		iopa_job_init(&jobs[i], self->file, 100 + i);
	ASSERT_EQ(-EAGAIN, iopa_submit(sub, jobs, 3, 0));

	/* outstanding = submitted and not reaped: completing frees nothing */
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, &w));
	ASSERT_EQ(-EAGAIN, iopa_submit_one(sub, self->file, CAP));
	ASSERT_EQ(1, iopa_cancel(sub, CAP - 1, 0));
	ASSERT_EQ(-EAGAIN, iopa_submit_one(sub, self->file, CAP));
	/* reaping one makes room for exactly one: partial batch */
	ASSERT_EQ(1, iopa_reap_nb(sub, c, 1));
	ASSERT_EQ(1, iopa_submit(sub, jobs, 3, 0));
	ASSERT_EQ(-EAGAIN, iopa_submit(sub, jobs + 1, 2, 0));
	ASSERT_EQ(1, iopa_reap_nb(sub, c, 4));
	ASSERT_EQ(1, iopa_submit(sub, jobs + 1, 2, 0));

	/* the cap is per submitter: another one is not affected */
	sub2 = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, sub2);
	ASSERT_EQ(1, iopa_submit_one(sub2, self->file, 1));
	close(sub2);
	ASSERT_STATS_INVARIANT(sub);
	close(sub);
}

struct submit_thread {
	int sub;
	int fd;
	int efd;
	int rc;
};

static void *submit_wait_fn(void *arg)
{
	struct submit_thread *t = arg;

	t->rc = iopa_submit_one_flags(t->sub, t->fd, 999, 0, IOPA_SUBMIT_F_WAIT);
	iopa_efd_signal(t->efd);
	return NULL;
}

TEST_F_TIMEOUT(tun, pending_cap_submit_wait, 60)
{
	struct submit_thread t = { .rc = -1000 };
	struct iopa_job jobs[3];
	struct iopa_cqe c;
	struct iopa_work w;
	struct iopa_stats st;
	pthread_t th;
	int sub, i;

	sub = capped_submitter(self->ctx);
	ASSERT_LE(0, sub);
	ASSERT_EQ(CAP, iopa_submit_many(sub, self->file, 0, CAP));
	t.sub = sub;
	t.fd = self->file;
	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(0, pthread_create(&th, NULL, submit_wait_fn, &t));
	/* at the cap: the submit blocks ... */
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	/* ... also after a completion (it is not reaped yet) ... */
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, &w));
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	/* ... until another thread reaps */
	ASSERT_EQ(1, iopa_reap_nb(sub, &c, 1));
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	ASSERT_EQ(1, t.rc);
	ASSERT_EQ(0, iopa_get_stats(sub, &st));
	EXPECT_EQ((__u64)CAP + 1, st.submitted);
	EXPECT_EQ((__u64)CAP, st.pending);

	/*
	 * F_WAIT waits only while none of the batch fits: with room for
	 * one, a batch of three returns 1 at once.
	 */
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(1, iopa_reap_nb(sub, &c, 1));
	for (i = 0; i < 3; i++)
		iopa_job_init(&jobs[i], self->file, 2000 + i);
	ASSERT_EQ(1, iopa_submit(sub, jobs, 3, IOPA_SUBMIT_F_WAIT));
	close(t.efd);
	close(sub);
}

TEST_F(tun, pending_cap_wait_eintr)
{
	struct iopa_sigger sg;
	struct iopa_stats st;
	int sub, r;

	sub = capped_submitter(self->ctx);
	ASSERT_LE(0, sub);
	ASSERT_EQ(CAP, iopa_submit_many(sub, self->file, 0, CAP));
	ASSERT_EQ(0, iopa_install_nop_handler(SIGUSR1));
	ASSERT_EQ(0, iopa_sigger_start(&sg, SIGUSR1, -1, 0));
	r = iopa_submit_one_flags(sub, self->file, 99, 0, IOPA_SUBMIT_F_WAIT);
	iopa_sigger_stop(&sg);
	ASSERT_EQ(-EINTR, r);
	ASSERT_EQ(0, iopa_get_stats(sub, &st));
	EXPECT_EQ((__u64)CAP, st.submitted);
	close(sub);
}

TEST_F(tun, pending_cap_poll)
{
	struct epoll_event ev, out;
	struct iopa_cqe c;
	int sub, ep;

	sub = capped_submitter(self->ctx);
	ASSERT_LE(0, sub);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLOUT;
	ASSERT_EQ(0, epoll_ctl(ep, EPOLL_CTL_ADD, sub, &ev));

	ASSERT_EQ(CAP - 1, iopa_submit_many(sub, self->file, 0, CAP - 1));
	EXPECT_EQ(POLLOUT, iopa_poll1(sub, POLLOUT, 0) & POLLOUT);
	ASSERT_EQ(1, iopa_submit_one(sub, self->file, CAP));
	/* at the cap: not writable, by poll nor epoll */
	EXPECT_EQ(0, iopa_poll1(sub, POLLOUT | POLLWRNORM, 0));
	EXPECT_EQ(0, epoll_wait(ep, &out, 1, 0));
	/* a completion alone does not change that, a reap does */
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	EXPECT_EQ(0, iopa_poll1(sub, POLLOUT, 0) & POLLOUT);
	EXPECT_EQ(POLLIN, iopa_poll1(sub, POLLIN | POLLOUT, 0));
	ASSERT_EQ(1, iopa_reap_nb(sub, &c, 1));
	EXPECT_EQ(POLLOUT, iopa_poll1(sub, POLLOUT, 0) & POLLOUT);
	ASSERT_EQ(1, epoll_wait(ep, &out, 1, 0));
	EXPECT_TRUE(!!(out.events & EPOLLOUT));
	close(ep);
	close(sub);
}

TEST_F(tun, sysfs_bad_values)
{
	static const struct { const char *name; uint64_t max; } t[] = {
		{ "max_jobs", 1048576 },
		{ "max_submitters", 65536 },
		{ "max_user_submitters", 1048576 },
		{ "max_workers", 65536 },
		{ "max_total_jobs", 16777216 },
	};
	static const char * const bad[] = { "0", "-1", "abc", "1x" };
	unsigned int i, k;
	char buf[32];
	uint64_t v = 0;

	for (i = 0; i < IOPA_ARRAY_SIZE(t); i++) {
		ASSERT_EQ(0, iopa_sysfs_write(t[i].name, 5));
		for (k = 0; k < IOPA_ARRAY_SIZE(bad); k++) {
			EXPECT_EQ(-EINVAL, iopa_sysfs_write_str(t[i].name, bad[k]))
				TH_LOG("%s accepted \"%s\"", t[i].name, bad[k]);
		}
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)t[i].max + 1);
		EXPECT_EQ(-EINVAL, iopa_sysfs_write_str(t[i].name, buf))
			TH_LOG("%s accepted max + 1", t[i].name);
		/* the old value stays */
		ASSERT_EQ(0, iopa_sysfs_read(t[i].name, &v));
		EXPECT_EQ(5ULL, (unsigned long long)v);
		/* both ends of the range are accepted */
		ASSERT_EQ(0, iopa_sysfs_write(t[i].name, t[i].max));
		ASSERT_EQ(0, iopa_sysfs_read(t[i].name, &v));
		EXPECT_EQ(t[i].max, v);
		ASSERT_EQ(0, iopa_sysfs_write(t[i].name, 1));
		ASSERT_EQ(0, iopa_sysfs_read(t[i].name, &v));
		EXPECT_EQ(1ULL, (unsigned long long)v);
	}
}

TEST_F(tun, max_submitters_enospc)
{
	int ctx, ctx2, s[3], s2[2], w;

	ASSERT_EQ(0, iopa_sysfs_write("max_submitters", 2));
	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	ctx2 = iopa_open_ctx();
	ASSERT_LE(0, ctx2);
	s[0] = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, s[0]);
	s[1] = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, s[1]);
	ASSERT_EQ(-ENOSPC, iopa_submitter_create(ctx, 1));
	/* workers and other contexts are not affected */
	w = iopa_worker_create(ctx);
	ASSERT_LE(0, w);
	s2[0] = iopa_submitter_create(ctx2, 1);
	ASSERT_LE(0, s2[0]);
	s2[1] = iopa_submitter_create(ctx2, 1);
	ASSERT_LE(0, s2[1]);
	/* live submitters: closing one makes room */
	close(s[0]);
	s[2] = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, s[2]);
	ASSERT_EQ(-ENOSPC, iopa_submitter_create(ctx, 1));
	close(s[1]);
	close(s[2]);
	close(s2[0]);
	close(s2[1]);
	close(w);
	close(ctx);
	close(ctx2);
}

/* As nobody: create a submitter in @ctx; 0, or the errno. */
static int create_as_nobody(int ctx)
{
	pid_t pid = fork();
	int status, s;

	if (pid < 0)
		return errno;
	if (!pid) {
		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(EPERM);
		s = iopa_submitter_create(ctx, 1);
		_exit(s < 0 ? -s : 0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return ECHILD;
	return WEXITSTATUS(status);
}

/*
 * A user's live submitters are bounded module-wide, all its contexts
 * together (Core round 2, item 11: max_submitters bounds one context,
 * and a user could open any number); another user's are not charged.
 */
TEST_F(tun, max_user_submitters_edquot)
{
	int ctx2, s[4];

	ASSERT_TRUE(self->saved_user) TH_LOG("no max_user_submitters");
	ASSERT_EQ(0, iopa_sysfs_write("max_user_submitters", 3));
	ctx2 = iopa_open_ctx();
	ASSERT_LE(0, ctx2);
	s[0] = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, s[0]);
	s[1] = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, s[1]);
	s[2] = iopa_submitter_create(ctx2, 1);
	ASSERT_LE(0, s[2]);
	/* a fourth, in either context */
	EXPECT_EQ(-EDQUOT, iopa_submitter_create(self->ctx, 1));
	EXPECT_EQ(-EDQUOT, iopa_submitter_create(ctx2, 1));
	/* another user, in the same context, is not charged ours */
	EXPECT_EQ(0, create_as_nobody(self->ctx));
	/* live submitters: closing one makes room */
	close(s[0]);
	s[3] = iopa_submitter_create(ctx2, 1);
	ASSERT_LE(0, s[3]);
	EXPECT_EQ(-EDQUOT, iopa_submitter_create(self->ctx, 1));
	close(s[1]);
	close(s[2]);
	close(s[3]);
	close(ctx2);
}

TEST_F(tun, max_workers_enospc)
{
	int ctx, w[3], s;
	struct iopa_stats st;

	ASSERT_EQ(0, iopa_sysfs_write("max_workers", 2));
	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	w[0] = iopa_worker_create(ctx);
	ASSERT_LE(0, w[0]);
	w[1] = iopa_worker_create(ctx);
	ASSERT_LE(0, w[1]);
	ASSERT_EQ(-ENOSPC, iopa_worker_create(ctx));
	s = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, iopa_get_stats(ctx, &st));
	EXPECT_EQ(2U, st.nr_workers);
	close(w[1]);
	w[2] = iopa_worker_create(ctx);
	ASSERT_LE(0, w[2]);
	ASSERT_EQ(-ENOSPC, iopa_worker_create(ctx));
	close(w[0]);
	close(w[2]);
	close(s);
	close(ctx);
}

/* The module's jobs: stats/jobs. */
static uint64_t total_jobs(void)
{
	uint64_t v = UINT64_MAX;

	if (iopa_sysfs_read("stats/jobs", &v))
		return UINT64_MAX;
	return v;
}

/*
 * max_total_jobs bounds the jobs of all contexts together: at the cap a
 * SUBMIT that can take none answers ENOSPC, also with F_WAIT (it is not
 * waited for), a batch takes what fits; a job counts until it is freed
 * (reaped, or cancelled with its submitter), not until it completes.
 */
TEST_F(tun, max_total_jobs_enospc)
{
	int ctx2, w2, sub, sub2, i;
	uint64_t base = total_jobs();
	struct iopa_job jobs[3];
	struct iopa_cqe c[4];

	ASSERT_NE(UINT64_MAX, base);
	ASSERT_EQ(0, iopa_sysfs_write("max_total_jobs", base + 4));
	ctx2 = iopa_open_ctx();
	ASSERT_LE(0, ctx2);
	w2 = iopa_worker_create(ctx2);
	ASSERT_LE(0, w2);
	sub = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, sub);
	sub2 = iopa_submitter_create(ctx2, 1);
	ASSERT_LE(0, sub2);
	for (i = 0; i < 3; i++)
		iopa_job_init(&jobs[i], self->file, 10 + i);

	ASSERT_EQ(3, iopa_submit(sub, jobs, 3, 0));
	/* another context: a batch of 3 gets the one left */
	ASSERT_EQ(1, iopa_submit(sub2, jobs, 3, 0));
	EXPECT_EQ(base + 4, total_jobs());
	EXPECT_EQ(-ENOSPC, iopa_submit(sub2, jobs, 1, 0));
	EXPECT_EQ(-ENOSPC, iopa_submit(sub2, jobs, 3, IOPA_SUBMIT_F_WAIT));
	EXPECT_EQ(-ENOSPC, iopa_submit(sub, jobs, 1, IOPA_SUBMIT_F_WAIT));
	/* a completed job still counts; the reaped one is freed */
	ASSERT_EQ(0, iopa_run_one(w2, 0, NULL));
	EXPECT_EQ(-ENOSPC, iopa_submit(sub, jobs, 1, 0));
	ASSERT_EQ(1, iopa_reap_nb(sub2, c, 4));
	EXPECT_EQ(base + 3, total_jobs());
	ASSERT_EQ(1, iopa_submit(sub, jobs, 3, 0));
	EXPECT_EQ(-ENOSPC, iopa_submit(sub2, jobs, 1, 0));
	/* closing a submitter cancels and frees its pending jobs */
	close(sub);
	EXPECT_EQ(base, total_jobs());
	EXPECT_EQ(3, iopa_submit(sub2, jobs, 3, 0));
	/* a lower cap drops nothing: it only refuses new jobs */
	ASSERT_EQ(0, iopa_sysfs_write("max_total_jobs", 1));
	EXPECT_EQ(base + 3, total_jobs());
	EXPECT_EQ(-ENOSPC, iopa_submit(sub2, jobs, 1, 0));
	ASSERT_EQ(0, iopa_run_one(w2, 0, NULL));
	EXPECT_EQ(1, iopa_reap_nb(sub2, c, 4));
	close(sub2);
	close(w2);
	close(ctx2);
	EXPECT_EQ(base, total_jobs());
}

TEST_HARNESS_MAIN
