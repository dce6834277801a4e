/* test_train.c: the training engine: blocks' derived data against their definitions, every
 * layer's backward and a whole 2-layer model's against central finite differences,
 * layer-wise inference against the full-graph forward, training that needs the graph,
 * bit-for-bit resume, refusals. (Each op of every backend against its ref_ is in test_ops.c.)
 *
 * Tolerances (stated once, used below):
 *   float32 results vs double references:         |got - ref| <= 1e-5 * (1 + |ref|)
 *   backward vs central finite differences of the double-precision reference forward
 *   (step 1e-6): |analytic - numeric| <= 1e-4 * (1 + |numeric|)  */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/compute/backend_impl.h"
#include "../train/driver/driver.h"
#include "../graph/npy.h"
#include "util.h"
#include "compute_util.h"
#include "train_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <unistd.h>

#define KTOL 1e-5
#define GTOL 1e-4
#define FD_STEP 1e-6

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(train_ops, .timeout = 60);
TestSuite(train_grad, .timeout = 60);
TestSuite(train_run, .init = setup, .fini = teardown, .timeout = 120);

static bw_backend backend(int threads)
{
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, threads), 0, "%s", burrow_last_error());
	return be;
}

/* ------------------------------------------------------------ kernels vs ref_ */

Test(train_ops, block_transpose_and_gcn_norms_follow_their_definitions)
{
	tblock t;
	make_block(&t, 20, 33, 6, 11);
	cr_assert_eq(bw_block_prepare(&t.b, true, true), 0);
	const bw_block *b = &t.b;
	/* every edge (i, j) appears in j's transpose list as often as in row i, lists ascending */
	for (int64_t j = 0; j < b->num_src; j++) {
		for (int64_t e = b->t_indptr[j] + 1; e < b->t_indptr[j + 1]; e++)
			cr_assert_leq(b->t_indices[e - 1], b->t_indices[e]);
		for (int64_t i = 0; i < b->num_dst; i++) {
			int64_t fwd = 0, bwd = 0;
			for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++)
				fwd += b->indices[e] == j;
			for (int64_t e = b->t_indptr[j]; e < b->t_indptr[j + 1]; e++)
				bwd += b->t_indices[e] == i;
			cr_assert_eq(fwd, bwd, "edge (%lld, %lld)", (long long)i, (long long)j);
		}
	}
	for (int64_t i = 0; i < b->num_dst; i++)
		cr_assert(close_to(b->dst_norm[i], 1.0 / sqrt((double)(b->indptr[i + 1] - b->indptr[i]) + 1), KTOL));
	for (int64_t j = 0; j < b->num_src; j++) {
		double deg;
		if (j < b->num_dst) {
			deg = (double)(b->indptr[j + 1] - b->indptr[j]);
		} else {
			deg = 0;
			for (int64_t e = 0; e < b->indptr[b->num_dst]; e++)
				deg += b->indices[e] == j;
		}
		cr_assert(close_to(b->src_norm[j], 1.0 / sqrt(deg + 1), KTOL), "src %lld", (long long)j);
	}
	free_block(&t);
}

Test(train_ops, block_check_refuses_bad_blocks)
{
	int64_t ip[3] = {0, 2, 1};
	int32_t ix[2] = {0, 1};
	bw_block b;
	bw_block_init(&b, 2, 3, ip, ix);
	cr_assert_eq(bw_block_check(&b), BURROW_E_FORMAT);
	ip[2] = 2;
	ix[1] = 3;
	cr_assert_eq(bw_block_check(&b), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "row 0"), "%s", burrow_last_error());
	bw_block_init(&b, 4, 3, ip, ix);
	cr_assert_eq(bw_block_check(&b), BURROW_E_INVAL);
}

/* ------------------------------------------------------------ gradient checks */

/* GAT in double: h = x W, per head the softmax over N(i) + {i} of
 * leaky_relu(<h_i, a_dst> + <h_j, a_src> (+ <W_e f_ij, a_edge>)), times the dropout mask /
 * (1 - p) when amask is given ([slots, heads] in the slot order of bw_ops), the weighted sum
 * of h_j, heads concatenated or averaged, + b. With s->edge_dim, PyG's GATConv(edge_dim):
 * f_ij the block's edge features, the self loop's f_ii the mean of row i's (fill "mean"),
 * each projected by W_e [De, heads F] (after b in p), then dotted with a_edge per head. */
static double ref_edge_term(const bw_layer_shape *s, const double *we, const double *ae, const bw_block *b,
			    int64_t i, int64_t q, int64_t k, int64_t hf, int64_t F)
{
	const int64_t de = s->edge_dim, e0 = b->indptr[i], ne = b->indptr[i + 1] - e0;
	double u = 0;
	for (int64_t f = 0; f < F; f++) {
		double proj = 0; /* (W_e f_ij)[k F + f] */
		for (int64_t d = 0; d < de; d++) {
			double fv = 0;
			if (q)
				fv = b->edge_feat[(e0 + q - 1) * de + d];
			else
				for (int64_t e = 0; e < ne; e++)
					fv += b->edge_feat[(e0 + e) * de + d] / (double)ne;
			proj += fv * we[d * hf + k * F + f];
		}
		u += proj * ae[k * F + f];
	}
	return u;
}

static void ref_gat(const bw_layer_shape *s, const double *p, const bw_block *b, const double *x, double *z,
		    const uint8_t *amask, double ap)
{
	const int64_t nd = b->num_dst, ns = b->num_src, in = s->in, H = s->heads;
	const int64_t F = s->concat ? s->out / H : s->out, hf = H * F;
	const double *w = p, *as = p + in * hf, *ad = as + hf, *bias = ad + hf, *we = bias + s->out, *ae = we + s->edge_dim * hf;
	double *h = malloc((size_t)(ns * hf) * sizeof *h);
	ref_matmul(x, false, w, false, ns, hf, in, h);
	for (int64_t i = 0; i < nd * s->out; i++)
		z[i] = 0;
	for (int64_t i = 0; i < nd; i++) {
		const int64_t n = b->indptr[i + 1] - b->indptr[i] + 1, base = b->indptr[i] - b->indptr[0] + i;
		for (int64_t k = 0; k < H; k++) {
			double *e = malloc((size_t)n * sizeof *e), mx = -INFINITY, sum = 0, sd = 0;
			for (int64_t f = 0; f < F; f++)
				sd += h[i * hf + k * F + f] * ad[k * F + f];
			for (int64_t q = 0; q < n; q++) {
				const int64_t j = q ? b->indices[b->indptr[i] + q - 1] : i;
				double u = sd;
				for (int64_t f = 0; f < F; f++)
					u += h[j * hf + k * F + f] * as[k * F + f];
				if (s->edge_dim)
					u += ref_edge_term(s, we, ae, b, i, q, k, hf, F);
				e[q] = u > 0 ? u : BW_GAT_SLOPE * u;
				mx = e[q] > mx ? e[q] : mx;
			}
			for (int64_t q = 0; q < n; q++)
				sum += exp(e[q] - mx);
			for (int64_t q = 0; q < n; q++) {
				const int64_t j = q ? b->indices[b->indptr[i] + q - 1] : i;
				double a = exp(e[q] - mx) / sum;
				if (amask)
					a = amask[(base + q) * H + k] ? a / (1 - ap) : 0;
				for (int64_t f = 0; f < F; f++) {
					const double v = a * h[j * hf + k * F + f];
					if (s->concat)
						z[i * s->out + k * F + f] += v;
					else
						z[i * s->out + f] += v / (double)H;
				}
			}
			free(e);
		}
		for (int64_t c = 0; c < s->out; c++)
			z[i * s->out + c] += bias[c];
	}
	free(h);
}

/* A layer in double: the obvious definition, over the same parameter layout. */
static void ref_layer_shape(const bw_layer_shape *s, const double *p, const bw_block *b, const double *x, double *z,
			    const uint8_t *amask, double ap)
{
	if (s->kind == BW_LAYER_GAT) {
		ref_gat(s, p, b, x, z, amask, ap);
		return;
	}
	const bw_layer_kind kind = s->kind;
	const int64_t in = s->in, out = s->out;
	const int64_t nd = b->num_dst, ns = b->num_src;
	const double *w = p, *wn = kind == BW_LAYER_SAGE ? p + in * out : NULL;
	const double *bias = p + (kind == BW_LAYER_SAGE ? 2 : 1) * in * out;
	double *t = calloc((size_t)(nd * in), sizeof *t), *u = calloc((size_t)(nd * out), sizeof *u);
	ref_matmul(x, false, w, false, nd, out, in, z); /* x_dst W */
	if (kind == BW_LAYER_SAGE && s->aggr == BURROW_AGGR_MAX) {
		for (int64_t i = 0; i < nd; i++)
			for (int64_t c = 0; c < in; c++) {
				double m = 0;
				for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
					const double v = x[b->indices[e] * in + c];
					m = e == b->indptr[i] || v > m ? v : m;
				}
				t[i * in + c] = m;
			}
	} else if (kind != BW_LAYER_LINEAR) {
		const bw_agg mode = kind == BW_LAYER_GCN ? BW_AGG_GCN : s->aggr == BURROW_AGGR_SUM ? BW_AGG_SUM : BW_AGG_MEAN;
		double *a = ref_agg_matrix(b, mode);
		ref_matmul(a, false, x, false, nd, in, ns, t);
		free(a);
	}
	if (kind != BW_LAYER_LINEAR) {
		ref_matmul(t, false, kind == BW_LAYER_SAGE ? wn : w, false, nd, out, in, u);
		for (int64_t i = 0; i < nd * out; i++)
			z[i] = kind == BW_LAYER_SAGE ? z[i] + u[i] : u[i];
	}
	for (int64_t i = 0; i < nd; i++)
		for (int64_t c = 0; c < out; c++)
			z[i * out + c] += bias[c];
	free(t);
	free(u);
}

/* Check one layer: loss = sum(z * r), so dL/dz = r. GAT runs with attention dropout p
 * (the reference reads the layer's own mask). */
static void check_shape(const bw_layer_shape *s, uint64_t key, float attn_p)
{
	bw_backend be = backend(2);
	const int64_t nd = 9, ns = 16, in = s->in, out = s->out;
	const bw_layer_kind kind = s->kind;
	tblock t;
	make_block(&t, nd, ns, 5, key);
	cr_assert_eq(bw_block_prepare(&t.b, true, true), 0);
	cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
	float *ef = NULL;
	if (s->edge_dim) { /* edge features, one row per edge of the block */
		const int64_t ne = bw_block_edges(&t.b);
		ef = malloc((size_t)(ne * s->edge_dim + 1) * sizeof *ef);
		fill_uniform(ef, ne * s->edge_dim, key + 6, -1, 1);
		t.b.edge_feat = ef;
		t.b.edge_feat_dim = s->edge_dim;
	}
	const int64_t np = bw_layer_shape_params(s);
	float *p = malloc((size_t)np * sizeof *p), *gp = calloc((size_t)np, sizeof *gp);
	bw_layer l;
	bw_layer_bind_shape(&l, s, p, gp);
	bw_layer_init(&l, NULL, key + 1);
	fill_uniform(l.b, out, key + 2, -0.5, 0.5);
	l.attn_p = attn_p;
	l.attn_key = key + 5;
	bw_tensor x, z = {0}, r, gx = {0};
	bw_tensor_alloc(&x, NULL, ns, in);
	bw_tensor_alloc(&r, NULL, nd, out);
	fill_uniform(x.data, ns * in, key + 3, -1, 1);
	fill_uniform(r.data, nd * out, key + 4, -1, 1);
	cr_assert_eq(bw_layer_forward(&be, &l, &t.b, &x, &z), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_layer_backward(&be, &l, &t.b, &x, &r, &gx), 0, "%s", burrow_last_error());
	const uint8_t *amask = l.attn_dropped ? l.attn_mask.ptr : NULL;
	cr_assert_eq(l.attn_dropped, attn_p > 0);

	double *pd = to_double(p, np), *xd = to_double(x.data, ns * in), *zd = malloc((size_t)(nd * out) * sizeof *zd);
	/* the forward itself matches the reference */
	ref_layer_shape(s, pd, &t.b, xd, zd, amask, attn_p);
	for (int64_t i = 0; i < nd * out; i++)
		cr_assert(close_to(z.data[i], zd[i], KTOL), "kind %d forward [%lld]: %g vs %g", kind, (long long)i, z.data[i], zd[i]);
	double *vars[2] = {pd, xd};
	const int64_t counts[2] = {np, ns * in};
	const float *analytic[2] = {gp, gx.data};
	for (int which = 0; which < 2; which++)
		for (int64_t k = 0; k < counts[which]; k++) {
			double *v = vars[which], save = v[k], lp = 0, lm = 0;
			v[k] = save + FD_STEP;
			ref_layer_shape(s, pd, &t.b, xd, zd, amask, attn_p);
			for (int64_t i = 0; i < nd * out; i++)
				lp += zd[i] * r.data[i];
			v[k] = save - FD_STEP;
			ref_layer_shape(s, pd, &t.b, xd, zd, amask, attn_p);
			for (int64_t i = 0; i < nd * out; i++)
				lm += zd[i] * r.data[i];
			v[k] = save;
			const double num = (lp - lm) / (2 * FD_STEP);
			cr_assert(close_to(analytic[which][k], num, GTOL), "kind %d in %lld out %lld: d%s[%lld] %g vs numeric %g",
				  kind, (long long)in, (long long)out, which ? "x" : "param", (long long)k, analytic[which][k], num);
		}
	free(pd);
	free(xd);
	free(zd);
	free(p);
	free(gp);
	free(ef);
	bw_layer_release(&l);
	bw_tensor_free(&x);
	bw_tensor_free(&z);
	bw_tensor_free(&r);
	bw_tensor_free(&gx);
	free_block(&t);
}

