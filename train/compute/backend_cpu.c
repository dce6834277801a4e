/* backend_cpu.c: the CPU backend on the CPU device (device/device_cpu.c): its kernels
 * (GEMM through single-threaded OpenBLAS calls split
 * over the OpenMP threads, CSR aggregation and elementwise kernels with OpenMP) and its
 * registry entry, which sets the OpenMP threads and holds OpenBLAS at one. The only file
 * that calls the BLAS. Every kernel's work goes in chunks fixed by the shape and taken by
 * the threads dynamically, so every result has the same bits at any thread count. It is the
 * reference the CUDA backend must match. */
#include "backend_impl.h"
#include "gemm_own.h"
#include "rowwise.h"

#include <cblas.h>
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ kernels */

/* Every kernel's work goes in chunks whose bounds depend on the shape alone, never on the
 * thread count, and the threads take them dynamically: a sum never crosses a chunk, or
 * crosses them in chunk order, so the bits are the same at any thread count, and a thread
 * on a core that another process shares takes fewer chunks instead of holding the region
 * back (issue 35 item 7). Elementwise work goes by ELEM_CHUNK elements, row-wise work by
 * row_chunk's whole rows of about as many elements. A region of one chunk forks nothing. */
#define ELEM_CHUNK BW_CHUNK_ELEMS /* core/internal.h, shared with the driver's loops */

/* The threads for nc chunks of work: no more than there are chunks. */
static inline int chunk_threads(const bw_backend *be, int64_t nc)
{
	return (int)BW_MAX((int64_t)1, BW_MIN((int64_t)be->threads, nc));
}
static inline int elem_threads(const bw_backend *be, int64_t n)
{
	return chunk_threads(be, (n + ELEM_CHUNK - 1) / ELEM_CHUNK);
}
static inline int64_t row_chunk(int64_t cols) { return bw_row_chunk(cols); }
static inline int row_threads(const bw_backend *be, int64_t rows, int64_t cols)
{
	return chunk_threads(be, (rows + row_chunk(cols) - 1) / row_chunk(cols));
}

/* Column-wise work (column statistics, whose sums in double over the rows in order stay on
 * the stack, and scatters into rows read at random) goes by groups of COL_GROUP columns,
 * taken dynamically. Group q: columns [q * COL_GROUP, ...). */
#define COL_GROUP 16
static inline int64_t col_groups(int64_t cols) { return (cols + COL_GROUP - 1) / COL_GROUP; }

/* One thread pool: OpenBLAS runs single-threaded (cpu_init) and the GEMM is split here over
 * the backend's OpenMP threads, each chunk one sequential cblas_sgemm on a block of C's rows
 * (or of its columns when C is wide), so BLAS never brings its own pthreads to compete
 * with the OpenMP team and the pipeline's threads. The chunks are a function of the shape
 * alone (gemm_chunk), never of the threads, and taken dynamically: each is the same call
 * whichever thread makes it, so the bits do not depend on the thread count, and a thread on
 * a core shared with another process takes fewer of them. No chunk splits k, so no partial
 * sums are added across chunks. Below GEMM_SPLIT_FLOPS the product is one call: the fork
 * costs more than it saves. */
#define GEMM_SPLIT_FLOPS (1 << 20)
#define GEMM_SPLIT_ALIGN 16
#define GEMM_CHUNKS 16 /* at most, so that each chunk's call is long beside its packing of b */

/* The rows (columns) of C in each chunk of a product split along len rows (columns), each
 * row one `row_flops` long: len / GEMM_CHUNKS rounded up to whole GEMM_SPLIT_ALIGN blocks,
 * and no chunk under GEMM_SPLIT_FLOPS; len itself when the product is one call. The last
 * chunk takes the remainder too (cpu_gemm), so that no chunk is smaller: OpenBLAS's
 * small-matrix path (M N K <= 100^3) rounds otherwise than its blocked one, which every
 * product of GEMM_SPLIT_FLOPS or more takes whole. */
static int64_t gemm_chunk(int64_t len, double row_flops)
{
	if ((double)len * row_flops < GEMM_SPLIT_FLOPS)
		return len;
	const int64_t by_count = (len + GEMM_CHUNKS - 1) / GEMM_CHUNKS;
	const int64_t by_flops = (int64_t)ceil(GEMM_SPLIT_FLOPS / row_flops);
	const int64_t c = (BW_MAX(by_count, by_flops) + GEMM_SPLIT_ALIGN - 1) / GEMM_SPLIT_ALIGN * GEMM_SPLIT_ALIGN;
	return BW_MIN(c, len);
}

/* The backend's state (be->ctx): whether its own GEMM runs (gemm_avx512.c), and that GEMM's
 * packed b, grown as needed and kept, so that a training step's products fault no pages in.
 * One caller at a time, as every backend. */
typedef struct cpu_ctx {
	bool own_gemm;
	float *scratch;
	size_t scratch_bytes;
} cpu_ctx;

