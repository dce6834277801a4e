/* test_datasets.c: OGB datasets end to end: the number parsers against strtof/strtoll,
 * streams (gzip, zip, npz, ZIP64), burrow prep on real Cora and on fixtures the tests
 * write (checked against slow obvious readers of the same files), every bad input the
 * issue lists, downloads from a local HTTP server, and burrow import. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/half.h"
#include "../datasets/dsio.h"
#include "util.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}

static uint64_t rs = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* ---------------------------------------------------------------- growing text buffers */

typedef struct buf {
	char *p;
	size_t n, cap;
} buf;

static void bput(buf *b, const void *d, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		b->cap = (b->n + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->n, d, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void bprintf(buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bprintf(buf *b, const char *fmt, ...)
{
	char *s;
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&s, fmt, ap);
	va_end(ap);
	bput(b, s, (size_t)n);
	free(s);
}

/* gzip of n bytes (one member). */
static buf gz(const void *data, size_t n)
{
	buf out = {0};
	z_stream z = {0};
	cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
	out.cap = deflateBound(&z, n) + 16;
	out.p = malloc(out.cap);
	z.next_in = (Bytef *)data;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out.p;
	z.avail_out = (uInt)out.cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	out.n = out.cap - z.avail_out;
	deflateEnd(&z);
	return out;
}

static void write_file(const char *path, const void *d, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f, "cannot write %s", path);
	cr_assert_eq(fwrite(d, 1, n, f), n);
	fclose(f);
}

/* ---------------------------------------------------------------- the number parsers */

TestSuite(parse, .timeout = 60);

static void check_f32(const char *tok)
{
	char *e;
	float want = strtof(tok, &e), got = 0;
	const char *next = NULL;
	size_t n = strlen(tok);
	int r = bw_parse_f32(tok, tok + n, &got, &next);
	cr_assert_eq(r, 0, "'%s' not parsed", tok);
	cr_assert_eq(next, tok + (e - tok), "'%s': parser stopped at %td, strtof at %td", tok, next - tok, e - tok);
	uint32_t a, b;
	memcpy(&a, &want, 4);
	memcpy(&b, &got, 4);
	cr_assert(a == b || (isnan(want) && isnan(got)), "'%s': got %a, strtof gives %a", tok, (double)got, (double)want);
}

Test(parse, f32_equals_strtof)
{
	char t[96];
	const char *fixed[] = {"0",      "-0",      "0.0",         "1.0",       "-1.5",        "3.14159",
			       "1e10",   "1E-10",   "+2.5e+3",     "1e-45",     "1e-40",       "3.4028235e38",
			       "3.4028236e38", "1e39", "-1e400", "nan",     "NaN",         "inf",
			       "-Infinity", ".5",   "5.",          "0.000001",  "123456789012345678901234567890",
			       "0.1000000000000000055511151231257827", "16777217", "16777216.5", "1.00000005960464477539062500001",
			       "7.006492321624085e-46", "1.17549435e-38", "1.1754942e-38"};
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
		check_f32(fixed[i]);
	for (int i = 0; i < 200000; i++) {
		switch (i % 6) {
		case 0: /* short decimals like OGB's */
			snprintf(t, sizeof t, "%s%d.%0*d", rnd() % 2 ? "-" : "", (int)(rnd() % 100), (int)(1 + rnd() % 6),
				 (int)(rnd() % 1000000));
			break;
		case 1: { /* random floats printed shortest-ish and with 9 digits */
			uint32_t bits = (uint32_t)rnd();
			float f;
			memcpy(&f, &bits, 4);
			if (!isfinite(f))
				f = 1.0f;
			snprintf(t, sizeof t, "%.9g", (double)f);
			break;
		}
		case 2: { /* exact midpoints between neighbouring floats, and next to them */
			float f = ldexpf((float)(rnd() % (1u << 24)), (int)(rnd() % 80) - 60);
			double mid = ((double)f + (double)nextafterf(f, INFINITY)) / 2;
			snprintf(t, sizeof t, "%.*g", (int)(rnd() % 3) + 16, mid);
			break;
		}
		case 3: /* mantissa and exponent */
			snprintf(t, sizeof t, "%llue%d", (unsigned long long)(rnd() % 100000000), (int)(rnd() % 60) - 30);
			break;
		case 4: /* long digit strings */
			snprintf(t, sizeof t, "%llu.%llu", (unsigned long long)rnd(), (unsigned long long)rnd());
			break;
		default: /* small integers and tenths */
			snprintf(t, sizeof t, "%d.%d", (int)(rnd() % 20000) - 10000, (int)(rnd() % 10));
			break;
		}
		check_f32(t);
	}
}

Test(parse, i64_equals_strtoll_and_refuses_overflow)
{
	const char *ok[] = {"0", "-0", "+7", "9223372036854775807", "-9223372036854775808", "0012"};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		int64_t v;
		const char *next;
		cr_assert_eq(bw_parse_i64(ok[i], ok[i] + strlen(ok[i]), &v, &next), 0, "%s", ok[i]);
		cr_assert_eq(v, strtoll(ok[i], NULL, 10), "%s", ok[i]);
	}
	const char *big[] = {"9223372036854775808", "-9223372036854775809", "99999999999999999999"};
	for (size_t i = 0; i < 3; i++) {
		int64_t v;
		const char *next;
		cr_assert_eq(bw_parse_i64(big[i], big[i] + strlen(big[i]), &v, &next), 2, "%s", big[i]);
	}
	int64_t v;
	const char *next, *x = "abc", *m = "-";
	cr_assert_eq(bw_parse_i64(x, x + 3, &v, &next), 1);
	cr_assert_eq(bw_parse_i64(m, m + 1, &v, &next), 1);
	for (int i = 0; i < 100000; i++) {
		char t[32];
		int64_t want = (int64_t)rnd() >> (rnd() % 64);
		snprintf(t, sizeof t, "%lld", (long long)want);
		cr_assert_eq(bw_parse_i64(t, t + strlen(t), &v, &next), 0);
		cr_assert_eq(v, want);
	}
}

/* ---------------------------------------------------------------- streams */

TestSuite(stream, .init = setup, .fini = teardown, .timeout = 60);

/* Concatenated gzip members, CRLF line ends, blank lines, no final newline, and one line
 * longer than a block: the reader must give every line whole and in order. */
Test(stream, gzip_members_line_ends_and_long_lines)
{
	buf text = {0}, all = {0};
	const int64_t long_cols = 300000; /* about 2 MiB: longer than a block */
	for (int i = 0; i < 1000; i++)
		bprintf(&text, "%d,%d%s", i, 2 * i, i % 3 ? "\n" : "\r\n");
	bprintf(&text, "\n\n");
	for (int64_t j = 0; j < long_cols; j++)
		bprintf(&text, "%s%lld.5", j ? "," : "", (long long)j);
	bprintf(&text, "\n7,8"); /* no final newline */
	size_t half = text.n / 3;
	while (text.p[half] != '\n')
		half++;
	buf a = gz(text.p, half + 1), b = gz(text.p + half + 1, text.n - half - 1);
	bput(&all, a.p, a.n);
	bput(&all, b.p, b.n);
	char *path = tu_path(dir, "t.csv.gz");
	write_file(path, all.p, all.n);

	bw_src src = {.name = path, .path = path, .fd = -1};
	bw_csv c;
	bool more;
	cr_assert_eq(bw_csv_open(&c, &src, true, ',', false), 0, "%s", burrow_last_error());
	int64_t v[2];
	for (int i = 0; i < 1000; i++) {
		cr_assert_eq(bw_csv_next_line(&c, &more), 0);
		cr_assert(more);
		cr_assert_eq(bw_csv_ints(&c, v, 2), 0, "%s", burrow_last_error());
		cr_assert_eq(v[0], i);
		cr_assert_eq(v[1], 2 * i);
	}
	cr_assert_eq(bw_csv_next_line(&c, &more), 0);
	cr_assert_eq(c.lineno, 1003, "blank lines must be skipped but counted");
	cr_assert_eq(bw_csv_count_fields(&c), long_cols);
	float *row = malloc((size_t)long_cols * sizeof *row);
	cr_assert_eq(bw_csv_floats(&c, row, long_cols), 0, "%s", burrow_last_error());
	for (int64_t j = 0; j < long_cols; j++)
		cr_assert_eq(row[j], (float)j + 0.5f);
	cr_assert_eq(bw_csv_next_line(&c, &more), 0);
	cr_assert(more);
	cr_assert_eq(bw_csv_ints(&c, v, 2), 0);
	cr_assert(v[0] == 7 && v[1] == 8);
	cr_assert_eq(bw_csv_next_line(&c, &more), 0);
	cr_assert(!more);
	bw_csv_close(&c);

	/* cut the file short: the error names it and says truncated */
	tu_truncate(path, (long long)all.n - 10);
	cr_assert_eq(bw_csv_open(&c, &src, true, ',', false), 0);
	int st = 0;
	while (!(st = bw_csv_next_line(&c, &more)) && more)
		c.p = (const char *)memchr(c.p, '\n', (size_t)(c.end - c.p)) + 1;
	cr_assert_eq(st, BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), path) && strstr(burrow_last_error(), "truncated gzip"), "%s",
		  burrow_last_error());
	bw_csv_close(&c);
	free(row);
	free(path);
	free(text.p);
	free(all.p);
	free(a.p);
	free(b.p);
}

Test(stream, csv_messages_name_line_and_column)
{
	const char *text = "# comment\n1 2\n3\t4\n5,6\n\n7 x8\n9 10 11\n12\n";
	char *path = tu_path(dir, "e.txt");
	write_file(path, text, strlen(text));
	bw_src src = {.name = path, .path = path, .fd = -1};
	bw_csv c;
	bool more;
	int64_t v[2];
	cr_assert_eq(bw_csv_open(&c, &src, false, 0, true), 0);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(bw_csv_next_line(&c, &more), 0);
		cr_assert_eq(bw_csv_ints(&c, v, 2), 0, "%s", burrow_last_error());
		cr_assert_eq(v[0], 2 * i + 1);
		cr_assert_eq(v[1], 2 * i + 2);
	}
	const char *want[] = {":6: column 2: 'x8' is not an integer", ":7: expected 2 columns, found 3",
			      ":8: expected 2 columns, found 1"};
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(bw_csv_next_line(&c, &more), 0);
		cr_assert_eq(bw_csv_ints(&c, v, 2), BURROW_E_FORMAT);
		cr_assert(strstr(burrow_last_error(), path) && strstr(burrow_last_error(), want[i]), "got '%s', want '%s'",
			  burrow_last_error(), want[i]);
		c.p = (const char *)memchr(c.p, '\n', (size_t)(c.end - c.p)) + 1;
	}
	bw_csv_close(&c);
	free(path);
}

