/* test_gen.c: synthetic generators: deterministic bytes, and the statistics they promise. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/half.h"
#include "../graph/npy.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(gen, 120);

static const char *const FILES[] = {"indptr.npy", "indices.npy", "features.npy", "labels.npy",
				    "split/train.npy", "split/valid.npy", "split/test.npy", "meta.json"};

static bool same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = tu_read(a, &la), *y = tu_read(b, &lb);
	bool same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

static char *gen(const burrow_gen_opts *o, const char *name)
{
	char *p = tu_path(tu_dir, "%s", name);
	cr_assert_eq(burrow_gen(o, p), 0, "%s", burrow_last_error());
	return p;
}

Test(gen, same_seed_same_bytes_whatever_the_threads)
{
	for (int kind = BURROW_GEN_CSBM; kind <= BURROW_GEN_RMAT; kind++) {
		burrow_gen_opts o;
		burrow_gen_defaults(&o, kind);
		o.num_nodes = 3000;
		o.scale = 11;
		o.feat_dim = 5; /* odd: exercises the last unpaired normal */
		o.threads = 1;
		char *a = gen(&o, kind == BURROW_GEN_CSBM ? "c1" : "r1");
		o.threads = 2;
		char *b = gen(&o, kind == BURROW_GEN_CSBM ? "c2" : "r2");
		o.seed = 1;
		char *c = gen(&o, kind == BURROW_GEN_CSBM ? "c3" : "r3");
		for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
			char *fa = tu_path(a, "%s", FILES[i]), *fb = tu_path(b, "%s", FILES[i]),
			     *fc = tu_path(c, "%s", FILES[i]);
			cr_assert(same_file(fa, fb), "%s differs between 1 and 2 threads", fa);
			if (strcmp(FILES[i], "meta.json"))
				cr_assert(!same_file(fa, fc), "%s is the same for seeds 0 and 1", fa);
			free(fa);
			free(fb);
			free(fc);
		}
		free(a);
		free(b);
		free(c);
	}
}

typedef struct stats {
	int64_t n, e, intra, loops;
	int64_t class_count[64];
} stats;

static stats graph_stats(burrow_dataset *ds)
{
	stats s = {0};
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const burrow_csr *g = burrow_dataset_graph(ds);
	const int32_t *y = burrow_dataset_labels(ds);
	s.n = in->num_nodes;
	s.e = in->num_edges;
	for (int64_t u = 0; u < s.n; u++) {
		s.class_count[y[u]]++;
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++) {
			int64_t v = burrow_csr_index(g, j);
			s.intra += y[u] == y[v];
			s.loops += u == v;
		}
	}
	return s;
}

Test(gen, csbm_has_the_requested_degree_homophily_and_balance)
{
	const double hs[] = {0.9, 0.3};
	for (int t = 0; t < 2; t++) {
		burrow_gen_opts o;
		burrow_gen_defaults(&o, BURROW_GEN_CSBM);
		o.num_nodes = 20000;
		o.avg_degree = 12;
		o.homophily = hs[t];
		o.num_classes = 5;
		o.feat_dim = 4;
		char name[8];
		snprintf(name, sizeof name, "h%d", t);
		char *p = gen(&o, name);
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, p), 0);
		cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
		stats s = graph_stats(ds);
		/* mean degree: N*d/2 undirected edges less the rare repeats and loops */
		double mean = (double)s.e / (double)s.n;
		cr_assert(mean > 0.98 * o.avg_degree && mean <= o.avg_degree, "mean degree %.3f", mean);
		cr_assert_eq(s.loops, 0);
		/* homophily: the binomial standard error here is about 0.002 */
		double h = (double)s.intra / (double)s.e;
		cr_assert(fabs(h - o.homophily) < 0.01, "homophily %.4f, wanted %.2f", h, o.homophily);
		/* class balance: each count within 5 standard deviations of N/C */
		double p0 = 1.0 / o.num_classes, sd = sqrt(s.n * p0 * (1 - p0));
		for (int c = 0; c < o.num_classes; c++)
			cr_assert(fabs((double)s.class_count[c] - s.n * p0) < 5 * sd, "class %d has %lld nodes", c,
				  (long long)s.class_count[c]);
		/* split: 60/20/20, disjoint (verify checked), covering every node */
		const burrow_dataset_info *in = burrow_dataset_get_info(ds);
		cr_assert_eq(in->num_train, 12000);
		cr_assert_eq(in->num_valid, 4000);
		cr_assert_eq(in->num_test, 4000);
		burrow_dataset_close(ds);
		free(p);
	}
}

