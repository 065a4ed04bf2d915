// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-fuzz: random and mutated arguments for every iopa ioctl and
 * io_uring command, with racing close, fork/exit/SIGKILL, an argument
 * page unmapped (replaced with MAP_FIXED) under running calls, ring
 * teardown with parked commands, sysfs tunables changed underneath and
 * module unload attempts.
 *
 *   iopa-fuzz [-n CALLS] [-t THREADS] [-s SEED] [-k KO] [-v]
 *
 * CALLS (default 1,000,000) operations are spread over THREADS (default 4)
 * threads sharing one table of fds (contexts, submitters, workers, plain
 * files), so that one thread closes what another is using.  Every
 * blocking call is interrupted by a per-thread timer after a few ms, so
 * the run cannot hang on a missing wake-up... except inside the kernel:
 * a call that never returns is a finding, and the guest's timeout catches
 * it.  With -k, a few unload attempts (delete_module O_NONBLOCK) are made
 * while fds are open (must fail with EBUSY/EWOULDBLOCK) and, once all are
 * closed at the end, the module is unloaded and reloaded from KO.
 *
 * The program checks only what it can see: a call that returns something
 * other than 0, a count or -errno (e.g. a positive value where none is
 * possible) is counted as "odd" and makes it exit 1.  Kernel reports
 * (WARNING, BUG, KASAN, lockdep, kmemleak) are judged from the kernel log
 * by the caller (tools/fuzz/fuzz-guest.sh).  The last line is
 *   fuzz calls=<n> odd=<n> seed=<n>
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <linux/iopa.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NR_SLOTS	48
#define MAX_THREADS	16
#define PAGE		4096UL
/*
 * Each thread's argument buffer: the first page holds the structures, the
 * rest takes what REAP may write (IOPA_BATCH_MAX completions), then a
 * PROT_NONE page so that nothing the kernel writes lands in another
 * mapping.
 */
#define BUF_SIZE	(40 * PAGE)
/* LIST_SUBMITTERS entries in a page (arg_ptr() hands out one page) */
#define LIST_ROOM	(PAGE / sizeof(struct iopa_sub_info))

enum kind { K_NONE, K_CTX, K_SUB, K_WRK, K_FILE };

static struct {
	pthread_mutex_t lock;
	int fd[NR_SLOTS];
	enum kind kind[NR_SLOTS];
} tbl = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned long nr_calls = 1000000;
static unsigned int nr_threads = 4;
static unsigned long seed;
static const char *ko_path;
static int verbose;
static atomic_ulong calls, odd;
static atomic_bool stop;
/* A page that is munmapped and remapped, with a PROT_NONE page after it. */
static char *_Atomic victim;
static const char *files[] = { "/tmp/iopa-fuzz-a", "/tmp/iopa-fuzz-b" };

static const char *tunables[] = {
	"max_jobs", "max_submitters", "max_user_submitters", "max_workers",
	"max_total_jobs", "learn_knees", "increase_threshold",
	"decrease_threshold", "fast_cycle_ms", "normal_cycle_ms",
	"hold_cycle_ms", "history", "init_limit", "fast_cap", "max_limit",
	"gain_threshold",
};
static char saved[sizeof(tunables) / sizeof(tunables[0])][32];

/* ---- randomness ----------------------------------------------------------- */

static __thread uint64_t rs;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ULL;
}

static unsigned int below(unsigned int n)
{
	return n ? rnd() % n : 0;
}

/* Values that find off-by-ones and sign bugs, or anything. */
static uint64_t val(void)
{
	static const uint64_t v[] = {
		0, 1, 2, 3, 63, 64, 65, 4095, 4096, 4097, 16384, 16385,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL, ~0ULL,
	};

	if (below(4))
		return v[below(sizeof(v) / sizeof(v[0]))];
	return below(2) ? below(10) : rnd();
}

static void fill(void *p, size_t n)
{
	unsigned char *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = rnd();
}

/* Flip a few bits or set a field-sized word to a val(). */
static void mutate(void *p, size_t n)
{
	unsigned char *b = p;
	int i, k = 1 + below(3);

	for (i = 0; i < k; i++) {
		size_t at = below(n);

		if (below(2)) {
			b[at] ^= 1U << below(8);
		} else {
			uint64_t x = val();
			size_t w = (size_t)1 << below(4);

			at &= ~(w - 1);
			if (at + w <= n)
				memcpy(b + at, &x, w);
		}
	}
}

/* ---- the fd table ---------------------------------------------------------- */

static void put_fd(int fd, enum kind k)
{
	int i, victim_fd = -1;

	if (fd < 0)
		return;
	pthread_mutex_lock(&tbl.lock);
	i = below(NR_SLOTS);
	if (tbl.kind[i] != K_NONE)
		victim_fd = tbl.fd[i];
	tbl.fd[i] = fd;
	tbl.kind[i] = k;
	pthread_mutex_unlock(&tbl.lock);
	if (victim_fd >= 0)
		close(victim_fd);
}

