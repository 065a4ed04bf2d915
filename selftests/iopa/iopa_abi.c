// SPDX-License-Identifier: GPL-2.0
/*
 * iopa ABI tests: every command's success path and every error path of
 * the errno table in the spec, one behaviour per test.
 */
#include "iopa_test.h"

FIXTURE(abi) {
	int ctx;	/* context */
	int sub;	/* submitter, limit 16 */
	int wrk;	/* worker */
	int file;	/* job file, O_RDWR */
	char path[64];
};

FIXTURE_SETUP(abi)
{
	self->ctx = self->sub = self->wrk = self->file = -1;
	self->path[0] = 0;

	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	self->sub = iopa_submitter_create(self->ctx, 16);
	ASSERT_LE(0, self->sub);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->file = iopa_job_file(self->path, O_RDWR);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(abi)
{
	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	iopa_close(&self->file);
	if (self->path[0])
		unlink(self->path);
}

/* A page that is mapped and then unmapped: a pointer to it faults. */
static void *unmapped_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, pg, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	munmap(p, pg);
	return p;
}

/* ---- GET_FEATURES ------------------------------------------------------ */

TEST_F(abi, get_features)
{
	int fds[] = { self->ctx, self->sub, self->wrk };
	unsigned int i;

	for (i = 0; i < IOPA_ARRAY_SIZE(fds); i++) {
		struct iopa_features f;

		memset(&f, 0xa5, sizeof(f));
		ASSERT_EQ(0, iopa_ioctl(fds[i], IOPA_IOC_GET_FEATURES, &f));
		EXPECT_EQ((__u32)IOPA_ABI_VERSION, f.abi_version);
		EXPECT_EQ(IOPA_FEAT_IOCTL | IOPA_FEAT_POLL | IOPA_FEAT_ADAPTIVE |
			  IOPA_FEAT_URING_CMD | IOPA_FEAT_ORDER |
			  IOPA_FEAT_LIST | IOPA_FEAT_BRACKET | IOPA_FEAT_TIMES |
			  IOPA_FEAT_SHARE | IOPA_FEAT_LEASE |
			  IOPA_FEAT_BORROW | IOPA_FEAT_BATCH |
			  IOPA_FEAT_URING_BATCH | IOPA_FEAT_METRICS |
			  IOPA_FEAT_ADMIN | IOPA_FEAT_TURNS,
			  f.features);
		EXPECT_EQ((__u32)IOPA_BATCH_MAX, f.batch_max);
		EXPECT_EQ((__u32)IOPA_LIMIT_MAX, f.limit_max);
		EXPECT_EQ((__u32)IOPA_WORKER_MAX_JOBS, f.worker_max_jobs);
		/* reserved fields are zero in the answer, not left as garbage */
		EXPECT_EQ(0U, f.reserved0);
		EXPECT_EQ(0U, f.reserved1);
		EXPECT_EQ(0ULL, f.reserved[0]);
		EXPECT_EQ(0ULL, f.reserved[3]);
	}
}

/* ---- SUBMITTER_CREATE / WORKER_CREATE ---------------------------------- */

/*
 * The limit a new adaptive submitter starts at: sysfs init_limit, or 30%
 * of the online CPUs rounded up, at least 1, at most max_limit.  -errno
 * if the tunables cannot be read.
 */
/* modinfo's version, PACKAGE_VERSION of dkms.conf, in sysfs. */
TEST_F(abi, module_version)
{
	char buf[64] = { 0 };
	int fd = open("/sys/module/iopa/version", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	ASSERT_LE(0, fd);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ASSERT_LT(1, n);
	EXPECT_EQ('\n', buf[n - 1]);
	EXPECT_TRUE(buf[0] >= '0' && buf[0] <= '9') TH_LOG("version '%s'", buf);
	EXPECT_EQ(NULL, strstr(buf, "unknown"));
}

TEST_F(abi, submitter_create_ok)
{
	int s1, s2, s3, init;

	s1 = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s1);
	EXPECT_EQ(1, iopa_cloexec(s1));
	/* limit 0 = adaptive, starting at the sysfs init_limit default */
	init = (int)iopa_expected_init_limit(iopa_sysfs_default_policy());
	ASSERT_LT(0, init);
	EXPECT_EQ(init, iopa_get_limit(s1));
	EXPECT_EQ(0, iopa_get_limit_flags(s1));

	s2 = iopa_submitter_create(self->ctx, 7);
	ASSERT_LE(0, s2);
	EXPECT_EQ(7, iopa_get_limit(s2));
	EXPECT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(s2));

	/* a fixed limit is not capped by max_limit: it holds as given */
	s3 = iopa_submitter_create(self->ctx, IOPA_LIMIT_MAX);
	ASSERT_LE(0, s3);
	EXPECT_EQ(IOPA_LIMIT_MAX, iopa_get_limit(s3));
	EXPECT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(s3));
	EXPECT_NE(s1, s2);
	close(s1);
	close(s2);
	close(s3);
}

TEST_F(abi, submitter_create_bad_flags)
{
	struct iopa_submitter_create c = { .flags = 1 };

	ASSERT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_SUBMITTER_CREATE, &c));
	c.flags = 1U << 31;
	ASSERT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_SUBMITTER_CREATE, &c));
}

TEST_F(abi, submitter_create_reserved)
{
	unsigned int i;

	for (i = 0; i < IOPA_ARRAY_SIZE(((struct iopa_submitter_create *)0)->reserved); i++) {
		struct iopa_submitter_create c = { .limit = 1 };

		c.reserved[i] = 1ULL << (i * 20);
		EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_SUBMITTER_CREATE, &c))
			TH_LOG("reserved[%u] != 0 accepted", i);
	}
}

TEST_F(abi, submitter_create_limit_too_big)
{
	struct iopa_stats st;

	ASSERT_EQ(-EINVAL, iopa_submitter_create(self->ctx, IOPA_LIMIT_MAX + 1));
	ASSERT_EQ(-EINVAL, iopa_submitter_create(self->ctx, UINT32_MAX));
	/* the failures did not leave half-created submitters behind */
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1U, st.nr_submitters);
}

TEST_F(abi, worker_create_ok)
{
	struct iopa_stats st;
	int w = iopa_worker_create(self->ctx);

	ASSERT_LE(0, w);
	EXPECT_EQ(1, iopa_cloexec(w));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(2U, st.nr_workers);
	close(w);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1U, st.nr_workers);
}

TEST_F(abi, worker_create_bad_flags_reserved)
{
	struct iopa_worker_create c;
	struct iopa_stats st;
	unsigned int i;

	memset(&c, 0, sizeof(c));
	c.flags = IOPA_WORKER_F_MASK << 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_WORKER_CREATE, &c));
	memset(&c, 0, sizeof(c));
	c.reserved0 = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_WORKER_CREATE, &c));
	for (i = 0; i < IOPA_ARRAY_SIZE(c.reserved); i++) {
		memset(&c, 0, sizeof(c));
		c.reserved[i] = 1;
		EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_WORKER_CREATE, &c))
			TH_LOG("reserved[%u] != 0 accepted", i);
	}
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1U, st.nr_workers);
}

/* ---- SUBMIT ------------------------------------------------------------ */

TEST_F(abi, submit_one)
{
	struct iopa_job j;
	struct iopa_work w1, w2;
	struct iopa_stats st;

	iopa_job_init(&j, self->file, 0xdeadbeefcafeULL);
	j.offset = 12345;
	j.len = 678;
	ASSERT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 2));

	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(2ULL, st.submitted);
	EXPECT_EQ(2ULL, st.pending);

	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w1));
	EXPECT_EQ(0xdeadbeefcafeULL, w1.user_data);
	EXPECT_EQ(12345ULL, w1.offset);
	EXPECT_EQ(678ULL, w1.len);
	EXPECT_EQ(0U, w1.flags);
	EXPECT_LE(1ULL, w1.job_id);
	EXPECT_LE(0, w1.fd);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w2));
	EXPECT_EQ(2ULL, w2.user_data);
	EXPECT_LT(w1.job_id, w2.job_id);
	close(w1.fd);
	close(w2.fd);
}

TEST_F(abi, submit_bad_fd)
{
	int closed = dup(self->file);
	struct iopa_stats st;

	ASSERT_LE(0, closed);
	close(closed);
	EXPECT_EQ(-EBADF, iopa_submit_one(self->sub, -1, 1));
	EXPECT_EQ(-EBADF, iopa_submit_one(self->sub, closed, 1));
	EXPECT_EQ(-EBADF, iopa_submit_one(self->sub, 1 << 20, 1));
	EXPECT_EQ(-EBADF, iopa_submit_one(self->sub, INT32_MIN, 1));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
}

