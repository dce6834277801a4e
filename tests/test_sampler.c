/* test_sampler.c: the neighbor sampler: sampled neighbors are real, distinct and as many
 * as they should be; uniformity (chi-square); block structure; epochs; determinism over
 * threads and producers; full-neighbor blocks; refusals and failing allocations; every
 * registered sampler backend (the GPU's) equal to the CPU's batch by batch. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "../core/internal.h"
#include "../graph/dataset_internal.h"
#include "../sampler/sampler_internal.h"
#include "util.h"

#include <dirent.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

TU_SCRATCH_SUITE(sampler, 120);

/* ------------------------------------------------------------ graphs */

/* A built graph: the builder owns the arrays. */
typedef struct tgraph {
	burrow_csr_builder *b;
	burrow_csr g;
} tgraph;

static void tgraph_build(tgraph *t, int64_t n, const int64_t *src, const int64_t *dst, size_t m, bool symmetrize)
{
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	o.symmetrize = symmetrize;
	cr_assert_eq(burrow_csr_builder_open(&t->b, n, &o), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_csr_builder_add(t->b, src, dst, m), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_csr_builder_finish(t->b, &t->g), 0, "%s", burrow_last_error());
}

static void tgraph_free(tgraph *t) { burrow_csr_builder_close(t->b); }

/* Node 0 joined to leaves 1 .. leaves. */
static void star(tgraph *t, int64_t leaves)
{
	int64_t *s = malloc((size_t)leaves * sizeof *s), *d = malloc((size_t)leaves * sizeof *d);
	for (int64_t i = 0; i < leaves; i++) {
		s[i] = 0;
		d[i] = i + 1;
	}
	tgraph_build(t, leaves + 1, s, d, (size_t)leaves, true);
	free(s);
	free(d);
}

/* A skewed random graph: node i links to i+1 (a path, so few nodes are isolated) and
 * m random pairs with one end drawn from a small set of hubs half of the time. */
static void skewed(tgraph *t, int64_t n, int64_t m, uint64_t seed)
{
	int64_t *s = malloc((size_t)(m + n) * sizeof *s), *d = malloc((size_t)(m + n) * sizeof *d);
	bw_rng r;
	bw_rng_seed(&r, seed);
	size_t k = 0;
	for (int64_t i = 0; i + 1 < n; i++, k++) {
		s[k] = i;
		d[k] = i + 1;
	}
	for (int64_t i = 0; i < m; i++, k++) {
		s[k] = (int64_t)bw_rng_below(&r, (uint64_t)(bw_rng_below(&r, 2) ? 16 : n));
		d[k] = (int64_t)bw_rng_below(&r, (uint64_t)n);
	}
	tgraph_build(t, n, s, d, k, true);
	free(s);
	free(d);
}

static int64_t degree(const burrow_csr *g, int64_t v) { return g->indptr[v + 1] - g->indptr[v]; }

