/* SPDX-License-Identifier: GPL-2.0 */
/*
 * iopactl: inspect and tune the iopa module (/dev/iopa, sysfs, tracefs).
 *
 * The program is split by what a piece needs:
 *
 *   parse.c   the command line, NAME=VALUE assignments, the tables of
 *             tunables, module totals and names (pure: no system calls)
 *   json.c    a JSON writer (string escaping) and a small strict JSON
 *             parser (pure; the parser is also used by ctl-load)
 *   render.c  status as text and JSON, the watch screen, trace lines,
 *             all from a struct ctl_snapshot (pure)
 *   sys.c     everything that touches the system: sysfs, /dev/iopa,
 *             tracefs, the terminal
 *   iopactl.c main() and the commands
 *
 * The pure parts are tested on the host by test-iopactl.c (make test).
 */
#ifndef IOPACTL_H
#define IOPACTL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/iopa.h>

#define IOPACTL_VERSION		"1.0"

/* Exit statuses (documented in iopactl.8). */
#define CTL_EXIT_OK		0
#define CTL_EXIT_FAIL		1	/* kernel refused, I/O error, no module */
#define CTL_EXIT_USAGE		2	/* bad command line */

#define CTL_SYSFS_DIR		"/sys/class/misc/" IOPA_DEV_NAME
#define CTL_DEV_PATH		"/dev/" IOPA_DEV_NAME

/* ---- tables (parse.c) --------------------------------------------------- */

enum ctl_tunable_kind {
	CTL_TUN_UINT,		/* an unsigned decimal in [min, max] */
	CTL_TUN_POLICY,		/* a policy name: CTL_POLICY_NAMES */
};

/**
 * struct ctl_tunable - one file of /sys/class/misc/iopa/
 * @name: the file's name
 * @kind: CTL_TUN_*
 * @min: smallest accepted value (CTL_TUN_UINT), from the ABI document
 * @max: largest accepted value (CTL_TUN_UINT)
 *
 * The ranges only word the messages: the kernel is the judge of a value.
 */
struct ctl_tunable {
	const char		*name;
	enum ctl_tunable_kind	kind;
	uint32_t		min;
	uint32_t		max;
};

#define CTL_NR_TUNABLES		17
#define CTL_NR_TOTALS		12
extern const struct ctl_tunable ctl_tunables[CTL_NR_TUNABLES];
/* The files of /sys/class/misc/iopa/stats/. */
extern const char *const ctl_totals[CTL_NR_TOTALS];

const struct ctl_tunable *ctl_tunable_find(const char *name, size_t len);
int ctl_tunable_index(const char *name);
int ctl_total_index(const char *name);

const char *ctl_mode_name(uint32_t mode);	/* NULL if unknown */
const char *ctl_policy_name(uint32_t policy);	/* NULL if unknown */
/* IOPA_POLICY_* of a policy name ("bracket": 3), -1 if unknown. */
int ctl_policy_index(const char *name);
/* The policy names, for messages. */
#define CTL_POLICY_NAMES	"iopa, hillclimb or bracket"
const char *ctl_order_name(uint32_t order);	/* NULL if unknown */
/* Name of feature bit @bit (0..63), NULL if unknown. */
const char *ctl_feature_name(unsigned int bit);

/* ---- the command line (parse.c) ----------------------------------------- */

enum ctl_cmd {
	CTL_CMD_NONE,
	CTL_CMD_HELP,
	CTL_CMD_VERSION,
	CTL_CMD_STATUS,
	CTL_CMD_SET,
	CTL_CMD_GET,
	CTL_CMD_WATCH,
	CTL_CMD_TRACE,
	CTL_CMD_METRICS,
	CTL_CMD_SUB,
};

