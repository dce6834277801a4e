/* model.c: sage, gcn and mlp models: a stack of layers with ReLU and dropout between them,
 * one flat parameter buffer, forward and backward over a batch of blocks. */
#include "compute.h"

#include <string.h>

enum { TAG_INIT = 0x494e4954, TAG_DROPOUT = 0x44524f50 };

void bw_model_layer_dims(const bw_model_cfg *cfg, int l, int64_t *in, int64_t *out)
{
	*in = l == 0 ? cfg->in_dim : cfg->hidden;
	*out = l == cfg->layers - 1 ? cfg->classes : cfg->hidden;
}

static bw_layer_kind layer_kind(int model)
{
	return model == BURROW_MODEL_SAGE ? BW_LAYER_SAGE : model == BURROW_MODEL_GCN ? BW_LAYER_GCN : BW_LAYER_LINEAR;
}

int bw_model_check_cfg(const bw_model_cfg *c)
{
	if (c->kind != BURROW_MODEL_SAGE && c->kind != BURROW_MODEL_GCN && c->kind != BURROW_MODEL_MLP)
		return bw_err(BURROW_E_INVAL, "model: unknown kind %d", c->kind);
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
	const bw_layer_kind kind = layer_kind(cfg->kind);
	for (int l = 0; l < cfg->layers; l++) {
		int64_t in, o;
		bw_model_layer_dims(cfg, l, &in, &o);
		m->num_params += bw_layer_num_params(kind, in, o);
	}
	const size_t bytes = (size_t)m->num_params * sizeof(float);
	if ((st = bw_device_alloc(dev, bytes, (void **)&m->params)) ||
	    (st = bw_device_alloc(dev, bytes, (void **)&m->grads)) || (st = bw_device_memset(dev, m->grads, 0, bytes)))
		goto fail;
	int64_t off = 0;
	for (int l = 0; l < cfg->layers; l++) {
		int64_t in, o;
		bw_model_layer_dims(cfg, l, &in, &o);
		bw_layer_bind(&m->layer[l], kind, in, o, m->params + off, m->grads + off);
		if ((st = bw_layer_init(&m->layer[l], dev, bw_key(bw_key(seed, TAG_INIT), (uint64_t)l))))
			goto fail;
		off += bw_layer_num_params(kind, in, o);
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

int bw_model_layer_forward(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x, bool training,
			   uint64_t key, const bw_tensor **h)
{
	return bw_model_layer_forward_overlap(be, m, l, blk, x, training, key, NULL, h);
}

int bw_model_layer_forward_overlap(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x,
				   bool training, uint64_t key, const bw_overlap *ov, const bw_tensor **h)
{
	if (l < 0 || l >= m->cfg.layers)
		return bw_err(BURROW_E_INVAL, "model: no layer %d", l);
	int st;
	if (m->cfg.kind != BURROW_MODEL_MLP &&
	    ((st = bw_block_prepare(blk, training, m->cfg.kind == BURROW_MODEL_GCN)) ||
	     (st = bw_block_upload(blk, be->dev))))
		return st;
	if ((st = ov ? bw_layer_forward_overlap(be, &m->layer[l], blk, x, &m->h[l], ov)
		     : bw_layer_forward(be, &m->layer[l], blk, x, &m->h[l])))
		return st;
	m->dropout_on = training && m->cfg.dropout > 0.0f;
	if (l + 1 < m->cfg.layers && (st = activate(be, m, l, &m->h[l], m->dropout_on, key)))
		return st;
	*h = &m->h[l];
	return 0;
}

int bw_model_layer_backward(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
			    bw_tensor *gh, bw_tensor *gx)
{
	return bw_model_layer_backward_overlap(be, m, l, blk, x, gh, gx, NULL);
}

int bw_model_layer_backward_overlap(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
				    bw_tensor *gh, bw_tensor *gx, const bw_overlap *ov)
{
	if (l < 0 || l >= m->cfg.layers)
		return bw_err(BURROW_E_INVAL, "model: no layer %d", l);
	int st;
	if (l + 1 < m->cfg.layers) {
		if (m->dropout_on && (st = bw_dropout_backward(be, gh, m->mask[l].ptr, m->cfg.dropout)))
			return st;
		if ((st = bw_relu_backward(be, gh, &m->h[l])))
			return st;
	}
	return ov ? bw_layer_backward_overlap(be, &m->layer[l], blk, x, gh, gx, ov)
		  : bw_layer_backward(be, &m->layer[l], blk, x, gh, gx);
}

int bw_model_forward(const bw_backend *be, bw_model *m, const bw_batch *b, bool training, uint64_t seed,
		     const bw_tensor **logits)
{
	int st = check_batch(m, b);
	if (st)
		return st;
	const bw_tensor *x = &b->x;
	for (int l = 0; l < m->cfg.layers; l++)
		if ((st = bw_model_layer_forward(be, m, l, b->blocks[l], x, training,
						 bw_dropout_key(seed, b->epoch, b->index, l), &x)))
			return st;
	*logits = x;
	return 0;
}

int bw_model_backward(const bw_backend *be, bw_model *m, const bw_batch *b, const bw_tensor *glogits)
{
	int st = check_batch(m, b);
	if (st)
		return st;
	bw_tensor *gh = (bw_tensor *)glogits; /* read only: the last layer has no activation to undo */
	for (int l = m->cfg.layers - 1; l >= 0; l--) {
		bw_tensor *gx = l > 0 ? &m->g[l % 2] : NULL;
		if ((st = bw_model_layer_backward(be, m, l, b->blocks[l], l == 0 ? &b->x : &m->h[l - 1], gh, gx)))
			return st;
		gh = gx;
	}
	return 0;
}

int bw_model_infer_layer(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z)
{
	if (l < 0 || l >= m->cfg.layers)
		return bw_err(BURROW_E_INVAL, "model: no layer %d", l);
	int st = 0;
	if (m->cfg.kind == BURROW_MODEL_GCN)
		st = bw_block_prepare(b, false, true);
	if (!st && m->cfg.kind != BURROW_MODEL_MLP)
		st = bw_block_upload(b, be->dev);
	if (!st)
		st = bw_layer_forward(be, &m->layer[l], b, x, z);
	if (!st && l + 1 < m->cfg.layers)
		st = bw_relu(be, z);
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
