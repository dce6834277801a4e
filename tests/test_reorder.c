/* test_reorder.c: burrow reorder: the output mapped back through its orig_ids gives the input bit for bit
 * (every array, read with burrow_npy_read and rebuilt by a slow reference), the orders are permutations,
 * refusals, and training on Cora reordered gives the same accuracy distribution. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "../graph/npy.h"
#include "util.h"
#include "link_util.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(reorder, .init = setup, .fini = teardown, .timeout = 300);

/* ---------------------------------------------------------------- the reference */

static int read_arr(const char *d, const char *rel, burrow_npy_array *a)
{
	char *p = tu_path(d, "%s", rel);
	int st = tu_exists(p) ? burrow_npy_read(p, a) : 1;
	cr_assert(st >= 0, "%s: %s", p, burrow_last_error());
	free(p);
	return st; /* 1: absent */
}

static size_t row_bytes(const burrow_npy_array *a)
{
	size_t b = burrow_dtype_size(a->dtype);
	for (int k = 1; k < a->ndim; k++)
		b *= (size_t)a->shape[k];
	return b;
}

static int64_t idx(const burrow_npy_array *a, int64_t j)
{
	return a->dtype == BURROW_DTYPE_I32 ? ((int32_t *)a->data)[j] : ((int64_t *)a->data)[j];
}

static int cmp_i64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* rel of out, row i moved to row p[i], equals rel of in byte for byte (both absent is fine). */
static void check_rows_back(const char *in, const char *out, const char *rel, const int64_t *p, int64_t n)
{
	burrow_npy_array a = {0}, b = {0};
	const int ra = read_arr(in, rel, &a), rb = read_arr(out, rel, &b);
	cr_assert_eq(ra, rb, "%s: present in one dataset only", rel);
	if (ra)
		return;
	cr_assert(a.dtype == b.dtype && a.ndim == b.ndim && a.shape[0] == n && b.shape[0] == n, "%s: shape", rel);
	const size_t rb_ = row_bytes(&a);
	char *back = malloc((size_t)n * rb_ + 1);
	for (int64_t i = 0; i < n; i++)
		memcpy(back + (size_t)p[i] * rb_, (char *)b.data + (size_t)i * rb_, rb_);
	cr_assert(memcmp(back, a.data, (size_t)n * rb_) == 0, "%s: mapped back differs", rel);
	free(back);
	burrow_npy_free(&a);
	burrow_npy_free(&b);
}

/* A split file of out, ids mapped back and sorted, equals in's (which Burrow wrote sorted). */
static void check_split_back(const char *in, const char *out, const char *rel, const int64_t *p)
{
	burrow_npy_array a = {0}, b = {0};
	const int ra = read_arr(in, rel, &a), rb = read_arr(out, rel, &b);
	cr_assert_eq(ra, rb, "%s: present in one dataset only", rel);
	if (ra)
		return;
	cr_assert_eq(a.count, b.count, "%s: count", rel);
	int64_t *x = b.data, *y = a.data;
	for (int64_t q = 0; q + 1 < b.count; q++)
		cr_assert(x[q] < x[q + 1], "%s: not sorted at %lld", rel, (long long)q);
	for (int64_t q = 0; q < b.count; q++)
		x[q] = p[x[q]];
	qsort(x, (size_t)b.count, sizeof *x, cmp_i64);
	for (int64_t q = 0; q + 1 < a.count; q++)
		cr_assert(y[q] < y[q + 1], "%s: the input's is not sorted (the test assumes it)", rel);
	cr_assert(memcmp(x, y, (size_t)a.count * 8) == 0, "%s: mapped back differs", rel);
	burrow_npy_free(&a);
	burrow_npy_free(&b);
}

/* An edge split file: ids mapped back in place (rows kept), or bytes equal. */
static void check_es_back(const char *in, const char *out, const char *rel, const int64_t *p, bool ids)
{
	burrow_npy_array a = {0}, b = {0};
	const int ra = read_arr(in, rel, &a), rb = read_arr(out, rel, &b);
	cr_assert_eq(ra, rb, "%s: present in one dataset only", rel);
	if (ra)
		return;
	cr_assert_eq(a.count, b.count, "%s: count", rel);
	for (int64_t q = 0; ids && q < b.count; q++)
		((int64_t *)b.data)[q] = p[((int64_t *)b.data)[q]];
	cr_assert(memcmp(a.data, b.data, (size_t)a.count * burrow_dtype_size(a.dtype)) == 0, "%s: differs", rel);
	burrow_npy_free(&a);
	burrow_npy_free(&b);
}

/* The graph and edge features of out mapped back: each output row, its ids through p and stably
 * sorted (so repeats keep their order), placed at row p[i], must give in's indptr, indices
 * and edge_features bit for bit; every output row sorted. */
