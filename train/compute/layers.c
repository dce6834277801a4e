/* layers.c: Linear, SAGEConv (mean, sum, max), GCNConv and GATConv with hand-written
 * backward passes, built on the ops (nothing here reads tensor memory on the host). */
#include "model.h"

#include <math.h>
#include <string.h>

int64_t bw_layer_shape_params(const bw_layer_shape *s)
{
	if (s->kind == BW_LAYER_GAT) {
		const int64_t hf = s->concat ? s->out : s->heads * s->out;
		return s->in * hf + 2 * hf + s->out + (s->edge_dim ? s->edge_dim * hf + hf : 0);
	}
	return (s->kind == BW_LAYER_SAGE ? 2 : 1) * s->in * s->out + s->out;
}

int64_t bw_layer_num_params(bw_layer_kind kind, int64_t in, int64_t out)
{
	const bw_layer_shape s = {.kind = kind, .in = in, .out = out, .heads = 1, .concat = true};
	return bw_layer_shape_params(&s);
}

void bw_layer_bind_shape(bw_layer *l, const bw_layer_shape *s, float *params, float *grads)
{
	const int64_t in = s->in, out = s->out;
	memset(l, 0, sizeof *l);
	l->kind = s->kind;
	l->in = in;
	l->out = out;
	l->aggr = s->kind == BW_LAYER_SAGE ? s->aggr : BURROW_AGGR_MEAN;
	l->project_first = s->kind != BW_LAYER_LINEAR && s->kind != BW_LAYER_GAT && in > out &&
			   l->aggr != BURROW_AGGR_MAX;
	l->w = params;
	l->gw = grads;
	if (s->kind == BW_LAYER_GAT) {
		l->heads = s->heads;
		l->concat = s->concat;
		l->f_dim = s->concat ? out / s->heads : out;
		const int64_t hf = l->heads * l->f_dim;
		l->a_src = params + in * hf;
		l->a_dst = l->a_src + hf;
		l->b = l->a_dst + hf;
		l->ga_src = grads + in * hf;
		l->ga_dst = l->ga_src + hf;
		l->gb = l->ga_dst + hf;
		l->edge_dim = s->edge_dim;
		if (s->edge_dim) { /* after b, so that the layer without them is unchanged */
			l->w_e = l->b + out;
			l->a_edge = l->w_e + s->edge_dim * hf;
			l->gw_e = l->gb + out;
			l->ga_edge = l->gw_e + s->edge_dim * hf;
		}
		return;
	}
	if (s->kind == BW_LAYER_SAGE) {
		l->w_neigh = params + in * out;
		l->gw_neigh = grads + in * out;
		params += in * out;
		grads += in * out;
	}
	l->b = params + in * out;
	l->gb = grads + in * out;
}

void bw_layer_bind(bw_layer *l, bw_layer_kind kind, int64_t in, int64_t out, float *params, float *grads)
{
	const bw_layer_shape s = {.kind = kind, .in = in, .out = out, .heads = 1, .concat = true};
	bw_layer_bind_shape(l, &s, params, grads);
}

/* The projection's width: out, or heads F for GAT. */
static int64_t proj_cols(const bw_layer *l) { return l->kind == BW_LAYER_GAT ? l->heads * l->f_dim : l->out; }

/* n weights drawn from U(-a, a) with the RNG keyed by key. */
static void uniform_init(float *w, int64_t n, double a, uint64_t key)
{
	bw_rng r;
	bw_rng_seed(&r, key);
	for (int64_t i = 0; i < n; i++)
		w[i] = (float)((2.0 * bw_rng_uniform(&r) - 1.0) * a);
}

/* Glorot-uniform: U(-sqrt(6 / (in + out)), sqrt(6 / (in + out))). */
static void glorot(float *w, int64_t in, int64_t out, uint64_t key)
{
	uniform_init(w, in * out, sqrt(6.0 / (double)(in + out)), key);
}

/* GAT's edge term: W_e [edge_dim, heads F] and a_edge as a [heads, F] matrix, Glorot-uniform
 * (PyG's lin_edge and att_edge). */