/**
 * struct ctl_sub_cmd - what `iopactl sub CTX.SUB ...` asks
 * @ctx_id: the submitter's context
 * @sub_id: the submitter
 * @has_limit: limit= given: @limit, 0 for "adapt"
 * @limit: 1..IOPA_LIMIT_MAX pins, 0 adapts again
 * @has_min: min= given
 * @min: lower bound, 0 for none
 * @has_max: max= given
 * @max: upper bound, 0 for none
 * @has_weight: weight= given
 * @weight: IOPA_WEIGHT_MIN..IOPA_WEIGHT_MAX
 * @policy: IOPA_POLICY_*, IOPA_POLICY_KEEP if not given
 */
struct ctl_sub_cmd {
	uint32_t	ctx_id;
	uint32_t	sub_id;
	int		has_limit;
	uint32_t	limit;
	int		has_min;
	uint32_t	min;
	int		has_max;
	uint32_t	max;
	int		has_weight;
	uint32_t	weight;
	uint32_t	policy;
};

/**
 * struct ctl_assign - one NAME=VALUE of `iopactl set`
 * @tun: the tunable
 * @text: the assignment as given (for messages)
 * @value: what is written to the file: the decimal without leading
 *	zeros, or the policy name (points into @text or a constant)
 */
struct ctl_assign {
	const struct ctl_tunable	*tun;
	const char			*text;
	const char			*value;
};

/**
 * struct ctl_opts - a parsed command line
 * @cmd: CTL_CMD_*
 * @json: --json (status, trace; watch: one JSON object per line and
 *	interval)
 * @lines: watch --lines: one line per submitter and interval, no screen
 * @interval_ms: watch --interval (given in seconds), 0 for the default
 *	(normal_cycle_ms)
 * @count: watch/trace --count, 0 for no limit
 * @get_name: get: the file, relative to the sysfs directory
 *	("max_jobs", "stats/submitted")
 * @nr_assign: set: entries of @assign
 * @assign: set: the assignments, in command-line order (allocated)
 */
struct ctl_opts {
	enum ctl_cmd		cmd;
	int			json;
	int			prometheus;	/* metrics --format prometheus */
	int			format_set;	/* metrics --format given */
	const char		*textfile;	/* metrics --textfile DIR */
	int			lines;
	uint32_t		interval_ms;
	uint64_t		count;
	const char		*get_name;
	size_t			nr_assign;
	struct ctl_assign	*assign;
	struct ctl_sub_cmd	sub;
};

/*
 * Parse argv into @o.  Returns CTL_EXIT_OK, or CTL_EXIT_USAGE with a
 * message (without "iopactl: " and newline) in @err.
 */
int ctl_parse_cmdline(int argc, char **argv, struct ctl_opts *o,
		      char *err, size_t errlen);
void ctl_opts_free(struct ctl_opts *o);

/* One NAME=VALUE; same return convention. */
int ctl_parse_assign(const char *arg, struct ctl_assign *a,
		     char *err, size_t errlen);

/* Decimal digits only, 1..20 of them, fitting uint64_t. */
int ctl_parse_u64(const char *s, uint64_t *out);

/*
 * A duration: seconds with up to 3 decimals ("2", "0.5", "1.25s") or
 * milliseconds with an "ms" suffix ("250ms"); 0 and -1 on error.
 */
int ctl_parse_duration_ms(const char *s, uint64_t *ms);

/*
 * The message for a write of @a refused with @err (a positive errno):
 * "max_jobs=0: invalid value (range 1..1048576)", "max_jobs=5: need
 * root (Permission denied)", ...
 */
void ctl_set_error_message(const struct ctl_assign *a, int err,
			   char *buf, size_t len);

extern const char ctl_usage_text[];

/* ---- JSON (json.c) ------------------------------------------------------ */

/* Write @len bytes of @s as a JSON string, quotes included. */
void ctl_json_string(FILE *f, const char *s, size_t len);
/* Length of the valid UTF-8 sequence at @s (1..4), 0 if not valid. */
size_t ctl_utf8_seq_len(const unsigned char *s, size_t len);

/* A tiny pretty-printing writer with commas and indentation handled. */
struct ctl_jw {
	FILE		*f;
	int		depth;
	int		compact;
	int		first[32];
};

