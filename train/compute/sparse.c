/* sparse.c: copies of dense matrices that no longer change (full-graph training's input
 * features, a mini-batch's input rows): sparse (CSR and its transpose), whose first layer
 * then multiplies only non-zeros, and dense transposed, which the CPU's own GEMM reads along
 * the reduction. */
#include "tensor.h"

#include <string.h>

/* The loops go in chunks fixed by the shape, taken dynamically (bw_row_chunk): whole rows of
 * the dense matrix, or SPARSE_ROW_CHUNK rows of a CSR's (a few non-zeros each). */
#define SPARSE_ROW_CHUNK 1024

/* The loops below for the CPU they run on (BW_CLONES: static, so the clones' resolvers stay
 * out of the library's exported symbols). */
BW_CLONES static int64_t count_nonzero(const float *x, int64_t n, int nt)
{
	int64_t nnz = 0;
#pragma omp parallel for schedule(dynamic, BW_CHUNK_ELEMS) reduction(+ : nnz) num_threads(nt)
	for (int64_t i = 0; i < n; i++)
		nnz += x[i] != 0.0f;
	return nnz;
}

/* indptr[r + 1] = the non-zeros of row r */
BW_CLONES static void row_counts(const float *dense, int64_t rows, int64_t cols, int64_t *indptr, int nt)
{
#pragma omp parallel for schedule(dynamic, bw_row_chunk(cols)) num_threads(nt)
	for (int64_t r = 0; r < rows; r++) {
		int64_t k = 0;
		for (int64_t c = 0; c < cols; c++)
			k += dense[r * cols + c] != 0.0f;
		indptr[r + 1] = k;
	}
}

int64_t bw_count_nonzero(const float *x, int64_t n, int threads) { return count_nonzero(x, n, bw_threads(threads)); }

void bw_sparse_free(bw_sparse *s)
{
	bw_free(s->indptr);
	bw_free(s->indices);
	bw_free(s->values);
	bw_free(s->t_indptr);
	bw_free(s->t_indices);
	bw_free(s->t_values);
	memset(s, 0, sizeof *s);
}

/* The transpose by a counting sort over the rows in order, so each column lists its rows
 * ascending. */
static void transpose(bw_sparse *s)
{
	int64_t *pos = s->t_indptr + 1; /* pos[c]: the next free place of column c, during the fill */
	memset(s->t_indptr, 0, (size_t)(s->cols + 1) * sizeof *s->t_indptr);
	for (int64_t e = 0; e < s->nnz; e++)
		s->t_indptr[s->indices[e] + 1]++;
	for (int64_t c = 0; c < s->cols; c++)
		s->t_indptr[c + 1] += s->t_indptr[c];
	/* shift down one place so that pos[c] starts at column c's first slot */
	memmove(s->t_indptr + 1, s->t_indptr, (size_t)s->cols * sizeof *s->t_indptr);
	s->t_indptr[0] = 0;
	for (int64_t r = 0; r < s->rows; r++)
		for (int64_t e = s->indptr[r]; e < s->indptr[r + 1]; e++) {
			const int64_t at = pos[s->indices[e]]++;
			s->t_indices[at] = (int32_t)r;
			s->t_values[at] = s->values[e];
		}
}

/* The arrays' room for a [rows, cols] matrix with nnz non-zeros: an array too small is
 * replaced (its contents are rewritten anyway); a failure leaves the caller to free them all. */
static int room(bw_sparse *s, int64_t rows, int64_t cols, int64_t nnz)
{
#define GROW(p, n)                                                             \
	do {                                                                   \
		bw_free(p);                                                    \
		if (!((p) = bw_malloc((size_t)((n) > 0 ? (n) : 1) * sizeof *(p)))) \
			return BURROW_E_NOMEM;                                 \
	} while (0)
	if (s->cap_rows < rows + 1 || !s->indptr) {
		GROW(s->indptr, rows + 1);
		s->cap_rows = rows + 1;
	}
	if (s->cap_cols < cols + 1 || !s->t_indptr) {
		GROW(s->t_indptr, cols + 1);
		s->cap_cols = cols + 1;
	}
	if (nnz >= 0 && (s->cap_nnz < nnz || !s->indices)) {
		s->cap_nnz = 0;
		GROW(s->indices, nnz);
		GROW(s->values, nnz);
		GROW(s->t_indices, nnz);
		GROW(s->t_values, nnz);
		s->cap_nnz = nnz;
	}
	return 0;
#undef GROW
}

int bw_sparse_update(bw_sparse *s, const float *dense, int64_t rows, int64_t cols, int threads)
{
	if (rows < 0 || cols < 0 || cols > INT32_MAX || rows > INT32_MAX) {
		bw_sparse_free(s);
		return bw_err(BURROW_E_UNSUPPORTED, "sparse: a [%lld, %lld] matrix exceeds int32 indices", (long long)rows,
			      (long long)cols);
	}
	const int nt = bw_threads(threads);
	s->rows = rows;
	s->cols = cols;
	s->dense = dense;
	if (room(s, rows, cols, -1))
		goto nomem;
	s->indptr[0] = 0;
	row_counts(dense, rows, cols, s->indptr, nt);
	for (int64_t r = 0; r < rows; r++)
		s->indptr[r + 1] += s->indptr[r];
	s->nnz = s->indptr[rows];
	if (room(s, rows, cols, s->nnz))
		goto nomem;
#pragma omp parallel for schedule(dynamic, bw_row_chunk(cols)) num_threads(nt)
	for (int64_t r = 0; r < rows; r++) {
		int64_t k = s->indptr[r];
		for (int64_t c = 0; c < cols; c++) {
			const float v = dense[r * cols + c];
			if (v != 0.0f) {
				s->indices[k] = (int32_t)c;
				s->values[k++] = v;
			}
		}
	}
	transpose(s);
	return 0;
nomem:
	bw_sparse_free(s);
	return BURROW_E_NOMEM;
}

