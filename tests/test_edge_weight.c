/* test_edge_weight.c: aggregation with edge weights (SUM, MEAN, GCN): the forward against a
 * slow dense reference, the hand-written backward against finite differences, the weighted
 * GCN norms against PyG's gcn_norm, and the refusals (no weights, a backend without the op). */
#include <criterion/criterion.h>

#include "../train/compute/backend_impl.h"
#include "../train/compute/compute.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(edge_weight, .timeout = 60);

enum { ND = 7, NS = 11, DIM = 3 };

/* A block with rows of 0 .. 4 edges (repeats allowed) and positive weights. */
typedef struct wblock {
	int64_t ip[ND + 1];
	int32_t ix[64];
	float w[64];
	bw_block b;
} wblock;

static void make_as(wblock *t, bool gcn, const bw_device *dev, int ns);
static void make(wblock *t, bool gcn, const bw_device *dev) { make_as(t, gcn, dev, NS); }

/* make over ns sources (ND: a square block, as full-graph training's whole graph) */
static void make_as(wblock *t, bool gcn, const bw_device *dev, int ns)
{
	uint64_t x = 12345;
	int64_t k = 0;
	t->ip[0] = 0;
	for (int i = 0; i < ND; i++) {
		const int deg = i % 5;
		for (int e = 0; e < deg; e++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			t->ix[k] = (int32_t)((x >> 33) % (uint64_t)ns);
			t->w[k] = 0.25f + (float)((x >> 20) % 7) / 4.0f;
			k++;
		}
		t->ip[i + 1] = k;
	}
	bw_block_init(&t->b, ND, ns, t->ip, t->ix);
	t->b.edge_weight = t->w;
	cr_assert_eq(bw_block_prepare(&t->b, true, gcn), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_block_upload(&t->b, dev), 0, "%s", burrow_last_error());
}

/* The reference: the dense [ND, NS] matrix the aggregation applies. */
static void ref_matrix(const wblock *t, bw_agg mode, double *a)
{
	memset(a, 0, sizeof(double) * ND * NS);
	double deg[NS] = {0};
	for (int i = 0; i < ND; i++)
		for (int64_t e = t->ip[i]; e < t->ip[i + 1]; e++) {
			deg[i] += t->w[e];
			if (t->ix[e] >= ND)
				deg[t->ix[e]] += t->w[e];
		}
	for (int i = 0; i < ND; i++) {
		const int64_t n = t->ip[i + 1] - t->ip[i];
		if (mode == BW_AGG_GCN)
			a[i * NS + i] += 1.0 / (deg[i] + 1.0);
		for (int64_t e = t->ip[i]; e < t->ip[i + 1]; e++) {
			const int j = t->ix[e];
			double v = t->w[e];
			if (mode == BW_AGG_MEAN)
				v /= (double)n;
			else if (mode == BW_AGG_GCN)
				v /= sqrt(deg[i] + 1.0) * sqrt(deg[j] + 1.0);
			a[i * NS + j] += v;
		}
	}
}

/* Over a sampled block (ns > ND sources) and a square one (full-graph training's). */
static void check_fd(int ns)
{
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 2), 0, "%s", burrow_last_error());
	for (int mode = BW_AGG_SUM; mode <= BW_AGG_GCN; mode++) {
		wblock t;
		make_as(&t, mode == BW_AGG_GCN, be.dev, ns);
		float xs[NS * DIM], gs[ND * DIM], outs[ND * DIM], gxs[NS * DIM];
		for (int k = 0; k < NS * DIM; k++)
			xs[k] = (float)sin(0.7 * k + mode);
		for (int k = 0; k < ND * DIM; k++)
			gs[k] = (float)cos(0.3 * k);
		bw_tensor x = bw_tensor_view(be.dev, xs, ns, DIM), g = bw_tensor_view(be.dev, gs, ND, DIM);
		bw_tensor out = bw_tensor_view(be.dev, outs, ND, DIM), gx = bw_tensor_view(be.dev, gxs, ns, DIM);
		cr_assert_eq(bw_aggregate_weighted(&be, &t.b, mode, &x, 0, -1, &out), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_aggregate_weighted_backward(&be, &t.b, mode, &g, 0, -1, &gx), 0, "%s", burrow_last_error());
		double a[ND * NS];
		ref_matrix(&t, mode, a);
		for (int i = 0; i < ND; i++)
			for (int c = 0; c < DIM; c++) {
				double r = 0;
				for (int j = 0; j < ns; j++)
					r += a[i * NS + j] * xs[j * DIM + c];
				cr_assert_float_eq(outs[i * DIM + c], r, 1e-5, "mode %d out[%d, %d] %g, reference %g", mode, i, c,
						   (double)outs[i * DIM + c], r);
			}
		/* L = sum(g . out): dL/dx by central differences (linear in x: exact up to rounding) */
		for (int k = 0; k < ns * DIM; k++) {
			const float h = 1e-2f, x0 = xs[k];
			double l[2];
			for (int s = 0; s < 2; s++) {
				xs[k] = x0 + (s ? h : -h);
				cr_assert_eq(bw_aggregate_weighted(&be, &t.b, mode, &x, 0, -1, &out), 0);
				l[s] = 0;
				for (int q = 0; q < ND * DIM; q++)
					l[s] += (double)gs[q] * outs[q];
			}
			xs[k] = x0;
			const double fd = (l[1] - l[0]) / (2 * h);
			cr_assert_float_eq(gxs[k], fd, 1e-3, "mode %d gx[%d] %g, finite differences %g", mode, k,
					   (double)gxs[k], fd);
		}
		bw_block_release(&t.b);
	}
	bw_backend_release(&be);
}

