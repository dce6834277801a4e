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
	burrow_gen_defaults(&o, BURROW_GEN_IGBH + 1); /* no such kind */
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "unknown generator kind"), "%s", burrow_last_error());
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

/* ---------------------------------------------------------------- link datasets (edge splits) */

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0;
}

/* The entries of g as sorted (u, v) pairs [*m, 2] (caller frees); with upper, those with u < v. */
static int64_t *csr_pairs(const burrow_csr *g, bool upper, int64_t *m)
{
	int64_t *p = malloc((size_t)(g->num_edges + 1) * 2 * sizeof *p), k = 0;
	cr_assert(p);
	for (int64_t u = 0; u < g->num_nodes; u++)
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++)
			if (!upper || u < burrow_csr_index(g, j)) {
				p[2 * k] = u;
				p[2 * k + 1] = burrow_csr_index(g, j);
				k++;
			}
	*m = k;
	return p;
}

static bool has_pair(const int64_t *sorted, int64_t m, int64_t u, int64_t v)
{
	const int64_t key[2] = {u, v};
	return bsearch(key, sorted, (size_t)m, 2 * sizeof *sorted, cmp_pair) != NULL;
}

/* The three splits' positives of ds as pairs [*m, 2], each (min, max) unless directed, sorted
 * (caller frees); sizes[3] their counts. */
static int64_t *split_pairs(burrow_dataset *ds, bool directed, int64_t sizes[3], int64_t *m)
{
	burrow_edge_split sp[3];
	*m = 0;
	for (int s = 0; s < 3; s++) {
		cr_assert_eq(burrow_dataset_edge_split(ds, s, &sp[s]), 0, "%s", burrow_last_error());
		sizes[s] = sp[s].num_pos;
		*m += sp[s].num_pos;
	}
	int64_t *p = malloc((size_t)(*m + 1) * 2 * sizeof *p), k = 0;
	cr_assert(p);
	for (int s = 0; s < 3; s++)
		for (int64_t i = 0; i < sp[s].num_pos; i++, k++) {
			const int64_t u = sp[s].pos[2 * i], v = sp[s].pos[2 * i + 1];
			p[2 * k] = directed || u < v ? u : v;
			p[2 * k + 1] = directed || u < v ? v : u;
		}
	qsort(p, (size_t)*m, 2 * sizeof *p, cmp_pair);
	return p;
}

/* The training graph is the train positives (with their reverses unless directed), exactly. */
static void check_train_graph(burrow_dataset *ds, bool directed)
{
	burrow_edge_split tr;
	cr_assert_eq(burrow_dataset_edge_split(ds, BURROW_SPLIT_TRAIN, &tr), 0);
	const int64_t n = directed ? tr.num_pos : 2 * tr.num_pos;
	int64_t *want = malloc((size_t)(n + 1) * 2 * sizeof *want), m;
	for (int64_t i = 0, k = 0; i < tr.num_pos; i++) {
		want[2 * k] = tr.pos[2 * i];
		want[2 * k + 1] = tr.pos[2 * i + 1];
		k++;
		if (!directed) {
			want[2 * k] = tr.pos[2 * i + 1];
			want[2 * k + 1] = tr.pos[2 * i];
			k++;
		}
	}
	qsort(want, (size_t)n, 2 * sizeof *want, cmp_pair);
	int64_t *got = csr_pairs(burrow_dataset_graph(ds), false, &m);
	cr_assert_eq(m, n, "the graph holds %lld entries, the train positives make %lld", (long long)m, (long long)n);
	cr_assert(!memcmp(got, want, (size_t)n * 2 * sizeof *got), "the graph is not the training edges");
	free(want);
	free(got);
}

/* Valid's and test's negatives: per_source K in range, or pairs u != v that are no edge. */
static void check_negatives(burrow_dataset *ds, int K, bool directed, const int64_t *all, int64_t m)
{
	const int64_t N = burrow_dataset_get_info(ds)->num_nodes;
	for (int s = BURROW_SPLIT_VALID; s <= BURROW_SPLIT_TEST; s++) {
		burrow_edge_split e;
		cr_assert_eq(burrow_dataset_edge_split(ds, s, &e), 0);
		cr_assert_eq(e.neg, K ? BURROW_EDGE_NEG_PER_SOURCE : BURROW_EDGE_NEG_PAIRS);
		cr_assert_eq(e.metric, K ? BURROW_EDGE_METRIC_MRR : BURROW_EDGE_METRIC_HITS);
		cr_assert_eq(e.directed, directed);
		if (K) {
			cr_assert_eq(e.k, K);
			cr_assert_eq(e.num_neg, e.num_pos);
			for (int64_t i = 0; i < e.num_pos * K; i++)
				cr_assert(e.neg_dst[i] >= 0 && e.neg_dst[i] < N);
			continue;
		}
		cr_assert_eq(e.num_neg, e.num_pos);
		for (int64_t i = 0; i < e.num_neg; i++) {
			const int64_t u = e.neg_pairs[2 * i], v = e.neg_pairs[2 * i + 1];
			cr_assert(u >= 0 && u < N && v >= 0 && v < N && u != v, "negative (%lld, %lld)", (long long)u,
				  (long long)v);
			cr_assert(!has_pair(all, m, directed || u < v ? u : v, directed || u < v ? v : u),
				  "negative (%lld, %lld) is an edge", (long long)u, (long long)v);
		}
	}
}

