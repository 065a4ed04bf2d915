// SPDX-License-Identifier: GPL-2.0
/*
 * ctl-load: the workload and the cross-checks of guest-check.sh (runs in
 * the QEMU guest, where there is no python).
 *
 *   ctl-load check IOPACTL
 *	Renames itself to a command name full of JSON's special bytes,
 *	opens a context, creates a submitter pinned at 3 with policy iopa,
 *	bounds 2..7 and order cscan, a worker thread, runs 300 jobs on a
 *	temporary file and reaps them all.  Then, with the submitter still
 *	open and idle, it runs `IOPACTL status --json`, parses the output
 *	with json.c's strict parser and compares it with its own
 *	IOPA_IOC_GET_STATE / GET_STATS / GET_FEATURES answers and the sysfs
 *	files.  Prints "# " diagnostics and four lines
 *	    RESULT parse 0|1     the output is one valid JSON document,
 *	                         iopactl exited 0, scope "all"
 *	    RESULT found 0|1     our submitter is listed (by pid), comm
 *	                         escaped right, ctx_workers 1
 *	    RESULT numbers 0|1   its state and stats equal ours (with
 *	                         wait_us, svc_us, completions and
 *	                         noise_permille, or null without
 *	                         IOPA_FEAT_TIMES)
 *	    RESULT abi 0|1       abi and tunables equal GET_FEATURES, sysfs
 *	(0: pass).  Exit status 0 if all passed.
 *
 *   ctl-load times IOPACTL [POLICY]
 *	An adaptive submitter (limit 0) kept busy by 4 worker threads whose
 *	jobs each read 4 KiB and sleep 2 ms, 16 jobs outstanding.  Once a
 *	cycle has ended, `IOPACTL status --json` must list it with policy
 *	POLICY (default: what sysfs default_policy says), the policy its
 *	GET_STATE gives.  Then the submitter is switched to hillclimb
 *	(cycles of fixed length) and, two cycles later, `IOPACTL status
 *	--json` run between two GET_STATEs of the same cycle must show the
 *	GET_STATE's wait_us, svc_us, completions and noise_permille, with
 *	completions >= 1, svc_us >= 2000 (each job sleeps 2 ms between its
 *	fetch and its completion), wait_us >= 1 (12 jobs always wait) and
 *	noise_permille 1..1000.  Prints "# " diagnostics and
 *	    RESULT policy 0|1
 *	    RESULT times 0|1     (without IOPA_FEAT_TIMES: the keys null)
 *	Exit status 0 if both passed.
 *
 *   ctl-load run [--seconds S] [--workers N] [--policy iopa|hillclimb|bracket]
 *	An adaptive submitter kept busy by N worker threads (default 4)
 *	whose jobs each read 4 KiB and sleep 2 ms, for S seconds (default
 *	30) or until SIGTERM/SIGINT; the CPUs stay idle, so the controller
 *	has demand and no saturation and changes the limit.  Without
 *	--policy the submitter has the module's default_policy.  Prints a
 *	summary line ("# ...") at the end.
 *
 *   ctl-load asuser UID PROG [ARG...]
 *	Drops to user and group UID (no supplementary groups) and execs
 *	PROG: the guest has no /etc/passwd for su.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <libiopa.h>

#include "iopactl.h"

#define FILE_SIZE	65536
#define JOB_LEN		4096

static int wfd_check = -1;
static unsigned int job_sleep_us;
static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* A worker thread: read the range, maybe sleep, complete; forever. */
static void *worker(void *arg)
{
	int wfd = (int)(intptr_t)arg;
	struct iopa_work w;
	char buf[JOB_LEN];
	int r;

	r = iopa_fetch(wfd, &w, 0, 0);
	for (;;) {
		ssize_t n;

		if (r == -EINTR || r == -ETIMEDOUT) {
			r = iopa_fetch(wfd, &w, 0, 0);
			continue;
		}
		if (r < 0) {
			printf("# ctl-load: worker: %s\n", strerror(-r));
			fflush(stdout);
			return NULL;
		}
		n = pread(w.fd, buf, w.len < sizeof(buf) ? w.len : sizeof(buf),
			  (off_t)w.offset);
		if (job_sleep_us)
			usleep(job_sleep_us);
		close(w.fd);
		r = iopa_complete_and_fetch(wfd, w.job_id,
					    n < 0 ? -errno : (int)n, &w, 0, 0);
	}
}

