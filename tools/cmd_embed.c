/* cmd_embed.c: burrow embed DIR --checkpoint C --out X.npy [--layer K]: a layer's output for
 * every node (the final layer's, the logits, by default). */
#include "infer_cli.h"
#include "train_cli.h"

#include <stdio.h>

static void help(void)
{
	printf("usage: burrow embed DIR --checkpoint C --out X.npy [--layer K] [--force] [--mem BYTES]\n"
	       "                      [--eval-chunk N] [--scratch DIR] [--threads T] [--device D] [--tf32]\n\n"
	       "Write a checkpointed model's layer K output for every node of DIR, [N, width] float32, by\n"
	       "layer-wise full-neighbor inference: by default the final layer's (the class logits,\n"
	       "[N, classes]); --layer 1 .. L-1 gives a hidden layer's embeddings ([N, hidden], after its\n"
	       "ReLU, as the next layer reads them). C is a checkpoint file or a --checkpoint directory of\n"
	       "burrow train: its best.ckpt (the weights of the epoch with the best valid accuracy), else\n"
	       "last.ckpt; give C/last.ckpt for the last epoch's weights. The file is written atomically.\n\n"
	       "  --layer K       1 .. L (the model's layers; default L)\n"
	       "  --force         replace X.npy if it exists\n"
	       "  --mem, --eval-chunk, --scratch, --threads, --device, --tf32, --split-name   as for burrow\n"
	       "                    eval\n");
}

enum { O_OUT = INFER_OWN, O_LAYER, O_FORCE };

/* embed's own options. */
typedef struct embed_own {
	const char *out; /* --out X.npy, borrowed from argv */
	bool force;
	int64_t layer;   /* 0: the last */
} embed_own;

static int take(infer_args *a, void *self, int code, const char *arg)
{
	(void)a;
	embed_own *e = self;
	switch (code) {
	case O_OUT: e->out = arg; break;
	case O_FORCE: e->force = true; break;
	case O_LAYER:
		if (!cli_i64(arg, &e->layer) || e->layer < 1 || e->layer > BURROW_MAX_LAYERS)
			return cli_usage("embed", "--layer wants an integer in [1, %d], got '%s'", BURROW_MAX_LAYERS, arg);
		break;
	default: return EXIT_USAGE;
	}
	return 0;
}

int cmd_embed(int argc, char **argv)
{
	static const struct option own[] = {
		{"out", required_argument, 0, O_OUT},
		{"force", no_argument, 0, O_FORCE},
		{"layer", required_argument, 0, O_LAYER},
		{0, 0, 0, 0},
	};
	embed_own e = {0};
	const infer_cmd cmd = {.name = "embed", .help = help, .device = true, .own = own, .take = take, .self = &e};
	infer_args a;
	int rc = infer_args_parse(&cmd, argc, argv, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!a.ckpt || !e.out)
		return cli_usage("embed", "--checkpoint and --out are required");
	if (infer_out_free("embed", e.out, e.force))
		return EXIT_FAIL;
	cli_progress pb; /* evaluation's layers over all nodes, on a terminal */
	infer_args_progress(&a, &pb);
	burrow_dataset *ds;
	burrow_trainer *t;
	burrow_train_opts mo; /* the model's shape, as the checkpoint has it */
	if (train_cli_restore("embed", a.dir, a.ckpt, &a.o, &ds, &t, &mo))
		return EXIT_FAIL;
	const double t0 = cli_now();
	int st = 0;
	const int64_t layer = e.layer;
	if (layer > mo.layers) {
		rc = cli_fail("embed", "--layer %lld: the model has %d layers", (long long)layer, mo.layers);
	} else if ((st = burrow_trainer_embed_layer(t, (int)layer, e.out)) < 0) {
		rc = cli_lib_fail("embed", st);
	} else {
		const bool logits = layer == 0 || layer == mo.layers, link = mo.task == BURROW_TASK_LINK;
		fprintf(stderr, "burrow: embed: wrote %s (%lld x %lld float32, layer %d of %d%s) in %.2f s\n", e.out,
			(long long)burrow_dataset_get_info(ds)->num_nodes,
			logits && !link ? (long long)burrow_dataset_get_info(ds)->num_classes : (long long)mo.hidden,
			layer ? (int)layer : mo.layers, mo.layers,
			!logits ? "" : link ? ": the link encoder's embeddings" : ": the logits", cli_now() - t0);
		if (infer_orig_ids("embed", a.dir, e.out, NULL, burrow_dataset_get_info(ds)->num_nodes))
			rc = EXIT_FAIL;
	}
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	return rc;
}
