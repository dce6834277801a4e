/* test_dist.c: the pieces of partition-parallel training that run in one process: the
 * overlapped layer forward equals the plain one, and calls wait exactly once, after the
 * work that needs no late rows. */
#include <criterion/criterion.h>

#include "../train/train.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TestSuite(dist, .timeout = 60);

typedef struct probe {
	int polls, waits;
	float *late;       /* the late rows: filled by wait, NaN before */
	const float *src;
	size_t bytes;
} probe;

static int probe_poll(void *ctx)
{
	((probe *)ctx)->polls++;
	return 0;
}

static int probe_wait(void *ctx)
{
	probe *p = ctx;
	p->waits++;
	memcpy(p->late, p->src, p->bytes); /* the halo rows "arrive" */
	return 0;
}

static void check(bw_layer_kind kind, int64_t in, int64_t out, uint64_t key)
{
	const int64_t nd = 40, ns = 70, split = 55;
	bw_rng r;
	bw_rng_seed(&r, key);
	/* a block whose rows below 20 only read sources below split: inner rows */
	int64_t *indptr = malloc((nd + 1) * sizeof *indptr);
	int32_t *indices = malloc(nd * 8 * sizeof *indices);
	int64_t inner[40], outer[40], ni = 0, no = 0;
	indptr[0] = 0;
	for (int64_t i = 0; i < nd; i++) {
		int64_t deg = (int64_t)bw_rng_below(&r, 8), k = indptr[i];
		bool late = false;
		for (int64_t e = 0; e < deg; e++) {
			int32_t s = (int32_t)bw_rng_below(&r, (uint64_t)(i < 20 ? split : ns));
			late |= s >= split;
			indices[k++] = s;
		}
		indptr[i + 1] = k;
		if (late)
			outer[no++] = i;
		else
			inner[ni++] = i;
	}
	cr_assert(ni > 10 && no > 5, "inner %lld outer %lld", (long long)ni, (long long)no);
	bw_block blk;
	bw_block_init(&blk, nd, ns, indptr, indices);
	cr_assert_eq(bw_block_prepare(&blk, false, kind == BW_LAYER_GCN), 0);
	int64_t np = bw_layer_num_params(kind, in, out);
	float *params = malloc(np * sizeof *params), *grads = calloc(np, sizeof *grads);
	bw_layer a, b;
	bw_layer_bind(&a, kind, in, out, params, grads);
	bw_layer_init(&a, key);
	bw_layer_bind(&b, kind, in, out, params, grads);
	for (int64_t j = 0; j < out; j++)
		params[np - out + j] = 0.1f * (float)j; /* a bias that shows */
	bw_tensor x, x2, z1 = {0}, z2 = {0};
	cr_assert_eq(bw_tensor_alloc(&x, ns, in), 0);
	cr_assert_eq(bw_tensor_alloc(&x2, ns, in), 0);
	for (int64_t k = 0; k < ns * in; k++)
		x.data[k] = (float)(2 * bw_rng_uniform(&r) - 1);
	/* x2: the late rows are NaN until wait delivers them */
	memcpy(x2.data, x.data, split * in * sizeof(float));
	for (int64_t k = split * in; k < ns * in; k++)
		x2.data[k] = NAN;
	probe p = {.late = x2.data + split * in, .src = x.data + split * in, .bytes = (ns - split) * in * sizeof(float)};
	bw_overlap ov = {.split = split, .inner = inner, .n_inner = ni, .outer = outer, .n_outer = no,
			 .poll = probe_poll, .wait = probe_wait, .ctx = &p};
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 1), 0);
	cr_assert_eq(bw_layer_forward(&be, &a, &blk, &x, &z1), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_layer_forward_overlap(&be, &b, &blk, &x2, &z2, &ov), 0, "%s", burrow_last_error());
	cr_assert_eq(p.waits, 1);
	cr_assert_geq(p.polls, 1);
	for (int64_t k = 0; k < nd * out; k++)
		cr_assert(fabsf(z1.data[k] - z2.data[k]) <= 1e-5f * (1 + fabsf(z1.data[k])), "kind %d in %lld out %lld: "
			  "element %lld: %g vs %g", kind, (long long)in, (long long)out, (long long)k, z1.data[k], z2.data[k]);
	/* the saved state serves the same backward */
	cr_assert_eq(a.agg.rows, b.agg.rows);
	for (int64_t k = 0; k < a.agg.rows * a.agg.cols; k++)
		cr_assert(fabsf(a.agg.data[k] - b.agg.data[k]) <= 1e-5f * (1 + fabsf(a.agg.data[k])));
	bw_layer_release(&a);
	bw_layer_release(&b);
	bw_tensor_free(&x);
	bw_tensor_free(&x2);
	bw_tensor_free(&z1);
	bw_tensor_free(&z2);
	bw_block_release(&blk);
	free(params);
	free(grads);
	free(indptr);
	free(indices);
}

Test(dist, overlapped_forward_equals_plain)
{
	check(BW_LAYER_SAGE, 5, 9, 1);  /* aggregate first */
	check(BW_LAYER_SAGE, 9, 4, 2);  /* project first */
	check(BW_LAYER_GCN, 5, 9, 3);
	check(BW_LAYER_GCN, 9, 4, 4);
}

Test(dist, overlap_refuses_a_linear_layer_and_bad_splits)
{
	int64_t indptr[3] = {0, 1, 2};
	int32_t indices[2] = {0, 2};
	bw_block blk;
	bw_block_init(&blk, 2, 3, indptr, indices);
	float params[64] = {0}, grads[64] = {0};
	bw_layer l;
	bw_layer_bind(&l, BW_LAYER_LINEAR, 2, 2, params, grads);
	bw_tensor x = bw_tensor_view(params, 3, 2), z = {0};
	int64_t rows[2] = {0, 1};
	bw_overlap ov = {.split = 2, .inner = rows, .n_inner = 2, .wait = probe_wait};
	bw_backend be;
	bw_backend_init(&be, BW_BACKEND_CPU, 1);
	cr_assert_eq(bw_layer_forward_overlap(&be, &l, &blk, &x, &z, &ov), BURROW_E_INVAL);
	bw_layer_bind(&l, BW_LAYER_SAGE, 2, 2, params, grads);
	ov.split = 4; /* beyond the sources */
	cr_assert_eq(bw_layer_forward_overlap(&be, &l, &blk, &x, &z, &ov), BURROW_E_INVAL);
	bw_tensor_free(&z);
}
