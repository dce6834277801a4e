/* test_cli.c: the burrow command as a user runs it: exit codes, one-line errors, gen + info. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(cli, 120);

static int lines(const char *s)
{
	int n = 0;
	for (; s && *s; s++)
		n += *s == '\n';
	return n;
}

Test(cli, version_and_help)
{
	char *out, *err;
	cr_assert_eq(tu_sh(&out, &err, "%s --version", tu_burrow()), 0);
	char want[64];
	snprintf(want, sizeof want, "burrow %s", burrow_version());
	cr_assert(strstr(out, want), "%s", out);
	free(out);
	free(err);
	cr_assert_eq(tu_sh(&out, &err, "%s --help", tu_burrow()), 0);
	cr_assert(strstr(out, "gen") && strstr(out, "info"), "%s", out);
	free(out);
	free(err);
	const char *cmds[] = {"gen", "info", "bench"};
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(tu_sh(&out, &err, "%s %s --help", tu_burrow(), cmds[i]), 0, "%s --help: %s", cmds[i], err);
		cr_assert(strstr(out, "usage: burrow"), "%s", out);
		free(out);
		free(err);
	}
}

Test(cli, usage_errors_exit_2_with_one_line)
{
	const char *bad[] = {"", "frobnicate", "gen", "gen csbm", "gen csbm OUT --bogus", "gen csbm OUT --nodes",
			     "gen csbm OUT --nodes x", "gen rmat OUT --nodes 5", "gen papers OUT --scale 3",
			     "gen rmat OUT --fraction 0.5", "gen papers OUT --fraction 5", "gen papers OUT --mem x",
			     "gen tree OUT", "info", "info a b"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char *err;
		int rc = tu_sh(NULL, &err, "cd '%s' && %s %s", tu_dir, tu_burrow(), bad[i]);
		cr_assert_eq(rc, 2, "'burrow %s' exited %d: %s", bad[i], rc, err);
		if (*bad[i]) {
			cr_assert_eq(lines(err), 1, "'burrow %s' printed: %s", bad[i], err);
			cr_assert(!strncmp(err, "burrow: ", 8), "%s", err);
		}
		free(err);
	}
	char *err;
	tu_sh(NULL, &err, "%s gen csbm %s/o --bogus", tu_burrow(), tu_dir);
	cr_assert(strstr(err, "burrow: gen: unknown option '--bogus'"), "%s", err);
	free(err);
	/* nothing written where the commands ran (tu_dir, not the runner's directory) */
	char *out_dir = tu_path(tu_dir, "OUT"), *o = tu_path(tu_dir, "o");
	cr_assert(!tu_exists(out_dir), "%s", out_dir);
	cr_assert(!tu_exists(o), "%s", o);
	free(out_dir);
	free(o);
}

Test(cli, gen_then_info)
{
	char *out, *err;
	char *p = tu_path(tu_dir, "csbm");
	cr_assert_eq(tu_sh(&out, &err, "%s gen csbm %s --nodes 5000 --feat-dim 16 --classes 4 --seed 3", tu_burrow(), p),
		     0, "%s", err);
	free(out);
	free(err);
	cr_assert_eq(tu_sh(&out, &err, "%s info %s --verify", tu_burrow(), p), 0, "%s", err);
	cr_assert(strstr(out, "nodes      5,000"), "%s", out);
	cr_assert(strstr(out, "features   16 x float32"), "%s", out);
	cr_assert(strstr(out, "classes    4"), "%s", out);
	cr_assert(strstr(out, "splits     train 3000  valid 1000  test 1000"), "%s", out);
	cr_assert(strstr(out, "verify     ok"), "%s", out);
	free(out);
	free(err);
	/* the JSON form agrees with the library */
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, p), 0);
	char want[64];
	snprintf(want, sizeof want, "\"num_edges\": %lld,", (long long)burrow_dataset_get_info(ds)->num_edges);
	burrow_dataset_close(ds);
	cr_assert_eq(tu_sh(&out, &err, "%s info %s --json", tu_burrow(), p), 0);
	cr_assert(strstr(out, want), "%s lacks %s", out, want);
	cr_assert_eq(lines(out), 1);
	free(out);
	free(err);
	/* exists: refused with a hint; --force replaces */
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s --nodes 100", tu_burrow(), p), 1);
	cr_assert(strstr(err, "already exists") && strstr(err, "--force"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s --nodes 100 --force --quiet", tu_burrow(), p), 0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(&out, NULL, "%s info %s", tu_burrow(), p), 0);
	cr_assert(strstr(out, "nodes      100\n"), "%s", out);
	free(out);
	free(p);
}

/* Off a terminal no bar is drawn; BURROW_PROGRESS=SECONDS asks for plain lines instead (each
 * phase's start and end at least), unless --quiet. */
Test(cli, progress_lines_off_a_terminal_when_asked)
{
	char *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen papers %s/a --fraction 1/16384", tu_burrow(), tu_dir), 0, "%s", err);
	cr_assert(!strstr(err, "progress"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "BURROW_PROGRESS=3600 %s gen papers %s/b --fraction 1/16384", tu_burrow(), tu_dir),
		     0, "%s", err);
	const char *want[] = {"burrow: progress: edges ", "burrow: progress: features 100.0% (6779 of 6779) at "};
	for (int i = 0; i < 2; i++)
		cr_assert(strstr(err, want[i]), "no '%s' in:\n%s", want[i], err);
	cr_assert(!strchr(err, '\r'), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "BURROW_PROGRESS=1 %s gen papers %s/c --fraction 1/16384 --quiet", tu_burrow(),
			   tu_dir), 0, "%s", err);
	cr_assert_eq(err[0], 0, "%s", err);
	free(err);
}

