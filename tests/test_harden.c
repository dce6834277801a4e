/* test_harden.c: corrupted datasets refused by every command that reads one, --force that
 * replaces only Burrow outputs, leftovers of dead processes removed, escaped JSON, Ctrl-C and
 * SIGTERM removing temporaries, resume logging each epoch once (issue 19). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../datasets/dsio.h"
#include "../graph/npy.h"
#include "util.h"

#include <cjson/cJSON.h>
#include <zlib.h>
#include <fcntl.h>
#include <glob.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

/* `cmd` (a burrow command line after the binary) must exit 1 within a minute with one line
 * on stderr containing `what`, and leave no "*.tmp.*" beside or inside `dir`. */
static void refused(const char *dir, const char *what, const char *cmd)
{
	char *err;
	int rc = tu_sh(NULL, &err, "timeout -s KILL 60 %s %s", tu_burrow(), cmd);
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
Test(harden, corrupt_datasets_refused_by_every_command, .timeout = 300)
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
		{"labels.npy", -1, 7, "has label 7"},          /* a label past C, on a test node (not train) */
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
		} else if (cases[c].at < 0) { /* a node of the test split: accepted once, not being trained on */
			char *te = tu_path(d, "split/test.npy");
			bw_npy h;
			void *ids;
			cr_assert_eq(bw_npy_load(te, &h, &ids), 0);
			poke(d, cases[c].file, ((int64_t *)ids)[0], cases[c].value);
			bw_free(ids);
			free(te);
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

/* num_classes 2e9 made info allocate 16 GB: refused at the parse (a checkpoint's epoch of
 * 1e10: bad_checkpoint_headers_refused_naming_the_file). */
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

/* ------------------------------------------------------------ interrupts (issue 19, deliver 2) */

/* What matches `pattern` (find's -name) under dir: "" when nothing; caller frees. */
static char *found(const char *dir, const char *pattern)
{
	char *out;
	cr_assert_eq(tu_sh(&out, NULL, "find '%s' -name '%s'", dir, pattern), 0);
	return out;
}

/* Send sig to p: it must exit 128 + sig with exactly "burrow: CMD: interrupted (SIGNAME)" on
 * stderr. */
static void interrupt(pid_t p, int sig, const char *errpath, const char *cmd)
{
	cr_assert_eq(kill(p, sig), 0);
	int status;
	cr_assert_eq(waitpid(p, &status, 0), p);
	char *err = tu_read(errpath, NULL), want[128];
	cr_assert(WIFEXITED(status), "%s: killed by signal %d instead of exiting: %s", cmd,
		  WIFSIGNALED(status) ? WTERMSIG(status) : -1, err);
	cr_assert_eq(WEXITSTATUS(status), 128 + sig, "%s: exit %d: %s", cmd, WEXITSTATUS(status), err);
	snprintf(want, sizeof want, "burrow: %s: interrupted (%s)\n", cmd, sig == SIGINT ? "SIGINT" : "SIGTERM");
	cr_assert_str_eq(err, want);
	free(err);
}

/* SIGINT and SIGTERM while gen, partition, train and eval write: exit 130 / 143 with one
 * line, and none of their temporaries (OUT.tmp.PID, *.ckpt.tmp.PID, spill files) is left. */
Test(harden, interrupts_remove_temporaries_and_exit_130_or_143, .timeout = 300)
{
	char *errp = tu_path(tu_dir, "err"), *g = tu_path(tu_dir, "g"), *pat = tu_path(tu_dir, "g.tmp.*"), *left;
	/* gen rmat writes a 2M-node dataset into g.tmp.PID (hundreds of MB when complete) */
	const int sigs[] = {SIGINT, SIGTERM};
	for (int i = 0; i < 2; i++) {
		char *argv[] = {(char *)tu_burrow(), "gen", "rmat", g, "--scale", "21", "--feat-dim", "128",
				"--threads", "1", "--quiet", NULL};
		pid_t p = tu_start(errp, argv);
		tu_wait_for(p, pat, errp);
		interrupt(p, sigs[i], errp, "gen");
		cr_assert_str_empty(left = found(tu_dir, "*.tmp.*"), "left: %s", left);
		free(left);
		cr_assert(!tu_exists(g));
	}
	/* a dataset big enough to take seconds to partition, train and evaluate */
	char *d = tu_path(tu_dir, "c"), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 100000 --feat-dim 16 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	char *ptmp = tu_path(d, "parts-4.tmp.*");
	char *pargv[] = {(char *)tu_burrow(), "partition", d, "--parts", "4", "--threads", "1", "--quiet", NULL};
	pid_t p = tu_start(errp, pargv);
	tu_wait_for(p, ptmp, errp);
	interrupt(p, SIGTERM, errp, "partition");
	cr_assert_str_empty(left = found(d, "*.tmp.*"), "left: %s", left);
	free(left);
	/* train: interrupted after its first checkpoint; the checkpoint folder keeps last.ckpt only */
	char *ck = tu_path(tu_dir, "ck"), *last = tu_path(tu_dir, "ck/last.ckpt"), *log = tu_path(tu_dir, "log");
	char *targv[] = {(char *)tu_burrow(), "train", d, "--epochs", "1000", "--hidden", "16", "--threads", "1", "--quiet",
			 "--checkpoint", ck, "--log", log, NULL};
	p = tu_start(errp, targv);
	tu_wait_for(p, last, errp);
	interrupt(p, SIGINT, errp, "train");
	cr_assert_str_empty(left = found(ck, "*.tmp.*"), "left: %s", left);
	free(left);
	/* eval spills each hidden layer (--mem 1K) into --scratch: interrupted while a spill exists */
	char *scr = tu_path(tu_dir, "scratch"), *spat = tu_path(tu_dir, "scratch/burrow-spill-*");
	cr_assert_eq(mkdir(scr, 0755), 0);
	char *eargv[] = {(char *)tu_burrow(), "eval", d, "--checkpoint", last, "--mem", "1K", "--scratch", scr,
			 "--threads", "1", NULL};
	p = tu_start(errp, eargv);
	tu_wait_for(p, spat, errp);
	interrupt(p, SIGTERM, errp, "eval");
	cr_assert_str_empty(left = found(scr, "burrow-spill-*"), "left: %s", left);
	free(left);
	free(scr);
	free(spat);
	free(ck);
	free(last);
	free(log);
	free(ptmp);
	free(d);
	free(errp);
	free(g);
	free(pat);
}

/* kill -9 leaves OUT.tmp.PID, *.ckpt.tmp.PID and spill files; the next run of the same kind
 * removes those of dead processes of this user, never a live process's or another user's. */
Test(harden, rerun_sweeps_what_kill_9_left, .timeout = 200)
{
	char *errp = tu_path(tu_dir, "err"), *g = tu_path(tu_dir, "g"), *pat = tu_path(tu_dir, "g.tmp.*"), *left, *err;
	char *argv[] = {(char *)tu_burrow(), "gen", "rmat", g, "--scale", "21", "--feat-dim", "128",
			"--threads", "1", "--quiet", NULL};
	pid_t p = tu_start(errp, argv);
	tu_wait_for(p, pat, errp);
	cr_assert_eq(kill(p, SIGKILL), 0);
	cr_assert_eq(waitpid(p, NULL, 0), p);
	cr_assert_str_not_empty(left = found(tu_dir, "g.tmp.*"), "kill -9 left nothing to sweep");
	free(left);
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 300 --feat-dim 8 --quiet", tu_burrow(), g), 0, "%s", err);
	free(err);
	cr_assert_str_empty(left = found(tu_dir, "g.tmp.*"), "left: %s", left);
	free(left);

	/* checkpoint and spill temporaries: of a dead pid (swept), of this live test (kept), and a
	 * dead pid's file that belongs to another user (kept; only when the test runs as root) */
	pid_t dead = fork();
	if (dead == 0)
		_exit(0);
	cr_assert(dead > 0);
	waitpid(dead, NULL, 0);
	const long me = (long)getpid();
	char *ck = tu_path(tu_dir, "ck"), *scr = tu_path(tu_dir, "scratch");
	cr_assert_eq(tu_sh(NULL, NULL, "mkdir -p '%s' '%s'", ck, scr), 0);
	char *swept[] = {tu_path(ck, "last.ckpt.tmp.%ld", (long)dead), tu_path(ck, "best.ckpt.tmp.%ld", (long)dead),
			 tu_path(scr, "burrow-spill-%ld-0-layer0.npy", (long)dead),
			 tu_path(scr, "burrow-spill-%ld-1-layer0.npy.tmp.%ld", (long)dead, (long)dead)};
	char *kept[] = {tu_path(ck, "last.ckpt.tmp.%ld", me), tu_path(scr, "burrow-spill-%ld-0-layer0.npy", me),
			tu_path(scr, "burrow-spill-%ld-7-layer0.npy", (long)dead), tu_path(scr, "notes.txt")};
	for (size_t i = 0; i < 4; i++)
		cr_assert_eq(tu_sh(NULL, NULL, "echo x > '%s' && echo x > '%s'", swept[i], kept[i]), 0);
	const bool root = geteuid() == 0;
	if (root) /* another user's, though its pid is dead */
		cr_assert_eq(chown(kept[2], 65534, 65534), 0);
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --epochs 1 --hidden 8 --threads 1 --quiet --checkpoint '%s'",
			   tu_burrow(), g, ck), 0, "%s", err);
	free(err);
	char *best = tu_path(ck, "best.ckpt");
	cr_assert_eq(tu_sh(NULL, &err, "%s eval '%s' --checkpoint '%s' --mem 1K --scratch '%s' --threads 1", tu_burrow(),
			   g, best, scr), 0, "%s", err);
	free(err);
	for (size_t i = 0; i < 4; i++) {
		cr_assert(!tu_exists(swept[i]), "%s of a dead process is left", swept[i]);
		cr_assert(i == 2 && !root ? true : tu_exists(kept[i]), "%s was removed", kept[i]);
		free(swept[i]);
		free(kept[i]);
	}
	free(best);
	free(ck);
	free(scr);
	free(errp);
	free(g);
	free(pat);
}