/* One link dataset against the graph the same generator draws without a split (ref; NULL:
 * none): disjoint splits of the fractions' sizes whose union is ref's edge set, the graph
 * the training edges only, negatives in range. */
static void check_link(const char *dir, const char *ref, const double frac[3], int K, bool directed)
{
	burrow_dataset *ds, *rs = NULL;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	cr_assert(burrow_dataset_has_edge_split(ds));
	cr_assert_eq(burrow_dataset_get_info(ds)->symmetric, !directed);
	int64_t sizes[3], m;
	int64_t *all = split_pairs(ds, directed, sizes, &m);
	for (int64_t i = 0; i < m; i++) {
		cr_assert_neq(all[2 * i], all[2 * i + 1], "a loop among the positives");
		cr_assert(i == 0 || cmp_pair(all + 2 * i - 2, all + 2 * i) < 0, "an edge twice among the splits");
	}
	cr_assert_eq(sizes[0], llround(frac[0] * (double)m));
	cr_assert_eq(sizes[1], llround(frac[1] * (double)m));
	if (ref) { /* the union is the reference's edges (u < v), directed ones read both ways */
		cr_assert_eq(burrow_dataset_open(&rs, ref), 0, "%s", burrow_last_error());
		int64_t rm, um = 0;
		int64_t *r = csr_pairs(burrow_dataset_graph(rs), true, &rm), *u = malloc((size_t)(m + 1) * 2 * sizeof *u);
		for (int64_t i = 0; i < m; i++) {
			const int64_t a = all[2 * i] < all[2 * i + 1] ? all[2 * i] : all[2 * i + 1], b = all[2 * i] ^ all[2 * i + 1] ^ a;
			u[2 * i] = a;
			u[2 * i + 1] = b;
		}
		qsort(u, (size_t)m, 2 * sizeof *u, cmp_pair);
		for (int64_t i = 0; i < m; i++)
			if (i == 0 || cmp_pair(u + 2 * i - 2, u + 2 * i)) {
				u[2 * um] = u[2 * i];
				u[2 * um + 1] = u[2 * i + 1];
				um++;
			}
		cr_assert_eq(um, rm, "the splits hold %lld edges, the graph drawn without a split %lld", (long long)um,
			     (long long)rm);
		cr_assert(!memcmp(u, r, (size_t)rm * 2 * sizeof *u), "the splits' edges are not the graph's");
		free(r);
		free(u);
		burrow_dataset_close(rs);
	}
	check_train_graph(ds, directed);
	check_negatives(ds, K, directed, all, m);
	free(all);
	burrow_dataset_close(ds);
}

Test(gen, link_splits_equal_an_independent_reading)
{
	static const struct {
		int kind, K;
		bool directed;
		double frac[3];
	} C[] = {
		{BURROW_GEN_CSBM, 0, false, {0.8, 0.1, 0.1}},
		{BURROW_GEN_RMAT, 7, false, {0.7, 0.2, 0.1}},
		{BURROW_GEN_PAPERS, 0, true, {0.6, 0.25, 0.15}},
		{BURROW_GEN_PAPERS, 5, true, {0.9, 0.05, 0.05}},
	};
	for (size_t c = 0; c < sizeof C / sizeof C[0]; c++) {
		burrow_gen_opts o;
		burrow_gen_defaults(&o, C[c].kind);
		o.num_nodes = 2000;
		o.scale = 10;
		o.fraction = 1.0 / 32768;
		o.feat_dim = 4;
		o.seed = 3;
		o.spill_dir = tu_dir;
		char name[32];
		snprintf(name, sizeof name, "ref%zu", c);
		char *ref = gen(&o, name);
		memcpy(o.edge_split, C[c].frac, sizeof o.edge_split);
		o.neg_per_source = C[c].K;
		o.directed = C[c].directed;
		snprintf(name, sizeof name, "link%zu", c);
		char *dir = gen(&o, name);
		check_link(dir, ref, C[c].frac, C[c].K, C[c].directed);
		/* the features are those of the same graph without a split */
		char *fa = tu_path(dir, "features.npy"), *fb = tu_path(ref, "features.npy");
		cr_assert(same_file(fa, fb), "%s: features differ from the unsplit graph's", dir);
		free(fa);
		free(fb);
		free(ref);
		free(dir);
	}
}

