// SPDX-License-Identifier: GPL-2.0
/*
 * iopa dispatch order tests: IOPA_IOC_SET_ORDER's arguments, the sweep
 * of IOPA_ORDER_SORTED on a block device (up, then down; ties in
 * submission order; jobs that come to the sweep's location wait for the
 * next pass) and of IOPA_ORDER_CSCAN (up, then from the lowest), switching order with jobs pending, requeue, cancel
 * and close of a sorting submitter, and the physical order of files on
 * ext4 (bmap, checked against FIBMAP).
 *
 * Run as root with the module loaded.  The block-device tests attach a
 * loop device to a sparse file in /tmp (modprobe loop if needed); the
 * ext4 test also needs mkfs.ext4 and is skipped without it.
 */
#include <linux/capability.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <linux/loop.h>
#include <sys/mount.h>

#include "iopa_test.h"

#define LOOP_IMG_SIZE	(64 << 20)

FIXTURE(order) {
	int ctx;
	int wrk;
	int sub;
	int bdev;		/* the loop device, a job file */
	int loopnr;
	char img[64];
	char mnt[64];
};

/* Attach a loop device to @img; returns its fd (O_RDWR) or -errno. */
static int loop_attach(const char *img, int *nr)
{
	char dev[32];
	int lc, fd, bfd, n, r;

	lc = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (lc < 0 && errno == ENOENT) {
		iopa_run_cmd("modprobe loop");
		lc = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	}
	if (lc < 0)
		return -errno;
	n = ioctl(lc, LOOP_CTL_GET_FREE);
	r = n < 0 ? -errno : 0;
	close(lc);
	if (r)
		return r;
	snprintf(dev, sizeof(dev), "/dev/loop%d", n);
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	bfd = open(img, O_RDWR | O_CLOEXEC);
	if (bfd < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	r = ioctl(fd, LOOP_SET_FD, bfd) ? -errno : 0;
	close(bfd);
	if (r) {
		close(fd);
		return r;
	}
	*nr = n;
	return fd;
}

FIXTURE_SETUP(order)
{
	int fd;

	self->ctx = self->wrk = self->sub = self->bdev = -1;
	self->loopnr = -1;
	self->img[0] = self->mnt[0] = 0;

	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->sub = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, self->sub);

	strcpy(self->img, "/tmp/iopa-order-XXXXXX");
	fd = mkstemp(self->img);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, LOOP_IMG_SIZE));
	close(fd);
	self->bdev = loop_attach(self->img, &self->loopnr);
	if (self->bdev < 0)
		SKIP(return, "no loop device: %s", strerror(-self->bdev));
}

FIXTURE_TEARDOWN(order)
{
	if (self->mnt[0]) {
		umount2(self->mnt, MNT_DETACH);
		rmdir(self->mnt);
	}
	iopa_close(&self->sub);
	iopa_close(&self->wrk);
	iopa_close(&self->ctx);
	if (self->bdev >= 0)
		ioctl(self->bdev, LOOP_CLR_FD, 0);
	iopa_close(&self->bdev);
	if (self->img[0])
		unlink(self->img);
}

static int set_order(int sfd, uint32_t order)
{
	struct iopa_order o = { .order = order };

	return iopa_ioctl(sfd, IOPA_IOC_SET_ORDER, &o);
}

/* Submit one job on @fd at byte @offset with user_data @ud. */
static int submit_at(int sfd, int fd, uint64_t offset, uint64_t ud)
{
	struct iopa_job j;

	iopa_job_init(&j, fd, ud);
	j.offset = offset;
	j.len = 4096;
	return iopa_submit(sfd, &j, 1, 0);
}

/* Fetch the next job without waiting, close its fd, complete it. */
static int next_ud(int wfd, uint64_t *ud)
{
	struct iopa_work w;
	int r;

	r = iopa_fetch_nb(wfd, &w);
	if (r)
		return r;
	close(w.fd);
	*ud = w.user_data;
	return iopa_complete(wfd, w.job_id, 0);
}

/* ---- arguments ---------------------------------------------------------- */

TEST_F(order, feature_bit)
{
	struct iopa_features f;

	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	EXPECT_EQ(IOPA_FEAT_ORDER, f.features & IOPA_FEAT_ORDER);
}

