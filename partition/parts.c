/* parts.c: reading a parts directory: meta.json (the partition book) and each part's dataset
 * and exchange arrays, checked against each other when opened. */
#define _GNU_SOURCE
#include "partition_internal.h"
#include "book.h"
#include "../graph/dataset_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct burrow_parts {
	char *dir;
	char *dataset, *dataset_name, *method;
	int64_t *offsets;
	int64_t *halo_sizes, *send_sizes, *part_edges;
	char *type_names[BURROW_MAX_TYPES];
	int64_t type_nodes[BURROW_MAX_TYPES];
	int64_t *type_offsets, *type_halo;   /* [T][K+1], [T][K] */
	burrow_parts_info info;
};

struct burrow_part {
	burrow_dataset *ds;
	bw_npy_map orig, halo, halo_off, send, send_off;
	burrow_part_info info;
};

static int json_i64(const cJSON *o, const char *key, int64_t *v, const char *path)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	if (!cJSON_IsNumber(it) || !bw_is_int_in(it->valuedouble, 0, 9007199254740992.0))
		return bw_err(BURROW_E_FORMAT, "%s: \"%s\" must be a non-negative integer", path, key);
	*v = (int64_t)it->valuedouble;
	return 0;
}

/* An array of n non-negative integers. */
static int json_i64_array(const cJSON *o, const char *key, int64_t n, int64_t **out, const char *path)
{
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
	*out = NULL;
	if (!cJSON_IsArray(a) || cJSON_GetArraySize(a) != n)
		return bw_err(BURROW_E_FORMAT, "%s: \"%s\" must be an array of %lld integers", path, key, (long long)n);
	int64_t *v = bw_malloc((size_t)(n ? n : 1) * sizeof *v);
	if (!v)
		return BURROW_E_NOMEM;
	int64_t i = 0;
	const cJSON *it;
	cJSON_ArrayForEach(it, a)
	{
		if (!cJSON_IsNumber(it) || !bw_is_int_in(it->valuedouble, 0, 9007199254740992.0)) {
			bw_free(v);
			return bw_err(BURROW_E_FORMAT, "%s: \"%s\"[%lld] is not a non-negative integer", path, key,
				      (long long)i);
		}
		v[i++] = (int64_t)it->valuedouble;
	}
	*out = v;
	return 0;
}

/* A statistic meta.json may lack: its value, or -1 when absent or not a number >= 0. */
static double json_stat(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return cJSON_IsNumber(it) && it->valuedouble >= 0 ? it->valuedouble : -1;
}

/* A string meta.json may lack, copied ("" when absent); NULL when out of memory. */
static char *json_str_copy(const cJSON *o, const char *key)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
	return bw_strdup(cJSON_IsString(it) ? it->valuestring : "");
}

/* The statistics burrow_partition records beside the partition book; absent ones are -1. */
static int read_stats(burrow_parts *p, const cJSON *j, const char *path)
{
	burrow_parts_info *in = &p->info;
	int st;
	if (!(p->dataset = json_str_copy(j, "dataset")) || !(p->dataset_name = json_str_copy(j, "dataset_name")) ||
	    !(p->method = json_str_copy(j, "method")))
		return BURROW_E_NOMEM;
	in->sym_edges = (int64_t)json_stat(j, "sym_edges");
	in->cut_fraction = json_stat(j, "cut_fraction");
	in->halo_total = (int64_t)json_stat(j, "halo_total");
	in->replication = json_stat(j, "replication_factor");
	const cJSON *imb = cJSON_GetObjectItemCaseSensitive(j, "imbalance");
	in->imbalance_nodes = json_stat(imb, "nodes");
	in->imbalance_train = json_stat(imb, "train");
	in->imbalance_edges = json_stat(imb, "edges");
	if (in->imbalance_train == 0) /* burrow_partition's 0: there is no train split */
		in->imbalance_train = -1;
	const char *arrays[2] = {"send_sizes", "part_edges"};
	int64_t **dst[2] = {&p->send_sizes, &p->part_edges};
	for (int a = 0; a < 2; a++)
		if (cJSON_GetObjectItemCaseSensitive(j, arrays[a]) &&
		    (st = json_i64_array(j, arrays[a], in->num_parts, dst[a], path)))
			return st;
	in->send_sizes = p->send_sizes;
	in->part_edges = p->part_edges;
	in->dataset = p->dataset;
	in->dataset_name = p->dataset_name;
	in->method = p->method;
	return 0;
}

