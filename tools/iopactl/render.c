// SPDX-License-Identifier: GPL-2.0
/*
 * iopactl: what the commands print, from a struct ctl_snapshot or a
 * trace line: status as text and as JSON (schema in iopactl.8), the
 * watch screen, trace events.  No system calls: the host tests feed
 * these functions fake snapshots.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "iopactl.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- small helpers -------------------------------------------------------- */

void ctl_snapshot_free(struct ctl_snapshot *s)
{
	free(s->subs);
	s->subs = NULL;
	s->nr = 0;
}

void ctl_sanitize_comm(const char *comm, char *out, size_t len)
{
	size_t i, n = strnlen(comm, 16);

	if (n > len - 1)
		n = len - 1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)comm[i];

		out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
	}
	out[n] = '\0';
}

void ctl_fmt_si(uint64_t v, char buf[8])
{
	static const char unit[] = "kMGTPE";
	double x = (double)v;
	int i = -1;

	if (v < 100000) {
		snprintf(buf, 8, "%" PRIu64, v);
		return;
	}
	while (x >= 999.5 && i < 5) {
		x /= 1000;
		i++;
	}
	if (x < 99.95)
		snprintf(buf, 8, "%.1f%c", x, unit[i]);
	else
		snprintf(buf, 8, "%.0f%c", x, unit[i]);
}

void ctl_fmt_ms(uint32_t us, char buf[8])
{
	if (us < 10000)			/* 0.00 .. 9.99 ms */
		snprintf(buf, 8, "%u.%02u", us / 1000, us % 1000 / 10);
	else if (us < 100000)		/* 10.0 .. 99.9 ms */
		snprintf(buf, 8, "%u.%u", us / 1000, us % 1000 / 100);
	else if (us < 10000000)		/* 100 .. 9999 ms */
		snprintf(buf, 8, "%u", us / 1000);
	else if (us < 1000000000)	/* 10s .. 999s */
		snprintf(buf, 8, "%us", us / 1000000);
	else				/* 16m .. 71m */
		snprintf(buf, 8, "%um", us / 60000000);
}

int ctl_has_times(const struct ctl_snapshot *s)
{
	return s->module_loaded && !s->dev_err && !s->feat_err &&
	       (s->feat.features & IOPA_FEAT_TIMES);
}

/* The module reports budget, weight, sharers and group_cycles. */
static int has_share(const struct ctl_snapshot *s)
{
	return s->module_loaded && !s->dev_err && !s->feat_err &&
	       (s->feat.features & IOPA_FEAT_SHARE);
}

/*
 * Which of a submitter's last-cycle times mean something: none without
 * IOPA_FEAT_TIMES or before its first cycle ended; the service time only
 * if jobs completed in that cycle.
 */
static void times_known(const struct ctl_snapshot *s,
			const struct iopa_state *st, int *cycle, int *svc)
{
	*cycle = ctl_has_times(s) && st->cycles > 0;
	*svc = *cycle && st->completions > 0;
}

/* The policy in at most 4 characters, for the watch screen. */
static const char *policy_short(uint32_t policy)
{
	switch (policy) {
	case IOPA_POLICY_IOPA:
		return "iopa";
	case IOPA_POLICY_HILLCLIMB:
		return "hill";
	case IOPA_POLICY_BRACKET:
		return "brkt";
	default:
		return "?";
	}
}

/* A ratio in 1/1000 in at most 5 characters: "1.040", ">9.99". */
static void fmt_r(uint32_t r_permille, char buf[8])
{
	if (r_permille < 10000)
		snprintf(buf, 8, "%u.%03u", r_permille / 1000,
			 r_permille % 1000);
	else
		snprintf(buf, 8, ">9.99");
}

/* A name from a table, or "unknown(N)". */
static const char *name_or_num(const char *name, uint32_t v, char *buf,
			       size_t len)
{
	if (name)
		return name;
	snprintf(buf, len, "unknown(%u)", v);
	return buf;
}

static size_t comm_len(const struct iopa_sub_info *si)
{
	return strnlen(si->comm, sizeof(si->comm));
}

/* ---- notes ------------------------------------------------------------------ */