void ctl_jw_init(struct ctl_jw *w, FILE *f);
/* The same, all on one line (JSON lines): no newline but the last. */
void ctl_jw_init_compact(struct ctl_jw *w, FILE *f);
void ctl_jw_obj_begin(struct ctl_jw *w, const char *key);
void ctl_jw_obj_end(struct ctl_jw *w);
void ctl_jw_arr_begin(struct ctl_jw *w, const char *key);
void ctl_jw_arr_end(struct ctl_jw *w);
void ctl_jw_u64(struct ctl_jw *w, const char *key, uint64_t v);
void ctl_jw_s64(struct ctl_jw *w, const char *key, int64_t v);
void ctl_jw_bool(struct ctl_jw *w, const char *key, int v);
void ctl_jw_null(struct ctl_jw *w, const char *key);
void ctl_jw_str(struct ctl_jw *w, const char *key, const char *s);
void ctl_jw_strn(struct ctl_jw *w, const char *key, const char *s,
		 size_t len);
/* A number given as text (must be a valid JSON number). */
void ctl_jw_raw(struct ctl_jw *w, const char *key, const char *num);

enum ctl_jtype { CTL_J_NULL, CTL_J_BOOL, CTL_J_NUM, CTL_J_STR, CTL_J_ARR,
		 CTL_J_OBJ };

/**
 * struct ctl_jv - a parsed JSON value
 * @type: CTL_J_*
 * @b: CTL_J_BOOL: 0 or 1
 * @s: CTL_J_NUM: the number's text; CTL_J_STR: the decoded string (NUL
 *	terminated; may hold NULs, see @len)
 * @len: length of @s
 * @n: CTL_J_ARR, CTL_J_OBJ: number of members
 * @keys: CTL_J_OBJ: member names (decoded)
 * @kids: CTL_J_ARR, CTL_J_OBJ: members
 */
struct ctl_jv {
	enum ctl_jtype	type;
	int		b;
	char		*s;
	size_t		len;
	size_t		n;
	char		**keys;
	struct ctl_jv	*kids;
};

/*
 * Parse @len bytes of JSON (RFC 8259, strict: one value, valid UTF-8, no
 * raw control characters in strings, nesting at most 64 deep).  Returns
 * NULL with a message in @err on error.
 */
struct ctl_jv *ctl_json_parse(const char *text, size_t len,
			      char *err, size_t errlen);
void ctl_json_free(struct ctl_jv *v);
/* Member @key of object @v, NULL if @v is no object or has none. */
const struct ctl_jv *ctl_json_get(const struct ctl_jv *v, const char *key);
/* A non-negative integer number: 0, or -1 if @v is not one. */
int ctl_json_u64(const struct ctl_jv *v, uint64_t *out);

/* ---- the snapshot (filled by sys.c, rendered by render.c) --------------- */

/* A sysfs value: @ok if it was read, the number in @u, the text in @s. */
struct ctl_value {
	int		ok;
	uint64_t	u;
	char		s[32];
};

enum ctl_scope {
	CTL_SCOPE_NONE,		/* no listing (see the notes) */
	CTL_SCOPE_ALL,		/* every context (IOPA_LIST_F_ALL) */
	CTL_SCOPE_OWN,		/* only iopactl's own context */
};

/* The most devices the module remembers a knee of (kernel/knee.c: 63). */
#define CTL_MAX_KNEES		64

/**
 * struct ctl_knee - one line of /sys/class/misc/iopa/knees
 * @major: the device's major number
 * @minor: its minor number
 * @knee: the jobs in flight a start-up begins at
 * @diskseq: the disk's sequence number (0: not known)
 * @src: "learned" or "set"
 * @job_kb: KiB a job of the workload the knee was found with (0: not
 *	known, or a module without the field)
 */
struct ctl_knee {
	uint32_t	major;
	uint32_t	minor;
	uint32_t	knee;
	uint64_t	diskseq;
	char		src[8];
	uint32_t	job_kb;
};

