/* layers.c: Linear, SAGEConv (mean) and GCNConv with hand-written backward passes. */
#include "compute.h"

#include <math.h>
#include <string.h>

int64_t bw_layer_num_params(bw_layer_kind kind, int64_t in, int64_t out)
{
	return (kind == BW_LAYER_SAGE ? 2 : 1) * in * out + out;
}

void bw_layer_bind(bw_layer *l, bw_layer_kind kind, int64_t in, int64_t out, float *params, float *grads)
{
	memset(l, 0, sizeof *l);
	l->kind = kind;
	l->in = in;
	l->out = out;
	l->project_first = kind != BW_LAYER_LINEAR && in > out;
	l->w = params;
	l->gw = grads;
	if (kind == BW_LAYER_SAGE) {
		l->w_neigh = params + in * out;
		l->gw_neigh = grads + in * out;
		params += in * out;
		grads += in * out;
	}
	l->b = params + in * out;
	l->gb = grads + in * out;
}

static void glorot(float *w, int64_t in, int64_t out, uint64_t key)
{
	const double a = sqrt(6.0 / (double)(in + out));
	bw_rng r;
	bw_rng_seed(&r, key);
	for (int64_t i = 0; i < in * out; i++)
		w[i] = (float)((2.0 * bw_rng_uniform(&r) - 1.0) * a);
}

int bw_layer_init(bw_layer *l, const bw_device *dev, uint64_t key)
{
	dev = bw_device_or_cpu(dev);
	const int64_t n = l->in * l->out;
	float *w = bw_malloc((size_t)(n ? n : 1) * sizeof *w);
	if (!w)
		return BURROW_E_NOMEM;
	glorot(w, l->in, l->out, bw_key(key, 0));
	int st = bw_device_upload(dev, l->w, w, (size_t)n * sizeof *w);
	if (!st && l->w_neigh) {
		glorot(w, l->in, l->out, bw_key(key, 1));
		st = bw_device_upload(dev, l->w_neigh, w, (size_t)n * sizeof *w);
	}
	bw_free(w);
	return st ? st : bw_device_memset(dev, l->b, 0, (size_t)l->out * sizeof *l->b);
}

#define TRY(x)                      \
	do {                        \
		if ((st = (x)))     \
			return st;  \
	} while (0)

static int check_shapes(const bw_layer *l, const bw_block *b, const bw_tensor *x)
{
	if (x->cols != l->in)
		return bw_err(BURROW_E_INVAL, "layer: input has %lld columns, the layer takes %lld", (long long)x->cols,
			      (long long)l->in);
	if (l->kind == BW_LAYER_LINEAR ? x->rows < b->num_dst : x->rows != b->num_src)
		return bw_err(BURROW_E_INVAL, "layer: input has %lld rows for a block of %lld sources, %lld destinations",
			      (long long)x->rows, (long long)b->num_src, (long long)b->num_dst);
	return 0;
}

int bw_layer_forward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z)
{
	int st;
	const int64_t nd = b->num_dst, ns = b->num_src;
	TRY(check_shapes(l, b, x));
	TRY(bw_tensor_reshape(z, be->dev, nd, l->out));
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor w = bw_tensor_view(be->dev, l->w, l->in, l->out);
	switch (l->kind) {
	case BW_LAYER_LINEAR:
		TRY(bw_matmul(be, &xd, false, &w, false, 1.0f, 0.0f, z));
		break;
	case BW_LAYER_SAGE: {
		const bw_tensor wn = bw_tensor_view(be->dev, l->w_neigh, l->in, l->out);
		if (l->project_first) {
			TRY(bw_tensor_reshape(&l->agg, be->dev, ns, l->out));
			TRY(bw_matmul(be, x, false, &wn, false, 1.0f, 0.0f, &l->agg));
			TRY(bw_aggregate(be, b, BW_AGG_MEAN, &l->agg, 0, -1, z));
		} else {
			TRY(bw_tensor_reshape(&l->agg, be->dev, nd, l->in));
			TRY(bw_aggregate(be, b, BW_AGG_MEAN, x, 0, -1, &l->agg));
			TRY(bw_matmul(be, &l->agg, false, &wn, false, 1.0f, 0.0f, z));
		}
		TRY(bw_matmul(be, &xd, false, &w, false, 1.0f, 1.0f, z));
		break;
	}
	case BW_LAYER_GCN:
		if (l->project_first) {
			TRY(bw_tensor_reshape(&l->agg, be->dev, ns, l->out));
			TRY(bw_matmul(be, x, false, &w, false, 1.0f, 0.0f, &l->agg));
			TRY(bw_aggregate(be, b, BW_AGG_GCN, &l->agg, 0, -1, z));
		} else {
			TRY(bw_tensor_reshape(&l->agg, be->dev, nd, l->in));
			TRY(bw_aggregate(be, b, BW_AGG_GCN, x, 0, -1, &l->agg));
			TRY(bw_matmul(be, &l->agg, false, &w, false, 1.0f, 0.0f, z));
		}
		break;
	default:
		return bw_err(BURROW_E_INVAL, "layer: unknown kind %d", (int)l->kind);
	}
	return bw_bias_add(be, z, l->b, l->out);
}

