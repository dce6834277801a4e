/* test_store.c: the feature store: gathered rows against plain pread, every engine and row size,
 * conversions, errors and injected faults, async tickets, the caches against reference models. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/half.h"
#include "../graph/dataset_internal.h"
#include "../graph/npy.h"
#include "../graph/store_internal.h"
#include "util.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(store, .init = setup, .fini = teardown, .timeout = 120);

static const int ENGINES[] = {BURROW_STORE_URING, BURROW_STORE_PREAD, BURROW_STORE_MMAP};

static uint64_t rnd(uint64_t *x)
{
	*x += 0x9E3779B97F4A7C15ull;
	uint64_t z = *x;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A features file [n, dim] of dtype t, filled with random bytes; returns its path. */
static char *make_file(const char *name, burrow_dtype t, int64_t n, int64_t dim, uint64_t seed)
{
	size_t bytes = (size_t)n * (size_t)dim * burrow_dtype_size(t);
	unsigned char *d = malloc(bytes);
	for (size_t i = 0; i < bytes; i++)
		d[i] = (unsigned char)rnd(&seed);
	if (t == BURROW_DTYPE_F32) /* no NaNs: converted rows compare by value in one test */
		for (size_t i = 3; i < bytes; i += 4)
			d[i] &= 0x3f;
	char *p = tu_path(dir, "%s.npy", name);
	int64_t shape[2] = {n, dim};
	cr_assert_eq(bw_npy_save(p, t, 2, shape, d, BW_NPY_FEATURE_ALIGN), 0, "%s", burrow_last_error());
	free(d);
	return p;
}

/* The reference: row id of the file by a plain buffered pread. */
static void ref_row(const char *path, int64_t id, void *out)
{
	bw_npy h;
	cr_assert_eq(bw_npy_open(path, &h, NULL), 0);
	size_t rb = (size_t)h.shape[1] * burrow_dtype_size(h.dtype);
	int fd = open(path, O_RDONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(pread(fd, out, rb, h.data_offset + id * (int64_t)rb), (ssize_t)rb);
	close(fd);
}

/* All rows of the file by the reference (one open), [N, row_bytes]. */
static void *ref_all(const char *path, size_t *rb_out)
{
	bw_npy h;
	cr_assert_eq(bw_npy_open(path, &h, NULL), 0);
	size_t rb = (size_t)h.shape[1] * burrow_dtype_size(h.dtype), n = (size_t)h.shape[0];
	void *all = malloc(n * rb);
	int fd = open(path, O_RDONLY);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(pread(fd, (char *)all + i * rb, rb, h.data_offset + (int64_t)(i * rb)), (ssize_t)rb);
	close(fd);
	*rb_out = rb;
	return all;
}

static burrow_store *open_store(const char *path, int engine, int qd, int threads, size_t max_read)
{
	burrow_store_opts o;
	burrow_store_defaults(&o);
	o.engine = engine;
	if (qd)
		o.queue_depth = qd;
	o.threads = threads;
	if (max_read)
		o.max_read_bytes = max_read;
	burrow_store *s;
	cr_assert_eq(burrow_store_open(&s, path, &o), 0, "%s", burrow_last_error());
	int got = burrow_store_get_info(s)->engine;
	if (engine == BURROW_STORE_URING && got == BURROW_STORE_PREAD)
		cr_log_info("io_uring is not available here: the uring cases ran on the pread fallback");
	else
		cr_assert_eq(got, engine);
	return s;
}

/* Ids that exercise everything: random, unsorted, repeats, first and last rows, a run. */
static int64_t *mixed_ids(int64_t N, size_t n, uint64_t seed)
{
	int64_t *ids = malloc(n * sizeof *ids);
	for (size_t i = 0; i < n; i++)
		ids[i] = (int64_t)(rnd(&seed) % (uint64_t)N);
	ids[0] = N - 1;
	ids[1] = 0;
	ids[n - 1] = 0;
	ids[n / 2] = N - 1;
	for (size_t i = 0; i < 40 && 10 + i < n / 2; i++) /* a run of neighbours: merged reads */
		ids[10 + i] = (N / 2 + (int64_t)i) % N;
	for (size_t i = 0; i < n / 10; i++) /* repeats */
		ids[n / 2 + 1 + i] = ids[i * 3];
	return ids;
}

static void check_rows(const char *what, const void *got, const void *ref_rows, size_t rb, const int64_t *ids,
		       size_t n)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(memcmp((const char *)got + i * rb, (const char *)ref_rows + (size_t)ids[i] * rb, rb) == 0,
			  "%s: row %lld (position %zu) differs from the file", what, (long long)ids[i], i);
}

/* ------------------------------------------------------------ rows against the file */

static void rows_case(burrow_dtype t, int64_t dim)
{
	size_t esz = burrow_dtype_size(t), rbytes = (size_t)dim * esz;
	int64_t N = (int64_t)((2u << 20) / rbytes);
	if (N < 64)
		N = 64;
	char name[32];
	snprintf(name, sizeof name, "f_%zu", rbytes);
	char *path = make_file(name, t, N, dim, rbytes);
	size_t rb;
	char *all = ref_all(path, &rb);
	cr_assert_eq(rb, rbytes);
	const size_t n = 1500;
	int64_t *ids = mixed_ids(N, n, rbytes * 7);
	char *got = malloc(n * rb);
	/* defaults; then small reads (a 4100-byte row spans two pieces), odd threads and depth */
	const size_t max_reads[2] = {0, 4096};
	for (size_t e = 0; e < 3; e++)
		for (int m = 0; m < 2; m++) {
			burrow_store *s = open_store(path, ENGINES[e], m ? 5 : 0, m ? 3 : 0, max_reads[m]);
			memset(got, 0xa5, n * rb);
			cr_assert_eq(burrow_store_gather(s, ids, n, got), 0, "%s", burrow_last_error());
			char what[64];
			snprintf(what, sizeof what, "%zu-byte rows, %s, max read %zu", rb, burrow_store_engine_name(ENGINES[e]),
				 burrow_store_get_info(s)->max_read_bytes);
			check_rows(what, got, all, rb, ids, n);
			burrow_store_stats st = {.size = sizeof st};
			burrow_store_get_stats(s, &st);
			cr_assert_eq(st.rows, n);
			cr_assert_eq(st.cache_misses, n);
			cr_assert_eq(st.read_errors, 0);
			burrow_store_close(s);
		}
	free(got);
	free(ids);
	free(all);
	free(path);
}

