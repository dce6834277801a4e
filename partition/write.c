/* write.c: the parts directory: one dataset directory per part in local ids (owned nodes, then
 * the halo grouped by owner), plus orig_ids, halo and send arrays. One part at a time, its
 * rows streamed from the input's mapped CSR in ascending input id, which is new-id order. */
#define _GNU_SOURCE
#include "partition_internal.h"
#include "../graph/dataset_internal.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IDBUF ((int64_t)1 << 18) /* ids per append to indices.npy */
#define FEAT_CHUNK_BYTES ((size_t)4 << 20)
#define FEAT_GAP_BYTES ((int64_t)64 << 10) /* read across a gap rather than issue another read */

/* One part being written. */
typedef struct pw_part {
	int i;
	int64_t first, n_own, n_halo;
	const int32_t *own;     /* [n_own] input ids in new-id order (a slice of orig_of_new) */
	int64_t *halo;          /* [n_halo] new global ids, ascending */
	int64_t *halo_off;      /* [k+1] */
	const uint64_t *bits;   /* the halo as a bitmap over new ids (set while the part is written) */
	int64_t *rank;          /* [words] halo ids below each word of bits: a halo id's index is
				   rank[w] + the bits below it in word w, no search */
} pw_part;

/* Set the bit of input node v's new id when another part owns it. */
static inline void mark_remote(const bw_relabel *r, const pw_part *p, uint64_t *bits, int64_t v)
{
	if (r->part[v] != p->i)
		bw_bit_set(bits, r->new_of_orig[v]);
}

/* A link dataset's split edges name nodes the graph does not join to the part (valid and test
 * edges are not in the graph; negatives are anywhere): the remote ends of the part's split
 * rows (positives whose source it owns with their per-source negatives, pairs whose first
 * node it owns) join its halo, so that every split row has local ids. */
static void mark_split_ends(const burrow_dataset *ds, const bw_relabel *r, const pw_part *p, uint64_t *bits)
{
	burrow_edge_split e;
	for (int s = 0; s < 3 && burrow_dataset_has_edge_split(ds); s++) {
		if (burrow_dataset_edge_split(ds, s, &e))
			continue;
		for (int64_t q = 0; q < e.num_pos; q++) {
			if (r->part[e.pos[2 * q]] != p->i)
				continue;
			mark_remote(r, p, bits, e.pos[2 * q + 1]);
			for (int64_t c = 0; e.neg_dst && c < e.k; c++)
				mark_remote(r, p, bits, e.neg_dst[q * e.k + c]);
		}
		for (int64_t q = 0; e.neg_pairs && q < e.num_neg; q++)
			if (r->part[e.neg_pairs[2 * q]] == p->i)
				mark_remote(r, p, bits, e.neg_pairs[2 * q + 1]);
	}
}

/* The halo: remote neighbors of the part's rows, as a bitmap over new ids, read out in
 * ascending order (which groups them by owner, since owners hold ascending id ranges), with
 * each word's rank. The bits stay set for write_rows; clear_halo clears them. */
static int find_halo(const burrow_dataset *ds, const bw_pgraph *g, const bw_relabel *r, pw_part *p, uint64_t *bits)
{
	bw_stream s;
	bw_stream_begin(&s, g);
	for (int64_t l = 0; l < p->n_own; l++) {
		const int64_t v = p->own[l];
		for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) {
			int64_t u = bw_pg_nbr(g, j);
			if (r->part[u] != p->i)
				bw_bit_set(bits, r->new_of_orig[u]);
		}
		if ((l & 4095) == 4095)
			bw_stream_release(&s, v + 1);
	}
	mark_split_ends(ds, r, p, bits);
	int64_t h = 0;
	const int64_t words = (r->n + 63) / 64;
	for (int64_t w = 0; w < words; w++)
		h += __builtin_popcountll(bits[w]);
	p->n_halo = h;
	p->halo = bw_malloc((size_t)(h ? h : 1) * sizeof *p->halo);
	p->halo_off = bw_malloc((size_t)(r->k + 1) * sizeof *p->halo_off);
	if (!p->halo || !p->halo_off) {
		p->n_halo = 0; /* nothing read out for clear_halo to walk; the run ends here */
		return BURROW_E_NOMEM;
	}
	int64_t q = 0;
	for (int64_t w = 0; w < words; w++) {
		uint64_t x = bits[w];
		p->rank[w] = q;
		while (x) {
			p->halo[q++] = w * 64 + __builtin_ctzll(x);
			x &= x - 1;
		}
	}
	p->bits = bits;
	for (int j = 0; j <= r->k; j++)
		p->halo_off[j] = bw_lower_bound_i64(p->halo, h, r->offsets[j]);
	return 0;
}

