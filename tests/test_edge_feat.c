/* test_edge_feat.c: edge features: the CSR builder's edge ids (in memory, spilled, wide keys)
 * against a slow reference, edge_features.npy through the writer and the reader (meta.json,
 * shape, dtype, --verify's finiteness), and node features reduced from edge features. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../graph/csr_internal.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(edge_feat, 120);

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Edges with repeats (same and reversed direction) and self-loops. */
static void random_edges(int64_t n, size_t m, int64_t *src, int64_t *dst)
{
	for (size_t i = 0; i < m; i++) {
		src[i] = (int64_t)(next() % (uint64_t)n);
		dst[i] = next() % 5 == 0 ? src[i] % 3 : (int64_t)(next() % (uint64_t)n);
		if (next() % 16 == 0)
			dst[i] = src[i];
		if (i > 0 && next() % 6 == 0) { /* a repeat of an earlier edge, maybe reversed */
			size_t j = next() % i;
			bool rev = next() % 2;
			src[i] = rev ? dst[j] : src[j];
			dst[i] = rev ? src[j] : dst[j];
		}
	}
}

/* The reference edge id of entry (u, v): the first input edge that stores it. */
static int64_t ref_eid(const int64_t *src, const int64_t *dst, size_t m, const burrow_csr_opts *o, int64_t u,
		       int64_t v)
{
	for (size_t i = 0; i < m; i++) {
		if (o->drop_self_loops && src[i] == dst[i])
			continue;
		if ((src[i] == u && dst[i] == v) || (o->symmetrize && src[i] == v && dst[i] == u))
			return (int64_t)i;
	}
	return -1;
}

/* Build with edge ids under opts (mode: 0 in memory, 1 spilled, 2 spilled with wide keys) and
 * check: the same CSR as the build without edge ids; each entry's id the reference's. */
static void check_build(int64_t n, size_t m, bool sym, bool dedup, int mode)
{
	int64_t *src = malloc(m * sizeof *src), *dst = malloc(m * sizeof *dst);
	random_edges(n, m, src, dst);
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	o.symmetrize = sym;
	o.drop_duplicates = dedup;
	o.mem_bytes = mode ? 4096 : 0; /* a few hundred keys per run: many runs, merged in passes */
	burrow_csr_builder *plain, *ids;
	burrow_csr g0, g1;
	cr_assert_eq(burrow_csr_builder_open(&plain, n, &o), 0);
	o.edge_ids = true;
	cr_assert_eq(burrow_csr_builder_open(&ids, n, &o), 0, "%s", burrow_last_error());
	if (mode == 2) {
		bw_csr_builder_force_wide_keys(plain);
		bw_csr_builder_force_wide_keys(ids);
	}
	for (size_t i = 0; i < m; i += 333) {
		const size_t c = m - i < 333 ? m - i : 333;
		cr_assert_eq(burrow_csr_builder_add(plain, src + i, dst + i, c), 0);
		cr_assert_eq(burrow_csr_builder_add(ids, src + i, dst + i, c), 0);
	}
	if (mode)
		cr_assert_gt(bw_csr_builder_runs(ids), 2, "the build spilled");
	cr_assert_eq(burrow_csr_builder_finish(plain, &g0), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_csr_builder_finish(ids, &g1), 0, "%s", burrow_last_error());
	cr_assert_null(burrow_csr_builder_edge_ids(plain));
	const int64_t *eid = burrow_csr_builder_edge_ids(ids);
	cr_assert_not_null(eid);
	cr_assert_eq(g0.num_edges, g1.num_edges);
	cr_assert_eq(memcmp(g0.indptr, g1.indptr, (size_t)(n + 1) * sizeof *g0.indptr), 0);
	cr_assert_eq(memcmp(g0.indices, g1.indices, (size_t)g0.num_edges * (size_t)g0.index_width), 0);
	for (int64_t u = 0; u < n; u++)
		for (int64_t j = g1.indptr[u]; j < g1.indptr[u + 1]; j++) {
			const int64_t v = burrow_csr_index(&g1, j);
			if (dedup) {
				cr_assert_eq(eid[j], ref_eid(src, dst, m, &o, u, v), "mode %d: entry %lld (%lld, %lld): id %lld",
					     mode, (long long)j, (long long)u, (long long)v, (long long)eid[j]);
			} else { /* repeats kept: each a distinct input edge storing (u, v), in input order */
				const bool ok = (src[eid[j]] == u && dst[eid[j]] == v) || (sym && src[eid[j]] == v && dst[eid[j]] == u);
				cr_assert(ok, "mode %d: entry %lld (%lld, %lld) names edge %lld", mode, (long long)j,
					  (long long)u, (long long)v, (long long)eid[j]);
				if (j > g1.indptr[u] && burrow_csr_index(&g1, j - 1) == v)
					cr_assert_geq(eid[j], eid[j - 1]);
			}
		}
	burrow_csr_builder_close(plain);
	burrow_csr_builder_close(ids);
	free(src);
	free(dst);
}

