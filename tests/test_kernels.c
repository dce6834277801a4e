/* test_kernels.c: the CUDA backend's kernels run on the host: train/compute/kernels.h's
 * per-thread work called for every thread of the grid the backend launches (blocks of
 * BW_K_THREADS, bw_k_grid_for's count), one thread after another, against the CPU backend
 * on the same inputs: aggregation forward and backward through the plain CSR kernel (whole
 * rows, a row range, the early / late split), the range CSR that cuSPARSE is given (with a
 * host stand-in for its SpMM), the loss with its accumulators and gradient, Adam, AdamW and
 * SGD; and the GPU sampler's kernels (sampler/sample_kernels.h: sizes, draws, the numbering
 * of new sources, the merge of the sorted view), with host stand-ins for CUB's sort, unique
 * and scan, against the CPU sampler's batches. The emulation follows backend_cuda.cu's launch sequence (cuda_agg_fwd, spmm_rows'
 * kernel path, cuda_nll_loss); the kernels build without FMA contraction, as C11 does here,
 * so where the CPU adds in the same order the bits must be equal. Runs in every build. */
#include <criterion/criterion.h>

#include "../sampler/sample_kernels.h"
#include "../sampler/sampler_internal.h"
#include "../train/compute/backend_impl.h" /* the CPU table, run beside the kernels */
#include "../train/compute/kernels.h"
#include "util.h"

#include "compute_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(kernels, .timeout = 60);

/* A launch of `blocks` blocks of BW_K_THREADS threads, each running `call` with its place th. */
#define LAUNCH(blocks, call)                                                                 \
	do {                                                                                 \
		const int64_t nb_ = (blocks);                                                \
		for (int64_t b_ = 0; b_ < nb_; b_++)                                         \
			for (int64_t t_ = 0; t_ < BW_K_THREADS; t_++) {                      \
				const bw_kthread th = {b_, nb_, t_, BW_K_THREADS};           \
				call;                                                        \
			}                                                                    \
	} while (0)

static bw_backend cpu_backend(void)
{
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 1), 0, "%s", burrow_last_error());
	return be;
}

static float *filled(int64_t n, uint64_t key, double lo, double hi)
{
	float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
	fill_uniform(x, n, key, lo, hi);
	return x;
}

static void assert_same(const float *got, const float *want, int64_t n, const char *what)
{
	for (int64_t i = 0; i < n; i++)
		cr_assert(memcmp(&got[i], &want[i], sizeof *got) == 0, "%s [%lld]: kernel %.9g vs cpu %.9g", what,
			  (long long)i, got[i], want[i]);
}

/* The rows [r0, r1) through the plain CSR kernel as spmm_rows launches it (beta 1: add). */
static void emu_rows(bw_agg mode, bool transposed, bool whole, const int64_t *rp, const int32_t *col, int64_t r0,
		     int64_t r1, const bw_block_dev *d, const float *x, int64_t dim, float beta, float *out)
{
	const int64_t n = r1 - r0;
	if (n == 0 || dim == 0)
		return;
	if (rp[r1] == rp[r0]) {
		if (beta == 0.0f)
			memset(out + r0 * dim, 0, (size_t)(n * dim) * sizeof *out);
		return;
	}
	LAUNCH(bw_k_grid_for(n * 32), bw_k_csr_rows(th, mode, transposed, whole && beta == 0.0f, rp, col, r0, n, d->indptr,
						     d->dst_norm, d->src_norm, x, dim, beta != 0.0f, out));
}

/* cuda_agg_fwd with the plain kernel. */
static void emu_agg_fwd(const bw_block *b, bw_block_part part, bw_agg mode, const float *x, int64_t dim, int64_t r0,
			int64_t r1, bool add, float *out)
{
	const bw_block_dev *d = &b->d;
	float beta = add ? 1.0f : 0.0f;
	if (mode == BW_AGG_GCN && !add) {
		LAUNCH(bw_k_grid_for((r1 - r0) * dim),
		       bw_k_self_term(th, x, dim, r0, r1 - r0, b->num_dst, d->dst_norm, d->src_norm, out));
		beta = 1.0f;
	}
	emu_rows(mode, false, part == BW_PART_ALL && !add, d->part_indptr[part], d->part_indices[part], r0, r1, d, x, dim,
		 beta, out);
}

/* cuda_agg_bwd with the plain kernel. */
static void emu_agg_bwd(const bw_block *b, bw_agg mode, const float *gout, int64_t dim, int64_t j0, int64_t j1,
			float *gx)
{
	const bw_block_dev *d = &b->d;
	float beta = 0.0f;
	if (mode == BW_AGG_GCN) {
		LAUNCH(bw_k_grid_for((j1 - j0) * dim),
		       bw_k_self_term(th, gout, dim, j0, j1 - j0, b->num_dst, d->dst_norm, d->src_norm, gx));
		beta = 1.0f;
	}
	emu_rows(mode, true, false, d->t_indptr, d->t_indices, j0, j1, d, gout, dim, beta, gx);
}

/* The plain kernel's rows are the CPU's, bit for bit: whole rows, a row range (the rows
 * outside untouched), the early part then the late one added, and backward over a range of
 * sources; every mode; a dimension past one warp's 32 lanes and one below. */