TEST_F(abi, submit_bad_job_flags)
{
	EXPECT_EQ(-EINVAL, iopa_submit_one_flags(self->sub, self->file, 1,
						 IOPA_JOB_F_MASK << 1, 0));
	EXPECT_EQ(-EINVAL, iopa_submit_one_flags(self->sub, self->file, 1,
						 1U << 31, 0));
	/* the defined flag is accepted */
	EXPECT_EQ(1, iopa_submit_one_flags(self->sub, self->file, 1,
					   IOPA_JOB_F_NO_REQUEUE, 0));
}

TEST_F(abi, submit_job_reserved)
{
	struct iopa_job j;

	iopa_job_init(&j, self->file, 1);
	j.reserved = 1;
	ASSERT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1, 0));
	j.reserved = 1ULL << 63;
	ASSERT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1, 0));
}

TEST_F(abi, submit_bad_flags_reserved)
{
	struct iopa_job j;
	struct iopa_submit s;
	struct iopa_stats st;

	iopa_job_init(&j, self->file, 1);
	memset(&s, 0, sizeof(s));
	s.jobs = (uintptr_t)&j;
	s.nr = 1;
	s.flags = IOPA_SUBMIT_F_MASK << 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SUBMIT, &s));
	s.flags = 0;
	s.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SUBMIT, &s));
	s.reserved[0] = 0;
	s.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SUBMIT, &s));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
}

TEST_F(abi, submit_range_overflow)
{
	const uint64_t max = (1ULL << 63) - 1;
	struct iopa_job j;

	iopa_job_init(&j, self->file, 1);
	/* offset + len == 2^63 - 1 is the largest accepted end */
	j.offset = max;
	j.len = 0;
	EXPECT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	j.offset = 1ULL << 62;
	j.len = (1ULL << 62) - 1;
	EXPECT_EQ(1, iopa_submit(self->sub, &j, 1, 0));
	/* one byte more: rejected */
	j.offset = max;
	j.len = 1;
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1, 0));
	j.offset = 1ULL << 62;
	j.len = 1ULL << 62;
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1, 0));
	/* u64 wrap-around must not sneak through */
	j.offset = UINT64_MAX;
	j.len = 2;
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1, 0));
	j.offset = 0;
	j.len = UINT64_MAX;
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1, 0));
	j.offset = 1ULL << 63;
	j.len = 0;
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1, 0));
}

TEST_F(abi, submit_zero_count)
{
	struct iopa_job j;

	iopa_job_init(&j, self->file, 1);
	ASSERT_EQ(-EINVAL, iopa_submit(self->sub, &j, 0, 0));
	/* even with a NULL array, nr == 0 is EINVAL, not EFAULT or 0 */
	ASSERT_EQ(-EINVAL, iopa_submit(self->sub, NULL, 0, 0));
}

TEST_F(abi, submit_huge_count)
{
	struct iopa_job j;
	struct iopa_stats st;

	iopa_job_init(&j, self->file, 1);
	/* checked before touching the (too short) array */
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, IOPA_BATCH_MAX + 1, 0));
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, UINT32_MAX, 0));
	EXPECT_EQ(-EINVAL, iopa_submit(self->sub, &j, 1U << 31, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
}

TEST_F(abi, submit_batch_max)
{
	struct iopa_job *jobs = calloc(IOPA_BATCH_MAX, sizeof(*jobs));
	struct iopa_stats st;
	int i;

	ASSERT_NE(NULL, jobs);
	for (i = 0; i < IOPA_BATCH_MAX; i++)
		iopa_job_init(&jobs[i], self->file, i);
	ASSERT_EQ(IOPA_BATCH_MAX, iopa_submit(self->sub, jobs, IOPA_BATCH_MAX, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ((__u64)IOPA_BATCH_MAX, st.submitted);
	EXPECT_EQ((__u64)IOPA_BATCH_MAX, st.pending);
	free(jobs);
}

TEST_F(abi, submit_null_jobs)
{
	struct iopa_stats st;

	ASSERT_EQ(-EFAULT, iopa_submit(self->sub, NULL, 1, 0));
	ASSERT_EQ(-EFAULT, iopa_ioctl(self->sub, IOPA_IOC_SUBMIT, NULL));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
}

TEST_F(abi, submit_unmapped_jobs)
{
	void *p = unmapped_page();
	struct iopa_stats st;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(-EFAULT, iopa_submit(self->sub, p, 1, 0));
	ASSERT_EQ(-EFAULT, iopa_submit(self->sub, p, 3, 0));
	ASSERT_EQ(-EFAULT, iopa_ioctl(self->sub, IOPA_IOC_SUBMIT, p));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
}

/*
 * Descriptors running into an unmapped page: those wholly before it are
 * accepted, SUBMIT returns their count (the kernel copies them in chunks:
 * a fault inside one still takes what came before it).
 */
TEST_F(abi, submit_fault_midway_takes_those_before)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct iopa_job *jobs;
	struct iopa_stats st;
	char *p;
	int i;

	p = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, munmap(p + pg, pg));
	/* the third descriptor straddles the end of the mapped page */
	jobs = (struct iopa_job *)(p + pg - 2 * sizeof(*jobs) - 8);
	for (i = 0; i < 2; i++)
		iopa_job_init(&jobs[i], self->file, 10 + i);
	ASSERT_EQ(2, iopa_submit(self->sub, jobs, 5, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(2ULL, st.submitted);
	munmap(p, pg);
}

TEST_F(abi, submit_wrong_file_type)
{
	struct io_uring_params up;
	int pfd[2], sv[2], efd, devnull, other_ctx, ep, ring;
	struct iopa_stats st;

	ASSERT_EQ(0, pipe(pfd));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
	efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, efd);
	devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, devnull);
	other_ctx = iopa_open_ctx();
	ASSERT_LE(0, other_ctx);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_LE(0, ep);
	memset(&up, 0, sizeof(up));
	ring = syscall(SYS_io_uring_setup, 1, &up);	/* may be disabled */

	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, pfd[0], 1));
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, pfd[1], 1));
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, sv[0], 1));
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, efd, 1));
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, devnull, 1));
	/* iopa fds themselves: no loops through the broker */
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, self->ctx, 1));
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, other_ctx, 1));
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, self->sub, 1));
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, self->wrk, 1));
	/* fds that can hold other files: cycles */
	EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, ep, 1));
	if (ring >= 0) {
		EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, ring, 1));
		close(ring);
	}

	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
	close(ep);
	close(pfd[0]);
	close(pfd[1]);
	close(sv[0]);
	close(sv[1]);
	close(efd);
	close(devnull);
	close(other_ctx);
}

TEST_F(abi, submit_dir_and_blockdev)
{
	static const char * const blkdevs[] = {
		"/dev/nullb0", "/dev/loop0", "/dev/vda", "/dev/sda",
		"/dev/ram0", "/dev/nvme0n1",
	};
	struct iopa_work w;
	struct stat sb;
	unsigned int i;
	int dir, blk = -1;

	dir = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_LE(0, dir);
	ASSERT_EQ(1, iopa_submit_one(self->sub, dir, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(0, fstat(w.fd, &sb));
	EXPECT_TRUE(S_ISDIR(sb.st_mode));
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	close(dir);

	for (i = 0; i < IOPA_ARRAY_SIZE(blkdevs) && blk < 0; i++) {
		if (stat(blkdevs[i], &sb) || !S_ISBLK(sb.st_mode))
			continue;
		blk = open(blkdevs[i], O_RDONLY | O_CLOEXEC);
	}
	if (blk < 0)
		SKIP(return, "no block device to submit (directory part passed)");
	ASSERT_EQ(1, iopa_submit_one(self->sub, blk, 2));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(0, fstat(w.fd, &sb));
	EXPECT_TRUE(S_ISBLK(sb.st_mode));
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	close(blk);
}

/*
 * Files of pseudo filesystems are refused even where they claim S_IFREG
 * (pidfs, nsfs since their inodes became "stashed" regular files): a
 * namespace file or pidfd is not data, and could pin objects in cycles.
 */
TEST_F(abi, submit_pseudo_fs_files)
{
	struct iopa_stats st;
	struct stat sb;
	int nsfd, pidfd, tested = 0;

	nsfd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (nsfd >= 0) {
		ASSERT_EQ(0, fstat(nsfd, &sb));
		TH_LOG("nsfs file mode %#o", sb.st_mode);
		EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, nsfd, 1));
		close(nsfd);
		tested++;
	}
	pidfd = syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd >= 0) {
		ASSERT_EQ(0, fstat(pidfd, &sb));
		TH_LOG("pidfd mode %#o", sb.st_mode);
		EXPECT_EQ(-EINVAL, iopa_submit_one(self->sub, pidfd, 1));
		close(pidfd);
		tested++;
	}
	if (!tested)
		SKIP(return, "neither /proc/self/ns/net nor pidfd_open available");
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
}