/* Some fd of kind @k (any kind if K_NONE), or a junk number. */
static int get_fd(enum kind k)
{
	int i, fd = -1, start = below(NR_SLOTS);

	if (!below(32))
		return below(2) ? -1 : (int)below(1024);
	pthread_mutex_lock(&tbl.lock);
	for (i = 0; i < NR_SLOTS; i++) {
		int s = (start + i) % NR_SLOTS;

		if (tbl.kind[s] != K_NONE && (k == K_NONE || tbl.kind[s] == k)) {
			fd = tbl.fd[s];
			break;
		}
	}
	pthread_mutex_unlock(&tbl.lock);
	return fd;
}

static void close_some(void)
{
	int i = below(NR_SLOTS), fd = -1;

	pthread_mutex_lock(&tbl.lock);
	if (tbl.kind[i] != K_NONE) {
		fd = tbl.fd[i];
		tbl.kind[i] = K_NONE;
	}
	pthread_mutex_unlock(&tbl.lock);
	if (fd >= 0)
		close(fd);
}

/* ---- per-thread interruption of blocking calls ----------------------------- */

static void on_alarm(int sig)
{
	(void)sig;
}

static __thread timer_t thr_timer;

/*
 * Interrupt the call about to be made within a few ms.  The timer repeats:
 * a signal that lands before the call enters the kernel is spent on the
 * way in, and a one-shot timer would then leave the call blocked for good.
 */
static void arm(void)
{
	struct itimerspec it = {
		.it_value.tv_nsec = (1 + below(5)) * 1000000,
		.it_interval.tv_nsec = 2000000,
	};

	timer_settime(thr_timer, 0, &it, NULL);
}

static void disarm(void)
{
	struct itimerspec it = { };

	timer_settime(thr_timer, 0, &it, NULL);
}

/* ---- arguments -------------------------------------------------------------- */

/*
 * Where an argument lives: mostly a good buffer, sometimes NULL, a
 * kernel address, the victim page (maybe unmapped right now), or a
 * buffer that ends at an unmapped guard page.
 */
static void *arg_ptr(void *good, size_t len, char *guarded)
{
	switch (below(16)) {
	case 0:
		return NULL;
	case 1:
		return (void *)0xffff888000000000UL;
	case 2:
		return atomic_load(&victim) + below(PAGE - len % PAGE);
	case 3:
		return guarded + PAGE - (len > 1 ? below(len) + 1 : 1);
	case 4:
		return (void *)1;
	default:
		return good;
	}
}

static atomic_ulong errs[600];	/* ioctl errnos seen */
static atomic_ulong oks[64];	/* successful ioctls by command number */
static bool in_child;

static void bad(const char *what, long r)
{
	atomic_fetch_add(&odd, 1);
	if (!in_child && (verbose || atomic_load(&odd) <= 20))
		fprintf(stderr, "fuzz: odd: %s: %ld (%s)\n", what, r,
			r < 0 ? strerror(-r) : "positive");
}

static void note(long r)
{
	atomic_fetch_add(&calls, 1);
	(void)r;
}

/* The errors an iopa ioctl may answer; anything else (EIO, or 512..
 * ERESTARTSYS leaking out of a signal path) is a finding. */
static bool errno_ok(int e)
{
	switch (e) {
	case EBADF: case ENOTTY: case EINVAL: case EFAULT: case EAGAIN:
	case EINTR: case ETIMEDOUT: case ENOENT: case EALREADY: case ENOSPC:
	case EMFILE: case ENFILE: case ENOMEM: case EBUSY: case ECANCELED:
	case EPERM: case EACCES: case EOVERFLOW: case EOPNOTSUPP:
	case ETIME:		/* COMPLETE of a job whose lease ended */
	case ETOOMANYREFS:	/* the user pins RLIMIT_NOFILE files */
	case ESRCH:		/* SUB_ADMIN of no open submitter */
	case EDQUOT:		/* the user has max_user_submitters */
		return true;
	}
	return false;
}

/*
 * Check what an ioctl answered: -1 with an allowed errno, 0, a new fd
 * (the two CREATEs), a count no larger than asked (SUBMIT, REAP, CANCEL:
 * 1..4096 for CANCEL's ALL) or a limit (GET_LIMIT).
 */
static long xioctl(int fd, unsigned long cmd, void *arg, unsigned long max)
{
	long r;

	arm();
	r = ioctl(fd, cmd, arg);
	disarm();
	atomic_fetch_add(&calls, 1);
	if (r < 0) {
		if (errno > 0 && errno < 600)
			atomic_fetch_add(&errs[errno], 1);
		if (r != -1 || !errno_ok(errno))
			bad("ioctl errno", -errno);
		return -errno;
	}
	if (r > (long)max)
		bad("ioctl result", r);
	if (_IOC_TYPE(cmd) == IOPA_IOC_MAGIC)
		atomic_fetch_add(&oks[_IOC_NR(cmd) & 63], 1);
	return r;
}

static void job_desc(struct iopa_job *j)
{
	memset(j, 0, sizeof(*j));
	switch (below(4)) {
	case 0:
		j->fd = get_fd(K_NONE);
		break;
	default:
		j->fd = get_fd(K_FILE);
	}
	j->offset = below(4) ? below(1 << 20) : val();
	j->len = below(4) ? below(1 << 16) : val();
	j->user_data = below(64);
	if (!below(4))
		j->flags = IOPA_JOB_F_BORROW;
	if (!below(4))
		mutate(j, sizeof(*j));
}

