/* test_harden.c: corrupted datasets refused by every command that reads one, --force that
 * replaces only Burrow outputs, leftovers of dead processes removed, escaped JSON (issue 19). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../graph/npy.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

TU_SCRATCH_SUITE(harden, 120);

/* A small CSBM at dir/name (symmetric, 300 nodes); caller frees the path. */
static char *small(const char *name)
{
	char *p = tu_path(tu_dir, "%s", name), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 300 --feat-dim 8 --classes 3 --quiet", tu_burrow(), p), 0,
		     "%s", err);
	free(err);
	return p;
}

/* Overwrite element `at` of the 1-d array dir/rel (int32 or int64) with v. */
static void poke(const char *dir, const char *rel, int64_t at, int64_t v)
{
	char *f = tu_path(dir, "%s", rel);
	bw_npy h;
	void *data;
	cr_assert_eq(bw_npy_load(f, &h, &data), 0, "%s", burrow_last_error());
	cr_assert(at < h.shape[0]);
	if (h.dtype == BURROW_DTYPE_I32)
		((int32_t *)data)[at] = (int32_t)v;
	else
		((int64_t *)data)[at] = v;
	cr_assert_eq(bw_npy_save(f, h.dtype, 1, h.shape, data, 64), 0);
	bw_free(data);
	free(f);
}

/* `cmd` (a burrow command line after the binary) must exit 1 with one line on stderr
 * containing `what`, and leave no "*.tmp.*" beside or inside `dir`. */
static void refused(const char *dir, const char *what, const char *cmd)
{
	char *err;
	int rc = tu_sh(NULL, &err, "%s %s", tu_burrow(), cmd);
	cr_assert_eq(rc, 1, "exit %d for %s: %s", rc, cmd, err);
	cr_assert(strstr(err, what), "%s: message lacks '%s': %s", cmd, what, err);
	cr_assert(strchr(err, '\n') == err + strlen(err) - 1, "%s: not one line: %s", cmd, err);
	cr_assert(!strstr(err, ".tmp."), "%s: names a temporary: %s", cmd, err);
	free(err);
	char *out;
	char *parent = strdup(dir);
	*strrchr(parent, '/') = '\0';
	cr_assert_eq(tu_sh(&out, NULL, "find '%s' -maxdepth 3 -name '*.tmp.*'", parent), 0);
	free(parent);
	cr_assert_str_empty(out, "%s left %s", cmd, out);
	free(out);
}

/* What crashed training, partitioning or ran on garbage is refused by each of them. */
Test(harden, corrupt_datasets_refused_by_every_command)
{
	char cmd[1024];
	static const struct {
		const char *file;
		int64_t at, value;
		const char *what;
	} cases[] = {
		{"indices.npy", 5, 300, "indices.npy: row"},   /* an id past N */
		{"indices.npy", 0, -1, "neighbor -1"},         /* -1 (ran on garbage with --full-graph) */
		{"indptr.npy", 7, 1000000, "indptr decreases"}, /* non-monotone offsets */
		{"labels.npy", 299, 7, "node 299 has label 7"}, /* a label past C */
		{"split/test.npy", 0, 300, "outside [0, 300)"}, /* a split id past N */
		{"split/test.npy", 0, 0, "in two splits"},      /* overlapping splits (0 is in train or valid) */
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char name[16];
		snprintf(name, sizeof name, "d%zu", c);
		char *d = small(name);
		char *tr = tu_path(d, "split/train.npy");
		if (cases[c].value == 0) { /* make node 0 the first training node, then test's too */
			bw_npy h;
			void *ids;
			cr_assert_eq(bw_npy_load(tr, &h, &ids), 0);
			poke(d, "split/test.npy", 0, ((int64_t *)ids)[0]);
			bw_free(ids);
		} else {
			poke(d, cases[c].file, cases[c].at, cases[c].value);
		}
		free(tr);
		const char *cmds[] = {"train '%s' --epochs 1 --threads 1", "train '%s' --epochs 1 --full-graph --threads 1",
				      "partition '%s' --parts 2 --balance nodes,train", "info '%s'"};
		for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
			snprintf(cmd, sizeof cmd, cmds[k], d);
			refused(d, cases[c].what, cmd);
		}
		free(d);
	}
	/* meta.json calling an asymmetric graph symmetric: METIS corrupted its heap */
	char *d = small("asym");
	char *ip = tu_path(d, "indptr.npy");
	bw_npy h;
	void *offs;
	cr_assert_eq(bw_npy_load(ip, &h, &offs), 0);
	int64_t row = 0, *o = offs;
	while (o[row + 1] - o[row] < 2) /* a row of two or more: its last entry moves up by one */
		row++;
	char *ix = tu_path(d, "indices.npy");
	void *ids;
	cr_assert_eq(bw_npy_load(ix, &h, &ids), 0);
	int32_t last = ((int32_t *)ids)[o[row + 1] - 1];
	bw_free(ids);
	if (last + 1 < 300 && last + 1 != row) /* else the row's first entry moves down */
		poke(d, "indices.npy", o[row + 1] - 1, last + 1);
	else
		poke(d, "indices.npy", o[row], 0 == row ? 1 : 0);
	bw_free(offs);
	free(ix);
	snprintf(cmd, sizeof cmd, "partition '%s' --parts 2", d);
	refused(d, "\"symmetric\": true", cmd);
	snprintf(cmd, sizeof cmd, "train '%s' --epochs 1 --threads 1", d);
	refused(d, "has no reverse", cmd);
	free(ip);
	free(d);
}

