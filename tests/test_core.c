/* test_core.c: the allocation wrapper's accounting and failure hook, status strings, RNG. */
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "util.h"

#include <math.h>
#include <string.h>

TestSuite(core, .timeout = 30);

Test(core, allocations_are_counted_and_peak_tracked)
{
	size_t base, now, peak;
	burrow_mem_stats(&base, NULL);
	burrow_mem_reset_peak();
	char *a = bw_malloc(1000);
	char *b = bw_calloc(10, 100);
	burrow_mem_stats(&now, &peak);
	cr_assert_eq(now, base + 2000);
	cr_assert_eq(peak, base + 2000);
	a = bw_realloc(a, 5000);
	burrow_mem_stats(&now, &peak);
	cr_assert_eq(now, base + 6000);
	bw_free(b);
	bw_free(a);
	burrow_mem_stats(&now, &peak);
	cr_assert_eq(now, base);
	cr_assert_eq(peak, base + 6000);
	void *al = bw_aligned_alloc(4096, 10000);
	cr_assert_eq((uintptr_t)al % 4096, 0);
	memset(al, 1, 10000);
	burrow_mem_stats(&now, NULL);
	cr_assert_geq(now, base + 10000);
	bw_aligned_free(al);
	burrow_mem_stats(&now, NULL);
	cr_assert_eq(now, base);
}

Test(core, fail_after_fails_exactly_the_nth_allocation)
{
	bw_mem_fail_after(2);
	void *a = bw_malloc(8), *b = bw_malloc(8), *c = bw_malloc(8), *d = bw_malloc(8);
	bw_mem_fail_after(-1);
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	cr_assert_null(c);
	cr_assert_not_null(d, "only one allocation should fail");
	cr_assert(strstr(burrow_last_error(), "out of memory"));
	bw_free(a);
	bw_free(b);
	bw_free(d);
}

Test(core, status_strings_and_errno_mapping)
{
	cr_assert_str_eq(burrow_strerror(BURROW_E_FORMAT), "bad file format");
	cr_assert_str_eq(burrow_strerror(12345), "unknown status");
	cr_assert_eq(bw_err_errno(2 /* ENOENT */, "/x/y", "open"), BURROW_E_NOTFOUND);
	cr_assert(strstr(burrow_last_error(), "/x/y: open: No such file"), "%s", burrow_last_error());
	cr_assert_eq(bw_err(BURROW_E_IO, "tmp/part/a.npy: bad"), BURROW_E_IO);
	cr_assert_eq(bw_err_rebase(BURROW_E_IO, "tmp/part", "final"), BURROW_E_IO);
	cr_assert_str_eq(burrow_last_error(), "final/a.npy: bad");
#ifdef BURROW_CUDA
	/* a CUDA build answers with a count (0 on a machine without a GPU) */
	cr_assert_geq(burrow_cuda_device_count(), 0, "%s", burrow_last_error());
#else
	cr_assert_eq(burrow_cuda_device_count(), BURROW_E_UNSUPPORTED);
#endif
}

/* The keyed RNG: uniform draws and normals have the right moments; bw_rng_below is unbiased
 * over a small range (chi-square, 9 dof, critical value 27.88 at p = 0.001). */
Test(core, rng_moments_and_uniformity)
{
	bw_rng r;
	bw_rng_seed(&r, bw_key(42, 7));
	const int n = 200000;
	double s = 0, s2 = 0;
	long cnt[10] = {0};
	for (int i = 0; i < n; i++) {
		double z = bw_rng_normal(&r);
		s += z;
		s2 += z * z;
		cnt[bw_rng_below(&r, 10)]++;
	}
	cr_assert(fabs(s / n) < 0.01, "normal mean %g", s / n);
	cr_assert(fabs(s2 / n - 1) < 0.02, "normal variance %g", s2 / n);
	double chi = 0, e = n / 10.0;
	for (int k = 0; k < 10; k++)
		chi += (cnt[k] - e) * (cnt[k] - e) / e;
	cr_assert(chi < 27.88, "chi-square %g", chi);
	/* different keys give different streams; the same key the same one */
	bw_rng a, b, c;
	bw_rng_seed(&a, bw_key(1, 2));
	bw_rng_seed(&b, bw_key(1, 2));
	bw_rng_seed(&c, bw_key(2, 1));
	uint64_t x = bw_rng_next(&a);
	cr_assert_eq(x, bw_rng_next(&b));
	cr_assert_neq(x, bw_rng_next(&c));
}