/*
 * Parse the knees file's text: one "MAJ:MIN knee=N diskseq=S src=W
 * [job_kb=K]" line per device.  Returns the devices (at most @max written), or
 * -EINVAL for a line in another format.  Pure (parse.c).
 */
int ctl_knees_parse(const char *text, struct ctl_knee *k, size_t max);

/**
 * struct ctl_snapshot - what iopactl knows of the module at one moment
 * @module_loaded: /sys/class/misc/iopa exists
 * @version: /sys/module/iopa/version, "" if absent
 * @srcversion: /sys/module/iopa/srcversion, "" if absent
 * @dev_err: 0 if /dev/iopa was opened, else the errno of open()
 * @feat_err: 0 if @feat holds IOPA_IOC_GET_FEATURES' answer, else errno
 * @feat: the features
 * @tun: the tunables, indexed as ctl_tunables
 * @tot: the module totals, indexed as ctl_totals
 * @scope: which submitters @subs holds
 * @list_err: errno of IOPA_IOC_LIST_SUBMITTERS with IOPA_LIST_F_ALL (0 ok)
 * @own_err: errno of the fallback without the flag (0 ok)
 * @no_list: the module cannot list (no IOPA_FEAT_LIST, or ENOTTY)
 * @total: submitters the kernel reported (may exceed @nr)
 * @nr: entries of @subs
 * @subs: the submitters, in the kernel's order
 * @knees_err: 0 if @knees holds the knees file, else the errno of
 *	reading or parsing it (ENOENT: a module without knees)
 * @nr_knees: entries of @knees
 * @knees: the devices' remembered knees
 */
struct ctl_snapshot {
	int			module_loaded;
	char			version[64];
	char			srcversion[64];
	int			dev_err;
	int			feat_err;
	struct iopa_features	feat;
	struct ctl_value	tun[CTL_NR_TUNABLES];
	struct ctl_value	tot[CTL_NR_TOTALS];
	enum ctl_scope		scope;
	int			list_err;
	int			own_err;
	int			no_list;
	uint32_t		total;
	size_t			nr;
	struct iopa_sub_info	*subs;
	int			knees_err;
	size_t			nr_knees;
	struct ctl_knee		knees[CTL_MAX_KNEES];
};

/* ---- rendering (render.c) ----------------------------------------------- */

void ctl_snapshot_free(struct ctl_snapshot *s);

/*
 * The notes a snapshot calls for (device not opened, no listing, root
 * needed...), as sentences without newline.  Returns how many were
 * written to @notes (at most @max), each in a buffer of @len bytes.
 */
size_t ctl_snapshot_notes(const struct ctl_snapshot *s, char (*notes)[256],
			  size_t max);

void ctl_render_status_text(FILE *f, const struct ctl_snapshot *s);
void ctl_render_status_json(FILE *f, const struct ctl_snapshot *s);
/*
 * watch --json: one line, an object with the time (@time_ms, Unix epoch
 * milliseconds), whether the module is loaded, its totals and its
 * submitters as in status --json.
 */
void ctl_render_watch_json(FILE *f, const struct ctl_snapshot *s,
			   int64_t time_ms);
/*
 * watch --lines: the column titles if @titles, then one line per
 * submitter (by ctx, sub), each starting with @stamp; "STAMP -" and a
 * note when there is none to show.
 */
void ctl_render_watch_lines(FILE *f, const struct ctl_snapshot *s,
			    const char *stamp, int titles);

/*
 * Copy the comm @comm (at most 16 bytes, NUL terminated or not) to @out
 * (@len >= 2) with every byte outside printable ASCII replaced by '?'.
 */
void ctl_sanitize_comm(const char *comm, char *out, size_t len);

/* @v in at most 5 characters: 12345, 123k, 12.3M ... 18.4E. */
void ctl_fmt_si(uint64_t v, char buf[8]);
/*
 * @us microseconds as milliseconds in at most 4 characters: 0.05, 9.99,
 * 12.3, 9999; then seconds (12s, 999s) and minutes (71m).
 */
