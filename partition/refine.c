/* refine.c: bounded boundary refinement of a k-way partition, streamed over the graph: a
 * fixed number of passes of cut-lowering moves that keep every part within its bound, then,
 * while some part is over its bound, passes that move nodes out of it at the least cut cost.
 *
 * Each chunk of rows is screened in parallel against the state at the chunk's start; the
 * candidates are then re-evaluated exactly and applied in row order, so every move applied
 * is exactly as good as computed and the result does not depend on the number of threads. */
#include "partition_internal.h"

#include <string.h>

typedef struct scratch {
	int64_t *conn;     /* [k] connection weight to each part */
	int32_t *touched;  /* parts with conn set */
	int nt;
} scratch;

typedef struct ctx {
	const bw_pgraph *g;
	int32_t *part;
	int k;
	int64_t *pw;
	const double *maxw;
	double avg0;       /* average part weight, first constraint */
} ctx;

static bool over(const ctx *c, int32_t p)
{
	for (int q = 0; q < c->g->ncon; q++)
		if ((double)c->pw[(int64_t)p * c->g->ncon + q] > c->maxw[q])
			return true;
	return false;
}

/* Would v's move into t keep t within every bound v adds weight to? */
static bool fits(const ctx *c, int32_t t, int64_t v)
{
	for (int q = 0; q < c->g->ncon; q++) {
		int64_t w = bw_pg_vw(c->g, v, q);
		if (w && (double)(c->pw[(int64_t)t * c->g->ncon + q] + w) > c->maxw[q])
			return false;
	}
	return true;
}

/* Does v carry weight in a constraint that its part p exceeds? */
static bool helps(const ctx *c, int32_t p, int64_t v)
{
	for (int q = 0; q < c->g->ncon; q++)
		if (bw_pg_vw(c->g, v, q) && (double)c->pw[(int64_t)p * c->g->ncon + q] > c->maxw[q])
			return true;
	return false;
}

/* Fullest constraint of part t, relative to its bound. */
static double fill(const ctx *c, int32_t t)
{
	double f = 0;
	for (int q = 0; q < c->g->ncon; q++)
		f = BW_MAX(f, (double)c->pw[(int64_t)t * c->g->ncon + q] / c->maxw[q]);
	return f;
}

/* The part v should move to, or -1. lossmax: the cut a balancing move may add. */
static int32_t evaluate(const ctx *c, int64_t v, scratch *s, int64_t lossmax, int32_t lightest)
{
	const bw_pgraph *g = c->g;
	const int32_t p = c->part[v];
	int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1;
	while (bw_pg_next(g, v, &j, hi, &u, &prev)) {
		int32_t q = c->part[u];
		if (!s->conn[q] && q != p)
			s->touched[s->nt++] = q;
		s->conn[q] += bw_pg_ewgt(g, j - 1);
	}
	int32_t best = -1;
	int64_t best_w = -1;
	double best_f = 0;
	for (int i = 0; i <= s->nt; i++) {
		int32_t t = i < s->nt ? s->touched[i] : lightest;
		if (t < 0 || t == p || !fits(c, t, v))
			continue;
		double f = fill(c, t);
		if (s->conn[t] > best_w || (s->conn[t] == best_w && f < best_f)) {
			best = t;
			best_w = s->conn[t];
			best_f = f;
		}
	}
	const int64_t own = s->conn[p];
	for (int i = 0; i < s->nt; i++)
		s->conn[s->touched[i]] = 0;
	s->conn[p] = 0;
	s->nt = 0;
	if (best < 0)
		return -1;
	const int64_t gain = best_w - own;
	if (gain > 0)
		return best;
	if (gain >= -lossmax && over(c, p) && helps(c, p, v))
		return best;
	const int64_t w0 = bw_pg_vw(g, v, 0), lp = c->pw[(int64_t)p * g->ncon], lt = c->pw[(int64_t)best * g->ncon];
	if (gain == 0 && (double)lp > c->avg0 && (double)lt < c->avg0 && lt + w0 < lp)
		return best; /* a free move from a heavy part to a lighter one: the loads draw closer */
	return -1;
}

