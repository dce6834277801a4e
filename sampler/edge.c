/* edge.c: edge mini-batches for link prediction (burrow_edge_sampler): positives shuffled
 * per epoch, uniform negatives per positive, one neighborhood sampled for every endpoint
 * with the batch's own edges left out of its blocks. The blocks come from the sampling
 * kernel (sample.c) through an expander whose rows are the graph's rows less the excluded
 * entries, drawn as the kernel draws (draw.h, the stream bw_key(lkey, node)): a row without
 * an excluded entry gets the very neighbors burrow_sampler_sample would give it. */
#include "sampler_internal.h"

#include <pthread.h>
#include <string.h>

/* Coordinates of the batch key that no layer takes: the negatives' stream. */
#define KEY_NEG (UINT64_MAX - 2)

/* An excluded (row, neighbor) entry. */
typedef struct ex_pair {
	int64_t a, b;
} ex_pair;

/* A batch as the edge sampler holds it: the node batch first (so a burrow_batch * handed
 * out by the loader's producer is one of these), then the pairs. */
typedef struct edge_sampled {
	bw_sampled s;                  /* first member */
	burrow_edge_batch pub;
	int32_t *src, *dst;            /* [pairs_cap] */
	float *label;
	size_t src_cap, dst_cap, label_cap;
	int64_t *ends;                 /* [ends_cap] the pairs' global ids, then the seeds */
	size_t ends_cap;
	ex_pair *ex;                   /* [ex_cap] the excluded entries, sorted */
	size_t ex_cap;
	int64_t nex;
	/* the expander's rows */
	int64_t *xip, *xids, *xpos;
	size_t xip_cap, xids_cap, xpos_cap;
	struct edge_sampled *next_all, *next_free;
} edge_sampled;

struct burrow_edge_sampler {
	const burrow_csr *g;           /* borrowed */
	burrow_edge_sampler_opts o;
	int threads, max_fanout;
	int64_t n, num_batches;
	int64_t *pos;                  /* [n, 2] copied */
	int64_t *perm;                 /* [n] the order of epoch perm_epoch */
	int64_t perm_epoch;            /* -1: none yet */
	bw_sample_ctx ctx;
	int64_t *table;                /* [bw_draw_table_cap(max_fanout)] Floyd's hash set */
	edge_sampled *all, *free;
	edge_sampled *cur;             /* the batch the expander works for */
};

void burrow_edge_sampler_defaults(burrow_edge_sampler_opts *o)
{
	*o = (burrow_edge_sampler_opts){
		.size = sizeof *o,
		.num_layers = 3,
		.fanouts = {15, 10, 5},
		.batch_size = 1024,
		.neg = 1,
		.exclude = true,
		.exclude_reverse = true,
		.threads = 1,
	};
}

