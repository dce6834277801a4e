/* model.c: sage, gcn, gat and mlp models: a stack of layers with ReLU and dropout between them,
 * one flat parameter buffer, forward and backward over a batch of blocks. */
#include "model.h"
#include "opcount.h"

#include <string.h>

enum { TAG_INIT = 0x494e4954, TAG_DROPOUT = 0x44524f50, TAG_ATTN = 0x4154544e };

void bw_model_layer_dims(const bw_model_cfg *cfg, int l, int64_t *in, int64_t *out)
{
	*in = l == 0 ? cfg->in_dim : cfg->hidden;
	*out = l == cfg->layers - 1 ? cfg->classes : cfg->hidden;
}

static bw_layer_kind layer_kind(int model)
{
	return model == BURROW_MODEL_SAGE  ? BW_LAYER_SAGE
	       : model == BURROW_MODEL_GCN ? BW_LAYER_GCN
	       : model == BURROW_MODEL_GAT ? BW_LAYER_GAT
					   : BW_LAYER_LINEAR;
}

bw_layer_shape bw_model_layer_shape(const bw_model_cfg *cfg, int l)
{
	bw_layer_shape s = {.kind = layer_kind(cfg->kind), .aggr = cfg->aggr, .heads = cfg->heads > 0 ? cfg->heads : 1,
			    .edge_dim = cfg->kind == BURROW_MODEL_GAT ? cfg->edge_dim : 0};
	bw_model_layer_dims(cfg, l, &s.in, &s.out);
	s.concat = l + 1 < cfg->layers; /* hidden layers concatenate their heads, the output averages them */
	return s;
}

/* Hidden layers are normalized when cfg->norm asks. */
static bool has_norm(const bw_model_cfg *cfg, int l) { return cfg->norm != BURROW_NORM_NONE && l + 1 < cfg->layers; }

/* A hidden layer whose input is as wide as its output adds it (cfg->residual). */
static bool has_res(const bw_model *m, int l)
{
	return m->cfg.residual && l + 1 < m->cfg.layers && m->layer[l].in == m->layer[l].out;
}

/* n floats of value v into device memory, through the device layer. */
static int fill(const bw_device *dev, float *p, int64_t n, float v)
{
	float *h = bw_malloc((size_t)n * sizeof *h + 1);
	if (!h)
		return BURROW_E_NOMEM;
	for (int64_t i = 0; i < n; i++)
		h[i] = v;
	int st = bw_device_upload(dev, p, h, (size_t)n * sizeof *h);
	bw_free(h);
	return st;
}

const bw_tensor *bw_model_output(const bw_model *m, int l) { return has_res(m, l) ? &m->res[l] : &m->h[l]; }

/* The kernel families a model of cfg runs through beyond the required slots, with what in
 * the model needs each, into ops and why; returns how many. */
static int model_ops(const bw_model_cfg *cfg, bw_op ops[BW_OP_COUNT], const char *why[BW_OP_COUNT])
{
	int n = 0;
	if (cfg->kind == BURROW_MODEL_GAT) {
		ops[n] = BW_OP_ATTENTION;
		why[n++] = "gat";
	}
	if (cfg->kind == BURROW_MODEL_SAGE && cfg->aggr == BURROW_AGGR_MAX) {
		ops[n] = BW_OP_MAX_AGG;
		why[n++] = "sage with the max aggregator";
	}
	if (cfg->layers > 1 && cfg->norm == BURROW_NORM_LAYER) { /* hidden layers only (has_norm) */
		ops[n] = BW_OP_LAYER_NORM;
		why[n++] = "layer norm between layers";
	}
	if (cfg->layers > 1 && cfg->norm == BURROW_NORM_BATCH) {
		ops[n] = BW_OP_BATCH_NORM;
		why[n++] = "batch norm between layers";
	}
	return n;
}

