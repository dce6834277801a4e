/* writer.c: writes a dataset directory atomically: every file goes into a temporary
 * directory beside the target, which is renamed into place when meta.json is complete. */
#define _GNU_SOURCE
#include "csr_internal.h"
#include "dataset_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct burrow_writer {
	char *dir;           /* final path, owned */
	char *tmp;           /* temporary directory, owned */
	int tmp_reg;         /* its slot in the registry of temporaries, -1 when none */
	char *name;          /* owned */
	char *source_json;   /* owned, may be NULL */
	burrow_writer_opts o;
	int64_t num_nodes;   /* -1 until known */
	int64_t num_edges;
	bool have_graph, symmetric;
	int64_t feat_dim;
	burrow_dtype feat_dtype;
	int feat_state;      /* 0 none, 1 open, 2 done */
	int64_t feat_rows;
	bw_npy_writer feat;
	int32_t num_classes;
	int64_t split_n[3];
	bool have_split[3];
	int graph_state;     /* streamed graph: 0 none, 1 open, 2 done */
	int64_t graph_ids;   /* ids appended so far */
	bw_npy_writer graph_idx;
};

/* Errors inside the temporary directory are reported under the final directory's name,
 * the one the user gave. */
#define REBASE(w, call) bw_err_rebase((call), (w)->tmp, (w)->dir)

void burrow_writer_defaults(burrow_writer_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
}

static char *tmp_path(const burrow_writer *w, const char *rel) { return bw_path_join(w->tmp, rel); }

int burrow_writer_open(burrow_writer **out, const char *dir, const char *name, const burrow_writer_opts *opts)
{
	struct stat sb;
	int st;

	*out = NULL;
	burrow_writer_opts o;
	burrow_writer_defaults(&o);
	if (opts && (st = bw_opts_in(&o, sizeof o, opts, "burrow_writer_opts")))
		return st;
	if (!o.overwrite) {
		if (stat(dir, &sb) == 0)
			return bw_err(BURROW_E_EXISTS, "%s: already exists", dir);
	} else if ((st = bw_check_replaceable(dir, NULL))) {
		return st;
	}
	burrow_writer *w = bw_calloc(1, sizeof *w);
	if (!w)
		return BURROW_E_NOMEM;
	w->o = o;
	w->num_nodes = -1;
	w->tmp_reg = -1;
	w->dir = bw_strdup(dir);
	w->name = bw_strdup(name ? name : "");
	w->tmp = bw_malloc(strlen(dir) + 32);
	if (!w->dir || !w->name || !w->tmp) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	size_t l = strlen(dir);
	while (l > 1 && w->dir[l - 1] == '/')
		w->dir[--l] = '\0';
	sprintf(w->tmp, "%s.tmp.%ld", w->dir, (long)getpid());
	char *parent = bw_dirname(w->dir);
	if (!parent) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	st = bw_mkdir_p(parent, 0755);
	if (!st && (stat(parent, &sb) < 0 || !S_ISDIR(sb.st_mode)))
		st = bw_err(BURROW_E_IO, "%s: not a directory", parent);
	bw_free(parent);
	/* and what interrupted writers of this output left */
	if (st || (st = bw_rm_rf(w->tmp)) || (st = bw_rm_stale_tmp(w->dir)))
		goto fail;
	w->tmp_reg = bw_tmp_add(w->tmp);
	if (mkdir(w->tmp, 0755) < 0) {
		st = bw_err_errno(errno, w->tmp, "mkdir");
		goto fail;
	}
	char *sd = tmp_path(w, "split");
	if (!sd || mkdir(sd, 0755) < 0) {
		st = sd ? bw_err_errno(errno, sd, "mkdir") : BURROW_E_NOMEM;
		bw_free(sd);
		burrow_writer_abort(w);
		return st;
	}
	bw_free(sd);
	*out = w;
	return 0;
fail:
	bw_tmp_drop(w->tmp_reg);
	bw_free(w->dir);
	bw_free(w->name);
	bw_free(w->tmp);
	bw_free(w);
	return st;
}

