/* layers.c: Linear, SAGEConv (mean) and GCNConv with hand-written backward passes. */
#include "train.h"

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

void bw_layer_init(bw_layer *l, uint64_t key)
{
	glorot(l->w, l->in, l->out, bw_key(key, 0));
	if (l->w_neigh)
		glorot(l->w_neigh, l->in, l->out, bw_key(key, 1));
	memset(l->b, 0, (size_t)l->out * sizeof *l->b);
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
	TRY(bw_tensor_reshape(z, nd, l->out));
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor w = bw_tensor_view(l->w, l->in, l->out);
	switch (l->kind) {
	case BW_LAYER_LINEAR:
		TRY(bw_matmul(be, &xd, false, &w, false, 1.0f, 0.0f, z));
		break;
	case BW_LAYER_SAGE: {
		const bw_tensor wn = bw_tensor_view(l->w_neigh, l->in, l->out);
		if (l->project_first) {
			TRY(bw_tensor_reshape(&l->agg, ns, l->out));
			TRY(bw_matmul(be, x, false, &wn, false, 1.0f, 0.0f, &l->agg));
			TRY(bw_aggregate(be, b, BW_AGG_MEAN, &l->agg, NULL, 0, z));
		} else {
			TRY(bw_tensor_reshape(&l->agg, nd, l->in));
			TRY(bw_aggregate(be, b, BW_AGG_MEAN, x, NULL, 0, &l->agg));
			TRY(bw_matmul(be, &l->agg, false, &wn, false, 1.0f, 0.0f, z));
		}
		TRY(bw_matmul(be, &xd, false, &w, false, 1.0f, 1.0f, z));
		break;
	}
	case BW_LAYER_GCN:
		if (l->project_first) {
			TRY(bw_tensor_reshape(&l->agg, ns, l->out));
			TRY(bw_matmul(be, x, false, &w, false, 1.0f, 0.0f, &l->agg));
			TRY(bw_aggregate(be, b, BW_AGG_GCN, &l->agg, NULL, 0, z));
		} else {
			TRY(bw_tensor_reshape(&l->agg, nd, l->in));
			TRY(bw_aggregate(be, b, BW_AGG_GCN, x, NULL, 0, &l->agg));
			TRY(bw_matmul(be, &l->agg, false, &w, false, 1.0f, 0.0f, z));
		}
		break;
	default:
		return bw_err(BURROW_E_INVAL, "layer: unknown kind %d", (int)l->kind);
	}
	return bw_bias_add(be, z, l->b, l->out);
}

#define BW_OVERLAP_CHUNK 256 /* inner rows aggregated between two progress polls */

static int ov_poll(const bw_overlap *ov) { return ov->poll ? ov->poll(ov->ctx) : 0; }

/* Rows [r0, r1) of c = a W, where a and c hold (at least) those rows. */
static int matmul_rows(const bw_backend *be, const bw_tensor *a, const bw_tensor *w, bw_tensor *c, int64_t r0,
		       int64_t r1)
{
	if (r1 <= r0)
		return 0;
	bw_tensor ar = bw_tensor_rows(a, r0, r1 - r0), cr = bw_tensor_rows(c, r0, r1 - r0);
	return bw_matmul(be, &ar, false, w, false, 1.0f, 0.0f, &cr);
}

