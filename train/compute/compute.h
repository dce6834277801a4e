/* compute.h: the compute layer: tensors on devices, message-flow-graph blocks and their
 * device copies, the backend (a device, an ops table and its context) with its registry,
 * the dispatchers that check arguments and call through the table, and the layers, models
 * and optimizers built on them. Nothing here knows about datasets, stores or MPI: the
 * driver (train/driver/) and distributed training (train/dist/) sit above it. */
#ifndef BURROW_COMPUTE_H
#define BURROW_COMPUTE_H

#include "../../device/device.h"

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------ tensors (tensor.c) */

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
				 it instead where the backend can (its spmm slot) */
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
 * features): its rows as CSR and its columns as CSR of the transpose, each row's entries in
 * ascending column order, host memory. Built once by bw_sparse_build; a tensor over the
 * same data points at it (bw_tensor.sp). */
struct bw_sparse {
	int64_t rows, cols, nnz;
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
void bw_sparse_free(bw_sparse *s);
/* x = the transposed copy of dense [rows, cols] (host memory, borrowed), made with `threads`
 * threads; on failure x holds nothing. */
int bw_transposed_build(bw_transposed *x, const float *dense, int64_t rows, int64_t cols, int threads);
void bw_transposed_free(bw_transposed *x);

/* The CPU backend's own sgemm (gemm_avx512.c): c [m, n] = alpha a b + beta c, row-major,
 * neither transposed, on AVX-512, a read in place and only b packed, into `scratch` of
 * bw_gemm_own_scratch(n, k) bytes, 64-byte aligned. Rows of c split over `threads` OpenMP
 * threads with the same bits for any count. Available: this CPU and build have it (the CPU
 * backend uses it then, unless BURROW_CPU_GEMM=blas when it opens); fits: the shape is one
 * where it beats OpenBLAS's packing of both operands. */
bool bw_gemm_own_available(void);
bool bw_gemm_own_fits(int64_t m, int64_t n, int64_t k);
size_t bw_gemm_own_scratch(int64_t n, int64_t k);
int bw_gemm_own(int threads, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
		const float *b, int64_t ldb, float beta, float *c, int64_t ldc, float *scratch);

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

/* ------------------------------------------------------------ blocks (block.c) */

/* Which edges of a block an aggregation reads. With a split s (bw_block_split) the early
 * part of row i is its sources below s, the late part the others; each is a CSR over the
 * block's rows, what a GPU runs as two SpMMs around a halo exchange. */
typedef enum bw_block_part { BW_PART_ALL = 0, BW_PART_EARLY = 1, BW_PART_LATE = 2 } bw_block_part;

/* A block's arrays in the memory of a device, as the kernels read them. On a host-memory
 * device they are the host arrays themselves (borrowed); elsewhere owned copies. */
typedef struct bw_block_dev {
	const bw_device *dev;        /* NULL until bw_block_upload */
	const int64_t *indptr;       /* [num_dst + 1] */
	const int32_t *indices;      /* [edges] */
	const int64_t *t_indptr;     /* [num_src + 1] the transpose (when prepared) */
	const int32_t *t_indices;
	const float *dst_norm;       /* [num_dst] (GCN) */
	const float *src_norm;       /* [num_src] */
	const int64_t *part_indptr[3];   /* [num_dst + 1] per part; [BW_PART_ALL] = indptr */
	const int32_t *part_indices[3];
	bw_dbuf buf[10];             /* owned copies on a non-host device */
	bool has_transpose, has_norms, has_split;
} bw_block_dev;

/* One layer's message-flow graph, a CSR from destination rows to source columns in local
 * ids (DGL's convention): the destination nodes are the first num_dst source nodes, so
 * h_dst is rows [0, num_dst) of the layer's input. A full graph is the block with
 * num_dst = num_src = N. The sampler's blocks and the evaluation chunks have this shape.
 * The host arrays are built here; bw_block_upload puts what the kernels read on a device. */
typedef struct bw_block {
	int64_t num_dst, num_src;
	const int64_t *indptr;  /* [num_dst + 1], borrowed host memory: row i's sources are indices[indptr[i] .. indptr[i+1]) */
	const int32_t *indices; /* local source ids in [0, num_src), borrowed host memory */
	/* GCN normalization 1/sqrt(deg + 1) per node (a self loop added), host memory; set
	 * them (borrowed) before bw_block_prepare to use degrees from outside the block (the
	 * whole graph's), else prepare computes them from the block. */
	const float *dst_norm;  /* [num_dst] */
	const float *src_norm;  /* [num_src] */
	/* derived by bw_block_prepare and bw_block_split (owned host memory) */
	int64_t *t_indptr;      /* [num_src + 1]: the transpose, source -> destination rows */
	int32_t *t_indices;     /* [num_edges] destination rows, ascending within each source */
	float *norm_buf;        /* storage of computed norms */
	int64_t split;          /* the sources [split, num_src) form the late part; 0: no split */
	int64_t *part_indptr[2];   /* [num_dst + 1] early, late (BW_PART_EARLY - 1, BW_PART_LATE - 1) */
	int32_t *part_indices[2];
	/* on a device */
	bw_block_dev d;
} bw_block;

/* A block over caller arrays (borrowed); nothing derived yet. */
void bw_block_init(bw_block *b, int64_t num_dst, int64_t num_src, const int64_t *indptr, const int32_t *indices);
/* Full structural check: offsets monotone, ids in [0, num_src), num_dst <= num_src. */
int bw_block_check(const bw_block *b);
/* Edges of the block. */
static inline int64_t bw_block_edges(const bw_block *b) { return b->indptr[b->num_dst] - b->indptr[0]; }
/* Attention slots of the block: its edges plus one self loop per destination row (bw_ops). */
static inline int64_t bw_block_slots(const bw_block *b) { return bw_block_edges(b) + b->num_dst; }
/* Build the transpose (for backward passes) and, when `gcn` and no norms were set, the GCN
 * norms from the block: dst i and src j < num_dst use row i's length + 1; a source that is
 * not a destination uses the number of rows it appears in + 1. Idempotent. */
int bw_block_prepare(bw_block *b, bool transpose, bool gcn);
/* Split every row's sources at `split` (in [num_dst, num_src]) into an early and a late
 * CSR, each keeping the row's order (a stable partition): the overlap plan of a halo
 * exchange, where rows [split, num_src) of the input arrive late. */
int bw_block_split(bw_block *b, int64_t split);
/* Put what the kernels read (the CSR, and what prepare and split derived) in dev's memory:
 * nothing is copied on a host-memory device. Call after the last prepare / split; again
 * after new derivations. */
int bw_block_upload(bw_block *b, const bw_device *dev);
/* The same with the copies queued on stream s: the host arrays must stay unchanged until s
 * has done them (an event recorded after this call marks that). */
int bw_block_upload_async(bw_block *b, const bw_device *dev, bw_stream *s);
/* Free what prepare, split and upload made; the borrowed arrays are left alone. */
void bw_block_release(bw_block *b);
/* b (zeroed, or a block used before) over new arrays, as bw_block_init, keeping the device
 * buffers of its last upload for the next one to the same device: reusing a block then
 * costs no cudaFree, which would wait for the whole device. bw_block_release frees them. */
void bw_block_reuse(bw_block *b, int64_t num_dst, int64_t num_src, const int64_t *indptr, const int32_t *indices);
/* GCN norms from the whole graph's degrees: out[k] = 1/sqrt(deg(ids[k]) + 1), where deg is
 * g's row length (ids NULL: k itself); host memory. */
void bw_gcn_norm_from_csr(const burrow_csr *g, const int64_t *ids, int64_t n, float *out, int threads);

/* ------------------------------------------------------------ backends (backend.c, backend_cpu.c) */

typedef enum bw_agg {
	BW_AGG_SUM = 0,  /* out_i = sum_{j in N(i)} x_j */
	BW_AGG_MEAN = 1, /* out_i = mean_{j in N(i)} x_j (0 when N(i) is empty) */
	BW_AGG_GCN = 2,  /* out_i = sum_{j in N(i) + {i}} dst_norm_i src_norm_j x_j */
} bw_agg;

typedef struct bw_adam_args {
	float lr, beta1, beta2, eps, weight_decay;
	bool decoupled;   /* AdamW: decay the weights directly instead of adding wd * p to the gradient */
	int64_t step;     /* 1-based step count, for the bias corrections */
} bw_adam_args;

/* What the loss leaves in device memory until the driver reads it, once per step. */
typedef struct bw_loss {
	double loss;       /* mean over the counted rows of -log_softmax(logits)[label] */
	int64_t counted;   /* rows averaged: selected, label >= 0 */
	int64_t correct;   /* of those, rows whose argmax is the label */
	int64_t bad;       /* selected rows out of range or with a label >= classes (then nothing is computed) */
	int64_t bad_row;   /* the first: its output row, or its index in the selection when out of range */
	int64_t bad_value; /* its label, or the out-of-range row id */
	int64_t bad_is_row;/* 1: the selection named a row outside [0, rows); 0: a label >= classes */
	int64_t rows, classes; /* the logits' shape, for the message */
} bw_loss;

typedef struct bw_backend bw_backend;

/* A compute backend's kernels. Every slot is required, returns a status and receives the
 * backend (its device, threads and context: handles, the compute stream). Every pointer is
 * memory of be->dev; blocks arrive uploaded to it (b->d). The dispatchers below check
 * shapes, then call through the table; the CUDA backend fills the same table. */
typedef struct bw_ops {
	const char *name;
	/* c[m, n] = alpha * op(a) op(b) + beta * c, row-major, as BLAS sgemm does */
	int (*gemm)(const bw_backend *be, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
		    const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
	/* out[i] for rows [r0, r1) = the aggregation of x over the part's edges of row i, each
	 * term scaled as for the whole row (its degree, its GCN norms); add adds to out[i]
	 * instead of overwriting it (GCN's self term belongs to the pass that overwrites) */
	int (*agg_fwd)(const bw_backend *be, const bw_block *b, bw_block_part part, bw_agg mode, const float *x,
		       int64_t dim, int64_t r0, int64_t r1, bool add, float *out);
	/* gx[j] for sources [j0, j1) = d(sum of gout . out)/d x_j over the whole block; overwrites */
	int (*agg_bwd)(const bw_backend *be, const bw_block *b, bw_agg mode, const float *gout, int64_t dim, int64_t j0,
		       int64_t j1, float *gx);
	/* y[r, :] += bias */
	int (*bias_add)(const bw_backend *be, float *y, int64_t rows, int64_t cols, const float *bias);
	/* out[c] = sum_r g[r, c] (overwrites) */
	int (*col_sum)(const bw_backend *be, const float *g, int64_t rows, int64_t cols, float *out);
	int (*relu_fwd)(const bw_backend *be, float *x, int64_t n);
	/* g *= (y > 0), y the ReLU's output */
	int (*relu_bwd)(const bw_backend *be, float *g, const float *y, int64_t n);
	/* Zero each element with probability p and scale the rest by 1/(1-p); mask gets 1 for
	 * kept elements. Row r draws from the stream bw_key(key, r), each 64-bit draw deciding
	 * two elements (keep when a 32-bit half is >= p * 2^32): independent of threads, and
	 * the same bits on every backend. */
	int (*dropout_fwd)(const bw_backend *be, float *x, uint8_t *mask, int64_t rows, int64_t cols, float p,
			   uint64_t key);
	int (*dropout_bwd)(const bw_backend *be, float *g, const uint8_t *mask, int64_t n, float p);
	/* y += alpha * x */
	int (*axpy)(const bw_backend *be, int64_t n, float alpha, const float *x, float *y);
	/* x *= alpha */
	int (*scale)(const bw_backend *be, int64_t n, float alpha, float *x);
	/* The mean over the selected rows with a label >= 0 of -log_softmax(logits)[label] into
	 * *out (device memory); grad (may be NULL) gets its gradient for every row (0 outside
	 * the selection). sel NULL: all rows. A selected row out of range or a label >= classes
	 * is counted in out->bad and nothing else is computed. */
	int (*nll_loss)(const bw_backend *be, const float *logits, int64_t rows, int64_t classes, const int32_t *labels,
			const int64_t *sel, int64_t nsel, float *grad, bw_loss *out);
	/* out[r] = the first column holding row r's maximum */
	int (*argmax)(const bw_backend *be, const float *x, int64_t rows, int64_t cols, int32_t *out);
	int (*adam)(const bw_backend *be, float *p, const float *g, float *m, float *v, int64_t n, const bw_adam_args *a);
	/* mom (may be NULL when momentum is 0) = momentum * mom + g + wd * p; p -= lr * mom */
	int (*sgd)(const bw_backend *be, float *p, const float *g, float *mom, int64_t n, float lr, float momentum,
		   float weight_decay);
	/* out[k] = x[idx[k]] for k in [0, n): rows of dim floats (the halo exchange's packing) */
	int (*gather_rows)(const bw_backend *be, const float *x, int64_t dim, const int64_t *idx, int64_t n, float *out);
	/* x[idx[k]] += in[k] for k in [0, n), the idx distinct (so no two adds meet: the result
	 * is the serial loop's whatever the order of the rows) */
	int (*scatter_add_rows)(const bw_backend *be, const float *in, int64_t dim, const int64_t *idx, int64_t n,
				float *x);

	/* ---- sparse input (issue 20), optional: NULL (the CUDA backend) makes bw_matmul
	 * multiply the dense matrix with gemm. The gemm for a sparse a (host memory) and b not
	 * transposed: c [m, n] = alpha op(a) b + beta c, m = a's rows (a's cols when trans_a).
	 * Each row of c sums its terms in the order of a's (or its transpose's) entries, one
	 * thread per row: no atomics, no dependence on the threads. */
	int (*spmm)(const bw_backend *be, const bw_sparse *a, bool trans_a, int64_t n, float alpha, const float *b,
		    int64_t ldb, float beta, float *c, int64_t ldc);

	/* ---- the max aggregator and GAT (issue 17). These slots may be NULL: the dispatcher
	 * then returns BURROW_E_UNSUPPORTED naming the op, and tests/test_ops.c counts a skip.
	 * Attention works on a block with a self loop added to every destination row (as
	 * PyG's GATConv does): row i's "slots" are first i itself, then its CSR edges in
	 * order; slot (i, 0) is number (indptr[i] - indptr[0]) + i, slot (i, k >= 1) the
	 * edge indptr[i] + k - 1 at number (indptr[i] + k - 1 - indptr[0]) + i + 1. A block
	 * has bw_block_slots(b) = edges + num_dst slots; per-slot arrays are [slots, heads]. */

	/* out[i, c] = max over row i's sources j of x[j, c], arg[i, c] = that j (the first in
	 * row order on ties), for every destination row; a row without sources gets out 0 and
	 * arg -1. x [num_src, dim], out and arg [num_dst, dim]. */
	int (*seg_max_fwd)(const bw_backend *be, const bw_block *b, const float *x, int64_t dim, float *out,
			   int32_t *arg);
	/* gx [num_src, dim] = 0, then gx[arg[i, c], c] += gout[i, c] wherever arg >= 0
	 * (overwrites gx whole); the order of additions is fixed (rows ascending). */
	int (*seg_max_bwd)(const bw_backend *be, int64_t num_dst, int64_t num_src, const float *gout, const int32_t *arg,
			   int64_t dim, float *gx);
	/* out[r, k] = sum_f x[r, k f_dim + f] a[k f_dim + f] for rows r, heads k: x [rows, heads
	 * f_dim], a [heads f_dim], out [rows, heads] (overwrites). */
	int (*head_dot)(const bw_backend *be, const float *x, int64_t rows, int64_t heads, int64_t f_dim, const float *a,
			float *out);
	/* Its backward from g [rows, heads]: gx[r, k f_dim + f] += g[r, k] a[k f_dim + f] (adds
	 * to gx); ga[k f_dim + f] = sum_r g[r, k] x[r, k f_dim + f] (overwrites). */
	int (*head_dot_bwd)(const bw_backend *be, const float *x, int64_t rows, int64_t heads, int64_t f_dim,
			    const float *a, const float *g, float *gx, float *ga);
	/* Edge softmax per destination row and head: for slot s = (i, j) of row i,
	 * e_s = leaky_relu(s_dst[i, k] + s_src[j, k], slope) and alpha[s, k] = exp(e_s) / the
	 * sum of exp(e_t) over row i's slots t. s_src [num_src, heads], s_dst [num_dst, heads],
	 * alpha [slots, heads] (overwrites). */
	int (*edge_softmax_fwd)(const bw_backend *be, const bw_block *b, const float *s_src, const float *s_dst,
				int64_t heads, float slope, float *alpha);
	/* Its backward from galpha = dL/dalpha [slots, heads], alpha the forward's output:
	 * with d_s = alpha_s (galpha_s - sum_t alpha_t galpha_t) times the leaky ReLU's slope at
	 * e_s (1 above 0, else slope), gs_dst[i, k] = sum of d over row i's slots and gs_src[j,
	 * k] = sum of d over the slots whose source is j (both overwrite, whole). */
	int (*edge_softmax_bwd)(const bw_backend *be, const bw_block *b, const float *s_src, const float *s_dst,
				const float *alpha, const float *galpha, int64_t heads, float slope, float *gs_src,
				float *gs_dst);
	/* out[i, k f_dim + f] = sum over row i's slots s = (i, j) of alpha[s, k] h[j, k f_dim + f]:
	 * h [num_src, heads f_dim], out [num_dst, heads f_dim] (overwrites). */
	int (*att_agg_fwd)(const bw_backend *be, const bw_block *b, const float *alpha, const float *h, int64_t heads,
			   int64_t f_dim, float *out);
	/* Its backward from gout [num_dst, heads f_dim]: galpha[s, k] = sum_f gout[i, k f_dim + f]
	 * h[j, k f_dim + f] [slots, heads] and gh[j] = sum over the slots (i, j) of alpha[s, k]
	 * gout[i] per head [num_src, heads f_dim]; both overwrite, whole. */
	int (*att_agg_bwd)(const bw_backend *be, const bw_block *b, const float *alpha, const float *h, const float *gout,
			   int64_t heads, int64_t f_dim, float *galpha, float *gh);

	/* ---- normalization between layers (issue 17), optional like the slots above ---- */
	/* Layer norm without its affine part: y[r] = (x[r] - mean_r) rstd_r with rstd_r =
	 * 1 / sqrt(var_r + eps), var the biased variance over the row's cols; rstd [rows] is
	 * kept for the backward. y may be x. */
	int (*row_norm_fwd)(const bw_backend *be, const float *x, int64_t rows, int64_t cols, float eps, float *y,
			    float *rstd);
	/* Its backward: gx[r] = rstd_r (gy[r] - mean(gy[r]) - y[r] mean(gy[r] y[r])), y the
	 * forward's output; gx may be gy. */
	int (*row_norm_bwd)(const bw_backend *be, const float *y, const float *rstd, const float *gy, int64_t rows,
			    int64_t cols, float *gx);
	/* Batch norm's statistics and normalization over the rows: mean[c], var[c] (biased) of
	 * each column, y = (x - mean[c]) rstd[c] with rstd = 1 / sqrt(var + eps); y may be x. */
	int (*col_norm_fwd)(const bw_backend *be, const float *x, int64_t rows, int64_t cols, float eps, float *y,
			    float *mean, float *var, float *rstd);
	/* Its backward: gx[r, c] = rstd[c] (gy[r, c] - mean_r(gy[., c]) - y[r, c] mean_r(gy[., c] y[., c]));
	 * gx may be gy. */
	int (*col_norm_bwd)(const bw_backend *be, const float *y, const float *rstd, const float *gy, int64_t rows,
			    int64_t cols, float *gx);
	/* Inference with fixed statistics: y[r, c] = (x[r, c] - mean[c]) / sqrt(var[c] + eps); y may be x. */
	int (*col_norm_apply)(const bw_backend *be, const float *x, int64_t rows, int64_t cols, const float *mean,
			      const float *var, float eps, float *y);
	/* y[r, c] *= s[c] */
	int (*col_scale)(const bw_backend *be, float *y, int64_t rows, int64_t cols, const float *s);
	/* out[c] = sum_r a[r, c] b[r, c] (overwrites) */
	int (*col_dot)(const bw_backend *be, const float *a, const float *b, int64_t rows, int64_t cols, float *out);
} bw_ops;

enum bw_backend_kind { BW_BACKEND_CPU = 0, BW_BACKEND_CUDA = 1, BW_BACKEND_KINDS = 2 };

/* A backend in use: its device, its kernels, and their context. */
struct bw_backend {
	const bw_ops *ops;
	const bw_device *dev;  /* where its tensors live (borrowed from the registry) */
	void *ctx;             /* the backend's own state: library handles; the CPU's GEMM scratch */
	bw_stream *stream;     /* the compute stream its kernels run on; NULL on the CPU */
	int kind;              /* enum bw_backend_kind */
	int threads;           /* OpenMP threads for CPU kernels, >= 1 */
	int gemm_threads;      /* of those, how many a GEMM splits over: threads, or 1 under
	                          RLIMIT_AS (backend_cpu.c, blas_fit: each concurrent OpenBLAS
	                          caller maps its own work buffer, and a failed mapping hangs) */
	bool gemm_wants_transposed; /* a^T b of a constant a is faster on a's transposed copy
	                          (bw_transposed): the CPU with its own AVX-512 GEMM */
};

/* What a backend is opened with. */
typedef struct bw_backend_cfg {
	int index;    /* device index of the kind (CUDA:N); 0 for the CPU */
	int threads;  /* host threads of its kernels; 0 = the OpenMP default */
	bool tf32;    /* the GPU's GEMMs may round their inputs to TF32 (default off: float32 throughout) */
} bw_backend_cfg;

/* One entry of the registry: a kind this build knows. */
typedef struct bw_backend_reg {
	int kind;
	const char *name;
	/* devices of this kind present now: > 0, 0 for none (a registered backend without its
	 * device: tests count it as skipped) */
	int (*devices)(void);
	/* fill be for cfg's device (the CPU backend sets its OpenMP and BLAS threads here) */
	int (*init)(bw_backend *be, const bw_backend_cfg *cfg);
	void (*release)(bw_backend *be);
} bw_backend_reg;


/* The registered backends (the CPU first; CUDA only in CUDA builds). */
int bw_backend_count(void);
const bw_backend_reg *bw_backend_at(int i);
/* The registry's entry for a kind, NULL when this build lacks it. */
const bw_backend_reg *bw_backend_find(int kind);
/* Fill be for a kind's device 0; a kind this build lacks is BURROW_E_UNSUPPORTED. */
int bw_backend_init(bw_backend *be, int kind, int threads);
/* The same for any device of the kind, with cfg's settings; a kind without the device, or
 * a build without the kind, is BURROW_E_UNSUPPORTED naming what is missing. */
int bw_backend_open(bw_backend *be, int kind, const bw_backend_cfg *cfg);
void bw_backend_release(bw_backend *be);
/* The CPU backend's registry entry (backend_cpu.c). */
const bw_backend_reg *bw_cpu_backend(void);
#ifdef BURROW_CUDA
/* The CUDA backend's registry entry (backend_cuda.cu). */
const bw_backend_reg *bw_cuda_backend(void);
#endif

/* A device name as the CLI takes it, "cpu", "cuda" (= cuda:0) or "cuda:N" (NULL or "":
 * the CPU), into a kind and an index; BURROW_E_INVAL naming it when it is neither. */
int bw_device_parse(const char *name, int *kind, int *index);

/* ------------------------------------------------------------ dispatchers (ops.c) */
/* Each checks its arguments (BURROW_E_INVAL naming the op and the shapes) and calls through
 * be->ops. Tensors are passed by pointer and read as [rows, cols]; every tensor and array
 * is memory of be->dev (checked for tensors). */

/* c = alpha * op(a) op(b) + beta * c; through the backend's spmm when a carries a sparse
 * copy of all of its data (a->sp), b is not transposed and the backend has the slot */
int bw_matmul(const bw_backend *be, const bw_tensor *a, bool trans_a, const bw_tensor *b, bool trans_b, float alpha,
	      float beta, bw_tensor *c);
/* out [num_dst, d] = aggregate(x [num_src, d]) over whole rows [r0, r1) (r1 < 0: to num_dst) */
int bw_aggregate(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, int64_t r0, int64_t r1,
		 bw_tensor *out);
/* The same over one part of each row (bw_block_split), added to out when add (see
 * bw_ops.agg_fwd): early then late, adding, equals bw_aggregate. */
int bw_aggregate_part(const bw_backend *be, const bw_block *b, bw_block_part part, bw_agg mode, const bw_tensor *x,
		      int64_t r0, int64_t r1, bool add, bw_tensor *out);
/* gx [num_src, d] rows [j0, j1) (j1 < 0: to num_src) = the aggregation's transpose applied to gout [num_dst, d] */
int bw_aggregate_backward(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *gout, int64_t j0,
			  int64_t j1, bw_tensor *gx);
int bw_bias_add(const bw_backend *be, bw_tensor *y, const float *bias, int64_t n);
int bw_col_sum(const bw_backend *be, const bw_tensor *g, float *out, int64_t n);
int bw_relu(const bw_backend *be, bw_tensor *x);
int bw_relu_backward(const bw_backend *be, bw_tensor *g, const bw_tensor *y);
int bw_dropout(const bw_backend *be, bw_tensor *x, uint8_t *mask, float p, uint64_t key);
int bw_dropout_backward(const bw_backend *be, bw_tensor *g, const uint8_t *mask, float p);
int bw_axpy(const bw_backend *be, float alpha, const bw_tensor *x, bw_tensor *y);
int bw_scale(const bw_backend *be, float alpha, bw_tensor *x);
/* The loss of logits against labels (device memory, [logits rows]) over the selected rows
 * (device memory; NULL: all), its gradient into grad (may be NULL), the result left in
 * *out (device memory) for bw_loss_read. */
int bw_nll_loss(const bw_backend *be, const bw_tensor *logits, const int32_t *labels, const int64_t *sel,
		int64_t nsel, bw_tensor *grad, bw_loss *out);
/* Download a loss result; a bad row or label is BURROW_E_RANGE naming it. */
int bw_loss_read(const bw_backend *be, const bw_loss *dev_loss, bw_loss *host);
/* out [n, dim] = rows idx[0 .. n) of x [*, dim] (x, idx and out device memory of be). */
int bw_gather_rows(const bw_backend *be, const float *x, int64_t dim, const int64_t *idx, int64_t n, float *out);
/* x[idx[k]] += in[k] for the n rows of in [n, dim]; the idx must be distinct (device memory). */
int bw_scatter_add_rows(const bw_backend *be, const float *in, int64_t dim, const int64_t *idx, int64_t n, float *x);
/* out [x rows] (device memory) = each row's argmax */
int bw_argmax(const bw_backend *be, const bw_tensor *x, int32_t *out);
/* The max aggregator and GAT's kernels (bw_ops, from seg_max_fwd on); a backend without
 * the kernel is BURROW_E_UNSUPPORTED. */
/* out [num_dst, d] = elementwise max of x [num_src, d] over each row's sources; arg
 * [num_dst * d] int32 device memory gets the winning source (-1: no source). */
int bw_seg_max(const bw_backend *be, const bw_block *b, const bw_tensor *x, bw_tensor *out, int32_t *arg);
/* gx [num_src, d] = gout [num_dst, d] routed to the winning sources of arg (overwrites). */
int bw_seg_max_backward(const bw_backend *be, const bw_block *b, const bw_tensor *gout, const int32_t *arg,
			bw_tensor *gx);
/* out [rows, heads] = per-head dot products of x [rows, heads * F] with a [heads * F]. */
int bw_head_dot(const bw_backend *be, const bw_tensor *x, int64_t heads, const float *a, bw_tensor *out);
/* gx += g (x) a per head (gx may be NULL: skipped); ga [heads * F] = sum_r g[r, k] x[r, k F + f]. */
int bw_head_dot_backward(const bw_backend *be, const bw_tensor *x, int64_t heads, const float *a, const bw_tensor *g,
			 bw_tensor *gx, float *ga);
/* alpha [slots, heads] = the edge softmax of leaky_relu(s_dst[i] + s_src[j], slope) per row. */
int bw_edge_softmax(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
		    float slope, bw_tensor *alpha);
int bw_edge_softmax_backward(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
			     const bw_tensor *alpha, const bw_tensor *galpha, float slope, bw_tensor *gs_src,
			     bw_tensor *gs_dst);
/* out [num_dst, heads * F] = per head, the alpha-weighted sum of h [num_src, heads * F] over each row's slots. */
int bw_att_aggregate(const bw_backend *be, const bw_block *b, const bw_tensor *alpha, const bw_tensor *h,
		     bw_tensor *out);
int bw_att_aggregate_backward(const bw_backend *be, const bw_block *b, const bw_tensor *alpha, const bw_tensor *h,
			      const bw_tensor *gout, bw_tensor *galpha, bw_tensor *gh);
/* Normalization (bw_ops, from row_norm_fwd on): y = layer norm of x's rows (y may be x),
 * rstd [rows] device memory. */
int bw_row_norm(const bw_backend *be, const bw_tensor *x, float eps, bw_tensor *y, float *rstd);
int bw_row_norm_backward(const bw_backend *be, const bw_tensor *y, const float *rstd, const bw_tensor *gy, bw_tensor *gx);
/* y = batch norm of x's columns with the batch's statistics (mean, var, rstd: [cols] device memory). */
int bw_col_norm(const bw_backend *be, const bw_tensor *x, float eps, bw_tensor *y, float *mean, float *var, float *rstd);
int bw_col_norm_backward(const bw_backend *be, const bw_tensor *y, const float *rstd, const bw_tensor *gy, bw_tensor *gx);
/* y = (x - mean) / sqrt(var + eps) per column, with given statistics. */
int bw_col_norm_apply(const bw_backend *be, const bw_tensor *x, const float *mean, const float *var, float eps,
		      bw_tensor *y);
/* y[r, c] *= s[c] */
int bw_col_scale(const bw_backend *be, bw_tensor *y, const float *s, int64_t n);
/* out[c] = sum_r a[r, c] b[r, c] */
int bw_col_dot(const bw_backend *be, const bw_tensor *a, const bw_tensor *b, float *out);

/* ------------------------------------------------------------ layers (layers.c) */

typedef enum bw_layer_kind { BW_LAYER_LINEAR = 0, BW_LAYER_SAGE = 1, BW_LAYER_GCN = 2, BW_LAYER_GAT = 3 } bw_layer_kind;

/* GAT's LeakyReLU slope on the attention logits (PyG's GATConv default). */
#define BW_GAT_SLOPE 0.2f

/* One layer: parameters and their gradients are views into the model's flat buffers (in
 * the model's device memory).
 *   Linear:  z = x_dst W + b
 *   SAGE:    z = x_dst W_self + aggr_{N(i)}(x) W_neigh + b, aggr mean, sum or max
 *            (elementwise max over the neighbors, PyG's SAGEConv(aggr="max"); 0 without any)
 *   GCN:     z = (norm-aggregate with self loops of x) W + b
 *   GAT:     h = x W [num_src, heads F]; per head k, alpha = the edge softmax over N(i) + {i}
 *            of leaky_relu(<h_i^k, a_dst^k> + <h_j^k, a_src^k>, 0.2), dropped out with
 *            attn_p in training; z_i^k = sum_j alpha_ij^k h_j^k, the heads concatenated
 *            (out = heads F) or averaged (out = F), + b (PyG's GATConv)
 * When in > out, SAGE (mean, sum) and GCN project first and aggregate the narrower result
 * (exact: aggregation and projection commute), as DGL does; max cannot. */
typedef struct bw_layer_shape {
	bw_layer_kind kind;
	int64_t in, out;
	int aggr;          /* SAGE: enum burrow_aggr */
	int64_t heads;     /* GAT: attention heads, >= 1 (concat: they divide out) */
	bool concat;       /* GAT: concatenate the heads (hidden layers) or average them (the output) */
} bw_layer_shape;

typedef struct bw_layer {
	bw_layer_kind kind;
	int64_t in, out;
	int aggr;                  /* SAGE: enum burrow_aggr */
	int64_t heads, f_dim;      /* GAT: heads, and each head's width F */
	bool concat;               /* GAT */
	bool project_first;
	float *w, *w_neigh, *b;    /* [in, out] ([in, heads F] for GAT), [in, out] (SAGE only), [out] */
	float *a_src, *a_dst;      /* GAT: [heads F] each */
	float *gw, *gw_neigh, *gb; /* their gradients */
	float *ga_src, *ga_dst;
	/* set by the model before each forward: GAT's attention dropout (0: none) and its key */
	float attn_p;
	uint64_t attn_key;
	bw_tensor agg;             /* saved: aggregated input [num_dst, in], or projection [num_src, out] (GAT: h) */
	bw_tensor tmp;             /* scratch of the backward pass */
	bw_dbuf arg;               /* SAGE max: the winning source per [num_dst, in] element */
	/* GAT: saved by the forward, scratch of the backward */
	bw_tensor s_src, s_dst, alpha, alpha_drop, cat, gcat, galpha, gs_src, gs_dst;
	bw_tensor mean;            /* [heads F, F]: averages the heads (1/heads where f matches) */
	bw_dbuf attn_mask;         /* [slots, heads] attention dropout mask */
	bool attn_dropped;         /* the last forward dropped attention out */
} bw_layer;

/* Parameters a layer of this shape holds. */
int64_t bw_layer_shape_params(const bw_layer_shape *s);
/* Set up l over params/grads (each bw_layer_shape_params long, borrowed device memory). */
void bw_layer_bind_shape(bw_layer *l, const bw_layer_shape *s, float *params, float *grads);
/* The same for a Linear, mean-SAGE or GCN layer. */
int64_t bw_layer_num_params(bw_layer_kind kind, int64_t in, int64_t out);
void bw_layer_bind(bw_layer *l, bw_layer_kind kind, int64_t in, int64_t out, float *params, float *grads);
/* Glorot-uniform weights drawn from the stream `key`, zero bias, uploaded to dev. */
int bw_layer_init(bw_layer *l, const bw_device *dev, uint64_t key);
/* z [num_dst, out] from x [num_src, in] over block b (Linear reads only x's first num_dst
 * rows); a graph layer's block must be uploaded to be->dev. */
int bw_layer_forward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z);
/* Overlap with a halo exchange: the input rows [split, num_src) arrive late (over the
 * network), and in backward the gradients of those rows leave early. The block is split
 * there (bw_block_split). bw_layer_forward_overlap does everything that needs no late
 * row before it waits (the projection of the rows below split, the early part of every
 * row's aggregation, SAGE's self term), calling poll between chunks; after the wait it
 * adds the late part and finishes. bw_layer_backward_overlap computes the late rows' input
 * gradients first, hands them to post (which sends them), and does the rest (the early
 * rows' input gradients, the weight gradients) while they travel. Results equal the plain
 * passes up to rounding. */
typedef struct bw_overlap {
	int (*poll)(void *ctx);       /* drive progress; < 0 is an error (may be NULL) */
	int (*wait)(void *ctx);       /* forward: block until rows [split, num_src) of x are in place */
	int (*post)(void *ctx, const bw_tensor *gx); /* backward: gx's rows [split, num_src) are final */
	void *ctx;
} bw_overlap;
int bw_layer_forward_overlap(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z,
			     const bw_overlap *ov);
/* Backward with the late rows' input gradients posted early; gx is required. */
int bw_layer_backward_overlap(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x,
			      const bw_tensor *gz, bw_tensor *gx, const bw_overlap *ov);
/* From gz = dL/dz: the parameter gradients (overwritten) and, when gx is not NULL, dL/dx
 * [num_src, in]. x must be the forward's input, unchanged. */
int bw_layer_backward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, const bw_tensor *gz,
		      bw_tensor *gx);
