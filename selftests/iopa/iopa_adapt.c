// SPDX-License-Identifier: GPL-2.0
/*
 * iopa adaptive-limit tests (IOPA_FEAT_ADAPTIVE):
 *
 *  - aabi: SET_ADAPT / GET_STATE / SET_LIMIT 0 / SUBMITTER_CREATE limit 0,
 *    success and error paths, one behaviour each, no load.
 *  - tun: the controller's sysfs tunables: defaults, round trips, bad
 *    values (EINVAL, old value kept), effect on new submitters.  Every
 *    value is saved in the setup and written back in the teardown.
 *  - load (variants iopa, hillclimb): the controller under real load with
 *    50/100/300 ms cycles: on a null_blk that gains from parallelism the
 *    limit rises; on one that does not (1000 IOPS at any depth) it stays
 *    low; bounds, fixed limits, two submitters, the trace events and
 *    CPU-bound jobs.  The tests that need a particular null_blk reload
 *    the module with their parameters and put it back as they found it.
 *
 * Run as root with the module loaded; the load tests want null_blk and
 * modprobe, and the trace test tracefs (each skips without).
 */
#include "iopa_test.h"

#include <sys/mount.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>

static long nr_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? n : 1;
}

/* A dev_t as the kernel keeps it (MAJOR << 20 | MINOR): struct iopa_state. */
static uint32_t kdev(dev_t d)
{
	return (uint32_t)((major(d) << 20) | minor(d));
}

static bool state_has_dev(const struct iopa_state *st, uint32_t dev)
{
	uint32_t i;

	for (i = 0; i < st->nr_devs && i < IOPA_STATE_MAX_DEVS; i++)
		if (st->devs[i] == dev)
			return true;
	return false;
}

#define LOG_STATE(st) \
	TH_LOG("state: limit %u mode %u policy %u flags %#x min %u max %u " \
	       "inflight %u pending %u cycle_ms %u r %u cycles %llu " \
	       "changes %llu bytes/s %llu jobs/s %llu nr_devs %u", \
	       (st)->limit, (st)->mode, (st)->policy, (st)->flags, (st)->min, \
	       (st)->max, (st)->inflight, (st)->pending, (st)->cycle_ms, \
	       (st)->r_permille, (unsigned long long)(st)->cycles, \
	       (unsigned long long)(st)->changes, \
	       (unsigned long long)(st)->bytes_per_s, \
	       (unsigned long long)(st)->jobs_per_s, (st)->nr_devs)

/* ---- the controller's tunables ----------------------------------------- */

enum {
	T_INC, T_DEC, T_FAST, T_NORMAL, T_HOLD, T_HISTORY, T_INIT, T_FAST_CAP,
	T_MAX_LIMIT, T_GAIN, NR_NUM_TUNABLES
};

static const char * const num_tunables[NR_NUM_TUNABLES] = {
	[T_INC]		= "increase_threshold",
	[T_DEC]		= "decrease_threshold",
	[T_FAST]	= "fast_cycle_ms",
	[T_NORMAL]	= "normal_cycle_ms",
	[T_HOLD]	= "hold_cycle_ms",
	[T_HISTORY]	= "history",
	[T_INIT]	= "init_limit",
	[T_FAST_CAP]	= "fast_cap",
	[T_MAX_LIMIT]	= "max_limit",
	[T_GAIN]	= "gain_threshold",
};

/* Documented defaults; max_limit's depends on the CPUs. */
static uint64_t num_default(int i)
{
	static const uint64_t def[NR_NUM_TUNABLES] = {
		[T_INC] = 1100, [T_DEC] = 900, [T_FAST] = 500,
		[T_NORMAL] = 1000, [T_HOLD] = 6000, [T_HISTORY] = 3,
		[T_INIT] = 0, [T_FAST_CAP] = 0, [T_GAIN] = 1050,
	};
	uint64_t m;

	if (i != T_MAX_LIMIT)
		return def[i];
	/* not derived from the CPUs: an I/O knee is depth x latency */
	m = 256;
	return m < IOPA_LIMIT_MAX ? m : IOPA_LIMIT_MAX;
}

struct tunables {
	uint64_t val[NR_NUM_TUNABLES];
	bool saved[NR_NUM_TUNABLES];
	char policy[32];
	bool policy_saved;
};

/*
 * Save every tunable, writing each back to check that we may.  Returns
 * 0, -ENOENT if one is missing (a module without them), -EACCES / -EPERM
 * if we may not write, or another -errno.
 */
static int tunables_save(struct tunables *t)
{
	int i, r;

	memset(t, 0, sizeof(*t));
	for (i = 0; i < NR_NUM_TUNABLES; i++) {
		r = iopa_sysfs_read(num_tunables[i], &t->val[i]);
		/*
		 * No tunables at all: a module without a controller (SKIP);
		 * some but not this one: a module that lost one (fail).
		 */
		if (r == -ENOENT && i)
			return -EPROTO;
		if (r)
			return r;
		r = iopa_sysfs_write(num_tunables[i], t->val[i]);
		if (r)
			return r;
		t->saved[i] = true;
	}
	r = iopa_sysfs_read_str("default_policy", t->policy, sizeof(t->policy));
	if (r)
		return r;
	r = iopa_sysfs_write_str("default_policy", t->policy);
	if (r)
		return r;
	t->policy_saved = true;
	return 0;
}

/*
 * Write back what tunables_save() saved.  Any valid increase and
 * decrease threshold are compatible (decrease < 1000 < increase), so the
 * order does not matter.  Returns the number of values that could not be
 * written back.
 */
static int tunables_restore(const struct tunables *t)
{
	uint64_t v;
	char buf[32];
	int i, bad = 0;

	for (i = 0; i < NR_NUM_TUNABLES; i++) {
		if (!t->saved[i])
			continue;
		if (!iopa_sysfs_read(num_tunables[i], &v) && v == t->val[i])
			continue;
		if (iopa_sysfs_write(num_tunables[i], t->val[i]))
			bad++;
	}
	if (t->policy_saved &&
	    (iopa_sysfs_read_str("default_policy", buf, sizeof(buf)) ||
	     strcmp(buf, t->policy)) &&
	    iopa_sysfs_write_str("default_policy", t->policy))
		bad++;
	return bad;
}

/* ---- null_blk ------------------------------------------------------------ */

#define NULLB_DEV	"/dev/nullb0"
#define NULLB_MOD	"/sys/module/null_blk"

/*
 * Gains from parallelism: 32 tags, 200 us per request (timer
 * completion), so up to ~160k IOPS at depth 32 against ~5k at depth 1.
 */
#define NULLB_DEEP	"queue_mode=2 irqmode=2 completion_nsec=200000 " \
			"hw_queue_depth=32 memory_backed=1 gb=1"
/* "Throttled": one tag, 1 ms per request: 1000 IOPS at any depth. */
#define NULLB_THROTTLED	"queue_mode=2 irqmode=2 completion_nsec=1000000 " \
			"hw_queue_depth=1 submit_queues=1 memory_backed=1 gb=1"

/* The parameters a test changes, and nr_devices, as found at start-up. */
static const char * const nullb_params[] = {
	"nr_devices", "queue_mode", "irqmode", "completion_nsec",
	"hw_queue_depth", "submit_queues", "memory_backed", "gb",
};

struct nullb_snapshot {
	bool taken;
	bool loaded;
	char params[512];	/* "name=value ..." of nullb_params[] */
};

/* The state null_blk was in when this program started (see the constructor). */
static struct nullb_snapshot nullb_found;

static void nullb_snapshot_take(struct nullb_snapshot *s)
{
	size_t i, len = 0;

	memset(s, 0, sizeof(*s));
	s->taken = true;
	s->loaded = access(NULLB_MOD "/parameters", F_OK) == 0;
	if (!s->loaded)
		return;
	for (i = 0; i < IOPA_ARRAY_SIZE(nullb_params); i++) {
		char path[128], val[64];
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), NULLB_MOD "/parameters/%s",
			 nullb_params[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, val, sizeof(val) - 1);
		close(fd);
		if (n <= 0)
			continue;
		val[n] = 0;
		val[strcspn(val, "\n")] = 0;
		len += snprintf(s->params + len, sizeof(s->params) - len,
				"%s%s=%s", len ? " " : "", nullb_params[i], val);
		if (len >= sizeof(s->params))
			break;
	}
}

/* Unload null_blk; retried while something still holds a device. */
static int nullb_unload(void)
{
	int i, r = 0;

	for (i = 0; i < 50; i++) {
		if (access(NULLB_MOD, F_OK))
			return 0;
		r = iopa_run_cmd("modprobe -r null_blk");
		if (r == 127)
			return -ENOENT;
		if (access(NULLB_MOD, F_OK))
			return 0;
		poll(NULL, 0, 50);
	}
	return -EBUSY;
}

/*
 * (Re)load null_blk with @params; 0 once /dev/nullb0 is there, -ENOENT
 * if modprobe or the module is missing, -EBUSY if it cannot be unloaded.
 * *@changed is set once null_blk is no longer as it was.
 */
static int nullb_load(const char *params, bool *changed)
{
	bool was = access(NULLB_MOD, F_OK) == 0;
	char cmd[600];
	int i, r;

	r = nullb_unload();
	if (r)
		return r;
	if (was)
		*changed = true;
	snprintf(cmd, sizeof(cmd), "modprobe null_blk nr_devices=1 %s", params);
	*changed = true;
	r = iopa_run_cmd(cmd);
	if (r)
		return -ENOENT;
	for (i = 0; i < 200; i++) {
		if (!access(NULLB_DEV, F_OK))
			return 0;
		poll(NULL, 0, 10);
	}
	return -ENOENT;
}

/* Put null_blk back as the snapshot found it.  0 or -errno. */
static int nullb_restore(const struct nullb_snapshot *s)
{
	char cmd[600];
	int r;

	if (!s->taken)
		return 0;
	r = nullb_unload();
	if (r || !s->loaded)
		return r;
	snprintf(cmd, sizeof(cmd), "modprobe null_blk %s", s->params);
	return iopa_run_cmd(cmd) ? -EIO : 0;
}

/*
 * A safety net for a test killed by its timeout (its teardown does not
 * run then): the main process puts back the tunables and null_blk as it
 * found them when it exits.  Tests run in children, which _exit().
 */
static struct tunables tunables_found;
static bool tunables_found_ok;
static pid_t main_pid;

__attribute__((constructor)) static void adapt_found(void)
{
	main_pid = getpid();
	if (access(IOPA_SYSFS "/max_limit", F_OK) == 0 && geteuid() == 0)
		tunables_found_ok = tunables_save(&tunables_found) == 0;
	nullb_snapshot_take(&nullb_found);
}

__attribute__((destructor)) static void adapt_put_back(void)
{
	struct nullb_snapshot now;

	if (getpid() != main_pid)
		return;
	if (tunables_found_ok && tunables_restore(&tunables_found))
		fprintf(stderr, "# iopa_adapt: could not restore the tunables\n");
	nullb_snapshot_take(&now);
	if (now.loaded != nullb_found.loaded ||
	    strcmp(now.params, nullb_found.params)) {
		fprintf(stderr, "# iopa_adapt: putting null_blk back as found\n");
		nullb_restore(&nullb_found);
	}
}

/* ---- ABI: SET_ADAPT, GET_STATE, limit 0 ------------------------------------- */

/* The limit a new adaptive submitter starts at, from the tunables. */
#define sysfs_default_policy	iopa_sysfs_default_policy

FIXTURE(aabi) {
	int ctx;
	int sub;	/* adaptive (created with limit 0) */
	int fixed;	/* fixed at 7 */
	int wrk;
	int file;	/* tmpfs job file, O_RDWR */
	char path[64];
};

FIXTURE_SETUP(aabi)
{
	struct iopa_features f;

	self->ctx = self->sub = self->fixed = self->wrk = self->file = -1;
	self->path[0] = 0;
	self->ctx = iopa_open_ctx();
	if (self->ctx == -ENOENT)
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	ASSERT_LE(0, self->ctx);
	ASSERT_EQ(0, iopa_get_features(self->ctx, &f));
	if (!(f.features & IOPA_FEAT_ADAPTIVE))
		SKIP(return, "module without IOPA_FEAT_ADAPTIVE");
	self->sub = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, self->sub);
	self->fixed = iopa_submitter_create(self->ctx, 7);
	ASSERT_LE(0, self->fixed);
	self->wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, self->wrk);
	self->file = iopa_job_file(self->path, O_RDWR);
	ASSERT_LE(0, self->file);
}

FIXTURE_TEARDOWN(aabi)
{
	iopa_close(&self->wrk);
	iopa_close(&self->sub);
	iopa_close(&self->fixed);
	iopa_close(&self->ctx);
	iopa_close(&self->file);
	if (self->path[0])
		unlink(self->path);
}

TEST_F(aabi, features_adaptive)
{
	int fds[] = { self->ctx, self->sub, self->wrk };
	unsigned int i;

	for (i = 0; i < IOPA_ARRAY_SIZE(fds); i++) {
		struct iopa_features f;

		ASSERT_EQ(0, iopa_get_features(fds[i], &f));
		EXPECT_TRUE(!!(f.features & IOPA_FEAT_ADAPTIVE));
		EXPECT_TRUE(!!(f.features & IOPA_FEAT_IOCTL));
		EXPECT_TRUE(!!(f.features & IOPA_FEAT_POLL));
	}
}

/* A new adaptive submitter: the init limit, not fixed, FAST, all zero. */
TEST_F(aabi, create_adaptive)
{
	struct iopa_state st;
	uint64_t fast_ms = 0;
	unsigned int i;

	memset(&st, 0xa5, sizeof(st));
	ASSERT_EQ(0, iopa_ioctl(self->sub, IOPA_IOC_GET_STATE, &st));
	LOG_STATE(&st);
	EXPECT_EQ(iopa_expected_init_limit(sysfs_default_policy()), st.limit);
	EXPECT_EQ((int)st.limit, iopa_get_limit(self->sub));
	EXPECT_NE((__u32)IOPA_MODE_FIXED, st.mode);
	/* a controller starts in FAST; without jobs, no cycle moves it */
	EXPECT_EQ((__u32)IOPA_MODE_FAST, st.mode);
	EXPECT_EQ(0U, st.flags & IOPA_LIMIT_F_FIXED);
	EXPECT_EQ(0, iopa_get_limit_flags(self->sub));
	EXPECT_EQ(sysfs_default_policy(), st.policy);
	EXPECT_EQ(0U, st.min);
	EXPECT_EQ(0U, st.max);
	EXPECT_EQ(0U, st.inflight);
	EXPECT_EQ(0U, st.pending);
	ASSERT_EQ(0, iopa_sysfs_read("fast_cycle_ms", &fast_ms));
	EXPECT_EQ(fast_ms, (uint64_t)st.cycle_ms);
	EXPECT_EQ(0ULL, st.changes);
	EXPECT_EQ(0ULL, st.bytes_per_s);
	EXPECT_EQ(0ULL, st.jobs_per_s);
	EXPECT_EQ(0U, st.nr_devs);
	/* no ratio computed yet */
	EXPECT_EQ(0U, st.r_permille);
	/* nothing of the 0xa5 filler survives in unused fields */
	for (i = 0; i < IOPA_STATE_MAX_DEVS; i++)
		EXPECT_EQ(0U, st.devs[i]);
	EXPECT_EQ((__u32)IOPA_ORDER_FIFO, st.order);
	/* alone, before any cycle: no budget shared, the default weight */
	EXPECT_EQ(0U, st.budget);
	EXPECT_EQ(0U, st.sharers);
	EXPECT_EQ((__u32)IOPA_WEIGHT_DEFAULT, st.weight);
	EXPECT_EQ(0U, st.group_cycles);
}

/*
 * GET_STATE by a caller built for a later ABI, whose struct is larger:
 * the module's part and zeros after it; a size below the first ABI's is
 * EINVAL (Core round 2, item 12: GET_STATE was a fixed-size _IOR).
 */
TEST_F(aabi, get_state_larger_struct)
{
	struct {
		struct iopa_state st;
		unsigned char later[40];
	} big;
	struct iopa_state st;
	unsigned int i;

	ASSERT_EQ((size_t)IOPA_STATE_SIZE_V1, sizeof(st));
	memset(&big, 0xa5, sizeof(big));
	ASSERT_EQ(0, iopa_ioctl(self->sub, _IOR(IOPA_IOC_MAGIC, 0x16,
						 big), &big));
	ASSERT_EQ(0, iopa_ioctl(self->sub, IOPA_IOC_GET_STATE, &st));
	EXPECT_EQ(st.limit, big.st.limit);
	EXPECT_EQ(st.policy, big.st.policy);
	EXPECT_EQ(st.weight, big.st.weight);
	for (i = 0; i < sizeof(big.later); i++)
		EXPECT_EQ(0, big.later[i]) TH_LOG("byte %u after the struct", i);
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, _IOC(_IOC_READ,
		  IOPA_IOC_MAGIC, 0x16, sizeof(st) - 8), &big));
	/* the other directions are other commands */
	EXPECT_EQ(-ENOTTY, iopa_ioctl(self->sub, _IOWR(IOPA_IOC_MAGIC, 0x16,
						    big), &big));
}

TEST_F(aabi, create_fixed)
{
	struct iopa_state st;

	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ(7U, st.limit);
	EXPECT_EQ((__u32)IOPA_MODE_FIXED, st.mode);
	EXPECT_EQ((__u32)IOPA_LIMIT_F_FIXED, st.flags);
	EXPECT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(self->fixed));
	EXPECT_EQ(7, iopa_get_limit(self->fixed));
	/* the policy it will use once unfrozen */
	EXPECT_EQ(sysfs_default_policy(), st.policy);
	EXPECT_EQ(0ULL, st.changes);
}