int bw_sparse_build(bw_sparse *s, const float *dense, int64_t rows, int64_t cols, int threads)
{
	memset(s, 0, sizeof *s);
	return bw_sparse_update(s, dense, rows, cols, threads);
}

int bw_sparse_append(bw_sparse *s, const float *dense, int64_t rows, int64_t cols, int threads)
{
	const int nt = bw_threads(threads);
	if (s->rows == 0 && !s->indptr)
		s->cols = cols;
	if (cols != s->cols || rows < 0 || s->rows + rows > INT32_MAX || cols > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "sparse: %lld rows of %lld columns after %lld of %lld", (long long)rows,
			      (long long)cols, (long long)s->rows, (long long)s->cols);
	int64_t *ip = bw_realloc(s->indptr, (size_t)(s->rows + rows + 1) * sizeof *ip);
	if (!ip)
		return BURROW_E_NOMEM;
	s->indptr = ip;
	ip += s->rows; /* this run's rows: ip[0] is where they start */
	if (s->rows == 0)
		ip[0] = 0;
	row_counts(dense, rows, cols, ip, nt);
	for (int64_t r = 0; r < rows; r++)
		ip[r + 1] += ip[r];
	const int64_t nnz = ip[rows];
	int32_t *ix = bw_realloc(s->indices, (size_t)(nnz ? nnz : 1) * sizeof *ix);
	if (ix)
		s->indices = ix;
	float *vs = ix ? bw_realloc(s->values, (size_t)(nnz ? nnz : 1) * sizeof *vs) : NULL;
	if (!vs)
		return BURROW_E_NOMEM;
	s->values = vs;
#pragma omp parallel for schedule(dynamic, bw_row_chunk(cols)) num_threads(nt)
	for (int64_t r = 0; r < rows; r++) {
		int64_t k = ip[r];
		for (int64_t c = 0; c < cols; c++) {
			const float v = dense[r * cols + c];
			if (v != 0.0f) {
				ix[k] = (int32_t)c;
				vs[k++] = v;
			}
		}
	}
	s->rows += rows;
	s->nnz = nnz;
	s->cap_rows = s->rows + 1;
	s->cap_nnz = nnz;
	return 0;
}

int bw_sparse_gather(bw_sparse *s, const bw_sparse *src, const int64_t *ids, int64_t n, const float *dense,
		     int threads)
{
	const int64_t cols = src->cols;
	const int nt = bw_threads(threads);
	s->rows = n;
	s->cols = cols;
	s->dense = dense;
	if (room(s, n, cols, -1))
		goto nomem;
	s->indptr[0] = 0;
	for (int64_t r = 0; r < n; r++)
		s->indptr[r + 1] = s->indptr[r] + (src->indptr[ids[r] + 1] - src->indptr[ids[r]]);
	s->nnz = s->indptr[n];
	if (room(s, n, cols, s->nnz))
		goto nomem;
#pragma omp parallel for schedule(dynamic, SPARSE_ROW_CHUNK) num_threads(nt)
	for (int64_t r = 0; r < n; r++) {
		const int64_t from = src->indptr[ids[r]], k = s->indptr[r], len = s->indptr[r + 1] - k;
		memcpy(s->indices + k, src->indices + from, (size_t)len * sizeof *s->indices);
		memcpy(s->values + k, src->values + from, (size_t)len * sizeof *s->values);
	}
	transpose(s);
	return 0;
nomem:
	bw_sparse_free(s);
	return BURROW_E_NOMEM;
}

int bw_transposed_build(bw_transposed *x, const float *dense, int64_t rows, int64_t cols, int threads)
{
	enum { B = 64 }; /* B x B blocks: both sides read and written a cache line at a time */
	memset(x, 0, sizeof *x);
	if (!(x->t = bw_malloc((size_t)(rows * cols > 0 ? rows * cols : 1) * sizeof *x->t)))
		return BURROW_E_NOMEM;
	x->dense = dense;
	x->rows = rows;
	x->cols = cols;
	const int64_t rb = (rows + B - 1) / B, cb = (cols + B - 1) / B;
#pragma omp parallel for schedule(dynamic, 1) num_threads(bw_threads(threads))
	for (int64_t blk = 0; blk < rb * cb; blk++) {
		const int64_t r0 = blk / cb * B, c0 = blk % cb * B;
		const int64_t r1 = BW_MIN(r0 + B, rows), c1 = BW_MIN(c0 + B, cols);
		for (int64_t c = c0; c < c1; c++)
			for (int64_t r = r0; r < r1; r++)
				x->t[c * rows + r] = dense[r * cols + c];
	}
	return 0;
}

void bw_transposed_free(bw_transposed *x)
{
	bw_free(x->t);
	memset(x, 0, sizeof *x);
}
