/* cmd_eval.c: burrow eval DIR --checkpoint C: OGB accuracy of a saved model. */
#include "cli.h"
#include "train_cli.h"

#include <stdio.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow eval DIR --checkpoint C [--split a,b,c] [--eval-fanout a,b,c] [--batch B] [--mem BYTES]\n"
	       "                     [--eval-splits S] [--cache SIZE] [--eval-chunk N] [--scratch DIR]\n"
	       "                     [--threads T] [--device D] [--tf32] [--json]\n\n"
	       "Accuracy (correct / total) of a checkpointed model on the train, valid and test splits of\n"
	       "DIR, by layer-wise full-neighbor inference over all nodes (or, with --eval-fanout, on\n"
	       "sampled neighborhoods of the split nodes only). C is a checkpoint file or a\n"
	       "--checkpoint directory of burrow train: its best.ckpt (the weights of the epoch with the best\n"
	       "valid accuracy), else last.ckpt; give C/last.ckpt for the last epoch's weights.\n\n"
	       "  --split a,b,c   the random split burrow train --split drew, for a checkpoint written before\n"
	       "                  checkpoints recorded it (a recorded one is used; a different --split is refused)\n"
	       "  --eval-fanout a,b,c  sample each split node's neighbors with these fanouts (one per layer,\n"
	       "                  input layer first, -1 = all), --batch nodes at a time: memory of one batch,\n"
	       "                  no N x hidden embeddings (off: layer-wise inference over all nodes)\n"
	       "  --batch B       split nodes per batch with --eval-fanout (1024)\n"
	       "  --eval-splits S the splits scored, names separated by commas (train,valid,test; valid,test\n"
	       "                  with --eval-fanout, whose time grows with the nodes scored)\n"
	       "  --cache SIZE    with --eval-fanout: the feature cache, bytes (K/M/G) or a percentage of the\n"
	       "                  features, as burrow train's (auto: all when they fit in a quarter of the\n"
	       "                  memory, else that quarter)\n"
	       "  --mem BYTES     keep a layer's embeddings in memory up to half of this, else spill (no limit)\n"
	       "  --eval-chunk N  destination rows per chunk (8192)\n"
	       "  --scratch DIR   where spills go ($TMPDIR or /tmp)\n"
	       "  --threads T     OpenMP threads, GEMMs split over them (all)\n"
	       "  --device D      cpu, cuda or cuda:N: where inference computes (cpu)\n"
	       "  --tf32          cuda: GEMMs may round their inputs to TF32\n"
	       "  --json          one JSON object instead of text\n");
}

enum { O_CKPT = 256, O_SPLIT, O_MEM, O_CHUNK, O_SCRATCH, O_THREADS, O_DEVICE, O_TF32, O_JSON, O_EFAN, O_BATCH,
       O_SPLITS, O_CACHE, O_HELP };

