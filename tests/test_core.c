/* test_core.c: the allocation wrapper's accounting and failure hook, status strings, RNG, the small sort, the
 * growable array, the clock, replacing a file or a directory. */
#include <criterion/criterion.h>

#include "../core/half.h"
#include "../core/internal.h"
#include "util.h"

#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* ------------------------------------------------------------ the small sort */

/* ref_: is b a sorted permutation of a (counting sort by value over a small range)? */
static void ref_check_sorted_perm(const int64_t *a, const int64_t *b, int64_t n, const char *what)
{
	for (int64_t i = 1; i < n; i++)
		cr_assert_leq(b[i - 1], b[i], "%s: n %lld: out of order at %lld", what, (long long)n, (long long)i);
	for (int64_t i = 0; i < n; i++) {
		int64_t ca = 0, cb = 0;
		for (int64_t j = 0; j < n; j++) {
			ca += a[j] == a[i];
			cb += b[j] == a[i];
		}
		cr_assert_eq(ca, cb, "%s: n %lld: value %lld %lld times, not %lld", what, (long long)n,
			     (long long)a[i], (long long)cb, (long long)ca);
	}
}

Test(core, small_sort_sorts_every_width_and_length)
{
	enum { MAXN = 80 }; /* both sides of BW_ISORT_MAX */
	int64_t a[MAXN], b[MAXN];
	int32_t a32[MAXN];
	uint64_t a64[MAXN];
	bw_rng r;
	bw_rng_seed(&r, 7);
	for (int64_t n = 0; n <= MAXN; n++) {
		for (int rep = 0; rep < 3; rep++) {
			/* rep 0: many repeats; 1: wide values, both signs; 2: descending */
			for (int64_t i = 0; i < n; i++)
				a[i] = rep == 0 ? (int64_t)bw_rng_below(&r, 5) - 2
				     : rep == 1 ? (int64_t)bw_rng_next(&r)
						: n - i;
			for (int64_t i = 0; i < n; i++)
				a32[i] = (int32_t)a[i];
			memcpy(b, a, sizeof a);
			bw_sort_i64(b, n);
			ref_check_sorted_perm(a, b, n, "bw_sort_i64");
			memcpy(b, a, sizeof a);
			bw_isort_i64(b, n);
			ref_check_sorted_perm(a, b, n, "bw_isort_i64");
			/* int32: the same values cut to 32 bits, checked through int64 copies */
			int64_t w[MAXN], v[MAXN];
			for (int64_t i = 0; i < n; i++)
				w[i] = a32[i];
			bw_sort_i32(a32, n);
			for (int64_t i = 0; i < n; i++)
				v[i] = a32[i];
			ref_check_sorted_perm(w, v, n, "bw_sort_i32");
			/* uint64: the top bit set orders after every smaller value (no signed compare) */
			for (int64_t i = 0; i < n; i++)
				a64[i] = (uint64_t)a[i];
			bw_sort_u64(a64, n);
			for (int64_t i = 1; i < n; i++)
				cr_assert_leq(a64[i - 1], a64[i], "bw_sort_u64: n %lld", (long long)n);
			/* unique over the sorted int64 copy: strictly increasing, same set of values */
			memcpy(b, a, sizeof a);
			bw_sort_i64(b, n);
			int64_t k = bw_unique_i64(b, n);
			cr_assert_leq(k, n);
			cr_assert_eq(k > 0, n > 0);
			for (int64_t i = 1; i < k; i++)
				cr_assert_lt(b[i - 1], b[i], "bw_unique_i64: n %lld: repeat at %lld", (long long)n, (long long)i);
			for (int64_t i = 0; i < n; i++)
				cr_assert_eq(bw_lower_bound_i64(b, k, a[i]) < k && b[bw_lower_bound_i64(b, k, a[i])] == a[i],
					     true, "bw_unique_i64: n %lld: lost %lld", (long long)n, (long long)a[i]);
		}
	}
}

/* ------------------------------------------------------------ the growable array and the clock */

