/* import.c: burrow import: a dataset directory from a user's own files: an edge list
 * (.npy, or text with optional gzip), and .npy features, labels and splits; or a typed
 * graph: an edge list per relation and features per node type (hetero.c writes them). */
#define _GNU_SOURCE
#include "../core/rng.h"
#include "../graph/dataset_internal.h"
#include "dsio.h"
#include "edgefeat.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


void burrow_import_defaults(burrow_import_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->order = BURROW_ORDER_NONE;
}

static void report(const burrow_import_opts *o, const char *phase, uint64_t done, uint64_t total)
{
	if (o->progress)
		o->progress(o->progress_user, phase, done, total);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcasecmp(s + a - b, suffix);
}

int bw_is_gzip(const char *path, bool *gz)
{
	unsigned char m[2];
	int fd, st = bw_open_input(path, 0, &fd, NULL);
	if (st)
		return st;
	ssize_t n = read(fd, m, 2);
	close(fd);
	*gz = n == 2 && m[0] == 0x1f && m[1] == 0x8b;
	return 0;
}

/* Text edges: "src dst" a line, separated by a comma, tab or blanks; '#' comments; a header
 * line detected (or forced). b NULL: a first pass that only tallies (and fills map). */
static int edges_text(const burrow_import_opts *o, bw_idmap *map, burrow_csr_builder *b, int64_t n, int64_t *count,
		      bw_edge_tally *tally, bool *header)
{
	bw_src src = {.name = o->edges, .path = o->edges, .fd = -1};
	bw_csv c;
	bool gz = false;
	int st = bw_is_gzip(o->edges, &gz);
	if (st || (st = bw_csv_open(&c, &src, gz, 0, true)))
		return st;
	if (!(st = bw_csv_header(&c, o->header, header)))
		st = map ? bw_relabel_text_edges(&c, map, b, count, b ? o->progress : NULL, o->progress_user, tally)
			 : bw_csv_edges(&c, n, b, b ? o->progress : NULL, o->progress_user, count, tally);
	bw_csv_close(&c);
	return st;
}

/* One pass over the edges into b (NULL: tally only, and fill map under --relabel). */
static int read_edges(const burrow_import_opts *o, bw_idmap *map, burrow_csr_builder *b, int64_t n, int64_t *count,
		      bw_edge_tally *tally, bool *header)
{
	uint64_t *seen = tally->seen;
	*header = false;
	*tally = (bw_edge_tally){.max_id = -1, .seen = b ? seen : NULL};
	if (ends_with(o->edges, ".npy")) {
		bw_src es = {.name = o->edges, .path = o->edges, .fd = -1};
		return map ? bw_relabel_npy_edges(&es, map, b, count, b ? o->progress : NULL, o->progress_user, tally)
			   : bw_edges_npy(b, &es, n, count, b ? o->progress : NULL, o->progress_user, tally);
	}
	return edges_text(o, map, b, n, count, tally, header);
}

/* The rows of an .npy (its first dimension), for N when it is not given. */
static int npy_rows(const char *path, int64_t *rows)
{
	bw_npy h;
	int st = bw_npy_open(path, &h, NULL);
	if (!st)
		*rows = h.ndim >= 1 ? h.shape[0] : 1;
	return st;
}

/* ------------------------------------------------------------ multi-label labels
 *
 * --labels with several columns: [N, T] .npy of int8 / uint8 / bool / int32 / int64 / float32 /
 * float64, or a text file of T numbers a line, each 1, 0, or unknown (-1, or NaN): a multi-label
 * dataset (labels.npy int8 [N, T]). One column stays one class per node (bw_labels_npy). */

static bool is_npy_path(const char *path)
{
	const size_t k = strlen(path);
	return k >= 4 && !strcmp(path + k - 4, ".npy");
}

/* One entry: 1, 0, or -1 (given as -1 or NaN); else BURROW_E_RANGE naming the file, node and task. */
static int ml_value(double v, const char *name, int64_t i, int64_t T, int8_t *out)
{
	if (isnan(v) || v == -1 || v == 0 || v == 1) {
		*out = isnan(v) ? -1 : (int8_t)v;
		return 0;
	}
	return bw_err(BURROW_E_RANGE, "%s: node %lld, task %lld has label %g: multi-label labels are 1, 0, or -1 / NaN "
		      "(unknown)", name, (long long)(i / T), (long long)(i % T), v);
}

static double ml_at(const void *p, burrow_dtype t, size_t j)
{
	switch (t) {
	case BURROW_DTYPE_F32: return ((const float *)p)[j];
	case BURROW_DTYPE_F64: return ((const double *)p)[j];
	case BURROW_DTYPE_I64: return (double)((const int64_t *)p)[j];
	case BURROW_DTYPE_I32: return ((const int32_t *)p)[j];
	case BURROW_DTYPE_I8: return ((const int8_t *)p)[j];
	case BURROW_DTYPE_I16: return ((const int16_t *)p)[j];
	default: return ((const uint8_t *)p)[j]; /* U8, BOOL */
	}
}

/* [n, T] labels from an .npy already opened (a, its header checked), into y. */
static int ml_from_npy(bw_npys *a, const char *name, int64_t n, int64_t T, int8_t *y)
{
	const burrow_dtype t = a->h.dtype;
	const size_t isz = burrow_dtype_size(t), chunk = 1 << 16;
	void *raw = bw_malloc(chunk * isz);
	int st = raw ? 0 : BURROW_E_NOMEM;
	for (int64_t i = 0; !st && i < n * T;) {
		const size_t k = (size_t)BW_MIN((int64_t)chunk, n * T - i);
		st = bw_npys_read(a, raw, k * isz);
		for (size_t j = 0; !st && j < k; j++, i++)
			st = ml_value(ml_at(raw, t, j), name, i, T, &y[i]);
	}
	bw_free(raw);
	return st;
}