static void gemm_slice(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
		       const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
		    (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

/* Does cpu_gemm run its own kernel (gemm_avx512.c) for this product? */
static bool uses_own(const cpu_ctx *x, bool ta, bool tb, int64_t m, int64_t n, int64_t k)
{
	return x->own_gemm && !ta && !tb && bw_gemm_own_fits(m, n, k);
}

/* The own GEMM (gemm_avx512.c) into the context's scratch, grown to its need. */
static int own_gemm(const bw_backend *be, int64_t m, int64_t n, int64_t k, float alpha, const bw_gemm_a *op,
		    const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	cpu_ctx *x = be->ctx;
	const size_t need = bw_gemm_own_scratch(n, k);
	if (need > x->scratch_bytes) {
		bw_aligned_free(x->scratch);
		x->scratch_bytes = 0;
		if (!(x->scratch = bw_aligned_alloc(64, need)))
			return BURROW_E_NOMEM;
		x->scratch_bytes = need;
	}
	return bw_gemm_own_op(be->gemm_threads, m, n, k, alpha, op, b, ldb, beta, c, ldc, x->scratch);
}

static int cpu_gemm(const bw_backend *be, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
		    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	if (m == 0 || n == 0)
		return 0;
	if (k == 0) {
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
		return 0;
	}
	cpu_ctx *x = be->ctx;
	if (uses_own(x, ta, tb, m, n, k)) {
		const bw_gemm_a op = {.a = a, .lda = lda, .split = k};
		return own_gemm(be, m, n, k, alpha, &op, b, ldb, beta, c, ldc);
	}
	const bool by_rows = m >= n;
	const int64_t len = by_rows ? m : n, per = gemm_chunk(len, (double)(by_rows ? n : m) * (double)k);
	const int64_t nc = len / per;
#pragma omp parallel for schedule(dynamic, 1) num_threads((int)BW_MIN((int64_t)be->gemm_threads, nc))
	for (int64_t q = 0; q < nc; q++) {
		const int64_t lo = q * per, cnt = q == nc - 1 ? len - lo : per;
		if (by_rows) /* rows lo.. of op(A) and C */
			gemm_slice(ta, tb, cnt, n, k, alpha, ta ? a + lo : a + lo * lda, lda, b, ldb, beta, c + lo * ldc,
				   ldc);
		else /* columns lo.. of op(B) and C */
			gemm_slice(ta, tb, m, cnt, k, alpha, a, lda, tb ? b + lo * ldb : b + lo, ldb, beta, c + lo, ldc);
	}
	return 0;
}

/* [a | a2] b, or [a | a2]^T b (bw_ops.gemm_cat): one product by the own GEMM where the
 * shape suits it, else two cpu_gemm in bw_matmul_cat's fallback order (the second piece's
 * first), so that the products OpenBLAS does keep their bits. */
static int cpu_gemm_cat(const bw_backend *be, bool ta, int64_t m, int64_t n, int64_t k, int64_t split, float alpha,
			const float *a, int64_t lda, const float *a2, int64_t lda2, const float *b, int64_t ldb,
			float beta, float *c, int64_t ldc)
{
	const cpu_ctx *x = be->ctx;
	int st;
	if (x->own_gemm && m > 0 && n > 0 && k > 0 && bw_gemm_own_fits(m, n, k)) {
		const bw_gemm_a op = {.a = a, .lda = lda, .a2 = a2, .lda2 = lda2, .split = split, .trans = ta};
		return own_gemm(be, m, n, k, alpha, &op, b, ldb, beta, c, ldc);
	}
	if (ta) {
		if ((st = cpu_gemm(be, true, false, m - split, n, k, alpha, a2, lda2, b, ldb, beta, c + split * ldc, ldc)))
			return st;
		return cpu_gemm(be, true, false, split, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
	}
	if ((st = cpu_gemm(be, false, false, m, n, k - split, alpha, a2, lda2, b + split * ldb, ldb, beta, c, ldc)))
		return st;
	return cpu_gemm(be, false, false, m, n, split, alpha, a, lda, b, ldb, 1.0f, c, ldc);
}

/* Sparse a (its first `rows` rows): row i of c = beta c_i + the sum over row i's entries
 * (j, v) of op(a) of (alpha v) b_j, in entry order; threads take whole rows of c (op(a)'s
 * rows: a's, or its transpose's when ta), so no two write one row and the sums do not depend
 * on them. A transpose's column lists its rows ascending: it stops at the first past `rows`. */
BW_CLONES static int cpu_spmm(const bw_backend *be, const bw_sparse *a, int64_t rows, bool ta, int64_t n, float alpha,
			      const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	const int64_t m = ta ? a->cols : rows;
	const int64_t *ip = ta ? a->t_indptr : a->indptr;
	const int32_t *ix = ta ? a->t_indices : a->indices;
	const float *vs = ta ? a->t_values : a->values;
	const int nt = (double)a->nnz * (double)n < GEMM_SPLIT_FLOPS ? 1 : be->threads;
#pragma omp parallel for schedule(dynamic, 16) num_threads(nt)
	for (int64_t i = 0; i < m; i++) {
		float *ci = c + i * ldc;
		if (beta == 0.0f) {
			memset(ci, 0, (size_t)n * sizeof *ci);
		} else if (beta != 1.0f) {
#pragma omp simd
			for (int64_t q = 0; q < n; q++)
				ci[q] *= beta;
		}
		for (int64_t e = ip[i]; e < ip[i + 1] && (!ta || ix[e] < rows); e++) {
			const float v = alpha * vs[e];
			const float *bj = b + (int64_t)ix[e] * ldb;
#pragma omp simd
			for (int64_t q = 0; q < n; q++)
				ci[q] += v * bj[q];
		}
	}
	return 0;
}

/* The aggregations gather rows of x at random (a mini-batch's first layer: ~65k rows of
 * 15 sources each from ~400k input rows, 200 MB), so each waits on memory unless the rows
 * a few edges ahead are already on their way: prefetch the row of edge e + AGG_AHEAD, in
 * the flat edge list the loop walks (bounded by `end`, the list's last edge of the loop).
 * A hint only: the sums and their order are unchanged. */
#define AGG_AHEAD 8

static inline void prefetch_row(const float *x, int64_t dim, const int32_t *ix, int64_t e, int64_t end)
{
	if (e + AGG_AHEAD >= end)
		return;
	const char *p = (const char *)(x + (int64_t)ix[e + AGG_AHEAD] * dim);
	for (int64_t c = 0; c < dim * (int64_t)sizeof(float); c += 64)
		__builtin_prefetch(p + c);
}

/* Rows [r0, r1) over the part's edges; whole rows that overwrite sum first and scale once
 * (MEAN), a part or an addition scales each term as the whole row would. */
BW_CLONES static int cpu_agg_fwd(const bw_backend *be, const bw_block *b, bw_block_part part, bw_agg mode, const float *x,
		       int64_t dim, int64_t r0, int64_t r1, bool add, float *out)
{
	const bw_block_dev *d = &b->d;
	const int64_t *ip = d->indptr, *pp = d->part_indptr[part];
	const int32_t *ix = d->part_indices[part];
	const bool whole = part == BW_PART_ALL && !add;
	const int64_t end = r1 > r0 ? pp[r1] : 0;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t i = r0; i < r1; i++) {
		const int64_t e0 = pp[i], e1 = pp[i + 1];
		float *o = out + i * dim;
		if (mode == BW_AGG_GCN) {
			const float di = d->dst_norm[i];
			if (!add) {
				const float self = di * d->src_norm[i];
				const float *xi = x + i * dim;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] = self * xi[c];
			}
			for (int64_t e = e0; e < e1; e++) {
				prefetch_row(x, dim, ix, e, end);
				const float w = di * d->src_norm[ix[e]];
				const float *xj = x + (int64_t)ix[e] * dim;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] += w * xj[c];
			}
			continue;
		}
		const int64_t deg = ip[i + 1] - ip[i];
		if (whole) {
			memset(o, 0, (size_t)dim * sizeof *o);
			for (int64_t e = e0; e < e1; e++) {
				prefetch_row(x, dim, ix, e, end);
				const float *xj = x + (int64_t)ix[e] * dim;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] += xj[c];
			}
			if (mode == BW_AGG_MEAN && deg > 1) {
				const float s = 1.0f / (float)deg;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] *= s;
			}
			continue;
		}
		/* part of the row: each term scaled as the whole row scales it */
		const float s = mode == BW_AGG_MEAN && deg > 1 ? 1.0f / (float)deg : 1.0f;
		if (!add)
			memset(o, 0, (size_t)dim * sizeof *o);
		for (int64_t e = e0; e < e1; e++) {
			prefetch_row(x, dim, ix, e, end);
			const float *xj = x + (int64_t)ix[e] * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] += s * xj[c];
		}
	}
	return 0;
}

