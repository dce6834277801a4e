/* bench_train.c: burrow bench train DIR: does the pipeline hide the feature I/O? One
 * mini-batch epoch with a partial cache against the same epoch with every row in memory
 * (T_mem) and against the time its reads take alone at the store's measured rate (T_io),
 * all measured in one run; node classification or link prediction (--task link). */
#include "bench_gemm.h"
#include "cli.h"
#include "train_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow bench train DIR [--model sage] [--layers 2] [--hidden 256] [--fanout 10,5]\n"
	       "                          [--batch 1024] [--max-batches 200] [--cache 10%%] [--cache-policy degree]\n"
	       "                          [--prefetch 2]"
	       " [--threads T] [--seed 0] [--io-rows 200000] [--repeat 1] [--json]\n"
	       "                          [--device cpu] [--tf32] [--task auto] [--neg 1] [--scorer dot]\n"
	       "                          [--io-gather 4096|auto] [--ops on|off] [--gemm-seconds 1]\n"
	       "                          [--sampler neighbor|labor|labor-star] [--labor-batch-dependency K]\n\n"
	       "Three measurements on the same features file, in one run:\n"
	       "  T_io    the rows the partial-cache epoch read from disk, divided by the rows/s of the\n"
	       "          store gathering uniformly random rows cold (as 'burrow bench io': io_uring,\n"
	       "          O_DIRECT, --io-gather rows per gather, 2 gathers in flight, queue depth 128)\n"
	       "  T_mem   one training epoch (epoch 1, --max-batches batches) with every row cached\n"
	       "          (--cache 100%%: the features in memory)\n"
	       "  epoch   the same epoch, same seed and batches, with --cache (the other rows read from disk)\n"
	       "and prints epoch / max(T_mem, T_io): 1.0 when the pipeline hides all it can; under the\n"
	       "partial-cache epoch, what it asked of the store (input nodes a batch, rows requested, rows\n"
	       "read after the cache and de-duplication, read requests, 4 KiB pages of the file they\n"
	       "covered, bytes; --json: its \"io\" object). The graph is\n"
	       "read through first so that no run waits on its pages; cache fills are not timed. With\n"
	       "--repeat R the three run R times, interleaved (the two epochs swap order every run), and\n"
	       "the medians are compared.\n\n"
	       "  --cache SIZE     the partial cache: bytes (K/M/G) or a percentage (10%%)\n"
	       "  --cache-policy P its policy: degree (static, the default), profile (static, by 64\n"
	       "                   pre-sampled batches) or clock\n"
	       "  --io-rows N      rows gathered to measure the store's rows/s (200000; with auto at\n"
	       "                   least 4 gathers)\n"
	       "  --io-gather G    rows per gather of that measurement: a number, or auto: the partial-cache\n"
	       "                   epoch's own rows read per batch, measured after the epochs (4096; link\n"
	       "                   datasets: auto, as an edge batch reads hundreds of thousands of rows at\n"
	       "                   once, and rows that share a 4 KiB block are read once)\n"
	       "  --fanout a,b     without --layers, sets the number of layers (as in burrow train)\n"
	       "  --task T         auto (the dataset's), node, multilabel or link: link measures epochs of\n"
	       "                   edge mini-batches (--batch positives each, --neg negatives per positive,\n"
	       "                   --scorer dot or mlp), the endpoints' neighborhoods gathered as nodes' are\n"
	       "  --ops on|off     count the in-memory epoch's compute ops (default on): per batch, each\n"
	       "                   class's seconds, GFLOP and GFLOP/s (products, aggregation, elementwise,\n"
	       "                   optimizer) and each layer's products; on a GPU it waits for every kernel,\n"
	       "                   which slows T_mem (turn it off there for the ratio)\n"
	       "  --gemm-seconds S with --ops on, time the CPU's GEMM at the first layer's shape after each\n"
	       "                   run's epochs (as 'burrow bench gemm': its forward and weight-gradient\n"
	       "                   products, backend and cblas, S seconds each, the best median) and print\n"
	       "                   the first layer's products' GFLOP/s as a ratio to it (default 1; 0: not\n"
	       "                   measured)\n"
	       "  other options as in burrow train\n");
}

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Rows per second of cold uniform random gathers of B rows, as burrow bench io's uring run. */
static int io_rate(const char *path, int64_t rows, int64_t B, uint64_t seed, double *rows_per_s)
{
	const int64_t K = 2, nb = (rows + B - 1) / B;
	burrow_store *s;
	int st = burrow_store_open(&s, path, NULL);
	if (st < 0)
		return st;
	const burrow_store_info *in = burrow_store_get_info(s);
	int64_t *ids = malloc((size_t)B * sizeof *ids);
	char *buf = malloc((size_t)(K * B) * in->out_row_bytes);
	burrow_store_ticket *tk[2] = {NULL, NULL};
	if (!ids || !buf) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	const double t0 = cli_now();
	for (int64_t i = 0; i < nb + K; i++) {
		const int64_t slot = i % K;
		if (tk[slot]) {
			int w = burrow_store_wait(s, tk[slot]);
			tk[slot] = NULL;
			if (w < 0 && st == 0)
				st = w;
		}
		if (st == 0 && i < nb) {
			const int64_t n = rows - i * B < B ? rows - i * B : B;
			const uint64_t key = mix(mix(seed) ^ (uint64_t)i);
			for (int64_t k = 0; k < n; k++)
				ids[k] = (int64_t)(mix(key + (uint64_t)k) % (uint64_t)in->num_rows);
			st = burrow_store_submit(s, ids, (size_t)n, buf + (size_t)(slot * B) * in->out_row_bytes, &tk[slot]);
		}
	}
	if (st == 0) {
		burrow_store_stats ss = {.size = sizeof ss};
		burrow_store_get_stats(s, &ss);
		*rows_per_s = (double)ss.rows / (cli_now() - t0);
	}
out:
	free(buf);
	free(ids);
	burrow_store_close(s);
	return st;
}

