/* test_ops.c: every op of every registered compute backend against slow obvious ref_ code
 * in double precision, in one loop over the backends (as ggml's test-backend-ops): each
 * test is a Criterion parameterized test over the backend kinds, inputs are uploaded to the
 * backend's device and results downloaded through the device layer. A kind this build
 * lacks, or a registered backend without its device (CUDA without a GPU), is a skipped
 * test, counted as such in Criterion's summary, never a pass.
 *
 * Tolerances, |got - ref| <= tol * (1 + |ref|):
 *   single-rounding elementwise ops (bias add, ReLU, dropout, argmax): exact
 *   axpy, scale, five Adam / SGD steps:        1e-5 (float32 arithmetic against double)
 *   GEMM, aggregation (SpMM), column sums, the loss and its gradient (reductions):
 *                                              1e-5 on the CPU, 1e-4 elsewhere (TF32 off) */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <criterion/parameterized.h>

#include "../train/compute/backend_impl.h"
#include "../train/compute/compute.h"
#include "util.h"
#include "compute_util.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the backend loop */

static int kinds[BW_BACKEND_KINDS] = {BW_BACKEND_CPU, BW_BACKEND_CUDA};

#define BACKENDS(name)                                                                  \
	ParameterizedTestParameters(ops, name)                                          \
	{                                                                               \
		return cr_make_param_array(int, kinds, sizeof kinds / sizeof *kinds);   \
	}                                                                               \
	ParameterizedTest(int *kind, ops, name, .timeout = 60)

/* The backend of this kind on its device 0, or a skipped test saying why there is none. */
static bw_backend open_backend(int kind, int threads)
{
	const bw_backend_reg *r = bw_backend_find(kind);
	if (!r)
		cr_skip_test("backend kind %d is not in this build", kind);
	if (r->devices() < 1)
		cr_skip_test("backend %s is registered but has no device here", r->name);
	bw_backend be;
	int st = bw_backend_init(&be, kind, threads);
	if (st == BURROW_E_UNSUPPORTED)
		cr_skip_test("backend %s: %s", r->name, burrow_last_error());
	cr_assert_eq(st, 0, "%s: %s", r->name, burrow_last_error());
	return be;
}

/* A skipped test's reason, NULL when it was not skipped, or not run at all (disabled, or
 * left out by --filter: those are no skip of ours). */
static const char *skip_reason(const struct criterion_test_stats *t)
{
	if (t->test_status != CR_STATUS_SKIPPED || (t->test->data && t->test->data->disabled))
		return NULL;
	return t->message && *t->message ? t->message : "no reason given";
}

#define FOR_EACH_TEST(g, s, t)                                                  \
	for (struct criterion_suite_stats *s = (g)->suites; s; s = s->next) \
		for (struct criterion_test_stats *t = s->tests; t; t = t->next)

/* Criterion's synthesis line leaves skips out: say how many, beside it, and why (each
 * distinct reason once, at its first test, with how many gave it: Criterion prints its
 * [SKIP] lines only with --verbose), so a backend that ran nothing or an absent dataset is
 * never mistaken for a pass. */
/* Progress while make test runs: a line as each suite ends (suites that ran something). */
ReportHook(POST_SUITE)(struct criterion_suite_stats *ss)
{
	const size_t ran = ss->tests_passed + ss->tests_failed + ss->tests_crashed;
	if (ran)
		fprintf(stderr, "[====] %s: %zu passed%s%.0zu%s%.0zu%s\n", ss->suite->name, ss->tests_passed,
			ss->tests_failed ? ", failed " : "", ss->tests_failed, ss->tests_crashed ? ", crashed " : "",
			ss->tests_crashed, ss->tests_skipped ? ", some skipped" : "");
}

ReportHook(POST_ALL)(struct criterion_global_stats *stats)
{
	size_t skipped = 0;
	FOR_EACH_TEST(stats, ss, ts)
		skipped += skip_reason(ts) != NULL;
	fprintf(stderr, "[====] Skipped: %zu\n", skipped);
	FOR_EACH_TEST(stats, ss, ts) {
		const char *why = skip_reason(ts);
		if (!why)
			continue;
		size_t before = 0, same = 0;
		bool past = false;
		FOR_EACH_TEST(stats, s2, t2) {
			const char *w2 = skip_reason(t2);
			past = past || t2 == ts;
			if (w2 && !strcmp(w2, why))
				*(past ? &same : &before) += 1;
		}
		if (!before) {
			if (same > 1)
				fprintf(stderr, "[SKIP] %s::%s and %zu more: %s\n", ss->suite->name, ts->test->name, same - 1, why);
			else
				fprintf(stderr, "[SKIP] %s::%s: %s\n", ss->suite->name, ts->test->name, why);
		}
	}
}

static double red_tol(const bw_backend *be) { return be->kind == BW_BACKEND_CPU ? 1e-5 : 1e-4; }
/* Equal bits (bits), else within tol as close_to. */
static bool same_or_close(float got, float ref, bool bits, double tol)
{
	return bits ? memcmp(&got, &ref, sizeof got) == 0 : close_to(got, ref, tol);
}
static double elem_tol(const bw_backend *be)
{
	(void)be;
	return 1e-5;
}

/* n bytes of host memory into new device memory of be (free with bw_device_free). */
static void *dev_put(const bw_backend *be, const void *host, size_t n)
{
	void *p;
	cr_assert_eq(bw_device_alloc(be->dev, n, &p), 0, "%s", burrow_last_error());
	if (host)
		cr_assert_eq(bw_device_upload(be->dev, p, host, n), 0, "%s", burrow_last_error());
	return p;
}

/* n bytes of device memory back into new host memory (free with free). */
static void *dev_get(const bw_backend *be, const void *p, size_t n)
{
	void *h = malloc(n ? n : 1);
	cr_assert_eq(bw_device_download(be->dev, h, p, n), 0, "%s", burrow_last_error());
	return h;
}

/* A tensor on be's device holding the host rows src. */
static bw_tensor dev_tensor(const bw_backend *be, const float *src, int64_t rows, int64_t cols)
{
	bw_tensor t;
	cr_assert_eq(bw_tensor_alloc(&t, be->dev, rows, cols), 0, "%s", burrow_last_error());
	if (src)
		cr_assert_eq(bw_device_upload(be->dev, t.data, src, (size_t)(rows * cols) * sizeof(float)), 0);
	return t;
}

static float *tensor_get(const bw_backend *be, const bw_tensor *t)
{
	return dev_get(be, t->data, (size_t)(t->rows * t->cols) * sizeof(float));
}

static float *uniform(int64_t n, uint64_t key, double lo, double hi)
{
	float *x = malloc((size_t)(n ? n : 1) * sizeof *x);
	fill_uniform(x, n, key, lo, hi);
	return x;
}

/* The loop covers the registry: the CPU first, every registered kind among the parameters
 * above, and a kind found by its entry. */
Test(ops, every_registered_backend_is_in_the_loop)
{
	const int n = bw_backend_count();
	cr_assert_geq(n, 1);
	cr_assert_eq(bw_backend_at(0)->kind, BW_BACKEND_CPU);
	cr_assert_null(bw_backend_at(n));
	for (int i = 0; i < n; i++) {
		const bw_backend_reg *r = bw_backend_at(i);
		bool listed = false;
		for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
			listed = listed || kinds[k] == r->kind;
		cr_assert(listed, "backend %s (kind %d) is registered but not in the test loop", r->name, r->kind);
		cr_assert_eq(bw_backend_find(r->kind), r);
	}
}

/* ------------------------------------------------------------ the device layer */

