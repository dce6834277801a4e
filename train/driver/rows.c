/* rows.c: sources of rows by id: an in-memory matrix, a 2-D npy file read with pread
 * (spilled embeddings; float16 converted), or the feature store (the features). */
#include "../../core/half.h"
#include "driver.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int mem_gather(bw_rows *r, const int64_t *ids, int64_t n, float *out)
{
	const int64_t d = r->dim;
	for (int64_t k = 0; k < n; k++)
		if (ids[k] < 0 || ids[k] >= r->num_rows)
			return bw_err(BURROW_E_RANGE, "rows: id %lld outside [0, %lld)", (long long)ids[k],
				      (long long)r->num_rows);
#pragma omp parallel for schedule(dynamic, bw_row_chunk(d)) num_threads(r->threads)
	for (int64_t k = 0; k < n; k++)
		memcpy(out + k * d, r->mem + ids[k] * d, (size_t)d * sizeof *out);
	return 0;
}

void bw_rows_from_memory(bw_rows *r, const float *data, int64_t num_rows, int64_t dim, int threads)
{
	memset(r, 0, sizeof *r);
	r->threads = bw_threads(threads);
	r->num_rows = num_rows;
	r->dim = dim;
	r->mem = data;
	r->gather = mem_gather;
}

typedef struct npy_src {
	int fd;
	char *path;
	bw_npy h;
	size_t es;       /* bytes per element */
	void *buf;       /* one run of rows */
	size_t buf_cap;
} npy_src;

typedef struct id_pos {
	int64_t id, pos;
} id_pos;