/* The feature reads of the partial-cache epoch, as JSON members (", \"io\": {...}"): what its
 * batches asked of the store and what the store read for them. */
static void io_json(const burrow_epoch_stats *e)
{
	printf(", \"io\": {\"input_nodes_per_batch\": %.1f, \"rows_requested\": %lld, \"rows_read\": %lld, "
	       "\"reads\": %lld, \"pages_read\": %lld, \"bytes_read\": %lld, \"cache_hit_rate\": %.4f}",
	       e->batches ? (double)e->rows_requested / (double)e->batches : 0.0, (long long)e->rows_requested,
	       (long long)e->rows_read, (long long)e->reads, (long long)e->pages_read, (long long)e->bytes_read,
	       e->cache_hit_rate);
}

/* The same as a line of the human report, under the epoch's row. */
static void io_line(const burrow_epoch_stats *e)
{
	char a[32], b[32], c[32], d[32], f[32];
	printf("     %-12s %.1f input nodes a batch; rows requested %s, read %s: %s reads, %s 4 KiB pages, %s\n", "  from disk",
	       e->batches ? (double)e->rows_requested / (double)e->batches : 0.0, cli_grouped(e->rows_requested, a, sizeof a),
	       cli_grouped(e->rows_read, b, sizeof b), cli_grouped(e->reads, c, sizeof c),
	       cli_grouped(e->pages_read, d, sizeof d), cli_human_bytes((double)e->bytes_read, f, sizeof f));
}

/* One training epoch of a fresh trainer (epoch 1: the same batches for the same seed), its
 * compute ops counted into *ops when not NULL. */
static int one_epoch(burrow_dataset *ds, const burrow_train_opts *o, burrow_epoch_stats *es, burrow_op_stats *ops)
{
	burrow_trainer *t;
	int st = burrow_trainer_open(&t, ds, o);
	if (st < 0)
		return st;
	if (ops)
		burrow_trainer_count_ops(t, true);
	st = burrow_trainer_train_epoch(t, es);
	if (!st && ops)
		st = burrow_trainer_op_stats(t, ops);
	burrow_trainer_close(t);
	return st;
}

static void touch_graph(const burrow_csr *g)
{
	volatile uint64_t sum = 0;
	const unsigned char *p = (const unsigned char *)g->indptr;
	for (size_t i = 0; i < (size_t)(g->num_nodes + 1) * sizeof(int64_t); i += 4096)
		sum += p[i];
	p = g->indices;
	for (size_t i = 0; i < (size_t)g->num_edges * (size_t)g->index_width; i += 4096)
		sum += p[i];
	(void)sum; /* the volatile is read, so the compiler counts it as used */
}

