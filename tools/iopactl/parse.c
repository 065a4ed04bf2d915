// SPDX-License-Identifier: GPL-2.0
/*
 * iopactl: the tables of tunables and names, the command line and the
 * NAME=VALUE assignments of `iopactl set`.  No system calls here: the
 * host tests (test-iopactl.c) drive these functions directly.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "iopactl.h"

/*
 * The tunables of Documentation/ABI/testing/sysfs-class-misc-iopa, in
 * the order of that document, with its ranges.
 */
const struct ctl_tunable ctl_tunables[CTL_NR_TUNABLES] = {
	{ "max_jobs",		CTL_TUN_UINT,	1, 1048576 },
	{ "max_submitters",	CTL_TUN_UINT,	1, 65536 },
	{ "max_user_submitters", CTL_TUN_UINT,	1, 1048576 },
	{ "max_workers",	CTL_TUN_UINT,	1, 65536 },
	{ "max_total_jobs",	CTL_TUN_UINT,	1, 16777216 },
	{ "learn_knees",	CTL_TUN_UINT,	0, 1 },
	{ "increase_threshold",	CTL_TUN_UINT,	1001, 10000 },
	{ "decrease_threshold",	CTL_TUN_UINT,	1, 999 },
	{ "fast_cycle_ms",	CTL_TUN_UINT,	1, 3600000 },
	{ "normal_cycle_ms",	CTL_TUN_UINT,	1, 3600000 },
	{ "hold_cycle_ms",	CTL_TUN_UINT,	1, 3600000 },
	{ "history",		CTL_TUN_UINT,	1, 8 },
	{ "init_limit",		CTL_TUN_UINT,	0, 4096 },
	{ "fast_cap",		CTL_TUN_UINT,	0, 4096 },
	{ "max_limit",		CTL_TUN_UINT,	1, 4096 },
	{ "gain_threshold",	CTL_TUN_UINT,	1001, 10000 },
	{ "default_policy",	CTL_TUN_POLICY,	0, 0 },
};

const char *const ctl_totals[CTL_NR_TOTALS] = {
	"contexts", "submitters", "workers",
	"submitted", "dispatched", "completed", "cancelled", "requeued",
	"pending", "inflight", "unreaped", "jobs",
};

static const char *const ctl_modes[] = {
	[IOPA_MODE_FAST]	= "fast",
	[IOPA_MODE_NORMAL]	= "normal",
	[IOPA_MODE_HOLD]	= "hold",
	[IOPA_MODE_FIXED]	= "fixed",
	[IOPA_MODE_PROBE]	= "probe",
	[IOPA_MODE_STEADY]	= "steady",
};

static const char *const ctl_policies[] = {
	[IOPA_POLICY_IOPA]	= "iopa",
	[IOPA_POLICY_HILLCLIMB]	= "hillclimb",
	[IOPA_POLICY_BRACKET]	= "bracket",
};

static const char *const ctl_orders[] = {
	[IOPA_ORDER_FIFO]	= "fifo",
	[IOPA_ORDER_SORTED]	= "sorted",
	[IOPA_ORDER_CSCAN]	= "cscan",
};

static const char *const ctl_features[] = {
	"ioctl", "poll", "adaptive", "uring_cmd", "order", "list", "bracket",
	"times", "share", "lease", "borrow", "batch", "uring_batch",
	"metrics", "admin", "turns",
};

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

const struct ctl_tunable *ctl_tunable_find(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < CTL_NR_TUNABLES; i++)
		if (strlen(ctl_tunables[i].name) == len &&
		    !memcmp(ctl_tunables[i].name, name, len))
			return &ctl_tunables[i];
	return NULL;
}

int ctl_tunable_index(const char *name)
{
	const struct ctl_tunable *t = ctl_tunable_find(name, strlen(name));

	return t ? (int)(t - ctl_tunables) : -1;
}

int ctl_total_index(const char *name)
{
	size_t i;

	for (i = 0; i < CTL_NR_TOTALS; i++)
		if (!strcmp(ctl_totals[i], name))
			return (int)i;
	return -1;
}