static void move(ctx *c, int64_t v, int32_t t)
{
	const int ncon = c->g->ncon;
	const int32_t p = c->part[v];
	for (int q = 0; q < ncon; q++) {
		int64_t w = bw_pg_vw(c->g, v, q);
		c->pw[(int64_t)p * ncon + q] -= w;
		c->pw[(int64_t)t * ncon + q] += w;
	}
	c->part[v] = t;
}

static int32_t lightest_part(const ctx *c)
{
	int32_t best = 0;
	for (int32_t t = 1; t < c->k; t++)
		if (fill(c, t) < fill(c, best))
			best = t;
	return best;
}

static bool any_over(const ctx *c)
{
	for (int32_t t = 0; t < c->k; t++)
		if (over(c, t))
			return true;
	return false;
}

/* One streamed pass; returns the moves made, or -1 when out of memory. */
static int64_t pass(ctx *c, scratch *ss, int nt, int32_t *cand, int64_t lossmax)
{
	const bw_pgraph *g = c->g;
	int64_t moves = 0;
	bw_stream st;
	bw_stream_begin(&st, g);
	for (int64_t a = 0; a < g->n; a += BW_CHUNK) {
		const int64_t b = BW_MIN(g->n, a + BW_CHUNK);
		const int32_t light = lightest_part(c);
#pragma omp parallel for schedule(dynamic, 128) num_threads(nt)
		for (int64_t v = a; v < b; v++)
			cand[v - a] = evaluate(c, v, &ss[omp_get_thread_num()], lossmax, light);
		for (int64_t v = a; v < b; v++) {
			if (cand[v - a] < 0)
				continue;
			int32_t t = evaluate(c, v, &ss[0], lossmax, lightest_part(c));
			if (t >= 0) {
				move(c, v, t);
				moves++;
			}
		}
		bw_stream_release(&st, b);
	}
	return moves;
}

int bw_refine(const bw_pgraph *g, int32_t *part, int k, int64_t *pw, const double *maxw, int passes,
	      uint64_t seed, int threads, int64_t *moved)
{
	const int nt = bw_threads(threads);
	int64_t total = 0;
	int st = 0;
	(void)seed;
	*moved = 0;
	if (k < 2 || g->n == 0)
		return 0;
	scratch *ss = bw_calloc((size_t)nt, sizeof *ss);
	int32_t *cand = bw_malloc(BW_CHUNK * sizeof *cand);
	if (!ss || !cand) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int t = 0; t < nt; t++) {
		ss[t].conn = bw_calloc((size_t)k, sizeof *ss[t].conn);
		ss[t].touched = bw_malloc((size_t)k * sizeof *ss[t].touched);
		if (!ss[t].conn || !ss[t].touched) {
			st = BURROW_E_NOMEM;
			goto out;
		}
	}
	int64_t w0 = 0;
	for (int32_t t = 0; t < k; t++)
		w0 += pw[(int64_t)t * g->ncon];
	ctx c = {.g = g, .part = part, .k = k, .pw = pw, .maxw = maxw, .avg0 = (double)w0 / k};
	for (int i = 0; i < passes; i++) {
		int64_t m = pass(&c, ss, nt, cand, 0);
		total += m;
		bw_log(BURROW_LOG_DEBUG, "partition: refinement pass %d: %lld moves", i, (long long)m);
		if (m <= g->n / 1000)
			break;
	}
	/* balance: let moves out of a part over its bound cost more cut each pass */
	for (int i = 0; i < 24 && any_over(&c); i++) {
		int64_t lossmax = i < 23 ? ((int64_t)1 << i) - 1 : INT64_MAX;
		int64_t m = pass(&c, ss, nt, cand, lossmax);
		total += m;
		bw_log(BURROW_LOG_DEBUG, "partition: balance pass %d (loss <= %lld): %lld moves", i,
		       (long long)lossmax, (long long)m);
	}
	*moved = total;
out:
	for (int t = 0; ss && t < nt; t++) {
		bw_free(ss[t].conn);
		bw_free(ss[t].touched);
	}
	bw_free(ss);
	bw_free(cand);
	return st;
}