int bw_layer_forward_overlap(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z,
			     const bw_overlap *ov)
{
	int st;
	const int64_t nd = b->num_dst, ns = b->num_src;
	if (l->kind == BW_LAYER_LINEAR || ov->split > ns || ov->split < nd || ov->n_inner + ov->n_outer != nd)
		return bw_err(BURROW_E_INVAL, "layer: overlap needs a graph layer, split in [%lld, %lld] and every "
					      "destination row inner or outer",
			      (long long)nd, (long long)ns);
	TRY(check_shapes(l, b, x));
	TRY(bw_tensor_reshape(z, nd, l->out));
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor w = bw_tensor_view(l->w, l->in, l->out);
	const bool sage = l->kind == BW_LAYER_SAGE;
	const bw_tensor wa = bw_tensor_view(sage ? l->w_neigh : l->w, l->in, l->out);
	const bw_agg mode = sage ? BW_AGG_MEAN : BW_AGG_GCN;
	if (l->project_first) {
		/* project the rows already here, then the late ones, then aggregate */
		TRY(bw_tensor_reshape(&l->agg, ns, l->out));
		TRY(matmul_rows(be, x, &wa, &l->agg, 0, ov->split));
		if ((st = ov_poll(ov)) < 0 || (st = ov->wait(ov->ctx)) < 0)
			return st;
		TRY(matmul_rows(be, x, &wa, &l->agg, ov->split, ns));
		TRY(bw_aggregate(be, b, mode, &l->agg, NULL, 0, z));
		if (sage)
			TRY(bw_matmul(be, &xd, false, &w, false, 1.0f, 1.0f, z));
	} else {
		/* aggregate the inner rows, then (after the wait) the outer ones, then project */
		TRY(bw_tensor_reshape(&l->agg, nd, l->in));
		/* in chunks, driving the exchange's progress between them */
		for (int64_t c = 0; c < ov->n_inner; c += BW_OVERLAP_CHUNK) {
			TRY(bw_aggregate(be, b, mode, x, ov->inner + c, BW_MIN(BW_OVERLAP_CHUNK, ov->n_inner - c),
					 &l->agg));
			if ((st = ov_poll(ov)) < 0)
				return st;
		}
		if (sage)
			TRY(bw_matmul(be, &xd, false, &w, false, 1.0f, 0.0f, z));
		if ((st = ov_poll(ov)) < 0 || (st = ov->wait(ov->ctx)) < 0)
			return st;
		if (ov->n_outer)
			TRY(bw_aggregate(be, b, mode, x, ov->outer, ov->n_outer, &l->agg));
		TRY(bw_matmul(be, &l->agg, false, &wa, false, 1.0f, sage ? 1.0f : 0.0f, z));
	}
	return bw_bias_add(be, z, l->b, l->out);
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
	const bw_tensor w = bw_tensor_view(l->w, l->in, l->out);
	bw_tensor gw = bw_tensor_view(l->gw, l->in, l->out);
	TRY(bw_col_sum(be, gz, l->gb, l->out));
	if (gx)
		TRY(bw_tensor_reshape(gx, x->rows, l->in));
	bw_agg mode = l->kind == BW_LAYER_SAGE ? BW_AGG_MEAN : BW_AGG_GCN;
	switch (l->kind) {
	case BW_LAYER_LINEAR:
		TRY(bw_matmul(be, &xd, true, gz, false, 1.0f, 0.0f, &gw));
		if (gx) {
			bw_tensor gxd = bw_tensor_rows(gx, 0, nd);
			TRY(bw_matmul(be, gz, false, &w, true, 1.0f, 0.0f, &gxd));
			memset(gx->data + nd * l->in, 0, (size_t)((x->rows - nd) * l->in) * sizeof(float));
		}
		return 0;
	case BW_LAYER_SAGE:
	case BW_LAYER_GCN: {
		bw_tensor gwn = bw_tensor_view(l->gw_neigh, l->in, l->out);
		const bw_tensor wn = bw_tensor_view(l->w_neigh, l->in, l->out);
		const bool sage = l->kind == BW_LAYER_SAGE;
		/* the aggregated path's weight and gradient: W_neigh for SAGE, W for GCN */
		bw_tensor *gwa = sage ? &gwn : &gw;
		const bw_tensor *wa = sage ? &wn : &w;
		if (sage)
			TRY(bw_matmul(be, &xd, true, gz, false, 1.0f, 0.0f, &gw));
		if (l->project_first) {
			TRY(bw_tensor_reshape(&l->tmp, ns, l->out));
			TRY(bw_aggregate_backward(be, b, mode, gz, NULL, 0, &l->tmp));
			TRY(bw_matmul(be, x, true, &l->tmp, false, 1.0f, 0.0f, gwa));
			if (gx)
				TRY(bw_matmul(be, &l->tmp, false, wa, true, 1.0f, 0.0f, gx));
		} else {
			TRY(bw_matmul(be, &l->agg, true, gz, false, 1.0f, 0.0f, gwa));
			if (gx) {
				TRY(bw_tensor_reshape(&l->tmp, nd, l->in));
				TRY(bw_matmul(be, gz, false, wa, true, 1.0f, 0.0f, &l->tmp));
				TRY(bw_aggregate_backward(be, b, mode, &l->tmp, NULL, 0, gx));
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