/* ---------------------------------------------------------------- OGB-style fixtures */

/* A small dataset in OGB's raw layout, as the text of each csv file. */
typedef struct ogb {
	buf nodes, nedges, edge, feat, label, split[3];
} ogb;

static void free_ogb(ogb *g)
{
	free(g->nodes.p);
	free(g->nedges.p);
	free(g->edge.p);
	free(g->feat.p);
	free(g->label.p);
	for (int i = 0; i < 3; i++)
		free(g->split[i].p);
}

/* n nodes, e edges (with repeats, self-loops and both directions), d features written in
 * several number styles, 5 classes (some "nan" when asked), a shuffled 60/20/20 split. */
static void make_ogb(ogb *g, int64_t n, int64_t e, int64_t d, bool nan_labels)
{
	memset(g, 0, sizeof *g);
	bprintf(&g->nodes, "%lld\n", (long long)n);
	bprintf(&g->nedges, "%lld\n", (long long)e);
	for (int64_t i = 0; i < e; i++) {
		int64_t a = (int64_t)(rnd() % (uint64_t)n), b = (int64_t)(rnd() % (uint64_t)n);
		if (i % 17 == 0)
			b = a;
		if (i % 11 == 0 && i > 0)
			bprintf(&g->edge, "%lld,%lld\n", (long long)b, (long long)a);
		else
			bprintf(&g->edge, "%lld,%lld\n", (long long)a, (long long)b);
	}
	for (int64_t v = 0; v < n; v++) {
		for (int64_t j = 0; j < d; j++) {
			double x = ((double)(rnd() % 2000001) - 1000000.0) / 7919.0;
			const char *sep = j ? "," : "";
			switch ((v + j) % 5) {
			case 0: bprintf(&g->feat, "%s%.6f", sep, x); break;
			case 1: bprintf(&g->feat, "%s%g", sep, x); break;
			case 2: bprintf(&g->feat, "%s%.3e", sep, x); break;
			case 3: bprintf(&g->feat, "%s%.1f", sep, (double)(rnd() % 2)); break;
			default: bprintf(&g->feat, "%s%.17g", sep, x); break;
			}
		}
		bprintf(&g->feat, "\n");
		if (nan_labels && v % 7 == 3)
			bprintf(&g->label, "nan\n");
		else
			bprintf(&g->label, "%d\n", v == 0 ? 4 : (int)(rnd() % 5));
	}
	int64_t *perm = malloc((size_t)n * sizeof *perm);
	for (int64_t v = 0; v < n; v++)
		perm[v] = v;
	for (int64_t v = n - 1; v > 0; v--) {
		int64_t j = (int64_t)(rnd() % (uint64_t)(v + 1)), t = perm[v];
		perm[v] = perm[j];
		perm[j] = t;
	}
	int64_t cut[4] = {0, n * 6 / 10, n * 8 / 10, n};
	for (int s = 0; s < 3; s++)
		for (int64_t k = cut[s]; k < cut[s + 1]; k++)
			bprintf(&g->split[s], "%lld\n", (long long)perm[k]);
	free(perm);
}

/* A member to replace (data) or leave out (data NULL) when writing a fixture zip. */
typedef struct override {
	const char *rel;   /* "raw/edge.csv.gz" */
	const void *data;  /* the member's bytes as stored (already gzip'ed where the name says so) */
	size_t len;
} override;

static const char *const SPLIT_NAMES[3] = {"train", "valid", "test"};

/* Write g as an OGB zip: top folder `top`, split folder `split`; csv files gzip'ed;
 * members stored or deflated by turns. */
static void write_ogb_zip(const char *path, const char *top, const char *split, const ogb *g, const override *ov, int nov)
{
	struct {
		char rel[128];
		const buf *text;
	} m[10];
	int k = 0;
	snprintf(m[k].rel, 128, "raw/num-node-list.csv.gz"), m[k++].text = &g->nodes;
	snprintf(m[k].rel, 128, "raw/num-edge-list.csv.gz"), m[k++].text = &g->nedges;
	snprintf(m[k].rel, 128, "raw/edge.csv.gz"), m[k++].text = &g->edge;
	snprintf(m[k].rel, 128, "raw/node-feat.csv.gz"), m[k++].text = &g->feat;
	snprintf(m[k].rel, 128, "raw/node-label.csv.gz"), m[k++].text = &g->label;
	for (int s = 0; s < 3; s++)
		snprintf(m[k].rel, 128, "split/%s/%s.csv.gz", split, SPLIT_NAMES[s]), m[k++].text = &g->split[s];
	int err;
	zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	cr_assert(za, "zip_open %s: %d", path, err);
	buf keep[16];
	int nkeep = 0;
	char name[2048];
	snprintf(name, sizeof name, "%s/RELEASE_v1.txt", top);
	zip_source_t *rs_ = zip_source_buffer(za, "release 1\n", 10, 0);
	cr_assert(zip_file_add(za, name, rs_, 0) >= 0);
	for (int i = 0; i < k; i++) {
		const void *data;
		size_t len;
		bool replaced = false, omitted = false;
		for (int j = 0; j < nov; j++)
			if (!strcmp(ov[j].rel, m[i].rel)) {
				replaced = true;
				omitted = !ov[j].data;
				data = ov[j].data;
				len = ov[j].len;
			}
		if (omitted)
			continue;
		if (!replaced) {
			keep[nkeep] = gz(m[i].text->p, m[i].text->n);
			data = keep[nkeep].p;
			len = keep[nkeep].n;
			nkeep++;
		}
		snprintf(name, sizeof name, "%s/%s", top, m[i].rel);
		zip_source_t *s = zip_source_buffer(za, data, len, 0);
		zip_int64_t idx = zip_file_add(za, name, s, 0);
		cr_assert(idx >= 0, "%s", zip_strerror(za));
		zip_set_file_compression(za, (zip_uint64_t)idx, i % 2 ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
	}
	cr_assert_eq(zip_close(za), 0);
	for (int i = 0; i < nkeep; i++)
		free(keep[i].p);
}

/* What a dataset directory must hold, worked out the slow obvious way from the csv text. */
typedef struct expect {
	int64_t n, d, e;            /* e: CSR entries */
	int64_t *indptr, *indices;  /* sorted unique (u, v), both directions, no self-loops */
	float *feat;                /* [n, d] strtof of each token */
	int32_t *label;
	int32_t classes;
	int64_t *split[3], nsplit[3];
} expect;

static int cmp_pair(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] > y[0]) - (x[0] < y[0]) : (x[1] > y[1]) - (x[1] < y[1]);
}

static void expect_from(expect *x, const ogb *g)
{
	memset(x, 0, sizeof *x);
	x->n = strtoll(g->nodes.p, NULL, 10);
	/* edges: both directions, sort, drop repeats */
	int64_t *pairs = malloc((2 * (g->edge.n / 2) + 2) * 2 * sizeof *pairs);
	int64_t k = 0;
	for (char *p = g->edge.p; *p;) {
		char *e;
		int64_t a = strtoll(p, &e, 10), b = strtoll(e + 1, &e, 10);
		p = e + 1;
		if (a == b)
			continue;
		pairs[2 * k] = a, pairs[2 * k + 1] = b, k++;
		pairs[2 * k] = b, pairs[2 * k + 1] = a, k++;
	}
	qsort(pairs, (size_t)k, 2 * sizeof *pairs, cmp_pair);
	x->indptr = calloc((size_t)x->n + 1, sizeof *x->indptr);
	x->indices = malloc(((size_t)k + 1) * sizeof *x->indices);
	for (int64_t i = 0; i < k; i++) {
		if (i && !cmp_pair(pairs + 2 * i, pairs + 2 * (i - 1)))
			continue;
		x->indptr[pairs[2 * i] + 1]++;
		x->indices[x->e++] = pairs[2 * i + 1];
	}
	for (int64_t v = 0; v < x->n; v++)
		x->indptr[v + 1] += x->indptr[v];
	free(pairs);
	/* features: every comma-separated token through strtof */
	const char *nl = strchr(g->feat.p, '\n');
	x->d = 1;
	for (const char *q = g->feat.p; q < nl; q++)
		x->d += *q == ',';
	x->feat = malloc((size_t)(x->n * x->d) * sizeof *x->feat);
	char *p = g->feat.p;
	for (int64_t i = 0; i < x->n * x->d; i++) {
		x->feat[i] = strtof(p, &p);
		p++;
	}
	x->label = malloc((size_t)x->n * sizeof *x->label);
	p = g->label.p;
	int32_t top = -1;
	for (int64_t v = 0; v < x->n; v++) {
		x->label[v] = strncmp(p, "nan", 3) ? (int32_t)strtol(p, NULL, 10) : -1;
		top = x->label[v] > top ? x->label[v] : top;
		p = strchr(p, '\n') + 1;
	}
	x->classes = top + 1;
	for (int s = 0; s < 3; s++) {
		x->split[s] = malloc((g->split[s].n + 1) * sizeof(int64_t));
		for (char *q = g->split[s].p; *q; q = strchr(q, '\n') + 1)
			x->split[s][x->nsplit[s]++] = strtoll(q, NULL, 10);
	}
}

static void free_expect(expect *x)
{
	free(x->indptr);
	free(x->indices);
	free(x->feat);
	free(x->label);
	for (int s = 0; s < 3; s++)
		free(x->split[s]);
}