/* A kill between an epoch's log line and its checkpoint's rename leaves the log one epoch
 * ahead of last.ckpt (made here exactly: the log line of epoch 3 appended to a 2-epoch run,
 * and half a line after it), after the config line of a resume killed before its first
 * epoch; --resume must log each epoch once, after the first run's config line and its own
 * (the one that configured nothing is cut). */
Test(harden, resume_logs_each_epoch_once)
{
	char *d = small("r"), *ck = tu_path(tu_dir, "ck"), *log = tu_path(tu_dir, "log.jsonl"), *err;
	const char *common = "--epochs %d --hidden 8 --threads 1 --quiet --checkpoint '%s' --log '%s'";
	char fmt[512];
	snprintf(fmt, sizeof fmt, "%%s train '%%s' %s", common);
	cr_assert_eq(tu_sh(NULL, &err, fmt, tu_burrow(), d, 2, ck, log), 0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, NULL, "head -1 '%s' | sed 's/\"burrow\":/\"killed\":/' >> '%s' && "
				       "grep '\"epoch\": 2,' '%s' | sed 's/\"epoch\": 2,/\"epoch\": 3,/' >> '%s' && "
				       "printf '{\"epoch\": 4, \"lo' >> '%s'", log, log, log, log, log), 0);
	snprintf(fmt, sizeof fmt, "%%s train '%%s' %s --resume", common);
	cr_assert_eq(tu_sh(NULL, &err, fmt, tu_burrow(), d, 5, ck, log), 0, "%s", err);
	free(err);
	size_t len;
	char *text = tu_read(log, &len);
	int seen[8] = {0}, e, configs = 0;
	for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		cr_assert(strchr(line, '\n'), "an incomplete line is left: %s", line);
		if (sscanf(line, "{\"epoch\": %d", &e) == 1) {
			cr_assert(e >= 1 && e <= 5, "%s", line);
			cr_assert_eq(configs, 1 + (e > 2), "epoch %d after %d config lines:\n%s", e, configs, text);
			seen[e]++;
		} else if (!strncmp(line, "{\"config\":", 10)) {
			cr_assert(!strstr(line, "\"killed\":"), "the killed resume's config line is left:\n%s", text);
			configs++;
			const char *want = configs == 1 ? "\"resumed_from\":null" : "last.ckpt\",\"after_epoch\":2,";
			cr_assert(strstr(line, want), "no %s in %s", want, line);
		} else {
			cr_assert(!strncmp(line, "{\"final\": true", 14), "not a log line: %.80s", line);
		}
	}
	cr_assert_eq(configs, 2, "%s", text);
	for (e = 1; e <= 5; e++)
		cr_assert_eq(seen[e], 1, "epoch %d is in the log %d times:\n%s", e, seen[e], text);
	free(text);
	free(log);
	free(ck);
	free(d);
}

