/* sample.c: the sampling kernel: one batch, layer by layer, OpenMP over its nodes.
 *
 * Each layer step takes the batch's current node set (the destinations), draws every
 * destination's neighbors into packed items (global id << eb | edge position), scatters
 * the items into buckets by the top digit of the id, and numbers each bucket's distinct
 * ids in increasing order beside the node set sorted by global id: an id that is already
 * a node keeps its local id, any other is a new source node, numbered after the
 * destinations in increasing global id. Every choice is a function of the data and the
 * keys, so the result does not depend on how the work is split between threads. */
#include "labor_star.h"
#include "sampler_internal.h"

#include <stdlib.h>
#include <string.h>

#define RADIX_BITS 11
#define DRAW_PAR_MIN 8192     /* a layer expected to draw fewer edges runs on one thread */
#define NUMBER_PAR_MIN 16384  /* fewer drawn edges are numbered by one thread */
#define ROWS_PAR_MIN 8192     /* fewer destinations have their degrees read by one thread */
#define BITMAP_BITS 16        /* buckets whose ids differ in at most this many low bits are
                                 numbered with a bitmap, wider ones by sorting */
#define DRAW_CHUNK 64  /* rows a thread takes at a time */
#define DRAW_LAG 6     /* rows between drawing a row's picks and reading them */

/* Bits needed to hold every value in [0, x]. */
static int bits_for(uint64_t x) { return x ? 64 - __builtin_clzll(x) : 0; }

void bw_sampled_free_arrays(bw_sampled *b)
{
	bw_free(b->nodes);
	b->nodes = NULL;
	b->nodes_cap = 0;
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		bw_free(b->indptr[l]);
		bw_free(b->indices[l]);
		bw_free(b->eids[l]);
		bw_free(b->ew[l]);
		b->indptr[l] = NULL;
		b->indices[l] = NULL;
		b->eids[l] = NULL;
		b->ew[l] = NULL;
		b->indptr_cap[l] = b->indices_cap[l] = b->eids_cap[l] = b->ew_cap[l] = 0;
	}
}

int bw_sampled_reserve(bw_sampled *b, int l, int64_t nd, int64_t E, int64_t nodes)
{
	int st;
	if ((st = bw_grow(&b->indptr[l], &b->indptr_cap[l], (size_t)nd + 1, sizeof(int64_t), false)) ||
	    (st = bw_grow(&b->indices[l], &b->indices_cap[l], (size_t)BW_MAX(E, 1), sizeof(int32_t), false)))
		return st;
	return bw_grow(&b->nodes, &b->nodes_cap, (size_t)BW_MAX(nodes, 1), sizeof(int64_t), true);
}

void bw_sample_ctx_free(bw_sample_ctx *c)
{
	if (!c)
		return;
	bw_free(c->items);
	bw_free(c->tmp);
	bw_free(c->srt);
	bw_free(c->row);
	bw_free(c->sg);
	bw_free(c->sg2);
	bw_free(c->sl);
	bw_free(c->sl2);
	bw_free(c->hist);
	bw_free(c->off);
	bw_free(c->bstart);
	bw_free(c->bnew);
	bw_free(c->ls_src);
	bw_free(c->ls_off);
	bw_free(c->ls_c);
	bw_free(c->ls_node);
	bw_free(c->ls_buf);
	bw_free(c->ls_chunk);
	if (c->rows)
		for (int t = 0; t < c->threads; t++) {
			bw_free(c->rows[t].pos);
			bw_free(c->rows[t].table);
			bw_free(c->rows[t].bits);
			bw_free(c->rows[t].lid);
		}
	bw_free(c->rows);
	memset(c, 0, sizeof *c);
}

int bw_sample_ctx_init(bw_sample_ctx *c, int threads, int max_fanout)
{
	memset(c, 0, sizeof *c);
	c->threads = threads;
	c->max_fanout = max_fanout;
	c->hist = bw_malloc((size_t)threads * ((size_t)1 << RADIX_BITS) * sizeof *c->hist);
	c->off = bw_malloc((size_t)threads * (((size_t)1 << RADIX_BITS) + 1) * sizeof *c->off);
	c->bstart = bw_malloc((size_t)threads * (((size_t)1 << RADIX_BITS) + 1) * sizeof *c->bstart);
	c->bnew = bw_malloc((((size_t)1 << RADIX_BITS) + 1) * sizeof *c->bnew);
	c->rows = bw_calloc((size_t)threads, sizeof *c->rows);
	if (!c->hist || !c->off || !c->bstart || !c->bnew || !c->rows)
		goto out_nomem;
	if (max_fanout > BW_SMALL_FANOUT) {
		const size_t cap = bw_draw_table_cap(max_fanout);
		for (int t = 0; t < threads; t++) {
			c->rows[t].pos = bw_malloc((size_t)max_fanout * sizeof(int64_t));
			c->rows[t].table = bw_malloc(cap * sizeof(int64_t));
			c->rows[t].table_cap = cap;
			if (!c->rows[t].pos || !c->rows[t].table)
				goto out_nomem;
		}
	}
	return 0;
out_nomem:
	bw_sample_ctx_free(c);
	return BURROW_E_NOMEM;
}

/* ------------------------------------------------------------ drawing one row */


/* Stage one of drawing row (start s, degree d) with k picks into out[0, k): a sampled
 * row gets the absolute positions of its picks, and everything it will read is
 * prefetched. A row taken whole (k == d) only gets its start prefetched. */
static inline void draw_row(const void *gi, bool w4, int64_t s, int64_t d, int64_t k, uint64_t *out, uint64_t nkey,
			    bw_row_scratch *rs)
{
	const int sz = w4 ? 4 : 8;
	const char *base = (const char *)gi;
	if (k == d) {
		if (d)
			__builtin_prefetch(base + s * sz);
		return;
	}
	bw_rng r;
	bw_rng_seed(&r, nkey);
	int64_t small[BW_SMALL_FANOUT];
	int64_t *pos = k <= BW_SMALL_FANOUT ? small : rs->pos;
	bw_draw(&r, d, k, pos, rs->table);
	for (int64_t j = 0; j < k; j++) {
		out[j] = (uint64_t)(s + pos[j]);
		__builtin_prefetch(base + (s + pos[j]) * sz);
	}
}

/* Stage two: replace row positions by packed items (neighbor id << eb | edge position),
 * counting the items per bucket (bits [shift, shift + digit) of the item) in h; eid (NULL:
 * not wanted) gets each pick's CSR position. */
