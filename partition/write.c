/* write.c: the parts directory: one dataset directory per part in local ids (owned nodes, then
 * the halo grouped by owner), plus orig_ids, halo and send arrays. One part at a time, its
 * rows streamed from the input's mapped CSR in ascending input id, which is new-id order. */
#define _GNU_SOURCE
#include "partition_internal.h"
#include "../graph/dataset_internal.h"

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

/* The halo: remote neighbors of the part's rows, as a bitmap over new ids, read out in
 * ascending order (which groups them by owner, since owners hold ascending id ranges), with
 * each word's rank. The bits stay set for write_rows; clear_halo clears them. */
static int find_halo(const bw_pgraph *g, const bw_relabel *r, pw_part *p, uint64_t *bits)
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

/* The part's rows in local ids, streamed into the writer. */
static int write_rows(burrow_writer *w, const bw_pgraph *g, const bw_relabel *r, const pw_part *p, int64_t *edges)
{
	const int64_t nl = p->n_own + p->n_halo;
	int64_t *ptr = bw_malloc((size_t)(nl + 1) * sizeof *ptr);
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
	if (!buf || !row || (st = bw_writer_graph_begin(w, ptr, nl, false)))
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
		bw_sort_i32(row, d);
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
	st = 0;
out:
	bw_free(ptr);
	bw_free(buf);
	bw_free(row);
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

/* features.npy: the owned rows, then copies of the halo rows, read from the input in
 * ascending id order per chunk, neighboring rows in one read. */
static int write_features(burrow_writer *w, const burrow_dataset *ds, const bw_relabel *r, const pw_part *p)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const char *path = burrow_dataset_features_path(ds);
	const int64_t off = burrow_dataset_features_offset(ds), nl = p->n_own + p->n_halo;
	const size_t rowb = (size_t)in->feat_dim * burrow_dtype_size(in->feat_dtype);
	const int64_t chunk = BW_MAX(1, (int64_t)(FEAT_CHUNK_BYTES / rowb));
	const int64_t gap = BW_MAX(1, FEAT_GAP_BYTES / (int64_t)rowb);
	char *out = bw_malloc((size_t)chunk * rowb), *rbuf = bw_malloc((size_t)chunk * rowb);
	pair *pr = bw_malloc((size_t)chunk * sizeof *pr);
	int st = BURROW_E_NOMEM, fd = -1;
	if (!out || !rbuf || !pr)
		goto out;
	if ((st = bw_open_input(path, 0, &fd, NULL)))
		goto out;
	if ((st = burrow_writer_features_begin(w, nl, in->feat_dim, in->feat_dtype)))
		goto out;
	for (int64_t a = 0; a < nl; a += chunk) {
		const int64_t c = BW_MIN(chunk, nl - a);
		for (int64_t q = 0; q < c; q++)
			pr[q] = (pair){orig_of_local(r, p, a + q), q};
		if (a + c > p->n_own) /* halo rows are not in input order */
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
	st = burrow_writer_features_end(w);
out:
	if (fd >= 0)
		close(fd);
	bw_free(out);
	bw_free(rbuf);
	bw_free(pr);
	return st;
}

/* labels.npy (halo nodes unlabeled: their owner trains on them) and the splits, in local ids. */
static int write_labels_splits(burrow_writer *w, const burrow_dataset *ds, const bw_relabel *r, const pw_part *p)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const int32_t *lab = burrow_dataset_labels(ds);
	const int64_t nl = p->n_own + p->n_halo;
	int st = 0;
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

static int save_i64(const char *dir, const char *name, const int64_t *a, int64_t n)
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

static int write_part(const burrow_dataset *ds, const char *dataset_dir, const bw_pgraph *g, const bw_relabel *r,
		      const char *dir, pw_part *p, uint64_t *bits, bw_part_out *out)
{
	char name[64], *pdir = NULL, *src = NULL, *full = NULL;
	burrow_writer *w = NULL;
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
	st = find_halo(g, r, p, bits);
	if (!st && !(st = burrow_writer_open(&w, pdir, full, NULL)))
		st = write_rows(w, g, r, p, &out->edges);
	if (p->halo)
		clear_halo(bits, p);
	if (st)
		goto out;
	if (burrow_dataset_get_info(ds)->feat_dim > 0 && (st = write_features(w, ds, r, p)))
		goto out;
	if ((st = write_labels_splits(w, ds, r, p)))
		goto out;
	src = part_source(ds, dataset_dir, r, p);
	if (!src) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = burrow_writer_set_source(w, src)))
		goto out;
	st = burrow_writer_commit(w);
	w = NULL;
	if (st)
		goto out;
	int64_t *orig = bw_malloc((size_t)(p->n_own ? p->n_own : 1) * sizeof *orig);
	if (!orig) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int64_t l = 0; l < p->n_own; l++)
		orig[l] = p->own[l];
	st = save_i64(pdir, "orig_ids.npy", orig, p->n_own);
	bw_free(orig);
	if (st || (st = save_i64(pdir, "halo_ids.npy", p->halo, p->n_halo)) ||
	    (st = save_i64(pdir, "halo_offsets.npy", p->halo_off, r->k + 1)))
		goto out;
	out->owned = p->n_own;
	out->halo = p->n_halo;
out:
	burrow_writer_abort(w);
	bw_free(pdir);
	bw_free(src);
	bw_free(full);
	return st;
}

/* send_ids.npy and send_offsets.npy of part i: part j's halo segment for i, for each j. */
static int write_sends(const char *dir, const bw_relabel *r, int i, const int64_t *halo_off_all, int64_t *count)
{
	const int k = r->k;
	char name[64], *pdir = NULL, *path = NULL;
	int64_t *soff = bw_malloc((size_t)(k + 1) * sizeof *soff), *buf = bw_malloc((size_t)IDBUF * sizeof *buf);
	bw_npy_writer nw;
	bool open_w = false;
	int st = BURROW_E_NOMEM;
	snprintf(name, sizeof name, "part-%d", i);
	pdir = bw_path_join(dir, name);
	if (!soff || !buf || !pdir)
		goto out;
	soff[0] = 0;
	for (int j = 0; j < k; j++) {
		const int64_t *ho = halo_off_all + (int64_t)j * (k + 1);
		soff[j + 1] = soff[j] + (j == i ? 0 : ho[i + 1] - ho[i]);
	}
	*count = soff[k];
	if ((st = save_i64(pdir, "send_offsets.npy", soff, k + 1)))
		goto out;
	path = bw_path_join(pdir, "send_ids.npy");
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
		char jn[96];
		snprintf(jn, sizeof jn, "part-%d/halo_ids.npy", j);
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
		st = write_sends(dir, r, i, hoff, &out[i].send);
	if (!st && progress)
		progress(progress_user, "write", (uint64_t)k + 1, (uint64_t)k + 1);
out:
	bw_free(bits);
	bw_free(rank);
	bw_free(hoff);
	return st;
}
