/* typed.c: the typed sampler: per-relation neighbor sampling on a typed graph, per-type nested node lists, blocks [layer][relation]. */
#include "labor.h"
#include "sampler_internal.h"

#include <pthread.h>
#include <string.h>

/* Typed sampling, one layer at a time from the seeds down (docs/sampler.md, "Typed graphs").
 * A layer step (1) sizes every relation's block from its destinations' degrees, (2) draws
 * every row of every relation into one array of source ids (OpenMP over rows: a row's picks
 * are a function of its key alone, so the split between threads changes nothing), (3) per
 * source type, sorts the drawn ids with their edge positions (LSD radix on the id bits),
 * numbers them against that type's nodes sorted by id (a known node keeps its local id, a
 * new one is appended, in increasing id) and writes each edge's local id, and (4) merges the
 * new nodes into the type's sorted view. Nothing is sized by a type's node count. With LABOR-*
 * (opts.labor_star), phases 1 and 2 go relation by relation instead (star_layer): each
 * relation's rows are one block of sample.c's LABOR-* (bw_labor_star_prep), drawn with their
 * weights as soon as its counts are known. */

#define DRAW_PAR_MIN 8192 /* a layer expected to draw fewer edges runs on one thread */
#define ROWS_PAR_MIN 8192 /* fewer destinations have their degrees read by one thread */
#define DRAW_CHUNK 64     /* rows a thread takes at a time */
#define SORT_BITS 11      /* digits of the radix sort of a type's drawn ids */

/* A batch as the sampler holds it: the public part first, then the arrays it points into,
 * which keep their capacity when the batch is recycled. */
