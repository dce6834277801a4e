/* train_cli.h: what burrow train, eval, embed and bench train share: a trainer restored from a
 * checkpoint, the parsing of the pipeline's options. */
#ifndef BURROW_TRAIN_CLI_H
#define BURROW_TRAIN_CLI_H

#include <burrow.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Resolve C (a checkpoint file, or a --checkpoint directory: its best.ckpt, the best valid
 * epoch's weights, else last.ckpt), open the dataset DIR and a trainer shaped as the
 * checkpoint says, and load it; *model (when not NULL) gets the options it was opened with.
 * Prints the error as "burrow: <cmd>: ..." and returns EXIT_FAIL on failure, else 0. */
int train_cli_restore(const char *cmd, const char *dir, const char *ckpt, const burrow_train_opts *extra,
		      burrow_dataset **ds, burrow_trainer **t, burrow_train_opts *model);

/* The split the checkpoint at path trained on, into o (with its seed, which draws it): a
 * checkpoint records its --split (or the dataset's splits); one written before that keeps
 * o's. A --split in o that differs from the recorded one is refused. Prints the error as
 * "burrow: <cmd>: ..." and returns EXIT_FAIL, else 0. */
int train_cli_checkpoint_split(const char *cmd, const char *path, burrow_train_opts *o);
/* --resume takes the optimizer's lr, weight decay and momentum from o (the command line or
 * its defaults): where the checkpoint at path trained with others, one line on stderr names
 * both (nothing when they agree, or when the checkpoint cannot be read: its load says why). */
void train_cli_resume_warn(const char *cmd, const char *path, const burrow_train_opts *o);

/* --checkpoint DIR [--resume]: the paths DIR/last.ckpt and DIR/best.ckpt (malloc'd, into
 * *last and *best), with DIR created (mkdir -p) and checked: a directory, resuming needs a
 * last.ckpt, starting afresh refuses to overwrite one (or, best_only, a best.ckpt). *made
 * (may be NULL) gets how many folders of DIR's path it created. Prints the error and
 * returns EXIT_FAIL, else 0. */
int train_cli_checkpoint_dir(const char *cmd, const char *dir, bool resume, bool best_only, char **last, char **best,
			     int *made);
/* Whether epoch e (of a run to `epochs`) writes last.ckpt under --checkpoint-every `every`
 * and --checkpoint-best-only: every N epochs and at the last one, never when best only. */
bool train_cli_save_last(int e, int epochs, int every, bool best_only);
/* After a failed run: remove the `made` folders train_cli_checkpoint_dir created for DIR
 * that are still empty (a checkpoint into a full disk leaves no empty folder behind). */
void train_cli_checkpoint_unmake(const char *dir, int made);

/* --cache SIZE: "25%" (of the features: o->cache_fraction) or bytes with K/M/G suffixes
 * (o->cache_bytes). False when malformed or above 100%. */
bool train_cli_parse_cache(const char *s, burrow_train_opts *o);
/* --fanout a,b,c (and --eval-fanout): positive integers or -1, input layer first, into
 * out[BURROW_MAX_LAYERS]; *n gets the count. */
bool train_cli_parse_fanout(const char *s, int32_t *out, int *n);
/* --eval-splits train,valid,test: one to three distinct split names separated by commas, into
 * the mask of BURROW_EVAL_* bits. False when malformed, empty or repeated. */
bool train_cli_parse_splits(const char *s, unsigned *out);
/* --layers and --fanout together, after parsing: a fanout list (fanout, NULL when not given,
 * of nfanout values) sets o->layers to its length unless --layers was given (layers_set),
 * which it must then match; without one, o->fanout gets the default 5 x (L - l). Returns 0,
 * or prints the usage error naming both (unless cmd is NULL: a rank that keeps quiet) and
 * returns EXIT_USAGE. */
int train_cli_layers_fanout(const char *cmd, burrow_train_opts *o, bool layers_set, const char *fanout, int nfanout);

/* An absent measurement (the library's -1: an empty split, an epoch not evaluated, a hit rate
 * of no requests) prints "-", never a number. v with `prec` decimals (times `scale`, then
 * `unit`, for percentages), right-aligned in `width` columns, or "-" there; returns buf. */
