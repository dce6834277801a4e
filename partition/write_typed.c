/* write_typed.c: a typed input's parts: per part a version-2 dataset in local ids of each type
 * (owned nodes, then the halo: remote sources of the owned nodes' in-edges), its per-type
 * features, the target's labels and splits, and per type the orig, halo and send arrays. */
#define _GNU_SOURCE
#include "partition_internal.h"
#include "../graph/dataset_internal.h"

#include <cjson/cJSON.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IDBUF ((int64_t)1 << 16) /* edges per burrow_writer_relation_add */

/* One part being written. Ids are the concatenation's (type t's node v is toff[t] + v). */
typedef struct tw_part {
	int i;
	int64_t n_own[BURROW_MAX_TYPES];       /* owned nodes of each type */
	int64_t *halo;                         /* [n_halo] new ids, ascending (so by type, then owner) */
	int64_t n_halo;
	int64_t hs[BURROW_MAX_TYPES + 1];      /* type t's halo is halo[hs[t] .. hs[t+1]) */
	const uint64_t *bits;                  /* the halo as a bitmap over new ids */
	int64_t *rank;                         /* halo ids below each word of bits */
} tw_part;

static const int64_t *book(const bw_relabel *r, int t) { return r->tbook + (int64_t)t * (r->k + 1); }

/* Local id in part p of input node u (concatenated id) of type t. */
static inline int64_t local_of(const bw_relabel *r, const tw_part *p, int t, int64_t u)
{
	const int64_t gid = r->new_of_orig[u];
	if (r->part[u] == p->i)
		return gid - book(r, t)[p->i];
	const int64_t w = gid >> 6;
	const int64_t q = p->rank[w] + __builtin_popcountll(p->bits[w] & (((uint64_t)1 << (gid & 63)) - 1));
	return p->n_own[t] + q - p->hs[t];
}

/* The halo: for every relation, the remote sources of the part's owned destinations, as bits
 * over new ids, read out ascending with each word's rank. The bits stay set until clear. */
static int find_halo(const burrow_hetero *h, const bw_relabel *r, tw_part *p, uint64_t *bits)
{
	for (int q = 0; q < h->num_relations; q++) {
		const burrow_relation *rel = &h->rel[q];
		const int s = rel->src_type, d = rel->dst_type;
		const bw_pgraph g = {.n = rel->graph.num_nodes, .m = rel->graph.num_edges, .indptr = rel->graph.indptr,
				     .indices = rel->graph.indices, .width = rel->graph.index_width, .mapped = true,
				     .ptr_mapped = true};
		bw_stream st;
		bw_stream_begin(&st, &g);
		for (int64_t x = book(r, d)[p->i]; x < book(r, d)[p->i + 1]; x++) {
			const int64_t v = r->orig_of_new[x] - r->toff[d];
			for (int64_t j = g.indptr[v]; j < g.indptr[v + 1]; j++) {
				const int64_t u = r->toff[s] + bw_pg_nbr(&g, j);
				if (r->part[u] != p->i)
					bw_bit_set(bits, r->new_of_orig[u]);
			}
			if ((x & 4095) == 4095)
				bw_stream_release(&st, v + 1);
		}
	}
	const int64_t words = (r->n + 63) / 64;
	int64_t n = 0;
	for (int64_t w = 0; w < words; w++)
		n += __builtin_popcountll(bits[w]);
	if (!(p->halo = bw_malloc((size_t)(n ? n : 1) * sizeof *p->halo)))
		return BURROW_E_NOMEM;
	p->n_halo = n;
	for (int64_t w = 0, q = 0; w < words; w++) {
		uint64_t x = bits[w];
		p->rank[w] = q;
		for (; x; x &= x - 1)
			p->halo[q++] = w * 64 + __builtin_ctzll(x);
	}
	p->bits = bits;
	for (int t = 0; t <= r->num_types; t++)
		p->hs[t] = bw_lower_bound_i64(p->halo, n, r->toff[t]);
	return 0;
}

