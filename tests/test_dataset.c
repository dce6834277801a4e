/* test_dataset.c: dataset directories: writer round trip, validation on open, atomicity. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "../graph/csr_internal.h"
#include "../graph/npy.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TU_SCRATCH_SUITE(dataset, 60);

#define N 50
#define D 7
#define C 3

/* A small dataset: a ring (symmetric), features f[v][j] = v + j/10, labels v % C
 * (node 0 unlabeled), splits 0..29 / 30..39 / 40..49. */
static char *write_small(const char *name, bool overwrite)
{
	char *out = tu_path(tu_dir, "%s", name);
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = overwrite;
	burrow_writer *w;
	cr_assert_eq(burrow_writer_open(&w, out, "small", &wo), 0, "%s", burrow_last_error());
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = true;
	burrow_csr_builder *b;
	cr_assert_eq(burrow_csr_builder_open(&b, N, &co), 0);
	for (int64_t v = 0; v < N; v++) {
		int64_t u = (v + 1) % N;
		cr_assert_eq(burrow_csr_builder_add(b, &v, &u, 1), 0);
	}
	cr_assert_eq(burrow_writer_put_builder(w, b, true), 0, "%s", burrow_last_error());
	burrow_csr_builder_close(b);
	cr_assert_eq(burrow_writer_features_begin(w, N, D, BURROW_DTYPE_F32), 0);
	for (int64_t v = 0; v < N; v++) {
		float row[D];
		for (int j = 0; j < D; j++)
			row[j] = (float)v + (float)j / 10;
		cr_assert_eq(burrow_writer_features_append(w, row, 1), 0);
	}
	cr_assert_eq(burrow_writer_features_end(w), 0, "%s", burrow_last_error());
	int32_t lab[N];
	for (int v = 0; v < N; v++)
		lab[v] = v ? v % C : -1;
	cr_assert_eq(burrow_writer_put_labels(w, lab, N, C), 0);
	int64_t ids[30];
	for (int s = 0, lo = 0; s < 3; s++) {
		int cnt = s == 0 ? 30 : 10;
		for (int i = 0; i < cnt; i++)
			ids[i] = lo + i;
		cr_assert_eq(burrow_writer_put_split(w, s, ids, cnt), 0);
		lo += cnt;
	}
	cr_assert_eq(burrow_writer_set_source(w, "{\"test\": \"small\"}"), 0);
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	return out;
}

Test(dataset, writer_round_trip)
{
	char *p = write_small("ds", false);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_str_eq(in->name, "small");
	cr_assert_eq(in->num_nodes, N);
	cr_assert_eq(in->num_edges, 2 * N);
	cr_assert_eq(in->feat_dim, D);
	cr_assert_eq(in->feat_dtype, BURROW_DTYPE_F32);
	cr_assert_eq(in->num_classes, C);
	cr_assert(in->symmetric);
	cr_assert_eq(in->index_width, 4);
	cr_assert_eq(in->num_train, 30);
	cr_assert_eq(in->num_valid, 10);
	cr_assert_eq(in->num_test, 10);
	cr_assert(strstr(in->source_json, "\"test\":\"small\""), "%s", in->source_json);
	const burrow_csr *g = burrow_dataset_graph(ds);
	for (int64_t v = 0; v < N; v++) {
		cr_assert_eq(g->indptr[v], 2 * v);
		int64_t a = (v + N - 1) % N, c = (v + 1) % N;
		cr_assert_eq(burrow_csr_index(g, 2 * v), a < c ? a : c);
		cr_assert_eq(burrow_csr_index(g, 2 * v + 1), a < c ? c : a);
	}
	const int32_t *lab = burrow_dataset_labels(ds);
	cr_assert_eq(lab[0], -1);
	cr_assert_eq(lab[7], 7 % C);
	int64_t n;
	const int64_t *te = burrow_dataset_split(ds, BURROW_SPLIT_TEST, &n);
	cr_assert_eq(n, 10);
	cr_assert_eq(te[0], 40);
	cr_assert_eq(te[9], 49);
	cr_assert_eq(burrow_dataset_features_offset(ds), 4096);
	/* the rows are where the format says they are */
	size_t len;
	char *raw = tu_read(burrow_dataset_features_path(ds), &len);
	cr_assert_eq(len, 4096 + N * D * 4);
	float x;
	memcpy(&x, raw + 4096 + (13 * D + 2) * 4, 4);
	cr_assert_float_eq(x, 13.2f, 1e-6);
	free(raw);
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	cr_assert_gt(burrow_dataset_disk_bytes(ds), 4096 + N * D * 4);
	burrow_dataset_close(ds);
	/* nothing but the dataset is left beside it */
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_eq(out, "ds\n");
	free(out);
	free(p);
}