/* The index in p->halo of the halo node of new id gid. */
static inline int64_t halo_index(const pw_part *p, int64_t gid)
{
	const int64_t w = gid >> 6;
	return p->rank[w] + __builtin_popcountll(p->bits[w] & (((uint64_t)1 << (gid & 63)) - 1));
}

/* Empty the bitmap find_halo filled, for the next part. */
static void clear_halo(uint64_t *bits, const pw_part *p)
{
	for (int64_t q = 0; q < p->n_halo; q++)
		bits[p->halo[q] >> 6] = 0;
}

/* The input's edge features on their way into a part: rows of edge_features.npy read a span
 * of the part's CSR rows at a time (neighboring rows in one read), and the part's rows, in its
 * CSR order, gathered for the writer. */
typedef struct ef_io {
	int fd;
	const char *path;
	int64_t off;           /* byte offset of entry 0 in the file */
	size_t rowb;           /* bytes per entry */
	char *in;              /* [cap] entries [lo, hi) of the input */
	int64_t cap, lo, hi;
	char *out;             /* [OUT] the part's entries waiting for the writer */
	int64_t fill;
	int64_t dim;           /* the input's edge_feat_dim and dtype */
	burrow_dtype dtype;
} ef_io;

#define EF_OUT ((int64_t)1 << 12)

/* The input's edge_features.npy opened for reading, the buffers made (ef_close undoes it). */
static int ef_open(ef_io *e, const burrow_dataset *ds)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	*e = (ef_io){.fd = -1, .path = burrow_dataset_edge_features_path(ds), .off = burrow_dataset_edge_features_offset(ds),
		     .rowb = (size_t)in->edge_feat_dim * burrow_dtype_size(in->edge_feat_dtype),
		     .dim = in->edge_feat_dim, .dtype = in->edge_feat_dtype};
	e->cap = BW_MAX(1, (int64_t)(FEAT_CHUNK_BYTES / e->rowb));
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

/* Entries [lo, lo + d) of the input (owned row l) into e->in: a read from lo over the part's
 * next rows while the gaps between them are small and the span fits. */
static int ef_fetch(ef_io *e, const bw_pgraph *g, const pw_part *p, int64_t l, int64_t lo, int64_t d)
{
	if (lo >= e->lo && lo + d <= e->hi)
		return 0;
	if (d > e->cap) { /* one row larger than the chunk */
		char *b = bw_realloc(e->in, (size_t)d * e->rowb);
		if (!b)
			return BURROW_E_NOMEM;
		e->in = b;
		e->cap = d;
	}
	const int64_t gap = BW_MAX(1, FEAT_GAP_BYTES / (int64_t)e->rowb);
	int64_t end = lo + d;
	for (int64_t x = l + 1; x < p->n_own; x++) {
		const int64_t a = g->indptr[p->own[x]], b = g->indptr[p->own[x] + 1];
		if (a - end > gap || b - lo > e->cap)
			break;
		end = BW_MAX(end, b);
	}
	e->lo = lo;
	e->hi = end;
	return bw_pread_all(e->fd, e->in, (size_t)(end - lo) * e->rowb, e->off + lo * (int64_t)e->rowb, e->path);
}

/* Row l's entries, in the order of its sorted keys ((local id << 32) | position in the row),
 * appended to the writer's edge features. */
static int ef_row(ef_io *e, burrow_writer *w, const bw_pgraph *g, const pw_part *p, int64_t l, const int64_t *key,
		  int64_t d)
{
	const int64_t lo = g->indptr[p->own[l]];
	int st = ef_fetch(e, g, p, l, lo, d);
	for (int64_t q = 0; !st && q < d; q++) {
		const int64_t j = lo + (key[q] & 0xffffffff);
		memcpy(e->out + (size_t)e->fill * e->rowb, e->in + (size_t)(j - e->lo) * e->rowb, e->rowb);
		if (++e->fill == EF_OUT) {
			st = bw_writer_edge_features_append(w, e->out, e->fill);
			e->fill = 0;
		}
	}
	return st;
}

/* Row l's ids into row[d], sorted; with edge features (e), their rows follow the sort. */
static int sort_row(const pw_part *p, ef_io *e, burrow_writer *w, const bw_pgraph *g, int64_t l, int32_t *row,
		    int64_t *key, int64_t d)
{
	if (!e) {
		bw_sort_i32(row, d);
		return 0;
	}
	for (int64_t q = 0; q < d; q++)
		key[q] = ((int64_t)row[q] << 32) | q;
	bw_sort_i64(key, d);
	for (int64_t q = 0; q < d; q++)
		row[q] = (int32_t)(key[q] >> 32);
	return ef_row(e, w, g, p, l, key, d);
}