/* Is u in row v? (rows are sorted) */
static bool has_edge(const burrow_csr *g, int64_t v, int64_t u)
{
	int64_t lo = g->indptr[v], hi = g->indptr[v + 1];
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2, x = burrow_csr_index(g, mid);
		if (x == u)
			return true;
		if (x < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* ------------------------------------------------------------ the invariants of a batch */

/* Everything a batch promises, checked against the graph: structure, real and distinct
 * neighbors, counts min(fanout, degree), whole rows where the fanout covers them. */
static void check_batch_star(const burrow_csr *g, const burrow_batch *b, int L, const int *fanouts,
			     const int64_t *seeds, int64_t n, bool star);

static void check_batch(const burrow_csr *g, const burrow_batch *b, int L, const int *fanouts, const int64_t *seeds,
			int64_t n)
{
	check_batch_star(g, b, L, fanouts, seeds, n, false);
}

/* LABOR-*'s weights of block l's row i [lo, hi) of degree d above the fanout: positive, summing
 * to the count; a row taken whole (sampled or not) has weights 1. */
static void check_star_weights(const burrow_block *k, int l, int64_t lo, int64_t hi, bool whole)
{
	double sum = 0;
	for (int64_t j = lo; j < hi; j++) {
		cr_assert(k->edge_weight[j] > 0, "block %d: weight %g", l, (double)k->edge_weight[j]);
		cr_assert(!whole || k->edge_weight[j] == 1.0f, "block %d: a whole row's weight is %g", l,
			  (double)k->edge_weight[j]);
		sum += k->edge_weight[j];
	}
	cr_assert(fabs(sum - (double)(hi - lo)) <= 1e-4 * (double)(hi - lo), "block %d: weights sum to %g over %lld edges",
		  l, sum, (long long)(hi - lo));
}

/* check_batch; star: LABOR-*'s batch, whose rows above the fanout keep any count up to their
 * degree, with weights (check_star_weights). */
static void check_batch_star(const burrow_csr *g, const burrow_batch *b, int L, const int *fanouts,
			     const int64_t *seeds, int64_t n, bool star)
{
	cr_assert_eq(b->num_layers, L);
	cr_assert_eq(b->num_seeds, n);
	cr_assert_eq(b->seeds, b->input_ids, "seeds are the first input ids");
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(b->seeds[i], seeds[i], "seed %lld is %lld, want %lld", (long long)i, (long long)b->seeds[i],
			     (long long)seeds[i]);
	cr_assert_eq(b->blocks[L - 1].num_dst, n, "the output block's destinations are the seeds");
	cr_assert_eq(b->blocks[0].num_src, b->num_input, "the input block's sources are the input nodes");

	/* input ids: distinct node ids */
	int64_t *ids = malloc((size_t)b->num_input * sizeof *ids);
	memcpy(ids, b->input_ids, (size_t)b->num_input * sizeof *ids);
	qsort(ids, (size_t)b->num_input, sizeof *ids, cmp64);
	for (int64_t i = 0; i < b->num_input; i++) {
		cr_assert(ids[i] >= 0 && ids[i] < g->num_nodes, "input id %lld is not a node", (long long)ids[i]);
		cr_assert(i == 0 || ids[i] != ids[i - 1], "input id %lld appears twice", (long long)ids[i]);
	}
	free(ids);

	char *used = malloc((size_t)BW_MAX(b->num_input, 1) & 0xffffffffu);
	for (int l = 0; l < L; l++) {
		const burrow_block *k = &b->blocks[l];
		if (l < L - 1)
			cr_assert_eq(b->blocks[l + 1].num_src, k->num_dst,
				     "block %d's destinations are block %d's sources", l, l + 1);
		cr_assert(k->num_src >= k->num_dst, "block %d: fewer sources than destinations", l);
		cr_assert_eq(k->indptr[0], 0);
		cr_assert_eq(k->indptr[k->num_dst], k->num_edges);
		memset(used, 0, (size_t)b->num_input);
		for (int64_t i = 0; i < k->num_dst; i++) {
			const int64_t v = b->input_ids[i], d = degree(g, v), lo = k->indptr[i], hi = k->indptr[i + 1];
			const int64_t want = fanouts[l] < 0 || d <= fanouts[l] ? d : star && hi - lo <= d ? hi - lo : fanouts[l];
			cr_assert(hi >= lo, "block %d row %lld: offsets go down", l, (long long)i);
			cr_assert_eq(hi - lo, want, "block %d: node %lld of degree %lld got %lld neighbors, want %lld", l,
				     (long long)v, (long long)d, (long long)(hi - lo), (long long)want);
			cr_assert_eq(k->edge_weight != NULL, star && fanouts[l] >= 0, "block %d: weights only with LABOR-*", l);
			if (k->edge_weight)
				check_star_weights(k, l, lo, hi, d <= fanouts[l]);
			for (int64_t j = lo; j < hi; j++) {
				const int32_t x = k->indices[j];
				cr_assert(x >= 0 && x < k->num_src, "block %d: local id %d outside [0, %lld)", l, x,
					  (long long)k->num_src);
				const int64_t u = b->input_ids[x];
				cr_assert(has_edge(g, v, u), "block %d: %lld is not a neighbor of %lld", l, (long long)u,
					  (long long)v);
				if (j > lo)
					cr_assert(b->input_ids[k->indices[j - 1]] < u,
						  "block %d: row of %lld repeats or is out of order at %lld", l, (long long)v,
						  (long long)u);
				used[x] = 1;
			}
			if (want == d && (!star || fanouts[l] < 0 || d <= fanouts[l])) /* the whole row */
				for (int64_t j = 0; j < d; j++)
					cr_assert_eq(b->input_ids[k->indices[lo + j]], burrow_csr_index(g, g->indptr[v] + j));
		}
		/* sources beyond the destinations: each some row's neighbor, in increasing global id */
		for (int64_t x = k->num_dst; x < k->num_src; x++) {
			cr_assert(used[x], "block %d: source %lld is nobody's neighbor", l, (long long)x);
			if (x > k->num_dst)
				cr_assert(b->input_ids[x - 1] < b->input_ids[x], "block %d: new sources not in id order", l);
		}
	}
	free(used);
}

/* Two batches are the same, array by array. */
static void same_batch(const burrow_batch *a, const burrow_batch *b)
{
	cr_assert_eq(a->epoch, b->epoch);
	cr_assert_eq(a->index, b->index);
	cr_assert_eq(a->num_layers, b->num_layers);
	cr_assert_eq(a->num_seeds, b->num_seeds);
	cr_assert_eq(a->num_input, b->num_input, "batch %lld: %lld vs %lld input nodes", (long long)a->index,
		     (long long)a->num_input, (long long)b->num_input);
	cr_assert(!memcmp(a->input_ids, b->input_ids, (size_t)a->num_input * sizeof(int64_t)), "batch %lld: input ids differ",
		  (long long)a->index);
	for (int l = 0; l < a->num_layers; l++) {
		const burrow_block *x = &a->blocks[l], *y = &b->blocks[l];
		cr_assert_eq(x->num_dst, y->num_dst);
		cr_assert_eq(x->num_src, y->num_src);
		cr_assert_eq(x->num_edges, y->num_edges);
		cr_assert(!memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * sizeof(int64_t)));
		cr_assert(!memcmp(x->indices, y->indices, (size_t)x->num_edges * sizeof(int32_t)),
			  "batch %lld block %d: indices differ", (long long)a->index, l);
		cr_assert_eq(!x->edge_weight, !y->edge_weight);
		cr_assert(!x->edge_weight || !memcmp(x->edge_weight, y->edge_weight, (size_t)x->num_edges * sizeof(float)),
			  "batch %lld block %d: weights differ", (long long)a->index, l);
	}
}

/* A batch copied out of the sampler (so that it can be compared after release). */
typedef struct saved {
	burrow_batch b;
	int64_t *ids;
	int64_t *indptr[BURROW_MAX_LAYERS];
	int32_t *indices[BURROW_MAX_LAYERS];
	float *ew[BURROW_MAX_LAYERS];
} saved;

static void save(saved *s, const burrow_batch *b)
{
	s->b = *b;
	s->ids = malloc((size_t)b->num_input * sizeof *s->ids);
	memcpy(s->ids, b->input_ids, (size_t)b->num_input * sizeof *s->ids);
	s->b.input_ids = s->b.seeds = s->ids;
	for (int l = 0; l < b->num_layers; l++) {
		const burrow_block *k = &b->blocks[l];
		s->indptr[l] = malloc((size_t)(k->num_dst + 1) * sizeof(int64_t));
		s->indices[l] = malloc((size_t)BW_MAX(k->num_edges, 1) * sizeof(int32_t));
		memcpy(s->indptr[l], k->indptr, (size_t)(k->num_dst + 1) * sizeof(int64_t));
		memcpy(s->indices[l], k->indices, (size_t)k->num_edges * sizeof(int32_t));
		s->b.blocks[l].indptr = s->indptr[l];
		s->b.blocks[l].indices = s->indices[l];
		s->ew[l] = NULL;
		if (k->edge_weight) {
			s->ew[l] = malloc((size_t)BW_MAX(k->num_edges, 1) * sizeof(float));
			memcpy(s->ew[l], k->edge_weight, (size_t)k->num_edges * sizeof(float));
		}
		s->b.blocks[l].edge_weight = s->ew[l];
	}
}

static void unsave(saved *s)
{
	free(s->ids);
	for (int l = 0; l < s->b.num_layers; l++) {
		free(s->indptr[l]);
		free(s->indices[l]);
		free(s->ew[l]);
	}
}

/* Every batch of one epoch, saved; returns the count. */
static int64_t run_epoch(burrow_sampler *s, int64_t epoch, saved **out)
{
	cr_assert_eq(burrow_sampler_start(s, epoch), 0, "%s", burrow_last_error());
	int64_t nb = burrow_sampler_num_batches(s), i = 0;
	*out = calloc((size_t)BW_MAX(nb, 1), sizeof **out);
	burrow_batch *b;
	int st;
	while ((st = burrow_sampler_next(s, &b)) == 0) {
		cr_assert(i < nb, "more batches than burrow_sampler_num_batches says");
		cr_assert_eq(b->epoch, epoch);
		cr_assert_eq(b->index, i);
		save(&(*out)[i++], b);
		burrow_sampler_release(s, b);
	}
	cr_assert_eq(st, BURROW_DONE, "%s", burrow_last_error());
	cr_assert_null(b);
	cr_assert_eq(i, nb);
	cr_assert_eq(burrow_sampler_next(s, &b), BURROW_DONE, "an ended epoch stays ended");
	return i;
}

static void free_epoch(saved *v, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		unsave(&v[i]);
	free(v);
}

/* ------------------------------------------------------------ chi-square */


Test(sampler, chi_square_tail_matches_closed_forms)
{
	/* df = 2: exp(-x/2); df = 1: erfc(sqrt(x/2)); df = 4: (1 + x/2) exp(-x/2) */
	for (double x = 0.5; x < 60; x *= 1.7) {
		cr_assert_float_eq(tu_chi2_sf(x, 2), exp(-x / 2), 1e-12 * fmax(1, exp(-x / 2)) + 1e-15, "x %g", x);
		cr_assert(fabs(tu_chi2_sf(x, 1) - erfc(sqrt(x / 2))) <= 1e-10 * erfc(sqrt(x / 2)) + 1e-300, "x %g", x);
		cr_assert(fabs(tu_chi2_sf(x, 4) - (1 + x / 2) * exp(-x / 2)) <= 1e-10 * (1 + x / 2) * exp(-x / 2), "x %g", x);
	}
	/* the test has power: counts 10% off uniform in two of 20 cells are rejected */
	double e = 5000, stat = 2 * (0.1 * e) * (0.1 * e) / e;
	cr_assert(tu_chi2_sf(stat, 19) < 0.001);
}

/* Draw `draws` samples of k of the N = `leaves` leaves of a star through
 * burrow_sampler_sample (key = draw number) and test the leaves' counts against uniform.
 * A draw is a k-subset without replacement, so the counts are not multinomial: their
 * covariance is n p (1-p) N/(N-1) (I - J/N) with p = k/N, which makes Pearson's
 * statistic (N-k)/(N-1) times a chi-square with N-1 degrees of freedom; it is rescaled
 * by (N-1)/(N-k) before the test. With check_subsets, each k-subset is also one cell of
 * an exact multinomial, tested on its own (this catches uniform marginals with
 * correlated picks). */
static void star_uniformity(int64_t leaves, int k, int64_t draws, bool check_subsets, bool labor)
{
	tgraph t;
	star(&t, leaves);
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.num_layers = 1;
	o.fanouts[0] = k;
	o.prefetch = 0;
	o.seed = 12345;
	o.labor = labor;
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, NULL, 0, &o), 0, "%s", burrow_last_error());
	int64_t *count = calloc((size_t)leaves + 1, sizeof *count);
	int64_t nsub = check_subsets ? 1 << leaves : 1;
	int64_t *subset = calloc((size_t)nsub, sizeof *subset);
	const int64_t center = 0;
	for (int64_t i = 0; i < draws; i++) {
		burrow_batch *b;
		cr_assert_eq(burrow_sampler_sample(s, &center, 1, (uint64_t)i, &b), 0, "%s", burrow_last_error());
		check_batch(&t.g, b, 1, o.fanouts, &center, 1);
		const burrow_block *k0 = &b->blocks[0];
		int64_t mask = 0;
		for (int64_t j = 0; j < k0->num_edges; j++) {
			int64_t leaf = b->input_ids[k0->indices[j]];
			count[leaf]++;
			mask |= check_subsets ? (int64_t)1 << (leaf - 1) : 0;
		}
		subset[mask]++;
		burrow_sampler_release(s, b);
	}
	const double e = (double)draws * k / (double)leaves;
	double stat = 0;
	for (int64_t v = 1; v <= leaves; v++)
		stat += (count[v] - e) * (count[v] - e) / e;
	stat *= (double)(leaves - 1) / (double)(leaves - k);
	double p = tu_chi2_sf(stat, (double)(leaves - 1));
	cr_assert(p > 0.001, "leaf counts are not uniform: chi-square %g with %lld df, p = %g", stat,
		  (long long)(leaves - 1), p);
	if (check_subsets) { /* each k-subset is one cell of a multinomial */
		double cells = 0, es, st2 = 0;
		for (int64_t m = 0; m < nsub; m++)
			cells += __builtin_popcountll((unsigned long long)m) == k;
		es = (double)draws / cells;
		for (int64_t m = 0; m < nsub; m++) {
			if (__builtin_popcountll((unsigned long long)m) == k)
				st2 += (subset[m] - es) * (subset[m] - es) / es;
			else
				cr_assert_eq(subset[m], 0, "a sample of the wrong size");
		}
		p = tu_chi2_sf(st2, cells - 1);
		cr_assert(p > 0.001, "subsets are not uniform: chi-square %g with %g df, p = %g", st2, cells - 1, p);
	}
	free(subset);
	free(count);
	burrow_sampler_close(s);
	tgraph_free(&t);
}

Test(sampler, uniform_on_a_star_of_20_fanout_5)
{
	star_uniformity(20, 5, 20000, false, false);
}

Test(sampler, uniform_subsets_on_a_star_of_8_fanout_3)
{
	star_uniformity(8, 3, 20000, true, false);
}

Test(sampler, uniform_with_a_large_fanout)
{
	star_uniformity(150, 60, 3000, false, false); /* above BW_SMALL_FANOUT: the hash-set path */
}

/* LABOR keeps neighbor sampling's per-row law: a uniform k-subset (its variates are i.i.d.) */
Test(sampler, labor_uniform_subsets_on_a_star_of_8_fanout_3)
{
	star_uniformity(8, 3, 20000, true, true);
}

Test(sampler, labor_uniform_on_a_star_of_20_fanout_5_and_a_large_fanout)
{
	star_uniformity(20, 5, 20000, false, true);
	star_uniformity(150, 60, 3000, false, true); /* the heap in the row scratch */
}

/* Two rows with the same neighbors: LABOR gives both the same picks (the variates are the
 * source nodes'), neighbor sampling draws each on its own. */