enum { O_MODEL = 256, O_LAYERS, O_HIDDEN, O_FANOUT, O_BATCH, O_MAXB, O_CACHE, O_PREFETCH, O_THREADS, O_SEED, O_IOROWS,
       O_REPEAT, O_JSON, O_HELP, O_POLICY, O_DEVICE, O_TF32, O_TASK, O_NEG, O_SCORER, O_IOGATHER, O_OPS, O_GEMMSEC,
       O_SAMPLER, O_LABORDEP };

/* One bench train: the options, the dataset, and each run's times. */
typedef struct train_run {
	burrow_train_opts o;   /* the epoch measured (its --cache) */
	burrow_train_opts om;  /* the epoch with every row in memory */
	bool json;
	int64_t io_rows, repeat;
	int64_t io_gather;     /* rows per gather of the rate's measurement; 0: auto; -1: not given */
	int64_t *gather;       /* [repeat] the rows per gather each run's rate used */
	const char *dir;
	burrow_dataset *ds;
	char fan[96];          /* the fanouts, "15,10,5" */
	double *rate, *tmem, *tcache, *tio; /* [repeat] io rows/s; the epochs' seconds, in memory and cached; io alone */
	bool ops;              /* count the in-memory epoch's ops (--ops) */
	double gemm_seconds;   /* --gemm-seconds */
	burrow_op_stats *opst; /* [repeat] the in-memory epochs' ops */
	gemm_cell gemm[2];     /* the first layer's forward and weight-gradient shapes, timed after each run's epochs */
	double gemm_rate;      /* their best median GFLOP/s in the last run; 0: not measured */
	double *first_ratio;   /* [repeat] the first layer's products' GFLOP/s / gemm_rate */
} train_run;

