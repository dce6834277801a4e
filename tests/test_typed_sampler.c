/* test_typed_sampler.c: the typed sampler against a slow reference element for element, its invariants, determinism over threads and order, epochs, refusals, failing allocations; LABOR, fanout per node and LABOR-* likewise. */
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "../sampler/sampler_internal.h"
#include "util.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(typed_sampler, 120);

enum { PAPER, AUTHOR, FIELD };

/* ------------------------------------------------------------ typed graphs over the test's arrays */

/* A typed graph and the arrays its relations point into (the test owns them). */
typedef struct tgraph {
	burrow_hetero h;
	int64_t *indptr[BURROW_MAX_RELATIONS];
	void *indices[BURROW_MAX_RELATIONS];
} tgraph;

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Relation r of t: rows by destination, sorted, repeats dropped, ids of `width` bytes. */
static void put_relation(tgraph *t, int r, const char *name, int src, int dst, int64_t *pairs /* [m][2] (dst, src) */,
			 int64_t m, int width)
{
	qsort(pairs, (size_t)m, 2 * sizeof(int64_t), cmp_pair);
	const int64_t nd = t->h.type_nodes[dst];
	int64_t *ip = calloc((size_t)nd + 1, sizeof *ip);
	void *ind = malloc((size_t)(m ? m : 1) * 8);
	int64_t e = 0;
	for (int64_t i = 0; i < m; i++) {
		if (i && pairs[2 * i] == pairs[2 * i - 2] && pairs[2 * i + 1] == pairs[2 * i - 1])
			continue;
		ip[pairs[2 * i] + 1]++;
		if (width == 4)
			((int32_t *)ind)[e++] = (int32_t)pairs[2 * i + 1];
		else
			((int64_t *)ind)[e++] = pairs[2 * i + 1];
	}
	for (int64_t v = 0; v < nd; v++)
		ip[v + 1] += ip[v];
	t->indptr[r] = ip;
	t->indices[r] = ind;
	t->h.rel[r] = (burrow_relation){.name = name, .src_type = src, .dst_type = dst,
					.graph = {.num_nodes = nd, .num_edges = e, .indptr = ip, .indices = ind,
						  .index_width = width}};
}

/* papers (the target), authors, fields of study; scale 1: 40, 30 and 6. Relations:
 *   0 paper cites paper (src == dst type; paper 0 is cited by 38 papers: fanouts above 32
 *     take Floyd's hash set),   1 author writes paper,   2 paper rev_writes author,
 *   3 field topic_of paper (int64 ids),   4 paper has_topic field.
 * The last eighth of the papers has no authors and the last sixth of the authors writes
 * nothing: rows without in-edges. */
static void make_graph(tgraph *t, int scale, uint64_t seed)
{
	memset(t, 0, sizeof *t);
	const int64_t P = 40 * scale, A = 30 * scale, F = 6 * scale;
	t->h.num_types = 3;
	t->h.type_names[PAPER] = "paper";
	t->h.type_names[AUTHOR] = "author";
	t->h.type_names[FIELD] = "field";
	t->h.type_nodes[PAPER] = P;
	t->h.type_nodes[AUTHOR] = A;
	t->h.type_nodes[FIELD] = F;
	t->h.num_relations = 5;
	t->h.target_type = PAPER;
	bw_rng g;
	bw_rng_seed(&g, seed);
	int64_t *cites = malloc((size_t)(P * 4 + 38) * 2 * sizeof(int64_t)), nc = 0;
	for (int64_t i = 0; i < 38; i++, nc++) { /* papers 2 .. 39 cite paper 0 */
		cites[2 * nc] = 0;
		cites[2 * nc + 1] = 2 + i;
	}
	for (int64_t v = 1; v < P; v++) /* paper v is cited by 0 .. 6 papers */
		for (int64_t j = 0, d = (int64_t)bw_rng_below(&g, 7); j < d; j++, nc++) {
			cites[2 * nc] = v;
			cites[2 * nc + 1] = (int64_t)bw_rng_below(&g, (uint64_t)P);
		}
	put_relation(t, 0, "cites", PAPER, PAPER, cites, nc, 4);
	int64_t *w = malloc((size_t)P * 3 * 2 * sizeof(int64_t)), nw = 0;
	for (int64_t p = 0; p < P - P / 8; p++) /* 1 .. 3 authors among the first 5/6 */
		for (int64_t j = 0, d = 1 + (int64_t)bw_rng_below(&g, 3); j < d; j++, nw++) {
			w[2 * nw] = p;
			w[2 * nw + 1] = (int64_t)bw_rng_below(&g, (uint64_t)(A - A / 6));
		}
	put_relation(t, 1, "writes", AUTHOR, PAPER, w, nw, 4);
	for (int64_t i = 0; i < nw; i++) {
		int64_t x = w[2 * i];
		w[2 * i] = w[2 * i + 1];
		w[2 * i + 1] = x;
	}
	put_relation(t, 2, "rev_writes", PAPER, AUTHOR, w, nw, 4);
	int64_t *f = malloc((size_t)P * 2 * 2 * sizeof(int64_t)), nf = 0;
	for (int64_t p = 0; p < P; p++) /* 0 .. 2 fields */
		for (int64_t j = 0, d = (int64_t)bw_rng_below(&g, 3); j < d; j++, nf++) {
			f[2 * nf] = p;
			f[2 * nf + 1] = (int64_t)bw_rng_below(&g, (uint64_t)F);
		}
	put_relation(t, 3, "topic_of", FIELD, PAPER, f, nf, 8);
	for (int64_t i = 0; i < nf; i++) {
		int64_t x = f[2 * i];
		f[2 * i] = f[2 * i + 1];
		f[2 * i + 1] = x;
	}
	put_relation(t, 4, "has_topic", PAPER, FIELD, f, nf, 4);
	free(cites);
	free(w);
	free(f);
}

static void free_graph(tgraph *t)
{
	for (int r = 0; r < t->h.num_relations; r++) {
		free(t->indptr[r]);
		free(t->indices[r]);
	}
}

static int64_t deg(const burrow_csr *g, int64_t v) { return g->indptr[v + 1] - g->indptr[v]; }

static bool has_edge(const burrow_csr *g, int64_t v, int64_t u)
{
	for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++)
		if (burrow_csr_index(g, j) == u)
			return true;
	return false;
}

/* The fanout of (l, r) as burrow_typed_sampler_opts documents it. */
static int fan_of(const burrow_typed_sampler_opts *o, int l, int r)
{
	return o->rel_fanouts[l][r] > -2 ? o->rel_fanouts[l][r] : o->fanouts[l];
}

/* ------------------------------------------------------------ ref_: the slow, obvious typed sampler */

