/* hetero.c: typed graphs (dataset format version 2, docs/format.md): names, the check of a
 * typed graph, and the reader of a version-2 directory against its meta.json. */
#define _GNU_SOURCE
#include "dataset_internal.h"
#include "csr_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

bool bw_type_name_ok(const char *s)
{
	if (!s || !*s)
		return false;
	size_t n = 0;
	for (const char *c = s; *c; c++, n++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_' ||
		      *c == '-'))
			return false;
	return n < BURROW_MAX_NAME;
}

void bw_relation_dir(char *buf, size_t cap, const char *src, const char *name, const char *dst)
{
	snprintf(buf, cap, "%s___%s___%s", src, name, dst);
}

/* ------------------------------------------------------------ the typed graph's check */

int burrow_hetero_check(const burrow_hetero *h)
{
	char what[3 * BURROW_MAX_NAME + 32];
	if (h->num_types < 1 || h->num_types > BURROW_MAX_TYPES)
		return bw_err(BURROW_E_FORMAT, "typed graph: %d node types, expected 1 to %d", h->num_types,
			      BURROW_MAX_TYPES);
	if (h->num_relations < 1 || h->num_relations > BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_FORMAT, "typed graph: %d relations, expected 1 to %d", h->num_relations,
			      BURROW_MAX_RELATIONS);
	if (h->target_type < -1 || h->target_type >= h->num_types)
		return bw_err(BURROW_E_FORMAT, "typed graph: target type %d, expected -1 to %d", h->target_type,
			      h->num_types - 1);
	for (int t = 0; t < h->num_types; t++) {
		if (!bw_type_name_ok(h->type_names[t]))
			return bw_err(BURROW_E_FORMAT, "typed graph: type %d: name \"%s\" is not 1 to %d of [A-Za-z0-9_-]",
				      t, h->type_names[t] ? h->type_names[t] : "", BURROW_MAX_NAME - 1);
		if (h->type_nodes[t] < 0)
			return bw_err(BURROW_E_FORMAT, "typed graph: type %s: negative count", h->type_names[t]);
		for (int u = 0; u < t; u++)
			if (!strcmp(h->type_names[u], h->type_names[t]))
				return bw_err(BURROW_E_FORMAT, "typed graph: type name \"%s\" appears twice", h->type_names[t]);
	}
	for (int i = 0; i < h->num_relations; i++) {
		const burrow_relation *r = &h->rel[i];
		if (r->src_type < 0 || r->src_type >= h->num_types || r->dst_type < 0 || r->dst_type >= h->num_types)
			return bw_err(BURROW_E_FORMAT, "typed graph: relation %d: types %d -> %d, expected 0 to %d", i,
				      r->src_type, r->dst_type, h->num_types - 1);
		if (!bw_type_name_ok(r->name))
			return bw_err(BURROW_E_FORMAT, "typed graph: relation %d: name \"%s\" is not 1 to %d of [A-Za-z0-9_-]",
				      i, r->name ? r->name : "", BURROW_MAX_NAME - 1);
		snprintf(what, sizeof what, "relation ");
		bw_relation_dir(what + 9, sizeof what - 9, h->type_names[r->src_type], r->name, h->type_names[r->dst_type]);
		const int64_t ns = h->type_nodes[r->src_type], nd = h->type_nodes[r->dst_type];
		if (r->graph.num_nodes != nd)
			return bw_err(BURROW_E_FORMAT, "%s: %lld rows, but its destination type has %lld nodes", what,
				      (long long)r->graph.num_nodes, (long long)nd);
		/* a view may hold 8-byte ids of a small type (the dataset's files follow the rule,
		 * checked where they are read) */
		if (r->graph.index_width != 8 && (r->graph.index_width != 4 || ns >= ((int64_t)1 << 31)))
			return bw_err(BURROW_E_FORMAT, "%s: %d-byte ids for a source type of %lld nodes", what,
				      r->graph.index_width, (long long)ns);
		for (int k = 0; k < i; k++) {
			const burrow_relation *q = &h->rel[k];
			if (q->src_type == r->src_type && q->dst_type == r->dst_type && !strcmp(q->name, r->name))
				return bw_err(BURROW_E_FORMAT, "%s appears twice", what);
		}
		int st = bw_csr_scan_rect(&r->graph, ns, false, what, what, false);
		if (st)
			return st;
	}
	return 0;
}

