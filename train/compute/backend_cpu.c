/* ops_cpu.c: the CPU backend: GEMM through OpenBLAS, CSR aggregation and elementwise
 * kernels with OpenMP. Every kernel's result is independent of the thread count except the
 * loss's floating-point sum (an OpenMP reduction). It is the reference the CUDA backend
 * must match. */
#include "train.h"

#include <cblas.h>
#include <math.h>
#include <string.h>

static void cpu_gemm(const bw_backend *be, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
		     const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	(void)be;
	if (m == 0 || n == 0)
		return;
	if (k == 0) {
		for (int64_t i = 0; i < m; i++)
			for (int64_t j = 0; j < n; j++)
				c[i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[i * ldc + j];
		return;
	}
	cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m,
		    (blasint)n, (blasint)k, alpha, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

static void cpu_agg_fwd(const bw_backend *be, const bw_block *b, bw_agg mode, const float *x, int64_t dim,
			const int64_t *rows, int64_t nrows, const int64_t *lo, const int64_t *hi, bool add, float *out)
{
	const int64_t n = rows ? nrows : b->num_dst;
	const int64_t *ip = b->indptr;
	const int32_t *ix = b->indices;
	const bool whole = !lo;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t k = 0; k < n; k++) {
		const int64_t i = rows ? rows[k] : k;
		const int64_t e0 = whole ? ip[i] : lo[i], e1 = whole ? ip[i + 1] : hi[i];
		float *o = out + i * dim;
		if (mode == BW_AGG_GCN) {
			const float di = b->dst_norm[i];
			if (!add) {
				const float self = di * b->src_norm[i];
				const float *xi = x + i * dim;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] = self * xi[c];
			}
			for (int64_t e = e0; e < e1; e++) {
				const float w = di * b->src_norm[ix[e]];
				const float *xj = x + (int64_t)ix[e] * dim;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] += w * xj[c];
			}
			continue;
		}
		const int64_t deg = ip[i + 1] - ip[i];
		if (whole) {
			memset(o, 0, (size_t)dim * sizeof *o);
			for (int64_t e = e0; e < e1; e++) {
				const float *xj = x + (int64_t)ix[e] * dim;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] += xj[c];
			}
			if (mode == BW_AGG_MEAN && deg > 1) {
				const float s = 1.0f / (float)deg;
#pragma omp simd
				for (int64_t c = 0; c < dim; c++)
					o[c] *= s;
			}
			continue;
		}
		/* part of the row: each term scaled as the whole row scales it */
		const float s = mode == BW_AGG_MEAN && deg > 1 ? 1.0f / (float)deg : 1.0f;
		if (!add)
			memset(o, 0, (size_t)dim * sizeof *o);
		for (int64_t e = e0; e < e1; e++) {
			const float *xj = x + (int64_t)ix[e] * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] += s * xj[c];
		}
	}
}

/* The transpose walk: source j gathers from the destination rows that read it. */
static void cpu_agg_bwd(const bw_backend *be, const bw_block *b, bw_agg mode, const float *gout, int64_t dim,
			const int64_t *srcs, int64_t nsrcs, float *gx)
{
	const int64_t n = srcs ? nsrcs : b->num_src;
	const int64_t *ip = b->indptr, *tp = b->t_indptr;
	const int32_t *ti = b->t_indices;
#pragma omp parallel for schedule(dynamic, 64) num_threads(be->threads)
	for (int64_t k = 0; k < n; k++) {
		const int64_t j = srcs ? srcs[k] : k;
		float *o = gx + j * dim;
		memset(o, 0, (size_t)dim * sizeof *o);
		if (mode == BW_AGG_GCN && j < b->num_dst) {
			const float self = b->dst_norm[j] * b->src_norm[j];
			const float *g = gout + j * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] = self * g[c];
		}
		for (int64_t e = tp[j]; e < tp[j + 1]; e++) {
			const int64_t i = ti[e];
			float w = 1.0f;
			if (mode == BW_AGG_MEAN)
				w = 1.0f / (float)(ip[i + 1] - ip[i]);
			else if (mode == BW_AGG_GCN)
				w = b->dst_norm[i] * b->src_norm[j];
			const float *g = gout + i * dim;
#pragma omp simd
			for (int64_t c = 0; c < dim; c++)
				o[c] += w * g[c];
		}
	}
}

