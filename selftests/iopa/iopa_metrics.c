// SPDX-License-Identifier: GPL-2.0
/*
 * iopa cumulative per-submitter metrics (IOPA_FEAT_METRICS): struct
 * iopa_sub_info.metrics of IOPA_IOC_LIST_SUBMITTERS.  The histograms
 * count one value per dispatch (queue wait) and per completion (service
 * time) in the bucket the ABI defines; the counters add up over cycles;
 * block I/O bytes are those the worker read; failures are completions
 * with a negative result only; the cgroup is the creator's; a caller of
 * ABI 1 (IOPA_SUB_INFO_SIZE_V1) gets its entries as before.
 */
#include "iopa_test.h"

#include <sys/mman.h>
#include <sys/mount.h>

#define CG_ROOT		"/sys/fs/cgroup"
#define CG		CG_ROOT "/iopa-metrics"
#define NULLB_DEV	"/dev/nullb0"
#define BLOCK		4096

FIXTURE(metrics) {
	int ctx;
	int sub;	/* pinned at 8 */
	int wrk;
	int file;
	char path[64];
	bool cg_mounted;
	bool cg_made;
	bool nullb_loaded;
};

FIXTURE_SETUP(metrics)
{
	struct iopa_features f;

	self->ctx = self->sub = self->wrk = self->file = -1;
	self->path[0] = 0;
	self->cg_mounted = self->cg_made = self->nullb_loaded = false;
	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	if (!(f.features & IOPA_FEAT_METRICS))
		SKIP(return, "module without IOPA_FEAT_METRICS");
	self->sub = iopa_submitter_create(self->ctx, 8);
	ASSERT_LE(0, self->sub);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->file = iopa_job_file(self->path, O_RDONLY);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(metrics)
{
	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	iopa_close(&self->file);
	if (self->path[0])
		unlink(self->path);
	if (self->cg_made)
		rmdir(CG);
	if (self->cg_mounted)
		umount(CG_ROOT);
	if (self->nullb_loaded)
		iopa_run_cmd("modprobe -r null_blk");
}

/* The fixture's submitter's entry (the context's first), as listed. */
static int my_info(FIXTURE_DATA(metrics) *self, struct iopa_sub_info *out)
{
	return iopa_sub_info_of(self->ctx, 1, out);
}

static uint64_t hist_sum(const __u64 *h)
{
	uint64_t s = 0;
	int i;

	for (i = 0; i < IOPA_HIST_BUCKETS; i++)
		s += h[i];
	return s;
}

/* The only non-empty bucket of @h, or -1. */
static int hist_only(const __u64 *h)
{
	int i, b = -1;

	for (i = 0; i < IOPA_HIST_BUCKETS; i++) {
		if (!h[i])
			continue;
		if (b >= 0)
			return -1;
		b = i;
	}
	return b;
}

/* The bucket the ABI puts @us in. */
static int bucket_of(uint64_t us)
{
	int i = 0;

	while (i < IOPA_HIST_BUCKETS - 1 && us > (1ULL << i))
		i++;
	return i;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

TEST_F(metrics, v2_entry_and_size)
{
	struct iopa_sub_info info;
	struct iopa_list l = {
		.subs = (uintptr_t)&info, .nr = 1, .entry_size = sizeof(info),
	};

	EXPECT_EQ((size_t)IOPA_SUB_INFO_SIZE_V2, sizeof(struct iopa_sub_info));
	memset(&info, 0xa5, sizeof(info));
	ASSERT_EQ(0, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	EXPECT_EQ((uint32_t)IOPA_SUB_INFO_SIZE_V2, l.entry_size);
	ASSERT_EQ(1U, l.filled);
	/* Nothing happened yet: every counter 0, the reserved ones too. */
	EXPECT_EQ(0ULL, info.metrics.io_bytes);
	EXPECT_EQ(0ULL, info.metrics.failed);
	EXPECT_EQ(0ULL, hist_sum(info.metrics.wait_hist));
	EXPECT_EQ(0ULL, hist_sum(info.metrics.svc_hist));
	EXPECT_EQ(0ULL, info.metrics.turn_waits);
	EXPECT_EQ(0ULL, info.metrics.turn_wait_us);
	EXPECT_EQ(0U, info.metrics.reserved0);
	EXPECT_EQ(0ULL, info.metrics.reserved[0] | info.metrics.reserved[1]);
}

/* A caller of ABI 1: entries at its stride, nothing written past them. */
TEST_F(metrics, v1_caller_gets_v1_entries)
{
	unsigned char buf[2 * IOPA_SUB_INFO_SIZE_V1 + 64];
	struct iopa_list l = {
		.subs = (uintptr_t)buf, .nr = 2,
		.entry_size = IOPA_SUB_INFO_SIZE_V1,
	};
	struct iopa_sub_info a, b;
	unsigned int i;
	int sub2;

	sub2 = iopa_submitter_create(self->ctx, 3);
	ASSERT_LE(0, sub2);
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	EXPECT_EQ(2U, l.filled);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memcpy(&a, buf, IOPA_SUB_INFO_SIZE_V1);
	memcpy(&b, buf + IOPA_SUB_INFO_SIZE_V1, IOPA_SUB_INFO_SIZE_V1);
	EXPECT_EQ(a.sub_id + 1, b.sub_id);
	EXPECT_EQ(3U, b.state.limit);
	for (i = 2 * IOPA_SUB_INFO_SIZE_V1; i < sizeof(buf); i++)
		ASSERT_EQ(0xa5, buf[i]);
	close(sub2);
}

/*
 * One wait count per dispatch, one service count per completion; the
 * failures are the completions with a negative result.
 */
TEST_F(metrics, counts_follow_the_jobs)
{
	struct iopa_sub_info info;
	struct iopa_work w;
	int i;

	ASSERT_EQ(20, iopa_submit_many(self->sub, self->file, 0, 20));
	for (i = 0; i < 20; i++)
		ASSERT_EQ(0, iopa_run_one(self->wrk, i % 4 ? 0 : -EIO, &w));
	ASSERT_EQ(0, my_info(self, &info));
	EXPECT_EQ(20ULL, info.stats.completed);
	EXPECT_EQ(5ULL, info.metrics.failed);
	EXPECT_EQ(info.stats.dispatched, hist_sum(info.metrics.wait_hist));
	EXPECT_EQ(20ULL, hist_sum(info.metrics.svc_hist));
	/* A file on tmpfs: no block I/O. */
	EXPECT_EQ(0ULL, info.metrics.io_bytes);
}

/*
 * A FETCH whose struct the kernel can read but not write: the job it
 * dispatched cannot be copied out and goes back.  The FETCH's result.
 */
static int fetch_into_read_only(int wrk)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct iopa_fetch *f;
	int r;

	f = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (f == MAP_FAILED)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->flags = IOPA_FETCH_F_NONBLOCK;
	r = mprotect(f, pg, PROT_READ) ? -errno :
	    iopa_ioctl(wrk, IOPA_IOC_FETCH, f);
	munmap(f, pg);
	return r;
}

/*
 * A dispatch given back undone (the work could not be copied out) is no
 * dispatch: the wait histogram still adds up to stats.dispatched.
 */
TEST_F(metrics, given_back_dispatch_not_counted)
{
	struct iopa_sub_info info;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 31));
	ASSERT_EQ(-EFAULT, fetch_into_read_only(self->wrk));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(0, my_info(self, &info));
	EXPECT_EQ(1ULL, info.stats.dispatched);
	EXPECT_EQ(1ULL, hist_sum(info.metrics.wait_hist));
	EXPECT_EQ(1ULL, hist_sum(info.metrics.svc_hist));
}