static int edge_term_init(bw_layer *l, const bw_device *dev, uint64_t key)
{
	const int64_t hf = l->heads * l->f_dim, n = l->edge_dim * hf;
	float *w = bw_malloc((size_t)BW_MAX(n, hf) * sizeof *w + 1);
	if (!w)
		return BURROW_E_NOMEM;
	glorot(w, l->edge_dim, hf, bw_key(key, 4));
	int st = bw_device_upload(dev, l->w_e, w, (size_t)n * sizeof *w);
	if (!st) {
		glorot(w, l->heads, l->f_dim, bw_key(key, 5));
		st = bw_device_upload(dev, l->a_edge, w, (size_t)hf * sizeof *w);
	}
	bw_free(w);
	return st;
}

/* The key item of SAGE's bias draw (0 and 1 draw W and W_neigh, 2 and 3 GAT's
 * attention, 4 and 5 GAT's edge term: a SAGE layer has none). */
enum { KEY_SAGE_BIAS = 4 };

/* The layer's weights and bias as PyG initializes the same layer. GCNConv and GATConv:
 * Glorot-uniform weights (GAT's attention vectors as [heads, F] matrices), zero bias.
 * SAGEConv: its lin_l (W_neigh, with the bias) and lin_r (W) are PyG Linears, which draw
 * kaiming_uniform(a = sqrt(5)) weights and a uniform bias, both U(-1/sqrt(in), 1/sqrt(in)):
 * about half Glorot's bound for Cora's first layer. The scale sets how fast the random part
 * of the weights fades, and so where the valid accuracy peaks (docs/train.md, "Full-graph
 * SAGE against PyG"). */
