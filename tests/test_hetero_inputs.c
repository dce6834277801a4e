/* test_hetero_inputs.c: typed inputs: burrow prep of a tiny ogbn-mag in OGB's zip layout against
 * a reading of the same CSVs, --add-reverse, --fill mean against a slow reference, typed import
 * and its refusals (exit 1, the file named, nothing left), hsbm deterministic in its seed. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zip.h>
#include <zlib.h>

TU_SCRATCH_SUITE(hetero_inputs, 120);

/* ---------------------------------------------------------------- a tiny ogbn-mag */

/* Types in OGB's sorted order; num-node-dict lists them in another order. */
enum { AUTHOR, FOS, INST, PAPER, NT };
static const char *const TN[NT] = {"author", "field_of_study", "institution", "paper"};
static const int64_t TC[NT] = {9, 6, 4, 13};
#define D 3
#define CLASSES 5
#define NR 4
#define NE 40

/* Relations in OGB's sorted order; the triplet list gives them in another order. */
typedef struct rel {
	int src, dst;
	const char *name;
	int64_t s[NE], d[NE];
} rel;
static rel R[NR] = {{AUTHOR, INST, "affiliated_with"}, {AUTHOR, PAPER, "writes"}, {PAPER, PAPER, "cites"},
		    {PAPER, FOS, "has_topic"}};
static float X[13][D];   /* paper features as written (after a round trip through "%.7g") */
static int32_t Y[13];    /* paper labels */
static const int64_t SPLIT[3][5] = {{0, 2, 3, 7, 9}, {1, 4, 11}, {5, 12}};
static const int SPLITN[3] = {5, 3, 2};

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

/* Edges with repeats (the last 8 repeat earlier ones) and self loops in cites. */
static void make_data(void)
{
	uint64_t x = 77;
	for (int r = 0; r < NR; r++)
		for (int i = 0; i < NE; i++) {
			R[r].s[i] = i >= NE - 8 ? R[r].s[i - 20] : (int64_t)(lcg(&x) % (uint64_t)TC[R[r].src]);
			R[r].d[i] = i >= NE - 8 ? R[r].d[i - 20] : (int64_t)(lcg(&x) % (uint64_t)TC[R[r].dst]);
			if (R[r].src == R[r].dst && i % 9 == 0)
				R[r].d[i] = R[r].s[i];
		}
	for (int v = 0; v < 13; v++) {
		Y[v] = (int32_t)(lcg(&x) % CLASSES);
		for (int j = 0; j < D; j++) {
			char b[32];
			snprintf(b, sizeof b, "%.7g", ((double)(int64_t)(lcg(&x) % 20001) - 10000) / 3001.0);
			X[v][j] = strtof(b, NULL);
		}
	}
}

/* gzip of n bytes (malloc'ed; *len its size). */
static void *gz(const char *text, size_t n, size_t *len)
{
	z_stream z = {0};
	cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	size_t cap = deflateBound(&z, n) + 64;
	unsigned char *out = malloc(cap);
	z.next_in = (unsigned char *)text;
	z.avail_in = (unsigned)n;
	z.next_out = out;
	z.avail_out = (unsigned)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*len = z.total_out;
	deflateEnd(&z);
	return out;
}

/* A text buffer grown by printf. */
typedef struct txt {
	char *p;
	size_t n, cap;
} txt;