Test(edge_feat, builder_edge_ids_follow_sort_symmetrize_and_dedup)
{
	for (int mode = 0; mode < 3; mode++) {
		check_build(300, 5000, true, true, mode);
		check_build(300, 5000, false, true, mode);
		check_build(50, 3000, true, false, mode);
	}
}

/* A small dataset: n nodes, m input edges symmetrized, features [m, de] with row i = i + k / 8. */
static char *write_edges(int64_t n, size_t m, int64_t de, int64_t *src, int64_t *dst, float *ef, size_t mem)
{
	char *p = tu_path(tu_dir, "ds");
	random_edges(n, m, src, dst);
	for (size_t i = 0; i < m; i++)
		for (int64_t k = 0; k < de; k++)
			ef[i * (size_t)de + (size_t)k] = (float)i + (float)k / 8;
	burrow_writer *w;
	burrow_csr_builder *b;
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	o.symmetrize = true;
	o.edge_ids = true;
	o.mem_bytes = mem;
	cr_assert_eq(burrow_writer_open(&w, p, "ef", NULL), 0);
	cr_assert_eq(burrow_csr_builder_open(&b, n, &o), 0);
	cr_assert_eq(burrow_csr_builder_add(b, src, dst, m), 0);
	cr_assert_eq(burrow_writer_put_builder(w, b, true), 0, "%s", burrow_last_error());
	burrow_csr_builder_close(b);
	cr_assert_eq(burrow_writer_put_edge_features(w, ef, (int64_t)m, de, BURROW_DTYPE_F32), 0, "%s",
		     burrow_last_error());
	cr_assert_eq(burrow_writer_features_from_edges(w, BURROW_EDGE_REDUCE_MEAN), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	return p;
}

Test(edge_feat, written_rows_follow_their_edges_and_reader_checks_them)
{
	enum { N = 40, M = 700, DE = 3 };
	int64_t src[M], dst[M];
	static float ef[M * DE];
	for (int spill = 0; spill < 2; spill++) {
		char *p = write_edges(N, M, DE, src, dst, ef, spill ? 2048 : 0);
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
		const burrow_dataset_info *in = burrow_dataset_get_info(ds);
		cr_assert_eq(in->edge_feat_dim, DE);
		cr_assert_eq(in->edge_feat_dtype, BURROW_DTYPE_F32);
		cr_assert_eq(burrow_dataset_edge_features_offset(ds), 4096);
		burrow_npy_array a, f;
		cr_assert_eq(burrow_npy_read(burrow_dataset_edge_features_path(ds), &a), 0);
		cr_assert_eq(a.shape[0], in->num_edges);
		cr_assert_eq(a.shape[1], DE);
		char *fp = tu_path(p, "features.npy");
		cr_assert_eq(burrow_npy_read(fp, &f), 0);
		free(fp);
		const burrow_csr *g = burrow_dataset_graph(ds);
		const float *e = a.data, *x = f.data;
		burrow_csr_opts o;
		burrow_csr_defaults(&o);
		o.symmetrize = true;
		for (int64_t u = 0; u < N; u++) {
			double mean0 = 0;
			for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++) {
				const int64_t r = ref_eid(src, dst, M, &o, u, burrow_csr_index(g, j));
				for (int k = 0; k < DE; k++)
					cr_assert_eq(e[j * DE + k], ef[r * DE + k], "entry %lld col %d", (long long)j, k);
				mean0 += e[j * DE];
			}
			const int64_t deg = g->indptr[u + 1] - g->indptr[u];
			cr_assert_float_eq(x[u * DE], deg ? mean0 / (double)deg : 0.0, 1e-3, "node %lld", (long long)u);
		}
		cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
		burrow_npy_free(&a);
		burrow_npy_free(&f);
		burrow_dataset_close(ds);
		tu_rmrf(p);
		free(p);
	}
}

