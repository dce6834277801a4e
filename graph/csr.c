/* csr.c: CSR construction from an edge list (symmetrize, drop self-loops and duplicates,
 * sorted rows) and the structural check. The builder takes edges in chunks so that an
 * external-memory build can sit behind the same calls. */
#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

struct burrow_csr_builder {
	int64_t n;
	burrow_csr_opts o;
	int64_t *src, *dst;     /* edges added so far, owned */
	size_t count, cap;
	bool finished;
	int64_t *indptr;        /* result, owned */
	void *indices;          /* result, owned */
};

void burrow_csr_defaults(burrow_csr_opts *o)
{
	memset(o, 0, sizeof *o);
	o->drop_self_loops = true;
	o->drop_duplicates = true;
}

int burrow_csr_builder_open(burrow_csr_builder **out, int64_t num_nodes, const burrow_csr_opts *opts)
{
	*out = NULL;
	if (num_nodes < 0)
		return bw_err(BURROW_E_INVAL, "csr: negative node count %lld", (long long)num_nodes);
	burrow_csr_builder *b = bw_calloc(1, sizeof *b);
	if (!b)
		return BURROW_E_NOMEM;
	b->n = num_nodes;
	if (opts)
		b->o = *opts;
	else
		burrow_csr_defaults(&b->o);
	*out = b;
	return 0;
}

void burrow_csr_builder_close(burrow_csr_builder *b)
{
	if (!b)
		return;
	bw_free(b->src);
	bw_free(b->dst);
	bw_free(b->indptr);
	bw_free(b->indices);
	bw_free(b);
}

int64_t burrow_csr_builder_count(const burrow_csr_builder *b) { return (int64_t)b->count; }

