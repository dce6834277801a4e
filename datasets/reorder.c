/* reorder.c: burrow reorder: a version-1 dataset rewritten in a new node order (graph, features, edge features,
 * labels, splits, named and edge splits, orig_ids), streamed row by row in the new order. */
#define _GNU_SOURCE
#include "../graph/dataset_internal.h"
#include "dsio.h"

#include <cjson/cJSON.h>

#include <errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDBUF ((int64_t)1 << 16)             /* ids per append to indices.npy */
#define EF_OUT ((int64_t)1 << 12)            /* edge feature rows per append */
#define FEAT_GAP_BYTES ((int64_t)64 << 10)   /* read across a gap rather than issue another read */
#define MAX_CHUNK_BYTES ((size_t)256 << 20)  /* feature rows gathered per write, at most */

/* One reorder run: the input, the two id maps, the writer. */
typedef struct ro {
	burrow_dataset *ds;          /* the input, open */
	const burrow_dataset_info *in;
	const burrow_csr *g;
	const char *in_dir;
	const char *named;           /* meta.json's source names it as the input; NULL: a scratch input */
	const burrow_reorder_opts *o;
	int64_t n;
	int64_t *perm;               /* [n] input id of new node i */
	int64_t *inv;                /* [n] new id of input node v */
	size_t chunk_bytes;          /* feature bytes gathered per write */
	cJSON *meta;                 /* the input's meta.json */
	burrow_writer *w;
} ro;

void burrow_reorder_defaults(burrow_reorder_opts *o)
{
	*o = (burrow_reorder_opts){.size = sizeof *o, .order = BURROW_ORDER_BFS};
}

static int progress(const ro *r, const char *phase, uint64_t done, uint64_t total)
{
	if (r->o->progress)
		r->o->progress(r->o->progress_user, phase, done, total);
	return 0;
}

/* ---------------------------------------------------------------- the id maps */

/* r->perm from the caller (checked to be a permutation) or the order; r->inv its inverse. */
static int make_maps(ro *r)
{
	const int64_t n = r->n;
	r->perm = bw_malloc((size_t)(n ? n : 1) * sizeof *r->perm);
	r->inv = bw_malloc((size_t)(n ? n : 1) * sizeof *r->inv);
	if (!r->perm || !r->inv)
		return BURROW_E_NOMEM;
	int st = 0;
	if (r->o->perm)
		memcpy(r->perm, r->o->perm, (size_t)n * sizeof *r->perm);
	else
		st = burrow_order_compute(r->g, r->o->order, r->o->seed, r->perm);
	for (int64_t v = 0; !st && v < n; v++)
		r->inv[v] = -1;
	for (int64_t i = 0; !st && i < n; i++) {
		const int64_t v = r->perm[i];
		if (v < 0 || v >= n || r->inv[v] >= 0)
			st = bw_err(BURROW_E_INVAL, "reorder: perm[%lld] = %lld is %s", (long long)i, (long long)v,
				    v < 0 || v >= n ? "outside [0, N)" : "given twice: not a permutation");
		else
			r->inv[v] = i;
	}
	return st;
}

/* ---------------------------------------------------------------- graph and edge features */

/* The input's edge_features.npy on its way out: row v's entries read in one pread, written in
 * the order of the new row's sort. */
typedef struct ef_io {
	int fd;
	const char *path;
	int64_t off;
	size_t rowb;
	char *in;                    /* [cap] entries of one input row */
	int64_t cap;
	char *out;                   /* [EF_OUT] entries waiting for the writer */
	int64_t fill;
} ef_io;

static int ef_open(ef_io *e, const ro *r, int64_t maxdeg)
{
	*e = (ef_io){.fd = -1, .path = burrow_dataset_edge_features_path(r->ds),
		     .off = burrow_dataset_edge_features_offset(r->ds),
		     .rowb = (size_t)r->in->edge_feat_dim * burrow_dtype_size(r->in->edge_feat_dtype),
		     .cap = BW_MAX(maxdeg, 1)};
	e->in = bw_malloc((size_t)e->cap * e->rowb);
	e->out = bw_malloc((size_t)EF_OUT * e->rowb);
	if (!e->in || !e->out)
		return BURROW_E_NOMEM;
	return bw_open_input(e->path, 0, &e->fd, NULL);
}