/* Open must fail with BURROW_E_FORMAT naming `file` and containing `what`. */
static void expect_refused(const char *p, int status, const char *file, const char *what)
{
	burrow_dataset *ds = (burrow_dataset *)1;
	int st = burrow_dataset_open(&ds, p);
	cr_assert_eq(st, status, "status %d, message: %s", st, burrow_last_error());
	cr_assert_null(ds);
	cr_assert(strstr(burrow_last_error(), file), "message does not name %s: %s", file, burrow_last_error());
	cr_assert(strstr(burrow_last_error(), what), "message lacks '%s': %s", what, burrow_last_error());
}

Test(dataset, truncated_features_refused_with_both_sizes)
{
	char *p = write_small("ds", false);
	char *f = tu_path(p, "features.npy");
	long long full = tu_size(f);
	tu_truncate(f, full - 100);
	char want[128];
	snprintf(want, sizeof want, "size is %lld bytes, expected %lld", full - 100, full);
	expect_refused(p, BURROW_E_FORMAT, "features.npy", want);
	free(f);
	free(p);
}

Test(dataset, each_array_checked_against_meta)
{
	char *p = write_small("ds", false);
	char *f;
	/* labels of the wrong length */
	f = tu_path(p, "labels.npy");
	int64_t n = N - 1;
	int32_t lab[N] = {0};
	cr_assert_eq(bw_npy_save(f, BURROW_DTYPE_I32, 1, &n, lab, 64), 0);
	expect_refused(p, BURROW_E_FORMAT, "labels.npy", "shape is [49], expected [50]");
	free(f);
	free(p);
	p = write_small("ds2", false);
	/* indices of the wrong dtype */
	f = tu_path(p, "indices.npy");
	n = 2 * N;
	int64_t idx[2 * N] = {0};
	cr_assert_eq(bw_npy_save(f, BURROW_DTYPE_I64, 1, &n, idx, 64), 0);
	expect_refused(p, BURROW_E_FORMAT, "indices.npy", "dtype is int64, expected int32");
	free(f);
	free(p);
	p = write_small("ds3", false);
	/* a missing split file */
	f = tu_path(p, "split/valid.npy");
	unlink(f);
	expect_refused(p, BURROW_E_NOTFOUND, "split/valid.npy", "No such file");
	free(f);
	free(p);
	p = write_small("ds4", false);
	/* features with garbage in the header */
	f = tu_path(p, "features.npy");
	FILE *fp = fopen(f, "r+b");
	fwrite("GARBAGE", 1, 7, fp);
	fclose(fp);
	expect_refused(p, BURROW_E_FORMAT, "features.npy", "not a .npy file");
	free(f);
	free(p);
}

static void rewrite_meta(const char *p, const char *from, const char *to)
{
	char *m = tu_path(p, "meta.json");
	char *text = tu_read(m, NULL);
	cr_assert(text);
	char *at = strstr(text, from);
	cr_assert(at, "meta.json lacks %s", from);
	FILE *f = fopen(m, "wb");
	fwrite(text, 1, (size_t)(at - text), f);
	fputs(to, f);
	fputs(at + strlen(from), f);
	fclose(f);
	free(text);
	free(m);
}

