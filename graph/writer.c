/* writer.c: writes a dataset directory atomically: every file goes into a temporary
 * directory beside the target, which is renamed into place when meta.json is complete. */
#define _GNU_SOURCE
#include "csr_internal.h"
#include "dataset_internal.h"
#include "../core/half.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A node type and a relation as the typed writer records them for meta.json. */
typedef struct bw_wtype {
	char name[BURROW_MAX_NAME];
	int64_t num_nodes;
	int64_t feat_dim;     /* 0 until its features are written */
	burrow_dtype feat_dtype;
	char *feat_ref;       /* features read in place: the file meta.json names, owned; NULL: features/<type>.npy */
	int64_t feat_ref_off; /* its data offset */
	bool feat_ref_raw;    /* the file has no .npy header: raw rows from feat_ref_off (meta.json "header": false) */
} bw_wtype;

typedef struct bw_wrel {
	char name[BURROW_MAX_NAME];
	char dir[3 * BURROW_MAX_NAME + 8]; /* <src>___<name>___<dst> */
	int src, dst;
	int64_t num_edges;
} bw_wrel;

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
	int32_t num_tasks;   /* multi-label labels.npy written: its T; 0 none */
	int64_t split_n[3];
	bool have_split[3];
	int graph_state;     /* streamed graph: 0 none, 1 open, 2 done */
	int64_t graph_ids;   /* ids appended so far */
	bw_npy_writer graph_idx;
	int64_t feat_total;  /* rows the open features file declares */
	/* typed datasets (format version 2): any type makes the directory one */
	int num_types;
	bw_wtype types[BURROW_MAX_TYPES];
	int num_rels;
	bw_wrel rels[BURROW_MAX_RELATIONS];
	int target;             /* -1: none */
	int feat_type;          /* the type whose features are open or were last written; -1: version 1's */
	burrow_csr_builder *rb; /* the open relation's edges (row = dst), owned; NULL when none */
	bool made_rel_dir, made_feat_dir;
	cJSON *extra;           /* meta.json's parts beyond the base layout (bw_writer_meta_add), owned */
	/* edge features: the graph's entries' input edges (a builder with opts.edge_ids), raw int64
	 * in the temporary directory until burrow_writer_put_edge_features gathers by them */
	char *eid_path;         /* owned; NULL when none */
	int64_t edge_feat_dim;  /* 0 until edge_features.npy is written */
	burrow_dtype edge_feat_dtype;
	int ef_state;           /* streamed edge features (bw_writer_edge_features_*): 0 none, 1 open, 2 done */
	int64_t ef_rows;        /* rows appended so far */
	int64_t ef_dim;         /* the open stream's dim and dtype */
	burrow_dtype ef_dtype;
	bw_npy_writer ef;
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
	w->target = -1;
	w->feat_type = -1;
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
	if (w->ef_state == 1)
		bw_npy_writer_abort(&w->ef);
	burrow_csr_builder_close(w->rb);
	if (w->tmp)
		bw_rm_rf(w->tmp);
	bw_tmp_drop(w->tmp_reg);
	bw_free(w->eid_path);
	bw_free(w->dir);
	bw_free(w->tmp);
	bw_free(w->name);
	bw_free(w->source_json);
	cJSON_Delete(w->extra);
	for (int t = 0; t < BURROW_MAX_TYPES; t++)
		bw_free(w->types[t].feat_ref);
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
	if (w->num_types)
		return bw_err(BURROW_E_INVAL, "%s: a typed dataset's graph is its relations (burrow_writer_relation_begin)",
			      w->dir);
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
	if (w->num_types)
		return bw_err(BURROW_E_INVAL, "%s: a typed dataset's graph is its relations (burrow_writer_relation_begin)",
			      w->dir);
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
 * known (moving the data down in the rare case that the header became shorter). A typed
 * relation's builder is square (its N the larger of the two types' counts): only the first
 * rows + 1 offsets are written (the rows past the dst count are empty), and its 64-bit ids
 * are narrowed when the src type's count takes 32. */
typedef struct graph_sink {
	int eid_fd;            /* the entries' edge ids go here (raw int64), -1: not wanted */
	const char *eid_path;
	bw_npy_writer indptr;
	bw_atomic_file ix;
	char *buf;             /* write buffer for indices.npy, [GBUF] */
	size_t fill;
	size_t hdr;            /* header bytes reserved at the start of indices.npy */
	int64_t nix;           /* ids written */
	int64_t offs_left;     /* offsets still to write to indptr.npy */
	int width;             /* of indices.npy */
	int in_width;          /* of the builder's ids */
} graph_sink;

#define GBUF ((size_t)4 << 20)

static int sink_indptr(void *user, const int64_t *offs, size_t n)
{
	graph_sink *g = user;
	const size_t m = (size_t)BW_MIN((int64_t)n, g->offs_left);
	g->offs_left -= (int64_t)m;
	return m ? bw_npy_writer_append(&g->indptr, offs, m * sizeof *offs) : 0;
}

static int sink_flush(graph_sink *g)
{
	int st = bw_write_all(g->ix.fd, g->buf, g->fill, g->ix.tmp);
	g->fill = 0;
	return st;
}

static int sink_indices(void *user, const void *ids, size_t n)
{
	graph_sink *g = user;
	size_t bytes = n * (size_t)g->width;
	int st;
	g->nix += (int64_t)n;
	if (g->in_width != g->width) { /* 64-bit ids below 2^31 (checked as added) into 32 */
		const int64_t *src = ids;
		for (size_t i = 0; i < n;) {
			if (g->fill + 4 > GBUF && (st = sink_flush(g)))
				return st;
			const size_t m = BW_MIN(n - i, (GBUF - g->fill) / 4);
			int32_t *d = (int32_t *)(void *)(g->buf + g->fill);
			for (size_t k = 0; k < m; k++)
				d[k] = (int32_t)src[i + k];
			g->fill += m * 4;
			i += m;
		}
		return 0;
	}
	if (g->fill + bytes > GBUF) {
		if ((st = sink_flush(g)))
			return st;
		if (bytes > GBUF)
			return bw_write_all(g->ix.fd, ids, bytes, g->ix.tmp);
	}
	memcpy(g->buf + g->fill, ids, bytes);
	g->fill += bytes;
	return 0;
}

