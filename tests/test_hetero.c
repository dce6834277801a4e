/* test_hetero.c: typed datasets (format version 2): the typed writer against a reference of
 * what was written, the reader's refusals naming the file, fault injection on the writer. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "../graph/dataset_internal.h"
#include "../graph/npy.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

TU_SCRATCH_SUITE(hetero, 60);

/* Three types: paper (target, float32 features, labels), author (float16 features), field
 * (featureless); three relations, one of them paper -> paper with self loops. */
enum { PAPER, AUTHOR, FIELD };
static const char *const tnames[3] = {"paper", "author", "field"};
static const int64_t tcount[3] = {40, 30, 7};
static const int64_t tdim[3] = {5, 3, 0};
#define C 4
#define NREL 3
#define NE 160 /* edges given per relation, repeats included */

typedef struct rel_def {
	int src, dst;
	const char *name;
	int64_t s[NE], d[NE];
} rel_def;

static rel_def rels[NREL] = {{AUTHOR, PAPER, "writes"}, {PAPER, PAPER, "cites"}, {PAPER, FIELD, "has_topic"}};

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* Each relation's edges: pseudo-random, the last 20 repeating earlier ones, and for
 * paper -> paper some self loops. */
static void make_edges(void)
{
	uint64_t x = 12345;
	for (int r = 0; r < NREL; r++) {
		rel_def *d = &rels[r];
		for (int i = 0; i < NE; i++) {
			if (i >= NE - 20) {
				d->s[i] = d->s[i - 100];
				d->d[i] = d->d[i - 100];
				continue;
			}
			d->s[i] = (int64_t)(lcg(&x) % (uint64_t)tcount[d->src]);
			d->d[i] = (int64_t)(lcg(&x) % (uint64_t)tcount[d->dst]);
			if (d->src == d->dst && i % 17 == 0)
				d->d[i] = d->s[i];
		}
	}
}

static float feat32(int64_t v, int j) { return (float)v + (float)j / 8; }
static uint16_t feat16(int64_t v, int j) { return (uint16_t)(0x3c00 + v * 4 + j); }
static int32_t label(int64_t v) { return v % 9 == 0 ? -1 : (int32_t)(v % C); }

/* Write the typed dataset at p (mem_bytes: the relations' build budget; 0 in memory).
 * Returns the first failing status, the writer aborted then. */
static int write_typed(const char *p, size_t mem_bytes)
{
	burrow_writer *w;
	int st, t[3];
	make_edges();
	if ((st = burrow_writer_open(&w, p, "tiny-typed", NULL)))
		return st;
	for (int i = 0; i < 3; i++)
		if ((st = burrow_writer_add_type(w, tnames[i], tcount[i], &t[i])))
			goto fail;
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.mem_bytes = mem_bytes;
	co.spill_dir = tu_dir;
	for (int r = 0; r < NREL; r++) {
		if ((st = burrow_writer_relation_begin(w, t[rels[r].src], rels[r].name, t[rels[r].dst], &co)))
			goto fail;
		for (int i = 0; i < NE; i += 37) /* in uneven chunks */
			if ((st = burrow_writer_relation_add(w, rels[r].s + i, rels[r].d + i, (size_t)BW_MIN(37, NE - i))))
				goto fail;
		if ((st = burrow_writer_relation_end(w)))
			goto fail;
	}
	if ((st = burrow_writer_type_features_begin(w, t[PAPER], tdim[PAPER], BURROW_DTYPE_F32)))
		goto fail;
	for (int64_t v = 0; v < tcount[PAPER]; v++) {
		float row[5];
		for (int j = 0; j < 5; j++)
			row[j] = feat32(v, j);
		if ((st = burrow_writer_features_append(w, row, 1)))
			goto fail;
	}
	if ((st = burrow_writer_features_end(w)) ||
	    (st = burrow_writer_type_features_begin(w, t[AUTHOR], tdim[AUTHOR], BURROW_DTYPE_F16)))
		goto fail;
	uint16_t arow[30 * 3];
	for (int64_t v = 0; v < tcount[AUTHOR]; v++)
		for (int j = 0; j < 3; j++)
			arow[v * 3 + j] = feat16(v, j);
	if ((st = burrow_writer_features_append(w, arow, 30)) || (st = burrow_writer_features_end(w)) ||
	    (st = burrow_writer_set_target(w, t[PAPER])))
		goto fail;
	int32_t lab[40];
	for (int64_t v = 0; v < 40; v++)
		lab[v] = label(v);
	int64_t ids[20];
	for (int i = 0; i < 20; i++)
		ids[i] = 2 * i + 1; /* train: odd papers */
	if ((st = burrow_writer_put_labels(w, lab, 40, C)) || (st = burrow_writer_put_split(w, 0, ids, 20)))
		goto fail;
	for (int i = 0; i < 10; i++)
		ids[i] = 2 * i, ids[10 + i] = 20 + 2 * i;
	if ((st = burrow_writer_put_split(w, 1, ids, 10)) || (st = burrow_writer_put_split(w, 2, ids + 10, 10)) ||
	    (st = burrow_writer_set_source(w, "{\"test\": \"typed\"}")))
		goto fail;
	return burrow_writer_commit(w);
fail:
	burrow_writer_abort(w);
	return st;
}