/* Start a worker thread with its own worker fd, signals blocked. */
static int start_worker(int ctx)
{
	sigset_t all, old;
	pthread_t t;
	int wfd = iopa_worker_create(ctx, 0), r;

	if (wfd < 0) {
		printf("# ctl-load: IOPA_IOC_WORKER_CREATE: %s\n", strerror(-wfd));
		return wfd;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&t, NULL, worker, (void *)(intptr_t)wfd);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		printf("# ctl-load: pthread_create: %s\n", strerror(r));
		return -r;
	}
	pthread_detach(t);
	return wfd;
}

static int temp_file(void)
{
	const char *dir = getenv("TMPDIR");
	char path[256], buf[4096];
	int fd, i;

	snprintf(path, sizeof(path), "%s/ctl-load.XXXXXX", dir ? dir : "/tmp");
	fd = mkstemp(path);
	if (fd < 0) {
		printf("# ctl-load: mkstemp %s: %s\n", path, strerror(errno));
		return -1;
	}
	unlink(path);
	for (i = 0; i < (int)sizeof(buf); i++)
		buf[i] = (char)i;
	for (i = 0; i < FILE_SIZE / (int)sizeof(buf); i++)
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			printf("# ctl-load: write: %s\n", strerror(errno));
			close(fd);
			return -1;
		}
	return fd;
}

/* Submit @nr jobs on @fd; returns how many were accepted or -errno. */
static int submit_jobs(int sub, int fd, unsigned int nr, uint64_t first)
{
	struct iopa_job jobs[64];
	unsigned int i;

	if (nr > 64)
		nr = 64;
	memset(jobs, 0, sizeof(jobs));
	for (i = 0; i < nr; i++) {
		jobs[i].fd = fd;
		jobs[i].offset = ((first + i) * JOB_LEN) % FILE_SIZE;
		jobs[i].len = JOB_LEN;
		jobs[i].user_data = first + i;
	}
	return iopa_submit(sub, jobs, nr, 0);
}

/* ---- check --------------------------------------------------------------- */

/* Bytes of JSON's special cases: quote, backslash, controls, UTF-8, junk. */
static const char odd_comm[] = "c\"l\\o\n\t\xc3\xa9\xff";
/* What a JSON decoder must read back: the junk byte as U+FFFD. */
static const char odd_comm_decoded[] = "c\"l\\o\n\t\xc3\xa9\xef\xbf\xbd";

static int mismatches;

static void check_u64(const struct ctl_jv *obj, const char *where,
		      const char *key, uint64_t want)
{
	uint64_t got;

	if (ctl_json_u64(ctl_json_get(obj, key), &got)) {
		printf("# %s.%s: missing or not a number\n", where, key);
		mismatches++;
	} else if (got != want) {
		printf("# %s.%s: iopactl says %" PRIu64 ", the kernel told us %" PRIu64 "\n",
		       where, key, got, want);
		mismatches++;
	}
}