BACKENDS(device_copies_streams_and_views_keep_every_byte)
{
	bw_backend be = open_backend(*kind, 1);
	const bw_device *d = be.dev;
	const size_t n = 1000;
	unsigned char *h = malloc(n), *back = malloc(n);
	for (size_t i = 0; i < n; i++)
		h[i] = (unsigned char)(i * 7 + 3);
	void *a, *b, *pin;
	cr_assert_eq(bw_device_alloc(d, n, &a), 0);
	cr_assert_eq(bw_device_alloc(d, n, &b), 0);
	cr_assert_eq(bw_device_host_alloc(d, n, &pin), 0);
	/* synchronous: upload, device copy, download; memset */
	cr_assert_eq(bw_device_upload(d, a, h, n), 0);
	cr_assert_eq(bw_device_copy(d, b, a, n), 0);
	cr_assert_eq(bw_device_download(d, back, b, n), 0);
	cr_assert(memcmp(h, back, n) == 0);
	cr_assert_eq(bw_device_memset(d, b, 0xab, n / 2), 0);
	cr_assert_eq(bw_device_download(d, back, b, n), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(back[i], i < n / 2 ? 0xab : h[i], "byte %zu", i);
	/* asynchronous on a stream, from and to pinned memory, ordered by an event */
	bw_stream *s, *s2;
	bw_event *e;
	cr_assert_eq(bw_stream_open(d, &s), 0);
	cr_assert_eq(bw_stream_open(d, &s2), 0);
	cr_assert_eq(bw_event_open(d, &e), 0);
	memcpy(pin, h, n);
	cr_assert_eq(bw_device_memset_async(d, a, 0, n, s), 0);
	cr_assert_eq(bw_device_upload_async(d, a, pin, n, s), 0);
	cr_assert_eq(bw_event_record(d, e, s), 0);
	cr_assert_eq(bw_event_wait(d, s2, e), 0);
	cr_assert_eq(bw_device_copy_async(d, b, a, n, s2), 0);
	memset(back, 0, n);
	cr_assert_eq(bw_device_download_async(d, back, b, n, s2), 0);
	cr_assert_eq(bw_stream_sync(d, s2), 0);
	cr_assert_eq(bw_event_sync(d, e), 0);
	cr_assert(memcmp(h, back, n) == 0);
	bw_event_close(d, e);
	bw_stream_close(d, s);
	bw_stream_close(d, s2);
	/* a dbuf from host memory holds its bytes; on a host-memory device it borrows them */
	bw_dbuf db = {0};
	cr_assert_eq(bw_dbuf_from_host(&db, d, h, n), 0);
	cr_assert_eq(db.owned, !d->host_memory);
	cr_assert_eq(bw_device_download(d, back, db.ptr, n), 0);
	cr_assert(memcmp(h, back, n) == 0);
	bw_dbuf_free(&db);
	/* host views: read what is there, write what commit puts there */
	bw_stage st = {0};
	const void *rv;
	void *wv;
	cr_assert_eq(bw_stage_read(&st, d, a, n, &rv), 0);
	cr_assert(memcmp(rv, h, n) == 0);
	cr_assert_eq(d->host_memory, rv == a);
	cr_assert_eq(bw_stage_write(&st, d, b, n, &wv), 0);
	memset(wv, 0x5c, n);
	cr_assert_eq(bw_stage_write_commit(&st, d, b, wv, n), 0);
	cr_assert_eq(bw_device_download(d, back, b, n), 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(back[i], 0x5c);
	bw_stage_free(&st);
	/* tensors: growth on their device, zero rows, a tensor of another device refused */
	bw_tensor t = bw_tensor_empty(d);
	cr_assert_eq(bw_tensor_reshape(&t, NULL, 3, 4), 0);
	cr_assert_eq(t.dev, d);
	if (d != bw_device_cpu())
		cr_assert_eq(bw_tensor_reshape(&t, bw_device_cpu(), 3, 4), BURROW_E_INVAL);
	bw_tensor_free(&t);
	bw_device_host_free(d, pin);
	bw_device_free(d, a);
	bw_device_free(d, b);
	free(h);
	free(back);
	bw_backend_release(&be);
}

/* ------------------------------------------------------------ kernels vs ref_ */

BACKENDS(gemm_matches_ref_in_all_transposes)
{
	bw_backend be = open_backend(*kind, 2);
	const int64_t m = 13, n = 9, k = 17;
	for (int ta = 0; ta < 2; ta++)
		for (int tb = 0; tb < 2; tb++) {
			float *ah = uniform(m * k, 1 + ta, -1, 1), *bh = uniform(n * k, 3 + tb, -1, 1);
			float *ch = uniform(m * n, 5, -1, 1);
			bw_tensor a = dev_tensor(&be, ah, ta ? k : m, ta ? m : k), b = dev_tensor(&be, bh, tb ? n : k, tb ? k : n);
			bw_tensor c = dev_tensor(&be, ch, m, n);
			double *ad = to_double(ah, m * k), *bd = to_double(bh, n * k);
			double *ref = malloc((size_t)(m * n) * sizeof *ref);
			ref_matmul(ad, ta, bd, tb, m, n, k, ref);
			cr_assert_eq(bw_matmul(&be, &a, ta, &b, tb, 0.5f, 2.0f, &c), 0, "%s", burrow_last_error());
			float *got = tensor_get(&be, &c);
			for (int64_t i = 0; i < m * n; i++)
				cr_assert(close_to(got[i], 0.5 * ref[i] + 2.0 * ch[i], red_tol(&be)), "ta %d tb %d [%lld]: %g vs %g",
					  ta, tb, (long long)i, got[i], 0.5 * ref[i] + 2.0 * ch[i]);
			bw_tensor bad = dev_tensor(&be, NULL, m + 1, n);
			cr_assert_eq(bw_matmul(&be, &a, ta, &b, tb, 1, 0, &bad), BURROW_E_INVAL);
			bw_tensor_free(&bad);
			free(got);
			free(ad);
			free(bd);
			free(ref);
			free(ah);
			free(bh);
			free(ch);
			bw_tensor_free(&a);
			bw_tensor_free(&b);
			bw_tensor_free(&c);
		}
	bw_backend_release(&be);
}

/* Large enough that the CPU backend splits the GEMM over its threads (by rows when C is tall,
 * by columns when wide, with a remainder slice): every slice lands where it belongs, as
 * ref_matmul and one thread say (within rounding: a slice's shape may pick another OpenBLAS
 * kernel, so the two agree to float tolerance, not bit for bit). */
BACKENDS(gemm_split_over_threads_matches_one_thread)
{
	/* the third is one the CPU's own AVX-512 GEMM takes (neither transposed), where it has one */
	static const int64_t shapes[][3] = {{203, 37, 150}, {29, 261, 140}, {250, 128, 400}};
	bw_backend one = open_backend(*kind, 1), two = open_backend(*kind, 2);
	for (size_t sh = 0; sh < 3; sh++) {
		const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
		for (int ta = 0; ta < 2; ta++)
			for (int tb = 0; tb < 2; tb++) {
				float *ah = uniform(m * k, 11 + ta, -1, 1), *bh = uniform(n * k, 13 + tb, -1, 1);
				float *ch = uniform(m * n, 15, -1, 1);
				double *ad = to_double(ah, m * k), *bd = to_double(bh, n * k);
				double *ref = malloc((size_t)(m * n) * sizeof *ref);
				ref_matmul(ad, ta, bd, tb, m, n, k, ref);
				float *got[2];
				for (int t = 0; t < 2; t++) {
					bw_backend *be = t ? &two : &one;
					bw_tensor a = dev_tensor(be, ah, ta ? k : m, ta ? m : k);
					bw_tensor b = dev_tensor(be, bh, tb ? n : k, tb ? k : n), c = dev_tensor(be, ch, m, n);
					cr_assert_eq(bw_matmul(be, &a, ta, &b, tb, 0.5f, 2.0f, &c), 0, "%s", burrow_last_error());
					got[t] = tensor_get(be, &c);
					bw_tensor_free(&a);
					bw_tensor_free(&b);
					bw_tensor_free(&c);
				}
				for (int64_t i = 0; i < m * n; i++) {
					cr_assert(close_to(got[1][i], 0.5 * ref[i] + 2.0 * ch[i], red_tol(&two)),
						  "%lldx%lldx%lld ta %d tb %d [%lld]: %g vs %g", (long long)m, (long long)n,
						  (long long)k, ta, tb, (long long)i, got[1][i], 0.5 * ref[i] + 2.0 * ch[i]);
					cr_assert(close_to(got[0][i], got[1][i], red_tol(&two)),
						  "ta %d tb %d [%lld]: 1 thread %g, 2 threads %g", ta, tb, (long long)i, got[0][i],
						  got[1][i]);
				}
				free(got[0]);
				free(got[1]);
				free(ad);
				free(bd);
				free(ref);
				free(ah);
				free(bh);
				free(ch);
			}
	}
	bw_backend_release(&one);
	bw_backend_release(&two);
}

/* The CPU's own GEMM (gemm_avx512.c) against ref_matmul, called directly on shapes that
 * cover its edges: a last tile of fewer than 12 rows, a last panel of fewer than 32 columns
 * (n = 70, and n = 33: one column in the second panel), k across its 384-row blocks and k
 * shorter than one, strides wider than the rows; alpha with beta 0 (c full of NaN, which
 * must not be read), 1 and -2; one and two threads give the same bits; the columns past n
 * in each row of c stay as they were. */
Test(ops, own_gemm_matches_ref_and_is_thread_independent)
{
	if (!bw_gemm_own_available())
		cr_skip_test("this CPU has no AVX-512: OpenBLAS does every product");
	static const int64_t shapes[][3] = {{67, 70, 900}, {12, 33, 5}, {130, 256, 384}, {49, 64, 385}};
	static const float betas[] = {0.0f, 1.0f, -2.0f};
	for (size_t sh = 0; sh < 4; sh++)
		for (size_t bi = 0; bi < 3; bi++) {
			const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2];
			const int64_t lda = k + 3, ldb = n + 2, ldc = n + 5;
			const float beta = betas[bi];
			float *a = uniform(m * lda, 31, -1, 1), *b = uniform(k * ldb, 32, -1, 1), *c0 = uniform(m * ldc, 33, -1, 1);
			if (beta == 0.0f)
				for (int64_t i = 0; i < m; i++)
					for (int64_t j = 0; j < n; j++)
						c0[i * ldc + j] = NAN;
			double *ad = malloc((size_t)(m * k) * sizeof *ad), *bd = malloc((size_t)(k * n) * sizeof *bd);
			double *ref = malloc((size_t)(m * n) * sizeof *ref);
			for (int64_t i = 0; i < m; i++)
				for (int64_t q = 0; q < k; q++)
					ad[i * k + q] = a[i * lda + q];
			for (int64_t q = 0; q < k; q++)
				for (int64_t j = 0; j < n; j++)
					bd[q * n + j] = b[q * ldb + j];
			ref_matmul(ad, false, bd, false, m, n, k, ref);
			float *scratch = bw_aligned_alloc(64, bw_gemm_own_scratch(n, k));
			float *got[2];
			for (int t = 0; t < 2; t++) {
				got[t] = malloc((size_t)(m * ldc) * sizeof(float));
				memcpy(got[t], c0, (size_t)(m * ldc) * sizeof(float));
				cr_assert_eq(bw_gemm_own(t + 1, m, n, k, 0.5f, a, lda, b, ldb, beta, got[t], ldc, scratch), 0);
			}
			for (int64_t i = 0; i < m; i++) {
				for (int64_t j = 0; j < n; j++) {
					const double want = 0.5 * ref[i * n + j] + (beta == 0.0f ? 0.0 : beta * c0[i * ldc + j]);
					cr_assert(close_to(got[0][i * ldc + j], want, 1e-5), "%lldx%lldx%lld beta %g [%lld, %lld]: %g vs %g",
						  (long long)m, (long long)n, (long long)k, beta, (long long)i, (long long)j,
						  got[0][i * ldc + j], want);
				}
				cr_assert(memcmp(got[0] + i * ldc + n, c0 + i * ldc + n, 5 * sizeof(float)) == 0,
					  "row %lld: columns past n written", (long long)i);
			}
			cr_assert(memcmp(got[0], got[1], (size_t)(m * ldc) * sizeof(float)) == 0, "%lldx%lldx%lld: 1 and 2 threads differ",
				  (long long)m, (long long)n, (long long)k);
			bw_aligned_free(scratch);
			free(got[0]);
			free(got[1]);
			free(ad);
			free(bd);
			free(ref);
			free(a);
			free(b);
			free(c0);
		}
}

/* op(a) of [a | a2] (trans false) or [a | a2]^T (trans) as one dense [m, k] matrix in double. */
static double *cat_dense(const bw_gemm_a *op, int64_t m, int64_t k)
{
	double *d = malloc((size_t)(m * k) * sizeof *d);
	for (int64_t i = 0; i < m; i++)
		for (int64_t q = 0; q < k; q++) {
			if (op->trans)
				d[i * k + q] = i < op->split ? op->a[q * op->lda + i] : op->a2[q * op->lda2 + i - op->split];
			else
				d[i * k + q] = q < op->split ? op->a[i * op->lda + q] : op->a2[i * op->lda2 + q - op->split];
		}
	return d;
}

/* The own GEMM over two pieces side by side and over a transposed first operand
 * (bw_gemm_own_op: SAGE's fused products) against ref_matmul: the split inside a block of
 * 384 steps and on a block's edge, short row tiles on both sides of a transposed split,
 * strides wider than the rows, beta 0 (c full of NaN) and -2; 1, 2 and 3 threads give the
 * same bits. */
Test(ops, own_gemm_over_two_pieces_and_transposed)
{
	if (!bw_gemm_own_available())
		cr_skip_test("this CPU has no AVX-512: OpenBLAS does every product");
	/* m, n, k, split, trans */
	static const int64_t shapes[][5] = {{67, 70, 450, 200, 0}, {49, 64, 768, 384, 0}, {12, 33, 90, 0, 0},
					     {67, 64, 900, 37, 1}, {256, 256, 1000, 128, 1}, {50, 96, 300, 50, 1}};
	for (size_t sh = 0; sh < sizeof shapes / sizeof *shapes; sh++)
		for (int bi = 0; bi < 2; bi++) {
			const int64_t m = shapes[sh][0], n = shapes[sh][1], k = shapes[sh][2], split = shapes[sh][3];
			const bool trans = shapes[sh][4];
			const float beta = bi ? -2.0f : 0.0f;
			/* the pieces: [m, split] and [m, k - split], or [k, split] and [k, m - split] */
			const int64_t r1 = trans ? k : m, c1 = split, c2 = (trans ? m : k) - split;
			const int64_t lda = c1 + 3, lda2 = c2 + 1, ldb = n + 2, ldc = n + 5;
			float *a = uniform(r1 * lda, 41, -1, 1), *a2 = uniform(r1 * lda2, 42, -1, 1);
			float *b = uniform(k * ldb, 43, -1, 1), *c0 = uniform(m * ldc, 44, -1, 1);
			if (beta == 0.0f)
				for (int64_t i = 0; i < m * ldc; i++)
					c0[i] = NAN;
			const bw_gemm_a op = {.a = a, .lda = lda, .a2 = c2 ? a2 : NULL, .lda2 = lda2, .split = split, .trans = trans};
			double *ad = cat_dense(&op, m, k), *bd = malloc((size_t)(k * n) * sizeof *bd);
			double *ref = malloc((size_t)(m * n) * sizeof *ref);
			for (int64_t q = 0; q < k; q++)
				for (int64_t j = 0; j < n; j++)
					bd[q * n + j] = b[q * ldb + j];
			ref_matmul(ad, false, bd, false, m, n, k, ref);
			float *scratch = bw_aligned_alloc(64, bw_gemm_own_scratch(n, k));
			float *got[3];
			for (int t = 0; t < 3; t++) {
				got[t] = malloc((size_t)(m * ldc) * sizeof(float));
				memcpy(got[t], c0, (size_t)(m * ldc) * sizeof(float));
				cr_assert_eq(bw_gemm_own_op(t + 1, m, n, k, 0.5f, &op, b, ldb, beta, got[t], ldc, scratch), 0);
			}
			for (int64_t i = 0; i < m; i++)
				for (int64_t j = 0; j < n; j++) {
					const double want = 0.5 * ref[i * n + j] + (beta == 0.0f ? 0.0 : beta * c0[i * ldc + j]);
					cr_assert(close_to(got[0][i * ldc + j], want, 1e-5),
						  "%lldx%lldx%lld split %lld%s beta %g [%lld, %lld]: %g vs %g", (long long)m,
						  (long long)n, (long long)k, (long long)split, trans ? " transposed" : "", beta,
						  (long long)i, (long long)j, got[0][i * ldc + j], want);
				}
			for (int t = 1; t < 3; t++)
				cr_assert(memcmp(got[0], got[t], (size_t)(m * ldc) * sizeof(float)) == 0,
					  "%lldx%lldx%lld split %lld: 1 and %d threads differ", (long long)m, (long long)n,
					  (long long)k, (long long)split, t + 1);
			bw_aligned_free(scratch);
			for (int t = 0; t < 3; t++)
				free(got[t]);
			free(ad);
			free(bd);
			free(ref);
			free(a);
			free(a2);
			free(b);
			free(c0);
		}
}

/* bw_matmul_cat on every backend against ref_matmul of the concatenation, both ways, on a
 * shape the CPU's own GEMM takes and on one it leaves to OpenBLAS (two products); a shape
 * that does not add up is refused. */
BACKENDS(matmul_cat_matches_ref)
{
	bw_backend be = open_backend(*kind, 2);
	static const int64_t shapes[][4] = {{120, 96, 200, 230}, {7, 5, 3, 4}}; /* rows, n, k1 (or m1), k2 (or m2) */
	for (size_t sh = 0; sh < 2; sh++)
		for (int ta = 0; ta < 2; ta++) {
			const int64_t r = shapes[sh][0], n = shapes[sh][1], w1 = shapes[sh][2], w2 = shapes[sh][3];
			const int64_t m = ta ? w1 + w2 : r, k = ta ? r : w1 + w2;
			float *ah = uniform(r * w1, 51, -1, 1), *a2h = uniform(r * w2, 52, -1, 1), *bh = uniform(k * n, 53, -1, 1);
			float *ch = uniform(m * n, 54, -1, 1);
			bw_tensor a = dev_tensor(&be, ah, r, w1), a2 = dev_tensor(&be, a2h, r, w2), b = dev_tensor(&be, bh, k, n);
			bw_tensor c = dev_tensor(&be, ch, m, n);
			const bw_gemm_a op = {.a = ah, .lda = w1, .a2 = a2h, .lda2 = w2, .split = w1, .trans = ta};
			double *ad = cat_dense(&op, m, k), *bd = to_double(bh, k * n), *ref = malloc((size_t)(m * n) * sizeof *ref);
			ref_matmul(ad, false, bd, false, m, n, k, ref);
			cr_assert_eq(bw_matmul_cat(&be, &a, &a2, ta, &b, 0.5f, 2.0f, &c), 0, "%s", burrow_last_error());
			float *got = tensor_get(&be, &c);
			for (int64_t i = 0; i < m * n; i++)
				cr_assert(close_to(got[i], 0.5 * ref[i] + 2.0 * ch[i], red_tol(&be)), "%lld rows ta %d [%lld]: %g vs %g",
					  (long long)r, ta, (long long)i, got[i], 0.5 * ref[i] + 2.0 * ch[i]);
			bw_tensor bad = dev_tensor(&be, NULL, m + 1, n);
			cr_assert_eq(bw_matmul_cat(&be, &a, &a2, ta, &b, 1, 0, &bad), BURROW_E_INVAL);
			bw_tensor_free(&bad);
			free(got);
			free(ad);
			free(bd);
			free(ref);
			free(ah);
			free(a2h);
			free(bh);
			free(ch);
			bw_tensor_free(&a);
			bw_tensor_free(&a2);
			bw_tensor_free(&b);
			bw_tensor_free(&c);
		}
	bw_backend_release(&be);
}

/* A transposed copy of a (bw_tensor.tr): a^T b reads it where the backend asks for one (the
 * CPU with its own GEMM), and matches ref_matmul either way; the copy is what is read (a's
 * data zeroed after the copy does not show); a view of all of a keeps it, a part drops it,
 * and a product with a itself (not transposed) never reads it. */
BACKENDS(transposed_copy_is_read_for_a_transposed_product)
{
	const int64_t m = 500, k = 300, n = 128; /* a [m, k]; a^T b is [k, n] over m */
	float *ah = uniform(m * k, 41, -1, 1), *bh = uniform(m * n, 42, -1, 1), *wh = uniform(k * n, 43, -1, 1);
	double *ad = to_double(ah, m * k), *bd = to_double(bh, m * n), *wd = to_double(wh, k * n);
	double *ref = malloc((size_t)(k * n) * sizeof *ref), *ref2 = malloc((size_t)(m * n) * sizeof *ref2);
	ref_matmul(ad, true, bd, false, k, n, m, ref);
	ref_matmul(ad, false, wd, false, m, n, k, ref2);
	bw_backend be = open_backend(*kind, 2);
	bw_transposed tr;
	cr_assert_eq(bw_transposed_build(&tr, ah, m, k, 2), 0);
	for (int64_t i = 0; i < m; i += 37)
		for (int64_t j = 0; j < k; j += 11)
			cr_assert_eq(tr.t[j * m + i], ah[i * k + j]);
	bw_tensor a = dev_tensor(&be, ah, m, k), b = dev_tensor(&be, bh, m, n), c = dev_tensor(&be, NULL, k, n);
	bw_tensor w = dev_tensor(&be, wh, k, n), z = dev_tensor(&be, NULL, m, n);
	bw_transposed mine = tr;
	mine.dense = a.data;
	a.tr = &mine;
	cr_assert_eq(bw_tensor_rows(&a, 0, m).tr, &mine);
	cr_assert_null(bw_tensor_rows(&a, 1, m - 1).tr);
	cr_assert_eq(bw_matmul(&be, &a, false, &w, false, 1.0f, 0.0f, &z), 0, "%s", burrow_last_error());
	float *zh = tensor_get(&be, &z);
	for (int64_t i = 0; i < m * n; i++)
		cr_assert(close_to(zh[i], ref2[i], red_tol(&be)), "a w [%lld]: %g vs %g", (long long)i, zh[i], ref2[i]);
	if (be.gemm_wants_transposed) /* the product reads the copy, not the dense data */
		cr_assert_eq(bw_tensor_zero_rows(&a, 0, m), 0);
	cr_assert_eq(bw_matmul(&be, &a, true, &b, false, 1.0f, 0.0f, &c), 0, "%s", burrow_last_error());
	float *ch = tensor_get(&be, &c);
	for (int64_t i = 0; i < k * n; i++)
		cr_assert(close_to(ch[i], ref[i], red_tol(&be)), "a^T b [%lld]: %g vs %g", (long long)i, ch[i], ref[i]);
	free(zh);
	free(ch);
	bw_tensor_free(&a);
	bw_tensor_free(&b);
	bw_tensor_free(&c);
	bw_tensor_free(&w);
	bw_tensor_free(&z);
	bw_transposed_free(&tr);
	cr_assert_null(tr.t);
	bw_backend_release(&be);
	free(ah);
	free(bh);
	free(wh);
	free(ad);
	free(bd);
	free(wd);
	free(ref);
	free(ref2);
}

/* A sparse copy of a (bw_tensor.sp): bw_matmul multiplies through the backend's spmm where
 * it has one (the CPU), else through gemm, and either way matches ref_matmul of the dense
 * matrix, in both orientations of a, with alpha and beta; large enough that the CPU splits
 * the rows over its threads, whose result is then the one thread's, bit for bit. The copy
 * is what the CPU reads (the dense data changed after the copy do not show), a view of
 * all of a keeps it and a part of a drops it. */
BACKENDS(sparse_matmul_matches_ref_and_is_thread_independent)
{
	const int64_t m = 600, k = 500, n = 64;
	float *ah = uniform(m * k, 21, -1, 1), *bh[2] = {uniform(k * n, 22, -1, 1), uniform(m * n, 23, -1, 1)};
	float *ch[2] = {uniform(m * n, 24, -1, 1), uniform(k * n, 25, -1, 1)};
	bw_rng r;
	bw_rng_seed(&r, 26);
	for (int64_t i = 0; i < m * k; i++) /* 8% non-zero, row 3 and column 7 empty */
		if (bw_rng_uniform(&r) >= 0.08 || i / k == 3 || i % k == 7)
			ah[i] = 0.0f;
	double *ad = to_double(ah, m * k);
	bw_backend one = open_backend(*kind, 1), two = open_backend(*kind, 2);
	bw_sparse sp;
	cr_assert_eq(bw_sparse_build(&sp, ah, m, k, 2), 0, "%s", burrow_last_error());
	cr_assert_eq(sp.nnz, bw_count_nonzero(ah, m * k, 1));
	cr_assert_eq(sp.indptr[4] - sp.indptr[3], 0);
	cr_assert_eq(sp.t_indptr[8] - sp.t_indptr[7], 0);
	for (int ta = 0; ta < 2; ta++) {
		const int64_t rows = ta ? k : m, inner = ta ? m : k;
		double *bd = to_double(bh[ta], inner * n), *ref = malloc((size_t)(rows * n) * sizeof *ref);
		ref_matmul(ad, ta, bd, false, rows, n, inner, ref);
		float *got[2];
		for (int t = 0; t < 2; t++) {
			bw_backend *be = t ? &two : &one;
			bw_tensor a = dev_tensor(be, ah, m, k), b = dev_tensor(be, bh[ta], inner, n);
			bw_tensor c = dev_tensor(be, ch[ta], rows, n);
			bw_sparse mine = sp;
			mine.dense = a.data; /* a copy of a's data (on the CPU: the same host memory) */
			a.sp = &mine;
			cr_assert_eq(bw_tensor_rows(&a, 0, m).sp, &mine);
			cr_assert_null(bw_tensor_rows(&a, 1, m - 1).sp);
			if (be->ops->spmm) /* the product reads the sparse copy, not the dense data */
				cr_assert_eq(bw_tensor_zero_rows(&a, 0, m), 0);
			cr_assert_eq(bw_matmul(be, &a, ta, &b, false, 0.5f, 2.0f, &c), 0, "%s", burrow_last_error());
			got[t] = tensor_get(be, &c);
			bw_tensor_free(&a);
			bw_tensor_free(&b);
			bw_tensor_free(&c);
		}
		for (int64_t i = 0; i < rows * n; i++)
			cr_assert(close_to(got[1][i], 0.5 * ref[i] + 2.0 * ch[ta][i], red_tol(&two)), "ta %d [%lld]: %g vs %g",
				  ta, (long long)i, got[1][i], 0.5 * ref[i] + 2.0 * ch[ta][i]);
		if (one.ops->spmm)
			cr_assert(memcmp(got[0], got[1], (size_t)(rows * n) * sizeof(float)) == 0,
				  "ta %d: 1 and 2 threads differ", ta);
		free(got[0]);
		free(got[1]);
		free(bd);
		free(ref);
	}
	bw_sparse_free(&sp);
	bw_backend_release(&one);
	bw_backend_release(&two);
	free(ad);
	free(ah);
	for (int i = 0; i < 2; i++) {
		free(bh[i]);
		free(ch[i]);
	}
}

/* A mini-batch's sparse copy: bw_sparse_update over arrays that held a larger matrix gives
 * the arrays a fresh bw_sparse_build gives, bw_sparse_gather of the same rows from every
 * row's non-zeros (bw_sparse_append) gives them too, and a view of a's first rows (a batch's
 * destinations) multiplies through that copy of all of a's rows, in both orientations, as
 * ref_matmul of the view's dense rows, with 1 and 2 threads bit for bit. */
BACKENDS(sparse_copy_is_rebuilt_in_place_and_serves_a_view_of_first_rows)
{
	const int64_t m = 700, k = 300, n = 48, m2 = 413;
	float *big = uniform(900 * 400, 31, -1, 1), *ah = uniform(m * k, 32, -1, 1);
	float *bh[2] = {uniform(k * n, 33, -1, 1), uniform(m2 * n, 34, -1, 1)};
	bw_rng r;
	bw_rng_seed(&r, 35);
	for (int64_t i = 0; i < m * k; i++) /* 4% non-zero */
		if (bw_rng_uniform(&r) >= 0.04)
			ah[i] = 0.0f;
	bw_sparse fresh, sp = {0};
	cr_assert_eq(bw_sparse_build(&fresh, ah, m, k, 1), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_sparse_update(&sp, big, 900, 400, 2), 0, "%s", burrow_last_error());
	int32_t *held = sp.indices;
	cr_assert_eq(bw_sparse_update(&sp, ah, m, k, 2), 0, "%s", burrow_last_error());
	cr_assert_eq(sp.indices, held, "a smaller matrix reallocated the arrays");
	cr_assert(sp.rows == m && sp.cols == k && sp.nnz == fresh.nnz && sp.nnz == bw_count_nonzero(ah, m * k, 1));
	cr_assert(!memcmp(sp.indptr, fresh.indptr, (size_t)(m + 1) * sizeof *sp.indptr) &&
		  !memcmp(sp.t_indptr, fresh.t_indptr, (size_t)(k + 1) * sizeof *sp.t_indptr) &&
		  !memcmp(sp.indices, fresh.indices, (size_t)sp.nnz * sizeof *sp.indices) &&
		  !memcmp(sp.values, fresh.values, (size_t)sp.nnz * sizeof *sp.values) &&
		  !memcmp(sp.t_indices, fresh.t_indices, (size_t)sp.nnz * sizeof *sp.t_indices) &&
		  !memcmp(sp.t_values, fresh.t_values, (size_t)sp.nnz * sizeof *sp.t_values),
		  "the rebuilt copy differs from a fresh one");
	/* the same copy gathered from the rows' non-zeros appended in uneven runs, in a
	 * shuffled order (ids: a permutation of the rows, gathered as dense rows beside) */
	bw_sparse all = {0}, got = {0};
	for (int64_t r0 = 0, run = 1; r0 < m; r0 += run, run = run * 3 + 1)
		cr_assert_eq(bw_sparse_append(&all, ah + r0 * k, BW_MIN(run, m - r0), k, 2), 0, "%s", burrow_last_error());
	cr_assert(all.rows == m && all.nnz == fresh.nnz && !all.t_indptr);
	int64_t *ids = malloc((size_t)m * sizeof *ids);
	float *rows_of = malloc((size_t)(m * k) * sizeof *rows_of);
	for (int64_t i = 0; i < m; i++)
		ids[i] = (i * 337) % m; /* 337 and 700 are coprime */
	for (int64_t i = 0; i < m; i++)
		memcpy(rows_of + i * k, ah + ids[i] * k, (size_t)k * sizeof *ah);
	cr_assert_eq(bw_sparse_update(&fresh, rows_of, m, k, 1), 0);
	cr_assert_eq(bw_sparse_gather(&got, &all, ids, m, rows_of, 2), 0, "%s", burrow_last_error());
	cr_assert(got.dense == rows_of && got.rows == m && got.nnz == fresh.nnz &&
			  !memcmp(got.indptr, fresh.indptr, (size_t)(m + 1) * sizeof *got.indptr) &&
			  !memcmp(got.t_indptr, fresh.t_indptr, (size_t)(k + 1) * sizeof *got.t_indptr) &&
			  !memcmp(got.indices, fresh.indices, (size_t)got.nnz * sizeof *got.indices) &&
			  !memcmp(got.values, fresh.values, (size_t)got.nnz * sizeof *got.values) &&
			  !memcmp(got.t_indices, fresh.t_indices, (size_t)got.nnz * sizeof *got.t_indices) &&
			  !memcmp(got.t_values, fresh.t_values, (size_t)got.nnz * sizeof *got.t_values),
		  "the gathered copy differs from the scanned one");
	bw_sparse_free(&all);
	bw_sparse_free(&got);
	free(ids);
	free(rows_of);
	double *ad = to_double(ah, m2 * k);
	bw_backend one = open_backend(*kind, 1), two = open_backend(*kind, 2);
	for (int ta = 0; ta < 2; ta++) {
		const int64_t rows = ta ? k : m2, inner = ta ? m2 : k;
		double *bd = to_double(bh[ta], inner * n), *ref = malloc((size_t)(rows * n) * sizeof *ref);
		ref_matmul(ad, ta, bd, false, rows, n, inner, ref);
		float *got[2];
		for (int t = 0; t < 2; t++) {
			bw_backend *be = t ? &two : &one;
			bw_tensor a = dev_tensor(be, ah, m, k), b = dev_tensor(be, bh[ta], inner, n);
			bw_tensor c = dev_tensor(be, NULL, rows, n); /* overwritten: beta 0 */
			bw_sparse mine = sp;
			mine.dense = a.data;
			a.sp = &mine;
			const bw_tensor v = bw_tensor_rows(&a, 0, m2);
			cr_assert_eq(v.sp, &mine);
			if (be->ops->spmm) /* the product reads the sparse copy, not the dense data */
				cr_assert_eq(bw_tensor_zero_rows(&a, 0, m), 0);
			cr_assert_eq(bw_matmul(be, &v, ta, &b, false, 1.0f, 0.0f, &c), 0, "%s", burrow_last_error());
			got[t] = tensor_get(be, &c);
			bw_tensor_free(&a);
			bw_tensor_free(&b);
			bw_tensor_free(&c);
		}
		for (int64_t i = 0; i < rows * n; i++)
			cr_assert(close_to(got[1][i], ref[i], red_tol(&two)), "ta %d [%lld]: %g vs %g", ta, (long long)i,
				  got[1][i], ref[i]);
		if (one.ops->spmm)
			cr_assert(memcmp(got[0], got[1], (size_t)(rows * n) * sizeof(float)) == 0,
				  "ta %d: 1 and 2 threads differ", ta);
		free(got[0]);
		free(got[1]);
		free(bd);
		free(ref);
	}
	bw_sparse_free(&sp);
	bw_sparse_free(&fresh);
	bw_backend_release(&one);
	bw_backend_release(&two);
	free(ad);
	free(ah);
	free(big);
	free(bh[0]);
	free(bh[1]);
}

BACKENDS(aggregation_forward_and_backward_match_ref)
{
	const int64_t nd = 23, ns = 41, dim = 6;
	tblock t;
	make_block(&t, nd, ns, 7, 21);
	cr_assert_eq(bw_block_prepare(&t.b, true, true), 0);
	float *xh = uniform(ns * dim, 7, -2, 2), *gh = uniform(nd * dim, 8, -2, 2);
	for (int threads = 1; threads <= 2; threads++) {
		bw_backend be = open_backend(*kind, threads);
		const double tol = red_tol(&be);
		cr_assert_eq(bw_block_upload(&t.b, be.dev), 0, "%s", burrow_last_error());
		bw_tensor x = dev_tensor(&be, xh, ns, dim), g = dev_tensor(&be, gh, nd, dim);
		bw_tensor out = dev_tensor(&be, NULL, nd, dim), gx = dev_tensor(&be, NULL, ns, dim);
		for (int mode = BW_AGG_SUM; mode <= BW_AGG_GCN; mode++) {
			double *w = ref_agg_matrix(&t.b, mode);
			cr_assert_eq(bw_aggregate(&be, &t.b, mode, &x, 0, -1, &out), 0, "%s", burrow_last_error());
			float *o = tensor_get(&be, &out);
			for (int64_t i = 0; i < nd; i++)
				for (int64_t c = 0; c < dim; c++) {
					double ref = 0;
					for (int64_t j = 0; j < ns; j++)
						ref += w[i * ns + j] * xh[j * dim + c];
					cr_assert(close_to(o[i * dim + c], ref, tol), "mode %d fwd [%lld, %lld]: %g vs %g", mode,
						  (long long)i, (long long)c, o[i * dim + c], ref);
				}
			cr_assert_eq(bw_aggregate_backward(&be, &t.b, mode, &g, 0, -1, &gx), 0, "%s", burrow_last_error());
			float *b = tensor_get(&be, &gx);
			for (int64_t j = 0; j < ns; j++)
				for (int64_t c = 0; c < dim; c++) {
					double ref = 0;
					for (int64_t i = 0; i < nd; i++)
						ref += w[i * ns + j] * gh[i * dim + c];
					cr_assert(close_to(b[j * dim + c], ref, tol), "mode %d bwd [%lld, %lld]: %g vs %g", mode,
						  (long long)j, (long long)c, b[j * dim + c], ref);
				}
			/* a row range writes exactly those rows, a source range exactly those sources: the
			   CPU's bits are the whole range's; cuSPARSE promises the same bits run to run for
			   one matrix, not one order of additions for a sub-matrix, so on CUDA within the
			   reduction tolerance */
			float *fill = malloc((size_t)(ns * dim) * sizeof *fill);
			for (int64_t i = 0; i < ns * dim; i++)
				fill[i] = -99.0f;
			bw_tensor sub = dev_tensor(&be, fill, nd, dim), gsub = dev_tensor(&be, fill, ns, dim);
			cr_assert_eq(bw_aggregate(&be, &t.b, mode, &x, 3, 17, &sub), 0);
			cr_assert_eq(bw_aggregate_backward(&be, &t.b, mode, &g, 5, 30, &gsub), 0);
			float *s = tensor_get(&be, &sub), *gs = tensor_get(&be, &gsub);
			const bool bits = be.kind == BW_BACKEND_CPU;
			for (int64_t i = 0; i < nd * dim; i++)
				cr_assert(i / dim >= 3 && i / dim < 17 ? same_or_close(s[i], o[i], bits, tol) : s[i] == -99.0f,
					  "mode %d row %lld: %g vs %g", mode, (long long)(i / dim), s[i], o[i]);
			for (int64_t i = 0; i < ns * dim; i++)
				cr_assert(i / dim >= 5 && i / dim < 30 ? same_or_close(gs[i], b[i], bits, tol) : gs[i] == -99.0f,
					  "mode %d source %lld: %g vs %g", mode, (long long)(i / dim), gs[i], b[i]);
			bw_tensor_free(&sub);
			bw_tensor_free(&gsub);
			free(fill);
			free(s);
			free(gs);
			free(o);
			free(b);
			free(w);
		}
		/* refusals: wrong shapes, a range out of bounds, a block not uploaded, no transpose */
		cr_assert_eq(bw_aggregate(&be, &t.b, BW_AGG_MEAN, &g, 0, -1, &out), BURROW_E_INVAL);
		cr_assert_eq(bw_aggregate(&be, &t.b, BW_AGG_MEAN, &x, 0, nd + 1, &out), BURROW_E_RANGE);
		cr_assert_eq(bw_aggregate_part(&be, &t.b, BW_PART_LATE, BW_AGG_SUM, &x, 0, -1, true, &out), BURROW_E_INVAL);
		tblock u;
		make_block(&u, nd, ns, 3, 5);
		cr_assert_eq(bw_aggregate(&be, &u.b, BW_AGG_SUM, &x, 0, -1, &out), BURROW_E_INVAL);
		cr_assert_eq(bw_block_upload(&u.b, be.dev), 0);
		cr_assert_eq(bw_aggregate_backward(&be, &u.b, BW_AGG_SUM, &g, 0, -1, &gx), BURROW_E_INVAL);
		free_block(&u);
		bw_tensor_free(&x);
		bw_tensor_free(&out);
		bw_tensor_free(&g);
		bw_tensor_free(&gx);
		bw_block_release(&t.b);
		cr_assert_eq(bw_block_prepare(&t.b, true, true), 0);
		bw_backend_release(&be);
	}
	free(xh);
	free(gh);
	free_block(&t);
}

/* The early / late split: two CSR matrices whose edges partition every row's by source,
 * in the row's order; early (overwriting) then late (adding) equals the whole row. */
BACKENDS(split_aggregation_adds_up_to_the_whole_rows)
{
	bw_backend be = open_backend(*kind, 2);
	const int64_t nd = 30, ns = 52, dim = 5, split = 37;
	tblock t;
	make_block(&t, nd, ns, 9, 77);
	cr_assert_eq(bw_block_split(&t.b, nd - 1), BURROW_E_INVAL);
	cr_assert_eq(bw_block_split(&t.b, split), 0, "%s", burrow_last_error());
	const bw_block *b = &t.b;
	for (int64_t i = 0; i < nd; i++) {
		int64_t e0 = b->part_indptr[0][i], l0 = b->part_indptr[1][i];
		cr_assert_eq((b->part_indptr[0][i + 1] - e0) + (b->part_indptr[1][i + 1] - l0), b->indptr[i + 1] - b->indptr[i]);
		for (int64_t e = b->indptr[i]; e < b->indptr[i + 1]; e++) {
			const int late = b->indices[e] >= split;
			const int64_t at = late ? l0++ : e0++;
			cr_assert_eq(b->part_indices[late][at], b->indices[e], "row %lld edge %lld", (long long)i, (long long)e);
		}
	}
	cr_assert_eq(bw_block_prepare(&t.b, true, true), 0);
	cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
	float *xh = uniform(ns * dim, 9, -1, 1);
	bw_tensor x = dev_tensor(&be, xh, ns, dim), whole = dev_tensor(&be, NULL, nd, dim);
	bw_tensor parts = dev_tensor(&be, NULL, nd, dim);
	for (int mode = BW_AGG_SUM; mode <= BW_AGG_GCN; mode++) {
		cr_assert_eq(bw_aggregate(&be, &t.b, mode, &x, 0, -1, &whole), 0);
		cr_assert_eq(bw_aggregate_part(&be, &t.b, BW_PART_EARLY, mode, &x, 0, 10, false, &parts), 0);
		cr_assert_eq(bw_aggregate_part(&be, &t.b, BW_PART_EARLY, mode, &x, 10, -1, false, &parts), 0);
		cr_assert_eq(bw_aggregate_part(&be, &t.b, BW_PART_LATE, mode, &x, 0, -1, true, &parts), 0);
		float *w = tensor_get(&be, &whole), *p = tensor_get(&be, &parts);
		for (int64_t i = 0; i < nd * dim; i++)
			cr_assert(close_to(p[i], w[i], red_tol(&be)), "mode %d [%lld]: %g vs %g", mode, (long long)i, p[i], w[i]);
		free(w);
		free(p);
	}
	free(xh);
	bw_tensor_free(&x);
	bw_tensor_free(&whole);
	bw_tensor_free(&parts);
	free_block(&t);
	bw_backend_release(&be);
}

/* Column sums over many rows (the CPU sums blocks of 256 rows, then the blocks in order; more
 * blocks than fit its stack go to the heap): against a double reference, for a narrow, a
 * wide and a tall-and-long matrix, the same bits at one and two threads. */
BACKENDS(col_sum_matches_ref_and_is_thread_independent)
{
	static const int64_t shapes[][2] = {{1000, 7}, {300, 300}, {70001, 64}, {1, 5}};
	bw_backend one = open_backend(*kind, 1), two = open_backend(*kind, 2);
	for (size_t sh = 0; sh < 4; sh++) {
		const int64_t r = shapes[sh][0], c = shapes[sh][1];
		float *xh = uniform(r * c, 51 + sh, -1, 1), *got[2];
		for (int t = 0; t < 2; t++) {
			bw_backend *be = t ? &two : &one;
			bw_tensor x = dev_tensor(be, xh, r, c);
			float *cs = dev_put(be, NULL, (size_t)c * sizeof(float));
			cr_assert_eq(bw_col_sum(be, &x, cs, c), 0, "%s", burrow_last_error());
			got[t] = dev_get(be, cs, (size_t)c * sizeof(float));
			bw_device_free(be->dev, cs);
			bw_tensor_free(&x);
		}
		for (int64_t k = 0; k < c; k++) {
			double ref = 0;
			for (int64_t i = 0; i < r; i++)
				ref += xh[i * c + k];
			cr_assert(close_to(got[1][k], ref, red_tol(&two)), "%lldx%lld column %lld: %g vs %g", (long long)r,
				  (long long)c, (long long)k, got[1][k], ref);
		}
		cr_assert(memcmp(got[0], got[1], (size_t)c * sizeof(float)) == 0, "%lldx%lld: 1 and 2 threads differ",
			  (long long)r, (long long)c);
		free(got[0]);
		free(got[1]);
		free(xh);
	}
	bw_backend_release(&one);
	bw_backend_release(&two);
}

BACKENDS(elementwise_kernels_match_ref)
{
	bw_backend be = open_backend(*kind, 2);
	const int64_t r = 37, c = 19, n = r * c;
	float *xh = uniform(n, 31, -1, 1), *gh = uniform(n, 32, -1, 1), *biash = uniform(c, 33, -1, 1);
	bw_tensor x = dev_tensor(&be, xh, r, c), y = dev_tensor(&be, xh, r, c), g = dev_tensor(&be, gh, r, c);
	float *bias = dev_put(&be, biash, (size_t)c * sizeof(float)), *cs = dev_put(&be, NULL, (size_t)c * sizeof(float));
	cr_assert_eq(bw_bias_add(&be, &y, bias, c), 0);
	float *yh = tensor_get(&be, &y);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(yh[i], xh[i] + biash[i % c]);
	free(yh);
	cr_assert_eq(bw_col_sum(&be, &x, cs, c), 0);
	float *csh = dev_get(&be, cs, (size_t)c * sizeof(float));
	for (int64_t k = 0; k < c; k++) {
		double ref = 0;
		for (int64_t i = 0; i < r; i++)
			ref += xh[i * c + k];
		cr_assert(close_to(csh[k], ref, red_tol(&be)));
	}
	free(csh);
	cr_assert_eq(bw_bias_add(&be, &y, bias, c - 1), BURROW_E_INVAL);
	bw_tensor_free(&y);
	y = dev_tensor(&be, xh, r, c);
	cr_assert_eq(bw_relu(&be, &y), 0);
	yh = tensor_get(&be, &y);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(yh[i], xh[i] > 0 ? xh[i] : 0.0f);
	bw_tensor g2 = dev_tensor(&be, gh, r, c);
	cr_assert_eq(bw_relu_backward(&be, &g2, &y), 0);
	float *g2h = tensor_get(&be, &g2);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(g2h[i], xh[i] > 0 ? gh[i] : 0.0f);
	free(g2h);
	bw_tensor_free(&g2);
	g2 = dev_tensor(&be, yh, r, c);
	cr_assert_eq(bw_axpy(&be, -0.5f, &g, &g2), 0);
	g2h = tensor_get(&be, &g2);
	for (int64_t i = 0; i < n; i++)
		cr_assert(close_to(g2h[i], (double)yh[i] - 0.5 * gh[i], elem_tol(&be)));
	free(g2h);
	cr_assert_eq(bw_scale(&be, 0.25f, &g2), 0);
	g2h = tensor_get(&be, &g2);
	for (int64_t i = 0; i < n; i++)
		cr_assert(close_to(g2h[i], 0.25 * ((double)yh[i] - 0.5 * gh[i]), elem_tol(&be)));
	free(g2h);
	int32_t *am = dev_put(&be, NULL, (size_t)r * sizeof(int32_t));
	cr_assert_eq(bw_argmax(&be, &x, am), 0);
	int32_t *amh = dev_get(&be, am, (size_t)r * sizeof(int32_t));
	for (int64_t i = 0; i < r; i++)
		for (int64_t k = 0; k < c; k++)
			cr_assert(xh[i * c + k] < xh[i * c + amh[i]] || (xh[i * c + k] == xh[i * c + amh[i]] && k >= amh[i]));
	free(amh);
	bw_device_free(be.dev, am);
	bw_device_free(be.dev, bias);
	bw_device_free(be.dev, cs);
	free(xh);
	free(gh);
	free(biash);
	free(yh);
	bw_tensor_free(&x);
	bw_tensor_free(&y);
	bw_tensor_free(&g);
	bw_tensor_free(&g2);
	bw_backend_release(&be);
}

/* The mask of element (r, c): the 64-bit draw c / 2 of the stream bw_key(key, r), its low
 * half for even c and its high half for odd c, kept when >= p * 2^32. */
static uint8_t ref_keep(uint64_t key, int64_t r, int64_t c, float p)
{
	bw_rng rng;
	bw_rng_seed(&rng, bw_key(key, (uint64_t)r));
	uint64_t u = 0;
	for (int64_t k = 0; k <= c / 2; k++)
		u = bw_rng_next(&rng);
	const uint64_t half = c % 2 ? u >> 32 : u & 0xffffffffu;
	return half >= (uint64_t)llround((double)p * 4294967296.0);
}

/* The halo exchange's packing and unpacking: gather rows by index, and add rows into
 * distinct indexed rows, against the obvious loops; exact (copies and one add each). */
BACKENDS(gather_and_scatter_add_rows_match_ref)
{
	bw_backend be = open_backend(*kind, 3);
	const int64_t rows = 97, dim = 13, n = 41;
	float *xh = uniform(rows * dim, 71, -1, 1), *inh = uniform(n * dim, 72, -1, 1);
	int64_t idx[41];
	for (int64_t k = 0; k < n; k++) /* distinct, out of order, some rows skipped */
		idx[k] = (k * 37 + 5) % rows;
	float *x = dev_put(&be, xh, (size_t)(rows * dim) * sizeof(float));
	float *in = dev_put(&be, inh, (size_t)(n * dim) * sizeof(float));
	float *out = dev_put(&be, NULL, (size_t)(n * dim) * sizeof(float));
	int64_t *id = dev_put(&be, idx, sizeof idx);
	cr_assert_eq(bw_gather_rows(&be, x, dim, id, n, out), 0, "%s", burrow_last_error());
	float *got = dev_get(&be, out, (size_t)(n * dim) * sizeof(float));
	for (int64_t k = 0; k < n; k++)
		for (int64_t c = 0; c < dim; c++)
			cr_assert_eq(got[k * dim + c], xh[idx[k] * dim + c], "row %lld col %lld", (long long)k, (long long)c);
	free(got);
	cr_assert_eq(bw_scatter_add_rows(&be, in, dim, id, n, x), 0, "%s", burrow_last_error());
	got = dev_get(&be, x, (size_t)(rows * dim) * sizeof(float));
	float *ref = malloc((size_t)(rows * dim) * sizeof *ref);
	memcpy(ref, xh, (size_t)(rows * dim) * sizeof *ref);
	for (int64_t k = 0; k < n; k++)
		for (int64_t c = 0; c < dim; c++)
			ref[idx[k] * dim + c] += inh[k * dim + c];
	for (int64_t i = 0; i < rows * dim; i++)
		cr_assert_eq(got[i], ref[i], "element %lld", (long long)i);
	cr_assert_eq(bw_gather_rows(&be, x, 0, id, n, out), BURROW_E_INVAL);
	cr_assert_eq(bw_scatter_add_rows(&be, in, dim, id, 0, x), 0); /* nothing to do */
	free(got);
	free(ref);
	free(xh);
	free(inh);
	bw_device_free(be.dev, x);
	bw_device_free(be.dev, in);
	bw_device_free(be.dev, out);
	bw_device_free(be.dev, id);
	bw_backend_release(&be);
}

BACKENDS(dropout_is_keyed_thread_independent_and_unbiased)
{
	const int64_t r = 300, c = 51, n = r * c;
	const float p = 0.3f;
	float *xh = malloc((size_t)n * sizeof *xh);
	for (int64_t i = 0; i < n; i++)
		xh[i] = 1.0f + (float)(i % 7);
	bw_backend one = open_backend(*kind, 1), two = open_backend(*kind, 2);
	bw_tensor a = dev_tensor(&one, xh, r, c), b = dev_tensor(&two, xh, r, c);
	uint8_t *ma = dev_put(&one, NULL, (size_t)n), *mb = dev_put(&two, NULL, (size_t)n);
	uint8_t *mc = dev_put(&one, NULL, (size_t)n);
	const uint64_t key = bw_dropout_key(5, 2, 3, 1);
	cr_assert_eq(bw_dropout(&one, &a, ma, p, key), 0);
	cr_assert_eq(bw_dropout(&two, &b, mb, p, key), 0);
	uint8_t *mah = dev_get(&one, ma, (size_t)n), *mbh = dev_get(&two, mb, (size_t)n);
	float *ah = tensor_get(&one, &a), *bh = tensor_get(&two, &b);
	cr_assert(memcmp(mah, mbh, (size_t)n) == 0, "dropout mask depends on the thread count");
	cr_assert(memcmp(ah, bh, (size_t)n * sizeof(float)) == 0);
	int64_t kept = 0;
	for (int64_t i = 0; i < n; i++) {
		/* the same bits as the keyed reference, on every backend */
		cr_assert_eq(mah[i], ref_keep(key, i / c, i % c, p), "mask (%lld, %lld)", (long long)(i / c), (long long)(i % c));
		kept += mah[i];
		const float want = mah[i] ? (1.0f + (float)(i % 7)) * (1.0f / (1.0f - p)) : 0.0f;
		cr_assert_eq(ah[i], want);
	}
	/* kept ~ Binomial(n, 1 - p): within 5 standard deviations */
	const double mean = (double)n * (1 - p), sd = sqrt((double)n * p * (1 - p));
	cr_assert(fabs((double)kept - mean) < 5 * sd, "kept %lld of %lld", (long long)kept, (long long)n);
	/* another (epoch, batch, layer) gives another mask */
	bw_tensor_free(&b);
	b = dev_tensor(&one, xh, r, c);
	cr_assert_eq(bw_dropout(&one, &b, mc, p, bw_dropout_key(5, 2, 4, 1)), 0);
	uint8_t *mch = dev_get(&one, mc, (size_t)n);
	cr_assert(memcmp(mah, mch, (size_t)n) != 0);
	/* backward: the same mask and scale */
	for (int64_t i = 0; i < n; i++)
		xh[i] = 2.0f;
	bw_tensor_free(&b);
	b = dev_tensor(&one, xh, r, c);
	cr_assert_eq(bw_dropout_backward(&one, &b, ma, p), 0);
	free(bh);
	bh = tensor_get(&one, &b);
	for (int64_t i = 0; i < n; i++)
		cr_assert_eq(bh[i], mah[i] ? 2.0f / (1.0f - p) : 0.0f);
	cr_assert_eq(bw_dropout(&one, &a, ma, 1.0f, key), BURROW_E_INVAL);
	free(mah);
	free(mbh);
	free(mch);
	free(ah);
	free(bh);
	free(xh);
	bw_device_free(one.dev, ma);
	bw_device_free(two.dev, mb);
	bw_device_free(one.dev, mc);
	bw_tensor_free(&a);
	bw_tensor_free(&b);
	bw_backend_release(&one);
	bw_backend_release(&two);
}

BACKENDS(log_softmax_nll_matches_ref)
{
	bw_backend be = open_backend(*kind, 2);
	const int64_t r = 29, c = 5;
	float *zh = uniform(r * c, 41, -4, 4);
	bw_tensor z = dev_tensor(&be, zh, r, c), g = dev_tensor(&be, NULL, r, c);
	int32_t y[29];
	for (int64_t i = 0; i < r; i++)
		y[i] = i % 6 == 5 ? -1 : (int32_t)(i * 3 % c);
	int64_t sel[] = {1, 4, 5, 9, 11, 17, 20, 28};
	const int64_t ns = 8;
	int32_t *yd = dev_put(&be, y, sizeof y);
	int64_t *seld = dev_put(&be, sel, sizeof sel);
	bw_loss *ld = dev_put(&be, NULL, sizeof(bw_loss)), ls;
	cr_assert_eq(bw_nll_loss(&be, &z, yd, seld, ns, &g, ld), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_loss_read(&be, ld, &ls), 0, "%s", burrow_last_error());
	double ref = 0;
	int64_t rc = 0, rok = 0;
	for (int64_t k = 0; k < ns; k++)
		rc += y[sel[k]] >= 0;
	double *rg = calloc((size_t)(r * c), sizeof *rg);
	for (int64_t k = 0; k < ns; k++) {
		const int64_t i = sel[k];
		if (y[i] < 0)
			continue;
		double se = 0, mx = -INFINITY;
		int am = 0;
		for (int64_t q = 0; q < c; q++) {
			se += exp((double)zh[i * c + q]);
			if (zh[i * c + q] > mx) {
				mx = zh[i * c + q];
				am = (int)q;
			}
		}
		ref += -(zh[i * c + y[i]] - log(se)) / (double)rc;
		rok += am == y[i];
		for (int64_t q = 0; q < c; q++)
			rg[i * c + q] = (exp((double)zh[i * c + q]) / se - (q == y[i])) / (double)rc;
	}
	cr_assert_eq(ls.counted, rc);
	cr_assert_eq(ls.correct, rok);
	cr_assert_eq(ls.bad, 0);
	cr_assert(close_to(ls.loss, ref, red_tol(&be)), "%g vs %g", ls.loss, ref);
	float *gg = tensor_get(&be, &g);
	for (int64_t i = 0; i < r * c; i++)
		cr_assert(close_to(gg[i], rg[i], red_tol(&be)), "grad [%lld]: %g vs %g", (long long)i, gg[i], rg[i]);
	/* a label >= classes, or a selected row out of range, is reported when read */
	y[4] = (int32_t)c;
	cr_assert_eq(bw_device_upload(be.dev, yd, y, sizeof y), 0);
	cr_assert_eq(bw_nll_loss(&be, &z, yd, seld, ns, &g, ld), 0);
	cr_assert_eq(bw_loss_read(&be, ld, &ls), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "label 5 of output row 4"), "%s", burrow_last_error());
	y[4] = 0;
	sel[3] = r;
	cr_assert_eq(bw_device_upload(be.dev, yd, y, sizeof y), 0);
	cr_assert_eq(bw_device_upload(be.dev, seld, sel, sizeof sel), 0);
	cr_assert_eq(bw_nll_loss(&be, &z, yd, seld, ns, &g, ld), 0);
	cr_assert_eq(bw_loss_read(&be, ld, &ls), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "selected row 29"), "%s", burrow_last_error());
	free(gg);
	free(rg);
	free(zh);
	bw_device_free(be.dev, yd);
	bw_device_free(be.dev, seld);
	bw_device_free(be.dev, ld);
	bw_tensor_free(&z);
	bw_tensor_free(&g);
	bw_backend_release(&be);
}

