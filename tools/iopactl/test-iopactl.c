// SPDX-License-Identifier: GPL-2.0
/*
 * Host tests of iopactl (`make test`): no module needed.  TAP on stdout,
 * exit status 0 only if every test passed.
 *
 *  - the command line and NAME=VALUE: accepted forms, usage errors (exit
 *    status 2) and their messages; the kernel-refusal messages; the
 *    names of policies (iopa, hillclimb, bracket) and feature bits
 *  - the tunable table against Documentation/ABI/testing/sysfs-class-misc-iopa
 *    (every file listed, same ranges)
 *  - JSON: escaping of every odd byte, the strict parser, the status JSON
 *    of fake snapshots accepted by that parser and by `python3 -m
 *    json.tool`, values read back by python3 (the last cycle's times,
 *    null without IOPA_FEAT_TIMES); every key in iopactl.8
 *  - status as text: the times columns, "-" where nothing is known
 *  - the watch screen: at most rows lines of at most min(cols, 80)
 *    columns, printable bytes only, with 0, 1 and 100 fake submitters;
 *    the columns of a submitter's line (policy short names, WAIT and SVC
 *    in ms); milliseconds in at most 4 characters
 *  - trace lines: the documented format parsed, others refused
 *  - the binary: exit statuses and messages of usage errors; without the
 *    module, status/set exit 1
 *  - with the LD_PRELOAD fake device (fake-iopa.so), if built: the
 *    listing paths of status (all, EPERM fallback, ENOTTY, no
 *    IOPA_FEAT_LIST, a list that grows, no IOPA_FEAT_TIMES), set/get
 *    against a fake sysfs (default_policy bracket),
 *    trace against a fake tracefs (trace_pipe a FIFO): events picked out,
 *    enable and tracing_on restored
 *  - the man page: groff -ww clean
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iopactl.h"

static int t_n, t_failed;

static int ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	t_n++;
	if (!cond)
		t_failed++;
	printf("%sok %d - ", cond ? "" : "not ", t_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return cond;
}

static void skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void skip(const char *fmt, ...)
{
	va_list ap;

	t_n++;
	printf("ok %d - # SKIP ", t_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static const char *outdir = "test-out";

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "r");
	size_t cap = 4096, n = 0, r;
	char *buf;

	if (!f)
		return NULL;
	buf = malloc(cap);
	while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf) {
		buf[n] = '\0';
		if (len)
			*len = n;
	}
	return buf;
}

/* ---- command line ---------------------------------------------------------- */

struct cl_case {
	const char	*args[6];
	int		rc;
	enum ctl_cmd	cmd;
	const char	*msg;		/* a substring of the error */
};