void bw_layer_release(bw_layer *l);

/* ------------------------------------------------------------ models (model.c) */

typedef struct bw_model_cfg {
	int kind;          /* enum burrow_model_kind */
	int layers;        /* 1 .. BURROW_MAX_LAYERS */
	int64_t in_dim, hidden, classes;
	float dropout;     /* applied after each hidden layer's ReLU, in training */
	int aggr;          /* sage: enum burrow_aggr */
	int heads;         /* gat: heads (>= 1, dividing hidden), concatenated in hidden layers, averaged in the last */
	float attn_dropout;/* gat: on the attention coefficients, in training */
	int norm;          /* enum burrow_norm after each hidden layer, before its ReLU */
	bool residual;     /* add a hidden layer's input to its output where the widths match */
} bw_model_cfg;

#define BW_NORM_EPS 1e-5f
#define BW_NORM_MOMENTUM 0.1

/* What one forward/backward step consumes: one block per layer (blocks[0] is the input
 * layer, blocks[l]->num_dst == blocks[l+1]->num_src) and the input feature rows of
 * blocks[0]'s sources, on the model's device. The full graph repeats one block; the
 * sampler + store pipeline makes a batch from its blocks and gathered rows. Everything is
 * borrowed; the forward pass prepares and uploads the blocks. */