/*
 * A memfd is a regular file (S_IFREG, on the kernel's internal shmem
 * mount): the spec accepts regular files, and it works like any other.
 */
TEST_F(abi, submit_memfd_regular_file)
{
	struct iopa_work w;
	struct stat sb;
	int mfd;

	mfd = memfd_create("iopa-job", MFD_CLOEXEC);
	ASSERT_LE(0, mfd);
	ASSERT_EQ(0, ftruncate(mfd, 8192));
	ASSERT_EQ(0, fstat(mfd, &sb));
	ASSERT_TRUE(S_ISREG(sb.st_mode));
	ASSERT_EQ(1, iopa_submit_one(self->sub, mfd, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(0, fstat(w.fd, &sb));
	EXPECT_EQ(8192, sb.st_size);
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	close(mfd);
}

TEST_F(abi, submit_partial_batch)
{
	struct iopa_job jobs[3];
	struct iopa_work w;
	struct iopa_stats st;
	int i;

	for (i = 0; i < 3; i++)
		iopa_job_init(&jobs[i], self->file, 100 + i);

	/* job 1 of 3 bad: the first one is accepted, 1 is returned */
	jobs[1].flags = 0x80;
	ASSERT_EQ(1, iopa_submit(self->sub, jobs, 3, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.submitted);
	EXPECT_EQ(1ULL, st.pending);
	/* only job 0 was queued; jobs 1 and 2 were not */
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(100ULL, w.user_data);
	close(w.fd);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));

	/* a bad fd in job 2: two accepted */
	jobs[1].flags = 0;
	jobs[2].fd = -1;
	ASSERT_EQ(2, iopa_submit(self->sub, jobs, 3, 0));

	/* job 0 bad: its errno, nothing accepted */
	jobs[0].reserved = 1;
	jobs[2].fd = self->file;
	ASSERT_EQ(-EINVAL, iopa_submit(self->sub, jobs, 3, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(3ULL, st.submitted);
}

/* ---- REAP -------------------------------------------------------------- */

TEST_F(abi, reap_empty_eagain)
{
	struct iopa_cqe c[4];

	ASSERT_EQ(-EAGAIN, iopa_reap_nb(self->sub, c, 4));
	/* a pending / running job is not a completion */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(-EAGAIN, iopa_reap_nb(self->sub, c, 4));
}

TEST_F(abi, reap_wait_timeout)
{
	struct iopa_cqe c;
	int64_t t0 = iopa_now_ns(), dt;

	ASSERT_EQ(-ETIMEDOUT, iopa_reap(self->sub, &c, 1, IOPA_REAP_F_WAIT,
					IOPA_MS_NS(50)));
	dt = iopa_now_ns() - t0;
	EXPECT_LE(IOPA_MS_NS(45), dt);
	EXPECT_GT(IOPA_MS_NS(5000), dt);
}

TEST_F(abi, reap_efault_keeps_completion)
{
	void *bad = unmapped_page();
	struct iopa_cqe c;
	struct iopa_work w;

	ASSERT_NE(NULL, bad);
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 77));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 5, &w));

	ASSERT_EQ(-EFAULT, iopa_reap_nb(self->sub, bad, 1));
	ASSERT_EQ(-EFAULT, iopa_reap(self->sub, bad, 1, IOPA_REAP_F_WAIT, IOPA_LONG_NS));
	ASSERT_EQ(-EFAULT, iopa_reap_nb(self->sub, NULL, 1));

	/* the completion is still there, exactly once */
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(77ULL, c.user_data);
	EXPECT_EQ(w.job_id, c.job_id);
	EXPECT_EQ(5, c.res);
	EXPECT_EQ(0U, c.flags);
	ASSERT_EQ(-EAGAIN, iopa_reap_nb(self->sub, &c, 1));
}

TEST_F(abi, reap_bad_nr)
{
	struct iopa_cqe c;
	struct iopa_work w;

	EXPECT_EQ(-EINVAL, iopa_reap_nb(self->sub, &c, 0));
	EXPECT_EQ(-EINVAL, iopa_reap_nb(self->sub, &c, IOPA_BATCH_MAX + 1));
	EXPECT_EQ(-EINVAL, iopa_reap_nb(self->sub, &c, UINT32_MAX));
	/* also with a completion waiting, which stays */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, &w));
	EXPECT_EQ(-EINVAL, iopa_reap_nb(self->sub, &c, 0));
	EXPECT_EQ(-EINVAL, iopa_reap(self->sub, &c, IOPA_BATCH_MAX + 1,
				     IOPA_REAP_F_WAIT, IOPA_LONG_NS));
	EXPECT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
}

TEST_F(abi, reap_bad_flags_reserved)
{
	struct iopa_cqe c;
	struct iopa_reap r;

	memset(&r, 0, sizeof(r));
	r.cqes = (uintptr_t)&c;
	r.nr = 1;
	r.flags = IOPA_REAP_F_MASK << 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_REAP, &r));
	r.flags = 0;
	r.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_REAP, &r));
	r.reserved[0] = 0;
	r.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_REAP, &r));
}

TEST_F(abi, reap_batch_results)
{
	struct iopa_cqe c[8];
	int seen[5] = { 0 };
	int i, n1, n2;

	ASSERT_EQ(5, iopa_submit_many(self->sub, self->file, 0, 5));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, iopa_run_one(self->wrk, -1000 - i, NULL));
	}

	n1 = iopa_reap_nb(self->sub, c, 3);
	ASSERT_EQ(3, n1);
	n2 = iopa_reap_nb(self->sub, c + 3, 8 - 3);
	ASSERT_EQ(2, n2);
	for (i = 0; i < 5; i++) {
		ASSERT_GT(5ULL, c[i].user_data);
		seen[c[i].user_data]++;
		/* res travels from COMPLETE to the cqe unchanged */
		EXPECT_EQ(-1000 - (int)c[i].user_data, c[i].res);
		EXPECT_EQ(0U, c[i].flags);
	}
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(1, seen[i]);
	}
	ASSERT_EQ(-EAGAIN, iopa_reap_nb(self->sub, c, 8));
}

struct reap_thread {
	int sub;
	int efd;
	int rc;
	struct iopa_cqe cqe;
};

static void *reap_thread_fn(void *arg)
{
	struct reap_thread *t = arg;

	t->rc = iopa_reap(t->sub, &t->cqe, 1, IOPA_REAP_F_WAIT, IOPA_THREAD_NS);
	iopa_efd_signal(t->efd);
	return NULL;
}

TEST_F_TIMEOUT(abi, reap_wait_wakes, 60)
{
	struct reap_thread t = { .sub = self->sub, .rc = 1 };
	pthread_t th;

	t.efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, t.efd);
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 9));
	ASSERT_EQ(0, pthread_create(&th, NULL, reap_thread_fn, &t));
	/* nothing to reap yet: the reaper stays blocked */
	EXPECT_EQ(0, iopa_wait_readable(t.efd, IOPA_BLOCKED_MS));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 3, NULL));
	/* the completion wakes it (10 s is an upper bound) */
	EXPECT_EQ(1, iopa_wait_readable(t.efd, IOPA_LONG_MS));
	iopa_thread_finish(th, t.efd);
	EXPECT_EQ(1, t.rc);
	EXPECT_EQ(9ULL, t.cqe.user_data);
	EXPECT_EQ(3, t.cqe.res);
	close(t.efd);
}

TEST_F(abi, reap_wait_eintr)
{
	struct iopa_sigger sg;
	struct iopa_cqe c;
	int r;

	ASSERT_EQ(0, iopa_install_nop_handler(SIGUSR1));
	ASSERT_EQ(0, iopa_sigger_start(&sg, SIGUSR1, -1, 0));
	r = iopa_reap(self->sub, &c, 1, IOPA_REAP_F_WAIT, IOPA_LONG_NS);
	iopa_sigger_stop(&sg);
	ASSERT_EQ(-EINTR, r);
}