Test(kernels, aggregation_matches_the_cpu_backend)
{
	bw_backend be = cpu_backend();
	const int64_t nd = 300, ns = 520, split = 410;
	tblock t;
	make_block(&t, nd, ns, 40, 5);
	cr_assert_eq(bw_block_prepare(&t.b, true, true), 0);
	cr_assert_eq(bw_block_split(&t.b, split), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_block_upload(&t.b, be.dev), 0, "%s", burrow_last_error());
	for (int64_t dim = 5; dim <= 37; dim += 32) {
		float *x = filled(ns * dim, 11, -2, 2), *g = filled(nd * dim, 12, -2, 2);
		float *want = malloc((size_t)(ns * dim) * sizeof *want), *got = malloc((size_t)(ns * dim) * sizeof *got);
		for (int mode = BW_AGG_SUM; mode <= BW_AGG_GCN; mode++) {
			cr_assert_eq(be.ops->agg_fwd(&be, &t.b, BW_PART_ALL, mode, x, dim, 0, nd, false, want), 0);
			emu_agg_fwd(&t.b, BW_PART_ALL, mode, x, dim, 0, nd, false, got);
			assert_same(got, want, nd * dim, "forward");
			for (int64_t i = 0; i < nd * dim; i++)
				want[i] = got[i] = -99.0f;
			cr_assert_eq(be.ops->agg_fwd(&be, &t.b, BW_PART_ALL, mode, x, dim, 33, 171, false, want), 0);
			emu_agg_fwd(&t.b, BW_PART_ALL, mode, x, dim, 33, 171, false, got);
			assert_same(got, want, nd * dim, "forward, rows 33 to 171");
			for (int part = BW_PART_EARLY; part <= BW_PART_LATE; part++) {
				cr_assert_eq(be.ops->agg_fwd(&be, &t.b, part, mode, x, dim, 0, nd, part == BW_PART_LATE, want), 0);
				emu_agg_fwd(&t.b, part, mode, x, dim, 0, nd, part == BW_PART_LATE, got);
			}
			assert_same(got, want, nd * dim, "early, then late added");
			cr_assert_eq(be.ops->agg_bwd(&be, &t.b, mode, g, dim, 7, 499, want), 0);
			emu_agg_bwd(&t.b, mode, g, dim, 7, 499, got);
			assert_same(got + 7 * dim, want + 7 * dim, (499 - 7) * dim, "backward, sources 7 to 499");
		}
		free(x);
		free(g);
		free(want);
		free(got);
	}
	free_block(&t);
	bw_backend_release(&be);
}

/* The CSR of a row range that cuSPARSE gets (offsets, columns and weights from index 0, in
 * the backend's aligned scratch), multiplied by a host stand-in for its SpMM, is the CPU's
 * aggregation of those rows within float tolerance (cuSPARSE's order of additions is its own). */
Test(kernels, range_csr_for_cusparse_matches_the_cpu_backend)
{
	bw_backend be = cpu_backend();
	const int64_t nd = 200, ns = 333, dim = 7, r0 = 13, r1 = 190;
	tblock t;
	make_block(&t, nd, ns, 25, 9);
	cr_assert_eq(bw_block_prepare(&t.b, true, true), 0);
	cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
	const bw_block_dev *d = &t.b.d;
	const int64_t n = r1 - r0, e0 = d->indptr[r0], nnz = d->indptr[r1] - e0;
	int32_t *off = malloc((size_t)(n + 1) * sizeof *off), *idx = malloc((size_t)nnz * sizeof *idx);
	float *val = malloc((size_t)nnz * sizeof *val), *x = filled(ns * dim, 3, -1, 1);
	float *want = malloc((size_t)(nd * dim) * sizeof *want);
	for (int mode = BW_AGG_SUM; mode <= BW_AGG_MEAN; mode++) { /* (GCN adds its self term first: above) */
		LAUNCH(bw_k_grid_for(n + 1), bw_k_csr_values(th, mode, false, d->indptr, d->indices, r0, n, e0, d->indptr,
							     d->dst_norm, d->src_norm, off, idx, val));
		cr_assert_eq(off[0], 0);
		cr_assert_eq(off[n], nnz);
		cr_assert_eq(be.ops->agg_fwd(&be, &t.b, BW_PART_ALL, mode, x, dim, 0, nd, false, want), 0);
		for (int64_t i = 0; i < n; i++)
			for (int64_t c = 0; c < dim; c++) {
				double s = 0;
				for (int32_t e = off[i]; e < off[i + 1]; e++)
					s += (double)val[e] * x[idx[e] * dim + c];
				cr_assert(close_to(s, want[(r0 + i) * dim + c], 1e-5), "mode %d row %lld: %g vs %g", mode,
					  (long long)(r0 + i), s, want[(r0 + i) * dim + c]);
			}
	}
	free(off);
	free(idx);
	free(val);
	free(x);
	free(want);
	free_block(&t);
	bw_backend_release(&be);
}

/* cuda_nll_loss's sequence of kernels. */
static void emu_loss(const float *logits, int64_t rows, int64_t classes, const int32_t *labels, const int64_t *sel,
		     int64_t nsel, float *grad, bw_loss *out)
{
	const int64_t n = sel ? nsel : rows;
	bw_loss_acc a;
	if (grad)
		memset(grad, 0, (size_t)(rows * classes) * sizeof *grad);
	bw_k_loss_init(&a);
	LAUNCH(bw_k_grid_for(n), bw_k_loss_check(th, labels, sel, n, rows, classes, &a));
	LAUNCH(bw_k_grid_for(n), bw_k_loss_rows(th, logits, classes, labels, sel, n, grad, &a));
	bw_k_loss_final(&a, labels, sel, rows, classes, out);
}

