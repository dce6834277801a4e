/* test_csr_external.c: the CSR builder with a memory budget (sorted runs spilled to disk
 * and merged) gives the same CSR, and the same file bytes, as the in-memory build and
 * as a slow obvious reference. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../graph/csr_internal.h"
#include "util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(csr_external, .init = setup, .fini = teardown, .timeout = 60);

static uint64_t rng_state = 88172645463325252ull;
static uint64_t xorshift(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

typedef struct pair {
	int64_t s, d;
} pair;

static int cmp_pair(const void *a, const void *b)
{
	const pair *x = a, *y = b;
	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return (x->d > y->d) - (x->d < y->d);
}

/* Reference: list every stored (s, d) the options ask for, sort the pairs, drop repeats. */
static void ref_csr(int64_t n, const int64_t *src, const int64_t *dst, size_t m, const burrow_csr_opts *o,
		    int64_t **indptr, int64_t **idx, int64_t *ne)
{
	pair *p = malloc((2 * m + 1) * sizeof *p);
	size_t k = 0;
	for (size_t i = 0; i < m; i++) {
		if (o->drop_self_loops && src[i] == dst[i])
			continue;
		p[k++] = (pair){src[i], dst[i]};
		if (o->symmetrize)
			p[k++] = (pair){dst[i], src[i]};
	}
	qsort(p, k, sizeof *p, cmp_pair);
	size_t u = 0;
	for (size_t i = 0; i < k; i++)
		if (!o->drop_duplicates || u == 0 || cmp_pair(&p[i], &p[u - 1]))
			p[u++] = p[i];
	*indptr = calloc((size_t)n + 1, sizeof **indptr);
	*idx = malloc((u + 1) * sizeof **idx);
	for (size_t i = 0; i < u; i++) {
		(*indptr)[p[i].s + 1]++;
		(*idx)[i] = p[i].d;
	}
	for (int64_t v = 0; v < n; v++)
		(*indptr)[v + 1] += (*indptr)[v];
	*ne = (int64_t)u;
	free(p);
}

static void random_edges(int64_t n, size_t m, int64_t **src, int64_t **dst)
{
	*src = malloc((m + 1) * sizeof **src);
	*dst = malloc((m + 1) * sizeof **dst);
	for (size_t i = 0; i < m; i++) {
		/* skewed ids so that some rows are long, plus repeats and self-loops */
		int64_t a = (int64_t)(xorshift() % (uint64_t)n), b = (int64_t)(xorshift() % (uint64_t)n);
		if (xorshift() % 4 == 0)
			b = a % 7 % n;
		if (xorshift() % 16 == 0)
			b = a;
		(*src)[i] = a;
		(*dst)[i] = b;
		if (i > 0 && xorshift() % 8 == 0) {
			(*src)[i] = (*src)[i - 1];
			(*dst)[i] = (*dst)[i - 1];
		}
	}
}

/* Build with the given options, adding edges in uneven chunks. */
static void build(int64_t n, const int64_t *src, const int64_t *dst, size_t m, const burrow_csr_opts *o, bool wide,
		  burrow_csr_builder **b, burrow_csr *g, int *runs)
{
	cr_assert_eq(burrow_csr_builder_open(b, n, o), 0, "%s", burrow_last_error());
	if (wide)
		bw_csr_builder_force_wide_keys(*b);
	for (size_t i = 0; i < m;) {
		size_t c = 1 + xorshift() % 3000;
		c = BW_MIN(m - i, c);
		cr_assert_eq(burrow_csr_builder_add(*b, src + i, dst + i, c), 0, "%s", burrow_last_error());
		i += c;
	}
	cr_assert_eq(burrow_csr_builder_count(*b), (int64_t)m);
	*runs = bw_csr_builder_runs(*b);
	cr_assert_eq(burrow_csr_builder_finish(*b, g), 0, "%s", burrow_last_error());
}

static void check_same(const burrow_csr *g, const int64_t *indptr, const int64_t *idx, int64_t ne, const char *what)
{
	cr_assert_eq(g->num_edges, ne, "%s: %lld entries, reference has %lld", what, (long long)g->num_edges,
		     (long long)ne);
	for (int64_t v = 0; v <= g->num_nodes; v++)
		cr_assert_eq(g->indptr[v], indptr[v], "%s: indptr[%lld]", what, (long long)v);
	for (int64_t j = 0; j < ne; j++)
		cr_assert_eq(burrow_csr_index(g, j), idx[j], "%s: indices[%lld]", what, (long long)j);
}

static int count_files(const char *d)
{
	DIR *dd = opendir(d);
	int k = 0;
	struct dirent *e;
	while (dd && (e = readdir(dd)))
		k += e->d_name[0] != '.';
	if (dd)
		closedir(dd);
	return k;
}

