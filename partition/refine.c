/* refine.c: bounded boundary refinement of a k-way partition, streamed over the graph: a
 * fixed number of passes of cut-lowering moves that keep every part within its bound, then,
 * while some part is over its bound, passes that move nodes out of it at the least cut cost.
 * Then relaxed rounds: a pass of cut-lowering moves into parts up to RELAX above their
 * bound, and a rebalancing back to the bound, cheapest moves first. A part at its bound
 * takes no plain move, so this is how nodes trade places between full parts: the ones worth
 * most to a part come in, the ones it loses least by go out.
 *
 * Each chunk of rows is screened in parallel against the state at the chunk's start; the
 * candidates are then re-evaluated exactly and applied in row order, so every move applied
 * is exactly as good as computed and the result does not depend on the number of threads. */
#include "partition_internal.h"

#include <string.h>

#define RELAX 0.5      /* relaxed rounds let a part exceed its bound by this share */
#define MIN_GAIN 1000  /* and stop once a round lowers the cut by less than 1/MIN_GAIN */
#define MAX_LOG ((int64_t)1 << 21) /* moves a round may log (16 MiB): it makes at most half */
#define NBUCKET 180    /* loss histogram: exact below 64, then two buckets per power of two */

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
	const double *fitw;   /* the bound a move's target must stay within: maxw or relaxed */
	int64_t delta;        /* cut change of the moves applied so far */
	double avg0;          /* average part weight, first constraint */
	int64_t *log;         /* moves of the current round, (node << 32 | old part), to undo it */
	int64_t nlog, logcap; /* entries used, room */
	bool logging, lost;   /* record moves; some were not recorded (the round cannot be undone) */
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
		if (w && (double)(c->pw[(int64_t)t * c->g->ncon + q] + w) > c->fitw[q])
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

/* With several constraints, the lightest part for v is judged by the constraints v adds
 * weight to: a node without edges goes to the part with the fewest nodes even when that part
 * is the fullest in edges, which frees room for the moves that balance the edges. Nodes
 * that weigh nothing anywhere take the part lightest overall. */
static int32_t lightest_for(const ctx *c, int64_t v, int32_t lightest)
{
	const int ncon = c->g->ncon;
	bool weighs = false;
	for (int q = 0; q < ncon && !weighs; q++)
		weighs = bw_pg_vw(c->g, v, q) != 0;
	if (ncon == 1 || !weighs)
		return lightest;
	int32_t best = 0;
	double best_f = 0;
	for (int32_t t = 0; t < c->k; t++) {
		double f = 0;
		for (int q = 0; q < ncon; q++)
			if (bw_pg_vw(c->g, v, q))
				f = BW_MAX(f, (double)c->pw[(int64_t)t * ncon + q] / c->maxw[q]);
		if (t == 0 || f < best_f) {
			best = t;
			best_f = f;
		}
	}
	return best;
}

/* The part v should move to, or -1; *gain: the cut the move saves. lossmax: the cut a
 * balancing move may add. */
