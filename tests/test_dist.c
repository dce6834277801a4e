/* test_dist.c: the pieces of partition-parallel training that run in one process: the
 * overlapped layer forward and backward equal the plain ones; forward calls wait exactly
 * once, backward posts the late rows' gradients exactly once, when they are final. */
#include <criterion/criterion.h>

#include "../train/dist/dist.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TestSuite(dist, .timeout = 60);

typedef struct probe {
	int polls, waits, posts;
	float *late;       /* the late rows: filled by wait, NaN before */
	const float *src;
	size_t bytes;
	int64_t split;     /* backward: the late gradient rows at post time go to posted */
	float *posted;
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

static int probe_post(void *ctx, const bw_tensor *gx)
{
	probe *p = ctx;
	p->posts++;
	memcpy(p->posted, gx->data + p->split * gx->cols, (size_t)((gx->rows - p->split) * gx->cols) * sizeof(float));
	return 0;
}

static void assert_close(const float *a, const float *b, int64_t n, const char *what, int kind)
{
	for (int64_t k = 0; k < n; k++)
		cr_assert(fabsf(a[k] - b[k]) <= 1e-5f * (1 + fabsf(a[k])), "kind %d: %s element %lld: %g vs %g", kind,
			  what, (long long)k, a[k], b[k]);
}

static void check(bw_layer_kind kind, int64_t in, int64_t out, uint64_t key)
{
	const int64_t nd = 40, ns = 70, split = 55;
	bw_rng r;
	bw_rng_seed(&r, key);
	/* a block whose rows below 20 only read sources below split: inner rows */
	int64_t *indptr = malloc((nd + 1) * sizeof *indptr);
	int32_t *indices = malloc(nd * 8 * sizeof *indices);
	int64_t outer[40], ni = 0, no = 0;
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
			ni++;
	}
	cr_assert(ni > 10 && no > 5, "inner %lld outer %lld", (long long)ni, (long long)no);
	bw_block blk, blk2;
	bw_block_init(&blk, nd, ns, indptr, indices);
	bw_block_init(&blk2, nd, ns, indptr, indices);
	cr_assert_eq(bw_block_split(&blk2, split), 0);
	/* the rows with a late part are the rows with a halo source; early edges are the owned ones */
	int64_t n_late = 0;
	for (int64_t i = 0; i < nd; i++) {
		if (blk2.part_indptr[1][i + 1] > blk2.part_indptr[1][i])
			cr_assert_eq(outer[n_late++], i);
		for (int64_t e = blk2.part_indptr[0][i]; e < blk2.part_indptr[0][i + 1]; e++)
			cr_assert_lt(blk2.part_indices[0][e], split);
		for (int64_t e = blk2.part_indptr[1][i]; e < blk2.part_indptr[1][i + 1]; e++)
			cr_assert_geq(blk2.part_indices[1][e], split);
	}
	cr_assert_eq(n_late, no);
	cr_assert_eq(bw_block_prepare(&blk, true, kind == BW_LAYER_GCN), 0);
	cr_assert_eq(bw_block_prepare(&blk2, true, kind == BW_LAYER_GCN), 0);
	int64_t np = bw_layer_num_params(kind, in, out);
	float *params = malloc(np * sizeof *params), *ga = calloc(np, sizeof *ga), *gb = calloc(np, sizeof *gb);
	bw_layer a, b;
	bw_layer_bind(&a, kind, in, out, params, ga);
	bw_layer_init(&a, NULL, key);
	bw_layer_bind(&b, kind, in, out, params, gb);
	for (int64_t j = 0; j < out; j++)
		params[np - out + j] = 0.1f * (float)j; /* a bias that shows */
	bw_tensor x, x2, z1 = {0}, z2 = {0}, gz, gx1 = {0}, gx2 = {0};
	cr_assert_eq(bw_tensor_alloc(&x, NULL, ns, in), 0);
	cr_assert_eq(bw_tensor_alloc(&x2, NULL, ns, in), 0);
	cr_assert_eq(bw_tensor_alloc(&gz, NULL, nd, out), 0);
	for (int64_t k = 0; k < ns * in; k++)
		x.data[k] = (float)(2 * bw_rng_uniform(&r) - 1);
	for (int64_t k = 0; k < nd * out; k++)
		gz.data[k] = (float)(2 * bw_rng_uniform(&r) - 1);
	/* x2: the late rows are NaN until wait delivers them */
	memcpy(x2.data, x.data, split * in * sizeof(float));
	for (int64_t k = split * in; k < ns * in; k++)
		x2.data[k] = NAN;
	float *posted = malloc((ns - split) * in * sizeof *posted);
	probe p = {.late = x2.data + split * in, .src = x.data + split * in, .bytes = (ns - split) * in * sizeof(float),
		   .split = split, .posted = posted};
	bw_overlap ov = {.poll = probe_poll, .wait = probe_wait, .post = probe_post, .ctx = &p};
	bw_backend be;
	cr_assert_eq(bw_backend_init(&be, BW_BACKEND_CPU, 1), 0);
	cr_assert_eq(bw_block_upload(&blk, be.dev), 0);
	cr_assert_eq(bw_block_upload(&blk2, be.dev), 0);
	cr_assert_eq(bw_layer_forward(&be, &a, &blk, &x, &z1), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_layer_forward_overlap(&be, &b, &blk2, &x2, &z2, &ov), 0, "%s", burrow_last_error());
	cr_assert_eq(p.waits, 1);
	cr_assert_geq(p.polls, 1);
	assert_close(z1.data, z2.data, nd * out, "output", kind);
	/* the saved state serves the same backward */
	cr_assert_eq(a.agg.rows, b.agg.rows);
	assert_close(a.agg.data, b.agg.data, a.agg.rows * a.agg.cols, "saved state", kind);
	/* backward: the same gradients; the late rows were final when posted */
	cr_assert_eq(bw_layer_backward(&be, &a, &blk, &x, &gz, &gx1), 0, "%s", burrow_last_error());
	p.polls = 0;
	cr_assert_eq(bw_layer_backward_overlap(&be, &b, &blk2, &x2, &gz, &gx2, &ov), 0, "%s", burrow_last_error());
	cr_assert_eq(p.posts, 1);
	cr_assert_geq(p.polls, 1);
	assert_close(gx1.data, gx2.data, ns * in, "input gradient", kind);
	assert_close(gx1.data + split * in, posted, (ns - split) * in, "posted gradient", kind);
	assert_close(ga, gb, np, "parameter gradient", kind);
	bw_layer_release(&a);
	bw_layer_release(&b);
	bw_tensor_free(&x);
	bw_tensor_free(&x2);
	bw_tensor_free(&z1);
	bw_tensor_free(&z2);
	bw_tensor_free(&gz);
	bw_tensor_free(&gx1);
	bw_tensor_free(&gx2);
	bw_block_release(&blk);
	bw_block_release(&blk2);
	free(params);
	free(ga);
	free(gb);
	free(posted);
	free(indptr);
	free(indices);
}