/* [n, T] labels from a text file of T numbers a line (no header), into y (T > 1: found by the first line). */
static int ml_from_text(const bw_src *src, int64_t n, int64_t *T, int8_t **y)
{
	bw_csv c;
	bool more;
	float *row = NULL;
	int64_t i = 0;
	int st = bw_csv_open(&c, src, false, 0, true);
	if (st)
		return st;
	if ((st = bw_csv_next_line(&c, &more)) || !more) {
		st = st ? st : bw_err(BURROW_E_FORMAT, "%s: no labels in it (expected %lld lines)", src->name, (long long)n);
		goto out;
	}
	*T = bw_csv_count_fields(&c);
	if (!(row = bw_malloc((size_t)*T * sizeof *row)) || !(*y = bw_malloc((size_t)(n * *T) + 1))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (; !st && more; i++) {
		if (i == n) {
			st = bw_csv_err(&c, BURROW_E_FORMAT, "more than the %lld nodes' lines of labels", (long long)n);
			break;
		}
		st = bw_csv_floats(&c, row, *T);
		for (int64_t k = 0; !st && k < *T; k++)
			st = ml_value(row[k], src->name, i * *T + k, *T, &(*y)[i * *T + k]);
		if (!st)
			st = bw_csv_next_line(&c, &more);
	}
	if (!st && i != n)
		st = bw_err(BURROW_E_FORMAT, "%s: %lld lines of labels for %lld nodes", src->name, (long long)i, (long long)n);
out:
	bw_free(row);
	bw_csv_close(&c);
	return st;
}

/* [n, T] entries of 0 and 1 with exactly one 1 a row (one-hot): the class ids into *y (said in one line). */
static int onehot_labels(const int8_t *ml, int64_t n, int64_t T, const char *path, int32_t **y, bool *done)
{
	*done = false;
	for (int64_t v = 0; v < n; v++) {
		int64_t ones = 0;
		for (int64_t k = 0; k < T; k++) {
			if (ml[v * T + k] < 0)
				return 0;
			ones += ml[v * T + k];
		}
		if (ones != 1)
			return 0;
	}
	if (!(*y = bw_malloc((size_t)n * sizeof **y + 1)))
		return BURROW_E_NOMEM;
	for (int64_t v = 0; v < n; v++)
		for (int64_t k = 0; k < T; k++)
			if (ml[v * T + k])
				(*y)[v] = (int32_t)k;
	bw_log(BURROW_LOG_INFO, "%s: one-hot labels [%lld, %lld] converted to class ids (one 1 in every row)", path,
	       (long long)n, (long long)T);
	*done = true;
	return 0;
}

/* The labels of a homogeneous import: multi-label ones written to w (*T their count; w NULL:
 * refused), or one class per node into *y (caller frees; written by the caller); one-hot
 * [n, C] labels become class ids unless keep_tasks. */
static int import_labels(const char *path, int64_t n, burrow_writer *w, int32_t **y, int64_t *T, bool keep_tasks)
{
	bool onehot = false;
	bw_src src = {.name = path, .path = path, .fd = -1};
	int8_t *ml = NULL;
	int st;
	*T = 0;
	if (is_npy_path(path)) {
		bw_npys a;
		if ((st = bw_npys_open(&a, &src)))
			return st;
		const bool multi = a.h.ndim == 2 && a.h.shape[1] > 1;
		const burrow_dtype t = a.h.dtype;
		char got[96];
		if (multi && (a.h.shape[0] != n || t == BURROW_DTYPE_F16 || t == BURROW_DTYPE_INVALID))
			st = bw_err(BURROW_E_FORMAT, "%s: labels of shape %s %s, expected [%lld, T] (multi-label or one-hot: "
				    "integers, bool or float32/64)", path, bw_shape_str(got, sizeof got, a.h.ndim, a.h.shape),
				    burrow_dtype_name(t), (long long)n);
		else if (multi && !(ml = bw_malloc((size_t)(n * a.h.shape[1]) + 1)))
			st = BURROW_E_NOMEM;
		else if (multi && !(st = ml_from_npy(&a, path, n, a.h.shape[1], ml)))
			*T = a.h.shape[1];
		bw_npys_close(&a);
		if (!multi)
			return bw_labels_npy(&src, n, y);
	} else {
		st = ml_from_text(&src, n, T, &ml);
	}
	if (!st && *T > 1 && !keep_tasks && !(st = onehot_labels(ml, n, *T, path, y, &onehot)) && onehot)
		*T = 0;
	if (!st && *T > BW_MAX_CLASSES)
		st = bw_err(BURROW_E_FORMAT, "%s: %lld tasks, more than the %d Burrow accepts", path, (long long)*T,
			    BW_MAX_CLASSES);
	if (!st && *T > 1 && !w)
		st = bw_err(BURROW_E_UNSUPPORTED, "%s: multi-label labels [%lld, %lld] with --relabel: not supported yet",
			    path, (long long)n, (long long)*T);
	if (!st && *T > 1)
		st = burrow_writer_put_multilabels(w, ml, n, (int32_t)*T);
	if (!st && *T == 1) { /* a text file of one column: one class per node, -1 unlabeled */
		*T = 0;
		if (!(*y = bw_malloc((size_t)n * sizeof **y + 1)))
			st = BURROW_E_NOMEM;
		for (int64_t v = 0; !st && v < n; v++)
			(*y)[v] = ml[v];
	}
	bw_free(ml);
	return st;
}

static int check_fracs(const double f[3])
{
	const double sum = f[0] + f[1] + f[2];
	if (!(f[0] >= 0 && f[1] >= 0 && f[2] >= 0 && sum > 0 && sum <= 1 + 1e-9))
		return bw_err(BURROW_E_INVAL, "split: fractions %g, %g, %g must be >= 0 with a sum in (0, 1]", f[0], f[1],
			      f[2]);
	return 0;
}

int burrow_split_random(const int32_t *labels, int64_t n, const double frac[3], uint64_t seed, int64_t *ids,
			int64_t sizes[3])
{
	int st = check_fracs(frac);
	if (st)
		return st;
	int64_t m = 0;
	for (int64_t v = 0; v < n; v++)
		if (!labels || labels[v] >= 0)
			ids[m++] = v;
	bw_rng r; /* Fisher-Yates over the candidates */
	bw_rng_seed(&r, bw_key(seed, 0x53504c4954ull /* "SPLIT" */));
	for (int64_t i = m - 1; i > 0; i--) {
		int64_t j = (int64_t)bw_rng_below(&r, (uint64_t)i + 1), t = ids[i];
		ids[i] = ids[j];
		ids[j] = t;
	}
	const bool whole = fabs(frac[0] + frac[1] + frac[2] - 1) <= 1e-9;
	sizes[0] = BW_MIN(m, (int64_t)llround(frac[0] * (double)m));
	sizes[1] = BW_MIN(m - sizes[0], (int64_t)llround(frac[1] * (double)m));
	sizes[2] = whole ? m - sizes[0] - sizes[1] : BW_MIN(m - sizes[0] - sizes[1], (int64_t)llround(frac[2] * (double)m));
	for (int64_t s = 0, at = 0; s < 3; at += sizes[s++])
		bw_sort_i64(ids + at, sizes[s]);
	return 0;
}

/* Where a split goes: the writer's default split/, its split/<name>/, or a folder of its own. */
typedef struct split_out {
	burrow_writer *w;      /* the dataset being written, or NULL */
	const char *name;      /* with w: a named split (NULL: the default one) */
	const char *dir;       /* without w: the folder to write <split>.npy into */
} split_out;

static int emit_split(const split_out *so, int s, const int64_t *ids, int64_t k)
{
	char rel[BURROW_MAX_NAME + 32], *path = NULL;
	if (so->w && !so->name)
		return burrow_writer_put_split(so->w, s, ids, k);
	int st = 0;
	if (so->w) {
		snprintf(rel, sizeof rel, "split/%s/%s.npy", so->name, bw_split_names[s]);
		st = bw_writer_file(so->w, rel, &path);
	} else {
		snprintf(rel, sizeof rel, "%s.npy", bw_split_names[s]);
		path = bw_path_join(so->dir, rel);
		st = path ? 0 : BURROW_E_NOMEM;
	}
	if (!st)
		st = bw_npy_save(path, BURROW_DTYPE_I64, 1, (const int64_t[1]){k}, ids, BW_NPY_ALIGN);
	bw_free(path);
	return st && so->w ? bw_writer_rebase(so->w, st) : st;
}

/* meta.json's "named_splits" entry of a named split of these sizes (a new object, or NULL). */
static cJSON *named_entry(const int64_t sizes[3])
{
	cJSON *e = cJSON_CreateObject();
	for (int s = 0; e && s < 3; s++)
		if (!cJSON_AddNumberToObject(e, bw_split_names[s], (double)sizes[s])) {
			cJSON_Delete(e);
			return NULL;
		}
	return e;
}

/* --split: a random split of the labeled nodes (every node without labels) into w. */
static int put_random_split(const burrow_import_opts *o, const split_out *so, const int32_t *y, int64_t n,
			    int64_t sizes[3])
{
	int64_t *ids = bw_malloc((size_t)(n ? n : 1) * sizeof *ids);
	if (!ids)
		return BURROW_E_NOMEM;
	int st = burrow_split_random(y, n, o->split, o->split_seed, ids, sizes);
	for (int s = 0, at = 0; s < 3 && !st; at += (int)sizes[s], s++)
		st = emit_split(so, s, ids + at, sizes[s]);
	bw_free(ids);
	return st;
}

/* Entry i of a split file: node v (under --relabel an original id, mapped) into ids[*k]. */
static int split_entry(bw_idmap *map, int64_t num_nodes, const char *path, int64_t i, int64_t v, int64_t *ids,
		       int64_t *k)
{
	int64_t id = v;
	int st = map ? bw_idmap_num(map, v, false, &id) : 0;
	if (st)
		return st;
	if (map && id < 0)
		return bw_err(BURROW_E_RANGE, "%s: entry %lld is id %lld, which no edge%s names", path, (long long)i,
			      (long long)v, " or node line");
	if (id < 0 || id >= num_nodes)
		return bw_err(BURROW_E_RANGE, "%s: entry %lld is node %lld, outside [0, %lld)", path, (long long)i,
			      (long long)v, (long long)num_nodes);
	ids[(*k)++] = id;
	return 0;
}

/* A split: node ids (int32/int64) or a bool / uint8 mask of length N (under --relabel, ids and
 * mask positions are original ids). */
static int put_split(int64_t num_nodes, bw_idmap *map, const split_out *so, int split, const char *path,
		     int64_t *size)
{
	bw_src src = {.name = path, .path = path, .fd = -1};
	bw_npys a;
	int64_t *ids = NULL, k = 0;
	void *raw = NULL;
	char got[96];
	int st = bw_npys_open(&a, &src);
	if (st)
		return st;
	const burrow_dtype t = a.h.dtype;
	const int64_t n = bw_npy_count(&a.h);
	const bool mask = t == BURROW_DTYPE_BOOL || t == BURROW_DTYPE_U8;
	if (a.h.ndim != 1 || !(mask || t == BURROW_DTYPE_I32 || t == BURROW_DTYPE_I64) || (mask && !map && n != num_nodes)) {
		st = bw_err(BURROW_E_FORMAT, "%s: shape %s %s, expected node ids [K] (int32 or int64) or a mask [%lld] "
			    "(bool or uint8)", path, bw_shape_str(got, sizeof got, a.h.ndim, a.h.shape), burrow_dtype_name(t),
			    (long long)num_nodes);
		goto out;
	}
	if (map && bw_idmap_strings(map)) {
		st = bw_err(BURROW_E_UNSUPPORTED, "%s: split files name integer ids, but --relabel found text ids (draw a "
			    "split with --split a,b,c)", path);
		goto out;
	}
	ids = bw_malloc((size_t)(n ? n : 1) * sizeof *ids);
	raw = bw_malloc((size_t)(n ? n : 1) * burrow_dtype_size(t));
	if (!ids || !raw) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = bw_npys_read(&a, raw, (size_t)n * burrow_dtype_size(t))))
		goto out;
	for (int64_t i = 0; i < n && !st; i++) {
		if (mask && ((const uint8_t *)raw)[i])
			st = split_entry(map, num_nodes, path, i, i, ids, &k);
		else if (!mask)
			st = split_entry(map, num_nodes, path, i,
					 t == BURROW_DTYPE_I64 ? ((const int64_t *)raw)[i] : ((const int32_t *)raw)[i], ids, &k);
	}
	if (!st && mask)
		bw_log(BURROW_LOG_INFO, "%s: a %s mask [%lld] taken as the ids of its non-zero entries (%lld nodes)", path,
		       burrow_dtype_name(t), (long long)n, (long long)k);
	if (!st)
		st = emit_split(so, split, ids, k);
	*size = k;