/* The command line into r: 0 to go on, -1 after --help, else the exit code. */
static int train_parse(train_run *r, int argc, char **argv)
{
	static const struct option lo[] = {
		{"model", required_argument, 0, O_MODEL},       {"layers", required_argument, 0, O_LAYERS},
		{"hidden", required_argument, 0, O_HIDDEN},     {"fanout", required_argument, 0, O_FANOUT},
		{"batch", required_argument, 0, O_BATCH},       {"max-batches", required_argument, 0, O_MAXB},
		{"cache", required_argument, 0, O_CACHE},       {"prefetch", required_argument, 0, O_PREFETCH},
		{"threads", required_argument, 0, O_THREADS},   {"seed", required_argument, 0, O_SEED},
		{"io-rows", required_argument, 0, O_IOROWS},    {"repeat", required_argument, 0, O_REPEAT},
		{"json", no_argument, 0, O_JSON},               {"help", no_argument, 0, O_HELP},
		{"cache-policy", required_argument, 0, O_POLICY}, {"device", required_argument, 0, O_DEVICE},
		{"tf32", no_argument, 0, O_TF32},               {"task", required_argument, 0, O_TASK},
		{"neg", required_argument, 0, O_NEG},           {"scorer", required_argument, 0, O_SCORER},
		{"io-gather", required_argument, 0, O_IOGATHER},
		{"ops", required_argument, 0, O_OPS},           {"gemm-seconds", required_argument, 0, O_GEMMSEC},
		{"sampler", required_argument, 0, O_SAMPLER},
		{"labor-batch-dependency", required_argument, 0, O_LABORDEP},
		{0, 0, 0, 0},
	};
	burrow_train_opts *o = &r->o;
	bool layers_set = false;
	const char *fanout = NULL;
	int nfanout = 0, c;
	int64_t v;
#define NUM(var, lo_, hi_)                                                                                     \
	do {                                                                                                   \
		if (!cli_i64(optarg, &v) || v < (lo_) || v > (hi_))                                            \
			return cli_usage("bench train", "--%s wants an integer in [%lld, %lld], got '%s'",      \
					 lo[c - O_MODEL].name, (long long)(lo_), (long long)(hi_), optarg);    \
		var = v;                                                                                       \
	} while (0)
	while ((c = cli_getopt("bench train", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return -1;
		case O_MODEL:
			if (!(o->model = burrow_model_parse(optarg)))
				return cli_usage("bench train", "--model wants sage, gcn, gat or mlp, got '%s'", optarg);
			break;
		case O_LAYERS:
			NUM(o->layers, 1, BURROW_MAX_LAYERS);
			layers_set = true;
			break;
		case O_HIDDEN: NUM(o->hidden, 1, 1 << 20); break;
		case O_FANOUT:
			if (!train_cli_parse_fanout(optarg, o->fanout, &nfanout))
				return cli_usage("bench train", "--fanout wants positive integers or -1, got '%s'", optarg);
			fanout = optarg;
			break;
		case O_BATCH: NUM(o->batch_size, 1, (int64_t)1 << 40); break;
		case O_MAXB: NUM(o->max_batches, 1, INT64_MAX); break;
		case O_CACHE:
			if (!train_cli_parse_cache(optarg, o))
				return cli_usage("bench train", "--cache wants bytes or a percentage, got '%s'", optarg);
			break;
		case O_POLICY:
			if (strcmp(optarg, "degree") && strcmp(optarg, "clock") && strcmp(optarg, "profile"))
				return cli_usage("bench train", "--cache-policy wants degree, profile or clock, got '%s'", optarg);
			o->cache_policy = !strcmp(optarg, "clock")     ? BURROW_CACHE_CLOCK
					  : !strcmp(optarg, "profile") ? BURROW_CACHE_PROFILE
								       : BURROW_CACHE_STATIC;
			break;
		case O_PREFETCH: NUM(o->prefetch, 0, 64); break;
		case O_THREADS: NUM(o->threads, 1, 4096); break;
		case O_SEED: NUM(o->seed, 0, INT64_MAX); break;
		case O_IOROWS: NUM(r->io_rows, 1, (int64_t)1 << 40); break;
		case O_IOGATHER:
			if (!strcmp(optarg, "auto"))
				r->io_gather = 0;
			else
				NUM(r->io_gather, 1, (int64_t)1 << 30);
			break;
		case O_REPEAT: NUM(r->repeat, 1, 100); break;
		case O_JSON: r->json = true; break;
		case O_DEVICE:
			if (burrow_device_check(optarg) == BURROW_E_INVAL)
				return cli_usage("bench train", "--device wants cpu, cuda or cuda:N, got '%s'", optarg);
			o->device = optarg;
			break;
		case O_TF32: o->tf32 = true; break;
		case O_TASK:
			if ((o->task = burrow_task_parse(optarg)) < 0)
				return cli_usage("bench train", "--task wants auto, node, multilabel or link, got '%s'", optarg);
			break;
		case O_NEG: NUM(o->neg, 0, 1024); break;
		case O_OPS:
			if (strcmp(optarg, "on") && strcmp(optarg, "off"))
				return cli_usage("bench train", "--ops wants on or off, got '%s'", optarg);
			r->ops = !strcmp(optarg, "on");
			break;
		case O_GEMMSEC:
			if (!cli_f64(optarg, &r->gemm_seconds) || !(r->gemm_seconds >= 0 && r->gemm_seconds <= 600))
				return cli_usage("bench train", "--gemm-seconds wants a number in [0, 600], got '%s'", optarg);
			break;
		case O_SAMPLER:
			if ((o->sampler = burrow_sampler_parse(optarg)) < 0)
				return cli_usage("bench train", "--sampler wants neighbor, labor or labor-star, got '%s'",
						 optarg);
			break;
		case O_LABORDEP: NUM(o->labor_batch_dependency, 0, 1 << 20); break;
		case O_SCORER:
			if ((o->scorer = burrow_scorer_parse(optarg)) < 0)
				return cli_usage("bench train", "--scorer wants dot or mlp, got '%s'", optarg);
			break;
		default: return EXIT_USAGE;
		}
	}
#undef NUM
	if (argc - optind != 1)
		return cli_usage("bench train", "expected one dataset directory");
	if (train_cli_layers_fanout("bench train", o, layers_set, fanout, nfanout))
		return EXIT_USAGE;
	r->dir = argv[optind];
	return 0;
}

/* The device's check (before any work), the dataset with its graph read through, the
 * in-memory epoch's options, the head of the report and the runs' arrays. */
static int train_open(train_run *r)
{
	const burrow_train_opts *o = &r->o;
	int st = burrow_device_check(o->device);
	if (st < 0)
		return cli_lib_fail("bench train", st);
	if ((st = burrow_dataset_open(&r->ds, r->dir)) < 0)
		return cli_lib_fail("bench train", st);
	if (cli_homogeneous("bench train", r->dir, r->ds) != EXIT_OK)
		return EXIT_FAIL;
	touch_graph(burrow_dataset_graph(r->ds));
	const burrow_dataset_info *in = burrow_dataset_get_info(r->ds);
	r->om = *o;
	r->om.cache_fraction = 1;
	r->om.cache_policy = BURROW_CACHE_STATIC; /* every row, filled before the epoch */
	char a[32], b[32];
	for (int l = 0; l < o->layers; l++)
		snprintf(r->fan + strlen(r->fan), sizeof r->fan - strlen(r->fan), "%s%d", l ? "," : "", o->fanout[l]);
	if (!r->json) {
		printf("burrow bench train: %s: %s nodes, %lld x %s features (%s)\n", r->dir,
		       cli_grouped(in->num_nodes, a, sizeof a), (long long)in->feat_dim, burrow_dtype_name(in->feat_dtype),
		       cli_human_bytes((double)in->num_nodes * (double)in->feat_dim * (double)burrow_dtype_size(in->feat_dtype),
				       b, sizeof b));
		printf("%s, %d layers, hidden %lld, fanout %s, batch %lld, %lld batches, prefetch %d, cache policy %s\n",
		       burrow_model_name(o->model), o->layers, (long long)o->hidden, r->fan, (long long)o->batch_size,
		       (long long)o->max_batches, o->prefetch,
		       o->cache_policy == BURROW_CACHE_CLOCK ? "clock" : o->cache_policy == BURROW_CACHE_PROFILE ? "profile" : "degree");
		if (o->task == BURROW_TASK_LINK)
			printf("task link: %lld positive edges a batch, --neg %d, scorer %s\n",
			       (long long)o->batch_size, o->neg, burrow_scorer_name(o->scorer));
		printf("\n");
		printf("run  %-12s %8s %8s %9s %9s %10s %6s\n", "", "epoch_s", "sample_s", "io_wait_s", "compute_s",
		       "rows_read", "hit");
	}
	const size_t n = (size_t)r->repeat;
	r->rate = calloc(n, sizeof *r->rate);
	r->tmem = calloc(n, sizeof *r->tmem);
	r->tcache = calloc(n, sizeof *r->tcache);
	r->tio = calloc(n, sizeof *r->tio);
	r->gather = calloc(n, sizeof *r->gather);
	r->opst = calloc(n, sizeof *r->opst);
	r->first_ratio = calloc(n, sizeof *r->first_ratio);
	if (r->io_gather < 0) /* not given: 4096, or the epoch's own for a link dataset */
		r->io_gather = o->task == BURROW_TASK_LINK || (o->task == BURROW_TASK_AUTO && burrow_dataset_has_edge_split(r->ds) &&
							    in->num_classes == 0 && in->num_tasks == 0)
				       ? 0
				       : 4096;
	if (!r->rate || !r->tmem || !r->tcache || !r->tio || !r->gather || !r->opst || !r->first_ratio)
		return cli_fail("bench train", "out of memory");
	return 0;
}

/* The first layer's products as one shape: k its input width, n its output's, m the rows that
 * make up the FLOPs counted over its calls (2 m k n each: SAGE, GCN and MLP layers multiply
 * [m, k] by [k, n], transposed or not). */
static bool first_shape(const train_run *r, const burrow_op_stats *s, int64_t *m, int64_t *k, int64_t *n)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(r->ds);
	*k = in->feat_dim;
	*n = r->o.layers > 1 || in->num_classes < 1 ? r->o.hidden : in->num_classes;
	if (*k < 1 || *n < 1 || s->layer_calls[0] < 1)
		return false;
	*m = (int64_t)(s->layer_flops[0] / (2.0 * (double)*k * (double)*n * (double)s->layer_calls[0]) + 0.5);
	return *m >= 1;
}