/* Relation q of the part: each owned destination's input row, in local ids (halo rows empty). */
static int write_relation(burrow_writer *w, const burrow_hetero *h, int q, const bw_relabel *r, const tw_part *p,
			  size_t mem_bytes, int64_t *edges)
{
	const burrow_relation *rel = &h->rel[q];
	const int s = rel->src_type, d = rel->dst_type;
	const burrow_csr *g = &rel->graph;
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.mem_bytes = mem_bytes;
	int64_t *src = bw_malloc((size_t)IDBUF * sizeof *src), *dst = bw_malloc((size_t)IDBUF * sizeof *dst), fill = 0;
	int st = BURROW_E_NOMEM;
	const bw_pgraph pg = {.n = g->num_nodes, .m = g->num_edges, .indptr = g->indptr, .indices = g->indices,
			      .width = g->index_width, .mapped = true, .ptr_mapped = true};
	bw_stream sm;
	bw_stream_begin(&sm, &pg);
	if (!src || !dst || (st = burrow_writer_relation_begin(w, s, rel->name, d, &co)))
		goto out;
	for (int64_t x = book(r, d)[p->i]; x < book(r, d)[p->i + 1]; x++) {
		const int64_t v = r->orig_of_new[x] - r->toff[d];
		if ((x & 4095) == 4095)
			bw_stream_release(&sm, v);
		for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) {
			src[fill] = local_of(r, p, s, r->toff[s] + burrow_csr_index(g, j));
			dst[fill] = x - book(r, d)[p->i];
			if (++fill == IDBUF) {
				if ((st = burrow_writer_relation_add(w, src, dst, (size_t)fill)))
					goto out;
				*edges += fill;
				fill = 0;
			}
		}
	}
	if ((st = burrow_writer_relation_add(w, src, dst, (size_t)fill)))
		goto out;
	*edges += fill;
	st = burrow_writer_relation_end(w);
out:
	bw_free(src);
	bw_free(dst);
	return st;
}

typedef struct trow_ctx {
	const bw_relabel *r;
	const tw_part *p;
	int t;
} trow_ctx;

/* Type-local input id of type t's local row l of the part: owned, then halo. */
static int64_t row_of_typed(const void *ctx, int64_t l)
{
	const trow_ctx *c = ctx;
	const int64_t own = c->p->n_own[c->t];
	const int64_t x = l < own ? book(c->r, c->t)[c->p->i] + l : c->p->halo[c->p->hs[c->t] + l - own];
	return c->r->orig_of_new[x] - c->r->toff[c->t];
}

/* features/<type>.npy of every featured type: owned rows, then copies of the halo rows. */
static int write_type_features(burrow_writer *w, const burrow_dataset *ds, const bw_relabel *r, const tw_part *p)
{
	int st = 0;
	for (int t = 0; t < r->num_types && !st; t++) {
		burrow_type_info ti;
		if ((st = burrow_dataset_type_info(ds, t, &ti)) || !ti.feat_dim)
			continue;
		const trow_ctx c = {r, p, t};
		const int64_t nl = p->n_own[t] + p->hs[t + 1] - p->hs[t];
		const size_t rowb = (size_t)ti.feat_dim * burrow_dtype_size(ti.feat_dtype);
		if (!(st = burrow_writer_type_features_begin(w, t, ti.feat_dim, ti.feat_dtype)) &&
		    !(st = bw_copy_rows(w, ti.features_path, ti.features_offset, rowb, nl, row_of_typed, &c)))
			st = burrow_writer_features_end(w);
	}
	return st;
}

/* The target type's labels (halo nodes -1: their owner trains on them) and splits, local ids. */
static int write_target(burrow_writer *w, const burrow_dataset *ds, const bw_relabel *r, const tw_part *p, int tt)
{
	const int32_t *lab = burrow_dataset_labels(ds);
	const int32_t nc = burrow_dataset_get_info(ds)->num_classes;
	const int64_t own = p->n_own[tt], nl = own + p->hs[tt + 1] - p->hs[tt], first = book(r, tt)[p->i];
	int st;
	if ((st = burrow_writer_set_target(w, tt)))
		return st;
	if (lab && nc > 0) {
		int32_t *y = bw_malloc((size_t)(nl ? nl : 1) * sizeof *y);
		if (!y)
			return BURROW_E_NOMEM;
		for (int64_t l = 0; l < nl; l++)
			y[l] = l < own ? lab[r->orig_of_new[first + l] - r->toff[tt]] : -1;
		st = burrow_writer_put_labels(w, y, nl, nc);
		bw_free(y);
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
			if (r->part[r->toff[tt] + ids[q]] == p->i)
				loc[k++] = r->new_of_orig[r->toff[tt] + ids[q]] - first;
		bw_sort_i64(loc, k);
		st = burrow_writer_put_split(w, s, loc, k);
		bw_free(loc);
	}
	return st;
}

