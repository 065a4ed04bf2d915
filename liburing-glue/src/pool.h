/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * libiopa internals: the in-process job source of the worker pool
 * (src/inproc.c), used by src/pool.c when /dev/iopa is absent or the
 * application asks for it (IOPA_POOL_F_INPROC).  Not installed.
 *
 * It stands in for one submitter and the context's workers of the
 * module: a bounded queue, an admission limit adjusted by the module's
 * own controller (kernel/ctl.c, built into the library), and completions
 * for the pool to reap.  Every call is thread-safe.
 */
#ifndef LIBIOPA_POOL_H
#define LIBIOPA_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/* Most jobs queued, running and unreaped at once (the module's EAGAIN). */
#define INPROC_MAX_JOBS		4096

/* src/knees.c: the in-process pool's memory of devices' knees. */
#define IOPA_KNEES_ID_LEN	32
bool iopa_knees_id(int fd, char id[IOPA_KNEES_ID_LEN]);
unsigned int iopa_knees_lookup(const char *id, unsigned int *job_kb);
void iopa_knees_save(const char *id, unsigned int knee, unsigned int job_kb);

struct inproc;

/*
 * What a pool thread keeps between its calls: its thread's task I/O
 * counter (/proc/thread-self/io) and the job it runs.
 */
struct inproc_worker {
	int io_fd;		/* -1: not open (yet, or not available) */
	uint64_t io_mark;	/* the counter when the last job started */
	int64_t fetch_ns;	/* when the job it holds was taken */
	uint64_t user_data;	/* that job's */
};

int iopa_inproc_create(struct inproc **q, unsigned int fixed_limit,
		  unsigned int max_limit, bool borrow, unsigned int fd_cap);
void iopa_inproc_put_fd(struct inproc *q, int fd);
unsigned int iopa_inproc_default_max(void);
void iopa_inproc_stop(struct inproc *q);
void iopa_inproc_destroy(struct inproc *q);
int iopa_inproc_submit(struct inproc *q, const struct iopa_job *jobs,
		  unsigned int nr);
void iopa_inproc_worker_init(struct inproc_worker *iw);
int iopa_inproc_next(struct inproc *q, struct inproc_worker *iw,
		const struct iopa_done *done, bool have_done,
		struct iopa_work *w, uint64_t timeout_ns);
void iopa_inproc_worker_exit(struct inproc *q, struct inproc_worker *iw,
			const struct iopa_done *done, bool have_done);
int iopa_inproc_reap(struct inproc *q, struct iopa_cqe *cqes, unsigned int nr,
		uint64_t timeout_ns);
void iopa_inproc_demand(struct inproc *q, unsigned int *pending,
		   unsigned int *waiting);
unsigned int iopa_inproc_limit(struct inproc *q);

#endif /* LIBIOPA_POOL_H */
