/* arrays.c: .npy arrays streamed into a dataset: edge lists, features, labels (OGB's
 * papers100M-bin .npz members and users' own files alike). */
#include "../core/half.h"
#include "dsio.h"

#define CHUNK ((size_t)1 << 16)
#define FEAT_CHUNK_BYTES ((size_t)4 << 20)

static void report(burrow_progress_fn fn, void *user, const char *phase, uint64_t done, uint64_t total)
{
	if (fn)
		fn(user, phase, done, total);
}

/* Integer element i of an array of type t. */
static int64_t int_at(const void *p, burrow_dtype t, size_t i)
{
	switch (t) {
	case BURROW_DTYPE_I64: return ((const int64_t *)p)[i];
	case BURROW_DTYPE_I32: return ((const int32_t *)p)[i];
	case BURROW_DTYPE_I8: return ((const int8_t *)p)[i];
	default: return ((const uint8_t *)p)[i];
	}
}

static int to_builder(void *ctx, const int64_t *src, const int64_t *dst, size_t n)
{
	return burrow_csr_builder_add(ctx, src, dst, n);
}

int bw_edges_npy(burrow_csr_builder *b, const bw_src *src, int64_t n, int64_t *count, burrow_progress_fn fn, void *user,
		 bw_edge_tally *tally)
{
	return bw_edges_npy_to(src, n, n, b ? to_builder : NULL, b, count, fn, user, tally);
}

int bw_edges_npy_to(const bw_src *src, int64_t n_src, int64_t n_dst, bw_edge_sink sink, void *ctx, int64_t *count,
		    burrow_progress_fn fn, void *user, bw_edge_tally *tally)
{
	bw_npys a, c = {0};
	int64_t *s = NULL, *d = NULL;
	void *raw = NULL, *raw2 = NULL;
	int st = bw_npys_open(&a, src);
	if (st)
		return st;
	const burrow_dtype t = a.h.dtype;
	const size_t isz = burrow_dtype_size(t);
	if (a.h.ndim != 2 || (t != BURROW_DTYPE_I64 && t != BURROW_DTYPE_I32) || (a.h.shape[0] != 2 && a.h.shape[1] != 2)) {
		char got[96];
		st = bw_err(BURROW_E_FORMAT, "%s: edges of shape %s %s, expected [2, E] or [E, 2] of int32 or int64", a.name,
			    bw_shape_str(got, sizeof got, a.h.ndim, a.h.shape), burrow_dtype_name(t));
		goto out;
	}
	/* (2, E): all sources, then all destinations (a second reader starts at those); (E, 2): pairs */
	const bool rows = a.h.shape[0] == 2;
	const int64_t e = rows ? a.h.shape[1] : a.h.shape[0];
	if (rows && ((st = bw_npys_open(&c, src)) || (st = bw_npys_read(&c, NULL, (size_t)e * isz))))
		goto out;
	s = bw_malloc(CHUNK * sizeof *s);
	d = bw_malloc(CHUNK * sizeof *d);
	raw = bw_malloc(2 * CHUNK * isz);
	raw2 = bw_malloc(CHUNK * isz);
	if (!s || !d || !raw || !raw2) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int64_t i = 0; i < e;) {
		size_t k = (size_t)BW_MIN((int64_t)CHUNK, e - i);
		if (rows) {
			if ((st = bw_npys_read(&a, raw, k * isz)) || (st = bw_npys_read(&c, raw2, k * isz)))
				goto out;
			for (size_t j = 0; j < k; j++) {
				s[j] = int_at(raw, t, j);
				d[j] = int_at(raw2, t, j);
			}
		} else {
			if ((st = bw_npys_read(&a, raw, 2 * k * isz)))
				goto out;
			for (size_t j = 0; j < k; j++) {
				s[j] = int_at(raw, t, 2 * j);
				d[j] = int_at(raw, t, 2 * j + 1);
			}
		}
		if (!sink) /* only tallied: ids need be >= 0 */
			n_src = n_dst = INT64_MAX;
		for (size_t j = 0; j < k; j++)
			if (s[j] < 0 || s[j] >= n_src || d[j] < 0 || d[j] >= n_dst) {
				const bool at_src = s[j] < 0 || s[j] >= n_src;
				const int64_t bad = at_src ? s[j] : d[j], n = at_src ? n_src : n_dst;
				st = sink ? bw_err(BURROW_E_RANGE, "%s: edge %lld: node id %lld out of range [0, %lld)", a.name,
						   (long long)(i + (int64_t)j), (long long)bad, (long long)n)
					  : bw_err(BURROW_E_RANGE, "%s: edge %lld: node id %lld is negative", a.name,
						   (long long)(i + (int64_t)j), (long long)bad);
				goto out;
			}
		if (tally)
			for (size_t j = 0; j < k; j++) {
				tally->max_id = BW_MAX(tally->max_id, BW_MAX(s[j], d[j]));
				tally->self_loops += s[j] == d[j];
				if (tally->seen) {
					tally->seen[s[j] >> 6] |= UINT64_C(1) << (s[j] & 63);
					tally->seen[d[j] >> 6] |= UINT64_C(1) << (d[j] & 63);
				}
			}
		if (sink && (st = sink(ctx, s, d, k)))
			goto out;
		i += (int64_t)k;
		report(fn, user, "edges", (uint64_t)i, (uint64_t)e);
	}
	*count = e;
