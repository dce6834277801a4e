/* hmodel.c: the relational layers (R-GCN, R-SAGE, R-GAT) over typed bipartite blocks, with
 * hand-written backward passes, and the typed model built from them, on the dispatchers.
 *
 * Notation: layer l maps level l to level l+1; x_t is type t's input at level l ([n_l(t),
 * in_t], in_t = in_dim[t] at layer 0, hidden after); block (l, r) has rows the n_{l+1}(dst)
 * dst-type nodes and columns the n_l(src) src-type nodes; N_r(i) are row i's sources;
 * mean_r(x)_i = the mean of x_j over N_r(i), 0 when N_r(i) is empty; x_t[:n] the first n rows
 * (a type's level-(l+1) nodes are the first of its level-l nodes). Type t's output z_t sums
 * over the relations r that run at layer l with dst(r) = t:
 *
 *   R-GCN  (PyG RGCNConv, aggr mean, root weight):
 *          z_t = x_t[:n] W_self_t + b_t + sum_r mean_r(x_src(r)) W_r
 *   R-SAGE (PyG to_hetero(SAGEConv), aggr sum over relations):
 *          z_t = sum_r (x_t[:n] W_self_r + mean_r(x_src(r)) W_neigh_r + b_r)
 *   R-GAT  (PyG HeteroConv of GATConv((in_src, in_dst), F, heads, add_self_loops=False),
 *          aggr sum, as MLPerf's IGBH R-GAT): per relation h_src = x_src W_src_r [n_src, H F],
 *          h_dst = x_t[:n] W_dst_r [n, H F]; per head k,
 *          alpha_ij^k = softmax over j in N_r(i) of leaky_relu(<h_dst_i^k, a_dst_r^k> +
 *          <h_src_j^k, a_src_r^k>, 0.2) (dropped out with attn_dropout in training),
 *          o_i^k = sum_j alpha_ij^k h_src_j^k (0 without neighbors: no self loop);
 *          z_t = sum_r (concat_k o^k (hidden layers, F = hidden / H) or mean_k o^k (the
 *          last, F = classes) + b_r)
 *
 * Hidden layers then apply ReLU and, in training, dropout keyed by bw_dropout_key(seed, epoch,
 * batch, l) and the type. Mean aggregation projects first when in_src > out (exact: the two
 * commute), as the homogeneous layers do. The backward passes are those of the same ops,
 * in reverse; every input gradient accumulates over the relations that read the input. */
#include "hmodel.h"
#include "opcount.h"

#include <math.h>
#include <string.h>

enum { TAG_INIT = 0x494e4954, TAG_ATTN = 0x4154544e, SELF_ITEM = 0x53454c46 };

#define TRY(x)                      \
	do {                        \
		if ((st = (x)))     \
			return st;  \
	} while (0)

/* One relation at one layer: its parameters (views into the flat buffers) and what its
 * forward pass keeps for the backward. */
typedef struct hrel {
	bool on;                  /* runs at this layer */
	int src, dst;
	int64_t in_src, in_dst, out, heads, f_dim, hf;
	bool project_first;       /* R-GCN, R-SAGE: aggregate x_src W, not x_src */
	bool concat;              /* R-GAT: hidden layers concatenate their heads */
	bw_hparams at;            /* offsets of its parameters */
	float *w, *w_self, *a_src, *a_dst, *b;
	float *gw, *gw_self, *ga_src, *ga_dst, *gb;
	bw_tensor agg;            /* mean_r(x_src) [n_dst, in_src] (aggregating first); R-GAT: h_src */
	bw_tensor hd, s_src, s_dst, alpha, alpha_drop; /* R-GAT */
	bw_dbuf attn_mask;        /* R-GAT attention dropout, [slots, heads] */
	float attn_p;             /* the last forward's attention dropout (0: none) */
} hrel;

/* R-GCN's self term of one type at one layer. */
typedef struct hself {
	bool on;
	int64_t in;
	bw_hparams at;
	float *w, *b, *gw, *gb;
} hself;

