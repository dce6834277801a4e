/* edgesplit.c: a link dataset's edge splits (meta.json's "edge_split", the edge_split/ npy files;
 * docs/format.md): mapped and checked against meta.json at open (dtype, shape, ids in
 * [0, N), weights finite), served as burrow_edge_split views. */
#include "dataset_internal.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

/* What edge_split/ holds: per split, its positives, negatives, weights and years. */
struct bw_esplit {
	const char *dir;                 /* borrowed from the dataset */
	int64_t num_nodes;
	int neg;                         /* enum burrow_edge_neg */
	int64_t k;                       /* per_source: negatives per positive */
	int metric, metric_k;            /* enum burrow_edge_metric of the dataset, HITS' K */
	bool directed, has_weight, has_year;
	int64_t num_pos[3], num_neg[3];  /* [split] positives; negative rows (pairs: M, per_source: E) */
	bw_npy_map pos[3], negm[3], weight[3], year[3];
};

static const char *const neg_names[3] = {"none", "pairs", "per_source"};

void bw_esplit_close(bw_esplit *e)
{
	if (!e)
		return;
	for (int i = 0; i < 3; i++) {
		bw_npy_unmap(&e->pos[i]);
		bw_npy_unmap(&e->negm[i]);
		bw_npy_unmap(&e->weight[i]);
		bw_npy_unmap(&e->year[i]);
	}
	bw_free(e);
}

/* A boolean member, false when absent. */
static int json_flag(const cJSON *o, const char *key, bool *v, const char *path)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	*v = false;
	if (!it)
		return 0;
	if (!cJSON_IsBool(it))
		return bw_err(BURROW_E_FORMAT, "%s: \"edge_split\".\"%s\" must be true or false", path, key);
	*v = cJSON_IsTrue(it);
	return 0;
}

/* "metric": "hits@K" (1 <= K <= 2^20), "mrr" or "auc"; absent: mrr with per-source
 * negatives (OGB's citation2), else hits@50 (OGB's collab). */
static int parse_metric(bw_esplit *e, const cJSON *o, const char *path)
{
	const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "metric");
	int k = 0, used = 0;
	e->metric_k = 0;
	if (!m) {
		e->metric = e->neg == BURROW_EDGE_NEG_PER_SOURCE ? BURROW_EDGE_METRIC_MRR : BURROW_EDGE_METRIC_HITS;
		e->metric_k = e->metric == BURROW_EDGE_METRIC_HITS ? 50 : 0;
		return 0;
	}
	const char *s = cJSON_IsString(m) ? m->valuestring : "";
	if (!strcmp(s, "mrr"))
		e->metric = BURROW_EDGE_METRIC_MRR;
	else if (!strcmp(s, "auc"))
		e->metric = BURROW_EDGE_METRIC_AUC;
	else if (sscanf(s, "hits@%d%n", &k, &used) == 1 && s[used] == '\0' && k >= 1 && k <= (1 << 20)) {
		e->metric = BURROW_EDGE_METRIC_HITS;
		e->metric_k = k;
	} else
		return bw_err(BURROW_E_FORMAT, "%s: \"edge_split\".\"metric\" must be \"hits@K\", \"mrr\" or \"auc\"", path);
	if (e->metric == BURROW_EDGE_METRIC_MRR && e->neg != BURROW_EDGE_NEG_PER_SOURCE)
		return bw_err(BURROW_E_FORMAT, "%s: \"edge_split\" asks for mrr, which needs \"neg\": \"per_source\"", path);
	return 0;
}

static int parse(bw_esplit *e, const cJSON *o, const char *path)
{
	int st;
	if (!cJSON_IsObject(o))
		return bw_err(BURROW_E_FORMAT, "%s: \"edge_split\" must be an object", path);
	for (int i = 0; i < 3; i++)
		if ((st = bw_json_count(o, bw_split_names[i], &e->num_pos[i], path)))
			return st;
	const cJSON *ng = cJSON_GetObjectItemCaseSensitive(o, "neg");
	e->neg = -1;
	for (int i = 0; i < 3 && cJSON_IsString(ng); i++)
		if (!strcmp(ng->valuestring, neg_names[i]))
			e->neg = i;
	if (!ng)
		e->neg = BURROW_EDGE_NEG_NONE;
	if (e->neg < 0)
		return bw_err(BURROW_E_FORMAT, "%s: \"edge_split\".\"neg\" must be \"none\", \"pairs\" or \"per_source\"",
			      path);
	if (e->neg == BURROW_EDGE_NEG_PER_SOURCE) {
		if ((st = bw_json_count(o, "num_neg", &e->k, path)))
			return st;
		if (e->k < 1 || e->k > (1 << 20))
			return bw_err(BURROW_E_FORMAT, "%s: \"edge_split\".\"num_neg\" must lie in [1, 2^20], got %lld", path,
				      (long long)e->k);
		e->num_neg[1] = e->num_pos[1];
		e->num_neg[2] = e->num_pos[2];
	} else if (e->neg == BURROW_EDGE_NEG_PAIRS) {
		if ((st = bw_json_count(o, "valid_neg", &e->num_neg[1], path)) ||
		    (st = bw_json_count(o, "test_neg", &e->num_neg[2], path)))
			return st;
	}
	if ((st = json_flag(o, "weight", &e->has_weight, path)) || (st = json_flag(o, "year", &e->has_year, path)) ||
	    (st = json_flag(o, "directed", &e->directed, path)))
		return st;
	return parse_metric(e, o, path);
}