Test(dataset, meta_json_checked)
{
	struct {
		const char *from, *to, *what;
	} cases[] = {
		{"\"burrow-dataset\"", "\"something-else\"", "\"format\" is \"something-else\""},
		{"\"version\":\t1", "\"version\":\t3", "format version 3"}, /* 2 is typed graphs (test_hetero.c) */
		{"\"num_nodes\":\t50", "\"num_nodes\":\t51", "indptr.npy: shape is [51], expected [52]"},
		{"\"num_nodes\":\t50", "\"num_nodes\":\t-5", "must be a non-negative integer"},
		/* cast to an integer before the range check once (UB, caught by clang's UBSan) */
		{"\"num_nodes\":\t50", "\"num_nodes\":\t1e30", "must be a non-negative integer"},
		{"\"symmetric\":\ttrue", "\"symmetric\":\t3", "\"symmetric\" must be true or false"},
		{"\"feat_dtype\":\t\"float32\"", "\"feat_dtype\":\t\"int8\"", "\"feat_dtype\" must be"},
		{"{", "[", "not a JSON object"},
		{"\"num_edges\"", "\"num_edgez\"", "missing \"num_edges\""},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char name[16];
		snprintf(name, sizeof name, "m%zu", i);
		char *p = write_small(name, false);
		rewrite_meta(p, cases[i].from, cases[i].to);
		expect_refused(p, BURROW_E_FORMAT, "meta.json", "");
		cr_assert(strstr(burrow_last_error(), cases[i].what), "case %zu: %s", i, burrow_last_error());
		free(p);
	}
	expect_refused(tu_dir, BURROW_E_NOTFOUND, "meta.json", "No such file");
}

/* Load dir/rel (any dtype) into a malloc'd copy; *n its element count. */
static void *load_copy(const char *p, const char *rel, int64_t *n, size_t item)
{
	char *f = tu_path(p, "%s", rel);
	bw_npy h;
	void *data;
	cr_assert_eq(bw_npy_load(f, &h, &data), 0, "%s", burrow_last_error());
	*n = h.shape[0];
	void *copy = malloc((size_t)*n * item + 1);
	memcpy(copy, data, (size_t)*n * item);
	bw_free(data);
	free(f);
	return copy;
}

static void save(const char *p, const char *rel, burrow_dtype t, int64_t n, const void *data)
{
	char *f = tu_path(p, "%s", rel);
	cr_assert_eq(bw_npy_save(f, t, 1, &n, data, 64), 0, "%s", burrow_last_error());
	free(f);
}

/* Every value a consumer trusts is checked by open, each refusal naming the file and
 * the entry: what used to crash training, partitioning or the sampler (issue 19). */
