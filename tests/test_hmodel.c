/* test_hmodel.c: the relational models (R-GCN, R-SAGE, R-GAT): their plan, the forward pass
 * against a slow reference in double, every parameter's and every input's gradient against
 * central finite differences of that reference, dropout's keys, learning a relational
 * signal with Adam, refusals, backends, allocation failures.
 *
 * Tolerances (as test_train.c):
 *   float32 results vs double references:         |got - ref| <= 1e-5 * (1 + |ref|)
 *   backward vs central finite differences of the double-precision reference forward
 *   (step 1e-6): |analytic - numeric| <= 1e-4 * (1 + |numeric|)  */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/compute/compute.h"
#include "util.h"
#include "compute_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KTOL 1e-5
#define GTOL 1e-4
#define FD_STEP 1e-6

TestSuite(hmodel, .timeout = 120);

static bw_backend backend(int threads)
{
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, threads), 0, "%s", burrow_last_error());
	return be;
}

/* ------------------------------------------------------------ the fixture */

/* Three types of different input widths; five relations: cites (paper -> paper, src ==
 * dst), writes (author -> paper), written_by (paper -> author), topic (field -> paper) and
 * field_of (field -> author). No relation enters field, so it has no output past level 0,
 * and topic cannot run above layer 0. */
enum { PAPER, AUTHOR, FIELD, NT };
enum { CITES, WRITES, WRITTEN_BY, TOPIC, FIELD_OF, NR };
static const int rel_src[NR] = {PAPER, AUTHOR, PAPER, FIELD, FIELD};
static const int rel_dst[NR] = {PAPER, PAPER, AUTHOR, PAPER, AUTHOR};
static const int64_t in_dim[NT] = {4, 3, 5};

static bw_hmodel_cfg fix_cfg(int kind, int layers, float dropout)
{
	bw_hmodel_cfg c = {.kind = kind, .layers = layers, .num_types = NT, .num_rels = NR, .target = PAPER,
			   .hidden = 4, .classes = 3, .dropout = dropout, .heads = 2};
	for (int r = 0; r < NR; r++) {
		c.rel_src[r] = rel_src[r];
		c.rel_dst[r] = rel_dst[r];
	}
	for (int t = 0; t < NT; t++)
		c.in_dim[t] = in_dim[t];
	return c;
}

/* A sampler-shaped typed batch: level l of type t has nn[l][t] nodes (the first of level
 * l - 1's), every block (l, r) random and bipartite with row 0 empty, so rows without
 * neighbors, repeated edges and blocks with more rows than columns all occur. */
typedef struct hfix {
	int L;
	tblock blk[BURROW_MAX_LAYERS][NR];
	float *ew[BURROW_MAX_LAYERS][NR]; /* edge weights (g_weighted), else NULL */
	float *x[NT];
	bw_hbatch b;
} hfix;

/* fix_open gives every block edge weights in [0.2, 3) (LABOR-*'s are positive). */
static bool g_weighted;

static void fix_open(hfix *f, int L, const int64_t (*nn)[NT], uint64_t key)
{
	memset(f, 0, sizeof *f);
	f->L = L;
	f->b = (bw_hbatch){.num_layers = L, .num_types = NT, .num_rels = NR, .epoch = 2, .index = 5};
	for (int l = 0; l <= L; l++)
		for (int t = 0; t < NT; t++)
			f->b.num_nodes[l][t] = nn[l][t];
	for (int l = 0; l < L; l++)
		for (int r = 0; r < NR; r++) {
			make_block_as(&f->blk[l][r], nn[l + 1][rel_dst[r]], nn[l][rel_src[r]], 4, key + 10 * (uint64_t)l + (uint64_t)r,
				      true);
			f->b.blocks[l][r] = &f->blk[l][r].b;
			if (!g_weighted)
				continue;
			const int64_t ne = f->blk[l][r].indptr[nn[l + 1][rel_dst[r]]];
			f->ew[l][r] = malloc((size_t)(ne + 1) * sizeof(float));
			fill_uniform(f->ew[l][r], ne, key + 50 + 10 * (uint64_t)l + (uint64_t)r, 0.2, 3);
			f->blk[l][r].b.edge_weight = f->ew[l][r];
		}
	for (int t = 0; t < NT; t++) {
		f->x[t] = malloc((size_t)(nn[0][t] * in_dim[t]) * sizeof(float));
		fill_uniform(f->x[t], nn[0][t] * in_dim[t], key + 100 + (uint64_t)t, -1, 1);
		f->b.x[t] = bw_tensor_view(NULL, f->x[t], nn[0][t], in_dim[t]);
	}
}

static void fix_close(hfix *f)
{
	for (int l = 0; l < f->L; l++)
		for (int r = 0; r < NR; r++) {
			free_block(&f->blk[l][r]);
			free(f->ew[l][r]);
		}
	for (int t = 0; t < NT; t++)
		free(f->x[t]);
}

/* Levels of the 2- and 3-layer fixtures (the target's seeds on top). */
static const int64_t nn2[3][NT] = {{10, 8, 6}, {7, 3, 3}, {4, 0, 0}};
static const int64_t nn3[4][NT] = {{11, 8, 6}, {8, 5, 4}, {5, 3, 2}, {3, 0, 0}};

/* ------------------------------------------------------------ the reference */

/* Parameters in double, with a tail of NaNs where the reference reads what the model does
 * not hold: a relation or self term the model left out poisons whatever it reaches. */
#define POISON 4096

typedef struct ref_in {
	const bw_hmodel *m;
	bw_hmodel_cfg cfg;
	const hfix *f;
	const double *p;                   /* [num_params + POISON] */
	double *x[NT];                     /* the input rows */
	const float *mask[BURROW_MAX_LAYERS][NT]; /* dropout's scale per output element (NULL: none) */
} ref_in;

