// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * The libiopa worker pool: the IOPA paper's programming interface (init,
 * create threads with a user function and argument, wait for completion,
 * close) over /dev/iopa.
 *
 * 1. Objects.  A pool owns a duplicate of a context fd, one submitter on
 *    it (iopa_pool_submit() feeds it; iopa_pool_wait() reaps it) and up
 *    to max_threads threads.  Each thread has its own worker fd and loops
 *    in IOPA_IOC_WORK_BATCH (IOPA_IOC_COMPLETE_AND_FETCH on modules
 *    without IOPA_FEAT_BATCH), one job at a time: the kernel parks it
 *    there and hands it a job when the submitter's in-flight limit
 *    allows.  The thread runs the user function on the job, closes the
 *    job's fd (unless lent: IOPA_POOL_F_BORROW) and completes the job
 *    with the function's result in its next call.  One job per thread:
 *    a job the kernel counts as running is one that runs.
 *
 * 2. Growing.  The kernel decides how many jobs run at once (the limit);
 *    the pool only has to make sure a thread is there to take each job
 *    the kernel would dispatch.  It adds one thread when
 *        - no pool thread is idle (nidle == 0: every thread is running
 *          the user function), and
 *        - the context has pending jobs (GET_STATS pending > 0) and no
 *          worker waits in FETCH (nr_waiting == 0),
 *    up to max_threads.  The check runs where the condition can become
 *    true: when a thread takes a job, after iopa_pool_submit(), and on
 *    every tick of iopa_pool_wait() (which also catches a limit raised by
 *    the kernel while every thread was busy).  The GET_STATS of the check
 *    runs only while no thread is idle: once per thread added while the
 *    pool grows, never in the steady state (limit + 1 threads, one of
 *    them idle; or max_threads, checked first).  A new thread counts as
 *    idle from birth, so growth is one thread at a time: it takes a job,
 *    and only then can the next one be added.  With the limit binding,
 *    the pool settles at limit + 1 threads: limit running, one spare
 *    parked in FETCH, which the kernel wakes the moment the limit grows.
 *
 * 3. Shrinking.  A thread whose fetch has found nothing for idle_ms ends,
 *    down to min_threads, unless it is the context's only parked worker
 *    while jobs are pending (the spare of 2.: ending it would only make
 *    the next check start a new one).  Fetches wait in slices of
 *    POOL_TICK_NS so that idleness and close are noticed.
 *
 * 4. Completions.  The pool's submitter is reaped by iopa_pool_wait()
 *    and, when the submitter is full (max_jobs outstanding: EAGAIN), by
 *    iopa_pool_submit() itself; each completion goes to opts->done.
 *
 * 5. Without the module.  When /dev/iopa is absent, or with
 *    IOPA_POOL_F_INPROC, the jobs are queued, limited and completed in
 *    the process (src/inproc.c) instead of by a submitter and worker fds;
 *    the threads, their growth and shrinking are the same.
 *
 * Locking: pool->lock guards the thread slots, nthreads and the spawn
 * decision; reap_lock serialises reaping (the cqe buffer, done
 * callbacks).  Counters read without a lock are atomics.
 */
#include "pool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* How long a fetch or reap waits before the pool looks at its state. */
#define POOL_TICK_NS		(100 * 1000 * 1000ULL)
#define POOL_DEFAULT_IDLE_MS	2000
/* Sanity bound for max_threads (the kernel's max_workers is 1024). */
#define POOL_MAX_THREADS	65536
#define POOL_REAP_BATCH		128
#define POOL_SYSFS_MAX_LIMIT	"/sys/class/misc/" IOPA_DEV_NAME "/max_limit"

enum pool_slot_state {
	SLOT_FREE,	/* no thread */
	SLOT_RUNNING,	/* thread live */
	SLOT_EXITED,	/* thread returned (or about to): join it */
};

struct pool_thread {
	struct iopa_pool *pool;
	pthread_t tid;
	int wfd;			/* the thread's worker fd (module) */
	struct inproc_worker iw;	/* its state (without the module) */
	enum pool_slot_state state;	/* protected by pool->lock */
};

struct iopa_pool {
	/* On pool_list (pool_list_lock); in a child, forked is set. */
	struct iopa_pool *list_prev, *list_next;
	bool forked;
	int ctx_fd;
	int sub_fd;
	struct inproc *inproc;		/* without the module: the jobs */
	unsigned int module_err;	/* why without it (errno), or 0 */
	unsigned int min_threads;
	unsigned int max_threads;
	unsigned int idle_ms;
	unsigned int batch_max;
	bool borrow;			/* threads take lent fds */
	bool work_batch;		/* the module has IOPA_FEAT_BATCH */
	iopa_pool_done_fn done;
	void *done_arg;