/* The loss, its counts and its gradient equal the CPU's bit for bit (threads in turn add the
 * rows' terms in the CPU's order), over all rows and over a selection; a bad label and a
 * selected row out of range are reported as the CPU reports them. */
Test(kernels, loss_matches_the_cpu_backend)
{
	bw_backend be = cpu_backend();
	const int64_t rows = 700, classes = 9;
	float *z = filled(rows * classes, 4, -4, 4);
	int32_t *y = malloc((size_t)rows * sizeof *y);
	int64_t sel[300];
	bw_rng r;
	bw_rng_seed(&r, 77);
	for (int64_t i = 0; i < rows; i++)
		y[i] = i % 7 == 3 ? -1 : (int32_t)bw_rng_below(&r, (uint64_t)classes);
	for (int i = 0; i < 300; i++)
		sel[i] = (int64_t)bw_rng_below(&r, (uint64_t)rows);
	float *gw = malloc((size_t)(rows * classes) * sizeof *gw), *gg = malloc((size_t)(rows * classes) * sizeof *gg);
	for (int s = 0; s < 2; s++) {
		const int64_t *sl = s ? sel : NULL;
		bw_loss w, g;
		cr_assert_eq(be.ops->nll_loss(&be, z, rows, classes, y, sl, 300, gw, &w), 0);
		emu_loss(z, rows, classes, y, sl, 300, gg, &g);
		cr_assert(w.counted > 0 && w.correct > 0);
		cr_assert(g.loss == w.loss && g.counted == w.counted && g.correct == w.correct && g.bad == 0,
			  "selection %d: loss %.17g vs %.17g, counted %lld vs %lld, correct %lld vs %lld", s, g.loss, w.loss,
			  (long long)g.counted, (long long)w.counted, (long long)g.correct, (long long)w.correct);
		assert_same(gg, gw, rows * classes, "gradient");
	}
	y[123] = (int32_t)classes; /* a label past the classes, then a selected row out of range */
	sel[7] = 123;
	sel[5] = rows + 4;
	for (int s = 0; s < 2; s++) {
		bw_loss w, g;
		cr_assert_eq(be.ops->nll_loss(&be, z, rows, classes, y, s ? sel : NULL, 300, NULL, &w), 0);
		emu_loss(z, rows, classes, y, s ? sel : NULL, 300, NULL, &g);
		cr_assert(w.bad > 0 && g.bad == w.bad && g.bad_is_row == w.bad_is_row && g.bad_row == w.bad_row &&
				  g.bad_value == w.bad_value,
			  "bad %lld/%lld, is_row %d/%d, row %lld/%lld, value %lld/%lld", (long long)g.bad, (long long)w.bad,
			  g.bad_is_row, w.bad_is_row, (long long)g.bad_row, (long long)w.bad_row, (long long)g.bad_value,
			  (long long)w.bad_value);
	}
	free(z);
	free(y);
	free(gw);
	free(gg);
	bw_backend_release(&be);
}

/* Adam, AdamW and SGD (with and without momentum) over three steps equal the CPU's bit for
 * bit, on more elements than one grid-stride pass of the launch covers. */
Test(kernels, optimizers_match_the_cpu_backend)
{
	bw_backend be = cpu_backend();
	const int64_t n = 1000;
	float *g = filled(n, 1, -1, 1);
	float *st[2][3]; /* cpu, kernel: p, m, v */
	for (int decoupled = 0; decoupled < 2; decoupled++) {
		for (int k = 0; k < 2; k++)
			for (int j = 0; j < 3; j++)
				st[k][j] = j ? calloc((size_t)n, sizeof(float)) : filled(n, 2, -1, 1);
		for (int step = 1; step <= 3; step++) {
			const bw_adam_args a = {.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f,
						.weight_decay = 0.05f, .step = step, .decoupled = decoupled};
			cr_assert_eq(be.ops->adam(&be, st[0][0], g, st[0][1], st[0][2], n, &a), 0);
			const bw_adam_k ak = bw_k_adam_scalars(&a);
			LAUNCH(1, bw_k_adam(th, st[1][0], g, st[1][1], st[1][2], n, ak)); /* one block: a grid-stride loop */
		}
		for (int j = 0; j < 3; j++) {
			assert_same(st[1][j], st[0][j], n, decoupled ? "adamw" : "adam");
			free(st[0][j]);
			free(st[1][j]);
		}
	}
	for (int momentum = 0; momentum < 2; momentum++) {
		float *p0 = filled(n, 2, -1, 1), *p1 = filled(n, 2, -1, 1);
		float *m0 = momentum ? calloc((size_t)n, sizeof(float)) : NULL, *m1 = momentum ? calloc((size_t)n, sizeof(float)) : NULL;
		for (int step = 0; step < 3; step++) {
			cr_assert_eq(be.ops->sgd(&be, p0, g, m0, n, 0.1f, 0.9f, 0.01f), 0);
			LAUNCH(bw_k_grid_for(n), bw_k_sgd(th, p1, g, m1, n, 0.1f, 0.9f, 0.01f));
		}
		assert_same(p1, p0, n, momentum ? "sgd with momentum" : "sgd");
		if (momentum)
			assert_same(m1, m0, n, "sgd's momentum");
		free(p0);
		free(p1);
		free(m0);
		free(m1);
	}
	free(g);
	bw_backend_release(&be);
}

