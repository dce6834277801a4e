/* test_import_own.c: users' own data through burrow import: --relabel (string and sparse ids,
 * orig_ids back through predict), LINQS node files, the sparse-id warning, conversions (integer
 * features, one-hot labels, uint8 masks), and shape errors that name file, found and expected. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../graph/npy.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

TU_SCRATCH_SUITE(import_own, 300);

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	cr_assert(f);
	fputs(text, f);
	fclose(f);
}

/* burrow ARGS in tu_dir: its exit status, stderr into *err (caller frees). */
static int burrow(char **err, const char *args)
{
	char *bin = realpath(tu_burrow(), NULL);
	cr_assert(bin);
	int rc = tu_sh(NULL, err, "cd %s && %s %s", tu_dir, bin, args);
	free(bin);
	return rc;
}

static void read_npy(const char *rel, burrow_npy_array *a)
{
	char *p = tu_path(tu_dir, "%s", rel);
	cr_assert_eq(burrow_npy_read(p, a), 0, "%s: %s", p, burrow_last_error());
	free(p);
}

static void save(const char *rel, burrow_dtype t, int ndim, const int64_t *shape, const void *data)
{
	char *p = tu_path(tu_dir, "%s", rel);
	cr_assert_eq(bw_npy_save(p, t, ndim, shape, data, BW_NPY_ALIGN), 0);
	free(p);
}

/* A ring of 12 nodes named n<k>x and 2 features each (k, -k), the class k % 3 as a name. */
static void string_graph(void)
{
	char edges[2048] = "source,target\n", content[2048] = "", *e = edges + strlen(edges), *c = content;
	static const char *const cls[3] = {"Theory", "AI", "Neural_Networks"};
	for (int k = 0; k < 12; k++) {
		e += sprintf(e, "n%dx,n%dx\n", (k * 5) % 12, (k * 5 + 1) % 12);
		c += sprintf(c, "n%dx\t%d\t%d\t%s\n", 11 - k, 11 - k, -(11 - k), cls[(11 - k) % 3]);
	}
	char *pe = tu_path(tu_dir, "e.csv"), *pc = tu_path(tu_dir, "n.content");
	write_file(pe, edges);
	write_file(pc, content);
	free(pe);
	free(pc);
}

