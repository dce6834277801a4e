/* ops.c: the dispatchers: check shapes, devices and arguments, then call through the
 * backend's table and pass its status on. They read nothing in device memory. */
#include "backend_impl.h"
#include "opcount.h"

#define SHAPE(t) (long long)(t)->rows, (long long)(t)->cols

/* Each dispatcher counts its kernel with BW_OP_RETURN (opcount.h): its class and its FLOPs
 * from the shapes. An aggregation's are 2 per term and column, a term an edge of the rows
 * computed (a GCN self loop one more); elementwise and optimizer ops count a fixed number
 * per element (docs/bench.md). */
#define ELEMS(t) ((double)(t)->rows * (double)(t)->cols)

/* Tensors must live on the backend's device. */
static int on_device(const bw_backend *be, const char *op, const bw_tensor *t)
{
	if (bw_device_or_cpu(t->dev) != be->dev)
		return bw_err(BURROW_E_INVAL, "%s: a tensor on %s given to the %s backend", op,
			      bw_device_or_cpu(t->dev)->name, be->ops->name);
	return 0;
}

#define ON(t, op)                                       \
	do {                                            \
		int st_ = on_device(be, op, t);         \
		if (st_)                                \
			return st_;                     \
	} while (0)

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
	ON(a, "matmul");
	ON(b, "matmul");
	ON(c, "matmul");
	const bw_sparse *sp = a->sp;
	/* a's sparse copy, of a or of rows that start with a's (a view of its first rows) */
	if (sp && be->ops->spmm && !tb && sp->dense == a->data && sp->rows >= a->rows && sp->cols == a->cols)
		BW_OP_RETURN(BURROW_OP_PRODUCT, 2.0 * (double)(sp->indptr[a->rows] - sp->indptr[0]) * (double)n,
			     be->ops->spmm(be, sp, a->rows, ta, n, alpha, b->data, b->cols, beta, c->data, c->cols));
	const bw_transposed *tr = a->tr;
	/* a^T multiplied as the rows of its transposed copy */
	if (ta && tr && be->gemm_wants_transposed && tr->dense == a->data && tr->rows == a->rows && tr->cols == a->cols)
		BW_OP_RETURN(BURROW_OP_PRODUCT, 2.0 * (double)m * (double)n * (double)k,
			     be->ops->gemm(be, false, tb, m, n, k, alpha, tr->t, a->rows, b->data, b->cols, beta, c->data,
					   c->cols));
	BW_OP_RETURN(BURROW_OP_PRODUCT, 2.0 * (double)m * (double)n * (double)k,
		     be->ops->gemm(be, ta, tb, m, n, k, alpha, a->data, a->cols, b->data, b->cols, beta, c->data, c->cols));
}

/* The block is on the backend's device with what the mode and the part need. */
static int check_block(const bw_backend *be, const char *op, const bw_block *b, bw_agg mode, bw_block_part part,
		       bool backward)
{
	if (b->d.dev != be->dev)
		return bw_err(BURROW_E_INVAL, "%s: the block is not on %s (bw_block_upload)", op, be->dev->name);
	if (mode < BW_AGG_SUM || mode > BW_AGG_GCN)
		return bw_err(BURROW_E_INVAL, "%s: unknown mode %d", op, (int)mode);
	if (mode == BW_AGG_GCN && b->bipartite)
		return bw_err(BURROW_E_INVAL, "%s: GCN aggregation over a bipartite block (its self term needs destination i "
					      "to be source i)", op);
	if (mode == BW_AGG_GCN && !b->d.has_norms)
		return bw_err(BURROW_E_INVAL, "%s: GCN needs the block's norms (bw_block_prepare)", op);
	if (backward && !b->d.has_transpose)
		return bw_err(BURROW_E_INVAL, "%s: the block has no transpose (bw_block_prepare)", op);
	if (part < BW_PART_ALL || part > BW_PART_LATE)
		return bw_err(BURROW_E_INVAL, "%s: unknown part %d", op, (int)part);
	if (part != BW_PART_ALL && !b->d.has_split)
		return bw_err(BURROW_E_INVAL, "%s: the block has no early / late split (bw_block_split)", op);
	return 0;
}

static int check_range(const char *op, int64_t r0, int64_t *r1, int64_t limit)
{
	if (*r1 < 0)
		*r1 = limit;
	if (r0 < 0 || r0 > *r1 || *r1 > limit)
		return bw_err(BURROW_E_RANGE, "%s: rows [%lld, %lld) outside [0, %lld)", op, (long long)r0, (long long)*r1,
			      (long long)limit);
	return 0;
}

/* Terms of the aggregation of rows [r0, r1) over a part: its edges there, plus a GCN self
 * loop per row in the pass that overwrites. */