Test(cli, info_on_truncated_features_names_file_and_sizes)
{
	char *p = tu_path(tu_dir, "d");
	cr_assert_eq(tu_sh(NULL, NULL, "%s gen csbm %s --nodes 1000 --feat-dim 32", tu_burrow(), p), 0);
	char *f = tu_path(p, "features.npy");
	long long full = tu_size(f);
	cr_assert_eq(full, 4096 + 1000 * 32 * 4);
	tu_truncate(f, full / 2);
	char *out, *err;
	int rc = tu_sh(&out, &err, "%s info %s", tu_burrow(), p);
	cr_assert_eq(rc, 1, "exit %d", rc);
	cr_assert_eq(lines(err), 1, "%s", err);
	char want[160];
	snprintf(want, sizeof want, "burrow: info: %s: size is %lld bytes, expected %lld", f, full / 2, full);
	cr_assert(strstr(err, want), "%s\nlacks: %s", err, want);
	cr_assert_str_empty(out);
	free(out);
	free(err);
	free(f);
	free(p);
}

/* A file size limit (the disk filling up): a clear error, and nothing left behind. */
Test(cli, write_failure_leaves_nothing)
{
	char *p = tu_path(tu_dir, "full");
	char *err;
	int rc = tu_sh(NULL, &err, "ulimit -f 2000 && %s gen csbm %s --nodes 20000 --feat-dim 64", tu_burrow(), p);
	cr_assert_eq(rc, 1, "exit %d: %s", rc, err);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, "features.npy") && strstr(err, "File too large"), "%s", err);
	free(err);
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_empty(out, "left behind: %s", out);
	free(out);
	/* an output under a regular file cannot be created */
	char *file = tu_path(tu_dir, "plain");
	FILE *fp = fopen(file, "w");
	fclose(fp);
	rc = tu_sh(NULL, &err, "%s gen csbm %s/sub --nodes 100", tu_burrow(), file);
	cr_assert_eq(rc, 1, "exit %d: %s", rc, err);
	cr_assert(strstr(err, "plain"), "%s", err);
	free(err);
	free(file);
	free(p);
}

