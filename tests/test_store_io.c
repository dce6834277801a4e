/* test_store_io.c: what the feature store says it read (rows, requests, 4 KiB pages, bytes)
 * against a slow reference from the rows' offsets, and a float16 file's cache holding rows as
 * stored: twice the rows in a budget, the same bytes served as without a cache. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/half.h"
#include "../graph/npy.h"
#include "../graph/store_internal.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(store_io, .init = setup, .fini = teardown, .timeout = 120);

static const int ENGINES[] = {BURROW_STORE_URING, BURROW_STORE_PREAD, BURROW_STORE_MMAP};

static uint64_t rnd(uint64_t *x)
{
	*x += 0x9E3779B97F4A7C15ull;
	uint64_t z = *x;
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A features file [n, dim] of dtype t with random bytes; for float16 its first 65536 elements
 * are every bit pattern in order (NaNs with payloads, signalling ones, subnormals, infinities). */
static char *make_file(const char *name, burrow_dtype t, int64_t n, int64_t dim, uint64_t seed)
{
	const size_t count = (size_t)(n * dim), bytes = count * burrow_dtype_size(t);
	unsigned char *d = malloc(bytes);
	for (size_t i = 0; i < bytes; i++)
		d[i] = (unsigned char)rnd(&seed);
	if (t == BURROW_DTYPE_F16)
		for (size_t i = 0; i < count && i < 65536; i++) {
			const uint16_t h = (uint16_t)i;
			memcpy(d + 2 * i, &h, 2);
		}
	char *p = tu_path(dir, "%s.npy", name);
	int64_t shape[2] = {n, dim};
	cr_assert_eq(bw_npy_save(p, t, 2, shape, d, BW_NPY_FEATURE_ALIGN), 0, "%s", burrow_last_error());
	free(d);
	return p;
}

static burrow_store *open_store(const char *path, int engine, burrow_dtype out, size_t max_read)
{
	burrow_store_opts o;
	burrow_store_defaults(&o);
	o.engine = engine;
	o.out_dtype = out;
	if (max_read)
		o.max_read_bytes = max_read;
	burrow_store *s;
	cr_assert_eq(burrow_store_open(&s, path, &o), 0, "%s", burrow_last_error());
	return s;
}

/* ------------------------------------------------------------ what a gather reads */

/* The reference, slow and obvious: the distinct ids not in `cached` (NULL: none) are the rows
 * read; each covers the blocks of A bytes from the one holding its first byte to the one
 * holding its last; pages are the 4 KiB pages those blocks lie in, each once; bytes, the
 * blocks' total (the least the reads can ask for) and the rows' own blocks summed (the most). */
typedef struct ref_io {
	uint64_t rows, pages, bytes_lo, bytes_hi;
} ref_io;

static ref_io reference(const burrow_store_info *in, const int64_t *ids, size_t n, const char *cached)
{
	const int64_t A = (int64_t)in->block_bytes, rb = (int64_t)in->row_bytes, base = in->data_offset;
	const int64_t nblocks = (base + in->num_rows * rb + A - 1) / A, npages = nblocks * A / 4096 + 1;
	char *row = calloc((size_t)in->num_rows, 1), *block = calloc((size_t)nblocks, 1), *page = calloc((size_t)npages, 1);
	ref_io r = {0};
	for (size_t i = 0; i < n; i++) {
		if ((cached && cached[ids[i]]) || row[ids[i]])
			continue;
		row[ids[i]] = 1;
		r.rows++;
		const int64_t b0 = (base + ids[i] * rb) / A, b1 = (base + (ids[i] + 1) * rb - 1) / A;
		r.bytes_hi += (uint64_t)((b1 - b0 + 1) * A);
		for (int64_t b = b0; b <= b1; b++)
			block[b] = 1;
	}
	for (int64_t b = 0; b < nblocks; b++)
		if (block[b]) {
			r.bytes_lo += (uint64_t)A;
			for (int64_t p = b * A / 4096; p <= ((b + 1) * A - 1) / 4096; p++)
				page[p] = 1;
		}
	for (int64_t p = 0; p < npages; p++)
		r.pages += page[p] != 0;
	free(row);
	free(block);
	free(page);
	return r;
}

/* Gathers of random ids (repeats, neighbours, first and last rows) on a file of the given rows,
 * each engine, reads of at most max_read bytes (0: the default), a static cache of `ncached`
 * rows: the store's counters equal the reference's rows and pages, and its bytes lie between the
 * reference's bounds; without row splits, a request per row at most. */