static double fwd_terms(const bw_block *b, bw_block_part part, bw_agg mode, int64_t r0, int64_t r1, bool add)
{
	const int64_t *ip = part == BW_PART_ALL ? b->indptr : b->part_indptr[part - 1];
	return (double)(ip[r1] - ip[r0] + (mode == BW_AGG_GCN && !add ? r1 - r0 : 0));
}

/* Terms of the backward into sources [j0, j1): their edges in the transpose, plus a GCN self
 * loop for each of them that is a destination. */
static double bwd_terms(const bw_block *b, bw_agg mode, int64_t j0, int64_t j1)
{
	const int64_t self = mode == BW_AGG_GCN ? BW_MAX(BW_MIN(j1, b->num_dst) - j0, 0) : 0;
	return (double)(b->t_indptr[j1] - b->t_indptr[j0] + self);
}

int bw_aggregate(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, int64_t r0, int64_t r1,
		 bw_tensor *out)
{
	return bw_aggregate_part(be, b, BW_PART_ALL, mode, x, r0, r1, false, out);
}

int bw_aggregate_part(const bw_backend *be, const bw_block *b, bw_block_part part, bw_agg mode, const bw_tensor *x,
		      int64_t r0, int64_t r1, bool add, bw_tensor *out)
{
	if (x->rows != b->num_src || out->rows != b->num_dst || out->cols != x->cols)
		return bw_err(BURROW_E_INVAL, "aggregate: block %lld -> %lld, input [%lld, %lld], output [%lld, %lld]",
			      (long long)b->num_src, (long long)b->num_dst, SHAPE(x), SHAPE(out));
	int st;
	if (b->d.edge_weight) { /* a weighted block: every aggregation of it is weighted */
		if (part != BW_PART_ALL || add)
			return bw_err(BURROW_E_UNSUPPORTED, "aggregate: edge weights with the early / late split (halo "
				      "overlap) are not built");
		return bw_aggregate_weighted(be, b, mode, x, r0, r1, out);
	}
	if ((st = check_block(be, "aggregate", b, mode, part, false)) ||
	    (st = check_range("aggregate", r0, &r1, b->num_dst)))
		return st;
	ON(x, "aggregate");
	ON(out, "aggregate");
	if (r0 >= r1)
		return 0;
	BW_OP_RETURN(BURROW_OP_AGGREGATE, 2.0 * fwd_terms(b, part, mode, r0, r1, add) * (double)x->cols,
		     be->ops->agg_fwd(be, b, part, mode, x->data, x->cols, r0, r1, add, out->data));
}

int bw_aggregate_backward(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *gout, int64_t j0,
			  int64_t j1, bw_tensor *gx)
{
	if (gout->rows != b->num_dst || gx->rows != b->num_src || gx->cols != gout->cols)
		return bw_err(BURROW_E_INVAL,
			      "aggregate backward: block %lld -> %lld, gradient [%lld, %lld], input gradient [%lld, %lld]",
			      (long long)b->num_src, (long long)b->num_dst, SHAPE(gout), SHAPE(gx));
	int st;
	if (b->d.edge_weight)
		return bw_aggregate_weighted_backward(be, b, mode, gout, j0, j1, gx);
	if ((st = check_block(be, "aggregate backward", b, mode, BW_PART_ALL, true)) ||
	    (st = check_range("aggregate backward", j0, &j1, b->num_src)))
		return st;
	ON(gout, "aggregate backward");
	ON(gx, "aggregate backward");
	if (j0 >= j1)
		return 0;
	BW_OP_RETURN(BURROW_OP_AGGREGATE, 2.0 * bwd_terms(b, mode, j0, j1) * (double)gout->cols,
		     be->ops->agg_bwd(be, b, mode, gout->data, gout->cols, j0, j1, gx->data));
}

/* What the weighted aggregation needs beyond the unweighted one's checks. */
static int check_weights(const bw_backend *be, const char *op, const bw_block *b, bool backward)
{
	if (!bw_backend_supports(be, BW_OP_EDGE_WEIGHT))
		return bw_err(BURROW_E_UNSUPPORTED, "%s: the %s backend has no %s", op, bw_backend_name(be),
			      bw_op_name(BW_OP_EDGE_WEIGHT));
	if (!b->d.edge_weight || (backward && !b->d.t_weight))
		return bw_err(BURROW_E_INVAL, "%s: the block has no edge weights%s", op,
			      backward ? " in its transpose (set them before bw_block_prepare)" : "");
	return 0;
}