const char *ctl_mode_name(uint32_t mode)
{
	return mode < ARRAY_SIZE(ctl_modes) ? ctl_modes[mode] : NULL;
}

const char *ctl_policy_name(uint32_t policy)
{
	return policy < ARRAY_SIZE(ctl_policies) ? ctl_policies[policy] : NULL;
}

int ctl_policy_index(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(ctl_policies); i++)
		if (ctl_policies[i] && !strcmp(ctl_policies[i], name))
			return (int)i;
	return -1;
}

const char *ctl_order_name(uint32_t order)
{
	return order < ARRAY_SIZE(ctl_orders) ? ctl_orders[order] : NULL;
}

const char *ctl_feature_name(unsigned int bit)
{
	return bit < ARRAY_SIZE(ctl_features) ? ctl_features[bit] : NULL;
}

/* ---- numbers and assignments ---------------------------------------------- */

int ctl_parse_u64(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d;

		if (*s < '0' || *s > '9')
			return -EINVAL;
		d = (unsigned int)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

/*
 * One "MAJ:MIN knee=N diskseq=S src=W [job_kb=K]" line, NUL- or
 * newline-ended (job_kb: added in November 2026; older modules have none).
 */
static int knee_line(const char *l, struct ctl_knee *k)
{
	unsigned long long maj, min, knee, seq, kb = 0;
	char src[8];
	int n = 0, m = 0;

	if (sscanf(l, "%llu:%llu knee=%llu diskseq=%llu src=%7[a-z]%n", &maj,
		   &min, &knee, &seq, src, &n) != 5)
		return -EINVAL;
	if (!strncmp(l + n, " job_kb=", 8) &&
	    (sscanf(l + n, " job_kb=%llu%n", &kb, &m) != 1 || kb > UINT32_MAX))
		return -EINVAL;
	n += m;
	if ((l[n] && l[n] != '\n') || maj > UINT32_MAX || min > UINT32_MAX ||
	    !knee || knee > UINT32_MAX ||
	    (strcmp(src, "learned") && strcmp(src, "set")))
		return -EINVAL;
	k->major = (uint32_t)maj;
	k->minor = (uint32_t)min;
	k->knee = (uint32_t)knee;
	k->diskseq = seq;
	memcpy(k->src, src, sizeof(k->src));
	k->job_kb = (uint32_t)kb;
	return 0;
}

int ctl_knees_parse(const char *text, struct ctl_knee *k, size_t max)
{
	const char *l = text;
	int n = 0;

	while (*l) {
		struct ctl_knee one;

		if (knee_line(l, &one))
			return -EINVAL;
		if ((size_t)n < max)
			k[n] = one;
		n++;
		l = strchr(l, '\n');
		if (!l)
			break;
		l++;
	}
	return (size_t)n < max ? n : (int)max;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return CTL_EXIT_USAGE;
}

/*
 * The value is checked for syntax only: unsigned decimal digits (the
 * kernel's kstrtouint(..., 0, ...) would read a leading 0 as octal and
 * 0x as hex, so the canonical decimal is written), or a policy name.
 * Whether it is in range is the kernel's decision: this table may be
 * older than the module.
 */
int ctl_parse_assign(const char *arg, struct ctl_assign *a,
		     char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	const char *v;

	if (!eq)
		return fail(err, errlen, "%s: expected NAME=VALUE", arg);
	if (eq == arg)
		return fail(err, errlen, "%s: no tunable name before '='", arg);
	a->text = arg;
	a->tun = ctl_tunable_find(arg, (size_t)(eq - arg));
	if (!a->tun)
		return fail(err, errlen,
			    "%.*s: unknown tunable (see iopactl --help)",
			    (int)(eq - arg), arg);
	v = eq + 1;
	if (!*v)
		return fail(err, errlen, "%s: no value after '='", arg);
	if (a->tun->kind == CTL_TUN_POLICY) {
		if (ctl_policy_index(v) < 0)
			return fail(err, errlen, "%s: not a policy (%s)", arg,
				    CTL_POLICY_NAMES);
		a->value = v;
		return CTL_EXIT_OK;
	}
	if (strspn(v, "0123456789") != strlen(v))
		return fail(err, errlen,
			    "%s: the value must be an unsigned decimal number",
			    arg);
	while (v[0] == '0' && v[1])
		v++;
	a->value = v;
	return CTL_EXIT_OK;
}

void ctl_set_error_message(const struct ctl_assign *a, int err,
			   char *buf, size_t len)
{
	const struct ctl_tunable *t = a->tun;

	switch (err) {
	case EINVAL:
	case ERANGE:
		if (t->kind == CTL_TUN_POLICY)
			snprintf(buf, len, "%s: invalid value (%s)", a->text,
				 CTL_POLICY_NAMES);
		else
			snprintf(buf, len, "%s: invalid value (range %u..%u)",
				 a->text, t->min, t->max);
		break;
	case EACCES:
	case EPERM:
		snprintf(buf, len, "%s: need root (%s)", a->text,
			 strerror(err));
		break;
	case ENOENT:
		snprintf(buf, len,
			 "%s: no such tunable in this iopa module, or the module is not loaded",
			 a->text);
		break;
	default:
		snprintf(buf, len, "%s: %s", a->text, strerror(err));
		break;
	}
}

/* ---- the command line ----------------------------------------------------- */

const char ctl_usage_text[] =
	"usage: iopactl status [-j|--json]\n"
	"       iopactl set NAME=VALUE [NAME=VALUE...]\n"
	"       iopactl get NAME\n"
	"       iopactl watch|top [-i|--interval SECONDS] [-n|--count N]\n"
	"                         [-l|--lines | -j|--json]\n"
	"       iopactl trace [-n|--count N] [-j|--json]\n"
	"       iopactl metrics [-f|--format openmetrics|prometheus]\n"
	"                       [-t|--textfile DIR]\n"
	"       iopactl sub CTX.SUB [limit=N|adapt] [min=N] [max=N] [weight=N]\n"
	"                           [policy=NAME]\n"
	"       iopactl -h|--help | -V|--version\n"
	"\n"
	"  status     module version, ABI features, tunables, totals and the\n"
	"             submitters of every context (root: CAP_SYS_ADMIN)\n"
	"  set        write tunables in order, stopping at the first refusal\n"
	"  get        print one tunable, or stats/NAME\n"
	"  watch      a live view, one line per submitter by bytes/s\n"
	"             (q or Ctrl-C quits; default interval: normal_cycle_ms);\n"
	"             --lines: a line per submitter and interval, for logs;\n"
	"             --json: a JSON object per interval, one per line\n"
	"  trace      follow the iopa_limit_change trace event (root)\n"
	"  metrics    the totals, shared devices and submitters (root: every\n"
	"             context) as OpenMetrics text, or Prometheus text 0.0.4\n"
	"             for node_exporter's textfile collector (--textfile DIR:\n"
	"             into DIR/iopa.prom, replaced whole); without the module\n"
	"             iopa_module_loaded 0\n"
	"  sub        root: pin (limit=N) or free (limit=adapt) the limit of\n"
	"             any process's submitter, set its bounds, weight or\n"
	"             policy (CTX.SUB as status shows it)\n"
	"\n"
	"  SECONDS may have decimals (0.5) or be given in ms (250ms);\n"
	"  options take their value joined or apart (-n1, -n 1, --count=1);\n"
	"  -- ends the options\n"
	"\n"
	"tunables (/sys/class/misc/iopa/):\n"
	"  max_jobs 1..1048576        max_submitters 1..65536\n"
	"  max_user_submitters 1..1048576\n"
	"  max_workers 1..65536       max_total_jobs 1..16777216\n"
	"  learn_knees 0..1\n"
	"  increase_threshold 1001..10000   decrease_threshold 1..999\n"
	"  fast_cycle_ms, normal_cycle_ms, hold_cycle_ms 1..3600000\n"
	"  history 1..8               init_limit 0..4096\n"
	"  fast_cap 0..4096           max_limit 1..4096\n"
	"  gain_threshold 1001..10000\n"
	"  default_policy iopa|hillclimb|bracket\n"
	"\n"
	"exit status: 0 ok, 1 refused by the kernel or failed, 2 usage\n";

int ctl_parse_duration_ms(const char *s, uint64_t *ms)
{
	uint64_t whole = 0, frac = 0;
	unsigned int decimals = 0;
	const char *p = s;

	if (!*p)
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > 100000000)
			return -ERANGE;
	}
	if (!strcmp(p, "ms")) {
		if (p == s)
			return -EINVAL;
		*ms = whole;
		return 0;
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (++decimals > 3)
				return -EINVAL;
			frac = frac * 10 + (uint64_t)(*p - '0');
		}
		if (!decimals)
			return -EINVAL;
	} else if (p == s) {
		return -EINVAL;
	}
	if (*p && strcmp(p, "s"))
		return -EINVAL;
	while (decimals++ < 3)
		frac *= 10;
	*ms = whole * 1000 + frac;
	return 0;
}