/* Open the dataset at path and compare everything with x. */
static void check_dataset(const char *path, const expect *x, burrow_dtype ft)
{
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, path), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_eq(in->num_nodes, x->n);
	cr_assert_eq(in->num_edges, x->e, "%lld CSR entries, expected %lld", (long long)in->num_edges, (long long)x->e);
	cr_assert(in->symmetric);
	cr_assert_eq(in->feat_dim, x->d);
	cr_assert_eq(in->feat_dtype, ft);
	cr_assert_eq(in->num_classes, x->classes);
	const burrow_csr *g = burrow_dataset_graph(ds);
	for (int64_t v = 0; v <= x->n; v++)
		cr_assert_eq(g->indptr[v], x->indptr[v], "indptr[%lld]", (long long)v);
	for (int64_t j = 0; j < x->e; j++)
		cr_assert_eq(burrow_csr_index(g, j), x->indices[j], "indices[%lld]", (long long)j);
	const int32_t *y = burrow_dataset_labels(ds);
	for (int64_t v = 0; v < x->n; v++)
		cr_assert_eq(y[v], x->label[v], "label of node %lld", (long long)v);
	for (int s = 0; s < 3; s++) {
		int64_t n;
		const int64_t *ids = burrow_dataset_split(ds, s, &n);
		cr_assert_eq(n, x->nsplit[s]);
		for (int64_t k = 0; k < n; k++)
			cr_assert_eq(ids[k], x->split[s][k]);
	}
	/* features: read the file after its 4096-byte header */
	size_t len;
	char *f = tu_read(burrow_dataset_features_path(ds), &len);
	const size_t es = ft == BURROW_DTYPE_F16 ? 2 : 4;
	cr_assert_eq(burrow_dataset_features_offset(ds), 4096);
	cr_assert_eq(len, 4096 + (size_t)(x->n * x->d) * es);
	for (int64_t i = 0; i < x->n * x->d; i++) {
		if (ft == BURROW_DTYPE_F16) {
			uint16_t h;
			memcpy(&h, f + 4096 + 2 * i, 2);
			cr_assert_eq(h, bw_f32_to_f16(x->feat[i]), "feature %lld", (long long)i);
		} else {
			float v;
			memcpy(&v, f + 4096 + 4 * i, 4);
			cr_assert(memcmp(&v, &x->feat[i], 4) == 0, "feature %lld: %a, csv says %a", (long long)i, (double)v,
				  (double)x->feat[i]);
		}
	}
	free(f);
	burrow_dataset_close(ds);
}

/* Byte-compare the named files of two dataset directories. */
static void same_files(const char *a, const char *b, bool with_meta)
{
	const char *files[] = {"indptr.npy", "indices.npy", "features.npy", "labels.npy",
			       "split/train.npy", "split/valid.npy", "split/test.npy", "meta.json"};
	for (int i = 0; i < (with_meta ? 8 : 7); i++) {
		char *pa = tu_path(a, "%s", files[i]), *pb = tu_path(b, "%s", files[i]);
		size_t la, lb;
		char *da = tu_read(pa, &la), *db = tu_read(pb, &lb);
		cr_assert(da && db, "%s or %s missing", pa, pb);
		cr_assert(la == lb && memcmp(da, db, la) == 0, "%s and %s differ", pa, pb);
		free(da);
		free(db);
		free(pa);
		free(pb);
	}
}

/* Entries of a folder (not . and ..), -1 when it does not exist. */
static int entries(const char *d)
{
	DIR *dd = opendir(d);
	if (!dd)
		return -1;
	int k = 0;
	struct dirent *e;
	while ((e = readdir(dd)))
		k += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dd);
	return k;
}

static int lines(const char *s)
{
	int k = 0;
	for (; s && *s; s++)
		k += *s == '\n';
	return k;
}

/* ---------------------------------------------------------------- prep */

TestSuite(prep, .init = setup, .fini = teardown, .timeout = 60);

static buf read_gz(const char *path)
{
	buf b = {0};
	gzFile f = gzopen(path, "rb");
	cr_assert(f, "cannot open %s", path);
	char chunk[65536];
	int n;
	while ((n = gzread(f, chunk, sizeof chunk)) > 0)
		bput(&b, chunk, (size_t)n);
	gzclose(f);
	return b;
}

/* Real Cora in OGB's layout, read with zlib and strtof/strtoll as the reference. */
static bool cora_text(ogb *g, char **zip, char **folder)
{
	const char *ds = tu_datasets();
	if (!ds) {
		cr_log_info("skipped: the real datasets folder is absent (BURROW_DATASETS, default ../shared/datasets)");
		return false;
	}
	*zip = tu_path(ds, "ogbn-cora.zip");
	*folder = tu_path(ds, "ogbn-cora");
	memset(g, 0, sizeof *g);
	const char *rel[] = {"raw/num-node-list.csv.gz", "raw/num-edge-list.csv.gz", "raw/edge.csv.gz",
			     "raw/node-feat.csv.gz", "raw/node-label.csv.gz", "split/random/train.csv.gz",
			     "split/random/valid.csv.gz", "split/random/test.csv.gz"};
	buf *to[] = {&g->nodes, &g->nedges, &g->edge, &g->feat, &g->label, &g->split[0], &g->split[1], &g->split[2]};
	for (int i = 0; i < 8; i++) {
		char *p = tu_path(*folder, "%s", rel[i]);
		*to[i] = read_gz(p);
		free(p);
	}
	return true;
}

Test(prep, cora_zip_matches_the_csv_files)
{
	ogb g;
	char *zip, *folder;
	if (!cora_text(&g, &zip, &folder)) {
		cr_skip_test("the real datasets folder is absent (BURROW_DATASETS, default ../shared/datasets)");
		return;
	}
	expect x;
	expect_from(&x, &g);
	char *root = tu_path(dir, "root"), *err = NULL;
	int rc = tu_sh(NULL, &err, "%s prep %s --root %s --quiet", tu_burrow(), zip, root);
	cr_assert_eq(rc, 0, "prep failed: %s", err);
	char *out = tu_path(root, "ogbn-cora");
	check_dataset(out, &x, BURROW_DTYPE_F32);
	/* the acceptance figures, recomputed above from the csv files, are Cora's */
	cr_log_info("cora: %lld nodes, %lld CSR entries, %lld features, %d classes, splits %lld/%lld/%lld", (long long)x.n,
		    (long long)x.e, (long long)x.d, x.classes, (long long)x.nsplit[0], (long long)x.nsplit[1],
		    (long long)x.nsplit[2]);
	free(err);
	free(out);
	free(root);
	free_expect(&x);
	free_ogb(&g);
	free(zip);
	free(folder);
}

Test(prep, cora_folder_tiny_memory_and_f16_agree)
{
	ogb g;
	char *zip, *folder;
	if (!cora_text(&g, &zip, &folder)) {
		cr_skip_test("the real datasets folder is absent (BURROW_DATASETS, default ../shared/datasets)");
		return;
	}
	char *a = tu_path(dir, "a"), *b = tu_path(dir, "b"), *c = tu_path(dir, "c"), *h = tu_path(dir, "h");
	char *err = NULL;
	cr_assert_eq(tu_sh(NULL, &err, "%s prep %s --out %s --quiet", tu_burrow(), zip, a), 0, "%s", err);
	free(err);
	/* 4 KiB for the edge list: about 20 sorted runs, merged from disk */
	cr_assert_eq(tu_sh(NULL, &err, "%s prep %s --out %s --mem 4K --tmp %s --quiet", tu_burrow(), zip, b, dir), 0, "%s",
		     err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s prep %s --out %s --quiet", tu_burrow(), folder, c), 0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s prep %s --out %s --feat-dtype f16 --quiet", tu_burrow(), zip, h), 0, "%s", err);
	free(err);
	same_files(a, b, true); /* spilled or not: the same bytes, meta.json included */
	same_files(a, c, false); /* folder or zip: the same arrays */
	expect x;
	expect_from(&x, &g);
	check_dataset(h, &x, BURROW_DTYPE_F16);
	free_expect(&x);
	free_ogb(&g);
	free(a), free(b), free(c), free(h), free(zip), free(folder);
}