Test(store, rows_4_bytes) { rows_case(BURROW_DTYPE_F32, 1); }
Test(store, rows_400_bytes) { rows_case(BURROW_DTYPE_F32, 100); }
Test(store, rows_512_bytes) { rows_case(BURROW_DTYPE_F32, 128); }
Test(store, rows_6_bytes_f16) { rows_case(BURROW_DTYPE_F16, 3); }
Test(store, rows_4100_bytes) { rows_case(BURROW_DTYPE_F32, 1025); }

Test(store, engines_give_identical_bytes)
{
	char *path = make_file("same", BURROW_DTYPE_F32, 3000, 100, 11);
	const size_t n = 2000;
	int64_t *ids = mixed_ids(3000, n, 5);
	char *out[3];
	for (int e = 0; e < 3; e++) {
		out[e] = malloc(n * 400);
		memset(out[e], e, n * 400);
		burrow_store *s = open_store(path, ENGINES[e], 0, 0, 0);
		cr_assert_eq(burrow_store_gather(s, ids, n, out[e]), 0, "%s", burrow_last_error());
		burrow_store_close(s);
	}
	cr_assert(memcmp(out[0], out[1], n * 400) == 0, "uring and pread differ");
	cr_assert(memcmp(out[0], out[2], n * 400) == 0, "uring and mmap differ");
	char row[400];
	ref_row(path, ids[7], row);
	cr_assert(memcmp(out[0] + 7 * 400, row, 400) == 0);
	for (int e = 0; e < 3; e++)
		free(out[e]);
	free(ids);
	free(path);
}

Test(store, float16_as_float32_and_back)
{
	char *p16 = make_file("h", BURROW_DTYPE_F16, 5000, 3, 21);
	char *p32 = make_file("f", BURROW_DTYPE_F32, 2000, 5, 22);
	size_t rb16, rb32;
	uint16_t *a16 = ref_all(p16, &rb16);
	float *a32 = ref_all(p32, &rb32);
	const size_t n = 700;
	int64_t *ids = mixed_ids(2000, n, 9);
	for (size_t e = 0; e < 3; e++) {
		burrow_store_opts o;
		burrow_store_defaults(&o);
		o.engine = ENGINES[e];
		o.out_dtype = BURROW_DTYPE_F32;
		burrow_store *s;
		cr_assert_eq(burrow_store_open(&s, p16, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_store_get_info(s)->out_row_bytes, 12);
		float *got = malloc(n * 12);
		cr_assert_eq(burrow_store_gather(s, ids, n, got), 0, "%s", burrow_last_error());
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < 3; k++) {
				float want = bw_f16_to_f32(a16[ids[i] * 3 + k]);
				cr_assert(memcmp(&got[i * 3 + k], &want, 4) == 0, "f16 -> f32: row %lld element %d",
					  (long long)ids[i], k);
			}
		free(got);
		burrow_store_close(s);

		o.out_dtype = BURROW_DTYPE_F16;
		cr_assert_eq(burrow_store_open(&s, p32, &o), 0, "%s", burrow_last_error());
		uint16_t *g16 = malloc(n * 10);
		cr_assert_eq(burrow_store_gather(s, ids, n, g16), 0, "%s", burrow_last_error());
		for (size_t i = 0; i < n; i++)
			for (int k = 0; k < 5; k++)
				cr_assert_eq(g16[i * 5 + k], bw_f32_to_f16(a32[ids[i] * 5 + k]), "f32 -> f16: row %lld",
					     (long long)ids[i]);
		free(g16);
		burrow_store_close(s);
	}
	free(ids);
	free(a16);
	free(a32);
	free(p16);
	free(p32);
}

/* ------------------------------------------------------------ refusals */

Test(store, out_of_range_id_names_it)
{
	char *path = make_file("r", BURROW_DTYPE_F32, 1000, 8, 3);
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(path, ENGINES[e], 0, 0, 0);
		float out[4 * 8];
		int64_t bad[4] = {5, 999, 1000, 2};
		cr_assert_eq(burrow_store_gather(s, bad, 4, out), BURROW_E_RANGE);
		cr_assert(strstr(burrow_last_error(), "1000") && strstr(burrow_last_error(), "position 2"), "message: %s",
			  burrow_last_error());
		int64_t neg[2] = {1, -7};
		burrow_store_ticket *t = (burrow_store_ticket *)1;
		cr_assert_eq(burrow_store_submit(s, neg, 2, out, &t), BURROW_E_RANGE);
		cr_assert_null(t);
		cr_assert(strstr(burrow_last_error(), "-7"), "message: %s", burrow_last_error());
		/* still usable */
		int64_t ok[2] = {999, 0};
		cr_assert_eq(burrow_store_gather(s, ok, 2, out), 0, "%s", burrow_last_error());
		float want[8];
		ref_row(path, 999, want);
		cr_assert(memcmp(out, want, sizeof want) == 0);
		cr_assert_eq(burrow_store_gather(s, NULL, 0, NULL), 0, "an empty gather is fine");
		burrow_store_close(s);
	}
	free(path);
}