Test(core, grow_keeps_contents_and_grows_by_half)
{
	size_t base = tu_mem_now(), cap = 0;
	int64_t *a = NULL;
	cr_assert_eq(bw_grow(&a, &cap, 1, sizeof *a, true), 0);
	cr_assert_not_null(a);
	cr_assert_eq(cap, 16, "the smallest block holds 16 elements, not %zu", cap);
	for (int64_t i = 0; i < 16; i++)
		a[i] = i * 7;
	int64_t *same = a;
	cr_assert_eq(bw_grow(&a, &cap, 16, sizeof *a, true), 0);
	cr_assert_eq(a, same, "a need within the capacity moves nothing");
	cr_assert_eq(bw_grow(&a, &cap, 17, sizeof *a, true), 0);
	cr_assert_eq(cap, 24, "half again: %zu", cap);
	cr_assert_eq(bw_grow(&a, &cap, 1000, sizeof *a, true), 0);
	cr_assert_eq(cap, 1000, "a need past half again is the capacity: %zu", cap);
	for (int64_t i = 0; i < 16; i++)
		cr_assert_eq(a[i], i * 7, "kept contents, element %lld", (long long)i);
	cr_assert_eq(bw_grow(&a, &cap, 2000, sizeof *a, false), 0);
	cr_assert_eq(cap, 2000);
	a[1999] = 1;
	bw_free(a);
	cr_assert_eq(tu_mem_now(), base);
}

Test(core, grow_refuses_an_overflowing_size_and_leaves_the_array)
{
	size_t cap = 0;
	int64_t *a = NULL;
	cr_assert_eq(bw_grow(&a, &cap, 20, sizeof *a, true), 0);
	int64_t *old = a;
	const size_t oldcap = cap;
	for (int keep = 0; keep < 2; keep++) {
		/* need * elem past SIZE_MAX: refused before anything is freed or allocated */
		cr_assert_eq(bw_grow(&a, &cap, SIZE_MAX / sizeof *a + 1, sizeof *a, keep), BURROW_E_NOMEM);
		cr_assert(strstr(burrow_last_error(), "do not fit in memory"), "%s", burrow_last_error());
		cr_assert_eq(a, old);
		cr_assert_eq(cap, oldcap);
		cr_assert_eq(bw_grow(&a, &cap, 21, SIZE_MAX / 2, keep), BURROW_E_NOMEM);
		cr_assert_eq(a, old);
		cr_assert_eq(cap, oldcap);
	}
	/* a capacity whose half-again step would overflow still grows to what is needed:
	 * elements of SIZE_MAX / 40 bytes, the most that fit is 40; from 30, half again is 45 */
	size_t big = 30;
	void *none = NULL;
	cr_assert_eq(bw_grow(&none, &big, 31, SIZE_MAX / 40, false), BURROW_E_NOMEM,
		     "31 such elements fit in a size_t but not in memory");
	cr_assert(strstr(burrow_last_error(), "out of memory allocating"), "clamped to 40, then asked for: %s",
		  burrow_last_error());
	bw_free(a);
}

Test(core, grow_when_memory_runs_out)
{
	size_t base = tu_mem_now(), cap = 0;
	int32_t *a = NULL;
	cr_assert_eq(bw_grow(&a, &cap, 16, sizeof *a, true), 0);
	for (int i = 0; i < 16; i++)
		a[i] = i;
	int32_t *old = a;
	bw_mem_fail_after(0);
	int st = bw_grow(&a, &cap, 100, sizeof *a, true);
	bw_mem_fail_after(-1);
	cr_assert_eq(st, BURROW_E_NOMEM);
	cr_assert(strstr(burrow_last_error(), "out of memory"), "%s", burrow_last_error());
	cr_assert_eq(a, old, "kept: the old block is still the caller's");
	cr_assert_eq(cap, 16);
	for (int i = 0; i < 16; i++)
		cr_assert_eq(a[i], i);
	bw_mem_fail_after(0);
	st = bw_grow(&a, &cap, 100, sizeof *a, false);
	bw_mem_fail_after(-1);
	cr_assert_eq(st, BURROW_E_NOMEM);
	cr_assert_null(a, "not kept: the old block was freed first");
	cr_assert_eq(cap, 0);
	cr_assert_eq(tu_mem_now(), base, "nothing held after the failures");
	cr_assert_eq(bw_grow(&a, &cap, 100, sizeof *a, false), 0, "and it grows again afterwards");
	bw_free(a);
	cr_assert_eq(tu_mem_now(), base);
}

