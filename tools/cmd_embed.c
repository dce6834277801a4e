/* cmd_embed.c: burrow embed DIR --checkpoint C --out X.npy [--layer K]: a layer's output for
 * every node (the final layer's, the logits, by default). */
#include "cli.h"
#include "train_cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

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
	       "  --mem, --eval-chunk, --scratch, --threads, --device, --tf32   as for burrow eval\n");
}

enum { O_CKPT = 256, O_OUT, O_LAYER, O_FORCE, O_MEM, O_CHUNK, O_SCRATCH, O_THREADS, O_DEVICE, O_TF32, O_HELP };

int cmd_embed(int argc, char **argv)
{
	static const struct option lo[] = {
		{"checkpoint", required_argument, 0, O_CKPT}, {"out", required_argument, 0, O_OUT},
		{"force", no_argument, 0, O_FORCE},           {"mem", required_argument, 0, O_MEM},
		{"layer", required_argument, 0, O_LAYER},
		{"eval-chunk", required_argument, 0, O_CHUNK}, {"scratch", required_argument, 0, O_SCRATCH},
		{"threads", required_argument, 0, O_THREADS},
		{"device", required_argument, 0, O_DEVICE},   {"tf32", no_argument, 0, O_TF32}, {"help", no_argument, 0, O_HELP},
		{0, 0, 0, 0},
	};
	burrow_train_opts o;
	burrow_train_defaults(&o);
	const char *ckpt = NULL, *out = NULL;
	bool force = false;
	int64_t v, layer = 0;
	int c;
	while ((c = cli_getopt("embed", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_CKPT: ckpt = optarg; break;
		case O_OUT: out = optarg; break;
		case O_FORCE: force = true; break;
		case O_LAYER:
			if (!cli_i64(optarg, &layer) || layer < 1 || layer > BURROW_MAX_LAYERS)
				return cli_usage("embed", "--layer wants an integer in [1, %d], got '%s'", BURROW_MAX_LAYERS,
						 optarg);
			break;
		case O_MEM:
			if (!cli_bytes(optarg, &o.mem_bytes) || o.mem_bytes < 1)
				return cli_usage("embed", "--mem wants a byte count, got '%s'", optarg);
			break;
		case O_CHUNK:
			if (!cli_i64(optarg, &v) || v < 1)
				return cli_usage("embed", "--eval-chunk wants a positive integer, got '%s'", optarg);
			o.eval_chunk = v;
			break;
		case O_SCRATCH: o.scratch_dir = optarg; break;
		case O_DEVICE:
			if (burrow_device_check(optarg) == BURROW_E_INVAL)
				return cli_usage("embed", "--device wants cpu, cuda or cuda:N, got '%s'", optarg);
			o.device = optarg;
			break;
		case O_TF32: o.tf32 = true; break;
		case O_THREADS:
			if (!cli_i64(optarg, &v) || v < 1 || v > 4096)
				return cli_usage("embed", "--threads wants an integer in [1, 4096], got '%s'", optarg);
			o.threads = (int)v;
			break;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return cli_usage("embed", "expected one dataset directory");
	if (!ckpt || !out)
		return cli_usage("embed", "--checkpoint and --out are required");
	struct stat sb;
	if (!force && stat(out, &sb) == 0)
		return cli_fail("embed", "%s exists (use --force to replace it)", out);
	cli_progress pb; /* evaluation's layers over all nodes, on a terminal */
	cli_progress_init(&pb, false);
	pb.erase = true;
	o.progress = cli_progress_cb;
	o.progress_user = &pb;
	burrow_dataset *ds;
	burrow_trainer *t;
	burrow_train_opts mo; /* the model's shape, as the checkpoint has it */
	if (train_cli_restore("embed", argv[optind], ckpt, &o, &ds, &t, &mo))
		return EXIT_FAIL;
	const double t0 = cli_now();
	int st = 0, rc = EXIT_OK;
	if (layer > mo.layers) {
		rc = cli_fail("embed", "--layer %lld: the model has %d layers", (long long)layer, mo.layers);
	} else if ((st = burrow_trainer_embed_layer(t, (int)layer, out)) < 0) {
		rc = cli_lib_fail("embed", st);
	} else {
		const bool logits = layer == 0 || layer == mo.layers;
		fprintf(stderr, "burrow: embed: wrote %s (%lld x %lld float32, layer %d of %d%s) in %.2f s\n", out,
			(long long)burrow_dataset_get_info(ds)->num_nodes,
			logits ? (long long)burrow_dataset_get_info(ds)->num_classes : (long long)mo.hidden,
			layer ? (int)layer : mo.layers, mo.layers, logits ? ": the logits" : "", cli_now() - t0);
	}
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	return rc;
}