typedef struct bw_batch {
	int num_blocks;
	bw_block *blocks[BURROW_MAX_LAYERS];
	bw_tensor x;              /* [blocks[0]->num_src, in_dim] input rows (device) */
	const int32_t *labels;    /* [blocks[L-1]->num_dst] labels of the output rows, -1 = none (device) */
	const int64_t *loss_rows; /* output rows the loss covers (device); NULL: all */
	int64_t num_loss_rows;
	uint64_t epoch, index;    /* the batch's coordinates: its dropout masks are keyed by them */
} bw_batch;

typedef struct bw_model {
	bw_model_cfg cfg;
	const bw_device *dev;        /* where everything below lives (borrowed) */
	bw_layer layer[BURROW_MAX_LAYERS];
	int64_t num_params;
	int64_t param_off[BURROW_MAX_LAYERS + 1]; /* layer l's parameters (its norm's included) are
						     params[param_off[l] .. param_off[l + 1]) */
	float *params, *grads;       /* [num_params] each, owned device memory: one flat buffer (optimizer, allreduce, checkpoint) */
	bw_tensor h[BURROW_MAX_LAYERS];  /* h[l + 1]: layer l's output after ReLU and dropout; h[L] the logits */
	bw_dbuf mask[BURROW_MAX_LAYERS]; /* dropout masks, one byte per element */
	bw_tensor g[2];              /* gradient ping-pong */
	bool dropout_on;             /* the last forward pass used dropout */
	/* normalization of hidden layer l (cfg.norm): gamma, beta in params (their gradients in
	 * grads), the normalized output and its statistics saved for the backward */
	float *ngamma[BURROW_MAX_LAYERS], *nbeta[BURROW_MAX_LAYERS], *gngamma[BURROW_MAX_LAYERS], *gnbeta[BURROW_MAX_LAYERS];
	bw_tensor nx[BURROW_MAX_LAYERS];
	bw_dbuf nstat[BURROW_MAX_LAYERS];    /* rstd (layer: [rows]; batch: mean, var, rstd [cols] each) */
	/* batch norm's running mean and variance, not trained: one flat buffer (checkpoints) */
	int64_t num_state;
	float *state;                    /* [num_state] owned device memory, NULL when none */
	float *rmean[BURROW_MAX_LAYERS], *rvar[BURROW_MAX_LAYERS];
	bw_tensor res[BURROW_MAX_LAYERS];    /* residual: layer l's output plus its input */
	bw_tensor gres;                  /* the output gradient kept for the residual's path */
	/* layer 0's output (before its normalization and activation) kept by an inference pass
	 * under a caller's key (bw_model_infer_layer_keep), with layer 0's saved state from that
	 * same pass; a training forward given the same key (bw_model_forward_keyed) takes it
	 * instead of computing layer 0 again. Any other forward of layer 0 drops it. */
	bw_tensor memo;
	uint64_t memo_key;               /* 0: nothing kept */
} bw_model;