BACKENDS(optimizers_follow_their_formulas)
{
	bw_backend be = open_backend(*kind, 2);
	const int64_t n = 50;
	for (int okind = BURROW_OPTIM_ADAM; okind <= BURROW_OPTIM_SGD; okind++) {
		bw_optim *o;
		const double lr = 0.01, wd = 0.1, mom = okind == BURROW_OPTIM_SGD ? 0.9 : 0;
		cr_assert_eq(bw_optim_open(&o, be.dev, okind, n, lr, wd, mom), 0);
		float ph[50], gh[50];
		double rp[50], rm[50] = {0}, rv[50] = {0};
		fill_uniform(ph, n, 51, -1, 1);
		for (int64_t i = 0; i < n; i++)
			rp[i] = ph[i];
		float *p = dev_put(&be, ph, sizeof ph), *g = dev_put(&be, NULL, sizeof gh);
		for (int step = 1; step <= 5; step++) {
			fill_uniform(gh, n, 60 + (uint64_t)step, -1, 1);
			cr_assert_eq(bw_device_upload(be.dev, g, gh, sizeof gh), 0);
			cr_assert_eq(bw_optim_step(&be, o, p, g), 0);
			for (int64_t i = 0; i < n; i++) {
				if (okind == BURROW_OPTIM_SGD) {
					rm[i] = mom * rm[i] + gh[i] + wd * rp[i];
					rp[i] -= lr * rm[i];
					continue;
				}
				const double gi = okind == BURROW_OPTIM_ADAM ? gh[i] + wd * rp[i] : gh[i];
				if (okind == BURROW_OPTIM_ADAMW)
					rp[i] *= 1 - lr * wd;
				rm[i] = 0.9 * rm[i] + 0.1 * gi;
				rv[i] = 0.999 * rv[i] + 0.001 * gi * gi;
				const double mh = rm[i] / (1 - pow(0.9, step)), vh = rv[i] / (1 - pow(0.999, step));
				rp[i] -= lr * mh / (sqrt(vh) + 1e-8);
			}
		}
		float *got = dev_get(&be, p, sizeof ph);
		for (int64_t i = 0; i < n; i++)
			cr_assert(close_to(got[i], rp[i], elem_tol(&be)), "optimizer %d [%lld]: %g vs %g", okind, (long long)i,
				  got[i], rp[i]);
		free(got);
		bw_device_free(be.dev, p);
		bw_device_free(be.dev, g);
		bw_optim_close(o);
	}
	bw_backend_release(&be);
}