static void tx(txt *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tx(txt *t, const char *fmt, ...)
{
	va_list ap;
	for (;;) {
		va_start(ap, fmt);
		int k = vsnprintf(t->p ? t->p + t->n : NULL, t->p ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (t->p && (size_t)k < t->cap - t->n) {
			t->n += (size_t)k;
			return;
		}
		t->cap = t->cap * 2 + (size_t)k + 64;
		t->p = realloc(t->p, t->cap);
	}
}

/* Add t gzip'ed as mag/<name> to za (t is freed). */
static void add_gz(zip_t *za, const char *name, txt *t)
{
	size_t len;
	void *g = gz(t->p ? t->p : "", t->n, &len);
	char full[512];
	snprintf(full, sizeof full, "mag/%s", name);
	zip_source_t *s = zip_source_buffer(za, g, len, 1);
	cr_assert(s && zip_file_add(za, full, s, 0) >= 0, "%s", zip_strerror(za));
	free(t->p);
	*t = (txt){0};
}

/* The zip, as OGB's mag.zip lays it out. */
static char *write_mag_zip(void)
{
	char *path = tu_path(tu_dir, "mag.zip");
	int err;
	zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	cr_assert(za);
	txt t = {0};
	tx(&t, "paper,author,institution,field_of_study\n%lld,%lld,%lld,%lld\n", (long long)TC[PAPER],
	   (long long)TC[AUTHOR], (long long)TC[INST], (long long)TC[FOS]);
	add_gz(za, "raw/num-node-dict.csv.gz", &t);
	for (int r = NR - 1; r >= 0; r--)
		tx(&t, "%s,%s,%s\n", TN[R[r].src], R[r].name, TN[R[r].dst]);
	add_gz(za, "raw/triplet-type-list.csv.gz", &t);
	for (int r = 0; r < NR; r++) {
		char dir[256], name[300];
		snprintf(dir, sizeof dir, "raw/relations/%s___%s___%s", TN[R[r].src], R[r].name, TN[R[r].dst]);
		for (int i = 0; i < NE; i++)
			tx(&t, "%lld,%lld\n", (long long)R[r].s[i], (long long)R[r].d[i]);
		snprintf(name, sizeof name, "%s/edge.csv.gz", dir);
		add_gz(za, name, &t);
		tx(&t, "%d\n", NE);
		snprintf(name, sizeof name, "%s/num-edge-list.csv.gz", dir);
		add_gz(za, name, &t);
		for (int i = 0; i < NE; i++)
			tx(&t, "%d\n", r);
		snprintf(name, sizeof name, "%s/edge_reltype.csv.gz", dir);
		add_gz(za, name, &t);
	}
	for (int v = 0; v < 13; v++)
		tx(&t, "%.7g,%.7g,%.7g\n", (double)X[v][0], (double)X[v][1], (double)X[v][2]);
	add_gz(za, "raw/node-feat/paper/node-feat.csv.gz", &t);
	for (int v = 0; v < 13; v++)
		tx(&t, "%d\n", 2000 + v); /* OGB's node_year: read by OGB as an extra file, not by Burrow */
	add_gz(za, "raw/node-feat/paper/node_year.csv.gz", &t);
	for (int v = 0; v < 13; v++)
		tx(&t, "%d\n", Y[v]);
	add_gz(za, "raw/node-label/paper/node-label.csv.gz", &t);
	static const char *const sn[3] = {"train", "valid", "test"};
	for (int s = 0; s < 3; s++) {
		char name[128];
		for (int i = 0; i < SPLITN[s]; i++)
			tx(&t, "%lld\n", (long long)SPLIT[s][i]);
		snprintf(name, sizeof name, "split/time/paper/%s.csv.gz", sn[s]);
		add_gz(za, name, &t);
	}
	cr_assert_eq(zip_close(za), 0);
	return path;
}

/* ---------------------------------------------------------------- reading what was written */

static void *load(const char *dir, const char *rel, burrow_dtype want, int64_t count)
{
	char *p = tu_path(dir, "%s", rel);
	burrow_npy_array a;
	cr_assert_eq(burrow_npy_read(p, &a), 0, "%s: %s", p, burrow_last_error());
	cr_assert_eq(a.dtype, want, "%s: dtype %d", p, a.dtype);
	cr_assert_eq(a.count, count, "%s: %lld elements, want %lld", p, (long long)a.count, (long long)count);
	free(p);
	return a.data; /* burrow_npy_free frees data with the library's allocator: free through it */
}

static void unload(void *data)
{
	burrow_npy_array a = {.data = data};
	burrow_npy_free(&a);
}

/* The reference of a relation: row v (a dst-type node) holds the distinct src-type ids of the
 * edges s[i] -> d[i] with d[i] == v, ascending. count[] out: row sizes. */
static bool ref_has(const int64_t *s, const int64_t *d, int ne, int64_t v, int64_t u, bool both)
{
	for (int i = 0; i < ne; i++)
		if ((d[i] == v && s[i] == u) || (both && s[i] == v && d[i] == u))
			return true;
	return false;
}

/* Compare relation dir (rows ndst, ids < nsrc) with the reference of edges s -> d (reversed
 * when rev; with both directions when both). */
static void check_relation(const char *out, const char *dir, const rel *r, bool rev, bool both)
{
	const int64_t ndst = TC[rev ? r->src : r->dst], nsrc = TC[rev ? r->dst : r->src];
	const int64_t *s = rev ? r->d : r->s, *d = rev ? r->s : r->d;
	char rel_[300];
	snprintf(rel_, sizeof rel_, "relations/%s/indptr.npy", dir);
	int64_t *ip = load(out, rel_, BURROW_DTYPE_I64, ndst + 1);
	snprintf(rel_, sizeof rel_, "relations/%s/indices.npy", dir);
	int32_t *ix = load(out, rel_, BURROW_DTYPE_I32, ip[ndst]);
	int64_t j = 0;
	cr_assert_eq(ip[0], 0);
	for (int64_t v = 0; v < ndst; v++)
		for (int64_t u = 0; u < nsrc; u++)
			if (ref_has(s, d, NE, v, u, both)) {
				cr_assert(j < ip[v + 1], "%s: row %lld lacks %lld", dir, (long long)v, (long long)u);
				cr_assert_eq(ix[j], u, "%s: row %lld entry %lld: %d, want %lld", dir, (long long)v,
					     (long long)j, ix[j], (long long)u);
				j++;
			} else {
				cr_assert(j == ip[v + 1] || ix[j] != u);
			}
	cr_assert_eq(j, ip[ndst], "%s: %lld entries, the reference has %lld", dir, (long long)ip[ndst], (long long)j);
	unload(ip);
	unload(ix);
}

static char *prep_mag(const char *zip, const char *name, bool reverse, bool fill)
{
	burrow_prep_opts o;
	burrow_prep_defaults(&o);
	char *out = tu_path(tu_dir, "%s", name);
	o.out = out;
	o.download = false;
	o.add_reverse = reverse;
	o.fill = fill ? BURROW_FEAT_FILL_MEAN : BURROW_FEAT_FILL_NONE;
	o.mem_bytes = (size_t)1 << 20;
	cr_assert_eq(burrow_prep(zip, &o, NULL, 0), 0, "%s", burrow_last_error());
	return out;
}

static void check_type_order(const char *out)
{
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	cr_assert(h);
	cr_assert_eq(h->num_types, NT);
	for (int t = 0; t < NT; t++) {
		cr_assert_str_eq(h->type_names[t], TN[t]);
		cr_assert_eq(h->type_nodes[t], TC[t]);
	}
	cr_assert_str_eq(h->type_names[h->target_type], "paper");
	burrow_dataset_close(ds);
}

Test(hetero_inputs, mag_zip_preps_to_the_csvs)
{
	make_data();
	char *zip = write_mag_zip(), *out = prep_mag(zip, "mag", false, false);
	check_type_order(out);
	for (int r = 0; r < NR; r++) {
		char dir[256];
		snprintf(dir, sizeof dir, "%s___%s___%s", TN[R[r].src], R[r].name, TN[R[r].dst]);
		check_relation(out, dir, &R[r], false, false);
	}
	float *x = load(out, "features/paper.npy", BURROW_DTYPE_F32, 13 * D);
	cr_assert_eq(memcmp(x, X, sizeof X), 0, "paper features differ from the CSV's");
	unload(x);
	int32_t *y = load(out, "labels.npy", BURROW_DTYPE_I32, 13);
	cr_assert_eq(memcmp(y, Y, sizeof Y), 0);
	unload(y);
	static const char *const sn[3] = {"split/train.npy", "split/valid.npy", "split/test.npy"};
	for (int s = 0; s < 3; s++) {
		int64_t *ids = load(out, sn[s], BURROW_DTYPE_I64, SPLITN[s]);
		cr_assert_eq(memcmp(ids, SPLIT[s], (size_t)SPLITN[s] * 8), 0, "%s", sn[s]);
		unload(ids);
	}
	for (int t = 0; t < NT; t++) { /* only paper has features */
		char *f = tu_path(out, "features/%s.npy", TN[t]);
		cr_assert_eq(tu_exists(f), t == PAPER, "%s", f);
		free(f);
	}
	char *meta = tu_path(out, "meta.json");
	char *m = tu_read(meta, NULL);
	cr_assert(m && strstr(m, "\"num_classes\":\t349"), "%s", m); /* mag.zip: the catalog's ogbn-mag */
	free(m);
	free(meta);
	free(zip);
	free(out);
}

Test(hetero_inputs, add_reverse_is_each_relations_reverse)
{
	make_data();
	char *zip = write_mag_zip(), *out = prep_mag(zip, "mag-rev", true, false);
	for (int r = 0; r < NR; r++) {
		char dir[256];
		const bool self = R[r].src == R[r].dst;
		snprintf(dir, sizeof dir, "%s___%s___%s", TN[R[r].src], R[r].name, TN[R[r].dst]);
		check_relation(out, dir, &R[r], false, self); /* cites: both directions */
		snprintf(dir, sizeof dir, "%s___rev_%s___%s", TN[R[r].dst], R[r].name, TN[R[r].src]);
		char *p = tu_path(out, "relations/%s", dir);
		cr_assert_eq(tu_exists(p), !self, "%s", p);
		free(p);
		if (!self)
			check_relation(out, dir, &R[r], true, false);
	}
	free(zip);
	free(out);
}

/* The slow reference of --fill mean: mean over the stored relations' distinct neighbors. */
static void ref_fill(const int64_t *ip, const int32_t *ix, bool keyed_by_src, int64_t nrows, const float *xf,
		     int64_t nt, double *sum, int64_t *cnt)
{
	for (int64_t v = 0; v < nrows; v++)
		for (int64_t j = ip[v]; j < ip[v + 1]; j++) {
			const int64_t t = keyed_by_src ? ix[j] : v, f = keyed_by_src ? v : ix[j];
			cr_assert(t < nt);
			cnt[t]++;
			for (int c = 0; c < D; c++)
				sum[t * D + c] += xf[f * D + c];
		}
}

static void check_fill(const char *out, int t, int f, const char *dir, bool t_is_dst, const float *xf)
{
	char p[300];
	double sum[64 * D] = {0};
	int64_t cnt[64] = {0};
	const int64_t rows = TC[t_is_dst ? t : f];
	snprintf(p, sizeof p, "relations/%s/indptr.npy", dir);
	int64_t *ip = load(out, p, BURROW_DTYPE_I64, rows + 1);
	snprintf(p, sizeof p, "relations/%s/indices.npy", dir);
	int32_t *ix = load(out, p, BURROW_DTYPE_I32, ip[rows]);
	/* rows are dst nodes: when t is the dst, row v is t's node v and ids are f's */
	ref_fill(ip, ix, !t_is_dst, rows, xf, TC[t], sum, cnt);
	snprintf(p, sizeof p, "features/%s.npy", TN[t]);
	float *x = load(out, p, BURROW_DTYPE_F32, TC[t] * D);
	for (int64_t v = 0; v < TC[t]; v++)
		for (int c = 0; c < D; c++) {
			const double want = cnt[v] ? sum[v * D + c] / (double)cnt[v] : 0;
			cr_assert(fabs(x[v * D + c] - want) <= 1e-6 * (1 + fabs(want)), "%s row %lld col %d: %g, want %g",
				  TN[t], (long long)v, c, (double)x[v * D + c], want);
		}
	unload(ip);
	unload(ix);
	unload(x);
}

Test(hetero_inputs, fill_mean_equals_a_slow_reference)
{
	make_data();
	char *zip = write_mag_zip(), *out = prep_mag(zip, "mag-fill", false, true);
	/* round 1: authors from the papers they write, fields from their papers; round 2:
	 * institutions from their (filled) authors */
	check_fill(out, AUTHOR, PAPER, "author___writes___paper", false, &X[0][0]);
	check_fill(out, FOS, PAPER, "paper___has_topic___field_of_study", true, &X[0][0]);
	float *xa = load(out, "features/author.npy", BURROW_DTYPE_F32, TC[AUTHOR] * D);
	check_fill(out, INST, AUTHOR, "author___affiliated_with___institution", true, xa);
	unload(xa);
	/* with --add-reverse too the fill counts each relation once: the same features */
	char *out2 = prep_mag(zip, "mag-fill-rev", true, true);
	for (int t = 0; t < NT; t++) {
		char *a = tu_path(out, "features/%s.npy", TN[t]), *b = tu_path(out2, "features/%s.npy", TN[t]);
		size_t na, nb;
		void *pa = tu_read(a, &na), *pb = tu_read(b, &nb);
		cr_assert(pa && pb && na == nb && !memcmp(pa, pb, na), "%s and %s differ", a, b);
		free(pa), free(pb), free(a), free(b);
	}
	free(zip);
	free(out);
	free(out2);
}

/* ---------------------------------------------------------------- typed import */

static void save_npy(const char *path, const char *descr, int ndim, const int64_t *shape, const void *data, size_t n)
{
	char hdr[256];
	int k = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld,%s%s), }", descr,
			 (long long)shape[0], ndim > 1 ? " " : "", "");
	if (ndim > 1)
		k = snprintf(hdr, sizeof hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (%lld, %lld), }", descr,
			     (long long)shape[0], (long long)shape[1]);
	int total = 10 + k + 1;
	int pad = (64 - total % 64) % 64;
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	unsigned short hl = (unsigned short)(k + pad + 1);
	fwrite("\x93NUMPY\x01\x00", 1, 8, f);
	fwrite(&hl, 2, 1, f);
	fwrite(hdr, 1, (size_t)k, f);
	for (int i = 0; i < pad; i++)
		fputc(' ', f);
	fputc('\n', f);
	fwrite(data, 1, n, f);
	fclose(f);
}

