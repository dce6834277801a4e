/* link.c: a link prediction dataset's edge split (docs/format.md, "edge_split"), written into
 * a dataset writer's directory beside the graph: positives per split, fixed negatives
 * (pairs, or destinations per source), weights and years, and meta.json's "edge_split". */
#include "../graph/dataset_internal.h"
#include "../core/rng.h"
#include "dsio.h"

#include <cjson/cJSON.h>
#include <math.h>

/* One array of the split: edge_split/<name>.npy in the writer's temporary directory. */
static int put_array(burrow_writer *w, const char *name, burrow_dtype t, int ndim, int64_t rows, int64_t cols,
		     const void *data)
{
	char rel[128];
	snprintf(rel, sizeof rel, "edge_split/%s.npy", name);
	char *p;
	int st = bw_writer_file(w, rel, &p);
	if (st)
		return st;
	const int64_t shape[2] = {rows, cols};
	st = bw_writer_rebase(w, bw_npy_save(p, t, ndim, shape, data, BW_NPY_ALIGN));
	bw_free(p);
	return st;
}

/* Every id of a [rows, cols] int64 array in [0, n). */
static int ids_in_range(const bw_link_split *e, const char *what, const int64_t *v, int64_t count)
{
	for (int64_t i = 0; i < count; i++)
		if (v[i] < 0 || v[i] >= e->num_nodes)
			return bw_err(BURROW_E_RANGE, "%s: %s: node id %lld at row %lld is outside [0, %lld)", e->name, what,
				      (long long)v[i], (long long)(i / 2), (long long)e->num_nodes);
	return 0;
}

static int check(const bw_link_split *e)
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

static int meta(burrow_writer *w, const bw_link_split *e)
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

int bw_link_split_put(burrow_writer *w, const bw_link_split *e)
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
	char *dir = NULL; /* edge_split/ itself, fsynced as commit fsyncs split/ */
	if (!st && !(st = bw_writer_file(w, "edge_split/.", &dir)))
		st = bw_writer_rebase(w, bw_fsync_dir(dir));
	bw_free(dir);
	return st ? st : meta(w, e);
}

/* ---------------------------------------------------------------- import --edge-split */

