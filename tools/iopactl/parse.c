// SPDX-License-Identifier: GPL-2.0
/*
 * iopactl: the tables of tunables and names, the command line and the
 * NAME=VALUE assignments of `iopactl set`.  No system calls here: the
 * host tests (test-iopactl.c) drive these functions directly.
 */
#include <errno.h>
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
	{ "max_workers",	CTL_TUN_UINT,	1, 65536 },
	{ "max_total_jobs",	CTL_TUN_UINT,	1, 16777216 },
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
	"usage: iopactl status [--json]\n"
	"       iopactl set NAME=VALUE [NAME=VALUE...]\n"
	"       iopactl get NAME\n"
	"       iopactl watch|top [--interval MS] [--count N]\n"
	"       iopactl trace [--count N] [--json]\n"
	"       iopactl --help | --version\n"
	"\n"
	"  status     module version, ABI features, tunables, totals and the\n"
	"             submitters of every context (root: CAP_SYS_ADMIN)\n"
	"  set        write tunables in order, stopping at the first refusal\n"
	"  get        print one tunable, or stats/NAME\n"
	"  watch      a live view, one line per submitter by bytes/s\n"
	"             (q or Ctrl-C quits; default interval: normal_cycle_ms)\n"
	"  trace      follow the iopa_limit_change trace event (root)\n"
	"\n"
	"tunables (/sys/class/misc/iopa/):\n"
	"  max_jobs 1..1048576        max_submitters 1..65536\n"
	"  max_workers 1..65536       max_total_jobs 1..16777216\n"
	"  increase_threshold 1001..10000   decrease_threshold 1..999\n"
	"  fast_cycle_ms, normal_cycle_ms, hold_cycle_ms 1..3600000\n"
	"  history 1..8               init_limit 0..4096\n"
	"  fast_cap 0..4096           max_limit 1..4096\n"
	"  gain_threshold 1001..10000\n"
	"  default_policy iopa|hillclimb|bracket\n"
	"\n"
	"exit status: 0 ok, 1 refused by the kernel or failed, 2 usage\n";

/* "--name VALUE" or "--name=VALUE" (and the short form "-x VALUE"). */
static const char *opt_value(int argc, char **argv, int *i,
			     const char *lng, const char *shrt)
{
	const char *a = argv[*i];
	size_t n = strlen(lng);

	if (!strncmp(a, lng, n) && a[n] == '=')
		return a + n + 1;
	if (!strcmp(a, lng) || (shrt && !strcmp(a, shrt))) {
		if (*i + 1 >= argc)
			return "";
		return argv[++*i];
	}
	return NULL;
}

static int is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

int ctl_parse_cmdline(int argc, char **argv, struct ctl_opts *o,
		      char *err, size_t errlen)
{
	const char *cmd, *v;
	uint64_t n;
	int i;

	memset(o, 0, sizeof(*o));
	err[0] = '\0';
	for (i = 1; i < argc; i++)
		if (is_help(argv[i])) {
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

	if (!strcmp(cmd, "status")) {
		o->cmd = CTL_CMD_STATUS;
		for (i = 2; i < argc; i++) {
			if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
				o->json = 1;
			else
				return fail(err, errlen,
					    "status: unexpected argument '%s'",
					    argv[i]);
		}
		return CTL_EXIT_OK;
	}

	if (!strcmp(cmd, "set")) {
		o->cmd = CTL_CMD_SET;
		if (argc < 3)
			return fail(err, errlen, "set: no NAME=VALUE given");
		o->assign = calloc((size_t)(argc - 2), sizeof(*o->assign));
		if (!o->assign)
			return fail(err, errlen, "out of memory");
		for (i = 2; i < argc; i++) {
			int r = ctl_parse_assign(argv[i],
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
		if (argc != 3)
			return fail(err, errlen, "get: give exactly one NAME");
		name = argv[2];
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
		for (i = 2; i < argc; i++) {
			if (watch &&
			    (v = opt_value(argc, argv, &i, "--interval", "-i"))) {
				if (ctl_parse_u64(v, &n) || n < 1 ||
				    n > 3600000)
					return fail(err, errlen,
						    "--interval: expected milliseconds, 1..3600000, not '%s'",
						    v);
				o->interval_ms = (uint32_t)n;
			} else if ((v = opt_value(argc, argv, &i, "--count",
						  "-n"))) {
				if (ctl_parse_u64(v, &n) || n < 1)
					return fail(err, errlen,
						    "--count: expected a number >= 1, not '%s'",
						    v);
				o->count = n;
			} else if (!watch && (!strcmp(argv[i], "--json") ||
					      !strcmp(argv[i], "-j"))) {
				o->json = 1;
			} else {
				return fail(err, errlen,
					    "%s: unexpected argument '%s'",
					    cmd, argv[i]);
			}
		}
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
