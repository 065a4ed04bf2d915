// SPDX-License-Identifier: GPL-2.0
/*
 * iopa selftests: the security model (Documentation/iopa-security.rst).
 *
 * Who may open /dev/iopa, that iopa checks no capability of its own
 * beyond that (an fd is the right), what a passed fd allows, who may
 * write sysfs, and that the jobs' memory is charged to the submitter's
 * memory cgroup.  The caps themselves (max_jobs, max_submitters,
 * max_workers, max_total_jobs) are tested in iopa_sched (tun.*) and
 * iopa_uring (uring.submit_at_caps).
 *
 * The tests switch users in forked children (uid/gid NOBODY), so they
 * need root; they change the device node's owner and mode only for the
 * length of a test and put them back in the teardown.
 */
#include "iopa_test.h"

#include <dirent.h>
#include <grp.h>
#include <sys/mount.h>

#define NOBODY		65534
#define IOPA_GROUP	4242	/* a group only the test's children are in */

/* Exit codes of the children: 0, or the number of the step that failed. */
typedef int (*child_fn)(void *arg);

/*
 * Run @fn(@arg) in a child that is uid and gid NOBODY, with @group as its
 * only supplementary group (none if 0).  Returns the child's exit code,
 * 100 + errno if it could not switch users, or -errno.
 */
static int run_as_nobody(gid_t group, child_fn fn, void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		if (setgroups(group ? 1 : 0, &group) || setgid(NOBODY) ||
		    setuid(NOBODY))
			_exit(100 + errno);
		_exit(fn(arg));
	}
	if (waitpid(pid, &status, 0) != pid)
		return -errno;
	if (!WIFEXITED(status))
		return -ECHILD;
	return WEXITSTATUS(status);
}

/* RLIMIT_NOFILE of the child of pinned_files_charged_to_user */
#define PIN_LIMIT	32

/*
 * As nobody, with RLIMIT_NOFILE PIN_LIMIT: PIN_LIMIT jobs pin their file
 * (one file, PIN_LIMIT references), the next SUBMIT fails with
 * ETOOMANYREFS, a batch too; a job that ends gives its charge back.
 */
static int child_pin_limit(void *arg)
{
	struct rlimit rl = { PIN_LIMIT, PIN_LIMIT };
	struct iopa_work w;
	int ctx, sub, wrk, file, i;

	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 40;
	ctx = iopa_open_ctx();
	if (ctx < 0)
		return 41;
	sub = iopa_submitter_create(ctx, 1);
	wrk = iopa_worker_create(ctx);
	file = open(arg, O_RDONLY | O_CLOEXEC);
	if (sub < 0 || wrk < 0 || file < 0)
		return 42;
	for (i = 0; i < PIN_LIMIT; i++)
		if (iopa_submit_one(sub, file, i) != 1)
			return 43;
	if (iopa_submit_one(sub, file, 99) != -ETOOMANYREFS)
		return 44;
	if (iopa_submit_many(sub, file, 100, 4) != -ETOOMANYREFS)
		return 45;
	/* a job ends: its file is let go, and its charge */
	if (iopa_fetch_nb(wrk, &w))
		return 46;
	close(w.fd);
	if (iopa_complete(wrk, w.job_id, 0))
		return 47;
	if (iopa_submit_one(sub, file, 98) != 1)
		return 48;
	if (iopa_submit_one(sub, file, 97) != -ETOOMANYREFS)
		return 49;
	/* closing the submitter cancels its pending jobs: all given back */
	close(sub);
	sub = iopa_submitter_create(ctx, 1);
	if (sub < 0 || iopa_submit_many(sub, file, 200, 4) != 4)
		return 50;
	close(sub);
	close(wrk);
	close(file);
	close(ctx);
	return 0;
}

#define CG_ROOT		"/sys/fs/cgroup"
#define CG		CG_ROOT "/iopa-test"
#define CG_JOBS		8192

FIXTURE(sec) {
	struct stat node;	/* the device node as found */
	bool restore_node;
	char path[64];		/* a job file, readable by NOBODY */
	/* jobs_charged_to_memcg: what to undo */
	bool cg_mounted, cg_memory_added, cg_made;
	pid_t child;
};

FIXTURE_SETUP(sec)
{
	self->restore_node = false;
	self->path[0] = 0;
	self->cg_mounted = self->cg_memory_added = self->cg_made = false;
	self->child = 0;
	if (stat(IOPA_DEV_PATH, &self->node))
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	if (geteuid() != 0)
		SKIP(return, "needs root to switch users");
	ASSERT_EQ(0, iopa_job_file(self->path, -1));
	ASSERT_EQ(0, chmod(self->path, 0644));
}