/* ---- CANCEL ------------------------------------------------------------ */

TEST_F(abi, cancel_pending)
{
	struct iopa_cqe c;
	struct iopa_work w;
	struct iopa_stats st;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	ASSERT_EQ(1, iopa_cancel(self->sub, 7, 0));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(7ULL, c.user_data);
	EXPECT_EQ(-ECANCELED, c.res);
	EXPECT_TRUE(!!(c.flags & IOPA_CQE_F_CANCELED));
	EXPECT_FALSE(!!(c.flags & IOPA_CQE_F_WORKER_DIED));
	EXPECT_LE(1ULL, c.job_id);
	/* a cancelled job is never dispatched */
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(0ULL, st.dispatched);
}

TEST_F(abi, cancel_oldest_then_all)
{
	struct iopa_job jobs[4];
	struct iopa_cqe c[4];
	struct iopa_work w;
	uint64_t cancelled_id;
	int i;

	for (i = 0; i < 4; i++)
		iopa_job_init(&jobs[i], self->file, 7);
	jobs[3].user_data = 8;
	ASSERT_EQ(4, iopa_submit(self->sub, jobs, 4, 0));

	/* without IOPA_CANCEL_F_ALL: only the oldest match */
	ASSERT_EQ(1, iopa_cancel(self->sub, 7, 0));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, c, 4));
	cancelled_id = c[0].job_id;
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(7ULL, w.user_data);
	EXPECT_LT(cancelled_id, w.job_id);

	/* with IOPA_CANCEL_F_ALL: every pending match (not the running one) */
	ASSERT_EQ(1, iopa_cancel(self->sub, 7, IOPA_CANCEL_F_ALL));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, c, 4));
	EXPECT_EQ(-ECANCELED, c[0].res);
	/* the other user_data is untouched */
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(8ULL, w.user_data);
}

TEST_F(abi, cancel_all_counts)
{
	struct iopa_job jobs[5];
	struct iopa_cqe c[8];
	int i;

	for (i = 0; i < 5; i++)
		iopa_job_init(&jobs[i], self->file, 42);
	ASSERT_EQ(5, iopa_submit(self->sub, jobs, 5, 0));
	ASSERT_EQ(5, iopa_cancel(self->sub, 42, IOPA_CANCEL_F_ALL));
	ASSERT_EQ(5, iopa_reap_nb(self->sub, c, 8));
	for (i = 0; i < 5; i++) {
		EXPECT_EQ(-ECANCELED, c[i].res);
		EXPECT_TRUE(!!(c[i].flags & IOPA_CQE_F_CANCELED));
	}
	ASSERT_EQ(-ENOENT, iopa_cancel(self->sub, 42, IOPA_CANCEL_F_ALL));
}

TEST_F(abi, cancel_enoent)
{
	ASSERT_EQ(-ENOENT, iopa_cancel(self->sub, 7, 0));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 8));
	ASSERT_EQ(-ENOENT, iopa_cancel(self->sub, 7, 0));
	ASSERT_EQ(-ENOENT, iopa_cancel(self->sub, 7, IOPA_CANCEL_F_ALL));
}

TEST_F(abi, cancel_running_ealready)
{
	struct iopa_work w;
	struct iopa_cqe c;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	ASSERT_EQ(-EALREADY, iopa_cancel(self->sub, 7, 0));
	ASSERT_EQ(-EALREADY, iopa_cancel(self->sub, 7, IOPA_CANCEL_F_ALL));
	/* the running job is unaffected */
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 11));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(11, c.res);
	EXPECT_EQ(0U, c.flags);
	/* an ended, unreaped-then-reaped job does not match any more */
	ASSERT_EQ(-ENOENT, iopa_cancel(self->sub, 7, 0));
}

TEST_F(abi, cancel_bad_flags)
{
	struct iopa_cancel c = { .user_data = 7 };

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 7));
	c.flags = IOPA_CANCEL_F_MASK << 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_CANCEL, &c));
	c.flags = 0;
	c.reserved0 = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_CANCEL, &c));
	/* nothing was cancelled by the bad calls */
	EXPECT_EQ(1, iopa_cancel(self->sub, 7, 0));
}

/* ---- SET_LIMIT / GET_LIMIT --------------------------------------------- */

TEST_F(abi, limit_roundtrip)
{
	ASSERT_EQ(16, iopa_get_limit(self->sub));
	ASSERT_EQ(0, iopa_set_limit(self->sub, 5));
	ASSERT_EQ(5, iopa_get_limit(self->sub));
	ASSERT_EQ(0, iopa_set_limit(self->sub, 1));
	ASSERT_EQ(1, iopa_get_limit(self->sub));
	ASSERT_EQ(0, iopa_set_limit(self->sub, IOPA_LIMIT_MAX));
	ASSERT_EQ(IOPA_LIMIT_MAX, iopa_get_limit(self->sub));
}

TEST_F(abi, limit_invalid)
{
	struct iopa_limit l;

	ASSERT_EQ(0, iopa_set_limit(self->sub, 5));
	EXPECT_EQ(-EINVAL, iopa_set_limit(self->sub, IOPA_LIMIT_MAX + 1));
	EXPECT_EQ(-EINVAL, iopa_set_limit(self->sub, UINT32_MAX));
	memset(&l, 0, sizeof(l));
	l.limit = 3;
	l.flags = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_LIMIT, &l));
	l.flags = 0;
	l.reserved[2] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_LIMIT, &l));
	/* the old limit stays, still fixed */
	EXPECT_EQ(5, iopa_get_limit(self->sub));
	EXPECT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(self->sub));
}

/* Since IOPA_FEAT_ADAPTIVE, 0 is no error: it means "adapt again". */
TEST_F(abi, limit_zero_adapts)
{
	ASSERT_EQ(0, iopa_set_limit(self->sub, 5));
	ASSERT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(self->sub));
	ASSERT_EQ(0, iopa_set_limit(self->sub, 0));
	EXPECT_EQ(0, iopa_get_limit_flags(self->sub));
	/* adapting resumes from the limit in force */
	EXPECT_EQ(5, iopa_get_limit(self->sub));
	/* and a number fixes it again */
	ASSERT_EQ(0, iopa_set_limit(self->sub, 4));
	EXPECT_EQ(4, iopa_get_limit(self->sub));
	EXPECT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(self->sub));
}

/* ---- FETCH ------------------------------------------------------------- */

TEST_F(abi, fetch_nonblock_eagain)
{
	struct iopa_work w;
	int next = iopa_next_fd();

	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
	/* no fd was installed */
	ASSERT_EQ(next, iopa_next_fd());
}

TEST_F(abi, fetch_timeout)
{
	struct iopa_work w;
	struct iopa_stats st;
	int64_t t0 = iopa_now_ns(), dt;

	ASSERT_EQ(-ETIMEDOUT, iopa_fetch(self->wrk, &w, 0, IOPA_MS_NS(50)));
	dt = iopa_now_ns() - t0;
	EXPECT_LE(IOPA_MS_NS(45), dt);
	EXPECT_GT(IOPA_MS_NS(5000), dt);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0U, st.nr_waiting);
}

TEST_F(abi, fetch_eintr)
{
	struct iopa_sigger sg;
	struct iopa_work w;
	struct iopa_stats st;
	int r;

	ASSERT_EQ(0, iopa_install_nop_handler(SIGUSR1));
	/* signal once the context reports this thread waiting in FETCH */
	ASSERT_EQ(0, iopa_sigger_start(&sg, SIGUSR1, self->ctx, 1));
	r = iopa_fetch(self->wrk, &w, 0, IOPA_LONG_NS);
	iopa_sigger_stop(&sg);
	EXPECT_EQ(0, sg.wait_rc) TH_LOG("nr_waiting never became 1");
	ASSERT_EQ(-EINTR, r);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0U, st.nr_waiting);
	EXPECT_EQ(0ULL, st.inflight);
}

TEST_F(abi, fetch_done_nonzero)
{
	struct iopa_fetch f;
	struct iopa_work w;
	struct iopa_stats st;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	memset(&f, 0, sizeof(f));
	f.flags = IOPA_FETCH_F_NONBLOCK;
	f.done.job_id = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, &f));
	f.done.job_id = 0;
	f.done.res = -5;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, &f));
	f.done.res = 0;
	f.done.flags = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, &f));
	f.done.flags = 0;
	f.done.reserved = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, &f));
	/* nothing was fetched */
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.inflight);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
}

