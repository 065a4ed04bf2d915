// SPDX-License-Identifier: GPL-2.0
/*
 * iopa - device-wide admission: submitters that read one device share
 * its budget.
 *
 * Each submitter's own controller sees only its own bytes: two of them on
 * one disk each climb against the other, and a probe that only takes
 * share from a neighbour looks like a gain.  Only the kernel sees every
 * submitter of every process on a device, so it controls the device as a
 * whole:
 *
 * - A group per device (the device of a job's file: devs[0] of the
 *   submitter).  A submitter joins its device's group at the end of one
 *   of its own cycles once it adapts with the bracket policy and its jobs
 *   do block I/O; it leaves when it is pinned (SET_LIMIT), switches
 *   policy, or closes.  Submitters without device I/O (CPU-bound jobs,
 *   cache hits), pinned ones and those with another policy keep their
 *   own controller.
 * - The group has one controller (kernel/ctl.c, the bracket policy)
 *   whose limit is the device's budget: how many jobs of all its members
 *   may run at once.  Its samples are the members' summed block-layer
 *   bytes, completions and service times, so a probe is judged on what
 *   the device gives all of them: taking a neighbour's share is not a
 *   gain.  The first member hands the group its own controller, state
 *   and all, so a lone submitter adapts exactly as it did alone.
 * - The budget is split among the cgroups (v2) of the active members
 *   (those with jobs waiting or running), in proportion to each cgroup's
 *   weight (the largest weight of its active submitters; IOPA_WEIGHT_*),
 *   then equally among a cgroup's active submitters, within each
 *   submitter's min/max (what a bound cuts off is not passed on).  A
 *   part that is not a whole number of jobs is given over time
 *   (share.c): each split gives the whole jobs, and the jobs left over
 *   one each to the sharers owed most, so that over a few splits each
 *   runs its weight's share.  Why cgroups: a service is a cgroup (a
 *   systemd unit, a container), so opening more submitters, contexts or
 *   processes inside it buys nothing; splitting by user would let one
 *   user's services starve each other and a container could not be
 *   isolated.  The cgroup is the leaf one: a user who may create cgroups
 *   of their own (a delegated subtree) can open more shares.  A weight
 *   above the default needs CAP_SYS_NICE, as a nice value below 0 does.
 *   An inactive member keeps 1, to start again at once.
 * - Turns.  The budget is the device's, whatever the number of members:
 *   a disk whose best is one stream has a budget of 1 however many tools
 *   read it (two processes reading big files from the model disk, one
 *   job each, read 27% less than one alone).  A member whose part is
 *   below one job (more members than the budget, or a small weight)
 *   gets 0 at some splits: its limit is 0, it waits for its turn
 *   (IOPA_LIMIT_F_WAITING in GET_STATE, its waits in the metrics), its
 *   running jobs end first: the next holder starts only what
 *   the budget has room for until they do (iopa_group_apply_parts()),
 *   so a change of turn never reads two streams at once.  A turn lasts
 *   at least IOPA_GROUP_TURN_MS while its holders have jobs (group
 *   cycles end without a split meanwhile, unless the budget or the
 *   members change): a change of holder costs the disk a seek, a few
 *   percent of a turn that long.  A holder that runs out of jobs hands
 *   its turn on at once (iopa_group_turn_over()).  A member with a min
 *   bound above 1 runs its min: it asked for it.
 * - The split is redone at every group cycle (evidence-ended, so a few
 *   hundred milliseconds on a disk) and when a submitter joins a group
 *   of up to IOPA_GROUP_JOIN_BATCH members; in a larger one, once the
 *   joins since the last split are a quarter of its members, a newcomer
 *   taking a share of its own meanwhile (iopa_group_join_share()).  A
 *   leaver's share goes back to the others at the next cycle.  A split
 *   is O(members + cgroups): each group keeps its members' cgroups
 *   (struct iopa_group_cg), as blk-iocost keeps its weight sums.  A
 *   cycle during which members joined or left is not comparable with
 *   the ones before: the controller measures afresh (a newcomer's bytes
 *   are no gain of a probe).  More active members than the budget has
 *   known start it up again from where it is: more streams interleave,
 *   and the knee moves up.
 * - The group is that of the device a file's superblock names: a
 *   partition or a device-mapper device, not the whole disk beneath.
 *
 * Locking: iopa_groups_lock (a mutex) protects the list of groups and is
 * taken before a group's lock (a mutex), which is taken before a member's
 * ctx->lock.  A member's completions add to the group's atomic
 * accumulators under its ctx->lock; sub->group is written under both the
 * group's lock and ctx->lock, so it can be read under either.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

/*
 * Group cycles with fewer active members before a return to the most
 * is a newcomer again (iopa_group_split()): 16 cycles of a few hundred
 * milliseconds on a disk, seconds, where a bursty tenant's pauses
 * between batches are shorter and its returns would restart the budget
 * over and over.
 */
#define IOPA_GROUP_PEAK_CYCLES	16

/*
 * A join splits the budget again at once while its group is small; in a
 * larger one, only once the joins since the last split are a quarter
 * of its members (and at every cycle's end), so each join's share of
 * the O(members) split is O(1).  The joins in between take a share of
 * their own (iopa_group_join_share()).
 */
#define IOPA_GROUP_JOIN_BATCH	4

/*
 * A turn handed on early (a holder ran out of jobs) splits the budget
 * again no sooner than this after the last split: a holder whose queue
 * empties and fills in bursts does not make a split per job.
 */
#define IOPA_GROUP_TURN_GAP_MS	10

/*
 * A turn lasts at least this long while its holders have jobs (group
 * cycles end meanwhile without a split, unless the budget or the
 * members change): each change of holder costs the disk a seek to the
 * next one's files, a few percent of a turn this long.
 */
#define IOPA_GROUP_TURN_MS	500

#include <linux/cgroup.h>
#include <linux/debugfs.h>
#include <linux/math64.h>
#include <linux/rbtree.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "iopa.h"
#include "trace.h"