Test(cli, info_on_a_non_dataset)
{
	char *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s info %s", tu_burrow(), tu_dir), 1);
	cr_assert(strstr(err, "meta.json") && strstr(err, "No such file"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s info %s/nope", tu_burrow(), tu_dir), 1);
	cr_assert(strstr(err, "nope"), "%s", err);
	free(err);
}

/* ---------------------------------------------------------------- burrow train's output */

/* A small CSBM at dir/name; caller frees the path. */
static char *small_csbm(const char *name, int nodes)
{
	char *p = tu_path(tu_dir, "%s", name), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s --nodes %d --feat-dim 8 --classes 3 --quiet", tu_burrow(), p, nodes),
		     0, "%s", err);
	free(err);
	return p;
}

/* Empty the split `which` of the dataset at dir: its file goes, meta.json says 0. */
static void empty_split(const char *dir, const char *which)
{
	char *f = tu_path(dir, "split/%s.npy", which), *meta = tu_path(dir, "meta.json");
	cr_assert_eq(remove(f), 0, "%s", f);
	char *text = tu_read(meta, NULL), key[32];
	cr_assert(text);
	snprintf(key, sizeof key, "\"%s\":\t", which);
	char *at = strstr(text, key);
	cr_assert(at, "%s lacks %s", meta, key);
	at += strlen(key);
	FILE *fp = fopen(meta, "w");
	cr_assert(fp);
	fprintf(fp, "%.*s0%s", (int)(at - text), text, at + strspn(at, "0123456789"));
	fclose(fp);
	free(text);
	free(meta);
	free(f);
}

/* Field `col` (0-based, blank-separated) of the epoch table's line for `epoch`, into buf. */
static const char *table_field(const char *out, int epoch, int col, char *buf, size_t cap)
{
	char head[16];
	snprintf(head, sizeof head, "\n%5d ", epoch);
	const char *line = strstr(out, head);
	cr_assert(line, "no line for epoch %d in:\n%s", epoch, out);
	line++;
	for (int c = 0; c <= col; c++) {
		line += strspn(line, " ");
		size_t n = strcspn(line, " \n");
		cr_assert(n > 0, "epoch %d's line has no field %d:\n%s", epoch, col, out);
		if (c == col)
			snprintf(buf, cap, "%.*s", (int)n, line);
		line += n;
	}
	return buf;
}

/* An absent measurement prints "-" (and null in the log), never a number: an empty valid
 * split, an epoch not evaluated, a hit rate where nothing was asked of the cache. */
Test(cli, train_prints_absent_measurements_as_dashes)
{
	char *d = small_csbm("g", 400), *out, *err, f[32];
	empty_split(d, "valid");
	const char *modes[2] = {"", "--full-graph"};
	for (int m = 0; m < 2; m++) {
		char *log = tu_path(tu_dir, "log%d.jsonl", m);
		int rc = tu_sh(&out, &err,
			       "%s train %s %s --epochs 2 --eval-every 2 --hidden 8 --threads 1 --quiet --log %s --checkpoint %s/ck%d",
			       tu_burrow(), d, modes[m], log, tu_dir, m);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		cr_assert(!strstr(out, "-1.0"), "a number for an absent value:\n%s", out);
		cr_assert_str_eq(table_field(out, 1, 3, f, sizeof f), "-", "valid, epoch 1:\n%s", out);
		cr_assert_str_eq(table_field(out, 1, 4, f, sizeof f), "-", "test, not evaluated at epoch 1:\n%s", out);
		cr_assert_str_eq(table_field(out, 2, 3, f, sizeof f), "-", "valid, epoch 2:\n%s", out);
		cr_assert_neq(table_field(out, 2, 4, f, sizeof f)[0], '-', "test, evaluated at epoch 2:\n%s", out);
		cr_assert_str_eq(table_field(out, 2, 11, f, sizeof f), m ? "-" : "100.0%", "hit:\n%s", out);
		cr_assert(strstr(out, "\nno valid split: test accuracy 0.") && strstr(out, "at epoch 2, the last evaluation\n"),
			  "%s", out);
		cr_assert(!strstr(out, "best valid"), "%s", out);
		char *text = tu_read(log, NULL);
		cr_assert(text);
		/* a value of -1 (not any "-1": the config line holds the run's paths, random temp names) */
		cr_assert(!strstr(text, ": -1") && !strstr(text, ":-1"), "a number for an absent value in the log:\n%s", text);
		cr_assert(strstr(text, "{\"epoch\": 1,") && strstr(text, "\"valid_acc\": null, \"test_acc\": null"), "%s", text);
		cr_assert(strstr(text, "{\"final\": true, \"best_epoch\": 2, \"valid_acc\": null, \"test_acc\": 0."), "%s", text);
		cr_assert_eq(!!strstr(text, "\"cache_hit_rate\": null"), m, "%s", text);
		/* what the store was asked: mini-batch only; every row was a hit (100.0% above) */
		cr_assert_eq(!!strstr(text, "\"rows_requested\": null, \"reads\": null, \"pages_read\": null, \"bytes_read\": null"),
			     m, "%s", text);
		cr_assert_eq(!!strstr(text, "\"reads\": 0, \"pages_read\": 0, \"bytes_read\": 0, \"threads\": 1}"), !m,
			     "%s", text);
		cr_assert(m || !strstr(text, "\"rows_requested\": 0,"), "%s", text);
		cr_assert_eq(!!strstr(text, "\"bytes_read\": null, \"threads\": 1}"), m, "%s", text);
		free(text);
		free(out);
		free(err);
		free(log);
		/* burrow eval of the checkpoint: the same */
		rc = tu_sh(&out, &err, "%s eval %s --checkpoint %s/ck%d --threads 1", tu_burrow(), d, tu_dir, m);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		cr_assert(strstr(out, "model after epoch 2: train 0.") && strstr(out, "  valid -  test 0."), "%s", out);
		free(out);
		free(err);
		rc = tu_sh(&out, &err, "%s eval %s --checkpoint %s/ck%d --threads 1 --json", tu_burrow(), d, tu_dir, m);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		cr_assert(strstr(out, "\"valid_acc\": null, \"test_acc\": 0.") && !strstr(out, "-1"), "%s", out);
		free(out);
		free(err);
	}
	free(d);
}

/* The last line of the log at path (caller frees). */
static char *last_log_line(const char *path)
{
	char *text = tu_read(path, NULL);
	cr_assert(text, "%s", path);
	size_t n = strlen(text);
	while (n && text[n - 1] == '\n')
		text[--n] = '\0';
	char *nl = strrchr(text, '\n'), *line = strdup(nl ? nl + 1 : text);
	free(text);
	return line;
}

/* Every run ends with a line that says what came of it, and --log with its final object:
 * --epochs 0 and a resume with no epoch left say that nothing was trained. */
Test(cli, train_ends_every_run_with_a_final_line)
{
	char *d = small_csbm("g", 300), *out, *err;
	char *log = tu_path(tu_dir, "l.jsonl"), *ck = tu_path(tu_dir, "ck");
	int rc = tu_sh(&out, &err, "%s train %s --epochs 0 --hidden 8 --quiet --log %s", tu_burrow(), d, log);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "\nnothing trained: --epochs 0\n"), "%s", out);
	cr_assert(!strstr(out, "epoch_s"), "an empty table:\n%s", out);
	char *last = last_log_line(log);
	cr_assert(strstr(last, "{\"final\": true, \"best_epoch\": null,") && strstr(last, "\"epochs\": 0, \"trained\": 0,"),
		  "%s", last);
	free(last);
	free(out);
	free(err);
	/* two epochs, then a resume that asks for no more */
	rc = tu_sh(&out, &err, "%s train %s --epochs 2 --hidden 8 --quiet --checkpoint %s --log %s", tu_burrow(), d, ck, log);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "\nbest valid 0.") && !strstr(out, "nothing trained"), "%s", out);
	last = last_log_line(log);
	cr_assert(strstr(last, "\"epochs\": 2, \"trained\": 2,"), "%s", last);
	free(last);
	free(out);
	free(err);
	const char *asks[2] = {"2", "1"};
	for (int i = 0; i < 2; i++) {
		rc = tu_sh(&out, &err, "%s train %s --epochs %s --hidden 8 --quiet --checkpoint %s --resume --log %s",
			   tu_burrow(), d, asks[i], ck, log);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		char want[256];
		snprintf(want, sizeof want, "\nnothing trained: %s/last.ckpt already holds 2 epochs (--epochs %s); best valid 0.",
			 ck, asks[i]);
		cr_assert(strstr(out, want), "%s\nlacks: %s", out, want);
		cr_assert(!strstr(out, "epoch_s"), "an empty table:\n%s", out);
		last = last_log_line(log);
		cr_assert(strstr(last, "{\"final\": true, \"best_epoch\": ") && strstr(last, "\"epochs\": 2, \"trained\": 0,"),
			  "%s", last);
		free(last);
		free(out);
		free(err);
	}
	free(ck);
	free(log);
	free(d);
}