/* Grow the edge arrays to hold `need` edges: exactly, or with room to spare. */
static int grow(burrow_csr_builder *b, size_t need, bool exact)
{
	size_t cap = b->cap ? b->cap : 1024;
	while (cap < need)
		cap += cap / 2;
	if (exact)
		cap = need;
	if (b->o.mem_bytes && cap * 2 * sizeof(int64_t) > b->o.mem_bytes) {
		cap = need;
		if (cap * 2 * sizeof(int64_t) > b->o.mem_bytes)
			return bw_err(BURROW_E_NOMEM,
				      "csr: %zu edges need %zu bytes, over the memory budget of %zu bytes", need,
				      need * 2 * sizeof(int64_t), b->o.mem_bytes);
	}
	int64_t *s = bw_realloc(b->src, cap * sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	b->src = s;
	int64_t *d = bw_realloc(b->dst, cap * sizeof *d);
	if (!d)
		return BURROW_E_NOMEM;
	b->dst = d;
	b->cap = cap;
	return 0;
}

int burrow_csr_builder_reserve(burrow_csr_builder *b, size_t n)
{
	if (b->finished)
		return bw_err(BURROW_E_INVAL, "csr: reserve after finish");
	if (b->count + n <= b->cap)
		return 0;
	return grow(b, b->count + n, true);
}

int burrow_csr_builder_add(burrow_csr_builder *b, const int64_t *src, const int64_t *dst, size_t n)
{
	if (b->finished)
		return bw_err(BURROW_E_INVAL, "csr: edges added after finish");
	for (size_t i = 0; i < n; i++) {
		if (src[i] < 0 || src[i] >= b->n)
			return bw_err(BURROW_E_RANGE, "csr: edge %zu: source id %lld out of range [0, %lld)",
				      b->count + i, (long long)src[i], (long long)b->n);
		if (dst[i] < 0 || dst[i] >= b->n)
			return bw_err(BURROW_E_RANGE, "csr: edge %zu: destination id %lld out of range [0, %lld)",
				      b->count + i, (long long)dst[i], (long long)b->n);
	}
	if (b->count + n > b->cap) {
		int st = grow(b, b->count + n, false);
		if (st)
			return st;
	}
	memcpy(b->src + b->count, src, n * sizeof *src);
	memcpy(b->dst + b->count, dst, n * sizeof *dst);
	b->count += n;
	return 0;
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Sort one row in place and, when asked, drop repeats; returns the new length. */
#define DEFINE_SORT_ROW(name, T, cmp)                                           \
	static int64_t name(T *a, int64_t n, bool unique)                       \
	{                                                                       \
		if (n <= 24) {                                                  \
			for (int64_t i = 1; i < n; i++) {                       \
				T v = a[i];                                     \
				int64_t j = i;                                  \
				for (; j > 0 && a[j - 1] > v; j--)              \
					a[j] = a[j - 1];                        \
				a[j] = v;                                       \
			}                                                       \
		} else {                                                        \
			qsort(a, (size_t)n, sizeof(T), cmp);                    \
		}                                                               \
		if (!unique || n < 2)                                           \
			return n;                                               \
		int64_t k = 1;                                                  \
		for (int64_t i = 1; i < n; i++)                                 \
			if (a[i] != a[k - 1])                                   \
				a[k++] = a[i];                                  \
		return k;                                                       \
	}
DEFINE_SORT_ROW(sort_row_i32, int32_t, cmp_i32)
DEFINE_SORT_ROW(sort_row_i64, int64_t, cmp_i64)

static void progress(const burrow_csr_builder *b, const char *phase, uint64_t done, uint64_t total)
{
	if (b->o.progress)
		b->o.progress(b->o.progress_user, phase, done, total);
}

int burrow_csr_builder_finish(burrow_csr_builder *b, burrow_csr *out)
{
	const int64_t n = b->n;
	const bool sym = b->o.symmetrize, noloop = b->o.drop_self_loops;
	const int width = n < ((int64_t)1 << 31) ? 4 : 8;
	int64_t *cursor = NULL;
	int st = 0;

	memset(out, 0, sizeof *out);
	if (b->finished)
		return bw_err(BURROW_E_INVAL, "csr: finish called twice");
	b->finished = true;

	int64_t *indptr = bw_calloc((size_t)n + 1, sizeof *indptr);
	if (!indptr)
		return BURROW_E_NOMEM;
	/* degrees, then offsets */
	for (size_t i = 0; i < b->count; i++) {
		if (noloop && b->src[i] == b->dst[i])
			continue;
		indptr[b->src[i] + 1]++;
		if (sym)
			indptr[b->dst[i] + 1]++;
	}
	for (int64_t v = 0; v < n; v++)
		indptr[v + 1] += indptr[v];
	const int64_t total = indptr[n];

	void *idx = bw_malloc((size_t)(total ? total : 1) * (size_t)width);
	cursor = bw_malloc((size_t)(n ? n : 1) * sizeof *cursor);
	if (!idx || !cursor) {
		st = BURROW_E_NOMEM;
		bw_free(idx);
		goto out_free;
	}
	memcpy(cursor, indptr, (size_t)n * sizeof *cursor);
	progress(b, "scatter", 0, b->count);
	for (size_t i = 0; i < b->count; i++) {
		int64_t s = b->src[i], d = b->dst[i];
		if (noloop && s == d)
			continue;
		if (width == 4) {
			((int32_t *)idx)[cursor[s]++] = (int32_t)d;
			if (sym)
				((int32_t *)idx)[cursor[d]++] = (int32_t)s;
		} else {
			((int64_t *)idx)[cursor[s]++] = d;
			if (sym)
				((int64_t *)idx)[cursor[d]++] = s;
		}
	}
	progress(b, "scatter", b->count, b->count);
	/* the edge list is no longer needed */
	bw_free(b->src);
	bw_free(b->dst);
	b->src = b->dst = NULL;
	b->cap = 0;

	/* sort each row; cursor[v] becomes the row's length after de-duplication */
	const bool uniq = b->o.drop_duplicates;
	progress(b, "sort", 0, (uint64_t)n);
#pragma omp parallel for schedule(dynamic, 4096) num_threads(bw_threads(b->o.threads))
	for (int64_t v = 0; v < n; v++) {
		int64_t lo = indptr[v], len = indptr[v + 1] - lo;
		cursor[v] = width == 4 ? sort_row_i32((int32_t *)idx + lo, len, uniq)
				       : sort_row_i64((int64_t *)idx + lo, len, uniq);
	}
	progress(b, "sort", (uint64_t)n, (uint64_t)n);
	/* compact the rows left over the removed duplicates */
	int64_t k = 0;
	for (int64_t v = 0; v < n; v++) {
		int64_t lo = indptr[v];
		if (k != lo)
			memmove((char *)idx + k * width, (char *)idx + lo * width, (size_t)(cursor[v] * width));
		indptr[v] = k;
		k += cursor[v];
	}
	indptr[n] = k;
	if (k < total) {
		void *shrunk = bw_realloc(idx, (size_t)(k ? k : 1) * (size_t)width);
		if (shrunk)
			idx = shrunk;
	}
	b->indptr = indptr;
	b->indices = idx;
	indptr = NULL;
	out->num_nodes = n;
	out->num_edges = k;
	out->indptr = b->indptr;
	out->indices = b->indices;
	out->index_width = width;
out_free:
	bw_free(cursor);
	bw_free(indptr);
	return st;
}

int burrow_csr_check(const burrow_csr *g, bool unique)
{
	const int64_t n = g->num_nodes;
	if (n < 0 || (g->index_width != 4 && g->index_width != 8))
		return bw_err(BURROW_E_FORMAT, "csr: bad node count or index width");
	if (g->index_width == 4 && n > INT32_MAX)
		return bw_err(BURROW_E_FORMAT, "csr: %lld nodes need 64-bit ids", (long long)n);
	if (g->indptr[0] != 0)
		return bw_err(BURROW_E_FORMAT, "csr: indptr[0] is %lld, expected 0", (long long)g->indptr[0]);
	if (g->indptr[n] != g->num_edges)
		return bw_err(BURROW_E_FORMAT, "csr: indptr[%lld] is %lld, expected the edge count %lld",
			      (long long)n, (long long)g->indptr[n], (long long)g->num_edges);
	for (int64_t v = 0; v < n; v++) {
		int64_t lo = g->indptr[v], hi = g->indptr[v + 1];
		if (hi < lo)
			return bw_err(BURROW_E_FORMAT, "csr: row %lld: indptr decreases (%lld > %lld)", (long long)v,
				      (long long)lo, (long long)hi);
		int64_t prev = -1;
		for (int64_t j = lo; j < hi; j++) {
			int64_t u = burrow_csr_index(g, j);
			if (u < 0 || u >= n)
				return bw_err(BURROW_E_FORMAT, "csr: row %lld: neighbor %lld out of range [0, %lld)",
					      (long long)v, (long long)u, (long long)n);
			if (u < prev || (unique && u == prev))
				return bw_err(BURROW_E_FORMAT, "csr: row %lld: neighbors not %s at entry %lld",
					      (long long)v, unique ? "strictly increasing" : "sorted", (long long)j);
			prev = u;
		}
	}
	return 0;
}