static void check_layer(bw_layer_kind kind, int64_t in, int64_t out, uint64_t key)
{
	const bw_layer_shape s = {.kind = kind, .in = in, .out = out, .heads = 1, .concat = true};
	check_shape(&s, key, 0);
}

/* ------------------------------------------------------------ initialization as PyG's */

/* n values lie in [-bound, bound], reach 0.99 of it, and have a uniform's mean (0) and
 * variance (bound^2 / 3) within 2% (the sample variance's own spread is 0.35% at n = 64000). */
static void assert_uniform(const float *w, int64_t n, double bound, const char *what)
{
	double sum = 0, sq = 0, top = 0;
	for (int64_t i = 0; i < n; i++) {
		cr_assert(fabs(w[i]) <= bound, "%s[%lld] = %g outside +-%g", what, (long long)i, w[i], bound);
		sum += w[i];
		sq += (double)w[i] * w[i];
		top = fmax(top, fabs(w[i]));
	}
	const double mean = sum / (double)n, var = sq / (double)n - mean * mean;
	cr_assert(top >= 0.99 * bound, "%s: largest |w| %g of a bound %g", what, top, bound);
	cr_assert(fabs(mean) < 0.02 * bound, "%s: mean %g (bound %g)", what, mean, bound);
	cr_assert(fabs(var / (bound * bound / 3) - 1) < 0.02, "%s: variance %g, a uniform's is %g", what, var,
		  bound * bound / 3);
}

/* PyG's initializations (torch_geometric 2.5): SAGEConv's lin_l / lin_r are Linears drawn
 * kaiming_uniform(fan = in, a = sqrt(5)) -- bound gain sqrt(3 / fan), gain sqrt(2 / (1 + a^2))
 * -- with lin_l's bias uniform(+-1 / sqrt(in)); GCNConv and GATConv draw Glorot-uniform
 * weights, bound sqrt(6 / (in + out)), and a zero bias. */
Test(train_ops, layers_initialize_as_pyg)
{
	const int64_t in = 1000, out = 64, n = in * out;
	const double a = sqrt(5.0), kaiming = sqrt(2.0 / (1 + a * a)) * sqrt(3.0 / (double)in);
	const double glorot = sqrt(6.0 / (double)(in + out));
	const bw_layer_kind kinds[] = {BW_LAYER_SAGE, BW_LAYER_GCN, BW_LAYER_GAT};
	for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
		const bw_layer_shape s = {.kind = kinds[k], .in = in, .out = out, .heads = 1, .concat = true};
		const int64_t np = bw_layer_shape_params(&s);
		float *p = malloc((size_t)np * sizeof *p), *gp = calloc((size_t)np, sizeof *gp);
		bw_layer l;
		bw_layer_bind_shape(&l, &s, p, gp);
		cr_assert_eq(bw_layer_init(&l, NULL, 77), 0, "%s", burrow_last_error());
		if (kinds[k] == BW_LAYER_SAGE) {
			assert_uniform(l.w, n, kaiming, "sage W");
			assert_uniform(l.w_neigh, n, kaiming, "sage W_neigh");
			cr_assert(memcmp(l.w, l.w_neigh, (size_t)n * sizeof *p), "W and W_neigh drew the same values");
			double top = 0;
			for (int64_t j = 0; j < out; j++) {
				cr_assert(fabs(l.b[j]) <= 1 / sqrt((double)in), "sage bias[%lld] = %g", (long long)j, l.b[j]);
				top = fmax(top, fabs(l.b[j]));
			}
			cr_assert(top > 0.5 / sqrt((double)in), "sage bias: largest |b| %g", top);
		} else {
			assert_uniform(l.w, n, glorot, kinds[k] == BW_LAYER_GCN ? "gcn W" : "gat W");
			for (int64_t j = 0; j < out; j++)
				cr_assert_eq(l.b[j], 0.0f, "kind %d bias[%lld] = %g", kinds[k], (long long)j, l.b[j]);
		}
		bw_layer_release(&l);
		free(p);
		free(gp);
	}
}

Test(train_grad, linear) { check_layer(BW_LAYER_LINEAR, 6, 4, 100); }
Test(train_grad, sage_aggregate_first) { check_layer(BW_LAYER_SAGE, 4, 6, 200); }
Test(train_grad, sage_project_first) { check_layer(BW_LAYER_SAGE, 7, 3, 300); }
Test(train_grad, gcn_aggregate_first) { check_layer(BW_LAYER_GCN, 4, 6, 400); }
Test(train_grad, gcn_project_first) { check_layer(BW_LAYER_GCN, 7, 3, 500); }
Test(train_grad, sage_sum_both_orders)
{
	bw_layer_shape s = {.kind = BW_LAYER_SAGE, .in = 4, .out = 6, .aggr = BURROW_AGGR_SUM};
	check_shape(&s, 600, 0);
	s.in = 7;
	s.out = 3;
	check_shape(&s, 610, 0);
}
Test(train_grad, sage_max_both_shapes)
{
	bw_layer_shape s = {.kind = BW_LAYER_SAGE, .in = 4, .out = 6, .aggr = BURROW_AGGR_MAX};
	check_shape(&s, 700, 0);
	s.in = 7;
	s.out = 3; /* wider input: max cannot project first */
	check_shape(&s, 710, 0);
}
Test(train_grad, gat_concat_heads) { check_shape(&(bw_layer_shape){.kind = BW_LAYER_GAT, .in = 5, .out = 6, .heads = 3, .concat = true}, 800, 0); }
Test(train_grad, gat_mean_heads) { check_shape(&(bw_layer_shape){.kind = BW_LAYER_GAT, .in = 6, .out = 4, .heads = 2, .concat = false}, 900, 0); }
Test(train_grad, gat_attention_dropout) { check_shape(&(bw_layer_shape){.kind = BW_LAYER_GAT, .in = 5, .out = 4, .heads = 2, .concat = true}, 1000, 0.4f); }
/* Edge features in the attention (W_e, a_edge, the inputs; the self loops' mean term) */
Test(train_grad, gat_edge_features_concat_heads)
{
	check_shape(&(bw_layer_shape){.kind = BW_LAYER_GAT, .in = 5, .out = 6, .heads = 3, .concat = true, .edge_dim = 4}, 1100, 0);
}
Test(train_grad, gat_edge_features_mean_heads)
{
	check_shape(&(bw_layer_shape){.kind = BW_LAYER_GAT, .in = 6, .out = 4, .heads = 2, .concat = false, .edge_dim = 3}, 1200, 0);
}
Test(train_grad, gat_edge_features_attention_dropout)
{
	check_shape(&(bw_layer_shape){.kind = BW_LAYER_GAT, .in = 5, .out = 4, .heads = 2, .concat = true, .edge_dim = 2}, 1300, 0.4f);
}

/* A 2-layer model in double: layer, ReLU, the model's own dropout mask, layer, mean NLL. */
static double ref_model_loss(const bw_model *m, const double *p, const bw_batch *b, const double *x)
{
	const bw_model_cfg *cfg = &m->cfg;
	const double *in = x;
	double *h = NULL, loss = 0;
	int64_t off = 0;
	for (int l = 0; l < cfg->layers; l++) {
		int64_t din, dout;
		bw_model_layer_dims(cfg, l, &din, &dout);
		const int64_t nd = b->blocks[l]->num_dst;
		double *z = malloc((size_t)(nd * dout) * sizeof *z);
		const bw_layer_shape ls = bw_model_layer_shape(cfg, l);
		const bw_layer *ly = &m->layer[l];
		ref_layer_shape(&ls, p + off, b->blocks[l], in, z, ly->attn_dropped ? ly->attn_mask.ptr : NULL, ly->attn_p);
		off += bw_layer_shape_params(&ls);
		if (l + 1 < cfg->layers && cfg->norm != BURROW_NORM_NONE) {
			/* normalize (batch: each column over the rows, in training; layer: each row), scale, shift */
			const double *gamma = p + off, *beta = p + off + dout;
			off += 2 * dout;
			const bool batch = cfg->norm == BURROW_NORM_BATCH;
			const int64_t groups = batch ? dout : nd, len = batch ? nd : dout;
			for (int64_t q = 0; q < groups; q++) {
				double mu = 0, var = 0;
				for (int64_t t = 0; t < len; t++)
					mu += z[batch ? t * dout + q : q * dout + t] / (double)len;
				for (int64_t t = 0; t < len; t++) {
					const double d = z[batch ? t * dout + q : q * dout + t] - mu;
					var += d * d / (double)len;
				}
				for (int64_t t = 0; t < len; t++) {
					const int64_t i = batch ? t * dout + q : q * dout + t;
					z[i] = (z[i] - mu) / sqrt(var + BW_NORM_EPS) * gamma[i % dout] + beta[i % dout];
				}
			}
		}
		if (l + 1 < cfg->layers)
			for (int64_t i = 0; i < nd * dout; i++) {
				z[i] = z[i] > 0 ? z[i] : 0;
				if (m->dropout_on)
					z[i] = ((const uint8_t *)m->mask[l].ptr)[i] ? z[i] / (1.0 - cfg->dropout) : 0;
				if (cfg->residual && din == dout) /* the destinations' own input rows */
					z[i] += in[i];
			}
		free(h);
		h = z;
		in = h;
	}
	int64_t cnt = 0;
	for (int64_t k = 0; k < b->num_loss_rows; k++)
		cnt += b->labels[b->loss_rows[k]] >= 0;
	for (int64_t k = 0; k < b->num_loss_rows; k++) {
		const int64_t i = b->loss_rows[k];
		if (b->labels[i] < 0)
			continue;
		double se = 0;
		for (int64_t c = 0; c < cfg->classes; c++)
			se += exp(h[i * cfg->classes + c]);
		loss += (log(se) - h[i * cfg->classes + b->labels[i]]) / (double)cnt;
	}
	free(h);
	return loss;
}

/* A sampler-shaped batch (2 blocks, 14 -> 8 -> 5 nodes) through a whole 2-layer model with
 * dropout: the model's gradients against finite differences of the double reference. */
static void check_model_cfg(const bw_model_cfg *cfgp)
{
	bw_backend be = backend(2);
	const bw_model_cfg cfg = *cfgp;
	const int kind = cfg.kind;
	bw_model *m;
	cr_assert_eq(bw_model_open(&m, NULL, &cfg, 7), 0, "%s", burrow_last_error());
	/* attention dropout can drop every slot of a head: with a zero bias the output is then
	 * exactly 0, ReLU's kink, where finite differences and the analytic gradient part */
	for (int l = 0; kind == BURROW_MODEL_GAT && l < cfg.layers; l++)
		fill_uniform(m->layer[l].b, m->layer[l].out, 80 + (uint64_t)l, -0.5, 0.5);
	tblock b0, b1;
	make_block(&b0, 8, 14, 4, 71);
	make_block(&b1, 5, 8, 4, 72);
	bw_tensor x;
	bw_tensor_alloc(&x, NULL, 14, cfg.in_dim);
	fill_uniform(x.data, 14 * cfg.in_dim, 73, -1, 1);
	const int32_t labels[5] = {0, 2, 1, -1, 2};
	const int64_t rows[4] = {0, 1, 3, 4};
	bw_batch b = {.num_blocks = 2, .blocks = {&b0.b, &b1.b}, .x = x, .labels = labels, .loss_rows = rows,
		      .num_loss_rows = 4, .epoch = 3, .index = 9};
	const bw_tensor *logits;
	cr_assert_eq(bw_model_forward(&be, m, &b, true, 11, &logits), 0, "%s", burrow_last_error());
	cr_assert(m->dropout_on);
	bw_tensor g = {0};
	bw_loss ld, ls;
	cr_assert_eq(bw_tensor_reshape(&g, NULL, logits->rows, logits->cols), 0);
	cr_assert_eq(bw_nll_loss(&be, logits, labels, rows, 4, &g, &ld), 0);
	cr_assert_eq(bw_loss_read(&be, &ld, &ls), 0);
	const double loss = ls.loss;
	cr_assert_eq(ls.counted, 3);
	bw_tensor gx = {0}; /* the input rows' gradient too: learned embeddings read it */
	cr_assert_eq(bw_model_backward_input(&be, m, &b, &g, &gx), 0, "%s", burrow_last_error());
	cr_assert_eq(gx.rows, 14);
	cr_assert_eq(gx.cols, cfg.in_dim);
	double *pd = to_double(m->params, m->num_params), *xd = to_double(x.data, 14 * cfg.in_dim);
	cr_assert(close_to(loss, ref_model_loss(m, pd, &b, xd), KTOL));
	for (int64_t k = 0; k < 14 * cfg.in_dim; k++) {
		const double save = xd[k];
		xd[k] = save + FD_STEP;
		const double lp = ref_model_loss(m, pd, &b, xd);
		xd[k] = save - FD_STEP;
		const double lm = ref_model_loss(m, pd, &b, xd);
		xd[k] = save;
		const double num = (lp - lm) / (2 * FD_STEP);
		cr_assert(close_to(gx.data[k], num, GTOL), "model %d: dx[%lld] %g vs numeric %g", kind, (long long)k,
			  gx.data[k], num);
	}
	bw_tensor_free(&gx);
	for (int64_t k = 0; k < m->num_params; k++) {
		const double save = pd[k];
		pd[k] = save + FD_STEP;
		const double lp = ref_model_loss(m, pd, &b, xd);
		pd[k] = save - FD_STEP;
		const double lm = ref_model_loss(m, pd, &b, xd);
		pd[k] = save;
		const double num = (lp - lm) / (2 * FD_STEP);
		cr_assert(close_to(m->grads[k], num, GTOL), "model %d: dparam[%lld] %g vs numeric %g", kind, (long long)k,
			  m->grads[k], num);
	}
	free(pd);
	free(xd);
	bw_tensor_free(&g);
	bw_tensor_free(&x);
	free_block(&b0);
	free_block(&b1);
	bw_model_close(m);
}