void ctl_fmt_ms(uint32_t us, char buf[8]);
/* The module reports the times of struct iopa_state (IOPA_FEAT_TIMES). */
int ctl_has_times(const struct ctl_snapshot *s);

#define CTL_WATCH_MAX_COLS	80

/**
 * struct ctl_screen - one frame of `iopactl watch`
 * @nr: lines used
 * @line: the lines, NUL terminated, none longer than the width asked for
 */
struct ctl_screen {
	size_t	nr;
	size_t	max;
	char	(*line)[CTL_WATCH_MAX_COLS + 1];
};

/*
 * Lay out a watch frame for a terminal of @rows x @cols (cols capped at
 * CTL_WATCH_MAX_COLS): a header of totals, column titles, one line per
 * submitter by bytes/s (then jobs/s) descending, as many as fit.  A
 * submitter's line fills the 80 columns: CTX.SUB, COMM (11), POL (iopa,
 * hill, brkt), MODE, LIMIT, INFL, PEND, BYTES/S, JOBS/S, R, and the last
 * cycle's mean WAIT and SVC times in ms (ctl_fmt_ms()); no PID (status
 * has it).
 * @scr->line must have room for @rows lines (@scr->max).
 */
void ctl_watch_layout(const struct ctl_snapshot *s, unsigned int rows,
		      unsigned int cols, struct ctl_screen *scr);

/**
 * struct ctl_trace_event - one iopa_limit_change line of trace_pipe
 * @time: the timestamp as printed ("63.720404"), "" if none was found
 * @ctx_id: ctx=
 * @sub_id: sub=
 * @old_limit: old=
 * @new_limit: new=
 * @mode: mode= (a name, or what the kernel printed)
 * @r_permille: r=, in 1/1000
 * @tput: tput=
 * @task: the task column (e.g. "kworker/u8:0-12"), "" if none
 */
struct ctl_trace_event {
	char		time[32];
	uint32_t	ctx_id;
	uint32_t	sub_id;
	uint32_t	old_limit;
	uint32_t	new_limit;
	char		mode[16];
	uint32_t	r_permille;
	uint64_t	tput;
	char		task[48];
};

#define CTL_TRACE_EVENT		"iopa_limit_change"

/* Parse one trace_pipe line; 0 if it is an iopa_limit_change event. */
int ctl_trace_parse(const char *line, struct ctl_trace_event *ev);
void ctl_trace_print(FILE *f, const struct ctl_trace_event *ev, int json);

/* ---- metrics (metrics.c) ------------------------------------------------ */

/**
 * struct ctl_metrics_opts - how `iopactl metrics` prints
 * @openmetrics: 1: the OpenMetrics text format (with # EOF); 0: the
 *	Prometheus text format 0.0.4 (node_exporter's textfile collector)
 * @cgroup_path: the path of cgroup (v2) @id below the cgroup2 root
 *	("/" for the root), NULL if unknown; NULL: no cgroup paths
 * @arg: its second argument
 */
struct ctl_metrics_opts {
	int		openmetrics;
	const char	*(*cgroup_path)(uint64_t id, void *arg);
	void		*arg;
};

/*
 * The snapshot as metrics: module info and totals, the shared devices'
 * budget, knee and sharers, and per submitter (labels ctx, sub, pid,
 * comm, cgroup, device) its limit, mode, jobs, bytes and, with
 * IOPA_FEAT_METRICS, the cumulative counters and the queue-wait and
 * service-time histograms.
 */
void ctl_render_metrics(FILE *f, const struct ctl_snapshot *s,
			const struct ctl_metrics_opts *mo);
/*
 * Without the module: a valid exposition saying so (iopa_module_loaded
 * 0), so that a scraper or a textfile collector does not keep serving
 * the last numbers.
 */
void ctl_render_metrics_absent(FILE *f, const struct ctl_metrics_opts *mo);

#endif /* IOPACTL_H */