out:
	bw_free(ids);
	bw_free(raw);
	bw_npys_close(&a);
	return st;
}

static void add_file(cJSON *j, const char *key, const char *path)
{
	if (path) {
		const char *s = strrchr(path, '/');
		cJSON_AddStringToObject(j, key, s ? s + 1 : path);
	}
}

static int source_json(const burrow_import_opts *o, const bw_content *ct, const burrow_import_stats *is, char **out)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return BURROW_E_NOMEM;
	cJSON_AddStringToObject(j, "kind", "import");
	add_file(j, "edges", o->edges);
	cJSON_AddNumberToObject(j, "edges_stored", (double)is->edges_read);
	cJSON_AddNumberToObject(j, "self_loops_dropped", (double)is->self_loops);
	cJSON_AddNumberToObject(j, "duplicates_dropped", (double)is->duplicates);
	cJSON_AddBoolToObject(j, "header_skipped", is->header_skipped);
	cJSON_AddBoolToObject(j, "num_nodes_inferred", is->num_nodes_inferred);
	cJSON_AddBoolToObject(j, "undirected", o->undirected);
	add_file(j, "features", o->features);
	add_file(j, "labels", o->labels);
	add_file(j, "train", o->train);
	add_file(j, "valid", o->valid);
	add_file(j, "test", o->test);
	add_file(j, "edge_features", o->edge_features);
	add_file(j, "content", o->content);
	if (o->relabel)
		cJSON_AddBoolToObject(j, "relabel", true);
	if (ct->class_names) {
		cJSON *c = cJSON_CreateStringArray((const char *const *)ct->class_names, ct->num_classes);
		if (c && !cJSON_AddItemToObject(j, "class_names", c))
			cJSON_Delete(c);
	}
	if (o->node_features_from_edges)
		cJSON_AddStringToObject(j, "node_features_from_edges", burrow_edge_reduce_name(o->edge_reduce));
	if (is->split_random) {
		cJSON *f = cJSON_CreateDoubleArray(o->split, 3);
		if (f && !cJSON_AddItemToObject(j, "random_split", f))
			cJSON_Delete(f); /* its key's copy failed: f is still ours (the printed source then lacks it) */
		cJSON_AddNumberToObject(j, "split_seed", (double)o->split_seed);
	}
	*out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (bw_json_nomem() || !*out) { /* an adder failed: the source would lack a field */
		cJSON_free(*out);
		*out = NULL;
		return bw_err(BURROW_E_NOMEM, "out of memory formatting meta.json's source");
	}
	return 0;
}

/* ---------------------------------------------------------------- typed graphs */

static int type_named(const burrow_import_opts *o, const char *name)
{
	for (int t = 0; name && t < o->num_types; t++)
		if (o->types[t].name && !strcmp(o->types[t].name, name))
			return t;
	return -1;
}

static int plan_types(const burrow_import_opts *o, bw_hplan *h)
{
	int st = 0;
	if (o->num_types > BURROW_MAX_TYPES || !o->types)
		return bw_err(BURROW_E_INVAL, "import: %d node types, at most %d", o->num_types, BURROW_MAX_TYPES);
	h->num_types = o->num_types;
	for (int t = 0; t < o->num_types && !st; t++) {
		const burrow_import_type *y = &o->types[t];
		if (!y->name || strlen(y->name) >= BURROW_MAX_NAME)
			return bw_err(BURROW_E_INVAL, "import: node type %d: a name of 1 to %d characters is required", t,
				      BURROW_MAX_NAME - 1);
		if (y->num_nodes < 1)
			return bw_err(BURROW_E_INVAL, "import: node type '%s': count %lld, want at least 1", y->name,
				      (long long)y->num_nodes);
		memcpy(h->type[t].name, y->name, strlen(y->name) + 1);
		h->type[t].n = y->num_nodes;
		if (y->features) {
			h->type[t].feat_kind = BW_IN_NPY;
			st = bw_member_file(&h->type[t].feat, y->features);
		}
	}
	return st;
}