Test(store, refuses_bad_files_and_options)
{
	burrow_store *s = (burrow_store *)1;
	char *missing = tu_path(dir, "nope.npy");
	cr_assert_eq(burrow_store_open(&s, missing, NULL), BURROW_E_NOTFOUND);
	cr_assert_null(s);
	char *p1 = tu_path(dir, "one.npy");
	int64_t shape1[1] = {10};
	int32_t v[10] = {0};
	cr_assert_eq(bw_npy_save(p1, BURROW_DTYPE_I32, 1, shape1, v, BW_NPY_ALIGN), 0);
	cr_assert_eq(burrow_store_open(&s, p1, NULL), BURROW_E_FORMAT);
	char *p2 = tu_path(dir, "ints.npy");
	int64_t shape2[2] = {5, 2};
	cr_assert_eq(bw_npy_save(p2, BURROW_DTYPE_I32, 2, shape2, v, BW_NPY_ALIGN), 0);
	burrow_store_opts o;
	burrow_store_defaults(&o);
	o.out_dtype = BURROW_DTYPE_F32;
	cr_assert_eq(burrow_store_open(&s, p2, &o), BURROW_E_UNSUPPORTED);
	o.out_dtype = BURROW_DTYPE_INVALID;
	o.queue_depth = 0;
	cr_assert_eq(burrow_store_open(&s, p2, &o), BURROW_E_INVAL);
	/* an int32 file with a 64-byte header gathers as it is */
	burrow_store_defaults(&o);
	cr_assert_eq(burrow_store_open(&s, p2, &o), 0, "%s", burrow_last_error());
	int64_t ids[2] = {4, 1};
	int32_t out[4] = {1, 1, 1, 1};
	cr_assert_eq(burrow_store_gather(s, ids, 2, out), 0, "%s", burrow_last_error());
	for (int i = 0; i < 4; i++)
		cr_assert_eq(out[i], 0);
	burrow_store_close(s);
	burrow_store_close(NULL);
	free(missing);
	free(p1);
	free(p2);
}

/* ------------------------------------------------------------ injected faults */

static _Atomic int64_t fault_off = -1; /* a read covering this file offset fails */
static atomic_int fault_kind;          /* 1: -EIO, 2: short read */
static atomic_int fault_hits;

static int64_t fault(int64_t off, size_t len, size_t need, int64_t res)
{
	int64_t f = atomic_load(&fault_off);
	if (f < off || f >= off + (int64_t)len)
		return res;
	atomic_fetch_add(&fault_hits, 1);
	if (atomic_load(&fault_kind) == 1)
		return -5; /* EIO */
	return res >= (int64_t)need ? (int64_t)need - 1 : res;
}

static void fault_case(int kind)
{
	char *path = make_file("flt", BURROW_DTYPE_F32, 4000, 100, 4);
	size_t rb;
	char *all = ref_all(path, &rb);
	bw_npy h;
	cr_assert_eq(bw_npy_open(path, &h, NULL), 0);
	const size_t n = 600;
	int64_t *bad = mixed_ids(2000, n, 17), *good = mixed_ids(2000, n, 18);
	for (size_t i = 0; i < n; i++)
		good[i] += 2000; /* rows 2000..3999: never near the faulty one */
	bad[100] = 1234;
	char *out = malloc(n * rb), *out2 = malloc(n * rb);
	bw_store_fault_hook = fault;
	atomic_store(&fault_kind, kind);
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(path, ENGINES[e], 8, 0, 0);
		atomic_store(&fault_off, h.data_offset + 1234 * (int64_t)rb + 5);
		atomic_store(&fault_hits, 0);
		cr_assert_eq(burrow_store_gather(s, bad, n, out), BURROW_E_IO, "%s: a failed read must fail the gather",
			     burrow_store_engine_name(ENGINES[e]));
		cr_assert(atomic_load(&fault_hits) >= 1);
		cr_assert(strstr(burrow_last_error(), kind == 1 ? "Input/output error" : "short read"), "message: %s",
			  burrow_last_error());
		burrow_store_stats st = {.size = sizeof st};
		burrow_store_get_stats(s, &st);
		cr_assert(st.read_errors >= 1);

		/* two tickets in flight: only the one holding the bad row fails */
		burrow_store_ticket *tb, *tg;
		cr_assert_eq(burrow_store_submit(s, bad, n, out, &tb), 0);
		cr_assert_eq(burrow_store_submit(s, good, n, out2, &tg), 0);
		int r;
		while ((r = burrow_store_poll(s, tg)) == 0)
			usleep(100);
		cr_assert_eq(r, BURROW_DONE, "%s", burrow_last_error());
		check_rows("good ticket beside a failing one", out2, all, rb, good, n);
		while ((r = burrow_store_poll(s, tb)) == 0)
			usleep(100);
		cr_assert_eq(r, BURROW_E_IO);

		/* and the store goes on working once the disk does */
		atomic_store(&fault_off, -1);
		memset(out, 0, n * rb);
		cr_assert_eq(burrow_store_gather(s, bad, n, out), 0, "%s", burrow_last_error());
		check_rows("after a fault", out, all, rb, bad, n);
		burrow_store_close(s);
	}
	bw_store_fault_hook = NULL;
	free(out);
	free(out2);
	free(bad);
	free(good);
	free(all);
	free(path);
}

Test(store, read_error_fails_the_gather_only) { fault_case(1); }
Test(store, short_read_fails_the_gather_only) { fault_case(2); }

static atomic_int warnings;
static void count_warn(int level, const char *msg, void *user)
{
	(void)user;
	if (level == BURROW_LOG_WARN && strstr(msg, "io_uring") && strstr(msg, "pread"))
		atomic_fetch_add(&warnings, 1);
}

Test(store, falls_back_to_pread_with_one_warning)
{
	char *path = make_file("fb", BURROW_DTYPE_F32, 500, 16, 8);
	burrow_log_set(count_warn, NULL, BURROW_LOG_DEBUG);
	bw_store_uring_refuse = true;
	burrow_store *s;
	cr_assert_eq(burrow_store_open(&s, path, NULL), 0, "%s", burrow_last_error());
	bw_store_uring_refuse = false;
	burrow_log_set(NULL, NULL, BURROW_LOG_INFO);
	cr_assert_eq(burrow_store_get_info(s)->engine, BURROW_STORE_PREAD);
	cr_assert_eq(atomic_load(&warnings), 1);
	size_t rb;
	char *all = ref_all(path, &rb);
	int64_t *ids = mixed_ids(500, 300, 1);
	char *out = malloc(300 * rb);
	cr_assert_eq(burrow_store_gather(s, ids, 300, out), 0, "%s", burrow_last_error());
	check_rows("pread fallback", out, all, rb, ids, 300);
	burrow_store_close(s);
	free(out);
	free(ids);
	free(all);
	free(path);
}