static void check_model(int kind)
{
	const bw_model_cfg cfg = {.kind = kind, .layers = 2, .in_dim = 6, .hidden = 5, .classes = 3, .dropout = 0.3f};
	check_model_cfg(&cfg);
}

Test(train_grad, whole_sage_max_and_sum_models)
{
	bw_model_cfg cfg = {.kind = BURROW_MODEL_SAGE, .layers = 2, .in_dim = 6, .hidden = 5, .classes = 3, .dropout = 0.3f,
			    .aggr = BURROW_AGGR_MAX};
	check_model_cfg(&cfg);
	cfg.aggr = BURROW_AGGR_SUM;
	check_model_cfg(&cfg);
}
/* two heads concatenated, then two averaged; feature and attention dropout on */
Test(train_grad, whole_gat_model)
{
	const bw_model_cfg cfg = {.kind = BURROW_MODEL_GAT, .layers = 2, .in_dim = 6, .hidden = 4, .classes = 3,
				  .dropout = 0.3f, .heads = 2, .attn_dropout = 0.3f};
	check_model_cfg(&cfg);
}
/* layer norm, batch norm (the batch's statistics in training) and residuals: the features as
 * wide as the hidden layer, so the first layer adds its input */
Test(train_grad, whole_models_with_norms_and_residuals)
{
	for (int norm = BURROW_NORM_NONE; norm <= BURROW_NORM_LAYER; norm++)
		for (int kind = BURROW_MODEL_SAGE; kind <= BURROW_MODEL_GAT; kind++) {
			const bw_model_cfg cfg = {.kind = kind, .layers = 2, .in_dim = 4, .hidden = 4, .classes = 3,
						  .dropout = 0.3f, .heads = 2, .norm = norm, .residual = true};
			check_model_cfg(&cfg);
		}
}
Test(train_grad, whole_sage_model) { check_model(BURROW_MODEL_SAGE); }
Test(train_grad, whole_gcn_model) { check_model(BURROW_MODEL_GCN); }
Test(train_grad, whole_mlp_model) { check_model(BURROW_MODEL_MLP); }

/* ------------------------------------------------------------ training runs */

/* A CSBM whose features alone say little (two classes' means about signal * sqrt(2) = 0.85
 * noise deviations apart) while 90% of edges join nodes of one class. */
static burrow_train_opts small_opts(int model)
{
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.full_graph = true;
	o.model = model;
	o.layers = 2;
	o.hidden = 32;
	o.dropout = 0.2;
	o.lr = 0.01;
	o.threads = 1;
	return o;
}

static double train_test_acc(burrow_dataset *ds, int model, int epochs)
{
	burrow_train_opts o = small_opts(model);
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	for (int e = 0; e < epochs; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		cr_assert(ev.valid_acc >= 0 && ev.valid_acc <= 1);
	}
	const burrow_best b = burrow_trainer_best(t);
	burrow_trainer_close(t);
	return b.test_acc;
}

/* Nearest class mean (means from the training rows): what the features alone give. */
static double centroid_test_acc(burrow_dataset *ds)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const int64_t d = in->feat_dim, C = in->num_classes;
	size_t len;
	char *raw = tu_read(burrow_dataset_features_path(ds), &len);
	const float *x = (const float *)(raw + burrow_dataset_features_offset(ds));
	const int32_t *y = burrow_dataset_labels(ds);
	double *mu = calloc((size_t)(C * d), sizeof *mu), *cnt = calloc((size_t)C, sizeof *cnt);
	int64_t ntr, nte, ok = 0;
	const int64_t *tr = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &ntr), *te = burrow_dataset_split(ds, BURROW_SPLIT_TEST, &nte);
	for (int64_t k = 0; k < ntr; k++) {
		cnt[y[tr[k]]]++;
		for (int64_t j = 0; j < d; j++)
			mu[y[tr[k]] * d + j] += x[tr[k] * d + j];
	}
	for (int64_t c = 0; c < C; c++)
		for (int64_t j = 0; j < d; j++)
			mu[c * d + j] /= cnt[c] > 0 ? cnt[c] : 1;
	for (int64_t k = 0; k < nte; k++) {
		int64_t best = 0;
		double bd = INFINITY;
		for (int64_t c = 0; c < C; c++) {
			double s = 0;
			for (int64_t j = 0; j < d; j++)
				s += (x[te[k] * d + j] - mu[c * d + j]) * (x[te[k] * d + j] - mu[c * d + j]);
			if (s < bd) {
				bd = s;
				best = c;
			}
		}
		ok += best == y[te[k]];
	}
	free(mu);
	free(cnt);
	free(raw);
	return (double)ok / (double)nte;
}

Test(train_run, graph_models_beat_what_features_alone_reach)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const double centroid = centroid_test_acc(ds);
	const double mlp = train_test_acc(ds, BURROW_MODEL_MLP, 30);
	const double sage = train_test_acc(ds, BURROW_MODEL_SAGE, 30);
	const double gcn = train_test_acc(ds, BURROW_MODEL_GCN, 30);
	const double floor = BW_MAX(centroid, mlp) + 0.2;
	cr_log_info("nearest-mean %.3f, mlp %.3f, sage %.3f, gcn %.3f (floor %.3f)", centroid, mlp, sage, gcn, floor);
	cr_assert(mlp < 0.6, "features are meant to be weak: mlp reached %.3f", mlp);
	cr_assert(sage >= floor, "sage %.3f below the floor %.3f (features alone: mlp %.3f, nearest mean %.3f)", sage,
		  floor, mlp, centroid);
	cr_assert(gcn >= floor, "gcn %.3f below the floor %.3f", gcn, floor);
	burrow_dataset_close(ds);
	free(d);
}

/* Layer-wise chunked inference equals one eval-mode forward over the whole graph, and
 * spilling the hidden layers to scratch files changes no bit. */
Test(train_run, layerwise_inference_equals_full_forward_and_spill_changes_nothing)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const int64_t n = burrow_dataset_get_info(ds)->num_nodes, C = burrow_dataset_get_info(ds)->num_classes;
	for (int model = BURROW_MODEL_SAGE; model <= BURROW_MODEL_GAT + 3; model++) {
		/* then sage-max with batch norm and residuals, sage-sum with layer norm */
		burrow_train_opts o = small_opts(model <= BURROW_MODEL_GAT ? model : BURROW_MODEL_SAGE);
		o.layers = 3;
		o.eval_chunk = 300; /* many chunks */
		o.aggr = model == BURROW_MODEL_GAT + 1 ? BURROW_AGGR_MAX : model == BURROW_MODEL_GAT + 2 ? BURROW_AGGR_SUM
														  : BURROW_AGGR_MEAN;
		o.norm = model == BURROW_MODEL_GAT + 1 ? BURROW_NORM_BATCH : model == BURROW_MODEL_GAT + 2 ? BURROW_NORM_LAYER
														   : BURROW_NORM_NONE;
		o.residual = model > BURROW_MODEL_GAT;
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		burrow_epoch_stats es = {.size = sizeof es};
		for (int e = 0; e < 3; e++)
			cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		tu_grab a = {.z = malloc((size_t)(n * C) * sizeof(float)), .cols = C};
		tu_grab b = {.z = malloc((size_t)(n * C) * sizeof(float)), .cols = C};
		int64_t spilled;
		cr_assert_eq(bw_trainer_infer(t, tu_grab_sink, &a, &spilled), 0, "%s", burrow_last_error());
		cr_assert_eq(spilled, 0);
		t->o.mem_bytes = 1024; /* far below one layer: every hidden layer spills */
		char *scratch = tu_path(dir, "scratch");
		tu_sh(NULL, NULL, "mkdir -p '%s'", scratch);
		t->scratch_dir = bw_strdup(scratch);
		cr_assert_eq(bw_trainer_infer(t, tu_grab_sink, &b, &spilled), 0, "%s", burrow_last_error());
		cr_assert_eq(spilled, 2 * n * o.hidden * (int64_t)sizeof(float));
		cr_assert(memcmp(a.z, b.z, (size_t)(n * C) * sizeof(float)) == 0, "spilling changed the outputs");
		char *ls = NULL;
		tu_sh(&ls, NULL, "ls -A '%s'", scratch);
		cr_assert_str_empty(ls, "scratch files left behind: %s", ls);
		free(ls);
		free(scratch);
		/* the reference: the full graph as one block, eval mode */
		bw_batch fb = {.num_blocks = 3, .x = t->feat};
		for (int l = 0; l < 3; l++)
			fb.blocks[l] = &t->full;
		const bw_tensor *logits;
		cr_assert_eq(bw_model_forward(&t->be, t->model, &fb, false, 0, &logits), 0, "%s", burrow_last_error());
		for (int64_t i = 0; i < n * C; i++)
			cr_assert(close_to(a.z[i], logits->data[i], KTOL), "model %d [%lld]: %g vs %g", model, (long long)i,
				  a.z[i], logits->data[i]);
		free(a.z);
		free(b.z);
		burrow_trainer_close(t);
	}
	burrow_dataset_close(ds);
	free(d);
}


/* Epochs of one trainer with layer 0's reuse (reuse_layer0) on or off, evaluating after the
 * epochs eval_mask marks and taking the best epoch's weights back once: every epoch's loss
 * and accuracies, each evaluation's, and the final weights. With reuse on and a model that
 * allows it, each evaluation keeps layer 0's output under the weights' version and the
 * next epoch takes that very buffer; use_best drops it. */
typedef struct reuse_run {
	double loss[8], acc[8], valid[8];
	uint64_t weights;
	int taken;
} reuse_run;

static reuse_run run_reuse(burrow_dataset *ds, const burrow_train_opts *o, bool reuse, unsigned eval_mask)
{
	reuse_run r = {0};
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	t->reuse_layer0 = reuse;
	const bool able = bw_model_memo_able(t->model);
	for (int e = 0; e < 8; e++) {
		const float *kept = t->model->memo_key ? t->model->memo.data : NULL;
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		r.loss[e] = es.loss;
		r.acc[e] = es.train_acc;
		if (kept) {
			cr_assert_eq(t->model->h[0].data, kept, "epoch %d did not take what evaluation kept", e + 1);
			r.taken++;
		}
		cr_assert_eq(t->model->memo_key, 0, "a memo outlived the step that took or passed it");
		if (!(eval_mask >> e & 1))
			continue;
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		r.valid[e] = ev.valid_acc;
		cr_assert_eq(t->model->memo_key, reuse && able ? t->wversion : 0);
		if (e == 4) { /* other weights under the same step count: what was kept must go */
			cr_assert_eq(burrow_trainer_use_best(t), 0, "%s", burrow_last_error());
			cr_assert_eq(t->model->memo_key, 0);
		}
	}
	r.weights = burrow_trainer_weights_checksum(t);
	burrow_trainer_close(t);
	return r;
}

/* Layer 0's output kept by a full-graph evaluation and taken by the next training step
 * changes no bit of training: losses, accuracies and final weights equal those of the run
 * that computes it, for each model, with normalizations, residuals, sparse features and
 * evaluations that skip epochs (whose stale outputs must not be taken). GAT keeps nothing. */