struct bw_hmodel {
	bw_hmodel_cfg cfg;
	const bw_device *dev;                                  /* borrowed */
	bool uses[BURROW_MAX_LAYERS + 1][BURROW_MAX_TYPES];    /* the plan (bw_hmodel_uses) */
	hrel rel[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	hself self[BURROW_MAX_LAYERS][BURROW_MAX_TYPES];
	int64_t num_params;
	float *params, *grads;                                 /* [num_params] owned device memory */
	bw_tensor h[BURROW_MAX_LAYERS + 1][BURROW_MAX_TYPES];  /* h[l][t], l >= 1: outputs; h[L][target] the logits */
	bw_dbuf mask[BURROW_MAX_LAYERS][BURROW_MAX_TYPES];     /* dropout of layer l's output of type t */
	bool dropout_on;                                       /* the last forward used dropout */
	bw_tensor g[2][BURROW_MAX_TYPES];                      /* gradients of the levels, ping-pong */
	bw_tensor mean;                                        /* R-GAT: [heads classes, classes] averages the heads */
	bw_tensor tmp[6];                                      /* scratch */
};

/* ------------------------------------------------------------ the plan */

static int64_t in_width(const bw_hmodel_cfg *c, int l, int t) { return l == 0 ? c->in_dim[t] : c->hidden; }
static int64_t out_width(const bw_hmodel_cfg *c, int l) { return l == c->layers - 1 ? c->classes : c->hidden; }

/* uses[l][t] and on[l][r] (bw_hmodel.h, bw_hmodel_check_cfg); false when the target
 * receives no relation at the last layer. */
static bool plan(const bw_hmodel_cfg *c, bool uses[][BURROW_MAX_TYPES], bool on[][BURROW_MAX_RELATIONS])
{
	bool avail[BURROW_MAX_LAYERS + 1][BURROW_MAX_TYPES] = {{false}};
	const int L = c->layers;
	for (int t = 0; t < c->num_types; t++)
		avail[0][t] = true;
	for (int l = 0; l < L; l++)
		for (int r = 0; r < c->num_rels; r++)
			avail[l + 1][c->rel_dst[r]] |= avail[l][c->rel_src[r]];
	for (int l = 0; l <= L; l++)
		for (int t = 0; t < BURROW_MAX_TYPES; t++)
			uses[l][t] = false;
	uses[L][c->target] = avail[L][c->target];
	for (int l = L - 1; l >= 0; l--)
		for (int r = 0; r < c->num_rels; r++) {
			on[l][r] = uses[l + 1][c->rel_dst[r]] && avail[l][c->rel_src[r]];
			if (on[l][r])
				uses[l][c->rel_src[r]] = uses[l][c->rel_dst[r]] = true;
		}
	return uses[L][c->target];
}

static const char *kind_name(int kind)
{
	return kind == BURROW_MODEL_RGCN ? "rgcn" : kind == BURROW_MODEL_RSAGE ? "rsage" : "rgat";
}

static int check_widths(const bw_hmodel_cfg *c)
{
	for (int t = 0; t < c->num_types; t++)
		if (c->in_dim[t] < 1 || c->in_dim[t] > INT32_MAX)
			return bw_err(BURROW_E_INVAL, "model: type %d has input width %lld (need 1 .. 2^31 - 1)", t,
				      (long long)c->in_dim[t]);
	if (c->classes < 1 || (c->layers > 1 && c->hidden < 1) || c->hidden > INT32_MAX || c->classes > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "model: hidden %lld, classes %lld must be in 1 .. 2^31 - 1",
			      (long long)c->hidden, (long long)c->classes);
	if (c->kind == BURROW_MODEL_RGAT && (c->heads < 1 || (c->layers > 1 && c->hidden % c->heads)))
		return bw_err(BURROW_E_INVAL, "model: rgat with %d heads and hidden %lld: the heads must divide the hidden "
					      "width (they are concatenated)", c->heads, (long long)c->hidden);
	return 0;
}

int bw_hmodel_check_cfg(const bw_hmodel_cfg *c)
{
	if (c->kind != BURROW_MODEL_RGCN && c->kind != BURROW_MODEL_RSAGE && c->kind != BURROW_MODEL_RGAT)
		return bw_err(BURROW_E_INVAL, "model: kind %d is not a relational model (rgcn, rsage, rgat)", c->kind);
	if (c->layers < 1 || c->layers > BURROW_MAX_LAYERS)
		return bw_err(BURROW_E_INVAL, "model: %d layers outside [1, %d]", c->layers, BURROW_MAX_LAYERS);
	if (c->num_types < 1 || c->num_types > BURROW_MAX_TYPES || c->num_rels < 1 || c->num_rels > BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_INVAL, "model: %d types and %d relations (need 1 .. %d and 1 .. %d)", c->num_types,
			      c->num_rels, BURROW_MAX_TYPES, BURROW_MAX_RELATIONS);
	if (c->target < 0 || c->target >= c->num_types)
		return bw_err(BURROW_E_INVAL, "model: target type %d outside [0, %d)", c->target, c->num_types);
	for (int r = 0; r < c->num_rels; r++)
		if (c->rel_src[r] < 0 || c->rel_src[r] >= c->num_types || c->rel_dst[r] < 0 || c->rel_dst[r] >= c->num_types)
			return bw_err(BURROW_E_INVAL, "model: relation %d joins types %d -> %d, outside [0, %d)", r,
				      c->rel_src[r], c->rel_dst[r], c->num_types);
	int st = check_widths(c);
	if (st)
		return st;
	if (!(c->dropout >= 0.0f && c->dropout < 1.0f) || !(c->attn_dropout >= 0.0f && c->attn_dropout < 1.0f))
		return bw_err(BURROW_E_INVAL, "model: dropout %g, attention dropout %g outside [0, 1)", (double)c->dropout,
			      (double)c->attn_dropout);
	bool uses[BURROW_MAX_LAYERS + 1][BURROW_MAX_TYPES], on[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	if (!plan(c, uses, on))
		return bw_err(BURROW_E_INVAL, "model: the target type %d receives no relation at the last layer from a type "
					      "that has rows there (%d layers)", c->target, c->layers);
	return 0;
}

int bw_hmodel_supported(const bw_backend *be, const bw_hmodel_cfg *cfg)
{
	if (cfg->kind == BURROW_MODEL_RGAT && !bw_backend_supports(be, BW_OP_ATTENTION))
		return bw_err(BURROW_E_UNSUPPORTED, "model: the %s backend cannot run %s: it has no kernels for %s",
			      bw_backend_name(be), kind_name(cfg->kind), bw_op_name(BW_OP_ATTENTION));
	return 0;
}

/* ------------------------------------------------------------ parameters */

static const bw_hparams no_params = {.w = -1, .w_self = -1, .a_src = -1, .a_dst = -1, .b = -1};

/* Lay out relation r of layer l from offset *off (R-GCN: w; R-SAGE: w_self, w, b; R-GAT:
 * w, w_self, a_src, a_dst, b), advancing it. */
static void lay_rel(const bw_hmodel_cfg *c, int l, int r, hrel *x, int64_t *off)
{
	x->src = c->rel_src[r];
	x->dst = c->rel_dst[r];
	x->in_src = in_width(c, l, x->src);
	x->in_dst = in_width(c, l, x->dst);
	x->out = out_width(c, l);
	x->concat = l + 1 < c->layers;
	x->heads = c->kind == BURROW_MODEL_RGAT ? c->heads : 1;
	x->f_dim = c->kind != BURROW_MODEL_RGAT ? x->out : x->concat ? x->out / x->heads : x->out;
	x->hf = x->heads * x->f_dim;
	x->project_first = c->kind != BURROW_MODEL_RGAT && x->in_src > x->out;
	bw_hparams *a = &x->at;
	*a = no_params;
	a->in_src = x->in_src;
	a->in_dst = x->in_dst;
	a->out = x->out;
	a->heads_f = x->hf;
	if (c->kind == BURROW_MODEL_RSAGE) {
		a->w_self = *off;
		*off += x->in_dst * x->out;
	}
	a->w = *off;
	*off += x->in_src * (c->kind == BURROW_MODEL_RGAT ? x->hf : x->out);
	if (c->kind == BURROW_MODEL_RGAT) {
		a->w_self = *off;
		a->a_src = a->w_self + x->in_dst * x->hf;
		a->a_dst = a->a_src + x->hf;
		*off = a->a_dst + x->hf;
	}
	if (c->kind != BURROW_MODEL_RGCN) {
		a->b = *off;
		*off += x->out;
	}
}

static float *at(float *base, int64_t off) { return off < 0 ? NULL : base + off; }

/* Views of the parameters and their gradients where the layout put them. */
static void bind(bw_hmodel *m)
{
	for (int l = 0; l < m->cfg.layers; l++) {
		for (int t = 0; t < m->cfg.num_types; t++) {
			hself *s = &m->self[l][t];
			if (!s->on)
				continue;
			s->w = m->params + s->at.w_self;
			s->gw = m->grads + s->at.w_self;
			s->b = m->params + s->at.b;
			s->gb = m->grads + s->at.b;
		}
		for (int r = 0; r < m->cfg.num_rels; r++) {
			hrel *x = &m->rel[l][r];
			const bw_hparams *a = &x->at;
			if (!x->on)
				continue;
			x->w = at(m->params, a->w);
			x->gw = at(m->grads, a->w);
			x->w_self = at(m->params, a->w_self);
			x->gw_self = at(m->grads, a->w_self);
			x->a_src = at(m->params, a->a_src);
			x->ga_src = at(m->grads, a->a_src);
			x->a_dst = at(m->params, a->a_dst);
			x->ga_dst = at(m->grads, a->a_dst);
			x->b = at(m->params, a->b);
			x->gb = at(m->grads, a->b);
		}
	}
}

/* The layout of every layer (R-GCN's self terms first, then the relations); returns the count. */
static int64_t lay_out(bw_hmodel *m, bool on[][BURROW_MAX_RELATIONS])
{
	const bw_hmodel_cfg *c = &m->cfg;
	int64_t off = 0;
	for (int l = 0; l < c->layers; l++) {
		for (int t = 0; c->kind == BURROW_MODEL_RGCN && t < c->num_types; t++) {
			hself *s = &m->self[l][t];
			if (!(s->on = m->uses[l + 1][t]))
				continue;
			s->in = in_width(c, l, t);
			s->at = no_params;
			s->at.in_dst = s->in;
			s->at.out = out_width(c, l);
			s->at.w_self = off;
			s->at.b = off + s->in * s->at.out;
			off = s->at.b + s->at.out;
		}
		for (int r = 0; r < c->num_rels; r++)
			if ((m->rel[l][r].on = on[l][r]))
				lay_rel(c, l, r, &m->rel[l][r], &off);
	}
	return off;
}

static void glorot(float *w, int64_t in, int64_t out, uint64_t key)
{
	const double a = sqrt(6.0 / (double)(in + out));
	bw_rng r;
	bw_rng_seed(&r, key);
	for (int64_t i = 0; i < in * out; i++)
		w[i] = (float)((2.0 * bw_rng_uniform(&r) - 1.0) * a);
}

/* Glorot-uniform matrices (R-GAT's attention vectors as [heads, F], as PyG), zero biases, on
 * the host; each matrix drawn from its own stream keyed by (seed, layer, relation or type, which). */
static void init_host(const bw_hmodel *m, float *p, uint64_t seed)
{
	const bw_hmodel_cfg *c = &m->cfg;
	memset(p, 0, (size_t)m->num_params * sizeof *p);
	for (int l = 0; l < c->layers; l++) {
		const uint64_t kl = bw_key(bw_key(seed, TAG_INIT), (uint64_t)l);
		for (int t = 0; t < c->num_types; t++) {
			const hself *s = &m->self[l][t];
			if (s->on)
				glorot(p + s->at.w_self, s->in, s->at.out, bw_key(kl, SELF_ITEM + (uint64_t)t));
		}
		for (int r = 0; r < c->num_rels; r++) {
			const hrel *x = &m->rel[l][r];
			if (!x->on)
				continue;
			const uint64_t kr = bw_key(kl, (uint64_t)r);
			const int64_t wc = c->kind == BURROW_MODEL_RGAT ? x->hf : x->out;
			glorot(p + x->at.w, x->in_src, wc, bw_key(kr, 0));
			if (x->at.w_self >= 0)
				glorot(p + x->at.w_self, x->in_dst, wc, bw_key(kr, 1));
			if (x->at.a_src >= 0) {
				glorot(p + x->at.a_src, x->heads, x->f_dim, bw_key(kr, 2));
				glorot(p + x->at.a_dst, x->heads, x->f_dim, bw_key(kr, 3));
			}
		}
	}
}

/* The [heads classes, classes] matrix that averages R-GAT's last heads. */
static int head_mean(bw_hmodel *m)
{
	const int64_t f = m->cfg.classes, h = m->cfg.heads, hf = h * f;
	float *x = bw_calloc((size_t)(hf * f) + 1, sizeof *x);
	if (!x)
		return BURROW_E_NOMEM;
	for (int64_t k = 0; k < h; k++)
		for (int64_t c = 0; c < f; c++)
			x[(k * f + c) * f + c] = 1.0f / (float)h;
	int st = bw_tensor_reshape(&m->mean, m->dev, hf, f);
	if (!st)
		st = bw_device_upload(m->dev, m->mean.data, x, (size_t)(hf * f) * sizeof *x);
	bw_free(x);
	return st;
}

static void init_tensors(bw_hmodel *m)
{
	const bw_device *d = m->dev;
	for (int l = 0; l <= BURROW_MAX_LAYERS; l++)
		for (int t = 0; t < BURROW_MAX_TYPES; t++)
			m->h[l][t] = bw_tensor_empty(d);
	for (int t = 0; t < BURROW_MAX_TYPES; t++)
		m->g[0][t] = m->g[1][t] = bw_tensor_empty(d);
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		for (int r = 0; r < BURROW_MAX_RELATIONS; r++) {
			hrel *x = &m->rel[l][r];
			x->agg = x->hd = x->s_src = x->s_dst = x->alpha = x->alpha_drop = bw_tensor_empty(d);
		}
	for (int i = 0; i < 6; i++)
		m->tmp[i] = bw_tensor_empty(d);
	m->mean = bw_tensor_empty(d);
}

int bw_hmodel_open(bw_hmodel **out, const bw_device *dev, const bw_hmodel_cfg *cfg, uint64_t seed)
{
	*out = NULL;
	int st = bw_hmodel_check_cfg(cfg);
	if (st)
		return st;
	bw_hmodel *m = bw_calloc(1, sizeof *m);
	if (!m)
		return BURROW_E_NOMEM;
	m->cfg = *cfg;
	m->dev = dev = bw_device_or_cpu(dev);
	init_tensors(m);
	bool on[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	plan(cfg, m->uses, on);
	m->num_params = lay_out(m, on);
	const size_t bytes = (size_t)m->num_params * sizeof(float);
	float *host = bw_malloc(bytes + 1);
	if (!host) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	init_host(m, host, seed);
	st = bw_device_alloc(dev, bytes, (void **)&m->params);
	if (!st)
		st = bw_device_alloc(dev, bytes, (void **)&m->grads);
	if (!st)
		st = bw_device_memset(dev, m->grads, 0, bytes);
	if (!st)
		st = bw_device_upload(dev, m->params, host, bytes);
	bw_free(host);
	if (!st && cfg->kind == BURROW_MODEL_RGAT)
		st = head_mean(m);
	if (st)
		goto fail;
	bind(m);
	*out = m;
	return 0;
fail:
	bw_hmodel_close(m);
	return st;
}

void bw_hmodel_close(bw_hmodel *m)
{
	if (!m)
		return;
	for (int l = 0; l <= BURROW_MAX_LAYERS; l++)
		for (int t = 0; t < BURROW_MAX_TYPES; t++)
			bw_tensor_free(&m->h[l][t]);
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		for (int t = 0; t < BURROW_MAX_TYPES; t++)
			bw_dbuf_free(&m->mask[l][t]);
		for (int r = 0; r < BURROW_MAX_RELATIONS; r++) {
			hrel *x = &m->rel[l][r];
			bw_tensor *ts[] = {&x->agg, &x->hd, &x->s_src, &x->s_dst, &x->alpha, &x->alpha_drop};
			for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
				bw_tensor_free(ts[i]);
			bw_dbuf_free(&x->attn_mask);
		}
	}
	for (int t = 0; t < BURROW_MAX_TYPES; t++) {
		bw_tensor_free(&m->g[0][t]);
		bw_tensor_free(&m->g[1][t]);
	}
	for (int i = 0; i < 6; i++)
		bw_tensor_free(&m->tmp[i]);
	bw_tensor_free(&m->mean);
	bw_device_free(m->dev, m->params);
	bw_device_free(m->dev, m->grads);
	bw_free(m);
}

int64_t bw_hmodel_num_params(const bw_hmodel *m) { return m->num_params; }
float *bw_hmodel_params(bw_hmodel *m) { return m->params; }
float *bw_hmodel_grads(bw_hmodel *m) { return m->grads; }

bool bw_hmodel_uses(const bw_hmodel *m, int level, int t)
{
	return level >= 0 && level <= m->cfg.layers && t >= 0 && t < m->cfg.num_types && m->uses[level][t];
}

bool bw_hmodel_runs(const bw_hmodel *m, int l, int r)
{
	return l >= 0 && l < m->cfg.layers && r >= 0 && r < m->cfg.num_rels && m->rel[l][r].on;
}

bool bw_hmodel_rel_params(const bw_hmodel *m, int l, int r, bw_hparams *out)
{
	if (!bw_hmodel_runs(m, l, r))
		return false;
	*out = m->rel[l][r].at;
	return true;
}

bool bw_hmodel_self_params(const bw_hmodel *m, int l, int t, bw_hparams *out)
{
	if (l < 0 || l >= m->cfg.layers || t < 0 || t >= m->cfg.num_types || !m->self[l][t].on)
		return false;
	*out = m->self[l][t].at;
	return true;
}

/* ------------------------------------------------------------ the batch */

static int check_block_shape(const bw_hmodel *m, const bw_hbatch *b, int l, int r)
{
	const hrel *x = &m->rel[l][r];
	const bw_block *k = b->blocks[l][r];
	if (!k)
		return bw_err(BURROW_E_INVAL, "typed batch: block (%d, %d) is missing", l, r);
	if (k->num_dst != b->num_nodes[l + 1][x->dst] || k->num_src != b->num_nodes[l][x->src])
		return bw_err(BURROW_E_INVAL, "typed batch: block (%d, %d) is %lld -> %lld, the levels hold %lld -> %lld", l, r,
			      (long long)k->num_src, (long long)k->num_dst, (long long)b->num_nodes[l][x->src],
			      (long long)b->num_nodes[l + 1][x->dst]);
	return 0;
}

static int check_batch(const bw_hmodel *m, const bw_hbatch *b)
{
	const bw_hmodel_cfg *c = &m->cfg;
	int st;
	if (b->num_layers != c->layers || b->num_types != c->num_types || b->num_rels != c->num_rels)
		return bw_err(BURROW_E_INVAL, "typed batch: %d layers, %d types, %d relations for a model of %d, %d, %d",
			      b->num_layers, b->num_types, b->num_rels, c->layers, c->num_types, c->num_rels);
	for (int l = 0; l < c->layers; l++) {
		for (int t = 0; t < c->num_types; t++)
			if (m->uses[l + 1][t] && !(b->num_nodes[l + 1][t] >= 0 && b->num_nodes[l + 1][t] <= b->num_nodes[l][t]))
				return bw_err(BURROW_E_INVAL, "typed batch: type %d has %lld nodes at level %d but %lld at "
							      "level %d (a level's nodes are the first of the one below)",
					      t, (long long)b->num_nodes[l + 1][t], l + 1, (long long)b->num_nodes[l][t], l);
		for (int r = 0; r < c->num_rels; r++)
			if (m->rel[l][r].on && (st = check_block_shape(m, b, l, r)))
				return st;
	}
	for (int t = 0; t < c->num_types; t++)
		if (m->uses[0][t] && (b->x[t].rows != b->num_nodes[0][t] || b->x[t].cols != c->in_dim[t]))
			return bw_err(BURROW_E_INVAL, "typed batch: input of type %d is [%lld, %lld] for %lld nodes of width %lld",
				      t, (long long)b->x[t].rows, (long long)b->x[t].cols, (long long)b->num_nodes[0][t],
				      (long long)c->in_dim[t]);
	return 0;
}

/* The blocks the model runs, marked bipartite, prepared (transposes in training) and on the device. */
static int prepare_blocks(const bw_backend *be, const bw_hmodel *m, const bw_hbatch *b, bool training)
{
	int st;
	for (int l = 0; l < m->cfg.layers; l++)
		for (int r = 0; r < m->cfg.num_rels; r++) {
			if (!m->rel[l][r].on)
				continue;
			bw_block *k = b->blocks[l][r];
			k->bipartite = true;
			TRY(bw_block_prepare(k, training, false));
			TRY(bw_block_upload(k, be->dev));
		}
	return 0;
}

/* Type t's input at level l: the batch's rows at level 0, layer l - 1's output after. */
static const bw_tensor *input(const bw_hmodel *m, const bw_hbatch *b, int l, int t)
{
	return l == 0 ? &b->x[t] : &m->h[l][t];
}

/* ------------------------------------------------------------ memory */

double bw_hmodel_batch_bytes(const bw_hmodel *m, const int64_t (*num_nodes)[BURROW_MAX_TYPES], bool weighted)
{
	double kept = 0, tmp0 = 0, tmp1 = 0; /* the scratch tmp[0], tmp[1]: each grows to its largest use */
	for (int l = 0; l < m->cfg.layers; l++) {
		const int64_t out = out_width(&m->cfg, l);
		for (int r = 0; r < m->cfg.num_rels; r++) {
			const hrel *x = &m->rel[l][r];
			if (!x->on)
				continue;
			const double ns = (double)num_nodes[l][x->src], nd = (double)num_nodes[l + 1][x->dst];
			if (x->project_first) { /* the projection; a weighted mean's aggregate beside it */
				tmp0 = BW_MAX(tmp0, ns * (double)out);
				if (weighted)
					tmp1 = BW_MAX(tmp1, nd * (double)out);
			} else { /* the aggregate; the backward's gradients of it and of the sources */
				kept += nd * (double)x->in_src;
				tmp0 = BW_MAX(tmp0, nd * (double)x->in_src);
				tmp1 = BW_MAX(tmp1, ns * (double)x->in_src);
			}
		}
		for (int t = 0; t < m->cfg.num_types; t++) {
			if (m->uses[l + 1][t])
				kept += 2.0 * (double)num_nodes[l + 1][t] * (double)out; /* output, mask (or its gradient) */
			if (l > 0 && m->uses[l][t])
				kept += (double)num_nodes[l][t] * (double)in_width(&m->cfg, l, t); /* input gradient */
		}
	}
	return (kept + tmp0 + tmp1) * (double)sizeof(float);
}

/* ------------------------------------------------------------ forward */

/* z += mean_r(xs) W (x->w), aggregating x_s or its projection, whichever is narrower. A block
 * with edge weights (LABOR-*'s) takes the weighted mean, sum_j w_ij x_j / |N_r(i)|: its
 * aggregation overwrites, so a projection's goes through tmp[1] and is added. */
static int mean_forward(const bw_backend *be, bw_hmodel *m, hrel *x, const bw_block *k, const bw_tensor *xs,
			bw_tensor *z)
{
	int st;
	const bw_tensor w = bw_tensor_view(be->dev, x->w, x->in_src, x->out);
	if (x->project_first) {
		bw_tensor *p = &m->tmp[0], *a = &m->tmp[1];
		TRY(bw_tensor_reshape(p, be->dev, k->num_src, x->out));
		TRY(bw_matmul(be, xs, false, &w, false, 1.0f, 0.0f, p));
		if (!k->edge_weight)
			return bw_aggregate_part(be, k, BW_PART_ALL, BW_AGG_MEAN, p, 0, k->num_dst, true, z);
		TRY(bw_tensor_reshape(a, be->dev, k->num_dst, x->out));
		TRY(bw_aggregate(be, k, BW_AGG_MEAN, p, 0, -1, a));
		return bw_axpy(be, 1.0f, a, z);
	}
	TRY(bw_tensor_reshape(&x->agg, be->dev, k->num_dst, x->in_src));
	TRY(bw_aggregate(be, k, BW_AGG_MEAN, xs, 0, -1, &x->agg));
	return bw_matmul(be, &x->agg, false, &w, false, 1.0f, 1.0f, z);
}

/* z += R-GAT's term of relation x: attention over h_src = xs W_src scored with h_dst = xd
 * W_dst, heads concatenated or averaged, + b. */
static int gat_forward(const bw_backend *be, bw_hmodel *m, hrel *x, const bw_block *k, const bw_tensor *xs,
		       const bw_tensor *xd, float attn_p, uint64_t attn_key, bw_tensor *z)
{
	int st;
	const int64_t nd = k->num_dst, ns = k->num_src, slots = bw_block_slots(k);
	const bw_tensor ws = bw_tensor_view(be->dev, x->w, x->in_src, x->hf);
	const bw_tensor wd = bw_tensor_view(be->dev, x->w_self, x->in_dst, x->hf);
	TRY(bw_tensor_reshape(&x->agg, be->dev, ns, x->hf));
	TRY(bw_tensor_reshape(&x->hd, be->dev, nd, x->hf));
	TRY(bw_matmul(be, xs, false, &ws, false, 1.0f, 0.0f, &x->agg));
	TRY(bw_matmul(be, xd, false, &wd, false, 1.0f, 0.0f, &x->hd));
	TRY(bw_tensor_reshape(&x->s_src, be->dev, ns, x->heads));
	TRY(bw_tensor_reshape(&x->s_dst, be->dev, nd, x->heads));
	TRY(bw_head_dot(be, &x->agg, x->heads, x->a_src, &x->s_src));
	TRY(bw_head_dot(be, &x->hd, x->heads, x->a_dst, &x->s_dst));
	TRY(bw_tensor_reshape(&x->alpha, be->dev, slots, x->heads));
	TRY(bw_edge_softmax(be, k, &x->s_src, &x->s_dst, BW_GAT_SLOPE, &x->alpha));
	const bw_tensor *a = &x->alpha;
	x->attn_p = attn_p;
	if (attn_p > 0.0f) {
		const size_t n = (size_t)(slots * x->heads);
		TRY(bw_tensor_reshape(&x->alpha_drop, be->dev, slots, x->heads));
		TRY(bw_device_copy(be->dev, x->alpha_drop.data, x->alpha.data, n * sizeof(float)));
		TRY(bw_dbuf_reserve(&x->attn_mask, be->dev, n + 1));
		TRY(bw_dropout(be, &x->alpha_drop, x->attn_mask.ptr, attn_p, attn_key));
		a = &x->alpha_drop;
	}
	bw_tensor *cat = &m->tmp[0];
	TRY(bw_tensor_reshape(cat, be->dev, nd, x->hf));
	TRY(bw_att_aggregate(be, k, a, &x->agg, cat));
	if (x->concat)
		TRY(bw_axpy(be, 1.0f, cat, z));
	else
		TRY(bw_matmul(be, cat, false, &m->mean, false, 1.0f, 1.0f, z));
	return bw_bias_add(be, z, x->b, x->out);
}

/* z += relation r's term at layer l over block k: xs its source rows, xd its destinations' own. */
static int rel_term(const bw_backend *be, bw_hmodel *m, int l, int r, const bw_block *k, const bw_tensor *xs,
		    const bw_tensor *xd, bool training, uint64_t key, bw_tensor *z)
{
	int st;
	hrel *x = &m->rel[l][r];
	if (m->cfg.kind == BURROW_MODEL_RGAT) {
		const float p = training ? m->cfg.attn_dropout : 0.0f;
		return gat_forward(be, m, x, k, xs, xd, p, bw_key(bw_key(key, TAG_ATTN), (uint64_t)r), z);
	}
	if (m->cfg.kind == BURROW_MODEL_RSAGE) {
		const bw_tensor ws = bw_tensor_view(be->dev, x->w_self, x->in_dst, x->out);
		TRY(bw_matmul(be, xd, false, &ws, false, 1.0f, 1.0f, z));
		TRY(bw_bias_add(be, z, x->b, x->out));
	}
	return mean_forward(be, m, x, k, xs, z);
}

/* z = R-GCN's self term of type t at layer l (its root weight and bias over xd), when it has one. */
static int self_term(const bw_backend *be, bw_hmodel *m, int l, int t, const bw_tensor *xd, bw_tensor *z)
{
	const hself *s = &m->self[l][t];
	if (!s->on)
		return 0;
	int st;
	const int64_t out = out_width(&m->cfg, l);
	const bw_tensor w = bw_tensor_view(be->dev, s->w, s->in, out);
	TRY(bw_matmul(be, xd, false, &w, false, 1.0f, 1.0f, z));
	return bw_bias_add(be, z, s->b, out);
}

/* Type t's output at level l + 1: every term, then for hidden layers ReLU and dropout. */
static int type_forward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, int l, int t, bool training,
			uint64_t key)
{
	int st;
	const int64_t nd = b->num_nodes[l + 1][t], out = out_width(&m->cfg, l);
	bw_tensor *z = &m->h[l + 1][t];
	TRY(bw_tensor_reshape(z, m->dev, nd, out));
	TRY(bw_tensor_zero_rows(z, 0, nd));
	const bw_tensor xself = bw_tensor_rows(input(m, b, l, t), 0, nd);
	TRY(self_term(be, m, l, t, &xself, z));
	for (int r = 0; r < m->cfg.num_rels; r++) {
		const hrel *x = &m->rel[l][r];
		if (!x->on || x->dst != t)
			continue;
		const bw_block *k = b->blocks[l][r];
		const bw_tensor xd = bw_tensor_rows(input(m, b, l, x->dst), 0, k->num_dst);
		TRY(rel_term(be, m, l, r, k, input(m, b, l, x->src), &xd, training, key, z));
	}
	if (l + 1 == m->cfg.layers)
		return 0;
	TRY(bw_relu(be, z));
	if (!m->dropout_on)
		return 0;
	TRY(bw_dbuf_reserve(&m->mask[l][t], m->dev, (size_t)(nd * out) + 1));
	return bw_dropout(be, z, m->mask[l][t].ptr, m->cfg.dropout, bw_key(key, (uint64_t)t));
}

int bw_hmodel_infer_layer(const bw_backend *be, bw_hmodel *m, int l, int t, const bw_tensor *xd,
			  bw_block *const *blocks, const bw_tensor *xs, bw_tensor *z)
{
	if (l < 0 || l >= m->cfg.layers || t < 0 || t >= m->cfg.num_types || !m->uses[l + 1][t])
		return bw_err(BURROW_E_INVAL, "typed model: type %d has no output at layer %d", t, l);
	const int64_t nd = xd->rows, out = out_width(&m->cfg, l);
	if (xd->cols != in_width(&m->cfg, l, t))
		return bw_err(BURROW_E_INVAL, "typed model: layer %d's input of type %d is %lld wide, not %lld", l, t,
			      (long long)xd->cols, (long long)in_width(&m->cfg, l, t));
	int st;
	TRY(bw_tensor_reshape(z, m->dev, nd, out));
	TRY(bw_tensor_zero_rows(z, 0, nd));
	TRY(self_term(be, m, l, t, xd, z));
	for (int r = 0; r < m->cfg.num_rels; r++) {
		const hrel *x = &m->rel[l][r];
		if (!x->on || x->dst != t)
			continue;
		bw_block *k = blocks[r];
		if (!k || k->num_dst != nd || xs[r].rows != k->num_src || xs[r].cols != in_width(&m->cfg, l, x->src))
			return bw_err(BURROW_E_INVAL, "typed model: layer %d, relation %d: block or source rows do not "
						      "match %lld destinations", l, r, (long long)nd);
		k->bipartite = true;
		TRY(bw_block_prepare(k, false, false));
		TRY(bw_block_upload(k, be->dev));
		TRY(rel_term(be, m, l, r, k, &xs[r], xd, false, 0, z));
	}
	return l + 1 == m->cfg.layers ? 0 : bw_relu(be, z);
}

int bw_hmodel_forward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, bool training, uint64_t seed,
		      const bw_tensor **logits)
{
	int st;
	TRY(check_batch(m, b));
	TRY(prepare_blocks(be, m, b, training));
	m->dropout_on = training && m->cfg.dropout > 0.0f;
	for (int l = 0; l < m->cfg.layers; l++) {
		const uint64_t key = bw_dropout_key(seed, b->epoch, b->index, l);
		bw_op_layer(be, l); /* an error leaves it set: the next layer's loop sets it again */
		for (int t = 0; t < m->cfg.num_types; t++)
			if (m->uses[l + 1][t])
				TRY(type_forward(be, m, b, l, t, training, key));
	}
	bw_op_layer(be, -1);
	*logits = &m->h[m->cfg.layers][m->cfg.target];
	return 0;
}

