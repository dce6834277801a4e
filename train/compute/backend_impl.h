/* backend_impl.h: the backend's implementation: its table of kernels (bw_ops). Included
 * only by the backends (backend_cpu.c, backend_cuda.cu), the registry (backend.c) and the
 * dispatchers (ops.c); everyone else calls the dispatchers (ops.h). */
#ifndef BURROW_BACKEND_IMPL_H
#define BURROW_BACKEND_IMPL_H

#include "ops.h"

/* A compute backend's kernels. Every slot returns a status and receives the backend (its
 * device, threads and context: handles, the compute stream). Every pointer is memory of
 * be->dev; blocks arrive uploaded to it (b->d). The dispatchers (ops.h) check shapes, then
 * call through the table. Slots up to scatter_add_rows are required; the later ones are
 * optional, in families (bw_op, backend.h) that a backend fills whole or leaves NULL: each
 * family's comment says what its dispatchers do then. Backends fill the table with
 * designated initializers (.gemm = cpu_gemm), so reordering it shifts nothing. */
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

	/* ---- sparse input (issue 20), optional (BW_OP_SPMM): NULL (the CUDA backend) makes
	 * bw_matmul multiply the dense matrix with gemm. The gemm for a sparse a (host memory) and b not
	 * transposed: c [m, n] = alpha op(a') b + beta c, where a' is a's first `rows` rows (all of
	 * them, or a view of the first: a mini-batch's destinations) and m = rows (a's cols when
	 * trans_a). Each row of c sums its terms in the order of a's (or its transpose's) entries,
	 * one thread per row: no atomics, no dependence on the threads. */
	int (*spmm)(const bw_backend *be, const bw_sparse *a, int64_t rows, bool trans_a, int64_t n, float alpha,
		    const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

	/* ---- the max aggregator and GAT (issue 17), optional (BW_OP_MAX_AGG, BW_OP_ATTENTION):
	 * NULL makes the dispatcher return BURROW_E_UNSUPPORTED naming the op (tests/test_ops.c
	 * counts a skip), and bw_model_supported refuse a model that needs them at open.
	 * Attention works on a block with a self loop added to every destination row (as
	 * PyG's GATConv does): row i's "slots" are first i itself, then its CSR edges in
	 * order; slot (i, 0) is number (indptr[i] - indptr[0]) + i, slot (i, k >= 1) the
	 * edge indptr[i] + k - 1 at number (indptr[i] + k - 1 - indptr[0]) + i + 1. A block
	 * has bw_block_slots(b) = edges + num_dst slots; per-slot arrays are [slots, heads].
	 * A bipartite block (bw_block.bipartite: the relational layers' typed blocks) has no
	 * self loop: row i's slots are its edges, slot k the edge indptr[i] + k at number
	 * indptr[i] + k - indptr[0]; a row without edges has no slot (its softmax is empty,
	 * its aggregation 0). A backend that fills these slots handles both. */

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
	 * e_s = leaky_relu(s_dst[i, k] + s_src[j, k] (+ s_edge[s, k]), slope) and alpha[s, k] =
	 * exp(e_s) / the sum of exp(e_t) over row i's slots t. s_src [num_src, heads], s_dst
	 * [num_dst, heads], alpha [slots, heads] (overwrites). s_edge [edges, heads] (NULL: no
	 * edge term) is indexed by edge position from indptr[0]; a self loop's edge term is the
	 * mean of its row's (0 without edges). */
	int (*edge_softmax_fwd)(const bw_backend *be, const bw_block *b, const float *s_src, const float *s_dst,
				const float *s_edge, int64_t heads, float slope, float *alpha);
	/* Its backward from galpha = dL/dalpha [slots, heads], alpha the forward's output:
	 * with d_s = alpha_s (galpha_s - sum_t alpha_t galpha_t) times the leaky ReLU's slope at
	 * e_s (1 above 0, else slope), gs_dst[i, k] = sum of d over row i's slots and gs_src[j,
	 * k] = sum of d over the slots whose source is j (both overwrite, whole); with s_edge,
	 * gs_edge[e, k] = d of edge e's slot plus its row's self-loop d over the row's edges
	 * (overwrites, whole). */
	int (*edge_softmax_bwd)(const bw_backend *be, const bw_block *b, const float *s_src, const float *s_dst,
				const float *s_edge, const float *alpha, const float *galpha, int64_t heads, float slope,
				float *gs_src, float *gs_dst, float *gs_edge);
	/* out[i, k f_dim + f] = sum over row i's slots s = (i, j) of alpha[s, k] h[j, k f_dim + f]:
	 * h [num_src, heads f_dim], out [num_dst, heads f_dim] (overwrites). */
	int (*att_agg_fwd)(const bw_backend *be, const bw_block *b, const float *alpha, const float *h, int64_t heads,
			   int64_t f_dim, float *out);
	/* Its backward from gout [num_dst, heads f_dim]: galpha[s, k] = sum_f gout[i, k f_dim + f]
	 * h[j, k f_dim + f] [slots, heads] and gh[j] = sum over the slots (i, j) of alpha[s, k]
	 * gout[i] per head [num_src, heads f_dim]; both overwrite, whole. */
	int (*att_agg_bwd)(const bw_backend *be, const bw_block *b, const float *alpha, const float *h, const float *gout,
			   int64_t heads, int64_t f_dim, float *galpha, float *gh);

	/* ---- aggregation with edge weights (issue 34), optional (BW_OP_EDGE_WEIGHT): NULL makes
	 * the dispatchers return BURROW_E_UNSUPPORTED. The block's weights w_e (b->d.edge_weight,
	 * and b->d.t_weight in the transpose's order for the backward) scale each edge's term:
	 * SUM out_i = sum_e w_e x_j; MEAN the same over row i's edge count (0 for none); GCN
	 * out_i = dst_norm_i (src_norm_i x_i + sum_e w_e src_norm_j x_j). Whole rows, overwriting. */
	int (*agg_w_fwd)(const bw_backend *be, const bw_block *b, bw_agg mode, const float *x, int64_t dim, int64_t r0,
			 int64_t r1, float *out);
	/* gx[j] for sources [j0, j1) = d(sum of gout . out)/d x_j (the weights are data); overwrites */
	int (*agg_w_bwd)(const bw_backend *be, const bw_block *b, bw_agg mode, const float *gout, int64_t dim, int64_t j0,
			 int64_t j1, float *gx);

	/* ---- normalization between layers (issue 17), optional like the slots above
	 * (BW_OP_LAYER_NORM: row_norm_*, col_scale, col_dot; BW_OP_BATCH_NORM: col_norm_*,
	 * col_scale, col_dot) ---- */
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

	/* ---- one product over two operands side by side (issue 38), optional: NULL makes
	 * bw_matmul_cat run two gemms (the second piece's first). Not transposed: c [m, n] =
	 * alpha [a | a2] b + beta c, a [m, split], a2 [m, k - split], b [k, n]; transposed: c =
	 * alpha [a | a2]^T b + beta c, a [k, split], a2 [k, m - split], b [k, n] (c's first split
	 * rows from a). SAGE's self and neighbor terms as one product with K = 2 in (one pass
	 * over c), and its two weight gradients as one (one pass over gz). */
	int (*gemm_cat)(const bw_backend *be, bool trans_a, int64_t m, int64_t n, int64_t k, int64_t split, float alpha,
			const float *a, int64_t lda, const float *a2, int64_t lda2, const float *b, int64_t ldb, float beta,
			float *c, int64_t ldc);
} bw_ops;

/* Test hook: when set, bw_backend_open gives the backend it opens this table instead of its
 * own (tests: a table without a kernel family, to see a model refused at open). */
extern const bw_ops *bw_backend_ops_hook;

#endif /* BURROW_BACKEND_IMPL_H */
