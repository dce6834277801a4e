/* prep.c: burrow prep: an OGB node property prediction dataset (its official zip, the
 * unpacked folder, or a catalog name) into a dataset directory, streaming: members are
 * read straight from the zip, csv.gz through zlib and .npz arrays in blocks, and the edge
 * list goes through the CSR builder, which sorts runs on disk when it exceeds the memory
 * budget. Phases: node count, edges -> CSR, features, labels, splits, meta.json. */
#define _GNU_SOURCE
#include "../core/half.h"
#include "../graph/csr_internal.h"
#include "dsio.h"
#include "pt.h"
#include "edgefeat.h"
#include "../graph/dataset_internal.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#define FEAT_CHUNK_BYTES ((size_t)4 << 20)
#define OVERHEAD ((size_t)32 << 20) /* readers, writers and merge buffers beside the edge keys */

void burrow_prep_defaults(burrow_prep_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->root = "data";
	o->feat_dtype = BURROW_DTYPE_F32;
	o->download = true;
	o->order = BURROW_ORDER_NONE;
}

size_t bw_half_memory(void)
{
	const size_t mem = bw_mem_total(); /* the machine's, or the cgroup's when smaller */
	return mem != SIZE_MAX ? mem / 2 : (size_t)1 << 30;
}

typedef struct prep {
	const burrow_prep_opts *o;
	const burrow_catalog_entry *cat; /* NULL when the dataset is not in the catalog */
	char name[256];
	char *zip;               /* the zip, or NULL when reading a folder; owned */
	char *dir;               /* the folder, or NULL; owned */
	zip_t *za;               /* the zip, open for looking members up */
	char prefix[512];        /* the zip's top folder with '/', or "" */
	char split[256];
	char release[64];
	bool binary;
	int npz_fd[2];           /* raw/data.npz, raw/node-label.npz extracted to unlinked files, -1 when not */
	char *out;               /* owned */
	char *spill;             /* owned */
	size_t mem;
	int64_t n;
	burrow_writer *w;
} prep;

/* The .npz members of papers100M-bin. */
static const char *const NPZ[2] = {"raw/data.npz", "raw/node-label.npz"};

typedef bw_member member;