/* The part's rows in local ids, streamed into the writer; with edge features (e != NULL),
 * each entry's row of edge_features.npy follows it (halo edges keep theirs). */
static int write_rows(burrow_writer *w, const bw_pgraph *g, const bw_relabel *r, const pw_part *p, ef_io *e,
		      int64_t *edges)
{
	const int64_t nl = p->n_own + p->n_halo;
	int64_t *ptr = bw_malloc((size_t)(nl + 1) * sizeof *ptr), *key = NULL;
	int32_t *buf = NULL, *row = NULL;
	int64_t maxdeg = 0, fill = 0;
	int st = BURROW_E_NOMEM;
	if (!ptr)
		return st;
	ptr[0] = 0;
	for (int64_t l = 0; l < p->n_own; l++) {
		const int64_t v = p->own[l], d = g->indptr[v + 1] - g->indptr[v];
		ptr[l + 1] = ptr[l] + d;
		maxdeg = BW_MAX(maxdeg, d);
	}
	for (int64_t l = p->n_own; l < nl; l++)
		ptr[l + 1] = ptr[l];
	*edges = ptr[nl];
	buf = bw_malloc((size_t)IDBUF * sizeof *buf);
	row = bw_malloc((size_t)(maxdeg ? maxdeg : 1) * sizeof *row);
	key = e ? bw_malloc((size_t)(maxdeg ? maxdeg : 1) * sizeof *key) : NULL;
	if (!buf || !row || (e && !key))
		goto out;
	if (e && maxdeg > UINT32_MAX) {
		st = bw_err(BURROW_E_UNSUPPORTED, "partition: a row of %lld entries: edge features are carried for rows "
			    "below 2^32 entries", (long long)maxdeg);
		goto out;
	}
	if ((st = bw_writer_graph_begin(w, ptr, nl, false)) ||
	    (e && (st = bw_writer_edge_features_begin(w, e->dim, e->dtype))))
		goto out;
	bw_stream s;
	bw_stream_begin(&s, g);
	for (int64_t l = 0; l < p->n_own; l++) {
		const int64_t v = p->own[l], lo = g->indptr[v], d = g->indptr[v + 1] - lo;
		for (int64_t q = 0; q < d; q++) {
			if (q + PREFETCH < d) { /* both are cache misses on a large graph */
				const int64_t ahead = bw_pg_nbr(g, lo + q + PREFETCH);
				__builtin_prefetch(&r->new_of_orig[ahead]);
				__builtin_prefetch(&r->part[ahead]);
			}
			int64_t u = bw_pg_nbr(g, lo + q), gid = r->new_of_orig[u];
			row[q] = (int32_t)(r->part[u] == p->i ? gid - p->first : p->n_own + halo_index(p, gid));
		}
		if ((st = sort_row(p, e, w, g, l, row, key, d)))
			goto out;
		for (int64_t q = 0; q < d;) {
			int64_t take = BW_MIN(d - q, IDBUF - fill);
			memcpy(buf + fill, row + q, (size_t)take * sizeof *buf);
			fill += take;
			q += take;
			if (fill == IDBUF) {
				if ((st = bw_writer_graph_append(w, buf, fill)))
					goto out;
				fill = 0;
			}
		}
		if ((l & 4095) == 4095)
			bw_stream_release(&s, v + 1);
	}
	if ((st = bw_writer_graph_append(w, buf, fill)) || (st = bw_writer_graph_end(w)))
		goto out;
	if (e && ((st = bw_writer_edge_features_append(w, e->out, e->fill)) || (st = bw_writer_edge_features_end(w))))
		goto out;
	st = 0;
out:
	bw_free(ptr);
	bw_free(buf);
	bw_free(row);
	bw_free(key);
	return st;
}

typedef struct pair {
	int64_t id, pos;
} pair;

static int cmp_pair(const void *a, const void *b)
{
	const pair *x = a, *y = b;
	return (x->id > y->id) - (x->id < y->id);
}

/* The input id behind local id l. */
static int64_t orig_of_local(const bw_relabel *r, const pw_part *p, int64_t l)
{
	return l < p->n_own ? p->own[l] : r->orig_of_new[p->halo[l - p->n_own]];
}