/*
 * The command's options, with getopt_long(3): argv[0] is the command.
 * Options and operands may mix; "--" ends the options.  Returns the
 * index of the first operand, or -1 after setting @err.
 */
static int parse_opts(int argc, char **argv, const char *shorts,
		      const struct option *longs, struct ctl_opts *o,
		      char *err, size_t errlen)
{
	const char *cmd = argv[0];
	uint64_t n;
	int c;

	optind = 0;	/* glibc: start afresh (parsed more than once) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		switch (c) {
		case 'j':
			o->json = 1;
			break;
		case 'l':
			o->lines = 1;
			break;
		case 't':
			if (!*optarg) {
				fail(err, errlen, "--textfile: expected a directory");
				return -1;
			}
			o->textfile = optarg;
			break;
		case 'f':
			o->format_set = 1;
			if (!strcmp(optarg, "openmetrics")) {
				o->prometheus = 0;
			} else if (!strcmp(optarg, "prometheus")) {
				o->prometheus = 1;
			} else {
				fail(err, errlen,
				     "--format: expected openmetrics or prometheus, not '%s'",
				     optarg);
				return -1;
			}
			break;
		case 'i':
			if (ctl_parse_duration_ms(optarg, &n) || n < 1 ||
			    n > 3600000) {
				fail(err, errlen,
				     "--interval: expected seconds, 0.001..3600 (or 250ms), not '%s'",
				     optarg);
				return -1;
			}
			o->interval_ms = (uint32_t)n;
			break;
		case 'n':
			if (ctl_parse_u64(optarg, &n) || n < 1) {
				fail(err, errlen,
				     "--count: expected a number >= 1, not '%s'",
				     optarg);
				return -1;
			}
			o->count = n;
			break;
		case ':':
			fail(err, errlen, "%s: option '%s' needs a value", cmd,
			     argv[optind - 1]);
			return -1;
		default:
			fail(err, errlen, "%s: unexpected argument '%s'", cmd,
			     argv[optind - 1]);
			return -1;
		}
	}
	if (o->json && o->lines) {
		fail(err, errlen, "%s: --lines and --json exclude each other",
		     cmd);
		return -1;
	}
	return optind;
}

/* A number in [lo, hi] for `sub`'s NAME=VALUE; 0 or the usage status. */
static int sub_number(const char *name, const char *v, uint32_t lo,
		      uint32_t hi, uint32_t *out, char *err, size_t errlen)
{
	uint64_t n;

	if (ctl_parse_u64(v, &n) || n < lo || n > hi)
		return fail(err, errlen, "sub: %s=%s: expected %u..%u", name, v,
			    lo, hi);
	*out = (uint32_t)n;
	return 0;
}

/* `sub CTX.SUB NAME=VALUE...`: the ids, then what to set. */
static int parse_sub(char **argv, int argc, struct ctl_sub_cmd *c,
		     char *err, size_t errlen)
{
	const char *dot = strchr(argv[0], '.');
	uint64_t a, b;
	char ids[32];
	int i, r;

	memset(c, 0, sizeof(*c));
	c->policy = IOPA_POLICY_KEEP;
	if (!dot || strlen(argv[0]) >= sizeof(ids))
		return fail(err, errlen,
			    "sub: '%s': expected CTX.SUB (as iopactl status shows it)",
			    argv[0]);
	memcpy(ids, argv[0], (size_t)(dot - argv[0]));
	ids[dot - argv[0]] = '\0';
	if (ctl_parse_u64(ids, &a) || ctl_parse_u64(dot + 1, &b) || !a || !b ||
	    a > UINT32_MAX || b > UINT32_MAX)
		return fail(err, errlen,
			    "sub: '%s': expected CTX.SUB (as iopactl status shows it)",
			    argv[0]);
	c->ctx_id = (uint32_t)a;
	c->sub_id = (uint32_t)b;
	for (i = 1; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t len = eq ? (size_t)(eq - argv[i]) : 0;
		const char *v = eq ? eq + 1 : "";

		r = 0;
		if (len == 5 && !strncmp(argv[i], "limit", 5)) {
			c->has_limit = 1;
			if (!strcmp(v, "adapt"))
				c->limit = 0;
			else
				r = sub_number("limit", v, 1, IOPA_LIMIT_MAX,
					       &c->limit, err, errlen);
		} else if (len == 3 && !strncmp(argv[i], "min", 3)) {
			c->has_min = 1;
			r = sub_number("min", v, 0, IOPA_LIMIT_MAX, &c->min, err,
				       errlen);
		} else if (len == 3 && !strncmp(argv[i], "max", 3)) {
			c->has_max = 1;
			r = sub_number("max", v, 0, IOPA_LIMIT_MAX, &c->max, err,
				       errlen);
		} else if (len == 6 && !strncmp(argv[i], "weight", 6)) {
			c->has_weight = 1;
			r = sub_number("weight", v, IOPA_WEIGHT_MIN,
				       IOPA_WEIGHT_MAX, &c->weight, err, errlen);
		} else if (len == 6 && !strncmp(argv[i], "policy", 6)) {
			int p = ctl_policy_index(v);

			if (p < 0)
				return fail(err, errlen,
					    "sub: policy=%s: expected %s", v,
					    CTL_POLICY_NAMES);
			c->policy = (uint32_t)p;
		} else {
			return fail(err, errlen,
				    "sub: '%s': expected limit=N|adapt, min=N, max=N, weight=N or policy=NAME",
				    argv[i]);
		}
		if (r)
			return r;
	}
	return CTL_EXIT_OK;
}

int ctl_parse_cmdline(int argc, char **argv, struct ctl_opts *o,
		      char *err, size_t errlen)
{
	static const struct option status_opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option watch_opts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'n' },
		{ "lines", no_argument, NULL, 'l' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option trace_opts[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option metrics_opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "textfile", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	static const struct option none[] = { { NULL, 0, NULL, 0 } };
	int cargc, first, i;
	const char *cmd;
	char **cargv;

	memset(o, 0, sizeof(*o));
	err[0] = '\0';
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			o->cmd = CTL_CMD_HELP;
			return CTL_EXIT_OK;
		}
	if (argc < 2)
		return fail(err, errlen, "no command given");
	cmd = argv[1];
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		if (argc > 2)
			return fail(err, errlen, "%s takes no argument", cmd);
		o->cmd = CTL_CMD_VERSION;
		return CTL_EXIT_OK;
	}
	if (!strcmp(cmd, "help")) {
		o->cmd = CTL_CMD_HELP;
		return CTL_EXIT_OK;
	}
	/* The command's own argv: its name, then its arguments. */
	cargc = argc - 1;
	cargv = argv + 1;

	if (!strcmp(cmd, "status")) {
		o->cmd = CTL_CMD_STATUS;
		first = parse_opts(cargc, cargv, "+j", status_opts, o, err,
				   errlen);
		if (first < 0)
			return CTL_EXIT_USAGE;
		if (first < cargc)
			return fail(err, errlen,
				    "status: unexpected argument '%s'",
				    cargv[first]);
		return CTL_EXIT_OK;
	}

	if (!strcmp(cmd, "metrics")) {
		o->cmd = CTL_CMD_METRICS;
		first = parse_opts(cargc, cargv, "+:f:t:", metrics_opts, o, err,
				   errlen);
		if (first < 0)
			return CTL_EXIT_USAGE;
		if (first < cargc)
			return fail(err, errlen,
				    "metrics: unexpected argument '%s'",
				    cargv[first]);
		/* node_exporter's textfile collector reads 0.0.4 only */
		if (o->textfile && o->format_set && !o->prometheus)
			return fail(err, errlen,
				    "metrics: --textfile writes the Prometheus format, not openmetrics");
		if (o->textfile)
			o->prometheus = 1;
		return CTL_EXIT_OK;
	}

	if (!strcmp(cmd, "sub")) {
		o->cmd = CTL_CMD_SUB;
		first = parse_opts(cargc, cargv, "+", none, o, err, errlen);
		if (first < 0)
			return CTL_EXIT_USAGE;
		if (cargc - first < 2)
			return fail(err, errlen,
				    "sub: give CTX.SUB and at least one of limit=, min=, max=, weight=, policy=");
		return parse_sub(cargv + first, cargc - first, &o->sub, err,
				 errlen);
	}

	if (!strcmp(cmd, "set")) {
		o->cmd = CTL_CMD_SET;
		/* NAME=VALUE operands only; "--" may come first. */
		first = parse_opts(cargc, cargv, "+", none, o, err, errlen);
		if (first < 0)
			return CTL_EXIT_USAGE;
		if (first >= cargc)
			return fail(err, errlen, "set: no NAME=VALUE given");
		o->assign = calloc((size_t)(cargc - first), sizeof(*o->assign));
		if (!o->assign)
			return fail(err, errlen, "out of memory");
		for (i = first; i < cargc; i++) {
			int r = ctl_parse_assign(cargv[i],
						 &o->assign[o->nr_assign],
						 err, errlen);

			if (r)
				return r;
			o->nr_assign++;
		}
		return CTL_EXIT_OK;
	}

	if (!strcmp(cmd, "get")) {
		const char *name;

		o->cmd = CTL_CMD_GET;
		first = parse_opts(cargc, cargv, "+", none, o, err, errlen);
		if (first < 0)
			return CTL_EXIT_USAGE;
		if (cargc - first != 1)
			return fail(err, errlen, "get: give exactly one NAME");
		name = cargv[first];
		if (!strncmp(name, "stats/", 6) || !strncmp(name, "stats.", 6)) {
			if (ctl_total_index(name + 6) < 0)
				return fail(err, errlen,
					    "%s: unknown module total", name);
		} else if (ctl_tunable_index(name) < 0) {
			return fail(err, errlen,
				    "%s: unknown tunable (see iopactl --help)",
				    name);
		}
		o->get_name = name;
		return CTL_EXIT_OK;
	}

	if (!strcmp(cmd, "watch") || !strcmp(cmd, "top") ||
	    !strcmp(cmd, "trace")) {
		int watch = strcmp(cmd, "trace") != 0;

		o->cmd = watch ? CTL_CMD_WATCH : CTL_CMD_TRACE;
		first = parse_opts(cargc, cargv, watch ? "+:i:n:lj" : "+:n:j",
				   watch ? watch_opts : trace_opts, o, err,
				   errlen);
		if (first < 0)
			return CTL_EXIT_USAGE;
		if (first < cargc)
			return fail(err, errlen, "%s: unexpected argument '%s'",
				    cmd, cargv[first]);
		return CTL_EXIT_OK;
	}

	return fail(err, errlen, "unknown command '%s'", cmd);
}

void ctl_opts_free(struct ctl_opts *o)
{
	free(o->assign);
	o->assign = NULL;
	o->nr_assign = 0;
}