Test(dataset, open_refuses_content_errors)
{
	burrow_dataset *ds;
	int64_t n;
	/* the ring's rows are {v-1, v+1} sorted: entry 2 is row 1's first neighbor, 0 */
	static const struct {
		int64_t entry, value;
		const char *what;
	} bad_ids[] = {
		{3, N, "row 1: neighbor 50 (entry 3) out of range [0, 50)"},
		{2, -1, "row 1: neighbor -1 (entry 2) out of range [0, 50)"},
		{2, -7, "row 1: neighbor -7 (entry 2) out of range [0, 50)"},
		{2, 3, "row 1: neighbors not sorted at entry 3"},
	};
	for (size_t c = 0; c < sizeof bad_ids / sizeof bad_ids[0]; c++) {
		char name[16];
		snprintf(name, sizeof name, "ids%zu", c);
		char *p = write_small(name, false);
		int32_t *idx = load_copy(p, "indices.npy", &n, 4);
		idx[bad_ids[c].entry] = (int32_t)bad_ids[c].value;
		save(p, "indices.npy", BURROW_DTYPE_I32, n, idx);
		expect_refused(p, BURROW_E_FORMAT, "indices.npy", bad_ids[c].what);
		free(idx);
		free(p);
	}
	/* indptr that decreases but starts at 0 and ends at E */
	char *p = write_small("indptr", false);
	int64_t *off = load_copy(p, "indptr.npy", &n, 8);
	off[10] = off[12] + 1;
	save(p, "indptr.npy", BURROW_DTYPE_I64, n, off);
	expect_refused(p, BURROW_E_FORMAT, "indptr.npy", "row 10: indptr decreases");
	free(off);
	free(p);
	/* an edge without its reverse while meta.json claims symmetry: 5 has no edge to 1 */
	p = write_small("sym", false);
	int32_t *idx = load_copy(p, "indices.npy", &n, 4);
	idx[3] = 5; /* row 1: {0, 2} -> {0, 5} */
	save(p, "indices.npy", BURROW_DTYPE_I32, n, idx);
	expect_refused(p, BURROW_E_FORMAT, "meta.json", "edge 1 -> 5 of indices.npy has no reverse");
	free(idx);
	free(p);
	/* a label out of range on a node outside the training split (node 45 is in test) */
	p = write_small("lab", false);
	int32_t *lab = load_copy(p, "labels.npy", &n, 4);
	lab[45] = C;
	save(p, "labels.npy", BURROW_DTYPE_I32, n, lab);
	expect_refused(p, BURROW_E_FORMAT, "labels.npy", "node 45 has label 3, outside [-1, 3)");
	lab[45] = -2;
	save(p, "labels.npy", BURROW_DTYPE_I32, n, lab);
	expect_refused(p, BURROW_E_FORMAT, "labels.npy", "node 45 has label -2");
	free(lab);
	free(p);
	/* split ids out of range, and a node in two splits */
	static const struct {
		int64_t value;
		const char *what;
	} bad_split[] = {
		{N, "split/test.npy: entry 9 is node 50, outside [0, 50)"},
		{-3, "split/test.npy: entry 9 is node -3, outside [0, 50)"},
		{3, "split/test.npy: node 3 appears twice or in two splits"},
	};
	for (size_t c = 0; c < sizeof bad_split / sizeof bad_split[0]; c++) {
		char name[16];
		snprintf(name, sizeof name, "split%zu", c);
		p = write_small(name, false);
		int64_t ids[10] = {40, 41, 42, 43, 44, 45, 46, 47, 48, bad_split[c].value};
		save(p, "split/test.npy", BURROW_DTYPE_I64, 10, ids);
		expect_refused(p, BURROW_E_FORMAT, "split/test.npy", bad_split[c].what);
		free(p);
	}
	/* counts past the caps, refused before anything of their size is allocated */
	p = write_small("classes", false);
	rewrite_meta(p, "\"num_classes\":\t3", "\"num_classes\":\t2000000000");
	expect_refused(p, BURROW_E_FORMAT, "meta.json", "\"num_classes\" 2000000000 is more than");
	free(p);
	/* and a sound one opens, and verifies */
	p = write_small("good", false);
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	burrow_dataset_close(ds);
	free(p);
}

/* The hashed symmetry test against the obvious one (every entry's reverse looked up), on
 * random graphs made symmetric, then broken by one changed entry. */
