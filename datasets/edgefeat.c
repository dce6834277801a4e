/* edgefeat.c: edge features for prep and import: rows read from an .npy or CSV text, one per
 * input edge, handed to the writer, which places each at its edge's CSR entries. */
#include "edgefeat.h"
#include "../core/half.h"
#include "../graph/dataset_internal.h"

#include <strings.h>

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcasecmp(s + a - b, suffix);
}

void bw_edge_rows_free(bw_edge_rows *r)
{
	if (!r)
		return;
	bw_free(r->owned);
	bw_npy_unmap(&r->map);
	memset(r, 0, sizeof *r);
}

int bw_edge_rows_npy(const char *path, bw_edge_rows *r)
{
	bw_npy h;
	memset(r, 0, sizeof *r);
	int st = bw_npy_mmap(path, &h, &r->map);
	if (st)
		return st;
	if ((h.ndim != 1 && h.ndim != 2) ||
	    (h.dtype != BURROW_DTYPE_F32 && h.dtype != BURROW_DTYPE_F16 && h.dtype != BURROW_DTYPE_F64)) {
		bw_edge_rows_free(r);
		return bw_err(BURROW_E_FORMAT, "%s: edge features must be [E] or [E, De] of float32, float16 or float64",
			      path);
	}
	r->m = h.shape[0];
	r->dim = h.ndim == 2 ? h.shape[1] : 1;
	r->dtype = h.dtype;
	r->rows = r->map.data;
	if (r->dim < 1) {
		bw_edge_rows_free(r);
		return bw_err(BURROW_E_FORMAT, "%s: edge features have no columns", path);
	}
	if (h.dtype == BURROW_DTYPE_F64) { /* to float32, in memory */
		const int64_t k = r->m * r->dim;
		float *f = bw_malloc((size_t)(k ? k : 1) * sizeof *f);
		if (!f) {
			bw_edge_rows_free(r);
			return bw_err(BURROW_E_NOMEM, "%s: out of memory converting %lld edge features", path, (long long)k);
		}
		for (int64_t i = 0; i < k; i++)
			f[i] = (float)((const double *)r->rows)[i];
		bw_npy_unmap(&r->map);
		r->owned = f;
		r->rows = f;
		r->dtype = BURROW_DTYPE_F32;
	}
	return 0;
}

/* Append one parsed row (float32 [dim]) to r, converted to r->dtype. */
static int push_row(bw_edge_rows *r, size_t *cap, const float *row)
{
	const size_t es = burrow_dtype_size(r->dtype), rb = (size_t)r->dim * es;
	if ((size_t)r->m == *cap) {
		size_t c = *cap ? *cap + *cap / 2 : 4096;
		void *p = bw_realloc(r->owned, c * rb);
		if (!p)
			return bw_err(BURROW_E_NOMEM, "out of memory for %zu rows of edge features", c);
		r->owned = p;
		*cap = c;
	}
	char *dst = (char *)r->owned + (size_t)r->m * rb;
	if (r->dtype == BURROW_DTYPE_F16)
		bw_f32_to_f16_n(dst, row, (size_t)r->dim);
	else
		memcpy(dst, row, rb);
	r->m++;
	return 0;
}

int bw_edge_rows_csv(const bw_src *src, bool gunzip, char sep, burrow_dtype dtype, bw_edge_rows *r,
		     burrow_progress_fn fn, void *user)
{
	bw_csv c;
	bool more;
	size_t cap = 0;
	float *row = NULL;
	memset(r, 0, sizeof *r);
	r->dtype = dtype == BURROW_DTYPE_F16 ? BURROW_DTYPE_F16 : BURROW_DTYPE_F32;
	int st = bw_csv_open(&c, src, gunzip, sep, true);
	if (st)
		return st;
	if (!(st = bw_csv_next_line(&c, &more)) && more) {
		r->dim = bw_csv_count_fields(&c);
		if (!(row = bw_malloc((size_t)r->dim * sizeof *row)))
			st = BURROW_E_NOMEM;
	}
	for (int64_t k = 0; !st && more; st = bw_csv_next_line(&c, &more)) {
		if ((st = bw_csv_floats(&c, row, r->dim)) || (st = push_row(r, &cap, row)))
			break;
		if (fn && ++k % 65536 == 0)
			fn(user, "edge features", bw_rd_consumed(c.rd), bw_rd_size(c.rd));
	}
	if (!st && r->dim == 0)
		st = bw_err(BURROW_E_FORMAT, "%s: no edge features (an empty file)", src->name);
	bw_csv_close(&c);
	bw_free(row);
	if (st)
		bw_edge_rows_free(r);
	else
		r->rows = r->owned;
	return st;
}

int bw_edge_rows_load(const char *path, burrow_dtype dtype, bw_edge_rows *r, burrow_progress_fn fn, void *user)
{
	if (ends_with(path, ".npy"))
		return bw_edge_rows_npy(path, r);
	bool gz = false;
	bw_src src = {.name = path, .path = path, .fd = -1};
	int st = bw_is_gzip(path, &gz);
	return st ? st : bw_edge_rows_csv(&src, gz, 0, dtype, r, fn, user);
}

int bw_edge_rows_put(burrow_writer *w, const bw_edge_rows *r, int64_t edges, const char *name, bool from_edges,
		     burrow_edge_reduce reduce)
{
	if (r->m != edges)
		return bw_err(BURROW_E_FORMAT, "%s: %lld rows of edge features, but %lld edges were read (one row per "
			      "input edge, in their order)", name, (long long)r->m, (long long)edges);
	int st = burrow_writer_put_edge_features(w, r->rows, r->m, r->dim, r->dtype);
	if (!st && from_edges)
		st = burrow_writer_features_from_edges(w, reduce);
	return st;
}