/**
 * struct iopa_group - the submitters sharing one device
 * @node: G: on iopa_groups
 * @dev: I: the device
 * @diskseq: I: its disk's diskseq when the group was made (knee.c)
 * @blk: I: the device's block-layer counts (blkstat.c), or NULL
 * @id: I: module-wide number, for tracing and debugfs
 * @lock: protects the M fields
 * @members: M: the member submitters (iopa_submitter.group_node)
 * @nr_members: M: length of @members
 * @ctl: M: the budget's controller
 * @work: ends the group's cycles
 * @start_ns: A (written under @lock): start of the cycle under way
 * @idle_us: M: CPU idle + iowait time at @start_ns
 * @dev_bytes: M: the device's read bytes (everyone's) at @start_ns
 * @need_jobs: A (written under @lock): completions the cycle needs
 * @spans: A (written under @lock): mean service times the cycle needs
 * @min_ms: A (written under @lock): the least the cycle lasts, ms
 * @ending: A: the cycle's end is queued; cleared only once the next end
 *	is armed (iopa_group_arm_ms())
 * @bytes: A: the members' block I/O bytes of jobs completed this cycle
 * @jobs: A: the members' jobs completed this cycle
 * @svc_us: A: sum of their service times
 * @svc_sq: A: sum of their squares (saturated)
 * @cycles: M: cycles run
 * @changes: M: budget changes
 * @sharers: M: cgroups of active members at the last split
 * @floor: M: active members at the last split (not counting turns handed
 *	on early)
 * @peak: M: the most active members since the budget last started up
 *	for more of them (iopa_ctl_more_sharers())
 * @below: M: cycles in a row with fewer active members than @peak
 * @tput: M: the last cycle's bytes per second
 * @dev_tput: M: the last cycle's read bytes per second of the device,
 *	all its users' (0: not known)
 * @dead: M: the last member left; no cycle may re-arm
 * @changed: M: members joined or left during the cycle under way
 * @cgs: M: the members' cgroups (struct iopa_group_cg), by id
 * @active_cgs: M: the cgroups of active members at the last split, in
 *	the order of their first active member
 * @joins: M: members that joined since the last split
 * @splits: M: splits done
 * @split_steps: M: members and cgroups the splits walked (debugfs: a
 *	split is O(members + cgroups))
 * @split_ns: M: when the last split was made
 * @turn_work: hands a turn on early (iopa_group_turn_over())
 * @nr_waiting: A (written under @lock): members that wait for their
 *	turn since the last split
 * @turn_overs: M: turns handed on early
 * @split_budget: M: the budget the last split divided
 * @split_due: M: members joined or left since the last split
 * @turns_kept: M: group cycles that ended without a split: a turn went on
 * @drain_work: applies the parts again as running jobs drain
 * @draining: A (written under @lock): some member runs more jobs than
 *	its part, so others run fewer than theirs until those end
 */
struct iopa_group {
	struct list_head	node;		/* G */
	dev_t			dev;		/* I */
	u64			diskseq;	/* I */
	struct iopa_blkdev	*blk;		/* I */
	u32			id;		/* I */
	struct mutex		lock;
	struct list_head	members;	/* M */
	u32			nr_members;	/* M */
	struct iopa_ctl		ctl;		/* M */
	struct delayed_work	work;
	u64			start_ns;	/* A */
	u64			idle_us;	/* M */
	u64			dev_bytes;	/* M */
	u32			need_jobs;	/* A */
	u32			spans;		/* A */
	u32			min_ms;		/* A */
	atomic_t		ending;		/* A */
	atomic64_t		bytes;		/* A */
	atomic64_t		jobs;		/* A */
	atomic64_t		svc_us;		/* A */
	atomic64_t		svc_sq;		/* A */
	u64			cycles;		/* M */
	u64			changes;	/* M */
	u32			sharers;	/* M */
	u32			floor;		/* M */
	u32			peak;		/* M */
	u32			below;		/* M */
	u64			tput;		/* M */
	u64			dev_tput;	/* M */
	bool			dead;		/* M */
	bool			changed;	/* M */
	struct rb_root		cgs;		/* M */
	struct list_head	active_cgs;	/* M */
	u32			joins;		/* M */
	u64			splits;		/* M */
	u64			split_steps;	/* M */
	u64			split_ns;	/* M */
	struct delayed_work	turn_work;
	atomic_t		nr_waiting;	/* A */
	u64			turn_overs;	/* M */
	u32			split_budget;	/* M */
	bool			split_due;	/* M */
	u64			turns_kept;	/* M */
	struct work_struct	drain_work;
	atomic_t		draining;	/* A */
};

/**
 * struct iopa_group_cg - the members of a group in one cgroup
 * @node: M: on the group's @cgs
 * @active_node: M: on the group's @active_cgs, if @nr_active
 * @id: I: the cgroup's id
 * @nr_members: M: members in the cgroup
 * @nr_active: M: active ones at the last split
 * @weight: M: the largest weight of those
 * @share: M: its share of the budget over time (share.h)
 * @left: M: during a split, the jobs of its part not yet given to its
 *	members
 *
 * The per-cgroup sums that keep a split O(members + cgroups), as
 * blk-iocost keeps its hierarchical weight sums.  Made by the first
 * member of the cgroup to join, freed by the last to leave.
 */
struct iopa_group_cg {
	struct rb_node		node;
	struct list_head	active_node;
	u64			id;
	u32			nr_members;
	u32			nr_active;
	u32			weight;
	struct iopa_share	share;
	u32			left;
};

/* G: the groups; taken before any group's lock. */
static LIST_HEAD(iopa_groups);
/* Groups on iopa_groups: read without the mutex (iopa_group_any()). */
static atomic_t iopa_nr_groups = ATOMIC_INIT(0);
static DEFINE_MUTEX(iopa_groups_lock);
static u32 iopa_next_group_id;		/* G */

/**
 * iopa_sub_cgroup_id() - the cgroup (v2) of the current task, as an id
 *
 * Return: the id, or 0 without cgroups.
 */
u64 iopa_sub_cgroup_id(void)
{
#ifdef CONFIG_CGROUPS
	u64 id;

	rcu_read_lock();
	id = cgroup_id(task_dfl_cgroup(current));
	rcu_read_unlock();
	return id;
#else
	return 0;
#endif
}

/* Set the evidence thresholds and the start of the cycle now starting. */
static void iopa_group_cycle_begin(struct iopa_group *g, u64 now, u64 idle)
{
	u32 need, spans, min_ms;

	lockdep_assert_held(&g->lock);
	iopa_ctl_cycle_need(&g->ctl, &need, &spans, &min_ms);
	atomic64_set(&g->bytes, 0);
	atomic64_set(&g->jobs, 0);
	atomic64_set(&g->svc_us, 0);
	atomic64_set(&g->svc_sq, 0);
	g->dev_bytes = iopa_blkstat_read_bytes(g->blk);
	g->idle_us = idle;
	WRITE_ONCE(g->need_jobs, need);
	WRITE_ONCE(g->spans, spans);
	WRITE_ONCE(g->min_ms, min_ms);
	WRITE_ONCE(g->start_ns, now);
}