/* --checkpoint-every 2: a run killed a quarter second after its third epoch's log line (its
 * epochs take a second: the kill lands in the fourth, after the third's save had there been
 * one) resumes from the last.ckpt of an even epoch (2; 4 only if the kill came late: never an
 * odd one, which the cadence skips, nor the last), its log cut there, and continues to the
 * straight run's losses and weights bit for bit. */
Test(harden, checkpoint_every_resumes_to_the_same_bits, .timeout = 240)
{
	char *d = tu_path(tu_dir, "g"), *ck = tu_path(tu_dir, "ck"), *a = tu_path(tu_dir, "a.jsonl"),
	     *b = tu_path(tu_dir, "b.jsonl"), *ep = tu_path(tu_dir, "err"), *err = NULL, *out = NULL;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 20000 --feat-dim 256 --classes 4 --quiet", tu_burrow(), d),
		     0, "%s", err);
	free(err);
	const char *common = "--full-graph --model gcn --layers 2 --hidden 512 --dropout 0.5 --lr 0.01 --threads 1 --quiet "
			     "--epochs 6";
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' %s --log '%s'", tu_burrow(), d, common, a), 0, "%s", err);
	free(err);
	char *cmd;
	cr_assert(asprintf(&cmd, "exec %s train '%s' %s --checkpoint '%s' --checkpoint-every 2 --log '%s'", tu_burrow(), d,
			   common, ck, b) > 0);
	char *argv[] = {"/bin/sh", "-c", cmd, NULL};
	const pid_t pid = tu_start(ep, argv);
	for (;;) { /* until epoch 3 is logged, then a kill */
		char *text = tu_read(b, NULL);
		const bool third = text && strstr(text, "{\"epoch\": 3,");
		free(text);
		if (third)
			break;
		int status;
		cr_assert_eq(waitpid(pid, &status, WNOHANG), 0, "the run ended before its third epoch");
		usleep(500);
	}
	usleep(250000);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert(tu_exists(ck));
	cr_assert_eq(tu_sh(&out, &err, "%s train '%s' %s --checkpoint '%s' --checkpoint-every 2 --resume --log '%s'",
			   tu_burrow(), d, common, ck, b),
		     0, "%s", err);
	int k = -1;
	const char *at = strstr(err, "after epoch ");
	cr_assert(at && sscanf(at, "after epoch %d", &k) == 1, "%s", err);
	cr_assert(k >= 2 && k < 6 && k % 2 == 0, "resumed after epoch %d", k);
	char la[8][40], lb[8][40];
	cr_assert_eq(tu_log_losses(a, la, 8), 6);
	cr_assert_eq(tu_log_losses(b, lb, 8), 6, "each epoch once in the resumed log");
	for (int e = 0; e < 6; e++)
		cr_assert_str_eq(la[e], lb[e], "epoch %d: straight %s, resumed after %d %s", e + 1, la[e], k, lb[e]);
	char *ta = tu_read(a, NULL), *tb = tu_read(b, NULL);
	const char *ca = strstr(ta, "weights_checksum"), *cb = strstr(strrchr(tb, '{'), "weights_checksum");
	cr_assert(ca && cb && !strncmp(ca, cb, 38), "final weights differ");
	free(ta), free(tb), free(out), free(err), free(cmd), free(d), free(ck), free(a), free(b), free(ep);
}

/* ------------------------------------------------------------ checkpoint headers */

/* Replace `from` by `to` in the JSON header of the checkpoint at path: the header re-padded
 * to 8 bytes, the trailer's total length and CRC-32 rewritten (format: docs/train.md), so
 * that only the edited value can make the file refused. */
static void ck_edit(const char *path, const char *from, const char *to)
{
	size_t len;
	unsigned char *raw = tu_read(path, &len);
	cr_assert(raw && len > 32);
	uint32_t hl;
	memcpy(&hl, raw + 12, 4);
	const char *h = (const char *)raw + 16;
	const char *at = memmem(h, hl, from, strlen(from));
	cr_assert(at, "%s is not in the header: %.400s", from, h);
	size_t jl = hl; /* the JSON without its padding */
	while (jl && h[jl - 1] == ' ')
		jl--;
	const size_t pre = (size_t)(at - h), fl = strlen(from), tl = strlen(to), njl = jl - fl + tl,
		     nhl = (njl + 7) & ~(size_t)7, body = len - 16 - hl - 16, nlen = 16 + nhl + body + 16;
	unsigned char *o = malloc(nlen);
	memcpy(o, raw, 12);
	const uint32_t h32 = (uint32_t)nhl;
	memcpy(o + 12, &h32, 4);
	memcpy(o + 16, h, pre);
	memcpy(o + 16 + pre, to, tl);
	memcpy(o + 16 + pre + tl, at + fl, jl - pre - fl);
	memset(o + 16 + njl, ' ', nhl - njl);
	memcpy(o + 16 + nhl, raw + 16 + hl, body);
	const uint64_t total = nlen;
	memcpy(o + nlen - 16, &total, 8);
	const uint32_t crc = (uint32_t)crc32(0L, o, (uInt)(nlen - 16));
	memcpy(o + nlen - 8, &crc, 4);
	memcpy(o + nlen - 4, "BWND", 4);
	FILE *f = fopen(path, "wb");
	cr_assert(f && fwrite(o, 1, nlen, f) == nlen);
	fclose(f);
	free(o);
	free(raw);
}

/* A checkpoint's epoch of 1e10 loaded as epoch -2147483648 (a cast before the range check);
 * a header the trainer refuses (hidden 0) was reported as "eval: train: hidden width ..."
 * without naming the file. Both are refused with one line naming the checkpoint. */