out:
	bw_free(s);
	bw_free(d);
	bw_free(raw);
	bw_free(raw2);
	bw_npys_close(&a);
	bw_npys_close(&c);
	return st;
}

const char *bw_shape_str(char *buf, size_t cap, int ndim, const int64_t *shape)
{
	size_t k = (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < ndim && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
	if (k < cap)
		snprintf(buf + k, cap - k, "]");
	return buf;
}

int bw_put_rows(burrow_writer *w, float *rows, int64_t nrows, int64_t dim, burrow_dtype t)
{
	if (t == BURROW_DTYPE_F16)
		bw_f32_to_f16_n(rows, rows, (size_t)(nrows * dim)); /* in place: half i lands behind float i */
	return burrow_writer_features_append(w, rows, nrows);
}

/* Element j of a feature array of type t as a float. */
static float feat_at(const void *p, burrow_dtype t, size_t j)
{
	switch (t) {
	case BURROW_DTYPE_F32: return ((const float *)p)[j];
	case BURROW_DTYPE_F64: return (float)((const double *)p)[j];
	case BURROW_DTYPE_F16: return bw_f16_to_f32(((const uint16_t *)p)[j]);
	case BURROW_DTYPE_I16: return ((const int16_t *)p)[j];
	case BURROW_DTYPE_I64: return (float)((const int64_t *)p)[j];
	case BURROW_DTYPE_I32: return (float)((const int32_t *)p)[j];
	case BURROW_DTYPE_I8: return ((const int8_t *)p)[j];
	default: return ((const uint8_t *)p)[j]; /* U8, BOOL */
	}
}

/* Features of type t: floats as they are; integers (and bool) converted to float32, said in one line. */
static int feat_dtype_ok(const bw_npys *a, int64_t n, burrow_dtype *out)
{
	const burrow_dtype t = a->h.dtype;
	char got[96], want[64];
	const bool is_float = t == BURROW_DTYPE_F32 || t == BURROW_DTYPE_F16 || t == BURROW_DTYPE_F64;
	if (a->h.ndim != 2 || a->h.shape[0] != n || a->h.shape[1] < 1 || t == BURROW_DTYPE_INVALID)
		return bw_err(BURROW_E_FORMAT, "%s: features of shape %s %s, expected [%lld, D] (D >= 1) of floats or integers",
			      a->name, bw_shape_str(got, sizeof got, a->h.ndim, a->h.shape), burrow_dtype_name(t), (long long)n);
	if (*out == BURROW_DTYPE_INVALID)
		*out = t == BURROW_DTYPE_F16 ? BURROW_DTYPE_F16 : BURROW_DTYPE_F32;
	if (t != *out && t != BURROW_DTYPE_F16) {
		snprintf(want, sizeof want, "%s", burrow_dtype_name(*out));
		bw_log(BURROW_LOG_INFO, "%s: %s features converted to %s%s", a->name, burrow_dtype_name(t), want,
		       is_float ? "" : " (each integer as its float value)");
	}
	return 0;
}

int bw_features_npy(burrow_writer *w, const bw_src *src, int64_t n, burrow_dtype out, burrow_progress_fn fn, void *user)
{
	bw_npys a;
	void *raw = NULL;
	float *buf = NULL;
	int st = bw_npys_open(&a, src);
	if (st)
		return st;
	const burrow_dtype t = a.h.dtype;
	if ((st = feat_dtype_ok(&a, n, &out)))
		goto out;
	const int64_t dim = a.h.shape[1];
	const int64_t per = BW_MAX(1, (int64_t)(FEAT_CHUNK_BYTES / ((size_t)dim * sizeof(float))));
	const size_t tsz = burrow_dtype_size(t);
	raw = bw_malloc((size_t)(per * dim) * tsz);
	buf = bw_malloc((size_t)(per * dim) * sizeof *buf);
	if (!raw || !buf) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = burrow_writer_features_begin(w, n, dim, out)))
		goto out;
	for (int64_t i = 0; i < n;) {
		int64_t k = BW_MIN(per, n - i);
		size_t cnt = (size_t)(k * dim);
		if ((st = bw_npys_read(&a, raw, cnt * tsz)))
			goto out;
		if (t == out) { /* f16 -> f16, f32 -> f32: as is */
			st = burrow_writer_features_append(w, raw, k);
		} else {
			for (size_t j = 0; j < cnt; j++)
				buf[j] = feat_at(raw, t, j);
			st = bw_put_rows(w, buf, k, dim, out);
		}
		if (st)
			goto out;
		i += k;
		report(fn, user, "features", (uint64_t)i, (uint64_t)n);
	}
	st = burrow_writer_features_end(w);
