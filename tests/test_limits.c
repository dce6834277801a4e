/* test_limits.c: burrow train under a small RLIMIT_AS fails at once with one line, or fits its cache
 * under it (issue 19); the cgroup memory limit that sizes the defaults. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"
#include "../core/internal.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* The timeout is the bound on "fails at once": before the fix a limited run never ended
 * (OpenBLAS retried its buffer's mapping forever). */
TU_SCRATCH_SUITE(limits, 180);

#define MiB ((size_t)1 << 20)

/* AddressSanitizer maps terabytes of shadow: a binary built with it cannot run under a
 * small RLIMIT_AS at all, so these tests skip in SAN builds (the binary is built as the
 * tests are). */
#if defined(__SANITIZE_ADDRESS__)
#define ASAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ASAN_BUILD 1
#endif
#endif
#ifdef ASAN_BUILD
#define SKIP_UNDER_ASAN() cr_skip_test("AddressSanitizer build: it cannot run under a small RLIMIT_AS")
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

/* The whole file at path as a string (caller frees). */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	cr_assert(f, "%s: cannot open", path);
	char *s = NULL;
	size_t cap = 0, n = 0, k;
	do {
		cap = 2 * cap + 4096;
		s = realloc(s, cap);
		n += k = fread(s + n, 1, cap - n - 1, f);
	} while (k > 0);
	fclose(f);
	s[n] = '\0';
	return s;
}

/* A count as printed, with thousands separators. */
static long long count(const char *s, const char **end)
{
	long long v = 0;
	for (; (*s >= '0' && *s <= '9') || *s == ','; s++)
		if (*s != ',')
			v = 10 * v + (*s - '0');
	*end = s;
	return v;
}

/* Run burrow with args (NULL-terminated, after the binary) under RLIMIT_AS = limit, with
 * no OpenBLAS thread count in its environment; stdout and stderr into files of tu_dir,
 * read back into *out and *err (caller frees). Returns the exit status, 128 + signal when
 * killed. */
static int run_limited(size_t limit, char **out, char **err, const char *const *args)
{
	char *fo = tu_path(tu_dir, "stdout"), *fe = tu_path(tu_dir, "stderr");
	const char *argv[32] = {tu_burrow()};
	int n = 1;
	for (; args[n - 1] && n < 31; n++)
		argv[n] = args[n - 1];
	argv[n] = NULL;
	pid_t pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int o = open(fo, O_WRONLY | O_CREAT | O_TRUNC, 0644), e = open(fe, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (o < 0 || e < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0)
			_exit(126);
		unsetenv("OPENBLAS_NUM_THREADS");
		unsetenv("GOTO_NUM_THREADS");
		struct rlimit rl = {limit, limit};
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(126);
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
	int ws;
	cr_assert_eq(waitpid(pid, &ws, 0), pid);
	*out = slurp(fo);
	*err = slurp(fe);
	free(fo);
	free(fe);
	return WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
}

/* The smallest limit (to 4 MiB) under which `burrow --version` runs: what the binary and
 * its libraries map before any work. */
static size_t base_limit(void)
{
	static const char *const version[] = {"--version", NULL};
	size_t lo = 4 * MiB, hi = (size_t)16 << 30;
	char *out, *err;
	int rc = run_limited(hi, &out, &err, version);
	cr_assert_eq(rc, 0, "burrow --version under %zu MiB: exit %d: %s", hi / MiB, rc, err);
	free(out);
	free(err);
	while (hi - lo > 4 * MiB) {
		const size_t mid = lo + (hi - lo) / 2;
		rc = run_limited(mid, &out, &err, version);
		*(rc == 0 ? &hi : &lo) = mid;
		free(out);
		free(err);
	}
	return hi;
}

/* A CSBM of `nodes` nodes with dim-wide float32 features at tu_dir/name; caller frees. */
static char *dataset(const char *name, int nodes, int dim)
{
	char *p = tu_path(tu_dir, "%s", name), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes %d --feat-dim %d --classes 4 --quiet", tu_burrow(), p,
			   nodes, dim),
		     0, "%s", err);
	free(err);
	return p;
}

/* Less than OpenBLAS's work buffer left over the binary's own mappings: exit 1 with one
 * line that says what did not fit under RLIMIT_AS, not a hang (the suite's timeout). */
Test(limits, small_limit_fails_with_one_line)
{
	SKIP_UNDER_ASAN();
	char *d = dataset("d", 300, 8), *out, *err;
	const size_t base = base_limit(), limit = base + 64 * MiB;
	const char *const args[] = {"train", d, "--epochs", "1", "--device", "cpu", NULL};
	int rc = run_limited(limit, &out, &err, args);
	cr_assert_eq(rc, 1, "exit %d under %zu MiB (--version needs %zu MiB): %s", rc, limit / MiB, base / MiB, err);
	cr_assert(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
	cr_assert(strstr(err, "RLIMIT_AS"), "the message does not name the limit: %s", err);
	cr_log_info("under %zu MiB: %s", limit / MiB, err);
	free(out);
	free(err);
	free(d);
}

/* eval under the same limit said "CK: the checkpoint's options: backend: ... RLIMIT_AS": the
 * line names the limit, not the checkpoint. */
Test(limits, eval_under_a_small_limit_names_the_limit)
{
	SKIP_UNDER_ASAN();
	char *d = dataset("d", 300, 8), *ck = tu_path(tu_dir, "ck"), *out, *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --epochs 1 --hidden 8 --threads 1 --quiet --checkpoint '%s'",
			   tu_burrow(), d, ck), 0, "%s", err);
	free(err);
	const size_t base = base_limit(), limit = base + 64 * MiB;
	const char *const args[] = {"eval", d, "--checkpoint", ck, "--device", "cpu", NULL};
	int rc = run_limited(limit, &out, &err, args);
	cr_assert_eq(rc, 1, "exit %d under %zu MiB (--version needs %zu MiB): %s", rc, limit / MiB, base / MiB, err);
	cr_assert(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
	cr_assert(strstr(err, "RLIMIT_AS") && !strstr(err, "checkpoint"), "the message does not name the limit alone: %s",
		  err);
	free(out);
	free(err);
	free(ck);
	free(d);
}