/* The reference CSR of relation r (rows = dst ids, sorted distinct src ids). */
static int64_t ref_csr(int r, int64_t *indptr, int64_t *indices)
{
	const rel_def *d = &rels[r];
	const int64_t ns = tcount[d->src], nd = tcount[d->dst];
	int64_t e = 0;
	indptr[0] = 0;
	for (int64_t v = 0; v < nd; v++) {
		for (int64_t u = 0; u < ns; u++) {
			bool has = false;
			for (int i = 0; i < NE && !has; i++)
				has = d->s[i] == u && d->d[i] == v;
			if (has)
				indices[e++] = u;
		}
		indptr[v + 1] = e;
	}
	return e;
}

static void load(const char *dir, const char *rel, burrow_npy_array *a)
{
	char *p = tu_path(dir, "%s", rel);
	cr_assert_eq(burrow_npy_read(p, a), 0, "%s", burrow_last_error());
	free(p);
}

/* The files of the directory, array by array, against what was written. */
static void check_files(const char *p)
{
	for (int r = 0; r < NREL; r++) {
		int64_t ip[64], ix[NE];
		const int64_t e = ref_csr(r, ip, ix), nd = tcount[rels[r].dst];
		char rel[256];
		burrow_npy_array a, b;
		snprintf(rel, sizeof rel, "relations/%s___%s___%s/indptr.npy", tnames[rels[r].src], rels[r].name,
			 tnames[rels[r].dst]);
		load(p, rel, &a);
		cr_assert_eq(a.dtype, BURROW_DTYPE_I64);
		cr_assert_eq(a.count, nd + 1, "%s", rel);
		cr_assert_eq(memcmp(a.data, ip, (size_t)(nd + 1) * 8), 0, "%s differs from the reference", rel);
		strcpy(strrchr(rel, '/'), "/indices.npy");
		load(p, rel, &b);
		cr_assert_eq(b.dtype, BURROW_DTYPE_I32, "%s", rel);
		cr_assert_eq(b.count, e, "%s: %lld ids, reference %lld", rel, (long long)b.count, (long long)e);
		for (int64_t j = 0; j < e; j++)
			cr_assert_eq(((int32_t *)b.data)[j], ix[j], "%s: entry %lld", rel, (long long)j);
		burrow_npy_free(&a);
		burrow_npy_free(&b);
	}
	burrow_npy_array f;
	load(p, "features/paper.npy", &f);
	cr_assert_eq(f.dtype, BURROW_DTYPE_F32);
	cr_assert(f.ndim == 2 && f.shape[0] == 40 && f.shape[1] == 5);
	for (int64_t v = 0; v < 40; v++)
		for (int j = 0; j < 5; j++)
			cr_assert_eq(((float *)f.data)[v * 5 + j], feat32(v, j));
	burrow_npy_free(&f);
	load(p, "features/author.npy", &f);
	cr_assert_eq(f.dtype, BURROW_DTYPE_F16);
	cr_assert(f.ndim == 2 && f.shape[0] == 30 && f.shape[1] == 3);
	for (int64_t v = 0; v < 30; v++)
		for (int j = 0; j < 3; j++)
			cr_assert_eq(((uint16_t *)f.data)[v * 3 + j], feat16(v, j));
	burrow_npy_free(&f);
	char *ff = tu_path(p, "features/field.npy");
	cr_assert(!tu_exists(ff), "a featureless type has a features file");
	free(ff);
	ff = tu_path(p, "features/paper.npy");
	cr_assert_eq(tu_size(ff), 4096 + 40 * 5 * 4, "data not at byte 4096");
	free(ff);
	load(p, "labels.npy", &f);
	cr_assert_eq(f.count, 40);
	for (int64_t v = 0; v < 40; v++)
		cr_assert_eq(((int32_t *)f.data)[v], label(v));
	burrow_npy_free(&f);
	load(p, "split/valid.npy", &f);
	cr_assert_eq(f.count, 10);
	cr_assert_eq(((int64_t *)f.data)[3], 6);
	burrow_npy_free(&f);
}

Test(hetero, writer_files_equal_the_reference)
{
	char *p = tu_path(tu_dir, "typed");
	cr_assert_eq(write_typed(p, 0), 0, "%s", burrow_last_error());
	check_files(p);
	/* the build that spills gives the same bytes */
	char *q = tu_path(tu_dir, "typed-spilled");
	cr_assert_eq(write_typed(q, 2048), 0, "%s", burrow_last_error());
	check_files(q);
	cr_assert_eq(tu_sh(NULL, NULL, "cd '%s' && for f in $(find relations -name '*.npy'); do cmp $f '%s'/$f || exit 1; done", p, q), 0);
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_eq(out, "typed\ntyped-spilled\n", "left behind: %s", out);
	free(out);
	free(p);
	free(q);
}

