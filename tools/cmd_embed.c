/* cmd_embed.c: burrow embed DIR --checkpoint C --out X.npy: the final layer for every node. */
#include "cli.h"
#include "train_cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void help(void)
{
	printf("usage: burrow embed DIR --checkpoint C --out X.npy [--force] [--mem BYTES] [--eval-chunk N]\n"
	       "                      [--scratch DIR] [--threads T]\n\n"
	       "Write the final layer's output (the class logits) of a checkpointed model for every node of\n"
	       "DIR, [N, classes] float32, by layer-wise full-neighbor inference. C is a checkpoint file or a\n"
	       "--checkpoint directory (its best.ckpt, else last.ckpt). The file is written atomically.\n\n"
	       "  --force         replace X.npy if it exists\n"
	       "  --mem, --eval-chunk, --scratch, --threads   as for burrow eval\n");
}

enum { O_CKPT = 256, O_OUT, O_FORCE, O_MEM, O_CHUNK, O_SCRATCH, O_THREADS, O_HELP };

int cmd_embed(int argc, char **argv)
{
	static const struct option lo[] = {
		{"checkpoint", required_argument, 0, O_CKPT}, {"out", required_argument, 0, O_OUT},
		{"force", no_argument, 0, O_FORCE},           {"mem", required_argument, 0, O_MEM},
		{"eval-chunk", required_argument, 0, O_CHUNK}, {"scratch", required_argument, 0, O_SCRATCH},
		{"threads", required_argument, 0, O_THREADS}, {"help", no_argument, 0, O_HELP},
		{0, 0, 0, 0},
	};
	burrow_train_opts o;
	burrow_train_defaults(&o);
	const char *ckpt = NULL, *out = NULL;
	bool force = false;
	int64_t v;
	int c;
	while ((c = cli_getopt("embed", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_CKPT: ckpt = optarg; break;
		case O_OUT: out = optarg; break;
		case O_FORCE: force = true; break;
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
	if (train_cli_restore("embed", argv[optind], ckpt, &o, &ds, &t))
		return EXIT_FAIL;
	const double t0 = cli_now();
	int st = burrow_trainer_embed(t, out), rc = EXIT_OK;
	if (st < 0)
		rc = cli_lib_fail("embed", st);
	else
		fprintf(stderr, "burrow: embed: wrote %s (%lld x %d float32) in %.2f s\n", out,
			(long long)burrow_dataset_get_info(ds)->num_nodes, burrow_dataset_get_info(ds)->num_classes,
			cli_now() - t0);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	return rc;
}