/* What layer l handed to the next: its activation, plus its input with cfg.residual. */
const bw_tensor *bw_model_output(const bw_model *m, int l);

/* Layer l's shape under cfg. */
void bw_model_layer_dims(const bw_model_cfg *cfg, int l, int64_t *in, int64_t *out);
/* Layer l's whole shape (kind, aggregator, heads) under cfg. */
bw_layer_shape bw_model_layer_shape(const bw_model_cfg *cfg, int l);
int bw_model_check_cfg(const bw_model_cfg *cfg);
/* A model on dev (NULL: the CPU) with Glorot weights drawn from seed. */
int bw_model_open(bw_model **out, const bw_device *dev, const bw_model_cfg *cfg, uint64_t seed);
void bw_model_close(bw_model *m);
/* Forward over a batch; *logits points at the model's output [num_out, classes]. In
 * training the hidden layers use dropout keyed by (seed, epoch, index, layer). */
int bw_model_forward(const bw_backend *be, bw_model *m, const bw_batch *b, bool training, uint64_t seed,
		     const bw_tensor **logits);
/* One layer of the forward pass, for callers that fill its input themselves (distributed
 * full-graph training appends halo rows between layers): z = layer l of x over blk, then,
 * for hidden layers, ReLU and (training) dropout keyed by key. *h points at the result,
 * [blk->num_dst, out], held by the model until its next forward pass of layer l. */