TEST_F(abi, fetch_bad_flags_reserved)
{
	struct iopa_fetch f;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	memset(&f, 0, sizeof(f));
	f.flags = IOPA_FETCH_F_MASK << 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, &f));
	memset(&f, 0, sizeof(f));
	f.flags = IOPA_FETCH_F_NONBLOCK;
	f.reserved0 = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, &f));
	memset(&f, 0, sizeof(f));
	f.flags = IOPA_FETCH_F_NONBLOCK;
	f.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, &f));
	memset(&f, 0, sizeof(f));
	f.flags = IOPA_FETCH_F_NONBLOCK;
	f.reserved[0] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_COMPLETE_AND_FETCH, &f));
}

TEST_F(abi, fetch_fd_same_file)
{
	struct stat a, b;
	struct iopa_work w;
	int ro, fl;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	ASSERT_LE(0, w.fd);
	EXPECT_NE(self->file, w.fd);
	ASSERT_EQ(0, fstat(self->file, &a));
	ASSERT_EQ(0, fstat(w.fd, &b));
	EXPECT_EQ(a.st_dev, b.st_dev);
	EXPECT_EQ(a.st_ino, b.st_ino);
	EXPECT_EQ(1, iopa_cloexec(w.fd));
	fl = fcntl(w.fd, F_GETFL);
	ASSERT_LE(0, fl);
	EXPECT_EQ(O_RDWR, fl & O_ACCMODE);
	/* the same struct file: the file position is shared */
	ASSERT_EQ(777, lseek(self->file, 777, SEEK_SET));
	EXPECT_EQ(777, lseek(w.fd, 0, SEEK_CUR));
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	/* the kernel never closes the worker's fd */
	EXPECT_EQ(1, iopa_cloexec(w.fd));
	close(w.fd);

	/* the open mode travels too */
	ro = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, ro);
	ASSERT_EQ(1, iopa_submit_one(self->sub, ro, 2));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	fl = fcntl(w.fd, F_GETFL);
	EXPECT_EQ(O_RDONLY, fl & O_ACCMODE);
	EXPECT_EQ(-1, write(w.fd, "x", 1));
	EXPECT_EQ(EBADF, errno);
	close(w.fd);
	close(ro);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
}

TEST_F(abi, fetch_efault_keeps_job)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct iopa_fetch *f;
	struct iopa_work w;
	struct iopa_stats st;
	int next;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 31));
	/* readable but not writable: the copy-out of the work faults */
	f = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f);
	memset(f, 0, sizeof(*f));
	f->flags = IOPA_FETCH_F_NONBLOCK;
	ASSERT_EQ(0, mprotect(f, pg, PROT_READ));
	next = iopa_next_fd();
	ASSERT_EQ(-EFAULT, iopa_ioctl(self->wrk, IOPA_IOC_FETCH, f));
	/* no fd installed, no job held */
	EXPECT_EQ(next, iopa_next_fd());
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(1ULL, st.pending);
	/* the job is still the next one, not marked requeued */
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(31ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	munmap(f, pg);
}

TEST_F(abi, fetch_ebusy)
{
	struct iopa_work held[IOPA_WORKER_MAX_JOBS], w;
	struct iopa_stats st;
	int i, w2;

	ASSERT_EQ(0, iopa_set_limit(self->sub, IOPA_WORKER_MAX_JOBS + 8));
	ASSERT_EQ(IOPA_WORKER_MAX_JOBS + 2,
		  iopa_submit_many(self->sub, self->file, 0, IOPA_WORKER_MAX_JOBS + 2));
	for (i = 0; i < IOPA_WORKER_MAX_JOBS; i++) {
		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &held[i]));
		close(held[i].fd);
	}
	ASSERT_EQ(-EBUSY, iopa_fetch_nb(self->wrk, &w));
	ASSERT_EQ(-EBUSY, iopa_fetch(self->wrk, &w, 0, IOPA_LONG_NS));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ((__u64)IOPA_WORKER_MAX_JOBS, st.inflight);
	EXPECT_EQ(2ULL, st.pending);
	/* another worker is not affected */
	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	ASSERT_EQ(0, iopa_run_one(w2, 0, NULL));
	close(w2);
	/* room again after a complete */
	ASSERT_EQ(0, iopa_complete(self->wrk, held[0].job_id, 0));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
}

TEST_F(abi, fetch_emfile)
{
	struct rlimit old, rl;
	struct iopa_work w;
	struct iopa_stats st;
	int next, r;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 5));
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	next = iopa_next_fd();
	ASSERT_LT(0, next);
	rl = old;
	rl.rlim_cur = next;	/* the fd table is "full": no fd >= next */
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	r = iopa_fetch_nb(self->wrk, &w);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	ASSERT_EQ(-EMFILE, r);
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(1ULL, st.pending);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(5ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	close(w.fd);
}

/*
 * COMPLETE_AND_FETCH whose fetch part fails with EMFILE: the complete
 * part stands, the next job stays queued, no fd is installed.
 */
TEST_F(abi, complete_and_fetch_emfile)
{
	struct rlimit old, rl;
	struct iopa_work w, w2;
	struct iopa_stats st;
	struct iopa_cqe c;
	int next, r;

	ASSERT_EQ(2, iopa_submit_many(self->sub, self->file, 1, 2));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &old));
	next = iopa_next_fd();
	ASSERT_LT(0, next);
	rl = old;
	rl.rlim_cur = next;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	r = iopa_complete_and_fetch(self->wrk, w.job_id, 21, &w2,
				    IOPA_FETCH_F_NONBLOCK, 0);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &old));
	ASSERT_EQ(-EMFILE, r);
	EXPECT_EQ(next, iopa_next_fd());
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(1ULL, st.pending);
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(21, c.res);
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, w.job_id, 0));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w2));
	EXPECT_EQ(2ULL, w2.user_data);
	EXPECT_EQ(0U, w2.flags);
	close(w2.fd);
}

/* The same when writing the work back faults: the completion stands. */
TEST_F(abi, complete_and_fetch_efault)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct iopa_fetch *f;
	struct iopa_work w;
	struct iopa_stats st;
	struct iopa_cqe c;
	int next;

	ASSERT_EQ(2, iopa_submit_many(self->sub, self->file, 1, 2));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	f = mmap(NULL, pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, f);
	memset(f, 0, sizeof(*f));
	f->flags = IOPA_FETCH_F_NONBLOCK;
	f->done.job_id = w.job_id;
	f->done.res = 33;
	ASSERT_EQ(0, mprotect(f, pg, PROT_READ));
	next = iopa_next_fd();
	ASSERT_EQ(-EFAULT, iopa_ioctl(self->wrk, IOPA_IOC_COMPLETE_AND_FETCH, f));
	EXPECT_EQ(next, iopa_next_fd());
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
	EXPECT_EQ(1ULL, st.pending);
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(33, c.res);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(2ULL, w.user_data);
	EXPECT_EQ(0U, w.flags);
	close(w.fd);
	munmap(f, pg);
}

/* ---- COMPLETE ---------------------------------------------------------- */

TEST_F(abi, complete_unknown_enoent)
{
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, 12345, 0));
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, 0, 0));
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, UINT64_MAX, 0));
	/* a pending (not fetched) job is not held by this worker either */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, 1, 0));
	ASSERT_STATS_INVARIANT(self->ctx);
}

TEST_F(abi, complete_twice_enoent)
{
	struct iopa_work w;
	struct iopa_cqe c[2];
	struct iopa_stats st;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 1, &w));
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, w.job_id, 2));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, c, 2));
	EXPECT_EQ(1, c[0].res);
	/* and after the reap too */
	ASSERT_EQ(-ENOENT, iopa_complete(self->wrk, w.job_id, 3));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.completed);
}

TEST_F(abi, complete_bad_flags_reserved)
{
	struct iopa_done d;
	struct iopa_work w;

	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	memset(&d, 0, sizeof(d));
	d.job_id = w.job_id;
	d.flags = 1;
	ASSERT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_COMPLETE, &d));
	d.flags = 1U << 31;
	ASSERT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_COMPLETE, &d));
	d.flags = 0;
	d.reserved = 1;
	ASSERT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_COMPLETE, &d));
	/* the job is still held: a good complete works */
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
}

/* ---- COMPLETE_AND_FETCH ------------------------------------------------ */