/* ------------------------------------------------------------ the version-2 reader */

struct bw_typed {
	char *dir;                                     /* owned */
	char *name, *source_json;                      /* owned */
	char tname[BURROW_MAX_TYPES][BURROW_MAX_NAME];
	char rname[BURROW_MAX_RELATIONS][BURROW_MAX_NAME];
	char rdir[BURROW_MAX_RELATIONS][3 * BURROW_MAX_NAME + 8]; /* <src>___<name>___<dst> */
	burrow_hetero h;                               /* names point into the arrays above */
	burrow_type_info ti[BURROW_MAX_TYPES];         /* features_path owned */
	char *fref[BURROW_MAX_TYPES];                  /* "features"."path" as meta.json gives it, owned; NULL: features/<type>.npy */
	int64_t fref_off[BURROW_MAX_TYPES];            /* "features"."offset", -1 when absent */
	bool fref_raw[BURROW_MAX_TYPES];               /* "features"."header": false: raw rows, no .npy header */
	int32_t num_classes;
	int64_t split_n[3];
	bw_npy_map ip_m[BURROW_MAX_RELATIONS], ix_m[BURROW_MAX_RELATIONS], labels_m, split_m[3];
};

/* A string member; NULL when absent or not a string. */
static const char *json_str(const cJSON *obj, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	return cJSON_IsString(it) ? it->valuestring : NULL;
}

static int type_index(const bw_typed *t, const char *name)
{
	for (int i = 0; name && i < t->h.num_types; i++)
		if (!strcmp(t->tname[i], name))
			return i;
	return -1;
}

/* A type's "features" object, when present: its rows live in a file outside the dataset
 * (read in place), {"path": P, "offset": O, "dtype": T}; P absolute or relative to the
 * dataset, O and T optional (checked against the file's .npy header when it is opened). */
static int parse_feature_ref(bw_typed *t, int i, const cJSON *it, const char *path)
{
	const cJSON *f = cJSON_GetObjectItemCaseSensitive(it, "features");
	const char *name = t->tname[i];
	int st;
	t->fref_off[i] = -1;
	if (!f)
		return 0;
	const char *p = json_str(f, "path"), *dt = json_str(f, "dtype");
	if (!cJSON_IsObject(f) || !p || !*p || strlen(p) >= 4096)
		return bw_err(BURROW_E_FORMAT, "%s: node type %s: \"features\" must be an object with a \"path\" of 1 to 4095 "
			      "characters", path, name);
	if (!t->ti[i].feat_dim)
		return bw_err(BURROW_E_FORMAT, "%s: node type %s: \"features\" names a file, but \"feat_dim\" is 0", path, name);
	if (cJSON_GetObjectItemCaseSensitive(f, "dtype") && (!dt || burrow_dtype_parse(dt) != t->ti[i].feat_dtype))
		return bw_err(BURROW_E_FORMAT, "%s: node type %s: \"features\".\"dtype\" %s%s%s is not its \"feat_dtype\" %s",
			      path, name, dt ? "\"" : "", dt ? dt : "(not a string)", dt ? "\"" : "",
			      burrow_dtype_name(t->ti[i].feat_dtype));
	if (cJSON_GetObjectItemCaseSensitive(f, "offset") && (st = bw_json_count(f, "offset", &t->fref_off[i], path)))
		return st;
	const cJSON *hd = cJSON_GetObjectItemCaseSensitive(f, "header");
	if (hd && !cJSON_IsBool(hd))
		return bw_err(BURROW_E_FORMAT, "%s: node type %s: \"features\".\"header\" must be true or false", path, name);
	t->fref_raw[i] = cJSON_IsFalse(hd);
	if (!(t->fref[i] = bw_strdup(p)))
		return bw_err(BURROW_E_NOMEM, "%s: out of memory", path);
	return 0;
}

