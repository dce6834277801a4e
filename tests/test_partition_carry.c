/* test_partition_carry.c: what the parts carry beyond graph, features, labels and node splits:
 * edge features, multi-label labels and edge splits, read back through the parts' maps and
 * checked against the unpartitioned dataset (every row accounted for exactly once). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "../graph/npy.h"
#include "util.h"
#include "link_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(partition_carry, .init = setup, .fini = teardown, .timeout = 120);

#define EDIM 3
#define TASKS 4

/* A directed graph (repeats and self loops kept) whose edge features name their CSR entry
 * (row j: j, src, dst), multi-label labels, float32 node features and a node split. */
static char *make_featured(int64_t n, uint64_t seed)
{
	char *out = tu_path(dir, "ef");
	uint64_t s = seed;
	int64_t *ip = calloc((size_t)n + 1, sizeof *ip);
	for (int64_t v = 0; v < n; v++)
		ip[v + 1] = ip[v] + (v % 11 == 10 ? 0 : 1 + (int64_t)(tu_link_rng(&s) % 6));
	const int64_t m = ip[n];
	int32_t *ind = malloc((size_t)m * sizeof *ind);
	for (int64_t v = 0; v < n; v++) {
		for (int64_t j = ip[v]; j < ip[v + 1]; j++) /* some locality, some repeats */
			ind[j] = (int32_t)(j % 5 == 0 ? v : (v + 1 + (int64_t)(tu_link_rng(&s) % 9)) % n);
		for (int64_t a = ip[v] + 1; a < ip[v + 1]; a++)
			for (int64_t b = a; b > ip[v] && ind[b - 1] > ind[b]; b--) {
				int32_t t = ind[b];
				ind[b] = ind[b - 1];
				ind[b - 1] = t;
			}
	}
	burrow_csr g = {.num_nodes = n, .num_edges = m, .indptr = ip, .indices = ind, .index_width = 4};
	burrow_writer *w;
	cr_assert_eq(burrow_writer_open(&w, out, "ef", NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_graph(w, &g, false), 0, "%s", burrow_last_error());
	float *ef = malloc((size_t)m * EDIM * sizeof *ef);
	for (int64_t v = 0; v < n; v++)
		for (int64_t j = ip[v]; j < ip[v + 1]; j++) {
			ef[j * EDIM] = (float)j;
			ef[j * EDIM + 1] = (float)v;
			ef[j * EDIM + 2] = (float)ind[j];
		}
	cr_assert_eq(burrow_writer_put_edge_features(w, ef, m, EDIM, BURROW_DTYPE_F32), 0, "%s", burrow_last_error());
	float *x = malloc((size_t)n * 2 * sizeof *x);
	for (int64_t v = 0; v < n; v++)
		x[2 * v] = x[2 * v + 1] = (float)v;
	cr_assert_eq(burrow_writer_features_begin(w, n, 2, BURROW_DTYPE_F32), 0);
	cr_assert_eq(burrow_writer_features_append(w, x, n), 0);
	cr_assert_eq(burrow_writer_features_end(w), 0);
	int8_t *y = malloc((size_t)n * TASKS);
	for (int64_t i = 0; i < n * TASKS; i++)
		y[i] = (int8_t)((i * 7 + i / TASKS) % 3 - 1);
	cr_assert_eq(burrow_writer_put_multilabels(w, y, n, TASKS), 0, "%s", burrow_last_error());
	int64_t *tr = malloc((size_t)n * sizeof *tr), nt = 0;
	for (int64_t v = 0; v < n; v += 2)
		tr[nt++] = v;
	cr_assert_eq(burrow_writer_put_split(w, 0, tr, nt), 0);
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	free(ip);
	free(ind);
	free(ef);
	free(x);
	free(y);
	free(tr);
	return out;
}

/* The parts of ds in out, with the maps from local to input ids. */
typedef struct parts_view {
	burrow_parts *ps;
	int k;
	int64_t n;
	int64_t *orig_of_new; /* [n] */
	burrow_part *p[8];
} parts_view;

static void view_open(parts_view *pv, const char *out)
{
	memset(pv, 0, sizeof *pv);
	cr_assert_eq(burrow_parts_open(&pv->ps, out), 0, "%s", burrow_last_error());
	const burrow_parts_info *pi = burrow_parts_get_info(pv->ps);
	pv->k = pi->num_parts;
	pv->n = pi->node_offsets[pv->k];
	pv->orig_of_new = malloc((size_t)pv->n * sizeof *pv->orig_of_new);
	for (int i = 0; i < pv->k; i++) {
		cr_assert_eq(burrow_part_open(&pv->p[i], pv->ps, i), 0, "%s", burrow_last_error());
		const burrow_part_info *in = burrow_part_get_info(pv->p[i]);
		for (int64_t l = 0; l < in->num_owned; l++)
			pv->orig_of_new[in->first_id + l] = in->orig_ids[l];
	}
}

static void view_close(parts_view *pv)
{
	for (int i = 0; i < pv->k; i++)
		burrow_part_close(pv->p[i]);
	burrow_parts_close(pv->ps);
	free(pv->orig_of_new);
}

/* The input id of part i's local id l. */
static int64_t input_of(const parts_view *pv, int i, int64_t l)
{
	const burrow_part_info *in = burrow_part_get_info(pv->p[i]);
	cr_assert(l >= 0 && l < in->num_owned + in->num_halo, "local id %lld out of range", (long long)l);
	return l < in->num_owned ? in->orig_ids[l] : pv->orig_of_new[in->halo_ids[l - in->num_owned]];
}

static void partition(const char *ds, const char *out, int k)
{
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = k;
	o.out_dir = out;
	o.balance = BURROW_BALANCE_NODES;
	cr_assert_eq(burrow_partition(ds, &o, NULL), 0, "%s", burrow_last_error());
	for (int i = 0; i < k; i++) {
		char *err = NULL;
		int rc = tu_sh(NULL, &err, "%s info %s/part-%d --verify", tu_burrow(), out, i);
		cr_assert_eq(rc, 0, "part %d: %s", i, err);
		free(err);
	}
}

Test(partition_carry, edge_features_and_multilabels)
{
	char *ds = make_featured(900, 3), *out = tu_path(dir, "p");
	partition(ds, out, 3);
	burrow_dataset *in;
	cr_assert_eq(burrow_dataset_open(&in, ds), 0);
	const burrow_csr *g = burrow_dataset_graph(in);
	const int8_t *y = burrow_dataset_multilabels(in);
	burrow_npy_array ef;
	cr_assert_eq(burrow_npy_read(burrow_dataset_edge_features_path(in), &ef), 0);
	const float *f = ef.data;
	char *seen = calloc((size_t)g->num_edges, 1);
	parts_view pv;
	view_open(&pv, out);
	int64_t halo_edges = 0;
	for (int i = 0; i < pv.k; i++) {
		const burrow_dataset *pd = burrow_part_dataset(pv.p[i]);
		const burrow_dataset_info *di = burrow_dataset_get_info(pd);
		const burrow_part_info *pin = burrow_part_get_info(pv.p[i]);
		cr_assert_eq(di->edge_feat_dim, EDIM);
		cr_assert_eq(di->num_tasks, TASKS);
		const burrow_csr *pg = burrow_dataset_graph(pd);
		burrow_npy_array pef;
		cr_assert_eq(burrow_npy_read(burrow_dataset_edge_features_path(pd), &pef), 0);
		cr_assert_eq(pef.shape[0], pg->num_edges);
		const float *pf = pef.data;
		for (int64_t l = 0; l < pin->num_owned; l++) {
			const int64_t v = input_of(&pv, i, l);
			for (int64_t j = pg->indptr[l]; j < pg->indptr[l + 1]; j++) {
				const int64_t u = input_of(&pv, i, burrow_csr_index(pg, j)), o = (int64_t)pf[j * EDIM];
				cr_assert(o >= 0 && o < g->num_edges, "part %d entry %lld: feature row %lld", i, (long long)j,
					  (long long)o);
				cr_assert(!seen[o], "input entry %lld carried twice", (long long)o);
				seen[o] = 1;
				/* the row is the input entry's whole row, and that entry is (v, u) */
				cr_assert_eq(memcmp(pf + j * EDIM, f + o * EDIM, EDIM * sizeof *f), 0);
				cr_assert(o >= g->indptr[v] && o < g->indptr[v + 1], "entry %lld is not row %lld's", (long long)o,
					  (long long)v);
				cr_assert_eq(burrow_csr_index(g, o), u, "entry %lld: %lld, expected %lld", (long long)o,
					     (long long)burrow_csr_index(g, o), (long long)u);
				halo_edges += burrow_csr_index(pg, j) >= pin->num_owned;
			}
		}
		const int8_t *py = burrow_dataset_multilabels(pd);
		for (int64_t l = 0; l < pin->num_owned + pin->num_halo; l++)
			for (int t = 0; t < TASKS; t++)
				cr_assert_eq(py[l * TASKS + t], l < pin->num_owned ? y[input_of(&pv, i, l) * TASKS + t] : -1,
					     "part %d node %lld task %d", i, (long long)l, t);
		burrow_npy_free(&pef);
	}
	for (int64_t o = 0; o < g->num_edges; o++)
		cr_assert(seen[o], "input entry %lld is in no part", (long long)o);
	cr_assert_gt(halo_edges, 0);
	view_close(&pv);
	burrow_npy_free(&ef);
	free(seen);
	burrow_dataset_close(in);
	free(ds);
	free(out);
}

/* ---------------------------------------------------------------- edge splits */

/* A link dataset from a CSBM graph (tu_link_dataset), with weights (the row's index) and
 * years on every split. */
static char *make_link(const char *neg, int64_t num_neg)
{
	char *src = tu_path(dir, "csbm"), *out = tu_path(dir, "link-%s", neg);
	burrow_gen_opts go;
	burrow_gen_defaults(&go, BURROW_GEN_CSBM);
	go.num_nodes = 600;
	go.feat_dim = 4;
	go.seed = 5;
	if (!tu_exists(src))
		cr_assert_eq(burrow_gen(&go, src), 0, "%s", burrow_last_error());
	tu_link_cfg cfg = {.frac = {0.8, 0.1, 0.1}, .seed = 9, .neg = neg, .num_neg = num_neg};
	tu_link_dataset(src, out, &cfg);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
	for (int s = 0; s < 3; s++) {
		static const char *names[3] = {"train", "valid", "test"};
		burrow_edge_split e;
		cr_assert_eq(burrow_dataset_edge_split(ds, s, &e), 0);
		float *wt = malloc((size_t)(e.num_pos + 1) * sizeof *wt);
		int32_t *yr = malloc((size_t)(e.num_pos + 1) * sizeof *yr);
		for (int64_t q = 0; q < e.num_pos; q++) {
			wt[q] = (float)q;
			yr[q] = (int32_t)(2000 + s * 100000 + q);
		}
		char rel[64];
		int64_t sh[1] = {e.num_pos};
		snprintf(rel, sizeof rel, "edge_split/%s_weight.npy", names[s]);
		tu_link_save(out, rel, BURROW_DTYPE_F32, 1, sh, wt);
		snprintf(rel, sizeof rel, "edge_split/%s_year.npy", names[s]);
		tu_link_save(out, rel, BURROW_DTYPE_I32, 1, sh, yr);
		free(wt);
		free(yr);
	}
	burrow_dataset_close(ds);
	cr_assert_eq(tu_sh(NULL, NULL, "sed -i 's/\"weight\": false, \"year\": false/\"weight\": true, \"year\": true/' "
			       "%s/meta.json", out), 0);
	free(src);
	return out;
}

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

/* Every positive of the input in exactly one part (the owner of its source), identified by its
 * weight (its input row), with its year and negatives; the pairs negatives as a multiset. */
static void check_edge_split(const char *ds, const char *out, int k)
{
	burrow_dataset *in;
	cr_assert_eq(burrow_dataset_open(&in, ds), 0);
	parts_view pv;
	view_open(&pv, out);
	for (int s = 0; s < 3; s++) {
		burrow_edge_split e, pe;
		cr_assert_eq(burrow_dataset_edge_split(in, s, &e), 0);
		char *seen = calloc((size_t)e.num_pos + 1, 1);
		int64_t *pairs = malloc((size_t)(2 * e.num_neg + 2) * sizeof *pairs), np = 0, got = 0;
		for (int i = 0; i < k; i++) {
			const burrow_dataset *pd = burrow_part_dataset(pv.p[i]);
			cr_assert_eq(burrow_dataset_edge_split(pd, s, &pe), 0, "%s", burrow_last_error());
			cr_assert_eq(pe.neg, e.neg);
			cr_assert_eq(pe.k, e.k);
			cr_assert_eq(pe.metric, e.metric);
			cr_assert_eq(pe.metric_k, e.metric_k);
			cr_assert_eq(pe.directed, e.directed);
			const burrow_part_info *pin = burrow_part_get_info(pv.p[i]);
			for (int64_t q = 0; q < pe.num_pos; q++) {
				const int64_t o = (int64_t)pe.weight[q];
				cr_assert(o >= 0 && o < e.num_pos && !seen[o], "split %d: part %d row %lld: input row %lld", s, i,
					  (long long)q, (long long)o);
				seen[o] = 1;
				got++;
				cr_assert_lt(pe.pos[2 * q], pin->num_owned, "the part owns its positives' sources");
				cr_assert_eq(input_of(&pv, i, pe.pos[2 * q]), e.pos[2 * o]);
				cr_assert_eq(input_of(&pv, i, pe.pos[2 * q + 1]), e.pos[2 * o + 1]);
				cr_assert_eq(pe.year[q], e.year[o]);
				for (int64_t c = 0; e.neg_dst && c < e.k; c++)
					cr_assert_eq(input_of(&pv, i, pe.neg_dst[q * e.k + c]), e.neg_dst[o * e.k + c]);
			}
			for (int64_t q = 0; pe.neg_pairs && q < pe.num_neg; q++) {
				cr_assert_lt(pe.neg_pairs[2 * q], pin->num_owned, "the part owns its pairs' first nodes");
				pairs[2 * np] = input_of(&pv, i, pe.neg_pairs[2 * q]);
				pairs[2 * np + 1] = input_of(&pv, i, pe.neg_pairs[2 * q + 1]);
				np++;
			}
		}
		cr_assert_eq(got, e.num_pos, "split %d: %lld positives in the parts, %lld in the input", s, (long long)got,
			     (long long)e.num_pos);
		if (e.neg_pairs) {
			cr_assert_eq(np, e.num_neg);
			int64_t *ref = malloc((size_t)(2 * e.num_neg + 2) * sizeof *ref);
			memcpy(ref, e.neg_pairs, (size_t)(2 * e.num_neg) * sizeof *ref);
			qsort(ref, (size_t)np, 2 * sizeof *ref, cmp_pair);
			qsort(pairs, (size_t)np, 2 * sizeof *pairs, cmp_pair);
			cr_assert_eq(memcmp(ref, pairs, (size_t)(2 * np) * sizeof *ref), 0);
			free(ref);
		}
		free(seen);
		free(pairs);
	}
	view_close(&pv);
	burrow_dataset_close(in);
}

Test(partition_carry, edge_split_per_source)
{
	char *ds = make_link("per_source", 7), *out = tu_path(dir, "p");
	partition(ds, out, 3);
	check_edge_split(ds, out, 3);
	free(ds);
	free(out);
}

Test(partition_carry, edge_split_pairs)
{
	char *ds = make_link("pairs", 2), *out = tu_path(dir, "p");
	partition(ds, out, 2);
	check_edge_split(ds, out, 2);
	free(ds);
	free(out);
}

/* Every allocation of a partition of ds may fail: an error, nothing leaked, no output. */
static void fail_loop(const char *ds, const char *out)
{
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 2;
	o.out_dir = out;
	const size_t base = tu_mem_now();
	int failures = 0;
	for (long n = 0;; n++) {
		bw_mem_fail_after(n);
		int st = burrow_partition(ds, &o, NULL);
		bw_mem_fail_after(-1);
		cr_assert_eq(tu_mem_now(), base, "allocation %ld failed: %zu bytes not freed", n, tu_mem_now() - base);
		if (st == 0)
			break;
		failures++;
		cr_assert_lt(st, 0);
		cr_assert(!tu_exists(out), "allocation %ld failed, yet the output exists", n);
		cr_assert_lt(n, 100000);
	}
	cr_assert_gt(failures, 10);
	tu_rmrf(out);
}

/* ... carrying edge features and multi-label labels, and edge splits with weights and years. */
Test(partition_carry, failing_allocations_leave_nothing_behind)
{
	char *ef = make_featured(200, 4), *link = make_link("per_source", 3), *out = tu_path(dir, "p");
	fail_loop(ef, out);
	fail_loop(link, out);
	free(ef);
	free(link);
	free(out);
}
