// SPDX-License-Identifier: GPL-2.0
/*
 * iopa module unload/reload tests.  Must run last and alone: it unloads
 * and reloads the module (delete_module / finit_module, no shelling out).
 * The module is left loaded.
 *
 * IOPA_KO: path of iopa.ko (default ../../kernel/iopa.ko, relative to the
 * current directory).  Skipped if it is missing, if iopa is built in, or
 * if not run as root.
 */
#include "iopa_test.h"

#define CYCLES		20
#define DEFAULT_KO	"../../kernel/iopa.ko"

static int mod_unload(void)
{
	return syscall(SYS_delete_module, "iopa", O_NONBLOCK) ? -errno : 0;
}

static int mod_load(const char *ko)
{
	int fd = open(ko, O_RDONLY | O_CLOEXEC), r, e;

	if (fd < 0)
		return -errno;
	r = syscall(SYS_finit_module, fd, "", 0);
	e = errno;
	close(fd);
	return r ? -e : 0;
}

/* Loaded as a module (built-in code has no initstate). */
static bool mod_loaded(void)
{
	return access("/sys/module/iopa/initstate", F_OK) == 0;
}

static bool mod_builtin(void)
{
	return access("/sys/module/iopa", F_OK) == 0 && !mod_loaded() &&
	       access(IOPA_DEV_PATH, F_OK) == 0;
}

/* /dev/iopa can be opened; IOPA_LONG_MS bound in case udev makes the node. */
static int wait_dev(void)
{
	int64_t deadline = iopa_now_ns() + IOPA_LONG_NS;

	for (;;) {
		int fd = iopa_open_ctx();

		if (fd >= 0) {
			close(fd);
			return 0;
		}
		if (iopa_now_ns() > deadline)
			return fd;
		poll(NULL, 0, 10);
	}
}

static uint64_t stat_val(const char *name)
{
	char attr[64];
	uint64_t v = 0;

	snprintf(attr, sizeof(attr), "stats/%s", name);
	if (iopa_sysfs_read(attr, &v))
		return UINT64_MAX;
	return v;
}

FIXTURE(reload) {
	const char *ko;
	int ctx, sub, wrk, file, jobfd, ifd;
	char path[64];
};

FIXTURE_SETUP(reload)
{
	self->ctx = self->sub = self->wrk = self->file = -1;
	self->jobfd = self->ifd = -1;
	self->path[0] = 0;
	self->ko = getenv("IOPA_KO") ?: DEFAULT_KO;

	if (geteuid())
		SKIP(return, "needs root");
	if (access(self->ko, R_OK))
		SKIP(return, "module %s not found (set IOPA_KO)", self->ko);
	if (mod_builtin())
		SKIP(return, "iopa is built in: cannot unload");
	if (!mod_loaded()) {
		int r = mod_load(self->ko);

		if (r == -ENOSYS || r == -EPERM)
			SKIP(return, "cannot load modules here: %s", strerror(-r));
		ASSERT_EQ(0, r);
	}
	ASSERT_EQ(0, wait_dev());

	ASSERT_EQ(0, iopa_job_file(self->path, -1));
	self->ifd = iopa_watch_close(self->path);
	ASSERT_LE(0, self->ifd);
}

FIXTURE_TEARDOWN(reload)
{
	iopa_close(&self->jobfd);
	iopa_close(&self->file);
	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	iopa_close(&self->ifd);
	if (self->path[0])
		unlink(self->path);
	/* leave the module loaded, whatever happened */
	if (!mod_loaded()) {
		EXPECT_EQ(0, mod_load(self->ko));
	}
}

static bool busy_errno(int r)
{
	return r == -EWOULDBLOCK || r == -EBUSY;
}

TEST_F(reload, unload_busy_while_open)
{
	int r;

	/* a context fd pins the module */
	self->ctx = iopa_open_ctx();
	ASSERT_LE(0, self->ctx);
	r = mod_unload();
	EXPECT_TRUE(busy_errno(r)) TH_LOG("delete_module: %d", r);
	ASSERT_TRUE(mod_loaded());

	/* so does a submitter fd alone ... */
	self->sub = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, self->sub);
	iopa_close(&self->ctx);
	r = mod_unload();
	EXPECT_TRUE(busy_errno(r)) TH_LOG("delete_module: %d", r);
	ASSERT_TRUE(mod_loaded());

	/* ... and a worker fd alone */
	self->ctx = iopa_open_ctx();
	ASSERT_LE(0, self->ctx);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	iopa_close(&self->ctx);
	iopa_close(&self->sub);
	r = mod_unload();
	EXPECT_TRUE(busy_errno(r)) TH_LOG("delete_module: %d", r);
	ASSERT_TRUE(mod_loaded());

	/* all closed: it goes, and comes back */
	iopa_close(&self->wrk);
	ASSERT_EQ(0, mod_unload());
	ASSERT_FALSE(mod_loaded());
	ASSERT_NE(0, access("/sys/module/iopa", F_OK));
	ASSERT_EQ(0, mod_load(self->ko));
	ASSERT_EQ(0, wait_dev());
}

