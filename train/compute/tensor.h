/* tensor.h: dense float32 tensors in a device's memory, owned or borrowed, and the sparse and
 * transposed copies of a matrix that no longer changes (full-graph training's features). */
#ifndef BURROW_TENSOR_H
#define BURROW_TENSOR_H

#include "../../device/device.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct bw_sparse bw_sparse;

/* A CPU kernel built for AVX-512 and AVX2 beside the baseline x86-64 (SSE2), the version for
 * this CPU chosen at load (GCC's target_clones). Elementwise kernels give the same bits in
 * every version (ISO C mode contracts no a*b+c into an FMA); a vectorized reduction may add
 * in another order on another CPU, never between runs on one. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define BW_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define BW_CLONES
#endif

/* A dense float32 matrix, row-major, in the memory of `dev` (NULL: the CPU). Owned tensors
 * allocate through the device and grow on demand (bw_tensor_reshape); borrowed ones wrap
 * memory of that device and never grow. A zeroed struct is an empty owned CPU tensor. */
typedef struct bw_tensor {
	float *data;          /* [rows, cols] device memory; owned when `owned`, else borrowed */
	int64_t rows, cols;
	int64_t cap;          /* elements allocated (owned tensors only) */
	bool owned;
	const bw_device *dev; /* where data lives; NULL = the CPU */
	const bw_sparse *sp;  /* a sparse copy of data (borrowed), or NULL: bw_matmul multiplies
				 it instead where the backend can (its spmm slot); a view of the
				 first rows keeps it (the copy holds more rows than the view) */
	const struct bw_transposed *tr; /* a transposed copy of data (borrowed), or NULL:
				 bw_matmul multiplies it instead of data transposed */
} bw_tensor;

/* A transposed copy of a dense [rows, cols] matrix that no longer changes (full-graph
 * training's dense features, when the backend asks: bw_backend.gemm_wants_transposed):
 * t is [cols, rows] row-major, host memory. a^T b then reads t's rows, contiguous along the
 * reduction, where the CPU's own GEMM reads its first operand in place (gemm_avx512.c). */
typedef struct bw_transposed {
	const float *dense;      /* the matrix copied (borrowed): a tensor uses the copy when its data is this */
	float *t;                /* [cols, rows] */
	int64_t rows, cols;
} bw_transposed;

/* A sparse copy of a dense [rows, cols] matrix that no longer changes (full-graph training's
 * features, a mini-batch's input rows): its rows as CSR and its columns as CSR of the
 * transpose, each row's entries in ascending column order (each column's rows ascending),
 * host memory. Built once by bw_sparse_build, or again over the same arrays for every batch
 * by bw_sparse_update; a tensor over the same data points at it (bw_tensor.sp). */
struct bw_sparse {
	int64_t rows, cols, nnz;
	int64_t cap_rows, cap_cols, cap_nnz; /* what the arrays hold room for (bw_sparse_update) */
	const float *dense;      /* the matrix copied (borrowed): a tensor uses the copy when its data is this */
	int64_t *indptr;         /* [rows + 1] */
	int32_t *indices;        /* [nnz] column of each entry */
	float *values;           /* [nnz] */
	int64_t *t_indptr;       /* [cols + 1] the transpose's */
	int32_t *t_indices;      /* [nnz] row of each entry, ascending within a column */
	float *t_values;         /* [nnz] */
};

/* Entries of x [n] that are not zero, counted with `threads` OpenMP threads. */
int64_t bw_count_nonzero(const float *x, int64_t n, int threads);
/* s = the sparse copy of dense [rows, cols] (host memory, borrowed; cols < 2^31), built with
 * `threads` threads; on failure s holds nothing. */
int bw_sparse_build(bw_sparse *s, const float *dense, int64_t rows, int64_t cols, int threads);
/* The same into s's arrays (a zeroed s, or one built or updated before), which grow when
 * the matrix needs more room: one copy per mini-batch without an allocation per batch. The
 * copy is the same whatever s held before and whatever `threads`; on failure s holds nothing. */
int bw_sparse_update(bw_sparse *s, const float *dense, int64_t rows, int64_t cols, int threads);
/* Append dense [rows, cols] (host memory) to s's rows as CSR, without a transpose (a zeroed
 * s to start): the rows of a matrix read in runs, kept for bw_sparse_gather. On failure s
 * keeps the rows appended before (bw_sparse_free it). */
int bw_sparse_append(bw_sparse *s, const float *dense, int64_t rows, int64_t cols, int threads);
/* s = rows ids[0..n) of src's CSR (src built by bw_sparse_append: every row of a matrix) as
 * the sparse copy of dense [n, src->cols], the same rows gathered dense; its transpose built;
 * s's arrays reused as bw_sparse_update's. The copy is the one bw_sparse_update of dense
 * would give, entry for entry, with fewer bytes read (only the non-zeros). On failure s holds
 * nothing. */
int bw_sparse_gather(bw_sparse *s, const bw_sparse *src, const int64_t *ids, int64_t n, const float *dense,
		     int threads);
void bw_sparse_free(bw_sparse *s);
/* x = the transposed copy of dense [rows, cols] (host memory, borrowed), made with `threads`
 * threads; on failure x holds nothing. */
int bw_transposed_build(bw_transposed *x, const float *dense, int64_t rows, int64_t cols, int threads);
void bw_transposed_free(bw_transposed *x);

/* An empty owned tensor on dev (NULL: the CPU). */
bw_tensor bw_tensor_empty(const bw_device *dev);
/* An owned tensor of the shape on dev (NULL: the CPU), zero-filled. */
int bw_tensor_alloc(bw_tensor *t, const bw_device *dev, int64_t rows, int64_t cols);
/* Give t the shape; an owned tensor grows (contents then undefined), a borrowed one must
 * already hold rows * cols elements. An empty tensor takes dev (NULL: keep its own); a
 * tensor that holds memory of another device is BURROW_E_INVAL. */
int bw_tensor_reshape(bw_tensor *t, const bw_device *dev, int64_t rows, int64_t cols);
/* A borrowed view of memory of dev (NULL: host memory, the CPU). */
bw_tensor bw_tensor_view(const bw_device *dev, float *data, int64_t rows, int64_t cols);
/* A borrowed view of rows [r0, r0 + n) of t. */
bw_tensor bw_tensor_rows(const bw_tensor *t, int64_t r0, int64_t n);
/* Zero rows [r0, r0 + n) of t through its device. */
int bw_tensor_zero_rows(bw_tensor *t, int64_t r0, int64_t n);
/* t = the host rows src [rows, cols] on dev: a borrowed view of src where dev's memory is
 * host memory (no copy), else an upload into t's own memory. src must outlive a view. */
int bw_tensor_from_host(bw_tensor *t, const bw_device *dev, const float *src, int64_t rows, int64_t cols);
/* Free an owned tensor's memory (borrowed: forget it); t becomes empty on its device. */
void bw_tensor_free(bw_tensor *t);

#endif /* BURROW_TENSOR_H */
