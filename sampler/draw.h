/* draw.h: the one row draw of neighbor sampling, shared by the sampler (sample.c), its GPU
 * twin (sample_cuda.cu, the same function compiled for the device) and distributed
 * mini-batch training (train/dist/dist_mb.c): a uniform k-subset of a row's positions
 * [0, d), without replacement, by Floyd's algorithm, from a keyed stream; and the one keyed
 * shuffle of an epoch's seeds (host only). */
#ifndef BURROW_SAMPLER_DRAW_H
#define BURROW_SAMPLER_DRAW_H

#include "../core/internal.h"

#include <stdlib.h>
#include <string.h>

/* Up to this many picks, membership is a linear scan; above, an open-addressing hash set. */
#define BW_SMALL_FANOUT 32

/* Entries of the hash set that k picks need: the smallest power of two >= 2k. */
static inline BW_HD size_t bw_draw_table_cap(int64_t k)
{
	size_t cap = 1;
	while (cap < 2 * (size_t)k)
		cap <<= 1;
	return cap;
}

/* pos[0, k) = a uniform k-subset of [0, d), 0 < k < d, in increasing order (Floyd: for
 * j = d-k .. d-1 draw t in [0, j] and take t, or j when t is taken already). table:
 * bw_draw_table_cap(k) entries of scratch when k > BW_SMALL_FANOUT; NULL there makes the
 * membership test a linear scan, as below that size (the device does so: one thread per
 * row has no room for a table). How membership is tested changes no pick: the picks are
 * a function of r's stream alone, on the host and on the device. */
static inline BW_HD void bw_draw(bw_rng *r, int64_t d, int64_t k, int64_t *pos, int64_t *table)
{
	int64_t m = 0;
	if (k <= BW_SMALL_FANOUT || !table) {
		for (int64_t j = d - k; j < d; j++) {
			int64_t t = (int64_t)bw_rng_below(r, (uint64_t)j + 1);
			for (int64_t q = 0; q < m; q++)
				if (pos[q] == t) {
					t = j;
					break;
				}
			pos[m++] = t;
		}
#ifdef __CUDA_ARCH__
		bw_isort_i64(pos, k);
#else
		bw_sort_i64(pos, k); /* insertion sort up to BW_ISORT_MAX = BW_SMALL_FANOUT */
#endif
		return;
	}
	const size_t cap = bw_draw_table_cap(k);
#ifdef __CUDA_ARCH__
	const int sh = __clzll((long long)(cap - 1));
	for (size_t i = 0; i < cap; i++)
		table[i] = 0;
#else
	const int sh = __builtin_clzll((unsigned long long)(cap - 1)); /* cap >= 128: the hash's top bits */
	memset(table, 0, cap * sizeof *table);
#endif
	for (int64_t j = d - k; j < d; j++) {
		int64_t t = (int64_t)bw_rng_below(r, (uint64_t)j + 1);
		for (int pass = 0; pass < 2; pass++) { /* insert t; on a hit insert j instead */
			size_t h = (size_t)(((uint64_t)t * 0x9E3779B97F4A7C15ull) >> sh) & (cap - 1);
			while (table[h] && table[h] != t + 1)
				h = (h + 1) & (cap - 1);
			if (!table[h]) {
				table[h] = t + 1;
				pos[m++] = t;
				break;
			}
			t = j;
		}
	}
#ifdef __CUDA_ARCH__
	bw_isort_i64(pos, k);
#else
	bw_sort_i64(pos, k);
#endif
}

/* Shuffle a[0, n) in place (Fisher-Yates from the end) with the stream seeded by key: the
 * order is a function of (a, key) alone. The epoch's seed order of the sampler and of each
 * rank of distributed mini-batch training. */
static inline void bw_shuffle(int64_t *a, int64_t n, uint64_t key)
{
	bw_rng r;
	bw_rng_seed(&r, key);
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = (int64_t)bw_rng_below(&r, (uint64_t)i + 1), t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

#endif