static void check_graph_back(const char *in, const char *out, const int64_t *p, const int64_t *inv, int64_t n)
{
	burrow_npy_array ip[2] = {{0}}, ix[2] = {{0}}, ef[2] = {{0}};
	const char *d[2] = {in, out};
	for (int k = 0; k < 2; k++) {
		read_arr(d[k], "indptr.npy", &ip[k]);
		read_arr(d[k], "indices.npy", &ix[k]);
	}
	const int ea = read_arr(in, "edge_features.npy", &ef[0]), eb = read_arr(out, "edge_features.npy", &ef[1]);
	cr_assert_eq(ea, eb, "edge_features.npy in one dataset only");
	const int64_t *pi = ip[0].data, *po = ip[1].data, m = pi[n];
	cr_assert_eq(ix[0].dtype, ix[1].dtype);
	int64_t *bp = calloc((size_t)n + 1, sizeof *bp), *bi = malloc((size_t)m * 8 + 8), *bj = malloc((size_t)m * 8 + 8);
	for (int64_t v = 0; v < n; v++)
		bp[v + 1] = bp[v] + po[inv[v] + 1] - po[inv[v]];
	cr_assert(memcmp(bp, pi, (size_t)(n + 1) * 8) == 0, "indptr.npy mapped back differs");
	for (int64_t v = 0; v < n; v++) {
		const int64_t i = inv[v], lo = po[i], d = po[i + 1] - lo, at = bp[v];
		for (int64_t q = 0; q < d; q++) {
			if (q)
				cr_assert(idx(&ix[1], lo + q - 1) <= idx(&ix[1], lo + q), "output row %lld not sorted", (long long)i);
			int64_t x = p[idx(&ix[1], lo + q)], j = lo + q, k = at + q; /* stable insertion */
			for (; k > at && bi[k - 1] > x; k--) {
				bi[k] = bi[k - 1];
				bj[k] = bj[k - 1];
			}
			bi[k] = x;
			bj[k] = j;
		}
	}
	for (int64_t j = 0; j < m; j++)
		cr_assert_eq(bi[j], idx(&ix[0], j), "indices.npy mapped back differs at entry %lld", (long long)j);
	if (!ea) {
		const size_t rb = row_bytes(&ef[0]);
		char *back = malloc((size_t)m * rb + 1);
		for (int64_t j = 0; j < m; j++)
			memcpy(back + (size_t)j * rb, (char *)ef[1].data + (size_t)bj[j] * rb, rb);
		cr_assert(memcmp(back, ef[0].data, (size_t)m * rb) == 0, "edge_features.npy mapped back differs");
		free(back);
	}
	free(bp);
	free(bi);
	free(bj);
	for (int k = 0; k < 2; k++) {
		burrow_npy_free(&ip[k]);
		burrow_npy_free(&ix[k]);
		burrow_npy_free(&ef[k]);
	}
}

/* Everything of out mapped back through p (NULL: out's orig_ids.npy, for an input without its own)
 * equals in; named: the named splits to check (NULL-terminated, may be NULL). */
static void check_back(const char *in, const char *out, const int64_t *perm, const char *const *named)
{
	burrow_dataset *a, *b;
	cr_assert_eq(burrow_dataset_open(&a, in), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_open(&b, out), 0, "%s", burrow_last_error());
	const burrow_dataset_info *ia = burrow_dataset_get_info(a), *ib = burrow_dataset_get_info(b);
	const int64_t n = ia->num_nodes;
	cr_assert(ib->num_nodes == n && ib->num_edges == ia->num_edges && ib->feat_dim == ia->feat_dim &&
		  ib->num_classes == ia->num_classes && ib->num_tasks == ia->num_tasks && ib->symmetric == ia->symmetric &&
		  ib->edge_feat_dim == ia->edge_feat_dim && ib->num_train == ia->num_train && ib->index_width == ia->index_width);
	burrow_npy_array o = {0};
	const int64_t *p = perm;
	if (!p) {
		cr_assert_eq(read_arr(out, "orig_ids.npy", &o), 0, "no orig_ids.npy in the output");
		cr_assert_eq(o.count, n);
		p = o.data;
	}
	int64_t *inv = malloc((size_t)n * sizeof *inv + 8);
	for (int64_t v = 0; v < n; v++)
		inv[v] = -1;
	for (int64_t i = 0; i < n; i++) {
		cr_assert(p[i] >= 0 && p[i] < n && inv[p[i]] < 0, "not a permutation at %lld", (long long)i);
		inv[p[i]] = i;
	}
	check_graph_back(in, out, p, inv, n);
	check_rows_back(in, out, "features.npy", p, n);
	check_rows_back(in, out, "labels.npy", p, n);
	static const char *const sp[3] = {"train", "valid", "test"};
	for (int s = 0; s < 3; s++) {
		char rel[160];
		snprintf(rel, sizeof rel, "split/%s.npy", sp[s]);
		check_split_back(in, out, rel, p);
		for (int k = 0; named && named[k]; k++) {
			snprintf(rel, sizeof rel, "split/%s/%s.npy", named[k], sp[s]);
			check_split_back(in, out, rel, p);
		}
		static const char *const es[5] = {"pos", "neg", "neg_dst", "weight", "year"};
		for (int k = 0; k < 5; k++) {
			snprintf(rel, sizeof rel, "edge_split/%s_%s.npy", sp[s], es[k]);
			check_es_back(in, out, rel, p, k < 3);
		}
	}
	free(inv);
	burrow_npy_free(&o);
	burrow_dataset_close(a);
	burrow_dataset_close(b);
}