/*
 * Arm the cycle's end @ms from now, then let a completion bring it
 * forward (iopa_group_job_done()).  In the other order a completion in
 * between (one that read the last cycle's start) queued the end at once,
 * the timer then overwrote it, and with @ending still set no completion
 * could queue it again: the cycle ran to its bound.
 */
static void iopa_group_arm_ms(struct iopa_group *g, u32 ms)
{
	lockdep_assert_held(&g->lock);
	if (g->dead)
		return;
	mod_delayed_work(system_unbound_wq, &g->work, msecs_to_jiffies(ms));
	atomic_set(&g->ending, 0);
}

static void iopa_group_arm(struct iopa_group *g,
			   const struct iopa_ctl_params *p)
{
	iopa_group_arm_ms(g, iopa_ctl_next_cycle_ms(&g->ctl, p));
}

/**
 * iopa_group_job_done() - a member's job completed: add it to the cycle
 * @sub: the member
 * @bytes: block I/O bytes charged to the job
 * @svc_us: its service time
 * @now_ns: ktime_get_ns() now
 *
 * Queues the end of the group's cycle once the cycle holds enough
 * evidence (iopa_ctl_cycle_enough()'s rule, with the thresholds set at
 * the cycle's start).
 *
 * Context: ctx->lock held.
 */
void iopa_group_job_done(struct iopa_submitter *sub, u64 bytes, u64 svc_us,
			 u64 now_ns)
	__must_hold(&sub->ctx->lock)
{
	struct iopa_group *g = sub->group;
	u64 sq = svc_us < U32_MAX ? svc_us * svc_us : U64_MAX;
	u64 jobs, sum, start, need_us;
	s64 old, next;
	u32 need;

	lockdep_assert_held(&sub->ctx->lock);
	if (!g)
		return;
	atomic64_add(bytes, &g->bytes);
	jobs = atomic64_inc_return(&g->jobs);
	sum = atomic64_add_return(svc_us, &g->svc_us);
	old = atomic64_read(&g->svc_sq);
	do {
		next = old > S64_MAX - (s64)min_t(u64, sq, S64_MAX) ?
		       S64_MAX : old + (s64)sq;
	} while (!atomic64_try_cmpxchg(&g->svc_sq, &old, next));
	/*
	 * A holder of a turn that ran out of jobs (this one was its last)
	 * while others wait: hand the turn on now, not at the cycle's end.
	 */
	if (atomic_read(&g->nr_waiting) && sub->turn_holder &&
	    !sub->nr[IOPA_JOB_PENDING] && sub->nr[IOPA_JOB_RUNNING] <= 1)
		queue_delayed_work(system_unbound_wq, &g->turn_work,
				   msecs_to_jiffies(IOPA_GROUP_TURN_GAP_MS));
	need = READ_ONCE(g->need_jobs);
	if (!need || jobs < need)
		return;
	start = READ_ONCE(g->start_ns);
	need_us = READ_ONCE(g->spans) * div64_u64(sum, jobs);
	if (now_ns < start || div_u64(now_ns - start, NSEC_PER_USEC) < need_us ||
	    now_ns - start < (u64)READ_ONCE(g->min_ms) * NSEC_PER_MSEC)
		return;
	if (!atomic_xchg(&g->ending, 1))
		mod_delayed_work(system_unbound_wq, &g->work, 0);
}

/**
 * iopa_group_job_left() - a member's job is no longer running
 * @sub: the member
 *
 * Completed, taken back from its worker, or given back undispatched:
 * if the member ran more than its limit (the turn before), the members
 * held back for those jobs may start more.
 *
 * Context: ctx->lock held.
 */
void iopa_group_job_left(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	struct iopa_group *g = sub->group;

	lockdep_assert_held(&sub->ctx->lock);
	if (g && atomic_read(&g->draining) &&
	    sub->nr[IOPA_JOB_RUNNING] >= sub->limit)
		queue_work(system_unbound_wq, &g->drain_work);
}

/* Active: jobs waiting or running, or demand seen in the cycle. */
static bool iopa_group_member_active(struct iopa_submitter *sub)
	__must_hold(&sub->ctx->lock)
{
	lockdep_assert_held(&sub->ctx->lock);
	return sub->group_demand || sub->nr[IOPA_JOB_PENDING] ||
	       sub->nr[IOPA_JOB_RUNNING];
}

/* The cgroup entry of @id in @g, made (counting no member) if new. */
static struct iopa_group_cg *iopa_group_cg_get(struct iopa_group *g, u64 id)
{
	struct rb_node **link = &g->cgs.rb_node, *parent = NULL;
	struct iopa_group_cg *cg;

	lockdep_assert_held(&g->lock);
	while (*link) {
		parent = *link;
		cg = rb_entry(parent, struct iopa_group_cg, node);
		if (id == cg->id)
			return cg;
		link = id < cg->id ? &parent->rb_left : &parent->rb_right;
	}
	cg = kzalloc(sizeof(*cg), GFP_KERNEL);
	if (!cg)
		return NULL;
	cg->id = id;
	INIT_LIST_HEAD(&cg->active_node);
	rb_link_node(&cg->node, parent, link);
	rb_insert_color(&cg->node, &g->cgs);
	return cg;
}

/* @sub, out of @g, no longer counts in its cgroup's entry. */
static void iopa_group_cg_put(struct iopa_group *g, struct iopa_submitter *sub)
{
	struct iopa_group_cg *cg = sub->group_cg;

	lockdep_assert_held(&g->lock);
	sub->group_cg = NULL;
	if (--cg->nr_members)
		return;
	list_del(&cg->active_node);
	rb_erase(&cg->node, &g->cgs);
	kfree(cg);
}

/**
 * iopa_group_share_limit() - the limit a member's share of the budget gives
 * @sub: the member
 * @p: the tunables (max_limit now)
 * @share: its share: 0 while it waits for its turn
 *
 * Return: @share within the member's own bounds; 0 (it waits) only if
 * its min bound is none or 1.
 */
u32 iopa_group_share_limit(struct iopa_submitter *sub,
			   const struct iopa_ctl_params *p, u32 share)
{
	u32 one = iopa_ctl_clamp_limit(&sub->ctl, p, 1);

	if (!share)
		return one > 1 ? one : 0;
	return iopa_ctl_clamp_limit(&sub->ctl, p, share);
}