/* The reader's view of the directory against what was written. */
Test(hetero, reader_equals_what_was_written)
{
	char *p = tu_path(tu_dir, "typed");
	cr_assert_eq(write_typed(p, 0), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_str_eq(in->name, "tiny-typed");
	cr_assert_eq(in->num_types, 3);
	cr_assert_eq(in->num_relations, NREL);
	cr_assert_eq(in->num_nodes, 40);
	cr_assert_eq(in->feat_dim, 5);
	cr_assert_eq(in->num_classes, C);
	cr_assert(in->num_train == 20 && in->num_valid == 10 && in->num_test == 10);
	cr_assert(strstr(in->source_json, "\"test\":\"typed\""), "%s", in->source_json);
	cr_assert_null(burrow_dataset_graph(ds));
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	cr_assert_not_null(h);
	cr_assert_eq(h->num_types, 3);
	cr_assert_eq(h->target_type, PAPER);
	int64_t total = 0;
	for (int t = 0; t < 3; t++) {
		cr_assert_str_eq(h->type_names[t], tnames[t]);
		cr_assert_eq(h->type_nodes[t], tcount[t]);
		burrow_type_info ti;
		cr_assert_eq(burrow_dataset_type_info(ds, t, &ti), 0);
		cr_assert_str_eq(ti.name, tnames[t]);
		cr_assert_eq(ti.num_nodes, tcount[t]);
		cr_assert_eq(ti.feat_dim, tdim[t]);
		if (tdim[t]) {
			cr_assert_eq(ti.feat_dtype, t == PAPER ? BURROW_DTYPE_F32 : BURROW_DTYPE_F16);
			cr_assert_eq(ti.features_offset, 4096);
			cr_assert(strstr(ti.features_path, tnames[t]), "%s", ti.features_path);
		} else {
			cr_assert_null(ti.features_path);
		}
	}
	burrow_type_info ti;
	cr_assert_eq(burrow_dataset_type_info(ds, 3, &ti), BURROW_E_RANGE);
	cr_assert_str_eq(burrow_dataset_features_path(ds), (burrow_dataset_type_info(ds, PAPER, &ti), ti.features_path));
	cr_assert_eq(h->num_relations, NREL);
	for (int r = 0; r < NREL; r++) {
		const burrow_relation *rel = &h->rel[r];
		int64_t ip[64], ix[NE];
		const int64_t e = ref_csr(r, ip, ix);
		cr_assert_str_eq(rel->name, rels[r].name);
		cr_assert(rel->src_type == rels[r].src && rel->dst_type == rels[r].dst);
		cr_assert_eq(rel->graph.num_nodes, tcount[rels[r].dst]);
		cr_assert_eq(rel->graph.num_edges, e);
		cr_assert_eq(rel->graph.index_width, 4);
		cr_assert_eq(memcmp(rel->graph.indptr, ip, (size_t)(rel->graph.num_nodes + 1) * 8), 0, "%s", rel->name);
		for (int64_t j = 0; j < e; j++)
			cr_assert_eq(burrow_csr_index(&rel->graph, j), ix[j], "%s: entry %lld", rel->name, (long long)j);
		total += e;
	}
	cr_assert_eq(in->num_edges, total);
	/* self loops kept, duplicates once */
	const burrow_relation *cites = &h->rel[1];
	cr_assert_eq(cites->graph.indptr[cites->graph.num_nodes], cites->graph.num_edges);
	bool loop = false;
	for (int64_t v = 0; v < 40; v++)
		for (int64_t j = cites->graph.indptr[v]; j < cites->graph.indptr[v + 1]; j++)
			loop |= burrow_csr_index(&cites->graph, j) == v;
	cr_assert(loop, "the self loops of cites were dropped");
	const int32_t *lab = burrow_dataset_labels(ds);
	for (int64_t v = 0; v < 40; v++)
		cr_assert_eq(lab[v], label(v));
	int64_t n;
	const int64_t *tr = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &n);
	cr_assert_eq(n, 20);
	for (int i = 0; i < 20; i++)
		cr_assert_eq(tr[i], 2 * i + 1);
	const int64_t *te = burrow_dataset_split(ds, BURROW_SPLIT_TEST, &n);
	cr_assert(n == 10 && te[0] == 20 && te[9] == 38);
	cr_assert_eq(burrow_hetero_check(h), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	cr_assert_gt(burrow_dataset_disk_bytes(ds), 4096 * 2);
	burrow_dataset_close(ds);
	free(p);
}

/* Version 1 is read as before: no typed view, a graph, num_types 0. */
Test(hetero, version1_unchanged)
{
	char *p = tu_path(tu_dir, "v1");
	burrow_gen_opts o;
	burrow_gen_defaults(&o, BURROW_GEN_CSBM);
	o.num_nodes = 100;
	o.feat_dim = 4;
	o.threads = 1;
	cr_assert_eq(burrow_gen(&o, p), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_null(burrow_dataset_hetero(ds));
	cr_assert_not_null(burrow_dataset_graph(ds));
	cr_assert_eq(burrow_dataset_get_info(ds)->num_types, 0);
	cr_assert_eq(burrow_dataset_get_info(ds)->num_relations, 0);
	burrow_type_info ti;
	cr_assert_eq(burrow_dataset_type_info(ds, 0, &ti), BURROW_E_RANGE);
	burrow_dataset_close(ds);
	char *m = tu_path(p, "meta.json");
	char *text = tu_read(m, NULL);
	cr_assert(strstr(text, "\"version\":\t1") || strstr(text, "\"version\": 1"), "%s", text);
	free(text);
	free(m);
	free(p);
}

/* A typed graph the caller holds: a bad row or an id past its source type is refused. */
Test(hetero, check_of_a_caller_graph)
{
	const int64_t ip[4] = {0, 2, 2, 3};
	int32_t ix[3] = {0, 4, 1};
	burrow_hetero h = {.num_types = 2, .type_names = {"a", "b"}, .type_nodes = {5, 3}, .num_relations = 1,
			   .target_type = 1};
	h.rel[0] = (burrow_relation){.name = "r", .src_type = 0, .dst_type = 1,
				     .graph = {.num_nodes = 3, .num_edges = 3, .indptr = ip, .indices = ix, .index_width = 4}};
	cr_assert_eq(burrow_hetero_check(&h), 0, "%s", burrow_last_error());
	ix[1] = 5; /* past a's 5 nodes (but within a square 3 x 3? no: rows are b's) */
	cr_assert_eq(burrow_hetero_check(&h), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "a___r___b"), "%s", burrow_last_error());
	cr_assert(strstr(burrow_last_error(), "row 0"), "%s", burrow_last_error());
	ix[1] = 4;
	h.type_nodes[1] = 4; /* rows no longer the dst count */
	cr_assert_eq(burrow_hetero_check(&h), BURROW_E_FORMAT);
	h.type_nodes[1] = 3;
	h.type_names[1] = "a";
	cr_assert_eq(burrow_hetero_check(&h), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "twice"), "%s", burrow_last_error());
	h.type_names[1] = "b/";
	cr_assert_eq(burrow_hetero_check(&h), BURROW_E_FORMAT);
}