int bw_model_supported(const bw_backend *be, const bw_model_cfg *cfg)
{
	bw_op ops[BW_OP_COUNT];
	const char *why[BW_OP_COUNT];
	const int n = model_ops(cfg, ops, why);
	for (int i = 0; i < n; i++)
		if (!bw_backend_supports(be, ops[i]))
			return bw_err(BURROW_E_UNSUPPORTED, "model: the %s backend cannot run %s: it has no kernels for %s",
				      bw_backend_name(be), why[i], bw_op_name(ops[i]));
	if (cfg->kind == BURROW_MODEL_GAT && cfg->edge_dim > 0 && !be->dev->host_memory)
		return bw_err(BURROW_E_UNSUPPORTED, "model: gat with edge features runs on the cpu backend only (the %s "
			      "backend reads no edge features; --edge-features off trains without them)", bw_backend_name(be));
	return 0;
}

int bw_model_check_cfg(const bw_model_cfg *c)
{
	if (c->kind != BURROW_MODEL_SAGE && c->kind != BURROW_MODEL_GCN && c->kind != BURROW_MODEL_MLP &&
	    c->kind != BURROW_MODEL_GAT)
		return bw_err(BURROW_E_INVAL, "model: unknown kind %d", c->kind);
	if (c->aggr != BURROW_AGGR_MEAN && c->aggr != BURROW_AGGR_MAX && c->aggr != BURROW_AGGR_SUM)
		return bw_err(BURROW_E_INVAL, "model: unknown aggregator %d", c->aggr);
	if (c->kind == BURROW_MODEL_GAT && (c->heads < 1 || (c->layers > 1 && c->hidden % c->heads)))
		return bw_err(BURROW_E_INVAL, "model: gat with %d heads and hidden %lld: the heads must divide the hidden "
					      "width (they are concatenated)", c->heads, (long long)c->hidden);
	if (c->edge_dim < 0 || c->edge_dim > INT32_MAX || (c->edge_dim && c->kind != BURROW_MODEL_GAT))
		return bw_err(BURROW_E_INVAL, "model: an edge dimension (%lld) is for gat only, and >= 0",
			      (long long)c->edge_dim);
	if (c->norm != BURROW_NORM_NONE && c->norm != BURROW_NORM_BATCH && c->norm != BURROW_NORM_LAYER)
		return bw_err(BURROW_E_INVAL, "model: unknown normalization %d", c->norm);
	if (!(c->attn_dropout >= 0.0f && c->attn_dropout < 1.0f))
		return bw_err(BURROW_E_INVAL, "model: attention dropout %g outside [0, 1)", (double)c->attn_dropout);
	if (c->layers < 1 || c->layers > BURROW_MAX_LAYERS)
		return bw_err(BURROW_E_INVAL, "model: %d layers outside [1, %d]", c->layers, BURROW_MAX_LAYERS);
	if (c->in_dim < 1 || c->classes < 1 || (c->layers > 1 && c->hidden < 1))
		return bw_err(BURROW_E_INVAL, "model: input dimension %lld, hidden %lld, classes %lld must be positive",
			      (long long)c->in_dim, (long long)c->hidden, (long long)c->classes);
	if (c->in_dim > INT32_MAX || c->hidden > INT32_MAX || c->classes > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "model: a dimension exceeds 2^31 - 1");
	if (!(c->dropout >= 0.0f && c->dropout < 1.0f))
		return bw_err(BURROW_E_INVAL, "model: dropout %g outside [0, 1)", (double)c->dropout);
	return 0;
}