/* A typed parts directory's "node_types" (version 2): per type its name, count, book (from 0
 * to the count, never decreasing) and halo sizes; "target_type" one of them or absent. */
static int read_types(burrow_parts *p, const cJSON *j, const char *path)
{
	burrow_parts_info *in = &p->info;
	const int k = in->num_parts;
	const cJSON *a = cJSON_GetObjectItemCaseSensitive(j, "node_types"), *it;
	const int nt = cJSON_IsArray(a) ? cJSON_GetArraySize(a) : 0;
	if (nt < 1 || nt > BURROW_MAX_TYPES)
		return bw_err(BURROW_E_FORMAT, "%s: \"node_types\" must be an array of 1 to %d types", path, BURROW_MAX_TYPES);
	p->type_offsets = bw_malloc((size_t)nt * (size_t)(k + 1) * sizeof *p->type_offsets);
	p->type_halo = bw_malloc((size_t)nt * (size_t)k * sizeof *p->type_halo);
	if (!p->type_offsets || !p->type_halo)
		return BURROW_E_NOMEM;
	int t = 0, st;
	cJSON_ArrayForEach(it, a)
	{
		int64_t *offs = NULL, *hs = NULL;
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(it, "name");
		if (!cJSON_IsString(nm) || !bw_type_name_ok(nm->valuestring))
			return bw_err(BURROW_E_FORMAT, "%s: node_types[%d] has no valid \"name\"", path, t);
		if (!(p->type_names[t] = bw_strdup(nm->valuestring)))
			return BURROW_E_NOMEM;
		in->num_types = t + 1; /* names to free from here */
		if ((st = json_i64(it, "num_nodes", &p->type_nodes[t], path)) ||
		    (st = json_i64_array(it, "node_offsets", k + 1, &offs, path)) ||
		    (st = json_i64_array(it, "halo_sizes", k, &hs, path))) {
			bw_free(offs);
			return st;
		}
		bool ok = offs[0] == 0 && offs[k] == p->type_nodes[t];
		for (int i = 0; i < k; i++)
			ok = ok && offs[i + 1] >= offs[i];
		memcpy(p->type_offsets + (int64_t)t * (k + 1), offs, (size_t)(k + 1) * sizeof *offs);
		memcpy(p->type_halo + (int64_t)t * k, hs, (size_t)k * sizeof *hs);
		bw_free(offs);
		bw_free(hs);
		if (!ok)
			return bw_err(BURROW_E_FORMAT, "%s: node_types[%d] (%s): node_offsets must rise from 0 to num_nodes",
				      path, t, p->type_names[t]);
		t++;
	}
	const cJSON *tt = cJSON_GetObjectItemCaseSensitive(j, "target_type");
	in->target_type = -1;
	for (int q = 0; cJSON_IsString(tt) && q < nt; q++)
		if (!strcmp(tt->valuestring, p->type_names[q]))
			in->target_type = q;
	if (cJSON_IsString(tt) && in->target_type < 0)
		return bw_err(BURROW_E_FORMAT, "%s: \"target_type\" \"%s\" names no node type", path, tt->valuestring);
	in->type_names = (const char *const *)p->type_names;
	in->type_nodes = p->type_nodes;
	in->type_offsets = p->type_offsets;
	in->type_halo_sizes = p->type_halo;
	return 0;
}

