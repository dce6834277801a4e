/* kernels.h: what one thread of a CUDA backend kernel does, as __host__ __device__ functions
 * (as core/rng.h's draws are): backend_cuda.cu's kernels call them with their thread's place
 * in the grid, and tests/test_kernels.c calls them on the host for every thread of the same
 * grid, one after another, so that the kernels' logic (indexing, grid-stride loops, the
 * warp-per-row split, the weights, the loss's accumulators, the optimizers' updates) is
 * checked against the CPU backend in `make test`, on machines without a GPU. What stays in
 * backend_cuda.cu is the launch (grid, stream) and the libraries (cuBLAS, cuSPARSE). Atomics
 * are BW_ATOMIC_*: the device's, or plain updates on the host, where threads run in turn. */
#ifndef BURROW_KERNELS_H
#define BURROW_KERNELS_H

#include "../../core/rng.h" /* BW_HD */
#include "compute.h"
#include "rowwise.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* (__CUDA_ARCH__: nvcc's device pass; its host pass and C compilers take the plain updates) */
#ifdef __CUDA_ARCH__
#define BW_ATOMIC_ADD(p, v) atomicAdd((p), (v))
#define BW_ATOMIC_MIN(p, v) atomicMin((p), (v))
#else
#define BW_ATOMIC_ADD(p, v) (*(p) += (v))
#define BW_ATOMIC_MIN(p, v) (*(p) = *(p) < (v) ? *(p) : (v))
#endif

/* One thread's place: blockIdx.x, gridDim.x, threadIdx.x, blockDim.x. */
typedef struct bw_kthread {
	int64_t block, blocks, thread, threads;
} bw_kthread;

/* Threads a block, and blocks for n independent items (a grid-stride loop covers any n). */
#define BW_K_THREADS 256
static inline BW_HD unsigned bw_k_grid_for(int64_t n)
{
	const int64_t b = (n + BW_K_THREADS - 1) / BW_K_THREADS;
	return (unsigned)(b < 1 ? 1 : b > 65535 * 8 ? 65535 * 8 : b);
}

/* The grid-stride loop of thread t over [0, n). */
#define BW_K_FOR_EACH(t, i, n) for (int64_t i = (t).block * (t).threads + (t).thread; i < (n); i += (t).threads * (t).blocks)

/* ------------------------------------------------------------ aggregation */

/* The weight of edge e of row i in a walk over rows (forward: i a destination, j = col[e] a
 * source; transposed: i a source, j a destination), as the CPU weighs it. */
static inline BW_HD float bw_k_edge_weight(bw_agg mode, bool transposed, const int64_t *ip, const float *dn,
					   const float *sn, int64_t i, int64_t j)
{
	const int64_t dst = transposed ? j : i, src = transposed ? i : j;
	if (mode == BW_AGG_MEAN) {
		const int64_t deg = ip[dst + 1] - ip[dst];
		return deg > 1 ? 1.0f / (float)deg : 1.0f;
	}
	if (mode == BW_AGG_GCN)
		return dn[dst] * sn[src];
	return 1.0f;
}

/* The rows [r0, r0 + n) of rp / col as a CSR of their own from index 0, for cuSPARSE:
 * off[t] = rp[r0 + t] - e0 for t in [0, n], each edge's column (idx) and weight (val). */
static inline BW_HD void bw_k_csr_values(bw_kthread th, bw_agg mode, bool transposed, const int64_t *rp,
					 const int32_t *col, int64_t r0, int64_t n, int64_t e0, const int64_t *ip,
					 const float *dn, const float *sn, int32_t *off, int32_t *idx, float *val)
{
	BW_K_FOR_EACH(th, t, n + 1)
	{
		const int64_t i = r0 + t;
		off[t] = (int32_t)(rp[i] - e0);
		if (t == n)
			continue;
		for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
			idx[e - e0] = col[e];
			val[e - e0] = bw_k_edge_weight(mode, transposed, ip, dn, sn, i, col[e]);
		}
	}
}

/* GCN's self term, written (the aggregation then adds): out[i] = dn[i] sn[i] x[i] for the
 * rows below `self_rows`, 0 for the others. Rows [r0, r0 + n). */
static inline BW_HD void bw_k_self_term(bw_kthread th, const float *x, int64_t dim, int64_t r0, int64_t n,
					int64_t self_rows, const float *dn, const float *sn, float *out)
{
	BW_K_FOR_EACH(th, t, n * dim)
	{
		const int64_t i = r0 + t / dim, c = t % dim;
		out[i * dim + c] = i < self_rows ? (dn[i] * sn[i]) * x[i * dim + c] : 0.0f;
	}
}

/* The plain CSR kernel: a warp per row, lanes over columns, edges in order (the CPU's order
 * of additions). whole: sum, then scale once (the CPU's whole-row MEAN). add: onto out. */
static inline BW_HD void bw_k_csr_rows(bw_kthread th, bw_agg mode, bool transposed, bool whole, const int64_t *rp,
				       const int32_t *col, int64_t r0, int64_t n, const int64_t *ip, const float *dn,
				       const float *sn, const float *x, int64_t dim, bool add, float *out)
{
	const int64_t lane = th.thread % 32;
	const int64_t warps = th.blocks * (th.threads / 32);
	for (int64_t t = (th.block * th.threads + th.thread) / 32; t < n; t += warps) {
		const int64_t i = r0 + t;
		const int64_t e0 = rp[i], e1 = rp[i + 1];
		float scale = 1.0f;
		if (whole && mode == BW_AGG_MEAN) {
			const int64_t deg = ip[i + 1] - ip[i];
			scale = deg > 1 ? 1.0f / (float)deg : 1.0f;
		}
		for (int64_t c = lane; c < dim; c += 32) {
			float acc = add ? out[i * dim + c] : 0.0f;
			for (int64_t e = e0; e < e1; e++) {
				const int64_t j = col[e];
				const float v = x[j * dim + c];
				if (whole && mode != BW_AGG_GCN)
					acc += v;
				else
					acc += bw_k_edge_weight(mode, transposed, ip, dn, sn, i, j) * v;
			}
			out[i * dim + c] = whole && mode == BW_AGG_MEAN && scale != 1.0f ? acc * scale : acc;
		}
	}
}