/* Close the fds of @n fetched jobs that are ours (not lent). */
static void close_work(struct iopa_work *w, long n)
{
	long i;

	for (i = 0; i < n && i < 16; i++)
		if (w[i].fd > 2 && w[i].fd < 65536 &&
		    !(w[i].flags & IOPA_WORK_F_BORROWED))
			close(w[i].fd);
}

/* One random ioctl; @buf is PAGE bytes, @guarded has an unmapped page after. */
static void do_ioctl(char *buf, char *guarded)
{
	static const unsigned long cmds[] = {
		IOPA_IOC_GET_FEATURES, IOPA_IOC_SUBMITTER_CREATE,
		IOPA_IOC_WORKER_CREATE, IOPA_IOC_GET_STATS, IOPA_IOC_SUBMIT,
		IOPA_IOC_REAP, IOPA_IOC_CANCEL, IOPA_IOC_SET_LIMIT,
		IOPA_IOC_GET_LIMIT, IOPA_IOC_SET_ADAPT, IOPA_IOC_GET_STATE,
		IOPA_IOC_SET_ORDER, IOPA_IOC_FETCH, IOPA_IOC_COMPLETE,
		IOPA_IOC_COMPLETE_AND_FETCH, IOPA_IOC_LIST_SUBMITTERS,
		IOPA_IOC_SET_LEASE, IOPA_IOC_GET_LEASE, IOPA_IOC_WORK_BATCH,
		IOPA_IOC_WORKER_SET_FILES, IOPA_IOC_SUB_ADMIN,
	};
	unsigned long cmd, max;
	void *argp;
	size_t len;
	long r;
	int fd;

	if (!below(16)) {
		/* a number nobody defined, in our type or near it */
		do {
			cmd = _IOC(below(4), below(8) ? IOPA_IOC_MAGIC : below(256),
				   below(0x40), below(256));
		} while (cmd == IOPA_IOC_REAP ||	/* their pointers are written */
			 cmd == IOPA_IOC_LIST_SUBMITTERS);
	} else {
		cmd = cmds[below(sizeof(cmds) / sizeof(cmds[0]))];
	}
	len = _IOC_SIZE(cmd) ? _IOC_SIZE(cmd) : 8;
	memset(buf, 0, PAGE);

	switch (cmd) {
	case IOPA_IOC_SUBMITTER_CREATE: {
		struct iopa_submitter_create *a = (void *)buf;

		a->limit = below(4) ? below(8) : val();
		fd = get_fd(below(8) ? K_CTX : K_NONE);
		break;
	}
	case IOPA_IOC_WORKER_CREATE: {
		struct iopa_worker_create *a = (void *)buf;

		a->flags = below(2) ? IOPA_WORKER_F_BORROW : 0;
		if (!below(8))
			mutate(a, sizeof(*a));
		fd = get_fd(below(8) ? K_CTX : K_NONE);
		break;
	}
	case IOPA_IOC_WORKER_SET_FILES: {
		struct iopa_worker_files *a = (void *)buf;
		int32_t *fds = (void *)(buf + 64);
		unsigned int i, n = below(IOPA_WORKER_MAX_FILES + 2);

		for (i = 0; i < n; i++)
			fds[i] = below(4) ? get_fd(K_FILE) : (int32_t)val();
		a->fds = (uintptr_t)arg_ptr(fds, n * sizeof(*fds), guarded);
		a->nr = below(8) ? n : val();
		if (!below(8))
			mutate(a, sizeof(*a));
		fd = get_fd(below(8) ? K_WRK : K_NONE);
		break;
	}
	case IOPA_IOC_WORK_BATCH: {
		struct iopa_batch *a = (void *)buf;
		struct iopa_done *d = (void *)(buf + 64);
		unsigned int i, n = below(9);
		uint64_t work;

		for (i = 0; i < n; i++) {
			d[i].job_id = below(4) ? below(256) : val();
			d[i].res = val();
			if (!below(16))
				mutate(&d[i], sizeof(d[i]));
		}
		a->done = (uintptr_t)arg_ptr(d, n * sizeof(*d), guarded);
		a->nr_done = below(8) ? n : val();
		/* the kernel writes jobs here: one of arg_ptr()'s only */
		work = (uintptr_t)arg_ptr(buf + PAGE, 16 * sizeof(struct iopa_work),
					  guarded);
		a->work = work;
		a->nr_work = below(8) ? below(17) : val();
		a->flags = below(2) ? IOPA_FETCH_F_NONBLOCK : 0;
		a->timeout_ns = below(3000000);
		if (!below(8)) {
			mutate(a, sizeof(*a));
			a->work = work;
			if (a->nr_work > 16 && a->nr_work <= IOPA_WORKER_MAX_JOBS)
				a->nr_work = 16;
		}
		fd = get_fd(below(8) ? K_WRK : K_NONE);
		break;
	}
	case IOPA_IOC_SUBMIT: {
		struct iopa_submit *a = (void *)buf;
		struct iopa_job *jobs = (void *)(buf + 64);
		unsigned int i, n = 1 + below(8);

		for (i = 0; i < n; i++)
			job_desc(&jobs[i]);
		a->jobs = (uintptr_t)arg_ptr(jobs, n * sizeof(*jobs), guarded);
		a->nr = below(8) ? n : val();
		a->flags = below(4) ? 0 : val();
		fd = get_fd(below(8) ? K_SUB : K_NONE);
		break;
	}
	case IOPA_IOC_REAP: {
		struct iopa_reap *a = (void *)buf;

		a->cqes = (uintptr_t)arg_ptr(buf + PAGE, 16 * sizeof(struct iopa_cqe),
					     guarded);
		a->nr = below(8) ? below(17) : val();
		a->flags = below(4) ? 0 : val();
		a->timeout_ns = below(2) ? 0 : below(3000000);
		if (!below(8)) {
			/* not the pointer the kernel writes through: a
			 * flipped bit there would scribble on our memory */
			uint64_t cqes = a->cqes;

			mutate(a, sizeof(*a));
			a->cqes = cqes;
		}
		fd = get_fd(below(8) ? K_SUB : K_NONE);
		break;
	}
	case IOPA_IOC_SUB_ADMIN: {
		struct iopa_sub_admin *a = (void *)buf;

		/*
		 * Mostly an open submitter of ours, as the listing names it
		 * (other threads may close it meanwhile: ESRCH), else guesses.
		 */
		a->ctx_id = below(4) ? 1 + below(8) : val();
		a->sub_id = below(4) ? 1 + below(4) : val();
		if (below(4)) {
			struct iopa_sub_info si;
			struct iopa_list l = {
				.subs = (uintptr_t)&si, .nr = 1,
				.entry_size = sizeof(si),
			};
			int c = get_fd(K_CTX);

			if (c >= 0 && !ioctl(c, IOPA_IOC_LIST_SUBMITTERS, &l) &&
			    l.filled == 1) {
				a->ctx_id = si.ctx_id;
				a->sub_id = si.sub_id;
			}
		}
		a->op = below(8) ? 1 + below(2) : val();
		if (a->op == IOPA_ADMIN_SET_LIMIT) {
			a->limit.limit = below(8);
		} else if (a->op == IOPA_ADMIN_SET_ADAPT) {
			a->adapt.policy = below(4);
			a->adapt.min = below(4);
			a->adapt.max = below(8);
		}
		if (!below(8))
			mutate(a, sizeof(*a));
		fd = get_fd(below(8) ? K_CTX : K_NONE);
		break;
	}
	case IOPA_IOC_LIST_SUBMITTERS: {
		struct iopa_list *a = (void *)buf;
		uint64_t subs;

		/* room for LIST_ROOM entries, or more asked than the
		 * kernel accepts */
		subs = (uintptr_t)arg_ptr(buf + PAGE, LIST_ROOM *
					  sizeof(struct iopa_sub_info), guarded);
		a->subs = subs;
		a->nr = below(8) ? below(LIST_ROOM + 1) :
			IOPA_LIST_MAX + 1 + below(1 << 20);
		a->flags = below(4) ? IOPA_LIST_F_ALL * below(2) : val();
		/* the stride the kernel writes with: never larger than ours */
		a->entry_size = below(8) ? sizeof(struct iopa_sub_info) :
			below(sizeof(struct iopa_sub_info) + 1);
		if (!below(8)) {
			uint32_t nr = a->nr;

			mutate(a, sizeof(*a));
			a->subs = subs;
			if (a->nr > LIST_ROOM && a->nr <= IOPA_LIST_MAX)
				a->nr = nr;
			if (a->entry_size > sizeof(struct iopa_sub_info))
				a->entry_size = sizeof(struct iopa_sub_info);
		}
		fd = get_fd(below(8) ? K_CTX : K_NONE);
		break;
	}
	case IOPA_IOC_FETCH:
	case IOPA_IOC_COMPLETE_AND_FETCH: {
		struct iopa_fetch *a = (void *)buf;

		a->flags = below(2) ? IOPA_FETCH_F_NONBLOCK : 0;
		a->timeout_ns = below(3000000);
		a->done.job_id = below(4) ? below(256) : val();
		if (cmd == IOPA_IOC_FETCH && below(4))
			a->done.job_id = 0;
		if (!below(8))
			mutate(a, sizeof(*a));
		fd = get_fd(below(8) ? K_WRK : K_NONE);
		break;
	}
	case IOPA_IOC_SET_LEASE: {
		struct iopa_lease *a = (void *)buf;

		/* none, or 1..50 ms: jobs of the run taken back now and then */
		a->lease_ns = below(2) ? 0 : IOPA_LEASE_MIN_NS * (1 + below(50));
		if (!below(8))
			mutate(a, sizeof(*a));
		fd = get_fd(below(8) ? K_SUB : K_NONE);
		break;
	}
	case IOPA_IOC_COMPLETE: {
		struct iopa_done *a = (void *)buf;

		a->job_id = below(4) ? below(256) : val();
		a->res = val();
		if (!below(8))
			mutate(a, sizeof(*a));
		fd = get_fd(below(8) ? K_WRK : K_NONE);
		break;
	}
	default:
		/* small valid-looking values, then mutated */
		if (below(2)) {
			uint32_t *w = (void *)buf;

			w[0] = below(4) ? below(5) : val();
			w[1] = below(4) ? below(9) : val();
			w[2] = below(4) ? below(17) : val();
		} else {
			fill(buf, len);
		}
		if (!below(4))
			mutate(buf, len);
		fd = get_fd(below(4) ? K_SUB : K_NONE);
		break;
	}

	switch (cmd) {
	case IOPA_IOC_SUBMITTER_CREATE:
	case IOPA_IOC_WORKER_CREATE:
		max = 1 << 20;		/* an fd */
		break;
	case IOPA_IOC_SUBMIT:
	case IOPA_IOC_REAP:
		max = IOPA_BATCH_MAX;
		break;
	case IOPA_IOC_CANCEL:
		max = 16384;
		break;
	case IOPA_IOC_GET_LIMIT:
		max = IOPA_LIMIT_MAX;
		break;
	case IOPA_IOC_WORK_BATCH:
		max = IOPA_WORKER_MAX_JOBS;
		break;
	default:
		max = 0;
	}
	argp = arg_ptr(buf, len, guarded);
	r = xioctl(fd, cmd, argp, max);
	if (r > 0 && (cmd == IOPA_IOC_SUBMITTER_CREATE ||
		      cmd == IOPA_IOC_WORKER_CREATE))
		put_fd(r, cmd == IOPA_IOC_SUBMITTER_CREATE ? K_SUB : K_WRK);
	/* a fetched job's fd is ours to close */
	if (r == 0 && argp == buf && (cmd == IOPA_IOC_FETCH ||
					cmd == IOPA_IOC_COMPLETE_AND_FETCH)) {
		struct iopa_fetch *f = (void *)buf;

		if (f->work.fd > 2 && !(f->work.flags & IOPA_WORK_F_BORROWED))
			close(f->work.fd);
	}
	if (r > 0 && argp == buf && cmd == IOPA_IOC_WORK_BATCH &&
	    ((struct iopa_batch *)buf)->work == (uintptr_t)(buf + PAGE))
		close_work((struct iopa_work *)(buf + PAGE), r);
}

