/* cli.h: what the burrow subcommands share: error lines, exit codes, number parsing, progress. */
#ifndef BURROW_CLI_H
#define BURROW_CLI_H

#include <burrow.h>

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>

enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

typedef struct cli_cmd {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the command name */
} cli_cmd;

/* Ctrl-C and friends: SIGINT, SIGTERM and SIGHUP (each unless the parent made the process
 * ignore it) wake one thread, which removes the library's temporary outputs
 * (burrow_remove_temporaries), prints
 * "burrow: <cmd>: interrupted (SIGINT)" unless `quiet` (the MPI ranks but 0), and exits
 * 128 + the signal's number (130 for SIGINT, 143 for SIGTERM). A SIGBUS in one of the
 * library's file mappings (burrow_mapped_file: a dataset file truncated under the run) prints
 * one line naming the file, removes the temporaries likewise and exits 1. Call once. 0, or -1
 * when the thread cannot start (the signals then act as by default). */
int cli_interrupts_init(const char *cmd, bool quiet);

/* OMP_WAIT_POLICY=passive and OPENBLAS_NUM_THREADS=1 unless the user set them: exec argv
 * again with them (tools/env.c). Called first thing in main; returns when nothing is to do. */
void cli_env(char **argv);
/* The size of the MPI job that started this process (from the launchers' environment:
 * Open MPI, MPICH's PMI), 1 when not under mpirun; *rank gets this process's rank. */
int cli_launcher_size(int *rank);
/* "burrow: <what>: <why>" on stderr; returns EXIT_FAIL. */
int cli_fail(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The library's message for a failed call, without a leading "<what>: " that would repeat
 * the command's name, through cli_text (it may quote a name read from a file). */
const char *cli_lib_message(const char *what, int status);
/* s for a line of text: a backslash and the control characters escaped as C writes them
 * (\\, \n, \t, \x1b ...), so that a string read from a file (a dataset's name) cannot break
 * the line or steer the terminal; in one of four rotating buffers (enough for one printf),
 * cut past 8,000 bytes. */
const char *cli_text(const char *s);
/* Print it as "burrow: <what>: <message>"; returns EXIT_FAIL. */
int cli_lib_fail(const char *what, int status);
/* EXIT_OK for a homogeneous (format version 1) dataset; for a typed one (version 2), which
 * cmd cannot read, its one-line refusal and EXIT_FAIL. */
int cli_homogeneous(const char *cmd, const char *dir, const burrow_dataset *ds);
/* A usage error: "burrow: <cmd>: <why> (see 'burrow <cmd> --help')"; returns EXIT_USAGE. */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Run getopt_long over argv; on an unknown option or missing argument print a usage
 * error and return '?' (the caller returns EXIT_USAGE). */
int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts, const struct option *longopts);

/* Parse whole strings; false when malformed or out of range. */
bool cli_i64(const char *s, int64_t *v);
bool cli_f64(const char *s, double *v);
/* Bytes with an optional K/M/G/T suffix (powers of 1024). */
bool cli_bytes(const char *s, int64_t *v);

/* A split's fractions "a,b,c" (train, valid, test), each >= 0, summing to at most 1 (and more
 * than 0). */
bool cli_split(const char *s, double f[3]);

/* Human-readable byte count into buf ("1.5 GiB"). */
const char *cli_human_bytes(double bytes, char *buf, size_t cap);
/* 1234567 -> "1,234,567". */
const char *cli_grouped(int64_t v, char *buf, size_t cap);

/* Progress reporter for burrow_progress_fn: a bar on a terminal, nothing otherwise or when quiet.
 * Each line shows the phase, the bar, the share done, the seconds elapsed, the ETA and the
 * rate (units per second). A phase restarts its clock when its name changes or its count
 * starts again (the next epoch's batches). */
typedef struct cli_progress {
	bool enabled;
	double start, last;
	char phase[32];
	double phase_start;
	uint64_t last_done;
	char label[32];   /* printed before the phase ("epoch 3 "), may be empty */
	bool erase;       /* a finished phase erases its line instead of ending it */
	double log_every; /* > 0: stderr is no terminal and BURROW_PROGRESS asked for a line every
			     this many seconds (and at each phase's start and end) instead of a bar */
} cli_progress;
void cli_progress_init(cli_progress *p, bool quiet);
void cli_progress_cb(void *user, const char *phase, uint64_t done, uint64_t total);
void cli_progress_done(cli_progress *p);

/* The median of v[0 .. n) (n >= 1; the mean of the middle two when n is even); v is sorted. */
double cli_median(double *v, int n);

/* Is dir a parts directory written by burrow partition (its meta.json of format
 * "burrow-parts")? Reads only the head of the file. */
bool cli_is_parts_dir(const char *dir);

/* Monotonic seconds. */
double cli_now(void);

/* Library log messages to stderr ("burrow: warning: ..."). */
void cli_log(int level, const char *msg, void *user);

#endif
