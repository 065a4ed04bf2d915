// SPDX-License-Identifier: GPL-2.0
/*
 * iopactl: inspect and tune the iopa module.
 *
 *   iopactl status [--json]            versions, features, tunables, totals,
 *                                      submitters of every context
 *   iopactl set NAME=VALUE...          write tunables
 *   iopactl get NAME                   read one
 *   iopactl watch|top [--interval SECONDS] [--count N] [--lines|--json]
 *   iopactl trace [--count N] [--json] follow iopa_limit_change
 *   iopactl metrics [--format F] [--textfile DIR]   OpenMetrics/Prometheus
 *   iopactl sub CTX.SUB ...            root: one submitter's limit, bounds
 *
 * See iopactl.8.  The layout of this directory is described in iopactl.h.
 */
#define _GNU_SOURCE		/* ppoll() */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <libiopa.h>

#include "sys.h"

static volatile sig_atomic_t ctl_stop;

static void on_signal(int sig)
{
	(void)sig;
	ctl_stop = 1;
}

/*
 * SIGINT, SIGTERM and SIGHUP set ctl_stop.  They stay blocked except
 * inside ppoll(), so none can slip in between a check and a wait; *old
 * gets the mask to wait with.
 */
static void catch_signals(sigset_t *old)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;
	sigset_t block;
	size_t i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	signal(SIGPIPE, SIG_IGN);
	sigprocmask(SIG_BLOCK, &block, old);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigdelset(old, sigs[i]);
}