size_t ctl_snapshot_notes(const struct ctl_snapshot *s, char (*notes)[256],
			  size_t max)
{
	size_t n = 0;

#define NOTE(...) do {							\
		if (n < max)						\
			snprintf(notes[n++], 256, __VA_ARGS__);		\
	} while (0)

	if (!s->module_loaded) {
		NOTE("the iopa module is not loaded (no %s)", CTL_SYSFS_DIR);
		return n;
	}
	if (s->dev_err) {
		if (s->dev_err == EACCES || s->dev_err == EPERM)
			NOTE("cannot open %s: %s: the ABI version and the submitters need root, or a group that may open it",
			     CTL_DEV_PATH, strerror(s->dev_err));
		else
			NOTE("cannot open %s: %s: the ABI version and the submitters are not shown",
			     CTL_DEV_PATH, strerror(s->dev_err));
		return n;
	}
	if (s->feat_err)
		NOTE("IOPA_IOC_GET_FEATURES: %s", strerror(s->feat_err));
	if (s->no_list) {
		NOTE("this iopa module cannot list submitters (no IOPA_FEAT_LIST, IOPA_IOC_LIST_SUBMITTERS unknown): submitters are not shown");
	} else if (s->scope == CTL_SCOPE_OWN) {
		NOTE("listing the submitters of every context needs root (CAP_SYS_ADMIN): only iopactl's own context is shown, and it has no submitters");
	} else if (s->scope == CTL_SCOPE_NONE) {
		int e = s->own_err ? s->own_err : s->list_err;

		NOTE("IOPA_IOC_LIST_SUBMITTERS: %s: submitters are not shown",
		     strerror(e ? e : EIO));
	}
	if (s->scope != CTL_SCOPE_NONE && s->total > s->nr)
		NOTE("%u submitters, only the first %zu are shown", s->total,
		     s->nr);
#undef NOTE
	return n;
}

/* ---- status as text ----------------------------------------------------------- */

static void print_features(FILE *f, uint64_t mask)
{
	unsigned int bit;

	for (bit = 0; bit < 64; bit++) {
		const char *name;

		if (!(mask & (1ULL << bit)))
			continue;
		name = ctl_feature_name(bit);
		if (name)
			fprintf(f, " %s", name);
		else
			fprintf(f, " bit%u", bit);
	}
}

static void fmt_bound(uint32_t v, char *buf, size_t len)
{
	if (v)
		snprintf(buf, len, "%u", v);
	else
		snprintf(buf, len, "-");
}