/* Features: x = mu[c] + N(0, I) with ||mu[c]|| about `signal`: check the noise variance,
 * and that class means are `signal` long and far apart (different classes). */
Test(gen, features_carry_the_class_signal)
{
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	o.num_nodes = 16000;
	o.num_classes = 4;
	o.feat_dim = 64;
	o.signal = 3.0;
	char *p = gen(&o, "f");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0);
	bw_npy h;
	float *x;
	cr_assert_eq(bw_npy_load(burrow_dataset_features_path(ds), &h, (void **)&x), 0);
	const int32_t *y = burrow_dataset_labels(ds);
	const int D = 64, C = 4;
	double mean[4][64] = {{0}}, cnt[4] = {0}, var = 0;
	for (int64_t v = 0; v < o.num_nodes; v++) {
		cnt[y[v]]++;
		for (int j = 0; j < D; j++)
			mean[y[v]][j] += x[v * D + j];
	}
	for (int c = 0; c < C; c++)
		for (int j = 0; j < D; j++)
			mean[c][j] /= cnt[c];
	for (int64_t v = 0; v < o.num_nodes; v++)
		for (int j = 0; j < D; j++) {
			double r = x[v * D + j] - mean[y[v]][j];
			var += r * r;
		}
	var /= (double)o.num_nodes * D;
	cr_assert(fabs(var - 1.0) < 0.02, "noise variance %.4f", var);
	for (int c = 0; c < C; c++) {
		double norm2 = 0;
		for (int j = 0; j < D; j++)
			norm2 += mean[c][j] * mean[c][j];
		/* ||mu||^2 is chi-square with D dof scaled by s^2/D: within 60% of s^2 for D = 64,
		 * plus D/count from the noise in the estimate */
		cr_assert(norm2 > 0.4 * 9 && norm2 < 1.6 * 9 + 0.1, "class %d mean norm^2 %.3f", c, norm2);
	}
	bw_free(x);
	burrow_dataset_close(ds);
	free(p);
}

Test(gen, float16_features_are_the_float32_ones_rounded)
{
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_RMAT);
	o.scale = 8;
	o.feat_dim = 9;
	char *a = gen(&o, "f32");
	o.feat_dtype = BURROW_DTYPE_F16;
	char *b = gen(&o, "f16");
	char *fa = tu_path(a, "features.npy"), *fb = tu_path(b, "features.npy");
	bw_npy ha, hb;
	float *x;
	uint16_t *z;
	cr_assert_eq(bw_npy_load(fa, &ha, (void **)&x), 0);
	cr_assert_eq(bw_npy_load(fb, &hb, (void **)&z), 0);
	cr_assert_eq(hb.dtype, BURROW_DTYPE_F16);
	cr_assert_eq(hb.data_offset, 4096);
	for (int64_t i = 0; i < bw_npy_count(&ha); i++)
		cr_assert_eq(z[i], bw_f32_to_f16(x[i]), "element %lld", (long long)i);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, b), 0);
	cr_assert_eq(burrow_dataset_get_info(ds)->feat_dtype, BURROW_DTYPE_F16);
	burrow_dataset_close(ds);
	bw_free(x);
	bw_free(z);
	free(fa);
	free(fb);
	free(a);
	free(b);
}

Test(gen, rmat_is_symmetric_skewed_and_sized)
{
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_RMAT);
	o.scale = 14;
	o.edge_factor = 8;
	o.feat_dim = 2;
	char *p = gen(&o, "r");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0);
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const burrow_csr *g = burrow_dataset_graph(ds);
	const int64_t n = 1 << 14, m = 8 * n;
	cr_assert_eq(in->num_nodes, n);
	cr_assert(in->symmetric);
	/* at most both directions of every generated edge; R-MAT repeats edges, but not most */
	cr_assert(in->num_edges <= 2 * m && in->num_edges > m, "%lld entries for %lld edges",
		  (long long)in->num_edges, (long long)m);
	int64_t dmax = 0, isolated = 0;
	for (int64_t v = 0; v < n; v++) {
		int64_t d = g->indptr[v + 1] - g->indptr[v];
		dmax = d > dmax ? d : dmax;
		isolated += d == 0;
		for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++)
			cr_assert_neq(burrow_csr_index(g, j), v, "self-loop at %lld", (long long)v);
	}
	double mean = (double)in->num_edges / n;
	/* a=0.57 gives a heavy tail: the largest degree is far above the mean (uniform random
	 * graphs of this size stay under 3x), and many nodes are isolated */
	cr_assert(dmax > 20 * mean, "max degree %lld, mean %.1f", (long long)dmax, mean);
	cr_assert(isolated > n / 20, "only %lld isolated nodes", (long long)isolated);
	burrow_dataset_close(ds);
	free(p);
}