static bw_hparams rel_at(const ref_in *in, int l, int r)
{
	bw_hparams a;
	if (!bw_hmodel_rel_params(in->m, l, r, &a)) {
		const int64_t n = bw_hmodel_num_params(in->m);
		a = (bw_hparams){.w = n, .w_self = n, .a_src = n, .a_dst = n, .b = n};
	}
	return a;
}

/* out[i] = the mean over row i's sources of x [*, d] (0 without any), into [nd, d]; with edge
 * weights, of w_e x_j: sum_e w_e x_j / deg. */
static double *ref_mean(const bw_block *k, const double *x, int64_t d)
{
	double *o = calloc((size_t)(k->num_dst * d) + 1, sizeof *o);
	for (int64_t i = 0; i < k->num_dst; i++) {
		const int64_t deg = k->indptr[i + 1] - k->indptr[i];
		for (int64_t e = k->indptr[i]; e < k->indptr[i + 1]; e++)
			for (int64_t c = 0; c < d; c++)
				o[i * d + c] += (k->edge_weight ? k->edge_weight[e] : 1.0) * x[k->indices[e] * d + c] / (double)deg;
	}
	return o;
}

/* z [nd, out] += x [nd, in] w [in, out] */
static void ref_addmul(double *z, const double *x, const double *w, int64_t nd, int64_t in, int64_t out)
{
	for (int64_t i = 0; i < nd; i++)
		for (int64_t c = 0; c < out; c++)
			for (int64_t q = 0; q < in; q++)
				z[i * out + c] += x[i * in + q] * w[q * out + c];
}

/* z += R-GAT's term: attention over N_r(i) alone (no self loop), heads concatenated or
 * averaged, + b. */
static void ref_gat_term(const ref_in *in, const bw_hparams *a, const bw_block *k, const double *xs, const double *xd,
			 bool concat, double *z)
{
	const int64_t nd = k->num_dst, ns = k->num_src, H = in->cfg.heads, out = a->out;
	const int64_t F = concat ? out / H : out, hf = H * F;
	double *hs = calloc((size_t)(ns * hf) + 1, sizeof *hs), *hd = calloc((size_t)(nd * hf) + 1, sizeof *hd);
	ref_addmul(hs, xs, in->p + a->w, ns, a->in_src, hf);
	ref_addmul(hd, xd, in->p + a->w_self, nd, a->in_dst, hf);
	const double *as = in->p + a->a_src, *ad = in->p + a->a_dst, *bias = in->p + a->b;
	for (int64_t i = 0; i < nd; i++) {
		const int64_t e0 = k->indptr[i], n = k->indptr[i + 1] - e0;
		for (int64_t h = 0; h < H && n > 0; h++) {
			double sd = 0, mx = -INFINITY, sum = 0, *e = malloc((size_t)n * sizeof *e);
			for (int64_t f = 0; f < F; f++)
				sd += hd[i * hf + h * F + f] * ad[h * F + f];
			for (int64_t q = 0; q < n; q++) {
				double u = sd;
				for (int64_t f = 0; f < F; f++)
					u += hs[k->indices[e0 + q] * hf + h * F + f] * as[h * F + f];
				e[q] = u > 0 ? u : BW_GAT_SLOPE * u;
				mx = e[q] > mx ? e[q] : mx;
			}
			for (int64_t q = 0; q < n; q++)
				sum += exp(e[q] - mx);
			for (int64_t q = 0; q < n; q++)
				for (int64_t f = 0; f < F; f++) {
					const double v = exp(e[q] - mx) / sum * hs[k->indices[e0 + q] * hf + h * F + f];
					z[i * out + (concat ? h * F + f : f)] += concat ? v : v / (double)H;
				}
			free(e);
		}
		for (int64_t c = 0; c < out; c++)
			z[i * out + c] += bias[c];
	}
	free(hs);
	free(hd);
}

/* z += relation r's term at layer l, from its source's rows xs and its destination's xd. */
static void ref_term(const ref_in *in, int l, int r, const double *xs, const double *xd, double *z)
{
	const bw_block *k = in->f->b.blocks[l][r];
	const bw_hparams a = rel_at(in, l, r);
	const int64_t nd = k->num_dst, out = l == in->cfg.layers - 1 ? in->cfg.classes : in->cfg.hidden;
	const int64_t wi = l ? in->cfg.hidden : in_dim[rel_src[r]], wd = l ? in->cfg.hidden : in_dim[rel_dst[r]];
	if (in->cfg.kind == BURROW_MODEL_RGAT) {
		bw_hparams s = a;
		s.in_src = wi, s.in_dst = wd, s.out = out;
		ref_gat_term(in, &s, k, xs, xd, l + 1 < in->cfg.layers, z);
		return;
	}
	double *agg = ref_mean(k, xs, wi);
	ref_addmul(z, agg, in->p + a.w, nd, wi, out);
	if (in->cfg.kind == BURROW_MODEL_RSAGE) {
		ref_addmul(z, xd, in->p + a.w_self, nd, wd, out);
		for (int64_t i = 0; i < nd * out; i++)
			z[i] += in->p[a.b + i % out];
	}
	free(agg);
}

/* Type t's output at level l + 1 from the outputs h of level l (NULL: a type without one),
 * or NULL when no relation brings it anything: the obvious definition, every type computed. */
