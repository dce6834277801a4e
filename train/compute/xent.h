/* xent.h: a row's argmax and one labelled row's softmax cross-entropy: the same code in the
 * CPU backend's loop and the CUDA backend's kernel (BW_HD). */
#ifndef BURROW_COMPUTE_XENT_H
#define BURROW_COMPUTE_XENT_H

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

#endif