/* bench sample scales producer threads by default (training's mode) and OpenMP threads in
 * one batch with --omp, one JSON object per thread count. */
Test(cli, bench_sample_measures_producers_by_default_and_omp_on_request)
{
	char *d = small_csbm("bs", 2000), *out, *err;
	const char *mode[] = {"", "--omp"}, *want[] = {"\"mode\": \"producers\"", "\"mode\": \"omp\""};
	for (int m = 0; m < 2; m++) {
		int rc = tu_sh(&out, &err, "%s bench sample %s --fanout 4,3 --batch 64 --threads 2 --seconds 0.1 --json %s",
			       tu_burrow(), d, mode[m]);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		cr_assert_eq(lines(out), 2, "one object per thread count: %s", out);
		const char *t1 = strstr(out, "\"threads\": 1,"), *t2 = strstr(out, "\"threads\": 2,");
		cr_assert(t1 && t2 && t1 < t2, "%s", out);
		const char *p1 = strstr(out, want[m]), *p2 = p1 ? strstr(p1 + 1, want[m]) : NULL;
		cr_assert(p1 && p2, "both lines are %s: %s", want[m], out);
		/* each thread count sampled batches with edges in them */
		for (const char *a = strstr(out, "\"edges_per_batch\""); a; a = strstr(a + 1, "\"edges_per_batch\""))
			cr_assert_gt(strtod(strchr(a, ':') + 1, NULL), 0, "%s", out);
		free(out);
		free(err);
	}
	free(d);
}

