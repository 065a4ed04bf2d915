/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * iopa - the adaptive admission-limit controller (kernel/ctl.c).
 *
 * One struct iopa_ctl per submitter decides how many of the submitter's
 * jobs may run at once.  The module measures the submitter's throughput
 * over a cycle and calls iopa_ctl_update() when the cycle ends; the
 * controller may change the limit, and says how long the next cycle is.
 *
 * This header and ctl.c depend on no kernel facility: they build in the
 * module and, unchanged, on the host (tools/sim: simulator and unit
 * tests).  No floating point, no allocation, no locking: the caller
 * serialises every call on one controller (the module: under ctx->lock).
 */
#ifndef _IOPA_CTL_H
#define _IOPA_CTL_H

#ifdef __KERNEL__
#include <linux/errno.h>
#include <linux/math64.h>
#include <linux/types.h>
#else
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
/* The kernel's types, as every Linux ABI (ILP32, LP64) sizes them. */
typedef unsigned char u8;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef int s32;
typedef long long s64;
#define div64_u64(a, b)	((u64)(a) / (u64)(b))
#endif

/* Must equal IOPA_LIMIT_MAX of uapi/linux/iopa.h (the module checks). */
#define IOPA_CTL_LIMIT_MAX	4096
/*
 * bracket: a cycle ends on evidence no sooner than this, by default
 * (struct iopa_ctl_params.min_cycle_ms; see ctl.c, 5.).
 */
#define IOPA_CTL_MIN_CYCLE_MS	100
/* The largest size of a job remembered with a knee, KiB (1 GiB). */
#define IOPA_CTL_JOB_KB_MAX	1048576U
/* Most cycles averaged: iopa's N, hillclimb's samples per measurement. */
#define IOPA_CTL_HIST_MAX	8

/**
 * enum iopa_ctl_policy - how a controller adapts the limit
 * @IOPA_CTL_POLICY_IOPA: the IOPA paper's algorithm: FAST doubling, then
 *	+1/-1 on the ratio of this cycle's throughput to the average of the
 *	previous N cycles, HOLD after a decrease
 * @IOPA_CTL_POLICY_HILLCLIMB: probe-and-revert hill climbing: step the
 *	limit, compare the throughput with the step's against the
 *	throughput without it, keep the step only if the added workers
 *	paid for themselves, else go back; converge by halving the step
 * @IOPA_CTL_POLICY_BRACKET: the default: double until a doubling no
 *	longer pays beyond the noise, then bracket the limit with probes a
 *	step above and below it, each judged against a measurement of the
 *	limit taken just before it; cycles end on enough evidence (job
 *	completions and service times), not on a fixed time
 * @IOPA_CTL_NR_POLICIES: number of policies
 */
enum iopa_ctl_policy {
	IOPA_CTL_POLICY_IOPA,
	IOPA_CTL_POLICY_HILLCLIMB,
	IOPA_CTL_POLICY_BRACKET,
	IOPA_CTL_NR_POLICIES,
};