void ctl_render_status_text(FILE *f, const struct ctl_snapshot *s)
{
	char notes[8][256], nb[32], pb[32], ob[32], comm[17], b1[16], b2[16];
	char wt[16], sv[16], dn[16], ns[16];
	size_t i, n;

	if (s->module_loaded && s->version[0])
		fprintf(f, "iopa module: version %s%s%s%s\n", s->version,
			s->srcversion[0] ? " (srcversion " : "", s->srcversion,
			s->srcversion[0] ? ")" : "");
	else if (s->module_loaded)
		fprintf(f, "iopa module: srcversion %s (no version set)\n",
			s->srcversion[0] ? s->srcversion : "unknown");
	if (s->module_loaded && !s->dev_err && !s->feat_err) {
		fprintf(f, "ABI version %u, features %#" PRIx64 ":",
			s->feat.abi_version, (uint64_t)s->feat.features);
		print_features(f, s->feat.features);
		fprintf(f, "\n  batch_max %u, limit_max %u, worker_max_jobs %u\n",
			s->feat.batch_max, s->feat.limit_max,
			s->feat.worker_max_jobs);
	}
	if (s->module_loaded) {
		fprintf(f, "\ntunables (%s):\n", CTL_SYSFS_DIR);
		for (i = 0; i < CTL_NR_TUNABLES; i++)
			fprintf(f, "  %-20s %s\n", ctl_tunables[i].name,
				s->tun[i].ok ? s->tun[i].s : "-");
		fprintf(f, "\ntotals (%s/stats):\n ", CTL_SYSFS_DIR);
		for (i = 0; i < CTL_NR_TOTALS; i++) {
			fprintf(f, " %s %s", ctl_totals[i],
				s->tot[i].ok ? s->tot[i].s : "-");
			if (i == 2 || i == 7)
				fputs("\n ", f);
		}
		fputc('\n', f);
		fprintf(f, "\nknees (%s/knees):", CTL_SYSFS_DIR);
		if (s->knees_err)
			fprintf(f, " - (%s)\n", strerror(s->knees_err));
		else if (!s->nr_knees)
			fputs(" none\n", f);
		else
			fputc('\n', f);
		for (i = 0; i < s->nr_knees; i++)
			fprintf(f, "  %u:%u knee %u diskseq %" PRIu64
				" %s job_kb %u\n",
				s->knees[i].major, s->knees[i].minor,
				s->knees[i].knee, s->knees[i].diskseq,
				s->knees[i].src, s->knees[i].job_kb);
	}
	if (s->module_loaded && s->scope != CTL_SCOPE_NONE) {
		fprintf(f, "\nsubmitters (%s): %zu\n",
			s->scope == CTL_SCOPE_ALL ? "all contexts" :
			"iopactl's own context", s->nr);
		if (s->nr)
			fprintf(f, "  %4s %4s %7s %-15s %-9s %-6s %5s %9s %5s %7s %12s %8s %6s %9s %9s %7s %6s %8s %7s %-6s %11s %6s\n",
				"CTX", "SUB", "PID", "COMM", "POLICY", "MODE",
				"LIMIT", "MIN..MAX", "INFL", "PEND", "BYTES/S",
				"JOBS/S", "R", "WAIT_MS", "SVC_MS", "DONE",
				"NOISE", "CYCLES", "CHANGES", "ORDER",
				"BUDGET/SHR", "WEIGHT");
		for (i = 0; i < s->nr; i++) {
			const struct iopa_sub_info *si = &s->subs[i];
			const struct iopa_state *st = &si->state;
			char mm[40], bud[24], wg[12], lim[12];
			int cyc, svc;

			ctl_sanitize_comm(si->comm, comm, sizeof(comm));
			fmt_bound(st->min, b1, sizeof(b1));
			fmt_bound(st->max, b2, sizeof(b2));
			snprintf(mm, sizeof(mm), "%s..%s", b1, b2);
			times_known(s, st, &cyc, &svc);
			strcpy(wt, "-");
			strcpy(sv, "-");
			strcpy(dn, "-");
			strcpy(ns, "-");
			if (cyc) {
				snprintf(wt, sizeof(wt), "%u.%03u",
					 st->wait_us / 1000, st->wait_us % 1000);
				snprintf(dn, sizeof(dn), "%u", st->completions);
				snprintf(ns, sizeof(ns), "%u.%u%%",
					 st->noise_permille / 10,
					 st->noise_permille % 10);
			}
			if (svc)
				snprintf(sv, sizeof(sv), "%u.%03u",
					 st->svc_us / 1000, st->svc_us % 1000);
			strcpy(bud, "-");
			strcpy(wg, "-");
			if (has_share(s)) {
				/* A device's budget and its sharing cgroups. */
				if (st->budget)
					snprintf(bud, sizeof(bud), "%u/%u",
						 st->budget, st->sharers);
				snprintf(wg, sizeof(wg), "%u", st->weight);
			}
			/* A submitter waiting for its turn: "wait", not 0. */
			if (st->flags & IOPA_LIMIT_F_WAITING)
				strcpy(lim, "wait");
			else
				snprintf(lim, sizeof(lim), "%u", st->limit);
			fprintf(f, "  %4u %4u %7d %-15s %-9s %-6s %5s %9s %5u %7u %12" PRIu64 " %8" PRIu64 " %2u.%03u %9s %9s %7s %6s %8" PRIu64 " %7" PRIu64 " %-6s %11s %6s\n",
				si->ctx_id, si->sub_id, si->pid, comm,
				name_or_num(ctl_policy_name(st->policy),
					    st->policy, pb, sizeof(pb)),
				name_or_num(ctl_mode_name(st->mode), st->mode,
					    nb, sizeof(nb)),
				lim, mm, st->inflight, st->pending,
				(uint64_t)st->bytes_per_s,
				(uint64_t)st->jobs_per_s,
				st->r_permille / 1000, st->r_permille % 1000,
				wt, sv, dn, ns,
				(uint64_t)st->cycles, (uint64_t)st->changes,
				name_or_num(ctl_order_name(st->order),
					    st->order, ob, sizeof(ob)), bud, wg);
		}
	}
	n = ctl_snapshot_notes(s, notes, ARRAY_SIZE(notes));
	if (n)
		fputc('\n', f);
	for (i = 0; i < n; i++)
		fprintf(f, "note: %s\n", notes[i]);
}

/* ---- status as JSON ------------------------------------------------------------ */

static void json_value(struct ctl_jw *w, const char *key,
		       const struct ctl_value *v, int is_string)
{
	if (!v->ok)
		ctl_jw_null(w, key);
	else if (is_string)
		ctl_jw_str(w, key, v->s);
	else
		ctl_jw_u64(w, key, v->u);
}

