/* store_uring.c: the io_uring engine: each thread owns a ring and keeps its share of the queue
 * depth in flight, O_DIRECT reads into registered staging buffers of a registered file. */
#define _GNU_SOURCE
#include "store_internal.h"

#include <errno.h>
#include <liburing.h>
#include <string.h>
#include <time.h>

typedef struct uring_slot {
	bw_ref ref;
	uint64_t t0;
} uring_slot;

typedef struct uring_state {
	struct io_uring ring;
	bool fixed_file;  /* the file is registered: index 0 */
	bool fixed_buf;   /* the staging buffer is registered: index 0 */
	uring_slot *slot; /* [w->slots] */
	int *free;        /* [w->slots] free slot numbers */
	int nfree;
	bw_ref *batch;    /* [w->slots] */
} uring_state;

static void uring_fini(bw_worker *w)
{
	uring_state *u = w->engine;
	if (!u)
		return;
	io_uring_queue_exit(&u->ring);
	bw_free(u->slot);
	bw_free(u->free);
	bw_free(u->batch);
	bw_free(u);
	w->engine = NULL;
}

static int uring_init(bw_worker *w)
{
	burrow_store *s = w->s;
	if (bw_store_uring_refuse)
		return bw_err(BURROW_E_UNSUPPORTED, "io_uring_queue_init: refused by the test hook");
	uring_state *u = bw_calloc(1, sizeof *u);
	if (!u)
		return BURROW_E_NOMEM;
	struct io_uring_params p;
	memset(&p, 0, sizeof p);
	p.flags = IORING_SETUP_COOP_TASKRUN; /* completions are run when we enter the kernel anyway */
	int rc = io_uring_queue_init_params((unsigned)w->slots, &u->ring, &p);
	if (rc == -EINVAL) {
		memset(&p, 0, sizeof p);
		rc = io_uring_queue_init_params((unsigned)w->slots, &u->ring, &p);
	}
	if (rc < 0) {
		bw_free(u);
		return bw_err(BURROW_E_UNSUPPORTED, "io_uring_queue_init: %s", strerror(-rc));
	}
	w->engine = u;
	u->fixed_file = io_uring_register_files(&u->ring, &s->fd, 1) == 0;
	struct iovec iov = {.iov_base = w->stage, .iov_len = (size_t)w->slots * s->slot_bytes};
	rc = io_uring_register_buffers(&u->ring, &iov, 1);
	u->fixed_buf = rc == 0;
	if (rc < 0)
		bw_log(BURROW_LOG_DEBUG, "%s: io_uring buffer registration failed (%s); plain reads", s->path,
		       strerror(-rc));
	u->slot = bw_calloc((size_t)w->slots, sizeof *u->slot);
	u->free = bw_malloc((size_t)w->slots * sizeof *u->free);
	u->batch = bw_malloc((size_t)w->slots * sizeof *u->batch);
	if (!u->slot || !u->free || !u->batch) {
		uring_fini(w);
		return BURROW_E_NOMEM;
	}
	for (int i = 0; i < w->slots; i++)
		u->free[i] = w->slots - 1 - i;
	u->nfree = w->slots;
	return 0;
}

/* Queue reads into free slots; returns how many were queued (skipped reads are finished). */
static int uring_fill(bw_worker *w, uring_state *u, size_t n)
{
	burrow_store *s = w->s;
	int queued = 0;
	uint64_t now = bw_now_ns();
	for (size_t k = 0; k < n; k++) {
		bw_ref ref = u->batch[k];
		if (bw_store_failed(ref)) {
			bw_store_complete(w, ref, NULL, 0, 0);
			continue;
		}
		const bw_read *r = &ref.t->reads[ref.ri];
		int slot = u->free[--u->nfree];
		char *buf = w->stage + (size_t)slot * s->slot_bytes;
		struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring); /* never NULL: at most `slots` queued */
		int fd = u->fixed_file ? 0 : s->fd;
		if (u->fixed_buf)
			io_uring_prep_read_fixed(sqe, fd, buf, r->len, (uint64_t)r->off, 0);
		else
			io_uring_prep_read(sqe, fd, buf, r->len, (uint64_t)r->off);
		if (u->fixed_file)
			sqe->flags |= IOSQE_FIXED_FILE;
		io_uring_sqe_set_data64(sqe, (uint64_t)slot);
		u->slot[slot] = (uring_slot){.ref = ref, .t0 = now};
		queued++;
	}
	return queued;
}

static void *uring_run(void *arg)
{
	bw_worker *w = arg;
	burrow_store *s = w->s;
	uring_state *u = w->engine;
	int inflight = 0;
	for (;;) {
		if (u->nfree > 0) {
			/* block for work only when nothing is in flight; else just top up */
			size_t n = bw_store_pop(s, u->batch, (size_t)u->nfree, inflight == 0);
			if (n == 0 && inflight == 0)
				break; /* stopping */
			inflight += uring_fill(w, u, n);
		}
		if (inflight == 0)
			continue;
		int rc = io_uring_submit_and_wait(&u->ring, 1);
		if (rc < 0 && rc != -EINTR && rc != -EAGAIN && rc != -EBUSY) {
			/* not expected on a working ring; the queued entries stay queued, so back off
			 * and try again rather than lose reads the kernel may still own */
			bw_log(BURROW_LOG_DEBUG, "%s: io_uring_submit_and_wait: %s", s->path, strerror(-rc));
			nanosleep(&(struct timespec){.tv_nsec = 100000}, NULL);
		}
		unsigned head, seen = 0;
		struct io_uring_cqe *cqe;
		io_uring_for_each_cqe(&u->ring, head, cqe)
		{
			int slot = (int)io_uring_cqe_get_data64(cqe);
			uring_slot *sl = &u->slot[slot];
			bw_store_complete(w, sl->ref, w->stage + (size_t)slot * s->slot_bytes, cqe->res, sl->t0);
			u->free[u->nfree++] = slot;
			inflight--;
			seen++;
		}
		io_uring_cq_advance(&u->ring, seen);
	}
	return NULL;
}

const bw_engine bw_engine_uring = {.name = "uring", .init = uring_init, .run = uring_run, .fini = uring_fini};
