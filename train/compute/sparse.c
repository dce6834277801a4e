/* sparse.c: sparse copies (CSR and its transpose) of dense matrices that no longer change:
 * full-graph training's input features, whose first layer then multiplies only non-zeros. */
#include "compute.h"

#include <string.h>

int64_t bw_count_nonzero(const float *x, int64_t n, int threads)
{
	int64_t nnz = 0;
#pragma omp parallel for schedule(static) reduction(+ : nnz) num_threads(bw_threads(threads))
	for (int64_t i = 0; i < n; i++)
		nnz += x[i] != 0.0f;
	return nnz;
}

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

int bw_sparse_build(bw_sparse *s, const float *dense, int64_t rows, int64_t cols, int threads)
{
	memset(s, 0, sizeof *s);
	if (rows < 0 || cols < 0 || cols > INT32_MAX || rows > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "sparse: a [%lld, %lld] matrix exceeds int32 indices", (long long)rows,
			      (long long)cols);
	const int nt = bw_threads(threads);
	s->rows = rows;
	s->cols = cols;
	s->dense = dense;
	if (!(s->indptr = bw_malloc((size_t)(rows + 1) * sizeof *s->indptr)) ||
	    !(s->t_indptr = bw_malloc((size_t)(cols + 1) * sizeof *s->t_indptr)))
		goto nomem;
	s->indptr[0] = 0;
#pragma omp parallel for schedule(static) num_threads(nt)
	for (int64_t r = 0; r < rows; r++) {
		int64_t k = 0;
		for (int64_t c = 0; c < cols; c++)
			k += dense[r * cols + c] != 0.0f;
		s->indptr[r + 1] = k;
	}
	for (int64_t r = 0; r < rows; r++)
		s->indptr[r + 1] += s->indptr[r];
	s->nnz = s->indptr[rows];
	const size_t ne = (size_t)(s->nnz ? s->nnz : 1);
	if (!(s->indices = bw_malloc(ne * sizeof *s->indices)) || !(s->values = bw_malloc(ne * sizeof *s->values)) ||
	    !(s->t_indices = bw_malloc(ne * sizeof *s->t_indices)) || !(s->t_values = bw_malloc(ne * sizeof *s->t_values)))
		goto nomem;
#pragma omp parallel for schedule(static) num_threads(nt)
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