static void json_sub(struct ctl_jw *w, const struct iopa_sub_info *si,
		     int times, int share)
{
	const struct iopa_state *st = &si->state;
	const struct iopa_stats *ss = &si->stats;
	char buf[32], hex[2 * 16 + 1];
	size_t i, n = comm_len(si);

	for (i = 0; i < n; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)si->comm[i]);
	hex[2 * n] = '\0';

	ctl_jw_obj_begin(w, NULL);
	ctl_jw_u64(w, "ctx", si->ctx_id);
	ctl_jw_u64(w, "sub", si->sub_id);
	ctl_jw_s64(w, "pid", si->pid);
	ctl_jw_strn(w, "comm", si->comm, n);
	ctl_jw_str(w, "comm_hex", hex);
	ctl_jw_str(w, "policy", name_or_num(ctl_policy_name(st->policy),
					    st->policy, buf, sizeof(buf)));
	ctl_jw_str(w, "mode", name_or_num(ctl_mode_name(st->mode), st->mode,
					  buf, sizeof(buf)));
	ctl_jw_bool(w, "fixed", !!(st->flags & IOPA_LIMIT_F_FIXED));
	ctl_jw_u64(w, "limit", st->limit);
	/* Waiting for its turn on a shared device (IOPA_FEAT_TURNS). */
	if (share)
		ctl_jw_bool(w, "waiting",
			    !!(st->flags & IOPA_LIMIT_F_WAITING));
	else
		ctl_jw_null(w, "waiting");
	ctl_jw_u64(w, "min", st->min);
	ctl_jw_u64(w, "max", st->max);
	ctl_jw_u64(w, "inflight", st->inflight);
	ctl_jw_u64(w, "pending", st->pending);
	ctl_jw_u64(w, "bytes_per_s", st->bytes_per_s);
	ctl_jw_u64(w, "jobs_per_s", st->jobs_per_s);
	ctl_jw_u64(w, "r_permille", st->r_permille);
	ctl_jw_u64(w, "cycle_ms", st->cycle_ms);
	ctl_jw_u64(w, "cycles", st->cycles);
	ctl_jw_u64(w, "changes", st->changes);
	if (times) {
		ctl_jw_u64(w, "wait_us", st->wait_us);
		ctl_jw_u64(w, "svc_us", st->svc_us);
		ctl_jw_u64(w, "completions", st->completions);
		ctl_jw_u64(w, "noise_permille", st->noise_permille);
	} else {
		/* Reserved (zero) in a module without IOPA_FEAT_TIMES. */
		ctl_jw_null(w, "wait_us");
		ctl_jw_null(w, "svc_us");
		ctl_jw_null(w, "completions");
		ctl_jw_null(w, "noise_permille");
	}
	if (share) {
		ctl_jw_u64(w, "budget", st->budget);
		ctl_jw_u64(w, "sharers", st->sharers);
		ctl_jw_u64(w, "weight", st->weight);
		ctl_jw_u64(w, "group_cycles", st->group_cycles);
	} else {
		/* Reserved (zero) in a module without IOPA_FEAT_SHARE. */
		ctl_jw_null(w, "budget");
		ctl_jw_null(w, "sharers");
		ctl_jw_null(w, "weight");
		ctl_jw_null(w, "group_cycles");
	}
	ctl_jw_str(w, "order", name_or_num(ctl_order_name(st->order),
					   st->order, buf, sizeof(buf)));
	ctl_jw_arr_begin(w, "devs");
	for (i = 0; i < st->nr_devs && i < IOPA_STATE_MAX_DEVS; i++) {
		snprintf(buf, sizeof(buf), "%u:%u", st->devs[i] >> 20,
			 st->devs[i] & 0xfffff);
		ctl_jw_str(w, NULL, buf);
	}
	ctl_jw_arr_end(w);
	ctl_jw_u64(w, "ctx_workers", si->ctx_workers);
	ctl_jw_u64(w, "ctx_waiting", si->ctx_waiting);
	ctl_jw_obj_begin(w, "stats");
	ctl_jw_u64(w, "submitted", ss->submitted);
	ctl_jw_u64(w, "dispatched", ss->dispatched);
	ctl_jw_u64(w, "completed", ss->completed);
	ctl_jw_u64(w, "cancelled", ss->cancelled);
	ctl_jw_u64(w, "requeued", ss->requeued);
	ctl_jw_u64(w, "pending", ss->pending);
	ctl_jw_u64(w, "inflight", ss->inflight);
	ctl_jw_u64(w, "unreaped", ss->unreaped);
	ctl_jw_obj_end(w);
	ctl_jw_obj_end(w);
}