Test(prep, fixture_zip_against_the_reference)
{
	ogb g;
	make_ogb(&g, 300, 2000, 7, false);
	char *zip = tu_path(dir, "toy-set.zip"), *root = tu_path(dir, "root"), *err = NULL;
	write_ogb_zip(zip, "toy", "random", &g, NULL, 0);
	cr_assert_eq(tu_sh(NULL, &err, "%s prep %s --root %s --quiet", tu_burrow(), zip, root), 0, "%s", err);
	free(err);
	expect x;
	expect_from(&x, &g);
	char *out = tu_path(root, "toy-set");
	check_dataset(out, &x, BURROW_DTYPE_F32);
	/* a second run refuses to replace it, --force does */
	cr_assert_eq(tu_sh(NULL, &err, "%s prep %s --root %s --quiet", tu_burrow(), zip, root), 1);
	cr_assert(strstr(err, "already exists"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s prep %s --root %s --quiet --force --mem 1K", tu_burrow(), zip, root), 0, "%s",
		     err);
	free(err);
	check_dataset(out, &x, BURROW_DTYPE_F32);
	free_expect(&x);
	free_ogb(&g);
	free(zip), free(root), free(out);
}

/* ---------------------------------------------------------------- bad input */

TestSuite(bad_input, .init = setup, .fini = teardown, .timeout = 60);

/* prep a fixture zip with one member changed: exit 1, one line naming the file and the
 * fault (all of `want`), and nothing left in the output root. */
static void prep_fails(const override *ov, int nov, const char *const *want, int nwant)
{
	ogb g;
	make_ogb(&g, 300, 1500, 5, false);
	char *zip = tu_path(dir, "bad.zip"), *root = tu_path(dir, "root"), *err = NULL;
	write_ogb_zip(zip, "bad", "random", &g, ov, nov);
	int rc = tu_sh(NULL, &err, "%s prep %s --root %s", tu_burrow(), zip, root);
	cr_assert_eq(rc, 1, "exit %d: %s", rc, err);
	cr_assert_eq(lines(err), 1, "expected one line, got: %s", err);
	cr_assert(strncmp(err, "burrow: prep: ", 14) == 0, "%s", err);
	for (int i = 0; i < nwant; i++)
		cr_assert(strstr(err, want[i]), "'%s' lacks '%s'", err, want[i]);
	cr_assert(entries(root) <= 0, "the root %s is not empty after a failure", root);
	free(err);
	free(zip);
	free(root);
	free_ogb(&g);
}

Test(bad_input, truncated_gzip)
{
	ogb g;
	make_ogb(&g, 300, 1500, 5, false);
	buf z = gz(g.edge.p, g.edge.n);
	override ov = {"raw/edge.csv.gz", z.p, z.n / 2};
	const char *want[] = {"bad.zip:bad/raw/edge.csv.gz", "truncated gzip"};
	prep_fails(&ov, 1, want, 2);
	free(z.p);
	free_ogb(&g);
}

Test(bad_input, wrong_column_count_names_file_and_line)
{
	const char *text = "0,1\n1,2\n2,3,4\n";
	buf z = gz(text, strlen(text));
	override ov[] = {{"raw/edge.csv.gz", z.p, z.n}, {"raw/num-edge-list.csv.gz", NULL, 0}};
	const char *want[] = {"bad/raw/edge.csv.gz:3:", "expected 2 columns, found 3"};
	prep_fails(ov, 2, want, 2);
	free(z.p);
}

Test(bad_input, non_numeric_token)
{
	ogb g;
	make_ogb(&g, 300, 1500, 5, false);
	/* line 4 of the features gets a word in its second column */
	char *p = g.feat.p;
	for (int i = 0; i < 3; i++)
		p = strchr(p, '\n') + 1;
	buf f = {0};
	bput(&f, g.feat.p, (size_t)(strchr(p, ',') + 1 - g.feat.p));
	bprintf(&f, "abc");
	bput(&f, strchr(strchr(p, ',') + 1, ','), strlen(strchr(strchr(p, ',') + 1, ',')));
	buf z = gz(f.p, f.n);
	override ov = {"raw/node-feat.csv.gz", z.p, z.n};
	const char *want[] = {"bad/raw/node-feat.csv.gz:4:", "column 2: 'abc' is not a number"};
	prep_fails(&ov, 1, want, 2);
	free(z.p);
	free(f.p);
	free_ogb(&g);
}

Test(bad_input, node_id_out_of_range)
{
	const char *hi = "0,1\n299,300\n", *neg = "0,1\n5,-1\n";
	buf a = gz(hi, strlen(hi)), b = gz(neg, strlen(neg));
	override ov1[] = {{"raw/edge.csv.gz", a.p, a.n}, {"raw/num-edge-list.csv.gz", NULL, 0}};
	const char *want1[] = {"bad/raw/edge.csv.gz:2:", "node id 300 out of range [0, 300)"};
	prep_fails(ov1, 2, want1, 2);
	override ov2[] = {{"raw/edge.csv.gz", b.p, b.n}, {"raw/num-edge-list.csv.gz", NULL, 0}};
	const char *want2[] = {"bad/raw/edge.csv.gz:2:", "node id -1 out of range"};
	prep_fails(ov2, 2, want2, 2);
	/* and in a split */
	const char *sp = "3\n1000\n";
	buf c = gz(sp, strlen(sp));
	override ov3 = {"split/random/valid.csv.gz", c.p, c.n};
	const char *want3[] = {"bad/split/random/valid.csv.gz:2:", "node id 1000 out of range"};
	prep_fails(&ov3, 1, want3, 2);
	free(a.p), free(b.p), free(c.p);
}

/* A 1 KB zip whose num-node-list says 1e15 wrote until the disk was full (issue 19): the
 * count is refused before anything is written. */
Test(bad_input, absurd_node_count)
{
	const char *n = "1000000000000000\n";
	buf z = gz(n, strlen(n));
	override ov = {"raw/num-node-list.csv.gz", z.p, z.n};
	const char *want[] = {"needs at least", "bytes"};
	prep_fails(&ov, 1, want, 2);
	free(z.p);
}

Test(bad_input, feature_rows_not_n)
{
	ogb g;
	make_ogb(&g, 300, 1500, 5, false);
	size_t cut = (size_t)(strrchr(g.feat.p + 0, '\n') - g.feat.p); /* drop the last row */
	while (cut > 0 && g.feat.p[cut - 1] != '\n')
		cut--;
	buf z = gz(g.feat.p, cut);
	override ov = {"raw/node-feat.csv.gz", z.p, z.n};
	const char *want[] = {"bad/raw/node-feat.csv.gz", "299 rows, but the graph has 300 nodes"};
	prep_fails(&ov, 1, want, 2);
	free(z.p);
	free_ogb(&g);
}

Test(bad_input, zip_member_missing)
{
	override ov = {"raw/node-label.csv.gz", NULL, 0};
	const char *want[] = {"bad.zip", "member bad/raw/node-label.csv.gz is missing"};
	prep_fails(&ov, 1, want, 2);
}

Test(bad_input, not_a_zip)
{
	char *zip = tu_path(dir, "junk.zip"), *root = tu_path(dir, "root"), *err = NULL;
	write_file(zip, "this is not a zip file at all\n", 30);
	int rc = tu_sh(NULL, &err, "%s prep %s --root %s", tu_burrow(), zip, root);
	cr_assert_eq(rc, 1);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, zip) && strstr(err, "not a zip archive"), "%s", err);
	cr_assert(entries(root) <= 0);
	free(err), free(zip), free(root);
}

/* The disk fills up (RLIMIT_FSIZE, SIGXFSZ ignored so that write fails with EFBIG). */
Test(bad_input, disk_full)
{
	ogb g;
	make_ogb(&g, 300, 1500, 5, false);
	char *zip = tu_path(dir, "full.zip"), *root = tu_path(dir, "root"), *errf = tu_path(dir, "stderr");
	write_ogb_zip(zip, "full", "random", &g, NULL, 0);
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit rl = {6000, 6000}; /* features.npy alone needs 4096 + 6000 bytes */
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		FILE *e = freopen(errf, "w", stderr);
		(void)e;
		execl(tu_burrow(), "burrow", "prep", zip, "--root", root, (char *)NULL);
		_exit(127);
	}
	int status;
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %d", status);
	char *err = tu_read(errf, NULL);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, "File too large") && strstr(err, root), "%s", err);
	cr_assert(entries(root) <= 0, "leftovers in %s", root);
	free(err), free(zip), free(root), free(errf);
	free_ogb(&g);
}

/* ---------------------------------------------------------------- npz (papers100M-bin layout) */

TestSuite(npz, .init = setup, .fini = teardown, .timeout = 60);

/* An .npy file in memory: header version 1 or 2, padded to 64 bytes. */
static buf npy_bytes(const char *descr, int ndim, const int64_t *shape, const void *data, size_t nbytes, int version)
{
	char dict[256];
	int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
	for (int i = 0; i < ndim; i++)
		k += snprintf(dict + k, sizeof dict - (size_t)k, "%lld,%s", (long long)shape[i], i + 1 < ndim ? " " : "");
	if (ndim > 1)
		k--;
	k += snprintf(dict + k, sizeof dict - (size_t)k, "), }");
	size_t pre = version == 1 ? 10 : 12, total = (pre + (size_t)k + 1 + 63) / 64 * 64, hl = total - pre;
	buf b = {0};
	unsigned char h[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0};
	if (version == 1) {
		h[8] = (unsigned char)(hl & 0xff), h[9] = (unsigned char)(hl >> 8);
	} else {
		for (int i = 0; i < 4; i++)
			h[8 + i] = (unsigned char)(hl >> (8 * i));
	}
	bput(&b, h, pre);
	bput(&b, dict, (size_t)k);
	for (size_t i = pre + (size_t)k; i < total - 1; i++)
		bput(&b, " ", 1);
	bput(&b, "\n", 1);
	bput(&b, data, nbytes);
	return b;
}

/* v as `bytes` little-endian bytes. */
static void le(FILE *f, uint64_t *pos, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		fputc((int)((v >> (8 * i)) & 0xff), f);
	*pos += (uint64_t)bytes;
}

/* A zip written by hand with ZIP64 records on every entry (stored), as writers do for
 * members past 4 GiB; here forced on small ones. */
static void write_zip64(const char *path, int k, const char *const *names, const buf *data)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	uint64_t *off = calloc((size_t)k, sizeof *off), pos = 0;
	uint32_t *crc = calloc((size_t)k, sizeof *crc);
#define U16(v) le(f, &pos, (uint64_t)(v), 2)
#define U32(v) le(f, &pos, (uint64_t)(v), 4)
#define U64(v) le(f, &pos, (uint64_t)(v), 8)
	for (int i = 0; i < k; i++) {
		off[i] = pos;
		crc[i] = (uint32_t)crc32(0, (const Bytef *)data[i].p, (uInt)data[i].n);
		U32(0x04034b50), U16(45), U16(0), U16(0), U16(0), U16(0x21), U32(crc[i]);
		U32(0xffffffff), U32(0xffffffff), U16(strlen(names[i])), U16(20);
		fwrite(names[i], 1, strlen(names[i]), f), pos += strlen(names[i]);
		U16(1), U16(16), U64(data[i].n), U64(data[i].n);
		fwrite(data[i].p, 1, data[i].n, f), pos += data[i].n;
	}
	uint64_t cd = pos;
	for (int i = 0; i < k; i++) {
		U32(0x02014b50), U16(45), U16(45), U16(0), U16(0), U16(0), U16(0x21), U32(crc[i]);
		U32(0xffffffff), U32(0xffffffff), U16(strlen(names[i])), U16(28), U16(0), U16(0), U16(0), U32(0);
		U32(0xffffffff);
		fwrite(names[i], 1, strlen(names[i]), f), pos += strlen(names[i]);
		U16(1), U16(24), U64(data[i].n), U64(data[i].n), U64(off[i]);
	}
	uint64_t cdsize = pos - cd, z64 = pos;
	U32(0x06064b50), U64(44), U16(45), U16(45), U32(0), U32(0), U64(k), U64(k), U64(cdsize), U64(cd);
	U32(0x07064b50), U32(0), U64(z64), U32(1);
	U32(0x06054b50), U16(0), U16(0), U16(0xffff), U16(0xffff), U32(0xffffffff), U32(0xffffffff), U16(0);
#undef U16
#undef U32
#undef U64
	fclose(f);
	free(off);
	free(crc);
}