int bw_model_open(bw_model **out, const bw_device *dev, const bw_model_cfg *cfg, uint64_t seed)
{
	*out = NULL;
	int st = bw_model_check_cfg(cfg);
	if (st)
		return st;
	bw_model *m = bw_calloc(1, sizeof *m);
	if (!m)
		return BURROW_E_NOMEM;
	m->cfg = *cfg;
	m->dev = dev = bw_device_or_cpu(dev);
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		m->h[l] = bw_tensor_empty(dev);
		m->mask[l].dev = dev;
	}
	m->g[0] = m->g[1] = bw_tensor_empty(dev);
	for (int l = 0; l < cfg->layers; l++) {
		const bw_layer_shape ls = bw_model_layer_shape(cfg, l);
		m->num_params += bw_layer_shape_params(&ls) + (has_norm(cfg, l) ? 2 * ls.out : 0);
		m->num_state += cfg->norm == BURROW_NORM_BATCH && has_norm(cfg, l) ? 2 * ls.out : 0;
		m->nx[l] = m->res[l] = bw_tensor_empty(dev);
		m->nstat[l].dev = dev;
	}
	m->gres = m->memo = bw_tensor_empty(dev);
	const size_t bytes = (size_t)m->num_params * sizeof(float);
	if ((st = bw_device_alloc(dev, bytes, (void **)&m->params)) ||
	    (st = bw_device_alloc(dev, bytes, (void **)&m->grads)) || (st = bw_device_memset(dev, m->grads, 0, bytes)))
		goto fail;
	int64_t off = 0;
	for (int l = 0; l < cfg->layers; l++) {
		const bw_layer_shape ls = bw_model_layer_shape(cfg, l);
		m->param_off[l] = off;
		bw_layer_bind_shape(&m->layer[l], &ls, m->params + off, m->grads + off);
		if ((st = bw_layer_init(&m->layer[l], dev, bw_key(bw_key(seed, TAG_INIT), (uint64_t)l))))
			goto fail;
		off += bw_layer_shape_params(&ls);
		if (has_norm(cfg, l)) {
			m->ngamma[l] = m->params + off;
			m->nbeta[l] = m->ngamma[l] + ls.out;
			m->gngamma[l] = m->grads + off;
			m->gnbeta[l] = m->gngamma[l] + ls.out;
			off += 2 * ls.out;
			if ((st = fill(dev, m->ngamma[l], ls.out, 1.0f)) || (st = fill(dev, m->nbeta[l], ls.out, 0.0f)))
				goto fail;
		}
	}
	m->param_off[cfg->layers] = off;
	if (m->num_state) {
		/* running mean 0, variance 1 per normalized layer */
		if ((st = bw_device_alloc(dev, (size_t)m->num_state * sizeof(float), (void **)&m->state)))
			goto fail;
		int64_t so = 0;
		for (int l = 0; l < cfg->layers; l++) {
			if (!has_norm(cfg, l))
				continue;
			const int64_t w = m->layer[l].out;
			m->rmean[l] = m->state + so;
			m->rvar[l] = m->state + so + w;
			so += 2 * w;
			if ((st = fill(dev, m->rmean[l], w, 0.0f)) || (st = fill(dev, m->rvar[l], w, 1.0f)))
				goto fail;
		}
	}
	*out = m;
	return 0;
fail:
	bw_model_close(m);
	return st;
}

void bw_model_close(bw_model *m)
{
	if (!m)
		return;
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		bw_layer_release(&m->layer[l]);
		bw_tensor_free(&m->h[l]);
		bw_dbuf_free(&m->mask[l]);
	}
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		bw_tensor_free(&m->nx[l]);
		bw_tensor_free(&m->res[l]);
		bw_dbuf_free(&m->nstat[l]);
	}
	bw_tensor_free(&m->gres);
	bw_tensor_free(&m->memo);
	bw_device_free(m->dev, m->state);
	bw_tensor_free(&m->g[0]);
	bw_tensor_free(&m->g[1]);
	bw_device_free(m->dev, m->params);
	bw_device_free(m->dev, m->grads);
	bw_free(m);
}

uint64_t bw_dropout_key(uint64_t seed, uint64_t epoch, uint64_t batch, int layer)
{
	return bw_key(bw_key(bw_key(bw_key(seed, TAG_DROPOUT), epoch), batch), (uint64_t)layer);
}

