// SPDX-License-Identifier: GPL-2.0
/*
 * iopa root's commands on any submitter (IOPA_FEAT_ADMIN,
 * IOPA_IOC_SUB_ADMIN): pin and unpin the limit, set bounds, policy and
 * weight of another context's (another process's) submitter by the ids
 * the listing gives; CAP_SYS_ADMIN only; -ESRCH for a submitter that is
 * not open, also when it closes while commands race with the close;
 * bad arguments -EINVAL / -EFAULT.
 */
#include "iopa_test.h"

#include <grp.h>
#include <sched.h>
#include <sys/mman.h>

#define NOBODY		65534

FIXTURE(admin) {
	int ctx;	/* the admin's context */
	int octx;	/* the owner's context */
	int osub;	/* the owner's submitter, adaptive */
	uint32_t ctx_id, sub_id;	/* osub's ids */
};

/* The ids of the submitter of context @ctx (its only one). */
static int ids_of(int ctx, uint32_t *ctx_id, uint32_t *sub_id)
{
	struct iopa_sub_info info;
	struct iopa_list l = {
		.subs = (uintptr_t)&info, .nr = 1, .entry_size = sizeof(info),
	};
	int r = iopa_ioctl(ctx, IOPA_IOC_LIST_SUBMITTERS, &l);

	if (r < 0)
		return r;
	if (l.filled != 1)
		return -ENOENT;
	*ctx_id = info.ctx_id;
	*sub_id = info.sub_id;
	return 0;
}

static int sub_admin(int ctx, uint32_t ctx_id, uint32_t sub_id,
		     struct iopa_sub_admin *a)
{
	a->ctx_id = ctx_id;
	a->sub_id = sub_id;
	return iopa_ioctl(ctx, IOPA_IOC_SUB_ADMIN, a);
}

static int admin_pin(int ctx, uint32_t ctx_id, uint32_t sub_id,
		     uint32_t limit)
{
	struct iopa_sub_admin a = {
		.op = IOPA_ADMIN_SET_LIMIT, .limit.limit = limit,
	};

	return sub_admin(ctx, ctx_id, sub_id, &a);
}

FIXTURE_SETUP(admin)
{
	struct iopa_features f;

	self->ctx = self->octx = self->osub = -1;
	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	if (!(f.features & IOPA_FEAT_ADMIN))
		SKIP(return, "module without IOPA_FEAT_ADMIN");
	if (geteuid() != 0)
		SKIP(return, "needs CAP_SYS_ADMIN");
	self->octx = iopa_open_ctx();
	ASSERT_LE(0, self->octx);
	self->osub = iopa_submitter_create(self->octx, 0);
	ASSERT_LE(0, self->osub);
	ASSERT_EQ(0, ids_of(self->octx, &self->ctx_id, &self->sub_id));
}

FIXTURE_TEARDOWN(admin)
{
	iopa_close(&self->osub);
	iopa_close(&self->octx);
	iopa_close(&self->ctx);
}

TEST_F(admin, pin_and_unpin_another_contexts_submitter)
{
	ASSERT_EQ(0, admin_pin(self->ctx, self->ctx_id, self->sub_id, 5));
	EXPECT_EQ(5, iopa_get_limit(self->osub));
	EXPECT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(self->osub));
	ASSERT_EQ(0, admin_pin(self->ctx, self->ctx_id, self->sub_id, 0));
	EXPECT_EQ(0, iopa_get_limit_flags(self->osub));
}