Test(harden, bad_checkpoint_headers_refused_naming_the_file)
{
	char *d = small("k"), *ck = tu_path(tu_dir, "ck"), *last = tu_path(ck, "last.ckpt"), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --epochs 2 --hidden 8 --threads 1 --quiet --checkpoint '%s'",
			   tu_burrow(), d, ck), 0, "%s", err);
	free(err);
	char *keep = tu_path(tu_dir, "keep.ckpt");
	cr_assert_eq(tu_sh(NULL, NULL, "cp '%s' '%s'", last, keep), 0);
	/* the editor itself keeps a checkpoint valid: 2.0 is the integer 2 (the header grows by 2) */
	ck_edit(last, "\"epoch\":2,", "\"epoch\":2.0,");
	char cmd[1024];
	cr_assert_eq(tu_sh(NULL, &err, "%s eval '%s' --checkpoint '%s' --threads 1", tu_burrow(), d, last), 0,
		     "edited but valid checkpoint refused: %s", err);
	free(err);
	static const struct {
		const char *from, *to, *what;
	} cases[] = {
		{"\"epoch\":2.0,", "\"epoch\":1e10,", "'epoch' is 1e+10, not an integer"},
		{"\"epoch\":2.0,", "\"epoch\":-1e300,", "'epoch' is -1e+300, not an integer"},
		{"\"hidden\":8,", "\"hidden\":0,", "hidden"}, /* eval: "hidden width"; train: "hidden 0" */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_assert_eq(tu_sh(NULL, NULL, "cp '%s' '%s'", keep, last), 0);
		ck_edit(last, "\"epoch\":2,", "\"epoch\":2.0,");
		ck_edit(last, cases[i].from, cases[i].to);
		const char *cmds[] = {"eval '%s' --checkpoint '%s' --threads 1",
				      "train '%s' --epochs 3 --hidden 8 --threads 1 --quiet --resume --checkpoint '%s'"};
		for (int k = 0; k < 2; k++) {
			snprintf(cmd, sizeof cmd, cmds[k], d, k ? ck : last);
			int rc = tu_sh(NULL, &err, "%s %s", tu_burrow(), cmd);
			cr_assert_eq(rc, 1, "%s: exit %d: %s", cmd, rc, err);
			cr_assert(strstr(err, cases[i].what) && strstr(err, "last.ckpt"), "%s: %s", cmd, err);
			cr_assert(strchr(err, '\n') == err + strlen(err) - 1, "%s: not one line: %s", cmd, err);
			free(err);
		}
	}
	free(keep);
	free(last);
	free(ck);
	free(d);
}

/* ------------------------------------------------------------ hardening round 2 (issue 37) */

/* Write n bytes to dir/name; caller frees the path. */
static char *put(const char *name, const void *data, size_t n)
{
	char *p = tu_path(tu_dir, "%s", name);
	FILE *f = fopen(p, "wb");
	cr_assert(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "%s", p);
	return p;
}

/* An edge list that is only a comment (plain, gzipped, with a NUL, indented) crashed import
 * in bw_csv_next_line: a call after the end of the stream read through a NULL block. Now it
 * is refused in one line naming the file, and nothing is written. */
Test(harden, comment_only_edge_list_refused)
{
	static const struct {
		const char *name, *data;
		size_t n;
	} cases[] = {{"a.csv", "#", 1}, {"b.csv", "#\0\n", 3}, {"c.csv", "  #x", 4}, {"d.csv", "# x\n\n#y\n", 8}};
	char cmd[1024];
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char *e = put(cases[i].name, cases[i].data, cases[i].n), *out = tu_path(tu_dir, "out%zu", i);
		snprintf(cmd, sizeof cmd, "import '%s' --edges '%s' --quiet", out, e);
		refused(out, cases[i].name, cmd);
		cr_assert(!tu_exists(out), "%s", cmd);
		cr_assert_eq(tu_sh(NULL, NULL, "gzip -kf '%s'", e), 0);
		snprintf(cmd, sizeof cmd, "import '%s' --edges '%s.gz' --quiet", out, e);
		refused(out, "no edges", cmd);
		cr_assert(!tu_exists(out), "%s", cmd);
		free(e);
		free(out);
	}
}

/* The line reader itself: a call after the end of the stream ends again (the import's header
 * check, then its edge loop, both call it). */
Test(harden, csv_next_line_after_the_end)
{
	char *e = put("e.csv", "#", 1);
	const bw_src src = {.name = "e.csv", .path = e, .fd = -1};
	bw_csv c;
	bool more = true, skipped = true;
	cr_assert_eq(bw_csv_open(&c, &src, false, 0, true), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_csv_header(&c, false, &skipped), 0);
	cr_assert(!skipped);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(bw_csv_next_line(&c, &more), 0);
		cr_assert(!more);
	}
	bw_csv_close(&c);
	free(e);
}

/* A FIFO where a dataset, parts or checkpoint file should be hung info, train, partition
 * and eval in the open. Each input is opened without blocking and must be a regular file:
 * refused in one line naming it. */
Test(harden, fifo_inputs_refused, .timeout = 300)
{
	static const char *const files[] = {"meta.json", "indptr.npy", "indices.npy", "features.npy", "labels.npy",
					    "split/train.npy"};
	static const char *const cmds[] = {"info '%s'", "info '%s' --verify", "train '%s' --epochs 1 --quiet",
					   "partition '%s' --parts 2 --quiet"};
	char *d = small("d"), cmd[1024], what[256];
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char *f = tu_path(tu_dir, "f%zu", i), *p = tu_path(f, "%s", files[i]);
		cr_assert_eq(tu_sh(NULL, NULL, "cp -r '%s' '%s' && rm '%s' && mkfifo '%s'", d, f, p, p), 0);
		snprintf(what, sizeof what, "%s: not a regular file (a FIFO)", p);
		for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
			snprintf(cmd, sizeof cmd, cmds[c], f);
			refused(f, what, cmd);
		}
		free(p);
		free(f);
	}
	/* a parts directory: its meta.json (which the command line reads to pick the mode) and a
	 * part's orig_ids.npy */
	char *parts = tu_path(d, "parts-2"), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	static const char *const pfiles[] = {"part-0/orig_ids.npy", "meta.json"};
	for (size_t i = 0; i < 2; i++) {
		char *p = tu_path(parts, "%s", pfiles[i]);
		cr_assert_eq(tu_sh(NULL, NULL, "rm '%s' && mkfifo '%s'", p, p), 0);
		snprintf(what, sizeof what, "%s: not a regular file (a FIFO)", p);
		snprintf(cmd, sizeof cmd, "info '%s' --verify", parts);
		refused(parts, what, cmd);
		free(p);
	}
	/* a checkpoint, and import's inputs */
	char *ck = tu_path(tu_dir, "ck.fifo"), *e = tu_path(tu_dir, "e.txt");
	cr_assert_eq(tu_sh(NULL, NULL, "mkfifo '%s' && printf '0 1\\n' > '%s'", ck, e), 0);
	snprintf(what, sizeof what, "%s: not a regular file (a FIFO)", ck);
	snprintf(cmd, sizeof cmd, "eval '%s' --checkpoint '%s'", d, ck);
	refused(d, what, cmd);
	snprintf(cmd, sizeof cmd, "import '%s/imp' --edges '%s' --quiet", tu_dir, ck);
	refused(d, what, cmd);
	snprintf(cmd, sizeof cmd, "import '%s/imp' --edges '%s' --features '%s' --quiet", tu_dir, e, ck);
	refused(d, what, cmd);
	free(ck);
	free(e);
	free(parts);
	free(d);
}