Test(train_run, reusing_evaluations_first_layer_changes_no_bit)
{
	char *d = tu_weak_csbm(dir, 1500, 40);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	for (int c = 0; c < 7; c++) {
		static const int kinds[] = {BURROW_MODEL_SAGE, BURROW_MODEL_GCN, BURROW_MODEL_MLP, BURROW_MODEL_SAGE,
					    BURROW_MODEL_GCN, BURROW_MODEL_SAGE, BURROW_MODEL_GAT};
		burrow_train_opts o = small_opts(kinds[c]);
		o.hidden = 24; /* narrower than the input: sage and gcn project first */
		o.threads = 2;
		if (c == 3) { /* max, batch norm and residuals, aggregating before projecting */
			o.layers = 3;
			o.hidden = 48;
			o.aggr = BURROW_AGGR_MAX;
			o.norm = BURROW_NORM_BATCH;
			o.residual = true;
		}
		if (c == 4)
			o.norm = BURROW_NORM_LAYER;
		if (c == 5)
			o.sparse_input = BURROW_SPARSE_ON;
		if (c == 6) {
			o.heads = 2;
			o.attn_dropout = 0.3;
		}
		const unsigned mask = 0xb7; /* epochs 1-3, 5, 6 and 8: 4 and 7 pass without one */
		const reuse_run a = run_reuse(ds, &o, false, mask), b = run_reuse(ds, &o, true, mask);
		cr_assert_eq(a.taken, 0);
		cr_assert_eq(b.taken, kinds[c] == BURROW_MODEL_GAT ? 0 : 4, "case %d: %d epochs took it", c, b.taken);
		for (int e = 0; e < 8; e++) {
			cr_assert(memcmp(&a.loss[e], &b.loss[e], sizeof a.loss[e]) == 0, "case %d epoch %d: loss %.17g vs %.17g",
				  c, e + 1, a.loss[e], b.loss[e]);
			cr_assert_eq(a.acc[e], b.acc[e], "case %d epoch %d", c, e + 1);
			cr_assert_eq(a.valid[e], b.valid[e], "case %d epoch %d", c, e + 1);
		}
		cr_assert_eq(a.weights, b.weights, "case %d: the final weights differ", c);
		cr_assert_neq(a.weights, 0);
	}
	burrow_dataset_close(ds);
	free(d);
}

/* Sparse features (opts.sparse_input): auto leaves dense CSBM features dense; on Cora (1.3%
 * non-zero) it multiplies them sparse, and training reaches the dense run's accuracy: the
 * first loss agrees to float rounding (the same initial weights, the same sums in another
 * order) and the best test accuracy within noise. */
Test(train_run, sparse_features_train_as_the_dense_ones, .timeout = 300)
{
	char *d = tu_weak_csbm(dir, 500, 16);
	burrow_dataset *ds;
	burrow_trainer *t;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	burrow_train_opts o = small_opts(BURROW_MODEL_GCN);
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	cr_assert_null(t->feat.sp, "auto made Gaussian features sparse");
	burrow_trainer_close(t);
	o.sparse_input = 7;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	burrow_dataset_close(ds);
	free(d);

	const char *shared = tu_datasets();
	char *zip = shared ? tu_path(shared, "ogbn-cora.zip") : NULL;
	if (!zip || !tu_exists(zip)) {
		free(zip);
		cr_skip_test("../shared/datasets/ogbn-cora.zip is absent (BURROW_DATASETS)");
	}
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "%s prep ogbn-cora --root '%s' --url 'file://%s' --quiet", tu_burrow(), dir, zip);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	char *cora = tu_path(dir, "ogbn-cora");
	cr_assert_eq(burrow_dataset_open(&ds, cora), 0, "%s", burrow_last_error());
	double first[2], best[2];
	for (int sparse = 0; sparse < 2; sparse++) {
		o = small_opts(BURROW_MODEL_GCN);
		o.hidden = 64;
		o.dropout = 0.5;
		o.weight_decay = 5e-4;
		o.threads = 2;
		o.sparse_input = sparse ? BURROW_SPARSE_AUTO : BURROW_SPARSE_OFF;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(t->feat.sp != NULL, sparse, "sparse input %d", sparse);
		if (sparse)
			cr_assert_eq(t->feat_sp.nnz, bw_count_nonzero(t->feat_buf, t->feat.rows * t->feat.cols, 1));
		for (int e = 0; e < 60; e++) {
			burrow_epoch_stats es = {.size = sizeof es};
			burrow_eval_stats ev = {.size = sizeof ev};
			cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
			cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
			if (e == 0)
				first[sparse] = es.loss;
		}
		best[sparse] = burrow_trainer_best(t).test_acc;
		burrow_trainer_close(t);
	}
	cr_log_info("cora gcn: first loss %.7f dense, %.7f sparse; best test %.3f dense, %.3f sparse", first[0], first[1],
		    best[0], best[1]);
	cr_assert(close_to(first[1], first[0], 1e-5), "first loss %.9g sparse, %.9g dense", first[1], first[0]);
	cr_assert(best[0] > 0.75 && best[1] > 0.75, "dense %.3f, sparse %.3f", best[0], best[1]);
	cr_assert(fabs(best[1] - best[0]) <= 0.02, "dense %.3f, sparse %.3f", best[0], best[1]);
	burrow_dataset_close(ds);
	free(cora);
	free(zip);
}

/* Cora prepared from the shared datasets into dir (caller frees), or NULL when absent. */
static char *prep_cora(void)
{
	const char *shared = tu_datasets();
	char *zip = shared ? tu_path(shared, "ogbn-cora.zip") : NULL;
	if (!zip || !tu_exists(zip)) {
		free(zip);
		return NULL;
	}
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "%s prep ogbn-cora --root '%s' --url 'file://%s' --quiet", tu_burrow(), dir, zip);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	free(zip);
	return tu_path(dir, "ogbn-cora");
}

enum { SAME_BITS_EPOCHS = 4 };
typedef struct bits_run {
	double loss[SAME_BITS_EPOCHS], valid[SAME_BITS_EPOCHS];
	uint64_t weights;
} bits_run;

/* Epochs of one trainer; vary: each epoch at another thread count (3, 1, 2, 3, ...), as the
 * automatic count may switch between epochs (autothreads.c). */
static bits_run run_bits(burrow_dataset *ds, const burrow_train_opts *o, bool vary)
{
	bits_run r = {0};
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	for (int e = 0; e < SAME_BITS_EPOCHS; e++) {
		if (vary)
			t->be.threads = t->be.gemm_threads = (e + 2) % 3 + 1;
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		r.loss[e] = es.loss;
		r.valid[e] = ev.valid_acc;
	}
	r.weights = burrow_trainer_weights_checksum(t);
	burrow_trainer_close(t);
	return r;
}

/* cora's dataset, with OMP_DYNAMIC=false: every epoch at the count asked, never the faster one
 * (autothreads.c); the caller unsets it. */
static burrow_dataset *open_pinned(const char *cora)
{
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, cora), 0, "%s", burrow_last_error());
	setenv("OMP_DYNAMIC", "false", 1);
	return ds;
}

/* o's run at 2 and 3 threads and at a count varied per epoch against its run at 1 thread:
 * every epoch's loss bytes, valid accuracy and the final weights; `what` names the case. */
static void same_bits_at_1_2_3(burrow_dataset *ds, burrow_train_opts *o, const char *what)
{
	bits_run one = {0};
	for (int threads = 1; threads <= 4; threads++) { /* 4: 3 threads, varied per epoch */
		o->threads = BW_MIN(threads, 3);
		const bits_run r = run_bits(ds, o, threads == 4);
		if (threads == 1) {
			one = r;
			continue;
		}
		for (int e = 0; e < SAME_BITS_EPOCHS; e++) {
			cr_assert(memcmp(&r.loss[e], &one.loss[e], sizeof r.loss[e]) == 0,
				  "%s, %d threads, epoch %d: loss %.17g, 1 thread %.17g", what, threads, e + 1, r.loss[e],
				  one.loss[e]);
			cr_assert_eq(r.valid[e], one.valid[e], "%s, %d threads, epoch %d", what, threads, e + 1);
		}
		cr_assert_eq(r.weights, one.weights, "%s, %d threads: the final weights differ", what, threads);
	}
}

/* Same seed, same bits, whatever the threads (issue 35 item 7): full-graph GCN and SAGE on
 * Cora, its features sparse (auto) and dense, through the CPU's own GEMM and through
 * OpenBLAS alone (BURROW_CPU_GEMM=blas: the products OpenBLAS does are split in chunks fixed
 * by the shape, the loss summed per chunk in chunk order), at 1, 2 and 3 threads and at a
 * count that changes every epoch: every epoch's loss bytes, valid accuracy and the final
 * weights equal the 1-thread run's. */
Test(train_run, full_graph_cora_same_bits_at_1_2_3_threads, .timeout = 600)
{
	char *cora = prep_cora();
	if (!cora)
		cr_skip_test("../shared/datasets/ogbn-cora.zip is absent (BURROW_DATASETS)");
	burrow_dataset *ds = open_pinned(cora);
	static const int models[] = {BURROW_MODEL_GCN, BURROW_MODEL_SAGE};
	for (int c = 0; c < 8; c++) {
		const int model = models[c & 1], sparse = c >> 1 & 1, blas = c >> 2;
		if (blas)
			setenv("BURROW_CPU_GEMM", "blas", 1);
		else
			unsetenv("BURROW_CPU_GEMM");
		burrow_train_opts o = small_opts(model);
		o.hidden = 256;
		o.dropout = 0.5;
		o.weight_decay = 5e-4;
		o.sparse_input = sparse ? BURROW_SPARSE_AUTO : BURROW_SPARSE_OFF;
		char what[64];
		snprintf(what, sizeof what, "case %d (model %d, sparse %d, blas %d)", c, model, sparse, blas);
		same_bits_at_1_2_3(ds, &o, what);
	}
	unsetenv("BURROW_CPU_GEMM");
	unsetenv("OMP_DYNAMIC");
	burrow_dataset_close(ds);
	free(cora);
}

/* The same for the max aggregator and GAT, whose backward scatters go by column groups and
 * heads taken dynamically (issue 35 item 7): full-graph SAGE --aggr max (features sparse and
 * dense) and GAT (4 heads, attention dropout) on Cora at 1, 2 and 3 threads and at a count
 * that changes every epoch: every epoch's loss bytes, valid accuracy, the final weights. */
Test(train_run, full_graph_cora_gat_and_sage_max_same_bits_at_1_2_3_threads, .timeout = 300)
{
	char *cora = prep_cora();
	if (!cora)
		cr_skip_test("../shared/datasets/ogbn-cora.zip is absent (BURROW_DATASETS)");
	burrow_dataset *ds = open_pinned(cora);
	for (int c = 0; c < 3; c++) { /* SAGE max sparse, SAGE max dense, GAT */
		burrow_train_opts o = small_opts(c < 2 ? BURROW_MODEL_SAGE : BURROW_MODEL_GAT);
		o.aggr = BURROW_AGGR_MAX;
		o.hidden = c < 2 ? 64 : 32;
		o.heads = 4;
		o.attn_dropout = 0.2;
		o.dropout = 0.5;
		o.sparse_input = c == 1 ? BURROW_SPARSE_OFF : BURROW_SPARSE_AUTO;
		char what[64];
		snprintf(what, sizeof what, "case %d (%s)", c, c < 2 ? "sage max" : "gat");
		same_bits_at_1_2_3(ds, &o, what);
	}
	unsetenv("OMP_DYNAMIC");
	burrow_dataset_close(ds);
	free(cora);
}

/* The thread count each epoch ran is in --log's epoch lines ("threads"): a full-graph run at
 * --threads 2 runs epochs 1 and 2 at 2 and probes epoch 3 at one (autothreads.c), whichever
 * count is faster; with OMP_DYNAMIC=false every epoch runs at 2. Both runs' losses alike. */
