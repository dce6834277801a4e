/* coarsen.c: one level of coarsening for graphs beyond METIS: size-constrained label
 * propagation streamed over the graph, then contraction into a weighted coarse graph in
 * memory, gathered one coarse-id range at a time so the buffer stays within its budget.
 *
 * Label propagation visits rows in order, in chunks: each chunk's moves are chosen in
 * parallel from the labels as they stood at the chunk's start, then applied in row order,
 * each one re-checked against the cluster weights, so the result does not depend on the
 * number of threads. */
#include "partition_internal.h"

#include <stdlib.h>
#include <string.h>

void bw_level_free(bw_level *l)
{
	if (!l)
		return;
	bw_free(l->indptr);
	bw_free(l->indices);
	bw_free(l->adjwgt);
	bw_free(l->vwgt);
	bw_free(l->cmap);
	memset(l, 0, sizeof *l);
}

/* A small open-addressing map from cluster id to connection weight, one per thread. */
typedef struct acc {
	int32_t *key;
	int64_t *val;
	int32_t *used;    /* slots in use, to reset them */
	int64_t cap, nused;
} acc;

static void acc_free(acc *a)
{
	bw_free(a->key);
	bw_free(a->val);
	bw_free(a->used);
	memset(a, 0, sizeof *a);
}

/* Room for a row of deg entries (capacity a power of two, at least twice deg). */
static bool acc_reserve(acc *a, int64_t deg)
{
	int64_t want = 64;
	while (want < 2 * deg)
		want *= 2;
	if (want <= a->cap)
		return true;
	acc_free(a);
	a->key = bw_malloc((size_t)want * sizeof *a->key);
	a->val = bw_malloc((size_t)want * sizeof *a->val);
	a->used = bw_malloc((size_t)want * sizeof *a->used);
	if (!a->key || !a->val || !a->used) {
		acc_free(a);
		return false;
	}
	for (int64_t i = 0; i < want; i++)
		a->key[i] = -1;
	a->cap = want;
	return true;
}

static void acc_add(acc *a, int32_t k, int64_t w)
{
	uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
	int64_t i = (int64_t)(h >> 20) & (a->cap - 1);
	while (a->key[i] != k && a->key[i] != -1)
		i = (i + 1) & (a->cap - 1);
	if (a->key[i] == -1) {
		a->key[i] = k;
		a->val[i] = 0;
		a->used[a->nused++] = (int32_t)i;
	}
	a->val[i] += w;
}

static void acc_clear(acc *a)
{
	for (int64_t i = 0; i < a->nused; i++)
		a->key[a->used[i]] = -1;
	a->nused = 0;
}

static bool fits(const bw_pgraph *g, const int64_t *cw, int64_t c, int64_t v, const int64_t *maxw)
{
	for (int k = 0; k < g->ncon; k++) {
		int64_t w = bw_pg_vw(g, v, k);
		if (w && cw[c * g->ncon + k] + w > maxw[k])
			return false;
	}
	return true;
}

#define ISOLATED (-2)
#define STAY (-1)

/* The cluster v should join, STAY, or ISOLATED when v has no neighbor. */
static int32_t choose(const bw_pgraph *g, int64_t v, const int32_t *cl, const int64_t *cw, const int64_t *maxw,
		      bool ties, uint64_t key, acc *a)
{
	int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1;
	if (!acc_reserve(a, hi - j))
		return STAY;
	bool any = false;
	/* cl[u] is a cache miss on a large graph, and the probe that follows depends on it:
	 * ask for the cluster of the neighbor PREFETCH entries ahead so the misses overlap */
	for (int64_t q = j; q < BW_MIN(hi, j + PREFETCH); q++)
		__builtin_prefetch(&cl[bw_pg_nbr(g, q)]);
	while (bw_pg_next(g, v, &j, hi, &u, &prev)) {
		if (j + PREFETCH < hi)
			__builtin_prefetch(&cl[bw_pg_nbr(g, j + PREFETCH)]);
		acc_add(a, cl[u], bw_pg_ewgt(g, j - 1));
		any = true;
	}
	if (!any)
		return ISOLATED;
	const int32_t own = cl[v];
	int64_t own_w = 0, best_w = 0;
	int32_t best = STAY;
	uint64_t best_h = 0;
	for (int64_t i = 0; i < a->nused; i++) /* the clusters' weights, read by fits() */
		__builtin_prefetch(&cw[(int64_t)a->key[a->used[i]] * g->ncon]);
	for (int64_t i = 0; i < a->nused; i++) {
		int32_t c = a->key[a->used[i]];
		int64_t w = a->val[a->used[i]];
		if (c == own) {
			own_w = w;
			continue;
		}
		uint64_t h = bw_key(key, (uint64_t)c);
		if ((w > best_w || (w == best_w && h > best_h)) && fits(g, cw, c, v, maxw)) {
			best = c;
			best_w = w;
			best_h = h;
		}
	}
	acc_clear(a);
	if (best == STAY)
		return STAY;
	/* on a tie, join the heavier cluster: on graphs without communities plain label
	 * propagation stops at clusters of a few nodes, this lets them keep growing */
	if (ties && best_w == own_w && cw[(int64_t)best * g->ncon] > cw[(int64_t)own * g->ncon])
		return best;
	return best_w > own_w ? best : STAY;
}