/**
 * iopa_group_note_wait() - note the start or the end of a wait for a turn
 * @sub: the submitter, its limit just set
 * @waits: it waits for its turn: its part of its group's budget is 0
 *	(its limit is 0 too; a limit of 0 while the jobs of the turn
 *	before end is no wait for a turn)
 * @now: ktime_get_ns() now
 *
 * Context: ctx->lock held.
 */
void iopa_group_note_wait(struct iopa_submitter *sub, bool waits, u64 now)
	__must_hold(&sub->ctx->lock)
{
	lockdep_assert_held(&sub->ctx->lock);
	waits = waits && sub->group && !sub->limit;
	if (waits && !sub->turn_wait_ns) {
		sub->turn_wait_ns = now ? now : 1;
		sub->m.turn_waits++;
	} else if (!waits && sub->turn_wait_ns) {
		if (now > sub->turn_wait_ns)
			sub->m.turn_wait_us += div_u64(now - sub->turn_wait_ns,
						       NSEC_PER_USEC);
		sub->turn_wait_ns = 0;
	}
}

/*
 * A member's share, applied: its limit (within its own bounds; 0 while
 * it waits for its turn), and what GET_STATE shows of the group.
 * Return: true if it waits.
 */
static bool iopa_group_apply(struct iopa_group *g, struct iopa_submitter *sub,
			     const struct iopa_ctl_params *p, u32 share,
			     u32 budget, u32 r, u64 tput, u64 now)
{
	bool waits;
	u32 old;

	iopa_ctx_lock(sub->ctx);
	/* Pinned, and on its way out (iopa_group_leave()): its own. */
	if (iopa_ctl_mode(&sub->ctl) == IOPA_CTL_MODE_FIXED) {
		iopa_ctx_unlock(sub->ctx);
		return false;
	}
	/* Its turn: its part within its bounds, before a drain's cut. */
	waits = !sub->group_target;
	old = sub->limit;
	sub->limit = min(share, sub->group_target);
	sub->turn_holder = sub->group_target && sub->group_active;
	iopa_group_note_wait(sub, waits, now);
	share = sub->limit;
	sub->group_budget = budget;
	sub->group_sharers = g->sharers;
	sub->group_cycles = (u32)g->cycles;
	sub->group_mode = iopa_ctl_mode(&g->ctl);
	sub->group_cycle_ms = iopa_ctl_next_cycle_ms(&g->ctl, p);
	sub->group_knee = iopa_ctl_knee(&g->ctl);
	iopa_sub_update(sub);
	if (share != old) {
		sub->changes++;
		trace_iopa_limit_change(sub->ctx->id, sub->id, old, share,
					iopa_ctl_mode(&g->ctl), r, tput);
	}
	if (share > old)
		iopa_kick_workers(sub->ctx, share - old);
	iopa_ctx_unlock(sub->ctx);
	return waits;
}

/* Does a member hold a turn with no job pending or running now? */
static bool iopa_group_idle_holder(struct iopa_group *g)
{
	struct iopa_submitter *sub;
	bool idle = false;

	lockdep_assert_held(&g->lock);
	list_for_each_entry(sub, &g->members, group_node) {
		iopa_ctx_lock(sub->ctx);
		idle = sub->turn_holder && !sub->nr[IOPA_JOB_PENDING] &&
		       !sub->nr[IOPA_JOB_RUNNING];
		iopa_ctx_unlock(sub->ctx);
		if (idle)
			break;
	}
	return idle;
}

/*
 * Apply the members' parts of the last split.  A member given less than
 * it runs (a holder whose turn ended) keeps its running jobs: until they
 * end, those given more than they run start only what the budget has
 * room for, first come first (two streams at once is what a disk whose
 * best is one reads worst: each change of turn would cost a file read
 * at two).  Each of those jobs ending applies the parts again
 * (@drain_work).  Return: the members that wait for their turn.
 */
static u32 iopa_group_apply_parts(struct iopa_group *g,
				  const struct iopa_ctl_params *p, u32 r,
				  u64 tput, u64 now)
{
	u32 budget = iopa_ctl_limit(&g->ctl), over = 0, waiting = 0, limit;
	struct iopa_submitter *sub;
	bool cut = false;

	lockdep_assert_held(&g->lock);
	list_for_each_entry(sub, &g->members, group_node) {
		iopa_ctx_lock(sub->ctx);
		/* What it may run: its part within its own bounds. */
		sub->group_target = iopa_group_share_limit(sub, p,
							   sub->group_part);
		sub->group_run = sub->nr[IOPA_JOB_RUNNING];
		iopa_ctx_unlock(sub->ctx);
		if (sub->group_run > sub->group_target)
			over += sub->group_run - sub->group_target;
	}
	list_for_each_entry(sub, &g->members, group_node) {
		limit = sub->group_target;
		if (over && sub->group_active && limit > sub->group_run) {
			u32 c = min(over, limit - sub->group_run);

			limit -= c;
			over -= c;
			cut = true;
		}
		waiting += iopa_group_apply(g, sub, p, limit, budget, r, tput,
					    now);
	}
	atomic_set(&g->nr_waiting, waiting);
	atomic_set(&g->draining, cut);
	/*
	 * A job that ended between the counts and now found draining not
	 * yet set: look again.
	 */
	if (cut)
		list_for_each_entry(sub, &g->members, group_node) {
			bool ended;

			iopa_ctx_lock(sub->ctx);
			ended = sub->group_run > sub->group_target &&
				sub->nr[IOPA_JOB_RUNNING] < sub->group_run;
			iopa_ctx_unlock(sub->ctx);
			if (ended) {
				queue_work(system_unbound_wq, &g->drain_work);
				break;
			}
		}
	/*
	 * A holder with nothing to run now (it showed demand during the
	 * cycle, or its last job ended before its completion could see
	 * nr_waiting, or a drain gave it its part with no job left) while
	 * others wait: hand its turn on.
	 */
	if (waiting && iopa_group_idle_holder(g))
		queue_delayed_work(system_unbound_wq, &g->turn_work,
				   msecs_to_jiffies(IOPA_GROUP_TURN_GAP_MS));
	return waiting;
}

/* Running jobs ended that the last parts were held back for. */
static void iopa_group_drain(struct work_struct *work)
{
	struct iopa_group *g = container_of(work, struct iopa_group,
					    drain_work);
	struct iopa_ctl_params p;

	iopa_params_get(&p);
	mutex_lock(&g->lock);
	if (!g->dead && atomic_read(&g->draining))
		iopa_group_apply_parts(g, &p, 1000, g->tput, ktime_get_ns());
	mutex_unlock(&g->lock);
}