static void ef_close(ef_io *e)
{
	if (e->fd >= 0)
		close(e->fd);
	bw_free(e->in);
	bw_free(e->out);
}

/* Input entries [lo, lo + d) appended in the order pos[0 .. d) (positions within the row). */
static int ef_row(ef_io *e, burrow_writer *w, int64_t lo, const int64_t *pos, int64_t d)
{
	int st = d ? bw_pread_all(e->fd, e->in, (size_t)d * e->rowb, e->off + lo * (int64_t)e->rowb, e->path) : 0;
	for (int64_t q = 0; !st && q < d; q++) {
		memcpy(e->out + (size_t)e->fill * e->rowb, e->in + (size_t)pos[q] * e->rowb, e->rowb);
		if (++e->fill == EF_OUT) {
			st = bw_writer_edge_features_append(w, e->out, e->fill);
			e->fill = 0;
		}
	}
	return st;
}

typedef struct id_pos {
	int64_t id, pos;
} id_pos;

static int cmp_id_pos(const void *a, const void *b)
{
	const id_pos *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* Input row v renamed and sorted: ids[d] (of the input's width) and, for edge features, pos[d]
 * (each sorted id's position in the input row). key: [d] scratch. */
static void rename_row(const ro *r, int64_t v, void *ids, int64_t *pos, id_pos *key)
{
	const int64_t lo = r->g->indptr[v], d = r->g->indptr[v + 1] - lo;
	for (int64_t q = 0; q < d; q++)
		key[q] = (id_pos){r->inv[burrow_csr_index(r->g, lo + q)], q};
	if (r->g->index_width == 4) { /* ids < 2^31, positions < 2^32: one 64-bit key, radix-friendly */
		int64_t *k = (int64_t *)key;
		for (int64_t q = 0; q < d; q++)
			k[q] = key[q].id << 32 | key[q].pos;
		bw_sort_i64(k, d);
		for (int64_t q = 0; q < d; q++) {
			((int32_t *)ids)[q] = (int32_t)(k[q] >> 32);
			pos[q] = k[q] & 0xffffffff;
		}
		return;
	}
	qsort(key, (size_t)d, sizeof *key, cmp_id_pos);
	for (int64_t q = 0; q < d; q++) {
		((int64_t *)ids)[q] = key[q].id;
		pos[q] = key[q].pos;
	}
}

/* The new indptr and the largest degree. */
static int64_t *new_indptr(const ro *r, int64_t *maxdeg)
{
	int64_t *ptr = bw_malloc((size_t)(r->n + 1) * sizeof *ptr);
	if (!ptr)
		return NULL;
	ptr[0] = 0;
	*maxdeg = 0;
	for (int64_t i = 0; i < r->n; i++) {
		const int64_t v = r->perm[i], d = r->g->indptr[v + 1] - r->g->indptr[v];
		ptr[i + 1] = ptr[i] + d;
		*maxdeg = BW_MAX(*maxdeg, d);
	}
	return ptr;
}

/* indptr.npy and indices.npy in the new order, each row renamed and sorted, edge features after. */
static int write_graph(ro *r)
{
	const int width = r->g->index_width;
	const bool ef_on = r->in->edge_feat_dim > 0;
	int64_t maxdeg, fill = 0;
	int64_t *ptr = new_indptr(r, &maxdeg), *pos = NULL;
	id_pos *key = NULL;
	char *row = NULL, *buf = NULL;
	ef_io ef = {.fd = -1};
	int st = BURROW_E_NOMEM;
	if (!ptr || !(key = bw_malloc((size_t)BW_MAX(maxdeg, 1) * sizeof *key)) ||
	    !(pos = bw_malloc((size_t)BW_MAX(maxdeg, 1) * sizeof *pos)) ||
	    !(row = bw_malloc((size_t)BW_MAX(maxdeg, 1) * (size_t)width)) || !(buf = bw_malloc((size_t)IDBUF * (size_t)width)))
		goto out;
	if (width == 4 && maxdeg > UINT32_MAX) {
		st = bw_err(BURROW_E_UNSUPPORTED, "reorder: a row of %lld entries (rows below 2^32 entries)", (long long)maxdeg);
		goto out;
	}
	if ((ef_on && (st = ef_open(&ef, r, maxdeg))) || (st = bw_writer_graph_begin(r->w, ptr, r->n, r->in->symmetric)) ||
	    (ef_on && (st = bw_writer_edge_features_begin(r->w, r->in->edge_feat_dim, r->in->edge_feat_dtype))))
		goto out;
	for (int64_t i = 0; i < r->n; i++) {
		const int64_t v = r->perm[i], lo = r->g->indptr[v], d = r->g->indptr[v + 1] - lo;
		rename_row(r, v, row, pos, key);
		if (ef_on && (st = ef_row(&ef, r->w, lo, pos, d)))
			goto out;
		for (int64_t q = 0; q < d;) {
			const int64_t take = BW_MIN(d - q, IDBUF - fill);
			memcpy(buf + (size_t)fill * width, row + (size_t)q * width, (size_t)take * width);
			fill += take;
			q += take;
			if (fill == IDBUF && (st = bw_writer_graph_append(r->w, buf, fill)))
				goto out;
			fill = fill == IDBUF ? 0 : fill;
		}
		if ((i & 65535) == 65535)
			progress(r, "graph", (uint64_t)i + 1, (uint64_t)r->n);
	}
	if ((st = bw_writer_graph_append(r->w, buf, fill)) || (st = bw_writer_graph_end(r->w)))
		goto out;
	if (ef_on && ((st = bw_writer_edge_features_append(r->w, ef.out, ef.fill)) ||
		      (st = bw_writer_edge_features_end(r->w))))
		goto out;
	progress(r, "graph", (uint64_t)r->n, (uint64_t)r->n);
out:
	ef_close(&ef);
	bw_free(ptr);
	bw_free(key);
	bw_free(pos);
	bw_free(row);
	bw_free(buf);
	return st;
}

/* ---------------------------------------------------------------- features */

/* The rows of new ids [a, a + c) into out: their input rows sorted, read in runs (rows closer
 * than FEAT_GAP_BYTES share a read of at most `chunk` rows). */
static int gather_rows(const ro *r, int fd, const char *path, int64_t off, size_t rowb, int64_t a, int64_t c,
		       int64_t chunk, id_pos *pr, char *rbuf, char *out)
{
	const int64_t gap = BW_MAX(1, FEAT_GAP_BYTES / (int64_t)rowb);
	for (int64_t q = 0; q < c; q++)
		pr[q] = (id_pos){r->perm[a + q], q};
	qsort(pr, (size_t)c, sizeof *pr, cmp_id_pos);
	for (int64_t q = 0; q < c;) {
		int64_t e = q + 1;
		while (e < c && pr[e].id - pr[e - 1].id <= gap && pr[e].id - pr[q].id < chunk)
			e++;
		const int64_t first = pr[q].id, span = pr[e - 1].id - first + 1;
		int st = bw_pread_all(fd, rbuf, (size_t)span * rowb, off + first * (int64_t)rowb, path);
		if (st)
			return st;
		for (int64_t x = q; x < e; x++)
			memcpy(out + (size_t)pr[x].pos * rowb, rbuf + (size_t)(pr[x].id - first) * rowb, rowb);
		q = e;
	}
	return 0;
}

/* features.npy: chunks of new rows, each gathered from the input and written in order. */
static int write_features(const ro *r)
{
	const char *path = burrow_dataset_features_path(r->ds);
	const int64_t off = burrow_dataset_features_offset(r->ds), n = r->n;
	const size_t rowb = (size_t)r->in->feat_dim * burrow_dtype_size(r->in->feat_dtype);
	const int64_t chunk = BW_MAX(1, (int64_t)(r->chunk_bytes / rowb));
	char *out = bw_malloc((size_t)chunk * rowb), *rbuf = bw_malloc((size_t)chunk * rowb);
	id_pos *pr = bw_malloc((size_t)chunk * sizeof *pr);
	int st = BURROW_E_NOMEM, fd = -1;
	if (!out || !rbuf || !pr)
		goto out;
	if ((st = bw_open_input(path, 0, &fd, NULL)) ||
	    (st = burrow_writer_features_begin(r->w, n, r->in->feat_dim, r->in->feat_dtype)))
		goto out;
	for (int64_t a = 0; a < n; a += chunk) {
		const int64_t c = BW_MIN(chunk, n - a);
		if ((st = gather_rows(r, fd, path, off, rowb, a, c, chunk, pr, rbuf, out)) ||
		    (st = burrow_writer_features_append(r->w, out, c)))
			goto out;
		progress(r, "features", (uint64_t)(a + c), (uint64_t)n);
	}
	st = burrow_writer_features_end(r->w);
out:
	if (fd >= 0)
		close(fd);
	bw_free(out);
	bw_free(rbuf);
	bw_free(pr);
	return st;
}

/* ---------------------------------------------------------------- labels and splits */

static int write_labels(const ro *r)
{
	const int32_t *lab = burrow_dataset_labels(r->ds);
	const int8_t *ml = burrow_dataset_multilabels(r->ds);
	const int64_t n = r->n, t = r->in->num_tasks;
	int st = 0;
	if (ml && t > 0) {
		int8_t *y = bw_malloc((size_t)BW_MAX(n * t, 1));
		if (!y)
			return BURROW_E_NOMEM;
		for (int64_t i = 0; i < n; i++)
			memcpy(y + i * t, ml + r->perm[i] * t, (size_t)t);
		st = burrow_writer_put_multilabels(r->w, y, n, r->in->num_tasks);
		bw_free(y);
	} else if (lab && r->in->num_classes > 0) {
		int32_t *y = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *y);
		if (!y)
			return BURROW_E_NOMEM;
		for (int64_t i = 0; i < n; i++)
			y[i] = lab[r->perm[i]];
		st = burrow_writer_put_labels(r->w, y, n, r->in->num_classes);
		bw_free(y);
	}
	return st;
}

/* Split s of the selected split, renamed and sorted, into *out (bw_free it; NULL when empty). */
static int renamed_split(const ro *r, int s, int64_t **out, int64_t *cnt)
{
	const int64_t *ids = burrow_dataset_split(r->ds, s, cnt);
	*out = NULL;
	if (!ids || !*cnt)
		return 0;
	int64_t *x = *out = bw_malloc((size_t)*cnt * sizeof *x);
	if (!x)
		return BURROW_E_NOMEM;
	for (int64_t q = 0; q < *cnt; q++)
		x[q] = r->inv[ids[q]];
	bw_sort_i64(x, *cnt);
	return 0;
}

static int write_default_splits(const ro *r)
{
	int st = 0;
	for (int s = 0; s < 3 && !st; s++) {
		int64_t *x, cnt;
		if (!(st = renamed_split(r, s, &x, &cnt)) && x)
			st = burrow_writer_put_split(r->w, s, x, cnt);
		bw_free(x);
	}
	return st;
}

/* split/NAME/{train,valid,test}.npy of one named split (files only for non-empty parts), counts. */
static int write_named(ro *r, const char *name, cJSON *counts)
{
	int st = burrow_dataset_select_split(r->ds, name);
	for (int s = 0; s < 3 && !st; s++) {
		int64_t *x = NULL, cnt = 0;
		char rel[BURROW_MAX_NAME + 32], *path = NULL;
		snprintf(rel, sizeof rel, "split/%s/%s.npy", name, bw_split_names[s]);
		if (!(st = renamed_split(r, s, &x, &cnt)) && x && !(st = bw_writer_file(r->w, rel, &path)))
			st = bw_writer_rebase(r->w, bw_npy_save(path, BURROW_DTYPE_I64, 1, &cnt, x, BW_NPY_ALIGN));
		if (!st && !cJSON_AddNumberToObject(counts, bw_split_names[s], (double)cnt))
			st = BURROW_E_NOMEM;
		bw_free(x);
		bw_free(path);
	}
	return st;
}

/* Every named split of meta.json's "named_splits", then the key itself. */
static int write_named_splits(ro *r)
{
	const cJSON *all = cJSON_GetObjectItemCaseSensitive(r->meta, "named_splits");
	if (!cJSON_IsObject(all) || !all->child)
		return 0;
	cJSON *out = cJSON_CreateObject();
	int st = out ? 0 : BURROW_E_NOMEM;
	for (const cJSON *x = all->child; x && !st; x = x->next) {
		cJSON *counts = cJSON_CreateObject();
		if (!counts || !cJSON_AddItemToObject(out, x->string, counts)) {
			cJSON_Delete(counts);
			st = BURROW_E_NOMEM;
			break;
		}
		st = write_named(r, x->string, counts);
	}
	if (st) {
		cJSON_Delete(out);
		return st;
	}
	return bw_writer_meta_add(r->w, "named_splits", out);
}

/* ---------------------------------------------------------------- edge splits */

/* edge_split/<split>_<suffix>.npy: rows kept in place; int64 entries renamed when ids. */
static int put_es_array(const ro *r, const char *split, const char *suffix, const void *data, burrow_dtype t,
			int64_t rows, int64_t cols, bool ids)
{
	char rel[64], *path = NULL, *buf = NULL;
	snprintf(rel, sizeof rel, "edge_split/%s_%s.npy", split, suffix);
	const int64_t width = cols ? cols : 1, shape[2] = {rows, cols};
	const size_t rowb = (size_t)width * burrow_dtype_size(t);
	const int64_t chunk = BW_MAX(1, (int64_t)(((size_t)1 << 20) / rowb));
	bw_npy_writer nw;
	bool open_w = false;
	int st = bw_writer_file(r->w, rel, &path);
	if (!st && !(buf = bw_malloc((size_t)chunk * rowb)))
		st = BURROW_E_NOMEM;
	if (!st && !(st = bw_npy_writer_open(&nw, path, t, cols ? 2 : 1, shape, BW_NPY_ALIGN)))
		open_w = true;
	for (int64_t a = 0; !st && a < rows; a += chunk) {
		const int64_t c = BW_MIN(chunk, rows - a);
		memcpy(buf, (const char *)data + (size_t)a * rowb, (size_t)c * rowb);
		for (int64_t q = 0; ids && q < c * width; q++)
			((int64_t *)buf)[q] = r->inv[((int64_t *)buf)[q]];
		st = bw_npy_writer_append(&nw, buf, (size_t)c * rowb);
	}
	if (!st && open_w) {
		open_w = false;
		st = bw_npy_writer_commit(&nw);
	}
	if (open_w)
		bw_npy_writer_abort(&nw);
	bw_free(buf);
	bw_free(path);
	return bw_writer_rebase(r->w, st);
}

/* edge_split/ renamed, and meta.json's "edge_split" as the input's (the counts do not change). */
static int write_edge_split(const ro *r)
{
	burrow_edge_split e[3];
	bool weight = false, year = false;
	int st = 0;
	for (int s = 0; s < 3 && !st; s++)
		if (!(st = burrow_dataset_edge_split(r->ds, s, &e[s]))) {
			weight |= e[s].weight != NULL;
			year |= e[s].year != NULL;
		}
	for (int s = 0; s < 3 && !st; s++) {
		const burrow_edge_split *x = &e[s];
		const char *sn = bw_split_names[s];
		st = put_es_array(r, sn, "pos", x->pos, BURROW_DTYPE_I64, x->num_pos, 2, true);
		if (!st && s > 0 && x->neg == BURROW_EDGE_NEG_PER_SOURCE)
			st = put_es_array(r, sn, "neg_dst", x->neg_dst, BURROW_DTYPE_I64, x->num_pos, x->k, true);
		else if (!st && s > 0 && x->neg == BURROW_EDGE_NEG_PAIRS)
			st = put_es_array(r, sn, "neg", x->neg_pairs, BURROW_DTYPE_I64, x->num_neg, 2, true);
		if (!st && weight)
			st = put_es_array(r, sn, "weight", x->weight, BURROW_DTYPE_F32, x->num_pos, 0, false);
		if (!st && year)
			st = put_es_array(r, sn, "year", x->year, BURROW_DTYPE_I32, x->num_pos, 0, false);
	}
	char *dir = NULL;
	if (!st && !(st = bw_writer_file(r->w, "edge_split/.", &dir)))
		st = bw_writer_rebase(r->w, bw_fsync_dir(dir));
	bw_free(dir);
	cJSON *j = st ? NULL : cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(r->meta, "edge_split"), true);
	if (!st && !j)
		st = BURROW_E_NOMEM;
	return st ? st : bw_writer_meta_add(r->w, "edge_split", j);
}

/* ---------------------------------------------------------------- orig_ids */

/* orig_ids.npy: the input's own (mapped, int64 [N]) composed with perm, or perm itself. */
static int orig_npy(const ro *r, const char *in_path, const char *out_path)
{
	bw_npy h;
	bw_npy_map m = {0};
	const int64_t *in = NULL;
	int st = 0;
	if (in_path && !(st = bw_npy_mmap(in_path, &h, &m))) {
		in = m.data;
		if (h.dtype != BURROW_DTYPE_I64 || bw_npy_count(&h) != r->n || h.ndim != 1)
			st = bw_err(BURROW_E_FORMAT, "%s: %s of %lld entries, expected int64 [%lld] (meta.json's num_nodes)",
				    in_path, burrow_dtype_name(h.dtype), (long long)bw_npy_count(&h), (long long)r->n);
	}
	int64_t buf[4096];
	bw_npy_writer nw;
	if (st || (st = bw_npy_writer_open(&nw, out_path, BURROW_DTYPE_I64, 1, &r->n, BW_NPY_ALIGN)))
		goto out;
	for (int64_t a = 0; !st && a < r->n; a += 4096) {
		const int64_t c = BW_MIN(4096, r->n - a);
		for (int64_t q = 0; q < c; q++)
			buf[q] = in ? in[r->perm[a + q]] : r->perm[a + q];
		st = bw_npy_writer_append(&nw, buf, (size_t)c * sizeof *buf);
	}
	if (st)
		bw_npy_writer_abort(&nw);
	else
		st = bw_npy_writer_commit(&nw);
out:
	if (in_path && m.base)
		bw_npy_unmap(&m);
	return st;
}

/* orig_ids.txt: the input's lines (one id a line, N of them) in the new order. */
static int orig_txt(const ro *r, const char *in_path, const char *out_path)
{
	char *text = NULL;
	int64_t *line = bw_malloc((size_t)(r->n + 1) * sizeof *line), k = 0;
	bw_atomic_file f = {.fd = -1};
	int st = line ? bw_read_text(in_path, SIZE_MAX / 2, &text) : BURROW_E_NOMEM;
	for (char *p = text, *nl; !st && (nl = strchr(p, '\n')); p = nl + 1) {
		if (k == r->n) {
			st = bw_err(BURROW_E_FORMAT, "%s: more than %lld lines (meta.json's num_nodes)", in_path, (long long)r->n);
			break;
		}
		line[k++] = p - text;
	}
	if (!st && k != r->n)
		st = bw_err(BURROW_E_FORMAT, "%s: %lld lines, expected %lld (meta.json's num_nodes)", in_path, (long long)k,
			    (long long)r->n);
	if (st || (st = bw_atomic_open(&f, out_path)))
		goto out;
	for (int64_t i = 0; !st && i < r->n; i++) {
		const char *s = text + line[r->perm[i]];
		st = bw_write_all(f.fd, s, (size_t)(strchr(s, '\n') - s) + 1, out_path);
	}
	st = st ? st : bw_atomic_commit(&f);
out:
	bw_atomic_abort(&f);
	bw_free(line);
	bw_free(text);
	return st;
}

/* orig_ids.npy (or .txt when the input's are text) back to the input's ids, and meta.json's key. */
static int write_orig_ids(const ro *r)
{
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(r->meta, "orig_ids");
	const char *rel = cJSON_IsString(k) ? k->valuestring : NULL;
	const bool text = rel && !strcmp(rel, "orig_ids.txt");
	if (rel && !text && strcmp(rel, "orig_ids.npy"))
		return bw_err(BURROW_E_FORMAT, "%s/meta.json: \"orig_ids\" is '%s', expected orig_ids.npy or orig_ids.txt",
			      r->in_dir, rel);
	const char *out_rel = text ? "orig_ids.txt" : "orig_ids.npy";
	char *in_path = rel ? bw_path_join(r->in_dir, rel) : NULL, *out_path = NULL;
	int st = rel && !in_path ? BURROW_E_NOMEM : bw_writer_file(r->w, out_rel, &out_path);
	if (!st)
		st = bw_writer_rebase(r->w, text ? orig_txt(r, in_path, out_path) : orig_npy(r, in_path, out_path));
	bw_free(in_path);
	bw_free(out_path);
	cJSON *j = st ? NULL : cJSON_CreateString(out_rel);
	if (!st && !j)
		st = BURROW_E_NOMEM;
	return st ? st : bw_writer_meta_add(r->w, "orig_ids", j);
}

/* ---------------------------------------------------------------- the run */

/* meta.json's "source": where the reordered dataset came from, and the input's own source. */
static int set_source(const ro *r)
{
	cJSON *s = cJSON_CreateObject(), *x = s ? cJSON_AddObjectToObject(s, "reorder") : NULL;
	cJSON *src = cJSON_Parse(r->in->source_json);
	int st = x && src ? 0 : BURROW_E_NOMEM;
	if (!st && ((r->named && !cJSON_AddStringToObject(x, "dataset", r->named)) ||
		    !cJSON_AddStringToObject(x, "order", r->o->perm ? "given" : burrow_order_name(r->o->order)) ||
		    !cJSON_AddItemToObject(s, "input_source", src)))
		st = BURROW_E_NOMEM;
	if (!st)
		src = NULL;
	char *text = st ? NULL : cJSON_PrintUnformatted(s);
	if (!st && !text)
		st = BURROW_E_NOMEM;
	if (!st)
		st = burrow_writer_set_source(r->w, text);
	cJSON_free(text);
	cJSON_Delete(src);
	cJSON_Delete(s);
	return st;
}

/* What must be held whole (the id maps, the new indptr, labels, the largest split) against the
 * budget; the rest goes to the feature chunks. */
static int plan_memory(ro *r)
{
	const size_t mem = r->o->mem_bytes ? r->o->mem_bytes : bw_half_memory();
	int64_t split = 0;
	for (int s = 0; s < 3; s++) {
		int64_t c;
		burrow_dataset_split(r->ds, s, &c);
		split = BW_MAX(split, c);
	}
	const double labels = r->in->num_tasks > 0 ? (double)r->in->num_tasks : r->in->num_classes > 0 ? 4.0 : 0.0;
	const double fixed = (double)r->n * (24.0 + labels) + 8.0 * (double)split;
	if (fixed > (double)mem)
		return bw_err(BURROW_E_NOMEM, "reorder: the id maps, labels and splits of %s take %.0f MiB, more than the "
			      "memory budget of %.0f MiB (--mem)", r->in_dir, fixed / 1048576.0, (double)mem / 1048576.0);
	r->chunk_bytes = BW_MIN(MAX_CHUNK_BYTES, (size_t)(((double)mem - fixed) / 2.5));
	return 0;
}

/* The input: a version-1 dataset, its meta.json parsed. */
static int open_input(ro *r)
{
	int st = burrow_dataset_open(&r->ds, r->in_dir);
	if (st)
		return st;
	r->in = burrow_dataset_get_info(r->ds);
	r->g = burrow_dataset_graph(r->ds);
	r->n = r->in->num_nodes;
	if (burrow_dataset_hetero(r->ds) || !r->g)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: a typed dataset (format version 2); reorder reads homogeneous "
			      "(version 1) datasets", r->in_dir);
	char *path = bw_path_join(r->in_dir, "meta.json"), *text = NULL;
	st = path ? bw_read_text(path, 16 << 20, &text) : BURROW_E_NOMEM;
	if (!st && !(r->meta = cJSON_Parse(text)))
		st = bw_err(BURROW_E_FORMAT, "%s: not JSON", path);
	bw_free(path);
	bw_free(text);
	return st;
}