/* Label propagation: cl[v] becomes v's cluster, an id in [0, n). */
static int lp_cluster(const bw_pgraph *g, const bw_coarsen_opts *o, int32_t *cl)
{
	const int64_t *maxw = o->maxw;
	const int passes = o->passes, threads = o->threads;
	const uint64_t seed = o->seed;
	const int64_t n = g->n;
	const int ncon = g->ncon, nt = bw_threads(threads);
	const int64_t chunk = BW_MAX(256, BW_MIN(BW_CHUNK, n / 256));
	int64_t *cw = bw_malloc((size_t)(n ? n : 1) * (size_t)ncon * sizeof *cw);
	int32_t *csize = bw_malloc((size_t)(n ? n : 1) * sizeof *csize);
	int32_t *prop = bw_malloc((size_t)chunk * sizeof *prop);
	acc *accs = bw_calloc((size_t)nt, sizeof *accs);
	int st = 0;
	if (!cw || !csize || !prop || !accs) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	bw_advise_huge(cl, (size_t)n * sizeof *cl); /* both read at random, per edge */
	bw_advise_huge(cw, (size_t)n * (size_t)ncon * sizeof *cw);
	for (int64_t v = 0; v < n; v++) {
		cl[v] = (int32_t)v;
		csize[v] = 1;
		for (int k = 0; k < ncon; k++)
			cw[v * ncon + k] = bw_pg_vw(g, v, k);
	}
	for (int pass = 0; pass < passes; pass++) {
		int64_t moves = 0;
		bool nomem = false;
		const uint64_t pkey = bw_key(seed, (uint64_t)pass);
		bw_stream s;
		for (bw_stream_begin(&s, g); bw_stream_next(&s, n, chunk);) {
			const int64_t a = s.a, b = s.b;
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
			for (int64_t v = a; v < b; v++) {
				acc *ac = &accs[omp_get_thread_num()];
				prop[v - a] = choose(g, v, cl, cw, maxw, o->ties, bw_key(pkey, (uint64_t)v), ac);
				if (prop[v - a] == STAY && !ac->cap)
					__atomic_store_n(&nomem, true, __ATOMIC_RELAXED);
			}
			if (nomem) {
				st = BURROW_E_NOMEM;
				goto out;
			}
			for (int64_t v = a; v < b; v++) {
				int32_t c = prop[v - a], own = cl[v];
				if (c == ISOLATED) {
					cl[v] = -1; /* no neighbors: left out of the coarse graph */
					continue;
				}
				if (c == STAY || c == own || csize[c] == 0 || !fits(g, cw, c, v, maxw))
					continue;
				for (int k = 0; k < ncon; k++) {
					int64_t w = bw_pg_vw(g, v, k);
					cw[(int64_t)own * ncon + k] -= w;
					cw[(int64_t)c * ncon + k] += w;
				}
				csize[own]--;
				csize[c]++;
				cl[v] = c;
				moves++;
			}
		}
		bw_log(BURROW_LOG_DEBUG, "partition: label propagation pass %d: %lld moves", pass, (long long)moves);
		if (moves < n / 200 + 1)
			break;
	}
out:
	for (int t = 0; accs && t < nt; t++)
		acc_free(&accs[t]);
	bw_free(accs);
	bw_free(prop);
	bw_free(csize);
	bw_free(cw);
	return st;
}

/* Heavy-edge matching: each unmatched node, in row order, pairs with the unmatched neighbor
 * joined by the heaviest edge (ties: the lighter neighbor) whose merged weight fits maxw.
 * Nodes of degree 2 at most left over that share their heaviest neighbor are then paired
 * with each other (the leaves of one hub, which plain matching leaves alone on skewed
 * graphs). cl[v] gets the smaller id of v's pair, -1 when v has no neighbor. */