/* The measured GEMM rate at the first layer's shape (its forward A W and weight gradient
 * A^T G, both paths), right after the run's epochs so that the ratio is of figures taken
 * side by side; on the CPU only. */
static int train_gemm(train_run *r, const burrow_op_stats *s)
{
	int64_t m, k, n;
	const char *dev = r->o.device;
	r->gemm_rate = 0;
	if (r->gemm_seconds <= 0 || (dev && strcmp(dev, "cpu")) || !first_shape(r, s, &m, &k, &n))
		return 0;
	burrow_gemm *g;
	int st = burrow_gemm_open(&g, r->o.threads);
	for (int c = 0; c < 2 && !st; c++) {
		r->gemm[c] = (gemm_cell){.shape = c ? GEMM_ATG : GEMM_AB, .m = m, .k = k, .n = n};
		st = bench_gemm_cell(g, &r->gemm[c], r->gemm_seconds);
		for (int p = 0; p < 2 && !st; p++)
			if (r->gemm[c].gflops[p] > r->gemm_rate)
				r->gemm_rate = r->gemm[c].gflops[p];
	}
	burrow_gemm_close(g);
	return st < 0 ? cli_lib_fail("bench train", st) : 0;
}

static const char *const CLASSES[BURROW_OP_CLASSES] = {"products", "aggregation", "elementwise", "optimizer"};