void burrow_writer_abort(burrow_writer *w)
{
	if (!w)
		return;
	if (w->feat_state == 1)
		bw_npy_writer_abort(&w->feat);
	if (w->graph_state == 1)
		bw_npy_writer_abort(&w->graph_idx);
	if (w->tmp)
		bw_rm_rf(w->tmp);
	bw_tmp_drop(w->tmp_reg);
	bw_free(w->dir);
	bw_free(w->tmp);
	bw_free(w->name);
	bw_free(w->source_json);
	bw_free(w);
}

/* The node count is fixed by whichever of graph, features, labels comes first. */
static int set_nodes(burrow_writer *w, int64_t n, const char *what)
{
	if (w->num_nodes < 0) {
		w->num_nodes = n;
		return 0;
	}
	if (w->num_nodes != n)
		return bw_err(BURROW_E_INVAL, "%s: %s has %lld rows, but the dataset has %lld nodes", w->dir, what,
			      (long long)n, (long long)w->num_nodes);
	return 0;
}

static int save(burrow_writer *w, const char *rel, burrow_dtype t, int64_t n, const void *data)
{
	char *p = tmp_path(w, rel);
	if (!p)
		return BURROW_E_NOMEM;
	int st = bw_npy_save(p, t, 1, &n, data, BW_NPY_ALIGN);
	bw_free(p);
	return st;
}

static int w_put_graph(burrow_writer *w, const burrow_csr *g, bool symmetric)
{
	int st;
	const int want = g->num_nodes < ((int64_t)1 << 31) ? 4 : 8;
	if (w->have_graph || w->graph_state)
		return bw_err(BURROW_E_INVAL, "%s: graph written twice", w->dir);
	if (g->index_width != want)
		return bw_err(BURROW_E_INVAL, "%s: %lld nodes need %d-byte ids, the graph has %d-byte ids", w->dir,
			      (long long)g->num_nodes, want, g->index_width);
	if (g->indptr[g->num_nodes] != g->num_edges)
		return bw_err(BURROW_E_INVAL, "%s: indptr ends at %lld, the graph says %lld edges", w->dir,
			      (long long)g->indptr[g->num_nodes], (long long)g->num_edges);
	if ((st = set_nodes(w, g->num_nodes, "the graph")))
		return st;
	if ((st = save(w, "indptr.npy", BURROW_DTYPE_I64, g->num_nodes + 1, g->indptr)) ||
	    (st = save(w, "indices.npy", want == 4 ? BURROW_DTYPE_I32 : BURROW_DTYPE_I64, g->num_edges, g->indices)))
		return st;
	w->have_graph = true;
	w->num_edges = g->num_edges;
	w->symmetric = symmetric;
	return 0;
}

int bw_writer_graph_begin(burrow_writer *w, const int64_t *indptr, int64_t num_nodes, bool symmetric)
{
	int st;
	const int64_t e = indptr[num_nodes];
	if (w->have_graph || w->graph_state)
		return bw_err(BURROW_E_INVAL, "%s: graph written twice", w->dir);
	if (indptr[0] != 0 || e < 0)
		return bw_err(BURROW_E_INVAL, "%s: indptr must run from 0 to the edge count", w->dir);
	if ((st = set_nodes(w, num_nodes, "the graph")) ||
	    (st = save(w, "indptr.npy", BURROW_DTYPE_I64, num_nodes + 1, indptr)))
		return st;
	char *p = tmp_path(w, "indices.npy");
	if (!p)
		return BURROW_E_NOMEM;
	st = bw_npy_writer_open(&w->graph_idx, p, num_nodes < ((int64_t)1 << 31) ? BURROW_DTYPE_I32 : BURROW_DTYPE_I64,
				1, &e, BW_NPY_ALIGN);
	bw_free(p);
	if (st)
		return st;
	w->graph_state = 1;
	w->graph_ids = 0;
	w->num_edges = e;
	w->symmetric = symmetric;
	return 0;
}