static inline void resolve_row(const void *gi, bool w4, int64_t s, int64_t d, int64_t off, int64_t k, uint64_t *out,
			       int eb, size_t *h, int shift, uint64_t mask, int64_t *eid)
{
	for (int64_t j = 0; j < k; j++) {
		const int64_t pos = k == d ? s + j : (int64_t)out[j];
		const uint64_t x = bw_csr_id(gi, w4, pos) << eb | (uint64_t)(off + j);
		if (eid)
			eid[j] = pos;
		out[j] = x;
		h[(x >> shift) & mask]++;
	}
}

/* ------------------------------------------------------------ LABOR-* */

/* Row i's c under the current pi (labor_star.h's bw_ls_c; buf [d] its scratch). */
static void ls_c_row(bw_sample_ctx *c, const bw_ls_layer *L, int64_t i, bool ones, double *buf)
{
	c->ls_c[i] = bw_ls_c(c->ls_src + c->ls_off[i], L->row[2 * i + 1], L->k, c->ls_node, ones, buf);
}

/* Every row's c (ls_c_row), by every thread t of the region, each with its part of ls_buf. */
static void ls_cs(bw_sample_ctx *c, const bw_ls_layer *L, bool ones, int t)
{
	double *buf = c->ls_buf + (size_t)t * (size_t)L->dmax;
#pragma omp for schedule(dynamic, BW_LS_ROWS)
	for (int64_t i = 0; i < L->nd; i++)
		ls_c_row(c, L, i, ones, buf);
}

/* LABOR-*'s fixed point (Balin and Catalyurek, NeurIPS 2023, section 3.2) over the layer's m
 * sources: from pi = 1 (every row's c then k / d: LABOR-0), each round sets pi_s to max over
 * the rows reading s of c pi_s (how likely s is in the batch), then solves every row's c
 * again: a source some row is likely to take becomes likelier for every row, and rows
 * concentrate on the same sources. At most `rounds` rounds; the last is the one whose expected
 * distinct sources, sum of min(1, pi), fell by less than BW_LS_TOL. Every thread t of the region:
 * the sources by chunks, each source's largest c in one run of its neighbors (c is small: in
 * cache); their sum by one thread in source order while the others solve the rows again (of
 * nt == 1 threads, in the same pass). */
static void ls_rounds(bw_sample_ctx *c, bw_ls_layer *L, int rounds, int t, int nt)
{
	bw_ls_node *nodes = c->ls_node;
	const uint64_t *x = L->x;
	const int eb = L->eb;
	double prev = INFINITY;
#pragma omp for schedule(static)
	for (int64_t u = 0; u < L->m; u++)
		nodes[u].pi = 1.0;
	ls_cs(c, L, true, t);
	for (int it = 0; it < rounds; it++) {
		double ex = 0;
#pragma omp for schedule(dynamic, 1)
		for (int64_t h = 0; h < L->nch; h++) {
			for (int64_t q = L->q0[h], q0 = q, u = L->u0[h]; q < L->q0[h + 1]; q++) {
				if (q + 1 == L->q0[h + 1] || x[q + 1] >> eb != x[q] >> eb) {
					bw_ls_pi(&nodes[u], c->ls_c, L->erow, q0, q + 1);
					if (nt == 1) /* the chunks in order */
						ex += bw_ls_expect(nodes[u].pi);
					u++;
					q0 = q + 1;
				}
			}
		}
#pragma omp single nowait
		{
			if (nt > 1)
				for (int64_t u = 0; u < L->m; u++)
					ex += bw_ls_expect(nodes[u].pi);
			L->ex = ex;
		}
		ls_cs(c, L, false, t);
		if (bw_ls_last(L->ex, &prev))
			break;
	}
}

/* Stage one of a LABOR-* row (sampler_internal.h; labor_star.h's bw_ls_row). */
void bw_labor_star_row(const bw_sample_ctx *c, int64_t i, int64_t s, int64_t d, uint64_t *out, float *w)
{
	bw_ls_row(c->ls_src + c->ls_off[i], s, d, c->ls_c[i], c->ls_node, out, w);
}

/* LABOR-* step 1 (one thread): each row's offset into the block's neighbors, and room for
 * the block's scratch in nt threads. Memory: about 20 bytes per neighbor of the block's rows
 * plus 16 per distinct source, the whole rows' worth (LABOR reads them whole too), and 8 per
 * thread and entry of the largest row. */
static int ls_room(bw_sample_ctx *c, bw_ls_layer *L, int nt)
{
	const int64_t nd = L->nd, *row = L->row;
	int st;
	if ((st = bw_grow(&c->ls_off, &c->ls_off_cap, (size_t)nd + 1, sizeof(int64_t), false)))
		return st;
	int64_t F = 0, dmax = 1;
	for (int64_t i = 0; i < nd; i++) {
		c->ls_off[i] = F;
		F += row[2 * i + 1];
		dmax = BW_MAX(dmax, row[2 * i + 1]);
	}
	c->ls_off[nd] = F;
	const int eb = bits_for((uint64_t)BW_MAX(F, 1) - 1);
	if (F > INT32_MAX || L->ub + eb > 64)
		return bw_err(BURROW_E_UNSUPPORTED, "%s's rows hold %lld neighbors: too many for LABOR-*", L->who,
			      (long long)F);
	const int64_t nch = (F + BW_LS_CHUNK - 1) / BW_LS_CHUNK;
	const size_t room = (size_t)BW_MAX(F, 1);
	if ((st = bw_grow(&c->ls_c, &c->ls_c_cap, (size_t)BW_MAX(nd, 1), sizeof(double), false)) ||
	    (st = bw_grow(&c->ls_src, &c->ls_src_cap, room, sizeof(int32_t), false)) ||
	    (st = bw_grow(&c->ls_buf, &c->ls_buf_cap, (size_t)nt * (size_t)dmax, sizeof(double), false)) ||
	    (st = bw_grow(&c->ls_chunk, &c->ls_chunk_cap, 2 * ((size_t)nch + 1), sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->items, &c->items_cap, room, sizeof(uint64_t), false)) ||
	    (st = bw_grow(&c->tmp, &c->tmp_cap, room, sizeof(uint64_t), false)))
		return st;
	L->F = F;
	L->dmax = dmax;
	L->nch = nch;
	L->eb = eb;
	L->q0 = c->ls_chunk;
	L->u0 = c->ls_chunk + nch + 1;
	return 0;
}

/* LABOR-* step 2 (every thread): every row's neighbors as items (id << eb | neighbor), rows by
 * BW_LS_ROWS, the trim hook every BW_TRIM_ROWS rows. */
static void ls_gather(bw_sample_ctx *c, const bw_ls_layer *L)
{
#pragma omp for schedule(dynamic, BW_LS_ROWS)
	for (int64_t i = 0; i < L->nd; i++) {
		const int64_t s = L->row[2 * i], d = L->row[2 * i + 1], e0 = c->ls_off[i];
		for (int64_t p = 0; p < d; p++)
			c->items[e0 + p] = bw_csr_id(L->gi, L->w4, s + p) << L->eb | (uint64_t)(e0 + p);
		if (c->trim && i % BW_TRIM_ROWS == BW_TRIM_ROWS - 1)
			c->trim(c->trim_user);
	}
}

