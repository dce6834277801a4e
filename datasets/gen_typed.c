/* gen_typed.c: typed synthetic twins of OGB-LSC MAG240M and IGBH-full (burrow gen mag|igbh). */
#include "../core/internal.h"
#include "../graph/dataset_internal.h"
#include "dsio.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stream tags, apart from gen.c's (1 .. 14). */
enum { TAG_TPERM = 32, TAG_TEDGE, TAG_TSPLIT, TAG_TMEAN, TAG_TFEAT };

#define TW_MAX_TYPES 4
#define TW_MAX_RELS 4
#define TW_CHUNK ((int64_t)1 << 18) /* edges drawn per round, by all threads */

/* A real dataset's shape: its types (count, featured), relations (src, name, dst, edges as
 * its edge_index has them) and split sizes; train, valid, test, then labelled papers in no
 * split (MAG240M's test-challenge). */
typedef struct tw_shape {
	const char *kind;
	int num_types, num_rels;
	struct {
		const char *name;
		double count;
		bool featured;
	} type[TW_MAX_TYPES];
	struct {
		int src;
		const char *name;
		int dst;
		double edges;
	} rel[TW_MAX_RELS];
	double split[4];
} tw_shape;

/* MAG240M as OGB-LSC's MAG240MDataset states it (paper 768 float16 features, 153 classes). */
static const tw_shape MAG = {
	.kind = "mag",
	.num_types = 3,
	.type = {{"paper", 121751666, true}, {"author", 122383112, false}, {"institution", 25721, false}},
	.num_rels = 3,
	.rel = {{1, "writes", 0, 386022720}, {1, "affiliated_with", 2, 44592586}, {0, "cites", 0, 1297748926}},
	.split = {1112392, 138949, 88092, 58726},
};

/* IGBH-full as MLPerf's GNN benchmark uses it (547,306,935 nodes, 5,812,005,639 edges: these
 * four types and relations; 1024 float32 features on every type); IGB's split: 60 / 20 / 20 of
 * the 227,130,858 papers labelled with the 19 classes (157,675,969 with the 2983). */
static const tw_shape IGBH = {
	.kind = "igbh",
	.num_types = 4,
	.type = {{"paper", 269346174, true}, {"author", 277220883, true}, {"institute", 26918, true},
		 {"fos", 712960, true}},
	.num_rels = 4,
	.rel = {{0, "cites", 0, 3996442004.0}, {0, "written_by", 1, 716761549}, {1, "affiliated_to", 2, 48521486},
		{0, "topic", 3, 1050280600}},
	.split = {136278514, 45426171, 45426173, 0},
};
static const double IGBH_SPLIT_2K[4] = {94605581, 31535193, 31535195, 0};

#define MAG_CLASSES 153
#define MAG_DIM 768
#define IGBH_DIM 1024

void bw_gen_typed_defaults(burrow_gen_opts *o)
{
	const bool mag = o->kind == BURROW_GEN_MAG;
	o->num_classes = mag ? MAG_CLASSES : 19;
	o->feat_dim = mag ? MAG_DIM : IGBH_DIM;
	o->feat_dtype = mag ? BURROW_DTYPE_F16 : BURROW_DTYPE_F32;
	o->homophily = 0.6;
	o->signal = 3.0; /* as gen papers: 153 classes need a strong signal for a short run */
}

/* The twin at o->fraction: counts per type, edges per relation, split sizes. */
typedef struct tw_sizes {
	const tw_shape *s;
	int64_t n[TW_MAX_TYPES], m[TW_MAX_RELS], split[4];
} tw_sizes;

static void tw_size(const burrow_gen_opts *o, tw_sizes *z)
{
	z->s = o->kind == BURROW_GEN_MAG ? &MAG : &IGBH;
	const double *split = o->kind == BURROW_GEN_IGBH && o->num_classes == 2983 ? IGBH_SPLIT_2K : z->s->split;
	for (int t = 0; t < z->s->num_types; t++)
		z->n[t] = (int64_t)llround(z->s->type[t].count * o->fraction);
	for (int r = 0; r < z->s->num_rels; r++)
		z->m[r] = (int64_t)llround(z->s->rel[r].edges * o->fraction);
	for (int i = 0; i < 4; i++)
		z->split[i] = (int64_t)llround(split[i] * o->fraction);
}

/* ---------------------------------------------------------------- the options */

/* --fill mean: every featureless type (authors, institutions) gets the mean of its neighbors'
 * features, streamed, as float16 (datasets/fill.c, as `burrow prep mag240m` fills). `dry`: asked
 * before anything is written (the value is checked); else run on the committed directory. */