int bw_aggregate_weighted(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, int64_t r0,
			  int64_t r1, bw_tensor *out)
{
	if (x->rows != b->num_src || out->rows != b->num_dst || out->cols != x->cols)
		return bw_err(BURROW_E_INVAL, "weighted aggregate: block %lld -> %lld, input [%lld, %lld], output [%lld, %lld]",
			      (long long)b->num_src, (long long)b->num_dst, SHAPE(x), SHAPE(out));
	int st;
	if ((st = check_block(be, "weighted aggregate", b, mode, BW_PART_ALL, false)) ||
	    (st = check_weights(be, "weighted aggregate", b, false)) ||
	    (st = check_range("weighted aggregate", r0, &r1, b->num_dst)))
		return st;
	ON(x, "weighted aggregate");
	ON(out, "weighted aggregate");
	if (r0 >= r1)
		return 0;
	BW_OP_RETURN(BURROW_OP_AGGREGATE, 2.0 * fwd_terms(b, BW_PART_ALL, mode, r0, r1, false) * (double)x->cols,
		     be->ops->agg_w_fwd(be, b, mode, x->data, x->cols, r0, r1, out->data));
}

int bw_aggregate_weighted_backward(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *gout,
				   int64_t j0, int64_t j1, bw_tensor *gx)
{
	if (gout->rows != b->num_dst || gx->rows != b->num_src || gx->cols != gout->cols)
		return bw_err(BURROW_E_INVAL, "weighted aggregate backward: block %lld -> %lld, gradient [%lld, %lld], input "
			      "gradient [%lld, %lld]", (long long)b->num_src, (long long)b->num_dst, SHAPE(gout), SHAPE(gx));
	int st;
	if ((st = check_block(be, "weighted aggregate backward", b, mode, BW_PART_ALL, true)) ||
	    (st = check_weights(be, "weighted aggregate backward", b, true)) ||
	    (st = check_range("weighted aggregate backward", j0, &j1, b->num_src)))
		return st;
	ON(gout, "weighted aggregate backward");
	ON(gx, "weighted aggregate backward");
	if (j0 >= j1)
		return 0;
	BW_OP_RETURN(BURROW_OP_AGGREGATE, 2.0 * bwd_terms(b, mode, j0, j1) * (double)gout->cols,
		     be->ops->agg_w_bwd(be, b, mode, gout->data, gout->cols, j0, j1, gx->data));
}

int bw_bias_add(const bw_backend *be, bw_tensor *y, const float *bias, int64_t n)
{
	if (n != y->cols)
		return bw_err(BURROW_E_INVAL, "bias add: %lld biases for [%lld, %lld]", (long long)n, SHAPE(y));
	ON(y, "bias add");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(y), be->ops->bias_add(be, y->data, y->rows, y->cols, bias));
}

int bw_col_sum(const bw_backend *be, const bw_tensor *g, float *out, int64_t n)
{
	if (n != g->cols)
		return bw_err(BURROW_E_INVAL, "column sum: %lld outputs for [%lld, %lld]", (long long)n, SHAPE(g));
	ON(g, "column sum");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(g), be->ops->col_sum(be, g->data, g->rows, g->cols, out));
}

int bw_relu(const bw_backend *be, bw_tensor *x)
{
	ON(x, "relu");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(x), be->ops->relu_fwd(be, x->data, x->rows * x->cols));
}

int bw_relu_backward(const bw_backend *be, bw_tensor *g, const bw_tensor *y)
{
	if (g->rows != y->rows || g->cols != y->cols)
		return bw_err(BURROW_E_INVAL, "relu backward: gradient [%lld, %lld], output [%lld, %lld]", SHAPE(g), SHAPE(y));
	ON(g, "relu backward");
	ON(y, "relu backward");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(g), be->ops->relu_bwd(be, g->data, y->data, g->rows * g->cols));
}

int bw_dropout(const bw_backend *be, bw_tensor *x, uint8_t *mask, float p, uint64_t key)
{
	if (!(p >= 0.0f && p < 1.0f))
		return bw_err(BURROW_E_INVAL, "dropout: probability %g outside [0, 1)", (double)p);
	ON(x, "dropout");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(x), be->ops->dropout_fwd(be, x->data, mask, x->rows, x->cols, p, key));
}

int bw_dropout_backward(const bw_backend *be, bw_tensor *g, const uint8_t *mask, float p)
{
	if (!(p >= 0.0f && p < 1.0f))
		return bw_err(BURROW_E_INVAL, "dropout backward: probability %g outside [0, 1)", (double)p);
	ON(g, "dropout backward");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(g), be->ops->dropout_bwd(be, g->data, mask, g->rows * g->cols, p));
}

int bw_axpy(const bw_backend *be, float alpha, const bw_tensor *x, bw_tensor *y)
{
	if (x->rows != y->rows || x->cols != y->cols)
		return bw_err(BURROW_E_INVAL, "axpy: [%lld, %lld] into [%lld, %lld]", SHAPE(x), SHAPE(y));
	ON(x, "axpy");
	ON(y, "axpy");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 2.0 * ELEMS(x), be->ops->axpy(be, x->rows * x->cols, alpha, x->data, y->data));
}