static void reorder(const char *in, const char *out, int order, const int64_t *perm)
{
	burrow_reorder_opts o;
	burrow_reorder_defaults(&o);
	o.order = order;
	o.perm = perm;
	o.mem_bytes = 64 << 20;
	cr_assert_eq(burrow_reorder(in, out, &o), 0, "%s", burrow_last_error());
	char *err = NULL;
	const int rc = tu_sh(NULL, &err, "%s info '%s' --verify", tu_burrow(), out);
	cr_assert_eq(rc, 0, "info --verify: %s", err);
	free(err);
}

/* A permutation of [0, n) drawn from seed. */
static int64_t *shuffled(int64_t n, uint64_t seed)
{
	int64_t *p = malloc((size_t)n * sizeof *p + 8);
	for (int64_t i = 0; i < n; i++)
		p[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		const int64_t j = (int64_t)(tu_link_rng(&seed) % (uint64_t)(i + 1)), t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

static void same_dataset(const char *a, const char *b);

/* ---------------------------------------------------------------- the orders */

Test(reorder, orders_are_permutations_hubs_lead)
{
	char *src = tu_path(dir, "csbm");
	burrow_gen_opts go;
	burrow_gen_defaults(&go, BURROW_GEN_CSBM);
	go.num_nodes = 3000;
	go.feat_dim = 4;
	cr_assert_eq(burrow_gen(&go, src), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, src), 0, "%s", burrow_last_error());
	const burrow_csr *g = burrow_dataset_graph(ds);
	const int64_t n = g->num_nodes;
	int64_t *p = malloc((size_t)n * sizeof *p), *q = malloc((size_t)n * sizeof *q), maxv = 0;
	char *seen = malloc((size_t)n);
	for (int64_t v = 0; v < n; v++)
		if (g->indptr[v + 1] - g->indptr[v] > g->indptr[maxv + 1] - g->indptr[maxv])
			maxv = v;
	for (int order = 0; order < 4; order++) {
		cr_assert_eq(burrow_order_compute(g, order, 7, p), 0, "%s", burrow_last_error());
		memset(seen, 0, (size_t)n);
		for (int64_t i = 0; i < n; i++) {
			cr_assert(p[i] >= 0 && p[i] < n && !seen[p[i]], "%s: not a permutation at %lld", burrow_order_name(order),
				  (long long)i);
			seen[p[i]] = 1;
		}
		if (order == BURROW_ORDER_DEGREE)
			for (int64_t i = 0; i + 1 < n; i++) {
				const int64_t a = g->indptr[p[i] + 1] - g->indptr[p[i]], b = g->indptr[p[i + 1] + 1] - g->indptr[p[i + 1]];
				cr_assert(a > b || (a == b && p[i] < p[i + 1]), "degree order breaks at %lld", (long long)i);
			}
		if (order == BURROW_ORDER_DEGREE || order == BURROW_ORDER_BFS)
			cr_assert_eq(p[0], maxv, "%s: the first node is not the highest-degree one", burrow_order_name(order));
		if (order == BURROW_ORDER_RANDOM) {
			cr_assert_eq(burrow_order_compute(g, order, 7, q), 0);
			cr_assert(memcmp(p, q, (size_t)n * sizeof *p) == 0, "the same seed drew another order");
			cr_assert_eq(burrow_order_compute(g, order, 8, q), 0);
			cr_assert(memcmp(p, q, (size_t)n * sizeof *p) != 0, "another seed drew the same order");
		}
	}
	int o;
	cr_assert_eq(burrow_order_parse("rcm", &o), 0);
	cr_assert_eq(o, BURROW_ORDER_RCM);
	cr_assert_lt(burrow_order_parse("metis", &o), 0);
	free(p);
	free(q);
	free(seen);
	burrow_dataset_close(ds);
	free(src);
}

/* ---------------------------------------------------------------- Cora */

static char *prep_cora(void)
{
	const char *shared = tu_datasets();
	char *zip = shared ? tu_path(shared, "ogbn-cora.zip") : NULL;
	if (!zip || !tu_exists(zip)) {
		free(zip);
		return NULL;
	}
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "%s prep ogbn-cora --root '%s' --url 'file://%s' --quiet", tu_burrow(), dir, zip);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	free(zip);
	return tu_path(dir, "ogbn-cora");
}