int burrow_parts_open(burrow_parts **out, const char *dir)
{
	char *path = NULL, *text = NULL;
	cJSON *j = NULL;
	int64_t v;
	int st;

	*out = NULL;
	burrow_parts *p = bw_calloc(1, sizeof *p);
	if (!p)
		return BURROW_E_NOMEM;
	p->dir = bw_strdup(dir);
	path = bw_path_join(dir, "meta.json");
	if (!p->dir || !path) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	if ((st = bw_read_text(path, 64 << 20, &text)))
		goto fail;
	(void)bw_json_nomem();
	j = cJSON_Parse(text);
	if (!j && bw_json_nomem()) {
		st = bw_err(BURROW_E_NOMEM, "%s: out of memory reading it", path);
		goto fail;
	}
	const cJSON *fmt = j ? cJSON_GetObjectItemCaseSensitive(j, "format") : NULL;
	if (!cJSON_IsObject(j) || !cJSON_IsString(fmt) || strcmp(fmt->valuestring, "burrow-parts")) {
		st = bw_err(BURROW_E_FORMAT, "%s: not a parts directory's meta.json (\"format\" must be \"burrow-parts\")",
			    path);
		goto fail;
	}
	if ((st = json_i64(j, "version", &v, path)))
		goto fail;
	if (v != 1 && v != 2) {
		st = bw_err(BURROW_E_FORMAT, "%s: parts format version %lld is not one this burrow reads (1, 2)", path,
			    (long long)v);
		goto fail;
	}
	const bool typed = v == 2;
	burrow_parts_info *in = &p->info;
	in->target_type = -1;
	if ((st = json_i64(j, "num_parts", &v, path)) || (st = json_i64(j, "num_nodes", &in->num_nodes, path)) ||
	    (st = json_i64(j, "num_edges", &in->num_edges, path)) || (st = json_i64(j, "edge_cut", &in->edge_cut, path)))
		goto fail;
	if (v < 1 || v > INT32_MAX) {
		st = bw_err(BURROW_E_FORMAT, "%s: \"num_parts\" %lld is out of range", path, (long long)v);
		goto fail;
	}
	in->num_parts = (int)v;
	if ((st = json_i64_array(j, "node_offsets", v + 1, &p->offsets, path)) ||
	    (st = json_i64_array(j, "halo_sizes", v, &p->halo_sizes, path)))
		goto fail;
	for (int i = 0; i < in->num_parts; i++)
		if (p->offsets[i + 1] < p->offsets[i]) {
			st = bw_err(BURROW_E_FORMAT, "%s: node_offsets decrease at part %d", path, i);
			goto fail;
		}
	if (p->offsets[0] != 0 || p->offsets[in->num_parts] != in->num_nodes) {
		st = bw_err(BURROW_E_FORMAT, "%s: node_offsets run from %lld to %lld, expected 0 to %lld (num_nodes)", path,
			    (long long)p->offsets[0], (long long)p->offsets[in->num_parts], (long long)in->num_nodes);
		goto fail;
	}
	if ((st = read_stats(p, j, path)) || (typed && (st = read_types(p, j, path))))
		goto fail;
	in->node_offsets = p->offsets;
	in->halo_sizes = p->halo_sizes;
	cJSON_Delete(j);
	bw_free(text);
	bw_free(path);
	*out = p;
	return 0;
fail:
	cJSON_Delete(j);
	bw_free(text);
	bw_free(path);
	burrow_parts_close(p);
	return st;
}

void burrow_parts_close(burrow_parts *p)
{
	if (!p)
		return;
	bw_free(p->dir);
	bw_free(p->dataset);
	bw_free(p->dataset_name);
	bw_free(p->method);
	bw_free(p->offsets);
	bw_free(p->halo_sizes);
	bw_free(p->send_sizes);
	bw_free(p->part_edges);
	for (int t = 0; t < p->info.num_types; t++)
		bw_free(p->type_names[t]);
	bw_free(p->type_offsets);
	bw_free(p->type_halo);
	bw_free(p);
}

const burrow_parts_info *burrow_parts_get_info(const burrow_parts *p) { return &p->info; }

int burrow_parts_owner(const burrow_parts *p, int64_t gid)
{
	if (gid < 0 || gid >= p->info.num_nodes)
		return bw_err(BURROW_E_RANGE, "%s: node %lld is outside [0, %lld)", p->dir, (long long)gid,
			      (long long)p->info.num_nodes);
	return bw_book_owner(p->offsets, p->info.num_parts, gid);
}