/**
 * enum iopa_ctl_mode - what a controller is doing in the current cycle
 * @IOPA_CTL_MODE_FAST: start-up ramp; cycles of fast_cycle_ms.  iopa:
 *	double while the throughput ratio R exceeds the increase threshold.
 *	hillclimb, bracket: double while the doubled limit pays for itself
 * @IOPA_CTL_MODE_NORMAL: iopa: +1 / -1 / keep on R, one normal cycle
 *	each.  hillclimb, bracket: measuring the base limit before the next
 *	probe
 * @IOPA_CTL_MODE_HOLD: iopa only: keep the limit for hold_cycle_ms after
 *	a decrease
 * @IOPA_CTL_MODE_FIXED: frozen by iopa_ctl_set_fixed(); no adaptation
 * @IOPA_CTL_MODE_PROBE: hillclimb, bracket: a trial limit (base +- step)
 *	is being measured
 * @IOPA_CTL_MODE_STEADY: hillclimb, bracket: converged; the limit stays
 *	until the throughput at it shifts or the re-probe timer fires
 * @IOPA_CTL_NR_MODES: number of modes
 *
 * Transitions, iopa:
 *   FAST -> FAST        R > increase, doubled, still below the fast cap
 *   FAST -> NORMAL      R <= increase, or the cap (or a bound, or CPU
 *                       saturation) stopped the doubling
 *   NORMAL -> NORMAL    R > increase: +1; otherwise keep
 *   NORMAL -> HOLD      R < decrease: -1
 *   HOLD -> NORMAL      after one cycle of hold_cycle_ms
 * Transitions, hillclimb:
 *   FAST -> FAST        the doubled limit paid for itself: double again
 *   FAST -> NORMAL      it did not (reverted), or the cap stopped it
 *   NORMAL -> PROBE     start a trial at base +- step
 *   NORMAL -> STEADY    no step left to try
 *   PROBE -> PROBE      trial accepted, next trial at once; or the
 *                       trial needs more cycles to tell
 *   PROBE -> NORMAL     trial rejected: back to the base limit
 *   PROBE -> STEADY     trial accepted and no step left to try
 *   STEADY -> NORMAL    throughput shifted at the same limit (re-probe
 *                       with a large step) or the re-probe timer fired
 * Transitions, bracket (each move passes a transient cycle, which is
 * measured but not judged):
 *   FAST -> FAST        the doubling paid beyond the noise: double again
 *   FAST -> NORMAL      it did not: back to the smaller limit, bracket it
 *   NORMAL -> PROBE     base measured: probe base + step, then base - step
 *   PROBE -> PROBE      the probe won: it becomes the base, the step
 *                       doubles, probe on in the same direction
 *   PROBE -> NORMAL     the probe lost: back to the base
 *   NORMAL -> STEADY    both sides lost at step 1
 *   NORMAL -> NORMAL    the base, measured again, is off its own earlier
 *                       level: measure it afresh
 *   NORMAL -> FAST      off twice in a row, for 500 ms: start up again
 *   STEADY -> FAST      the level at the base shifted twice in a row,
 *                       for 500 ms: start up again
 *   STEADY -> NORMAL    the re-probe timer fired
 * All:
 *   any -> FIXED        iopa_ctl_set_fixed(limit)
 *   FIXED -> FAST       iopa_ctl_set_fixed(0), iopa: ramp from the limit
 *   FIXED -> NORMAL     iopa_ctl_set_fixed(0), hillclimb and bracket: probe
 *                       around it
 *   any -> FAST, NORMAL iopa_ctl_set_policy(), as after iopa_ctl_set_fixed(0)
 */
enum iopa_ctl_mode {
	IOPA_CTL_MODE_FAST,
	IOPA_CTL_MODE_NORMAL,
	IOPA_CTL_MODE_HOLD,
	IOPA_CTL_MODE_FIXED,
	IOPA_CTL_MODE_PROBE,
	IOPA_CTL_MODE_STEADY,
	IOPA_CTL_NR_MODES,
};

