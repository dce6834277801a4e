/* train_cli.c: restoring a trainer from a checkpoint for burrow eval and burrow embed. */
#define _GNU_SOURCE
#include "train_cli.h"

#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static char *resolve(const char *ckpt)
{
	struct stat sb;
	char *p = NULL;
	if (stat(ckpt, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (asprintf(&p, "%s/best.ckpt", ckpt) < 0)
			return NULL;
		if (stat(p, &sb) == 0)
			return p;
		free(p);
		if (asprintf(&p, "%s/last.ckpt", ckpt) < 0)
			return NULL;
		return p;
	}
	if (asprintf(&p, "%s", ckpt) < 0)
		return NULL;
	return p;
}

int train_cli_restore(const char *cmd, const char *dir, const char *ckpt, const burrow_train_opts *extra,
		      burrow_dataset **ds, burrow_trainer **t)
{
	*ds = NULL;
	*t = NULL;
	char *path = resolve(ckpt);
	if (!path)
		return cli_fail(cmd, "out of memory");
	burrow_train_opts o = *extra;
	int st = burrow_checkpoint_read_opts(path, &o);
	if (st >= 0 && (st = burrow_dataset_open(ds, dir)) >= 0 && (st = burrow_trainer_open(t, *ds, &o)) >= 0)
		st = burrow_trainer_load(*t, path);
	free(path);
	if (st < 0) {
		cli_lib_fail(cmd, st);
		burrow_trainer_close(*t);
		burrow_dataset_close(*ds);
		*t = NULL;
		*ds = NULL;
		return EXIT_FAIL;
	}
	return 0;
}