/*
 * A worker's fetched job fd is an ordinary file: it does not pin the
 * module, and (the job having ended when its worker went away) it is the
 * last reference to the file.
 */
TEST_F(reload, job_fd_outlives_module)
{
	struct iopa_work w;

	self->ctx = iopa_open_ctx();
	ASSERT_LE(0, self->ctx);
	self->sub = iopa_submitter_create(self->ctx, 1);
	ASSERT_LE(0, self->sub);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->file = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->file);
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	iopa_close(&self->file);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
	self->jobfd = w.fd;

	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->ctx);
	/* our fetched fd keeps the file open */
	EXPECT_EQ(0, iopa_close_event(self->ifd, 0));
	ASSERT_EQ(0, mod_unload());
	ASSERT_EQ(0, mod_load(self->ko));
	ASSERT_EQ(0, wait_dev());
	EXPECT_EQ(0, iopa_close_event(self->ifd, 0));
	iopa_close(&self->jobfd);
	EXPECT_EQ(1, iopa_close_event(self->ifd, IOPA_LONG_MS));
}

static void close_in_order(int *fds[3], int cycle)
{
	static const int order[3][3] = { { 0, 1, 2 }, { 1, 0, 2 }, { 2, 1, 0 } };
	int i;

	for (i = 0; i < 3; i++)
		iopa_close(fds[order[cycle % 3][i]]);
}

TEST_F_TIMEOUT(reload, load_unload_cycles, 280)
{
	int cycle;

	for (cycle = 0; cycle < CYCLES; cycle++) {
		int *fds[3] = { &self->sub, &self->wrk, &self->ctx };
		struct iopa_job jobs[4];
		struct iopa_work w;
		int r, i;

		r = mod_unload();
		ASSERT_EQ(0, r) TH_LOG("cycle %d: delete_module: %d", cycle, r);
		ASSERT_FALSE(mod_loaded());
		/* the device is gone with it */
		r = iopa_open_ctx();
		EXPECT_GT(0, r) TH_LOG("cycle %d: /dev/iopa opened while unloaded", cycle);
		if (r >= 0)
			close(r);
		r = mod_load(self->ko);
		ASSERT_EQ(0, r) TH_LOG("cycle %d: finit_module: %d", cycle, r);
		ASSERT_EQ(0, wait_dev());

		/* a fresh module counts from zero */
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("jobs"));
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("contexts"));
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("submitted"));

		self->ctx = iopa_open_ctx();
		ASSERT_LE(0, self->ctx);
		self->sub = iopa_submitter_create(self->ctx, 1);
		ASSERT_LE(0, self->sub);
		self->wrk = iopa_worker_create(self->ctx);
		ASSERT_LE(0, self->wrk);
		self->file = open(self->path, O_RDONLY | O_CLOEXEC);
		ASSERT_LE(0, self->file);
		for (i = 0; i < 4; i++)
			iopa_job_init(&jobs[i], self->file, i);
		ASSERT_EQ(4, iopa_submit(self->sub, jobs, 4, 0));
		iopa_close(&self->file);
		/* one running (held by the worker), three pending */
		ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w));
		close(w.fd);
		EXPECT_EQ(0, iopa_close_event(self->ifd, 0));

		EXPECT_EQ(1ULL, (unsigned long long)stat_val("contexts"));
		EXPECT_EQ(1ULL, (unsigned long long)stat_val("submitters"));
		EXPECT_EQ(1ULL, (unsigned long long)stat_val("workers"));
		EXPECT_EQ(4ULL, (unsigned long long)stat_val("submitted"));
		EXPECT_EQ(3ULL, (unsigned long long)stat_val("pending"));
		EXPECT_EQ(1ULL, (unsigned long long)stat_val("inflight"));
		EXPECT_EQ(4ULL, (unsigned long long)stat_val("jobs"));

		/* close everything, in a different order each cycle */
		close_in_order(fds, cycle);
		r = iopa_close_event(self->ifd, IOPA_LONG_MS);
		EXPECT_EQ(1, r) TH_LOG("cycle %d: job file not released", cycle);

		EXPECT_EQ(0ULL, (unsigned long long)stat_val("jobs"))
			TH_LOG("cycle %d: job objects left", cycle);
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("contexts"));
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("submitters"));
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("workers"));
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("pending"));
		EXPECT_EQ(0ULL, (unsigned long long)stat_val("inflight"));
		if (_metadata->exit_code)
			break;	/* don't pile 20 cycles of failures */
	}
	/* left loaded */
	ASSERT_TRUE(mod_loaded());
	ASSERT_EQ(0, wait_dev());
}

TEST_HARNESS_MAIN
