// SPDX-License-Identifier: GPL-2.0
/*
 * iopactl metrics: a snapshot in the OpenMetrics text format (the
 * default; what Prometheus scrapes) or in the Prometheus text format
 * 0.0.4 (what node_exporter's textfile collector reads).  No system
 * calls: the snapshot and the cgroup paths come from sys.c.
 *
 * The families, in order: the module (info, job counters, gauges), each
 * shared device (budget, knee, sharers: from its members' entries), each
 * submitter (limit, jobs, bytes, the queue-wait and service-time
 * histograms), labelled ctx, sub, pid, comm, cgroup and device.  The two
 * formats differ only in framing: OpenMetrics names a counter's family
 * without "_total" and has # UNIT lines, the info type and # EOF.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "iopactl.h"

/* Label values: UTF-8 with \, " and newline escaped; bad bytes as '?'. */
static void label_value(FILE *f, const char *s, size_t len)
{
	size_t i = 0;

	while (i < len && s[i]) {
		const unsigned char *u = (const unsigned char *)s + i;
		size_t n = ctl_utf8_seq_len(u, len - i);

		if (!n) {
			fputc('?', f);
			i++;
		} else if (*u == '\\' || *u == '"') {
			fputc('\\', f);
			fputc(*u, f);
			i++;
		} else if (*u == '\n') {
			fputs("\\n", f);
			i++;
		} else {
			fwrite(u, 1, n, f);
			i += n;
		}
	}
}

enum mtype { M_COUNTER, M_GAUGE, M_INFO, M_HISTOGRAM };

