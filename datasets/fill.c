/* fill.c: --fill mean on a typed dataset directory: neighbors' mean rows, streamed, as float16. */
#define _GNU_SOURCE
#include "../core/half.h"
#include "../graph/csr_internal.h"
#include "../graph/dataset_internal.h"
#include "dsio.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#define FILL_EDGE_CHUNK ((size_t)1 << 16)

/* One relation that feeds a type's mean: a CSR whose rows are the filled type's nodes and whose
 * ids are the featured type f's: the relation's own (stored by destination, dst == t), or its
 * transpose, built under the budget into two unlinked scratch files and mapped. */
typedef struct fill_src {
	int rel, f;
	burrow_csr g;          /* a view */
	void *map[2];          /* the transpose's indptr and indices, mapped; NULL for a relation's own */
	size_t len[2];
} fill_src;

/* A featured type's rows, mapped read-only (the dataset's file, in place or features/<type>.npy). */
typedef struct fill_rows {
	bw_npy_map m;
	burrow_dtype t;
	int64_t dim;
} fill_rows;

/* What one call works on. */
typedef struct fill {
	const char *dir;
	burrow_dataset *ds;
	const burrow_hetero *h;
	size_t mem;
	burrow_progress_fn fn;
	void *user;
	int64_t dim[BURROW_MAX_TYPES];        /* feature width, 0 while a type has none */
	char *path[BURROW_MAX_TYPES];         /* its features' file, owned */
	bool filled[BURROW_MAX_TYPES];        /* filled by this call */
	char *written[BURROW_MAX_TYPES];      /* features/<type>.npy written by this call (removed on failure), owned */
} fill;

typedef struct fill_pair {
	int64_t f, v;          /* the featured node, the filled node's row in the chunk */
} fill_pair;

static int pair_cmp(const void *a, const void *b)
{
	const fill_pair *x = a, *y = b;
	return x->f != y->f ? (x->f < y->f ? -1 : 1) : (x->v > y->v) - (x->v < y->v);
}

/* ---------------------------------------------------------------- sources */

/* Is relation r (src t, dst f) the reverse of another relation the dataset holds, from f to t
 * ("rev_X" beside "X")? Then that one (stored with t's rows) is used and r skipped. */
static bool has_reverse(const burrow_hetero *h, int r)
{
	const burrow_relation *a = &h->rel[r];
	for (int k = 0; k < h->num_relations; k++) {
		const burrow_relation *b = &h->rel[k];
		if (b->src_type != a->dst_type || b->dst_type != a->src_type)
			continue;
		if ((!strncmp(b->name, "rev_", 4) && !strcmp(b->name + 4, a->name)) ||
		    (!strncmp(a->name, "rev_", 4) && !strcmp(a->name + 4, b->name)))
			return true;
	}
	return false;
}

/* The relations joining t to a type with features at this round's start (now[]), into src[]. */
static int fill_sources(const fill *F, const bool *now, int t, fill_src *src, int *k)
{
	const burrow_hetero *h = F->h;
	*k = 0;
	for (int r = 0; r < h->num_relations; r++) {
		const burrow_relation *x = &h->rel[r];
		const int f = x->dst_type == t ? x->src_type : x->src_type == t ? x->dst_type : -1;
		if (f < 0 || f == t || !now[f] || (x->src_type == t && has_reverse(h, r)))
			continue;
		if (*k && F->dim[f] != F->dim[src[0].f])
			return bw_err(BURROW_E_FORMAT,
				      "%s: fill mean: type %s neighbors types with features of different widths (%s %lld, %s %lld)",
				      F->dir, h->type_names[t], h->type_names[src[0].f], (long long)F->dim[src[0].f],
				      h->type_names[f], (long long)F->dim[f]);
		src[*k] = (fill_src){.rel = r, .f = f};
		if (x->dst_type == t)
			src[*k].g = x->graph;
		(*k)++;
	}
	return 0;
}

/* The transpose's sink: indptr and indices appended to two scratch files. */
typedef struct tr_sink {
	int fd[2];
	int width;
	const char *name;
} tr_sink;

static int tr_indptr(void *u, const int64_t *o, size_t n)
{
	const tr_sink *s = u;
	return bw_write_all(s->fd[0], o, n * sizeof *o, s->name);
}

static int tr_indices(void *u, const void *ids, size_t n)
{
	const tr_sink *s = u;
	return bw_write_all(s->fd[1], ids, n * (size_t)s->width, s->name);
}