/**
 * struct iopa_ctl_params - global tunables, read at every call
 * @increase_permille: iopa grows when R > this / 1000.  hillclimb keeps
 *	a larger limit only if it raised throughput by more than
 *	(this - 1000) / 1000 times the relative growth of the limit (a
 *	doubling must gain (this - 1000) / 10 percent, as in iopa)
 * @decrease_permille: iopa shrinks when R < this / 1000.  hillclimb
 *	re-probes when the throughput at an unchanged limit moves by more
 *	than (1000 - this) / 1000 (and by more than the noise)
 * @fast_cycle_ms: cycle length in FAST mode (bracket: the longest one; a
 *	cycle ends earlier once it holds enough evidence)
 * @normal_cycle_ms: cycle length in the other modes (bracket: the longest)
 * @hold_cycle_ms: iopa: how long HOLD keeps the limit after a decrease
 * @history: iopa: N, the number of previous cycles R is taken against.
 *	hillclimb: most cycles averaged per measurement.  1..IOPA_CTL_HIST_MAX
 * @init_limit: limit of a new controller; 0: the policy's own (iopa and
 *	hillclimb: 30% of @ncpus, rounded up; bracket: 8)
 * @fast_cap: iopa and hillclimb: FAST mode grows no further; 0: 90% of
 *	@ncpus, rounded up.  bracket has no CPU-derived cap: only max_limit,
 *	the CPU guard and demand end its doubling
 * @max_limit: ceiling for every controller, >= 1
 * @gain_permille: bracket: of two limits, the larger pays if it raised
 *	throughput by more than (this - 1000) / 1000 times its relative
 *	growth (a doubling must gain (this - 1000) / 10 percent)
 * @ncpus: online CPUs
 * @min_cycle_ms: bracket: a cycle ends on evidence no sooner than this
 *	(IOPA_CTL_MIN_CYCLE_MS, the module's; 0 is taken as that).  The
 *	in-process pool, which credits each job's own bytes as it ends,
 *	uses a shorter one
 */
struct iopa_ctl_params {
	u32 increase_permille;
	u32 decrease_permille;
	u32 fast_cycle_ms;
	u32 normal_cycle_ms;
	u32 hold_cycle_ms;
	u32 history;
	u32 init_limit;
	u32 fast_cap;
	u32 max_limit;
	u32 gain_permille;
	u32 ncpus;
	u32 min_cycle_ms;
};

/**
 * struct iopa_ctl_sample - what the module measured over the last cycle
 * @tput: throughput, in any unit per second that is comparable between
 *	cycles of one submitter (block-layer bytes/s, or jobs/s for jobs
 *	that do no I/O)
 * @elapsed_ms: length of the cycle as it ran
 * @cpu_saturated: the runnable workers saturated the CPUs: do not grow
 * @demand: jobs waited on the limit during the cycle, so the throughput
 *	says something about the limit.  Without demand the sample is
 *	ignored (a submitter with few jobs runs below its limit)
 * @cached: @tput is not comparable with the samples before: the cycle's
 *	jobs completed without block I/O although earlier ones did (page-
 *	cache hits), or the other way round, so the module changed its unit
 *	(bytes/s, jobs/s).  The sample is ignored and the controller
 *	measures afresh
 * @block_io: @tput counts block I/O bytes (else jobs, which did none):
 *	bracket still probes one step up when such a cycle saturated the
 *	CPUs, since the device may be what limits it; and a start of 1 for
 *	a rotational disk holds only for jobs that read it
 * @completions: jobs completed in the cycle
 * @svc_us: sum of their service times (fetch to complete), microseconds
 * @svc_sq: sum of the squares of their service times in microseconds,
 *	saturated at U64_MAX; with @svc_us it gives the spread from which
 *	the bracket policy estimates a sample's noise within the cycle
 * @dev_tput: bytes per second the device read in the cycle, for all its
 *	users (0: not known); with @tput in bytes/s, what others read
 *	(bracket: a competitor that comes or goes moves the knee)
 */
struct iopa_ctl_sample {
	u64 tput;
	u32 elapsed_ms;
	bool cpu_saturated;
	bool demand;
	bool cached;
	bool block_io;
	u32 completions;
	u64 svc_us;
	u64 svc_sq;
	u64 dev_tput;
};

