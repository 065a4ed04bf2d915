// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Host test of the io_uring SQE helpers of <libiopa.h>: no kernel, no
 * ring.  Each helper is run on an SQE128-sized buffer filled with 0xa5
 * and must leave exactly the bytes the kernel reads: opcode
 * IORING_OP_URING_CMD, fd, cmd_op, the command payload at byte 48, every
 * other byte of the SQE zero (user_data too), and nothing written past
 * the SQE (64 bytes) or, for IOPA_URING_CMD_SUBMIT, past the 128-byte
 * SQE128 slot.
 *
 * Exit status: 0 pass, 1 fail (liburing's convention).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libiopa.h>

/* Layout facts the helpers rely on, as liburing 2.3 and the uapi say. */
_Static_assert(offsetof(struct io_uring_sqe, cmd) == LIBIOPA_SQE_CMD_OFFSET,
	       "sqe->cmd is at byte 48");
_Static_assert(offsetof(struct io_uring_sqe, cmd_op) == 8, "cmd_op at 8");
_Static_assert(sizeof(struct io_uring_sqe) == 64, "64-byte SQE");
_Static_assert(sizeof(struct iopa_uring_fetch) == LIBIOPA_SQE_CMD_LEN,
	       "fetch payload fits a 64-byte SQE");
_Static_assert(sizeof(struct iopa_job) <= LIBIOPA_SQE128_CMD_LEN,
	       "a job fits the SQE128 command area");
_Static_assert(sizeof(struct iopa_uring_batch) == LIBIOPA_SQE_CMD_LEN &&
	       sizeof(struct iopa_uring_submit) == LIBIOPA_SQE_CMD_LEN &&
	       sizeof(struct iopa_uring_reap) == LIBIOPA_SQE_CMD_LEN,
	       "batched payloads fit a 64-byte SQE");

#define SLOT	128		/* one SQE128 slot */
#define GUARD	64		/* and what follows it */
#define FILL	0xa5

static int failures, checks;

#define CHECK(cond, ...) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		printf("not ok: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		printf(__VA_ARGS__);					\
		printf("\n");						\
	}								\
} while (0)

static union {
	struct io_uring_sqe sqe;
	unsigned char raw[SLOT + GUARD];
} buf;

static void fill(void)
{
	memset(buf.raw, FILL, sizeof(buf.raw));
}

/* Bytes [from, to) of the buffer all equal @val. */
static int all(size_t from, size_t to, unsigned char val)
{
	size_t i;

	for (i = from; i < to; i++)
		if (buf.raw[i] != val)
			return 0;
	return 1;
}

/* The fields every helper sets, named, then "everything else zero". */
static void check_common(const char *what, int fd, unsigned int cmd_op)
{
	struct io_uring_sqe *sqe = &buf.sqe;

	CHECK(sqe->opcode == IORING_OP_URING_CMD, "%s: opcode %u", what,
	      sqe->opcode);
	CHECK(sqe->flags == 0, "%s: flags %#x", what, sqe->flags);
	CHECK(sqe->ioprio == 0, "%s: ioprio", what);
	CHECK(sqe->fd == fd, "%s: fd %d, want %d", what, sqe->fd, fd);
	CHECK(sqe->cmd_op == cmd_op, "%s: cmd_op %#x, want %#x", what,
	      sqe->cmd_op, cmd_op);
	CHECK(sqe->__pad1 == 0, "%s: __pad1", what);
	CHECK(sqe->addr == 0, "%s: addr", what);
	CHECK(sqe->len == 0, "%s: len", what);
	CHECK(sqe->uring_cmd_flags == 0, "%s: uring_cmd_flags", what);
	CHECK(sqe->user_data == 0, "%s: user_data", what);
	CHECK(sqe->buf_index == 0, "%s: buf_index", what);
	CHECK(sqe->personality == 0, "%s: personality", what);
	CHECK(sqe->file_index == 0, "%s: file_index", what);
	/* Byte 1 (flags) to 47, less the named non-zero fields: all zero. */
	CHECK(all(1, 4, 0), "%s: bytes 1..3", what);
	CHECK(all(12, LIBIOPA_SQE_CMD_OFFSET, 0), "%s: bytes 12..47", what);
}

static void test_submit(void)
{
	struct iopa_job job = {
		.fd = 7,
		.flags = IOPA_JOB_F_NO_REQUEUE,
		.offset = 0x0102030405060708ULL,
		.len = 0x1112131415161718ULL,
		.user_data = 0xdeadbeefcafef00dULL,
		.reserved = 0,
	};
	struct iopa_job copy;

	fill();
	iopa_prep_submit(&buf.sqe, 42, &job);
	check_common("submit", 42, IOPA_URING_CMD_SUBMIT);
	memcpy(&copy, buf.raw + LIBIOPA_SQE_CMD_OFFSET, sizeof(copy));
	CHECK(!memcmp(&copy, &job, sizeof(job)), "submit: job in sqe->cmd");
	CHECK(!memcmp(buf.sqe.cmd, &job, sizeof(job)),
	      "submit: job read back through sqe->cmd");
	CHECK(all(LIBIOPA_SQE_CMD_OFFSET + sizeof(job),
		  LIBIOPA_SQE_CMD_OFFSET + LIBIOPA_SQE128_CMD_LEN, 0),
	      "submit: rest of the 80-byte command area zero");
	CHECK(all(SLOT, SLOT + GUARD, FILL), "submit: wrote past the SQE128 slot");
	CHECK(LIBIOPA_SQE_CMD_OFFSET + LIBIOPA_SQE128_CMD_LEN == SLOT,
	      "SQE128 command area ends the slot");
}