/* Work between two progress polls: rows aggregated, rows multiplied. Small enough that
 * the exchange moves every few milliseconds, large enough to keep BLAS efficient. */
#define BW_OVERLAP_AGG_CHUNK 256
#define BW_OVERLAP_MM_CHUNK 512

static int ov_poll(const bw_overlap *ov) { return ov->poll ? ov->poll(ov->ctx) : 0; }

/* Rows [r0, r1) of c = alpha op(a) w + beta c (trans_a: a's rows [r0, r1) are the reduced
 * dimension, c whole). */
static int matmul_rows(const bw_backend *be, const bw_tensor *a, bool ta, const bw_tensor *w, bool tw, float beta,
		       bw_tensor *c, int64_t r0, int64_t r1)
{
	if (r1 <= r0)
		return 0;
	bw_tensor ar = bw_tensor_rows(a, r0, r1 - r0);
	if (ta) {
		bw_tensor wr = bw_tensor_rows(w, r0, r1 - r0);
		return bw_matmul(be, &ar, true, &wr, tw, 1.0f, beta, c);
	}
	bw_tensor cr = bw_tensor_rows(c, r0, r1 - r0);
	return bw_matmul(be, &ar, false, w, tw, 1.0f, beta, &cr);
}

/* matmul_rows over [r0, r1) in chunks, polling after each. For ta (a reduction over the
 * rows) the first chunk applies beta and the others add. */
static int matmul_chunks(const bw_backend *be, const bw_tensor *a, bool ta, const bw_tensor *w, bool tw, float beta,
			 bw_tensor *c, int64_t r0, int64_t r1, const bw_overlap *ov)
{
	int st;
	if (ta && r1 <= r0 && beta == 0.0f) /* an empty reduction still defines c */
		TRY(bw_tensor_zero_rows(c, 0, c->rows));
	for (int64_t q = r0; q < r1; q += BW_OVERLAP_MM_CHUNK) {
		float bq = ta && q > r0 ? 1.0f : beta;
		TRY(matmul_rows(be, a, ta, w, tw, bq, c, q, BW_MIN(q + BW_OVERLAP_MM_CHUNK, r1)));
		if ((st = ov_poll(ov)) < 0)
			return st;
	}
	return 0;
}

/* The early part of every destination row's aggregation, in chunks, polling after each. */
static int aggregate_early(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, bw_tensor *out,
			   const bw_overlap *ov)
{
	int st;
	for (int64_t c = 0; c < b->num_dst; c += BW_OVERLAP_AGG_CHUNK) {
		TRY(bw_aggregate_part(be, b, BW_PART_EARLY, mode, x, c, BW_MIN(c + BW_OVERLAP_AGG_CHUNK, b->num_dst), false,
				      out));
		if ((st = ov_poll(ov)) < 0)
			return st;
	}
	return 0;
}

static int check_overlap(const bw_layer *l, const bw_block *b)
{
	if (l->kind == BW_LAYER_LINEAR || !b->part_indptr[0])
		return bw_err(BURROW_E_INVAL, "layer: overlap needs a graph layer over a split block (bw_block_split)");
	return 0;
}