int cmd_eval(int argc, char **argv)
{
	static const struct option lo[] = {
		{"checkpoint", required_argument, 0, O_CKPT}, {"mem", required_argument, 0, O_MEM},
		{"eval-chunk", required_argument, 0, O_CHUNK}, {"scratch", required_argument, 0, O_SCRATCH},
		{"threads", required_argument, 0, O_THREADS}, {"json", no_argument, 0, O_JSON},
		{"device", required_argument, 0, O_DEVICE},   {"tf32", no_argument, 0, O_TF32},
		{"split", required_argument, 0, O_SPLIT},     {"eval-fanout", required_argument, 0, O_EFAN},
		{"batch", required_argument, 0, O_BATCH},     {"eval-splits", required_argument, 0, O_SPLITS},
		{"cache", required_argument, 0, O_CACHE},     {"help", no_argument, 0, O_HELP},
		{0, 0, 0, 0},
	};
	burrow_train_opts o;
	burrow_train_defaults(&o);
	const char *ckpt = NULL;
	bool json = false;
	int64_t v;
	int nfan = 0;
	int c;
	while ((c = cli_getopt("eval", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_CKPT: ckpt = optarg; break;
		case O_SPLIT:
			if (!cli_split(optarg, o.split))
				return cli_usage("eval", "--split wants three fractions a,b,c >= 0 summing to at most 1, got '%s'",
						 optarg);
			break;
		case O_MEM:
			if (!cli_bytes(optarg, &o.mem_bytes) || o.mem_bytes < 1)
				return cli_usage("eval", "--mem wants a byte count, got '%s'", optarg);
			break;
		case O_CHUNK:
			if (!cli_i64(optarg, &v) || v < 1)
				return cli_usage("eval", "--eval-chunk wants a positive integer, got '%s'", optarg);
			o.eval_chunk = v;
			break;
		case O_SCRATCH: o.scratch_dir = optarg; break;
		case O_DEVICE:
			if (burrow_device_check(optarg) == BURROW_E_INVAL)
				return cli_usage("eval", "--device wants cpu, cuda or cuda:N, got '%s'", optarg);
			o.device = optarg;
			break;
		case O_TF32: o.tf32 = true; break;
		case O_THREADS:
			if (!cli_i64(optarg, &v) || v < 1 || v > 4096)
				return cli_usage("eval", "--threads wants an integer in [1, 4096], got '%s'", optarg);
			o.threads = (int)v;
			break;
		case O_JSON: json = true; break;
		case O_EFAN:
			if (!train_cli_parse_fanout(optarg, o.eval_fanout, &nfan))
				return cli_usage("eval", "--eval-fanout wants positive integers or -1 separated by commas, got '%s'",
						 optarg);
			break;
		case O_BATCH:
			if (!cli_i64(optarg, &v) || v < 1)
				return cli_usage("eval", "--batch wants a positive integer, got '%s'", optarg);
			o.batch_size = v;
			break;
		case O_SPLITS:
			if (!train_cli_parse_splits(optarg, &o.eval_splits))
				return cli_usage("eval", "--eval-splits wants split names train, valid, test separated by commas, "
						 "got '%s'", optarg);
			break;
		case O_CACHE:
			if (!train_cli_parse_cache(optarg, &o))
				return cli_usage("eval", "--cache wants bytes (K/M/G suffixes) or a percentage up to 100%%, got '%s'",
						 optarg);
			break;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return cli_usage("eval", "expected one dataset directory");
	if (!ckpt)
		return cli_usage("eval", "--checkpoint is required");
	cli_progress pb; /* evaluation's layers over all nodes, on a terminal */
	cli_progress_init(&pb, false);
	pb.erase = true;
	o.progress = cli_progress_cb;
	o.progress_user = &pb;
	burrow_dataset *ds;
	burrow_trainer *t;
	if (train_cli_restore("eval", argv[optind], ckpt, &o, &ds, &t, NULL))
		return EXIT_FAIL;
	burrow_eval_stats ev = {.size = sizeof ev};
	int st = burrow_trainer_evaluate(t, &ev), rc = EXIT_OK;
	if (st < 0)
		rc = cli_lib_fail("eval", st);
	else if (json) { /* an empty split's accuracy is absent: null */
		printf("{\"epoch\": %d", burrow_trainer_epoch(t));
		train_cli_json_num(stdout, "train_acc", 'g', 17, ev.train_acc);
		train_cli_json_num(stdout, "valid_acc", 'g', 17, ev.valid_acc);
		train_cli_json_num(stdout, "test_acc", 'g', 17, ev.test_acc);
		printf(", \"eval_s\": %.6f, \"spilled_bytes\": %lld}\n", ev.eval_s, (long long)ev.spilled_bytes);
	} else {
		char a[16], b[16], c[16];
		printf("model after epoch %d: train %s  valid %s  test %s  (%.2f s)\n", burrow_trainer_epoch(t),
		       train_cli_num(a, sizeof a, 0, 4, 1, "", ev.train_acc), train_cli_num(b, sizeof b, 0, 4, 1, "", ev.valid_acc),
		       train_cli_num(c, sizeof c, 0, 4, 1, "", ev.test_acc), ev.eval_s);
	}
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	return rc;
}