static int plan_relations(const burrow_import_opts *o, bw_hplan *h)
{
	if (o->num_relations < 1 || o->num_relations > BURROW_MAX_RELATIONS || !o->relations)
		return bw_err(BURROW_E_INVAL, "import: %d relations, want 1 to %d", o->num_relations, BURROW_MAX_RELATIONS);
	h->num_relations = o->num_relations;
	for (int i = 0; i < o->num_relations; i++) {
		const burrow_import_relation *x = &o->relations[i];
		bw_hrel *r = &h->rel[i];
		if (!x->edges)
			return bw_err(BURROW_E_INVAL, "import: relation %d has no edge file", i);
		if (!x->name || strlen(x->name) >= BURROW_MAX_NAME)
			return bw_err(BURROW_E_INVAL, "%s: a relation name of 1 to %d characters is required", x->edges,
				      BURROW_MAX_NAME - 1);
		r->src = type_named(o, x->src);
		r->dst = type_named(o, x->dst);
		if (r->src < 0 || r->dst < 0)
			return bw_err(BURROW_E_INVAL, "%s: relation (%s, %s, %s) names node type '%s', which no node type "
				      "declares", x->edges, x->src ? x->src : "?", x->name, x->dst ? x->dst : "?",
				      r->src < 0 ? (x->src ? x->src : "?") : (x->dst ? x->dst : "?"));
		memcpy(r->name, x->name, strlen(x->name) + 1);
		r->kind = ends_with(x->edges, ".npy") ? BW_IN_NPY : BW_IN_TEXT;
		r->listed = -1;
		int st = bw_member_file(&r->edges, x->edges);
		if (st)
			return st;
	}
	return 0;
}

static int plan_typed(const burrow_import_opts *o, const char *spill, bw_hplan *h)
{
	int st;
	if ((st = plan_types(o, h)) || (st = plan_relations(o, h)))
		return st;
	h->target = -1;
	if (o->target && (h->target = type_named(o, o->target)) < 0)
		return bw_err(BURROW_E_INVAL, "import: target '%s' is not a declared node type", o->target);
	h->feat_dtype = o->feat_dtype;
	h->add_reverse = o->add_reverse;
	h->fill = o->fill;
	h->mem = o->mem_bytes ? o->mem_bytes : bw_half_memory();
	h->spill = spill;
	h->progress = o->progress;
	h->progress_user = o->progress_user;
	return bw_hplan_check(h);
}

/* The split files of split_dir: DIR/<split>.npy, or OGB's DIR/<target>/<split>.npy; a folder
 * for another type is a split of a type without labels. */
static int split_dir_files(const burrow_import_opts *o, char paths[3][1100])
{
	static const char *const names[3] = {"train", "valid", "test"};
	char sub[1100];
	DIR *d = opendir(o->split_dir);
	if (!d)
		return bw_err_errno(errno, o->split_dir, "open the split folder");
	struct dirent *e;
	bool nested = false;
	int st = 0;
	while (!st && (e = readdir(d))) {
		struct stat sb;
		if (e->d_name[0] == '.' || snprintf(sub, sizeof sub, "%s/%s", o->split_dir, e->d_name) >= (int)sizeof sub ||
		    stat(sub, &sb) != 0 || !S_ISDIR(sb.st_mode))
			continue;
		if (strcmp(e->d_name, o->target))
			st = bw_err(BURROW_E_INVAL, "%s: a split of type '%s', which has no labels (the labels are type '%s''s)",
				    sub, e->d_name, o->target);
		nested = true;
	}
	closedir(d);
	for (int s = 0; s < 3 && !st; s++) {
		int n = nested ? snprintf(paths[s], 1100, "%s/%s/%s.npy", o->split_dir, o->target, names[s])
			       : snprintf(paths[s], 1100, "%s/%s.npy", o->split_dir, names[s]);
		if (n >= 1100)
			st = bw_err(BURROW_E_INVAL, "%s: path too long", o->split_dir);
		else if (access(paths[s], R_OK) != 0)
			st = bw_err_errno(errno, paths[s], "read the split");
	}
	return st;
}

/* Labels and splits belong to the target type: refuse them without it. */
static int check_typed_targets(const burrow_import_opts *o, bool random)
{
	const char *split = o->split_dir ? o->split_dir : o->train ? o->train : random ? "--split" : NULL;
	if (o->labels && !o->target)
		return bw_err(BURROW_E_INVAL, "%s: labels of which type? give the target type (--target)", o->labels);
	if (split && !o->labels)
		return bw_err(BURROW_E_INVAL, "%s: a split of type '%s', which has no labels (give --labels)", split,
			      o->target ? o->target : "(no --target)");
	if ((o->train || o->valid || o->test) && !(o->train && o->valid && o->test))
		return bw_err(BURROW_E_INVAL, "import: give all three splits (train, valid, test) or none");
	if ((o->split_dir != NULL) + (o->train != NULL) + random > 1)
		return bw_err(BURROW_E_INVAL, "import: split files, a split folder and a random split exclude each other");
	return random ? check_fracs(o->split) : 0;
}

static int typed_source_json(const burrow_import_opts *o, const bw_hplan *h, bool random, char **out)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return BURROW_E_NOMEM;
	cJSON_AddStringToObject(j, "kind", "import");
	bw_hplan_json(h, j);
	add_file(j, "labels", o->labels);
	add_file(j, "split_dir", o->split_dir);
	add_file(j, "train", o->train);
	add_file(j, "valid", o->valid);
	add_file(j, "test", o->test);
	if (random) {
		cJSON *f = cJSON_CreateDoubleArray(o->split, 3);
		if (f && !cJSON_AddItemToObject(j, "random_split", f))
			cJSON_Delete(f);
		cJSON_AddNumberToObject(j, "split_seed", (double)o->split_seed);
	}
	*out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (bw_json_nomem() || !*out) {
		cJSON_free(*out);
		*out = NULL;
		return bw_err(BURROW_E_NOMEM, "out of memory formatting meta.json's source");
	}
	return 0;
}

/* The target's labels and splits into w. */
static int typed_labels(const burrow_import_opts *o, burrow_writer *w, const bw_hplan *h, bool random,
			char split_paths[3][1100], burrow_import_stats *is)
{
	int32_t *y = NULL;
	int st = 0;
	if (!o->labels)
		return 0;
	const int64_t n = h->type[h->target].n;
	bw_src ls = {.name = o->labels, .path = o->labels, .fd = -1};
	if ((st = bw_labels_npy(&ls, n, &y)))
		return st;
	int32_t top = -1;
	for (int64_t v = 0; v < n; v++)
		top = BW_MAX(top, y[v]);
	if (top < 0)
		bw_log(BURROW_LOG_WARN, "%s: no node has a label; writing no labels", o->labels);
	else
		st = burrow_writer_put_labels(w, y, n, top + 1);
	report(o, "labels", 1, 1);
	const char *files[3] = {o->train, o->valid, o->test};
	if (o->split_dir)
		for (int s = 0; s < 3; s++)
			files[s] = split_paths[s];
	const split_out so = {.w = w};
	for (int s = 0; s < 3 && !st && files[0]; s++)
		st = put_split(n, NULL, &so, s, files[s], &is->split_sizes[s]);
	if (!st && random)
		st = put_random_split(o, &so, y, n, is->split_sizes);
	bw_free(y);
	return st;
}