int bw_copy_rows(burrow_writer *w, const char *path, int64_t off, size_t rowb, int64_t nl, bw_row_of_fn row_of,
		 const void *ctx)
{
	const int64_t chunk = BW_MAX(1, (int64_t)(FEAT_CHUNK_BYTES / rowb));
	const int64_t gap = BW_MAX(1, FEAT_GAP_BYTES / (int64_t)rowb);
	char *out = bw_malloc((size_t)chunk * rowb), *rbuf = bw_malloc((size_t)chunk * rowb);
	pair *pr = bw_malloc((size_t)chunk * sizeof *pr);
	int st = BURROW_E_NOMEM, fd = -1;
	if (!out || !rbuf || !pr)
		goto out;
	if ((st = bw_open_input(path, 0, &fd, NULL)))
		goto out;
	for (int64_t a = 0; a < nl; a += chunk) {
		const int64_t c = BW_MIN(chunk, nl - a);
		bool sorted = true;
		for (int64_t q = 0; q < c; q++) {
			pr[q] = (pair){row_of(ctx, a + q), q};
			sorted = sorted && (!q || pr[q].id > pr[q - 1].id);
		}
		if (!sorted) /* halo rows are not in input order */
			qsort(pr, (size_t)c, sizeof *pr, cmp_pair);
		for (int64_t q = 0; q < c;) {
			int64_t e = q + 1;
			while (e < c && pr[e].id - pr[e - 1].id <= gap && pr[e].id - pr[q].id < chunk)
				e++;
			const int64_t first = pr[q].id, span = pr[e - 1].id - first + 1;
			if ((st = bw_pread_all(fd, rbuf, (size_t)span * rowb, off + first * (int64_t)rowb, path)))
				goto out;
			for (int64_t x = q; x < e; x++)
				memcpy(out + (size_t)pr[x].pos * rowb, rbuf + (size_t)(pr[x].id - first) * rowb, rowb);
			q = e;
		}
		if ((st = burrow_writer_features_append(w, out, c)))
			goto out;
	}
	st = 0;
out:
	if (fd >= 0)
		close(fd);
	bw_free(out);
	bw_free(rbuf);
	bw_free(pr);
	return st;
}

typedef struct row_ctx {
	const bw_relabel *r;
	const pw_part *p;
} row_ctx;

static int64_t row_of_local(const void *ctx, int64_t l)
{
	const row_ctx *c = ctx;
	return orig_of_local(c->r, c->p, l);
}

/* features.npy: the owned rows, then copies of the halo rows (bw_copy_rows). */
static int write_features(burrow_writer *w, const burrow_dataset *ds, const bw_relabel *r, const pw_part *p)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const int64_t nl = p->n_own + p->n_halo;
	const size_t rowb = (size_t)in->feat_dim * burrow_dtype_size(in->feat_dtype);
	const row_ctx c = {r, p};
	int st;
	if ((st = burrow_writer_features_begin(w, nl, in->feat_dim, in->feat_dtype)) ||
	    (st = bw_copy_rows(w, burrow_dataset_features_path(ds), burrow_dataset_features_offset(ds), rowb, nl,
			       row_of_local, &c)))
		return st;
	return burrow_writer_features_end(w);
}

/* A multi-label labels.npy: the owned nodes' rows of [N, T], then -1 (unknown) rows for the halo. */
static int write_multilabels(burrow_writer *w, const burrow_dataset *ds, const pw_part *p)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const int8_t *lab = burrow_dataset_multilabels(ds);
	const int64_t nl = p->n_own + p->n_halo, t = in->num_tasks;
	int8_t *y = bw_malloc((size_t)(nl ? nl : 1) * (size_t)t);
	if (!y)
		return BURROW_E_NOMEM;
	for (int64_t l = 0; l < p->n_own; l++)
		memcpy(y + l * t, lab + (int64_t)p->own[l] * t, (size_t)t);
	memset(y + p->n_own * t, -1, (size_t)(p->n_halo * t));
	int st = burrow_writer_put_multilabels(w, y, nl, in->num_tasks);
	bw_free(y);
	bw_release_range(lab, (size_t)(in->num_nodes * t));
	return st;
}

