// SPDX-License-Identifier: GPL-2.0
/*
 * iopa-stress: many submitter and worker processes, millions of jobs,
 * random worker SIGKILLs, submitter deaths and limit changes, and an
 * exactly-once check of every job.
 *
 *   iopa-stress [-j JOBS] [-s SUBMITTERS] [-w WORKERS] [-S SEED] [-q]
 *
 * The parent opens one context; submitter and worker processes inherit
 * its fd and create their own submitter / worker fds.  Each job carries
 * its index in a shared table as user_data.  Invariants checked:
 *  - at most one live worker holds a job at a time (a worker records its
 *    pid in the job's slot when it fetches it, and finds the slot empty or
 *    left by a dead worker; it clears the slot before COMPLETE);
 *  - a submitter that lives to the end reaps every job it submitted
 *    exactly once, with the result its worker gave (a function of the
 *    index) or -ECANCELED (a job whose worker died twice);
 *  - no job is reaped twice, by anyone;
 *  - after everything is closed: the module's stats/jobs, pending,
 *    inflight and unreaped are 0, submitted = completed + cancelled over
 *    the run, and the jobs' file is released: every job pins the one
 *    struct file the parent opened (children share it), so inotify's
 *    IN_CLOSE_NOWRITE fires on the last fput() only if no job kept a
 *    reference.  (The system's file-nr is a per-CPU counter read without
 *    summing, too coarse to compare.)
 * A killed submitter's jobs end unreaped (cancelled or run into nothing);
 * they count in the module-wide balance only.
 *
 * The last line is
 *   stress jobs=<ended> reaped=<n> requeued=<n> worker_kills=<n>
 *   submitter_kills=<n> violations=<n>
 * and the exit status is 1 on any violation.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/iopa.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS	64
#define BATCH		256
#define MORTAL_JOBS	20000	/* jobs of a submitter that may be killed */
#define JOB_FILE	"/tmp/iopa-stress-job"
/*
 * A submitter that has sent everything and reaped nothing for this long
 * reports its missing jobs as lost and stops, instead of hanging the run
 * (workers are always running; a kill requeues within milliseconds).
 */
#define STALL_S		60

struct shared {
	atomic_ulong violations;
	atomic_ulong reaped;
	atomic_ulong next_job;		/* next index to hand out */
	atomic_bool stop_workers;
	/* per job: the pid of the worker holding it, and times reaped */
	_Atomic int holder[];
};

static struct shared *sh;
static _Atomic unsigned char *reaped_cnt;
static unsigned long nr_jobs = 1000000;
static unsigned int nr_subs = 4, nr_wrks = 8;
static unsigned long seed;
static int quiet;
static int ctx, job_file;

static uint64_t rs;

static uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 2685821657736338717ULL;
}

static void violation(const char *fmt, unsigned long a, long b)
{
	if (atomic_fetch_add(&sh->violations, 1) < 20) {
		fprintf(stderr, "stress: VIOLATION: ");
		fprintf(stderr, fmt, a, b);
		fputc('\n', stderr);
	}
}

static int32_t expected(uint64_t idx)
{
	return (int32_t)((idx * 2654435761U) & 0x3fffffff);
}

/* ---- worker -------------------------------------------------------------- */

/*
 * Whether @pid is a live process that has not begun to exit: a worker
 * killed while holding a job releases its fds (and the job is requeued)
 * before it becomes a zombie, so an exiting task (PF_EXITING, 0x4 in
 * /proc/PID/stat's flags) counts as dead too.
 */
static bool alive(pid_t pid)
{
	char path[64], buf[512], *p, state;
	unsigned long flags;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	p = strrchr(buf, ')');
	/* ") S ppid pgrp session tty tpgid flags" */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2)
		return false;
	return state != 'Z' && state != 'X' && !(flags & 0x4);
}