int bw_gather_rows(const bw_backend *be, const float *x, int64_t dim, const int64_t *idx, int64_t n, float *out)
{
	if (dim < 1 || n < 0 || (n && (!x || !idx || !out)))
		return bw_err(BURROW_E_INVAL, "gather rows: %lld rows of %lld floats", (long long)n, (long long)dim);
	if (!n)
		return 0;
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 0.0, be->ops->gather_rows(be, x, dim, idx, n, out));
}

int bw_scatter_add_rows(const bw_backend *be, const float *in, int64_t dim, const int64_t *idx, int64_t n, float *x)
{
	if (dim < 1 || n < 0 || (n && (!x || !idx || !in)))
		return bw_err(BURROW_E_INVAL, "scatter-add rows: %lld rows of %lld floats", (long long)n, (long long)dim);
	if (!n)
		return 0;
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, (double)n * (double)dim, be->ops->scatter_add_rows(be, in, dim, idx, n, x));
}

int bw_scale(const bw_backend *be, float alpha, bw_tensor *x)
{
	ON(x, "scale");
	if (x->rows * x->cols > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "scale: more than 2^31 - 1 elements");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(x), be->ops->scale(be, x->rows * x->cols, alpha, x->data));
}

int bw_nll_loss(const bw_backend *be, const bw_tensor *logits, const int32_t *labels, const int64_t *sel,
		int64_t nsel, bw_tensor *grad, bw_loss *out)
{
	if (grad && (grad->rows != logits->rows || grad->cols != logits->cols))
		return bw_err(BURROW_E_INVAL, "loss: gradient [%lld, %lld] for logits [%lld, %lld]", SHAPE(grad),
			      SHAPE(logits));
	if (logits->cols < 1)
		return bw_err(BURROW_E_INVAL, "loss: logits have no classes");
	if (sel && nsel < 0)
		return bw_err(BURROW_E_INVAL, "loss: negative row count");
	ON(logits, "loss");
	if (grad)
		ON(grad, "loss");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 4.0 * (double)(sel ? nsel : logits->rows) * (double)logits->cols,
		     be->ops->nll_loss(be, logits->data, logits->rows, logits->cols, labels, sel, nsel,
				       grad ? grad->data : NULL, out));
}

int bw_loss_read(const bw_backend *be, const bw_loss *dev_loss, bw_loss *host)
{
	int st = bw_device_download(be->dev, host, dev_loss, sizeof *host);
	if (st)
		return st;
	if (host->bad && host->bad_is_row)
		return bw_err(BURROW_E_RANGE, "loss: selected row %lld (entry %lld) outside [0, %lld)",
			      (long long)host->bad_value, (long long)host->bad_row, (long long)host->rows);
	if (host->bad)
		return bw_err(BURROW_E_RANGE, "loss: label %lld of output row %lld outside [0, %lld)",
			      (long long)host->bad_value, (long long)host->bad_row, (long long)host->classes);
	return 0;
}

int bw_argmax(const bw_backend *be, const bw_tensor *x, int32_t *out)
{
	if (x->cols < 1)
		return bw_err(BURROW_E_INVAL, "argmax: no columns");
	ON(x, "argmax");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(x), be->ops->argmax(be, x->data, x->rows, x->cols, out));
}

int bw_adam(const bw_backend *be, float *p, const float *g, float *m, float *v, int64_t n, const bw_adam_args *a)
{
	if (n < 0 || a->step < 1)
		return bw_err(BURROW_E_INVAL, "adam: %lld parameters at step %lld", (long long)n, (long long)a->step);
	BW_OP_RETURN(BURROW_OP_OPTIMIZER, 12.0 * (double)n, be->ops->adam(be, p, g, m, v, n, a));
}

int bw_sgd(const bw_backend *be, float *p, const float *g, float *mom, int64_t n, float lr, float momentum,
	   float weight_decay)
{
	if (n < 0)
		return bw_err(BURROW_E_INVAL, "sgd: %lld parameters", (long long)n);
	if (momentum != 0 && !mom)
		return bw_err(BURROW_E_INVAL, "sgd: momentum %g without its buffer", (double)momentum);
	BW_OP_RETURN(BURROW_OP_OPTIMIZER, 4.0 * (double)n, be->ops->sgd(be, p, g, mom, n, lr, momentum, weight_decay));
}

/* ------------------------------------------------------------ the max aggregator and GAT */