Test(dataset, symmetry_hash_matches_reference)
{
	uint64_t x = 12345;
	for (int trial = 0; trial < 40; trial++) {
		const int64_t nn = 30;
		burrow_csr_opts co;
		burrow_csr_defaults(&co);
		co.symmetrize = true;
		burrow_csr_builder *b;
		cr_assert_eq(burrow_csr_builder_open(&b, nn, &co), 0);
		for (int k = 0; k < 60; k++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			int64_t u = (int64_t)((x >> 33) % nn), v = (int64_t)((x >> 13) % nn);
			cr_assert_eq(burrow_csr_builder_add(b, &u, &v, 1), 0);
		}
		burrow_csr g;
		cr_assert_eq(burrow_csr_builder_finish(b, &g), 0);
		if (trial % 2 && g.num_edges) { /* move one entry to another row-sorted value */
			int32_t *ix = (int32_t *)g.indices;
			int64_t j = (int64_t)(x % (uint64_t)g.num_edges);
			ix[j] = (ix[j] + 1) % (int32_t)nn;
		}
		bool ref = true;
		for (int64_t u = 0; u < nn; u++)
			for (int64_t j = g.indptr[u]; j < g.indptr[u + 1]; j++) {
				int64_t v = burrow_csr_index(&g, j), fw = 0, bw = 0;
				for (int64_t k = g.indptr[u]; k < g.indptr[u + 1]; k++)
					fw += burrow_csr_index(&g, k) == v;
				for (int64_t k = g.indptr[v]; k < g.indptr[v + 1]; k++)
					bw += burrow_csr_index(&g, k) == u;
				ref &= fw == bw;
			}
		bool sym = !ref;
		int st = bw_csr_scan(&g, false, &sym, "csr", "csr", false);
		if (st == 0)
			cr_assert_eq(sym, ref, "trial %d", trial);
		else /* the change broke a row's order: refused as unsorted, never as symmetric */
			cr_assert(strstr(burrow_last_error(), "not sorted"), "%s", burrow_last_error());
		burrow_csr_builder_close(b);
	}
}

Test(dataset, writer_refuses_bad_input_and_leaves_nothing)
{
	char *p = tu_path(tu_dir, "bad");
	burrow_writer *w;
	cr_assert_eq(burrow_writer_open(&w, p, "bad", NULL), 0);
	int64_t indptr[3] = {0, 1, 2};
	int32_t idx[2] = {1, 0};
	burrow_csr g = {.num_nodes = 2, .num_edges = 2, .indptr = indptr, .indices = idx, .index_width = 4};
	cr_assert_eq(burrow_writer_put_graph(w, &g, true), 0);
	int32_t lab[2] = {0, 5};
	cr_assert_eq(burrow_writer_put_labels(w, lab, 2, 3), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "node 1 has label 5"), "%s", burrow_last_error());
	int64_t ids[1] = {2};
	cr_assert_eq(burrow_writer_put_split(w, BURROW_SPLIT_TRAIN, ids, 1), BURROW_E_RANGE);
	cr_assert_eq(burrow_writer_features_begin(w, 3, 4, BURROW_DTYPE_F32), BURROW_E_INVAL); /* 3 != 2 nodes */
	cr_assert_eq(burrow_writer_features_begin(w, 2, 4, BURROW_DTYPE_F32), 0);
	float row[4] = {0};
	cr_assert_eq(burrow_writer_features_append(w, row, 1), 0);
	cr_assert_eq(burrow_writer_commit(w), BURROW_E_INVAL, "committed with features unfinished");
	cr_assert(!tu_exists(p));
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_empty(out, "left behind: %s", out);
	free(out);
	/* 64-bit ids for a small graph are refused */
	int64_t idx64[2] = {1, 0};
	burrow_csr g64 = {.num_nodes = 2, .num_edges = 2, .indptr = indptr, .indices = idx64, .index_width = 8};
	cr_assert_eq(burrow_writer_open(&w, p, "bad", NULL), 0);
	cr_assert_eq(burrow_writer_put_graph(w, &g64, true), BURROW_E_INVAL);
	burrow_writer_abort(w);
	cr_assert(!tu_exists(p));
	free(p);
}