TEST_F(abi, complete_and_fetch_chain)
{
	struct iopa_work w, w2;
	struct iopa_cqe c[4];
	struct iopa_stats st;
	int i;

	ASSERT_EQ(3, iopa_submit_many(self->sub, self->file, 1, 3));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	EXPECT_EQ(1ULL, w.user_data);
	for (i = 2; i <= 3; i++) {
		close(w.fd);
		ASSERT_EQ(0, iopa_complete_and_fetch(self->wrk, w.job_id, 10 + i - 1,
						     &w2, 0, IOPA_LONG_NS));
		EXPECT_EQ((__u64)i, w2.user_data);
		EXPECT_LE(0, w2.fd);
		w = w2;
	}
	close(w.fd);
	/* completes the last one, then finds nothing to fetch */
	ASSERT_EQ(-EAGAIN, iopa_complete_and_fetch(self->wrk, w.job_id, 13, &w2,
						   IOPA_FETCH_F_NONBLOCK, 0));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(3ULL, st.completed);
	EXPECT_EQ(0ULL, st.inflight);
	ASSERT_EQ(3, iopa_reap_nb(self->sub, c, 4));
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(10 + (int)c[i].user_data, c[i].res);
	}
}

/* SIGUSR1 with SA_RESTART: says on an eventfd that it ran. */
static int caf_sig_efd = -1;

static void caf_sig_handler(int sig)
{
	uint64_t one = 1;

	(void)sig;
	if (write(caf_sig_efd, &one, sizeof(one)) < 0)
		_exit(99);
}

struct caf_restart {
	int wfd;
	uint64_t job_id;
	int rc;
	struct iopa_work w;
};

static void *caf_restart_fn(void *arg)
{
	struct caf_restart *t = arg;

	t->rc = iopa_complete_and_fetch(t->wfd, t->job_id, 33, &t->w, 0,
					IOPA_LONG_NS);
	return NULL;
}

/*
 * A COMPLETE_AND_FETCH interrupted in its fetch part by a signal whose
 * handler has SA_RESTART is re-run with the same job_id: the completion
 * stands, and the restarted call goes on to fetch.  It returned -ENOENT
 * (the job was gone), as it did for io_uring task work with no handler.
 */
TEST_F_TIMEOUT(abi, complete_and_fetch_restarted, 60)
{
	struct sigaction sa = { .sa_handler = caf_sig_handler,
				.sa_flags = SA_RESTART };
	struct caf_restart t = { .wfd = self->wrk };
	struct iopa_work w;
	struct iopa_cqe c;
	pthread_t th;

	caf_sig_efd = eventfd(0, EFD_CLOEXEC);
	ASSERT_LE(0, caf_sig_efd);
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	t.job_id = w.job_id;
	ASSERT_EQ(0, pthread_create(&th, NULL, caf_restart_fn, &t));
	/* the complete part took effect: its completion is there */
	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(w.job_id, c.job_id);
	EXPECT_EQ(33, c.res);
	/* interrupt the fetch part: the handler ran, the call restarts */
	ASSERT_EQ(0, pthread_kill(th, SIGUSR1));
	EXPECT_EQ(1, iopa_wait_readable(caf_sig_efd, IOPA_LONG_MS));
	/* the restarted call fetches the next job */
	EXPECT_EQ(1, iopa_submit_one(self->sub, self->file, 2));
	pthread_join(th, NULL);
	EXPECT_EQ(0, t.rc);
	if (!t.rc) {
		EXPECT_EQ(2ULL, t.w.user_data);
		close(t.w.fd);
		EXPECT_EQ(0, iopa_complete(self->wrk, t.w.job_id, 0));
	}
	/* and nothing was completed twice */
	EXPECT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(2ULL, c.user_data);
	EXPECT_EQ(-EAGAIN, iopa_reap_nb(self->sub, &c, 1));
	close(caf_sig_efd);
}

TEST_F(abi, complete_and_fetch_bad_done)
{
	struct iopa_fetch f;
	struct iopa_work w, w2;
	struct iopa_stats st;
	int next;

	ASSERT_EQ(2, iopa_submit_many(self->sub, self->file, 1, 2));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	next = iopa_next_fd();
	/* complete part fails: its errno, nothing fetched */
	ASSERT_EQ(-ENOENT, iopa_complete_and_fetch(self->wrk, w.job_id + 1000, 0,
						   &w2, IOPA_FETCH_F_NONBLOCK, 0));
	ASSERT_EQ(-ENOENT, iopa_complete_and_fetch(self->wrk, 0, 0, &w2,
						   IOPA_FETCH_F_NONBLOCK, 0));
	memset(&f, 0, sizeof(f));
	f.flags = IOPA_FETCH_F_NONBLOCK;
	f.done.job_id = w.job_id;
	f.done.flags = 1;
	ASSERT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_COMPLETE_AND_FETCH, &f));
	f.done.flags = 0;
	f.done.reserved = 1;
	ASSERT_EQ(-EINVAL, iopa_ioctl(self->wrk, IOPA_IOC_COMPLETE_AND_FETCH, &f));
	EXPECT_EQ(next, iopa_next_fd());
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.inflight);
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(0ULL, st.completed);
	/* the held job is still held */
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
}

/* ---- fd kinds and unknown commands ------------------------------------- */

struct cmd_case {
	const char *name;
	unsigned long cmd;
};

#define CMD(c) { #c, c }
static const struct cmd_case all_cmds[] = {
	CMD(IOPA_IOC_GET_FEATURES), CMD(IOPA_IOC_SUBMITTER_CREATE),
	CMD(IOPA_IOC_WORKER_CREATE), CMD(IOPA_IOC_GET_STATS),
	CMD(IOPA_IOC_SUBMIT), CMD(IOPA_IOC_REAP), CMD(IOPA_IOC_CANCEL),
	CMD(IOPA_IOC_SET_LIMIT), CMD(IOPA_IOC_GET_LIMIT), CMD(IOPA_IOC_FETCH),
	CMD(IOPA_IOC_COMPLETE), CMD(IOPA_IOC_COMPLETE_AND_FETCH),
	CMD(IOPA_IOC_SET_ADAPT), CMD(IOPA_IOC_GET_STATE),
	CMD(IOPA_IOC_LIST_SUBMITTERS), CMD(IOPA_IOC_SUB_ADMIN),
};

/* Which fd kinds accept a command: c = context, s = submitter, w = worker. */
static const char *cmd_kinds(unsigned long cmd)
{
	switch (cmd) {
	case IOPA_IOC_GET_FEATURES:	return "csw";
	case IOPA_IOC_SUBMITTER_CREATE:
	case IOPA_IOC_WORKER_CREATE:
	case IOPA_IOC_LIST_SUBMITTERS:
	case IOPA_IOC_SUB_ADMIN:	return "c";
	case IOPA_IOC_GET_STATS:	return "cs";
	case IOPA_IOC_SUBMIT:
	case IOPA_IOC_REAP:
	case IOPA_IOC_CANCEL:
	case IOPA_IOC_SET_LIMIT:
	case IOPA_IOC_GET_LIMIT:
	case IOPA_IOC_SET_ADAPT:
	case IOPA_IOC_GET_STATE:	return "s";
	default:			return "w";
	}
}

TEST_F(abi, wrong_fd_kind_enotty)
{
	const struct { char kind; int fd; } fds[] = {
		{ 'c', self->ctx }, { 's', self->sub }, { 'w', self->wrk },
	};
	unsigned int i, k;
	int checked = 0;

	for (i = 0; i < IOPA_ARRAY_SIZE(all_cmds); i++) {
		for (k = 0; k < IOPA_ARRAY_SIZE(fds); k++) {
			/* a valid-looking all-zero argument */
			char arg[256] __attribute__((aligned(8)));

			if (strchr(cmd_kinds(all_cmds[i].cmd), fds[k].kind))
				continue;
			memset(arg, 0, sizeof(arg));
			EXPECT_EQ(-ENOTTY, iopa_ioctl(fds[k].fd, all_cmds[i].cmd, arg))
				TH_LOG("%s on a '%c' fd", all_cmds[i].name, fds[k].kind);
			checked++;
		}
	}
	ASSERT_EQ(29, checked);
	ASSERT_STATS_INVARIANT(self->ctx);
}