/* A slot a backend may leave NULL: BURROW_E_UNSUPPORTED naming the op and the backend. */
#define SLOT(slot, op)                                                                                    \
	do {                                                                                              \
		if (!be->ops->slot)                                                                       \
			return bw_err(BURROW_E_UNSUPPORTED, "%s: the %s backend has no %s kernel", op,    \
				      be->ops->name, #slot);                                              \
	} while (0)

static int block_on(const bw_backend *be, const char *op, const bw_block *b)
{
	if (b->d.dev != be->dev)
		return bw_err(BURROW_E_INVAL, "%s: the block is not on %s (bw_block_upload)", op, be->dev->name);
	return 0;
}

#define BLOCK_ON(b, op)                                 \
	do {                                            \
		int st_ = block_on(be, op, b);          \
		if (st_)                                \
			return st_;                     \
	} while (0)

int bw_seg_max(const bw_backend *be, const bw_block *b, const bw_tensor *x, bw_tensor *out, int32_t *arg)
{
	if (x->rows != b->num_src || out->rows != b->num_dst || out->cols != x->cols || !arg)
		return bw_err(BURROW_E_INVAL, "max aggregate: block %lld -> %lld, input [%lld, %lld], output [%lld, %lld]%s",
			      (long long)b->num_src, (long long)b->num_dst, SHAPE(x), SHAPE(out), arg ? "" : ", no argmax");
	SLOT(seg_max_fwd, "max aggregate");
	BLOCK_ON(b, "max aggregate");
	ON(x, "max aggregate");
	ON(out, "max aggregate");
	BW_OP_RETURN(BURROW_OP_AGGREGATE, (double)(b->indptr[b->num_dst] - b->indptr[0]) * (double)x->cols,
		     be->ops->seg_max_fwd(be, b, x->data, x->cols, out->data, arg));
}

int bw_seg_max_backward(const bw_backend *be, const bw_block *b, const bw_tensor *gout, const int32_t *arg,
			bw_tensor *gx)
{
	if (gout->rows != b->num_dst || gx->rows != b->num_src || gx->cols != gout->cols || !arg)
		return bw_err(BURROW_E_INVAL,
			      "max aggregate backward: block %lld -> %lld, gradient [%lld, %lld], input gradient [%lld, %lld]",
			      (long long)b->num_src, (long long)b->num_dst, SHAPE(gout), SHAPE(gx));
	SLOT(seg_max_bwd, "max aggregate backward");
	ON(gout, "max aggregate backward");
	ON(gx, "max aggregate backward");
	BW_OP_RETURN(BURROW_OP_AGGREGATE, ELEMS(gout), be->ops->seg_max_bwd(be, b->num_dst, b->num_src, gout->data, arg, gout->cols, gx->data));
}

static int check_heads(const char *op, const bw_tensor *x, int64_t heads)
{
	if (heads < 1 || x->cols % heads)
		return bw_err(BURROW_E_INVAL, "%s: %lld columns do not split into %lld heads", op, (long long)x->cols,
			      (long long)heads);
	return 0;
}

int bw_head_dot(const bw_backend *be, const bw_tensor *x, int64_t heads, const float *a, bw_tensor *out)
{
	int st;
	if ((st = check_heads("head dot", x, heads)))
		return st;
	if (out->rows != x->rows || out->cols != heads)
		return bw_err(BURROW_E_INVAL, "head dot: input [%lld, %lld] with %lld heads into [%lld, %lld]", SHAPE(x),
			      (long long)heads, SHAPE(out));
	SLOT(head_dot, "head dot");
	ON(x, "head dot");
	ON(out, "head dot");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 2.0 * ELEMS(x), be->ops->head_dot(be, x->data, x->rows, heads, x->cols / heads, a, out->data));
}

int bw_head_dot_backward(const bw_backend *be, const bw_tensor *x, int64_t heads, const float *a, const bw_tensor *g,
			 bw_tensor *gx, float *ga)
{
	int st;
	if ((st = check_heads("head dot backward", x, heads)))
		return st;
	if (g->rows != x->rows || g->cols != heads || (gx && (gx->rows != x->rows || gx->cols != x->cols)))
		return bw_err(BURROW_E_INVAL, "head dot backward: input [%lld, %lld], %lld heads, gradient [%lld, %lld]",
			      SHAPE(x), (long long)heads, SHAPE(g));
	SLOT(head_dot_bwd, "head dot backward");
	ON(x, "head dot backward");
	ON(g, "head dot backward");
	if (gx)
		ON(gx, "head dot backward");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 4.0 * ELEMS(x),
		     be->ops->head_dot_bwd(be, x->data, x->rows, heads, x->cols / heads, a, g->data, gx ? gx->data : NULL, ga));
}