TEST_F(order, set_order_bad_args)
{
	struct iopa_order o = { .order = IOPA_ORDER_MAX + 1 };
	struct iopa_state st;

	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ORDER, &o));
	o.order = IOPA_ORDER_SORTED;
	o.flags = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ORDER, &o));
	o.flags = 0;
	o.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ORDER, &o));
	EXPECT_EQ(-EFAULT, iopa_ioctl(self->sub, IOPA_IOC_SET_ORDER, NULL));
	/* only submitter fds have an order */
	o.reserved[1] = 0;
	EXPECT_EQ(-ENOTTY, iopa_ioctl(self->wrk, IOPA_IOC_SET_ORDER, &o));
	EXPECT_EQ(-ENOTTY, iopa_ioctl(self->ctx, IOPA_IOC_SET_ORDER, &o));
	/* nothing changed */
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_ORDER_FIFO, st.order);
}

TEST_F(order, get_state_reports_order)
{
	struct iopa_state st;

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_ORDER_SORTED, st.order);
	/* setting the order in force is a no-op, not an error */
	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_FIFO));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_ORDER_FIFO, st.order);
}

/* ---- the sweep on a block device --------------------------------------- */

TEST_F(order, fifo_ignores_location)
{
	static const uint64_t blk[] = { 50, 10, 80, 30, 70, 20, 60, 40 };
	uint64_t ud;
	size_t i;

	for (i = 0; i < IOPA_ARRAY_SIZE(blk); i++)
		ASSERT_EQ(1, submit_at(self->sub, self->bdev, blk[i] << 12,
				       blk[i]));
	for (i = 0; i < IOPA_ARRAY_SIZE(blk); i++) {
		ASSERT_EQ(0, next_ud(self->wrk, &ud));
		EXPECT_EQ(blk[i], ud);
	}
}

#define SWEEP_JOBS	11

/*
 * The sweep scenario of both sorted orders on the loop device: jobs at
 * blocks 50 10 80 30 70 20 60 40; three dispatched (10, 20, 30); then
 * jobs behind the head (5, 25) and ahead of it (100); the rest fetched.
 * Fills @got with the user_data (= block) of the 11 jobs in dispatch
 * order.  Returns 0, or the first error, -EEXIST if a 12th job came out.
 */
static int sweep_scenario(FIXTURE_DATA(order) *self, uint32_t order,
			  uint64_t got[SWEEP_JOBS])
{
	static const uint64_t blk[] = { 50, 10, 80, 30, 70, 20, 60, 40 };
	static const uint64_t late[] = { 5, 25, 100 };
	size_t i, n = 0;
	uint64_t ud;
	int r;

	r = set_order(self->sub, order);
	for (i = 0; !r && i < IOPA_ARRAY_SIZE(blk); i++)
		r = submit_at(self->sub, self->bdev, blk[i] << 12, blk[i]) - 1;
	while (!r && n < 3)
		r = next_ud(self->wrk, &got[n++]);
	for (i = 0; !r && i < IOPA_ARRAY_SIZE(late); i++)
		r = submit_at(self->sub, self->bdev, late[i] << 12, late[i]) - 1;
	while (!r && n < SWEEP_JOBS)
		r = next_ud(self->wrk, &got[n++]);
	if (!r && next_ud(self->wrk, &ud) != -EAGAIN)
		r = -EEXIST;
	return r;
}

TEST_F(order, sorted_sweeps_up_then_down)
{
	/* up from 0, on up to 100, then back down for 25 and 5 */
	static const uint64_t want[SWEEP_JOBS] = { 10, 20, 30, 40, 50, 60,
						   70, 80, 100, 25, 5 };
	uint64_t got[SWEEP_JOBS];
	size_t i;

	ASSERT_EQ(0, sweep_scenario(self, IOPA_ORDER_SORTED, got));
	for (i = 0; i < SWEEP_JOBS; i++)
		EXPECT_EQ(want[i], got[i]);
}

/* C-SCAN: past the highest job, the sweep starts again from the lowest. */
TEST_F(order, cscan_wraps_to_lowest)
{
	static const uint64_t want[SWEEP_JOBS] = { 10, 20, 30, 40, 50, 60,
						   70, 80, 100, 5, 25 };
	uint64_t got[SWEEP_JOBS];
	struct iopa_state st;
	size_t i;

	ASSERT_EQ(0, sweep_scenario(self, IOPA_ORDER_CSCAN, got));
	for (i = 0; i < SWEEP_JOBS; i++)
		EXPECT_EQ(want[i], got[i]);
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_ORDER_CSCAN, st.order);
}

