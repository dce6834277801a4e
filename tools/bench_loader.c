/* bench_loader.c: burrow bench loader DIR: the C-driven data loader loop (sample a batch, gather
 * its input rows through the feature store, release), the anchor of python -m burrow.bench. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow bench loader DIR [--fanout 15,10,5] [--batch 1024] [--max-batches 50]\n"
	       "                              [--engine uring] [--seed 0]\n\n"
	       "One epoch (epoch 0) of the training split of DIR, at most --max-batches batches: each\n"
	       "batch sampled (prefetch 4, one producer thread, the sampler's defaults) and its input\n"
	       "rows gathered as float32 with burrow_store_gather (O_DIRECT, no cache), then released.\n"
	       "Prints one JSON object: batches, rows gathered, seconds, batches/s and rows/s. python -m\n"
	       "burrow.bench runs the same loop from Python beside it and prints the ratio.\n");
}

static bool parse_fanouts(const char *s, burrow_sampler_opts *o)
{
	int n = 0;
	char *dup = strdup(s), *save = NULL;
	if (!dup)
		return false;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int64_t v;
		if (n == BURROW_MAX_LAYERS || !cli_i64(tok, &v) || v < -1 || v > INT32_MAX) {
			free(dup);
			return false;
		}
		o->fanouts[n++] = (int)v;
	}
	free(dup);
	o->num_layers = n;
	return n > 0;
}

/* The loop: rows gathered and seconds taken into *rows, *seconds. */
static int run(burrow_dataset *ds, const burrow_sampler_opts *so, int engine, int64_t max_batches, int64_t *batches,
	       int64_t *rows, double *seconds)
{
	burrow_store_opts o;
	burrow_store_defaults(&o);
	o.engine = engine;
	o.out_dtype = BURROW_DTYPE_F32;
	burrow_store *s;
	burrow_sampler *sm = NULL;
	float *buf = NULL;
	size_t cap = 0;
	int st = burrow_store_open(&s, burrow_dataset_features_path(ds), &o);
	if (st < 0)
		return st;
	int64_t n;
	const int64_t *ids = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &n);
	if ((st = burrow_sampler_open(&sm, burrow_dataset_graph(ds), ids, n, so)) < 0)
		goto out_close;
	const size_t row = burrow_store_get_info(s)->out_row_bytes;
	*batches = *rows = 0;
	const double t0 = cli_now();
	if ((st = burrow_sampler_start(sm, 0)) < 0)
		goto out_close;
	while (*batches < max_batches) {
		burrow_batch *b;
		if ((st = burrow_sampler_next(sm, &b)) < 0)
			goto out_close;
		if (st == BURROW_DONE)
			break;
		if ((size_t)b->num_input > cap) {
			free(buf);
			cap = (size_t)b->num_input * 2;
			if (!(buf = malloc(cap * row))) {
				burrow_sampler_release(sm, b);
				st = BURROW_E_NOMEM;
				goto out_close;
			}
		}
		st = burrow_store_gather(s, b->input_ids, (size_t)b->num_input, buf);
		*rows += b->num_input;
		(*batches)++;
		burrow_sampler_release(sm, b);
		if (st < 0)
			goto out_close;
	}
	*seconds = cli_now() - t0;
	st = 0;
out_close:
	free(buf);
	burrow_sampler_close(sm);
	burrow_store_close(s);
	return st;
}

enum { O_FANOUT = 256, O_BATCH, O_MAXB, O_ENGINE, O_SEED };

int bench_loader(int argc, char **argv)
{
	static const struct option lo[] = {
		{"fanout", required_argument, 0, O_FANOUT}, {"batch", required_argument, 0, O_BATCH},
		{"max-batches", required_argument, 0, O_MAXB}, {"engine", required_argument, 0, O_ENGINE},
		{"seed", required_argument, 0, O_SEED},     {"help", no_argument, 0, 'h'},
		{0, 0, 0, 0},
	};
	burrow_sampler_opts so;
	burrow_sampler_defaults(&so);
	int64_t max_batches = 50, seed = 0;
	int engine = BURROW_STORE_URING, c;
	while ((c = cli_getopt("bench loader", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case O_FANOUT:
			if (!parse_fanouts(optarg, &so))
				return cli_usage("bench loader", "--fanout wants 1 to %d comma-separated integers >= -1, got '%s'",
						 BURROW_MAX_LAYERS, optarg);
			break;
		case O_BATCH:
			if (!cli_i64(optarg, &so.batch_size) || so.batch_size < 1 || so.batch_size > INT32_MAX)
				return cli_usage("bench loader", "--batch wants an integer >= 1, got '%s'", optarg);
			break;
		case O_MAXB:
			if (!cli_i64(optarg, &max_batches) || max_batches < 1)
				return cli_usage("bench loader", "--max-batches wants an integer >= 1, got '%s'", optarg);
			break;
		case O_ENGINE:
			if ((engine = burrow_store_engine_parse(optarg)) < 0)
				return cli_usage("bench loader", "--engine wants uring, pread or mmap, got '%s'", optarg);
			break;
		case O_SEED:
			if (!cli_i64(optarg, &seed) || seed < 0)
				return cli_usage("bench loader", "--seed wants an integer >= 0, got '%s'", optarg);
			break;
		case 'h':
			help();
			return EXIT_OK;
		default:
			return EXIT_USAGE;
		}
	}
	if (optind + 1 != argc)
		return cli_usage("bench loader", "wants one dataset directory");
	so.seed = (uint64_t)seed;
	burrow_dataset *ds;
	int st = burrow_dataset_open(&ds, argv[optind]);
	if (st < 0)
		return cli_lib_fail("bench loader", st);
	if (cli_homogeneous("bench loader", argv[optind], ds) != EXIT_OK) {
		burrow_dataset_close(ds);
		return EXIT_FAIL;
	}
	int64_t batches = 0, rows = 0;
	double secs = 0;
	st = run(ds, &so, engine, max_batches, &batches, &rows, &secs);
	burrow_dataset_close(ds);
	if (st < 0)
		return cli_lib_fail("bench loader", st);
	printf("{\"batches\": %lld, \"rows\": %lld, \"seconds\": %.4f, \"batches_per_s\": %.3f, \"rows_per_s\": %.1f}\n",
	       (long long)batches, (long long)rows, secs, secs > 0 ? (double)batches / secs : 0.0,
	       secs > 0 ? (double)rows / secs : 0.0);
	return EXIT_OK;
}