/*
 * Split the budget: among the active members' cgroups by weight, then
 * equally within a cgroup, each part over time (share.c).  Six passes
 * over the members and six over the cgroups active at the last split
 * and this one, O(members + cgroups): the first over the members notes
 * who is active (and clears the cycle's demand), charges each active
 * member's and cgroup's share with the time since the last split, and
 * sums each cgroup's weight (the largest of its active members'); the
 * cgroups' parts follow (whole jobs, then the rest to those owed, then
 * to the others), then the members' parts of their cgroup's the same
 * way; iopa_group_apply_parts() applies them in two more.
 *
 * @now_only: who is active is who has jobs pending or running now, not
 * who showed demand during the cycle (a turn handed on early).
 */
static void iopa_group_split(struct iopa_group *g,
			     const struct iopa_ctl_params *p, bool cycle_end,
			     bool now_only, u32 r, u64 tput)
{
	struct iopa_group_cg *cg, *tmp;
	struct iopa_submitter *sub, *rest = NULL;
	u32 budget, sharers = 0, active = 0, left, dt_ms;
	u64 wsum = 0, steps = 0, now = ktime_get_ns();
	LIST_HEAD(was);

	lockdep_assert_held(&g->lock);
	dt_ms = g->split_ns && now > g->split_ns ?
		(u32)min_t(u64, div_u64(now - g->split_ns, NSEC_PER_MSEC),
			   IOPA_SHARE_MEMORY_MS) : 0;
	g->split_ns = now;
	/* The cgroups active at the last split: charge their parts then. */
	list_splice_init(&g->active_cgs, &was);
	list_for_each_entry(cg, &was, active_node) {
		iopa_share_charge(&cg->share, dt_ms);
		cg->nr_active = 0;
		cg->weight = 0;
		steps++;
	}
	list_for_each_entry(sub, &g->members, group_node) {
		bool was_active = sub->group_active, busy;

		steps++;
		iopa_ctx_lock(sub->ctx);
		busy = sub->nr[IOPA_JOB_PENDING] || sub->nr[IOPA_JOB_RUNNING];
		/* Pinned, and on its way out: no share, no part. */
		sub->group_active = (now_only ? busy :
				     iopa_group_member_active(sub)) &&
				    iopa_ctl_mode(&sub->ctl) !=
				    IOPA_CTL_MODE_FIXED;
		/* One weight per member for the whole split. */
		sub->group_weight = READ_ONCE(sub->weight);
		/* Demand is the cycle's evidence: only its end clears it. */
		if (cycle_end)
			sub->group_demand = false;
		iopa_ctx_unlock(sub->ctx);
		if (!sub->group_active) {
			iopa_share_forget(&sub->group_share);
			continue;
		}
		if (was_active)
			iopa_share_charge(&sub->group_share, dt_ms);
		else
			iopa_share_forget(&sub->group_share);
		active++;
		cg = sub->group_cg;
		if (!cg->nr_active++) {
			sharers++;
			/* Not active at the last split: no past to claim. */
			if (list_empty(&cg->active_node))
				iopa_share_forget(&cg->share);
			list_move_tail(&cg->active_node, &g->active_cgs);
		}
		cg->weight = max(cg->weight, sub->group_weight);
	}
	/* Those no longer active are on no list. */
	list_for_each_entry_safe(cg, tmp, &was, active_node) {
		list_del_init(&cg->active_node);
		steps++;
	}
	/*
	 * More members than the budget has known: the device's knee for
	 * more streams is another, start up again from the budget.  Not
	 * for each return of a member that comes and goes (a bursty
	 * tenant): the peak falls only after IOPA_GROUP_PEAK_CYCLES with
	 * fewer.  A turn handed on early counts only those busy at that
	 * instant: it moves neither.
	 */
	if (now_only) {
		/* see above */
	} else if (active > g->peak) {
		if (active > 1)
			iopa_ctl_more_sharers(&g->ctl);
		g->peak = active;
		g->below = 0;
	} else if (active < g->peak && cycle_end &&
		   ++g->below >= IOPA_GROUP_PEAK_CYCLES) {
		g->peak = active;
		g->below = 0;
	} else if (active == g->peak) {
		g->below = 0;
	}
	if (!now_only)
		g->floor = active;
	budget = iopa_ctl_limit(&g->ctl);
	g->sharers = sharers;
	list_for_each_entry(cg, &g->active_cgs, active_node) {
		wsum += cg->weight;
		steps++;
	}
	/* The cgroups' parts: whole jobs, the rest to those owed, then on. */
	left = budget;
	list_for_each_entry(cg, &g->active_cgs, active_node) {
		left -= iopa_share_base(&cg->share, budget, cg->weight, wsum);
		steps++;
	}
	list_for_each_entry(cg, &g->active_cgs, active_node) {
		if (left && iopa_share_owed(&cg->share)) {
			iopa_share_give(&cg->share);
			left--;
		}
		steps++;
	}
	list_for_each_entry(cg, &g->active_cgs, active_node) {
		if (left && !iopa_share_had_rest(&cg->share)) {
			iopa_share_give(&cg->share);
			left--;
		}
		cg->left = iopa_share_part(&cg->share);
		steps++;
	}
	/* The members' parts of their cgroup's, the same way. */
	list_for_each_entry(sub, &g->members, group_node) {
		steps++;
		if (!sub->group_active)
			continue;
		cg = sub->group_cg;
		cg->left -= iopa_share_base(&sub->group_share,
					    iopa_share_part(&cg->share), 1,
					    cg->nr_active);
	}
	list_for_each_entry(sub, &g->members, group_node) {
		steps++;
		cg = sub->group_cg;
		if (sub->group_active && cg->left &&
		    iopa_share_owed(&sub->group_share)) {
			iopa_share_give(&sub->group_share);
			cg->left--;
			rest = sub;
		}
	}
	list_for_each_entry(sub, &g->members, group_node) {
		steps++;
		cg = sub->group_cg;
		/* Idle: one job, to start again at once. */
		sub->group_part = 1;
		if (sub->group_active) {
			if (cg->left &&
			    !iopa_share_had_rest(&sub->group_share)) {
				iopa_share_give(&sub->group_share);
				cg->left--;
				rest = sub;
			}
			sub->group_part = iopa_share_part(&sub->group_share);
		}
	}
	iopa_group_apply_parts(g, p, r, tput, now);
	steps += 2 * (u64)g->nr_members;
	/*
	 * The next split's passes start after the last member given a job
	 * of the rest: among those owed alike, the next ones come first (a
	 * static order would favour the first members).
	 */
	if (rest && !list_is_last(&rest->group_node, &g->members))
		list_rotate_to_front(rest->group_node.next, &g->members);
	g->joins = 0;
	g->split_due = false;
	g->split_budget = budget;
	g->splits++;
	g->split_steps += steps;
}