/* Run i's in-memory epoch's ops, per batch, as JSON. */
static void ops_json(const train_run *r, int64_t i, double other, double first, const char *load)
{
	const burrow_op_stats *s = &r->opst[i];
	const double B = s->batches > 0 ? (double)s->batches : 1.0;
	printf("{\"bench\": \"train\", \"ops\": true, \"run\": %lld, \"batches\": %lld, \"compute_s\": %.6f, "
	       "\"other_s\": %.6f", (long long)i, (long long)s->batches, s->compute_s / B, other / B);
	for (int c = 0; c < BURROW_OP_CLASSES; c++)
		printf(", \"%s\": {\"s\": %.6f, \"gflop\": %.4f, \"gflops\": %.3f, \"calls\": %.1f}", CLASSES[c],
		       s->seconds[c] / B, s->flops[c] / B / 1e9, s->seconds[c] > 0 ? s->flops[c] / s->seconds[c] / 1e9 : 0.0,
		       (double)s->calls[c] / B);
	printf(", \"layers\": [");
	for (int l = 0; l < r->o.layers; l++)
		printf("%s{\"s\": %.6f, \"gflop\": %.4f, \"gflops\": %.3f, \"calls\": %.1f}", l ? ", " : "",
		       s->layer_seconds[l] / B, s->layer_flops[l] / B / 1e9,
		       s->layer_seconds[l] > 0 ? s->layer_flops[l] / s->layer_seconds[l] / 1e9 : 0.0,
		       (double)s->layer_calls[l] / B);
	printf("], \"first_layer_gflops\": %.3f", first);
	if (r->gemm_rate > 0)
		printf(", \"gemm_gflops\": %.3f, \"first_layer_ratio\": %.4f, \"gemm_m\": %lld, \"gemm_k\": %lld, "
		       "\"gemm_n\": %lld", r->gemm_rate, first / r->gemm_rate, (long long)r->gemm[0].m,
		       (long long)r->gemm[0].k, (long long)r->gemm[0].n);
	printf(", \"load\": \"%s\"}\n", load);
}