static void test_cmdline(void)
{
	static const struct cl_case cases[] = {
		{ { NULL }, 2, 0, "no command" },
		{ { "--help" }, 0, CTL_CMD_HELP, NULL },
		{ { "status", "--help" }, 0, CTL_CMD_HELP, NULL },
		{ { "help" }, 0, CTL_CMD_HELP, NULL },
		{ { "-V" }, 0, CTL_CMD_VERSION, NULL },
		{ { "--version" }, 0, CTL_CMD_VERSION, NULL },
		{ { "--version", "x" }, 2, 0, "takes no argument" },
		{ { "status" }, 0, CTL_CMD_STATUS, NULL },
		{ { "status", "--json" }, 0, CTL_CMD_STATUS, NULL },
		{ { "status", "--bogus" }, 2, 0, "unexpected argument '--bogus'" },
		{ { "set" }, 2, 0, "no NAME=VALUE" },
		{ { "set", "max_jobs=5" }, 0, CTL_CMD_SET, NULL },
		{ { "set", "max_jobs=5", "max_workers=7" }, 0, CTL_CMD_SET, NULL },
		{ { "set", "max_jobs=5", "bogus=1" }, 2, 0, "bogus: unknown tunable" },
		{ { "set", "max_jobs=x" }, 2, 0, "unsigned decimal" },
		{ { "set", "default_policy=bracket" }, 0, CTL_CMD_SET, NULL },
		{ { "set", "default_policy=fifo" }, 2, 0,
		  "default_policy=fifo: not a policy (iopa, hillclimb or bracket)" },
		{ { "get" }, 2, 0, "exactly one NAME" },
		{ { "get", "max_jobs" }, 0, CTL_CMD_GET, NULL },
		{ { "get", "default_policy" }, 0, CTL_CMD_GET, NULL },
		{ { "get", "stats/submitted" }, 0, CTL_CMD_GET, NULL },
		{ { "get", "stats.jobs" }, 0, CTL_CMD_GET, NULL },
		{ { "get", "stats/bogus" }, 2, 0, "unknown module total" },
		{ { "get", "bogus" }, 2, 0, "bogus: unknown tunable" },
		{ { "get", "max_jobs", "max_workers" }, 2, 0, "exactly one" },
		{ { "watch" }, 0, CTL_CMD_WATCH, NULL },
		{ { "top", "--interval", "0.25", "--count", "3" }, 0, CTL_CMD_WATCH, NULL },
		{ { "watch", "--interval=5", "-n", "2" }, 0, CTL_CMD_WATCH, NULL },
		{ { "watch", "-n1", "-i0.5" }, 0, CTL_CMD_WATCH, NULL },
		{ { "watch", "--count=2", "--lines" }, 0, CTL_CMD_WATCH, NULL },
		{ { "watch", "-i", "250ms", "-l" }, 0, CTL_CMD_WATCH, NULL },
		{ { "watch", "--interval", "0" }, 2, 0, "--interval" },
		{ { "watch", "--interval", "3600.001" }, 2, 0, "--interval" },
		{ { "watch", "--interval", "1e3" }, 2, 0, "--interval" },
		{ { "watch", "--interval", "1.2345" }, 2, 0, "--interval" },
		{ { "watch", "--interval", "." }, 2, 0, "--interval" },
		{ { "watch", "--interval", ".5" }, 0, CTL_CMD_WATCH, NULL },
		{ { "watch", "--interval" }, 2, 0, "--interval" },
		{ { "watch", "--count", "0" }, 2, 0, "--count" },
		{ { "watch", "--count", "-1" }, 2, 0, "--count" },
		{ { "watch", "--json" }, 0, CTL_CMD_WATCH, NULL },
		{ { "watch", "--json", "--lines" }, 2, 0, "exclude each other" },
		{ { "watch", "--bogus" }, 2, 0, "unexpected argument '--bogus'" },
		{ { "watch", "--", "-n1" }, 2, 0, "unexpected argument '-n1'" },
		{ { "status", "--", "--json" }, 2, 0, "unexpected argument '--json'" },
		{ { "get", "--", "max_jobs" }, 0, CTL_CMD_GET, NULL },
		{ { "set", "--", "max_jobs=5" }, 0, CTL_CMD_SET, NULL },
		{ { "trace" }, 0, CTL_CMD_TRACE, NULL },
		{ { "trace", "--count", "1", "--json" }, 0, CTL_CMD_TRACE, NULL },
		{ { "trace", "--interval", "5" }, 2, 0, "unexpected argument" },
		{ { "metrics" }, 0, CTL_CMD_METRICS, NULL },
		{ { "metrics", "--format", "prometheus" }, 0, CTL_CMD_METRICS, NULL },
		{ { "metrics", "-fopenmetrics" }, 0, CTL_CMD_METRICS, NULL },
		{ { "metrics", "--format=json" }, 2, 0, "openmetrics or prometheus" },
		{ { "metrics", "x" }, 2, 0, "unexpected argument 'x'" },
		{ { "metrics", "--textfile", "/tmp" }, 0, CTL_CMD_METRICS, NULL },
		{ { "metrics", "-t/tmp", "-fprometheus" }, 0, CTL_CMD_METRICS, NULL },
		{ { "metrics", "--textfile", "/tmp", "--format", "openmetrics" }, 2, 0,
		  "writes the Prometheus format" },
		{ { "metrics", "--textfile=" }, 2, 0, "expected a directory" },
		{ { "sub" }, 2, 0, "give CTX.SUB" },
		{ { "sub", "3.1" }, 2, 0, "give CTX.SUB" },
		{ { "sub", "3.1", "limit=4" }, 0, CTL_CMD_SUB, NULL },
		{ { "sub", "3.1", "limit=adapt", "min=2", "max=8" }, 0, CTL_CMD_SUB, NULL },
		{ { "sub", "3.1", "weight=200", "policy=hillclimb" }, 0, CTL_CMD_SUB, NULL },
		{ { "sub", "3", "limit=4" }, 2, 0, "expected CTX.SUB" },
		{ { "sub", "0.1", "limit=4" }, 2, 0, "expected CTX.SUB" },
		{ { "sub", "3.1.2", "limit=4" }, 2, 0, "expected CTX.SUB" },
		{ { "sub", "3.1", "limit=0" }, 2, 0, "limit=0: expected 1..4096" },
		{ { "sub", "3.1", "limit=4097" }, 2, 0, "expected 1..4096" },
		{ { "sub", "3.1", "weight=0" }, 2, 0, "weight=0: expected 1..10000" },
		{ { "sub", "3.1", "policy=fifo" }, 2, 0, "iopa, hillclimb or bracket" },
		{ { "sub", "3.1", "limit" }, 2, 0, "expected limit=N|adapt" },
		{ { "sub", "3.1", "bogus=1" }, 2, 0, "expected limit=N|adapt" },
		{ { "frob" }, 2, 0, "unknown command 'frob'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct cl_case *c = &cases[i];
		char *argv[8] = { "iopactl" }, err[512], desc[256] = "";
		struct ctl_opts o;
		int argc = 1, rc;

		while (argc < 7 && c->args[argc - 1]) {
			argv[argc] = (char *)c->args[argc - 1];
			strcat(desc, " ");
			strcat(desc, argv[argc]);
			argc++;
		}
		rc = ctl_parse_cmdline(argc, argv, &o, err, sizeof(err));
		ok(rc == c->rc && (rc || o.cmd == c->cmd) &&
		   (!c->msg || strstr(err, c->msg)),
		   "cmdline 'iopactl%s': exit status %d%s%s%s", desc, c->rc,
		   c->msg ? " (\"" : "", c->msg ? c->msg : "",
		   c->msg ? "\")" : "");
		if (rc != c->rc || (c->msg && !strstr(err, c->msg)))
			diag("got %d, \"%s\"", rc, err);
		ctl_opts_free(&o);
	}

	/* The values land where they belong. */
	{
		char *argv[] = { "iopactl", "top", "--interval", "0.25",
				 "--count", "3", NULL };
		char *argv2[] = { "iopactl", "watch", "-n1", "-i1.5s", "-j",
				  NULL };
		char *argv3[] = { "iopactl", "watch", "-i", "250ms", NULL };
		char err[256];
		struct ctl_opts o;

		ctl_parse_cmdline(6, argv, &o, err, sizeof(err));
		ok(o.interval_ms == 250 && o.count == 3,
		   "watch --interval 0.25 --count 3: 250 ms, count 3");
		ctl_opts_free(&o);
		ctl_parse_cmdline(5, argv2, &o, err, sizeof(err));
		ok(o.interval_ms == 1500 && o.count == 1 && o.json && !o.lines,
		   "watch -n1 -i1.5s -j: 1500 ms, count 1, JSON lines");
		ctl_opts_free(&o);
		ctl_parse_cmdline(4, argv3, &o, err, sizeof(err));
		ok(o.interval_ms == 250, "watch -i 250ms: 250 ms");
		ctl_opts_free(&o);
	}
	{
		char *argv[] = { "iopactl", "set", "max_jobs=010",
				 "default_policy=iopa", NULL };
		char err[256];
		struct ctl_opts o;

		ctl_parse_cmdline(4, argv, &o, err, sizeof(err));
		ok(o.nr_assign == 2 && !strcmp(o.assign[0].value, "10") &&
		   !strcmp(o.assign[0].tun->name, "max_jobs") &&
		   !strcmp(o.assign[1].value, "iopa"),
		   "set max_jobs=010 default_policy=iopa: two assignments in order, 010 written as 10 (not octal)");
		ctl_opts_free(&o);
	}
}

/* `sub`: the ids and settings land where they belong. */
static void test_sub_cmdline(void)
{
	char *argv[] = { "iopactl", "sub", "12.7", "limit=adapt", "max=9",
			 "weight=50", "policy=bracket", NULL };
	char *argv2[] = { "iopactl", "sub", "4294967295.1", "limit=4096", NULL };
	char *argv3[] = { "iopactl", "sub", "4294967296.1", "limit=1", NULL };
	struct ctl_opts o;
	char err[256];

	ok(ctl_parse_cmdline(7, argv, &o, err, sizeof(err)) == 0 &&
	   o.sub.ctx_id == 12 && o.sub.sub_id == 7 && o.sub.has_limit &&
	   o.sub.limit == 0 && !o.sub.has_min && o.sub.has_max &&
	   o.sub.max == 9 && o.sub.has_weight && o.sub.weight == 50 &&
	   o.sub.policy == IOPA_POLICY_BRACKET,
	   "sub 12.7 limit=adapt max=9 weight=50 policy=bracket: each setting, min left alone");
	ctl_opts_free(&o);
	ok(ctl_parse_cmdline(4, argv2, &o, err, sizeof(err)) == 0 &&
	   o.sub.ctx_id == UINT32_MAX && o.sub.limit == 4096 &&
	   o.sub.policy == IOPA_POLICY_KEEP,
	   "sub 4294967295.1 limit=4096: the largest ids and limit; policy kept");
	ctl_opts_free(&o);
	ok(ctl_parse_cmdline(4, argv3, &o, err, sizeof(err)) == CTL_EXIT_USAGE,
	   "sub 4294967296.1: a context id beyond 32 bits is refused");
	ctl_opts_free(&o);
}

struct as_case {
	const char	*arg;
	int		rc;
	const char	*value;
};

static void test_assign(void)
{
	static const struct as_case cases[] = {
		{ "max_jobs=5", 0, "5" },
		{ "max_jobs=0", 0, "0" },	/* the kernel refuses it */
		{ "max_jobs=007", 0, "7" },
		{ "max_jobs=000", 0, "0" },
		{ "max_jobs=99999999999999999999999", 0,
		  "99999999999999999999999" },
		{ "init_limit=0", 0, "0" },
		{ "default_policy=iopa", 0, "iopa" },
		{ "default_policy=hillclimb", 0, "hillclimb" },
		{ "default_policy=bracket", 0, "bracket" },
		{ "max_jobs", 2, NULL },
		{ "=5", 2, NULL },
		{ "max_jobs=", 2, NULL },
		{ "max_jobs=-1", 2, NULL },
		{ "max_jobs=+1", 2, NULL },
		{ "max_jobs=0x10", 2, NULL },
		{ "max_jobs= 5", 2, NULL },
		{ "max_jobs=5 ", 2, NULL },
		{ "max_jobs=5\n", 2, NULL },
		{ "max_jobs=1.5", 2, NULL },
		{ "max_jobs==5", 2, NULL },
		{ "MAX_JOBS=5", 2, NULL },
		{ "max_job=5", 2, NULL },
		{ "max_jobsx=5", 2, NULL },
		{ "bogus=1", 2, NULL },
		{ "stats/submitted=1", 2, NULL },
		{ "default_policy=1", 2, NULL },
		{ "default_policy=IOPA", 2, NULL },
		{ "default_policy=iopa\n", 2, NULL },
		{ "default_policy=BRACKET", 2, NULL },
		{ "default_policy=brackets", 2, NULL },
		{ "default_policy=bracket\n", 2, NULL },
		{ "default_policy=brkt", 2, NULL },
		{ "default_policy=3", 2, NULL },
		{ "default_policy=", 2, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct as_case *c = &cases[i];
		struct ctl_assign a;
		char err[256] = "", shown[64];
		size_t j, k = 0;
		int rc;

		memset(&a, 0, sizeof(a));
		rc = ctl_parse_assign(c->arg, &a, err, sizeof(err));
		for (j = 0; c->arg[j] && k < sizeof(shown) - 3; j++) {
			if (c->arg[j] == '\n') {
				shown[k++] = '\\';
				shown[k++] = 'n';
			} else {
				shown[k++] = c->arg[j];
			}
		}
		shown[k] = '\0';
		ok(rc == c->rc && (rc || !strcmp(a.value, c->value)) &&
		   (!rc || err[0]),
		   "assignment '%s': %s", shown,
		   c->rc ? "usage error (2) with a message" : "accepted");
		if (rc != c->rc)
			diag("got %d: %s", rc, err);
	}
	for (i = 0; i < CTL_NR_TUNABLES; i++) {
		char arg[64], err[256];
		struct ctl_assign a;

		snprintf(arg, sizeof(arg), "%s=%s", ctl_tunables[i].name,
			 ctl_tunables[i].kind == CTL_TUN_POLICY ? "iopa" : "1");
		if (ctl_parse_assign(arg, &a, err, sizeof(err)) ||
		    a.tun != &ctl_tunables[i])
			break;
	}
	ok(i == CTL_NR_TUNABLES, "every tunable name is accepted as NAME=VALUE");
}

static void test_messages(void)
{
	static const struct {
		const char *arg;
		int err;
		const char *want;
	} cases[] = {
		{ "max_jobs=0", EINVAL, "max_jobs=0: invalid value (range 1..1048576)" },
		{ "max_total_jobs=0", EINVAL, "max_total_jobs=0: invalid value (range 1..16777216)" },
		{ "increase_threshold=1000", EINVAL, "increase_threshold=1000: invalid value (range 1001..10000)" },
		{ "init_limit=5000", EINVAL, "init_limit=5000: invalid value (range 0..4096)" },
		{ "history=9", ERANGE, "history=9: invalid value (range 1..8)" },
		{ "default_policy=iopa", EINVAL, "default_policy=iopa: invalid value (iopa, hillclimb or bracket)" },
		{ "default_policy=bracket", EINVAL, "default_policy=bracket: invalid value (iopa, hillclimb or bracket)" },
		{ "default_policy=bracket", EACCES, "default_policy=bracket: need root (Permission denied)" },
		{ "max_jobs=5", EACCES, "max_jobs=5: need root (Permission denied)" },
		{ "max_jobs=5", EPERM, "max_jobs=5: need root (Operation not permitted)" },
		{ "max_limit=5", ENOENT, "max_limit=5: no such tunable in this iopa module, or the module is not loaded" },
		{ "max_limit=5", EIO, "max_limit=5: Input/output error" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *want = cases[i].want;
		struct ctl_assign a;
		char err[256], msg[512];

		memset(&a, 0, sizeof(a));
		if (ctl_parse_assign(cases[i].arg, &a, err, sizeof(err))) {
			ok(0, "refusal message: %s parses", cases[i].arg);
			continue;
		}
		ctl_set_error_message(&a, cases[i].err, msg, sizeof(msg));
		ok(!strcmp(msg, want), "refusal message: \"%s\"", want);
		if (strcmp(msg, want))
			diag("got \"%s\"", msg);
	}
}

/* ---- names ------------------------------------------------------------------- */

static void test_names(void)
{
	static const char *const pol[] = { NULL, "iopa", "hillclimb", "bracket", NULL };
	static const char *const feat[] = { "ioctl", "poll", "adaptive", "uring_cmd",
					    "order", "list", "bracket", "times", "share",
					    "lease", "borrow", "batch", "uring_batch",
					    "metrics", "admin", "turns", NULL };
	int bad = 0;
	unsigned int i;

	for (i = 0; i < 5; i++) {
		const char *n = ctl_policy_name(i);

		if (!n != !pol[i] || (n && strcmp(n, pol[i]))) {
			diag("policy %u: %s, expected %s", i, n ? n : "NULL",
			     pol[i] ? pol[i] : "NULL");
			bad++;
		}
		if (pol[i] && ctl_policy_index(pol[i]) != (int)i) {
			diag("policy %s: index %d", pol[i], ctl_policy_index(pol[i]));
			bad++;
		}
	}
	ok(!bad && IOPA_POLICY_BRACKET == 3 && IOPA_POLICY_MAX == IOPA_POLICY_BRACKET &&
	   ctl_policy_name(IOPA_POLICY_MAX + 1) == NULL &&
	   ctl_policy_index("") < 0 && ctl_policy_index("hill") < 0 &&
	   ctl_policy_index("Bracket") < 0,
	   "policy names: 1 iopa, 2 hillclimb, 3 bracket (IOPA_POLICY_MAX), none beyond");
	bad = 0;
	for (i = 0; i < 17; i++) {
		const char *n = ctl_feature_name(i);

		if (!n != !feat[i] || (n && strcmp(n, feat[i]))) {
			diag("feature bit %u: %s", i, n ? n : "NULL");
			bad++;
		}
	}
	ok(!bad && IOPA_FEAT_BRACKET == 1ULL << 6 && IOPA_FEAT_TIMES == 1ULL << 7 &&
	   IOPA_FEAT_SHARE == 1ULL << 8 && IOPA_FEAT_LEASE == 1ULL << 9 &&
	   IOPA_FEAT_BORROW == 1ULL << 10 && IOPA_FEAT_BATCH == 1ULL << 11 &&
	   IOPA_FEAT_URING_BATCH == 1ULL << 12 && IOPA_FEAT_METRICS == 1ULL << 13 &&
	   IOPA_FEAT_ADMIN == 1ULL << 14 && IOPA_FEAT_TURNS == 1ULL << 15,
	   "feature names: bit 6 bracket ... 13 metrics, 14 admin, 15 turns, none beyond");
	ok(strstr(ctl_usage_text, "default_policy iopa|hillclimb|bracket\n") != NULL,
	   "--help lists the three policies");
}

/* ---- the table against the ABI document ------------------------------------- */

static void test_abi_doc(void)
{
	const char *path = "../../Documentation/ABI/testing/sysfs-class-misc-iopa";
	int seen_tun[CTL_NR_TUNABLES] = { 0 }, seen_tot[CTL_NR_TOTALS] = { 0 };
	int unknown = 0, bad_range = 0, i;
	char *doc = slurp(path, NULL), *p;

	if (!doc) {
		skip("%s not found", path);
		return;
	}
	for (p = strstr(doc, "What:"); p; ) {
		char *next = strstr(p + 5, "What:"), name[64];
		char *q = strstr(p, "/sys/class/misc/iopa/");
		size_t n;

		if (next)
			*next = '\0';
		if (!q) {
			p = next;
			continue;
		}
		q += strlen("/sys/class/misc/iopa/");
		n = strcspn(q, " \t\n");
		snprintf(name, sizeof(name), "%.*s", (int)n, q);
		if (!strncmp(name, "stats/", 6)) {
			int k = ctl_total_index(name + 6);

			if (k < 0) {
				diag("stats/%s: in the ABI document, not in ctl_totals", name + 6);
				unknown++;
			} else {
				seen_tot[k] = 1;
			}
		} else if (!strcmp(name, "knees")) {
			/* A table of devices, not a tunable: not iopactl's. */
		} else {
			int k = ctl_tunable_index(name);

			if (k < 0) {
				diag("%s: in the ABI document, not in ctl_tunables", name);
				unknown++;
			} else {
				const char *r = strstr(q, "range");
				unsigned int lo, hi;

				seen_tun[k] = 1;
				if (!r)
					r = strstr(q, "Range");
				if (r)	/* sscanf skips the newline in "range\n\t\t1..8" */
					r += 5;
				if (ctl_tunables[k].kind == CTL_TUN_POLICY)
					;
				else if (!r || sscanf(r, " %u..%u", &lo, &hi) != 2 ||
					 lo != ctl_tunables[k].min ||
					 hi != ctl_tunables[k].max) {
					diag("%s: range in the document differs from %u..%u",
					     name, ctl_tunables[k].min,
					     ctl_tunables[k].max);
					bad_range++;
				}
			}
		}
		if (next)
			*next = 'W';
		p = next;
	}
	for (i = 0; i < CTL_NR_TUNABLES; i++)
		if (!seen_tun[i]) {
			diag("%s: in ctl_tunables, not in the ABI document", ctl_tunables[i].name);
			unknown++;
		}
	for (i = 0; i < CTL_NR_TOTALS; i++)
		if (!seen_tot[i]) {
			diag("stats/%s: in ctl_totals, not in the ABI document", ctl_totals[i]);
			unknown++;
		}
	ok(!unknown, "the tunables and stats/ files are those of the ABI document");
	ok(!bad_range, "every tunable's range is the ABI document's");
	free(doc);
}

/* ---- JSON -------------------------------------------------------------------------- */

static char *json_of(const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ctl_json_string(f, s, len);
	fclose(f);
	return buf;
}

static void test_json_escape(void)
{
	static const struct {
		const char *in;
		size_t len;
		const char *out;
		const char *what;
	} cases[] = {
		{ "plain", 5, "\"plain\"", "plain ASCII" },
		{ "a\"b", 3, "\"a\\\"b\"", "a quote" },
		{ "a\\b", 3, "\"a\\\\b\"", "a backslash" },
		{ "/", 1, "\"/\"", "a slash (left alone)" },
		{ "\n\r\t\b\f", 5, "\"\\n\\r\\t\\b\\f\"", "the short escapes" },
		{ "\x01\x1f", 2, "\"\\u0001\\u001f\"", "other control characters" },
		{ "a\0b", 3, "\"a\\u0000b\"", "a NUL byte" },
		{ "\x7f", 1, "\"\\u007f\"", "DEL" },
		{ "\xc3\xa9", 2, "\"\xc3\xa9\"", "valid 2-byte UTF-8 as is" },
		{ "\xe2\x82\xac", 3, "\"\xe2\x82\xac\"", "valid 3-byte UTF-8 as is" },
		{ "\xf0\x9f\x98\x80", 4, "\"\xf0\x9f\x98\x80\"", "valid 4-byte UTF-8 as is" },
		{ "\xff", 1, "\"\\ufffd\"", "a 0xff byte" },
		{ "\x80", 1, "\"\\ufffd\"", "a lone continuation byte" },
		{ "\xc3", 1, "\"\\ufffd\"", "a truncated sequence at the end" },
		{ "\xc3(", 2, "\"\\ufffd(\"", "a truncated sequence before ASCII" },
		{ "\xc0\xaf", 2, "\"\\ufffd\\ufffd\"", "an overlong '/'" },
		{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"", "a UTF-8 encoded surrogate" },
		{ "\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"", "beyond U+10FFFF" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *out = json_of(cases[i].in, cases[i].len);

		ok(out && !strcmp(out, cases[i].out), "JSON string escaping: %s",
		   cases[i].what);
		if (out && strcmp(out, cases[i].out))
			diag("got %s", out);
		free(out);
	}
	/* Every byte value alone and in pairs: the parser reads it back. */
	{
		int bad = 0, a, b;

		for (a = 0; a < 256 && !bad; a++)
			for (b = 0; b < 256 && !bad; b++) {
				char in[2] = { (char)a, (char)b }, err[128];
				char *out = json_of(in, 2);
				struct ctl_jv *v = ctl_json_parse(out, strlen(out),
								  err, sizeof(err));

				if (!v || v->type != CTL_J_STR) {
					diag("bytes %02x %02x: %s: %s", a, b, out, err);
					bad = 1;
				} else if (ctl_utf8_seq_len((const unsigned char *)in, 2) == 2 ||
					   (a < 0x80 && b < 0x80)) {
					/* Valid input comes back byte for byte. */
					if (v->len != 2 || memcmp(v->s, in, 2)) {
						diag("bytes %02x %02x: read back differently", a, b);
						bad = 1;
					}
				}
				ctl_json_free(v);
				free(out);
			}
		ok(!bad, "all 65536 two-byte strings: escaped output parses, valid text reads back unchanged");
	}
}

static void test_json_parser(void)
{
	static const char *const good[] = {
		"{}", "[]", "0", "-0", "1.5e-3", "\"\"", "null", "true",
		" {\"a\": [1, 2, {\"b\": null}], \"c\": \"\\u00e9\\ud83d\\ude00\"} ",
		"18446744073709551615",
	};
	static const char *const bad[] = {
		"", "{", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "'a'",
		"\"a\nb\"", "\"\\x41\"", "\"\\ud800\"", "\"\\udc00\"", "tru",
		"{\"a\" 1}", "[1 2]", "1 2", "\"\xff\"", "\"\xc0\xaf\"", "NaN",
		"{1: 2}",
	};
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct ctl_jv *v = ctl_json_parse(good[i], strlen(good[i]), err,
						  sizeof(err));

		ok(v != NULL, "JSON parser accepts %s", good[i]);
		if (!v)
			diag("%s", err);
		ctl_json_free(v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct ctl_jv *v = ctl_json_parse(bad[i], strlen(bad[i]), err,
						  sizeof(err));
		char shown[64];
		size_t j;

		for (j = 0; bad[i][j] && j < sizeof(shown) - 1; j++)
			shown[j] = (bad[i][j] >= 0x20 && bad[i][j] < 0x7f) ?
				   bad[i][j] : '?';
		shown[j] = '\0';
		ok(v == NULL && err[0], "JSON parser refuses '%s' (%s)", shown,
		   err);
		ctl_json_free(v);
	}
	{
		char deep[200];
		struct ctl_jv *v;

		memset(deep, '[', 100);
		memset(deep + 100, ']', 100);
		v = ctl_json_parse(deep, 200, err, sizeof(err));
		ok(v == NULL, "JSON parser refuses 100 levels of nesting");
		ctl_json_free(v);
	}
	{
		const char *s = "{\"a\": {\"b\": 42}, \"c\": \"x\\u0000y\"}";
		struct ctl_jv *v = ctl_json_parse(s, strlen(s), err, sizeof(err));
		const struct ctl_jv *c = ctl_json_get(v, "c");
		uint64_t u = 0;

		ok(v && !ctl_json_u64(ctl_json_get(ctl_json_get(v, "a"), "b"), &u) &&
		   u == 42 && c && c->len == 3 && !memcmp(c->s, "x\0y", 3),
		   "JSON parser: members, numbers, \\u0000 inside a string");
		ctl_json_free(v);
	}
}

/* ---- fake snapshots ------------------------------------------------------------------ */

static const char *const odd_comms[] = {
	"quote\"slash\\",
	"ctl\n\t\r\x01\x7f",
	"\xc3\xa9t\xc3\xa9\xff\xfe\x80",
	"0123456789abcdef",	/* 16 bytes: no NUL in comm[16] */
	"",
};

static void fake_sub(struct iopa_sub_info *si, unsigned int i)
{
	memset(si, 0, sizeof(*si));
	si->ctx_id = 1 + i / 3;
	si->sub_id = 1 + i % 3;
	si->pid = (int32_t)(100 + i);
	memcpy(si->comm, odd_comms[i % 5], strnlen(odd_comms[i % 5], 16));
	si->ctx_workers = 4;
	si->ctx_waiting = 1;
	si->state.limit = 1 + i % 4096;
	si->state.mode = i % 7;		/* 6: unknown */
	si->state.policy = 1 + i % 4;	/* 4: unknown */
	si->state.flags = i % 2 ? IOPA_LIMIT_F_FIXED : 0;
	si->state.min = i % 3;
	si->state.max = i % 5 ? 4096 : 0;
	si->state.inflight = i * 7;
	si->state.pending = i % 10 ? i * 1000 : UINT32_MAX;
	si->state.cycle_ms = 1000;
	si->state.r_permille = i % 11 ? 1040 : UINT32_MAX;
	si->state.cycles = i;
	si->state.changes = i / 2;
	/* i 0 is the slowest; then faster and faster, one huge */
	si->state.bytes_per_s = i == 50 ? UINT64_MAX : (uint64_t)i * 123457;
	si->state.jobs_per_s = (uint64_t)i * 99;
	si->state.nr_devs = i % 5;	/* 4 at most */
	si->state.devs[0] = 254u << 20;
	si->state.devs[1] = (8u << 20) | 17;
	si->state.devs[2] = 0xfffffffu;
	si->state.devs[3] = 0;
	si->state.order = i % 4;	/* 3: unknown */
	/* The last cycle's times (i 0: no cycle yet; i 5: no completion). */
	si->state.wait_us = i == 4 ? UINT32_MAX : i * 1234 + 5;
	si->state.svc_us = 2000 + i * 37;
	si->state.completions = i % 6 == 5 ? 0 : 10 * i;
	si->state.noise_permille = 20 + i % 481;
	/* sub 1 alone (no budget), the others share one: 32 jobs, 2 cgroups */
	si->state.budget = i ? 32 : 0;
	si->state.sharers = i ? 2 : 0;
	si->state.weight = i == 1 ? 50 : 100;
	si->state.group_cycles = i ? 7 : 0;
	si->stats.submitted = UINT64_MAX - i;
	si->stats.completed = i;
	si->stats.unreaped = 1;
}

static void fake_snapshot(struct ctl_snapshot *s, size_t nr)
{
	size_t i;

	memset(s, 0, sizeof(*s));
	s->module_loaded = 1;
	snprintf(s->version, sizeof(s->version), "1.0 \"odd\"\\");
	snprintf(s->srcversion, sizeof(s->srcversion), "0123456789ABCDEF01234567");
	s->feat.abi_version = 1;
	s->feat.features = 0x1ff | (1ULL << 40);
	s->feat.batch_max = 4096;
	s->feat.limit_max = 4096;
	s->feat.worker_max_jobs = 64;
	for (i = 0; i < CTL_NR_TUNABLES; i++) {
		/* one missing: null */
		s->tun[i].ok = strcmp(ctl_tunables[i].name, "max_total_jobs");
		s->tun[i].u = 1000 + i;
		if (ctl_tunables[i].kind == CTL_TUN_POLICY)
			snprintf(s->tun[i].s, sizeof(s->tun[i].s), "bracket");
		else
			snprintf(s->tun[i].s, sizeof(s->tun[i].s), "%zu", 1000 + i);
	}
	for (i = 0; i < CTL_NR_TOTALS; i++) {
		s->tot[i].ok = 1;
		s->tot[i].u = i ? (uint64_t)i * 1000003 : UINT64_MAX;
		snprintf(s->tot[i].s, sizeof(s->tot[i].s), "%" PRIu64, s->tot[i].u);
	}
	s->nr_knees = 2;
	s->knees[0] = (struct ctl_knee){ 8, 0, 8, 3, "set", 0 };
	s->knees[1] = (struct ctl_knee){ 253, 1, 2, 0, "learned", 100 };
	s->scope = CTL_SCOPE_ALL;
	s->nr = nr;
	s->total = (uint32_t)nr;
	s->subs = nr ? calloc(nr, sizeof(*s->subs)) : NULL;
	for (i = 0; i < nr; i++)
		fake_sub(&s->subs[i], (unsigned int)i);
}

static int have_python(void)
{
	return system("python3 -c 'import json' >/dev/null 2>&1") == 0;
}

/*
 * The status JSON of @s: parsed by our parser and by python3 -m
 * json.tool; then @pycheck (python statements on d, the document) run.
 */
static void check_status_json(const struct ctl_snapshot *s, const char *name,
			      const char *pycheck)
{
	char path[256], cmd[2048], err[256];
	struct ctl_jv *v;
	size_t len;
	char *text;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s.json", outdir, name);
	f = fopen(path, "w");
	if (!f) {
		ok(0, "%s: writing %s", name, path);
		return;
	}
	ctl_render_status_json(f, s);
	fclose(f);
	text = slurp(path, &len);
	v = text ? ctl_json_parse(text, len, err, sizeof(err)) : NULL;
	ok(v && v->type == CTL_J_OBJ, "status JSON (%s): our strict parser accepts it", name);
	if (!v)
		diag("%s", err);
	ctl_json_free(v);
	free(text);
	if (!have_python()) {
		skip("status JSON (%s): no python3", name);
		return;
	}
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool %s >/dev/null", path);
	ok(system(cmd) == 0, "status JSON (%s): python3 -m json.tool accepts it", name);
	if (pycheck) {
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import json, sys\n"
			 "d = json.load(open(sys.argv[1], encoding=\"utf-8\"))\n"
			 "%s' %s", pycheck, path);
		ok(system(cmd) == 0, "status JSON (%s): python3 reads the expected values", name);
	}
}

static void test_status_json(void)
{
	struct ctl_snapshot s;

	mkdir(outdir, 0755);
	fake_snapshot(&s, 5);
	check_status_json(&s, "five-odd-comms",
		/* Decoded comms: invalid bytes as U+FFFD, the rest as given. */
		"c = [x[\"comm\"] for x in d[\"submitters\"]]\n"
		"assert c == [\"quote\\\"slash\\\\\", \"ctl\\n\\t\\r\\x01\\x7f\", "
		"\"\\u00e9t\\u00e9\\ufffd\\ufffd\\ufffd\", \"0123456789abcdef\", \"\"], c\n"
		"assert d[\"submitters\"][2][\"comm_hex\"] == \"c3a974c3a9fffe80\"\n"
		"assert d[\"submitters\"][3][\"comm_hex\"] == \"30313233343536373839616263646566\"\n"
		"s = d[\"submitters\"][0]\n"
		"assert s[\"stats\"][\"submitted\"] == 18446744073709551615\n"
		"assert type(s[\"limit\"]) is int and type(s[\"fixed\"]) is bool\n"
		"assert d[\"submitters\"][4][\"devs\"] == [\"254:0\", \"8:17\", \"255:1048575\", \"0:0\"]\n"
		"assert d[\"submitters\"][1][\"mode\"] == \"normal\" and d[\"submitters\"][1][\"order\"] == \"sorted\"\n"
		"p = [x[\"policy\"] for x in d[\"submitters\"]]\n"
		"assert p == [\"iopa\", \"hillclimb\", \"bracket\", \"unknown(4)\", \"iopa\"], p\n"
		"t = [[x[k] for k in (\"wait_us\", \"svc_us\", \"completions\", \"noise_permille\")] for x in d[\"submitters\"]]\n"
		"assert t == [[5, 2000, 0, 20], [1239, 2037, 10, 21], [2473, 2074, 20, 22], [3707, 2111, 30, 23], [4294967295, 2148, 40, 24]], t\n"
		"assert d[\"module\"][\"version\"] == \"1.0 \\\"odd\\\"\\\\\"\n"
		"assert d[\"abi\"][\"features\"] == [\"ioctl\", \"poll\", \"adaptive\", \"uring_cmd\", \"order\", \"list\", \"bracket\", \"times\", \"share\", \"bit40\"]\n"
		"assert d[\"abi\"][\"features_mask\"] == 511 + 2 ** 40\n"
		"g = [[x[k] for k in (\"budget\", \"sharers\", \"weight\", \"group_cycles\")] for x in d[\"submitters\"]]\n"
		"assert g == [[0, 0, 100, 0], [32, 2, 50, 7], [32, 2, 100, 7], [32, 2, 100, 7], [32, 2, 100, 7]], g\n"
		"assert d[\"tunables\"][\"max_total_jobs\"] is None and d[\"tunables\"][\"default_policy\"] == \"bracket\"\n"
		"assert d[\"totals\"][\"contexts\"] == 18446744073709551615\n"
		"assert d[\"submitters_scope\"] == \"all\" and d[\"submitters_total\"] == 5 and d[\"notes\"] == []\n");
	ctl_snapshot_free(&s);

	fake_snapshot(&s, 0);
	s.module_loaded = 0;
	check_status_json(&s, "not-loaded",
		"assert d[\"module\"][\"loaded\"] is False and d[\"submitters\"] == []\n"
		"assert \"not loaded\" in d[\"notes\"][0]\n");
	fake_snapshot(&s, 0);
	s.dev_err = EACCES;
	s.scope = CTL_SCOPE_NONE;
	check_status_json(&s, "device-eacces",
		"assert d[\"abi\"] is None and d[\"device\"][\"opened\"] is False\n"
		"assert d[\"submitters_total\"] is None\n"
		"assert \"need root\" in d[\"notes\"][0]\n");
	fake_snapshot(&s, 0);
	s.scope = CTL_SCOPE_OWN;
	s.list_err = EPERM;
	check_status_json(&s, "list-eperm",
		"assert d[\"submitters_scope\"] == \"own\"\n"
		"assert \"CAP_SYS_ADMIN\" in d[\"notes\"][0] and \"root\" in d[\"notes\"][0]\n");
	fake_snapshot(&s, 0);
	s.scope = CTL_SCOPE_NONE;
	s.no_list = 1;
	check_status_json(&s, "no-list",
		"assert d[\"submitters_scope\"] == \"none\" and \"IOPA_FEAT_LIST\" in d[\"notes\"][0]\n");
	fake_snapshot(&s, 3);
	s.total = 5000;
	check_status_json(&s, "truncated",
		"assert d[\"submitters_total\"] == 5000 and len(d[\"submitters\"]) == 3\n"
		"assert \"only the first 3\" in d[\"notes\"][0]\n");
	ctl_snapshot_free(&s);
	/* A module without IOPA_FEAT_TIMES: its reserved zeros are no times. */
	fake_snapshot(&s, 2);
	s.feat.features &= ~IOPA_FEAT_TIMES;
	check_status_json(&s, "no-times",
		"k = (\"wait_us\", \"svc_us\", \"completions\", \"noise_permille\")\n"
		"for x in d[\"submitters\"]:\n"
		"    assert all(k_ in x and x[k_] is None for k_ in k), x\n"
		"    assert type(x[\"cycles\"]) is int\n"
		"assert \"times\" not in d[\"abi\"][\"features\"]\n");
	ctl_snapshot_free(&s);
	/* A module without IOPA_FEAT_SHARE: budget and weight unknown. */
	fake_snapshot(&s, 2);
	s.feat.features &= ~IOPA_FEAT_SHARE;
	check_status_json(&s, "no-share",
		"k = (\"budget\", \"sharers\", \"weight\", \"group_cycles\")\n"
		"for x in d[\"submitters\"]:\n"
		"    assert all(k_ in x and x[k_] is None for k_ in k), x\n"
		"assert \"share\" not in d[\"abi\"][\"features\"]\n");
	ctl_snapshot_free(&s);
	fake_snapshot(&s, 2);
	s.feat_err = ENOTTY;
	check_status_json(&s, "features-unknown",
		"assert d[\"abi\"] is None\n"
		"assert [x[\"svc_us\"] for x in d[\"submitters\"]] == [None, None]\n");
	ctl_snapshot_free(&s);
}

/* The text of `status` for @s. */
static char *status_text(const struct ctl_snapshot *s)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	ctl_render_status_text(f, s);
	fclose(f);
	return buf;
}

/* The line of @text that starts with @prefix, copied to @line. */
static int find_line(const char *text, const char *prefix, char *line,
		     size_t len)
{
	const char *p = text;
	size_t n = strlen(prefix);

	while (p && *p) {
		const char *e = strchr(p, '\n');
		size_t l = e ? (size_t)(e - p) : strlen(p);

		if (l >= n && !memcmp(p, prefix, n)) {
			snprintf(line, len, "%.*s", (int)l, p);
			return 1;
		}
		p = e ? e + 1 : NULL;
	}
	line[0] = '\0';
	return 0;
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n >= m && !strcmp(s + n - m, tail);
}

/* The knees file: its lines parsed, any other format refused. */
static void test_knees_parse(void)
{
	static const char *const bad[] = {
		"8:0 knee=8 diskseq=3",
		"8:0 knee=0 diskseq=3 src=set",
		"8:0 knee=8 diskseq=3 src=guessed",
		"8:0 knee=8 diskseq=3 src=set extra",
		"8:0 knee=8 diskseq=3 src=set job_kb=",
		"8:0 knee=8 diskseq=3 src=set job_kb=x",
		"8:0 knee=8 diskseq=3 src=set job_kb=4294967296",
		"8:0 knee=8 diskseq=3 src=set job_kb=4 extra",
		"8 knee=8 diskseq=3 src=set",
		"8:0 knee=4294967296 diskseq=3 src=set",
		"8:0 knee=8 diskseq=3 src=set\ngarbage",
	};
	struct ctl_knee k[3];
	size_t i;
	int n;

	n = ctl_knees_parse("8:0 knee=8 diskseq=3 src=set\n"
			    "253:1 knee=2 diskseq=0 src=learned job_kb=100", k, 3);
	ok(n == 2 && k[0].major == 8 && k[0].minor == 0 && k[0].knee == 8 &&
	   k[0].diskseq == 3 && !strcmp(k[0].src, "set") &&
	   k[1].major == 253 && k[1].minor == 1 && k[1].knee == 2 &&
	   !strcmp(k[1].src, "learned") && k[0].job_kb == 0 &&
	   k[1].job_kb == 100,
	   "knees: two lines parsed, job_kb optional (%d)", n);
	ok(ctl_knees_parse("", k, 3) == 0, "knees: an empty file is no device");
	ok(ctl_knees_parse("1:1 knee=1 diskseq=1 src=set\n2:2 knee=2 diskseq=2 src=set", k, 1) == 1 &&
	   k[0].major == 1, "knees: at most max kept");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(ctl_knees_parse(bad[i], k, 3) == -EINVAL,
		   "knees: refused: \"%.*s\"%s", (int)strcspn(bad[i], "\n"),
		   bad[i], strchr(bad[i], '\n') ? " and a bad next line" : "");
}

static void test_status_text(void)
{
	static const struct {
		const char *prefix;	/* CTX SUB PID */
		const char *times;	/* WAIT_MS SVC_MS DONE NOISE */
		const char *what;
	} cases[] = {
		{ "     1    1     100 ", "        -         -       -      - ",
		  "no cycle ended yet: all four -" },
		{ "     1    2     101 ", "    1.239     2.037      10   2.1% ",
		  "wait and service in ms to the us, completions, noise in %" },
		{ "     2    2     104 ", "4294967.295     2.148      40   2.4% ",
		  "the largest wait" },
		{ "     2    3     105 ", "    6.175         -       0   2.5% ",
		  "no completion in the last cycle: SVC_MS -" },
	};
	struct ctl_snapshot s;
	char line[512], *text;
	size_t i;

	fake_snapshot(&s, 6);
	text = status_text(&s);
	ok(text && strstr(text, " JOBS/S      R   WAIT_MS    SVC_MS    DONE  NOISE   CYCLES CHANGES ORDER   BUDGET/SHR WEIGHT\n"),
	   "status text: columns WAIT_MS SVC_MS DONE NOISE after R, BUDGET/SHR WEIGHT last");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int found = find_line(text, cases[i].prefix, line, sizeof(line));

		ok(found && strstr(line, cases[i].times),
		   "status text: %s (\"%s\")", cases[i].what, cases[i].times);
		if (!found || !strstr(line, cases[i].times))
			diag("|%s|", line);
	}
	find_line(text, "     1    3     102 ", line, sizeof(line));
	ok(strstr(line, " bracket   ") != NULL, "status text: policy bracket by name");
	find_line(text, "     1    2     101 ", line, sizeof(line));
	ok(ends_with(line, "        32/2     50"),
	   "status text: a shared budget and its sharers, the weight");
	find_line(text, "     1    1     100 ", line, sizeof(line));
	ok(ends_with(line, "           -    100"),
	   "status text: no shared budget: -, the default weight");
	free(text);
	s.feat.features &= ~IOPA_FEAT_SHARE;
	text = status_text(&s);
	find_line(text, "     1    2     101 ", line, sizeof(line));
	ok(ends_with(line, "           -      -"),
	   "status text: a module without IOPA_FEAT_SHARE: budget and weight -");
	free(text);
	s.feat.features |= IOPA_FEAT_SHARE;
	text = status_text(&s);
	ok(text && strstr(text, "\nknees (" CTL_SYSFS_DIR "/knees):\n  8:0 knee 8 diskseq 3 set job_kb 0\n  253:1 knee 2 diskseq 0 learned job_kb 100\n"),
	   "status text: the devices' knees, one a line");
	free(text);
	s.nr_knees = 0;
	text = status_text(&s);
	ok(text && strstr(text, "\nknees (" CTL_SYSFS_DIR "/knees): none\n"),
	   "status text: no knee remembered: none");
	free(text);
	s.knees_err = ENOENT;
	text = status_text(&s);
	ok(text && strstr(text, "/knees): - (No such file or directory)\n"),
	   "status text: a module without the knees file: - and why");
	free(text);
	s.knees_err = 0;
	s.feat.features &= ~IOPA_FEAT_TIMES;
	text = status_text(&s);
	find_line(text, "     1    2     101 ", line, sizeof(line));
	ok(strstr(line, "        -         -       -      - ") != NULL,
	   "status text: a module without IOPA_FEAT_TIMES: all four -");
	free(text);
	ctl_snapshot_free(&s);
}

/* Every key of the status JSON is documented in iopactl.8. */
static void collect_keys(const struct ctl_jv *v, const char *man, int *missing)
{
	size_t i;

	if (!v)
		return;
	for (i = 0; i < v->n; i++) {
		if (v->type == CTL_J_OBJ && v->keys[i][0]) {
			char q[80];

			snprintf(q, sizeof(q), "\"%s\"", v->keys[i]);
			if (!strstr(man, q) && (*missing)++ < 5)
				diag("key %s is not in iopactl.8", q);
		}
		collect_keys(&v->kids[i], man, missing);
	}
}

static void test_man_schema(void)
{
	char *man = slurp("iopactl.8", NULL), *text, err[256], path[256];
	struct ctl_snapshot s;
	struct ctl_jv *v;
	int missing = 0;
	size_t len;
	FILE *f;

	if (!man) {
		ok(0, "iopactl.8 exists");
		return;
	}
	fake_snapshot(&s, 2);
	snprintf(path, sizeof(path), "%s/schema.json", outdir);
	f = fopen(path, "w");
	ctl_render_status_json(f, &s);
	fclose(f);
	ctl_snapshot_free(&s);
	text = slurp(path, &len);
	v = ctl_json_parse(text, len, err, sizeof(err));
	collect_keys(v, man, &missing);
	ok(v && !missing, "every key of the status JSON is in the man page's schema");
	ctl_json_free(v);
	free(text);
	free(man);
}

/* ---- the watch screen ------------------------------------------------------------------------------ */

static void test_watch(void)
{
	static const unsigned int sizes[][2] = {
		{ 24, 80 }, { 25, 132 }, { 50, 200 }, { 5, 40 }, { 3, 80 },
		{ 2, 80 }, { 1, 80 }, { 24, 10 }, { 24, 1 }, { 4, 80 },
	};
	static const size_t counts[] = { 0, 1, 100 };
	char (*lines)[CTL_WATCH_MAX_COLS + 1] = calloc(256, sizeof(*lines));
	size_t c, z, i;

	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct ctl_snapshot s;
		int bad_rows = 0, bad_cols = 0, bad_bytes = 0;

		fake_snapshot(&s, counts[c]);
		for (z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
			unsigned int rows = sizes[z][0], cols = sizes[z][1];
			unsigned int w = cols < 80 ? cols : 80;
			struct ctl_screen scr = { .line = lines, .max = 256 };

			ctl_watch_layout(&s, rows, cols, &scr);
			if (scr.nr > rows) {
				diag("%zu subs, %ux%u: %zu lines", counts[c], rows, cols, scr.nr);
				bad_rows++;
			}
			for (i = 0; i < scr.nr; i++) {
				const unsigned char *p = (const unsigned char *)lines[i];

				if (strlen(lines[i]) > w) {
					diag("%zu subs, %ux%u: line %zu has %zu columns: %s",
					     counts[c], rows, cols, i, strlen(lines[i]), lines[i]);
					bad_cols++;
				}
				for (; *p; p++)
					if (*p < 0x20 || *p >= 0x7f)
						bad_bytes++;
			}
			if (rows == 24 && cols == 80 && counts[c] == 100) {
				/* Full screen: header, titles, 21 + "... 79 more". */
				ok(scr.nr == 24 && strstr(lines[23], "79 more"),
				   "watch, 100 submitters at 24x80: 24 lines, the last says 79 more");
				/* Highest bytes/s first: i 50 (2^64-1), then 99. */
				ok(strncmp(lines[2], "   17.3", 7) == 0 &&
				   strncmp(lines[3], "   34.1", 7) == 0 &&
				   strncmp(lines[4], "   33.3", 7) == 0,
				   "watch: submitters by bytes/s, highest first (17.3, 34.1, 33.3)");
				if (strncmp(lines[2], "   17.3", 7))
					diag("%s\n# %s\n# %s", lines[2], lines[3], lines[4]);
				diag("|%s|", lines[0]);
				diag("|%s|", lines[1]);
				diag("|%s|", lines[2]);
			}
			if (rows == 24 && cols == 80 && counts[c] == 1)
				ok(scr.nr == 3, "watch, 1 submitter at 24x80: header, titles, one line");
			if (rows == 24 && cols == 80 && counts[c] == 0)
				ok(scr.nr == 2, "watch, no submitter at 24x80: header and titles only");
		}
		ok(!bad_rows, "watch, %zu submitters: never more lines than rows (10 sizes)", counts[c]);
		ok(!bad_cols, "watch, %zu submitters: no line longer than min(cols, 80)", counts[c]);
		ok(!bad_bytes, "watch, %zu submitters: only printable ASCII (odd comms sanitized)", counts[c]);
		ctl_snapshot_free(&s);
	}
	/* The columns of a submitter's line, by position. */
	{
		static const struct {
			const char *id, *pol, *mode, *times, *what;
		} want[] = {	/* by bytes/s, highest first: i 5 to 0 */
			{ "    2.3", "hill", "steady", "6.17    -", "no completion: SVC -" },
			{ "    2.2", "iopa", "probe ", " 71m 2.14", "the largest wait: 71m" },
			{ "    2.1", "?   ", "fixed ", "3.70 2.11", "an unknown policy: ?" },
			{ "    1.3", "brkt", "hold  ", "2.47 2.07", "bracket as brkt" },
			{ "    1.2", "hill", "normal", "1.23 2.03", "hillclimb as hill, ms to 1/100" },
			{ "    1.1", "iopa", "fast  ", "   -    -", "no cycle ended yet: -" },
		};
		struct ctl_snapshot s;
		struct ctl_screen scr = { .line = lines, .max = 256 };

		fake_snapshot(&s, 6);
		ctl_watch_layout(&s, 24, 80, &scr);
		ok(scr.nr == 8 && !strcmp(lines[1],
			"CTX.SUB COMM        POL  MODE   LIMIT  INFL  PEND BYTES/S JOBS/S     R WAIT  SVC"),
		   "watch: the column titles, 80 columns with WAIT and SVC");
		for (i = 0; i < 6 && scr.nr == 8; i++) {
			const char *l = lines[2 + i];
			int good = strlen(l) == 80 && !strncmp(l, want[i].id, 7) &&
				   !strncmp(l + 20, want[i].pol, 4) &&
				   !strncmp(l + 25, want[i].mode, 6) &&
				   !strcmp(l + 71, want[i].times);

			ok(good, "watch: line %s: %s (%s, \"%s\")", want[i].id + 4,
			   want[i].what, want[i].pol, want[i].times);
			if (!good)
				diag("|%s|", l);
		}
		s.feat.features &= ~IOPA_FEAT_TIMES;
		ctl_watch_layout(&s, 24, 80, &scr);
		for (i = 2; i < scr.nr; i++)
			if (strlen(lines[i]) != 80 || strcmp(lines[i] + 71, "   -    -"))
				break;
		ok(scr.nr == 8 && i == scr.nr,
		   "watch: a module without IOPA_FEAT_TIMES: WAIT and SVC -");
		ctl_snapshot_free(&s);
	}
	/* Without a listing, the note shows and fits. */
	{
		struct ctl_snapshot s;
		struct ctl_screen scr = { .line = lines, .max = 256 };

		fake_snapshot(&s, 0);
		s.scope = CTL_SCOPE_OWN;
		ctl_watch_layout(&s, 24, 80, &scr);
		ok(scr.nr == 3 && lines[2][0] == '(' && strlen(lines[2]) <= 80,
		   "watch without CAP_SYS_ADMIN: a note line, cut to 80 columns");
	}
	free(lines);
}