/* A fixed limit holds whatever max_limit says (up to IOPA_LIMIT_MAX). */
TEST_F(aabi, create_fixed_above_max_limit)
{
	uint64_t max = 0;
	struct iopa_state st;
	int s;

	ASSERT_EQ(0, iopa_sysfs_read("max_limit", &max));
	if (max >= IOPA_LIMIT_MAX)
		SKIP(return, "max_limit is already IOPA_LIMIT_MAX");
	s = iopa_submitter_create(self->ctx, max + 1);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, iopa_get_state(s, &st));
	EXPECT_EQ(max + 1, (uint64_t)st.limit);
	EXPECT_EQ((__u32)IOPA_MODE_FIXED, st.mode);
	close(s);
}

TEST_F(aabi, set_limit_fixes_zero_resumes)
{
	struct iopa_state st;

	ASSERT_EQ(0, iopa_set_limit(self->sub, 3));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(3U, st.limit);
	EXPECT_EQ((__u32)IOPA_MODE_FIXED, st.mode);
	EXPECT_EQ((__u32)IOPA_LIMIT_F_FIXED, st.flags);
	EXPECT_EQ((int)IOPA_LIMIT_F_FIXED, iopa_get_limit_flags(self->sub));

	ASSERT_EQ(0, iopa_set_limit(self->sub, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_NE((__u32)IOPA_MODE_FIXED, st.mode);
	EXPECT_EQ(0U, st.flags);
	EXPECT_EQ(0, iopa_get_limit_flags(self->sub));
	/* adapting again from the limit in force */
	EXPECT_EQ(3U, st.limit);

	/* 0 on an adapting submitter is fine too, and changes nothing */
	ASSERT_EQ(0, iopa_set_limit(self->sub, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_NE((__u32)IOPA_MODE_FIXED, st.mode);
	EXPECT_EQ(3U, st.limit);

	/* the one created fixed resumes too */
	ASSERT_EQ(0, iopa_set_limit(self->fixed, 0));
	EXPECT_EQ(0, iopa_get_limit_flags(self->fixed));
}

/*
 * SET_LIMIT 0 resumes in the policy's starting mode (kernel/ctl.h):
 * iopa ramps again (FAST), hillclimb probes around the limit (NORMAL).
 */
TEST_F(aabi, resume_mode_per_policy)
{
	uint64_t fast_ms = 0, normal_ms = 0;
	struct iopa_state st;

	ASSERT_EQ(0, iopa_sysfs_read("fast_cycle_ms", &fast_ms));
	ASSERT_EQ(0, iopa_sysfs_read("normal_cycle_ms", &normal_ms));

	ASSERT_EQ(0, iopa_set_adapt(self->fixed, IOPA_POLICY_IOPA, 0, 0));
	ASSERT_EQ(0, iopa_set_limit(self->fixed, 0));
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_IOPA, st.policy);
	EXPECT_EQ((__u32)IOPA_MODE_FAST, st.mode);
	EXPECT_EQ(fast_ms, (uint64_t)st.cycle_ms);

	ASSERT_EQ(0, iopa_set_limit(self->fixed, 7));
	ASSERT_EQ(0, iopa_set_adapt(self->fixed, IOPA_POLICY_HILLCLIMB, 0, 0));
	/* a fixed submitter stays fixed when its policy changes */
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ((__u32)IOPA_MODE_FIXED, st.mode);
	EXPECT_EQ((__u32)IOPA_POLICY_HILLCLIMB, st.policy);
	ASSERT_EQ(0, iopa_set_limit(self->fixed, 0));
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ((__u32)IOPA_MODE_NORMAL, st.mode);
	EXPECT_EQ(normal_ms, (uint64_t)st.cycle_ms);
	EXPECT_EQ(7U, st.limit);
}

TEST_F(aabi, set_adapt_policy)
{
	struct iopa_state st;
	uint32_t def = sysfs_default_policy();

	/* the policy it has already: nothing starts over (still FAST) */
	ASSERT_NE(0U, def);
	ASSERT_EQ(0, iopa_set_adapt(self->sub, def, 0, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(def, st.policy);
	EXPECT_EQ((__u32)IOPA_MODE_FAST, st.mode);

	/* another policy starts over: iopa in FAST, hillclimb in NORMAL */
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_HILLCLIMB, 0, 0));
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_IOPA, 0, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_IOPA, st.policy);
	EXPECT_EQ((__u32)IOPA_MODE_FAST, st.mode);
	/* KEEP keeps it */
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 0, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_IOPA, st.policy);
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_HILLCLIMB, 0, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_HILLCLIMB, st.policy);
	EXPECT_EQ((__u32)IOPA_MODE_NORMAL, st.mode);
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 0, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_HILLCLIMB, st.policy);
	/* bracket, too, probes around the limit it is given */
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_BRACKET, 0, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_BRACKET, st.policy);
	EXPECT_EQ((__u32)IOPA_MODE_NORMAL, st.mode);
}

/* Compare what SET_ADAPT may change: it must not have. */
#define EXPECT_ADAPT_SAME(a, b) do { \
	EXPECT_EQ((a)->limit, (b)->limit); \
	EXPECT_EQ((a)->policy, (b)->policy); \
	EXPECT_EQ((a)->min, (b)->min); \
	EXPECT_EQ((a)->max, (b)->max); \
	EXPECT_EQ((a)->mode, (b)->mode); \
} while (0)

TEST_F(aabi, set_adapt_bad_policy)
{
	static const uint32_t bad[] = {
		IOPA_POLICY_MAX + 1, IOPA_POLICY_MAX + 2, 100, 1U << 31,
		UINT32_MAX,
	};
	struct iopa_state before, after;
	unsigned int i;

	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 2, 3));
	ASSERT_EQ(0, iopa_get_state(self->sub, &before));
	for (i = 0; i < IOPA_ARRAY_SIZE(bad); i++) {
		/* even together with bounds that would be fine */
		EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, bad[i], 1, 5))
			TH_LOG("policy %u accepted", bad[i]);
	}
	ASSERT_EQ(0, iopa_get_state(self->sub, &after));
	EXPECT_ADAPT_SAME(&before, &after);
}

TEST_F(aabi, set_adapt_min_above_max)
{
	struct iopa_state before, after;

	ASSERT_EQ(0, iopa_get_state(self->sub, &before));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 5, 4));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 2, 1));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP,
					  IOPA_LIMIT_MAX, 1));
	/* a rejected call changes nothing, not even the policy */
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_IOPA, 5, 4));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_HILLCLIMB, 5, 4));
	ASSERT_EQ(0, iopa_get_state(self->sub, &after));
	EXPECT_ADAPT_SAME(&before, &after);

	/* 0 is "no bound", whatever the other one is; min == max is fine */
	EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 5, 0));
	EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 0, 3));
	EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 4, 4));
	ASSERT_EQ(0, iopa_get_state(self->sub, &after));
	EXPECT_EQ(4U, after.min);
	EXPECT_EQ(4U, after.max);
}

TEST_F(aabi, set_adapt_above_limit_max)
{
	struct iopa_state before, after;

	ASSERT_EQ(0, iopa_get_state(self->sub, &before));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP,
					  IOPA_LIMIT_MAX + 1, 0));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 0,
					  IOPA_LIMIT_MAX + 1));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP,
					  IOPA_LIMIT_MAX + 1,
					  IOPA_LIMIT_MAX + 1));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP,
					  UINT32_MAX, 0));
	EXPECT_EQ(-EINVAL, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 1,
					  UINT32_MAX));
	ASSERT_EQ(0, iopa_get_state(self->sub, &after));
	EXPECT_ADAPT_SAME(&before, &after);
	/* the largest is accepted */
	EXPECT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 1,
				    IOPA_LIMIT_MAX));
	ASSERT_EQ(0, iopa_get_state(self->sub, &after));
	EXPECT_EQ((__u32)IOPA_LIMIT_MAX, after.max);
}

TEST_F(aabi, set_adapt_flags_reserved)
{
	struct iopa_state before, after;
	struct iopa_adapt a;
	unsigned int i;

	ASSERT_EQ(0, iopa_get_state(self->sub, &before));
	memset(&a, 0, sizeof(a));
	a.policy = IOPA_POLICY_IOPA;
	a.min = 2;
	a.flags = 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	a.flags = 1U << 31;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	for (i = 0; i < IOPA_ARRAY_SIZE(a.reserved); i++) {
		memset(&a, 0, sizeof(a));
		a.policy = IOPA_POLICY_IOPA;
		a.min = 2;
		a.reserved[i] = i ? 1U << 31 : 1;
		EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a))
			TH_LOG("reserved %u != 0 accepted", i);
	}
	ASSERT_EQ(0, iopa_get_state(self->sub, &after));
	EXPECT_ADAPT_SAME(&before, &after);
}

/*
 * IOPA_ADAPT_F_WEIGHT: 1..10000, a weight without the flag or the flag
 * without a valid weight is EINVAL; above the default needs
 * CAP_SYS_NICE (a child that dropped root gets EPERM).
 */
TEST_F(aabi, set_adapt_weight)
{
	struct iopa_adapt a = { .policy = IOPA_POLICY_KEEP };
	struct iopa_state st;
	int status;
	pid_t pid;

	a.weight = 50;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	a.flags = IOPA_ADAPT_F_WEIGHT;
	a.weight = 0;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	a.weight = IOPA_WEIGHT_MAX + 1;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	a.flags = IOPA_ADAPT_F_WEIGHT << 1;
	a.weight = 0;
	EXPECT_EQ(-EINVAL, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_WEIGHT_DEFAULT, st.weight);

	a.flags = IOPA_ADAPT_F_WEIGHT;
	a.weight = 50;
	ASSERT_EQ(0, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(50U, st.weight);

	/* a process without CAP_SYS_NICE: down yes, above 100 no */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct iopa_adapt b = {
			.policy = IOPA_POLICY_KEEP,
			.flags = IOPA_ADAPT_F_WEIGHT,
			.weight = IOPA_WEIGHT_DEFAULT + 1,
		};

		if (setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(3);
		if (iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &b) != -EPERM)
			_exit(1);
		b.weight = IOPA_WEIGHT_DEFAULT;
		_exit(iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &b) ? 2 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_WEIGHT_DEFAULT, st.weight);

	/* root may give more */
	a.weight = IOPA_WEIGHT_MAX;
	ASSERT_EQ(0, iopa_ioctl(self->sub, IOPA_IOC_SET_ADAPT, &a));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_WEIGHT_MAX, st.weight);
}

TEST_F(aabi, new_ioctls_wrong_fd_enotty)
{
	int fds[] = { self->ctx, self->wrk };
	unsigned int i;

	for (i = 0; i < IOPA_ARRAY_SIZE(fds); i++) {
		struct iopa_state st;
		struct iopa_adapt a = { .policy = IOPA_POLICY_KEEP };

		memset(&st, 0, sizeof(st));
		EXPECT_EQ(-ENOTTY, iopa_ioctl(fds[i], IOPA_IOC_GET_STATE, &st))
			TH_LOG("GET_STATE on fd kind %u", i);
		EXPECT_EQ(-ENOTTY, iopa_ioctl(fds[i], IOPA_IOC_SET_ADAPT, &a))
			TH_LOG("SET_ADAPT on fd kind %u", i);
	}
}

/* The bounds clamp an adapting limit at once. */
TEST_F(aabi, set_adapt_clamps_now)
{
	uint64_t max_limit = 0;
	struct iopa_state st;
	uint32_t l0, lo;

	ASSERT_EQ(0, iopa_sysfs_read("max_limit", &max_limit));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	l0 = st.limit;
	lo = l0 + 2;
	if (lo > max_limit)
		SKIP(return, "max_limit %llu too small", (unsigned long long)max_limit);

	/* a minimum above the limit raises it */
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, lo, 0));
	EXPECT_EQ((int)lo, iopa_get_limit(self->sub));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(lo, st.limit);
	EXPECT_EQ(lo, st.min);
	EXPECT_EQ(0U, st.max);
	EXPECT_NE((__u32)IOPA_MODE_FIXED, st.mode);

	/* a maximum below it lowers it */
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 0, 1));
	EXPECT_EQ(1, iopa_get_limit(self->sub));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(1U, st.limit);
	EXPECT_EQ(0U, st.min);
	EXPECT_EQ(1U, st.max);

	/*
	 * Dropping the bounds leaves the limit where it is, except that a
	 * bracket start-up that has measured nothing (no job ran here) gets
	 * back where it began: its start.
	 */
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP, 0, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	if (st.policy == IOPA_POLICY_BRACKET && st.mode == IOPA_MODE_FAST) {
		EXPECT_EQ(l0, st.limit);
	} else {
		EXPECT_EQ(1U, st.limit);
	}
	EXPECT_EQ(0U, st.min);
	EXPECT_EQ(0U, st.max);
	/* the clamps are not the controller's changes */
	EXPECT_EQ(0ULL, st.changes);
}

/*
 * The bounds govern adaptation: a fixed limit outside them holds, and is
 * brought into them when the submitter adapts again.
 */
TEST_F(aabi, set_adapt_fixed_then_resume)
{
	struct iopa_state st;

	ASSERT_EQ(0, iopa_set_adapt(self->fixed, IOPA_POLICY_KEEP, 0, 3));
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ(7U, st.limit);
	EXPECT_EQ((__u32)IOPA_MODE_FIXED, st.mode);
	EXPECT_EQ(3U, st.max);
	ASSERT_EQ(0, iopa_set_limit(self->fixed, 0));
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ(3U, st.limit);
	EXPECT_NE((__u32)IOPA_MODE_FIXED, st.mode);
	/* and SET_LIMIT may fix it outside them again */
	ASSERT_EQ(0, iopa_set_limit(self->fixed, 6));
	EXPECT_EQ(6, iopa_get_limit(self->fixed));
}

/* max_limit wins over a per-submitter minimum above it. */
TEST_F(aabi, set_adapt_min_above_max_limit)
{
	uint64_t max_limit = 0;
	struct iopa_state st;

	ASSERT_EQ(0, iopa_sysfs_read("max_limit", &max_limit));
	if (max_limit >= IOPA_LIMIT_MAX)
		SKIP(return, "max_limit is IOPA_LIMIT_MAX");
	ASSERT_EQ(0, iopa_set_adapt(self->sub, IOPA_POLICY_KEEP,
				    max_limit + 1, 0));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(max_limit, (uint64_t)st.limit);
	EXPECT_EQ(max_limit + 1, (uint64_t)st.min);
}

TEST_F(aabi, get_state_counts)
{
	struct iopa_work w1, w2, w3;
	struct iopa_state st;

	ASSERT_EQ(0, iopa_set_limit(self->fixed, 2));
	ASSERT_EQ(5, iopa_submit_many(self->fixed, self->file, 1, 5));
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ(0U, st.inflight);
	EXPECT_EQ(5U, st.pending);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w1));
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w2));
	close(w1.fd);
	close(w2.fd);
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ(2U, st.inflight);
	EXPECT_EQ(3U, st.pending);
	ASSERT_EQ(0, iopa_complete(self->wrk, w1.job_id, 0));
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ(1U, st.inflight);
	EXPECT_EQ(3U, st.pending);
	ASSERT_EQ(0, iopa_fetch_nb(self->wrk, &w3));
	close(w3.fd);
	ASSERT_EQ(0, iopa_get_state(self->fixed, &st));
	EXPECT_EQ(2U, st.inflight);
	EXPECT_EQ(2U, st.pending);
	/* the other submitter's state is its own */
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(0U, st.inflight);
	EXPECT_EQ(0U, st.pending);
	EXPECT_EQ(0U, st.nr_devs);
	ASSERT_EQ(0, iopa_complete(self->wrk, w2.job_id, 0));
	ASSERT_EQ(0, iopa_complete(self->wrk, w3.job_id, 0));
}

/* devs: the job file's device, st_dev for a file, st_rdev for a bdev. */
TEST_F(aabi, get_state_devs)
{
	struct iopa_state st;
	struct stat sb, bsb;
	int bdev = -1;

	ASSERT_EQ(0, fstat(self->file, &sb));
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 1));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	ASSERT_EQ(1U, st.nr_devs);
	EXPECT_EQ(kdev(sb.st_dev), st.devs[0])
		TH_LOG("devs[0] %#x, file st_dev %u:%u", st.devs[0],
		       major(sb.st_dev), minor(sb.st_dev));
	/* the same device again is not listed twice */
	ASSERT_EQ(1, iopa_submit_one(self->sub, self->file, 2));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ(1U, st.nr_devs);

	bdev = open(NULLB_DEV, O_RDONLY | O_CLOEXEC);
	if (bdev < 0) {
		TH_LOG(NULLB_DEV " not there: block device part not run");
		return;
	}
	ASSERT_EQ(0, fstat(bdev, &bsb));
	ASSERT_EQ(1, iopa_submit_one(self->sub, bdev, 3));
	ASSERT_EQ(0, iopa_run_one(self->wrk, 0, NULL));
	close(bdev);
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	ASSERT_EQ(2U, st.nr_devs);
	/* first seen first; a block device is itself, not its inode's fs */
	EXPECT_EQ(kdev(sb.st_dev), st.devs[0]);
	EXPECT_EQ(kdev(bsb.st_rdev), st.devs[1])
		TH_LOG("devs[1] %#x, " NULLB_DEV " st_rdev %u:%u", st.devs[1],
		       major(bsb.st_rdev), minor(bsb.st_rdev));
	EXPECT_FALSE(state_has_dev(&st, kdev(bsb.st_dev)));
}

#define NULLB_ROT	"/sys/block/nullb0/queue/rotational"

/*
 * bracket starts at 1 when the submitter's first job is on a rotational
 * disk (null_blk marked rotational), at its usual start otherwise; the
 * limit moves as the job is submitted, before any cycle.
 */