static int tw_fill(const burrow_gen_opts *o, const char *dir, bool dry)
{
	if (o->fill == BURROW_FEAT_FILL_NONE)
		return 0;
	if (o->fill != BURROW_FEAT_FILL_MEAN)
		return bw_err(BURROW_E_INVAL, "gen %s: fill must be none or mean, got %d", o->kind == BURROW_GEN_MAG ? "mag" : "igbh",
			      o->fill);
	return dry ? 0 : bw_typed_fill_mean(dir, o->mem_bytes, o->progress, o->progress_user);
}

static int tw_check(const burrow_gen_opts *o, const tw_sizes *z)
{
	const char *k = z->s->kind;
	if (!(o->fraction > 0 && o->fraction <= 4))
		return bw_err(BURROW_E_INVAL, "gen %s: fraction must lie in (0, 4]", k);
	for (int t = 0; t < z->s->num_types; t++)
		if (z->n[t] < 1)
			return bw_err(BURROW_E_INVAL, "gen %s: fraction %g leaves type '%s' empty (at least %g)", k,
				      o->fraction, z->s->type[t].name, 0.5 / z->s->type[t].count);
	for (int i = 0; i < 3; i++)
		if (z->split[i] < 1)
			return bw_err(BURROW_E_INVAL, "gen %s: fraction %g leaves the %s split empty", k, o->fraction,
				      i == 0 ? "train" : i == 1 ? "valid" : "test");
	if (o->kind == BURROW_GEN_IGBH && o->num_classes != 19 && o->num_classes != 2983)
		return bw_err(BURROW_E_INVAL, "gen igbh: classes must be 19 or 2983 (IGB's two label sets), got %d",
			      o->num_classes);
	if (o->num_classes < 1 || (double)o->num_classes > (double)z->n[0] / 2)
		return bw_err(BURROW_E_INVAL, "gen %s: classes must lie in [1, papers / 2 = %lld]", k,
			      (long long)(z->n[0] / 2));
	if (o->feat_dim < 1 || o->feat_dim > (1 << 20) ||
	    (o->feat_dtype != BURROW_DTYPE_F32 && o->feat_dtype != BURROW_DTYPE_F16))
		return bw_err(BURROW_E_INVAL, "gen %s: features must be float32 or float16 of dimension [1, 2^20]", k);
	if (!(o->homophily >= 0 && o->homophily <= 1) || !(o->signal >= 0) || !isfinite(o->signal))
		return bw_err(BURROW_E_INVAL, "gen %s: homophily must lie in [0, 1] and the signal be a finite number >= 0",
			      k);
	if (o->edge_split[0] || o->edge_split[1] || o->edge_split[2] || o->neg_per_source || o->directed ||
	    o->num_tasks || o->edge_feat_dim || o->node_features_from_edges)
		return bw_err(BURROW_E_INVAL, "gen %s: edge splits, tasks and edge features are for homogeneous kinds", k);
	return tw_fill(o, NULL, true);
}

/* ---------------------------------------------------------------- degrees */

/* The rows of a relation grouped by destination rank k in [0, n): row k holds off(k + 1) -
 * off(k) edges, off(k) = floor(m sqrt(k / n)) (Chung-Lu weights rank^(-1/2): a power-law tail
 * of exponent 3, the largest row about sqrt(n) x the mean), exactly m in all. A row holds at
 * most cap distinct sources: what the top rows cannot hold is carried down to the next ones,
 * whose offsets are kept in pre[0 .. np] (usually np = 0: nothing carried). */
typedef struct tw_deg {
	int64_t m, n, cap, np, max;
	int64_t *pre; /* [np + 1] */
} tw_deg;

static int64_t deg_T(const tw_deg *g, int64_t k)
{
	return k >= g->n ? g->m : (int64_t)floor((double)g->m * sqrt((double)k / (double)g->n));
}

static int64_t deg_off(const tw_deg *g, int64_t k) { return k <= g->np ? g->pre[k] : deg_T(g, k); }