/*
 * A dispatch given back undone does not restart the job's queue wait:
 * its one wait counts from submission (Core round 2, item 4: the
 * give-back used to reset it, and the 60 ms before it vanished).
 */
TEST_F(metrics, given_back_dispatch_keeps_wait)
{
	struct iopa_sub_info info;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 32));
	sleep_ms(60);		/* the measured wait itself */
	ASSERT_EQ(-EFAULT, fetch_into_read_only(self->wrk));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(0, my_info(self, &info));
	EXPECT_EQ(1ULL, hist_sum(info.metrics.wait_hist));
	EXPECT_LE(60000ULL, (unsigned long long)info.metrics.wait_us);
}

/*
 * The listing's pid of a submitter whose creator exited and was reaped
 * is 0, not the old number, which may be another process's by now
 * (Core round 2, item 7).  The creator's is its own while it lives.
 */
TEST_F(metrics, pid_of_exited_creator_is_zero)
{
	struct iopa_sub_info info[4];
	struct iopa_list l = {
		.subs = (uintptr_t)info, .nr = 4,
		.entry_size = sizeof(info[0]),
	};
	int sv[2], sfd = -1, st;
	bool found = false;
	uint32_t i;
	pid_t pid;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = iopa_submitter_create(self->ctx, 2);

		_exit(fd < 0 || iopa_send_fd(sv[1], fd) ? 1 : 0);
	}
	sfd = iopa_recv_fd(sv[0]);
	ASSERT_LE(0, sfd);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_TRUE(WIFEXITED(st));
	ASSERT_EQ(0, WEXITSTATUS(st));
	ASSERT_EQ(0, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	for (i = 0; i < l.filled; i++) {
		if (info[i].sub_id == 1) {
			EXPECT_EQ(getpid(), info[i].pid);
		} else {
			EXPECT_EQ(0, info[i].pid);
			found = true;
		}
	}
	EXPECT_TRUE(found);
	close(sfd);
	close(sv[0]);
	close(sv[1]);
}

