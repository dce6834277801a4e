/* store_sync.c: the two synchronous engines, one row read at a time per thread. pread: a
 * blocking read into the thread's aligned staging buffer (also the fallback when io_uring
 * cannot be set up). mmap: a copy out of a read-only mapping of the whole file, so every
 * cold row costs a page fault; kept as the baseline other tools use. */
#define _GNU_SOURCE
#include "store_internal.h"

#include <errno.h>
#include <unistd.h>

/* One read: where its bytes are, how many (or -errno), and when it started. */
typedef const void *(*sync_read_fn)(bw_worker *w, const bw_read *r, int64_t *got, uint64_t *t0);

static const void *read_pread(bw_worker *w, const bw_read *r, int64_t *got, uint64_t *t0)
{
	*t0 = bw_now_ns();
	ssize_t rc;
	do
		rc = pread(w->s->fd, w->stage, r->len, r->off);
	while (rc < 0 && errno == EINTR);
	*got = rc < 0 ? -(int64_t)errno : (int64_t)rc;
	return w->stage;
}

static const void *read_mmap(bw_worker *w, const bw_read *r, int64_t *got, uint64_t *t0)
{
	/* the copy in bw_store_complete faults the pages in: its latency is the read's */
	*got = BW_MIN((int64_t)r->len, w->s->file_size - r->off);
	*t0 = bw_now_ns();
	return w->s->map + r->off;
}

static void sync_loop(bw_worker *w, sync_read_fn read_one)
{
	bw_ref ref;
	while (bw_store_pop(w->s, &ref, 1, true) == 1) {
		if (bw_store_failed(ref)) {
			bw_store_complete(w, ref, NULL, 0, 0);
			continue;
		}
		int64_t got;
		uint64_t t0;
		const void *src = read_one(w, &ref.t->reads[ref.ri], &got, &t0);
		bw_store_complete(w, ref, src, got, t0);
	}
}

static void *pread_run(void *arg)
{
	sync_loop(arg, read_pread);
	return NULL;
}

static void *mmap_run(void *arg)
{
	sync_loop(arg, read_mmap);
	return NULL;
}

const bw_engine bw_engine_pread = {.name = "pread", .run = pread_run};
const bw_engine bw_engine_mmap = {.name = "mmap", .run = mmap_run};