/* Device names: the three forms, and what a build or machine without the device says. */
Test(ops, device_names)
{
	cr_assert_eq(burrow_device_check(NULL), 0);
	cr_assert_eq(burrow_device_check("cpu"), 0);
	const char *bad[] = {"gpu", "cuda:", "cuda:x", "cuda:1x", "cuda:-1", "CPU", "cuda0"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		cr_assert_eq(burrow_device_check(bad[i]), BURROW_E_INVAL, "%s", bad[i]);
	const int n = burrow_cuda_device_count();
	if (n == BURROW_E_UNSUPPORTED) {
		cr_assert_eq(burrow_device_check("cuda"), BURROW_E_UNSUPPORTED);
		cr_assert(strstr(burrow_last_error(), "built without CUDA"), "%s", burrow_last_error());
	} else if (n == 0) {
		cr_assert_eq(burrow_device_check("cuda:0"), BURROW_E_UNSUPPORTED);
		cr_assert(strstr(burrow_last_error(), "no CUDA GPU"), "%s", burrow_last_error());
	} else {
		cr_assert_eq(burrow_device_check("cuda"), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_device_check("cuda:1000"), BURROW_E_UNSUPPORTED);
	}
	int kind, index;
	cr_assert_eq(bw_device_parse("cuda:3", &kind, &index), 0);
	cr_assert(kind == BW_BACKEND_CUDA && index == 3);
	cr_assert_eq(bw_device_parse("cuda", &kind, &index), 0);
	cr_assert(kind == BW_BACKEND_CUDA && index == 0);
}

/* ------------------------------------------------------------ the max aggregator and GAT's kernels */

/* A slot the backend leaves NULL is a counted skip (the CUDA backend fills them later). */
#define NEED_SLOT(be, slot)                                                                           \
	do {                                                                                          \
		if (!(be)->ops->slot)                                                                 \
			cr_skip_test("backend %s has no %s kernel yet", (be)->ops->name, #slot);      \
	} while (0)

/* The dispatcher of a NULL slot answers BURROW_E_UNSUPPORTED naming the op. */
Test(ops, a_null_slot_is_unsupported)
{
	bw_backend be = open_backend(BW_BACKEND_CPU, 1);
	bw_ops ops = *be.ops;
	ops.seg_max_fwd = NULL;
	be.ops = &ops;
	tblock t;
	make_block(&t, 3, 5, 2, 1);
	cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
	bw_tensor x = dev_tensor(&be, NULL, 5, 2), out = dev_tensor(&be, NULL, 3, 2);
	int32_t arg[6];
	cr_assert_eq(bw_seg_max(&be, &t.b, &x, &out, arg), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "seg_max_fwd"), "%s", burrow_last_error());
	bw_tensor_free(&x);
	bw_tensor_free(&out);
	free_block(&t);
}

/* ------------------------------------------------------------ what a backend can run */

#define FAM(op) (1u << (op))
/* Every optional slot of bw_ops with the families (bw_op) it belongs to. */
static const struct {
	size_t off;
	unsigned fams;
	const char *name;
} optional_slots[] = {
#define OPT(slot, fams) {offsetof(bw_ops, slot), fams, #slot}
	OPT(spmm, FAM(BW_OP_SPMM)),
	OPT(seg_max_fwd, FAM(BW_OP_MAX_AGG)),
	OPT(seg_max_bwd, FAM(BW_OP_MAX_AGG)),
	OPT(head_dot, FAM(BW_OP_ATTENTION)),
	OPT(head_dot_bwd, FAM(BW_OP_ATTENTION)),
	OPT(edge_softmax_fwd, FAM(BW_OP_ATTENTION)),
	OPT(edge_softmax_bwd, FAM(BW_OP_ATTENTION)),
	OPT(att_agg_fwd, FAM(BW_OP_ATTENTION)),
	OPT(att_agg_bwd, FAM(BW_OP_ATTENTION)),
	OPT(row_norm_fwd, FAM(BW_OP_LAYER_NORM)),
	OPT(row_norm_bwd, FAM(BW_OP_LAYER_NORM)),
	OPT(col_norm_fwd, FAM(BW_OP_BATCH_NORM)),
	OPT(col_norm_bwd, FAM(BW_OP_BATCH_NORM)),
	OPT(col_norm_apply, FAM(BW_OP_BATCH_NORM)),
	OPT(col_scale, FAM(BW_OP_LAYER_NORM) | FAM(BW_OP_BATCH_NORM)),
	OPT(col_dot, FAM(BW_OP_LAYER_NORM) | FAM(BW_OP_BATCH_NORM)),
	OPT(agg_w_fwd, FAM(BW_OP_EDGE_WEIGHT)),
	OPT(agg_w_bwd, FAM(BW_OP_EDGE_WEIGHT)),
#undef OPT
};

/* The CPU's table without the slots of the families in fams, named name. */
static bw_ops without(unsigned fams, const char *name)
{
	bw_ops ops = *bw_cpu_backend()->ops;
	ops.name = name;
	for (size_t i = 0; i < sizeof optional_slots / sizeof *optional_slots; i++)
		if (optional_slots[i].fams & fams)
			memset((char *)&ops + optional_slots[i].off, 0, sizeof ops.gemm);
	return ops;
}

/* Do families a and b have a slot in common (the normalizations share col_scale, col_dot)? */
static bool shares_slots(int a, int b)
{
	for (size_t i = 0; i < sizeof optional_slots / sizeof *optional_slots; i++)
		if ((optional_slots[i].fams & FAM(a)) && (optional_slots[i].fams & FAM(b)))
			return true;
	return false;
}

/* The answer follows the table: a family is supported exactly when none of its slots is
 * NULL (one slot taken away at a time), and the CPU's table has every family. */
Test(ops, a_backend_supports_a_family_when_it_fills_every_slot)
{
	for (int op = 0; op < BW_OP_COUNT; op++) {
		cr_assert(bw_ops_supports(bw_cpu_backend()->ops, op), "cpu lacks %s", bw_op_name(op));
		cr_assert(bw_op_name(op));
	}
	cr_assert(!bw_ops_supports(bw_cpu_backend()->ops, BW_OP_COUNT));
	cr_assert_null(bw_op_name(BW_OP_COUNT));
	for (size_t i = 0; i < sizeof optional_slots / sizeof *optional_slots; i++) {
		bw_ops ops = *bw_cpu_backend()->ops;
		memset((char *)&ops + optional_slots[i].off, 0, sizeof ops.gemm);
		for (int op = 0; op < BW_OP_COUNT; op++)
			cr_assert_eq(bw_ops_supports(&ops, op), !(optional_slots[i].fams & FAM(op)), "without %s: %s",
				     optional_slots[i].name, bw_op_name(op));
	}
}

/* The CPU runs every model: kinds, aggregators, normalizations, one layer or several. */
Test(ops, the_cpu_runs_every_model)
{
	bw_backend be = open_backend(BW_BACKEND_CPU, 1);
	const int kinds_[] = {BURROW_MODEL_SAGE, BURROW_MODEL_GCN, BURROW_MODEL_MLP, BURROW_MODEL_GAT};
	for (int k = 0; k < 4; k++)
		for (int aggr = BURROW_AGGR_MEAN; aggr <= BURROW_AGGR_SUM; aggr++)
			for (int norm = BURROW_NORM_NONE; norm <= BURROW_NORM_LAYER; norm++)
				for (int layers = 1; layers <= 3; layers++) {
					const bw_model_cfg c = {.kind = kinds_[k], .layers = layers, .aggr = aggr, .norm = norm};
					cr_assert_eq(bw_model_supported(&be, &c), 0, "%s", burrow_last_error());
				}
	bw_backend_release(&be);
}

/* A backend without a family refuses, in one line naming it and what is missing, exactly
 * the models that run through it: gat without attention, sage max without the max
 * aggregator, a normalization of hidden layers without its kernels. */
Test(ops, a_model_needing_a_missing_family_is_refused)
{
	bw_backend be = open_backend(BW_BACKEND_CPU, 1);
	const bw_ops *cpu = be.ops;
	static const struct {
		bw_model_cfg c;
		bw_op op;
		const char *says;
	} need[] = {
		{{.kind = BURROW_MODEL_GAT, .layers = 2}, BW_OP_ATTENTION, "cannot run gat: it has no kernels for attention"},
		{{.kind = BURROW_MODEL_SAGE, .layers = 2, .aggr = BURROW_AGGR_MAX}, BW_OP_MAX_AGG, "max aggregator"},
		{{.kind = BURROW_MODEL_GCN, .layers = 2, .norm = BURROW_NORM_LAYER}, BW_OP_LAYER_NORM, "layer norm"},
		{{.kind = BURROW_MODEL_MLP, .layers = 3, .norm = BURROW_NORM_BATCH}, BW_OP_BATCH_NORM, "batch norm"},
	};
	for (size_t i = 0; i < sizeof need / sizeof *need; i++)
		for (int op = 0; op < BW_OP_COUNT; op++) {
			const bw_ops ops = without(FAM(op), "lacking");
			be.ops = &ops;
			const int st = bw_model_supported(&be, &need[i].c);
			if (!shares_slots(op, need[i].op)) {
				cr_assert_eq(st, 0, "%s", burrow_last_error());
				continue;
			}
			cr_assert_eq(st, BURROW_E_UNSUPPORTED);
			const char *e = burrow_last_error();
			cr_assert(strstr(e, "the lacking backend") && strstr(e, need[i].says) &&
					  strstr(e, bw_op_name(need[i].op)) &&
					  !strchr(e, '\n'),
				  "%s", e);
		}
	/* a normalization is of hidden layers: one layer has none to run */
	const bw_ops ops = without(FAM(BW_OP_LAYER_NORM) | FAM(BW_OP_BATCH_NORM), "lacking");
	be.ops = &ops;
	cr_assert_eq(bw_model_supported(&be, &(bw_model_cfg){.kind = BURROW_MODEL_SAGE, .layers = 1,
							     .norm = BURROW_NORM_BATCH}), 0);
	be.ops = cpu;
	bw_backend_release(&be);
}

/* The CUDA backend's answer needs no GPU (its registry entry carries its table): it has
 * neither attention nor the max aggregator nor the normalizations yet, so gat on CUDA is
 * refused when the trainer opens, not at its first step. */
Test(ops, the_cuda_table_answers_without_a_device)
{
	const bw_backend_reg *r = bw_backend_find(BW_BACKEND_CUDA);
	if (!r)
		cr_skip_test("backend cuda is not in this build");
	cr_assert(!bw_ops_supports(r->ops, BW_OP_ATTENTION) && !bw_ops_supports(r->ops, BW_OP_MAX_AGG));
	const bw_backend be = {.ops = r->ops, .dev = bw_device_cpu(), .kind = BW_BACKEND_CUDA};
	cr_assert_eq(bw_model_supported(&be, &(bw_model_cfg){.kind = BURROW_MODEL_GAT, .layers = 2}), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "the cuda backend cannot run gat"), "%s", burrow_last_error());
	cr_assert_eq(bw_model_supported(&be, &(bw_model_cfg){.kind = BURROW_MODEL_SAGE, .layers = 2}), 0);
}