static void test_fmt_ms(void)
{
	static const struct { uint32_t us; const char *s; } cases[] = {
		{ 0, "0.00" }, { 9, "0.00" }, { 10, "0.01" }, { 2037, "2.03" },
		{ 9999, "9.99" }, { 10000, "10.0" }, { 12345, "12.3" },
		{ 99999, "99.9" }, { 100000, "100" }, { 1234567, "1234" },
		{ 9999999, "9999" }, { 10000000, "10s" }, { 999999999, "999s" },
		{ 1000000000, "16m" }, { UINT32_MAX, "71m" },
	};
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[8];

		ctl_fmt_ms(cases[i].us, buf);
		if (strcmp(buf, cases[i].s)) {
			diag("%u us: %s, expected %s", cases[i].us, buf, cases[i].s);
			bad++;
		}
	}
	for (i = 0; i < 32; i++) {
		uint32_t v[] = { (1U << i) - 1, 1U << i, (1U << i) * 3 / 2 + 1 };
		size_t k;

		for (k = 0; k < 3; k++) {
			char buf[8];

			ctl_fmt_ms(v[k], buf);
			if (strlen(buf) > 4 || !buf[0]) {
				diag("%u us: \"%s\"", v[k], buf);
				bad++;
			}
		}
	}
	ok(!bad, "microseconds as ms in at most 4 characters (0.05, 12.3, 1234, 12s, 71m)");
}