/*
 * A member that joined between splits, until the next: its cgroup's
 * part shared with the joins since the last split too, or if its cgroup
 * had no active member then, the budget shared with the joins as if
 * each were a new cgroup; at least one job.  The others keep theirs:
 * the joiners take at most about the budget more (each 1 at least)
 * until the next split, a quarter of the members' joins or a cycle away
 * at most.
 */
static void iopa_group_join_share(struct iopa_group *g,
				  struct iopa_submitter *sub,
				  const struct iopa_ctl_params *p)
{
	struct iopa_group_cg *cg = sub->group_cg;
	u32 budget = iopa_ctl_limit(&g->ctl), share;

	lockdep_assert_held(&g->lock);
	if (cg->nr_active)
		share = iopa_share_part(&cg->share) /
			(cg->nr_active + g->joins);
	else
		share = budget / (g->sharers + g->joins);
	sub->group_part = max(share, 1U);
	iopa_ctx_lock(sub->ctx);
	sub->group_target = iopa_group_share_limit(sub, p, sub->group_part);
	iopa_ctx_unlock(sub->ctx);
	iopa_group_apply(g, sub, p, sub->group_target, budget, 1000, g->tput,
			 ktime_get_ns());
}

static void iopa_group_work_fn(struct work_struct *work)
{
	struct iopa_group *g = container_of(to_delayed_work(work),
					    struct iopa_group, work);
	struct iopa_ctl_sample s = { };
	struct iopa_submitter *sub;
	struct iopa_ctl_params p;
	u64 now, idle, elapsed_ms, idle_ms, jobs, bytes, dev_bytes;
	u32 old, mode, r = 0;

	iopa_params_get(&p);
	idle = iopa_measure_cpu_idle_us();
	now = ktime_get_ns();
	mutex_lock(&g->lock);
	if (g->dead) {
		mutex_unlock(&g->lock);
		return;
	}
	elapsed_ms = max_t(u64, div_u64(now - g->start_ns, NSEC_PER_MSEC), 1);
	/*
	 * A completion that read the last cycle's start may have queued the
	 * end of this one as it began: go on with it instead, to its timer
	 * or to the completion that brings its evidence.
	 */
	if (elapsed_ms < g->min_ms) {
		u32 until = max(iopa_ctl_next_cycle_ms(&g->ctl, &p), g->min_ms);

		iopa_group_arm_ms(g, until - elapsed_ms);
		mutex_unlock(&g->lock);
		return;
	}
	idle_ms = idle >= g->idle_us ?
		  div_u64(idle - g->idle_us, USEC_PER_MSEC) : U64_MAX;
	jobs = atomic64_read(&g->jobs);
	bytes = atomic64_read(&g->bytes);
	s.tput = mul_u64_u64_div_u64(bytes, MSEC_PER_SEC, elapsed_ms);
	s.elapsed_ms = min_t(u64, elapsed_ms, U32_MAX);
	s.cpu_saturated = idle_ms * 10 < elapsed_ms * p.ncpus;
	s.block_io = bytes != 0;
	s.completions = min_t(u64, jobs, U32_MAX);
	s.svc_us = atomic64_read(&g->svc_us);
	s.svc_sq = atomic64_read(&g->svc_sq);
	/* Everyone's reads: a competitor moves the knee (ctl.c). */
	dev_bytes = iopa_blkstat_read_bytes(g->blk);
	if (bytes && dev_bytes > g->dev_bytes)
		s.dev_tput = mul_u64_u64_div_u64(dev_bytes - g->dev_bytes,
						 MSEC_PER_SEC, elapsed_ms);
	/*
	 * A cycle of cache hits says nothing of the device, nor one during
	 * which members came or went: measure afresh.
	 */
	s.cached = (jobs && !bytes) || g->changed;
	g->changed = false;
	list_for_each_entry(sub, &g->members, group_node) {
		iopa_ctx_lock(sub->ctx);
		if (sub->group_demand ||
		    (sub->nr[IOPA_JOB_PENDING] &&
		     sub->nr[IOPA_JOB_RUNNING] >= sub->limit))
			s.demand = true;
		iopa_ctx_unlock(sub->ctx);
	}
	g->tput = s.tput;
	g->dev_tput = s.dev_tput;
	old = iopa_ctl_limit(&g->ctl);
	mode = iopa_ctl_mode(&g->ctl);
	if (iopa_ctl_update(&g->ctl, &p, &s, &r))
		g->changes++;
	g->cycles++;
	/*
	 * A search that ended, one member alone on the device: its knee,
	 * for the next ones (knee.c).  Not with more members (more streams
	 * interleave: another knee) nor with others reading the device.
	 */
	if (g->floor <= 1 && READ_ONCE(iopa_tunables.learn_knees))
		iopa_knee_learn(g->dev, g->diskseq,
				iopa_ctl_settled_knee(&g->ctl),
				iopa_ctl_job_kb(&g->ctl));
	/*
	 * Turns: the holders keep their turn until it has lasted
	 * IOPA_GROUP_TURN_MS, unless the budget or the members changed or
	 * a holder has nothing to run.  The time goes to the credits at
	 * the next split.
	 */
	if (atomic_read(&g->nr_waiting) && !g->split_due &&
	    iopa_ctl_limit(&g->ctl) == g->split_budget &&
	    now - g->split_ns < (u64)IOPA_GROUP_TURN_MS * NSEC_PER_MSEC &&
	    !iopa_group_idle_holder(g)) {
		g->turns_kept++;
		/* Demand is the cycle's evidence, split or not. */
		list_for_each_entry(sub, &g->members, group_node) {
			iopa_ctx_lock(sub->ctx);
			sub->group_demand = false;
			iopa_ctx_unlock(sub->ctx);
		}
	} else {
		iopa_group_split(g, &p, true, false, r, s.tput);
	}
	trace_iopa_group_cycle(g->id, g->dev, old, iopa_ctl_limit(&g->ctl),
			       mode, r, s.tput, g->nr_members, g->sharers);
	iopa_group_cycle_begin(g, now, idle);
	iopa_group_arm(g, &p);
	mutex_unlock(&g->lock);
}

/*
 * A holder of a turn ran out of jobs while others wait: split again
 * among those with jobs now, its turn to the next.  The cycle goes on
 * (the budget is the same; its sample counts everyone's bytes).
 */