TEST_F(aabi, bracket_starts_at_1_on_rotational)
{
	uint64_t init = 1;
	struct iopa_state st;
	int bdev, sub[2] = { -1, -1 }, i;
	char old[8] = "";
	FILE *f;

	if (sysfs_default_policy() != IOPA_POLICY_BRACKET ||
	    iopa_sysfs_read("init_limit", &init) || init)
		SKIP(return, "default_policy is not bracket, or init_limit set");
	bdev = open(NULLB_DEV, O_RDONLY | O_CLOEXEC);
	if (bdev < 0)
		SKIP(return, NULLB_DEV " not there");
	f = fopen(NULLB_ROT, "r");
	if (!f || !fgets(old, sizeof(old), f)) {
		if (f)
			fclose(f);
		close(bdev);
		SKIP(return, NULLB_ROT " not readable");
	}
	fclose(f);
	for (i = 0; i < 2; i++) {
		/* 0: rotational, 1: not */
		if (iopa_write_str(NULLB_ROT, i ? "0" : "1")) {
			close(bdev);
			SKIP(return, NULLB_ROT " not writable");
		}
		sub[i] = iopa_submitter_create(self->ctx, 0);
		ASSERT_LE(0, sub[i]);
		ASSERT_EQ(1, iopa_submit_one(sub[i], bdev, i));
		ASSERT_EQ(0, iopa_get_state(sub[i], &st));
		EXPECT_EQ(i ? iopa_expected_init_limit(IOPA_POLICY_BRACKET) : 1,
			  st.limit) TH_LOG("rotational %d", !i);
		EXPECT_EQ((__u32)IOPA_MODE_FAST, st.mode);
	}
	iopa_write_str(NULLB_ROT, old);
	for (i = 0; i < 2; i++)
		iopa_close(&sub[i]);
	close(bdev);
}

/* At most IOPA_STATE_MAX_DEVS devices, the first ones seen. */
TEST_F(aabi, get_state_devs_max)
{
	static const char * const dirs[] = {
		"/tmp", "/proc", "/sys", "/dev", "/dev/shm", "/run", "/",
		"/sys/kernel/tracing", "/sys/kernel/debug", "/dev/pts",
	};
	uint32_t want[IOPA_STATE_MAX_DEVS + 1];
	struct iopa_state st;
	unsigned int i, n = 0, k;

	for (i = 0; i < IOPA_ARRAY_SIZE(dirs) && n < IOPA_ARRAY_SIZE(want); i++) {
		struct stat sb;
		int fd = open(dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		bool dup = false;

		if (fd < 0)
			continue;
		if (fstat(fd, &sb)) {
			close(fd);
			continue;
		}
		for (k = 0; k < n; k++)
			dup |= want[k] == kdev(sb.st_dev);
		if (!dup && iopa_submit_one(self->sub, fd, i) == 1)
			want[n++] = kdev(sb.st_dev);
		close(fd);
	}
	if (n < IOPA_ARRAY_SIZE(want))
		SKIP(return, "only %u file systems to submit jobs on", n);
	ASSERT_EQ(0, iopa_get_state(self->sub, &st));
	EXPECT_EQ((__u32)IOPA_STATE_MAX_DEVS, st.nr_devs);
	for (i = 0; i < IOPA_STATE_MAX_DEVS; i++) {
		EXPECT_EQ(want[i], st.devs[i]) TH_LOG("devs[%u]", i);
	}
	EXPECT_FALSE(state_has_dev(&st, want[IOPA_STATE_MAX_DEVS]));
}

/* ---- sysfs tunables -------------------------------------------------------- */

FIXTURE(tun) {
	struct tunables saved;
	bool restore;
	int ctx;
};

FIXTURE_SETUP(tun)
{
	int r;

	self->restore = false;
	self->ctx = -1;
	if (access(IOPA_DEV_PATH, F_OK))
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	r = tunables_save(&self->saved);
	if (r == -ENOENT)
		SKIP(return, "no controller tunables in " IOPA_SYSFS);
	if (r == -EACCES || r == -EPERM)
		SKIP(return, "cannot write the tunables (not root?)");
	ASSERT_EQ(0, r);
	self->restore = true;
	self->ctx = iopa_open_ctx();
	ASSERT_LE(0, self->ctx);
}

FIXTURE_TEARDOWN(tun)
{
	iopa_close(&self->ctx);
	if (self->restore)
		EXPECT_EQ(0, tunables_restore(&self->saved));
}

/* Meaningful on a freshly loaded module, as in the test guest. */
TEST_F(tun, defaults)
{
	char buf[32];
	int i;

	for (i = 0; i < NR_NUM_TUNABLES; i++) {
		EXPECT_EQ(num_default(i), self->saved.val[i])
			TH_LOG("%s: %llu, default %llu", num_tunables[i],
			       (unsigned long long)self->saved.val[i],
			       (unsigned long long)num_default(i));
	}
	ASSERT_EQ(0, iopa_sysfs_read_str("default_policy", buf, sizeof(buf)));
	EXPECT_STREQ("bracket", buf);
}

TEST_F(tun, roundtrip)
{
	/* good values for each, both ends of each range among them */
	static const struct { int t; uint64_t v[3]; } good[] = {
		{ T_INC,	{ 1001, 10000, 1250 } },
		{ T_DEC,	{ 1, 999, 800 } },
		{ T_FAST,	{ 1, 3600000, 250 } },
		{ T_NORMAL,	{ 1, 3600000, 700 } },
		{ T_HOLD,	{ 1, 3600000, 2500 } },
		{ T_HISTORY,	{ 1, 8, 5 } },
		{ T_INIT,	{ 0, IOPA_LIMIT_MAX, 6 } },
		{ T_FAST_CAP,	{ 0, IOPA_LIMIT_MAX, 9 } },
		{ T_MAX_LIMIT,	{ 1, IOPA_LIMIT_MAX, 12 } },
		{ T_GAIN,	{ 1001, 10000, 1080 } },
	};
	unsigned int i, k;
	uint64_t v;

	for (i = 0; i < IOPA_ARRAY_SIZE(good); i++) {
		const char *name = num_tunables[good[i].t];

		for (k = 0; k < 3; k++) {
			EXPECT_EQ(0, iopa_sysfs_write(name, good[i].v[k]))
				TH_LOG("%s refused %llu", name,
				       (unsigned long long)good[i].v[k]);
			ASSERT_EQ(0, iopa_sysfs_read(name, &v));
			EXPECT_EQ(good[i].v[k], v) TH_LOG("%s", name);
		}
	}
	/* no trailing newline is needed */
	ASSERT_EQ(0, iopa_sysfs_write_str("history", "4"));
	ASSERT_EQ(0, iopa_sysfs_read("history", &v));
	EXPECT_EQ(4ULL, (unsigned long long)v);
}

TEST_F(tun, bad_values)
{
	/* refused by every tunable */
	static const char * const common[] = {
		"abc", "-1", "1x", "\n", "99999999999999999999", "4294967296",
	};
	/* out of each one's range */
	static const struct { int t; const char *v[4]; } range[] = {
		{ T_INC,	{ "0", "1000", "999", "10001" } },
		{ T_DEC,	{ "0", "1000", "1001", "5000" } },
		{ T_FAST,	{ "0", "3600001", NULL } },
		{ T_NORMAL,	{ "0", "3600001", NULL } },
		{ T_HOLD,	{ "0", "3600001", NULL } },
		{ T_HISTORY,	{ "0", "9", "100", NULL } },
		{ T_INIT,	{ "4097", "100000", NULL } },
		{ T_FAST_CAP,	{ "4097", "100000", NULL } },
		{ T_MAX_LIMIT,	{ "0", "4097", "100000", NULL } },
		{ T_GAIN,	{ "0", "1000", "999", "10001" } },
	};
	/* a good value that differs from the defaults, set first */
	static const uint64_t set[NR_NUM_TUNABLES] = {
		[T_INC] = 1200, [T_DEC] = 850, [T_FAST] = 321, [T_NORMAL] = 654,
		[T_HOLD] = 987, [T_HISTORY] = 2, [T_INIT] = 5, [T_FAST_CAP] = 7,
		[T_MAX_LIMIT] = 11, [T_GAIN] = 1070,
	};
	unsigned int i, k;
	uint64_t v;

	for (i = 0; i < IOPA_ARRAY_SIZE(range); i++) {
		int t = range[i].t;
		const char *name = num_tunables[t];

		ASSERT_EQ(0, iopa_sysfs_write(name, set[t]));
		for (k = 0; k < IOPA_ARRAY_SIZE(common); k++) {
			EXPECT_EQ(-EINVAL, iopa_sysfs_write_str(name, common[k]))
				TH_LOG("%s accepted \"%s\"", name, common[k]);
		}
		for (k = 0; k < IOPA_ARRAY_SIZE(range[i].v) && range[i].v[k]; k++) {
			EXPECT_EQ(-EINVAL, iopa_sysfs_write_str(name, range[i].v[k]))
				TH_LOG("%s accepted \"%s\"", name, range[i].v[k]);
		}
		/* the old value stays */
		ASSERT_EQ(0, iopa_sysfs_read(name, &v));
		EXPECT_EQ(set[t], v) TH_LOG("%s", name);
	}
}

/* The thresholds must keep decrease < 1000 < increase. */
TEST_F(tun, thresholds_cross_field)
{
	uint64_t inc = 0, dec = 0;

	ASSERT_EQ(0, iopa_sysfs_write("increase_threshold", 1050));
	ASSERT_EQ(0, iopa_sysfs_write("decrease_threshold", 950));
	/* decrease >= increase */
	EXPECT_EQ(-EINVAL, iopa_sysfs_write("decrease_threshold", 1050));
	EXPECT_EQ(-EINVAL, iopa_sysfs_write("decrease_threshold", 1051));
	EXPECT_EQ(-EINVAL, iopa_sysfs_write("decrease_threshold", 2000));
	/* increase <= decrease */
	EXPECT_EQ(-EINVAL, iopa_sysfs_write("increase_threshold", 950));
	EXPECT_EQ(-EINVAL, iopa_sysfs_write("increase_threshold", 949));
	EXPECT_EQ(-EINVAL, iopa_sysfs_write("increase_threshold", 1));
	ASSERT_EQ(0, iopa_sysfs_read("increase_threshold", &inc));
	ASSERT_EQ(0, iopa_sysfs_read("decrease_threshold", &dec));
	EXPECT_EQ(1050ULL, (unsigned long long)inc);
	EXPECT_EQ(950ULL, (unsigned long long)dec);
	/* the tightest pair around 1000 is accepted */
	EXPECT_EQ(0, iopa_sysfs_write("increase_threshold", 1001));
	EXPECT_EQ(0, iopa_sysfs_write("decrease_threshold", 999));
}

TEST_F(tun, default_policy)
{
	static const char * const bad[] = {
		"foo", "IOPA", "Hillclimb", "iopa ", " iopa", "iopa\n\n",
		"hillclimbx", "hill", "iopahillclimb", "\n",
	};
	struct iopa_state st;
	char buf[32];
	unsigned int i;
	int s_iopa, s_hc, s_fixed;

	ASSERT_EQ(0, iopa_sysfs_write_str("default_policy", "iopa"));
	ASSERT_EQ(0, iopa_sysfs_read_str("default_policy", buf, sizeof(buf)));
	EXPECT_STREQ("iopa", buf);
	s_iopa = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s_iopa);
	s_fixed = iopa_submitter_create(self->ctx, 3);
	ASSERT_LE(0, s_fixed);

	for (i = 0; i < IOPA_ARRAY_SIZE(bad); i++) {
		EXPECT_EQ(-EINVAL, iopa_sysfs_write_str("default_policy", bad[i]))
			TH_LOG("default_policy accepted \"%s\"", bad[i]);
	}
	ASSERT_EQ(0, iopa_sysfs_read_str("default_policy", buf, sizeof(buf)));
	EXPECT_STREQ("iopa", buf);

	ASSERT_EQ(0, iopa_sysfs_write_str("default_policy", "hillclimb\n"));
	ASSERT_EQ(0, iopa_sysfs_read_str("default_policy", buf, sizeof(buf)));
	EXPECT_STREQ("hillclimb", buf);
	s_hc = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s_hc);

	ASSERT_EQ(0, iopa_get_state(s_iopa, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_IOPA, st.policy);
	ASSERT_EQ(0, iopa_get_state(s_fixed, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_IOPA, st.policy);
	ASSERT_EQ(0, iopa_get_state(s_hc, &st));
	EXPECT_EQ((__u32)IOPA_POLICY_HILLCLIMB, st.policy);
	close(s_iopa);
	close(s_fixed);
	close(s_hc);
}

/* GET_STATE.cycle_ms follows fast_cycle_ms / normal_cycle_ms. */
TEST_F(tun, cycle_lengths_take_effect)
{
	struct iopa_state st;
	int s;

	ASSERT_EQ(0, iopa_sysfs_write("fast_cycle_ms", 700));
	ASSERT_EQ(0, iopa_sysfs_write("normal_cycle_ms", 1300));
	ASSERT_EQ(0, iopa_sysfs_write_str("default_policy", "hillclimb"));
	s = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s);
	ASSERT_EQ(0, iopa_get_state(s, &st));
	EXPECT_EQ((__u32)IOPA_MODE_FAST, st.mode);
	EXPECT_EQ(700U, st.cycle_ms);
	/* hillclimb resumes in NORMAL: a normal cycle */
	ASSERT_EQ(0, iopa_set_limit(s, 2));
	ASSERT_EQ(0, iopa_set_limit(s, 0));
	ASSERT_EQ(0, iopa_get_state(s, &st));
	EXPECT_EQ((__u32)IOPA_MODE_NORMAL, st.mode);
	EXPECT_EQ(1300U, st.cycle_ms);
	close(s);
}

/* Cycles an adaptive submitter has run (GET_STATE), or -errno. */
static long long state_cycles(int sfd)
{
	struct iopa_state st;
	int r = iopa_get_state(sfd, &st);

	return r ? r : (long long)st.cycles;
}

/*
 * An idle submitter runs no cycles (no timer per idle submitter, as
 * blk-iocost's period timer); a job queued starts them again.  Before,
 * every submitter's cycle fired forever.  One second of 100 ms cycles
 * with nothing queued: at most the first cycle ends.
 */
TEST_F(tun, idle_submitter_stops_cycles)
{
	struct iopa_work w;
	char path[64];
	long long c0, c;
	int s, wrk, fd, i;

	ASSERT_EQ(0, iopa_sysfs_write("fast_cycle_ms", 100));
	ASSERT_EQ(0, iopa_sysfs_write("normal_cycle_ms", 100));
	s = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s);
	usleep(1000 * 1000);
	c0 = state_cycles(s);
	ASSERT_LE(0, c0);
	EXPECT_GE(1, c0);

	/* a job: cycles again */
	wrk = iopa_worker_create(self->ctx);
	ASSERT_LE(0, wrk);
	fd = iopa_job_file(path, O_RDONLY);
	ASSERT_LE(0, fd);
	ASSERT_EQ(1, iopa_submit_many(s, fd, 1, 1));
	for (i = 0, c = c0; i < 200 && c == c0; i++) {
		usleep(10 * 1000);
		c = state_cycles(s);
	}
	EXPECT_LT(c0, c);
	ASSERT_EQ(0, iopa_fetch_nb(wrk, &w));
	close(w.fd);
	ASSERT_EQ(0, iopa_complete(wrk, w.job_id, 0));
	close(wrk);
	close(fd);
	unlink(path);
	close(s);
}

TEST_F(tun, init_limit_takes_effect)
{
	int s1, s2, s3;

	ASSERT_EQ(0, iopa_sysfs_write("max_limit", IOPA_LIMIT_MAX));
	ASSERT_EQ(0, iopa_sysfs_write("init_limit", 3));
	s1 = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s1);
	EXPECT_EQ(3, iopa_get_limit(s1));
	/* a fixed one is not affected */
	s2 = iopa_submitter_create(self->ctx, 9);
	ASSERT_LE(0, s2);
	EXPECT_EQ(9, iopa_get_limit(s2));
	/* 0: the default policy's own (bracket 8, others 30% of the CPUs) */
	ASSERT_EQ(0, iopa_sysfs_write("init_limit", 0));
	s3 = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s3);
	EXPECT_EQ((int)iopa_expected_init_limit(sysfs_default_policy()),
		  iopa_get_limit(s3));
	/* existing submitters keep their limit */
	EXPECT_EQ(3, iopa_get_limit(s1));
	close(s1);
	close(s2);
	close(s3);
}

/* max_limit caps the initial limit and wins over a minimum above it. */
TEST_F(tun, max_limit_takes_effect)
{
	struct iopa_state st;
	int s, f;

	ASSERT_EQ(0, iopa_sysfs_write("max_limit", 2));
	ASSERT_EQ(0, iopa_sysfs_write("init_limit", 5));
	s = iopa_submitter_create(self->ctx, 0);
	ASSERT_LE(0, s);
	EXPECT_EQ(2, iopa_get_limit(s));
	ASSERT_EQ(0, iopa_set_adapt(s, IOPA_POLICY_KEEP, 4, 0));
	ASSERT_EQ(0, iopa_get_state(s, &st));
	EXPECT_EQ(2U, st.limit);
	EXPECT_EQ(4U, st.min);
	/* but not a fixed limit */
	f = iopa_submitter_create(self->ctx, 6);
	ASSERT_LE(0, f);
	EXPECT_EQ(6, iopa_get_limit(f));
	close(s);
	close(f);
}

/* ---- under load ------------------------------------------------------------- */

/*
 * Cycle lengths for the load tests: short, so that a few seconds hold
 * dozens of cycles, yet several times a job's length.
 */
#define FAST_MS		50
#define NORMAL_MS	100
#define HOLD_MS		300

/* The cycle lengths in force (a test may change them: see set_cycles()). */
static uint32_t cyc_fast = FAST_MS, cyc_normal = NORMAL_MS, cyc_hold = HOLD_MS;

static int set_cycles(uint32_t fast, uint32_t normal, uint32_t hold)
{
	int r = iopa_sysfs_write("fast_cycle_ms", fast);

	if (!r)
		r = iopa_sysfs_write("normal_cycle_ms", normal);
	if (!r)
		r = iopa_sysfs_write("hold_cycle_ms", hold);
	if (!r) {
		cyc_fast = fast;
		cyc_normal = normal;
		cyc_hold = hold;
	}
	return r;
}