/* The number after "key": in the JSON line s (NAN when absent). */
static double json_num(const char *s, const char *key)
{
	char k[64];
	snprintf(k, sizeof k, "\"%s\": ", key);
	const char *p = strstr(s, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* bench train --task link: a citation2-shaped dataset's edge batches with a small cache read
 * rows from disk; the report agrees with itself: T_io = rows read / the store's rate (measured
 * at the epoch's rows per batch unless --io-gather says), the ratio = epoch / max(T_mem, T_io),
 * the summary the run's (one run). */
Test(cli, bench_train_link_reports_consistent_figures)
{
	char *d = tu_path(tu_dir, "l"), *out, *err;
	int rc = tu_sh(NULL, &err, "%s gen citation2 %s --fraction 1/2048 --feat-dim 16 --quiet", tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = tu_sh(&out, &err,
		   "%s bench train %s --task link --neg 2 --fanout 4,3 --hidden 8 --batch 128 --max-batches 4 --cache 5%% "
		   "--io-rows 3000 --json",
		   tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	const char *run = strstr(out, "\"run\": 0"), *sum = strstr(out, "\"summary\": true");
	cr_assert(run && sum && strstr(out, "\"task\": \"link\""), "%s", out);
	const double rows = json_num(run, "rows_read"), rate = json_num(run, "io_rows_per_s");
	const double t_io = json_num(run, "t_io"), t_mem = json_num(run, "t_mem"), epoch = json_num(run, "epoch_s");
	const double hit = json_num(run, "cache_hit_rate"), ratio = json_num(sum, "ratio");
	cr_assert_gt(rows, 0, "a 5%% cache read no rows: %s", out);
	/* a link dataset's rate is measured at the epoch's own rows per batch (4 batches) */
	cr_assert_eq(json_num(run, "io_gather"), floor(rows / 4), "%s", out);
	cr_assert(hit > 0 && hit < 1, "hit rate %g: %s", hit, out);
	cr_assert_gt(rate, 0, "%s", out);
	cr_assert(fabs(t_io - rows / rate) <= 1e-6 + 1e-3 * t_io, "t_io %g, rows %g / rate %g: %s", t_io, rows, rate, out);
	cr_assert(t_mem > 0 && epoch > 0, "%s", out);
	/* the epoch's "io" object: what it asked of the store, consistent with the run's figures */
	const char *io = strstr(run, "\"io\": {");
	cr_assert(io && io < sum, "%s", out);
	const double req = json_num(io, "rows_requested"), pages = json_num(io, "pages_read");
	cr_assert_eq(json_num(io, "rows_read"), rows, "%s", out);
	cr_assert(fabs(json_num(io, "cache_hit_rate") - hit) < 1e-9, "%s", out);
	cr_assert(req > rows && fabs(json_num(io, "input_nodes_per_batch") - req / 4) < 0.051, "%s", out);
	cr_assert(json_num(io, "reads") > 0 && json_num(io, "reads") <= rows && pages > 0 &&
		      json_num(io, "bytes_read") >= pages * 512, "%s", out);
	cr_assert(fabs(json_num(sum, "t_io") - t_io) < 1e-9 && fabs(json_num(sum, "t_mem") - t_mem) < 1e-9 &&
		      fabs(json_num(sum, "epoch_s") - epoch) < 1e-9,
		  "the summary of one run is not that run: %s", out);
	const double want = epoch / (t_io > t_mem ? t_io : t_mem);
	cr_assert(fabs(ratio - want) <= 0.0001 + 1e-3 * want, "ratio %g, epoch / max(T_mem, T_io) = %g: %s", ratio, want,
		  out);
	free(out);
	free(err);
	/* the human report names the task */
	rc = tu_sh(&out, &err, "%s bench train %s --task link --fanout 4,3 --hidden 8 --batch 128 --max-batches 2 "
			       "--io-rows 500", tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "task link: 128 positive edges a batch, --neg 1, scorer dot"), "%s", out);
	cr_assert(strstr(out, "epoch / max(T_mem, T_io) = "), "%s", out);
	free(out);
	free(err);
	rc = tu_sh(&out, &err, "%s bench train %s --fanout 4,3 --hidden 8 --batch 128 --max-batches 2 --io-rows 500 "
			       "--io-gather 100 --json", tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "\"io_gather\": 100,"), "%s", out);
	free(out);
	free(err);
	free(d);
}

/* bench train --sampler labor: the partial-cache epoch's batches are LABOR's, with fewer input
 * nodes a batch than neighbor sampling's on a graph with hubs (the io object's count), and
 * labor-star's fewer than LABOR's; a bad value is refused with a usage line. */
Test(cli, bench_train_takes_the_sampler)
{
	char *d = tu_path(tu_dir, "r"), *out, *err;
	int rc = tu_sh(NULL, &err, "%s gen rmat %s --scale 13 --feat-dim 8 --quiet", tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	double inputs[3];
	const char *kinds[3] = {"neighbor", "labor", "labor-star"};
	for (int labor = 0; labor < 3; labor++) {
		rc = tu_sh(&out, &err,
			   "%s bench train %s --fanout 10,10 --hidden 8 --batch 256 --max-batches 3 --io-rows 500 --ops off "
			   "--sampler %s --json",
			   tu_burrow(), d, kinds[labor]);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		const char *io = strstr(out, "\"io\": {");
		cr_assert(io, "%s", out);
		inputs[labor] = json_num(io, "input_nodes_per_batch");
		free(out);
		free(err);
	}
	cr_assert(inputs[1] > 0 && inputs[1] < 0.95 * inputs[0], "input nodes a batch: labor %g, neighbor %g", inputs[1],
		  inputs[0]);
	cr_assert(inputs[2] > 0 && inputs[2] < 0.95 * inputs[1], "input nodes a batch: labor-star %g, labor %g", inputs[2],
		  inputs[1]);
	rc = tu_sh(&out, &err, "%s bench train %s --sampler uniform", tu_burrow(), d);
	cr_assert_eq(rc, 2);
	cr_assert(strstr(err, "--sampler wants neighbor, labor or labor-star"), "%s", err);
	free(out);
	free(err);
	free(d);
}

/* A --fanout list without --layers sets the number of layers; with a --layers that
 * disagrees it is refused, naming both (burrow train and burrow bench train alike). */
Test(cli, fanout_sets_the_number_of_layers)
{
	char *d = small_csbm("g", 300), *out, *err;
	int rc = tu_sh(&out, &err, "%s train %s --fanout 4,3 --epochs 1 --hidden 8 --quiet", tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "mini-batch, 2 layers,") && strstr(out, "fanout 4,3, prefetch"), "%s", out);
	free(out);
	free(err);
	rc = tu_sh(&out, &err, "%s bench train %s --fanout 3,2,2 --max-batches 1 --io-rows 500 --hidden 8", tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "sage, 3 layers, hidden 8, fanout 3,2,2,"), "%s", out);
	free(out);
	free(err);
	const char *bad[] = {"train %s --layers 3 --fanout 4,3 --epochs 1", "train %s --fanout 4,3 --layers 3",
			     "bench train %s --layers 3 --fanout 4,3"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char args[256];
		snprintf(args, sizeof args, bad[i], d);
		rc = tu_sh(&out, &err, "%s %s", tu_burrow(), args);
		cr_assert_eq(rc, 2, "'burrow %s' exited %d: %s", args, rc, err);
		cr_assert_eq(lines(err), 1, "%s", err);
		cr_assert(strstr(err, "--fanout 4,3 has 2 values but --layers is 3"), "%s", err);
		cr_assert_str_empty(out);
		free(out);
		free(err);
	}
	/* --help says so */
	cr_assert_eq(tu_sh(&out, NULL, "%s train --help", tu_burrow()), 0);
	cr_assert(strstr(out, "without --layers") && strstr(out, "sets the number of layers"), "%s", out);
	free(out);
	free(d);
}

/* ---------------------------------------------------------------- burrow download, prep */

/* What the README shows works as written: `burrow download NAME --url URL --root R` then
 * `burrow prep NAME --root R` prepares R/NAME.zip, for a name outside the catalog too; prep
 * with --url downloads it itself; without the zip or a URL, one line names the file. */
Test(cli, prep_finds_the_zip_download_wrote)
{
	const char *shared = tu_datasets();
	char *zip = shared ? tu_path(shared, "ogbn-cora.zip") : NULL;
	if (!zip || !tu_exists(zip)) {
		free(zip);
		cr_skip_test("../shared/datasets/ogbn-cora.zip is absent (BURROW_DATASETS)");
	}
	char *root = tu_path(tu_dir, "R"), *out, *err;
	int rc = tu_sh(&out, &err, "%s download ogbn-cora --url 'file://%s' --root %s --quiet", tu_burrow(), zip, root);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	free(out);
	free(err);
	char *got = tu_path(root, "ogbn-cora.zip");
	cr_assert_eq(tu_size(got), tu_size(zip), "%s", got);
	free(got);
	rc = tu_sh(&out, &err, "%s prep ogbn-cora --root %s", tu_burrow(), root);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	char want[4200];
	snprintf(want, sizeof want, "burrow: prep: wrote %s/ogbn-cora in ", root);
	cr_assert(strstr(err, want) && strstr(err, "2,708 nodes"), "%s", err);
	free(out);
	free(err);
	rc = tu_sh(&out, &err, "%s info %s/ogbn-cora --verify", tu_burrow(), root);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "splits     train 1624  valid 541  test 543"), "%s", out);
	free(out);
	free(err);
	/* prep downloads it itself from --url */
	char *root2 = tu_path(tu_dir, "R2");
	rc = tu_sh(&out, &err, "%s prep ogbn-cora --root %s --url 'file://%s' --quiet", tu_burrow(), root2, zip);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	char *ds2 = tu_path(root2, "ogbn-cora/meta.json");
	cr_assert(tu_exists(ds2), "%s", ds2);
	free(ds2);
	free(out);
	free(err);
	/* neither in the catalog nor in the root */
	rc = tu_sh(&out, &err, "%s prep ogbn-elsewhere --root %s", tu_burrow(), root);
	cr_assert_eq(rc, 1, "%s\n%s", out, err);
	cr_assert_eq(lines(err), 1, "%s", err);
	snprintf(want, sizeof want, "%s/ogbn-elsewhere.zip does not exist", root);
	cr_assert(strstr(err, "'ogbn-elsewhere' is neither a dataset in the catalog") && strstr(err, want), "%s", err);
	free(out);
	free(err);
	free(root2);
	free(root);
	free(zip);
}