static void iopa_group_turn_over(struct work_struct *work)
{
	struct iopa_group *g = container_of(to_delayed_work(work),
					    struct iopa_group, turn_work);
	struct iopa_ctl_params p;

	u64 since;

	iopa_params_get(&p);
	mutex_lock(&g->lock);
	if (g->dead || !atomic_read(&g->nr_waiting))
		goto out;
	since = div_u64(ktime_get_ns() - g->split_ns, NSEC_PER_MSEC);
	if (since < IOPA_GROUP_TURN_GAP_MS) {
		queue_delayed_work(system_unbound_wq, &g->turn_work,
				   msecs_to_jiffies(IOPA_GROUP_TURN_GAP_MS -
						    since));
		goto out;
	}
	/* The holder that ran out may have submitted again meanwhile. */
	if (iopa_group_idle_holder(g)) {
		g->turn_overs++;
		iopa_group_split(g, &p, false, true, 1000, g->tput);
	}
out:
	mutex_unlock(&g->lock);
}

static struct iopa_group *iopa_group_get(dev_t dev, u64 diskseq,
					 const struct iopa_ctl *from,
					 const struct iopa_ctl_params *p)
{
	struct iopa_group *g;

	lockdep_assert_held(&iopa_groups_lock);
	list_for_each_entry(g, &iopa_groups, node)
		if (g->dev == dev)
			return g;
	g = kzalloc(sizeof(*g), GFP_KERNEL);
	if (!g)
		return NULL;
	g->dev = dev;
	g->diskseq = diskseq;
	g->cgs = RB_ROOT;
	INIT_LIST_HEAD(&g->active_cgs);
	/* Without counts (no memory) the group sees no competitor. */
	g->blk = iopa_blkstat_get(dev);
	g->id = ++iopa_next_group_id;
	mutex_init(&g->lock);
	INIT_LIST_HEAD(&g->members);
	INIT_DELAYED_WORK(&g->work, iopa_group_work_fn);
	INIT_DELAYED_WORK(&g->turn_work, iopa_group_turn_over);
	INIT_WORK(&g->drain_work, iopa_group_drain);
	/*
	 * The first member's controller carries on as the device's, without
	 * that member's bounds (the split applies each member's own).
	 */
	g->ctl = *from;
	iopa_ctl_set_bounds(&g->ctl, p, 0, 0);
	list_add_tail(&g->node, &iopa_groups);
	atomic_inc(&iopa_nr_groups);
	return g;
}

/**
 * iopa_group_any() - does any device have a group now?
 *
 * Context: any (a hint: no lock is taken).
 * Return: true if some device's submitters share its budget.
 */
bool iopa_group_any(void)
{
	return atomic_read(&iopa_nr_groups) > 0;
}

/**
 * iopa_group_join() - make @sub share its device's budget, if it should
 * @sub: an open submitter, in no group
 *
 * It joins if it adapts with the bracket policy and its jobs do block I/O
 * on a device (devs[0]).  The budget is split again at once in a small
 * group, else once a quarter of the members joined since the last split
 * (the newcomer takes a share of its own until then).
 *
 * Context: may sleep; no lock held.
 */
void iopa_group_join(struct iopa_submitter *sub)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_ctl_params p;
	struct iopa_group_cg *cg;
	struct iopa_ctl ctl;
	struct iopa_group *g;
	u64 diskseq;
	bool fresh;
	dev_t dev;

	iopa_ctx_lock(ctx);
	if (sub->group || sub->closed || !sub->nr_devs ||
	    !MAJOR(sub->devs[0]) || !sub->tput_bytes ||
	    iopa_ctl_policy(&sub->ctl) != IOPA_CTL_POLICY_BRACKET ||
	    iopa_ctl_mode(&sub->ctl) == IOPA_CTL_MODE_FIXED) {
		iopa_ctx_unlock(ctx);
		return;
	}
	dev = sub->devs[0];
	diskseq = sub->diskseq;
	ctl = sub->ctl;
	iopa_ctx_unlock(ctx);

	iopa_params_get(&p);
	mutex_lock(&iopa_groups_lock);
	g = iopa_group_get(dev, diskseq, &ctl, &p);
	if (!g) {
		mutex_unlock(&iopa_groups_lock);
		return;
	}
	mutex_lock(&g->lock);
	fresh = !g->nr_members;
	/* Its cgroup's entry: without one (no memory) it stays out. */
	cg = iopa_group_cg_get(g, sub->cgroup_id);
	if (!cg)
		goto out_unlock;
	iopa_ctx_lock(ctx);
	/* Closed, pinned or switched meanwhile: stay out. */
	if (sub->closed || sub->group ||
	    iopa_ctl_policy(&sub->ctl) != IOPA_CTL_POLICY_BRACKET ||
	    iopa_ctl_mode(&sub->ctl) == IOPA_CTL_MODE_FIXED) {
		iopa_ctx_unlock(ctx);
		if (!cg->nr_members) {
			rb_erase(&cg->node, &g->cgs);
			kfree(cg);
		}
		goto out_unlock;
	}
	sub->group = g;
	sub->group_demand = true;
	/* Not active until a split says so (debugfs). */
	sub->group_active = false;
	list_add_tail(&sub->group_node, &g->members);
	g->nr_members++;
	iopa_ctx_unlock(ctx);
	sub->group_cg = cg;
	cg->nr_members++;
	if (fresh) {
		iopa_group_cycle_begin(g, ktime_get_ns(),
				       iopa_measure_cpu_idle_us());
		/* A running cycle's timer is left alone. */
		iopa_group_arm(g, &p);
	} else {
		g->changed = true;
	}
	g->split_due = true;
	/* Split at once while that is cheap for the joins (see the top). */
	if (++g->joins * IOPA_GROUP_JOIN_BATCH >= g->nr_members)
		iopa_group_split(g, &p, false, false, 1000, g->tput);
	else
		iopa_group_join_share(g, sub, &p);
out_unlock:
	if (!g->nr_members) {
		list_del(&g->node);
		atomic_dec(&iopa_nr_groups);
		mutex_unlock(&g->lock);
		mutex_destroy(&g->lock);
		iopa_blkstat_put(g->blk);
		kfree(g);
	} else {
		mutex_unlock(&g->lock);
	}
	mutex_unlock(&iopa_groups_lock);
}

/**
 * iopa_group_leave() - @sub controls its own limit again
 * @sub: the submitter
 *
 * Its own controller resumes from the limit it had in the group.  The
 * others' split is redone at the group's next cycle; the last member to
 * leave frees the group.
 *
 * Context: may sleep; no lock held.
 */