Test(gen, bad_options_refused)
{
	burrow_gen_opts o;
	char *p = tu_path(tu_dir, "x");
	burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	o.homophily = 1.5;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "homophily"), "%s", burrow_last_error());
	burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	o.num_classes = 0;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	burrow_gen_defaults(&o, BURROW_GEN_RMAT);
	o.a = 0.9;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	burrow_gen_defaults(&o, 7);
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(!tu_exists(p));
	free(p);
}

/* ---------------------------------------------------------------- papers100M-shaped */

/* ogbn-papers100M's sizes as OGB publishes them; the generator scales each by the fraction. */
static const double REF_PAPERS_NODES = 111059956, REF_PAPERS_EDGES = 1615685872;
static const double REF_PAPERS_SPLIT[3] = {1207179, 125265, 214338};

static char *gen_papers(double fraction, double homophily, int threads, size_t mem, uint64_t seed, const char *name)
{
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_PAPERS);
	o.fraction = fraction;
	o.homophily = homophily;
	o.threads = threads;
	o.mem_bytes = mem;
	o.seed = seed;
	o.spill_dir = tu_dir;
	return gen(&o, name);
}

Test(gen, papers_same_seed_same_bytes_whatever_the_threads_and_the_budget)
{
	const double f = 1.0 / 16384;
	char *a = gen_papers(f, 0.6, 1, 0, 0, "p1");
	char *b = gen_papers(f, 0.6, 2, (size_t)256 << 10, 0, "p2"); /* a budget small enough to spill runs */
	char *c = gen_papers(f, 0.6, 2, 0, 1, "p3");
	for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
		char *fa = tu_path(a, "%s", FILES[i]), *fb = tu_path(b, "%s", FILES[i]), *fc = tu_path(c, "%s", FILES[i]);
		cr_assert(same_file(fa, fb), "%s differs between 1 thread in memory and 2 threads spilling", fa);
		if (strcmp(FILES[i], "meta.json"))
			cr_assert(!same_file(fa, fc), "%s is the same for seeds 0 and 1", fa);
		free(fa);
		free(fb);
		free(fc);
	}
	free(a);
	free(b);
	free(c);
}

Test(gen, papers_has_the_sizes_splits_labels_and_a_power_law)
{
	const double f = 1.0 / 2048;
	char *p = gen_papers(f, 0.6, 0, (size_t)1 << 20, 0, "p");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const int64_t n = llround(REF_PAPERS_NODES * f), m = llround(REF_PAPERS_EDGES * f);
	cr_assert_eq(in->num_nodes, n);
	cr_assert_eq(in->feat_dim, 128);
	cr_assert_eq(in->feat_dtype, BURROW_DTYPE_F16);
	cr_assert_eq(in->num_classes, 172);
	cr_assert(in->symmetric);
	/* both directions of each drawn edge, less loops and repeats (hubs repeat some) */
	cr_assert(in->num_edges <= 2 * m && in->num_edges > 2 * m * 9 / 10, "%lld entries for %lld edges",
		  (long long)in->num_edges, (long long)m);
	/* splits: exactly the scaled sizes; labels: a class on split nodes, -1 everywhere else */
	const int32_t *y = burrow_dataset_labels(ds);
	char *in_split = calloc((size_t)n, 1);
	int64_t got[3];
	for (int s = 0; s < 3; s++) {
		const int64_t *ids = burrow_dataset_split(ds, s, &got[s]);
		cr_assert_eq(got[s], llround(REF_PAPERS_SPLIT[s] * f), "split %d has %lld nodes", s, (long long)got[s]);
		for (int64_t i = 0; i < got[s]; i++) {
			cr_assert_eq(in_split[ids[i]], 0, "node %lld in two splits", (long long)ids[i]);
			in_split[ids[i]] = 1;
		}
	}
	for (int64_t v = 0; v < n; v++)
		if (in_split[v])
			cr_assert(y[v] >= 0 && y[v] < 172, "split node %lld has label %d", (long long)v, y[v]);
		else
			cr_assert_eq(y[v], -1, "unlabelled node %lld has label %d", (long long)v, y[v]);
	/* power law: with expected degrees falling as rank^(-1/2), about 1/64 of the nodes have
	 * more than 4x the mean degree and the largest is near sqrt(N)/2 x the mean; a uniform
	 * random graph of this mean (29) has none above 4x */
	const burrow_csr *g = burrow_dataset_graph(ds);
	const double mean = (double)in->num_edges / (double)n;
	int64_t dmax = 0, heavy = 0;
	for (int64_t v = 0; v < n; v++) {
		int64_t d = g->indptr[v + 1] - g->indptr[v];
		dmax = d > dmax ? d : dmax;
		heavy += (double)d > 4 * mean;
	}
	cr_assert(dmax > 20 * mean, "max degree %lld, mean %.1f", (long long)dmax, mean);
	cr_assert(heavy > n / 200 && heavy < n / 30, "%lld of %lld nodes above 4x the mean", (long long)heavy,
		  (long long)n);
	free(in_split);
	burrow_dataset_close(ds);
	free(p);
}