/* Map <pdir>/<name> as an int64 vector of n entries (n < 0: any length). */
static int map_i64(const char *pdir, const char *name, int64_t n, bw_npy_map *m, int64_t *len)
{
	bw_npy h;
	char *path = bw_path_join(pdir, name);
	if (!path)
		return BURROW_E_NOMEM;
	int st = bw_npy_mmap(path, &h, m);
	if (!st && (h.dtype != BURROW_DTYPE_I64 || h.ndim != 1 || (n >= 0 && h.shape[0] != n))) {
		char shape[96] = "";
		for (int i = 0, k = 0; i < h.ndim && k < (int)sizeof shape - 24; i++)
			k += snprintf(shape + k, sizeof shape - (size_t)k, "%s%lld", i ? " x " : "", (long long)h.shape[i]);
		if (n >= 0)
			st = bw_err(BURROW_E_FORMAT, "%s: expected an int64 vector of %lld entries, found %s [%s]", path,
				    (long long)n, burrow_dtype_name(h.dtype), shape);
		else
			st = bw_err(BURROW_E_FORMAT, "%s: expected an int64 vector, found %s [%s]", path,
				    burrow_dtype_name(h.dtype), shape);
	}
	if (!st && len)
		*len = h.shape[0];
	if (st)
		bw_npy_unmap(m);
	bw_free(path);
	return st;
}

/* Offsets [k+1] from 0 to total, never decreasing. */
static int check_offsets(const char *what, const int64_t *o, int k, int64_t total)
{
	if (o[0] != 0 || o[k] != total)
		return bw_err(BURROW_E_FORMAT, "%s: runs from %lld to %lld, expected 0 to %lld", what, (long long)o[0],
			      (long long)o[k], (long long)total);
	for (int j = 0; j < k; j++)
		if (o[j + 1] < o[j])
			return bw_err(BURROW_E_FORMAT, "%s: decreases at part %d", what, j);
	return 0;
}

/* orig_ids.npy: n distinct input ids in [0, num_nodes) (they reach users through
 * burrow_part_info.orig_ids and predictions mapped back); a bitmap of the input's ids finds a
 * repeat in one pass. */
static int check_orig(const char *pdir, const int64_t *ids, int64_t n, int64_t num_nodes)
{
	uint64_t *seen = bw_calloc((size_t)(num_nodes + 63) / 64 + 1, sizeof *seen);
	int st = 0;
	if (!seen)
		return BURROW_E_NOMEM;
	for (int64_t q = 0; q < n && !st; q++) {
		const int64_t g = ids[q];
		if (g < 0 || g >= num_nodes)
			st = bw_err(BURROW_E_FORMAT, "%s/orig_ids.npy: entry %lld (id %lld) is outside the input's [0, %lld)",
				    pdir, (long long)q, (long long)g, (long long)num_nodes);
		else if (seen[g / 64] >> (g % 64) & 1)
			st = bw_err(BURROW_E_FORMAT, "%s/orig_ids.npy: entry %lld repeats id %lld", pdir, (long long)q,
				    (long long)g);
		else
			seen[g / 64] |= (uint64_t)1 << (g % 64);
	}
	bw_free(seen);
	return st;
}

