/* lsc.c: burrow prep mag240m|igbh: OGB-LSC's and IGB's processed/ npy trees into a typed dataset, features read in place. */
#define _GNU_SOURCE
#include "../graph/dataset_internal.h"
#include "dsio.h"
#include "pt.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

/* The two layouts: MAG240M (OGB-LSC: processed/<src>___<rel>___<dst>/edge_index.npy [2, E], counts
 * and classes in meta.pt, the split in split_dict.pt) and IGBH (IGB: processed/<src>__<rel>__<dst>/
 * edge_index.npy [E, 2], every type's node_feat.npy, the split the first 60 / 20 / 20 % of papers). */
#define IGB_DIM 1024 /* IGB's feature width (raw node_feat.npy rows) */

typedef struct lsc {
	const burrow_prep_opts *o;
	bool igbh;
	const char *sep;                   /* "___" or "__" */
	char root[PATH_MAX];               /* the folder holding processed/, absolute */
	bw_hplan *h;
	char feat[BURROW_MAX_TYPES][PATH_MAX]; /* a type's node_feat.npy (absolute), "" when none */
	bool raw[BURROW_MAX_TYPES];        /* node_feat.npy without an .npy header (IGB large, full): float32 [n, 1024] */
	int32_t classes;
	burrow_writer *w;
} lsc;

/* root/processed/<rel> into buf; false when it does not fit. */
static bool proc_path(const lsc *L, char *buf, size_t cap, const char *rel)
{
	int n = snprintf(buf, cap, "%s/processed/%s", L->root, rel);
	return n > 0 && (size_t)n < cap;
}