int bw_layer_init(bw_layer *l, const bw_device *dev, uint64_t key)
{
	dev = bw_device_or_cpu(dev);
	const int64_t pc = proj_cols(l), n = l->in * pc;
	const bool sage = l->kind == BW_LAYER_SAGE;
	const double sage_bound = 1.0 / sqrt((double)l->in);
	float *w = bw_malloc((size_t)(n > pc ? n : pc) * sizeof *w + 1);
	if (!w)
		return BURROW_E_NOMEM;
	if (sage)
		uniform_init(w, n, sage_bound, bw_key(key, 0));
	else
		glorot(w, l->in, pc, bw_key(key, 0));
	int st = bw_device_upload(dev, l->w, w, (size_t)n * sizeof *w);
	if (!st && l->w_neigh) {
		uniform_init(w, n, sage_bound, bw_key(key, 1));
		st = bw_device_upload(dev, l->w_neigh, w, (size_t)n * sizeof *w);
	}
	for (int k = 0; !st && l->kind == BW_LAYER_GAT && k < 2; k++) {
		glorot(w, l->heads, l->f_dim, bw_key(key, 2 + (uint64_t)k));
		st = bw_device_upload(dev, k ? l->a_dst : l->a_src, w, (size_t)pc * sizeof *w);
	}
	if (!st && sage) {
		uniform_init(w, l->out, sage_bound, bw_key(key, KEY_SAGE_BIAS));
		st = bw_device_upload(dev, l->b, w, (size_t)l->out * sizeof *w);
	} else if (!st) {
		st = bw_device_memset(dev, l->b, 0, (size_t)l->out * sizeof *l->b);
	}
	bw_free(w);
	if (!st && l->edge_dim) /* streams of their own: the others draw as without them */
		st = edge_term_init(l, dev, key);
	return st;
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

/* SAGE's weights stacked [W; W_neigh] [2 in, out], and their gradients likewise: the
 * layer's parameters hold W_neigh right after W (bw_layer_bind_shape), so the stack is a
 * view, and [x_dst | agg] [W; W_neigh] is the layer's two products as one (bw_matmul_cat). */
static bw_tensor sage_stack(const bw_backend *be, const bw_layer *l, float *w)
{
	return bw_tensor_view(be->dev, w, 2 * l->in, l->out);
}

/* SAGE's aggregation mode for the commuting aggregators (mean, sum). */
static bw_agg sage_mode(const bw_layer *l) { return l->aggr == BURROW_AGGR_SUM ? BW_AGG_SUM : BW_AGG_MEAN; }

/* The [heads F, F] matrix that averages the heads, built once on the host and uploaded. */
static int head_mean_matrix(bw_layer *l, const bw_device *dev)
{
	const int64_t f = l->f_dim, hf = l->heads * f;
	if (l->mean.rows == hf && l->mean.cols == f)
		return 0;
	float *m = bw_calloc((size_t)(hf * f) + 1, sizeof *m);
	if (!m)
		return BURROW_E_NOMEM;
	for (int64_t k = 0; k < l->heads; k++)
		for (int64_t c = 0; c < f; c++)
			m[(k * f + c) * f + c] = 1.0f / (float)l->heads;
	int st = bw_tensor_reshape(&l->mean, dev, hf, f);
	if (!st)
		st = bw_device_upload(dev, l->mean.data, m, (size_t)(hf * f) * sizeof *m);
	bw_free(m);
	if (st)
		l->mean.rows = 0; /* rebuilt next time */
	return st;
}

/* The block's edge features as a tensor [edges, edge_dim] (host memory, borrowed). */
static int edge_feat_view(const bw_backend *be, const bw_layer *l, const bw_block *b, bw_tensor *f)
{
	if (!b->edge_feat || b->edge_feat_dim != l->edge_dim)
		return bw_err(BURROW_E_INVAL, "layer: gat with edge features of width %lld, the block has %s%lld",
			      (long long)l->edge_dim, b->edge_feat ? "width " : "none, ",
			      (long long)(b->edge_feat ? b->edge_feat_dim : 0));
	if (!be->dev->host_memory)
		return bw_err(BURROW_E_UNSUPPORTED, "layer: gat's edge features are read in host memory (the cpu backend)");
	*f = bw_tensor_view(be->dev, (float *)b->edge_feat + b->indptr[0] * l->edge_dim, bw_block_edges(b), l->edge_dim);
	return 0;
}

/* GAT's edge scores [edges, heads]: ve = W_e a_edge per head [edge_dim, heads], then
 * s_edge = F ve for the block's edge features F [edges, edge_dim]. */
static int edge_scores(const bw_backend *be, bw_layer *l, const bw_block *b)
{
	int st;
	bw_tensor f;
	const bw_tensor we = bw_tensor_view(be->dev, l->w_e, l->edge_dim, l->heads * l->f_dim);
	TRY(edge_feat_view(be, l, b, &f));
	TRY(bw_tensor_reshape(&l->ve, be->dev, l->edge_dim, l->heads));
	TRY(bw_head_dot(be, &we, l->heads, l->a_edge, &l->ve));
	TRY(bw_tensor_reshape(&l->s_edge, be->dev, f.rows, l->heads));
	if (f.rows == 0)
		return 0;
	return bw_matmul(be, &f, false, &l->ve, false, 1.0f, 0.0f, &l->s_edge);
}

/* Its backward from gs_edge: gve = F^T gs_edge, then gW_e (overwritten) and ga_edge. */
static int edge_scores_backward(const bw_backend *be, bw_layer *l, const bw_block *b)
{
	int st;
	bw_tensor f;
	const int64_t hf = l->heads * l->f_dim;
	const bw_tensor we = bw_tensor_view(be->dev, l->w_e, l->edge_dim, hf);
	bw_tensor gwe = bw_tensor_view(be->dev, l->gw_e, l->edge_dim, hf);
	TRY(edge_feat_view(be, l, b, &f));
	TRY(bw_tensor_reshape(&l->gve, be->dev, l->edge_dim, l->heads));
	if (f.rows == 0)
		TRY(bw_device_memset(be->dev, l->gve.data, 0, (size_t)(l->edge_dim * l->heads) * sizeof(float)));
	else
		TRY(bw_matmul(be, &f, true, &l->gs_edge, false, 1.0f, 0.0f, &l->gve));
	TRY(bw_device_memset(be->dev, l->gw_e, 0, (size_t)(l->edge_dim * hf) * sizeof(float)));
	return bw_head_dot_backward(be, &we, l->heads, l->a_edge, &l->gve, &gwe, l->ga_edge);
}

/* GAT forward: h = x W, the heads' scores, the edge softmax (dropped out in training),
 * the attention-weighted aggregation, heads concatenated or averaged, + b. */
static int gat_forward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z)
{
	int st;
	const int64_t nd = b->num_dst, ns = b->num_src, hf = l->heads * l->f_dim, slots = bw_block_slots(b);
	const bw_tensor w = bw_tensor_view(be->dev, l->w, l->in, hf);
	TRY(bw_tensor_reshape(&l->agg, be->dev, ns, hf));
	TRY(bw_matmul(be, x, false, &w, false, 1.0f, 0.0f, &l->agg));
	const bw_tensor hd = bw_tensor_rows(&l->agg, 0, nd);
	TRY(bw_tensor_reshape(&l->s_src, be->dev, ns, l->heads));
	TRY(bw_tensor_reshape(&l->s_dst, be->dev, nd, l->heads));
	TRY(bw_head_dot(be, &l->agg, l->heads, l->a_src, &l->s_src));
	TRY(bw_head_dot(be, &hd, l->heads, l->a_dst, &l->s_dst));
	TRY(bw_tensor_reshape(&l->alpha, be->dev, slots, l->heads));
	if (l->edge_dim)
		TRY(edge_scores(be, l, b));
	TRY(bw_edge_softmax_e(be, b, &l->s_src, &l->s_dst, l->edge_dim ? &l->s_edge : NULL, BW_GAT_SLOPE, &l->alpha));
	const bw_tensor *a = &l->alpha;
	l->attn_dropped = l->attn_p > 0.0f;
	if (l->attn_dropped) {
		const size_t n = (size_t)(slots * l->heads);
		TRY(bw_tensor_reshape(&l->alpha_drop, be->dev, slots, l->heads));
		TRY(bw_device_copy(be->dev, l->alpha_drop.data, l->alpha.data, n * sizeof(float)));
		TRY(bw_dbuf_reserve(&l->attn_mask, be->dev, n));
		TRY(bw_dropout(be, &l->alpha_drop, l->attn_mask.ptr, l->attn_p, l->attn_key));
		a = &l->alpha_drop;
	}
	if (l->concat) {
		TRY(bw_att_aggregate(be, b, a, &l->agg, z));
	} else {
		TRY(head_mean_matrix(l, be->dev));
		TRY(bw_tensor_reshape(&l->cat, be->dev, nd, hf));
		TRY(bw_att_aggregate(be, b, a, &l->agg, &l->cat));
		TRY(bw_matmul(be, &l->cat, false, &l->mean, false, 1.0f, 0.0f, z));
	}
	return bw_bias_add(be, z, l->b, l->out);
}