void ctl_render_status_json(FILE *f, const struct ctl_snapshot *s)
{
	static const char *const scope[] = {
		[CTL_SCOPE_NONE] = "none",
		[CTL_SCOPE_ALL] = "all",
		[CTL_SCOPE_OWN] = "own",
	};
	char notes[8][256];
	struct ctl_jw w;
	unsigned int bit;
	size_t i, n;

	ctl_jw_init(&w, f);
	ctl_jw_obj_begin(&w, NULL);
	ctl_jw_str(&w, "iopactl_version", IOPACTL_VERSION);

	ctl_jw_obj_begin(&w, "module");
	ctl_jw_bool(&w, "loaded", s->module_loaded);
	ctl_jw_str(&w, "version", s->version[0] ? s->version : NULL);
	ctl_jw_str(&w, "srcversion", s->srcversion[0] ? s->srcversion : NULL);
	ctl_jw_obj_end(&w);

	ctl_jw_obj_begin(&w, "device");
	ctl_jw_str(&w, "path", CTL_DEV_PATH);
	ctl_jw_bool(&w, "opened", s->module_loaded && !s->dev_err);
	ctl_jw_str(&w, "error", !s->module_loaded ? "not loaded" :
		   s->dev_err ? strerror(s->dev_err) : NULL);
	ctl_jw_obj_end(&w);

	if (s->module_loaded && !s->dev_err && !s->feat_err) {
		ctl_jw_obj_begin(&w, "abi");
		ctl_jw_u64(&w, "version", s->feat.abi_version);
		ctl_jw_u64(&w, "features_mask", s->feat.features);
		ctl_jw_arr_begin(&w, "features");
		for (bit = 0; bit < 64; bit++) {
			char buf[16];
			const char *name = ctl_feature_name(bit);

			if (!(s->feat.features & (1ULL << bit)))
				continue;
			if (!name) {
				snprintf(buf, sizeof(buf), "bit%u", bit);
				name = buf;
			}
			ctl_jw_str(&w, NULL, name);
		}
		ctl_jw_arr_end(&w);
		ctl_jw_u64(&w, "batch_max", s->feat.batch_max);
		ctl_jw_u64(&w, "limit_max", s->feat.limit_max);
		ctl_jw_u64(&w, "worker_max_jobs", s->feat.worker_max_jobs);
		ctl_jw_obj_end(&w);
	} else {
		ctl_jw_null(&w, "abi");
	}

	ctl_jw_obj_begin(&w, "tunables");
	for (i = 0; i < CTL_NR_TUNABLES; i++)
		json_value(&w, ctl_tunables[i].name, &s->tun[i],
			   ctl_tunables[i].kind == CTL_TUN_POLICY);
	ctl_jw_obj_end(&w);

	ctl_jw_obj_begin(&w, "totals");
	for (i = 0; i < CTL_NR_TOTALS; i++)
		json_value(&w, ctl_totals[i], &s->tot[i], 0);
	ctl_jw_obj_end(&w);

	if (!s->module_loaded || s->knees_err) {
		ctl_jw_null(&w, "knees");
	} else {
		ctl_jw_arr_begin(&w, "knees");
		for (i = 0; i < s->nr_knees; i++) {
			char dev[24];

			snprintf(dev, sizeof(dev), "%u:%u", s->knees[i].major,
				 s->knees[i].minor);
			ctl_jw_obj_begin(&w, NULL);
			ctl_jw_str(&w, "device", dev);
			ctl_jw_u64(&w, "knee", s->knees[i].knee);
			ctl_jw_u64(&w, "diskseq", s->knees[i].diskseq);
			ctl_jw_str(&w, "source", s->knees[i].src);
			ctl_jw_u64(&w, "job_kb", s->knees[i].job_kb);
			ctl_jw_obj_end(&w);
		}
		ctl_jw_arr_end(&w);
	}

	ctl_jw_str(&w, "submitters_scope", scope[s->scope]);
	if (s->scope == CTL_SCOPE_NONE)
		ctl_jw_null(&w, "submitters_total");
	else
		ctl_jw_u64(&w, "submitters_total", s->total);
	ctl_jw_arr_begin(&w, "submitters");
	for (i = 0; i < s->nr; i++)
		json_sub(&w, &s->subs[i], ctl_has_times(s), has_share(s));
	ctl_jw_arr_end(&w);

	n = ctl_snapshot_notes(s, notes, ARRAY_SIZE(notes));
	ctl_jw_arr_begin(&w, "notes");
	for (i = 0; i < n; i++)
		ctl_jw_str(&w, NULL, notes[i]);
	ctl_jw_arr_end(&w);
	ctl_jw_obj_end(&w);
}

/* ---- the watch screen ------------------------------------------------------------ */

static int by_throughput(const void *a, const void *b)
{
	const struct iopa_sub_info *x = *(const struct iopa_sub_info *const *)a;
	const struct iopa_sub_info *y = *(const struct iopa_sub_info *const *)b;

	if (x->state.bytes_per_s != y->state.bytes_per_s)
		return x->state.bytes_per_s > y->state.bytes_per_s ? -1 : 1;
	if (x->state.jobs_per_s != y->state.jobs_per_s)
		return x->state.jobs_per_s > y->state.jobs_per_s ? -1 : 1;
	if (x->ctx_id != y->ctx_id)
		return x->ctx_id < y->ctx_id ? -1 : 1;
	if (x->sub_id != y->sub_id)
		return x->sub_id < y->sub_id ? -1 : 1;
	return 0;
}

