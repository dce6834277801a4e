/* labor.h: one CSR row's LABOR picks, shared by the homogeneous (sample.c) and typed
 * (typed.c) CPU samplers and, through its __host__ __device__ (BW_HD) part, by the GPU
 * sampler (sample_kernels.h, bw_sk_labor): one definition of the variates and the bottom-k. */
#ifndef BURROW_SAMPLER_LABOR_H
#define BURROW_SAMPLER_LABOR_H

#include "sampler_internal.h"

#include <math.h>

/* Entry j of a CSR's indices (int32 when w4, else int64) as an unsigned id. */
static inline BW_HD uint64_t bw_csr_id(const void *ind, bool w4, int64_t j)
{
	return w4 ? (uint64_t)(uint32_t)((const int32_t *)ind)[j] : (uint64_t)((const int64_t *)ind)[j];
}

/* One candidate of a LABOR row: position p (the p-th offered, p = 0, 1, ...) with variate
 * key into the max-heap hk/hp of the k smallest (key, position) so far. */
static inline BW_HD void bw_labor_offer(uint64_t *hk, int64_t *hp, int64_t k, int64_t p, uint64_t key)
{
	int64_t i;
	if (p < k) { /* sift up: parents of larger (key, position) above */
		for (i = p; i > 0 && hk[(i - 1) / 2] <= key; i = (i - 1) / 2) {
			hk[i] = hk[(i - 1) / 2];
			hp[i] = hp[(i - 1) / 2];
		}
	} else if (key < hk[0]) { /* (key, p) beats the largest: p is above every position held */
		for (i = 0;;) {   /* sift down from the root */
			int64_t c = 2 * i + 1;
			if (c >= k)
				break;
			if (c + 1 < k && (hk[c + 1] > hk[c] || (hk[c + 1] == hk[c] && hp[c + 1] > hp[c])))
				c++;
			if (hk[c] < key || (hk[c] == key && hp[c] < p))
				break;
			hk[i] = hk[c];
			hp[i] = hp[c];
			i = c;
		}
	} else {
		return;
	}
	hk[i] = key;
	hp[i] = p;
}

/* A standard normal from the 64 bits h (Box-Muller on its two halves). */
static inline BW_HD double bw_labor_normal(uint64_t h)
{
	const double u1 = ((double)(h >> 32) + 1.0) * 0x1p-32, u2 = (double)(h & 0xffffffffu) * 0x1p-32;
	return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Batch dependency (burrow_sampler_opts.labor_batch_dependency): source v's variate in [0, 1)
 * for a batch a fraction dep->c of the way from its group's variates (under key k1) to the next
 * group's (k2): the two normals turned by the angle c pi / 2 are again a standard normal, and
 * its normal CDF a uniform, so every batch's variates are uniform and independent across
 * sources, and consecutive batches' are close (GraphBolt's batch_dependency). */
static inline BW_HD double bw_labor_dep_variate(const bw_labor_dep *dep, uint64_t v)
{
	const double z = dep->cos * bw_labor_normal(bw_key(dep->k1, v)) + dep->sin * bw_labor_normal(bw_key(dep->k2, v));
	const double u = 0.5 * erfc(-z * 0.7071067811865476);
	return u < 1.0 ? u : 0x1.fffffffffffffp-1;
}

/* LABOR's key of source v under the layer key lk, or with dep its dependent variate scaled to
 * 64 bits (the bottom-k compares keys). */
static inline BW_HD uint64_t bw_labor_key(uint64_t lk, const bw_labor_dep *dep, uint64_t v)
{
	return dep ? (uint64_t)(bw_labor_dep_variate(dep, v) * 0x1p64) : bw_key(lk, v);
}

/* Layer l's LABOR keys from its layer key lkey (bw_key(batch key, l)), the one derivation of
 * the CPU (sample.c) and the GPU (sample_cuda.cu) samplers: *lk, the key of the layer's own
 * variates bw_key(*lk, v), apart from the rows' streams bw_key(lkey, v); and with batch
 * dependency (b's keys set) *dep, the mix of its group's and the next group's variates.
 * Returns dep then, else NULL (b NULL: none). Host only: cos and sin are the host's. */
static inline const bw_labor_dep *bw_labor_layer(const bw_labor_batch *b, int l, uint64_t lkey, uint64_t *lk,
						 bw_labor_dep *dep)
{
	*lk = lkey ^ BW_LABOR_SALT;
	if (!b || (!b->k1 && !b->k2))
		return NULL;
	const double a = b->c * 1.5707963267948966;
	dep->k1 = bw_key(b->k1, (uint64_t)l) ^ BW_LABOR_SALT;
	dep->k2 = bw_key(b->k2, (uint64_t)l) ^ BW_LABOR_SALT;
	dep->cos = cos(a);
	dep->sin = sin(a);
	return dep;
}

/* The bottom-k of a row [s, s + d) of the CSR's indices gi, 0 < k < d: into hp[0, k) the
 * positions (from 0) of the k neighbors whose keys (bw_labor_key(lk, dep, id)) are smallest,
 * ties by the earlier position, in increasing order; hk [k] is the heap's keys. The one row
 * pick of LABOR, on the host (bw_labor_row) and on the device (bw_sk_labor). */
static inline BW_HD void bw_labor_pick(const void *gi, bool w4, int64_t s, int64_t d, int64_t k, uint64_t lk,
				       const bw_labor_dep *dep, uint64_t *hk, int64_t *hp)
{
	for (int64_t p = 0; p < d; p++)
		bw_labor_offer(hk, hp, k, p, bw_labor_key(lk, dep, bw_csr_id(gi, w4, s + p)));
#ifdef __CUDA_ARCH__
	bw_isort_i64(hp, k);
#else
	bw_sort_i64(hp, k); /* insertion sort up to BW_ISORT_MAX = BW_SMALL_FANOUT */
#endif
}

/* LABOR (Balin and Catalyurek, NeurIPS 2023), stage one of a row: every source node t of the
 * layer has one variate, bw_key(lk, t), shared by all the layer's destinations, and a row keeps
 * the k neighbors whose variates are smallest (ties: the earlier position). The variates are
 * independent and uniform, so each row's picks are a uniform k-subset of its positions, as
 * neighbor sampling's are (same fanout, same marginals); destinations that share neighbors
 * pick the same ones, so a batch needs fewer distinct inputs. Reads the whole row (O(d),
 * as DGL's LABOR does); a max-heap of the k best so far. Rows with k < d only. */
static inline void bw_labor_row(const void *gi, bool w4, int64_t s, int64_t d, int64_t k, uint64_t *out, uint64_t lk,
				const bw_labor_dep *dep, bw_row_scratch *rs)
{
	/* k < d: a row taken whole is draw_row's */
	uint64_t ks[BW_SMALL_FANOUT];
	int64_t ps[BW_SMALL_FANOUT];
	uint64_t *hk = k <= BW_SMALL_FANOUT ? ks : (uint64_t *)rs->table; /* table: >= 2k entries */
	int64_t *hp = k <= BW_SMALL_FANOUT ? ps : rs->pos;
	bw_labor_pick(gi, w4, s, d, k, lk, dep, hk, hp);
	for (int64_t j = 0; j < k; j++)
		out[j] = (uint64_t)(s + hp[j]);
}

#endif