static int check_batch(const bw_model *m, const bw_batch *b)
{
	const int L = m->cfg.layers;
	if (b->num_blocks != L)
		return bw_err(BURROW_E_INVAL, "batch: %d blocks for a %d-layer model", b->num_blocks, L);
	for (int l = 0; l < L; l++) {
		if (!b->blocks[l])
			return bw_err(BURROW_E_INVAL, "batch: block %d is missing", l);
		if (l + 1 < L && b->blocks[l]->num_dst != b->blocks[l + 1]->num_src)
			return bw_err(BURROW_E_INVAL, "batch: block %d has %lld destinations but block %d has %lld sources",
				      l, (long long)b->blocks[l]->num_dst, l + 1, (long long)b->blocks[l + 1]->num_src);
	}
	if (b->x.rows != b->blocks[0]->num_src || b->x.cols != m->cfg.in_dim)
		return bw_err(BURROW_E_INVAL, "batch: input [%lld, %lld] for %lld sources of dimension %lld",
			      (long long)b->x.rows, (long long)b->x.cols, (long long)b->blocks[0]->num_src,
			      (long long)m->cfg.in_dim);
	return 0;
}

/* Hidden-layer activation: ReLU, then dropout in training. */
static int activate(const bw_backend *be, bw_model *m, int l, bw_tensor *z, bool drop, uint64_t key)
{
	int st = bw_relu(be, z);
	if (st || !drop)
		return st;
	const int64_t n = z->rows * z->cols;
	if ((st = bw_dbuf_reserve(&m->mask[l], m->dev, (size_t)n)))
		return st;
	return bw_dropout(be, z, m->mask[l].ptr, m->cfg.dropout, key);
}

/* n bytes from src to dst in the memory of dev, the backend's: on the CPU a large copy goes
 * in chunks of COPY_CHUNK bytes that the backend's threads take dynamically (the first
 * layer's N x hidden output kept at each evaluation was one thread's memcpy while the other
 * waited: under perf, 238 of a two-thread Cora run's 12,900 samples, all on one thread; split
 * by the thread count, a thread on a core another process shares held the copy back). */
#define COPY_CHUNK ((size_t)1 << 18)
static int copy_on(const bw_backend *be, const bw_device *dev, void *dst, const void *src, size_t n)
{
	if (be->kind != BW_BACKEND_CPU || be->threads < 2 || n < ((size_t)1 << 20))
		return bw_device_copy(dev, dst, src, n);
	const int64_t nc = (int64_t)((n + COPY_CHUNK - 1) / COPY_CHUNK);
#pragma omp parallel for schedule(dynamic, 1) num_threads((int)BW_MIN((int64_t)be->threads, nc))
	for (int64_t i = 0; i < nc; i++) {
		const size_t o = (size_t)i * COPY_CHUNK;
		memcpy((char *)dst + o, (const char *)src + o, BW_MIN(COPY_CHUNK, n - o));
	}
	return 0;
}

/* Normalize hidden layer l's output z in place, then scale and shift it. Layer norm and
 * batch norm in training keep the normalized rows and their statistics for the backward;
 * batch norm in training also moves its running averages, in inference it uses them. */
static int normalize(const bw_backend *be, bw_model *m, int l, bw_tensor *z, bool training)
{
	int st;
	const int64_t rows = z->rows, cols = z->cols;
	const bool batch = m->cfg.norm == BURROW_NORM_BATCH;
	if (batch && !training) {
		if ((st = bw_col_norm_apply(be, z, m->rmean[l], m->rvar[l], BW_NORM_EPS, z)))
			return st;
	} else {
		const size_t nstat = (size_t)(batch ? 3 * cols : rows) * sizeof(float);
		if ((st = bw_tensor_reshape(&m->nx[l], m->dev, rows, cols)) || (st = bw_dbuf_reserve(&m->nstat[l], m->dev, nstat)))
			return st;
		float *stat = m->nstat[l].ptr;
		if (batch) {
			if ((st = bw_col_norm(be, z, BW_NORM_EPS, &m->nx[l], stat, stat + cols, stat + 2 * cols)))
				return st;
			/* running = (1 - momentum) running + momentum batch (the variance unbiased, as PyTorch) */
			const double mo = BW_NORM_MOMENTUM, unb = rows > 1 ? (double)rows / (double)(rows - 1) : 1.0;
			bw_tensor rm = bw_tensor_view(m->dev, m->rmean[l], 1, cols), rv = bw_tensor_view(m->dev, m->rvar[l], 1, cols);
			const bw_tensor bm = bw_tensor_view(m->dev, stat, 1, cols), bv = bw_tensor_view(m->dev, stat + cols, 1, cols);
			if ((st = bw_scale(be, (float)(1 - mo), &rm)) || (st = bw_axpy(be, (float)mo, &bm, &rm)) ||
			    (st = bw_scale(be, (float)(1 - mo), &rv)) || (st = bw_axpy(be, (float)(mo * unb), &bv, &rv)))
				return st;
		} else if ((st = bw_row_norm(be, z, BW_NORM_EPS, &m->nx[l], stat))) {
			return st;
		}
		if ((st = copy_on(be, m->dev, z->data, m->nx[l].data, (size_t)(rows * cols) * sizeof(float))))
			return st;
	}
	if ((st = bw_col_scale(be, z, m->ngamma[l], cols)))
		return st;
	return bw_bias_add(be, z, m->nbeta[l], cols);
}