int bw_model_layer_forward(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x, bool training,
			   uint64_t key, const bw_tensor **h);
/* The same with a halo exchange in flight (ov may be NULL: plain forward; else blk is split). */
int bw_model_layer_forward_overlap(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x,
				   bool training, uint64_t key, const bw_overlap *ov, const bw_tensor **h);
/* Its backward: gh = dL/dh for layer l's output (rewritten in place for hidden layers);
 * fills layer l's parameter gradients and, when gx is not NULL, dL/dx [blk->num_src, in].
 * x must be the forward's input, unchanged. */
int bw_model_layer_backward(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
			    bw_tensor *gh, bw_tensor *gx);
/* The same with the late rows' input gradients posted early (ov may be NULL: plain). */
int bw_model_layer_backward_overlap(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
				    bw_tensor *gh, bw_tensor *gx, const bw_overlap *ov);
/* Backward from dL/dlogits: fills m->grads. Call after bw_model_forward on the same batch. */
int bw_model_backward(const bw_backend *be, bw_model *m, const bw_batch *b, const bw_tensor *glogits);
/* Zero every gradient (a rank without work joins the all-reduce with zeros). */
int bw_model_zero_grads(bw_model *m);
/* Layer l alone in inference (no dropout), with the ReLU of hidden layers: z from x. */
int bw_model_infer_layer(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z);
/* Can layer 0's output computed in inference stand for the training forward's? Yes unless
 * the layer itself draws randomness in training (GAT's attention dropout): dropout, the
 * normalization and the residual come after the layer's output, which is what is kept. */