/* "node_types": names valid and distinct, counts, feature dims and dtypes. */
static int parse_types(bw_typed *t, const cJSON *meta, const char *path)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(meta, "node_types");
	const int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
	if (n < 1 || n > BURROW_MAX_TYPES)
		return bw_err(BURROW_E_FORMAT, "%s: \"node_types\" must be an array of 1 to %d types", path,
			      BURROW_MAX_TYPES);
	int i = 0, st;
	const cJSON *it;
	cJSON_ArrayForEach(it, arr) {
		const char *name = json_str(it, "name");
		burrow_type_info *ti = &t->ti[i];
		if (!cJSON_IsObject(it) || !bw_type_name_ok(name))
			return bw_err(BURROW_E_FORMAT, "%s: node type %d: \"name\" must be 1 to %d of [A-Za-z0-9_-]", path, i,
				      BURROW_MAX_NAME - 1);
		if (type_index(t, name) >= 0)
			return bw_err(BURROW_E_FORMAT, "%s: node type \"%s\" appears twice", path, name);
		snprintf(t->tname[i], BURROW_MAX_NAME, "%s", name);
		t->h.type_names[i] = ti->name = t->tname[i];
		t->h.num_types = i + 1;
		ti->feat_dtype = BURROW_DTYPE_F32;
		if ((st = bw_json_count(it, "num_nodes", &ti->num_nodes, path)))
			return st;
		if (cJSON_GetObjectItemCaseSensitive(it, "feat_dim") && (st = bw_json_count(it, "feat_dim", &ti->feat_dim, path)))
			return st;
		if (ti->feat_dim > BW_MAX_FEAT_DIM)
			return bw_err(BURROW_E_FORMAT, "%s: node type %s: \"feat_dim\" %lld is more than the %d Burrow accepts",
				      path, name, (long long)ti->feat_dim, BW_MAX_FEAT_DIM);
		if (ti->feat_dim > 0) {
			const char *fd = json_str(it, "feat_dtype");
			ti->feat_dtype = fd ? burrow_dtype_parse(fd) : BURROW_DTYPE_INVALID;
			if (ti->feat_dtype != BURROW_DTYPE_F32 && ti->feat_dtype != BURROW_DTYPE_F16)
				return bw_err(BURROW_E_FORMAT, "%s: node type %s: \"feat_dtype\" must be \"float32\" or \"float16\"",
					      path, name);
		}
		if ((st = parse_feature_ref(t, i, it, path)))
			return st;
		t->h.type_nodes[i] = ti->num_nodes;
		i++;
	}
	return 0;
}

/* "relations": known types, valid names, distinct folders, edge counts, index dtypes. */
static int parse_relations(bw_typed *t, const cJSON *meta, const char *path, int64_t *total)
{
	const cJSON *arr = cJSON_GetObjectItemCaseSensitive(meta, "relations");
	const int n = cJSON_IsArray(arr) ? cJSON_GetArraySize(arr) : -1;
	if (n < 1 || n > BURROW_MAX_RELATIONS)
		return bw_err(BURROW_E_FORMAT, "%s: \"relations\" must be an array of 1 to %d relations", path,
			      BURROW_MAX_RELATIONS);
	int i = 0, st;
	const cJSON *it;
	*total = 0;
	cJSON_ArrayForEach(it, arr) {
		burrow_relation *r = &t->h.rel[i];
		const char *src = json_str(it, "src"), *name = json_str(it, "name"), *dst = json_str(it, "dst");
		if (!cJSON_IsObject(it) || !bw_type_name_ok(name))
			return bw_err(BURROW_E_FORMAT, "%s: relation %d: \"name\" must be 1 to %d of [A-Za-z0-9_-]", path, i,
				      BURROW_MAX_NAME - 1);
		r->src_type = type_index(t, src);
		r->dst_type = type_index(t, dst);
		if (r->src_type < 0 || r->dst_type < 0)
			return bw_err(BURROW_E_FORMAT, "%s: relation %s: \"%s\" names %s%s%s, not a node type", path, name,
				      r->src_type < 0 ? "src" : "dst", (r->src_type < 0 ? src : dst) ? "\"" : "",
				      (r->src_type < 0 ? src : dst) ? (r->src_type < 0 ? src : dst) : "nothing",
				      (r->src_type < 0 ? src : dst) ? "\"" : "");
		snprintf(t->rname[i], BURROW_MAX_NAME, "%s", name);
		r->name = t->rname[i];
		bw_relation_dir(t->rdir[i], sizeof t->rdir[i], src, name, dst);
		for (int k = 0; k < i; k++)
			if (!strcmp(t->rdir[k], t->rdir[i]))
				return bw_err(BURROW_E_FORMAT, "%s: relation %s appears twice", path, t->rdir[i]);
		const int64_t ns = t->h.type_nodes[r->src_type];
		const char *want = ns < ((int64_t)1 << 31) ? "int32" : "int64", *idt = json_str(it, "index_dtype");
		if (cJSON_GetObjectItemCaseSensitive(it, "index_dtype") && (!idt || strcmp(idt, want)))
			return bw_err(BURROW_E_FORMAT, "%s: relation %s: \"index_dtype\" must be \"%s\" for %lld %s nodes", path,
				      t->rdir[i], want, (long long)ns, src);
		if ((st = bw_json_count(it, "num_edges", &r->graph.num_edges, path)))
			return st;
		r->graph.num_nodes = t->h.type_nodes[r->dst_type];
		r->graph.index_width = ns < ((int64_t)1 << 31) ? 4 : 8;
		*total += r->graph.num_edges;
		t->h.num_relations = ++i;
	}
	return 0;
}