out:
	bw_free(raw);
	bw_free(buf);
	bw_npys_close(&a);
	return st;
}

int bw_features_npy_keyed(burrow_writer *w, const char *path, int64_t n, const int64_t *row, const char *why,
			  burrow_dtype out, burrow_progress_fn fn, void *user)
{
	bw_npy_map m = {0};
	bw_npys a = {.h = {0}};
	float *buf = NULL;
	int st = bw_npy_mmap(path, &a.h, &m);
	if (st)
		return st;
	snprintf(a.name, sizeof a.name, "%s", path);
	const int64_t rows = a.h.ndim >= 1 ? a.h.shape[0] : 0;
	if ((st = feat_dtype_ok(&a, rows, &out)))
		goto out;
	const int64_t dim = a.h.shape[1];
	const size_t tsz = burrow_dtype_size(a.h.dtype);
	if (!(buf = bw_malloc((size_t)dim * sizeof *buf))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = burrow_writer_features_begin(w, n, dim, out)))
		goto out;
	for (int64_t i = 0; i < n && !st; i++) {
		if (row[i] >= rows) {
			st = bw_err(BURROW_E_RANGE, "%s: shape [%lld, %lld], but id %lld needs row %lld (%s)", path,
				    (long long)rows, (long long)dim, (long long)row[i], (long long)row[i], why);
			break;
		}
		const char *r = (const char *)m.data + (size_t)row[i] * (size_t)dim * tsz;
		for (int64_t j = 0; j < dim; j++)
			buf[j] = row[i] < 0 ? 0.0f : feat_at(r, a.h.dtype, (size_t)j);
		st = bw_put_rows(w, buf, 1, dim, out);
		if ((i & 4095) == 0)
			report(fn, user, "features", (uint64_t)i, (uint64_t)n);
	}
	if (!st)
		st = burrow_writer_features_end(w);
out:
	bw_free(buf);
	bw_npy_unmap(&m);
	return st;
}

int bw_labels_npy(const bw_src *src, int64_t n, int32_t **y)
{
	bw_npys a;
	void *raw = NULL;
	int st = bw_npys_open(&a, src);
	*y = NULL;
	if (st)
		return st;
	const burrow_dtype t = a.h.dtype;
	const size_t isz = burrow_dtype_size(t);
	const bool is_float = t == BURROW_DTYPE_F32 || t == BURROW_DTYPE_F64;
	if (a.h.ndim < 1 || a.h.ndim > 2 || a.h.shape[0] != n || (a.h.ndim == 2 && a.h.shape[1] != 1) ||
	    !(is_float || t == BURROW_DTYPE_I64 || t == BURROW_DTYPE_I32 || t == BURROW_DTYPE_I8 || t == BURROW_DTYPE_U8)) {
		char got[96];
		st = bw_err(BURROW_E_FORMAT, "%s: labels of shape %s %s, expected [%lld] or [%lld, 1] of integers or floats",
			    a.name, bw_shape_str(got, sizeof got, a.h.ndim, a.h.shape), burrow_dtype_name(t), (long long)n,
			    (long long)n);
		goto out;
	}
	*y = bw_malloc((size_t)(n ? n : 1) * sizeof **y);
	raw = bw_malloc(CHUNK * isz);
	if (!*y || !raw) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int64_t i = 0; i < n;) {
		size_t k = (size_t)BW_MIN((int64_t)CHUNK, n - i);
		if ((st = bw_npys_read(&a, raw, k * isz)))
			goto out;
		for (size_t j = 0; j < k; j++) {
			double v = t == BURROW_DTYPE_F32 ? ((const float *)raw)[j]
				   : t == BURROW_DTYPE_F64 ? ((const double *)raw)[j]
							   : (double)int_at(raw, t, j);
			int64_t node = i + (int64_t)j;
			if (isnan(v) || v == -1) {
				(*y)[node] = -1;
			} else if (!(v >= 0 && v < INT32_MAX && v == floor(v))) {
				st = bw_err(BURROW_E_RANGE, "%s: node %lld has label %g, not a class id (>= 0) or unlabeled (%s)",
					    a.name, (long long)node, v, is_float ? "NaN" : "-1");
				goto out;
			} else {
				(*y)[node] = (int32_t)v;
			}
		}
		i += (int64_t)k;
	}
out:
	if (st) {
		bw_free(*y);
		*y = NULL;
	}
	bw_free(raw);
	bw_npys_close(&a);
	return st;
}