/* labels.npy (halo nodes unlabeled: their owner trains on them) and the splits, in local ids. */
static int write_labels_splits(burrow_writer *w, const burrow_dataset *ds, const bw_relabel *r, const pw_part *p)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const int32_t *lab = burrow_dataset_labels(ds);
	const int64_t nl = p->n_own + p->n_halo;
	int st = 0;
	if (in->num_tasks > 0 && burrow_dataset_multilabels(ds) && (st = write_multilabels(w, ds, p)))
		return st;
	if (lab && in->num_classes > 0) {
		int32_t *y = bw_malloc((size_t)(nl ? nl : 1) * sizeof *y);
		if (!y)
			return BURROW_E_NOMEM;
		for (int64_t l = 0; l < nl; l++)
			y[l] = l < p->n_own ? lab[p->own[l]] : -1;
		st = burrow_writer_put_labels(w, y, nl, in->num_classes);
		bw_free(y);
		if (st)
			return st;
	}
	for (int s = 0; s < 3 && !st; s++) {
		int64_t cnt, k = 0;
		const int64_t *ids = burrow_dataset_split(ds, s, &cnt);
		if (!ids)
			continue;
		int64_t *loc = bw_malloc((size_t)(cnt ? cnt : 1) * sizeof *loc);
		if (!loc)
			return BURROW_E_NOMEM;
		for (int64_t q = 0; q < cnt; q++)
			if (r->part[ids[q]] == p->i)
				loc[k++] = r->new_of_orig[ids[q]] - p->first;
		bw_sort_i64(loc, k);
		st = burrow_writer_put_split(w, s, loc, k);
		bw_free(loc);
		bw_release_range(ids, (size_t)cnt * sizeof *ids); /* mapped: keep the resident set small */
	}
	if (lab)
		bw_release_range(lab, (size_t)in->num_nodes * sizeof *lab);
	return st;
}

/* ---------------------------------------------------------------- edge splits */

/* Local id of input node v in part p: owned, or in its halo (whose bits are set). */
static int64_t local_of_orig(const bw_relabel *r, const pw_part *p, int64_t v)
{
	const int64_t gid = r->new_of_orig[v];
	return r->part[v] == p->i ? gid - p->first : p->n_own + halo_index(p, gid);
}

/* One array of edge_split/ as the part gets it: the rows whose key node the part owns. */
typedef struct es_array {
	const char *split, *suffix; /* edge_split/<split>_<suffix>.npy */
	const void *data;           /* [rows, cols] (cols 0: [rows]) of t, borrowed; NULL when rows is 0 */
	burrow_dtype t;
	int64_t rows, cols;
	const int64_t *key;         /* [rows, 2]: row q is the part's when it owns node key[2q] */
	bool ids;                   /* entries are input node ids, written as local ids */
} es_array;

static int64_t es_count(const bw_relabel *r, const pw_part *p, const int64_t *key, int64_t rows)
{
	int64_t c = 0;
	for (int64_t q = 0; q < rows; q++)
		c += r->part[key[2 * q]] == p->i;
	return c;
}

/* Stream the part's rows of a (nsel of them) into edge_split/ of w. */
static int put_es_array(burrow_writer *w, const bw_relabel *r, const pw_part *p, const es_array *a, int64_t nsel)
{
	char rel[64], *path = NULL, *buf = NULL;
	snprintf(rel, sizeof rel, "edge_split/%s_%s.npy", a->split, a->suffix);
	const int64_t width = a->cols ? a->cols : 1, shape[2] = {nsel, a->cols};
	const size_t rowb = (size_t)width * burrow_dtype_size(a->t);
	const int64_t chunk = BW_MAX(1, (int64_t)(((size_t)1 << 20) / rowb));
	bw_npy_writer nw;
	bool open_w = false;
	int64_t fill = 0;
	int st = bw_writer_file(w, rel, &path);
	if (!st && !(buf = bw_malloc((size_t)chunk * rowb)))
		st = BURROW_E_NOMEM;
	if (!st && !(st = bw_npy_writer_open(&nw, path, a->t, a->cols ? 2 : 1, shape, BW_NPY_ALIGN)))
		open_w = true;
	for (int64_t q = 0; !st && q < a->rows; q++) {
		if (r->part[a->key[2 * q]] != p->i)
			continue;
		char *dst = buf + (size_t)fill * rowb;
		if (a->ids)
			for (int64_t c = 0; c < width; c++)
				((int64_t *)dst)[c] = local_of_orig(r, p, ((const int64_t *)a->data)[q * width + c]);
		else
			memcpy(dst, (const char *)a->data + (size_t)q * rowb, rowb);
		if (++fill == chunk) {
			st = bw_npy_writer_append(&nw, buf, (size_t)fill * rowb);
			fill = 0;
		}
	}
	if (!st && open_w && !(st = bw_npy_writer_append(&nw, buf, (size_t)fill * rowb))) {
		open_w = false;
		st = bw_npy_writer_commit(&nw);
	}
	if (open_w)
		bw_npy_writer_abort(&nw);
	bw_free(buf);
	bw_free(path);
	return bw_writer_rebase(w, st);
}