/**
 * struct iopa_ctl - per-submitter controller state
 * @hist: iopa: the last samples (ring, newest at @hist_head - 1).
 *	hillclimb: samples taken at @base since it became the base
 * @trial: hillclimb: samples taken at the trial limit
 * @limit: the limit in force
 * @min: per-submitter lower bound, 0 for none
 * @max: per-submitter upper bound, 0 for none
 * @ceiling: max_limit of the last params seen
 * @base: hillclimb: the accepted limit, to which a trial reverts
 * @step: hillclimb: distance of the next trial from @base
 * @from: hillclimb: the limit the last accepted move came from (known
 *	worse than @base: not probed again), 0 for none
 * @rejected: hillclimb: the last trial around @base that was reverted
 *	(not probed again), 0 for none
 * @noise_permille: hillclimb: estimate of the relative difference
 *	between two samples at one limit (moving average)
 * @min_cycle_ms: bracket: the shortest cycle (the parameters', at init)
 * @steady_ms: hillclimb: time spent in STEADY since the last probe
 * @reprobe_ms: hillclimb: STEADY time after which to probe once more
 * @hold_ms: iopa: time left in HOLD
 * @r_permille: last ratio computed, for tracing
 * @nr_hist: valid entries in @hist
 * @hist_head: next slot of @hist
 * @nr_trial: valid entries in @trial
 * @nr_noise: hillclimb: noise observations so far (saturates at 255)
 * @tried: hillclimb: directions tried at this step (bit 0 up, bit 1 down)
 * @shifted: hillclimb, bracket: consecutive cycles off the reference
 *	level (STEADY; bracket: NORMAL too), in the direction of the first
 *	(bracket, NORMAL: @r_permille)
 * @shifted_ms: bracket: time the @shifted cycles lasted
 * @reprobes: hillclimb: timed probes in a row that changed nothing
 * @reprobe_dir: hillclimb: direction of the next timed probe
 * @policy: enum iopa_ctl_policy
 * @mode: enum iopa_ctl_mode
 * @dir: hillclimb: direction of the current search, +1 or -1
 * @dropped: the limit fell at the end of the last cycle: the cycle just
 *	measured ran partly above it while running jobs drained
 * @br_ref: bracket: throughput of the measurement the one under way will
 *	be judged against (the base just before a probe, the limit before a
 *	doubling)
 * @br_sum: bracket: sum of the samples taken at the limit since its
 *	transient cycle
 * @br_ref_var: bracket: relative variance of @br_ref, in ppm
 * @br_ref_at: bracket: the limit @br_ref was measured at (0: none, or
 *	in FAST)
 * @br_var: bracket: sum of the relative variances of the samples in
 *	@br_sum, in ppm
 * @br_n: bracket: samples in @br_sum
 * @br_settle: bracket: the limit just changed; the next cycle is
 *	transient (running jobs started under the old limit)
 * @br_streak: bracket: probes won in a row in direction @dir (FAST:
 *	doublings that paid)
 * @br_wide: bracket: the first doubling did not pay: probes down may
 *	halve the base (else a quarter at most) until STEADY
 * @br_unsure: bracket: the move to the base was judged within the noise
 *	(FLAT, settled by the point estimate), and no probe since judged
 *	clearly on the side it came from: STEADY re-probes after
 *	IOPA_CTL_BR_REPROBE_CYCLES samples, not after @reprobe_ms
 * @br_steady_n: bracket: samples taken in STEADY since the last probe
 * @br_foreign: bracket: others' share of the device, as last settled:
 *	IOPA_CTL_FOREIGN_* (unknown, quiet, busy)
 * @br_fpend: bracket: others' share in the last window (IOPA_CTL_FOREIGN_*;
 *	unknown: in between); the next settles it if it agrees
 * @br_fheld: bracket: windows @br_foreign held since it was settled
 *	(saturated at IOPA_CTL_BR_FOREIGN_HELD)
 * @br_restarted: bracket: started up again at least once (level shift,
 *	competitor): its start-up is no cold start
 * @br_floor: bracket: a start from a known knee on a disk that says it
 *	is rotational probes the start limit first (1: to probe, 2: the
 *	probe under way; iopa_ctl_set_known())
 * @br_known_kb: bracket: the size of a job, in KiB, of the workload a
 *	known knee was found with (iopa_ctl_set_known()); 0: not known
 * @job_bytes: bytes the jobs read from the device in the cycles measured
 *	since the start or the last restart (bracket: a new load), for the
 *	size of a job (iopa_ctl_job_kb())
 * @job_n: jobs that ended in those cycles
 * @br_fours: bracket: the submitter's bytes in the window under way
 * @br_fdev: bracket: the device's bytes (everyone's reads) in it
 * @br_fms: bracket: its length so far, ms (the window closes at
 *	IOPA_CTL_BR_SHIFT_MS)
 * @br_start: bracket: the limit start-up begins at, and the lowest a
 *	restart after a level shift begins at (1 on a rotational device;
 *	kept under every policy, for a switch to bracket), as asked: the
 *	bounds and max_limit apply where it is used
 * @br_from: bracket: where the start-up under way began (the start
 *	limit, a known knee, a restart's limit), as asked: bounds changed
 *	before it measured anything move it there within the new bounds
 * @br_xf: bracket: how far the samples' own variance estimate falls
 *	short of their spread, per mille (1000: it does not), a moving
 *	average over pairs of samples in a row at one limit; every variance
 *	the policy uses is scaled by it (iopa_ctl_br_noise())
 * @br_prev: bracket: the last sample taken at @br_prev_at, for @br_xf
 * @br_prev_var: bracket: its own variance estimate, ppm
 * @br_prev_at: bracket: the limit it was taken at (0: none; the next
 *	sample has no neighbour to compare with)
 * @br_gen: bracket: bumped whenever the samples after cannot be compared
 *	with those before (a new limit, a restart, a resume, another unit)
 * @br_svc: bracket: sum of the service times (fetch to complete, us) of
 *	the jobs that ended in the samples of @br_sum
 * @br_done: bracket: those jobs
 * @br_ref_svc: bracket: the mean service time, us, of the measurement
 *	@br_ref is (0: not known)
 * @br_leap: bracket: FAST's leaps for jobs the device did not queue
 *	(iopa_ctl_br_unqueued()): IOPA_CTL_BR_LEAP_* (the move under way is
 *	none, is one; one failed in this start-up, no more)
 * @br_walk: bracket: the trial under way walks FAST's plateau: a limit
 *	past a doubling that did not pay, judged against the base
 *	(iopa_ctl_br_walk_on(): IOPA_CTL_BR_WALK_*)
 * @br_leapt: bracket: the limit of a rotational start's leap (from 2)
 *	that neither paid nor lost (0: none); a walk goes on past it
 * @br_walk_dbl: bracket: throughput measured at the walk's doubling, the
 *	move that did not pay before it (0: none, or the walk resumed
 *	once already; iopa_ctl_br_walk_hold())
 * @br_walk_dbl_var: bracket: relative variance of @br_walk_dbl, in ppm
 * @br_far: bracket: the limit of the best trial of FAST's walk that
 *	tied, kept to be judged against its base measured afresh, or of one
 *	held (@br_far_walk) (0: none; iopa_ctl_br_far_keep(),
 *	iopa_ctl_br_far_judge())
 * @br_far_at: bracket: that base
 * @br_far_n: bracket: the samples @br_far_tput is the mean of
 * @br_far_var: bracket: relative variance of @br_far_tput, in ppm
 * @br_far_tput: bracket: throughput measured at @br_far
 * @br_far_retry: bracket: the probe under way tries @br_far again
 *	(iopa_ctl_br_far_retry_judge())
 * @br_far_walk: bracket: @br_far is a walk's trial held, not kept: the
 *	walk resumes past it if the base measured afresh does not read
 *	above it (iopa_ctl_br_walk_hold(), iopa_ctl_br_walk_resume())
 */
