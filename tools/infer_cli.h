/* infer_cli.h: the options burrow eval, embed and predict share (a checkpointed model run over
 * a dataset by inference), in one table parsed once; each command adds only its own. */
#ifndef BURROW_INFER_CLI_H
#define BURROW_INFER_CLI_H

#include "cli.h"

#include <burrow.h>

#include <stdbool.h>

/* A command numbers its own options' codes from INFER_OWN up (the shared ones lie below). */
enum { INFER_OWN = 512 };

/* What the shared options set. */
typedef struct infer_args {
	burrow_train_opts o; /* defaults, then --mem, --eval-chunk, --scratch, --threads, --device, --tf32 */
	const char *ckpt;    /* --checkpoint C, borrowed from argv; NULL when not given */
	const char *dir;     /* the dataset directory, borrowed from argv */
} infer_args;

/* One command: its name, help, and own options. */
typedef struct infer_cmd {
	const char *name;         /* "eval": names the command in usage errors */
	void (*help)(void);       /* prints --help */
	bool device;              /* takes --device and --tf32 */
	const struct option *own; /* the command's own long options (codes >= INFER_OWN), ended by {0}; at most 16 */
	/* Take one own option (arg: its value, NULL when it has none) into a or self: 0, or the
	 * exit code after printing one usage line. */
	int (*take)(infer_args *a, void *self, int code, const char *arg);
	void *self;               /* the command's own values, borrowed */
} infer_cmd;

/* Parse argv (argv[0] is the command's name) into a: the shared options, the command's own
 * through cmd->take, then exactly one dataset directory. 0 to go on, -1 after printing
 * --help, else the exit code after printing one usage line. */
int infer_args_parse(const infer_cmd *cmd, int argc, char **argv, infer_args *a);

/* Report evaluation's layers over all nodes on a terminal through pb (a bar erased when done). */
void infer_args_progress(infer_args *a, cli_progress *pb);

/* --out PATH unless --force: refuse an existing file. 0, or EXIT_FAIL after printing why. */
int infer_out_free(const char *cmd, const char *out, bool force);
/* A dataset imported with --relabel (DIR/orig_ids.npy or orig_ids.txt): the original id of each
 * row of out (node ids[i], or node i when ids is NULL) into OUT.orig_ids.npy / .txt beside it,
 * said in one line. 0 also when the dataset has no original ids; EXIT_FAIL after a message. */
int infer_orig_ids(const char *cmd, const char *dir, const char *out, const int64_t *ids, int64_t n);

#endif