/* The transpose walk: source j gathers from the destination rows that read it. */
BW_CLONES static int cpu_agg_bwd(const bw_backend *be, const bw_block *b, bw_agg mode, const float *gout, int64_t dim,
		       int64_t j0, int64_t j1, float *gx)
{
	const bw_block_dev *d = &b->d;
	const int64_t *ip = d->indptr, *tp = d->t_indptr;
	const int32_t *ti = d->t_indices;
	const int64_t nd = b->num_dst, end = j1 > j0 ? tp[j1] : 0;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t j = j0; j < j1; j++) {
		float *o = gx + j * dim;
		memset(o, 0, (size_t)dim * sizeof *o);
		if (mode == BW_AGG_GCN && j < nd) {
			const float self = d->dst_norm[j] * d->src_norm[j];
			const float *g = gout + j * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] = self * g[c];
		}
		for (int64_t e = tp[j]; e < tp[j + 1]; e++) {
			prefetch_row(gout, dim, ti, e, end);
			const int64_t i = ti[e];
			float w = 1.0f;
			if (mode == BW_AGG_MEAN)
				w = 1.0f / (float)(ip[i + 1] - ip[i]);
			else if (mode == BW_AGG_GCN)
				w = d->dst_norm[i] * d->src_norm[j];
			const float *g = gout + i * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] += w * g[c];
		}
	}
	return 0;
}

/* Weighted aggregation (bw_ops.agg_w_fwd): row i's terms scaled by their edges' weights. */
BW_CLONES static int cpu_agg_w_fwd(const bw_backend *be, const bw_block *b, bw_agg mode, const float *x, int64_t dim,
				   int64_t r0, int64_t r1, float *out)
{
	const bw_block_dev *d = &b->d;
	const int64_t *ip = d->indptr;
	const int32_t *ix = d->indices;
	const float *w = d->edge_weight;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t i = r0; i < r1; i++) {
		const int64_t e0 = ip[i], e1 = ip[i + 1];
		float *o = out + i * dim;
		const float di = mode == BW_AGG_GCN ? d->dst_norm[i] : 1.0f;
		const float s = mode == BW_AGG_MEAN && e1 - e0 > 1 ? 1.0f / (float)(e1 - e0) : 1.0f;
		memset(o, 0, (size_t)dim * sizeof *o);
		if (mode == BW_AGG_GCN) {
			const float self = di * d->src_norm[i];
			const float *xi = x + i * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] = self * xi[c];
		}
		for (int64_t e = e0; e < e1; e++) {
			const float we = mode == BW_AGG_GCN ? di * w[e] * d->src_norm[ix[e]] : s * w[e];
			const float *xj = x + (int64_t)ix[e] * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] += we * xj[c];
		}
	}
	return 0;
}

/* Its transpose: source j gathers w_e times the factor of each row i that reads it. */
BW_CLONES static int cpu_agg_w_bwd(const bw_backend *be, const bw_block *b, bw_agg mode, const float *gout,
				   int64_t dim, int64_t j0, int64_t j1, float *gx)
{
	const bw_block_dev *d = &b->d;
	const int64_t *ip = d->indptr, *tp = d->t_indptr;
	const int32_t *ti = d->t_indices;
	const float *tw = d->t_weight;
	const int64_t nd = b->num_dst;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t j = j0; j < j1; j++) {
		float *o = gx + j * dim;
		memset(o, 0, (size_t)dim * sizeof *o);
		if (mode == BW_AGG_GCN && j < nd) {
			const float self = d->dst_norm[j] * d->src_norm[j];
			const float *g = gout + j * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] = self * g[c];
		}
		for (int64_t e = tp[j]; e < tp[j + 1]; e++) {
			const int64_t i = ti[e], deg = ip[i + 1] - ip[i];
			float we = tw[e];
			if (mode == BW_AGG_MEAN && deg > 1)
				we *= 1.0f / (float)deg;
			else if (mode == BW_AGG_GCN)
				we = d->dst_norm[i] * tw[e] * d->src_norm[j];
			const float *g = gout + i * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] += we * g[c];
		}
	}
	return 0;
}

BW_CLONES static int cpu_bias_add(const bw_backend *be, float *y, int64_t rows, int64_t cols, const float *bias)
{
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
	for (int64_t r = 0; r < rows; r++)
#pragma omp simd
		for (int64_t c = 0; c < cols; c++)
			y[r * cols + c] += bias[c];
	return 0;
}

/* out[c] = the sum over rows of g[r, c], in double: each block of COL_SUM_ROWS rows summed in
 * row order, then the blocks' sums in block order. The order depends on the shape only, never
 * on the threads, and the threads share the blocks whatever the width (a 7-column output
 * is one 16-column group: split by columns, one thread did it all while the other waited). */
#define COL_SUM_ROWS 256
#define COL_SUM_STACK 8192 /* doubles of block sums kept on the stack (64 KiB); more: the heap */

BW_CLONES static int cpu_col_sum(const bw_backend *be, const float *g, int64_t rows, int64_t cols, float *out)
{
	const int64_t nb = (rows + COL_SUM_ROWS - 1) / COL_SUM_ROWS;
	double stack[COL_SUM_STACK];
	double *part = nb * cols <= COL_SUM_STACK ? stack : bw_malloc((size_t)(nb * cols) * sizeof *part);
	if (!part)
		return BURROW_E_NOMEM;
	const int nt = (double)rows * (double)cols < GEMM_SPLIT_FLOPS / 4 ? 1 : be->threads;
#pragma omp parallel num_threads(nt)
	{
#pragma omp for schedule(dynamic, 1)
		for (int64_t b = 0; b < nb; b++) {
			double *p = part + b * cols;
			const int64_t r1 = BW_MIN(rows, (b + 1) * COL_SUM_ROWS);
			for (int64_t c = 0; c < cols; c++)
				p[c] = 0.0;
			for (int64_t r = b * COL_SUM_ROWS; r < r1; r++) {
				const float *gr = g + r * cols;
#pragma omp simd
				for (int64_t c = 0; c < cols; c++)
					p[c] += (double)gr[c];
			}
		}
#pragma omp for schedule(dynamic, COL_GROUP)
		for (int64_t c = 0; c < cols; c++) {
			double acc = 0.0;
			for (int64_t b = 0; b < nb; b++)
				acc += part[b * cols + c];
			out[c] = (float)acc;
		}
	}
	if (part != stack)
		bw_free(part);
	return 0;
}