/* The target type, classes and split counts; the rules that tie them together. */
static int parse_target(bw_typed *t, const cJSON *meta, const char *path)
{
	const cJSON *tt = cJSON_GetObjectItemCaseSensitive(meta, "target_type");
	int64_t v;
	int st;
	t->h.target_type = -1;
	if (tt && !cJSON_IsNull(tt)) {
		t->h.target_type = cJSON_IsString(tt) ? type_index(t, tt->valuestring) : -1;
		if (t->h.target_type < 0)
			return bw_err(BURROW_E_FORMAT, "%s: \"target_type\" %s%s%s is not a node type", path,
				      cJSON_IsString(tt) ? "\"" : "", cJSON_IsString(tt) ? tt->valuestring : "(not a string)",
				      cJSON_IsString(tt) ? "\"" : "");
	}
	if ((st = bw_json_count(meta, "num_classes", &v, path)))
		return st;
	if (v > BW_MAX_CLASSES)
		return bw_err(BURROW_E_FORMAT, "%s: \"num_classes\" %lld is more than the %d classes Burrow accepts", path,
			      (long long)v, BW_MAX_CLASSES);
	t->num_classes = (int32_t)v;
	if (t->num_classes && t->h.target_type < 0)
		return bw_err(BURROW_E_FORMAT, "%s/labels.npy: %d classes, but meta.json names no \"target_type\"", t->dir,
			      t->num_classes);
	for (int i = 0; i < 3; i++) {
		char key[16];
		snprintf(key, sizeof key, "num_%s", bw_split_names[i]);
		t->split_n[i] = 0;
		if (cJSON_GetObjectItemCaseSensitive(meta, key) && (st = bw_json_count(meta, key, &t->split_n[i], path)))
			return st;
		if (t->split_n[i] && t->h.target_type < 0)
			return bw_err(BURROW_E_FORMAT, "%s/split/%s.npy: a split, but meta.json names no \"target_type\"",
				      t->dir, bw_split_names[i]);
		if (t->split_n[i] && !t->num_classes)
			return bw_err(BURROW_E_FORMAT, "%s/split/%s.npy: a split of type %s, which has no labels (num_classes 0)",
				      t->dir, bw_split_names[i], t->tname[t->h.target_type]);
	}
	return 0;
}

/* name, source, types, relations, target: all of meta.json; *info as a typed dataset's. */
static int parse_typed_meta(bw_typed *t, const cJSON *meta, const char *path, burrow_dataset_info *in)
{
	const char *name = json_str(meta, "name");
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(meta, "source");
	int64_t edges = 0;
	int st;
	t->name = bw_strdup(name ? name : "");
	t->source_json = src ? cJSON_PrintUnformatted(src) : bw_strdup("{}");
	if (!t->name || !t->source_json)
		return bw_err(BURROW_E_NOMEM, "%s: out of memory", path);
	if ((st = parse_types(t, meta, path)) || (st = parse_relations(t, meta, path, &edges)) ||
	    (st = parse_target(t, meta, path)))
		return st;
	const int tt = t->h.target_type;
	memset(in, 0, sizeof *in);
	in->name = t->name;
	in->source_json = t->source_json;
	in->num_nodes = tt >= 0 ? t->h.type_nodes[tt] : 0;
	in->num_edges = edges;
	in->feat_dim = tt >= 0 ? t->ti[tt].feat_dim : 0;
	in->feat_dtype = tt >= 0 ? t->ti[tt].feat_dtype : BURROW_DTYPE_F32;
	in->num_classes = t->num_classes;
	in->index_width = in->num_nodes < ((int64_t)1 << 31) ? 4 : 8;
	in->num_train = t->split_n[0];
	in->num_valid = t->split_n[1];
	in->num_test = t->split_n[2];
	in->num_types = t->h.num_types;
	in->num_relations = t->h.num_relations;
	return 0;
}

