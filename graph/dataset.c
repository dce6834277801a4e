/* dataset.c: the dataset directory, format version 1 (docs/format.md): open with
 * validation of every file against meta.json, accessors, full verification, and whether an
 * output may replace a directory (a dataset's or a parts directory's meta.json). Version 2
 * (typed graphs) is read by hetero.c behind the same handle. */
#define _GNU_SOURCE
#include "dataset_internal.h"
#include "csr_internal.h"
#include "../core/half.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *const bw_split_names[3] = {"train", "valid", "test"};

struct burrow_dataset {
	char *dir;
	char *name;
	char *source_json;
	char *features_path;
	int64_t features_offset;
	burrow_dataset_info info;
	burrow_csr graph;
	bw_npy_map indptr_m, indices_m, labels_m, split_m[3];
	bw_typed *typed;        /* a version-2 dataset's typed graph (hetero.c), owned; NULL for version 1 */
	bw_esplit *esplit;      /* a link dataset's edge splits (edgesplit.c), owned; NULL when none */
	/* edge features */
	char *edge_feat_path;   /* owned; NULL when none */
	int64_t edge_feat_offset;
};

/* A non-negative integer member of a JSON object. */
int bw_json_count(const cJSON *obj, const char *key, int64_t *v, const char *path)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
	if (!it)
		return bw_err(BURROW_E_FORMAT, "%s: missing \"%s\"", path, key);
	if (!cJSON_IsNumber(it) || !bw_is_int_in(it->valuedouble, 0, 9007199254740992.0))
		return bw_err(BURROW_E_FORMAT, "%s: \"%s\" must be a non-negative integer", path, key);
	*v = (int64_t)it->valuedouble;
	return 0;
}

static int json_int(const cJSON *obj, const char *key, int64_t *v, const char *path)
{
	return bw_json_count(obj, key, v, path);
}

static void fmt_shape(char *buf, size_t cap, int ndim, const int64_t *shape)
{
	size_t k = (size_t)snprintf(buf, cap, "[");
	for (int i = 0; i < ndim && k < cap; i++)
		k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? ", " : "", (long long)shape[i]);
	if (k < cap)
		snprintf(buf + k, cap - k, "]");
}

/* Check an array's dtype and shape against what meta.json implies. */
int bw_expect_array(const char *path, const bw_npy *h, burrow_dtype t, int ndim, const int64_t *shape)
{
	if (h->dtype != t)
		return bw_err(BURROW_E_FORMAT, "%s: dtype is %s, expected %s", path, burrow_dtype_name(h->dtype),
			      burrow_dtype_name(t));
	bool same = h->ndim == ndim;
	for (int i = 0; same && i < ndim; i++)
		same = h->shape[i] == shape[i];
	if (!same) {
		char got[128], want[128];
		fmt_shape(got, sizeof got, h->ndim, h->shape);
		fmt_shape(want, sizeof want, ndim, shape);
		return bw_err(BURROW_E_FORMAT, "%s: shape is %s, expected %s from meta.json", path, got, want);
	}
	return 0;
}

static int expect_array(const char *path, const bw_npy *h, burrow_dtype t, int ndim, const int64_t *shape)
{
	return bw_expect_array(path, h, t, ndim, shape);
}

int bw_map_array(const char *dir, const char *rel, bw_npy_map *m, burrow_dtype t, int ndim, const int64_t *shape)
{
	bw_npy h;
	char *path = bw_path_join(dir, rel);
	if (!path)
		return BURROW_E_NOMEM;
	int st = bw_npy_mmap(path, &h, m);
	if (!st)
		st = expect_array(path, &h, t, ndim, shape);
	if (st)
		bw_npy_unmap(m);
	bw_free(path);
	return st;
}

/* Map dir/rel and check it. */
static int map_array(burrow_dataset *ds, const char *rel, bw_npy_map *m, burrow_dtype t, int ndim,
		     const int64_t *shape)
{
	return bw_map_array(ds->dir, rel, m, t, ndim, shape);
}

/* Multi-label: meta.json's optional "num_tasks" (labels.npy is then int8 [N, T] and "num_classes" 0). */
static int parse_tasks(const cJSON *j, burrow_dataset_info *in, const char *path)
{
	int64_t t = 0;
	int st;
	if (!cJSON_GetObjectItemCaseSensitive(j, "num_tasks"))
		return 0;
	if ((st = json_int(j, "num_tasks", &t, path)))
		return st;
	if (t > BW_MAX_CLASSES)
		return bw_err(BURROW_E_FORMAT, "%s: \"num_tasks\" %lld is more than the %d tasks Burrow accepts", path,
			      (long long)t, BW_MAX_CLASSES);
	if (t > 0 && in->num_classes > 0)
		return bw_err(BURROW_E_FORMAT, "%s: \"num_tasks\" %lld and \"num_classes\" %d: a dataset's labels.npy is "
			      "one or the other", path, (long long)t, in->num_classes);
	in->num_tasks = (int32_t)t;
	return 0;
}