/* ------------------------------------------------------------ reads per row */

Test(store, rows_of_400_bytes_take_one_read_each_at_most)
{
	const int64_t N = 20000;
	char *path = make_file("r400", BURROW_DTYPE_F32, N, 100, 12);
	burrow_store *s = open_store(path, BURROW_STORE_URING, 0, 0, 0);
	const burrow_store_info *in = burrow_store_get_info(s);
	const int64_t A = (int64_t)in->block_bytes;
	/* distinct random rows */
	const size_t n = 3000;
	int64_t *ids = malloc(n * sizeof *ids);
	char *seen = calloc((size_t)N, 1);
	uint64_t x = 77;
	for (size_t i = 0; i < n;) {
		int64_t v = (int64_t)(rnd(&x) % (uint64_t)N);
		if (!seen[v]) {
			seen[v] = 1;
			ids[i++] = v;
		}
	}
	char *out = malloc(n * 400);
	cr_assert_eq(burrow_store_gather(s, ids, n, out), 0, "%s", burrow_last_error());
	burrow_store_stats st = {.size = sizeof st};
	burrow_store_get_stats(s, &st);
	uint64_t bound = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t ro = in->data_offset + ids[i] * 400;
		bound += (uint64_t)((ro + 400 + A - 1) / A * A - ro / A * A);
	}
	cr_assert_eq(st.rows_read, n);
	cr_assert(st.reads <= n, "%llu reads for %zu rows", (unsigned long long)st.reads, n);
	cr_assert(st.bytes_read <= bound, "%llu bytes read, rows rounded out to blocks make %llu",
		  (unsigned long long)st.bytes_read, (unsigned long long)bound);

	/* a dense run merges: 1000 neighbouring rows, 400 KB, in a few 64 KiB reads */
	burrow_store_reset_stats(s);
	for (size_t i = 0; i < 1000; i++)
		ids[i] = 5000 + (int64_t)(999 - i);
	cr_assert_eq(burrow_store_gather(s, ids, 1000, out), 0);
	burrow_store_get_stats(s, &st);
	uint64_t most = (1000 * 400) / in->max_read_bytes + 2;
	cr_assert(st.reads <= most, "%llu reads for a run of 1000 rows (expected <= %llu)",
		  (unsigned long long)st.reads, (unsigned long long)most);
	burrow_store_close(s);
	free(out);
	free(seen);
	free(ids);
	free(path);
}

/* ------------------------------------------------------------ tickets */

Test(store, many_tickets_in_flight_are_independent)
{
	char *path = make_file("tk", BURROW_DTYPE_F32, 8000, 32, 13);
	size_t rb;
	char *all = ref_all(path, &rb);
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(path, ENGINES[e], 4, 0, 0);
		enum { T = 8, n = 900 };
		int64_t *ids[T];
		char *out[T];
		burrow_store_ticket *t[T];
		for (int k = 0; k < T; k++) {
			ids[k] = mixed_ids(8000, n, 100 + (uint64_t)k);
			out[k] = malloc(n * rb);
			cr_assert_eq(burrow_store_submit(s, ids[k], n, out[k], &t[k]), 0, "%s", burrow_last_error());
		}
		for (int k = T - 1; k >= 0; k--) {
			if (k % 2) {
				cr_assert_eq(burrow_store_wait(s, t[k]), 0, "%s", burrow_last_error());
			} else {
				int r;
				while ((r = burrow_store_poll(s, t[k])) == 0)
					usleep(50);
				cr_assert_eq(r, BURROW_DONE, "%s", burrow_last_error());
			}
			check_rows("ticket", out[k], all, rb, ids[k], n);
		}
		/* tickets left in flight are finished and freed by close */
		cr_assert_eq(burrow_store_submit(s, ids[0], n, out[0], &t[0]), 0);
		cr_assert_eq(burrow_store_submit(s, ids[1], n, out[1], &t[1]), 0);
		burrow_store_close(s);
		for (int k = 0; k < T; k++) {
			free(ids[k]);
			free(out[k]);
		}
	}
	free(all);
	free(path);
}

Test(store, out_of_memory_fails_cleanly)
{
	char *path = make_file("oom", BURROW_DTYPE_F32, 2000, 16, 14);
	size_t rb;
	char *all = ref_all(path, &rb);
	int64_t *ids = mixed_ids(2000, 500, 3);
	char *out = malloc(500 * rb);
	for (size_t e = 0; e < 3; e++) {
		size_t base;
		burrow_mem_stats(&base, NULL);
		burrow_store *s = NULL;
		int st = 0;
		for (long k = 0; k < 200; k++) { /* fail the k-th allocation of open, then of a gather */
			bw_mem_fail_after(k);
			burrow_store_opts o;
			burrow_store_defaults(&o);
			o.engine = ENGINES[e];
			st = burrow_store_open(&s, path, &o);
			bw_mem_fail_after(-1);
			if (st == 0)
				break;
			cr_assert_eq(st, BURROW_E_NOMEM, "open: %s", burrow_last_error());
			cr_assert_null(s);
			size_t cur;
			burrow_mem_stats(&cur, NULL);
			cr_assert_eq(cur, base, "open leaked %zu bytes after failing allocation %ld", cur - base, k);
		}
		cr_assert_eq(st, 0);
		cr_assert_eq(burrow_store_cache_clock(s, 64 << 10), 0);
		size_t before;
		burrow_mem_stats(&before, NULL);
		for (long k = 0; k < 200; k++) {
			bw_mem_fail_after(k);
			st = burrow_store_gather(s, ids, 500, out);
			bw_mem_fail_after(-1);
			if (st == 0)
				break;
			cr_assert_eq(st, BURROW_E_NOMEM, "gather: %s", burrow_last_error());
			size_t cur;
			burrow_mem_stats(&cur, NULL);
			cr_assert_eq(cur, before, "gather leaked after failing allocation %ld", k);
		}
		cr_assert_eq(st, 0);
		check_rows("after allocation failures", out, all, rb, ids, 500);
		burrow_store_close(s);
		size_t cur;
		burrow_mem_stats(&cur, NULL);
		cr_assert_eq(cur, base, "close left %zu bytes", cur - base);
	}
	free(out);
	free(ids);
	free(all);
	free(path);
}