static bool is_file(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* A type named in the layout; added when new (count from n, or -1 until known). */
static int type_of(lsc *L, const char *name, size_t len, int64_t n, int *t)
{
	bw_hplan *h = L->h;
	for (*t = 0; *t < h->num_types; (*t)++)
		if (strlen(h->type[*t].name) == len && !strncmp(h->type[*t].name, name, len))
			return 0;
	if (h->num_types == BURROW_MAX_TYPES || len == 0 || len >= BURROW_MAX_NAME)
		return bw_err(BURROW_E_FORMAT, "%s/processed: type '%.*s': more than %d types, or a name of more than %d "
			      "characters", L->root, (int)BW_MIN(len, 200), name, BURROW_MAX_TYPES, BURROW_MAX_NAME - 1);
	memcpy(h->type[*t].name, name, len);
	h->type[*t].name[len] = '\0';
	h->type[*t].n = n;
	h->num_types++;
	return 0;
}

/* processed/<src><sep><rel><sep><dst>/edge_index.npy: a relation (its types added as seen). */
static int add_relation(lsc *L, const char *d)
{
	const char *a = strstr(d, L->sep), *b = a ? strstr(a + strlen(L->sep), L->sep) : NULL;
	const size_t k = strlen(L->sep);
	char rel[PATH_MAX];
	if (!a || !b || (L->igbh && strstr(d, "___")))
		return 0;
	if (!proc_path(L, rel, sizeof rel, d) || strlen(rel) + 16 >= sizeof rel)
		return bw_err(BURROW_E_INVAL, "%s: path too long", L->root);
	strcat(rel, "/edge_index.npy");
	if (!is_file(rel))
		return 0;
	bw_hplan *h = L->h;
	if (h->num_relations == BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_FORMAT, "%s/processed: more than %d relations", L->root, BURROW_MAX_RELATIONS);
	bw_hrel *r = &h->rel[h->num_relations];
	const size_t nl = (size_t)(b - a) - k;
	int st = type_of(L, d, (size_t)(a - d), -1, &r->src);
	if (!st)
		st = type_of(L, b + k, strlen(b + k), -1, &r->dst);
	if (!st && (nl == 0 || nl >= BURROW_MAX_NAME))
		st = bw_err(BURROW_E_FORMAT, "%s: relation name of %zu characters, expected 1 to %d", rel, nl,
			    BURROW_MAX_NAME - 1);
	if (st)
		return st;
	memcpy(r->name, a + k, nl);
	r->name[nl] = '\0';
	r->kind = BW_IN_NPY;
	r->listed = -1;
	if ((st = bw_member_file(&r->edges, rel)))
		return st;
	h->num_relations++;
	return 0;
}

/* The order of OGB's sorted (head, relation, tail) tuples (as prep ogbn-mag writes them). */
static int rel_cmp(const bw_hplan *h, const bw_hrel *x, const bw_hrel *y)
{
	int c = strcmp(h->type[x->src].name, h->type[y->src].name);
	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : strcmp(h->type[x->dst].name, h->type[y->dst].name);
}

/* Types sorted by name and relations by triplet, as OGB's heterograph readers order them. */
static void sort_plan(bw_hplan *h, char (*feat)[PATH_MAX], bool *raw)
{
	bool rw[BURROW_MAX_TYPES];
	memcpy(rw, raw, sizeof rw);
	int order[BURROW_MAX_TYPES], where[BURROW_MAX_TYPES];
	bw_htype *ty = bw_malloc(sizeof h->type);
	char (*fp)[PATH_MAX] = bw_malloc(BURROW_MAX_TYPES * sizeof *fp);
	for (int i = 0; i < h->num_types; i++) {
		int j = i;
		for (; j > 0 && strcmp(h->type[order[j - 1]].name, h->type[i].name) > 0; j--)
			order[j] = order[j - 1];
		order[j] = i;
	}
	if (ty && fp) {
		memcpy(ty, h->type, sizeof h->type);
		memcpy(fp, feat, BURROW_MAX_TYPES * sizeof *fp);
		for (int i = 0; i < h->num_types; i++) {
			h->type[i] = ty[order[i]];
			memcpy(feat[i], fp[order[i]], PATH_MAX);
			raw[i] = rw[order[i]];
			where[order[i]] = i;
		}
		h->target = h->target >= 0 ? where[h->target] : -1;
		for (int r = 0; r < h->num_relations; r++) {
			h->rel[r].src = where[h->rel[r].src];
			h->rel[r].dst = where[h->rel[r].dst];
		}
	}
	for (int i = 1; i < h->num_relations; i++) { /* insertion sort: at most 32 */
		bw_hrel x = h->rel[i];
		int j = i;
		for (; j > 0 && rel_cmp(h, &h->rel[j - 1], &x) > 0; j--)
			h->rel[j] = h->rel[j - 1];
		h->rel[j] = x;
	}
	for (int r = 0; r < h->num_relations; r++) { /* a member's src points into itself: re-aim the copies */
		char path[sizeof h->rel[r].edges.path];
		memcpy(path, h->rel[r].edges.path, sizeof path);
		bw_member_file(&h->rel[r].edges, path);
	}
	bw_free(ty);
	bw_free(fp);
}

/* ---------------------------------------------------------------- types and their features */

/* Whether the file starts with the .npy magic; its size. */
static int npy_magic(const char *p, bool *npy, int64_t *size)
{
	char m[6] = {0};
	int fd;
	int st = bw_open_input(p, 0, &fd, size);
	if (st)
		return st;
	*npy = *size >= 6 && pread(fd, m, 6, 0) == 6 && !memcmp(m, "\x93NUMPY", 6);
	close(fd);
	return 0;
}

/* IGB's paper labels: node_label_19.npy, or node_label_2K.npy with 2983 classes. */
static const char *label_file(const lsc *L)
{
	return !L->igbh ? "paper/node_label.npy" : L->classes == 19 ? "paper/node_label_19.npy" : "paper/node_label_2K.npy";
}

/* The papers' count from their labels, as IGB's loader reads them: an .npy [N], or raw float32 [N]
 * (large, full); -1 when the file is missing. *from: the file, for messages. */
static int paper_count(const lsc *L, int64_t *n, char *from, size_t cap)
{
	bw_npy hd;
	bool npy;
	int64_t size;
	*n = -1;
	if (!proc_path(L, from, cap, label_file(L)) || !is_file(from))
		return 0;
	int st = npy_magic(from, &npy, &size);
	if (!st && npy && !(st = bw_npy_open(from, &hd, NULL)))
		*n = hd.ndim >= 1 ? hd.shape[0] : -1;
	else if (!st && !npy)
		*n = size % 4 ? -1 : size / 4;
	return st;
}

/* IGB large's and full's node_feat.npy without an .npy header: raw float32 rows of 1024, as IGB's
 * loader memmaps them. The count is the type's when known (the papers': their labels'), else the
 * file's size over 4096; a size that does not fit is refused naming both. */
static int raw_features(lsc *L, int t, const char *p, int64_t size)
{
	const int64_t row = IGB_DIM * 4;
	char from[PATH_MAX] = "";
	int64_t n = L->h->type[t].n;
	int st = 0;
	if (n < 0 && t == L->h->target && (st = paper_count(L, &n, from, sizeof from)))
		return st;
	if (n >= 0 && size != n * row)
		return bw_err(BURROW_E_FORMAT, "%s: %lld bytes without an .npy header; expected %lld x %d x 4 = %lld (type "
			      "%s's nodes%s%s, float32 rows of %d)", p, (long long)size, (long long)n, IGB_DIM,
			      (long long)(n * row), L->h->type[t].name, from[0] ? " by " : "", from, IGB_DIM);
	if (n < 0 && (size == 0 || size % row))
		return bw_err(BURROW_E_FORMAT, "%s: %lld bytes without an .npy header; expected a multiple of %d x 4 = %lld "
			      "(float32 rows of %d)", p, (long long)size, IGB_DIM, (long long)row, IGB_DIM);
	L->h->type[t].n = n >= 0 ? n : size / row;
	L->raw[t] = true;
	snprintf(L->feat[t], PATH_MAX, "%s", p);
	return 0;
}

/* Type t's node_feat.npy, when present: an .npy [N, D] of float16 or float32 (or, for IGB, raw
 * float32 rows: raw_features), its path kept. */
static int type_features(lsc *L, int t)
{
	char p[PATH_MAX], rel[BURROW_MAX_NAME + 32];
	bw_npy hd;
	bool npy;
	int64_t size;
	snprintf(rel, sizeof rel, "%s/node_feat.npy", L->h->type[t].name);
	if (!proc_path(L, p, sizeof p, rel) || !is_file(p))
		return 0;
	int st = npy_magic(p, &npy, &size);
	if (!st && !npy && L->igbh)
		return raw_features(L, t, p, size);
	if (st || (st = bw_npy_open(p, &hd, NULL)))
		return st;
	if (hd.ndim != 2 || hd.shape[1] < 1 || (hd.dtype != BURROW_DTYPE_F16 && hd.dtype != BURROW_DTYPE_F32))
		return bw_err(BURROW_E_FORMAT, "%s: %s with %d dimensions, expected float16 or float32 [N, D] features", p,
			      burrow_dtype_name(hd.dtype), hd.ndim);
	if (L->h->type[t].n >= 0 && hd.shape[0] != L->h->type[t].n)
		return bw_err(BURROW_E_FORMAT, "%s: %lld rows, but type %s has %lld nodes", p, (long long)hd.shape[0],
			      L->h->type[t].name, (long long)L->h->type[t].n);
	L->h->type[t].n = hd.shape[0];
	snprintf(L->feat[t], PATH_MAX, "%s", p);
	return 0;
}

/* MAG240M's meta.pt: each type's count ({"paper": N, "author": ..., "num_classes": C}). */
static int mag_meta(lsc *L)
{
	char p[PATH_MAX];
	bw_pt *pt = NULL;
	int64_t v;
	if (snprintf(p, sizeof p, "%s/meta.pt", L->root) >= (int)sizeof p)
		return bw_err(BURROW_E_INVAL, "%s: path too long", L->root);
	int st = bw_pt_open(&pt, p, p, -1);
	for (int t = 0; t < L->h->num_types && !st; t++)
		if (!(st = bw_pt_get_int(pt, L->h->type[t].name, &v)) && v < 0)
			st = bw_err(BURROW_E_FORMAT, "%s: '%s' is %lld, not a count", p, L->h->type[t].name, (long long)v);
		else if (!st)
			L->h->type[t].n = v;
	if (!st && !(st = bw_pt_get_int(pt, "num_classes", &v)) && (v < 1 || v > BW_MAX_CLASSES))
		st = bw_err(BURROW_E_FORMAT, "%s: 'num_classes' is %lld, expected 1 to %d", p, (long long)v, BW_MAX_CLASSES);
	if (!st)
		L->classes = (int32_t)v;
	bw_pt_close(pt);
	return st;
}

/* processed/: the relations (folders with edge_index.npy), the types they name, each type's
 * count and features; the target type "paper". */
static int read_layout(lsc *L)
{
	char p[PATH_MAX];
	int st = 0;
	if (!proc_path(L, p, sizeof p, ""))
		return bw_err(BURROW_E_INVAL, "%s: path too long", L->root);
	DIR *d = opendir(p);
	if (!d)
		return bw_err_errno(errno, p, L->igbh ? "open IGB's processed/ folder" : "open OGB-LSC's processed/ folder");
	const struct dirent *e;
	while (!st && (e = readdir(d)))
		if (e->d_name[0] != '.')
			st = add_relation(L, e->d_name);
	closedir(d);
	if (!st && L->h->num_relations == 0)
		st = bw_err(BURROW_E_FORMAT, "%s: no <src>%s<rel>%s<dst>/edge_index.npy folder", p, L->sep, L->sep);
	int t;
	if (!st && !(st = type_of(L, "paper", 5, -1, &t)))
		L->h->target = t;
	if (!st && !L->igbh)
		st = mag_meta(L);
	for (t = 0; t < L->h->num_types && !st; t++)
		if (!(st = type_features(L, t)) && L->h->type[t].n < 0)
			st = bw_err(BURROW_E_FORMAT, "%s/processed/%s/node_feat.npy: missing, and nothing else gives the count of "
				    "type %s", L->root, L->h->type[t].name, L->h->type[t].name);
	if (!st && !L->feat[L->h->target][0])
		st = bw_err(BURROW_E_NOTFOUND, "%s/processed/paper/node_feat.npy: missing (the papers' features)", L->root);
	if (!st)
		sort_plan(L->h, L->feat, L->raw);
	return st;
}

/* ---------------------------------------------------------------- labels and splits */

/* IGB large's and full's labels without an .npy header: raw float32 [n] (as IGB's loader memmaps
 * them), whole numbers; NaN or negative: unlabelled (-1). */
static int raw_labels(const char *p, int64_t size, int64_t n, int32_t **out)
{
	enum { CHUNK = 1 << 16 };
	float *buf = NULL;
	int32_t *y = NULL;
	int fd = -1;
	int st = size != n * 4 ? bw_err(BURROW_E_FORMAT, "%s: %lld bytes without an .npy header; expected %lld x 4 = %lld "
					"(float32 labels of the %lld papers)", p, (long long)size, (long long)n,
					(long long)(n * 4), (long long)n)
			       : 0;
	if (!st && (!(buf = bw_malloc(CHUNK * sizeof *buf)) || !(y = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *y))))
		st = BURROW_E_NOMEM;
	if (!st)
		st = bw_open_input(p, 0, &fd, NULL);
	for (int64_t a = 0; !st && a < n; a += CHUNK) {
		const int64_t c = BW_MIN(CHUNK, n - a);
		st = bw_pread_all(fd, buf, (size_t)c * sizeof *buf, a * 4, p);
		for (int64_t i = 0; !st && i < c; i++) {
			const float v = buf[i];
			if (v != v || v < 0)
				y[a + i] = -1;
			else if (v != floorf(v) || v > 2147483647.0f)
				st = bw_err(BURROW_E_FORMAT, "%s: node %lld's label %g is not a class id", p, (long long)(a + i),
					    (double)v);
			else
				y[a + i] = (int32_t)v;
		}
	}
	if (fd >= 0)
		close(fd);
	bw_free(buf);
	if (st)
		bw_free(y);
	else
		*out = y;
	return st;
}