/* ---------------------------------------------------------------- burrow info on parts */

/* 1234567 as "1,234,567" (v >= 0), as the CLI prints counts. */
static const char *grouped(long long v, char *buf, size_t cap)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%lld", v), o = 0;
	for (int i = 0; i < n && o + 2 < (int)cap; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = '\0';
	return buf;
}

/* burrow info DIR/parts-K prints the partition's summary, the numbers the library reads
 * back from it: parts, edge cut, imbalance, per part owned / halo / send / CSR entries;
 * --json one object; --verify opens every part; what meta.json lacks prints "-". */
Test(cli, info_describes_a_parts_directory)
{
	char *d = small_csbm("g", 600), *out, *err;
	int rc = tu_sh(&out, &err, "%s partition %s --parts 2 --quiet", tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	free(out);
	free(err);
	char *parts = tu_path(d, "parts-2");
	burrow_parts *ps;
	cr_assert_eq(burrow_parts_open(&ps, parts), 0, "%s", burrow_last_error());
	const burrow_parts_info *pi = burrow_parts_get_info(ps);
	rc = tu_sh(&out, &err, "%s info %s", tu_burrow(), parts);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	char want[512], a[32], b[32], c[32], e[32];
	snprintf(want, sizeof want, "parts      %s (2 parts, metis)\n", parts);
	cr_assert(strstr(out, want), "%s\nlacks: %s", out, want);
	snprintf(want, sizeof want, "edge cut   %s of %s undirected edges (%.2f%%)\n", grouped(pi->edge_cut, a, sizeof a),
		 grouped(pi->sym_edges, b, sizeof b), 100 * pi->cut_fraction);
	cr_assert(pi->edge_cut > 0 && strstr(out, want), "%s\nlacks: %s", out, want);
	snprintf(want, sizeof want, "imbalance  nodes %.4f  train %.4f  edges %.4f", pi->imbalance_nodes, pi->imbalance_train,
		 pi->imbalance_edges);
	cr_assert(strstr(out, want), "%s\nlacks: %s", out, want);
	for (int i = 0; i < 2; i++) {
		burrow_part *p;
		cr_assert_eq(burrow_part_open(&p, ps, i), 0, "%s", burrow_last_error());
		const burrow_part_info *in = burrow_part_get_info(p);
		snprintf(want, sizeof want, "\n%-6d %14s %14s %14s %14s\n", i, grouped(in->num_owned, a, sizeof a),
			 grouped(in->num_halo, b, sizeof b), grouped(in->num_send, c, sizeof c),
			 grouped(burrow_dataset_graph(burrow_part_dataset(p))->num_edges, e, sizeof e));
		cr_assert(strstr(out, want), "%s\nlacks: %s", out, want);
		burrow_part_close(p);
	}
	free(out);
	free(err);
	/* JSON: one object */
	rc = tu_sh(&out, &err, "%s info %s --json --verify", tu_burrow(), parts);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert_eq(lines(out), 1, "%s", out);
	snprintf(want, sizeof want, "\"num_parts\": 2, \"dataset\": \"%s\", \"dataset_name\": \"csbm\", \"method\": \"metis\"", d);
	cr_assert(strstr(out, want), "%s\nlacks: %s", out, want);
	snprintf(want, sizeof want, "\"edge_cut\": %lld, \"sym_edges\": %lld,", (long long)pi->edge_cut, (long long)pi->sym_edges);
	cr_assert(strstr(out, want) && strstr(out, "\"verified\": true}"), "%s\nlacks: %s", out, want);
	free(out);
	free(err);
	burrow_parts_close(ps);
	/* what meta.json does not record prints "-" */
	rc = tu_sh(NULL, &err, "sed -i '/\"sym_edges\"/d; /\"cut_fraction\"/d' %s/meta.json", parts);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = tu_sh(&out, &err, "%s info %s", tu_burrow(), parts);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, " of - undirected edges (-)\n"), "%s", out);
	free(out);
	free(err);
	/* --verify opens every part: a missing one is named in one line */
	tu_sh(NULL, NULL, "rm -rf %s/part-1", parts);
	rc = tu_sh(&out, &err, "%s info %s --verify", tu_burrow(), parts);
	cr_assert_eq(rc, 1, "%s\n%s", out, err);
	cr_assert_eq(lines(err), 1, "%s", err);
	cr_assert(strstr(err, "burrow: info: ") && strstr(err, "part-1"), "%s", err);
	cr_assert_str_empty(out);
	free(out);
	free(err);
	free(parts);
	free(d);
}