const char *train_cli_num(char *buf, size_t cap, int width, int prec, double scale, const char *unit, double v);
/* ", \"key\": v" as printf's %.<prec><conv> (conv 'g' or 'f'), or ", \"key\": null" when v < 0. */
void train_cli_json_num(FILE *f, const char *key, char conv, int prec, double v);
/* What the best evaluation found, for the run's last line: "best valid V at epoch E: test
 * accuracy T", or without a valid split "no valid split: test accuracy T at epoch E, the last
 * evaluation"; b->epoch must be >= 0. Returns buf. */
const char *train_cli_best(char *buf, size_t cap, const burrow_best *b);
/* A metric's name (enum burrow_metric_kind, K of hits@K): "accuracy", "hits@50", "mrr", ...;
 * returns buf. train_cli_set_metric: train_cli_best names ev's metric from now on (the run's). */
const char *train_cli_metric(char *buf, size_t cap, int metric, int k);
void train_cli_set_metric(const burrow_eval_stats *ev);
/* The run's last line, for every run: the best (train_cli_best), "no evaluation (--eval-every
 * 0)", or when it trained no epoch "nothing trained: --epochs 0", "nothing trained: <ckpt>
 * already holds D epochs (--epochs E)" followed by the checkpoint's best. trained: epochs this
 * run trained; done: epochs the model had before it; resumed_from: the checkpoint resumed,
 * or NULL. Returns buf. */
/* training habits: the header's words for them (", lr step x0.1 every 30 epochs, patience 20,
 * normalized features"; "" when none is set), and the last line's tail when --patience
 * stopped the run after epoch `stopped` ("" when 0). Static storage. */
const char *train_cli_habits(const burrow_train_opts *o);
const char *train_cli_stopped(int stopped, int patience);
const char *train_cli_result(char *buf, size_t cap, const burrow_best *b, int trained, int done, int epochs,
			     const char *resumed_from);

/* Open the --log file for an epoch loop that starts after epoch `done`: "w" for a fresh
 * run; on --resume, "a" after cutting the file at its first line of an epoch later than
 * `done` (written before a kill that came ahead of that epoch's checkpoint) or its last
 * line when incomplete, so that each epoch is in the log once, and at the config lines that
 * then end it (those of runs that logged nothing after them: this run writes its own). NULL
 * with errno on failure. */
FILE *train_cli_log_open(const char *path, bool resume, int done);

struct cJSON;
/* What --log's config line says beside the options. */
typedef struct train_log_run {
	int argc;                 /* burrow train's arguments, argv[0] "train", as the parse left */
	char **argv;              /* them (the directory last) (borrowed) */
	const char *dir;          /* the dataset or parts directory as given (borrowed) */
	const char *name;         /* the dataset's name (borrowed) */
	int64_t nodes;            /* its nodes (all parts') */
	int classes;              /* its classes (0: none) */
	bool typed;               /* a typed dataset (format version 2) */
	int ranks;                /* mpirun's ranks (one per part), 0 for one process */
	const char *resumed_from; /* the checkpoint this run resumed, NULL for a fresh run (borrowed) */
	int after_epoch;          /* the epochs it held */
	struct cJSON *options;    /* train_args_json's object (borrowed) */
} train_log_run;
/* --log's config line, the first of a run (a resumed run appends its own): {"config":
 * {"burrow": version, "command", "dataset": {...}, "ranks", "resumed_from", "after_epoch",
 * "options": {...}}}; one schema for one process and mpirun, null where absent. Flushed; -1
 * with errno when it or an earlier write failed, or out of memory, else 0. */
int train_cli_log_config(FILE *f, const train_log_run *r);
/* --log's other objects, one schema for one process and for mpirun: an epoch's (ranks > 0 adds
 * "ranks" and the communication times of cs), and the final one (ranks > 0 adds "ranks" and
 * whether the replicas' weights are equal). Absent values are null. Each is flushed; -1 with
 * errno when it or an earlier write failed (a full disk), else 0. */
int train_cli_log_epoch(FILE *f, const burrow_epoch_stats *es, const burrow_eval_stats *ev, int ranks,
			const burrow_comm_stats *cs);
int train_cli_log_final(FILE *f, const burrow_best *b, int epochs, int trained, double total_s, uint64_t checksum,
			int ranks, bool weights_equal);

/* The named split (--split-name) the dataset opens of train_cli_restore and train_cli_select_split
 * use from now on (borrowed; NULL: the default split). */
void train_cli_use_split(const char *name);
/* Select that split in ds: 0, or EXIT_FAIL after printing why. */
int train_cli_select_split(const char *cmd, burrow_dataset *ds);

#endif