/* Enough for a small run, not for every feature row: training succeeds, with an automatic
 * cache of at most a quarter of what the limit leaves over the binary (so not every row). */
Test(limits, enough_limit_trains_with_cache_under_it)
{
	SKIP_UNDER_ASAN();
	char *d = dataset("d", 16384, 1024), *out, *err; /* 64 MiB of features */
	const size_t base = base_limit(), limit = base + 384 * MiB;
	const char *const args[] = {"train",   d,   "--epochs",	     "1",    "--max-batches", "2", "--eval-every", "0",
				    "--device", "cpu", "--hidden", "16", "--fanout", "5,5", "--batch-size", "64", NULL};
	int rc = run_limited(limit, &out, &err, args);
	cr_assert_eq(rc, 0, "exit %d under %zu MiB (--version needs %zu MiB): %s", rc, limit / MiB, base / MiB, err);
	const char *c = strstr(out, "cache ");
	cr_assert(c, "no cache in the header: %s", out);
	char *e;
	const char *p;
	const double mib = strtod(c + 6, &e);
	cr_assert(!strncmp(e, " MiB: ", 6), "%s", c);
	const long long rows = count(e + 6, &p);
	cr_assert(!strncmp(p, " of ", 4), "%s", c);
	const long long total = count(p + 4, &p);
	cr_log_info("under %zu MiB (base %zu MiB): cache %.1f MiB, %lld of %lld rows", limit / MiB, base / MiB, mib, rows,
		    total);
	cr_assert(mib * (double)MiB <= (double)(limit - base) / 4, "cache %.1f MiB over a quarter of the %zu MiB left", mib,
		  (limit - base) / MiB);
	cr_assert(rows < total, "every row cached (%lld) under %zu MiB", rows, limit / MiB);
	free(out);
	free(err);
	free(d);
}

/* dir/rel's parent folders made, then text written to it. */
static void put(const char *dir, const char *rel, const char *text)
{
	char *p = tu_path(dir, "%s", rel);
	for (char *s = strchr(p + strlen(dir) + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	FILE *f = fopen(p, "w");
	cr_assert(f, "%s", p);
	fputs(text, f);
	fclose(f);
	free(p);
}

/* The cgroup memory limit, read from trees laid out as the kernel lays out /proc/self/cgroup
 * and /sys/fs/cgroup: v1's memory controller, pure v2, v2 beside v1 (sysfs/unified); the
 * smallest limit on the way up wins; "max" and v1's unlimited page count are no limit. */
Test(limits, cgroup_memory_limit_is_the_smallest_on_the_way_up)
{
	const char *unlimited = "9223372036854771712\n";
	struct {
		const char *proc, *files[4][2];
		bool limited;
		size_t want;
	} cases[] = {
		/* v1: the cgroup itself is unlimited, its parent gives 1 GiB, the root nothing */
		{"9:pids:/\n4:memory:/a/b\n0::/\n",
		 {{"memory/a/b/memory.limit_in_bytes", unlimited},
		  {"memory/a/memory.limit_in_bytes", "1073741824\n"},
		  {"memory/memory.limit_in_bytes", unlimited}},
		 true, (size_t)1 << 30},
		/* v1, a comma-joined controller list, the leaf smaller than its parent */
		{"4:memory,hugetlb:/a/b\n",
		 {{"memory/a/b/memory.limit_in_bytes", "300000000\n"}, {"memory/a/memory.limit_in_bytes", "900000000\n"}},
		 true, 300000000},
		/* pure v2: cgroup.controllers at the top, memory.max in the leaf */
		{"0::/x/y\n",
		 {{"cgroup.controllers", "cpu memory\n"}, {"x/y/memory.max", "536870912\n"}, {"x/memory.max", "max\n"}},
		 true, (size_t)512 << 20},
		/* v2 beside v1: the unified tree under sysfs/unified; "max" all the way up */
		{"4:memory:/\n0::/x\n", {{"unified/x/memory.max", "max\n"}, {"memory/memory.limit_in_bytes", unlimited}}, false, 0},
		/* a memory controller named only in a longer name is not the memory controller */
		{"4:memory_x:/a\n", {{"memory/a/memory.limit_in_bytes", "1000\n"}}, false, 0},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *root = tu_path(tu_dir, "cg%zu", c), *proc = tu_path(tu_dir, "cg%zu.proc", c);
		cr_assert_eq(mkdir(root, 0755), 0);
		put(tu_dir, strrchr(proc, '/') + 1, cases[c].proc);
		for (int i = 0; i < 4 && cases[c].files[i][0]; i++)
			put(root, cases[c].files[i][0], cases[c].files[i][1]);
		size_t got;
		const bool limited = bw_cgroup_mem_limit_at(proc, root, &got);
		cr_assert_eq(limited, cases[c].limited, "case %zu", c);
		cr_assert_eq(got, cases[c].limited ? cases[c].want : SIZE_MAX, "case %zu: %zu", c, got);
		free(root);
		free(proc);
	}
	size_t got;
	cr_assert_not(bw_cgroup_mem_limit_at("/nonexistent/cgroup", "/nonexistent", &got));
	cr_assert_eq(got, SIZE_MAX);
}