/* The carried prefix and the largest row; BURROW_E_INVAL when m edges cannot be distinct. */
static int deg_init(tw_deg *g, int64_t m, int64_t n, int64_t cap, const char *rel)
{
	int64_t k = 0, carry = 0, off = 0, alloc = 16;
	*g = (tw_deg){.m = m, .n = n, .cap = cap};
	if (!(g->pre = bw_malloc((size_t)alloc * sizeof *g->pre)))
		return BURROW_E_NOMEM;
	g->pre[0] = 0;
	for (; k < n; k++) {
		const int64_t base = deg_T(g, k + 1) - deg_T(g, k);
		if (carry == 0 && base < cap) /* every later row holds at most cap (see the report) */
			break;
		const int64_t d = BW_MIN(cap, base + carry);
		carry += base - d;
		g->max = BW_MAX(g->max, d);
		if (k + 2 > alloc) {
			int64_t *p = bw_realloc(g->pre, (size_t)(alloc *= 2) * sizeof *p);
			if (!p)
				return BURROW_E_NOMEM;
			g->pre = p;
		}
		g->pre[k + 1] = off += d;
	}
	g->np = k;
	if (carry)
		return bw_err(BURROW_E_INVAL, "gen: relation %s: %lld edges cannot be distinct between its types",
			      rel, (long long)m);
	/* past the prefix a row is floor(x) - floor(y) of a difference x - y that only falls */
	g->max = BW_MAX(g->max, k < n ? deg_T(g, k + 1) - deg_T(g, k) + 1 : 0);
	return 0;
}

/* The first row past lo whose offset is TW_CHUNK edges on (or n). */
static int64_t deg_chunk_end(const tw_deg *g, int64_t lo)
{
	const int64_t want = deg_off(g, lo) + TW_CHUNK;
	int64_t a = lo + 1, b = g->n;
	while (a < b) {
		const int64_t mid = a + (b - a) / 2;
		if (deg_off(g, mid) >= want)
			b = mid;
		else
			a = mid + 1;
	}
	return a;
}

/* ---------------------------------------------------------------- edges */

typedef struct tw_rel {
	const bw_feistel *src_ids, *dst_ids; /* rank -> node id of each end's type */
	int64_t n_src, C;
	double h;
	bool self;                            /* src and dst are one type: no loops */
	uint64_t key;                         /* the relation's stream; row k draws from (key, k) */
} tw_rel;

/* A source rank for a row of class c: with probability h a power-law rank among the ranks of
 * class c (c, c + C, ...), else among all. */
static int64_t pick(const tw_rel *x, bw_rng *r, int64_t c)
{
	const int64_t nc = c < x->n_src ? (x->n_src - c + x->C - 1) / x->C : 0;
	if (bw_rng_uniform(r) < x->h && nc > 0)
		return bw_plaw_rank(r, nc) * x->C + c;
	return bw_plaw_rank(r, x->n_src);
}

/* Insert x into the open-addressed set of 2^bits slots (-1 empty); false when there. */
static bool set_add(int64_t *set, int bits, int64_t x)
{
	const uint64_t mask = ((uint64_t)1 << bits) - 1;
	for (uint64_t i = ((uint64_t)x * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits);; i = (i + 1) & mask) {
		if (set[i] == x)
			return false;
		if (set[i] < 0) {
			set[i] = x;
			return true;
		}
	}
}

/* Row k (d edges) into src, dst: d distinct source ranks (never k itself when self), from the
 * row's own stream. A dense row (2d > cap) is a uniform d-subset; else picks, repeats
 * redrawn (uniformly after 32 tries). scratch: at least 2 (d + 1) and cap entries. */
static void row_edges(const tw_rel *x, int64_t k, int64_t d, int64_t *scratch, int64_t *src, int64_t *dst)
{
	bw_rng r;
	bw_rng_seed(&r, bw_key(x->key, (uint64_t)k));
	const int64_t v = (int64_t)bw_feistel_fwd(x->dst_ids, (uint64_t)k), cap = x->n_src - x->self;
	for (int64_t i = 0; i < d; i++)
		dst[i] = v;
	if (2 * d > cap) {
		for (int64_t i = 0; i < cap; i++)
			scratch[i] = i;
		for (int64_t i = 0; i < d; i++) {
			const int64_t j = i + (int64_t)bw_rng_below(&r, (uint64_t)(cap - i)), t = scratch[j];
			scratch[j] = scratch[i];
			const int64_t s = t + (x->self && t >= k);
			src[i] = (int64_t)bw_feistel_fwd(x->src_ids, (uint64_t)s);
		}
		return;
	}
	int bits = 1;
	while (((int64_t)1 << bits) < 2 * (d + 1))
		bits++;
	memset(scratch, 0xff, ((size_t)1 << bits) * sizeof *scratch);
	if (x->self)
		set_add(scratch, bits, k);
	const int64_t c = k % x->C;
	for (int64_t i = 0; i < d; i++) {
		int64_t s;
		int tries = 0;
		do
			s = tries++ < 32 ? pick(x, &r, c) : (int64_t)bw_rng_below(&r, (uint64_t)x->n_src);
		while (!set_add(scratch, bits, s));
		src[i] = (int64_t)bw_feistel_fwd(x->src_ids, (uint64_t)s);
	}
}