/* citation2's shape: its sizes times the fraction, valid and test of 86,956 * F edges each
 * with 1000 per-source negatives, directed, no labels. */
Test(gen, citation2_has_its_shape)
{
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_CITATION2);
	o.fraction = 1.0 / 1024;
	char *dir = gen(&o, "c2");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_eq(in->num_nodes, llround(2927963.0 / 1024));
	cr_assert_eq(in->feat_dim, 128);
	cr_assert_eq(in->feat_dtype, BURROW_DTYPE_F32);
	cr_assert_eq(in->num_classes, 0);
	int64_t sizes[3], m;
	int64_t *all = split_pairs(ds, true, sizes, &m);
	const int64_t e = llround(86956.0 / 1024), drawn = llround(30561187.0 / 1024);
	cr_assert_eq(sizes[1], e);
	cr_assert_eq(sizes[2], e);
	/* repeats among the hubs drop more edges at small fractions (0.14% at F = 1, 22% here) */
	cr_assert(m <= drawn && m > drawn * 3 / 4, "%lld edges of %lld drawn", (long long)m, (long long)drawn);
	free(all);
	burrow_dataset_close(ds);
	const double frac[3] = {(double)(m - 2 * e) / (double)m, (double)e / (double)m, (double)e / (double)m};
	check_link(dir, NULL, frac, 1000, true);
	free(dir);
}

Test(gen, link_same_seed_same_bytes_whatever_the_threads)
{
	static const char *const F[] = {"indptr.npy", "indices.npy", "features.npy", "meta.json",
					"edge_split/train_pos.npy", "edge_split/valid_pos.npy", "edge_split/test_pos.npy",
					"edge_split/valid_neg_dst.npy", "edge_split/test_neg_dst.npy"};
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_CITATION2);
	o.fraction = 1.0 / 4096;
	o.threads = 1;
	char *a = gen(&o, "l1");
	o.threads = 2;
	char *b = gen(&o, "l2");
	o.seed = 1;
	char *c = gen(&o, "l3");
	for (size_t i = 0; i < sizeof F / sizeof F[0]; i++) {
		char *fa = tu_path(a, "%s", F[i]), *fb = tu_path(b, "%s", F[i]), *fc = tu_path(c, "%s", F[i]);
		cr_assert(same_file(fa, fb), "%s differs between 1 and 2 threads", fa);
		if (strcmp(F[i], "meta.json"))
			cr_assert(!same_file(fa, fc), "%s is the same for seeds 0 and 1", fa);
		free(fa);
		free(fb);
		free(fc);
	}
	free(a);
	free(b);
	free(c);
}

Test(gen, link_bad_options_refused)
{
	static const char *const why[] = {"fractions", "fractions", "homogeneous", "link datasets", "link datasets",
					  "negatives per source"};
	char *p = tu_path(tu_dir, "x");
	for (int i = 0; i < 6; i++) {
		burrow_gen_opts o;
		burrow_gen_defaults(&o, i == 2 ? BURROW_GEN_HSBM : BURROW_GEN_CSBM);
		o.num_nodes = 100;
		const double f[6][3] = {{-0.1, 0.5, 0.5}, {0.8, 0.2, 0.2}, {0.8, 0.1, 0.1}, {0}, {0}, {0.8, 0.1, 0.1}};
		memcpy(o.edge_split, f[i], sizeof o.edge_split);
		o.directed = i == 3;
		o.neg_per_source = i == 4 ? 3 : i == 5 ? -1 : 0;
		cr_assert_eq(burrow_gen(&o, p), BURROW_E_INVAL, "case %d", i);
		cr_assert(strstr(burrow_last_error(), why[i]), "case %d: %s", i, burrow_last_error());
		cr_assert(!tu_exists(p));
	}
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

/* Edge features follow the generated graph's entries; an edge split rewrites that graph into its
 * training edges: the two together are refused, nothing written. */
Test(gen, edge_features_with_an_edge_split_refused)
{
	char *p = tu_path(tu_dir, "ef-split");
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	o.num_nodes = 200;
	o.edge_feat_dim = 4;
	o.edge_split[0] = 0.8, o.edge_split[1] = 0.1, o.edge_split[2] = 0.1;
	cr_assert_eq(burrow_gen(&o, p), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "edge features and an edge split together"), "%s", burrow_last_error());
	cr_assert(!tu_exists(p));
	free(p);
}
