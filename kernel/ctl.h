/* SPDX-License-Identifier: GPL-2.0 */
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
 * @IOPA_CTL_NR_POLICIES: number of policies
 */
enum iopa_ctl_policy {
	IOPA_CTL_POLICY_IOPA,
	IOPA_CTL_POLICY_HILLCLIMB,
	IOPA_CTL_NR_POLICIES,
};

/**
 * enum iopa_ctl_mode - what a controller is doing in the current cycle
 * @IOPA_CTL_MODE_FAST: start-up ramp; cycles of fast_cycle_ms.  iopa:
 *	double while the throughput ratio R exceeds the increase threshold.
 *	hillclimb: double while the doubled limit pays for itself
 * @IOPA_CTL_MODE_NORMAL: iopa: +1 / -1 / keep on R, one normal cycle
 *	each.  hillclimb: measuring the base limit before the next probe
 * @IOPA_CTL_MODE_HOLD: iopa only: keep the limit for hold_cycle_ms after
 *	a decrease
 * @IOPA_CTL_MODE_FIXED: frozen by iopa_ctl_set_fixed(); no adaptation
 * @IOPA_CTL_MODE_PROBE: hillclimb only: a trial limit (base +- step) is
 *	being measured
 * @IOPA_CTL_MODE_STEADY: hillclimb only: converged; the limit stays
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
 * Both:
 *   any -> FIXED        iopa_ctl_set_fixed(limit)
 *   FIXED -> FAST       iopa_ctl_set_fixed(0), iopa: ramp from the limit
 *   FIXED -> NORMAL     iopa_ctl_set_fixed(0), hillclimb: probe around it
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
 * @fast_cycle_ms: cycle length in FAST mode
 * @normal_cycle_ms: cycle length in the other modes
 * @hold_cycle_ms: iopa: how long HOLD keeps the limit after a decrease
 * @history: iopa: N, the number of previous cycles R is taken against.
 *	hillclimb: most cycles averaged per measurement.  1..IOPA_CTL_HIST_MAX
 * @init_limit: limit of a new controller; 0: 30% of @ncpus, rounded up
 * @fast_cap: FAST mode grows no further; 0: 90% of @ncpus, rounded up
 * @max_limit: ceiling for every controller, >= 1
 * @ncpus: online CPUs
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
	u32 ncpus;
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
 */
struct iopa_ctl_sample {
	u64 tput;
	u32 elapsed_ms;
	bool cpu_saturated;
	bool demand;
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
 * @steady_ms: hillclimb: time spent in STEADY since the last probe
 * @reprobe_ms: hillclimb: STEADY time after which to probe once more
 * @hold_ms: iopa: time left in HOLD
 * @r_permille: last ratio computed, for tracing
 * @nr_hist: valid entries in @hist
 * @hist_head: next slot of @hist
 * @nr_trial: valid entries in @trial
 * @nr_noise: hillclimb: noise observations so far (saturates at 255)
 * @tried: hillclimb: directions tried at this step (bit 0 up, bit 1 down)
 * @shifted: hillclimb: consecutive STEADY cycles off the reference level
 * @reprobes: hillclimb: timed probes in a row that changed nothing
 * @reprobe_dir: hillclimb: direction of the next timed probe
 * @policy: enum iopa_ctl_policy
 * @mode: enum iopa_ctl_mode
 * @dir: hillclimb: direction of the current search, +1 or -1
 * @dropped: the limit fell at the end of the last cycle: the cycle just
 *	measured ran partly above it while running jobs drained
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
	u32 steady_ms;
	u32 reprobe_ms;
	u32 hold_ms;
	u32 r_permille;
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
u32 iopa_ctl_limit(const struct iopa_ctl *c);
enum iopa_ctl_mode iopa_ctl_mode(const struct iopa_ctl *c);
enum iopa_ctl_policy iopa_ctl_policy(const struct iopa_ctl *c);
u32 iopa_ctl_next_cycle_ms(const struct iopa_ctl *c,
			   const struct iopa_ctl_params *p);
bool iopa_ctl_update(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		     const struct iopa_ctl_sample *s, u32 *r_permille);

#endif /* _IOPA_CTL_H */