/* Map each relation's indptr.npy and indices.npy against meta.json, their ends checked. */
static int map_relations(bw_typed *t)
{
	char rel[3 * BURROW_MAX_NAME + 40];
	int st;
	for (int i = 0; i < t->h.num_relations; i++) {
		burrow_csr *g = &t->h.rel[i].graph;
		int64_t shape[1] = {g->num_nodes + 1};
		snprintf(rel, sizeof rel, "relations/%s/indptr.npy", t->rdir[i]);
		if ((st = bw_map_array(t->dir, rel, &t->ip_m[i], BURROW_DTYPE_I64, 1, shape)))
			return st;
		g->indptr = t->ip_m[i].data;
		if (g->indptr[0] != 0 || g->indptr[g->num_nodes] != g->num_edges)
			return bw_err(BURROW_E_FORMAT, "%s/%s: runs from %lld to %lld, expected 0 to %lld (num_edges)", t->dir,
				      rel, (long long)g->indptr[0], (long long)g->indptr[g->num_nodes],
				      (long long)g->num_edges);
		shape[0] = g->num_edges;
		snprintf(rel, sizeof rel, "relations/%s/indices.npy", t->rdir[i]);
		if ((st = bw_map_array(t->dir, rel, &t->ix_m[i], g->index_width == 4 ? BURROW_DTYPE_I32 : BURROW_DTYPE_I64,
				       1, shape)))
			return st;
		g->indices = t->ix_m[i].data;
	}
	return 0;
}

/* Each featured type's features/<type>.npy: its header against meta.json. */
/* Type i's features in a file without an .npy header: [num_nodes, feat_dim] rows from the offset
 * (0 when absent), the file exactly that long. */
static int raw_features(bw_typed *t, int i, const char *p)
{
	burrow_type_info *ti = &t->ti[i];
	const int64_t off = BW_MAX(t->fref_off[i], 0);
	const int64_t want = off + ti->num_nodes * ti->feat_dim * (int64_t)burrow_dtype_size(ti->feat_dtype);
	struct stat sb;
	if (stat(p, &sb) != 0)
		return errno == ENOENT ? bw_err(BURROW_E_NOTFOUND, "%s: missing: node type %s's features (meta.json's "
						"\"features\".\"path\")", p, t->tname[i])
				       : bw_err_errno(errno, p, "stat node type features");
	if ((int64_t)sb.st_size != want)
		return bw_err(BURROW_E_FORMAT, "%s: %lld bytes, expected %lld: type %s's %lld x %lld %s rows without an .npy "
			      "header from byte %lld (meta.json's \"features\")", p, (long long)sb.st_size, (long long)want,
			      t->tname[i], (long long)ti->num_nodes, (long long)ti->feat_dim, burrow_dtype_name(ti->feat_dtype),
			      (long long)off);
	ti->features_offset = off;
	return 0;
}