int bw_layer_forward_overlap(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z,
			     const bw_overlap *ov)
{
	int st;
	TRY(check_overlap(l, b));
	const int64_t nd = b->num_dst, ns = b->num_src, split = b->split;
	TRY(check_shapes(l, b, x));
	TRY(bw_tensor_reshape(z, be->dev, nd, l->out));
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor w = bw_tensor_view(be->dev, l->w, l->in, l->out);
	const bool sage = l->kind == BW_LAYER_SAGE;
	const bw_tensor wa = bw_tensor_view(be->dev, sage ? l->w_neigh : l->w, l->in, l->out);
	const bw_agg mode = sage ? BW_AGG_MEAN : BW_AGG_GCN;
	if (l->project_first) {
		/* project the rows already here, aggregate them into every row, then the late ones */
		TRY(bw_tensor_reshape(&l->agg, be->dev, ns, l->out));
		TRY(matmul_chunks(be, x, false, &wa, false, 0.0f, &l->agg, 0, split, ov));
		TRY(aggregate_early(be, b, mode, &l->agg, z, ov));
		if (sage)
			TRY(matmul_chunks(be, &xd, false, &w, false, 1.0f, z, 0, nd, ov));
		if ((st = ov->wait(ov->ctx)) < 0)
			return st;
		TRY(matmul_rows(be, x, false, &wa, false, 0.0f, &l->agg, split, ns));
		TRY(bw_aggregate_part(be, b, BW_PART_LATE, mode, &l->agg, 0, nd, true, z));
	} else {
		/* aggregate every row over its early sources (and SAGE's self term), wait, add
		 * the late sources, then project */
		TRY(bw_tensor_reshape(&l->agg, be->dev, nd, l->in));
		TRY(aggregate_early(be, b, mode, x, &l->agg, ov));
		if (sage)
			TRY(matmul_chunks(be, &xd, false, &w, false, 0.0f, z, 0, nd, ov));
		if ((st = ov->wait(ov->ctx)) < 0)
			return st;
		TRY(bw_aggregate_part(be, b, BW_PART_LATE, mode, x, 0, nd, true, &l->agg));
		TRY(bw_matmul(be, &l->agg, false, &wa, false, 1.0f, sage ? 1.0f : 0.0f, z));
	}
	return bw_bias_add(be, z, l->b, l->out);
}

int bw_layer_backward_overlap(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x,
			      const bw_tensor *gz, bw_tensor *gx, const bw_overlap *ov)
{
	int st;
	TRY(check_overlap(l, b));
	const int64_t nd = b->num_dst, ns = b->num_src, split = b->split;
	TRY(check_shapes(l, b, x));
	if (!gx || gz->rows != nd || gz->cols != l->out)
		return bw_err(BURROW_E_INVAL, "layer backward: gradient [%lld, %lld] for output [%lld, %lld]%s",
			      (long long)gz->rows, (long long)gz->cols, (long long)nd, (long long)l->out,
			      gx ? "" : " without an input gradient");
	if (!b->t_indptr)
		return bw_err(BURROW_E_INVAL, "layer backward: the block has no transpose (bw_block_prepare)");
	const bool sage = l->kind == BW_LAYER_SAGE;
	const bw_agg mode = sage ? BW_AGG_MEAN : BW_AGG_GCN;
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor w = bw_tensor_view(be->dev, l->w, l->in, l->out);
	const bw_tensor wn = bw_tensor_view(be->dev, l->w_neigh, l->in, l->out);
	bw_tensor gw = bw_tensor_view(be->dev, l->gw, l->in, l->out);
	bw_tensor gwn = bw_tensor_view(be->dev, l->gw_neigh, l->in, l->out);
	bw_tensor *gwa = sage ? &gwn : &gw;
	const bw_tensor *wa = sage ? &wn : &w;
	bw_tensor gxd;
	TRY(bw_tensor_reshape(gx, be->dev, ns, l->in));
	gxd = bw_tensor_rows(gx, 0, nd);
	if (l->project_first) {
		/* tmp = the aggregation's transpose of gz [ns, out]; gx = tmp wa^T: the late rows first */
		TRY(bw_tensor_reshape(&l->tmp, be->dev, ns, l->out));
		TRY(bw_aggregate_backward(be, b, mode, gz, split, ns, &l->tmp));
		TRY(matmul_rows(be, &l->tmp, false, wa, true, 0.0f, gx, split, ns));
		if ((st = ov->post(ov->ctx, gx)) < 0)
			return st;
		for (int64_t c = 0; c < split; c += BW_OVERLAP_AGG_CHUNK) {
			TRY(bw_aggregate_backward(be, b, mode, gz, c, BW_MIN(c + BW_OVERLAP_AGG_CHUNK, split), &l->tmp));
			if ((st = ov_poll(ov)) < 0)
				return st;
		}
		TRY(matmul_chunks(be, &l->tmp, false, wa, true, 0.0f, gx, 0, split, ov));
		TRY(matmul_chunks(be, x, true, &l->tmp, false, 0.0f, gwa, 0, ns, ov));
	} else {
		/* tmp = gz wa^T [nd, in]; gx = the aggregation's transpose of tmp: the late rows first */
		TRY(bw_tensor_reshape(&l->tmp, be->dev, nd, l->in));
		TRY(bw_matmul(be, gz, false, wa, true, 1.0f, 0.0f, &l->tmp));
		TRY(bw_aggregate_backward(be, b, mode, &l->tmp, split, ns, gx));
		if ((st = ov->post(ov->ctx, gx)) < 0)
			return st;
		for (int64_t c = 0; c < split; c += BW_OVERLAP_AGG_CHUNK) {
			TRY(bw_aggregate_backward(be, b, mode, &l->tmp, c, BW_MIN(c + BW_OVERLAP_AGG_CHUNK, split), gx));
			if ((st = ov_poll(ov)) < 0)
				return st;
		}
		TRY(matmul_chunks(be, &l->agg, true, gz, false, 0.0f, gwa, 0, nd, ov));
	}
	if (sage) {
		TRY(matmul_chunks(be, gz, false, &w, true, 1.0f, &gxd, 0, nd, ov));
		TRY(matmul_chunks(be, &xd, true, gz, false, 0.0f, &gw, 0, nd, ov));
	}
	return bw_col_sum(be, gz, l->gb, l->out);
}