TEST_F(abi, unknown_ioctl_enotty)
{
	int fds[] = { self->ctx, self->sub, self->wrk };
	unsigned long cmds[] = {
		_IO(IOPA_IOC_MAGIC, 0x3f),
		_IOR(IOPA_IOC_MAGIC, 0x04, struct iopa_stats),
		_IOWR(IOPA_IOC_MAGIC, 0x23, struct iopa_fetch),
		/* a known number with the wrong size / direction is unknown */
		_IOW(IOPA_IOC_MAGIC, 0x10, __u32),
		_IOR(IOPA_IOC_MAGIC, 0x00, __u64),
		_IOR(IOPA_IOC_MAGIC, 0x20, struct iopa_fetch),
		_IO(IOPA_IOC_MAGIC, 0x21),
		/* another driver's commands */
		_IOR(0xB8, 0x00, struct iopa_features),
		TCGETS,
	};
	unsigned int i, k;

	for (k = 0; k < IOPA_ARRAY_SIZE(fds); k++) {
		for (i = 0; i < IOPA_ARRAY_SIZE(cmds); i++) {
			char arg[256] __attribute__((aligned(8)));

			memset(arg, 0, sizeof(arg));
			EXPECT_EQ(-ENOTTY, iopa_ioctl(fds[k], cmds[i], arg))
				TH_LOG("cmd %#lx on fd kind %u", cmds[i], k);
		}
	}
}

TEST_F(abi, bad_arg_pointer_efault)
{
	void *bad = unmapped_page();
	void *args[2] = { NULL, bad };
	struct iopa_stats st;
	unsigned int i, a;

	ASSERT_NE(NULL, bad);
	for (a = 0; a < 2; a++) {
		for (i = 0; i < IOPA_ARRAY_SIZE(all_cmds); i++) {
			char kind = cmd_kinds(all_cmds[i].cmd)[0];
			int fd = kind == 'c' ? self->ctx :
				 kind == 's' ? self->sub : self->wrk;

			EXPECT_EQ(-EFAULT, iopa_ioctl(fd, all_cmds[i].cmd, args[a]))
				TH_LOG("%s with a %s argument", all_cmds[i].name,
				       a ? "unmapped" : "NULL");
		}
	}
	/* nothing got created by accident */
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1U, st.nr_submitters);
	EXPECT_EQ(1U, st.nr_workers);
}

/* ---- contexts ---------------------------------------------------------- */

/* IOPA_IOC_LIST_SUBMITTERS into @info (room @nr): 0 or -errno. */
static int list_subs(int ctx, struct iopa_sub_info *info, uint32_t nr,
		     uint32_t flags, struct iopa_list *out)
{
	struct iopa_list l = {
		.subs = (uintptr_t)info, .nr = nr, .flags = flags,
		.entry_size = sizeof(*info),
	};
	int r = iopa_ioctl(ctx, IOPA_IOC_LIST_SUBMITTERS, &l);

	if (out)
		*out = l;
	return r;
}

/*
 * A caller built against a later ABI (a larger struct iopa_sub_info):
 * each entry at its stride, the part the module does not know zeroed,
 * and the module's own size reported back.
 */
TEST_F(abi, list_larger_entries)
{
	const uint32_t big = sizeof(struct iopa_sub_info) + 40;
	unsigned char buf[2 * (sizeof(struct iopa_sub_info) + 40)];
	struct iopa_list l = {
		.subs = (uintptr_t)buf, .nr = 2, .entry_size = big,
	};
	struct iopa_sub_info a, b;
	unsigned int i;
	int sub2;

	sub2 = iopa_submitter_create(self->ctx, 5);
	ASSERT_LE(0, sub2);
	memset(buf, 0xa5, sizeof(buf));
	ASSERT_EQ(0, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	EXPECT_EQ(2U, l.filled);
	EXPECT_EQ((uint32_t)sizeof(struct iopa_sub_info), l.entry_size);
	memcpy(&a, buf, sizeof(a));
	memcpy(&b, buf + big, sizeof(b));
	EXPECT_EQ(a.sub_id + 1, b.sub_id);
	EXPECT_EQ(5U, b.state.limit);
	for (i = sizeof(a); i < big; i++) {
		EXPECT_EQ(0, buf[i]);
		EXPECT_EQ(0, buf[big + i]);
	}
	close(sub2);
}

/*
 * Without IOPA_LIST_F_ALL: the caller's context only, in creation order,
 * each entry what GET_STATE and GET_STATS on the submitter answer, the
 * creator's pid and comm; a closed submitter is gone.
 */
TEST_F(abi, list_own_context)
{
	struct iopa_sub_info info[4];
	struct iopa_state st;
	struct iopa_stats ss;
	struct iopa_list l;
	struct iopa_work w;
	char comm[16] = { 0 };
	int ctx2, other, sub2;

	ctx2 = iopa_open_ctx();
	ASSERT_LE(0, ctx2);
	other = iopa_submitter_create(ctx2, 1);		/* not listed */
	ASSERT_LE(0, other);
	sub2 = iopa_submitter_create(self->ctx, 3);
	ASSERT_LE(0, sub2);
	ASSERT_EQ(3, iopa_submit_many(self->sub, self->file, 1, 3));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, &w));
	ASSERT_EQ(0, prctl(PR_GET_NAME, comm));

	memset(info, 0xa5, sizeof(info));
	ASSERT_EQ(0, list_subs(self->ctx, info, 4, 0, &l));
	EXPECT_EQ(2U, l.total);
	ASSERT_EQ(2U, l.filled);
	EXPECT_EQ(info[0].ctx_id, info[1].ctx_id);
	EXPECT_LT(info[0].sub_id, info[1].sub_id);
	EXPECT_EQ(getpid(), info[0].pid);
	EXPECT_STREQ(comm, info[0].comm);
	EXPECT_EQ(1U, info[0].ctx_workers);
	EXPECT_EQ(0U, info[0].reserved0);

	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &ss));
	EXPECT_EQ(st.limit, info[0].state.limit);
	EXPECT_EQ(st.policy, info[0].state.policy);
	EXPECT_EQ(2U, info[0].state.pending);
	EXPECT_EQ(0, memcmp(&ss, &info[0].stats, sizeof(ss)));
	EXPECT_EQ(3ULL, info[0].stats.submitted);
	EXPECT_EQ(1ULL, info[0].stats.completed);
	ASSERT_EQ(0, iopa_get_state(sub2, &st));
	EXPECT_EQ(3U, info[1].state.limit);
	EXPECT_EQ(0ULL, info[1].stats.submitted);

	/* nr 0 counts, a smaller room fills what fits */
	ASSERT_EQ(0, list_subs(self->ctx, NULL, 0, 0, &l));
	EXPECT_EQ(2U, l.total);
	EXPECT_EQ(0U, l.filled);
	ASSERT_EQ(0, list_subs(self->ctx, info, 1, 0, &l));
	EXPECT_EQ(2U, l.total);
	EXPECT_EQ(1U, l.filled);

	close(sub2);
	ASSERT_EQ(0, list_subs(self->ctx, info, 4, 0, &l));
	EXPECT_EQ(1U, l.total);
	/* root sees every context's */
	if (geteuid() == 0) {
		ASSERT_EQ(0, list_subs(self->ctx, NULL, 0, IOPA_LIST_F_ALL, &l));
		EXPECT_LE(2U, l.total);
	}
	close(other);
	close(ctx2);
}

TEST_F(abi, list_bad_args)
{
	struct iopa_list l = { .entry_size = sizeof(struct iopa_sub_info) };

	EXPECT_EQ(-EINVAL, list_subs(self->ctx, NULL, 0, 0x2, NULL));
	l.reserved = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	l.reserved = 0;
	l.reserved0 = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	l.reserved0 = 0;
	/* an entry smaller than ABI 1's, or beyond any plausible one */
	l.entry_size = IOPA_SUB_INFO_SIZE_V1 - 8;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	l.entry_size = 0;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	l.entry_size = 4097;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	EXPECT_EQ(-EINVAL, list_subs(self->ctx, NULL, IOPA_LIST_MAX + 1, 0, NULL));
	/* room that is not there: nothing written, EFAULT */
	EXPECT_EQ(-EFAULT, list_subs(self->ctx, unmapped_page(), 1, 0, NULL));
	EXPECT_EQ(-EFAULT, iopa_ioctl(self->ctx, IOPA_IOC_LIST_SUBMITTERS,
				      unmapped_page()));
}