static double *ref_type(const ref_in *in, int l, int t, double *const h[NT])
{
	const int64_t nd = in->f->b.num_nodes[l + 1][t], out = l == in->cfg.layers - 1 ? in->cfg.classes : in->cfg.hidden;
	double *z = calloc((size_t)(nd * out) + 1, sizeof *z);
	bool any = false;
	for (int r = 0; r < NR; r++)
		if (rel_dst[r] == t && h[rel_src[r]]) {
			any = true;
			ref_term(in, l, r, h[rel_src[r]], h[t], z);
		}
	if (!any) {
		free(z);
		return NULL;
	}
	if (in->cfg.kind == BURROW_MODEL_RGCN) {
		bw_hparams s;
		const int64_t n = bw_hmodel_num_params(in->m);
		const int64_t w = bw_hmodel_self_params(in->m, l, t, &s) ? s.w_self : n, b = w == n ? n : s.b;
		ref_addmul(z, h[t], in->p + w, nd, l ? in->cfg.hidden : in_dim[t], out);
		for (int64_t i = 0; i < nd * out; i++)
			z[i] += in->p[b + i % out];
	}
	for (int64_t i = 0; l + 1 < in->cfg.layers && i < nd * out; i++) {
		z[i] = z[i] < 0 ? 0 : z[i]; /* NaN (poison) passes */
		if (in->mask[l][t])
			z[i] *= in->mask[l][t][i];
	}
	return z;
}

/* The logits [n_L(target), classes] (caller frees). */
static double *ref_logits(const ref_in *in)
{
	double *h[BURROW_MAX_LAYERS + 1][NT] = {{NULL}};
	for (int t = 0; t < NT; t++)
		h[0][t] = in->x[t];
	for (int l = 0; l < in->cfg.layers; l++)
		for (int t = 0; t < NT; t++)
			h[l + 1][t] = ref_type(in, l, t, h[l]);
	for (int l = 1; l < in->cfg.layers; l++)
		for (int t = 0; t < NT; t++)
			free(h[l][t]);
	for (int t = 0; t < NT; t++)
		if (t != in->cfg.target)
			free(h[in->cfg.layers][t]);
	return h[in->cfg.layers][in->cfg.target];
}

/* sum(logits * g) by the reference */
static double ref_loss(const ref_in *in, const float *g, int64_t n)
{
	double *z = ref_logits(in), s = 0;
	cr_assert(z, "the reference computes no logits");
	for (int64_t i = 0; i < n; i++)
		s += z[i] * g[i];
	free(z);
	return s;
}

/* Dropout's scale per element of layer l's output of type t, drawn as the model's is keyed
 * (hmodel.h): dropout of a tensor of ones. */
static float *draw_mask(const bw_backend *be, const hfix *f, const bw_hmodel_cfg *c, uint64_t seed, int l, int t)
{
	const int64_t rows = f->b.num_nodes[l + 1][t], cols = c->hidden;
	bw_tensor o;
	cr_assert_eq(bw_tensor_alloc(&o, NULL, rows, cols), 0);
	for (int64_t i = 0; i < rows * cols; i++)
		o.data[i] = 1;
	uint8_t *mask = malloc((size_t)(rows * cols) + 1);
	const uint64_t key = bw_key(bw_dropout_key(seed, f->b.epoch, f->b.index, l), (uint64_t)t);
	cr_assert_eq(bw_dropout(be, &o, mask, c->dropout, key), 0);
	float *s = malloc((size_t)(rows * cols) * sizeof *s + 1);
	memcpy(s, o.data, (size_t)(rows * cols) * sizeof *s);
	free(mask);
	bw_tensor_free(&o);
	return s;
}

/* ------------------------------------------------------------ the plan */

Test(hmodel, plan_runs_only_what_the_target_needs)
{
	for (int kind = BURROW_MODEL_RGCN; kind <= BURROW_MODEL_RGAT; kind++) {
		bw_hmodel_cfg c = fix_cfg(kind, 2, 0);
		bw_hmodel *m;
		cr_assert_eq(bw_hmodel_open(&m, NULL, &c, 1), 0, "%s", burrow_last_error());
		/* level 2: the target; level 1: paper and author (field receives nothing); level 0: all */
		const bool uses2[3][NT] = {{true, true, true}, {true, true, false}, {true, false, false}};
		/* layer 1: only what enters paper from a type level 1 holds (not topic: field) */
		const bool runs2[2][NR] = {{true, true, true, true, true}, {true, true, false, false, false}};
		for (int l = 0; l <= 2; l++)
			for (int t = 0; t < NT; t++)
				cr_assert_eq(bw_hmodel_uses(m, l, t), uses2[l][t], "kind %d level %d type %d", kind, l, t);
		for (int l = 0; l < 2; l++)
			for (int r = 0; r < NR; r++) {
				bw_hparams a;
				cr_assert_eq(bw_hmodel_runs(m, l, r), runs2[l][r], "kind %d layer %d relation %d", kind, l, r);
				cr_assert_eq(bw_hmodel_rel_params(m, l, r, &a), runs2[l][r]);
			}
		bw_hmodel_close(m);
		/* three layers: written_by runs at layer 1 too (level 2 needs author), never at the top */
		c.layers = 3;
		cr_assert_eq(bw_hmodel_open(&m, NULL, &c, 1), 0, "%s", burrow_last_error());
		const bool runs3[3][NR] = {{true, true, true, true, true}, {true, true, true, false, false},
					   {true, true, false, false, false}};
		for (int l = 0; l < 3; l++)
			for (int r = 0; r < NR; r++)
				cr_assert_eq(bw_hmodel_runs(m, l, r), runs3[l][r], "kind %d layer %d relation %d", kind, l, r);
		cr_assert(!bw_hmodel_uses(m, 2, FIELD) && bw_hmodel_uses(m, 2, AUTHOR) && !bw_hmodel_uses(m, 3, AUTHOR));
		bw_hmodel_close(m);
	}
	/* R-GCN's count by hand: layer 0 self terms of paper and author, five relations' W;
	 * layer 1 the paper's self term, cites' and writes' W */
	bw_hmodel_cfg c = fix_cfg(BURROW_MODEL_RGCN, 2, 0);
	bw_hmodel *m;
	cr_assert_eq(bw_hmodel_open(&m, NULL, &c, 1), 0);
	const int64_t h = 4, k = 3;
	const int64_t l0 = (4 * h + h) + (3 * h + h) + (4 + 3 + 4 + 5 + 5) * h, l1 = (h * k + k) + 2 * h * k;
	cr_assert_eq(bw_hmodel_num_params(m), l0 + l1);
	bw_hmodel_close(m);
}

