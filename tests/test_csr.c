/* test_csr.c: CSR building against a slow reference, the structural check, failure paths. */
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

TestSuite(csr, .timeout = 60);

typedef struct edge {
	int64_t u, v;
} edge;

static int cmp_edge(const void *a, const void *b)
{
	const edge *x = a, *y = b;
	if (x->u != y->u)
		return x->u < y->u ? -1 : 1;
	return (x->v > y->v) - (x->v < y->v);
}

/* The obvious reference: list every directed pair the options call for, sort, drop repeats. */
static edge *ref_build(const int64_t *src, const int64_t *dst, size_t m, const burrow_csr_opts *o, size_t *k)
{
	edge *e = malloc((2 * m + 1) * sizeof *e);
	size_t n = 0;
	for (size_t i = 0; i < m; i++) {
		if (o->drop_self_loops && src[i] == dst[i])
			continue;
		e[n++] = (edge){src[i], dst[i]};
		if (o->symmetrize)
			e[n++] = (edge){dst[i], src[i]};
	}
	qsort(e, n, sizeof *e, cmp_edge);
	if (o->drop_duplicates && n) {
		size_t w = 1;
		for (size_t i = 1; i < n; i++)
			if (cmp_edge(&e[i], &e[w - 1]))
				e[w++] = e[i];
		n = w;
	}
	*k = n;
	return e;
}

static void random_edges(uint64_t seed, int64_t n, size_t m, int64_t *src, int64_t *dst)
{
	bw_rng r;
	bw_rng_seed(&r, seed);
	for (size_t i = 0; i < m; i++) {
		src[i] = (int64_t)bw_rng_below(&r, (uint64_t)n);
		/* a few repeats and loops on purpose */
		dst[i] = i % 17 == 0 ? src[i] : (int64_t)bw_rng_below(&r, (uint64_t)n);
		if (i % 23 == 0 && i)
			src[i] = src[i - 1], dst[i] = dst[i - 1];
	}
}

static void check_against_ref(int64_t n, size_t m, const burrow_csr_opts *o, uint64_t seed, size_t chunk)
{
	int64_t *src = malloc(m * sizeof *src + 8), *dst = malloc(m * sizeof *dst + 8);
	random_edges(seed, n, m, src, dst);
	burrow_csr_builder *b;
	cr_assert_eq(burrow_csr_builder_open(&b, n, o), 0);
	for (size_t lo = 0; lo < m; lo += chunk)
		cr_assert_eq(burrow_csr_builder_add(b, src + lo, dst + lo, lo + chunk > m ? m - lo : chunk), 0);
	cr_assert_eq(burrow_csr_builder_count(b), (int64_t)m);
	burrow_csr g;
	cr_assert_eq(burrow_csr_builder_finish(b, &g), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_csr_check(&g, o->drop_duplicates), 0, "%s", burrow_last_error());
	cr_assert_eq(g.index_width, 4);
	size_t k;
	edge *e = ref_build(src, dst, m, o, &k);
	cr_assert_eq(g.num_edges, (int64_t)k, "sym=%d loops=%d dups=%d: %lld entries, reference %zu", o->symmetrize,
		     o->drop_self_loops, o->drop_duplicates, (long long)g.num_edges, k);
	size_t j = 0;
	for (int64_t u = 0; u < n; u++)
		for (int64_t p = g.indptr[u]; p < g.indptr[u + 1]; p++, j++) {
			cr_assert_eq(e[j].u, u, "entry %zu in row %lld, reference row %lld", j, (long long)u,
				     (long long)e[j].u);
			cr_assert_eq(burrow_csr_index(&g, p), e[j].v, "row %lld entry %lld", (long long)u, (long long)p);
		}
	free(e);
	burrow_csr_builder_close(b);
	free(src);
	free(dst);
}

Test(csr, matches_reference_for_every_option_combination)
{
	for (int mask = 0; mask < 8; mask++) {
		burrow_csr_opts o;
		burrow_csr_defaults(&o);
		o.symmetrize = mask & 1;
		o.drop_self_loops = mask & 2;
		o.drop_duplicates = mask & 4;
		check_against_ref(300, 5000, &o, 11 + (uint64_t)mask, 5000);
	}
}

Test(csr, chunked_adds_and_large_rows)
{
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	o.symmetrize = true;
	/* few nodes, many edges: rows longer than the insertion-sort cutoff */
	check_against_ref(40, 20000, &o, 5, 777);
	check_against_ref(100000, 30000, &o, 6, 1);
}

Test(csr, thread_count_does_not_change_the_result)
{
	int64_t n = 5000;
	size_t m = 60000;
	int64_t *src = malloc(m * sizeof *src), *dst = malloc(m * sizeof *dst);
	random_edges(99, n, m, src, dst);
	burrow_csr g[2];
	burrow_csr_builder *b[2];
	for (int t = 0; t < 2; t++) {
		burrow_csr_opts o;
		burrow_csr_defaults(&o);
		o.symmetrize = true;
		o.threads = t ? 2 : 1;
		cr_assert_eq(burrow_csr_builder_open(&b[t], n, &o), 0);
		cr_assert_eq(burrow_csr_builder_add(b[t], src, dst, m), 0);
		cr_assert_eq(burrow_csr_builder_finish(b[t], &g[t]), 0);
	}
	cr_assert_eq(g[0].num_edges, g[1].num_edges);
	cr_assert(memcmp(g[0].indptr, g[1].indptr, (size_t)(n + 1) * 8) == 0);
	cr_assert(memcmp(g[0].indices, g[1].indices, (size_t)g[0].num_edges * 4) == 0);
	burrow_csr_builder_close(b[0]);
	burrow_csr_builder_close(b[1]);
	free(src);
	free(dst);
}

