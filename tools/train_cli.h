/* train_cli.h: what burrow eval and burrow embed share: a trainer restored from a checkpoint. */
#ifndef BURROW_TRAIN_CLI_H
#define BURROW_TRAIN_CLI_H

#include <burrow.h>

/* Resolve C (a checkpoint file, or a --checkpoint directory: its best.ckpt, else last.ckpt),
 * open the dataset DIR and a trainer shaped as the checkpoint says, and load it. Prints the
 * error as "burrow: <cmd>: ..." and returns EXIT_FAIL on failure, else 0. */
int train_cli_restore(const char *cmd, const char *dir, const char *ckpt, const burrow_train_opts *extra,
		      burrow_dataset **ds, burrow_trainer **t);

#endif