static void io_case(burrow_dtype t, int64_t N, int64_t dim, size_t max_read, int64_t ncached)
{
	char *path = make_file("io", t, N, dim, 31);
	uint64_t *prof = calloc((size_t)N, sizeof *prof), x = 4;
	char *cached = calloc((size_t)N, 1);
	for (int64_t k = 0; k < ncached;) { /* ncached distinct rows with a count: the cache holds them all */
		const int64_t v = (int64_t)(rnd(&x) % (uint64_t)N);
		if (!prof[v]) {
			prof[v] = 1 + rnd(&x) % 9;
			cached[v] = 1;
			k++;
		}
	}
	const size_t n = 1500;
	int64_t *ids = malloc(n * sizeof *ids);
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(path, ENGINES[e], BURROW_DTYPE_F32, max_read);
		const burrow_store_info *in = burrow_store_get_info(s);
		if (ncached)
			cr_assert_eq(burrow_store_cache_profile(s, prof, N, (size_t)(ncached + 16) * (in->cache_row_bytes + 40)), 0,
				     "%s", burrow_last_error());
		char *out = malloc(n * in->out_row_bytes);
		for (int round = 0; round < 4; round++) {
			for (size_t i = 0; i < n; i++)
				ids[i] = (int64_t)(rnd(&x) % (uint64_t)(round == 3 ? (uint64_t)N : (uint64_t)(N / 4 + 1)));
			ids[0] = N - 1;
			ids[1] = 0;
			for (size_t i = 0; i < 60; i++) /* a run of neighbours, sharing blocks */
				ids[100 + i] = (N / 2 + (int64_t)i) % N;
			for (size_t i = 0; i < n / 10; i++) /* repeats */
				ids[n / 2 + i] = ids[i * 3];
			const ref_io r = reference(in, ids, n, ncached ? cached : NULL);
			burrow_store_reset_stats(s);
			cr_assert_eq(burrow_store_gather(s, ids, n, out), 0, "%s", burrow_last_error());
			burrow_store_stats st = {.size = sizeof st};
			burrow_store_get_stats(s, &st);
			const char *eng = burrow_store_engine_name(in->engine);
			cr_assert_eq(st.rows, n);
			cr_assert_eq(st.cache_hits + st.cache_misses, n);
			cr_assert_eq(st.rows_read, r.rows, "%s: %llu rows read, the reference %llu", eng,
				     (unsigned long long)st.rows_read, (unsigned long long)r.rows);
			cr_assert_eq(st.pages_read, r.pages, "%s, round %d: %llu 4 KiB pages, the reference %llu (block %zu, row %zu B)",
				     eng, round, (unsigned long long)st.pages_read, (unsigned long long)r.pages, in->block_bytes,
				     in->row_bytes);
			cr_assert(st.bytes_read >= r.bytes_lo && st.bytes_read <= r.bytes_hi,
				  "%s: %llu bytes read, the reference between %llu and %llu", eng,
				  (unsigned long long)st.bytes_read, (unsigned long long)r.bytes_lo, (unsigned long long)r.bytes_hi);
			if (in->row_bytes + 2 * in->block_bytes <= in->max_read_bytes)
				cr_assert(st.reads <= r.rows && st.reads > 0, "%s: %llu reads for %llu rows", eng,
					  (unsigned long long)st.reads, (unsigned long long)r.rows);
		}
		free(out);
		burrow_store_close(s);
	}
	free(ids);
	free(cached);
	free(prof);
	free(path);
}

Test(store_io, counts_of_400_byte_rows_match_the_reference) { io_case(BURROW_DTYPE_F32, 20000, 100, 0, 0); }
/* reads of one block: a row sharing a block with the read before starts a read of its own */
Test(store_io, counts_of_148_byte_rows_in_one_block_reads) { io_case(BURROW_DTYPE_F32, 30000, 37, 512, 0); }
Test(store_io, counts_of_rows_longer_than_a_read) { io_case(BURROW_DTYPE_F32, 3000, 1025, 4096, 0); }
Test(store_io, counts_of_float16_rows_with_a_cache) { io_case(BURROW_DTYPE_F16, 40000, 3, 0, 2000); }

/* ------------------------------------------------------------ a cache of rows as stored */

/* Gather the same ids through a cached store and a plain one, three rounds (the clock cache
 * fills in the first): the bytes are equal every round, and the cache served some. */