Test(reorder, cora_maps_back_bit_for_bit)
{
	char *cora = prep_cora();
	if (!cora)
		cr_skip_test("ogbn-cora.zip is absent (BURROW_DATASETS)");
	for (int order = 0; order < 3; order++) {
		char *out = tu_path(dir, "cora-%s", burrow_order_name(order));
		reorder(cora, out, order, NULL);
		check_back(cora, out, NULL, NULL);
		free(out);
	}
	char *out = tu_path(dir, "cora-cli"), *err = NULL;
	int rc = tu_sh(NULL, &err, "%s reorder '%s' --out '%s' --order rcm --quiet", tu_burrow(), cora, out);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	check_back(cora, out, NULL, NULL);
	rc = tu_sh(NULL, &err, "%s reorder '%s' --out '%s' --quiet", tu_burrow(), cora, out);
	cr_assert_eq(rc, 1, "an existing output without --force: exit %d", rc);
	cr_assert(strstr(err, "--force"), "%s", err);
	free(err);
	rc = tu_sh(NULL, &err, "%s reorder '%s' --out '%s' --order metis --quiet", tu_burrow(), cora, out);
	cr_assert_eq(rc, 2, "an unknown order: exit %d", rc);
	free(err);
	/* prep --order: the same bytes as prep, then reorder (but for the source's "dataset") */
	char *direct = tu_path(dir, "cora-prep-rcm"), *zip = tu_path(tu_datasets(), "ogbn-cora.zip");
	rc = tu_sh(NULL, &err, "%s prep ogbn-cora --root '%s' --out '%s' --url 'file://%s' --order rcm --quiet", tu_burrow(),
		   dir, direct, zip);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	same_dataset(direct, out);
	free(direct);
	free(zip);
	free(out);
	free(cora);
}

/* Mean test accuracy over 5 seeds of a short mini-batch SAGE run, and the runs' spread. */
static void cora_acc(const char *path, double *mean, double *lo, double *hi)
{
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, path), 0, "%s", burrow_last_error());
	*mean = 0;
	*lo = 1;
	*hi = 0;
	for (uint64_t seed = 0; seed < 5; seed++) {
		burrow_train_opts o;
		burrow_train_defaults(&o);
		o.seed = seed;
		o.threads = 1;
		o.hidden = 64;
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		burrow_eval_stats ev = {.size = sizeof ev};
		for (int e = 0; e < 10; e++) {
			burrow_epoch_stats es = {.size = sizeof es};
			cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		}
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		*mean += ev.test_acc / 5;
		*lo = ev.test_acc < *lo ? ev.test_acc : *lo;
		*hi = ev.test_acc > *hi ? ev.test_acc : *hi;
		burrow_trainer_close(t);
	}
	burrow_dataset_close(ds);
}

Test(reorder, cora_accuracy_same_distribution)
{
	char *cora = prep_cora();
	if (!cora)
		cr_skip_test("ogbn-cora.zip is absent (BURROW_DATASETS)");
	char *out = tu_path(dir, "cora-bfs");
	reorder(cora, out, BURROW_ORDER_BFS, NULL);
	double m[2], lo[2], hi[2];
	cora_acc(cora, &m[0], &lo[0], &hi[0]);
	cora_acc(out, &m[1], &lo[1], &hi[1]);
	cr_log_info("cora test accuracy over 5 seeds: input mean %.4f [%.4f, %.4f], reordered mean %.4f [%.4f, %.4f]", m[0],
		    lo[0], hi[0], m[1], lo[1], hi[1]);
	cr_assert(m[0] > 0.6 && m[1] > 0.6, "training failed: %.4f, %.4f", m[0], m[1]);
	cr_assert(m[1] > m[0] - 0.02 && m[1] < m[0] + 0.02, "means differ: %.4f input, %.4f reordered", m[0], m[1]);
	free(out);
	free(cora);
}

/* ---------------------------------------------------------------- edge features, multi-label, named splits, orig_ids */

#define EDIM 3
#define TASKS 4

/* meta.json of d with `keys` (a JSON fragment: "a": 1, ...) added. */
static void meta_add(const char *d, const char *keys)
{
	char *path = tu_path(d, "meta.json");
	size_t len;
	char *text = tu_read(path, &len), *end = strrchr(text, '}');
	cr_assert(end);
	FILE *f = fopen(path, "w");
	fprintf(f, "%.*s, %s}\n", (int)(end - text), text, keys);
	fclose(f);
	free(text);
	free(path);
}

/* A directed graph (repeats and self loops kept) whose edge features name their entry, float32
 * features, multi-label labels, a split, a named split "alt" and orig_ids.npy (7 v + 3). */