/* Every part of the dataset in the new order, into the open writer. */
static int write_all(ro *r)
{
	int st;
	if ((st = write_graph(r)) || (r->in->feat_dim > 0 && (st = write_features(r))) || (st = write_labels(r)) ||
	    (st = write_default_splits(r)) || (st = write_named_splits(r)))
		return st;
	if (burrow_dataset_has_edge_split(r->ds) && (st = write_edge_split(r)))
		return st;
	return (st = write_orig_ids(r)) ? st : set_source(r);
}

/* The run: in_dir reordered into out_dir under the options d. */
static int reorder_run(const char *in_dir, const char *out_dir, const burrow_reorder_opts *d, const char *named)
{
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = d->overwrite;
	ro r = {.in_dir = in_dir, .named = named, .o = d};
	int st;
	if ((st = bw_check_replaceable(out_dir, in_dir)) || (st = open_input(&r)) || (st = plan_memory(&r)))
		goto out;
	progress(&r, "order", 0, 1);
	if ((st = make_maps(&r)))
		goto out;
	progress(&r, "order", 1, 1);
	if ((st = burrow_writer_open(&r.w, out_dir, r.in->name ? r.in->name : "", &wo)) || (st = write_all(&r)))
		goto out;
	st = burrow_writer_commit(r.w);
	r.w = NULL;
out:
	burrow_writer_abort(r.w);
	cJSON_Delete(r.meta);
	burrow_dataset_close(r.ds);
	bw_free(r.perm);
	bw_free(r.inv);
	return st;
}