static int open_features(bw_typed *t)
{
	char rel[BURROW_MAX_NAME + 16];
	int st;
	for (int i = 0; i < t->h.num_types; i++) {
		burrow_type_info *ti = &t->ti[i];
		if (!ti->feat_dim)
			continue;
		bw_npy h;
		snprintf(rel, sizeof rel, "features/%s.npy", t->tname[i]);
		const char *ref = t->fref[i];
		char *p = !ref ? bw_path_join(t->dir, rel) : ref[0] == '/' ? bw_strdup(ref) : bw_path_join(t->dir, ref);
		if (!p)
			return BURROW_E_NOMEM;
		ti->features_path = p;
		const int64_t shape[2] = {ti->num_nodes, ti->feat_dim};
		if (ref && t->fref_raw[i]) {
			if ((st = raw_features(t, i, p)))
				return st;
			continue;
		}
		if ((st = bw_npy_open(p, &h, NULL)) || (st = bw_expect_array(p, &h, ti->feat_dtype, 2, shape)))
			return ref && st == BURROW_E_NOTFOUND
				       ? bw_err(st, "%s: missing: node type %s's features (meta.json's \"features\".\"path\")", p,
						t->tname[i])
				       : st;
		if (t->fref_off[i] >= 0 && t->fref_off[i] != h.data_offset)
			return bw_err(BURROW_E_FORMAT, "%s: data starts at byte %lld, but meta.json's \"features\".\"offset\" "
				      "for type %s says %lld", p, (long long)h.data_offset, t->tname[i],
				      (long long)t->fref_off[i]);
		ti->features_offset = h.data_offset;
	}
	return 0;
}

/* labels.npy and the split files of the target type; labels.npy present without labels refused. */
static int map_target(bw_typed *t)
{
	const int tt = t->h.target_type;
	int st;
	if (!t->num_classes) {
		char *p = bw_path_join(t->dir, "labels.npy");
		struct stat sb;
		st = !p ? BURROW_E_NOMEM
		     : stat(p, &sb) == 0
			     ? bw_err(BURROW_E_FORMAT, "%s: present, but meta.json gives %s no labels (num_classes 0)", p,
				      tt >= 0 ? "the target type" : "no target type and")
			     : 0;
		bw_free(p);
		if (st)
			return st;
	} else {
		const int64_t shape[1] = {t->h.type_nodes[tt]};
		if ((st = bw_map_array(t->dir, "labels.npy", &t->labels_m, BURROW_DTYPE_I32, 1, shape)))
			return st;
	}
	for (int i = 0; i < 3; i++) {
		char rel[32];
		if (!t->split_n[i])
			continue;
		snprintf(rel, sizeof rel, "split/%s.npy", bw_split_names[i]);
		if ((st = bw_map_array(t->dir, rel, &t->split_m[i], BURROW_DTYPE_I64, 1, &t->split_n[i])))
			return st;
	}
	return 0;
}

/* The contents, streamed once: every relation's CSR (offsets monotone, ids in [0, src count),
 * rows sorted), labels in [-1, C), split ids in [0, target count) and in one split only. */
static int validate_typed(const bw_typed *t)
{
	char offs[4096], ids[4096];
	int st;
	for (int i = 0; i < t->h.num_relations; i++) {
		const burrow_relation *r = &t->h.rel[i];
		snprintf(offs, sizeof offs, "%s/relations/%s/indptr.npy", t->dir, t->rdir[i]);
		snprintf(ids, sizeof ids, "%s/relations/%s/indices.npy", t->dir, t->rdir[i]);
		if ((st = bw_csr_scan_rect(&r->graph, t->h.type_nodes[r->src_type], false, offs, ids, true)))
			return st;
	}
	const int tt = t->h.target_type;
	const int64_t n = tt >= 0 ? t->h.type_nodes[tt] : 0;
	const int32_t *lab = t->labels_m.data, c = t->num_classes;
	for (int64_t v = 0; lab && v < n; v++)
		if (lab[v] < -1 || lab[v] >= c)
			return bw_err(BURROW_E_FORMAT, "%s/labels.npy: node %lld has label %d, outside [-1, %d)", t->dir,
				      (long long)v, lab[v], c);
	uint64_t *seen = bw_calloc((size_t)(n + 63) / 64 + 1, sizeof *seen);
	if (!seen)
		return bw_err(BURROW_E_NOMEM, "%s: out of memory checking the splits", t->dir);
	st = 0;
	for (int i = 0; i < 3 && !st; i++) {
		const int64_t *s = t->split_m[i].data;
		for (int64_t k = 0; k < t->split_n[i] && !st; k++) {
			const int64_t v = s[k];
			if (v < 0 || v >= n)
				st = bw_err(BURROW_E_FORMAT, "%s/split/%s.npy: entry %lld is %s node %lld, outside [0, %lld)",
					    t->dir, bw_split_names[i], (long long)k, t->tname[tt], (long long)v, (long long)n);
			else if (seen[v >> 6] >> (v & 63) & 1)
				st = bw_err(BURROW_E_FORMAT, "%s/split/%s.npy: node %lld appears twice or in two splits", t->dir,
					    bw_split_names[i], (long long)v);
			else
				seen[v >> 6] |= 1ull << (v & 63);
		}
	}
	bw_free(seen);
	return st;
}