TEST_F(order, sorted_ties_in_submission_order)
{
	uint64_t ud;
	int i;

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 9 << 12, 100));
	for (i = 0; i < 5; i++)
		ASSERT_EQ(1, submit_at(self->sub, self->bdev, 3 << 12, i));
	for (i = 0; i < 5; i++) {
		ASSERT_EQ(0, next_ud(self->wrk, &ud));
		EXPECT_EQ((uint64_t)i, ud);
	}
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(100ULL, ud);
}

/*
 * Jobs submitted at the sweep's location after it got there wait for the
 * next pass: a stream of jobs at one location does not hold the sweep
 * (going up, the old sweep took each new job at 3 before the one at 9).
 */
TEST_F(order, sorted_stream_at_one_location_up)
{
	uint64_t ud;
	int i;

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 9 << 12, 9));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 3 << 12, 30));
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(30ULL, ud);
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 3 << 12, 31));
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(9ULL, ud);
	/* the sweep turns and comes back for it */
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(31ULL, ud);
	for (i = 0; i < 2; i++)
		EXPECT_EQ(-EAGAIN, next_ud(self->wrk, &ud));
}

/*
 * The same going down, where the old sweep served equal locations
 * newest first: each new job at 7 went before the older one at 2.
 */
TEST_F(order, sorted_stream_at_one_location_down)
{
	uint64_t ud;

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 9 << 12, 9));
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(9ULL, ud);
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 2 << 12, 2));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 7 << 12, 70));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 7 << 12, 71));
	/* down from 9: 7, oldest first */
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(70ULL, ud);
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 7 << 12, 72));
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(71ULL, ud);
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(2ULL, ud);
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(72ULL, ud);
}

TEST_F(order, switch_to_fifo_restores_submission_order)
{
	static const uint64_t blk[] = { 7, 3, 9, 1, 5 };
	uint64_t ud;
	size_t i;

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	for (i = 0; i < IOPA_ARRAY_SIZE(blk); i++)
		ASSERT_EQ(1, submit_at(self->sub, self->bdev, blk[i] << 12,
				       blk[i]));
	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_FIFO));
	for (i = 0; i < IOPA_ARRAY_SIZE(blk); i++) {
		ASSERT_EQ(0, next_ud(self->wrk, &ud));
		EXPECT_EQ(blk[i], ud);
	}
}

/*
 * Jobs submitted in FIFO order were not located: after the switch they
 * sort as block 0, ahead of the located ones, in submission order.
 */
TEST_F(order, switch_to_sorted_indexes_pending)
{
	uint64_t ud;
	int i;

	for (i = 0; i < 3; i++)
		ASSERT_EQ(1, submit_at(self->sub, self->bdev,
				       (uint64_t)(90 - i) << 12, i));
	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 60 << 12, 60));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 20 << 12, 20));
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, next_ud(self->wrk, &ud));
		EXPECT_EQ((uint64_t)i, ud);
	}
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(20ULL, ud);
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(60ULL, ud);
}

/* A job whose worker dies goes back on the sweep where it was. */
TEST_F(order, sorted_requeue_after_worker_death)
{
	struct iopa_work w;
	uint64_t job_id, ud;
	int w2;

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 30 << 12, 30));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 10 << 12, 10));
	ASSERT_EQ(1, submit_at(self->sub, self->bdev, 20 << 12, 20));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	close(w.fd);
	EXPECT_EQ(10ULL, w.user_data);
	job_id = w.job_id;
	iopa_close(&self->wrk);		/* dies holding job 10 */

	w2 = iopa_worker_create(self->ctx);
	ASSERT_LE(0, w2);
	ASSERT_EQ(0, iopa_fetch_nb(w2, &w));
	close(w.fd);
	EXPECT_EQ(10ULL, w.user_data);
	EXPECT_EQ(job_id | IOPA_JOB_ID_RERUN, w.job_id);
	ASSERT_EQ(0, iopa_complete(w2, w.job_id, 0));
	ASSERT_EQ(0, next_ud(w2, &ud));
	EXPECT_EQ(20ULL, ud);
	ASSERT_EQ(0, next_ud(w2, &ud));
	EXPECT_EQ(30ULL, ud);
	close(w2);
}