/* meta.json's "edge_split" of a part: its counts, the input's kind of negatives, flags, metric. */
static int es_meta(burrow_writer *w, const burrow_edge_split *e, const int64_t *npos, const int64_t *nneg, bool weight,
		   bool year)
{
	static const char *const neg[3] = {"none", "pairs", "per_source"};
	char metric[32];
	if (e->metric == BURROW_EDGE_METRIC_HITS)
		snprintf(metric, sizeof metric, "hits@%d", e->metric_k);
	else
		snprintf(metric, sizeof metric, "%s", e->metric == BURROW_EDGE_METRIC_MRR ? "mrr" : "auc");
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	for (int s = 0; s < 3; s++)
		cJSON_AddNumberToObject(j, bw_split_names[s], (double)npos[s]);
	cJSON_AddStringToObject(j, "neg", neg[e->neg]);
	cJSON_AddNumberToObject(j, "num_neg", (double)e->k);
	cJSON_AddNumberToObject(j, "valid_neg", (double)(e->neg == BURROW_EDGE_NEG_PAIRS ? nneg[1] : 0));
	cJSON_AddNumberToObject(j, "test_neg", (double)(e->neg == BURROW_EDGE_NEG_PAIRS ? nneg[2] : 0));
	cJSON_AddBoolToObject(j, "weight", weight);
	cJSON_AddBoolToObject(j, "year", year);
	cJSON_AddBoolToObject(j, "directed", e->directed);
	cJSON_AddStringToObject(j, "metric", metric);
	if (bw_json_nomem()) {
		cJSON_Delete(j);
		return bw_err(BURROW_E_NOMEM, "%s: out of memory writing meta.json", bw_writer_dir(w));
	}
	return bw_writer_meta_add(w, "edge_split", j);
}

/* edge_split/ of a part, in its local ids (halo bits set): the positives whose source it owns,
 * with their per-source negatives, weights and years; the pairs whose first node it owns. */
static int write_edge_split(burrow_writer *w, const burrow_dataset *ds, const bw_relabel *r, const pw_part *p)
{
	burrow_edge_split e[3];
	int64_t npos[3], nneg[3] = {0, 0, 0};
	bool weight = false, year = false;
	int st = 0;
	for (int s = 0; s < 3 && !st; s++) {
		st = burrow_dataset_edge_split(ds, s, &e[s]);
		weight |= !st && e[s].weight;
		year |= !st && e[s].year;
	}
	for (int s = 0; s < 3 && !st; s++) {
		const burrow_edge_split *x = &e[s];
		const char *sn = bw_split_names[s];
		npos[s] = es_count(r, p, x->pos, x->num_pos);
		es_array a[5] = {{sn, "pos", x->pos, BURROW_DTYPE_I64, x->num_pos, 2, x->pos, true}};
		int na = 1;
		if (s > 0 && x->neg == BURROW_EDGE_NEG_PER_SOURCE) {
			a[na++] = (es_array){sn, "neg_dst", x->neg_dst, BURROW_DTYPE_I64, x->num_pos, x->k, x->pos, true};
			nneg[s] = npos[s];
		} else if (s > 0 && x->neg == BURROW_EDGE_NEG_PAIRS) {
			a[na++] = (es_array){sn, "neg", x->neg_pairs, BURROW_DTYPE_I64, x->num_neg, 2, x->neg_pairs, true};
			nneg[s] = es_count(r, p, x->neg_pairs, x->num_neg);
		}
		if (weight)
			a[na++] = (es_array){sn, "weight", x->weight, BURROW_DTYPE_F32, x->num_pos, 0, x->pos, false};
		if (year)
			a[na++] = (es_array){sn, "year", x->year, BURROW_DTYPE_I32, x->num_pos, 0, x->pos, false};
		for (int i = 0; i < na && !st; i++)
			st = put_es_array(w, r, p, &a[i], i == 1 && s > 0 && x->neg != BURROW_EDGE_NEG_NONE ? nneg[s] : npos[s]);
	}
	char *dir = NULL; /* edge_split/ itself, fsynced as commit fsyncs split/ */
	if (!st && !(st = bw_writer_file(w, "edge_split/.", &dir)))
		st = bw_writer_rebase(w, bw_fsync_dir(dir));
	bw_free(dir);
	return st ? st : es_meta(w, &e[0], npos, nneg, weight, year);
}

int bw_save_i64(const char *dir, const char *name, const int64_t *a, int64_t n)
{
	char *path = bw_path_join(dir, name);
	if (!path)
		return BURROW_E_NOMEM;
	int st = bw_npy_save(path, BURROW_DTYPE_I64, 1, &n, a, BW_NPY_ALIGN);
	bw_free(path);
	return st;
}