static void err_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void err_msg(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("iopactl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int not_loaded(void)
{
	err_msg("the iopa module is not loaded (no %s)", CTL_SYSFS_DIR);
	return CTL_EXIT_FAIL;
}

/* ---- status -------------------------------------------------------------- */

static int cmd_status(const struct ctl_opts *o)
{
	struct ctl_snapshot s;
	int fd = -1;

	memset(&s, 0, sizeof(s));
	ctl_snapshot_take(&s, &fd);
	if (fd >= 0)
		close(fd);
	if (o->json)
		ctl_render_status_json(stdout, &s);
	else if (s.module_loaded)
		ctl_render_status_text(stdout, &s);
	ctl_snapshot_free(&s);
	if (fflush(stdout) || ferror(stdout)) {
		err_msg("writing the output: %s", strerror(errno));
		return CTL_EXIT_FAIL;
	}
	if (!s.module_loaded)
		return not_loaded();
	return CTL_EXIT_OK;
}

/* ---- metrics ------------------------------------------------------------- */

/*
 * --textfile DIR: the exposition goes to DIR/iopa.prom, written whole
 * into a temporary file of DIR and renamed over it, so that
 * node_exporter's textfile collector never reads half of one.
 */
static FILE *textfile_open(const char *dir, char *tmp, size_t len)
{
	FILE *f;
	int fd;

	if ((size_t)snprintf(tmp, len, "%s/.iopa.prom.XXXXXX", dir) >= len) {
		err_msg("--textfile %s: path too long", dir);
		return NULL;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err_msg("--textfile %s: %s", dir, strerror(errno));
		return NULL;
	}
	/* Readable by the collector, whoever runs it. */
	if (fchmod(fd, 0644) || !(f = fdopen(fd, "w"))) {
		err_msg("--textfile %s: %s", dir, strerror(errno));
		close(fd);
		unlink(tmp);
		return NULL;
	}
	return f;
}

static int textfile_close(FILE *f, const char *dir, const char *tmp)
{
	char path[PATH_MAX];
	int bad = fflush(f) || ferror(f) || fsync(fileno(f));

	bad |= fclose(f) != 0;
	if (!bad && (size_t)snprintf(path, sizeof(path), "%s/iopa.prom", dir) <
		    sizeof(path) && !rename(tmp, path))
		return CTL_EXIT_OK;
	err_msg("--textfile %s: %s", dir, strerror(errno));
	unlink(tmp);
	return CTL_EXIT_FAIL;
}

/*
 * Exits 0 whenever it wrote an exposition, also without the module
 * (iopa_module_loaded 0, and a message on stderr): a scraper then sees
 * that, rather than the last numbers.
 */
static int cmd_metrics(const struct ctl_opts *o)
{
	struct ctl_metrics_opts mo = { .openmetrics = !o->prometheus };
	char tmp[PATH_MAX];
	struct ctl_snapshot s;
	struct ctl_cgroups cg;
	FILE *out = stdout;
	int fd = -1;

	memset(&s, 0, sizeof(s));
	ctl_snapshot_take(&s, &fd);
	if (fd >= 0)
		close(fd);
	if (o->textfile) {
		out = textfile_open(o->textfile, tmp, sizeof(tmp));
		if (!out) {
			ctl_snapshot_free(&s);
			return CTL_EXIT_FAIL;
		}
	}
	if (!s.module_loaded) {
		not_loaded();
		ctl_render_metrics_absent(out, &mo);
	} else {
		/* Without every context: the totals only, and why. */
		if (s.scope != CTL_SCOPE_ALL)
			err_msg("metrics: no submitters: listing every context %s",
				s.list_err == EPERM ? "needs CAP_SYS_ADMIN" :
				s.no_list ? "is not supported by this module" :
				"failed");
		if (s.scope != CTL_SCOPE_ALL)
			s.nr = 0;
		ctl_cgroups_resolve(&cg, &s);
		mo.cgroup_path = ctl_cgroup_path;
		mo.arg = &cg;
		ctl_render_metrics(out, &s, &mo);
		ctl_cgroups_free(&cg);
	}
	ctl_snapshot_free(&s);
	if (o->textfile)
		return textfile_close(out, o->textfile, tmp);
	if (fflush(stdout) || ferror(stdout)) {
		err_msg("writing the output: %s", strerror(errno));
		return CTL_EXIT_FAIL;
	}
	return CTL_EXIT_OK;
}

/* ---- sub: root's commands on any submitter --------------------------------- */

/* The listing's entry of submitter @c->ctx_id.@c->sub_id, in @out. */
static int find_sub(int fd, const struct ctl_sub_cmd *c,
		    struct iopa_sub_info *out)
{
	struct ctl_snapshot s;
	size_t i;
	int r = -ESRCH;

	memset(&s, 0, sizeof(s));
	ctl_snapshot_take(&s, &fd);
	if (s.scope != CTL_SCOPE_ALL)
		r = s.list_err ? -s.list_err : -EPERM;
	for (i = 0; s.scope == CTL_SCOPE_ALL && i < s.nr; i++) {
		if (s.subs[i].ctx_id == c->ctx_id &&
		    s.subs[i].sub_id == c->sub_id) {
			*out = s.subs[i];
			r = 0;
			break;
		}
	}
	ctl_snapshot_free(&s);
	return r;
}

static int sub_failed(const struct ctl_sub_cmd *c, const char *what, int r)
{
	err_msg("sub %u.%u: %s: %s%s", c->ctx_id, c->sub_id, what,
		strerror(-r),
		r == -EPERM || r == -EACCES ? " (needs root: CAP_SYS_ADMIN)" :
		r == -ESRCH ? " (no such open submitter: see iopactl status)" :
		r == -ENOTTY ? " (the module has no IOPA_IOC_SUB_ADMIN)" : "");
	return CTL_EXIT_FAIL;
}

static int cmd_sub(const struct ctl_sub_cmd *c)
{
	struct iopa_sub_admin a;
	struct iopa_sub_info si;
	int fd, r;

	memset(&si, 0, sizeof(si));
	if (!ctl_module_loaded())
		return not_loaded();
	fd = iopa_open();
	if (fd < 0)
		return sub_failed(c, CTL_DEV_PATH, fd);
	if (c->has_limit) {
		memset(&a, 0, sizeof(a));
		a.ctx_id = c->ctx_id;
		a.sub_id = c->sub_id;
		a.op = IOPA_ADMIN_SET_LIMIT;
		a.limit.limit = c->limit;
		r = iopa_sub_admin(fd, &a);
		if (r < 0) {
			close(fd);
			return sub_failed(c, "limit", r);
		}
	}
	if (c->has_min || c->has_max || c->has_weight ||
	    c->policy != IOPA_POLICY_KEEP) {
		/* The bound not given stays as it is. */
		r = find_sub(fd, c, &si);
		if (r < 0) {
			close(fd);
			return sub_failed(c, "reading its bounds", r);
		}
		memset(&a, 0, sizeof(a));
		a.ctx_id = c->ctx_id;
		a.sub_id = c->sub_id;
		a.op = IOPA_ADMIN_SET_ADAPT;
		a.adapt.policy = c->policy;
		a.adapt.min = c->has_min ? c->min : si.state.min;
		a.adapt.max = c->has_max ? c->max : si.state.max;
		if (c->has_weight) {
			a.adapt.flags = IOPA_ADAPT_F_WEIGHT;
			a.adapt.weight = c->weight;
		}
		r = iopa_sub_admin(fd, &a);
		if (r < 0) {
			close(fd);
			return sub_failed(c, "bounds, weight or policy", r);
		}
	}
	close(fd);
	return CTL_EXIT_OK;
}

/* ---- set, get ------------------------------------------------------------ */

static void list_assign(const char *what, const struct ctl_assign *a,
			size_t from, size_t to)
{
	size_t i;

	fprintf(stderr, "iopactl: %s:", what);
	for (i = from; i < to; i++)
		fprintf(stderr, " %s", a[i].text);
	fputc('\n', stderr);
}

static int cmd_set(const struct ctl_opts *o)
{
	size_t i;

	if (!ctl_module_loaded())
		return not_loaded();
	for (i = 0; i < o->nr_assign; i++) {
		const struct ctl_assign *a = &o->assign[i];
		char msg[512];
		int r = ctl_sysfs_write(a->tun->name, a->value);

		if (!r)
			continue;
		ctl_set_error_message(a, -r, msg, sizeof(msg));
		err_msg("%s", msg);
		if (o->nr_assign > 1) {
			if (i)
				list_assign("applied", o->assign, 0, i);
			else
				err_msg("nothing applied");
			list_assign("not applied", o->assign, i, o->nr_assign);
		}
		return CTL_EXIT_FAIL;
	}
	return CTL_EXIT_OK;
}

static int cmd_get(const struct ctl_opts *o)
{
	char rel[64], buf[256];
	int r;

	if (!ctl_module_loaded())
		return not_loaded();
	snprintf(rel, sizeof(rel), "%s", o->get_name);
	if (!strncmp(rel, "stats.", 6))
		rel[5] = '/';
	r = ctl_sysfs_read(rel, buf, sizeof(buf));
	if (r) {
		err_msg("%s: %s", o->get_name, r == -ENOENT ?
			"not in this iopa module" : strerror(-r));
		return CTL_EXIT_FAIL;
	}
	printf("%s\n", buf);
	return fflush(stdout) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}

/* ---- watch --------------------------------------------------------------- */

static struct termios ctl_saved_tio;
static int ctl_tio_saved;

static void term_restore(void)
{
	if (ctl_tio_saved) {
		tcsetattr(STDIN_FILENO, TCSAFLUSH, &ctl_saved_tio);
		ctl_tio_saved = 0;
	}
}

/* Keys without Enter, no echo; signals (Ctrl-C) as usual. */
static void term_keys(void)
{
	struct termios t;

	if (tcgetattr(STDIN_FILENO, &ctl_saved_tio))
		return;
	t = ctl_saved_tio;
	t.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &t) == 0)
		ctl_tio_saved = 1;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait @ms for 'q' on a terminal or a signal: 1 to quit, 0 to go on. */
static int watch_wait(int keys, uint32_t ms, const sigset_t *mask)
{
	int64_t end = now_ms() + ms;

	for (;;) {
		struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
		int64_t left = end - now_ms();
		struct timespec ts;
		int r;

		if (ctl_stop)
			return 1;
		if (left <= 0)
			return 0;
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		r = ppoll(&pfd, keys ? 1 : 0, &ts, mask);
		if (r < 0 && errno != EINTR)
			return 1;
		if (r > 0) {
			char c;

			if (read(STDIN_FILENO, &c, 1) != 1)
				return 1;	/* the terminal went away */
			if (c == 'q' || c == 'Q')
				return 1;
		}
	}
}

/* The local time as "2026-11-27T01:02:03", for watch --lines. */
static void stamp_now(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;

	if (!localtime_r(&t, &tm) ||
	    !strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

static int64_t epoch_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int cmd_watch(const struct ctl_opts *o)
{
	int stream = o->lines || o->json;
	int tty_out = !stream && isatty(STDOUT_FILENO);
	int keys = !stream && isatty(STDIN_FILENO);
	char (*lines)[CTL_WATCH_MAX_COLS + 1] = NULL;
	struct ctl_snapshot s;
	struct ctl_screen scr;
	uint32_t interval = o->interval_ms;
	uint64_t frames = 0;
	size_t max_rows = 0;
	sigset_t mask;
	int fd = -1, rc = CTL_EXIT_OK;

	if (!ctl_module_loaded())
		return not_loaded();
	if (!interval) {
		char buf[32];
		uint64_t v;

		interval = 1000;
		if (!ctl_sysfs_read("normal_cycle_ms", buf, sizeof(buf)) &&
		    !ctl_parse_u64(buf, &v))
			interval = v < 100 ? 100 : v > 60000 ? 60000 : (uint32_t)v;
	}
	catch_signals(&mask);
	if (keys)
		term_keys();
	memset(&s, 0, sizeof(s));
	while (!ctl_stop) {
		unsigned int rows, cols;
		size_t i;

		/*
		 * A context fd per frame, closed at once: holding one between
		 * frames would pin the module (rmmod: in use) and hide its
		 * unloading from us.
		 */
		ctl_snapshot_take(&s, &fd);
		if (fd >= 0) {
			close(fd);
			fd = -1;
		}
		if (stream) {
			char stamp[32];

			if (o->json) {
				ctl_render_watch_json(stdout, &s, epoch_ms());
			} else {
				stamp_now(stamp, sizeof(stamp));
				ctl_render_watch_lines(stdout, &s, stamp, !frames);
			}
			goto shown;
		}
		ctl_term_size(STDOUT_FILENO, &rows, &cols);
		if (rows > max_rows) {
			void *p = realloc(lines, rows * sizeof(*lines));

			if (!p) {
				err_msg("out of memory");
				rc = CTL_EXIT_FAIL;
				break;
			}
			lines = p;
			max_rows = rows;
		}
		scr.line = lines;
		scr.max = max_rows;
		ctl_watch_layout(&s, rows, cols, &scr);
		if (tty_out)
			fputs("\033[H\033[2J", stdout);
		else if (frames)
			putchar('\n');
		for (i = 0; i < scr.nr; i++) {
			fputs(scr.line[i], stdout);
			/* On a terminal, a newline after the last row scrolls. */
			if (!tty_out || i + 1 < scr.nr)
				putchar('\n');
		}
shown:
		if (fflush(stdout) || ferror(stdout)) {
			rc = CTL_EXIT_FAIL;
			break;
		}
		if (!s.module_loaded) {
			rc = CTL_EXIT_FAIL;
			break;
		}
		frames++;
		if (o->count && frames >= o->count)
			break;
		if (watch_wait(keys, interval, &mask))
			break;
	}
	term_restore();
	if (tty_out) {
		putchar('\n');
		fflush(stdout);
	}
	if (fd >= 0)
		close(fd);
	ctl_snapshot_free(&s);
	free(lines);
	return rc;
}

/* ---- trace --------------------------------------------------------------- */

static const char *const ctl_tracefs[] = {
	"/sys/kernel/tracing", "/sys/kernel/debug/tracing",
};

#define NR_TRACEFS (sizeof(ctl_tracefs) / sizeof(ctl_tracefs[0]))
#define EVENT_DIR "events/iopa/" CTL_TRACE_EVENT

/* Write @val to @path; 0 or -errno. */
static int write_file(const char *path, const char *val)
{
	ssize_t n;
	int fd = open(path, O_WRONLY | O_CLOEXEC), e;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	e = errno;
	close(fd);
	return n < 0 ? -e : 0;
}

static int trace_fail(const char *what, const char *path, int err)
{
	if (err == EACCES || err == EPERM)
		err_msg("%s %s: need root (%s)", what, path, strerror(err));
	else
		err_msg("%s %s: %s", what, path, strerror(err));
	return CTL_EXIT_FAIL;
}

/* Read trace_pipe until @count events (0: until a signal). */
static int trace_loop(int fd, const struct ctl_opts *o, const sigset_t *mask)
{
	char buf[8192];
	size_t have = 0;
	uint64_t seen = 0;

	while (!ctl_stop) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		/* A timeout too, in case poll() of trace_pipe never wakes. */
		struct timespec ts = { .tv_sec = 0, .tv_nsec = 500000000 };
		ssize_t n;
		char *nl;

		if (ppoll(&pfd, 1, &ts, mask) < 0 && errno != EINTR)
			return trace_fail("poll", "trace_pipe", errno);
		if (ctl_stop)
			break;
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return trace_fail("reading", "trace_pipe", errno);
		}
		if (n == 0) {
			/* Not seen from trace_pipe; do not spin if it happens. */
			ppoll(NULL, 0, &ts, mask);
			continue;
		}
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = memchr(buf, '\n', have))) {
			struct ctl_trace_event ev;

			*nl = '\0';
			if (!ctl_trace_parse(buf, &ev)) {
				ctl_trace_print(stdout, &ev, o->json);
				if (fflush(stdout) || ferror(stdout))
					return CTL_EXIT_OK;	/* reader gone */
				if (o->count && ++seen >= o->count)
					return CTL_EXIT_OK;
			}
			have -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, have);
		}
		if (have == sizeof(buf) - 1)
			have = 0;	/* a line longer than the buffer: drop */
	}
	return CTL_EXIT_OK;
}

