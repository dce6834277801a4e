/* sample_kernels.h: what one thread of the GPU sampler's kernels (sample_cuda.cu) does, as
 * __host__ __device__ functions of the thread's index i in a one-pass grid (blocks of
 * BW_SK_THREADS, i = block * BW_SK_THREADS + thread): the kernels call them with theirs,
 * tests/test_kernels.c with every index of the same grid on the host, with a host stand-in
 * for the CUB sort, unique and scan between them, against the CPU sampler. */
#ifndef BURROW_SAMPLE_KERNELS_H
#define BURROW_SAMPLE_KERNELS_H

#include "draw.h"  /* bw_draw, BW_HD */
#include "labor.h" /* bw_labor_pick */
#include "labor_star.h" /* bw_ls_* */

#include <stdbool.h>
#include <stdint.h>

#define BW_SK_THREADS 256

/* Blocks of the one-pass grid over n items. */
static inline BW_HD unsigned bw_sk_grid(int64_t n) { return (unsigned)((n + BW_SK_THREADS - 1) / BW_SK_THREADS); }

/* The first position of a[0, n) (sorted) not below v. */
static inline BW_HD int64_t bw_sk_lower_bound(const int64_t *a, int64_t n, int64_t v)
{
	int64_t lo = 0, hi = n;
	while (lo < hi) {
		const int64_t m = lo + (hi - lo) / 2;
		if (a[m] < v)
			lo = m + 1;
		else
			hi = m;
	}
	return lo;
}

static inline BW_HD int64_t bw_sk_nbr(const void *gi, int width, int64_t j)
{
	return width == 4 ? (int64_t)(uint32_t)((const int32_t *)gi)[j] : ((const int64_t *)gi)[j];
}

/* cnt[i] = the sample size of destination i (cnt[nd] = 0, for the offsets' last entry);
 * threads i in [0, nd]. */
static inline BW_HD void bw_sk_sizes(int64_t i, const int64_t *gp, const int64_t *nodes, int64_t nd, int fanout,
				     int64_t *cnt)
{
	if (i > nd)
		return;
	if (i == nd) {
		cnt[i] = 0;
		return;
	}
	const int64_t v = nodes[i], d = gp[v + 1] - gp[v];
	cnt[i] = fanout < 0 || d <= fanout ? d : fanout;
}

/* Row i's sample, as sized by ip: its start *s and degree *d in the graph; a row taken whole
 * (k == d) is copied into eid[ip[i] ..) here. Returns its sample size k when k picks are left
 * to draw (0 < k < d), else 0. */
static inline BW_HD int64_t bw_sk_row(int64_t i, const int64_t *gp, const void *gi, int width, const int64_t *nodes,
				      const int64_t *ip, int64_t *eid, int64_t *s, int64_t *d)
{
	const int64_t v = nodes[i], k = ip[i + 1] - ip[i];
	*s = gp[v];
	*d = gp[v + 1] - *s;
	if (k == *d) {
		for (int64_t j = 0; j < k; j++)
			eid[ip[i] + j] = bw_sk_nbr(gi, width, *s + j);
		return 0;
	}
	return k;
}

/* Row i's neighbors, global ids in increasing row position, into eid[ip[i], ip[i+1]): the
 * whole row when it is taken whole, else bw_draw's positions from the CPU's stream
 * bw_key(lkey, v), or bw_key(lkey, keys[i]) when keys is given (a part's rows keyed by
 * their nodes' global ids: bw_cuda_draw_rows). Threads i in [0, nd). */
static inline BW_HD void bw_sk_draw(int64_t i, const int64_t *gp, const void *gi, int width, const int64_t *nodes,
				    int64_t nd, const int64_t *ip, uint64_t lkey, const int64_t *keys, int64_t *eid)
{
	if (i >= nd)
		return;
	int64_t s, d;
	const int64_t k = bw_sk_row(i, gp, gi, width, nodes, ip, eid, &s, &d), v = nodes[i];
	int64_t *out = eid + ip[i];
	if (k == 0)
		return;
	bw_rng r;
	bw_rng_seed(&r, bw_key(lkey, (uint64_t)(keys ? keys[i] : v)));
	int64_t small[BW_SMALL_FANOUT];
	int64_t *pos = k <= BW_SMALL_FANOUT ? small : out; /* in place: out[j] is written after pos[j] is read */
	bw_draw(&r, d, k, pos, NULL);
	for (int64_t j = 0; j < k; j++)
		out[j] = bw_sk_nbr(gi, width, s + pos[j]);
}

/* Row i's LABOR picks, the CPU's (bw_labor_row's: labor.h's bw_labor_pick under the layer's
 * key lk, or its batch dependency dep), global ids in increasing row position into
 * eid[ip[i], ip[i+1]); rows taken whole as bw_sk_draw. The row's heap of k (key, position):
 * up to BW_SMALL_FANOUT in the thread's own arrays; above, the keys in hkey[ip[i], ip[i+1])
 * (scratch of the block's E entries: the sort's output, free until the draws end) and the
 * positions in the row's own output slots, which then take the ids in place. Threads
 * i in [0, nd). */
