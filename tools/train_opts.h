/* train_opts.h: burrow train's options in one table, for one process on a dataset
 * directory and for mpirun on a parts directory: each option's name, argument, range,
 * default, help and the modes it applies to. Both paths parse with it and --help prints it. */
#ifndef BURROW_TRAIN_OPTS_H
#define BURROW_TRAIN_OPTS_H

#include <burrow.h>

#include <stdbool.h>

/* Where burrow train runs: one process on a dataset, or one rank per part under mpirun. */
enum train_mode { TRAIN_ONE = 1, TRAIN_DIST = 2 };

/* Everything burrow train's command line sets. */
typedef struct train_args {
	burrow_dist_opts d;       /* d.train: the library's training options; the rest: mpirun only */
	int every;                /* --eval-every: evaluate every N epochs and after the last; 0 = never */
	const char *log, *ckpt;   /* --log FILE, --checkpoint DIR (borrowed from argv) */
	const char *dir;          /* the dataset or parts directory */
	bool resume, quiet;
	int ckpt_every;           /* --checkpoint-every: last.ckpt every N epochs and after the last (1) */
	bool best_only;           /* --checkpoint-best-only: best.ckpt alone, no last.ckpt */
	/* what the parse saw, for the checks that span options */
	bool layers_set;
	bool norm_set;            /* --norm given: else sage's max and sum get layer norm */
	bool hidden_set, lr_set;  /* --hidden, --lr given: else sage's sum gets SUM_HIDDEN, SUM_LR */
	bool every_set;           /* --checkpoint-every given */
	const char *fanout;       /* the --fanout text, NULL when absent */
	int nfanout;
	const char *eval_fanout;  /* the --eval-fanout text, NULL when absent */
	int neval_fanout;
	const char *mb_only;      /* the last option given that applies to mini-batch training only */
	const char *fg_only;      /* ... to --full-graph training only */
	const char *split_name;   /* --split-name: a named split of the dataset (NULL: the default) */
} train_args;

/* Parse argv (argv[0] is "train") for mode into a. Returns 0 to go on, -1 after printing
 * --help, else the exit code after printing one usage line (only when `speak`: under mpirun
 * only rank 0 speaks, every rank returns the code). */
int train_args_parse(int argc, char **argv, int mode, bool speak, train_args *a);

struct cJSON;
/* Every option of the table as burrow train resolved it (its defaults, the command line and
 * its rules), into obj: one key per option, its name with '_' for '-' (an alias once), holding
 * the option's value, or null where it does not apply (the other mode; mini-batch options in
 * full-graph training and the reverse); "mode" ("full-graph" or "mini-batch") replaces
 * --full-graph and "fanout" is the one each layer samples. False when out of memory. */
bool train_args_json(const train_args *a, int mode, struct cJSON *obj);

#endif