/* ------------------------------------------------------------ forward and gradients */

/* Forward (training, feature dropout p, attention dropout off) against the reference, then
 * every parameter's and every input row's gradient of sum(logits * g) against finite
 * differences of it. */
static void check_grads(int kind, int layers, float p, uint64_t key)
{
	bw_backend be = backend(2);
	const bw_hmodel_cfg c = fix_cfg(kind, layers, p);
	hfix f;
	fix_open(&f, layers, layers == 2 ? nn2 : nn3, key);
	bw_hmodel *m;
	cr_assert_eq(bw_hmodel_open(&m, NULL, &c, key + 1), 0, "%s", burrow_last_error());
	const int64_t np = bw_hmodel_num_params(m);
	/* every parameter random, the biases included: a zero bias puts a row without
	 * neighbors on ReLU's kink, where finite differences and the gradient part */
	fill_uniform(bw_hmodel_params(m), np, key + 2, -0.5, 0.5);
	const uint64_t seed = key + 3;
	const bw_tensor *logits;
	cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, true, seed, &logits), 0, "%s", burrow_last_error());
	const int64_t nl = f.b.num_nodes[layers][PAPER] * c.classes;
	cr_assert_eq(logits->rows * logits->cols, nl);
	bw_tensor g, gx[NT] = {{0}};
	cr_assert_eq(bw_tensor_alloc(&g, NULL, logits->rows, logits->cols), 0);
	fill_uniform(g.data, nl, key + 4, -1, 1);
	cr_assert_eq(bw_hmodel_backward(&be, m, &f.b, &g, gx), 0, "%s", burrow_last_error());

	ref_in in = {.m = m, .cfg = c, .f = &f};
	double *pd = malloc((size_t)(np + POISON) * sizeof *pd);
	for (int64_t i = 0; i < np + POISON; i++)
		pd[i] = i < np ? bw_hmodel_params(m)[i] : NAN;
	in.p = pd;
	for (int t = 0; t < NT; t++)
		in.x[t] = to_double(f.x[t], f.b.num_nodes[0][t] * in_dim[t]);
	for (int l = 0; l + 1 < layers && p > 0; l++)
		for (int t = 0; t < NT; t++)
			in.mask[l][t] = draw_mask(&be, &f, &c, seed, l, t);
	double *z = ref_logits(&in);
	for (int64_t i = 0; i < nl; i++)
		cr_assert(close_to(logits->data[i], z[i], KTOL), "kind %d forward [%lld]: %g vs %g", kind, (long long)i,
			  logits->data[i], z[i]);
	free(z);
	double *vars[1 + NT] = {pd, in.x[0], in.x[1], in.x[2]};
	const int64_t counts[1 + NT] = {np, f.b.num_nodes[0][0] * in_dim[0], f.b.num_nodes[0][1] * in_dim[1],
					f.b.num_nodes[0][2] * in_dim[2]};
	for (int t = 0; t < NT; t++)
		cr_assert(gx[t].rows * gx[t].cols == counts[1 + t], "gx[%d] is [%lld, %lld]", t, (long long)gx[t].rows,
			  (long long)gx[t].cols);
	const float *analytic[1 + NT] = {bw_hmodel_grads(m), gx[0].data, gx[1].data, gx[2].data};
	for (int which = 0; which < 1 + NT; which++)
		for (int64_t k = 0; k < counts[which]; k++) {
			double *v = vars[which], save = v[k];
			v[k] = save + FD_STEP;
			const double lp = ref_loss(&in, g.data, nl);
			v[k] = save - FD_STEP;
			const double lm = ref_loss(&in, g.data, nl);
			v[k] = save;
			const double num = (lp - lm) / (2 * FD_STEP);
			cr_assert(close_to(analytic[which][k], num, GTOL), "kind %d, %d layers, dropout %g: d%s[%lld] %g vs numeric %g",
				  kind, layers, (double)p, which ? "x" : "param", (long long)k, analytic[which][k], num);
		}
	for (int t = 0; t < NT; t++) {
		free(in.x[t]);
		bw_tensor_free(&gx[t]);
		for (int l = 0; l < BURROW_MAX_LAYERS; l++)
			free((void *)in.mask[l][t]);
	}
	free(pd);
	bw_tensor_free(&g);
	bw_hmodel_close(m);
	fix_close(&f);
	bw_backend_release(&be);
}

Test(hmodel, rgcn_gradients) { check_grads(BURROW_MODEL_RGCN, 2, 0, 100); }
Test(hmodel, rsage_gradients) { check_grads(BURROW_MODEL_RSAGE, 2, 0, 200); }
Test(hmodel, rgat_gradients) { check_grads(BURROW_MODEL_RGAT, 2, 0, 300); }
/* R-SAGE and R-GCN over weighted blocks (LABOR-*'s weights, --sampler labor-star on a typed
 * dataset): the weighted relation mean, aggregating first (paper's and author's rows, 4 and 3
 * wide) and projecting first (field's 5 > hidden 4, and the last layer's hidden 4 > 3
 * classes), forward and gradients; two and three layers. */
Test(hmodel, rsage_gradients_with_edge_weights)
{
	g_weighted = true;
	check_grads(BURROW_MODEL_RSAGE, 2, 0, 600);
	check_grads(BURROW_MODEL_RSAGE, 3, 0.3f, 610);
	check_grads(BURROW_MODEL_RGCN, 2, 0, 620);
	check_grads(BURROW_MODEL_RGCN, 3, 0.3f, 630);
	g_weighted = false;
}
/* beyond the brief: three layers, and feature dropout (its masks drawn as the model keys them) */
Test(hmodel, gradients_with_three_layers_and_dropout)
{
	for (int kind = BURROW_MODEL_RGCN; kind <= BURROW_MODEL_RGAT; kind++) {
		check_grads(kind, 3, 0, 400 + 10 * (uint64_t)kind);
		check_grads(kind, 2, 0.3f, 500 + 10 * (uint64_t)kind);
	}
}