/* ---- io_uring --------------------------------------------------------------- */

struct ring {
	struct io_uring r;
	bool up;
	struct iopa_work work[8];
	/* WORK_BATCH: the kernel writes the jobs until the CQE */
	struct iopa_batch batch;
	struct iopa_done done[8];
	struct iopa_work bwork[16];
	/* SUBMIT_MANY reads these at issue; REAP writes cqes until its CQE */
	struct iopa_job jobs[8];
	struct iopa_cqe cqes[16];
};

static void ring_setup(struct ring *rg)
{
	rg->up = io_uring_queue_init(16, &rg->r, IORING_SETUP_SQE128) == 0;
}

static void do_uring(struct ring *rg, char *buf, char *guarded)
{
	static const unsigned int ops[] = {
		IOPA_URING_CMD_SUBMIT, IOPA_URING_CMD_FETCH,
		IOPA_URING_CMD_COMMIT_AND_FETCH, IOPA_URING_CMD_WORK_BATCH,
		IOPA_URING_CMD_SUBMIT_MANY, IOPA_URING_CMD_REAP,
	};
	struct io_uring_cqe *cqe;
	struct io_uring_sqe *sqe;
	int i, n;

	if (!rg->up) {
		ring_setup(rg);
		return;
	}
	if (!below(64)) {
		/* tear down with whatever is parked or pending */
		io_uring_queue_exit(&rg->r);
		note(0);
		ring_setup(rg);
		return;
	}
	n = 1 + below(4);
	for (i = 0; i < n; i++) {
		sqe = io_uring_get_sqe(&rg->r);
		if (!sqe)
			break;
		memset(sqe, 0, 128);
		sqe->opcode = IORING_OP_URING_CMD;
		sqe->cmd_op = below(16) ? ops[below(6)] : (unsigned int)rnd();
		sqe->user_data = rnd();
		if (sqe->cmd_op == IOPA_URING_CMD_SUBMIT) {
			job_desc((struct iopa_job *)sqe->cmd);
			sqe->fd = get_fd(below(8) ? K_SUB : K_NONE);
		} else if (sqe->cmd_op == IOPA_URING_CMD_SUBMIT_MANY) {
			struct iopa_uring_submit *a = (void *)sqe->cmd;
			unsigned int k, nj = 1 + below(8);

			for (k = 0; k < nj; k++)
				job_desc(&rg->jobs[k]);
			a->jobs = (uintptr_t)arg_ptr(rg->jobs, nj * sizeof(rg->jobs[0]),
						     guarded);
			a->nr = below(8) ? nj : val();
			a->flags = below(8) ? 0 : val();
			sqe->fd = get_fd(below(8) ? K_SUB : K_NONE);
		} else if (sqe->cmd_op == IOPA_URING_CMD_REAP) {
			struct iopa_uring_reap *a = (void *)sqe->cmd;

			a->nr = below(8) ? 1 + below(16) : val();
			a->min = below(8) ? 1 + below(a->nr < 16 ? a->nr : 16) : val();
			a->flags = below(8) ? 0 : val();
			sqe->fd = get_fd(below(8) ? K_SUB : K_NONE);
		} else if (sqe->cmd_op == IOPA_URING_CMD_WORK_BATCH) {
			struct iopa_uring_batch *ub = (void *)sqe->cmd;
			struct iopa_batch *b = &rg->batch;
			unsigned int k;

			memset(b, 0, sizeof(*b));
			for (k = 0; k < 8; k++) {
				rg->done[k].job_id = below(4) ? below(256) : val();
				rg->done[k].res = val();
			}
			b->done = (uintptr_t)rg->done;
			b->nr_done = below(8) ? below(9) : val();
			b->work = (uintptr_t)rg->bwork;
			b->nr_work = below(8) ? below(17) : val();
			if (b->nr_work > 16 && b->nr_work <= IOPA_WORKER_MAX_JOBS)
				b->nr_work = 16;
			b->flags = below(4) ? 0 : IOPA_FETCH_F_NONBLOCK;
			b->timeout_ns = below(8) ? 0 : val();
			ub->batch = (uintptr_t)(below(8) ? (void *)b :
						arg_ptr(b, sizeof(*b), guarded));
			if (!below(16))
				ub->flags = val();
			sqe->fd = get_fd(below(8) ? K_WRK : K_NONE);
		} else {
			struct iopa_uring_fetch *f = (void *)sqe->cmd;
			struct iopa_work *w = &rg->work[below(8)];

			f->work = (uintptr_t)arg_ptr(w, sizeof(*w), guarded);
			f->res = val();
			if (!below(8))
				mutate(f, sizeof(*f));
			sqe->fd = get_fd(below(8) ? K_WRK : K_NONE);
		}
		if (!below(16))
			mutate(sqe, 64);
		sqe->opcode = IORING_OP_URING_CMD;
		/* the kernel writes a work item through this pointer: keep
		 * it one of arg_ptr()'s, never a bit-flipped one */
		if (sqe->cmd_op == IOPA_URING_CMD_WORK_BATCH)
			((struct iopa_uring_batch *)sqe->cmd)->batch =
				(uintptr_t)&rg->batch;
		/* the kernel writes completions here until the CQE */
		if (sqe->cmd_op == IOPA_URING_CMD_REAP) {
			struct iopa_uring_reap *a = (void *)sqe->cmd;

			a->cqes = (uintptr_t)rg->cqes;
			if (a->nr > 16 && a->nr <= IOPA_BATCH_MAX)
				a->nr = 16;
		}
		else if (sqe->cmd_op != IOPA_URING_CMD_SUBMIT)
			((struct iopa_uring_fetch *)sqe->cmd)->work =
				(uintptr_t)arg_ptr(&rg->work[below(8)],
						   sizeof(struct iopa_work), guarded);
	}
	note(io_uring_submit(&rg->r));
	(void)buf;
	while (io_uring_peek_cqe(&rg->r, &cqe) == 0) {
		/* a completed fetch installed an fd in our table: close it */
		if (cqe->res == 0) {
			for (i = 0; i < 8; i++) {
				if (rg->work[i].fd > 2 && rg->work[i].fd < 65536 &&
				    !(rg->work[i].flags & IOPA_WORK_F_BORROWED)) {
					close(rg->work[i].fd);
					rg->work[i].fd = -1;
				}
			}
		}
		if (cqe->res > 0 && cqe->res <= 16) {
			close_work(rg->bwork, cqe->res);
			for (i = 0; i < 16; i++)
				rg->bwork[i].fd = -1;
		}
		io_uring_cqe_seen(&rg->r, cqe);
	}
}

