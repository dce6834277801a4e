/* scorer.c: link prediction's scorers (dot product, MLP over the Hadamard product), the mean
 * binary cross-entropy with logits of their scores, and its backward (scorer.h). */
#include "scorer.h"

#include <math.h>
#include <string.h>

void bw_scorer_close(bw_scorer *s)
{
	if (!s)
		return;
	bw_free(s->params);
	bw_free(s->grads);
	bw_free(s->z);
	bw_free(s->a);
	bw_free(s->ga);
	bw_free(s);
}

int bw_scorer_open(bw_scorer **out, int kind, int64_t dim, uint64_t key, int threads)
{
	*out = NULL;
	if ((kind != 0 && kind != 1) || dim < 1 || dim > (1 << 16))
		return bw_err(BURROW_E_INVAL, "scorer: kind %d over width %lld: want dot (0) or mlp (1), width 1 .. 2^16",
			      kind, (long long)dim);
	bw_scorer *s = bw_calloc(1, sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	s->kind = kind;
	s->dim = dim;
	s->threads = threads > 0 ? threads : 1;
	s->num_params = kind == 1 ? dim * dim + 2 * dim + 1 : 0;
	s->params = bw_calloc((size_t)s->num_params + 1, sizeof *s->params);
	s->grads = bw_calloc((size_t)s->num_params + 1, sizeof *s->grads);
	if (!s->params || !s->grads) {
		bw_scorer_close(s);
		return BURROW_E_NOMEM;
	}
	bw_rng r;
	bw_rng_seed(&r, key);
	const double a1 = sqrt(6.0 / (double)(2 * dim)), a2 = sqrt(6.0 / (double)(dim + 1));
	for (int64_t i = 0; kind == 1 && i < dim * dim; i++)
		s->params[i] = (float)((2 * bw_rng_uniform(&r) - 1) * a1);
	for (int64_t i = 0; kind == 1 && i < dim; i++)
		s->params[dim * dim + dim + i] = (float)((2 * bw_rng_uniform(&r) - 1) * a2);
	*out = s;
	return 0;
}

static int reserve(bw_scorer *s, int64_t n)
{
	if (s->kind != 1 || n <= s->cap)
		return 0;
	const size_t bytes = (size_t)(n * s->dim) * sizeof(float);
	bw_free(s->z);
	bw_free(s->a);
	bw_free(s->ga);
	s->z = bw_malloc(bytes);
	s->a = bw_malloc(bytes);
	s->ga = bw_malloc(bytes);
	s->cap = s->z && s->a && s->ga ? n : 0;
	return s->cap ? 0 : BURROW_E_NOMEM;
}

/* Pair i's score; the mlp keeps z and a (rows i of s->z, s->a). */
static float score_one(bw_scorer *s, const float *hu, const float *hv, int64_t i)
{
	const int64_t d = s->dim;
	double acc = 0;
	if (s->kind == 0) {
		for (int64_t j = 0; j < d; j++)
			acc += (double)hu[j] * hv[j];
		return (float)acc;
	}
	const float *w1 = s->params, *b1 = w1 + d * d, *w2 = b1 + d, *b2 = w2 + d;
	float *z = s->z + i * d, *a = s->a + i * d;
	for (int64_t j = 0; j < d; j++) {
		z[j] = hu[j] * hv[j];
		a[j] = b1[j];
	}
	for (int64_t k = 0; k < d; k++) /* a = z W1 + b1, W1 row k scaled by z[k] */
		for (int64_t j = 0; j < d; j++)
			a[j] += z[k] * w1[k * d + j];
	for (int64_t j = 0; j < d; j++) {
		a[j] = a[j] > 0 ? a[j] : 0;
		acc += (double)a[j] * w2[j];
	}
	return (float)(acc + b2[0]);
}

int bw_scorer_score(bw_scorer *s, const float *h, const int32_t *src, const int32_t *dst, int64_t n, float *out)
{
	int st = reserve(s, n);
	if (st)
		return st;
	const int64_t d = s->dim;
#pragma omp parallel for schedule(dynamic, bw_row_chunk(d)) num_threads(s->threads) if (n * d * (s->kind ? d : 1) > 65536)
	for (int64_t i = 0; i < n; i++)
		out[i] = score_one(s, h + (int64_t)src[i] * d, h + (int64_t)dst[i] * d, i);
	return 0;
}

/* log(1 + e^x) without overflow. */
static double softplus(double x) { return x > 0 ? x + log1p(exp(-x)) : log1p(exp(x)); }

int bw_scorer_loss(bw_scorer *s, const float *h, const int32_t *src, const int32_t *dst, const float *label, int64_t n,
		   double *loss, float *gh)
{
	const int64_t d = s->dim;
	float *sc = bw_malloc((size_t)(n + 1) * sizeof *sc);
	int st = sc ? bw_scorer_score(s, h, src, dst, n, sc) : BURROW_E_NOMEM;
	if (st) {
		bw_free(sc);
		return st;
	}
	double sum = 0;
	memset(s->grads, 0, (size_t)s->num_params * sizeof *s->grads);
	for (int64_t i = 0; i < n; i++) { /* ds: dLoss/dscore, kept in sc */
		const double x = sc[i];
		sum += softplus(x) - label[i] * x;
		sc[i] = (float)((1.0 / (1.0 + exp(-x)) - label[i]) / (double)n);
	}
	*loss = n ? sum / (double)n : 0;
	float *w1 = s->params, *w2 = w1 + d * d + d, *gw1 = s->grads, *gb1 = gw1 + d * d, *gw2 = gb1 + d, *gb2 = gw2 + d;
	for (int64_t i = 0; i < n; i++) {
		const float *hu = h + (int64_t)src[i] * d, *hv = h + (int64_t)dst[i] * d;
		float *gu = gh + (int64_t)src[i] * d, *gv = gh + (int64_t)dst[i] * d;
		const float g = sc[i];
		if (s->kind == 0) {
			for (int64_t j = 0; j < d; j++) {
				const float a = hu[j], b = hv[j];
				gu[j] += g * b;
				gv[j] += g * a;
			}
			continue;
		}
		const float *z = s->z + i * d, *a = s->a + i * d;
		float *ga = s->ga + i * d;
		gb2[0] += g;
		for (int64_t j = 0; j < d; j++) {
			gw2[j] += g * a[j];
			ga[j] = a[j] > 0 ? g * w2[j] : 0;
			gb1[j] += ga[j];
		}
		for (int64_t k = 0; k < d; k++) { /* gz[k] = <W1 row k, ga>; gW1 row k += z[k] ga */
			float gz = 0;
			for (int64_t j = 0; j < d; j++) {
				gz += w1[k * d + j] * ga[j];
				gw1[k * d + j] += z[k] * ga[j];
			}
			const float a0 = hu[k], b0 = hv[k];
			gu[k] += gz * b0;
			gv[k] += gz * a0;
		}
	}
	bw_free(sc);
	return 0;
}