/* @s with control and non-ASCII bytes as '?', for a "# " line. */
static const char *printable(const char *s, size_t len, char *buf, size_t size)
{
	size_t i;

	for (i = 0; i < len && i + 1 < size; i++)
		buf[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	buf[i] = '\0';
	return buf;
}

static void check_jstr(const struct ctl_jv *v, const char *where,
		       const char *key, const char *want)
{
	char a[128], b[128];

	if (!v || v->type != CTL_J_STR) {
		printf("# %s.%s: missing or not a string\n", where, key);
		mismatches++;
	} else if (v->len != strlen(want) || memcmp(v->s, want, v->len)) {
		printf("# %s.%s: iopactl says \"%s\", expected \"%s\"\n",
		       where, key, printable(v->s, v->len, a, sizeof(a)),
		       printable(want, strlen(want), b, sizeof(b)));
		mismatches++;
	}
}

static void check_str(const struct ctl_jv *obj, const char *where,
		      const char *key, const char *want)
{
	check_jstr(ctl_json_get(obj, key), where, key, want);
}

/* The member @key of @obj is JSON null. */
static void check_null(const struct ctl_jv *obj, const char *where,
		       const char *key)
{
	const struct ctl_jv *v = ctl_json_get(obj, key);

	if (!v || v->type != CTL_J_NULL) {
		printf("# %s.%s: %s, expected null\n", where, key,
		       v ? "not null" : "missing");
		mismatches++;
	}
}

/* The times of struct iopa_state against @me's, or null without them. */
static void check_times(const struct ctl_jv *me, const struct iopa_state *st,
			int times)
{
	if (!times) {
		check_null(me, "sub", "wait_us");
		check_null(me, "sub", "svc_us");
		check_null(me, "sub", "completions");
		check_null(me, "sub", "noise_permille");
		return;
	}
	check_u64(me, "sub", "wait_us", st->wait_us);
	check_u64(me, "sub", "svc_us", st->svc_us);
	check_u64(me, "sub", "completions", st->completions);
	check_u64(me, "sub", "noise_permille", st->noise_permille);
}

static void print_state(const char *what, const struct iopa_state *st)
{
	printf("# %s: {\"limit\": %u, \"mode\": %u, \"policy\": %u, \"flags\": %u, \"min\": %u, \"max\": %u, \"inflight\": %u, \"pending\": %u, \"cycle_ms\": %u, \"r_permille\": %u, \"cycles\": %" PRIu64 ", \"changes\": %" PRIu64 ", \"bytes_per_s\": %" PRIu64 ", \"jobs_per_s\": %" PRIu64 ", \"nr_devs\": %u, \"order\": %u, \"wait_us\": %u, \"svc_us\": %u, \"completions\": %u, \"noise_permille\": %u}\n",
	       what, st->limit, st->mode, st->policy, st->flags, st->min,
	       st->max, st->inflight, st->pending, st->cycle_ms,
	       st->r_permille, (uint64_t)st->cycles, (uint64_t)st->changes,
	       (uint64_t)st->bytes_per_s, (uint64_t)st->jobs_per_s,
	       st->nr_devs, st->order, st->wait_us, st->svc_us,
	       st->completions, st->noise_permille);
}

static void print_stats(const char *what, const struct iopa_stats *ss)
{
	printf("# %s: {\"submitted\": %" PRIu64 ", \"dispatched\": %" PRIu64 ", \"completed\": %" PRIu64 ", \"cancelled\": %" PRIu64 ", \"requeued\": %" PRIu64 ", \"pending\": %" PRIu64 ", \"inflight\": %" PRIu64 ", \"unreaped\": %" PRIu64 "}\n",
	       what, (uint64_t)ss->submitted, (uint64_t)ss->dispatched,
	       (uint64_t)ss->completed, (uint64_t)ss->cancelled,
	       (uint64_t)ss->requeued, (uint64_t)ss->pending,
	       (uint64_t)ss->inflight, (uint64_t)ss->unreaped);
}

/* Run @cmd, its stdout into a NUL-terminated buffer; its exit status. */
static char *run_capture(const char *cmd, size_t *len, int *status)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	FILE *p = popen(cmd, "r");

	*status = -1;
	if (!buf || !p) {
		free(buf);
		if (p)
			pclose(p);
		return NULL;
	}
	for (;;) {
		size_t r;

		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap * 2);

			if (!nb)
				break;
			buf = nb;
			cap *= 2;
		}
		r = fread(buf + n, 1, cap - 1 - n, p);
		if (!r)
			break;
		n += r;
	}
	buf[n] = '\0';
	*len = n;
	*status = pclose(p);
	return buf;
}

static void dump(const char *text, size_t max)
{
	size_t i;

	fputs("# | ", stdout);
	for (i = 0; text[i] && i < max; i++) {
		putchar(text[i]);
		if (text[i] == '\n')
			fputs("# | ", stdout);
	}
	putchar('\n');
}

/* A sysfs file of the module: its text, and as a number if @v. */
static int sysfs_u64(const char *name, uint64_t *v, char *s, size_t len)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", CTL_SYSFS_DIR, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, s, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	s[n] = '\0';
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	return v ? ctl_parse_u64(s, v) : 0;
}