/* num_classes 2e9 made info allocate 16 GB; an epoch of 1e10 in a checkpoint loaded as
 * a negative int: both refused at the parse. */
Test(harden, huge_counts_refused)
{
	char *d = small("classes"), *m = tu_path(d, "meta.json");
	char cmd[512];
	cr_assert_eq(tu_sh(NULL, NULL, "sed -i 's/\"num_classes\":\t3/\"num_classes\":\t2000000000/' '%s'", m), 0);
	snprintf(cmd, sizeof cmd, "info '%s'", d);
	refused(d, "\"num_classes\" 2000000000 is more than", cmd);
	free(m);
	free(d);
}

/* --force replaces a dataset, never another folder; partition never replaces its input. */
Test(harden, force_replaces_only_burrow_outputs)
{
	char *dir = tu_path(tu_dir, "thesis"), *tex = tu_path(dir, "thesis.tex"), *err;
	cr_assert_eq(tu_sh(NULL, NULL, "mkdir -p '%s' && echo work > '%s'", dir, tex), 0);
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 100 --force --quiet", tu_burrow(), dir), 1);
	cr_assert(strstr(err, "not a Burrow dataset or parts directory") && !strstr(err, "use --force"), "%s", err);
	free(err);
	cr_assert(tu_exists(tex), "--force deleted %s", tex);
	/* a file at OUT too */
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 100 --force --quiet", tu_burrow(), tex), 1);
	cr_assert(strstr(err, "not a Burrow dataset"), "%s", err);
	free(err);
	/* a dataset is replaced */
	char *d = small("ds");
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 100 --force --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	/* partition D --out D --force, and --out a folder above D (a refusal once removed
	 * whatever path an uninitialized buffer held: here D/split/test.npy) */
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --out '%s' --force", tu_burrow(), d, d), 1);
	cr_assert(strstr(err, "is the input"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --out '%s' --force", tu_burrow(), d, tu_dir), 1);
	cr_assert(strstr(err, "is a folder above the input"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s info '%s' --verify", tu_burrow(), d), 0, "input damaged: %s", err);
	free(err);
	/* a parts directory is replaced */
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --force --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	free(d);
	free(tex);
	free(dir);
}

/* A rerun removes OUT.tmp.PID of a process that is gone, and keeps a live one's. */
Test(harden, stale_tmp_of_dead_processes_removed)
{
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	cr_assert(child > 0);
	waitpid(child, NULL, 0); /* now a pid of no process (reuse within the test is unlikely) */
	char *out = tu_path(tu_dir, "g"), *dead = tu_path(tu_dir, "g.tmp.%ld", (long)child),
	     *live = tu_path(tu_dir, "g.tmp.%ld", (long)getpid()), *err;
	cr_assert_eq(tu_sh(NULL, NULL, "mkdir -p '%s/split' '%s' && echo x > '%s/indices.npy'", dead, live, dead), 0);
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 100 --quiet", tu_burrow(), out), 0, "%s", err);
	free(err);
	cr_assert(!tu_exists(dead), "%s is left", dead);
	cr_assert(tu_exists(live), "%s of a live process was removed", live);
	free(out);
	free(dead);
	free(live);
}

/* info --json escapes the name and the path: the output parses, and gives them back. */
Test(harden, info_json_escapes_strings)
{
	char *d = small("q"), *m = tu_path(d, "meta.json"), *out, *err;
	cr_assert_eq(tu_sh(NULL, NULL, "sed -i 's/\"name\":\t\"[^\"]*\"/\"name\":\t\"a\\\\\"b\\\\\\\\c\\\\n\"/' '%s'", m), 0);
	cr_assert_eq(tu_sh(&out, &err, "%s info '%s' --json", tu_burrow(), d), 0, "%s", err);
	cJSON *j = cJSON_Parse(out);
	cr_assert(cJSON_IsObject(j), "not JSON: %s", out);
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(j, "name");
	cr_assert(cJSON_IsString(name), "%s", out);
	cr_assert_str_eq(name->valuestring, "a\"b\\c\n", "%s", out);
	cJSON_Delete(j);
	free(out);
	free(err);
	free(m);
	free(d);
}

/* Under mpirun (its environment) train on a plain dataset is refused, not run K times. */
Test(harden, mpirun_train_on_a_plain_dataset_refused)
{
	char *d = small("plain"), *err;
	int rc = tu_sh(NULL, &err, "OMPI_COMM_WORLD_SIZE=2 OMPI_COMM_WORLD_RANK=0 %s train '%s' --epochs 1 --log '%s/l'",
		       tu_burrow(), d, tu_dir);
	cr_assert_eq(rc, 1, "%s", err);
	cr_assert(strstr(err, "takes a parts directory") && strstr(err, "--parts 2"), "%s", err);
	free(err);
	char *log = tu_path(tu_dir, "l");
	cr_assert(!tu_exists(log));
	free(log);
	free(d);
}

/* import with overlapping splits wrote a dataset that failed info --verify; --num-nodes
 * 1e18 wrote until the disk was full: both refused, nothing left. */
Test(harden, import_refuses_overlaps_and_absurd_counts)
{
	char *edges = tu_path(tu_dir, "e.txt"), *out = tu_path(tu_dir, "imp"), *err;
	FILE *f = fopen(edges, "w");
	for (int v = 0; v < 10; v++)
		fprintf(f, "%d %d\n", v, (v + 1) % 10);
	fclose(f);
	int64_t tr[4] = {0, 1, 2, 3}, va[3] = {3, 4, 5}, te[2] = {8, 9}, n;
	const struct {
		const char *name;
		int64_t *ids, n;
	} splits[] = {{"tr.npy", tr, 4}, {"va.npy", va, 3}, {"te.npy", te, 2}};
	for (int i = 0; i < 3; i++) {
		char *p = tu_path(tu_dir, "%s", splits[i].name);
		n = splits[i].n;
		cr_assert_eq(bw_npy_save(p, BURROW_DTYPE_I64, 1, &n, splits[i].ids, 64), 0);
		free(p);
	}
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "import '%s' --edges '%s' --num-nodes 10 --train '%s/tr.npy' --valid '%s/va.npy' "
		 "--test '%s/te.npy' --quiet", out, edges, tu_dir, tu_dir, tu_dir);
	refused(out, "node 3 appears twice or in two splits", cmd);
	cr_assert(!tu_exists(out));
	snprintf(cmd, sizeof cmd, "import '%s' --edges '%s' --num-nodes 1000000000000000000 --quiet", out, edges);
	refused(out, "needs at least", cmd);
	cr_assert(!tu_exists(out));
	cr_assert_eq(tu_sh(NULL, &err, "%s import '%s' --edges '%s' --num-nodes 10 --quiet", tu_burrow(), out, edges), 0,
		     "%s", err);
	free(err);
	free(edges);
	free(out);
}