Test(core, one_monotonic_clock_in_seconds_and_nanoseconds)
{
	uint64_t n0 = bw_now_ns();
	double s = bw_now_s();
	uint64_t n1 = bw_now_ns();
	cr_assert_leq(n0, n1);
	cr_assert(s >= (double)n0 * 1e-9 - 1e-6 && s <= (double)n1 * 1e-9 + 1e-6,
		  "bw_now_s %.9f is not between %.9f and %.9f: two clocks", s, (double)n0 * 1e-9, (double)n1 * 1e-9);
	for (int i = 0; i < 1000; i++) {
		uint64_t t = bw_now_ns();
		cr_assert_geq(t, n1, "went back");
		n1 = t;
	}
}

/* ------------------------------------------------------------ replacing a file or a directory */

/* The renames the hook fails (with EIO): the one into dst, the one back from dst.old.PID,
 * the one moving dst aside. */
static bool fail_into, fail_back, fail_aside;
static int hook_calls;

static int rename_fault(const char *from, const char *to)
{
	hook_calls++;
	const bool back = strstr(from, ".old.") != NULL, aside = strstr(to, ".old.") != NULL;
	if ((back && fail_back) || (aside && fail_aside) || (!back && !aside && fail_into))
		return 5; /* EIO */
	return 0;
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char *p = tu_path(dir, "%s", name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f, "%s", p);
	fputs(text, f);
	fclose(f);
	free(p);
}

static bool file_says(const char *dir, const char *name, const char *text)
{
	char *p = tu_path(dir, "%s", name);
	size_t len = 0;
	char *s = tu_read(p, &len);
	bool yes = s && len == strlen(text) && !memcmp(s, text, len);
	free(s);
	free(p);
	return yes;
}

/* The entries of dir, sorted, one a line ("" when empty). */
static char *listing(const char *dir)
{
	char *out = NULL;
	tu_sh(&out, NULL, "ls -A '%s'", dir);
	return out;
}

Test(core, replace_dir_rolls_back_when_the_final_rename_fails)
{
	char *root = tu_tmpdir(), *dst = tu_path(root, "out"), *tmp = tu_path(root, "out.tmp.1");
	mkdir(dst, 0755);
	mkdir(tmp, 0755);
	put_file(dst, "data", "old");
	put_file(tmp, "data", "new");
	/* without replace: refused, both untouched */
	cr_assert_eq(bw_replace_dir(tmp, dst, false), BURROW_E_EXISTS);
	cr_assert(strstr(burrow_last_error(), "already exists"), "%s", burrow_last_error());
	/* the final rename fails: the old directory is back, intact, and tmp is the caller's */
	bw_rename_fault_hook = rename_fault;
	fail_into = true;
	hook_calls = 0;
	int st = bw_replace_dir(tmp, dst, true);
	bw_rename_fault_hook = NULL;
	fail_into = false;
	cr_assert_eq(st, BURROW_E_IO, "%s", burrow_last_error());
	cr_assert_eq(hook_calls, 3, "aside, into place, back: %d renames", hook_calls);
	cr_assert(strstr(burrow_last_error(), "out: rename into place"), "%s", burrow_last_error());
	cr_assert(file_says(dst, "data", "old"), "the old directory is not back");
	cr_assert(file_says(tmp, "data", "new"));
	char *ls = listing(root);
	cr_assert_str_eq(ls, "out\nout.tmp.1\n", "left: %s", ls);
	free(ls);
	/* moving aside fails: nothing moved */
	bw_rename_fault_hook = rename_fault;
	fail_aside = true;
	st = bw_replace_dir(tmp, dst, true);
	bw_rename_fault_hook = NULL;
	fail_aside = false;
	cr_assert_eq(st, BURROW_E_IO);
	cr_assert(strstr(burrow_last_error(), "move aside"), "%s", burrow_last_error());
	cr_assert(file_says(dst, "data", "old"));
	/* then it works: the new one in place, the old one and the temporary name gone */
	cr_assert_eq(bw_replace_dir(tmp, dst, true), 0, "%s", burrow_last_error());
	cr_assert(file_says(dst, "data", "new"));
	ls = listing(root);
	cr_assert_str_eq(ls, "out\n", "left: %s", ls);
	free(ls);
	/* nothing there before: a plain rename */
	char *dst2 = tu_path(root, "fresh");
	mkdir(tmp, 0755);
	cr_assert_eq(bw_replace_dir(tmp, dst2, false), 0, "%s", burrow_last_error());
	cr_assert(tu_exists(dst2) && !tu_exists(tmp));
	free(dst2);
	tu_rmrf(root);
	free(dst);
	free(tmp);
	free(root);
}

