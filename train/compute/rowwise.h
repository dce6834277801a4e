/* rowwise.h: the row-wise steps the CPU backend's loops and the CUDA backend's kernels share
 * (BW_HD: one source, so the two agree): a row's argmax, a labelled row's softmax
 * cross-entropy, a row's dropout mask. */
#ifndef BURROW_COMPUTE_ROWWISE_H
#define BURROW_COMPUTE_ROWWISE_H

#include "../../core/internal.h"

#include <math.h>

/* The first column of z[0, cols) that holds its largest value. */
static inline BW_HD int32_t bw_row_argmax(const float *z, int64_t cols)
{
	int32_t best = 0;
	for (int64_t c = 1; c < cols; c++)
		if (z[c] > z[best])
			best = (int32_t)c;
	return best;
}

/* Row z[0, classes) labelled y (0 <= y < classes): its loss log(sum_c exp z[c]) - z[y], in
 * double; *hit = whether its argmax is y; when g is not NULL, g[0, classes) =
 * (softmax(z) - onehot(y)) * inv, inv being 1 / the rows counted. */
static inline BW_HD double bw_xent_row(const float *z, int64_t classes, int32_t y, double inv, float *g, bool *hit)
{
	const int32_t am = bw_row_argmax(z, classes);
	const double mx = z[am];
	double se = 0.0;
	for (int64_t c = 0; c < classes; c++)
		se += exp((double)z[c] - mx);
	const double lse = mx + log(se);
	*hit = am == y;
	if (g) {
		for (int64_t c = 0; c < classes; c++)
			g[c] = (float)(exp((double)z[c] - lse) * inv);
		g[y] -= (float)inv;
	}
	return lse - (double)z[y];
}

/* Row r's dropout mask m[0, cols) from the stream bw_key(key, r): each 64-bit draw decides
 * two elements, kept (1) when its 32-bit half is >= thresh = p * 2^32. */
static inline BW_HD void bw_dropout_mask_row(uint8_t *m, int64_t cols, uint64_t key, int64_t r, uint64_t thresh)
{
	bw_rng rng;
	bw_rng_seed(&rng, bw_key(key, (uint64_t)r));
	for (int64_t c = 0; c < cols; c += 2) {
		const uint64_t u = bw_rng_next(&rng);
		m[c] = (u & 0xffffffffu) >= thresh;
		if (c + 1 < cols)
			m[c + 1] = (u >> 32) >= thresh;
	}
}

#endif