/* LABOR-* step 3 (every thread t of nt): c->items [F] sorted by bits [lo, lo + nb) with
 * bw_lsd_sort's passes, each thread counting, then placing, a range of the array, the places
 * given in the order (digit, thread): a stable sort, so the same array, in the same one of
 * items and tmp, as bw_lsd_sort's (which it returns). Two barriers a pass: each thread works
 * out its own places from every thread's counts. */
static uint64_t *ls_sort(bw_sample_ctx *c, int64_t F, int lo, int nb, int t, int nt)
{
	uint64_t *a = c->items, *tmp = c->tmp;
	if (nb <= 0 || F < 2)
		return a;
	const int passes = (nb + RADIX_BITS - 1) / RADIX_BITS, digit = (nb + passes - 1) / passes;
	const size_t nbkt = (size_t)1 << digit;
	const uint64_t mask = nbkt - 1;
	const int64_t i0 = F * t / nt, i1 = F * (t + 1) / nt;
	size_t *h = c->hist + (size_t)t * nbkt;
	int64_t *cur = c->off + (size_t)t * nbkt;
	for (int p = 0; p < passes; p++) {
		const int shift = lo + p * digit;
		memset(h, 0, nbkt * sizeof *h);
		for (int64_t i = i0; i < i1; i++)
			h[(a[i] >> shift) & mask]++;
#pragma omp barrier
		int64_t base = 0;
		for (size_t d = 0; d < nbkt; d++) {
			cur[d] = base;
			for (int tt = 0; tt < nt; tt++) {
				const int64_t n = (int64_t)c->hist[(size_t)tt * nbkt + d];
				cur[d] += tt < t ? n : 0;
				base += n;
			}
		}
		for (int64_t i = i0; i < i1; i++)
			tmp[cur[(a[i] >> shift) & mask]++] = a[i];
#pragma omp barrier
		uint64_t *s = a;
		a = tmp;
		tmp = s;
	}
	return a;
}

/* Where chunk h of the sorted neighbors x [F] starts: the first neighbor of a source at or
 * after h BW_LS_CHUNK (F when there is none). */
