// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Compile test of the installed header: built as C (gnu99, gnu11, gnu17,
 * and strict ISO c99, c11, c17 with -pedantic) and as C++ (c++11, c++17,
 * c++20, -pedantic too) with -Wall -Wextra -Werror, linked and run.  It
 * uses every inline helper and names every exported function, so a
 * declaration that does not match the library fails to link.  Nothing
 * before <libiopa.h>: its first include is <liburing.h>, which needs that
 * under strict ISO C.
 */
#include <libiopa.h>

/* Any function pointer (ISO C converts between function pointer types). */
typedef void (*any_fn)(void);

static int work_fn(void *arg, const struct iopa_work *w)
{
	(void)arg;
	return (int)w->len;
}

int main(void)
{
	static union {
		struct io_uring_sqe sqe;
		unsigned char raw[128];
	} buf;
	struct iopa_job job;
	struct iopa_work work;
	struct iopa_pool_opts opts;
	iopa_pool_fn fn = work_fn;
	const any_fn fns[] = {
		(any_fn)iopa_open, (any_fn)iopa_get_features,
		(any_fn)iopa_submitter_create,
		(any_fn)iopa_worker_create, (any_fn)iopa_get_stats,
		(any_fn)iopa_submit, (any_fn)iopa_reap,
		(any_fn)iopa_cancel, (any_fn)iopa_set_limit,
		(any_fn)iopa_get_limit, (any_fn)iopa_set_adapt,
		(any_fn)iopa_get_state, (any_fn)iopa_fetch,
		(any_fn)iopa_complete,
		(any_fn)iopa_complete_and_fetch,
		(any_fn)iopa_pool_init,
		(any_fn)iopa_pool_create_threads,
		(any_fn)iopa_pool_submit, (any_fn)iopa_pool_wait,
		(any_fn)iopa_pool_close, (any_fn)iopa_pool_ctx_fd,
		(any_fn)iopa_pool_submitter_fd,
		(any_fn)iopa_pool_get_info, (any_fn)iopa_fds_left,
	};
	unsigned int i;

	memset(&job, 0, sizeof(job));
	memset(&work, 0, sizeof(work));
	memset(&opts, 0, sizeof(opts));
	iopa_prep_submit(&buf.sqe, 3, &job);
	iopa_prep_fetch(&buf.sqe, 4, &work);
	iopa_prep_commit_and_fetch(&buf.sqe, 4, &work, 0);
	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (!fns[i])
			return 1;
	return fn(NULL, &work) == 0 && buf.sqe.fd == 4 &&
	       LIBIOPA_VERSION_MAJOR == 1 ? 0 : 1;
}