Test(train_run, full_graph_log_says_each_epochs_threads)
{
	char *cora = prep_cora();
	if (!cora)
		cr_skip_test("../shared/datasets/ogbn-cora.zip is absent (BURROW_DATASETS)");
	char *log[2] = {tu_path(dir, "dyn.jsonl"), tu_path(dir, "pinned.jsonl")};
	for (int pinned = 0; pinned < 2; pinned++) {
		char *err = NULL;
		const int rc = tu_sh(NULL, &err, "%s %s train %s --full-graph --model gcn --hidden 16 --epochs 4 "
					       "--eval-every 0 --threads 2 --quiet --log %s",
				     pinned ? "env OMP_DYNAMIC=false" : "env -u OMP_DYNAMIC", tu_burrow(), cora, log[pinned]);
		cr_assert_eq(rc, 0, "%s", err);
		free(err);
	}
	char *text[2];
	for (int k = 0; k < 2; k++)
		cr_assert_not_null(text[k] = tu_read(log[k], NULL));
	for (int e = 1; e <= 4; e++) {
		char key[32];
		snprintf(key, sizeof key, "{\"epoch\": %d,", e);
		int threads[2];
		double loss[2];
		for (int k = 0; k < 2; k++) {
			const char *line = strstr(text[k], key), *th = line ? strstr(line, "\"threads\": ") : NULL;
			const char *end = line ? strchr(line, '\n') : NULL;
			cr_assert(th && th < end, "%s: epoch %d has no \"threads\"", log[k], e);
			threads[k] = atoi(th + strlen("\"threads\": "));
			loss[k] = strtod(strstr(line, "\"loss\": ") + strlen("\"loss\": "), NULL);
		}
		cr_assert_eq(threads[1], 2, "pinned: epoch %d ran at %d threads", e, threads[1]);
		if (e == 3)
			cr_assert_eq(threads[0], 1, "the probe (epoch 3) ran at %d threads", threads[0]);
		else if (e < 3)
			cr_assert_eq(threads[0], 2, "epoch %d ran at %d threads", e, threads[0]);
		else
			cr_assert(threads[0] == 1 || threads[0] == 2, "epoch %d ran at %d threads", e, threads[0]);
		cr_assert(memcmp(&loss[0], &loss[1], sizeof loss[0]) == 0, "epoch %d: loss %.17g vs %.17g", e, loss[0],
			  loss[1]);
	}
	for (int k = 0; k < 2; k++) {
		free(text[k]);
		free(log[k]);
	}
	free(cora);
}

/* The automatic thread count (autothreads.c) on made-up epoch times: off when OMP_DYNAMIC=false
 * pins the count or one thread is asked; else the count asked until the first probe at one thread (epoch 3), the faster count
 * after each probe, probes twice as far apart when they confirm the choice, back to 8 epochs
 * when they change it, at once when the running count gets slower than the other's mean,
 * and each epoch's count set on the backend, GEMM threads never above their opened count. */
Test(train_ops, auto_threads_follows_the_faster_count)
{
	bw_backend be = {.kind = BW_BACKEND_CPU, .threads = 4, .gemm_threads = 1};
	bw_auto_threads a;
	setenv("OMP_DYNAMIC", "False", 1);
	bw_auto_threads_init(&a, &be);
	cr_assert_eq(bw_auto_threads_next(&a), 0, "OMP_DYNAMIC=false pins the count asked");
	unsetenv("OMP_DYNAMIC");
	be.threads = 1;
	bw_auto_threads_init(&a, &be);
	cr_assert_eq(bw_auto_threads_next(&a), 0, "one thread asked: nothing to choose");
	be.threads = 4; /* asked: --threads 4, OMP_NUM_THREADS=4 or 4 cores alike */
	setenv("OMP_DYNAMIC", "true", 1);
	bw_auto_threads_init(&a, &be);
	unsetenv("OMP_DYNAMIC");
	/* quiet until epoch 20 (4 threads 1 s, one 3 s), then contended (4 threads 5 s, one 3 s) */
	int ran[60];
	for (int e = 0; e < 60; e++) {
		const int n = bw_auto_threads_next(&a);
		bw_auto_threads_set(&a, &be, n);
		cr_assert_eq(be.threads, n);
		cr_assert_eq(be.gemm_threads, 1);
		ran[e] = n;
		bw_auto_threads_done(&a, n, n == 1 ? 3.0 : e < 20 ? 1.0 : 5.0);
	}
	/* probes at 1 thread: epochs 3 (confirms: 16 on), 20 (confirms: 32 on); the load leaves 4
	 * threads no longer clearly faster (AUTO_MARGIN) than one's mean at epoch 21, so epoch 22
	 * probes and switches; probes at 4 threads then: epochs 31 (8 on, confirms), 48 (16 on,
	 * confirms) */
	for (int e = 0; e < 60; e++) {
		const bool one = e == 2 || e == 19 || (e >= 21 && e != 30 && e != 47);
		cr_assert_eq(ran[e], one ? 1 : 4, "epoch %d ran at %d threads", e + 1, ran[e]);
	}
	/* a tie (4 threads 5% faster than one, as two threads beside a busy process measure, give or
	 * take): one thread runs after the first probe and every probe confirms it (planted: a
	 * strict "faster" -> 4 threads run) */
	be.threads = 4; /* the first part left it at what ran last */
	bw_auto_threads_init(&a, &be);
	int at4 = 0, at1 = 0;
	for (int e = 0; e < 60; e++) {
		const int n = bw_auto_threads_next(&a);
		at4 += e >= 3 && n == 4;
		at1 += n == 1;
		bw_auto_threads_done(&a, n, n == 1 ? 1.05 : 1.0);
	}
	cr_assert_leq(at4, 4, "%d of epochs 4-60 ran at 4 threads though they were only 5%% faster", at4);
	cr_assert_geq(at1, 50, "one thread ran %d epochs of 60", at1);
}

/* dir's csbm dataset with all but about 3 in 100 of its features zeroed (bag-of-words-like):
 * features.npy rewritten in place (caller frees the path). */
static char *sparse_csbm(const char *dir, int64_t nodes, int64_t dim)
{
	char *d = tu_weak_csbm(dir, nodes, dim), *f = tu_path(d, "features.npy");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const int64_t off = burrow_dataset_features_offset(ds);
	burrow_dataset_close(ds);
	size_t len;
	char *raw = tu_read(f, &len);
	float *x = (float *)(raw + off);
	bw_rng r;
	bw_rng_seed(&r, 41);
	for (int64_t i = 0; i < nodes * dim; i++)
		if (bw_rng_uniform(&r) >= 0.03)
			x[i] = 0.0f;
	FILE *fp = fopen(f, "wb");
	cr_assert(fp && fwrite(raw, 1, len, fp) == len && fclose(fp) == 0);
	free(raw);
	free(f);
	return d;
}

/* Three mini-batch epochs of o on ds: each epoch's loss and valid accuracy (layer-wise
 * evaluation, or sampled under o.eval_fanout); *sparse whether the first layer multiplied
 * sparse, *unread whether the loader left the batches' dense input rows unread (NULL: not
 * asked); scan: each batch's sparse copy scanned from its dense rows, not gathered from the
 * rows' non-zeros. */
static void minibatch_epochs(burrow_dataset *ds, const burrow_train_opts *o, bool scan, double loss[3],
			     double valid[3], bool *sparse, bool *unread)
{
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	*sparse = t->sparse_rows;
	cr_assert_eq(t->feat_csr.indptr != NULL, t->sparse_rows, "the rows' non-zeros are not held");
	if (scan) /* each batch's copy scanned from its dense rows instead of gathered */
		bw_sparse_free(&t->feat_csr);
	for (int e = 0; e < 3; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		loss[e] = es.loss;
		valid[e] = ev.valid_acc;
		if (e == 0 && unread)
			*unread = bw_trainer_rows_unread(t);
	}
	burrow_trainer_close(t);
}

/* minibatch_epochs of model (sage or gcn; two layers, batch 64) with sparse_input and threads. */
static void minibatch_run(burrow_dataset *ds, int model, int sparse_input, int threads, bool sampled_eval,
			  bool scan, double loss[3], double valid[3], bool *sparse)
{
	burrow_train_opts o = small_opts(model);
	o.full_graph = false;
	o.batch_size = 64;
	o.fanout[0] = 5;
	o.fanout[1] = 5;
	o.sparse_input = sparse_input;
	o.threads = threads;
	if (sampled_eval)
		o.eval_fanout[0] = o.eval_fanout[1] = 4;
	minibatch_epochs(ds, &o, scan, loss, valid, sparse, NULL);
}

/* Mini-batch mode's sparse first layer (opts.sparse_input; each batch's input rows as CSR,
 * layer 0 of evaluation's chunks or batches too): auto picks it for 3% non-zero features
 * and not for dense ones; its losses and accuracies are the dense path's up to float
 * rounding, at 1 and 2 threads, and the same bits from run to run whether each batch's copy
 * is gathered from the rows' non-zeros or scanned from its dense rows, with layer-wise and
 * sampled evaluation, for sage (two weights, the self term through a view of the batch's
 * first rows) and gcn. (1 and 2 threads may differ in the last bits: the dense GEMMs of the
 * later layers split by threads, on main too; the sparse product alone is the same bits at
 * any thread count: ops' sparse tests.) */
Test(train_run, sparse_minibatch_first_layer_trains_as_the_dense_one, .timeout = 300)
{
	char *dense = tu_weak_csbm(dir, 400, 48), *sp = sparse_csbm(dir, 600, 80);
	burrow_dataset *ds;
	double loss[5][3], valid[5][3];
	bool used;
	cr_assert_eq(burrow_dataset_open(&ds, dense), 0, "%s", burrow_last_error());
	minibatch_run(ds, BURROW_MODEL_SAGE, BURROW_SPARSE_AUTO, 1, false, false, loss[0], valid[0], &used);
	cr_assert_not(used, "auto made Gaussian features sparse");
	burrow_dataset_close(ds);
	cr_assert_eq(burrow_dataset_open(&ds, sp), 0, "%s", burrow_last_error());
	for (int model = BURROW_MODEL_SAGE; model <= BURROW_MODEL_GCN; model++)
		for (int sampled = 0; sampled < 2; sampled++) {
			const char *name = burrow_model_name(model);
			minibatch_run(ds, model, BURROW_SPARSE_OFF, 1, sampled, false, loss[0], valid[0], &used);
			cr_assert_not(used);
			minibatch_run(ds, model, BURROW_SPARSE_AUTO, 1, sampled, false, loss[1], valid[1], &used);
			cr_assert(used, "auto left 3%% non-zero features dense");
			minibatch_run(ds, model, BURROW_SPARSE_AUTO, 1, sampled, true, loss[2], valid[2], &used);
			minibatch_run(ds, model, BURROW_SPARSE_ON, 2, sampled, false, loss[3], valid[3], &used);
			cr_assert(used);
			minibatch_run(ds, model, BURROW_SPARSE_ON, 2, sampled, true, loss[4], valid[4], &used);
			for (int r = 1; r <= 3; r += 2)
				for (int e = 0; e < 3; e++) {
					cr_assert(close_to(loss[r][e], loss[0][e], 1e-5), "%s, %d threads, epoch %d: loss %.9g "
						  "sparse, %.9g dense", name, r == 1 ? 1 : 2, e, loss[r][e], loss[0][e]);
					cr_assert(fabs(valid[r][e] - valid[0][e]) <= 0.01, "%s: valid %.4f sparse, %.4f dense", name,
						  valid[r][e], valid[0][e]);
				}
			for (int r = 1; r <= 3; r += 2)
				cr_assert(!memcmp(loss[r], loss[r + 1], sizeof loss[r]) &&
						  !memcmp(valid[r], valid[r + 1], sizeof valid[r]),
					  "%s, %d threads: the copies gathered and scanned differ", name, r == 1 ? 1 : 2);
		}
	burrow_dataset_close(ds);
	free(dense);
	free(sp);
}

/* The loader leaves a batch's dense input rows unread when the first layer reads only their
 * sparse copy (projects first: sage mean, gcn narrowing, gat, mlp) and reads them when it
 * aggregates them (sage max, gcn widening) or adds them back (a residual): each trains as
 * the dense run does. A layer that read the rows left unread would read a buffer never
 * filled (zeros) and train apart (planted: rows_unread for every model -> sage max fails). */
Test(train_run, sparse_minibatch_reads_dense_rows_only_where_a_layer_does, .timeout = 300)
{
	char *sp = sparse_csbm(dir, 500, 40);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, sp), 0, "%s", burrow_last_error());
	static const struct {
		int model, aggr, hidden;
		bool residual, unread;
	} cases[] = {
		{BURROW_MODEL_SAGE, BURROW_AGGR_MEAN, 16, false, true},
		{BURROW_MODEL_SAGE, BURROW_AGGR_MAX, 16, false, false},
		{BURROW_MODEL_GCN, BURROW_AGGR_MEAN, 16, false, true},
		{BURROW_MODEL_GCN, BURROW_AGGR_MEAN, 64, false, false},
		{BURROW_MODEL_GAT, BURROW_AGGR_MEAN, 40, true, false},
		{BURROW_MODEL_GAT, BURROW_AGGR_MEAN, 16, false, true},
		{BURROW_MODEL_MLP, BURROW_AGGR_MEAN, 16, false, true},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		burrow_train_opts o = small_opts(cases[c].model);
		o.full_graph = false;
		o.batch_size = 64;
		o.fanout[0] = o.fanout[1] = 5;
		o.aggr = cases[c].aggr;
		o.hidden = cases[c].hidden;
		o.residual = cases[c].residual;
		o.layers = cases[c].residual ? 3 : 2;
		o.dropout = 0;
		double loss[2][3], valid[2][3];
		bool unread[2], sparse;
		o.sparse_input = BURROW_SPARSE_OFF;
		minibatch_epochs(ds, &o, false, loss[0], valid[0], &sparse, &unread[0]);
		o.sparse_input = BURROW_SPARSE_ON;
		minibatch_epochs(ds, &o, false, loss[1], valid[1], &sparse, &unread[1]);
		cr_assert_not(unread[0], "case %zu: rows unread with dense products", c);
		cr_assert_eq(unread[1], cases[c].unread, "case %zu (%s): rows unread %d", c, burrow_model_name(o.model),
			     unread[1]);
		for (int e = 0; e < 3; e++) {
			cr_assert(close_to(loss[1][e], loss[0][e], 1e-5), "case %zu (%s), epoch %d: loss %.9g sparse, %.9g dense",
				  c, burrow_model_name(o.model), e, loss[1][e], loss[0][e]);
			cr_assert(fabs(valid[1][e] - valid[0][e]) <= 0.01, "case %zu: valid %.4f sparse, %.4f dense", c,
				  valid[1][e], valid[0][e]);
		}
	}
	burrow_dataset_close(ds);
	free(sp);
}