Test(dataset, existing_output_needs_overwrite)
{
	char *p = write_small("ds", false);
	burrow_writer *w = (burrow_writer *)1;
	cr_assert_eq(burrow_writer_open(&w, p, "again", NULL), BURROW_E_EXISTS);
	cr_assert_null(w);
	char *mark = tu_path(p, "old-marker");
	FILE *f = fopen(mark, "w");
	fclose(f);
	free(write_small("ds", true));
	cr_assert(!tu_exists(mark), "the old directory was not replaced");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0);
	burrow_dataset_close(ds);
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_eq(out, "ds\n", "left behind: %s", out);
	free(out);
	free(mark);
	free(p);
}

/* The final rename of a commit that replaces a dataset fails: the old dataset is back in
 * place, whole, and neither the new one's temporary nor the old one's aside name is left. */
static const char *replaced;

static int fail_into_place(const char *from, const char *to)
{
	return strstr(from, ".tmp.") && !strcmp(to, replaced) ? 5 /* EIO */ : 0;
}

Test(dataset, failed_replace_leaves_the_old_dataset)
{
	char *p = write_small("ds", false);
	char *mark = tu_path(p, "old-marker");
	FILE *f = fopen(mark, "w");
	fclose(f);
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = true;
	burrow_writer *w;
	cr_assert_eq(burrow_writer_open(&w, p, "again", &wo), 0, "%s", burrow_last_error());
	int64_t src[N], dst[N];
	for (int64_t v = 0; v < N; v++)
		src[v] = v, dst[v] = (v + 1) % N;
	burrow_csr_builder *b;
	cr_assert_eq(burrow_csr_builder_open(&b, N, NULL), 0);
	cr_assert_eq(burrow_csr_builder_add(b, src, dst, N), 0);
	cr_assert_eq(burrow_writer_put_builder(w, b, false), 0, "%s", burrow_last_error());
	burrow_csr_builder_close(b);
	replaced = p;
	bw_rename_fault_hook = fail_into_place;
	int st = burrow_writer_commit(w);
	bw_rename_fault_hook = NULL;
	cr_assert_eq(st, BURROW_E_IO, "%s", burrow_last_error());
	cr_assert(strstr(burrow_last_error(), "rename into place"), "%s", burrow_last_error());
	cr_assert(tu_exists(mark), "the old dataset is not back");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_str_eq(burrow_dataset_get_info(ds)->name, "small");
	burrow_dataset_close(ds);
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_eq(out, "ds\n", "left behind: %s", out);
	free(out);
	free(mark);
	free(p);
}

/* Every allocation of a whole write is made to fail in turn: either the dataset is
 * complete and opens, or nothing at all is left, and no library memory leaks. */
Test(dataset, allocation_failures_leave_nothing_half_written)
{
	size_t base;
	burrow_mem_stats(&base, NULL);
	int failures = 0;
	for (long k = 0; k < 30; k++) {
		burrow_gen_opts o;
		burrow_gen_defaults(&o, BURROW_GEN_CSBM);
		o.num_nodes = 200;
		o.feat_dim = 8;
		o.threads = 1;
		char *p = tu_path(tu_dir, "g%ld", k);
		bw_mem_fail_after(k);
		int st = burrow_gen(&o, p);
		bw_mem_fail_after(-1);
		cr_assert(st == 0 || st == BURROW_E_NOMEM, "k=%ld: status %d: %s", k, st, burrow_last_error());
		if (st) {
			failures++;
			cr_assert(!tu_exists(p), "k=%ld: a failed write left %s", k, p);
		} else {
			burrow_dataset *ds;
			cr_assert_eq(burrow_dataset_open(&ds, p), 0);
			burrow_dataset_close(ds);
		}
		size_t now;
		burrow_mem_stats(&now, NULL);
		cr_assert_eq(now, base, "k=%ld: %zu bytes still held", k, now - base);
		free(p);
	}
	cr_assert(failures > 5, "the injected failures never hit (%d)", failures);
	char *out;
	tu_sh(&out, NULL, "ls -A '%s' | grep -c tmp || true", tu_dir);
	cr_assert_str_eq(out, "0\n", "temporary files left: %s", out);
	free(out);
}