static void test_fmt_si(void)
{
	static const struct { uint64_t v; const char *s; } cases[] = {
		{ 0, "0" }, { 99999, "99999" }, { 100000, "100k" },
		{ 123456, "123k" }, { 1234567, "1.2M" }, { 99949999, "99.9M" },
		{ 999500, "1.0M" }, { UINT64_MAX, "18.4E" },
	};
	size_t i;
	int bad = 0;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char buf[8];

		ctl_fmt_si(cases[i].v, buf);
		if (strcmp(buf, cases[i].s) || strlen(buf) > 5) {
			diag("%" PRIu64 ": %s, expected %s", cases[i].v, buf, cases[i].s);
			bad++;
		}
	}
	for (i = 0; i < 64; i++) {
		char buf[8];

		ctl_fmt_si((1ULL << i) * 3 / 2 + 1, buf);
		if (strlen(buf) > 5)
			bad++;
	}
	ok(!bad, "numbers in at most 5 characters (12345, 123k, 1.2M ... 18.4E)");
}

/* ---- trace --------------------------------------------------------------------------------------------------- */

static void test_trace(void)
{
	static const char l1[] =
		"      kworker/u8:0-12      [001] ...1.    63.720404: iopa_limit_change: ctx=1 sub=1 old=1 new=2 mode=fast r=0.000 tput=26088369";
	static const char l2[] =
		"  kworker/u8:0-12  [000] d..1. 66.286437: iopa_limit_change: ctx=4294967295 sub=7 old=2 new=1 mode=probe r=1.040 tput=18446744073709551615";
	static const char cyc[] =
		"      kworker/u8:0-12      [001] ...1.    63.719211: iopa_cycle: ctx=1 sub=1 limit=1 mode=fast ms=520 bytes/s=26088369 jobs/s=398 demand=1 cpu_saturated=0 cached=0 jobs=207 wait_us=5120 svc_us=2510 noise=0.021";
	static const char *const bad[] = {
		"iopa_limit_change: ctx=1 sub=1 old=1 new=2 mode=fast r=0.00 tput=1",
		"x [0] 1.0: iopa_limit_change: ctx=1 sub=1 old=1 new=2 mode=fast tput=1",
		"x [0] 1.0: iopa_limit_change: ctx=99999999999 sub=1 old=1 new=2 mode=fast r=0.000 tput=1",
		"x [0] 1.0: xiopa_limit_change: ctx=1 sub=1 old=1 new=2 mode=fast r=0.000 tput=1",
		"",
	};
	struct ctl_trace_event ev;
	char *buf = NULL, err[256];
	struct ctl_jv *v;
	size_t n = 0, i;
	FILE *f;

	ok(!ctl_trace_parse(l1, &ev) && !strcmp(ev.time, "63.720404") &&
	   ev.ctx_id == 1 && ev.sub_id == 1 && ev.old_limit == 1 &&
	   ev.new_limit == 2 && !strcmp(ev.mode, "fast") && ev.r_permille == 0 &&
	   ev.tput == 26088369 && !strcmp(ev.task, "kworker/u8:0-12"),
	   "trace: the line of Documentation/iopa.rst parsed");
	ok(!ctl_trace_parse(l2, &ev) && ev.ctx_id == 4294967295u &&
	   ev.r_permille == 1040 && ev.tput == UINT64_MAX &&
	   !strcmp(ev.mode, "probe") && !strcmp(ev.time, "66.286437"),
	   "trace: largest values, r=1.040 as 1040 per mille");
	ok(ctl_trace_parse(cyc, &ev) != 0, "trace: an iopa_cycle line is not a limit change");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(ctl_trace_parse(bad[i], &ev) != 0, "trace: refuses malformed line %zu", i);

	ctl_trace_parse(l2, &ev);
	f = open_memstream(&buf, &n);
	ctl_trace_print(f, &ev, 0);
	fclose(f);
	ok(!strcmp(buf, "66.286437      ctx 4294967295 sub 7 limit 2 -> 1 mode probe r 1.040 tput 18446744073709551615\n"),
	   "trace: text line");
	if (strcmp(buf, "66.286437      ctx 4294967295 sub 7 limit 2 -> 1 mode probe r 1.040 tput 18446744073709551615\n"))
		diag("%s", buf);
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &n);
	ctl_trace_print(f, &ev, 1);
	ev.time[0] = '\0';
	ctl_trace_print(f, &ev, 1);
	fclose(f);
	{
		char *nl = strchr(buf, '\n');
		struct ctl_jv *w;

		*nl = '\0';
		v = ctl_json_parse(buf, strlen(buf), err, sizeof(err));
		w = ctl_json_parse(nl + 1, strlen(nl + 1), err, sizeof(err));
		ok(v && w && ctl_json_get(v, "time")->type == CTL_J_NUM &&
		   ctl_json_get(w, "time")->type == CTL_J_NULL &&
		   ctl_json_get(v, "new_limit") && ctl_json_get(v, "r_permille"),
		   "trace --json: one valid JSON object per line, time a number (or null)");
		ctl_json_free(v);
		ctl_json_free(w);
	}
	free(buf);
}