static void cpu_bias_add(const bw_backend *be, float *y, int64_t rows, int64_t cols, const float *bias)
{
#pragma omp parallel for schedule(static) num_threads(be->threads)
	for (int64_t r = 0; r < rows; r++)
#pragma omp simd
		for (int64_t c = 0; c < cols; c++)
			y[r * cols + c] += bias[c];
}

/* Column sums in double over groups of 16 columns: the order of additions is fixed. */
static void cpu_col_sum(const bw_backend *be, const float *g, int64_t rows, int64_t cols, float *out)
{
	const int64_t groups = (cols + 15) / 16;
#pragma omp parallel for schedule(static) num_threads(be->threads)
	for (int64_t q = 0; q < groups; q++) {
		const int64_t c0 = q * 16, c1 = BW_MIN(cols, c0 + 16);
		double acc[16] = {0};
		for (int64_t r = 0; r < rows; r++)
			for (int64_t c = c0; c < c1; c++)
				acc[c - c0] += g[r * cols + c];
		for (int64_t c = c0; c < c1; c++)
			out[c] = (float)acc[c - c0];
	}
}

static void cpu_relu_fwd(const bw_backend *be, float *x, int64_t n)
{
#pragma omp parallel for simd schedule(static) num_threads(be->threads)
	for (int64_t i = 0; i < n; i++)
		x[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes through, as in PyTorch: a NaN must reach the loss */
}

static void cpu_relu_bwd(const bw_backend *be, float *g, const float *y, int64_t n)
{
#pragma omp parallel for simd schedule(static) num_threads(be->threads)
	for (int64_t i = 0; i < n; i++)
		g[i] = y[i] > 0.0f ? g[i] : 0.0f;
}

/* Each 64-bit draw decides two elements: keep when a 32-bit half is >= p * 2^32. */
static void cpu_dropout_fwd(const bw_backend *be, float *x, uint8_t *mask, int64_t rows, int64_t cols, float p,
			    uint64_t key)
{
	const float scale = 1.0f / (1.0f - p);
	const uint64_t thresh = (uint64_t)llround((double)p * 4294967296.0);
#pragma omp parallel for schedule(static) num_threads(be->threads)
	for (int64_t r = 0; r < rows; r++) {
		bw_rng rng;
		bw_rng_seed(&rng, bw_key(key, (uint64_t)r));
		uint8_t *m = mask + r * cols;
		float *xr = x + r * cols;
		for (int64_t c = 0; c < cols; c += 2) {
			const uint64_t u = bw_rng_next(&rng);
			m[c] = (u & 0xffffffffu) >= thresh;
			if (c + 1 < cols)
				m[c + 1] = (u >> 32) >= thresh;
		}
#pragma omp simd
		for (int64_t c = 0; c < cols; c++)
			xr[c] = m[c] ? xr[c] * scale : 0.0f;
	}
}

static void cpu_dropout_bwd(const bw_backend *be, float *g, const uint8_t *mask, int64_t n, float p)
{
	const float scale = 1.0f / (1.0f - p);
#pragma omp parallel for simd schedule(static) num_threads(be->threads)
	for (int64_t i = 0; i < n; i++)
		g[i] = mask[i] ? g[i] * scale : 0.0f;
}

static void cpu_axpy(const bw_backend *be, int64_t n, float alpha, const float *x, float *y)
{
#pragma omp parallel for simd schedule(static) num_threads(be->threads)
	for (int64_t i = 0; i < n; i++)
		y[i] += alpha * x[i];
}

static int32_t row_argmax(const float *z, int64_t cols)
{
	int32_t best = 0;
	for (int64_t c = 1; c < cols; c++)
		if (z[c] > z[best])
			best = (int32_t)c;
	return best;
}

static double cpu_nll_loss(const bw_backend *be, const float *logits, int64_t rows, int64_t classes,
			   const int32_t *labels, const int64_t *sel, int64_t nsel, float *grad, int64_t *counted,
			   int64_t *correct)
{
	const int64_t n = sel ? nsel : rows;
	int64_t cnt = 0, ok = 0;
	for (int64_t k = 0; k < n; k++)
		cnt += labels[sel ? sel[k] : k] >= 0;
	if (grad)
		memset(grad, 0, (size_t)(rows * classes) * sizeof *grad);
	const double inv = cnt ? 1.0 / (double)cnt : 0.0;
	double sum = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : sum, ok) num_threads(be->threads)
	for (int64_t k = 0; k < n; k++) {
		const int64_t r = sel ? sel[k] : k;
		const int32_t y = labels[r];
		if (y < 0)
			continue;
		const float *z = logits + r * classes;
		const int32_t am = row_argmax(z, classes);
		const double mx = z[am];
		double se = 0.0;
		for (int64_t c = 0; c < classes; c++)
			se += exp((double)z[c] - mx);
		const double lse = mx + log(se);
		sum += lse - (double)z[y];
		ok += am == y;
		if (grad) {
			float *g = grad + r * classes;
			for (int64_t c = 0; c < classes; c++)
				g[c] = (float)(exp((double)z[c] - lse) * inv);
			g[y] -= (float)inv;
		}
	}
	*counted = cnt;
	*correct = ok;
	return sum * inv;
}