static char *make_featured(int64_t n, uint64_t seed)
{
	char *out = tu_path(dir, "ef");
	uint64_t s = seed;
	int64_t *ip = calloc((size_t)n + 1, sizeof *ip);
	for (int64_t v = 0; v < n; v++)
		ip[v + 1] = ip[v] + (v % 11 == 10 ? 0 : 1 + (int64_t)(tu_link_rng(&s) % 6));
	const int64_t m = ip[n];
	int32_t *ind = malloc((size_t)m * sizeof *ind);
	for (int64_t v = 0; v < n; v++) {
		for (int64_t j = ip[v]; j < ip[v + 1]; j++)
			ind[j] = (int32_t)(j % 5 == 0 ? v : (int64_t)(tu_link_rng(&s) % (uint64_t)n) / (j % 3 ? 1 : 2));
		for (int64_t a = ip[v] + 1; a < ip[v + 1]; a++)
			for (int64_t b = a; b > ip[v] && ind[b - 1] > ind[b]; b--) {
				int32_t t = ind[b];
				ind[b] = ind[b - 1];
				ind[b - 1] = t;
			}
	}
	burrow_csr g = {.num_nodes = n, .num_edges = m, .indptr = ip, .indices = ind, .index_width = 4};
	burrow_writer *w;
	cr_assert_eq(burrow_writer_open(&w, out, "ef", NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_graph(w, &g, false), 0, "%s", burrow_last_error());
	float *ef = malloc((size_t)m * EDIM * sizeof *ef);
	for (int64_t j = 0; j < m * EDIM; j++)
		ef[j] = (float)(j * 3 + 1) * 0.5f;
	cr_assert_eq(burrow_writer_put_edge_features(w, ef, m, EDIM, BURROW_DTYPE_F32), 0, "%s", burrow_last_error());
	float *x = malloc((size_t)n * 5 * sizeof *x);
	for (int64_t i = 0; i < n * 5; i++)
		x[i] = (float)i * 0.25f;
	cr_assert_eq(burrow_writer_features_begin(w, n, 5, BURROW_DTYPE_F32), 0);
	cr_assert_eq(burrow_writer_features_append(w, x, n), 0);
	cr_assert_eq(burrow_writer_features_end(w), 0);
	int8_t *y = malloc((size_t)n * TASKS);
	for (int64_t i = 0; i < n * TASKS; i++)
		y[i] = (int8_t)((i * 7 + i / TASKS) % 3 - 1);
	cr_assert_eq(burrow_writer_put_multilabels(w, y, n, TASKS), 0, "%s", burrow_last_error());
	int64_t *tr = malloc((size_t)n * sizeof *tr), nt = 0;
	for (int64_t v = 0; v < n; v += 2)
		tr[nt++] = v;
	cr_assert_eq(burrow_writer_put_split(w, 0, tr, nt), 0);
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	int64_t na = 0, nb = 0;
	char *alt = tu_path(out, "split/alt");
	cr_assert_eq(mkdir(alt, 0755), 0);
	free(alt);
	for (int64_t v = 1; v < n; v += 3)
		tr[na++] = v;
	tu_link_save(out, "split/alt/train.npy", BURROW_DTYPE_I64, 1, (int64_t[1]){na}, tr);
	for (int64_t v = 0; v < n; v += 3)
		tr[nb++] = v;
	tu_link_save(out, "split/alt/test.npy", BURROW_DTYPE_I64, 1, (int64_t[1]){nb}, tr);
	for (int64_t v = 0; v < n; v++)
		tr[v] = 7 * v + 3;
	tu_link_save(out, "orig_ids.npy", BURROW_DTYPE_I64, 1, (int64_t[1]){n}, tr);
	char keys[256];
	snprintf(keys, sizeof keys, "\"named_splits\": {\"alt\": {\"train\": %lld, \"test\": %lld}}, \"orig_ids\": \"orig_ids.npy\"",
		 (long long)na, (long long)nb);
	meta_add(out, keys);
	free(ip);
	free(ind);
	free(ef);
	free(x);
	free(y);
	free(tr);
	return out;
}

Test(reorder, edge_features_multilabels_named_splits_orig_ids)
{
	const int64_t n = 1500;
	char *in = make_featured(n, 11);
	static const char *const named[] = {"alt", NULL};
	for (int round = 0; round < 3; round++) { /* a drawn permutation, then bfs and degree */
		char *out = tu_path(dir, "out-%d", round);
		int64_t *p = round == 0 ? shuffled(n, 5) : malloc((size_t)n * sizeof *p);
		reorder(in, out, round == 1 ? BURROW_ORDER_BFS : BURROW_ORDER_DEGREE, round == 0 ? p : NULL);
		burrow_npy_array o = {0};
		cr_assert_eq(read_arr(out, "orig_ids.npy", &o), 0);
		for (int64_t i = 0; i < n; i++) { /* composed with the input's 7 v + 3 */
			const int64_t *x = o.data;
			cr_assert_eq((x[i] - 3) % 7, 0, "orig_ids[%lld] = %lld is not an input id", (long long)i, (long long)x[i]);
			if (round == 0)
				cr_assert_eq(x[i], 7 * p[i] + 3, "orig_ids[%lld] not composed", (long long)i);
			p[i] = (x[i] - 3) / 7;
		}
		check_back(in, out, p, named);
		burrow_npy_free(&o);
		free(p);
		free(out);
	}
	free(in);
}

Test(reorder, orig_ids_text_follow_their_nodes)
{
	const int64_t n = 300;
	char *in = make_featured(n, 3), *path = tu_path(in, "orig_ids.npy");
	unlink(path);
	free(path);
	path = tu_path(in, "orig_ids.txt");
	FILE *f = fopen(path, "w");
	for (int64_t v = 0; v < n; v++)
		fprintf(f, "node-%lld\n", (long long)(v * 5));
	fclose(f);
	free(path);
	char *meta = tu_path(in, "meta.json");
	size_t len;
	char *text = tu_read(meta, &len), *k = strstr(text, "\"orig_ids.npy\"");
	memcpy(k, "\"orig_ids.txt\"", 14);
	f = fopen(meta, "w");
	fwrite(text, 1, len, f);
	fclose(f);
	char *out = tu_path(dir, "out");
	int64_t *p = shuffled(n, 9);
	reorder(in, out, 0, p);
	path = tu_path(out, "orig_ids.txt");
	char *got = tu_read(path, &len), *line = got;
	cr_assert(got);
	for (int64_t i = 0; i < n; i++) {
		char want[64];
		snprintf(want, sizeof want, "node-%lld\n", (long long)(p[i] * 5));
		cr_assert(!strncmp(line, want, strlen(want)), "line %lld: want %s", (long long)i, want);
		line += strlen(want);
	}
	cr_assert_eq(*line, '\0');
	free(got);
	free(path);
	free(p);
	free(out);
	free(text);
	free(meta);
	free(in);
}

/* ---------------------------------------------------------------- edge splits */

Test(reorder, link_dataset_edge_splits_renamed_in_place)
{
	char *src = tu_path(dir, "csbm");
	burrow_gen_opts go;
	burrow_gen_defaults(&go, BURROW_GEN_CSBM);
	go.num_nodes = 600;
	go.feat_dim = 4;
	go.seed = 5;
	cr_assert_eq(burrow_gen(&go, src), 0, "%s", burrow_last_error());
	static const char *const negs[2] = {"pairs", "per_source"};
	for (int k = 0; k < 2; k++) {
		char *in = tu_path(dir, "link-%s", negs[k]), *out = tu_path(dir, "link-%s-bfs", negs[k]);
		tu_link_cfg cfg = {.frac = {0.8, 0.1, 0.1}, .seed = 9, .neg = negs[k], .num_neg = k ? 20 : 1};
		tu_link_dataset(src, in, &cfg);
		reorder(in, out, BURROW_ORDER_BFS, NULL);
		check_back(in, out, NULL, NULL);
		free(in);
		free(out);
	}
	free(src);
}

/* ---------------------------------------------------------------- refusals */

Test(reorder, refusals_leave_nothing)
{
	char *in = make_featured(200, 1), *out = tu_path(dir, "out");
	burrow_reorder_opts o;
	burrow_reorder_defaults(&o);
	int64_t *p = shuffled(200, 2);
	p[7] = p[8];
	o.perm = p;
	cr_assert_eq(burrow_reorder(in, out, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "not a permutation"), "%s", burrow_last_error());
	cr_assert(!tu_exists(out), "a refused reorder left %s", out);
	o.perm = NULL;
	o.mem_bytes = 1000;
	cr_assert_eq(burrow_reorder(in, out, &o), BURROW_E_NOMEM);
	cr_assert(strstr(burrow_last_error(), "--mem"), "%s", burrow_last_error());
	o.mem_bytes = 0;
	o.overwrite = true;
	cr_assert_lt(burrow_reorder(in, in, &o), 0, "the input replaced by its own output");
	char *h = tu_path(dir, "hsbm");
	burrow_gen_opts go;
	burrow_gen_defaults(&go, BURROW_GEN_HSBM);
	go.num_nodes = 300;
	cr_assert_eq(burrow_gen(&go, h), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_reorder(h, out, NULL), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "typed"), "%s", burrow_last_error());
	cr_assert(!tu_exists(out));
	free(h);
	free(p);
	free(in);
	free(out);
}

