/* cmd_eval.c: burrow eval DIR --checkpoint C: OGB accuracy of a saved model. */
#include "infer_cli.h"
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
	       "valid accuracy), else last.ckpt; give C/last.ckpt for the last epoch's weights. On a typed\n"
	       "dataset the valid and test splits are scored on sampled neighborhoods (the fanouts the\n"
	       "checkpoint trained with, or --eval-fanout), --batch nodes at a time, as training does.\n\n"
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
	       "  --split-name N  the dataset's named split N (split/N/; burrow import --split-name)\n"
	       "  --device D      cpu, cuda or cuda:N: where inference computes (cpu)\n"
	       "  --tf32          cuda: GEMMs may round their inputs to TF32\n"
	       "  --json          one JSON object instead of text\n");
}

enum { O_SPLIT = INFER_OWN, O_JSON, O_EFAN, O_BATCH, O_SPLITS, O_CACHE };

/* eval's own options: the sampled evaluation's and the output's. */
typedef struct eval_own {
	bool json;
	int nfan;
} eval_own;

static int take(infer_args *a, void *self, int code, const char *arg)
{
	eval_own *e = self;
	burrow_train_opts *o = &a->o;
	int64_t v;
	switch (code) {
	case O_SPLIT:
		if (!cli_split(arg, o->split))
			return cli_usage("eval", "--split wants three fractions a,b,c >= 0 summing to at most 1, got '%s'", arg);
		break;
	case O_JSON: e->json = true; break;
	case O_EFAN:
		if (!train_cli_parse_fanout(arg, o->eval_fanout, &e->nfan))
			return cli_usage("eval", "--eval-fanout wants positive integers or -1 separated by commas, got '%s'",
					 arg);
		break;
	case O_BATCH:
		if (!cli_i64(arg, &v) || v < 1)
			return cli_usage("eval", "--batch wants a positive integer, got '%s'", arg);
		o->batch_size = v;
		break;
	case O_SPLITS:
		if (!train_cli_parse_splits(arg, &o->eval_splits))
			return cli_usage("eval", "--eval-splits wants split names train, valid, test separated by commas, "
					 "got '%s'", arg);
		break;
	case O_CACHE:
		if (!train_cli_parse_cache(arg, o))
			return cli_usage("eval", "--cache wants bytes (K/M/G suffixes) or a percentage up to 100%%, got '%s'",
					 arg);
		break;
	default: return EXIT_USAGE;
	}
	return 0;
}

int cmd_eval(int argc, char **argv)
{
	static const struct option own[] = {
		{"split", required_argument, 0, O_SPLIT},  {"json", no_argument, 0, O_JSON},
		{"eval-fanout", required_argument, 0, O_EFAN}, {"batch", required_argument, 0, O_BATCH},
		{"eval-splits", required_argument, 0, O_SPLITS}, {"cache", required_argument, 0, O_CACHE},
		{0, 0, 0, 0},
	};
	eval_own e = {0};
	const infer_cmd cmd = {.name = "eval", .help = help, .device = true, .own = own, .take = take, .self = &e};
	infer_args a;
	int rc = infer_args_parse(&cmd, argc, argv, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!a.ckpt)
		return cli_usage("eval", "--checkpoint is required");
	cli_progress pb; /* evaluation's layers over all nodes, on a terminal */
	infer_args_progress(&a, &pb);
	burrow_dataset *ds;
	burrow_trainer *t;
	if (train_cli_restore("eval", a.dir, a.ckpt, &a.o, &ds, &t, NULL))
		return EXIT_FAIL;
	burrow_eval_stats ev = {.size = sizeof ev};
	int st = burrow_trainer_evaluate(t, &ev);
	if (st < 0)
		rc = cli_lib_fail("eval", st);
	else if (e.json) { /* an empty split's accuracy is absent: null */
		printf("{\"epoch\": %d", burrow_trainer_epoch(t));
		train_cli_json_num(stdout, "train_acc", 'g', 17, ev.train_acc);
		train_cli_json_num(stdout, "valid_acc", 'g', 17, ev.valid_acc);
		train_cli_json_num(stdout, "test_acc", 'g', 17, ev.test_acc);
		char m[24];
		printf(", \"metric\": \"%s\"", train_cli_metric(m, sizeof m, ev.metric, ev.metric_k));
		printf(", \"eval_s\": %.6f, \"spilled_bytes\": %lld", ev.eval_s, (long long)ev.spilled_bytes);
		if (ev.valid_auc >= 0 || ev.test_auc >= 0) { /* link prediction: ROC-AUC beside the splits' metric */
			train_cli_json_num(stdout, "valid_auc", 'g', 17, ev.valid_auc);
			train_cli_json_num(stdout, "test_auc", 'g', 17, ev.test_auc);
		}
		printf("}\n");
	} else {
		char tr[16], va[16], te[16], m[24];
		printf("model after epoch %d: %strain %s  valid %s  test %s  (%.2f s)", burrow_trainer_epoch(t),
		       ev.metric == BURROW_METRIC_ROCAUC ? "rocauc " : "",
		       train_cli_num(tr, sizeof tr, 0, 4, 1, "", ev.train_acc),
		       train_cli_num(va, sizeof va, 0, 4, 1, "", ev.valid_acc),
		       train_cli_num(te, sizeof te, 0, 4, 1, "", ev.test_acc), ev.eval_s);
		if (ev.valid_auc >= 0 || ev.test_auc >= 0)
			printf("; %s; roc-auc valid %s  test %s", train_cli_metric(m, sizeof m, ev.metric, ev.metric_k),
			       train_cli_num(va, sizeof va, 0, 4, 1, "", ev.valid_auc),
			       train_cli_num(te, sizeof te, 0, 4, 1, "", ev.test_auc));
		printf("\n");
	}
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	return rc;
}