/* meta.json's "edge_feat_dim" and "edge_feat_dtype" (both absent: no edge features). */
static int parse_edge_meta(burrow_dataset_info *in, const cJSON *j, const char *path)
{
	int st;
	in->edge_feat_dim = 0;
	in->edge_feat_dtype = BURROW_DTYPE_F32;
	if (!cJSON_GetObjectItemCaseSensitive(j, "edge_feat_dim"))
		return 0;
	if ((st = json_int(j, "edge_feat_dim", &in->edge_feat_dim, path)))
		return st;
	if (in->edge_feat_dim > BW_MAX_FEAT_DIM)
		return bw_err(BURROW_E_FORMAT, "%s: \"edge_feat_dim\" %lld is more than the %d Burrow accepts", path,
			      (long long)in->edge_feat_dim, BW_MAX_FEAT_DIM);
	if (in->edge_feat_dim == 0)
		return 0;
	const cJSON *fd = cJSON_GetObjectItemCaseSensitive(j, "edge_feat_dtype");
	in->edge_feat_dtype = cJSON_IsString(fd) ? burrow_dtype_parse(fd->valuestring) : BURROW_DTYPE_INVALID;
	if (in->edge_feat_dtype != BURROW_DTYPE_F32 && in->edge_feat_dtype != BURROW_DTYPE_F16)
		return bw_err(BURROW_E_FORMAT, "%s: \"edge_feat_dtype\" must be \"float32\" or \"float16\"", path);
	return 0;
}

/* edge_features.npy's header against meta.json: [num_edges, edge_feat_dim] of its dtype. */
static int open_edge_features(burrow_dataset *ds)
{
	const burrow_dataset_info *in = &ds->info;
	bw_npy h;
	int st;
	if (in->edge_feat_dim == 0)
		return 0;
	if (!(ds->edge_feat_path = bw_path_join(ds->dir, "edge_features.npy")))
		return BURROW_E_NOMEM;
	const int64_t shape[2] = {in->num_edges, in->edge_feat_dim};
	if ((st = bw_npy_open(ds->edge_feat_path, &h, NULL)) ||
	    (st = expect_array(ds->edge_feat_path, &h, in->edge_feat_dtype, 2, shape)))
		return st;
	ds->edge_feat_offset = h.data_offset;
	return 0;
}

/* Every value of edge_features.npy finite (mapped, read once in pieces that are unmapped as
 * they are done). The message names the first entry (CSR position) and column that is not. */
static int verify_edge_features(const burrow_dataset *ds)
{
	const burrow_dataset_info *in = &ds->info;
	bw_npy h;
	bw_npy_map m;
	if (!in->edge_feat_dim)
		return 0;
	int st = bw_npy_mmap(ds->edge_feat_path, &h, &m);
	if (st)
		return st;
	const int64_t n = in->num_edges * in->edge_feat_dim;
	int64_t bad = n;
#pragma omp parallel for schedule(static) reduction(min : bad)
	for (int64_t i = 0; i < n; i++) {
		const float x = in->edge_feat_dtype == BURROW_DTYPE_F16 ? bw_f16_to_f32(((const uint16_t *)m.data)[i])
									: ((const float *)m.data)[i];
		if (!isfinite(x) && i < bad)
			bad = i;
	}
	if (bad < n)
		st = bw_err(BURROW_E_FORMAT, "%s: entry %lld, column %lld is not finite", ds->edge_feat_path,
			    (long long)(bad / in->edge_feat_dim), (long long)(bad % in->edge_feat_dim));
	bw_npy_unmap(&m);
	return st;
}

static int parse_meta(burrow_dataset *ds, const char *path, const char *text)
{
	burrow_dataset_info *in = &ds->info;
	int64_t v;
	int st = 0;
	(void)bw_json_nomem();
	cJSON *j = cJSON_Parse(text);
	if (!j && bw_json_nomem()) {
		st = bw_err(BURROW_E_NOMEM, "%s: out of memory reading it", path);
		goto out;
	}
	if (!j || !cJSON_IsObject(j)) {
		st = bw_err(BURROW_E_FORMAT, "%s: not a JSON object", path);
		goto out;
	}
	const cJSON *fmt = cJSON_GetObjectItemCaseSensitive(j, "format");
	if (!cJSON_IsString(fmt) || strcmp(fmt->valuestring, "burrow-dataset")) {
		st = bw_err(BURROW_E_FORMAT, "%s: \"format\" is %s%s%s, expected \"burrow-dataset\"", path,
			    cJSON_IsString(fmt) ? "\"" : "", cJSON_IsString(fmt) ? fmt->valuestring : "missing",
			    cJSON_IsString(fmt) ? "\"" : "");
		goto out;
	}
	if ((st = json_int(j, "version", &v, path)))
		goto out;
	if (v == BW_DATASET_VERSION_TYPED) { /* the typed reader maps and checks the rest */
		st = bw_typed_open(&ds->typed, ds->dir, path, j, &ds->info);
		goto out;
	}
	if (v != BURROW_DATASET_FORMAT_VERSION) {
		st = bw_err(BURROW_E_FORMAT, "%s: format version %lld is not one this burrow reads (%d, %d)", path,
			    (long long)v, BURROW_DATASET_FORMAT_VERSION, BW_DATASET_VERSION_TYPED);
		goto out;
	}
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
	ds->name = bw_strdup(cJSON_IsString(name) ? name->valuestring : "");
	if (!ds->name) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	in->name = ds->name;
	if ((st = json_int(j, "num_nodes", &in->num_nodes, path)) || (st = json_int(j, "num_edges", &in->num_edges, path)) ||
	    (st = json_int(j, "feat_dim", &in->feat_dim, path)))
		goto out;
	if ((st = json_int(j, "num_classes", &v, path)))
		goto out;
	if (v > BW_MAX_CLASSES) {
		st = bw_err(BURROW_E_FORMAT, "%s: \"num_classes\" %lld is more than the %d classes Burrow accepts", path,
			    (long long)v, BW_MAX_CLASSES);
		goto out;
	}
	if (in->feat_dim > BW_MAX_FEAT_DIM) {
		st = bw_err(BURROW_E_FORMAT, "%s: \"feat_dim\" %lld is more than the %d Burrow accepts", path,
			    (long long)in->feat_dim, BW_MAX_FEAT_DIM);
		goto out;
	}
	in->num_classes = (int32_t)v;
	if ((st = parse_tasks(j, in, path)))
		goto out;
	in->feat_dtype = BURROW_DTYPE_F32;
	if (in->feat_dim > 0) {
		const cJSON *fd = cJSON_GetObjectItemCaseSensitive(j, "feat_dtype");
		in->feat_dtype = cJSON_IsString(fd) ? burrow_dtype_parse(fd->valuestring) : BURROW_DTYPE_INVALID;
		if (in->feat_dtype != BURROW_DTYPE_F32 && in->feat_dtype != BURROW_DTYPE_F16) {
			st = bw_err(BURROW_E_FORMAT, "%s: \"feat_dtype\" must be \"float32\" or \"float16\"", path);
			goto out;
		}
	}
	const cJSON *sym = cJSON_GetObjectItemCaseSensitive(j, "symmetric");
	if (!cJSON_IsBool(sym)) {
		st = bw_err(BURROW_E_FORMAT, "%s: \"symmetric\" must be true or false", path);
		goto out;
	}
	in->symmetric = cJSON_IsTrue(sym);
	in->index_width = in->num_nodes < ((int64_t)1 << 31) ? 4 : 8;
	const cJSON *splits = cJSON_GetObjectItemCaseSensitive(j, "splits");
	if (splits && !cJSON_IsObject(splits)) {
		st = bw_err(BURROW_E_FORMAT, "%s: \"splits\" must be an object of counts", path);
		goto out;
	}
	int64_t *counts[3] = {&in->num_train, &in->num_valid, &in->num_test};
	for (int i = 0; splits && i < 3; i++) {
		*counts[i] = 0;
		if (cJSON_GetObjectItemCaseSensitive(splits, bw_split_names[i]) &&
		    (st = json_int(splits, bw_split_names[i], counts[i], path)))
			goto out;
	}
	if ((st = parse_edge_meta(in, j, path)))
		goto out;
	const cJSON *es = cJSON_GetObjectItemCaseSensitive(j, "edge_split");
	if (es && (st = bw_esplit_open(&ds->esplit, ds->dir, path, es, in->num_nodes)))
		goto out;
	const cJSON *src = cJSON_GetObjectItemCaseSensitive(j, "source");
	ds->source_json = src ? cJSON_PrintUnformatted(src) : bw_strdup("{}");
	if (!ds->source_json)
		st = bw_err(BURROW_E_NOMEM, "out of memory");
	in->source_json = ds->source_json;
out:
	cJSON_Delete(j);
	return st;
}