BACKENDS(segment_max_and_its_backward_match_ref)
{
	const int64_t nd = 23, ns = 41, dim = 6;
	tblock t;
	make_block(&t, nd, ns, 7, 31);
	float *xh = uniform(ns * dim, 17, -2, 2), *gh = uniform(nd * dim, 18, -2, 2);
	for (int threads = 1; threads <= 2; threads++) {
		bw_backend be = open_backend(*kind, threads);
		NEED_SLOT(&be, seg_max_fwd);
		NEED_SLOT(&be, seg_max_bwd);
		cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
		bw_tensor x = dev_tensor(&be, xh, ns, dim), g = dev_tensor(&be, gh, nd, dim);
		bw_tensor out = dev_tensor(&be, NULL, nd, dim), gx = dev_tensor(&be, NULL, ns, dim);
		int32_t *arg = dev_put(&be, NULL, (size_t)(nd * dim) * sizeof(int32_t));
		cr_assert_eq(bw_seg_max(&be, &t.b, &x, &out, arg), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_seg_max_backward(&be, &t.b, &g, arg, &gx), 0, "%s", burrow_last_error());
		float *o = tensor_get(&be, &out), *b = tensor_get(&be, &gx);
		int32_t *ah = dev_get(&be, arg, (size_t)(nd * dim) * sizeof(int32_t));
		double *ref_gx = calloc((size_t)(ns * dim), sizeof *ref_gx);
		for (int64_t i = 0; i < nd; i++)
			for (int64_t c = 0; c < dim; c++) {
				/* the obvious loop: the largest value, the first source holding it */
				double best = 0;
				int64_t who = -1;
				for (int64_t e = t.b.indptr[i]; e < t.b.indptr[i + 1]; e++) {
					const int64_t j = t.b.indices[e];
					if (who < 0 || xh[j * dim + c] > best) {
						best = xh[j * dim + c];
						who = j;
					}
				}
				cr_assert_eq(o[i * dim + c], (float)best, "fwd [%lld, %lld]", (long long)i, (long long)c);
				cr_assert_eq(ah[i * dim + c], who, "arg [%lld, %lld]", (long long)i, (long long)c);
				if (who >= 0)
					ref_gx[who * dim + c] += gh[i * dim + c];
			}
		for (int64_t k = 0; k < ns * dim; k++)
			cr_assert(close_to(b[k], ref_gx[k], red_tol(&be)), "bwd [%lld]: %g vs %g", (long long)k, b[k], ref_gx[k]);
		bw_tensor bad = dev_tensor(&be, NULL, nd + 1, dim);
		cr_assert_eq(bw_seg_max(&be, &t.b, &x, &bad, arg), BURROW_E_INVAL);
		bw_tensor_free(&bad);
		free(o);
		free(b);
		free(ah);
		free(ref_gx);
		bw_device_free(be.dev, arg);
		bw_tensor_free(&x);
		bw_tensor_free(&g);
		bw_tensor_free(&out);
		bw_tensor_free(&gx);
		bw_backend_release(&be);
	}
	free(xh);
	free(gh);
	free_block(&t);
}