/* "source" of a part's meta.json: where it came from, per type what it owns and its halo. */
static char *part_source(const burrow_dataset *ds, const char *dataset_dir, const burrow_hetero *h,
			 const bw_relabel *r, const tw_part *p)
{
	cJSON *j = cJSON_CreateObject(), *pt = j ? cJSON_AddObjectToObject(j, "partition") : NULL;
	cJSON *own = pt ? cJSON_AddObjectToObject(pt, "num_owned") : NULL;
	cJSON *halo = pt ? cJSON_AddObjectToObject(pt, "num_halo") : NULL;
	char *out = NULL;
	if (own && halo) {
		cJSON_AddStringToObject(pt, "dataset", dataset_dir);
		cJSON_AddNumberToObject(pt, "part", p->i);
		cJSON_AddNumberToObject(pt, "num_parts", r->k);
		for (int t = 0; t < h->num_types; t++) {
			cJSON_AddNumberToObject(own, h->type_names[t], (double)p->n_own[t]);
			cJSON_AddNumberToObject(halo, h->type_names[t], (double)(p->hs[t + 1] - p->hs[t]));
		}
		cJSON_AddItemToObject(j, "input_source", cJSON_CreateRaw(burrow_dataset_get_info(ds)->source_json));
		char *txt = cJSON_PrintUnformatted(j);
		out = txt ? bw_strdup(txt) : NULL;
		cJSON_free(txt);
	}
	cJSON_Delete(j);
	return out;
}

/* The part's dataset directory: types, relations, features, target, source. */
static int write_dataset(const burrow_dataset *ds, const char *dataset_dir, const bw_relabel *r, const char *pdir,
			 const char *full, const tw_part *p, size_t mem_bytes, bw_part_out *out)
{
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	burrow_writer *w = NULL;
	char *src = NULL;
	int st, t;
	if ((st = burrow_writer_open(&w, pdir, full, NULL)))
		return st;
	for (int q = 0; q < h->num_types && !st; q++)
		st = burrow_writer_add_type(w, h->type_names[q], p->n_own[q] + p->hs[q + 1] - p->hs[q], &t);
	for (int q = 0; q < h->num_relations && !st; q++)
		st = write_relation(w, h, q, r, p, mem_bytes, &out->edges);
	if (st || (st = write_type_features(w, ds, r, p)) ||
	    (h->target_type >= 0 && (st = write_target(w, ds, r, p, h->target_type))))
		goto out;
	if (!(src = part_source(ds, dataset_dir, h, r, p))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = burrow_writer_set_source(w, src)))
		goto out;
	st = burrow_writer_commit(w);
	w = NULL;
out:
	burrow_writer_abort(w);
	bw_free(src);
	return st;
}

/* Per type: orig_ids/<t>.npy (type-local input ids of the owned nodes), halo_ids/<t>.npy
 * (type-local new ids, ascending) and halo_offsets/<t>.npy (by owner; also into hoff [k+1]
 * per type, for the send lists). */