/* ---- everything else ---------------------------------------------------------- */

static void do_open(void)
{
	int fd;

	switch (below(4)) {
	case 0:
		fd = open(files[below(2)], O_RDONLY | O_CLOEXEC);
		put_fd(fd, K_FILE);
		break;
	default:
		fd = open("/dev/iopa", O_RDWR | O_CLOEXEC);
		note(fd < 0 ? -1 : 0);
		put_fd(fd, K_CTX);
	}
}

static void do_sysfs(void)
{
	unsigned int i = below(sizeof(tunables) / sizeof(tunables[0]));
	char path[128], v[32];
	int fd, n;

	snprintf(path, sizeof(path), "/sys/class/misc/iopa/%s", tunables[i]);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	/* mostly sane, sometimes not */
	n = snprintf(v, sizeof(v), "%llu", below(2) ?
		     (unsigned long long)(1 + below(2000)) :
		     (unsigned long long)val());
	if (!below(8))
		n = snprintf(v, sizeof(v), "%s", below(2) ? "-1" : "x");
	note(write(fd, v, n) < 0 ? -1 : 0);
	close(fd);
}

static void restore_sysfs(void)
{
	unsigned int i;
	char path[128];
	int fd;

	for (i = 0; i < sizeof(tunables) / sizeof(tunables[0]); i++) {
		if (!saved[i][0])
			continue;
		snprintf(path, sizeof(path), "/sys/class/misc/iopa/%s",
			 tunables[i]);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (write(fd, saved[i], strlen(saved[i])) < 0)
			fprintf(stderr, "fuzz: restoring %s: %s\n", tunables[i],
				strerror(errno));
		close(fd);
	}
}