static void worker(void)
{
	struct iopa_worker_create wc = { };
	struct iopa_fetch f = { };
	pid_t me = getpid();
	int wfd;

	wfd = ioctl(ctx, IOPA_IOC_WORKER_CREATE, &wc);
	if (wfd < 0) {
		perror("stress: WORKER_CREATE");
		_exit(2);
	}
	while (!atomic_load(&sh->stop_workers)) {
		uint64_t idx;
		int prev;

		f.timeout_ns = 50000000;	/* to notice stop_workers */
		f.flags = 0;
		if (ioctl(wfd, f.done.job_id ? IOPA_IOC_COMPLETE_AND_FETCH :
			  IOPA_IOC_FETCH, &f)) {
			if (errno != ETIMEDOUT && errno != EINTR) {
				perror("stress: FETCH");
				_exit(2);
			}
			/* a COMPLETE_AND_FETCH completed its job first */
			memset(&f.done, 0, sizeof(f.done));
			continue;
		}
		close(f.work.fd);
		idx = f.work.user_data;
		if (idx >= nr_jobs + MORTAL_JOBS * MAX_PROCS) {
			violation("worker got a job with index %lu (%ld)", idx, 0);
			_exit(2);
		}
		prev = 0;
		if (!atomic_compare_exchange_strong(&sh->holder[idx], &prev, me)) {
			/* left by a worker that died holding it? */
			if (alive(prev))
				violation("job %lu held by live pid %ld too", idx, prev);
			atomic_store(&sh->holder[idx], me);
		}
		/* the "work" */
		atomic_store(&sh->holder[idx], 0);
		f.done.job_id = f.work.job_id;
		f.done.res = expected(idx);
	}
	_exit(0);
}

/* ---- submitter ----------------------------------------------------------- */

static time_t mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

/*
 * Submit @n jobs from @first, reaping as we go; change the limit now and
 * then.  Exits 0 when every job is reaped exactly once, 3 when jobs were
 * lost (no completion for STALL_S seconds with all of them sent).
 */
static void submitter(uint64_t first, uint64_t n)
{
	struct iopa_submitter_create sc = { .limit = 0 };
	struct iopa_job jobs[BATCH];
	struct iopa_cqe cqes[BATCH];
	uint64_t sent = 0, got = 0;
	time_t progress = mono_s();
	int sfd, i;

	rs ^= first * 7 + getpid();
	sfd = ioctl(ctx, IOPA_IOC_SUBMITTER_CREATE, &sc);
	if (sfd < 0) {
		perror("stress: SUBMITTER_CREATE");
		_exit(2);
	}
	memset(jobs, 0, sizeof(jobs));
	while (got < n) {
		if (sent < n) {
			struct iopa_submit s = { .jobs = (uintptr_t)jobs };
			uint64_t k = n - sent < BATCH ? n - sent : BATCH;
			int r;

			for (i = 0; i < (int)k; i++) {
				jobs[i].fd = job_file;
				jobs[i].user_data = first + sent + i;
				jobs[i].len = 4096;
			}
			s.nr = k;
			r = ioctl(sfd, IOPA_IOC_SUBMIT, &s);
			if (r < 0 && errno != EAGAIN) {
				perror("stress: SUBMIT");
				_exit(2);
			}
			if (r > 0)
				sent += r;
		}
		if (!(rnd() % 64)) {
			struct iopa_limit l = { .limit = rnd() % 3 ? 1 + rnd() % 16 : 0 };

			if (ioctl(sfd, IOPA_IOC_SET_LIMIT, &l))
				perror("stress: SET_LIMIT");
		}
		{
			struct iopa_reap rp = {
				.cqes = (uintptr_t)cqes, .nr = BATCH,
				.flags = sent == n ? IOPA_REAP_F_WAIT : 0,
				.timeout_ns = 200000000,
			};
			int r = ioctl(sfd, IOPA_IOC_REAP, &rp);

			if (r < 0 && errno != ETIMEDOUT && errno != EAGAIN &&
			    errno != EINTR) {
				perror("stress: REAP");
				_exit(2);
			}
			for (i = 0; i < r; i++) {
				uint64_t idx = cqes[i].user_data;

				if (idx < first || idx >= first + n) {
					violation("reaped foreign job %lu (%ld)", idx, 0);
					continue;
				}
				if (atomic_fetch_add(&reaped_cnt[idx], 1))
					violation("job %lu reaped again (res %ld)",
						  idx, cqes[i].res);
				if (cqes[i].res != expected(idx) &&
				    cqes[i].res != -ECANCELED)
					violation("job %lu: res %ld", idx, cqes[i].res);
				got++;
			}
			atomic_fetch_add(&sh->reaped, r > 0 ? r : 0);
			if (r > 0 || sent < n) {
				progress = mono_s();
			} else if (mono_s() - progress > STALL_S) {
				violation("submitter from job %lu: %ld jobs lost "
					  "(never completed)", first,
					  (long)(n - got));
				_exit(3);
			}
		}
	}
	close(sfd);
	_exit(0);
}