/* GAT backward, the forward's steps in reverse; tmp holds dL/dh. */
static int gat_backward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, const bw_tensor *gz,
			bw_tensor *gx)
{
	int st;
	const int64_t nd = b->num_dst, ns = b->num_src, hf = l->heads * l->f_dim;
	const bw_tensor *gcat = gz;
	if (!l->concat) {
		TRY(bw_tensor_reshape(&l->gcat, be->dev, nd, hf));
		TRY(bw_matmul(be, gz, false, &l->mean, true, 1.0f, 0.0f, &l->gcat));
		gcat = &l->gcat;
	}
	const bw_tensor *a = l->attn_dropped ? &l->alpha_drop : &l->alpha;
	TRY(bw_tensor_reshape(&l->galpha, be->dev, l->alpha.rows, l->heads));
	TRY(bw_tensor_reshape(&l->tmp, be->dev, ns, hf));
	TRY(bw_att_aggregate_backward(be, b, a, &l->agg, gcat, &l->galpha, &l->tmp));
	if (l->attn_dropped)
		TRY(bw_dropout_backward(be, &l->galpha, l->attn_mask.ptr, l->attn_p));
	TRY(bw_tensor_reshape(&l->gs_src, be->dev, ns, l->heads));
	TRY(bw_tensor_reshape(&l->gs_dst, be->dev, nd, l->heads));
	if (l->edge_dim)
		TRY(bw_tensor_reshape(&l->gs_edge, be->dev, bw_block_edges(b), l->heads));
	TRY(bw_edge_softmax_e_backward(be, b, &l->s_src, &l->s_dst, l->edge_dim ? &l->s_edge : NULL, &l->alpha,
				       &l->galpha, BW_GAT_SLOPE, &l->gs_src, &l->gs_dst, l->edge_dim ? &l->gs_edge : NULL));
	if (l->edge_dim)
		TRY(edge_scores_backward(be, l, b));
	const bw_tensor hd = bw_tensor_rows(&l->agg, 0, nd);
	bw_tensor ghd = bw_tensor_rows(&l->tmp, 0, nd);
	TRY(bw_head_dot_backward(be, &l->agg, l->heads, l->a_src, &l->gs_src, &l->tmp, l->ga_src));
	TRY(bw_head_dot_backward(be, &hd, l->heads, l->a_dst, &l->gs_dst, &ghd, l->ga_dst));
	const bw_tensor w = bw_tensor_view(be->dev, l->w, l->in, hf);
	bw_tensor gw = bw_tensor_view(be->dev, l->gw, l->in, hf);
	TRY(bw_matmul(be, x, true, &l->tmp, false, 1.0f, 0.0f, &gw));
	if (gx)
		TRY(bw_matmul(be, &l->tmp, false, &w, true, 1.0f, 0.0f, gx));
	return 0;
}