/* Is (u, v) an entry of g (rows sorted)? */
static bool has_edge(const burrow_csr *g, int64_t u, int64_t v)
{
	int64_t lo = g->indptr[u], hi = g->indptr[u + 1];
	while (lo < hi) {
		const int64_t mid = lo + (hi - lo) / 2, x = burrow_csr_index(g, mid);
		if (x == v)
			return true;
		if (x < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The graph's edges once each: every entry of a directed graph, (u, v) with u < v of a
 * symmetric one. *pairs [*m, 2] is the caller's. */
static int unique_edges(const burrow_csr *g, bool symmetric, int64_t **pairs, int64_t *m)
{
	int64_t k = 0;
	for (int64_t u = 0; u < g->num_nodes; u++)
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++)
			k += !symmetric || u < burrow_csr_index(g, j);
	if (!(*pairs = bw_malloc((size_t)(k ? k : 1) * 2 * sizeof **pairs)))
		return BURROW_E_NOMEM;
	*m = 0;
	for (int64_t u = 0; u < g->num_nodes; u++)
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++) {
			const int64_t v = burrow_csr_index(g, j);
			if (symmetric && u >= v)
				continue;
			(*pairs)[2 * *m] = u;
			(*pairs)[2 * *m + 1] = v;
			++*m;
		}
	return 0;
}

/* count node pairs (u, v), u != v, drawn uniformly, none an edge of g (either direction
 * when symmetric, as g then holds both); fewer than count exist: BURROW_E_INVAL. */
static int draw_negatives(const burrow_csr *g, bw_rng *r, int64_t count, int64_t *out)
{
	const int64_t n = g->num_nodes;
	const double free_pairs = (double)n * (double)(n - 1) - (double)g->num_edges;
	if (count > 0 && free_pairs < (double)count)
		return bw_err(BURROW_E_INVAL, "edge split: %lld negative pairs wanted, the graph has %.0f non-edges",
			      (long long)count, free_pairs);
	for (int64_t i = 0; i < count;) {
		const int64_t u = (int64_t)bw_rng_below(r, (uint64_t)n), v = (int64_t)bw_rng_below(r, (uint64_t)n);
		if (u == v || has_edge(g, u, v))
			continue;
		out[2 * i] = u;
		out[2 * i + 1] = v;
		i++;
	}
	return 0;
}

/* The training edges into w's graph (symmetrized when the graph is). */
static int put_train_graph(burrow_writer *w, const bw_link_draw *in, const int64_t *pairs, int64_t m)
{
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = in->symmetric;
	co.mem_bytes = in->mem_bytes;
	co.spill_dir = in->spill_dir;
	burrow_csr_builder *b = NULL;
	int64_t *src = bw_malloc((size_t)(m ? m : 1) * 2 * sizeof *src), *dst = src + (m ? m : 1);
	int st = src ? burrow_csr_builder_open(&b, in->graph->num_nodes, &co) : BURROW_E_NOMEM;
	for (int64_t i = 0; i < m && !st; i++) {
		src[i] = pairs[2 * i];
		dst[i] = pairs[2 * i + 1];
	}
	if (!st && (st = burrow_csr_builder_add(b, src, dst, (size_t)m)) == 0)
		st = burrow_writer_put_builder(w, b, in->symmetric);
	burrow_csr_builder_close(b);
	bw_free(src);
	return st;
}

/* K uniform destinations in [0, n) for each of count positives: out [count, K]. */
static void draw_per_source(int64_t n, bw_rng *r, int64_t count, int64_t K, int64_t *out)
{
	for (int64_t i = 0; i < count * K; i++)
		out[i] = (int64_t)bw_rng_below(r, (uint64_t)n);
}

/* The sizes of the three splits of m edges by frac (train, valid; test the rest when the
 * fractions sum to 1). */
static void split_sizes(const double frac[3], int64_t m, int64_t size[3])
{
	const bool whole = fabs(frac[0] + frac[1] + frac[2] - 1) <= 1e-9;
	size[0] = BW_MIN(m, (int64_t)llround(frac[0] * (double)m));
	size[1] = BW_MIN(m - size[0], (int64_t)llround(frac[1] * (double)m));
	size[2] = whole ? m - size[0] - size[1] : BW_MIN(m - size[0] - size[1], (int64_t)llround(frac[2] * (double)m));
}

int bw_link_split_random(burrow_writer *w, bw_link_draw *in)
{
	const burrow_csr *g = in->graph;
	int64_t *pairs = NULL, m = 0, *neg = NULL;
	int st = unique_edges(g, in->symmetric, &pairs, &m);
	if (st)
		return st;
	bw_rng r; /* Fisher-Yates over the edges, then the negatives, from one stream */
	bw_rng_seed(&r, bw_key(in->seed, 0x45445350ull /* "EDSP" */));
	for (int64_t i = m - 1; i > 0; i--) {
		const int64_t j = (int64_t)bw_rng_below(&r, (uint64_t)i + 1);
		for (int c = 0; c < 2; c++) {
			const int64_t t = pairs[2 * i + c];
			pairs[2 * i + c] = pairs[2 * j + c];
			pairs[2 * j + c] = t;
		}
	}
	int64_t size[3];
	split_sizes(in->frac, m, size);
	memcpy(in->sizes, size, sizeof size);
	const int64_t K = in->per_source, cols = K > 0 ? K : 2, nneg = size[1] + size[2];
	if (!(neg = bw_malloc((size_t)(nneg ? nneg : 1) * (size_t)cols * sizeof *neg)))
		st = BURROW_E_NOMEM;
	if (!st && K > 0)
		draw_per_source(g->num_nodes, &r, nneg, K, neg);
	else if (!st)
		st = draw_negatives(g, &r, nneg, neg);
	bw_link_split e = {.name = in->name, .num_nodes = g->num_nodes, .neg = K > 0 ? BW_NEG_PER_SOURCE : BW_NEG_PAIRS,
			   .num_neg = K, .directed = !in->symmetric, .metric = K > 0 ? "mrr" : "hits@50"};
	for (int64_t s = 0, at = 0; s < 3; at += size[s], s++) {
		e.n_pos[s] = size[s];
		e.pos[s] = pairs + 2 * at;
	}
	e.n_neg[1] = size[1];
	e.negs[1] = neg;
	e.n_neg[2] = size[2];
	e.negs[2] = neg + cols * size[1];
	if (!st)
		st = put_train_graph(w, in, pairs, size[0]);
	if (!st)
		st = bw_link_split_put(w, &e);
	bw_free(neg);
	bw_free(pairs);
	return st;
}