/* The import's files: paper features, author -> paper edges (.npy), paper -> paper edges
 * (text), labels, a split folder in OGB's layout. */
static void import_files(void)
{
	make_data();
	char *p = tu_path(tu_dir, "pf.npy");
	save_npy(p, "<f4", 2, (int64_t[]){13, D}, X, sizeof X);
	free(p);
	int64_t e[2][NE];
	memcpy(e[0], R[1].s, sizeof e[0]);
	memcpy(e[1], R[1].d, sizeof e[1]);
	p = tu_path(tu_dir, "writes.npy");
	save_npy(p, "<i8", 2, (int64_t[]){2, NE}, e, sizeof e);
	free(p);
	p = tu_path(tu_dir, "cites.csv");
	FILE *f = fopen(p, "w");
	fprintf(f, "src,dst\n");
	for (int i = 0; i < NE; i++)
		fprintf(f, "%lld %lld\n", (long long)R[2].s[i], (long long)R[2].d[i]);
	fclose(f);
	free(p);
	p = tu_path(tu_dir, "y.npy");
	save_npy(p, "<i4", 1, (int64_t[]){13}, Y, sizeof Y);
	free(p);
	cr_assert_eq(tu_sh(NULL, NULL, "mkdir -p %s/split/paper %s/wrongsplit/author", tu_dir, tu_dir), 0);
	static const char *const sn[3] = {"train", "valid", "test"};
	for (int s = 0; s < 3; s++) {
		p = tu_path(tu_dir, "split/paper/%s.npy", sn[s]);
		save_npy(p, "<i8", 1, (int64_t[]){SPLITN[s]}, SPLIT[s], (size_t)SPLITN[s] * 8);
		free(p);
		p = tu_path(tu_dir, "wrongsplit/author/%s.npy", sn[s]);
		save_npy(p, "<i8", 1, (int64_t[]){SPLITN[s]}, SPLIT[s], (size_t)SPLITN[s] * 8);
		free(p);
	}
	p = tu_path(tu_dir, "pf-short.npy");
	save_npy(p, "<f4", 2, (int64_t[]){12, D}, X, 12 * D * 4);
	free(p);
}