/* ------------------------------------------------------------ caches */

/* The reference CLOCK: slots in insertion order, a hand, linear search. */
typedef struct ref_clock {
	size_t cap, count, hand;
	int64_t *id;
	char *bit;
} ref_clock;

static long ref_find(const ref_clock *c, int64_t id)
{
	for (size_t i = 0; i < c->count; i++)
		if (c->id[i] == id)
			return (long)i;
	return -1;
}

static void ref_put(ref_clock *c, int64_t id)
{
	if (ref_find(c, id) >= 0)
		return;
	size_t slot;
	if (c->count < c->cap) {
		slot = c->count++;
	} else {
		while (c->bit[c->hand]) {
			c->bit[c->hand] = 0;
			c->hand = (c->hand + 1) % c->cap;
		}
		slot = c->hand;
		c->hand = (c->hand + 1) % c->cap;
	}
	c->id[slot] = id;
	c->bit[slot] = 0;
}

Test(store, clock_cache_counts_match_a_reference)
{
	const int64_t N = 3000;
	char *path = make_file("ck", BURROW_DTYPE_F32, N, 16, 15);
	size_t rb;
	char *all = ref_all(path, &rb);
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(path, ENGINES[e], 0, 0, 0);
		const size_t budget = 8 << 10;
		size_t m0, m1;
		burrow_mem_stats(&m0, NULL);
		cr_assert_eq(burrow_store_cache_clock(s, budget), 0, "%s", burrow_last_error());
		burrow_mem_stats(&m1, NULL);
		burrow_store_stats st = {.size = sizeof st};
		burrow_store_get_stats(s, &st);
		cr_assert(m1 - m0 <= budget, "the cache took %zu bytes of a %zu budget", m1 - m0, budget);
		cr_assert_eq(st.cache_bytes, m1 - m0, "the cache's own count disagrees with the allocator");
		cr_assert(st.cache_capacity * rb <= budget && st.cache_capacity >= budget / (rb + 32),
			  "capacity %llu rows", (unsigned long long)st.cache_capacity);

		ref_clock rc = {.cap = st.cache_capacity};
		rc.id = malloc(rc.cap * sizeof *rc.id);
		rc.bit = calloc(rc.cap, 1);
		uint64_t hits = 0, misses = 0, x = 99;
		const size_t n = 60;
		int64_t ids[60], miss[60];
		char *out = malloc(n * rb);
		for (int b = 0; b < 80; b++) {
			size_t nm = 0;
			for (size_t i = 0; i < n; i++) {
				uint64_t r = rnd(&x) % 1000;
				ids[i] = (int64_t)((r * r / 1000 * 7) % (uint64_t)N); /* skewed towards a few rows */
				long slot = ref_find(&rc, ids[i]);
				if (slot >= 0) {
					rc.bit[slot] = 1;
					hits++;
				} else {
					misses++;
					miss[nm++] = ids[i];
				}
			}
			cr_assert_eq(burrow_store_gather(s, ids, n, out), 0, "%s", burrow_last_error());
			check_rows("clock cache", out, all, rb, ids, n);
			qsort(miss, nm, sizeof *miss, bw_cmp_i64);
			for (size_t i = 0; i < nm; i++)
				ref_put(&rc, miss[i]);
			burrow_store_get_stats(s, &st);
			cr_assert_eq(st.cache_hits, hits, "batch %d: %llu hits, reference %llu", b,
				     (unsigned long long)st.cache_hits, (unsigned long long)hits);
			cr_assert_eq(st.cache_misses, misses);
			cr_assert_eq(st.cache_rows, rc.count);
		}
		cr_assert(hits > 0 && misses > 0);
		burrow_store_close(s);
		free(out);
		free(rc.id);
		free(rc.bit);
	}
	free(all);
	free(path);
}

typedef struct kv_ref {
	uint64_t key;
	int64_t id;
} kv_ref;