/* Rewrite one float of edge_features.npy in place. */
static void poke(const char *p, int64_t at, float v)
{
	char *fp = tu_path(p, "edge_features.npy");
	FILE *f = fopen(fp, "r+b");
	cr_assert_not_null(f);
	fseek(f, 4096 + at * 4, SEEK_SET);
	fwrite(&v, 4, 1, f);
	fclose(f);
	free(fp);
}

Test(edge_feat, verify_refuses_a_non_finite_value_and_open_a_bad_shape)
{
	enum { N = 20, M = 100, DE = 2 };
	int64_t src[M], dst[M];
	static float ef[M * DE];
	char *p = write_edges(N, M, DE, src, dst, ef, 0);
	poke(p, 7, NAN);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "entry 3, column 1 is not finite"), "%s", burrow_last_error());
	burrow_dataset_close(ds);
	/* meta.json's dim no longer matching the file */
	char *out = NULL;
	cr_assert_eq(tu_sh(&out, NULL, "sed -i 's/\"edge_feat_dim\":[[:space:]]*2/\"edge_feat_dim\": 3/' '%s/meta.json'", p), 0);
	free(out);
	cr_assert_eq(burrow_dataset_open(&ds, p), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "edge_features.npy: shape is"), "%s", burrow_last_error());
	tu_rmrf(p);
	free(p);
}

Test(edge_feat, writer_refuses_rows_that_do_not_match)
{
	burrow_writer *w;
	const int64_t ip[3] = {0, 1, 2};
	const int32_t ix[2] = {1, 0};
	burrow_csr g = {.num_nodes = 2, .num_edges = 2, .indptr = ip, .indices = ix, .index_width = 4};
	float rows[6] = {0};
	char *p = tu_path(tu_dir, "w");
	cr_assert_eq(burrow_writer_open(&w, p, "w", NULL), 0);
	cr_assert_eq(burrow_writer_put_edge_features(w, rows, 2, 1, BURROW_DTYPE_F32), BURROW_E_INVAL, "before the graph");
	cr_assert_eq(burrow_writer_put_graph(w, &g, true), 0);
	cr_assert_eq(burrow_writer_put_edge_features(w, rows, 3, 1, BURROW_DTYPE_F32), BURROW_E_INVAL, "3 rows, 2 entries");
	cr_assert_eq(burrow_writer_put_edge_features(w, rows, 2, 3, BURROW_DTYPE_F32), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_get_info(ds)->edge_feat_dim, 3);
	burrow_dataset_close(ds);
	free(p);
}