/* Relation x's edges (rows of f, ids of t) into b keyed by t, in chunks. */
static int feed_transpose(const burrow_relation *x, burrow_csr_builder *b)
{
	int64_t *s = bw_malloc(FILL_EDGE_CHUNK * sizeof *s), *d = bw_malloc(FILL_EDGE_CHUNK * sizeof *d);
	size_t k = 0;
	int st = s && d ? 0 : BURROW_E_NOMEM;
	for (int64_t u = 0; u < x->graph.num_nodes && !st; u++)
		for (int64_t j = x->graph.indptr[u]; j < x->graph.indptr[u + 1] && !st; j++) {
			s[k] = burrow_csr_index(&x->graph, j);
			d[k] = u;
			if (++k == FILL_EDGE_CHUNK) {
				st = burrow_csr_builder_add(b, s, d, k);
				k = 0;
			}
		}
	if (!st && k)
		st = burrow_csr_builder_add(b, s, d, k);
	bw_free(s);
	bw_free(d);
	return st;
}

/* Map the first len bytes of fd read-only (len 0: no map). */
static int map_scratch(int fd, size_t len, void **p, const char *name)
{
	*p = NULL;
	if (!len)
		return 0;
	void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		return bw_err_errno(errno, name, "mmap a scratch file");
	*p = m;
	return 0;
}

/* s's relation stored with f's rows: its transpose (rows of t) built under the budget. */
static int transpose(const fill *F, int t, fill_src *s)
{
	const burrow_relation *x = &F->h->rel[s->rel];
	const int64_t nt = F->h->type_nodes[t], nf = F->h->type_nodes[s->f];
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.drop_self_loops = false; /* (u, u) joins two types' nodes: not a loop */
	co.mem_bytes = F->mem / 2;
	co.spill_dir = F->dir;
	burrow_csr_builder *b = NULL;
	tr_sink k = {.fd = {-1, -1}, .name = "the fill's transposed relation"};
	int64_t e = 0;
	int st = burrow_csr_builder_open(&b, BW_MAX(nt, nf), &co);
	if (!st && !(st = bw_scratch_fd(F->dir, ".burrow-fill-", &k.fd[0])))
		st = bw_scratch_fd(F->dir, ".burrow-fill-", &k.fd[1]);
	k.width = BW_MAX(nt, nf) < ((int64_t)1 << 31) ? 4 : 8;
	if (!st)
		st = feed_transpose(x, b);
	const bw_csr_sink sink = {.indptr = tr_indptr, .indices = tr_indices, .user = &k};
	if (!st)
		st = bw_csr_builder_stream(b, &sink, &e, &k.width);
	s->len[0] = (size_t)(BW_MAX(nt, nf) + 1) * sizeof(int64_t);
	s->len[1] = (size_t)e * (size_t)k.width;
	if (!st && !(st = map_scratch(k.fd[0], s->len[0], &s->map[0], k.name)))
		st = map_scratch(k.fd[1], s->len[1], &s->map[1], k.name);
	s->g = (burrow_csr){.num_nodes = nt, .num_edges = e, .indptr = s->map[0], .indices = s->map[1],
			    .index_width = k.width};
	for (int i = 0; i < 2; i++)
		if (k.fd[i] >= 0)
			close(k.fd[i]);
	burrow_csr_builder_close(b);
	return st;
}

static void sources_free(fill_src *src, int k)
{
	for (int i = 0; i < k; i++)
		for (int j = 0; j < 2; j++)
			if (src[i].map[j])
				munmap(src[i].map[j], src[i].len[j]);
}

/* ---------------------------------------------------------------- the mean, chunk by chunk */

/* Add the rows of the pairs (sorted by featured node, so the file is read in order) to acc. */
static void apply_pairs(const fill_rows *x, fill_pair *p, size_t n, float *acc, int64_t *cnt)
{
	qsort(p, n, sizeof *p, pair_cmp);
	const int64_t dim = x->dim;
	for (size_t i = 0; i < n; i++) {
		float *a = acc + p[i].v * dim;
		if (x->t == BURROW_DTYPE_F16) {
			const uint16_t *r = (const uint16_t *)x->m.data + p[i].f * dim;
			for (int64_t c = 0; c < dim; c++)
				a[c] += bw_f16_to_f32(r[c]);
		} else {
			const float *r = (const float *)x->m.data + p[i].f * dim;
			for (int64_t c = 0; c < dim; c++)
				a[c] += r[c];
		}
		cnt[p[i].v]++;
	}
	bw_npy_map_drop(&x->m);
}

/* Source s's contribution to the rows [v0, v1) of the filled type: their edges as pairs, cap at a
 * time. Each row's neighbors are added in ascending id order whatever cap is (a CSR row is sorted,
 * and a row cut between two batches keeps its smaller ids in the first), so --mem never changes
 * the bytes. */