static int cmp_kv(const void *a, const void *b)
{
	const kv_ref *x = a, *y = b;
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Gather every row once and check the hits are exactly the expected set. */
static void check_static(burrow_store *s, const uint64_t *key, int64_t N, const char *all, size_t rb)
{
	burrow_store_stats st = {.size = sizeof st};
	burrow_store_get_stats(s, &st);
	cr_assert_eq(st.rows, 0, "filling a static cache is not a gather");
	/* reference: sort by key desc, id asc; take the capacity's worth of non-zero keys */
	kv_ref *r = malloc((size_t)N * sizeof *r);
	for (int64_t v = 0; v < N; v++)
		r[v] = (kv_ref){key[v], v};
	qsort(r, (size_t)N, sizeof *r, cmp_kv);
	char *in = calloc((size_t)N, 1);
	uint64_t k = 0;
	for (int64_t i = 0; i < N && k < st.cache_capacity && r[i].key > 0; i++, k++)
		in[r[i].id] = 1;
	cr_assert(k > 0);
	cr_assert_eq(st.cache_rows, k);
	int64_t *ids = malloc((size_t)N * sizeof *ids);
	uint64_t x = 5;
	for (int64_t v = 0; v < N; v++)
		ids[v] = v;
	for (int64_t v = N - 1; v > 0; v--) {
		int64_t j = (int64_t)(rnd(&x) % (uint64_t)(v + 1)), t = ids[v];
		ids[v] = ids[j];
		ids[j] = t;
	}
	/* in two halves, so each half's hits can be counted against the set */
	char *out = malloc((size_t)N * rb);
	for (int h = 0; h < 2; h++) {
		int64_t lo = h * (N / 2), hi = h ? N : N / 2;
		uint64_t want = 0;
		for (int64_t i = lo; i < hi; i++)
			want += in[ids[i]];
		burrow_store_reset_stats(s);
		cr_assert_eq(burrow_store_gather(s, ids + lo, (size_t)(hi - lo), out), 0, "%s", burrow_last_error());
		check_rows("static cache", out, all, rb, ids + lo, (size_t)(hi - lo));
		burrow_store_get_stats(s, &st);
		cr_assert_eq(st.cache_hits, want);
		cr_assert_eq(st.cache_misses, (uint64_t)(hi - lo) - want);
	}
	free(out);
	free(ids);
	free(in);
	free(r);
}

Test(store, static_caches_hold_the_top_rows)
{
	const int64_t N = 2000;
	char *path = make_file("st", BURROW_DTYPE_F32, N, 24, 16);
	size_t rb;
	char *all = ref_all(path, &rb);
	/* a graph with random degrees (many ties and zeros) */
	int64_t *indptr = malloc((size_t)(N + 1) * sizeof *indptr);
	uint64_t *deg = malloc((size_t)N * sizeof *deg), *prof = malloc((size_t)N * sizeof *prof), x = 3;
	indptr[0] = 0;
	for (int64_t v = 0; v < N; v++) {
		deg[v] = rnd(&x) % 4 == 0 ? 0 : rnd(&x) % 30;
		prof[v] = rnd(&x) % 3 == 0 ? 0 : rnd(&x) % 1000;
		indptr[v + 1] = indptr[v] + (int64_t)deg[v];
	}
	int32_t *indices = calloc((size_t)indptr[N] + 1, sizeof *indices);
	burrow_csr g = {.num_nodes = N, .num_edges = indptr[N], .indptr = indptr, .indices = indices, .index_width = 4};
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(path, ENGINES[e], 0, 0, 0);
		const size_t budget = 16 << 10;
		size_t m0, m1;
		burrow_mem_stats(&m0, NULL);
		burrow_store_reset_stats(s);
		cr_assert_eq(burrow_store_cache_degree(s, &g, budget), 0, "%s", burrow_last_error());
		burrow_mem_stats(&m1, NULL);
		cr_assert(m1 - m0 <= budget, "the cache took %zu bytes of a %zu budget", m1 - m0, budget);
		check_static(s, deg, N, all, rb);
		burrow_store_reset_stats(s);
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, budget), 0, "%s", burrow_last_error());
		check_static(s, prof, N, all, rb);
		/* room for every row: exactly the rows with a non-zero count */
		burrow_store_reset_stats(s);
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, (size_t)N * (rb + 64)), 0, "%s", burrow_last_error());
		check_static(s, prof, N, all, rb);
		/* a budget under one row caches nothing and everything still works */
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, 40), 0);
		burrow_store_stats st = {.size = sizeof st};
		burrow_store_get_stats(s, &st);
		cr_assert_eq(st.cache_capacity, 0);
		cr_assert_eq(burrow_store_cache_profile(s, prof, N - 1, budget), BURROW_E_INVAL);
		/* no cache change with a gather in flight */
		burrow_store_ticket *t;
		int64_t one = 7;
		char row[96];
		cr_assert_eq(burrow_store_submit(s, &one, 1, row, &t), 0);
		cr_assert_eq(burrow_store_cache_clock(s, budget), BURROW_E_INVAL);
		cr_assert_eq(burrow_store_wait(s, t), 0);
		cr_assert_eq(burrow_store_cache_drop(s), 0);
		burrow_store_close(s);
	}
	free(indices);
	free(indptr);
	free(deg);
	free(prof);
	free(all);
	free(path);
}

/* ------------------------------------------------------------ sequential cache fill */

/* Gather every row (shuffled) through s and through a store without a cache (the engine's
 * own reads); both must equal the file, byte for byte, as the slow per-row pread says when
 * the rows are not converted (all != NULL). */
static void check_all_rows(burrow_store *s, burrow_store *plain, int64_t N, const char *all, size_t rb)
{
	int64_t *ids = malloc((size_t)N * sizeof *ids);
	uint64_t x = 9;
	for (int64_t v = 0; v < N; v++)
		ids[v] = v;
	for (int64_t v = N - 1; v > 0; v--) {
		int64_t j = (int64_t)(rnd(&x) % (uint64_t)(v + 1)), t = ids[v];
		ids[v] = ids[j];
		ids[j] = t;
	}
	const size_t orb = burrow_store_get_info(s)->out_row_bytes;
	char *a = malloc((size_t)N * orb), *b = malloc((size_t)N * orb);
	cr_assert_eq(burrow_store_gather(s, ids, (size_t)N, a), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_store_gather(plain, ids, (size_t)N, b), 0, "%s", burrow_last_error());
	cr_assert(memcmp(a, b, (size_t)N * orb) == 0, "the cached store's rows differ from the engine's");
	if (all)
		check_rows("sequentially filled cache", a, all, rb, ids, (size_t)N);
	free(a);
	free(b);
	free(ids);
}

/* A cache holding most rows is filled by one pass over the file (several chunks, rows that
 * straddle blocks and chunks, gaps of uncached rows, float16 converted on the way), a cache of
 * a few rows by the engine's reads; both give the file's bytes, and the store says which. */