struct iopa_ctl {
	u64 hist[IOPA_CTL_HIST_MAX];
	u64 trial[IOPA_CTL_HIST_MAX];
	u32 limit;
	u32 min;
	u32 max;
	u32 ceiling;
	u32 base;
	u32 step;
	u32 from;
	u32 rejected;
	u32 noise_permille;
	u32 min_cycle_ms;
	u32 steady_ms;
	u32 reprobe_ms;
	u32 hold_ms;
	u32 r_permille;
	u32 shifted_ms;
	u8 nr_hist;
	u8 hist_head;
	u8 nr_trial;
	u8 nr_noise;
	u8 tried;
	u8 shifted;
	u8 reprobes;
	u8 reprobe_dir;
	u8 policy;
	u8 mode;
	s32 dir;
	bool dropped;
	u64 br_ref;
	u64 br_sum;
	u32 br_ref_var;
	u32 br_ref_at;
	u32 br_var;
	u8 br_n;
	u8 br_settle;
	u8 br_streak;
	u8 br_wide;
	u8 br_unsure;
	u8 br_steady_n;
	u8 br_foreign;
	u8 br_fpend;
	u8 br_fheld;
	u8 br_restarted;
	u8 br_floor;
	u32 br_known_kb;
	u32 br_fms;
	u64 br_fours;
	u64 br_fdev;
	u32 br_start;
	u32 br_from;
	u32 br_xf;
	u64 br_prev;
	u32 br_prev_var;
	u32 br_prev_at;
	u8 br_gen;
	u8 br_leap;
	u8 br_walk;
	u32 br_leapt;
	u64 br_walk_dbl;
	u32 br_walk_dbl_var;
	u32 br_far;
	u32 br_far_at;
	u32 br_far_var;
	u64 br_far_tput;
	u8 br_far_n;
	u8 br_far_retry;
	u8 br_far_walk;
	u32 br_done;
	u64 br_svc;
	u64 br_ref_svc;
	u64 job_bytes;
	u64 job_n;
};