static void cpu_argmax(const bw_backend *be, const float *x, int64_t rows, int64_t cols, int32_t *out)
{
#pragma omp parallel for schedule(static) num_threads(be->threads)
	for (int64_t r = 0; r < rows; r++)
		out[r] = row_argmax(x + r * cols, cols);
}

/* PyTorch's Adam (weight decay added to the gradient) or AdamW (decoupled). */
static void cpu_adam(const bw_backend *be, float *p, const float *g, float *m, float *v, int64_t n,
		     const bw_adam_args *a)
{
	const double bc1 = 1.0 - pow(a->beta1, (double)a->step), bc2 = 1.0 - pow(a->beta2, (double)a->step);
	const float step_size = (float)(a->lr / bc1), rbc2 = (float)(1.0 / sqrt(bc2));
	const float b1 = a->beta1, b2 = a->beta2, wd = a->weight_decay, eps = a->eps;
	const float decay = a->decoupled ? 1.0f - a->lr * wd : 1.0f;
#pragma omp parallel for simd schedule(static) num_threads(be->threads)
	for (int64_t i = 0; i < n; i++) {
		const float gi = a->decoupled ? g[i] : g[i] + wd * p[i];
		m[i] = b1 * m[i] + (1.0f - b1) * gi;
		v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
		p[i] = p[i] * decay - step_size * m[i] / (sqrtf(v[i]) * rbc2 + eps);
	}
}

static void cpu_sgd(const bw_backend *be, float *p, const float *g, float *mom, int64_t n, float lr, float momentum,
		    float weight_decay)
{
#pragma omp parallel for simd schedule(static) num_threads(be->threads)
	for (int64_t i = 0; i < n; i++) {
		float d = g[i] + weight_decay * p[i];
		if (mom) {
			mom[i] = momentum * mom[i] + d;
			d = mom[i];
		}
		p[i] -= lr * d;
	}
}

static const bw_ops cpu_ops = {
	.name = "cpu",
	.gemm = cpu_gemm,
	.agg_fwd = cpu_agg_fwd,
	.agg_bwd = cpu_agg_bwd,
	.bias_add = cpu_bias_add,
	.col_sum = cpu_col_sum,
	.relu_fwd = cpu_relu_fwd,
	.relu_bwd = cpu_relu_bwd,
	.dropout_fwd = cpu_dropout_fwd,
	.dropout_bwd = cpu_dropout_bwd,
	.axpy = cpu_axpy,
	.nll_loss = cpu_nll_loss,
	.argmax = cpu_argmax,
	.adam = cpu_adam,
	.sgd = cpu_sgd,
};

const bw_ops *bw_cpu_ops(void) { return &cpu_ops; }