/* Scratch entries a thread needs for rows of at most `max` edges among cap sources. */
static int64_t scratch_size(int64_t max, int64_t cap)
{
	int64_t s = 2;
	while (s < 2 * (max + 1))
		s *= 2;
	return BW_MAX(s, BW_MIN(cap, 2 * max));
}

/* The rows [lo, hi) of relation x into src, dst (row k at off(k) - off(lo)), all threads. */
static void rows_edges(const burrow_gen_opts *o, const tw_rel *x, const tw_deg *g, int64_t lo, int64_t hi,
		       int64_t *scratch, int64_t ss, int64_t *src, int64_t *dst)
{
	const int64_t e0 = deg_off(g, lo);
#pragma omp parallel num_threads(bw_threads(o->threads))
	{
		int64_t *mine = scratch + (int64_t)omp_get_thread_num() * ss;
#pragma omp for schedule(dynamic, 64)
		for (int64_t k = lo; k < hi; k++) {
			const int64_t a = deg_off(g, k) - e0, d = deg_off(g, k + 1) - deg_off(g, k);
			row_edges(x, k, d, mine, src + a, dst + a);
		}
	}
}

/* Relation r of the twin into w, or its reverse rev_<name> (the same edges, dst -> src): rows
 * of the dst type by rank, TW_CHUNK edges at a time; the writer's build spills under o->mem_bytes
 * (default half the memory). */
static int tw_relation(const burrow_gen_opts *o, burrow_writer *w, const tw_sizes *z, const bw_feistel *ids,
		       int r, bool reverse)
{
	const int s = z->s->rel[r].src, t = z->s->rel[r].dst, nt = bw_threads(o->threads);
	char name[BURROW_MAX_NAME];
	snprintf(name, sizeof name, "%s%s", reverse ? "rev_" : "", z->s->rel[r].name);
	const tw_rel x = {.src_ids = &ids[s], .dst_ids = &ids[t], .n_src = z->n[s], .C = o->num_classes,
			  .h = o->homophily, .self = s == t, .key = bw_key(bw_key(o->seed, TAG_TEDGE), (uint64_t)r)};
	tw_deg g;
	int64_t *src = NULL, *dst = NULL, *scratch = NULL, ss = 0;
	int st = deg_init(&g, z->m[r], z->n[t], z->n[s] - x.self, z->s->rel[r].name);
	if (!st) {
		ss = scratch_size(g.max, g.cap);
		src = bw_malloc((size_t)(TW_CHUNK + g.max) * sizeof *src);
		dst = bw_malloc((size_t)(TW_CHUNK + g.max) * sizeof *dst);
		scratch = bw_malloc((size_t)(ss * nt) * sizeof *scratch);
		st = src && dst && scratch ? 0 : BURROW_E_NOMEM;
	}
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.threads = o->threads;
	co.mem_bytes = o->mem_bytes ? o->mem_bytes : bw_half_memory();
	co.spill_dir = o->spill_dir;
	if (!st)
		st = burrow_writer_relation_begin(w, reverse ? t : s, name, reverse ? s : t, &co);
	for (int64_t lo = 0, hi; lo < g.n && !st; lo = hi) {
		hi = deg_chunk_end(&g, lo);
		const int64_t cnt = deg_off(&g, hi) - deg_off(&g, lo);
		rows_edges(o, &x, &g, lo, hi, scratch, ss, src, dst);
		st = burrow_writer_relation_add(w, reverse ? dst : src, reverse ? src : dst, (size_t)cnt);
		if (o->progress)
			o->progress(o->progress_user, name, (uint64_t)deg_off(&g, hi), (uint64_t)g.m);
	}
	if (!st)
		st = burrow_writer_relation_end(w);
	bw_free(g.pre);
	bw_free(src);
	bw_free(dst);
	bw_free(scratch);
	return st;
}

/* ---------------------------------------------------------------- nodes */

/* Classes of type t's nodes in id order: rank mod C (y [n]). */
static void type_classes(const burrow_gen_opts *o, const bw_feistel *ids, int32_t *y, int64_t n)
{
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++)
		y[v] = (int32_t)(bw_feistel_inv(ids, (uint64_t)v) % (uint64_t)o->num_classes);
}

