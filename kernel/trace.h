/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iopa - trace events of the limit controller and of each job's life.
 *
 *   iopa_limit_change  the controller changed a submitter's limit
 *   iopa_cycle         a submitter's adjustment cycle ended
 *   iopa_group_cycle   a device group's cycle ended (group.c)
 *   iopa_job_submit    a job was queued (tgid: the submitting process)
 *   iopa_job_dispatch  a worker thread took it (tgid: the worker's
 *                      process; wait_us: its queue wait)
 *   iopa_job_complete  its worker completed it (svc_us: fetch to
 *                      complete)
 *   iopa_job_requeue   it was taken back from its worker, to run again
 *   iopa_job_cancel    it ended without a worker's result
 *
 * Jobs are named by their id (unique in their context; a rerun's has
 * bit 63, IOPA_JOB_ID_RERUN, set in dispatch and complete).
 *
 * Submitters are named by (context id, submitter id): ids count from 1,
 * contexts module-wide, submitters within their context.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM iopa

#if !defined(_IOPA_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _IOPA_TRACE_H

#include <linux/tracepoint.h>

#include "ctl.h"

#define iopa_show_mode(m)						\
	__print_symbolic(m, { 0, "fast" }, { 1, "normal" }, { 2, "hold" },	\
			 { 3, "fixed" }, { 4, "probe" }, { 5, "steady" })

TRACE_EVENT(iopa_limit_change,
	    TP_PROTO(u32 ctx_id, u32 sub_id, u32 old_limit, u32 new_limit,
		     u32 mode, u32 r_permille, u64 tput),
	    TP_ARGS(ctx_id, sub_id, old_limit, new_limit, mode, r_permille,
		    tput),
	    TP_STRUCT__entry(__field(u32, ctx_id)
			     __field(u32, sub_id)
			     __field(u32, old_limit)
			     __field(u32, new_limit)
			     __field(u32, mode)
			     __field(u32, r_permille)
			     __field(u64, tput)),
	    TP_fast_assign(__entry->ctx_id = ctx_id;
			   __entry->sub_id = sub_id;
			   __entry->old_limit = old_limit;
			   __entry->new_limit = new_limit;
			   __entry->mode = mode;
			   __entry->r_permille = r_permille;
			   __entry->tput = tput;),
	    TP_printk("ctx=%u sub=%u old=%u new=%u mode=%s r=%u.%03u tput=%llu",
		      __entry->ctx_id, __entry->sub_id, __entry->old_limit,
		      __entry->new_limit, iopa_show_mode(__entry->mode),
		      __entry->r_permille / 1000, __entry->r_permille % 1000,
		      __entry->tput)
);

TRACE_EVENT(iopa_cycle,
	    TP_PROTO(u32 ctx_id, u32 sub_id, u32 limit, u32 mode,
		     const struct iopa_ctl_sample *s, u64 bytes_per_s,
		     u64 jobs_per_s, u32 wait_us, u32 svc_us, u32 noise),
	    TP_ARGS(ctx_id, sub_id, limit, mode, s, bytes_per_s, jobs_per_s,
		    wait_us, svc_us, noise),
	    TP_STRUCT__entry(__field(u32, ctx_id)
			     __field(u32, sub_id)
			     __field(u32, limit)
			     __field(u32, mode)
			     __field(u32, elapsed_ms)
			     __field(u64, bytes_per_s)
			     __field(u64, jobs_per_s)
			     __field(bool, demand)
			     __field(bool, saturated)
			     __field(bool, cached)
			     __field(u32, jobs)
			     __field(u32, wait_us)
			     __field(u32, svc_us)
			     __field(u32, noise)),
	    TP_fast_assign(__entry->ctx_id = ctx_id;
			   __entry->sub_id = sub_id;
			   __entry->limit = limit;
			   __entry->mode = mode;
			   __entry->elapsed_ms = s->elapsed_ms;
			   __entry->bytes_per_s = bytes_per_s;
			   __entry->jobs_per_s = jobs_per_s;
			   __entry->demand = s->demand;
			   __entry->saturated = s->cpu_saturated;
			   __entry->cached = s->cached;
			   __entry->jobs = s->completions;
			   __entry->wait_us = wait_us;
			   __entry->svc_us = svc_us;
			   __entry->noise = noise;),
	    TP_printk("ctx=%u sub=%u limit=%u mode=%s ms=%u bytes/s=%llu jobs/s=%llu demand=%d cpu_saturated=%d cached=%d jobs=%u wait_us=%u svc_us=%u noise=%u.%03u",
		      __entry->ctx_id, __entry->sub_id, __entry->limit,
		      iopa_show_mode(__entry->mode), __entry->elapsed_ms,
		      __entry->bytes_per_s, __entry->jobs_per_s,
		      __entry->demand, __entry->saturated, __entry->cached,
		      __entry->jobs, __entry->wait_us, __entry->svc_us,
		      __entry->noise / 1000, __entry->noise % 1000)
);