/* Is v in the sorted row u? */
static bool has_edge(const burrow_csr *g, int64_t u, int64_t v)
{
	int64_t lo = g->indptr[u], hi = g->indptr[u + 1];
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2, x = burrow_csr_index(g, mid);
		if (x == v)
			return true;
		if (x < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* The error for a graph that meta.json calls symmetric and is not, naming an edge
 * without its reverse (O(E log degree): only on the way out, or from verify). */
static int asymmetric_edge(const burrow_dataset *ds)
{
	const burrow_csr *g = &ds->graph;
	for (int64_t u = 0; u < g->num_nodes; u++)
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++) {
			int64_t v = burrow_csr_index(g, j);
			if (!has_edge(g, v, u))
				return bw_err(BURROW_E_FORMAT,
					      "%s/meta.json: says \"symmetric\": true, but edge %lld -> %lld of indices.npy has "
					      "no reverse",
					      ds->dir, (long long)u, (long long)v);
		}
	/* the multisets differ only in how often an edge repeats */
	return bw_err(BURROW_E_FORMAT,
		      "%s/meta.json: says \"symmetric\": true, but an edge of indices.npy repeats more often than its "
		      "reverse",
		      ds->dir);
}

/* A multi-label dataset's labels.npy holds 1, 0 or -1 (unknown) only: the first other value named. */
static int validate_multilabels(const burrow_dataset *ds)
{
	const int8_t *y = burrow_dataset_multilabels(ds);
	const int64_t cnt = y ? ds->info.num_nodes * ds->info.num_tasks : 0;
	int64_t bad = cnt;
#pragma omp parallel for schedule(static) reduction(min : bad)
	for (int64_t i = 0; i < cnt; i++)
		if ((y[i] < -1 || y[i] > 1) && i < bad)
			bad = i;
	if (bad < cnt)
		return bw_err(BURROW_E_FORMAT, "%s/labels.npy: node %lld, task %lld has label %d: multi-label labels are "
			      "1, 0 or -1 (unknown)", ds->dir, (long long)(bad / ds->info.num_tasks),
			      (long long)(bad % ds->info.num_tasks), y[bad]);
	return 0;
}

/* Entries scanned between drops of their pages: a few MiB resident at a time, whatever N. */
#define SCAN_PIECE ((int64_t)1 << 20)

/* The splits' ids in [0, N), none twice nor in two splits; messages name DIR/<folder>/<split>.npy. */
static int check_splits(const burrow_dataset *ds, const char *folder)
{
	const burrow_dataset_info *in = &ds->info;
	const char *dir = ds->dir;
	int st = 0;
	uint64_t *seen = bw_calloc((size_t)(in->num_nodes + 63) / 64 + 1, sizeof *seen);
	if (!seen)
		return bw_err(BURROW_E_NOMEM, "%s: out of memory checking the splits", dir);
	for (int i = 0; i < 3 && !st; i++) {
		int64_t n;
		const int64_t *ids = burrow_dataset_split(ds, i, &n);
		for (int64_t k = 0; k < n; k++) {
			const int64_t v = ids[k];
			if (v < 0 || v >= in->num_nodes) {
				st = bw_err(BURROW_E_FORMAT, "%s/%s/%s.npy: entry %lld is node %lld, outside [0, %lld)", dir, folder,
					    bw_split_names[i], (long long)k, (long long)v, (long long)in->num_nodes);
				break;
			}
			const uint64_t bit = 1ull << (v & 63);
			if (seen[v >> 6] & bit) {
				st = bw_err(BURROW_E_FORMAT, "%s/%s/%s.npy: node %lld appears twice or in two splits", dir, folder,
					    bw_split_names[i], (long long)v);
				break;
			}
			seen[v >> 6] |= bit;
			if ((k + 1) % SCAN_PIECE == 0 || k + 1 == n)
				bw_drop_mapped(ids + (k / SCAN_PIECE) * SCAN_PIECE, (size_t)(k % SCAN_PIECE + 1) * sizeof *ids);
		}
	}
	bw_free(seen);
	return st;
}

/* What every consumer relies on, checked at open in one streamed pass over each array
 * (the ids once, in parallel; an N-bit map for the splits): the CSR's offsets monotone
 * from 0 to E, every id in [0, N) and rows sorted, the symmetric flag true when claimed
 * (hashed, see bw_csr_scan), labels in [-1, C) (multi-label: 1, 0, -1), split ids in [0, N) and in at most one
 * split. The message names the file and the first bad entry. */
static int validate(const burrow_dataset *ds)
{
	const burrow_dataset_info *in = &ds->info;
	const char *dir = ds->dir;
	bool sym = false;
	char *offs = bw_path_join(dir, "indptr.npy"), *ids = bw_path_join(dir, "indices.npy");
	int st = offs && ids ? bw_csr_scan(&ds->graph, false, in->symmetric ? &sym : NULL, offs, ids, true)
			     : bw_err(BURROW_E_NOMEM, "%s: out of memory", dir);
	bw_free(offs);
	bw_free(ids);
	if (st)
		return st;
	if (in->symmetric && !sym)
		return asymmetric_edge(ds);
	bw_npy_map_drop(&ds->indptr_m); /* each array's pages leave the RSS once scanned (drop_checked_pages) */
	const int32_t *lab = burrow_dataset_labels(ds); /* NULL for multi-label (validate_multilabels) */
	const int32_t c = in->num_classes;
	int64_t bad = in->num_nodes;
	for (int64_t v0 = 0; v0 < (lab ? in->num_nodes : 0) && bad == in->num_nodes; v0 += SCAN_PIECE) {
		const int64_t v1 = BW_MIN(v0 + SCAN_PIECE, in->num_nodes);
#pragma omp parallel for schedule(static) reduction(min : bad)
		for (int64_t v = v0; v < v1; v++)
			if ((lab[v] < -1 || lab[v] >= c) && v < bad)
				bad = v;
		bw_drop_mapped(lab + v0, (size_t)(v1 - v0) * sizeof *lab);
	}
	if (bad < in->num_nodes)
		return bw_err(BURROW_E_FORMAT, "%s/labels.npy: node %lld has label %d, outside [-1, %d)", dir,
			      (long long)bad, lab[bad], c);
	if ((st = validate_multilabels(ds)))
		return st;
	return check_splits(ds, "split");
}

/* ------------------------------------------------------------ the validation cache
 *
 * Validation reads every index once; reopening a large dataset whose files have not
 * changed skips it. What was validated is remembered outside the dataset (which may be
 * read-only, and is the user's input): one small file per dataset directory in
 * $XDG_CACHE_HOME/burrow/validated/ (else ~/.cache/...), named by a hash of the
 * directory's real path and holding, per file read, its device, inode, size, mtime and
 * ctime (ctime cannot be set back, so a file rewritten in place and given its old mtime
 * still differs). A record is written only when every file's ctime is at least
 * VCACHE_RACY seconds before the scan began (git's "racily clean" rule: a file changed
 * within one tick of the record would otherwise look unchanged), and only for datasets of
 * at least VCACHE_MIN_EDGES entries, where the scan costs more than the lookup. A cache that
 * cannot be read or written is a miss, never an error. BURROW_VALIDATION_CACHE=0 turns it
 * off, =all caches every dataset (the tests). burrow_dataset_verify always scans. */
#define VCACHE_MIN_EDGES ((int64_t)1 << 24)
#define VCACHE_RACY 2

static const char *const vcache_files[] = {"meta.json",	    "indptr.npy",      "indices.npy",
					   "labels.npy",    "split/train.npy", "split/valid.npy",
					   "split/test.npy"};

/* The cache's file for ds (caller frees), or NULL when off, too small or unplaced. */
static char *vcache_path(const burrow_dataset *ds)
{
	const char *mode = getenv("BURROW_VALIDATION_CACHE");
	if (mode && !strcmp(mode, "0"))
		return NULL;
	if (ds->info.num_edges < VCACHE_MIN_EDGES && !(mode && !strcmp(mode, "all")))
		return NULL;
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char root[4096], *real = realpath(ds->dir, NULL);
	if (!real)
		return NULL;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a of the real path */
	for (const char *p = real; *p; p++)
		h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
	free(real);
	int k = xdg && *xdg == '/' ? snprintf(root, sizeof root, "%s/burrow/validated", xdg)
	      : home && *home	    ? snprintf(root, sizeof root, "%s/.cache/burrow/validated", home)
				    : -1;
	if (k < 0 || (size_t)k + 32 > sizeof root)
		return NULL;
	char *path = malloc(strlen(root) + 32);
	if (path)
		sprintf(path, "%s/%016llx", root, (unsigned long long)h);
	return path;
}

/* The key of ds's files now: one line per file that exists. *racy: a file changed less
 * than VCACHE_RACY seconds ago. NULL when a file cannot be looked at. */
static char *vcache_key(const burrow_dataset *ds, bool *racy)
{
	size_t cap = 256 * (sizeof vcache_files / sizeof vcache_files[0]) + 64, n = 0;
	char *key = malloc(cap);
	struct timespec now;
	if (!key)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &now);
	*racy = false;
	n += (size_t)snprintf(key, cap, "burrow-validated 1 %s\n", burrow_version());
	for (size_t i = 0; i < sizeof vcache_files / sizeof vcache_files[0]; i++) {
		char p[4096];
		struct stat sb;
		snprintf(p, sizeof p, "%s/%s", ds->dir, vcache_files[i]);
		if (stat(p, &sb) != 0) {
			if (errno == ENOENT)
				continue;
			free(key);
			return NULL;
		}
		*racy |= sb.st_ctim.tv_sec + VCACHE_RACY > now.tv_sec || sb.st_mtim.tv_sec + VCACHE_RACY > now.tv_sec;
		n += (size_t)snprintf(key + n, cap - n, "%s %llu %llu %lld %lld.%09ld %lld.%09ld\n", vcache_files[i],
				      (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino, (long long)sb.st_size,
				      (long long)sb.st_mtim.tv_sec, sb.st_mtim.tv_nsec, (long long)sb.st_ctim.tv_sec,
				      sb.st_ctim.tv_nsec);
	}
	return key;
}

/* Was ds, as its files are now, validated before? Plain libc reads: a miss costs nothing
 * of the library's (no allocation through the counting allocator, no message). */
static bool vcache_hit(const char *path, const char *key)
{
	char buf[4096];
	return bw_read_small(path, buf, sizeof buf) > 0 && !strcmp(buf, key);
}

/* Remember that ds, keyed as `key`, passed: written beside, renamed into place. */
static void vcache_store(const char *dsdir, const char *path, const char *key)
{
	char dir[4096], tmp[4200];
	snprintf(dir, sizeof dir, "%s", path);
	*strrchr(dir, '/') = '\0';
	snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
	for (char *s = dir + 1; *s; s++) /* mkdir -p, quietly */
		if (*s == '/') {
			*s = '\0';
			mkdir(dir, 0755);
			*s = '/';
		}
	mkdir(dir, 0755);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	const size_t len = strlen(key);
	const bool ok = write(fd, key, len) == (ssize_t)len;
	if (close(fd) != 0 || !ok || rename(tmp, path) != 0)
		unlink(tmp);
	else
		bw_log(BURROW_LOG_DEBUG, "%s: validated; remembered in %s", dsdir, path);
}

/* Validation on open: skipped when the cache says these very files passed before. */
/* The scan read every page of the graph, labels and splits through their mappings; left mapped
 * they stay in the RSS (a 2^24-node dataset: 340 MB before the first row is gathered, the
 * whole graph's pages for one that fits under the resident bound) though a caller may never
 * read them again (bench io, partition's later passes) or read a few pages (a batch's labels).
 * They stay in the page cache: what is read next faults back in from memory. */
static void drop_checked_pages(const burrow_dataset *ds)
{
	bw_npy_map_drop(&ds->indptr_m);
	bw_npy_map_drop(&ds->indices_m);
	bw_npy_map_drop(&ds->labels_m);
	for (int i = 0; i < 3; i++)
		bw_npy_map_drop(&ds->split_m[i]);
}

static int validate_cached(const burrow_dataset *ds)
{
	char *path = vcache_path(ds), *key = NULL;
	bool racy = true;
	if (path && (key = vcache_key(ds, &racy)) && vcache_hit(path, key)) {
		bw_log(BURROW_LOG_DEBUG, "%s: validated before (%s)", ds->dir, path);
		free(path);
		free(key);
		return 0;
	}
	int st = validate(ds);
	if (!st && key && !racy)
		vcache_store(ds->dir, path, key);
	drop_checked_pages(ds);
	free(path);
	free(key);
	return st;
}

/* An OGB zip, or a folder as one unpacks (raw/, RELEASE_v1.txt, no meta.json): which burrow prep
 * line makes it a dataset directory. */
static int ogb_raw_hint(const char *dir, const struct stat *sb)
{
	char path[4096];
	struct stat x;
	size_t l = strlen(dir);
	while (l > 1 && dir[l - 1] == '/')
		l--;
	const char *base = dir + l;
	while (base > dir && base[-1] != '/')
		base--;
	const int bl = (int)(dir + l - base);
	if (!S_ISDIR(sb->st_mode))
		return l > 4 && !strncasecmp(dir + l - 4, ".zip", 4)
			       ? bw_err(BURROW_E_FORMAT, "%s: a zip, not a dataset directory: run `burrow prep %.*s` (it writes "
					"data/%.*s; --out to choose) and train on what it writes", dir, (int)l, dir, bl - 4, base)
			       : 0;
	snprintf(path, sizeof path, "%.*s/meta.json", (int)l, dir);
	if (stat(path, &x) == 0)
		return 0;
	snprintf(path, sizeof path, "%.*s/raw", (int)l, dir);
	const bool raw = stat(path, &x) == 0 && S_ISDIR(x.st_mode);
	snprintf(path, sizeof path, "%.*s/RELEASE_v1.txt", (int)l, dir);
	if (!raw && stat(path, &x) != 0)
		return 0;
	return bw_err(BURROW_E_FORMAT, "%s: an OGB dataset folder (raw/), not a dataset directory: run `burrow prep %.*s` "
		      "(it writes data/%.*s; --out to choose) and train on what it writes", dir, (int)l, dir, bl, base);
}

int burrow_dataset_open(burrow_dataset **out, const char *dir)
{
	char *meta_path = NULL, *text = NULL;
	int st;

	*out = NULL;
	burrow_dataset *ds = bw_calloc(1, sizeof *ds);
	if (!ds)
		return BURROW_E_NOMEM;
	ds->dir = bw_strdup(dir);
	meta_path = bw_path_join(dir, "meta.json");
	if (!ds->dir || !meta_path) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	struct stat sb;
	if (stat(dir, &sb) < 0) {
		st = bw_err_errno(errno, dir, "open dataset");
		goto fail;
	}
	if ((st = ogb_raw_hint(dir, &sb)))
		goto fail;
	if (!S_ISDIR(sb.st_mode)) {
		st = bw_err(BURROW_E_FORMAT, "%s: not a dataset directory", dir);
		goto fail;
	}
	if ((st = bw_read_text(meta_path, 16 << 20, &text)) || (st = parse_meta(ds, meta_path, text)))
		goto fail;
	if (ds->typed)
		goto done;

	burrow_dataset_info *in = &ds->info;
	const int64_t n = in->num_nodes, e = in->num_edges;
	int64_t shape[2] = {n + 1, 0};
	if ((st = map_array(ds, "indptr.npy", &ds->indptr_m, BURROW_DTYPE_I64, 1, shape)))
		goto fail;
	shape[0] = e;
	if ((st = map_array(ds, "indices.npy", &ds->indices_m,
			    in->index_width == 4 ? BURROW_DTYPE_I32 : BURROW_DTYPE_I64, 1, shape)))
		goto fail;
	ds->graph.num_nodes = n;
	ds->graph.num_edges = e;
	ds->graph.indptr = ds->indptr_m.data;
	ds->graph.indices = ds->indices_m.data;
	ds->graph.index_width = in->index_width;
	if (ds->graph.indptr[0] != 0 || ds->graph.indptr[n] != e) {
		st = bw_err(BURROW_E_FORMAT, "%s/indptr.npy: runs from %lld to %lld, expected 0 to %lld (num_edges)",
			    dir, (long long)ds->graph.indptr[0], (long long)ds->graph.indptr[n], (long long)e);
		goto fail;
	}

	if (in->feat_dim > 0) {
		bw_npy h;
		ds->features_path = bw_path_join(dir, "features.npy");
		if (!ds->features_path) {
			st = BURROW_E_NOMEM;
			goto fail;
		}
		int64_t fshape[2] = {n, in->feat_dim};
		if ((st = bw_npy_open(ds->features_path, &h, NULL)) ||
		    (st = expect_array(ds->features_path, &h, in->feat_dtype, 2, fshape)))
			goto fail;
		ds->features_offset = h.data_offset;
	}
	if ((st = open_edge_features(ds)))
		goto fail;
	if (in->num_classes > 0) {
		shape[0] = n;
		if ((st = map_array(ds, "labels.npy", &ds->labels_m, BURROW_DTYPE_I32, 1, shape)))
			goto fail;
	}
	if (in->num_tasks > 0) {
		int64_t lshape[2] = {n, in->num_tasks};
		if ((st = map_array(ds, "labels.npy", &ds->labels_m, BURROW_DTYPE_I8, 2, lshape)))
			goto fail;
	}
	int64_t counts[3] = {in->num_train, in->num_valid, in->num_test};
	for (int i = 0; i < 3; i++) {
		char rel[32];
		if (!counts[i])
			continue;
		snprintf(rel, sizeof rel, "split/%s.npy", bw_split_names[i]);
		shape[0] = counts[i];
		if ((st = map_array(ds, rel, &ds->split_m[i], BURROW_DTYPE_I64, 1, shape)))
			goto fail;
	}
	if ((st = validate_cached(ds)))
		goto fail;
done:
	bw_free(meta_path);
	bw_free(text);
	*out = ds;
	return 0;
fail:
	bw_free(meta_path);
	bw_free(text);
	burrow_dataset_close(ds);
	return st;
}

void burrow_dataset_close(burrow_dataset *ds)
{
	if (!ds)
		return;
	bw_npy_unmap(&ds->indptr_m);
	bw_npy_unmap(&ds->indices_m);
	bw_npy_unmap(&ds->labels_m);
	for (int i = 0; i < 3; i++)
		bw_npy_unmap(&ds->split_m[i]);
	bw_free(ds->dir);
	bw_free(ds->name);
	bw_free(ds->source_json); /* from cJSON (hooked to bw_malloc) or bw_strdup */
	bw_free(ds->features_path);
	bw_free(ds->edge_feat_path);
	bw_typed_close(ds->typed);
	bw_esplit_close(ds->esplit);
	bw_free(ds);
}

const burrow_dataset_info *burrow_dataset_get_info(const burrow_dataset *ds) { return &ds->info; }
const burrow_csr *burrow_dataset_graph(const burrow_dataset *ds) { return ds->typed ? NULL : &ds->graph; }
const char *bw_dataset_dir(const burrow_dataset *ds) { return ds->dir; }

const int32_t *burrow_dataset_labels(const burrow_dataset *ds)
{
	if (!ds->typed && ds->info.num_tasks > 0)
		return NULL; /* labels.npy holds the multi-label targets */
	return ds->typed ? bw_typed_labels(ds->typed) : ds->labels_m.data;
}

const int8_t *burrow_dataset_multilabels(const burrow_dataset *ds)
{
	return !ds->typed && ds->info.num_tasks > 0 ? ds->labels_m.data : NULL;
}

const char *burrow_dataset_features_path(const burrow_dataset *ds)
{
	burrow_type_info ti;
	if (ds->typed)
		return bw_typed_target_info(ds->typed, &ti) ? ti.features_path : NULL;
	return ds->features_path;
}

int64_t burrow_dataset_features_offset(const burrow_dataset *ds)
{
	burrow_type_info ti;
	if (ds->typed)
		return bw_typed_target_info(ds->typed, &ti) ? ti.features_offset : 0;
	return ds->features_offset;
}

const burrow_hetero *burrow_dataset_hetero(const burrow_dataset *ds)
{
	return ds->typed ? bw_typed_hetero(ds->typed) : NULL;
}

int burrow_dataset_type_info(const burrow_dataset *ds, int t, burrow_type_info *out)
{
	if (!ds->typed || t < 0 || t >= ds->info.num_types)
		return bw_err(BURROW_E_RANGE, "%s: node type %d of %d", ds->dir, t, ds->info.num_types);
	return bw_typed_type_info(ds->typed, t, out);
}

bool bw_dataset_type_raw(const burrow_dataset *ds, int type)
{
	return ds->typed && type >= 0 && type < ds->info.num_types && bw_typed_type_raw(ds->typed, type);
}

const int64_t *burrow_dataset_split(const burrow_dataset *ds, int split, int64_t *n)
{
	const int64_t counts[3] = {ds->info.num_train, ds->info.num_valid, ds->info.num_test};
	if (split < 0 || split > 2) {
		if (n)
			*n = 0;
		return NULL;
	}
	if (n)
		*n = counts[split];
	return ds->typed ? bw_typed_split(ds->typed, split) : ds->split_m[split].data;
}

/* meta.json's "named_splits"[name] counts into counts; BURROW_E_NOTFOUND naming the names there are. */
static int named_counts(const burrow_dataset *ds, const char *name, int64_t counts[3])
{
	char *path = bw_path_join(ds->dir, "meta.json"), *text = NULL;
	int st = path ? bw_read_text(path, 16 << 20, &text) : BURROW_E_NOMEM;
	cJSON *j = st ? NULL : cJSON_Parse(text);
	const cJSON *all = j ? cJSON_GetObjectItemCaseSensitive(j, "named_splits") : NULL;
	const cJSON *one = all ? cJSON_GetObjectItemCaseSensitive(all, name) : NULL;
	if (!st && !one) {
		char names[512] = "";
		size_t k = 0;
		for (const cJSON *x = all ? all->child : NULL; x && k < sizeof names; x = x->next)
			k += (size_t)snprintf(names + k, sizeof names - k, "%s%s", k ? ", " : "", x->string);
		st = bw_err(BURROW_E_NOTFOUND, "%s: no split named '%s' (meta.json's \"named_splits\": %s)", ds->dir, name,
			    k ? names : "none");
	}
	for (int i = 0; !st && i < 3; i++) {
		counts[i] = 0;
		if (cJSON_GetObjectItemCaseSensitive(one, bw_split_names[i]))
			st = json_int(one, bw_split_names[i], &counts[i], path);
	}
	cJSON_Delete(j);
	bw_free(text);
	bw_free(path);
	return st;
}

int burrow_dataset_select_split(burrow_dataset *ds, const char *name)
{
	char rel[BURROW_MAX_NAME + 32];
	int64_t counts[3];
	bw_npy_map m[3] = {{0}};
	if (!name || !*name)
		return 0;
	if (ds->typed)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: named splits are for datasets of one node type so far", ds->dir);
	if (!bw_type_name_ok(name))
		return bw_err(BURROW_E_INVAL, "%s: '%s' is not a split name (1 to %d of A-Z a-z 0-9 _ -)", ds->dir, name,
			      BURROW_MAX_NAME - 1);
	int st = named_counts(ds, name, counts);
	for (int i = 0; i < 3 && !st; i++) {
		snprintf(rel, sizeof rel, "split/%s/%s.npy", name, bw_split_names[i]);
		if (counts[i])
			st = map_array(ds, rel, &m[i], BURROW_DTYPE_I64, 1, (const int64_t[2]){counts[i], 0});
	}
	int64_t *have[3] = {&ds->info.num_train, &ds->info.num_valid, &ds->info.num_test};
	for (int i = 0; i < 3 && !st; i++) { /* swap in; back out when the check fails */
		const bw_npy_map t = ds->split_m[i];
		const int64_t c = *have[i];
		ds->split_m[i] = m[i];
		*have[i] = counts[i];
		m[i] = t;
		counts[i] = c;
	}
	char folder[BURROW_MAX_NAME + 8];
	snprintf(folder, sizeof folder, "split/%s", name);
	if (!st && (st = check_splits(ds, folder)))
		for (int i = 0; i < 3; i++) {
			const bw_npy_map t = ds->split_m[i];
			ds->split_m[i] = m[i];
			*have[i] = counts[i];
			m[i] = t;
		}
	for (int i = 0; i < 3; i++)
		bw_npy_unmap(&m[i]);
	return st;
}

int burrow_dataset_verify(const burrow_dataset *ds)
{
	if (ds->typed)
		return bw_typed_verify(ds->typed);
	int st = validate(ds); /* again: the files may have changed since open */
	if (!st)
		st = verify_edge_features(ds);
	return st || !ds->esplit ? st : bw_esplit_verify(ds->esplit);
}

bool burrow_dataset_has_edge_split(const burrow_dataset *ds) { return ds->esplit != NULL; }

int burrow_dataset_edge_split(const burrow_dataset *ds, int split, burrow_edge_split *out)
{
	memset(out, 0, sizeof *out);
	if (!ds->esplit)
		return bw_err(BURROW_E_NOTFOUND, "%s: the dataset has no edge splits (meta.json's \"edge_split\")", ds->dir);
	if (split < 0 || split > 2)
		return bw_err(BURROW_E_RANGE, "%s: edge split %d of 3", ds->dir, split);
	bw_esplit_get(ds->esplit, split, out);
	return 0;
}

const char *burrow_dataset_edge_features_path(const burrow_dataset *ds) { return ds->edge_feat_path; }
int64_t burrow_dataset_edge_features_offset(const burrow_dataset *ds) { return ds->edge_feat_offset; }

int64_t bw_resident_file_bytes(void)
{
	char buf[256];
	long long f[3];
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t k = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (k <= 0)
		return -1;
	buf[k] = 0;
	if (sscanf(buf, "%lld %lld %lld", &f[0], &f[1], &f[2]) != 3)
		return -1;
	return (int64_t)f[2] * sysconf(_SC_PAGESIZE);
}

int64_t bw_dataset_graph_keep_bytes(void)
{
	const char *e = getenv("BURROW_GRAPH_RESIDENT");
	if (e && !strcmp(e, "off"))
		return INT64_MAX;
	if (e && *e) {
		char *end;
		long long v = strtoll(e, &end, 10);
		int shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : *end == 'G' || *end == 'g' ? 30 : 0;
		if (v >= 0 && end != e && (shift ? end[1] == 0 : *end == 0) && v <= INT64_MAX >> shift)
			return (int64_t)v << shift;
		bw_log(BURROW_LOG_WARN, "BURROW_GRAPH_RESIDENT='%s' is not bytes (K/M/G suffixes) or \"off\"; ignored", e);
	}
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	return pages > 0 && page > 0 ? (int64_t)pages * page / 16 : INT64_MAX;
}

void bw_dataset_graph_random(const burrow_dataset *ds)
{
	if (ds->indptr_m.base)
		(void)madvise(ds->indptr_m.base, ds->indptr_m.len, MADV_RANDOM);
	if (ds->indices_m.base)
		(void)madvise(ds->indices_m.base, ds->indices_m.len, MADV_RANDOM);
}

int bw_dataset_trim_graph(const burrow_dataset *ds, int64_t keep_bytes)
{
	if (keep_bytes == INT64_MAX)
		return 0;
	const int64_t r = bw_resident_file_bytes();
	if (r < 0 || r <= keep_bytes)
		return 0;
	bw_log(BURROW_LOG_DEBUG, "%s: %lld resident file bytes: dropping the graph's mapped pages", ds->dir, (long long)r);
	/* read-only shared file mappings: dropped pages read back from the file (page cache) */
	if (ds->indptr_m.base)
		(void)madvise(ds->indptr_m.base, ds->indptr_m.len, MADV_DONTNEED);
	if (ds->indices_m.base)
		(void)madvise(ds->indices_m.base, ds->indices_m.len, MADV_DONTNEED);
	return 1;
}

int64_t burrow_dataset_disk_bytes(const burrow_dataset *ds)
{
	static const char *const files[] = {"meta.json",	  "indptr.npy",		"indices.npy",
					    "features.npy",	  "labels.npy",		"split/train.npy",
					    "split/valid.npy", "split/test.npy", "edge_features.npy"};
	int64_t total = 0;
	if (ds->typed)
		return bw_typed_disk_bytes(ds->typed);
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		struct stat sb;
		char *p = bw_path_join(ds->dir, files[i]);
		if (p && stat(p, &sb) == 0)
			total += (int64_t)sb.st_blocks * 512;
		bw_free(p);
	}
	return total;
}