BW_CLONES static int cpu_relu_fwd(const bw_backend *be, float *x, int64_t n)
{
#pragma omp parallel for simd schedule(dynamic, ELEM_CHUNK) num_threads(elem_threads(be, n))
	for (int64_t i = 0; i < n; i++)
		x[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes through, as in PyTorch: a NaN must reach the loss */
	return 0;
}

BW_CLONES static int cpu_relu_bwd(const bw_backend *be, float *g, const float *y, int64_t n)
{
#pragma omp parallel for simd schedule(dynamic, ELEM_CHUNK) num_threads(elem_threads(be, n))
	for (int64_t i = 0; i < n; i++)
		g[i] = y[i] > 0.0f ? g[i] : 0.0f;
	return 0;
}

/* x[i] = mask[i] ? x[i] * scale : +0.0f without a branch: the mask is random, so a branch
 * mispredicts half the time (it was a third of a small full-graph epoch). The product's bits
 * ANDed with all ones or all zeros give the same floats as the branch, +0.0f included. */
static inline void keep_scaled(float *x, const uint8_t *mask, int64_t n, float scale)
{
#pragma omp simd
	for (int64_t i = 0; i < n; i++) {
		const float v = x[i] * scale;
		uint32_t b;
		memcpy(&b, &v, sizeof b);
		b &= 0u - (uint32_t)(mask[i] != 0);
		memcpy(&x[i], &b, sizeof b);
	}
}

/* Each 64-bit draw decides two elements: keep when a 32-bit half is >= p * 2^32. */
BW_CLONES static int cpu_dropout_fwd(const bw_backend *be, float *x, uint8_t *mask, int64_t rows, int64_t cols, float p,
			    uint64_t key)
{
	const float scale = 1.0f / (1.0f - p);
	const uint64_t thresh = (uint64_t)llround((double)p * 4294967296.0);
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
	for (int64_t r = 0; r < rows; r++) {
		bw_dropout_mask_row(mask + r * cols, cols, key, r, thresh);
		keep_scaled(x + r * cols, mask + r * cols, cols, scale);
	}
	return 0;
}

BW_CLONES static int cpu_dropout_bwd(const bw_backend *be, float *g, const uint8_t *mask, int64_t n, float p)
{
	const float scale = 1.0f / (1.0f - p);
	const int64_t piece = 4096;
#pragma omp parallel for schedule(dynamic, ELEM_CHUNK / piece) num_threads(elem_threads(be, n))
	for (int64_t i = 0; i < n; i += piece)
		keep_scaled(g + i, mask + i, BW_MIN(piece, n - i), scale);
	return 0;
}

BW_CLONES static int cpu_axpy(const bw_backend *be, int64_t n, float alpha, const float *x, float *y)
{
#pragma omp parallel for simd schedule(dynamic, ELEM_CHUNK) num_threads(elem_threads(be, n))
	for (int64_t i = 0; i < n; i++)
		y[i] += alpha * x[i];
	return 0;
}

BW_CLONES static int cpu_gather_rows(const bw_backend *be, const float *x, int64_t dim, const int64_t *idx, int64_t n,
			   float *out)
{
#pragma omp parallel for schedule(dynamic, row_chunk(dim)) num_threads(row_threads(be, n, dim))
	for (int64_t k = 0; k < n; k++)
		memcpy(out + k * dim, x + idx[k] * dim, (size_t)dim * sizeof(float));
	return 0;
}

BW_CLONES static int cpu_scatter_add_rows(const bw_backend *be, const float *in, int64_t dim, const int64_t *idx, int64_t n,
				float *x)
{
#pragma omp parallel for schedule(dynamic, row_chunk(dim)) num_threads(row_threads(be, n, dim))
	for (int64_t k = 0; k < n; k++) {
		float *dst = x + idx[k] * dim;
		const float *src = in + k * dim;
		for (int64_t c = 0; c < dim; c++)
			dst[c] += src[c];
	}
	return 0;
}

static int cpu_scale(const bw_backend *be, int64_t n, float alpha, float *x)
{
	(void)be;
	cblas_sscal((blasint)n, alpha, x, 1);
	return 0;
}

/* A serial pass validates the selection and counts the labelled rows (the mean's
 * denominator); then the rows' terms and gradients in parallel, by chunks of LOSS_CHUNK
 * selected rows: each chunk's terms summed in row order into its own partial, the partials
 * added in chunk order, so the loss has the same bits at any thread count (and a selection
 * of one chunk, every training batch of up to 4096 seeds, sums as one thread always did). */
#define LOSS_CHUNK 4096
#define LOSS_STACK 1024 /* chunk partials kept on the stack; more: the heap */
static int cpu_nll_loss(const bw_backend *be, const float *logits, int64_t rows, int64_t classes,
			const int32_t *labels, const int64_t *sel, int64_t nsel, float *grad, bw_loss *out)
{
	const int64_t n = sel ? nsel : rows;
	int64_t cnt = 0, ok = 0;
	memset(out, 0, sizeof *out);
	out->rows = rows;
	out->classes = classes;
	if (grad)
		memset(grad, 0, (size_t)(rows * classes) * sizeof *grad);
	for (int64_t k = 0; k < n; k++) {
		const int64_t r = sel ? sel[k] : k;
		if (r < 0 || r >= rows || labels[r] >= classes) {
			if (!out->bad++) {
				out->bad_is_row = r < 0 || r >= rows;
				out->bad_row = out->bad_is_row ? k : r;
				out->bad_value = out->bad_is_row ? r : labels[r];
			}
			continue;
		}
		cnt += labels[r] >= 0;
	}
	if (out->bad)
		return 0;
	const double inv = cnt ? 1.0 / (double)cnt : 0.0;
	const int64_t nc = (n + LOSS_CHUNK - 1) / LOSS_CHUNK;
	double stack[LOSS_STACK];
	double *part = nc <= LOSS_STACK ? stack : bw_malloc((size_t)nc * sizeof *part);
	if (!part)
		return BURROW_E_NOMEM;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : ok) num_threads(chunk_threads(be, nc))
	for (int64_t q = 0; q < nc; q++) {
		double s = 0.0;
		for (int64_t k = q * LOSS_CHUNK; k < BW_MIN(n, (q + 1) * LOSS_CHUNK); k++) {
			const int64_t r = sel ? sel[k] : k;
			const int32_t y = labels[r];
			if (y < 0)
				continue;
			bool hit;
			s += bw_xent_row(logits + r * classes, classes, y, inv, grad ? grad + r * classes : NULL, &hit);
			ok += hit;
		}
		part[q] = s;
	}
	double sum = 0.0;
	for (int64_t q = 0; q < nc; q++)
		sum += part[q];
	if (part != stack)
		bw_free(part);
	out->counted = cnt;
	out->correct = ok;
	out->loss = sum * inv;
	return 0;
}

static int cpu_argmax(const bw_backend *be, const float *x, int64_t rows, int64_t cols, int32_t *out)
{
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
	for (int64_t r = 0; r < rows; r++)
		out[r] = bw_row_argmax(x + r * cols, cols);
	return 0;
}

/* One weight of Adam; `decoupled` a constant at each call, so that each loop below is
 * branch-free and vectorizes (a test inside the loop kept it scalar: sqrt and division one
 * float at a time). */
static inline void adam_one(float *p, const float *g, float *m, float *v, int64_t i, bool decoupled, float wd, float b1,
			    float b2, float step_size, float rbc2, float eps, float decay)
{
	const float gi = decoupled ? g[i] : g[i] + wd * p[i];
	m[i] = b1 * m[i] + (1.0f - b1) * gi;
	v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
	p[i] = p[i] * decay - step_size * m[i] / (sqrtf(v[i]) * rbc2 + eps);
}