Test(sampler, labor_rows_sharing_neighbors_pick_the_same)
{
	enum { LEAVES = 20, K = 5 };
	int64_t src[2 * LEAVES], dst[2 * LEAVES];
	for (int i = 0; i < LEAVES; i++) {
		src[i] = 0, dst[i] = 2 + i;
		src[LEAVES + i] = 1, dst[LEAVES + i] = 2 + i;
	}
	tgraph t;
	tgraph_build(&t, 2 + LEAVES, src, dst, 2 * LEAVES, true);
	int same[2] = {0, 0};
	for (int labor = 0; labor < 2; labor++) {
		burrow_sampler_opts o;
		burrow_sampler_defaults(&o);
		o.num_layers = 1;
		o.fanouts[0] = K;
		o.prefetch = 0;
		o.labor = labor;
		burrow_sampler *s;
		cr_assert_eq(burrow_sampler_open(&s, &t.g, NULL, 0, &o), 0, "%s", burrow_last_error());
		const int64_t seeds[2] = {0, 1};
		for (uint64_t key = 0; key < 50; key++) {
			burrow_batch *b;
			cr_assert_eq(burrow_sampler_sample(s, seeds, 2, key, &b), 0, "%s", burrow_last_error());
			check_batch(&t.g, b, 1, o.fanouts, seeds, 2);
			const burrow_block *k0 = &b->blocks[0];
			cr_assert_eq(k0->num_edges, 2 * K);
			bool eq = true;
			for (int j = 0; j < K; j++) /* each row lists its picks in row order */
				eq = eq && b->input_ids[k0->indices[j]] == b->input_ids[k0->indices[K + j]];
			same[labor] += eq;
			/* LABOR's batch has the two seeds and K inputs; neighbor sampling's usually more */
			if (labor)
				cr_assert_eq(b->num_input, 2 + K, "LABOR: %lld inputs", (long long)b->num_input);
			burrow_sampler_release(s, b);
		}
		burrow_sampler_close(s);
	}
	cr_assert_eq(same[1], 50, "LABOR gave the two rows different picks %d times of 50", 50 - same[1]);
	cr_assert_lt(same[0], 5, "neighbor sampling gave both rows the same picks %d times of 50", same[0]);
	tgraph_free(&t);
}

/* ------------------------------------------------------------ batches */

Test(sampler, batches_hold_their_invariants)
{
	tgraph t;
	skewed(&t, 3000, 20000, 7);
	const int fan_sets[][3] = {{15, 10, 5}, {-1, 3, 40}, {0, 2, -1}, {1, 1, 1}};
	for (size_t f = 0; f < sizeof fan_sets / sizeof fan_sets[0]; f++) {
		burrow_sampler_opts o;
		burrow_sampler_defaults(&o);
		memcpy(o.fanouts, fan_sets[f], sizeof fan_sets[f]);
		o.batch_size = 100;
		o.threads = 2;
		o.seed = f;
		int64_t ids[1000];
		for (int64_t i = 0; i < 1000; i++)
			ids[i] = (i * 7919) % 3000;
		burrow_sampler *s;
		cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 1000, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_sampler_start(s, 3), 0);
		burrow_batch *b;
		int64_t seen = 0;
		while (burrow_sampler_next(s, &b) == 0) {
			check_batch(&t.g, b, 3, o.fanouts, b->seeds, b->num_seeds);
			seen += b->num_seeds;
			burrow_sampler_release(s, b);
		}
		cr_assert_eq(seen, 1000);
		burrow_sampler_close(s);
	}
	tgraph_free(&t);
}

Test(sampler, int64_indices_sample_the_same)
{
	tgraph t;
	skewed(&t, 2000, 15000, 3);
	int64_t *wide = malloc((size_t)t.g.num_edges * sizeof *wide);
	for (int64_t j = 0; j < t.g.num_edges; j++)
		wide[j] = burrow_csr_index(&t.g, j);
	burrow_csr g8 = t.g;
	g8.indices = wide;
	g8.index_width = 8;
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.prefetch = 0;
	o.fanouts[0] = 40; /* the hash-set path too */
	burrow_sampler *s4, *s8;
	cr_assert_eq(burrow_sampler_open(&s4, &t.g, NULL, 0, &o), 0);
	cr_assert_eq(burrow_sampler_open(&s8, &g8, NULL, 0, &o), 0);
	int64_t seeds[64];
	for (int i = 0; i < 64; i++)
		seeds[i] = i * 31;
	for (uint64_t key = 0; key < 5; key++) {
		burrow_batch *a, *b;
		cr_assert_eq(burrow_sampler_sample(s4, seeds, 64, key, &a), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_sampler_sample(s8, seeds, 64, key, &b), 0, "%s", burrow_last_error());
		check_batch(&g8, b, 3, o.fanouts, seeds, 64);
		same_batch(a, b);
		burrow_sampler_release(s4, a);
		burrow_sampler_release(s8, b);
	}
	burrow_sampler_close(s4);
	burrow_sampler_close(s8);
	free(wide);
	tgraph_free(&t);
}

Test(sampler, full_blocks_are_whole_rows)
{
	tgraph t;
	skewed(&t, 5000, 40000, 11);
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.threads = 3;
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, NULL, 0, &o), 0);
	const int64_t chunks[][2] = {{0, 1}, {0, 5000}, {1234, 777}, {4999, 1}, {2500, 2500}};
	const int all[] = {-1};
	for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
		const int64_t first = chunks[c][0], count = chunks[c][1];
		burrow_batch *b;
		cr_assert_eq(burrow_sampler_full(s, first, count, &b), 0, "%s", burrow_last_error());
		int64_t *dst = malloc((size_t)count * sizeof *dst);
		for (int64_t i = 0; i < count; i++)
			dst[i] = first + i;
		check_batch(&t.g, b, 1, all, dst, count);
		/* reference: the neighbors outside the chunk, sorted and distinct */
		int64_t *ref = malloc((size_t)t.g.num_edges * sizeof *ref), m = 0;
		for (int64_t v = first; v < first + count; v++)
			for (int64_t j = t.g.indptr[v]; j < t.g.indptr[v + 1]; j++) {
				int64_t u = burrow_csr_index(&t.g, j);
				if (u < first || u >= first + count)
					ref[m++] = u;
			}
		qsort(ref, (size_t)m, sizeof *ref, cmp64);
		int64_t r = 0;
		for (int64_t i = 0; i < m; i++)
			if (i == 0 || ref[i] != ref[i - 1])
				ref[r++] = ref[i];
		cr_assert_eq(b->num_input, count + r);
		cr_assert(!memcmp(b->input_ids + count, ref, (size_t)r * sizeof *ref), "chunk %zu: sources differ", c);
		cr_assert_eq(b->blocks[0].num_edges, t.g.indptr[first + count] - t.g.indptr[first]);
		free(ref);
		free(dst);
		burrow_sampler_release(s, b);
	}
	burrow_batch *b = (burrow_batch *)1;
	cr_assert_eq(burrow_sampler_full(s, 4990, 11, &b), BURROW_E_RANGE);
	cr_assert_null(b);
	cr_assert_eq(burrow_sampler_full(s, -1, 2, &b), BURROW_E_RANGE);
	cr_assert_eq(burrow_sampler_full(s, 0, 0, &b), BURROW_E_INVAL);
	burrow_sampler_close(s);
	tgraph_free(&t);
}

/* ------------------------------------------------------------ epochs */

/* The training ids of a generated dataset, and the dataset (mapped: the graph is read in place). */
static burrow_dataset *gen_dataset(int scale, const int64_t **train, int64_t *n)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_RMAT);
	g.scale = scale;
	g.edge_factor = 16;
	g.feat_dim = 1;
	g.num_classes = 2;
	g.threads = 2;
	char *p = tu_path(tu_dir, "rmat%d", scale);
	cr_assert_eq(burrow_gen(&g, p), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	free(p);
	*train = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, n);
	cr_assert(*n > 0);
	return ds;
}

/* Each epoch visits every training node once, in batches of batch_size (the last one
 * short, or dropped); epochs differ; an epoch started again repeats itself. */
