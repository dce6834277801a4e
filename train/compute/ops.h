/* ops.h: the dispatchers, the compute layer's kernels as its users call them: each checks
 * its arguments, then calls through the backend's table (backend_impl.h). */
#ifndef BURROW_OPS_H
#define BURROW_OPS_H

#include "backend.h"
#include "block.h"
#include "tensor.h"

#include <stdbool.h>
#include <stdint.h>

/* What an aggregation computes per destination row. */
typedef enum bw_agg {
	BW_AGG_SUM = 0,  /* out_i = sum_{j in N(i)} x_j */
	BW_AGG_MEAN = 1, /* out_i = mean_{j in N(i)} x_j (0 when N(i) is empty) */
	BW_AGG_GCN = 2,  /* out_i = sum_{j in N(i) + {i}} dst_norm_i src_norm_j x_j */
} bw_agg;

/* Adam's settings for one step (bw_adam). */
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

/* Each dispatcher checks its arguments (BURROW_E_INVAL naming the op and the shapes) and
 * calls through be->ops. Tensors are passed by pointer and read as [rows, cols]; every
 * tensor and array is memory of be->dev (checked for tensors). */

/* c = alpha * op(a) op(b) + beta * c; through the backend's spmm when a carries a sparse
 * copy of all of its data (a->sp), b is not transposed and the backend has the slot */
int bw_matmul(const bw_backend *be, const bw_tensor *a, bool trans_a, const bw_tensor *b, bool trans_b, float alpha,
	      float beta, bw_tensor *c);
/* c = alpha [a | a2] b + beta c (trans_a false: a [m, k1], a2 [m, k2], b [k1 + k2, n]) or
 * c = alpha [a | a2]^T b + beta c (trans_a: a [k, m1], a2 [k, m2], b [k, n], c [m1 + m2, n]):
 * one product through the backend's gemm_cat where it has one and neither piece carries a
 * sparse or transposed copy, else two bw_matmul (the second piece's first, then the first
 * added: SAGE's order before issue 38). The same result up to float rounding either way. */
int bw_matmul_cat(const bw_backend *be, const bw_tensor *a, const bw_tensor *a2, bool trans_a, const bw_tensor *b,
		  float alpha, float beta, bw_tensor *c);
/* out [num_dst, d] = aggregate(x [num_src, d]) over whole rows [r0, r1) (r1 < 0: to num_dst).
 * A block with edge weights (bw_block.edge_weight) is aggregated weighted, here and in the
 * backward (bw_aggregate_weighted); its parts are refused. */
int bw_aggregate(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, int64_t r0, int64_t r1,
		 bw_tensor *out);
/* The same over one part of each row (bw_block_split), added to out when add (see
 * bw_ops.agg_fwd): early then late, adding, equals bw_aggregate. */
int bw_aggregate_part(const bw_backend *be, const bw_block *b, bw_block_part part, bw_agg mode, const bw_tensor *x,
		      int64_t r0, int64_t r1, bool add, bw_tensor *out);
/* gx [num_src, d] rows [j0, j1) (j1 < 0: to num_src) = the aggregation's transpose applied to gout [num_dst, d] */
int bw_aggregate_backward(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *gout, int64_t j0,
			  int64_t j1, bw_tensor *gx);
/* bw_aggregate and its backward with the block's edge weights (b->edge_weight, set before
 * bw_block_prepare; bw_ops.agg_w_fwd says what each mode computes); BURROW_E_UNSUPPORTED on
 * a backend without BW_OP_EDGE_WEIGHT, BURROW_E_INVAL for a block without weights. */
int bw_aggregate_weighted(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, int64_t r0,
			  int64_t r1, bw_tensor *out);
int bw_aggregate_weighted_backward(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *gout,
				   int64_t j0, int64_t j1, bw_tensor *gx);
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
/* Multi-label loss, on the host (bce.c): binary cross-entropy with logits, averaged over the
 * known labels (0 or 1; -1 unknown contributes nothing) of the selected rows, in the stable form
 * max(x, 0) - x y + log1p(exp(-|x|)); grad (may be NULL; [rows, tasks]) gets its gradient,
 * (sigmoid(x) - y) / known, 0 elsewhere. labels [rows, tasks] row-major, row r the labels of
 * logits row r; sel (NULL: every row) picks the rows. out: loss, counted (known labels),
 * correct (known labels with (x > 0) == y), or bad / bad_row / bad_value for a selected row
 * outside [0, rows) or a label other than -1, 0, 1 (then nothing else is computed). The terms
 * are summed per row, then the rows in order: the same bits on any number of threads. */
int bw_bce_loss_host(const float *logits, int64_t rows, int64_t tasks, const int8_t *labels, const int64_t *sel,
		     int64_t nsel, float *grad, bw_loss *out, int threads);
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
/* The same with an edge term (GAT's edge features): s_edge [edges, heads], indexed as the
 * block's indices from indptr[0], adds s_edge[e] to the logit of edge e's slot, and the
 * mean of row i's s_edge to its self loop's (0 for a row without edges; PyG's self loops
 * with fill_value "mean"). s_edge NULL: bw_edge_softmax. The backward also writes gs_edge
 * [edges, heads] (overwrites; NULL with s_edge NULL). */
int bw_edge_softmax_e(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
		      const bw_tensor *s_edge, float slope, bw_tensor *alpha);
int bw_edge_softmax_e_backward(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
			       const bw_tensor *s_edge, const bw_tensor *alpha, const bw_tensor *galpha, float slope,
			       bw_tensor *gs_src, bw_tensor *gs_dst, bw_tensor *gs_edge);
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
/* Optimizer steps over n parameters (device memory of be): Adam / AdamW with a's settings,
 * and SGD with momentum (mom may be NULL when momentum is 0); see bw_ops.adam and .sgd. */
int bw_adam(const bw_backend *be, float *p, const float *g, float *m, float *v, int64_t n, const bw_adam_args *a);
int bw_sgd(const bw_backend *be, float *p, const float *g, float *mom, int64_t n, float lr, float momentum,
	   float weight_decay);

#endif /* BURROW_OPS_H */