/* A zip through libzip, each member stored or deflated as asked. */
static void write_zip(const char *path, int k, const char *const *names, const buf *data, bool deflate)
{
	int err;
	zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	cr_assert(za);
	for (int i = 0; i < k; i++) {
		zip_int64_t idx = zip_file_add(za, names[i], zip_source_buffer(za, data[i].p, data[i].n, 0), 0);
		cr_assert(idx >= 0);
		zip_set_file_compression(za, (zip_uint64_t)idx, deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
	}
	cr_assert_eq(zip_close(za), 0, "%s", path);
}

enum npz_kind { NPZ_STORED, NPZ_DEFLATED, NPZ_ZIP64 };

/* The fixture g as papers100M-bin.zip would hold it: raw/data.npz, raw/node-label.npz,
 * split/time/{train,valid,test}.csv.gz; edge_index (2, E) int64 or (E, 2) int32; npy header v1 or v2. */
static void write_npz_zip(const char *path, const ogb *g, const expect *x, enum npz_kind kind, bool pairs, int version)
{
	/* the edges as listed, and the labels with NaN */
	int64_t e = strtoll(g->nedges.p, NULL, 10), n = x->n;
	int64_t *ei64 = malloc((size_t)(2 * e) * sizeof *ei64);
	int32_t *ei32 = malloc((size_t)(2 * e) * sizeof *ei32);
	char *p = g->edge.p;
	for (int64_t i = 0; i < e; i++) {
		int64_t a = strtoll(p, &p, 10), b = strtoll(p + 1, &p, 10);
		p++;
		ei64[i] = a, ei64[e + i] = b;         /* (2, E) */
		ei32[2 * i] = (int32_t)a, ei32[2 * i + 1] = (int32_t)b; /* (E, 2) */
	}
	double *lab = malloc((size_t)n * sizeof *lab);
	for (int64_t v = 0; v < n; v++)
		lab[v] = x->label[v] < 0 ? NAN : x->label[v];
	int64_t nn = n, ne = e, shape_e[2] = {2, e}, shape_p[2] = {e, 2}, shape_f[2] = {n, x->d}, shape_l[2] = {n, 1}, one = 1;
	int64_t *year = calloc((size_t)n, sizeof *year);
	buf m[5];
	m[0] = pairs ? npy_bytes("<i4", 2, shape_p, ei32, (size_t)(2 * e) * 4, version)
		     : npy_bytes("<i8", 2, shape_e, ei64, (size_t)(2 * e) * 8, version);
	m[1] = npy_bytes("<f4", 2, shape_f, x->feat, (size_t)(n * x->d) * 4, version);
	m[2] = npy_bytes("<i8", 1, &one, &nn, 8, version);
	m[3] = npy_bytes("<i8", 1, &one, &ne, 8, version);
	m[4] = npy_bytes("<i8", 1, &n, year, (size_t)n * 8, version);
	buf lm = npy_bytes("<f8", 2, shape_l, lab, (size_t)n * 8, version);
	const char *inner[] = {"edge_index.npy", "node_feat.npy", "num_nodes_list.npy", "num_edges_list.npy", "node_year.npy"};
	const char *lname[] = {"node_label.npy"};
	char *dnpz = tu_path(dir, "data.npz"), *lnpz = tu_path(dir, "node-label.npz");
	if (kind == NPZ_ZIP64) {
		write_zip64(dnpz, 5, inner, m);
		write_zip64(lnpz, 1, lname, &lm);
	} else {
		write_zip(dnpz, 5, inner, m, kind == NPZ_DEFLATED);
		write_zip(lnpz, 1, lname, &lm, kind == NPZ_DEFLATED);
	}
	buf outer[6];
	size_t len;
	outer[0].p = tu_read(dnpz, &len), outer[0].n = len;
	outer[1].p = tu_read(lnpz, &len), outer[1].n = len;
	for (int s = 0; s < 3; s++)
		outer[2 + s] = gz(g->split[s].p, g->split[s].n);
	outer[5].p = strdup("papers\n"), outer[5].n = 7;
	const char *names[] = {"pap/raw/data.npz", "pap/raw/node-label.npz", "pap/split/time/train.csv.gz",
			       "pap/split/time/valid.csv.gz", "pap/split/time/test.csv.gz", "pap/RELEASE_v1.txt"};
	if (kind == NPZ_ZIP64)
		write_zip64(path, 6, names, outer);
	else
		write_zip(path, 6, names, outer, kind == NPZ_DEFLATED);
	for (int i = 0; i < 5; i++)
		free(m[i].p);
	for (int i = 0; i < 6; i++)
		free(outer[i].p);
	free(lm.p), free(ei64), free(ei32), free(lab), free(year), free(dnpz), free(lnpz);
}

static void npz_case(enum npz_kind kind, bool pairs, int version)
{
	ogb g;
	make_ogb(&g, 250, 1800, 6, true);
	expect x;
	expect_from(&x, &g);
	char *zip = tu_path(dir, "pap.zip"), *root = tu_path(dir, "root"), *err = NULL;
	write_npz_zip(zip, &g, &x, kind, pairs, version);
	int rc = tu_sh(NULL, &err, "%s prep %s --root %s --quiet --mem 8K", tu_burrow(), zip, root);
	cr_assert_eq(rc, 0, "prep failed: %s", err);
	char *out = tu_path(root, "pap");
	check_dataset(out, &x, BURROW_DTYPE_F32);
	cr_assert(entries(root) == 1, "leftovers beside the dataset (an extracted npz?)");
	free(out), free(err), free(zip), free(root);
	free_expect(&x);
	free_ogb(&g);
}

Test(npz, stored_members_edge_rows_npy_v1) { npz_case(NPZ_STORED, false, 1); }
Test(npz, deflated_members_edge_pairs_npy_v2) { npz_case(NPZ_DEFLATED, true, 2); }
Test(npz, zip64_records_edge_rows_npy_v2) { npz_case(NPZ_ZIP64, false, 2); }

/* ---------------------------------------------------------------- downloads from a local server */

TestSuite(download, .init = setup, .fini = teardown, .timeout = 60);

typedef struct server {
	pid_t pid;
	int port;
	char *log;   /* one line per request: "GET /path range=K" (K = -1 without Range) */
} server;

static void send_all(int c, const void *d, size_t n)
{
	const char *p = d;
	while (n > 0) {
		ssize_t w = send(c, p, n, MSG_NOSIGNAL);
		if (w <= 0)
			return;
		p += w;
		n -= (size_t)w;
	}
}

/* Serve `file` over HTTP/1.1 on 127.0.0.1: /missing.zip is 404; /cut.zip stops half-way
 * through the body the first time it is asked for; Range requests get 206 (or 416);
 * /norange.zip is cut the first time too, then ignores Range (200 and the whole file). */
static void serve(int ls, const char *file, const char *logpath)
{
	size_t size;
	char *data = tu_read(file, &size);
	int cuts = 0;
	for (;;) {
		int c = accept(ls, NULL, NULL);
		if (c < 0)
			continue;
		char req[8192] = "";
		size_t n = 0;
		while (n < sizeof req - 1 && !strstr(req, "\r\n\r\n")) {
			ssize_t r = recv(c, req + n, sizeof req - 1 - n, 0);
			if (r <= 0)
				break;
			n += (size_t)r;
			req[n] = '\0';
		}
		char method[16] = "", path[256] = "";
		sscanf(req, "%15s %255s", method, path);
		long long from = -1;
		const char *rg = strcasestr(req, "\r\nRange: bytes=");
		if (rg)
			from = strtoll(rg + 15, NULL, 10);
		FILE *lf = fopen(logpath, "a");
		fprintf(lf, "%s %s range=%lld\n", method, path, from);
		fclose(lf);
		bool head = !strcmp(method, "HEAD");
		char hdr[512];
		if (!strcmp(path, "/missing.zip")) {
			const char *r = "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\nConnection: close\r\n\r\nnot found";
			send_all(c, r, strlen(r));
		} else if (!strcmp(path, "/norange.zip") && cuts > 0) {
			/* a server that ignores Range after the first, cut, transfer */
			snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", size);
			send_all(c, hdr, strlen(hdr));
			if (!head)
				send_all(c, data, size);
		} else if (from >= (long long)size) {
			snprintf(hdr, sizeof hdr, "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */%zu\r\n"
						  "Content-Length: 0\r\nConnection: close\r\n\r\n", size);
			send_all(c, hdr, strlen(hdr));
		} else if (from > 0) {
			snprintf(hdr, sizeof hdr, "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes %lld-%zu/%zu\r\n"
						  "Content-Length: %zu\r\nConnection: close\r\n\r\n",
				 from, size - 1, size, size - (size_t)from);
			send_all(c, hdr, strlen(hdr));
			if (!head)
				send_all(c, data + from, size - (size_t)from);
		} else {
			snprintf(hdr, sizeof hdr, "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", size);
			send_all(c, hdr, strlen(hdr));
			bool cut = (!strcmp(path, "/cut.zip") || !strcmp(path, "/norange.zip")) && !head && cuts++ == 0;
			if (!head)
				send_all(c, data, cut ? size / 2 : size);
		}
		shutdown(c, SHUT_WR);
		close(c);
	}
}

static void start_server(server *s, const char *file)
{
	int ls = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	cr_assert(ls >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 8) == 0);
	socklen_t al = sizeof a;
	getsockname(ls, (struct sockaddr *)&a, &al);
	s->port = ntohs(a.sin_port);
	s->log = tu_path(dir, "server.log");
	s->pid = fork();
	if (s->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the test */
		alarm(60);
		serve(ls, file, s->log);
		_exit(0);
	}
	close(ls);
}

static void stop_server(server *s)
{
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	free(s->log);
}

/* A fixture zip to serve. */
static char *served_zip(const char *top, const char *split, ogb *g)
{
	make_ogb(g, 200, 900, 4, false);
	char *zip = tu_path(dir, "served.zip");
	write_ogb_zip(zip, top, split, g, NULL, 0);
	return zip;
}

Test(download, not_found_leaves_nothing)
{
	ogb g;
	char *zip = served_zip("toy", "random", &g), *root = tu_path(dir, "root"), *err = NULL;
	server s;
	start_server(&s, zip);
	int rc = tu_sh(NULL, &err, "%s download toy --root %s --url http://127.0.0.1:%d/missing.zip", tu_burrow(), root,
		       s.port);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, "/missing.zip") && strstr(err, "HTTP 404"), "%s", err);
	cr_assert(entries(root) <= 0, "files left in %s", root);
	stop_server(&s);
	free(err), free(zip), free(root);
	free_ogb(&g);
}

/* A server answering 200 with something that is not a zip (a 6-byte error text): refused,
 * nothing kept under the zip's name (issue 19). */
Test(download, non_zip_answer_not_kept)
{
	char *page = tu_path(dir, "page.txt"), *root = tu_path(dir, "root"), *err = NULL;
	FILE *f = fopen(page, "w");
	fputs("error\n", f);
	fclose(f);
	server s;
	start_server(&s, page);
	int rc = tu_sh(NULL, &err, "%s download toy --root %s --url http://127.0.0.1:%d/toy.zip --quiet", tu_burrow(), root,
		       s.port);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, "not a zip file") && strstr(err, "6 bytes"), "%s", err);
	cr_assert(entries(root) <= 0, "files left in %s", root);
	stop_server(&s);
	free(err), free(page), free(root);
}