/* Rewrite the .npy at path with a header that puts its data at byte 129 (a multiple of no
 * element size above 1), the elements unchanged. */
static void misalign(const char *path)
{
	bw_npy h;
	void *data;
	cr_assert_eq(bw_npy_load(path, &h, &data), 0, "%s", burrow_last_error());
	char dict[160], shape[64] = "";
	for (int i = 0, k = 0; i < h.ndim; i++)
		k += snprintf(shape + k, sizeof shape - (size_t)k, "%lld,", (long long)h.shape[i]);
	const char *descr = h.dtype == BURROW_DTYPE_I64 ? "<i8" : h.dtype == BURROW_DTYPE_I32 ? "<i4" : "<f4";
	int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, shape);
	cr_assert(n < 118);
	memset(dict + n, ' ', (size_t)(118 - n));
	dict[118] = '\n'; /* 10 + 119 = 129 bytes before the data */
	FILE *f = fopen(path, "wb");
	const unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 119, 0};
	const size_t bytes = (size_t)bw_npy_data_bytes(&h);
	cr_assert(f && fwrite(pre, 1, 10, f) == 10 && fwrite(dict, 1, 119, f) == 119 && fwrite(data, 1, bytes, f) == bytes &&
		  fclose(f) == 0);
	bw_free(data);
}

/* A .npy whose data offset is not a multiple of its element size (misaligned loads from the
 * mapping under UBSan) was accepted for indptr, indices, labels and the splits, and for the
 * features by info --verify and partition. One rule in the .npy reader refuses it for all. */
Test(harden, misaligned_arrays_refused_by_every_command, .timeout = 300)
{
	static const char *const files[] = {"indptr.npy", "indices.npy", "labels.npy", "split/train.npy",
					    "split/valid.npy", "features.npy"};
	static const char *const cmds[] = {"info '%s' --verify", "train '%s' --epochs 1 --quiet",
					   "partition '%s' --parts 2 --quiet"};
	char *d = small("d"), cmd[1024], what[256];
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		char *m = tu_path(tu_dir, "m%zu", i), *p = tu_path(m, "%s", files[i]);
		cr_assert_eq(tu_sh(NULL, NULL, "cp -r '%s' '%s'", d, m), 0);
		misalign(p);
		snprintf(what, sizeof what, "%s: data offset 129 is not a multiple of the element size", p);
		for (size_t c = 0; c < sizeof cmds / sizeof *cmds; c++) {
			snprintf(cmd, sizeof cmd, cmds[c], m);
			refused(m, what, cmd);
		}
		free(p);
		free(m);
	}
	free(d);
}

/* Run `script` (sh) in a user and mount namespace where tu_dir/full is a 64 KiB tmpfs filled
 * to the brim; its stdout into *out. False (and a skip) where such a namespace is refused. */
static bool on_full_disk(char **out, const char *script)
{
	char *full = tu_path(tu_dir, "full"), *err;
	cr_assert_eq(mkdir(full, 0755), 0);
	int rc = tu_sh(out, &err,
		       "unshare -rm sh -c 'mount -t tmpfs -o size=64k none \"%s\" || exit 99; "
		       "dd if=/dev/zero of=\"%s/fill\" bs=4k 2>/dev/null; %s'",
		       full, full, script);
	free(full);
	if (rc == 99 || (rc != 0 && strstr(err, "unshare"))) {
		cr_skip_test("no user and mount namespace for a small tmpfs here: %s", err);
		free(err);
		return false;
	}
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	return true;
}

/* A full disk: --log's per-epoch lines and what a command prints to standard output end the
 * run in one line with exit 1 (they exited 0 with a 0-byte log); a checkpoint that does not
 * fit leaves no file and no empty folder; --checkpoint naming a file is refused at the start,
 * not after the first epoch. */
Test(harden, full_disk_ends_in_one_line, .timeout = 300)
{
	char *d = small("d"), cmd[1024];
	if (tu_exists("/dev/full")) {
		snprintf(cmd, sizeof cmd, "train '%s' --epochs 2 --quiet --log /dev/full", d);
		refused(d, "/dev/full: write failed: No space left on device", cmd);
		snprintf(cmd, sizeof cmd, "bench io '%s' --rows 1000 --no-fio --json > /dev/full", d);
		refused(d, "bench: standard output: write failed: No space left on device", cmd);
		snprintf(cmd, sizeof cmd, "info '%s' > /dev/full", d);
		refused(d, "info: standard output: write failed", cmd);
	}
	char *f = tu_path(tu_dir, "a-file"), *out, *err;
	cr_assert_eq(tu_sh(NULL, NULL, "echo x > '%s'", f), 0);
	cr_assert_eq(tu_sh(&out, &err, "%s train '%s' --epochs 1 --checkpoint '%s'", tu_burrow(), d, f), 1);
	cr_assert(strstr(err, "a-file: not a directory") && strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
	cr_assert_str_empty(out, "trained before refusing: %s", out);
	free(out);
	free(err);
	char script[2048];
	snprintf(script, sizeof script,
		 "%s train \"%s\" --epochs 1 --quiet --checkpoint \"%s/full/new/ck\" >/dev/null 2>\"%s/ck.err\"; echo $?; "
		 "%s train \"%s\" --epochs 1 --quiet --log \"%s/full/log\" >/dev/null 2>\"%s/log.err\"; echo $?; "
		 "ls -A \"%s/full\"",
		 tu_burrow(), d, tu_dir, tu_dir, tu_burrow(), d, tu_dir, tu_dir, tu_dir);
	if (on_full_disk(&out, script)) {
		/* exit 1, 1, and only the filler and the (empty) log are left */
		cr_assert_str_eq(out, "1\n1\nfill\nlog\n");
		char *e1 = tu_path(tu_dir, "ck.err"), *e2 = tu_path(tu_dir, "log.err"), *m1 = tu_read(e1, NULL),
		     *m2 = tu_read(e2, NULL);
		cr_assert(strstr(m1, "full/new/ck/") && strstr(m1, ".ckpt: write: No space left on device") &&
				  !strstr(m1, ".tmp.") && strchr(m1, '\n') == m1 + strlen(m1) - 1,
			  "%s", m1);
		cr_assert(strstr(m2, "full/log: write failed: No space left on device") &&
				  strchr(m2, '\n') == m2 + strlen(m2) - 1,
			  "%s", m2);
		free(m1);
		free(m2);
		free(e1);
		free(e2);
		free(out);
	}
	free(f);
	free(d);
}

/* A part's orig_ids.npy with an id repeated (in the part or across parts) or outside the
 * input's ids passed info --verify and training, and reached users through orig_ids and
 * predictions mapped back. burrow_part_open refuses a repeat in the part and an id out of
 * range; info --verify also a repeat across parts. */
Test(harden, orig_ids_checked, .timeout = 300)
{
	char *d = tu_path(tu_dir, "d"), *err, cmd[1024];
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 3000 --feat-dim 8 --classes 3 --quiet && "
				       "%s partition '%s' --parts 2 --quiet",
			   tu_burrow(), d, tu_burrow(), d),
		     0, "%s", err);
	free(err);
	char *parts = tu_path(d, "parts-2");
	static const struct {
		int part;
		int64_t at, value; /* value < 0: -1 - the part-0 entry to copy */
		const char *what;
		bool at_open;
	} cases[] = {
		{0, 0, 10000000, "part-0/orig_ids.npy: entry 0 (id 10000000) is outside the input's [0, 3000)", true},
		{0, 5, -1 - 4, "part-0/orig_ids.npy: entry 5 repeats id", true},
		{1, 7, -1 - 3, "part-1/orig_ids.npy: entry 7 (id", false},
	};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char *copy = tu_path(tu_dir, "p%zu", c), rel[64];
		cr_assert_eq(tu_sh(NULL, NULL, "cp -r '%s' '%s'", parts, copy), 0);
		int64_t v = cases[c].value;
		if (v < 0) { /* an id part 0 owns */
			char *p0 = tu_path(copy, "part-0/orig_ids.npy");
			bw_npy h;
			void *data;
			cr_assert_eq(bw_npy_load(p0, &h, &data), 0);
			v = ((int64_t *)data)[-1 - v];
			bw_free(data);
			free(p0);
		}
		snprintf(rel, sizeof rel, "part-%d/orig_ids.npy", cases[c].part);
		poke(copy, rel, cases[c].at, v);
		snprintf(cmd, sizeof cmd, "info '%s' --verify", copy);
		refused(copy, cases[c].what, cmd);
		burrow_parts *ps;
		burrow_part *p;
		cr_assert_eq(burrow_parts_open(&ps, copy), 0, "%s", burrow_last_error());
		int st = burrow_part_open(&p, ps, cases[c].part);
		if (cases[c].at_open) {
			cr_assert_eq(st, BURROW_E_FORMAT, "case %zu: %d", c, st);
			cr_assert(strstr(burrow_last_error(), cases[c].what), "%s", burrow_last_error());
		} else {
			cr_assert_eq(st, 0, "%s", burrow_last_error());
			burrow_part_close(p);
		}
		burrow_parts_close(ps);
		free(copy);
	}
	free(parts);
	free(d);
}