/* # TYPE / # HELP / # UNIT of a family. */
static void family(FILE *f, const struct ctl_metrics_opts *mo,
		   const char *name, enum mtype t, const char *unit,
		   const char *help)
{
	static const char *const om[] = { "counter", "gauge", "info",
					  "histogram" };
	static const char *const prom[] = { "counter", "gauge", "gauge",
					    "histogram" };
	const char *suffix = "";

	if (!mo->openmetrics && t == M_COUNTER)
		suffix = "_total";
	else if (!mo->openmetrics && t == M_INFO)
		suffix = "_info";
	fprintf(f, "# TYPE %s%s %s\n", name, suffix,
		mo->openmetrics ? om[t] : prom[t]);
	if (mo->openmetrics && unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
	fprintf(f, "# HELP %s%s %s\n", name, suffix, help);
}

/* A device number of struct iopa_state.devs as "major:minor". */
static void dev_name(char *buf, size_t len, uint32_t dev)
{
	snprintf(buf, len, "%u:%u", dev >> 20, dev & 0xfffff);
}

/* The labels of a submitter, without the braces. */
static void sub_labels(FILE *f, const struct ctl_metrics_opts *mo,
		       const struct iopa_sub_info *si)
{
	const char *cg = mo->cgroup_path ?
			 mo->cgroup_path(si->metrics.cgroup_id, mo->arg) : NULL;
	char dev[24] = "";

	if (si->state.nr_devs)
		dev_name(dev, sizeof(dev), si->state.devs[0]);
	fprintf(f, "ctx=\"%u\",sub=\"%u\",pid=\"%d\",comm=\"", si->ctx_id,
		si->sub_id, si->pid);
	label_value(f, si->comm, sizeof(si->comm));
	fputs("\",cgroup=\"", f);
	if (cg)
		label_value(f, cg, strlen(cg));
	fprintf(f, "\",device=\"%s\"", dev);
}

/* One sample per submitter of a plain (counter or gauge) family. */
static void per_sub(FILE *f, const struct ctl_metrics_opts *mo,
		    const struct ctl_snapshot *s, const char *name,
		    enum mtype t, const char *unit, const char *help,
		    size_t off, int wide)
{
	size_t i;

	family(f, mo, name, t, unit, help);
	for (i = 0; i < s->nr; i++) {
		const char *p = (const char *)&s->subs[i] + off;
		uint64_t v;

		if (wide) {
			memcpy(&v, p, sizeof(v));
		} else {
			uint32_t v32;

			memcpy(&v32, p, sizeof(v32));
			v = v32;
		}
		fprintf(f, "%s%s{", name, t == M_COUNTER ? "_total" : "");
		sub_labels(f, mo, &s->subs[i]);
		fprintf(f, "} %llu\n", (unsigned long long)v);
	}
}

/* Microseconds as seconds, exactly. */
static void seconds(FILE *f, uint64_t us)
{
	fprintf(f, "%llu.%06llu", (unsigned long long)(us / 1000000),
		(unsigned long long)(us % 1000000));
}

static void histogram(FILE *f, const struct ctl_metrics_opts *mo,
		      const struct ctl_snapshot *s, const char *name,
		      const char *help, int svc)
{
	size_t i;
	int b;

	family(f, mo, name, M_HISTOGRAM, "seconds", help);
	for (i = 0; i < s->nr; i++) {
		const struct iopa_metrics *m = &s->subs[i].metrics;
		const __u64 *h = svc ? m->svc_hist : m->wait_hist;
		uint64_t cum = 0;

		for (b = 0; b < IOPA_HIST_BUCKETS; b++) {
			cum += h[b];
			fprintf(f, "%s_bucket{", name);
			sub_labels(f, mo, &s->subs[i]);
			fputs(",le=\"", f);
			if (b == IOPA_HIST_BUCKETS - 1)
				fputs("+Inf", f);
			else
				seconds(f, 1ULL << b);
			fprintf(f, "\"} %llu\n", (unsigned long long)cum);
		}
		fprintf(f, "%s_count{", name);
		sub_labels(f, mo, &s->subs[i]);
		fprintf(f, "} %llu\n%s_sum{", (unsigned long long)cum, name);
		sub_labels(f, mo, &s->subs[i]);
		fputs("} ", f);
		seconds(f, svc ? m->svc_us : m->wait_us);
		fputc('\n', f);
	}
}

/* The module's totals (sysfs stats/) that are counters, and gauges. */
static const struct {
	const char *file, *name, *help;
	enum mtype t;
} totals[] = {
	{ "submitted", "iopa_jobs_submitted", "Jobs submitted.", M_COUNTER },
	{ "dispatched", "iopa_jobs_dispatched", "Jobs handed to a worker.",
	  M_COUNTER },
	{ "completed", "iopa_jobs_completed", "Jobs completed by a worker.",
	  M_COUNTER },
	{ "cancelled", "iopa_jobs_cancelled",
	  "Jobs cancelled, or given up when their worker died.", M_COUNTER },
	{ "requeued", "iopa_jobs_requeued",
	  "Jobs requeued after their worker died or their lease ended.",
	  M_COUNTER },
	{ "pending", "iopa_jobs_pending", "Jobs waiting to be dispatched.",
	  M_GAUGE },
	{ "inflight", "iopa_jobs_inflight", "Jobs held by workers.", M_GAUGE },
	{ "unreaped", "iopa_jobs_unreaped",
	  "Completions not yet reaped by their submitter.", M_GAUGE },
	{ "contexts", "iopa_contexts", "Open contexts.", M_GAUGE },
	{ "submitters", "iopa_submitters", "Open submitters.", M_GAUGE },
	{ "workers", "iopa_workers", "Open workers.", M_GAUGE },
};

/* Each shared device once: the member that saw the most group cycles. */
static void devices(FILE *f, const struct ctl_metrics_opts *mo,
		    const struct ctl_snapshot *s)
{
	static const struct {
		const char *name, *help;
	} fam[] = {
		{ "iopa_device_budget",
		  "Jobs of all the device's sharing submitters that may run at once." },
		{ "iopa_device_knee",
		  "The budget the device's controller found best so far (0: starting up)." },
		{ "iopa_device_sharers",
		  "Cgroups whose active submitters split the budget." },
	};
	const struct iopa_sub_info **best;
	size_t i, j, nbest = 0, k;

	best = calloc(s->nr ? s->nr : 1, sizeof(*best));
	if (!best)
		return;
	for (i = 0; i < s->nr; i++) {
		const struct iopa_sub_info *si = &s->subs[i];

		if (!si->state.budget || !si->state.nr_devs)
			continue;
		for (j = 0; j < nbest; j++)
			if (best[j]->state.devs[0] == si->state.devs[0])
				break;
		if (j == nbest)
			best[nbest++] = si;
		else if ((int32_t)(si->state.group_cycles -
				   best[j]->state.group_cycles) > 0)
			best[j] = si;
	}
	for (k = 0; k < 3; k++) {
		family(f, mo, fam[k].name, M_GAUGE, NULL, fam[k].help);
		for (j = 0; j < nbest; j++) {
			char dev[24];
			uint32_t v = k == 0 ? best[j]->state.budget :
				     k == 1 ? best[j]->metrics.knee :
				     best[j]->state.sharers;

			dev_name(dev, sizeof(dev), best[j]->state.devs[0]);
			fprintf(f, "%s{device=\"%s\"} %u\n", fam[k].name, dev, v);
		}
	}
	free(best);
}

#define SUB_OFF(field)	offsetof(struct iopa_sub_info, field)

#define LOADED_HELP "1 if the iopa module is loaded (the other families follow), 0 if not."

void ctl_render_metrics_absent(FILE *f, const struct ctl_metrics_opts *mo)
{
	family(f, mo, "iopa_module_loaded", M_GAUGE, NULL, LOADED_HELP);
	fputs("iopa_module_loaded 0\n", f);
	if (mo->openmetrics)
		fputs("# EOF\n", f);
}

void ctl_render_metrics(FILE *f, const struct ctl_snapshot *s,
			const struct ctl_metrics_opts *mo)
{
	int metrics = !s->feat_err && (s->feat.features & IOPA_FEAT_METRICS);
	int turns = metrics && (s->feat.features & IOPA_FEAT_TURNS);
	size_t i;

	family(f, mo, "iopa_module_loaded", M_GAUGE, NULL, LOADED_HELP);
	fputs("iopa_module_loaded 1\n", f);
	family(f, mo, "iopa_module", M_INFO, NULL,
	       "The iopa module: its version and ABI version.");
	fputs("iopa_module_info{version=\"", f);
	label_value(f, s->version, sizeof(s->version));
	fprintf(f, "\",abi=\"%u\"} 1\n", s->feat_err ? 0 : s->feat.abi_version);
	for (i = 0; i < sizeof(totals) / sizeof(totals[0]); i++) {
		int t = ctl_total_index(totals[i].file);

		if (t < 0 || !s->tot[t].ok)
			continue;
		family(f, mo, totals[i].name, totals[i].t, NULL, totals[i].help);
		fprintf(f, "%s%s %llu\n", totals[i].name,
			totals[i].t == M_COUNTER ? "_total" : "",
			(unsigned long long)s->tot[t].u);
	}
	devices(f, mo, s);

	per_sub(f, mo, s, "iopa_submitter_limit", M_GAUGE, NULL,
		"How many of the submitter's jobs may run at once.",
		SUB_OFF(state.limit), 0);
	family(f, mo, "iopa_submitter", M_INFO, NULL,
	       "The submitter's policy and its controller's mode.");
	for (i = 0; i < s->nr; i++) {
		const char *pol = ctl_policy_name(s->subs[i].state.policy);
		const char *mode = ctl_mode_name(s->subs[i].state.mode);

		fputs("iopa_submitter_info{", f);
		sub_labels(f, mo, &s->subs[i]);
		fprintf(f, ",policy=\"%s\",mode=\"%s\"} 1\n",
			pol ? pol : "unknown", mode ? mode : "unknown");
	}
	per_sub(f, mo, s, "iopa_submitter_jobs_inflight", M_GAUGE, NULL,
		"The submitter's jobs held by workers.",
		SUB_OFF(state.inflight), 0);
	per_sub(f, mo, s, "iopa_submitter_jobs_pending", M_GAUGE, NULL,
		"The submitter's jobs waiting to be dispatched.",
		SUB_OFF(state.pending), 0);
	per_sub(f, mo, s, "iopa_submitter_jobs_submitted", M_COUNTER, NULL,
		"Jobs the submitter queued.", SUB_OFF(stats.submitted), 1);
	per_sub(f, mo, s, "iopa_submitter_jobs_completed", M_COUNTER, NULL,
		"The submitter's jobs completed by a worker.",
		SUB_OFF(stats.completed), 1);
	per_sub(f, mo, s, "iopa_submitter_jobs_cancelled", M_COUNTER, NULL,
		"The submitter's jobs cancelled.", SUB_OFF(stats.cancelled), 1);
	per_sub(f, mo, s, "iopa_submitter_jobs_requeued", M_COUNTER, NULL,
		"The submitter's jobs requeued.", SUB_OFF(stats.requeued), 1);
	per_sub(f, mo, s, "iopa_submitter_bytes_per_second", M_GAUGE, NULL,
		"Block I/O of the submitter's jobs in its last cycle, per second.",
		SUB_OFF(state.bytes_per_s), 1);
	if (metrics) {
		per_sub(f, mo, s, "iopa_submitter_jobs_failed", M_COUNTER, NULL,
			"The submitter's jobs completed with a negative result.",
			SUB_OFF(metrics.failed), 1);
		per_sub(f, mo, s, "iopa_submitter_io_bytes", M_COUNTER, "bytes",
			"Block I/O bytes charged to the submitter's jobs.",
			SUB_OFF(metrics.io_bytes), 1);
		per_sub(f, mo, s, "iopa_submitter_knee", M_GAUGE, NULL,
			"The limit the submitter's controller found best so far (0: none yet).",
			SUB_OFF(metrics.knee), 0);
		histogram(f, mo, s, "iopa_submitter_queue_wait_seconds",
			  "Time the submitter's jobs waited to be dispatched.", 0);
		histogram(f, mo, s, "iopa_submitter_service_seconds",
			  "Time the submitter's jobs took, dispatch to completion.",
			  1);
	}
	if (turns) {
		family(f, mo, "iopa_submitter_waiting", M_GAUGE, NULL,
		       "1 while the submitter waits for its turn on a shared device (its limit is 0).");
		for (i = 0; i < s->nr; i++) {
			fputs("iopa_submitter_waiting{", f);
			sub_labels(f, mo, &s->subs[i]);
			fprintf(f, "} %d\n", !!(s->subs[i].state.flags &
						IOPA_LIMIT_F_WAITING));
		}
		per_sub(f, mo, s, "iopa_submitter_turn_waits", M_COUNTER, NULL,
			"Times the submitter began to wait for its turn on a shared device.",
			SUB_OFF(metrics.turn_waits), 1);
		family(f, mo, "iopa_submitter_turn_wait_seconds", M_COUNTER,
		       "seconds",
		       "Time the submitter waited for its turns on a shared device.");
		for (i = 0; i < s->nr; i++) {
			fputs("iopa_submitter_turn_wait_seconds_total{", f);
			sub_labels(f, mo, &s->subs[i]);
			fputs("} ", f);
			seconds(f, s->subs[i].metrics.turn_wait_us);
			fputc('\n', f);
		}
	}
	if (mo->openmetrics)
		fputs("# EOF\n", f);
}