/* snprintf that says whether the text fit. */
static bool fmt(char *buf, size_t cap, const char *f, ...) BW_PRINTF(3, 4);
static bool fmt(char *buf, size_t cap, const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(buf, cap, f, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < cap;
}

static void report(const prep *p, const char *phase, uint64_t done, uint64_t total)
{
	if (p->o->progress)
		p->o->progress(p->o->progress_user, phase, done, total);
}

static bool in_zip(const prep *p, const char *name) { return zip_name_locate(p->za, name, 0) >= 0; }

/* The member rel ("raw/edge.csv.gz") of the dataset; BURROW_E_NOTFOUND naming it when absent. */
static int member_of(const prep *p, const char *rel, member *m)
{
	memset(m, 0, sizeof *m);
	m->src.fd = -1;
	if (p->zip) {
		if (!fmt(m->member, sizeof m->member, "%s%s", p->prefix, rel) ||
		    !fmt(m->name, sizeof m->name, "%s:%s", p->zip, m->member) || !fmt(m->path, sizeof m->path, "%s", p->zip))
			return bw_err(BURROW_E_INVAL, "%s: path too long", p->zip);
		m->src = (bw_src){.name = m->name, .path = m->path, .fd = -1, .member = m->member};
		if (!in_zip(p, m->member))
			return bw_err(BURROW_E_NOTFOUND, "%s: member %s is missing", p->zip, m->member);
		return 0;
	}
	if (!fmt(m->path, sizeof m->path, "%s/%s", p->dir, rel) || !fmt(m->name, sizeof m->name, "%s", m->path))
		return bw_err(BURROW_E_INVAL, "%s: path too long", p->dir);
	m->src = (bw_src){.name = m->name, .path = m->path, .fd = -1};
	if (access(m->path, R_OK) < 0)
		return bw_err(BURROW_E_NOTFOUND, "%s: file is missing", m->path);
	return 0;
}

/* A gzipped CSV member of the dataset, opened as comma-separated text (c reads m->src). */
static int open_csv(const prep *p, const char *rel, member *m, bw_csv *c)
{
	int st = member_of(p, rel, m);
	return st ? st : bw_csv_open(c, &m->src, true, ',', false);
}

/* The array `arr` ("edge_index") of the .npz member npz ("raw/data.npz"). */
static int npz_member_of(const prep *p, const char *npz, const char *arr, member *m)
{
	int st = member_of(p, npz, m);
	if (st)
		return st;
	char base[1280];
	memcpy(base, m->name, sizeof base);
	if (!fmt(m->name, sizeof m->name, "%s:%s.npy", base, arr) ||
	    !fmt(m->nested, sizeof m->nested, "%s", m->member) || !fmt(m->member, sizeof m->member, "%s.npy", arr))
		return bw_err(BURROW_E_INVAL, "%s: path too long", base);
	int fd = p->npz_fd[strcmp(npz, NPZ[0]) ? 1 : 0];
	if (fd >= 0)
		m->src = (bw_src){.name = m->name, .path = NULL, .fd = fd, .member = m->member};
	else if (p->zip)
		m->src = (bw_src){.name = m->name, .path = m->path, .fd = -1, .nested = m->nested, .member = m->member};
	else
		m->src = (bw_src){.name = m->name, .path = m->path, .fd = -1, .member = m->member};
	return 0;
}

/* ---------------------------------------------------------------- finding the dataset */

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* The zip's top folder: whatever precedes its raw/ folder. */
static int zip_layout(prep *p)
{
	int st;
	if ((st = bw_zip_open(&p->za, p->zip, -1)))
		return st;
	zip_int64_t n = zip_get_num_entries(p->za, 0);
	bool found = false;
	for (zip_int64_t i = 0; i < n && !found; i++) {
		const char *e = zip_get_name(p->za, (zip_uint64_t)i, 0);
		const char *r = e ? strstr(e, "raw/") : NULL;
		while (r && r != e && r[-1] != '/')
			r = strstr(r + 1, "raw/");
		if (r && (size_t)(r - e) < sizeof p->prefix) {
			snprintf(p->prefix, sizeof p->prefix, "%.*s", (int)(r - e), e);
			found = true;
		}
	}
	if (!found)
		return bw_err(BURROW_E_FORMAT, "%s: no raw/ folder in the zip: not an OGB dataset", p->zip);
	/* a renamed zip: the top folder may still be a catalog download name ("arxiv/") */
	if (!p->cat && p->prefix[0]) {
		char top[512];
		snprintf(top, sizeof top, "%.*s", (int)strlen(p->prefix) - 1, p->prefix);
		if ((p->cat = burrow_catalog_find(top))) {
			snprintf(p->name, sizeof p->name, "%s", p->cat->name);
			snprintf(p->split, sizeof p->split, "%s", p->cat->split);
		}
	}
	/* RELEASE_v1.txt names the release */
	for (zip_int64_t i = 0; i < n; i++) {
		const char *e = zip_get_name(p->za, (zip_uint64_t)i, 0);
		size_t pl = strlen(p->prefix);
		if (e && !strncmp(e, p->prefix, pl) && !strncmp(e + pl, "RELEASE_", 8) && strstr(e + pl, ".txt") &&
		    !strchr(e + pl, '/'))
			snprintf(p->release, sizeof p->release, "%.*s", (int)(strstr(e + pl, ".txt") - (e + pl) - 8),
				 e + pl + 8);
	}
	/* the split folder: the catalog's, else the only one there is */
	if (!p->split[0]) {
		char seen[4][256];
		int k = 0;
		char want[600];
		snprintf(want, sizeof want, "%ssplit/", p->prefix);
		for (zip_int64_t i = 0; i < n; i++) {
			const char *e = zip_get_name(p->za, (zip_uint64_t)i, 0);
			if (!e || strncmp(e, want, strlen(want)))
				continue;
			const char *s = e + strlen(want), *slash = strchr(s, '/');
			if (!slash || slash == s || (size_t)(slash - s) >= 256)
				continue;
			bool dup = false;
			for (int j = 0; j < k; j++)
				dup |= strlen(seen[j]) == (size_t)(slash - s) && !strncmp(seen[j], s, (size_t)(slash - s));
			if (!dup && k < 4)
				snprintf(seen[k++], 256, "%.*s", (int)(slash - s), s);
		}
		if (k == 0)
			return bw_err(BURROW_E_NOTFOUND, "%s: member %ssplit/ is missing (no split folder)", p->zip, p->prefix);
		if (k > 1)
			return bw_err(BURROW_E_FORMAT, "%s: several split folders (%s, %s, ...): cannot tell which to use",
				      p->zip, seen[0], seen[1]);
		snprintf(p->split, sizeof p->split, "%s", seen[0]);
	}
	char npz[600];
	snprintf(npz, sizeof npz, "%sraw/data.npz", p->prefix);
	p->binary = in_zip(p, npz);
	return 0;
}

static int dir_layout(prep *p)
{
	char path[1200];
	struct stat sb;
	snprintf(path, sizeof path, "%s/raw", p->dir);
	if (stat(path, &sb) < 0 || !S_ISDIR(sb.st_mode))
		return bw_err(BURROW_E_FORMAT, "%s: no raw/ folder: not an OGB dataset folder", p->dir);
	snprintf(path, sizeof path, "%s/raw/data.npz", p->dir);
	p->binary = stat(path, &sb) == 0;
	DIR *top = opendir(p->dir);
	struct dirent *te;
	while (top && (te = readdir(top))) {
		size_t l = strlen(te->d_name);
		if (!strncmp(te->d_name, "RELEASE_", 8) && l > 12 && !strcmp(te->d_name + l - 4, ".txt"))
			snprintf(p->release, sizeof p->release, "%.*s", (int)(l - 12), te->d_name + 8);
	}
	if (top)
		closedir(top);
	if (!p->split[0]) {
		snprintf(path, sizeof path, "%s/split", p->dir);
		DIR *d = opendir(path);
		if (!d)
			return bw_err(BURROW_E_NOTFOUND, "%s: file is missing (no split folder)", path);
		struct dirent *e;
		int k = 0;
		while ((e = readdir(d)))
			if (e->d_name[0] != '.') {
				if (k++ == 0)
					snprintf(p->split, sizeof p->split, "%s", e->d_name);
			}
		closedir(d);
		if (k != 1)
			return bw_err(k ? BURROW_E_FORMAT : BURROW_E_NOTFOUND, "%s: %s split folder", path,
				      k ? "more than one" : "no");
	}
	return 0;
}

/* A name that is not in the catalog: its zip where `burrow download NAME --url URL` puts it,
 * <root>/<name>.zip, or downloaded there from o->url. */
static int locate_named(prep *p, const char *name, const char *root)
{
	struct stat sb;
	char path[1024];
	int st;
	if (!fmt(path, sizeof path, "%s/%s.zip", root, name))
		return bw_err(BURROW_E_INVAL, "%s: path too long", root);
	if (stat(path, &sb) < 0) {
		if (!p->o->url)
			return bw_err(BURROW_E_NOTFOUND,
				      "'%s' is neither a dataset in the catalog (see 'burrow datasets') nor a zip or folder, "
				      "and %s does not exist (give a URL to download it)",
				      name, path);
		if (!p->o->download)
			return bw_err(BURROW_E_NOTFOUND, "%s: no such file (and downloading is off)", path);
		burrow_download_opts d;
		burrow_download_defaults(&d);
		d.url = p->o->url;
		d.progress = p->o->progress;
		d.progress_user = p->o->progress_user;
		if ((st = burrow_download(name, root, &d, path, sizeof path)))
			return st;
	}
	snprintf(p->name, sizeof p->name, "%s", name);
	if (!(p->zip = bw_strdup(path)))
		return BURROW_E_NOMEM;
	return zip_layout(p);
}

/* source -> zip or folder, dataset name, catalog entry; downloads a missing zip. */
static int locate(prep *p, const char *source)
{
	struct stat sb;
	int st;
	const char *root = p->o->root ? p->o->root : "data";
	if (stat(source, &sb) == 0) {
		char *s = bw_strdup(source);
		if (!s)
			return BURROW_E_NOMEM;
		for (size_t l = strlen(s); l > 1 && s[l - 1] == '/';)
			s[--l] = '\0';
		if (S_ISDIR(sb.st_mode))
			p->dir = s;
		else
			p->zip = s;
		const char *b = base_name(s);
		snprintf(p->name, sizeof p->name, "%s", b);
		size_t l = strlen(p->name);
		if (l > 4 && !strcasecmp(p->name + l - 4, ".zip"))
			p->name[l - 4] = '\0';
		p->cat = burrow_catalog_find(p->name);
	} else {
		p->cat = burrow_catalog_find(source);
		if (!p->cat) {
			if (strchr(source, '/') || strstr(source, ".zip"))
				return bw_err(BURROW_E_NOTFOUND, "%s: no such file or directory", source);
			return locate_named(p, source, root);
		}
		snprintf(p->name, sizeof p->name, "%s", p->cat->name);
		char alt[1024];
		snprintf(alt, sizeof alt, "%s/%s.zip", root, p->cat->download_name);
		if (stat(alt, &sb) == 0) {
			p->zip = bw_strdup(alt);
		} else {
			char path[1024];
			if (!p->o->download) {
				snprintf(path, sizeof path, "%s/%s.zip", root, p->cat->name);
				if (stat(path, &sb) < 0)
					return bw_err(BURROW_E_NOTFOUND, "%s: no such file (and downloading is off)", path);
			} else {
				burrow_download_opts d;
				burrow_download_defaults(&d);
				d.url = p->o->url;
				d.progress = p->o->progress;
				d.progress_user = p->o->progress_user;
				if ((st = burrow_download(p->cat->name, root, &d, path, sizeof path)))
					return st;
			}
			p->zip = bw_strdup(path);
		}
		if (!p->zip)
			return BURROW_E_NOMEM;
	}
	if (p->cat) {
		snprintf(p->name, sizeof p->name, "%s", p->cat->name);
		snprintf(p->split, sizeof p->split, "%s", p->cat->split);
	}
	return p->zip ? zip_layout(p) : dir_layout(p);
}

/* ---------------------------------------------------------------- csv members */

/* The single integer of a one-line file (num-node-list, num-edge-list). */
static int read_count(const prep *p, const char *rel, int64_t *v)
{
	member m;
	bw_csv c;
	bool more;
	int st;
	if ((st = member_of(p, rel, &m)) || (st = bw_csv_open(&c, &m.src, true, ',', false)))
		return st;
	if (!(st = bw_csv_next_line(&c, &more)) && !more)
		st = bw_err(BURROW_E_FORMAT, "%s: empty, expected one number", m.name);
	if (!st)
		st = bw_csv_ints(&c, v, 1);
	if (!st && !(st = bw_csv_next_line(&c, &more)) && more)
		st = bw_csv_err(&c, BURROW_E_FORMAT, "expected one line (one graph), found more");
	if (!st && *v < 0)
		st = bw_err(BURROW_E_FORMAT, "%s: negative count %lld", m.name, (long long)*v);
	bw_csv_close(&c);
	return st;
}

static int edges_csv(prep *p, burrow_csr_builder *b, int64_t *count)
{
	member m;
	bw_csv c;
	int st;
	if ((st = open_csv(p, "raw/edge.csv.gz", &m, &c)))
		return st;
	st = bw_csv_edges(&c, p->n, b, p->o->progress, p->o->progress_user, count, NULL);
	bw_csv_close(&c);
	return st;
}

/* A file of one row per node: refuse the row after the last node's ... */
static int row_fits(const prep *p, bw_csv *c, int64_t rows)
{
	return rows < p->n ? 0 : bw_csv_err(c, BURROW_E_FORMAT, "more rows than the %lld nodes", (long long)p->n);
}

/* ... and, at its end, too few rows. */
static int rows_match(const prep *p, const member *m, int64_t rows)
{
	return rows == p->n ? 0
			    : bw_err(BURROW_E_FORMAT, "%s: %lld rows, but the graph has %lld nodes", m->name,
				     (long long)rows, (long long)p->n);
}

static int features_csv(prep *p)
{
	member m;
	bw_csv c;
	bool more;
	int st;
	float *buf = NULL;
	if ((st = open_csv(p, "raw/node-feat.csv.gz", &m, &c)))
		return st;
	if ((st = bw_csv_next_line(&c, &more)))
		goto out;
	if (!more) {
		st = bw_err(BURROW_E_FORMAT, "%s: empty, expected %lld rows of features", m.name, (long long)p->n);
		goto out;
	}
	const int64_t dim = bw_csv_count_fields(&c);
	const int64_t per = BW_MAX(1, (int64_t)(FEAT_CHUNK_BYTES / ((size_t)dim * sizeof(float))));
	if (!(buf = bw_malloc((size_t)(per * dim) * sizeof *buf))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if ((st = burrow_writer_features_begin(p->w, p->n, dim, p->o->feat_dtype)))
		goto out;
	int64_t rows = 0, k = 0;
	for (; more; st = bw_csv_next_line(&c, &more)) {
		if (st)
			goto out;
		if ((st = row_fits(p, &c, rows)) || (st = bw_csv_floats(&c, buf + k * dim, dim)))
			goto out;
		rows++;
		if (++k == per) {
			if ((st = bw_put_rows(p->w, buf, k, dim, p->o->feat_dtype)))
				goto out;
			k = 0;
			report(p, "features", bw_rd_consumed(c.rd), bw_rd_size(c.rd));
		}
	}
	if (st || (st = rows_match(p, &m, rows)) || (st = bw_put_rows(p->w, buf, k, dim, p->o->feat_dtype)) ||
	    (st = burrow_writer_features_end(p->w)))
		goto out;
	report(p, "features", bw_rd_size(c.rd), bw_rd_size(c.rd));
out:
	bw_free(buf);
	bw_csv_close(&c);
	return st;
}

/* Labels: check the range, pick the class count, write. */
static int put_labels(prep *p, int32_t *y, const char *name)
{
	int64_t top = -1;
	for (int64_t v = 0; v < p->n; v++)
		top = BW_MAX(top, (int64_t)y[v]);
	int32_t classes = p->cat ? p->cat->num_classes : (int32_t)(top + 1);
	if (top >= classes)
		return bw_err(BURROW_E_RANGE, "%s: label %lld, but %s has %d classes", name, (long long)top, p->name, classes);
	if (classes <= 0) {
		bw_log(BURROW_LOG_WARN, "%s: no node has a label; writing no labels", name);
		return 0;
	}
	report(p, "labels", 1, 1);
	return burrow_writer_put_labels(p->w, y, p->n, classes);
}

/* Labels from rel (raw/node-label.csv.gz, or a type's), one a line, for p->n nodes. */
static int labels_csv(prep *p, const char *rel)
{
	member m;
	bw_csv c;
	bool more;
	int st;
	int32_t *y = NULL;
	int64_t rows = 0, v;
	if ((st = open_csv(p, rel, &m, &c)))
		return st;
	if (!(y = bw_malloc((size_t)(p->n ? p->n : 1) * sizeof *y))) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	while (!(st = bw_csv_next_line(&c, &more)) && more) {
		if ((st = row_fits(p, &c, rows)) || (st = bw_csv_label(&c, &v)))
			goto out;
		if (v < -1 || v >= INT32_MAX) {
			st = bw_csv_err(&c, BURROW_E_RANGE, "label %lld out of range", (long long)v);
			goto out;
		}
		y[rows++] = (int32_t)v;
	}
	if (!st && !(st = rows_match(p, &m, rows)))
		st = put_labels(p, y, m.name);
out:
	bw_free(y);
	bw_csv_close(&c);
	return st;
}

/* The three splits of split/<split>/<sub>: sub is "" or a type's folder ("paper/"). */
static int splits(prep *p, const char *sub)
{
	static const char *const names[3] = {"train", "valid", "test"};
	int st = 0;
	for (int s = 0; s < 3 && !st; s++) {
		char rel[512];
		member m;
		bw_csv c;
		bool more;
		int64_t *ids = NULL, n = 0, v;
		size_t cap = 0;
		snprintf(rel, sizeof rel, "split/%s/%s%s.csv.gz", p->split, sub, names[s]);
		if ((st = member_of(p, rel, &m)) || (st = bw_csv_open(&c, &m.src, true, ',', false)))
			break;
		while (!(st = bw_csv_next_line(&c, &more)) && more) {
			if ((st = bw_csv_ints(&c, &v, 1)))
				break;
			if (v < 0 || v >= p->n) {
				st = bw_csv_err(&c, BURROW_E_RANGE, "node id %lld out of range [0, %lld)", (long long)v,
						(long long)p->n);
				break;
			}
			if ((st = bw_grow(&ids, &cap, (size_t)n + 1, sizeof *ids, true)))
				break;
			ids[n++] = v;
		}
		if (!st) {
			st = burrow_writer_put_split(p->w, s, ids, n);
			report(p, "splits", (uint64_t)s + 1, 3);
		}
		bw_free(ids);
		bw_csv_close(&c);
	}
	return st;
}

/* ---------------------------------------------------------------- edge features, multi-label (ogbn-proteins) */

/* raw/edge-feat.csv.gz: one row per edge of raw/edge.csv.gz, in its order (OGB's edge_feat),
 * placed at both CSR entries of its edge; then node features reduced from them when asked. */
static int edge_features_csv(prep *p, int64_t edges)
{
	member m;
	bw_edge_rows r;
	int st = member_of(p, "raw/edge-feat.csv.gz", &m);
	if (!st)
		st = bw_edge_rows_csv(&m.src, true, ',', p->o->feat_dtype, &r, p->o->progress, p->o->progress_user);
	if (st)
		return st;
	st = bw_edge_rows_put(p->w, &r, edges, m.name, p->o->node_features_from_edges, p->o->edge_reduce);
	bw_edge_rows_free(&r);
	report(p, "features", 1, 1);
	return st;
}

/* One label row of T tasks: 1, 0, or NaN / empty (unknown: -1). */
static int label_row(bw_csv *c, float *buf, int8_t *y, int64_t t)
{
	int st = bw_csv_floats(c, buf, t);
	for (int64_t k = 0; !st && k < t; k++) {
		if (isnan(buf[k]) || buf[k] == 0 || buf[k] == 1)
			y[k] = isnan(buf[k]) ? -1 : (int8_t)buf[k];
		else
			st = bw_csv_err(c, BURROW_E_FORMAT, "task %lld: label %g, expected 0, 1 or nan", (long long)k,
					(double)buf[k]);
	}
	return st;
}

/* raw/node-label.csv.gz with T columns: T = 1 is a class id (labels_csv); more are binary
 * tasks, written as labels.npy int8 [N, T] with meta.json's "num_tasks" (docs/format.md). */
static int labels_tasks_csv(prep *p, const char *rel)
{
	member m;
	bw_csv c;
	bool more;
	int8_t *y = NULL;
	float *buf = NULL;
	int64_t rows = 0;
	int st = open_csv(p, rel, &m, &c);
	if (st || (st = bw_csv_next_line(&c, &more)))
		goto out;
	const int64_t t = more ? bw_csv_count_fields(&c) : 1;
	if (t == 1) {
		bw_csv_close(&c);
		return labels_csv(p, rel);
	}
	if (p->cat && p->cat->num_tasks && t != p->cat->num_tasks)
		bw_log(BURROW_LOG_WARN, "%s: %lld tasks, the catalog says %d", m.name, (long long)t, p->cat->num_tasks);
	y = bw_malloc((size_t)(p->n ? p->n : 1) * (size_t)t);
	buf = bw_malloc((size_t)t * sizeof *buf);
	if (!y || !buf) {
		st = bw_err(BURROW_E_NOMEM, "%s: out of memory for %lld x %lld labels", m.name, (long long)p->n, (long long)t);
		goto out;
	}
	for (; more && !st; st = bw_csv_next_line(&c, &more)) {
		if ((st = row_fits(p, &c, rows)) || (st = label_row(&c, buf, y + rows * t, t)))
			break;
		rows++;
	}
	if (!st && !(st = rows_match(p, &m, rows)))
		st = t > INT32_MAX ? bw_err(BURROW_E_FORMAT, "%s: %lld label columns", p->dir, (long long)t)
				    : burrow_writer_put_multilabels(p->w, y, p->n, (int32_t)t);
	report(p, "labels", 1, 1);
out:
	bw_free(y);
	bw_free(buf);
	bw_csv_close(&c);
	return st;
}

/* raw/node_species.csv.gz (OGB's additional node file; the species split is made of it):
 * checked to have a row per node, not stored. Absent: nothing to check. */
static int species_csv(prep *p)
{
	member m;
	bw_csv c;
	bool more;
	int64_t rows = 0, v;
	if (member_of(p, "raw/node_species.csv.gz", &m) != 0)
		return 0;
	int st = bw_csv_open(&c, &m.src, true, ',', false);
	if (st)
		return st;
	while (!(st = bw_csv_next_line(&c, &more)) && more && !(st = row_fits(p, &c, rows)) &&
	       !(st = bw_csv_ints(&c, &v, 1)))
		rows++;
	if (!st)
		st = rows_match(p, &m, rows);
	bw_csv_close(&c);
	return st;
}

/* The node arrays of a dataset with edge features: the edge features (and node features
 * from them, or raw/node-feat.csv.gz when it has its own), labels of one or many tasks. */
static int edge_featured(prep *p, int64_t edges)
{
	member m;
	const bool own = member_of(p, "raw/node-feat.csv.gz", &m) == 0;
	int st;
	if (own && p->o->node_features_from_edges)
		return bw_err(BURROW_E_INVAL, "%s: has node features of its own (%s); --node-features-from-edges is for "
			      "datasets without", p->name, m.name);
	if ((st = edge_features_csv(p, edges)) || (own && (st = features_csv(p))))
		return st;
	if (!own && !p->o->node_features_from_edges)
		bw_log(BURROW_LOG_INFO, "%s: no node features (give --node-features-from-edges mean|sum|max to make them "
		       "from the edge features)", p->name);
	if ((st = labels_tasks_csv(p, "raw/node-label.csv.gz")))
		return st;
	return species_csv(p);
}

/* ---------------------------------------------------------------- npz members (papers100M-bin) */

/* Copy the .npz member k if it is compressed out of the zip into an unlinked file, so
 * that its arrays can be opened (a zip needs seeking; a deflated member cannot seek). */
static int extract_npz(prep *p, int k)
{
	member m;
	int st;
	char npz[600];
	snprintf(npz, sizeof npz, "%s%s", p->prefix, NPZ[k]);
	zip_stat_t zs;
	zip_int64_t i = zip_name_locate(p->za, npz, 0);
	if (i < 0 || zip_stat_index(p->za, (zip_uint64_t)i, 0, &zs) < 0 || zs.comp_method == ZIP_CM_STORE)
		return 0;
	if ((st = member_of(p, NPZ[k], &m)))
		return st;
	char *path = bw_path_join(p->spill, "burrow-npz-XXXXXX");
	if (!path)
		return BURROW_E_NOMEM;
	int fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		st = bw_err_errno(errno, p->spill, "create a temporary file");
		bw_free(path);
		return st;
	}
	unlink(path);
	bw_rd *r;
	if ((st = bw_rd_open(&r, &m.src, false, false))) {
		close(fd);
		bw_free(path);
		return st;
	}
	const char *data;
	size_t n;
	while (!(st = bw_rd_next(r, &data, &n)) && n > 0) {
		if ((st = bw_write_all(fd, data, n, path)))
			break;
		report(p, "extract", bw_rd_consumed(r), bw_rd_size(r));
	}
	bw_rd_close(r);
	bw_free(path);
	if (st) {
		close(fd);
		return st;
	}
	p->npz_fd[k] = fd;
	return 0;
}

static int open_array(const prep *p, const char *npz, const char *arr, bw_npys *s, member *m)
{
	int st = npz_member_of(p, npz, arr, m);
	return st ? st : bw_npys_open(s, &m->src);
}

static int count_npz(prep *p)
{
	bw_npys s;
	member m;
	int st = open_array(p, NPZ[0], "num_nodes_list", &s, &m);
	if (st)
		return st;
	unsigned char buf[8];
	if (bw_npy_count(&s.h) != 1 || (s.h.dtype != BURROW_DTYPE_I64 && s.h.dtype != BURROW_DTYPE_I32)) {
		st = bw_err(BURROW_E_FORMAT, "%s: expected one integer (one graph)", s.name);
	} else if (!(st = bw_npys_read(&s, buf, burrow_dtype_size(s.h.dtype)))) {
		int64_t v64;
		int32_t v32;
		memcpy(&v64, buf, 8);
		memcpy(&v32, buf, 4);
		p->n = s.h.dtype == BURROW_DTYPE_I64 ? v64 : v32;
	}
	bw_npys_close(&s);
	if (!st && p->n < 0)
		st = bw_err(BURROW_E_FORMAT, "%s: negative node count", m.name);
	return st;
}

static int edges_npz(prep *p, burrow_csr_builder *b, int64_t *count)
{
	member m;
	int st = npz_member_of(p, NPZ[0], "edge_index", &m);
	return st ? st : bw_edges_npy(b, &m.src, p->n, count, p->o->progress, p->o->progress_user, NULL);
}

static int features_npz(prep *p)
{
	member m;
	int st = npz_member_of(p, NPZ[0], "node_feat", &m);
	return st ? st : bw_features_npy(p->w, &m.src, p->n, p->o->feat_dtype, p->o->progress, p->o->progress_user);
}

static int labels_npz(prep *p)
{
	member m;
	int32_t *y = NULL;
	int st = npz_member_of(p, NPZ[1], "node_label", &m);
	if (!st && !(st = bw_labels_npy(&m.src, p->n, &y)))
		st = put_labels(p, y, m.name);
	bw_free(y);
	return st;
}

/* ---------------------------------------------------------------- typed datasets (ogbn-mag) */

static int source_json(const prep *p, int64_t edges, const bw_hplan *h, char **out);

/* The types of raw/num-node-dict.csv.gz, a header line of names over one line of counts (one
 * graph), sorted by name as OGB's read_csv_heterograph_raw sorts them. */
static int typed_counts(const prep *p, bw_hplan *h)
{
	char names[BURROW_MAX_TYPES][BURROW_MAX_NAME];
	int64_t counts[BURROW_MAX_TYPES], k = 0;
	int order[BURROW_MAX_TYPES];
	member m;
	bw_csv c;
	bool more;
	int st = open_csv(p, "raw/num-node-dict.csv.gz", &m, &c);
	if (st)
		return st;
	if (!(st = bw_csv_next_line(&c, &more)) && !more)
		st = bw_err(BURROW_E_FORMAT, "%s: empty, expected a header of node types over a line of counts", m.name);
	if (!st && ((k = bw_csv_count_fields(&c)) < 1 || k > BURROW_MAX_TYPES))
		st = bw_csv_err(&c, BURROW_E_FORMAT, "%lld node types, want 1 to %d", (long long)k, BURROW_MAX_TYPES);
	if (!st)
		st = bw_csv_words(&c, names[0], BURROW_MAX_NAME, k);
	if (!st && !(st = bw_csv_next_line(&c, &more)) && !more)
		st = bw_err(BURROW_E_FORMAT, "%s: no line of counts under the header", m.name);
	if (!st)
		st = bw_csv_ints(&c, counts, k);
	if (!st && !(st = bw_csv_next_line(&c, &more)) && more)
		st = bw_csv_err(&c, BURROW_E_FORMAT, "expected one line of counts (one graph), found more");
	bw_csv_close(&c);
	for (int i = 0; i < k && !st; i++) {
		int j = i;
		for (; j > 0 && strcmp(names[order[j - 1]], names[i]) > 0; j--)
			order[j] = order[j - 1];
		order[j] = i;
		if (counts[i] < 0)
			st = bw_err(BURROW_E_FORMAT, "%s: type '%s' has a negative count %lld", m.name, names[i],
				    (long long)counts[i]);
	}
	for (int i = 0; i < k && !st; i++) {
		memcpy(h->type[i].name, names[order[i]], BURROW_MAX_NAME);
		h->type[i].n = counts[order[i]];
	}
	h->num_types = (int)k;
	return st;
}

static int type_index(const bw_hplan *h, const char *name)
{
	for (int t = 0; t < h->num_types; t++)
		if (!strcmp(h->type[t].name, name))
			return t;
	return -1;
}

/* OGB's edge_reltype.csv.gz beside a relation's edges (optional): one integer per edge. */
static int check_reltype(const prep *p, const char *dir, int64_t edges)
{
	char rel[700];
	member m;
	bw_csv c;
	bool more;
	int64_t rows = 0, v;
	snprintf(rel, sizeof rel, "%sedge_reltype.csv.gz", dir);
	if (member_of(p, rel, &m) != 0)
		return 0;
	int st = bw_csv_open(&c, &m.src, true, ',', false);
	while (!st && !(st = bw_csv_next_line(&c, &more)) && more && !(st = bw_csv_ints(&c, &v, 1)))
		rows++;
	if (!st && rows != edges)
		st = bw_err(BURROW_E_FORMAT, "%s: %lld rows, but the relation has %lld edges", m.name, (long long)rows,
			    (long long)edges);
	bw_csv_close(&c);
	return st;
}

/* One relation of the triplet list: its edges, its num-edge-list and its edge_reltype. */
static int typed_relation(const prep *p, const char *list, bw_hplan *h, const char (*tri)[BURROW_MAX_NAME])
{
	bw_hrel *r = &h->rel[h->num_relations];
	char dir[600], rel[700];
	r->src = type_index(h, tri[0]);
	r->dst = type_index(h, tri[2]);
	if (r->src < 0 || r->dst < 0)
		return bw_err(BURROW_E_FORMAT, "%s: relation (%s, %s, %s) names node type '%s', which num-node-dict.csv.gz "
			      "does not list", list, tri[0], tri[1], tri[2], tri[r->src < 0 ? 0 : 2]);
	memcpy(r->name, tri[1], BURROW_MAX_NAME);
	r->kind = BW_IN_CSV;
	snprintf(dir, sizeof dir, "raw/relations/%s___%s___%s/", tri[0], tri[1], tri[2]);
	snprintf(rel, sizeof rel, "%sedge.csv.gz", dir);
	int st = member_of(p, rel, &r->edges);
	snprintf(rel, sizeof rel, "%snum-edge-list.csv.gz", dir);
	if (!st)
		st = read_count(p, rel, &r->listed);
	if (!st)
		st = check_reltype(p, dir, r->listed);
	h->num_relations++;
	return st;
}

/* The order of OGB's sorted (head, relation, tail) tuples. */
static int triplet_cmp(const char (*a)[BURROW_MAX_NAME], const char (*b)[BURROW_MAX_NAME])
{
	for (int i = 0; i < 3; i++) {
		int c = strcmp(a[i], b[i]);
		if (c)
			return c;
	}
	return 0;
}

/* raw/triplet-type-list.csv.gz: "src,name,dst" a line, sorted as OGB sorts them. */
static int typed_relations(const prep *p, bw_hplan *h)
{
	char (*tri)[3][BURROW_MAX_NAME] = bw_malloc(BURROW_MAX_RELATIONS * sizeof *tri), t[3][BURROW_MAX_NAME];
	member m;
	bw_csv c;
	bool more;
	int k = 0, st = tri ? open_csv(p, "raw/triplet-type-list.csv.gz", &m, &c) : BURROW_E_NOMEM;
	if (st) {
		bw_free(tri);
		return st;
	}
	while (!(st = bw_csv_next_line(&c, &more)) && more) {
		if (k == BURROW_MAX_RELATIONS) {
			st = bw_csv_err(&c, BURROW_E_FORMAT, "more than %d relations", BURROW_MAX_RELATIONS);
			break;
		}
		if ((st = bw_csv_words(&c, t[0], BURROW_MAX_NAME, 3)))
			break;
		int j = k++;
		for (; j > 0 && triplet_cmp((const char (*)[BURROW_MAX_NAME])tri[j - 1], (const char (*)[BURROW_MAX_NAME])t) > 0;
		     j--)
			memcpy(tri[j], tri[j - 1], sizeof t);
		memcpy(tri[j], t, sizeof t);
	}
	bw_csv_close(&c);
	if (!st && k == 0)
		st = bw_err(BURROW_E_FORMAT, "%s: no relations", m.name);
	for (int i = 0; i < k && !st; i++)
		st = typed_relation(p, m.name, h, (const char (*)[BURROW_MAX_NAME])tri[i]);
	bw_free(tri);
	return st;
}

/* Each type's node-feat.csv.gz (when there is one) and the labelled type, the target. */
static int typed_inputs(const prep *p, bw_hplan *h)
{
	char rel[600];
	member m;
	h->target = -1;
	for (int t = 0; t < h->num_types; t++) {
		snprintf(rel, sizeof rel, "raw/node-feat/%s/node-feat.csv.gz", h->type[t].name);
		if (member_of(p, rel, &h->type[t].feat) == 0)
			h->type[t].feat_kind = BW_IN_CSV;
		snprintf(rel, sizeof rel, "raw/node-label/%s/node-label.csv.gz", h->type[t].name);
		if (member_of(p, rel, &m) != 0)
			continue;
		if (h->target >= 0)
			return bw_err(BURROW_E_UNSUPPORTED, "%s: labels for types '%s' and '%s': Burrow trains one target type",
				      p->zip ? p->zip : p->dir, h->type[h->target].name, h->type[t].name);
		h->target = t;
	}
	if (h->target < 0)
		bw_log(BURROW_LOG_WARN, "%s: no node type has labels (raw/node-label/<type>/); writing no labels",
		       p->name);
	return 0;
}

/* The target type's labels and its splits (split/<split>/<type>/). */
static int typed_labels(prep *p, const bw_hplan *h)
{
	char rel[600], sub[BURROW_MAX_NAME + 2];
	if (h->target < 0)
		return 0;
	p->n = h->type[h->target].n;
	snprintf(rel, sizeof rel, "raw/node-label/%s/node-label.csv.gz", h->type[h->target].name);
	snprintf(sub, sizeof sub, "%s/", h->type[h->target].name);
	int st = labels_csv(p, rel);
	return st ? st : splits(p, sub);
}

static void typed_plan(const prep *p, bw_hplan *h)
{
	h->feat_dtype = p->o->feat_dtype;
	h->add_reverse = p->o->add_reverse;
	h->fill = p->o->fill;
	h->mem = p->mem > 2 * OVERHEAD ? p->mem - OVERHEAD : p->mem / 2;
	h->spill = p->spill;
	h->progress = p->o->progress;
	h->progress_user = p->o->progress_user;
}

/* A typed dataset: its types, relations, features, labels and splits, read as OGB's
 * read_csv_heterograph_raw reads them, into a version-2 dataset directory. */
static int run_typed(prep *p)
{
	bw_hplan *h = bw_calloc(1, sizeof *h);
	char *src = NULL;
	int64_t nodes = 0, edges = 0;
	int st = h ? 0 : BURROW_E_NOMEM;
	if (st)
		return st;
	typed_plan(p, h);
	if ((st = typed_counts(p, h)) || (st = typed_relations(p, h)) || (st = typed_inputs(p, h)) ||
	    (st = bw_hplan_check(h)))
		goto out;
	for (int t = 0; t < h->num_types; t++)
		nodes += h->type[t].n;
	if (p->cat && nodes != p->cat->num_nodes)
		bw_log(BURROW_LOG_WARN, "%s: %lld nodes of all types, the catalog says %lld", p->name, (long long)nodes,
		       (long long)p->cat->num_nodes);
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = p->o->overwrite;
	if ((st = bw_check_space(p->out, ((double)nodes + 1) * 8, "the indptr.npy files for num-node-dict's counts")) ||
	    (st = burrow_writer_open(&p->w, p->out, p->name, &wo)))
		goto out;
	if ((st = bw_hetero_put(p->w, h)) || (st = typed_labels(p, h)))
		goto out;
	for (int r = 0; r < h->num_relations; r++)
		edges += h->rel[r].read;
	if ((st = source_json(p, edges, h, &src)) || (st = burrow_writer_set_source(p->w, src)))
		goto out;
	st = burrow_writer_commit(p->w);
	p->w = NULL;
out:
	burrow_writer_abort(p->w);
	p->w = NULL;
	cJSON_free(src);
	bw_free(h);
	return st;
}

/* ---------------------------------------------------------------- link prediction (ogbl-*) */

/* The edge split of one of train / valid / test, as OGB's .pt file holds it: "edge" [E, 2]
 * and "edge_neg" [M, 2] (collab, ppa, ddi), or "source_node", "target_node" [E] and
 * "target_node_neg" [E, K] (citation2); "weight" and "year" [E] where given. */
typedef struct link_part {
	bw_pt_tensor pos, neg, weight, year;
	int64_t *pairs;     /* [E, 2] built from source_node / target_node, owned; NULL when pos is */
	float *w;           /* weight as float32 (points into weight.data, or owned when converted) */
	int32_t *y;         /* year as int32, owned */
	int neg_kind;       /* BW_NEG_* */
} link_part;

static void link_part_free(link_part *l)
{
	if (l->w && l->w != l->weight.data)
		bw_free(l->w);
	bw_free(l->pos.data);
	bw_free(l->neg.data);
	bw_free(l->weight.data);
	bw_free(l->year.data);
	bw_free(l->pairs);
	bw_free(l->y);
	memset(l, 0, sizeof *l);
}

/* The split's .pt file `which`, opened: a member of the zip is copied out to an unlinked
 * file first (the reader seeks in it). */
static int open_pt(const prep *p, const char *which, bw_pt **pt, char *name, size_t cap)
{
	char rel[600];
	member m;
	snprintf(rel, sizeof rel, "split/%s/%s.pt", p->split, which);
	int st = member_of(p, rel, &m);
	if (st)
		return st;
	snprintf(name, cap, "%s", m.name);
	if (!p->zip)
		return bw_pt_open(pt, m.name, m.path, -1);
	char *path = bw_path_join(p->spill, "burrow-pt-XXXXXX");
	int fd = path ? mkostemp(path, O_CLOEXEC) : -1;
	if (fd < 0) {
		st = path ? bw_err_errno(errno, p->spill, "create a temporary file") : BURROW_E_NOMEM;
		bw_free(path);
		return st;
	}
	unlink(path);
	bw_rd *r = NULL;
	const char *data;
	size_t n;
	if (!(st = bw_rd_open(&r, &m.src, false, false)))
		while (!(st = bw_rd_next(r, &data, &n)) && n > 0 && !(st = bw_write_all(fd, data, n, path)))
			;
	bw_rd_close(r);
	if (!st)
		st = bw_pt_open(pt, m.name, NULL, fd);
	close(fd);
	bw_free(path);
	return st;
}

/* A tensor of shape [rows] or [rows, cols] (cols 0: one dimension). */
static int link_shape(const char *name, const char *key, const bw_pt_tensor *t, int64_t rows, int64_t cols)
{
	const bool ok = cols ? t->ndim == 2 && (cols < 0 || t->shape[1] == cols) : t->ndim == 1;
	if (!ok || (rows >= 0 && t->shape[0] != rows))
		return bw_err(BURROW_E_FORMAT, "%s: '%s' has shape [%lld%s], expected [%s%s]", name, key,
			      (long long)(t->ndim ? t->shape[0] : 0), t->ndim == 2 ? ", ..." : "", rows >= 0 ? "E" : "M",
			      cols > 0 ? ", 2" : cols < 0 ? ", K" : "");
	return t->dtype == BURROW_DTYPE_I64 || !strcmp(key, "weight")
		       ? 0
		       : bw_err(BURROW_E_FORMAT, "%s: '%s' holds floats, expected node ids", name, key);
}

/* The positives (and negatives, past train) of one split. */
static int link_pos(bw_pt *pt, const char *name, bool valid_or_test, link_part *l)
{
	int st;
	if (bw_pt_has(pt, "source_node")) { /* citation2 */
		bw_pt_tensor dst = {0};
		if ((st = bw_pt_get(pt, "source_node", &l->pos)) || (st = link_shape(name, "source_node", &l->pos, -1, 0)) ||
		    (st = bw_pt_get(pt, "target_node", &dst)) ||
		    (st = link_shape(name, "target_node", &dst, l->pos.shape[0], 0))) {
			bw_free(dst.data);
			return st;
		}
		const int64_t e = l->pos.shape[0], *a = l->pos.data, *b = dst.data;
		if (!(l->pairs = bw_malloc((size_t)(e ? e : 1) * 2 * sizeof *l->pairs))) {
			bw_free(dst.data);
			return BURROW_E_NOMEM;
		}
		for (int64_t i = 0; i < e; i++) {
			l->pairs[2 * i] = a[i];
			l->pairs[2 * i + 1] = b[i];
		}
		bw_free(dst.data);
		l->neg_kind = BW_NEG_PER_SOURCE;
		if (!valid_or_test)
			return 0;
		return (st = bw_pt_get(pt, "target_node_neg", &l->neg)) ? st
									 : link_shape(name, "target_node_neg", &l->neg, e, -1);
	}
	if ((st = bw_pt_get(pt, "edge", &l->pos)) || (st = link_shape(name, "edge", &l->pos, -1, 2)))
		return st;
	l->neg_kind = valid_or_test && bw_pt_has(pt, "edge_neg") ? BW_NEG_PAIRS : BW_NEG_NONE;
	if (l->neg_kind == BW_NEG_NONE)
		return 0;
	if ((st = bw_pt_get(pt, "edge_neg", &l->neg)))
		return st;
	const int64_t m = l->neg.shape[0];
	return link_shape(name, "edge_neg", &l->neg, m, 2);
}

/* "weight" as float32 and "year" as int32, where the split has them. */
static int link_extras(bw_pt *pt, const char *name, link_part *l)
{
	const int64_t e = l->pos.shape[0];
	int st;
	if (bw_pt_has(pt, "weight")) {
		if ((st = bw_pt_get(pt, "weight", &l->weight)) || (st = link_shape(name, "weight", &l->weight, e, 0)))
			return st;
		l->w = l->weight.data;
		if (l->weight.dtype == BURROW_DTYPE_I64) { /* collab's weights are counts */
			if (!(l->w = bw_malloc((size_t)(e ? e : 1) * sizeof *l->w)))
				return BURROW_E_NOMEM;
			for (int64_t i = 0; i < e; i++)
				l->w[i] = (float)((int64_t *)l->weight.data)[i];
		}
	}
	if (bw_pt_has(pt, "year")) {
		if ((st = bw_pt_get(pt, "year", &l->year)) || (st = link_shape(name, "year", &l->year, e, 0)))
			return st;
		if (!(l->y = bw_malloc((size_t)(e ? e : 1) * sizeof *l->y)))
			return BURROW_E_NOMEM;
		for (int64_t i = 0; i < e; i++) {
			const int64_t v = ((int64_t *)l->year.data)[i];
			if (v < INT32_MIN || v > INT32_MAX)
				return bw_err(BURROW_E_RANGE, "%s: year %lld at row %lld", name, (long long)v, (long long)i);
			l->y[i] = (int32_t)v;
		}
	}
	return 0;
}

static int link_read(const prep *p, int s, link_part *l)
{
	static const char *const S[3] = {"train", "valid", "test"};
	char name[1400];
	bw_pt *pt = NULL;
	int st = open_pt(p, S[s], &pt, name, sizeof name);
	if (!st)
		st = link_pos(pt, name, s > 0, l);
	if (!st)
		st = link_extras(pt, name, l);
	bw_pt_close(pt);
	report(p, "edge split", (uint64_t)s + 1, 3);
	return st;
}

/* The three splits into an edge split, written into p->w. */
static int link_split(prep *p, bool directed)
{
	link_part l[3];
	memset(l, 0, sizeof l);
	bw_link_split e = {.name = p->name, .num_nodes = p->n, .directed = directed};
	int st = 0;
	for (int s = 0; s < 3 && !st; s++)
		st = link_read(p, s, &l[s]);
	if (!st && ((l[0].neg_kind == BW_NEG_PER_SOURCE) != (l[1].neg_kind == BW_NEG_PER_SOURCE) ||
		    l[2].neg_kind != l[1].neg_kind))
		st = bw_err(BURROW_E_FORMAT, "%s: the splits' .pt files hold different kinds of edges", p->name);
	for (int s = 0; s < 3 && !st; s++) {
		e.n_pos[s] = l[s].pos.shape[0];
		e.pos[s] = l[s].pairs ? l[s].pairs : l[s].pos.data;
		e.n_neg[s] = l[s].neg.shape[0];
		e.negs[s] = l[s].neg.data;
		e.weight[s] = l[s].w;
		e.year[s] = l[s].y;
	}
	if (!st) {
		e.neg = l[1].neg_kind;
		e.num_neg = e.neg == BW_NEG_PER_SOURCE ? l[1].neg.shape[1] : 0;
		if (e.neg == BW_NEG_PER_SOURCE && l[2].neg.shape[1] != e.num_neg)
			st = bw_err(BURROW_E_FORMAT, "%s: valid has %lld negatives per source, test %lld", p->name,
				    (long long)e.num_neg, (long long)l[2].neg.shape[1]);
		e.metric = p->cat && p->cat->eval_metric ? p->cat->eval_metric : e.neg == BW_NEG_PER_SOURCE ? "mrr" : "hits@50";
	}
	if (!st)
		st = bw_link_split_put(p->w, &e);
	for (int s = 0; s < 3; s++)
		link_part_free(&l[s]);
	return st;
}

/* A link prediction dataset (split/<split>/train.pt): the graph of raw/edge.csv.gz (OGB's
 * dataset[0], the training edges; symmetrized where OGB adds inverse edges), features when
 * given, no labels, and the edge split of the .pt files. */
static int run_link(prep *p)
{
	member m;
	int64_t edges = 0, listed = -1;
	burrow_csr_builder *b = NULL;
	char *src = NULL;
	int st = read_count(p, "raw/num-node-list.csv.gz", &p->n);
	if (st)
		return st;
	bw_pt *probe = NULL;
	char name[1400];
	/* directed: the catalog says OGB adds no inverse edges; an unknown one by its split's kind */
	bool directed = p->cat ? !p->cat->add_inverse_edge : false;
	if (!p->cat) {
		if ((st = open_pt(p, "train", &probe, name, sizeof name)))
			return st;
		directed = bw_pt_has(probe, "source_node");
		bw_pt_close(probe);
	}
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = p->o->overwrite;
	if ((st = bw_check_space(p->out, ((double)p->n + 1) * 8, "an indptr.npy for the node count of num-node-list")) ||
	    (st = burrow_writer_open(&p->w, p->out, p->name, &wo)))
		return st;
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = !directed;
	co.mem_bytes = p->mem > 2 * OVERHEAD ? p->mem - OVERHEAD : p->mem / 2;
	co.spill_dir = p->spill;
	co.progress = p->o->progress;
	co.progress_user = p->o->progress_user;
	if ((st = burrow_csr_builder_open(&b, p->n, &co)) || (st = edges_csv(p, b, &edges)))
		goto out;
	if (member_of(p, "raw/num-edge-list.csv.gz", &m) == 0 &&
	    !(st = read_count(p, "raw/num-edge-list.csv.gz", &listed)) && listed != edges)
		st = bw_err(BURROW_E_FORMAT, "%s: %lld edges, but num-edge-list.csv.gz says %lld", m.name, (long long)edges,
			    (long long)listed);
	if (st || (st = burrow_writer_put_builder(p->w, b, !directed)))
		goto out;
	burrow_csr_builder_close(b);
	b = NULL;
	if (member_of(p, "raw/node-feat.csv.gz", &m) == 0 && (st = features_csv(p)))
		goto out;
	if ((st = link_split(p, directed)) || (st = source_json(p, edges, NULL, &src)) ||
	    (st = burrow_writer_set_source(p->w, src)))
		goto out;
	st = burrow_writer_commit(p->w);
	p->w = NULL;
out:
	cJSON_free(src);
	burrow_csr_builder_close(b);
	burrow_writer_abort(p->w);
	p->w = NULL;
	return st;
}

/* ---------------------------------------------------------------- the whole */

static int source_json(const prep *p, int64_t edges, const bw_hplan *h, char **out)
{
	(void)bw_json_nomem();
	cJSON *j = cJSON_CreateObject();
	if (!j)
		return BURROW_E_NOMEM;
	struct stat sb;
	cJSON_AddStringToObject(j, "kind", "ogb");
	cJSON_AddStringToObject(j, "name", p->name);
	const char *url = p->o->url ? p->o->url : p->cat ? p->cat->url : NULL;
	if (url)
		cJSON_AddStringToObject(j, "url", url);
	else
		cJSON_AddNullToObject(j, "url");
	if (p->release[0])
		cJSON_AddStringToObject(j, "release", p->release);
	if (p->zip) {
		cJSON_AddStringToObject(j, "zip", base_name(p->zip));
		cJSON_AddNumberToObject(j, "zip_bytes", stat(p->zip, &sb) == 0 ? (double)sb.st_size : 0);
	} else {
		cJSON_AddStringToObject(j, "folder", base_name(p->dir));
	}
	cJSON_AddStringToObject(j, "format", p->binary ? "npz" : "csv");
	cJSON_AddStringToObject(j, "split", p->split);
	cJSON_AddNumberToObject(j, "edges_stored", (double)edges);
	if (p->cat)
		cJSON_AddBoolToObject(j, "add_inverse_edge", p->cat->add_inverse_edge);
	if (h)
		bw_hplan_json(h, j);
	char *s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	if (bw_json_nomem() || !s) { /* an adder failed: the source would lack a field */
		cJSON_free(s);
		return bw_err(BURROW_E_NOMEM, "out of memory formatting meta.json's source");
	}
	*out = s;
	return 0;
}

static int run_typed(prep *p);
static int run_link(prep *p);

static int run(prep *p)
{
	int st;
	int64_t edges = 0, listed = -1;
	burrow_csr_builder *b = NULL;
	char *src = NULL;

	member m;
	char rel[600];
	snprintf(rel, sizeof rel, "split/%s/train.pt", p->split);
	if (!p->binary && member_of(p, rel, &m) == 0)
		return run_link(p);
	if (!p->binary && member_of(p, "raw/num-node-dict.csv.gz", &m) == 0)
		return run_typed(p);
	if (p->o->add_reverse || p->o->fill)
		return bw_err(BURROW_E_INVAL, "%s: --add-reverse and --fill are for typed datasets (ogbn-mag); this one has "
			      "one node type", p->name);
	const bool ef = !p->binary && member_of(p, "raw/edge-feat.csv.gz", &m) == 0;
	if (!ef && p->o->node_features_from_edges)
		return bw_err(BURROW_E_INVAL, "%s: has no edge features (raw/edge-feat.csv.gz) to make node features from",
			      p->name);
	if (p->binary) {
		if ((p->zip && ((st = extract_npz(p, 0)) || (st = extract_npz(p, 1)))) || (st = count_npz(p)))
			return st;
	} else if ((st = read_count(p, "raw/num-node-list.csv.gz", &p->n))) {
		return st;
	}
	if (p->cat && p->n != p->cat->num_nodes)
		bw_log(BURROW_LOG_WARN, "%s: %lld nodes, the catalog says %lld", p->name, (long long)p->n,
		       (long long)p->cat->num_nodes);
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = p->o->overwrite;
	if ((st = bw_check_space(p->out, ((double)p->n + 1) * 8, "an indptr.npy for the node count of num-node-list")) ||
	    (st = burrow_writer_open(&p->w, p->out, p->name, &wo)))
		return st;

	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = true;
	co.mem_bytes = p->mem > 2 * OVERHEAD ? p->mem - OVERHEAD : p->mem / 2;
	co.spill_dir = p->spill;
	co.progress = p->o->progress;
	co.progress_user = p->o->progress_user;
	co.edge_ids = ef;
	if ((st = burrow_csr_builder_open(&b, p->n, &co)))
		goto fail;
	if ((st = p->binary ? edges_npz(p, b, &edges) : edges_csv(p, b, &edges)))
		goto fail;
	/* num-edge-list, when present, must agree */
	if (!p->binary && member_of(p, "raw/num-edge-list.csv.gz", &m) == 0) {
		if ((st = read_count(p, "raw/num-edge-list.csv.gz", &listed)))
			goto fail;
		if (listed != edges) {
			st = bw_err(BURROW_E_FORMAT, "%s: %lld edges, but num-edge-list.csv.gz says %lld", m.name,
				    (long long)edges, (long long)listed);
			goto fail;
		}
	}
	if ((st = burrow_writer_put_builder(p->w, b, true)))
		goto fail;
	burrow_csr_builder_close(b);
	b = NULL;
	if ((ef && (st = edge_featured(p, edges))) || (!ef && (st = p->binary ? features_npz(p) : features_csv(p))) ||
	    (!ef && (st = p->binary ? labels_npz(p) : labels_csv(p, "raw/node-label.csv.gz"))) || (st = splits(p, "")) ||
	    (st = source_json(p, edges, NULL, &src)) || (st = burrow_writer_set_source(p->w, src)))
		goto fail;
	cJSON_free(src);
	st = burrow_writer_commit(p->w);
	p->w = NULL;
	return st;
fail:
	cJSON_free(src);
	burrow_csr_builder_close(b);
	burrow_writer_abort(p->w);
	p->w = NULL;
	return st;
}

typedef struct prep_job {
	const char *source;
	burrow_prep_opts o;
} prep_job;

static int prep_plain(void *ctx, const char *dir)
{
	prep_job *j = ctx;
	j->o.out = dir;
	return burrow_prep(j->source, &j->o, NULL, 0);
}

/* --order: the dataset prepared as usual into a scratch folder, then reordered into out (a typed
 * dataset is refused once its kind is known). */
static int prep_ordered(const char *source, const burrow_prep_opts *o, const char *out)
{
	prep_job pj = {.source = source, .o = *o};
	pj.o.order = BURROW_ORDER_NONE;
	pj.o.overwrite = false;
	const bw_order_job j = {.order = o->order, .mem_bytes = o->mem_bytes, .overwrite = o->overwrite,
				.progress = o->progress, .progress_user = o->progress_user, .write = prep_plain,
				.ctx = &pj};
	return bw_write_ordered(out, &j);
}

int burrow_prep(const char *source, const burrow_prep_opts *opts, char *out_dir, size_t out_cap)
{
	burrow_prep_opts o;
	prep p = {.npz_fd = {-1, -1}};
	int st;

	if (out_dir && out_cap)
		out_dir[0] = '\0';
	burrow_prep_defaults(&o);
	if (opts && (st = bw_opts_in(&o, sizeof o, opts, "burrow_prep_opts")))
		return st;
	if (!o.root)
		o.root = "data";
	if (o.feat_dtype == BURROW_DTYPE_INVALID)
		o.feat_dtype = BURROW_DTYPE_F32;
	if (o.feat_dtype != BURROW_DTYPE_F32 && o.feat_dtype != BURROW_DTYPE_F16)
		return bw_err(BURROW_E_INVAL, "prep: features must be float32 or float16");
	if (!source || !*source)
		return bw_err(BURROW_E_INVAL, "prep: no dataset given");
	p.o = &o;
	if (o.layout && strcmp(o.layout, "mag240m") && strcmp(o.layout, "igbh"))
		return bw_err(BURROW_E_INVAL, "prep: layout '%s'; Burrow reads mag240m and igbh in place", o.layout);
	if (o.layout && o.order != BURROW_ORDER_NONE)
		return bw_err(BURROW_E_UNSUPPORTED, "prep: --order renumbers datasets of one node type; %s is typed", o.layout);
	if (o.layout)
		snprintf(p.name, sizeof p.name, "%s", o.layout);
	else if ((st = locate(&p, source)))
		goto out;
	p.out = o.out ? bw_strdup(o.out) : bw_path_join(o.root, p.name);
	if (!p.out) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	if (out_dir && out_cap)
		snprintf(out_dir, out_cap, "%s", p.out);
	if (!o.overwrite && access(p.out, F_OK) == 0) {
		st = bw_err(BURROW_E_EXISTS, "%s: already exists", p.out);
		goto out;
	}
	if (o.order != BURROW_ORDER_NONE) {
		st = p.cat && p.cat->hetero ? bw_err(BURROW_E_UNSUPPORTED, "prep: --order renumbers datasets of one node "
						    "type; %s is typed", p.name)
					    : prep_ordered(source, &o, p.out);
		goto out;
	}
	if (o.tmp_dir) {
		p.spill = bw_strdup(o.tmp_dir);
	} else {
		p.spill = bw_dirname(p.out);
		if (p.spill && (st = bw_mkdir_p(p.spill, 0755)))
			goto out;
	}
	if (!p.spill) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	p.mem = o.mem_bytes ? o.mem_bytes : bw_half_memory();
	st = o.layout ? bw_prep_layout(o.layout, source, &o, p.out, p.spill,
				       p.mem > 2 * OVERHEAD ? p.mem - OVERHEAD : p.mem / 2)
		      : run(&p);
out:
	if (p.za)
		zip_discard(p.za);
	for (int k = 0; k < 2; k++)
		if (p.npz_fd[k] >= 0)
			close(p.npz_fd[k]);
	bw_free(p.zip);
	bw_free(p.dir);
	bw_free(p.out);
	bw_free(p.spill);
	return st;
}