/* ---------------------------------------------------------------- --order at gen, prep, import */

/* Entries of d whose name starts with ".<base>.order-" (scratch folders --order left behind). */
static int scratch_left(const char *d)
{
	DIR *x = opendir(d);
	struct dirent *e;
	int k = 0;
	while (x && (e = readdir(x)))
		k += strstr(e->d_name, ".order-") != NULL;
	if (x)
		closedir(x);
	return k;
}

/* a and b hold the same files byte for byte, and the same meta.json but for the "dataset" that
 * `burrow reorder` names in b's source (the --order output's input was a scratch folder). */
static void same_dataset(const char *a, const char *b)
{
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "diff -r -x meta.json '%s' '%s'", a, b);
	cr_assert_eq(rc, 0, "%s and %s differ: %s", a, b, err);
	free(err);
	char *pa = tu_path(a, "meta.json"), *pb = tu_path(b, "meta.json");
	size_t la, lb;
	char *ta = tu_read(pa, &la), *tb = tu_read(pb, &lb);
	cJSON *ja = cJSON_Parse(ta), *jb = cJSON_Parse(tb);
	cr_assert(ja && jb);
	cJSON *ro = cJSON_GetObjectItem(cJSON_GetObjectItem(jb, "source"), "reorder");
	cr_assert(ro, "%s: no source.reorder", pb);
	cJSON_DeleteItemFromObject(ro, "dataset");
	cr_assert(cJSON_Compare(ja, jb, true), "%s:\n%s\n%s:\n%s", pa, ta, pb, tb);
	cJSON_Delete(ja);
	cJSON_Delete(jb);
	free(ta);
	free(tb);
	free(pa);
	free(pb);
}