void iopa_group_leave(struct iopa_submitter *sub)
{
	struct iopa_ctx *ctx = sub->ctx;
	struct iopa_group *g;
	bool last;
	u32 old;

	/*
	 * Callers made sure it cannot join again (closed, pinned, another
	 * policy): out of no group, nothing to do, and no global mutex.
	 */
	iopa_ctx_lock(ctx);
	g = sub->group;
	iopa_ctx_unlock(ctx);
	if (!g)
		return;
	mutex_lock(&iopa_groups_lock);
	iopa_ctx_lock(ctx);
	g = sub->group;
	iopa_ctx_unlock(ctx);
	if (!g) {
		mutex_unlock(&iopa_groups_lock);
		return;
	}
	mutex_lock(&g->lock);
	iopa_ctx_lock(ctx);
	sub->group = NULL;
	sub->turn_holder = false;
	sub->group_budget = 0;
	sub->group_sharers = 0;
	sub->group_cycles = 0;
	sub->group_mode = 0;
	sub->group_cycle_ms = 0;
	sub->group_knee = 0;
	list_del(&sub->group_node);
	g->nr_members--;
	g->changed = true;
	iopa_group_cg_put(g, sub);
	old = sub->limit;
	if (iopa_ctl_mode(&sub->ctl) != IOPA_CTL_MODE_FIXED) {
		/* Adapt alone again, from the share it had (1 if none). */
		iopa_ctl_set_fixed(&sub->ctl, max(sub->limit, 1U));
		iopa_ctl_set_fixed(&sub->ctl, 0);
	}
	/* Its own limit (pinned, or the share it had) from now on. */
	sub->limit = iopa_ctl_limit(&sub->ctl);
	iopa_group_note_wait(sub, false, ktime_get_ns());
	sub->group_part = 0;
	sub->group_target = 0;
	sub->group_run = 0;
	iopa_sub_update(sub);
	if (sub->limit > old)
		iopa_kick_workers(ctx, sub->limit - old);
	iopa_ctx_unlock(ctx);
	last = !g->nr_members;
	if (last) {
		/*
		 * The group's knee, for the next one on the device: where a
		 * short run's search got to, if it never settled (knee.c).
		 */
		if (g->floor <= 1 && READ_ONCE(iopa_tunables.learn_knees))
			iopa_knee_learn(g->dev, g->diskseq,
					iopa_ctl_left_knee(&g->ctl),
					iopa_ctl_job_kb(&g->ctl));
		g->dead = true;
		list_del(&g->node);
		atomic_dec(&iopa_nr_groups);
	} else {
		g->split_due = true;
		/* A holder left: its turn to the next, now. */
		if (old && atomic_read(&g->nr_waiting))
			queue_delayed_work(system_unbound_wq, &g->turn_work, 0);
		/* Its running jobs no longer hold the others back. */
		if (atomic_read(&g->draining))
			queue_work(system_unbound_wq, &g->drain_work);
	}
	mutex_unlock(&g->lock);
	mutex_unlock(&iopa_groups_lock);
	if (last) {
		cancel_delayed_work_sync(&g->work);
		cancel_delayed_work_sync(&g->turn_work);
		cancel_work_sync(&g->drain_work);
		mutex_destroy(&g->lock);
		iopa_blkstat_put(g->blk);
		kfree(g);
	}
}

/**
 * iopa_group_fill_state() - the sharing part of GET_STATE
 * @sub: the submitter
 * @st: filled in: budget, weight, sharers, group_cycles, and mode and
 *	cycle_ms (the group's controller's, once it has split the budget)
 *
 * Context: ctx->lock held.
 */
void iopa_group_fill_state(struct iopa_submitter *sub, struct iopa_state *st)
	__must_hold(&sub->ctx->lock)
{
	lockdep_assert_held(&sub->ctx->lock);
	st->weight = READ_ONCE(sub->weight);
	st->budget = 0;
	st->sharers = 0;
	st->group_cycles = 0;
	/* Pinned, and on its way out (iopa_group_leave()): its own limit. */
	if (!sub->group || st->mode == IOPA_CTL_MODE_FIXED)
		return;
	st->budget = sub->group_budget;
	st->sharers = sub->group_sharers;
	st->group_cycles = sub->group_cycles;
	/* Once the group's controller has split: its mode is the one. */
	if (sub->group_budget) {
		st->mode = sub->group_mode;
		st->cycle_ms = sub->group_cycle_ms;
	}
}

/* <debugfs>/iopa/groups: one line per device group and member. */
static int iopa_groups_show(struct seq_file *m, void *v)
{
	struct iopa_submitter *sub;
	struct iopa_group *g;

	seq_puts(m, "group dev policy mode budget members sharers cycles changes bytes_per_s dev_bytes_per_s splits split_steps waiting turn_overs turns_kept\n");
	seq_puts(m, "  member: ctx sub cgroup weight active limit\n");
	mutex_lock(&iopa_groups_lock);
	list_for_each_entry(g, &iopa_groups, node) {
		mutex_lock(&g->lock);
		seq_printf(m, "%u %u:%u %s %s %u %u %u %llu %llu %llu %llu %llu %llu %d %llu %llu\n",
			   g->id,
			   MAJOR(g->dev), MINOR(g->dev),
			   iopa_ctl_policy_name(iopa_ctl_policy(&g->ctl)),
			   iopa_ctl_mode_name(iopa_ctl_mode(&g->ctl)),
			   iopa_ctl_limit(&g->ctl), g->nr_members, g->sharers,
			   g->cycles, g->changes, g->tput, g->dev_tput,
			   g->splits, g->split_steps,
			   atomic_read(&g->nr_waiting), g->turn_overs,
			   g->turns_kept);
		list_for_each_entry(sub, &g->members, group_node) {
			iopa_ctx_lock(sub->ctx);
			seq_printf(m, "  member: %u %u %llu %u %d %u\n",
				   sub->ctx->id, sub->id, sub->cgroup_id,
				   READ_ONCE(sub->weight), sub->group_active,
				   sub->limit);
			iopa_ctx_unlock(sub->ctx);
		}
		mutex_unlock(&g->lock);
	}
	mutex_unlock(&iopa_groups_lock);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(iopa_groups);

/**
 * iopa_group_debugfs() - create <debugfs>/iopa/groups
 * @dir: <debugfs>/iopa
 */
void iopa_group_debugfs(struct dentry *dir)
{
	debugfs_create_file("groups", 0400, dir, NULL, &iopa_groups_fops);
}