#define NR_WORKERS	32
#define MAX_SUBS	12
/* Jobs kept outstanding per submitter, so that jobs always wait (demand). */
#define QUEUED		256
#define BLOCK		4096

enum job_kind { JOB_IO, JOB_CPU };

struct load;

struct load_thread {
	struct load *l;
	int wfd;
	pthread_t th;
	bool running;
};

struct load {
	int ctx;
	int file;		/* the job file every job is about */
	enum job_kind kind;
	int reads_per_job;	/* JOB_IO: 4 KiB preads at random offsets */
	uint64_t nr_blocks;	/* JOB_IO: size of the device in 4 KiB */
	int nr_subs;
	int subs[MAX_SUBS];
	int outstanding[MAX_SUBS];
	uint64_t next_ud;
	struct load_thread t[NR_WORKERS];
	atomic_int stop;
	atomic_int errors;	/* iopa calls that failed in a worker */
	atomic_int last_err;
	atomic_int bad_io;	/* preads that did not read a block */
	atomic_llong done;	/* jobs run */
	int reap_errors;	/* completions with res < 0 */
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static int64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The job itself.  Returns its result: 0 or -errno. */
static int run_job(struct load *l, const struct iopa_work *w, void *buf)
{
	int i, res = 0;

	if (l->kind == JOB_CPU) {
		/* ~2 ms of CPU, no I/O */
		int64_t end = thread_cpu_ns() + 2000000;
		volatile uint64_t x = w->job_id;

		while (thread_cpu_ns() < end)
			for (i = 0; i < 1000; i++)
				x = mix64(x + i);
		return 0;
	}
	for (i = 0; i < l->reads_per_job; i++) {
		uint64_t blk = mix64(w->job_id * 64 + i) % l->nr_blocks;

		if (pread(w->fd, buf, BLOCK, blk * BLOCK) != BLOCK) {
			atomic_fetch_add(&l->bad_io, 1);
			res = -EIO;
		}
	}
	return res;
}

static void *load_worker(void *arg)
{
	struct load_thread *t = arg;
	struct load *l = t->l;
	void *buf = NULL;

	if (posix_memalign(&buf, BLOCK, BLOCK)) {
		atomic_fetch_add(&l->errors, 1);
		return NULL;
	}
	while (!atomic_load(&l->stop)) {
		struct iopa_work w;
		int r, res;

		/* the timeout only lets the thread notice "stop" */
		r = iopa_fetch(t->wfd, &w, 0, IOPA_MS_NS(50));
		if (r == -ETIMEDOUT)
			continue;
		if (r < 0) {
			atomic_store(&l->last_err, r);
			atomic_fetch_add(&l->errors, 1);
			break;
		}
		res = run_job(l, &w, buf);
		close(w.fd);
		r = iopa_complete(t->wfd, w.job_id, res);
		if (r) {
			atomic_store(&l->last_err, r);
			atomic_fetch_add(&l->errors, 1);
			break;
		}
		atomic_fetch_add(&l->done, 1);
	}
	free(buf);
	return NULL;
}

static void load_init(struct load *l)
{
	int i;

	memset(l, 0, sizeof(*l));
	l->ctx = l->file = -1;
	for (i = 0; i < MAX_SUBS; i++)
		l->subs[i] = -1;
	for (i = 0; i < NR_WORKERS; i++)
		l->t[i].wfd = -1;
}

/* Workers first, so that they wait in FETCH when the first jobs come. */
static int load_start_workers(struct load *l, int n)
{
	int i, r;

	for (i = 0; i < n; i++) {
		l->t[i].l = l;
		l->t[i].wfd = iopa_worker_create(l->ctx);
		if (l->t[i].wfd < 0)
			return l->t[i].wfd;
		r = pthread_create(&l->t[i].th, NULL, load_worker, &l->t[i]);
		if (r)
			return -r;
		l->t[i].running = true;
	}
	return 0;
}

/* Reap what completed and top every submitter up to QUEUED outstanding. */
static int load_pump(struct load *l)
{
	static struct iopa_cqe cqes[256];
	static struct iopa_job jobs[QUEUED];
	int s, i, r;

	for (s = 0; s < l->nr_subs; s++) {
		for (;;) {
			r = iopa_reap_nb(l->subs[s], cqes, IOPA_ARRAY_SIZE(cqes));
			if (r == -EAGAIN)
				break;
			if (r < 0)
				return r;
			for (i = 0; i < r; i++)
				l->reap_errors += cqes[i].res < 0;
			l->outstanding[s] -= r;
		}
		if (l->outstanding[s] >= QUEUED)
			continue;
		for (i = 0; i < QUEUED - l->outstanding[s]; i++)
			iopa_job_init(&jobs[i], l->file, l->next_ud++);
		r = iopa_submit(l->subs[s], jobs, QUEUED - l->outstanding[s], 0);
		if (r < 0)
			return r;
		l->outstanding[s] += r;
	}
	return 0;
}

/* Stop and join the workers; their fds and the submitters stay open. */
static void load_join(struct load *l)
{
	int i;

	atomic_store(&l->stop, 1);
	for (i = 0; i < NR_WORKERS; i++) {
		if (l->t[i].running)
			pthread_join(l->t[i].th, NULL);
		l->t[i].running = false;
	}
}

/* Stop and join the workers, close everything.  Safe to call twice. */
static void load_stop(struct load *l)
{
	int i;

	load_join(l);
	for (i = 0; i < MAX_SUBS; i++)
		iopa_close(&l->subs[i]);
	for (i = 0; i < NR_WORKERS; i++)
		iopa_close(&l->t[i].wfd);
	iopa_close(&l->file);
	iopa_close(&l->ctx);
}

#define SWING_LIMITS	65

/* What the monitor saw of one submitter. */
struct obs {
	unsigned int n;			/* GET_STATE samples */
	uint32_t lo, hi;		/* lowest / highest limit */
	uint32_t first, last;		/* limit at the first / last sample */
	uint64_t sum;			/* of the limits sampled, for the mean */
	uint64_t max_bytes, max_jobs;	/* highest bytes_per_s, jobs_per_s */
	uint32_t max_inflight;
	unsigned int modes;		/* 1 << mode of every sample */
	unsigned int bad_cycle_ms;	/* cycle_ms not matching the mode */
	unsigned int bad_policy;	/* policy not the expected one */
	uint32_t policy;		/* expected policy, 0: not checked */
	struct iopa_state first_st, st;	/* the first, the last sample */
	/*
	 * Throughput of the normal-length cycles seen end, by the limit
	 * they ran at (up to SWING_LIMITS - 1): how much the device's rate
	 * moves by itself at a constant limit.
	 */
	uint64_t tmin[SWING_LIMITS], tmax[SWING_LIMITS], tsum[SWING_LIMITS];
	unsigned int tn[SWING_LIMITS];
	/*
	 * The iopa policy's promise, judged at each cycle end seen (set
	 * inc_permille to judge): it raises the limit only by its FAST
	 * doubling up to fast_cap, or by one in NORMAL after a cycle whose
	 * ratio R beat increase_permille.  Climbs seen, and those that broke
	 * the promise (the first described in unearned_what).
	 */
	uint32_t inc_permille, fast_cap;
	unsigned int climbs, unearned;
	char unearned_what[96];
};

static void obs_reset(struct obs *o, uint32_t policy)
{
	memset(o, 0, sizeof(*o));
	o->lo = UINT32_MAX;
	o->policy = policy;
}

/*
 * One cycle ended between @prev and @st, and the controller raised the
 * limit: did the iopa policy's rule allow it?  FAST doubles (the first
 * cycle unconditionally) up to fast_cap; NORMAL adds one when the
 * cycle's R, which GET_STATE reports, is above increase_permille.
 */
static void obs_judge_climb(struct obs *o, const struct iopa_state *prev,
			    const struct iopa_state *st)
{
	bool ok;

	o->climbs++;
	if (prev->mode == IOPA_MODE_FAST)
		ok = st->limit <= 2 * prev->limit && st->limit <= o->fast_cap &&
		     (!st->r_permille || st->r_permille > o->inc_permille);
	else if (prev->mode == IOPA_MODE_NORMAL)
		ok = st->limit == prev->limit + 1 &&
		     st->r_permille > o->inc_permille;
	else
		ok = false;
	if (ok)
		return;
	if (!o->unearned++)
		snprintf(o->unearned_what, sizeof(o->unearned_what),
			 "cycle %llu: mode %u limit %u -> %u at R %u (need > %u)",
			 (unsigned long long)st->cycles, prev->mode, prev->limit,
			 st->limit, st->r_permille, o->inc_permille);
}

static void obs_add(struct obs *o, const struct iopa_state *st)
{
	const struct iopa_state *prev = &o->st;

	if (!o->n++) {
		o->first = st->limit;
		o->first_st = *st;
	} else if (st->cycles == prev->cycles + 1 && prev->limit < SWING_LIMITS &&
		   (prev->mode == IOPA_MODE_NORMAL || prev->mode == IOPA_MODE_PROBE ||
		    prev->mode == IOPA_MODE_STEADY || prev->mode == IOPA_MODE_FIXED)) {
		/* one cycle ended since the last sample; it ran at prev->limit */
		uint64_t t = st->bytes_per_s ? st->bytes_per_s : st->jobs_per_s;
		uint32_t l = prev->limit;

		if (!o->tn[l]++ || t < o->tmin[l])
			o->tmin[l] = t;
		if (t > o->tmax[l])
			o->tmax[l] = t;
		o->tsum[l] += t;
	}
	if (o->n > 1 && o->inc_permille && st->cycles == prev->cycles + 1 &&
	    st->limit > prev->limit && st->changes > prev->changes)
		obs_judge_climb(o, prev, st);
	o->st = *st;
	o->last = st->limit;
	o->sum += st->limit;
	if (st->limit < o->lo)
		o->lo = st->limit;
	if (st->limit > o->hi)
		o->hi = st->limit;
	if (st->bytes_per_s > o->max_bytes)
		o->max_bytes = st->bytes_per_s;
	if (st->jobs_per_s > o->max_jobs)
		o->max_jobs = st->jobs_per_s;
	if (st->inflight > o->max_inflight)
		o->max_inflight = st->inflight;
	o->modes |= 1U << (st->mode & 31);
	if (o->policy && st->policy != o->policy)
		o->bad_policy++;
	/*
	 * The cycle now running has the length of its mode: fast in FAST,
	 * what is left of hold_cycle_ms in HOLD, normal otherwise.
	 */
	switch (st->mode) {
	case IOPA_MODE_FAST:
		o->bad_cycle_ms += st->cycle_ms != cyc_fast;
		break;
	case IOPA_MODE_HOLD:
		o->bad_cycle_ms += !st->cycle_ms || st->cycle_ms > cyc_hold;
		break;
	default:	/* NORMAL, PROBE, STEADY; FIXED: its cycles only measure */
		o->bad_cycle_ms += st->cycle_ms != cyc_normal;
		break;
	}
}

/*
 * The largest max/min ratio, in 1/1000, of the throughput of cycles run
 * at one limit (limits with at least 3 such cycles); 1000 if none.
 */
static unsigned int obs_swing(const struct obs *o)
{
	unsigned int l, worst = 1000;

	for (l = 1; l < SWING_LIMITS; l++) {
		unsigned int r;

		if (o->tn[l] < 3 || !o->tmin[l])
			continue;
		r = (unsigned int)(o->tmax[l] * 1000 / o->tmin[l]);
		if (r > worst)
			worst = r;
	}
	return worst;
}

#define LOG_OBS(what, o) \
	TH_LOG("%s: %u samples, limit first %u last %u lo %u hi %u " \
	       "mean %.2f, max bytes/s %llu jobs/s %llu inflight %u, " \
	       "modes %#x, cycles %llu..%llu changes %llu..%llu, swing %u", \
	       what, (o)->n, (o)->first, (o)->last, (o)->lo, (o)->hi, \
	       (o)->n ? (double)(o)->sum / (o)->n : 0.0, \
	       (unsigned long long)(o)->max_bytes, \
	       (unsigned long long)(o)->max_jobs, (o)->max_inflight, \
	       (o)->modes, (unsigned long long)(o)->first_st.cycles, \
	       (unsigned long long)(o)->st.cycles, \
	       (unsigned long long)(o)->first_st.changes, \
	       (unsigned long long)(o)->st.changes, obs_swing(o))

/*
 * Keep the submitters busy and sample their state every 5 ms, until
 * each has run @cycles more cycles (if @cycles) or for @ms (if not
 * @cycles; with @cycles, @ms bounds the wait).  Returns 0, -ETIMEDOUT if
 * the cycles did not come within @ms, or the -errno of a failed call.
 */
static int load_run(struct load *l, struct obs *o, uint64_t cycles, int ms)
{
	int64_t deadline = iopa_now_ns() + IOPA_MS_NS(ms);
	uint64_t start[MAX_SUBS];
	int s, r;

	for (s = 0; s < l->nr_subs; s++) {
		struct iopa_state st;

		r = iopa_get_state(l->subs[s], &st);
		if (r)
			return r;
		start[s] = st.cycles;
		obs_add(&o[s], &st);
	}
	for (;;) {
		bool all = true;

		r = load_pump(l);
		if (r)
			return r;
		for (s = 0; s < l->nr_subs; s++) {
			struct iopa_state st;

			r = iopa_get_state(l->subs[s], &st);
			if (r)
				return r;
			obs_add(&o[s], &st);
			if (st.cycles < start[s] + cycles)
				all = false;
		}
		if (cycles && all)
			return 0;
		if (iopa_now_ns() > deadline)
			return cycles ? -ETIMEDOUT : 0;
		poll(NULL, 0, 5);
	}
}

/* Mean throughput of the constant-limit cycles run at @limit; 0 if none. */
static uint64_t obs_mean(const struct obs *o, unsigned int limit)
{
	if (limit >= SWING_LIMITS || !o->tn[limit])
		return 0;
	return o->tsum[limit] / o->tn[limit];
}

/*
 * How much depth pays on the device, in 1/1000: the mean throughput of
 * @cycles cycles at a fixed limit @hi over that at a fixed limit @lo
 * (SET_ADAPT min = max), the first cycle at each dropped as it straddles
 * the change.  The bounds are cleared after.  0 if it could not measure.
 */
static unsigned int depth_gain(struct load *l, unsigned int lo,
			       unsigned int hi, unsigned int cycles)
{
	unsigned int lim[2] = { lo, hi };
	uint64_t mean[2];
	int sub = l->subs[0], i;
	struct obs o;

	for (i = 0; i < 2; i++) {
		obs_reset(&o, 0);
		if (iopa_set_adapt(sub, IOPA_POLICY_KEEP, lim[i], lim[i]) ||
		    load_run(l, &o, 1, 10000))
			return 0;
		obs_reset(&o, 0);
		if (load_run(l, &o, cycles, 30000))
			return 0;
		mean[i] = obs_mean(&o, lim[i]);
	}
	if (iopa_set_adapt(sub, IOPA_POLICY_KEEP, 0, 0) || !mean[0])
		return 0;
	return (unsigned int)(mean[1] * 1000 / mean[0]);
}

#define CG_ROOT		"/sys/fs/cgroup"
static const char * const cg_dirs[] = {
	CG_ROOT "/iopa-share-a", CG_ROOT "/iopa-share-b",
};

FIXTURE(load) {
	struct tunables saved;
	bool restore_tunables;
	bool nullb_changed;
	struct load l;
	uint32_t max_limit;
	/* tracing, put back in the teardown */
	const char *tracefs;
	int old_tracing_on;
	int old_record_cmd;
	bool trace_used;
	/* cgroups made (shared_device_split_by_cgroup), undone in teardown */
	bool cg_mounted;
	int cg_made;
	/* learn_knees as found, put back in the teardown; -1: untouched */
	int64_t old_learn;
};

FIXTURE_VARIANT(load) {
	const char *policy_name;
	uint32_t policy;
	uint32_t other;		/* the other policy */
};

FIXTURE_VARIANT_ADD(load, iopa) {
	.policy_name = "iopa",
	.policy = IOPA_POLICY_IOPA,
	.other = IOPA_POLICY_HILLCLIMB,
};

FIXTURE_VARIANT_ADD(load, hillclimb) {
	.policy_name = "hillclimb",
	.policy = IOPA_POLICY_HILLCLIMB,
	.other = IOPA_POLICY_IOPA,
};

FIXTURE_VARIANT_ADD(load, bracket) {
	.policy_name = "bracket",
	.policy = IOPA_POLICY_BRACKET,
	.other = IOPA_POLICY_HILLCLIMB,
};

FIXTURE_SETUP(load)
{
	uint64_t max_limit = 0;
	int r;

	load_init(&self->l);
	self->restore_tunables = false;
	self->nullb_changed = false;
	self->trace_used = false;
	self->cg_mounted = false;
	self->cg_made = 0;
	self->old_learn = -1;
	self->tracefs = NULL;
	self->old_tracing_on = self->old_record_cmd = -1;
	if (access(IOPA_DEV_PATH, F_OK))
		SKIP(return, IOPA_DEV_PATH " missing: is the iopa module loaded?");
	r = tunables_save(&self->saved);
	if (r == -ENOENT)
		SKIP(return, "no controller tunables in " IOPA_SYSFS);
	if (r == -EACCES || r == -EPERM)
		SKIP(return, "cannot write the tunables (not root?)");
	ASSERT_EQ(0, r);
	self->restore_tunables = true;
	/* the documented defaults, but millisecond cycles */
	ASSERT_EQ(0, iopa_sysfs_write("increase_threshold", 1100));
	ASSERT_EQ(0, iopa_sysfs_write("decrease_threshold", 900));
	ASSERT_EQ(0, iopa_sysfs_write("history", 3));
	ASSERT_EQ(0, iopa_sysfs_write("init_limit", 0));
	ASSERT_EQ(0, iopa_sysfs_write("fast_cap", 0));
	ASSERT_EQ(0, set_cycles(FAST_MS, NORMAL_MS, HOLD_MS));
	/* room for the bounds the tests set (default: 4 x CPUs) */
	max_limit = num_default(T_MAX_LIMIT);
	if (max_limit < 8)
		max_limit = 8;
	ASSERT_EQ(0, iopa_sysfs_write("max_limit", max_limit));
	self->max_limit = max_limit;
	ASSERT_EQ(0, iopa_sysfs_write_str("default_policy", variant->policy_name));

	self->l.ctx = iopa_open_ctx();
	ASSERT_LE(0, self->l.ctx);
}

FIXTURE_TEARDOWN(load)
{
	char pid[16];
	int i;

	load_stop(&self->l);
	if (self->cg_made) {
		snprintf(pid, sizeof(pid), "%d", getpid());
		iopa_write_str(CG_ROOT "/cgroup.procs", pid);
		for (i = 0; i < self->cg_made; i++)
			rmdir(cg_dirs[i]);
	}
	if (self->cg_mounted)
		umount(CG_ROOT);
	if (self->trace_used) {
		trace_write(self->tracefs, "events/iopa/enable", "0");
		trace_write(self->tracefs, "trace", "");
		if (self->old_tracing_on >= 0)
			trace_write(self->tracefs, "tracing_on",
				    self->old_tracing_on ? "1" : "0");
		if (self->old_record_cmd >= 0)
			trace_write(self->tracefs, "options/record-cmd",
				    self->old_record_cmd ? "1" : "0");
	}
	if (self->nullb_changed) {
		EXPECT_EQ(0, nullb_restore(&nullb_found))
			TH_LOG("could not put null_blk back (%s)", nullb_found.params);
	}
	if (self->restore_tunables)
		EXPECT_EQ(0, tunables_restore(&self->saved));
	if (self->old_learn >= 0)
		EXPECT_EQ(0, iopa_sysfs_write("learn_knees", self->old_learn));
}

/* Set learn_knees to @on, the old value put back in the teardown. */
#define SET_LEARN(on) do { \
	uint64_t __v; \
	ASSERT_EQ(0, iopa_sysfs_read("learn_knees", &__v)); \
	if (self->old_learn < 0) \
		self->old_learn = (int64_t)__v; \
	ASSERT_EQ(0, iopa_sysfs_write("learn_knees", (on))); \
} while (0)