/* ------------------------------------------------------------ replacing an output */

/* Is dir/meta.json a Burrow dataset's or parts directory's? */
static bool is_burrow_dir(const char *dir)
{
	char *m = bw_path_join(dir, "meta.json"), *text = NULL;
	bool yes = false;
	if (m && bw_read_text(m, 16 << 20, &text) == 0) {
		cJSON *j = cJSON_Parse(text);
		const cJSON *f = cJSON_IsObject(j) ? cJSON_GetObjectItemCaseSensitive(j, "format") : NULL;
		yes = cJSON_IsString(f) &&
		      (!strcmp(f->valuestring, "burrow-dataset") || !strcmp(f->valuestring, "burrow-parts"));
		cJSON_Delete(j);
	}
	bw_free(text);
	bw_free(m);
	return yes;
}

int bw_check_replaceable(const char *path, const char *input)
{
	struct stat sb;
	if (lstat(path, &sb) < 0)
		return 0;
	if (input) {
		char rp[PATH_MAX], ri[PATH_MAX];
		if (realpath(path, rp) && realpath(input, ri)) {
			size_t l = strlen(rp);
			if (!strncmp(rp, ri, l) && (ri[l] == '\0' || ri[l] == '/' || l == 1))
				return bw_err(BURROW_E_INVAL, "%s: is %sthe input %s; refusing to replace it", path,
					      ri[l] ? "a folder above " : "", input);
		}
	}
	if (!S_ISDIR(sb.st_mode) || !is_burrow_dir(path))
		return bw_err(BURROW_E_EXISTS,
			      "%s: exists and is not a Burrow dataset or parts directory; refusing to replace it", path);
	return 0;
}