static int write_id_arrays(const burrow_hetero *h, const bw_relabel *r, const char *pdir, const tw_part *p,
			   int64_t *hoff)
{
	const char *sub[] = {"orig_ids", "halo_ids", "halo_offsets", "send_ids", "send_offsets"};
	char name[BURROW_MAX_NAME + 32];
	int64_t nmax = 1;
	int st = 0;
	for (int a = 0; a < 5 && !st; a++) {
		char *d = bw_path_join(pdir, sub[a]);
		st = d ? bw_mkdir_p(d, 0755) : BURROW_E_NOMEM;
		bw_free(d);
	}
	for (int t = 0; t < r->num_types; t++)
		nmax = BW_MAX(nmax, BW_MAX(p->n_own[t], p->hs[t + 1] - p->hs[t]));
	int64_t *a = st ? NULL : bw_malloc((size_t)nmax * sizeof *a);
	if (!st && !a)
		st = BURROW_E_NOMEM;
	for (int t = 0; t < r->num_types && !st; t++) {
		const int64_t *bk = book(r, t), nh = p->hs[t + 1] - p->hs[t];
		int64_t *ho = hoff + (int64_t)t * r->k * (r->k + 1) + (int64_t)p->i * (r->k + 1);
		for (int64_t l = 0; l < p->n_own[t]; l++)
			a[l] = r->orig_of_new[bk[p->i] + l] - r->toff[t];
		snprintf(name, sizeof name, "orig_ids/%s.npy", h->type_names[t]);
		if ((st = bw_save_i64(pdir, name, a, p->n_own[t])))
			break;
		for (int64_t q = 0; q < nh; q++)
			a[q] = p->halo[p->hs[t] + q] - r->toff[t];
		snprintf(name, sizeof name, "halo_ids/%s.npy", h->type_names[t]);
		if ((st = bw_save_i64(pdir, name, a, nh)))
			break;
		for (int j = 0; j <= r->k; j++)
			ho[j] = bw_lower_bound_i64(a, nh, bk[j] - r->toff[t]);
		snprintf(name, sizeof name, "halo_offsets/%s.npy", h->type_names[t]);
		st = bw_save_i64(pdir, name, ho, r->k + 1);
	}
	bw_free(a);
	return st;
}

/* Part p: its halo, dataset and id arrays; the halo bits are cleared again. */
static int write_part(const burrow_dataset *ds, const char *dataset_dir, const bw_relabel *r, const char *dir,
		      tw_part *p, uint64_t *bits, size_t mem_bytes, int64_t *hoff, bw_part_out *out)
{
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const char *dsname = burrow_dataset_get_info(ds)->name;
	char name[32], *pdir, *full = bw_malloc(strlen(dsname) + sizeof name + 2);
	snprintf(name, sizeof name, "part-%d", p->i);
	pdir = bw_path_join(dir, name);
	int st = BURROW_E_NOMEM;
	if (full && pdir) {
		sprintf(full, "%s/%s", dsname, name);
		if (!(st = find_halo(h, r, p, bits)) && !(st = write_dataset(ds, dataset_dir, r, pdir, full, p, mem_bytes, out)))
			st = write_id_arrays(h, r, pdir, p, hoff);
	}
	for (int64_t q = 0; q < p->n_halo; q++)
		bits[p->halo[q] >> 6] = 0;
	for (int t = 0; t < r->num_types; t++) {
		out->owned += p->n_own[t];
		out->type_halo[t] = p->hs[t + 1] - p->hs[t];
	}
	out->halo = p->n_halo;
	bw_free(pdir);
	bw_free(full);
	return st;
}

int bw_write_typed_parts(const burrow_dataset *ds, const char *dataset_dir, const bw_relabel *r, const char *dir,
			 size_t mem_bytes, burrow_progress_fn progress, void *progress_user, bw_part_out *out)
{
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const int k = r->k, nt = r->num_types;
	const size_t words = (size_t)(r->n + 63) / 64 + 1;
	uint64_t *bits = bw_calloc(words, sizeof *bits);
	int64_t *rank = bw_malloc(words * sizeof *rank);
	int64_t *hoff = bw_malloc((size_t)nt * (size_t)k * (size_t)(k + 1) * sizeof *hoff);
	int st = bits && rank && hoff ? 0 : BURROW_E_NOMEM;
	for (int i = 0; i < k && !st; i++) {
		tw_part p = {.i = i, .rank = rank};
		for (int t = 0; t < nt; t++)
			p.n_own[t] = book(r, t)[i + 1] - book(r, t)[i];
		memset(&out[i], 0, sizeof out[i]);
		st = write_part(ds, dataset_dir, r, dir, &p, bits, mem_bytes ? mem_bytes / 4 : 0, hoff, &out[i]);
		bw_free(p.halo);
		if (progress)
			progress(progress_user, "write", (uint64_t)i + 1, (uint64_t)k + 1);
	}
	for (int i = 0; i < k && !st; i++)
		for (int t = 0; t < nt && !st; t++) {
			int64_t cnt = 0;
			st = bw_write_sends(dir, k, i, hoff + (int64_t)t * k * (k + 1), h->type_names[t], &cnt);
			out[i].send += cnt;
		}
	if (!st && progress)
		progress(progress_user, "write", (uint64_t)k + 1, (uint64_t)k + 1);
	bw_free(bits);
	bw_free(rank);
	bw_free(hoff);
	return st;
}