/* ------------------------------------------------------------ refusals */

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

/* Open must fail with BURROW_E_FORMAT in one line naming `file` and saying `what`. */
static void expect_refused(const char *p, const char *file, const char *what)
{
	burrow_dataset *ds = (burrow_dataset *)1;
	int st = burrow_dataset_open(&ds, p);
	const char *m = burrow_last_error();
	cr_assert_eq(st, BURROW_E_FORMAT, "%s: status %d, message: %s", what, st, m);
	cr_assert_null(ds);
	cr_assert(strstr(m, file), "message does not name %s: %s", file, m);
	cr_assert(strstr(m, what), "message lacks '%s': %s", what, m);
	cr_assert(!strchr(m, '\n'), "more than one line: %s", m);
}

/* Replace dir/rel by a 1-d array of `count` elements of t from data. */
static void put_npy(const char *dir, const char *rel, burrow_dtype t, int ndim, const int64_t *shape, const void *data)
{
	char *f = tu_path(dir, "%s", rel);
	cr_assert_eq(bw_npy_save(f, t, ndim, shape, data, ndim == 2 ? BW_NPY_FEATURE_ALIGN : BW_NPY_ALIGN), 0, "%s",
		     burrow_last_error());
	free(f);
}

static char *fresh(int k)
{
	char *p = tu_path(tu_dir, "bad%d", k);
	cr_assert_eq(write_typed(p, 0), 0, "%s", burrow_last_error());
	return p;
}