int burrow_reorder(const char *in_dir, const char *out_dir, const burrow_reorder_opts *opts)
{
	burrow_reorder_opts d;
	burrow_reorder_defaults(&d);
	if (opts && opts->size && opts->size < sizeof d)
		memcpy(&d, opts, opts->size);
	else if (opts)
		d = *opts;
	if (!in_dir || !out_dir)
		return bw_err(BURROW_E_INVAL, "reorder: no input or no output directory");
	return reorder_run(in_dir, out_dir, &d, in_dir);
}

/* ---------------------------------------------------------------- --order at gen, prep, import */

/* A fresh private folder beside out (<parent>/.<base>.order-XXXXXX), registered as a temporary;
 * *inner is <scratch>/<base>, where the writer goes (the same base name, so the dataset's
 * default name is out's). */
static int make_scratch(const char *out, char **scratch, char **inner, int *reg)
{
	char *trim = bw_strdup(out), *parent = NULL;
	for (size_t l = trim ? strlen(trim) : 0; l > 1 && trim[l - 1] == '/'; l--)
		trim[l - 1] = '\0';
	const char *slash = trim ? strrchr(trim, '/') : NULL, *base = slash ? slash + 1 : trim;
	int st = trim && (parent = bw_dirname(trim)) ? 0 : BURROW_E_NOMEM;
	if (!st && (!*base || !strcmp(base, ".") || !strcmp(base, "..")))
		st = bw_err(BURROW_E_INVAL, "%s: not a directory name --order can write beside", out);
	if (!st && (st = bw_mkdir_p(parent, 0755)) == 0 && !(*scratch = bw_malloc(strlen(parent) + strlen(base) + 32)))
		st = BURROW_E_NOMEM;
	if (!st) {
		sprintf(*scratch, "%s/.%s.order-XXXXXX", parent, base);
		*reg = bw_tmp_add(*scratch); /* registered before it exists: a kill between leaves nothing */
		if (!mkdtemp(*scratch))
			st = bw_err(BURROW_E_IO, "%s: cannot create a scratch folder: %s", parent, strerror(errno));
	}
	if (!st && !(*inner = bw_path_join(*scratch, base)))
		st = BURROW_E_NOMEM;
	bw_free(parent);
	bw_free(trim);
	return st;
}