Test(edge_weight, forward_matches_reference_and_backward_finite_differences) { check_fd(NS); }
Test(edge_weight, full_graph_block_forward_and_backward_finite_differences) { check_fd(ND); }

Test(edge_weight, refusals)
{
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 1), 0);
	wblock t;
	make(&t, false, be.dev);
	float xs[NS * DIM] = {0}, outs[ND * DIM];
	bw_tensor x = bw_tensor_view(be.dev, xs, NS, DIM), out = bw_tensor_view(be.dev, outs, ND, DIM);
	/* a backend without the family */
	bw_ops ops = *be.ops;
	ops.agg_w_fwd = NULL;
	bw_backend nb = be;
	nb.ops = &ops;
	cr_assert_eq(bw_aggregate_weighted(&nb, &t.b, BW_AGG_SUM, &x, 0, -1, &out), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "weighted aggregation"), "%s", burrow_last_error());
	/* a block without weights */
	bw_block_release(&t.b);
	bw_block_init(&t.b, ND, NS, t.ip, t.ix);
	cr_assert_eq(bw_block_prepare(&t.b, true, false), 0);
	cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
	cr_assert_eq(bw_aggregate_weighted(&be, &t.b, BW_AGG_SUM, &x, 0, -1, &out), BURROW_E_INVAL);
	bw_block_release(&t.b);
	bw_backend_release(&be);
}

/* bw_aggregate takes a weighted block's weights (and its backward too); weights of one give
 * the unweighted aggregation (the same bits for SUM and GCN, within rounding for MEAN). */
Test(edge_weight, aggregate_dispatches_on_weights_and_ones_are_unweighted)
{
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 2), 0);
	for (int mode = BW_AGG_SUM; mode <= BW_AGG_GCN; mode++) {
		wblock t, u;
		make(&t, mode == BW_AGG_GCN, be.dev);
		bw_block_release(&t.b); /* again with weights of one */
		for (int e = 0; e < 64; e++)
			t.w[e] = 1.0f;
		bw_block_init(&t.b, ND, NS, t.ip, t.ix);
		t.b.edge_weight = t.w;
		cr_assert_eq(bw_block_prepare(&t.b, true, mode == BW_AGG_GCN), 0);
		cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
		u = t;
		bw_block_init(&u.b, ND, NS, t.ip, t.ix);
		cr_assert_eq(bw_block_prepare(&u.b, true, mode == BW_AGG_GCN), 0);
		cr_assert_eq(bw_block_upload(&u.b, be.dev), 0);
		float xs[NS * DIM], o1[ND * DIM], o2[ND * DIM], g1[NS * DIM], g2[NS * DIM];
		for (int k = 0; k < NS * DIM; k++)
			xs[k] = (float)sin(1.3 * k);
		bw_tensor x = bw_tensor_view(be.dev, xs, NS, DIM);
		bw_tensor a = bw_tensor_view(be.dev, o1, ND, DIM), b = bw_tensor_view(be.dev, o2, ND, DIM);
		bw_tensor ga = bw_tensor_view(be.dev, g1, NS, DIM), gb = bw_tensor_view(be.dev, g2, NS, DIM);
		cr_assert_eq(bw_aggregate(&be, &t.b, mode, &x, 0, -1, &a), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_aggregate(&be, &u.b, mode, &x, 0, -1, &b), 0);
		cr_assert_eq(bw_aggregate_backward(&be, &t.b, mode, &a, 0, -1, &ga), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_aggregate_backward(&be, &u.b, mode, &a, 0, -1, &gb), 0);
		for (int k = 0; k < ND * DIM; k++)
			cr_assert_float_eq(o1[k], o2[k], mode == BW_AGG_MEAN ? 1e-6 : 0, "mode %d out %d", mode, k);
		for (int k = 0; k < NS * DIM; k++)
			cr_assert_float_eq(g1[k], g2[k], mode == BW_AGG_MEAN ? 1e-6 : 0, "mode %d gx %d", mode, k);
		cr_assert_eq(bw_aggregate_part(&be, &t.b, BW_PART_ALL, mode, &x, 0, -1, true, &a), BURROW_E_UNSUPPORTED);
		bw_block_release(&t.b);
		bw_block_release(&u.b);
	}
	bw_backend_release(&be);
}