static void same_bytes(burrow_store *s, burrow_store *plain, int64_t N, const char *what)
{
	const size_t n = 3000, orb = burrow_store_get_info(s)->out_row_bytes;
	int64_t *ids = malloc(n * sizeof *ids);
	char *a = malloc(n * orb), *b = malloc(n * orb);
	uint64_t x = 12;
	burrow_store_reset_stats(s);
	for (int round = 0; round < 3; round++) {
		for (size_t i = 0; i < n; i++) /* skewed: the low ids come often */
			ids[i] = (int64_t)(rnd(&x) % (uint64_t)(i % 2 ? N : N / 8 + 1));
		ids[0] = 0; /* row 0: the first 16 Ki bit patterns... */
		ids[1] = 65536 / burrow_store_get_info(s)->dim - 1; /* ... and the last of them, NaNs */
		cr_assert_eq(burrow_store_gather(s, ids, n, a), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_store_gather(plain, ids, n, b), 0, "%s", burrow_last_error());
		for (size_t i = 0; i < n; i++)
			cr_assert(memcmp(a + i * orb, b + i * orb, orb) == 0, "%s, round %d: row %lld (position %zu) differs",
				  what, round, (long long)ids[i], i);
	}
	burrow_store_stats st = {.size = sizeof st};
	burrow_store_get_stats(s, &st);
	cr_assert(st.cache_hits > n / 2, "%s: only %llu hits", what, (unsigned long long)st.cache_hits);
	free(a);
	free(b);
	free(ids);
}

/* A float16 file gathered as float32 caches its rows as float16: the budget holds twice the
 * rows (the index aside) of a float32 file's, exactly as many as gathering float16 does; clock
 * and both static fills (the engine's reads, one sequential pass) serve the bits a miss gives,
 * every float16 pattern included (a signalling NaN's payload too). */
Test(store_io, a_float16_cache_holds_twice_the_rows_and_serves_the_same_bytes)
{
	const int64_t N = 4096, D = 128;
	char *p16 = make_file("h", BURROW_DTYPE_F16, N, D, 41), *p32 = make_file("f", BURROW_DTYPE_F32, N, D, 42);
	uint64_t *prof = malloc((size_t)N * sizeof *prof), x = 6;
	for (int64_t v = 0; v < N; v++)
		prof[v] = 1 + rnd(&x) % 50 + (v < N / 8 ? 100 : 0);
	const size_t budget = 512 << 10;
	for (size_t e = 0; e < 3; e++) {
		burrow_store *s = open_store(p16, ENGINES[e], BURROW_DTYPE_F32, 0);
		burrow_store *plain = open_store(p16, ENGINES[e], BURROW_DTYPE_F32, 0);
		burrow_store *h = open_store(p16, ENGINES[e], BURROW_DTYPE_INVALID, 0);
		burrow_store *f = open_store(p32, ENGINES[e], BURROW_DTYPE_F32, 0);
		cr_assert_eq(burrow_store_get_info(s)->cache_row_bytes, (size_t)D * 2);
		cr_assert_eq(burrow_store_get_info(f)->cache_row_bytes, (size_t)D * 4);
		cr_assert_eq(burrow_store_get_info(h)->cache_row_bytes, (size_t)D * 2);
		burrow_store_stats st = {.size = sizeof st}, sh = {.size = sizeof sh}, sf = {.size = sizeof sf};
		cr_assert_eq(burrow_store_cache_clock(s, budget), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_store_cache_clock(h, budget), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_store_cache_clock(f, budget), 0, "%s", burrow_last_error());
		burrow_store_get_stats(s, &st);
		burrow_store_get_stats(h, &sh);
		burrow_store_get_stats(f, &sf);
		cr_assert_eq(st.cache_capacity, sh.cache_capacity);
		cr_assert(st.cache_bytes <= budget);
		cr_assert(st.cache_capacity * 100 >= sf.cache_capacity * 190, "float16 rows: %llu in the budget, float32 %llu",
			  (unsigned long long)st.cache_capacity, (unsigned long long)sf.cache_capacity);
		same_bytes(s, plain, N, "clock");
		/* static, a few rows: the engine's reads fill it */
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, budget), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_store_get_info(s)->cache_fill, BURROW_FILL_RANDOM);
		burrow_store_get_stats(s, &st);
		cr_assert_eq(st.cache_rows, st.cache_capacity);
		same_bytes(s, plain, N, "static, engine fill");
		/* static, every row: one sequential pass */
		cr_assert_eq(burrow_store_cache_profile(s, prof, N, bw_cache_bytes_for((size_t)N, (size_t)D * 2)), 0, "%s",
			     burrow_last_error());
		cr_assert_eq(burrow_store_get_info(s)->cache_fill, BURROW_FILL_SEQUENTIAL);
		burrow_store_get_stats(s, &st);
		cr_assert_eq(st.cache_rows, (uint64_t)N);
		same_bytes(s, plain, N, "static, sequential fill");
		burrow_store_close(s);
		burrow_store_close(plain);
		burrow_store_close(h);
		burrow_store_close(f);
	}
	free(prof);
	free(p16);
	free(p32);
}