static int put_labels(lsc *L)
{
	char p[PATH_MAX];
	const int tt = L->h->target;
	bw_member m;
	int32_t *y = NULL;
	const int64_t n = L->h->type[tt].n;
	bool npy = true;
	int64_t size;
	if (!proc_path(L, p, sizeof p, label_file(L)))
		return bw_err(BURROW_E_INVAL, "%s: path too long", L->root);
	int st = L->igbh && is_file(p) ? npy_magic(p, &npy, &size) : 0;
	if (!st && !npy)
		st = raw_labels(p, size, n, &y);
	else if (!st && !(st = bw_member_file(&m, p)))
		st = bw_labels_npy(&m.src, n, &y);
	for (int64_t v = 0; v < n && !st; v++)
		if (y[v] >= L->classes)
			st = bw_err(BURROW_E_FORMAT, "%s: node %lld has class %d, but there are %d classes", p, (long long)v, y[v],
				    L->classes);
	if (!st)
		st = burrow_writer_put_labels(L->w, y, n, L->classes);
	bw_free(y);
	return st;
}

/* One of split_dict.pt's id tensors into split s. */
static int put_ids(lsc *L, bw_pt *pt, const char *p, const char *key, int s, bool dev)
{
	bw_pt_tensor x;
	int st = bw_pt_get(pt, key, &x);
	if (!st && (x.ndim != 1 || x.dtype != BURROW_DTYPE_I64))
		st = bw_err(BURROW_E_FORMAT, "%s: '%s' is not a vector of node ids", p, key);
	int64_t *ids = x.data, k = 0;
	for (int64_t i = 0; !st && i < x.numel; i++) /* "test": OGB-LSC's test-dev is entries i % 5 < 3 */
		if (!dev || i % 5 < 3)
			ids[k++] = ids[i];
	if (!st)
		st = burrow_writer_put_split(L->w, s, ids, k);
	bw_free(x.data);
	return st;
}