/* Every featured type's features: x = mu_t[class] + N(0, I), class means per type. */
static int tw_features(const burrow_gen_opts *o, burrow_writer *w, const tw_sizes *z, const bw_feistel *ids)
{
	int st = 0;
	for (int t = 0; t < z->s->num_types && !st; t++) {
		if (!z->s->type[t].featured)
			continue;
		int32_t *y = bw_malloc((size_t)z->n[t] * sizeof *y);
		if (!y)
			return BURROW_E_NOMEM;
		type_classes(o, &ids[t], y, z->n[t]);
		st = bw_gen_type_features(o, w, t, y, z->n[t], o->signal, bw_key(bw_key(o->seed, TAG_TMEAN), (uint64_t)t),
					  bw_key(bw_key(o->seed, TAG_TFEAT), (uint64_t)t));
		bw_free(y);
	}
	return st;
}

/* Labels and splits of the papers (type 0): the first train + valid + test (+ unsplit
 * labelled) ranks of a second bijection are the labelled papers, cut in that order, each
 * split sorted; labels.npy holds their classes and -1 elsewhere. */
static int tw_labels(const burrow_gen_opts *o, burrow_writer *w, const tw_sizes *z, const bw_feistel *ids)
{
	const int64_t n = z->n[0], total = z->split[0] + z->split[1] + z->split[2] + z->split[3];
	int32_t *y = bw_malloc((size_t)n * sizeof *y);
	int64_t *p = bw_malloc((size_t)BW_MAX(total, 1) * sizeof *p);
	int st = y && p ? 0 : BURROW_E_NOMEM;
	if (st)
		goto out;
	bw_feistel f;
	bw_feistel_init(&f, bw_key(o->seed, TAG_TSPLIT), (uint64_t)n);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++)
		y[v] = -1;
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t i = 0; i < total; i++) {
		p[i] = (int64_t)bw_feistel_fwd(&f, (uint64_t)i);
		y[p[i]] = (int32_t)(bw_feistel_inv(&ids[0], (uint64_t)p[i]) % (uint64_t)o->num_classes);
	}
	if ((st = burrow_writer_put_labels(w, y, n, o->num_classes)))
		goto out;
	for (int64_t s = 0, lo = 0; s < 3 && !st; lo += z->split[s++]) {
		bw_sort_i64(p + lo, z->split[s]);
		st = burrow_writer_put_split(w, (int)s, p + lo, z->split[s]);
	}
out:
	bw_free(y);
	bw_free(p);
	return st;
}

/* ---------------------------------------------------------------- the twin */

/* Types, target, each relation and its reverse, features, labels and splits into w. */
static int tw_write(const burrow_gen_opts *o, burrow_writer *w, const tw_sizes *z)
{
	bw_feistel ids[TW_MAX_TYPES];
	int st = 0, t;
	for (int i = 0; i < z->s->num_types && !st; i++) {
		bw_feistel_init(&ids[i], bw_key(bw_key(o->seed, TAG_TPERM), (uint64_t)i), (uint64_t)z->n[i]);
		st = burrow_writer_add_type(w, z->s->type[i].name, z->n[i], &t);
	}
	if (!st)
		st = burrow_writer_set_target(w, 0);
	for (int r = 0; r < z->s->num_rels && !st; r++)
		if (!(st = tw_relation(o, w, z, ids, r, false)))
			st = tw_relation(o, w, z, ids, r, true);
	if (!st)
		st = tw_features(o, w, z, ids);
	if (!st)
		st = tw_labels(o, w, z, ids);
	return st;
}

int bw_gen_typed(const burrow_gen_opts *o, const char *dir)
{
	tw_sizes z;
	tw_size(o, &z);
	int st = tw_check(o, &z);
	if (st)
		return st;
	burrow_writer *w = NULL;
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = o->overwrite;
	if ((st = burrow_writer_open(&w, dir, z.s->kind, &wo)))
		return st;
	char source[512];
	snprintf(source, sizeof source,
		 "{\"generator\": \"%s\", \"seed\": %llu, \"fraction\": %.17g, \"homophily\": %.17g, \"num_classes\": %d, "
		 "\"feat_dim\": %lld, \"feat_dtype\": \"%s\", \"signal\": %.17g}",
		 z.s->kind, (unsigned long long)o->seed, o->fraction, o->homophily, o->num_classes, (long long)o->feat_dim,
		 burrow_dtype_name(o->feat_dtype), o->signal);
	if (!(st = tw_write(o, w, &z)))
		st = burrow_writer_set_source(w, source);
	if (st) {
		burrow_writer_abort(w);
		return st;
	}
	if ((st = burrow_writer_commit(w)))
		return st;
	return tw_fill(o, dir, false);
}