Test(csr_external, spilled_build_equals_reference_and_in_memory_build)
{
	const int64_t sizes[] = {1, 2, 97, 5000};
	const size_t budgets[] = {1, 3000, 64 << 10, 64 << 20};
	char *spill = tu_path(dir, "spill");
	cr_assert_eq(mkdir(spill, 0755), 0);
	for (size_t si = 0; si < 4; si++) {
		int64_t n = sizes[si];
		size_t m = n < 100 ? 300 : 20000;
		int64_t *src, *dst;
		random_edges(n, m, &src, &dst);
		for (int flags = 0; flags < 8; flags++) {
			burrow_csr_opts o;
			burrow_csr_defaults(&o);
			o.symmetrize = flags & 1;
			o.drop_self_loops = flags & 2;
			o.drop_duplicates = flags & 4;
			int64_t *rp, *ri, rne;
			ref_csr(n, src, dst, m, &o, &rp, &ri, &rne);

			burrow_csr_builder *b;
			burrow_csr g;
			int runs;
			build(n, src, dst, m, &o, false, &b, &g, &runs);
			cr_assert_eq(runs, 0);
			check_same(&g, rp, ri, rne, "in-memory");
			cr_assert_eq(burrow_csr_check(&g, o.drop_duplicates), 0, "%s", burrow_last_error());
			burrow_csr_builder_close(b);

			for (size_t bi = 0; bi < 4; bi++)
				for (int wide = 0; wide < 2; wide++) {
					o.mem_bytes = budgets[bi];
					o.spill_dir = spill;
					build(n, src, dst, m, &o, wide, &b, &g, &runs);
					char what[96];
					snprintf(what, sizeof what, "n=%lld flags=%d mem=%zu wide=%d runs=%d", (long long)n,
						 flags, budgets[bi], wide, runs);
					if (bi == 0 && n > 2)
						cr_assert_gt(runs, 2, "%s: expected the build to spill", what);
					check_same(&g, rp, ri, rne, what);
					burrow_csr_builder_close(b);
					cr_assert_eq(count_files(spill), 0, "%s: spill files left behind", what);
				}
			free(rp);
			free(ri);
		}
		free(src);
		free(dst);
	}
	free(spill);
}

/* put_builder streams a spilled build into indptr.npy and indices.npy; the files must be
 * byte-identical to the ones put_graph writes from the in-memory build. */
Test(csr_external, written_files_are_byte_identical)
{
	const int64_t n = 3000;
	const size_t m = 60000;
	int64_t *src, *dst;
	random_edges(n, m, &src, &dst);
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	o.symmetrize = true;

	burrow_csr_builder *b;
	burrow_csr g;
	int runs;
	build(n, src, dst, m, &o, false, &b, &g, &runs);
	char *a = tu_path(dir, "mem"), *c = tu_path(dir, "spilled");
	burrow_writer *w;
	cr_assert_eq(burrow_writer_open(&w, a, "t", NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_graph(w, &g, true), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	burrow_csr_builder_close(b);

	o.mem_bytes = 20000;
	o.spill_dir = dir;
	cr_assert_eq(burrow_csr_builder_open(&b, n, &o), 0);
	cr_assert_eq(burrow_csr_builder_add(b, src, dst, m), 0, "%s", burrow_last_error());
	cr_assert_gt(bw_csr_builder_runs(b), 10);
	cr_assert_eq(burrow_writer_open(&w, c, "t", NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_builder(w, b, true), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	burrow_csr_builder_close(b);

	const char *files[] = {"indptr.npy", "indices.npy", "meta.json"};
	for (int i = 0; i < 3; i++) {
		char *pa = tu_path(a, "%s", files[i]), *pc = tu_path(c, "%s", files[i]);
		size_t la, lc;
		char *da = tu_read(pa, &la), *dc = tu_read(pc, &lc);
		cr_assert(da && dc);
		cr_assert_eq(la, lc, "%s: %zu vs %zu bytes", files[i], la, lc);
		cr_assert(memcmp(da, dc, la) == 0, "%s differs", files[i]);
		free(da);
		free(dc);
		free(pa);
		free(pc);
	}
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, c), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	burrow_dataset_close(ds);
	free(a);
	free(c);
	free(src);
	free(dst);
}

Test(csr_external, empty_graphs_and_a_missing_spill_folder)
{
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	o.mem_bytes = 1;
	burrow_csr_builder *b;
	burrow_csr g;
	/* no nodes, no edges */
	cr_assert_eq(burrow_csr_builder_open(&b, 0, &o), 0);
	cr_assert_eq(burrow_csr_builder_finish(b, &g), 0, "%s", burrow_last_error());
	cr_assert_eq(g.num_nodes, 0);
	cr_assert_eq(g.num_edges, 0);
	cr_assert_eq(g.indptr[0], 0);
	burrow_csr_builder_close(b);
	/* nodes, only self-loops */
	cr_assert_eq(burrow_csr_builder_open(&b, 5, &o), 0);
	int64_t s[] = {3, 3}, d[] = {3, 3};
	cr_assert_eq(burrow_csr_builder_add(b, s, d, 2), 0);
	cr_assert_eq(burrow_csr_builder_finish(b, &g), 0);
	cr_assert_eq(g.num_edges, 0);
	for (int v = 0; v <= 5; v++)
		cr_assert_eq(g.indptr[v], 0);
	burrow_csr_builder_close(b);
	/* a spill folder that does not exist: the error names it */
	char *nowhere = tu_path(dir, "no/such/folder");
	o.spill_dir = nowhere;
	cr_assert_eq(burrow_csr_builder_open(&b, 1000, &o), 0);
	int rc = 0;
	for (int64_t i = 0; i < 1000 && !rc; i++) {
		int64_t a = i, c = (i * 7) % 1000;
		rc = burrow_csr_builder_add(b, &a, &c, 1);
	}
	cr_assert_lt(rc, 0);
	cr_assert(strstr(burrow_last_error(), nowhere), "message '%s' does not name the folder", burrow_last_error());
	burrow_csr_builder_close(b);
	free(nowhere);
}