/*
 * Load null_blk with @params and open /dev/nullb0 O_DIRECT as the job
 * file (workers get it as it is: O_DIRECT reads go to the device).
 * SKIPs the test if that cannot be done.
 */
#define LOAD_NULLB(params, reads) do { \
	int __r; \
	__r = nullb_load(params, &self->nullb_changed); \
	if (__r) \
		SKIP(return, "cannot load null_blk " params ": %d", __r); \
	self->l.file = open(NULLB_DEV, O_RDONLY | O_DIRECT | O_CLOEXEC); \
	if (self->l.file < 0) \
		SKIP(return, "cannot open " NULLB_DEV " O_DIRECT: %d", -errno); \
	ASSERT_EQ(0, ioctl(self->l.file, BLKGETSIZE64, &self->l.nr_blocks)); \
	self->l.nr_blocks /= BLOCK; \
	ASSERT_LT(0ULL, (unsigned long long)self->l.nr_blocks); \
	self->l.kind = JOB_IO; \
	self->l.reads_per_job = (reads); \
} while (0)

/* One more adaptive submitter (the default policy: the variant's). */
static int load_add_sub(struct load *l)
{
	int s;

	if (l->nr_subs >= MAX_SUBS)
		return -ENOSPC;
	s = iopa_submitter_create(l->ctx, 0);

	if (s >= 0)
		l->subs[l->nr_subs++] = s;
	return s;
}

#define ASSERT_WORKERS_OK(l) do { \
	EXPECT_EQ(0, atomic_load(&(l)->errors)) \
		TH_LOG("worker error %d", atomic_load(&(l)->last_err)); \
	EXPECT_EQ(0, atomic_load(&(l)->bad_io)); \
	EXPECT_EQ(0, (l)->reap_errors); \
} while (0)

/*
 * (a) A device that gains from parallelism: the limit rises from where
 * it started, stays within [1, max_limit], and the bytes the workers
 * read are charged to the submitter.
 */
TEST_F_TIMEOUT(load, rises_on_deep_device, 120)
{
	struct obs o;
	struct stat sb;
	struct iopa_state st;
	uint32_t init;

	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, fstat(self->l.file, &sb));
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	ASSERT_LE(0, load_add_sub(&self->l));
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &st));
	init = st.limit;
	EXPECT_EQ(iopa_expected_init_limit(variant->policy), init);
	EXPECT_EQ(variant->policy, st.policy);

	obs_reset(&o, variant->policy);
	/* ~3-4 s: a few fast cycles, then normal ones */
	ASSERT_EQ(0, load_run(&self->l, &o, 35, 60000));
	LOG_OBS("deep", &o);
	LOG_STATE(&o.st);
	ASSERT_WORKERS_OK(&self->l);

	EXPECT_GT(o.hi, init) TH_LOG("the limit never rose above %u", init);
	EXPECT_LE(1U, o.lo);
	EXPECT_GE(self->max_limit, o.hi);
	EXPECT_LT(0ULL, (unsigned long long)o.max_bytes);
	EXPECT_LT(0ULL, (unsigned long long)o.max_jobs);
	EXPECT_LT(0ULL, (unsigned long long)o.st.changes);
	EXPECT_EQ(0U, o.bad_policy);
	EXPECT_EQ(0U, o.bad_cycle_ms);
	EXPECT_TRUE(state_has_dev(&o.st, kdev(sb.st_rdev)))
		TH_LOG("nullb0 %u:%u not in devs", major(sb.st_rdev),
		       minor(sb.st_rdev));
}

/*
 * (b) A device where parallelism does not help (one tag, 1 ms a
 * request, so at most 1000 reads of 4 KiB a second at any depth): the
 * limit stays low, and the bytes charged never exceed what the device
 * can deliver.
 *
 * How it was made to hold under TCG (2 vCPUs), measured over ~60 runs:
 * - One read a job, so that a 100 ms cycle holds ~90 jobs: with 4 reads
 *   (~20 jobs a cycle) the per-cycle throughput was too coarse and iopa
 *   ended at 5-7 in a third of the runs, with 16 reads in most.
 * - The start is that of a 2-CPU machine whatever the CPUs (init_limit
 *   1, fast_cap 2; iopa's first doubling is unconditional).
 * - hillclimb ended at 1-2 in every run, also on a loaded host: it
 *   judges a trial against the base measured around it.
 * - iopa ended at 2-3 in every run on an idle host.  On a loaded host
 *   (other guests, builds) the guest's timers lag, and this null_blk's
 *   rate moves by itself between ~350 and ~850 reads a second for a few
 *   cycles at a time, whatever the limit (seen in the iopa_cycle trace
 *   at a constant limit).  iopa compares a cycle with the 3 before it,
 *   so each such move is a +-1 verdict to it (R 0.45 or 2.5: no
 *   threshold filters that), and it ended anywhere up to the ceiling.
 *   On a clean debug-kernel run it climbed to 6 where limit 6 ran 1.09x
 *   as fast as limit 1, next to its own 1.1 threshold: both ends are
 *   what the policy may do.  So iopa is judged by its promise, step by
 *   step, not by where it ends: every climb seen must be its FAST
 *   doubling up to fast_cap or a NORMAL +1 after a cycle whose R (as
 *   GET_STATE reports it) beat increase_threshold (obs_judge_climb()).
 *   A policy that climbs on a flat curve breaks that at its first step.
 * - On the debug kernel (KASAN, lockdep) a job's CPU time is of the
 *   order of the device's 1 ms, so depth overlaps the two and pays: the
 *   premise does not hold there.  So when hillclimb or bracket ends
 *   above the bound, the test measures the premise (fixed limits 1 and
 *   the end limit, depth_gain()), and is skipped, saying so, if depth
 *   paid more than the increase threshold (10%): measured 1.2x from
 *   limit 1 to 5 there.
 * Bound (hillclimb, bracket): 4, room for the doubling and a probe above
 * it; the ceiling is at least 8.
 */
/*
 * GET_STATE reports the last cycle's queue wait, service time,
 * completions and noise estimate (IOPA_FEAT_TIMES): a job of 16 reads of
 * 200 us each is serviced in no less than 3.2 ms, and with more jobs
 * than the limit some wait.
 */
TEST_F_TIMEOUT(load, state_reports_times, 120)
{
	struct iopa_state st;
	struct obs o;

	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	ASSERT_LE(0, load_add_sub(&self->l));
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 6, 60000));
	ASSERT_WORKERS_OK(&self->l);
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &st));
	LOG_STATE(&st);
	TH_LOG("wait_us %u svc_us %u completions %u noise %u/1000",
	       st.wait_us, st.svc_us, st.completions, st.noise_permille);
	EXPECT_LT(0U, st.completions);
	EXPECT_LE(3200U, st.svc_us);
	EXPECT_GT(1000000U, st.svc_us);
	EXPECT_LT(0U, st.wait_us);
	/* at least the 2% floor, at most the 50% ceiling */
	EXPECT_LE(20U, st.noise_permille);
	EXPECT_GE(500U, st.noise_permille);
}

/*
 * Device-wide admission (bracket only): two submitters reading one device
 * share its budget: the same budget, split equally (one cgroup: theirs),
 * their limits within it.
 */
TEST_F_TIMEOUT(load, shared_device_splits_budget, 120)
{
	struct iopa_state sa, sb;
	struct obs o[MAX_SUBS];
	int a, b, d, i;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	a = load_add_sub(&self->l);
	ASSERT_LE(0, a);
	b = load_add_sub(&self->l);
	ASSERT_LE(0, b);
	obs_reset(&o[0], variant->policy);
	obs_reset(&o[1], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 20, 60000));
	ASSERT_WORKERS_OK(&self->l);
	ASSERT_EQ(0, iopa_get_state(a, &sa));
	ASSERT_EQ(0, iopa_get_state(b, &sb));
	LOG_STATE(&sa);
	LOG_STATE(&sb);
	TH_LOG("budget %u/%u sharers %u/%u limits %u %u", sa.budget,
	       sb.budget, sa.sharers, sb.sharers, sa.limit, sb.limit);
	ASSERT_LT(0U, sa.budget);
	EXPECT_EQ(sa.budget, sb.budget);
	EXPECT_EQ(1U, sa.sharers);
	EXPECT_EQ(1U, sb.sharers);
	d = (int)sa.limit - (int)sb.limit;
	EXPECT_GE(1, d < 0 ? -d : d);
	EXPECT_GE(sa.budget + 1, sa.limit + sb.limit);
	/* one controller: its cycle count, as of the last split, for both */
	EXPECT_LT(0U, sa.group_cycles);
	d = (int)(sa.group_cycles - sb.group_cycles);
	EXPECT_GE(1, d < 0 ? -d : d) TH_LOG("group_cycles %u %u",
					    sa.group_cycles, sb.group_cycles);
	/*
	 * The mode is the group's controller's, which leaves its start-up
	 * on 16 tags, not the member's own, which stays in FAST.  The
	 * second member's arrival may start the budget up again (more
	 * streams), late on a slow (debug) kernel: give it cycles to end.
	 */
	for (i = 0; i < 40 && (sa.mode == IOPA_MODE_FAST ||
			       sb.mode == IOPA_MODE_FAST); i++) {
		ASSERT_EQ(0, load_run(&self->l, o, 1, 60000));
		ASSERT_EQ(0, iopa_get_state(a, &sa));
		ASSERT_EQ(0, iopa_get_state(b, &sb));
	}
	EXPECT_NE((__u32)IOPA_MODE_FAST, sa.mode) TH_LOG("mode %u", sa.mode);
	EXPECT_NE((__u32)IOPA_MODE_FAST, sb.mode) TH_LOG("mode %u", sb.mode);
}

#define DEBUGFS_GROUPS	"/sys/kernel/debug/iopa/groups"

/* A group line of <debugfs>/iopa/groups (its header names the fields). */
struct group_line {
	unsigned int budget, members, sharers;
	unsigned long long cycles, changes, bytes, dev_bytes, splits, steps;
	/* 0 from a module without turns */
	int waiting;
	unsigned long long turn_overs, turns_kept;
};

/*
 * The first group line of <debugfs>/iopa/groups.  0, or -errno (-ENOENT:
 * no debugfs, or no group; -EPROTO: a line without the split counts).
 */
static int group_line(struct group_line *g)
{
	char line[512];
	FILE *f;
	int r = -ENOENT;

	if (access(DEBUGFS_GROUPS, F_OK) &&
	    mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL))
		return -errno;
	f = fopen(DEBUGFS_GROUPS, "re");
	if (!f)
		return -errno;
	/* the header, then group lines; member lines start with blanks */
	while (fgets(line, sizeof(line), f)) {
		if (line[0] < '0' || line[0] > '9')
			continue;
		g->waiting = 0;
		g->turn_overs = g->turns_kept = 0;
		r = sscanf(line, "%*u %*u:%*u %*s %*s %u %u %u %llu %llu %llu %llu %llu %llu %d %llu %llu",
			   &g->budget, &g->members, &g->sharers, &g->cycles,
			   &g->changes, &g->bytes, &g->dev_bytes, &g->splits,
			   &g->steps, &g->waiting, &g->turn_overs,
			   &g->turns_kept) >= 9 ? 0 : -EPROTO;
		break;
	}
	fclose(f);
	return r;
}

/*
 * The first group line of <debugfs>/iopa/groups: its members' and its
 * device's bytes per second in the last group cycle.  0, or -errno
 * (-ENOENT: no debugfs, or no group).
 */
static int groups_bytes(unsigned long long *ours, unsigned long long *dev)
{
	struct group_line g;
	int r = group_line(&g);

	if (r)
		return r;
	*ours = g.bytes;
	*dev = g.dev_bytes;
	return 0;
}

/* Skip unless the module has turns on a shared device. */
#define NEED_TURNS() do { \
	struct iopa_features __f; \
	ASSERT_EQ(0, iopa_get_features(self->l.ctx, &__f)); \
	if (!(__f.features & IOPA_FEAT_TURNS)) \
		SKIP(return, "no IOPA_FEAT_TURNS"); \
} while (0)

/*
 * Turns: the budget is the device's, not raised to the number of its
 * members.  With a budget of one job (max_limit 1) and three members,
 * one runs at a time and the others wait: limit 0, IOPA_LIMIT_F_WAITING
 * in GET_STATE and GET_LIMIT, the flag set exactly when the limit is 0;
 * each gets its turns (its completions grow), and the metrics count
 * the waits.  Before turns, the budget was at least one job a member:
 * three ran at once whatever the device's best.
 */
TEST_F_TIMEOUT(load, shared_device_members_take_turns, 120)
{
	struct iopa_stats s0[3], s1[3];
	struct iopa_state st[3];
	struct group_line g0, g1;
	struct iopa_sub_info si;
	struct obs o[MAX_SUBS];
	int sub[3], i, tries, flags, seen_wait = 0, sum;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	NEED_TURNS();
	ASSERT_EQ(0, iopa_sysfs_write("max_limit", 1));
	LOAD_NULLB(NULLB_THROTTLED, 1);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	for (i = 0; i < 3; i++) {
		sub[i] = load_add_sub(&self->l);
		ASSERT_LE(0, sub[i]);
		obs_reset(&o[i], variant->policy);
	}
	/* long enough for all three to join the group */
	ASSERT_EQ(0, load_run(&self->l, o, 0, 3000));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, iopa_get_stats(sub[i], &s0[i]));
	/* poll the limits while the load runs */
	for (tries = 0; tries < 40; tries++) {
		ASSERT_EQ(0, load_run(&self->l, o, 0, 150));
		sum = 0;
		memset(&g0, 0, sizeof(g0));
		group_line(&g0);
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, iopa_get_state(sub[i], &st[i]));
			/*
			 * Waiting means a limit of 0 (a new holder may be at
			 * 0 too, for the jobs of the turn before to end).
			 */
			if (st[i].flags & IOPA_LIMIT_F_WAITING)
				EXPECT_EQ(0U, st[i].limit);
			sum += st[i].limit;
			flags = iopa_get_limit_flags(sub[i]);
			ASSERT_LE(0, flags);
			if (flags & IOPA_LIMIT_F_WAITING)
				seen_wait++;
		}
		EXPECT_EQ(1U, st[0].budget);
		/*
		 * One split's view (no split between the reads, as debugfs
		 * counts them; without debugfs, no group cycle ended): at
		 * most the budget runs.
		 */
		if (group_line(&g1) ? st[0].group_cycles == st[1].group_cycles &&
				      st[1].group_cycles == st[2].group_cycles :
				      g0.splits == g1.splits)
			EXPECT_GE(1, sum) TH_LOG("limits %u %u %u", st[0].limit,
						 st[1].limit, st[2].limit);
	}
	ASSERT_WORKERS_OK(&self->l);
	EXPECT_LT(0, seen_wait);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, iopa_get_stats(sub[i], &s1[i]));
		TH_LOG("member %d: %llu jobs while it shared one job", i,
		       (unsigned long long)(s1[i].completed - s0[i].completed));
		EXPECT_LT(s0[i].completed, s1[i].completed);
		/* sub ids count from 1 in creation order */
		ASSERT_EQ(0, iopa_sub_info_of(self->l.ctx, (uint32_t)i + 1, &si));
		EXPECT_LT(0ULL, (unsigned long long)si.metrics.turn_waits);
		EXPECT_LT(0ULL, (unsigned long long)si.metrics.turn_wait_us);
	}
}

/*
 * A device group measures its device's bytes, everyone's, beside its
 * members': alone they agree; a program reading the device besides
 * shows as the device's bytes above the members'.  (The controller
 * starts up again when such a competitor comes or goes: ctl.c, make
 * sim-test bracket_follows_a_competitor_both_ways.)
 */
