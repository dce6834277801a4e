/* store_mmap.c: the mmap engine: threads copy rows out of a read-only mapping of the whole
 * file, so every cold row costs a page fault. Kept as the baseline other tools use. */
#include "store_internal.h"

static int mmap_init(bw_worker *w)
{
	(void)w;
	return 0;
}

static void *mmap_run(void *arg)
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
		int64_t avail = s->file_size - r->off;
		/* the copy in bw_store_complete faults the pages in: its latency is the read's */
		bw_store_complete(w, ref, s->map + r->off, BW_MIN((int64_t)r->len, avail), bw_now_ns());
	}
	return NULL;
}

const bw_engine bw_engine_mmap = {.name = "mmap", .init = mmap_init, .run = mmap_run, .fini = NULL};