/* Every id of m (count ids) in [0, N): the first that is not names the file and entry. */
static int check_ids(const bw_esplit *e, const char *rel, const bw_npy_map *m, int64_t count, int64_t width)
{
	const int64_t *a = m->data, n = e->num_nodes;
	int64_t bad = count;
#pragma omp parallel for schedule(static) reduction(min : bad)
	for (int64_t i = 0; i < count; i++)
		if ((a[i] < 0 || a[i] >= n) && i < bad)
			bad = i;
	if (bad < count)
		return bw_err(BURROW_E_FORMAT, "%s/%s: entry [%lld, %lld] is node %lld, outside [0, %lld)", e->dir, rel,
			      (long long)(bad / width), (long long)(bad % width), (long long)a[bad], (long long)n);
	return 0;
}

static int check_weights(const bw_esplit *e, const char *rel, const bw_npy_map *m, int64_t count)
{
	const float *w = m->data;
	for (int64_t i = 0; i < count; i++)
		if (!isfinite(w[i]))
			return bw_err(BURROW_E_FORMAT, "%s/%s: entry %lld is %g, not a finite weight", e->dir, rel,
				      (long long)i, (double)w[i]);
	return 0;
}

/* Map split i's files (map) and check their contents. */
static int split_files(bw_esplit *e, int i, bool map)
{
	char rel[64];
	const char *s = bw_split_names[i];
	int64_t shape[2] = {e->num_pos[i], 2};
	int st;
	snprintf(rel, sizeof rel, "edge_split/%s_pos.npy", s);
	if ((map && (st = bw_map_array(e->dir, rel, &e->pos[i], BURROW_DTYPE_I64, 2, shape))) ||
	    (st = check_ids(e, rel, &e->pos[i], 2 * e->num_pos[i], 2)))
		return st;
	if (i > 0 && e->neg != BURROW_EDGE_NEG_NONE) {
		const bool pairs = e->neg == BURROW_EDGE_NEG_PAIRS;
		const int64_t w = pairs ? 2 : e->k, nshape[2] = {e->num_neg[i], w};
		snprintf(rel, sizeof rel, "edge_split/%s_neg%s.npy", s, pairs ? "" : "_dst");
		if ((map && (st = bw_map_array(e->dir, rel, &e->negm[i], BURROW_DTYPE_I64, 2, nshape))) ||
		    (st = check_ids(e, rel, &e->negm[i], e->num_neg[i] * w, w)))
			return st;
	}
	if (e->has_weight) {
		snprintf(rel, sizeof rel, "edge_split/%s_weight.npy", s);
		if ((map && (st = bw_map_array(e->dir, rel, &e->weight[i], BURROW_DTYPE_F32, 1, shape))) ||
		    (st = check_weights(e, rel, &e->weight[i], e->num_pos[i])))
			return st;
	}
	if (e->has_year && map) {
		snprintf(rel, sizeof rel, "edge_split/%s_year.npy", s);
		if ((st = bw_map_array(e->dir, rel, &e->year[i], BURROW_DTYPE_I32, 1, shape)))
			return st;
	}
	return 0;
}

int bw_esplit_open(bw_esplit **out, const char *dir, const char *meta_path, const cJSON *o, int64_t num_nodes)
{
	*out = NULL;
	bw_esplit *e = bw_calloc(1, sizeof *e);
	if (!e)
		return BURROW_E_NOMEM;
	e->dir = dir;
	e->num_nodes = num_nodes;
	int st = parse(e, o, meta_path);
	for (int i = 0; !st && i < 3; i++)
		st = split_files(e, i, true);
	for (int i = 0; !st && i < 3; i++) { /* read once by the checks: out of the RSS (dataset.c) */
		bw_npy_map_drop(&e->pos[i]);
		bw_npy_map_drop(&e->negm[i]);
		bw_npy_map_drop(&e->weight[i]);
	}
	if (st) {
		bw_esplit_close(e);
		return st;
	}
	*out = e;
	return 0;
}

int bw_esplit_verify(const bw_esplit *e)
{
	int st = 0;
	for (int i = 0; !st && i < 3; i++)
		st = split_files((bw_esplit *)e, i, false);
	return st;
}

void bw_esplit_get(const bw_esplit *e, int i, burrow_edge_split *out)
{
	const bool pairs = e->neg == BURROW_EDGE_NEG_PAIRS, per = e->neg == BURROW_EDGE_NEG_PER_SOURCE;
	*out = (burrow_edge_split){
		.num_pos = e->num_pos[i],
		.pos = e->pos[i].data,
		.neg = e->neg,
		.num_neg = i > 0 ? e->num_neg[i] : 0,
		.neg_pairs = i > 0 && pairs ? e->negm[i].data : NULL,
		.neg_dst = i > 0 && per ? e->negm[i].data : NULL,
		.k = per ? e->k : 0,
		.weight = e->weight[i].data,
		.year = e->year[i].data,
		.directed = e->directed,
		.metric = e->metric,
		.metric_k = e->metric_k,
	};
}

const char *burrow_edge_neg_name(int neg) { return neg >= 0 && neg < 3 ? neg_names[neg] : "?"; }