/* The library names its own file mappings by address (what the CLI's SIGBUS handler asks),
 * and only while they are mapped. */
Test(harden, mapped_file_names_the_library_mappings)
{
	char *d = small("d"), buf[4096];
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const burrow_csr *g = burrow_dataset_graph(ds);
	const char *in_indices = (const char *)g->indices + 4, *in_indptr = (const char *)(g->indptr + g->num_nodes);
	cr_assert_eq(burrow_mapped_file(in_indices, buf, sizeof buf), 1);
	cr_assert(strstr(buf, "/d/indices.npy"), "%s", buf);
	cr_assert_eq(burrow_mapped_file(in_indptr, buf, sizeof buf), 1);
	cr_assert(strstr(buf, "/d/indptr.npy"), "%s", buf);
	cr_assert_eq(burrow_mapped_file(buf, buf, sizeof buf), 0); /* the stack is no mapping of a file */
	burrow_dataset_close(ds);
	cr_assert_eq(burrow_mapped_file(in_indices, buf, sizeof buf), 0);
	free(d);
}

/* A mapped array truncated while training reads it (indices.npy in the sampler, labels.npy in
 * the batch builder, features.npy under --engine mmap, indptr.npy in full-graph training)
 * killed the run with SIGBUS (exit 135, no message). It now ends in one line naming the file,
 * exit 1, and the temporaries are removed. */
Test(harden, truncated_mapping_ends_in_one_line, .timeout = 300)
{
	char *d = tu_path(tu_dir, "d"), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 100000 --feat-dim 16 --quiet", tu_burrow(), d), 0, "%s",
		     err);
	free(err);
	static const struct {
		const char *file, *opt, *opt2;
	} cases[] = {{"indices.npy", "--seed=1", "--seed=1"},
		     {"labels.npy", "--seed=1", "--seed=1"},
		     {"features.npy", "--engine=mmap", "--cache=0"}, /* else every row is cached after epoch 1 */
		     {"indptr.npy", "--full-graph", "--seed=1"}};
	for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
		char *e = tu_path(tu_dir, "err%zu", c), *log = tu_path(tu_dir, "log%zu", c),
		     *f = tu_path(d, "%s", cases[c].file), logopt[4200];
		snprintf(logopt, sizeof logopt, "--log=%s", log);
		char *argv[] = {(char *)tu_burrow(), "train", d, "--epochs=100000", "--layers=2", "--quiet",
				(char *)cases[c].opt, (char *)cases[c].opt2, logopt, NULL};
		pid_t p = tu_start(e, argv);
		tu_wait_for(p, log, e);
		usleep(300000);
		alarm(60); /* a run the truncation does not end fails the test, not its suite's timeout */
		tu_truncate(f, 4096); /* past the header: every row of the array is gone */
		int status;
		const pid_t w = waitpid(p, &status, 0);
		alarm(0);
		cr_assert_eq(w, p);
		char *msg = tu_read(e, NULL), want[4300];
		cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1, "%s: status %d: %s", cases[c].file, status, msg);
		snprintf(want, sizeof want, "burrow: train: %s: a mapped read failed: the file shrank under the run", f);
		cr_assert(strstr(msg, want) == msg && strchr(msg, '\n') == msg + strlen(msg) - 1, "%s", msg);
		free(msg);
		char *rm = NULL;
		cr_assert_eq(tu_sh(&rm, NULL, "find '%s' -name '*.tmp.*'", tu_dir), 0);
		cr_assert_str_empty(rm, "left %s", rm);
		free(rm);
		/* the next case needs the file whole again */
		cr_assert_eq(tu_sh(NULL, &err, "rm -rf '%s' && %s gen csbm '%s' --nodes 100000 --feat-dim 16 --quiet", d,
				   tu_burrow(), d),
			     0, "%s", err);
		free(err);
		free(e);
		free(log);
		free(f);
	}
	free(d);
}

/* A node_offsets in a parts meta.json that disagrees with a part's arrays said "found int64
 * with 1 dimensions"; it now gives the length found. */