typedef struct typed_sampled {
	burrow_typed_batch pub;                 /* first member: a burrow_typed_batch * is one */
	const void *owner;                      /* the sampler that made it (checked on release) */
	bool held;                              /* handed out or being filled */
	struct typed_sampled *next_all, *next_free;
	int64_t *nodes[BURROW_MAX_TYPES];       /* input ids per type */
	size_t nodes_cap[BURROW_MAX_TYPES];
	int64_t *indptr[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	size_t indptr_cap[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	int32_t *indices[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	size_t indices_cap[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	float *ew[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS]; /* LABOR-*'s edge weights (opts.labor_star) */
	size_t ew_cap[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
} typed_sampled;

/* The scratch of one sampling call, reused across batches (a pool: calls may overlap). */
typedef struct typed_ctx {
	struct typed_ctx *next_all, *next_free;
	int threads;                            /* OpenMP threads for one batch */
	int64_t *seeds;                         /* an epoch batch's seeds, copied under the lock */
	size_t seeds_cap;
	int64_t *sg[BURROW_MAX_TYPES];          /* per type, its nodes sorted by id ... */
	int32_t *sl[BURROW_MAX_TYPES];          /* ... and their local ids */
	size_t sg_cap[BURROW_MAX_TYPES], sl_cap[BURROW_MAX_TYPES];
	int64_t *sg2;                           /* the spare view a merge writes into */
	int32_t *sl2;
	size_t sg2_cap, sl2_cap;
	int64_t *drawn;                         /* [E] a layer's drawn source ids, relation after relation */
	int32_t *lid;                           /* [E] their local ids */
	uint64_t *items, *tmp;                  /* packed (id << eb | edge) of one source type, sorted */
	size_t drawn_cap, lid_cap, items_cap, tmp_cap;
	int64_t *nptr, *npos;                   /* fanout per node: [rows + 1] each destination's picks in npos, */
	size_t nptr_cap, npos_cap;              /* [E] increasing positions into its concatenated in-edges */
	size_t hist[(size_t)1 << SORT_BITS];    /* the radix sort's counts */
	bw_row_scratch *rows;                   /* [threads] Floyd's hash set above BW_SMALL_FANOUT */
	bw_sample_ctx star;                     /* LABOR-*'s scratch (opts.labor_star; else zeroed): its
						   row array, and the state of the relation prepared last */
	bw_ls_layer ls;                         /* that relation as a LABOR-* block */
} typed_ctx;

struct burrow_typed_sampler {
	const burrow_hetero *h;                 /* borrowed */
	const bw_typed_expander *ex;            /* rows from here instead of h's graphs, or NULL (borrowed) */
	burrow_typed_sampler_opts o;
	int fan[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS]; /* resolved fanout of (layer, relation) */
	int threads, max_fanout;
	int64_t n, num_batches;
	int64_t *ids;                           /* [n] as given */
	int64_t *perm;                          /* [n] the order of epoch perm_epoch */
	int64_t perm_epoch;                     /* -1: none yet */
	pthread_mutex_t mu;                     /* guards the pools and perm */
	typed_sampled *all, *free;
	typed_ctx *ctx_all, *ctx_free;
};

static int bits_for(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }

/* ------------------------------------------------------------ batches and scratch */

static void sampled_free(typed_sampled *b)
{
	for (int t = 0; t < BURROW_MAX_TYPES; t++)
		bw_free(b->nodes[t]);
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		for (int r = 0; r < BURROW_MAX_RELATIONS; r++) {
			bw_free(b->indptr[l][r]);
			bw_free(b->indices[l][r]);
			bw_free(b->ew[l][r]);
		}
	bw_free(b);
}

static void ctx_free(typed_ctx *c)
{
	for (int t = 0; t < BURROW_MAX_TYPES; t++) {
		bw_free(c->sg[t]);
		bw_free(c->sl[t]);
	}
	if (c->rows)
		for (int t = 0; t < c->threads; t++) {
			bw_free(c->rows[t].pos);
			bw_free(c->rows[t].table);
		}
	bw_free(c->rows);
	bw_free(c->seeds);
	bw_free(c->sg2);
	bw_free(c->sl2);
	bw_free(c->drawn);
	bw_free(c->lid);
	bw_free(c->items);
	bw_free(c->tmp);
	bw_free(c->nptr);
	bw_free(c->npos);
	bw_sample_ctx_free(&c->star);
	bw_free(c);
}

/* A new context for s: per-thread room for Floyd's hash set when a fanout needs one, and
 * LABOR-*'s scratch when it samples with it. */
static typed_ctx *ctx_new(const burrow_typed_sampler *s)
{
	typed_ctx *c = bw_calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->threads = s->threads;
	c->rows = bw_calloc((size_t)s->threads, sizeof *c->rows);
	if (!c->rows)
		goto out_free;
	if (s->o.labor_star > 0) {
		if (bw_sample_ctx_init(&c->star, s->threads, 0))
			goto out_free;
		c->star.labor_star = s->o.labor_star;
	}
	if (s->max_fanout > BW_SMALL_FANOUT) {
		const size_t cap = bw_draw_table_cap(s->max_fanout);
		for (int t = 0; t < s->threads; t++) {
			c->rows[t].pos = bw_malloc((size_t)s->max_fanout * sizeof(int64_t));
			c->rows[t].table = bw_malloc(cap * sizeof(int64_t));
			c->rows[t].table_cap = cap;
			if (!c->rows[t].pos || !c->rows[t].table)
				goto out_free;
		}
	}
	return c;
out_free:
	ctx_free(c);
	return NULL;
}

/* A batch and a context from the pools, or new ones (lock held). false when out of memory,
 * with nothing taken. */
static bool pool_get(burrow_typed_sampler *s, typed_sampled **bp, typed_ctx **cp)
{
	typed_sampled *b = s->free;
	typed_ctx *c = s->ctx_free;
	if (!b && !(b = bw_calloc(1, sizeof *b)))
		return false;
	if (!c && !(c = ctx_new(s))) {
		if (b != s->free)
			bw_free(b);
		return false;
	}
	if (b == s->free) {
		s->free = b->next_free;
	} else {
		b->owner = s;
		b->next_all = s->all;
		s->all = b;
	}
	if (c == s->ctx_free) {
		s->ctx_free = c->next_free;
	} else {
		c->next_all = s->ctx_all;
		s->ctx_all = c;
	}
	b->held = true;
	*bp = b;
	*cp = c;
	return true;
}

static void batch_put(burrow_typed_sampler *s, typed_sampled *b)
{
	b->held = false;
	b->next_free = s->free;
	s->free = b;
}

static void ctx_put(burrow_typed_sampler *s, typed_ctx *c)
{
	c->next_free = s->ctx_free;
	s->ctx_free = c;
}

/* ------------------------------------------------------------ one layer */

/* What one layer step of a batch shares between its phases. */
typedef struct typed_layer {
	const burrow_typed_sampler *s;
	typed_ctx *c;
	typed_sampled *b;
	int l;
	uint64_t lkey;                          /* bw_key(batch key, l) */
	int64_t up[BURROW_MAX_TYPES];           /* nodes per type at level l + 1 (the destinations) */
	int64_t cnt[BURROW_MAX_TYPES];          /* nodes per type at level l (grows as it is numbered) */
	int64_t rbase[BURROW_MAX_RELATIONS + 1];/* relation r's edges are drawn[rbase[r], rbase[r+1]) */
	/* fanout per node: the relations into type t the layer runs, ascending, and where t's
	   destinations start in the layer's rows (c->nptr) */
	int nrel[BURROW_MAX_TYPES];
	int rels[BURROW_MAX_TYPES][BURROW_MAX_RELATIONS];
	int64_t row0[BURROW_MAX_TYPES + 1];
} typed_layer;

/* Phase 1: each relation's block offsets (min(fanout, degree) per destination) and where its
 * edges go in the layer's arrays; then room for them. */
static int layer_expand(typed_layer *y);

/* Phase 1's end: every relation's counts (indptr[l][r][i + 1]) summed into its block offsets,
 * where its edges go in the layer's arrays (rbase), and room for them. */
static int layer_bases(typed_layer *y)
{
	const burrow_hetero *h = y->s->h;
	int64_t E = 0;
	int st;
	for (int r = 0; r < h->num_relations; r++) {
		const int64_t nd = y->up[h->rel[r].dst_type];
		int64_t *ip = y->b->indptr[y->l][r];
		ip[0] = 0;
		for (int64_t i = 0; i < nd; i++)
			ip[i + 1] += ip[i];
		y->rbase[r] = E;
		E += ip[nd];
	}
	y->rbase[h->num_relations] = E;
	if ((st = bw_grow(&y->c->drawn, &y->c->drawn_cap, (size_t)BW_MAX(E, 1), sizeof(int64_t), false)) ||
	    (st = bw_grow(&y->c->lid, &y->c->lid_cap, (size_t)BW_MAX(E, 1), sizeof(int32_t), false)))
		return st;
	return 0;
}

static int layer_offsets(typed_layer *y)
{
	if (y->s->ex)
		return layer_expand(y);
	const burrow_hetero *h = y->s->h;
	typed_sampled *b = y->b;
	const int l = y->l;
	int st;
	for (int r = 0; r < h->num_relations; r++) {
		const burrow_csr *g = &h->rel[r].graph;
		const int64_t nd = y->up[h->rel[r].dst_type], *nodes = b->nodes[h->rel[r].dst_type], *gp = g->indptr;
		const int f = y->s->fan[l][r];
		if ((st = bw_grow(&b->indptr[l][r], &b->indptr_cap[l][r], (size_t)nd + 1, sizeof(int64_t), false)))
			return st;
		int64_t *ip = b->indptr[l][r];
#pragma omp parallel for num_threads(y->c->threads) if (nd >= ROWS_PAR_MIN) schedule(static)
		for (int64_t i = 0; i < nd; i++) {
			const int64_t d = gp[nodes[i] + 1] - gp[nodes[i]];
			ip[i + 1] = f < 0 || d <= f ? d : f;
		}
	}
	return layer_bases(y);
}

/* Phases 1 and 2 with an expander: each relation's rows as it hands them out, relation after
 * relation (every relation, even one without destinations: the expander may be collective). */
static int layer_expand(typed_layer *y)
{
	const burrow_hetero *h = y->s->h;
	const bw_typed_expander *ex = y->s->ex;
	typed_sampled *b = y->b;
	typed_ctx *c = y->c;
	const int l = y->l;
	int64_t E = 0;
	int st;
	for (int r = 0; r < h->num_relations; r++) {
		const int dt = h->rel[r].dst_type;
		const int64_t nd = y->up[dt];
		const int64_t *ip, *ids;
		if ((st = ex->expand(ex->ctx, l, r, y->s->fan[l][r], bw_key(y->lkey, (uint64_t)r), b->nodes[dt], nd, &ip,
				     &ids)) ||
		    (st = bw_grow(&b->indptr[l][r], &b->indptr_cap[l][r], (size_t)nd + 1, sizeof(int64_t), false)))
			return st;
		memcpy(b->indptr[l][r], ip, (size_t)(nd + 1) * sizeof *ip);
		y->rbase[r] = E;
		if ((st = bw_grow(&c->drawn, &c->drawn_cap, (size_t)BW_MAX(E + ip[nd], 1), sizeof(int64_t), true)))
			return st;
		for (int64_t e = 0; e < ip[nd]; e++) {
			if (ids[e] < 0 || ids[e] >= h->type_nodes[h->rel[r].src_type])
				return bw_err(BURROW_E_RANGE, "typed sampler: relation %d's row gives %lld, not a node of type %s",
					      r, (long long)ids[e], h->type_names[h->rel[r].src_type]);
			c->drawn[E + e] = ids[e];
		}
		E += ip[nd];
	}
	y->rbase[h->num_relations] = E;
	return bw_grow(&c->lid, &c->lid_cap, (size_t)BW_MAX(E, 1), sizeof(int32_t), false);
}

/* The key of layer y's LABOR variates of source type t (LABOR and LABOR-* alike): the
 * relations from one type share it, so they prefer the same nodes. */
static uint64_t type_labor_key(const typed_layer *y, int t)
{
	return bw_key(y->lkey ^ BW_LABOR_SALT, (uint64_t)t) | 1;
}

/* Row i of relation r: its picks, the graph's source ids in increasing row position, into
 * out[0, k): the whole row when k is its degree; else, with LABOR (lk != 0), the k neighbors of
 * smallest shared variate bw_key(lk, id) (labor.h; lk is the layer's and the source type's, so
 * every relation from that type prefers the same nodes); else Floyd's draw (draw.h) from the
 * stream bw_key(rkey, v). */
static void draw_row(const burrow_csr *g, int64_t v, int64_t k, uint64_t rkey, uint64_t lk, int64_t *out,
		     bw_row_scratch *rs)
{
	const int64_t s = g->indptr[v], d = g->indptr[v + 1] - s;
	const bool w4 = g->index_width == 4;
	if (k == d) {
		for (int64_t j = 0; j < k; j++)
			out[j] = w4 ? ((const int32_t *)g->indices)[s + j] : ((const int64_t *)g->indices)[s + j];
		return;
	}
	if (k == 0)
		return;
	if (lk) {
		bw_labor_row(g->indices, w4, s, d, k, (uint64_t *)out, lk, NULL, rs);
		for (int64_t j = 0; j < k; j++)
			out[j] = (int64_t)bw_csr_id(g->indices, w4, out[j]);
		return;
	}
	bw_rng rng;
	bw_rng_seed(&rng, bw_key(rkey, (uint64_t)v));
	int64_t small[BW_SMALL_FANOUT];
	int64_t *pos = k <= BW_SMALL_FANOUT ? small : rs->pos;
	bw_draw(&rng, d, k, pos, rs->table);
	for (int64_t j = 0; j < k; j++)
		out[j] = w4 ? ((const int32_t *)g->indices)[s + pos[j]] : ((const int64_t *)g->indices)[s + pos[j]];
}

/* Phase 2: every row of every relation, OpenMP over rows in chunks (each row writes its own
 * edges, from its own stream). */
static void layer_draw(typed_layer *y)
{
	const burrow_hetero *h = y->s->h;
	typed_ctx *c = y->c;
	const int64_t E = y->rbase[h->num_relations];
#pragma omp parallel num_threads(c->threads) if (E >= DRAW_PAR_MIN)
	{
		bw_row_scratch *rs = &c->rows[omp_get_thread_num()];
		for (int r = 0; r < h->num_relations; r++) {
			const burrow_csr *g = &h->rel[r].graph;
			const int64_t nd = y->up[h->rel[r].dst_type], *nodes = y->b->nodes[h->rel[r].dst_type];
			const int64_t *ip = y->b->indptr[y->l][r];
			int64_t *out = c->drawn + y->rbase[r];
			const uint64_t rkey = bw_key(y->lkey, (uint64_t)r);
			const uint64_t lk = y->s->o.labor ? type_labor_key(y, h->rel[r].src_type) : 0;
#pragma omp for schedule(dynamic, DRAW_CHUNK) nowait
			for (int64_t i = 0; i < nd; i++)
				draw_row(g, nodes[i], ip[i + 1] - ip[i], rkey, lk, out + ip[i], rs);
		}
	}
}

/* ------------------------------------------------------------ one layer, LABOR-* */

/* LABOR-* (opts.labor_star) replaces phases 1 and 2, relation after relation: the relation's
 * rows are one bipartite block of sample.c's LABOR-*. Its fixed point over those rows and their
 * distinct sources gives each source a probability weight pi and each row of degree d above
 * the fanout k a c (sum over the row of min(1, c pi) = k); the row keeps neighbor u when u's
 * variate, LABOR's (per layer and source type: the relations from one type share it), is below
 * min(1, c pi_u), weighed 1 / that probability scaled so that the row's weights sum to its
 * count. Rows of degree <= k are taken whole, weights 1; a relation of fanout -1 takes every
 * row whole and has no weights. A relation is drawn as soon as its counts are known: the
 * preparation's state (c->star) is one relation's. */

/* Relation r's rows (their starts and degrees in c->star.row) and its block's counts
 * min(fanout, degree) in indptr[l][r][i + 1]; with a fanout > 0, LABOR-*'s preparation over
 * them, which counts the rows above the fanout again. */
static int star_counts(typed_layer *y, int r)
{
	const burrow_hetero *h = y->s->h;
	const burrow_relation *x = &h->rel[r];
	typed_ctx *c = y->c;
	typed_sampled *b = y->b;
	const int l = y->l, f = y->s->fan[l][r];
	const int64_t nd = y->up[x->dst_type], *nodes = b->nodes[x->dst_type], *gp = x->graph.indptr;
	int st;
	if ((st = bw_grow(&b->indptr[l][r], &b->indptr_cap[l][r], (size_t)nd + 1, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->star.row, &c->star.row_cap, 2 * (size_t)BW_MAX(nd, 1), sizeof(int64_t), false)))
		return st;
	int64_t *ip = b->indptr[l][r], *row = c->star.row;
#pragma omp parallel for num_threads(c->threads) if (nd >= ROWS_PAR_MIN) schedule(static)
	for (int64_t i = 0; i < nd; i++) {
		const int64_t s = gp[nodes[i]], d = gp[nodes[i] + 1] - s;
		row[2 * i] = s;
		row[2 * i + 1] = d;
		ip[i + 1] = f < 0 || d <= f ? d : f;
	}
	if (f <= 0 || nd == 0)
		return 0;
	bw_ls_layer *L = &c->ls;
	*L = (bw_ls_layer){.gi = x->graph.indices, .w4 = x->graph.index_width == 4, .row = row, .ip = ip, .nd = nd,
			   .k = f, .ub = bits_for((uint64_t)BW_MAX(h->type_nodes[x->src_type], 1) - 1),
			   .lk = type_labor_key(y, x->src_type)};
	snprintf(L->who, sizeof L->who, "typed sampler: layer %d, relation %d", l, r);
#pragma omp parallel num_threads(c->threads) if (nd * f >= DRAW_PAR_MIN)
	bw_labor_star_prep(&c->star, L, omp_get_thread_num(), omp_get_num_threads());
	return L->st ? bw_err(L->st, "%s", L->msg) : 0;
}

/* Relation r's draws into the layer's arrays from edge E (its block's offsets summed), OpenMP
 * over rows: a row above a fanout > 0 LABOR-*'s picks (bw_labor_star_row) with their weights
 * into w, any other row whole with weights 1 (w NULL: none). */
static void star_draw(typed_layer *y, int r, int64_t E, float *w)
{
	const burrow_csr *g = &y->s->h->rel[r].graph;
	typed_ctx *c = y->c;
	const int f = y->s->fan[y->l][r];
	const bool w4 = g->index_width == 4;
	const int64_t nd = y->up[y->s->h->rel[r].dst_type], *ip = y->b->indptr[y->l][r], *row = c->star.row;
#pragma omp parallel for num_threads(c->threads) if (ip[nd] >= DRAW_PAR_MIN) schedule(dynamic, DRAW_CHUNK)
	for (int64_t i = 0; i < nd; i++) {
		const int64_t s = row[2 * i], d = row[2 * i + 1], e0 = ip[i], n = ip[i + 1] - e0;
		int64_t *out = c->drawn + E + e0;
		if (f > 0 && d > f) {
			bw_labor_star_row(&c->star, i, s, d, (uint64_t *)out, w + e0);
			for (int64_t j = 0; j < n; j++)
				out[j] = (int64_t)bw_csr_id(g->indices, w4, out[j]);
			continue;
		}
		for (int64_t j = 0; j < n; j++) {
			out[j] = (int64_t)bw_csr_id(g->indices, w4, s + j);
			if (w)
				w[e0 + j] = 1.0f;
		}
	}
}

/* Phases 1 and 2 under LABOR-*: every relation's counts, offsets, draws and weights, its edges
 * in c->drawn after the previous relation's, as layer_draw leaves them. */
static int star_layer(typed_layer *y)
{
	const burrow_hetero *h = y->s->h;
	typed_sampled *b = y->b;
	typed_ctx *c = y->c;
	const int l = y->l;
	int64_t E = 0;
	int st;
	for (int r = 0; r < h->num_relations; r++) {
		const int64_t nd = y->up[h->rel[r].dst_type];
		const bool weighed = y->s->fan[l][r] >= 0;
		if ((st = star_counts(y, r)))
			return st;
		int64_t *ip = b->indptr[l][r];
		ip[0] = 0;
		for (int64_t i = 0; i < nd; i++)
			ip[i + 1] += ip[i];
		const int64_t n = ip[nd];
		if ((st = bw_grow(&c->drawn, &c->drawn_cap, (size_t)BW_MAX(E + n, 1), sizeof(int64_t), true)) ||
		    (weighed && (st = bw_grow(&b->ew[l][r], &b->ew_cap[l][r], (size_t)BW_MAX(n, 1), sizeof(float), false))))
			return st;
		y->rbase[r] = E;
		star_draw(y, r, E, weighed ? b->ew[l][r] : NULL);
		E += n;
	}
	y->rbase[h->num_relations] = E;
	return bw_grow(&c->lid, &c->lid_cap, (size_t)BW_MAX(E, 1), sizeof(int32_t), false);
}

/* ------------------------------------------------------------ one layer, fanout per node */

/* Fanout per node (BURROW_TYPED_FANOUT_NODE) replaces phases 1 and 2: a destination v of type
 * t sees the in-edges of every relation into t that the layer runs as one list, relations
 * ascending, each row in CSR order (its "positions"); it draws min(fanouts[l], D) of its D
 * positions (Floyd from the stream bw_key(bw_key(lkey, MAX_RELATIONS + t), v), or LABOR's
 * smallest shared variates), in increasing position; each pick goes to its relation's block. */

/* v's in-degree over the relations rels[0, m). */
static int64_t node_degree(const burrow_hetero *h, const int *rels, int m, int64_t v)
{
	int64_t D = 0;
	for (int j = 0; j < m; j++) {
		const int64_t *gp = h->rel[rels[j]].graph.indptr;
		D += gp[v + 1] - gp[v];
	}
	return D;
}

/* v's k picks of its D positions into pos[0, k), increasing. lk: LABOR's variate key per
 * source type, or NULL. */
static void node_row(const burrow_hetero *h, const int *rels, int m, int64_t v, int64_t D, int64_t k, uint64_t tkey,
		     const uint64_t *lk, int64_t *pos, bw_row_scratch *rs)
{
	if (k == D) {
		for (int64_t j = 0; j < k; j++)
			pos[j] = j;
		return;
	}
	if (k == 0)
		return;
	if (!lk) {
		bw_rng rng;
		bw_rng_seed(&rng, bw_key(tkey, (uint64_t)v));
		bw_draw(&rng, D, k, pos, rs->table);
		return;
	}
	uint64_t ks[BW_SMALL_FANOUT];
	int64_t ps[BW_SMALL_FANOUT];
	uint64_t *hk = k <= BW_SMALL_FANOUT ? ks : (uint64_t *)rs->table; /* table: >= 2k entries */
	int64_t *hp = k <= BW_SMALL_FANOUT ? ps : rs->pos;
	int64_t p = 0;
	for (int j = 0; j < m; j++) {
		const burrow_csr *g = &h->rel[rels[j]].graph;
		const int64_t s0 = g->indptr[v], d = g->indptr[v + 1] - s0;
		const uint64_t key = lk[h->rel[rels[j]].src_type];
		for (int64_t e = 0; e < d; e++)
			bw_labor_offer(hk, hp, k, p++, bw_key(key, bw_csr_id(g->indices, g->index_width == 4, s0 + e)));
	}
	bw_sort_i64(hp, k);
	memcpy(pos, hp, (size_t)k * sizeof *pos);
}

/* Row i of type t's picks pos[0, k) split by relation: with out NULL, each relation's count
 * into its block's offsets (ip[i + 1]); else each pick's source id into drawn at its place. */
static void node_split(typed_layer *y, int t, int64_t i, const int64_t *pos, int64_t k, bool out)
{
	const burrow_hetero *h = y->s->h;
	const int64_t v = y->b->nodes[t][i];
	int64_t q = 0, cum = 0;
	for (int j = 0; j < y->nrel[t]; j++) {
		const int r = y->rels[t][j];
		const burrow_csr *g = &h->rel[r].graph;
		const int64_t s0 = g->indptr[v], d = g->indptr[v + 1] - s0, q0 = q;
		while (q < k && pos[q] < cum + d)
			q++;
		if (!out) {
			y->b->indptr[y->l][r][i + 1] = q - q0;
		} else {
			int64_t *dst = y->c->drawn + y->rbase[r] + y->b->indptr[y->l][r][i];
			for (int64_t x = q0; x < q; x++)
				dst[x - q0] = (int64_t)bw_csr_id(g->indices, g->index_width == 4, s0 + pos[x] - cum);
		}
		cum += d;
	}
}

/* Each destination's pick count min(fanouts[l], D) into c->nptr (then its offsets), room for
 * the picks, every block's offsets zeroed. */
static int node_plan(typed_layer *y)
{
	const burrow_typed_sampler *s = y->s;
	const burrow_hetero *h = s->h;
	typed_ctx *c = y->c;
	const int l = y->l, f = s->o.fanouts[l];
	int st;
	y->row0[0] = 0;
	for (int t = 0; t < h->num_types; t++) {
		y->nrel[t] = 0;
		for (int r = 0; r < h->num_relations; r++)
			if (h->rel[r].dst_type == t && s->fan[l][r] != 0)
				y->rels[t][y->nrel[t]++] = r;
		y->row0[t + 1] = y->row0[t] + (y->nrel[t] ? y->up[t] : 0);
	}
	const int64_t R = y->row0[h->num_types];
	if ((st = bw_grow(&c->nptr, &c->nptr_cap, (size_t)R + 1, sizeof(int64_t), false)))
		return st;
	for (int t = 0; t < h->num_types; t++) {
		const int64_t nd = y->row0[t + 1] - y->row0[t], *nodes = y->b->nodes[t];
		int64_t *np = c->nptr + y->row0[t] + 1;
#pragma omp parallel for num_threads(c->threads) if (nd >= ROWS_PAR_MIN) schedule(static)
		for (int64_t i = 0; i < nd; i++) {
			const int64_t D = node_degree(h, y->rels[t], y->nrel[t], nodes[i]);
			np[i] = f < 0 || D <= f ? D : f;
		}
	}
	c->nptr[0] = 0;
	for (int64_t i = 0; i < R; i++)
		c->nptr[i + 1] += c->nptr[i];
	if ((st = bw_grow(&c->npos, &c->npos_cap, (size_t)BW_MAX(c->nptr[R], 1), sizeof(int64_t), false)))
		return st;
	for (int r = 0; r < h->num_relations; r++) {
		const int64_t nd = y->up[h->rel[r].dst_type];
		if ((st = bw_grow(&y->b->indptr[l][r], &y->b->indptr_cap[l][r], (size_t)nd + 1, sizeof(int64_t), false)))
			return st;
		memset(y->b->indptr[l][r], 0, (size_t)(nd + 1) * sizeof(int64_t));
	}
	return 0;
}

/* Every destination's picks (OpenMP over rows: each row draws from its own stream into its own
 * range), counted per relation; pass `out`: the picks' source ids to their places. */
static void node_rows(typed_layer *y, bool out)
{
	const burrow_hetero *h = y->s->h;
	typed_ctx *c = y->c;
	const int64_t E = c->nptr[y->row0[h->num_types]], f = y->s->o.fanouts[y->l];
	uint64_t lk[BURROW_MAX_TYPES];
	for (int t = 0; t < h->num_types; t++)
		lk[t] = type_labor_key(y, t);
#pragma omp parallel num_threads(c->threads) if (E >= DRAW_PAR_MIN)
	{
		bw_row_scratch *rs = &c->rows[omp_get_thread_num()];
		for (int t = 0; t < h->num_types; t++) {
			const int64_t nd = y->row0[t + 1] - y->row0[t], *np = c->nptr + y->row0[t];
			const uint64_t tkey = bw_key(y->lkey, (uint64_t)(BURROW_MAX_RELATIONS + t));
#pragma omp for schedule(dynamic, DRAW_CHUNK) nowait
			for (int64_t i = 0; i < nd; i++) {
				int64_t *pos = c->npos + np[i];
				const int64_t k = np[i + 1] - np[i];
				if (!out) {
					const int64_t v = y->b->nodes[t][i];
					const int64_t D = f < 0 || k < f ? k : node_degree(h, y->rels[t], y->nrel[t], v);
					node_row(h, y->rels[t], y->nrel[t], v, D, k, tkey, y->s->o.labor ? lk : NULL, pos, rs);
				}
				node_split(y, t, i, pos, k, out);
			}
		}
	}
}

/* Phases 1 and 2 under fanout per node: the picks, the blocks' offsets, the layer's edges in
 * c->drawn relation after relation as layer_draw leaves them. */
static int node_layer(typed_layer *y)
{
	int st = node_plan(y);
	if (st)
		return st;
	node_rows(y, false);
	if ((st = layer_bases(y)))
		return st;
	node_rows(y, true);
	return 0;
}

/* Phase 3 for source type t: sort the ids drawn in every relation from t with their edge
 * positions, then number them in one sweep beside the type's sorted view: a known node
 * keeps its local id, a new one is appended to the type's nodes (in increasing id). */
static int number_type(typed_layer *y, int t)
{
	const burrow_hetero *h = y->s->h;
	typed_ctx *c = y->c;
	typed_sampled *b = y->b;
	const int64_t E = y->rbase[h->num_relations], nd = y->cnt[t];
	int64_t m = 0;
	for (int r = 0; r < h->num_relations; r++)
		m += h->rel[r].src_type == t ? y->rbase[r + 1] - y->rbase[r] : 0;
	if (m == 0)
		return 0;
	const int ub = bits_for((uint64_t)h->type_nodes[t] - 1), eb = bits_for((uint64_t)E - 1);
	int st;
	if (ub + eb > 64)
		return bw_err(BURROW_E_UNSUPPORTED, "typed sampler: layer %d draws %lld edges: too many for type %s's %lld nodes",
			      y->l, (long long)E, h->type_names[t], (long long)h->type_nodes[t]);
	if ((st = bw_grow(&c->items, &c->items_cap, (size_t)m, sizeof(uint64_t), false)) ||
	    (st = bw_grow(&c->tmp, &c->tmp_cap, (size_t)m, sizeof(uint64_t), false)) ||
	    (st = bw_grow(&b->nodes[t], &b->nodes_cap[t], (size_t)(nd + m), sizeof(int64_t), true)))
		return st;
	int64_t k = 0;
	for (int r = 0; r < h->num_relations; r++)
		for (int64_t e = y->rbase[r]; h->rel[r].src_type == t && e < y->rbase[r + 1]; e++)
			c->items[k++] = (uint64_t)c->drawn[e] << eb | (uint64_t)e;
	const uint64_t *x = bw_lsd_sort(c->items, c->tmp, m, eb, ub, SORT_BITS, c->hist);
	const uint64_t emask = eb == 64 ? ~0ull : (1ull << eb) - 1;
	const int64_t *sg = c->sg[t];
	int64_t p = 0, next = 0;
	for (int64_t i = 0; i < m;) {
		const int64_t u = (int64_t)(x[i] >> eb);
		while (p < nd && sg[p] < u)
			p++;
		int64_t id = nd + next;
		if (p < nd && sg[p] == u)
			id = c->sl[t][p];
		else
			b->nodes[t][nd + next++] = u;
		for (; i < m && (int64_t)(x[i] >> eb) == u; i++)
			c->lid[x[i] & emask] = (int32_t)id;
	}
	if (nd + next > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "typed sampler: layer %d has %lld nodes of type %s: local ids are int32",
			      y->l, (long long)(nd + next), h->type_names[t]);
	y->cnt[t] = nd + next;
	return 0;
}

/* Phase 4 for type t: merge its new nodes nodes[t][nd, cnt) (sorted, local ids nd ..) into
 * its sorted view [0, nd), by way of the spare arrays, which then swap places with it. */
static int merge_view(typed_layer *y, int t, int64_t nd)
{
	typed_ctx *c = y->c;
	const int64_t n2 = y->cnt[t], nnew = n2 - nd, *newn = y->b->nodes[t] + nd, *sg = c->sg[t];
	const int32_t *sl = c->sl[t];
	int st;
	if (nnew == 0)
		return 0;
	if ((st = bw_grow(&c->sg2, &c->sg2_cap, (size_t)n2, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->sl2, &c->sl2_cap, (size_t)n2, sizeof(int32_t), false)))
		return st;
	for (int64_t i = 0, k = 0, m = 0; i < nd || m < nnew; k++) {
		if (m >= nnew || (i < nd && sg[i] < newn[m])) {
			c->sg2[k] = sg[i];
			c->sl2[k] = sl[i++];
		} else {
			c->sg2[k] = newn[m];
			c->sl2[k] = (int32_t)(nd + m++);
		}
	}
	BW_SWAP(c->sg[t], c->sg2);
	BW_SWAP(c->sl[t], c->sl2);
	BW_SWAP(c->sg_cap[t], c->sg2_cap);
	BW_SWAP(c->sl_cap[t], c->sl2_cap);
	return 0;
}

/* Layer l of the batch: level l's nodes from level l+1's (y->up, set by the caller), its
 * blocks (l, r) for every relation. */
static int layer_step(typed_layer *y)
{
	const burrow_hetero *h = y->s->h;
	typed_sampled *b = y->b;
	const int l = y->l;
	int st;
	if (y->s->o.fanout_mode == BURROW_TYPED_FANOUT_NODE) {
		if (y->s->ex) /* the owners' expander draws per relation */
			return bw_err(BURROW_E_UNSUPPORTED, "typed sampler: fanout per node is not supported over parts "
							    "(distributed training draws per relation)");
		if ((st = node_layer(y)))
			return st;
	} else if (y->s->o.labor_star > 0) {
		if ((st = star_layer(y)))
			return st;
	} else {
		if ((st = layer_offsets(y)))
			return st;
		if (!y->s->ex)
			layer_draw(y);
	}
	memcpy(y->cnt, y->up, sizeof y->cnt);
	for (int t = 0; t < h->num_types; t++)
		if ((st = number_type(y, t)) || (l > 0 && (st = merge_view(y, t, y->up[t]))))
			return st;
	for (int r = 0; r < h->num_relations; r++) {
		const int64_t E = y->rbase[r + 1] - y->rbase[r];
		if ((st = bw_grow(&b->indices[l][r], &b->indices_cap[l][r], (size_t)BW_MAX(E, 1), sizeof(int32_t), false)))
			return st;
		memcpy(b->indices[l][r], y->c->lid + y->rbase[r], (size_t)E * sizeof(int32_t));
		b->pub.blocks[l][r] = (burrow_block){.num_dst = y->up[h->rel[r].dst_type],
						     .num_src = y->cnt[h->rel[r].src_type],
						     .num_edges = E,
						     .indptr = b->indptr[l][r],
						     .indices = b->indices[l][r],
						     .edge_weight = y->s->o.labor_star > 0 && y->s->fan[l][r] >= 0
									    ? b->ew[l][r]
									    : NULL};
	}
	return 0;
}

/* ------------------------------------------------------------ one batch */

/* The seeds as the target type's nodes and sorted view; ids out of range or repeated are
 * refused. */
static int seed_level(const burrow_typed_sampler *s, typed_ctx *c, typed_sampled *b, const int64_t *seeds, int64_t n)
{
	const int t = s->h->target_type;
	const int64_t N = s->h->type_nodes[t];
	int st;
	if ((st = bw_grow(&b->nodes[t], &b->nodes_cap[t], (size_t)n, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->items, &c->items_cap, (size_t)n, sizeof(uint64_t), false)) ||
	    (st = bw_grow(&c->tmp, &c->tmp_cap, (size_t)n, sizeof(uint64_t), false)) ||
	    (st = bw_grow(&c->sg[t], &c->sg_cap[t], (size_t)n, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->sl[t], &c->sl_cap[t], (size_t)n, sizeof(int32_t), false)))
		return st;
	const int ub = bits_for((uint64_t)N - 1), lb = n > 0 ? bits_for((uint64_t)n - 1) : 0;
	if (ub + lb > 64)
		return bw_err(BURROW_E_UNSUPPORTED, "typed sampler: %lld seeds are too many for one batch", (long long)n);
	for (int64_t i = 0; i < n; i++) {
		if (seeds[i] < 0 || seeds[i] >= N)
			return bw_err(BURROW_E_RANGE, "typed sampler: seed %lld is not a node of type %s (%lld nodes)",
				      (long long)seeds[i], s->h->type_names[t], (long long)N);
		b->nodes[t][i] = seeds[i];
		c->items[i] = (uint64_t)seeds[i] << lb | (uint64_t)i;
	}
	const uint64_t *x = bw_lsd_sort(c->items, c->tmp, n, lb, ub, SORT_BITS, c->hist);
	const uint64_t lmask = lb == 64 ? ~0ull : (1ull << lb) - 1;
	for (int64_t i = 0; i < n; i++) {
		c->sg[t][i] = (int64_t)(x[i] >> lb);
		c->sl[t][i] = (int32_t)(x[i] & lmask);
		if (i && c->sg[t][i] == c->sg[t][i - 1])
			return bw_err(BURROW_E_INVAL, "typed sampler: seed %lld appears twice in one batch", (long long)c->sg[t][i]);
	}
	return 0;
}

/* Batch of the n seeds into b with the key `key`: every layer from the seeds down, then the
 * public view. */
static int sample_batch(const burrow_typed_sampler *s, typed_ctx *c, const int64_t *seeds, int64_t n, uint64_t key,
			typed_sampled *b)
{
	const burrow_hetero *h = s->h;
	const int L = s->o.num_layers;
	int st = seed_level(s, c, b, seeds, n);
	if (st)
		return st;
	burrow_typed_batch *p = &b->pub;
	memset(p->num_nodes, 0, sizeof p->num_nodes);
	memset(p->blocks, 0, sizeof p->blocks);
	p->num_nodes[L][h->target_type] = n;
	typed_layer y = {.s = s, .c = c, .b = b};
	for (int l = L - 1; l >= 0; l--) {
		y.l = l;
		y.lkey = bw_key(key, (uint64_t)l);
		memcpy(y.up, p->num_nodes[l + 1], sizeof y.up);
		if ((st = layer_step(&y)))
			return st;
		memcpy(p->num_nodes[l], y.cnt, sizeof y.cnt);
	}
	p->num_layers = L;
	p->num_types = h->num_types;
	p->num_relations = h->num_relations;
	for (int t = 0; t < BURROW_MAX_TYPES; t++)
		p->input_ids[t] = t < h->num_types && p->num_nodes[0][t] ? b->nodes[t] : NULL;
	p->num_seeds = n;
	p->seeds = b->nodes[h->target_type];
	return 0;
}

/* Sample a batch of n seeds (copied from perm under the lock when epoch >= 0, else the
 * caller's `seeds`) with the key `key` into *out, stamped (epoch, index). */
static int sample_pooled(burrow_typed_sampler *s, int64_t epoch, int64_t index, const int64_t *seeds, int64_t n,
			 uint64_t key, burrow_typed_batch **out)
{
	typed_sampled *b;
	typed_ctx *c;
	int st = 0;
	pthread_mutex_lock(&s->mu);
	if (!pool_get(s, &b, &c)) {
		pthread_mutex_unlock(&s->mu);
		return BURROW_E_NOMEM;
	}
	if (epoch >= 0) {
		if (s->perm_epoch != epoch) {
			memcpy(s->perm, s->ids, (size_t)s->n * sizeof *s->ids);
			bw_shuffle(s->perm, s->n, bw_key(bw_key(s->o.seed, (uint64_t)epoch), BW_KEY_SHUFFLE));
			s->perm_epoch = epoch;
		}
		st = bw_grow(&c->seeds, &c->seeds_cap, (size_t)n, sizeof(int64_t), false);
		if (!st)
			memcpy(c->seeds, s->perm + index * s->o.batch_size, (size_t)n * sizeof(int64_t));
		seeds = c->seeds;
	}
	pthread_mutex_unlock(&s->mu);
	if (!st)
		st = sample_batch(s, c, seeds, n, key, b);
	pthread_mutex_lock(&s->mu);
	ctx_put(s, c);
	if (st)
		batch_put(s, b);
	pthread_mutex_unlock(&s->mu);
	if (st)
		return st;
	b->pub.epoch = epoch;
	b->pub.index = index;
	*out = &b->pub;
	return 0;
}

/* ------------------------------------------------------------ the public calls */

void burrow_typed_sampler_defaults(burrow_typed_sampler_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->num_layers = 2;
	o->fanouts[0] = 25;
	o->fanouts[1] = 20;
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		for (int r = 0; r < BURROW_MAX_RELATIONS; r++)
			o->rel_fanouts[l][r] = -2;
	o->batch_size = 1024;
	o->threads = 1;
}

/* Refuse what the sampler cannot serve, naming the option. */
static int check_opts(const burrow_typed_sampler_opts *o, int num_relations)
{
	if (o->num_layers < 1 || o->num_layers > BURROW_MAX_LAYERS)
		return bw_err(BURROW_E_INVAL, "typed sampler: num_layers %d is not in [1, %d]", o->num_layers,
			      BURROW_MAX_LAYERS);
	for (int l = 0; l < o->num_layers; l++) {
		if (o->fanouts[l] < -1)
			return bw_err(BURROW_E_INVAL, "typed sampler: fanout %d of layer %d: want -1 (all) or >= 0",
				      o->fanouts[l], l);
		for (int r = 0; r < num_relations; r++)
			if (o->fanout_mode == BURROW_TYPED_FANOUT_NODE && o->rel_fanouts[l][r] != -2 &&
			    o->rel_fanouts[l][r] != 0)
				return bw_err(BURROW_E_INVAL, "typed sampler: fanout %d of layer %d, relation %d: with fanouts "
							      "per node a relation's may only be 0 (left out) or -2 (unset)",
					      o->rel_fanouts[l][r], l, r);
			else if (o->rel_fanouts[l][r] < -2)
				return bw_err(BURROW_E_INVAL, "typed sampler: fanout %d of layer %d, relation %d: want -2 "
							      "(the layer's), -1 (all) or >= 0",
					      o->rel_fanouts[l][r], l, r);
	}
	if (o->fanout_mode != BURROW_TYPED_FANOUT_RELATION && o->fanout_mode != BURROW_TYPED_FANOUT_NODE)
		return bw_err(BURROW_E_INVAL, "typed sampler: fanout_mode %d: want RELATION (0) or NODE (1)", o->fanout_mode);
	if (o->labor_star < 0 || o->labor_star > 64)
		return bw_err(BURROW_E_INVAL, "typed sampler: labor_star %d is not in [0, 64] (rounds of LABOR-*; 0: off)",
			      o->labor_star);
	if (o->labor_star > 0 && o->fanout_mode == BURROW_TYPED_FANOUT_NODE)
		return bw_err(BURROW_E_UNSUPPORTED, "typed sampler: LABOR-* samples each relation as a block of its own: "
						    "fanouts per relation, not per node");
	if (o->batch_size < 1 || o->batch_size > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "typed sampler: batch_size %lld is not in [1, 2^31)", (long long)o->batch_size);
	if (o->threads < 0 || o->threads > 4096)
		return bw_err(BURROW_E_INVAL, "typed sampler: threads %d is not in [0, 4096]", o->threads);
	return 0;
}

/* The checks sampling relies on, without reading the graph's arrays: counts, types and
 * rows. The ids themselves are burrow_hetero_check's. */
static int check_hetero(const burrow_hetero *h)
{
	if (!h || h->num_types < 1 || h->num_types > BURROW_MAX_TYPES || h->num_relations < 1 ||
	    h->num_relations > BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_INVAL, "typed sampler: the typed graph has no types or relations, or too many");
	if (h->target_type < 0 || h->target_type >= h->num_types)
		return bw_err(BURROW_E_INVAL, "typed sampler: the target type %d is not a type (%d types)", h->target_type,
			      h->num_types);
	for (int t = 0; t < h->num_types; t++)
		if (h->type_nodes[t] < 0 || !h->type_names[t])
			return bw_err(BURROW_E_FORMAT, "typed sampler: type %d has %lld nodes or no name", t,
				      (long long)h->type_nodes[t]);
	for (int r = 0; r < h->num_relations; r++) {
		const burrow_relation *x = &h->rel[r];
		const char *name = x->name ? x->name : "(unnamed)";
		if (x->src_type < 0 || x->src_type >= h->num_types || x->dst_type < 0 || x->dst_type >= h->num_types)
			return bw_err(BURROW_E_FORMAT, "typed sampler: relation %d (%s) joins types %d -> %d: not types", r,
				      name, x->src_type, x->dst_type);
		if (x->graph.num_nodes != h->type_nodes[x->dst_type] || !x->graph.indptr ||
		    (x->graph.num_edges && !x->graph.indices) || (x->graph.index_width != 4 && x->graph.index_width != 8))
			return bw_err(BURROW_E_FORMAT, "typed sampler: relation %d (%s) has %lld rows, not its dst type %s's "
						       "%lld, or no arrays",
				      r, name, (long long)x->graph.num_nodes, h->type_names[x->dst_type],
				      (long long)h->type_nodes[x->dst_type]);
	}
	return 0;
}

/* Training ids: target-type nodes, each at most once (a sorted copy, freed after). */
static int check_ids(const burrow_hetero *h, const int64_t *ids, int64_t n)
{
	const int64_t N = h->type_nodes[h->target_type];
	int64_t *a = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *a);
	if (!a)
		return BURROW_E_NOMEM;
	int st = 0;
	for (int64_t i = 0; i < n && !st; i++)
		if (ids[i] < 0 || ids[i] >= N)
			st = bw_err(BURROW_E_RANGE, "typed sampler: training id %lld at position %lld is not a node of "
						    "type %s (%lld nodes)",
				    (long long)ids[i], (long long)i, h->type_names[h->target_type], (long long)N);
		else
			a[i] = ids[i];
	if (!st)
		bw_sort_i64(a, n);
	for (int64_t i = 1; i < n && !st; i++)
		if (a[i] == a[i - 1])
			st = bw_err(BURROW_E_INVAL, "typed sampler: training id %lld appears twice", (long long)a[i]);
	bw_free(a);
	return st;
}

int burrow_typed_sampler_open(burrow_typed_sampler **out, const burrow_hetero *h, const int64_t *ids, int64_t n,
			      const burrow_typed_sampler_opts *opts)
{
	*out = NULL;
	int st = check_hetero(h); /* the cheap checks first, then every relation's contents */
	if (!st)
		st = burrow_hetero_check(h);
	return st ? st : bw_typed_sampler_open_checked(out, h, ids, n, opts);
}

int bw_typed_sampler_open_checked(burrow_typed_sampler **out, const burrow_hetero *h, const int64_t *ids, int64_t n,
				  const burrow_typed_sampler_opts *opts)
{
	*out = NULL;
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	int st;
	if (opts && (st = bw_opts_in(&o, sizeof o, opts, "burrow_typed_sampler_opts")))
		return st;
	if (n < 0 || (n && !ids))
		return bw_err(BURROW_E_INVAL, "typed sampler: %lld training ids", (long long)n);
	/* the cheap checks; the relations' contents were checked by the caller */
	if ((st = check_hetero(h)) || (st = check_opts(&o, h->num_relations)) || (st = check_ids(h, ids, n)))
		return st;
	burrow_typed_sampler *s = bw_calloc(1, sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	s->h = h;
	s->o = o;
	s->threads = bw_threads(o.threads);
	s->n = n;
	s->num_batches = o.drop_last ? n / o.batch_size : (n + o.batch_size - 1) / o.batch_size;
	s->perm_epoch = -1;
	for (int l = 0; l < o.num_layers; l++)
		for (int r = 0; r < h->num_relations; r++) {
			s->fan[l][r] = o.rel_fanouts[l][r] > -2 ? o.rel_fanouts[l][r] : o.fanouts[l];
			s->max_fanout = BW_MAX(s->max_fanout, s->fan[l][r]);
		}
	pthread_mutex_init(&s->mu, NULL);
	s->ids = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *s->ids);
	s->perm = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *s->perm);
	if (!s->ids || !s->perm) {
		burrow_typed_sampler_close(s);
		return BURROW_E_NOMEM;
	}
	if (n)
		memcpy(s->ids, ids, (size_t)n * sizeof *ids);
	*out = s;
	return 0;
}

void burrow_typed_sampler_close(burrow_typed_sampler *s)
{
	if (!s)
		return;
	for (typed_sampled *b = s->all, *nx; b; b = nx) {
		nx = b->next_all;
		sampled_free(b);
	}
	for (typed_ctx *c = s->ctx_all, *nx; c; c = nx) {
		nx = c->next_all;
		ctx_free(c);
	}
	bw_free(s->perm);
	bw_free(s->ids);
	pthread_mutex_destroy(&s->mu);
	bw_free(s);
}

int64_t burrow_typed_sampler_num_batches(const burrow_typed_sampler *s) { return s ? s->num_batches : 0; }

int burrow_typed_sampler_batch(burrow_typed_sampler *s, int64_t epoch, int64_t k, burrow_typed_batch **out)
{
	*out = NULL;
	if (!s || epoch < 0)
		return bw_err(BURROW_E_INVAL, "burrow_typed_sampler_batch: epoch %lld: want >= 0", (long long)epoch);
	if (k < 0 || k >= s->num_batches)
		return bw_err(BURROW_E_RANGE, "burrow_typed_sampler_batch: no batch %lld (the epoch has %lld)", (long long)k,
			      (long long)s->num_batches);
	const int64_t n = BW_MIN(s->o.batch_size, s->n - k * s->o.batch_size);
	const uint64_t key = bw_key(bw_key(s->o.seed, (uint64_t)epoch), (uint64_t)k);
	return sample_pooled(s, epoch, k, NULL, n, key, out);
}

int burrow_typed_sampler_sample(burrow_typed_sampler *s, const int64_t *seeds, int64_t n, uint64_t key,
				burrow_typed_batch **out)
{
	*out = NULL;
	if (!s || !seeds || n < 1 || n > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "burrow_typed_sampler_sample: %lld seeds: want 1 .. 2^31-1", (long long)n);
	return sample_pooled(s, -1, -1, seeds, n, bw_key(bw_key(s->o.seed, BW_KEY_EXPLICIT), key), out);
}

double bw_typed_batch_bytes(const burrow_typed_batch *tb)
{
	const typed_sampled *b = (const typed_sampled *)tb;
	double n = sizeof *b;
	for (int t = 0; t < BURROW_MAX_TYPES; t++)
		n += (double)b->nodes_cap[t] * sizeof(int64_t);
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		for (int r = 0; r < BURROW_MAX_RELATIONS; r++)
			n += (double)b->indptr_cap[l][r] * sizeof(int64_t) + (double)b->indices_cap[l][r] * sizeof(int32_t) +
			     (double)b->ew_cap[l][r] * sizeof(float);
	return n;
}

void burrow_typed_sampler_release(burrow_typed_sampler *s, burrow_typed_batch *pub)
{
	if (!s || !pub)
		return;
	typed_sampled *b = (typed_sampled *)pub;
	pthread_mutex_lock(&s->mu);
	if (b->owner != s || !b->held)
		bw_log(BURROW_LOG_ERROR, "burrow_typed_sampler_release: batch %p is not held from this sampler (ignored)",
		       (void *)pub);
	else
		batch_put(s, b);
	pthread_mutex_unlock(&s->mu);
}

/* ------------------------------------------------------------ with an expander (distributed) */

int bw_typed_sampler_open_ex(burrow_typed_sampler **out, const burrow_hetero *h, const bw_typed_expander *ex,
			     const burrow_typed_sampler_opts *opts)
{
	*out = NULL;
	burrow_typed_sampler_opts o;
	burrow_typed_sampler_defaults(&o);
	int st;
	if (opts && (st = bw_opts_in(&o, sizeof o, opts, "burrow_typed_sampler_opts")))
		return st;
	if (!ex || !ex->expand || !h || h->num_types < 1 || h->num_types > BURROW_MAX_TYPES || h->num_relations < 1 ||
	    h->num_relations > BURROW_MAX_RELATIONS || h->target_type < 0 || h->target_type >= h->num_types)
		return bw_err(BURROW_E_INVAL, "typed sampler: an expander needs types, relations and a target type");
	if ((st = check_opts(&o, h->num_relations)))
		return st;
	if (o.labor || o.labor_star)
		return bw_err(BURROW_E_UNSUPPORTED, "typed sampler: LABOR%s draws from the graph's rows, not an expander's",
			      o.labor_star ? "-*" : "");
	burrow_typed_sampler *s = bw_calloc(1, sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	s->h = h;
	s->ex = ex;
	s->o = o;
	s->threads = bw_threads(o.threads);
	s->perm_epoch = -1;
	for (int l = 0; l < o.num_layers; l++)
		for (int r = 0; r < h->num_relations; r++) {
			s->fan[l][r] = o.rel_fanouts[l][r] > -2 ? o.rel_fanouts[l][r] : o.fanouts[l];
			s->max_fanout = BW_MAX(s->max_fanout, s->fan[l][r]);
		}
	pthread_mutex_init(&s->mu, NULL);
	*out = s;
	return 0;
}

int bw_typed_sampler_sample_key(burrow_typed_sampler *s, const int64_t *seeds, int64_t n, uint64_t key,
				int64_t epoch, int64_t index, burrow_typed_batch **out)
{
	*out = NULL;
	if (!s || n < 0 || (n && !seeds) || n > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "typed sampler: %lld seeds: want 0 .. 2^31-1", (long long)n);
	int st = sample_pooled(s, -1, -1, seeds, n, key, out);
	if (!st) {
		(*out)->epoch = epoch;
		(*out)->index = index;
	}
	return st;
}