int burrow_edge_sampler_open(burrow_edge_sampler **out, const burrow_csr *g, const int64_t *pos, int64_t n,
			     const burrow_edge_sampler_opts *opts)
{
	burrow_edge_sampler_opts o;
	burrow_edge_sampler_defaults(&o);
	*out = NULL;
	int st = opts ? bw_opts_in(&o, sizeof o, opts, "burrow_edge_sampler_opts") : 0;
	if (st)
		return st;
	if (o.neg_mode != BURROW_NEG_DST && o.neg_mode != BURROW_NEG_BOTH)
		return bw_err(BURROW_E_INVAL, "edge sampler: negative mode %d: want dst (0) or both (1)", o.neg_mode);
	if (o.num_layers < 1 || o.num_layers > BURROW_MAX_LAYERS || o.batch_size < 1 || o.neg < 0 || n < 0 ||
	    o.neg > (1 << 20))
		return bw_err(BURROW_E_INVAL, "edge sampler: %d layers, batch %lld, %d negatives: want 1 .. %d layers, a "
					      "positive batch and 0 .. 2^20 negatives",
			      o.num_layers, (long long)o.batch_size, o.neg, BURROW_MAX_LAYERS);
	for (int l = 0; l < o.num_layers; l++)
		if (o.fanouts[l] < -1)
			return bw_err(BURROW_E_INVAL, "edge sampler: fanout %d of layer %d", o.fanouts[l], l);
	if ((st = burrow_csr_check(g, false)))
		return st;
	for (int64_t i = 0; i < 2 * n; i++)
		if (pos[i] < 0 || pos[i] >= g->num_nodes)
			return bw_err(BURROW_E_RANGE, "edge sampler: edge %lld's %s %lld is not a node id (%lld nodes)",
				      (long long)(i / 2), i % 2 ? "destination" : "source", (long long)pos[i],
				      (long long)g->num_nodes);
	burrow_edge_sampler *s = bw_calloc(1, sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	s->g = g;
	s->o = o;
	s->n = n;
	s->perm_epoch = -1;
	s->threads = o.threads > 0 ? o.threads : omp_get_max_threads();
	s->num_batches = (n + o.batch_size - 1) / o.batch_size;
	for (int l = 0; l < o.num_layers; l++)
		s->max_fanout = BW_MAX(s->max_fanout, o.fanouts[l]);
	s->pos = bw_malloc((size_t)(2 * n + 1) * sizeof *s->pos);
	s->perm = bw_malloc((size_t)(n + 1) * sizeof *s->perm);
	s->table = bw_malloc(bw_draw_table_cap(BW_MAX(s->max_fanout, 1)) * sizeof *s->table);
	if (!s->pos || !s->perm || !s->table || (st = bw_sample_ctx_init(&s->ctx, s->threads, s->max_fanout))) {
		burrow_edge_sampler_close(s);
		return st ? st : BURROW_E_NOMEM;
	}
	memcpy(s->pos, pos, (size_t)(2 * n) * sizeof *pos);
	*out = s;
	return 0;
}

static void edge_sampled_free(edge_sampled *b)
{
	bw_sampled_free_arrays(&b->s);
	bw_free(b->src);
	bw_free(b->dst);
	bw_free(b->label);
	bw_free(b->ends);
	bw_free(b->ex);
	bw_free(b->xip);
	bw_free(b->xids);
	bw_free(b->xpos);
	bw_free(b);
}

void burrow_edge_sampler_close(burrow_edge_sampler *s)
{
	if (!s)
		return;
	for (edge_sampled *b = s->all, *nx; b; b = nx) {
		nx = b->next_all;
		edge_sampled_free(b);
	}
	bw_sample_ctx_free(&s->ctx);
	bw_free(s->pos);
	bw_free(s->perm);
	bw_free(s->table);
	bw_free(s);
}

int64_t burrow_edge_sampler_num_batches(const burrow_edge_sampler *s) { return s->num_batches; }

/* ------------------------------------------------------------ the pairs */

static int cmp_pair(const void *x, const void *y)
{
	const ex_pair *p = x, *q = y;
	return p->a < q->a ? -1 : p->a > q->a ? 1 : p->b < q->b ? -1 : p->b > q->b;
}

/* Epoch `epoch`'s order of the positives. */
static void epoch_order(burrow_edge_sampler *s, int64_t epoch)
{
	if (s->perm_epoch == epoch)
		return;
	for (int64_t i = 0; i < s->n; i++)
		s->perm[i] = i;
	bw_shuffle(s->perm, s->n, bw_key(bw_key(s->o.seed, (uint64_t)epoch), BW_KEY_SHUFFLE));
	s->perm_epoch = epoch;
}

/* Seed-local index of node v among the sorted seeds. */
static int32_t local_of(const int64_t *seeds, int64_t ns, int64_t v)
{
	return (int32_t)bw_lower_bound_i64(seeds, ns, v);
}

/* The pairs of batch (epoch, k): positives perm[first, first + np), then their negatives;
 * the seeds (sorted distinct endpoints) at b->ends + 2 * pairs, *ns of them; the exclusion
 * set. */
static int make_pairs(burrow_edge_sampler *s, edge_sampled *b, int64_t epoch, int64_t k, int64_t *ns)
{
	const int64_t first = k * s->o.batch_size, np = BW_MIN(s->o.batch_size, s->n - first);
	const int64_t npairs = np * (1 + s->o.neg);
	const int rev = s->o.exclude_reverse ? 2 : 1;
	int st;
	if ((st = bw_grow(&b->src, &b->src_cap, (size_t)npairs + 1, sizeof *b->src, false)) ||
	    (st = bw_grow(&b->dst, &b->dst_cap, (size_t)npairs + 1, sizeof *b->dst, false)) ||
	    (st = bw_grow(&b->label, &b->label_cap, (size_t)npairs + 1, sizeof *b->label, false)) ||
	    (st = bw_grow(&b->ends, &b->ends_cap, (size_t)(4 * npairs) + 1, sizeof *b->ends, false)) ||
	    (st = bw_grow(&b->ex, &b->ex_cap, (size_t)(rev * np) + 1, sizeof *b->ex, false)))
		return st;
	int64_t *ends = b->ends;
	bw_rng r;
	bw_rng_seed(&r, bw_key(bw_key(bw_key(s->o.seed, (uint64_t)epoch), (uint64_t)k), KEY_NEG));
	for (int64_t i = 0; i < np; i++) {
		const int64_t *e = s->pos + 2 * s->perm[first + i];
		ends[2 * i] = e[0];
		ends[2 * i + 1] = e[1];
	}
	for (int64_t i = 0; i < np; i++)
		for (int j = 0; j < s->o.neg; j++) {
			const int64_t q = np + i * s->o.neg + j;
			ends[2 * q] = s->o.neg_mode == BURROW_NEG_BOTH ? (int64_t)bw_rng_below(&r, (uint64_t)s->g->num_nodes)
								       : ends[2 * i];
			ends[2 * q + 1] = (int64_t)bw_rng_below(&r, (uint64_t)s->g->num_nodes);
		}
	int64_t *seeds = ends + 2 * npairs;
	memcpy(seeds, ends, (size_t)(2 * npairs) * sizeof *seeds);
	bw_sort_i64(seeds, 2 * npairs);
	*ns = bw_unique_i64(seeds, 2 * npairs);
	for (int64_t q = 0; q < npairs; q++) {
		b->src[q] = local_of(seeds, *ns, ends[2 * q]);
		b->dst[q] = local_of(seeds, *ns, ends[2 * q + 1]);
		b->label[q] = q < np ? 1.0f : 0.0f;
	}
	b->nex = 0;
	for (int64_t i = 0; s->o.exclude && i < np; i++) {
		b->ex[b->nex++] = (ex_pair){ends[2 * i], ends[2 * i + 1]};
		if (rev == 2)
			b->ex[b->nex++] = (ex_pair){ends[2 * i + 1], ends[2 * i]};
	}
	qsort(b->ex, (size_t)b->nex, sizeof *b->ex, cmp_pair);
	b->pub = (burrow_edge_batch){
		.num_pairs = npairs, .num_pos = np, .src = b->src, .dst = b->dst, .label = b->label,
		.epoch = epoch, .index = k};
	return 0;
}

/* ------------------------------------------------------------ the expander */

/* Row v's excluded positions (all copies of each excluded neighbor), ascending, into xp;
 * returns their count. */
static int64_t row_excluded(const burrow_csr *g, const edge_sampled *b, int64_t v, int64_t *xp)
{
	const ex_pair key = {v, INT64_MIN};
	int64_t lo = 0, hi = b->nex, m = 0;
	while (lo < hi) { /* first pair with a >= v */
		const int64_t mid = lo + (hi - lo) / 2;
		if (cmp_pair(&b->ex[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	const int64_t s0 = g->indptr[v], s1 = g->indptr[v + 1];
	for (int64_t e = lo; e < b->nex && b->ex[e].a == v; e++) {
		if (e > lo && b->ex[e].b == b->ex[e - 1].b)
			continue;
		int64_t a = s0, z = s1;
		while (a < z) {
			const int64_t mid = a + (z - a) / 2;
			if (burrow_csr_index(g, mid) < b->ex[e].b)
				a = mid + 1;
			else
				z = mid;
		}
		for (; a < s1 && burrow_csr_index(g, a) == b->ex[e].b; a++)
			xp[m++] = a - s0;
	}
	return m; /* ascending: the pairs are sorted by neighbor, the row by id */
}

/* Row v's picks, as draw_row would make them over the row less its excluded positions xp[0,
 * m): written as neighbor ids to out; returns how many. */
static int64_t row_draw(burrow_edge_sampler *s, int64_t v, int fanout, uint64_t lkey, const int64_t *xp, int64_t m,
			int64_t *pick, int64_t *out)
{
	const burrow_csr *g = s->g;
	const int64_t s0 = g->indptr[v], d = g->indptr[v + 1] - s0 - m;
	const int64_t k = fanout < 0 || d <= fanout ? d : fanout;
	if (k == 0)
		return 0;
	if (k == d) {
		for (int64_t j = 0, x = 0, q = 0; j < d + m; j++) {
			if (x < m && xp[x] == j) {
				x++;
				continue;
			}
			out[q++] = burrow_csr_index(g, s0 + j);
		}
		return k;
	}
	bw_rng r;
	bw_rng_seed(&r, bw_key(lkey, (uint64_t)v));
	bw_draw(&r, d, k, pick, k > BW_SMALL_FANOUT ? s->table : NULL);
	for (int64_t j = 0, x = 0; j < k; j++) { /* position p of the reduced row: skip the excluded before it */
		int64_t p = pick[j];
		while (x < m && xp[x] <= p + x)
			x++;
		out[j] = burrow_csr_index(g, s0 + p + x);
	}
	return k;
}

static int expand(void *ctx, int l, int fanout, uint64_t lkey, const int64_t *nodes, int64_t nd, const int64_t **ip,
		  const int64_t **ids)
{
	(void)l;
	burrow_edge_sampler *s = ctx;
	edge_sampled *b = s->cur;
	const burrow_csr *g = s->g;
	int64_t cap = 0, maxrow = 0;
	int st;
	for (int64_t i = 0; i < nd; i++) {
		const int64_t d = g->indptr[nodes[i] + 1] - g->indptr[nodes[i]];
		cap += fanout < 0 ? d : BW_MIN(d, fanout);
		maxrow = BW_MAX(maxrow, d);
	}
	if ((st = bw_grow(&b->xip, &b->xip_cap, (size_t)nd + 1, sizeof *b->xip, false)) ||
	    (st = bw_grow(&b->xids, &b->xids_cap, (size_t)cap + 1, sizeof *b->xids, false)) ||
	    (st = bw_grow(&b->xpos, &b->xpos_cap, (size_t)(maxrow + BW_MAX(s->max_fanout, 0)) + 1, sizeof *b->xpos,
			  false)))
		return st;
	int64_t *xp = b->xpos, *pick = b->xpos + maxrow;
	b->xip[0] = 0;
	for (int64_t i = 0; i < nd; i++) {
		const int64_t m = b->nex ? row_excluded(g, b, nodes[i], xp) : 0;
		b->xip[i + 1] = b->xip[i] + row_draw(s, nodes[i], fanout, lkey, xp, m, pick, b->xids + b->xip[i]);
	}
	*ip = b->xip;
	*ids = b->xids;
	return 0;
}

/* ------------------------------------------------------------ batches */

int burrow_edge_sampler_batch(burrow_edge_sampler *s, int64_t epoch, int64_t k, burrow_edge_batch **out)
{
	*out = NULL;
	if (epoch < 0 || k < 0 || k >= s->num_batches)
		return bw_err(BURROW_E_INVAL, "edge sampler: no batch %lld of %lld (epoch %lld)", (long long)k,
			      (long long)s->num_batches, (long long)epoch);
	edge_sampled *b = s->free;
	if (b) {
		s->free = b->next_free;
	} else {
		if (!(b = bw_calloc(1, sizeof *b)))
			return BURROW_E_NOMEM;
		b->s.owner = s;
		b->next_all = s->all;
		s->all = b;
	}
	b->s.held = true;
	epoch_order(s, epoch);
	int64_t ns;
	int st = make_pairs(s, b, epoch, k, &ns);
	const bw_expander ex = {.expand = expand, .ctx = s, .num_nodes = s->g->num_nodes};
	const uint64_t key = bw_key(bw_key(s->o.seed, (uint64_t)epoch), (uint64_t)k);
	s->cur = b;
	if (!st)
		st = bw_sample_batch_ex(&s->ctx, &ex, b->ends + 2 * b->pub.num_pairs, ns, s->o.num_layers, s->o.fanouts,
					key, &b->s);
	s->cur = NULL;
	if (st) {
		burrow_edge_sampler_release(s, &b->pub);
		return st;
	}
	b->s.pub.epoch = epoch;
	b->s.pub.index = k;
	b->pub.nodes = &b->s.pub;
	*out = &b->pub;
	return 0;
}

/* The edge batch around pub (a burrow_edge_batch handed out by s). */
static edge_sampled *of_pub(const burrow_edge_batch *pub)
{
	return (edge_sampled *)((char *)pub - offsetof(edge_sampled, pub));
}

void burrow_edge_sampler_release(burrow_edge_sampler *s, burrow_edge_batch *pub)
{
	if (!pub)
		return;
	edge_sampled *b = of_pub(pub);
	BW_ASSERT(b->s.owner == s && b->s.held);
	b->s.held = false;
	b->next_free = s->free;
	s->free = b;
}

const burrow_edge_batch *bw_edge_batch_of(const burrow_batch *nodes)
{
	const edge_sampled *b = (const edge_sampled *)nodes; /* the node batch is the first member */
	return &b->pub;
}