/* MAG240M: split_dict.pt's train, valid and test-dev (or test-dev cut from test as OGB-LSC cuts it). */
static int mag_splits(lsc *L)
{
	char p[PATH_MAX];
	bw_pt *pt = NULL;
	if (snprintf(p, sizeof p, "%s/split_dict.pt", L->root) >= (int)sizeof p)
		return bw_err(BURROW_E_INVAL, "%s: path too long", L->root);
	int st = bw_pt_open(&pt, p, p, -1);
	if (!st)
		st = put_ids(L, pt, p, "train", BURROW_SPLIT_TRAIN, false);
	if (!st)
		st = put_ids(L, pt, p, "valid", BURROW_SPLIT_VALID, false);
	if (!st)
		st = bw_pt_has(pt, "test-dev") ? put_ids(L, pt, p, "test-dev", BURROW_SPLIT_TEST, false)
					       : put_ids(L, pt, p, "test", BURROW_SPLIT_TEST, true);
	bw_pt_close(pt);
	return st;
}

/* IGBH: the first 60 % of papers train, the next 20 % valid, the rest test (IGB's loader). */
static int igbh_splits(lsc *L)
{
	const int64_t n = L->h->type[L->h->target].n, a = (int64_t)((double)n * 0.6), b = (int64_t)((double)n * 0.2);
	int64_t *ids = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *ids);
	int st = ids ? 0 : BURROW_E_NOMEM;
	for (int64_t v = 0; v < n && ids; v++)
		ids[v] = v;
	if (!st && a)
		st = burrow_writer_put_split(L->w, BURROW_SPLIT_TRAIN, ids, a);
	if (!st && b)
		st = burrow_writer_put_split(L->w, BURROW_SPLIT_VALID, ids + a, b);
	if (!st && n - a - b)
		st = burrow_writer_put_split(L->w, BURROW_SPLIT_TEST, ids + a + b, n - a - b);
	bw_free(ids);
	return st;
}