/* s_src [num_src, H], s_dst [num_dst, H], alpha-shaped [slots, H] tensors agree with the block. */
static int check_attention(const char *op, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
			   const bw_tensor *alpha)
{
	const int64_t h = s_src->cols;
	if (h < 1 || s_src->rows != b->num_src || s_dst->rows != b->num_dst || s_dst->cols != h ||
	    alpha->rows != bw_block_slots(b) || alpha->cols != h)
		return bw_err(BURROW_E_INVAL,
			      "%s: block %lld -> %lld with %lld slots, scores [%lld, %lld] and [%lld, %lld], "
			      "attention [%lld, %lld]",
			      op, (long long)b->num_src, (long long)b->num_dst, (long long)bw_block_slots(b), SHAPE(s_src),
			      SHAPE(s_dst), SHAPE(alpha));
	return 0;
}

/* An edge term's scores against the block: [edges, heads] (both NULL-able together). */
static int check_edge_term(const char *op, const bw_block *b, const bw_tensor *s_edge, const bw_tensor *gs_edge,
			   int64_t heads)
{
	const int64_t ne = bw_block_edges(b);
	if (s_edge && (s_edge->rows != ne || s_edge->cols != heads || (gs_edge && (gs_edge->rows != ne || gs_edge->cols != heads))))
		return bw_err(BURROW_E_INVAL, "%s: edge scores [%lld, %lld] for a block of %lld edges and %lld heads", op,
			      SHAPE(s_edge), (long long)ne, (long long)heads);
	return 0;
}

int bw_edge_softmax_e(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
		      const bw_tensor *s_edge, float slope, bw_tensor *alpha)
{
	int st;
	if ((st = check_attention("edge softmax", b, s_src, s_dst, alpha)) ||
	    (st = check_edge_term("edge softmax", b, s_edge, NULL, s_src->cols)))
		return st;
	SLOT(edge_softmax_fwd, "edge softmax");
	BLOCK_ON(b, "edge softmax");
	ON(s_src, "edge softmax");
	ON(s_dst, "edge softmax");
	ON(alpha, "edge softmax");
	if (s_edge)
		ON(s_edge, "edge softmax");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 5.0 * ELEMS(alpha),
		     be->ops->edge_softmax_fwd(be, b, s_src->data, s_dst->data, s_edge ? s_edge->data : NULL, s_src->cols,
					       slope, alpha->data));
}

int bw_edge_softmax(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
		    float slope, bw_tensor *alpha)
{
	return bw_edge_softmax_e(be, b, s_src, s_dst, NULL, slope, alpha);
}

int bw_edge_softmax_e_backward(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
			       const bw_tensor *s_edge, const bw_tensor *alpha, const bw_tensor *galpha, float slope,
			       bw_tensor *gs_src, bw_tensor *gs_dst, bw_tensor *gs_edge)
{
	int st;
	if ((st = check_attention("edge softmax backward", b, s_src, s_dst, alpha)) ||
	    (st = check_attention("edge softmax backward", b, gs_src, gs_dst, galpha)))
		return st;
	if (gs_src->cols != s_src->cols)
		return bw_err(BURROW_E_INVAL, "edge softmax backward: %lld heads for scores of %lld", (long long)gs_src->cols,
			      (long long)s_src->cols);
	if (!s_edge != !gs_edge)
		return bw_err(BURROW_E_INVAL, "edge softmax backward: edge scores and their gradients go together");
	if ((st = check_edge_term("edge softmax backward", b, s_edge, gs_edge, s_src->cols)))
		return st;
	SLOT(edge_softmax_bwd, "edge softmax backward");
	BLOCK_ON(b, "edge softmax backward");
	ON(s_src, "edge softmax backward");
	ON(s_dst, "edge softmax backward");
	ON(alpha, "edge softmax backward");
	ON(galpha, "edge softmax backward");
	ON(gs_src, "edge softmax backward");
	ON(gs_dst, "edge softmax backward");
	if (s_edge) {
		ON(s_edge, "edge softmax backward");
		ON(gs_edge, "edge softmax backward");
	}
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 6.0 * ELEMS(alpha),
		     be->ops->edge_softmax_bwd(be, b, s_src->data, s_dst->data, s_edge ? s_edge->data : NULL, alpha->data,
					       galpha->data, s_src->cols, slope, gs_src->data, gs_dst->data,
					       gs_edge ? gs_edge->data : NULL));
}

int bw_edge_softmax_backward(const bw_backend *be, const bw_block *b, const bw_tensor *s_src, const bw_tensor *s_dst,
			     const bw_tensor *alpha, const bw_tensor *galpha, float slope, bw_tensor *gs_src,
			     bw_tensor *gs_dst)
{
	return bw_edge_softmax_e_backward(be, b, s_src, s_dst, NULL, alpha, galpha, slope, gs_src, gs_dst, NULL);
}