static void epochs(bool drop_last)
{
	int64_t n;
	const int64_t *train;
	burrow_dataset *ds = gen_dataset(10, &train, &n);
	const burrow_csr *g = burrow_dataset_graph(ds);
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.batch_size = 64;
	o.drop_last = drop_last;
	o.threads = 2;
	o.prefetch = 3;
	o.producers = 2;
	cr_assert(n % o.batch_size, "want a short last batch (n = %lld)", (long long)n);
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, g, train, n, &o), 0, "%s", burrow_last_error());
	const int64_t want_nb = drop_last ? n / o.batch_size : n / o.batch_size + 1;
	cr_assert_eq(burrow_sampler_num_batches(s), want_nb);

	int64_t *sorted_train = malloc((size_t)n * sizeof *sorted_train);
	memcpy(sorted_train, train, (size_t)n * sizeof *train);
	qsort(sorted_train, (size_t)n, sizeof *sorted_train, cmp64);
	saved *e[3];
	int64_t nb[3];
	for (int ep = 0; ep < 2; ep++) {
		nb[ep] = run_epoch(s, ep, &e[ep]);
		int64_t *seen = malloc((size_t)n * sizeof *seen), m = 0;
		for (int64_t i = 0; i < nb[ep]; i++) {
			const burrow_batch *b = &e[ep][i].b;
			cr_assert_eq(b->num_seeds, i < n / o.batch_size ? o.batch_size : n % o.batch_size,
				     "batch %lld of %lld has %lld seeds", (long long)i, (long long)nb[ep],
				     (long long)b->num_seeds);
			check_batch(g, b, 3, o.fanouts, b->seeds, b->num_seeds);
			memcpy(seen + m, b->seeds, (size_t)b->num_seeds * sizeof *seen);
			m += b->num_seeds;
		}
		cr_assert_eq(m, drop_last ? n - n % o.batch_size : n);
		qsort(seen, (size_t)m, sizeof *seen, cmp64);
		for (int64_t i = 1; i < m; i++)
			cr_assert_neq(seen[i], seen[i - 1], "epoch %d visits %lld twice", ep, (long long)seen[i]);
		if (!drop_last)
			cr_assert(!memcmp(seen, sorted_train, (size_t)n * sizeof *seen), "epoch %d misses a node", ep);
		else
			for (int64_t i = 0; i < m; i++)
				cr_assert(bsearch(&seen[i], sorted_train, (size_t)n, sizeof *seen, cmp64));
		free(seen);
	}
	cr_assert(memcmp(e[0][0].b.seeds, e[1][0].b.seeds, (size_t)o.batch_size * sizeof(int64_t)),
		  "epochs 0 and 1 start alike");
	/* abandon epoch 0 after two batches, then run it again: the same batches */
	cr_assert_eq(burrow_sampler_start(s, 0), 0);
	burrow_batch *b;
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(burrow_sampler_next(s, &b), 0);
		burrow_sampler_release(s, b);
	}
	nb[2] = run_epoch(s, 0, &e[2]);
	cr_assert_eq(nb[2], nb[0]);
	for (int64_t i = 0; i < nb[0]; i++)
		same_batch(&e[0][i].b, &e[2][i].b);
	for (int ep = 0; ep < 3; ep++)
		free_epoch(e[ep], nb[ep]);
	free(sorted_train);
	burrow_sampler_close(s);
	burrow_dataset_close(ds);
}

Test(sampler, epoch_visits_every_node_once_last_batch_kept) { epochs(false); }
Test(sampler, epoch_drop_last) { epochs(true); }

/* The neighbors of block k's destination rows (ids [0, num_dst) of nodes) in g, whole. */
static int64_t whole_rows(const burrow_csr *g, const burrow_block *k, const int64_t *nodes)
{
	int64_t F = 0;
	for (int64_t i = 0; i < k->num_dst; i++)
		F += g->indptr[nodes[i] + 1] - g->indptr[nodes[i]];
	return F;
}

/* The same batches from every mix of OpenMP threads, producers and queue depth (LABOR-*: its
 * preparation's chunks, sampler_internal.h BW_LS_CHUNK, several per pass at 2, 3 and 4 threads). */
static void threads_case(int labor) /* 0 neighbor, 1 LABOR, 2 LABOR-*, 3 LABOR with batch dependency */
{
	int64_t n;
	const int64_t *train;
	burrow_dataset *ds = gen_dataset(13, &train, &n);
	const burrow_csr *g = burrow_dataset_graph(ds);
	const int cfg[][3] = {/* threads, prefetch, producers */ {1, 0, 1}, {2, 0, 1}, {3, 0, 1}, {4, 0, 1},
			      {2, 2, 1}, {4, 3, 2}, {1, 5, 4}};
	const int ncfg = sizeof cfg / sizeof cfg[0];
	saved *ref[2] = {NULL, NULL};
	int64_t nref[2] = {0, 0};
	int64_t big = 0, whole = 0; /* the largest input layer: drawn edges; its rows' whole neighborhoods */
	for (int c = 0; c < ncfg; c++) {
		burrow_sampler_opts o;
		burrow_sampler_defaults(&o);
		/* LABOR's layers are smaller, LABOR-*'s more so: still above NUMBER_PAR_MIN */
		o.batch_size = labor == 2 ? 3000 : labor ? 1500 : 1000;
		o.fanouts[0] = 40; /* above BW_SMALL_FANOUT, and enough edges to number in parallel */
		o.seed = 99;
		o.labor = labor == 1 || labor == 3;
		o.labor_star = labor == 2 ? BURROW_LABOR_STAR_ROUNDS : 0;
		o.labor_batch_dependency = labor == 3 ? 3 : 0;
		o.threads = cfg[c][0];
		o.prefetch = cfg[c][1];
		o.producers = cfg[c][2];
		burrow_sampler *s;
		cr_assert_eq(burrow_sampler_open(&s, g, train, BW_MIN(n, 3500), &o), 0, "%s", burrow_last_error());
		for (int ep = 0; ep < 2; ep++) {
			saved *v;
			int64_t nb = run_epoch(s, ep + 5, &v);
			if (c == 0) {
				ref[ep] = v;
				nref[ep] = nb;
				for (int64_t i = 0; i < nb; i++) {
					check_batch_star(g, &v[i].b, 3, o.fanouts, v[i].b.seeds, v[i].b.num_seeds, labor == 2);
					big = BW_MAX(big, v[i].b.blocks[0].num_edges);
					whole = BW_MAX(whole, whole_rows(g, &v[i].b.blocks[0], v[i].b.input_ids));
				}
				continue;
			}
			cr_assert_eq(nb, nref[ep]);
			for (int64_t i = 0; i < nb; i++)
				same_batch(&ref[ep][i].b, &v[i].b);
			free_epoch(v, nb);
		}
		burrow_sampler_close(s);
	}
	cr_assert(big >= 65536, "the input layer (%lld edges) is too small for the parallel numbering (sample.c "
				"NUMBER_PAR_MIN)", (long long)big);
	cr_log_info("threads case %d: input layer %lld edges, its rows %lld neighbors", labor, (long long)big, (long long)whole);
	cr_assert(labor != 2 || whole >= 8 * BW_LS_CHUNK, "LABOR-*'s input layer reads %lld neighbors: too few for "
							 "several chunks of its passes (BW_LS_CHUNK)", (long long)whole);
	free_epoch(ref[0], nref[0]);
	free_epoch(ref[1], nref[1]);
	burrow_dataset_close(ds);
}

Test(sampler, batches_do_not_depend_on_threads) { threads_case(0); }
Test(sampler, labor_batches_do_not_depend_on_threads) { threads_case(1); }
Test(sampler, labor_star_batches_do_not_depend_on_threads) { threads_case(2); }
Test(sampler, labor_dependent_batches_do_not_depend_on_threads) { threads_case(3); }

/* LABOR's point: the same seeds and fanouts, fewer distinct inputs than neighbor sampling's;
 * LABOR-*'s, fewer than LABOR's. */
Test(sampler, labor_reads_fewer_inputs)
{
	int64_t n;
	const int64_t *train;
	burrow_dataset *ds = gen_dataset(13, &train, &n);
	const burrow_csr *g = burrow_dataset_graph(ds);
	int64_t inputs[3] = {0, 0, 0}, edges[3] = {0, 0, 0};
	for (int labor = 0; labor < 3; labor++) { /* neighbor, LABOR, LABOR-* */
		burrow_sampler_opts o;
		burrow_sampler_defaults(&o);
		o.batch_size = 512;
		o.fanouts[0] = 10, o.fanouts[1] = 10, o.fanouts[2] = 10;
		o.seed = 4;
		o.labor = labor == 1;
		o.labor_star = labor == 2 ? BURROW_LABOR_STAR_ROUNDS : 0;
		o.prefetch = 0;
		burrow_sampler *s;
		cr_assert_eq(burrow_sampler_open(&s, g, train, n, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_sampler_start(s, 0), 0);
		burrow_batch *b;
		while (burrow_sampler_next(s, &b) == 0) {
			check_batch_star(g, b, 3, o.fanouts, b->seeds, b->num_seeds, labor == 2);
			inputs[labor] += b->num_input;
			for (int l = 0; l < 3; l++)
				edges[labor] += b->blocks[l].num_edges;
			burrow_sampler_release(s, b);
		}
		burrow_sampler_close(s);
	}
	cr_log_info("inputs per epoch: neighbor %lld, labor %lld, labor-star %lld; edges: %lld, %lld, %lld",
		    (long long)inputs[0], (long long)inputs[1], (long long)inputs[2], (long long)edges[0],
		    (long long)edges[1], (long long)edges[2]);
	cr_assert_lt((double)inputs[1], 0.8 * (double)inputs[0], "LABOR read %lld inputs, neighbor sampling %lld",
		     (long long)inputs[1], (long long)inputs[0]);
	cr_assert_lt((double)inputs[2], 0.8 * (double)inputs[1], "LABOR-* read %lld inputs, LABOR %lld",
		     (long long)inputs[2], (long long)inputs[1]);
	burrow_dataset_close(ds);
}

/* LABOR-*: what a row keeps is random, but in expectation its fanout. Over B keys of the same
 * 400 seeds (whose rows' c and pi do not depend on the key: only the variates do), each seed
 * row of degree above k keeps k on average, and so does every sampled row of the lower layer
 * (its destinations depend on the key; each row's expected count given them is still k).
 * Rows share variates, so their counts are correlated: the z scores use the spread over the
 * keys of each batch's total excess, sum (count - k). */
Test(sampler, labor_star_rows_keep_the_fanout_in_expectation)
{
	int64_t n;
	const int64_t *train;
	burrow_dataset *ds = gen_dataset(13, &train, &n);
	const burrow_csr *g = burrow_dataset_graph(ds);
	enum { B = 300, NS = 400, K = 5 };
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.num_layers = 2;
	o.fanouts[0] = K, o.fanouts[1] = K;
	o.labor_star = BURROW_LABOR_STAR_ROUNDS;
	o.prefetch = 0;
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, g, train, n, &o), 0, "%s", burrow_last_error());
	double *row = calloc(NS, sizeof *row), ex[2][B];
	int64_t sampled[2] = {0, 0};
	for (int key = 0; key < B; key++) {
		burrow_batch *b;
		cr_assert_eq(burrow_sampler_sample(s, train, NS, (uint64_t)key, &b), 0, "%s", burrow_last_error());
		check_batch_star(g, b, 2, o.fanouts, train, NS, true);
		for (int l = 0; l < 2; l++) {
			const burrow_block *k = &b->blocks[l];
			ex[l][key] = 0;
			for (int64_t i = 0; i < k->num_dst; i++) {
				if (degree(g, b->input_ids[i]) <= K)
					continue;
				const int64_t c = k->indptr[i + 1] - k->indptr[i];
				ex[l][key] += (double)(c - K);
				sampled[l]++;
				if (l == 1)
					row[i] += (double)c;
			}
		}
		burrow_sampler_release(s, b);
	}
	for (int l = 0; l < 2; l++) {
		double m = 0, v = 0;
		for (int key = 0; key < B; key++)
			m += ex[l][key] / B;
		for (int key = 0; key < B; key++)
			v += (ex[l][key] - m) * (ex[l][key] - m) / (B - 1);
		const double z = m / sqrt(v / B);
		cr_log_info("block %d: %.1f sampled rows a batch, mean excess %.3f a batch (sd %.2f), z %.2f", l,
			    (double)sampled[l] / B, m, sqrt(v), z);
		cr_assert(sampled[l] > 100 * B, "block %d: too few rows above the fanout (%lld)", l, (long long)sampled[l]);
		cr_assert(fabs(z) < 5, "block %d: rows keep %.3f more than the fanout a batch (z = %.2f)", l,
			  m * B / (double)sampled[l], z);
	}
	/* each seed row's count is a sum of Bernoullis of total mean K: variance below K */
	for (int64_t i = 0; i < NS; i++)
		if (degree(g, train[i]) > K)
			cr_assert(fabs(row[i] / B - K) < 6 * sqrt((double)K / B), "seed %lld keeps %.3f on average, want %d",
				  (long long)train[i], row[i] / B, K);
	free(row);
	burrow_sampler_close(s);
	burrow_dataset_close(ds);
}