Test(hetero, meta_json_refusals_name_the_file)
{
	struct {
		const char *from, *to, *file, *what;
	} cases[] = {
		{"\"src\":\t\"author\"", "\"src\":\t\"nobody\"", "meta.json", "\"src\" names \"nobody\", not a node type"},
		{"\"dst\":\t\"field\"", "\"dst\":\t\"fields\"", "meta.json", "\"dst\" names \"fields\", not a node type"},
		{"\"name\":\t\"author\"", "\"name\":\t\"paper\"", "meta.json", "node type \"paper\" appears twice"},
		{"\"name\":\t\"author\"", "\"name\":\t\"au thor\"", "meta.json", "\"name\" must be 1 to 63"},
		{"\"name\":\t\"author\"", "\"name\":\t\"\"", "meta.json", "\"name\" must be 1 to 63"},
		{"\"name\":\t\"writes\"", "\"name\":\t\"wr/ites\"", "meta.json", "\"name\" must be 1 to 63"},
		{"\"num_nodes\":\t30", "\"num_nodes\":\t-1", "meta.json", "must be a non-negative integer"},
		{"\"target_type\":\t\"paper\"", "\"target_type\":\t\"venue\"", "meta.json", "\"target_type\" \"venue\" is not"},
		{"\"target_type\":\t\"paper\"", "\"target_type\":\tnull", "labels.npy", "no \"target_type\""},
		{"\"num_classes\":\t4", "\"num_classes\":\t0", "split/train.npy", "which has no labels"},
		{"\"index_dtype\":\t\"int32\"", "\"index_dtype\":\t\"int64\"", "meta.json", "\"index_dtype\" must be \"int32\""},
		{"\"feat_dtype\":\t\"float16\"", "\"feat_dtype\":\t\"float32\"", "features/author.npy",
		 "dtype is float16, expected float32"},
		{"\"feat_dim\":\t5", "\"feat_dim\":\t6", "features/paper.npy", "shape is [40, 5], expected [40, 6]"},
		{"\"num_nodes\":\t7", "\"num_nodes\":\t8", "relations/paper___has_topic___field/indptr.npy",
		 "shape is [8], expected [9]"},
		{"\"node_types\":\t[", "\"node_types\":\t[], \"x\": [", "meta.json", "1 to 16 types"},
		{"\"version\":\t2", "\"version\":\t3", "meta.json", "format version 3"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *p = fresh((int)i);
		rewrite_meta(p, cases[i].from, cases[i].to);
		expect_refused(p, cases[i].file, cases[i].what);
		free(p);
	}
	/* a relation twice: has_topic renamed to cites, its dst to paper */
	char *p = fresh(99);
	rewrite_meta(p, "\"name\":\t\"has_topic\"", "\"name\":\t\"cites\"");
	rewrite_meta(p, "\"dst\":\t\"field\"", "\"dst\":\t\"paper\"");
	expect_refused(p, "meta.json", "relation paper___cites___paper appears twice");
	free(p);
}

/* More than the caps: 17 types, 33 relations (meta.json written by hand). */
Test(hetero, caps_refused)
{
	char *p = fresh(0);
	char *m = tu_path(p, "meta.json");
	FILE *f = fopen(m, "w");
	fprintf(f, "{\"format\": \"burrow-dataset\", \"version\": 2, \"node_types\": [");
	for (int t = 0; t < 17; t++)
		fprintf(f, "%s{\"name\": \"t%d\", \"num_nodes\": 1}", t ? ", " : "", t);
	fprintf(f, "], \"relations\": [], \"num_classes\": 0}");
	fclose(f);
	expect_refused(p, "meta.json", "1 to 16 types");
	f = fopen(m, "w");
	fprintf(f, "{\"format\": \"burrow-dataset\", \"version\": 2, \"node_types\": [{\"name\": \"a\", \"num_nodes\": 1}], "
		   "\"relations\": [");
	for (int r = 0; r < 33; r++)
		fprintf(f, "%s{\"src\": \"a\", \"name\": \"r%d\", \"dst\": \"a\", \"num_edges\": 0}", r ? ", " : "", r);
	fprintf(f, "], \"num_classes\": 0}");
	fclose(f);
	expect_refused(p, "meta.json", "1 to 32 relations");
	free(m);
	free(p);
}

Test(hetero, file_refusals_name_the_file)
{
	burrow_npy_array a;
	/* an id past its source type's count (30 authors), in a row of papers */
	char *p = fresh(0);
	load(p, "relations/author___writes___paper/indices.npy", &a);
	((int32_t *)a.data)[a.count - 1] = 30;
	put_npy(p, "relations/author___writes___paper/indices.npy", BURROW_DTYPE_I32, 1, a.shape, a.data);
	expect_refused(p, "relations/author___writes___paper/indices.npy", "out of range [0, 30)");
	/* ... and the check reads the src count, not the dst's: 35 is a valid paper but no author */
	((int32_t *)a.data)[a.count - 1] = 35;
	put_npy(p, "relations/author___writes___paper/indices.npy", BURROW_DTYPE_I32, 1, a.shape, a.data);
	expect_refused(p, "relations/author___writes___paper/indices.npy", "out of range [0, 30)");
	burrow_npy_free(&a);
	free(p);
	/* rows not sorted */
	p = fresh(1);
	load(p, "relations/paper___cites___paper/indices.npy", &a);
	int32_t *ix = a.data;
	int64_t j = 0;
	while (j + 1 < a.count && ix[j] >= ix[j + 1])
		j++;
	int32_t tmp = ix[j];
	ix[j] = ix[j + 1];
	ix[j + 1] = tmp;
	put_npy(p, "relations/paper___cites___paper/indices.npy", BURROW_DTYPE_I32, 1, a.shape, a.data);
	expect_refused(p, "relations/paper___cites___paper/indices.npy", "not sorted");
	burrow_npy_free(&a);
	free(p);
	/* a feature file of the wrong shape and one of the wrong dtype */
	p = fresh(2);
	float zeros[40 * 5] = {0};
	put_npy(p, "features/paper.npy", BURROW_DTYPE_F32, 2, (int64_t[]){39, 5}, zeros);
	expect_refused(p, "features/paper.npy", "shape is [39, 5], expected [40, 5]");
	put_npy(p, "features/paper.npy", BURROW_DTYPE_F32, 2, (int64_t[]){40, 5}, zeros);
	put_npy(p, "features/author.npy", BURROW_DTYPE_F32, 2, (int64_t[]){30, 3}, zeros);
	expect_refused(p, "features/author.npy", "dtype is float32, expected float16");
	free(p);
	/* split ids past the target count; in two splits; labels past C */
	p = fresh(3);
	int64_t ids[10] = {20, 22, 24, 26, 28, 30, 32, 34, 36, 40};
	put_npy(p, "split/test.npy", BURROW_DTYPE_I64, 1, (int64_t[]){10}, ids);
	expect_refused(p, "split/test.npy", "paper node 40, outside [0, 40)");
	ids[9] = 1;
	put_npy(p, "split/test.npy", BURROW_DTYPE_I64, 1, (int64_t[]){10}, ids);
	expect_refused(p, "split/test.npy", "node 1 appears twice or in two splits");
	ids[9] = 38;
	put_npy(p, "split/test.npy", BURROW_DTYPE_I64, 1, (int64_t[]){10}, ids);
	int32_t lab[40] = {0};
	lab[17] = C;
	put_npy(p, "labels.npy", BURROW_DTYPE_I32, 1, (int64_t[]){40}, lab);
	expect_refused(p, "labels.npy", "node 17 has label 4, outside [-1, 4)");
	free(p);
	/* labels with no labels declared, and a missing relation file */
	p = fresh(4);
	rewrite_meta(p, "\"num_classes\":\t4", "\"num_classes\":\t0");
	rewrite_meta(p, "\"num_train\":\t20", "\"num_train\":\t0");
	rewrite_meta(p, "\"num_valid\":\t10", "\"num_valid\":\t0");
	rewrite_meta(p, "\"num_test\":\t10", "\"num_test\":\t0");
	expect_refused(p, "labels.npy", "present, but meta.json gives the target type no labels");
	char *f = tu_path(p, "labels.npy");
	unlink(f);
	free(f);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	burrow_dataset_close(ds);
	f = tu_path(p, "relations/paper___cites___paper/indptr.npy");
	unlink(f);
	free(f);
	burrow_dataset *d2 = (burrow_dataset *)1;
	cr_assert_eq(burrow_dataset_open(&d2, p), BURROW_E_NOTFOUND, "%s", burrow_last_error());
	cr_assert(strstr(burrow_last_error(), "relations/paper___cites___paper/indptr.npy"), "%s", burrow_last_error());
	free(p);
}

/* verify reads the contents again: a file changed after open is found. */
Test(hetero, verify_finds_a_change)
{
	char *p = fresh(0);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	/* in place, through a writable mapping of the same file: the reader's view changes */
	char *f = tu_path(p, "relations/paper___has_topic___field/indices.npy");
	FILE *fp = fopen(f, "r+b");
	int32_t bad = 99;
	fseek(fp, -4, SEEK_END);
	fwrite(&bad, 4, 1, fp);
	fclose(fp);
	cr_assert_eq(burrow_dataset_verify(ds), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "paper___has_topic___field/indices.npy"), "%s", burrow_last_error());
	cr_assert(strstr(burrow_last_error(), "out of range [0, 40)"), "%s", burrow_last_error());
	burrow_dataset_close(ds);
	free(f);
	free(p);
}