/* burrow_trainer_embed_layer: each layer's rows equal that layer's output of the full forward
 * (the whole graph as one block, eval mode), the last layer's file is embed's byte for byte,
 * and a layer outside [0, L] (1-based; 0 = the last) is refused. */
Test(train_run, embed_layer_writes_each_layers_output)
{
	char *d = tu_weak_csbm(dir, 1500, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const int64_t n = burrow_dataset_get_info(ds)->num_nodes;
	burrow_train_opts o = small_opts(BURROW_MODEL_SAGE);
	o.layers = 3;
	o.eval_chunk = 250;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_epoch_stats es = {.size = sizeof es};
	cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	bw_batch fb = {.num_blocks = 3, .x = t->feat};
	for (int l = 0; l < 3; l++)
		fb.blocks[l] = &t->full;
	const bw_tensor *logits;
	cr_assert_eq(bw_model_forward(&t->be, t->model, &fb, false, 0, &logits), 0, "%s", burrow_last_error());
	char *last = tu_path(dir, "embed-last.npy"), *plain = tu_path(dir, "embed-plain.npy");
	cr_assert_eq(burrow_trainer_embed(t, plain), 0, "%s", burrow_last_error());
	for (int l = -1; l < 3; l++) {
		char *p = l < 0 ? tu_path(dir, "embed-last.npy") : tu_path(dir, "embed-%d.npy", l);
		cr_assert_eq(burrow_trainer_embed_layer(t, l < 0 ? 0 : l + 1, p), 0, "%s", burrow_last_error());
		bw_npy h;
		void *data;
		cr_assert_eq(bw_npy_load(p, &h, &data), 0, "%s", burrow_last_error());
		/* m->h[l] holds hidden layer l's output (the backward reads it as layer l + 1's input) */
		const bw_tensor *ref = l < 0 || l == 2 ? logits : &t->model->h[l];
		cr_assert_eq(h.ndim, 2);
		cr_assert_eq(h.shape[0], n);
		cr_assert_eq(h.shape[1], ref->cols, "layer %d: %lld columns, want %lld", l, (long long)h.shape[1],
			     (long long)ref->cols);
		const float *z = data;
		for (int64_t i = 0; i < n * ref->cols; i++)
			cr_assert(close_to(z[i], ref->data[i], KTOL), "layer %d [%lld]: %g vs %g", l, (long long)i, z[i],
				  ref->data[i]);
		if (l == 0 || l == 1)
			for (int64_t i = 0; i < n * ref->cols; i++)
				cr_assert(z[i] >= 0, "hidden layer %d row values are after ReLU", l);
		bw_free(data);
		free(p);
	}
	char *cmp = NULL;
	cr_assert_eq(tu_sh(&cmp, NULL, "cmp '%s' '%s' && echo same", last, plain), 0, "%s", cmp);
	free(cmp);
	char *bad = tu_path(dir, "embed-bad.npy");
	cr_assert_eq(burrow_trainer_embed_layer(t, 4, bad), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "4"), "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_embed_layer(t, -1, bad), BURROW_E_INVAL);
	cr_assert_eq(access(bad, F_OK), -1, "nothing written for a bad layer");
	free(bad);
	free(last);
	free(plain);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(d);
}


Test(train_run, resume_is_bit_for_bit_and_truncated_checkpoints_are_refused)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	const char *common = "--full-graph --model sage --layers 2 --hidden 16 --dropout 0.5 --lr 0.01 --threads 1 --quiet";
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "%s train '%s' %s --epochs 4 --log '%s/a.jsonl'", tu_burrow(), d, common, dir);
	cr_assert_eq(rc, 0, "straight run failed: %s", err);
	free(err);
	rc = tu_sh(NULL, &err, "%s train '%s' %s --epochs 2 --checkpoint '%s/ck' --log '%s/b.jsonl'", tu_burrow(), d, common,
		   dir, dir);
	cr_assert_eq(rc, 0, "first half failed: %s", err);
	free(err);
	/* a checkpoint directory in use is not silently overwritten */
	rc = tu_sh(NULL, &err, "%s train '%s' %s --epochs 2 --checkpoint '%s/ck'", tu_burrow(), d, common, dir);
	cr_assert_eq(rc, 1);
	cr_assert(strstr(err, "--resume"), "%s", err);
	free(err);
	char *ck = tu_path(dir, "ck/last.ckpt"), *saved = tu_path(dir, "saved.ckpt");
	tu_sh(NULL, NULL, "cp '%s' '%s'", ck, saved);
	rc = tu_sh(NULL, &err, "%s train '%s' %s --epochs 4 --checkpoint '%s/ck' --resume --log '%s/b.jsonl'", tu_burrow(),
		   d, common, dir, dir);
	cr_assert_eq(rc, 0, "resume failed: %s", err);
	free(err);
	char la[8][40], lb[8][40];
	char *pa = tu_path(dir, "a.jsonl"), *pb = tu_path(dir, "b.jsonl");
	cr_assert_eq(tu_log_losses(pa, la, 8), 4);
	cr_assert_eq(tu_log_losses(pb, lb, 8), 4);
	for (int e = 0; e < 4; e++)
		cr_assert_str_eq(la[e], lb[e], "epoch %d: straight %s, resumed %s", e + 1, la[e], lb[e]);
	char *ta = tu_read(pa, NULL), *tb = tu_read(pb, NULL);
	const char *ca = strstr(ta, "weights_checksum"), *cb = strrchr(tb, '{');
	cr_assert(ca && cb && strstr(cb, "weights_checksum"));
	cr_assert_eq(strncmp(ca, strstr(cb, "weights_checksum"), 38), 0, "final weights differ");
	free(ta);
	free(tb);

	/* truncated: refused by the library and by the command, naming the file */
	const long long size = tu_size(saved);
	tu_truncate(ck, size - 100);
	burrow_dataset *ds;
	burrow_trainer *t;
	burrow_train_opts o = small_opts(BURROW_MODEL_SAGE);
	o.hidden = 16;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	const uint64_t before = burrow_trainer_weights_checksum(t);
	cr_assert_eq(burrow_trainer_load(t, ck), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "truncated") && strstr(burrow_last_error(), "last.ckpt"), "%s",
		  burrow_last_error());
	cr_assert_eq(burrow_trainer_weights_checksum(t), before, "a refused load changed the model");
	/* one flipped byte in the weights: the CRC catches it */
	tu_sh(NULL, NULL, "cp '%s' '%s'", saved, ck);
	tu_sh(NULL, NULL, "printf '\\377' | dd of='%s' bs=1 seek=%lld conv=notrunc 2>/dev/null", ck, size - 40);
	cr_assert_eq(burrow_trainer_load(t, ck), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "corrupted"), "%s", burrow_last_error());
	/* the intact copy loads, with its epoch */
	cr_assert_eq(burrow_trainer_load(t, saved), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_epoch(t), 2);
	/* a checkpoint of another shape is refused */
	burrow_trainer_close(t);
	o.hidden = 8;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0);
	cr_assert_eq(burrow_trainer_load(t, saved), BURROW_E_INVAL);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	tu_truncate(ck, size / 2);
	rc = tu_sh(NULL, &err, "%s train '%s' %s --epochs 4 --checkpoint '%s/ck' --resume", tu_burrow(), d, common, dir);
	cr_assert_eq(rc, 1);
	cr_assert(strstr(err, "truncated"), "%s", err);
	free(err);
	free(pa);
	free(pb);
	free(ck);
	free(saved);
	free(d);
}

Test(train_run, nan_loss_stops_naming_epoch_and_batch)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	/* a NaN in the first training node's features */
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	int64_t ntr;
	const int64_t node = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &ntr)[0];
	const long long off = burrow_dataset_features_offset(ds) + node * burrow_dataset_get_info(ds)->feat_dim * 4;
	char *feat = bw_strdup(burrow_dataset_features_path(ds));
	burrow_dataset_close(ds);
	tu_sh(NULL, NULL, "printf '\\000\\000\\300\\177' | dd of='%s' bs=1 seek=%lld conv=notrunc 2>/dev/null", feat, off);
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "%s train '%s' --full-graph --model mlp --layers 2 --hidden 8 --epochs 3 --quiet",
		       tu_burrow(), d);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert(strstr(err, "NaN at epoch 1, batch 1"), "%s", err);
	free(err);
	bw_free(feat);
	free(d);
}

Test(train_run, eval_and_embed_agree_with_training)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	char *out = NULL, *err = NULL;
	int rc = tu_sh(NULL, &err,
		       "%s train '%s' --full-graph --model gcn --layers 2 --hidden 16 --epochs 5 --threads 1 --quiet "
		       "--checkpoint '%s/ck' --log '%s/log.jsonl'",
		       tu_burrow(), d, dir, dir);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = tu_sh(&out, &err, "%s eval '%s' --checkpoint '%s/ck' --json --threads 1", tu_burrow(), d, dir);
	cr_assert_eq(rc, 0, "%s", err);
	double tr, va, te;
	int ep;
	cr_assert_eq(sscanf(strstr(out, "\"epoch\""), "\"epoch\": %d, \"train_acc\": %lf, \"valid_acc\": %lf, \"test_acc\": %lf",
			    &ep, &tr, &va, &te), 4, "%s", out);
	/* best.ckpt holds the best epoch's model: its accuracies are the log's final ones */
	char *logpath = tu_path(dir, "log.jsonl"), *logtext = tu_read(logpath, NULL);
	free(logpath);
	const char *fin = strstr(logtext, "\"final\": true");
	cr_assert_not_null(fin);
	int best_epoch;
	double lva, lte;
	cr_assert_eq(sscanf(fin, "\"final\": true, \"best_epoch\": %d, \"valid_acc\": %lf, \"test_acc\": %lf", &best_epoch,
			    &lva, &lte), 3, "%s", fin);
	cr_assert_eq(ep, best_epoch);
	cr_assert_eq(va, lva);
	cr_assert_eq(te, lte);
	free(logtext);
	free(out);
	free(err);
	/* --eval-splits: the splits left out are null, the one scored unchanged */
	rc = tu_sh(&out, &err, "%s eval '%s' --checkpoint '%s/ck' --json --threads 1 --eval-splits test", tu_burrow(), d, dir);
	cr_assert_eq(rc, 0, "%s", err);
	double te1;
	cr_assert_eq(sscanf(strstr(out, "\"train_acc\""), "\"train_acc\": null, \"valid_acc\": null, \"test_acc\": %lf", &te1), 1,
		     "%s", out);
	cr_assert_eq(te1, te);
	free(out);
	free(err);
	/* --cache: the sampled evaluation's rows from the file or from the cache, the same scores */
	char *o2 = NULL;
	rc = tu_sh(&out, &err, "%s eval '%s' --checkpoint '%s/ck' --json --threads 1 --eval-fanout 3,3 --cache 0", tu_burrow(),
		   d, dir);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = tu_sh(&o2, &err, "%s eval '%s' --checkpoint '%s/ck' --json --threads 1 --eval-fanout 3,3 --cache 100%%",
		   tu_burrow(), d, dir);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	double c0[2], c1[2];
	cr_assert_eq(sscanf(strstr(out, "\"valid_acc\""), "\"valid_acc\": %lf, \"test_acc\": %lf", &c0[0], &c0[1]), 2, "%s", out);
	cr_assert_eq(sscanf(strstr(o2, "\"valid_acc\""), "\"valid_acc\": %lf, \"test_acc\": %lf", &c1[0], &c1[1]), 2, "%s", o2);
	cr_assert(c0[0] == c1[0] && c0[1] == c1[1], "--cache 0: %s--cache 100%%: %s", out, o2);
	free(out);
	free(o2);
	rc = tu_sh(NULL, &err, "%s eval '%s' --checkpoint '%s/ck' --cache 5x", tu_burrow(), d, dir);
	cr_assert_eq(rc, 2, "%s", err);
	cr_assert(strstr(err, "--cache wants bytes"), "%s", err);
	free(err);
	/* embed: [N, C] logits whose argmax reproduces the test accuracy */
	rc = tu_sh(NULL, &err, "%s embed '%s' --checkpoint '%s/ck' --out '%s/x.npy' --mem 1K --scratch '%s'", tu_burrow(),
		   d, dir, dir, dir);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	bw_npy h;
	float *x;
	char *xp = tu_path(dir, "x.npy");
	cr_assert_eq(bw_npy_load(xp, &h, (void **)&x), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_eq(h.ndim, 2);
	cr_assert_eq(h.shape[0], in->num_nodes);
	cr_assert_eq(h.shape[1], in->num_classes);
	int64_t nte, ok = 0;
	const int64_t *ids = burrow_dataset_split(ds, BURROW_SPLIT_TEST, &nte);
	for (int64_t k = 0; k < nte; k++) {
		const float *row = x + ids[k] * in->num_classes;
		int best = 0;
		for (int c = 1; c < in->num_classes; c++)
			if (row[c] > row[best])
				best = c;
		ok += best == burrow_dataset_labels(ds)[ids[k]];
	}
	cr_assert_eq((double)ok / (double)nte, te);
	/* an existing output is not replaced without --force */
	rc = tu_sh(NULL, &err, "%s embed '%s' --checkpoint '%s/ck' --out '%s'", tu_burrow(), d, dir, xp);
	cr_assert_eq(rc, 1);
	free(err);
	burrow_dataset_close(ds);
	bw_free(x);
	free(xp);
	free(d);
}