/* Write text to dir/name. */
static char *put_text(const char *name, const char *text)
{
	char *p = tu_path(tu_dir, "%s", name);
	FILE *f = fopen(p, "w");
	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

Test(edge_feat, import_places_rows_at_their_edges_and_refuses_a_count_mismatch)
{
	/* edges: (1, 0) repeats (0, 1) once undirected; (3, 3) is a loop */
	char *e = put_text("e.txt", "0 1\n1 2\n2 0\n1 0\n3 3\n2 3\n");
	char *f = put_text("f.csv", "1,10\n2,20\n3,30\n4,40\n5,50\n6,60\n");
	char *f5 = put_text("f5.csv", "1,10\n2,20\n3,30\n4,40\n5,50\n");
	char *out = tu_path(tu_dir, "imp");
	burrow_import_opts o;
	burrow_import_defaults(&o);
	o.edges = e;
	o.edge_features = f;
	o.undirected = true;
	o.node_features_from_edges = true;
	o.edge_reduce = BURROW_EDGE_REDUCE_MAX;
	cr_assert_eq(burrow_import(out, &o), 0, "%s", burrow_last_error());
	burrow_npy_array a, x;
	char *ep = tu_path(out, "edge_features.npy"), *xp = tu_path(out, "features.npy");
	cr_assert_eq(burrow_npy_read(ep, &a), 0);
	cr_assert_eq(burrow_npy_read(xp, &x), 0);
	/* rows: 0: 1 (e0) 2 (e2); 1: 0 (e0) 2 (e1); 2: 0 (e2) 1 (e1) 3 (e5); 3: 2 (e5) */
	static const float want[8] = {1, 3, 1, 2, 3, 2, 6, 6}, wmax[4] = {3, 2, 6, 6};
	cr_assert_eq(a.shape[0], 8);
	for (int j = 0; j < 8; j++)
		cr_assert_eq(((float *)a.data)[2 * j], want[j], "entry %d", j);
	for (int v = 0; v < 4; v++)
		cr_assert_eq(((float *)x.data)[2 * v + 1], 10 * wmax[v], "node %d", v);
	burrow_npy_free(&a);
	burrow_npy_free(&x);
	char *err = NULL;
	/* the partitioner carries them (tests/test_partition_carry.c checks every row) */
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --quiet && %s info '%s/parts-2/part-0' --verify",
			   tu_burrow(), out, tu_burrow(), out),
		     0, "%s", err);
	free(err);
	o.edge_features = f5;
	o.overwrite = true;
	cr_assert_eq(burrow_import(out, &o), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "5 rows of edge features, but 6 edges were read"), "%s", burrow_last_error());
	o.features = f;
	cr_assert_eq(burrow_import(out, &o), BURROW_E_INVAL, "features and node features from edges exclude each other");
	free(e);
	free(f);
	free(f5);
	free(out);
	free(ep);
	free(xp);
}

/* The sampler's edge ids: with opts.edge_ids every block edge names the CSR entry it drew
 * (that entry's row is the destination's, its id the source's), and the batches are the
 * same bits as without them; the full block too. */
Test(edge_feat, sampler_edge_ids_name_the_drawn_entries_and_change_nothing_else)
{
	enum { N = 400, M = 6000 };
	static int64_t src[M], dst[M];
	random_edges(N, M, src, dst);
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = true;
	burrow_csr_builder *b;
	burrow_csr g;
	cr_assert_eq(burrow_csr_builder_open(&b, N, &co), 0);
	cr_assert_eq(burrow_csr_builder_add(b, src, dst, M), 0);
	cr_assert_eq(burrow_csr_builder_finish(b, &g), 0);
	int64_t ids[N];
	for (int64_t v = 0; v < N; v++)
		ids[v] = v;
	burrow_sampler *s[2];
	for (int k = 0; k < 2; k++) {
		burrow_sampler_opts so;
		burrow_sampler_defaults(&so);
		so.num_layers = 2;
		so.fanouts[0] = 4;
		so.fanouts[1] = -1;
		so.batch_size = 64;
		so.seed = 9;
		so.threads = 2;
		so.edge_ids = k == 1;
		cr_assert_eq(burrow_sampler_open(&s[k], &g, ids, N, &so), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_sampler_start(s[k], 0), 0);
	}
	burrow_batch *x[2];
	int batches = 0;
	while (burrow_sampler_next(s[0], &x[0]) == 0) {
		cr_assert_eq(burrow_sampler_next(s[1], &x[1]), 0);
		cr_assert_eq(x[0]->num_input, x[1]->num_input);
		cr_assert_eq(memcmp(x[0]->input_ids, x[1]->input_ids, (size_t)x[0]->num_input * 8), 0);
		for (int l = 0; l < x[0]->num_layers; l++) {
			const burrow_block *b0 = &x[0]->blocks[l], *b1 = &x[1]->blocks[l];
			cr_assert_null(b0->edge_ids);
			cr_assert_not_null(b1->edge_ids);
			cr_assert_eq(b0->num_edges, b1->num_edges);
			cr_assert_eq(memcmp(b0->indptr, b1->indptr, (size_t)(b0->num_dst + 1) * 8), 0);
			cr_assert_eq(memcmp(b0->indices, b1->indices, (size_t)b0->num_edges * 4), 0);
			for (int64_t i = 0; i < b1->num_dst; i++)
				for (int64_t e = b1->indptr[i]; e < b1->indptr[i + 1]; e++) {
					const int64_t v = x[1]->input_ids[i], u = x[1]->input_ids[b1->indices[e]], p = b1->edge_ids[e];
					cr_assert(p >= g.indptr[v] && p < g.indptr[v + 1], "block %d edge %lld: entry %lld is not in row %lld",
						  l, (long long)e, (long long)p, (long long)v);
					cr_assert_eq(burrow_csr_index(&g, p), u, "block %d edge %lld", l, (long long)e);
					if (e > b1->indptr[i])
						cr_assert_neq(p, b1->edge_ids[e - 1], "an entry drawn twice");
				}
		}
		burrow_sampler_release(s[0], x[0]);
		burrow_sampler_release(s[1], x[1]);
		batches++;
	}
	cr_assert_eq(batches, 7);
	cr_assert_eq(burrow_sampler_full(s[1], 10, 50, &x[1]), 0);
	const burrow_block *fb = &x[1]->blocks[0];
	for (int64_t e = 0; e < fb->num_edges; e++)
		cr_assert_eq(fb->edge_ids[e], g.indptr[10] + e, "the full block's entries are the rows' own");
	burrow_sampler_release(s[1], x[1]);
	burrow_sampler_close(s[0]);
	burrow_sampler_close(s[1]);
	burrow_csr_builder_close(b);
}