/* Inference (no dropout of either kind) against the reference, at one and two threads;
 * training with dropout draws from the batch's keys: the same batch, the same bits; another
 * epoch, other masks. */
Test(hmodel, forward_matches_ref_and_dropout_is_keyed)
{
	for (int kind = BURROW_MODEL_RGCN; kind <= BURROW_MODEL_RGAT; kind++) {
		hfix f;
		fix_open(&f, 3, nn3, 600);
		bw_hmodel_cfg c = fix_cfg(kind, 3, 0.4f);
		c.attn_dropout = 0.3f;
		bw_hmodel *m;
		cr_assert_eq(bw_hmodel_open(&m, NULL, &c, 601), 0, "%s", burrow_last_error());
		const int64_t np = bw_hmodel_num_params(m), nl = f.b.num_nodes[3][PAPER] * c.classes;
		double *pd = malloc((size_t)(np + POISON) * sizeof *pd);
		for (int64_t i = 0; i < np + POISON; i++)
			pd[i] = i < np ? bw_hmodel_params(m)[i] : NAN;
		ref_in in = {.m = m, .cfg = c, .f = &f, .p = pd};
		for (int t = 0; t < NT; t++)
			in.x[t] = to_double(f.x[t], f.b.num_nodes[0][t] * in_dim[t]);
		double *z = ref_logits(&in);
		float *runs[4];
		for (int threads = 1; threads <= 2; threads++) {
			bw_backend be = backend(threads);
			const bw_tensor *logits;
			cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, false, 9, &logits), 0, "%s", burrow_last_error());
			for (int64_t i = 0; i < nl; i++)
				cr_assert(close_to(logits->data[i], z[i], KTOL), "kind %d, %d threads [%lld]: %g vs %g", kind,
					  threads, (long long)i, logits->data[i], z[i]);
			for (int k = 0; k < 2; k++) { /* the same batch twice, then the next epoch */
				f.b.epoch = 2 + (uint64_t)k;
				cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, true, 9, &logits), 0, "%s", burrow_last_error());
				runs[(threads - 1) * 2 + k] = malloc((size_t)nl * sizeof(float));
				memcpy(runs[(threads - 1) * 2 + k], logits->data, (size_t)nl * sizeof(float));
			}
			f.b.epoch = 2;
			bw_backend_release(&be);
		}
		cr_assert(!memcmp(runs[0], runs[2], (size_t)nl * sizeof(float)), "kind %d: the same batch, other bits", kind);
		cr_assert(memcmp(runs[0], runs[1], (size_t)nl * sizeof(float)), "kind %d: another epoch, the same masks", kind);
		bool differs = false;
		for (int64_t i = 0; i < nl; i++)
			differs |= fabs(runs[0][i] - z[i]) > 1e-3;
		cr_assert(differs, "kind %d: training with dropout gave inference's logits", kind);
		for (int i = 0; i < 4; i++)
			free(runs[i]);
		for (int t = 0; t < NT; t++)
			free(in.x[t]);
		free(z);
		free(pd);
		bw_hmodel_close(m);
		fix_close(&f);
	}
}

/* ------------------------------------------------------------ learning */

/* A typed toy graph, every neighborhood whole: 60 papers (the target, features pure noise),
 * 30 authors whose features carry their class (a % 3) in noise, 6 fields of noise. Paper i
 * is written by authors i % 30 and (i + 6) % 30, both of class i % 3, its label: only the
 * authors' features tell it. Cites, topic and field_of add noise. Every edge joins nodes of
 * one parity, so the odd papers, held out, and everything they reach are never trained on:
 * only the authors' features carry their labels there. */
#define TP 60
#define TA 30
#define TF 6

typedef struct toy {
	int64_t *ip[NR];
	int32_t *ix[NR];
	bw_block blk[2][NR];
	int64_t zero[1];
	float *x[NT];
	int32_t labels[TP];
	bw_hbatch b;
} toy;

/* Relation r's CSR from its edges (dst[e], src[e]), rows sorted. */
static void toy_csr(toy *y, int r, int64_t nd, const int64_t *dst, const int64_t *src, int64_t ne)
{
	y->ip[r] = calloc((size_t)nd + 1, sizeof(int64_t));
	y->ix[r] = malloc((size_t)ne * sizeof(int32_t));
	for (int64_t e = 0; e < ne; e++)
		y->ip[r][dst[e] + 1]++;
	for (int64_t i = 0; i < nd; i++)
		y->ip[r][i + 1] += y->ip[r][i];
	int64_t *pos = malloc((size_t)nd * sizeof *pos);
	memcpy(pos, y->ip[r], (size_t)nd * sizeof *pos);
	for (int64_t e = 0; e < ne; e++)
		y->ix[r][pos[dst[e]]++] = (int32_t)src[e];
	for (int64_t i = 0; i < nd; i++) /* insertion sort of each row */
		for (int64_t a = y->ip[r][i] + 1; a < y->ip[r][i + 1]; a++)
			for (int64_t q = a; q > y->ip[r][i] && y->ix[r][q - 1] > y->ix[r][q]; q--) {
				const int32_t s = y->ix[r][q];
				y->ix[r][q] = y->ix[r][q - 1];
				y->ix[r][q - 1] = s;
			}
	free(pos);
}