/* Full-graph training on dense features wide enough for the CPU's own GEMM (and the
 * features' transposed copy for X^T G), against the same runs with BURROW_CPU_GEMM=blas
 * (OpenBLAS for every product): the same losses up to float rounding, epoch by epoch, and the
 * same accuracy up to a node or two, for gcn and sage; skipped on a CPU without AVX-512. */
Test(train_run, own_gemm_trains_as_openblas_does)
{
	if (!bw_gemm_own_available())
		cr_skip_test("this CPU has no AVX-512: OpenBLAS does every product");
	char *d = tu_weak_csbm(dir, 1500, 96);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	int64_t nt;
	burrow_dataset_split(ds, BURROW_SPLIT_TEST, &nt);
	const int models[2] = {BURROW_MODEL_GCN, BURROW_MODEL_SAGE};
	for (int mi = 0; mi < 2; mi++) {
		double loss[2][4], acc[2];
		for (int blas = 0; blas < 2; blas++) {
			if (blas)
				setenv("BURROW_CPU_GEMM", "blas", 1);
			else
				unsetenv("BURROW_CPU_GEMM");
			burrow_train_opts o = small_opts(models[mi]);
			o.hidden = 64;
			o.threads = 2;
			burrow_trainer *t;
			cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
			cr_assert_eq(t->feat_tr.t != NULL, !blas, "the features' transposed copy: kept %d, own GEMM %d",
				     t->feat_tr.t != NULL, !blas);
			for (int e = 0; e < 4; e++) {
				burrow_epoch_stats es = {.size = sizeof es};
				cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
				loss[blas][e] = es.loss;
			}
			burrow_eval_stats ev = {.size = sizeof ev};
			cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
			acc[blas] = ev.test_acc;
			burrow_trainer_close(t);
		}
		unsetenv("BURROW_CPU_GEMM");
		for (int e = 0; e < 4; e++)
			cr_assert(fabs(loss[0][e] - loss[1][e]) <= 1e-4 * fabs(loss[1][e]), "%s epoch %d: loss %.8f, OpenBLAS %.8f",
				  burrow_model_name(models[mi]), e + 1, loss[0][e], loss[1][e]);
		cr_assert(fabs(acc[0] - acc[1]) <= 2.0 / (double)nt + 1e-12, "%s: test accuracy %.4f, OpenBLAS %.4f",
			  burrow_model_name(models[mi]), acc[0], acc[1]);
		cr_assert(loss[0][3] < loss[0][0], "%s did not learn: %.4f then %.4f", burrow_model_name(models[mi]), loss[0][0],
			  loss[0][3]);
	}
	burrow_dataset_close(ds);
	free(d);
}

/* Evaluation on sampled neighborhoods: with every neighbor (-1) it computes what layer-wise
 * inference computes for the split nodes, so the accuracies agree (up to a float-order tie
 * in an argmax); with small fanouts it does not depend on the threads and still sees the
 * graph (well above chance). */
Test(train_run, sampled_evaluation_agrees_with_layerwise_inference)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const int32_t fans[3][2] = {{0, 0}, {-1, -1}, {3, 3}};
	burrow_eval_stats ev[4] = {{.size = sizeof ev[0]}, {.size = sizeof ev[0]}, {.size = sizeof ev[0]}, {.size = sizeof ev[0]}};
	uint64_t sum[4];
	for (int k = 0; k < 4; k++) {
		burrow_train_opts o = small_opts(BURROW_MODEL_SAGE);
		memcpy(o.eval_fanout, fans[k < 3 ? k : 2], sizeof fans[0]);
		o.batch_size = 300; /* several batches per split, the last one short */
		o.threads = k == 3 ? 2 : 1;
		o.eval_splits = k == 1 ? BURROW_EVAL_ALL : 0; /* sampled, the train split only when asked */
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		for (int e = 0; e < 20; e++) {
			burrow_epoch_stats es = {.size = sizeof es};
			cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		}
		sum[k] = burrow_trainer_weights_checksum(t);
		cr_assert_eq(burrow_trainer_evaluate(t, &ev[k]), 0, "%s", burrow_last_error());
		burrow_trainer_close(t);
	}
	cr_assert_eq(sum[0], sum[1], "the evaluation mode changed the training");
	int64_t n[3];
	for (int s = 0; s < 3; s++)
		burrow_dataset_split(ds, s, &n[s]);
	const double acc[2][3] = {{ev[0].train_acc, ev[0].valid_acc, ev[0].test_acc},
				  {ev[1].train_acc, ev[1].valid_acc, ev[1].test_acc}};
	for (int s = 0; s < 3; s++)
		cr_assert(fabs(acc[0][s] - acc[1][s]) <= 1.0 / (double)n[s] + 1e-12,
			  "split %d: layer-wise %.4f, sampled with every neighbor %.4f", s, acc[0][s], acc[1][s]);
	cr_assert_eq(ev[2].test_acc, ev[3].test_acc, "1 and 2 threads: %.4f, %.4f", ev[2].test_acc, ev[3].test_acc);
	cr_assert_eq(ev[2].valid_acc, ev[3].valid_acc);
	cr_assert_eq(ev[2].train_acc, -1.0, "sampled evaluation scored the train split unasked: %.4f", ev[2].train_acc);
	cr_assert(ev[0].train_acc >= 0.0 && ev[1].train_acc >= 0.0);
	cr_assert(ev[2].test_acc > 0.5, "sampled test accuracy %.3f (4 classes)", ev[2].test_acc);
	cr_assert_eq(ev[2].spilled_bytes, 0);
	burrow_dataset_close(ds);
	free(d);
}

/* Sampled evaluation from the store samples the next batch and reads its rows while the
 * current one is scored: it scores exactly what the one-batch-at-a-time evaluation over the
 * same rows in memory scores, every split, with several batches and a short last one. */
Test(train_run, pipelined_sampled_evaluation_scores_as_one_batch_at_a_time)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	burrow_train_opts o = small_opts(BURROW_MODEL_SAGE);
	o.full_graph = false; /* mini-batch: the features through the store, */
	o.cache_bytes = 0;    /* every row read from the file */
	o.fanout[0] = o.fanout[1] = 5;
	o.eval_fanout[0] = o.eval_fanout[1] = 3;
	o.batch_size = 300;
	o.eval_splits = BURROW_EVAL_ALL;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	for (int e = 0; e < 10; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	}
	cr_assert_not_null(t->feat_rows.submit, "mini-batch features are not read through the store");
	burrow_eval_stats piped = {.size = sizeof piped}, serial = {.size = sizeof serial};
	cr_assert_eq(burrow_trainer_evaluate(t, &piped), 0, "%s", burrow_last_error());
	/* the same rows, copied from memory: one batch at a time */
	const int64_t n = t->info->num_nodes, D = t->info->feat_dim;
	float *all = malloc((size_t)(n * D) * sizeof *all);
	int64_t *ids = malloc((size_t)n * sizeof *ids);
	for (int64_t i = 0; i < n; i++)
		ids[i] = i;
	cr_assert_eq(burrow_store_gather(t->store, ids, (size_t)n, all), 0, "%s", burrow_last_error());
	const bw_rows saved_rows = t->feat_rows;
	bw_rows_from_memory(&t->feat_rows, all, n, D, 1);
	cr_assert_null(t->feat_rows.submit);
	cr_assert_eq(burrow_trainer_evaluate(t, &serial), 0, "%s", burrow_last_error());
	t->feat_rows = saved_rows;
	const double a[3] = {piped.train_acc, piped.valid_acc, piped.test_acc},
		     b[3] = {serial.train_acc, serial.valid_acc, serial.test_acc};
	for (int sp = 0; sp < 3; sp++) {
		cr_assert(a[sp] >= 0, "split %d was not scored", sp);
		cr_assert_eq(a[sp], b[sp], "split %d: pipelined %.6f, one batch at a time %.6f", sp, a[sp], b[sp]);
	}
	cr_assert(piped.test_acc > 0.5, "test accuracy %.3f (4 classes)", piped.test_acc);
	burrow_trainer_close(t);
	free(all);
	free(ids);
	burrow_dataset_close(ds);
	free(d);
}

Test(train_run, options_are_checked)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	char *err = NULL;
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --full-graph --model transformer", tu_burrow(), d), 2);
	cr_assert(strstr(err, "--model"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --full-graph --norm group", tu_burrow(), d), 2);
	cr_assert(strstr(err, "--norm wants batch, layer or none"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --full-graph --aggr lstm", tu_burrow(), d), 2);
	cr_assert(strstr(err, "--aggr"), "%s", err);
	free(err);
	/* gat's heads are concatenated: they must divide the hidden width (one line, exit 1) */
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --full-graph --model gat --heads 3 --hidden 16 --quiet", tu_burrow(), d), 1);
	cr_assert(strstr(err, "heads") && strstr(err, "hidden 16") && !strchr(strchr(err, '\n') + 1, '\n'), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --full-graph --layers 2 --fanout 5,5,5", tu_burrow(), d), 2);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --eval-fanout 5,5 --quiet", tu_burrow(), d), 2);
	cr_assert(strstr(err, "--eval-fanout 5,5 has 2 values but the model has 3 layers"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --eval-splits valid,train,valid --quiet", tu_burrow(), d), 2);
	cr_assert(strstr(err, "--eval-splits"), "%s", err);
	free(err);
		cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --resume", tu_burrow(), d), 2);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --prefetch 65 --quiet", tu_burrow(), d), 2);
	cr_assert(strstr(err, "--prefetch"), "%s", err);
	free(err);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	burrow_train_opts o = small_opts(BURROW_MODEL_SAGE);
	burrow_trainer *t = (burrow_trainer *)1;
	o.dropout = 1.0;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_assert_null(t);
	o = small_opts(BURROW_MODEL_SAGE);
	o.layers = BURROW_MAX_LAYERS + 1;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	o = small_opts(BURROW_MODEL_SAGE); /* an evaluation fanout for every layer, or none */
	o.eval_fanout[0] = 5;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "evaluation fanout 0 of layer 1"), "%s", burrow_last_error());
	o = small_opts(BURROW_MODEL_SAGE);
	o.eval_splits = BURROW_EVAL_ALL + 1;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "eval_splits"), "%s", burrow_last_error());
	burrow_trainer_close(NULL);
	burrow_dataset_close(ds);
	free(d);
}

/* A model the device cannot run is refused when the trainer opens, in one line naming the
 * backend and the kernels it lacks, not at the first step; the others open. The backend
 * is the CPU given a table without attention, the max aggregator or the normalizations (as
 * the CUDA backend's today) through the registry's test hook. */
Test(train_run, a_model_the_backend_cannot_run_is_refused_at_open)
{
	char *d = tu_weak_csbm(dir, 300, 8);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	bw_ops lacking = *bw_cpu_backend()->ops;
	lacking.name = "lacking";
	lacking.seg_max_fwd = NULL;
	lacking.edge_softmax_bwd = NULL;
	lacking.col_dot = NULL;
	bw_backend_ops_hook = &lacking;
	static const struct {
		int model, aggr, norm;
		const char *says;
	} runs[] = {
		{BURROW_MODEL_GAT, BURROW_AGGR_MEAN, BURROW_NORM_NONE, "cannot run gat: it has no kernels for attention"},
		{BURROW_MODEL_SAGE, BURROW_AGGR_MAX, BURROW_NORM_NONE, "cannot run sage with the max aggregator"},
		{BURROW_MODEL_GCN, BURROW_AGGR_MEAN, BURROW_NORM_LAYER, "cannot run layer norm"},
		{BURROW_MODEL_MLP, BURROW_AGGR_MEAN, BURROW_NORM_BATCH, "cannot run batch norm"},
		{BURROW_MODEL_SAGE, BURROW_AGGR_MEAN, BURROW_NORM_NONE, NULL},
		{BURROW_MODEL_GCN, BURROW_AGGR_SUM, BURROW_NORM_NONE, NULL},
	};
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++)
		for (int full = 0; full < 2; full++) {
			burrow_train_opts o = small_opts(runs[i].model);
			o.aggr = runs[i].aggr;
			o.norm = runs[i].norm;
			o.full_graph = full;
			o.heads = 2;
			burrow_trainer *t = (burrow_trainer *)1;
			const int st = burrow_trainer_open(&t, ds, &o);
			if (!runs[i].says) {
				cr_assert_eq(st, 0, "%s", burrow_last_error());
				burrow_trainer_close(t);
				continue;
			}
			const char *e = burrow_last_error();
			cr_assert_eq(st, BURROW_E_UNSUPPORTED, "%s", e);
			cr_assert_null(t);
			cr_assert(strstr(e, "the lacking backend") && strstr(e, runs[i].says) && !strchr(e, '\n'), "%s", e);
		}
	bw_backend_ops_hook = NULL;
	burrow_trainer *t;
	burrow_train_opts o = small_opts(BURROW_MODEL_GAT);
	o.heads = 2;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(d);
}