/* ------------------------------------------------------------ fault injection */

/* Every allocation of a whole typed write made to fail in turn (in memory, and spilling):
 * either the dataset is complete and equals the reference, or nothing is left, and no
 * library memory leaks. */
Test(hetero, allocation_failures_leave_nothing, .timeout = 120)
{
	size_t base = tu_mem_now();
	int failures = 0, done = 0;
	for (int spill = 0; spill < 2; spill++)
		for (long k = 0; k < 100000 && done <= spill; k += 1 + k / 32) { /* every one early, then sampled */
			char *p = tu_path(tu_dir, "f%d-%ld", spill, k);
			bw_mem_fail_after(k);
			int st = write_typed(p, spill ? 2048 : 0);
			bw_mem_fail_after(-1);
			cr_assert(st == 0 || st == BURROW_E_NOMEM, "k=%ld: status %d: %s", k, st, burrow_last_error());
			if (st) {
				failures++;
				cr_assert(!tu_exists(p), "k=%ld: a failed write left %s", k, p);
			} else {
				check_files(p);
				tu_rmrf(p);
				done++;
			}
			cr_assert_eq(tu_mem_now(), base, "k=%ld: %zu bytes still held", k, tu_mem_now() - base);
			free(p);
		}
	cr_assert_eq(done, 2, "the write never succeeded within the loop");
	cr_assert(failures > 50, "the injected failures never hit (%d)", failures);
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_eq(out, "", "left behind: %s", out);
	free(out);
}

