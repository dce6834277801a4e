/* test_vcache.c: the validation cache: a reopen of unchanged files skips the scan; any change, even in place with the old mtime, is scanned. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

TU_SCRATCH_SUITE(vcache, 120);

static int hits, stores;

/* Counts the cache's two debug messages. */
static void on_log(int level, const char *msg, void *user)
{
	(void)user;
	if (level == BURROW_LOG_DEBUG && strstr(msg, "validated before"))
		hits++;
	if (level == BURROW_LOG_DEBUG && strstr(msg, "remembered in"))
		stores++;
}

/* Entries of a directory (its names, sorted, joined), to see that nothing was added. */
static char *listing(const char *dir)
{
	char *out;
	cr_assert_eq(tu_sh(&out, NULL, "cd '%s' && find . | sort", dir), 0);
	return out;
}

/* Open must succeed (0) or fail (< 0) as `want`; returns the cache hits it made. */
static int open_as(const char *dir, int want)
{
	const int h0 = hits;
	burrow_dataset *ds = NULL;
	int st = burrow_dataset_open(&ds, dir);
	cr_assert_eq(st < 0, want < 0, "open %s: %d (%s)", dir, st, st ? burrow_last_error() : "");
	burrow_dataset_close(ds);
	return hits - h0;
}

Test(vcache, unchanged_files_skip_the_scan_and_any_change_is_scanned)
{
	char *cache = tu_path(tu_dir, "cache"), *d = tu_path(tu_dir, "d"), *err;
	setenv("XDG_CACHE_HOME", cache, 1);
	setenv("BURROW_VALIDATION_CACHE", "all", 1);
	burrow_log_set(on_log, NULL, BURROW_LOG_DEBUG);
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 300 --feat-dim 4 --quiet", tu_burrow(), d), 0, "%s", err);
	free(err);
	char *before = listing(d);

	/* just written: "racily clean", so scanned and not remembered */
	cr_assert_eq(open_as(d, 0), 0);
	cr_assert_eq(stores, 0, "files changed within the last tick were remembered");
	sleep(3);
	cr_assert_eq(open_as(d, 0), 0);
	cr_assert_eq(stores, 1);
	cr_assert_eq(open_as(d, 0), 1, "the second open of unchanged files scanned again");
	char *after = listing(d);
	cr_assert_str_eq(after, before, "the dataset directory changed");
	free(after);

	/* in place, the same size, the old mtime given back: the ctime tells */
	char *ix = tu_path(d, "indices.npy");
	struct stat sb;
	cr_assert_eq(stat(ix, &sb), 0);
	int fd = open(ix, O_WRONLY);
	cr_assert(fd >= 0);
	const int32_t bad = 1 << 30;
	cr_assert_eq(pwrite(fd, &bad, sizeof bad, sb.st_size - 4), 4);
	const struct timespec times[2] = {sb.st_atim, sb.st_mtim};
	cr_assert_eq(futimens(fd, times), 0);
	close(fd);
	struct stat sb2;
	cr_assert_eq(stat(ix, &sb2), 0);
	cr_assert(sb2.st_size == sb.st_size && sb2.st_mtim.tv_sec == sb.st_mtim.tv_sec &&
		  sb2.st_mtim.tv_nsec == sb.st_mtim.tv_nsec);
	cr_assert_eq(open_as(d, -1), 0, "a file changed in place was taken from the cache");
	cr_assert(strstr(burrow_last_error(), "indices.npy"), "%s", burrow_last_error());

	/* switched off: no lookups */
	setenv("BURROW_VALIDATION_CACHE", "0", 1);
	char *d2 = tu_path(tu_dir, "d2");
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm '%s' --nodes 300 --feat-dim 4 --quiet", tu_burrow(), d2), 0, "%s",
		     err);
	free(err);
	sleep(3);
	cr_assert_eq(open_as(d2, 0), 0);
	cr_assert_eq(open_as(d2, 0), 0);
	cr_assert_eq(stores, 1);

	/* an unwritable cache folder: opens still succeed, nothing remembered */
	setenv("BURROW_VALIDATION_CACHE", "all", 1);
	setenv("XDG_CACHE_HOME", "/proc/no-such-cache", 1);
	cr_assert_eq(open_as(d2, 0), 0);
	cr_assert_eq(stores, 1);
	burrow_log_set(NULL, NULL, BURROW_LOG_WARN);
	unsetenv("BURROW_VALIDATION_CACHE");
	unsetenv("XDG_CACHE_HOME");
	free(ix);
	free(before);
	free(cache);
	free(d);
	free(d2);
}