TRACE_EVENT(iopa_group_cycle,
	    TP_PROTO(u32 group, u32 dev, u32 old_budget, u32 budget, u32 mode,
		     u32 r_permille, u64 tput, u32 members, u32 sharers),
	    TP_ARGS(group, dev, old_budget, budget, mode, r_permille, tput,
		    members, sharers),
	    TP_STRUCT__entry(__field(u32, group)
			     __field(u32, dev)
			     __field(u32, old_budget)
			     __field(u32, budget)
			     __field(u32, mode)
			     __field(u32, r_permille)
			     __field(u64, tput)
			     __field(u32, members)
			     __field(u32, sharers)),
	    TP_fast_assign(__entry->group = group;
			   __entry->dev = dev;
			   __entry->old_budget = old_budget;
			   __entry->budget = budget;
			   __entry->mode = mode;
			   __entry->r_permille = r_permille;
			   __entry->tput = tput;
			   __entry->members = members;
			   __entry->sharers = sharers;),
	    TP_printk("group=%u dev=%u:%u budget=%u->%u mode=%s r=%u.%03u bytes/s=%llu members=%u sharers=%u",
		      __entry->group, MAJOR(__entry->dev), MINOR(__entry->dev),
		      __entry->old_budget, __entry->budget,
		      iopa_show_mode(__entry->mode),
		      __entry->r_permille / 1000, __entry->r_permille % 1000,
		      __entry->tput, __entry->members, __entry->sharers)
);

/* queued; tgid: the submitting process */
TRACE_EVENT(iopa_job_submit,
	    TP_PROTO(u32 ctx_id, u32 sub_id, u64 job_id, s32 tgid,
		     u64 offset, u64 len),
	    TP_ARGS(ctx_id, sub_id, job_id, tgid, offset, len),
	    TP_STRUCT__entry(__field(u32, ctx_id)
			     __field(u32, sub_id)
			     __field(u64, job_id)
			     __field(s32, tgid)
			     __field(u64, offset)
			     __field(u64, len)),
	    TP_fast_assign(__entry->ctx_id = ctx_id;
			   __entry->sub_id = sub_id;
			   __entry->job_id = job_id;
			   __entry->tgid = tgid;
			   __entry->offset = offset;
			   __entry->len = len;),
	    TP_printk("ctx=%u sub=%u job=%llu tgid=%d offset=%llu len=%llu",
		      __entry->ctx_id, __entry->sub_id, __entry->job_id,
		      __entry->tgid, __entry->offset, __entry->len)
);