/* PyTorch's Adam (weight decay added to the gradient) or AdamW (decoupled). */
BW_CLONES static int cpu_adam(const bw_backend *be, float *p, const float *g, float *m, float *v, int64_t n,
		     const bw_adam_args *a)
{
	const double bc1 = 1.0 - pow(a->beta1, (double)a->step), bc2 = 1.0 - pow(a->beta2, (double)a->step);
	const float step_size = (float)(a->lr / bc1), rbc2 = (float)(1.0 / sqrt(bc2));
	const float b1 = a->beta1, b2 = a->beta2, wd = a->weight_decay, eps = a->eps;
	const float decay = a->decoupled ? 1.0f - a->lr * wd : 1.0f;
	if (a->decoupled) {
#pragma omp parallel for simd schedule(dynamic, ELEM_CHUNK) num_threads(elem_threads(be, n))
		for (int64_t i = 0; i < n; i++)
			adam_one(p, g, m, v, i, true, wd, b1, b2, step_size, rbc2, eps, decay);
	} else {
#pragma omp parallel for simd schedule(dynamic, ELEM_CHUNK) num_threads(elem_threads(be, n))
		for (int64_t i = 0; i < n; i++)
			adam_one(p, g, m, v, i, false, wd, b1, b2, step_size, rbc2, eps, decay);
	}
	return 0;
}

BW_CLONES static int cpu_sgd(const bw_backend *be, float *p, const float *g, float *mom, int64_t n, float lr, float momentum,
		    float weight_decay)
{
	if (mom) {
#pragma omp parallel for simd schedule(dynamic, ELEM_CHUNK) num_threads(elem_threads(be, n))
		for (int64_t i = 0; i < n; i++) {
			mom[i] = momentum * mom[i] + (g[i] + weight_decay * p[i]);
			p[i] -= lr * mom[i];
		}
	} else {
#pragma omp parallel for simd schedule(dynamic, ELEM_CHUNK) num_threads(elem_threads(be, n))
		for (int64_t i = 0; i < n; i++)
			p[i] -= lr * (g[i] + weight_decay * p[i]);
	}
	return 0;
}

/* ------------------------------------------------------------ the max aggregator and GAT */

/* Scatters (gx[j] += ... over a row's sources) go by column groups (COL_GROUP columns,
 * 64 bytes: no two threads write one cache line), taken dynamically, each walking the rows
 * in order: no two threads write one element, and every element's additions come in row
 * order whatever the thread count (so at one thread in the order they always came). */
static int cpu_seg_max_fwd(const bw_backend *be, const bw_block *b, const float *x, int64_t dim, float *out,
			   int32_t *arg)
{
	const int64_t *ip = b->d.indptr;
	const int32_t *ix = b->d.indices;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t i = 0; i < b->num_dst; i++) {
		float *o = out + i * dim;
		int32_t *a = arg + i * dim;
		if (ip[i] == ip[i + 1]) {
			for (int64_t c = 0; c < dim; c++) {
				o[c] = 0.0f;
				a[c] = -1;
			}
			continue;
		}
		const int32_t j0 = ix[ip[i]];
		for (int64_t c = 0; c < dim; c++) {
			o[c] = x[(int64_t)j0 * dim + c];
			a[c] = j0;
		}
		for (int64_t e = ip[i] + 1; e < ip[i + 1]; e++) {
			const int32_t j = ix[e];
			const float *xj = x + (int64_t)j * dim;
			for (int64_t c = 0; c < dim; c++)
				if (xj[c] > o[c]) {
					o[c] = xj[c];
					a[c] = j;
				}
		}
	}
	return 0;
}

static int cpu_seg_max_bwd(const bw_backend *be, int64_t num_dst, int64_t num_src, const float *gout,
			   const int32_t *arg, int64_t dim, float *gx)
{
	memset(gx, 0, (size_t)(num_src * dim) * sizeof *gx);
#pragma omp parallel for schedule(dynamic, 1) num_threads(chunk_threads(be, col_groups(dim)))
	for (int64_t q = 0; q < col_groups(dim); q++) {
		const int64_t c0 = q * COL_GROUP, c1 = BW_MIN(dim, c0 + COL_GROUP);
		for (int64_t i = 0; i < num_dst; i++)
			for (int64_t c = c0; c < c1; c++) {
				const int32_t j = arg[i * dim + c];
				if (j >= 0)
					gx[(int64_t)j * dim + c] += gout[i * dim + c];
			}
	}
	return 0;
}

static int cpu_head_dot(const bw_backend *be, const float *x, int64_t rows, int64_t heads, int64_t f_dim,
			const float *a, float *out)
{
#pragma omp parallel for schedule(dynamic, row_chunk(heads * f_dim)) num_threads(row_threads(be, rows, heads * f_dim))
	for (int64_t r = 0; r < rows; r++)
		for (int64_t k = 0; k < heads; k++) {
			const float *xr = x + (r * heads + k) * f_dim, *ak = a + k * f_dim;
			float s = 0.0f;
#pragma omp simd reduction(+ : s)
			for (int64_t f = 0; f < f_dim; f++)
				s += xr[f] * ak[f];
			out[r * heads + k] = s;
		}
	return 0;
}

/* out[c] = the sum over rows r, in order and in double, of a[r * lda + c / div] * b[r * cols + c],
 * by column groups: column dot products (lda = cols, div 1) and, with a [rows, heads]
 * and div = the head's width, a per-head weight against each of its columns. */
static void col_dot_groups(const bw_backend *be, const float *a, int64_t lda, int64_t div, const float *b,
			   int64_t rows, int64_t cols, float *out)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(chunk_threads(be, col_groups(cols)))
	for (int64_t q = 0; q < col_groups(cols); q++) {
		const int64_t c0 = q * COL_GROUP, c1 = BW_MIN(cols, c0 + COL_GROUP);
		int64_t ac[COL_GROUP]; /* a's column for each of the group's */
		for (int64_t c = c0; c < c1; c++)
			ac[c - c0] = c / div;
		double acc[COL_GROUP] = {0};
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++)
				acc[c - c0] += (double)a[r * lda + ac[c - c0]] * b[r * cols + c];
		for (int64_t c = c0; c < c1; c++)
			out[c] = (float)acc[c - c0];
	}
}

/* gx by rows; ga by column groups */
static int cpu_head_dot_bwd(const bw_backend *be, const float *x, int64_t rows, int64_t heads, int64_t f_dim,
			    const float *a, const float *g, float *gx, float *ga)
{
	const int64_t cols = heads * f_dim;
	if (gx) {
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = 0; c < cols; c++)
				gx[r * cols + c] += g[r * heads + c / f_dim] * a[c];
	}
	col_dot_groups(be, g, heads, f_dim, x, rows, cols, ga);
	return 0;
}

/* Row i of a block has slot_count slots from slot_base on: slot k (0: the self loop) reads
 * source slot_src(...); a bipartite block has no self loop, its slots are its edges. */