int burrow_part_open(burrow_part **out, const burrow_parts *parts, int i)
{
	char name[32], *pdir = NULL;
	int st;
	*out = NULL;
	const int k = parts->info.num_parts;
	if (i < 0 || i >= k)
		return bw_err(BURROW_E_RANGE, "%s: part %d is outside [0, %d)", parts->dir, i, k);
	if (parts->info.num_types)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: typed parts (%d node types): part-%d is a version-2 dataset with "
			      "per-type arrays, read with burrow_dataset_open (docs/partition.md)", parts->dir,
			      parts->info.num_types, i);
	burrow_part *p = bw_calloc(1, sizeof *p);
	if (!p)
		return BURROW_E_NOMEM;
	snprintf(name, sizeof name, "part-%d", i);
	pdir = bw_path_join(parts->dir, name);
	if (!pdir) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	burrow_part_info *in = &p->info;
	in->part = i;
	in->num_parts = k;
	in->first_id = parts->offsets[i];
	in->num_owned = parts->offsets[i + 1] - parts->offsets[i];
	in->num_halo = parts->halo_sizes[i];
	if ((st = burrow_dataset_open(&p->ds, pdir)) ||
	    (st = map_i64(pdir, "orig_ids.npy", in->num_owned, &p->orig, NULL)) ||
	    (st = map_i64(pdir, "halo_ids.npy", in->num_halo, &p->halo, NULL)) ||
	    (st = map_i64(pdir, "halo_offsets.npy", k + 1, &p->halo_off, NULL)) ||
	    (st = map_i64(pdir, "send_offsets.npy", k + 1, &p->send_off, NULL)) ||
	    (st = map_i64(pdir, "send_ids.npy", -1, &p->send, &in->num_send)))
		goto fail;
	in->orig_ids = p->orig.data;
	in->halo_ids = p->halo.data;
	in->halo_offsets = p->halo_off.data;
	in->send_ids = p->send.data;
	in->send_offsets = p->send_off.data;
	const int64_t nl = burrow_dataset_get_info(p->ds)->num_nodes;
	if (nl != in->num_owned + in->num_halo) {
		st = bw_err(BURROW_E_FORMAT, "%s: the dataset has %lld nodes, expected %lld owned + %lld halo", pdir,
			    (long long)nl, (long long)in->num_owned, (long long)in->num_halo);
		goto fail;
	}
	if ((st = check_orig(pdir, in->orig_ids, in->num_owned, parts->info.num_nodes)))
		goto fail;
	if ((st = check_offsets("halo_offsets.npy", in->halo_offsets, k, in->num_halo)) ||
	    (st = check_offsets("send_offsets.npy", in->send_offsets, k, in->num_send))) {
		bw_err_prefix(st, pdir);
		goto fail;
	}
	for (int j = 0; j < k; j++) {
		const int64_t lo = parts->offsets[j], hi = parts->offsets[j + 1];
		for (int64_t q = in->halo_offsets[j]; q < in->halo_offsets[j + 1]; q++) {
			const int64_t g = in->halo_ids[q];
			if (j == i || g < lo || g >= hi || (q > in->halo_offsets[j] && g <= in->halo_ids[q - 1])) {
				st = bw_err(BURROW_E_FORMAT,
					    "%s/halo_ids.npy: entry %lld (node %lld) is not an ascending id of part %d", pdir,
					    (long long)q, (long long)g, j);
				goto fail;
			}
		}
		if (j == i && in->send_offsets[j + 1] != in->send_offsets[j]) {
			st = bw_err(BURROW_E_FORMAT, "%s/send_offsets.npy: part %d sends to itself", pdir, i);
			goto fail;
		}
	}
	for (int64_t q = 0; q < in->num_send; q++)
		if (in->send_ids[q] < in->first_id || in->send_ids[q] >= in->first_id + in->num_owned) {
			st = bw_err(BURROW_E_FORMAT, "%s/send_ids.npy: entry %lld (node %lld) is not owned by part %d", pdir,
				    (long long)q, (long long)in->send_ids[q], i);
			goto fail;
		}
	bw_free(pdir);
	*out = p;
	return 0;
fail:
	bw_free(pdir);
	burrow_part_close(p);
	return st;
}

void burrow_part_close(burrow_part *p)
{
	if (!p)
		return;
	burrow_dataset_close(p->ds);
	bw_npy_unmap(&p->orig);
	bw_npy_unmap(&p->halo);
	bw_npy_unmap(&p->halo_off);
	bw_npy_unmap(&p->send);
	bw_npy_unmap(&p->send_off);
	bw_free(p);
}

const burrow_part_info *burrow_part_get_info(const burrow_part *p) { return &p->info; }
const burrow_dataset *burrow_part_dataset(const burrow_part *p) { return p->ds; }

/* ------------------------------------------------------------ typed parts: --verify */

/* Type t's arrays of one part, mapped. */
typedef struct typed_arrays {
	bw_npy_map orig, halo, halo_off, send, send_off;
	int64_t n_send;
} typed_arrays;

static void typed_arrays_unmap(typed_arrays *a)
{
	bw_npy_unmap(&a->orig);
	bw_npy_unmap(&a->halo);
	bw_npy_unmap(&a->halo_off);
	bw_npy_unmap(&a->send);
	bw_npy_unmap(&a->send_off);
	memset(a, 0, sizeof *a);
}