Test(download, cut_half_way_then_resumed)
{
	ogb g;
	char *zip = served_zip("toy", "random", &g), *root = tu_path(dir, "root"), *err = NULL;
	server s;
	start_server(&s, zip);
	char *part = tu_path(root, "toy.zip.part"), *final = tu_path(root, "toy.zip");
	int rc = tu_sh(NULL, &err, "%s download toy --root %s --url http://127.0.0.1:%d/cut.zip --quiet", tu_burrow(), root,
		       s.port);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, "stopped at") && strstr(err, "toy.zip.part"), "%s", err);
	long long have = tu_size(part), whole = tu_size(zip);
	cr_assert(have > 0 && have < whole, "the .part holds %lld of %lld bytes", have, whole);
	cr_assert(!tu_exists(final));
	free(err);
	rc = tu_sh(NULL, &err, "%s download toy --root %s --url http://127.0.0.1:%d/cut.zip --quiet", tu_burrow(), root,
		   s.port);
	cr_assert_eq(rc, 0, "%s", err);
	size_t la, lb;
	char *a = tu_read(zip, &la), *b = tu_read(final, &lb);
	cr_assert(la == lb && memcmp(a, b, la) == 0, "the resumed download differs from the served file");
	cr_assert(!tu_exists(part));
	/* the second request asked for the rest only */
	char *log = tu_read(s.log, NULL), want[64];
	snprintf(want, sizeof want, "GET /cut.zip range=%lld", have);
	cr_assert(strstr(log, want), "no Range request for byte %lld in:\n%s", have, log);
	/* a third run keeps the complete zip and asks nothing */
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s download toy --root %s --url http://127.0.0.1:%d/cut.zip --quiet", tu_burrow(),
			   root, s.port), 0);
	char *log2 = tu_read(s.log, NULL);
	cr_assert_str_eq(log, log2);
	stop_server(&s);
	free(a), free(b), free(log), free(log2), free(err), free(zip), free(root), free(part), free(final);
	free_ogb(&g);
}

/* A server that cannot resume: the second run starts over and still ends whole. */
Test(download, server_without_range_restarts)
{
	ogb g;
	char *zip = served_zip("toy", "random", &g), *root = tu_path(dir, "root"), *err = NULL;
	server s;
	start_server(&s, zip);
	char *final = tu_path(root, "toy.zip");
	const char *cmd = "%s download toy --root %s --url http://127.0.0.1:%d/norange.zip --quiet";
	cr_assert_eq(tu_sh(NULL, &err, cmd, tu_burrow(), root, s.port), 1, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, cmd, tu_burrow(), root, s.port), 0, "%s", err);
	size_t la, lb;
	char *a = tu_read(zip, &la), *b = tu_read(final, &lb);
	cr_assert(la == lb && memcmp(a, b, la) == 0);
	char *log = tu_read(s.log, NULL);
	cr_assert_eq(lines(log), 3, "expected cut, refused resume, whole: %s", log);
	cr_assert(strstr(log, "range=-1\nGET /norange.zip range=") && strstr(log + strlen(log) - 30, "range=-1"), "%s", log);
	stop_server(&s);
	free(a), free(b), free(log), free(err), free(zip), free(root), free(final);
	free_ogb(&g);
}

/* burrow prep NAME fetches the missing zip itself (here from the local server). */
Test(download, prep_by_name_downloads_the_zip)
{
	ogb g;
	char *zip = served_zip("arxiv", "time", &g), *root = tu_path(dir, "root"), *err = NULL;
	server s;
	start_server(&s, zip);
	int rc = tu_sh(NULL, &err, "%s prep ogbn-arxiv --root %s --url http://127.0.0.1:%d/arxiv.zip --quiet", tu_burrow(),
		       root, s.port);
	cr_assert_eq(rc, 0, "%s", err);
	expect x;
	expect_from(&x, &g);
	x.classes = burrow_catalog_find("ogbn-arxiv")->num_classes; /* the catalog's count wins */
	char *out = tu_path(root, "ogbn-arxiv"), *z = tu_path(root, "ogbn-arxiv.zip");
	check_dataset(out, &x, BURROW_DTYPE_F32);
	cr_assert(tu_exists(z));
	stop_server(&s);
	free_expect(&x);
	free(out), free(z), free(err), free(zip), free(root);
	free_ogb(&g);
}

/* ---------------------------------------------------------------- catalog */

TestSuite(catalog, .timeout = 30);

Test(catalog, rows_names_and_space)
{
	cr_assert_eq(burrow_catalog_count(), 9);
	const char *names[] = {"ogbn-arxiv",  "ogbn-products", "ogbn-papers100M", "ogbn-mag",	   "ogbn-proteins",
			       "ogbl-collab", "ogbl-ppa",      "ogbl-ddi",	  "ogbl-citation2"};
	for (int i = 0; i < 9; i++) {
		const burrow_catalog_entry *e = burrow_catalog_find(names[i]);
		cr_assert(e && e == burrow_catalog_find(e->download_name));
		cr_assert(strstr(e->url, e->download_name) &&
			  strstr(e->url, i < 5 ? "http://snap.stanford.edu/ogb/data/nodeproppred/"
					       : "http://snap.stanford.edu/ogb/data/linkproppred/"));
		cr_assert_eq(e->eval_metric != NULL, i >= 5, "%s", names[i]);
		burrow_catalog_space s32, s16;
		burrow_catalog_space_of(e, BURROW_DTYPE_F32, &s32);
		burrow_catalog_space_of(e, BURROW_DTYPE_F16, &s16);
		/* the features alone take N * D * 4 bytes; f16 saves exactly half of them (and of the
		 * edge features, 2 E * De * 4 bytes, which prep writes in the same dtype) */
		cr_assert_geq(s32.dataset, e->num_nodes * e->feat_dim * 4);
		cr_assert_eq(s32.dataset - s16.dataset, e->num_nodes * e->feat_dim * 2 + 2 * e->num_edges * e->edge_feat_dim * 2);
		cr_assert_geq(s32.scratch, 2 * e->num_edges * 8);
	}
	cr_assert(burrow_catalog_find("ogbn-papers100M")->binary);
	cr_assert(burrow_catalog_find("products")->add_inverse_edge);
	cr_assert_null(burrow_catalog_find("ogbn-nothing"));
	cr_assert(burrow_catalog_find("mag")->hetero && burrow_catalog_find("ogbn-mag")->num_classes == 349);
	/* ogbn-proteins: OGB's master.csv (add_inverse_edge, species split, 112 tasks, 8 edge features) */
	const burrow_catalog_entry *pr = burrow_catalog_find("proteins");
	cr_assert(pr && pr->add_inverse_edge && !strcmp(pr->split, "species") && pr->num_tasks == 112 &&
		  pr->edge_feat_dim == 8 && pr->feat_dim == 0 && pr->num_nodes == 132534 && pr->num_edges == 39561252);
	burrow_catalog_space ps;
	burrow_catalog_space_of(pr, BURROW_DTYPE_F32, &ps);
	cr_assert_geq(ps.dataset, 2 * pr->num_edges * pr->edge_feat_dim * 4, "edge_features.npy counted");
	cr_assert(!strcmp(burrow_catalog_find("ogbl-citation2")->eval_metric, "mrr") &&
		  !burrow_catalog_find("citation-v2")->add_inverse_edge && burrow_catalog_find("ddi")->feat_dim == 0);
	cr_assert_null(burrow_catalog_get(9));
	char *out = NULL;
	cr_assert_eq(tu_sh(&out, NULL, "%s datasets", tu_burrow()), 0);
	for (int i = 0; i < 9; i++)
		cr_assert(strstr(out, names[i]), "%s", out);
	free(out);
}

/* ---------------------------------------------------------------- import */

TestSuite(import, .init = setup, .fini = teardown, .timeout = 60);

static char *save_npy(const char *name, const char *descr, int ndim, const int64_t *shape, const void *data, size_t n)
{
	char *p = tu_path(dir, "%s", name);
	buf b = npy_bytes(descr, ndim, shape, data, n, 1);
	write_file(p, b.p, b.n);
	free(b.p);
	return p;
}

/* The edges of g as listed: a[i] -> b[i]. */
static int64_t listed_edges(const ogb *g, int64_t **a, int64_t **b)
{
	int64_t e = strtoll(g->nedges.p, NULL, 10);
	*a = malloc((size_t)e * sizeof **a);
	*b = malloc((size_t)e * sizeof **b);
	char *p = g->edge.p;
	for (int64_t i = 0; i < e; i++) {
		(*a)[i] = strtoll(p, &p, 10);
		(*b)[i] = strtoll(p + 1, &p, 10);
		p++;
	}
	return e;
}

Test(import, npy_files_undirected)
{
	ogb g;
	make_ogb(&g, 220, 1200, 5, true);
	expect x;
	expect_from(&x, &g);
	int64_t *a, *b, e = listed_edges(&g, &a, &b), n = x.n;
	int64_t *rows = malloc((size_t)(2 * e) * sizeof *rows);
	memcpy(rows, a, (size_t)e * 8);
	memcpy(rows + e, b, (size_t)e * 8);
	double *f64 = malloc((size_t)(n * x.d) * sizeof *f64), *lab = malloc((size_t)n * sizeof *lab);
	for (int64_t i = 0; i < n * x.d; i++)
		f64[i] = x.feat[i];
	for (int64_t v = 0; v < n; v++)
		lab[v] = x.label[v] < 0 ? NAN : x.label[v];
	int32_t *valid = malloc((size_t)x.nsplit[1] * sizeof *valid);
	for (int64_t k = 0; k < x.nsplit[1]; k++)
		valid[k] = (int32_t)x.split[1][k];
	uint8_t *mask = calloc((size_t)n, 1);
	for (int64_t k = 0; k < x.nsplit[2]; k++)
		mask[x.split[2][k]] = 1;
	int64_t se[2] = {2, e}, sf[2] = {n, x.d}, sl[1] = {n}, st[1] = {x.nsplit[0]}, sv[1] = {x.nsplit[1]};
	char *pe = save_npy("e.npy", "<i8", 2, se, rows, (size_t)(2 * e) * 8);
	char *pf = save_npy("f.npy", "<f8", 2, sf, f64, (size_t)(n * x.d) * 8);
	char *pl = save_npy("l.npy", "<f8", 1, sl, lab, (size_t)n * 8);
	char *pt = save_npy("t.npy", "<i8", 1, st, x.split[0], (size_t)x.nsplit[0] * 8);
	char *pv = save_npy("v.npy", "<i4", 1, sv, valid, (size_t)x.nsplit[1] * 4);
	char *ps = save_npy("s.npy", "|b1", 1, sl, mask, (size_t)n);
	char *out = tu_path(dir, "out"), *err = NULL;
	int rc = tu_sh(NULL, &err,
		       "%s import %s --edges %s --num-nodes %lld --features %s --labels %s --train %s --valid %s --test %s "
		       "--undirected --mem 2K --quiet",
		       tu_burrow(), out, pe, (long long)n, pf, pl, pt, pv, ps);
	cr_assert_eq(rc, 0, "%s", err);
	/* a mask gives its nodes in ascending order */
	int64_t k = 0;
	for (int64_t v = 0; v < n; v++)
		if (mask[v])
			x.split[2][k++] = v;
	check_dataset(out, &x, BURROW_DTYPE_F32);
	free(err), free(out), free(pe), free(pf), free(pl), free(pt), free(pv), free(ps);
	free(a), free(b), free(rows), free(f64), free(lab), free(valid), free(mask);
	free_expect(&x);
	free_ogb(&g);
}