const char *iopa_ctl_policy_name(enum iopa_ctl_policy p);
int iopa_ctl_policy_parse(const char *s, size_t len);
const char *iopa_ctl_mode_name(enum iopa_ctl_mode m);

void iopa_ctl_params_default(struct iopa_ctl_params *p, u32 ncpus);
int iopa_ctl_params_check(const struct iopa_ctl_params *p);

void iopa_ctl_init(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		   enum iopa_ctl_policy pol);
void iopa_ctl_set_policy(struct iopa_ctl *c, enum iopa_ctl_policy pol);
int iopa_ctl_set_bounds(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			u32 min, u32 max);
void iopa_ctl_set_fixed(struct iopa_ctl *c, u32 limit);
bool iopa_ctl_more_sharers(struct iopa_ctl *c);
bool iopa_ctl_set_start(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			u32 limit);
bool iopa_ctl_set_known(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			u32 knee, u32 job_kb);
bool iopa_ctl_lift_start(struct iopa_ctl *c, const struct iopa_ctl_params *p);
u32 iopa_ctl_job_kb(const struct iopa_ctl *c);
u32 iopa_ctl_limit(const struct iopa_ctl *c);
u32 iopa_ctl_knee(const struct iopa_ctl *c);
u32 iopa_ctl_settled_knee(const struct iopa_ctl *c);
u32 iopa_ctl_left_knee(const struct iopa_ctl *c);
enum iopa_ctl_mode iopa_ctl_mode(const struct iopa_ctl *c);
enum iopa_ctl_policy iopa_ctl_policy(const struct iopa_ctl *c);
u32 iopa_ctl_next_cycle_ms(const struct iopa_ctl *c,
			   const struct iopa_ctl_params *p);
u32 iopa_ctl_clamp_limit(const struct iopa_ctl *c,
			 const struct iopa_ctl_params *p, u32 limit);
void iopa_ctl_cycle_need(const struct iopa_ctl *c, u32 *jobs, u32 *spans,
			 u32 *min_ms);
u32 iopa_ctl_sample_noise(const struct iopa_ctl *c,
			  const struct iopa_ctl_sample *s, u32 limit);
bool iopa_ctl_cycle_enough(const struct iopa_ctl *c, u32 elapsed_ms,
			   u32 completions, u64 svc_us);
bool iopa_ctl_update(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		     const struct iopa_ctl_sample *s, u32 *r_permille);

#endif /* _IOPA_CTL_H */