Test(hetero_inputs, typed_import_matches_its_files)
{
	import_files();
	char *err = NULL;
	int rc = tu_sh(NULL, &err,
		       "cd %s && %s import out --node-type paper=13:pf.npy --node-type author=9 --relation "
		       "author,writes,paper=writes.npy --relation paper,cites,paper=cites.csv --target paper --labels y.npy "
		       "--split-dir split --add-reverse",
		       tu_dir, tu_burrow());
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	char *out = tu_path(tu_dir, "out");
	check_relation(out, "author___writes___paper", &R[1], false, false);
	check_relation(out, "paper___rev_writes___author", &R[1], true, false);
	check_relation(out, "paper___cites___paper", &R[2], false, true);
	float *x = load(out, "features/paper.npy", BURROW_DTYPE_F32, 13 * D);
	cr_assert_eq(memcmp(x, X, sizeof X), 0);
	unload(x);
	int64_t *ids = load(out, "split/valid.npy", BURROW_DTYPE_I64, SPLITN[1]);
	cr_assert_eq(memcmp(ids, SPLIT[1], (size_t)SPLITN[1] * 8), 0);
	unload(ids);
	free(out);
}

/* A bad import: exit 1, one line naming `file`, no output left. */
static void refused(const char *args, const char *file)
{
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "cd %s && %s import bad %s", tu_dir, tu_burrow(), args);
	cr_assert_eq(rc, 1, "exit %d for %s: %s", rc, args, err);
	cr_assert(err && strstr(err, file), "the message names no %s: %s", file, err);
	const char *nl = strchr(err, '\n');
	cr_assert(nl && !nl[1], "more than one line: %s", err);
	char *out = tu_path(tu_dir, "bad");
	cr_assert(!tu_exists(out), "%s left behind after: %s", out, args);
	char *ls = NULL;
	tu_sh(&ls, NULL, "ls -a %s | grep -c bad", tu_dir);
	cr_assert(ls && atoi(ls) == 0, "a temporary is left behind after %s", args);
	free(ls);
	free(out);
	free(err);
}