/* Every allocation of open, an epoch, an evaluation, a checkpoint and its load is made to
 * fail in turn, for every model, aggregator and normalization (and a drawn split): each
 * failure is BURROW_E_NOMEM, nothing crashes or leaks, no temporary file is left behind. */
Test(train_run, every_allocation_failure_is_reported, .timeout = 300) /* ~2500 runs */
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = 300;
	g.feat_dim = 8;
	g.num_classes = 3;
	char *d = tu_path(dir, "tiny"), *ck = tu_path(dir, "ck"), *ckf = tu_path(dir, "ck/m.ckpt");
	cr_assert_eq(burrow_gen(&g, d), 0, "%s", burrow_last_error());
	tu_sh(NULL, NULL, "mkdir -p '%s'", ck);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	const struct {
		int model, aggr, norm;
		bool residual, split;
	} v[] = {
		{BURROW_MODEL_SAGE, BURROW_AGGR_MEAN, BURROW_NORM_NONE, false, false},
		{BURROW_MODEL_GCN, BURROW_AGGR_MEAN, BURROW_NORM_NONE, false, false},
		{BURROW_MODEL_MLP, BURROW_AGGR_MEAN, BURROW_NORM_NONE, false, false},
		{BURROW_MODEL_GAT, BURROW_AGGR_MEAN, BURROW_NORM_BATCH, true, false},
		{BURROW_MODEL_SAGE, BURROW_AGGR_MAX, BURROW_NORM_LAYER, false, false},
		{BURROW_MODEL_SAGE, BURROW_AGGR_SUM, BURROW_NORM_BATCH, true, true},
	};
	const size_t base = tu_mem_now();
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		const int model = (int)i; /* the case, in the messages */
		bool done = false;
		for (long n = 0; !done; n++) {
			cr_assert_lt(n, 10000, "never succeeded");
			burrow_train_opts o = small_opts(v[i].model);
			o.aggr = v[i].aggr;
			o.norm = v[i].norm;
			o.residual = v[i].residual;
			o.heads = 2;
			o.attn_dropout = v[i].model == BURROW_MODEL_GAT ? 0.2 : 0;
			if (v[i].split)
				o.split[0] = 0.5, o.split[1] = 0.25, o.split[2] = 0.25;
			o.hidden = 8;
			o.eval_chunk = 64;
			o.mem_bytes = 1024; /* spill too */
			o.scratch_dir = ck;
			burrow_trainer *t = NULL;
			burrow_epoch_stats es = {.size = sizeof es};
			burrow_eval_stats ev = {.size = sizeof ev};
			bw_mem_fail_after(n);
			int st = burrow_trainer_open(&t, ds, &o);
			if (!st)
				st = burrow_trainer_train_epoch(t, &es);
			if (!st)
				st = burrow_trainer_evaluate(t, &ev);
			if (!st)
				st = burrow_trainer_save(t, ckf);
			if (!st)
				st = burrow_trainer_load(t, ckf);
			bw_mem_fail_after(-1);
			cr_assert(st == 0 || st == BURROW_E_NOMEM, "case %d, allocation %ld: status %d (%s)", model, n, st,
				  burrow_last_error());
			done = st == 0;
			if (done)
				cr_log_info("case %d: succeeded once %ld allocations could succeed", model, n);
			burrow_trainer_close(t);
			cr_assert_eq(tu_mem_now(), base, "case %d, allocation %ld: %zu bytes not freed", model, n,
				     tu_mem_now() - base);
			char *ls = NULL;
			tu_sh(&ls, NULL, "ls -A '%s' | grep -v '^m.ckpt$'", ck);
			cr_assert_str_empty(ls, "left behind after allocation %ld fails: %s", n, ls);
			free(ls);
		}
	}
	burrow_dataset_close(ds);
	free(d);
	free(ck);
	free(ckf);
}

/* A checkpoint carries the model's options: eval rebuilds a gat, and a sage with max,
 * batch norm (its running statistics) and residuals, and gives the log's accuracies; a
 * checkpoint written before those options existed (their header keys removed) still loads. */
Test(train_run, checkpoints_rebuild_the_model_they_hold_and_old_ones_load)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	const char *models[] = {"--model gat --heads 2 --attn-dropout 0.2",
				"--model sage --aggr max --norm batch --residual", "--model sage"};
	for (int k = 0; k < 3; k++) {
		char *out = NULL, *err = NULL;
		int rc = tu_sh(NULL, &err,
			       "%s train '%s' --full-graph %s --layers 2 --hidden 16 --epochs 3 --threads 1 --quiet "
			       "--checkpoint '%s/ck%d' --log '%s/log%d.jsonl'",
			       tu_burrow(), d, models[k], dir, k, dir, k);
		cr_assert_eq(rc, 0, "%s: %s", models[k], err);
		free(err);
		char *ckp = tu_path(dir, "ck%d/best.ckpt", k);
		if (k == 2) {
			/* as an older burrow wrote it: no aggr, heads, attn_dropout, norm, residual, num_state */
			size_t len;
			unsigned char *raw = tu_read(ckp, &len);
			uint32_t hl;
			memcpy(&hl, raw + 12, 4);
			char *h = (char *)raw + 16, *end = h + hl;
			char *a = memmem(h, hl, ",\"aggr\"", 7), *e = memmem(h, hl, ",\"optimizer\"", 12);
			cr_assert(a && e && a < e, "header: %.300s", h);
			/* keep the JSON valid: shift the rest of the header left, pad it, its length unchanged */
			memmove(a, e, (size_t)(end - e));
			memset(end - (e - a), ' ', (size_t)(e - a));
			uint32_t crc = (uint32_t)crc32(0L, raw, (uInt)(len - 16));
			memcpy(raw + len - 8, &crc, 4);
			FILE *f = fopen(ckp, "wb");
			cr_assert_eq(fwrite(raw, 1, len, f), len);
			fclose(f);
			free(raw);
		}
		rc = tu_sh(&out, &err, "%s eval '%s' --checkpoint '%s' --json --threads 1", tu_burrow(), d, ckp);
		cr_assert_eq(rc, 0, "%s: %s", models[k], err);
		double va, te, lva, lte;
		int ep, best;
		cr_assert_eq(sscanf(strstr(out, "\"epoch\""), "\"epoch\": %d, \"train_acc\": %*f, \"valid_acc\": %lf, \"test_acc\": %lf",
				    &ep, &va, &te), 3, "%s", out);
		char *lp = tu_path(dir, "log%d.jsonl", k), *lt = tu_read(lp, NULL);
		const char *fin = strstr(lt, "\"final\": true");
		cr_assert_eq(sscanf(fin, "\"final\": true, \"best_epoch\": %d, \"valid_acc\": %lf, \"test_acc\": %lf", &best, &lva,
				    &lte), 3, "%s", fin);
		cr_assert_eq(ep, best, "%s", models[k]);
		cr_assert_eq(va, lva, "%s: eval's valid %g, training's %g", models[k], va, lva);
		cr_assert_eq(te, lte, "%s", models[k]);
		free(lp);
		free(lt);
		free(out);
		free(err);
		free(ckp);
	}
	free(d);
}

/* The command's default --norm is layer for sage's max and sum, none for mean and the other
 * models; a --norm given wins. The checkpoint says what the model was built with. */
Test(train_run, max_and_sum_default_to_layer_norm)
{
	char *d = tu_weak_csbm(dir, 300, 8);
	const struct {
		const char *args;
		int norm;
	} v[] = {{"--aggr sum", BURROW_NORM_LAYER}, {"--aggr max", BURROW_NORM_LAYER}, {"--aggr mean", BURROW_NORM_NONE},
		 {"--aggr sum --norm none", BURROW_NORM_NONE}, {"--aggr max --norm batch", BURROW_NORM_BATCH},
		 {"--model gcn", BURROW_NORM_NONE}};
	for (int k = 0; k < (int)(sizeof v / sizeof v[0]); k++) {
		char *err = NULL, *ck = tu_path(dir, "dn%d", k), *f = tu_path(dir, "dn%d/last.ckpt", k);
		cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --full-graph %s --layers 2 --hidden 8 --epochs 1 --threads 1 "
					       "--quiet --checkpoint '%s'",
				   tu_burrow(), d, v[k].args, ck),
			     0, "%s", err);
		burrow_train_opts o;
		burrow_train_defaults(&o);
		cr_assert_eq(burrow_checkpoint_read_opts(f, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(o.norm, v[k].norm, "%s: norm %s", v[k].args, burrow_norm_name(o.norm));
		free(err), free(ck), free(f);
	}
	free(d);
}

/* Likewise sage --aggr sum's hidden width and learning rate: 128 and 0.005 unless --hidden or
 * --lr is given (chosen on Cora's valid split, docs/train.md); every other model and
 * aggregator keeps the library's defaults. */
Test(train_run, sum_defaults_to_hidden_128_lr_0_005)
{
	char *d = tu_weak_csbm(dir, 300, 8);
	burrow_train_opts ref_o;
	burrow_train_defaults(&ref_o);
	const struct {
		const char *args;
		int64_t hidden;
		double lr;
	} v[] = {{"--aggr sum", 128, 0.005},
		 {"--aggr sum --hidden 24", 24, 0.005},
		 {"--aggr sum --lr 0.02", 128, 0.02},
		 {"--aggr mean", ref_o.hidden, ref_o.lr},
		 {"--aggr max --full-graph", ref_o.hidden, ref_o.lr}};
	for (int k = 0; k < (int)(sizeof v / sizeof v[0]); k++) {
		char *err = NULL, *ck = tu_path(dir, "dh%d", k), *f = tu_path(dir, "dh%d/last.ckpt", k);
		cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' %s --layers 2 --epochs 1 --eval-every 0 "
					       "--threads 1 --quiet --checkpoint '%s'",
				   tu_burrow(), d, v[k].args, ck),
			     0, "%s: %s", v[k].args, err);
		burrow_train_opts o;
		burrow_train_defaults(&o);
		cr_assert_eq(burrow_checkpoint_read_opts(f, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(o.hidden, v[k].hidden, "%s: hidden %lld", v[k].args, (long long)o.hidden);
		cr_assert_float_eq(o.lr, v[k].lr, 1e-12, "%s: lr %g", v[k].args, o.lr);
		free(err), free(ck), free(f);
	}
	free(d);
}

/* Mini-batch without a feature cache, on features that fit in the page cache: the run says
 * once that it reads through the page cache; with the default cache (every row, filled by one
 * pass) it says nothing of it; both train to the same losses (the same bytes either way). */
Test(train_run, no_cache_budget_reads_buffered_and_says_so)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	const char *common = "--model sage --layers 2 --hidden 16 --fanout 5,5 --epochs 2 --threads 1 --quiet";
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "%s train '%s' %s --cache 0 --log '%s/n.jsonl'", tu_burrow(), d, common, dir);
	cr_assert_eq(rc, 0, "%s", err);
	const char *at = strstr(err, "fits in the page cache");
	cr_assert(at, "no word of buffered reads: %s", err);
	cr_assert(!strstr(at + 1, "fits in the page cache"), "said more than once: %s", err);
	free(err);
	rc = tu_sh(NULL, &err, "%s train '%s' %s --log '%s/c.jsonl'", tu_burrow(), d, common, dir);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(!strstr(err, "page cache"), "%s", err);
	free(err);
	char ln[8][40], lc[8][40];
	char *pn = tu_path(dir, "n.jsonl"), *pc = tu_path(dir, "c.jsonl");
	cr_assert_eq(tu_log_losses(pn, ln, 8), 2);
	cr_assert_eq(tu_log_losses(pc, lc, 8), 2);
	for (int e = 0; e < 2; e++)
		cr_assert_str_eq(ln[e], lc[e], "epoch %d: no cache %s, full cache %s", e + 1, ln[e], lc[e]);
	free(pn);
	free(pc);
	free(d);
}