/* ------------------------------------------------------------ LABOR's batch dependency */

enum { BD_NT = 2000, BD_NH = 40, BD_K = 5 };

/* Every one of BD_NT training nodes joined to every one of BD_NH hubs (ids BD_NT ..): a batch
 * of one seed sees all the hubs, and which it keeps depends only on the batch's variates. */
static void bipartite(tgraph *t)
{
	const size_t m = (size_t)BD_NT * BD_NH;
	int64_t *src = malloc(m * sizeof *src), *dst = malloc(m * sizeof *dst);
	for (size_t e = 0; e < m; e++) {
		src[e] = (int64_t)(e / BD_NH);
		dst[e] = BD_NT + (int64_t)(e % BD_NH);
	}
	tgraph_build(t, BD_NT + BD_NH, src, dst, m, true);
	free(src);
	free(dst);
}

/* An epoch of batches of one seed; per batch, the bitmask of the hubs it keeps and their count. */
static void bd_epoch(const tgraph *t, const int64_t *ids, int labor, int dep, int64_t epoch, uint64_t *mask, int *count)
{
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.num_layers = 1;
	o.fanouts[0] = BD_K;
	o.batch_size = 1;
	o.prefetch = 2;
	o.seed = 77;
	o.labor = labor == 1;
	o.labor_star = labor == 2 ? BURROW_LABOR_STAR_ROUNDS : 0;
	o.labor_batch_dependency = dep;
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, &t->g, ids, BD_NT, &o), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_sampler_start(s, epoch), 0);
	burrow_batch *b;
	for (int64_t i = 0; burrow_sampler_next(s, &b) == 0; i++) {
		check_batch_star(&t->g, b, 1, o.fanouts, b->seeds, 1, labor == 2);
		const burrow_block *k = &b->blocks[0];
		mask[i] = 0;
		for (int64_t e = 0; e < k->num_edges; e++)
			mask[i] |= 1ull << (b->input_ids[k->indices[e]] - BD_NT);
		count[i] = (int)k->num_edges;
		burrow_sampler_release(s, b);
	}
	burrow_sampler_close(s);
}

/* --labor-batch-dependency K: consecutive batches keep overlapping sources (LABOR: the hubs two
 * consecutive batches share, against independent variates' BD_K^2 / BD_NH), every batch keeps
 * its odds (LABOR-*: a batch a quarter of the way between two groups keeps BD_K hubs in
 * expectation, which needs uniform variates: a linear mix of two uniforms would keep 6.7), and
 * K = 1 is no dependency at all (the same batches as K = 0). */
Test(sampler, labor_batch_dependency_overlaps_consecutive_batches_at_the_same_odds)
{
	tgraph t;
	bipartite(&t);
	int64_t *ids = malloc(BD_NT * sizeof *ids);
	for (int64_t i = 0; i < BD_NT; i++)
		ids[i] = i;
	uint64_t *m0 = malloc(BD_NT * sizeof *m0), *m1 = malloc(BD_NT * sizeof *m1);
	int *c0 = malloc(BD_NT * sizeof *c0), *c1 = malloc(BD_NT * sizeof *c1);
	double shared[2];
	for (int dep = 0; dep < 2; dep++) {
		bd_epoch(&t, ids, 1, dep ? 4 : 0, 3, m0, c0);
		double sum = 0;
		for (int64_t i = 0; i + 1 < BD_NT; i++)
			sum += __builtin_popcountll(m0[i] & m0[i + 1]);
		shared[dep] = sum / (BD_NT - 1);
	}
	cr_log_info("hubs shared by consecutive batches: %.3f independent, %.3f with K = 4", shared[0], shared[1]);
	cr_assert(shared[0] < 1.0 && shared[1] > 2.0, "consecutive batches share %.3f hubs (independent: %.3f)",
		  shared[1], shared[0]);
	bd_epoch(&t, ids, 1, 0, 5, m0, c0);
	bd_epoch(&t, ids, 1, 1, 5, m1, c1);
	cr_assert(!memcmp(m0, m1, BD_NT * sizeof *m0), "K = 1 changed the batches");
	double sum = 0, n = 0;
	for (int64_t ep = 0; ep < 8; ep++) {
		bd_epoch(&t, ids, 2, 4, ep, m0, c0);
		for (int64_t i = 1; i < BD_NT; i += 8) /* c = 1/4, one batch per two groups: independent */
			sum += c0[i], n++;
	}
	const double mean = sum / n, se = sqrt(BD_K * (1.0 - (double)BD_K / BD_NH) / n);
	cr_assert(fabs(mean - BD_K) < 5 * se, "LABOR-* between two groups keeps %.3f hubs, want %d (se %.3f)", mean, BD_K,
		  se);
	free(m0);
	free(m1);
	free(c0);
	free(c1);
	free(ids);
	tgraph_free(&t);
}

/* ------------------------------------------------------------ trimming the mapped graph */

/* The trainer's hook: count the calls and drop every mapped page of the graph. */
typedef struct trim_count {
	const burrow_dataset *ds;
	int64_t calls, trims;
} trim_count;

static void trim_hook(void *u)
{
	trim_count *t = u;
	__atomic_add_fetch(&t->calls, 1, __ATOMIC_RELAXED);
	if (bw_dataset_trim_graph(t->ds, 0))
		__atomic_add_fetch(&t->trims, 1, __ATOMIC_RELAXED);
}

/* The hook runs after each batch and inside each layer, every BW_TRIM_ROWS rows whose
 * offsets or ids a thread read (so that one large layer does not map the whole graph),
 * and dropping the graph's pages there, while other threads read them, changes no bit of
 * any batch. */
Test(sampler, trimming_the_graph_inside_a_layer_changes_no_bit)
{
	int64_t n;
	const int64_t *train;
	burrow_dataset *ds = gen_dataset(17, &train, &n);
	const burrow_csr *g = burrow_dataset_graph(ds);
	const int cfg[][3] = {/* threads, prefetch, producers */ {1, 0, 1}, {2, 0, 1}, {2, 2, 2}};
	for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		burrow_sampler_opts o;
		burrow_sampler_defaults(&o);
		o.batch_size = 1000;
		o.num_layers = 3;
		o.fanouts[0] = o.fanouts[1] = o.fanouts[2] = 15;
		o.seed = 5;
		o.threads = cfg[c][0];
		o.prefetch = cfg[c][1];
		o.producers = cfg[c][2];
		burrow_sampler *s;
		saved *ref, *got;
		cr_assert_eq(bw_sampler_open_checked(&s, g, train, BW_MIN(n, 4000), &o, NULL, NULL), 0, "%s",
			     burrow_last_error());
		const int64_t nb = run_epoch(s, 3, &ref);
		burrow_sampler_close(s);
		trim_count tc = {.ds = ds};
		cr_assert_eq(bw_sampler_open_checked(&s, g, train, BW_MIN(n, 4000), &o, trim_hook, &tc), 0, "%s",
			     burrow_last_error());
		cr_assert_eq(run_epoch(s, 3, &got), nb);
		burrow_sampler_close(s);
		/* per layer: once per BW_TRIM_ROWS rows whose offsets were read, and each thread once
		 * per BW_TRIM_ROWS rows it drew, at least (rows - threads x (BW_TRIM_ROWS - 1)) /
		 * BW_TRIM_ROWS times */
		int64_t inside = 0;
		for (int64_t i = 0; i < nb; i++) {
			same_batch(&ref[i].b, &got[i].b);
			for (int l = 0; l < 3; l++) {
				const int64_t rows = got[i].b.blocks[l].num_dst;
				inside += rows / BW_TRIM_ROWS + BW_MAX(0, rows - o.threads * (BW_TRIM_ROWS - 1)) / BW_TRIM_ROWS;
			}
		}
		cr_assert(inside >= nb,
			  "config %zu: the layers (%lld rows in batch 0's input layer, %lld calls expected inside them) "
			  "are too small for the test",
			  c, (long long)got[0].b.blocks[0].num_dst, (long long)inside);
		cr_assert_geq(tc.calls, nb + inside, "config %zu: %lld calls for %lld batches, %lld expected inside the layers",
			      c, (long long)tc.calls, (long long)nb, (long long)inside);
		cr_assert_gt(tc.trims, 0, "config %zu: nothing was dropped", c);
		free_epoch(ref, nb);
		free_epoch(got, nb);
	}
	burrow_dataset_close(ds);
}