static int cmd_check(const char *iopactl)
{
	struct iopa_state st0, st1;
	struct iopa_stats ss0, ss1;
	struct iopa_features feat;
	struct iopa_cqe cqes[64];
	const struct ctl_jv *subs, *me = NULL, *v;
	struct ctl_jv *doc;
	char cmd[1024], err[256], comm[17] = "", hex[40];
	int ctx, sub, fd, r, status, res_parse = 1, res_found = 1;
	int res_numbers = 1, res_abi = 1, adaptive, order, times;
	unsigned int done = 0, sent = 0, i;
	size_t len;
	char *out;

	prctl(PR_SET_NAME, odd_comm, 0, 0, 0);
	prctl(PR_GET_NAME, comm, 0, 0, 0);
	for (i = 0; comm[i]; i++)
		snprintf(hex + 2 * i, 3, "%02x", (unsigned char)comm[i]);
	hex[2 * i] = '\0';

	ctx = iopa_open();
	if (ctx < 0) {
		printf("# ctl-load: open /dev/iopa: %s\n", strerror(-ctx));
		goto results;
	}
	r = iopa_get_features(ctx, &feat);
	if (r < 0) {
		printf("# ctl-load: IOPA_IOC_GET_FEATURES: %s\n", strerror(-r));
		goto results;
	}
	adaptive = !!(feat.features & IOPA_FEAT_ADAPTIVE);
	order = !!(feat.features & IOPA_FEAT_ORDER);
	times = !!(feat.features & IOPA_FEAT_TIMES);
	sub = iopa_submitter_create(ctx, 3, 0);
	if (sub < 0) {
		printf("# ctl-load: IOPA_IOC_SUBMITTER_CREATE: %s\n", strerror(-sub));
		goto results;
	}
	/* Pinned: the bounds and policy are stored, the limit stays 3. */
	if (adaptive && (r = iopa_set_adapt(sub, IOPA_POLICY_IOPA, 2, 7)) < 0)
		printf("# ctl-load: IOPA_IOC_SET_ADAPT: %s\n", strerror(-r));
	if (order && (r = iopa_set_order(sub, IOPA_ORDER_CSCAN)) < 0)
		printf("# ctl-load: IOPA_IOC_SET_ORDER: %s\n", strerror(-r));
	wfd_check = start_worker(ctx);
	fd = temp_file();
	if (wfd_check < 0 || fd < 0)
		goto results;

	while (done < 300) {
		if (sent < 300) {
			r = submit_jobs(sub, fd, 300 - sent, sent);
			if (r > 0)
				sent += (unsigned int)r;
			else if (r != -EAGAIN)
				printf("# ctl-load: IOPA_IOC_SUBMIT: %s\n", strerror(-r));
		}
		r = iopa_reap(sub, cqes, 64, IOPA_REAP_F_WAIT, 10ULL * 1000000000);
		if (r < 0) {
			printf("# ctl-load: IOPA_IOC_REAP: %s (%u of 300 reaped)\n",
			       strerror(-r), done);
			goto results;
		}
		for (i = 0; i < (unsigned int)r; i++)
			if (cqes[i].res != JOB_LEN)
				printf("# ctl-load: job %" PRIu64 ": res %d\n",
				       (uint64_t)cqes[i].user_data, cqes[i].res);
		done += (unsigned int)r;
	}
	printf("# ctl-load: 300 jobs done, comm %s (hex), pid %d\n", hex,
	       (int)getpid());

	iopa_get_state(sub, &st0);
	iopa_get_stats(sub, &ss0);
	snprintf(cmd, sizeof(cmd), "%s status --json", iopactl);
	out = run_capture(cmd, &len, &status);
	iopa_get_state(sub, &st1);
	iopa_get_stats(sub, &ss1);
	print_state("own state", &st0);
	print_stats("own stats", &ss0);
	if (!out) {
		printf("# ctl-load: could not run %s\n", cmd);
		goto results;
	}
	printf("# %s: exit status %d, %zu bytes\n", cmd,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1, len);

	/* parse */
	doc = ctl_json_parse(out, len, err, sizeof(err));
	if (!doc) {
		printf("# not valid JSON: %s\n", err);
		dump(out, 3000);
		free(out);
		goto results;
	}
	v = ctl_json_get(doc, "submitters_scope");
	subs = ctl_json_get(doc, "submitters");
	res_parse = !(WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
		      doc->type == CTL_J_OBJ && subs && subs->type == CTL_J_ARR &&
		      v && v->type == CTL_J_STR && !strcmp(v->s, "all"));
	if (res_parse) {
		printf("# parsed, but: exit status, \"submitters\" or scope \"all\" wrong\n");
		dump(out, 3000);
	}

	/* found */
	for (i = 0; subs && subs->type == CTL_J_ARR && i < subs->n; i++) {
		uint64_t pid;

		if (!ctl_json_u64(ctl_json_get(&subs->kids[i], "pid"), &pid) &&
		    pid == (uint64_t)getpid())
			me = &subs->kids[i];
	}
	if (me) {
		mismatches = 0;
		check_str(me, "sub", "comm_hex", hex);
		check_str(me, "sub", "comm", odd_comm_decoded);
		check_u64(me, "sub", "ctx_workers", 1);
		res_found = mismatches != 0;
	} else {
		printf("# no submitter with pid %d in the listing\n", (int)getpid());
	}

	/* numbers */
	if (me) {
		const struct ctl_jv *stats = ctl_json_get(me, "stats");
		const struct ctl_jv *devs = ctl_json_get(me, "devs");
		uint64_t cycles;

		mismatches = 0;
		if (memcmp(&ss0, &ss1, sizeof(ss0)))
			printf("# note: our stats moved while iopactl ran\n");
		check_u64(me, "sub", "limit", st0.limit);
		check_u64(me, "sub", "min", st0.min);
		check_u64(me, "sub", "max", st0.max);
		check_u64(me, "sub", "inflight", st0.inflight);
		check_u64(me, "sub", "pending", st0.pending);
		check_u64(me, "sub", "changes", st0.changes);
		check_u64(me, "sub", "cycle_ms", st0.cycle_ms);
		if (st0.cycles == st1.cycles) {
			check_u64(me, "sub", "cycles", st0.cycles);
			check_u64(me, "sub", "bytes_per_s", st0.bytes_per_s);
			check_u64(me, "sub", "jobs_per_s", st0.jobs_per_s);
			check_u64(me, "sub", "r_permille", st0.r_permille);
			check_times(me, &st0, times);
		} else if (ctl_json_u64(ctl_json_get(me, "cycles"), &cycles) ||
			   cycles < st0.cycles || cycles > st1.cycles) {
			printf("# sub.cycles: not within %" PRIu64 "..%" PRIu64 "\n",
			       (uint64_t)st0.cycles, (uint64_t)st1.cycles);
			mismatches++;
		} else if (!times) {
			check_times(me, &st0, 0);
		}
		/* Names, against what we asked for, not iopactl's tables. */
		if (st0.limit != 3 || st0.mode != IOPA_MODE_FIXED ||
		    !(st0.flags & IOPA_LIMIT_F_FIXED)) {
			printf("# our own state is not pinned at 3?\n");
			mismatches++;
		}
		check_str(me, "sub", "mode", "fixed");
		v = ctl_json_get(me, "fixed");
		if (!v || v->type != CTL_J_BOOL || !v->b) {
			printf("# sub.fixed: not true\n");
			mismatches++;
		}
		if (adaptive) {
			check_str(me, "sub", "policy", "iopa");
			if (st0.min != 2 || st0.max != 7 ||
			    st0.policy != IOPA_POLICY_IOPA) {
				printf("# our own bounds/policy are not 2..7/iopa?\n");
				mismatches++;
			}
		}
		if (order)
			check_str(me, "sub", "order", "cscan");
		if (!devs || devs->type != CTL_J_ARR || devs->n != st0.nr_devs) {
			printf("# sub.devs: not an array of %u\n", st0.nr_devs);
			mismatches++;
		} else {
			for (i = 0; i < devs->n; i++) {
				char d[32];

				snprintf(d, sizeof(d), "%u:%u",
					 st0.devs[i] >> 20, st0.devs[i] & 0xfffff);
				check_jstr(&devs->kids[i], "sub", "devs[]", d);
			}
		}
		if (!stats) {
			printf("# sub.stats: missing\n");
			mismatches++;
		} else {
			check_u64(stats, "stats", "submitted", ss0.submitted);
			check_u64(stats, "stats", "dispatched", ss0.dispatched);
			check_u64(stats, "stats", "completed", ss0.completed);
			check_u64(stats, "stats", "cancelled", ss0.cancelled);
			check_u64(stats, "stats", "requeued", ss0.requeued);
			check_u64(stats, "stats", "pending", ss0.pending);
			check_u64(stats, "stats", "inflight", ss0.inflight);
			check_u64(stats, "stats", "unreaped", ss0.unreaped);
			if (ss0.submitted != 300 || ss0.completed != 300) {
				printf("# our own stats do not say 300 jobs?\n");
				mismatches++;
			}
		}
		res_numbers = mismatches != 0;
	}

	/* abi, tunables */
	{
		const struct ctl_jv *abi = ctl_json_get(doc, "abi");
		const struct ctl_jv *tun = ctl_json_get(doc, "tunables");
		char s[64];
		uint64_t u;

		mismatches = 0;
		if (!abi || !tun) {
			printf("# \"abi\" or \"tunables\" missing\n");
			mismatches++;
		} else {
			check_u64(abi, "abi", "version", feat.abi_version);
			check_u64(abi, "abi", "features_mask", feat.features);
			check_u64(abi, "abi", "batch_max", feat.batch_max);
			check_u64(abi, "abi", "limit_max", feat.limit_max);
			check_u64(abi, "abi", "worker_max_jobs",
				  feat.worker_max_jobs);
			for (i = 0; i < CTL_NR_TUNABLES; i++) {
				const char *name = ctl_tunables[i].name;

				if (ctl_tunables[i].kind == CTL_TUN_POLICY) {
					if (sysfs_u64(name, NULL, s, sizeof(s)))
						continue;
					check_str(tun, "tunables", name, s);
				} else if (!sysfs_u64(name, &u, s, sizeof(s))) {
					check_u64(tun, "tunables", name, u);
				}
			}
		}
		res_abi = mismatches != 0;
	}
	ctl_json_free(doc);
	free(out);

results:
	printf("RESULT parse %d\nRESULT found %d\nRESULT numbers %d\nRESULT abi %d\n",
	       res_parse, res_found, res_numbers, res_abi);
	fflush(stdout);
	/* The worker thread waits in FETCH: exit ends it. */
	return res_parse || res_found || res_numbers || res_abi;
}