TEST_F_TIMEOUT(load, group_sees_others_on_the_device, 120)
{
	unsigned long long ours, dev, theirs, c0, c1, seen = 0, seen_ours = 0;
	atomic_ullong *read_count;
	int64_t t0, t1;
	struct obs o[MAX_SUBS];
	char *buf;
	pid_t pid;
	int k, r, sub;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	LOAD_NULLB(NULLB_THROTTLED, 1);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	sub = load_add_sub(&self->l);
	ASSERT_LE(0, sub);
	/*
	 * One job at a time, still adapting (a member): the reader below,
	 * at depth 1 on the one tag, gets about half of the device.
	 */
	ASSERT_EQ(0, iopa_set_adapt(sub, IOPA_POLICY_KEEP, 1, 1));
	obs_reset(&o[0], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 8, 60000));
	r = groups_bytes(&ours, &dev);
	if (r == -ENOENT || r == -EPERM || r == -ENODEV)
		SKIP(return, "no <debugfs>/iopa/groups: %d", r);
	ASSERT_EQ(0, r);
	TH_LOG("alone: ours %llu B/s, the device's %llu B/s", ours, dev);
	if (!dev)
		SKIP(return, "block_rq_complete not attached: no device bytes");
	ASSERT_LT(0ULL, ours);
	/* jobs of one 4 KiB read: the cycle's edges move little */
	EXPECT_LE(dev, ours + ours / 5);
	EXPECT_LE(ours, dev + dev / 5);

	/*
	 * Another program reads the device, one block at a time, counting
	 * what it read where the test sees it.
	 */
	read_count = mmap(NULL, sizeof(*read_count), PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, read_count);
	atomic_store(read_count, 0);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int fd = open(NULLB_DEV, O_RDONLY | O_DIRECT | O_CLOEXEC);
		off_t off = 0;

		if (fd < 0 || posix_memalign((void **)&buf, BLOCK, BLOCK))
			_exit(1);
		for (;;) {
			if (pread(fd, buf, BLOCK, off) != BLOCK)
				_exit(2);
			atomic_fetch_add(read_count, BLOCK);
			off = (off + BLOCK) % ((off_t)self->l.nr_blocks * BLOCK);
		}
	}
	/*
	 * Eight cycles, the group's view read after each: the cycle that
	 * saw the most of the device beyond ours.  How much of the one tag
	 * the reader gets in one cycle depends on how the guest schedules
	 * it (a loaded host starves it for a cycle or two: the last cycle
	 * alone once saw 265 KB/s of its 1.3 MB/s).
	 */
	obs_reset(&o[0], variant->policy);
	t0 = iopa_now_ns();
	c0 = atomic_load(read_count);
	for (k = 0, r = 0; k < 8 && !r; k++) {
		r = load_run(&self->l, o, 1, 60000);
		if (!r)
			r = groups_bytes(&ours, &dev);
		if (!r && dev > ours && dev - ours > seen) {
			seen = dev - ours;
			seen_ours = ours;
		}
	}
	c1 = atomic_load(read_count);
	t1 = iopa_now_ns();
	kill(pid, SIGKILL);
	EXPECT_EQ(pid, waitpid(pid, NULL, 0));
	munmap(read_count, sizeof(*read_count));
	ASSERT_EQ(0, r);
	ASSERT_WORKERS_OK(&self->l);
	theirs = t1 > t0 ? (c1 - c0) * 1000000000ULL / (t1 - t0) : 0;
	TH_LOG("with a reader: ours %llu B/s and the device's beyond them "
	       "%llu B/s in the cycle that saw most, the reader's own count "
	       "%llu B/s", seen_ours, seen, theirs);
	/*
	 * The reader shows as the device's bytes beyond ours: in that
	 * cycle at least a third of what it says it read, averaged over
	 * the eight.
	 */
	ASSERT_LT(0ULL, theirs) TH_LOG("the reader read nothing");
	EXPECT_LT(0ULL, seen);
	EXPECT_LE(theirs / 3, seen);
}

#define DEBUGFS_DEVICES	"/sys/kernel/debug/iopa/devices"

/*
 * Is @dev counted in <debugfs>/iopa/devices?  1 or 0, *attached set
 * from its header (the probe attached); -errno (-ENOENT: no debugfs).
 */
static int devices_lists(dev_t dev, bool *attached)
{
	char line[256], want[32];
	int r = 0;
	FILE *f;

	if (access(DEBUGFS_DEVICES, F_OK) &&
	    mount("nodev", "/sys/kernel/debug", "debugfs", 0, NULL))
		return -errno;
	f = fopen(DEBUGFS_DEVICES, "re");
	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "%u:%u ", major(dev), minor(dev));
	*attached = false;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "# block_rq_complete attached", 28))
			*attached = true;
		if (!strncmp(line, want, strlen(want)))
			r = 1;
	}
	fclose(f);
	return r;
}

/*
 * A device is counted while a device group needs it, and forgotten when
 * the group goes (Core round 2, item 5: the table was global, 64 slots
 * filled by any job's device and never given back, and a reused dev_t
 * inherited the old counts).
 */
TEST_F_TIMEOUT(load, device_counted_only_while_grouped, 120)
{
	struct iopa_state st;
	struct obs o[MAX_SUBS];
	bool attached;
	struct stat sb;
	int sub, r;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device groups are the bracket policy's");
	LOAD_NULLB(NULLB_THROTTLED, 1);
	ASSERT_EQ(0, stat(NULLB_DEV, &sb));
	r = devices_lists(sb.st_rdev, &attached);
	if (r == -ENOENT || r == -EPERM || r == -ENODEV)
		SKIP(return, "no <debugfs>/iopa/devices: %d", r);
	ASSERT_EQ(0, r);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	sub = load_add_sub(&self->l);
	ASSERT_LE(0, sub);
	obs_reset(&o[0], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 4, 60000));
	ASSERT_EQ(0, iopa_get_state(sub, &st));
	ASSERT_LT(0U, st.sharers) TH_LOG("not in a device group");
	EXPECT_EQ(1, devices_lists(sb.st_rdev, &attached));
	EXPECT_TRUE(attached);
	/* the last member leaves with its fd: the group and the count go */
	load_join(&self->l);
	ASSERT_EQ(sub, self->l.subs[self->l.nr_subs - 1]);
	self->l.nr_subs--;
	self->l.subs[self->l.nr_subs] = -1;
	close(sub);
	EXPECT_EQ(0, devices_lists(sb.st_rdev, &attached));
	EXPECT_TRUE(attached);
}

/*
 * A device group's split walks each member a bounded number of times,
 * and a join in a larger group does not split at once every time (Core
 * round 2, item 11: every join split the budget, in O(members^2) list
 * steps, about 2.6e9 at 25,600 members).  MAX_SUBS members in one
 * cgroup: each split walks them and the cgroup six times each; the
 * joins past the fourth member split once a quarter of the members
 * have joined since the last split, so fewer splits than joins happen
 * at joins (the splits that are not the cycles' ends).
 */
TEST_F_TIMEOUT(load, group_split_linear_and_joins_batched, 180)
{
	struct group_line g = { 0 };
	struct obs o[MAX_SUBS];
	struct iopa_state st;
	int i, r, in = 0;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device groups are the bracket policy's");
	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	for (i = 0; i < MAX_SUBS; i++) {
		ASSERT_LE(0, load_add_sub(&self->l));
		obs_reset(&o[i], variant->policy);
	}
	/* each joins at the end of one of its own cycles with block I/O */
	for (i = 0; i < 60 && in < MAX_SUBS; i++) {
		int s;

		ASSERT_EQ(0, load_run(&self->l, o, 1, 60000));
		for (s = 0, in = 0; s < MAX_SUBS; s++) {
			ASSERT_EQ(0, iopa_get_state(self->l.subs[s], &st));
			in += st.sharers > 0;
		}
	}
	ASSERT_WORKERS_OK(&self->l);
	ASSERT_EQ(MAX_SUBS, in) TH_LOG("%d of %d in the group", in, MAX_SUBS);
	r = group_line(&g);
	if (r == -ENOENT || r == -EPERM)
		SKIP(return, "no <debugfs>/iopa/groups: %d", r);
	ASSERT_EQ(0, r) TH_LOG("no split counts in " DEBUGFS_GROUPS);
	TH_LOG("members %u cycles %llu splits %llu steps %llu", g.members,
	       g.cycles, g.splits, g.steps);
	ASSERT_EQ((unsigned int)MAX_SUBS, g.members);
	/* cycles that ended without a split: turns kept */
	ASSERT_LE(g.turns_kept, g.cycles);
	ASSERT_LE(g.cycles - g.turns_kept, g.splits);
	/*
	 * Every join split at once: MAX_SUBS splits beside the cycles'
	 * (and the turns handed on early, if any).
	 */
	EXPECT_GT((unsigned long long)MAX_SUBS + g.turn_overs,
		  g.splits - (g.cycles - g.turns_kept));
	/*
	 * O(members + cgroups) per split, not O(members^2): six passes
	 * over each (one cgroup here).
	 */
	EXPECT_GE(g.splits * 6 * (MAX_SUBS + 1), g.steps);
	EXPECT_LT(0ULL, g.steps);
}

/*
 * <sysfs>/class/misc/iopa/knees: the line of device @dev.  1 with its
 * fields (*@kb, if not NULL: its job_kb=), 0 if the device has none, or
 * -errno (-EPROTO: a line of another shape).
 */
static int knee_of(dev_t dev, unsigned int *knee, unsigned long long *seq,
		   bool *set, unsigned int *kb)
{
	char buf[8192], *line, *save = NULL;
	int r = iopa_sysfs_read_str("knees", buf, sizeof(buf));

	if (r)
		return r;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned int ma, mi, k, j;
		unsigned long long ds;
		char src[16];

		if (sscanf(line, "%u:%u knee=%u diskseq=%llu src=%15s job_kb=%u",
			   &ma, &mi, &k, &ds, src, &j) != 6)
			return -EPROTO;
		if (makedev(ma, mi) != dev)
			continue;
		*knee = k;
		*seq = ds;
		*set = !strcmp(src, "set");
		if (kb)
			*kb = j;
		return 1;
	}
	return 0;
}

/* Write "MAJ:MIN knee=N" for @dev; 0 or -errno. */
static int knee_set(dev_t dev, unsigned int knee)
{
	char line[64];

	snprintf(line, sizeof(line), "%u:%u knee=%u\n", major(dev),
		 minor(dev), knee);
	return iopa_sysfs_write_str("knees", line);
}

/* A new adaptive submitter's state after its first job on the device. */
static int first_job_state(struct load *l, struct iopa_state *st)
{
	int sub = load_add_sub(l), r;

	if (sub < 0)
		return sub;
	r = iopa_submit_one(sub, l->file, 1);
	if (r != 1)
		return r < 0 ? r : -EIO;
	return iopa_get_state(sub, st);
}

/*
 * A device's knee is set, read and forgotten in the knees file, and bad
 * lines are refused (Admission v3: a start from knowledge).
 */
TEST_F(load, knee_set_read_forget)
{
	static const char * const bad[] = {
		"%u:%u\n", "%u:%u knee=4097\n", "%u:%u knee=3 x\n",
		"%u:%u knee=-1\n", "%u:%u knie=3\n", "0:0 knee=3\n",
		"4096:0 knee=3\n", "%u:%u knee=4294967302\n",
		"0:%u knee=3\n", "%u:%u knee=3 diskseq=x\n",
		"%u:%u diskseq=1 knee=3\n", "%u:%u  knee=3\n",
		"%u:%u knee=3 job_kb=1048577\n", "%u:%u knee=3 job_kb=x\n",
		"%u:%u knee=3 job_kb=\n", "%u:%u knee=3 diskseq=1 diskseq=2\n",
		"%u:%u knee=3 job_kb=1 job_kb=2\n",
		"%u:%u knee=3 src=set\n",
	};
	unsigned long long seq = 1;
	unsigned int knee = 0, kb = 1, i;
	struct stat sb;
	bool set = false;
	char line[64];

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "one run is enough");
	LOAD_NULLB(NULLB_DEEP, 1);
	ASSERT_EQ(0, fstat(self->l.file, &sb));
	ASSERT_EQ(0, knee_set(sb.st_rdev, 6));
	ASSERT_EQ(1, knee_of(sb.st_rdev, &knee, &seq, &set, NULL));
	EXPECT_EQ(6U, knee);
	EXPECT_EQ(0ULL, seq) TH_LOG("bound before any job");
	EXPECT_TRUE(set);
	for (i = 0; i < IOPA_ARRAY_SIZE(bad); i++) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
		snprintf(line, sizeof(line), bad[i], major(sb.st_rdev),
			 minor(sb.st_rdev));
#pragma GCC diagnostic pop
		EXPECT_EQ(-EINVAL, iopa_sysfs_write_str("knees", line))
			TH_LOG("accepted \"%s\"", line);
	}
	ASSERT_EQ(1, knee_of(sb.st_rdev, &knee, &seq, &set, NULL));
	EXPECT_EQ(6U, knee);
	/* what a read shows is valid input: a knee for one disk */
	snprintf(line, sizeof(line), "%u:%u knee=5 diskseq=77\n",
		 major(sb.st_rdev), minor(sb.st_rdev));
	ASSERT_EQ(0, iopa_sysfs_write_str("knees", line));
	ASSERT_EQ(1, knee_of(sb.st_rdev, &knee, &seq, &set, &kb));
	EXPECT_EQ(5U, knee);
	EXPECT_EQ(77ULL, seq);
	EXPECT_EQ(0U, kb) TH_LOG("no size of a job given");
	/* the size of a job, before or after the diskseq */
	snprintf(line, sizeof(line), "%u:%u knee=4 job_kb=64 diskseq=78\n",
		 major(sb.st_rdev), minor(sb.st_rdev));
	ASSERT_EQ(0, iopa_sysfs_write_str("knees", line));
	ASSERT_EQ(1, knee_of(sb.st_rdev, &knee, &seq, &set, &kb));
	EXPECT_EQ(4U, knee);
	EXPECT_EQ(78ULL, seq);
	EXPECT_EQ(64U, kb);
	snprintf(line, sizeof(line), "%u:%u knee=4 diskseq=78 job_kb=1048576\n",
		 major(sb.st_rdev), minor(sb.st_rdev));
	ASSERT_EQ(0, iopa_sysfs_write_str("knees", line));
	ASSERT_EQ(1, knee_of(sb.st_rdev, &knee, &seq, &set, &kb));
	EXPECT_EQ(1048576U, kb);
	ASSERT_EQ(0, knee_set(sb.st_rdev, 0));
	EXPECT_EQ(0, knee_of(sb.st_rdev, &knee, &seq, &set, NULL));
}

/*
 * A submitter's first job on a device with a known knee starts its limit
 * there (its start-up doubles from the knee), not at 8 (a knee below
 * the start as well as above); the entry is bound to the disk then.
 */
TEST_F(load, starts_from_known_knee)
{
	unsigned long long seq = 0;
	struct iopa_state st;
	unsigned int knee = 0;
	struct stat sb;
	bool set;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "a known knee is the bracket policy's start");
	LOAD_NULLB(NULLB_DEEP, 1);
	ASSERT_EQ(0, fstat(self->l.file, &sb));
	ASSERT_EQ(0, knee_set(sb.st_rdev, 6));
	ASSERT_EQ(0, first_job_state(&self->l, &st));
	EXPECT_EQ(6U, st.limit);
	ASSERT_EQ(1, knee_of(sb.st_rdev, &knee, &seq, &set, NULL));
	EXPECT_NE(0ULL, seq) TH_LOG("not bound to the disk");
	EXPECT_EQ(0, knee_set(sb.st_rdev, 0));
}

/*
 * A knee belongs to its disk: another disk at the same device number (a
 * null_blk loaded again) starts cold, and the old entry is forgotten.
 */
TEST_F(load, knee_forgotten_with_its_disk)
{
	unsigned long long seq = 0;
	struct iopa_state st;
	unsigned int knee = 0;
	struct stat sb, sb2;
	bool set;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "a known knee is the bracket policy's start");
	LOAD_NULLB(NULLB_DEEP, 1);
	ASSERT_EQ(0, fstat(self->l.file, &sb));
	ASSERT_EQ(0, knee_set(sb.st_rdev, 6));
	ASSERT_EQ(0, first_job_state(&self->l, &st));
	ASSERT_EQ(6U, st.limit);
	/* the disk goes; another comes at the same number */
	load_stop(&self->l);
	self->l.nr_subs = 0;
	self->l.ctx = iopa_open_ctx();
	ASSERT_LE(0, self->l.ctx);
	LOAD_NULLB(NULLB_DEEP, 1);
	ASSERT_EQ(0, fstat(self->l.file, &sb2));
	ASSERT_EQ(sb.st_rdev, sb2.st_rdev);
	ASSERT_EQ(0, first_job_state(&self->l, &st));
	EXPECT_EQ(8U, st.limit) TH_LOG("not the cold start");
	EXPECT_EQ(0, knee_of(sb.st_rdev, &knee, &seq, &set, NULL))
		TH_LOG("still there: knee %u diskseq %llu", knee, seq);
}

/* The group's search ended with @sub alone on the load's device. */
static int run_until_steady(struct load *l, int sub, unsigned int *lo,
			    unsigned int *hi)
{
	struct obs o[MAX_SUBS];
	struct iopa_state st;
	unsigned int steady = 0;
	int i, r;

	obs_reset(&o[0], IOPA_POLICY_BRACKET);
	*lo = ~0U;
	*hi = 0;
	/* a few of the group's cycles in STEADY */
	for (i = 0; i < 120 && steady < 3; i++) {
		r = load_run(l, o, 1, 60000);
		if (!r)
			r = iopa_get_state(sub, &st);
		if (r)
			return r;
		if (st.sharers && st.mode == IOPA_MODE_STEADY) {
			*lo = st.budget < *lo ? st.budget : *lo;
			*hi = st.budget > *hi ? st.budget : *hi;
			steady++;
		}
	}
	return steady ? 0 : -ETIMEDOUT;
}