/* ---------------------------------------------------------------- the whole */

static int source_json(const lsc *L, char **out)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return BURROW_E_NOMEM;
	cJSON_AddStringToObject(j, "kind", L->igbh ? "igb" : "ogb-lsc");
	cJSON_AddStringToObject(j, "name", L->igbh ? "igbh" : "mag240m");
	cJSON_AddStringToObject(j, "folder", L->root);
	cJSON_AddBoolToObject(j, "features_in_place", true);
	if (L->igbh)
		cJSON_AddNumberToObject(j, "classes", L->classes);
	bw_hplan_json(L->h, j);
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (bw_json_nomem() || !s) {
		cJSON_free(s);
		return bw_err(BURROW_E_NOMEM, "out of memory formatting meta.json's source");
	}
	*out = s;
	return 0;
}

/* The typed dataset written and committed: graph, features named in place, labels, splits. */
static int write_dataset(lsc *L, const char *out)
{
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = L->o->overwrite;
	char *src = NULL;
	int st = burrow_writer_open(&L->w, out, L->igbh ? "igbh" : "mag240m", &wo);
	if (!st)
		st = bw_hetero_put(L->w, L->h);
	for (int t = 0; t < L->h->num_types && !st; t++)
		if (L->feat[t][0])
			st = L->raw[t] ? bw_writer_type_features_raw(L->w, t, L->feat[t], IGB_DIM, BURROW_DTYPE_F32)
				       : bw_writer_type_features_ref(L->w, t, L->feat[t]);
	if (!st)
		st = put_labels(L);
	if (!st)
		st = L->igbh ? igbh_splits(L) : mag_splits(L);
	if (!st && !(st = source_json(L, &src)))
		st = burrow_writer_set_source(L->w, src);
	cJSON_free(src);
	if (!st)
		st = burrow_writer_commit(L->w);
	else
		burrow_writer_abort(L->w);
	L->w = NULL;
	return st;
}