static int hem_match(const bw_pgraph *g, const bw_coarsen_opts *o, int32_t *cl)
{
	const int64_t n = g->n;
	const int ncon = g->ncon;
	int32_t *mate = cl; /* -1 while unmatched */
	int32_t *anchor = bw_malloc((size_t)(n ? n : 1) * sizeof *anchor);
	int32_t *wait = bw_malloc((size_t)(n ? n : 1) * sizeof *wait);
	if (!anchor || !wait) {
		bw_free(anchor);
		bw_free(wait);
		return BURROW_E_NOMEM;
	}
	for (int64_t v = 0; v < n; v++)
		mate[v] = wait[v] = -1;
	bw_stream s;
	bw_stream_begin(&s, g);
	for (int64_t v = 0; v < n; v++) {
		int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1, best = -1, best_w = 0, heavy = -1,
			heavy_w = 0;
		while (bw_pg_next(g, v, &j, hi, &u, &prev)) {
			int64_t w = bw_pg_ewgt(g, j - 1);
			if (w > heavy_w) {
				heavy = u;
				heavy_w = w;
			}
			if (mate[v] >= 0 || mate[u] >= 0 || w < best_w)
				continue;
			if (w == best_w && bw_pg_vw(g, u, 0) >= bw_pg_vw(g, best, 0))
				continue;
			bool ok = true;
			for (int c = 0; c < ncon && ok; c++)
				ok = bw_pg_vw(g, v, c) + bw_pg_vw(g, u, c) <= o->maxw[c];
			if (ok) {
				best = u;
				best_w = w;
			}
		}
		anchor[v] = (int32_t)heavy;
		if (mate[v] < 0 && best >= 0) {
			mate[v] = (int32_t)best;
			mate[best] = (int32_t)v;
		}
		if ((v & (BW_CHUNK - 1)) == BW_CHUNK - 1)
			bw_stream_release(&s, v + 1);
	}
	/* leftovers meet at their heaviest neighbor (degree 2 at most, as METIS's 2-hop matching) */
	for (int64_t v = 0; v < n; v++) {
		const int64_t a = anchor[v];
		if (mate[v] >= 0 || a < 0 || g->indptr[v + 1] - g->indptr[v] > 2)
			continue;
		const int64_t other = wait[a];
		bool ok = other >= 0;
		for (int c = 0; c < ncon && ok; c++)
			ok = bw_pg_vw(g, v, c) + bw_pg_vw(g, other, c) <= o->maxw[c];
		if (ok) {
			mate[v] = (int32_t)other;
			mate[other] = (int32_t)v;
			wait[a] = -1;
		} else {
			wait[a] = (int32_t)v;
		}
	}
	for (int64_t v = 0; v < n; v++)
		cl[v] = anchor[v] < 0 ? -1 : mate[v] >= 0 && mate[v] < v ? mate[v] : (int32_t)v;
	bw_free(anchor);
	bw_free(wait);
	return 0;
}

/* Gather the rows of coarse nodes [ca, cb) into buf (one streamed pass over g), each row
 * sorted by neighbor with repeats added up; cur[c] gets row c's combined length. */
static void gather_range(const bw_pgraph *g, const int32_t *cmap, int64_t ca, int64_t cb, const int64_t *cnt,
			 int64_t *cur, uint64_t *buf, int nt)
{
	const int64_t base = cnt[ca];
	for (int64_t c = ca; c < cb; c++)
		cur[c] = cnt[c] - base;
	bw_stream s;
	bw_stream_begin(&s, g);
	for (int64_t a = 0; a < g->n; a += BW_CHUNK) {
		const int64_t b = BW_MIN(g->n, a + BW_CHUNK);
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
		for (int64_t v = a; v < b; v++) {
			const int64_t cv = cmap[v];
			if (cv < ca || cv >= cb)
				continue;
			int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1;
			while (bw_pg_next(g, v, &j, hi, &u, &prev)) {
				if (cmap[u] == cv)
					continue;
				int64_t w = BW_MIN(bw_pg_ewgt(g, j - 1), INT32_MAX);
				int64_t slot = __atomic_fetch_add(&cur[cv], 1, __ATOMIC_RELAXED);
				buf[slot] = (uint64_t)cmap[u] << 32 | (uint64_t)w;
			}
		}
		bw_stream_release(&s, b);
	}
#pragma omp parallel for schedule(dynamic, 64) num_threads(nt)
	for (int64_t c = ca; c < cb; c++) {
		uint64_t *r = buf + (cnt[c] - base);
		int64_t len = cnt[c + 1] - cnt[c], k = 0;
		bw_sort_u64(r, len); /* a row of (neighbor << 32 | weight) keys */
		for (int64_t i = 0; i < len; i++) {
			if (k && (r[k - 1] >> 32) == (r[i] >> 32)) {
				uint64_t w = (r[k - 1] & 0xffffffffu) + (r[i] & 0xffffffffu);
				r[k - 1] = (r[k - 1] & ~(uint64_t)0xffffffffu) | BW_MIN(w, (uint64_t)INT32_MAX);
			} else {
				r[k++] = r[i];
			}
		}
		cur[c] = k;
	}
}