/* Directed imports: text in three layouts (one gzip'ed) and (E, 2) int32 npy all give
 * the sorted, de-duplicated, loop-free CSR of the listed edges. */
Test(import, text_and_pairs_directed)
{
	ogb g;
	make_ogb(&g, 150, 800, 3, false);
	int64_t *a, *b, e = listed_edges(&g, &a, &b), n = 150;
	/* reference */
	int64_t *pairs = malloc((size_t)(2 * e) * sizeof *pairs), k = 0;
	for (int64_t i = 0; i < e; i++)
		if (a[i] != b[i])
			pairs[2 * k] = a[i], pairs[2 * k + 1] = b[i], k++;
	qsort(pairs, (size_t)k, 2 * sizeof *pairs, cmp_pair);
	int64_t u = 0;
	for (int64_t i = 0; i < k; i++)
		if (!u || cmp_pair(pairs + 2 * i, pairs + 2 * (u - 1)))
			pairs[2 * u] = pairs[2 * i], pairs[2 * u + 1] = pairs[2 * i + 1], u++;
	buf csv = {0}, tsv = {0}, blank = {0};
	bprintf(&csv, "# src,dst\n");
	bprintf(&blank, "# a comment\n\n");
	int32_t *p32 = malloc((size_t)(2 * e) * sizeof *p32);
	for (int64_t i = 0; i < e; i++) {
		bprintf(&csv, "%lld,%lld\n", (long long)a[i], (long long)b[i]);
		bprintf(&tsv, "%lld\t%lld\r\n", (long long)a[i], (long long)b[i]);
		bprintf(&blank, "  %lld   %lld  \n%s", (long long)a[i], (long long)b[i], i % 100 == 0 ? "# more\n" : "");
		p32[2 * i] = (int32_t)a[i], p32[2 * i + 1] = (int32_t)b[i];
	}
	buf z = gz(tsv.p, tsv.n);
	char *f1 = tu_path(dir, "e.csv"), *f2 = tu_path(dir, "e.tsv.gz"), *f3 = tu_path(dir, "e.txt");
	write_file(f1, csv.p, csv.n);
	write_file(f2, z.p, z.n);
	write_file(f3, blank.p, blank.n);
	int64_t sp[2] = {e, 2};
	char *f4 = save_npy("p.npy", "<i4", 2, sp, p32, (size_t)(2 * e) * 4);
	const char *files[] = {f1, f2, f3, f4};
	for (int t = 0; t < 4; t++) {
		char *out = tu_path(dir, "out%d", t), *err = NULL;
		int rc = tu_sh(NULL, &err, "%s import %s --edges %s --num-nodes %lld --quiet", tu_burrow(), out, files[t],
			       (long long)n);
		cr_assert_eq(rc, 0, "%s: %s", files[t], err);
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
		const burrow_csr *gr = burrow_dataset_graph(ds);
		cr_assert(!burrow_dataset_get_info(ds)->symmetric);
		cr_assert_eq(gr->num_edges, u, "%s: %lld entries, expected %lld", files[t], (long long)gr->num_edges,
			     (long long)u);
		for (int64_t j = 0, v = 0; j < u; j++) {
			while (gr->indptr[v + 1] <= j)
				v++;
			cr_assert(v == pairs[2 * j] && burrow_csr_index(gr, j) == pairs[2 * j + 1], "%s: entry %lld", files[t],
				  (long long)j);
		}
		burrow_dataset_close(ds);
		free(out), free(err);
	}
	free(a), free(b), free(pairs), free(p32), free(csv.p), free(tsv.p), free(blank.p), free(z.p);
	free(f1), free(f2), free(f3), free(f4);
	free_ogb(&g);
}

Test(import, refusals_leave_nothing)
{
	char *out = tu_path(dir, "out"), *err = NULL;
	char *edges = tu_path(dir, "e.txt"), *feat;
	write_file(edges, "0 1\n1 2\n2 9\n", 12);
	int64_t sf[2] = {9, 2};
	float f[18] = {0};
	feat = save_npy("f.npy", "<f4", 2, sf, f, sizeof f);
	struct {
		const char *args, *want1, *want2;
	} cases[] = {
		{"--num-nodes 5", "e.txt:3:", "node id 9 out of range [0, 5)"},
		{"--num-nodes 10 --features FEAT", "f.npy", "[10, D]"},
		{"--num-nodes 10 --labels /nonexistent/l.npy", "/nonexistent/l.npy", "No such file"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char args[512];
		const char *at = strstr(cases[i].args, "FEAT");
		if (at)
			snprintf(args, sizeof args, "%.*s%s", (int)(at - cases[i].args), cases[i].args, feat);
		else
			snprintf(args, sizeof args, "%s", cases[i].args);
		int rc = tu_sh(NULL, &err, "%s import %s --edges %s %s", tu_burrow(), out, edges, args);
		cr_assert_eq(rc, 1, "%s: exit %d: %s", args, rc, err);
		cr_assert_eq(lines(err), 1, "%s", err);
		cr_assert(strstr(err, cases[i].want1) && strstr(err, cases[i].want2), "'%s' lacks '%s' or '%s'", err,
			  cases[i].want1, cases[i].want2);
		cr_assert(!tu_exists(out));
		cr_assert_eq(entries(dir), 2, "leftovers in %s (only e.txt and f.npy belong)", dir);
		free(err);
	}
	free(out), free(edges), free(feat);
}

/* A random edge list with self-loops, repeats and reverse pairs, written as "src,dst" text
 * with a header: without --num-nodes N is the largest id + 1, and the summary's counts are
 * those of a slow reference, directed and undirected. */
static int cmp_i64_pair(const void *x, const void *y)
{
	const int64_t *a = x, *b = y;
	return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : 0;
}

/* distinct pairs among the non-loops of a[i] -> b[i] (unordered when undirected) */
static int64_t ref_distinct(const int64_t *a, const int64_t *b, int64_t e, bool undirected, int64_t *loops)
{
	int64_t *p = malloc((size_t)(2 * e + 2) * sizeof *p), k = 0, u = 0;
	*loops = 0;
	for (int64_t i = 0; i < e; i++) {
		if (a[i] == b[i]) {
			++*loops;
			continue;
		}
		const bool swap = undirected && a[i] > b[i];
		p[2 * k] = swap ? b[i] : a[i], p[2 * k + 1] = swap ? a[i] : b[i], k++;
	}
	qsort(p, (size_t)k, 2 * sizeof *p, cmp_i64_pair);
	for (int64_t i = 0; i < k; i++)
		u += i == 0 || cmp_i64_pair(p + 2 * i, p + 2 * (i - 1)) != 0;
	free(p);
	return u;
}

Test(import, a_header_no_node_count_and_what_was_dropped)
{
	const int64_t e = 3000;
	int64_t *a = malloc(e * sizeof *a), *b = malloc(e * sizeof *b), top = -1;
	uint64_t x = 12345;
	buf csv = {0};
	bprintf(&csv, "src,dst\n");
	for (int64_t i = 0; i < e; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		a[i] = (int64_t)((x >> 33) % 400);
		b[i] = i % 17 == 0 ? a[i] : (int64_t)((x >> 13) % 400); /* some loops; repeats by chance */
		if (i % 23 == 0 && i)
			a[i] = b[i - 1], b[i] = a[i - 1]; /* reverse pairs */
		top = a[i] > top ? a[i] : top;
		top = b[i] > top ? b[i] : top;
		bprintf(&csv, "%lld,%lld\n", (long long)a[i], (long long)b[i]);
	}
	char *f = tu_path(dir, "e.csv");
	write_file(f, csv.p, csv.n);
	for (int undirected = 0; undirected < 2; undirected++) {
		int64_t loops, u = ref_distinct(a, b, e, undirected, &loops);
		char *out = tu_path(dir, "out%d", undirected), *err = NULL;
		int rc = tu_sh(NULL, &err, "%s import %s --edges %s%s", tu_burrow(), out, f, undirected ? " --undirected" : "");
		cr_assert_eq(rc, 0, "%s", err);
		char want[200];
		snprintf(want, sizeof want, "read 3,000 edges (after a header line); dropped %lld self-loops and %lld repeated edges",
			 (long long)loops, (long long)(e - loops - u));
		cr_assert(strstr(err, want), "want '%s' in: %s", want, err);
		cr_assert(strstr(err, "(largest id + 1)"), "%s", err);
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_dataset_get_info(ds)->num_nodes, top + 1);
		cr_assert_eq(burrow_dataset_get_info(ds)->num_edges, undirected ? 2 * u : u);
		burrow_dataset_close(ds);
		/* the library says the same in its stats */
		burrow_import_stats st = {.size = sizeof st};
		burrow_import_opts o;
		burrow_import_defaults(&o);
		o.edges = f;
		o.undirected = undirected;
		o.overwrite = true;
		o.stats = &st;
		cr_assert_eq(burrow_import(out, &o), 0, "%s", burrow_last_error());
		cr_assert(st.header_skipped && st.num_nodes_inferred && st.num_nodes == top + 1);
		cr_assert(st.edges_read == e && st.self_loops == loops && st.duplicates == e - loops - u);
		cr_assert_eq(st.entries, undirected ? 2 * u : u);
		free(out), free(err);
	}
	/* features with more rows than the largest id + 1: N is theirs (isolated nodes at the end) */
	int64_t sf[2] = {450, 1};
	float *feat = calloc(450, sizeof *feat);
	char *pf = save_npy("f.npy", "<f4", 2, sf, feat, 450 * sizeof *feat), *out = tu_path(dir, "outf"), *err = NULL;
	cr_assert_eq(tu_sh(NULL, &err, "%s import %s --edges %s --features %s --quiet", tu_burrow(), out, f, pf), 0, "%s", err);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_get_info(ds)->num_nodes, 450);
	burrow_dataset_close(ds);
	free(err);
	/* --header skips a first line of numbers too: the edge on it is gone */
	char *g = tu_path(dir, "g.txt"), *og = tu_path(dir, "outg");
	write_file(g, "0 5\n1 2\n", 8);
	cr_assert_eq(tu_sh(NULL, &err, "%s import %s --edges %s --header", tu_burrow(), og, g), 0, "%s", err);
	cr_assert(strstr(err, "read 1 edges (after a header line)"), "%s", err);
	cr_assert_eq(burrow_dataset_open(&ds, og), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_get_info(ds)->num_nodes, 3);
	burrow_dataset_close(ds);
	free(err);
	/* a header line anywhere else is still a bad line, named */
	char *h = tu_path(dir, "h.txt"), *oh = tu_path(dir, "outh");
	write_file(h, "0 1\nsrc dst\n", 12);
	cr_assert_eq(tu_sh(NULL, &err, "%s import %s --edges %s", tu_burrow(), oh, h), 1);
	cr_assert(strstr(err, "h.txt:2:"), "%s", err);
	cr_assert(!tu_exists(oh));
	free(err);
	free(a), free(b), free(csv.p), free(f), free(feat), free(pf), free(out), free(g), free(og), free(h), free(oh);
}

