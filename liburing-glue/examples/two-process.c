// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * two-process: a submitter process and a worker process that share an
 * iopa context.  The submitter opens /dev/iopa, creates its submitter,
 * and passes the context fd to a worker process it starts (over a unix
 * socket, SCM_RIGHTS: any process given the fd may serve the context).
 * The worker creates its worker fd from it and serves jobs with
 * iopa_work_batch(): each job's file arrives as a new fd in the worker
 * process, which sums the byte range and closes the fd.  The submitter
 * reaps the results and prints them in the order of the command line.
 *
 *   two-process FILE...
 *
 * Only the context fd crosses the socket; access to the jobs' files comes
 * with the jobs.  The worker stops when the submitter closes its end of
 * the socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libiopa.h>

/* Bytes of the job's range, summed (a stand-in for real work). */
static int32_t work_on(const struct iopa_work *w)
{
	unsigned char buf[65536];
	uint64_t off = w->offset, end = w->offset + w->len, sum = 0;
	ssize_t n, i;

	while (off < end) {
		size_t want = end - off < sizeof(buf) ? end - off : sizeof(buf);

		n = pread(w->fd, buf, want, (off_t)off);
		if (n < 0)
			return -errno;
		if (!n)
			break;
		for (i = 0; i < n; i++)
			sum += buf[i];
		off += n;
	}
	return (int32_t)(sum & 0x7fffffff);
}

static int send_fd(int sock, int fd)
{
	char c = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);

	memset(cbuf, 0, sizeof(cbuf));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char c, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr m = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	int fd;

	if (recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -EPROTO;
	cm = CMSG_FIRSTHDR(&m);
	if (!cm || cm->cmsg_type != SCM_RIGHTS)
		return -EPROTO;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/* The worker process: serve the context until the socket closes. */
static int worker_main(int sock)
{
	struct iopa_work work[16];
	struct iopa_done done[16];
	unsigned int held = 0, completed, i;
	int ctx = recv_fd(sock), wfd, n;

	if (ctx < 0)
		return 1;
	wfd = iopa_worker_create(ctx, 0);
	close(ctx);	/* the worker fd keeps the context */
	if (wfd < 0)
		return 1;
	for (;;) {
		struct pollfd p = { .fd = sock, .events = POLLIN };

		/* Complete what is held, take up to 16 more; wait 100 ms. */
		n = iopa_work_batch(wfd, done, held, work, 16, 0, 100000000ULL,
				    &completed);
		held = 0;
		if (n < 0 && n != -ETIMEDOUT && n != -EINTR) {
			fprintf(stderr, "worker: %s\n", strerror(-n));
			return 1;
		}
		for (i = 0; n > 0 && i < (unsigned int)n; i++) {
			memset(&done[i], 0, sizeof(done[i]));
			done[i].job_id = work[i].job_id;
			done[i].res = work_on(&work[i]);
			close(work[i].fd);
		}
		held = n > 0 ? (unsigned int)n : 0;
		/* The submitter gone (EOF on the socket): finish and leave. */
		if (!held && poll(&p, 1, 0) == 1)
			break;
	}
	close(wfd);
	return 0;
}

int main(int argc, char **argv)
{
	int sv[2], ctx, sub, i, n = 0, got = 0, st, bad = 0;
	struct iopa_job *jobs;
	struct iopa_cqe cqe;
	int32_t *res;
	pid_t pid;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE...\n", argv[0]);
		return 2;
	}
	jobs = calloc(argc, sizeof(*jobs));
	res = calloc(argc, sizeof(*res));
	if (!jobs || !res ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		close(sv[0]);
		_exit(worker_main(sv[1]));
	}
	close(sv[1]);

	/*
	 * The module or nothing: the worker is another process, which only
	 * the module's context fd, passed over the socket, can serve (no
	 * in-process pool here).
	 */
	ctx = iopa_open();
	if (ctx < 0) {
		fprintf(stderr, "%s: %s (this example needs the iopa module)\n",
			LIBIOPA_DEV_PATH, strerror(-ctx));
		return 1;
	}
	sub = iopa_submitter_create(ctx, 0, 0);
	if (sub < 0 || send_fd(sv[0], ctx)) {
		fprintf(stderr, "iopa: %s\n", strerror(-(sub < 0 ? sub : EPROTO)));
		return 1;
	}
	close(ctx);	/* the submitter fd keeps the context */
	for (i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			res[i] = -errno;
			continue;
		}
		jobs[n].fd = fd;
		jobs[n].len = 1ULL << 40;	/* to the end of the file */
		jobs[n].user_data = i;
		n++;
	}
	/* The kernel holds its own reference on each file from here. */
	if (n && iopa_submit(sub, jobs, n, IOPA_SUBMIT_F_WAIT) != n) {
		fprintf(stderr, "iopa_submit: not all accepted\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		close(jobs[i].fd);
	while (got < n) {
		int r = iopa_reap(sub, &cqe, 1, IOPA_REAP_F_WAIT, 0);

		if (r < 0) {
			fprintf(stderr, "iopa_reap: %s\n", strerror(-r));
			return 1;
		}
		res[cqe.user_data] = cqe.res;
		got += r;
	}
	close(sv[0]);	/* the worker's cue to leave */
	waitpid(pid, &st, 0);
	close(sub);
	for (i = 1; i < argc; i++) {
		if (res[i] < 0) {
			fprintf(stderr, "%s: %s\n", argv[i], strerror(-res[i]));
			bad = 1;
		} else {
			printf("%08" PRIx32 "  %s\n", (uint32_t)res[i], argv[i]);
		}
	}
	return bad || !WIFEXITED(st) || WEXITSTATUS(st) ? 1 : 0;
}