TEST_F(abi, foreign_context)
{
	struct iopa_work w, wb;
	struct iopa_stats st;
	int ctx_b, wrk_b, sub_b;

	ctx_b = iopa_open_ctx();
	ASSERT_LE(0, ctx_b);
	wrk_b = iopa_worker_create(ctx_b);
	ASSERT_LE(0, wrk_b);
	sub_b = iopa_submitter_create(ctx_b, 4);
	ASSERT_LE(0, sub_b);

	ASSERT_EQ(2, iopa_submit_many(self->sub, self->file, 1, 2));
	/* B's worker never sees A's jobs, nonblocking or waiting */
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(wrk_b, &wb));
	ASSERT_EQ(-ETIMEDOUT, iopa_fetch(wrk_b, &wb, 0, IOPA_MS_NS(100)));

	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	/* a job of context A is not B's worker's to complete */
	ASSERT_EQ(-ENOENT, iopa_complete(wrk_b, w.job_id, 0));
	/* nor is a B job id that happens to be equal, since B has none */
	ASSERT_EQ(0, iopa_get_stats(ctx_b, &st));
	EXPECT_EQ(0ULL, st.submitted);
	EXPECT_EQ(0ULL, st.inflight);
	/* job ids are per context: B's first job is 1 too */
	ASSERT_EQ(1, iopa_submit_one(sub_b, self->file, 99));
	ASSERT_EQ(0, iopa_fetch_nb(wrk_b, &wb));
	close(wb.fd);
	EXPECT_EQ(99ULL, wb.user_data);
	EXPECT_EQ(1ULL, wb.job_id);
	ASSERT_EQ(0, iopa_complete(wrk_b, wb.job_id, 0));
	/* and B's worker, having completed its own job 1, still cannot touch A's */
	ASSERT_EQ(-ENOENT, iopa_complete(wrk_b, w.job_id, 0));

	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 0));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(1ULL, st.pending);
	close(sub_b);
	close(wrk_b);
	close(ctx_b);
}

TEST_F(abi, other_worker_cannot_complete)
{
	struct iopa_work w;
	struct iopa_cqe c;
	int w2 = iopa_worker_create(self->ctx);

	ASSERT_LE(0, w2);
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	ASSERT_EQ(-ENOENT, iopa_complete(w2, w.job_id, 5));
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 6));
	ASSERT_EQ(1, iopa_reap_nb(self->sub, &c, 1));
	EXPECT_EQ(6, c.res);
	close(w2);
}

TEST_F(abi, stats_counters)
{
	struct iopa_stats st, ss;
	struct iopa_work w1, w2;
	struct iopa_cqe c[4];
	int sub2;

	ASSERT_EQ(4, iopa_submit_many(self->sub, self->file, 1, 4));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, &w1));		/* 1 completed */
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w2));		/* 2 running */
	close(w2.fd);
	ASSERT_EQ(1, iopa_cancel(self->sub, 3, 0));		/* 3 cancelled */
								/* 4 pending */
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(4ULL, st.submitted);
	EXPECT_EQ(2ULL, st.dispatched);
	EXPECT_EQ(1ULL, st.completed);
	EXPECT_EQ(1ULL, st.cancelled);
	EXPECT_EQ(0ULL, st.requeued);
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(1ULL, st.inflight);
	EXPECT_EQ(2ULL, st.unreaped);
	EXPECT_EQ(1U, st.nr_submitters);
	EXPECT_EQ(1U, st.nr_workers);
	EXPECT_EQ(0U, st.nr_waiting);
	EXPECT_TRUE(iopa_stats_consistent(&st));

	/* the submitter's own view: same counters, no nr_* */
	ASSERT_EQ(0, iopa_get_stats(self->sub, &ss));
	EXPECT_EQ(0, memcmp(&st, &ss, offsetof(struct iopa_stats, nr_submitters)));
	EXPECT_EQ(0U, ss.nr_submitters);
	EXPECT_EQ(0U, ss.nr_workers);
	EXPECT_EQ(0U, ss.nr_waiting);

	ASSERT_EQ(2, iopa_reap_nb(self->sub, c, 4));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0ULL, st.unreaped);

	/* the context counts every submitter it has had, even closed ones */
	sub2 = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, sub2);
	ASSERT_EQ(2, iopa_submit_many(sub2, self->file, 10, 2));
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(6ULL, st.submitted);
	EXPECT_EQ(2U, st.nr_submitters);
	ASSERT_EQ(0, iopa_get_stats(sub2, &ss));
	EXPECT_EQ(2ULL, ss.submitted);
	close(sub2);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	IOPA_LOG_STATS(&st);
	EXPECT_EQ(6ULL, st.submitted);
	EXPECT_EQ(3ULL, st.cancelled);
	EXPECT_EQ(1ULL, st.pending);
	EXPECT_EQ(1U, st.nr_submitters);
	EXPECT_TRUE(iopa_stats_consistent(&st));

	ASSERT_EQ(0, iopa_complete(self->wrk, w2.job_id, 0));
	ASSERT_STATS_INVARIANT(self->ctx);
	ASSERT_STATS_INVARIANT(self->sub);
}

TEST_F(abi, ctx_close_keeps_objects)
{
	struct iopa_features f;
	struct iopa_stats st;
	struct iopa_work w;
	struct iopa_cqe c;

	iopa_close(&self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->sub, &f));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 5));
	ASSERT_EQ(0, iopa_fetch_wait(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(5ULL, w.user_data);
	ASSERT_EQ(0, iopa_complete(self->wrk, w.job_id, 55));
	ASSERT_EQ(1, iopa_reap_one(self->sub, &c));
	EXPECT_EQ(55, c.res);
	ASSERT_EQ(0, iopa_set_limit(self->sub, 2));
	ASSERT_EQ(0, iopa_get_stats(self->sub, &st));
	EXPECT_EQ(1ULL, st.completed);
	/* closing the submitter now is still clean for the worker */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 6));
	iopa_close(&self->sub);
	ASSERT_EQ(-EAGAIN, iopa_fetch_nb(self->wrk, &w));
}

/*
 * fd passing: a process that never opened /dev/iopa receives the context
 * fd over SCM_RIGHTS, becomes a worker and runs the parent's job.
 */
/* Child side; returns the exit code: 0 ok, 10+ step that failed. */
static int fd_passing_child(int sock)
{
	struct iopa_features f;
	struct iopa_work w;
	struct stat sb;
	int ctx, wrk;

	ctx = iopa_recv_fd(sock);
	if (ctx < 0)
		return 10;
	if (iopa_get_features(ctx, &f) || f.abi_version != IOPA_ABI_VERSION)
		return 11;
	wrk = iopa_worker_create(ctx);
	if (wrk < 0)
		return 12;
	if (iopa_fetch_wait(wrk, &w))
		return 13;
	if (w.user_data != 0x5ca1ab1e)
		return 14;
	if (fstat(w.fd, &sb) || !S_ISREG(sb.st_mode) || sb.st_size != 65536)
		return 15;
	close(w.fd);
	if (iopa_complete(wrk, w.job_id, 1234))
		return 16;
	close(wrk);
	close(ctx);
	return 0;
}

/* No iopa fd is opened before the fork: the setup only checks the device. */
FIXTURE(passing) {
	int unused;
};

FIXTURE_SETUP(passing)
{
	if (access(IOPA_DEV_PATH, F_OK))
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
}

FIXTURE_TEARDOWN(passing)
{
}

TEST_F(passing, fd_passing_scm_rights)
{
	char path[64];
	struct iopa_cqe c;
	int sv[2], ctx, sub, file, st;
	pid_t pid;

	file = iopa_job_file(path, O_RDONLY);
	ASSERT_LE(0, file);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));

	/* fork first: the child inherits no iopa fd at all */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		close(sv[0]);
		close(file);
		_exit(fd_passing_child(sv[1]));
	}
	close(sv[1]);

	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	sub = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, sub);
	ASSERT_EQ(1, iopa_submit_one(sub, file, 0x5ca1ab1e));
	ASSERT_EQ(0, iopa_send_fd(sv[0], ctx));
	/* our own context fd is not needed any more */
	close(ctx);

	ASSERT_EQ(1, iopa_reap_one(sub, &c));
	EXPECT_EQ(0x5ca1ab1eULL, c.user_data);
	EXPECT_EQ(1234, c.res);
	EXPECT_EQ(0U, c.flags);
	st = iopa_wait_exit(pid);
	EXPECT_EQ(0, st) TH_LOG("child failed at step %d", st);
	close(sub);
	close(file);
	close(sv[0]);
	unlink(path);
}

TEST_HARNESS_MAIN
