// SPDX-License-Identifier: (LGPL-2.1 OR MIT)
/*
 * Compile test of the installed header: built as C (gnu99, gnu11, gnu17)
 * and as C++ (c++11, c++17, c++20) with -Wall -Wextra -Werror, linked and
 * run.  It uses every inline helper and names every exported function, so
 * a declaration that does not match the library fails to link.
 */
#include <libiopa.h>

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
	const void *fns[] = {
		(const void *)iopa_open, (const void *)iopa_get_features,
		(const void *)iopa_submitter_create,
		(const void *)iopa_worker_create, (const void *)iopa_get_stats,
		(const void *)iopa_submit, (const void *)iopa_reap,
		(const void *)iopa_cancel, (const void *)iopa_set_limit,
		(const void *)iopa_get_limit, (const void *)iopa_set_adapt,
		(const void *)iopa_get_state, (const void *)iopa_fetch,
		(const void *)iopa_complete,
		(const void *)iopa_complete_and_fetch,
		(const void *)iopa_pool_init,
		(const void *)iopa_pool_create_threads,
		(const void *)iopa_pool_submit, (const void *)iopa_pool_wait,
		(const void *)iopa_pool_close, (const void *)iopa_pool_ctx_fd,
		(const void *)iopa_pool_submitter_fd,
		(const void *)iopa_pool_get_info,
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