/* A typed graph (format version 2) from per-relation edge files and per-type features. */
static int import_typed(const char *out, const burrow_import_opts *o)
{
	burrow_import_stats is = {.size = sizeof is};
	burrow_writer *w = NULL;
	char *spill = NULL, *src = NULL, split_paths[3][1100];
	const bool random = o->split[0] != 0 || o->split[1] != 0 || o->split[2] != 0;
	bw_hplan *h = bw_calloc(1, sizeof *h);
	int st = h ? 0 : BURROW_E_NOMEM;
	if (!st && (o->edges || o->features || o->num_nodes))
		st = bw_err(BURROW_E_INVAL, "import: a typed graph takes its edges and features per relation and type, "
			    "not --edges, --features or --num-nodes");
	if (!st && (o->relabel || o->content || o->split_name))
		st = bw_err(BURROW_E_UNSUPPORTED, "import: --relabel, --content and named splits are for graphs of one node "
			    "type so far");
	if (!st && !(spill = o->tmp_dir ? bw_strdup(o->tmp_dir) : bw_dirname(out)))
		st = BURROW_E_NOMEM;
	if (st || (st = plan_typed(o, spill, h)) || (st = check_typed_targets(o, random)) ||
	    (o->split_dir && (st = split_dir_files(o, split_paths))))
		goto out;
	const char *name = o->name;
	if (!name) {
		name = strrchr(out, '/');
		name = name && name[1] ? name + 1 : out;
	}
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = o->overwrite;
	if ((st = burrow_writer_open(&w, out, name, &wo)) || (st = bw_hetero_put(w, h)) ||
	    (st = typed_labels(o, w, h, random, split_paths, &is)) || (st = typed_source_json(o, h, random, &src)) ||
	    (st = burrow_writer_set_source(w, src)))
		goto out;
	st = burrow_writer_commit(w);
	w = NULL;
	for (int t = 0; !st && t < h->num_types; t++)
		is.num_nodes += h->type[t].n;
	for (int r = 0; !st && r < h->num_relations; r++)
		is.edges_read += h->rel[r].read;
	is.split_random = random;
	if (!st)
		bw_stats_out(o->stats, &is, sizeof is);
out:
	burrow_writer_abort(w);
	cJSON_free(src);
	bw_free(spill);
	bw_free(h);
	return st;
}

/* The options of a graph of one node type (o NULL: none given). */
/* ---------------------------------------------------------------- --edge-split (link prediction) */

static bool edge_split_on(const burrow_import_opts *o)
{
	return o->edge_split[0] != 0 || o->edge_split[1] != 0 || o->edge_split[2] != 0;
}

/* An edge split excludes labels and node splits (a link dataset has neither). */
static int check_edge_split(const burrow_import_opts *o)
{
	if (o->labels || o->train || o->split[0] != 0 || o->split[1] != 0 || o->split[2] != 0)
		return bw_err(BURROW_E_INVAL, "import: an edge split (link prediction) takes no labels or node splits");
	int st = check_fracs(o->edge_split);
	return st ? bw_err_prefix(st, "import: edge split: ") : 0;
}

/* Every edge read into a graph held in memory, then split at random (bw_link_split_random): the
 * training edges become w's graph. The stats count the whole graph's edges. */
static int import_edge_split(const burrow_import_opts *o, bw_idmap *map, burrow_writer *w, int64_t n,
			     const char *name,
			     const burrow_csr_opts *co, burrow_import_stats *is, bw_edge_tally *tally)
{
	burrow_csr_builder *b = NULL;
	burrow_csr g;
	burrow_csr_opts all = *co;
	all.mem_bytes = 0; /* in memory: the split shuffles every edge */
	all.progress = NULL;
	int st = burrow_csr_builder_open(&b, n, &all);
	if (!st && !(st = read_edges(o, map, b, n, &is->edges_read, tally, &is->header_skipped)) &&
	    !(st = burrow_csr_builder_finish(b, &g))) {
		bw_link_draw in = {.name = name, .graph = &g, .symmetric = o->undirected, .seed = o->split_seed,
				   .mem_bytes = co->mem_bytes, .spill_dir = co->spill_dir};
		memcpy(in.frac, o->edge_split, sizeof in.frac);
		is->entries = g.num_edges; /* the whole graph's, for the stats */
		st = bw_link_split_random(w, &in);
		memcpy(is->edge_split_sizes, in.sizes, sizeof in.sizes);
	}
	burrow_csr_builder_close(b);
	return st;
}

/* --edge-features: the rows, one per edge read, into w (and node features from them). */
static int import_edge_features(const burrow_import_opts *o, burrow_writer *w, int64_t edges)
{
	bw_edge_rows r;
	if (!o->edge_features)
		return 0;
	int st = bw_edge_rows_load(o->edge_features, BURROW_DTYPE_F32, &r, o->progress, o->progress_user);
	if (st)
		return st;
	st = bw_edge_rows_put(w, &r, edges, o->edge_features, o->node_features_from_edges, o->edge_reduce);
	bw_edge_rows_free(&r);
	return st;
}

/* The edge-feature options that go together. */
static int check_edge_opts(const burrow_import_opts *o)
{
	if (o->num_types && (o->edge_features || o->node_features_from_edges))
		return bw_err(BURROW_E_INVAL, "import: edge features are for homogeneous graphs (not typed ones) so far");
	if (o->node_features_from_edges && !o->edge_features)
		return bw_err(BURROW_E_INVAL, "import: node features from edges need --edge-features");
	if (o->node_features_from_edges && o->features)
		return bw_err(BURROW_E_INVAL, "import: node features come from --features or from the edges, not both");
	return 0;
}

static int check_homogeneous(const burrow_import_opts *o)
{
	if (o && (o->num_relations || o->target || o->split_dir || o->add_reverse || o->fill))
		return bw_err(BURROW_E_INVAL, "import: relations, a target, a split folder, --add-reverse and --fill are for "
			      "typed graphs (give their node types)");
	if (!o || !o->edges)
		return bw_err(BURROW_E_INVAL, "import: no edge file given");
	if (o->num_nodes < 0)
		return bw_err(BURROW_E_INVAL, "import: negative node count %lld", (long long)o->num_nodes);
	if (o->feat_dtype != BURROW_DTYPE_INVALID && o->feat_dtype != BURROW_DTYPE_F32 && o->feat_dtype != BURROW_DTYPE_F16)
		return bw_err(BURROW_E_INVAL, "import: features must be float32 or float16");
	return edge_split_on(o) ? check_edge_split(o) : 0;
}

/* The dataset's name: o->name, else the output folder's last component. */
static const char *import_name(const char *out, const burrow_import_opts *o)
{
	if (o->name)
		return o->name;
	const char *s = strrchr(out, '/');
	return s && s[1] ? s + 1 : out;
}

/* A homogeneous import under way: the options, what it read, and the keyed inputs. */
typedef struct imp {
	const burrow_import_opts *o;
	burrow_import_stats is;
	int64_t n;
	char n_from[96];       /* where N came from, for messages */
	bw_idmap *map;         /* --relabel */
	bw_content ct;         /* --content */
	bool has_ct;
	int32_t *y;            /* labels, one class per node, or NULL */
	int32_t num_classes;
} imp;

/* A message about a file of N rows says where N came from. */
static int n_note(const imp *m, int st)
{
	if (st != BURROW_E_FORMAT && st != BURROW_E_RANGE)
		return st;
	char *msg = bw_strdup(burrow_last_error());
	st = msg ? bw_err(st, "%s (N = %lld: %s)", msg, (long long)m->n, m->n_from) : st;
	bw_free(msg);
	return st;
}

/* N without --num-nodes or --relabel: the largest id + 1, or more rows of the features, labels
 * or node file; features and labels must agree on their rows (each names the other). */