/* Its backward in place on g: the scale's and shift's gradients, then the normalization's. */
static int normalize_backward(const bw_backend *be, bw_model *m, int l, bw_tensor *g)
{
	int st;
	const int64_t cols = g->cols;
	const float *stat = m->nstat[l].ptr;
	if ((st = bw_col_dot(be, g, &m->nx[l], m->gngamma[l])) || (st = bw_col_sum(be, g, m->gnbeta[l], cols)) ||
	    (st = bw_col_scale(be, g, m->ngamma[l], cols)))
		return st;
	if (m->cfg.norm == BURROW_NORM_BATCH)
		return bw_col_norm_backward(be, &m->nx[l], stat + 2 * cols, g, g);
	return bw_row_norm_backward(be, &m->nx[l], stat, g, g);
}

/* out = z plus the layer's input rows of its destinations (the first rows of x). */
static int add_residual(const bw_backend *be, const bw_tensor *z, const bw_tensor *x, bw_tensor *out)
{
	int st;
	const bw_tensor xd = bw_tensor_rows(x, 0, z->rows);
	if (out != z && ((st = bw_tensor_reshape(out, z->dev, z->rows, z->cols)) ||
			 (st = copy_on(be, bw_device_or_cpu(z->dev), out->data, z->data,
					      (size_t)(z->rows * z->cols) * sizeof(float)))))
		return st;
	return bw_axpy(be, 1.0f, &xd, out);
}

int bw_model_layer_forward(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x, bool training,
			   uint64_t key, const bw_tensor **h)
{
	return bw_model_layer_forward_overlap(be, m, l, blk, x, training, key, NULL, h);
}

bool bw_model_memo_able(const bw_model *m) { return m->cfg.kind != BURROW_MODEL_GAT; }
void bw_model_memo_drop(bw_model *m) { m->memo_key = 0; }
bool bw_model_reads_dense_input(const bw_model *m)
{
	return bw_layer_reads_dense_input(&m->layer[0]) || has_res(m, 0);
}

/* Does what layer 0's inference kept stand for its forward over blk under key take? */
static bool memo_fits(const bw_model *m, int l, const bw_block *blk, const bw_tensor *x, uint64_t take)
{
	return l == 0 && take != 0 && m->memo_key == take && bw_model_memo_able(m) &&
	       m->memo.rows == blk->num_dst && m->memo.cols == m->layer[0].out && x->cols == m->layer[0].in;
}

/* One layer's forward; layer 0 takes what inference kept under take when it fits (h[0]
 * and the memo trade buffers: the memo is used up) and otherwise drops it, since layer 0's
 * saved state is then no longer the memo's. */