/* SAGE max forward: z = x_dst W_self + max_{N(i)}(x) W_neigh (+ b by the caller). */
static int sage_max_forward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z)
{
	int st;
	const int64_t nd = b->num_dst;
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor ws = sage_stack(be, l, l->w);
	TRY(bw_tensor_reshape(&l->agg, be->dev, nd, l->in));
	TRY(bw_dbuf_reserve(&l->arg, be->dev, (size_t)(nd * l->in) * sizeof(int32_t)));
	TRY(bw_seg_max(be, b, x, &l->agg, l->arg.ptr));
	return bw_matmul_cat(be, &xd, &l->agg, false, &ws, 1.0f, 0.0f, z);
}

static int sage_max_backward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x,
			     const bw_tensor *gz, bw_tensor *gx)
{
	int st;
	const int64_t nd = b->num_dst;
	const bw_tensor xd = bw_tensor_rows(x, 0, nd);
	const bw_tensor w = bw_tensor_view(be->dev, l->w, l->in, l->out);
	const bw_tensor wn = bw_tensor_view(be->dev, l->w_neigh, l->in, l->out);
	bw_tensor gws = sage_stack(be, l, l->gw);
	TRY(bw_matmul_cat(be, &xd, &l->agg, true, gz, 1.0f, 0.0f, &gws));
	if (!gx)
		return 0;
	TRY(bw_tensor_reshape(&l->tmp, be->dev, nd, l->in));
	TRY(bw_matmul(be, gz, false, &wn, true, 1.0f, 0.0f, &l->tmp));
	TRY(bw_seg_max_backward(be, b, &l->tmp, l->arg.ptr, gx));
	bw_tensor gxd = bw_tensor_rows(gx, 0, nd);
	return bw_matmul(be, gz, false, &w, true, 1.0f, 1.0f, &gxd);
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
	case BW_LAYER_GAT:
		return gat_forward(be, l, b, x, z);
	case BW_LAYER_SAGE: {
		const bw_tensor wn = bw_tensor_view(be->dev, l->w_neigh, l->in, l->out);
		if (l->aggr == BURROW_AGGR_MAX) {
			TRY(sage_max_forward(be, l, b, x, z));
		} else if (l->project_first) {
			TRY(bw_tensor_reshape(&l->agg, be->dev, ns, l->out));
			TRY(bw_matmul(be, x, false, &wn, false, 1.0f, 0.0f, &l->agg));
			TRY(bw_aggregate(be, b, sage_mode(l), &l->agg, 0, -1, z));
			TRY(bw_matmul(be, &xd, false, &w, false, 1.0f, 1.0f, z));
		} else {
			const bw_tensor ws = sage_stack(be, l, l->w);
			TRY(bw_tensor_reshape(&l->agg, be->dev, nd, l->in));
			TRY(bw_aggregate(be, b, sage_mode(l), x, 0, -1, &l->agg));
			TRY(bw_matmul_cat(be, &xd, &l->agg, false, &ws, 1.0f, 0.0f, z));
		}
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

/* The chunk sizes on be: on the CPU the host computes, so it polls between chunks; a GPU
 * queues its kernels on the compute stream while the host drives the exchange, so each
 * phase is one kernel (the early half of the aggregation is one SpMM) and the host polls
 * once between phases. */
static int64_t agg_chunk(const bw_backend *be) { return be->dev->host_memory ? BW_OVERLAP_AGG_CHUNK : INT64_MAX / 2; }
static int64_t mm_chunk(const bw_backend *be) { return be->dev->host_memory ? BW_OVERLAP_MM_CHUNK : INT64_MAX / 2; }

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
	const int64_t step = mm_chunk(be);
	for (int64_t q = r0; q < r1; q += step) {
		float bq = ta && q > r0 ? 1.0f : beta;
		TRY(matmul_rows(be, a, ta, w, tw, bq, c, q, BW_MIN(q + step, r1)));
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
	const int64_t step = agg_chunk(be);
	for (int64_t c = 0; c < b->num_dst; c += step) {
		TRY(bw_aggregate_part(be, b, BW_PART_EARLY, mode, x, c, BW_MIN(c + step, b->num_dst), false,
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
	if (l->kind == BW_LAYER_GAT || l->aggr == BURROW_AGGR_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "layer: %s does not split into early and late parts of a row "
						    "(the halo exchange's overlap)", l->kind == BW_LAYER_GAT ? "gat" : "the max aggregator");
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
	const bw_agg mode = sage ? sage_mode(l) : BW_AGG_GCN;
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
	const bw_agg mode = sage ? sage_mode(l) : BW_AGG_GCN;
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
		for (int64_t c = 0; c < split; c += agg_chunk(be)) {
			TRY(bw_aggregate_backward(be, b, mode, gz, c, BW_MIN(c + agg_chunk(be), split), &l->tmp));
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
		for (int64_t c = 0; c < split; c += agg_chunk(be)) {
			TRY(bw_aggregate_backward(be, b, mode, &l->tmp, c, BW_MIN(c + agg_chunk(be), split), gx));
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
	bw_agg mode = l->kind == BW_LAYER_SAGE ? sage_mode(l) : BW_AGG_GCN;
	switch (l->kind) {
	case BW_LAYER_GAT:
		return gat_backward(be, l, b, x, gz, gx);
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
		if (sage && l->aggr == BURROW_AGGR_MAX)
			return sage_max_backward(be, l, b, x, gz, gx);
		if (sage && l->project_first)
			TRY(bw_matmul(be, &xd, true, gz, false, 1.0f, 0.0f, &gw));
		if (l->project_first) {
			TRY(bw_tensor_reshape(&l->tmp, be->dev, ns, l->out));
			TRY(bw_aggregate_backward(be, b, mode, gz, 0, -1, &l->tmp));
			TRY(bw_matmul(be, x, true, &l->tmp, false, 1.0f, 0.0f, gwa));
			if (gx)
				TRY(bw_matmul(be, &l->tmp, false, wa, true, 1.0f, 0.0f, gx));
		} else {
			/* SAGE: [gW; gW_neigh] = [x_dst | agg]^T gz, one pass over gz */
			bw_tensor gws = sage_stack(be, l, l->gw);
			if (sage)
				TRY(bw_matmul_cat(be, &xd, &l->agg, true, gz, 1.0f, 0.0f, &gws));
			else
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

bool bw_layer_reads_dense_input(const bw_layer *l)
{
	return (l->kind == BW_LAYER_SAGE || l->kind == BW_LAYER_GCN) && !l->project_first;
}

void bw_layer_release(bw_layer *l)
{
	bw_tensor *t[] = {&l->agg, &l->tmp, &l->s_src, &l->s_dst, &l->alpha, &l->alpha_drop, &l->cat,
			  &l->gcat, &l->galpha, &l->gs_src, &l->gs_dst, &l->mean, &l->ve, &l->s_edge, &l->gs_edge, &l->gve};
	for (size_t i = 0; i < sizeof t / sizeof *t; i++)
		bw_tensor_free(t[i]);
	bw_dbuf_free(&l->arg);
	bw_dbuf_free(&l->attn_mask);
}