/* ---- the binary ------------------------------------------------------------------------------------------------ */

/* Run ./iopactl with @args (NULL-terminated) and @env additions; status. */
static int run_tool(const char *const *args, const char *const *env,
		    char *out, size_t outlen, char *errb, size_t errlen)
{
	char ofile[256], efile[256];
	char *argv[16];
	int status, i;
	pid_t pid;
	char *s;

	snprintf(ofile, sizeof(ofile), "%s/run.out", outdir);
	snprintf(efile, sizeof(efile), "%s/run.err", outdir);
	argv[0] = "./iopactl";
	for (i = 0; args[i] && i < 14; i++)
		argv[i + 1] = (char *)args[i];
	argv[i + 1] = NULL;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int o = open(ofile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(efile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);

		dup2(nul, 0);
		dup2(o, 1);
		dup2(e, 2);
		for (i = 0; env && env[i]; i++)
			putenv((char *)env[i]);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	s = slurp(ofile, NULL);
	snprintf(out, outlen, "%s", s ? s : "");
	free(s);
	s = slurp(efile, NULL);
	snprintf(errb, errlen, "%s", s ? s : "");
	free(s);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void test_binary(void)
{
	static const struct {
		const char *args[6];
		int rc;
		const char *err;	/* substring of stderr */
		const char *out;	/* substring of stdout */
	} cases[] = {
		{ { NULL }, 2, "iopactl: no command given", NULL },
		{ { "--help" }, 0, NULL, "usage: iopactl status" },
		{ { "--version" }, 0, NULL, "iopactl " IOPACTL_VERSION " (libiopa" },
		{ { "set", "bogus=1" }, 2, "iopactl: bogus: unknown tunable", NULL },
		{ { "set", "max_jobs=5", "bogus=1" }, 2, "bogus: unknown tunable", NULL },
		{ { "set", "max_jobs=abc" }, 2, "max_jobs=abc: the value must be an unsigned decimal number", NULL },
		{ { "set", "default_policy=fifo" }, 2, "not a policy", NULL },
		{ { "get", "nope" }, 2, "nope: unknown tunable", NULL },
		{ { "watch", "--count", "0" }, 2, "--count", NULL },
		{ { "frob" }, 2, "unknown command", NULL },
	};
	char out[8192], err[8192];
	struct stat st;
	size_t i;

	if (access("./iopactl", X_OK)) {
		skip("./iopactl is not built");
		return;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char desc[256] = "";
		int rc, j;

		for (j = 0; cases[i].args[j]; j++) {
			strcat(desc, " ");
			strcat(desc, cases[i].args[j]);
		}
		rc = run_tool(cases[i].args, NULL, out, sizeof(out), err, sizeof(err));
		ok(rc == cases[i].rc &&
		   (!cases[i].err || strstr(err, cases[i].err)) &&
		   (!cases[i].out || strstr(out, cases[i].out)),
		   "'iopactl%s' exits %d%s%s", desc, cases[i].rc,
		   cases[i].err ? ", says: " : "", cases[i].err ? cases[i].err : "");
		if (rc != cases[i].rc || (cases[i].err && !strstr(err, cases[i].err)))
			diag("exit %d, stderr: %s", rc, err);
	}
	if (stat(CTL_SYSFS_DIR, &st) == 0) {
		skip("the iopa module is loaded here: not testing its absence");
		return;
	}
	{
		static const char *const a1[] = { "status", NULL };
		static const char *const a2[] = { "status", "--json", NULL };
		static const char *const a3[] = { "set", "max_jobs=5", NULL };
		static const char *const a4[] = { "watch", "--count", "1", NULL };
		int rc;

		rc = run_tool(a1, NULL, out, sizeof(out), err, sizeof(err));
		ok(rc == 1 && strstr(err, "not loaded"), "without the module: status exits 1, says not loaded");
		rc = run_tool(a2, NULL, out, sizeof(out), err, sizeof(err));
		ok(rc == 1 && strstr(out, "\"loaded\": false"),
		   "without the module: status --json exits 1, still prints JSON");
		rc = run_tool(a3, NULL, out, sizeof(out), err, sizeof(err));
		ok(rc == 1 && strstr(err, "not loaded"), "without the module: set exits 1");
		rc = run_tool(a4, NULL, out, sizeof(out), err, sizeof(err));
		ok(rc == 1, "without the module: watch exits 1");
	}
}

/* ---- the LD_PRELOAD fake device ------------------------------------------------------------------------------- */

static void fake_sysfs(const char *dir)
{
	char path[1024];
	size_t i;
	FILE *f;

	snprintf(path, sizeof(path), "rm -rf %s && mkdir -p %s/class/stats %s/module", dir, dir, dir);
	if (system(path))
		return;
	for (i = 0; i < CTL_NR_TUNABLES; i++) {
		snprintf(path, sizeof(path), "%s/class/%s", dir, ctl_tunables[i].name);
		f = fopen(path, "w");
		if (ctl_tunables[i].kind == CTL_TUN_POLICY)
			fputs("bracket\n", f);
		else
			fprintf(f, "%zu\n", 100 + i);
		fclose(f);
	}
	for (i = 0; i < CTL_NR_TOTALS; i++) {
		snprintf(path, sizeof(path), "%s/class/stats/%s", dir, ctl_totals[i]);
		f = fopen(path, "w");
		fprintf(f, "%zu\n", i);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/module/srcversion", dir);
	f = fopen(path, "w");
	fputs("ABCDEF\n", f);
	fclose(f);
}

static int json_ok(const char *text, const char *scope, long nsubs)
{
	char err[256];
	struct ctl_jv *v = ctl_json_parse(text, strlen(text), err, sizeof(err));
	const struct ctl_jv *sc = ctl_json_get(v, "submitters_scope");
	const struct ctl_jv *subs = ctl_json_get(v, "submitters");
	int good = v && sc && !strcmp(sc->s, scope) && subs &&
		   (long)subs->n == nsubs;

	if (!good)
		diag("json: %s; scope %s, %zu subs", v ? "parsed" : err,
		     sc ? sc->s : "-", subs ? subs->n : 0);
	ctl_json_free(v);
	return good;
}

static void test_fake_device(void)
{
	static char out[16 << 20];
	char dir[320], env_dir[400], err[8192], abs[256], pre[400];
	static const char *const st[] = { "status", "--json", NULL };
	static const char *const stt[] = { "status", NULL };
	int rc;

	if (access("fake-iopa.so", R_OK)) {
		skip("fake-iopa.so not built: no fake-device tests");
		return;
	}
	if (!getcwd(abs, sizeof(abs)))
		return;
	snprintf(dir, sizeof(dir), "%s/%s/fakesys", abs, outdir);
	fake_sysfs(dir);
	snprintf(env_dir, sizeof(env_dir), "FAKE_IOPA_ROOT=%s", dir);
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s/fake-iopa.so", abs);

	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=all", "FAKE_IOPA_NSUBS=7", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "all", 7) && strstr(out, "\"max_jobs\": 100,") &&
		   strstr(out, "\"srcversion\": \"ABCDEF\"") && strstr(out, "\"list\""),
		   "fake device: status --json lists 7 submitters of all contexts, sysfs values, features");
		if (rc)
			diag("exit %d: %s", rc, err);
		/* Canned submitter 2: policy bracket; 1: svc_us 2001. */
		ok(rc == 0 && strstr(out, "      \"bracket\",\n      \"times\",\n      \"metrics\"\n    ],") &&
		   strstr(out, "\"features_mask\": 8447,") &&
		   strstr(out, "\"default_policy\": \"bracket\"\n") &&
		   strstr(out, "\"policy\": \"bracket\",") &&
		   strstr(out, "\"wait_us\": 1234,\n      \"svc_us\": 2001,\n      \"completions\": 10,\n      \"noise_permille\": 21,"),
		   "fake device: status --json: features bracket and times, default_policy bracket, a bracket submitter, the times");
		rc = run_tool(stt, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && strstr(out, "submitters (all contexts): 7") &&
		   strstr(out, "max_jobs             100") && !strstr(out, "note:"),
		   "fake device: status as text");
		ok(strstr(out, "features 0x20ff: ioctl poll adaptive uring_cmd order list bracket times metrics\n") &&
		   strstr(out, "default_policy       bracket\n") &&
		   strstr(out, " bracket   ") &&
		   strstr(out, "    1.234     2.001      10   2.1% "),
		   "fake device: status as text: features, default_policy, policy bracket, the times");
	}
	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=all", "FAKE_IOPA_NSUBS=3",
				      "FAKE_IOPA_FEATURES=0x3f", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "all", 3) && !strstr(out, "\"times\"") &&
		   strstr(out, "\"wait_us\": null,\n      \"svc_us\": null,\n      \"completions\": null,\n      \"noise_permille\": null,") &&
		   !strstr(out, "\"svc_us\": 2"),
		   "fake device: a module without IOPA_FEAT_TIMES: the times are null");
	}
	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=all", "FAKE_IOPA_NSUBS=5", "FAKE_IOPA_GROW=40", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "all", 45),
		   "fake device: the list grows between sizing and fetching: retried, all 45 shown");
	}
	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=all", "FAKE_IOPA_NSUBS=5000", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "all", 4096) && strstr(out, "\"submitters_total\": 5000") &&
		   strstr(out, "only the first 4096"),
		   "fake device: 5000 submitters: IOPA_LIST_MAX (4096) shown, total 5000, a note");
	}
	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=eperm", "FAKE_IOPA_NSUBS=3", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "own", 0) && strstr(out, "CAP_SYS_ADMIN"),
		   "fake device: EPERM with IOPA_LIST_F_ALL: falls back to the own context, notes root is needed");
		rc = run_tool(stt, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && strstr(out, "note: listing the submitters of every context needs root (CAP_SYS_ADMIN)"),
		   "fake device: the same note in the text status");
	}
	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=enotty", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "none", 0) && strstr(out, "cannot list submitters"),
		   "fake device: ENOTTY: says the module cannot list");
	}
	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=nofeat", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "none", 0) && strstr(out, "no IOPA_FEAT_LIST"),
		   "fake device: no IOPA_FEAT_LIST: says so (and never calls the ioctl)");
	}
	{
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=noopen", NULL };

		rc = run_tool(st, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && json_ok(out, "none", 0) && strstr(out, "\"abi\": null") &&
		   strstr(out, "need root"),
		   "fake device: /dev/iopa not openable (EACCES): sysfs part shown, note says root is needed");
	}
	{
		static const char *const w[] = { "watch", "--count", "3", "--interval", "0.01", NULL };
		const char *env[] = { pre, env_dir, "FAKE_IOPA_LIST=all", "FAKE_IOPA_NSUBS=100", NULL };
		char *p, *line;
		int lines = 0, longest = 0, frames = 0;

		rc = run_tool(w, env, out, sizeof(out), err, sizeof(err));
		for (line = out; (p = strchr(line, '\n')); line = p + 1) {
			int len = (int)(p - line);

			lines++;
			if (len > longest)
				longest = len;
			if (!strncmp(line, "iopa  jobs/s", 12))
				frames++;
		}
		ok(rc == 0 && frames == 3 && longest <= 80 && !strchr(out, '\033'),
		   "fake device: watch --count 3 (not a tty): 3 frames, no line over 80 columns, no escape codes");
		if (rc || frames != 3 || longest > 80)
			diag("exit %d, %d frames, %d lines, longest %d: %s", rc, frames, lines, longest, err);
		/* Canned 98: bracket, wait 98 * 1234 us, svc 2098 us. */
		ok(strstr(out, "\n   50.1 fake\"98?    brkt hold       3     0     0   98.0M     98 0.000  120 2.09\n") != NULL,
		   "fake device: watch: a bracket submitter's line, with WAIT and SVC in ms");
	}
	{
		static const char *const s1[] = { "set", "default_policy=iopa", NULL };
		static const char *const s2[] = { "set", "default_policy=bracket", NULL };
		static const char *const s3[] = { "set", "default_policy=fifo", NULL };
		static const char *const g1[] = { "get", "default_policy", NULL };
		const char *env[] = { pre, env_dir, NULL };
		int r1, r2;

		r1 = run_tool(s1, env, out, sizeof(out), err, sizeof(err));
		r2 = run_tool(g1, env, out, sizeof(out), err, sizeof(err));
		ok(r1 == 0 && r2 == 0 && !strcmp(out, "iopa\n"),
		   "fake sysfs: set default_policy=iopa, get: iopa");
		r1 = run_tool(s2, env, out, sizeof(out), err, sizeof(err));
		r2 = run_tool(g1, env, out, sizeof(out), err, sizeof(err));
		ok(r1 == 0 && r2 == 0 && !strcmp(out, "bracket\n"),
		   "fake sysfs: set default_policy=bracket, get: bracket");
		r1 = run_tool(s3, env, out, sizeof(out), err, sizeof(err));
		r1 = r1 == 2 && !strcmp(err, "iopactl: default_policy=fifo: not a policy (iopa, hillclimb or bracket)\nTry 'iopactl --help'.\n");
		r2 = run_tool(g1, env, out, sizeof(out), err, sizeof(err));
		ok(r1 && r2 == 0 && !strcmp(out, "bracket\n"),
		   "fake sysfs: set default_policy=fifo: exit 2, the three names, unchanged");
	}
	{
		static const char *const s1[] = { "set", "max_jobs=5000", NULL };
		static const char *const g1[] = { "get", "max_jobs", NULL };
		static const char *const g2[] = { "get", "stats/workers", NULL };
		static const char *const s2[] = { "set", "max_jobs=6000", "max_workers=0", "max_submitters=7", NULL };
		static const char *const s3[] = { "set", "max_workers=0", "max_jobs=1" , NULL };
		static const char *const s4[] = { "set", "max_jobs=7", NULL };
		static const char *const g3[] = { "get", "max_submitters", NULL };
		const char *env[] = { pre, env_dir, "FAKE_IOPA_EINVAL=max_workers", "FAKE_IOPA_EACCES=fast_cap", NULL };
		const char *env2[] = { pre, env_dir, "FAKE_IOPA_EACCES=max_jobs", NULL };

		rc = run_tool(s1, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && !err[0], "fake sysfs: set max_jobs=5000 exits 0, silently");
		rc = run_tool(g1, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && !strcmp(out, "5000\n"), "fake sysfs: get max_jobs prints 5000");
		rc = run_tool(g2, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 0 && !strcmp(out, "2\n"), "fake sysfs: get stats/workers");
		rc = run_tool(s2, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 1 && strstr(err, "iopactl: max_workers=0: invalid value (range 1..65536)\n") &&
		   strstr(err, "iopactl: applied: max_jobs=6000\n") &&
		   strstr(err, "iopactl: not applied: max_workers=0 max_submitters=7\n"),
		   "fake sysfs: set a=ok b=refused c: exit 1, the range, what was and was not applied");
		if (rc != 1 || !strstr(err, "applied: max_jobs=6000"))
			diag("exit %d: %s", rc, err);
		rc = run_tool(g1, env, out, sizeof(out), err, sizeof(err));
		ok(!strcmp(out, "6000\n"), "fake sysfs: ... the first was written");
		rc = run_tool(g3, env, out, sizeof(out), err, sizeof(err));
		ok(!strcmp(out, "101\n"), "fake sysfs: ... the one after the refusal was not");
		rc = run_tool(s3, env, out, sizeof(out), err, sizeof(err));
		ok(rc == 1 && strstr(err, "iopactl: nothing applied\n"),
		   "fake sysfs: the first refused: nothing applied");
		rc = run_tool(s4, env2, out, sizeof(out), err, sizeof(err));
		ok(rc == 1 && !strcmp(err, "iopactl: max_jobs=7: need root (Permission denied)\n"),
		   "fake sysfs: EACCES: need root, exit 1");
		if (strcmp(err, "iopactl: max_jobs=7: need root (Permission denied)\n"))
			diag("exit %d: %s", rc, err);
	}
}