/* ------------------------------------------------------------ backward */

/* The gradients of mean_r(xs) W: x->gw, and gs += the input's (gs may be NULL). */
static int mean_backward(const bw_backend *be, bw_hmodel *m, hrel *x, const bw_block *k, const bw_tensor *xs,
			 const bw_tensor *gz, bw_tensor *gs)
{
	int st;
	const bw_tensor w = bw_tensor_view(be->dev, x->w, x->in_src, x->out);
	bw_tensor gw = bw_tensor_view(be->dev, x->gw, x->in_src, x->out);
	bw_tensor *t0 = &m->tmp[0], *t1 = &m->tmp[1];
	if (x->project_first) { /* t0 = the aggregation's transpose of gz [ns, out] */
		TRY(bw_tensor_reshape(t0, be->dev, k->num_src, x->out));
		TRY(bw_aggregate_backward(be, k, BW_AGG_MEAN, gz, 0, -1, t0));
		TRY(bw_matmul(be, xs, true, t0, false, 1.0f, 0.0f, &gw));
		return gs ? bw_matmul(be, t0, false, &w, true, 1.0f, 1.0f, gs) : 0;
	}
	TRY(bw_matmul(be, &x->agg, true, gz, false, 1.0f, 0.0f, &gw));
	if (!gs)
		return 0;
	TRY(bw_tensor_reshape(t0, be->dev, k->num_dst, x->in_src));
	TRY(bw_tensor_reshape(t1, be->dev, k->num_src, x->in_src));
	TRY(bw_matmul(be, gz, false, &w, true, 1.0f, 0.0f, t0));
	TRY(bw_aggregate_backward(be, k, BW_AGG_MEAN, t0, 0, -1, t1));
	return bw_axpy(be, 1.0f, t1, gs);
}

