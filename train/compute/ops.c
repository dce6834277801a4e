/* ops.c: the dispatchers: check shapes and arguments, then call through the backend's table. */
#include "train.h"

#define SHAPE(t) (long long)(t)->rows, (long long)(t)->cols

int bw_matmul(const bw_backend *be, const bw_tensor *a, bool ta, const bw_tensor *b, bool tb, float alpha,
	      float beta, bw_tensor *c)
{
	const int64_t m = ta ? a->cols : a->rows, k = ta ? a->rows : a->cols;
	const int64_t kb = tb ? b->cols : b->rows, n = tb ? b->rows : b->cols;
	if (k != kb || c->rows != m || c->cols != n)
		return bw_err(BURROW_E_INVAL, "matmul: [%lld, %lld]%s x [%lld, %lld]%s into [%lld, %lld]", SHAPE(a),
			      ta ? "^T" : "", SHAPE(b), tb ? "^T" : "", SHAPE(c));
	if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "matmul: a dimension exceeds 2^31 - 1");
	be->ops->gemm(be, ta, tb, m, n, k, alpha, a->data, a->cols, b->data, b->cols, beta, c->data, c->cols);
	return 0;
}

static int check_rows(const char *op, const int64_t *rows, int64_t n, int64_t limit)
{
	if (!rows)
		return 0;
	if (n < 0)
		return bw_err(BURROW_E_INVAL, "%s: negative row count", op);
	for (int64_t k = 0; k < n; k++)
		if (rows[k] < 0 || rows[k] >= limit)
			return bw_err(BURROW_E_RANGE, "%s: row %lld outside [0, %lld)", op, (long long)rows[k],
				      (long long)limit);
	return 0;
}

int bw_aggregate(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, const int64_t *rows,
		 int64_t nrows, bw_tensor *out)
{
	return bw_aggregate_edges(be, b, mode, x, rows, nrows, NULL, NULL, false, out);
}

int bw_aggregate_edges(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, const int64_t *rows,
		       int64_t nrows, const int64_t *lo, const int64_t *hi, bool add, bw_tensor *out)
{
	if (x->rows != b->num_src || out->rows != b->num_dst || out->cols != x->cols)
		return bw_err(BURROW_E_INVAL, "aggregate: block %lld -> %lld, input [%lld, %lld], output [%lld, %lld]",
			      (long long)b->num_src, (long long)b->num_dst, SHAPE(x), SHAPE(out));
	if (mode == BW_AGG_GCN && (!b->dst_norm || !b->src_norm))
		return bw_err(BURROW_E_INVAL, "aggregate: GCN needs the block's norms (bw_block_prepare)");
	if (mode < BW_AGG_SUM || mode > BW_AGG_GCN)
		return bw_err(BURROW_E_INVAL, "aggregate: unknown mode %d", (int)mode);
	if (!lo != !hi || (add && !lo))
		return bw_err(BURROW_E_INVAL, "aggregate: edge ranges need both ends, and adding needs them");
	int st = check_rows("aggregate", rows, nrows, b->num_dst);
	if (!st)
		be->ops->agg_fwd(be, b, mode, x->data, x->cols, rows, nrows, lo, hi, add, out->data);
	return st;
}

int bw_aggregate_backward(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *gout,
			  const int64_t *srcs, int64_t nsrcs, bw_tensor *gx)
{
	if (gout->rows != b->num_dst || gx->rows != b->num_src || gx->cols != gout->cols)
		return bw_err(BURROW_E_INVAL,
			      "aggregate backward: block %lld -> %lld, gradient [%lld, %lld], input gradient [%lld, %lld]",
			      (long long)b->num_src, (long long)b->num_dst, SHAPE(gout), SHAPE(gx));
	if (!b->t_indptr)
		return bw_err(BURROW_E_INVAL, "aggregate backward: the block has no transpose (bw_block_prepare)");
	if (mode == BW_AGG_GCN && (!b->dst_norm || !b->src_norm))
		return bw_err(BURROW_E_INVAL, "aggregate backward: GCN needs the block's norms (bw_block_prepare)");
	if (mode < BW_AGG_SUM || mode > BW_AGG_GCN)
		return bw_err(BURROW_E_INVAL, "aggregate backward: unknown mode %d", (int)mode);
	int st = check_rows("aggregate backward", srcs, nsrcs, b->num_src);
	if (!st)
		be->ops->agg_bwd(be, b, mode, gout->data, gout->cols, srcs, nsrcs, gx->data);
	return st;
}