FIXTURE_TEARDOWN(sec)
{
	if (self->restore_node) {
		EXPECT_EQ(0, chown(IOPA_DEV_PATH, self->node.st_uid,
				   self->node.st_gid));
		EXPECT_EQ(0, chmod(IOPA_DEV_PATH, self->node.st_mode & 07777));
	}
	if (self->path[0])
		unlink(self->path);
	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->cg_made)
		EXPECT_EQ(0, rmdir(CG));
	if (self->cg_memory_added)
		iopa_write_str(CG_ROOT "/cgroup.subtree_control", "-memory");
	if (self->cg_mounted)
		EXPECT_EQ(0, umount(CG_ROOT));
}

/* Make the node root:@gid @mode, as the shipped udev rule does. */
static int set_node(struct __test_metadata *_metadata, FIXTURE_DATA(sec) *self,
		    gid_t gid, mode_t mode)
{
	(void)_metadata;
	self->restore_node = true;
	if (chown(IOPA_DEV_PATH, 0, gid) || chmod(IOPA_DEV_PATH, mode))
		return -errno;
	return 0;
}

/*
 * The node the module makes: a character device owned by root with no
 * access for others: 0600 root:root as devtmpfs creates it, or 0660 with
 * the group of the udev rule (tools/udev/60-iopa.rules).
 */
TEST_F(sec, node_not_world_accessible)
{
	EXPECT_TRUE(S_ISCHR(self->node.st_mode));
	EXPECT_EQ(0U, self->node.st_uid);
	EXPECT_EQ(0U, self->node.st_mode & S_IRWXO)
		TH_LOG("mode %o", self->node.st_mode & 07777);
	EXPECT_TRUE((self->node.st_mode & 07777) == 0600 ||
		    (self->node.st_mode & 07777) == 0660)
		TH_LOG("mode %o", self->node.st_mode & 07777);
}

static int child_open(void *arg)
{
	int fd = open(IOPA_DEV_PATH, *(int *)arg | O_CLOEXEC);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == EACCES ? 1 : 2;
}

/* With the default 0600, a user who is not root cannot open it. */
TEST_F(sec, other_user_open_eacces)
{
	int rd = O_RDONLY, rw = O_RDWR;

	ASSERT_EQ(0, set_node(_metadata, self, 0, 0600));
	EXPECT_EQ(1, run_as_nobody(0, child_open, &rw));
	EXPECT_EQ(1, run_as_nobody(0, child_open, &rd));
	/* in the group of a 0660 node: yes; not in it: still no */
	ASSERT_EQ(0, set_node(_metadata, self, IOPA_GROUP, 0660));
	EXPECT_EQ(0, run_as_nobody(IOPA_GROUP, child_open, &rw));
	EXPECT_EQ(1, run_as_nobody(0, child_open, &rw));
}

/*
 * A job's whole life by a user with no privilege: every call works on
 * fds, with no capability check.  @ctx < 0: open the node.
 */
static int child_job_round_trip(int ctx, const char *path)
{
	struct iopa_state st;
	struct iopa_work w;
	struct iopa_cqe c;
	int sub, wrk, file;

	if (ctx < 0)
		ctx = iopa_open_ctx();
	if (ctx < 0)
		return 10;
	sub = iopa_submitter_create(ctx, 2);
	if (sub < 0)
		return 11;
	wrk = iopa_worker_create(ctx);
	if (wrk < 0)
		return 12;
	if (iopa_set_limit(sub, 4) || iopa_set_adapt(sub, IOPA_POLICY_IOPA, 1, 8))
		return 13;
	if (iopa_get_state(sub, &st) || st.policy != IOPA_POLICY_IOPA)
		return 14;
	file = open(path, O_RDONLY | O_CLOEXEC);
	if (file < 0)
		return 15;
	if (iopa_submit_one(sub, file, 77) != 1)
		return 16;
	if (iopa_fetch_nb(wrk, &w) || w.user_data != 77)
		return 17;
	close(w.fd);
	if (iopa_complete(wrk, w.job_id, 5))
		return 18;
	if (iopa_reap_one(sub, &c) != 1 || c.res != 5 || c.user_data != 77)
		return 19;
	close(file);
	close(wrk);
	close(sub);
	close(ctx);
	return 0;
}

static int child_round_trip_open(void *arg)
{
	return child_job_round_trip(-1, arg);
}