/* taken by a worker thread of process tgid, after wait_us in the queue */
TRACE_EVENT(iopa_job_dispatch,
	    TP_PROTO(u32 ctx_id, u32 sub_id, u64 job_id, s32 tgid,
		     u32 wait_us),
	    TP_ARGS(ctx_id, sub_id, job_id, tgid, wait_us),
	    TP_STRUCT__entry(__field(u32, ctx_id)
			     __field(u32, sub_id)
			     __field(u64, job_id)
			     __field(s32, tgid)
			     __field(u32, wait_us)),
	    TP_fast_assign(__entry->ctx_id = ctx_id;
			   __entry->sub_id = sub_id;
			   __entry->job_id = job_id;
			   __entry->tgid = tgid;
			   __entry->wait_us = wait_us;),
	    TP_printk("ctx=%u sub=%u job=%llu tgid=%d wait_us=%u",
		      __entry->ctx_id, __entry->sub_id, __entry->job_id,
		      __entry->tgid, __entry->wait_us)
);

/* completed by its worker (tgid), svc_us after it took the job */
TRACE_EVENT(iopa_job_complete,
	    TP_PROTO(u32 ctx_id, u32 sub_id, u64 job_id, s32 tgid,
		     u32 svc_us, s32 res),
	    TP_ARGS(ctx_id, sub_id, job_id, tgid, svc_us, res),
	    TP_STRUCT__entry(__field(u32, ctx_id)
			     __field(u32, sub_id)
			     __field(u64, job_id)
			     __field(s32, tgid)
			     __field(u32, svc_us)
			     __field(s32, res)),
	    TP_fast_assign(__entry->ctx_id = ctx_id;
			   __entry->sub_id = sub_id;
			   __entry->job_id = job_id;
			   __entry->tgid = tgid;
			   __entry->svc_us = svc_us;
			   __entry->res = res;),
	    TP_printk("ctx=%u sub=%u job=%llu tgid=%d svc_us=%u res=%d",
		      __entry->ctx_id, __entry->sub_id, __entry->job_id,
		      __entry->tgid, __entry->svc_us, __entry->res)
);

/* taken back to run again; flags: IOPA_CQE_F_* (why) */
TRACE_EVENT(iopa_job_requeue,
	    TP_PROTO(u32 ctx_id, u32 sub_id, u64 job_id, s32 tgid,
		     u32 flags),
	    TP_ARGS(ctx_id, sub_id, job_id, tgid, flags),
	    TP_STRUCT__entry(__field(u32, ctx_id)
			     __field(u32, sub_id)
			     __field(u64, job_id)
			     __field(s32, tgid)
			     __field(u32, flags)),
	    TP_fast_assign(__entry->ctx_id = ctx_id;
			   __entry->sub_id = sub_id;
			   __entry->job_id = job_id;
			   __entry->tgid = tgid;
			   __entry->flags = flags;),
	    TP_printk("ctx=%u sub=%u job=%llu tgid=%d flags=0x%x",
		      __entry->ctx_id, __entry->sub_id, __entry->job_id,
		      __entry->tgid, __entry->flags)
);

/* ended without a worker's result; flags: IOPA_CQE_F_* */
TRACE_EVENT(iopa_job_cancel,
	    TP_PROTO(u32 ctx_id, u32 sub_id, u64 job_id, s32 tgid,
		     u32 flags, s32 res),
	    TP_ARGS(ctx_id, sub_id, job_id, tgid, flags, res),
	    TP_STRUCT__entry(__field(u32, ctx_id)
			     __field(u32, sub_id)
			     __field(u64, job_id)
			     __field(s32, tgid)
			     __field(u32, flags)
			     __field(s32, res)),
	    TP_fast_assign(__entry->ctx_id = ctx_id;
			   __entry->sub_id = sub_id;
			   __entry->job_id = job_id;
			   __entry->tgid = tgid;
			   __entry->flags = flags;
			   __entry->res = res;),
	    TP_printk("ctx=%u sub=%u job=%llu tgid=%d flags=0x%x res=%d",
		      __entry->ctx_id, __entry->sub_id, __entry->job_id,
		      __entry->tgid, __entry->flags, __entry->res)
);

#endif /* _IOPA_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