int bw_bias_add(const bw_backend *be, bw_tensor *y, const float *bias, int64_t n)
{
	if (n != y->cols)
		return bw_err(BURROW_E_INVAL, "bias add: %lld biases for [%lld, %lld]", (long long)n, SHAPE(y));
	be->ops->bias_add(be, y->data, y->rows, y->cols, bias);
	return 0;
}

int bw_col_sum(const bw_backend *be, const bw_tensor *g, float *out, int64_t n)
{
	if (n != g->cols)
		return bw_err(BURROW_E_INVAL, "column sum: %lld outputs for [%lld, %lld]", (long long)n, SHAPE(g));
	be->ops->col_sum(be, g->data, g->rows, g->cols, out);
	return 0;
}

int bw_relu(const bw_backend *be, bw_tensor *x)
{
	be->ops->relu_fwd(be, x->data, x->rows * x->cols);
	return 0;
}

int bw_relu_backward(const bw_backend *be, bw_tensor *g, const bw_tensor *y)
{
	if (g->rows != y->rows || g->cols != y->cols)
		return bw_err(BURROW_E_INVAL, "relu backward: gradient [%lld, %lld], output [%lld, %lld]", SHAPE(g), SHAPE(y));
	be->ops->relu_bwd(be, g->data, y->data, g->rows * g->cols);
	return 0;
}

int bw_dropout(const bw_backend *be, bw_tensor *x, uint8_t *mask, float p, uint64_t key)
{
	if (!(p >= 0.0f && p < 1.0f))
		return bw_err(BURROW_E_INVAL, "dropout: probability %g outside [0, 1)", (double)p);
	be->ops->dropout_fwd(be, x->data, mask, x->rows, x->cols, p, key);
	return 0;
}

int bw_dropout_backward(const bw_backend *be, bw_tensor *g, const uint8_t *mask, float p)
{
	if (!(p >= 0.0f && p < 1.0f))
		return bw_err(BURROW_E_INVAL, "dropout backward: probability %g outside [0, 1)", (double)p);
	be->ops->dropout_bwd(be, g->data, mask, g->rows * g->cols, p);
	return 0;
}

int bw_axpy(const bw_backend *be, float alpha, const bw_tensor *x, bw_tensor *y)
{
	if (x->rows != y->rows || x->cols != y->cols)
		return bw_err(BURROW_E_INVAL, "axpy: [%lld, %lld] into [%lld, %lld]", SHAPE(x), SHAPE(y));
	be->ops->axpy(be, x->rows * x->cols, alpha, x->data, y->data);
	return 0;
}

int bw_nll_loss(const bw_backend *be, const bw_tensor *logits, const int32_t *labels, const int64_t *sel,
		int64_t nsel, bw_tensor *grad, double *loss, int64_t *counted, int64_t *correct)
{
	if (grad && (grad->rows != logits->rows || grad->cols != logits->cols))
		return bw_err(BURROW_E_INVAL, "loss: gradient [%lld, %lld] for logits [%lld, %lld]", SHAPE(grad),
			      SHAPE(logits));
	if (logits->cols < 1)
		return bw_err(BURROW_E_INVAL, "loss: logits have no classes");
	int st = check_rows("loss", sel, nsel, logits->rows);
	if (st)
		return st;
	const int64_t n = sel ? nsel : logits->rows;
	for (int64_t k = 0; k < n; k++) {
		const int32_t y = labels[sel ? sel[k] : k];
		if (y >= logits->cols)
			return bw_err(BURROW_E_RANGE, "loss: label %d of output row %lld outside [0, %lld)", y,
				      (long long)(sel ? sel[k] : k), (long long)logits->cols);
	}
	*loss = be->ops->nll_loss(be, logits->data, logits->rows, logits->cols, labels, sel, nsel,
				  grad ? grad->data : NULL, counted, correct);
	return 0;
}

int bw_argmax(const bw_backend *be, const bw_tensor *x, int32_t *out)
{
	if (x->cols < 1)
		return bw_err(BURROW_E_INVAL, "argmax: no columns");
	be->ops->argmax(be, x->data, x->rows, x->cols, out);
	return 0;
}