/* A cancelled job is not a failure, and has no service time. */
TEST_F(metrics, cancel_is_not_a_failure)
{
	struct iopa_sub_info info;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	ASSERT_EQ(1, iopa_cancel(self->sub, 7, 0));
	ASSERT_EQ(0, my_info(self, &info));
	EXPECT_EQ(1ULL, info.stats.cancelled);
	EXPECT_EQ(0ULL, info.metrics.failed);
	EXPECT_EQ(0ULL, hist_sum(info.metrics.svc_hist));
	EXPECT_EQ(0ULL, hist_sum(info.metrics.wait_hist));
}

/* A job held 30 ms: its service time in the bucket of at least 30 ms. */
TEST_F(metrics, service_time_bucket)
{
	struct iopa_sub_info info;
	struct iopa_work w;
	int64_t t0, t1;
	int b;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	t0 = iopa_now_ns();
	close(w.fd);
	sleep_ms(30);		/* the measured service time itself */
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	t1 = iopa_now_ns();
	ASSERT_EQ(0, my_info(self, &info));
	b = hist_only(info.metrics.svc_hist);
	EXPECT_LE(bucket_of(30000), b);
	EXPECT_GE(bucket_of((uint64_t)(t1 - t0) / 1000 + 1000), b);
	EXPECT_LE(30000ULL, info.metrics.svc_us);
}

/* A job left queued 30 ms: its queue wait in the bucket of >= 30 ms. */
TEST_F(metrics, queue_wait_bucket)
{
	struct iopa_sub_info info;
	struct iopa_work w;
	int b;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	sleep_ms(30);		/* the measured wait itself */
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, &w));
	ASSERT_EQ(0, my_info(self, &info));
	b = hist_only(info.metrics.wait_hist);
	EXPECT_LE(bucket_of(30000), b);
	EXPECT_GT(IOPA_HIST_BUCKETS - 1, b);
	EXPECT_LE(30000ULL, info.metrics.wait_us);
}

/*
 * The counters add up over cycles, where GET_STATE's completions is the
 * last cycle's only.
 */
