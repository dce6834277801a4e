/* test_cli.c: the burrow command as a user runs it: exit codes, one-line errors, gen + info. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

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
			     "gen csbm OUT --nodes x", "gen rmat OUT --nodes 5", "gen tree OUT", "info", "info a b"};
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
	cr_assert(!tu_exists("OUT"));
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
