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
 * line detected (or forced). b NULL: a first pass that only tallies. */
static int edges_text(const burrow_import_opts *o, burrow_csr_builder *b, int64_t n, int64_t *count,
		      bw_edge_tally *tally, bool *header)
{
	bw_src src = {.name = o->edges, .path = o->edges, .fd = -1};
	bw_csv c;
	bool gz = false;
	int st = bw_is_gzip(o->edges, &gz);
	if (st || (st = bw_csv_open(&c, &src, gz, 0, true)))
		return st;
	if (!(st = bw_csv_header(&c, o->header, header)))
		st = bw_csv_edges(&c, n, b, b ? o->progress : NULL, o->progress_user, count, tally);
	bw_csv_close(&c);
	return st;
}

/* One pass over the edges into b (NULL: tally only). */
static int read_edges(const burrow_import_opts *o, burrow_csr_builder *b, int64_t n, int64_t *count,
		      bw_edge_tally *tally, bool *header)
{
	*header = false;
	*tally = (bw_edge_tally){.max_id = -1};
	if (ends_with(o->edges, ".npy")) {
		bw_src es = {.name = o->edges, .path = o->edges, .fd = -1};
		return bw_edges_npy(b, &es, n, count, b ? o->progress : NULL, o->progress_user, tally);
	}
	return edges_text(o, b, n, count, tally, header);
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

/* The labels of a homogeneous import: multi-label ones written to w (*T their count), or one
 * class per node into *y (caller frees; written by the caller). */
static int import_labels(const char *path, int64_t n, burrow_writer *w, int32_t **y, int64_t *T)
{
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
		if (multi && (a.h.shape[0] != n || t == BURROW_DTYPE_F16 || t == BURROW_DTYPE_INVALID))
			st = bw_err(BURROW_E_FORMAT, "%s: expected %lld rows of multi-label labels (integers, bool or float); "
				    "found %s of %lld rows", path, (long long)n, burrow_dtype_name(t), (long long)a.h.shape[0]);
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
	if (!st && *T > BW_MAX_CLASSES)
		st = bw_err(BURROW_E_FORMAT, "%s: %lld tasks, more than the %d Burrow accepts", path, (long long)*T,
			    BW_MAX_CLASSES);
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

/* --split: a random split of the labeled nodes (every node without labels) into w. */
static int put_random_split(const burrow_import_opts *o, burrow_writer *w, const int32_t *y, int64_t n,
			    int64_t sizes[3])
{
	int64_t *ids = bw_malloc((size_t)(n ? n : 1) * sizeof *ids);
	if (!ids)
		return BURROW_E_NOMEM;
	int st = burrow_split_random(y, n, o->split, o->split_seed, ids, sizes);
	for (int s = 0, at = 0; s < 3 && !st; at += (int)sizes[s], s++)
		st = burrow_writer_put_split(w, s, ids + at, sizes[s]);
	bw_free(ids);
	return st;
}

/* A split: node ids (int32/int64) or a bool mask of length N. */
static int put_split(int64_t num_nodes, burrow_writer *w, int split, const char *path,
		     int64_t *size)
{
	bw_src src = {.name = path, .path = path, .fd = -1};
	bw_npys a;
	int64_t *ids = NULL, k = 0;
	void *raw = NULL;
	int st = bw_npys_open(&a, &src);
	if (st)
		return st;
	const burrow_dtype t = a.h.dtype;
	const int64_t n = bw_npy_count(&a.h);
	const bool mask = t == BURROW_DTYPE_BOOL;
	if (a.h.ndim != 1 || !(mask || t == BURROW_DTYPE_I32 || t == BURROW_DTYPE_I64) || (mask && n != num_nodes)) {
		st = bw_err(BURROW_E_FORMAT, "%s: expected node ids (1-D int32 or int64) or a bool mask of %lld entries",
			    path, (long long)num_nodes);
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
	for (int64_t i = 0; i < n; i++) {
		if (mask) {
			if (((const uint8_t *)raw)[i])
				ids[k++] = i;
			continue;
		}
		int64_t v = t == BURROW_DTYPE_I64 ? ((const int64_t *)raw)[i] : ((const int32_t *)raw)[i];
		if (v < 0 || v >= num_nodes) {
			st = bw_err(BURROW_E_RANGE, "%s: entry %lld is node %lld, outside [0, %lld)", path, (long long)i,
				    (long long)v, (long long)num_nodes);
			goto out;
		}
		ids[k++] = v;
	}
	st = burrow_writer_put_split(w, split, ids, k);
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

static int source_json(const burrow_import_opts *o, const burrow_import_stats *is, char **out)
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
	for (int s = 0; s < 3 && !st && files[0]; s++)
		st = put_split(n, w, s, files[s], &is->split_sizes[s]);
	if (!st && random)
		st = put_random_split(o, w, y, n, is->split_sizes);
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
static int import_edge_split(const burrow_import_opts *o, burrow_writer *w, int64_t n, const char *name,
			     const burrow_csr_opts *co, burrow_import_stats *is, bw_edge_tally *tally)
{
	burrow_csr_builder *b = NULL;
	burrow_csr g;
	burrow_csr_opts all = *co;
	all.mem_bytes = 0; /* in memory: the split shuffles every edge */
	all.progress = NULL;
	int st = burrow_csr_builder_open(&b, n, &all);
	if (!st && !(st = read_edges(o, b, n, &is->edges_read, tally, &is->header_skipped)) &&
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

int burrow_import(const char *out, const burrow_import_opts *opts)
{
	burrow_writer *w = NULL;
	burrow_csr_builder *b = NULL;
	char *spill = NULL, *src = NULL;
	int32_t *y = NULL;
	burrow_import_stats is = {.size = sizeof is};
	burrow_import_opts oo;
	const burrow_import_opts *o = &oo;
	bw_edge_tally tally;
	int st;

	burrow_import_defaults(&oo);
	if (opts && (st = bw_opts_in(&oo, sizeof oo, opts, "burrow_import_opts")))
		return st;
	if ((st = bw_stats_check(o->stats, "burrow_import_stats")) || (st = check_edge_opts(o)))
		return st;
	if (opts && o->num_types > 0)
		return import_typed(out, o);
	if ((st = check_homogeneous(opts ? o : NULL)))
		return st;
	if ((o->train || o->valid || o->test) && !(o->train && o->valid && o->test))
		return bw_err(BURROW_E_INVAL, "import: give all three splits (train, valid, test) or none");
	is.split_random = o->split[0] != 0 || o->split[1] != 0 || o->split[2] != 0;
	const bool edge_split = edge_split_on(o);
	if (is.split_random && o->train)
		return bw_err(BURROW_E_INVAL, "import: a random split and split files exclude each other");
	if (is.split_random && (st = check_fracs(o->split)))
		return st;
	/* N: given, or the largest id + 1 (a first pass over the edges), or the rows of the
	 * features or labels when they have more (isolated nodes at the end) */
	int64_t n = o->num_nodes, rows;
	if (n == 0) {
		int64_t e;
		if ((st = read_edges(o, NULL, 0, &e, &tally, &is.header_skipped)))
			return st;
		n = tally.max_id + 1;
		if (o->features && (st = npy_rows(o->features, &rows)) == 0)
			n = BW_MAX(n, rows);
		if (!st && o->labels && is_npy_path(o->labels) && (st = npy_rows(o->labels, &rows)) == 0)
			n = BW_MAX(n, rows);
		if (st)
			return st;
		if (n == 0)
			return bw_err(BURROW_E_FORMAT, "%s: no edges (only comments or blank lines?) and no node count "
				      "(give --num-nodes for a graph without edges)", o->edges);
		is.num_nodes_inferred = true;
	}
	const char *name = import_name(out, o);
	spill = o->tmp_dir ? bw_strdup(o->tmp_dir) : bw_dirname(out);
	if (!spill)
		return BURROW_E_NOMEM;
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = o->overwrite;
	if ((st = bw_check_space(out, ((double)o->num_nodes + 1) * 8, "an indptr.npy for --num-nodes")) ||
	    (st = burrow_writer_open(&w, out, name, &wo)))
		goto out;

	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = o->undirected;
	co.mem_bytes = o->mem_bytes ? o->mem_bytes : bw_half_memory();
	co.spill_dir = spill;
	co.progress = o->progress;
	co.progress_user = o->progress_user;
	co.edge_ids = o->edge_features != NULL;
	if (edge_split ? (st = import_edge_split(o, w, n, name, &co, &is, &tally)) != 0
		       : ((st = burrow_csr_builder_open(&b, n, &co)) ||
			  (st = read_edges(o, b, n, &is.edges_read, &tally, &is.header_skipped)) ||
			  (st = burrow_writer_put_builder(w, b, o->undirected)) ||
			  (st = import_edge_features(o, w, is.edges_read))))
		goto fail;
	burrow_csr_builder_close(b);
	b = NULL;
	is.num_nodes = n;
	is.self_loops = tally.self_loops;
	is.entries = edge_split ? is.entries : bw_writer_num_edges(w);
	is.duplicates = is.edges_read - is.self_loops - (o->undirected ? is.entries / 2 : is.entries);
	if (o->features) {
		bw_src fs = {.name = o->features, .path = o->features, .fd = -1};
		if ((st = bw_features_npy(w, &fs, n, o->feat_dtype, o->progress, o->progress_user)))
			goto fail;
	}
	if (o->labels) {
		int64_t tasks;
		if ((st = import_labels(o->labels, n, w, &y, &tasks)))
			goto fail;
		int32_t top = -1;
		for (int64_t v = 0; y && v < n; v++) /* y is NULL for multi-label labels (written) */
			top = BW_MAX(top, y[v]);
		if (top < 0 && !tasks)
			bw_log(BURROW_LOG_WARN, "%s: no node has a label; writing no labels", o->labels);
		else if (!tasks && (st = burrow_writer_put_labels(w, y, n, top + 1)))
			goto fail;
		report(o, "labels", 1, 1);
	}
	if (o->train && ((st = put_split(n, w, BURROW_SPLIT_TRAIN, o->train, &is.split_sizes[0])) ||
			 (st = put_split(n, w, BURROW_SPLIT_VALID, o->valid, &is.split_sizes[1])) ||
			 (st = put_split(n, w, BURROW_SPLIT_TEST, o->test, &is.split_sizes[2]))))
		goto fail;
	if (is.split_random && (st = put_random_split(o, w, y, n, is.split_sizes)))
		goto fail;
	if ((st = source_json(o, &is, &src)) || (st = burrow_writer_set_source(w, src)))
		goto fail;
	if ((st = burrow_writer_commit(w)))
		goto out;
	bw_stats_out(o->stats, &is, sizeof is);
	goto out;
fail:
	burrow_writer_abort(w);
out:
	burrow_csr_builder_close(b);
	cJSON_free(src);
	bw_free(y);
	bw_free(spill);
	return st;
}