bool bw_model_memo_able(const bw_model *m);
/* bw_model_infer_layer that, for l == 0 and keep != 0, also keeps layer 0's output under
 * the key keep. The caller's key must name the weights and the input (x, b) exactly: a
 * training forward handed the same key trusts it to be the same computation. */
int bw_model_infer_layer_keep(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z,
			      uint64_t keep);
/* Drop what layer 0's inference kept: the weights were written by other means than the
 * caller's key counts (a checkpoint, the best epoch's weights). */
void bw_model_memo_drop(bw_model *m);
/* bw_model_forward that, given take != 0 equal to the key of what layer 0's inference kept
 * (and the batch's layer-0 destinations as many as its rows), takes that output instead of
 * computing layer 0; the result is the same, bit for bit, when the key was honest. */
int bw_model_forward_keyed(const bw_backend *be, bw_model *m, const bw_batch *b, bool training, uint64_t seed,
			   uint64_t take, const bw_tensor **logits);
/* FNV-1a over the weights' bytes (downloaded where they are not host memory): equal
 * weights, equal sums (replicas are compared by it). */
int bw_model_checksum(const bw_model *m, uint64_t *out);
/* The dropout key of (seed, epoch, batch, layer). */
uint64_t bw_dropout_key(uint64_t seed, uint64_t epoch, uint64_t batch, int layer);

/* ------------------------------------------------------------ optimizers (optim.c) */

typedef struct bw_optim {
	int kind;             /* enum burrow_optim_kind */
	const bw_device *dev; /* where the moments live */
	double lr, weight_decay, momentum, beta1, beta2, eps;
	int64_t n;            /* parameters */
	int64_t step;         /* steps taken */
	float *m, *v;         /* Adam moments, or SGD momentum in m; [n] each, owned device memory (NULL when unused) */
} bw_optim;

/* An optimizer for n parameters whose state lives on dev (NULL: the CPU). */
int bw_optim_open(bw_optim **out, const bw_device *dev, int kind, int64_t n, double lr, double weight_decay,
		  double momentum);
/* One step: params -= update(grads) (device memory of be). */
int bw_optim_step(const bw_backend *be, bw_optim *o, float *params, const float *grads);
/* Floats of state the optimizer holds per parameter (0, 1 or 2). */
int bw_optim_state_per_param(const bw_optim *o);
void bw_optim_close(bw_optim *o);

#endif /* BURROW_COMPUTE_H */