static void save_sysfs(void)
{
	unsigned int i;
	char path[128];
	ssize_t n;
	int fd;

	for (i = 0; i < sizeof(tunables) / sizeof(tunables[0]); i++) {
		snprintf(path, sizeof(path), "/sys/class/misc/iopa/%s",
			 tunables[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, saved[i], sizeof(saved[i]) - 1);
		close(fd);
		saved[i][n > 0 ? n : 0] = 0;
	}
}

static char *victim_new(void)
{
	char *p = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap victim");
		exit(2);
	}
	mprotect(p + PAGE, PAGE, PROT_NONE);
	return p;
}

/*
 * Take the victim page away under the other threads' calls and give it
 * back.  It is replaced, not unmapped: a PROT_NONE mapping laid over it
 * with MAP_FIXED unmaps the old pages just as munmap() does (a racing
 * copy_to_user() faults), but keeps the address ours, so no other mapping
 * (an io_uring ring, a thread stack) can land where a racing call still
 * writes.  Sometimes the pages are only dropped (MADV_DONTNEED), which
 * refaults them as zeros.
 */
static void do_victim(void)
{
	char *v = atomic_load(&victim);
	int prot = below(2) ? PROT_NONE : PROT_READ | PROT_WRITE;

	if (!below(4)) {
		madvise(v, PAGE, MADV_DONTNEED);
	} else if (mmap(v, PAGE, prot, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
			-1, 0) == MAP_FAILED) {
		perror("mmap victim");
		exit(2);
	}
	note(0);
}