/* The end of the coarse-id range starting at ca whose rows fit the buffer. */
static int64_t range_end(const int64_t *cnt, int64_t ca, int64_t nc, int64_t cap)
{
	int64_t cb = ca;
	while (cb < nc && cnt[cb + 1] - cnt[ca] <= cap)
		cb++;
	return cb;
}

#define HIST 1024 /* coarse edge weights counted exactly below this */

/* Contract g by cmap (n -> nc) into out, gathering rows of one coarse-id range per pass.
 * When the coarse graph would hold more than max_entries entries (0: no limit), only its
 * heaviest edges are kept: those of weight >= a threshold found by a counting run. The
 * threshold is symmetric, so the coarse graph stays symmetric. */
static int contract(const bw_pgraph *g, const int32_t *cmap, int64_t nc, int threads, size_t buf_bytes,
		    int64_t max_entries, bw_level *out)
{
	const int64_t n = g->n;
	const int ncon = g->ncon, nt = bw_threads(threads);
	int64_t *cnt = bw_calloc((size_t)nc + 1, sizeof *cnt);
	int64_t *cur = NULL, *hist = NULL;
	uint64_t *buf = NULL;
	int64_t ocap = 0, om = 0, thresh = 1;
	int st = BURROW_E_NOMEM;

	out->indptr = bw_calloc((size_t)nc + 1, sizeof *out->indptr);
	out->vwgt = bw_calloc((size_t)(nc ? nc : 1) * (size_t)ncon, sizeof *out->vwgt);
	if (!cnt || !out->indptr || !out->vwgt)
		goto out;
	for (int64_t v = 0; v < n; v++)
		for (int k = 0; cmap[v] >= 0 && k < ncon; k++)
			out->vwgt[(int64_t)cmap[v] * ncon + k] += bw_pg_vw(g, v, k);
	/* entries leaving each coarse node before combining: the buffer's upper bound */
	bw_stream s;
	for (bw_stream_begin(&s, g); bw_stream_next(&s, n, BW_CHUNK);) {
#pragma omp parallel for schedule(dynamic, 256) num_threads(nt)
		for (int64_t v = s.a; v < s.b; v++) {
			int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1, c = 0;
			while (bw_pg_next(g, v, &j, hi, &u, &prev))
				c += cmap[u] != cmap[v];
			if (c && cmap[v] >= 0)
				__atomic_fetch_add(&cnt[cmap[v] + 1], c, __ATOMIC_RELAXED);
		}
	}
	int64_t maxrow = 0;
	for (int64_t c = 0; c < nc; c++) {
		maxrow = BW_MAX(maxrow, cnt[c + 1]);
		cnt[c + 1] += cnt[c];
	}
	int64_t cap = BW_MAX((int64_t)(buf_bytes / sizeof *buf), BW_MAX(maxrow, (int64_t)1 << 16));
	cap = BW_MIN(cap, BW_MAX(cnt[nc], 1));
	buf = bw_malloc((size_t)cap * sizeof *buf);
	cur = bw_malloc((size_t)(nc ? nc : 1) * sizeof *cur);
	if (!buf || !cur)
		goto out;
	if (max_entries && cnt[nc] > max_entries) {
		/* count the combined entries by weight, then keep the heaviest that fit */
		hist = bw_calloc(HIST + 1, sizeof *hist);
		if (!hist)
			goto out;
		for (int64_t ca = 0; ca < nc;) {
			const int64_t cb = range_end(cnt, ca, nc, cap);
			gather_range(g, cmap, ca, cb, cnt, cur, buf, nt);
			for (int64_t c = ca; c < cb; c++)
				for (int64_t i = 0; i < cur[c]; i++)
					hist[BW_MIN(buf[cnt[c] - cnt[ca] + i] & 0xffffffffu, (uint64_t)HIST)]++;
			ca = cb;
		}
		int64_t keep = hist[HIST];
		for (thresh = HIST; thresh > 1 && keep + hist[thresh - 1] <= max_entries; thresh--)
			keep += hist[thresh - 1];
		ocap = keep;
		if (thresh > 1)
			bw_log(BURROW_LOG_INFO,
			       "partition: the coarse graph keeps its %lld edges of weight >= %lld to fit the memory budget",
			       (long long)keep, (long long)thresh);
	}
	/* the output at its exact size when counted, else at its upper bound, shrunk at the end */
	if (!hist)
		ocap = cnt[nc];
	out->indices = bw_malloc((size_t)BW_MAX(ocap, 1) * sizeof *out->indices);
	out->adjwgt = bw_malloc((size_t)BW_MAX(ocap, 1) * sizeof *out->adjwgt);
	if (!out->indices || !out->adjwgt)
		goto out;
	for (int64_t ca = 0; ca < nc;) {
		const int64_t cb = range_end(cnt, ca, nc, cap);
		gather_range(g, cmap, ca, cb, cnt, cur, buf, nt);
		for (int64_t c = ca; c < cb; c++) {
			uint64_t *r = buf + (cnt[c] - cnt[ca]);
			int64_t k = 0;
			for (int64_t i = 0; i < cur[c]; i++)
				if ((int64_t)(r[i] & 0xffffffffu) >= thresh)
					r[k++] = r[i];
			cur[c] = k;
		}
		for (int64_t c = ca; c < cb; c++) {
			const uint64_t *r = buf + (cnt[c] - cnt[ca]);
			out->indptr[c] = om;
			for (int64_t i = 0; i < cur[c]; i++) {
				out->indices[om] = (int32_t)(r[i] >> 32);
				out->adjwgt[om++] = (int32_t)(r[i] & 0xffffffffu);
			}
		}
		ca = cb;
	}
	out->indptr[nc] = om;
	BW_ASSERT(om <= ocap);
	if (om < ocap && om > 0) { /* give back what combining saved */
		int32_t *ni = bw_realloc(out->indices, (size_t)om * sizeof *ni);
		if (ni)
			out->indices = ni;
		int32_t *nw = bw_realloc(out->adjwgt, (size_t)om * sizeof *nw);
		if (nw)
			out->adjwgt = nw;
	}
	out->g = (bw_pgraph){.n = nc, .m = om, .indptr = out->indptr, .indices = out->indices, .width = 4,
			     .adjwgt = out->adjwgt, .ncon = ncon, .vwgt = out->vwgt};
	memcpy(out->g.con_kind, g->con_kind, sizeof g->con_kind);
	st = 0;
out:
	bw_free(hist);
	bw_free(buf);
	bw_free(cur);
	bw_free(cnt);
	return st;
}