TEST_F(order, sorted_cancel_then_close)
{
	struct iopa_cqe cqe[64];
	struct iopa_stats st;
	uint64_t ud, last = 0;
	int i, n, cancelled = 0;

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	/* 0..63 at blocks in a scrambled order */
	for (i = 0; i < 64; i++)
		ASSERT_EQ(1, submit_at(self->sub, self->bdev,
				       (uint64_t)((i * 37) % 64) << 12,
				       (i * 37) % 64));
	for (i = 1; i < 64; i += 2)
		ASSERT_EQ(1, iopa_cancel(self->sub, i, 0));
	/* the even ones, in block order */
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, next_ud(self->wrk, &ud));
		EXPECT_EQ(0ULL, ud % 2);
		if (i)
			EXPECT_LT(last, ud);
		last = ud;
	}
	n = iopa_reap_nb(self->sub, cqe, 64);
	ASSERT_EQ(48, n);
	for (i = 0; i < n; i++)
		cancelled += cqe[i].res == -ECANCELED;
	EXPECT_EQ(32, cancelled);
	/* 16 still pending: closing the submitter cancels them */
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(16ULL, st.pending);
	iopa_close(&self->sub);
	ASSERT_EQ(0, iopa_get_stats(self->ctx, &st));
	EXPECT_EQ(0ULL, st.pending);
	EXPECT_EQ(-EAGAIN, next_ud(self->wrk, &ud));
}

/* ---- files on ext4 ------------------------------------------------------ */

#define EXT4_FILES	24

/*
 * Make ext4 on the loop device and mount it on self->mnt (unmounted by
 * the teardown).  0, or a reason to skip in @why, or -errno.
 */
static int mount_ext4(FIXTURE_DATA(order) *self, char *why, size_t len)
{
	char cmd[160], path[64];
	int r;

	snprintf(cmd, sizeof(cmd), "mkfs.ext4 -q -F -b 4096 /dev/loop%d",
		 self->loopnr);
	r = iopa_run_cmd(cmd);
	if (r == 127) {
		snprintf(why, len, "no mkfs.ext4");
		return 1;
	}
	if (r)
		return -EIO;
	strcpy(self->mnt, "/tmp/iopa-order-mnt-XXXXXX");
	if (!mkdtemp(self->mnt))
		return -errno;
	snprintf(path, sizeof(path), "/dev/loop%d", self->loopnr);
	if (mount(path, self->mnt, "ext4", 0, NULL)) {
		snprintf(why, len, "cannot mount ext4: %s", strerror(errno));
		rmdir(self->mnt);
		self->mnt[0] = 0;
		return 1;
	}
	return 0;
}

TEST_F(order, sorted_files_in_physical_order)
{
	int fds[EXT4_FILES], blocks[EXT4_FILES], perm[EXT4_FILES];
	char path[128], buf[12288], why[96];
	int i, j, r, prev = -1, out_of_order = 0;
	uint64_t ud;

	r = mount_ext4(self, why, sizeof(why));
	if (r == 1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, r);

	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < EXT4_FILES; i++) {
		snprintf(path, sizeof(path), "%s/f%02d", self->mnt, i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ((ssize_t)sizeof(buf), write(fds[i], buf, sizeof(buf)));
		ASSERT_EQ(0, fsync(fds[i]));
	}
	for (i = 0; i < EXT4_FILES; i++) {
		blocks[i] = 0;
		ASSERT_EQ(0, ioctl(fds[i], FIBMAP, &blocks[i]));
		ASSERT_LT(0, blocks[i]);
		perm[i] = (i * 7) % EXT4_FILES;		/* 7 and 24 coprime */
	}

	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	for (i = 0; i < EXT4_FILES; i++) {
		j = perm[i];
		ASSERT_EQ(1, submit_at(self->sub, fds[j], 0, j));
		if (i && blocks[j] < blocks[perm[i - 1]])
			out_of_order++;
	}
	/* the submission order was not already the physical one */
	ASSERT_LT(0, out_of_order);
	for (i = 0; i < EXT4_FILES; i++) {
		ASSERT_EQ(0, next_ud(self->wrk, &ud));
		ASSERT_GT(EXT4_FILES, (int)ud);
		EXPECT_LE(prev, blocks[ud]);
		prev = blocks[ud];
	}
	for (i = 0; i < EXT4_FILES; i++)
		close(fds[i]);
}

/* FIEMAP's flags of @fd's first extent (no sync), or -errno. */
static long first_extent_flags(int fd)
{
	union {
		struct fiemap fm;
		char buf[sizeof(struct fiemap) + sizeof(struct fiemap_extent)];
	} u;

	memset(&u, 0, sizeof(u));
	u.fm.fm_length = FIEMAP_MAX_OFFSET;
	u.fm.fm_extent_count = 1;
	if (ioctl(fd, FS_IOC_FIEMAP, &u.fm))
		return -errno;
	if (!u.fm.fm_mapped_extents)
		return -ENODATA;
	return u.fm.fm_extents[0].fe_flags;
}