/*
 * trace against a fake tracefs: trace_pipe is a FIFO that a child
 * writes; the enable file must read 1 while iopactl reads and its old
 * value afterwards; tracing_on 0 is turned on and back off.
 */
static int fake_trace_run(const char root[300], const char *const *args,
			  const char *pre, const char *tracing_on,
			  char *out, size_t outlen, char *err, size_t errlen,
			  char *seen_enable, char *seen_on)
{
	static const char lines[] =
		"      kworker/u8:0-12      [001] ...1.    63.719211: iopa_cycle: ctx=1 sub=1 limit=1 mode=fast ms=520 bytes/s=26088369 jobs/s=398 demand=1 cpu_saturated=0 cached=0 jobs=207 wait_us=5120 svc_us=2510 noise=0.021\n"
		"      kworker/u8:0-12      [001] ...1.    63.720404: iopa_limit_change: ctx=1 sub=1 old=1 new=2 mode=fast r=0.000 tput=26088369\n"
		"     some-other-event: x\n"
		"      kworker/u8:0-12      [001] ...1.    64.226223: iopa_limit_change: ctx=1 sub=1 old=2 new=3 mode=probe r=1.040 tput=27145088\n"
		"      kworker/u8:0-12      [001] ...1.    65.250025: iopa_limit_change: ctx=1 sub=1 old=3 new=2 mode=normal r=0.978 tput=26560000\n";
	char dir[320], path[1024], envr[400];
	const char *env[] = { pre, envr, NULL };
	int rc, status, fd;
	pid_t w;

	snprintf(dir, sizeof(dir), "%s/tracing", root);
	snprintf(path, sizeof(path), "rm -rf %s && mkdir -p %s/events/iopa/iopa_limit_change",
		 dir, dir);
	if (system(path))
		return -1;
	snprintf(path, sizeof(path), "%s/events/iopa/iopa_limit_change/enable", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "0\n", 2) != 2)
		return -1;
	close(fd);
	snprintf(path, sizeof(path), "%s/tracing_on", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, tracing_on, 2) != 2)
		return -1;
	close(fd);
	snprintf(path, sizeof(path), "%s/trace_pipe", dir);
	if (mkfifo(path, 0600))
		return -1;
	snprintf(envr, sizeof(envr), "FAKE_IOPA_ROOT=%s", root);

	fflush(stdout);
	w = fork();
	if (w == 0) {
		/* Blocks until iopactl opens trace_pipe, after enabling. */
		int p = open(path, O_WRONLY);
		char f[600];
		char *s;

		snprintf(f, sizeof(f), "%s/events/iopa/iopa_limit_change/enable", dir);
		s = slurp(f, NULL);
		snprintf(f, sizeof(f), "%s/seen-enable", root);
		if (s) {
			FILE *o = fopen(f, "w");

			fputs(s, o);
			fclose(o);
		}
		free(s);
		snprintf(f, sizeof(f), "%s/tracing_on", dir);
		s = slurp(f, NULL);
		snprintf(f, sizeof(f), "%s/seen-on", root);
		if (s) {
			FILE *o = fopen(f, "w");

			fputs(s, o);
			fclose(o);
		}
		free(s);
		signal(SIGPIPE, SIG_IGN);
		if (write(p, lines, sizeof(lines) - 1) < 0)
			_exit(1);
		sleep(1);
		_exit(0);
	}
	rc = run_tool(args, env, out, outlen, err, errlen);
	kill(w, SIGKILL);
	waitpid(w, &status, 0);
	snprintf(path, sizeof(path), "%s/seen-enable", root);
	{
		char *s = slurp(path, NULL);

		snprintf(seen_enable, 8, "%s", s ? s : "?");
		free(s);
		snprintf(path, sizeof(path), "%s/seen-on", root);
		s = slurp(path, NULL);
		snprintf(seen_on, 8, "%s", s ? s : "?");
		free(s);
	}
	return rc;
}