/* ---- parent ----------------------------------------------------------------- */

struct proc {
	pid_t pid;
	bool mortal;
	uint64_t first, n;
};

static unsigned long sysfs_stat(const char *name)
{
	char path[128], buf[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/class/misc/iopa/stats/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return ~0UL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = 0;
	return strtoul(buf, NULL, 10);
}

static pid_t spawn(void (*fn)(void), uint64_t first, uint64_t n)
{
	pid_t pid = fork();

	if (pid < 0) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		if (fn)
			fn();
		submitter(first, n);
	}
	return pid;
}

int main(int argc, char **argv)
{
	unsigned long sub0, comp0, canc0, req0, wkills = 0, skills = 0;
	struct proc subs[MAX_PROCS], wrks[MAX_PROCS];
	uint64_t handed = 0;
	size_t total, sz;
	int c, i, status, live_subs, ino;
	pid_t pid;

	seed = time(NULL);
	while ((c = getopt(argc, argv, "j:s:w:S:q")) != -1) {
		switch (c) {
		case 'j': nr_jobs = strtoul(optarg, NULL, 0); break;
		case 's': nr_subs = strtoul(optarg, NULL, 0); break;
		case 'w': nr_wrks = strtoul(optarg, NULL, 0); break;
		case 'S': seed = strtoul(optarg, NULL, 0); break;
		case 'q': quiet = 1; break;
		default:
			fprintf(stderr, "usage: iopa-stress [-j JOBS] [-s SUBMITTERS] [-w WORKERS] [-S SEED] [-q]\n");
			return 2;
		}
	}
	if (!nr_subs || nr_subs > MAX_PROCS || !nr_wrks || nr_wrks > MAX_PROCS) {
		fprintf(stderr, "iopa-stress: 1..%d submitters and workers\n", MAX_PROCS);
		return 2;
	}
	rs = seed * 0x9e3779b97f4a7c15ULL + 1;
	/* killed submitters' ranges are extra: room for one per slot and more */
	total = nr_jobs + (size_t)MORTAL_JOBS * MAX_PROCS;
	sz = sizeof(*sh) + total * sizeof(sh->holder[0]);
	sh = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	reaped_cnt = mmap(NULL, total, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED || reaped_cnt == MAP_FAILED) {
		perror("mmap");
		return 2;
	}

	sub0 = sysfs_stat("submitted");
	comp0 = sysfs_stat("completed");
	canc0 = sysfs_stat("cancelled");
	req0 = sysfs_stat("requeued");
	ctx = open("/dev/iopa", O_RDWR | O_CLOEXEC);
	close(open(JOB_FILE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
	job_file = open(JOB_FILE, O_RDONLY | O_CLOEXEC);
	ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (ctx < 0 || job_file < 0 || ino < 0 ||
	    inotify_add_watch(ino, JOB_FILE, IN_CLOSE_NOWRITE) < 0) {
		perror("stress: open");
		return 2;
	}
	printf("stress: seed=%lu jobs=%lu submitters=%u workers=%u\n", seed,
	       nr_jobs, nr_subs, nr_wrks);
	fflush(stdout);

	for (i = 0; i < (int)nr_wrks; i++)
		wrks[i].pid = spawn(worker, 0, 0);
	/* submitter slot 0 is never killed; the others may be, once each round */
	for (i = 0; i < (int)nr_subs; i++) {
		uint64_t n = nr_jobs / nr_subs + (i == 0 ? nr_jobs % nr_subs : 0);

		subs[i] = (struct proc){ .first = handed, .n = n };
		subs[i].pid = spawn(NULL, handed, n);
		handed += n;
	}
	live_subs = nr_subs;

	while (live_subs) {
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
		/* a worker dies now and then, and is replaced */
		if (!(rnd() % 3)) {
			i = rnd() % nr_wrks;
			kill(wrks[i].pid, SIGKILL);
			waitpid(wrks[i].pid, &status, 0);
			if (WIFEXITED(status))
				violation("worker %lu exited with %ld", i,
					  WEXITSTATUS(status));
			wrks[i].pid = spawn(worker, 0, 0);
			wkills++;
		}
		/* a mortal submitter is started and sometimes killed */
		if (!(rnd() % 25) && handed + MORTAL_JOBS <= total) {
			pid = spawn(NULL, handed, MORTAL_JOBS);
			handed += MORTAL_JOBS;
			if (rnd() % 2) {
				struct timespec d = { 0, (rnd() % 50) * 1000000 };

				nanosleep(&d, NULL);
				kill(pid, SIGKILL);
				skills++;
			}
			waitpid(pid, &status, 0);
			if (WIFEXITED(status) && WEXITSTATUS(status))
				violation("mortal submitter exit %lu (%ld)",
					  WEXITSTATUS(status), 0);
		}
		for (i = 0; i < (int)nr_subs; i++) {
			if (!subs[i].pid)
				continue;
			pid = waitpid(subs[i].pid, &status, WNOHANG);
			if (pid != subs[i].pid)
				continue;
			if (!WIFEXITED(status) || WEXITSTATUS(status))
				violation("submitter %lu ended with status %ld",
					  i, status);
			subs[i].pid = 0;
			live_subs--;
		}
	}
	atomic_store(&sh->stop_workers, true);
	for (i = 0; i < (int)nr_wrks; i++) {
		waitpid(wrks[i].pid, &status, 0);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			violation("worker %lu ended with status %ld", i, status);
	}

	/* every job of the surviving submitters reaped exactly once */
	for (i = 0; i < (int)nr_subs; i++) {
		uint64_t j;

		for (j = subs[i].first; j < subs[i].first + subs[i].n; j++)
			if (atomic_load(&reaped_cnt[j]) != 1)
				violation("job %lu reaped %ld times", j,
					  atomic_load(&reaped_cnt[j]));
	}
	close(ctx);
	close(job_file);
	{
		unsigned long sub = sysfs_stat("submitted") - sub0;
		unsigned long comp = sysfs_stat("completed") - comp0;
		unsigned long canc = sysfs_stat("cancelled") - canc0;
		unsigned long req = sysfs_stat("requeued") - req0;
		struct pollfd pfd = { .fd = ino, .events = POLLIN };
		bool released;

		if (sub != comp + canc)
			violation("module balance: submitted %lu != completed + cancelled %ld",
				  sub, comp + canc);
		if (sysfs_stat("jobs") || sysfs_stat("pending") ||
		    sysfs_stat("inflight") || sysfs_stat("unreaped"))
			violation("module still holds jobs (%lu) after close (%ld)",
				  sysfs_stat("jobs"), 0);
		/* the last fput runs from task work: allow it a moment */
		released = poll(&pfd, 1, 5000) == 1;
		if (!released)
			violation("job file still referenced after close (%lu, %ld)", 0, 0);
		unlink(JOB_FILE);
		printf("stress: submitted=%lu completed=%lu cancelled=%lu requeued=%lu job_file_released=%s\n",
		       sub, comp, canc, req, released ? "yes" : "no");
		printf("stress jobs=%lu reaped=%lu requeued=%lu worker_kills=%lu submitter_kills=%lu violations=%lu\n",
		       comp + canc, atomic_load(&sh->reaped), req, wkills, skills,
		       atomic_load(&sh->violations));
	}
	return atomic_load(&sh->violations) ? 1 : 0;
}