Test(import_own, string_ids_with_header_import_train_and_map_back)
{
	char *err = NULL;
	string_graph();
	cr_assert_eq(burrow(&err, "import s --edges e.csv --relabel --content n.content --undirected --split 0.5,0.25,0.25"),
		     0, "%s", err);
	cr_assert(strstr(err, "(relabelled; orig_ids.txt)"), "%s", err);
	cr_assert(!strstr(err, "warning"), "%s", err);
	free(err);
	char *p = tu_path(tu_dir, "s/orig_ids.txt");
	size_t len;
	char *ids = tu_read(p, &len);
	free(p);
	/* the node file's order first: n11x, n10x, ... */
	cr_assert(!strncmp(ids, "n11x\nn10x\nn9x\n", 14), "%s", ids);
	burrow_npy_array f, y;
	read_npy("s/features.npy", &f);
	read_npy("s/labels.npy", &y);
	for (int v = 0; v < 12; v++) { /* node v is n<11-v>x: its own features and class */
		cr_assert_eq(((float *)f.data)[2 * v], (float)(11 - v));
		cr_assert_eq(((float *)f.data)[2 * v + 1], -(float)(11 - v));
		/* sorted names: AI 0, Neural_Networks 1, Theory 2 */
		static const int rank[3] = {2, 0, 1};
		cr_assert_eq(((int32_t *)y.data)[v], rank[(11 - v) % 3]);
	}
	burrow_npy_free(&f);
	burrow_npy_free(&y);
	cr_assert_eq(burrow(&err, "train s --model sage --epochs 2 --hidden 8 --checkpoint ck"), 0, "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "predict s --checkpoint ck --out p.npy"), 0, "%s", err);
	cr_assert(strstr(err, "p.orig_ids.txt"), "%s", err);
	free(err);
	p = tu_path(tu_dir, "p.orig_ids.txt");
	char *back = tu_read(p, &len);
	free(p);
	cr_assert_str_eq(back, ids);
	free(back);
	free(ids);
}

/* LINQS .cites ("cited\tciting", 7-digit paper ids) and .content with word labels. */
static const int64_t linqs_ids[6] = {1103985, 35, 2200000, 9999999, 1129442, 31336};

static void linqs_files(void)
{
	char cites[512] = "", content[512] = "", *e = cites, *c = content;
	for (int k = 0; k < 6; k++) {
		e += sprintf(e, "%lld\t%lld\n", (long long)linqs_ids[k], (long long)linqs_ids[(k + 1) % 6]);
		c += sprintf(c, "%lld\t%d\t0\t1\t%s\n", (long long)linqs_ids[k], k & 1, k % 2 ? "Rule_Learning" : "Theory");
	}
	char *pe = tu_path(tu_dir, "cora.cites"), *pc = tu_path(tu_dir, "cora.content");
	write_file(pe, cites);
	write_file(pc, content);
	free(pe);
	free(pc);
}

Test(import_own, linqs_seven_digit_ids_warn_without_relabel)
{
	char *err = NULL;
	linqs_files();
	cr_assert_eq(burrow(&err, "import raw --edges cora.cites --content cora.content --quiet"), 0, "%s", err);
	cr_assert(strstr(err, "burrow: warning: cora.cites: N = 10,000,000 from the largest id but 6 distinct ids: use "
			      "--relabel"), "%s", err);
	cr_assert(strstr(err, "9999994 of the 10000000 nodes have no line in it"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import rl --edges cora.cites --content cora.content --relabel --split 0.5,0.25,0.25"), 0,
		     "%s", err);
	cr_assert(!strstr(err, "warning"), "%s", err);
	free(err);
	burrow_npy_array o;
	read_npy("rl/orig_ids.npy", &o);
	cr_assert_eq(o.dtype, BURROW_DTYPE_I64);
	cr_assert_eq(o.count, 6);
	for (int k = 0; k < 6; k++)
		cr_assert_eq(((int64_t *)o.data)[k], linqs_ids[k]);
	cr_assert_eq(burrow(&err, "train rl --model gcn --epochs 2 --hidden 8 --checkpoint ck"), 0, "%s", err);
	free(err);
	/* predict on chosen nodes: each row's original id */
	save("ask.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){3}, (const int64_t[3]){4, 0, 4});
	cr_assert_eq(burrow(&err, "predict rl --checkpoint ck --out p.npy --nodes ask.npy"), 0, "%s", err);
	free(err);
	burrow_npy_array b;
	read_npy("p.orig_ids.npy", &b);
	cr_assert_eq(b.count, 3);
	cr_assert_eq(((int64_t *)b.data)[0], linqs_ids[4]);
	cr_assert_eq(((int64_t *)b.data)[1], linqs_ids[0]);
	cr_assert_eq(((int64_t *)b.data)[2], linqs_ids[4]);
	burrow_npy_free(&b);
	burrow_npy_free(&o);
}

/* Sparse integer ids with .npy features, labels and a split keyed by the original ids. */
Test(import_own, relabel_keys_npy_inputs_by_original_id)
{
	char *err = NULL;
	const int64_t es[2][4] = {{40, 7, 40, 19}, {7, 19, 19, 3}};
	save("e.npy", BURROW_DTYPE_I64, 2, (const int64_t[2]){2, 4}, es);
	float feat[41];
	int32_t lab[41];
	for (int k = 0; k < 41; k++) {
		feat[k] = (float)k;
		lab[k] = k % 2;
	}
	save("f.npy", BURROW_DTYPE_F32, 2, (const int64_t[2]){41, 1}, feat);
	save("y.npy", BURROW_DTYPE_I32, 1, (const int64_t[1]){41}, lab);
	save("tr.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){2}, (const int64_t[2]){40, 3});
	save("va.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){1}, (const int64_t[1]){7});
	save("te.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){1}, (const int64_t[1]){19});
	cr_assert_eq(burrow(&err, "import k --edges e.npy --relabel --features f.npy --labels y.npy --train tr.npy "
				  "--valid va.npy --test te.npy"), 0, "%s", err);
	free(err);
	burrow_npy_array f, t;
	read_npy("k/features.npy", &f);
	read_npy("k/split/train.npy", &t);
	static const float want[4] = {40, 7, 19, 3}; /* first seen: 40, 7, 19, 3 */
	for (int v = 0; v < 4; v++)
		cr_assert_eq(((float *)f.data)[v], want[v]);
	cr_assert_eq(t.count, 2);
	cr_assert_eq(((int64_t *)t.data)[0], 0); /* id 40 */
	cr_assert_eq(((int64_t *)t.data)[1], 3); /* id 3 */
	burrow_npy_free(&f);
	burrow_npy_free(&t);
	/* a split id no edge names; features too short for the largest id */
	save("bad.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){1}, (const int64_t[1]){5});
	cr_assert_eq(burrow(&err, "import k2 --edges e.npy --relabel --labels y.npy --train bad.npy --valid va.npy "
				  "--test te.npy"), 1);
	cr_assert(strstr(err, "bad.npy: entry 0 is id 5, which no edge or node line names"), "%s", err);
	free(err);
	save("f2.npy", BURROW_DTYPE_F32, 2, (const int64_t[2]){20, 2}, feat);
	cr_assert_eq(burrow(&err, "import k3 --edges e.npy --relabel --features f2.npy"), 1);
	cr_assert(strstr(err, "f2.npy: shape [20, 2], but id 40 needs row 40"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import k4 --edges e.npy --relabel --mem 100"), 1);
	cr_assert(strstr(err, "--relabel: the map of"), "%s", err);
	free(err);
}

/* A path of 6 nodes. */
static void path_edges(void)
{
	char *p = tu_path(tu_dir, "p.txt");
	write_file(p, "0 1\n1 2\n2 3\n3 4\n4 5\n");
	free(p);
}

Test(import_own, conversions_each_said_in_one_line)
{
	char *err = NULL;
	path_edges();
	int8_t f8[12];
	int16_t f16[12];
	int64_t f64[12];
	for (int k = 0; k < 12; k++)
		f8[k] = (int8_t)(k - 6), f16[k] = (int16_t)(1000 * k), f64[k] = -k;
	save("f8.npy", BURROW_DTYPE_I8, 2, (const int64_t[2]){6, 2}, f8);
	save("f16.npy", BURROW_DTYPE_I16, 2, (const int64_t[2]){6, 2}, f16);
	save("f64.npy", BURROW_DTYPE_I64, 2, (const int64_t[2]){6, 2}, f64);
	const uint8_t onehot[6][3] = {{0, 1, 0}, {1, 0, 0}, {0, 0, 1}, {0, 1, 0}, {1, 0, 0}, {0, 0, 1}};
	save("oh.npy", BURROW_DTYPE_U8, 2, (const int64_t[2]){6, 3}, onehot);
	save("m1.npy", BURROW_DTYPE_U8, 1, (const int64_t[1]){6}, (const uint8_t[6]){1, 1, 0, 0, 0, 0});
	save("m2.npy", BURROW_DTYPE_BOOL, 1, (const int64_t[1]){6}, (const uint8_t[6]){0, 0, 1, 1, 0, 0});
	save("m3.npy", BURROW_DTYPE_U8, 1, (const int64_t[1]){6}, (const uint8_t[6]){0, 0, 0, 0, 1, 1});
	static const char *const feats[3] = {"f8", "f16", "f64"};
	static const char *const names[3] = {"int8", "int16", "int64"};
	for (int i = 0; i < 3; i++) {
		char args[256];
		snprintf(args, sizeof args, "import c%d --edges p.txt --features %s.npy --labels oh.npy --train m1.npy "
			 "--valid m2.npy --test m3.npy", i, feats[i]);
		cr_assert_eq(burrow(&err, args), 0, "%s", err);
		char line[128];
		snprintf(line, sizeof line, "burrow: note: %s.npy: %s features converted to float32", feats[i], names[i]);
		cr_assert(strstr(err, line), "%s", err);
		cr_assert(strstr(err, "burrow: note: oh.npy: one-hot labels [6, 3] converted to class ids"), "%s", err);
		cr_assert(strstr(err, "burrow: note: m1.npy: a uint8 mask [6] taken as the ids of its non-zero entries (2 "
				      "nodes)"), "%s", err);
		cr_assert(strstr(err, "burrow: note: m2.npy: a bool mask [6]"), "%s", err);
		free(err);
		char rel[32];
		burrow_npy_array f;
		snprintf(rel, sizeof rel, "c%d/features.npy", i);
		read_npy(rel, &f);
		cr_assert_eq(f.dtype, BURROW_DTYPE_F32);
		for (int k = 0; k < 12; k++)
			cr_assert_eq(((float *)f.data)[k], i == 0 ? (float)f8[k] : i == 1 ? (float)f16[k] : (float)f64[k]);
		burrow_npy_free(&f);
	}
	burrow_npy_array y, t;
	read_npy("c0/labels.npy", &y);
	read_npy("c0/split/test.npy", &t);
	static const int32_t want[6] = {1, 0, 2, 1, 0, 2};
	for (int v = 0; v < 6; v++)
		cr_assert_eq(((int32_t *)y.data)[v], want[v]);
	cr_assert_eq(t.count, 2);
	cr_assert_eq(((int64_t *)t.data)[0], 4);
	burrow_npy_free(&y);
	burrow_npy_free(&t);
	/* two 1s in a row: multi-label, as before */
	const uint8_t multi[6][2] = {{1, 1}, {1, 0}, {0, 1}, {0, 1}, {1, 0}, {0, 1}};
	save("ml.npy", BURROW_DTYPE_U8, 2, (const int64_t[2]){6, 2}, multi);
	cr_assert_eq(burrow(&err, "import c9 --edges p.txt --labels ml.npy"), 0, "%s", err);
	cr_assert(!strstr(err, "one-hot"), "%s", err);
	free(err);
	/* --multilabel: one-hot labels stay one binary task per class (Cora's classes as 7 tasks) */
	cr_assert_eq(burrow(&err, "import c8 --edges p.txt --labels oh.npy --multilabel"), 0, "%s", err);
	cr_assert(!strstr(err, "one-hot"), "%s", err);
	free(err);
	read_npy("c8/labels.npy", &y);
	cr_assert_eq(y.dtype, BURROW_DTYPE_I8);
	cr_assert_eq(y.count, 18);
	for (int k = 0; k < 18; k++)
		cr_assert_eq(((int8_t *)y.data)[k], ((const uint8_t *)onehot)[k]);
	burrow_npy_free(&y);
}

Test(import_own, shape_errors_name_file_found_and_expected)
{
	char *err = NULL;
	path_edges();
	float f[8 * 2] = {0};
	int32_t y[6] = {0, 1, 0, 1, 0, 1};
	save("f8rows.npy", BURROW_DTYPE_F32, 2, (const int64_t[2]){8, 2}, f);
	save("f1d.npy", BURROW_DTYPE_F32, 1, (const int64_t[1]){6}, f);
	save("y.npy", BURROW_DTYPE_I32, 1, (const int64_t[1]){6}, y);
	save("y2.npy", BURROW_DTYPE_I32, 2, (const int64_t[2]){3, 2}, y);
	save("tr.npy", BURROW_DTYPE_I64, 2, (const int64_t[2]){1, 1}, (const int64_t[1]){0});
	/* the reported bug: too many feature rows were blamed on the labels */
	cr_assert_eq(burrow(&err, "import a --edges p.txt --features f8rows.npy --labels y.npy"), 1);
	cr_assert(strstr(err, "f8rows.npy has 8 rows and y.npy has 6: one node a row in both"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import a --edges p.txt --features f8rows.npy --num-nodes 6"), 1);
	cr_assert(strstr(err, "f8rows.npy: features of shape [8, 2] float32, expected [6, D] (D >= 1) of floats or "
			      "integers (N = 6: --num-nodes)"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import a --edges p.txt --features f1d.npy"), 1);
	cr_assert(strstr(err, "f1d.npy: features of shape [6] float32, expected [6, D]"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import a --edges p.txt --labels y2.npy"), 1);
	cr_assert(strstr(err, "y2.npy: labels of shape [3, 2] int32, expected [6, T]"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import a --edges p.txt --labels y.npy --num-nodes 7"), 1);
	cr_assert(strstr(err, "y.npy: labels of shape [6] int32, expected [7] or [7, 1] of integers or floats (N = 7: "
			      "--num-nodes)"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import a --edges p.txt --labels y.npy --train tr.npy --valid tr.npy --test tr.npy"), 1);
	cr_assert(strstr(err, "tr.npy: shape [1, 1] int64, expected node ids [K] (int32 or int64) or a mask [6]"), "%s",
		  err);
	free(err);
	save("e3.npy", BURROW_DTYPE_I64, 2, (const int64_t[2]){3, 3}, (const int64_t[9]){0});
	cr_assert_eq(burrow(&err, "import a --edges e3.npy"), 1);
	cr_assert(strstr(err, "e3.npy: edges of shape [3, 3] int64, expected [2, E] or [E, 2] of int32 or int64"), "%s",
		  err);
	free(err);
	/* a node file's id past --num-nodes, and a line of another width */
	char *pc = tu_path(tu_dir, "c.txt");
	write_file(pc, "0 1.5 A\n9 2.5 B\n");
	cr_assert_eq(burrow(&err, "import a --edges p.txt --content c.txt --num-nodes 6"), 1);
	cr_assert(strstr(err, "c.txt: node 2 of the file has id 9, outside [0, 6)"), "%s", err);
	free(err);
	write_file(pc, "0 1.5 A\n1 2.5 3 B\n");
	cr_assert_eq(burrow(&err, "import a --edges p.txt --content c.txt"), 1);
	cr_assert(strstr(err, "c.txt:2: expected 3 columns, found 4"), "%s", err);
	free(err);
	free(pc);
	/* half the nodes without an edge: quiet; more than half: one line */
	cr_assert_eq(burrow(&err, "import h1 --edges p.txt --num-nodes 12"), 0, "%s", err);
	cr_assert(!strstr(err, "warning"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import h2 --edges p.txt --num-nodes 13"), 0, "%s", err);
	cr_assert(strstr(err, "burrow: warning: p.txt: 7 of the 13 nodes have no edge (sparse ids? --relabel numbers the "
			      "ids that appear 0..N-1)"), "%s", err);
	free(err);
}

Test(import_own, train_on_an_ogb_folder_names_the_prep_line)
{
	char *err = NULL;
	char *raw = tu_path(tu_dir, "ogbn-x/raw");
	cr_assert_eq(tu_sh(NULL, NULL, "mkdir -p %s", raw), 0);
	free(raw);
	cr_assert_eq(burrow(&err, "train ogbn-x --epochs 1"), 1);
	cr_assert(strstr(err, "ogbn-x: an OGB dataset folder (raw/), not a dataset directory: run `burrow prep ogbn-x`"),
		  "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, NULL, "cd %s && echo x > ogbn-y.zip", tu_dir), 0);
	cr_assert_eq(burrow(&err, "train ogbn-y.zip --epochs 1"), 1);
	cr_assert(strstr(err, "ogbn-y.zip: a zip, not a dataset directory: run `burrow prep ogbn-y.zip` (it writes "
			      "data/ogbn-y"), "%s", err);
	free(err);
}

/* Several splits: one named at import, more added without rewriting the features, each chosen
 * at training; split files keyed by the original ids of a relabelled dataset. */
Test(import_own, named_splits_added_without_rewriting_features)
{
	char *err = NULL;
	linqs_files();
	cr_assert_eq(burrow(&err, "import d --edges cora.cites --content cora.content --relabel --split 0.5,0.25,0.25 "
				  "--split-name s0"), 0, "%s", err);
	free(err);
	char *feat = tu_path(tu_dir, "d/features.npy");
	struct stat before, after;
	cr_assert_eq(stat(feat, &before), 0);
	/* s1: original ids; s2: uint8 masks keyed by original id (entry k = id k) */
	save("tr.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){2}, (const int64_t[2]){9999999, 35});
	save("va.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){1}, (const int64_t[1]){31336});
	save("te.npy", BURROW_DTYPE_I64, 1, (const int64_t[1]){1}, (const int64_t[1]){1103985});
	cr_assert_eq(burrow(&err, "import --add-split d --split-name s1 --train tr.npy --valid va.npy --test te.npy"), 0,
		     "%s", err);
	cr_assert(strstr(err, "added split s1 to d: train 2, valid 1, test 1 nodes"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import --add-split d --split-name s1 --split 0.5,0.5,0"), 1);
	cr_assert(strstr(err, "d/split/s1: exists (use --force to replace it)"), "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "import --add-split d --split-name s2 --split 0.5,0.5,0 --seed 4"), 0, "%s", err);
	free(err);
	cr_assert_eq(stat(feat, &after), 0);
	cr_assert(before.st_ino == after.st_ino && before.st_mtime == after.st_mtime, "features.npy was rewritten");
	free(feat);

	burrow_dataset *ds;
	char *d = tu_path(tu_dir, "d");
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	int64_t n;
	cr_assert_null(burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &n)); /* named only: no default split */
	cr_assert_eq(burrow_dataset_select_split(ds, "s1"), 0, "%s", burrow_last_error());
	const int64_t *tr = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &n);
	cr_assert_eq(n, 2);
	cr_assert_eq(tr[0], 3); /* 9999999 is the 4th id first seen */
	cr_assert_eq(tr[1], 1); /* 35 */
	cr_assert_eq(*burrow_dataset_split(ds, BURROW_SPLIT_TEST, &n), 0);
	cr_assert_eq(burrow_dataset_select_split(ds, "nope"), BURROW_E_NOTFOUND);
	cr_assert(strstr(burrow_last_error(), "no split named 'nope' (meta.json's \"named_splits\": s0, s1, s2)"), "%s",
		  burrow_last_error());
	cr_assert_eq(burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &n), tr); /* unchanged by the refusal */
	burrow_dataset_close(ds);
	free(d);

	cr_assert_eq(burrow(&err, "train d --model gcn --epochs 2 --hidden 8 --split-name s1 --checkpoint ck"), 0, "%s",
		     err);
	free(err);
	cr_assert_eq(burrow(&err, "eval d --checkpoint ck --split-name s2"), 0, "%s", err);
	free(err);
	cr_assert_eq(burrow(&err, "train d --epochs 1 --split-name s9"), 1);
	cr_assert(strstr(err, "no split named 's9'"), "%s", err);
	free(err);
}
