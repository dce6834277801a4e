/* fuzz_checkpoint.c: libFuzzer harness for checkpoint files: the input is a checkpoint
 * read by burrow_checkpoint_read_opts and restored by burrow_trainer_load into a trainer of
 * the seed corpus's shape (2-layer GraphSAGE, hidden 8, Adam) over a small generated
 * dataset. A checkpoint it accepts must load again from its own save. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>

static burrow_dataset *ds;
static burrow_trainer *tr;

static void die(const char *what)
{
	fprintf(stderr, "fuzz_checkpoint: %s: %s\n", what, burrow_last_error());
	abort();
}

/* The dataset and the trainer every input loads into (made once; their memory is the
 * baseline the counter returns to). */
static void setup(void)
{
	char dir[512];
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = 40;
	g.num_classes = 3;
	g.feat_dim = 4;
	g.avg_degree = 4;
	if (burrow_gen(&g, fz_path(dir, sizeof dir, "ds")) < 0)
		die("gen");
	if (burrow_dataset_open(&ds, dir) < 0)
		die("dataset");
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.layers = 2;
	o.hidden = 8;
	o.full_graph = true;
	o.threads = 1;
	if (burrow_trainer_open(&tr, ds, &o) < 0)
		die("trainer");
	/* the trainer keeps a host copy of its best weights, made at its first best and reused after:
	 * make it now, so that the per-input memory check sees only what an input leaks */
	burrow_eval_stats ev = {.size = sizeof ev};
	if (burrow_trainer_evaluate(tr, &ev) < 0)
		die("evaluate");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!tr)
		setup();
	size_t mem0 = fz_mem_now();
	char path[512], again[512];
	fz_write(fz_path(path, sizeof path, "in.ckpt"), data, size);
	burrow_train_opts o;
	burrow_train_defaults(&o);
	(void)burrow_checkpoint_read_opts(path, &o);
	if (burrow_trainer_load(tr, path) == 0) {
		uint64_t sum = burrow_trainer_weights_checksum(tr);
		if (burrow_trainer_save(tr, fz_path(again, sizeof again, "again.ckpt")) < 0 ||
		    burrow_trainer_load(tr, again) < 0 || burrow_trainer_weights_checksum(tr) != sum)
			die("an accepted checkpoint does not load again from its own save");
	}
	fz_mem_check(mem0, "checkpoint");
	return 0;
}