/* Part i's arrays of type t mapped and checked on their own: shapes, offsets, orig ids in the
 * type's range and not seen in an earlier part (seen: the type's bitmap), halo ids ascending
 * ids of their owner, send ids owned. */
static int typed_part_arrays(const burrow_parts *p, const char *pdir, int t, int i, uint64_t *seen, typed_arrays *a)
{
	const int k = p->info.num_parts;
	const int64_t *book = p->type_offsets + (size_t)t * (size_t)(k + 1);
	const int64_t own = book[i + 1] - book[i], nh = p->type_halo[(size_t)t * (size_t)k + (size_t)i];
	const char *tn = p->type_names[t];
	char name[BURROW_MAX_NAME + 32], what[BURROW_MAX_NAME + 32];
	int st;
#define TYPED_MAP(sub, n, m, len) (snprintf(name, sizeof name, "%s/%s.npy", sub, tn), map_i64(pdir, name, n, m, len))
	if ((st = TYPED_MAP("orig_ids", own, &a->orig, NULL)) || (st = TYPED_MAP("halo_ids", nh, &a->halo, NULL)) ||
	    (st = TYPED_MAP("halo_offsets", k + 1, &a->halo_off, NULL)) ||
	    (st = TYPED_MAP("send_offsets", k + 1, &a->send_off, NULL)) ||
	    (st = TYPED_MAP("send_ids", -1, &a->send, &a->n_send)))
		return st;
#undef TYPED_MAP
	const int64_t *orig = a->orig.data, *halo = a->halo.data, *ho = a->halo_off.data, *send = a->send.data;
	snprintf(what, sizeof what, "halo_offsets/%s.npy", tn);
	if ((st = check_offsets(what, ho, k, nh)))
		return bw_err_prefix(st, pdir);
	snprintf(what, sizeof what, "send_offsets/%s.npy", tn);
	if ((st = check_offsets(what, a->send_off.data, k, a->n_send)))
		return bw_err_prefix(st, pdir);
	for (int64_t q = 0; q < own; q++) {
		const int64_t g = orig[q];
		if (g < 0 || g >= p->type_nodes[t] || seen[g / 64] >> (g % 64) & 1)
			return bw_err(BURROW_E_FORMAT, "%s/orig_ids/%s.npy: entry %lld (id %lld) is outside [0, %lld) or owned "
						       "twice",
				      pdir, tn, (long long)q, (long long)g, (long long)p->type_nodes[t]);
		seen[g / 64] |= (uint64_t)1 << (g % 64);
	}
	for (int j = 0; j < k; j++)
		for (int64_t q = ho[j]; q < ho[j + 1]; q++)
			if (j == i || halo[q] < book[j] || halo[q] >= book[j + 1] || (q > ho[j] && halo[q] <= halo[q - 1]))
				return bw_err(BURROW_E_FORMAT, "%s/halo_ids/%s.npy: entry %lld (node %lld) is not an ascending id "
							       "of part %d",
					      pdir, tn, (long long)q, (long long)halo[q], j);
	for (int64_t q = 0; q < a->n_send; q++)
		if (send[q] < book[i] || send[q] >= book[i + 1])
			return bw_err(BURROW_E_FORMAT, "%s/send_ids/%s.npy: entry %lld (node %lld) is not owned by part %d", pdir,
				      tn, (long long)q, (long long)send[q], i);
	return 0;
}

/* Part i's dataset against the book: each type's nodes owned + halo, the halo's rows empty in
 * every relation, the splits owned; then its contents (burrow_dataset_verify). */