typedef struct ref_batch {
	int L, R, T;
	int64_t num[BURROW_MAX_LAYERS + 1][BURROW_MAX_TYPES];
	int64_t *nodes[BURROW_MAX_TYPES];
	int64_t *ip[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	int32_t *ind[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	float *w[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS]; /* LABOR-*'s weights, or NULL */
} ref_batch;

static int64_t ref_find(const int64_t *a, int64_t n, int64_t x)
{
	for (int64_t i = 0; i < n; i++)
		if (a[i] == x)
			return i;
	return -1;
}

/* Row v of g sampled as documented: whole when min(f, d) = d, else draw.h's Floyd draw from
 * the stream bw_key(bw_key(bw_key(key, l), r), v) (with no hash set: a linear scan, the same
 * picks); the ids into out, returns how many. */
static int64_t ref_row(const burrow_csr *g, int64_t v, int f, uint64_t key, int l, int r, int64_t *out)
{
	const int64_t d = deg(g, v), k = f < 0 || d <= f ? d : f, s = g->indptr[v];
	if (k == d) {
		for (int64_t j = 0; j < d; j++)
			out[j] = burrow_csr_index(g, s + j);
		return k;
	}
	if (k == 0)
		return 0;
	bw_rng rng;
	bw_rng_seed(&rng, bw_key(bw_key(bw_key(key, (uint64_t)l), (uint64_t)r), (uint64_t)v));
	int64_t *pos = malloc((size_t)k * sizeof *pos);
	bw_draw(&rng, d, k, pos, NULL);
	for (int64_t j = 0; j < k; j++)
		out[j] = burrow_csr_index(g, s + pos[j]);
	free(pos);
	return k;
}

/* Fanout per node, as documented: v (of r's dst type t) sees the in-edges of every relation
 * into t that layer l runs (fanout(l, r) != 0), relations ascending, rows in CSR order; it
 * keeps min(fanouts[l], D) of them: all, or LABOR's smallest (variate, position) with the
 * variate bw_key(bw_key(bw_key(key, l) ^ salt, src type) | 1, id), or Floyd's draw from the
 * stream bw_key(bw_key(bw_key(key, l), MAX_RELATIONS + t), v). Relation r's picks into out,
 * returns how many. */
static int64_t ref_node_row(const burrow_hetero *h, const burrow_typed_sampler_opts *o, uint64_t key, int l, int r,
			    int64_t v, int64_t *out)
{
	const int t = h->rel[r].dst_type, f = o->fanouts[l];
	int64_t D = 0;
	for (int q = 0; q < h->num_relations; q++)
		D += h->rel[q].dst_type == t && fan_of(o, l, q) != 0 ? deg(&h->rel[q].graph, v) : 0;
	int *rel = malloc((size_t)(D + 1) * sizeof *rel);
	int64_t *id = malloc((size_t)(D + 1) * sizeof *id), *pos = malloc((size_t)(D + 1) * sizeof *pos);
	uint64_t *var = malloc((size_t)(D + 1) * sizeof *var);
	int64_t p = 0;
	const uint64_t lkey = bw_key(key, (uint64_t)l);
	for (int q = 0; q < h->num_relations; q++)
		for (int64_t j = 0; h->rel[q].dst_type == t && fan_of(o, l, q) != 0 && j < deg(&h->rel[q].graph, v); j++, p++) {
			rel[p] = q;
			id[p] = burrow_csr_index(&h->rel[q].graph, h->rel[q].graph.indptr[v] + j);
			var[p] = bw_key(bw_key(lkey ^ 0x4C41424F52ull, (uint64_t)h->rel[q].src_type) | 1, (uint64_t)id[p]);
		}
	const int64_t k = f < 0 || D <= f ? D : f;
	if (k == D) {
		for (int64_t j = 0; j < k; j++)
			pos[j] = j;
	} else if (o->labor) { /* selection: the k smallest (variate, position), then by position */
		char *taken = calloc((size_t)D + 1, 1);
		for (int64_t j = 0; j < k; j++) {
			int64_t best = -1;
			for (int64_t x = 0; x < D; x++)
				if (!taken[x] && (best < 0 || var[x] < var[best]))
					best = x;
			taken[best] = 1;
		}
		for (int64_t x = 0, j = 0; x < D; x++)
			if (taken[x])
				pos[j++] = x;
		free(taken);
	} else if (k > 0) {
		bw_rng rng;
		bw_rng_seed(&rng, bw_key(bw_key(lkey, (uint64_t)(BURROW_MAX_RELATIONS + t)), (uint64_t)v));
		bw_draw(&rng, D, k, pos, NULL);
	}
	int64_t m = 0;
	for (int64_t j = 0; j < k; j++)
		if (rel[pos[j]] == r)
			out[m++] = id[pos[j]];
	free(rel);
	free(id);
	free(pos);
	free(var);
	return m;
}

/* Row v of relation r at layer l: per relation (ref_row) or per node (ref_node_row). */
static int64_t ref_pick(const burrow_hetero *h, const burrow_typed_sampler_opts *o, uint64_t key, int l, int r,
			int64_t v, int64_t *out)
{
	if (o->fanout_mode == BURROW_TYPED_FANOUT_NODE)
		return fan_of(o, l, r) == 0 ? 0 : ref_node_row(h, o, key, l, r, v, out);
	return ref_row(&h->rel[r].graph, v, fan_of(o, l, r), key, l, r, out);
}

/* LABOR-*'s c of a row of d > k sources whose weights are p[0, d), as documented: the c where
 * sum min(1, c p_j) = k, by bisection (the sum grows with c up to every source saturated, d). */
static double ref_star_c(const double *p, int64_t d, int64_t k)
{
	double lo = 0, hi = 0;
	for (int64_t j = 0; j < d; j++)
		hi = fmax(hi, 1.0 / p[j]);
	for (int it = 0; it < 200; it++) {
		const double mid = 0.5 * (lo + hi);
		double sum = 0;
		for (int64_t j = 0; j < d; j++)
			sum += fmin(1.0, mid * p[j]);
		if (sum < (double)k)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* Relation r's block at a layer of key lkey under LABOR-* (`rounds` rounds), as docs/sampler.md
 * documents it, for the nd destinations dst: its distinct sources start at pi = 1; a row of
 * degree d > f has the c of ref_star_c, any other row c = 1 / its smallest pi (0 when empty);
 * a round sets each pi_u to pi_u times the largest c of the rows reading u, then every c again,
 * and is the last when its sum of min(1, pi_u) fell by less than 1e-4 of the round before's. A
 * row of d > f keeps u when u's variate (bw_key(bw_key(lkey ^ salt, src type) | 1, u), its top
 * 53 bits in [0, 1)) is below min(1, c pi_u), weighed 1 / that probability scaled so that the
 * row's weights sum to its count; other rows whole, weights 1; fanout -1: whole, no weights (w
 * NULL). Offsets into ip [nd + 1], source ids into out, weights into w. */
static void ref_star_block(const burrow_hetero *h, int r, int f, int rounds, uint64_t lkey, const int64_t *dst,
			   int64_t nd, int64_t *ip, int64_t *out, float *w)
{
	const burrow_csr *g = &h->rel[r].graph;
	int64_t F = 0;
	for (int64_t i = 0; i < nd; i++)
		F += deg(g, dst[i]);
	int64_t *src = malloc((size_t)(F + 1) * sizeof *src), *u = malloc((size_t)(F + 1) * sizeof *u), m = 0;
	for (int64_t i = 0, q = 0; i < nd; i++)
		for (int64_t j = 0; j < deg(g, dst[i]); j++, q++)
			u[q] = src[q] = burrow_csr_index(g, g->indptr[dst[i]] + j);
	qsort(u, (size_t)F, sizeof *u, bw_cmp_i64);
	for (int64_t q = 0; q < F; q++)
		if (q == 0 || u[q] != u[q - 1])
			u[m++] = u[q];
	int64_t *at = malloc((size_t)(F + 1) * sizeof *at); /* each neighbor's source index */
	for (int64_t q = 0; q < F; q++)
		at[q] = (int64_t *)bsearch(&src[q], u, (size_t)m, sizeof *u, bw_cmp_i64) - u;
	double *pi = malloc((size_t)(m + 1) * sizeof *pi), *mx = malloc((size_t)(m + 1) * sizeof *mx);
	double *c = malloc((size_t)(nd + 1) * sizeof *c), *p = malloc((size_t)(F + 1) * sizeof *p);
	for (int64_t x = 0; x < m; x++)
		pi[x] = 1.0;
	double prev = INFINITY;
	for (int it = 0; it <= rounds; it++) {
		for (int64_t i = 0, q0 = 0; i < nd; q0 += deg(g, dst[i]), i++) { /* every row's c */
			const int64_t d = deg(g, dst[i]);
			double lo = INFINITY;
			for (int64_t j = 0; j < d; j++) {
				p[j] = pi[at[q0 + j]];
				lo = fmin(lo, p[j]);
			}
			c[i] = f >= 0 && d > f ? ref_star_c(p, d, f) : d ? 1.0 / lo : 0.0;
		}
		if (it == rounds || f < 0)
			break;
		for (int64_t x = 0; x < m; x++)
			mx[x] = 0;
		for (int64_t i = 0, q0 = 0; i < nd; q0 += deg(g, dst[i]), i++)
			for (int64_t j = 0; j < deg(g, dst[i]); j++)
				mx[at[q0 + j]] = fmax(mx[at[q0 + j]], c[i]);
		double ex = 0;
		for (int64_t x = 0; x < m; x++) {
			pi[x] *= mx[x];
			ex += fmin(1.0, pi[x]);
		}
		if (ex >= prev * (1 - 1e-4))
			rounds = it + 1; /* this round's c, then stop */
		prev = ex;
	}
	const uint64_t lk = bw_key(lkey ^ 0x4C41424F52ull, (uint64_t)h->rel[r].src_type) | 1;
	ip[0] = 0;
	for (int64_t i = 0, q0 = 0; i < nd; q0 += deg(g, dst[i]), i++) {
		const int64_t d = deg(g, dst[i]), e0 = ip[i];
		int64_t n = 0;
		double inv = 0;
		for (int64_t j = 0; j < d; j++) {
			const double th = c[i] * pi[at[q0 + j]], var = (double)(bw_key(lk, (uint64_t)src[q0 + j]) >> 11) * 0x1p-53;
			if (f >= 0 && d > f && !(var < fmin(1.0, th)))
				continue;
			p[n] = f >= 0 && d > f ? fmin(1.0, th) : 1.0;
			inv += 1.0 / p[n];
			out[e0 + n++] = src[q0 + j];
		}
		for (int64_t j = 0; w && j < n; j++)
			w[e0 + j] = (float)(1.0 / p[j] * (double)n / inv);
		ip[i + 1] = e0 + (f == 0 ? 0 : n);
	}
	free(src);
	free(u);
	free(at);
	free(pi);
	free(mx);
	free(c);
	free(p);
}

static void ref_sample(const burrow_hetero *h, const burrow_typed_sampler_opts *o, const int64_t *seeds, int64_t n,
		       uint64_t key, ref_batch *rb)
{
	memset(rb, 0, sizeof *rb);
	const int L = rb->L = o->num_layers;
	rb->R = h->num_relations;
	rb->T = h->num_types;
	int64_t cap[BURROW_MAX_TYPES] = {0};
	for (int t = 0; t < h->num_types; t++) {
		for (int r = 0; r < h->num_relations; r++)
			cap[t] += h->rel[r].src_type == t ? h->rel[r].graph.num_edges * L : 0;
		cap[t] += n + 1;
		rb->nodes[t] = malloc((size_t)cap[t] * sizeof(int64_t));
	}
	memcpy(rb->nodes[h->target_type], seeds, (size_t)n * sizeof *seeds);
	rb->num[L][h->target_type] = n;
	for (int l = L - 1; l >= 0; l--) {
		int64_t *drawn[BURROW_MAX_RELATIONS];
		memcpy(rb->num[l], rb->num[l + 1], sizeof rb->num[l]);
		for (int r = 0; r < h->num_relations; r++) { /* draw every row */
			const burrow_relation *x = &h->rel[r];
			const int64_t nd = rb->num[l + 1][x->dst_type];
			rb->ip[l][r] = calloc((size_t)nd + 1, sizeof(int64_t));
			drawn[r] = malloc((size_t)(x->graph.num_edges + 1) * sizeof(int64_t));
			if (o->labor_star > 0) {
				const int f = fan_of(o, l, r);
				rb->w[l][r] = f >= 0 ? malloc((size_t)(x->graph.num_edges + 1) * sizeof(float)) : NULL;
				ref_star_block(h, r, f, o->labor_star, bw_key(key, (uint64_t)l), rb->nodes[x->dst_type], nd,
					       rb->ip[l][r], drawn[r], rb->w[l][r]);
				continue;
			}
			for (int64_t i = 0; i < nd; i++)
				rb->ip[l][r][i + 1] = rb->ip[l][r][i] + ref_pick(h, o, key, l, r, rb->nodes[x->dst_type][i],
										   drawn[r] + rb->ip[l][r][i]);
		}
		for (int t = 0; t < h->num_types; t++) { /* new nodes of t: the drawn ids not yet there, sorted */
			int64_t *nt = rb->nodes[t], *num = &rb->num[l][t];
			for (int r = 0; r < h->num_relations; r++)
				for (int64_t e = 0; h->rel[r].src_type == t && e < rb->ip[l][r][rb->num[l + 1][h->rel[r].dst_type]];
				     e++)
					if (ref_find(nt, *num, drawn[r][e]) < 0)
						nt[(*num)++] = drawn[r][e];
			qsort(nt + rb->num[l + 1][t], (size_t)(*num - rb->num[l + 1][t]), sizeof *nt, bw_cmp_i64);
		}
		for (int r = 0; r < h->num_relations; r++) { /* local ids */
			const burrow_relation *x = &h->rel[r];
			const int64_t E = rb->ip[l][r][rb->num[l + 1][x->dst_type]];
			rb->ind[l][r] = malloc((size_t)(E + 1) * sizeof(int32_t));
			for (int64_t e = 0; e < E; e++)
				rb->ind[l][r][e] = (int32_t)ref_find(rb->nodes[x->src_type], rb->num[l][x->src_type], drawn[r][e]);
			free(drawn[r]);
		}
	}
}

static void ref_free(ref_batch *rb)
{
	for (int t = 0; t < rb->T; t++)
		free(rb->nodes[t]);
	for (int l = 0; l < rb->L; l++)
		for (int r = 0; r < rb->R; r++) {
			free(rb->ip[l][r]);
			free(rb->ind[l][r]);
			free(rb->w[l][r]);
		}
}

/* b equals the reference, array by array. */
static void same_as_ref(const burrow_typed_batch *b, const ref_batch *rb, const char *what)
{
	cr_assert_eq(b->num_layers, rb->L, "%s", what);
	cr_assert_eq(b->num_types, rb->T, "%s", what);
	cr_assert_eq(b->num_relations, rb->R, "%s", what);
	for (int l = 0; l <= rb->L; l++)
		for (int t = 0; t < rb->T; t++)
			cr_assert_eq(b->num_nodes[l][t], rb->num[l][t], "%s: level %d has %lld nodes of type %d, want %lld",
				     what, l, (long long)b->num_nodes[l][t], t, (long long)rb->num[l][t]);
	for (int t = 0; t < rb->T; t++)
		for (int64_t i = 0; i < rb->num[0][t]; i++)
			cr_assert_eq(b->input_ids[t][i], rb->nodes[t][i], "%s: type %d input %lld is %lld, want %lld", what, t,
				     (long long)i, (long long)b->input_ids[t][i], (long long)rb->nodes[t][i]);
	for (int l = 0; l < rb->L; l++)
		for (int r = 0; r < rb->R; r++) {
			const burrow_block *k = &b->blocks[l][r];
			for (int64_t i = 0; i <= k->num_dst; i++)
				cr_assert_eq(k->indptr[i], rb->ip[l][r][i], "%s: block (%d, %d) offset %lld", what, l, r,
					     (long long)i);
			for (int64_t e = 0; e < k->num_edges; e++)
				cr_assert_eq(k->indices[e], rb->ind[l][r][e], "%s: block (%d, %d) edge %lld is %d, want %d", what,
					     l, r, (long long)e, k->indices[e], rb->ind[l][r][e]);
			cr_assert_eq(k->edge_weight != NULL, rb->w[l][r] != NULL, "%s: block (%d, %d) has weights %p", what, l,
				     r, (const void *)k->edge_weight);
			for (int64_t e = 0; rb->w[l][r] && e < k->num_edges; e++)
				cr_assert(fabs(k->edge_weight[e] - rb->w[l][r][e]) <= 1e-5 * fmax(1.0, rb->w[l][r][e]),
					  "%s: block (%d, %d) edge %lld weighs %.9g, want %.9g", what, l, r, (long long)e,
					  (double)k->edge_weight[e], (double)rb->w[l][r][e]);
		}
}

/* ------------------------------------------------------------ the invariants of a typed batch */

/* Ids of one type: distinct and in range. */
static void check_ids(const burrow_hetero *h, const burrow_typed_batch *b, int t)
{
	const int64_t m = b->num_nodes[0][t];
	cr_assert_eq(b->input_ids[t] == NULL, m == 0, "type %d: input ids NULL exactly when there are none", t);
	int64_t *a = malloc((size_t)(m + 1) * sizeof *a);
	for (int64_t i = 0; i < m; i++) {
		a[i] = b->input_ids[t][i];
		cr_assert(a[i] >= 0 && a[i] < h->type_nodes[t], "type %d: input id %lld out of range", t, (long long)a[i]);
	}
	qsort(a, (size_t)m, sizeof *a, bw_cmp_i64);
	for (int64_t i = 1; i < m; i++)
		cr_assert_neq(a[i], a[i - 1], "type %d: input id %lld twice", t, (long long)a[i]);
	free(a);
}

/* LABOR-*'s weights of block (l, r)'s row [lo, hi): positive, summing to the row's count; 1 for a
 * row taken whole. */
static void check_star_weights(const burrow_block *k, int l, int r, int64_t lo, int64_t hi, bool whole)
{
	double sum = 0;
	for (int64_t j = lo; j < hi; j++) {
		cr_assert(k->edge_weight[j] > 0, "block (%d, %d): weight %g", l, r, (double)k->edge_weight[j]);
		cr_assert(!whole || k->edge_weight[j] == 1.0f, "block (%d, %d): a whole row weighs %g", l, r,
			  (double)k->edge_weight[j]);
		sum += k->edge_weight[j];
	}
	cr_assert(fabs(sum - (double)(hi - lo)) <= 1e-4 * (double)(hi - lo), "block (%d, %d): weights sum to %g over %lld edges",
		  l, r, sum, (long long)(hi - lo));
}

/* Block (l, r): its sizes, real edges, counts min(fanout, degree) (f == -3: at most the degree),
 * rows increasing. star: LABOR-*'s, a row above the fanout keeps any count, and the block has
 * weights (check_star_weights) unless its fanout is -1. Marks the sources it uses in used[]. */
static void check_block(const burrow_hetero *h, const burrow_typed_batch *b, int l, int r, int f, bool star, char *used)
{
	const burrow_relation *x = &h->rel[r];
	const burrow_block *k = &b->blocks[l][r];
	cr_assert_eq(k->num_dst, b->num_nodes[l + 1][x->dst_type], "block (%d, %d): dst count", l, r);
	cr_assert_eq(k->num_src, b->num_nodes[l][x->src_type], "block (%d, %d): src count", l, r);
	cr_assert_eq(k->indptr[0], 0);
	cr_assert_eq(k->indptr[k->num_dst], k->num_edges);
	cr_assert_eq(k->edge_weight != NULL, star && f >= 0, "block (%d, %d): weights only with LABOR-*", l, r);
	for (int64_t i = 0; i < k->num_dst; i++) {
		const int64_t v = b->input_ids[x->dst_type][i], d = deg(&x->graph, v), lo = k->indptr[i], hi = k->indptr[i + 1];
		const int64_t want = f < 0 || d <= f ? d : f;
		cr_assert(f == -3 || (star && f > 0 && d > f) ? hi - lo <= d : hi - lo == want,
			  "block (%d, %d): node %lld of degree %lld got %lld, want %lld", l, r, (long long)v, (long long)d,
			  (long long)(hi - lo), (long long)want);
		if (k->edge_weight)
			check_star_weights(k, l, r, lo, hi, d <= f);
		for (int64_t j = lo; j < hi; j++) {
			const int32_t s = k->indices[j];
			cr_assert(s >= 0 && s < k->num_src, "block (%d, %d): local id %d out of range", l, r, s);
			const int64_t u = b->input_ids[x->src_type][s];
			cr_assert(has_edge(&x->graph, v, u), "block (%d, %d): %lld -> %lld is no edge of %s", l, r, (long long)u,
				  (long long)v, x->name);
			if (j > lo)
				cr_assert_lt(b->input_ids[x->src_type][k->indices[j - 1]], u,
					     "block (%d, %d): row %lld repeats or is out of order", l, r, (long long)i);
			used[s] = 1;
		}
	}
}

static bool node_mode(const burrow_typed_sampler_opts *o) { return o->fanout_mode == BURROW_TYPED_FANOUT_NODE; }

/* Fanout per node: each destination of layer l holds min(fanouts[l], D) picks over the
 * relations into its type that the layer runs, D its in-degree over them (check_block saw
 * that each pick is a real edge and a row's picks distinct). */
static void check_node_counts(const burrow_hetero *h, const burrow_typed_batch *b, const burrow_typed_sampler_opts *o,
			      int l)
{
	const int f = o->fanouts[l];
	for (int t = 0; t < h->num_types; t++)
		for (int64_t i = 0; i < b->num_nodes[l + 1][t]; i++) {
			const int64_t v = b->input_ids[t][i];
			int64_t D = 0, got = 0;
			for (int r = 0; r < h->num_relations; r++) {
				if (h->rel[r].dst_type != t)
					continue;
				const burrow_block *k = &b->blocks[l][r];
				got += k->indptr[i + 1] - k->indptr[i];
				D += fan_of(o, l, r) != 0 ? deg(&h->rel[r].graph, v) : 0;
			}
			const int64_t want = f < 0 || D <= f ? D : f;
			cr_assert_eq(got, want, "layer %d: type %d node %lld of in-degree %lld holds %lld picks, want %lld", l,
				     t, (long long)v, (long long)D, (long long)got, (long long)want);
		}
}

/* Everything a typed batch promises. */
static void check_batch(const burrow_hetero *h, const burrow_typed_batch *b, const burrow_typed_sampler_opts *o,
			const int64_t *seeds, int64_t n)
{
	const int L = o->num_layers, tt = h->target_type;
	cr_assert_eq(b->num_layers, L);
	cr_assert_eq(b->num_seeds, n);
	cr_assert_eq(b->seeds, b->input_ids[tt], "the seeds are the target type's first input ids");
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(b->seeds[i], seeds[i], "seed %lld", (long long)i);
	for (int t = 0; t < h->num_types; t++) {
		cr_assert_eq(b->num_nodes[L][t], t == tt ? n : 0, "level %d (the seeds) of type %d", L, t);
		for (int l = 0; l < L; l++) {
			cr_assert_geq(b->num_nodes[l][t], b->num_nodes[l + 1][t], "type %d: level %d does not nest", t, l);
			for (int64_t i = b->num_nodes[l + 1][t] + 1; i < b->num_nodes[l][t]; i++)
				cr_assert_lt(b->input_ids[t][i - 1], b->input_ids[t][i], "type %d: level %d's new nodes", t, l);
		}
		check_ids(h, b, t);
	}
	for (int l = 0; l < L; l++)
		for (int t = 0; t < h->num_types; t++) { /* each new node is some edge's source */
			char *used = calloc((size_t)b->num_nodes[l][t] + 1, 1);
			for (int r = 0; r < h->num_relations; r++)
				if (h->rel[r].src_type == t)
					check_block(h, b, l, r, node_mode(o) && fan_of(o, l, r) ? -3 : fan_of(o, l, r),
						    o->labor_star > 0, used);
			for (int64_t i = b->num_nodes[l + 1][t]; i < b->num_nodes[l][t]; i++)
				cr_assert(used[i], "type %d level %d: node %lld is nobody's neighbor", t, l, (long long)i);
			free(used);
		}
	for (int l = 0; node_mode(o) && l < L; l++)
		check_node_counts(h, b, o, l);
}

/* ------------------------------------------------------------ helpers */

static burrow_typed_sampler *open_ok(const tgraph *t, const int64_t *ids, int64_t n, const burrow_typed_sampler_opts *o)
{
	burrow_typed_sampler *s;
	cr_assert_eq(burrow_typed_sampler_open(&s, &t->h, ids, n, o), 0, "%s", burrow_last_error());
	return s;
}

/* The seeds of batch k of `epoch` as documented: the ids shuffled by the stream
 * bw_key(bw_key(seed, epoch), UINT64_MAX), positions [k B, (k + 1) B). */
static int64_t *ref_perm(const int64_t *ids, int64_t n, uint64_t seed, int64_t epoch)
{
	int64_t *p = malloc((size_t)(n + 1) * sizeof *p);
	memcpy(p, ids, (size_t)n * sizeof *ids);
	bw_shuffle(p, n, bw_key(bw_key(seed, (uint64_t)epoch), UINT64_MAX));
	return p;
}

/* Two batches are the same, array by array. */
static void same_batch(const burrow_typed_batch *a, const burrow_typed_batch *b)
{
	cr_assert_eq(a->epoch, b->epoch);
	cr_assert_eq(a->index, b->index);
	cr_assert(!memcmp(a->num_nodes, b->num_nodes, sizeof a->num_nodes), "batch %lld: node counts differ",
		  (long long)a->index);
	for (int t = 0; t < a->num_types; t++)
		cr_assert(!a->num_nodes[0][t] ||
				  !memcmp(a->input_ids[t], b->input_ids[t], (size_t)a->num_nodes[0][t] * sizeof(int64_t)),
			  "batch %lld: type %d's input ids differ", (long long)a->index, t);
	for (int l = 0; l < a->num_layers; l++)
		for (int r = 0; r < a->num_relations; r++) {
			const burrow_block *x = &a->blocks[l][r], *y = &b->blocks[l][r];
			cr_assert_eq(x->num_edges, y->num_edges);
			cr_assert(!memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * sizeof(int64_t)));
			cr_assert(!memcmp(x->indices, y->indices, (size_t)x->num_edges * sizeof(int32_t)),
				  "batch %lld block (%d, %d): indices differ", (long long)a->index, l, r);
			cr_assert_eq(x->edge_weight != NULL, y->edge_weight != NULL);
			cr_assert(!x->edge_weight || !memcmp(x->edge_weight, y->edge_weight, (size_t)x->num_edges * sizeof(float)),
				  "batch %lld block (%d, %d): weights differ", (long long)a->index, l, r);
		}
}

/* ------------------------------------------------------------ tests */

/* Options of the reference runs: fanouts per layer, some per relation, -1, 0 and above 32. */
static void config(burrow_typed_sampler_opts *o, int c)
{
	burrow_typed_sampler_defaults(o);
	o->seed = 1000 + (uint64_t)c;
	switch (c) {
	case 0: /* one fanout per layer */
		o->num_layers = 2;
		o->fanouts[0] = 3;
		o->fanouts[1] = 2;
		o->batch_size = 7;
		break;
	case 1: /* three layers: all, 2, 35 (the hash set), relations overriding each */
		o->num_layers = 3;
		o->fanouts[0] = -1;
		o->fanouts[1] = 2;
		o->fanouts[2] = 35;
		o->rel_fanouts[2][1] = 0;  /* no authors for the seeds */
		o->rel_fanouts[1][0] = 40; /* every citation of paper 0 at layer 1 */
		o->rel_fanouts[0][4] = 1;
		o->batch_size = 5;
		break;
	case 2: /* one layer, nothing but one relation */
		o->num_layers = 1;
		o->fanouts[0] = 0;
		o->rel_fanouts[0][1] = 2;
		o->batch_size = 40;
		break;
	default: /* whole rows */
		o->num_layers = 2;
		o->fanouts[0] = -1;
		o->fanouts[1] = -1;
		o->batch_size = 16;
		o->drop_last = true;
	}
}

Test(typed_sampler, every_batch_equals_the_reference_and_keeps_the_invariants)
{
	tgraph t;
	make_graph(&t, 1, 7);
	int64_t ids[40];
	for (int i = 0; i < 40; i++)
		ids[i] = 39 - i;
	for (int c = 0; c < 4; c++) {
		burrow_typed_sampler_opts o;
		config(&o, c);
		burrow_typed_sampler *s = open_ok(&t, ids, 40, &o);
		const int64_t nb = burrow_typed_sampler_num_batches(s);
		cr_assert_eq(nb, o.drop_last ? 40 / o.batch_size : (40 + o.batch_size - 1) / o.batch_size);
		for (int64_t epoch = 0; epoch < 2; epoch++) {
			int64_t *perm = ref_perm(ids, 40, o.seed, epoch);
			for (int64_t k = 0; k < nb; k++) {
				burrow_typed_batch *b;
				cr_assert_eq(burrow_typed_sampler_batch(s, epoch, k, &b), 0, "%s", burrow_last_error());
				cr_assert_eq(b->epoch, epoch);
				cr_assert_eq(b->index, k);
				const int64_t m = BW_MIN(o.batch_size, 40 - k * o.batch_size);
				ref_batch rb;
				ref_sample(&t.h, &o, perm + k * o.batch_size, m, bw_key(bw_key(o.seed, (uint64_t)epoch), (uint64_t)k),
					   &rb);
				char what[64];
				snprintf(what, sizeof what, "config %d epoch %lld batch %lld", c, (long long)epoch, (long long)k);
				same_as_ref(b, &rb, what);
				check_batch(&t.h, b, &o, perm + k * o.batch_size, m);
				ref_free(&rb);
				burrow_typed_sampler_release(s, b);
			}
			free(perm);
		}
		/* explicit seeds: keyed by bw_key(bw_key(seed, UINT64_MAX - 1), key) */
		const int64_t seeds[] = {0, 39, 17, 3, 36};
		burrow_typed_batch *b;
		cr_assert_eq(burrow_typed_sampler_sample(s, seeds, 5, 99, &b), 0, "%s", burrow_last_error());
		cr_assert_eq(b->epoch, -1);
		cr_assert_eq(b->index, -1);
		ref_batch rb;
		ref_sample(&t.h, &o, seeds, 5, bw_key(bw_key(o.seed, UINT64_MAX - 1), 99), &rb);
		same_as_ref(b, &rb, "explicit seeds");
		check_batch(&t.h, b, &o, seeds, 5);
		ref_free(&rb);
		burrow_typed_sampler_release(s, b);
		burrow_typed_sampler_close(s);
	}
	free_graph(&t);
}

Test(typed_sampler, fanout_zero_keeps_the_seeds_alone)
{
	tgraph t;
	make_graph(&t, 1, 3);
	int64_t ids[] = {4, 9, 1};
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	o.fanouts[0] = o.fanouts[1] = 0;
	burrow_typed_sampler *s = open_ok(&t, ids, 3, &o);
	burrow_typed_batch *b;
	cr_assert_eq(burrow_typed_sampler_batch(s, 0, 0, &b), 0, "%s", burrow_last_error());
	for (int l = 0; l <= 2; l++)
		for (int ty = 0; ty < 3; ty++)
			cr_assert_eq(b->num_nodes[l][ty], ty == PAPER ? 3 : 0);
	for (int l = 0; l < 2; l++)
		for (int r = 0; r < 5; r++)
			cr_assert_eq(b->blocks[l][r].num_edges, 0);
	cr_assert_null(b->input_ids[AUTHOR]);
	cr_assert_null(b->input_ids[FIELD]);
	burrow_typed_sampler_release(s, b);
	burrow_typed_sampler_close(s);
	free_graph(&t);
}

/* Each of nb batches from s, in the order `order` (NULL: 0, 1, ...), into v[k]. */
static void take_all(burrow_typed_sampler *s, int64_t epoch, int64_t nb, const int64_t *order, burrow_typed_batch **v)
{
	for (int64_t i = 0; i < nb; i++) {
		const int64_t k = order ? order[i] : i;
		cr_assert_eq(burrow_typed_sampler_batch(s, epoch, k, &v[k]), 0, "%s", burrow_last_error());
	}
}

typedef struct half_job {
	burrow_typed_sampler *s;
	int64_t nb, parity;
	burrow_typed_batch **v;
	int st;
} half_job;

static void *take_half(void *arg)
{
	half_job *j = arg;
	for (int64_t k = j->nb - 1 - j->parity; k >= 0 && !j->st; k -= 2)
		j->st = burrow_typed_sampler_batch(j->s, 1, k, &j->v[k]);
	return NULL;
}

Test(typed_sampler, same_bits_whatever_the_threads_and_the_order)
{
	tgraph t;
	make_graph(&t, 60, 11); /* 2400 papers: a layer draws more edges than one thread takes */
	const int64_t n = 2000;
	int64_t *ids = malloc((size_t)n * sizeof *ids);
	for (int64_t i = 0; i < n; i++)
		ids[i] = (i * 7) % 2400;
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	o.fanouts[0] = 15;
	o.fanouts[1] = 10;
	o.batch_size = 600;
	o.seed = 5;
	o.threads = 1;
	burrow_typed_sampler *s1 = open_ok(&t, ids, n, &o);
	o.threads = 2;
	burrow_typed_sampler *s2 = open_ok(&t, ids, n, &o);
	const int64_t nb = burrow_typed_sampler_num_batches(s1), order[] = {3, 1, 0, 2};
	cr_assert_eq(nb, 4);
	burrow_typed_batch *a[4], *b[4], *c[4] = {0};
	take_all(s1, 1, nb, NULL, a);
	take_all(s2, 1, nb, order, b);
	int64_t E0 = 0;
	for (int r = 0; r < 5; r++)
		E0 += a[0]->blocks[0][r].num_edges;
	cr_assert_gt(E0, 8192, "the test graph draws %lld edges: too few for the threads to share a layer", (long long)E0);
	for (int64_t k = 0; k < nb; k++) {
		same_batch(a[k], b[k]);
		burrow_typed_sampler_release(s2, b[k]);
	}
	/* two callers at once, on one sampler, each asking for half the batches, backwards */
	half_job j[2] = {{.s = s2, .nb = nb, .parity = 0, .v = c}, {.s = s2, .nb = nb, .parity = 1, .v = c}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		cr_assert_eq(pthread_create(&th[i], NULL, take_half, &j[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		cr_assert_eq(j[i].st, 0, "%s", burrow_last_error());
	}
	for (int64_t k = 0; k < nb; k++) {
		same_batch(a[k], c[k]);
		check_batch(&t.h, c[k], &o, c[k]->seeds, c[k]->num_seeds);
		burrow_typed_sampler_release(s2, c[k]);
		burrow_typed_sampler_release(s1, a[k]);
	}
	burrow_typed_sampler_close(s1);
	burrow_typed_sampler_close(s2);
	free(ids);
	free_graph(&t);
}

/* Seeds of every batch of an epoch, in order, into out; returns how many. */
static int64_t epoch_seeds(burrow_typed_sampler *s, int64_t epoch, int64_t *out)
{
	int64_t m = 0;
	for (int64_t k = 0; k < burrow_typed_sampler_num_batches(s); k++) {
		burrow_typed_batch *b;
		cr_assert_eq(burrow_typed_sampler_batch(s, epoch, k, &b), 0, "%s", burrow_last_error());
		memcpy(out + m, b->seeds, (size_t)b->num_seeds * sizeof *out);
		m += b->num_seeds;
		burrow_typed_sampler_release(s, b);
	}
	return m;
}

Test(typed_sampler, epochs_cover_the_ids_once_and_shuffle_differently)
{
	tgraph t;
	make_graph(&t, 1, 5);
	int64_t ids[37], got[3][37], sorted[37];
	for (int i = 0; i < 37; i++)
		ids[i] = (i * 13 + 2) % 40;
	for (int drop = 0; drop < 2; drop++) {
		burrow_typed_sampler_opts o;
		burrow_typed_sampler_defaults(&o);
		o.batch_size = 8;
		o.drop_last = drop;
		burrow_typed_sampler *s = open_ok(&t, ids, 37, &o);
		const int64_t want = drop ? 32 : 37;
		for (int e = 0; e < 3; e++) {
			cr_assert_eq(epoch_seeds(s, e % 2, got[e]), want);
			memcpy(sorted, got[e], sizeof sorted);
			qsort(sorted, (size_t)want, sizeof *sorted, bw_cmp_i64);
			for (int64_t i = 1; i < want; i++)
				cr_assert_neq(sorted[i], sorted[i - 1], "epoch %d: seed %lld twice", e % 2, (long long)sorted[i]);
			for (int64_t i = 0; i < want; i++) {
				bool found = false;
				for (int k = 0; k < 37; k++)
					found |= ids[k] == sorted[i];
				cr_assert(found, "seed %lld is no training id", (long long)sorted[i]);
			}
		}
		cr_assert(memcmp(got[0], got[1], (size_t)want * sizeof(int64_t)), "epochs 0 and 1 in the same order");
		cr_assert(!memcmp(got[0], got[2], (size_t)want * sizeof(int64_t)), "epoch 0 asked again differs");
		burrow_typed_sampler_close(s);
	}
	free_graph(&t);
}

/* Bad case i of the graph or the options, and the status open must answer; false past the last. */
static bool bend(int i, tgraph *g, burrow_typed_sampler_opts *o, int *st)
{
	*st = i < 3 ? BURROW_E_FORMAT : BURROW_E_INVAL;
	switch (i) {
	case 0: g->h.rel[2].src_type = 3; return true;
	case 1: g->h.rel[1].dst_type = -1; return true;
	case 2: g->h.rel[1].graph.num_nodes = 39; return true; /* rows != its dst type's count */
	case 3: g->h.target_type = 3; return true;
	case 4: g->h.num_relations = 0; return true;
	case 5: o->fanouts[1] = -2; return true;
	case 6: o->rel_fanouts[0][4] = -3; return true;
	case 7: o->num_layers = 0; return true;
	case 8: o->batch_size = 0; return true;
	case 9: o->size = 0; return true;
	default: return false;
	}
}

Test(typed_sampler, refuses_bad_graphs_options_ids_and_seeds)
{
	tgraph t;
	make_graph(&t, 1, 9);
	int64_t ids[] = {1, 2, 3};
	burrow_typed_sampler *s = (burrow_typed_sampler *)&t;
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	int want, i = 0;
	for (;; i++) {
		tgraph g = t;
		burrow_typed_sampler_opts op = o;
		if (!bend(i, &g, &op, &want))
			break;
		cr_assert_eq(burrow_typed_sampler_open(&s, &g.h, ids, 3, &op), want, "case %d: %s", i, burrow_last_error());
		cr_assert_null(s);
	}
	cr_assert_eq(i, 10);
	int64_t dup[] = {1, 5, 1}, far[] = {1, 40};
	cr_assert_eq(burrow_typed_sampler_open(&s, &t.h, dup, 3, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "appears twice"), "%s", burrow_last_error());
	cr_assert_eq(burrow_typed_sampler_open(&s, &t.h, far, 2, &o), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "paper"), "%s", burrow_last_error());
	s = open_ok(&t, ids, 3, &o);
	burrow_typed_batch *b = (burrow_typed_batch *)&t;
	cr_assert_eq(burrow_typed_sampler_batch(s, 0, 1, &b), BURROW_E_RANGE);
	cr_assert_null(b);
	cr_assert_eq(burrow_typed_sampler_batch(s, -1, 0, &b), BURROW_E_INVAL);
	cr_assert_eq(burrow_typed_sampler_sample(s, dup, 3, 0, &b), BURROW_E_INVAL);
	cr_assert_eq(burrow_typed_sampler_sample(s, far, 2, 0, &b), BURROW_E_RANGE);
	cr_assert_eq(burrow_typed_sampler_sample(s, far, 0, 0, &b), BURROW_E_INVAL);
	cr_assert_null(b);
	burrow_typed_sampler_release(s, NULL);
	burrow_typed_sampler_close(s);
	burrow_typed_sampler_close(NULL);
	free_graph(&t);
}

/* open, two batches (one held while the other is sampled), explicit seeds, close; star: with
 * LABOR-*. */
static int one_run(const tgraph *t, const int64_t *ids, int64_t n, bool star)
{
	burrow_typed_sampler_opts o;
	config(&o, star ? 0 : 1);
	o.labor_star = star ? BURROW_LABOR_STAR_ROUNDS : 0;
	burrow_typed_sampler *s;
	burrow_typed_batch *a = NULL, *b = NULL;
	int st = burrow_typed_sampler_open(&s, &t->h, ids, n, &o);
	if (st)
		return st;
	if (!(st = burrow_typed_sampler_batch(s, 0, 0, &a)) && !(st = burrow_typed_sampler_batch(s, 1, 2, &b))) {
		burrow_typed_sampler_release(s, b);
		st = burrow_typed_sampler_sample(s, ids, 4, 3, &b);
	}
	burrow_typed_sampler_close(s);
	return st;
}

Test(typed_sampler, failing_allocations_return_nomem)
{
	tgraph t;
	make_graph(&t, 1, 13);
	int64_t ids[30];
	for (int i = 0; i < 30; i++)
		ids[i] = i;
	const size_t base = tu_mem_now();
	for (int star = 0; star < 2; star++) {
		int k;
		for (k = 0; k < 2000; k++) {
			bw_mem_fail_after(k);
			int st = one_run(&t, ids, 30, star);
			bw_mem_fail_after(-1);
			cr_assert_eq(tu_mem_now(), base, "star %d, failing allocation %d: %zu bytes not freed", star, k,
				     tu_mem_now() - base);
			if (st == 0)
				break;
			cr_assert_eq(st, BURROW_E_NOMEM, "star %d, failing allocation %d: %s", star, k, burrow_last_error());
		}
		cr_assert(k > 10 && k < 2000, "star %d: %d allocations", star, k);
	}
	free_graph(&t);
}

/* LABOR on typed graphs: every batch keeps the invariants (fanouts, real edges, rows in
 * order), with fanouts above 32 too (the heap in the row scratch), the same bits at 1 and 4
 * threads; and two papers written and reviewed by the same 20 authors pick the same K authors
 * in both rows of both relations (one variate per author, shared by the relations from the
 * author type), so the batch holds K authors, where neighbor sampling draws each row apart. */
Test(typed_sampler, labor_keeps_the_invariants_and_shares_picks_across_rows_and_relations)
{
	tgraph t;
	make_graph(&t, 4, 7);
	for (int c = 0; c < 2; c++) {
		burrow_typed_sampler_opts o;
		config(&o, c);
		o.labor = true;
		burrow_typed_sampler *s1 = open_ok(&t, NULL, 0, &o);
		o.threads = 4;
		burrow_typed_sampler *s4 = open_ok(&t, NULL, 0, &o);
		for (int64_t k = 0; k < 12; k++) {
			int64_t seeds[5];
			for (int j = 0; j < 5; j++)
				seeds[j] = (k * 5 + j) * 7 % t.h.type_nodes[PAPER];
			burrow_typed_batch *a, *b;
			cr_assert_eq(burrow_typed_sampler_sample(s1, seeds, 5, (uint64_t)k, &a), 0, "%s", burrow_last_error());
			cr_assert_eq(burrow_typed_sampler_sample(s4, seeds, 5, (uint64_t)k, &b), 0, "%s", burrow_last_error());
			check_batch(&t.h, a, &o, seeds, 5);
			same_batch(a, b);
			burrow_typed_sampler_release(s1, a);
			burrow_typed_sampler_release(s4, b);
		}
		burrow_typed_sampler_close(s1);
		burrow_typed_sampler_close(s4);
	}
	free_graph(&t);

	enum { LEAVES = 20, K = 5 };
	memset(&t, 0, sizeof t);
	t.h.num_types = 2;
	t.h.type_names[PAPER] = "paper";
	t.h.type_names[AUTHOR] = "author";
	t.h.type_nodes[PAPER] = 2;
	t.h.type_nodes[AUTHOR] = LEAVES;
	t.h.num_relations = 2;
	t.h.target_type = PAPER;
	for (int r = 0; r < 2; r++) {
		int64_t pairs[2 * 2 * LEAVES];
		for (int i = 0; i < 2 * LEAVES; i++)
			pairs[2 * i] = i / LEAVES, pairs[2 * i + 1] = i % LEAVES;
		put_relation(&t, r, r ? "reviews" : "writes", AUTHOR, PAPER, pairs, 2 * LEAVES, 4);
	}
	int same[2] = {0, 0};
	for (int labor = 0; labor < 2; labor++) {
		burrow_typed_sampler_opts o;
		burrow_typed_sampler_defaults(&o);
		o.num_layers = 1;
		o.fanouts[0] = K;
		o.labor = labor;
		burrow_typed_sampler *s = open_ok(&t, NULL, 0, &o);
		const int64_t seeds[2] = {0, 1};
		for (uint64_t key = 0; key < 50; key++) {
			burrow_typed_batch *b;
			cr_assert_eq(burrow_typed_sampler_sample(s, seeds, 2, key, &b), 0, "%s", burrow_last_error());
			check_batch(&t.h, b, &o, seeds, 2);
			bool eq = true;
			for (int r = 0; r < 2; r++) {
				const burrow_block *k = &b->blocks[0][r];
				cr_assert_eq(k->num_edges, 2 * K);
				for (int j = 0; j < K; j++)
					eq = eq && k->indices[j] == k->indices[K + j] && k->indices[j] == b->blocks[0][0].indices[j];
			}
			same[labor] += eq;
			if (labor)
				cr_assert_eq(b->num_nodes[0][AUTHOR], K, "LABOR: %lld authors", (long long)b->num_nodes[0][AUTHOR]);
			burrow_typed_sampler_release(s, b);
		}
		burrow_typed_sampler_close(s);
	}
	cr_assert_eq(same[1], 50, "LABOR gave rows or relations different picks %d times of 50", 50 - same[1]);
	cr_assert_lt(same[0], 5, "neighbor sampling gave every row the same picks %d times of 50", same[0]);
	free_graph(&t);
}

/* ------------------------------------------------------------ fanout per node */

/* config(c) for fanout per node: relations may only be left out (0), so the overrides above
 * become unset, and config 2 runs its one relation at fanout 2 by leaving the others out. */
static void node_config(burrow_typed_sampler_opts *o, int c, bool labor)
{
	config(o, c);
	o->fanout_mode = BURROW_TYPED_FANOUT_NODE;
	o->labor = labor;
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		for (int r = 0; r < BURROW_MAX_RELATIONS; r++)
			if (o->rel_fanouts[l][r] != 0)
				o->rel_fanouts[l][r] = -2;
	if (c == 2) {
		o->fanouts[0] = 2;
		for (int r = 0; r < 5; r++)
			o->rel_fanouts[0][r] = r == 1 ? -2 : 0;
	}
}

/* Every batch of every configuration, neighbor and LABOR, equals the slow reference
 * (ref_node_row) and keeps the invariants: each destination holds min(fanout, D) distinct
 * real in-edges over its type's relations. */
Test(typed_sampler, node_fanout_equals_the_reference_and_keeps_the_invariants)
{
	tgraph t;
	make_graph(&t, 1, 7);
	int64_t ids[40];
	for (int i = 0; i < 40; i++)
		ids[i] = (i * 11) % 40;
	for (int labor = 0; labor < 2; labor++)
		for (int c = 0; c < 4; c++) {
			burrow_typed_sampler_opts o;
			node_config(&o, c, labor);
			burrow_typed_sampler *s = open_ok(&t, ids, 40, &o);
			int64_t *perm = ref_perm(ids, 40, o.seed, 1);
			for (int64_t k = 0; k < burrow_typed_sampler_num_batches(s); k++) {
				burrow_typed_batch *b;
				cr_assert_eq(burrow_typed_sampler_batch(s, 1, k, &b), 0, "%s", burrow_last_error());
				const int64_t m = b->num_seeds;
				ref_batch rb;
				ref_sample(&t.h, &o, perm + k * o.batch_size, m, bw_key(bw_key(o.seed, 1), (uint64_t)k), &rb);
				char what[80];
				snprintf(what, sizeof what, "node fanout, labor %d, config %d batch %lld", labor, c, (long long)k);
				same_as_ref(b, &rb, what);
				check_batch(&t.h, b, &o, perm + k * o.batch_size, m);
				ref_free(&rb);
				burrow_typed_sampler_release(s, b);
			}
			free(perm);
			burrow_typed_sampler_close(s);
		}
	free_graph(&t);
}

/* The same batches at 1 and 2 threads (layers above the threshold that splits them), in any
 * order, neighbor and LABOR; fewer edges than per relation at the same fanouts. */
Test(typed_sampler, node_fanout_same_bits_whatever_the_threads)
{
	tgraph t;
	make_graph(&t, 60, 11);
	const int64_t n = 2000;
	int64_t *ids = malloc((size_t)n * sizeof *ids);
	for (int64_t i = 0; i < n; i++)
		ids[i] = (i * 7) % 2400;
	for (int labor = 0; labor < 2; labor++) {
		burrow_typed_sampler_opts o;
		burrow_typed_sampler_defaults(&o);
		o.fanouts[0] = 15;
		o.fanouts[1] = 10;
		o.batch_size = 600;
		o.seed = 5;
		o.labor = labor;
		burrow_typed_sampler *rel = open_ok(&t, ids, n, &o);
		o.fanout_mode = BURROW_TYPED_FANOUT_NODE;
		burrow_typed_sampler *s1 = open_ok(&t, ids, n, &o);
		o.threads = 2;
		burrow_typed_sampler *s2 = open_ok(&t, ids, n, &o);
		const int64_t order[] = {3, 1, 0, 2};
		burrow_typed_batch *a[4], *b[4], *r[4];
		take_all(s1, 1, 4, NULL, a);
		take_all(s2, 1, 4, order, b);
		take_all(rel, 1, 4, NULL, r);
		int64_t E0 = 0;
		for (int q = 0; q < 5; q++)
			E0 += a[0]->blocks[0][q].num_edges;
		cr_assert_gt(E0, 8192, "%lld edges: too few for the threads to share a layer", (long long)E0);
		for (int64_t k = 0; k < 4; k++) {
			same_batch(a[k], b[k]);
			check_batch(&t.h, a[k], &o, a[k]->seeds, a[k]->num_seeds);
			int64_t e_node = 0, e_rel = 0;
			for (int q = 0; q < 5; q++) {
				e_node += a[k]->blocks[0][q].num_edges;
				e_rel += r[k]->blocks[0][q].num_edges;
			}
			cr_assert_lt(e_node, e_rel, "batch %lld: %lld edges per node, %lld per relation", (long long)k,
				     (long long)e_node, (long long)e_rel);
			burrow_typed_sampler_release(s1, a[k]);
			burrow_typed_sampler_release(s2, b[k]);
			burrow_typed_sampler_release(rel, r[k]);
		}
		burrow_typed_sampler_close(s1);
		burrow_typed_sampler_close(s2);
		burrow_typed_sampler_close(rel);
	}
	free(ids);
	free_graph(&t);
}


/* Paper 0 cited by papers 1 .. C, written by authors 0 .. A-1, on fields 0 .. F-1: D = C + A + F
 * in-edges over three relations. Drawing k of them `draws` times (key = draw), each in-edge's
 * count is tested against k/D by Pearson's statistic rescaled by (D-1)/(D-k) (a k-subset's
 * counts: test_sampler.c's star_uniformity), and with subsets each k-subset of the D edges
 * as one cell of a multinomial. */
static void node_uniformity(int C, int A, int F, int k, int draws, bool subsets, bool labor)
{
	tgraph t;
	memset(&t, 0, sizeof t);
	t.h.num_types = 3;
	t.h.type_names[PAPER] = "paper";
	t.h.type_names[AUTHOR] = "author";
	t.h.type_names[FIELD] = "field";
	t.h.type_nodes[PAPER] = C + 1;
	t.h.type_nodes[AUTHOR] = A;
	t.h.type_nodes[FIELD] = F;
	t.h.num_relations = 3;
	t.h.target_type = PAPER;
	const int cnt[3] = {C, A, F}, src[3] = {PAPER, AUTHOR, FIELD};
	const char *name[3] = {"cites", "writes", "topic_of"};
	for (int r = 0; r < 3; r++) {
		int64_t pairs[2 * 64];
		for (int i = 0; i < cnt[r]; i++)
			pairs[2 * i] = 0, pairs[2 * i + 1] = r == 0 ? i + 1 : i;
		put_relation(&t, r, name[r], src[r], PAPER, pairs, cnt[r], 4);
	}
	const int D = C + A + F;
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	o.num_layers = 1;
	o.fanouts[0] = k;
	o.fanout_mode = BURROW_TYPED_FANOUT_NODE;
	o.labor = labor;
	o.seed = 777;
	burrow_typed_sampler *s = open_ok(&t, NULL, 0, &o);
	int64_t *count = calloc((size_t)D, sizeof *count), *subset = calloc(subsets ? (size_t)1 << D : 1, sizeof *subset);
	const int64_t seed = 0;
	const int base[3] = {0, C, C + A};
	for (int i = 0; i < draws; i++) {
		burrow_typed_batch *b;
		cr_assert_eq(burrow_typed_sampler_sample(s, &seed, 1, (uint64_t)i, &b), 0, "%s", burrow_last_error());
		check_batch(&t.h, b, &o, &seed, 1);
		int64_t mask = 0, got = 0;
		for (int r = 0; r < 3; r++) {
			const burrow_block *blk = &b->blocks[0][r];
			for (int64_t j = 0; j < blk->num_edges; j++, got++) {
				int64_t u = b->input_ids[src[r]][blk->indices[j]], e = base[r] + (r == 0 ? u - 1 : u);
				count[e]++;
				mask |= (int64_t)1 << e;
			}
		}
		cr_assert_eq(got, k);
		subset[subsets ? mask : 0]++;
		burrow_typed_sampler_release(s, b);
	}
	const double e = (double)draws * k / D;
	double stat = 0;
	for (int j = 0; j < D; j++)
		stat += (count[j] - e) * (count[j] - e) / e;
	stat *= (double)(D - 1) / (double)(D - k);
	double p = tu_chi2_sf(stat, D - 1);
	cr_assert(p > 0.001, "labor %d: in-edge counts are not uniform: chi-square %g with %d df, p = %g", labor, stat,
		  D - 1, p);
	if (subsets) {
		double cells = 0, st2 = 0;
		for (int64_t m = 0; m < (int64_t)1 << D; m++)
			cells += __builtin_popcountll((unsigned long long)m) == k;
		const double es = draws / cells;
		for (int64_t m = 0; m < (int64_t)1 << D; m++)
			if (__builtin_popcountll((unsigned long long)m) == k)
				st2 += (subset[m] - es) * (subset[m] - es) / es;
		p = tu_chi2_sf(st2, cells - 1);
		cr_assert(p > 0.001, "labor %d: subsets are not uniform: chi-square %g with %g df, p = %g", labor, st2,
			  cells - 1, p);
	}
	free(count);
	free(subset);
	burrow_typed_sampler_close(s);
	free_graph(&t);
}

Test(typed_sampler, node_fanout_draws_uniformly_across_relations)
{
	for (int labor = 0; labor < 2; labor++) {
		node_uniformity(8, 6, 4, 5, 20000, false, labor); /* 18 in-edges, 5 drawn */
		node_uniformity(4, 2, 2, 3, 20000, true, labor);  /* 8 in-edges, 3 drawn: every 3-subset */
	}
}

Test(typed_sampler, node_fanout_refuses_per_relation_fanouts)
{
	tgraph t;
	make_graph(&t, 1, 9);
	int64_t ids[] = {1, 2, 3};
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	o.fanout_mode = BURROW_TYPED_FANOUT_NODE;
	o.rel_fanouts[1][2] = 3;
	burrow_typed_sampler *s;
	cr_assert_eq(burrow_typed_sampler_open(&s, &t.h, ids, 3, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "per node"), "%s", burrow_last_error());
	o.rel_fanouts[1][2] = 0;
	s = open_ok(&t, ids, 3, &o);
	burrow_typed_sampler_close(s);
	o.fanout_mode = 2;
	cr_assert_eq(burrow_typed_sampler_open(&s, &t.h, ids, 3, &o), BURROW_E_INVAL);
	free_graph(&t);
}

/* ------------------------------------------------------------ LABOR-* */

/* Every batch of every configuration (fanouts -1, 0, 2, 3, 35 and 40, per layer and per
 * relation) under LABOR-* of 1, 3 and 64 rounds equals the slow reference (ref_star_block:
 * picks exactly, weights within 1e-5) and keeps the invariants (real edges, rows in order,
 * weights positive summing to each row's count, 1 for a row taken whole). */
Test(typed_sampler, labor_star_equals_the_reference_and_keeps_the_invariants)
{
	tgraph t;
	make_graph(&t, 3, 7);
	enum { N = 120 };
	int64_t ids[N];
	for (int i = 0; i < N; i++)
		ids[i] = (i * 7) % N;
	const int rounds[3] = {1, BURROW_LABOR_STAR_ROUNDS, 64};
	int64_t sampled = 0; /* edges of rows above their fanout, where LABOR-* decides */
	for (int c = 0; c < 4; c++) {
		burrow_typed_sampler_opts o;
		config(&o, c);
		o.labor_star = rounds[c % 3];
		burrow_typed_sampler *s = open_ok(&t, ids, N, &o);
		int64_t *perm = ref_perm(ids, N, o.seed, 0);
		for (int64_t k = 0; k < burrow_typed_sampler_num_batches(s); k++) {
			burrow_typed_batch *b;
			cr_assert_eq(burrow_typed_sampler_batch(s, 0, k, &b), 0, "%s", burrow_last_error());
			const int64_t m = b->num_seeds;
			ref_batch rb;
			ref_sample(&t.h, &o, perm + k * o.batch_size, m, bw_key(bw_key(o.seed, 0), (uint64_t)k), &rb);
			char what[80];
			snprintf(what, sizeof what, "LABOR-* %d rounds, config %d batch %lld", o.labor_star, c, (long long)k);
			same_as_ref(b, &rb, what);
			check_batch(&t.h, b, &o, perm + k * o.batch_size, m);
			for (int l = 0; l < o.num_layers; l++)
				for (int r = 0; r < 5; r++) {
					const burrow_block *x = &b->blocks[l][r];
					for (int64_t i = 0; fan_of(&o, l, r) > 0 && i < x->num_dst; i++)
						if (deg(&t.h.rel[r].graph, b->input_ids[t.h.rel[r].dst_type][i]) > fan_of(&o, l, r))
							sampled += x->indptr[i + 1] - x->indptr[i];
				}
			ref_free(&rb);
			burrow_typed_sampler_release(s, b);
		}
		free(perm);
		const int64_t seeds[] = {0, 119, 17, 3, 36};
		burrow_typed_batch *b;
		cr_assert_eq(burrow_typed_sampler_sample(s, seeds, 5, 99, &b), 0, "%s", burrow_last_error());
		ref_batch rb;
		ref_sample(&t.h, &o, seeds, 5, bw_key(bw_key(o.seed, UINT64_MAX - 1), 99), &rb);
		same_as_ref(b, &rb, "LABOR-*, explicit seeds");
		check_batch(&t.h, b, &o, seeds, 5);
		ref_free(&rb);
		burrow_typed_sampler_release(s, b);
		burrow_typed_sampler_close(s);
	}
	cr_log_info("LABOR-* reference: %lld edges of rows above their fanout", (long long)sampled);
	cr_assert_gt(sampled, 1000, "only %lld edges of rows above their fanout: the reference decides little",
		     (long long)sampled);
	free_graph(&t);
}

/* LABOR-* keeps each row's fanout in expectation, relation by relation. Over B keys of the same
 * NS seeds (the seed layer's c and pi depend on its rows, not the key: only the variates do),
 * each relation's excess a batch, sum over its rows above the fanout of (count - K), has a mean
 * within 5 standard errors of 0, at the seed layer and at the layer below (whose rows depend on
 * the key; each row's expected count given them is still K). Rows share variates, so the z
 * scores use the spread over the keys of each batch's total. And each seed row above K keeps K
 * on average in each relation (a sum of Bernoullis of mean K: variance below K). */
Test(typed_sampler, labor_star_rows_keep_the_fanout_in_expectation)
{
	tgraph t;
	make_graph(&t, 60, 3);
	enum { B = 300, NS = 400, K = 2, R = 5 };
	int64_t seeds[NS];
	for (int i = 0; i < NS; i++)
		seeds[i] = (i * 7) % t.h.type_nodes[PAPER];
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	o.num_layers = 2;
	o.fanouts[0] = o.fanouts[1] = K;
	o.labor_star = BURROW_LABOR_STAR_ROUNDS;
	burrow_typed_sampler *s = open_ok(&t, NULL, 0, &o);
	static double ex[2][R][B];
	double *row = calloc((size_t)R * NS, sizeof *row);
	int64_t sampled[2][R] = {{0}};
	for (int key = 0; key < B; key++) {
		burrow_typed_batch *b;
		cr_assert_eq(burrow_typed_sampler_sample(s, seeds, NS, (uint64_t)key, &b), 0, "%s", burrow_last_error());
		check_batch(&t.h, b, &o, seeds, NS);
		for (int l = 0; l < 2; l++)
			for (int r = 0; r < R; r++) {
				const burrow_block *k = &b->blocks[l][r];
				const burrow_relation *x = &t.h.rel[r];
				ex[l][r][key] = 0;
				for (int64_t i = 0; i < k->num_dst; i++) {
					if (deg(&x->graph, b->input_ids[x->dst_type][i]) <= K)
						continue;
					const int64_t c = k->indptr[i + 1] - k->indptr[i];
					ex[l][r][key] += (double)(c - K);
					sampled[l][r]++;
					if (l == 1)
						row[r * NS + i] += (double)c;
				}
			}
		burrow_typed_sampler_release(s, b);
	}
	int tested = 0;
	for (int l = 0; l < 2; l++)
		for (int r = 0; r < R; r++) {
			if (sampled[l][r] < 20 * B)
				continue;
			double m = 0, v = 0;
			for (int key = 0; key < B; key++)
				m += ex[l][r][key] / B;
			for (int key = 0; key < B; key++)
				v += (ex[l][r][key] - m) * (ex[l][r][key] - m) / (B - 1);
			const double z = m / sqrt(v / B);
			cr_log_info("block (%d, %s): %.1f rows above K a batch, mean excess %.3f a batch (sd %.2f), z %.2f", l,
				    t.h.rel[r].name, (double)sampled[l][r] / B, m, sqrt(v), z);
			cr_assert(fabs(z) < 5, "block (%d, %s): rows keep %.3f more than the fanout (z = %.2f)", l,
				  t.h.rel[r].name, m * B / (double)sampled[l][r], z);
			tested++;
		}
	cr_assert_geq(tested, 6, "only %d blocks with enough rows above the fanout", tested);
	for (int r = 0; r < R; r++)
		for (int64_t i = 0; t.h.rel[r].dst_type == PAPER && i < NS; i++)
			if (deg(&t.h.rel[r].graph, seeds[i]) > K)
				cr_assert(fabs(row[r * NS + i] / B - K) < 6 * sqrt((double)K / B),
					  "relation %s: seed %lld keeps %.3f on average, want %d", t.h.rel[r].name,
					  (long long)seeds[i], row[r * NS + i] / B, K);
	free(row);
	burrow_typed_sampler_close(s);
	free_graph(&t);
}

/* LABOR-*'s batches, weights included, are the same bits at 1, 2 and 3 threads and in any
 * order: the input layer's cites rows read several BW_LS_CHUNK chunks of neighbors, and its
 * preparation and draws are large enough to run on every thread. */
Test(typed_sampler, labor_star_same_bits_whatever_the_threads)
{
	tgraph t;
	make_graph(&t, 400, 11); /* 16,000 papers */
	const int64_t n = 12000;
	int64_t *ids = malloc((size_t)n * sizeof *ids);
	for (int64_t i = 0; i < n; i++)
		ids[i] = (i * 7) % 16000;
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	o.fanouts[0] = 4;
	o.fanouts[1] = 4;
	o.batch_size = 6000;
	o.seed = 5;
	o.labor_star = BURROW_LABOR_STAR_ROUNDS;
	burrow_typed_sampler *s[3];
	for (int i = 0; i < 3; i++) {
		o.threads = i + 1;
		s[i] = open_ok(&t, ids, n, &o);
	}
	const int64_t order[] = {1, 0};
	burrow_typed_batch *v[3][2];
	take_all(s[0], 2, 2, NULL, v[0]);
	take_all(s[1], 2, 2, order, v[1]);
	take_all(s[2], 2, 2, NULL, v[2]);
	const burrow_block *k = &v[0][0]->blocks[0][0]; /* layer 0, cites */
	int64_t whole = 0;
	for (int64_t i = 0; i < k->num_dst; i++)
		whole += deg(&t.h.rel[0].graph, v[0][0]->input_ids[PAPER][i]);
	cr_log_info("LABOR-* threads: layer 0 cites: %lld rows, %lld neighbors, %lld kept", (long long)k->num_dst,
		    (long long)whole, (long long)k->num_edges);
	cr_assert_gt(whole, 2 * BW_LS_CHUNK, "layer 0's cites rows read %lld neighbors: too few for several chunks",
		      (long long)whole);
	cr_assert_geq(k->num_edges, 8192, "layer 0's cites block (%lld edges) is drawn on one thread",
		      (long long)k->num_edges);
	for (int64_t b = 0; b < 2; b++) {
		check_batch(&t.h, v[0][b], &o, v[0][b]->seeds, v[0][b]->num_seeds);
		for (int i = 1; i < 3; i++) {
			same_batch(v[0][b], v[i][b]);
			burrow_typed_sampler_release(s[i], v[i][b]);
		}
		burrow_typed_sampler_release(s[0], v[0][b]);
	}
	for (int i = 0; i < 3; i++)
		burrow_typed_sampler_close(s[i]);
	free(ids);
	free_graph(&t);
}

static int no_expand(void *ctx, int l, int r, int fanout, uint64_t rkey, const int64_t *nodes, int64_t nd,
		     const int64_t **ip, const int64_t **ids)
{
	(void)ctx, (void)l, (void)r, (void)fanout, (void)rkey, (void)nodes, (void)nd, (void)ip, (void)ids;
	return BURROW_E_INVAL;
}

/* LABOR-*'s rounds are 0 .. 64; it samples per relation, not with fanouts per node, and from the
 * graph's rows, not an expander's. */
Test(typed_sampler, labor_star_refuses_bad_rounds_node_fanout_and_expanders)
{
	tgraph t;
	make_graph(&t, 1, 9);
	int64_t ids[] = {1, 2, 3};
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	burrow_typed_sampler *s;
	for (int i = 0; i < 2; i++) {
		o.labor_star = i ? 65 : -1;
		cr_assert_eq(burrow_typed_sampler_open(&s, &t.h, ids, 3, &o), BURROW_E_INVAL);
		cr_assert(strstr(burrow_last_error(), "labor_star"), "%s", burrow_last_error());
	}
	o.labor_star = BURROW_LABOR_STAR_ROUNDS;
	o.fanout_mode = BURROW_TYPED_FANOUT_NODE;
	cr_assert_eq(burrow_typed_sampler_open(&s, &t.h, ids, 3, &o), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "per node"), "%s", burrow_last_error());
	o.fanout_mode = BURROW_TYPED_FANOUT_RELATION;
	const bw_typed_expander ex = {.expand = no_expand};
	cr_assert_eq(bw_typed_sampler_open_ex(&s, &t.h, &ex, &o), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "LABOR-*"), "%s", burrow_last_error());
	cr_assert_null(s);
	free_graph(&t);
}
