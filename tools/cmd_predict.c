/* cmd_predict.c: burrow predict DIR --checkpoint C --out P.npy [--nodes ids.npy] [--proba]:
 * the class (or the class probabilities) a checkpointed model gives each node. */
#include "infer_cli.h"
#include "train_cli.h"

#include <stdio.h>
#include <stdlib.h>

static void help(void)
{
	printf("usage: burrow predict DIR --checkpoint C --out P.npy [--nodes IDS.npy] [--proba] [--force]\n"
	       "                        [--mem BYTES] [--eval-chunk N] [--scratch DIR] [--threads T]\n\n"
	       "Predict with a checkpointed model, by layer-wise full-neighbor inference over DIR (the\n"
	       "predictions burrow eval scores): P.npy gets each node's class, [n] int32 (the argmax of the\n"
	       "logits), or with --proba its class probabilities, [n, classes] float32 (the softmax of the\n"
	       "logits; each row sums to 1). n is every node of DIR in id order, or the nodes of --nodes in\n"
	       "its order. C is a checkpoint file or a --checkpoint directory of burrow train: its best.ckpt\n"
	       "(the weights of the epoch with the best valid accuracy), else last.ckpt; give C/last.ckpt\n"
	       "for the last epoch's weights. The file is written atomically. A dataset imported with\n"
	       "--relabel also gets P.orig_ids.npy (or .txt): row i's original id.\n\n"
	       "  --nodes IDS.npy  node ids, int32 or int64, 1-D (or [n, 1]); repeats allowed (all nodes)\n"
	       "  --proba          class probabilities instead of classes\n"
	       "  --force          replace P.npy if it exists\n"
	       "  --mem, --eval-chunk, --scratch, --threads, --split-name   as for burrow eval\n");
}

enum { O_OUT = INFER_OWN, O_NODES, O_PROBA, O_FORCE };

/* predict's own options. */
typedef struct predict_own {
	const char *out, *nodes; /* --out P.npy, --nodes IDS.npy: borrowed from argv */
	bool force, proba;
} predict_own;

static int take(infer_args *a, void *self, int code, const char *arg)
{
	(void)a;
	predict_own *p = self;
	switch (code) {
	case O_OUT: p->out = arg; break;
	case O_NODES: p->nodes = arg; break;
	case O_PROBA: p->proba = true; break;
	case O_FORCE: p->force = true; break;
	default: return EXIT_USAGE;
	}
	return 0;
}

/* --nodes: an int32 or int64 vector (or column) of ids as int64 (malloc'd into *ids). */
static int read_nodes(const char *path, int64_t **ids, int64_t *n)
{
	burrow_npy_array a;
	int st = burrow_npy_read(path, &a);
	if (st < 0)
		return cli_lib_fail("predict", st);
	int rc = EXIT_OK;
	if (a.dtype != BURROW_DTYPE_I32 && a.dtype != BURROW_DTYPE_I64)
		rc = cli_fail("predict", "%s: node ids must be int32 or int64, got %s", path, burrow_dtype_name(a.dtype));
	else if (!(a.ndim == 1 || (a.ndim == 2 && a.shape[1] == 1)))
		rc = cli_fail("predict", "%s: node ids must be a vector [n] (or [n, 1]), got %d dimensions", path, a.ndim);
	else if (!(*ids = malloc((size_t)(a.count ? a.count : 1) * sizeof **ids)))
		rc = cli_fail("predict", "out of memory");
	else {
		for (int64_t i = 0; i < a.count; i++)
			(*ids)[i] = a.dtype == BURROW_DTYPE_I32 ? ((const int32_t *)a.data)[i] : ((const int64_t *)a.data)[i];
		*n = a.count;
	}
	burrow_npy_free(&a);
	return rc;
}

int cmd_predict(int argc, char **argv)
{
	static const struct option own[] = {
		{"out", required_argument, 0, O_OUT},   {"nodes", required_argument, 0, O_NODES},
		{"proba", no_argument, 0, O_PROBA},     {"force", no_argument, 0, O_FORCE},
		{0, 0, 0, 0},
	};
	predict_own p = {0};
	const infer_cmd cmd = {.name = "predict", .help = help, .device = false, .own = own, .take = take, .self = &p};
	infer_args a;
	int rc = infer_args_parse(&cmd, argc, argv, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!a.ckpt || !p.out)
		return cli_usage("predict", "--checkpoint and --out are required");
	if (infer_out_free("predict", p.out, p.force))
		return EXIT_FAIL;
	int64_t *ids = NULL, n = 0;
	if (p.nodes && read_nodes(p.nodes, &ids, &n))
		return EXIT_FAIL;
	burrow_dataset *ds;
	burrow_trainer *t;
	if (train_cli_restore("predict", a.dir, a.ckpt, &a.o, &ds, &t, NULL)) {
		free(ids);
		return EXIT_FAIL;
	}
	const double t0 = cli_now();
	const int64_t rows = ids ? n : burrow_dataset_get_info(ds)->num_nodes;
	int st = burrow_trainer_predict(t, ids, n, p.proba, p.out);
	if (st < 0) {
		rc = cli_lib_fail("predict", st);
	} else if (burrow_dataset_get_info(ds)->num_tasks) {
		fprintf(stderr, "burrow: predict: wrote %s (%lld x %d %s) in %.2f s\n", p.out, (long long)rows,
			burrow_dataset_get_info(ds)->num_tasks,
			p.proba ? "float32 probabilities, the sigmoid of each task's logit" : "int8 labels, p > 0.5",
			cli_now() - t0);
	} else if (p.proba) {
		fprintf(stderr, "burrow: predict: wrote %s (%lld x %d float32 class probabilities) in %.2f s\n", p.out,
			(long long)rows, burrow_dataset_get_info(ds)->num_classes, cli_now() - t0);
	} else {
		fprintf(stderr, "burrow: predict: wrote %s (%lld int32 classes) in %.2f s\n", p.out, (long long)rows,
			cli_now() - t0);
	}
	if (st >= 0 && infer_orig_ids("predict", a.dir, p.out, ids, rows))
		rc = EXIT_FAIL;
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(ids);
	return rc;
}
