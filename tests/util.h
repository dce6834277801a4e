/* util.h: what the test files share: scratch directories, running the burrow binary,
 * reading files, the shared real datasets. */
#ifndef BURROW_TEST_UTIL_H
#define BURROW_TEST_UTIL_H

#include <burrow.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Suites whose tests each get a fresh scratch directory, tu_dir, removed afterwards. */
extern char *tu_dir;
void tu_scratch_init(void);
void tu_scratch_fini(void);
#define TU_SCRATCH_SUITE(name, seconds) \
	TestSuite(name, .init = tu_scratch_init, .fini = tu_scratch_fini, .timeout = (seconds))

/* A fresh scratch directory (removed by tu_rmrf); caller frees the string. */
char *tu_tmpdir(void);
/* rm -rf path. */
void tu_rmrf(const char *path);
/* path joined with a printf-style suffix; caller frees. */
char *tu_path(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The library's counted bytes now (burrow_mem_stats): fail-after-N loops check that every
 * failed attempt returns them to where they started. */
size_t tu_mem_now(void);

/* The burrow binary under test ($BURROW_BIN). */
const char *tu_burrow(void);
/* The shared real datasets folder ($BURROW_DATASETS), or NULL when absent. */
const char *tu_datasets(void);

/* Run a shell command line; returns its exit status (or -1). When err is not NULL, it
 * receives the command's stderr (caller frees); out likewise for stdout. */
int tu_sh(char **out, char **err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Start a program (argv[0] its path, argv NULL-terminated) in the background, its stderr
 * into errpath, stdout to /dev/null, SIGINT and SIGTERM as by default whatever the runner
 * does with them. */
pid_t tu_start(const char *errpath, char *const argv[]);
/* Wait until something matches the glob `pattern` (what the program started by tu_start is
 * writing): polled, the suite's timeout bounds it. Fails the test when the program ends
 * first, with its stderr. */
void tu_wait_for(pid_t p, const char *pattern, const char *errpath);

/* The "loss" values of a JSON-lines --log file, as printed, into losses[0 .. max); returns
 * how many were found (-1 when the file cannot be read). */
int tu_log_losses(const char *path, char losses[][40], int max);

/* Whole file into memory (caller frees); *len gets its size. NULL when unreadable. */
void *tu_read(const char *path, size_t *len);
/* Does path exist? */
int tu_exists(const char *path);
/* Size of a file, -1 when absent. */
long long tu_size(const char *path);
/* Truncate a file to n bytes. */
void tu_truncate(const char *path, long long n);

/* P(chi-square with df degrees of freedom >= x), for the samplers' uniformity tests. */
double tu_chi2_sf(double x, double df);

#endif