static int64_t ls_chunk_start(const bw_ls_layer *L, int64_t h)
{
	const uint64_t *x = L->x;
	int64_t lo = h * BW_LS_CHUNK, hi = L->F;
	if (lo == 0 || lo >= hi)
		return BW_MIN(lo, hi);
	const uint64_t prev = x[lo - 1] >> L->eb;
	while (lo < hi) { /* the first q >= lo whose source is above prev */
		const int64_t mid = lo + (hi - lo) / 2;
		if (x[mid] >> L->eb > prev)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* LABOR-* step 4 (every thread): the chunks' starts and the sources starting in each, in
 * u0[h + 1] (ls_sources sums them). */
static void ls_chunks(bw_ls_layer *L)
{
#pragma omp for schedule(static)
	for (int64_t h = 0; h <= L->nch; h++)
		L->q0[h] = ls_chunk_start(L, h);
#pragma omp for schedule(static)
	for (int64_t h = 0; h < L->nch; h++) {
		int64_t n = 0;
		for (int64_t q = L->q0[h]; q < L->q0[h + 1]; q++)
			n += q == L->q0[h] || L->x[q] >> L->eb != L->x[q - 1] >> L->eb;
		L->u0[h + 1] = n;
	}
}

/* LABOR-* step 5 (one thread): the first source of each chunk, the sources' count m, room
 * for them. */
static int ls_sources(bw_sample_ctx *c, bw_ls_layer *L)
{
	L->u0[0] = 0;
	for (int64_t h = 0; h < L->nch; h++)
		L->u0[h + 1] += L->u0[h];
	L->m = L->u0[L->nch];
	return bw_grow(&c->ls_node, &c->ls_node_cap, (size_t)BW_MAX(L->m, 1), sizeof(bw_ls_node), false);
}

/* LABOR-* step 6 (every thread): each neighbor's row (rowof, by neighbor), then by chunks of
 * sources: each source's variate, each neighbor's source index and its row by source. */
static void ls_variates(bw_sample_ctx *c, const bw_ls_layer *L)
{
	const uint64_t lk = L->lk, *x = L->x;
	const int eb = L->eb;
	const uint64_t emask = eb == 64 ? ~0ull : (1ull << eb) - 1;
#pragma omp for schedule(dynamic, BW_LS_ROWS)
	for (int64_t i = 0; i < L->nd; i++)
		for (int64_t q = c->ls_off[i]; q < c->ls_off[i + 1]; q++)
			L->rowof[q] = (int32_t)i;
#pragma omp for schedule(dynamic, 1)
	for (int64_t h = 0; h < L->nch; h++)
		for (int64_t q = L->q0[h], u = L->u0[h] - 1; q < L->q0[h + 1]; q++) {
			if (q == L->q0[h] || x[q] >> eb != x[q - 1] >> eb)
				c->ls_node[++u].r = bw_ls_variate(lk, L->dep, x[q] >> eb);
			c->ls_src[x[q] & emask] = (int32_t)u;
			L->erow[q] = L->rowof[x[q] & emask];
		}
}

/* LABOR-* step 7 (every thread): each sampled row's count, as many as its variates below
 * min(1, c pi), into ip[i + 1]. */
static void ls_counts(const bw_sample_ctx *c, const bw_ls_layer *L)
{
#pragma omp for schedule(dynamic, BW_LS_ROWS)
	for (int64_t i = 0; i < L->nd; i++) {
		const int64_t d = L->row[2 * i + 1];
		if (d <= L->k)
			continue;
		L->ip[i + 1] = bw_ls_count(c->ls_src + c->ls_off[i], d, c->ls_c[i], c->ls_node);
	}
}

/* A failure of a step run by one thread, for every thread to see after its barrier. */
static void ls_fail(bw_ls_layer *L, int st)
{
	if (!st)
		return;
	snprintf(L->msg, sizeof L->msg, "%s", burrow_last_error());
	L->st = st;
}

/* LABOR-*'s preparation of a block (sampler_internal.h). */
void bw_labor_star_prep(bw_sample_ctx *c, bw_ls_layer *L, int t, int nt)
{
#pragma omp single
	ls_fail(L, ls_room(c, L, nt));
	if (L->st)
		return;
	ls_gather(c, L);
	uint64_t *x = ls_sort(c, L->F, L->eb, L->ub, t, nt);
#pragma omp single
	{
		L->x = x;
		L->rowof = (int32_t *)(x == c->items ? c->tmp : c->items);
		L->erow = L->rowof + L->F;
	}
	ls_chunks(L);
#pragma omp single
	ls_fail(L, ls_sources(c, L));
	if (L->st)
		return;
	ls_variates(c, L);
	ls_rounds(c, L, c->labor_star, t, nt);
	ls_counts(c, L);
}

/* ------------------------------------------------------------ sorting */

uint64_t *bw_lsd_sort(uint64_t *a, uint64_t *tmp, int64_t n, int lo, int nb, int maxd, size_t *h)
{
	if (nb <= 0 || n < 2)
		return a;
	const int passes = (nb + maxd - 1) / maxd, digit = (nb + passes - 1) / passes;
	const size_t nbkt = (size_t)1 << digit;
	const uint64_t mask = nbkt - 1;
	for (int p = 0; p < passes; p++) {
		const int shift = lo + p * digit;
		memset(h, 0, nbkt * sizeof *h);
		for (int64_t i = 0; i < n; i++)
			h[(a[i] >> shift) & mask]++;
		bw_exclusive_scan(h, nbkt);
		for (int64_t i = 0; i < n; i++)
			tmp[h[(a[i] >> shift) & mask]++] = a[i];
		uint64_t *t = a;
		a = tmp;
		tmp = t;
	}
	return a;
}

/* Sort one bucket src[0, n) by bits [lo, lo + nb) into dst[0, n) (src is scratch). The
 * items are distinct, so ordering small buckets by whole value is the stable order. */
static void bucket_sort(uint64_t *src, uint64_t *dst, int64_t n, int lo, int nb)
{
	if (nb <= 0 || n <= BW_ISORT_MAX) {
		memcpy(dst, src, (size_t)n * sizeof *src);
		if (nb > 0)
			bw_isort_u64(dst, n);
		return;
	}
	size_t h[256];
	const uint64_t *r = bw_lsd_sort(src, dst, n, lo, nb, 8, h);
	if (r != dst)
		memcpy(dst, r, (size_t)n * sizeof *dst);
}

/* ------------------------------------------------------------ one layer */

/* What the threads of one layer step share (set before they read it). */
typedef struct layer_job {
	bw_sample_ctx *c;
	int l;                   /* block index, for messages */
	int64_t nd;              /* destinations = nodes before the step */
	int64_t E;               /* drawn edges = items */
	int eb, rest, top;       /* item bits: edge position; id bits below the bucket digit; bucket digit */
	uint64_t *items, *tmp;   /* [E] drawn items; the items placed by bucket */
	uint64_t *srt;           /* [E] buckets numbered by sorting, sorted */
	int32_t *ind;            /* [E] the block's indices */
	int64_t *newn;           /* new node ids go here: b->nodes + nd */
	const int64_t *sg;       /* [nd] the nodes sorted by global id ... */
	const int32_t *sl;       /* ... and their local ids */
	int64_t nnew;            /* new source nodes */
	char msg[256];           /* an error met by whichever thread ran the check */
} layer_job;

/* Where each bucket starts, from every thread's counts: bs[d] = items with a smaller
 * top digit; bs[nbkt] = E. */
static void bucket_bounds(layer_job *j, int nt, int64_t *bs)
{
	const int64_t nbkt = (int64_t)1 << j->top;
	const size_t *h = j->c->hist;
	int64_t base = 0;
	for (int64_t d = 0; d < nbkt; d++) {
		bs[d] = base;
		for (int tt = 0; tt < nt; tt++)
			base += (int64_t)h[(size_t)tt * (size_t)nbkt + (size_t)d];
	}
	bs[nbkt] = j->E;
}

/* Place the items of buckets [d0, d1) in tmp, reading all the items: a thread writes
 * only the buckets it numbers afterwards, so they stay in its cache. */
static void scatter_own(layer_job *j, const int64_t *bs, int64_t d0, int64_t d1, int64_t *cur)
{
	const int shift = j->eb + j->rest;
	const uint64_t mask = ((uint64_t)1 << j->top) - 1;
	for (int64_t d = d0; d < d1; d++)
		cur[d] = bs[d];
	if (d0 == 0 && d1 == (int64_t)mask + 1) { /* every bucket: no test */
		for (int64_t i = 0; i < j->E; i++) {
			uint64_t x = j->items[i];
			j->tmp[cur[(x >> shift) & mask]++] = x;
		}
		return;
	}
	for (int64_t i = 0; i < j->E; i++) {
		uint64_t x = j->items[i];
		int64_t d = (int64_t)((x >> shift) & mask);
		if (d >= d0 && d < d1)
			j->tmp[cur[d]++] = x;
	}
}

/* Bucket d: sort by the id bits below the digit into srt, and count the ids that are
 * not nodes yet into bnew[d]. */
static void bucket_count(layer_job *j, const int64_t *bs, int64_t d)
{
	const int64_t lo = bs[d], hi = bs[d + 1], nd = j->nd;
	const uint64_t *x = j->srt;
	const int eb = j->eb;
	int64_t cnt = 0;
	bucket_sort(j->tmp + lo, j->srt + lo, hi - lo, eb, j->rest);
	if (hi > lo) {
		int64_t p = bw_lower_bound_i64(j->sg, nd, (int64_t)(x[lo] >> eb));
		for (int64_t i = lo; i < hi;) {
			const int64_t u = (int64_t)(x[i] >> eb);
			while (p < nd && j->sg[p] < u)
				p++;
			cnt += !(p < nd && j->sg[p] == u);
			while (i < hi && (int64_t)(x[i] >> eb) == u)
				i++;
		}
	}
	j->c->bnew[d] = cnt;
}

/* Bucket d, sorted into srt by bucket_count: number its ids (an existing node keeps
 * its local id, a new one gets the next id, nd + next, nd + next + 1, ..., in increasing
 * global id) and write every edge's local id. */
static void bucket_number(layer_job *j, const int64_t *bs, int64_t d, int64_t next)
{
	const int64_t lo = bs[d], hi = bs[d + 1], nd = j->nd;
	if (hi == lo)
		return;
	const uint64_t *x = j->srt;
	const int eb = j->eb;
	const uint64_t emask = eb == 64 ? ~0ull : (1ull << eb) - 1;
	int64_t p = bw_lower_bound_i64(j->sg, nd, (int64_t)(x[lo] >> eb));
	for (int64_t i = lo; i < hi;) {
		const int64_t u = (int64_t)(x[i] >> eb);
		while (p < nd && j->sg[p] < u)
			p++;
		int32_t id;
		if (p < nd && j->sg[p] == u) {
			id = j->sl[p];
		} else {
			j->newn[next] = u;
			id = (int32_t)(nd + next++);
		}
		for (; i < hi && (int64_t)(x[i] >> eb) == u; i++)
			j->ind[x[i] & emask] = id;
	}
}

/* Bucket d by bitmap (when its ids differ in at most BITMAP_BITS low bits): mark the
 * low bits of its ids in `bits`, then visit them in increasing order. Returns the count
 * of ids that are not nodes yet; with `lid`, also numbers them from nd + next (see
 * bucket_number) and writes every edge's local id. */
static int64_t bucket_bitmap(layer_job *j, const int64_t *bs, int64_t d, int64_t next, uint64_t *bits, int32_t *lid)
{
	const int64_t lo = bs[d], hi = bs[d + 1], nd = j->nd;
	if (hi == lo)
		return 0;
	const uint64_t *x = j->tmp;
	const int eb = j->eb;
	const uint64_t rmask = ((uint64_t)1 << j->rest) - 1, emask = eb == 64 ? ~0ull : (1ull << eb) - 1;
	const int64_t words = BW_MAX((int64_t)1, ((int64_t)1 << j->rest) >> 6), base = d << j->rest;
	memset(bits, 0, (size_t)words * sizeof *bits);
	for (int64_t i = lo; i < hi; i++) {
		uint64_t k = (x[i] >> eb) & rmask;
		bits[k >> 6] |= 1ull << (k & 63);
	}
	int64_t p = bw_lower_bound_i64(j->sg, nd, base), cnt = 0;
	for (int64_t w = 0; w < words; w++)
		for (uint64_t m = bits[w]; m; m &= m - 1) {
			const int64_t k = w * 64 + __builtin_ctzll(m), u = base | k;
			while (p < nd && j->sg[p] < u)
				p++;
			const bool known = p < nd && j->sg[p] == u;
			cnt += !known;
			if (!lid)
				continue;
			if (known) {
				lid[k] = j->sl[p];
			} else {
				j->newn[next] = u;
				lid[k] = (int32_t)(nd + next++);
			}
		}
	if (lid)
		for (int64_t i = lo; i < hi; i++)
			j->ind[x[i] & emask] = lid[(x[i] >> eb) & rmask];
	return cnt;
}

/* Count (number == false) or number the new nodes of bucket d: by bitmap when the
 * bucket is dense enough for the bitmap's words to be worth visiting, else by sorting
 * it (the same bucket takes the same way in both passes). */
static void bucket_work(layer_job *j, const int64_t *bs, int64_t d, bool number, int64_t next, bw_row_scratch *rs)
{
	const int64_t n = bs[d + 1] - bs[d];
	if (j->rest <= BITMAP_BITS && 4 * n >= ((int64_t)1 << j->rest) >> 6) {
		int64_t cnt = bucket_bitmap(j, bs, d, next, rs->bits, number ? rs->lid : NULL);
		if (!number)
			j->c->bnew[d] = cnt;
	} else if (number) {
		bucket_number(j, bs, d, next);
	} else {
		bucket_count(j, bs, d);
	}
}

/* Count, then number, the buckets [d0, d1) (bnew must hold every bucket's count
 * between the two: see number_range). */
static void count_range(layer_job *j, const int64_t *bs, int64_t d0, int64_t d1, bw_row_scratch *rs)
{
	for (int64_t d = d0; d < d1; d++)
		bucket_work(j, bs, d, false, 0, rs);
}

/* Number the buckets [d0, d1), their new nodes taking the places after those of the
 * buckets before d0. Returns the new nodes of all the buckets. */
static int64_t number_range(layer_job *j, const int64_t *bs, int64_t d0, int64_t d1, bw_row_scratch *rs)
{
	const int64_t nbkt = (int64_t)1 << j->top;
	int64_t next = 0, total = 0;
	for (int64_t d = 0; d < nbkt; d++) {
		next += d < d0 ? j->c->bnew[d] : 0;
		total += j->c->bnew[d];
	}
	if (j->nd + total > INT32_MAX)
		return total; /* refused by the caller */
	for (int64_t d = d0; d < d1; d++) {
		bucket_work(j, bs, d, true, next, rs);
		next += j->c->bnew[d];
	}
	return total;
}

/* Row i of the destinations: where its graph row starts, its degree, its sample size. */
static inline void read_row(const int64_t *gp, const int64_t *nodes, int64_t nd, int64_t i, int fanout, int64_t *row,
			    int64_t *ip)
{
	if (i + 16 < nd)
		__builtin_prefetch(&gp[nodes[i + 16]]);
	const int64_t v = nodes[i], s = gp[v], d = gp[v + 1] - s;
	row[2 * i] = s;
	row[2 * i + 1] = d;
	ip[i + 1] = fanout < 0 || d <= fanout ? d : fanout;
}

/* One layer step: the job its numbering shares, and what its phases read and write
 * (layer_step's parallel region shares it between the threads). */
typedef struct layer_run {
	layer_job j;
	bw_sampled *b;
	const bw_expander *ex;     /* NULL: draw from g */
	const int64_t *gp;         /* g's indptr, NULL with an expander */
	const void *gi;            /* g's indices, NULL with an expander */
	bool w4;                   /* gi holds int32 */
	int64_t num_nodes;         /* ids are in [0, num_nodes) */
	const int64_t *xip, *xids; /* the expander's rows */
	int64_t *row, *ip;         /* [2 nd] each row's graph start and degree; [nd + 1] the block's indptr */
	int64_t *eid;              /* [E] the edges' CSR positions (ctx edge_ids, no expander), else NULL */
	bool star;                 /* LABOR-* samples this layer (ctx labor_star, a fanout >= 0, no expander) */
	float *ew;                 /* [E] the edges' LABOR-* weights when star, else NULL */
	const bw_labor_dep *dep;   /* LABOR's batch dependency for this layer, or NULL */
	bw_labor_dep dep_buf;      /* what dep points to */
	int fanout;
	uint64_t lkey;
	uint64_t lk;               /* LABOR's key of the layer's variates (labor.h, bw_labor_layer) */
	int ub;                    /* bits of a node id */
	bool rows_par;             /* the rows' degrees are read by every thread */
	int64_t next_chunk;        /* the next row to draw from (atomic) */
	int64_t bad;               /* an expander's edge whose source is no node id, or -1 (atomic) */
	int st;                    /* a failure of phase 2 (j.msg has its message) */
	bw_ls_layer ls;            /* LABOR-*'s block when star */
} layer_run;

/* Phase 1, one row: row i's graph start and degree, its sample size, and the trim hook every
 * BW_TRIM_ROWS rows (indptr's pages). */
static inline void rows_one(layer_run *r, int64_t i)
{
	bw_sample_ctx *c = r->j.c;
	read_row(r->gp, r->b->nodes, r->j.nd, i, r->fanout, r->row, r->ip);
	if (c->trim && i % BW_TRIM_ROWS == BW_TRIM_ROWS - 1)
		c->trim(c->trim_user);
}

/* Phase 2 (one thread): the offsets, then room for the edges in every array the draws and
 * the numbering fill; a failure goes to r->st, its message to j.msg. */
static void layer_room(layer_run *r)
{
	layer_job *j = &r->j;
	bw_sample_ctx *c = j->c;
	bw_sampled *b = r->b;
	const int64_t nd = j->nd;
	const int l = j->l;
	int64_t *ip = r->ip;
	int st = 0;
	if (r->ls.st) { /* LABOR-*'s preparation failed */
		snprintf(j->msg, sizeof j->msg, "%s", r->ls.msg);
		r->st = r->ls.st;
		return;
	}
	if (r->ex) {
		memcpy(ip, r->xip, ((size_t)nd + 1) * sizeof *ip);
	} else {
		for (int64_t i = 0; !r->rows_par && !r->star && i < nd; i++)
			rows_one(r, i);
		ip[0] = 0;
		for (int64_t i = 0; i < nd; i++)
			ip[i + 1] += ip[i];
	}
	j->E = ip[nd];
	j->eb = bits_for((uint64_t)BW_MAX(j->E, 1) - 1);
	const size_t room = (size_t)BW_MAX(j->E, 1);
	if (r->ub + j->eb > 64)
		st = bw_err(BURROW_E_UNSUPPORTED, "sampler: block %d has %lld edges: too many for a graph of %lld nodes", l,
			    (long long)j->E, (long long)r->num_nodes);
	if (!st)
		st = bw_grow(&c->items, &c->items_cap, room, sizeof(uint64_t), false);
	if (!st)
		st = bw_grow(&c->tmp, &c->tmp_cap, room, sizeof(uint64_t), false);
	if (!st)
		st = bw_grow(&c->srt, &c->srt_cap, room, sizeof(uint64_t), false);
	if (!st)
		st = bw_grow(&b->indices[l], &b->indices_cap[l], room, sizeof(int32_t), false);
	if (!st && c->edge_ids && !r->ex)
		st = bw_grow(&b->eids[l], &b->eids_cap[l], room, sizeof(int64_t), false);
	r->eid = !st && c->edge_ids && !r->ex ? b->eids[l] : NULL;
	if (!st && r->star)
		st = bw_grow(&b->ew[l], &b->ew_cap[l], room, sizeof(float), false);
	r->ew = !st && r->star ? b->ew[l] : NULL;
	if (!st)
		st = bw_grow(&b->nodes, &b->nodes_cap, (size_t)(nd + j->E), sizeof(int64_t), true);
	for (int tt = 0; !st && tt < c->threads && j->rest <= BITMAP_BITS; tt++) {
		bw_row_scratch *rs = &c->rows[tt];
		if (!(st = bw_grow(&rs->bits, &rs->bits_cap, BW_MAX((size_t)1, ((size_t)1 << j->rest) >> 6), sizeof(uint64_t),
				false)))
			st = bw_grow(&rs->lid, &rs->lid_cap, (size_t)1 << j->rest, sizeof(int32_t), false);
	}
	if (st)
		snprintf(j->msg, sizeof j->msg, "%s", burrow_last_error());
	r->st = st;
	j->items = c->items;
	j->tmp = c->tmp;
	j->srt = c->srt;
	j->ind = b->indices[l];
	j->newn = b->nodes + nd;
}

/* Stage one of row i of a LABOR-* layer: a row of degree above the fanout is sampled
 * (labor_star_row), a row taken whole prefetched as draw_row does, its weights 1. */
static inline void star_row(const layer_run *r, int64_t i)
{
	const int64_t s = r->row[2 * i], d = r->row[2 * i + 1], e0 = r->ip[i], n = r->ip[i + 1] - e0;
	if (d > r->fanout) {
		bw_labor_star_row(r->j.c, i, s, d, r->j.items + e0, r->ew + e0);
		return;
	}
	if (d)
		__builtin_prefetch((const char *)r->gi + s * (r->w4 ? 4 : 8));
	for (int64_t q = 0; q < n; q++)
		r->ew[e0 + q] = 1.0f;
}

/* Phase 3 (every thread t): draw. Row i's picks become items ip[i] .. ip[i+1], counted per
 * bucket in this thread's histogram. Software pipelined: a row's picks are drawn and
 * prefetched DRAW_LAG rows before they are read. With an expander, its ids become the
 * items, in its order; false when one is no node id (every thread sees it after the loop's
 * barrier). */
static bool layer_draw(layer_run *r, int t)
{
	layer_job *j = &r->j;
	bw_sample_ctx *c = j->c;
	const int64_t nd = j->nd, nbkt = (int64_t)1 << j->top;
	const int64_t *nodes = r->b->nodes, *row = r->row, *ip = r->ip;
	const void *gi = r->gi;
	const bool w4 = r->w4;
	bw_row_scratch *rs = &c->rows[t];
	const int shift = j->eb + j->rest;
	const uint64_t mask = (uint64_t)nbkt - 1;
	size_t *h = c->hist + (size_t)t * (size_t)nbkt;
	memset(h, 0, (size_t)nbkt * sizeof *h);
	if (r->ex) {
		const int64_t *xids = r->xids, num_nodes = r->num_nodes;
#pragma omp for schedule(static)
		for (int64_t e = 0; e < j->E; e++) {
			const int64_t u = xids[e];
			if (u < 0 || u >= num_nodes) {
				__atomic_store_n(&r->bad, e, __ATOMIC_RELAXED);
				continue;
			}
			const uint64_t x = (uint64_t)u << j->eb | (uint64_t)e;
			j->items[e] = x;
			h[(x >> shift) & mask]++;
		}
		return __atomic_load_n(&r->bad, __ATOMIC_RELAXED) < 0;
	}
	for (int64_t drawn = 0;;) {
		const int64_t c0 = __atomic_fetch_add(&r->next_chunk, DRAW_CHUNK, __ATOMIC_RELAXED);
		if (c0 >= nd)
			break;
		const int64_t c1 = BW_MIN(nd, c0 + DRAW_CHUNK);
		if (c->trim && (drawn += c1 - c0) >= BW_TRIM_ROWS) {
			c->trim(c->trim_user);
			drawn = 0;
		}
		for (int64_t i = c0; i < c1 + DRAW_LAG; i++) {
			if (i < c1 && r->star)
				star_row(r, i);
			else if (i < c1 && c->labor && ip[i + 1] - ip[i] < row[2 * i + 1])
				bw_labor_row(gi, w4, row[2 * i], row[2 * i + 1], ip[i + 1] - ip[i], j->items + ip[i],
					  r->lk, r->dep, rs);
			else if (i < c1)
				draw_row(gi, w4, row[2 * i], row[2 * i + 1], ip[i + 1] - ip[i], j->items + ip[i],
					 bw_key(r->lkey, (uint64_t)nodes[i]), rs);
			const int64_t q = i - DRAW_LAG;
			if (q >= c0)
				resolve_row(gi, w4, row[2 * q], row[2 * q + 1], ip[q], ip[q + 1] - ip[q], j->items + ip[q], j->eb,
					    h, shift, mask, r->eid ? r->eid + ip[q] : NULL);
		}
	}
	return true;
}

/* Phase 4 (every thread t of nt, after a barrier): number the drawn ids: place the items by
 * bucket, count each bucket's new nodes, and once every count is in, number them. */
static void layer_number(layer_run *r, int t, int nt)
{
	layer_job *j = &r->j;
	bw_sample_ctx *c = j->c;
	const int64_t nbkt = (int64_t)1 << j->top;
	bw_row_scratch *rs = &c->rows[t];
	const size_t stride = ((size_t)1 << RADIX_BITS) + 1;
	int64_t *bs = c->bstart + (size_t)t * stride, *cur = c->off + (size_t)t * stride;
	if (j->E >= NUMBER_PAR_MIN && nt > 1) {
		/* each thread takes a range of buckets holding about E/nt items */
		bucket_bounds(j, nt, bs);
		const int64_t d0 = t ? bw_lower_bound_i64(bs, nbkt + 1, j->E * t / nt) : 0;
		const int64_t d1 = t < nt - 1 ? bw_lower_bound_i64(bs, nbkt + 1, j->E * (t + 1) / nt) : nbkt;
		scatter_own(j, bs, d0, d1, cur);
		count_range(j, bs, d0, d1, rs);
#pragma omp barrier
		const int64_t total = number_range(j, bs, d0, d1, rs);
		if (t == 0)
			j->nnew = total;
	} else {
#pragma omp single nowait
		{
			bucket_bounds(j, nt, bs);
			scatter_own(j, bs, 0, nbkt, cur);
			count_range(j, bs, 0, nbkt, rs);
			j->nnew = number_range(j, bs, 0, nbkt, rs);
		}
	}
}

/* Merge the nnew new nodes b->nodes[nd ..] (sorted, local ids nd ..) into the sorted view
 * c->sg/sl[0, nd), by way of the spare arrays sg2/sl2, which then swap places with it. */
static int merge_view(bw_sample_ctx *c, const bw_sampled *b, int64_t nd, int64_t nnew)
{
	const int64_t n2 = nd + nnew, *sg = c->sg, *newn = b->nodes + nd;
	const int32_t *sl = c->sl;
	int st;
	if ((st = bw_grow(&c->sg2, &c->sg2_cap, (size_t)n2, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->sl2, &c->sl2_cap, (size_t)n2, sizeof(int32_t), false)))
		return st;
	int64_t i = 0, k = 0, m = 0;
	while (i < nd || m < nnew) {
		if (m >= nnew || (i < nd && sg[i] < newn[m])) {
			c->sg2[k] = sg[i];
			c->sl2[k++] = sl[i++];
		} else {
			c->sg2[k] = newn[m];
			c->sl2[k++] = (int32_t)(nd + m++);
		}
	}
	BW_SWAP(c->sg, c->sg2);
	BW_SWAP(c->sl, c->sl2);
	BW_SWAP(c->sg_cap, c->sg2_cap);
	BW_SWAP(c->sl_cap, c->sl2_cap);
	return 0;
}

/* A LABOR-* layer's block as bw_labor_star_prep takes it (its rows' degrees read first, here
 * on one thread unless every thread reads them in the layer's region). */
static void star_block(layer_run *r)
{
	const int64_t nd = r->j.nd;
	for (int64_t i = 0; !r->rows_par && i < nd; i++)
		rows_one(r, i);
	r->ls = (bw_ls_layer){.gi = r->gi, .w4 = r->w4, .row = r->row, .ip = r->ip, .nd = nd, .k = r->fanout,
			      .ub = r->ub, .lk = r->lk, .dep = r->dep};
	snprintf(r->ls.who, sizeof r->ls.who, "sampler: block %d", r->j.l);
}

/* Sample block l of b over the current nodes b->nodes[0, nd), whose sorted view is
 * c->sg/c->sl[0, nd): append the new source nodes to b->nodes and set *nsrc to the
 * node count after them. The sorted view is extended unless `last`. A fanout < 0 takes
 * whole rows.
 *
 * One parallel region per layer with three or four barriers (a barrier costs little on
 * an idle machine but can cost a scheduler slice on a busy one): the rows' degrees and
 * offsets (phases 1, 2; with LABOR-*, its preparation between them, about 17 barriers and
 * 2 more a round: bw_labor_star_prep); the draws (dynamic chunks of rows), each thread counting its items
 * per bucket (top digit of the id: phase 3); then each thread takes a range of buckets
 * holding about E/nt items, places their items (so they stay in its cache) and counts their
 * new nodes; once every count is in, it numbers them (phase 4). The numbering of a small
 * layer works in cache-sized arrays where a second thread mostly adds traffic between cores,
 * so it runs on one thread below NUMBER_PAR_MIN items. Last, the new nodes join the sorted
 * view (merge_view). */
static int layer_step(bw_sample_ctx *c, const burrow_csr *g, const bw_expander *ex, bw_sampled *b, int l,
		      int fanout, uint64_t lkey, int64_t nd, bool last, int64_t *nsrc)
{
	layer_run r = {.b = b, .ex = ex, .fanout = fanout, .lkey = lkey, .bad = -1,
		       .star = c->labor_star > 0 && !ex && fanout >= 0};
	r.dep = bw_labor_layer(c->labor || c->labor_star ? &c->dep : NULL, l, lkey, &r.lk, &r.dep_buf);
	r.gp = ex ? NULL : g->indptr;
	r.gi = ex ? NULL : g->indices;
	r.w4 = !ex && g->index_width == 4;
	r.num_nodes = ex ? ex->num_nodes : g->num_nodes;
	int st;
	if ((st = bw_grow(&c->row, &c->row_cap, 2 * (size_t)nd, sizeof(int64_t), false)) ||
	    (st = bw_grow(&b->indptr[l], &b->indptr_cap[l], (size_t)nd + 1, sizeof(int64_t), false)))
		return st;
	if (ex && (st = ex->expand(ex->ctx, l, fanout, lkey, b->nodes, nd, &r.xip, &r.xids)))
		return st;
	r.row = c->row;
	r.ip = b->indptr[l];
	r.ub = bits_for((uint64_t)r.num_nodes - 1);
	r.j = (layer_job){.c = c, .l = l, .nd = nd, .top = BW_MIN(r.ub, RADIX_BITS), .sg = c->sg, .sl = c->sl};
	r.j.rest = r.ub - r.j.top;
	r.rows_par = !ex && nd >= ROWS_PAR_MIN;
	if (r.star)
		star_block(&r);
	/* edges, roughly, to decide on threads */
	const int64_t est = ex ? r.xip[nd] : nd * (fanout < 0 ? 8 : fanout);

#pragma omp parallel num_threads(c->threads) if (est >= DRAW_PAR_MIN)
	{
		const int nt = omp_get_num_threads(), t = omp_get_thread_num();
		if (r.rows_par) {
#pragma omp for schedule(static)
			for (int64_t i = 0; i < nd; i++)
				rows_one(&r, i);
		}
		if (r.star)
			bw_labor_star_prep(c, &r.ls, t, nt);
#pragma omp single
		layer_room(&r);
		if (!r.st && r.j.E > 0 && layer_draw(&r, t)) {
#pragma omp barrier
			layer_number(&r, t, nt);
		}
	}
	if (r.st)
		return bw_err(r.st, "%s", r.j.msg);
	if (r.bad >= 0)
		return bw_err(BURROW_E_RANGE, "sampler: block %d: edge %lld's source %lld is not a node id (%lld nodes)", l,
			      (long long)r.bad, (long long)r.xids[r.bad], (long long)r.num_nodes);
	const int64_t nnew = r.j.nnew;
	if (nd + nnew > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "sampler: block %d has %lld source nodes: local ids are int32", l,
			      (long long)(nd + nnew));
	b->pub.blocks[l] = (burrow_block){.num_dst = nd, .num_src = nd + nnew, .num_edges = r.j.E, .indptr = r.ip,
					  .indices = b->indices[l], .edge_ids = r.eid, .edge_weight = r.ew};
	*nsrc = nd + nnew;
	if (last || nnew == 0)
		return 0;
	return merge_view(c, b, nd, nnew);
}

/* ------------------------------------------------------------ batches */

/* Set b->nodes to the n seeds and c->sg/sl to their sorted view; refuse ids out of
 * range and repeated ids. */
static int seed_set(bw_sample_ctx *c, int64_t num_nodes, const int64_t *seeds, int64_t n, bw_sampled *b)
{
	int st;
	if ((st = bw_grow(&b->nodes, &b->nodes_cap, (size_t)n, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->items, &c->items_cap, (size_t)n, sizeof(uint64_t), false)) ||
	    (st = bw_grow(&c->tmp, &c->tmp_cap, (size_t)n, sizeof(uint64_t), false)) ||
	    (st = bw_grow(&c->sg, &c->sg_cap, (size_t)n, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->sl, &c->sl_cap, (size_t)n, sizeof(int32_t), false)))
		return st;
	const int ub = bits_for((uint64_t)num_nodes - 1), lb = bits_for((uint64_t)BW_MAX(n, 1) - 1);
	if (n > INT32_MAX || ub + lb > 64)
		return bw_err(BURROW_E_UNSUPPORTED, "sampler: %lld seeds are too many for one batch", (long long)n);
	for (int64_t i = 0; i < n; i++) {
		if (seeds[i] < 0 || seeds[i] >= num_nodes)
			return bw_err(BURROW_E_RANGE, "sampler: seed %lld is not a node id (the graph has %lld nodes)",
				      (long long)seeds[i], (long long)num_nodes);
		b->nodes[i] = seeds[i];
		c->items[i] = (uint64_t)seeds[i] << lb | (uint64_t)i;
	}
	const uint64_t *x = bw_lsd_sort(c->items, c->tmp, n, lb, ub, RADIX_BITS, c->hist);
	const uint64_t lmask = lb == 64 ? ~0ull : (1ull << lb) - 1;
	for (int64_t i = 0; i < n; i++) {
		c->sg[i] = (int64_t)(x[i] >> lb);
		c->sl[i] = (int32_t)(x[i] & lmask);
		if (i && c->sg[i] == c->sg[i - 1])
			return bw_err(BURROW_E_INVAL, "sampler: seed %lld appears twice in one batch", (long long)c->sg[i]);
	}
	return 0;
}

void bw_sampled_finish(bw_sampled *b, int num_layers, int64_t nseeds, int64_t ninput)
{
	b->pub.num_layers = num_layers;
	for (int l = num_layers; l < BURROW_MAX_LAYERS; l++)
		b->pub.blocks[l] = (burrow_block){0};
	b->pub.num_input = ninput;
	b->pub.input_ids = b->nodes;
	b->pub.num_seeds = nseeds;
	b->pub.seeds = b->nodes;
}

/* The batch's blocks, from g's rows or ex's. */
static int sample_layers(bw_sample_ctx *c, const burrow_csr *g, const bw_expander *ex, const int64_t *seeds,
			 int64_t n, int num_layers, const int *fanouts, uint64_t key, bw_sampled *b)
{
	int st = seed_set(c, ex ? ex->num_nodes : g->num_nodes, seeds, n, b);
	if (st)
		return st;
	int64_t nd = n;
	for (int l = num_layers - 1; l >= 0; l--)
		if ((st = layer_step(c, g, ex, b, l, fanouts[l], bw_key(key, (uint64_t)l), nd, l == 0, &nd)))
			return st;
	bw_sampled_finish(b, num_layers, n, nd);
	return 0;
}

int bw_sample_batch(bw_sample_ctx *c, const burrow_csr *g, const int64_t *seeds, int64_t n, int num_layers,
		    const int *fanouts, uint64_t key, bw_sampled *b)
{
	return sample_layers(c, g, NULL, seeds, n, num_layers, fanouts, key, b);
}

int bw_sample_batch_ex(bw_sample_ctx *c, const bw_expander *ex, const int64_t *seeds, int64_t n, int num_layers,
		       const int *fanouts, uint64_t key, bw_sampled *b)
{
	return sample_layers(c, NULL, ex, seeds, n, num_layers, fanouts, key, b);
}

int bw_sample_full(bw_sample_ctx *c, const burrow_csr *g, int64_t first, int64_t count, bw_sampled *b)
{
	int st;
	if ((st = bw_grow(&b->nodes, &b->nodes_cap, (size_t)count, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->sg, &c->sg_cap, (size_t)count, sizeof(int64_t), false)) ||
	    (st = bw_grow(&c->sl, &c->sl_cap, (size_t)count, sizeof(int32_t), false)))
		return st;
	for (int64_t i = 0; i < count; i++) {
		b->nodes[i] = c->sg[i] = first + i;
		c->sl[i] = (int32_t)i;
	}
	int64_t nsrc;
	if ((st = layer_step(c, g, NULL, b, 0, -1, 0, count, true, &nsrc)))
		return st;
	bw_sampled_finish(b, 1, count, nsrc);
	return 0;
}