static int fail_nth_rename_n;
static int fail_nth_rename(const char *from, const char *to)
{
	(void)from;
	(void)to;
	return --fail_nth_rename_n == 0 ? 5 /* EIO */ : 0;
}

/* A failing write (each file's rename into place, then the directory's) leaves nothing. */
Test(hetero, failed_writes_leave_nothing)
{
	int failures = 0;
	for (int n = 1; n < 40; n++) {
		char *p = tu_path(tu_dir, "w%d", n);
		fail_nth_rename_n = n;
		bw_rename_fault_hook = fail_nth_rename;
		int st = write_typed(p, 0);
		bw_rename_fault_hook = NULL;
		if (st) {
			failures++;
			cr_assert_eq(st, BURROW_E_IO, "n=%d: %s", n, burrow_last_error());
			cr_assert(!tu_exists(p), "n=%d: a failed write left %s", n, p);
		} else {
			tu_rmrf(p);
		}
		free(p);
		if (!st)
			break;
	}
	cr_assert_gt(failures, 10);
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_eq(out, "", "left behind: %s", out);
	free(out);
}

/* The writer's misuse: refused with the reason, never half a dataset. */
Test(hetero, writer_refusals)
{
	char *p = tu_path(tu_dir, "x");
	burrow_writer *w;
	int a, b;
	cr_assert_eq(burrow_writer_open(&w, p, "x", NULL), 0);
	cr_assert_eq(burrow_writer_add_type(w, "a", 10, &a), 0);
	cr_assert_eq(burrow_writer_add_type(w, "b", 5, &b), 0);
	cr_assert_eq(burrow_writer_add_type(w, "a", 3, &(int){0}), BURROW_E_INVAL);
	cr_assert_eq(burrow_writer_add_type(w, "a.b", 3, &(int){0}), BURROW_E_INVAL);
	cr_assert_eq(burrow_writer_features_begin(w, 10, 2, BURROW_DTYPE_F32), BURROW_E_INVAL);
	cr_assert_eq(burrow_writer_put_labels(w, (int32_t[10]){0}, 10, 2), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "target type"), "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_relation_begin(w, a, "r", 2, NULL), BURROW_E_RANGE);
	cr_assert_eq(burrow_writer_relation_begin(w, a, "r", b, NULL), 0);
	/* rectangular: 7 is a valid a but not a valid b */
	cr_assert_eq(burrow_writer_relation_add(w, (int64_t[]){7}, (int64_t[]){7}, 1), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "a___r___b") && strstr(burrow_last_error(), "destination id 7"), "%s",
		  burrow_last_error());
	cr_assert(strstr(burrow_last_error(), p) && !strstr(burrow_last_error(), ".tmp."), "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_relation_add(w, (int64_t[]){7}, (int64_t[]){4}, 1), 0);
	cr_assert_eq(burrow_writer_commit(w), BURROW_E_INVAL); /* relation not ended */
	cr_assert(!tu_exists(p));
	cr_assert_eq(burrow_writer_open(&w, p, "x", NULL), 0);
	cr_assert_eq(burrow_writer_add_type(w, "a", 10, &a), 0);
	cr_assert_eq(burrow_writer_commit(w), BURROW_E_INVAL); /* no relation */
	cr_assert(strstr(burrow_last_error(), "no relation"), "%s", burrow_last_error());
	cr_assert(!tu_exists(p));
	free(p);
}

/* ------------------------------------------------------------ the command line */