/* Append a line of at most @cols characters (longer text is cut). */
static void scr_add(struct ctl_screen *scr, unsigned int rows,
		    unsigned int cols, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void scr_add(struct ctl_screen *scr, unsigned int rows,
		    unsigned int cols, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	size_t n;

	if (scr->nr >= rows || scr->nr >= scr->max)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	n = strlen(buf);
	if (n > cols)
		n = cols;
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	memcpy(scr->line[scr->nr], buf, n);
	scr->line[scr->nr][n] = '\0';
	scr->nr++;
}

static const char *total_si(const struct ctl_snapshot *s, const char *name,
			    char buf[8])
{
	int i = ctl_total_index(name);

	if (i < 0 || !s->tot[i].ok)
		return "-";
	ctl_fmt_si(s->tot[i].u, buf);
	return buf;
}

void ctl_watch_layout(const struct ctl_snapshot *s, unsigned int rows,
		      unsigned int cols, struct ctl_screen *scr)
{
	char a[8], b[8], c[8], d[8], e[8], jb[8], bb[8];
	const struct iopa_sub_info **order = NULL;
	uint64_t jobs = 0, bytes = 0;
	char notes[4][256];
	size_t i, room, show;

	scr->nr = 0;
	if (cols > CTL_WATCH_MAX_COLS)
		cols = CTL_WATCH_MAX_COLS;
	if (rows > scr->max)
		rows = (unsigned int)scr->max;
	if (!rows || !cols)
		return;

	for (i = 0; i < s->nr; i++) {
		jobs += s->subs[i].state.jobs_per_s;
		bytes += s->subs[i].state.bytes_per_s;
	}
	if (s->scope == CTL_SCOPE_NONE) {
		snprintf(jb, sizeof(jb), "-");
		snprintf(bb, sizeof(bb), "-");
	} else {
		ctl_fmt_si(jobs, jb);
		ctl_fmt_si(bytes, bb);
	}
	if (!s->module_loaded) {
		scr_add(scr, rows, cols, "iopa: module not loaded");
		return;
	}
	scr_add(scr, rows, cols,
		"iopa  jobs/s %s  bytes/s %s  ctx %s  subs %s  workers %s  pend %s  infl %s",
		jb, bb, total_si(s, "contexts", a), total_si(s, "submitters", b),
		total_si(s, "workers", c), total_si(s, "pending", d),
		total_si(s, "inflight", e));
	scr_add(scr, rows, cols,
		"%7s %-11s %-4s %-6s %5s %5s %5s %7s %6s %5s %4s %4s",
		"CTX.SUB", "COMM", "POL", "MODE", "LIMIT", "INFL", "PEND",
		"BYTES/S", "JOBS/S", "R", "WAIT", "SVC");

	if (ctl_snapshot_notes(s, notes, ARRAY_SIZE(notes)) &&
	    (s->scope != CTL_SCOPE_ALL || !s->nr))
		scr_add(scr, rows, cols, "(%s)", notes[0]);
	if (!s->nr)
		return;

	order = malloc(s->nr * sizeof(*order));
	if (!order) {
		scr_add(scr, rows, cols, "(out of memory)");
		return;
	}
	for (i = 0; i < s->nr; i++)
		order[i] = &s->subs[i];
	qsort(order, s->nr, sizeof(*order), by_throughput);

	room = rows - scr->nr;
	show = s->nr;
	if (show > room)
		show = room ? room - 1 : 0;
	for (i = 0; i < show; i++) {
		const struct iopa_sub_info *si = order[i];
		const struct iopa_state *st = &si->state;
		const char *mode = ctl_mode_name(st->mode);
		char id[32], comm[12], l[8], in[8], pe[8], by[8], jo[8], r[8];
		char wt[8] = "-", sv[8] = "-";
		int cyc, svc;

		snprintf(id, sizeof(id), "%u.%u", si->ctx_id, si->sub_id);
		ctl_sanitize_comm(si->comm, comm, sizeof(comm));
		ctl_fmt_si(st->limit, l);
		ctl_fmt_si(st->inflight, in);
		ctl_fmt_si(st->pending, pe);
		ctl_fmt_si(st->bytes_per_s, by);
		ctl_fmt_si(st->jobs_per_s, jo);
		fmt_r(st->r_permille, r);
		times_known(s, st, &cyc, &svc);
		if (cyc)
			ctl_fmt_ms(st->wait_us, wt);
		if (svc)
			ctl_fmt_ms(st->svc_us, sv);
		scr_add(scr, rows, cols,
			"%7s %-11s %-4s %-6s %5s %5s %5s %7s %6s %5s %4s %4s",
			id, comm, policy_short(st->policy), mode ? mode : "?",
			l, in, pe, by, jo, r, wt, sv);
	}
	if (show < s->nr)
		scr_add(scr, rows, cols, "... %zu more submitters",
			s->nr - show);
	free(order);
}

/* ---- watch --lines and --json ----------------------------------------------------------- */

void ctl_render_watch_lines(FILE *f, const struct ctl_snapshot *s,
			    const char *stamp, int titles)
{
	char notes[4][256];
	size_t i;

	if (titles)
		fprintf(f, "%-19s %7s %7s %-15s %-9s %-6s %5s %5s %5s %12s %9s %9s %9s\n",
			"TIME", "CTX.SUB", "PID", "COMM", "POLICY", "MODE",
			"LIMIT", "INFL", "PEND", "BYTES/S", "JOBS/S", "WAIT_MS",
			"SVC_MS");
	if (!s->module_loaded) {
		fprintf(f, "%-19s - (module not loaded)\n", stamp);
		return;
	}
	if (!s->nr) {
		if (ctl_snapshot_notes(s, notes, ARRAY_SIZE(notes)))
			fprintf(f, "%-19s - (%s)\n", stamp, notes[0]);
		else
			fprintf(f, "%-19s - (no submitters)\n", stamp);
		return;
	}
	for (i = 0; i < s->nr; i++) {
		const struct iopa_sub_info *si = &s->subs[i];
		const struct iopa_state *st = &si->state;
		const char *mode = ctl_mode_name(st->mode);
		const char *pol = ctl_policy_name(st->policy);
		char id[32], comm[17], wt[16] = "-", sv[16] = "-";
		int cyc, svc;

		snprintf(id, sizeof(id), "%u.%u", si->ctx_id, si->sub_id);
		ctl_sanitize_comm(si->comm, comm, sizeof(comm));
		for (cyc = 0; comm[cyc]; cyc++)	/* one field per column */
			if (comm[cyc] == ' ')
				comm[cyc] = '_';
		times_known(s, st, &cyc, &svc);
		if (cyc)
			snprintf(wt, sizeof(wt), "%u.%03u", st->wait_us / 1000,
				 st->wait_us % 1000);
		if (svc)
			snprintf(sv, sizeof(sv), "%u.%03u", st->svc_us / 1000,
				 st->svc_us % 1000);
		fprintf(f, "%-19s %7s %7d %-15s %-9s %-6s %5u %5u %5u %12llu %9llu %9s %9s\n",
			stamp, id, si->pid, comm, pol ? pol : "?",
			mode ? mode : "?", st->limit, st->inflight, st->pending,
			(unsigned long long)st->bytes_per_s,
			(unsigned long long)st->jobs_per_s, wt, sv);
	}
}

void ctl_render_watch_json(FILE *f, const struct ctl_snapshot *s,
			   int64_t time_ms)
{
	char notes[4][256];
	struct ctl_jw w;
	size_t i, n;

	ctl_jw_init_compact(&w, f);
	ctl_jw_obj_begin(&w, NULL);
	ctl_jw_s64(&w, "time_ms", time_ms);
	ctl_jw_bool(&w, "loaded", s->module_loaded);
	ctl_jw_obj_begin(&w, "totals");
	for (i = 0; i < CTL_NR_TOTALS; i++)
		json_value(&w, ctl_totals[i], &s->tot[i], 0);
	ctl_jw_obj_end(&w);
	ctl_jw_arr_begin(&w, "submitters");
	for (i = 0; i < s->nr; i++)
		json_sub(&w, &s->subs[i], ctl_has_times(s), has_share(s));
	ctl_jw_arr_end(&w);
	n = ctl_snapshot_notes(s, notes, ARRAY_SIZE(notes));
	ctl_jw_arr_begin(&w, "notes");
	for (i = 0; i < n; i++)
		ctl_jw_str(&w, NULL, notes[i]);
	ctl_jw_arr_end(&w);
	ctl_jw_obj_end(&w);
}

/* ---- trace events -------------------------------------------------------------------- */

/* "12345.678901" or "12345": a JSON number without sign or exponent. */
static int plain_number(const char *s)
{
	size_t n = strspn(s, "0123456789");

	if (!n || (s[0] == '0' && n > 1))
		return 0;
	if (s[n] == '\0')
		return 1;
	if (s[n] != '.')
		return 0;
	s += n + 1;
	n = strspn(s, "0123456789");
	return n && s[n] == '\0';
}

static int parse_u32_field(const char **p, const char *name, uint32_t *out)
{
	size_t n = strlen(name);
	uint64_t v = 0;
	const char *q;

	if (strncmp(*p, name, n))
		return -1;
	q = *p + n;
	if (*q < '0' || *q > '9')
		return -1;
	while (*q >= '0' && *q <= '9') {
		v = v * 10 + (uint64_t)(*q - '0');
		if (v > UINT32_MAX)
			return -1;
		q++;
	}
	*out = (uint32_t)v;
	*p = q;
	return 0;
}

static void skip_spaces(const char **p)
{
	while (**p == ' ')
		(*p)++;
}

int ctl_trace_parse(const char *line, struct ctl_trace_event *ev)
{
	static const char tag[] = CTL_TRACE_EVENT ": ";
	const char *p = strstr(line, tag), *q, *t;
	uint32_t frac;
	size_t n;

	memset(ev, 0, sizeof(*ev));
	if (!p || (p != line && p[-1] != ' '))
		return -1;

	/* Before the tag: "<task>-<pid> [cpu] <flags> <timestamp>: ". */
	for (q = p; q > line && q[-1] == ' '; q--)
		;
	if (q > line && q[-1] == ':') {
		q--;
		for (t = q; t > line && t[-1] != ' '; t--)
			;
		n = (size_t)(q - t);
		if (n < sizeof(ev->time)) {
			memcpy(ev->time, t, n);
			ev->time[n] = '\0';
			if (!plain_number(ev->time))
				ev->time[0] = '\0';
		}
	}
	for (t = line; *t == ' '; t++)
		;
	q = strstr(t, " [");
	if (q && q < p) {
		n = (size_t)(q - t);
		while (n > 0 && t[n - 1] == ' ')
			n--;
		if (n >= sizeof(ev->task))
			n = sizeof(ev->task) - 1;
		memcpy(ev->task, t, n);
		ev->task[n] = '\0';
	}

	p += strlen(tag);
	if (parse_u32_field(&p, "ctx=", &ev->ctx_id))
		return -1;
	skip_spaces(&p);
	if (parse_u32_field(&p, "sub=", &ev->sub_id))
		return -1;
	skip_spaces(&p);
	if (parse_u32_field(&p, "old=", &ev->old_limit))
		return -1;
	skip_spaces(&p);
	if (parse_u32_field(&p, "new=", &ev->new_limit))
		return -1;
	skip_spaces(&p);
	if (strncmp(p, "mode=", 5))
		return -1;
	p += 5;
	n = strcspn(p, " ");
	if (!n || n >= sizeof(ev->mode))
		return -1;
	memcpy(ev->mode, p, n);
	ev->mode[n] = '\0';
	p += n;
	skip_spaces(&p);
	if (parse_u32_field(&p, "r=", &ev->r_permille) || *p != '.')
		return -1;
	q = p + 1;
	if (strspn(q, "0123456789") != 3)
		return -1;
	frac = (uint32_t)((q[0] - '0') * 100 + (q[1] - '0') * 10 + (q[2] - '0'));
	if (ev->r_permille > (UINT32_MAX - frac) / 1000)
		return -1;
	ev->r_permille = ev->r_permille * 1000 + frac;
	p = q + 3;
	skip_spaces(&p);
	if (strncmp(p, "tput=", 5))
		return -1;
	p += 5;
	n = strspn(p, "0123456789");
	if (!n || n > 20)
		return -1;
	{
		char num[24];

		memcpy(num, p, n);
		num[n] = '\0';
		if (ctl_parse_u64(num, &ev->tput))
			return -1;
	}
	return 0;
}

void ctl_trace_print(FILE *f, const struct ctl_trace_event *ev, int json)
{
	if (!json) {
		fprintf(f, "%-14s ctx %u sub %u limit %u -> %u mode %s r %u.%03u tput %" PRIu64 "\n",
			ev->time[0] ? ev->time : "-", ev->ctx_id, ev->sub_id,
			ev->old_limit, ev->new_limit, ev->mode,
			ev->r_permille / 1000, ev->r_permille % 1000, ev->tput);
		return;
	}
	fputs("{\"time\": ", f);
	fputs(ev->time[0] ? ev->time : "null", f);
	fprintf(f, ", \"ctx\": %u, \"sub\": %u, \"old_limit\": %u, \"new_limit\": %u, \"mode\": ",
		ev->ctx_id, ev->sub_id, ev->old_limit, ev->new_limit);
	ctl_json_string(f, ev->mode, strlen(ev->mode));
	fprintf(f, ", \"r_permille\": %u, \"tput\": %" PRIu64 ", \"task\": ",
		ev->r_permille, ev->tput);
	ctl_json_string(f, ev->task, strlen(ev->task));
	fputs("}\n", f);
}