static void accumulate(const fill_src *s, const fill_rows *x, int64_t v0, int64_t v1, fill_pair *p, size_t cap,
		       float *acc, int64_t *cnt)
{
	size_t n = 0;
	for (int64_t v = v0; v < v1; v++)
		for (int64_t j = s->g.indptr[v]; j < s->g.indptr[v + 1]; j++) {
			p[n++] = (fill_pair){.f = burrow_csr_index(&s->g, j), .v = v - v0};
			if (n == cap) {
				apply_pairs(x, p, n, acc, cnt);
				n = 0;
			}
		}
	if (n)
		apply_pairs(x, p, n, acc, cnt);
}

/* Type t's means from src[0..k) written to features/<t>.npy (float16), rows in chunks. */
static int write_means(fill *F, int t, fill_src *src, int k, fill_rows *x)
{
	const int64_t n = F->h->type_nodes[t], dim = F->dim[src[0].f];
	const size_t row = (size_t)dim * sizeof(float) + sizeof(int64_t) + (size_t)dim * sizeof(uint16_t);
	const int64_t per = BW_MAX(1, BW_MIN(n, (int64_t)(F->mem / 2 / row)));
	const size_t cap = BW_MAX((size_t)1024, F->mem / 4 / sizeof(fill_pair));
	float *acc = bw_malloc((size_t)per * (size_t)dim * sizeof *acc);
	int64_t *cnt = bw_malloc((size_t)per * sizeof *cnt);
	uint16_t *out = bw_malloc((size_t)per * (size_t)dim * sizeof *out);
	fill_pair *p = bw_malloc(cap * sizeof *p);
	char rel[BURROW_MAX_NAME + 16];
	snprintf(rel, sizeof rel, "features/%s.npy", F->h->type_names[t]);
	char *path = bw_path_join(F->dir, rel), *fdir = bw_path_join(F->dir, "features");
	bw_npy_writer w;
	const int64_t shape[2] = {n, dim};
	int st = acc && cnt && out && p && path && fdir ? bw_mkdir_p(fdir, 0755) : BURROW_E_NOMEM;
	if (!st && !(st = bw_npy_writer_open(&w, path, BURROW_DTYPE_F16, 2, shape, BW_NPY_FEATURE_ALIGN))) {
		for (int64_t v0 = 0; v0 < n && !st; v0 += per) {
			const int64_t v1 = BW_MIN(n, v0 + per);
			memset(acc, 0, (size_t)(v1 - v0) * (size_t)dim * sizeof *acc);
			memset(cnt, 0, (size_t)(v1 - v0) * sizeof *cnt);
			for (int i = 0; i < k; i++)
				accumulate(&src[i], &x[i], v0, v1, p, cap, acc, cnt);
			for (int64_t v = 0; v < v1 - v0; v++)
				for (int64_t c = 0; c < dim; c++)
					out[v * dim + c] = bw_f32_to_f16(cnt[v] ? acc[v * dim + c] / (float)cnt[v] : 0.0f);
			st = bw_npy_writer_append(&w, out, (size_t)(v1 - v0) * (size_t)dim * sizeof *out);
			if (F->fn)
				F->fn(F->user, "fill", (uint64_t)v1, (uint64_t)n);
		}
		st = st ? (bw_npy_writer_abort(&w), st) : bw_npy_writer_commit(&w);
	}
	if (!st) {
		F->written[t] = path;
		F->path[t] = bw_strdup(path);
		path = NULL;
		st = F->path[t] ? 0 : BURROW_E_NOMEM;
	}
	bw_free(path);
	bw_free(fdir);
	bw_free(acc);
	bw_free(cnt);
	bw_free(out);
	bw_free(p);
	return st;
}

/* Fill type t from the types that have features now; *done tells whether any relation joins them. */
static int fill_type(fill *F, const bool *now, int t, bool *done)
{
	fill_src src[BURROW_MAX_RELATIONS];
	fill_rows x[BURROW_MAX_RELATIONS];
	int k = 0, opened = 0;
	memset(x, 0, sizeof x);
	*done = false;
	int st = fill_sources(F, now, t, src, &k);
	if (st || k == 0)
		return st;
	for (int i = 0; i < k && !st; i++)
		if (F->h->rel[src[i].rel].dst_type != t)
			st = transpose(F, t, &src[i]);
	for (; opened < k && !st; opened++) {
		bw_npy hd;
		if (!(st = bw_npy_mmap(F->path[src[opened].f], &hd, &x[opened].m))) {
			x[opened].t = hd.dtype;
			x[opened].dim = hd.ndim == 2 ? hd.shape[1] : 0;
		}
	}
	if (!st) {
		F->dim[t] = F->dim[src[0].f];
		st = write_means(F, t, src, k, x);
	}
	for (int i = 0; i < opened; i++)
		bw_npy_unmap(&x[i].m);
	sources_free(src, k);
	if (!st)
		*done = F->filled[t] = true;
	else
		F->dim[t] = 0;
	return st;
}