Test(core, replace_dir_says_where_the_old_one_is_when_the_rollback_fails)
{
	char *root = tu_tmpdir(), *dst = tu_path(root, "out"), *tmp = tu_path(root, "out.tmp.1");
	char *old = tu_path(root, "out.old.%ld", (long)getpid());
	mkdir(dst, 0755);
	mkdir(tmp, 0755);
	put_file(dst, "data", "old");
	bw_rename_fault_hook = rename_fault;
	fail_into = fail_back = true;
	int st = bw_replace_dir(tmp, dst, true);
	bw_rename_fault_hook = NULL;
	fail_into = fail_back = false;
	cr_assert_eq(st, BURROW_E_IO);
	const char *msg = burrow_last_error();
	cr_assert(strstr(msg, "out: rename into place") && strstr(msg, "moving the previous one back failed too") &&
			  strstr(msg, old),
		  "the message should name both failures and %s: %s", old, msg);
	cr_assert(!tu_exists(dst));
	cr_assert(file_says(old, "data", "old"), "the old directory is lost");
	tu_rmrf(root);
	free(old);
	free(dst);
	free(tmp);
	free(root);
}

Test(core, replace_file_renames_and_reports)
{
	char *root = tu_tmpdir(), *dst = tu_path(root, "f"), *tmp = tu_path(root, "f.tmp");
	put_file(root, "f", "old");
	put_file(root, "f.tmp", "new");
	bw_rename_fault_hook = rename_fault;
	fail_into = true;
	int st = bw_replace_file(tmp, dst);
	bw_rename_fault_hook = NULL;
	fail_into = false;
	cr_assert_eq(st, BURROW_E_IO);
	cr_assert(strstr(burrow_last_error(), "f: rename"), "%s", burrow_last_error());
	cr_assert(file_says(root, "f", "old") && file_says(root, "f.tmp", "new"));
	cr_assert_eq(bw_replace_file(tmp, dst), 0, "%s", burrow_last_error());
	cr_assert(file_says(root, "f", "new") && !tu_exists(tmp));
	tu_rmrf(root);
	free(dst);
	free(tmp);
	free(root);
}

Test(core, exclusive_scan_and_bulk_half_conversions)
{
	size_t h[6] = {3, 0, 2, 5, 0, 1}, want[6] = {0, 3, 3, 5, 10, 10};
	cr_assert_eq(bw_exclusive_scan(h, 6), 11);
	for (int i = 0; i < 6; i++)
		cr_assert_eq(h[i], want[i], "bucket %d starts at %zu, not %zu", i, h[i], want[i]);
	/* the bulk conversions equal the element ones, in place from f32 to f16 too */
	enum { M = 37 };
	float f[M], back[M];
	uint16_t ref[M];
	for (int i = 0; i < M; i++) {
		f[i] = (float)(i - 18) * 0.37f + (i == 5 ? 65504.0f : 0.0f);
		ref[i] = bw_f32_to_f16(f[i]);
	}
	float g[M];
	memcpy(g, f, sizeof f);
	bw_f32_to_f16_n(g, g, M);
	cr_assert_eq(memcmp(g, ref, sizeof ref), 0, "in-place f32 -> f16 differs from the element conversion");
	bw_f16_to_f32_n(back, ref, M);
	for (int i = 0; i < M; i++)
		cr_assert_eq(back[i], bw_f16_to_f32(ref[i]), "element %d", i);
}