static int typed_part_dataset(const burrow_parts *p, const char *pdir, int i)
{
	const int k = p->info.num_parts;
	burrow_dataset *ds;
	int st = burrow_dataset_open(&ds, pdir);
	if (st)
		return st;
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	int64_t own[BURROW_MAX_TYPES];
	if (!h || h->num_types != p->info.num_types || h->target_type != p->info.target_type)
		st = bw_err(BURROW_E_FORMAT, "%s: not a typed dataset of the parts' %d types and target", pdir,
			    p->info.num_types);
	for (int t = 0; !st && t < h->num_types; t++) {
		const int64_t *book = p->type_offsets + (size_t)t * (size_t)(k + 1);
		const int64_t nh = p->type_halo[(size_t)t * (size_t)k + (size_t)i];
		own[t] = book[i + 1] - book[i];
		if (strcmp(h->type_names[t], p->type_names[t]) || h->type_nodes[t] != own[t] + nh)
			st = bw_err(BURROW_E_FORMAT, "%s: type %d is %s with %lld nodes, the parts say %s with %lld owned + "
						     "%lld halo",
				    pdir, t, h->type_names[t], (long long)h->type_nodes[t], p->type_names[t], (long long)own[t],
				    (long long)nh);
	}
	for (int r = 0; !st && r < h->num_relations; r++) {
		const burrow_csr *g = &h->rel[r].graph;
		if (g->indptr[own[h->rel[r].dst_type]] != g->indptr[g->num_nodes])
			st = bw_err(BURROW_E_FORMAT, "%s: relation %s holds edges into halo nodes", pdir, h->rel[r].name);
	}
	for (int s = 0; !st && s < 3; s++) {
		int64_t n;
		const int64_t *ids = burrow_dataset_split(ds, s, &n);
		for (int64_t q = 0; ids && q < n && !st; q++)
			if (ids[q] < 0 || ids[q] >= own[h->target_type])
				st = bw_err(BURROW_E_FORMAT, "%s: split %d entry %lld (%lld) is not an owned node", pdir, s,
					    (long long)q, (long long)ids[q]);
	}
	if (!st)
		st = burrow_dataset_verify(ds);
	burrow_dataset_close(ds);
	return st;
}

/* Part i's send segment to part j of type t equals part j's halo segment from part i. */
static int typed_contract(const burrow_parts *p, int t, const typed_arrays *a)
{
	const int k = p->info.num_parts;
	for (int i = 0; i < k; i++)
		for (int j = 0; j < k; j++) {
			const int64_t *so = a[i].send_off.data, *ho = a[j].halo_off.data;
			const int64_t n = so[j + 1] - so[j];
			if (n != ho[i + 1] - ho[i] ||
			    (n && memcmp((const int64_t *)a[i].send.data + so[j], (const int64_t *)a[j].halo.data + ho[i],
					 (size_t)n * sizeof(int64_t))))
				return bw_err(BURROW_E_FORMAT, "%s: type %s: part %d's send list to part %d is not part %d's halo "
							       "from part %d",
					      p->dir, p->type_names[t], i, j, j, i);
		}
	return 0;
}

/* Part i's directory into *pdir (bw_free it). */
static int part_dir(const burrow_parts *p, int i, char **pdir)
{
	char name[32];
	snprintf(name, sizeof name, "part-%d", i);
	return (*pdir = bw_path_join(p->dir, name)) ? 0 : BURROW_E_NOMEM;
}

int burrow_parts_verify_typed(const burrow_parts *p)
{
	const int k = p->info.num_parts, T = p->info.num_types;
	if (!T)
		return bw_err(BURROW_E_INVAL, "%s: not typed parts", p->dir);
	typed_arrays *a = bw_calloc((size_t)k, sizeof *a);
	char *pdir = NULL;
	int st = a ? 0 : BURROW_E_NOMEM;
	for (int i = 0; !st && i < k; i++) {
		if (!(st = part_dir(p, i, &pdir)))
			st = typed_part_dataset(p, pdir, i);
		bw_free(pdir);
	}
	for (int t = 0; !st && t < T; t++) {
		uint64_t *seen = bw_calloc((size_t)(p->type_nodes[t] + 63) / 64 + 1, sizeof *seen);
		st = seen ? 0 : BURROW_E_NOMEM;
		for (int i = 0; !st && i < k; i++) {
			if (!(st = part_dir(p, i, &pdir)))
				st = typed_part_arrays(p, pdir, t, i, seen, &a[i]);
			bw_free(pdir);
		}
		if (!st)
			st = typed_contract(p, t, a);
		for (int i = 0; i < k; i++)
			typed_arrays_unmap(&a[i]);
		bw_free(seen);
	}
	bw_free(a);
	return st;
}