static int check_att_agg(const char *op, const bw_block *b, const bw_tensor *alpha, const bw_tensor *h,
			 const bw_tensor *out)
{
	const int64_t heads = alpha->cols;
	if (heads < 1 || alpha->rows != bw_block_slots(b) || h->rows != b->num_src || h->cols % heads ||
	    out->rows != b->num_dst || out->cols != h->cols)
		return bw_err(BURROW_E_INVAL,
			      "%s: block %lld -> %lld with %lld slots, attention [%lld, %lld], input [%lld, %lld], "
			      "output [%lld, %lld]",
			      op, (long long)b->num_src, (long long)b->num_dst, (long long)bw_block_slots(b), SHAPE(alpha),
			      SHAPE(h), SHAPE(out));
	return 0;
}

int bw_att_aggregate(const bw_backend *be, const bw_block *b, const bw_tensor *alpha, const bw_tensor *h,
		     bw_tensor *out)
{
	int st;
	if ((st = check_att_agg("attention aggregate", b, alpha, h, out)))
		return st;
	SLOT(att_agg_fwd, "attention aggregate");
	BLOCK_ON(b, "attention aggregate");
	ON(alpha, "attention aggregate");
	ON(h, "attention aggregate");
	ON(out, "attention aggregate");
	BW_OP_RETURN(BURROW_OP_AGGREGATE, 2.0 * (double)alpha->rows * (double)h->cols,
		     be->ops->att_agg_fwd(be, b, alpha->data, h->data, alpha->cols, h->cols / alpha->cols, out->data));
}

int bw_att_aggregate_backward(const bw_backend *be, const bw_block *b, const bw_tensor *alpha, const bw_tensor *h,
			      const bw_tensor *gout, bw_tensor *galpha, bw_tensor *gh)
{
	int st;
	if ((st = check_att_agg("attention aggregate backward", b, alpha, h, gout)))
		return st;
	if (galpha->rows != alpha->rows || galpha->cols != alpha->cols || gh->rows != h->rows || gh->cols != h->cols)
		return bw_err(BURROW_E_INVAL, "attention aggregate backward: gradients [%lld, %lld] and [%lld, %lld] for "
					      "[%lld, %lld] and [%lld, %lld]",
			      SHAPE(galpha), SHAPE(gh), SHAPE(alpha), SHAPE(h));
	SLOT(att_agg_bwd, "attention aggregate backward");
	BLOCK_ON(b, "attention aggregate backward");
	ON(alpha, "attention aggregate backward");
	ON(h, "attention aggregate backward");
	ON(gout, "attention aggregate backward");
	ON(galpha, "attention aggregate backward");
	ON(gh, "attention aggregate backward");
	BW_OP_RETURN(BURROW_OP_AGGREGATE, 4.0 * (double)alpha->rows * (double)h->cols,
		     be->ops->att_agg_bwd(be, b, alpha->data, h->data, gout->data, alpha->cols, h->cols / alpha->cols,
					  galpha->data, gh->data));
}

/* ------------------------------------------------------------ normalization */

static int same_shape(const char *op, const bw_tensor *a, const bw_tensor *b)
{
	if (a->rows != b->rows || a->cols != b->cols)
		return bw_err(BURROW_E_INVAL, "%s: [%lld, %lld] and [%lld, %lld] differ", op, SHAPE(a), SHAPE(b));
	return 0;
}

int bw_row_norm(const bw_backend *be, const bw_tensor *x, float eps, bw_tensor *y, float *rstd)
{
	int st;
	if ((st = same_shape("layer norm", x, y)))
		return st;
	SLOT(row_norm_fwd, "layer norm");
	ON(x, "layer norm");
	ON(y, "layer norm");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 5.0 * ELEMS(x), be->ops->row_norm_fwd(be, x->data, x->rows, x->cols, eps, y->data, rstd));
}

int bw_row_norm_backward(const bw_backend *be, const bw_tensor *y, const float *rstd, const bw_tensor *gy, bw_tensor *gx)
{
	int st;
	if ((st = same_shape("layer norm backward", y, gy)) || (st = same_shape("layer norm backward", y, gx)))
		return st;
	SLOT(row_norm_bwd, "layer norm backward");
	ON(y, "layer norm backward");
	ON(gy, "layer norm backward");
	ON(gx, "layer norm backward");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 6.0 * ELEMS(y), be->ops->row_norm_bwd(be, y->data, rstd, gy->data, y->rows, y->cols, gx->data));
}

int bw_col_norm(const bw_backend *be, const bw_tensor *x, float eps, bw_tensor *y, float *mean, float *var, float *rstd)
{
	int st;
	if ((st = same_shape("batch norm", x, y)))
		return st;
	SLOT(col_norm_fwd, "batch norm");
	ON(x, "batch norm");
	ON(y, "batch norm");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 5.0 * ELEMS(x), be->ops->col_norm_fwd(be, x->data, x->rows, x->cols, eps, y->data, mean, var, rstd));
}

