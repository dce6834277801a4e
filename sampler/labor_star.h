/* labor_star.h: LABOR-*'s per-row and per-source maths, __host__ __device__ (BW_HD), one
 * definition for the CPU samplers (sample.c's bw_labor_star_prep and bw_labor_star_row, which
 * typed.c's relations go through too) and the GPU sampler's kernels (sample_kernels.h's
 * bw_sk_ls_*): a source's variate, a row's c, a source's pi update, a row's count, picks and
 * weights. Where the two sides add or compare, they do it here, in the same order, so that
 * their bits are equal (the kernels build with --fmad=false). */
#ifndef BURROW_SAMPLER_LABOR_STAR_H
#define BURROW_SAMPLER_LABOR_STAR_H

#include "labor.h"

/* A round of LABOR-*'s fixed point that lowers the expected distinct sources by less than
 * this fraction is the last. */
#define BW_LS_TOL 1e-4

/* Source v's variate in [0, 1): under LABOR's layer key lk the top 53 bits of its key, or
 * with dep (not NULL) its batch dependency's. */
static inline BW_HD double bw_ls_variate(uint64_t lk, const bw_labor_dep *dep, uint64_t v)
{
	return dep ? bw_labor_dep_variate(dep, v) : (double)(bw_key(lk, v) >> 11) * 0x1p-53;
}

/* The c of a row of d > k neighbors (their source indices src): sum over them of
 * min(1, c pi) = k, the row's expected count. That sum is piecewise linear in c; from
 * k / sum pi, which is below the root (and is it when no neighbor saturates, c pi >= 1), each
 * step solves the line of the neighbors saturated so far, which never passes the root, until
 * no new one saturates. buf [d] (the CPU's) takes the row's pi on the first pass and the
 * others read it; NULL (a GPU thread has no room for it) reads the sources' pi again each
 * pass: the same values, so the same c. */
static inline BW_HD double bw_ls_solve(const int32_t *src, int64_t d, const bw_ls_node *nodes, int64_t k, double *buf)
{
	double sum = 0, hi = 0;
	for (int64_t p = 0; p < d; p++) {
		const double x = nodes[src[p]].pi;
		if (buf)
			buf[p] = x;
		sum += x;
		hi = BW_MAX(hi, x);
	}
	double c = (double)k / sum;
	if (c * hi < 1)
		return c;
	for (int it = 0; it < 64; it++) {
		int64_t m = 0;
		double rest = 0;
		for (int64_t p = 0; p < d; p++) {
			const double x = buf ? buf[p] : nodes[src[p]].pi;
			if (c * x >= 1)
				m++;
			else
				rest += x;
		}
		if (m >= k || rest <= 0)
			break;
		const double next = (double)(k - m) / rest;
		if (!(next > c))
			break;
		c = next;
	}
	return c;
}

/* A row's c under the current pi (d neighbors with source indices src, fanout k): a row of
 * d > k solves for k (bw_ls_solve, buf as there); a row taken whole gets 1 / its smallest pi,
 * so that all its neighbors have c pi >= 1 (they are taken). `ones`: every pi is 1 (c = k / d,
 * or 1). */
static inline BW_HD double bw_ls_c(const int32_t *src, int64_t d, int64_t k, const bw_ls_node *nodes, bool ones,
				   double *buf)
{
	if (ones)
		return d > k ? (double)k / (double)d : d ? 1.0 : 0.0;
	if (d > k)
		return bw_ls_solve(src, d, nodes, k, buf);
	double lo = INFINITY;
	for (int64_t p = 0; p < d; p++)
		lo = BW_MIN(lo, nodes[src[p]].pi);
	return d ? 1.0 / lo : 0.0;
}

/* A source's term of a round's expected distinct sources (summed in source order). */
static inline BW_HD double bw_ls_expect(double pi) { return BW_MIN(1.0, pi); }

/* Whether the round whose expected distinct sources came to ex is the last: it lowered them by
 * less than BW_LS_TOL from *prev (the round before's, INFINITY before the first), which it
 * then becomes. The CPU's rounds and the GPU's (on the host, ex read back) stop here alike. */
static inline BW_HD bool bw_ls_last(double ex, double *prev)
{
	if (ex >= *prev * (1 - BW_LS_TOL))
		return true;
	*prev = ex;
	return false;
}

/* A round's update of one source: pi *= the largest c of the rows reading it, its run
 * [q0, q1) of the neighbors sorted by source, erow each one's row (in run order). */
static inline BW_HD void bw_ls_pi(bw_ls_node *node, const double *c, const int32_t *erow, int64_t q0, int64_t q1)
{
	double mx = 0;
	for (int64_t q = q0; q < q1; q++)
		mx = BW_MAX(mx, c[erow[q]]);
	node->pi *= mx;
}

/* A row of d > k's count: its neighbors whose variate is below c pi of their source. */
static inline BW_HD int64_t bw_ls_count(const int32_t *src, int64_t d, double ci, const bw_ls_node *nodes)
{
	int64_t n = 0;
	for (int64_t p = 0; p < d; p++)
		n += nodes[src[p]].r < ci * nodes[src[p]].pi;
	return n;
}

/* A row of d > k's picks (start s in the CSR, its c ci): neighbor p when its source's variate
 * is below min(1, ci pi), as absolute positions s + p into out (bw_ls_count of them, which it
 * returns), and with w (may be NULL) their weights: 1 / that probability, scaled so that the
 * row's weights sum to its count. */
static inline BW_HD int64_t bw_ls_row(const int32_t *src, int64_t s, int64_t d, double ci, const bw_ls_node *nodes,
				      uint64_t *out, float *w)
{
	int64_t n = 0;
	double inv = 0;
	for (int64_t p = 0; p < d; p++) {
		const bw_ls_node *x = &nodes[src[p]];
		const double th = ci * x->pi;
		if (x->r < th) {
			out[n++] = (uint64_t)(s + p);
			inv += th >= 1 ? 1.0 : 1.0 / th;
		}
	}
	const double scale = n ? (double)n / inv : 0.0;
	for (int64_t j = 0; w && j < n; j++) {
		const double th = ci * nodes[src[(int64_t)out[j] - s]].pi;
		w[j] = (float)((th >= 1 ? 1.0 : 1.0 / th) * scale);
	}
	return n;
}

#endif