Test(reorder, gen_order_equals_gen_then_reorder)
{
	static const int kinds[3] = {BURROW_GEN_CSBM, BURROW_GEN_RMAT, BURROW_GEN_PAPERS};
	for (int k = 0; k < 3; k++) {
		const int order = k == 0 ? BURROW_ORDER_BFS : k == 1 ? BURROW_ORDER_RCM : BURROW_ORDER_RANDOM;
		char *plain = tu_path(dir, "plain%d", k), *direct = tu_path(dir, "direct%d", k), *after = tu_path(dir, "after%d", k);
		burrow_gen_opts go;
		burrow_gen_defaults(&go, kinds[k]);
		go.seed = 3;
		go.num_nodes = 2000;
		go.scale = 10;
		go.fraction = 1.0 / 65536;
		go.feat_dim = k == 2 ? go.feat_dim : 6;
		cr_assert_eq(burrow_gen(&go, plain), 0, "%s", burrow_last_error());
		burrow_reorder_opts ro;
		burrow_reorder_defaults(&ro);
		ro.order = order;
		ro.seed = go.seed; /* gen's random order draws from its seed */
		cr_assert_eq(burrow_reorder(plain, after, &ro), 0, "%s", burrow_last_error());
		go.order = order;
		go.mem_bytes = k == 2 ? 64 << 20 : 0;
		cr_assert_eq(burrow_gen(&go, direct), 0, "%s", burrow_last_error());
		same_dataset(direct, after);
		check_back(plain, direct, NULL, NULL);
		cr_assert_eq(scratch_left(dir), 0, "a scratch folder is left in %s", dir);
		free(plain);
		free(direct);
		free(after);
	}
	/* the command: gen --order, the same bytes */
	char *cli = tu_path(dir, "cli"), *after = tu_path(dir, "after0"), *err = NULL;
	int rc = tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 2000 --feat-dim 6 --seed 3 --order bfs --quiet", tu_burrow(),
		       cli);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	same_dataset(cli, after);
	rc = tu_sh(NULL, &err, "%s gen mag '%s' --fraction 1/1000000 --order bfs --quiet", tu_burrow(), cli);
	cr_assert_eq(rc, 2, "gen mag --order: exit %d", rc);
	cr_assert(strstr(err, "--order"), "%s", err);
	free(err);
	rc = tu_sh(NULL, &err, "%s gen csbm '%s' --order metis --quiet --force", tu_burrow(), cli);
	cr_assert_eq(rc, 2, "an unknown order: exit %d", rc);
	free(err);
	free(cli);
	free(after);
}

/* The undirected pairs {a, b}, a < b, of an edge list (loops dropped), sorted and unique, packed a << 32 | b. */
static int64_t unique_pairs(int64_t *x, int64_t m)
{
	qsort(x, (size_t)m, sizeof *x, cmp_i64);
	int64_t k = 0;
	for (int64_t i = 0; i < m; i++)
		if (!k || x[i] != x[k - 1])
			x[k++] = x[i];
	return k;
}

static int64_t pair_key(int64_t a, int64_t b) { return a < b ? a << 32 | b : b << 32 | a; }