/* --sampler-device: a malformed name is a usage error naming the option, so is it with
 * --full-graph (mini-batch only); a device the machine lacks is one line, exit 1, before any
 * work (moot with a GPU); the header says where batches are sampled, auto on the CPU too. */
Test(cli, sampler_device_option)
{
	char *out, *err;
	char *p = tu_path(tu_dir, "g");
	cr_assert_eq(tu_sh(&out, &err, "%s gen csbm %s --nodes 300 --feat-dim 8 --classes 3 --seed 1", tu_burrow(), p), 0,
		     "%s", err);
	free(out);
	free(err);
	const struct {
		const char *args, *says;
	} bad[] = {{"--sampler-device gpu", "--sampler-device wants auto, cpu, cuda or cuda:N, got 'gpu'"},
		   {"--sampler-device cuda:x", "--sampler-device wants auto, cpu, cuda or cuda:N"},
		   {"--sampler-device cpu --full-graph", "--sampler-device is a mini-batch option"}};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		int rc = tu_sh(&out, &err, "%s train %s %s --epochs 1", tu_burrow(), p, bad[i].args);
		cr_assert_eq(rc, 2, "'%s' exited %d: %s", bad[i].args, rc, err);
		cr_assert(strstr(err, bad[i].says), "'%s': %s", bad[i].args, err);
		free(out);
		free(err);
	}
	if (burrow_cuda_device_count() <= 0) {
		int rc = tu_sh(&out, &err, "%s train %s --sampler-device cuda --log %s/slog.jsonl --epochs 1", tu_burrow(), p,
			       tu_dir);
		cr_assert_eq(rc, 1, "exited %d: %s", rc, err);
		cr_assert_eq(lines(err), 1, "%s", err);
		cr_assert(strstr(err, "--sampler-device: device cuda") &&
				  (strstr(err, "no CUDA GPU") || strstr(err, "built without CUDA")),
			  "%s", err);
		cr_assert(!tu_exists(tu_path(tu_dir, "slog.jsonl")), "a log was written");
		free(out);
		free(err);
	}
	const char *cpu[] = {"", "--sampler-device auto", "--sampler-device cpu"};
	for (size_t i = 0; i < 3; i++) {
		int rc = tu_sh(&out, &err, "%s train %s %s --epochs 1 --quiet", tu_burrow(), p, cpu[i]);
		cr_assert_eq(rc, 0, "'%s' exited %d: %s", cpu[i], rc, err);
		cr_assert(strstr(out, "(by degree); sampler cpu\n"), "'%s': %s", cpu[i], out);
		free(out);
		free(err);
	}
	cr_assert_eq(tu_sh(&out, &err, "%s train --help", tu_burrow()), 0);
	cr_assert(strstr(out, "--sampler-device D"), "%s", out);
	free(out);
	free(err);
	free(p);
}

/* A device this build or machine lacks: one line naming what is missing, exit 1, and no
 * work done (no log, no checkpoint folder), for every command that takes --device; a name
 * that is no device at all is a usage error. Where a GPU is present the first half is moot. */