static int sink_edge_ids(void *user, const int64_t *eids, size_t n)
{
	graph_sink *g = user;
	return bw_write_all(g->eid_fd, eids, n * sizeof *eids, g->eid_path);
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

/* Finish b into the temporary directory's rel_indptr (rows + 1 offsets) and rel_indices
 * (ids of `width` bytes); *num_edges gets the entries. */
static int stream_builder(burrow_writer *w, burrow_csr_builder *b, const char *rel_indptr, const char *rel_indices,
			  int64_t rows, int width, int64_t *num_edges, int eid_fd, const char *eid_path)
{
	graph_sink g = {.ix = {.fd = -1}, .offs_left = rows + 1, .width = width, .eid_fd = eid_fd, .eid_path = eid_path};
	bw_csr_sink sink = {.indptr = sink_indptr, .indices = sink_indices, .user = &g,
			    .edge_ids = eid_fd >= 0 ? sink_edge_ids : NULL};
	char *pp = NULL, *pi = NULL, hdr[BW_NPY_FEATURE_ALIGN];
	int64_t ne = 0, np1 = rows + 1;
	int st;

	bw_npy h = {.dtype = width == 4 ? BURROW_DTYPE_I32 : BURROW_DTYPE_I64, .ndim = 1,
		    .shape = {bw_csr_builder_max_entries(b)}};
	pp = tmp_path(w, rel_indptr);
	pi = tmp_path(w, rel_indices);
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
	    !(st = bw_csr_builder_stream(b, &sink, &ne, &g.in_width)) && !(st = finish_indices(&g)) &&
	    !(st = bw_npy_writer_commit(&g.indptr)))
		st = bw_atomic_commit(&g.ix);
	if (st) {
		bw_npy_writer_abort(&g.indptr);
		bw_atomic_abort(&g.ix);
		goto out_free;
	}
	BW_ASSERT(ne == g.nix);
	*num_edges = ne;
out_free:
	bw_free(pp);
	bw_free(pi);
	bw_free(g.buf);
	return st;
}