/* Source of slot q of row i (0: the self loop, none in a bipartite block), as bw_ops
 * numbers them; row i's slots, and the number of its first. */
static int64_t ref_slot_src(const bw_block *b, int64_t i, int64_t q)
{
	if (b->bipartite)
		return b->indices[b->indptr[i] + q];
	return q ? b->indices[b->indptr[i] + q - 1] : i;
}
static int64_t ref_slots(const bw_block *b, int64_t i) { return b->indptr[i + 1] - b->indptr[i] + !b->bipartite; }
static int64_t ref_slot_base(const bw_block *b, int64_t i) { return b->indptr[i] + (b->bipartite ? 0 : i); }

/* The attention kernels one by one against their definitions in double: per-head dot and
 * its backward, the edge softmax and its backward, the attention aggregation and its
 * backward; on a block with self loops, and on a bipartite one (more destinations than
 * sources, no self loop, empty rows). */
static void check_attention_kernels(int kind, bool bipartite)
{
	const int64_t nd = 19, ns = bipartite ? 13 : 33, H = 3, F = 4, hf = H * F;
	tblock t;
	make_block_as(&t, nd, ns, 6, 41, bipartite);
	const int64_t S = bw_block_slots(&t.b);
	const float slope = 0.2f;
	float *hh = uniform(ns * hf, 51, -1, 1), *ah = uniform(hf, 52, -1, 1), *gdot = uniform(ns * H, 53, -1, 1);
	float *ssh = uniform(ns * H, 54, -2, 2), *sdh = uniform(nd * H, 55, -2, 2), *gah = uniform(S * H, 56, -1, 1);
	float *alh = uniform(S * H, 57, 0, 1), *goh = uniform(nd * hf, 58, -1, 1);
	for (int threads = 1; threads <= 2; threads++) {
		bw_backend be = open_backend(kind, threads);
		NEED_SLOT(&be, head_dot);
		NEED_SLOT(&be, head_dot_bwd);
		NEED_SLOT(&be, edge_softmax_fwd);
		NEED_SLOT(&be, edge_softmax_bwd);
		NEED_SLOT(&be, att_agg_fwd);
		NEED_SLOT(&be, att_agg_bwd);
		const double tol = red_tol(&be);
		cr_assert_eq(bw_block_upload(&t.b, be.dev), 0);
		/* head dot */
		bw_tensor h = dev_tensor(&be, hh, ns, hf), dot = dev_tensor(&be, NULL, ns, H);
		float *a = dev_put(&be, ah, (size_t)hf * sizeof(float)), *ga = dev_put(&be, NULL, (size_t)hf * sizeof(float));
		cr_assert_eq(bw_head_dot(&be, &h, H, a, &dot), 0, "%s", burrow_last_error());
		float *d = tensor_get(&be, &dot);
		for (int64_t r = 0; r < ns; r++)
			for (int64_t k = 0; k < H; k++) {
				double ref = 0;
				for (int64_t f = 0; f < F; f++)
					ref += (double)hh[r * hf + k * F + f] * ah[k * F + f];
				cr_assert(close_to(d[r * H + k], ref, tol), "head dot [%lld, %lld]", (long long)r, (long long)k);
			}
		bw_tensor g = dev_tensor(&be, gdot, ns, H), gx = dev_tensor(&be, hh, ns, hf); /* gx starts as h: it adds */
		cr_assert_eq(bw_head_dot_backward(&be, &h, H, a, &g, &gx, ga), 0, "%s", burrow_last_error());
		float *gxh = tensor_get(&be, &gx), *gag = dev_get(&be, ga, (size_t)hf * sizeof(float));
		for (int64_t c = 0; c < hf; c++) {
			double ref = 0;
			for (int64_t r = 0; r < ns; r++) {
				ref += (double)gdot[r * H + c / F] * hh[r * hf + c];
				cr_assert(close_to(gxh[r * hf + c], hh[r * hf + c] + (double)gdot[r * H + c / F] * ah[c], tol));
			}
			cr_assert(close_to(gag[c], ref, tol), "ga [%lld]: %g vs %g", (long long)c, gag[c], ref);
		}
		/* edge softmax */
		bw_tensor ss = dev_tensor(&be, ssh, ns, H), sd = dev_tensor(&be, sdh, nd, H);
		bw_tensor al = dev_tensor(&be, NULL, S, H), gal = dev_tensor(&be, gah, S, H);
		bw_tensor gss = dev_tensor(&be, NULL, ns, H), gsd = dev_tensor(&be, NULL, nd, H);
		cr_assert_eq(bw_edge_softmax(&be, &t.b, &ss, &sd, slope, &al), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_edge_softmax_backward(&be, &t.b, &ss, &sd, &al, &gal, slope, &gss, &gsd), 0, "%s",
			     burrow_last_error());
		float *alg = tensor_get(&be, &al), *gssh = tensor_get(&be, &gss), *gsdh = tensor_get(&be, &gsd);
		double *rgs = calloc((size_t)(ns * H), sizeof *rgs), *ral = calloc((size_t)(S * H), sizeof *ral);
		for (int64_t i = 0; i < nd; i++) {
			const int64_t n = ref_slots(&t.b, i), base = ref_slot_base(&t.b, i);
			for (int64_t k = 0; k < H; k++) {
				double sum = 0, dotg = 0, gd = 0;
				for (int64_t q = 0; q < n; q++) {
					const double u = (double)sdh[i * H + k] + ssh[ref_slot_src(&t.b, i, q) * H + k];
					sum += exp(u > 0 ? u : slope * u);
				}
				for (int64_t q = 0; q < n; q++) {
					const double u = (double)sdh[i * H + k] + ssh[ref_slot_src(&t.b, i, q) * H + k];
					ral[(base + q) * H + k] = exp(u > 0 ? u : slope * u) / sum;
					dotg += ral[(base + q) * H + k] * gah[(base + q) * H + k];
				}
				for (int64_t q = 0; q < n; q++) {
					const double u = (double)sdh[i * H + k] + ssh[ref_slot_src(&t.b, i, q) * H + k];
					const double dq = ral[(base + q) * H + k] * (gah[(base + q) * H + k] - dotg) * (u > 0 ? 1 : slope);
					gd += dq;
					rgs[ref_slot_src(&t.b, i, q) * H + k] += dq;
					cr_assert(close_to(alg[(base + q) * H + k], ral[(base + q) * H + k], tol), "alpha row %lld slot %lld",
						  (long long)i, (long long)q);
				}
				cr_assert(close_to(gsdh[i * H + k], gd, tol), "gs_dst [%lld, %lld]: %g vs %g", (long long)i,
					  (long long)k, gsdh[i * H + k], gd);
			}
		}
		for (int64_t k = 0; k < ns * H; k++)
			cr_assert(close_to(gssh[k], rgs[k], tol), "gs_src [%lld]: %g vs %g", (long long)k, gssh[k], rgs[k]);
		/* attention aggregation with arbitrary coefficients */
		bw_tensor alpha = dev_tensor(&be, alh, S, H), out = dev_tensor(&be, NULL, nd, hf);
		bw_tensor go = dev_tensor(&be, goh, nd, hf), galpha = dev_tensor(&be, NULL, S, H), gh = dev_tensor(&be, NULL, ns, hf);
		cr_assert_eq(bw_att_aggregate(&be, &t.b, &alpha, &h, &out), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_att_aggregate_backward(&be, &t.b, &alpha, &h, &go, &galpha, &gh), 0, "%s", burrow_last_error());
		float *oh = tensor_get(&be, &out), *galh = tensor_get(&be, &galpha), *ghh = tensor_get(&be, &gh);
		double *rgh = calloc((size_t)(ns * hf), sizeof *rgh);
		for (int64_t i = 0; i < nd; i++) {
			const int64_t n = ref_slots(&t.b, i), base = ref_slot_base(&t.b, i);
			for (int64_t c = 0; c < hf; c++) {
				double ref = 0;
				for (int64_t q = 0; q < n; q++)
					ref += (double)alh[(base + q) * H + c / F] * hh[ref_slot_src(&t.b, i, q) * hf + c];
				cr_assert(close_to(oh[i * hf + c], ref, tol), "att agg [%lld, %lld]", (long long)i, (long long)c);
			}
			for (int64_t q = 0; q < n; q++) {
				const int64_t j = ref_slot_src(&t.b, i, q);
				for (int64_t k = 0; k < H; k++) {
					double ref = 0;
					for (int64_t f = 0; f < F; f++) {
						ref += (double)goh[i * hf + k * F + f] * hh[j * hf + k * F + f];
						rgh[j * hf + k * F + f] += (double)alh[(base + q) * H + k] * goh[i * hf + k * F + f];
					}
					cr_assert(close_to(galh[(base + q) * H + k], ref, tol), "galpha row %lld slot %lld", (long long)i,
						  (long long)q);
				}
			}
		}
		for (int64_t k = 0; k < ns * hf; k++)
			cr_assert(close_to(ghh[k], rgh[k], tol), "gh [%lld]: %g vs %g", (long long)k, ghh[k], rgh[k]);
		/* shapes are checked */
		cr_assert_eq(bw_att_aggregate(&be, &t.b, &gss, &h, &out), BURROW_E_INVAL);
		cr_assert_eq(bw_head_dot(&be, &h, 5, a, &dot), BURROW_E_INVAL);
		free(d);
		free(gxh);
		free(gag);
		free(alg);
		free(gssh);
		free(gsdh);
		free(rgs);
		free(ral);
		free(oh);
		free(galh);
		free(ghh);
		free(rgh);
		bw_tensor *ts[] = {&h, &dot, &g, &gx, &ss, &sd, &al, &gal, &gss, &gsd, &alpha, &out, &go, &galpha, &gh};
		for (size_t i = 0; i < sizeof ts / sizeof *ts; i++)
			bw_tensor_free(ts[i]);
		bw_device_free(be.dev, a);
		bw_device_free(be.dev, ga);
		bw_backend_release(&be);
	}
	free(hh);
	free(ah);
	free(gdot);
	free(ssh);
	free(sdh);
	free(gah);
	free(alh);
	free(goh);
	free_block(&t);
}