static int layer_forward_run(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x,
			     bool training, uint64_t key, const bw_overlap *ov, uint64_t take, const bw_tensor **h)
{
	if (l < 0 || l >= m->cfg.layers)
		return bw_err(BURROW_E_INVAL, "model: no layer %d", l);
	int st;
	if (m->cfg.kind != BURROW_MODEL_MLP &&
	    ((st = bw_block_prepare(blk, training, m->cfg.kind == BURROW_MODEL_GCN)) ||
	     (st = bw_block_upload(blk, be->dev))))
		return st;
	m->layer[l].attn_p = training ? m->cfg.attn_dropout : 0.0f;
	m->layer[l].attn_key = bw_key(key, TAG_ATTN);
	if (!ov && memo_fits(m, l, blk, x, take)) {
		const bw_tensor t = m->h[0];
		m->h[0] = m->memo;
		m->memo = t;
		m->memo_key = 0;
	} else {
		if (l == 0)
			m->memo_key = 0;
		if ((st = ov ? bw_layer_forward_overlap(be, &m->layer[l], blk, x, &m->h[l], ov)
			     : bw_layer_forward(be, &m->layer[l], blk, x, &m->h[l])))
			return st;
	}
	m->dropout_on = training && m->cfg.dropout > 0.0f;
	if (has_norm(&m->cfg, l) && (st = normalize(be, m, l, &m->h[l], training)))
		return st;
	if (l + 1 < m->cfg.layers && (st = activate(be, m, l, &m->h[l], m->dropout_on, key)))
		return st;
	if (has_res(m, l) && (st = add_residual(be, &m->h[l], x, &m->res[l])))
		return st;
	*h = bw_model_output(m, l);
	return 0;
}

/* The same with the ops counted as layer l's (opcount.h) */
static int layer_forward(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x, bool training,
			 uint64_t key, const bw_overlap *ov, uint64_t take, const bw_tensor **h)
{
	bw_op_layer(be, l);
	const int st = layer_forward_run(be, m, l, blk, x, training, key, ov, take, h);
	bw_op_layer(be, -1);
	return st;
}

int bw_model_layer_forward_overlap(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x,
				   bool training, uint64_t key, const bw_overlap *ov, const bw_tensor **h)
{
	return layer_forward(be, m, l, blk, x, training, key, ov, 0, h);
}

int bw_model_layer_backward(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
			    bw_tensor *gh, bw_tensor *gx)
{
	return bw_model_layer_backward_overlap(be, m, l, blk, x, gh, gx, NULL);
}

static int layer_backward(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
			  bw_tensor *gh, bw_tensor *gx, const bw_overlap *ov)
{
	if (l < 0 || l >= m->cfg.layers)
		return bw_err(BURROW_E_INVAL, "model: no layer %d", l);
	int st;
	const bool res = has_res(m, l) && gx;
	if (res && ((st = bw_tensor_reshape(&m->gres, m->dev, gh->rows, gh->cols)) ||
		    (st = copy_on(be, m->dev, m->gres.data, gh->data, (size_t)(gh->rows * gh->cols) * sizeof(float)))))
		return st;
	if (l + 1 < m->cfg.layers) {
		if (m->dropout_on && (st = bw_dropout_backward(be, gh, m->mask[l].ptr, m->cfg.dropout)))
			return st;
		if ((st = bw_relu_backward(be, gh, &m->h[l])))
			return st;
	}
	if (has_norm(&m->cfg, l) && (st = normalize_backward(be, m, l, gh)))
		return st;
	if ((st = ov ? bw_layer_backward_overlap(be, &m->layer[l], blk, x, gh, gx, ov)
		     : bw_layer_backward(be, &m->layer[l], blk, x, gh, gx)))
		return st;
	if (res) { /* the input's own path: its destination rows get the output's gradient */
		bw_tensor gxd = bw_tensor_rows(gx, 0, m->gres.rows);
		return bw_axpy(be, 1.0f, &m->gres, &gxd);
	}
	return 0;
}

/* Layer l's backward with its ops counted as layer l's (opcount.h) */
int bw_model_layer_backward_overlap(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
				    bw_tensor *gh, bw_tensor *gx, const bw_overlap *ov)
{
	bw_op_layer(be, l);
	const int st = layer_backward(be, m, l, blk, x, gh, gx, ov);
	bw_op_layer(be, -1);
	return st;
}