Test(csr, empty_graphs)
{
	burrow_csr_builder *b;
	burrow_csr g;
	cr_assert_eq(burrow_csr_builder_open(&b, 0, NULL), 0);
	cr_assert_eq(burrow_csr_builder_finish(b, &g), 0);
	cr_assert_eq(g.num_nodes, 0);
	cr_assert_eq(g.num_edges, 0);
	cr_assert_eq(g.indptr[0], 0);
	burrow_csr_builder_close(b);
	cr_assert_eq(burrow_csr_builder_open(&b, 10, NULL), 0);
	cr_assert_eq(burrow_csr_builder_finish(b, &g), 0);
	cr_assert_eq(g.num_edges, 0);
	cr_assert_eq(g.indptr[10], 0);
	cr_assert_eq(burrow_csr_check(&g, true), 0);
	burrow_csr_builder_close(b);
}

Test(csr, out_of_range_ids_refused_naming_the_id)
{
	burrow_csr_builder *b;
	cr_assert_eq(burrow_csr_builder_open(&b, 10, NULL), 0);
	int64_t s[] = {1, 2, 3}, d[] = {4, 10, 5};
	cr_assert_eq(burrow_csr_builder_add(b, s, d, 3), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "destination id 10"), "%s", burrow_last_error());
	int64_t s2[] = {-1}, d2[] = {0};
	cr_assert_eq(burrow_csr_builder_add(b, s2, d2, 1), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "source id -1"), "%s", burrow_last_error());
	cr_assert_eq(burrow_csr_builder_count(b), 0, "a refused chunk was kept");
	burrow_csr g;
	cr_assert_eq(burrow_csr_builder_finish(b, &g), 0);
	cr_assert_eq(burrow_csr_builder_add(b, s, s, 1), BURROW_E_INVAL, "edges accepted after finish");
	burrow_csr_builder_close(b);
	cr_assert_eq(burrow_csr_builder_open(&b, -1, NULL), BURROW_E_INVAL);
	cr_assert_null(b);
}

Test(csr, check_finds_each_kind_of_damage)
{
	int64_t indptr[4] = {0, 2, 3, 5};
	int32_t idx[5] = {1, 2, 0, 0, 1};
	burrow_csr g = {.num_nodes = 3, .num_edges = 5, .indptr = indptr, .indices = idx, .index_width = 4};
	cr_assert_eq(burrow_csr_check(&g, true), 0, "%s", burrow_last_error());
	idx[1] = 0; /* row 0: 1, 0 unsorted */
	cr_assert_eq(burrow_csr_check(&g, false), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "row 0"), "%s", burrow_last_error());
	idx[1] = 1; /* row 0: 1, 1 repeated: fine unless unique */
	cr_assert_eq(burrow_csr_check(&g, false), 0);
	cr_assert_eq(burrow_csr_check(&g, true), BURROW_E_FORMAT);
	idx[1] = 3; /* out of range */
	cr_assert_eq(burrow_csr_check(&g, false), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "out of range"), "%s", burrow_last_error());
	idx[1] = 2;
	indptr[2] = 1; /* decreasing offsets */
	cr_assert_eq(burrow_csr_check(&g, false), BURROW_E_FORMAT);
	indptr[2] = 3;
	g.num_edges = 4; /* indptr[N] disagrees */
	cr_assert_eq(burrow_csr_check(&g, false), BURROW_E_FORMAT);
}

/* Every allocation the build makes is made to fail in turn: each run either succeeds or
 * returns BURROW_E_NOMEM, and afterwards the library holds no memory. */
Test(csr, every_allocation_failure_is_clean)
{
	int64_t src[500], dst[500];
	random_edges(3, 64, 500, src, dst);
	size_t base;
	burrow_mem_stats(&base, NULL);
	int failures = 0;
	for (long k = 0; k < 40; k++) {
		burrow_csr_opts o;
		burrow_csr_defaults(&o);
		o.symmetrize = true;
		burrow_csr_builder *b = NULL;
		burrow_csr g;
		bw_mem_fail_after(k);
		int st = burrow_csr_builder_open(&b, 64, &o);
		for (int i = 0; !st && i < 5; i++)
			st = burrow_csr_builder_add(b, src + 100 * i, dst + 100 * i, 100);
		if (!st)
			st = burrow_csr_builder_finish(b, &g);
		bw_mem_fail_after(-1);
		cr_assert(st == 0 || st == BURROW_E_NOMEM, "k=%ld: status %d", k, st);
		failures += st != 0;
		if (!st)
			cr_assert_eq(burrow_csr_check(&g, true), 0);
		burrow_csr_builder_close(b);
		size_t now;
		burrow_mem_stats(&now, NULL);
		cr_assert_eq(now, base, "k=%ld: %zu bytes still held", k, now - base);
	}
	cr_assert(failures > 3, "the injected failures never hit (%d)", failures);
}