static inline BW_HD void bw_sk_labor(int64_t i, const int64_t *gp, const void *gi, int width, const int64_t *nodes,
				     int64_t nd, const int64_t *ip, uint64_t lk, const bw_labor_dep *dep, uint64_t *hkey,
				     int64_t *eid)
{
	if (i >= nd)
		return;
	int64_t s, d;
	const int64_t k = bw_sk_row(i, gp, gi, width, nodes, ip, eid, &s, &d);
	if (k == 0)
		return;
	uint64_t ks[BW_SMALL_FANOUT];
	int64_t ps[BW_SMALL_FANOUT];
	int64_t *out = eid + ip[i], *pos = k <= BW_SMALL_FANOUT ? ps : out;
	bw_labor_pick(gi, width == 4, s, d, k, lk, dep, k <= BW_SMALL_FANOUT ? ks : hkey + ip[i], pos);
	for (int64_t j = 0; j < k; j++) /* in place: out[j] is written after pos[j] is read */
		out[j] = bw_sk_nbr(gi, width, s + pos[j]);
}

/* ------------------------------------------------------------ LABOR-* */
/* A LABOR-* layer (sample_cuda.cu's star_prep, then star_draw), as the CPU's
 * bw_labor_star_prep: the rows' whole neighborhoods (off: their degrees' exclusive sum, F in
 * all) as items (source id << eb | neighbor), sorted; the m distinct sources numbered in
 * increasing id; the fixed point's rounds over them; each row's count, picks and weights.
 * The maths is labor_star.h's, the CPU's. */

/* Row i's neighbors as items into items[off[i] ..) and each one's row into rowof (by
 * neighbor). Threads [0, nd). */
static inline BW_HD void bw_sk_ls_gather(int64_t i, const int64_t *gp, const void *gi, int width, const int64_t *nodes,
					 int64_t nd, const int64_t *off, int eb, uint64_t *items, int32_t *rowof)
{
	if (i >= nd)
		return;
	const int64_t s = gp[nodes[i]], e0 = off[i], d = off[i + 1] - e0;
	for (int64_t p = 0; p < d; p++) {
		items[e0 + p] = (uint64_t)bw_sk_nbr(gi, width, s + p) << eb | (uint64_t)(e0 + p);
		rowof[e0 + p] = (int32_t)i;
	}
}

/* flag[q] = 1 when the sorted item x[q] starts a source's run (flag[F] = 0, for the
 * exclusive sum's total: m). Threads [0, F]. */
static inline BW_HD void bw_sk_ls_flag(int64_t q, const uint64_t *x, int64_t F, int eb, int64_t *flag)
{
	if (q > F)
		return;
	flag[q] = q < F && (q == 0 || x[q] >> eb != x[q - 1] >> eb);
}

/* Sorted item q of source u (rank: flag's exclusive sum, u = rank[q + 1] - 1): its neighbor's
 * source index in src (by neighbor) and its row in erow (by source, from rowof); a run's
 * first item sets its source's start, pi = 1 and variate (bw_ls_variate under lk, or dep),
 * the last item start[m] = F. Threads [0, F). */
static inline BW_HD void bw_sk_ls_source(int64_t q, const uint64_t *x, int64_t F, int eb, const int64_t *flag,
					 const int64_t *rank, const int32_t *rowof, uint64_t lk, const bw_labor_dep *dep,
					 int32_t *src, int32_t *erow, int64_t *start, bw_ls_node *node)
{
	if (q >= F)
		return;
	const uint64_t emask = (1ull << eb) - 1; /* eb < 32: F <= INT32_MAX */
	const int64_t u = rank[q + 1] - 1, e = (int64_t)(x[q] & emask);
	src[e] = (int32_t)u;
	erow[q] = rowof[e];
	if (flag[q]) {
		start[u] = q;
		node[u].pi = 1.0;
		node[u].r = bw_ls_variate(lk, dep, x[q] >> eb);
	}
	if (q == F - 1)
		start[u + 1] = F;
}

/* Row i's c (bw_ls_c: its neighbors src[off[i] ..), fanout k; ones: every pi 1). Threads
 * [0, nd). */
static inline BW_HD void bw_sk_ls_c(int64_t i, const int64_t *off, int64_t nd, int64_t k, const int32_t *src,
				    const bw_ls_node *node, bool ones, double *c)
{
	if (i < nd)
		c[i] = bw_ls_c(src + off[i], off[i + 1] - off[i], k, node, ones, NULL);
}

/* A round's update of source u (bw_ls_pi over its run [start[u], start[u + 1])). Threads
 * [0, m). */
static inline BW_HD void bw_sk_ls_pi(int64_t u, int64_t m, const int64_t *start, const int32_t *erow, const double *c,
				     bw_ls_node *node)
{
	if (u < m)
		bw_ls_pi(&node[u], c, erow, start[u], start[u + 1]);
}

/* A round's expected distinct sources into *ex, summed in source order as the CPU does: one
 * thread (i == 0). */
static inline BW_HD void bw_sk_ls_ex(int64_t i, const bw_ls_node *node, int64_t m, double *ex)
{
	if (i != 0)
		return;
	double s = 0;
	for (int64_t u = 0; u < m; u++)
		s += bw_ls_expect(node[u].pi);
	*ex = s;
}