int bw_model_forward(const bw_backend *be, bw_model *m, const bw_batch *b, bool training, uint64_t seed,
		     const bw_tensor **logits)
{
	return bw_model_forward_keyed(be, m, b, training, seed, 0, logits);
}

int bw_model_forward_keyed(const bw_backend *be, bw_model *m, const bw_batch *b, bool training, uint64_t seed,
			   uint64_t take, const bw_tensor **logits)
{
	int st = check_batch(m, b);
	if (st)
		return st;
	const bw_tensor *x = &b->x;
	for (int l = 0; l < m->cfg.layers; l++)
		if ((st = layer_forward(be, m, l, b->blocks[l], x, training, bw_dropout_key(seed, b->epoch, b->index, l),
					NULL, take, &x)))
			return st;
	*logits = x;
	return 0;
}

int bw_model_backward(const bw_backend *be, bw_model *m, const bw_batch *b, const bw_tensor *glogits)
{
	return bw_model_backward_input(be, m, b, glogits, NULL);
}

int bw_model_backward_input(const bw_backend *be, bw_model *m, const bw_batch *b, const bw_tensor *glogits,
			    bw_tensor *gx0)
{
	int st = check_batch(m, b);
	if (st)
		return st;
	bw_tensor *gh = (bw_tensor *)glogits; /* read only: the last layer has no activation to undo */
	for (int l = m->cfg.layers - 1; l >= 0; l--) {
		bw_tensor *gx = l > 0 ? &m->g[l % 2] : gx0;
		if ((st = bw_model_layer_backward(be, m, l, b->blocks[l], l == 0 ? &b->x : bw_model_output(m, l - 1), gh, gx)))
			return st;
		gh = gx;
	}
	return 0;
}

int bw_model_infer_layer(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z)
{
	return bw_model_infer_layer_keep(be, m, l, b, x, z, 0);
}

int bw_model_infer_layer_keep(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z,
			      uint64_t keep)
{
	if (l < 0 || l >= m->cfg.layers)
		return bw_err(BURROW_E_INVAL, "model: no layer %d", l);
	int st = 0;
	if (m->cfg.kind == BURROW_MODEL_GCN)
		st = bw_block_prepare(b, false, true);
	if (!st && m->cfg.kind != BURROW_MODEL_MLP)
		st = bw_block_upload(b, be->dev);
	m->layer[l].attn_p = 0.0f;
	if (l == 0)
		m->memo_key = 0;
	bw_op_layer(be, l);
	if (!st)
		st = bw_layer_forward(be, &m->layer[l], b, x, z);
	bw_op_layer(be, -1);
	if (!st && l == 0 && keep && bw_model_memo_able(m) &&
	    !(st = bw_tensor_reshape(&m->memo, m->dev, z->rows, z->cols)) &&
	    !(st = copy_on(be, m->dev, m->memo.data, z->data, (size_t)(z->rows * z->cols) * sizeof(float))))
		m->memo_key = keep;
	if (!st && has_norm(&m->cfg, l))
		st = normalize(be, m, l, z, false);
	if (!st && l + 1 < m->cfg.layers)
		st = bw_relu(be, z);
	if (!st && has_res(m, l))
		st = add_residual(be, z, x, z);
	return st;
}

int bw_model_zero_grads(bw_model *m)
{
	return bw_device_memset(m->dev, m->grads, 0, (size_t)m->num_params * sizeof *m->grads);
}

int bw_model_checksum(const bw_model *m, uint64_t *out)
{
	const size_t n = (size_t)m->num_params * sizeof(float);
	bw_stage stage = {0};
	const void *host;
	int st = bw_stage_read(&stage, m->dev, m->params, n, &host);
	if (!st) {
		const unsigned char *p = host;
		uint64_t h = 0xcbf29ce484222325ull;
		for (size_t i = 0; i < n; i++)
			h = (h ^ p[i]) * 0x100000001b3ull;
		*out = h;
	}
	bw_stage_free(&stage);
	return st;
}