int bw_write_ordered(const char *out, const bw_order_job *j)
{
	char *scratch = NULL, *inner = NULL;
	int reg = -1, st;
	burrow_dataset *ds = NULL;
	if (j->order < 0 || j->order > BURROW_ORDER_RANDOM)
		return bw_err(BURROW_E_INVAL, "%s: --order %d is not an order (bfs, degree, rcm or random)", out, j->order);
	if (!j->overwrite && access(out, F_OK) == 0)
		return bw_err(BURROW_E_EXISTS, "%s: already exists", out);
	if ((st = bw_check_replaceable(out, NULL)) || (st = make_scratch(out, &scratch, &inner, &reg)) ||
	    (st = j->write(j->ctx, inner)) || (st = burrow_dataset_open(&ds, inner)))
		goto out;
	if (burrow_dataset_hetero(ds)) {
		st = bw_err(BURROW_E_UNSUPPORTED, "%s: a typed dataset (format version 2); --order renumbers datasets of one "
			    "node type", out);
		goto out;
	}
	burrow_dataset_close(ds);
	ds = NULL;
	burrow_reorder_opts ro;
	burrow_reorder_defaults(&ro);
	ro.order = j->order;
	ro.seed = j->seed;
	ro.mem_bytes = j->mem_bytes;
	ro.overwrite = j->overwrite;
	ro.progress = j->progress;
	ro.progress_user = j->progress_user;
	st = reorder_run(inner, out, &ro, NULL);
out:
	burrow_dataset_close(ds);
	if (scratch && access(scratch, F_OK) == 0)
		bw_rm_rf(scratch);
	bw_tmp_drop(reg);
	bw_free(scratch);
	bw_free(inner);
	return st;
}