static int reload(void)
{
	int fd = open(ko_path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0 || syscall(SYS_finit_module, fd, "", 0)) {
		perror("fuzz: reload");
		r = -1;
	}
	if (fd >= 0)
		close(fd);
	return r;
}

/* A small text file (a /sys or /proc entry) into @buf: its length, 0. */
static ssize_t read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	return n;
}

/* Print such a file's contents, prefixed. */
static void print_file(const char *prefix, const char *path)
{
	char buf[4096];
	ssize_t n = read_text(path, buf, sizeof(buf));

	if (n)
		printf("%s%s%s", prefix, buf, buf[n - 1] == '\n' ? "" : "\n");
}

/*
 * The final unload failed: say why.  The module's reference count, and
 * the kernel stacks of the tasks that may hold it: this process's
 * threads and io_uring's (iou-*: ring teardown, workers).
 */
static void unload_report(void)
{
	char path[300], comm[64];
	struct dirent *de;
	DIR *d;

	print_file("fuzz: iopa refcnt ", "/sys/module/iopa/refcnt");
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		long pid = strtol(de->d_name, NULL, 10);

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/comm", pid);
		if (!read_text(path, comm, sizeof(comm)))
			continue;
		comm[strcspn(comm, "\n")] = 0;
		if (pid != getpid() && strncmp(comm, "iou-", 4) &&
		    strncmp(comm, "kworker", 7))
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stack", pid);
		printf("fuzz: stack of %ld (%s):\n", pid, comm);
		print_file("", path);
	}
	closedir(d);
}

/*
 * Everything is closed, but io_uring tears a ring down in deferred work
 * that may still hold our files (and so the module) for a while: retry
 * the unload while the module is busy, up to 30 s (the kernel gives no
 * event for it to wait on).  Return 0 if it unloaded.
 */
static int final_unload(void)
{
	struct timespec tick = { .tv_nsec = 100 * 1000 * 1000 };
	int i;

	for (i = 0; i < 300; i++) {
		if (!syscall(SYS_delete_module, "iopa", O_NONBLOCK)) {
			if (i)
				printf("fuzz: unloaded after %d.%d s of ring teardown\n",
				       i / 10, i % 10);
			return 0;
		}
		if (errno != EWOULDBLOCK && errno != EBUSY)
			break;
		nanosleep(&tick, NULL);
	}
	perror("fuzz: final unload");
	unload_report();
	return -1;
}

static void do_unload_attempt(void)
{
	/* with our fds open this must fail; it must never crash */
	long r = syscall(SYS_delete_module, "iopa", O_NONBLOCK);

	atomic_fetch_add(&calls, 1);
	if (r && errno != EBUSY && errno != EWOULDBLOCK)
		bad("delete_module", errno);
	/* nobody held it: put it back */
	if (r == 0 && reload())
		atomic_store(&stop, true);
}

static void ops(char *buf, char *guarded, struct ring *rg, unsigned long n);