static int cmd_trace(const struct ctl_opts *o)
{
	char root[128] = "", path[256], prev[16] = "", on[16] = "", inst[128];
	int enabled_by_us = 0, tracing_by_us = 0, denied = 0, own = 0, fd, rc;
	int r;
	sigset_t mask;
	size_t i;

	for (i = 0; i < NR_TRACEFS; i++) {
		snprintf(path, sizeof(path), "%s/" EVENT_DIR "/enable",
			 ctl_tracefs[i]);
		if (!access(path, F_OK)) {
			snprintf(root, sizeof(root), "%s", ctl_tracefs[i]);
			break;
		}
		if (errno == EACCES)
			denied = 1;
	}
	if (!root[0]) {
		if (denied) {
			err_msg("tracefs: need root (%s)", strerror(EACCES));
			return CTL_EXIT_FAIL;
		}
		if (!ctl_module_loaded())
			return not_loaded();
		for (i = 0; i < NR_TRACEFS; i++) {
			snprintf(path, sizeof(path), "%s/trace_pipe",
				 ctl_tracefs[i]);
			if (!access(path, F_OK))
				break;
		}
		if (i == NR_TRACEFS)
			err_msg("tracefs is not mounted (neither /sys/kernel/tracing nor /sys/kernel/debug/tracing)");
		else
			err_msg("no trace event iopa/%s in %s (a module without trace events?)",
				CTL_TRACE_EVENT, ctl_tracefs[i]);
		return CTL_EXIT_FAIL;
	}

	catch_signals(&mask);
	/*
	 * A trace instance of our own (instances/iopactl-PID): its buffer,
	 * its event switch, its trace_pipe; the global buffer and whoever
	 * reads it are left alone.  Without instances (an old tracefs, or
	 * no right to make one), the global buffer as before.
	 */
	snprintf(inst, sizeof(inst), "%s/instances/iopactl-%d", root,
		 (int)getpid());
	if (!mkdir(inst, 0700)) {
		snprintf(root, sizeof(root), "%s", inst);
		own = 1;
	}
	snprintf(path, sizeof(path), "%s/" EVENT_DIR "/enable", root);
	r = ctl_read_file(path, prev, sizeof(prev));
	if (r) {
		if (own)
			rmdir(root);
		return trace_fail("reading", path, -r);
	}
	if (strcmp(prev, "1")) {
		r = write_file(path, "1");
		if (r) {
			if (own)
				rmdir(root);
			return trace_fail("enabling the event,", path, -r);
		}
		enabled_by_us = !own;
	}
	snprintf(path, sizeof(path), "%s/tracing_on", root);
	if (!ctl_read_file(path, on, sizeof(on)) && !strcmp(on, "0")) {
		if (!write_file(path, "1")) {
			tracing_by_us = 1;
			err_msg("note: tracing was off (%s is 0): on until iopactl exits",
				path);
		}
	}

	snprintf(path, sizeof(path), "%s/trace_pipe", root);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		rc = trace_fail("opening", path, errno);
	else
		rc = trace_loop(fd, o, &mask);
	if (fd >= 0)
		close(fd);

	if (tracing_by_us) {
		snprintf(path, sizeof(path), "%s/tracing_on", root);
		write_file(path, "0");
	}
	if (enabled_by_us) {
		snprintf(path, sizeof(path), "%s/" EVENT_DIR "/enable", root);
		r = write_file(path, "0");
		if (r) {
			err_msg("disabling %s: %s", path, strerror(-r));
			rc = CTL_EXIT_FAIL;
		}
	}
	/* Removing the instance disables its events and frees its buffer. */
	if (own && rmdir(root)) {
		err_msg("removing %s: %s", root, strerror(errno));
		rc = CTL_EXIT_FAIL;
	}
	return rc;
}