int bw_typed_open(bw_typed **out, const char *dir, const char *meta_path, const cJSON *meta, burrow_dataset_info *info)
{
	int st;
	*out = NULL;
	bw_typed *t = bw_calloc(1, sizeof *t);
	if (!t)
		return BURROW_E_NOMEM;
	t->dir = bw_strdup(dir);
	if (!t->dir) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	if ((st = parse_typed_meta(t, meta, meta_path, info)) || (st = map_relations(t)) || (st = open_features(t)) ||
	    (st = map_target(t)) || (st = validate_typed(t)))
		goto fail;
	for (int i = 0; i < BURROW_MAX_RELATIONS; i++) { /* read once by the checks: out of the RSS (dataset.c) */
		bw_npy_map_drop(&t->ip_m[i]);
		bw_npy_map_drop(&t->ix_m[i]);
	}
	bw_npy_map_drop(&t->labels_m);
	for (int i = 0; i < 3; i++)
		bw_npy_map_drop(&t->split_m[i]);
	*out = t;
	return 0;
fail:
	bw_typed_close(t);
	memset(info, 0, sizeof *info);
	return st;
}

void bw_typed_close(bw_typed *t)
{
	if (!t)
		return;
	for (int i = 0; i < BURROW_MAX_RELATIONS; i++) {
		bw_npy_unmap(&t->ip_m[i]);
		bw_npy_unmap(&t->ix_m[i]);
	}
	bw_npy_unmap(&t->labels_m);
	for (int i = 0; i < 3; i++)
		bw_npy_unmap(&t->split_m[i]);
	for (int i = 0; i < BURROW_MAX_TYPES; i++) {
		bw_free((char *)t->ti[i].features_path);
		bw_free(t->fref[i]);
	}
	bw_free(t->dir);
	bw_free(t->name);
	bw_free(t->source_json); /* from cJSON (hooked to bw_malloc) or bw_strdup */
	bw_free(t);
}

const burrow_hetero *bw_typed_hetero(const bw_typed *t) { return &t->h; }
const int32_t *bw_typed_labels(const bw_typed *t) { return t->labels_m.data; }
const int64_t *bw_typed_split(const bw_typed *t, int split) { return t->split_m[split].data; }
int bw_typed_verify(const bw_typed *t) { return validate_typed(t); }

int bw_typed_type_info(const bw_typed *t, int type, burrow_type_info *out)
{
	*out = t->ti[type];
	return 0;
}

bool bw_typed_type_raw(const bw_typed *t, int type) { return t->fref[type] && t->fref_raw[type]; }

bool bw_typed_target_info(const bw_typed *t, burrow_type_info *out)
{
	if (t->h.target_type < 0)
		return false;
	*out = t->ti[t->h.target_type];
	return true;
}

int64_t bw_typed_disk_bytes(const bw_typed *t)
{
	char rel[3 * BURROW_MAX_NAME + 40];
	int64_t total = 0;
	/* meta.json, labels, splits; each relation's two files; each type's features */
	for (int i = -7; i < 2 * t->h.num_relations + t->h.num_types; i++) {
		static const char *const fixed[] = {"meta.json", "labels.npy", "split/train.npy", "split/valid.npy",
						    "split/test.npy", "relations", "features"};
		struct stat sb;
		if (i < 0)
			snprintf(rel, sizeof rel, "%s", fixed[i + 7]);
		else if (i < 2 * t->h.num_relations)
			snprintf(rel, sizeof rel, "relations/%s/%s", t->rdir[i / 2], i % 2 ? "indices.npy" : "indptr.npy");
		else
			snprintf(rel, sizeof rel, "features/%s.npy", t->tname[i - 2 * t->h.num_relations]);
		char *p = bw_path_join(t->dir, rel);
		if (p && stat(p, &sb) == 0 && S_ISREG(sb.st_mode))
			total += (int64_t)sb.st_blocks * 512;
		bw_free(p);
	}
	return total;
}