static void seq_fill_case(burrow_dtype t, burrow_dtype out, int64_t N, int64_t dim)
{
	char *path = make_file("seq", t, N, dim, 21);
	size_t rb;
	char *all = t == out ? ref_all(path, &rb) : NULL;
	uint64_t *prof = malloc((size_t)N * sizeof *prof), x = 8;
	int64_t nz = 0;
	for (int64_t v = 0; v < N; v++) {
		prof[v] = rnd(&x) % 5 == 0 ? 0 : 1 + rnd(&x) % 100; /* about 80% cached, in runs and gaps */
		nz += prof[v] != 0;
	}
	for (size_t e = 0; e < 3; e++) {
		burrow_store_opts o;
		burrow_store_defaults(&o);
		o.engine = ENGINES[e];
		o.out_dtype = out;
		burrow_store *s, *plain;
		cr_assert_eq(burrow_store_open(&s, path, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_store_open(&plain, path, &o), 0, "%s", burrow_last_error());
		const burrow_store_info *in = burrow_store_get_info(s);
		cr_assert_eq(in->cache_fill, BURROW_FILL_NONE);
		const size_t orb = in->out_row_bytes;
		/* every row with a count: most of the file, one pass */
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, (size_t)N * (orb + 64)), 0, "%s", burrow_last_error());
		cr_assert_eq(in->cache_fill, BURROW_FILL_SEQUENTIAL, "%s", burrow_store_engine_name(ENGINES[e]));
		const uint64_t span = (uint64_t)(in->data_offset + N * (int64_t)in->row_bytes) / 2;
		cr_assert(in->cache_fill_bytes >= span, "a pass over the file read %llu bytes",
			  (unsigned long long)in->cache_fill_bytes);
		burrow_store_stats st = {.size = sizeof st};
		burrow_store_get_stats(s, &st);
		cr_assert_eq(st.cache_rows, (uint64_t)nz);
		check_all_rows(s, plain, N, all, rb);
		/* a tenth of the rows: the engine's reads */
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, (size_t)(N / 10) * (orb + 64)), 0, "%s",
			     burrow_last_error());
		cr_assert_eq(in->cache_fill, BURROW_FILL_RANDOM);
		burrow_store_get_stats(s, &st);
		cr_assert(st.cache_rows > 0 && st.cache_rows < (uint64_t)N / 2);
		check_all_rows(s, plain, N, all, rb);
		burrow_store_close(plain);
		burrow_store_close(s);
	}
	free(prof);
	free(all);
	free(path);
}

/* 9.6 MB: more than one BW_SEQ_CHUNK; 148-byte rows straddle blocks and chunk ends */
Test(store, sequential_fill_f32_many_chunks) { seq_fill_case(BURROW_DTYPE_F32, BURROW_DTYPE_F32, 16000, 150); }
Test(store, sequential_fill_rows_straddle_blocks) { seq_fill_case(BURROW_DTYPE_F32, BURROW_DTYPE_F32, 30000, 37); }
Test(store, sequential_fill_rows_longer_than_a_block) { seq_fill_case(BURROW_DTYPE_F32, BURROW_DTYPE_F32, 3000, 1100); }
Test(store, sequential_fill_f16_as_f32) { seq_fill_case(BURROW_DTYPE_F16, BURROW_DTYPE_F32, 20000, 99); }

/* A failing or short read during the pass fails the fill with the file's name and offset,
 * leaves no cache, and the store goes on serving rows from the file. */
static void seq_fault_case(int kind)
{
	const int64_t N = 16000, dim = 150;
	char *path = make_file("seqf", BURROW_DTYPE_F32, N, dim, 22);
	size_t rb;
	char *all = ref_all(path, &rb);
	bw_npy h;
	cr_assert_eq(bw_npy_open(path, &h, NULL), 0);
	uint64_t *prof = malloc((size_t)N * sizeof *prof);
	for (int64_t v = 0; v < N; v++)
		prof[v] = 1;
	bw_store_fault_hook = fault;
	atomic_store(&fault_kind, kind);
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(path, ENGINES[e], 0, 0, 0), *plain = open_store(path, ENGINES[e], 0, 0, 0);
		atomic_store(&fault_off, h.data_offset + 15000 * (int64_t)rb + 5); /* past the first chunk */
		atomic_store(&fault_hits, 0);
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, (size_t)N * (rb + 64)), BURROW_E_IO);
		cr_assert_eq(atomic_load(&fault_hits), 1);
		cr_assert(strstr(burrow_last_error(), kind == 1 ? "Input/output error" : "short read"), "message: %s",
			  burrow_last_error());
		cr_assert(strstr(burrow_last_error(), path), "message: %s", burrow_last_error());
		burrow_store_stats st = {.size = sizeof st};
		burrow_store_get_stats(s, &st);
		cr_assert_eq(st.cache_rows, 0);
		cr_assert(st.read_errors >= 1);
		atomic_store(&fault_off, -1);
		check_all_rows(s, plain, N, all, rb);
		burrow_store_close(plain);
		burrow_store_close(s);
	}
	bw_store_fault_hook = NULL;
	free(prof);
	free(all);
	free(path);
}

Test(store, sequential_fill_read_error) { seq_fault_case(1); }
Test(store, sequential_fill_short_read) { seq_fault_case(2); }

/* ------------------------------------------------------------ the memory bound (docs/store.md)
 *
 * The bench io regression: a dataset's open scanned its offsets, labels and splits through
 * their mappings and left every page resident (340 MB at 2^24 nodes before the first row was
 * gathered), so a gather's peak RSS stood far above the documented bound. The dataset's
 * arrays here are large enough that leaving them resident breaks the bound's slack. */

static long long status_kb(const char *key)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long long v = -1;
	size_t k = strlen(key);
	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, key, k) && line[k] == ':')
			v = atoll(line + k + 1);
	if (f)
		fclose(f);
	return v;
}

/* A dataset of n nodes, no edges, dim float32 features (zeros), labels
 * and a 60/20/20 split: what opening it scans is (n + 1) * 8 + n * 4 + n * 8 bytes. Written
 * by a child so that this process's peak RSS starts low. */