/* ------------------------------------------------------------ the loader's per-batch weights */

#include "../train/driver/loader.h"

/* Every loaded block's weights are column 1 of the edge features at its edges' CSR
 * positions, and bw_aggregate then weighs with them. */
Test(edge_weight, loader_gathers_each_blocks_weights_by_its_edge_ids)
{
	enum { N = 300, M = 3000, DE = 3, FD = 4 };
	static int64_t src[M], dst[M], ids[N];
	uint64_t r = 7;
	for (int i = 0; i < M; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		src[i] = (int64_t)((r >> 33) % N);
		dst[i] = (int64_t)((r >> 13) % N);
	}
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = true;
	burrow_csr_builder *cb;
	burrow_csr g;
	cr_assert_eq(burrow_csr_builder_open(&cb, N, &co), 0);
	cr_assert_eq(burrow_csr_builder_add(cb, src, dst, M), 0);
	cr_assert_eq(burrow_csr_builder_finish(cb, &g), 0);
	float *ef = malloc((size_t)g.num_edges * DE * sizeof *ef);
	for (int64_t j = 0; j < g.num_edges * DE; j++)
		ef[j] = (float)(j % 97) / 8.0f;
	static float feat[N * FD];
	for (int64_t v = 0; v < N; v++)
		ids[v] = v;
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 1), 0);
	burrow_sampler_opts so;
	burrow_sampler_defaults(&so);
	so.num_layers = 2;
	so.fanouts[0] = 5;
	so.fanouts[1] = 3;
	so.batch_size = 50;
	so.prefetch = 0;
	so.edge_ids = true;
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, &g, ids, N, &so), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_sampler_start(s, 0), 0);
	const bw_loader_cfg lc = {.dev = be.dev, .depth = 1, .thread = true, .num_layers = 2, .dim = FD, .blocks = true,
				  .transpose = true, .edge_feat = ef, .ew_dim = DE, .ew_col = 1,
				  .ew_dtype = BURROW_DTYPE_F32};
	bw_loader *ld;
	cr_assert_eq(bw_loader_open(&ld, &lc), 0, "%s", burrow_last_error());
	bw_producer p;
	bw_producer_epoch(&p, s);
	bw_rows rows;
	bw_rows_from_memory(&rows, feat, N, FD, 1);
	const int64_t nb = burrow_sampler_num_batches(s);
	cr_assert_eq(bw_loader_start(ld, &p, &rows, nb), 0, "%s", burrow_last_error());
	for (int64_t k = 0; k < nb; k++) {
		bw_loaded lb;
		cr_assert_eq(bw_loader_next(ld, &lb), 0, "%s", burrow_last_error());
		for (int l = 0; l < 2; l++) {
			const bw_block *b = lb.b.blocks[l];
			const burrow_block *sbl = &lb.sb->blocks[l];
			cr_assert(b->edge_weight && b->t_weight, "weights set before the transpose was built");
			for (int64_t e = 0; e < sbl->num_edges; e++)
				cr_assert_eq(b->edge_weight[e], ef[sbl->edge_ids[e] * DE + 1], "batch %lld block %d edge %lld",
					     (long long)k, l, (long long)e);
		}
		cr_assert_eq(bw_loader_done(ld), 0);
	}
	bw_loader_stop(ld);
	bw_loader_close(ld);
	burrow_sampler_close(s);
	bw_backend_release(&be);
	burrow_csr_builder_close(cb);
	free(ef);
}
