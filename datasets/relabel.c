/* relabel.c: import's keyed inputs: edges whose ids go through an id map (--relabel), and a
 * LINQS-style node file (--content: "id f_1 ... f_D label" a line) read into memory. */
#include "../graph/dataset_internal.h"
#include "dsio.h"

#include <stdio.h>

#define EDGE_CHUNK ((size_t)1 << 16)

/* Where mapped edges go: the builder (NULL in the pass that only fills the map). */
typedef struct sink_ctx {
	bw_idmap *map;
	burrow_csr_builder *b;
	bw_edge_tally *tally;
	int64_t *s, *d;             /* [EDGE_CHUNK] mapped ids */
	const char *name;
} sink_ctx;

static void tally_edge(bw_edge_tally *t, int64_t u, int64_t v)
{
	if (!t)
		return;
	t->max_id = BW_MAX(t->max_id, BW_MAX(u, v));
	t->self_loops += u == v;
	if (t->seen) {
		t->seen[u >> 6] |= UINT64_C(1) << (u & 63);
		t->seen[v >> 6] |= UINT64_C(1) << (v & 63);
	}
}

/* n edges of keys: mapped (and added when there is no builder), then added to the builder. */
static int map_edges(void *ctx, const int64_t *src, const int64_t *dst, size_t n)
{
	sink_ctx *c = ctx;
	const bool add = c->b == NULL;
	int st = 0;
	for (size_t j = 0; j < n && !st; j++) {
		if (!(st = bw_idmap_num(c->map, src[j], add, &c->s[j])))
			st = bw_idmap_num(c->map, dst[j], add, &c->d[j]);
		if (!st && (c->s[j] < 0 || c->d[j] < 0))
			st = bw_err(BURROW_E_INVAL, "%s: edge %lld's ids changed between the passes", c->name, (long long)j);
		if (!st && c->b)
			tally_edge(c->tally, c->s[j], c->d[j]);
	}
	return st || !c->b ? st : burrow_csr_builder_add(c->b, c->s, c->d, n);
}

int bw_relabel_npy_edges(const bw_src *src, bw_idmap *map, burrow_csr_builder *b, int64_t *count,
			 burrow_progress_fn fn, void *user, bw_edge_tally *tally)
{
	sink_ctx c = {.map = map, .b = b, .tally = tally, .name = src->name};
	c.s = bw_malloc(EDGE_CHUNK * sizeof *c.s);
	c.d = bw_malloc(EDGE_CHUNK * sizeof *c.d);
	int st = c.s && c.d ? 0 : BURROW_E_NOMEM;
	uint64_t *seen = tally->seen;
	tally->seen = NULL; /* the reader would mark the keys; map_edges marks the ids */
	if (!st)
		st = bw_edges_npy_to(src, INT64_MAX, INT64_MAX, map_edges, &c, count, fn, user, NULL);
	tally->seen = seen;
	tally->max_id = bw_idmap_count(map) - 1;
	bw_free(c.s);
	bw_free(c.d);
	return st;
}

int bw_relabel_text_edges(bw_csv *c, bw_idmap *map, burrow_csr_builder *b, int64_t *count, burrow_progress_fn fn,
			  void *user, bw_edge_tally *tally)
{
	const char *start[2];
	size_t len[2], k = 0;
	bool more;
	int64_t e = 0, *s = bw_malloc(EDGE_CHUNK * sizeof *s), *d = bw_malloc(EDGE_CHUNK * sizeof *d);
	int st = s && d ? 0 : BURROW_E_NOMEM;
	while (!st && !(st = bw_csv_next_line(c, &more)) && more) {
		if ((st = bw_csv_tokens(c, start, len, 2, 2, NULL)) ||
		    (st = bw_idmap_text(map, start[0], len[0], !b, &s[k])) ||
		    (st = bw_idmap_text(map, start[1], len[1], !b, &d[k])))
			break;
		if (s[k] < 0 || d[k] < 0) {
			st = bw_csv_err(c, BURROW_E_INVAL, "an id changed between the passes over the file");
			break;
		}
		if (b)
			tally_edge(tally, s[k], d[k]);
		else
			tally->self_loops += s[k] == d[k];
		e++;
		if (++k == EDGE_CHUNK) {
			st = b ? burrow_csr_builder_add(b, s, d, k) : 0;
			k = 0;
			if (fn && b)
				fn(user, "edges", bw_rd_consumed(c->rd), bw_rd_size(c->rd));
		}
	}
	if (!st && k && b)
		st = burrow_csr_builder_add(b, s, d, k);
	*count = e;
	tally->max_id = bw_idmap_count(map) - 1;
	bw_free(s);
	bw_free(d);
	return st;
}