/* ------------------------------------------------------------ wide id spaces */

/* A graph over a wide id space with edges only out of its last k nodes: indptr is an
 * anonymous mapping of zero pages with only its tail written, so N can be 2^29. Half
 * of each row points at other active nodes, half anywhere in [0, N). */
typedef struct sparse_graph {
	burrow_csr g;
	int64_t *indptr;
	size_t map_bytes;
	int32_t *indices;
	int64_t first;     /* active nodes: [first, N) */
} sparse_graph;

static void sparse_build(sparse_graph *sp, int64_t N, int64_t k, int deg, uint64_t seed)
{
	sp->map_bytes = (size_t)(N + 1) * sizeof(int64_t);
	sp->indptr = mmap(NULL, sp->map_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			  -1, 0);
	cr_assert(sp->indptr != MAP_FAILED);
	sp->indices = malloc((size_t)(k * deg) * sizeof *sp->indices);
	sp->first = N - k;
	bw_rng r;
	bw_rng_seed(&r, seed);
	int64_t e = 0, nb[64];
	cr_assert(deg <= 64);
	for (int64_t v = sp->first; v < N; v++) {
		sp->indptr[v] = e;
		int m = 0;
		while (m < deg) {
			int64_t u = bw_rng_below(&r, 2) ? sp->first + (int64_t)bw_rng_below(&r, (uint64_t)k)
							: (int64_t)bw_rng_below(&r, (uint64_t)N);
			bool dup = u == v;
			for (int q = 0; q < m && !dup; q++)
				dup = nb[q] == u;
			if (!dup)
				nb[m++] = u;
		}
		qsort(nb, (size_t)m, sizeof *nb, cmp64);
		for (int q = 0; q < m; q++)
			sp->indices[e++] = (int32_t)nb[q];
	}
	sp->indptr[N] = e;
	sp->g = (burrow_csr){.num_nodes = N, .num_edges = e, .indptr = sp->indptr, .indices = sp->indices,
			     .index_width = 4};
}

static void sparse_free(sparse_graph *sp)
{
	munmap(sp->indptr, sp->map_bytes);
	free(sp->indices);
}

/* Ids spread over 2^20 (buckets of 512 ids, numbered by bitmap when dense and by sorting
 * when sparse) and over 2^29 (too wide for the bitmap: always sorted). Full blocks
 * against the reference, batches against the invariants, each the same on 1 and 4
 * threads. */
Test(sampler, wide_id_spaces)
{
	const int64_t sizes[] = {((int64_t)1 << 20) + 3, ((int64_t)1 << 29) + 7};
	for (size_t z = 0; z < 2; z++) {
		sparse_graph sp;
		const int64_t k = 3000;
		sparse_build(&sp, sizes[z], k, 12, 100 + z);
		const burrow_csr *g = &sp.g;
		int64_t *act = malloc((size_t)k * sizeof *act);
		for (int64_t i = 0; i < k; i++)
			act[i] = sp.first + (k - 1 - i); /* any order */
		burrow_sampler *s[2];
		for (int c = 0; c < 2; c++) {
			burrow_sampler_opts o;
			burrow_sampler_defaults(&o);
			o.fanouts[0] = -1;
			o.batch_size = 700;
			o.threads = c ? 4 : 1;
			o.prefetch = c ? 2 : 0;
			cr_assert_eq(burrow_sampler_open(&s[c], g, act, k, &o), 0, "%s", burrow_last_error());
		}
		/* the full block of the active nodes: 36000 edges, numbered in parallel on 4 threads */
		burrow_batch *f[2];
		for (int c = 0; c < 2; c++)
			cr_assert_eq(burrow_sampler_full(s[c], sp.first, k, &f[c]), 0, "%s", burrow_last_error());
		const int all[] = {-1};
		int64_t *dst = malloc((size_t)k * sizeof *dst);
		for (int64_t i = 0; i < k; i++)
			dst[i] = sp.first + i;
		check_batch(g, f[0], 1, all, dst, k);
		free(dst);
		int64_t *ref = malloc((size_t)g->num_edges * sizeof *ref), m = 0, r = 0;
		for (int64_t j = 0; j < g->num_edges; j++)
			if (sp.indices[j] < sp.first)
				ref[m++] = sp.indices[j];
		qsort(ref, (size_t)m, sizeof *ref, cmp64);
		for (int64_t i = 0; i < m; i++)
			if (i == 0 || ref[i] != ref[i - 1])
				ref[r++] = ref[i];
		cr_assert_eq(f[0]->num_input, k + r, "N %lld: %lld sources, want %lld", (long long)g->num_nodes,
			     (long long)f[0]->num_input, (long long)(k + r));
		cr_assert(!memcmp(f[0]->input_ids + k, ref, (size_t)r * sizeof *ref));
		same_batch(f[0], f[1]);
		for (int c = 0; c < 2; c++)
			burrow_sampler_release(s[c], f[c]);
		free(ref);

		/* an epoch of sampled batches */
		saved *v[2];
		int64_t nb[2];
		for (int c = 0; c < 2; c++)
			nb[c] = run_epoch(s[c], 2, &v[c]);
		cr_assert_eq(nb[0], nb[1]);
		const int fan[] = {-1, 10, 5};
		for (int64_t i = 0; i < nb[0]; i++) {
			check_batch(g, &v[0][i].b, 3, fan, v[0][i].b.seeds, v[0][i].b.num_seeds);
			same_batch(&v[0][i].b, &v[1][i].b);
		}
		for (int c = 0; c < 2; c++) {
			free_epoch(v[c], nb[c]);
			burrow_sampler_close(s[c]);
		}
		free(act);
		sparse_free(&sp);
	}
}

/* ------------------------------------------------------------ refusals and failures */

/* The CPUs each producer thread ("burrow-sample") may run on, as /proc lists them, into
 * lists[k] (up to max threads); returns how many such threads there are. */
static int producer_cpus(char lists[][256], int max)
{
	DIR *d = opendir("/proc/self/task");
	cr_assert(d);
	int k = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], line[300], comm[64] = "";
		snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(comm, sizeof comm, f))
			comm[0] = '\0';
		fclose(f);
		if (strncmp(comm, "burrow-sample", 13))
			continue;
		snprintf(path, sizeof path, "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "r");
		cr_assert(f);
		while (fgets(line, sizeof line, f))
			if (!strncmp(line, "Cpus_allowed_list:", 18) && k < max)
				sscanf(line + 18, " %255s", lists[k++]);
		fclose(f);
	}
	closedir(d);
	return k;
}

/* Two or more producers sit on CPUs of their own (one each, all different) unless pin is
 * -1, and a single producer is left to the kernel; the batches are the same either way
 * (batches_do_not_depend_on_threads runs pinned producers too). */
Test(sampler, producers_get_cpus_of_their_own)
{
	cpu_set_t allowed;
	cr_assert_eq(sched_getaffinity(0, sizeof allowed, &allowed), 0);
	if (CPU_COUNT(&allowed) < 2)
		cr_skip_test("one CPU: nothing to spread producers over");
	tgraph t;
	skewed(&t, 200, 600, 1);
	int64_t ids[64];
	for (int i = 0; i < 64; i++)
		ids[i] = i;
	char whole[256] = "";
	for (int pin = 0; pin >= -1; pin--) {
		for (int np = 1; np <= 2; np++) {
			burrow_sampler_opts o;
			burrow_sampler_defaults(&o);
			o.batch_size = 8;
			o.producers = np;
			o.pin = pin;
			burrow_sampler *s;
			cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 64, &o), 0, "%s", burrow_last_error());
			char lists[8][256];
			cr_assert_eq(producer_cpus(lists, 8), np);
			/* the process's own list, as the kernel writes it, for comparison */
			FILE *f = fopen("/proc/self/status", "r");
			char line[300];
			while (fgets(line, sizeof line, f))
				if (!strncmp(line, "Cpus_allowed_list:", 18))
					sscanf(line + 18, " %255s", whole);
			fclose(f);
			for (int i = 0; i < np; i++) {
				const bool pinned = pin == 0 && np >= 2;
				if (pinned) {
					char *end;
					long c = strtol(lists[i], &end, 10);
					cr_assert(*end == '\0' && c >= 0 && CPU_ISSET(c, &allowed),
						  "producer %d of %d: '%s' is not one allowed CPU", i, np, lists[i]);
					for (int j = 0; j < i; j++)
						cr_assert_str_neq(lists[i], lists[j], "two producers share CPU %s", lists[i]);
				} else {
					cr_assert_str_eq(lists[i], whole, "pin %d, %d producer(s): left to the kernel", pin, np);
				}
			}
			burrow_batch *b;
			cr_assert_eq(burrow_sampler_start(s, 0), 0);
			cr_assert_eq(burrow_sampler_next(s, &b), 0, "%s", burrow_last_error());
			burrow_sampler_release(s, b);
			burrow_sampler_close(s);
		}
	}
	tgraph_free(&t);
}