/* burrow train --edge-weight: weights of one with sage's sum give the very losses of the
 * unweighted run (the weighted path gathers, aggregates and back-propagates the same
 * numbers); other weights change them; what it cannot weigh is refused in one line. */
Test(edge_feat, train_edge_weight_ones_equal_unweighted_and_refusals)
{
	FILE *e = fopen(tu_path(tu_dir, "e.txt"), "w"), *w1 = fopen(tu_path(tu_dir, "w1.csv"), "w"),
	     *wr = fopen(tu_path(tu_dir, "wr.csv"), "w");
	cr_assert(e && w1 && wr);
	for (int i = 0; i < 1500; i++) {
		fprintf(e, "%llu %llu\n", (unsigned long long)(next() % 150), (unsigned long long)(next() % 150));
		fprintf(w1, "1\n");
		fprintf(wr, "%.3f\n", (double)(next() % 1000) / 500.0);
	}
	fclose(e);
	fclose(w1);
	fclose(wr);
	char *err = NULL;
	char *b = realpath(tu_burrow(), NULL); /* the commands run in tu_dir */
	cr_assert_not_null(b);
	/* features and labels: a dataset generated, its graph replaced by the imported one's */
	cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s gen csbm g --nodes 150 --feat-dim 8 --classes 3 --seed 2 >/dev/null && "
			   "%s import one --edges e.txt --edge-features w1.csv --undirected --num-nodes 150 "
			   "--features g/features.npy --labels g/labels.npy --split 0.6,0.2,0.2 --quiet && "
			   "%s import rnd --edges e.txt --edge-features wr.csv --undirected --num-nodes 150 "
			   "--features g/features.npy --labels g/labels.npy --split 0.6,0.2,0.2 --quiet",
			   tu_dir, b, b, b), 0, "%s", err);
	free(err);
	const char *common = "--aggr sum --epochs 3 --fanout 5,5 --layers 2 --hidden 16 --batch 32 --seed 4 --threads 1";
	static const char *const runs[4][2] = {{"one", ""}, {"one", "--edge-weight 0"}, {"rnd", ""}, {"rnd", "--edge-weight 0"}};
	char losses[4][8][40];
	for (int r = 0; r < 4; r++) {
		cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s train %s %s %s --log l%d.json --quiet", tu_dir, b, runs[r][0],
				   common, runs[r][1], r), 0, "%s", err);
		free(err);
		char *lp = tu_path(tu_dir, "l%d.json", r);
		cr_assert_eq(tu_log_losses(lp, losses[r], 8), 3, "run %d", r);
		free(lp);
	}
	for (int k = 0; k < 3; k++) {
		cr_assert_str_eq(losses[0][k], losses[1][k], "weights of one: epoch %d", k);
		cr_assert_str_eq(losses[0][k], losses[2][k], "the same graph and features: epoch %d", k);
	}
	cr_assert_str_neq(losses[2][2], losses[3][2], "other weights change the losses");
	cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s train one --edge-weight 1 --epochs 1 --quiet", tu_dir, b), 1);
	cr_assert(err && strstr(err, "--edge-weight column 1, the edge features have 1"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s train one --edge-weight 0 --aggr max --epochs 1 --quiet", tu_dir, b), 1);
	cr_assert(err && strstr(err, "not sage max"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s train g --edge-weight 0 --epochs 1 --quiet", tu_dir, b), 1);
	cr_assert(err && strstr(err, "the dataset has no edge features"), "%s", err);
	free(err);
	free(b);
}

/* The "best valid V at epoch E: test accuracy T" line's T from burrow train's stdout. */
static double final_test_acc(const char *out)
{
	const char *p = out ? strstr(out, "test accuracy ") : NULL;
	cr_assert_not_null(p, "no final line in: %s", out ? out : "(nothing)");
	return atof(p + strlen("test accuracy "));
}

/* GAT's attention with edge features (--edge-features, on by default): on a graph of weak
 * node features and low homophily whose edge features say which edges join one class, it
 * beats GAT without them by a wide margin; off gives the very losses of the same graph
 * generated without edge features; checkpoints hold the edge term (eval gives the run's
 * accuracy again) and a run with the other setting refuses to resume from them. */
Test(edge_feat, train_gat_edge_features_beat_without_and_checkpoints_hold_them)
{
	char *err = NULL, *out = NULL;
	char *b = realpath(tu_burrow(), NULL);
	cr_assert_not_null(b);
	const char *g = "--nodes 1500 --avg-degree 10 --homophily 0.3 --signal 0.7 --feat-dim 16 --seed 3 --quiet";
	cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s gen csbm ef %s --edge-feat-dim 4 --edge-signal 1.5 && %s gen csbm "
			   "plain %s", tu_dir, b, g, b, g), 0, "%s", err);
	free(err);
	const char *fg = "--model gat --full-graph --epochs 50 --hidden 64 --heads 4 --layers 2 --lr 0.01 --threads 1 --quiet";
	double acc[2];
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(tu_sh(&out, &err, "cd '%s' && %s train ef %s --edge-features %s", tu_dir, b, fg, k ? "off" : "on"),
			     0, "%s", err);
		acc[k] = final_test_acc(out);
		free(out);
		free(err);
	}
	cr_assert_geq(acc[0], acc[1] + 0.12, "gat with edge features: test accuracy %g, without %g", acc[0], acc[1]);
	/* off on a dataset with edge features: the losses of the dataset without them */
	const char *mb = "--model gat --epochs 2 --hidden 16 --heads 2 --layers 2 --fanout 5,5 --batch 128 --threads 1 --quiet";
	char losses[3][8][40];
	static const char *const runs[3][2] = {{"plain", ""}, {"ef", "--edge-features off"}, {"ef", "--checkpoint ck"}};
	for (int r = 0; r < 3; r++) {
		cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s train %s %s %s --log m%d.json", tu_dir, b, runs[r][0], mb,
				   runs[r][1], r), 0, "%s", err);
		free(err);
		char *lp = tu_path(tu_dir, "m%d.json", r);
		cr_assert_eq(tu_log_losses(lp, losses[r], 8), 2, "run %d", r);
		free(lp);
	}
	for (int k = 0; k < 2; k++)
		cr_assert_str_eq(losses[0][k], losses[1][k], "--edge-features off: epoch %d", k);
	cr_assert_str_neq(losses[1][1], losses[2][1], "edge features change the losses");
	/* the checkpoint's model, edge term included, scores as the run's last evaluation did */
	size_t len;
	char *lp2 = tu_path(tu_dir, "m2.json"), *log = tu_read(lp2, &len), *last = log ? strstr(log, "\"epoch\": 2,") : NULL;
	free(lp2);
	cr_assert_not_null(last);
	const char *v = strstr(last, "\"valid_acc\": ");
	cr_assert_not_null(v);
	const double want = atof(v + strlen("\"valid_acc\": "));
	cr_assert_eq(tu_sh(&out, &err, "cd '%s' && %s eval ef --checkpoint ck/last.ckpt --json --threads 1", tu_dir, b), 0,
		     "%s", err);
	const char *ev = out ? strstr(out, "\"valid_acc\": ") : NULL;
	cr_assert(ev && fabs(atof(ev + strlen("\"valid_acc\": ")) - want) < 1e-12, "eval: %s, the run: %g", out, want);
	free(out);
	free(err);
	free(log);
	cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s train ef %s --epochs 3 --checkpoint ck --resume --edge-features off",
			   tu_dir, b, mb), 1);
	cr_assert(err && strstr(err, "edge features of width 4, the trainer's reads 0"), "%s", err);
	free(err);
	free(b);
}