int bw_layer_backward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, const bw_tensor *gz,
		      bw_tensor *gx)
{
	int st;
	const int64_t nd = b->num_dst, ns = b->num_src;
	TRY(check_shapes(l, b, x));
	if (gz->rows != nd || gz->cols != l->out)
		return bw_err(BURROW_E_INVAL, "layer backward: gradient [%lld, %lld] for output [%lld, %lld]",
			      (long long)gz->rows, (long long)gz->cols, (long long)nd, (long long)l->out);
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor w = bw_tensor_view(be->dev, l->w, l->in, l->out);
	bw_tensor gw = bw_tensor_view(be->dev, l->gw, l->in, l->out);
	TRY(bw_col_sum(be, gz, l->gb, l->out));
	if (gx)
		TRY(bw_tensor_reshape(gx, be->dev, x->rows, l->in));
	bw_agg mode = l->kind == BW_LAYER_SAGE ? BW_AGG_MEAN : BW_AGG_GCN;
	switch (l->kind) {
	case BW_LAYER_LINEAR:
		TRY(bw_matmul(be, &xd, true, gz, false, 1.0f, 0.0f, &gw));
		if (gx) {
			bw_tensor gxd = bw_tensor_rows(gx, 0, nd);
			TRY(bw_matmul(be, gz, false, &w, true, 1.0f, 0.0f, &gxd));
			TRY(bw_tensor_zero_rows(gx, nd, x->rows - nd));
		}
		return 0;
	case BW_LAYER_SAGE:
	case BW_LAYER_GCN: {
		bw_tensor gwn = bw_tensor_view(be->dev, l->gw_neigh, l->in, l->out);
		const bw_tensor wn = bw_tensor_view(be->dev, l->w_neigh, l->in, l->out);
		const bool sage = l->kind == BW_LAYER_SAGE;
		/* the aggregated path's weight and gradient: W_neigh for SAGE, W for GCN */
		bw_tensor *gwa = sage ? &gwn : &gw;
		const bw_tensor *wa = sage ? &wn : &w;
		if (sage)
			TRY(bw_matmul(be, &xd, true, gz, false, 1.0f, 0.0f, &gw));
		if (l->project_first) {
			TRY(bw_tensor_reshape(&l->tmp, be->dev, ns, l->out));
			TRY(bw_aggregate_backward(be, b, mode, gz, 0, -1, &l->tmp));
			TRY(bw_matmul(be, x, true, &l->tmp, false, 1.0f, 0.0f, gwa));
			if (gx)
				TRY(bw_matmul(be, &l->tmp, false, wa, true, 1.0f, 0.0f, gx));
		} else {
			TRY(bw_matmul(be, &l->agg, true, gz, false, 1.0f, 0.0f, gwa));
			if (gx) {
				TRY(bw_tensor_reshape(&l->tmp, be->dev, nd, l->in));
				TRY(bw_matmul(be, gz, false, wa, true, 1.0f, 0.0f, &l->tmp));
				TRY(bw_aggregate_backward(be, b, mode, &l->tmp, 0, -1, gx));
			}
		}
		if (gx && sage) {
			bw_tensor gxd = bw_tensor_rows(gx, 0, nd);
			TRY(bw_matmul(be, gz, false, &w, true, 1.0f, 1.0f, &gxd));
		}
		return 0;
	}
	default:
		return bw_err(BURROW_E_INVAL, "layer: unknown kind %d", (int)l->kind);
	}
}

void bw_layer_release(bw_layer *l)
{
	bw_tensor_free(&l->agg);
	bw_tensor_free(&l->tmp);
}