int bw_coarsen_level(const bw_pgraph *g, const bw_coarsen_opts *o, bw_level *out)
{
	const int64_t n = g->n;
	int32_t *remap = NULL;
	int st;

	memset(out, 0, sizeof *out);
	out->cmap = bw_malloc((size_t)(n ? n : 1) * sizeof *out->cmap);
	if (!out->cmap)
		return BURROW_E_NOMEM;
	if ((st = o->match ? hem_match(g, o, out->cmap) : lp_cluster(g, o, out->cmap)))
		goto fail;
	/* number the clusters densely, in order of their first node */
	remap = bw_malloc((size_t)(n ? n : 1) * sizeof *remap);
	if (!remap) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	for (int64_t v = 0; v < n; v++)
		remap[v] = -1;
	int64_t nc = 0;
	for (int64_t v = 0; v < n; v++) {
		int32_t c = out->cmap[v];
		if (c < 0)
			continue; /* isolated: placed as a filler when the partition is projected back */
		if (remap[c] < 0)
			remap[c] = (int32_t)nc++;
		out->cmap[v] = remap[c];
	}
	bw_free(remap);
	remap = NULL;
	if ((st = contract(g, out->cmap, nc, o->threads, o->buf_bytes, o->max_entries, out)))
		goto fail;
	return 0;
fail:
	bw_free(remap);
	bw_level_free(out);
	return st;
}