TEST_F(sec, group_member_uses_every_call)
{
	ASSERT_EQ(0, set_node(_metadata, self, IOPA_GROUP, 0660));
	EXPECT_EQ(0, run_as_nobody(IOPA_GROUP, child_round_trip_open, self->path));
}

struct passed {
	int sock;
	const char *path;
};

/* Receive a context fd; the node itself must stay closed to us. */
static int child_passed_ctx(void *arg)
{
	struct passed *p = arg;
	int rw = O_RDWR, ctx;

	if (child_open(&rw) != 1)
		return 30;
	ctx = iopa_recv_fd(p->sock);
	if (ctx < 0)
		return 31;
	return child_job_round_trip(ctx, p->path);
}

/* Holding a passed context fd is all it takes, whatever the node's mode. */
TEST_F(sec, passed_context_fd_is_the_right)
{
	struct passed p = { .path = self->path };
	int sv[2], ctx;

	ASSERT_EQ(0, set_node(_metadata, self, 0, 0600));
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	ASSERT_EQ(0, iopa_send_fd(sv[0], ctx));
	close(ctx);	/* the child's copy keeps the context */
	p.sock = sv[1];
	EXPECT_EQ(0, run_as_nobody(0, child_passed_ctx, &p));
	close(sv[0]);
	close(sv[1]);
}

/*
 * A passed submitter fd allows that submitter's calls and nothing else:
 * no new submitters or workers, no fetching.
 */
static int child_passed_sub(void *arg)
{
	struct passed *p = arg;
	struct iopa_stats st;
	struct iopa_work w;
	int sub, file;

	sub = iopa_recv_fd(p->sock);
	if (sub < 0)
		return 40;
	file = open(p->path, O_RDONLY | O_CLOEXEC);
	if (file < 0)
		return 41;
	if (iopa_submit_one(sub, file, 9) != 1)
		return 42;
	if (iopa_get_stats(sub, &st) || st.submitted != 1)
		return 43;
	if (iopa_submitter_create(sub, 1) != -ENOTTY)
		return 44;
	if (iopa_worker_create(sub) != -ENOTTY)
		return 45;
	if (iopa_fetch_nb(sub, &w) != -ENOTTY)
		return 46;
	if (iopa_cancel(sub, 9, 0) != 1)
		return 47;
	close(file);
	close(sub);
	return 0;
}

TEST_F(sec, passed_submitter_fd_is_limited)
{
	struct passed p = { .path = self->path };
	int sv[2], ctx, sub;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	sub = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, sub);
	ASSERT_EQ(0, iopa_send_fd(sv[0], sub));
	p.sock = sv[1];
	EXPECT_EQ(0, run_as_nobody(0, child_passed_sub, &p));
	close(sub);
	close(ctx);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A worker gets the submitter's open file, with its access mode: a
 * worker of another user reads a file it could not open itself, and
 * cannot write through an fd the submitter opened read-only.
 */
static int child_worker(void *arg)
{
	struct passed *p = arg;
	struct iopa_work w;
	char c;
	int ctx, wrk, own;

	ctx = iopa_recv_fd(p->sock);
	if (ctx < 0)
		return 50;
	own = open(p->path, O_RDONLY);
	if (own >= 0 || errno != EACCES)
		return 51;
	wrk = iopa_worker_create(ctx);
	if (wrk < 0)
		return 52;
	if (iopa_fetch_wait(wrk, &w))
		return 53;
	if (pread(w.fd, &c, 1, 0) != 1)
		return 54;
	if (write(w.fd, "x", 1) != -1 || errno != EBADF)
		return 55;
	if ((fcntl(w.fd, F_GETFL) & O_ACCMODE) != O_RDONLY)
		return 56;
	close(w.fd);
	if (iopa_complete(wrk, w.job_id, 0))
		return 57;
	close(wrk);
	close(ctx);
	return 0;
}

TEST_F(sec, worker_gets_the_submitters_access)
{
	struct passed p = { .path = self->path };
	int sv[2], ctx, sub, file;
	struct iopa_cqe c;

	ASSERT_EQ(0, chmod(self->path, 0600));	/* root's file */
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	sub = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, sub);
	file = open(self->path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, file);
	ASSERT_EQ(1, iopa_submit_one(sub, file, 3));
	ASSERT_EQ(0, iopa_send_fd(sv[0], ctx));
	p.sock = sv[1];
	EXPECT_EQ(0, run_as_nobody(0, child_worker, &p));
	EXPECT_EQ(1, iopa_reap_one(sub, &c));
	close(file);
	close(sub);
	close(ctx);
	close(sv[0]);
	close(sv[1]);
}