static void toy_open(toy *y, bool signal)
{
	memset(y, 0, sizeof *y);
	int64_t d[2 * TP], s[2 * TP];
	for (int64_t i = 0; i < TP; i++) /* cites: i <- i + 2, i + 10 */
		d[2 * i] = d[2 * i + 1] = i, s[2 * i] = (i + 2) % TP, s[2 * i + 1] = (i + 10) % TP;
	toy_csr(y, CITES, TP, d, s, 2 * TP);
	for (int64_t i = 0; i < TP; i++) /* writes: i <- its two authors */
		d[2 * i] = d[2 * i + 1] = i, s[2 * i] = i % TA, s[2 * i + 1] = (i + 6) % TA;
	toy_csr(y, WRITES, TP, d, s, 2 * TP);
	toy_csr(y, WRITTEN_BY, TA, s, d, 2 * TP);
	for (int64_t i = 0; i < TP; i++) /* topic: one field per paper */
		d[i] = i, s[i] = i % TF;
	toy_csr(y, TOPIC, TP, d, s, TP);
	for (int64_t a = 0; a < TA; a++)
		d[a] = a, s[a] = (a * 5) % TF;
	toy_csr(y, FIELD_OF, TA, d, s, TA);
	const int64_t n[NT] = {TP, TA, TF};
	y->b = (bw_hbatch){.num_layers = 2, .num_types = NT, .num_rels = NR};
	for (int t = 0; t < NT; t++) {
		y->b.num_nodes[0][t] = y->b.num_nodes[1][t] = n[t];
		y->x[t] = malloc((size_t)(n[t] * in_dim[t]) * sizeof(float));
		fill_uniform(y->x[t], n[t] * in_dim[t], 700 + (uint64_t)t, -0.5, 0.5);
		y->b.x[t] = bw_tensor_view(NULL, y->x[t], n[t], in_dim[t]);
	}
	y->b.num_nodes[2][PAPER] = TP;
	for (int64_t a = 0; a < TA && signal; a++)
		y->x[AUTHOR][a * in_dim[AUTHOR] + a % 3] += 2.0f;
	for (int64_t i = 0; i < TP; i++)
		y->labels[i] = (int32_t)(i % 3);
	y->b.labels = y->labels;
	for (int l = 0; l < 2; l++)
		for (int r = 0; r < NR; r++) {
			const int64_t nd = y->b.num_nodes[l + 1][rel_dst[r]];
			bw_block_init(&y->blk[l][r], nd, n[rel_src[r]], nd ? y->ip[r] : y->zero, y->ix[r]);
			y->b.blocks[l][r] = &y->blk[l][r];
		}
}

static void toy_close(toy *y)
{
	for (int l = 0; l < 2; l++)
		for (int r = 0; r < NR; r++)
			bw_block_release(&y->blk[l][r]);
	for (int r = 0; r < NR; r++) {
		free(y->ip[r]);
		free(y->ix[r]);
	}
	for (int t = 0; t < NT; t++)
		free(y->x[t]);
}

/* 100 Adam steps on the toy batch's even papers; the first and the last training loss, and
 * the loss on the odd papers (held out) after. */
static void train_toy(int kind, bool signal, double loss[3])
{
	bw_backend be = backend(2);
	toy y;
	toy_open(&y, signal);
	bw_hmodel_cfg c = fix_cfg(kind, 2, 0);
	c.hidden = 8;
	bw_hmodel *m;
	cr_assert_eq(bw_hmodel_open(&m, NULL, &c, 77), 0, "%s", burrow_last_error());
	bw_optim *o;
	cr_assert_eq(bw_optim_open(&o, NULL, BURROW_OPTIM_ADAM, bw_hmodel_num_params(m), 0.01, 0, 0), 0);
	int64_t rows[2][TP / 2];
	for (int64_t i = 0; i < TP; i++)
		rows[i % 2][i / 2] = i;
	bw_tensor g = {0};
	const bw_tensor *logits;
	bw_loss ld, ls;
	for (int step = 0; step < 100; step++) {
		y.b.index = (uint64_t)step;
		cr_assert_eq(bw_hmodel_forward(&be, m, &y.b, true, 5, &logits), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_tensor_reshape(&g, NULL, logits->rows, logits->cols), 0);
		cr_assert_eq(bw_nll_loss(&be, logits, y.labels, rows[0], TP / 2, &g, &ld), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_loss_read(&be, &ld, &ls), 0);
		cr_assert_eq(ls.counted, TP / 2);
		loss[step ? 1 : 0] = ls.loss;
		cr_assert_eq(bw_hmodel_backward(&be, m, &y.b, &g, NULL), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_optim_step(&be, o, bw_hmodel_params(m), bw_hmodel_grads(m)), 0);
	}
	cr_assert_eq(bw_hmodel_forward(&be, m, &y.b, false, 5, &logits), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_nll_loss(&be, logits, y.labels, rows[1], TP / 2, NULL, &ld), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_loss_read(&be, &ld, &ls), 0);
	loss[2] = ls.loss;
	bw_tensor_free(&g);
	bw_optim_close(o);
	bw_hmodel_close(m);
	toy_close(&y);
	bw_backend_release(&be);
}

/* The training loss falls well below its start, and the held-out papers' loss shows it
 * was learned from the authors: without their signal it stays far higher. */
Test(hmodel, learns_a_signal_carried_by_a_neighbor_type)
{
	for (int kind = BURROW_MODEL_RGCN; kind <= BURROW_MODEL_RGAT; kind++) {
		double with[3], without[3];
		train_toy(kind, true, with);
		train_toy(kind, false, without);
		cr_log_info("kind %d: training loss %.4f -> %.4f in 100 Adam steps, held out %.4f (without the authors' "
			    "signal: %.4f -> %.4f, held out %.4f)", kind, with[0], with[1], with[2], without[0], without[1],
			    without[2]);
		cr_assert_lt(with[1], 0.2 * with[0], "kind %d: loss %g -> %g after 100 steps", kind, with[0], with[1]);
		cr_assert_lt(with[2], 0.3 * without[2], "kind %d: held out %g with the signal, %g without", kind, with[2],
			     without[2]);
	}
}

/* ------------------------------------------------------------ refusals, backends, memory */