/* From dL/d(attention output) gcat [nd, heads F]: the gradients of h_src (tmp[2]) and
 * h_dst (tmp[5]), and of the attention vectors. */
static int gat_backward_scores(const bw_backend *be, bw_hmodel *m, hrel *x, const bw_block *k, const bw_tensor *gcat)
{
	int st;
	const int64_t nd = k->num_dst, ns = k->num_src, H = x->heads;
	bw_tensor *galpha = &m->tmp[1], *ghs = &m->tmp[2], *gss = &m->tmp[3], *gsd = &m->tmp[4], *ghd = &m->tmp[5];
	const bw_tensor *a = x->attn_p > 0.0f ? &x->alpha_drop : &x->alpha;
	TRY(bw_tensor_reshape(galpha, be->dev, x->alpha.rows, H));
	TRY(bw_tensor_reshape(ghs, be->dev, ns, x->hf));
	TRY(bw_att_aggregate_backward(be, k, a, &x->agg, gcat, galpha, ghs));
	if (x->attn_p > 0.0f)
		TRY(bw_dropout_backward(be, galpha, x->attn_mask.ptr, x->attn_p));
	TRY(bw_tensor_reshape(gss, be->dev, ns, H));
	TRY(bw_tensor_reshape(gsd, be->dev, nd, H));
	TRY(bw_edge_softmax_backward(be, k, &x->s_src, &x->s_dst, &x->alpha, galpha, BW_GAT_SLOPE, gss, gsd));
	TRY(bw_tensor_reshape(ghd, be->dev, nd, x->hf));
	TRY(bw_tensor_zero_rows(ghd, 0, nd));
	TRY(bw_head_dot_backward(be, &x->agg, H, x->a_src, gss, ghs, x->ga_src));
	return bw_head_dot_backward(be, &x->hd, H, x->a_dst, gsd, ghd, x->ga_dst);
}