/*
 * With learn_knees @learn, @self's device group runs alone on null_blk
 * until its search ended, and goes: 1 if the knees file then has a line
 * for the device (its fields in *@knee, *@seq, *@set, *@kb), 0 if not;
 * the STEADY budgets seen in *@lo..*@hi.
 */
#define GROUP_KNEE_AFTER_STEADY(learn, knee, seq, set, kb, lo, hi, r) do { \
	struct stat __sb; \
	int __sub; \
	SET_LEARN(learn); \
	LOAD_NULLB(NULLB_DEEP, 16); \
	ASSERT_EQ(0, fstat(self->l.file, &__sb)); \
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS)); \
	__sub = load_add_sub(&self->l); \
	ASSERT_LE(0, __sub); \
	ASSERT_EQ(0, run_until_steady(&self->l, __sub, (lo), (hi))) \
		TH_LOG("the group never reached STEADY"); \
	ASSERT_WORKERS_OK(&self->l); \
	load_stop(&self->l); \
	(r) = knee_of(__sb.st_rdev, (knee), (seq), (set), (kb)); \
	if ((r) == 1) \
		EXPECT_EQ(0, knee_set(__sb.st_rdev, 0)); \
} while (0)

/*
 * With learn_knees 0 a group learns nothing: the knees file has no line
 * for its device after its search ended and it went.
 */
TEST_F_TIMEOUT(load, knee_not_learned_when_off, 180)
{
	unsigned int knee = 0, kb, lo, hi;
	unsigned long long seq = 0;
	bool set;
	int r;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device groups are the bracket policy's");
	GROUP_KNEE_AFTER_STEADY(0, &knee, &seq, &set, &kb, &lo, &hi, r);
	EXPECT_EQ(0, r) TH_LOG("learned %u", knee);
}

/*
 * With learn_knees 1, a device group that found its knee leaves it
 * behind: once its search ended (STEADY), the knees file holds the
 * budget it settled at, learned and bound to the disk, after the last
 * member left, with the size of its jobs: 16 O_DIRECT reads of 4 KiB
 * each, 64 KiB (bytes of jobs a cycle's end cuts in two fall on either
 * side: within 2x).
 */
TEST_F_TIMEOUT(load, knee_learned_from_group, 180)
{
	unsigned int knee = 0, kb = 0, lo, hi;
	unsigned long long seq = 0;
	bool set = true;
	int r;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device groups are the bracket policy's");
	GROUP_KNEE_AFTER_STEADY(1, &knee, &seq, &set, &kb, &lo, &hi, r);
	ASSERT_EQ(1, r);
	TH_LOG("knee %u (steady budgets %u..%u) diskseq %llu job_kb %u", knee,
	       lo, hi, seq, kb);
	EXPECT_FALSE(set);
	EXPECT_NE(0ULL, seq);
	EXPECT_LE(lo, knee);
	EXPECT_GE(hi, knee);
	EXPECT_LE(32U, kb);
	EXPECT_GE(128U, kb);
}

/*
 * With learn_knees 1, a device group whose search never settled (a run
 * of a second) still leaves what it found when its last member leaves:
 * the base its doublings reached, at least the start of 8 on a deep
 * device, learned and bound to the disk.  A short run's next start
 * begins there (warm) instead of at 8.
 */
TEST_F_TIMEOUT(load, knee_left_by_a_short_group, 120)
{
	unsigned long long seq = 0;
	struct iopa_state st;
	struct obs o[MAX_SUBS];
	unsigned int knee = 0;
	struct stat sb;
	bool set = true;
	int sub, r;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device groups are the bracket policy's");
	SET_LEARN(1);
	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, fstat(self->l.file, &sb));
	ASSERT_EQ(0, knee_set(sb.st_rdev, 0));
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	sub = load_add_sub(&self->l);
	ASSERT_LE(0, sub);
	obs_reset(&o[0], variant->policy);
	/* until it shares its device: one group, its own */
	for (r = 0; r < 100; r++) {
		ASSERT_EQ(0, load_run(&self->l, o, 0, 100));
		ASSERT_EQ(0, iopa_get_state(sub, &st));
		if (st.budget)
			break;
	}
	ASSERT_LT(0U, st.budget);
	TH_LOG("budget %u mode %u when the load stopped", st.budget, st.mode);
	ASSERT_WORKERS_OK(&self->l);
	load_stop(&self->l);
	r = knee_of(sb.st_rdev, &knee, &seq, &set, NULL);
	ASSERT_EQ(1, r);
	TH_LOG("knee %u diskseq %llu", knee, seq);
	EXPECT_FALSE(set);
	EXPECT_NE(0ULL, seq);
	EXPECT_LE(8U, knee);
	EXPECT_EQ(0, knee_set(sb.st_rdev, 0));
}

/* A leaver's share goes back: the one left gets the whole budget. */
TEST_F_TIMEOUT(load, shared_device_leaver_share_returns, 120)
{
	struct iopa_state sa;
	struct obs o[MAX_SUBS];
	int a, b;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	a = load_add_sub(&self->l);
	ASSERT_LE(0, a);
	b = load_add_sub(&self->l);
	ASSERT_LE(0, b);
	obs_reset(&o[0], variant->policy);
	obs_reset(&o[1], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 15, 60000));
	ASSERT_EQ(0, iopa_get_state(a, &sa));
	ASSERT_LT(0U, sa.budget);
	/* b leaves: the last submitter of the load */
	ASSERT_EQ(b, self->l.subs[self->l.nr_subs - 1]);
	self->l.nr_subs--;
	close(b);
	obs_reset(&o[0], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 10, 60000));
	ASSERT_WORKERS_OK(&self->l);
	ASSERT_EQ(0, iopa_get_state(a, &sa));
	LOG_STATE(&sa);
	TH_LOG("budget %u sharers %u limit %u", sa.budget, sa.sharers,
	       sa.limit);
	ASSERT_LT(0U, sa.budget);
	EXPECT_EQ(1U, sa.sharers);
	EXPECT_EQ(sa.budget, sa.limit);
}

/* Move this process into cgroup cg_dirs[@i] (MAKE_CGROUPS() made it). */
static int cg_enter(int i)
{
	char pid[16], procs[128];

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg_dirs[i]);
	snprintf(pid, sizeof(pid), "%d", getpid());
	return iopa_write_str(procs, pid);
}

/*
 * Make the cgroups of cg_dirs (cgroup2 mounted if it is not), undone in
 * the teardown; SKIPs the test without cgroup v2.
 */
#define MAKE_CGROUPS() do { \
	int __i; \
	if (access(CG_ROOT "/cgroup.controllers", F_OK)) { \
		if (mount("cgroup2", CG_ROOT, "cgroup2", 0, NULL)) \
			SKIP(return, "no cgroup v2 (%s)", strerror(errno)); \
		self->cg_mounted = true; \
	} \
	for (__i = 0; __i < 2; __i++) { \
		rmdir(cg_dirs[__i]); \
		ASSERT_EQ(0, mkdir(cg_dirs[__i], 0755)); \
		self->cg_made = __i + 1; \
	} \
} while (0)

/*
 * The states of submitters @a, @b and @c as one split left them: read
 * again until the three agree on the group's cycles and budget (a split
 * may come between two reads).  0, or -errno (-EAGAIN: never agreed).
 */
static int states_of_one_split(int a, int b, int c, struct iopa_state *sa,
			       struct iopa_state *sb, struct iopa_state *sc)
{
	int tries, r;

	for (tries = 0; tries < 20; tries++) {
		r = iopa_get_state(a, sa);
		if (!r)
			r = iopa_get_state(b, sb);
		if (!r)
			r = iopa_get_state(c, sc);
		if (r)
			return r;
		if (sa->group_cycles == sb->group_cycles &&
		    sb->group_cycles == sc->group_cycles &&
		    sa->budget == sb->budget && sb->budget == sc->budget)
			return 0;
	}
	return -EAGAIN;
}

/*
 * The budget is split by cgroup, then equally within one: a cgroup that
 * opens two submitters gets no more than one that opens one; a weight
 * moves the split between cgroups.
 */
TEST_F_TIMEOUT(load, shared_device_split_by_cgroup, 180)
{
	struct iopa_state sa, sb, sc;
	struct obs o[MAX_SUBS];
	int a, b, c, i, d;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	MAKE_CGROUPS();
	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	/* a in cgroup A; b and c in cgroup B (the submitter's creator's) */
	ASSERT_EQ(0, cg_enter(0));
	a = load_add_sub(&self->l);
	ASSERT_LE(0, a);
	ASSERT_EQ(0, cg_enter(1));
	b = load_add_sub(&self->l);
	ASSERT_LE(0, b);
	c = load_add_sub(&self->l);
	ASSERT_LE(0, c);
	for (i = 0; i < 3; i++)
		obs_reset(&o[i], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 20, 90000));
	ASSERT_EQ(0, states_of_one_split(a, b, c, &sa, &sb, &sc));
	TH_LOG("equal weights: budget %u sharers %u limits %u | %u %u",
	       sa.budget, sa.sharers, sa.limit, sb.limit, sc.limit);
	ASSERT_LE(4U, sa.budget);
	EXPECT_EQ(2U, sa.sharers);
	/* half each: a alone, b and c a quarter (the rest to the first) */
	d = (int)sa.limit - (int)(sb.limit + sc.limit);
	EXPECT_GE(1, d < 0 ? -d : d);
	d = (int)sb.limit - (int)sc.limit;
	EXPECT_GE(1, d < 0 ? -d : d);
	/* cgroup A at half weight: a third of the budget */
	ASSERT_EQ(0, iopa_set_adapt_weight(a, IOPA_POLICY_KEEP, 0, 0, 50));
	for (i = 0; i < 3; i++)
		obs_reset(&o[i], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 10, 90000));
	ASSERT_WORKERS_OK(&self->l);
	ASSERT_EQ(0, states_of_one_split(a, b, c, &sa, &sb, &sc));
	TH_LOG("weights 50, 100: budget %u limits %u | %u %u",
	       sa.budget, sa.limit, sb.limit, sc.limit);
	EXPECT_EQ(50U, sa.weight);
	d = 3 * (int)sa.limit - (int)sa.budget;
	EXPECT_GE(3, d < 0 ? -d : d);
	d = 3 * (int)(sb.limit + sc.limit) - 2 * (int)sa.budget;
	EXPECT_GE(3, d < 0 ? -d : d);
}

/*
 * A member's min bound is its own: it runs its min whatever its part,
 * and that is no overrun the others wait on.  Budget 2 (max_limit), A
 * with min 2 and B: B runs too.  When the drain counted A's jobs above
 * its part as an overrun, B was held at 0 for as long as A stayed busy.
 */
TEST_F_TIMEOUT(load, shared_device_min_bound_starves_no_one, 120)
{
	struct iopa_stats s0, s1;
	struct obs o[MAX_SUBS];
	int a, b;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	NEED_TURNS();
	ASSERT_EQ(0, iopa_sysfs_write("max_limit", 2));
	LOAD_NULLB(NULLB_THROTTLED, 1);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	a = load_add_sub(&self->l);
	ASSERT_LE(0, a);
	b = load_add_sub(&self->l);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, iopa_set_adapt(a, IOPA_POLICY_KEEP, 2, 0));
	obs_reset(&o[0], variant->policy);
	obs_reset(&o[1], variant->policy);
	/* long enough for both to join the group */
	ASSERT_EQ(0, load_run(&self->l, o, 0, 3000));
	ASSERT_EQ(0, iopa_get_stats(b, &s0));
	ASSERT_EQ(0, load_run(&self->l, o, 0, 4000));
	ASSERT_WORKERS_OK(&self->l);
	ASSERT_EQ(0, iopa_get_stats(b, &s1));
	TH_LOG("B completed %llu jobs in 4 s beside A at its min of 2",
	       (unsigned long long)(s1.completed - s0.completed));
	/* a throttled device's 1000 IOPS, B a third of them at least */
	EXPECT_LT(s0.completed + 200, s1.completed);
}

/* Jobs completed by the submitters subs[from..to) of @l; 0 on error. */
static unsigned long long load_completed(struct load *l, int from, int to)
{
	unsigned long long n = 0;
	struct iopa_stats st;
	int i;

	for (i = from; i < to; i++) {
		if (iopa_get_stats(l->subs[i], &st))
			return 0;
		n += st.completed;
	}
	return n;
}

/*
 * Run the load of V (subs[0]) and G (subs[1..4]) for @ms: V's share of
 * the jobs completed meanwhile, or -1 if none completed.
 */
static double v_share(struct load *l, struct obs *o, int ms)
{
	unsigned long long v0, g0, v1, g1;

	v0 = load_completed(l, 0, 1);
	g0 = load_completed(l, 1, 5);
	if (load_run(l, o, 0, ms))
		return -1;
	v1 = load_completed(l, 0, 1);
	g1 = load_completed(l, 1, 5);
	if (v1 + g1 <= v0 + g0)
		return -1;
	return (double)(v1 - v0) / (double)(v1 - v0 + g1 - g0);
}

/*
 * Opening submitters buys a cgroup nothing, however small the budget.
 * On a throttled device (a budget of a few jobs), a process in cgroup V
 * with one submitter against four submitters in cgroup G: V's share of
 * the jobs (all alike: one 4 KiB read each) is a half at equal weights,
 * three quarters at 300:100; at least 0.45 and 0.70 over 12 s (turns
 * last 500 ms or more: a window's ends cut one), 20 s at 300:100 (at a
 * budget of 2 a 12 s window read 0.698 once; at 1, 0.73-0.77).  When
 * each member ran a job at least, G's four took 4 of 5-7 jobs: V had
 * 0.42 and 0.53.
 */
TEST_F_TIMEOUT(load, shared_device_small_budget_split_by_cgroup, 240)
{
	struct iopa_state sv;
	struct obs o[MAX_SUBS];
	double share;
	int i;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	NEED_TURNS();
	MAKE_CGROUPS();
	LOAD_NULLB(NULLB_THROTTLED, 1);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	/* V: subs[0] in cgroup A; G: subs[1..4] in cgroup B */
	ASSERT_EQ(0, cg_enter(0));
	ASSERT_LE(0, load_add_sub(&self->l));
	ASSERT_EQ(0, cg_enter(1));
	for (i = 0; i < 4; i++)
		ASSERT_LE(0, load_add_sub(&self->l));
	for (i = 0; i < 5; i++)
		obs_reset(&o[i], variant->policy);
	/* long enough for all five to join the group */
	ASSERT_EQ(0, load_run(&self->l, o, 0, 4000));
	share = v_share(&self->l, o, 12000);
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &sv));
	TH_LOG("equal weights: budget %u, V's share %.3f", sv.budget, share);
	EXPECT_EQ(2U, sv.sharers);
	EXPECT_LE(0.45, share);

	ASSERT_EQ(0, iopa_set_adapt_weight(self->l.subs[0], IOPA_POLICY_KEEP,
					   0, 0, 300));
	ASSERT_EQ(0, load_run(&self->l, o, 0, 2000));
	share = v_share(&self->l, o, 20000);
	ASSERT_WORKERS_OK(&self->l);
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &sv));
	TH_LOG("weights 300:100: budget %u, V's share %.3f", sv.budget, share);
	EXPECT_EQ(300U, sv.weight);
	EXPECT_LE(0.70, share);
}

/*
 * A worker thread holding two jobs of a submitter charges its block I/O
 * once: 4 MiB read while it holds both are 4 MiB in the cycle, not 8
 * (bytes_per_s times the cycle's length; a late timer only lowers it).
 */
TEST_F_TIMEOUT(load, io_charged_once_per_thread, 60)
{
	const size_t mib = 1 << 20;
	struct iopa_work w[2];
	struct iopa_state st;
	int64_t deadline;
	uint64_t c0, bytes;
	int ctx, sub, wrk, i;
	void *buf;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "policy-independent: run with bracket only");
	LOAD_NULLB(NULLB_DEEP, 16);
	ctx = iopa_open_ctx();
	ASSERT_LE(0, ctx);
	sub = iopa_submitter_create(ctx, 2);
	ASSERT_LE(0, sub);
	wrk = iopa_worker_create(ctx);
	ASSERT_LE(0, wrk);
	ASSERT_EQ(2, iopa_submit_many(sub, self->l.file, 1, 2));
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, iopa_fetch_nb(wrk, &w[i]));
		ASSERT_LE(0, w[i].fd);
	}
	ASSERT_EQ(0, posix_memalign(&buf, 4096, mib));
	for (i = 0; i < 4; i++)
		ASSERT_EQ((ssize_t)mib, pread(w[0].fd, buf, mib, (off_t)(i * mib)));
	free(buf);
	ASSERT_EQ(0, iopa_get_state(sub, &st));
	c0 = st.cycles;
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, iopa_complete(wrk, w[i].job_id, 0));
		close(w[i].fd);
	}
	/* the cycle that ended with both completions in it */
	deadline = iopa_now_ns() + IOPA_MS_NS(10000);
	do {
		ASSERT_EQ(0, iopa_get_state(sub, &st));
		if (st.cycles > c0 && st.completions)
			break;
		usleep(10 * 1000);	/* cycles end on a timer: poll */
	} while (iopa_now_ns() < deadline);
	ASSERT_EQ(2U, st.completions);
	bytes = st.bytes_per_s * st.cycle_ms / 1000;
	TH_LOG("cycle of %u ms: %llu bytes/s, %llu bytes charged", st.cycle_ms,
	       (unsigned long long)st.bytes_per_s, (unsigned long long)bytes);
	EXPECT_LE(2 * mib, bytes);
	EXPECT_GE(6 * mib, bytes);
	close(wrk);
	close(sub);
	close(ctx);
}