/* ---------------------------------------------------------------- meta.json */

/* meta.json rewritten atomically: each filled type's feat_dim, feat_dtype float16, "fill": "mean". */
static int update_meta(const fill *F)
{
	char *path = bw_path_join(F->dir, "meta.json"), *text = NULL, *out = NULL;
	cJSON *j = NULL;
	int st = path ? bw_read_text(path, (size_t)16 << 20, &text) : BURROW_E_NOMEM;
	(void)bw_json_nomem();
	if (!st && !(j = cJSON_Parse(text)))
		st = bw_json_nomem() ? BURROW_E_NOMEM : bw_err(BURROW_E_FORMAT, "%s: not JSON any more", path);
	const cJSON *types = j ? cJSON_GetObjectItemCaseSensitive(j, "node_types") : NULL;
	for (int t = 0; !st && t < F->h->num_types; t++) {
		cJSON *o = cJSON_GetArrayItem(types, t);
		if (!F->filled[t])
			continue;
		if (!cJSON_IsObject(o)) {
			st = bw_err(BURROW_E_FORMAT, "%s: node type %d changed while it was filled", path, t);
			break;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(o, "feat_dim");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "feat_dtype");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "features");
		cJSON_DeleteItemFromObjectCaseSensitive(o, "fill");
		cJSON_AddNumberToObject(o, "feat_dim", (double)F->dim[t]);
		cJSON_AddStringToObject(o, "feat_dtype", "float16");
		cJSON_AddStringToObject(o, "fill", "mean");
	}
	if (!st && (!(out = cJSON_Print(j)) || bw_json_nomem()))
		st = bw_err(BURROW_E_NOMEM, "%s: out of memory", path);
	if (!st)
		st = bw_write_text_atomic(path, out);
	cJSON_free(out);
	cJSON_Delete(j);
	bw_free(text);
	bw_free(path);
	return st;
}

/* ---------------------------------------------------------------- the whole */

static int fill_open(fill *F)
{
	int st = burrow_dataset_open(&F->ds, F->dir);
	if (st)
		return st;
	if (!(F->h = burrow_dataset_hetero(F->ds)))
		return bw_err(BURROW_E_INVAL, "%s: fill mean is for typed datasets (format version 2); this one has one "
			      "node type", F->dir);
	for (int t = 0; t < F->h->num_types; t++) {
		burrow_type_info ti;
		if ((st = burrow_dataset_type_info(F->ds, t, &ti)))
			return st;
		F->dim[t] = ti.feat_dim;
		if (ti.feat_dim && !(F->path[t] = bw_strdup(ti.features_path)))
			return BURROW_E_NOMEM;
	}
	return 0;
}

/* Rounds: in each, every type without features that a relation joins to a type with features
 * (at the round's start) gets the mean of those neighbors' rows; until a round fills none. */
static int fill_rounds(fill *F, int *count)
{
	int st = 0;
	*count = 0;
	for (bool grew = true; grew && !st;) {
		bool now[BURROW_MAX_TYPES];
		for (int t = 0; t < F->h->num_types; t++)
			now[t] = F->dim[t] > 0;
		grew = false;
		for (int t = 0; t < F->h->num_types && !st; t++) {
			bool done = false;
			if (!now[t] && !(st = fill_type(F, now, t, &done)) && done) {
				grew = true;
				(*count)++;
			}
		}
	}
	return st;
}

int bw_typed_fill_mean(const char *dir, size_t mem_bytes, burrow_progress_fn fn, void *user)
{
	fill F = {.dir = dir, .mem = mem_bytes ? mem_bytes : bw_half_memory(), .fn = fn, .user = user};
	int count = 0;
	if (!dir || !*dir)
		return bw_err(BURROW_E_INVAL, "fill mean: no dataset given");
	F.mem = BW_MAX(F.mem, (size_t)1 << 20);
	int st = fill_open(&F);
	if (!st)
		st = fill_rounds(&F, &count);
	for (int t = 0; !st && t < F.h->num_types; t++)
		if (!F.dim[t])
			bw_log(BURROW_LOG_WARN, "%s: fill mean: no relation joins type %s to a type with features; it stays "
			       "without", dir, F.h->type_names[t]);
	if (!st && count)
		st = update_meta(&F);
	burrow_dataset_close(F.ds);
	for (int t = 0; t < BURROW_MAX_TYPES; t++) {
		if (st && F.written[t])
			(void)unlink(F.written[t]);
		bw_free(F.written[t]);
		bw_free(F.path[t]);
	}
	return st;
}
