/* store_pread.c: the pread engine: each thread does one blocking read at a time into its own
 * aligned staging buffer; also the fallback when io_uring cannot be set up. */
#define _GNU_SOURCE
#include "store_internal.h"

#include <errno.h>
#include <unistd.h>

static int pread_init(bw_worker *w)
{
	(void)w;
	return 0;
}

static void *pread_run(void *arg)
{
	bw_worker *w = arg;
	burrow_store *s = w->s;
	bw_ref ref;
	while (bw_store_pop(s, &ref, 1, true) == 1) {
		if (bw_store_failed(ref)) {
			bw_store_complete(w, ref, NULL, 0, 0);
			continue;
		}
		const bw_read *r = &ref.t->reads[ref.ri];
		uint64_t t0 = bw_now_ns();
		ssize_t rc;
		do
			rc = pread(s->fd, w->stage, r->len, r->off);
		while (rc < 0 && errno == EINTR);
		bw_store_complete(w, ref, w->stage, rc < 0 ? -(int64_t)errno : (int64_t)rc, t0);
	}
	return NULL;
}

const bw_engine bw_engine_pread = {.name = "pread", .init = pread_init, .run = pread_run, .fini = NULL};