BACKENDS(attention_kernels_match_ref) { check_attention_kernels(*kind, false); }
BACKENDS(attention_kernels_match_ref_on_bipartite_blocks) { check_attention_kernels(*kind, true); }

/* Layer norm and batch norm (forward, backward, fixed statistics), column scale and dot,
 * against their definitions in double. */
BACKENDS(normalization_kernels_match_ref)
{
	const int64_t r = 37, c = 21;
	const float eps = 1e-5f;
	float *xh = uniform(r * c, 61, -2, 3), *gh = uniform(r * c, 62, -1, 1), *sh = uniform(c, 63, 0.5, 2);
	float *mh = uniform(c, 64, -1, 1), *vh = uniform(c, 65, 0.5, 2);
	bw_backend be = open_backend(*kind, 2);
	NEED_SLOT(&be, row_norm_fwd);
	NEED_SLOT(&be, row_norm_bwd);
	NEED_SLOT(&be, col_norm_fwd);
	NEED_SLOT(&be, col_norm_bwd);
	NEED_SLOT(&be, col_norm_apply);
	NEED_SLOT(&be, col_scale);
	NEED_SLOT(&be, col_dot);
	const double tol = red_tol(&be);
	for (int batch = 0; batch < 2; batch++) {
		/* groups: rows (layer norm) or columns (batch norm), each of len elements */
		const int64_t groups = batch ? c : r, len = batch ? r : c;
#define AT(q, t) (batch ? (t) * c + (q) : (q) * c + (t))
		bw_tensor x = dev_tensor(&be, xh, r, c), y = dev_tensor(&be, NULL, r, c), g = dev_tensor(&be, gh, r, c);
		bw_tensor gx = dev_tensor(&be, NULL, r, c);
		float *stat = dev_put(&be, NULL, (size_t)(3 * (r + c)) * sizeof(float));
		float *rstd = batch ? stat + 2 * c : stat;
		if (batch)
			cr_assert_eq(bw_col_norm(&be, &x, eps, &y, stat, stat + c, rstd), 0, "%s", burrow_last_error());
		else
			cr_assert_eq(bw_row_norm(&be, &x, eps, &y, rstd), 0, "%s", burrow_last_error());
		cr_assert_eq((batch ? bw_col_norm_backward : bw_row_norm_backward)(&be, &y, rstd, &g, &gx), 0, "%s",
			     burrow_last_error());
		float *yh = tensor_get(&be, &y), *gxh = tensor_get(&be, &gx);
		float *sth = dev_get(&be, stat, (size_t)(3 * (r + c)) * sizeof(float));
		for (int64_t q = 0; q < groups; q++) {
			double mu = 0, var = 0, sg = 0, sgy = 0;
			for (int64_t t = 0; t < len; t++)
				mu += xh[AT(q, t)] / (double)len;
			for (int64_t t = 0; t < len; t++)
				var += (xh[AT(q, t)] - mu) * (xh[AT(q, t)] - mu) / (double)len;
			const double rs = 1 / sqrt(var + eps);
			if (batch) {
				cr_assert(close_to(sth[q], mu, tol) && close_to(sth[c + q], var, tol), "column %lld statistics",
					  (long long)q);
			}
			for (int64_t t = 0; t < len; t++) {
				const double yr = (xh[AT(q, t)] - mu) * rs;
				cr_assert(close_to(yh[AT(q, t)], yr, tol), "%s fwd (%lld, %lld): %g vs %g", batch ? "batch" : "layer",
					  (long long)q, (long long)t, yh[AT(q, t)], yr);
				sg += gh[AT(q, t)];
				sgy += gh[AT(q, t)] * yr;
			}
			/* the backward is the transpose of the forward's Jacobian, written out */
			for (int64_t t = 0; t < len; t++) {
				const double yr = (xh[AT(q, t)] - mu) * rs;
				const double ref = rs * (gh[AT(q, t)] - sg / (double)len - yr * sgy / (double)len);
				cr_assert(close_to(gxh[AT(q, t)], ref, tol), "%s bwd (%lld, %lld): %g vs %g", batch ? "batch" : "layer",
					  (long long)q, (long long)t, gxh[AT(q, t)], ref);
			}
		}
#undef AT
		free(yh);
		free(gxh);
		free(sth);
		bw_device_free(be.dev, stat);
		bw_tensor_free(&x);
		bw_tensor_free(&y);
		bw_tensor_free(&g);
		bw_tensor_free(&gx);
	}
	/* fixed statistics, column scale, column dot */
	bw_tensor x = dev_tensor(&be, xh, r, c), y = dev_tensor(&be, NULL, r, c), g = dev_tensor(&be, gh, r, c);
	float *m = dev_put(&be, mh, (size_t)c * sizeof(float)), *v = dev_put(&be, vh, (size_t)c * sizeof(float));
	float *s = dev_put(&be, sh, (size_t)c * sizeof(float)), *dot = dev_put(&be, NULL, (size_t)c * sizeof(float));
	cr_assert_eq(bw_col_norm_apply(&be, &x, m, v, eps, &y), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_col_dot(&be, &x, &g, dot), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_col_scale(&be, &x, s, c), 0, "%s", burrow_last_error());
	float *yh = tensor_get(&be, &y), *xs = tensor_get(&be, &x), *dh = dev_get(&be, dot, (size_t)c * sizeof(float));
	for (int64_t q = 0; q < c; q++) {
		double ref = 0;
		for (int64_t t = 0; t < r; t++) {
			const int64_t i = t * c + q;
			ref += (double)xh[i] * gh[i];
			cr_assert(close_to(yh[i], (xh[i] - (double)mh[q]) / sqrt((double)vh[q] + eps), tol), "apply [%lld]", (long long)i);
			cr_assert(close_to(xs[i], (double)xh[i] * sh[q], elem_tol(&be)), "scale [%lld]", (long long)i);
		}
		cr_assert(close_to(dh[q], ref, tol), "dot [%lld]: %g vs %g", (long long)q, dh[q], ref);
	}
	cr_assert_eq(bw_col_scale(&be, &x, s, c + 1), BURROW_E_INVAL);
	bw_tensor bad = dev_tensor(&be, NULL, r + 1, c);
	cr_assert_eq(bw_row_norm(&be, &x, eps, &bad, m), BURROW_E_INVAL);
	bw_tensor_free(&bad);
	free(yh);
	free(xs);
	free(dh);
	bw_device_free(be.dev, m);
	bw_device_free(be.dev, v);
	bw_device_free(be.dev, s);
	bw_device_free(be.dev, dot);
	bw_tensor_free(&x);
	bw_tensor_free(&y);
	bw_tensor_free(&g);
	free(xh);
	free(gh);
	free(sh);
	free(mh);
	free(vh);
	bw_backend_release(&be);
}