Test(harden, lying_node_offsets_say_the_length_found, .timeout = 120)
{
	char *d = small("d"), *err, cmd[1024];
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	char *parts = tu_path(d, "parts-2");
	burrow_parts *ps;
	cr_assert_eq(burrow_parts_open(&ps, parts), 0, "%s", burrow_last_error());
	const long long mid = (long long)burrow_parts_get_info(ps)->node_offsets[1];
	burrow_parts_close(ps);
	cr_assert_eq(tu_sh(NULL, NULL,
			   "sed -i 's/\"node_offsets\":[[:space:]]*\\[0,[[:space:]]*%lld,/\"node_offsets\": [0, %lld,/' "
			   "'%s/meta.json'",
			   mid,
			   mid - 1, parts),
		     0);
	char what[512];
	snprintf(what, sizeof what, "part-0/orig_ids.npy: expected an int64 vector of %lld entries, found int64 [%lld]",
		 mid - 1, mid);
	snprintf(cmd, sizeof cmd, "info '%s' --verify", parts);
	refused(parts, what, cmd);
	free(parts);
	free(d);
}

/* ------------------------------------------------------------ messages (issue 37, finding 7) */

/* `burrow CMD` must exit 1 with one line on stderr holding `want` and not `unwanted`. */
static void one_line(const char *cmd, const char *want, const char *unwanted)
{
	char *err;
	int rc = tu_sh(NULL, &err, "timeout -s KILL 60 %s %s", tu_burrow(), cmd);
	cr_assert_eq(rc, 1, "exit %d for %s: %s", rc, cmd, err);
	cr_assert(strstr(err, want), "%s: message lacks '%s': %s", cmd, want, err);
	cr_assert(!unwanted || !strstr(err, unwanted), "%s: message says '%s': %s", cmd, unwanted, err);
	cr_assert(strchr(err, '\n') == err + strlen(err) - 1, "%s: not one line: %s", cmd, err);
	free(err);
}

/* A dataset without labels or features was reported by eval as "CK: the checkpoint's
 * options: ..."; the line names the dataset's directory and what it lacks, not the
 * checkpoint. A checkpoint whose model the trainer refuses is still named. */
Test(harden, eval_blames_the_dataset_not_the_checkpoint)
{
	char *d = small("e"), *ck = tu_path(tu_dir, "ck"), *err, cmd[2048], want[1024];
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --epochs 1 --hidden 8 --threads 1 --quiet --checkpoint '%s'",
			   tu_burrow(), d, ck), 0, "%s", err);
	free(err);
	static const struct {
		const char *key, *what;
	} cases[] = {{"num_classes", "the dataset has no labels"}, {"feat_dim", "the dataset has no features"}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *e = tu_path(tu_dir, "e%zu", c);
		cr_assert_eq(tu_sh(NULL, NULL, "cp -r '%s' '%s' && sed -i 's/\"%s\":[[:space:]]*[0-9]*/\"%s\": 0/' '%s/meta.json'",
				   d, e, cases[c].key, cases[c].key, e), 0);
		snprintf(cmd, sizeof cmd, "eval '%s' --checkpoint '%s' --threads 1", e, ck);
		snprintf(want, sizeof want, "burrow: eval: %s: %s", e, cases[c].what);
		one_line(cmd, want, "checkpoint");
		free(e);
	}
	free(ck);
	free(d);
}

/* A checkpoint trained on another dataset of the same shapes was accepted by eval and
 * --resume: a different name or node count is refused in one line naming both; a header
 * without them (by hand) still loads; "parts" (distributed training's record before it named
 * the input) checks the node count only. */
Test(harden, checkpoint_of_another_dataset_refused, .timeout = 240)
{
	char *d = small("a"), *ck = tu_path(tu_dir, "ck"), *last = tu_path(ck, "last.ckpt"), *err, cmd[2048];
	char *other = tu_path(tu_dir, "other"), *big = tu_path(tu_dir, "big");
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --epochs 1 --hidden 8 --threads 1 --quiet --checkpoint '%s'",
			   tu_burrow(), d, ck), 0, "%s", err);
	free(err);
	/* the same shapes under another name; the same name with one node more */
	cr_assert_eq(tu_sh(NULL, NULL, "cp -r '%s' '%s' && sed -i 's/\"name\":[[:space:]]*\"csbm\"/\"name\": \"other\"/' "
				       "'%s/meta.json'", d, other, other), 0);
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 301 --feat-dim 8 --classes 3 --quiet", tu_burrow(), big),
		     0, "%s", err);
	free(err);
	static const struct {
		const char *dir, *what;
	} cases[] = {{"other", "the model trained on dataset 'csbm' (300 nodes); this dataset is 'other' (300 nodes)"},
		     {"big", "the model trained on dataset 'csbm' (300 nodes); this dataset is 'csbm' (301 nodes)"}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *e = tu_path(tu_dir, "%s", cases[c].dir), want[4400];
		snprintf(want, sizeof want, "%s: %s", last, cases[c].what);
		snprintf(cmd, sizeof cmd, "eval '%s' --checkpoint '%s' --threads 1", e, last);
		one_line(cmd, want, NULL);
		snprintf(cmd, sizeof cmd, "train '%s' --epochs 2 --hidden 8 --threads 1 --quiet --checkpoint '%s' --resume", e, ck);
		one_line(cmd, want, NULL);
		free(e);
	}
	snprintf(cmd, sizeof cmd, "%s eval '%s' --checkpoint '%s' --threads 1", tu_burrow(), d, last);
	cr_assert_eq(tu_sh(NULL, &err, "%s", cmd), 0, "its own dataset: %s", err);
	free(err);
	/* "parts": the node count only */
	char *keep = tu_path(tu_dir, "keep.ckpt");
	cr_assert_eq(tu_sh(NULL, NULL, "cp '%s' '%s'", last, keep), 0);
	ck_edit(last, "\"dataset\":\"csbm\"", "\"dataset\":\"parts\"");
	snprintf(cmd, sizeof cmd, "%s eval '%s' --checkpoint '%s' --threads 1", tu_burrow(), other, last);
	cr_assert_eq(tu_sh(NULL, &err, "%s", cmd), 0, "'parts', 300 nodes on 'other': %s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "eval '%s' --checkpoint '%s' --threads 1", big, last);
	one_line(cmd, "trained on dataset 'parts' (300 nodes); this dataset is 'csbm' (301 nodes)", NULL);
	/* without the fields: loads anywhere its shapes fit */
	cr_assert_eq(tu_sh(NULL, NULL, "cp '%s' '%s'", keep, last), 0);
	ck_edit(last, "\"dataset\":\"csbm\",\"num_nodes\":300,", "");
	for (int k = 0; k < 2; k++) {
		snprintf(cmd, sizeof cmd, "%s eval '%s' --checkpoint '%s' --threads 1", tu_burrow(), k ? big : other, last);
		cr_assert_eq(tu_sh(NULL, &err, "%s", cmd), 0, "a header without the dataset: %s", err);
		free(err);
	}
	free(keep);
	free(big);
	free(other);
	free(last);
	free(ck);
	free(d);
}