static int32_t evaluate(const ctx *c, int64_t v, scratch *s, int64_t lossmax, int32_t lightest, int64_t *gain_out)
{
	const bw_pgraph *g = c->g;
	const int32_t p = c->part[v];
	int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1;
	/* part[u] misses the cache on a large graph: ask for it PREFETCH entries ahead */
	for (int64_t q = j; q < BW_MIN(hi, j + PREFETCH); q++)
		__builtin_prefetch(&c->part[bw_pg_nbr(g, q)]);
	while (bw_pg_next(g, v, &j, hi, &u, &prev)) {
		if (j + PREFETCH < hi)
			__builtin_prefetch(&c->part[bw_pg_nbr(g, j + PREFETCH)]);
		int32_t q = c->part[u];
		if (!s->conn[q] && q != p)
			s->touched[s->nt++] = q;
		s->conn[q] += bw_pg_ewgt(g, j - 1);
	}
	int32_t best = -1;
	int64_t best_w = -1;
	double best_f = 0;
	lightest = lightest_for(c, v, lightest);
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
	*gain_out = gain;
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
	if (c->logging) {
		if (c->nlog < c->logcap)
			c->log[c->nlog++] = (int64_t)((uint64_t)v << 32 | (uint32_t)p);
		else
			c->lost = true;
	}
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

/* Loss histogram buckets: exact below 64, then two per power of two. */
static int bucket_of(int64_t loss)
{
	if (loss < 64)
		return loss <= 0 ? 0 : (int)loss;
	const int e = 63 - __builtin_clzll((unsigned long long)loss); /* 6 .. 62 */
	return 64 + 2 * (e - 6) + (int)((loss >> (e - 1)) & 1);
}

/* The largest loss that falls in bucket b. */
static int64_t bucket_max(int b)
{
	if (b < 64)
		return b;
	const int e = 6 + (b - 64) / 2;
	return (b - 64) & 1 ? (int64_t)(((uint64_t)1 << (e + 1)) - 1) : ((int64_t)3 << (e - 1)) - 1;
}

/* Screen rows [a, b) in parallel against the state now: cand[v - a] gets the part v should
 * move to, or -1 (only_over: also for nodes of parts within their bound). hist, when not
 * NULL, [threads][ncon][NBUCKET]: each candidate's weight in a constraint its part exceeds is
 * counted in its thread's row at the bucket of the cut the move adds. */
static void screen(const ctx *c, scratch *ss, int nt, int64_t a, int64_t b, int64_t lossmax, bool only_over,
		   int32_t *cand, int64_t *hist)
{
	const int ncon = c->g->ncon;
	const int32_t light = lightest_part(c);
#pragma omp parallel for schedule(dynamic, 128) num_threads(nt)
	for (int64_t v = a; v < b; v++) {
		const int32_t p = c->part[v];
		const int tid = omp_get_thread_num();
		int64_t gain;
		cand[v - a] = only_over && !over(c, p) ? -1 : evaluate(c, v, &ss[tid], lossmax, light, &gain);
		if (!hist || cand[v - a] < 0)
			continue;
		for (int q = 0; q < ncon; q++)
			if ((double)c->pw[(int64_t)p * ncon + q] > c->maxw[q])
				hist[((int64_t)tid * ncon + q) * NBUCKET + bucket_of(-gain)] += bw_pg_vw(c->g, v, q);
	}
}

/* One streamed pass; returns the moves made. only_over: look only at nodes of parts over
 * their bound (a rebalancing pass). maxlog: stop moving once the round's log holds this many. */
static int64_t pass(ctx *c, scratch *ss, int nt, int32_t *cand, int64_t lossmax, bool only_over, int64_t maxlog)
{
	int64_t moves = 0;
	bw_stream st;
	for (bw_stream_begin(&st, c->g); bw_stream_next(&st, c->g->n, BW_CHUNK);) {
		screen(c, ss, nt, st.a, st.b, lossmax, only_over, cand, NULL);
		for (int64_t v = st.a; v < st.b && c->nlog < maxlog; v++) {
			if (cand[v - st.a] < 0)
				continue;
			int64_t gain;
			int32_t t = evaluate(c, v, &ss[0], lossmax, lightest_part(c), &gain);
			if (t >= 0) {
				move(c, v, t);
				c->delta -= gain;
				moves++;
			}
		}
	}
	return moves;
}

/* Back within the bounds, cheapest moves first: one streamed pass counts, per constraint,
 * the weight each loss would move out of the parts over it; the moves up to the loss that
 * covers the excess are then made, in row order (each re-evaluated exactly), and any excess
 * left takes passes that allow twice the loss each. Returns the moves made. */
static int64_t rebalance(ctx *c, scratch *ss, int nt, int32_t *cand, int64_t *hist)
{
	const bw_pgraph *g = c->g;
	const int ncon = g->ncon;
	if (!any_over(c))
		return 0;
	memset(hist, 0, (size_t)nt * (size_t)ncon * NBUCKET * sizeof *hist);
	bw_stream st;
	for (bw_stream_begin(&st, g); bw_stream_next(&st, g->n, BW_CHUNK);)
		screen(c, ss, nt, st.a, st.b, INT64_MAX, true, cand, hist);
	int64_t lossmax = 0;
	for (int q = 0; q < ncon; q++) {
		double excess = 0;
		for (int32_t t = 0; t < c->k; t++)
			excess += BW_MAX((double)c->pw[(int64_t)t * ncon + q] - c->maxw[q], 0.0);
		if (excess <= 0)
			continue;
		double sum = 0;
		int b = 0;
		for (; b < NBUCKET; b++) {
			for (int t = 0; t < nt; t++)
				sum += (double)hist[((int64_t)t * ncon + q) * NBUCKET + b];
			if (sum >= excess)
				break;
		}
		lossmax = BW_MAX(lossmax, b < NBUCKET ? bucket_max(b) : INT64_MAX / 4);
	}
	int64_t moves = 0;
	for (int i = 0; i < 24 && any_over(c); i++) {
		const int64_t m = pass(c, ss, nt, cand, i < 23 ? lossmax : INT64_MAX, true, INT64_MAX);
		moves += m;
		bw_log(BURROW_LOG_DEBUG, "partition: rebalance pass %d (loss <= %lld): %lld moves", i, (long long)lossmax,
		       (long long)m);
		lossmax = BW_MIN(2 * lossmax + 1, INT64_MAX / 4);
	}
	return moves;
}

/* While a part is over its bound, passes that let moves out of it cost more cut each time. */
static int64_t balance(ctx *c, scratch *ss, int nt, int32_t *cand)
{
	int64_t moves = 0;
	for (int i = 0; i < 24 && any_over(c); i++) {
		int64_t lossmax = i < 23 ? ((int64_t)1 << i) - 1 : INT64_MAX;
		int64_t m = pass(c, ss, nt, cand, lossmax, false, INT64_MAX);
		moves += m;
		bw_log(BURROW_LOG_DEBUG, "partition: balance pass %d (loss <= %lld): %lld moves", i, (long long)lossmax,
		       (long long)m);
	}
	return moves;
}

int bw_refine(const bw_pgraph *g, int32_t *part, int k, int64_t *pw, const double *maxw, int passes, int rounds,
	      uint64_t seed, int threads, int64_t *moved)
{
	const int nt = bw_threads(threads);
	int64_t total = 0;
	int st = 0;
	(void)seed;
	*moved = 0;
	if (k < 2 || g->n == 0)
		return 0;
	int64_t w0 = 0;
	for (int32_t t = 0; t < k; t++)
		w0 += pw[(int64_t)t * g->ncon];
	bw_advise_huge(part, (size_t)g->n * sizeof *part); /* read at random, per edge */
	ctx c = {.g = g, .part = part, .k = k, .pw = pw, .maxw = maxw, .fitw = maxw, .avg0 = (double)w0 / k};
	scratch *ss = bw_calloc((size_t)nt, sizeof *ss);
	int32_t *cand = bw_malloc(BW_CHUNK * sizeof *cand);
	int64_t *hist = bw_malloc((size_t)nt * (size_t)g->ncon * NBUCKET * sizeof *hist);
	if (!ss || !cand || !hist) {
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
	for (int i = 0; i < passes; i++) {
		int64_t m = pass(&c, ss, nt, cand, 0, false, INT64_MAX);
		total += m;
		bw_log(BURROW_LOG_DEBUG, "partition: refinement pass %d: %lld moves", i, (long long)m);
		if (m <= g->n / 1000)
			break;
	}
	total += balance(&c, ss, nt, cand);
	/* relaxed rounds while they pay; one that does not (or cannot rebalance) is undone */
	double relaxed[BW_MAX_CON];
	for (int q = 0; q < g->ncon; q++)
		relaxed[q] = maxw[q] * (1 + RELAX);
	int64_t cut = 0, wsum;
	if (rounds > 0 && !any_over(&c)) {
		c.logcap = BW_MAX(BW_MIN(g->n, MAX_LOG), 1);
		c.log = bw_malloc((size_t)c.logcap * sizeof *c.log);
		if (!c.log) {
			st = BURROW_E_NOMEM;
			goto out;
		}
		bw_edge_cut(g, part, threads, &cut, &wsum);
		c.delta = 0;
	}
	for (int r = 0; r < rounds && cut > 0; r++) {
		const int64_t d0 = c.delta;
		c.nlog = 0;
		c.lost = false;
		c.logging = true;
		c.fitw = relaxed;
		int64_t m = pass(&c, ss, nt, cand, 0, false, c.logcap / 2);
		const int64_t d1 = c.delta;
		c.fitw = maxw;
		m += rebalance(&c, ss, nt, cand, hist);
		c.logging = false;
		const bool bad = any_over(&c) || c.delta >= d0;
		bw_log(BURROW_LOG_DEBUG, "partition: relaxed round %d: %lld moves, cut %+lld, rebalanced %+lld%s", r,
		       (long long)m, (long long)(d1 - d0), (long long)(c.delta - d1),
		       bad && !c.lost ? " (undone)" : "");
		if (bad && !c.lost) {
			for (int64_t i = c.nlog - 1; i >= 0; i--)
				move(&c, c.log[i] >> 32, (int32_t)(c.log[i] & 0xffffffff));
			c.delta = d0;
			break;
		}
		total += m;
		if (bad || (d0 - c.delta) * MIN_GAIN < cut + c.delta)
			break;
	}
	total += balance(&c, ss, nt, cand); /* only after a round too long to undo left a part over */
	if (cut > 0)
		bw_log(BURROW_LOG_DEBUG, "partition: refinement of %lld nodes: cut %lld before the relaxed rounds, %lld after",
		       (long long)g->n, (long long)cut, (long long)(cut + c.delta));
	*moved = total;
out:
	for (int t = 0; ss && t < nt; t++) {
		bw_free(ss[t].conn);
		bw_free(ss[t].touched);
	}
	bw_free(ss);
	bw_free(cand);
	bw_free(hist);
	bw_free(c.log);
	return st;
}
