/* test_link.c: link prediction: the edge-split reader, the edge batch producer (negatives,
 * exclusion of the batch's own edges), the scorer and its loss, the link trainer. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/driver/driver.h"
#include "util.h"
#include "link_util.h"
#include "train_util.h"

#include <math.h>

TU_SCRATCH_SUITE(link_data, 120);

/* A 300-node CSBM graph's edges split 85/5/10 (out: caller frees). */
static char *small_link(const char *neg, int64_t num_neg, const char *metric)
{
	char *src = tu_path(tu_dir, "csbm-300-8"), *out = tu_path(tu_dir, "link-%s", neg);
	if (!tu_exists(src)) {
		free(src);
		src = tu_weak_csbm(tu_dir, 300, 8);
	}
	const tu_link_cfg cfg = {.frac = {0.85, 0.05, 0.1}, .seed = 7, .neg = neg, .num_neg = num_neg, .metric = metric};
	tu_link_dataset(src, out, &cfg);
	free(src);
	return out;
}

Test(link_data, reader_serves_the_layout)
{
	char *dir = small_link("pairs", 3, NULL);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_eq(in->num_classes, 0);
	cr_assert(burrow_dataset_has_edge_split(ds));
	burrow_edge_split sp[3];
	int64_t total = 0;
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(burrow_dataset_edge_split(ds, i, &sp[i]), 0);
		total += sp[i].num_pos;
		cr_assert_eq(sp[i].neg, BURROW_EDGE_NEG_PAIRS);
		cr_assert_eq(sp[i].metric, BURROW_EDGE_METRIC_HITS);
		cr_assert_eq(sp[i].metric_k, 50);
	}
	cr_assert_eq(total, in->num_edges / 2 + sp[1].num_pos + sp[2].num_pos);
	cr_assert_eq(sp[0].num_pos * 2, in->num_edges, "the graph holds the training edges, both ways");
	cr_assert_null(sp[0].neg_pairs);
	cr_assert_eq(sp[1].num_neg, 3 * sp[1].num_pos);
	cr_assert_not_null(sp[2].neg_pairs);
	/* every training positive is in the graph */
	const burrow_csr *g = burrow_dataset_graph(ds);
	for (int64_t i = 0; i < sp[0].num_pos; i++) {
		int64_t u = sp[0].pos[2 * i], v = sp[0].pos[2 * i + 1], hit = 0;
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++)
			hit += burrow_csr_index(g, j) == v;
		cr_assert_eq(hit, 1);
	}
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_edge_split(ds, 3, &sp[0]), BURROW_E_RANGE);
	burrow_dataset_close(ds);
	free(dir);
}

Test(link_data, per_source_and_metric)
{
	char *dir = small_link("per_source", 20, "mrr");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_edge_split sp;
	cr_assert_eq(burrow_dataset_edge_split(ds, 2, &sp), 0);
	cr_assert_eq(sp.k, 20);
	cr_assert_eq(sp.num_neg, sp.num_pos);
	cr_assert_not_null(sp.neg_dst);
	cr_assert_eq(sp.metric, BURROW_EDGE_METRIC_MRR);
	burrow_dataset_close(ds);
	free(dir);
}

/* Rewrite dir/meta.json replacing the first `from` by `to`. */
static void meta_sub(const char *dir, const char *from, const char *to)
{
	char *p = tu_path(dir, "meta.json");
	size_t len;
	char *t = tu_read(p, &len), *at = strstr(t, from);
	cr_assert_not_null(at, "%s not in meta.json", from);
	FILE *f = fopen(p, "w");
	fprintf(f, "%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
	fclose(f);
	free(t);
	free(p);
}

/* Each damage refused at open in one message naming what is wrong. */
Test(link_data, reader_refuses_mismatches)
{
	static const struct {
		const char *from, *to, *says;
	} cases[] = {
		{"\"neg\": \"pairs\"", "\"neg\": \"some\"", "\"neg\" must be"},
		{"\"valid_neg\": ", "\"valid_neg\": 1", "valid_neg.npy: shape"},
		{"\"directed\": false", "\"directed\": false, \"metric\": \"hits@0\"", "\"metric\" must be"},
		{"\"directed\": false", "\"directed\": false, \"metric\": \"mrr\"", "needs \"neg\": \"per_source\""},
		{"\"weight\": false", "\"weight\": true", "train_weight.npy"},
		{"\"weight\": false", "\"weight\": 1", "must be true or false"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *dir = small_link("pairs", 2, NULL);
		meta_sub(dir, cases[c].from, cases[c].to);
		burrow_dataset *ds;
		const int st = burrow_dataset_open(&ds, dir);
		cr_assert(st == BURROW_E_FORMAT || (c == 4 && st == BURROW_E_NOTFOUND), "case %zu: %d", c, st);
		cr_assert_null(ds);
		cr_assert(strstr(burrow_last_error(), cases[c].says), "case %zu: %s", c, burrow_last_error());
		tu_rmrf(dir);
		free(dir);
	}
	/* an id out of range, in a negative */
	char *dir = small_link("pairs", 2, NULL);
	char *p = tu_path(dir, "edge_split/test_neg.npy");
	bw_npy h;
	int64_t *data;
	cr_assert_eq(bw_npy_load(p, &h, (void **)&data), 0);
	data[5] = 300;
	cr_assert_eq(bw_npy_save(p, BURROW_DTYPE_I64, 2, h.shape, data, 64), 0);
	bw_free(data);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "test_neg.npy: entry [2, 1] is node 300, outside [0, 300)"), "%s",
		  burrow_last_error());
	free(p);
	free(dir);
}

Test(link_data, info_prints_and_verifies)
{
	char *dir = small_link("pairs", 2, "hits@20"), *out = NULL;
	cr_assert_eq(tu_sh(&out, NULL, "%s info %s --verify", tu_burrow(), dir), 0);
	cr_assert(strstr(out, "negatives pairs"), "%s", out);
	cr_assert(strstr(out, "metric hits@20"), "%s", out);
	cr_assert(strstr(out, "edge splits)"), "%s", out);
	free(out);
	cr_assert_eq(tu_sh(&out, NULL, "%s info %s --json", tu_burrow(), dir), 0);
	cr_assert(strstr(out, "\"edge_split\": {\"train\": "), "%s", out);
	cr_assert(strstr(out, "\"metric\": \"hits@20\"}}"), "%s", out);
	free(out);
	free(dir);
}