Test(sampler, refuses_bad_options_and_ids)
{
	tgraph t;
	skewed(&t, 100, 300, 1);
	burrow_sampler *s = (burrow_sampler *)1;
	burrow_sampler_opts o;
	int64_t ids[] = {1, 2, 3, 2};
	burrow_sampler_defaults(&o);
	o.num_layers = 0;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 3, &o), BURROW_E_INVAL);
	cr_assert_null(s);
	burrow_sampler_defaults(&o);
	o.num_layers = BURROW_MAX_LAYERS + 1;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 3, &o), BURROW_E_INVAL);
	burrow_sampler_defaults(&o);
	o.fanouts[1] = -2;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 3, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "fanout"), "%s", burrow_last_error());
	burrow_sampler_defaults(&o);
	o.batch_size = 0;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 3, &o), BURROW_E_INVAL);
	burrow_sampler_defaults(&o);
	o.producers = 0;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 3, &o), BURROW_E_INVAL);
	burrow_sampler_defaults(&o);
	o.pin = 1;
	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 3, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "pin 1"), "%s", burrow_last_error());
	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 4, NULL), BURROW_E_INVAL, "a repeated training id");
	cr_assert(strstr(burrow_last_error(), "2 appears twice"), "%s", burrow_last_error());
	int64_t bad[] = {5, 100};
	cr_assert_eq(burrow_sampler_open(&s, &t.g, bad, 2, NULL), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "100"), "%s", burrow_last_error());
	cr_assert_null(s);

	cr_assert_eq(burrow_sampler_open(&s, &t.g, ids, 3, NULL), 0);
	burrow_batch *b = (burrow_batch *)1;
	cr_assert_eq(burrow_sampler_next(s, &b), BURROW_E_INVAL, "next before start");
	cr_assert_null(b);
	cr_assert_eq(burrow_sampler_start(s, -1), BURROW_E_INVAL);
	cr_assert_eq(burrow_sampler_sample(s, ids, 4, 0, &b), BURROW_E_INVAL, "repeated seeds");
	cr_assert_eq(burrow_sampler_sample(s, bad, 2, 0, &b), BURROW_E_RANGE);
	cr_assert_eq(burrow_sampler_sample(s, ids, 0, 0, &b), BURROW_E_INVAL);
	cr_assert_null(b);
	burrow_sampler_release(s, NULL);
	burrow_sampler_close(s);
	burrow_sampler_close(NULL);

	/* no training ids: every epoch is empty */
	cr_assert_eq(burrow_sampler_open(&s, &t.g, NULL, 0, NULL), 0);
	cr_assert_eq(burrow_sampler_num_batches(s), 0);
	cr_assert_eq(burrow_sampler_start(s, 0), 0);
	cr_assert_eq(burrow_sampler_next(s, &b), BURROW_DONE);
	burrow_sampler_close(s);
	tgraph_free(&t);
}

/* Open, run an epoch, sample and take a full block; the first failure is returned. star:
 * LABOR-* (its preparation's allocations). */
static int one_run(const burrow_csr *g, const int64_t *ids, int64_t n, int prefetch, bool star)
{
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.batch_size = 50;
	o.threads = 2;
	o.prefetch = prefetch;
	o.fanouts[0] = 40;
	o.labor_star = star ? BURROW_LABOR_STAR_ROUNDS : 0;
	burrow_sampler *s;
	int st = burrow_sampler_open(&s, g, ids, n, &o);
	if (st)
		return st;
	burrow_batch *b, *held = NULL;
	if ((st = burrow_sampler_start(s, 1)))
		goto out_close;
	while ((st = burrow_sampler_next(s, &b)) == 0) {
		if (!held)
			held = b; /* kept to the end: close frees it */
		else
			burrow_sampler_release(s, b);
	}
	if (st < 0)
		goto out_close;
	if ((st = burrow_sampler_sample(s, ids, 10, 3, &b)))
		goto out_close;
	burrow_sampler_release(s, b);
	if ((st = burrow_sampler_full(s, 0, g->num_nodes, &b)))
		goto out_close;
	burrow_sampler_release(s, b);
out_close:
	burrow_sampler_close(s);
	return st;
}

Test(sampler, failing_allocations_return_nomem)
{
	tgraph t;
	skewed(&t, 400, 3000, 5);
	int64_t ids[300];
	for (int i = 0; i < 300; i++)
		ids[i] = i;
	for (int mode = 0; mode < 3; mode++) { /* prefetch 0, 2; LABOR-* with prefetch 0 */
		const int prefetch = mode == 1 ? 2 : 0;
		int k;
		const size_t base = tu_mem_now();
		for (k = 0; k < 2000; k++) {
			bw_mem_fail_after(k);
			int st = one_run(&t.g, ids, 300, prefetch, mode == 2);
			bw_mem_fail_after(-1);
			cr_assert_eq(tu_mem_now(), base, "mode %d, failing allocation %d: %zu bytes not freed", mode,
				     k, tu_mem_now() - base);
			if (st == 0)
				break;
			cr_assert_eq(st, BURROW_E_NOMEM, "mode %d, failing allocation %d: %s", mode, k,
				     burrow_last_error());
		}
		cr_assert(k > 5 && k < 2000, "mode %d: %d allocations", mode, k);
	}
	tgraph_free(&t);
}

/* ------------------------------------------------------------ expanders */


/* An expander that draws as the sampler does (sampler/draw.h, keyed by (layer key, node)),
 * from a CSR in memory: the batch it yields must equal the sampler's own element for element,
 * since the numbering is the same code. bad >= 0: hand back node bad as a source of edge 0. */
typedef struct csr_expander {
	const burrow_csr *g;
	int64_t *ip, *ids, *pos, *table;
	int64_t bad;
	int calls;
} csr_expander;

static int csr_expand(void *ctx, int l, int fan, uint64_t lkey, const int64_t *nodes, int64_t nd, const int64_t **ip,
		      const int64_t **ids)
{
	csr_expander *x = ctx;
	(void)l;
	x->calls++;
	free(x->ip);
	x->ip = malloc(((size_t)nd + 1) * sizeof *x->ip);
	x->ip[0] = 0;
	for (int64_t i = 0; i < nd; i++) {
		const int64_t d = x->g->indptr[nodes[i] + 1] - x->g->indptr[nodes[i]];
		x->ip[i + 1] = x->ip[i] + (fan < 0 || d <= fan ? d : fan);
	}
	free(x->ids);
	x->ids = malloc(((size_t)x->ip[nd] + 1) * sizeof *x->ids);
	for (int64_t i = 0; i < nd; i++) {
		const int64_t s = x->g->indptr[nodes[i]], d = x->g->indptr[nodes[i] + 1] - s, k = x->ip[i + 1] - x->ip[i];
		if (k == d) {
			for (int64_t j = 0; j < d; j++)
				x->ids[x->ip[i] + j] = burrow_csr_index(x->g, s + j);
			continue;
		}
		bw_rng r;
		bw_rng_seed(&r, bw_key(lkey, (uint64_t)nodes[i]));
		bw_draw(&r, d, k, x->pos, x->table);
		for (int64_t j = 0; j < k; j++)
			x->ids[x->ip[i] + j] = burrow_csr_index(x->g, s + x->pos[j]);
	}
	if (x->bad >= 0 && x->ip[nd] > 0)
		x->ids[0] = x->bad;
	*ip = x->ip;
	*ids = x->ids;
	return 0;
}

Test(sampler, an_expander_numbers_as_the_sampler_does)
{
	int64_t n;
	const int64_t *train;
	burrow_dataset *ds = gen_dataset(13, &train, &n);
	const burrow_csr *g = burrow_dataset_graph(ds);
	const int fan[3] = {40, 10, 5}; /* the hash-set draw too */
	csr_expander x = {.g = g, .bad = -1};
	x.pos = malloc(64 * sizeof *x.pos);
	x.table = malloc(bw_draw_table_cap(40) * sizeof *x.table);
	const bw_expander ex = {.expand = csr_expand, .ctx = &x, .num_nodes = g->num_nodes};
	for (int threads = 1; threads <= 2; threads++) {
		bw_sample_ctx c1, c2;
		bw_sampled a = {0}, b = {0};
		cr_assert_eq(bw_sample_ctx_init(&c1, threads, 40), 0);
		cr_assert_eq(bw_sample_ctx_init(&c2, threads, 0), 0);
		for (uint64_t key = 0; key < 3; key++) {
			const int64_t m = BW_MIN(n, key == 2 ? 0 : 1000); /* an empty batch too */
			cr_assert_eq(bw_sample_batch(&c1, g, train, m, 3, fan, key, &a), 0, "%s", burrow_last_error());
			x.calls = 0;
			cr_assert_eq(bw_sample_batch_ex(&c2, &ex, train, m, 3, fan, key, &b), 0, "%s", burrow_last_error());
			cr_assert_eq(x.calls, 3, "the expander runs once per layer (an empty batch too)");
			check_batch(g, &b.pub, 3, fan, train, m);
			same_batch(&a.pub, &b.pub);
		}
		x.bad = g->num_nodes;
		cr_assert_eq(bw_sample_batch_ex(&c2, &ex, train, 100, 3, fan, 7, &b), BURROW_E_RANGE);
		cr_assert(strstr(burrow_last_error(), "is not a node id"), "%s", burrow_last_error());
		x.bad = -1;
		bw_sampled_free_arrays(&a);
		bw_sampled_free_arrays(&b);
		bw_sample_ctx_free(&c1);
		bw_sample_ctx_free(&c2);
	}
	free(x.ip);
	free(x.ids);
	free(x.pos);
	free(x.table);
	burrow_dataset_close(ds);
}