int bw_col_norm_backward(const bw_backend *be, const bw_tensor *y, const float *rstd, const bw_tensor *gy, bw_tensor *gx)
{
	int st;
	if ((st = same_shape("batch norm backward", y, gy)) || (st = same_shape("batch norm backward", y, gx)))
		return st;
	SLOT(col_norm_bwd, "batch norm backward");
	ON(y, "batch norm backward");
	ON(gy, "batch norm backward");
	ON(gx, "batch norm backward");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 6.0 * ELEMS(y), be->ops->col_norm_bwd(be, y->data, rstd, gy->data, y->rows, y->cols, gx->data));
}

int bw_col_norm_apply(const bw_backend *be, const bw_tensor *x, const float *mean, const float *var, float eps,
		      bw_tensor *y)
{
	int st;
	if ((st = same_shape("batch norm (inference)", x, y)))
		return st;
	SLOT(col_norm_apply, "batch norm (inference)");
	ON(x, "batch norm (inference)");
	ON(y, "batch norm (inference)");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 3.0 * ELEMS(x), be->ops->col_norm_apply(be, x->data, x->rows, x->cols, mean, var, eps, y->data));
}

int bw_col_scale(const bw_backend *be, bw_tensor *y, const float *s, int64_t n)
{
	if (n != y->cols)
		return bw_err(BURROW_E_INVAL, "column scale: %lld factors for [%lld, %lld]", (long long)n, SHAPE(y));
	SLOT(col_scale, "column scale");
	ON(y, "column scale");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, ELEMS(y), be->ops->col_scale(be, y->data, y->rows, y->cols, s));
}

int bw_col_dot(const bw_backend *be, const bw_tensor *a, const bw_tensor *b, float *out)
{
	int st;
	if ((st = same_shape("column dot", a, b)))
		return st;
	SLOT(col_dot, "column dot");
	ON(a, "column dot");
	ON(b, "column dot");
	BW_OP_RETURN(BURROW_OP_ELEMENTWISE, 2.0 * ELEMS(a), be->ops->col_dot(be, a->data, b->data, a->rows, a->cols, out));
}

/* The two-product form of bw_matmul_cat, the second piece's first. */
static int matmul_cat_split(const bw_backend *be, const bw_tensor *a, const bw_tensor *a2, bool ta, const bw_tensor *b,
			    float alpha, float beta, bw_tensor *c)
{
	int st;
	if (ta) {
		bw_tensor c1 = bw_tensor_rows(c, 0, a->cols), c2 = bw_tensor_rows(c, a->cols, a2->cols);
		if ((st = bw_matmul(be, a2, true, b, false, alpha, beta, &c2)))
			return st;
		return bw_matmul(be, a, true, b, false, alpha, beta, &c1);
	}
	const bw_tensor b1 = bw_tensor_rows(b, 0, a->cols), b2 = bw_tensor_rows(b, a->cols, a2->cols);
	if ((st = bw_matmul(be, a2, false, &b2, false, alpha, beta, c)))
		return st;
	return bw_matmul(be, a, false, &b1, false, alpha, 1.0f, c);
}

int bw_matmul_cat(const bw_backend *be, const bw_tensor *a, const bw_tensor *a2, bool trans_a, const bw_tensor *b,
		  float alpha, float beta, bw_tensor *c)
{
	const bool ta = trans_a;
	const int64_t m = ta ? a->cols + a2->cols : a->rows, k = ta ? a->rows : a->cols + a2->cols;
	if (a->rows != a2->rows || b->rows != k || c->rows != m || c->cols != b->cols)
		return bw_err(BURROW_E_INVAL, "matmul_cat: [[%lld, %lld] | [%lld, %lld]]%s x [%lld, %lld] into [%lld, %lld]",
			      SHAPE(a), SHAPE(a2), ta ? "^T" : "", SHAPE(b), SHAPE(c));
	if (m > INT32_MAX || b->cols > INT32_MAX || k > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "matmul_cat: a dimension exceeds 2^31 - 1");
	ON(a, "matmul_cat");
	ON(a2, "matmul_cat");
	ON(b, "matmul_cat");
	ON(c, "matmul_cat");
	if (!be->ops->gemm_cat || a->sp || a->tr || a2->sp || a2->tr)
		return matmul_cat_split(be, a, a2, ta, b, alpha, beta, c);
	BW_OP_RETURN(BURROW_OP_PRODUCT, 2.0 * (double)m * (double)b->cols * (double)k,
		     be->ops->gemm_cat(be, ta, m, b->cols, k, a->cols, alpha, a->data, a->cols, a2->data, a2->cols,
				       b->data, b->cols, beta, c->data, c->cols));
}