static inline int64_t slot_count(const bw_block *b, int64_t i)
{
	return b->d.indptr[i + 1] - b->d.indptr[i] + (b->bipartite ? 0 : 1);
}
static inline int64_t slot_base(const bw_block *b, int64_t i)
{
	return b->d.indptr[i] - b->d.indptr[0] + (b->bipartite ? 0 : i);
}
static inline int64_t slot_src(const bw_block *b, int64_t i, int64_t k)
{
	if (b->bipartite)
		return b->d.indices[b->d.indptr[i] + k];
	return k == 0 ? i : b->d.indices[b->d.indptr[i] + k - 1];
}

static inline float leaky(float u, float slope) { return u > 0.0f ? u : slope * u; }

/* Row i's edge term in slot q for head k: edge q - 1's s_edge (edge q for a bipartite
 * block), and for the self loop (q = 0) the mean over the row's edges, self, computed by
 * self_edge_term (0 without s_edge). */
static inline float slot_edge_term(const bw_block *b, const float *s_edge, int64_t i, int64_t q, int64_t heads,
				   int64_t k, float self)
{
	if (!s_edge)
		return 0.0f;
	const int64_t e0 = b->d.indptr[i] - b->d.indptr[0];
	if (b->bipartite)
		return s_edge[(e0 + q) * heads + k];
	return q == 0 ? self : s_edge[(e0 + q - 1) * heads + k];
}

/* The self loop's edge term of row i, head k: the mean of its edges' (0 without any). */
static inline float self_edge_term(const bw_block *b, const float *s_edge, int64_t i, int64_t heads, int64_t k)
{
	const int64_t e0 = b->d.indptr[i] - b->d.indptr[0], ne = b->d.indptr[i + 1] - b->d.indptr[i];
	if (!s_edge || b->bipartite || ne == 0)
		return 0.0f;
	double s = 0.0;
	for (int64_t e = 0; e < ne; e++)
		s += s_edge[(e0 + e) * heads + k];
	return (float)(s / (double)ne);
}

static int cpu_edge_softmax_fwd(const bw_backend *be, const bw_block *b, const float *s_src, const float *s_dst,
				const float *s_edge, int64_t heads, float slope, float *alpha)
{
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t i = 0; i < b->num_dst; i++) {
		const int64_t n = slot_count(b, i), base = slot_base(b, i);
		for (int64_t k = 0; k < heads && n > 0; k++) { /* a bipartite row may have no slot */
			const float sd = s_dst[i * heads + k], self = self_edge_term(b, s_edge, i, heads, k);
			float mx = -INFINITY;
			for (int64_t q = 0; q < n; q++) {
				float u = sd + s_src[slot_src(b, i, q) * heads + k];
				if (s_edge)
					u += slot_edge_term(b, s_edge, i, q, heads, k, self);
				const float e = leaky(u, slope);
				alpha[(base + q) * heads + k] = e;
				mx = e > mx ? e : mx;
			}
			double sum = 0.0;
			for (int64_t q = 0; q < n; q++) {
				const float w = expf(alpha[(base + q) * heads + k] - mx);
				alpha[(base + q) * heads + k] = w;
				sum += w;
			}
			const float inv = (float)(1.0 / sum);
			for (int64_t q = 0; q < n; q++)
				alpha[(base + q) * heads + k] *= inv;
		}
	}
	return 0;
}

/* gs_edge of row i, head k from the slots' d (ds[q]): edge q's own d plus the self loop's
 * d shared over the row's edges (the self loop's term is their mean). */
static void edge_term_grad(const bw_block *b, int64_t i, int64_t heads, int64_t k, const float *ds, float *gs_edge)
{
	const int64_t e0 = b->d.indptr[i] - b->d.indptr[0], ne = b->d.indptr[i + 1] - b->d.indptr[i];
	const int64_t off = b->bipartite ? 0 : 1;
	const double share = b->bipartite || ne == 0 ? 0.0 : (double)ds[0] / (double)ne;
	for (int64_t e = 0; e < ne; e++)
		gs_edge[(e0 + e) * heads + k] = (float)((double)ds[e + off] + share);
}

/* One pass per head, the heads taken dynamically: gs_dst by rows, gs_src scattered in row
 * order (each element's additions in row order whatever the thread count); with s_edge,
 * each slot's d kept in a row buffer of the thread's for gs_edge. */
static int cpu_edge_softmax_bwd(const bw_backend *be, const bw_block *b, const float *s_src, const float *s_dst,
				const float *s_edge, const float *alpha, const float *galpha, int64_t heads, float slope,
				float *gs_src, float *gs_dst, float *gs_edge)
{
	int64_t maxn = 1;
	for (int64_t i = 0; s_edge && i < b->num_dst; i++)
		maxn = BW_MAX(maxn, slot_count(b, i));
	int st = 0;
	memset(gs_src, 0, (size_t)(b->num_src * heads) * sizeof *gs_src);
#pragma omp parallel num_threads(chunk_threads(be, heads))
	{
		float *ds = s_edge ? bw_malloc((size_t)maxn * sizeof *ds) : NULL;
		if (s_edge && !ds) {
#pragma omp atomic write
			st = BURROW_E_NOMEM;
		}
#pragma omp for schedule(dynamic, 1)
		for (int64_t k = 0; k < heads; k++)
			for (int64_t i = 0; i < b->num_dst && (!s_edge || ds); i++) {
				const int64_t n = slot_count(b, i), base = slot_base(b, i);
				double dot = 0.0, gd = 0.0;
				for (int64_t q = 0; q < n; q++)
					dot += (double)alpha[(base + q) * heads + k] * galpha[(base + q) * heads + k];
				const float sd = s_dst[i * heads + k], self = self_edge_term(b, s_edge, i, heads, k);
				for (int64_t q = 0; q < n; q++) {
					const int64_t s = (base + q) * heads + k, j = slot_src(b, i, q);
					float u = sd + s_src[j * heads + k];
					if (s_edge)
						u += slot_edge_term(b, s_edge, i, q, heads, k, self);
					const float d = (float)((double)alpha[s] * ((double)galpha[s] - dot)) * (u > 0.0f ? 1.0f : slope);
					gd += d;
					gs_src[j * heads + k] += d;
					if (ds)
						ds[q] = d;
				}
				gs_dst[i * heads + k] = (float)gd;
				if (ds)
					edge_term_grad(b, i, heads, k, ds, gs_edge);
			}
		bw_free(ds);
	}
	return st;
}

static int cpu_att_agg_fwd(const bw_backend *be, const bw_block *b, const float *alpha, const float *h,
			   int64_t heads, int64_t f_dim, float *out)
{
	const int64_t cols = heads * f_dim;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t i = 0; i < b->num_dst; i++) {
		const int64_t n = slot_count(b, i), base = slot_base(b, i);
		float *o = out + i * cols;
		memset(o, 0, (size_t)cols * sizeof *o);
		for (int64_t q = 0; q < n; q++) {
			const float *hj = h + slot_src(b, i, q) * cols, *al = alpha + (base + q) * heads;
			for (int64_t k = 0; k < heads; k++) {
				const float w = al[k];
#pragma omp simd
				for (int64_t f = 0; f < f_dim; f++)
					o[k * f_dim + f] += w * hj[k * f_dim + f];
			}
		}
	}
	return 0;
}