int bw_writer_graph_append(burrow_writer *w, const void *ids, int64_t n)
{
	if (w->graph_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: indices appended outside begin/end", w->dir);
	const int64_t width = w->num_nodes < ((int64_t)1 << 31) ? 4 : 8;
	if (n < 0 || w->graph_ids + n > w->num_edges)
		return bw_err(BURROW_E_INVAL, "%s: indices.npy: %lld ids appended, only %lld declared", w->dir,
			      (long long)(w->graph_ids + n), (long long)w->num_edges);
	w->graph_ids += n;
	return bw_npy_writer_append(&w->graph_idx, ids, (size_t)(n * width));
}

int bw_writer_graph_end(burrow_writer *w)
{
	if (w->graph_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: indices ended without begin", w->dir);
	w->graph_state = 2;
	int st = bw_npy_writer_commit(&w->graph_idx);
	if (!st)
		w->have_graph = true;
	return st;
}


/* The graph streamed out of a builder: indptr.npy through the npy writer (its length is
 * known), indices.npy by hand, because its length is known only at the end: the data goes
 * after a header sized for an upper bound, and the header is rewritten when the count is
 * known (moving the data down in the rare case that the header became shorter). */
typedef struct graph_sink {
	bw_npy_writer indptr;
	bw_atomic_file ix;
	char *buf;             /* write buffer for indices.npy, [GBUF] */
	size_t fill;
	size_t hdr;            /* header bytes reserved at the start of indices.npy */
	int64_t nix;           /* ids written */
	int width;
} graph_sink;

#define GBUF ((size_t)4 << 20)

static int sink_indptr(void *user, const int64_t *offs, size_t n)
{
	graph_sink *g = user;
	return bw_npy_writer_append(&g->indptr, offs, n * sizeof *offs);
}

static int sink_indices(void *user, const void *ids, size_t n)
{
	graph_sink *g = user;
	size_t bytes = n * (size_t)g->width;
	g->nix += (int64_t)n;
	if (g->fill + bytes > GBUF) {
		int st = bw_write_all(g->ix.fd, g->buf, g->fill, g->ix.tmp);
		g->fill = 0;
		if (st)
			return st;
		if (bytes > GBUF)
			return bw_write_all(g->ix.fd, ids, bytes, g->ix.tmp);
	}
	memcpy(g->buf + g->fill, ids, bytes);
	g->fill += bytes;
	return 0;
}

/* Write the final header of indices.npy, moving the data when the header shrank. */
static int finish_indices(graph_sink *g)
{
	bw_npy h = {.dtype = g->width == 4 ? BURROW_DTYPE_I32 : BURROW_DTYPE_I64, .ndim = 1, .shape = {g->nix}};
	char hdr[BW_NPY_FEATURE_ALIGN];
	size_t hl;
	int st = bw_write_all(g->ix.fd, g->buf, g->fill, g->ix.tmp);
	if (st || (st = bw_npy_format(&h, BW_NPY_ALIGN, hdr, sizeof hdr, &hl)))
		return st;
	const int64_t data = g->nix * g->width;
	if (hl != g->hdr) {
		BW_ASSERT(hl < g->hdr);
		for (int64_t done = 0; done < data && !st;) {
			size_t m = (size_t)BW_MIN((int64_t)GBUF, data - done);
			st = bw_pread_all(g->ix.fd, g->buf, m, (int64_t)g->hdr + done, g->ix.tmp);
			if (!st && pwrite(g->ix.fd, g->buf, m, (off_t)hl + done) != (ssize_t)m)
				st = bw_err_errno(errno, g->ix.tmp, "write");
			done += (int64_t)m;
		}
		if (!st && ftruncate(g->ix.fd, (off_t)hl + data) < 0)
			st = bw_err_errno(errno, g->ix.tmp, "truncate");
	}
	if (!st && pwrite(g->ix.fd, hdr, hl, 0) != (ssize_t)hl)
		st = bw_err_errno(errno, g->ix.tmp, "write");
	return st;
}

int burrow_writer_put_builder(burrow_writer *w, burrow_csr_builder *b, bool symmetric)
{
	graph_sink g = {.ix = {.fd = -1}};
	bw_csr_sink sink = {sink_indptr, sink_indices, &g};
	const int64_t n = bw_csr_builder_nodes(b);
	char *pp = NULL, *pi = NULL, hdr[BW_NPY_FEATURE_ALIGN];
	int64_t ne = 0, np1 = n + 1;
	int st, width;

	if (w->have_graph)
		return bw_err(BURROW_E_INVAL, "%s: graph written twice", w->dir);
	if ((st = set_nodes(w, n, "the graph")))
		return st;
	g.width = n < ((int64_t)1 << 31) ? 4 : 8;
	bw_npy h = {.dtype = g.width == 4 ? BURROW_DTYPE_I32 : BURROW_DTYPE_I64, .ndim = 1,
		    .shape = {bw_csr_builder_max_entries(b)}};
	pp = tmp_path(w, "indptr.npy");
	pi = tmp_path(w, "indices.npy");
	g.buf = bw_malloc(GBUF);
	if (!pp || !pi || !g.buf) {
		st = BURROW_E_NOMEM;
		goto out_free;
	}
	if ((st = bw_npy_format(&h, BW_NPY_ALIGN, hdr, sizeof hdr, &g.hdr)))
		goto out_free;
	if ((st = bw_npy_writer_open(&g.indptr, pp, BURROW_DTYPE_I64, 1, &np1, BW_NPY_ALIGN)))
		goto out_free;
	if ((st = bw_atomic_open(&g.ix, pi))) {
		bw_npy_writer_abort(&g.indptr);
		goto out_free;
	}
	memset(hdr, 0, g.hdr);
	if (!(st = bw_write_all(g.ix.fd, hdr, g.hdr, g.ix.tmp)) &&
	    !(st = bw_csr_builder_stream(b, &sink, &ne, &width)) && !(st = finish_indices(&g)) &&
	    !(st = bw_npy_writer_commit(&g.indptr)))
		st = bw_atomic_commit(&g.ix);
	if (st) {
		bw_npy_writer_abort(&g.indptr);
		bw_atomic_abort(&g.ix);
		goto out_free;
	}
	BW_ASSERT(width == g.width && ne == g.nix);
	w->have_graph = true;
	w->num_edges = ne;
	w->symmetric = symmetric;
out_free:
	bw_free(pp);
	bw_free(pi);
	bw_free(g.buf);
	return st;
}

static int w_features_begin(burrow_writer *w, int64_t num_rows, int64_t dim, burrow_dtype dtype)
{
	int st;
	if (w->feat_state)
		return bw_err(BURROW_E_INVAL, "%s: features begun twice", w->dir);
	if (dim <= 0 || (dtype != BURROW_DTYPE_F32 && dtype != BURROW_DTYPE_F16))
		return bw_err(BURROW_E_INVAL, "%s: features must be float32 or float16 with dim > 0", w->dir);
	if ((st = set_nodes(w, num_rows, "features.npy")))
		return st;
	char *p = tmp_path(w, "features.npy");
	if (!p)
		return BURROW_E_NOMEM;
	int64_t shape[2] = {num_rows, dim};
	st = bw_npy_writer_open(&w->feat, p, dtype, 2, shape, BW_NPY_FEATURE_ALIGN);
	bw_free(p);
	if (st)
		return st;
	w->feat_state = 1;
	w->feat_dim = dim;
	w->feat_dtype = dtype;
	w->feat_rows = 0;
	return 0;
}

static int w_features_append(burrow_writer *w, const void *rows, int64_t n)
{
	if (w->feat_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: features appended outside begin/end", w->dir);
	if (n < 0 || w->feat_rows + n > w->num_nodes)
		return bw_err(BURROW_E_INVAL, "%s: features.npy: %lld rows appended, only %lld declared", w->dir,
			      (long long)(w->feat_rows + n), (long long)w->num_nodes);
	w->feat_rows += n;
	return bw_npy_writer_append(&w->feat, rows, (size_t)n * (size_t)w->feat_dim * burrow_dtype_size(w->feat_dtype));
}

static int w_features_end(burrow_writer *w)
{
	if (w->feat_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: features ended without begin", w->dir);
	if (w->feat_rows != w->num_nodes)
		return bw_err(BURROW_E_INVAL, "%s: features.npy: %lld rows written, %lld declared", w->dir,
			      (long long)w->feat_rows, (long long)w->num_nodes);
	w->feat_state = 2;
	return bw_npy_writer_commit(&w->feat);
}

static int w_put_labels(burrow_writer *w, const int32_t *labels, int64_t n, int32_t num_classes)
{
	int st;
	if (num_classes <= 0)
		return bw_err(BURROW_E_INVAL, "%s: labels need num_classes > 0", w->dir);
	if ((st = set_nodes(w, n, "labels.npy")))
		return st;
	for (int64_t v = 0; v < n; v++)
		if (labels[v] < -1 || labels[v] >= num_classes)
			return bw_err(BURROW_E_RANGE, "%s: labels.npy: node %lld has label %d, outside [-1, %d)", w->dir,
				      (long long)v, labels[v], num_classes);
	if ((st = save(w, "labels.npy", BURROW_DTYPE_I32, n, labels)))
		return st;
	w->num_classes = num_classes;
	return 0;
}

static int w_put_split(burrow_writer *w, int split, const int64_t *ids, int64_t n)
{
	char rel[32];
	if (split < 0 || split > 2)
		return bw_err(BURROW_E_INVAL, "%s: unknown split %d", w->dir, split);
	if (w->num_nodes < 0)
		return bw_err(BURROW_E_INVAL, "%s: split/%s.npy written before the node count is known", w->dir,
			      bw_split_names[split]);
	for (int64_t k = 0; k < n; k++)
		if (ids[k] < 0 || ids[k] >= w->num_nodes)
			return bw_err(BURROW_E_RANGE, "%s: split/%s.npy: entry %lld is node %lld, outside [0, %lld)",
				      w->dir, bw_split_names[split], (long long)k, (long long)ids[k],
				      (long long)w->num_nodes);
	snprintf(rel, sizeof rel, "split/%s.npy", bw_split_names[split]);
	int st = save(w, rel, BURROW_DTYPE_I64, n, ids);
	if (!st) {
		w->split_n[split] = n;
		w->have_split[split] = true;
	}
	return st;
}

int burrow_writer_set_source(burrow_writer *w, const char *json_object)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_Parse(json_object);
	bool ok = j && cJSON_IsObject(j);
	cJSON_Delete(j);
	if (!j && bw_json_nomem())
		return bw_err(BURROW_E_NOMEM, "%s: out of memory reading the source JSON", w->dir);
	if (!ok)
		return bw_err(BURROW_E_INVAL, "%s: source must be a JSON object", w->dir);
	char *s = bw_strdup(json_object);
	if (!s)
		return BURROW_E_NOMEM;
	bw_free(w->source_json);
	w->source_json = s;
	return 0;
}

cJSON *bw_meta_begin(const char *format, int version)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	cJSON_AddStringToObject(j, "format", format);
	cJSON_AddNumberToObject(j, "version", version);
	return j;
}

int bw_meta_write(cJSON *meta, const char *dir, bool built)
{
	int st = BURROW_E_NOMEM;
	char *text = NULL, *path = NULL;
	if (!meta)
		goto out;
	cJSON_AddStringToObject(meta, "created_by", "burrow");
	cJSON_AddStringToObject(meta, "burrow_version", burrow_version());
	text = cJSON_Print(meta);
	path = bw_path_join(dir, "meta.json");
	if (bw_json_nomem() || !text || !path || !built)
		goto out;
	st = bw_write_text_atomic(path, text);
out:
	if (st == BURROW_E_NOMEM)
		bw_err(st, "%s: out of memory writing meta.json", dir);
	cJSON_free(text);
	bw_free(path);
	cJSON_Delete(meta);
	return st;
}

/* Errors name the temporary directory (REBASE gives them the final name). */
static int write_meta(burrow_writer *w)
{
	cJSON *j = bw_meta_begin("burrow-dataset", BURROW_DATASET_FORMAT_VERSION);
	if (!j)
		return bw_meta_write(NULL, w->tmp, false);
	cJSON_AddStringToObject(j, "name", w->name);
	cJSON_AddNumberToObject(j, "num_nodes", (double)w->num_nodes);
	cJSON_AddNumberToObject(j, "num_edges", (double)w->num_edges);
	cJSON_AddStringToObject(j, "index_dtype", w->num_nodes < ((int64_t)1 << 31) ? "int32" : "int64");
	cJSON_AddNumberToObject(j, "feat_dim", (double)(w->feat_state ? w->feat_dim : 0));
	if (w->feat_state)
		cJSON_AddStringToObject(j, "feat_dtype", burrow_dtype_name(w->feat_dtype));
	cJSON_AddNumberToObject(j, "num_classes", w->num_classes);
	cJSON_AddBoolToObject(j, "symmetric", w->symmetric);
	cJSON *splits = cJSON_AddObjectToObject(j, "splits");
	for (int i = 0; splits && i < 3; i++)
		cJSON_AddNumberToObject(splits, bw_split_names[i], (double)w->split_n[i]);
	cJSON *src = cJSON_Parse(w->source_json ? w->source_json : "{}");
	if (src && !cJSON_AddItemToObject(j, "source", src)) { /* its key's copy failed: src is still ours */
		cJSON_Delete(src);
		src = NULL;
	}
	return bw_meta_write(j, w->tmp, splits && src);
}

int burrow_writer_commit(burrow_writer *w)
{
	int st = 0;

	if (!w->have_graph)
		st = bw_err(BURROW_E_INVAL, "%s: no graph was written", w->dir);
	else if (w->feat_state == 1)
		st = bw_err(BURROW_E_INVAL, "%s: features.npy was not ended", w->dir);
	else if (w->graph_state == 1)
		st = bw_err(BURROW_E_INVAL, "%s: indices.npy was not ended", w->dir);
	if (st || (st = REBASE(w, write_meta(w))) || (st = bw_fsync_dir(w->tmp)))
		goto fail;
	/* what a reader will check, checked before the output takes its name (overlapping
	 * splits, labels past C, a graph called symmetric that is not) */
	burrow_dataset *check;
	if ((st = REBASE(w, burrow_dataset_open(&check, w->tmp))))
		goto fail;
	burrow_dataset_close(check);
	char *sd = tmp_path(w, "split");
	st = sd ? bw_fsync_dir(sd) : BURROW_E_NOMEM;
	bw_free(sd);
	if (st)
		goto fail;
	struct stat sb;
	if (w->o.overwrite && stat(w->dir, &sb) == 0 && (st = bw_check_replaceable(w->dir, NULL)))
		goto fail;
	if (!(st = bw_replace_dir(w->tmp, w->dir, w->o.overwrite))) {
		bw_free(w->tmp);
		w->tmp = NULL; /* in place: nothing left to remove */
	}
fail:
	burrow_writer_abort(w);
	return st;
}

/* The public calls (REBASE is defined at the top). */
int burrow_writer_put_graph(burrow_writer *w, const burrow_csr *g, bool symmetric)
{
	return REBASE(w, w_put_graph(w, g, symmetric));
}

int burrow_writer_features_begin(burrow_writer *w, int64_t num_rows, int64_t dim, burrow_dtype dtype)
{
	return REBASE(w, w_features_begin(w, num_rows, dim, dtype));
}

int burrow_writer_features_append(burrow_writer *w, const void *rows, int64_t n)
{
	return REBASE(w, w_features_append(w, rows, n));
}

int burrow_writer_features_end(burrow_writer *w) { return REBASE(w, w_features_end(w)); }

int burrow_writer_put_labels(burrow_writer *w, const int32_t *labels, int64_t n, int32_t num_classes)
{
	return REBASE(w, w_put_labels(w, labels, n, num_classes));
}

int burrow_writer_put_split(burrow_writer *w, int split, const int64_t *ids, int64_t n)
{
	return REBASE(w, w_put_split(w, split, ids, n));
}

int64_t bw_writer_num_edges(const burrow_writer *w) { return w->num_edges; }