/* ---- times ----------------------------------------------------------------- */

/* The submitter of `iopactl status --json` @doc with our pid, or NULL. */
static const struct ctl_jv *json_find_me(const struct ctl_jv *doc)
{
	const struct ctl_jv *subs = ctl_json_get(doc, "submitters");
	size_t i;

	for (i = 0; subs && subs->type == CTL_J_ARR && i < subs->n; i++) {
		uint64_t pid;

		if (!ctl_json_u64(ctl_json_get(&subs->kids[i], "pid"), &pid) &&
		    pid == (uint64_t)getpid())
			return &subs->kids[i];
	}
	return NULL;
}

/* Keeps @outstanding jobs submitted on @sub and reaps them, until @stop. */
struct feeder {
	int			sub;
	int			fd;
	unsigned int		outstanding;
	volatile int		stop;
	uint64_t		reaped;
	int			err;
};

static void *feeder_fn(void *arg)
{
	struct feeder *fe = arg;
	struct iopa_cqe cqes[64];
	unsigned int out = 0;
	uint64_t next = 0;
	int r;

	while (!fe->stop) {
		while (out < fe->outstanding) {
			r = submit_jobs(fe->sub, fe->fd, fe->outstanding - out,
					next);
			if (r <= 0)
				break;
			out += (unsigned int)r;
			next += (uint64_t)r;
		}
		r = iopa_reap(fe->sub, cqes, 64, IOPA_REAP_F_WAIT, 100000000);
		if (r > 0) {
			out -= (unsigned int)r;
			fe->reaped += (uint64_t)r;
		} else if (r != -ETIMEDOUT && r != -EINTR && r != -EAGAIN) {
			fe->err = -r;
			break;
		}
	}
	return NULL;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Run `@iopactl status --json`; the parsed document, or NULL. */
static struct ctl_jv *status_json(const char *iopactl)
{
	char cmd[1024], err[256];
	struct ctl_jv *doc;
	size_t len;
	int status;
	char *out;

	snprintf(cmd, sizeof(cmd), "%s status --json", iopactl);
	out = run_capture(cmd, &len, &status);
	if (!out) {
		printf("# could not run %s\n", cmd);
		return NULL;
	}
	doc = ctl_json_parse(out, len, err, sizeof(err));
	if (!doc || !WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("# %s: exit status %d, %s\n", cmd,
		       WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		       doc ? "valid JSON" : err);
		dump(out, 2000);
		ctl_json_free(doc);
		doc = NULL;
	}
	free(out);
	return doc;
}

/* GET_STATE until its cycles reach @cycles, at most @ms; 0 if they did. */
static int wait_cycles(int sub, uint64_t cycles, unsigned int ms,
		       struct iopa_state *st)
{
	unsigned int waited = 0;

	for (;;) {
		if (iopa_get_state(sub, st) == 0 && st->cycles >= cycles)
			return 0;
		if (waited >= ms)
			return -1;
		sleep_ms(50);
		waited += 50;
	}
}

static int cmd_times(const char *iopactl, const char *want_arg)
{
	int ctx, sub, fd, r, i, res_policy = 1, res_times = 1, times;
	struct feeder fe = { .sub = -1, .fd = -1, .outstanding = 16 };
	const struct ctl_jv *me;
	struct iopa_features feat = { 0 };
	struct iopa_state st0, st1;
	char want[32] = "";
	struct ctl_jv *doc;
	sigset_t all, old;
	pthread_t feeder_thread;
	int feeding = 0;

	if (want_arg)
		snprintf(want, sizeof(want), "%s", want_arg);
	else if (sysfs_u64("default_policy", NULL, want, sizeof(want)))
		printf("# ctl-load times: cannot read %s/default_policy\n",
		       CTL_SYSFS_DIR);
	prctl(PR_SET_NAME, "ctl-load", 0, 0, 0);
	ctx = iopa_open();
	if (ctx < 0) {
		printf("# ctl-load: open /dev/iopa: %s\n", strerror(-ctx));
		goto results;
	}
	r = iopa_get_features(ctx, &feat);
	if (r < 0 || !(feat.features & IOPA_FEAT_ADAPTIVE)) {
		printf("# ctl-load: GET_FEATURES: %s, features %#llx: no adaptive limits\n",
		       strerror(r < 0 ? -r : 0),
		       (unsigned long long)feat.features);
		goto results;
	}
	times = !!(feat.features & IOPA_FEAT_TIMES);
	sub = iopa_submitter_create(ctx, 0, 0);
	if (sub < 0) {
		printf("# ctl-load: IOPA_IOC_SUBMITTER_CREATE: %s\n", strerror(-sub));
		goto results;
	}
	job_sleep_us = 2000;
	fd = temp_file();
	if (fd < 0)
		goto results;
	for (i = 0; i < 4; i++)
		if (start_worker(ctx) < 0)
			goto results;
	fe.sub = sub;
	fe.fd = fd;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&feeder_thread, NULL, feeder_fn, &fe);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		printf("# ctl-load: pthread_create: %s\n", strerror(r));
		goto results;
	}
	feeding = 1;

	/* policy: the submitter has the default policy, by name. */
	if (wait_cycles(sub, 1, 20000, &st0)) {
		printf("# no cycle ended within 20 s\n");
		print_state("own state", &st0);
		goto results;
	}
	print_state("own state, default policy", &st0);
	doc = status_json(iopactl);
	me = doc ? json_find_me(doc) : NULL;
	if (doc && !me)
		printf("# no submitter with pid %d in the listing\n", (int)getpid());
	if (me) {
		mismatches = 0;
		check_str(me, "sub", "policy", want);
		if (ctl_policy_index(want) < 0 ||
		    st0.policy != (uint32_t)ctl_policy_index(want)) {
			printf("# GET_STATE policy %u, expected %s\n",
			       st0.policy, want);
			mismatches++;
		}
		res_policy = mismatches != 0;
	}
	ctl_json_free(doc);

	/*
	 * times: hillclimb's cycles have a fixed length (the bracket policy
	 * may end one after a few tens of ms), so that iopactl can run
	 * within one; the first of them may be a shorter rest.
	 */
	r = iopa_set_adapt(sub, IOPA_POLICY_HILLCLIMB, 0, 0);
	if (r < 0) {
		printf("# ctl-load: IOPA_IOC_SET_ADAPT: %s\n", strerror(-r));
		goto results;
	}
	iopa_get_state(sub, &st0);
	if (wait_cycles(sub, st0.cycles + 2, 20000, &st1)) {
		printf("# two cycles did not end within 20 s\n");
		goto results;
	}
	for (i = 0; i < 20; i++) {
		iopa_get_state(sub, &st0);
		doc = status_json(iopactl);
		iopa_get_state(sub, &st1);
		if (!doc)
			goto results;
		if (st0.cycles != st1.cycles) {
			ctl_json_free(doc);
			sleep_ms(100);
			continue;
		}
		print_state("own state, hillclimb", &st0);
		me = json_find_me(doc);
		mismatches = 0;
		if (!me) {
			printf("# no submitter with pid %d in the listing\n",
			       (int)getpid());
			mismatches++;
		} else {
			check_times(me, &st0, times);
		}
		if (times && (!st0.completions || st0.svc_us < 2000 ||
			      !st0.wait_us || !st0.noise_permille ||
			      st0.noise_permille > 1000)) {
			printf("# GET_STATE: completions %u (>= 1), svc_us %u (>= 2000), wait_us %u (>= 1), noise_permille %u (1..1000)?\n",
			       st0.completions, st0.svc_us, st0.wait_us,
			       st0.noise_permille);
			mismatches++;
		}
		if (!times)
			printf("# no IOPA_FEAT_TIMES: the times must be null\n");
		res_times = mismatches != 0;
		ctl_json_free(doc);
		break;
	}
	if (i == 20)
		printf("# a cycle ended during each of 20 runs of iopactl\n");