/* The CPU device refuses, in one line, a buffer that cannot fit: one larger than the memory
 * available, or one that with the large buffers already live exceeds the machine's memory
 * (the kernel would grant both and kill the process when they are written); freeing a large
 * buffer gives its room back. Nothing is written to them, so the test touches no memory. */
Test(ops, cpu_device_refuses_buffers_that_cannot_fit)
{
	const bw_device *d = bw_device_cpu();
	const size_t total = bw_mem_total(), avail = bw_mem_available_at(NULL);
	cr_assert(total != SIZE_MAX && avail != SIZE_MAX, "no /proc/meminfo here");
	void *p = (void *)1;
	cr_assert_eq(bw_device_alloc(d, total + ((size_t)1 << 30), &p), BURROW_E_NOMEM);
	cr_assert_null(p);
	cr_assert(strstr(burrow_last_error(), "does not fit") && strstr(burrow_last_error(), "GiB"), "%s",
		  burrow_last_error());
	/* two buffers of 60% of the memory each: the second is refused while the first lives */
	const size_t big = total / 10 * 6;
	if (big + ((size_t)512 << 20) > avail) {
		cr_log_info("skipped the pair: %zu bytes available of %zu", avail, total);
		return;
	}
	void *a, *b;
	cr_assert_eq(bw_device_alloc(d, big, &a), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_device_host_alloc(d, big, &b), BURROW_E_NOMEM);
	cr_assert(strstr(burrow_last_error(), "already"), "%s", burrow_last_error());
	bw_device_free(d, a);
	cr_assert_eq(bw_device_host_alloc(d, big, &b), 0, "%s", burrow_last_error());
	bw_device_host_free(d, b);
}