/*
 * IOPA_IOC_LIST_SUBMITTERS: a context holder lists its own context's
 * submitters; every context's (other users' processes) needs
 * CAP_SYS_ADMIN.
 */
static int child_list(void *arg)
{
	struct passed *p = arg;
	struct iopa_list l = { .entry_size = sizeof(struct iopa_sub_info) };
	int ctx;

	ctx = iopa_recv_fd(p->sock);
	if (ctx < 0)
		return 80;
	if (iopa_ioctl(ctx, IOPA_IOC_LIST_SUBMITTERS, &l) || l.total != 1)
		return 81;
	l.flags = IOPA_LIST_F_ALL;
	if (iopa_ioctl(ctx, IOPA_IOC_LIST_SUBMITTERS, &l) != -EPERM)
		return 82;
	close(ctx);
	return 0;
}

TEST_F(sec, list_all_needs_cap_sys_admin)
{
	struct passed p = { .path = self->path };
	struct iopa_list l = {
		.flags = IOPA_LIST_F_ALL,
		.entry_size = sizeof(struct iopa_sub_info),
	};
	int sv[2], ctx, sub, ctx2, sub2;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	sub = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, sub);
	/* another context's submitter: not the child's to see */
	ctx2 = iopa_open_ctx();
	ASSERT_LE(0, ctx2);
	sub2 = iopa_submitter_create(ctx2, 1);
	ASSERT_LE(0, sub2);
	ASSERT_EQ(0, iopa_ioctl(ctx, IOPA_IOC_LIST_SUBMITTERS, &l));
	EXPECT_LE(2U, l.total);
	ASSERT_EQ(0, iopa_send_fd(sv[0], ctx));
	p.sock = sv[1];
	EXPECT_EQ(0, run_as_nobody(0, child_list, &p));
	close(sub2);
	close(ctx2);
	close(sub);
	close(ctx);
	close(sv[0]);
	close(sv[1]);
}

/*
 * A job names its file by an fd that can do I/O: an O_PATH fd (which
 * grants no access to the file) is refused like a closed one.
 */
TEST_F(sec, job_needs_an_open_file)
{
	int ctx, sub, pfd;
	struct iopa_stats st;

	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	sub = iopa_submitter_create(ctx, 1);
	ASSERT_LE(0, sub);
	pfd = open(self->path, O_PATH | O_CLOEXEC);
	ASSERT_LE(0, pfd);
	EXPECT_EQ(-EBADF, iopa_submit_one(sub, pfd, 1));
	ASSERT_EQ(0, iopa_get_stats(sub, &st));
	EXPECT_EQ(0ULL, st.submitted);
	close(pfd);
	close(sub);
	close(ctx);
}

/* sysfs: tunables 0644 (root writes), stats/ 0444. */
static int check_sysfs_modes(const char *dir, mode_t want, unsigned int *n)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat sb;
	DIR *d = opendir(dir);
	int bad = 0;

	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strcmp(de->d_name, "uevent") ||
		    !strcmp(de->d_name, "dev"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (lstat(path, &sb) || !S_ISREG(sb.st_mode))
			continue;
		(*n)++;
		if ((sb.st_mode & 0777) != want) {
			fprintf(stderr, "# %s: mode %o, not %o\n", path,
				sb.st_mode & 0777, want);
			bad++;
		}
	}
	closedir(d);
	return bad;
}

TEST_F(sec, sysfs_modes)
{
	unsigned int n = 0, nstats = 0;

	EXPECT_EQ(0, check_sysfs_modes(IOPA_SYSFS, 0644, &n));
	EXPECT_EQ(0, check_sysfs_modes(IOPA_SYSFS "/stats", 0444, &nstats));
	/* 3 context caps + max_total_jobs + 9 controller files + policy */
	EXPECT_LE(14U, n);
	EXPECT_LE(12U, nstats);
}

static int child_sysfs(void *arg)
{
	uint64_t v;
	int fd;

	(void)arg;
	if (iopa_sysfs_read("max_jobs", &v) || iopa_sysfs_read("stats/jobs", &v))
		return 60;
	fd = open(IOPA_SYSFS "/max_jobs", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES)
		return 61;
	fd = open(IOPA_SYSFS "/increase_threshold", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 || errno != EACCES)
		return 62;
	return 0;
}

TEST_F(sec, sysfs_others_read_only)
{
	EXPECT_EQ(0, run_as_nobody(0, child_sysfs, NULL));
}

/* ---- memory: charged to the submitter's memory cgroup ------------------ */