Test(hmodel, bad_configs_and_batches_are_refused)
{
	bw_hmodel *m = (bw_hmodel *)&m;
	bw_hmodel_cfg c = fix_cfg(BURROW_MODEL_RGCN, 2, 0);
	c.kind = BURROW_MODEL_SAGE;
	cr_assert_eq(bw_hmodel_open(&m, NULL, &c, 1), BURROW_E_INVAL);
	cr_assert_null(m);
	c = fix_cfg(BURROW_MODEL_RGCN, 2, 0);
	c.target = FIELD; /* receives no relation */
	cr_assert_eq(bw_hmodel_check_cfg(&c), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "target type 2 receives no relation"), "%s", burrow_last_error());
	c = fix_cfg(BURROW_MODEL_RGAT, 2, 0);
	c.heads = 3; /* does not divide hidden 4 */
	cr_assert_eq(bw_hmodel_check_cfg(&c), BURROW_E_INVAL);
	c = fix_cfg(BURROW_MODEL_RSAGE, 2, 0);
	c.rel_dst[1] = NT;
	cr_assert_eq(bw_hmodel_check_cfg(&c), BURROW_E_INVAL);
	c = fix_cfg(BURROW_MODEL_RSAGE, 2, 0);
	c.in_dim[FIELD] = 0;
	cr_assert_eq(bw_hmodel_check_cfg(&c), BURROW_E_INVAL);
	c = fix_cfg(BURROW_MODEL_RSAGE, 2, 1.0f);
	cr_assert_eq(bw_hmodel_check_cfg(&c), BURROW_E_INVAL);

	bw_backend be = backend(1);
	hfix f;
	fix_open(&f, 2, nn2, 800);
	c = fix_cfg(BURROW_MODEL_RSAGE, 2, 0);
	cr_assert_eq(bw_hmodel_open(&m, NULL, &c, 1), 0);
	const bw_tensor *logits;
	f.b.x[AUTHOR].cols = 2; /* author's input has the wrong width */
	cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, true, 1, &logits), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "input of type 1"), "%s", burrow_last_error());
	f.b.x[AUTHOR].cols = in_dim[AUTHOR];
	f.b.blocks[1][WRITES] = NULL; /* a block the model runs is missing */
	cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, true, 1, &logits), BURROW_E_INVAL);
	f.b.blocks[1][WRITES] = &f.blk[1][WRITES].b;
	f.b.blocks[1][TOPIC] = NULL; /* one it does not run may be */
	f.b.x[FIELD] = (bw_tensor){0};
	f.b.num_nodes[1][FIELD] = 0;
	f.b.num_nodes[0][FIELD] = 7; /* field's level 0 no longer matches its input */
	cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, true, 1, &logits), BURROW_E_INVAL);
	f.b.num_nodes[0][FIELD] = nn2[0][FIELD];
	f.b.x[FIELD] = bw_tensor_view(NULL, f.x[FIELD], nn2[0][FIELD], in_dim[FIELD]);
	cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, true, 1, &logits), 0, "%s", burrow_last_error());
	f.b.num_nodes[1][PAPER] = 11; /* more than level 0 holds */
	cr_assert_eq(bw_hmodel_forward(&be, m, &f.b, true, 1, &logits), BURROW_E_INVAL);
	f.b.num_nodes[1][PAPER] = nn2[1][PAPER];
	bw_tensor g = {0};
	cr_assert_eq(bw_tensor_alloc(&g, NULL, 3, 3), 0); /* 4 rows of logits */
	cr_assert_eq(bw_hmodel_backward(&be, m, &f.b, &g, NULL), BURROW_E_INVAL);
	bw_tensor_free(&g);
	bw_hmodel_close(m);
	fix_close(&f);
	bw_backend_release(&be);
}

/* The CPU runs all three; CUDA's table has what R-GCN and R-SAGE use (GEMM, mean
 * aggregation, bias, column sums, ReLU, dropout, axpy) and no attention: R-GAT is refused
 * in one line (the CUDA table is asked without a GPU, as bw_backend_supports does). */
Test(hmodel, backends_run_or_refuse_at_open)
{
	bw_backend be = backend(1);
	for (int kind = BURROW_MODEL_RGCN; kind <= BURROW_MODEL_RGAT; kind++) {
		const bw_hmodel_cfg c = fix_cfg(kind, 2, 0);
		cr_assert_eq(bw_hmodel_supported(&be, &c), 0, "%s", burrow_last_error());
	}
	bw_backend_release(&be);
	const bw_backend_reg *r = bw_backend_find(BW_BACKEND_CUDA);
	if (!r)
		cr_skip_test("backend cuda is not in this build");
	const bw_backend cuda = {.ops = r->ops, .dev = bw_device_cpu(), .kind = BW_BACKEND_CUDA};
	bw_hmodel_cfg c = fix_cfg(BURROW_MODEL_RGCN, 2, 0);
	cr_assert_eq(bw_hmodel_supported(&cuda, &c), 0);
	c.kind = BURROW_MODEL_RSAGE;
	cr_assert_eq(bw_hmodel_supported(&cuda, &c), 0);
	c.kind = BURROW_MODEL_RGAT;
	cr_assert_eq(bw_hmodel_supported(&cuda, &c), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "the cuda backend cannot run rgat"), "%s", burrow_last_error());
	cr_assert(!strchr(burrow_last_error(), '\n'));
}