/* "source" of a part's meta.json: where it came from and how many of its nodes it owns. */
static char *part_source(const burrow_dataset *ds, const char *dataset_dir, const bw_relabel *r, const pw_part *p)
{
	const char *src = burrow_dataset_get_info(ds)->source_json;
	size_t cap = strlen(dataset_dir) * 2 + strlen(src) + 512;
	char *s = bw_malloc(cap), *esc = bw_malloc(strlen(dataset_dir) * 2 + 1);
	if (!s || !esc) {
		bw_free(s);
		bw_free(esc);
		return NULL;
	}
	size_t k = 0;
	for (const char *c = dataset_dir; *c; c++) {
		if (*c == '"' || *c == '\\')
			esc[k++] = '\\';
		esc[k++] = *c;
	}
	esc[k] = '\0';
	snprintf(s, cap,
		 "{\"partition\": {\"dataset\": \"%s\", \"part\": %d, \"num_parts\": %d, \"num_owned\": %lld, "
		 "\"num_halo\": %lld, \"first_id\": %lld}, \"input_source\": %s}",
		 esc, p->i, r->k, (long long)p->n_own, (long long)p->n_halo, (long long)p->first, src);
	bw_free(esc);
	return s;
}

/* The part's dataset directory, written while its halo bits are set: graph (with its edge
 * features), features, labels, node splits, edge splits, source. */
static int write_part_dataset(const burrow_dataset *ds, const char *dataset_dir, const bw_pgraph *g,
			      const bw_relabel *r, const char *pdir, const char *full, const pw_part *p, bw_part_out *out)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	burrow_writer *w = NULL;
	ef_io ef = {.fd = -1};
	char *src = NULL;
	int st;
	if ((st = burrow_writer_open(&w, pdir, full, NULL)) || (in->edge_feat_dim && (st = ef_open(&ef, ds))) ||
	    (st = write_rows(w, g, r, p, in->edge_feat_dim ? &ef : NULL, &out->edges)))
		goto out;
	if (in->feat_dim > 0 && (st = write_features(w, ds, r, p)))
		goto out;
	if ((st = write_labels_splits(w, ds, r, p)))
		goto out;
	if (burrow_dataset_has_edge_split(ds) && (st = write_edge_split(w, ds, r, p)))
		goto out;
	if (!(src = part_source(ds, dataset_dir, r, p))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = burrow_writer_set_source(w, src)))
		goto out;
	st = burrow_writer_commit(w);
	w = NULL;
out:
	burrow_writer_abort(w);
	ef_close(&ef);
	bw_free(src);
	return st;
}

static int write_part(const burrow_dataset *ds, const char *dataset_dir, const bw_pgraph *g, const bw_relabel *r,
		      const char *dir, pw_part *p, uint64_t *bits, bw_part_out *out)
{
	char name[64], *pdir = NULL, *full = NULL;
	int st;
	snprintf(name, sizeof name, "part-%d", p->i);
	const char *dsname = burrow_dataset_get_info(ds)->name;
	pdir = bw_path_join(dir, name);
	full = bw_malloc(strlen(dsname) + sizeof name + 2);
	if (!pdir || !full) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	sprintf(full, "%s/%s", dsname, name);
	st = find_halo(ds, g, r, p, bits);
	if (!st)
		st = write_part_dataset(ds, dataset_dir, g, r, pdir, full, p, out);
	if (p->halo)
		clear_halo(bits, p);
	if (st)
		goto out;
	int64_t *orig = bw_malloc((size_t)(p->n_own ? p->n_own : 1) * sizeof *orig);
	if (!orig) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int64_t l = 0; l < p->n_own; l++)
		orig[l] = p->own[l];
	st = bw_save_i64(pdir, "orig_ids.npy", orig, p->n_own);
	bw_free(orig);
	if (st || (st = bw_save_i64(pdir, "halo_ids.npy", p->halo, p->n_halo)) ||
	    (st = bw_save_i64(pdir, "halo_offsets.npy", p->halo_off, r->k + 1)))
		goto out;
	out->owned = p->n_own;
	out->halo = p->n_halo;
out:
	bw_free(pdir);
	bw_free(full);
	return st;
}