/* A child that works on the inherited fds a little, then exits or is killed. */
static void do_fork(char *buf, char *guarded)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return;
	if (pid == 0) {
		struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
					.sigev_signo = SIGALRM };
		struct ring rg = { };

		/* Only this thread was copied: another may have held the
		 * table lock, and the timer is not inherited. */
		in_child = true;
		pthread_mutex_init(&tbl.lock, NULL);
		sev._sigev_un._tid = gettid();
		if (timer_create(CLOCK_MONOTONIC, &sev, &thr_timer))
			_exit(3);
		rs ^= getpid();
		ring_setup(&rg);
		ops(buf, guarded, &rg, 20 + below(40));
		if (below(2))
			_exit(0);
		kill(getpid(), SIGKILL);	/* die with rings and fds open */
	}
	if (below(2)) {
		usleep(below(3000));
		kill(pid, SIGKILL);
	}
	waitpid(pid, &status, 0);
	note(0);
}

static void ops(char *buf, char *guarded, struct ring *rg, unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n && !atomic_load(&stop); i++) {
		unsigned int w = below(1000);

		if (w < 560)
			do_ioctl(buf, guarded);
		else if (w < 760)
			do_uring(rg, buf, guarded);
		else if (w < 860)
			do_open();
		else if (w < 940)
			close_some();
		else if (w < 960)
			do_victim();
		else if (w < 975 && getuid() == 0)
			do_sysfs();
		else if (w < 977 && ko_path)
			do_unload_attempt();
		else if (w < 979)
			do_fork(buf, guarded);
		else
			do_ioctl(buf, guarded);
	}
}

static void *thread_main(void *arg)
{
	struct sigevent sev = { .sigev_notify = SIGEV_THREAD_ID,
				.sigev_signo = SIGALRM };
	unsigned long id = (uintptr_t)arg;
	struct ring rg = { };
	char *buf, *guarded;

	rs = seed * 0x9e3779b97f4a7c15ULL + id + 1;
	sev._sigev_un._tid = gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &thr_timer)) {
		perror("timer_create");
		exit(2);
	}
	buf = mmap(NULL, BUF_SIZE + PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guarded = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || guarded == MAP_FAILED) {
		perror("mmap");
		exit(2);
	}
	mprotect(buf + BUF_SIZE, PAGE, PROT_NONE);
	mprotect(guarded + PAGE, PAGE, PROT_NONE);
	ring_setup(&rg);
	while (!atomic_load(&stop) && atomic_load(&calls) < nr_calls)
		ops(buf, guarded, &rg, 100);
	if (rg.up)
		io_uring_queue_exit(&rg.r);
	timer_delete(thr_timer);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	pthread_t thr[MAX_THREADS];
	struct rlimit rl;
	unsigned int i;
	int c, fd;

	seed = time(NULL);
	while ((c = getopt(argc, argv, "n:t:s:k:v")) != -1) {
		switch (c) {
		case 'n': nr_calls = strtoul(optarg, NULL, 0); break;
		case 't': nr_threads = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		case 'k': ko_path = optarg; break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr,
				"usage: iopa-fuzz [-n CALLS] [-t THREADS] [-s SEED] [-k KO] [-v]\n");
			return 2;
		}
	}
	if (!nr_threads || nr_threads > MAX_THREADS) {
		fprintf(stderr, "iopa-fuzz: 1..%d threads\n", MAX_THREADS);
		return 2;
	}
	fd = open("/dev/iopa", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("iopa-fuzz: /dev/iopa");
		return 2;
	}
	close(fd);
	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART: calls see EINTR */
	/* fds a fetch wrote where we did not look leak: leave room */
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < 2; i++) {
		fd = open(files[i], O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || ftruncate(fd, 1 << 20)) {
			perror(files[i]);
			return 2;
		}
		close(fd);
	}
	victim = victim_new();
	save_sysfs();
	printf("fuzz: seed=%lu calls=%lu threads=%u%s\n", seed, nr_calls,
	       nr_threads, ko_path ? " unload-attempts" : "");
	fflush(stdout);

	for (i = 0; i < nr_threads; i++)
		pthread_create(&thr[i], NULL, thread_main, (void *)(uintptr_t)i);
	for (i = 0; i < nr_threads; i++)
		pthread_join(thr[i], NULL);

	for (i = 0; i < NR_SLOTS; i++)
		if (tbl.kind[i] != K_NONE)
			close(tbl.fd[i]);
	restore_sysfs();
	if (ko_path) {
		/* everything closed: the module must unload and load again */
		if (final_unload()) {
			atomic_fetch_add(&odd, 1);
		} else if (reload()) {
			atomic_fetch_add(&odd, 1);
		}
	}
	for (i = 0; i < 2; i++)
		unlink(files[i]);
	printf("fuzz: ioctl errors:");
	for (i = 0; i < 600; i++)
		if (atomic_load(&errs[i]))
			printf(" %s=%lu", strerrorname_np(i) ?: "?",
			       atomic_load(&errs[i]));
	printf("\nfuzz: ioctl successes by command number:");
	for (i = 0; i < 64; i++)
		if (atomic_load(&oks[i]))
			printf(" 0x%02x=%lu", i, atomic_load(&oks[i]));
	printf("\n");
	printf("fuzz calls=%lu odd=%lu seed=%lu\n", atomic_load(&calls),
	       atomic_load(&odd), seed);
	return atomic_load(&odd) ? 1 : 0;
}