Test(hetero, cli_info_and_verify)
{
	char *p = fresh(0), *out = NULL, *err = NULL;
	cr_assert_eq(tu_sh(&out, &err, "'%s' info '%s'", tu_burrow(), p), 0, "%s", err);
	cr_assert(strstr(out, "typed: 3 node types, 3 relations"), "%s", out);
	cr_assert(strstr(out, "paper") && strstr(out, "5 x float32") && strstr(out, "(target)"), "%s", out);
	cr_assert(strstr(out, "3 x float16"), "%s", out);
	cr_assert(strstr(out, "field") && strstr(out, "none"), "%s", out);
	/* author writes paper: its edges over the 40 papers */
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0);
	const burrow_relation *wr = &burrow_dataset_hetero(ds)->rel[0];
	char line[256];
	snprintf(line, sizeof line, "author writes paper");
	cr_assert(strstr(out, line), "%s", out);
	snprintf(line, sizeof line, "%lld  %.2f\n", (long long)wr->graph.num_edges, (double)wr->graph.num_edges / 40);
	cr_assert(strstr(out, line), "no '%s' in\n%s", line, out);
	free(out);
	free(err);
	cr_assert_eq(tu_sh(&out, &err, "'%s' info '%s' --verify --json", tu_burrow(), p), 0, "%s", err);
	snprintf(line, sizeof line, "{\"src\": \"author\", \"name\": \"writes\", \"dst\": \"paper\", \"num_edges\": %lld, "
		 "\"avg_in_degree\": %.6g}", (long long)wr->graph.num_edges, (double)wr->graph.num_edges / 40);
	cr_assert(strstr(out, line), "no '%s' in\n%s", line, out);
	cr_assert(strstr(out, "{\"name\": \"field\", \"num_nodes\": 7, \"feat_dim\": 0, \"feat_dtype\": \"\"}"), "%s", out);
	cr_assert(strstr(out, "\"target_type\": \"paper\"") && strstr(out, "\"verified\": true"), "%s", out);
	cr_assert_eq(tu_sh(NULL, NULL, "printf '%%s' '%s' | python3 -c 'import json,sys; json.load(sys.stdin)'", out), 0,
		     "not JSON: %s", out);
	burrow_dataset_close(ds);
	free(out);
	free(err);
	cr_assert_eq(tu_sh(&out, &err, "'%s' info '%s' --verify", tu_burrow(), p), 0, "%s", err);
	cr_assert(strstr(out, "verify     ok"), "%s", out);
	free(out);
	free(err);
	/* a bad id: one line naming the file, exit 1 */
	burrow_npy_array a;
	load(p, "relations/paper___has_topic___field/indices.npy", &a);
	((int32_t *)a.data)[a.count - 1] = 40; /* a paper id past the 40 papers; the row stays sorted */
	put_npy(p, "relations/paper___has_topic___field/indices.npy", BURROW_DTYPE_I32, 1, a.shape, a.data);
	burrow_npy_free(&a);
	cr_assert_eq(tu_sh(&out, &err, "'%s' info '%s' --verify", tu_burrow(), p), 1, "%s", out);
	cr_assert(strstr(err, "relations/paper___has_topic___field/indices.npy") && strstr(err, "out of range [0, 40)"), "%s",
		  err);
	cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "more than one line: %s", err);
	free(out);
	free(err);
	free(p);
}

/* Commands that read homogeneous graphs refuse a typed dataset in one line, exit 1. */
Test(hetero, cli_consumers_refuse_a_typed_dataset, .timeout = 120)
{
	char *p = fresh(0), *out = NULL, *err = NULL;
	struct {
		const char *args, *what;
	} cases[] = {
		{"train %s --epochs 1", "a typed dataset (3 node types); train it with --model rgcn, rsage, rgat"},
		{"bench sample %s", "a typed dataset (3 node types); burrow bench sample reads homogeneous graphs only"},
		{"bench train %s", "a typed dataset (3 node types); burrow bench train reads homogeneous graphs only"},
		{"bench loader %s", "a typed dataset (3 node types); burrow bench loader reads homogeneous graphs only"},
		{"bench io %s", "a typed dataset (3 node types); burrow bench io reads homogeneous graphs only"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char args[512];
		snprintf(args, sizeof args, cases[i].args, p);
		int rc = tu_sh(&out, &err, "'%s' %s", tu_burrow(), args);
		cr_assert_eq(rc, 1, "%s: exit %d: %s", args, rc, err);
		cr_assert(strstr(err, cases[i].what), "%s: %s", args, err);
		cr_assert(strstr(err, p), "%s: %s", args, err);
		cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "%s: more than one line: %s", args, err);
		free(out);
		free(err);
	}
	free(p);
}

/* The pipeline line of a typed run says what its caches are: the target type's store's share,
 * filled as read (clock), not the homogeneous "N of M rows (policy)" that read "0 of M". */
Test(hetero, train_pipeline_line_says_the_typed_cache, .timeout = 120)
{
	char *dir = tu_tmpdir(), *d = tu_path(dir, "hs"), *out = NULL, *err = NULL;
	cr_assert_eq(tu_sh(NULL, &err, "'%s' gen hsbm '%s' --nodes 2000 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	int rc = tu_sh(&out, &err, "'%s' train '%s' --model rsage --layers 2 --fanout 3,3 --hidden 8 --epochs 1 "
				   "--max-batches 1 --eval-every 0 --threads 1 --quiet",
		       tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(strstr(out, "on the target type's") && strstr(out, "filled as read (clock)"), "%s", out);
	cr_assert(!strstr(out, " rows (clock)"), "%s", out);
	free(out);
	free(err);
	free(d);
	tu_rmrf(dir);
	free(dir);
}