Test(cli, missing_device_fails_before_any_work)
{
	char *out, *err;
	char *p = tu_path(tu_dir, "g");
	cr_assert_eq(tu_sh(&out, &err, "%s gen csbm %s --nodes 300 --feat-dim 8 --classes 3 --seed 1", tu_burrow(), p), 0,
		     "%s", err);
	free(out);
	free(err);
	const int gpus = burrow_cuda_device_count();
	const char *cmds[] = {"train %s --device cuda --log %s/log.jsonl --checkpoint %s/ck --epochs 1",
			      "train %s --device cuda:7 --log %s/log.jsonl --checkpoint %s/ck --full-graph",
			      "eval %s --device cuda --checkpoint %s/none%.0s", "embed %s --device cuda --checkpoint %s/none --out %s/x.npy",
			      "bench train %s --device cuda --max-batches 1%.0s%.0s"};
	for (size_t i = 0; gpus <= 0 && i < sizeof cmds / sizeof *cmds; i++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd, cmds[i], p, tu_dir, tu_dir);
		int rc = tu_sh(&out, &err, "%s %s", tu_burrow(), cmd);
		cr_assert_eq(rc, 1, "'burrow %s' exited %d: %s", cmd, rc, err);
		cr_assert_eq(lines(err), 1, "'burrow %s' printed: %s", cmd, err);
		cr_assert(strstr(err, "device cuda") && (strstr(err, "no CUDA GPU") || strstr(err, "built without CUDA")),
			  "'burrow %s': %s", cmd, err);
		cr_assert(!tu_exists(tu_path(tu_dir, "log.jsonl")) && !tu_exists(tu_path(tu_dir, "ck")) &&
				  !tu_exists(tu_path(tu_dir, "x.npy")),
			  "'burrow %s' wrote something", cmd);
		free(out);
		free(err);
	}
	const char *bad[] = {"train %s --device gpu", "train %s --device cuda:x", "eval %s --device cuda:-1 --checkpoint c",
			     "bench train %s --device tpu"};
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		char cmd[512];
		snprintf(cmd, sizeof cmd, bad[i], p);
		int rc = tu_sh(&out, &err, "%s %s", tu_burrow(), cmd);
		cr_assert_eq(rc, 2, "'burrow %s' exited %d: %s", cmd, rc, err);
		cr_assert(strstr(err, "--device wants cpu, cuda or cuda:N"), "'burrow %s': %s", cmd, err);
		free(out);
		free(err);
	}
}

/* eval, embed and predict share one parser for their common options: a bad value of each is
 * refused by all three alike, one usage line naming the command, exit 2, nothing written. */
Test(cli, inference_commands_refuse_bad_shared_options_alike)
{
	const char *cmds[] = {"eval", "embed", "predict"};
	const char *bad[][2] = {
		{"--mem x", "--mem wants a byte count, got 'x'"},
		{"--mem 0", "--mem wants a byte count, got '0'"},
		{"--eval-chunk 0", "--eval-chunk wants a positive integer, got '0'"},
		{"--threads 0", "--threads wants an integer in [1, 4096], got '0'"},
		{"--threads 4097", "--threads wants an integer in [1, 4096], got '4097'"},
		{"--bogus", "unknown option '--bogus'"},
	};
	for (size_t i = 0; i < sizeof cmds / sizeof *cmds; i++)
		for (size_t j = 0; j < sizeof bad / sizeof *bad; j++) {
			char *err, want[160];
			int rc = tu_sh(NULL, &err, "cd '%s' && %s %s D %s --out o.npy", tu_dir, tu_burrow(), cmds[i],
				       bad[j][0]);
			snprintf(want, sizeof want, "burrow: %s: %s (see 'burrow %s --help')\n", cmds[i], bad[j][1], cmds[i]);
			cr_assert_eq(rc, 2, "'burrow %s ... %s' exited %d: %s", cmds[i], bad[j][0], rc, err);
			cr_assert_str_eq(err, want, "'burrow %s ... %s'", cmds[i], bad[j][0]);
			free(err);
		}
	char *o = tu_path(tu_dir, "o.npy");
	cr_assert(!tu_exists(o), "%s", o);
	free(o);
}

/* --sampler labor trains mini-batch node tasks, the same bits on a rerun; a mini-batch option. */
Test(cli, train_with_labor_sampling)
{
	char *d = small_csbm("g", 400), *out, *err, *out2, *err2;
	const char *cmd = "%s train %s --epochs 2 --hidden 8 --fanout 3,3 --batch 64 --sampler labor --seed 3";
	int rc = tu_sh(&out, &err, cmd, tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "\nbest valid 0."), "%s", out);
	rc = tu_sh(&out2, &err2, cmd, tu_burrow(), d);
	cr_assert_eq(rc, 0, "%s\n%s", out2, err2);
	const char *l1 = strstr(out, "\nbest valid"), *l2 = strstr(out2, "\nbest valid");
	cr_assert(l1 && l2 && !strcmp(l1, l2), "two runs differ:\n%s\n%s", out, out2);
	free(out), free(err), free(out2), free(err2);
	rc = tu_sh(&out, &err, "%s train %s --epochs 1 --full-graph --sampler labor", tu_burrow(), d);
	cr_assert_neq(rc, 0);
	cr_assert(strstr(err, "--sampler is a mini-batch option") && !strchr(strchr(err, '\n') + 1, '\n'), "%s", err);
	free(out), free(err);
	rc = tu_sh(&out, &err, "%s train %s --sampler lab", tu_burrow(), d);
	cr_assert_neq(rc, 0);
	cr_assert(strstr(err, "neighbor, labor or labor-star"), "%s", err);
	free(out), free(err);
	free(d);
}