TEST_F_TIMEOUT(metrics, cumulative_over_cycles, 30)
{
	struct iopa_sub_info info;
	struct iopa_state st;
	uint64_t cycles;
	int64_t end;
	int i;

	ASSERT_EQ(10, iopa_submit_many(self->sub, self->file, 0, 10));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	cycles = st.cycles;
	/* Until a cycle ends (a pinned limit's cycles still measure). */
	end = iopa_now_ns() + IOPA_MS_NS(IOPA_LONG_MS);
	while (st.cycles == cycles && iopa_now_ns() < end) {
		sleep_ms(10);
		ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	}
	ASSERT_LT(cycles, st.cycles);
	ASSERT_EQ(10, iopa_submit_many(self->sub, self->file, 10, 10));
	for (i = 0; i < 10; i++)
		ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(0, my_info(self, &info));
	EXPECT_EQ(20ULL, hist_sum(info.metrics.svc_hist));
	EXPECT_EQ(20ULL, hist_sum(info.metrics.wait_hist));
	EXPECT_GE(10U, info.state.completions);
}

/* O_DIRECT reads of a block device in the worker: exactly its bytes. */
TEST_F(metrics, io_bytes_are_the_workers_reads)
{
	struct iopa_sub_info info;
	struct iopa_work w;
	void *buf;
	int dev, i, k;

	if (access(NULLB_DEV, F_OK)) {
		if (iopa_run_cmd("modprobe null_blk nr_devices=1") != 0)
			SKIP(return, "no null_blk");
		self->nullb_loaded = true;
	}
	dev = open(NULLB_DEV, O_RDONLY | O_DIRECT | O_CLOEXEC);
	if (dev < 0)
		SKIP(return, "cannot open " NULLB_DEV " O_DIRECT: %d", -errno);
	ASSERT_EQ(0, posix_memalign(&buf, BLOCK, BLOCK));
	ASSERT_EQ(8, iopa_submit_many(self->sub, dev, 0, 8));
	close(dev);
	for (i = 0; i < 8; i++) {
		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
		for (k = 0; k < 4; k++)
			ASSERT_EQ(BLOCK, pread(w.fd, buf, BLOCK,
					       (off_t)(i * 4 + k) * BLOCK));
		close(w.fd);
		ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	}
	free(buf);
	ASSERT_EQ(0, my_info(self, &info));
	EXPECT_EQ(8ULL * 4 * BLOCK, info.metrics.io_bytes);
}

/* A pinned limit has no knee: nothing is probed. */
TEST_F(metrics, pinned_has_no_knee)
{
	struct iopa_sub_info info;

	ASSERT_EQ(0, my_info(self, &info));
	EXPECT_EQ(0U, info.metrics.knee);
}

/* The submitter's cgroup is its creator's: the directory's inode. */
TEST_F(metrics, cgroup_is_the_creators)
{
	struct iopa_sub_info info[4];
	struct iopa_list l = {
		.subs = (uintptr_t)info, .nr = 4, .entry_size = sizeof(info[0]),
	};
	int go[2], ready[2], st;
	struct stat cg;
	uint32_t i;
	char c = 0;
	pid_t pid;
	bool found = false;

	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		if (mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL))
			SKIP(return, "no cgroup v2 (%s)", strerror(errno));
		self->cg_mounted = true;
	}
	rmdir(CG);
	ASSERT_EQ(0, mkdir(CG, 0755));
	self->cg_made = true;
	ASSERT_EQ(0, stat(CG, &cg));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char me[16];
		int s;

		snprintf(me, sizeof(me), "%d", getpid());
		if (iopa_write_str(CG "/cgroup.procs", me))
			_exit(70);
		s = iopa_submitter_create(self->ctx, 2);
		if (s < 0)
			_exit(71);
		if (iopa_write_full(ready[1], &c, 1) ||
		    iopa_read_full(go[0], &c, 1))
			_exit(72);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(0, iopa_read_full(ready[0], &c, 1));
	ASSERT_EQ(0, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	for (i = 0; i < l.filled; i++) {
		if (info[i].pid != pid)
			continue;
		found = true;
		EXPECT_EQ((uint64_t)cg.st_ino, info[i].metrics.cgroup_id);
	}
	EXPECT_TRUE(found);
	ASSERT_EQ(0, iopa_write_full(go[1], &c, 1));
	close(go[1]);
	close(ready[0]);
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

TEST_HARNESS_MAIN