/* Does the space-separated list in @file hold @word? */
static bool cg_has(const char *file, const char *word)
{
	char buf[256], *tok, *save = NULL;
	ssize_t n;
	int fd = open(file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = 0;
	for (tok = strtok_r(buf, " \n", &save); tok;
	     tok = strtok_r(NULL, " \n", &save))
		if (!strcmp(tok, word))
			return true;
	return false;
}

/* A field of memory.stat, or -1. */
static long long cg_stat(const char *field)
{
	char line[256];
	long long v = -1;
	size_t len = strlen(field);
	FILE *f = fopen(CG "/memory.stat", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, field, len) && line[len] == ' ') {
			v = atoll(line + len + 1);
			break;
		}
	}
	fclose(f);
	return v;
}

/*
 * The job objects are SLAB_ACCOUNT: CG_JOBS jobs submitted from a cgroup
 * raise its slab usage by at least 64 bytes each, and closing the
 * submitter gives it back.
 */
TEST_F(sec, jobs_charged_to_memcg)
{
	int ctx, sub[2], file, i, go[2], done[2], st;
	long long before, during, after;
	char buf[32];
	pid_t pid;

	if (access(CG_ROOT "/cgroup.controllers", F_OK)) {
		mkdir(CG_ROOT, 0755);
		if (mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL))
			SKIP(return, "no cgroup v2 (%s)", strerror(errno));
		self->cg_mounted = true;
	}
	if (!cg_has(CG_ROOT "/cgroup.subtree_control", "memory")) {
		if (iopa_write_str(CG_ROOT "/cgroup.subtree_control", "+memory"))
			SKIP(return, "no memory controller");
		self->cg_memory_added = true;
	}
	rmdir(CG);
	ASSERT_EQ(0, mkdir(CG, 0755));
	self->cg_made = true;
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(done, O_CLOEXEC));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char c = 0;

		close(go[1]);
		close(done[0]);

		snprintf(buf, sizeof(buf), "%d", getpid());
		if (iopa_write_str(CG "/cgroup.procs", buf))
			_exit(70);
		if (iopa_write_full(done[1], &c, 1))
			_exit(71);
		if (iopa_read_full(go[0], &c, 1))	/* measured "before" */
			_exit(72);
		ctx = iopa_open_ctx();
		file = open(self->path, O_RDONLY | O_CLOEXEC);
		if (ctx < 0 || file < 0)
			_exit(73);
		for (i = 0; i < 2; i++) {
			sub[i] = iopa_submitter_create(ctx, 1);
			if (sub[i] < 0 ||
			    iopa_submit_many(sub[i], file, 0, CG_JOBS / 2) !=
			    CG_JOBS / 2)
				_exit(74);
		}
		if (iopa_write_full(done[1], &c, 1))
			_exit(75);
		if (iopa_read_full(go[0], &c, 1))	/* measured "during" */
			_exit(76);
		close(sub[0]);
		close(sub[1]);
		close(ctx);
		if (iopa_write_full(done[1], &c, 1))
			_exit(77);
		iopa_read_full(go[0], &c, 1);
		_exit(0);
	}
	self->child = pid;
	close(go[0]);
	close(done[1]);
	ASSERT_EQ(0, iopa_read_full(done[0], buf, 1));
	before = cg_stat("slab");
	ASSERT_EQ(0, iopa_write_full(go[1], "g", 1));
	ASSERT_EQ(0, iopa_read_full(done[0], buf, 1));
	during = cg_stat("slab");
	ASSERT_EQ(0, iopa_write_full(go[1], "g", 1));
	ASSERT_EQ(0, iopa_read_full(done[0], buf, 1));
	after = cg_stat("slab");
	ASSERT_EQ(0, iopa_write_full(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
		TH_LOG("child status %#x", st);
	TH_LOG("memcg slab: before %lld, with %d jobs %lld, after close %lld",
	       before, CG_JOBS, during, after);
	ASSERT_LE(0LL, before);
	EXPECT_LE(before + 64LL * CG_JOBS, during);
	EXPECT_GE(before + 16LL * CG_JOBS, after);
	close(go[1]);
	close(done[0]);
}

/*
 * The files jobs pin are charged to the submitting user, as files in
 * flight with SCM_RIGHTS are (RLIMIT_NOFILE, ETOOMANYREFS): before, a
 * user could pin max_total_jobs files beyond its limit.
 */
TEST_F(sec, pinned_files_charged_to_user)
{
	ASSERT_EQ(0, set_node(_metadata, self, IOPA_GROUP, 0660));
	EXPECT_EQ(0, run_as_nobody(IOPA_GROUP, child_pin_limit, self->path));
}

TEST_HARNESS_MAIN