Test(dist, overlapped_forward_and_backward_equal_plain)
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
	bw_block blk, split;
	bw_block_init(&blk, 2, 3, indptr, indices);
	bw_block_init(&split, 2, 3, indptr, indices);
	cr_assert_eq(bw_block_split(&split, 4), BURROW_E_INVAL); /* beyond the sources */
	cr_assert_eq(bw_block_split(&split, 1), BURROW_E_INVAL); /* inside the rows */
	cr_assert_eq(bw_block_split(&split, 2), 0);
	float params[64] = {0}, grads[64] = {0};
	bw_layer l;
	bw_layer_bind(&l, BW_LAYER_LINEAR, 2, 2, params, grads);
	bw_tensor x = bw_tensor_view(NULL, params, 3, 2), z = {0};
	bw_overlap ov = {.wait = probe_wait};
	bw_backend be;
	bw_backend_init(&be, BW_BACKEND_CPU, 1);
	cr_assert_eq(bw_layer_forward_overlap(&be, &l, &split, &x, &z, &ov), BURROW_E_INVAL);
	bw_layer_bind(&l, BW_LAYER_SAGE, 2, 2, params, grads);
	/* a block that was not split */
	cr_assert_eq(bw_layer_forward_overlap(&be, &l, &blk, &x, &z, &ov), BURROW_E_INVAL);
	bw_block_release(&split);
	bw_tensor_free(&z);
}

/* NCCL, cuBLAS and cuSPARSE are opened on first use, never linked: the burrow command, this
 * test binary and the MPI test programs start on a machine without them (a GPU machine
 * whose toolkit keeps NCCL elsewhere); and in a CUDA build a missing libnccl is refused in
 * one line that names it and the way out. */
Test(dist, nccl_is_opened_not_linked)
{
	const char *b = getenv("BURROW_BUILD");
	char *out = NULL;
	int rc = tu_sh(&out, NULL, "for f in %s /proc/%d/exe %s/tests/dist_check %s/tests/distmb_check; do "
				  "[ ! -e \"$f\" ] || ldd \"$f\"; done | grep -ciE 'nccl|cublas|cusparse'",
		       tu_burrow(), (int)getpid(), b ? b : "/nonexistent", b ? b : "/nonexistent");
	cr_assert(out && atoi(out) == 0, "linked at load time (exit %d): %s", rc, out ? out : "(no output)");
	free(out);
#ifdef BURROW_CUDA
	cr_assert_eq(bw_comm_nccl_load("libnccl-absent.so.2"), BURROW_E_UNSUPPORTED);
	const char *m = burrow_last_error();
	cr_assert(strstr(m, "comm: nccl: cannot load libnccl-absent.so.2 (") && strstr(m, "--comm staged") &&
			  !strchr(m, '\n'),
		  "%s", m);
	/* the toolkit's own: loaded, or refused the same way (a machine without NCCL) */
	const int st = bw_comm_nccl_load(NULL);
	cr_assert(st == 0 || (st == BURROW_E_UNSUPPORTED && strstr(burrow_last_error(), "cannot load libnccl.so.")),
		  "%d %s", st, burrow_last_error());
#endif
}