static void hollow_dataset(const char *d, int64_t n, int64_t dim)
{
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int64_t *i64 = calloc((size_t)n + 1, sizeof *i64);
		int32_t *lab = malloc((size_t)n * sizeof *lab);
		for (int64_t v = 0; v < n; v++) {
			lab[v] = (int32_t)(v % 5);
		}
		char *p = tu_path(d, "indptr.npy");
		int64_t sh[2] = {n + 1, dim};
		int ok = mkdir(d, 0755) == 0 && mkdir(tu_path(d, "split"), 0755) == 0 &&
			 bw_npy_save(p, BURROW_DTYPE_I64, 1, sh, i64, BW_NPY_ALIGN) == 0;
		sh[0] = 0;
		ok = ok && bw_npy_save(tu_path(d, "indices.npy"), BURROW_DTYPE_I32, 1, sh, i64, BW_NPY_ALIGN) == 0;
		sh[0] = n;
		ok = ok && bw_npy_save(tu_path(d, "labels.npy"), BURROW_DTYPE_I32, 1, sh, lab, BW_NPY_ALIGN) == 0;
		const int64_t cut[4] = {0, n * 6 / 10, n * 8 / 10, n};
		for (int s = 0; s < 3 && ok; s++) {
			for (int64_t v = cut[s]; v < cut[s + 1]; v++)
				i64[v - cut[s]] = v;
			sh[0] = cut[s + 1] - cut[s];
			ok = bw_npy_save(tu_path(d, "split/%s.npy", bw_split_names[s]), BURROW_DTYPE_I64, 1, sh, i64, BW_NPY_ALIGN) == 0;
		}
		bw_npy_writer w;
		const int64_t fsh[2] = {n, dim};
		ok = ok && bw_npy_writer_open(&w, tu_path(d, "features.npy"), BURROW_DTYPE_F32, 2, fsh,
					      BW_NPY_FEATURE_ALIGN) == 0;
		memset(lab, 0, (size_t)n * sizeof *lab);
		for (int64_t left = n * dim * 4; ok && left > 0; left -= n * 4)
			ok = bw_npy_writer_append(&w, lab, (size_t)n * 4) == 0;
		ok = ok && bw_npy_writer_commit(&w) == 0;
		FILE *m = fopen(tu_path(d, "meta.json"), "w");
		ok = ok && m && fprintf(m, "{\"format\": \"burrow-dataset\", \"version\": 1, \"name\": \"hollow\", "
					   "\"num_nodes\": %lld, \"num_edges\": 0, \"index_dtype\": \"int32\", \"feat_dim\": %lld, "
					   "\"feat_dtype\": \"float32\", \"num_classes\": 5, \"symmetric\": true, \"splits\": "
					   "{\"train\": %lld, \"valid\": %lld, \"test\": %lld}}\n",
					   (long long)n, (long long)dim, (long long)(cut[1]), (long long)(cut[2] - cut[1]),
					   (long long)(cut[3] - cut[2])) > 0;
		if (m)
			fclose(m);
		if (!ok)
			fprintf(stderr, "hollow dataset: %s\n", burrow_last_error());
		_exit(ok ? 0 : 1);
	}
	int ws;
	cr_assert_eq(waitpid(pid, &ws, 0), pid);
	cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "writing the hollow dataset failed");
}

Test(store, a_gathers_resident_memory_stays_within_the_documented_bound)
{
#if defined(__SANITIZE_ADDRESS__)
	cr_skip_test("AddressSanitizer build: its shadow and quarantine count in the RSS");
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
	cr_skip_test("AddressSanitizer build: its shadow and quarantine count in the RSS");
#endif
#endif
	const int64_t n = (int64_t)1 << 21, dim = 4; /* the open scans 40 MiB */
	char *d = tu_path(dir, "hollow");
	hollow_dataset(d, n, dim);
	const long long before = status_kb("VmRSS");
	cr_assert_gt(before, 0, "no /proc/self/status");

	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	burrow_store_opts o;
	burrow_store_defaults(&o);
	burrow_store *s;
	cr_assert_eq(burrow_store_open(&s, burrow_dataset_features_path(ds), &o), 0, "%s", burrow_last_error());
	const size_t budget = (size_t)4 << 20;
	cr_assert_eq(burrow_store_cache_clock(s, budget), 0, "%s", burrow_last_error());
	const burrow_store_info *in = burrow_store_get_info(s);
	enum { B = 4096, K = 2, ROUNDS = 40 };
	int64_t *ids = malloc(K * B * sizeof *ids);
	char *out = malloc(K * B * in->out_row_bytes);
	memset(out, 0, K * B * in->out_row_bytes); /* the caller's buffers, resident before the count */
	memset(ids, 0, K * B * sizeof *ids);
	const long long base = status_kb("VmRSS");
	uint64_t x = 7;
	for (int r = 0; r < ROUNDS; r++) {
		burrow_store_ticket *t[K];
		for (int k = 0; k < K; k++) {
			for (int i = 0; i < B; i++)
				ids[k * B + i] = (int64_t)(rnd(&x) % (uint64_t)n);
			cr_assert_eq(burrow_store_submit(s, ids + k * B, B, out + (size_t)k * B * in->out_row_bytes, &t[k]), 0);
		}
		for (int k = 0; k < K; k++)
			cr_assert_eq(burrow_store_wait(s, t[k]), 0, "%s", burrow_last_error());
	}
	/* docs/store.md's bound: the cache, the staging, K plans of (16 n + 4 u + 24 r), the sort's
	 * 16 m, then threads' rings and stacks: 4 MiB of slack for those and the allocator's */
	const long long bound_kb =
		(long long)((budget + in->staging_bytes + (size_t)K * B * (16 + 4 + 24) + 16 * (size_t)B) >> 10) + 4096;
	const long long peak = status_kb("VmHWM"), now = status_kb("VmRSS");
	cr_log_info("RSS: %lld KiB before the open, %lld KiB after the opens, %lld KiB after %d gathers, "
		    "peak %lld KiB; bound %lld KiB", before, base, now, K * ROUNDS, peak, bound_kb);
	cr_expect_leq(now - before, bound_kb, "resident memory grew %lld KiB, the bound is %lld KiB", now - before,
		      bound_kb);
	cr_expect_leq(peak - before, bound_kb + (base - before), "peak RSS %lld KiB above the start, bound %lld KiB",
		      peak - before, bound_kb);
	burrow_store_close(s);
	burrow_dataset_close(ds);
	free(ids);
	free(out);
	free(d);
}