static int cpu_att_agg_bwd(const bw_backend *be, const bw_block *b, const float *alpha, const float *h,
			   const float *gout, int64_t heads, int64_t f_dim, float *galpha, float *gh)
{
	const int64_t cols = heads * f_dim;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t i = 0; i < b->num_dst; i++) {
		const int64_t n = slot_count(b, i), base = slot_base(b, i);
		const float *g = gout + i * cols;
		for (int64_t q = 0; q < n; q++) {
			const float *hj = h + slot_src(b, i, q) * cols;
			for (int64_t k = 0; k < heads; k++) {
				float s = 0.0f;
#pragma omp simd reduction(+ : s)
				for (int64_t f = 0; f < f_dim; f++)
					s += g[k * f_dim + f] * hj[k * f_dim + f];
				galpha[(base + q) * heads + k] = s;
			}
		}
	}
	memset(gh, 0, (size_t)(b->num_src * cols) * sizeof *gh);
#pragma omp parallel for schedule(dynamic, 1) num_threads(chunk_threads(be, col_groups(cols)))
	for (int64_t grp = 0; grp < col_groups(cols); grp++) {
		const int64_t c0 = grp * COL_GROUP, c1 = BW_MIN(cols, c0 + COL_GROUP);
		for (int64_t i = 0; i < b->num_dst; i++) {
			const int64_t n = slot_count(b, i), base = slot_base(b, i);
			const float *g = gout + i * cols;
			for (int64_t q = 0; q < n; q++) {
				float *o = gh + slot_src(b, i, q) * cols;
				const float *al = alpha + (base + q) * heads;
				for (int64_t c = c0; c < c1; c++)
					o[c] += al[c / f_dim] * g[c];
			}
		}
	}
	return 0;
}

/* ------------------------------------------------------------ normalization */

static int cpu_row_norm_fwd(const bw_backend *be, const float *x, int64_t rows, int64_t cols, float eps, float *y,
			    float *rstd)
{
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
	for (int64_t r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		double s = 0, ss = 0;
		for (int64_t c = 0; c < cols; c++)
			s += xr[c];
		const double mu = cols ? s / (double)cols : 0;
		for (int64_t c = 0; c < cols; c++)
			ss += ((double)xr[c] - mu) * ((double)xr[c] - mu);
		const double rs = 1.0 / sqrt((cols ? ss / (double)cols : 0) + eps);
		float *yr = y + r * cols;
		for (int64_t c = 0; c < cols; c++)
			yr[c] = (float)(((double)xr[c] - mu) * rs);
		rstd[r] = (float)rs;
	}
	return 0;
}

static int cpu_row_norm_bwd(const bw_backend *be, const float *y, const float *rstd, const float *gy, int64_t rows,
			    int64_t cols, float *gx)
{
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
	for (int64_t r = 0; r < rows; r++) {
		const float *yr = y + r * cols, *g = gy + r * cols;
		double sg = 0, sgy = 0;
		for (int64_t c = 0; c < cols; c++) {
			sg += g[c];
			sgy += (double)g[c] * yr[c];
		}
		const double mg = sg / (double)cols, mgy = sgy / (double)cols;
		float *o = gx + r * cols;
		for (int64_t c = 0; c < cols; c++)
			o[c] = (float)(rstd[r] * ((double)g[c] - mg - yr[c] * mgy));
	}
	return 0;
}

/* Column statistics by column groups. */
static int cpu_col_norm_fwd(const bw_backend *be, const float *x, int64_t rows, int64_t cols, float eps, float *y,
			    float *mean, float *var, float *rstd)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(chunk_threads(be, col_groups(cols)))
	for (int64_t q = 0; q < col_groups(cols); q++) {
		const int64_t c0 = q * COL_GROUP, c1 = BW_MIN(cols, c0 + COL_GROUP);
		double s[COL_GROUP] = {0}, ss[COL_GROUP] = {0};
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++)
				s[c - c0] += x[r * cols + c];
		for (int64_t c = c0; c < c1; c++)
			s[c - c0] = rows ? s[c - c0] / (double)rows : 0;
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++) {
				const double d = x[r * cols + c] - s[c - c0];
				ss[c - c0] += d * d;
			}
		double rs[COL_GROUP];
		for (int64_t c = c0; c < c1; c++) {
			const double v = rows ? ss[c - c0] / (double)rows : 0;
			rs[c - c0] = 1.0 / sqrt(v + eps);
			mean[c] = (float)s[c - c0];
			var[c] = (float)v;
			rstd[c] = (float)rs[c - c0];
		}
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++)
				y[r * cols + c] = (float)((x[r * cols + c] - s[c - c0]) * rs[c - c0]);
	}
	return 0;
}

static int cpu_col_norm_bwd(const bw_backend *be, const float *y, const float *rstd, const float *gy, int64_t rows,
			    int64_t cols, float *gx)
{
#pragma omp parallel for schedule(dynamic, 1) num_threads(chunk_threads(be, col_groups(cols)))
	for (int64_t q = 0; q < col_groups(cols); q++) {
		const int64_t c0 = q * COL_GROUP, c1 = BW_MIN(cols, c0 + COL_GROUP);
		double sg[COL_GROUP] = {0}, sgy[COL_GROUP] = {0};
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++) {
				sg[c - c0] += gy[r * cols + c];
				sgy[c - c0] += (double)gy[r * cols + c] * y[r * cols + c];
			}
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++)
				gx[r * cols + c] = (float)(rstd[c] * ((double)gy[r * cols + c] - sg[c - c0] / (double)rows -
								    y[r * cols + c] * sgy[c - c0] / (double)rows));
	}
	return 0;
}

static int cpu_col_norm_apply(const bw_backend *be, const float *x, int64_t rows, int64_t cols, const float *mean,
			      const float *var, float eps, float *y)
{
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
	for (int64_t r = 0; r < rows; r++)
		for (int64_t c = 0; c < cols; c++)
			y[r * cols + c] = (float)((x[r * cols + c] - (double)mean[c]) / sqrt((double)var[c] + eps));
	return 0;
}

static int cpu_col_scale(const bw_backend *be, float *y, int64_t rows, int64_t cols, const float *s)
{
#pragma omp parallel for schedule(dynamic, row_chunk(cols)) num_threads(row_threads(be, rows, cols))
	for (int64_t r = 0; r < rows; r++)
#pragma omp simd
		for (int64_t c = 0; c < cols; c++)
			y[r * cols + c] *= s[c];
	return 0;
}

static int cpu_col_dot(const bw_backend *be, const float *a, const float *b, int64_t rows, int64_t cols, float *out)
{
	col_dot_groups(be, a, cols, 1, b, rows, cols, out);
	return 0;
}