/* Homophily, seen on edges between labelled nodes: near h + (1 - h) / C with h = 0.6, near
 * 1/C with h = 0. */
Test(gen, papers_edges_follow_the_planted_classes)
{
	const double hs[] = {0.6, 0.0};
	double seen[2];
	for (int t = 0; t < 2; t++) {
		char name[8];
		snprintf(name, sizeof name, "h%d", t);
		char *p = gen_papers(1.0 / 1024, hs[t], 0, 0, 0, name);
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
		const burrow_csr *g = burrow_dataset_graph(ds);
		const int32_t *y = burrow_dataset_labels(ds);
		int64_t both = 0, same = 0;
		for (int64_t u = 0; u < g->num_nodes; u++)
			for (int64_t j = g->indptr[u]; y[u] >= 0 && j < g->indptr[u + 1]; j++) {
				int64_t v = burrow_csr_index(g, j);
				both += y[v] >= 0;
				same += y[v] == y[u];
			}
		cr_assert(both > 200, "only %lld edges between labelled nodes", (long long)both);
		seen[t] = (double)same / (double)both;
		burrow_dataset_close(ds);
		free(p);
	}
	cr_assert(seen[0] > 0.4 && seen[0] < 0.8, "homophily %.3f with h = 0.6", seen[0]);
	cr_assert(seen[1] < 0.05, "homophily %.3f with h = 0", seen[1]);
}

Test(gen, papers_bad_options_refused)
{
	burrow_gen_opts o;
	char *p = tu_path(tu_dir, "x");
	burrow_gen_defaults(&o, BURROW_GEN_PAPERS);
	o.fraction = 0;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "fraction"), "%s", burrow_last_error());
	o.fraction = 1e-7; /* the valid split would be empty */
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "valid split"), "%s", burrow_last_error());
	burrow_gen_defaults(&o, BURROW_GEN_PAPERS);
	o.fraction = 1.0 / 16384;
	o.homophily = -0.1;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(!tu_exists(p));
	free(p);
}

/* gen csbm --edge-feat-dim: the same seed gives the same bytes whatever the threads; the
 * graph, features, labels and splits are those of the run without edge features (the same
 * streams); both directions of an edge carry one row; column 0 says whether the edge joins
 * two nodes of one class (+signal, else -signal, plus unit noise); --node-features-from-edges
 * mean writes each node's mean row. */
static const void *map_array(const char *dir, const char *name, bw_npy *h, bw_npy_map *m)
{
	char *p = tu_path(dir, "%s", name);
	cr_assert_eq(bw_npy_mmap(p, h, m), 0, "%s", burrow_last_error());
	free(p);
	return m->data;
}

