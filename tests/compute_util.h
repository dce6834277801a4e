/* compute_util.h: what the compute tests share (test_ops.c, test_train.c): tolerances
 * comparison, seeded fills, random blocks and the slow double-precision references of
 * aggregation and GEMM. Include after criterion, compute.h and util.h. */
#ifndef BURROW_TEST_COMPUTE_UTIL_H
#define BURROW_TEST_COMPUTE_UTIL_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

static inline bool close_to(double got, double ref, double tol) { return fabs(got - ref) <= tol * (1.0 + fabs(ref)); }

static inline void fill_uniform(float *x, int64_t n, uint64_t key, double lo, double hi)
{
	bw_rng r;
	bw_rng_seed(&r, key);
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(lo + (hi - lo) * bw_rng_uniform(&r));
}

static inline double *to_double(const float *x, int64_t n)
{
	double *d = malloc((size_t)(n ? n : 1) * sizeof *d);
	for (int64_t i = 0; i < n; i++)
		d[i] = x[i];
	return d;
}

/* ------------------------------------------------------------ random blocks */

typedef struct tblock {
	bw_block b;
	int64_t *indptr;
	int32_t *indices;
} tblock;

/* nd destinations over ns sources: row 0 empty, others 0..max_deg random sources
 * (duplicates possible), so empty rows, repeated edges and unread sources all occur.
 * bipartite: a typed block (bw_block.bipartite), nd may exceed ns. */
static inline void make_block_as(tblock *t, int64_t nd, int64_t ns, int max_deg, uint64_t key, bool bipartite)
{
	bw_rng r;
	bw_rng_seed(&r, key);
	t->indptr = malloc((size_t)(nd + 1) * sizeof *t->indptr);
	t->indices = malloc((size_t)(nd * max_deg + 1) * sizeof *t->indices);
	t->indptr[0] = 0;
	for (int64_t i = 0; i < nd; i++) {
		int64_t deg = i == 0 ? 0 : (int64_t)bw_rng_below(&r, (uint64_t)max_deg + 1), k = t->indptr[i];
		for (int64_t e = 0; e < deg; e++)
			t->indices[k++] = (int32_t)bw_rng_below(&r, (uint64_t)ns);
		t->indptr[i + 1] = k;
	}
	bw_block_init(&t->b, nd, ns, t->indptr, t->indices);
	t->b.bipartite = bipartite;
	cr_assert_eq(bw_block_check(&t->b), 0, "%s", burrow_last_error());
}

static inline void make_block(tblock *t, int64_t nd, int64_t ns, int max_deg, uint64_t key)
{
	make_block_as(t, nd, ns, max_deg, key, false);
}

static inline void free_block(tblock *t)
{
	bw_block_release(&t->b);
	free(t->indptr);
	free(t->indices);
}

/* The aggregation as a dense [nd, ns] matrix in double: the obvious definition. */
static inline double *ref_agg_matrix(const bw_block *b, bw_agg mode)
{
	const int64_t nd = b->num_dst, ns = b->num_src;
	double *w = calloc((size_t)(nd * ns), sizeof *w);
	for (int64_t i = 0; i < nd; i++) {
		const int64_t deg = b->indptr[i + 1] - b->indptr[i];
		for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
			const int64_t j = b->indices[e];
			w[i * ns + j] += mode == BW_AGG_SUM ? 1.0 : mode == BW_AGG_MEAN ? 1.0 / (double)deg
							 : (double)b->dst_norm[i] * b->src_norm[j];
		}
		if (mode == BW_AGG_GCN)
			w[i * ns + i] += (double)b->dst_norm[i] * b->src_norm[i];
	}
	return w;
}

/* c[m, n] = a[m, k] b[k, n] in double, with optional transposes of the stored matrices. */
static inline void ref_matmul(const double *a, bool ta, const double *b, bool tb, int64_t m, int64_t n, int64_t k, double *c)
{
	for (int64_t i = 0; i < m; i++)
		for (int64_t j = 0; j < n; j++) {
			double s = 0;
			for (int64_t q = 0; q < k; q++)
				s += (ta ? a[q * m + i] : a[i * k + q]) * (tb ? b[j * k + q] : b[q * n + j]);
			c[i * n + j] = s;
		}
}

#endif
