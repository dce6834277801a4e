/* import.c: burrow import: a dataset directory from a user's own files: an edge list
 * (.npy, or text with optional gzip), and .npy features, labels and splits. */
#define _GNU_SOURCE
#include "dsio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>


void burrow_import_defaults(burrow_import_opts *o) { memset(o, 0, sizeof *o); }

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

/* Does the file start with gzip's magic bytes? */
static int is_gzip(const char *path, bool *gz)
{
	unsigned char m[2];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return bw_err_errno(errno, path, "open");
	ssize_t n = read(fd, m, 2);
	close(fd);
	*gz = n == 2 && m[0] == 0x1f && m[1] == 0x8b;
	return 0;
}

/* Text edges: "src dst" a line, separated by a comma, tab or blanks; '#' comments. */
static int edges_text(const burrow_import_opts *o, burrow_csr_builder *b, int64_t *count)
{
	bw_src src = {.name = o->edges, .path = o->edges, .fd = -1};
	bw_csv c;
	bool gz = false;
	int st = is_gzip(o->edges, &gz);
	if (st || (st = bw_csv_open(&c, &src, gz, 0, true)))
		return st;
	st = bw_csv_edges(&c, o->num_nodes, b, o->progress, o->progress_user, count);
	bw_csv_close(&c);
	return st;
}

/* A split: node ids (int32/int64) or a bool mask of length N. */
static int put_split(const burrow_import_opts *o, burrow_writer *w, int split, const char *path)
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
	if (a.h.ndim != 1 || !(mask || t == BURROW_DTYPE_I32 || t == BURROW_DTYPE_I64) || (mask && n != o->num_nodes)) {
		st = bw_err(BURROW_E_FORMAT, "%s: expected node ids (1-D int32 or int64) or a bool mask of %lld entries",
			    path, (long long)o->num_nodes);
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
		if (v < 0 || v >= o->num_nodes) {
			st = bw_err(BURROW_E_RANGE, "%s: entry %lld is node %lld, outside [0, %lld)", path, (long long)i,
				    (long long)v, (long long)o->num_nodes);
			goto out;
		}
		ids[k++] = v;
	}
	st = burrow_writer_put_split(w, split, ids, k);
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

static int source_json(const burrow_import_opts *o, int64_t edges, char **out)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return BURROW_E_NOMEM;
	cJSON_AddStringToObject(j, "kind", "import");
	add_file(j, "edges", o->edges);
	cJSON_AddNumberToObject(j, "edges_stored", (double)edges);
	cJSON_AddBoolToObject(j, "undirected", o->undirected);
	add_file(j, "features", o->features);
	add_file(j, "labels", o->labels);
	add_file(j, "train", o->train);
	add_file(j, "valid", o->valid);
	add_file(j, "test", o->test);
	*out = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (bw_json_nomem() || !*out) { /* an adder failed: the source would lack a field */
		cJSON_free(*out);
		*out = NULL;
		return bw_err(BURROW_E_NOMEM, "out of memory formatting meta.json's source");
	}
	return 0;
}

int burrow_import(const char *out, const burrow_import_opts *o)
{
	burrow_writer *w = NULL;
	burrow_csr_builder *b = NULL;
	char *spill = NULL, *src = NULL;
	int32_t *y = NULL;
	int64_t edges = 0;
	int st;

	if (!o || !o->edges)
		return bw_err(BURROW_E_INVAL, "import: no edge file given");
	if (o->num_nodes < 0)
		return bw_err(BURROW_E_INVAL, "import: negative node count %lld", (long long)o->num_nodes);
	if (o->feat_dtype != BURROW_DTYPE_INVALID && o->feat_dtype != BURROW_DTYPE_F32 && o->feat_dtype != BURROW_DTYPE_F16)
		return bw_err(BURROW_E_INVAL, "import: features must be float32 or float16");
	if ((o->train || o->valid || o->test) && !(o->train && o->valid && o->test))
		return bw_err(BURROW_E_INVAL, "import: give all three splits (train, valid, test) or none");
	const char *name = o->name;
	if (!name) {
		name = strrchr(out, '/');
		name = name && name[1] ? name + 1 : out;
	}
	spill = o->tmp_dir ? bw_strdup(o->tmp_dir) : bw_dirname(out);
	if (!spill)
		return BURROW_E_NOMEM;
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = o->overwrite;
	if ((st = burrow_writer_open(&w, out, name, &wo)))
		goto out;

	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = o->undirected;
	co.mem_bytes = o->mem_bytes ? o->mem_bytes : bw_half_memory();
	co.spill_dir = spill;
	co.progress = o->progress;
	co.progress_user = o->progress_user;
	if ((st = burrow_csr_builder_open(&b, o->num_nodes, &co)))
		goto fail;
	if (ends_with(o->edges, ".npy")) {
		bw_src es = {.name = o->edges, .path = o->edges, .fd = -1};
		st = bw_edges_npy(b, &es, o->num_nodes, &edges, o->progress, o->progress_user);
	} else {
		st = edges_text(o, b, &edges);
	}
	if (st || (st = burrow_writer_put_builder(w, b, o->undirected)))
		goto fail;
	burrow_csr_builder_close(b);
	b = NULL;
	if (o->features) {
		bw_src fs = {.name = o->features, .path = o->features, .fd = -1};
		if ((st = bw_features_npy(w, &fs, o->num_nodes, o->feat_dtype, o->progress, o->progress_user)))
			goto fail;
	}
	if (o->labels) {
		bw_src ls = {.name = o->labels, .path = o->labels, .fd = -1};
		if ((st = bw_labels_npy(&ls, o->num_nodes, &y)))
			goto fail;
		int32_t top = -1;
		for (int64_t v = 0; v < o->num_nodes; v++)
			top = BW_MAX(top, y[v]);
		if (top < 0)
			bw_log(BURROW_LOG_WARN, "%s: no node has a label; writing no labels", o->labels);
		else if ((st = burrow_writer_put_labels(w, y, o->num_nodes, top + 1)))
			goto fail;
		report(o, "labels", 1, 1);
	}
	if (o->train && ((st = put_split(o, w, BURROW_SPLIT_TRAIN, o->train)) ||
			 (st = put_split(o, w, BURROW_SPLIT_VALID, o->valid)) ||
			 (st = put_split(o, w, BURROW_SPLIT_TEST, o->test))))
		goto fail;
	if ((st = source_json(o, edges, &src)) || (st = burrow_writer_set_source(w, src)))
		goto fail;
	st = burrow_writer_commit(w);
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