/* ------------------------------------------------------------ sampler backends */

/* bw_rng_below as written before it compiled for the device: the 128-bit product. */
static uint64_t ref_below(bw_rng *r, uint64_t n)
{
	unsigned __int128 m = (unsigned __int128)bw_rng_next(r) * n;
	if ((uint64_t)m < n) {
		const uint64_t thresh = -n % n;
		while ((uint64_t)m < thresh)
			m = (unsigned __int128)bw_rng_next(r) * n;
	}
	return (uint64_t)(m >> 64);
}

/* The host side of what the GPU sampler shares: bw_rng_below's split product, and
 * bw_draw without its table (the device's linear scan) picking as with it. */
Test(sampler, device_shared_draw_matches_on_the_host)
{
	const uint64_t ns[] = {1, 2, 3, 7, 1000, (1ull << 32) + 5, (1ull << 63) + 12345, UINT64_MAX};
	for (uint64_t key = 0; key < 200; key++)
		for (size_t i = 0; i < sizeof ns / sizeof *ns; i++) {
			bw_rng a, b;
			bw_rng_seed(&a, key);
			bw_rng_seed(&b, key);
			for (int j = 0; j < 4; j++)
				cr_assert_eq(bw_rng_below(&a, ns[i]), ref_below(&b, ns[i]), "key %llu n %llu",
					     (unsigned long long)key, (unsigned long long)ns[i]);
		}
	int64_t pa[300], pb[300], table[1024];
	const int64_t ks[] = {5, 33, 100, 299};
	for (uint64_t key = 0; key < 100; key++)
		for (size_t i = 0; i < sizeof ks / sizeof *ks; i++) {
			const int64_t k = ks[i], d = k + 1 + (int64_t)(key * 37 % 500);
			bw_rng a, b;
			bw_rng_seed(&a, key);
			bw_rng_seed(&b, key);
			bw_draw(&a, d, k, pa, table);
			bw_draw(&b, d, k, pb, NULL);
			cr_assert(!memcmp(pa, pb, (size_t)k * sizeof *pa), "key %llu k %lld d %lld: picks differ",
				  (unsigned long long)key, (long long)k, (long long)d);
			for (int64_t j = 1; j < k; j++)
				cr_assert_lt(pb[j - 1], pb[j]);
		}
}

/* The sampler backends the loop below covers (every registered one must be here). */
static const char *backend_names[] = {"cpu", "cuda"};

Test(sampler, every_registered_backend_is_in_the_loop)
{
	cr_assert_geq(bw_sampler_backend_count(), 1);
	cr_assert_str_eq(bw_sampler_backend_at(0)->name, "cpu", "the CPU is the first, the reference");
	for (int i = 0; i < bw_sampler_backend_count(); i++) {
		bool listed = false;
		for (size_t k = 0; k < sizeof backend_names / sizeof *backend_names; k++)
			listed = listed || !strcmp(backend_names[k], bw_sampler_backend_at(i)->name);
		cr_assert(listed, "sampler backend %s is registered but not in the test loop", bw_sampler_backend_at(i)->name);
	}
}

/* The registered backend named `name` with a device here, or a skipped test saying why
 * not (after checking that the sampler refuses that device, naming it). */
static void need_backend(const char *name, const burrow_csr *g)
{
	const bw_sampler_backend *r = NULL;
	for (int i = 0; i < bw_sampler_backend_count(); i++)
		if (!strcmp(bw_sampler_backend_at(i)->name, name))
			r = bw_sampler_backend_at(i);
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	o.device = name;
	burrow_sampler *s;
	if (!r || r->devices() < 1) {
		cr_assert_neq(burrow_sampler_open(&s, g, NULL, 0, &o), 0, "device %s opened without a device", name);
		cr_assert_null(s);
		cr_assert(strstr(burrow_last_error(), "cuda"), "the refusal names the device: %s", burrow_last_error());
		if (!r)
			cr_skip_test("sampler backend %s is not in this build", name);
		cr_skip_test("backend %s is registered but has no device here", name);
	}
}

/* Every batch of two epochs and explicit-seed batches of backend `name` equal the CPU
 * sampler's, element for element, over several fanouts (whole rows, none, above the draw's
 * small-set size), with its producers on and off. labor: 0 neighbor sampling, 1 LABOR, 2
 * LABOR with batch dependency (3), 3 LABOR-* (its weights bit for bit too), 4 LABOR-* with
 * batch dependency (3). */
static void backend_equals_cpu(const char *name, bool int64_ids, int labor)
{
	tgraph t;
	skewed(&t, 3000, 24000, 11);
	int64_t *wide = NULL;
	burrow_csr g = t.g;
	if (int64_ids) {
		wide = malloc((size_t)t.g.num_edges * sizeof *wide);
		for (int64_t j = 0; j < t.g.num_edges; j++)
			wide[j] = burrow_csr_index(&t.g, j);
		g.indices = wide;
		g.index_width = 8;
	}
	need_backend(name, &g);
	int64_t ids[1500];
	for (int i = 0; i < 1500; i++)
		ids[i] = (i * 7919) % 3000;
	const int fanouts[][3] = {{15, 10, 5}, {-1, 4, 2}, {40, 0, -1}, {3, -1, 33}};
	for (size_t f = 0; f < sizeof fanouts / sizeof *fanouts; f++)
		for (int prefetch = 0; prefetch <= 3; prefetch += 3) {
			burrow_sampler_opts o;
			burrow_sampler_defaults(&o);
			memcpy(o.fanouts, fanouts[f], sizeof fanouts[f]);
			o.batch_size = 256;
			o.seed = 5 + f;
			o.prefetch = 0;
			o.labor = labor == 1 || labor == 2;
			o.labor_star = labor >= 3 ? BURROW_LABOR_STAR_ROUNDS : 0;
			o.labor_batch_dependency = labor == 2 || labor == 4 ? 3 : 0;
			burrow_sampler *cpu, *dev;
			cr_assert_eq(burrow_sampler_open(&cpu, &g, ids, 1500, &o), 0, "%s", burrow_last_error());
			o.device = name;
			o.prefetch = prefetch;
			o.producers = 2;
			cr_assert_eq(burrow_sampler_open(&dev, &g, ids, 1500, &o), 0, "%s", burrow_last_error());
			for (int64_t epoch = 0; epoch < 2; epoch++) {
				saved *a, *b;
				const int64_t na = run_epoch(cpu, epoch, &a), nb = run_epoch(dev, epoch, &b);
				cr_assert_eq(na, nb);
				for (int64_t i = 0; i < na; i++) {
					check_batch_star(&g, &b[i].b, 3, o.fanouts, b[i].b.seeds, b[i].b.num_seeds, labor >= 3);
					same_batch(&a[i].b, &b[i].b);
				}
				free_epoch(a, na);
				free_epoch(b, nb);
			}
			int64_t seeds[3] = {17, 2999, 0};
			burrow_batch *x, *y;
			cr_assert_eq(burrow_sampler_sample(cpu, seeds, 3, 9, &x), 0, "%s", burrow_last_error());
			cr_assert_eq(burrow_sampler_sample(dev, seeds, 3, 9, &y), 0, "%s", burrow_last_error());
			same_batch(x, y);
			burrow_sampler_release(cpu, x);
			burrow_sampler_release(dev, y);
			seeds[1] = 17; /* a repeated seed: refused the same way */
			const int sa = burrow_sampler_sample(cpu, seeds, 3, 9, &x), sb = burrow_sampler_sample(dev, seeds, 3, 9, &y);
			cr_assert_eq(sa, BURROW_E_INVAL);
			cr_assert_eq(sb, sa, "%s", burrow_last_error());
			burrow_sampler_close(cpu);
			burrow_sampler_close(dev);
		}
	free(wide);
	tgraph_free(&t);
}

/* Parameters are indices into backend_names (Criterion copies them into each test's
 * process, where a pointer into ours would not hold). */
ParameterizedTestParameters(sampler, backend_batches_equal_the_cpu)
{
	static int which[] = {0, 1};
	return cr_make_param_array(int, which, sizeof which / sizeof *which);
}

ParameterizedTest(int *which, sampler, backend_batches_equal_the_cpu, .timeout = 120)
{
	backend_equals_cpu(backend_names[*which], false, 0);
}

ParameterizedTestParameters(sampler, backend_batches_equal_the_cpu_int64_ids)
{
	static int which[] = {0, 1};
	return cr_make_param_array(int, which, sizeof which / sizeof *which);
}

ParameterizedTest(int *which, sampler, backend_batches_equal_the_cpu_int64_ids, .timeout = 120)
{
	backend_equals_cpu(backend_names[*which], true, 0);
}

/* The same with LABOR (int32 ids), LABOR's batch dependency (int64 ids), LABOR-* (int32 ids)
 * and LABOR-* with batch dependency (int64 ids). Parameter: 5 x the backend's index + the
 * mode. */
ParameterizedTestParameters(sampler, backend_labor_batches_equal_the_cpu)
{
	static int which[] = {1, 2, 3, 4, 6, 7, 8, 9};
	return cr_make_param_array(int, which, sizeof which / sizeof *which);
}

ParameterizedTest(int *which, sampler, backend_labor_batches_equal_the_cpu, .timeout = 120)
{
	backend_equals_cpu(backend_names[*which / 5], *which % 5 == 2 || *which % 5 == 4, *which % 5);
}