/* ------------------------------------------------------------ the GPU sampler */

/* A one-pass launch of the GPU sampler: every index i of bw_sk_grid(n) blocks in turn. */
#define LAUNCH_SK(n, call)                                                                   \
	do {                                                                                 \
		const int64_t ni_ = (int64_t)bw_sk_grid(n) * BW_SK_THREADS;                  \
		for (int64_t i = 0; i < ni_; i++) {                                          \
			call;                                                                \
		}                                                                            \
	} while (0)

/* Host stand-ins for CUB: DeviceScan::ExclusiveSum, DeviceRadixSort::SortKeys / SortPairs
 * (ascending, stable), DeviceSelect::Unique. */
static void ex_sum(const int64_t *in, int64_t *out, int64_t n)
{
	int64_t s = 0;
	for (int64_t i = 0; i < n; i++) {
		const int64_t v = in[i];
		out[i] = s;
		s += v;
	}
}

static int cmp_i64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_u64(const void *a, const void *b)
{
	const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static const int64_t *pair_keys;
static int cmp_pair(const void *a, const void *b)
{
	const int32_t i = *(const int32_t *)a, j = *(const int32_t *)b;
	const int c = cmp_i64(&pair_keys[i], &pair_keys[j]);
	return c ? c : (i > j) - (i < j);
}

static int64_t unique(const int64_t *in, int64_t n, int64_t *out)
{
	int64_t m = 0;
	for (int64_t i = 0; i < n; i++)
		if (!m || out[m - 1] != in[i])
			out[m++] = in[i];
	return m;
}

typedef struct emu_batch {
	int64_t num_dst[BURROW_MAX_LAYERS], num_src[BURROW_MAX_LAYERS], num_edges[BURROW_MAX_LAYERS];
	int64_t *indptr[BURROW_MAX_LAYERS];
	int32_t *indices[BURROW_MAX_LAYERS];
	float *ew[BURROW_MAX_LAYERS]; /* LABOR-*'s weights, NULL for a block without */
	int64_t *nodes, num_input;
} emu_batch;

#define GROW(p, n) ((p) = realloc((p), (size_t)((n) > 0 ? (n) : 1) * sizeof *(p)))

/* A LABOR-* layer's device scratch (sample_cuda.cu's loff, lx, lxs, ...; flag and rank). */
typedef struct emu_ls {
	int64_t *off, *flag, *rank, *start;
	uint64_t *x, *xs;
	int32_t *row, *erow, *src;
	bw_ls_node *node;
	double *c;
	int64_t m;      /* distinct sources */
	double ex;      /* the last round's expected distinct sources (NAN: no round) */
} emu_ls;

static void emu_ls_free(emu_ls *s)
{
	free(s->off), free(s->flag), free(s->rank), free(s->start), free(s->x), free(s->xs);
	free(s->row), free(s->erow), free(s->src), free(s->node), free(s->c);
}

/* star_prep's sequence over the nd rows nodes[0, nd) with fanout k, at most `rounds` rounds,
 * layer keys lk / dp: the kernels' per-thread work over their grids, CUB's sort and sums stood
 * in for (a stable sort by source of items in neighbor order is the sort by whole value), the
 * host's loop over the rounds with each round's sum as the one thread leaves it; each row's
 * sample size into cnt [nd + 1]. */
static void emu_star_prep(const burrow_csr *g, const int64_t *nodes, int64_t nd, int64_t k, int rounds, uint64_t lk,
			  const bw_labor_dep *dp, int64_t *cnt, emu_ls *s)
{
	GROW(s->off, nd + 1);
	GROW(s->c, nd);
	LAUNCH_SK(nd + 1, bw_sk_sizes(i, g->indptr, nodes, nd, -1, cnt));
	ex_sum(cnt, s->off, nd + 1);
	const int64_t F = s->off[nd];
	int eb = 0;
	while (((int64_t)1 << eb) < F) /* bits of F - 1 */
		eb++;
	GROW(s->x, F);
	GROW(s->xs, F);
	GROW(s->row, F);
	GROW(s->erow, F);
	GROW(s->src, F);
	GROW(s->flag, F + 1);
	GROW(s->rank, F + 1);
	int64_t m = 0;
	if (F > 0) {
		LAUNCH_SK(nd, bw_sk_ls_gather(i, g->indptr, g->indices, g->index_width, nodes, nd, s->off, eb, s->x, s->row));
		memcpy(s->xs, s->x, (size_t)F * sizeof *s->xs);
		qsort(s->xs, (size_t)F, sizeof *s->xs, cmp_u64);
		LAUNCH_SK(F + 1, bw_sk_ls_flag(i, s->xs, F, eb, s->flag));
		ex_sum(s->flag, s->rank, F + 1);
		m = s->rank[F];
		GROW(s->start, m + 1);
		GROW(s->node, m);
		LAUNCH_SK(F, bw_sk_ls_source(i, s->xs, F, eb, s->flag, s->rank, s->row, lk, dp, s->src, s->erow, s->start,
					     s->node));
	}
	LAUNCH_SK(nd, bw_sk_ls_c(i, s->off, nd, k, s->src, s->node, true, s->c));
	double prev = INFINITY;
	s->m = m;
	s->ex = NAN;
	for (int it = 0; it < rounds; it++) {
		if (m > 0)
			LAUNCH_SK(m, bw_sk_ls_pi(i, m, s->start, s->erow, s->c, s->node));
		double ex = -1;
		bw_sk_ls_ex(0, s->node, m, &ex); /* <<<1, 1>>> */
		LAUNCH_SK(nd, bw_sk_ls_c(i, s->off, nd, k, s->src, s->node, false, s->c));
		s->ex = ex;
		if (bw_ls_last(ex, &prev))
			break;
	}
	LAUNCH_SK(nd + 1, bw_sk_ls_count(i, s->off, nd, k, s->src, s->node, s->c, cnt));
}

/* bw_cuda_sample_batch's sequence (seed_view, then layer for each block, output layer first)
 * on host arrays: the kernels' per-thread work over their grids, CUB's steps stood in for.
 * labor: LABOR's draws with that batch dependency (NULL: neighbor sampling's); rounds > 0:
 * LABOR-*'s in the layers of a fanout >= 0 (emu_star_prep, then k_ls_draw). */
static void emu_sample(const burrow_csr *g, const int64_t *seeds, int64_t n, int L, const int *fan, uint64_t key,
		       const bw_labor_batch *labor, int rounds, emu_batch *o)
{
	emu_ls ls = {0};
	float *ew = NULL;
	int64_t *nodes = NULL, *sg = NULL, *sg2 = NULL, *cnt = NULL, *ip = NULL, *eid = NULL, *skey = NULL, *uniq = NULL;
	int64_t *flag = NULL, *rank = NULL;
	int32_t *sl = NULL, *sl2 = NULL, *iota = NULL, *ind = NULL;
	GROW(nodes, n);
	GROW(sg, n);
	GROW(sl, n);
	GROW(iota, n);
	memcpy(nodes, seeds, (size_t)n * sizeof *nodes);
	LAUNCH_SK(n, bw_sk_iota(i, iota, n));
	pair_keys = nodes; /* SortPairs(nodes -> sg, iota -> sl) */
	memcpy(sl, iota, (size_t)n * sizeof *sl);
	qsort(sl, (size_t)n, sizeof *sl, cmp_pair);
	for (int64_t i = 0; i < n; i++)
		sg[i] = nodes[sl[i]];
	unsigned long long rep = ~0ull;
	LAUNCH_SK(n, bw_sk_repeat(i, sg, n, &rep));
	cr_assert_eq(rep, ~0ull, "a repeated seed");
	int64_t nd = n;
	for (int l = L - 1; l >= 0; l--) {
		const uint64_t lkey = bw_key(key, (uint64_t)l);
		const bool star = rounds > 0 && fan[l] >= 0;
		uint64_t lk;
		bw_labor_dep dep;
		const bw_labor_dep *dp = bw_labor_layer(labor, l, lkey, &lk, &dep);
		GROW(cnt, nd + 1);
		GROW(ip, nd + 1);
		if (star)
			emu_star_prep(g, nodes, nd, fan[l], rounds, lk, dp, cnt, &ls);
		else
			LAUNCH_SK(nd + 1, bw_sk_sizes(i, g->indptr, nodes, nd, fan[l], cnt));
		ex_sum(cnt, ip, nd + 1);
		const int64_t E = ip[nd];
		GROW(eid, E);
		GROW(skey, E);
		GROW(uniq, E);
		GROW(flag, E + 1);
		GROW(rank, E + 1);
		GROW(ind, E);
		GROW(nodes, nd + E);
		GROW(ew, E);
		int64_t nu = 0, nnew = 0;
		if (E > 0) {
			if (star) { /* layer's k_ls_draw launch */
				LAUNCH_SK(nd, bw_sk_ls_draw(i, g->indptr, g->indices, g->index_width, nodes, nd, ls.off, fan[l],
							    ls.src, ls.node, ls.c, ip, eid, ew));
			} else if (labor) { /* layer's k_labor launch: the heaps' keys in skey, before the sort */
				LAUNCH_SK(nd, bw_sk_labor(i, g->indptr, g->indices, g->index_width, nodes, nd, ip, lk, dp,
							  (uint64_t *)skey, eid));
			} else {
				LAUNCH_SK(nd, bw_sk_draw(i, g->indptr, g->indices, g->index_width, nodes, nd, ip, lkey, NULL, eid));
			}
			memcpy(skey, eid, (size_t)E * sizeof *skey);
			qsort(skey, (size_t)E, sizeof *skey, cmp_i64);
			nu = unique(skey, E, uniq);
			LAUNCH_SK(nu + 1, bw_sk_flag(i, uniq, nu, sg, nd, flag));
			ex_sum(flag, rank, nu + 1);
			nnew = rank[nu];
			LAUNCH_SK(nu, bw_sk_new(i, uniq, nu, rank, nodes + nd));
			LAUNCH_SK(E, bw_sk_edges(i, eid, E, sg, sl, nd, uniq, nu, rank, ind));
		}
		o->num_dst[l] = nd;
		o->num_src[l] = nd + nnew;
		o->num_edges[l] = E;
		o->indptr[l] = malloc((size_t)(nd + 1) * sizeof *ip);
		memcpy(o->indptr[l], ip, (size_t)(nd + 1) * sizeof *ip);
		o->indices[l] = malloc((size_t)(E ? E : 1) * sizeof *ind);
		memcpy(o->indices[l], ind, (size_t)E * sizeof *ind);
		o->ew[l] = NULL;
		if (star) {
			o->ew[l] = malloc((size_t)(E ? E : 1) * sizeof *ew);
			memcpy(o->ew[l], ew, (size_t)E * sizeof *ew);
		}
		if (l > 0 && nnew > 0) {
			GROW(sg2, nd + nnew);
			GROW(sl2, nd + nnew);
			LAUNCH_SK(nd + nnew, bw_sk_merge(i, sg, sl, nd, nodes + nd, nnew, sg2, sl2));
			int64_t *t = sg;
			sg = sg2, sg2 = t;
			int32_t *u = sl;
			sl = sl2, sl2 = u;
		}
		nd += nnew;
	}
	o->nodes = nodes;
	o->num_input = nd;
	free(sg), free(sg2), free(cnt), free(ip), free(eid), free(skey), free(uniq), free(flag), free(rank);
	free(sl), free(sl2), free(iota), free(ind), free(ew);
	emu_ls_free(&ls);
}

/* A graph of n nodes whose rows are sorted distinct ids, degrees 0 to 90 (rows above the
 * fanouts, below them, and past 32 picks: the draw in place), ids int32 or int64. repeats:
 * rows of ids out of order, each repeated about three times (a multigraph's rows as LABOR
 * reads them: equal variates, which the earlier position wins, and the picks' order shows
 * which one it was). */
static burrow_csr random_graph(int64_t n, int width, uint64_t key, bool repeats)
{
	bw_rng r;
	bw_rng_seed(&r, key);
	int64_t *ip = malloc((size_t)(n + 1) * sizeof *ip);
	int64_t *ids = malloc((size_t)(n * 91) * sizeof *ids);
	ip[0] = 0;
	for (int64_t v = 0; v < n; v++) {
		const int64_t d = v % 50 == 0 ? 0 : (int64_t)bw_rng_below(&r, v % 7 == 0 ? 91 : 12);
		int64_t k = ip[v];
		for (int64_t j = 0; j < d; j++) { /* repeats: two of three ids are an earlier one of the row */
			const int64_t u = repeats && j % 3 ? ids[ip[v] + (int64_t)bw_rng_below(&r, (uint64_t)j)]
							   : (int64_t)bw_rng_below(&r, (uint64_t)n);
			ids[k++] = u;
		}
		if (!repeats) {
			qsort(ids + ip[v], (size_t)d, sizeof *ids, cmp_i64);
			k = ip[v] + unique(ids + ip[v], d, ids + ip[v]);
		}
		ip[v + 1] = k;
	}
	void *ind = ids;
	if (width == 4) {
		int32_t *i32 = malloc((size_t)(ip[n] ? ip[n] : 1) * sizeof *i32);
		for (int64_t e = 0; e < ip[n]; e++)
			i32[e] = (int32_t)ids[e];
		free(ids);
		ind = i32;
	}
	return (burrow_csr){.num_nodes = n, .num_edges = ip[n], .indptr = ip, .indices = ind, .index_width = width};
}

/* The emulated GPU sampler's batch e equals the CPU sampler's b element for element. */
static void same_as_cpu(const emu_batch *e, const bw_sampled *b, const char *what)
{
	cr_assert_eq(e->num_input, b->pub.num_input, "%s: %lld inputs vs the CPU's %lld", what, (long long)e->num_input,
		     (long long)b->pub.num_input);
	cr_assert(!memcmp(e->nodes, b->pub.input_ids, (size_t)e->num_input * sizeof *e->nodes), "%s: input ids differ",
		  what);
	for (int l = 0; l < b->pub.num_layers; l++) {
		const burrow_block *k = &b->pub.blocks[l];
		cr_assert(e->num_dst[l] == k->num_dst && e->num_src[l] == k->num_src && e->num_edges[l] == k->num_edges,
			  "%s block %d: %lld/%lld/%lld vs the CPU's %lld/%lld/%lld", what, l, (long long)e->num_dst[l],
			  (long long)e->num_src[l], (long long)e->num_edges[l], (long long)k->num_dst, (long long)k->num_src,
			  (long long)k->num_edges);
		cr_assert(!memcmp(e->indptr[l], k->indptr, (size_t)(k->num_dst + 1) * sizeof *k->indptr) &&
				  !memcmp(e->indices[l], k->indices, (size_t)k->num_edges * sizeof *k->indices),
			  "%s block %d differs", what, l);
		cr_assert(!e->ew[l] == !k->edge_weight, "%s block %d: weights %s vs the CPU's %s", what, l,
			  e->ew[l] ? "given" : "none", k->edge_weight ? "given" : "none");
		for (int64_t j = 0; e->ew[l] && j < k->num_edges; j++)
			cr_assert(!memcmp(&e->ew[l][j], &k->edge_weight[j], sizeof(float)),
				  "%s block %d edge %lld: weight %.9g vs the CPU's %.9g", what, l, (long long)j, e->ew[l][j],
				  k->edge_weight[j]);
	}
}

static void emu_free(emu_batch *e, int L)
{
	for (int l = 0; l < L; l++) {
		free(e->indptr[l]);
		free(e->indices[l]);
		free(e->ew[l]);
	}
	free(e->nodes);
}

/* Batches of 300 seeds on a 4,000-node random_graph(repeats), int32 and int64 ids, fanouts
 * above and below 32, whole rows and none, by the CPU sampler and by the GPU sampler's kernels
 * run on the host with stand-ins for CUB: equal element for element. mode 0: neighbor
 * sampling; 1: LABOR; 2: LABOR with batch dependency (each batch its own place between two
 * groups, as sampler.c's set_dep gives it); 3: LABOR-* (3 rounds); 4: LABOR-* with batch
 * dependency and up to 64 rounds (the tolerance ends them). */
static void gpu_sampler_case(bool repeats, int mode)
{
	const int64_t N = 4000, n = 300;
	const int fans[3][3] = {{40, 10, 5}, {-1, 3, 33}, {2, 0, 12}};
	const int rounds = mode == 3 ? 3 : mode == 4 ? 64 : 0;
	for (int width = 4; width <= 8; width += 4) {
		burrow_csr g = random_graph(N, width, (uint64_t)width, repeats);
		int64_t *seeds = malloc((size_t)N * sizeof *seeds);
		for (int64_t i = 0; i < N; i++)
			seeds[i] = (i * 7919) % N; /* a permutation: distinct seeds, not sorted */
		bw_sample_ctx c;
		cr_assert_eq(bw_sample_ctx_init(&c, 1, 40), 0);
		c.labor = mode == 1 || mode == 2;
		c.labor_star = rounds;
		for (int f = 0; f < 3; f++)
			for (uint64_t key = 1; key <= 3; key++) {
				const int64_t *bs = seeds + (key - 1) * n; /* each batch its own seeds */
				c.dep = mode == 2 || mode == 4 ? (bw_labor_batch){.k1 = bw_key(77, key / 2) | 1, .k2 = bw_key(77, key / 2 + 1) | 1,
								     .c = (double)(key % 2) / 2}
						  : (bw_labor_batch){0};
				bw_sampled b = {0};
				emu_batch e = {0};
				cr_assert_eq(bw_sample_batch(&c, &g, bs, n, 3, fans[f], key, &b), 0, "%s", burrow_last_error());
				emu_sample(&g, bs, n, 3, fans[f], key, mode ? &c.dep : NULL, rounds, &e);
				char what[96];
				snprintf(what, sizeof what, "mode %d width %d fanouts %d key %llu", mode, width, f,
					 (unsigned long long)key);
				same_as_cpu(&e, &b, what);
				emu_free(&e, 3);
				bw_sampled_free_arrays(&b);
			}
		bw_sample_ctx_free(&c);
		free(seeds);
		free((void *)g.indptr);
		free((void *)g.indices);
	}
}

/* The GPU sampler's kernels, run on the host with stand-ins for CUB, give the CPU sampler's
 * batch element for element: the same offsets, local ids and input ids, for int32 and
 * int64 ids, fanouts above and below 32 and whole rows (-1). */
Test(kernels, gpu_sampler_batches_equal_the_cpu_sampler) { gpu_sampler_case(false, 0); }

/* The same with LABOR (bw_sk_labor: the heap in the thread's arrays up to 32 picks, above in
 * the block's scratch and the row's output slots), on rows that repeat their neighbors out
 * of order, so that which of two equal variates a row keeps shows in its block. */
Test(kernels, gpu_sampler_labor_batches_equal_the_cpu_sampler) { gpu_sampler_case(true, 1); }

/* The same with LABOR's batch dependency (bw_labor_layer's mix of two groups' variates). */
Test(kernels, gpu_sampler_labor_dependent_batches_equal_the_cpu_sampler) { gpu_sampler_case(true, 2); }

/* The same with LABOR-* (sample_kernels.h's bw_sk_ls_*: the rows' neighborhoods sorted by
 * source, the rounds, the counts, the picks), edge weights bit for bit too: 3 rounds, and with
 * batch dependency up to 64 (the rounds' sums, in source order, decide the last one as on the
 * CPU), on rows that repeat sources. */
Test(kernels, gpu_sampler_labor_star_batches_equal_the_cpu_sampler) { gpu_sampler_case(true, 3); }
Test(kernels, gpu_sampler_labor_star_dependent_batches_equal_the_cpu_sampler) { gpu_sampler_case(true, 4); }

/* The GPU's LABOR-* preparation (emu_star_prep: bw_sk_ls_* over their grids) leaves what the
 * CPU's bw_labor_star_prep leaves, bit for bit: the distinct sources (numbered alike), each
 * one's pi and variate, every row's c, the last round's expected distinct sources (the sum
 * whose order decides when the rounds stop) and the counts of the rows above the fanout; 500
 * rows of random_graph(repeats), int32 and int64 ids, fanouts 0, 5 and 33, 1, 3 and 64 rounds,
 * with and without batch dependency. */
Test(kernels, gpu_labor_star_prep_equals_the_cpu)
{
	const int64_t N = 4000, nd = 500;
	for (int width = 4; width <= 8; width += 4) {
		burrow_csr g = random_graph(N, width, 11 + (uint64_t)width, true);
		int64_t nodes[500], row[1000], ip[501], cnt[501];
		for (int64_t i = 0; i < nd; i++) {
			nodes[i] = (i * 7919 + 3) % N;
			row[2 * i] = g.indptr[nodes[i]];
			row[2 * i + 1] = g.indptr[nodes[i] + 1] - row[2 * i];
		}
		const int ks[3] = {0, 5, 33}, rs[3] = {1, 3, 64};
		for (int kk = 0; kk < 3; kk++)
			for (int ri = 0; ri < 3; ri++)
				for (int withdep = 0; withdep < 2; withdep++) {
					const bw_labor_batch b = {.k1 = bw_key(8, (uint64_t)ri) | 1, .k2 = bw_key(9, (uint64_t)ri) | 1,
								  .c = 0.25};
					uint64_t lk;
					bw_labor_dep dep;
					const bw_labor_dep *dp = bw_labor_layer(withdep ? &b : NULL, 1, bw_key(5, (uint64_t)kk), &lk, &dep);
					bw_sample_ctx c;
					cr_assert_eq(bw_sample_ctx_init(&c, 1, 40), 0);
					c.labor_star = rs[ri];
					bw_ls_layer L = {.gi = g.indices, .w4 = width == 4, .row = row, .ip = ip, .nd = nd, .k = ks[kk],
							 .ub = 12, .lk = lk, .dep = dp};
					bw_labor_star_prep(&c, &L, 0, 1);
					cr_assert_eq(L.st, 0, "%s", L.msg);
					emu_ls e = {0};
					emu_star_prep(&g, nodes, nd, ks[kk], rs[ri], lk, dp, cnt, &e);
					char what[96];
					snprintf(what, sizeof what, "width %d k %d rounds %d%s", width, ks[kk], rs[ri],
						 withdep ? " (dependency)" : "");
					cr_assert_eq(e.m, L.m, "%s: %lld sources vs the CPU's %lld", what, (long long)e.m, (long long)L.m);
					for (int64_t u = 0; u < L.m; u++)
						cr_assert(!memcmp(&e.node[u], &c.ls_node[u], sizeof e.node[u]),
							  "%s: source %lld: pi %.17g r %.17g vs the CPU's %.17g %.17g", what, (long long)u,
							  e.node[u].pi, e.node[u].r, c.ls_node[u].pi, c.ls_node[u].r);
					for (int64_t i = 0; i < nd; i++) {
						cr_assert(!memcmp(&e.c[i], &c.ls_c[i], sizeof e.c[i]), "%s: row %lld: c %.17g vs the CPU's %.17g",
							  what, (long long)i, e.c[i], c.ls_c[i]);
						if (row[2 * i + 1] > ks[kk])
							cr_assert_eq(cnt[i], ip[i + 1], "%s: row %lld: %lld picks vs the CPU's %lld", what,
								     (long long)i, (long long)cnt[i], (long long)ip[i + 1]);
					}
					cr_assert(!memcmp(&e.ex, &L.ex, sizeof e.ex), "%s: the last round's sum %.17g vs the CPU's %.17g",
						  what, e.ex, L.ex);
					emu_ls_free(&e);
					bw_sample_ctx_free(&c);
				}
		free((void *)g.indptr);
		free((void *)g.indices);
	}
}

/* The obvious bottom-k of a row: every position's (key, position) sorted, the first k
 * taken, their positions sorted. */
static int cmp_key_pos(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static void ref_labor_pick(const int64_t *row, int64_t d, int64_t k, uint64_t lk, const bw_labor_dep *dep, int64_t *pos)
{
	uint64_t(*kp)[2] = malloc((size_t)d * sizeof *kp);
	for (int64_t p = 0; p < d; p++) {
		kp[p][0] = bw_labor_key(lk, dep, (uint64_t)row[p]);
		kp[p][1] = (uint64_t)p;
	}
	qsort(kp, (size_t)d, sizeof *kp, cmp_key_pos);
	for (int64_t j = 0; j < k; j++)
		pos[j] = (int64_t)kp[j][1];
	qsort(pos, (size_t)k, sizeof *pos, cmp_i64);
	free(kp);
}

/* labor.h's bottom-k (bw_labor_pick, the one row pick of the CPU's and the GPU's LABOR)
 * equals the obvious one, on rows whose ids repeat (equal keys: the earlier position wins),
 * k from 1 to d - 1 across 32 (the heap's two homes on the device), with and without batch
 * dependency. */
Test(kernels, labor_pick_equals_a_sorted_reference)
{
	int64_t row[200], got[200], want[200];
	uint64_t hk[200];
	bw_rng r;
	bw_rng_seed(&r, 3);
	for (int trial = 0; trial < 400; trial++) {
		const int64_t d = 2 + (int64_t)bw_rng_below(&r, 199), k = 1 + (int64_t)bw_rng_below(&r, (uint64_t)d - 1);
		for (int64_t p = 0; p < d; p++)
			row[p] = (int64_t)bw_rng_below(&r, (uint64_t)(d / 3 + 1)); /* about three of each */
		const bw_labor_batch b = {.k1 = bw_key(5, (uint64_t)trial) | 1, .k2 = bw_key(6, (uint64_t)trial) | 1,
					  .c = (double)(trial % 4) / 4};
		uint64_t lk;
		bw_labor_dep dep;
		const bw_labor_dep *dp = bw_labor_layer(trial % 2 ? &b : NULL, trial % 3, bw_key(9, (uint64_t)trial), &lk, &dep);
		bw_labor_pick(row, false, 0, d, k, lk, dp, hk, got);
		ref_labor_pick(row, d, k, lk, dp, want);
		cr_assert(!memcmp(got, want, (size_t)k * sizeof *got), "trial %d: d %lld k %lld%s: the picks differ", trial,
			  (long long)d, (long long)k, dp ? " (dependency)" : "");
	}
}