/* --resume with another --lr went on silently with the command line's: one line names the
 * checkpoint's values and the run's; none when they agree. */
Test(harden, resume_with_another_lr_says_so)
{
	char *d = small("l"), *ck = tu_path(tu_dir, "ck"), *err, want[4400];
	const char *run = "%s train '%s' --epochs %d --hidden 8 --threads 1 --quiet --checkpoint '%s' %s";
	cr_assert_eq(tu_sh(NULL, &err, run, tu_burrow(), d, 1, ck, "--lr 0.01 --weight-decay 0.001"), 0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, run, tu_burrow(), d, 2, ck, "--lr 0.005 --weight-decay 0.001 --resume"), 0, "%s", err);
	snprintf(want, sizeof want, "burrow: train: warning: %s/last.ckpt trained with lr 0.01, this run uses lr 0.005 (", ck);
	cr_assert(strstr(err, want), "%s", err);
	cr_assert(strchr(strstr(err, want), '\n') == err + strlen(err) - 1, "not one line: %s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, run, tu_burrow(), d, 3, ck, "--lr 0.005 --weight-decay 0.001 --resume"), 0, "%s", err);
	cr_assert(!strstr(err, "warning"), "the same values: %s", err);
	free(err);
	free(ck);
	free(d);
}

/* `burrow train DIR/parts-2` without mpirun started MPI as one rank, which then aborted with
 * seven lines of MPI_ABORT text; the part count against the job's ranks is checked before
 * MPI starts: one line (rank 0; the others exit 1 in silence). */
Test(harden, parts_without_mpirun_refused_in_one_line)
{
	char *d = small("p"), *parts = tu_path(d, "parts-2"), *err, cmd[2048], want[4400];
	cr_assert_eq(tu_sh(NULL, &err, "%s partition '%s' --parts 2 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	snprintf(cmd, sizeof cmd, "train '%s' --epochs 1 --threads 1", parts);
	snprintf(want, sizeof want, "burrow: train: %s holds 2 parts, one MPI rank each: start it as mpirun -np 2 burrow train %s",
		 parts, parts);
	one_line(cmd, want, NULL);
	/* a launcher's environment with another rank count (MPI never starts, so none is needed) */
	snprintf(cmd, sizeof cmd, "env OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=0 %s train '%s' --epochs 1", tu_burrow(),
		 parts);
	int rc = tu_sh(NULL, &err, "timeout -s KILL 60 %s", cmd);
	snprintf(want, sizeof want, "burrow: train: %s holds 2 parts, but 3 ranks were started (mpirun -np 2)\n", parts);
	cr_assert(rc == 1 && !strcmp(err, want), "exit %d: %s", rc, err);
	free(err);
	rc = tu_sh(NULL, &err, "timeout -s KILL 60 env OMPI_COMM_WORLD_SIZE=3 OMPI_COMM_WORLD_RANK=1 %s train '%s' --epochs 1",
		   tu_burrow(), parts);
	cr_assert(rc == 1 && !*err, "rank 1: exit %d: %s", rc, err);
	free(err);
	free(parts);
	free(d);
}

/* Set meta.json's "name" in dir to name (through cJSON: escaped as JSON). */
static void set_name(const char *dir, const char *name)
{
	char *m = tu_path(dir, "meta.json");
	char *text = tu_read(m, NULL);
	cJSON *j = cJSON_Parse(text);
	cr_assert(cJSON_IsObject(j), "%s", m);
	cJSON_ReplaceItemInObjectCaseSensitive(j, "name", cJSON_CreateString(name));
	char *out = cJSON_Print(j);
	FILE *f = fopen(m, "w");
	cr_assert(f && fputs(out, f) >= 0 && fclose(f) == 0, "%s", m);
	cJSON_free(out);
	cJSON_Delete(j);
	free(text);
	free(m);
}

/* Text-mode info printed meta.json's name raw: a newline broke the line, an escape sequence
 * reached the terminal. Names are printed escaped (as C writes them), for a dataset, a parts
 * directory's input, and in train's first line. */
Test(harden, text_output_escapes_names_from_files, .timeout = 120)
{
	char *d = small("n"), *out, *err, want[4400];
	set_name(d, "a\nb\x1b[31mc\\d\x7f");
	const char *shown = "a\\nb\\x1b[31mc\\\\d\\x7f";
	cr_assert_eq(tu_sh(&out, &err, "%s info '%s'", tu_burrow(), d), 0, "%s", err);
	snprintf(want, sizeof want, "dataset    %s (%s)\n", d, shown);
	cr_assert(!strncmp(out, want, strlen(want)), "%s", out);
	cr_assert(!strchr(out, '\x1b') && !strchr(out, '\x7f'), "%s", out);
	free(out);
	free(err);
	cr_assert_eq(tu_sh(&out, &err, "%s partition '%s' --parts 2 --quiet && %s info '%s/parts-2'", tu_burrow(), d,
			   tu_burrow(), d), 0, "%s", err);
	snprintf(want, sizeof want, "\ndataset    %s (%s)\n", d, shown);
	cr_assert(strstr(out, want) && !strchr(out, '\x1b'), "%s", out);
	free(out);
	free(err);
	char *ck = tu_path(tu_dir, "ck"), *plain = small("n2"), cmd[4400];
	cr_assert_eq(tu_sh(&out, &err, "%s train '%s' --epochs 1 --hidden 8 --threads 1 --quiet --checkpoint '%s'",
			   tu_burrow(), d, ck), 0, "%s", err);
	snprintf(want, sizeof want, "burrow train: sage on %s (", shown);
	cr_assert(strstr(out, want) == out && !strchr(out, '\x1b'), "%s", out);
	free(out);
	free(err);
	/* a library message quoting the name: one line too */
	snprintf(cmd, sizeof cmd, "eval '%s' --checkpoint '%s' --threads 1", plain, ck);
	snprintf(want, sizeof want, "trained on dataset '%s' (300 nodes)", shown);
	one_line(cmd, want, "\x1b");
	free(plain);
	free(ck);
	free(d);
}