/* Run i's in-memory epoch's ops, per batch, as a table. */
static void ops_table(const train_run *r, int64_t i, double other, double first, const char *load)
{
	const burrow_op_stats *s = &r->opst[i];
	const double B = s->batches > 0 ? (double)s->batches : 1.0;
	printf("%3lld  ops of the cache 100%% epoch, per batch (%lld batches; load %s)\n", (long long)i + 1,
	       (long long)s->batches, load);
	printf("     %-16s %9s %9s %9s %7s\n", "class", "s", "GFLOP", "GFLOP/s", "calls");
	for (int c = 0; c < BURROW_OP_CLASSES + r->o.layers; c++) {
		const bool cl = c < BURROW_OP_CLASSES;
		const int l = c - BURROW_OP_CLASSES;
		const double sec = cl ? s->seconds[c] : s->layer_seconds[l], fl = cl ? s->flops[c] : s->layer_flops[l];
		char name[32];
		if (cl)
			snprintf(name, sizeof name, "%s", CLASSES[c]);
		else
			snprintf(name, sizeof name, "  layer %d", l);
		printf("     %-16s %9.4f %9.3f %9.1f %7.1f\n", name, sec / B, fl / B / 1e9, sec > 0 ? fl / sec / 1e9 : 0.0,
		       (double)(cl ? s->calls[c] : s->layer_calls[l]) / B);
	}
	printf("     %-16s %9.4f\n     %-16s %9.4f\n", "other", other / B, "compute", s->compute_s / B);
	if (r->gemm_rate > 0)
		printf("     first layer's products: %.1f GFLOP/s = %.3f of the measured GEMM rate %.1f GFLOP/s "
		       "(m %lld, k %lld, n %lld: %s %s, %s %s)\n",
		       first, first / r->gemm_rate, r->gemm_rate, (long long)r->gemm[0].m, (long long)r->gemm[0].k,
		       (long long)r->gemm[0].n, bench_gemm_shape_name(GEMM_AB), r->gemm[0].kernel[0],
		       bench_gemm_shape_name(GEMM_ATG), r->gemm[1].kernel[0]);
}

/* Run i's ops: the GEMM rate after its epochs, then the report. */
static int train_ops(train_run *r, int64_t i)
{
	const burrow_op_stats *s = &r->opst[i];
	int rc = train_gemm(r, s);
	if (rc)
		return rc;
	double other = s->compute_s, first = s->layer_seconds[0] > 0 ? s->layer_flops[0] / s->layer_seconds[0] / 1e9 : 0;
	for (int c = 0; c < BURROW_OP_CLASSES; c++)
		other -= s->seconds[c];
	r->first_ratio[i] = r->gemm_rate > 0 ? first / r->gemm_rate : 0;
	char load[48];
	bench_load(load, sizeof load);
	if (r->json)
		ops_json(r, i, other, first, load);
	else
		ops_table(r, i, other, first, load);
	return 0;
}

/* Run i: the store's cold rate, then the two epochs, which swap order every run so that
 * neither always runs first; its rows of the report. */
static int train_one(train_run *r, int64_t i)
{
	const burrow_train_opts *o = &r->o;
	burrow_epoch_stats em = {.size = sizeof em}, ec = {.size = sizeof ec};
	int st;
	const char *feat = burrow_dataset_features_path(r->ds);
	burrow_op_stats *ops = NULL;
	if (r->ops) {
		ops = &r->opst[i];
		ops->size = sizeof *ops;
	}
	if ((r->io_gather && (st = io_rate(feat, r->io_rows, r->io_gather, (uint64_t)i, &r->rate[i])) < 0) ||
	    (st = one_epoch(r->ds, i % 2 ? o : &r->om, i % 2 ? &ec : &em, i % 2 ? NULL : ops)) < 0 ||
	    (st = one_epoch(r->ds, i % 2 ? &r->om : o, i % 2 ? &em : &ec, i % 2 ? ops : NULL)) < 0)
		return cli_lib_fail("bench train", st);
	r->gather[i] = r->io_gather ? r->io_gather : (ec.batches && ec.rows_read / ec.batches > 1 ? ec.rows_read / ec.batches : 1);
	if (!r->io_gather && /* auto: the epoch's own rows per batch, at least 4 gathers of them */
	    (st = io_rate(feat, r->io_rows > 4 * r->gather[i] ? r->io_rows : 4 * r->gather[i], r->gather[i], (uint64_t)i,
			  &r->rate[i])) < 0)
		return cli_lib_fail("bench train", st);
	r->tmem[i] = em.epoch_s;
	r->tcache[i] = ec.epoch_s;
	r->tio[i] = (double)ec.rows_read / r->rate[i];
	if (r->json) {
		printf("{\"bench\": \"train\", \"task\": \"%s\", \"run\": %lld, \"io_rows_per_s\": %.0f, \"t_io\": %.6f, \"t_mem\": %.6f, "
		       "\"epoch_s\": %.6f, \"sample_s\": %.6f, \"io_wait_s\": %.6f, \"compute_s\": %.6f, "
		       "\"rows_read\": %lld, \"cache_hit_rate\": %.4f, \"mem_sample_s\": %.6f, \"mem_io_wait_s\": %.6f, "
		       "\"mem_compute_s\": %.6f, \"io_gather\": %lld",
		       burrow_task_name(o->task), (long long)i, r->rate[i], r->tio[i], r->tmem[i], ec.epoch_s, ec.sample_s, ec.io_wait_s, ec.compute_s,
		       (long long)ec.rows_read, ec.cache_hit_rate, em.sample_s, em.io_wait_s, em.compute_s,
		       (long long)r->gather[i]);
		io_json(&ec);
		printf("}\n");
	} else {
		char a[32];
		printf("%3lld  %-12s %8.2f %8.2f %9.2f %9.2f %10lld %5.1f%%\n", (long long)i + 1, "cache 100%", em.epoch_s,
		       em.sample_s, em.io_wait_s, em.compute_s, (long long)em.rows_read, 100 * em.cache_hit_rate);
		char label[32];
		if (o->cache_fraction >= 0)
			snprintf(label, sizeof label, "cache %g%%", 100 * o->cache_fraction);
		else
			snprintf(label, sizeof label, "cache %s", cli_human_bytes((double)o->cache_bytes, a, sizeof a));
		printf("%3lld  %-12s %8.2f %8.2f %9.2f %9.2f %10lld %5.1f%%\n", (long long)i + 1, label, ec.epoch_s,
		       ec.sample_s, ec.io_wait_s, ec.compute_s, (long long)ec.rows_read, 100 * ec.cache_hit_rate);
		io_line(&ec);
		char g[32];
		printf("%3lld  %-12s %8.2f   (%s rows/s cold, uniform, %s rows a gather)\n", (long long)i + 1, "io alone",
		       r->tio[i], cli_grouped((int64_t)r->rate[i], a, sizeof a), cli_grouped(r->gather[i], g, sizeof g));
	}
	const int rc = r->ops ? train_ops(r, i) : 0;
	fflush(stdout);
	return rc;
}