/* --split: sizes round(a M), round(b M), the rest (or round(c M)); the labeled nodes only,
 * disjoint, sorted; the same seed, the same split. */
Test(import, random_split_sizes_and_seed)
{
	const int64_t n = 1001;
	int32_t *y = malloc(n * sizeof *y);
	int64_t m = 0;
	for (int64_t v = 0; v < n; v++) {
		y[v] = v % 7 == 3 ? -1 : (int32_t)(v % 5);
		m += y[v] >= 0;
	}
	const double fr[2][3] = {{0.6, 0.2, 0.2}, {0.5, 0.1, 0.1}};
	for (int c = 0; c < 2; c++) {
		int64_t *ids = malloc(n * sizeof *ids), *again = malloc(n * sizeof *again), *other = malloc(n * sizeof *other);
		int64_t sz[3], sz2[3], sz3[3];
		cr_assert_eq(burrow_split_random(y, n, fr[c], 9, ids, sz), 0, "%s", burrow_last_error());
		const int64_t want0 = llround(fr[c][0] * m), want1 = llround(fr[c][1] * m);
		const int64_t want2 = c == 0 ? m - want0 - want1 : llround(fr[c][2] * m);
		cr_assert(sz[0] == want0 && sz[1] == want1 && sz[2] == want2, "%lld %lld %lld of %lld", (long long)sz[0],
			  (long long)sz[1], (long long)sz[2], (long long)m);
		uint8_t *seen = calloc(n, 1);
		for (int64_t s = 0, at = 0; s < 3; at += sz[s++])
			for (int64_t i = 0; i < sz[s]; i++) {
				const int64_t v = ids[at + i];
				cr_assert(v >= 0 && v < n && y[v] >= 0 && !seen[v], "node %lld", (long long)v);
				seen[v] = 1;
				cr_assert(i == 0 || ids[at + i - 1] < v, "split %lld not sorted", (long long)s);
			}
		cr_assert_eq(burrow_split_random(y, n, fr[c], 9, again, sz2), 0);
		cr_assert(!memcmp(ids, again, (size_t)(sz[0] + sz[1] + sz[2]) * sizeof *ids));
		cr_assert_eq(burrow_split_random(y, n, fr[c], 10, other, sz3), 0);
		cr_assert(memcmp(ids, other, (size_t)sz[0] * sizeof *ids), "another seed, another split");
		free(ids), free(again), free(other), free(seen);
	}
	const double bad[3] = {0.7, 0.5, 0.1};
	int64_t ids[1], sz[3];
	cr_assert_eq(burrow_split_random(NULL, 1, bad, 0, ids, sz), BURROW_E_INVAL);
	/* from the command line: the sizes said and written, equal for one seed */
	int64_t sl[1] = {n};
	char *pl = save_npy("l.npy", "<i4", 1, sl, y, n * sizeof *y), *f = tu_path(dir, "e.txt");
	write_file(f, "0 1000\n", 7);
	char *o1 = tu_path(dir, "o1"), *o2 = tu_path(dir, "o2"), *err;
	for (int k = 0; k < 2; k++) {
		cr_assert_eq(tu_sh(NULL, &err, "%s import %s --edges %s --labels %s --split 0.6,0.2,0.2 --seed 4", tu_burrow(),
				   k ? o2 : o1, f, pl),
			     0, "%s", err);
		char want[128];
		const int64_t t = llround(0.6 * m), v = llround(0.2 * m);
		snprintf(want, sizeof want, "split (random): train %lld, valid %lld, test %lld nodes", (long long)t, (long long)v,
			 (long long)(m - t - v));
		cr_assert(strstr(err, want), "want '%s' in: %s", want, err);
		free(err);
	}
	const char *names[3] = {"train", "valid", "test"};
	for (int s = 0; s < 3; s++) {
		char *a = tu_path(o1, "split/%s.npy", names[s]), *b = tu_path(o2, "split/%s.npy", names[s]);
		size_t la, lb;
		char *da = tu_read(a, &la), *db = tu_read(b, &lb);
		cr_assert(da && db && la == lb && !memcmp(da, db, la), "%s differs", names[s]);
		free(a), free(b), free(da), free(db);
	}
	cr_assert_eq(tu_sh(NULL, &err, "%s import %s/o3 --edges %s --split 0.6,0.2 --quiet", tu_burrow(), dir, f), 2);
	cr_assert(strstr(err, "--split wants three fractions"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s import %s/o3 --edges %s --split 0.6,0.2,0.2 --train %s --valid %s --test %s",
			   tu_burrow(), dir, f, pl, pl, pl),
		     2);
	cr_assert(strstr(err, "not both"), "%s", err);
	free(err);
	free(y), free(pl), free(f), free(o1), free(o2);
}

/* ---------------------------------------------------------------- failing allocations */

/* The timeout only catches a hang: a loop that fails each of thousands of allocations in
 * turn runs prep once per allocation, which took 60 s on two cores shared with other
 * builds (and several times that under the sanitizers). */
TestSuite(faults, .init = setup, .fini = teardown, .timeout = 240);

/* Make each allocation of a prep fail in turn: every failure must be an error that
 * leaves no dataset, no temporary directory and no memory behind; the loop ends when
 * a prep succeeds with no failure left to inject. */
static void every_allocation_fails(const char *zip, size_t mem)
{
	char *root = tu_path(dir, "root"), *out = tu_path(root, "o");
	tu_rmrf(root);
	burrow_prep_opts o;
	burrow_prep_defaults(&o);
	o.root = root;
	o.out = out;
	o.mem_bytes = mem;
	o.download = false;
	int k;
	for (k = 0; k < 5000; k++) {
		size_t before, after;
		burrow_mem_stats(&before, NULL);
		bw_mem_fail_after(k);
		int st = burrow_prep(zip, &o, NULL, 0);
		bw_mem_fail_after(-1);
		burrow_mem_stats(&after, NULL);
		cr_assert_eq(after, before, "allocation %d failed: %zu bytes not freed", k, after - before);
		if (st == 0)
			break;
		cr_assert_lt(st, 0);
		cr_assert(!tu_exists(out), "allocation %d failed (%s) but %s exists", k, burrow_last_error(), out);
		cr_assert(entries(root) <= 0, "allocation %d failed: leftovers in %s", k, root);
	}
	cr_assert_lt(k, 5000);
	cr_assert_gt(k, 10, "only %d allocations: is the hook working?", k);
	free(root);
	free(out);
}

Test(faults, prep_csv_in_memory_and_spilled)
{
	ogb g;
	make_ogb(&g, 120, 600, 3, false);
	char *zip = tu_path(dir, "f.zip");
	write_ogb_zip(zip, "f", "random", &g, NULL, 0);
	every_allocation_fails(zip, 0);
	every_allocation_fails(zip, 2048);
	free(zip);
	free_ogb(&g);
}

Test(faults, prep_npz)
{
	ogb g;
	make_ogb(&g, 100, 500, 3, true);
	expect x;
	expect_from(&x, &g);
	char *zip = tu_path(dir, "p.zip");
	write_npz_zip(zip, &g, &x, NPZ_DEFLATED, false, 1);
	every_allocation_fails(zip, 2048);
	free(zip);
	free_expect(&x);
	free_ogb(&g);
}

/* An array whose header promises more rows than the member holds. */
Test(npz, short_array_is_refused)
{
	int64_t shape[2] = {2, 1000}, one = 1, nn = 50, data[200] = {0};
	buf m[2];
	m[0] = npy_bytes("<i8", 2, shape, data, sizeof data, 1);
	m[1] = npy_bytes("<i8", 1, &one, &nn, 8, 1);
	const char *inner[] = {"edge_index.npy", "num_nodes_list.npy"};
	char *npz = tu_path(dir, "data.npz"), *zip = tu_path(dir, "short.zip"), *root = tu_path(dir, "root"), *err = NULL;
	write_zip(npz, 2, inner, m, false);
	buf outer[2];
	size_t len;
	outer[0].p = tu_read(npz, &len), outer[0].n = len;
	outer[1].p = strdup("x"), outer[1].n = 1;
	const char *names[] = {"s/raw/data.npz", "s/split/time/train.csv.gz"};
	write_zip(zip, 2, names, outer, false);
	int rc = tu_sh(NULL, &err, "%s prep %s --root %s", tu_burrow(), zip, root);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, "short.zip:s/raw/data.npz:edge_index.npy") && strstr(err, "its header's shape needs"), "%s",
		  err);
	cr_assert(entries(root) <= 0);
	free(m[0].p), free(m[1].p), free(outer[0].p), free(outer[1].p), free(npz), free(zip), free(root), free(err);
}