/* ---- main ------------------------------------------------------------------ */

int main(int argc, char **argv)
{
	struct ctl_opts o;
	char err[512];
	int rc;

	rc = ctl_parse_cmdline(argc, argv, &o, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "iopactl: %s\n", err);
		fprintf(stderr, "Try 'iopactl --help'.\n");
		ctl_opts_free(&o);
		return rc;
	}
	switch (o.cmd) {
	case CTL_CMD_HELP:
		fputs(ctl_usage_text, stdout);
		rc = fflush(stdout) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
		break;
	case CTL_CMD_VERSION:
		printf("iopactl %s (libiopa %d.%d, iopa ABI %d)\n",
		       IOPACTL_VERSION, LIBIOPA_VERSION_MAJOR,
		       LIBIOPA_VERSION_MINOR, IOPA_ABI_VERSION);
		rc = fflush(stdout) ? CTL_EXIT_FAIL : CTL_EXIT_OK;
		break;
	case CTL_CMD_STATUS:
		rc = cmd_status(&o);
		break;
	case CTL_CMD_SET:
		rc = cmd_set(&o);
		break;
	case CTL_CMD_GET:
		rc = cmd_get(&o);
		break;
	case CTL_CMD_WATCH:
		rc = cmd_watch(&o);
		break;
	case CTL_CMD_TRACE:
		rc = cmd_trace(&o);
		break;
	case CTL_CMD_METRICS:
		rc = cmd_metrics(&o);
		break;
	case CTL_CMD_SUB:
		rc = cmd_sub(&o.sub);
		break;
	default:
		fprintf(stderr, "iopactl: no command given\n");
		rc = CTL_EXIT_USAGE;
		break;
	}
	ctl_opts_free(&o);
	return rc;
}