/* cnt[i] = row i's sample size: bw_ls_count for a row of degree above k, else its degree
 * (cnt[nd] = 0, for the offsets' last entry). Threads [0, nd]. */
static inline BW_HD void bw_sk_ls_count(int64_t i, const int64_t *off, int64_t nd, int64_t k, const int32_t *src,
					const bw_ls_node *node, const double *c, int64_t *cnt)
{
	if (i > nd)
		return;
	if (i == nd) {
		cnt[i] = 0;
		return;
	}
	const int64_t d = off[i + 1] - off[i];
	cnt[i] = d > k ? bw_ls_count(src + off[i], d, c[i], node) : d;
}

/* Row i's picks, global ids in increasing row position, into eid[ip[i], ip[i+1]) and their
 * weights into ew: a row of degree above k bw_ls_row's (the positions written in the row's
 * output slots, then its ids in place), a row taken whole its neighbors with weights 1.
 * Threads [0, nd). */
static inline BW_HD void bw_sk_ls_draw(int64_t i, const int64_t *gp, const void *gi, int width, const int64_t *nodes,
				       int64_t nd, const int64_t *off, int64_t k, const int32_t *src,
				       const bw_ls_node *node, const double *c, const int64_t *ip, int64_t *eid,
				       float *ew)
{
	if (i >= nd)
		return;
	const int64_t s = gp[nodes[i]], d = off[i + 1] - off[i];
	int64_t *out = eid + ip[i];
	if (d > k) {
		const int64_t n = bw_ls_row(src + off[i], s, d, c[i], node, (uint64_t *)out, ew + ip[i]);
		for (int64_t j = 0; j < n; j++)
			out[j] = bw_sk_nbr(gi, width, out[j]);
		return;
	}
	for (int64_t j = 0; j < d; j++) {
		out[j] = bw_sk_nbr(gi, width, s + j);
		ew[ip[i] + j] = 1.0f;
	}
}

/* flag[i] = 1 when uniq[i] is not one of the nd nodes (sorted: sg) yet; threads [0, nu]. */
static inline BW_HD void bw_sk_flag(int64_t i, const int64_t *uniq, int64_t nu, const int64_t *sg, int64_t nd,
				    int64_t *flag)
{
	if (i > nu)
		return;
	if (i == nu) {
		flag[i] = 0;
		return;
	}
	const int64_t u = uniq[i], p = bw_sk_lower_bound(sg, nd, u);
	flag[i] = !(p < nd && sg[p] == u);
}

/* The new nodes, in increasing global id, after the nd nodes (rank: flag's exclusive sum). */
static inline BW_HD void bw_sk_new(int64_t i, const int64_t *uniq, int64_t nu, const int64_t *rank, int64_t *newn)
{
	if (i < nu && rank[i + 1] != rank[i])
		newn[rank[i]] = uniq[i];
}

/* Edge e's local source id: its node's, or nd + its rank among the new nodes. */
static inline BW_HD void bw_sk_edges(int64_t e, const int64_t *eid, int64_t E, const int64_t *sg, const int32_t *sl,
				     int64_t nd, const int64_t *uniq, int64_t nu, const int64_t *rank, int32_t *ind)
{
	if (e >= E)
		return;
	const int64_t u = eid[e], p = bw_sk_lower_bound(sg, nd, u);
	ind[e] = p < nd && sg[p] == u ? sl[p] : (int32_t)(nd + rank[bw_sk_lower_bound(uniq, nu, u)]);
}

/* The sorted view of nodes and new nodes (two disjoint sorted sets): each element's place is
 * its index plus the count of the other set's smaller elements. Threads [0, nd + nnew). */
static inline BW_HD void bw_sk_merge(int64_t i, const int64_t *sg, const int32_t *sl, int64_t nd, const int64_t *newn,
				     int64_t nnew, int64_t *sg2, int32_t *sl2)
{
	if (i < nd) {
		const int64_t at = i + bw_sk_lower_bound(newn, nnew, sg[i]);
		sg2[at] = sg[i];
		sl2[at] = sl[i];
	} else if (i < nd + nnew) {
		const int64_t m = i - nd, at = m + bw_sk_lower_bound(sg, nd, newn[m]);
		sg2[at] = newn[m];
		sl2[at] = (int32_t)(nd + m);
	}
}

/* Whether sorted seed i repeats the one before it: *out becomes the smallest such seed. */
static inline BW_HD void bw_sk_repeat(int64_t i, const int64_t *sg, int64_t n, unsigned long long *out)
{
	if (i > 0 && i < n && sg[i] == sg[i - 1]) {
#ifdef __CUDA_ARCH__
		atomicMin(out, (unsigned long long)sg[i]);
#else
		if ((unsigned long long)sg[i] < *out)
			*out = (unsigned long long)sg[i];
#endif
	}
}

static inline BW_HD void bw_sk_iota(int64_t i, int32_t *a, int64_t n)
{
	if (i < n)
		a[i] = (int32_t)i;
}

#endif