	/* Set once by iopa_pool_create_threads(), before any thread. */
	iopa_pool_fn fn;
	void *arg;
	atomic_bool started;

	pthread_mutex_t lock;
	struct pool_thread *threads;	/* [max_threads]; lock */
	atomic_uint nthreads;		/* written under lock */
	atomic_uint max_eff;		/* written under lock: max_threads, or
					 * lower after a WORKER_CREATE failure */
	unsigned int peak;		/* lock */
	uint64_t threads_started;	/* lock */
	uint64_t threads_exited;	/* lock */
	atomic_uint nidle;		/* threads not running fn */
	atomic_bool stop;		/* iopa_pool_close() under way */
	atomic_int error;		/* first fatal thread error, -errno */

	pthread_mutex_t reap_lock;
	struct iopa_cqe cqes[POOL_REAP_BATCH];	/* reap_lock */
	uint64_t failed_unreported;	/* reap_lock: failures since last wait */
	atomic_uint_least64_t submitted;
	atomic_uint_least64_t completed;
	atomic_uint_least64_t failed;
};

/* The pool whose thread this is (or whose completions it is reaping). */
static __thread struct iopa_pool *pool_self;
static __thread struct iopa_pool *pool_reaping;

static int64_t pool_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * The module's ceiling for adaptive limits (sysfs max_limit), or, without
 * the module, its default (the in-process controller's): threads start
 * only as the limit grows, so a high ceiling costs nothing where the knee
 * is low, and a disk whose knee is high (a cloud volume's 32-64 small
 * reads) is not held to a CPU count.
 */
static unsigned int pool_default_max(unsigned int limit)
{
	unsigned int max = 0;
	char buf[32];
	ssize_t n;
	int fd;

	fd = open(POOL_SYSFS_MAX_LIMIT, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		if (n > 0) {
			buf[n] = 0;
			max = (unsigned int)strtoul(buf, NULL, 10);
		}
		close(fd);
	}
	if (!max)
		max = iopa_inproc_default_max();
	if (max > IOPA_LIMIT_MAX)
		max = IOPA_LIMIT_MAX;
	if (limit > max)
		max = limit;
	/* One spare parked in FETCH, as when the limit binds (see 2.). */
	return max + 1;
}

/*
 * The fds a pool may hold: half of those the process may still open
 * (RLIMIT_NOFILE's soft limit less the fds open now), at least 3; the
 * other half stays the application's, to open the files it submits with
 * (a pool that took them all left iopa-sum none: every open failed with
 * EMFILE under ulimit -n 64).  UINT_MAX for a limit beyond 2^20: no
 * budget to keep.  A thread holds one fd (its worker fd, or in process
 * its I/O counter) and one more while it runs a job (the job's); in
 * process a queued job holds one too, its dup().
 */
static unsigned int pool_fd_budget(void)
{
	long left = iopa_fds_left();

	if (left < 0)
		return UINT_MAX;
	return left / 2 < 3 ? 3 : (unsigned int)(left / 2);
}

IOPA_EXPORT long iopa_fds_left(void)
{
	unsigned long open_now = 0;
	struct rlimit rl;
	struct dirent *e;
	DIR *d;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (1UL << 20))
		return -1;
	d = opendir("/proc/self/fd");
	if (!d)
		return -1;
	while ((e = readdir(d)))
		open_now += e->d_name[0] != '.';
	closedir(d);
	open_now = open_now ? open_now - 1 : 0;	/* the DIR's own */
	return rl.rlim_cur > open_now ? (long)(rl.rlim_cur - open_now) : 0;
}

static void pool_set_error(struct iopa_pool *p, int err)
{
	int none = 0;

	atomic_compare_exchange_strong(&p->error, &none, err);
}

static void *pool_thread_main(void *arg);

/*
 * Start one thread with its own worker fd.  Called with p->lock held.
 * Returns 0 or -errno.
 */