/* The file the graph's entries' edge ids go to, in the temporary directory. */
static int open_edge_ids(burrow_writer *w, int *fd)
{
	if (!w->eid_path && !(w->eid_path = tmp_path(w, ".edge_ids.tmp")))
		return BURROW_E_NOMEM;
	*fd = open(w->eid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	return *fd < 0 ? bw_err_errno(errno, w->eid_path, "create") : 0;
}

static int w_put_builder(burrow_writer *w, burrow_csr_builder *b, bool symmetric)
{
	const int64_t n = bw_csr_builder_nodes(b);
	int64_t ne = 0;
	int st;

	if (w->have_graph)
		return bw_err(BURROW_E_INVAL, "%s: graph written twice", w->dir);
	if (w->num_types)
		return bw_err(BURROW_E_INVAL, "%s: a typed dataset's graph is its relations (burrow_writer_relation_begin)",
			      w->dir);
	if ((st = set_nodes(w, n, "the graph")))
		return st;
	int eid_fd = -1;
	if (bw_csr_builder_has_edge_ids(b) && (st = open_edge_ids(w, &eid_fd)))
		return st;
	st = stream_builder(w, b, "indptr.npy", "indices.npy", n, n < ((int64_t)1 << 31) ? 4 : 8, &ne, eid_fd,
			    w->eid_path);
	if (eid_fd >= 0 && close(eid_fd) != 0 && !st)
		st = bw_err_errno(errno, w->eid_path, "close");
	if (st)
		return st;
	w->have_graph = true;
	w->num_edges = ne;
	w->symmetric = symmetric;
	return 0;
}

/* Open a features file of num_rows rows (features.npy, or a type's features/<type>.npy). */
static int features_open(burrow_writer *w, const char *rel, int64_t num_rows, int64_t dim, burrow_dtype dtype)
{
	int st;
	if (w->feat_state == 1)
		return bw_err(BURROW_E_INVAL, "%s: features begun while others are open", w->dir);
	if (dim <= 0 || dim > BW_MAX_FEAT_DIM || (dtype != BURROW_DTYPE_F32 && dtype != BURROW_DTYPE_F16))
		return bw_err(BURROW_E_INVAL, "%s: features must be float32 or float16 with dim in [1, %d]", w->dir,
			      BW_MAX_FEAT_DIM);
	char *p = tmp_path(w, rel);
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
	w->feat_total = num_rows;
	return 0;
}

static int w_features_begin(burrow_writer *w, int64_t num_rows, int64_t dim, burrow_dtype dtype)
{
	int st;
	if (w->num_types)
		return bw_err(BURROW_E_INVAL, "%s: a typed dataset's features are its types' "
			      "(burrow_writer_type_features_begin)", w->dir);
	if (w->feat_state)
		return bw_err(BURROW_E_INVAL, "%s: features begun twice", w->dir);
	if (dim <= 0 || (dtype != BURROW_DTYPE_F32 && dtype != BURROW_DTYPE_F16))
		return bw_err(BURROW_E_INVAL, "%s: features must be float32 or float16 with dim > 0", w->dir);
	if ((st = set_nodes(w, num_rows, "features.npy")))
		return st;
	return features_open(w, "features.npy", num_rows, dim, dtype);
}

/* The open features file's name, for messages. */
static const char *feat_file(const burrow_writer *w, char *buf, size_t cap)
{
	if (w->feat_type < 0)
		return "features.npy";
	snprintf(buf, cap, "features/%s.npy", w->types[w->feat_type].name);
	return buf;
}

static int w_features_append(burrow_writer *w, const void *rows, int64_t n)
{
	char fb[BURROW_MAX_NAME + 16];
	if (w->feat_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: features appended outside begin/end", w->dir);
	if (n < 0 || w->feat_rows + n > w->feat_total)
		return bw_err(BURROW_E_INVAL, "%s: %s: %lld rows appended, only %lld declared", w->dir,
			      feat_file(w, fb, sizeof fb), (long long)(w->feat_rows + n), (long long)w->feat_total);
	w->feat_rows += n;
	return bw_npy_writer_append(&w->feat, rows, (size_t)n * (size_t)w->feat_dim * burrow_dtype_size(w->feat_dtype));
}

static int w_features_end(burrow_writer *w)
{
	char fb[BURROW_MAX_NAME + 16];
	if (w->feat_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: features ended without begin", w->dir);
	if (w->feat_rows != w->feat_total)
		return bw_err(BURROW_E_INVAL, "%s: %s: %lld rows written, %lld declared", w->dir, feat_file(w, fb, sizeof fb),
			      (long long)w->feat_rows, (long long)w->feat_total);
	w->feat_state = 2;
	int st = bw_npy_writer_commit(&w->feat);
	if (!st && w->feat_type >= 0) {
		w->types[w->feat_type].feat_dim = w->feat_dim;
		w->types[w->feat_type].feat_dtype = w->feat_dtype;
	}
	return st;
}

static int w_put_labels(burrow_writer *w, const int32_t *labels, int64_t n, int32_t num_classes)
{
	int st;
	if (num_classes <= 0)
		return bw_err(BURROW_E_INVAL, "%s: labels need num_classes > 0", w->dir);
	if (w->num_types && w->target < 0)
		return bw_err(BURROW_E_INVAL, "%s: labels.npy: a typed dataset's labels need a target type first "
			      "(burrow_writer_set_target)", w->dir);
	if (w->num_tasks)
		return bw_err(BURROW_E_INVAL, "%s: labels.npy written twice (multi-label first)", w->dir);
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

/* Multi-label targets: labels.npy int8 [n, T], values checked. */
static int w_put_multilabels(burrow_writer *w, const int8_t *labels, int64_t n, int32_t num_tasks)
{
	int st;
	if (num_tasks <= 0)
		return bw_err(BURROW_E_INVAL, "%s: multi-label labels need num_tasks > 0", w->dir);
	if (w->num_types)
		return bw_err(BURROW_E_INVAL, "%s: labels.npy: multi-label labels are for homogeneous datasets", w->dir);
	if (w->num_classes || w->num_tasks)
		return bw_err(BURROW_E_INVAL, "%s: labels.npy written twice", w->dir);
	if ((st = set_nodes(w, n, "labels.npy")))
		return st;
	for (int64_t i = 0; i < n * num_tasks; i++)
		if (labels[i] < -1 || labels[i] > 1)
			return bw_err(BURROW_E_RANGE, "%s: labels.npy: node %lld, task %lld has label %d: multi-label "
				      "labels are 1, 0 or -1 (unknown)", w->dir, (long long)(i / num_tasks),
				      (long long)(i % num_tasks), labels[i]);
	char *p = tmp_path(w, "labels.npy");
	if (!p)
		return BURROW_E_NOMEM;
	const int64_t shape[2] = {n, num_tasks};
	st = bw_npy_save(p, BURROW_DTYPE_I8, 2, shape, labels, BW_NPY_ALIGN);
	bw_free(p);
	if (!st)
		w->num_tasks = num_tasks;
	return st;
}

static int w_put_split(burrow_writer *w, int split, const int64_t *ids, int64_t n)
{
	char rel[32];
	if (split < 0 || split > 2)
		return bw_err(BURROW_E_INVAL, "%s: unknown split %d", w->dir, split);
	if (w->num_types && w->target < 0)
		return bw_err(BURROW_E_INVAL, "%s: split/%s.npy: a typed dataset's splits need a target type first "
			      "(burrow_writer_set_target)", w->dir, bw_split_names[split]);
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

/* ------------------------------------------------------------ typed datasets (version 2) */

static int w_add_type(burrow_writer *w, const char *name, int64_t num_nodes, int *type)
{
	if (w->have_graph || w->graph_state || (w->feat_state && w->feat_type < 0) || w->num_classes || w->num_tasks ||
	    w->have_split[0] || w->have_split[1] || w->have_split[2])
		return bw_err(BURROW_E_INVAL, "%s: node type \"%s\" added to a homogeneous dataset", w->dir,
			      name ? name : "");
	if (!bw_type_name_ok(name))
		return bw_err(BURROW_E_INVAL, "%s: node type name \"%s\" must be 1 to %d of [A-Za-z0-9_-]", w->dir,
			      name ? name : "", BURROW_MAX_NAME - 1);
	if (w->num_types == BURROW_MAX_TYPES)
		return bw_err(BURROW_E_INVAL, "%s: more than %d node types", w->dir, BURROW_MAX_TYPES);
	if (num_nodes < 0)
		return bw_err(BURROW_E_INVAL, "%s: node type \"%s\": negative count %lld", w->dir, name,
			      (long long)num_nodes);
	for (int t = 0; t < w->num_types; t++)
		if (!strcmp(w->types[t].name, name))
			return bw_err(BURROW_E_INVAL, "%s: node type \"%s\" added twice", w->dir, name);
	bw_wtype *ty = &w->types[w->num_types];
	snprintf(ty->name, sizeof ty->name, "%s", name);
	ty->num_nodes = num_nodes;
	*type = w->num_types++;
	return 0;
}

static int type_ok(const burrow_writer *w, int t, const char *what)
{
	if (t < 0 || t >= w->num_types)
		return bw_err(BURROW_E_RANGE, "%s: %s: type %d is not one of the %d declared", w->dir, what, t, w->num_types);
	return 0;
}

static int w_set_target(burrow_writer *w, int t)
{
	int st = type_ok(w, t, "target type");
	if (st)
		return st;
	if (w->num_classes || w->have_split[0] || w->have_split[1] || w->have_split[2])
		return bw_err(BURROW_E_INVAL, "%s: target type set after its labels or splits", w->dir);
	w->target = t;
	w->num_nodes = w->types[t].num_nodes;
	return 0;
}

/* mkdir tmp/rel once. */
static int make_subdir(burrow_writer *w, const char *rel, bool *made)
{
	if (*made)
		return 0;
	char *p = tmp_path(w, rel);
	if (!p)
		return BURROW_E_NOMEM;
	int st = mkdir(p, 0755) < 0 && errno != EEXIST ? bw_err_errno(errno, p, "mkdir") : 0;
	bw_free(p);
	*made = !st;
	return st;
}

static int w_relation_begin(burrow_writer *w, int src, const char *name, int dst, const burrow_csr_opts *opts)
{
	int st;
	if (w->rb)
		return bw_err(BURROW_E_INVAL, "%s: relation begun before the last one ended", w->dir);
	if ((st = type_ok(w, src, "relation source")) || (st = type_ok(w, dst, "relation destination")))
		return st;
	if (!bw_type_name_ok(name))
		return bw_err(BURROW_E_INVAL, "%s: relation name \"%s\" must be 1 to %d of [A-Za-z0-9_-]", w->dir,
			      name ? name : "", BURROW_MAX_NAME - 1);
	if (w->num_rels == BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_INVAL, "%s: more than %d relations", w->dir, BURROW_MAX_RELATIONS);
	bw_wrel *r = &w->rels[w->num_rels];
	memset(r, 0, sizeof *r);
	bw_relation_dir(r->dir, sizeof r->dir, w->types[src].name, name, w->types[dst].name);
	for (int i = 0; i < w->num_rels; i++)
		if (!strcmp(w->rels[i].dir, r->dir))
			return bw_err(BURROW_E_INVAL, "%s: relation %s written twice", w->dir, r->dir);
	burrow_csr_opts o;
	burrow_csr_defaults(&o);
	if (opts && (st = bw_opts_in(&o, sizeof o, opts, "burrow_csr_opts")))
		return st;
	o.symmetrize = false;
	o.drop_self_loops = false; /* a paper citing itself is an edge of its own */
	o.drop_duplicates = true;
	const int64_t ns = w->types[src].num_nodes, nd = w->types[dst].num_nodes;
	if ((st = burrow_csr_builder_open(&w->rb, ns > nd ? ns : nd, &o)))
		return st;
	snprintf(r->name, sizeof r->name, "%s", name);
	r->src = src;
	r->dst = dst;
	return 0;
}

/* Each edge checked against its own type's count, then added reversed: row = dst. */
static int w_relation_add(burrow_writer *w, const int64_t *src, const int64_t *dst, size_t n)
{
	if (!w->rb)
		return bw_err(BURROW_E_INVAL, "%s: relation edges added outside begin/end", w->dir);
	const bw_wrel *r = &w->rels[w->num_rels];
	const int64_t ns = w->types[r->src].num_nodes, nd = w->types[r->dst].num_nodes;
	const int64_t base = burrow_csr_builder_count(w->rb);
	for (size_t i = 0; i < n; i++) {
		if (src[i] < 0 || src[i] >= ns)
			return bw_err(BURROW_E_RANGE, "%s: relation %s: edge %lld: source id %lld outside [0, %lld) (%s)",
				      w->dir, r->dir, (long long)(base + (int64_t)i), (long long)src[i], (long long)ns,
				      w->types[r->src].name);
		if (dst[i] < 0 || dst[i] >= nd)
			return bw_err(BURROW_E_RANGE,
				      "%s: relation %s: edge %lld: destination id %lld outside [0, %lld) (%s)", w->dir,
				      r->dir, (long long)(base + (int64_t)i), (long long)dst[i], (long long)nd,
				      w->types[r->dst].name);
	}
	return burrow_csr_builder_add(w->rb, dst, src, n);
}

static int w_relation_end(burrow_writer *w)
{
	char ip[3 * BURROW_MAX_NAME + 32], ix[3 * BURROW_MAX_NAME + 32];
	int st;
	if (!w->rb)
		return bw_err(BURROW_E_INVAL, "%s: relation ended without begin", w->dir);
	bw_wrel *r = &w->rels[w->num_rels];
	snprintf(ip, sizeof ip, "relations/%s", r->dir);
	bool made = false;
	if (!(st = make_subdir(w, "relations", &w->made_rel_dir)) && !(st = make_subdir(w, ip, &made))) {
		snprintf(ip, sizeof ip, "relations/%s/indptr.npy", r->dir);
		snprintf(ix, sizeof ix, "relations/%s/indices.npy", r->dir);
		const int64_t ns = w->types[r->src].num_nodes;
		st = stream_builder(w, w->rb, ip, ix, w->types[r->dst].num_nodes, ns < ((int64_t)1 << 31) ? 4 : 8,
				    &r->num_edges, -1, NULL);
	}
	burrow_csr_builder_close(w->rb);
	w->rb = NULL;
	if (!st) {
		w->num_edges += r->num_edges;
		w->num_rels++;
	}
	return st;
}

static int w_type_features_begin(burrow_writer *w, int t, int64_t dim, burrow_dtype dtype)
{
	char rel[BURROW_MAX_NAME + 16];
	int st = type_ok(w, t, "features");
	if (st)
		return st;
	if (w->types[t].feat_dim || (w->feat_state == 1 && w->feat_type == t))
		return bw_err(BURROW_E_INVAL, "%s: features of type %s written twice", w->dir, w->types[t].name);
	if (w->feat_state == 1)
		return bw_err(BURROW_E_INVAL, "%s: features of type %s begun before %s's ended", w->dir,
			      w->types[t].name, w->types[w->feat_type].name);
	if ((st = make_subdir(w, "features", &w->made_feat_dir)))
		return st;
	snprintf(rel, sizeof rel, "features/%s.npy", w->types[t].name);
	w->feat_type = t;
	return features_open(w, rel, w->types[t].num_nodes, dim, dtype);
}

/* meta.json of a typed dataset (docs/format.md, format version 2). */
static int write_meta_typed(burrow_writer *w)
{
	cJSON *j = bw_meta_begin("burrow-dataset", BW_DATASET_VERSION_TYPED);
	if (!j)
		return bw_meta_write(NULL, w->tmp, false);
	bool ok = true;
	cJSON_AddStringToObject(j, "name", w->name);
	cJSON *types = cJSON_AddArrayToObject(j, "node_types");
	for (int t = 0; types && t < w->num_types; t++) {
		const bw_wtype *ty = &w->types[t];
		cJSON *o = cJSON_CreateObject();
		ok &= cJSON_AddItemToArray(types, o);
		cJSON_AddStringToObject(o, "name", ty->name);
		cJSON_AddNumberToObject(o, "num_nodes", (double)ty->num_nodes);
		cJSON_AddNumberToObject(o, "feat_dim", (double)ty->feat_dim);
		if (ty->feat_dim)
			cJSON_AddStringToObject(o, "feat_dtype", burrow_dtype_name(ty->feat_dtype));
		cJSON *f = ty->feat_ref ? cJSON_AddObjectToObject(o, "features") : NULL;
		ok &= !ty->feat_ref || (f && cJSON_AddStringToObject(f, "path", ty->feat_ref) &&
					cJSON_AddNumberToObject(f, "offset", (double)ty->feat_ref_off) &&
					cJSON_AddStringToObject(f, "dtype", burrow_dtype_name(ty->feat_dtype)) &&
					(!ty->feat_ref_raw || cJSON_AddFalseToObject(f, "header")));
	}
	cJSON *rels = cJSON_AddArrayToObject(j, "relations");
	for (int i = 0; rels && i < w->num_rels; i++) {
		const bw_wrel *r = &w->rels[i];
		cJSON *o = cJSON_CreateObject();
		ok &= cJSON_AddItemToArray(rels, o);
		cJSON_AddStringToObject(o, "src", w->types[r->src].name);
		cJSON_AddStringToObject(o, "name", r->name);
		cJSON_AddStringToObject(o, "dst", w->types[r->dst].name);
		cJSON_AddNumberToObject(o, "num_edges", (double)r->num_edges);
		cJSON_AddStringToObject(o, "index_dtype",
					w->types[r->src].num_nodes < ((int64_t)1 << 31) ? "int32" : "int64");
	}
	if (w->target >= 0)
		cJSON_AddStringToObject(j, "target_type", w->types[w->target].name);
	else
		cJSON_AddNullToObject(j, "target_type");
	cJSON_AddNumberToObject(j, "num_classes", w->num_classes);
	for (int i = 0; i < 3; i++) {
		char key[16];
		snprintf(key, sizeof key, "num_%s", bw_split_names[i]);
		cJSON_AddNumberToObject(j, key, (double)w->split_n[i]);
	}
	cJSON *src = cJSON_Parse(w->source_json ? w->source_json : "{}");
	if (src && !cJSON_AddItemToObject(j, "source", src)) {
		cJSON_Delete(src);
		src = NULL;
	}
	return bw_meta_write(j, w->tmp, ok && types && rels && src);
}

int burrow_writer_add_type(burrow_writer *w, const char *name, int64_t num_nodes, int *type)
{
	return REBASE(w, w_add_type(w, name, num_nodes, type));
}

int burrow_writer_set_target(burrow_writer *w, int type) { return REBASE(w, w_set_target(w, type)); }

int burrow_writer_relation_begin(burrow_writer *w, int src_type, const char *name, int dst_type,
				 const burrow_csr_opts *opts)
{
	return REBASE(w, w_relation_begin(w, src_type, name, dst_type, opts));
}

int burrow_writer_relation_add(burrow_writer *w, const int64_t *src, const int64_t *dst, size_t n)
{
	return REBASE(w, w_relation_add(w, src, dst, n));
}

int burrow_writer_relation_end(burrow_writer *w) { return REBASE(w, w_relation_end(w)); }

int burrow_writer_type_features_begin(burrow_writer *w, int type, int64_t dim, burrow_dtype dtype)
{
	return REBASE(w, w_type_features_begin(w, type, dim, dtype));
}

int bw_writer_type_features_ref(burrow_writer *w, int t, const char *path)
{
	bw_npy h;
	int st = type_ok(w, t, "features");
	if (st)
		return st;
	if (w->types[t].feat_dim || w->types[t].feat_ref || (w->feat_state == 1 && w->feat_type == t))
		return bw_err(BURROW_E_INVAL, "%s: features of type %s given twice", w->dir, w->types[t].name);
	if (path[0] != '/')
		return bw_err(BURROW_E_INVAL, "%s: features of type %s read in place need an absolute path", path,
			      w->types[t].name);
	if ((st = bw_npy_open(path, &h, NULL)))
		return st;
	if (h.ndim != 2 || h.shape[0] != w->types[t].num_nodes || h.shape[1] < 1 || h.shape[1] > BW_MAX_FEAT_DIM ||
	    (h.dtype != BURROW_DTYPE_F32 && h.dtype != BURROW_DTYPE_F16))
		return bw_err(BURROW_E_FORMAT, "%s: expected float32 or float16 [%lld, D] features of type %s, found %s with "
			      "%d dimensions", path, (long long)w->types[t].num_nodes, w->types[t].name,
			      burrow_dtype_name(h.dtype), h.ndim);
	if (!(w->types[t].feat_ref = bw_strdup(path)))
		return BURROW_E_NOMEM;
	w->types[t].feat_ref_off = h.data_offset;
	w->types[t].feat_dim = h.shape[1];
	w->types[t].feat_dtype = h.dtype;
	return 0;
}

int bw_writer_type_features_raw(burrow_writer *w, int t, const char *path, int64_t dim, burrow_dtype dtype)
{
	int64_t size;
	int fd = -1, st = type_ok(w, t, "features");
	if (st)
		return st;
	if (w->types[t].feat_dim || w->types[t].feat_ref || (w->feat_state == 1 && w->feat_type == t))
		return bw_err(BURROW_E_INVAL, "%s: features of type %s given twice", w->dir, w->types[t].name);
	if (path[0] != '/' || dim < 1 || dim > BW_MAX_FEAT_DIM || (dtype != BURROW_DTYPE_F32 && dtype != BURROW_DTYPE_F16))
		return bw_err(BURROW_E_INVAL, "%s: raw features of type %s need an absolute path, 1 to %d columns, float32 "
			      "or float16", path, w->types[t].name, BW_MAX_FEAT_DIM);
	if ((st = bw_open_input(path, 0, &fd, &size)))
		return st;
	close(fd);
	const int64_t want = w->types[t].num_nodes * dim * (int64_t)burrow_dtype_size(dtype);
	if (size != want)
		return bw_err(BURROW_E_FORMAT, "%s: %lld bytes without an .npy header; expected %lld x %lld x %zu = %lld "
			      "(type %s's nodes x columns x %s)", path, (long long)size, (long long)w->types[t].num_nodes,
			      (long long)dim, burrow_dtype_size(dtype), (long long)want, w->types[t].name,
			      burrow_dtype_name(dtype));
	if (!(w->types[t].feat_ref = bw_strdup(path)))
		return BURROW_E_NOMEM;
	w->types[t].feat_ref_off = 0;
	w->types[t].feat_ref_raw = true;
	w->types[t].feat_dim = dim;
	w->types[t].feat_dtype = dtype;
	return 0;
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

/* meta.json's "edge_feat_dim" and "edge_feat_dtype", when edge_features.npy was written. */
static void meta_edge_features(const burrow_writer *w, cJSON *j)
{
	if (!w->edge_feat_dim)
		return;
	cJSON_AddNumberToObject(j, "edge_feat_dim", (double)w->edge_feat_dim);
	cJSON_AddStringToObject(j, "edge_feat_dtype", burrow_dtype_name(w->edge_feat_dtype));
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
	if (w->num_tasks)
		cJSON_AddNumberToObject(j, "num_tasks", w->num_tasks);
	cJSON_AddBoolToObject(j, "symmetric", w->symmetric);
	meta_edge_features(w, j);
	cJSON *splits = cJSON_AddObjectToObject(j, "splits");
	for (int i = 0; splits && i < 3; i++)
		cJSON_AddNumberToObject(splits, bw_split_names[i], (double)w->split_n[i]);
	cJSON *src = cJSON_Parse(w->source_json ? w->source_json : "{}");
	if (src && !cJSON_AddItemToObject(j, "source", src)) { /* its key's copy failed: src is still ours */
		cJSON_Delete(src);
		src = NULL;
	}
	bool extra = true;
	for (const cJSON *x = w->extra ? w->extra->child : NULL; x && extra; x = x->next) {
		cJSON *c = cJSON_Duplicate(x, true);
		extra = c && cJSON_AddItemToObject(j, x->string, c);
		if (!extra)
			cJSON_Delete(c);
	}
	return bw_meta_write(j, w->tmp, splits && src && extra);
}

/* What commit needs of a typed writer: a relation, nothing left open. */
static int typed_complete(const burrow_writer *w)
{
	char fb[BURROW_MAX_NAME + 16];
	if (!w->num_rels)
		return bw_err(BURROW_E_INVAL, "%s: no relation was written", w->dir);
	if (w->rb)
		return bw_err(BURROW_E_INVAL, "%s: relation %s was not ended", w->dir, w->rels[w->num_rels].dir);
	if (w->feat_state == 1)
		return bw_err(BURROW_E_INVAL, "%s: %s was not ended", w->dir, feat_file(w, fb, sizeof fb));
	return 0;
}

/* fsync the typed directory's folders (relations/, each relation's, features/). */
static int fsync_typed(const burrow_writer *w)
{
	char rel[3 * BURROW_MAX_NAME + 32];
	int st = 0;
	for (int i = -2; i < w->num_rels && !st; i++) {
		if (i == -2 && !w->made_feat_dir)
			continue;
		if (i == -2)
			snprintf(rel, sizeof rel, "features");
		else if (i == -1)
			snprintf(rel, sizeof rel, "relations");
		else
			snprintf(rel, sizeof rel, "relations/%s", w->rels[i].dir);
		char *p = tmp_path(w, rel);
		st = p ? bw_fsync_dir(p) : BURROW_E_NOMEM;
		bw_free(p);
	}
	return st;
}

int burrow_writer_commit(burrow_writer *w)
{
	int st = 0;

	if (w->num_types)
		st = typed_complete(w);
	else if (!w->have_graph)
		st = bw_err(BURROW_E_INVAL, "%s: no graph was written", w->dir);
	else if (w->feat_state == 1)
		st = bw_err(BURROW_E_INVAL, "%s: features.npy was not ended", w->dir);
	else if (w->graph_state == 1)
		st = bw_err(BURROW_E_INVAL, "%s: indices.npy was not ended", w->dir);
	else if (w->ef_state == 1)
		st = bw_err(BURROW_E_INVAL, "%s: edge_features.npy was not ended", w->dir);
	if (!st && w->eid_path) /* edge ids nobody gathered by: not part of the dataset */
		(void)unlink(w->eid_path);
	if (st || (st = REBASE(w, w->num_types ? write_meta_typed(w) : write_meta(w))) || (st = bw_fsync_dir(w->tmp)))
		goto fail;
	if (w->num_types && (st = REBASE(w, fsync_typed(w))))
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

int burrow_writer_put_builder(burrow_writer *w, burrow_csr_builder *b, bool symmetric)
{
	return REBASE(w, w_put_builder(w, b, symmetric));
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

int burrow_writer_put_multilabels(burrow_writer *w, const int8_t *labels, int64_t n, int32_t num_tasks)
{
	return REBASE(w, w_put_multilabels(w, labels, n, num_tasks));
}

int burrow_writer_put_split(burrow_writer *w, int split, const int64_t *ids, int64_t n)
{
	return REBASE(w, w_put_split(w, split, ids, n));
}

int64_t bw_writer_num_edges(const burrow_writer *w) { return w->num_edges; }

/* ---------------------------------------------------------------- parts beyond the base layout */

int bw_writer_file(burrow_writer *w, const char *rel, char **path)
{
	char *p = tmp_path(w, rel), *dir = p ? bw_dirname(p) : NULL;
	int st = dir ? REBASE(w, bw_mkdir_p(dir, 0755)) : BURROW_E_NOMEM;
	bw_free(dir);
	if (st) {
		bw_free(p);
		p = NULL;
	}
	*path = p;
	return st;
}

int bw_writer_meta_add(burrow_writer *w, const char *key, cJSON *item)
{
	(void)bw_json_nomem();
	if (!w->extra && !(w->extra = cJSON_CreateObject())) {
		cJSON_Delete(item);
		return bw_err(BURROW_E_NOMEM, "%s: out of memory writing meta.json", w->dir);
	}
	cJSON_DeleteItemFromObjectCaseSensitive(w->extra, key);
	if (!item || !cJSON_AddItemToObject(w->extra, key, item)) {
		cJSON_Delete(item);
		return bw_err(BURROW_E_NOMEM, "%s: out of memory writing meta.json", w->dir);
	}
	return 0;
}

const char *bw_writer_dir(const burrow_writer *w) { return w->dir; }

int bw_writer_rebase(const burrow_writer *w, int status) { return REBASE(w, status); }
/* ---------------------------------------------------------------- edge features */

#define EF_CHUNK ((int64_t)1 << 16) /* entries gathered per write */

/* edge_features.npy [E, dim] from rows [m, dim]: row j is rows[eids[j]] (eids NULL: row j). */
static int write_edge_rows(burrow_writer *w, const void *rows, int64_t m, int64_t dim, burrow_dtype dtype,
			   const int64_t *eids)
{
	const size_t rb = (size_t)dim * burrow_dtype_size(dtype);
	const int64_t e = w->num_edges;
	int64_t shape[2] = {e, dim};
	bw_npy_writer nw;
	char *p = tmp_path(w, "edge_features.npy");
	char *buf = bw_malloc((size_t)EF_CHUNK * rb);
	int st = p && buf ? bw_npy_writer_open(&nw, p, dtype, 2, shape, BW_NPY_FEATURE_ALIGN) : BURROW_E_NOMEM;
	for (int64_t j0 = 0; !st && j0 < e; j0 += EF_CHUNK) {
		const int64_t n = BW_MIN(EF_CHUNK, e - j0);
		for (int64_t j = j0; !st && j < j0 + n; j++) {
			const int64_t r = eids ? eids[j] : j;
			if (r < 0 || r >= m)
				st = bw_err(BURROW_E_RANGE, "%s: edge_features.npy: entry %lld is input edge %lld, of %lld rows",
					    w->dir, (long long)j, (long long)r, (long long)m);
			else
				memcpy(buf + (size_t)(j - j0) * rb, (const char *)rows + (size_t)r * rb, rb);
		}
		if (!st)
			st = bw_npy_writer_append(&nw, buf, (size_t)n * rb);
		if (st)
			bw_npy_writer_abort(&nw);
	}
	if (!st)
		st = bw_npy_writer_commit(&nw);
	bw_free(p);
	bw_free(buf);
	return st;
}

static int w_put_edge_features(burrow_writer *w, const void *rows, int64_t m, int64_t dim, burrow_dtype dtype)
{
	bw_npy_map map = {0};
	int st;
	if (!w->have_graph || w->num_types)
		return bw_err(BURROW_E_INVAL, "%s: edge features need the (homogeneous) graph written first", w->dir);
	if (w->edge_feat_dim || w->ef_state)
		return bw_err(BURROW_E_INVAL, "%s: edge features written twice", w->dir);
	if (dim <= 0 || dim > BW_MAX_FEAT_DIM || (dtype != BURROW_DTYPE_F32 && dtype != BURROW_DTYPE_F16) || m < 0)
		return bw_err(BURROW_E_INVAL, "%s: edge features must be float32 or float16 with dim in [1, %d]", w->dir,
			      BW_MAX_FEAT_DIM);
	if (!w->eid_path && m != w->num_edges)
		return bw_err(BURROW_E_INVAL, "%s: %lld edge feature rows for %lld CSR entries (a graph built without "
			      "edge ids takes its rows in CSR order)", w->dir, (long long)m, (long long)w->num_edges);
	if (w->eid_path) { /* raw int64: mapped through a header-less view */
		int fd = open(w->eid_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return bw_err_errno(errno, w->eid_path, "open");
		map.len = (size_t)w->num_edges * sizeof(int64_t);
		map.base = map.len ? mmap(NULL, map.len, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
		close(fd);
		if (map.base == MAP_FAILED)
			return bw_err_errno(errno, w->eid_path, "map");
		map.data = map.base;
	}
	st = write_edge_rows(w, rows, m, dim, dtype, w->eid_path ? map.data : NULL);
	if (map.base)
		munmap(map.base, map.len);
	if (st)
		return st;
	if (w->eid_path)
		(void)unlink(w->eid_path);
	w->edge_feat_dim = dim;
	w->edge_feat_dtype = dtype;
	return 0;
}

int burrow_writer_put_edge_features(burrow_writer *w, const void *rows, int64_t m, int64_t dim, burrow_dtype dtype)
{
	return REBASE(w, w_put_edge_features(w, rows, m, dim, dtype));
}

/* Streamed edge features, rows in CSR order (the parts writer's): begin once the graph's
 * entry count is known (bw_writer_graph_begin or a whole graph), append, end. */
static int w_edge_features_begin(burrow_writer *w, int64_t dim, burrow_dtype dtype)
{
	if ((!w->have_graph && w->graph_state != 1) || w->num_types)
		return bw_err(BURROW_E_INVAL, "%s: edge features need the (homogeneous) graph begun first", w->dir);
	if (w->edge_feat_dim || w->ef_state || w->eid_path)
		return bw_err(BURROW_E_INVAL, "%s: edge features written twice", w->dir);
	if (dim <= 0 || dim > BW_MAX_FEAT_DIM || (dtype != BURROW_DTYPE_F32 && dtype != BURROW_DTYPE_F16))
		return bw_err(BURROW_E_INVAL, "%s: edge features must be float32 or float16 with dim in [1, %d]", w->dir,
			      BW_MAX_FEAT_DIM);
	char *p = tmp_path(w, "edge_features.npy");
	if (!p)
		return BURROW_E_NOMEM;
	const int64_t shape[2] = {w->num_edges, dim};
	int st = bw_npy_writer_open(&w->ef, p, dtype, 2, shape, BW_NPY_FEATURE_ALIGN);
	bw_free(p);
	if (st)
		return st;
	w->ef_state = 1;
	w->ef_rows = 0;
	w->ef_dim = dim;
	w->ef_dtype = dtype;
	return 0;
}

static int w_edge_features_append(burrow_writer *w, const void *rows, int64_t n)
{
	if (w->ef_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: edge features appended outside begin/end", w->dir);
	if (n < 0 || w->ef_rows + n > w->num_edges)
		return bw_err(BURROW_E_INVAL, "%s: edge_features.npy: %lld rows appended, only %lld entries", w->dir,
			      (long long)(w->ef_rows + n), (long long)w->num_edges);
	w->ef_rows += n;
	return bw_npy_writer_append(&w->ef, rows, (size_t)n * (size_t)w->ef_dim * burrow_dtype_size(w->ef_dtype));
}

static int w_edge_features_end(burrow_writer *w)
{
	if (w->ef_state != 1)
		return bw_err(BURROW_E_INVAL, "%s: edge features ended without begin", w->dir);
	if (w->ef_rows != w->num_edges)
		return bw_err(BURROW_E_INVAL, "%s: edge_features.npy: %lld rows written for %lld entries", w->dir,
			      (long long)w->ef_rows, (long long)w->num_edges);
	w->ef_state = 2;
	int st = bw_npy_writer_commit(&w->ef);
	if (!st) {
		w->edge_feat_dim = w->ef_dim;
		w->edge_feat_dtype = w->ef_dtype;
	}
	return st;
}

int bw_writer_edge_features_begin(burrow_writer *w, int64_t dim, burrow_dtype dtype)
{
	return REBASE(w, w_edge_features_begin(w, dim, dtype));
}

int bw_writer_edge_features_append(burrow_writer *w, const void *rows, int64_t n)
{
	return REBASE(w, w_edge_features_append(w, rows, n));
}

int bw_writer_edge_features_end(burrow_writer *w) { return REBASE(w, w_edge_features_end(w)); }

/* Row v of features.npy from the entries of CSR row v (their edge features, float32 or
 * float16) into out[dim] float32: their mean, sum or max; 0 for a row without entries. */
static void reduce_row(const void *ef, burrow_dtype dt, int64_t dim, int64_t lo, int64_t hi,
		       burrow_edge_reduce r, float *out)
{
	for (int64_t k = 0; k < dim; k++)
		out[k] = r == BURROW_EDGE_REDUCE_MAX && hi > lo ? -INFINITY : 0.0f;
	for (int64_t j = lo; j < hi; j++)
		for (int64_t k = 0; k < dim; k++) {
			const float x = dt == BURROW_DTYPE_F16 ? bw_f16_to_f32(((const uint16_t *)ef)[j * dim + k])
							       : ((const float *)ef)[j * dim + k];
			out[k] = r == BURROW_EDGE_REDUCE_MAX ? (x > out[k] ? x : out[k]) : out[k] + x;
		}
	if (r == BURROW_EDGE_REDUCE_MEAN && hi > lo)
		for (int64_t k = 0; k < dim; k++)
			out[k] /= (float)(hi - lo);
}

/* features.npy streamed from the written graph and edge_features.npy, both mapped from the
 * temporary directory (row by row: memory stays a chunk of rows). */
static int w_features_from_edges(burrow_writer *w, burrow_edge_reduce r)
{
	bw_npy hp, he;
	bw_npy_map mp = {0}, me = {0};
	char *pp = tmp_path(w, "indptr.npy"), *pe = tmp_path(w, "edge_features.npy");
	const int64_t n = w->num_nodes, dim = w->edge_feat_dim;
	float *buf = NULL;
	int st;
	if (!w->edge_feat_dim || w->graph_state == 1)
		st = bw_err(BURROW_E_INVAL, "%s: node features from edges need the graph and its edge features first",
			    w->dir);
	else if (r != BURROW_EDGE_REDUCE_MEAN && r != BURROW_EDGE_REDUCE_SUM && r != BURROW_EDGE_REDUCE_MAX)
		st = bw_err(BURROW_E_INVAL, "%s: unknown edge reduction %d", w->dir, (int)r);
	else if (!pp || !pe || !(buf = bw_malloc((size_t)EF_CHUNK * (size_t)dim * sizeof *buf)))
		st = BURROW_E_NOMEM;
	else if (!(st = bw_npy_mmap(pp, &hp, &mp)) && !(st = bw_npy_mmap(pe, &he, &me)))
		st = w_features_begin(w, n, dim, BURROW_DTYPE_F32);
	for (int64_t v0 = 0; !st && v0 < n; v0 += EF_CHUNK) {
		const int64_t k = BW_MIN(EF_CHUNK, n - v0);
		const int64_t *ip = mp.data;
#pragma omp parallel for schedule(dynamic, 256)
		for (int64_t v = v0; v < v0 + k; v++)
			reduce_row(me.data, w->edge_feat_dtype, dim, ip[v], ip[v + 1], r, buf + (v - v0) * dim);
		st = w_features_append(w, buf, k);
	}
	if (!st)
		st = w_features_end(w);
	bw_npy_unmap(&mp);
	bw_npy_unmap(&me);
	bw_free(buf);
	bw_free(pp);
	bw_free(pe);
	return st;
}

int burrow_writer_features_from_edges(burrow_writer *w, burrow_edge_reduce reduce)
{
	return REBASE(w, w_features_from_edges(w, reduce));
}

const char *burrow_edge_reduce_name(burrow_edge_reduce r)
{
	return r == BURROW_EDGE_REDUCE_MEAN  ? "mean"
	       : r == BURROW_EDGE_REDUCE_SUM ? "sum"
	       : r == BURROW_EDGE_REDUCE_MAX ? "max"
					     : "?";
}

int burrow_edge_reduce_parse(const char *s, burrow_edge_reduce *out)
{
	for (int r = BURROW_EDGE_REDUCE_MEAN; r <= BURROW_EDGE_REDUCE_MAX; r++)
		if (s && !strcmp(s, burrow_edge_reduce_name((burrow_edge_reduce)r))) {
			*out = (burrow_edge_reduce)r;
			return 0;
		}
	return bw_err(BURROW_E_INVAL, "edge reduction '%s': expected mean, sum or max", s ? s : "");
}