/* A pinned limit is the submitter's own: it leaves the device's group. */
TEST_F_TIMEOUT(load, shared_device_pinned_leaves, 120)
{
	struct iopa_state sa;
	struct obs o[MAX_SUBS];
	int a;

	if (variant->policy != IOPA_POLICY_BRACKET)
		SKIP(return, "device sharing is the bracket policy's");
	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	a = load_add_sub(&self->l);
	ASSERT_LE(0, a);
	obs_reset(&o[0], variant->policy);
	ASSERT_EQ(0, load_run(&self->l, o, 10, 60000));
	ASSERT_EQ(0, iopa_get_state(a, &sa));
	ASSERT_LT(0U, sa.budget);
	ASSERT_EQ(0, iopa_set_limit(a, 3));
	ASSERT_EQ(0, iopa_get_state(a, &sa));
	EXPECT_EQ(0U, sa.budget);
	EXPECT_EQ(0U, sa.sharers);
	EXPECT_EQ(3U, sa.limit);
	ASSERT_WORKERS_OK(&self->l);
}

TEST_F_TIMEOUT(load, stays_low_on_throttled_device, 120)
{
	/* 1000 IOPS x 4 KiB, and a margin for jobs that straddle a cycle */
	const uint64_t device_max = 1000ULL * BLOCK * 5 / 4;
	uint64_t inc;
	unsigned int gain;
	struct obs o;

	ASSERT_EQ(0, iopa_sysfs_write("init_limit", 1));
	ASSERT_EQ(0, iopa_sysfs_write("fast_cap", 2));
	ASSERT_EQ(0, iopa_sysfs_read("increase_threshold", &inc));
	LOAD_NULLB(NULLB_THROTTLED, 1);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	ASSERT_LE(0, load_add_sub(&self->l));
	obs_reset(&o, variant->policy);
	if (variant->policy == IOPA_POLICY_IOPA) {
		o.inc_permille = (uint32_t)inc;
		o.fast_cap = 2;
	}
	/* ~40 normal cycles after the start-up: ~4-5 s */
	ASSERT_EQ(0, load_run(&self->l, &o, 45, 60000));
	LOG_OBS("throttled", &o);
	LOG_STATE(&o.st);
	ASSERT_WORKERS_OK(&self->l);
	EXPECT_LT(0ULL, (unsigned long long)o.max_bytes);
	EXPECT_GE(device_max, o.max_bytes)
		TH_LOG("more bytes/s charged than the device can read");
	EXPECT_LE(1U, o.lo);
	EXPECT_EQ(0U, o.bad_cycle_ms);
	EXPECT_GT(self->max_limit, o.hi);

	if (variant->policy == IOPA_POLICY_IOPA) {
		/*
		 * iopa compares each cycle with the ones before it, so the
		 * device's own swings (a loaded host, a debug kernel) are
		 * verdicts to it and it may drift up: where it ends is not
		 * its promise.  Its promise is each step: judged at every
		 * climb (obs_judge_climb()), however noisy the device.
		 */
		TH_LOG("iopa: %u climbs seen, %u unearned", o.climbs,
		       o.unearned);
		EXPECT_EQ(0U, o.unearned) TH_LOG("%s", o.unearned_what);
		return;
	}
	/*
	 * The premise: depth does not pay.  On a kernel with a high CPU
	 * cost a job (KASAN, lockdep: the debug guest) the CPU work of one
	 * job overlaps the device time of another, so depth does pay and
	 * rising is the right answer; then there is nothing to judge.
	 * Else two jobs read as fast as more.  Within the noise the search
	 * may still sit a little above two (2.3% of simulated runs end
	 * above 4: ctl_test bracket_noisy_flat_device_stays_low); it must
	 * not climb: 8 at most.
	 */
	if (o.last > 8 && _metadata->exit_code == KSFT_PASS) {
		gain = depth_gain(&self->l, 1, o.last, 8);
		TH_LOG("limit %u ran %u.%03ux as fast as limit 1", o.last,
		       gain / 1000, gain % 1000);
		if (gain > inc)
			SKIP(return, "depth paid on this kernel (limit %u ran "
			     "%u.%03ux as fast as limit 1): not the device this "
			     "test needs", o.last, gain / 1000, gain % 1000);
	}
	EXPECT_GE(8U, o.last) TH_LOG("ended at %u", o.last);
}

/* (c) SET_ADAPT bounds under load: every limit seen within them. */
TEST_F_TIMEOUT(load, bounds_honoured, 120)
{
	struct obs o;
	int lim;

	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	ASSERT_LE(0, load_add_sub(&self->l));
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 5, 30000));

	ASSERT_EQ(0, iopa_set_adapt(self->l.subs[0], IOPA_POLICY_KEEP, 3, 5));
	/* at once */
	lim = iopa_get_limit(self->l.subs[0]);
	EXPECT_LE(3, lim);
	EXPECT_GE(5, lim);
	/* jobs started above 5 before the call drain meanwhile */
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 0, 200));
	EXPECT_LE(3U, o.lo);
	EXPECT_GE(5U, o.hi);
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 30, 60000));
	LOG_OBS("bounded 3..5", &o);
	ASSERT_WORKERS_OK(&self->l);
	EXPECT_LE(3U, o.lo);
	EXPECT_GE(5U, o.hi);
	EXPECT_EQ(3U, o.st.min);
	EXPECT_EQ(5U, o.st.max);
	EXPECT_EQ(0U, o.bad_policy);
	EXPECT_NE((__u32)IOPA_MODE_FIXED, o.st.mode);
	/* running jobs are not preempted, but none start above the bound */
	EXPECT_GE(5U, o.max_inflight);
}

/* (d) A fixed limit under load holds; SET_LIMIT 0 adapts again. */
TEST_F_TIMEOUT(load, fixed_honoured, 120)
{
	struct obs o;
	struct iopa_state st;
	uint64_t cycles, changes;

	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	ASSERT_LE(0, load_add_sub(&self->l));
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 8, 30000));
	LOG_OBS("before fixing", &o);

	ASSERT_EQ(0, iopa_set_limit(self->l.subs[0], 2));
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &st));
	changes = st.changes;
	EXPECT_EQ(2U, st.limit);
	/* let jobs started above the new limit finish */
	obs_reset(&o, 0);
	ASSERT_EQ(0, load_run(&self->l, &o, 0, 200));
	/* then ~10 normal cycles' worth */
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 0, 1000));
	cycles = o.st.cycles - o.first_st.cycles;
	LOG_OBS("fixed at 2", &o);
	EXPECT_EQ(2U, o.lo);
	EXPECT_EQ(2U, o.hi);
	EXPECT_EQ(1U << IOPA_MODE_FIXED, o.modes);
	EXPECT_EQ((__u32)IOPA_LIMIT_F_FIXED, o.st.flags);
	EXPECT_GE(2U, o.max_inflight);
	/* pinned cycles only measure: no change, rates still live */
	EXPECT_EQ(changes, o.st.changes);
	EXPECT_EQ(0U, o.bad_policy);
	if (cycles)
		EXPECT_LT(0ULL, (unsigned long long)o.st.bytes_per_s);

	ASSERT_EQ(0, iopa_set_limit(self->l.subs[0], 0));
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &st));
	EXPECT_NE((__u32)IOPA_MODE_FIXED, st.mode);
	EXPECT_EQ(0U, st.flags);
	EXPECT_EQ(0, iopa_get_limit_flags(self->l.subs[0]));
	EXPECT_EQ(variant->policy, st.policy);
	/* it cycles again */
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 5, 30000));
	LOG_OBS("adapting again", &o);
	EXPECT_EQ(0U, o.modes & (1U << IOPA_MODE_FIXED));
	ASSERT_WORKERS_OK(&self->l);
}

/*
 * (e) Two submitters on one device, in one context, sharing the workers:
 * each keeps its own policy, bounds, limit and state.
 */
TEST_F_TIMEOUT(load, two_submitters_independent, 120)
{
	struct obs o[MAX_SUBS];
	struct stat sb;
	int a, b;

	LOAD_NULLB(NULLB_DEEP, 16);
	ASSERT_EQ(0, fstat(self->l.file, &sb));
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	a = load_add_sub(&self->l);
	ASSERT_LE(0, a);
	b = load_add_sub(&self->l);
	ASSERT_LE(0, b);
	ASSERT_EQ(0, iopa_set_adapt(a, IOPA_POLICY_KEEP, 0, 3));
	ASSERT_EQ(0, iopa_set_adapt(b, variant->other, 4, 6));
	/* B was clamped at once; A was not touched by B's call */
	EXPECT_LE(4, iopa_get_limit(b));
	EXPECT_GE(6, iopa_get_limit(b));
	EXPECT_GE(3, iopa_get_limit(a));

	obs_reset(&o[0], variant->policy);
	obs_reset(&o[1], variant->other);
	ASSERT_EQ(0, load_run(&self->l, o, 30, 60000));
	LOG_OBS("A (0..3)", &o[0]);
	LOG_OBS("B (4..6)", &o[1]);
	ASSERT_WORKERS_OK(&self->l);
	EXPECT_LE(1U, o[0].lo);
	EXPECT_GE(3U, o[0].hi);
	EXPECT_LE(4U, o[1].lo);
	EXPECT_GE(6U, o[1].hi);
	EXPECT_EQ(0U, o[0].bad_policy);
	EXPECT_EQ(0U, o[1].bad_policy);
	EXPECT_EQ(0U, o[0].st.min);
	EXPECT_EQ(3U, o[0].st.max);
	EXPECT_EQ(4U, o[1].st.min);
	EXPECT_EQ(6U, o[1].st.max);
	/* both measured their own jobs */
	EXPECT_LT(0ULL, (unsigned long long)o[0].max_bytes);
	EXPECT_LT(0ULL, (unsigned long long)o[1].max_bytes);
	EXPECT_TRUE(state_has_dev(&o[0].st, kdev(sb.st_rdev)));
	EXPECT_TRUE(state_has_dev(&o[1].st, kdev(sb.st_rdev)));
	EXPECT_GE(3U, o[0].max_inflight);
	EXPECT_GE(6U, o[1].max_inflight);

	/* fixing one leaves the other adapting */
	ASSERT_EQ(0, iopa_set_limit(a, 1));
	obs_reset(&o[0], variant->policy);
	obs_reset(&o[1], variant->other);
	ASSERT_EQ(0, load_run(&self->l, o, 0, 500));
	EXPECT_EQ(1U << IOPA_MODE_FIXED, o[0].modes);
	EXPECT_EQ(0U, o[1].modes & (1U << IOPA_MODE_FIXED));
	EXPECT_LT(o[1].first_st.cycles, o[1].st.cycles);
	EXPECT_EQ(1U, o[0].lo);
	EXPECT_EQ(1U, o[0].hi);
	EXPECT_EQ(o[0].first_st.changes, o[0].st.changes);
	EXPECT_LE(4U, o[1].lo);
	EXPECT_GE(6U, o[1].hi);
}

struct trace_line {
	unsigned int ctx, sub, old, new;
};

/* Parse "iopa_limit_change: ctx=.. sub=.. old=.. new=.." lines. */
static int parse_limit_changes(const char *buf, struct trace_line *out, int max,
			       int *cycles_lines)
{
	const char *p = buf;
	int n = 0;

	*cycles_lines = 0;
	while (p && *p) {
		const char *eol = strchr(p, '\n');
		const char *ev = strstr(p, "iopa_limit_change: ");

		if (ev && (!eol || ev < eol)) {
			struct trace_line t;

			if (sscanf(ev, "iopa_limit_change: ctx=%u sub=%u old=%u new=%u",
				   &t.ctx, &t.sub, &t.old, &t.new) == 4 && n < max)
				out[n] = t;
			n++;
		}
		ev = strstr(p, "iopa_cycle: ");
		if (ev && (!eol || ev < eol))
			(*cycles_lines)++;
		p = eol ? eol + 1 : NULL;
	}
	return n;
}

/*
 * (f) iopa_limit_change fires once for every change the controller
 * makes (GET_STATE.changes counts the same), each a real change within
 * the bounds; iopa_cycle once for every cycle.
 */
TEST_F_TIMEOUT(load, trace_events_match_state, 120)
{
	struct trace_line *lines;
	struct iopa_state st_a, st_b;
	struct obs o;
	uint32_t init;
	int i, n, ncycles;
	int64_t sum = 0;
	char *buf;

	self->tracefs = tracefs_dir();
	if (!self->tracefs)
		SKIP(return, "no tracefs");
	{
		char p[256];

		snprintf(p, sizeof(p), "%s/events/iopa/iopa_limit_change/enable",
			 self->tracefs);
		if (access(p, F_OK))
			SKIP(return, "no iopa trace events in %s", self->tracefs);
	}
	LOAD_NULLB(NULLB_DEEP, 16);

	/*
	 * Events are switched on and off while nothing runs: each switch
	 * patches code (static keys), and under QEMU TCG a vCPU running the
	 * site being patched can take a stray int3 (an oops in
	 * try_to_wake_up was seen with the load running).  For the same
	 * reason record-cmd is off: it would hook sched_switch/sched_wakeup,
	 * the hottest sites there are.
	 */
	self->old_tracing_on = trace_read_int(self->tracefs, "tracing_on");
	self->old_record_cmd = trace_read_int(self->tracefs, "options/record-cmd");
	self->trace_used = true;
	if (self->old_record_cmd > 0)
		ASSERT_EQ(0, trace_write(self->tracefs, "options/record-cmd", "0"));
	ASSERT_EQ(0, trace_write(self->tracefs, "trace", ""));
	ASSERT_EQ(0, trace_write(self->tracefs,
				 "events/iopa/iopa_limit_change/enable", "1"));
	ASSERT_EQ(0, trace_write(self->tracefs, "events/iopa/iopa_cycle/enable",
				 "1"));
	ASSERT_EQ(0, trace_write(self->tracefs, "tracing_on", "1"));

	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	/* created with the events on: every change of its life is traced */
	ASSERT_LE(0, load_add_sub(&self->l));
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &st_a));
	init = st_a.limit;
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 30, 60000));
	LOG_OBS("traced", &o);
	load_join(&self->l);

	/*
	 * Changes counted before the events went off were all traced; any
	 * traced one was counted by the second read.  The submitter is
	 * still open (its cycles go on, without demand now).
	 */
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &st_a));
	ASSERT_EQ(0, trace_write(self->tracefs, "events/iopa/enable", "0"));
	ASSERT_EQ(0, iopa_get_state(self->l.subs[0], &st_b));
	buf = trace_read_all(self->tracefs, "trace");
	ASSERT_NE(NULL, buf);
	lines = calloc(st_b.changes + 16, sizeof(*lines));
	ASSERT_NE(NULL, lines);
	n = parse_limit_changes(buf, lines, st_b.changes + 16, &ncycles);
	TH_LOG("%d iopa_limit_change lines, changes %llu..%llu; %d iopa_cycle "
	       "lines, cycles %llu..%llu", n,
	       (unsigned long long)st_a.changes, (unsigned long long)st_b.changes,
	       ncycles, (unsigned long long)st_a.cycles,
	       (unsigned long long)st_b.cycles);
	ASSERT_WORKERS_OK(&self->l);

	EXPECT_LE(1ULL, (unsigned long long)st_a.changes);
	EXPECT_LE((int64_t)st_a.changes, n);
	EXPECT_GE((int64_t)st_b.changes, n);
	EXPECT_LE((int64_t)st_a.cycles, ncycles);
	EXPECT_GE((int64_t)st_b.cycles, ncycles);
	for (i = 0; i < n && i < (int)st_b.changes + 16; i++) {
		/* one submitter: one (ctx, sub) */
		EXPECT_EQ(lines[0].ctx, lines[i].ctx);
		EXPECT_EQ(lines[0].sub, lines[i].sub);
		EXPECT_NE(lines[i].old, lines[i].new) TH_LOG("line %d", i);
		EXPECT_LE(1U, lines[i].new);
		EXPECT_GE(self->max_limit, lines[i].new);
		sum += (int64_t)lines[i].new - lines[i].old;
	}
	/* the changes add up to the way from the first limit to the last */
	if (st_a.changes == st_b.changes && n == (int)st_b.changes)
		EXPECT_EQ((int64_t)st_b.limit - init, sum);
	free(lines);
	free(buf);
}

/*
 * (g) CPU-bound jobs (2 ms of CPU each, no I/O): jobs/s stop growing at
 * the CPU count and the CPU guard stops growth there: the limit never
 * rises above its start or twice the CPUs, whichever is more (bracket
 * starts at 8, above a small machine's CPU count), and from a start
 * above that the search comes down.  No block I/O is charged to them.
 */
TEST_F_TIMEOUT(load, cpu_bound_capped, 120)
{
	char path[64];
	struct obs o;
	long cpus = nr_cpus();
	long start = (long)iopa_expected_init_limit(variant->policy);
	long most = 2 * cpus > start ? 2 * cpus : start;

	self->l.file = iopa_job_file(path, O_RDONLY);
	ASSERT_LE(0, self->l.file);
	unlink(path);
	self->l.kind = JOB_CPU;
	ASSERT_EQ(0, load_start_workers(&self->l, NR_WORKERS));
	ASSERT_LE(0, load_add_sub(&self->l));
	obs_reset(&o, variant->policy);
	ASSERT_EQ(0, load_run(&self->l, &o, 60, 60000));
	LOG_OBS("cpu-bound", &o);
	LOG_STATE(&o.st);
	ASSERT_WORKERS_OK(&self->l);
	EXPECT_GE(most, (long)o.hi) TH_LOG("%ld CPUs, start %ld", cpus, start);
	/*
	 * From a start above twice the CPUs the search comes down (not
	 * always to 2 x CPUs within 60 cycles, nor for good: a probe up by
	 * the finest step may win on noise; 6.1 ended at 5 once, and once
	 * went down to 6 and back to its start of 8 by the 60th cycle).
	 */
	if (start > 2 * cpus)
		EXPECT_GT(start, (long)o.lo)
			TH_LOG("%ld CPUs, start %ld", cpus, start);
	EXPECT_LT(0ULL, (unsigned long long)o.max_jobs);
	EXPECT_EQ(0ULL, (unsigned long long)o.max_bytes);
	EXPECT_EQ(0U, o.bad_cycle_ms);
}

TEST_HARNESS_MAIN