/* R-GAT's backward: b, the attention, then W_src and W_dst and the inputs (gs, gd may be NULL). */
static int gat_backward(const bw_backend *be, bw_hmodel *m, hrel *x, const bw_block *k, const bw_tensor *xs,
			const bw_tensor *xd, const bw_tensor *gz, bw_tensor *gs, bw_tensor *gd)
{
	int st;
	TRY(bw_col_sum(be, gz, x->gb, x->out));
	const bw_tensor *gcat = gz;
	if (!x->concat) {
		TRY(bw_tensor_reshape(&m->tmp[0], be->dev, k->num_dst, x->hf));
		TRY(bw_matmul(be, gz, false, &m->mean, true, 1.0f, 0.0f, &m->tmp[0]));
		gcat = &m->tmp[0];
	}
	TRY(gat_backward_scores(be, m, x, k, gcat));
	const bw_tensor ws = bw_tensor_view(be->dev, x->w, x->in_src, x->hf);
	const bw_tensor wd = bw_tensor_view(be->dev, x->w_self, x->in_dst, x->hf);
	bw_tensor gws = bw_tensor_view(be->dev, x->gw, x->in_src, x->hf);
	bw_tensor gwd = bw_tensor_view(be->dev, x->gw_self, x->in_dst, x->hf);
	TRY(bw_matmul(be, xs, true, &m->tmp[2], false, 1.0f, 0.0f, &gws));
	TRY(bw_matmul(be, xd, true, &m->tmp[5], false, 1.0f, 0.0f, &gwd));
	if (gs)
		TRY(bw_matmul(be, &m->tmp[2], false, &ws, true, 1.0f, 1.0f, gs));
	return gd ? bw_matmul(be, &m->tmp[5], false, &wd, true, 1.0f, 1.0f, gd) : 0;
}