int bw_write_sends(const char *dir, int k, int i, const int64_t *halo_off_all, const char *type, int64_t *count)
{
	char name[64], *pdir = NULL, *path = NULL, ids_name[BURROW_MAX_NAME + 32], offs_name[BURROW_MAX_NAME + 32];
	int64_t *soff = bw_malloc((size_t)(k + 1) * sizeof *soff), *buf = bw_malloc((size_t)IDBUF * sizeof *buf);
	bw_npy_writer nw;
	bool open_w = false;
	int st = BURROW_E_NOMEM;
	snprintf(name, sizeof name, "part-%d", i);
	snprintf(ids_name, sizeof ids_name, "send_ids%s%s.npy", type ? "/" : "", type ? type : "");
	snprintf(offs_name, sizeof offs_name, "send_offsets%s%s.npy", type ? "/" : "", type ? type : "");
	pdir = bw_path_join(dir, name);
	if (!soff || !buf || !pdir)
		goto out;
	soff[0] = 0;
	for (int j = 0; j < k; j++) {
		const int64_t *ho = halo_off_all + (int64_t)j * (k + 1);
		soff[j + 1] = soff[j] + (j == i ? 0 : ho[i + 1] - ho[i]);
	}
	*count = soff[k];
	if ((st = bw_save_i64(pdir, offs_name, soff, k + 1)))
		goto out;
	path = bw_path_join(pdir, ids_name);
	if (!path) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = bw_npy_writer_open(&nw, path, BURROW_DTYPE_I64, 1, &soff[k], BW_NPY_ALIGN)))
		goto out;
	open_w = true;
	for (int j = 0; j < k; j++) {
		const int64_t *ho = halo_off_all + (int64_t)j * (k + 1);
		if (j == i || ho[i + 1] == ho[i])
			continue;
		char jn[BURROW_MAX_NAME + 96];
		snprintf(jn, sizeof jn, "part-%d/halo_ids%s%s.npy", j, type ? "/" : "", type ? type : "");
		char *hp = bw_path_join(dir, jn);
		bw_npy h;
		int fd;
		if (!hp) {
			st = BURROW_E_NOMEM;
			goto out;
		}
		st = bw_npy_open(hp, &h, &fd);
		for (int64_t a = ho[i]; !st && a < ho[i + 1]; a += IDBUF) {
			int64_t c = BW_MIN(IDBUF, ho[i + 1] - a);
			st = bw_pread_all(fd, buf, (size_t)c * sizeof *buf, h.data_offset + a * 8, hp);
			if (!st)
				st = bw_npy_writer_append(&nw, buf, (size_t)c * sizeof *buf);
		}
		if (fd >= 0)
			close(fd);
		bw_free(hp);
		if (st)
			goto out;
	}
	open_w = false;
	st = bw_npy_writer_commit(&nw);
out:
	if (open_w)
		bw_npy_writer_abort(&nw);
	bw_free(soff);
	bw_free(buf);
	bw_free(pdir);
	bw_free(path);
	return st;
}

int bw_write_parts(const burrow_dataset *ds, const char *dataset_dir, const bw_relabel *r, const char *dir,
		   int threads, burrow_progress_fn progress, void *progress_user, bw_part_out *out)
{
	const burrow_csr *gc = burrow_dataset_graph(ds);
	const bw_pgraph g = {.n = gc->num_nodes, .m = gc->num_edges, .indptr = gc->indptr, .indices = gc->indices,
			     .width = gc->index_width, .mapped = true, .ptr_mapped = true};
	const int k = r->k;
	uint64_t *bits = bw_calloc((size_t)(r->n + 63) / 64 + 1, sizeof *bits);
	int64_t *rank = bw_malloc(((size_t)(r->n + 63) / 64 + 1) * sizeof *rank);
	int64_t *hoff = bw_malloc((size_t)k * (size_t)(k + 1) * sizeof *hoff);
	int st = 0;
	(void)threads;
	if (!bits || !rank || !hoff) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int i = 0; i < k && !st; i++) {
		pw_part p = {.i = i, .first = r->offsets[i], .n_own = r->offsets[i + 1] - r->offsets[i],
			     .own = r->orig_of_new + r->offsets[i], .rank = rank};
		memset(&out[i], 0, sizeof out[i]);
		st = write_part(ds, dataset_dir, &g, r, dir, &p, bits, &out[i]);
		if (!st)
			memcpy(hoff + (int64_t)i * (k + 1), p.halo_off, (size_t)(k + 1) * sizeof *hoff);
		bw_free(p.halo);
		bw_free(p.halo_off);
		if (progress)
			progress(progress_user, "write", (uint64_t)i + 1, (uint64_t)k + 1);
	}
	for (int i = 0; i < k && !st; i++)
		st = bw_write_sends(dir, k, i, hoff, NULL, &out[i].send);
	if (!st && progress)
		progress(progress_user, "write", (uint64_t)k + 1, (uint64_t)k + 1);
out:
	bw_free(bits);
	bw_free(rank);
	bw_free(hoff);
	return st;
}