static int cmp_id_pos(const void *a, const void *b)
{
	const id_pos *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

#define RUN_BYTES ((size_t)1 << 20)

/* Sort the ids, read runs of consecutive rows (up to 1 MiB) with one pread each. */
static int npy_gather(bw_rows *r, const int64_t *ids, int64_t n, float *out)
{
	npy_src *s = r->ctx;
	const int64_t d = r->dim;
	const size_t row_bytes = (size_t)d * s->es;
	const int64_t run_max = BW_MAX((int64_t)1, (int64_t)(RUN_BYTES / row_bytes));
	id_pos *ord = bw_malloc((size_t)(n ? n : 1) * sizeof *ord);
	if (!ord)
		return BURROW_E_NOMEM;
	int st = 0;
	for (int64_t k = 0; k < n; k++) {
		if (ids[k] < 0 || ids[k] >= r->num_rows) {
			st = bw_err(BURROW_E_RANGE, "%s: row %lld outside [0, %lld)", s->path, (long long)ids[k],
				    (long long)r->num_rows);
			goto out;
		}
		ord[k] = (id_pos){ids[k], k};
	}
	qsort(ord, (size_t)n, sizeof *ord, cmp_id_pos);
	for (int64_t a = 0; a < n;) {
		int64_t b = a + 1;
		while (b < n && ord[b].id - ord[a].id < run_max && ord[b].id <= ord[b - 1].id + 1)
			b++;
		const int64_t first = ord[a].id, rows = ord[b - 1].id - first + 1;
		if ((st = bw_pread_all(s->fd, s->buf, (size_t)rows * row_bytes,
				       s->h.data_offset + first * (int64_t)row_bytes, s->path)))
			goto out;
		for (int64_t k = a; k < b; k++) {
			const char *src = (const char *)s->buf + (size_t)(ord[k].id - first) * row_bytes;
			float *dst = out + ord[k].pos * d;
			if (s->es == 4) {
				memcpy(dst, src, row_bytes);
			} else {
				const uint16_t *h = (const uint16_t *)src;
				for (int64_t c = 0; c < d; c++)
					dst[c] = bw_f16_to_f32(h[c]);
			}
		}
		a = b;
	}
out:
	bw_free(ord);
	return st;
}

static int store_gather(bw_rows *r, const int64_t *ids, int64_t n, float *out)
{
	return burrow_store_gather(r->ctx, ids, (size_t)n, out);
}

static int store_submit(bw_rows *r, const int64_t *ids, int64_t n, const bw_rows_dst *dst, void **ticket)
{
	return burrow_store_submit(r->ctx, ids, (size_t)n, dst->x, (burrow_store_ticket **)ticket);
}

static int store_wait(bw_rows *r, void *ticket) { return burrow_store_wait(r->ctx, ticket); }

void bw_rows_from_store(bw_rows *r, burrow_store *s)
{
	const burrow_store_info *in = burrow_store_get_info(s);
	memset(r, 0, sizeof *r);
	r->num_rows = in->num_rows;
	r->dim = in->dim;
	r->gather = store_gather;
	r->submit = store_submit;
	r->wait = store_wait;
	r->ctx = s;
	r->threads = 1;
}

/* ---- rows of another source, normalized (bw_rows_normalized) */

typedef struct norm_ticket {
	void *inner;        /* the inner source's ticket */
	float *x;           /* [n, dim] where its rows land */
	int64_t n;
} norm_ticket;

static int norm_gather(bw_rows *r, const int64_t *ids, int64_t n, float *out)
{
	bw_rows *in = r->ctx;
	int st = in->gather(in, ids, n, out);
	if (!st)
		bw_normalize_rows(out, n, r->dim, r->threads);
	return st;
}

static int norm_submit(bw_rows *r, const int64_t *ids, int64_t n, const bw_rows_dst *dst, void **ticket)
{
	bw_rows *in = r->ctx;
	norm_ticket *k = bw_malloc(sizeof *k);
	if (!k)
		return BURROW_E_NOMEM;
	*k = (norm_ticket){.x = dst->x, .n = n};
	int st = in->submit(in, ids, n, dst, &k->inner);
	if (st) {
		bw_free(k);
		return st;
	}
	*ticket = k;
	return 0;
}

static int norm_wait(bw_rows *r, void *ticket)
{
	bw_rows *in = r->ctx;
	norm_ticket *k = ticket;
	int st = in->wait(in, k->inner);
	if (!st)
		bw_normalize_rows(k->x, k->n, r->dim, r->threads);
	bw_free(k);
	return st;
}

static int norm_poll(bw_rows *r, void *ticket)
{
	bw_rows *in = r->ctx;
	return in->poll(in, ((norm_ticket *)ticket)->inner);
}

int bw_rows_normalized(bw_rows *r, bw_rows *inner)
{
	memset(r, 0, sizeof *r);
	if (inner->on_device)
		return bw_err(BURROW_E_UNSUPPORTED, "train: normalized features are read on the host; this source puts its "
						    "rows on the device (use the cpu)");
	r->num_rows = inner->num_rows;
	r->dim = inner->dim;
	r->gather = norm_gather;
	r->submit = inner->submit ? norm_submit : NULL;
	r->wait = inner->submit ? norm_wait : NULL;
	r->poll = inner->poll ? norm_poll : NULL;
	r->norms = inner->norms;
	r->ctx = inner;
	r->threads = inner->threads;
	return 0;
}

int bw_rows_open_npy(bw_rows *r, const char *path)
{
	memset(r, 0, sizeof *r);
	npy_src *s = bw_calloc(1, sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	s->fd = -1;
	int st = bw_npy_open(path, &s->h, &s->fd);
	if (st)
		goto fail;
	if (s->h.ndim != 2 || (s->h.dtype != BURROW_DTYPE_F32 && s->h.dtype != BURROW_DTYPE_F16)) {
		st = bw_err(BURROW_E_FORMAT, "%s: expected a 2-D float32 or float16 array", path);
		goto fail;
	}
	s->es = burrow_dtype_size(s->h.dtype);
	const size_t row_bytes = (size_t)s->h.shape[1] * s->es;
	s->buf_cap = BW_MAX(RUN_BYTES, row_bytes);
	if (!(s->buf = bw_malloc(s->buf_cap)) || !(s->path = bw_strdup(path))) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	r->num_rows = s->h.shape[0];
	r->dim = s->h.shape[1];
	r->gather = npy_gather;
	r->ctx = s;
	return 0;
fail:
	if (s->fd >= 0)
		close(s->fd);
	bw_free(s->buf);
	bw_free(s->path);
	bw_free(s);
	return st;
}

void bw_rows_close(bw_rows *r)
{
	if (r->gather == npy_gather && r->ctx) {
		npy_src *s = r->ctx;
		close(s->fd);
		bw_free(s->buf);
		bw_free(s->path);
		bw_free(s);
	}
	memset(r, 0, sizeof *r);
}