static void test_fetch(int commit)
{
	const char *what = commit ? "commit_and_fetch" : "fetch";
	struct iopa_uring_fetch f;
	struct iopa_work work;

	fill();
	if (commit)
		iopa_prep_commit_and_fetch(&buf.sqe, 9, &work, -5);
	else
		iopa_prep_fetch(&buf.sqe, 9, &work);
	check_common(what, 9, commit ? IOPA_URING_CMD_COMMIT_AND_FETCH :
				       IOPA_URING_CMD_FETCH);
	memcpy(&f, buf.raw + LIBIOPA_SQE_CMD_OFFSET, sizeof(f));
	CHECK(f.work == (uint64_t)(uintptr_t)&work, "%s: work pointer", what);
	CHECK(f.res == (commit ? -5 : 0), "%s: res %d", what, f.res);
	CHECK(f.flags == 0, "%s: flags", what);
	/* A 64-byte SQE: nothing past it is touched. */
	CHECK(all(64, SLOT + GUARD, FILL), "%s: wrote past the 64-byte SQE",
	      what);
}

/* The 16-byte payloads of the batched commands (libiopa 1.5). */
static void test_batched(void)
{
	struct iopa_uring_submit sm;
	struct iopa_uring_reap rp;
	struct iopa_uring_batch ub;
	struct iopa_batch b;
	struct iopa_job jobs[3];
	struct iopa_cqe cqes[4];

	fill();
	iopa_prep_work_batch(&buf.sqe, 11, &b);
	check_common("work_batch", 11, IOPA_URING_CMD_WORK_BATCH);
	memcpy(&ub, buf.raw + LIBIOPA_SQE_CMD_OFFSET, sizeof(ub));
	CHECK(ub.batch == (uint64_t)(uintptr_t)&b, "work_batch: pointer");
	CHECK(ub.flags == 0 && ub.reserved == 0, "work_batch: flags, reserved");
	CHECK(all(64, SLOT + GUARD, FILL), "work_batch: wrote past the SQE");

	fill();
	iopa_prep_submit_many(&buf.sqe, 12, jobs, 3);
	check_common("submit_many", 12, IOPA_URING_CMD_SUBMIT_MANY);
	memcpy(&sm, buf.raw + LIBIOPA_SQE_CMD_OFFSET, sizeof(sm));
	CHECK(sm.jobs == (uint64_t)(uintptr_t)jobs && sm.nr == 3 && !sm.flags,
	      "submit_many: jobs, nr, flags");
	CHECK(all(64, SLOT + GUARD, FILL), "submit_many: wrote past the SQE");

	fill();
	iopa_prep_reap(&buf.sqe, 13, cqes, 4, 2);
	check_common("reap", 13, IOPA_URING_CMD_REAP);
	memcpy(&rp, buf.raw + LIBIOPA_SQE_CMD_OFFSET, sizeof(rp));
	CHECK(rp.cqes == (uint64_t)(uintptr_t)cqes && rp.nr == 4 && rp.min == 2,
	      "reap: cqes, nr, min");
	CHECK(all(64, SLOT + GUARD, FILL), "reap: wrote past the SQE");
}

/* A helper run on a dirty SQE from a real ring leaves no stale field. */
static void test_reuse(void)
{
	struct iopa_work work;

	fill();
	buf.sqe.flags = IOSQE_IO_LINK;
	buf.sqe.user_data = 1234;
	iopa_prep_fetch(&buf.sqe, 3, &work);
	CHECK(buf.sqe.flags == 0 && buf.sqe.user_data == 0,
	      "reuse: flags and user_data cleared");
	io_uring_sqe_set_data64(&buf.sqe, 77);
	CHECK(buf.sqe.user_data == 77, "reuse: set_data after prep sticks");
}

/* The command numbers are the uapi's: type 0xB9, nr 0x30..0x32. */
static void test_numbers(void)
{
	CHECK(_IOC_TYPE(IOPA_URING_CMD_SUBMIT) == IOPA_IOC_MAGIC, "type");
	CHECK(_IOC_NR(IOPA_URING_CMD_SUBMIT) == 0x30, "submit nr");
	CHECK(_IOC_NR(IOPA_URING_CMD_FETCH) == 0x31, "fetch nr");
	CHECK(_IOC_NR(IOPA_URING_CMD_COMMIT_AND_FETCH) == 0x32, "c&f nr");
	CHECK(_IOC_SIZE(IOPA_URING_CMD_SUBMIT) == sizeof(struct iopa_job),
	      "submit size");
	CHECK(_IOC_SIZE(IOPA_URING_CMD_FETCH) == sizeof(struct iopa_uring_fetch),
	      "fetch size");
	CHECK(_IOC_NR(IOPA_URING_CMD_WORK_BATCH) == 0x33, "work_batch nr");
	CHECK(_IOC_NR(IOPA_URING_CMD_SUBMIT_MANY) == 0x34, "submit_many nr");
	CHECK(_IOC_NR(IOPA_URING_CMD_REAP) == 0x35, "reap nr");
}

int main(void)
{
	test_submit();
	test_fetch(0);
	test_fetch(1);
	test_batched();
	test_reuse();
	test_numbers();
	printf("sqe: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