static const bw_ops cpu_ops = {
	.name = "cpu",
	.gemm = cpu_gemm,
	.spmm = cpu_spmm,
	.agg_fwd = cpu_agg_fwd,
	.agg_bwd = cpu_agg_bwd,
	.bias_add = cpu_bias_add,
	.col_sum = cpu_col_sum,
	.relu_fwd = cpu_relu_fwd,
	.relu_bwd = cpu_relu_bwd,
	.dropout_fwd = cpu_dropout_fwd,
	.dropout_bwd = cpu_dropout_bwd,
	.axpy = cpu_axpy,
	.scale = cpu_scale,
	.nll_loss = cpu_nll_loss,
	.argmax = cpu_argmax,
	.adam = cpu_adam,
	.sgd = cpu_sgd,
	.gather_rows = cpu_gather_rows,
	.scatter_add_rows = cpu_scatter_add_rows,
	.seg_max_fwd = cpu_seg_max_fwd,
	.seg_max_bwd = cpu_seg_max_bwd,
	.head_dot = cpu_head_dot,
	.head_dot_bwd = cpu_head_dot_bwd,
	.edge_softmax_fwd = cpu_edge_softmax_fwd,
	.edge_softmax_bwd = cpu_edge_softmax_bwd,
	.att_agg_fwd = cpu_att_agg_fwd,
	.att_agg_bwd = cpu_att_agg_bwd,
	.agg_w_fwd = cpu_agg_w_fwd,
	.agg_w_bwd = cpu_agg_w_bwd,
	.row_norm_fwd = cpu_row_norm_fwd,
	.row_norm_bwd = cpu_row_norm_bwd,
	.col_norm_fwd = cpu_col_norm_fwd,
	.col_norm_bwd = cpu_col_norm_bwd,
	.col_norm_apply = cpu_col_norm_apply,
	.col_scale = cpu_col_scale,
	.col_dot = cpu_col_dot,
	.gemm_cat = cpu_gemm_cat,
};

/* ------------------------------------------------------------ timing products (gemm_bench.c) */

const char *bw_cpu_gemm_kernel(const bw_backend *be, bool ta, bool tb, int64_t m, int64_t n, int64_t k)
{
	return uses_own(be->ctx, ta, tb, m, n, k) && m > 0 && n > 0 && k > 0 ? "avx512" : "openblas";
}

static int blas_fit(int threads);

int bw_cpu_cblas_gemm(int threads, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
		      float *c)
{
	int st = blas_fit(threads);
	if (!st)
		gemm_slice(ta, tb, m, n, k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
	openblas_set_num_threads(1); /* the backend's setting (cpu_init) */
	return st;
}

/* ------------------------------------------------------------ registry entry */

static int cpu_devices(void) { return 1; }

static atomic_bool blas_warm; /* this process's calling thread holds its OpenBLAS buffer */

/* OpenBLAS under RLIMIT_AS. Each of its threads maps a BW_BLAS_BUFFER work buffer when it
 * starts, the calling thread maps one on its first level-3 call, and a mapping that fails
 * is retried forever: a hang, not an error. So, with a limit: refuse at once when the
 * caller's buffer does not fit in what is left; start no more OpenBLAS threads than half
 * of what is left then holds (buffer and stack each); and map the caller's buffer now
 * with one small product, before the model and the cache take the rest. The burrow
 * command starts OpenBLAS with one thread (tools/env.c), since the
 * threads it starts by itself, at load, cannot be sized here. */
static int blas_fit(int threads)
{
	size_t left, limit;
	if (!bw_as_left(&left, &limit)) {
		if (threads > 0)
			openblas_set_num_threads(threads);
		return 0;
	}
	const size_t need = atomic_load(&blas_warm) ? 0 : BW_BLAS_BUFFER + BW_AS_SLACK;
	if (left < need)
		return bw_err(BURROW_E_NOMEM, "backend: OpenBLAS's %zu MiB work buffer does not fit in the %zu MiB left "
					      "of RLIMIT_AS (%zu MiB)",
			      BW_BLAS_BUFFER >> 20, left >> 20, limit >> 20);
	const int have = openblas_get_num_threads(), want = bw_threads(threads);
	int k = want;
	if (want > have) {
		const size_t more = (left - need) / 2 / (BW_BLAS_BUFFER + bw_stack_bytes());
		k = have + (int)BW_MIN((size_t)(want - have), more);
	}
	if (k != have)
		openblas_set_num_threads(k);
	if (atomic_load(&blas_warm))
		return 0;
	/* above OpenBLAS's small-matrix path (M*N*K <= 100^3), so that the buffer is mapped */
	enum { W = 128 };
	float *a = bw_malloc(3 * W * W * sizeof *a);
	if (!a)
		return BURROW_E_NOMEM;
	memset(a, 0, 3 * W * W * sizeof *a);
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, W, W, W, 1.0f, a, W, a + W * W, W, 0.0f,
		    a + 2 * W * W, W);
	bw_free(a);
	atomic_store(&blas_warm, true);
	return 0;
}

/* The OpenMP threads of the kernels; OpenBLAS is held at one thread, since cpu_gemm splits
 * its work over those same OpenMP threads (one pool: see cpu_gemm), and under RLIMIT_AS its
 * caller's buffer is mapped now or refused (blas_fit). */
static int cpu_init(bw_backend *be, const bw_backend_cfg *cfg)
{
	const int threads = cfg->threads;
	memset(be, 0, sizeof *be);
	if (cfg->index != 0)
		return bw_err(BURROW_E_INVAL, "backend: the CPU has no device %d", cfg->index);
	int st = blas_fit(1);
	if (st)
		return st;
	be->ops = &cpu_ops;
	be->dev = bw_device_cpu();
	be->kind = BW_BACKEND_CPU;
	be->threads = bw_threads(threads);
	size_t left, limit;
	/* only the calling thread's OpenBLAS buffer is mapped and known to fit (blas_fit); a
	 * second thread's, mapped at its first call after the cache has taken what was left,
	 * would be retried forever */
	be->gemm_threads = bw_as_left(&left, &limit) ? 1 : be->threads;
	cpu_ctx *x = bw_calloc(1, sizeof *x);
	if (!x) {
		memset(be, 0, sizeof *be);
		return BURROW_E_NOMEM;
	}
	const char *e = getenv("BURROW_CPU_GEMM"); /* "blas": OpenBLAS for every product (docs/train.md) */
	x->own_gemm = bw_gemm_own_available() && !(e && !strcmp(e, "blas"));
	be->ctx = x;
	be->gemm_wants_transposed = x->own_gemm;
	return 0;
}

static void cpu_release(bw_backend *be)
{
	cpu_ctx *x = be->ctx;
	if (x)
		bw_aligned_free(x->scratch);
	bw_free(x);
	memset(be, 0, sizeof *be);
}

static const bw_backend_reg cpu_reg = {
	.kind = BW_BACKEND_CPU,
	.name = "cpu",
	.ops = &cpu_ops,
	.devices = cpu_devices,
	.init = cpu_init,
	.release = cpu_release,
};

const bw_backend_reg *bw_cpu_backend(void) { return &cpu_reg; }