/* ------------------------------------------------------------ loss and argmax */

/* The loss's accumulators on the device, beside the result. */
typedef struct bw_loss_acc {
	unsigned long long first_bad; /* the first bad entry of the selection (ULLONG_MAX: none) */
	unsigned long long bad, counted, correct;
	double sum;
} bw_loss_acc;

static inline BW_HD void bw_k_loss_init(bw_loss_acc *a)
{
	a->first_bad = ~0ull;
	a->bad = a->counted = a->correct = 0;
	a->sum = 0.0;
}

/* The selection's bad entries (a row out of range, a label past the classes), the first of
 * them, and the labelled rows (the mean's denominator). */
static inline BW_HD void bw_k_loss_check(bw_kthread th, const int32_t *labels, const int64_t *sel, int64_t n,
					 int64_t rows, int64_t classes, bw_loss_acc *a)
{
	BW_K_FOR_EACH(th, k, n)
	{
		const int64_t r = sel ? sel[k] : k;
		if (r < 0 || r >= rows || labels[r] >= classes) {
			BW_ATOMIC_ADD(&a->bad, 1ull);
			BW_ATOMIC_MIN(&a->first_bad, (unsigned long long)k);
		} else if (labels[r] >= 0) {
			BW_ATOMIC_ADD(&a->counted, 1ull);
		}
	}
}

/* A thread per selected row, in double as on the CPU: the row's term into the sum, whether
 * its argmax is its label, and its gradient row (grad zeroed before, NULL: none). */
static inline BW_HD void bw_k_loss_rows(bw_kthread th, const float *logits, int64_t classes, const int32_t *labels,
					const int64_t *sel, int64_t n, float *grad, bw_loss_acc *a)
{
	if (a->bad)
		return;
	const double inv = a->counted ? 1.0 / (double)a->counted : 0.0;
	BW_K_FOR_EACH(th, k, n)
	{
		const int64_t r = sel ? sel[k] : k;
		const int32_t y = labels[r];
		if (y < 0)
			continue;
		bool hit;
		BW_ATOMIC_ADD(&a->sum, bw_xent_row(logits + r * classes, classes, y, inv, grad ? grad + r * classes : NULL, &hit));
		if (hit)
			BW_ATOMIC_ADD(&a->correct, 1ull);
	}
}

/* The result from the accumulators (one thread). */
static inline BW_HD void bw_k_loss_final(const bw_loss_acc *a, const int32_t *labels, const int64_t *sel, int64_t rows,
					 int64_t classes, bw_loss *out)
{
	bw_loss o;
	memset(&o, 0, sizeof o);
	o.rows = rows;
	o.classes = classes;
	o.bad = (int64_t)a->bad;
	if (a->bad) {
		const int64_t k = (int64_t)a->first_bad, r = sel ? sel[k] : k;
		o.bad_is_row = r < 0 || r >= rows;
		o.bad_row = o.bad_is_row ? k : r;
		o.bad_value = o.bad_is_row ? r : labels[r];
	} else {
		o.counted = (int64_t)a->counted;
		o.correct = (int64_t)a->correct;
		o.loss = a->counted ? a->sum * (1.0 / (double)a->counted) : 0.0;
	}
	*out = o;
}

/* ------------------------------------------------------------ optimizers */

/* Adam's scalars as the CPU computes them (in double, then rounded). */
typedef struct bw_adam_k {
	float b1, b2, wd, eps, step_size, rbc2, decay;
	bool decoupled;
} bw_adam_k;

static inline bw_adam_k bw_k_adam_scalars(const bw_adam_args *a)
{
	const double bc1 = 1.0 - pow(a->beta1, (double)a->step), bc2 = 1.0 - pow(a->beta2, (double)a->step);
	bw_adam_k k;
	k.b1 = a->beta1;
	k.b2 = a->beta2;
	k.wd = a->weight_decay;
	k.eps = a->eps;
	k.step_size = (float)(a->lr / bc1);
	k.rbc2 = (float)(1.0 / sqrt(bc2));
	k.decay = a->decoupled ? 1.0f - a->lr * a->weight_decay : 1.0f;
	k.decoupled = a->decoupled;
	return k;
}

static inline BW_HD void bw_k_adam(bw_kthread th, float *p, const float *g, float *m, float *v, int64_t n,
				   bw_adam_k a)
{
	BW_K_FOR_EACH(th, i, n)
	{
		const float gi = a.decoupled ? g[i] : g[i] + a.wd * p[i];
		m[i] = a.b1 * m[i] + (1.0f - a.b1) * gi;
		v[i] = a.b2 * v[i] + (1.0f - a.b2) * gi * gi;
		p[i] = p[i] * a.decay - a.step_size * m[i] / (sqrtf(v[i]) * a.rbc2 + a.eps);
	}
}

static inline BW_HD void bw_k_sgd(bw_kthread th, float *p, const float *g, float *mom, int64_t n, float lr,
				  float momentum, float wd)
{
	BW_K_FOR_EACH(th, i, n)
	{
		float d = g[i] + wd * p[i];
		if (mom) {
			mom[i] = momentum * mom[i] + d;
			d = mom[i];
		}
		p[i] -= lr * d;
	}
}

#endif
