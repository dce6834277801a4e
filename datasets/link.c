/* link.c: a link prediction dataset's edge split (docs/format.md, "edge_split"), written into
 * a dataset writer's directory beside the graph: positives per split, fixed negatives
 * (pairs, or destinations per source), weights and years, and meta.json's "edge_split". */
#include "../graph/dataset_internal.h"
#include "dsio.h"

#include <cjson/cJSON.h>

/* One array of the split: edge_split/<name>.npy in the writer's temporary directory. */
static int put_array(burrow_writer *w, const char *name, burrow_dtype t, int ndim, int64_t rows, int64_t cols,
		     const void *data)
{
	char rel[128];
	snprintf(rel, sizeof rel, "edge_split/%s.npy", name);
	char *p = bw_writer_file(w, rel);
	if (!p)
		return bw_err(BURROW_E_NOMEM, "%s: cannot make its edge_split folder", bw_writer_dir(w));
	const int64_t shape[2] = {rows, cols};
	int st = bw_npy_save(p, t, ndim, shape, data, BW_NPY_ALIGN);
	bw_free(p);
	return st;
}

/* Every id of a [rows, cols] int64 array in [0, n). */
static int ids_in_range(const bw_esplit *e, const char *what, const int64_t *v, int64_t count)
{
	for (int64_t i = 0; i < count; i++)
		if (v[i] < 0 || v[i] >= e->num_nodes)
			return bw_err(BURROW_E_RANGE, "%s: %s: node id %lld at row %lld is outside [0, %lld)", e->name, what,
				      (long long)v[i], (long long)(i / 2), (long long)e->num_nodes);
	return 0;
}

static int check(const bw_esplit *e)
{
	static const char *const S[3] = {"train", "valid", "test"};
	int st = 0;
	if (e->neg != BW_NEG_NONE && e->neg != BW_NEG_PAIRS && e->neg != BW_NEG_PER_SOURCE)
		return bw_err(BURROW_E_INVAL, "%s: unknown kind of negatives", e->name);
	for (int s = 0; s < 3 && !st; s++) {
		char what[64];
		snprintf(what, sizeof what, "%s positives", S[s]);
		if (e->n_pos[s] < 0 || (e->n_pos[s] && !e->pos[s]))
			return bw_err(BURROW_E_INVAL, "%s: %s missing", e->name, what);
		st = ids_in_range(e, what, e->pos[s], 2 * e->n_pos[s]);
		if (s == 0 || e->neg == BW_NEG_NONE || st)
			continue;
		snprintf(what, sizeof what, "%s negatives", S[s]);
		const int64_t cols = e->neg == BW_NEG_PAIRS ? 2 : e->num_neg;
		if (e->neg == BW_NEG_PER_SOURCE && (e->n_neg[s] != e->n_pos[s] || e->num_neg < 1))
			return bw_err(BURROW_E_FORMAT, "%s: %s: %lld rows of %lld, for %lld positives", e->name, what,
				      (long long)e->n_neg[s], (long long)e->num_neg, (long long)e->n_pos[s]);
		if (e->n_neg[s] < 0 || (e->n_neg[s] && !e->negs[s]))
			return bw_err(BURROW_E_INVAL, "%s: %s missing", e->name, what);
		st = ids_in_range(e, what, e->negs[s], e->n_neg[s] * cols);
	}
	return st;
}

static const char *neg_name(int neg)
{
	return neg == BW_NEG_PAIRS ? "pairs" : neg == BW_NEG_PER_SOURCE ? "per_source" : "none";
}

static int meta(burrow_writer *w, const bw_esplit *e)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	cJSON_AddNumberToObject(j, "train", (double)e->n_pos[0]);
	cJSON_AddNumberToObject(j, "valid", (double)e->n_pos[1]);
	cJSON_AddNumberToObject(j, "test", (double)e->n_pos[2]);
	cJSON_AddStringToObject(j, "neg", neg_name(e->neg));
	cJSON_AddNumberToObject(j, "num_neg", (double)(e->neg == BW_NEG_PER_SOURCE ? e->num_neg : 0));
	cJSON_AddNumberToObject(j, "valid_neg", (double)(e->neg == BW_NEG_NONE ? 0 : e->n_neg[1]));
	cJSON_AddNumberToObject(j, "test_neg", (double)(e->neg == BW_NEG_NONE ? 0 : e->n_neg[2]));
	cJSON_AddBoolToObject(j, "weight", e->weight[0] != NULL);
	cJSON_AddBoolToObject(j, "year", e->year[0] != NULL);
	cJSON_AddBoolToObject(j, "directed", e->directed);
	if (e->metric)
		cJSON_AddStringToObject(j, "metric", e->metric);
	if (bw_json_nomem()) {
		cJSON_Delete(j);
		return bw_err(BURROW_E_NOMEM, "%s: out of memory writing meta.json", bw_writer_dir(w));
	}
	return bw_writer_meta_add(w, "edge_split", j);
}

int bw_esplit_put(burrow_writer *w, const bw_esplit *e)
{
	static const char *const S[3] = {"train", "valid", "test"};
	char name[64];
	int st = check(e);
	const bool weight = e->weight[0] && e->weight[1] && e->weight[2], year = e->year[0] && e->year[1] && e->year[2];
	if (!st && ((!weight && (e->weight[0] || e->weight[1] || e->weight[2])) ||
		    (!year && (e->year[0] || e->year[1] || e->year[2]))))
		st = bw_err(BURROW_E_INVAL, "%s: weights or years for some splits only", e->name);
	for (int s = 0; s < 3 && !st; s++) {
		snprintf(name, sizeof name, "%s_pos", S[s]);
		st = put_array(w, name, BURROW_DTYPE_I64, 2, e->n_pos[s], 2, e->pos[s]);
		if (!st && s && e->neg != BW_NEG_NONE) {
			snprintf(name, sizeof name, "%s_neg%s", S[s], e->neg == BW_NEG_PER_SOURCE ? "_dst" : "");
			st = put_array(w, name, BURROW_DTYPE_I64, 2, e->n_neg[s], e->neg == BW_NEG_PAIRS ? 2 : e->num_neg,
				       e->negs[s]);
		}
		if (!st && weight) {
			snprintf(name, sizeof name, "%s_weight", S[s]);
			st = put_array(w, name, BURROW_DTYPE_F32, 1, e->n_pos[s], 0, e->weight[s]);
		}
		if (!st && year) {
			snprintf(name, sizeof name, "%s_year", S[s]);
			st = put_array(w, name, BURROW_DTYPE_I32, 1, e->n_pos[s], 0, e->year[s]);
		}
	}
	char *dir = st ? NULL : bw_writer_file(w, "edge_split/.");
	if (!st && dir) {
		char *d = bw_dirname(dir);
		st = d ? bw_fsync_dir(d) : BURROW_E_NOMEM;
		bw_free(d);
	} else if (!st) {
		st = BURROW_E_NOMEM;
	}
	bw_free(dir);
	return st ? st : meta(w, e);
}