/* The last line: the runs' medians and epoch / max(T_mem, T_io). */
static void train_summary(const train_run *r)
{
	const int n = (int)r->repeat;
	const double mt_io = cli_median(r->tio, n), mt_mem = cli_median(r->tmem, n);
	const double mt_c = cli_median(r->tcache, n), bound = mt_io > mt_mem ? mt_io : mt_mem;
	const double first = r->first_ratio[0] > 0 ? cli_median(r->first_ratio, n) : -1;
	if (r->json)
		printf("{\"bench\": \"train\", \"task\": \"%s\", \"summary\": true, \"runs\": %lld, \"t_io\": %.6f, \"t_mem\": %.6f, "
		       "\"epoch_s\": %.6f, \"ratio\": %.4f, \"first_layer_ratio\": %.4f}\n",
		       burrow_task_name(r->o.task), (long long)r->repeat, mt_io, mt_mem, mt_c, mt_c / bound, first);
	else
		printf("\nT_io %.2f s, T_mem %.2f s, epoch %.2f s: epoch / max(T_mem, T_io) = %.3f (target <= 1.15)%s\n",
		       mt_io, mt_mem, mt_c, mt_c / bound, r->repeat > 1 ? " (medians)" : "");
	if (!r->json && first >= 0)
		printf("first layer's products / the measured GEMM rate = %.3f (target >= 0.6)%s\n", first,
		       r->repeat > 1 ? " (median)" : "");
}

int bench_train(int argc, char **argv)
{
	train_run r = {.io_rows = 200000, .repeat = 1, .io_gather = -1, .ops = true, .gemm_seconds = 1};
	burrow_train_defaults(&r.o);
	r.o.layers = 2;
	r.o.max_batches = 200;
	r.o.cache_fraction = 0.1;
	int rc = train_parse(&r, argc, argv);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	if (!(rc = train_open(&r))) {
		for (int64_t i = 0; i < r.repeat && !rc; i++)
			rc = train_one(&r, i);
		if (!rc)
			train_summary(&r);
	}
	free(r.rate);
	free(r.tmem);
	free(r.tcache);
	free(r.tio);
	free(r.gather);
	free(r.opst);
	free(r.first_ratio);
	burrow_dataset_close(r.ds);
	return rc;
}