/* ---------------------------------------------------------------- --content */

void bw_content_free(bw_content *ct)
{
	bw_free(ct->ids);
	bw_free(ct->feat);
	bw_free(ct->label);
	for (int32_t k = 0; ct->class_names && k < ct->num_classes; k++)
		bw_free(ct->class_names[k]);
	bw_free(ct->class_names);
	memset(ct, 0, sizeof *ct);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The labels' keys to class ids: integers as they are (-1: none), names numbered in sorted order. */
static int content_classes(bw_content *ct, bw_idmap *names, const char *path)
{
	const int64_t k = bw_idmap_count(names);
	int32_t *cls = bw_malloc((size_t)(k ? k : 1) * sizeof *cls);
	if (!cls)
		return BURROW_E_NOMEM;
	int st = 0;
	if (!bw_idmap_strings(names)) {
		for (int64_t i = 0; i < k && !st; i++) {
			const int64_t v = bw_idmap_num_at(names, i);
			if (v < -1 || v >= BW_MAX_CLASSES)
				st = bw_err(BURROW_E_RANGE, "%s: label %lld is not a class id in [0, %d) or -1 (none)", path,
					    (long long)v, BW_MAX_CLASSES);
			cls[i] = (int32_t)v;
			ct->num_classes = BW_MAX(ct->num_classes, (int32_t)v + 1);
		}
	} else if (k > BW_MAX_CLASSES) {
		st = bw_err(BURROW_E_RANGE, "%s: %lld class names, more than the %d Burrow accepts", path, (long long)k,
			    BW_MAX_CLASSES);
	} else if (!(ct->class_names = bw_calloc((size_t)k + 1, sizeof *ct->class_names))) {
		st = BURROW_E_NOMEM;
	} else {
		for (int64_t i = 0; i < k && !st; i++)
			if (!(ct->class_names[i] = bw_strdup(bw_idmap_text_at(names, i))))
				st = BURROW_E_NOMEM;
		ct->num_classes = (int32_t)k;
		if (!st)
			qsort(ct->class_names, (size_t)k, sizeof *ct->class_names, cmp_str);
		for (int64_t i = 0; i < k && !st; i++) { /* first-seen id -> its rank among the names */
			const char *nm = bw_idmap_text_at(names, i);
			char **at = bsearch(&nm, ct->class_names, (size_t)k, sizeof *ct->class_names, cmp_str);
			cls[i] = (int32_t)(at - ct->class_names);
		}
	}
	for (int64_t r = 0; r < ct->n && !st; r++)
		ct->label[r] = cls[ct->label[r]];
	bw_free(cls);
	return st;
}

/* One line of the node file: its id (into the map, or an integer >= 0), features and label key. */
static int content_line(bw_csv *c, bw_content *ct, bw_idmap *map, bw_idmap *names, const char **start, size_t *len)
{
	int64_t found, id;
	int st = bw_csv_tokens(c, start, len, ct->dim + 2, ct->dim + 2, &found);
	if (st)
		return st;
	if (map) {
		const int64_t before = bw_idmap_count(map);
		if ((st = bw_idmap_text(map, start[0], len[0], true, &id)))
			return st;
		if (id < before)
			return bw_csv_err(c, BURROW_E_FORMAT, "id '%.*s' repeats an earlier line's", (int)BW_MIN(len[0], 40),
					  start[0]);
	} else {
		const char *next = NULL;
		if (bw_parse_i64(start[0], start[0] + len[0], &id, &next) || next != start[0] + len[0] || id < 0)
			return bw_csv_err(c, BURROW_E_FORMAT, "column 1: '%.*s' is not a node id (an integer >= 0); "
					  "--relabel takes any ids", (int)BW_MIN(len[0], 40), start[0]);
	}
	float *f = ct->feat + (size_t)ct->n * (size_t)ct->dim;
	for (int64_t j = 0; j < ct->dim; j++) {
		const char *e = start[j + 1] + len[j + 1], *next = NULL;
		if (bw_parse_f32(start[j + 1], e, &f[j], &next) || next != e)
			return bw_csv_err(c, BURROW_E_FORMAT, "column %lld: '%.*s' is not a number", (long long)j + 2,
					  (int)BW_MIN(len[j + 1], 40), start[j + 1]);
	}
	int64_t cls;
	const char *lab = start[ct->dim + 1];
	const size_t ll = len[ct->dim + 1];
	if ((st = bw_idmap_text(names, lab, ll, true, &cls)))
		return st;
	ct->ids[ct->n] = id;
	ct->label[ct->n++] = (int32_t)cls;
	return 0;
}

/* Room for one more node (its features and label) within mem bytes. */
static int content_grow(bw_content *ct, size_t *cap, size_t mem, const char *path)
{
	if ((size_t)ct->n < *cap)
		return 0;
	size_t c = *cap ? *cap * 2 : 1024;
	if (c * ((size_t)ct->dim * sizeof(float) + 12) > mem)
		return bw_err(BURROW_E_NOMEM, "%s: more than %zu nodes of %lld features do not fit in --mem (%zu bytes)", path,
			      *cap, (long long)ct->dim, mem);
	float *f = bw_realloc(ct->feat, c * (size_t)ct->dim * sizeof *f + 1);
	if (f)
		ct->feat = f;
	int64_t *i = bw_realloc(ct->ids, c * sizeof *i);
	if (i)
		ct->ids = i;
	int32_t *l = bw_realloc(ct->label, c * sizeof *l);
	if (l)
		ct->label = l;
	if (!f || !i || !l)
		return BURROW_E_NOMEM;
	*cap = c;
	return 0;
}

int bw_content_load(const char *path, bw_idmap *map, size_t mem, bw_content *ct)
{
	bw_src src = {.name = path, .path = path, .fd = -1};
	bw_csv c;
	bw_idmap *names = NULL;
	const char **start = NULL;
	size_t *len = NULL, cap = 0;
	bool more, gz = false;
	memset(ct, 0, sizeof *ct);
	int st = bw_is_gzip(path, &gz);
	if (st || (st = bw_csv_open(&c, &src, gz, 0, true)))
		return st;
	if ((st = bw_idmap_open(&names, mem)) || (st = bw_csv_next_line(&c, &more)))
		goto out;
	if (!more) {
		st = bw_err(BURROW_E_FORMAT, "%s: no nodes in it (expected 'id f_1 ... f_D label' a line)", path);
		goto out;
	}
	ct->dim = bw_csv_count_fields(&c) - 2;
	if (ct->dim < 0) {
		st = bw_csv_err(&c, BURROW_E_FORMAT, "expected 'id f_1 ... f_D label' (at least 2 columns), found 1");
		goto out;
	}
	start = bw_malloc((size_t)(ct->dim + 2) * sizeof *start);
	len = bw_malloc((size_t)(ct->dim + 2) * sizeof *len);
	if (!start || !len)
		st = BURROW_E_NOMEM;
	while (!st && more) {
		if ((st = content_grow(ct, &cap, mem, path)) || (st = content_line(&c, ct, map, names, start, len)))
			break;
		st = bw_csv_next_line(&c, &more);
	}
	if (!st)
		st = content_classes(ct, names, path);
out:
	if (st)
		bw_content_free(ct);
	bw_free(start);
	bw_free(len);
	bw_idmap_close(names);
	bw_csv_close(&c);
	return st;
}

/* Node v's row of the node file: row[v], -1 when it has none. Repeats are BURROW_E_FORMAT. */
int bw_content_rows(const bw_content *ct, const char *path, bool relabel, int64_t n, int64_t **row)
{
	int64_t *r = bw_malloc((size_t)(n ? n : 1) * sizeof *r);
	if (!r)
		return BURROW_E_NOMEM;
	for (int64_t v = 0; v < n; v++)
		r[v] = -1;
	for (int64_t i = 0; i < ct->n; i++) {
		const int64_t v = relabel ? i : ct->ids[i];
		if (v >= n) {
			bw_free(r);
			return bw_err(BURROW_E_RANGE, "%s: node %lld of the file has id %lld, outside [0, %lld)", path,
				      (long long)i + 1, (long long)v, (long long)n);
		}
		if (r[v] >= 0) {
			bw_free(r);
			return bw_err(BURROW_E_FORMAT, "%s: nodes %lld and %lld of the file (in its order) both have id %lld",
				      path, (long long)r[v] + 1, (long long)i + 1, (long long)v);
		}
		r[v] = i;
	}
	*row = r;
	return 0;
}