Test(hetero_inputs, typed_import_refusals_leave_nothing)
{
	import_files();
	const char *types = "--node-type paper=13:pf.npy --node-type author=9";
	char a[1024];
	snprintf(a, sizeof a, "%s --relation author,writes,venue=writes.npy", types);
	refused(a, "writes.npy"); /* a relation naming an unknown type */
	snprintf(a, sizeof a, "--node-type paper=13:pf.npy --node-type author=8 --relation author,writes,paper=writes.npy");
	refused(a, "writes.npy"); /* ids past a type's count (.npy) */
	snprintf(a, sizeof a, "--node-type paper=12 --node-type author=9 --relation paper,cites,paper=cites.csv");
	refused(a, "cites.csv"); /* ids past a type's count (text) */
	snprintf(a, sizeof a, "--node-type paper=13:pf-short.npy --node-type author=9 --relation paper,cites,paper=cites.csv");
	refused(a, "pf-short.npy"); /* a feature file of the wrong shape */
	snprintf(a, sizeof a, "%s --relation paper,cites,paper=cites.csv --target paper --labels y.npy --split-dir wrongsplit",
		 types);
	refused(a, "wrongsplit/author"); /* a split of a type that has no labels */
	snprintf(a, sizeof a, "%s --relation paper,cites,paper=cites.csv --split-dir split", types);
	refused(a, "split"); /* a split without labels */
}

/* ---------------------------------------------------------------- hsbm */

Test(hetero_inputs, hsbm_is_deterministic_in_its_seed)
{
	char *err = NULL;
	int rc = tu_sh(NULL, &err,
		       "cd %s && %s gen hsbm a --nodes 3000 --seed 5 --quiet --threads 1 && %s gen hsbm b --nodes 3000 "
		       "--seed 5 --quiet --threads 2 && %s gen hsbm c --nodes 3000 --seed 6 --quiet && diff -r a b && "
		       "! cmp -s a/relations/author___writes___paper/indices.npy c/relations/author___writes___paper/indices.npy",
		       tu_dir, tu_burrow(), tu_burrow(), tu_burrow());
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	char *out = tu_path(tu_dir, "a");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	cr_assert(h && h->num_types == 3 && h->num_relations == 3);
	cr_assert_str_eq(h->type_names[h->target_type], "paper");
	cr_assert_eq(burrow_hetero_check(h), 0, "%s", burrow_last_error());
	burrow_dataset_close(ds);
	free(out);
}