/* Relation r's gradients at layer l from gz (its dst type's), adding its inputs' into gin
 * (NULL: not wanted). */
static int rel_backward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, int l, int r, const bw_tensor *gz,
			bw_tensor *gin)
{
	int st;
	hrel *x = &m->rel[l][r];
	const bw_block *k = b->blocks[l][r];
	const bw_tensor *xs = input(m, b, l, x->src);
	const bw_tensor xd = bw_tensor_rows(input(m, b, l, x->dst), 0, k->num_dst);
	bw_tensor *gs = gin ? &gin[x->src] : NULL, gdv, *gd = NULL;
	if (gin) {
		gdv = bw_tensor_rows(&gin[x->dst], 0, k->num_dst);
		gd = &gdv;
	}
	if (m->cfg.kind == BURROW_MODEL_RGAT)
		return gat_backward(be, m, x, k, xs, &xd, gz, gs, gd);
	if (m->cfg.kind == BURROW_MODEL_RSAGE) {
		const bw_tensor ws = bw_tensor_view(be->dev, x->w_self, x->in_dst, x->out);
		bw_tensor gws = bw_tensor_view(be->dev, x->gw_self, x->in_dst, x->out);
		TRY(bw_col_sum(be, gz, x->gb, x->out));
		TRY(bw_matmul(be, &xd, true, gz, false, 1.0f, 0.0f, &gws));
		if (gd)
			TRY(bw_matmul(be, gz, false, &ws, true, 1.0f, 1.0f, gd));
	}
	return mean_backward(be, m, x, k, xs, gz, gs);
}

