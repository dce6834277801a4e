/* bce.c: the multi-label loss (binary cross-entropy with logits over the known labels), on the host. */
#include "backend_impl.h"

#include <math.h>
#include <string.h>

/* The first bad entry of the selection: a row out of range or a label not in {-1, 0, 1}. */
static bool bce_check(int64_t rows, int64_t tasks, const int8_t *labels, const int64_t *sel, int64_t n, bw_loss *out,
		      int64_t *known)
{
	int64_t cnt = 0;
	for (int64_t k = 0; k < n; k++) {
		const int64_t r = sel ? sel[k] : k;
		if (r < 0 || r >= rows) {
			*out = (bw_loss){.bad = 1, .bad_is_row = 1, .bad_row = k, .bad_value = r, .rows = rows,
					 .classes = tasks};
			return false;
		}
		for (int64_t t = 0; t < tasks; t++) {
			const int8_t y = labels[r * tasks + t];
			if (y < -1 || y > 1) {
				*out = (bw_loss){.bad = 1, .bad_row = r, .bad_value = y, .rows = rows, .classes = tasks};
				return false;
			}
			cnt += y >= 0;
		}
	}
	*known = cnt;
	return true;
}

/* Row r's loss terms (into *sum) and gradient over its known labels; returns the correct ones. */
static int64_t bce_row(const float *x, const int8_t *y, int64_t tasks, double inv, float *g, double *sum)
{
	double s = 0;
	int64_t hit = 0;
	for (int64_t t = 0; t < tasks; t++) {
		if (y[t] < 0)
			continue;
		const double v = x[t], yt = y[t];
		s += (v > 0 ? v : 0) - v * yt + log1p(exp(-fabs(v)));
		hit += (v > 0) == (y[t] == 1);
		if (g) {
			const double p = v >= 0 ? 1 / (1 + exp(-v)) : exp(v) / (1 + exp(v));
			g[t] = (float)((p - yt) * inv);
		}
	}
	*sum = s;
	return hit;
}

int bw_bce_loss_host(const float *logits, int64_t rows, int64_t tasks, const int8_t *labels, const int64_t *sel,
		     int64_t nsel, float *grad, bw_loss *out, int threads)
{
	const int64_t n = sel ? nsel : rows;
	int64_t known = 0, hits = 0;
	if (grad)
		memset(grad, 0, (size_t)(rows * tasks) * sizeof *grad);
	if (!bce_check(rows, tasks, labels, sel, n, out, &known))
		return 0;
	double *rs = bw_malloc((size_t)n * sizeof *rs + 1);
	if (!rs)
		return BURROW_E_NOMEM;
	const double inv = known ? 1.0 / (double)known : 0.0;
#pragma omp parallel for schedule(dynamic, bw_row_chunk(tasks)) reduction(+ : hits) num_threads(threads > 0 ? threads : 1)
	for (int64_t k = 0; k < n; k++) {
		const int64_t r = sel ? sel[k] : k;
		hits += bce_row(logits + r * tasks, labels + r * tasks, tasks, inv, grad ? grad + r * tasks : NULL, &rs[k]);
	}
	double sum = 0;
	for (int64_t k = 0; k < n; k++)
		sum += rs[k];
	bw_free(rs);
	*out = (bw_loss){.loss = sum * inv, .counted = known, .correct = hits, .rows = rows, .classes = tasks};
	return 0;
}