Test(reorder, import_relabel_order_maps_back_to_input_ids)
{
	const int64_t n = 500, deg = 4;
	char *edges = tu_path(dir, "edges.txt");
	FILE *f = fopen(edges, "w");
	int64_t *want = malloc((size_t)(n * deg) * sizeof *want), m = 0;
	uint64_t s = 11;
	for (int64_t k = 0; k < n; k++)
		for (int64_t j = 0; j < deg; j++) {
			const int64_t u = k, v = (int64_t)(tu_link_rng(&s) % (uint64_t)n);
			const int64_t iu = 1000 + (u * 10007) % 99991, iv = 1000 + (v * 10007) % 99991; /* distinct ids */
			fprintf(f, "%lld %lld\n", (long long)iu, (long long)iv);
			if (iu != iv)
				want[m++] = pair_key(iu, iv);
		}
	fclose(f);
	m = unique_pairs(want, m);
	char *plain = tu_path(dir, "plain"), *direct = tu_path(dir, "direct"), *after = tu_path(dir, "after"), *err = NULL;
	int rc = tu_sh(NULL, &err, "%s import '%s' --edges '%s' --relabel --undirected --split 0.5,0.25,0.25 --name t --order degree "
		       "--quiet", tu_burrow(), direct, edges);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	/* the edges of the output, through orig_ids.npy, are the input's */
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, direct), 0, "%s", burrow_last_error());
	const burrow_csr *g = burrow_dataset_graph(ds);
	burrow_npy_array o = {0};
	cr_assert_eq(read_arr(direct, "orig_ids.npy", &o), 0, "no orig_ids.npy");
	cr_assert_eq(o.count, g->num_nodes);
	const int64_t *orig = o.data;
	int64_t *got = malloc((size_t)g->num_edges * sizeof *got + 8), k = 0;
	for (int64_t i = 0; i < g->num_nodes; i++) {
		cr_assert(i == 0 || g->indptr[i + 1] - g->indptr[i] <= g->indptr[i] - g->indptr[i - 1],
			  "degree order broken at %lld", (long long)i);
		for (int64_t e = g->indptr[i]; e < g->indptr[i + 1]; e++)
			got[k++] = pair_key(orig[i], orig[burrow_csr_index(g, e)]);
	}
	k = unique_pairs(got, k);
	cr_assert_eq(k, m, "%lld pairs, the input has %lld", (long long)k, (long long)m);
	cr_assert(!memcmp(got, want, (size_t)m * sizeof *got), "the edges mapped back are not the input's");
	burrow_npy_free(&o);
	burrow_dataset_close(ds);
	/* and the same bytes as import, then reorder (orig_ids composed with relabel's) */
	rc = tu_sh(NULL, &err, "%s import '%s' --edges '%s' --relabel --undirected --split 0.5,0.25,0.25 --name t --quiet && "
		   "%s reorder '%s' --out '%s' --order degree --quiet", tu_burrow(), plain, edges, tu_burrow(), plain, after);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	same_dataset(direct, after);
	cr_assert_eq(scratch_left(dir), 0, "a scratch folder is left in %s", dir);
	/* a typed import refuses --order in one line */
	rc = tu_sh(NULL, &err, "%s import '%s' --node-type a=10 --relation a,r,a='%s' --order bfs --quiet", tu_burrow(),
		   after, edges);
	cr_assert_eq(rc, 2, "typed import --order: exit %d", rc);
	cr_assert(strstr(err, "--order") && !strchr(strchr(err, '\n') + 1, '\n'), "%s", err);
	free(err);
	free(got);
	free(want);
	free(edges);
	free(plain);
	free(direct);
	free(after);
}

Test(reorder, order_refusals_leave_nothing)
{
	char *out = tu_path(dir, "out");
	burrow_gen_opts go;
	burrow_gen_defaults(&go, BURROW_GEN_HSBM);
	go.num_nodes = 300;
	go.order = BURROW_ORDER_BFS;
	cr_assert_eq(burrow_gen(&go, out), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "typed"), "%s", burrow_last_error());
	/* generated into the scratch, then the reorder's budget refuses: no output, no scratch */
	burrow_gen_defaults(&go, BURROW_GEN_CSBM);
	go.num_nodes = 4000;
	go.feat_dim = 4;
	go.order = BURROW_ORDER_BFS;
	go.mem_bytes = 60000; /* the CSR build spills in runs; the reorder's id maps need 4000 x 28 bytes */
	cr_assert_eq(burrow_gen(&go, out), BURROW_E_NOMEM, "%s", burrow_last_error());
	cr_assert(strstr(burrow_last_error(), "--mem"), "%s", burrow_last_error());
	cr_assert(!tu_exists(out), "a refused gen --order left %s", out);
	cr_assert_eq(scratch_left(dir), 0, "a scratch folder is left in %s", dir);
	/* failing allocations anywhere: an error, and nothing left */
	go.mem_bytes = 0;
	go.num_nodes = 300;
	for (long k = 0; k < 400; k += 7) {
		bw_mem_fail_after(k);
		const int st = burrow_gen(&go, out);
		bw_mem_fail_after(-1);
		if (st == 0) {
			tu_rmrf(out);
			continue;
		}
		cr_assert_lt(st, 0);
		cr_assert(!tu_exists(out), "allocation %ld failed and left %s", k, out);
		cr_assert_eq(scratch_left(dir), 0, "allocation %ld failed and left a scratch folder", k);
	}
	/* an existing output without overwrite: refused before generating */
	go.num_nodes = 300;
	cr_assert_eq(burrow_gen(&go, out), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_gen(&go, out), BURROW_E_EXISTS);
	cr_assert_eq(scratch_left(dir), 0);
	go.overwrite = true;
	go.order = BURROW_ORDER_DEGREE;
	cr_assert_eq(burrow_gen(&go, out), 0, "%s", burrow_last_error());
	free(out);
}