int bw_prep_layout(const char *layout, const char *source, const burrow_prep_opts *o, const char *out,
		   const char *spill, size_t mem)
{
	lsc *L = bw_calloc(1, sizeof *L);
	if (!L || !(L->h = bw_calloc(1, sizeof *L->h))) {
		bw_free(L);
		return BURROW_E_NOMEM;
	}
	L->o = o;
	L->igbh = !strcmp(layout, "igbh");
	L->sep = L->igbh ? "__" : "___";
	L->classes = L->igbh ? (o->classes ? o->classes : 19) : 0;
	int st = 0;
	if (L->igbh && L->classes != 19 && L->classes != 2983)
		st = bw_err(BURROW_E_INVAL, "prep igbh: %d classes; IGB has 19 or 2983", L->classes);
	else if (!realpath(source, L->root))
		st = bw_err_errno(errno, source, "find the dataset folder");
	bw_hplan *h = L->h;
	h->target = -1;
	h->feat_dtype = BURROW_DTYPE_INVALID;
	h->add_reverse = o->add_reverse;
	h->fill = BURROW_FEAT_FILL_NONE; /* bw_typed_fill_mean fills after the commit, streamed */
	h->mem = mem;
	h->spill = spill;
	h->progress = o->progress;
	h->progress_user = o->progress_user;
	if (!st)
		st = read_layout(L);
	if (!st)
		st = bw_hplan_check(h);
	if (!st)
		st = write_dataset(L, out);
	if (!st && o->fill == BURROW_FEAT_FILL_MEAN)
		st = bw_typed_fill_mean(out, mem, o->progress, o->progress_user);
	bw_free(L->h);
	bw_free(L);
	return st;
}