static void test_fake_trace(void)
{
	static char out[65536];
	char root[300], pre[400], err[8192], se[8], so[8], path[1024], abs[256];
	static const char *const t1[] = { "trace", "--count", "2", NULL };
	static const char *const t2[] = { "trace", "--count", "1", "--json", NULL };
	char *s;
	int rc;

	if (access("fake-iopa.so", R_OK) || !getcwd(abs, sizeof(abs))) {
		skip("fake-iopa.so not built: no fake tracefs tests");
		return;
	}
	snprintf(root, sizeof(root), "%s/%s/faketrace", abs, outdir);
	snprintf(path, sizeof(path), "rm -rf %s && mkdir -p %s", root, root);
	if (system(path))
		return;
	snprintf(pre, sizeof(pre), "LD_PRELOAD=%s/fake-iopa.so", abs);

	rc = fake_trace_run(root, t1, pre, "1\n", out, sizeof(out), err, sizeof(err), se, so);
	ok(rc == 0 && !strcmp(out,
		"63.720404      ctx 1 sub 1 limit 1 -> 2 mode fast r 0.000 tput 26088369\n"
		"64.226223      ctx 1 sub 1 limit 2 -> 3 mode probe r 1.040 tput 27145088\n"),
	   "fake tracefs: trace --count 2 prints the two limit changes, skips other lines, exits 0");
	if (rc)
		diag("exit %d: %s", rc, err);
	else if (strncmp(out, "63.72", 5))
		diag("%s", out);
	ok(!strcmp(se, "1\n"), "fake tracefs: the event was enabled while reading");
	snprintf(path, sizeof(path), "%s/tracing/events/iopa/iopa_limit_change/enable", root);
	s = slurp(path, NULL);
	ok(s && s[0] == '0', "fake tracefs: ... and disabled again on exit");
	free(s);

	rc = fake_trace_run(root, t2, pre, "0\n", out, sizeof(out), err, sizeof(err), se, so);
	ok(rc == 0 && !strcmp(out,
		"{\"time\": 63.720404, \"ctx\": 1, \"sub\": 1, \"old_limit\": 1, \"new_limit\": 2, \"mode\": \"fast\", \"r_permille\": 0, \"tput\": 26088369, \"task\": \"kworker/u8:0-12\"}\n"),
	   "fake tracefs: trace --count 1 --json: one JSON line");
	if (rc || strncmp(out, "{", 1))
		diag("exit %d: %s %s", rc, out, err);
	snprintf(path, sizeof(path), "%s/tracing/tracing_on", root);
	s = slurp(path, NULL);
	ok(so[0] == '1' && s && s[0] == '0' && strstr(err, "tracing was off"),
	   "fake tracefs: tracing_on 0 turned on while reading, with a note, and back to 0");
	free(s);
}

static void test_man_page(void)
{
	char cmd[256];

	if (system("command -v groff >/dev/null 2>&1")) {
		skip("no groff");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "[ -z \"$(LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z iopactl.8 2>&1)\" ]");
	ok(system(cmd) == 0, "man page: groff -man -ww clean");
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	mkdir(outdir, 0755);
	test_cmdline();
	test_sub_cmdline();
	test_assign();
	test_messages();
	test_names();
	test_abi_doc();
	test_json_escape();
	test_json_parser();
	test_status_json();
	test_knees_parse();
	test_status_text();
	test_man_schema();
	test_watch();
	test_fmt_si();
	test_fmt_ms();
	test_trace();
	test_binary();
	test_fake_device();
	test_fake_trace();
	test_man_page();
	printf("1..%d\n", t_n);
	printf("# %d passed, %d failed\n", t_n - t_failed, t_failed);
	return t_failed ? 1 : 0;
}