static int infer_n(imp *m, const bw_edge_tally *t)
{
	const burrow_import_opts *o = m->o;
	int64_t fr = -1, lr = -1;
	int st = 0;
	m->n = t->max_id + 1;
	snprintf(m->n_from, sizeof m->n_from, "the edges' largest id + 1");
	if (o->features && !(st = npy_rows(o->features, &fr)) && fr > m->n) {
		m->n = fr;
		snprintf(m->n_from, sizeof m->n_from, "the rows of %s", o->features);
	}
	if (!st && o->labels && is_npy_path(o->labels) && !(st = npy_rows(o->labels, &lr)) && fr >= 0 && lr != fr)
		return bw_err(BURROW_E_FORMAT, "%s has %lld rows and %s has %lld: one node a row in both (the edges' largest "
			      "id + 1 is %lld)", o->features, (long long)fr, o->labels, (long long)lr, (long long)t->max_id + 1);
	if (!st && lr > m->n) {
		m->n = lr;
		snprintf(m->n_from, sizeof m->n_from, "the rows of %s", o->labels);
	}
	for (int64_t i = 0; !st && m->has_ct && i < m->ct.n; i++)
		if (m->ct.ids[i] >= m->n) {
			m->n = m->ct.ids[i] + 1;
			snprintf(m->n_from, sizeof m->n_from, "the largest id of %s + 1", o->content);
		}
	if (!st && m->n == 0)
		st = bw_err(BURROW_E_FORMAT, "%s: no edges (only comments or blank lines?) and no node count (give "
			    "--num-nodes for a graph without edges)", o->edges);
	m->is.num_nodes_inferred = true;
	return st;
}

/* N: the map's count (--relabel: the node file's ids, then the edges'), given, or inferred. */
static int import_nodes(imp *m)
{
	const burrow_import_opts *o = m->o;
	const size_t mem = o->mem_bytes ? o->mem_bytes : bw_half_memory();
	bw_edge_tally t = {.max_id = -1};
	int64_t e;
	int st = 0;
	if (o->relabel && (st = bw_idmap_open(&m->map, mem)))
		return st;
	if (o->content && !(st = bw_content_load(o->content, m->map, mem, &m->ct)))
		m->has_ct = true;
	if (st)
		return st;
	m->n = o->num_nodes;
	snprintf(m->n_from, sizeof m->n_from, "--num-nodes");
	if (m->n && !m->map)
		return 0;
	if ((st = read_edges(o, m->map, NULL, 0, &e, &t, &m->is.header_skipped)))
		return st;
	if (!m->map)
		return infer_n(m, &t);
	m->n = bw_idmap_count(m->map);
	snprintf(m->n_from, sizeof m->n_from, "the distinct ids of --relabel");
	m->is.num_nodes_inferred = true;
	return m->n ? 0 : bw_err(BURROW_E_FORMAT, "%s: no edges and no node file: nothing to relabel", o->edges);
}