results:
	if (feeding) {
		fe.stop = 1;
		pthread_join(feeder_thread, NULL);
		printf("# ctl-load times: %" PRIu64 " jobs reaped%s%s\n",
		       fe.reaped, fe.err ? ", IOPA_IOC_REAP: " : "",
		       fe.err ? strerror(fe.err) : "");
	}
	printf("RESULT policy %d\nRESULT times %d\n", res_policy, res_times);
	fflush(stdout);
	/* The worker threads wait in FETCH: exit ends them. */
	return res_policy || res_times;
}

/* ---- run ------------------------------------------------------------------- */

static int cmd_run(int argc, char **argv)
{
	unsigned int seconds = 30, workers = 4, i, outstanding = 0;
	int policy = -1, ctx, sub, fd, r;
	uint64_t next = 0, reaped = 0;
	struct iopa_cqe cqes[64];
	struct iopa_state st;
	struct sigaction sa;
	time_t end;

	for (i = 2; i < (unsigned int)argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < (unsigned int)argc)
			seconds = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--workers") && i + 1 < (unsigned int)argc)
			workers = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--policy") && i + 1 < (unsigned int)argc) {
			policy = ctl_policy_index(argv[++i]);
			if (policy < 0) {
				fprintf(stderr, "ctl-load run: --policy %s: not %s\n",
					argv[i], CTL_POLICY_NAMES);
				return 2;
			}
		} else {
			fprintf(stderr, "ctl-load run: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	prctl(PR_SET_NAME, "ctl-load", 0, 0, 0);
	ctx = iopa_open();
	if (ctx < 0) {
		printf("# ctl-load: open /dev/iopa: %s\n", strerror(-ctx));
		return 1;
	}
	sub = iopa_submitter_create(ctx, 0, 0);
	if (sub < 0) {
		printf("# ctl-load: IOPA_IOC_SUBMITTER_CREATE: %s\n", strerror(-sub));
		return 1;
	}
	if (policy >= 0 && (r = iopa_set_adapt(sub, (unsigned int)policy, 0, 0)) < 0)
		printf("# ctl-load: IOPA_IOC_SET_ADAPT: %s\n", strerror(-r));
	job_sleep_us = 2000;
	fd = temp_file();
	if (fd < 0)
		return 1;
	for (i = 0; i < workers; i++)
		if (start_worker(ctx) < 0)
			return 1;
	printf("# ctl-load run: pid %d, %u workers, %u s\n", (int)getpid(),
	       workers, seconds);
	fflush(stdout);

	end = time(NULL) + seconds;
	while (!stop && time(NULL) < end) {
		/* Keep 4 jobs per worker outstanding: always some pending. */
		while (outstanding < 4 * workers) {
			r = submit_jobs(sub, fd, 4 * workers - outstanding, next);
			if (r <= 0)
				break;
			outstanding += (unsigned int)r;
			next += (uint64_t)r;
		}
		r = iopa_reap(sub, cqes, 64, IOPA_REAP_F_WAIT, 100000000);
		if (r > 0) {
			outstanding -= (unsigned int)r;
			reaped += (uint64_t)r;
		} else if (r != -ETIMEDOUT && r != -EINTR && r != -EAGAIN) {
			printf("# ctl-load: IOPA_IOC_REAP: %s\n", strerror(-r));
			return 1;
		}
	}
	iopa_get_state(sub, &st);
	printf("# ctl-load run: %" PRIu64 " jobs reaped; limit %u, mode %u, policy %u, cycles %" PRIu64 ", changes %" PRIu64 ", jobs/s %" PRIu64 ", last cycle: wait_us %u, svc_us %u, completions %u, noise_permille %u\n",
	       reaped, st.limit, st.mode, st.policy, (uint64_t)st.cycles,
	       (uint64_t)st.changes, (uint64_t)st.jobs_per_s, st.wait_us,
	       st.svc_us, st.completions, st.noise_permille);
	fflush(stdout);
	return 0;
}

/* ---- asuser ---------------------------------------------------------------- */

static int cmd_asuser(int argc, char **argv)
{
	uint64_t id;

	if (argc < 4 || ctl_parse_u64(argv[2], &id) || id > 65535) {
		fprintf(stderr, "usage: ctl-load asuser UID PROG [ARG...]\n");
		return 2;
	}
	if (setgroups(0, NULL) || setgid((gid_t)id) || setuid((uid_t)id)) {
		fprintf(stderr, "ctl-load asuser: %s\n", strerror(errno));
		return 126;
	}
	execvp(argv[3], argv + 3);
	fprintf(stderr, "ctl-load asuser: %s: %s\n", argv[3], strerror(errno));
	return 127;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc >= 3 && !strcmp(argv[1], "check"))
		return cmd_check(argv[2]);
	if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "times"))
		return cmd_times(argv[2], argc == 4 ? argv[3] : NULL);
	if (argc >= 2 && !strcmp(argv[1], "run"))
		return cmd_run(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "asuser"))
		return cmd_asuser(argc, argv);
	fprintf(stderr,
		"usage: ctl-load check IOPACTL\n"
		"       ctl-load times IOPACTL [POLICY]\n"
		"       ctl-load run [--seconds S] [--workers N] [--policy iopa|hillclimb|bracket]\n"
		"       ctl-load asuser UID PROG [ARG...]\n");
	return 2;
}
