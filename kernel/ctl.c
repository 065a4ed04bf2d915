// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * iopa - the adaptive admission limit: how many of a submitter's jobs
 * may run at once.
 *
 * 1. The problem
 *
 * A submitter queues file-processing jobs; workers run them.  Too few at
 * once leave the device idle (an SSD wants a deep queue); too many
 * thrash it (an HDD seeks between interleaved streams) or oversubscribe
 * the CPUs.  The best count depends on the device, the files, the job and
 * the other load, and it moves.  The controller finds it from the one
 * thing that says how well a count works: the throughput it gets.
 *
 * Throughput as a function of the count n, tput(n), typically rises
 * steeply, bends at a knee and then stays flat (SSD, CPU-bound jobs up to
 * the CPUs) or falls (HDD).  Being below the knee costs much more than
 * being a little above it.
 *
 * 2. Measurement
 *
 * The module measures, per submitter and per cycle, the throughput
 * (block-layer bytes/s; jobs/s for jobs that do no I/O), whether the
 * runnable workers saturated the CPUs, and whether jobs waited on the
 * limit (demand).  It calls iopa_ctl_update() at the end of each cycle
 * and asks iopa_ctl_next_cycle_ms() how long the next one is.
 *
 * A sample without demand says nothing about the limit (the submitter
 * ran below it) and is ignored.  Limits change only at job boundaries:
 * a smaller limit does not preempt running jobs, so the cycle after a
 * decrease runs partly at the old count; hillclimb does not count that
 * cycle as evidence of noise (iopa_ctl.dropped).
 *
 * 3. Policy "iopa"
 *
 * The IOPA paper's algorithm (PLoS ONE 2017, section 3.2), as its prose
 * describes it (its pseudocode figure is not available):
 *
 * - Start at init_limit (30% of the CPUs, rounded up: the paper's 8 of
 *   24) in FAST mode, cycles of fast_cycle_ms (half the normal cycle).
 * - R = this cycle's throughput / the mean of the previous N (history)
 *   cycles.
 * - FAST: the first cycle has nothing to compare with and doubles; then
 *   double while R > increase_permille / 1000, up to fast_cap (90% of the
 *   CPUs, rounded up: the paper's 22 of 24).  When R stalls or the cap is
 *   reached, NORMAL.  The paper's run: 8 -> 16 -> 22.
 * - NORMAL, one normal_cycle_ms each: R > increase: +1; R < decrease:
 *   -1 and HOLD; otherwise keep.
 * - HOLD: keep the limit for hold_cycle_ms, then NORMAL.
 *
 * Where it is weak.  R compares cycles, so it cannot tell the effect of
 * its own step from a change in the load: a burst or a load step looks
 * like a verdict on the limit, and noise makes it random-walk.  Its
 * first, unconditional doubling can overshoot a device that peaks low
 * (an HDD at 4-8 streams), and NORMAL then only follows a throughput
 * trend: at a constant limit R tends to 1 and nothing moves, so it stays
 * past the peak (the simulator's hdd: 78% of the best fixed limit).
 *
 * 4. Policy "hillclimb"
 *
 * Probe-and-revert hill climbing on the marginal throughput of extra
 * workers.  It compares the limit with a trial limit next to it, both
 * measured, instead of a cycle with earlier cycles.
 *
 * - The rule.  Of two limits small < big, big is better if it raised
 *   throughput by more than e * (big - small) / small, with e =
 *   (increase_permille - 1000) / 1000: the extra workers must pay for
 *   themselves (for a doubling, +10% at the default, iopa's threshold).
 *   This stops at the knee instead of drifting along a flat top, and a
 *   flat top costs workers other submitters could use.
 * - FAST: as iopa, double from init_limit up to fast_cap, but judge each
 *   doubling against the limit before it (no other rule: e = 0) and go
 *   back if it lost.  A doubling that the noise cannot judge is kept:
 *   below the cap a limit too small costs more than one too large.
 * - Search: compass search around the accepted limit (the base): try
 *   base + step, then base - step (at most double, at least half the
 *   base); keep a trial that is better, and go on from it in the same
 *   direction; after both directions failed, halve the step.  The step
 *   starts at a quarter of the base, or half the doubling that failed.
 *   The base is measured again after each revert, so each trial is judged
 *   against fresh samples on both sides.
 * - Noise.  The controller estimates the relative difference between two
 *   samples at one limit (a moving average of what it observes).  A trial
 *   is measured for up to N (history) cycles, until the difference from
 *   the threshold clears a band of IOPA_CTL_HC_Z_PERMILLE noise
 *   estimates, scaled by sqrt(1/n_base + 1/n_trial).  A trial that never
 *   clears it is FLAT: go back, and settle at this step rather than
 *   trying smaller steps, which would only be flatter (a step up that
 *   leaned better is tried once at twice the size; a step down that
 *   leaned no worse is taken).  Until IOPA_CTL_HC_NOISE_OBS observations
 *   exist the noise is unknown: noisy samples decide nothing, and even
 *   quiet ones need N cycles to leave the safe side.
 * - STEADY: when no step is left.  The base is watched: samples off its
 *   mean by more than max(1 - decrease, 3 noise estimates) for two
 *   cycles in a row mean the device or the load changed, and the search
 *   starts again (step: an eighth of the base).  Otherwise one step is
 *   probed after 32 normal cycles (8 if the search ended in noise),
 *   alternately up and down, doubling the wait after each probe that
 *   changed nothing (up to 8 times).
 *
 * Why it beats iopa: a trial is judged against the base measured around
 * it, so a load change shifts both and cancels out, and a step that
 * does not pay is undone; HDD-like curves are searched down from the
 * first doubling instead of held past the peak; noise only makes it
 * measure longer and settle earlier instead of random-walking; and once
 * settled it changes the limit only to probe, rarely.  Section 7 gives
 * the numbers.
 *
 * 5. Policy "bracket" (the default)
 *
 * What the guest showed of hillclimb and iopa (Documentation/iopa-
 * controller.rst): the loss is the ramp and the noise, not the search.
 * A FAST cap of 90% of the CPUs (2 in a 2-CPU guest) leaves an I/O knee
 * at 16 to be climbed +1 per cycle, though that knee is the device's
 * depth times its latency (Little's law), not a CPU count; whole jobs
 * credited at completion make 200 ms samples swing 3-12%; a noise
 * estimate that needs 6 observations across cycles judges every early
 * trial "flat".  bracket changes three things:
 *
 * - Cycles end on evidence (iopa_ctl_cycle_enough()): at least max(8,
 *   limit) completions over IOPA_CTL_BR_SPANS mean service times (FAST:
 *   IOPA_CTL_BR_FAST_SPANS, a doubling is a large effect), never sooner
 *   than min_cycle_ms (IOPA_CTL_MIN_CYCLE_MS; the in-process pool's is
 *   shorter); fast_cycle_ms and normal_cycle_ms are
 *   only the upper bounds.  The cycle after each change is transient
 *   (jobs of the old limit still run): it lasts limit completions and
 *   one mean service time and is not judged.
 * - Each sample carries its own noise estimate, from within its cycle
 *   (iopa_ctl_br_var()): completions counted over a window have a
 *   relative variance of cv^2 / k for k completions whose service times
 *   have the squared coefficient of variation cv^2, plus limit / (12 k^2)
 *   for the jobs the window's edges cut, plus a floor of 2% for what the
 *   cycle cannot see.  No warm-up across cycles.
 * - Start-up doubles from 8 (Little's law again: a start of 30% of the
 *   CPUs is 1 on small machines; 8 rather than 4 because past a device's
 *   knee more jobs only queue, while below it each doubling costs two
 *   cycles: on the guest's SSD model, 5 s runs from a fresh module went
 *   from 91.9% to 98.3% of the best fixed limit, 2 s runs from 91.3% to
 *   95.9%, and the first second after the first job reached 90% of it
 *   in 938 ms instead of 1119; CPU-bound jobs, whose knee is the CPU
 *   count, lose 1-2 points in the simulator) with no CPU-derived cap: only
 *   max_limit, the bounds, the CPU guard and demand stop it, and a
 *   doubling that does not pay beyond the noise (the pair rule below).
 *   With all L jobs running, throughput is L / service time: a doubling
 *   that does not raise throughput is one whose latency doubled, so
 *   this is also the latency knee.  The doubling that did not pay is
 *   undone and the limit before it bracketed; if it held the throughput,
 *   once a start-up, after a walk past it (iopa_ctl_br_walk_on(): a
 *   plateau's far end may rise, where a disk's jobs overflow its tags),
 *   whose last trial owes one doubling's gain and whose best trial is
 *   judged again against the base measured afresh
 *   (iopa_ctl_br_far_judge()).
 *
 * The pair rule.  Of two limits small < big measured back to back, big
 * pays if it raised throughput by more than (gain_permille - 1000) /
 * 1000 times its relative growth (the extra jobs pay for themselves; a
 * doubling must gain 5% at the default).  The first version took
 * increase_permille, 10% a doubling: on the demo's disk, whose 4, 8 and
 * 16 jobs read 136, 146 and 150 MB/s, it kept 4 to 5 (88-93% of limit
 * 16); at 5% it reached 8 to 16 (one guest run, 101%).  A difference beyond
 * IOPA_CTL_BR_Z_PERMILLE / 1000 standard errors of the pair decides;
 * within it the measurement goes on, up to history samples, and then the
 * point estimate decides (on a flat top the smaller limit wins: the
 * extra jobs did not pay).
 *
 * Steady state.  The base is measured, then base + step is probed and
 * judged against that measurement; if it lost, the base is measured again
 * and base - step is probed against it.  Each probe is judged against the
 * base measured just before it, so a load change between pairs hits both
 * sides of each pair alike and cancels.  A probe that wins becomes the
 * base and the next probe goes the same way with twice the step (up to
 * the base; down at most a quarter of the base: a probe below a knee
 * costs what it lacks); a reversal halves a grown step; when both sides
 * held, the step halves, down to base / 8.  The CPU guard stops the
 * doubling and every probe up only for jobs that do no block I/O
 * (iopa_ctl_br_no_up()); for jobs that do, it keeps the steps up at
 * the finest.  Jobs that read a device may be limited by it while the
 * CPUs are busy: on a 2-CPU guest reading a virtio disk the CPUs showed
 * "saturated" (less than 10% idle) in most cycles at 4 jobs while 8 read
 * 7% more and 16 5% more again; guarding the probes kept 4, guarding the
 * doubling kept 5 to 9 (93% of limit 16), doubling to 16 and beyond got
 * 102%.  Each doubling and probe is judged by its throughput and undone
 * if it did not pay.
 * Then STEADY: the level at the
 * base is watched, and one probe pair at the finest step is made after 8
 * normal cycles, doubling the wait up to 8 times while nothing changes;
 * after a move the noise could not judge (FLAT, won on the point
 * estimate), after 8 samples, doubling likewise: 8 normal cycles are 80
 * evidence cycles of 100 ms, and one such move from 2 jobs to 1 cost a
 * guest run on the model disk 12%.
 *
 * Level shifts.  Two samples in a row off the level the same way by more
 * than 3 standard errors and 1000 - decrease_permille (in STEADY; in the
 * search, the base measured again after a probe against its own earlier
 * measurement) mean the device or the load changed, and the knee may
 * have gone anywhere: start-up again from a quarter of the base (not
 * below the start limit, nor above the base), doubling while it pays.
 * A bracket around the old base would cross a plateau a quarter of the
 * base per probe pair: the model disk of the bench reads 1 MB
 * files 52% faster at one job than at two and equally fast from 2 to 64,
 * and after a switch from 10 KB files (whose best is 2 and up) bracket
 * stayed at 14 to 16.
 *
 * Others on the device.  When the caller knows what the device read for
 * everyone (@dev_tput of the sample: device groups), others' share of it
 * over 500 ms windows, settled by two windows in a row, tells when a
 * competitor came (from 40%) or went (up to 5%): start-up again, from
 * the base or from an eighth of it (iopa_ctl_br_foreign()).  Against fio
 * the model disk wants many jobs to hold its share, alone one; at 10
 * jobs our bytes were the same with fio as without, no level shift.
 *
 * Rotational disks start at 1.  One actuator serves one request at a
 * time; more jobs in flight pay only by letting the elevator sort them
 * (random small reads: 2 jobs +32% over one on the model disk, 4 to 64
 * within 2% of 2), and cost outright when they interleave streams that
 * would otherwise be read in sequence (1 MB files: 2 jobs 35% below
 * one).  Starting at 4 and doubling, the 1 MB cell's first verdict was
 * "8 pays over 4" on noise, and the descent from 8 to 1 took most of a
 * 20 s run (86% of the best fixed limit).  The module tells the
 * controller through iopa_ctl_set_start() once it sees the submitter's
 * first job on a rotational device; init_limit, if set, wins.  Jobs that
 * read nothing from the disk (page-cache hits) make no seeks: a start of
 * 1 whose first measurement is of such jobs moves to the default start
 * at once, and a known knee is not probed at one job for them.
 *
 * 6. Bounds, fixed limits, the CPU guard
 *
 * The limit stays within [max(1, min), min(max_limit, max,
 * IOPA_CTL_LIMIT_MAX)]; max_limit wins over a min above it.  min and max
 * are per submitter (iopa_ctl_set_bounds(), like seed 001's
 * MP_SUGNUMTHD_MIN/MAX).  iopa_ctl_set_fixed() freezes the limit (mode
 * FIXED), like seed 001 freezing the thread count once the program sets
 * one; 0 unfreezes and adapts again from the frozen limit.  Neither
 * policy grows the limit in a cycle whose sample says the runnable
 * workers saturated the CPUs (seed 001 follows idle CPUs; .NET refuses to
 * inject threads above 95% CPU): hillclimb then tries only smaller
 * limits, which also finds the CPU count for CPU-bound jobs.
 *
 * 7. Defaults, and how they were measured
 *
 * tools/sim drives this file against synthetic devices on a 32-CPU
 * machine (Documentation/iopa-controller.rst, tools/sim/README), every
 * scenario for 60 normal cycles.  `iopa-sim --sweep` varies one default
 * at a time over 64 seeds.  Among the values where hillclimb meets the
 * done criteria on every seed (>= 95% of the best fixed limit on every
 * scenario, <= 3 limit changes after settling on ssd and hdd) and iopa
 * reaches 90% within 6 cycles, the defaults maximise the lower of the two
 * policies' worst scenario means (iopa's hdd left out: no value brings
 * iopa back from its doubling past the peak); within 0.1 point, the
 * better worst noisy seed:
 *
 *   increase_permille  1100   (1025..1300 x 700..950: above 1100 the
 *   decrease_permille   900    worst noisy seed of hillclimb falls to
 *                              91%, below it iopa's ssd to 95.4%)
 *   history              3    (1..8: only 3 and 6 keep every noisy seed
 *                              of hillclimb >= 95%; 3 scores higher)
 *   init_limit   30% of CPUs  (10..150%: 10% costs iopa on ssd, 50% and
 *                              more leave iopa past the hdd peak)
 *   fast_cap     90% of CPUs  (10..150%: less starves ssd and flat, more
 *                              overshoots on noisy)
 *   normal_cycle_ms   1000    (100 ms..10 s over a fixed 60 s run, jobs of
 *   fast_cycle_ms      500     100 and 400 ms: the only length with <= 3
 *                              changes after settling and >= 95%
 *                              everywhere; fast is half, as in the paper)
 *   hold_cycle_ms     6000    (1..6 normal cycles, the paper's range:
 *                              all within 0.1 point; the longest has iopa's
 *                              best worst noisy seed)
 *   max_limit       256       (was 4 x CPUs, 8 in a 2-CPU guest, below
 *                              the guest SSD model's knee at 16: a
 *                              ceiling, not a guess at the knee)
 *
 * Default policy: bracket, the one that wins in the guest bench
 * (Documentation/iopa-controller.rst gives the runs and each policy's
 * scores; bench/README.md the tables).  The figures above for iopa and
 * hillclimb are from the simulator of issue 5, kinder than the guest.
 *
 * 8. Monitoring
 *
 * iopa_ctl_mode_name() and the ratio iopa_ctl_update() returns in
 * *r_permille (iopa: R; hillclimb: the larger limit's throughput over the
 * smaller's, or a STEADY sample over the base level) are for tracing.
 * `iopa-sim --trace -s hdd -p hillclimb` shows a search:
 *
 *   t=  1000 fast   limit=20 tput=156.2 (78.1%) R= 843 -> fast   limit=20
 *   t=  2000 fast   limit=20 tput=156.2 (78.1%) R= 843 -> normal limit=10
 *   t=  3000 normal limit=10 tput=182.2 (91.1%) R=1000 -> probe  limit= 5
 *   t=  6000 probe  limit= 5 tput=196.0 (98.0%) R= 937 -> probe  limit= 3
 *   t=  7000 probe  limit= 3 tput=164.1 (82.1%) R=1193 -> normal limit= 5
 *
 * The doubling to 20 lost 16% (R = 843): back to 10, search downwards;
 * 5 beats 10 (10 does not pay: R = 937); 3 loses to 5 (R = 1193): back.
 */
#include "ctl.h"

/* Constants of the hillclimb policy that are not tunables (see 4. above). */
enum {
	/*
	 * A trial is decided when the measured difference is more than
	 * this many (per mille) noise estimates, scaled for the number of
	 * samples on each side, away from the threshold.
	 */
	IOPA_CTL_HC_Z_PERMILLE		= 2500,

	/* Moving average weight of a new noise observation: 1 / 2^this. */
	IOPA_CTL_HC_NOISE_SHIFT		= 2,

	/* Noise below this (per mille) is rounding, not noise. */
	IOPA_CTL_HC_NOISE_FLOOR		= 5,

	/* Observations needed before the noise estimate is trusted. */
	IOPA_CTL_HC_NOISE_OBS		= 6,

	/*
	 * STEADY: a level shift is a sample this many noise estimates (and
	 * at least 1000 - decrease_permille) off the reference, for
	 * IOPA_CTL_HC_SHIFT_CYCLES cycles in a row.
	 */
	IOPA_CTL_HC_SHIFT_NOISE		= 3,
	IOPA_CTL_HC_SHIFT_CYCLES	= 2,

	/*
	 * STEADY: probe by one step after this many normal cycles without
	 * a probe, or IOPA_CTL_HC_REPROBE_NOISY if the search ended because
	 * the noise hid any difference; doubled after each timed probe
	 * that changed nothing, up to 2^IOPA_CTL_HC_REPROBE_MAX_SHIFT times.
	 */
	IOPA_CTL_HC_REPROBE_CYCLES	= 32,
	IOPA_CTL_HC_REPROBE_NOISY	= 8,
	IOPA_CTL_HC_REPROBE_MAX_SHIFT	= 3,
};

/*
 * The default ceiling of every limit.  Not derived from the CPUs: an I/O
 * knee is the device's depth times its latency (Little's law), and a
 * deep NVMe queue or a RAID set wants more jobs in flight than there are
 * CPUs.  The CPU guard stops growth when the CPUs are the limit.
 */
#define IOPA_CTL_MAX_LIMIT_DEFAULT	256

/* Constants of the bracket policy that are not tunables (see 5. above). */
enum {
	/*
	 * A cycle ends on evidence no sooner than min_cycle_ms
	 * (IOPA_CTL_MIN_CYCLE_MS in the module), with at least
	 * max(this, limit) completions ...
	 */
	IOPA_CTL_BR_MIN_JOBS		= 8,
	/* ... over this many mean service times (FAST: doublings are big). */
	IOPA_CTL_BR_SPANS		= 4,
	IOPA_CTL_BR_FAST_SPANS		= 2,
	/* A transient cycle: limit completions and one mean service time. */
	IOPA_CTL_BR_SETTLE_SPANS	= 1,
	/*
	 * ... and, after a move of the limit up, no sooner than this (ms).
	 * Nothing is judged in it, and its evidence says the jobs of the
	 * old limit have turned over; each level of a start-up spent
	 * min_cycle_ms there (100 ms in the module), a tenth of a second's
	 * run.  The first cycle of a start-up keeps min_cycle_ms (its jobs
	 * wait on the first reads of their directories), and so does the
	 * cycle after a move down: limit completions do not drain the jobs
	 * of the higher limit still running (on the HDD model, 2 s runs of
	 * 10 KB files read 80% of the best where a probe down measured
	 * them).
	 */
	IOPA_CTL_BR_SETTLE_MIN_MS	= 20,

	/*
	 * A sample's relative variance (ppm) is at least this: 2% standard
	 * error for what a cycle cannot see of itself (other load, the
	 * hypervisor); at most this: 50%.  The squared coefficient of
	 * variation of service times is capped (a 4x spread).
	 */
	IOPA_CTL_BR_VAR_FLOOR		= 400,
	IOPA_CTL_BR_VAR_MAX		= 250000,
	IOPA_CTL_BR_CV2_MAX		= 16000000,

	/* A pair is decided beyond this many (per mille) standard errors. */
	IOPA_CTL_BR_Z_PERMILLE		= 2000,

	/*
	 * The samples' spread may exceed their own estimate (a guest whose
	 * vCPUs stall, a disk behind a host's cache) by up to this factor
	 * on the variance, per mille (3x the standard error: a competitor
	 * that comes between two samples is no noise to learn), learned
	 * over pairs of samples with weight 1 / 2^this (iopa_ctl_br_learn()).
	 */
	IOPA_CTL_BR_XF_MAX		= 9000,
	IOPA_CTL_BR_XF_SHIFT		= 3,

	/* The finest step is base / this (at least 1). */
	IOPA_CTL_BR_FINE		= 8,

	/*
	 * STEADY: a level shift is this many standard errors, twice, and
	 * lasts this long (a host's or a journal's stall of a cycle or two
	 * of 100 ms is not one: a restart costs a start-up).
	 */
	IOPA_CTL_BR_SHIFT_Z		= 3000,
	IOPA_CTL_BR_SHIFT_CYCLES	= 2,
	IOPA_CTL_BR_SHIFT_MS		= 500,

	/*
	 * STEADY: probe after this many normal cycles (samples, after a
	 * move within the noise), doubling up to 8x.
	 */
	IOPA_CTL_BR_REPROBE_CYCLES	= 8,
	IOPA_CTL_BR_REPROBE_MAX_SHIFT	= 3,

	/* The start limit when init_limit is 0. */
	IOPA_CTL_BR_INIT_LIMIT		= 8,
	/*
	 * The lowest a restart begins at (iopa_ctl_br_restart_from()),
	 * unless the start is lower: a start-up after a level shift or a
	 * competitor has its doublings to climb back, and a device whose
	 * knee moved below the start would have to be searched down to.
	 */
	IOPA_CTL_BR_RESTART_MIN		= 4,
	/*
	 * From a lower start (a rotational disk), a first doubling that
	 * raised throughput this much (per mille) is followed by a leap of
	 * 4x (iopa_ctl_br_double()).
	 */
	IOPA_CTL_BR_LEAP_PERMILLE	= 1500,
	/*
	 * A doubling (or leap) in FAST whose jobs' mean service time grew
	 * by at most SVC_PERMILLE, and whose throughput grew by at least
	 * TPUT_PERMILLE of the jobs' growth, queued none of its new jobs:
	 * the device is far below its knee, and the next step is a leap of
	 * 4x (iopa_ctl_br_unqueued()).  Each mean of at least SVC_JOBS jobs.
	 */
	IOPA_CTL_BR_UNQ_SVC_PERMILLE	= 1150,
	IOPA_CTL_BR_UNQ_TPUT_PERMILLE	= 850,
	IOPA_CTL_BR_SVC_JOBS		= 16,
	/*
	 * FAST's walk over a plateau (iopa_ctl_br_walk_on()) tries limits
	 * up to this many times the base: five doublings, the HDD model's
	 * rise from 2 jobs to 64 past its tags (at 16, from a base of 2,
	 * 10 s runs with 23 and 42 tags read 74-78% instead of 78-84%).
	 */
	IOPA_CTL_BR_WALK_MAX		= 32,
	/*
	 * The fewest jobs a measurement at a known knee must have ended for
	 * their size to be compared with the knee's (iopa_ctl_br_same_jobs()).
	 */
	IOPA_CTL_BR_SAME_JOBS_MIN	= 4,

	/*
	 * Others' share of the device (per mille of what it completed,
	 * over a window): from BUSY up a competitor reads; up to QUIET
	 * nobody else does to speak of (the members' own metadata, the
	 * edges of the window).
	 */
	IOPA_CTL_BR_FOREIGN_BUSY	= 400,
	IOPA_CTL_BR_FOREIGN_QUIET	= 50,
	/* ... and a settled state is left only after this many more windows */
	IOPA_CTL_BR_FOREIGN_HELD	= 2,
};

/* bracket: the transient cycle under way (br_settle; 0: none). */
enum {
	IOPA_CTL_BR_SETTLE_FULL = 1,	/* a start-up's first, or after a move down */
	IOPA_CTL_BR_SETTLE_UP,		/* the cycle after a move up */
};

/* bracket: FAST's leaps for jobs the device did not queue (br_leap). */
enum {
	IOPA_CTL_BR_LEAP_NONE,	/* the move under way is no such leap */
	IOPA_CTL_BR_LEAP_UNQ,	/* it is one */
	IOPA_CTL_BR_LEAP_DONE,	/* a leap of this start-up failed: no more */
};

/* bracket: FAST's walk over a plateau (br_walk, iopa_ctl_br_walk_on()). */
enum {
	IOPA_CTL_BR_WALK_NONE,	/* none in this start-up yet */
	IOPA_CTL_BR_WALK_ON,	/* the trial under way is a walk's */
	IOPA_CTL_BR_WALK_DONE,	/* this start-up walked: no more */
};

/* bracket: others' share of the device (iopa_ctl.br_foreign). */
enum {
	IOPA_CTL_FOREIGN_UNKNOWN,
	IOPA_CTL_FOREIGN_QUIET,
	IOPA_CTL_FOREIGN_BUSY,
};

static const char * const iopa_ctl_policy_names[IOPA_CTL_NR_POLICIES] = {
	[IOPA_CTL_POLICY_IOPA]		= "iopa",
	[IOPA_CTL_POLICY_HILLCLIMB]	= "hillclimb",
	[IOPA_CTL_POLICY_BRACKET]	= "bracket",
};

static const char * const iopa_ctl_mode_names[IOPA_CTL_NR_MODES] = {
	[IOPA_CTL_MODE_FAST]	= "fast",
	[IOPA_CTL_MODE_NORMAL]	= "normal",
	[IOPA_CTL_MODE_HOLD]	= "hold",
	[IOPA_CTL_MODE_FIXED]	= "fixed",
	[IOPA_CTL_MODE_PROBE]	= "probe",
	[IOPA_CTL_MODE_STEADY]	= "steady",
};

/**
 * iopa_ctl_policy_name() - name of a policy, as sysfs shows it
 * @p: the policy
 *
 * Return: "iopa", "hillclimb", or "?" for a value out of range.
 */
const char *iopa_ctl_policy_name(enum iopa_ctl_policy p)
{
	if ((unsigned int)p >= IOPA_CTL_NR_POLICIES)
		return "?";
	return iopa_ctl_policy_names[p];
}

/**
 * iopa_ctl_policy_parse() - policy from its name
 * @s: the name, not necessarily NUL-terminated
 * @len: its length; one trailing newline is ignored (sysfs writes)
 *
 * Return: the enum iopa_ctl_policy, or -EINVAL if @s names none.
 */
int iopa_ctl_policy_parse(const char *s, size_t len)
{
	int p;

	if (len && s[len - 1] == '\n')
		len--;
	for (p = 0; p < IOPA_CTL_NR_POLICIES; p++) {
		const char *n = iopa_ctl_policy_names[p];
		size_t i;

		for (i = 0; i < len && n[i] && n[i] == s[i]; i++)
			;
		if (i == len && !n[i])
			return p;
	}
	return -EINVAL;
}

/**
 * iopa_ctl_mode_name() - name of a mode, for sysfs and tracing
 * @m: the mode
 *
 * Return: "fast", "normal", "hold", "fixed", "probe", "steady", or "?".
 */
const char *iopa_ctl_mode_name(enum iopa_ctl_mode m)
{
	if ((unsigned int)m >= IOPA_CTL_NR_MODES)
		return "?";
	return iopa_ctl_mode_names[m];
}

/* @pct percent of @ncpus, rounded up, at least 1. */
static u32 iopa_ctl_cpu_pct(u32 ncpus, u32 pct)
{
	u32 v = (u32)div64_u64((u64)ncpus * pct + 99, 100);

	return v ? v : 1;
}

/**
 * iopa_ctl_params_default() - the default tunables
 * @p: filled in
 * @ncpus: online CPUs
 *
 * The values, and the simulator runs they were chosen from, are in
 * Documentation/iopa-controller.rst.
 */
void iopa_ctl_params_default(struct iopa_ctl_params *p, u32 ncpus)
{
	/* The IOPA paper's R > 1.1 to grow, R < 0.9 to shrink. */
	p->increase_permille = 1100;
	p->decrease_permille = 900;
	/*
	 * Cycle lengths (bracket: upper bounds, its cycles end on
	 * evidence): a start-up cycle long enough for a disk's jobs of
	 * 1 MB to complete at a limit of 1; normal cycles twice that, for
	 * the paper's 3-cycle mean to be seconds; a hold of 6 s, the
	 * paper's, before trying again a limit that lost.
	 */
	p->fast_cycle_ms = 500;
	p->normal_cycle_ms = 1000;
	p->hold_cycle_ms = 6000;
	/* The paper's mean over 3 cycles. */
	p->history = 3;
	/*
	 * 0: each policy's own start (iopa and hillclimb 30% of the CPUs,
	 * the paper's; bracket 8, or 1 on a rotational disk).
	 */
	p->init_limit = 0;
	/*
	 * 0: iopa's and hillclimb's start-up stops at 90% of the CPUs (the
	 * paper's); bracket's has no CPU cap.
	 */
	p->fast_cap = 0;
	/* Far above any knee seen (the model SSD's 16, fio's best 64). */
	p->max_limit = IOPA_CTL_MAX_LIMIT_DEFAULT;
	/*
	 * Bracket: a doubling must gain 5%, more than the noise of a
	 * cycle on the guest's devices (2-4%), less than a knee's step.
	 */
	p->gain_permille = 1050;
	p->ncpus = ncpus ? ncpus : 1;
	p->min_cycle_ms = IOPA_CTL_MIN_CYCLE_MS;
}

/* Longest cycle accepted: an hour (keeps every sum of ms in a u32). */
#define IOPA_CTL_CYCLE_MS_MAX	(3600U * 1000)

/**
 * iopa_ctl_params_check() - validate tunables before using them
 * @p: the tunables
 *
 * Return: 0, or -EINVAL if a value is out of range or the thresholds do
 * not satisfy 0 < decrease < 1000 < increase <= 10000.
 */
int iopa_ctl_params_check(const struct iopa_ctl_params *p)
{
	if (!p->decrease_permille || p->decrease_permille >= 1000 ||
	    p->increase_permille <= 1000 || p->increase_permille > 10000)
		return -EINVAL;
	if (!p->fast_cycle_ms || p->fast_cycle_ms > IOPA_CTL_CYCLE_MS_MAX ||
	    !p->normal_cycle_ms || p->normal_cycle_ms > IOPA_CTL_CYCLE_MS_MAX ||
	    !p->hold_cycle_ms || p->hold_cycle_ms > IOPA_CTL_CYCLE_MS_MAX)
		return -EINVAL;
	if (!p->history || p->history > IOPA_CTL_HIST_MAX)
		return -EINVAL;
	if (p->gain_permille <= 1000 || p->gain_permille > 10000)
		return -EINVAL;
	if (p->init_limit > IOPA_CTL_LIMIT_MAX ||
	    p->fast_cap > IOPA_CTL_LIMIT_MAX ||
	    !p->max_limit || p->max_limit > IOPA_CTL_LIMIT_MAX || !p->ncpus)
		return -EINVAL;
	return 0;
}

/* ---- bounds ------------------------------------------------------------ */

static u32 iopa_ctl_hi(const struct iopa_ctl *c)
{
	u32 hi = IOPA_CTL_LIMIT_MAX;

	if (c->ceiling && c->ceiling < hi)
		hi = c->ceiling;
	if (c->max && c->max < hi)
		hi = c->max;
	return hi;
}

/* The ceiling wins over a per-submitter minimum above it. */
static u32 iopa_ctl_lo(const struct iopa_ctl *c)
{
	u32 lo = c->min ? c->min : 1;
	u32 hi = iopa_ctl_hi(c);

	return lo < hi ? lo : hi;
}

static u32 iopa_ctl_clamp(const struct iopa_ctl *c, u64 v)
{
	u32 lo = iopa_ctl_lo(c), hi = iopa_ctl_hi(c);

	if (v < lo)
		return lo;
	if (v > hi)
		return hi;
	return (u32)v;
}

/*
 * The trial limit a step from the base in direction @d: up by the step,
 * at most doubling; down by the step, at most @down_max.
 */
static u32 iopa_ctl_trial(const struct iopa_ctl *c, s32 d, u32 down_max)
{
	if (d > 0)
		return iopa_ctl_clamp(c, (u64)c->base +
				      (c->step < c->base ? c->step : c->base));
	return iopa_ctl_clamp(c, c->base - (c->step < down_max ? c->step :
					    down_max));
}

static u32 iopa_ctl_fast_cap(const struct iopa_ctl_params *p)
{
	return p->fast_cap ? p->fast_cap : iopa_ctl_cpu_pct(p->ncpus, 90);
}

static u32 iopa_ctl_history(const struct iopa_ctl_params *p)
{
	if (!p->history)
		return 1;
	return p->history < IOPA_CTL_HIST_MAX ? p->history : IOPA_CTL_HIST_MAX;
}

/* ---- sample rings -------------------------------------------------------- */

static void iopa_ctl_hist_push(struct iopa_ctl *c, u64 tput)
{
	c->hist[c->hist_head] = tput;
	c->hist_head = (c->hist_head + 1) % IOPA_CTL_HIST_MAX;
	if (c->nr_hist < IOPA_CTL_HIST_MAX)
		c->nr_hist++;
}

/* Mean of the newest @n samples of hist (fewer if it holds fewer). */
static u64 iopa_ctl_hist_mean(const struct iopa_ctl *c, u32 n)
{
	u64 sum = 0;
	u32 i;

	if (n > c->nr_hist)
		n = c->nr_hist;
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		sum += c->hist[(c->hist_head + IOPA_CTL_HIST_MAX - 1 - i) %
			       IOPA_CTL_HIST_MAX];
	return div64_u64(sum, n);
}

static void iopa_ctl_hist_clear(struct iopa_ctl *c)
{
	c->nr_hist = 0;
	c->hist_head = 0;
}

static u64 iopa_ctl_trial_mean(const struct iopa_ctl *c)
{
	u64 sum = 0;
	u32 i;

	if (!c->nr_trial)
		return 0;
	for (i = 0; i < c->nr_trial; i++)
		sum += c->trial[i];
	return div64_u64(sum, c->nr_trial);
}

/* @a / @b in per mille, saturated at 1000000; 1000 when both are 0. */
static u32 iopa_ctl_ratio(u64 a, u64 b)
{
	u64 r;

	if (!b)
		return a ? 1000000 : 1000;
	/* Throughputs above 2^44 per second would overflow a * 1000. */
	if (a > (1ULL << 44) || b > (1ULL << 44)) {
		a >>= 20;
		b >>= 20;
		if (!b)
			return 1000000;
	}
	r = div64_u64(a * 1000, b);
	return r < 1000000 ? (u32)r : 1000000;
}

static u32 iopa_ctl_isqrt(u32 x)
{
	u32 r = 0, bit = 1U << 30;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

/* ---- policy iopa (see 3. above) ----------------------------------------- */

/* Time passes in HOLD: back to NORMAL once hold_cycle_ms is over. */
static void iopa_ctl_hold_tick(struct iopa_ctl *c, u32 elapsed_ms)
{
	if (c->hold_ms > elapsed_ms)
		c->hold_ms -= elapsed_ms;
	else
		c->hold_ms = 0;
	if (!c->hold_ms)
		c->mode = IOPA_CTL_MODE_NORMAL;
}

static void iopa_ctl_iopa_update(struct iopa_ctl *c,
				 const struct iopa_ctl_params *p,
				 const struct iopa_ctl_sample *s)
{
	u32 n = iopa_ctl_history(p), old = c->limit;
	bool have_r = c->nr_hist > 0;
	u32 r = 0;

	if (have_r)
		r = iopa_ctl_ratio(s->tput, iopa_ctl_hist_mean(c, n));
	c->r_permille = r;
	iopa_ctl_hist_push(c, s->tput);

	switch (c->mode) {
	case IOPA_CTL_MODE_FAST: {
		u32 cap = iopa_ctl_fast_cap(p);

		/* The first cycle has nothing to compare with: double. */
		if ((!have_r || r > p->increase_permille) &&
		    !s->cpu_saturated && c->limit < cap) {
			u64 want = 2 * (u64)c->limit;

			c->limit = iopa_ctl_clamp(c, want < cap ? want : cap);
		}
		if (c->limit == old || c->limit >= cap)
			c->mode = IOPA_CTL_MODE_NORMAL;
		break;
	}
	case IOPA_CTL_MODE_NORMAL:
		if (!have_r)
			break;
		if (r > p->increase_permille && !s->cpu_saturated) {
			c->limit = iopa_ctl_clamp(c, (u64)c->limit + 1);
		} else if (r < p->decrease_permille &&
			   c->limit > iopa_ctl_lo(c)) {
			c->limit--;
			c->mode = IOPA_CTL_MODE_HOLD;
			c->hold_ms = p->hold_cycle_ms;
		}
		break;
	case IOPA_CTL_MODE_HOLD:
		iopa_ctl_hold_tick(c, s->elapsed_ms);
		break;
	default:
		break;
	}
}

/* ---- policy hillclimb (see 4. above) ------------------------------------ */

/* Verdicts on a trial. */
enum iopa_ctl_verdict {
	IOPA_CTL_WAIT,		/* measure one more cycle */
	IOPA_CTL_KEEP,		/* the trial is better: it becomes the base */
	IOPA_CTL_BACK,		/* the base is better: go back */
	IOPA_CTL_FLAT,		/* no difference beyond the noise */
};

/* Bits of iopa_ctl.tried */
#define IOPA_CTL_UP	0x1	/* the step up was tried */
#define IOPA_CTL_DOWN	0x2	/* the step down was tried */
#define IOPA_CTL_FLATS	0x4	/* one of them was within the noise */
#define IOPA_CTL_LEANUP	0x8	/* ... the step up, and it looked better */

/* Feed a noise observation: @tput against the mean @mean of its peers. */
static void iopa_ctl_hc_noise(struct iopa_ctl *c, u64 tput, u64 mean)
{
	u32 r = iopa_ctl_ratio(tput, mean);
	u32 obs = r > 1000 ? r - 1000 : 1000 - r;

	if (obs > 1000)
		obs = 1000;
	if (c->nr_noise < 255)
		c->nr_noise++;
	if (c->nr_noise <= (1 << IOPA_CTL_HC_NOISE_SHIFT)) {
		/* Plain mean of the first few, then a moving average. */
		c->noise_permille = (c->noise_permille * (c->nr_noise - 1) +
				     obs) / c->nr_noise;
		return;
	}
	c->noise_permille -= c->noise_permille >> IOPA_CTL_HC_NOISE_SHIFT;
	c->noise_permille += obs >> IOPA_CTL_HC_NOISE_SHIFT;
}

/*
 * A cycle that began with a lower limit ran partly at the old one while
 * jobs drained: it is a fair measurement of neither, and no evidence of
 * noise.
 */
static void iopa_ctl_hc_push_base(struct iopa_ctl *c,
				  const struct iopa_ctl_params *p, u64 tput)
{
	if (c->nr_hist && !c->dropped)
		iopa_ctl_hc_noise(c, tput,
				  iopa_ctl_hist_mean(c, iopa_ctl_history(p)));
	iopa_ctl_hist_push(c, tput);
}

static void iopa_ctl_hc_trial_push(struct iopa_ctl *c, u64 tput)
{
	if (c->nr_trial && !c->dropped)
		iopa_ctl_hc_noise(c, tput, iopa_ctl_trial_mean(c));
	if (c->nr_trial < IOPA_CTL_HIST_MAX)
		c->trial[c->nr_trial++] = tput;
}

/*
 * Judge the trial against the base.  The larger of the two limits is
 * better if it raised throughput by more than (increase_permille - 1000)
 * / 1000 times its relative growth: the extra workers must pay for
 * themselves.  A result within the noise band of that threshold waits for
 * more samples, up to history cycles, and is then FLAT.  Before the noise
 * is known at all, one sample is never enough.
 */
static enum iopa_ctl_verdict iopa_ctl_hc_judge(struct iopa_ctl *c,
					       const struct iopa_ctl_params *p,
					       bool ramp)
{
	u32 n = iopa_ctl_history(p);
	u32 ka = c->nr_hist < n ? c->nr_hist : n, kb = c->nr_trial;
	u64 tb = iopa_ctl_hist_mean(c, n), tt = iopa_ctl_trial_mean(c);
	bool up = c->limit > c->base;
	bool known = c->nr_noise >= IOPA_CTL_HC_NOISE_OBS, unsure;
	u32 small = up ? c->base : c->limit, big = up ? c->limit : c->base;
	enum iopa_ctl_verdict v;
	u32 r, f;
	u64 need, band;
	s64 x;

	if (!ka || !kb)
		return kb < n ? IOPA_CTL_WAIT : IOPA_CTL_BACK;
	r = up ? iopa_ctl_ratio(tt, tb) : iopa_ctl_ratio(tb, tt);
	c->r_permille = r;
	need = ramp ? 0 : div64_u64((u64)(p->increase_permille - 1000) *
				    (big - small), small);
	x = (s64)r - 1000 - (s64)need;
	f = iopa_ctl_isqrt(1000000 * (ka + kb) / (ka * kb));
	band = 0;
	if (c->noise_permille >= IOPA_CTL_HC_NOISE_FLOOR)
		band = div64_u64((u64)IOPA_CTL_HC_Z_PERMILLE *
				 c->noise_permille * f, 1000000);
	v = (x > 0) == up ? IOPA_CTL_KEEP : IOPA_CTL_BACK;
	/*
	 * Until the noise is known (IOPA_CTL_HC_NOISE_OBS observations),
	 * noisy samples prove nothing (a few lucky ones look quiet), and
	 * leaving the safe side (a probe's base, a ramp's doubling) takes a
	 * full measurement of history cycles even when they are quiet.
	 */
	if (band)
		unsure = !known || (x <= (s64)band && x >= -(s64)band);
	else
		unsure = !known && kb < n &&
			 v == (ramp ? IOPA_CTL_BACK : IOPA_CTL_KEEP);
	if (!unsure)
		return v;
	if (kb < n)
		return IOPA_CTL_WAIT;
	if (!band)
		return v;
	if (up && x > (s64)(band >> 1))
		c->tried |= IOPA_CTL_LEANUP;
	/* Fewer workers that look no worse, by half the band: take them. */
	if (!up && !ramp && x < -(s64)(band >> 1))
		return IOPA_CTL_KEEP;
	return IOPA_CTL_FLAT;
}

/* Start a search around the current limit. */
static void iopa_ctl_hc_search(struct iopa_ctl *c, u32 step, s32 dir)
{
	c->base = c->limit;
	c->step = step ? step : 1;
	c->dir = dir;
	c->tried = 0;
	c->from = 0;
	c->rejected = 0;
	c->nr_trial = 0;
}

static void iopa_ctl_hc_reprobe_reset(struct iopa_ctl *c)
{
	c->reprobes = 0;
}

/*
 * Start the next trial around the base (mode PROBE): the search
 * direction first, then the other one, then half the step.  Settle (mode
 * STEADY) when no step is left, or when a step size found nothing better
 * and one of its trials was within the noise: smaller steps would only
 * be flatter.  Growth is not tried while the CPUs are saturated.
 */
static void iopa_ctl_hc_next(struct iopa_ctl *c,
			     const struct iopa_ctl_params *p, bool saturated)
{
	while (c->step) {
		int i;

		for (i = 0; i < 2; i++) {
			s32 d = i ? -c->dir : c->dir;
			u32 bit = d > 0 ? IOPA_CTL_UP : IOPA_CTL_DOWN;
			u32 t;

			if (c->tried & bit)
				continue;
			c->tried |= bit;
			if (d > 0 && saturated)
				continue;
			/* At most double, at least half the base. */
			t = iopa_ctl_trial(c, d, c->base / 2);
			if (t == c->base || t == c->from || t == c->rejected)
				continue;
			c->limit = t;
			c->nr_trial = 0;
			c->mode = IOPA_CTL_MODE_PROBE;
			return;
		}
		if (c->tried & IOPA_CTL_FLATS) {
			/*
			 * Nothing better beyond the noise at this step.  If
			 * the step up looked better, a step twice as large
			 * shows a real gain twice as large: try it once.
			 * Otherwise settle.
			 */
			if (!(c->tried & IOPA_CTL_LEANUP) || saturated ||
			    2 * c->step > c->base)
				break;
			c->step *= 2;
			c->dir = 1;
			c->tried = IOPA_CTL_DOWN;
			continue;
		}
		c->step /= 2;
		c->tried = 0;
	}
	c->limit = c->base;
	c->mode = IOPA_CTL_MODE_STEADY;
	c->steady_ms = 0;
	c->shifted = 0;
	c->reprobe_ms = (c->tried & IOPA_CTL_FLATS ?
			 IOPA_CTL_HC_REPROBE_NOISY : IOPA_CTL_HC_REPROBE_CYCLES) *
			p->normal_cycle_ms << c->reprobes;
}

/* The trial becomes the base; its samples become the base's. */
static void iopa_ctl_hc_accept(struct iopa_ctl *c)
{
	u32 i;

	c->from = c->base;
	c->base = c->limit;
	c->rejected = 0;
	c->tried = 0;
	iopa_ctl_hist_clear(c);
	for (i = 0; i < c->nr_trial; i++)
		iopa_ctl_hist_push(c, c->trial[i]);
	c->nr_trial = 0;
}

static void iopa_ctl_hc_revert(struct iopa_ctl *c)
{
	c->rejected = c->limit;
	c->limit = c->base;
	c->nr_trial = 0;
	c->mode = IOPA_CTL_MODE_NORMAL;
}

/*
 * FAST: double from the initial limit while the doubled limit pays for
 * itself.  Unlike a probe, a doubling the noise cannot judge is kept:
 * below the fast cap a limit too small costs more than one too large.
 */
static void iopa_ctl_hc_fast(struct iopa_ctl *c,
			     const struct iopa_ctl_params *p,
			     const struct iopa_ctl_sample *s)
{
	u32 cap = iopa_ctl_fast_cap(p);

	if (c->limit == c->base) {
		/* The first cycle measured the initial limit. */
		iopa_ctl_hc_push_base(c, p, s->tput);
	} else {
		u32 from = c->base, to = c->limit;

		iopa_ctl_hc_trial_push(c, s->tput);
		switch (iopa_ctl_hc_judge(c, p, true)) {
		case IOPA_CTL_WAIT:
			return;
		case IOPA_CTL_BACK:
			/*
			 * If the doubling lost throughput the peak may be
			 * below the base: look down first; otherwise it is
			 * between base and trial.
			 */
			iopa_ctl_hc_revert(c);
			iopa_ctl_hc_search(c, (to - from) / 2,
					   c->r_permille < p->decrease_permille ?
					   -1 : 1);
			c->from = to;
			return;
		default:
			iopa_ctl_hc_accept(c);
			break;
		}
	}
	if (c->base < cap && !s->cpu_saturated) {
		u64 want = 2 * (u64)c->base;
		u32 t = iopa_ctl_clamp(c, want < cap ? want : cap);

		if (t > c->base) {
			c->limit = t;
			c->nr_trial = 0;
			return;
		}
	}
	/* Cap reached: search around it. */
	iopa_ctl_hc_search(c, c->base / 4, 1);
	iopa_ctl_hc_next(c, p, s->cpu_saturated);
}

static void iopa_ctl_hc_probe(struct iopa_ctl *c,
			      const struct iopa_ctl_params *p,
			      const struct iopa_ctl_sample *s)
{
	iopa_ctl_hc_trial_push(c, s->tput);
	switch (iopa_ctl_hc_judge(c, p, false)) {
	case IOPA_CTL_WAIT:
		break;
	case IOPA_CTL_KEEP:
		iopa_ctl_hc_accept(c);
		iopa_ctl_hc_reprobe_reset(c);
		iopa_ctl_hc_next(c, p, s->cpu_saturated);
		break;
	case IOPA_CTL_FLAT:
		c->tried |= IOPA_CTL_FLATS;
		iopa_ctl_hc_revert(c);
		break;
	case IOPA_CTL_BACK:
		iopa_ctl_hc_revert(c);
		break;
	}
}

/*
 * STEADY: watch the level at the base.  Samples off the reference (the
 * mean of up to IOPA_CTL_HIST_MAX samples) by more than the noise allows,
 * several cycles in a row, mean the device or the load changed: search
 * again.  Otherwise probe one step now and then, alternately up and down,
 * less often the longer nothing changes.
 */
static void iopa_ctl_hc_steady(struct iopa_ctl *c,
			       const struct iopa_ctl_params *p,
			       const struct iopa_ctl_sample *s)
{
	u64 ref = iopa_ctl_hist_mean(c, IOPA_CTL_HIST_MAX);
	u32 r = iopa_ctl_ratio(s->tput, ref);
	u32 off = r > 1000 ? r - 1000 : 1000 - r;
	u32 thr = IOPA_CTL_HC_SHIFT_NOISE * c->noise_permille;

	c->r_permille = r;
	if (thr < 1000 - p->decrease_permille)
		thr = 1000 - p->decrease_permille;
	if (ref && off > thr) {
		if (++c->shifted < IOPA_CTL_HC_SHIFT_CYCLES)
			return;
		iopa_ctl_hist_clear(c);
		iopa_ctl_hist_push(c, s->tput);
		iopa_ctl_hc_search(c, c->limit / 8, r > 1000 ? 1 : -1);
		iopa_ctl_hc_reprobe_reset(c);
		c->mode = IOPA_CTL_MODE_NORMAL;
		return;
	}
	c->shifted = 0;
	iopa_ctl_hc_push_base(c, p, s->tput);
	c->steady_ms += s->elapsed_ms;
	if (c->steady_ms < c->reprobe_ms)
		return;
	if (c->reprobes < IOPA_CTL_HC_REPROBE_MAX_SHIFT)
		c->reprobes++;
	iopa_ctl_hc_search(c, 1, c->reprobe_dir ? -1 : 1);
	c->tried = c->reprobe_dir ? IOPA_CTL_UP : IOPA_CTL_DOWN;
	c->reprobe_dir = !c->reprobe_dir;
	iopa_ctl_hc_next(c, p, s->cpu_saturated);
}

static void iopa_ctl_hc_update(struct iopa_ctl *c,
			       const struct iopa_ctl_params *p,
			       const struct iopa_ctl_sample *s)
{
	switch (c->mode) {
	case IOPA_CTL_MODE_FAST:
		iopa_ctl_hc_fast(c, p, s);
		break;
	case IOPA_CTL_MODE_NORMAL:
		iopa_ctl_hc_push_base(c, p, s->tput);
		c->r_permille = 1000;
		/* With noise, know the base well before judging against it. */
		if (c->noise_permille >= IOPA_CTL_HC_NOISE_FLOOR &&
		    c->nr_hist < iopa_ctl_history(p))
			break;
		iopa_ctl_hc_next(c, p, s->cpu_saturated);
		break;
	case IOPA_CTL_MODE_PROBE:
		iopa_ctl_hc_probe(c, p, s);
		break;
	case IOPA_CTL_MODE_STEADY:
		iopa_ctl_hc_steady(c, p, s);
		break;
	default:
		break;
	}
}

/* ---- policy bracket (see 5. above) -------------------------------------- */

/* Verdicts of the bracket policy on a pair of limits small < big. */
enum iopa_ctl_br_verdict {
	IOPA_CTL_BR_WAIT,	/* within the noise: measure once more */
	IOPA_CTL_BR_BIG,	/* big pays for its extra jobs */
	IOPA_CTL_BR_SMALL,	/* it does not */
	IOPA_CTL_BR_FLAT,	/* still within the noise after history cycles */
};

/* @a * @b / @c without overflowing 64 bits (@b <= 2^32); U64_MAX for c 0. */
static u64 iopa_ctl_muldiv(u64 a, u64 b, u64 c)
{
	while (a > (~0ULL) / (b ? b : 1)) {
		a >>= 1;
		c >>= 1;
	}
	if (!c)
		return ~0ULL;
	return div64_u64(a * b, c);
}

/*
 * The relative variance of a sample's throughput, in ppm (1000000 = a
 * standard error as large as the value), estimated within the cycle:
 * k completions of jobs whose service times have a squared coefficient
 * of variation cv2 give a count with relative variance cv2 / k (renewal
 * counting), plus limit / (12 k^2) for the jobs cut by the cycle's edges
 * (each running job contributes a completion more or less), plus a
 * floor for what the cycle cannot see (other load, the hypervisor).
 */
static u32 iopa_ctl_br_var(const struct iopa_ctl_sample *s, u32 limit)
{
	u64 k = s->completions, mean, sq, var, cv2 = 0, v;

	if (!k)
		return IOPA_CTL_BR_VAR_MAX;
	mean = div64_u64(s->svc_us, k);
	if (mean > 0xffffffffULL)
		mean = 0xffffffffULL;
	if (mean) {
		sq = div64_u64(s->svc_sq, k);
		var = sq > mean * mean ? sq - mean * mean : 0;
		cv2 = iopa_ctl_muldiv(var, 1000000, mean * mean);
		if (cv2 > IOPA_CTL_BR_CV2_MAX)
			cv2 = IOPA_CTL_BR_CV2_MAX;
	}
	v = div64_u64(cv2, k) +
	    div64_u64(div64_u64(1000000ULL * limit, 12 * k), k) +
	    IOPA_CTL_BR_VAR_FLOOR;
	return v < IOPA_CTL_BR_VAR_MAX ? (u32)v : IOPA_CTL_BR_VAR_MAX;
}

/*
 * How far the samples' own variance estimates fall short of their spread
 * (br_xf, per mille).  A pair of samples a and b of one level, each of
 * relative variance v, differ by d with E[d^2] = 2 v (relative to their
 * mean); (d^2 / 2) / v, averaged over pairs, is how far the estimates
 * fall short.  On the guest's throttled null_blk a sample of 40 jobs
 * estimated itself at 2-3% and its neighbours differed by 10-15%: pairs
 * judged 2 standard errors apart were often noise, and the search
 * wandered (4 to 16 jobs where 1 or 2 read as fast).  The factor is never
 * below 1: a device quieter than its estimate keeps the estimate.
 *
 * @s was taken at limit @at with its own estimate @var; @ok is false for
 * a sample off the level the policy watches (a shift under way: a level
 * that changed is no noise to learn) or one after which the policy broke
 * the pairs (iopa_ctl_br_break(): it moved, started up again).  Only a
 * sample that stays the latest at @at is kept for the next pair.
 */
static void iopa_ctl_br_learn(struct iopa_ctl *c,
			      const struct iopa_ctl_sample *s, u32 var,
			      u32 at, bool ok)
{
	u64 a = c->br_prev, b = s->tput, d, rel, e, pv;
	s64 x, xf = c->br_xf ? c->br_xf : 1000;

	if (ok && c->br_prev_at == at && a && b &&
	    var < IOPA_CTL_BR_VAR_MAX &&
	    c->br_prev_var < IOPA_CTL_BR_VAR_MAX) {
		d = a > b ? a - b : b - a;
		/* relative difference, ppm (at most 2000000) ... */
		rel = iopa_ctl_muldiv(d, 2000000, a + b);
		/* ... half its square, a variance in ppm */
		e = div64_u64(rel * rel, 2000000);
		pv = ((u64)var + c->br_prev_var) / 2;
		x = (s64)iopa_ctl_muldiv(e, 1000, pv ? pv : 1);
		if (x > IOPA_CTL_BR_XF_MAX)
			x = IOPA_CTL_BR_XF_MAX;
		xf += (x - xf) / (1 << IOPA_CTL_BR_XF_SHIFT);
		if (xf < 1000)
			xf = 1000;
		if (xf > IOPA_CTL_BR_XF_MAX)
			xf = IOPA_CTL_BR_XF_MAX;
		c->br_xf = (u32)xf;
	}
	if (ok && c->limit == at) {
		c->br_prev = b;
		c->br_prev_var = var;
		c->br_prev_at = at;
	} else {
		c->br_prev_at = 0;
	}
}

/* The samples after this cannot be compared with those before. */
static void iopa_ctl_br_break(struct iopa_ctl *c)
{
	c->br_prev_at = 0;
	c->br_gen++;
}

/* A sample's own variance estimate @var (ppm), as the policy uses it. */
static u32 iopa_ctl_br_scale(const struct iopa_ctl *c, u32 var)
{
	u64 v = div64_u64((u64)var * (c->br_xf ? c->br_xf : 1000), 1000);

	return v < IOPA_CTL_BR_VAR_MAX ? (u32)v : IOPA_CTL_BR_VAR_MAX;
}

/* The measurement at the limit starts anew. */
static void iopa_ctl_br_clear(struct iopa_ctl *c)
{
	c->br_sum = 0;
	c->br_var = 0;
	c->br_n = 0;
	c->br_svc = 0;
	c->br_done = 0;
}

/* A new limit: the next cycle is transient, the measurement starts anew. */
static void iopa_ctl_br_move(struct iopa_ctl *c, u32 limit)
{
	/* Any move ends a walk under way. */
	if (c->br_walk == IOPA_CTL_BR_WALK_ON)
		c->br_walk = IOPA_CTL_BR_WALK_DONE;
	c->br_far_retry = 0;
	if (limit != c->limit) {
		/* A pending full transient (the first cycle) stays full. */
		c->br_settle = limit > c->limit &&
			       c->br_settle != IOPA_CTL_BR_SETTLE_FULL ?
			       IOPA_CTL_BR_SETTLE_UP : IOPA_CTL_BR_SETTLE_FULL;
		iopa_ctl_br_break(c);
	}
	c->limit = limit;
	iopa_ctl_br_clear(c);
}

static u64 iopa_ctl_br_mean(const struct iopa_ctl *c)
{
	return c->br_n ? div64_u64(c->br_sum, c->br_n) : 0;
}

/*
 * The mean service time, us, of the jobs measured at the limit; 0 if
 * too few ended for a mean (IOPA_CTL_BR_SVC_JOBS).
 */
static u64 iopa_ctl_br_svc(const struct iopa_ctl *c)
{
	return c->br_done >= IOPA_CTL_BR_SVC_JOBS ?
	       div64_u64(c->br_svc, c->br_done) : 0;
}

/* Relative variance of the mean of the samples at the limit, ppm. */
static u32 iopa_ctl_br_mvar(const struct iopa_ctl *c)
{
	return c->br_n ? c->br_var / ((u32)c->br_n * c->br_n) : 0;
}

/* The measurement at the limit becomes the reference for the next one. */
static void iopa_ctl_br_set_ref(struct iopa_ctl *c)
{
	c->br_ref = iopa_ctl_br_mean(c);
	c->br_ref_var = iopa_ctl_br_mvar(c);
	c->br_ref_svc = iopa_ctl_br_svc(c);
	/*
	 * A base measured in FAST's short cycles, the pipeline still
	 * filling, is no level to watch (iopa_ctl_br_base_shifted()).
	 */
	c->br_ref_at = c->mode == IOPA_CTL_MODE_FAST ? 0 : c->limit;
}

/*
 * Half the band within which the pair under way (the measurement at the
 * limit against the reference) is undecided: IOPA_CTL_BR_Z_PERMILLE / 1000
 * standard errors of their ratio, per mille.
 */
static s64 iopa_ctl_br_z(u32 var)
{
	return (s64)div64_u64((u64)IOPA_CTL_BR_Z_PERMILLE *
			      iopa_ctl_isqrt(var), 1000);
}

static s64 iopa_ctl_br_band(const struct iopa_ctl *c)
{
	return iopa_ctl_br_z(c->br_ref_var + iopa_ctl_br_mvar(c));
}

/*
 * Judge big against small (one of them the reference, the other the
 * measurement under way, taken just after it): big pays for its extra
 * jobs if it raised throughput by more than (gain_permille - 1000) /
 * 1000 times its relative growth.  Beyond a band of
 * IOPA_CTL_BR_Z_PERMILLE standard errors either way the verdict is
 * clear; within it, measure again, up to history samples, then FLAT with
 * *@lean_big telling the side of the point estimate.
 */
static enum iopa_ctl_br_verdict
iopa_ctl_br_judge(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		  bool *lean_big)
{
	bool up = c->limit > c->base;
	u32 small = up ? c->base : c->limit, big = up ? c->limit : c->base;
	u64 ts = up ? c->br_ref : iopa_ctl_br_mean(c);
	u64 tb = up ? iopa_ctl_br_mean(c) : c->br_ref;
	u32 r = iopa_ctl_ratio(tb, ts);
	s64 need, x, band = iopa_ctl_br_band(c);

	c->r_permille = r;
	need = (s64)div64_u64((u64)(p->gain_permille - 1000) * (big - small),
			      small);
	x = (s64)r - 1000 - need;
	/*
	 * A probe up that the noise cannot judge must lean up by a
	 * standard error (half the band): a tie goes to fewer jobs.  With
	 * the point estimate alone a flat device's search walked at random
	 * (guest, throttled null_blk: 2 to 16 jobs); a doubling in FAST
	 * keeps the plain lean (a start-up below its knee).
	 */
	*lean_big = x > (up && c->mode == IOPA_CTL_MODE_PROBE ? band / 2 : 0);
	if (x > band)
		return IOPA_CTL_BR_BIG;
	if (x < -band)
		return IOPA_CTL_BR_SMALL;
	if (c->br_n < iopa_ctl_history(p))
		return IOPA_CTL_BR_WAIT;
	return IOPA_CTL_BR_FLAT;
}

/*
 * The measurement at the limit lost throughput outright against the
 * reference (its ratio in r_permille): below it by more than the noise
 * and by more than 1000 - decrease_permille.
 */
static bool iopa_ctl_br_lost(const struct iopa_ctl *c,
			     const struct iopa_ctl_params *p)
{
	return (s64)c->r_permille - 1000 < -iopa_ctl_br_band(c) &&
	       c->r_permille < p->decrease_permille;
}

/*
 * FAST's walk over a plateau (iopa_ctl_br_walk_on()): the trial at the
 * limit, some doublings above the base, against the base's measurement
 * (the reference).  It pays (BIG) if it raised throughput by
 * gain_permille per doubling, compounded (a plateau's far end that rises
 * past the device's queue owes no more than doublings that each paid
 * would have won), beyond the noise and over two samples at least: one
 * sample high on a flat plateau is no gain.  It loses (SMALL) if it read
 * less than the base (iopa_ctl_br_lost()), over two samples at least:
 * one low sample is no loss either (the guest's HDD model, 10 KB files:
 * a walk's 8 read 0.80x of the plateau in one 100 ms sample of 20 jobs,
 * and the start-up stayed at 2, 75% of the best fixed limit; the cost:
 * a trial that does lose holds one cycle more); FLAT if it clearly does not
 * pay and does not lose: walk on.  Within the noise, measure again, up
 * to history samples; then FLAT: a tie goes to fewer jobs (with the
 * point estimate deciding, a noisy flat device's walk ended high in one
 * start-up of 15).
 *
 * The walk's @last trial (iopa_ctl_br_walk_last()) owes one doubling's
 * need, not its doublings' compounded, over history samples (two at
 * least): it is the plateau's far end, past which the walk looks no
 * further, and the gain it shows is one the walk found, not one per
 * doubling (the guest's HDD model with 10 tags reading 100 KB files:
 * 16.5 MB/s at 64 jobs, 12.8 from 2 to 8, 29% more where five doublings
 * owe 27.6%; within the noise of that need, the walk went back to 2 for
 * the rest of the run, 77-86% of the best fixed limit).
 */
static enum iopa_ctl_br_verdict
iopa_ctl_br_walk_judge(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		       bool last)
{
	u32 r = iopa_ctl_ratio(iopa_ctl_br_mean(c), c->br_ref);
	s64 band = iopa_ctl_br_band(c), x;
	u64 f = 1000, t;

	c->r_permille = r;
	for (t = c->base; t < c->limit; t *= 2)
		f = div64_u64(f * p->gain_permille, 1000);
	if (last)
		f = p->gain_permille;
	x = (s64)r - (s64)f;
	if (x > band)
		return c->br_n >= (last && iopa_ctl_history(p) > 2 ?
				   iopa_ctl_history(p) : 2) ?
		       IOPA_CTL_BR_BIG : IOPA_CTL_BR_WAIT;
	if (iopa_ctl_br_lost(c, p))
		return c->br_n >= 2 ? IOPA_CTL_BR_SMALL : IOPA_CTL_BR_WAIT;
	if (x < -band)
		return IOPA_CTL_BR_FLAT;
	if (c->br_n < iopa_ctl_history(p))
		return IOPA_CTL_BR_WAIT;
	return IOPA_CTL_BR_FLAT;
}

static u32 iopa_ctl_br_min_step(u32 base)
{
	u32 m = base / IOPA_CTL_BR_FINE;

	return m ? m : 1;
}

/* Bracket the base afresh, first in direction @dir, with step @step. */
static void iopa_ctl_br_search(struct iopa_ctl *c, u32 step, s32 dir)
{
	u32 m = iopa_ctl_br_min_step(c->base);

	c->step = step > m ? step : m;
	c->dir = dir;
	c->tried = 0;
	c->from = 0;
	c->rejected = 0;
	c->br_streak = 0;
}

/* Two ratios (per mille) on the same side of 1000. */
static bool iopa_ctl_same_side(u32 a, u32 b)
{
	return a > 1000 ? b > 1000 : b <= 1000;
}

/* ---- level shifts (bracket) ---------------------------------------------- */

static void iopa_ctl_br_shift_clear(struct iopa_ctl *c)
{
	c->shifted = 0;
	c->shifted_ms = 0;
}

/*
 * One more measurement @elapsed_ms long off the reference level by
 * ratio @r: counted afresh if off the other way from the one before.
 *
 * Return: true if the level has shifted: IOPA_CTL_BR_SHIFT_CYCLES
 * measurements in a row off the same way, lasting IOPA_CTL_BR_SHIFT_MS.
 */
static bool iopa_ctl_br_shift_lasts(struct iopa_ctl *c, u32 r,
				    u32 elapsed_ms)
{
	if (c->shifted && !iopa_ctl_same_side(r, c->r_permille))
		iopa_ctl_br_shift_clear(c);
	c->r_permille = r;
	/* Counted up to what a shift needs: no overflow. */
	if (c->shifted < IOPA_CTL_BR_SHIFT_CYCLES)
		c->shifted++;
	if (c->shifted_ms < IOPA_CTL_BR_SHIFT_MS)
		c->shifted_ms += elapsed_ms;
	return c->shifted >= IOPA_CTL_BR_SHIFT_CYCLES &&
	       c->shifted_ms >= IOPA_CTL_BR_SHIFT_MS;
}

static void iopa_ctl_br_steady(struct iopa_ctl *c,
			       const struct iopa_ctl_params *p)
{
	c->mode = IOPA_CTL_MODE_STEADY;
	c->br_wide = 0;
	c->steady_ms = 0;
	c->br_steady_n = 0;
	iopa_ctl_br_shift_clear(c);
	c->reprobe_ms = IOPA_CTL_BR_REPROBE_CYCLES * p->normal_cycle_ms <<
			c->reprobes;
	iopa_ctl_hist_clear(c);
	if (c->br_n && c->limit == c->base)
		iopa_ctl_hist_push(c, iopa_ctl_br_mean(c));
}

/*
 * The CPU guard: no doubling and no probe up when the cycle saturated
 * the CPUs and its jobs did no block I/O (they are what the CPUs are
 * busy with).  With block I/O the device may still be the limit: double
 * in the start-up, probe after it by the finest step
 * (iopa_ctl_br_probe()), and keep either only if it paid.
 */
static bool iopa_ctl_br_no_up(const struct iopa_ctl_sample *s)
{
	return s->cpu_saturated && !s->block_io;
}

/*
 * The base has just been measured (the reference is set): start the next
 * probe, the search direction first, then the other; when both sides
 * held at this step, halve it; below the finest step, STEADY.
 */
static void iopa_ctl_br_next(struct iopa_ctl *c,
			     const struct iopa_ctl_params *p,
			     const struct iopa_ctl_sample *s)
{
	bool no_up = iopa_ctl_br_no_up(s);
	u32 m = iopa_ctl_br_min_step(c->base);

	while (c->step >= m) {
		int i;

		for (i = 0; i < 2; i++) {
			s32 d = i ? -c->dir : c->dir;
			u32 bit = d > 0 ? IOPA_CTL_UP : IOPA_CTL_DOWN;
			u32 t, down;

			if (c->tried & bit)
				continue;
			c->tried |= bit;
			if (d > 0 && no_up)
				continue;
			/*
			 * At most double; down by at most a quarter of the
			 * base (at least 1): a probe below a knee costs what
			 * it lacks.
			 */
			down = c->base / (c->br_wide ? 2 : 4);
			t = iopa_ctl_trial(c, d, down ? down : 1);
			/* Saturated CPUs: up by the finest step only. */
			if (d > 0 && s->cpu_saturated)
				t = iopa_ctl_clamp(c, (u64)c->base + m);
			/* Not the base, nor a limit already judged worse. */
			if (t == c->base || t == c->from || t == c->rejected)
				continue;
			c->dir = d;
			c->mode = IOPA_CTL_MODE_PROBE;
			iopa_ctl_br_move(c, t);
			return;
		}
		c->step /= 2;
		c->tried = 0;
		c->br_streak = 0;
	}
	iopa_ctl_br_steady(c, p);
}

/*
 * Sample @s measured jobs that completed without reading the device
 * (page-cache hits), where a disk's seeks cost nothing: no one-job start
 * or probe for them.
 */
static bool iopa_ctl_br_hits(const struct iopa_ctl_sample *s)
{
	return s->completions && !s->block_io && !s->cached;
}

/*
 * FAST: the measurement at the limit, against the reference at @from
 * below it, says that the device queued none of the jobs added: their
 * mean service time (fetch to complete) stayed within
 * IOPA_CTL_BR_UNQ_SVC_PERMILLE of the reference's, and throughput grew
 * with the jobs (IOPA_CTL_BR_UNQ_TPUT_PERMILLE of their growth).  That is
 * what a device far below its knee shows whatever it says it is: jobs
 * that find a free path (a tag, a spindle, a backend's queue) take as
 * long as before, and jobs that wait for one take longer in proportion
 * (Little's law: throughput = jobs in flight / service time).  Both
 * signals must agree: service times alone also stay flat when the jobs
 * shrink, bytes alone also grow when they do.  Jobs that wait on the
 * CPUs take longer too, so a CPU-bound load never leaps.
 */
static bool iopa_ctl_br_unqueued(const struct iopa_ctl *c, u32 from)
{
	u64 ref = c->br_ref_svc, now = iopa_ctl_br_svc(c);
	u64 jobs = div64_u64(1000ULL * c->limit, from ? from : 1);

	if (!ref || !now || c->limit <= from)
		return false;
	return now * 1000 <= ref * IOPA_CTL_BR_UNQ_SVC_PERMILLE &&
	       (u64)c->r_permille * 1000 >=
	       jobs * IOPA_CTL_BR_UNQ_TPUT_PERMILLE;
}

/*
 * Double the base if nothing stops it, or leap 4x if the step to it
 * queued none of its jobs (@unq); else bracket it.  FAST only.
 */
static void iopa_ctl_br_double(struct iopa_ctl *c,
			       const struct iopa_ctl_params *p,
			       const struct iopa_ctl_sample *s, bool unq)
{
	u32 t = iopa_ctl_clamp(c, 2 * (u64)c->base);
	bool leap = false;

	/*
	 * A start below the default (a disk that says it is rotational:
	 * iopa_ctl_set_start()) whose first doubling scaled as a device
	 * with parallel paths does (IOPA_CTL_BR_LEAP_PERMILLE) is no
	 * single-actuator disk seeking between streams: leap 4x, from 2 to
	 * the default start.
	 * Virtio disks say rotational whatever backs them; the demo's read
	 * 1.4-1.7x more at 2 jobs than at 1, and 2.2x at 8.  A disk whose
	 * best is one job reads less at 2.
	 */
	if (c->br_start < IOPA_CTL_BR_INIT_LIMIT && !p->init_limit &&
	    c->br_streak == 1 && !c->br_restarted &&
	    c->br_walk == IOPA_CTL_BR_WALK_NONE &&
	    c->base < IOPA_CTL_BR_INIT_LIMIT &&
	    c->r_permille >= IOPA_CTL_BR_LEAP_PERMILLE)
		t = iopa_ctl_clamp(c, 4 * (u64)c->base);
	/*
	 * That start's first measurement, of jobs that read nothing from
	 * the disk (page-cache hits: a tree hashed again): no seek between
	 * streams to fear, the default start at once.
	 */
	if (c->br_start < IOPA_CTL_BR_INIT_LIMIT && !p->init_limit &&
	    !c->br_streak && !c->br_restarted &&
	    c->base < IOPA_CTL_BR_INIT_LIMIT && iopa_ctl_br_hits(s))
		t = iopa_ctl_clamp(c, IOPA_CTL_BR_INIT_LIMIT);

	/*
	 * The doubling (or leap) just won queued none of its jobs
	 * (iopa_ctl_br_unqueued()): the knee is well above, leap 4x, unless
	 * the CPUs are what its jobs wait on or a leap of this start-up
	 * found the knee below it already.  A leap that does not pay, or
	 * pays but queues, goes back to the doubling it skipped
	 * (iopa_ctl_br_fast()).
	 */
	if (unq && !s->cpu_saturated && c->br_leap != IOPA_CTL_BR_LEAP_DONE &&
	    iopa_ctl_clamp(c, 4 * (u64)c->base) > t) {
		t = iopa_ctl_clamp(c, 4 * (u64)c->base);
		leap = true;
	}

	if (!iopa_ctl_br_no_up(s) && t > c->base) {
		if (c->br_leap != IOPA_CTL_BR_LEAP_DONE)
			c->br_leap = leap ? IOPA_CTL_BR_LEAP_UNQ :
				     IOPA_CTL_BR_LEAP_NONE;
		iopa_ctl_br_move(c, t);
		return;
	}
	c->mode = IOPA_CTL_MODE_NORMAL;
	iopa_ctl_br_search(c, c->base / 4, iopa_ctl_br_no_up(s) ? -1 : 1);
	iopa_ctl_br_next(c, p, s);
}

/*
 * Jobs in sample @s of about the size (within 4x) of those the known
 * knee was found with: the same workload, whose knee the knee is.  Not
 * from fewer than IOPA_CTL_BR_SAME_JOBS_MIN jobs (of large files, the
 * bytes of those still running weigh on few), nor from cache hits.
 */
static bool iopa_ctl_br_same_jobs(const struct iopa_ctl *c,
				  const struct iopa_ctl_sample *s)
{
	u64 bytes, known = (u64)c->br_known_kb * 1024;

	if (!known || !s->block_io ||
	    s->completions < IOPA_CTL_BR_SAME_JOBS_MIN)
		return false;
	bytes = div64_u64(s->tput * s->elapsed_ms, 1000ULL * s->completions);
	return bytes * 4 >= known && bytes <= 4 * known;
}

/*
 * FAST: a leap from @from went wrong (it paid but queued, did not pay, or
 * was not filled): the doubling it skipped next, judged against the same
 * base as any doubling; the start-up leaps no more.
 */
static void iopa_ctl_br_skipped(struct iopa_ctl *c, u32 from)
{
	c->br_leap = IOPA_CTL_BR_LEAP_DONE;
	iopa_ctl_br_move(c, iopa_ctl_clamp(c, 2 * (u64)from));
}

/*
 * FAST: the doubling (or leap, or walk) at the limit paid: it is the
 * base, its measurement the reference; double on (iopa_ctl_br_double()).
 */
static void iopa_ctl_br_fast_won(struct iopa_ctl *c,
				 const struct iopa_ctl_params *p,
				 const struct iopa_ctl_sample *s, bool unq)
{
	c->base = c->limit;
	if (c->br_streak < 255)
		c->br_streak++;
	iopa_ctl_br_set_ref(c);
	iopa_ctl_br_double(c, p, s, unq);
}

/*
 * FAST ends: the doubling from @from (or the walk past it) did not pay
 * (@v: SMALL if it lost, or FLAT), so the knee is near @from.  Back to it
 * and bracket it, a quarter of it up and down first (half if no doubling
 * paid); first down if the limit lost throughput outright (a device that
 * thrashes).
 */
static void iopa_ctl_br_fast_end(struct iopa_ctl *c,
				 const struct iopa_ctl_params *p,
				 enum iopa_ctl_br_verdict v, u32 from)
{
	bool wide = !c->br_streak;

	c->mode = IOPA_CTL_MODE_NORMAL;
	/*
	 * A doubling that lost counts as the probe up, unless it lost
	 * outright; one the noise could not judge does not, and may be
	 * tried again as a probe against the base measured afresh (from
	 * one job, the only probe there is).  Down first either way.
	 */
	if (v == IOPA_CTL_BR_SMALL) {
		iopa_ctl_br_search(c, wide ? from / 2 : from / 4,
				   c->r_permille < p->decrease_permille ?
				   -1 : 1);
		c->tried = c->dir > 0 ? IOPA_CTL_UP : 0;
		c->from = c->limit;
	} else {
		iopa_ctl_br_search(c, wide ? from / 2 : from / 4, -1);
	}
	c->br_wide = wide;
	iopa_ctl_br_move(c, from);
}

/*
 * FAST's walk: its trial at the limit tied (FLAT) and is done with, the
 * walk going on past it or ending.  If it read more than the reference
 * by a doubling's need (its point estimate), and more than any trial of
 * the walk kept before, it is kept (br_far), to be judged against the
 * base measured afresh when the walk ends without a gain
 * (iopa_ctl_br_far_judge()): the reference was measured in FAST, often
 * on one sample, and a high one hides the far end's gain.  On the
 * guest's HDD model (10 tags, 100 KB files: 12.8 MB/s from 2 to 8 jobs,
 * 16.5 at 64) a base of 4 measured at 14.8 on one sample sent a walk's
 * 64 (17.0, 1.14x of the plateau's level as measured) back to 2 for the
 * rest of the run, 85% of the best fixed limit; and a walk whose trial
 * at 128 was never filled (64 workers) went back to 4, where its 64 had
 * read 1.25x.
 *
 * Not where the CPUs saturated, nor from one job: a walk from one is a
 * start whose doubling to two hid its gain in the noise, and its far
 * end's gain is that doubling's (the throttled null_blk, flat from two
 * jobs: such far trials took 32 and stayed there), which the bracket
 * finds from one job by probing.
 */
static void iopa_ctl_br_far_keep(struct iopa_ctl *c,
				 const struct iopa_ctl_params *p,
				 const struct iopa_ctl_sample *s)
{
	u64 tput = iopa_ctl_br_mean(c);

	if (c->r_permille <= p->gain_permille || s->cpu_saturated ||
	    c->base < 2 || (c->br_far && c->br_far_tput >= tput))
		return;
	c->br_far = c->limit;
	c->br_far_at = c->base;
	c->br_far_n = c->br_n;
	c->br_far_tput = tput;
	c->br_far_var = iopa_ctl_br_mvar(c);
	c->br_far_walk = 0;
}

/* The highest limit of this start-up that read FAST's plateau. */
static u32 iopa_ctl_br_walk_top(const struct iopa_ctl *c)
{
	return c->br_leapt > c->limit ? c->br_leapt : c->limit;
}

/*
 * No walk goes past the limit: twice the plateau's top would pass
 * IOPA_CTL_BR_WALK_MAX times the base or the bounds.
 */
static bool iopa_ctl_br_walk_end(const struct iopa_ctl *c)
{
	u32 top = iopa_ctl_br_walk_top(c);
	u32 t = iopa_ctl_clamp(c, 2 * (u64)top);

	return t <= top || t > IOPA_CTL_BR_WALK_MAX * (u64)c->base;
}

/*
 * The walk's trial at the limit is its last (iopa_ctl_br_walk_judge()):
 * at its end, and judged on a device, not where the walk stopped for
 * saturated CPUs (what their jobs wait on is no device's far end), nor
 * from one job (a walk from one is a start whose doubling to two hid its
 * gain in the noise; on the throttled null_blk, flat from two jobs, a
 * last trial judged so took 32 and kept it in 5% of start-ups).
 */
static bool iopa_ctl_br_walk_last(const struct iopa_ctl *c,
				  const struct iopa_ctl_sample *s)
{
	return iopa_ctl_br_walk_end(c) && !s->cpu_saturated && c->base >= 2;
}

/*
 * FAST: the doubling at the limit (or a walk's trial past it) held the
 * base's throughput within the noise without paying for its jobs: a
 * plateau, and its far end may rise yet.  A disk that serves its tags in
 * order gains from more jobs only once they overflow its tags and the
 * elevator sorts them: the HDD model with 10 to 42 tags reads 10 KB
 * files at 2 to 32 jobs within 2% of each other, and 12-33% more at 64
 * (guest, bench matrix).  No doubling on the plateau pays, so the
 * start-up stopped on it.  Walk on to twice the limit, judged against
 * the base (iopa_ctl_br_walk_judge()), while the trials neither pay nor
 * lose, up to IOPA_CTL_BR_WALK_MAX times the base, the bounds, demand
 * (iopa_ctl_br_unfilled()) or saturated CPUs.  On a flat plateau the
 * walk costs no throughput; the first trial that reads less than the base
 * ends it, or holds it while the base is measured afresh
 * (iopa_ctl_br_walk_hold()).
 *
 * Not after a leap for jobs the device did not queue failed: a device
 * that queued none of its jobs up to the base has parallel paths, the
 * leap looked past the plateau already, and the walk would try its limit
 * again against a lower bar.  A rotational start's leap (from 2, on a
 * 2-job measurement) that neither paid nor lost stood on the plateau:
 * the walk goes on past it (br_leapt), not to it again.  Not after the
 * start-up's first doubling lost outright (a disk whose best is one job:
 * 1 MB files, 35% less at two); after a doubling that paid, a loss
 * is more likely a sample cut by a stall (the HDD model's 100 ms cycles
 * of 10 KB files read 25% apart), and the walk's first trial, judged
 * against the base's level alone, ends it if the loss was real.  A walk
 * past a leap whose limit the bounds cut to the trial's is none.
 *
 * Return: true if the walk goes on (the limit moved up).
 */
static bool iopa_ctl_br_walk_on(struct iopa_ctl *c,
				const struct iopa_ctl_params *p,
				const struct iopa_ctl_sample *s)
{
	u32 t = iopa_ctl_clamp(c, 2 * (u64)iopa_ctl_br_walk_top(c));
	bool lost = iopa_ctl_br_lost(c, p);

	if (c->br_walk == IOPA_CTL_BR_WALK_ON && !lost)
		iopa_ctl_br_far_keep(c, p, s);
	if (c->br_walk == IOPA_CTL_BR_WALK_DONE || c->br_restarted ||
	    (c->br_leap == IOPA_CTL_BR_LEAP_DONE && !c->br_leapt) ||
	    s->cpu_saturated || iopa_ctl_br_walk_end(c) ||
	    (lost && !c->br_streak))
		return false;
	/*
	 * The walk's reference is the plateau's level: the mean of the
	 * base's measurement and the doubling's, equally weighted (the
	 * variance of the mean of two); the base's alone if the doubling
	 * lost, so that a trial that reads as low ends the walk (or holds
	 * it, if it read as much as the doubling: iopa_ctl_br_walk_hold()).
	 */
	if (c->br_walk == IOPA_CTL_BR_WALK_NONE) {
		/* the doubling's measurement, for iopa_ctl_br_walk_hold() */
		c->br_walk_dbl = iopa_ctl_br_mean(c);
		c->br_walk_dbl_var = iopa_ctl_br_mvar(c);
		if (!lost) {
			c->br_ref = (c->br_ref + c->br_walk_dbl) / 2;
			c->br_ref_var = (c->br_ref_var +
					 c->br_walk_dbl_var) / 4;
		}
	}
	iopa_ctl_br_move(c, t);
	c->br_walk = IOPA_CTL_BR_WALK_ON;
	return true;
}

/*
 * FAST: the walk's trial at the limit lost against the base (SMALL), but
 * not against the walk's doubling (br_walk_dbl, by iopa_ctl_br_lost()'s
 * rule): the trial read as much as the doubling, and the loss may be the
 * base's, which FAST measured on one sample; one high sample makes a
 * plateau a decline.  The trial is held (br_far, br_far_walk) while
 * NORMAL measures the base afresh over history samples, and the walk
 * resumes past it if the base does not then read above it
 * (iopa_ctl_br_walk_resume()).  The guest's HDD model with 10 tags
 * reading 100 KB files (2 to 8 jobs alike, 64 1.31x): the base, 2,
 * measured 18% high once, its doubling to 4 lost against it, the walk's
 * 8 too (0.80x of the base, 0.94x of the doubling), and the start-up
 * stayed at 2 for the rest of the run, 75.5% of the best fixed limit.
 * Not where the CPUs saturated, nor from one job (as the far trial,
 * iopa_ctl_br_far_keep()), nor when a trial of the walk that read more
 * is kept already (it is judged instead), nor at the walk's last trial
 * (nothing past it to resume to); once a start-up (br_walk_dbl cleared
 * when the walk resumes).
 */
static void iopa_ctl_br_walk_hold(struct iopa_ctl *c,
				  const struct iopa_ctl_params *p,
				  const struct iopa_ctl_sample *s)
{
	u64 tput = iopa_ctl_br_mean(c);
	u32 r = iopa_ctl_ratio(tput, c->br_walk_dbl);
	u32 var = iopa_ctl_br_mvar(c);

	if (!c->br_walk_dbl || c->br_far || s->cpu_saturated ||
	    c->base < 2 || iopa_ctl_br_walk_end(c) ||
	    ((s64)r - 1000 < -iopa_ctl_br_z(c->br_walk_dbl_var + var) &&
	     r < p->decrease_permille))
		return;
	c->br_far = c->limit;
	c->br_far_at = c->base;
	c->br_far_n = c->br_n;
	c->br_far_tput = tput;
	c->br_far_var = var;
	c->br_far_walk = 1;
}

/*
 * NORMAL, the base measured afresh (the reference): a walk's trial held
 * (iopa_ctl_br_walk_hold()) did not lose against it (iopa_ctl_br_lost()'s
 * rule, the two measurements' noise): the walk resumes at twice the
 * trial, judged against this base, in FAST; else the loss was the
 * base's due and the search goes on from it.  Not past the bounds as
 * they are now, nor past the walk's reach (IOPA_CTL_BR_WALK_MAX times
 * the base), nor on saturated CPUs.
 *
 * Return: true if the walk resumed (the limit moved).
 */
static bool iopa_ctl_br_walk_resume(struct iopa_ctl *c,
				    const struct iopa_ctl_params *p,
				    const struct iopa_ctl_sample *s)
{
	u32 far = c->br_far, r = iopa_ctl_ratio(c->br_far_tput, c->br_ref);
	u32 t = iopa_ctl_clamp(c, 2 * (u64)far);
	s64 band = iopa_ctl_br_z(c->br_far_var + c->br_ref_var);

	c->br_far = 0;
	c->br_far_walk = 0;
	if (iopa_ctl_clamp(c, far) != far || far <= c->limit ||
	    s->cpu_saturated || t <= far ||
	    t > IOPA_CTL_BR_WALK_MAX * (u64)c->base ||
	    ((s64)r - 1000 < -band && r < p->decrease_permille))
		return false;
	c->mode = IOPA_CTL_MODE_FAST;
	iopa_ctl_br_move(c, t);
	c->br_walk = IOPA_CTL_BR_WALK_ON;
	c->br_walk_dbl = 0;
	return true;
}

/*
 * NORMAL: the base measured afresh over history samples (the
 * reference), with a walk's far trial kept (iopa_ctl_br_far_keep()).  If
 * the far trial's measurement read more than the base by a doubling's
 * need, beyond the noise of the two, it is tried again, as a probe up
 * judged afresh (iopa_ctl_br_far_retry_judge()): it was kept because it
 * read high, so its own samples lean to confirm it (chosen for their
 * noise), where new ones do not.  It costs a trial (in the simulator,
 * 0.03 points of the mean over the device sweep, tools/sim/devsweep.sh).
 * Not past the bounds as they are now (they may have changed since), nor
 * on saturated CPUs (iopa_ctl_br_next(): up by the finest step only).
 * Either way it is forgotten; the search that follows
 * goes down first, as after any walk that did not pay.  A walk's trial
 * held instead (br_far_walk) is judged by iopa_ctl_br_walk_resume().
 *
 * Return: true if the far trial is tried again, or the walk resumed (the
 * limit moved).
 */
static bool iopa_ctl_br_far_judge(struct iopa_ctl *c,
				  const struct iopa_ctl_params *p,
				  const struct iopa_ctl_sample *s)
{
	u32 far = c->br_far, r = iopa_ctl_ratio(c->br_far_tput, c->br_ref);
	s64 band = iopa_ctl_br_z(c->br_far_var + c->br_ref_var);

	if (c->br_far_walk)
		return iopa_ctl_br_walk_resume(c, p, s);
	c->br_far = 0;
	if (iopa_ctl_clamp(c, far) != far || far <= c->limit ||
	    s->cpu_saturated || (s64)r - (s64)p->gain_permille <= band)
		return false;
	c->mode = IOPA_CTL_MODE_PROBE;
	iopa_ctl_br_move(c, far);
	c->br_far_retry = 1;
	return true;
}

/*
 * PROBE: the far trial tried again (iopa_ctl_br_far_judge()), against
 * the base measured afresh: it pays (BIG) if it read more than the base
 * by a doubling's need beyond the noise, over two samples at least;
 * within the noise, measure again up to history samples; else, or then,
 * it loses (SMALL): a tie goes to fewer jobs.
 */
static enum iopa_ctl_br_verdict
iopa_ctl_br_far_retry_judge(struct iopa_ctl *c,
			    const struct iopa_ctl_params *p)
{
	u32 r = iopa_ctl_ratio(iopa_ctl_br_mean(c), c->br_ref);
	s64 band = iopa_ctl_br_band(c), x = (s64)r - (s64)p->gain_permille;

	c->r_permille = r;
	if (x > band)
		return c->br_n >= 2 ? IOPA_CTL_BR_BIG : IOPA_CTL_BR_WAIT;
	if (x < -band || c->br_n >= iopa_ctl_history(p))
		return IOPA_CTL_BR_SMALL;
	return IOPA_CTL_BR_WAIT;
}

static void iopa_ctl_br_fast(struct iopa_ctl *c,
			     const struct iopa_ctl_params *p,
			     const struct iopa_ctl_sample *s)
{
	enum iopa_ctl_br_verdict v;
	bool lean_big, unq;
	u32 from = c->base;

	if (c->limit == c->base) {
		/* The start limit measured: the reference for a doubling. */
		iopa_ctl_br_set_ref(c);
		/*
		 * A known knee's one-job probe first (iopa_ctl_set_known()),
		 * judged against a measurement of the knee: a cycle that
		 * completed nothing (slow jobs, a timer's end) is none.
		 */
		if (c->br_floor == 1 && !s->completions) {
			iopa_ctl_br_clear(c);
			return;
		}
		if (c->br_floor == 1) {
			u32 one = iopa_ctl_clamp(c, c->br_start);

			c->br_floor = 0;
			if (one < c->base && !iopa_ctl_br_hits(s) &&
			    !iopa_ctl_br_same_jobs(c, s)) {
				c->br_floor = 2;
				c->dir = -1;
				c->mode = IOPA_CTL_MODE_PROBE;
				iopa_ctl_br_move(c, one);
				return;
			}
		}
		iopa_ctl_br_double(c, p, s, false);
		return;
	}
	if (c->br_walk == IOPA_CTL_BR_WALK_ON) {
		v = iopa_ctl_br_walk_judge(c, p, iopa_ctl_br_walk_last(c, s));
		if (v == IOPA_CTL_BR_WAIT)
			return;
		if (v == IOPA_CTL_BR_BIG) {
			iopa_ctl_br_fast_won(c, p, s, false);
		} else if (v == IOPA_CTL_BR_SMALL) {
			iopa_ctl_br_walk_hold(c, p, s);
			iopa_ctl_br_fast_end(c, p, v, from);
		} else if (!iopa_ctl_br_walk_on(c, p, s)) {
			iopa_ctl_br_fast_end(c, p, v, from);
		}
		return;
	}
	v = iopa_ctl_br_judge(c, p, &lean_big);
	if (v == IOPA_CTL_BR_WAIT)
		return;
	unq = iopa_ctl_br_unqueued(c, from);
	/*
	 * A leap for jobs the device did not queue that paid, but whose
	 * jobs the device did queue: the knee lies between the base and
	 * the leap, and the doubling it skipped is judged against the base
	 * as any doubling; no more leaps in this start-up.
	 */
	if (c->br_leap == IOPA_CTL_BR_LEAP_UNQ && !unq &&
	    c->limit > 2 * (u64)from) {
		iopa_ctl_br_skipped(c, from);
		return;
	}
	if (v == IOPA_CTL_BR_BIG || (v == IOPA_CTL_BR_FLAT && lean_big)) {
		iopa_ctl_br_fast_won(c, p, s, unq);
		return;
	}
	/*
	 * A leap (iopa_ctl_br_double()) that did not pay 3x the need of a
	 * doubling: the doubling it skipped, against the same base.  A
	 * rotational start's leap (after the doubling from one paid: not
	 * the jump of cache hits, nor a leap for jobs the device did not
	 * queue) that did not lose either stood on a plateau a walk from
	 * that doubling would cross: the walk skips it
	 * (iopa_ctl_br_walk_on()).
	 */
	if (c->limit > 2 * (u64)from) {
		u32 t = c->limit;
		/* judged on the leap's measurement, before the move clears it */
		bool plateau = c->br_streak &&
			       c->br_leap != IOPA_CTL_BR_LEAP_UNQ &&
			       !iopa_ctl_br_lost(c, p);

		iopa_ctl_br_skipped(c, from);
		if (plateau)
			c->br_leapt = t;
		return;
	}
	/* The doubling did not pay: walk the plateau, or end here. */
	if (!iopa_ctl_br_walk_on(c, p, s))
		iopa_ctl_br_fast_end(c, p, v, from);
}

static void iopa_ctl_br_restart_from(struct iopa_ctl *c, u32 t);

static void iopa_ctl_br_probe(struct iopa_ctl *c,
			      const struct iopa_ctl_params *p,
			      const struct iopa_ctl_sample *s)
{
	enum iopa_ctl_br_verdict v;
	bool up = c->limit > c->base, lean_big, flat, came_down;
	u32 m;

	if (c->br_far_retry) {
		v = iopa_ctl_br_far_retry_judge(c, p);
		lean_big = false;
	} else {
		v = iopa_ctl_br_judge(c, p, &lean_big);
	}
	if (v == IOPA_CTL_BR_WAIT)
		return;
	c->br_far_retry = 0;
	/*
	 * A probe that the noise cannot tell from the base wins if the
	 * point estimate favours it: on a flat top the extra jobs do not pay
	 * (down wins), below a knee they do (up wins).
	 */
	flat = v == IOPA_CTL_BR_FLAT;
	/*
	 * A clear verdict settles an unsure move to the base (br_unsure)
	 * if it judged the side the base came from; a probe on the other
	 * side that loses outright says nothing of that move.  The guest's
	 * null_blk, 1 MB files at 0.6 ms: the search came down from 8 to
	 * 2 by ties, one job lost outright, and the run sat at 2 for its
	 * last 8 s where 4 read 10-15% more (90% of the best fixed limit).
	 */
	came_down = c->from > c->base;
	if (!flat && (!c->from || up == came_down))
		c->br_unsure = 0;
	if (flat)
		v = lean_big ? IOPA_CTL_BR_BIG : IOPA_CTL_BR_SMALL;
	/*
	 * The one-job probe of a known knee: one job won, the knee is
	 * another workload's: start up from there; else go on from the
	 * knee, doubling while a doubling pays.
	 */
	if (c->br_floor == 2) {
		c->br_floor = 0;
		if (v == IOPA_CTL_BR_SMALL) {
			iopa_ctl_br_restart_from(c, c->br_start);
			return;
		}
		/* The knee's measurement still stands: double from it now. */
		c->mode = IOPA_CTL_MODE_FAST;
		iopa_ctl_br_move(c, c->base);
		iopa_ctl_br_double(c, p, s, false);
		return;
	}
	if ((up && v == IOPA_CTL_BR_BIG) || (!up && v == IOPA_CTL_BR_SMALL)) {
		/*
		 * The probe won: it is the new base, its measurement the
		 * reference; probe on the same way with twice the step.
		 */
		c->from = c->base;
		c->base = c->limit;
		c->br_unsure = flat;
		c->rejected = 0;
		iopa_ctl_br_set_ref(c);
		c->reprobes = 0;
		if (c->br_streak < 255)
			c->br_streak++;
		c->step = 2 * c->step < c->base ? 2 * c->step : c->base;
		m = iopa_ctl_br_min_step(c->base);
		/* Saturated CPUs: up by the finest step only. */
		if (c->step < m || (up && s->cpu_saturated))
			c->step = m;
		c->tried = up ? IOPA_CTL_DOWN : IOPA_CTL_UP;
		iopa_ctl_br_next(c, p, s);
		return;
	}
	/* The probe lost: back to the base, with a step grown no further. */
	c->rejected = c->limit;
	if (c->br_streak)
		c->step = c->step / 2 > iopa_ctl_br_min_step(c->base) ?
			  c->step / 2 : iopa_ctl_br_min_step(c->base);
	c->br_streak = 0;
	c->mode = IOPA_CTL_MODE_NORMAL;
	iopa_ctl_br_move(c, c->base);
}

/*
 * The device or the load changed: start up again from @t (not below the
 * start limit or IOPA_CTL_BR_RESTART_MIN, whichever is lower, nor above
 * the base), doubling while a doubling pays:
 * from a quarter of the base after a level shift (iopa_ctl_br_restart()),
 * from the base or an eighth of it when a competitor came or went
 * (iopa_ctl_br_foreign()).  Where the knee went is unknown; doublings find it in log2 steps either
 * way, where probes a quarter of the base apart cross a plateau one pair
 * at a time (a disk whose best is one job, flat from two on).
 */
static void iopa_ctl_br_restart_from(struct iopa_ctl *c, u32 t)
{
	u32 floor = c->br_start < IOPA_CTL_BR_RESTART_MIN ? c->br_start :
		    IOPA_CTL_BR_RESTART_MIN;

	if (t < floor)
		t = floor;
	if (t > c->base)
		t = c->base;
	c->mode = IOPA_CTL_MODE_FAST;
	c->base = iopa_ctl_clamp(c, t);
	c->br_from = t;
	c->br_streak = 0;
	c->br_wide = 0;
	c->br_unsure = 0;
	c->br_restarted = 1;
	c->br_floor = 0;
	c->br_leap = IOPA_CTL_BR_LEAP_NONE;
	c->br_walk = IOPA_CTL_BR_WALK_NONE;
	c->br_leapt = 0;
	c->reprobes = 0;
	/* The knee searched for now is another load's: so are its jobs. */
	c->job_bytes = 0;
	c->job_n = 0;
	iopa_ctl_br_shift_clear(c);
	c->br_ref_at = 0;
	iopa_ctl_br_break(c);
	iopa_ctl_br_search(c, 1, 1);
	iopa_ctl_hist_clear(c);
	iopa_ctl_br_move(c, c->base);
}

static void iopa_ctl_br_restart(struct iopa_ctl *c)
{
	iopa_ctl_br_restart_from(c, c->base / 4);
}

/*
 * Others' reading of the device: a competitor that starts or stops moves
 * the knee (a disk whose best is one job alone wants many against fio,
 * to hold its share, and one again when fio is gone), often without a
 * level shift at the limit the controller is at (the model disk read
 * 1 MB files at 10 jobs as fast with fio as without: the controller
 * stayed at 10 after fio, where 1 reads 30% faster).  Others' share of
 * what the device read (@s->dev_tput less @s->tput), summed over a
 * window of at least IOPA_CTL_BR_SHIFT_MS (jobs are credited when they
 * end, the device as it reads: short cycles swing), transient cycles
 * included (others read whatever our limit), is BUSY or QUIET, or
 * neither; two windows in a row settle it, and a state that held two
 * windows more is one to leave.  QUIET is nearly nothing: a
 * competitor squeezed by many jobs of ours still has its share (fio at
 * depth 4 against 64 jobs: 15%).  A change of the settled state starts
 * up again: from the base when a competitor came (more jobs hold a
 * larger share), from an eighth of it, at least the start limit or
 * IOPA_CTL_BR_RESTART_MIN, whichever is lower, when it went (the knee
 * alone, below).
 *
 * Return: true if the controller started up again.
 */
static bool iopa_ctl_br_foreign(struct iopa_ctl *c,
				const struct iopa_ctl_sample *s)
{
	u32 share, state, old = c->br_foreign, held;
	u64 ms = s->elapsed_ms ? s->elapsed_ms : 1, sh;

	if (!s->dev_tput || !s->block_io)
		return false;
	/*
	 * Bytes of the cycle, back from the rates, summed over the window
	 * and compared once at its end: a cycle's edges swing both ways.
	 */
	c->br_fdev += div64_u64(s->dev_tput * ms, 1000);
	c->br_fours += div64_u64(s->tput * ms, 1000);
	c->br_fms += s->elapsed_ms;
	if (c->br_fms < IOPA_CTL_BR_SHIFT_MS || !c->br_fdev)
		return false;
	sh = c->br_fdev > c->br_fours ?
	     iopa_ctl_muldiv(c->br_fdev - c->br_fours, 1000, c->br_fdev) : 0;
	share = sh < 1000 ? (u32)sh : 1000;
	c->br_fours = 0;
	c->br_fdev = 0;
	c->br_fms = 0;
	if (share >= IOPA_CTL_BR_FOREIGN_BUSY)
		state = IOPA_CTL_FOREIGN_BUSY;
	else if (share <= IOPA_CTL_BR_FOREIGN_QUIET)
		state = IOPA_CTL_FOREIGN_QUIET;
	else
		state = IOPA_CTL_FOREIGN_UNKNOWN;
	/*
	 * Two windows in a row: more jobs in flight at a window's end than
	 * at its start (a ramp, larger files) read as others' bytes in one
	 * window, and the next gives them back.
	 */
	if (state != c->br_fpend) {
		c->br_fpend = state;
		return false;
	}
	if (state == IOPA_CTL_FOREIGN_UNKNOWN)
		return false;
	if (state == old) {
		if (c->br_fheld < IOPA_CTL_BR_FOREIGN_HELD)
			c->br_fheld++;
		return false;
	}
	held = c->br_fheld;
	c->br_foreign = state;
	c->br_fheld = 0;
	/*
	 * A state that did not hold is no level to leave: a submitter's
	 * bytes read as others' until it joins its device's group.
	 */
	if (held < IOPA_CTL_BR_FOREIGN_HELD)
		return false;
	/*
	 * In a start-up (FAST) a competitor that came changes nothing: the
	 * doublings go up anyway.  One that went sends a start-up that
	 * followed it (a restart) back down; the first start-up only notes
	 * it (its windows hold the cold start's metadata reads).
	 */
	if (old == IOPA_CTL_FOREIGN_UNKNOWN ||
	    (c->mode == IOPA_CTL_MODE_FAST &&
	     (state == IOPA_CTL_FOREIGN_BUSY || !c->br_restarted)))
		return false;
	/*
	 * A competitor came: more jobs hold a larger share, double from
	 * here.  It went: the device's own knee, below; an eighth of the
	 * base, at least min(start limit, IOPA_CTL_BR_RESTART_MIN) (a
	 * disk: 1).
	 */
	iopa_ctl_br_restart_from(c, state == IOPA_CTL_FOREIGN_BUSY ?
				 c->base : c->base / 8);
	return true;
}

/*
 * NORMAL: the base measured again after a probe that lost (after a
 * doubling, the reference is FAST's: no level).  Off its own earlier
 * measurement as STEADY's level shift is (IOPA_CTL_BR_SHIFT_Z standard
 * errors and 1000 - decrease_permille), twice in a row the same way and
 * for IOPA_CTL_BR_SHIFT_MS (iopa_ctl_br_shift_lasts()), the device or the
 * load changed in the meantime (a competitor came or went,
 * the files changed): a search that goes on would cross the new curve a
 * quarter of the base at a time, so start up again
 * (iopa_ctl_br_restart()).  Once off: measure the base afresh.
 *
 * Return: true if the sample was taken here (no probe to start).
 */
static bool iopa_ctl_br_base_shifted(struct iopa_ctl *c,
				     const struct iopa_ctl_params *p,
				     const struct iopa_ctl_sample *s)
{
	u32 r, off, thr;

	if (!c->br_ref || c->br_ref_at != c->limit) {
		iopa_ctl_br_shift_clear(c);
		return false;
	}
	r = iopa_ctl_ratio(iopa_ctl_br_mean(c), c->br_ref);
	off = r > 1000 ? r - 1000 : 1000 - r;
	thr = (u32)div64_u64((u64)IOPA_CTL_BR_SHIFT_Z *
			     iopa_ctl_isqrt(c->br_ref_var +
					    iopa_ctl_br_mvar(c)), 1000);
	if (thr < 1000 - p->decrease_permille)
		thr = 1000 - p->decrease_permille;
	if (off <= thr) {
		iopa_ctl_br_shift_clear(c);
		return false;
	}
	if (!iopa_ctl_br_shift_lasts(c, r, s->elapsed_ms)) {
		iopa_ctl_br_clear(c);
		return true;
	}
	iopa_ctl_br_restart(c);
	return true;
}

/*
 * STEADY: watch the level at the base.  Two samples in a row off the
 * reference level by more than IOPA_CTL_BR_SHIFT_Z standard errors (and
 * by more than 1000 - decrease_permille), lasting IOPA_CTL_BR_SHIFT_MS
 * (iopa_ctl_br_shift_lasts()), mean the device or the load changed:
 * start up again (iopa_ctl_br_restart()).  Otherwise probe once after
 * reprobe_ms, or after IOPA_CTL_BR_REPROBE_CYCLES samples if the move
 * to the base was within the noise (br_unsure), waiting twice as long
 * after each probe that changed nothing.
 */
static void iopa_ctl_br_watch(struct iopa_ctl *c,
			      const struct iopa_ctl_params *p,
			      const struct iopa_ctl_sample *s, u32 var)
{
	u64 ref = iopa_ctl_hist_mean(c, IOPA_CTL_HIST_MAX);
	u32 r = iopa_ctl_ratio(s->tput, ref);
	u32 off = r > 1000 ? r - 1000 : 1000 - r;
	u32 thr = (u32)div64_u64((u64)IOPA_CTL_BR_SHIFT_Z *
				 iopa_ctl_isqrt(var), 1000);

	if (thr < 1000 - p->decrease_permille)
		thr = 1000 - p->decrease_permille;
	if (ref && off > thr) {
		if (iopa_ctl_br_shift_lasts(c, r, s->elapsed_ms))
			iopa_ctl_br_restart(c);
		return;
	}
	c->r_permille = r;
	iopa_ctl_br_shift_clear(c);
	iopa_ctl_hist_push(c, s->tput);
	c->steady_ms += s->elapsed_ms;
	if (c->br_steady_n < 255)
		c->br_steady_n++;
	if (c->steady_ms < c->reprobe_ms &&
	    !(c->br_unsure &&
	      c->br_steady_n >= IOPA_CTL_BR_REPROBE_CYCLES << c->reprobes))
		return;
	if (c->reprobes < IOPA_CTL_BR_REPROBE_MAX_SHIFT)
		c->reprobes++;
	iopa_ctl_br_search(c, 1, c->reprobe_dir ? -1 : 1);
	c->reprobe_dir = !c->reprobe_dir;
	/* This sample is the base's measurement. */
	c->br_sum = s->tput;
	c->br_var = var;
	c->br_n = 1;
	c->br_svc = s->svc_us;
	c->br_done = s->completions;
	iopa_ctl_br_set_ref(c);
	c->mode = IOPA_CTL_MODE_NORMAL;
	iopa_ctl_br_next(c, p, s);
}

static void iopa_ctl_br_update(struct iopa_ctl *c,
			       const struct iopa_ctl_params *p,
			       const struct iopa_ctl_sample *s)
{
	u32 own = iopa_ctl_br_var(s, c->limit), at = c->limit;
	u32 var = iopa_ctl_br_scale(c, own);
	u8 gen = c->br_gen;

	if (iopa_ctl_br_foreign(c, s))
		return;
	if (c->br_settle) {
		/* Transient: jobs of the old limit were still running. */
		c->br_settle = 0;
		c->r_permille = 1000;
		return;
	}
	/* A far trial kept is judged in NORMAL, at its base, or never. */
	if (c->mode == IOPA_CTL_MODE_NORMAL ? c->limit != c->br_far_at :
	    c->br_walk != IOPA_CTL_BR_WALK_ON)
		c->br_far = 0;
	if (c->mode == IOPA_CTL_MODE_STEADY) {
		iopa_ctl_br_watch(c, p, s, var);
		iopa_ctl_br_learn(c, s, own, at,
				  !c->shifted && gen == c->br_gen);
		return;
	}
	if (c->br_n < 255) {
		c->br_sum += s->tput;
		c->br_var += var;
		c->br_n++;
		if (c->br_done <= ~0U - s->completions &&
		    c->br_svc <= ~0ULL - s->svc_us) {
			c->br_svc += s->svc_us;
			c->br_done += s->completions;
		}
	}
	switch (c->mode) {
	case IOPA_CTL_MODE_FAST:
		iopa_ctl_br_fast(c, p, s);
		break;
	case IOPA_CTL_MODE_NORMAL:
		/* The base measured: probe next to it. */
		if (iopa_ctl_br_base_shifted(c, p, s))
			break;
		/* A far trial kept: the base over history samples first. */
		if (c->br_far && c->br_n < iopa_ctl_history(p))
			break;
		c->r_permille = 1000;
		iopa_ctl_br_set_ref(c);
		if (c->br_far && iopa_ctl_br_far_judge(c, p, s))
			break;
		iopa_ctl_br_next(c, p, s);
		break;
	case IOPA_CTL_MODE_PROBE:
		iopa_ctl_br_probe(c, p, s);
		break;
	default:
		break;
	}
	iopa_ctl_br_learn(c, s, own, at, !c->shifted && gen == c->br_gen);
}

/* ---- interface ----------------------------------------------------------- */

/*
 * Adapt afresh from the current limit: iopa from FAST (in NORMAL it would
 * only follow a throughput trend, and there is none at a constant limit),
 * hillclimb by probing around it.
 */
static void iopa_ctl_resume(struct iopa_ctl *c)
{
	/*
	 * A known knee's one-job probe cut short (no demand, a cached
	 * cycle, new bounds): its start-up goes on from the knee.
	 */
	if (c->br_floor == 2 && c->policy == IOPA_CTL_POLICY_BRACKET) {
		c->br_floor = 0;
		c->mode = IOPA_CTL_MODE_FAST;
		c->base = iopa_ctl_clamp(c, c->base);
		iopa_ctl_br_move(c, c->base);
		c->br_ref_at = 0;
		return;
	}
	iopa_ctl_hist_clear(c);
	c->br_floor = 0;
	c->br_far = 0;
	c->nr_trial = 0;
	c->hold_ms = 0;
	c->mode = c->policy == IOPA_CTL_POLICY_IOPA ? IOPA_CTL_MODE_FAST :
		  IOPA_CTL_MODE_NORMAL;
	iopa_ctl_hc_search(c, c->limit / 4, 1);
	iopa_ctl_hc_reprobe_reset(c);
	iopa_ctl_br_search(c, c->limit / 4, 1);
	iopa_ctl_br_move(c, c->limit);
	c->br_settle = 0;
	c->br_ref_at = 0;
	iopa_ctl_br_break(c);
}

/*
 * FAST's walk went on to a trial (@unfilled) its submitters cannot fill
 * (iopa_ctl_br_unfilled()): the best trial it kept (iopa_ctl_br_far_keep())
 * is its last, and is taken if it pays as a last trial does
 * (iopa_ctl_br_walk_judge()): a doubling's need beyond the noise, against
 * the walk's reference, over two samples at least.  Then it is the base,
 * and the bracket searches around it, down first.  On the guest's HDD
 * model (42 tags, 10 KB files) with 64 workers, the walk's 64 read 1.24x
 * of the plateau and its 128 could not be filled; back at the base, the
 * far trial's verdict against it measured afresh was within the noise of
 * 10 KB samples, and the run stayed at 5 jobs: 86% of the best fixed
 * limit.
 *
 * Return: true if the kept trial was taken (the limit moved to it).
 */
static bool iopa_ctl_br_far_last(struct iopa_ctl *c,
				 const struct iopa_ctl_params *p, u32 unfilled)
{
	u32 far = c->br_far, r = iopa_ctl_ratio(c->br_far_tput, c->br_ref);

	if (!far || c->br_far_at != c->base || c->br_far_n < 2 ||
	    (s64)r - (s64)p->gain_permille <=
	    iopa_ctl_br_z(c->br_far_var + c->br_ref_var))
		return false;
	c->br_far = 0;
	c->r_permille = r;
	c->base = far;
	c->br_ref = c->br_far_tput;
	c->br_ref_var = c->br_far_var;
	c->br_ref_svc = 0;
	c->br_ref_at = 0;
	c->mode = IOPA_CTL_MODE_NORMAL;
	iopa_ctl_br_search(c, far / 4, -1);
	c->rejected = unfilled;
	iopa_ctl_br_move(c, far);
	return true;
}

/*
 * bracket: nothing waited on a limit above the base (a doubling or a
 * probe up): the submitter has no more jobs to run at once (fewer
 * workers, or a shorter backlog, than the limit), so that limit is
 * worth nothing.  After a probe, the side up lost: back to the base and
 * probe the other side.  After a doubling, the submitter may still fill
 * a limit between the base and the doubling: bracket the base, up
 * first.  Either way the limit is not tried again in this search.
 * Dropping the trial and probing around the base afresh (as for a trial
 * without demand below the base) probed up again every other cycle: the
 * demo's 32 workers at limit 32 alternated 32 and 36 to the end.  After
 * a leap (4x), the doubling it skipped first, in FAST as any doubling.
 * A walk's trial (iopa_ctl_br_walk_on()) ends the walk: the base is
 * bracketed as after a doubling that did not pay.
 */
static void iopa_ctl_br_unfilled(struct iopa_ctl *c,
				 const struct iopa_ctl_params *p)
{
	u32 from = c->base;

	if (c->br_walk == IOPA_CTL_BR_WALK_ON) {
		u32 t = c->limit;

		if (iopa_ctl_br_far_last(c, p, t))
			return;
		iopa_ctl_br_fast_end(c, p, IOPA_CTL_BR_FLAT, from);
		c->rejected = t;
		return;
	}
	if (c->mode == IOPA_CTL_MODE_FAST && c->limit > 2 * (u64)from) {
		iopa_ctl_br_skipped(c, from);
		return;
	}
	if (c->mode == IOPA_CTL_MODE_FAST)
		iopa_ctl_br_search(c, from / 4, 1);
	c->rejected = c->limit;
	c->br_streak = 0;
	c->mode = IOPA_CTL_MODE_NORMAL;
	iopa_ctl_br_move(c, from);
}

/* The policy probes trial limits around a base (which a trial is not). */
static bool iopa_ctl_probes(const struct iopa_ctl *c)
{
	return c->policy == IOPA_CTL_POLICY_HILLCLIMB ||
	       c->policy == IOPA_CTL_POLICY_BRACKET;
}

/*
 * The sample is not comparable with the ones before (cache hits; the
 * module now measures jobs instead of bytes, or bytes again): forget
 * what was measured, give up a trial, and measure the base afresh.
 */
static void iopa_ctl_unit_change(struct iopa_ctl *c)
{
	iopa_ctl_hist_clear(c);
	c->nr_trial = 0;
	/* a far trial kept was measured in the other unit */
	c->br_far = 0;
	if (c->mode == IOPA_CTL_MODE_HOLD)
		return;
	if (iopa_ctl_probes(c) && c->limit != c->base) {
		c->limit = c->base;
		if (c->mode != IOPA_CTL_MODE_FAST)
			iopa_ctl_resume(c);
	}
	if (c->policy == IOPA_CTL_POLICY_BRACKET) {
		c->br_settle = 0;
		/* the reference is in the other unit, and so is br_prev */
		c->br_ref_at = 0;
		iopa_ctl_br_break(c);
		iopa_ctl_br_move(c, c->limit);
	}
}

/**
 * iopa_ctl_init() - set up a controller
 * @c: the controller, any contents
 * @p: the tunables (valid: iopa_ctl_params_check())
 * @pol: the policy; an unknown value means IOPA_CTL_POLICY_IOPA
 *
 * The limit starts at @p->init_limit (or the policy's own: 30% of the
 * CPUs, bracket IOPA_CTL_BR_INIT_LIMIT) in mode FAST.
 */
void iopa_ctl_init(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		   enum iopa_ctl_policy pol)
{
	*c = (struct iopa_ctl){ };
	c->policy = (unsigned int)pol < IOPA_CTL_NR_POLICIES ? pol :
		    IOPA_CTL_POLICY_IOPA;
	c->ceiling = p->max_limit;
	c->min_cycle_ms = p->min_cycle_ms ? p->min_cycle_ms :
			  IOPA_CTL_MIN_CYCLE_MS;
	if (p->init_limit)
		c->limit = iopa_ctl_clamp(c, p->init_limit);
	else if (c->policy == IOPA_CTL_POLICY_BRACKET)
		c->limit = iopa_ctl_clamp(c, IOPA_CTL_BR_INIT_LIMIT);
	else
		c->limit = iopa_ctl_clamp(c, iopa_ctl_cpu_pct(p->ncpus, 30));
	c->mode = IOPA_CTL_MODE_FAST;
	c->base = c->limit;
	/*
	 * bracket's start, whatever the policy (it may be switched to); as
	 * asked, the bounds and max_limit applied where it is used
	 */
	c->br_start = p->init_limit ? p->init_limit : IOPA_CTL_BR_INIT_LIMIT;
	c->br_from = c->br_start;
	c->step = 1;
	c->dir = 1;
	/*
	 * bracket: the first cycle is transient too.  Its jobs wait on
	 * the first reads of their directories and inodes (cold caches,
	 * an empty pipeline), which would make the start limit look worse
	 * than it is and its first doubling a gain.
	 */
	c->br_settle = c->policy == IOPA_CTL_POLICY_BRACKET ?
		       IOPA_CTL_BR_SETTLE_FULL : 0;
	c->br_xf = 1000;
	iopa_ctl_hc_reprobe_reset(c);
}

/*
 * Bracket's start-up has measured nothing yet at its base (FAST, the
 * limit at the base, no sample at it, no doubling won).
 */
static bool iopa_ctl_br_fresh(const struct iopa_ctl *c)
{
	return c->policy == IOPA_CTL_POLICY_BRACKET &&
	       c->mode == IOPA_CTL_MODE_FAST && c->limit == c->base &&
	       !c->br_n && !c->br_streak;
}

/* ... from the start limit: no known knee, no restart. */
static bool iopa_ctl_br_at_start(const struct iopa_ctl *c)
{
	return iopa_ctl_br_fresh(c) && !c->br_restarted &&
	       c->br_from == c->br_start &&
	       c->base == iopa_ctl_clamp(c, c->br_start);
}

/*
 * The bounds or max_limit changed under a start-up that has measured
 * nothing yet (@fresh, @from: its base was where it began, within the
 * old bounds): it stays to come, from where it began (a start limit, a
 * known knee, a restart's) brought within the new ones, else from its
 * base brought within them.  Return: false if not @fresh.
 */
static bool iopa_ctl_br_rebound(struct iopa_ctl *c, bool fresh, bool from)
{
	u32 b;

	if (!fresh)
		return false;
	b = iopa_ctl_clamp(c, from ? c->br_from : c->base);
	if (b != c->base) {
		c->base = b;
		iopa_ctl_br_move(c, b);
	}
	return true;
}

/* The start-up is fresh and at where it began (iopa_ctl_br_rebound()). */
static bool iopa_ctl_br_at_from(const struct iopa_ctl *c)
{
	return iopa_ctl_br_fresh(c) &&
	       c->base == iopa_ctl_clamp(c, c->br_from);
}

/**
 * iopa_ctl_set_start() - the start limit for the device the jobs use
 * @c: the controller
 * @p: the tunables
 * @limit: the start limit (1 for a rotational disk, see 5. above)
 *
 * Only when init_limit is 0 (an operator's start wins).  Under bracket,
 * before the start limit has been measured, the limit moves to @limit at
 * once; after, and under the other policies, @limit is only kept as the
 * lowest a restart after a level shift begins at (should the controller
 * be switched to bracket).
 *
 * Return: true if the limit changed.
 */
bool iopa_ctl_set_start(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			u32 limit)
{
	u32 old = c->limit;

	if (p->init_limit || !limit)
		return false;
	if (limit > IOPA_CTL_LIMIT_MAX)
		limit = IOPA_CTL_LIMIT_MAX;
	if (iopa_ctl_br_at_start(c)) {
		c->base = iopa_ctl_clamp(c, limit);
		c->br_from = limit;
		/* Still the first cycle's transient (iopa_ctl_init()). */
		iopa_ctl_br_move(c, c->base);
	}
	c->br_start = limit;
	return c->limit != old;
}

/**
 * iopa_ctl_set_known() - start from a limit known to be the device's knee
 * @c: the controller
 * @p: the tunables
 * @knee: the budget at which the device stopped paying for more jobs, as
 *	remembered (kernel/knee.c) or set by an operator
 * @job_kb: the size of a job, KiB, of the workload it was found with (0:
 *	not known)
 *
 * Bracket only, before the start limit has been measured, when init_limit
 * is 0 (an operator's start wins) and the knee is not the start limit:
 * the start-up begins at the knee instead of the start limit (above it
 * or below: a shallow device's knee below the start of 8), doubling
 * while a doubling pays, so a knee too low (one learned in noise, or of
 * another workload) is left in log2 steps, and one that holds costs a
 * doubling undone.
 *
 * On a disk that says it is rotational (iopa_ctl_set_start() made the
 * start limit 1 first) one job is probed first, once: a knee learned
 * from another workload (small files, where 4 jobs pay) is far too high
 * for one that thrashes (large files read in turns: flat from 2 jobs up,
 * 1 a third better), and nothing crosses that plateau from above; if 1
 * wins, the start-up runs from 1 as without a knee.  Not when the first
 * measurement at the knee shows jobs of about the size (within 4x) of
 * @job_kb, those the knee was found with: the same workload again (a
 * tool run once more), whose knee it is, and the probe would cost it a
 * cycle or two at one job; nor when it shows jobs that read nothing from
 * the disk (page-cache hits: no seeks to fear).
 *
 * Return: true if the start changed.
 */
bool iopa_ctl_set_known(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			u32 knee, u32 job_kb)
{
	/*
	 * On a "rotational" disk a knee of 2 saves one doubling and costs
	 * the one-job probe (iopa-sim: worse on every model): no start from
	 * it unless the size of its jobs is known, so that the same
	 * workload skips the probe.
	 */
	if (p->init_limit || !knee ||
	    (c->br_start == 1 && iopa_ctl_clamp(c, knee) <= 2 && !job_kb) ||
	    !iopa_ctl_br_at_start(c))
		return false;
	/*
	 * Where the start-up begins, as asked: bounds that cut it now (the
	 * start's clamp may be the knee's) give it back when lifted.
	 */
	c->br_from = knee;
	c->br_known_kb = job_kb;
	c->br_floor = c->br_start == 1 && iopa_ctl_clamp(c, knee) > 1;
	if (iopa_ctl_clamp(c, knee) == c->base)
		return false;
	c->base = iopa_ctl_clamp(c, knee);
	iopa_ctl_br_move(c, c->base);
	/* Still the first cycle's transient, whatever ran before. */
	c->br_settle = IOPA_CTL_BR_SETTLE_FULL;
	return true;
}

/**
 * iopa_ctl_lift_start() - a rotational start of 1 lifted for cache hits
 * @c: the controller
 * @p: the tunables
 *
 * For a caller that learns, before the first measurement, that the jobs
 * read nothing from the disk (the in-process pool: its first jobs were
 * page-cache hits): the start-up begins where it would on a disk that
 * is not rotational, at a known knee (iopa_ctl_set_known()), not probed
 * at one job, or at the default start, as the start's first measurement
 * of such jobs does (see 5. above).  Not undone if later jobs read the
 * disk: the search then finds their knee from there.  Bracket only,
 * before anything was measured, from a start below the default, when
 * init_limit is 0.
 *
 * Return: true if the limit changed.
 */
bool iopa_ctl_lift_start(struct iopa_ctl *c, const struct iopa_ctl_params *p)
{
	u32 t, old = c->limit;

	if (p->init_limit || !iopa_ctl_br_fresh(c) || c->br_restarted ||
	    c->br_start >= IOPA_CTL_BR_INIT_LIMIT)
		return false;
	/* a known knee is where the start-up began; else the default */
	t = c->br_from != c->br_start ? c->br_from : IOPA_CTL_BR_INIT_LIMIT;
	c->br_from = t;
	c->br_floor = 0;
	c->base = iopa_ctl_clamp(c, t);
	iopa_ctl_br_move(c, c->base);
	/* Still the first cycle's transient. */
	c->br_settle = IOPA_CTL_BR_SETTLE_FULL;
	return c->limit != old;
}

/**
 * iopa_ctl_settled_knee() - a knee worth remembering for the device
 * @c: a device group's controller
 *
 * The search ended (STEADY, bracket) and no competitor was reading the
 * device when it did: the base is the device's knee for this workload
 * alone.
 *
 * Return: that knee, or 0.
 */
u32 iopa_ctl_settled_knee(const struct iopa_ctl *c)
{
	if (c->policy != IOPA_CTL_POLICY_BRACKET ||
	    c->mode != IOPA_CTL_MODE_STEADY ||
	    c->br_foreign == IOPA_CTL_FOREIGN_BUSY)
		return 0;
	return c->base;
}

/**
 * iopa_ctl_left_knee() - what a device group leaves of its device's knee
 * @c: a device group's controller, its last member leaving
 *
 * The knee it settled at (iopa_ctl_settled_knee()); else, with no
 * competitor reading the device, the base its search had reached: the
 * largest limit its doublings and probes found paying, which the knee
 * is not below.  A next start there doubles on while a doubling pays
 * (iopa_ctl_set_known()), so a base short of the knee costs a doubling
 * or two, not the ramp from the start; a short run's group (seconds)
 * leaves one, where a settled knee needs a search that ended.
 *
 * Return: that knee, or 0 (not bracket, pinned, or the device busy).
 */
u32 iopa_ctl_left_knee(const struct iopa_ctl *c)
{
	u32 knee = iopa_ctl_settled_knee(c);

	if (knee)
		return knee;
	if (c->policy != IOPA_CTL_POLICY_BRACKET ||
	    c->mode == IOPA_CTL_MODE_FIXED ||
	    c->br_foreign == IOPA_CTL_FOREIGN_BUSY)
		return 0;
	return c->base;
}

/**
 * iopa_ctl_job_kb() - the size of the jobs measured so far
 * @c: the controller
 *
 * Over the cycles measured (not those of cache hits) since the start or
 * the bracket search's last restart (the load changed: the knee searched
 * for since is the new load's), what the jobs read from the device a
 * job, to be remembered with a knee
 * (iopa_ctl_set_known()).
 *
 * Return: KiB a job, 1..IOPA_CTL_JOB_KB_MAX if the jobs read anything; 0
 * if none did.
 */
u32 iopa_ctl_job_kb(const struct iopa_ctl *c)
{
	u64 kb;

	if (!c->job_n || !c->job_bytes)
		return 0;
	kb = div64_u64(c->job_bytes, c->job_n * 1024);
	if (!kb)
		return 1;
	return kb < IOPA_CTL_JOB_KB_MAX ? (u32)kb : IOPA_CTL_JOB_KB_MAX;
}

/**
 * iopa_ctl_set_policy() - switch policy, keeping the limit
 * @c: the controller
 * @pol: the new policy; an unknown value is ignored
 *
 * The new policy adapts from the current limit: iopa in mode FAST,
 * hillclimb in mode NORMAL.  A fixed controller stays fixed and uses
 * @pol once unfrozen.
 */
void iopa_ctl_set_policy(struct iopa_ctl *c, enum iopa_ctl_policy pol)
{
	if ((unsigned int)pol >= IOPA_CTL_NR_POLICIES || pol == c->policy)
		return;
	/* A trial is not a limit to keep. */
	if (iopa_ctl_probes(c) && c->mode != IOPA_CTL_MODE_FIXED)
		c->limit = c->base;
	c->policy = pol;
	if (c->mode != IOPA_CTL_MODE_FIXED)
		iopa_ctl_resume(c);
}

/**
 * iopa_ctl_set_bounds() - set the per-submitter bounds
 * @c: the controller
 * @p: the tunables
 * @min: lowest limit, 0 for 1
 * @max: highest limit, 0 for no bound below @p->max_limit
 *
 * An adapting limit is clamped at once; a hillclimb trial the new
 * bounds cut is abandoned; a fixed limit is not touched (the bounds
 * apply once it adapts again).  @p->max_limit wins over a @min above it.
 * A bracket start-up that has measured nothing yet stays to come, from
 * within the bounds; the start limit is not rewritten (bounds lifted
 * before the first measurement give it back).
 *
 * Return: 0, or -EINVAL if @min > @max (both set) or either exceeds
 * IOPA_CTL_LIMIT_MAX.
 */
int iopa_ctl_set_bounds(struct iopa_ctl *c, const struct iopa_ctl_params *p,
			u32 min, u32 max)
{
	bool fresh, from;

	if (min > IOPA_CTL_LIMIT_MAX || max > IOPA_CTL_LIMIT_MAX ||
	    (min && max && min > max))
		return -EINVAL;
	fresh = iopa_ctl_br_fresh(c);
	from = iopa_ctl_br_at_from(c);
	c->min = min;
	c->max = max;
	c->ceiling = p->max_limit;
	/*
	 * Bracket before its start-up measured anything: the start-up stays
	 * to come, from within the bounds (bounds lifted give back where it
	 * began, and a device group copying a member's bounded start lifts
	 * them).  Where it began is not rewritten: the bounds may be a
	 * moment's.
	 */
	if (iopa_ctl_br_rebound(c, fresh, from))
		return 0;
	if (iopa_ctl_probes(c) && c->mode != IOPA_CTL_MODE_FIXED &&
	    (iopa_ctl_clamp(c, c->limit) != c->limit ||
	     iopa_ctl_clamp(c, c->base) != c->base)) {
		c->limit = iopa_ctl_clamp(c, c->base);
		iopa_ctl_resume(c);
	}
	if (c->mode != IOPA_CTL_MODE_FIXED)
		c->limit = iopa_ctl_clamp(c, c->limit);
	return 0;
}

/**
 * iopa_ctl_more_sharers() - more streams now share what the limit sizes
 * @c: the controller (a device group's budget)
 *
 * A device read by more submitters at once is another device: each
 * reads its own files, so the requests of more streams interleave and
 * the device's knee moves up (two tenants reading 100 KB files from the
 * model disk read 8% more at 4 + 4 jobs than at the 1 + 1 the lone
 * tenant's knee of 2 left them, and probes a step apart could not show
 * it).  Bracket: start up again from the base, doubling while a doubling
 * pays, as when a competitor came.  Nothing in a start-up (it doubles
 * anyway), for a fixed limit or for the other policies.
 *
 * Return: true if the controller started up again.
 */
bool iopa_ctl_more_sharers(struct iopa_ctl *c)
{
	/* More streams: no one-job probe of a lone member's knee. */
	if (c->br_floor == 1)
		c->br_floor = 0;
	if (c->policy != IOPA_CTL_POLICY_BRACKET ||
	    c->mode == IOPA_CTL_MODE_FIXED || c->mode == IOPA_CTL_MODE_FAST)
		return false;
	iopa_ctl_br_restart_from(c, c->base);
	return true;
}

/**
 * iopa_ctl_set_fixed() - freeze or unfreeze the limit
 * @c: the controller
 * @limit: the fixed limit, or 0 to resume adapting from the current
 *	limit brought into the bounds (iopa: in mode FAST, hillclimb: in
 *	mode NORMAL)
 *
 * Like seed 001's dynamic threads, which froze the thread count when
 * the program set one itself.  The program's count holds as given (up
 * to IOPA_CTL_LIMIT_MAX): the bounds and max_limit govern adaptation.
 */
void iopa_ctl_set_fixed(struct iopa_ctl *c, u32 limit)
{
	if (limit) {
		c->limit = limit < IOPA_CTL_LIMIT_MAX ? limit :
			   IOPA_CTL_LIMIT_MAX;
		c->base = c->limit;
		c->nr_trial = 0;
		c->mode = IOPA_CTL_MODE_FIXED;
		return;
	}
	if (c->mode == IOPA_CTL_MODE_FIXED) {
		c->limit = iopa_ctl_clamp(c, c->limit);
		c->base = c->limit;
		iopa_ctl_resume(c);
	}
}

/**
 * iopa_ctl_limit() - the limit in force
 * @c: the controller
 *
 * Return: how many of the submitter's jobs may run at once.
 */
u32 iopa_ctl_limit(const struct iopa_ctl *c)
{
	return c->limit;
}

/**
 * iopa_ctl_knee() - the best limit the controller has found so far
 * @c: the controller
 *
 * hillclimb and bracket: the base they probe around, once start-up has
 * ended (the knee of the throughput curve, as far as they know it).
 *
 * Return: that limit, or 0 in start-up (FAST), when pinned (FIXED), and
 * under the iopa policy, which keeps no such limit.
 */
u32 iopa_ctl_knee(const struct iopa_ctl *c)
{
	if (c->policy == IOPA_CTL_POLICY_IOPA ||
	    c->mode == IOPA_CTL_MODE_FAST || c->mode == IOPA_CTL_MODE_FIXED)
		return 0;
	return c->base;
}

/**
 * iopa_ctl_mode() - the controller's mode
 * @c: the controller
 *
 * Return: the enum iopa_ctl_mode of the cycle now running.
 */
enum iopa_ctl_mode iopa_ctl_mode(const struct iopa_ctl *c)
{
	return c->mode;
}

/**
 * iopa_ctl_policy() - the controller's policy
 * @c: the controller
 *
 * Return: its enum iopa_ctl_policy.
 */
enum iopa_ctl_policy iopa_ctl_policy(const struct iopa_ctl *c)
{
	return c->policy;
}

/**
 * iopa_ctl_next_cycle_ms() - length of the cycle now starting
 * @c: the controller
 * @p: the tunables
 *
 * Return: @p->fast_cycle_ms in FAST mode, the rest of the hold time in
 * HOLD, else @p->normal_cycle_ms.
 */
u32 iopa_ctl_next_cycle_ms(const struct iopa_ctl *c,
			   const struct iopa_ctl_params *p)
{
	switch (c->mode) {
	case IOPA_CTL_MODE_FAST:
		return p->fast_cycle_ms;
	case IOPA_CTL_MODE_HOLD:
		return c->hold_ms ? c->hold_ms : p->hold_cycle_ms;
	default:
		return p->normal_cycle_ms;
	}
}

/**
 * iopa_ctl_sample_noise() - standard error of a sample, as the policy sees it
 * @c: the controller the sample is for
 * @s: the sample
 * @limit: the limit it ran at
 *
 * Return: the relative standard error of @s->tput, per mille, from the
 * number of completions and the spread of their service times (see
 * iopa_ctl_br_var()), at least the floor the bracket policy assumes,
 * under the bracket policy times what the spread of @c's samples so far
 * showed of that estimate (iopa_ctl_br_learn(); 1 until then).
 */
u32 iopa_ctl_sample_noise(const struct iopa_ctl *c,
			  const struct iopa_ctl_sample *s, u32 limit)
{
	u32 v = iopa_ctl_br_var(s, limit);

	if (c->policy == IOPA_CTL_POLICY_BRACKET)
		v = iopa_ctl_br_scale(c, v);
	return iopa_ctl_isqrt(v);
}

/**
 * iopa_ctl_cycle_enough() - may the cycle under way end already?
 * @c: the controller
 * @elapsed_ms: time since the cycle began
 * @completions: jobs completed since then
 * @svc_us: sum of their service times, microseconds
 *
 * The bracket policy ends a cycle once it holds enough evidence (see 5.
 * above); iopa_ctl_next_cycle_ms() is then only its upper bound.  The
 * other policies run cycles of fixed length.
 *
 * Return: true if the caller may end the cycle now.
 */
bool iopa_ctl_cycle_enough(const struct iopa_ctl *c, u32 elapsed_ms,
			   u32 completions, u64 svc_us)
{
	u32 need, spans, min_ms;

	iopa_ctl_cycle_need(c, &need, &spans, &min_ms);
	if (!need || elapsed_ms < min_ms || !completions)
		return false;
	return completions >= need &&
	       (u64)elapsed_ms * 1000 >= spans * div64_u64(svc_us, completions);
}

/**
 * iopa_ctl_cycle_need() - the evidence the cycle under way needs
 * @c: the controller
 * @jobs: set to the completions needed, 0 if the cycle has a fixed
 *	length (policies other than bracket, a fixed limit)
 * @spans: set to the mean service times it must last
 * @min_ms: set to the least it must last, in ms: min_cycle_ms, less for
 *	the transient cycle after a move (IOPA_CTL_BR_SETTLE_MIN_MS)
 *
 * For callers that check the rule of iopa_ctl_cycle_enough() themselves
 * (device groups count completions in atomics).
 */
void iopa_ctl_cycle_need(const struct iopa_ctl *c, u32 *jobs, u32 *spans,
			 u32 *min_ms)
{
	*jobs = 0;
	*spans = 0;
	*min_ms = c->min_cycle_ms;
	if (c->policy != IOPA_CTL_POLICY_BRACKET ||
	    c->mode == IOPA_CTL_MODE_FIXED)
		return;
	*jobs = c->limit;
	if (c->br_settle) {
		/* Transient: the jobs of the old limit have turned over. */
		*spans = IOPA_CTL_BR_SETTLE_SPANS;
		if (c->br_settle == IOPA_CTL_BR_SETTLE_UP &&
		    *min_ms > IOPA_CTL_BR_SETTLE_MIN_MS)
			*min_ms = IOPA_CTL_BR_SETTLE_MIN_MS;
		return;
	}
	if (*jobs < IOPA_CTL_BR_MIN_JOBS)
		*jobs = IOPA_CTL_BR_MIN_JOBS;
	*spans = c->mode == IOPA_CTL_MODE_FAST ? IOPA_CTL_BR_FAST_SPANS :
		 IOPA_CTL_BR_SPANS;
}

/**
 * iopa_ctl_clamp_limit() - a limit brought within the controller's bounds
 * @c: the controller (its min and max)
 * @p: the tunables (max_limit now)
 * @limit: the limit
 *
 * For a limit set from outside the controller (a device group's share).
 *
 * Return: @limit within [max(1, min), min(max_limit, max)].
 */
u32 iopa_ctl_clamp_limit(const struct iopa_ctl *c,
			 const struct iopa_ctl_params *p, u32 limit)
{
	struct iopa_ctl t = *c;

	t.ceiling = p->max_limit;
	return iopa_ctl_clamp(&t, limit);
}

/**
 * iopa_ctl_update() - end of a cycle: feed its sample, adapt the limit
 * @c: the controller
 * @p: the tunables (valid: iopa_ctl_params_check())
 * @s: what was measured over the cycle
 * @r_permille: if not NULL, set to the last throughput ratio computed
 *	(iopa: R; hillclimb: the larger limit's throughput over the
 *	smaller's, or the sample over the base level), per mille
 *
 * A sample without demand is ignored, except that time passes in HOLD
 * and a trial is abandoned (bracket: a larger limit that jobs ran under
 * without filling it loses, iopa_ctl_br_unfilled()).  A cached sample (not comparable with the
 * ones before) is ignored too, and what was measured before it is
 * forgotten.  The limit never grows when @s->cpu_saturated, except
 * under bracket for jobs that do block I/O (@s->block_io), by a doubling
 * or a probe that must pay.  A new limit applies to dispatches from now on;
 * running jobs are not preempted, so a smaller limit takes effect as
 * jobs finish.
 *
 * Return: true if the limit changed.
 */
bool iopa_ctl_update(struct iopa_ctl *c, const struct iopa_ctl_params *p,
		     const struct iopa_ctl_sample *s, u32 *r_permille)
{
	u32 old = c->limit;

	if (c->ceiling != p->max_limit) {
		bool fresh = iopa_ctl_br_fresh(c), from = iopa_ctl_br_at_from(c);

		/*
		 * max_limit changed (sysfs): clamp, abandoning a trial it cuts;
		 * a start-up that has measured nothing yet stays to come
		 */
		c->ceiling = p->max_limit;
		if (!iopa_ctl_br_rebound(c, fresh, from) &&
		    iopa_ctl_probes(c) && c->mode != IOPA_CTL_MODE_FIXED &&
		    (iopa_ctl_clamp(c, c->limit) != c->limit ||
		     iopa_ctl_clamp(c, c->base) != c->base)) {
			c->limit = iopa_ctl_clamp(c, c->base);
			iopa_ctl_resume(c);
		}
		if (c->mode != IOPA_CTL_MODE_FIXED)
			c->limit = iopa_ctl_clamp(c, c->limit);
	}

	/* The size of the jobs, for a knee learned (iopa_ctl_job_kb()). */
	if (!s->cached && s->completions && s->block_io) {
		c->job_bytes += div64_u64(s->tput * s->elapsed_ms, 1000);
		c->job_n += s->completions;
	}

	if (c->mode == IOPA_CTL_MODE_FIXED) {
		/* nothing */
	} else if (s->cached) {
		iopa_ctl_unit_change(c);
	} else if (!s->demand) {
		/* a gap: the next sample is no neighbour of the last one */
		iopa_ctl_br_break(c);
		if (c->mode == IOPA_CTL_MODE_HOLD) {
			iopa_ctl_hold_tick(c, s->elapsed_ms);
		} else if (c->policy == IOPA_CTL_POLICY_BRACKET &&
			   c->limit > c->base && s->completions) {
			/* Jobs ran, but none waited: nobody to fill it. */
			iopa_ctl_br_unfilled(c, p);
		} else if (iopa_ctl_probes(c) && c->limit != c->base) {
			/* A trial cannot be judged without demand: drop it. */
			c->limit = c->base;
			iopa_ctl_resume(c);
		} else if (c->policy == IOPA_CTL_POLICY_BRACKET) {
			/* Not a sample of the limit, but the transient passed. */
			c->br_settle = 0;
		}
	} else if (c->policy == IOPA_CTL_POLICY_HILLCLIMB) {
		iopa_ctl_hc_update(c, p, s);
	} else if (c->policy == IOPA_CTL_POLICY_BRACKET) {
		iopa_ctl_br_update(c, p, s);
	} else {
		iopa_ctl_iopa_update(c, p, s);
	}

	c->dropped = c->limit < old;
	if (r_permille)
		*r_permille = c->r_permille;
	return c->limit != old;
}