/* v with a comma every three digits ("10,000,000"). */
static const char *group_digits(int64_t v, char *buf, size_t cap)
{
	char d[32];
	int k = snprintf(d, sizeof d, "%lld", (long long)v), neg = v < 0, j = 0;
	for (int i = 0; i < k && (size_t)j + 2 < cap; i++) {
		if (i > neg && (k - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = d[i];
	}
	buf[j] = '\0';
	return buf;
}

/* The nodes without an edge, from the bitmap of those with one. */
static void count_isolated(imp *m, const uint64_t *seen)
{
	int64_t distinct = 0;
	for (int64_t k = 0; k < (m->n + 63) / 64; k++)
		distinct += __builtin_popcountll(seen[k]);
	m->is.isolated = m->n - distinct;
}

/* More than half the nodes without an edge: one line saying so (ids sparse: --relabel), once the
 * dataset is written (a refusal says one thing only). */
static void warn_isolated(const imp *m)
{
	const int64_t distinct = m->n - m->is.isolated;
	if (2 * m->is.isolated <= m->n || edge_split_on(m->o))
		return;
	char a[32], b[32];
	group_digits(m->n, a, sizeof a);
	group_digits(distinct, b, sizeof b);
	if (!m->map && m->is.num_nodes_inferred && !strcmp(m->n_from, "the edges' largest id + 1"))
		bw_log(BURROW_LOG_WARN, "%s: N = %s from the largest id but %s distinct ids: use --relabel", m->o->edges, a, b);
	else
		bw_log(BURROW_LOG_WARN, "%s: %s of the %s nodes have no edge (%s)", m->o->edges,
		       group_digits(m->is.isolated, b, sizeof b), a,
		       m->map ? "the node file lists them" : "sparse ids? --relabel numbers the ids that appear 0..N-1");
}

/* The graph: one pass over the edges into a builder (or an edge split), edge features. */
static int import_graph(imp *m, burrow_writer *w, const char *name, const char *spill)
{
	const burrow_import_opts *o = m->o;
	burrow_csr_builder *b = NULL;
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = o->undirected;
	co.mem_bytes = o->mem_bytes ? o->mem_bytes : bw_half_memory();
	co.spill_dir = spill;
	co.progress = o->progress;
	co.progress_user = o->progress_user;
	co.edge_ids = o->edge_features != NULL;
	uint64_t *seen = bw_calloc((size_t)(m->n + 63) / 64 + 1, sizeof *seen);
	bw_edge_tally t = {.max_id = -1, .seen = seen};
	int st = seen ? 0 : BURROW_E_NOMEM;
	if (!st && edge_split_on(o))
		st = import_edge_split(o, m->map, w, m->n, name, &co, &m->is, &t);
	else if (!st && !(st = burrow_csr_builder_open(&b, m->n, &co)) &&
		 !(st = read_edges(o, m->map, b, m->n, &m->is.edges_read, &t, &m->is.header_skipped)) &&
		 !(st = burrow_writer_put_builder(w, b, o->undirected)))
		st = import_edge_features(o, w, m->is.edges_read);
	burrow_csr_builder_close(b);
	if (!st) {
		m->is.self_loops = t.self_loops;
		m->is.entries = edge_split_on(o) ? m->is.entries : bw_writer_num_edges(w);
		m->is.duplicates = m->is.edges_read - m->is.self_loops - (o->undirected ? m->is.entries / 2 : m->is.entries);
		if (!edge_split_on(o))
			count_isolated(m, seen);
	}
	bw_free(seen);
	return st;
}

/* The node file's features and labels, node v getting its line's (zeros and -1 when it has none). */
static int content_put(imp *m, burrow_writer *w)
{
	const bw_content *ct = &m->ct;
	int64_t *row = NULL, missing = 0;
	float *buf = bw_malloc((size_t)(ct->dim ? ct->dim : 1) * sizeof *buf);
	int st = buf ? bw_content_rows(ct, m->o->content, m->map != NULL, m->n, &row) : BURROW_E_NOMEM;
	if (!st && !(m->y = bw_malloc((size_t)m->n * sizeof *m->y + 1)))
		st = BURROW_E_NOMEM;
	if (!st && ct->dim)
		st = burrow_writer_features_begin(w, m->n, ct->dim, m->o->feat_dtype ? m->o->feat_dtype : BURROW_DTYPE_F32);
	for (int64_t v = 0; !st && v < m->n; v++) {
		missing += row[v] < 0;
		m->y[v] = row[v] < 0 ? -1 : ct->label[row[v]];
		for (int64_t j = 0; j < ct->dim; j++)
			buf[j] = row[v] < 0 ? 0.0f : ct->feat[row[v] * ct->dim + j];
		if (ct->dim)
			st = bw_put_rows(w, buf, 1, ct->dim, m->o->feat_dtype ? m->o->feat_dtype : BURROW_DTYPE_F32);
	}
	if (!st && ct->dim)
		st = burrow_writer_features_end(w);
	if (!st && missing)
		bw_log(BURROW_LOG_WARN, "%s: %lld of the %lld nodes have no line in it: zero features, no label",
		       m->o->content, (long long)missing, (long long)m->n);
	m->num_classes = ct->num_classes;
	bw_free(row);
	bw_free(buf);
	return st;
}

/* --relabel's keyed .npy inputs: the original integer id of each node (text ids: refused). */
static int keyed_rows(const imp *m, const char *path, int64_t **row)
{
	if (bw_idmap_strings(m->map))
		return bw_err(BURROW_E_UNSUPPORTED, "%s: .npy rows are keyed by integer ids, but --relabel found text ids "
			      "(give the features and labels in a node file, --content)", path);
	if (!(*row = bw_malloc((size_t)m->n * sizeof **row + 1)))
		return BURROW_E_NOMEM;
	for (int64_t v = 0; v < m->n; v++)
		if (((*row)[v] = bw_idmap_num_at(m->map, v)) < 0)
			return bw_err(BURROW_E_RANGE, "%s: id %lld has no row (rows are keyed by ids >= 0 under --relabel)", path,
				      (long long)(*row)[v]);
	return 0;
}

/* --features: as they are, or rows keyed by the original ids under --relabel. */
static int import_features(imp *m, burrow_writer *w)
{
	const burrow_import_opts *o = m->o;
	bw_src fs = {.name = o->features, .path = o->features, .fd = -1};
	int64_t *row = NULL;
	int st;
	if (!m->map)
		return n_note(m, bw_features_npy(w, &fs, m->n, o->feat_dtype, o->progress, o->progress_user));
	if (!(st = keyed_rows(m, o->features, &row)))
		st = bw_features_npy_keyed(w, o->features, m->n, row, "--relabel: row k holds id k's features", o->feat_dtype,
					   o->progress, o->progress_user);
	bw_free(row);
	return st;
}

/* --labels: as they are, or keyed by the original ids under --relabel. */
static int import_labels_of(imp *m, burrow_writer *w)
{
	const char *path = m->o->labels;
	int64_t tasks, rows, *row = NULL;
	int32_t *all = NULL;
	if (!m->map)
		return n_note(m, import_labels(path, m->n, w, &m->y, &tasks, m->o->multilabel));
	int st = is_npy_path(path) ? keyed_rows(m, path, &row)
				   : bw_err(BURROW_E_UNSUPPORTED, "%s: text labels with --relabel: give them in --content", path);
	if (!st && !(st = npy_rows(path, &rows)) && !(st = import_labels(path, rows, NULL, &all, &tasks, m->o->multilabel)) &&
	    !(m->y = bw_malloc((size_t)m->n * sizeof *m->y + 1)))
		st = BURROW_E_NOMEM;
	for (int64_t v = 0; !st && v < m->n; v++) {
		if (row[v] >= rows)
			st = bw_err(BURROW_E_RANGE, "%s: %lld rows, but id %lld needs row %lld (--relabel: row k holds id k's "
				    "label)", path, (long long)rows, (long long)row[v], (long long)row[v]);
		else
			m->y[v] = all[row[v]];
	}
	bw_free(row);
	bw_free(all);
	return st;
}

/* Labels (one class per node: written here; multi-label: written by import_labels), and splits. */
static int import_targets(imp *m, burrow_writer *w)
{
	const burrow_import_opts *o = m->o;
	int st = 0;
	if (m->has_ct)
		st = content_put(m, w);
	else if (o->features)
		st = import_features(m, w);
	if (!st && o->labels && !(st = import_labels_of(m, w)) && m->y) {
		for (int64_t v = 0; v < m->n; v++)
			m->num_classes = BW_MAX(m->num_classes, m->y[v] + 1);
		if (!m->num_classes)
			bw_log(BURROW_LOG_WARN, "%s: no node has a label; writing no labels", o->labels);
	}
	if (!st && m->y && m->num_classes)
		st = burrow_writer_put_labels(w, m->y, m->n, m->num_classes);
	if (!st && (o->labels || m->has_ct))
		report(o, "labels", 1, 1);
	const char *files[3] = {o->train, o->valid, o->test};
	const split_out so = {.w = w, .name = o->split_name};
	for (int s = 0; s < 3 && !st && o->train; s++)
		st = put_split(m->n, m->map, &so, s, files[s], &m->is.split_sizes[s]);
	if (!st && m->is.split_random)
		st = put_random_split(o, &so, m->y, m->n, m->is.split_sizes);
	if (!st && o->split_name && (o->train || m->is.split_random)) {
		cJSON *e = named_entry(m->is.split_sizes), *all = e ? cJSON_CreateObject() : NULL;
		if (!all || !cJSON_AddItemToObject(all, o->split_name, e)) {
			cJSON_Delete(all);
			cJSON_Delete(e);
			return BURROW_E_NOMEM;
		}
		st = bw_writer_meta_add(w, "named_splits", all);
	}
	if (!st && m->map) {
		m->is.orig_ids_text = bw_idmap_strings(m->map);
		st = bw_idmap_put(m->map, w);
	}
	return st;
}

/* The options of a homogeneous import that go together. */
static int check_import(const burrow_import_opts *o)
{
	int st = check_homogeneous(o);
	if (st)
		return st;
	if ((o->train || o->valid || o->test) && !(o->train && o->valid && o->test))
		return bw_err(BURROW_E_INVAL, "import: give all three splits (train, valid, test) or none");
	const bool random = o->split[0] != 0 || o->split[1] != 0 || o->split[2] != 0;
	if (random && o->train)
		return bw_err(BURROW_E_INVAL, "import: a random split and split files exclude each other");
	if (o->relabel && o->num_nodes)
		return bw_err(BURROW_E_INVAL, "import: --relabel counts the ids it finds; leave --num-nodes out");
	if (o->split_name && !(o->train || random))
		return bw_err(BURROW_E_INVAL, "import: a split name (%s) without a split (files or --split)", o->split_name);
	if (o->split_name && !bw_type_name_ok(o->split_name))
		return bw_err(BURROW_E_INVAL, "import: '%s' is not a split name (1 to %d of A-Z a-z 0-9 _ -)", o->split_name,
			      BURROW_MAX_NAME - 1);
	if (o->content && (o->features || o->labels || o->node_features_from_edges))
		return bw_err(BURROW_E_INVAL, "import: %s gives the features and labels: no --features or --labels with it",
			      o->content);
	return random ? check_fracs(o->split) : 0;
}

static int import_plain(void *ctx, const char *dir) { return burrow_import(dir, ctx); }

/* --order: the import as usual into a scratch folder, then reordered into out (orig_ids composed). */
static int import_ordered(const char *out, const burrow_import_opts *o)
{
	if (o->num_types > 0)
		return bw_err(BURROW_E_UNSUPPORTED, "import: --order renumbers datasets of one node type, not a typed graph "
			      "(--node-type)");
	burrow_import_opts plain = *o;
	plain.order = BURROW_ORDER_NONE;
	plain.overwrite = false;
	const bw_order_job j = {.order = o->order, .seed = o->split_seed, .mem_bytes = o->mem_bytes,
				.overwrite = o->overwrite, .progress = o->progress, .progress_user = o->progress_user,
				.write = import_plain, .ctx = &plain};
	return bw_write_ordered(out, &j);
}

int burrow_import(const char *out, const burrow_import_opts *opts)
{
	burrow_writer *w = NULL;
	char *spill = NULL, *src = NULL;
	burrow_import_opts oo;
	imp m = {.o = &oo, .is = {.size = sizeof m.is}};
	int st;

	burrow_import_defaults(&oo);
	if (opts && (st = bw_opts_in(&oo, sizeof oo, opts, "burrow_import_opts")))
		return st;
	if ((st = bw_stats_check(oo.stats, "burrow_import_stats")) || (st = check_edge_opts(&oo)))
		return st;
	if (oo.order != BURROW_ORDER_NONE)
		return import_ordered(out, &oo);
	if (opts && oo.num_types > 0)
		return import_typed(out, &oo);
	if ((st = check_import(opts ? &oo : NULL)))
		return st;
	m.is.split_random = oo.split[0] != 0 || oo.split[1] != 0 || oo.split[2] != 0;
	if ((st = import_nodes(&m)))
		goto out;
	if (!(spill = oo.tmp_dir ? bw_strdup(oo.tmp_dir) : bw_dirname(out))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = oo.overwrite;
	const char *name = import_name(out, &oo);
	if ((st = bw_check_space(out, ((double)oo.num_nodes + 1) * 8, "an indptr.npy for --num-nodes")) ||
	    (st = burrow_writer_open(&w, out, name, &wo)) || (st = import_graph(&m, w, name, spill)) ||
	    (st = import_targets(&m, w)) || (st = source_json(&oo, &m.ct, &m.is, &src)) ||
	    (st = burrow_writer_set_source(w, src)))
		goto out;
	m.is.num_nodes = m.n;
	st = burrow_writer_commit(w);
	w = NULL;
	if (!st)
		bw_stats_out(oo.stats, &m.is, sizeof m.is);
	if (!st)
		warn_isolated(&m);
out:
	burrow_writer_abort(w);
	bw_idmap_close(m.map);
	bw_content_free(&m.ct);
	cJSON_free(src);
	bw_free(m.y);
	bw_free(spill);
	return st;
}

/* ---------------------------------------------------------------- a named split for a dataset */

/* The dataset's original ids (orig_ids.npy or orig_ids.txt) as a map; *map NULL when it has none. */
static int orig_map(const char *dir, bw_idmap **map)
{
	char *npy = bw_path_join(dir, "orig_ids.npy"), *txt = bw_path_join(dir, "orig_ids.txt"), *text = NULL;
	int64_t *v = NULL, id;
	bw_npy h;
	int st = npy && txt ? 0 : BURROW_E_NOMEM;
	*map = NULL;
	if (st || (access(npy, F_OK) != 0 && access(txt, F_OK) != 0))
		goto out;
	if ((st = bw_idmap_open(map, SIZE_MAX)))
		goto out;
	if (access(npy, F_OK) == 0) {
		if (!(st = bw_npy_load(npy, &h, (void **)&v)) && h.dtype != BURROW_DTYPE_I64)
			st = bw_err(BURROW_E_FORMAT, "%s: %s, expected int64", npy, burrow_dtype_name(h.dtype));
		for (int64_t i = 0; !st && i < bw_npy_count(&h); i++)
			st = bw_idmap_num(*map, v[i], true, &id);
	} else if (!(st = bw_read_text(txt, SIZE_MAX / 2, &text))) {
		for (char *p = text, *nl; !st && (nl = strchr(p, '\n')); p = nl + 1)
			st = bw_idmap_text(*map, p, (size_t)(nl - p), true, &id);
	}
out:
	bw_free(v);
	bw_free(text);
	bw_free(npy);
	bw_free(txt);
	return st;
}

/* meta.json's "named_splits"[name] = sizes, the file rewritten atomically. */
static int meta_add_named(const char *dir, const char *name, const int64_t sizes[3])
{
	char *path = bw_path_join(dir, "meta.json"), *text = NULL, *out = NULL;
	int st = path ? bw_read_text(path, 16 << 20, &text) : BURROW_E_NOMEM;
	cJSON *j = st ? NULL : cJSON_Parse(text), *all = NULL, *e = named_entry(sizes);
	if (!st && (!j || !e))
		st = bw_err(BURROW_E_FORMAT, "%s: not JSON (or out of memory)", path);
	if (!st && !(all = cJSON_GetObjectItemCaseSensitive(j, "named_splits")) &&
	    !(all = cJSON_AddObjectToObject(j, "named_splits")))
		st = BURROW_E_NOMEM;
	if (!st) {
		cJSON_DeleteItemFromObjectCaseSensitive(all, name);
		if (cJSON_AddItemToObject(all, name, e))
			e = NULL;
		if (e || !(out = cJSON_Print(j)))
			st = BURROW_E_NOMEM;
	}
	if (!st)
		st = bw_write_text_atomic(path, out);
	cJSON_Delete(e);
	cJSON_Delete(j);
	cJSON_free(out);
	bw_free(text);
	bw_free(path);
	return st;
}

/* The split's files into the folder tmp (labels: the dataset's, for a random split). */
static int add_split_files(const burrow_import_opts *o, burrow_dataset *ds, const char *tmp, int64_t sizes[3])
{
	const char *dir = bw_dataset_dir(ds);
	const int64_t n = burrow_dataset_get_info(ds)->num_nodes;
	const split_out so = {.dir = tmp};
	const char *files[3] = {o->train, o->valid, o->test};
	bw_idmap *map = NULL;
	int st = bw_mkdir_p(tmp, 0755);
	if (!st && o->train && !(st = orig_map(dir, &map)))
		for (int s = 0; s < 3 && !st; s++)
			st = put_split(n, map, &so, s, files[s], &sizes[s]);
	if (!st && !o->train)
		st = put_random_split(o, &so, burrow_dataset_labels(ds), n, sizes);
	bw_idmap_close(map);
	return st;
}

int burrow_import_add_split(const char *dir, const burrow_import_opts *opts)
{
	burrow_import_opts o;
	burrow_import_stats is = {.size = sizeof is};
	burrow_dataset *ds = NULL;
	char *base = NULL, *tmp = NULL, *dst = NULL;
	burrow_import_defaults(&o);
	int st = opts ? bw_opts_in(&o, sizeof o, opts, "burrow_import_opts") : 0;
	const bool random = o.split[0] != 0 || o.split[1] != 0 || o.split[2] != 0;
	if (!st && (st = bw_stats_check(o.stats, "burrow_import_stats")))
		return st;
	if (!st && (!o.split_name || !bw_type_name_ok(o.split_name)))
		st = bw_err(BURROW_E_INVAL, "%s: a split name is required (1 to %d of A-Z a-z 0-9 _ -)", dir,
			    BURROW_MAX_NAME - 1);
	if (!st && (random ? o.train != NULL : !(o.train && o.valid && o.test)))
		st = bw_err(BURROW_E_INVAL, "%s: give the three split files (train, valid, test) or a random split", dir);
	if (st || (random && (st = check_fracs(o.split))) || (st = burrow_dataset_open(&ds, dir)))
		return st;
	if (burrow_dataset_hetero(ds))
		st = bw_err(BURROW_E_UNSUPPORTED, "%s: named splits are for datasets of one node type so far", dir);
	if (!st && (!(base = bw_path_join(dir, "split")) || !(dst = bw_path_join(base, o.split_name)) ||
		    !(tmp = bw_malloc(strlen(dst) + 32))))
		st = BURROW_E_NOMEM;
	if (!st && !o.overwrite && access(dst, F_OK) == 0)
		st = bw_err(BURROW_E_EXISTS, "%s: exists", dst);
	if (!st) {
		sprintf(tmp, "%s/.%s.tmp-%d", base, o.split_name, (int)getpid());
		if ((st = add_split_files(&o, ds, tmp, is.split_sizes)) || (st = bw_replace_dir(tmp, dst, o.overwrite)))
			bw_rm_rf(tmp);
	}
	burrow_dataset_close(ds);
	if (!st && !(st = meta_add_named(dir, o.split_name, is.split_sizes))) {
		is.split_random = random;
		bw_stats_out(o.stats, &is, sizeof is);
	}
	bw_free(base);
	bw_free(tmp);
	bw_free(dst);
	return st;
}