Test(gen, csbm_edge_features_follow_their_edges_and_carry_the_class_signal)
{
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	o.num_nodes = 1200;
	o.avg_degree = 12;
	o.homophily = 0.5;
	o.feat_dim = 5;
	o.num_classes = 4;
	char *plain = gen(&o, "ef0");
	o.edge_feat_dim = 3;
	o.edge_signal = 2.0;
	o.threads = 1;
	char *a = gen(&o, "ef1");
	o.threads = 2;
	char *b = gen(&o, "ef2");
	for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
		char *fa = tu_path(a, "%s", FILES[i]), *fb = tu_path(b, "%s", FILES[i]), *f0 = tu_path(plain, "%s", FILES[i]);
		cr_assert(same_file(fa, fb), "%s differs between 1 and 2 threads", fa);
		if (strcmp(FILES[i], "meta.json"))
			cr_assert(same_file(fa, f0), "%s differs from the run without edge features", fa);
		free(fa);
		free(fb);
		free(f0);
	}
	char *ea = tu_path(a, "edge_features.npy"), *eb = tu_path(b, "edge_features.npy");
	cr_assert(same_file(ea, eb), "edge_features.npy differs between 1 and 2 threads");
	free(ea);
	free(eb);
	bw_npy hp, hi, he, hl;
	bw_npy_map mp, mi, me, ml;
	const int64_t *ip = map_array(a, "indptr.npy", &hp, &mp);
	const int32_t *ix = map_array(a, "indices.npy", &hi, &mi), *y = map_array(a, "labels.npy", &hl, &ml);
	const float *ef = map_array(a, "edge_features.npy", &he, &me);
	const int64_t n = o.num_nodes, de = 3, ne = ip[n];
	cr_assert(he.shape[0] == ne && he.shape[1] == de && he.dtype == BURROW_DTYPE_F32);
	double s_in = 0, s_out = 0;
	int64_t c_in = 0, c_out = 0;
	for (int64_t u = 0; u < n; u++)
		for (int64_t p = ip[u]; p < ip[u + 1]; p++) {
			const int64_t v = ix[p];
			int64_t q = ip[v]; /* the reverse entry (v, u): rows are sorted */
			while (q < ip[v + 1] && ix[q] < u)
				q++;
			cr_assert(q < ip[v + 1] && ix[q] == u, "entry (%lld, %lld) has no reverse", (long long)u, (long long)v);
			cr_assert(!memcmp(ef + p * de, ef + q * de, (size_t)de * sizeof *ef), "(%lld, %lld) and its reverse differ",
				  (long long)u, (long long)v);
			if (y[u] == y[v]) {
				s_in += ef[p * de];
				c_in++;
			} else {
				s_out += ef[p * de];
				c_out++;
			}
		}
	cr_assert(c_in > 1000 && c_out > 1000);
	cr_assert(fabs(s_in / (double)c_in - 2.0) < 0.15 && fabs(s_out / (double)c_out + 2.0) < 0.15,
		  "column 0: %g within classes, %g across (want +2, -2)", s_in / (double)c_in, s_out / (double)c_out);
	/* node features from the edge features' mean */
	o.node_features_from_edges = true;
	o.edge_reduce = BURROW_EDGE_REDUCE_MEAN;
	char *c = gen(&o, "ef3");
	bw_npy hx;
	bw_npy_map mx;
	const float *x = map_array(c, "features.npy", &hx, &mx);
	cr_assert(hx.shape[0] == n && hx.shape[1] == de);
	for (int64_t v = 0; v < n; v++)
		for (int64_t k = 0; k < de; k++) {
			double s = 0;
			for (int64_t p = ip[v]; p < ip[v + 1]; p++)
				s += ef[p * de + k];
			const double want = ip[v + 1] > ip[v] ? s / (double)(ip[v + 1] - ip[v]) : 0;
			cr_assert(fabs(x[v * de + k] - want) <= 1e-5 * (1 + fabs(want)), "node %lld: %g, mean %g", (long long)v,
				  (double)x[v * de + k], want);
		}
	o.node_features_from_edges = false;
	o.edge_feat_dim = 0;
	o.edge_signal = 1.0;
	o.node_features_from_edges = true;
	char *p = tu_path(tu_dir, "ef4");
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL, "node features from edges without edge features");
	free(p);
	bw_npy_unmap(&mp);
	bw_npy_unmap(&mi);
	bw_npy_unmap(&ml);
	bw_npy_unmap(&me);
	bw_npy_unmap(&mx);
	free(plain);
	free(a);
	free(b);
	free(c);
}