Test(hmodel, every_allocation_failure_is_reported)
{
	bw_backend be = backend(1);
	hfix f;
	fix_open(&f, 2, nn2, 900);
	const size_t base = tu_mem_now();
	for (int kind = BURROW_MODEL_RGCN; kind <= BURROW_MODEL_RGAT; kind++) {
		bw_hmodel_cfg c = fix_cfg(kind, 2, 0.2f);
		c.attn_dropout = 0.2f;
		bool done = false;
		for (long n = 0; !done; n++) {
			cr_assert_lt(n, 5000, "never succeeded");
			bw_hmodel *m = NULL;
			const bw_tensor *logits;
			bw_tensor g = {0}, gx[NT] = {{0}};
			for (int l = 0; l < 2; l++) /* each attempt derives the blocks' transposes anew */
				for (int r = 0; r < NR; r++)
					bw_block_release(&f.blk[l][r].b);
			bw_mem_fail_after(n);
			int st = bw_hmodel_open(&m, NULL, &c, 1);
			if (!st)
				st = bw_hmodel_forward(&be, m, &f.b, true, 1, &logits);
			if (!st && !(st = bw_tensor_alloc(&g, NULL, logits->rows, logits->cols)))
				st = bw_hmodel_backward(&be, m, &f.b, &g, gx);
			bw_mem_fail_after(-1);
			cr_assert(st == 0 || st == BURROW_E_NOMEM, "kind %d, allocation %ld: status %d (%s)", kind, n, st,
				  burrow_last_error());
			done = st == 0;
			if (done)
				cr_log_info("kind %d: succeeded once %ld allocations could succeed", kind, n);
			bw_hmodel_close(m);
			bw_tensor_free(&g);
			for (int t = 0; t < NT; t++)
				bw_tensor_free(&gx[t]);
			for (int l = 0; l < 2; l++)
				for (int r = 0; r < NR; r++)
					bw_block_release(&f.blk[l][r].b);
			cr_assert_eq(tu_mem_now(), base, "kind %d, allocation %ld: %zu bytes not freed", kind, n,
				     tu_mem_now() - base);
		}
	}
	fix_close(&f);
	bw_backend_release(&be);
}

/* The bytes one training step (forward, backward) of a fresh model holds for f's batch: what
 * the allocator counts as held after it less before, the blocks prepared first (their
 * transposes are the loader's slot's, not the step's); the input gradients, when wanted
 * (learned embeddings), sized beforehand (the trainer counts them with the embeddings). */
static double step_bytes(const bw_hmodel_cfg *c, hfix *f, bool input_grads, double *estimate, bool weighted)
{
	bw_backend be = backend(1);
	for (int l = 0; l < f->L; l++)
		for (int r = 0; r < NR; r++) {
			f->b.blocks[l][r]->bipartite = true;
			cr_assert_eq(bw_block_prepare(f->b.blocks[l][r], true, false), 0, "%s", burrow_last_error());
		}
	bw_hmodel *m;
	cr_assert_eq(bw_hmodel_open(&m, NULL, c, 1), 0, "%s", burrow_last_error());
	bw_tensor g, gx[NT];
	cr_assert_eq(bw_tensor_alloc(&g, NULL, f->b.num_nodes[f->L][PAPER], c->classes), 0);
	for (int t = 0; t < NT; t++)
		cr_assert_eq(bw_tensor_alloc(&gx[t], NULL, f->b.num_nodes[0][t], in_dim[t]), 0);
	size_t before, after;
	burrow_mem_stats(&before, NULL);
	const bw_tensor *logits;
	cr_assert_eq(bw_hmodel_forward(&be, m, &f->b, true, 3, &logits), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_hmodel_backward(&be, m, &f->b, &g, input_grads ? gx : NULL), 0, "%s", burrow_last_error());
	burrow_mem_stats(&after, NULL);
	*estimate = bw_hmodel_batch_bytes(m, f->b.num_nodes, weighted);
	for (int t = 0; t < NT; t++)
		bw_tensor_free(&gx[t]);
	bw_tensor_free(&g);
	bw_hmodel_close(m);
	bw_backend_release(&be);
	return (double)after - (double)before;
}

/* bw_hmodel_batch_bytes (sizing typed batches to --mem) bounds what a training step holds,
 * LABOR-*'s weighted blocks included: a relation that projects first aggregates its weighted
 * mean into scratch [destinations, out] beside the projection. R-GCN and R-SAGE (the models
 * that weigh), one layer of classes 2 (every relation projects first: the weighted scratch is
 * what the estimate must add) and two layers with hidden 2, 4, 8 (some relations project
 * first, some aggregate), with and without dropout and input gradients. Where every relation
 * projects first the estimate also grows by at least what the weights add to the step, within
 * one block's allocator overhead (its 64-byte alignment and header: 128 bytes allowed). */
Test(hmodel, batch_bytes_bound_a_step_with_weighted_blocks)
{
	static const int64_t one[2][NT] = {{900, 700, 500}, {300, 0, 0}};
	static const int64_t two[3][NT] = {{900, 700, 500}, {600, 400, 3}, {300, 0, 0}};
	for (int kind = BURROW_MODEL_RGCN; kind <= BURROW_MODEL_RSAGE; kind++)
		for (int shape = 0; shape < 7; shape++) {
			const int L = shape ? 2 : 1;
			bw_hmodel_cfg c = fix_cfg(kind, L, shape % 2 ? 0.5f : 0);
			if (!shape)
				c.classes = 2;
			else
				c.hidden = (int64_t)2 << ((shape - 1) / 2);
			const bool input_grads = shape == 3 || shape == 6;
			double held[2], est[2];
			for (int w = 0; w < 2; w++) {
				g_weighted = w;
				hfix f;
				fix_open(&f, L, L == 1 ? one : two, 900 + (uint64_t)shape);
				g_weighted = false;
				held[w] = step_bytes(&c, &f, input_grads, &est[w], w);
				fix_close(&f);
				cr_expect_leq(held[w], est[w],
					      "kind %d, %d layers, hidden %lld, dropout %g, input gradients %d, weighted %d: "
					      "a step holds %.0f bytes, estimated %.0f",
					      kind, L, (long long)c.hidden, (double)c.dropout, input_grads, w, held[w], est[w]);
			}
			if (!shape)
				cr_expect_geq(est[1] - est[0], held[1] - held[0] - 128,
					      "kind %d: weights add %.0f bytes to a step, %.0f to its estimate", kind,
					      held[1] - held[0], est[1] - est[0]);
		}
}