/* --edge-weight in full-graph training: weights of one give the unweighted losses, others
 * change them (gcn, whose norms then come from the weighted degrees, trains too). */
Test(edge_feat, train_edge_weight_full_graph_ones_equal_unweighted)
{
	FILE *e = fopen(tu_path(tu_dir, "e.txt"), "w"), *w1 = fopen(tu_path(tu_dir, "w1.csv"), "w"),
	     *wr = fopen(tu_path(tu_dir, "wr.csv"), "w");
	cr_assert(e && w1 && wr);
	for (int i = 0; i < 1500; i++) {
		fprintf(e, "%llu %llu\n", (unsigned long long)(next() % 150), (unsigned long long)(next() % 150));
		fprintf(w1, "1\n");
		fprintf(wr, "%.3f\n", (double)(next() % 1000) / 500.0);
	}
	fclose(e);
	fclose(w1);
	fclose(wr);
	char *err = NULL;
	char *b = realpath(tu_burrow(), NULL);
	cr_assert_not_null(b);
	cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s gen csbm g --nodes 150 --feat-dim 8 --classes 3 --seed 2 >/dev/null && "
			   "%s import one --edges e.txt --edge-features w1.csv --undirected --num-nodes 150 "
			   "--features g/features.npy --labels g/labels.npy --split 0.6,0.2,0.2 --quiet && "
			   "%s import rnd --edges e.txt --edge-features wr.csv --undirected --num-nodes 150 "
			   "--features g/features.npy --labels g/labels.npy --split 0.6,0.2,0.2 --quiet",
			   tu_dir, b, b, b), 0, "%s", err);
	free(err);
	const char *common = "--full-graph --aggr sum --epochs 3 --layers 2 --hidden 16 --seed 4 --threads 1";
	static const char *const runs[5][2] = {{"one", ""}, {"one", "--edge-weight 0"}, {"rnd", ""}, {"rnd", "--edge-weight 0"},
					       {"rnd", "--edge-weight 0 --model gcn"}};
	char losses[5][8][40];
	for (int r = 0; r < 5; r++) {
		cr_assert_eq(tu_sh(NULL, &err, "cd '%s' && %s train %s %s %s --log f%d.json --quiet", tu_dir, b, runs[r][0],
				   common, runs[r][1], r), 0, "%s", err);
		free(err);
		char *lp = tu_path(tu_dir, "f%d.json", r);
		cr_assert_eq(tu_log_losses(lp, losses[r], 8), 3, "run %d", r);
		free(lp);
	}
	for (int k = 0; k < 3; k++) {
		cr_assert_str_eq(losses[0][k], losses[1][k], "weights of one: epoch %d", k);
		cr_assert_str_eq(losses[0][k], losses[2][k], "the same graph and features: epoch %d", k);
	}
	cr_assert_str_neq(losses[2][2], losses[3][2], "other weights change the losses");
	free(b);
}