/* Type t's output gradient at level l + 1, in place back through dropout and ReLU for a
 * hidden layer, then every term's gradients (R-GCN's self term first). */
static int type_backward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, int l, int t, const bw_tensor *gz,
			 bw_tensor *gin)
{
	int st;
	const int64_t nd = b->num_nodes[l + 1][t];
	if (l + 1 < m->cfg.layers) {
		bw_tensor *g = (bw_tensor *)gz; /* the model's own gradient of a hidden level */
		if (m->dropout_on)
			TRY(bw_dropout_backward(be, g, m->mask[l][t].ptr, m->cfg.dropout));
		TRY(bw_relu_backward(be, g, &m->h[l + 1][t]));
	}
	const hself *s = &m->self[l][t];
	if (s->on) {
		const bw_tensor xd = bw_tensor_rows(input(m, b, l, t), 0, nd);
		const bw_tensor w = bw_tensor_view(be->dev, s->w, s->in, gz->cols);
		bw_tensor gw = bw_tensor_view(be->dev, s->gw, s->in, gz->cols);
		TRY(bw_col_sum(be, gz, s->gb, gz->cols));
		TRY(bw_matmul(be, &xd, true, gz, false, 1.0f, 0.0f, &gw));
		if (gin) {
			bw_tensor gd = bw_tensor_rows(&gin[t], 0, nd);
			TRY(bw_matmul(be, gz, false, &w, true, 1.0f, 1.0f, &gd));
		}
	}
	for (int r = 0; r < m->cfg.num_rels; r++)
		if (m->rel[l][r].on && m->rel[l][r].dst == t)
			TRY(rel_backward(be, m, b, l, r, gz, gin));
	return 0;
}