TEST_F(admin, bounds_policy_and_weight)
{
	struct iopa_sub_admin a = {
		.op = IOPA_ADMIN_SET_ADAPT,
		.adapt = { .policy = IOPA_POLICY_HILLCLIMB, .min = 2, .max = 3,
			   .flags = IOPA_ADAPT_F_WEIGHT, .weight = 50 },
	};
	struct iopa_state st;

	ASSERT_EQ(0, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	ASSERT_EQ(0, iopa_get_state(self->osub, &st));
	EXPECT_EQ(2U, st.min);
	EXPECT_EQ(3U, st.max);
	EXPECT_EQ((uint32_t)IOPA_POLICY_HILLCLIMB, st.policy);
	EXPECT_EQ(50U, st.weight);
	/* The bounds hold at once. */
	EXPECT_LE(2U, st.limit);
	EXPECT_GE(3U, st.limit);
}

/* Another process's submitter, as the listing of every context shows it. */
TEST_F(admin, pins_another_processes_submitter)
{
	int go[2], ready[2], st;
	uint32_t ids[2];
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int ctx = iopa_open_ctx(), sub;

		sub = ctx < 0 ? ctx : iopa_submitter_create(ctx, 0);
		if (sub < 0 || ids_of(ctx, &ids[0], &ids[1]))
			_exit(1);
		if (iopa_write_full(ready[1], ids, sizeof(ids)) ||
		    iopa_read_full(go[0], &c, 1))
			_exit(2);
		/* Pinned by root meanwhile. */
		_exit(iopa_get_limit(sub) == 7 &&
		      iopa_get_limit_flags(sub) == IOPA_LIMIT_F_FIXED ? 0 : 3);
	}
	close(ready[1]);
	close(go[0]);
	ASSERT_EQ(0, iopa_read_full(ready[0], ids, sizeof(ids)));
	EXPECT_EQ(0, admin_pin(self->ctx, ids[0], ids[1], 7));
	ASSERT_EQ(0, iopa_write_full(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	close(go[1]);
	close(ready[0]);
}

TEST_F(admin, needs_cap_sys_admin)
{
	int st;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* The admin's context fd, inherited: not the privilege. */
		if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
			_exit(100);
		_exit(admin_pin(self->ctx, self->ctx_id, self->sub_id, 5) ==
		      -EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(0, iopa_get_limit_flags(self->osub));
}

TEST_F(admin, no_such_submitter_esrch)
{
	EXPECT_EQ(-ESRCH, admin_pin(self->ctx, self->ctx_id,
				    self->sub_id + 1000, 5));
	EXPECT_EQ(-ESRCH, admin_pin(self->ctx, 0, self->sub_id, 5));
	iopa_close(&self->osub);
	EXPECT_EQ(-ESRCH, admin_pin(self->ctx, self->ctx_id, self->sub_id, 5));
}

TEST_F(admin, bad_args)
{
	struct iopa_sub_admin a = { .op = IOPA_ADMIN_SET_LIMIT };
	long pg = sysconf(_SC_PAGESIZE);
	void *bad;

	a.reserved0 = 1;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	a.reserved0 = 0;
	a.reserved[1] = 1;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	a.reserved[1] = 0;
	a.op = 0;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	a.op = 3;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	/* The other command's argument must be zero. */
	a.op = IOPA_ADMIN_SET_LIMIT;
	a.adapt.min = 1;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	a.adapt.min = 0;
	a.op = IOPA_ADMIN_SET_ADAPT;
	a.limit.limit = 3;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	/* The command's own checks. */
	a.op = IOPA_ADMIN_SET_LIMIT;
	a.limit.limit = IOPA_LIMIT_MAX + 1;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	a.limit.limit = 0;
	a.op = IOPA_ADMIN_SET_ADAPT;
	a.adapt.min = 4;
	a.adapt.max = 2;
	EXPECT_EQ(-EINVAL, sub_admin(self->ctx, self->ctx_id, self->sub_id, &a));
	/* Only on a context fd. */
	EXPECT_EQ(-ENOTTY, iopa_ioctl(self->osub, IOPA_IOC_SUB_ADMIN, &a));
	bad = mmap(NULL, pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad);
	EXPECT_EQ(-EFAULT, iopa_ioctl(self->ctx, IOPA_IOC_SUB_ADMIN, bad));
	munmap(bad, pg);
	EXPECT_EQ(0, iopa_get_limit_flags(self->osub));
}

/* The racing admin thread of race_with_close. */
struct racer {
	int ctx;
	uint32_t ctx_id;
	atomic_uint sub_id;	/* the submitter to hit now */
	atomic_bool stop;
	atomic_int bad;		/* answers other than 0 and -ESRCH */
	atomic_int done, esrch;
};

static void *racer_fn(void *arg)
{
	struct racer *r = arg;
	unsigned int i = 0;

	while (!atomic_load(&r->stop)) {
		struct iopa_sub_admin a = { .op = IOPA_ADMIN_SET_LIMIT };
		int ret;

		if (i % 2) {
			a.op = IOPA_ADMIN_SET_ADAPT;
			a.adapt.policy = i % 4 == 1 ? IOPA_POLICY_BRACKET :
						      IOPA_POLICY_IOPA;
			a.adapt.min = 1;
		} else {
			a.limit.limit = i % 4 ? 0 : 3;
		}
		ret = sub_admin(r->ctx, r->ctx_id, atomic_load(&r->sub_id), &a);
		if (ret == -ESRCH)
			atomic_fetch_add(&r->esrch, 1);
		else if (ret)
			atomic_fetch_add(&r->bad, 1);
		atomic_fetch_add(&r->done, 1);
		i++;
	}
	return NULL;
}

/*
 * Commands racing with the owner's last close: each answers 0 or -ESRCH,
 * and a closed submitter is left alone (no warning, no leak: the debug
 * kernel's checks watch this test).
 */
TEST_F_TIMEOUT(admin, race_with_close, 60)
{
	struct racer r = { .ctx = self->ctx, .ctx_id = self->ctx_id };
	pthread_t th;
	int i, before;

	atomic_store(&r.sub_id, self->sub_id);
	ASSERT_EQ(0, pthread_create(&th, NULL, racer_fn, &r));
	for (i = 0; i < 300; i++) {
		/* Let the racer hit this one at least once, then close it. */
		before = atomic_load(&r.done);
		while (atomic_load(&r.done) < before + 2)
			sched_yield();
		iopa_close(&self->osub);
		self->osub = iopa_submitter_create(self->octx, 0);
		ASSERT_LE(0, self->osub);
		ASSERT_EQ(0, ids_of(self->octx, &self->ctx_id, &self->sub_id));
		atomic_store(&r.sub_id, self->sub_id);
	}
	atomic_store(&r.stop, true);
	pthread_join(th, NULL);
	TH_LOG("%d commands, %d on a closed submitter", atomic_load(&r.done),
	       atomic_load(&r.esrch));
	EXPECT_EQ(0, atomic_load(&r.bad));
}

TEST_HARNESS_MAIN