static int pool_spawn_locked(struct iopa_pool *p)
{
	struct pool_thread *t = NULL;
	sigset_t all, old;
	unsigned int i;
	int wfd, r;

	if (atomic_load(&p->stop))
		return -ESHUTDOWN;
	if (atomic_load(&p->nthreads) >= atomic_load(&p->max_eff))
		return -EAGAIN;
	for (i = 0; i < p->max_threads; i++) {
		struct pool_thread *s = &p->threads[i];

		if (s->state == SLOT_EXITED) {
			/* It has left its last critical section: no deadlock. */
			pthread_join(s->tid, NULL);
			s->state = SLOT_FREE;
		}
		if (s->state == SLOT_FREE) {
			t = s;
			break;
		}
	}
	if (!t)
		return -EAGAIN;

	wfd = p->inproc ? -1 :
	      iopa_worker_create(p->ctx_fd,
				 p->borrow ? IOPA_WORKER_F_BORROW : 0);
	if (wfd < 0 && !p->inproc)
		return wfd;
	t->pool = p;
	t->wfd = wfd;
	/* Counted before the thread can run (it decrements nidle). */
	atomic_fetch_add(&p->nthreads, 1);
	atomic_fetch_add(&p->nidle, 1);
	/* Pool threads take no signals: the application's threads do. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t->tid, NULL, pool_thread_main, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		atomic_fetch_sub(&p->nthreads, 1);
		atomic_fetch_sub(&p->nidle, 1);
		if (wfd >= 0)
			close(wfd);
		return -r;
	}
	t->state = SLOT_RUNNING;
	p->threads_started++;
	if (atomic_load(&p->nthreads) > p->peak)
		p->peak = atomic_load(&p->nthreads);
	return 0;
}

/* Called with p->lock held, after a spawn failed with @err. */
static void pool_spawn_failed_locked(struct iopa_pool *p, int err)
{
	if (err == -EAGAIN || err == -ESHUTDOWN)
		return;
	/*
	 * No worker fd or thread to be had (ENOSPC: the context's
	 * max_workers; EMFILE; ENOMEM): stay at the current size instead
	 * of failing again on every job.  A pool left without any thread
	 * cannot run its jobs: that is an error iopa_pool_wait() reports.
	 */
	atomic_store(&p->max_eff, atomic_load(&p->nthreads));
	if (!atomic_load(&p->max_eff))
		pool_set_error(p, err);
}

/* Jobs queued, and workers (the pool's or others') waiting for one. */
static int pool_demand(struct iopa_pool *p, unsigned int *pending,
		       unsigned int *waiting)
{
	struct iopa_stats st;

	if (p->inproc) {
		iopa_inproc_demand(p->inproc, pending, waiting);
		return 0;
	}
	if (iopa_get_stats(p->ctx_fd, &st) < 0)
		return -1;
	*pending = st.pending;
	*waiting = st.nr_waiting;
	return 0;
}

/*
 * Add a thread if jobs wait and nobody, in the pool or elsewhere in the
 * context, is there to take them (see 2. at the top).
 */
static void pool_maybe_grow(struct iopa_pool *p)
{
	unsigned int pending, waiting;
	int r;

	if (atomic_load(&p->nidle) || atomic_load(&p->stop) ||
	    !atomic_load(&p->started) || atomic_load(&p->error))
		return;
	if (atomic_load(&p->nthreads) >= atomic_load(&p->max_eff))
		return;
	if (pool_demand(p, &pending, &waiting) < 0 || !pending || waiting)
		return;
	pthread_mutex_lock(&p->lock);
	if (!atomic_load(&p->nidle)) {
		r = pool_spawn_locked(p);
		if (r < 0)
			pool_spawn_failed_locked(p, r);
	}
	pthread_mutex_unlock(&p->lock);
}

/*
 * An idle thread asks whether it may end (see 3. at the top); if so it
 * is no longer counted in nthreads when this returns true.
 */
static bool pool_may_shrink(struct iopa_pool *p)
{
	unsigned int pending, waiting;
	bool leave = false;

	pthread_mutex_lock(&p->lock);
	if (atomic_load(&p->nthreads) > p->min_threads) {
		leave = true;
		if (pool_demand(p, &pending, &waiting) == 0 && pending &&
		    !waiting)
			leave = false;	/* the spare: jobs wait on the limit */
		if (leave)
			atomic_fetch_sub(&p->nthreads, 1);
	}
	pthread_mutex_unlock(&p->lock);
	return leave;
}

static bool pool_fetch_timed_out(int r)
{
	return r == -ETIMEDOUT || r == -EINTR || r == -EAGAIN;
}

/*
 * Complete the job this thread held, if any (*@have_done), and fetch the
 * next into @w.  Returns 1 with a job; 0 when none came in time (the
 * completion, if any, took effect); or a fatal -errno.
 */
static int pool_next(struct pool_thread *t, bool *have_done,
		     const struct iopa_done *done, struct iopa_work *w)
{
	struct iopa_pool *p = t->pool;
	unsigned int completed = 0;
	int r;

	if (p->inproc) {
		r = iopa_inproc_next(p->inproc, &t->iw, done, *have_done, w,
				POOL_TICK_NS);
		*have_done = false;	/* it took effect */
		return r;
	}
	if (p->work_batch) {
		r = iopa_work_batch(t->wfd, done, *have_done, w, 1, 0,
				    POOL_TICK_NS, &completed);
		if (*have_done && (completed || r == -ENOENT || r == -ETIME)) {
			/* Done, or not ours any more (its lease ended). */
			*have_done = false;
			if (r == -ENOENT || r == -ETIME)
				return 0;
		}
		if (r == 0 || (r < 0 && pool_fetch_timed_out(r)))
			return 0;
		return r;
	}
	if (*have_done)
		r = iopa_complete_and_fetch(t->wfd, done->job_id, done->res, w,
					    0, POOL_TICK_NS);
	else
		r = iopa_fetch(t->wfd, w, 0, POOL_TICK_NS);
	if (r < 0 && *have_done) {
		*have_done = false;
		/*
		 * A fetch-half error leaves the completion done; for anything
		 * else make sure of it (ENOENT: it was).
		 */
		if (!pool_fetch_timed_out(r)) {
			int c = iopa_complete(t->wfd, done->job_id, done->res);

			if (c < 0 && c != -ENOENT)
				return c;
		}
	}
	if (r < 0)
		return pool_fetch_timed_out(r) ? 0 : r;
	return 1;
}

static void *pool_thread_main(void *arg)
{
	struct pool_thread *t = arg;
	struct iopa_pool *p = t->pool;
	const int64_t idle_ns = (int64_t)p->idle_ms * 1000000LL;
	int64_t idle_since = pool_now_ns();
	bool counted = true;	/* still in p->nthreads */
	bool have_done = false;
	struct iopa_done done;

	memset(&done, 0, sizeof(done));
	pool_self = p;
	if (p->inproc)
		iopa_inproc_worker_init(&t->iw);
	while (!atomic_load(&p->stop)) {
		struct iopa_work w;
		int r;

		r = pool_next(t, &have_done, &done, &w);
		if (r < 0) {
			pool_set_error(p, r);
			break;
		}
		if (!r) {
			if (pool_now_ns() - idle_since >= idle_ns &&
			    !atomic_load(&p->stop) && pool_may_shrink(p)) {
				counted = false;
				break;
			}
			continue;
		}

		atomic_fetch_sub(&p->nidle, 1);
		pool_maybe_grow(p);
		done.res = p->fn(p->arg, &w);
		if (w.flags & IOPA_WORK_F_BORROWED)
			;
		else if (p->inproc)
			iopa_inproc_put_fd(p->inproc, w.fd);
		else
			close(w.fd);
		done.job_id = w.job_id;
		have_done = true;
		atomic_fetch_add(&p->nidle, 1);
		idle_since = pool_now_ns();
	}
	if (p->inproc) {
		iopa_inproc_worker_exit(p->inproc, &t->iw, &done, have_done);
	} else {
		int wfd = t->wfd;

		if (have_done)
			iopa_complete(wfd, done.job_id, done.res);
		/* Forgotten first: a fork's child closes only what is open. */
		pthread_mutex_lock(&p->lock);
		t->wfd = -1;
		pthread_mutex_unlock(&p->lock);
		close(wfd);
	}

	pthread_mutex_lock(&p->lock);
	if (counted)
		atomic_fetch_sub(&p->nthreads, 1);
	atomic_fetch_sub(&p->nidle, 1);
	p->threads_exited++;
	t->state = SLOT_EXITED;
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Reap what there is (or wait for it).  Called with p->reap_lock held. */
static int pool_reap_locked(struct iopa_pool *p, unsigned int flags,
			    uint64_t timeout_ns)
{
	int n, i;

	if (p->inproc)
		n = iopa_inproc_reap(p->inproc, p->cqes, POOL_REAP_BATCH, timeout_ns);
	else
		n = iopa_reap(p->sub_fd, p->cqes, POOL_REAP_BATCH, flags,
			      timeout_ns);
	if (n <= 0)
		return n;
	pool_reaping = p;
	for (i = 0; i < n; i++) {
		if (p->cqes[i].res < 0) {
			atomic_fetch_add(&p->failed, 1);
			p->failed_unreported++;
		}
		if (p->done)
			p->done(p->done_arg, &p->cqes[i]);
	}
	pool_reaping = NULL;
	atomic_fetch_add(&p->completed, n);
	return n;
}

static int64_t pool_outstanding(struct iopa_pool *p)
{
	return (int64_t)(atomic_load(&p->submitted) -
			 atomic_load(&p->completed));
}

/*
 * Join every thread, once p->stop is set: no spawn starts after that
 * (pool_spawn_locked() checks it under the lock), so the slots only go
 * from RUNNING to EXITED, which the exiting thread writes under the lock.
 */
static void pool_join_all(struct iopa_pool *p)
{
	unsigned int i;

	for (i = 0; i < p->max_threads; i++) {
		enum pool_slot_state st;
		pthread_t tid;

		pthread_mutex_lock(&p->lock);
		st = p->threads[i].state;
		tid = p->threads[i].tid;
		pthread_mutex_unlock(&p->lock);
		if (st == SLOT_FREE)
			continue;
		/* Joined: it has marked its slot EXITED and gone. */
		pthread_join(tid, NULL);
		pthread_mutex_lock(&p->lock);
		p->threads[i].state = SLOT_FREE;
		pthread_mutex_unlock(&p->lock);
	}
}

/*
 * Open (ctx_fd < 0) or duplicate the pool's context and check that the
 * module speaks our ABI.  Returns 0 or -errno (-ENOENT: no /dev/iopa).
 */
/*
 * Errors of opening or using /dev/iopa that the in-process pool stands
 * in for: no module (ENOENT, ENODEV, ENXIO), no permission (EACCES,
 * EPERM: a user not yet in group iopa, the normal state right after
 * make install), a device of an ABI not known (EPROTONOSUPPORT) or not
 * iopa's (ENOTTY).  Not a process out of fds or memory: the pool needs
 * those too.
 */
static bool pool_fallback_err(int r)
{
	switch (-r) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
	case EACCES:
	case EPERM:
	case EPROTONOSUPPORT:
	case ENOTTY:
		return true;
	default:
		return false;
	}
}

static int pool_open_ctx(struct iopa_pool *p, int ctx_fd)
{
	struct iopa_features feat;
	int r;

	if (ctx_fd < 0) {
		p->ctx_fd = iopa_open();
	} else {
		p->ctx_fd = fcntl(ctx_fd, F_DUPFD_CLOEXEC, 0);
		if (p->ctx_fd < 0)
			p->ctx_fd = -errno;
	}
	if (p->ctx_fd < 0) {
		r = p->ctx_fd;
		p->ctx_fd = -1;
		return r;
	}
	r = iopa_get_features(p->ctx_fd, &feat);
	if (r == 0 && (feat.abi_version != IOPA_ABI_VERSION ||
		       !(feat.features & IOPA_FEAT_IOCTL)))
		r = -EPROTONOSUPPORT;
	if (r < 0) {
		close(p->ctx_fd);
		p->ctx_fd = -1;
		return r;
	}
	p->batch_max = feat.batch_max ? feat.batch_max : 1;
	p->work_batch = feat.features & IOPA_FEAT_BATCH;
	p->borrow = feat.features & IOPA_FEAT_BORROW;	/* it can lend */
	return 0;
}

/*
 * Fork.  A pool belongs to the process that made it.  A child has a copy
 * of its memory but none of its threads, and the copy's locks may be
 * held by threads that are not there: in a child every pool call answers
 * -ECHILD without touching them, and iopa_pool_close() frees the copy.
 * The child's copies of the pool's fds (context, submitter, workers) are
 * closed at the fork, so that the parent's close of its submitter still
 * cancels its pending jobs, and the child holds no worker of the
 * parent's.  The pools are on a list for that, with pthread_atfork()
 * handlers; the fork holds the list's lock, so no pool comes or goes
 * meanwhile.  (An in-process pool's queued jobs' fds, dup()s, stay open
 * in the child: its queue may be mid-update at the fork.)
 */
static pthread_mutex_t pool_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct iopa_pool *pool_list;	/* pool_list_lock */
static pthread_once_t pool_atfork_once = PTHREAD_ONCE_INIT;

static void pool_atfork_prepare(void)
{
	pthread_mutex_lock(&pool_list_lock);
}

static void pool_atfork_parent(void)
{
	pthread_mutex_unlock(&pool_list_lock);
}

/* In the child, its only thread: async-signal-safe calls only. */
static void pool_atfork_child(void)
{
	struct iopa_pool *p;
	unsigned int i;

	for (p = pool_list; p; p = p->list_next) {
		p->forked = true;
		if (p->sub_fd >= 0)
			close(p->sub_fd);
		if (p->ctx_fd >= 0)
			close(p->ctx_fd);
		/* Slots change under p->lock, which a thread may have held. */
		for (i = 0; i < p->max_threads; i++)
			if (p->threads[i].state == SLOT_RUNNING &&
			    p->threads[i].wfd >= 0)
				close(p->threads[i].wfd);
	}
	pool_list = NULL;
	pthread_mutex_unlock(&pool_list_lock);
}

static void pool_atfork_register(void)
{
	pthread_atfork(pool_atfork_prepare, pool_atfork_parent,
		       pool_atfork_child);
}

static void pool_list_add(struct iopa_pool *p)
{
	pthread_once(&pool_atfork_once, pool_atfork_register);
	pthread_mutex_lock(&pool_list_lock);
	p->list_prev = NULL;
	p->list_next = pool_list;
	if (pool_list)
		pool_list->list_prev = p;
	pool_list = p;
	pthread_mutex_unlock(&pool_list_lock);
}

static void pool_list_del(struct iopa_pool *p)
{
	pthread_mutex_lock(&pool_list_lock);
	if (p->list_prev)
		p->list_prev->list_next = p->list_next;
	else
		pool_list = p->list_next;
	if (p->list_next)
		p->list_next->list_prev = p->list_prev;
	pthread_mutex_unlock(&pool_list_lock);
}

IOPA_EXPORT int iopa_pool_init(struct iopa_pool **pool, int ctx_fd,
			       const struct iopa_pool_opts *opts)
{
	unsigned int i, fd_budget, fd_threads;
	struct iopa_pool_opts o;
	struct iopa_pool *p;
	bool inproc;
	int r;

	if (!pool)
		return -EINVAL;
	*pool = NULL;
	memset(&o, 0, sizeof(o));
	if (opts)
		o = *opts;
	if ((o.flags & ~IOPA_POOL_F_MASK) || o.reserved0)
		return -EINVAL;
	for (i = 0; i < sizeof(o.reserved) / sizeof(o.reserved[0]); i++)
		if (o.reserved[i])
			return -EINVAL;
	if (o.limit > IOPA_LIMIT_MAX || o.max_threads > POOL_MAX_THREADS)
		return -EINVAL;

	/* In-process by request, or where the device cannot be used. */
	inproc = o.flags & IOPA_POOL_F_INPROC;
	if (inproc && (ctx_fd >= 0 || (o.flags & IOPA_POOL_F_MODULE)))
		return -EINVAL;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->ctx_fd = p->sub_fd = -1;
	if (!inproc) {
		r = pool_open_ctx(p, ctx_fd);
		if (r < 0 && ctx_fd < 0 && !(o.flags & IOPA_POOL_F_MODULE) &&
		    pool_fallback_err(r)) {
			inproc = true;
			p->module_err = -r;
		}
		if (r < 0 && !inproc)
			goto out_free;
	}
	if (inproc) {
		p->batch_max = INPROC_MAX_JOBS;
		p->borrow = true;
	}
	p->borrow = p->borrow && (o.flags & IOPA_POOL_F_BORROW);

	p->min_threads = o.min_threads;
	p->max_threads = o.max_threads ? o.max_threads :
			 pool_default_max(o.limit);
	/*
	 * The fd budget: with the module, two fds a thread (its worker fd,
	 * a running job's); in process a third of it for the threads (I/O
	 * counter, running job), the rest for the jobs' dup()s, queued or
	 * running.  A thread less than asked is a limit lower than the
	 * kernel's; no fd free for a job is EMFILE in the user function.
	 */
	fd_budget = pool_fd_budget();
	fd_threads = inproc ? fd_budget / 3 : fd_budget / 2;
	if (fd_threads < 1)
		fd_threads = 1;
	p->idle_ms = o.idle_ms ? o.idle_ms : POOL_DEFAULT_IDLE_MS;
	if (p->min_threads > p->max_threads) {
		r = -EINVAL;
		goto out_close_ctx;
	}
	if (p->max_threads > fd_threads)
		p->max_threads = fd_threads;
	if (p->min_threads > p->max_threads)
		p->min_threads = p->max_threads;
	atomic_store(&p->max_eff, p->max_threads);
	p->done = o.done;
	p->done_arg = o.done_arg;

	p->threads = calloc(p->max_threads, sizeof(*p->threads));
	if (!p->threads) {
		r = -ENOMEM;
		goto out_close_ctx;
	}
	if (inproc) {
		/*
		 * The limit cannot usefully exceed the threads: the default
		 * maximum keeps one spare thread, as with the module.
		 */
		r = iopa_inproc_create(&p->inproc, o.limit,
				  o.max_threads || p->max_threads < 2 ?
				  p->max_threads : p->max_threads - 1,
				  p->borrow,
				  fd_budget == UINT_MAX ? UINT_MAX :
				  fd_budget - fd_threads);
		if (r < 0)
			goto out_free_threads;
	} else {
		p->sub_fd = iopa_submitter_create(p->ctx_fd, o.limit, 0);
		if (p->sub_fd < 0) {
			r = p->sub_fd;
			goto out_free_threads;
		}
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_mutex_init(&p->reap_lock, NULL);
	pool_list_add(p);
	*pool = p;
	return 0;

out_free_threads:
	free(p->threads);
out_close_ctx:
	if (p->ctx_fd >= 0)
		close(p->ctx_fd);
out_free:
	free(p);
	return r;
}

IOPA_EXPORT int iopa_pool_create_threads(struct iopa_pool *p, iopa_pool_fn fn,
					 void *arg)
{
	unsigned int i, n;
	int r = 0;

	if (!p || !fn)
		return -EINVAL;
	if (p->forked)
		return -ECHILD;
	if (pool_self == p)
		return -EDEADLK;
	pthread_mutex_lock(&p->lock);
	if (p->fn || atomic_load(&p->stop)) {
		pthread_mutex_unlock(&p->lock);
		return -EBUSY;
	}
	p->fn = fn;
	p->arg = arg;
	atomic_store(&p->started, true);
	n = p->min_threads ? p->min_threads : 1;
	for (i = 0; i < n && !r; i++)
		r = pool_spawn_locked(p);
	if (r < 0)
		atomic_store(&p->stop, true);	/* see below */
	pthread_mutex_unlock(&p->lock);

	if (r < 0) {
		/* No half-started pool: end what started; close() remains. */
		pool_join_all(p);
		return r;
	}
	/* Jobs may have been submitted before the threads existed. */
	pool_maybe_grow(p);
	return 0;
}

IOPA_EXPORT int iopa_pool_submit(struct iopa_pool *p,
				 const struct iopa_job *jobs, unsigned int nr)
{
	int r;

	if (!p || !nr)
		return -EINVAL;
	if (!jobs)
		return -EFAULT;
	if (p->forked)
		return -ECHILD;
	if (atomic_load(&p->stop))
		return -ESHUTDOWN;
	if (nr > p->batch_max)
		nr = p->batch_max;
	for (;;) {
		/*
		 * Counted before they can complete: a concurrent
		 * iopa_pool_wait() never sees them done and not submitted
		 * (completed ahead of submitted) and returns early.
		 */
		atomic_fetch_add(&p->submitted, nr);
		r = p->inproc ? iopa_inproc_submit(p->inproc, jobs, nr) :
		    iopa_submit(p->sub_fd, jobs, nr, 0);
		atomic_fetch_sub(&p->submitted, r > 0 ? nr - (unsigned int)r : nr);
		if (r > 0) {
			pool_maybe_grow(p);
			return r;
		}
		/*
		 * EAGAIN: max_jobs outstanding; ENOSPC: the module holds
		 * max_total_jobs; ETOOMANYREFS: our user's jobs pin as many
		 * files as RLIMIT_NOFILE allows.  Our own jobs count in the
		 * last two too: reap to make room, unless nothing of ours is
		 * outstanding (then only others can free the room: say so).
		 */
		if (r != -EAGAIN &&
		    ((r != -ENOSPC && r != -ETOOMANYREFS) ||
		     pool_outstanding(p) <= 0))
			return r;
		if (pool_reaping == p)
			return -EDEADLK;
		if (!atomic_load(&p->started))
			return -EAGAIN;	/* nothing would ever make room */
		if (atomic_load(&p->error) && !atomic_load(&p->nthreads))
			return atomic_load(&p->error);
		pthread_mutex_lock(&p->reap_lock);
		r = pool_reap_locked(p, IOPA_REAP_F_WAIT, POOL_TICK_NS);
		pthread_mutex_unlock(&p->reap_lock);
		if (r < 0 && r != -ETIMEDOUT)
			return r;
		pool_maybe_grow(p);
	}
}

IOPA_EXPORT int iopa_pool_wait(struct iopa_pool *p)
{
	int r = 0, err;

	if (!p)
		return -EINVAL;
	if (p->forked)
		return -ECHILD;
	if (pool_self == p || pool_reaping == p)
		return -EDEADLK;
	for (;;) {
		if (pool_outstanding(p) <= 0)
			break;
		if (!atomic_load(&p->started)) {
			r = -EINVAL;	/* no thread function: nothing runs */
			break;
		}
		err = atomic_load(&p->error);
		if (err && !atomic_load(&p->nthreads)) {
			r = err;
			break;
		}
		pool_maybe_grow(p);
		pthread_mutex_lock(&p->reap_lock);
		r = pool_reap_locked(p, IOPA_REAP_F_WAIT, POOL_TICK_NS);
		pthread_mutex_unlock(&p->reap_lock);
		if (r == -ETIMEDOUT || r >= 0) {
			r = 0;
			continue;
		}
		break;		/* -EINTR: a signal for the caller */
	}
	if (r == 0) {
		pthread_mutex_lock(&p->reap_lock);
		r = p->failed_unreported > INT32_MAX ? INT32_MAX :
		    (int)p->failed_unreported;
		p->failed_unreported = 0;
		pthread_mutex_unlock(&p->reap_lock);
	}
	return r;
}

IOPA_EXPORT int iopa_pool_close(struct iopa_pool *p)
{
	if (!p)
		return -EINVAL;
	if (p->forked) {
		/* A child's copy: its locks may be held, its fds are closed. */
		free(p->threads);
		free(p);
		return 0;
	}
	if (pool_self == p || pool_reaping == p)
		return -EDEADLK;
	pool_list_del(p);
	atomic_store(&p->stop, true);
	if (p->inproc) {
		/* Threads end after their job; the queued jobs never run. */
		iopa_inproc_stop(p->inproc);
		pool_join_all(p);
		iopa_inproc_destroy(p->inproc);
	} else {
		/* Our pending jobs would never run now: cancel them. */
		close(p->sub_fd);
		pool_join_all(p);
		close(p->ctx_fd);
	}
	pthread_mutex_destroy(&p->reap_lock);
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p);
	return 0;
}

IOPA_EXPORT int iopa_pool_ctx_fd(const struct iopa_pool *p)
{
	if (!p)
		return -EINVAL;
	if (p->forked)
		return -ECHILD;
	return p->inproc ? -ENODEV : p->ctx_fd;
}

IOPA_EXPORT int iopa_pool_submitter_fd(const struct iopa_pool *p)
{
	if (!p)
		return -EINVAL;
	if (p->forked)
		return -ECHILD;
	return p->inproc ? -ENODEV : p->sub_fd;
}

IOPA_EXPORT int iopa_pool_get_info(struct iopa_pool *p,
				   struct iopa_pool_info *info)
{
	int r;

	if (!p || !info)
		return -EINVAL;
	if (p->forked)
		return -ECHILD;
	memset(info, 0, sizeof(*info));
	pthread_mutex_lock(&p->lock);
	info->threads = atomic_load(&p->nthreads);
	info->idle = atomic_load(&p->nidle);
	info->peak_threads = p->peak;
	info->min_threads = p->min_threads;
	info->max_threads = atomic_load(&p->max_eff);
	info->idle_ms = p->idle_ms;
	info->threads_started = p->threads_started;
	info->threads_exited = p->threads_exited;
	pthread_mutex_unlock(&p->lock);
	info->submitted = atomic_load(&p->submitted);
	info->completed = atomic_load(&p->completed);
	info->failed = atomic_load(&p->failed);
	info->outstanding = info->submitted - info->completed;
	if (p->inproc) {
		info->flags |= IOPA_POOL_INFO_F_INPROC;
		info->limit = iopa_inproc_limit(p->inproc);
		info->module_err = p->module_err;
	} else {
		r = iopa_get_limit(p->sub_fd, NULL);
		info->limit = r > 0 ? (unsigned int)r : 0;
	}
	return 0;
}