/* gin[t] = zeros of level l's shape for each type level l uses (every type at level 0: the
 * caller's gx). */
static int zero_grads(const bw_hmodel *m, const bw_hbatch *b, int l, bw_tensor *gin)
{
	int st;
	for (int t = 0; t < m->cfg.num_types; t++) {
		if (l > 0 && !m->uses[l][t])
			continue;
		const int64_t n = b->num_nodes[l][t];
		TRY(bw_tensor_reshape(&gin[t], m->dev, n, in_width(&m->cfg, l, t)));
		TRY(bw_tensor_zero_rows(&gin[t], 0, n));
	}
	return 0;
}

int bw_hmodel_backward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, const bw_tensor *glogits, bw_tensor *gx)
{
	int st;
	const int L = m->cfg.layers, target = m->cfg.target;
	TRY(check_batch(m, b));
	if (glogits->rows != b->num_nodes[L][target] || glogits->cols != m->cfg.classes)
		return bw_err(BURROW_E_INVAL, "typed model backward: gradient [%lld, %lld] for logits [%lld, %lld]",
			      (long long)glogits->rows, (long long)glogits->cols, (long long)b->num_nodes[L][target],
			      (long long)m->cfg.classes);
	for (int l = L - 1; l >= 0; l--) {
		bw_tensor *gin = l > 0 ? m->g[l % 2] : gx;
		if (gin)
			TRY(zero_grads(m, b, l, gin));
		bw_op_layer(be, l);
		for (int t = 0; t < m->cfg.num_types; t++)
			if (m->uses[l + 1][t])
				TRY(type_backward(be, m, b, l, t, l + 1 == L ? glogits : &m->g[(l + 1) % 2][t], gin));
	}
	bw_op_layer(be, -1);
	return 0;
}