/*
 * Locating a job does not write back its file: a dirty file (delayed
 * allocation on ext4) is not located (it sorts as 0).  Before, bmap()
 * wrote back the file of every job a sorting submitter submitted.
 */
TEST_F(order, sorted_dirty_file_not_written_back)
{
	char path[128], buf[12288], why[96];
	uint64_t ud;
	long fl;
	int fd, r;

	r = mount_ext4(self, why, sizeof(why));
	if (r == 1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, r);
	snprintf(path, sizeof(path), "%s/dirty", self->mnt);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	memset(buf, 0x5a, sizeof(buf));
	ASSERT_EQ((ssize_t)sizeof(buf), write(fd, buf, sizeof(buf)));
	fl = first_extent_flags(fd);
	ASSERT_LE(0, fl);
	if (!(fl & FIEMAP_EXTENT_DELALLOC)) {
		close(fd);
		SKIP(return, "no delayed allocation on this ext4 (%#lx)", fl);
	}
	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));
	ASSERT_EQ(1, submit_at(self->sub, fd, 0, 1));
	fl = first_extent_flags(fd);
	EXPECT_NE(0, fl & FIEMAP_EXTENT_DELALLOC)
		TH_LOG("the file was written back (extent flags %#lx)", fl);
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(1ULL, ud);
	close(fd);
}

/* Drop CAP_SYS_RAWIO from the calling thread's effective set. */
static int drop_rawio(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -errno;
	d[CAP_SYS_RAWIO / 32].effective &= ~(1U << (CAP_SYS_RAWIO % 32));
	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/* A child without CAP_SYS_RAWIO submits @n jobs (@fds, user_data @uds). */
static int submit_unprivileged(int sfd, const int *fds, const uint64_t *uds,
			       int n)
{
	pid_t pid = fork();
	int i, r;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		r = drop_rawio();
		for (i = 0; !r && i < n; i++)
			r = submit_at(sfd, fds[i], 0, uds[i]) == 1 ? 0 : 1;
		_exit(r ? 1 : 0);
	}
	return iopa_wait_exit(pid);
}

/*
 * Without CAP_SYS_RAWIO (which FIBMAP needs) a file is located by its
 * inode number, not by bmap(): two files whose blocks are in the
 * opposite order from their inodes go in inode order for an
 * unprivileged submitter, in block order for a privileged one.
 */
TEST_F(order, sorted_unprivileged_by_inode)
{
	char path[128], buf[12288], why[96];
	int fds[2], blocks[2], sfds[2], i, r;
	uint64_t uds[2], ud;
	struct stat st[2];

	r = mount_ext4(self, why, sizeof(why));
	if (r == 1)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, r);
	memset(buf, 0x5a, sizeof(buf));
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/f%d", self->mnt, i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		ASSERT_LE(0, fds[i]);
		ASSERT_EQ(0, fstat(fds[i], &st[i]));
	}
	/* the later inode's data first: its blocks come first */
	for (i = 1; i >= 0; i--) {
		ASSERT_EQ((ssize_t)sizeof(buf), write(fds[i], buf, sizeof(buf)));
		ASSERT_EQ(0, fsync(fds[i]));
	}
	for (i = 0; i < 2; i++) {
		blocks[i] = 0;
		ASSERT_EQ(0, ioctl(fds[i], FIBMAP, &blocks[i]));
	}
	if (!(st[0].st_ino < st[1].st_ino && blocks[1] < blocks[0]))
		SKIP(return, "no inversion: inodes %llu %llu, blocks %d %d",
		     (unsigned long long)st[0].st_ino,
		     (unsigned long long)st[1].st_ino, blocks[0], blocks[1]);
	ASSERT_EQ(0, set_order(self->sub, IOPA_ORDER_SORTED));

	/* submitted 1 then 0, by a child without CAP_SYS_RAWIO */
	sfds[0] = fds[1];
	sfds[1] = fds[0];
	uds[0] = 1;
	uds[1] = 0;
	ASSERT_EQ(0, submit_unprivileged(self->sub, sfds, uds, 2));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, next_ud(self->wrk, &ud));
		EXPECT_EQ((uint64_t)i, ud);	/* inode order */
	}

	/* the same, privileged: block order */
	for (i = 0; i < 2; i++)
		ASSERT_EQ(1, submit_at(self->sub, sfds[i], 0, uds[i] + 10));
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(11ULL, ud);
	ASSERT_EQ(0, next_ud(self->wrk, &ud));
	EXPECT_EQ(10ULL, ud);
	for (i = 0; i < 2; i++)
		close(fds[i]);
}

TEST_HARNESS_MAIN
