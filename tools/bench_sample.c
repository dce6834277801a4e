/* bench_sample.c: burrow bench sample DIR: sampling throughput and its scaling from 1 to T
 * threads, on the CPU or a GPU (whose batches it can first check against the CPU's). */
#define _GNU_SOURCE
#include "cli.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void help(void)
{
	printf("usage: burrow bench sample DIR [--fanout 15,10,5] [--batch 1024] [--threads T] [--omp]\n"
	       "                              [--single] [--device D] [--verify N] [--seconds S] [--seed S]\n"
	       "                              [--sampler neighbor|labor|labor-star] [--labor-rounds N] [--json]\n\n"
	       "Sample mini-batches from the training split of DIR (every node when it has none) for\n"
	       "S seconds at each thread count 1 .. T, and print batches/s, sampled edges/s, input\n"
	       "nodes per batch and the speedup over one thread (the anchor, measured in the same run).\n"
	       "Beside it, cpu is what a plain compute loop gains from the same threads at that moment\n"
	       "(1.00 at one thread): on a shared machine the sampler's speedup cannot exceed it.\n"
	       "Every thread count samples the same batches: epoch 0 from batch 0, after two warm-up\n"
	       "batches; the graph is read through once first so that it is in the page cache.\n\n"
	       "  --fanout LIST   neighbors per layer, input layer first; -1 = all (15,10,5)\n"
	       "  --batch B       seeds per batch (1024)\n"
	       "  --threads T     largest thread count (the number of CPUs)\n"
	       "  --omp           scale OpenMP threads inside one batch (no prefetch) instead of the\n"
	       "                  default: producer threads, each sampling whole batches on one thread\n"
	       "                  with 2 batches of prefetch per producer, as training samples\n"
	       "                  (--producers: the default, kept for scripts)\n"
	       "  --single        measure at T threads only, not at 1 .. T\n"
	       "  --device D      sample on cpu (the default), cuda (= cuda:0) or cuda:N; on a GPU the\n"
	       "                  thread counts are producer threads, each with its own stream (T: 4)\n"
	       "  --verify N      first compare the first N batches of epoch 0 on D with the CPU\n"
	       "                  sampler's, element for element (exit 1 when they differ)\n"
	       "  --seconds S     measuring time per thread count (3)\n"
	       "  --seed S        sampler seed (0)\n"
	       "  --sampler S     neighbor (the default) or labor (LABOR: rows share their\n"
	       "                  neighbors' variates; fewer input nodes per batch, docs/sampler.md)\n"
	       "                  or labor-star (LABOR-*: rows also prefer the sources other rows take)\n"
	       "  --labor-rounds N  rounds of LABOR-*'s fixed point, 1 .. 64 (%d, what training uses)\n"
	       "  --json          one JSON object per thread count\n",
	       BURROW_LABOR_STAR_ROUNDS);
}

/* "15,10,5" into o->fanouts / num_layers. */
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

/* Read every page of the graph once (into a volatile sum, so the reads stay). */
static void touch_graph(const burrow_csr *g)
{
	volatile uint64_t sum = 0;
	const size_t step = 4096;
	const unsigned char *p = (const unsigned char *)g->indptr;
	for (size_t i = 0; i < (size_t)(g->num_nodes + 1) * sizeof(int64_t); i += step)
		sum += p[i];
	p = g->indices;
	for (size_t i = 0; i < (size_t)g->num_edges * (size_t)g->index_width; i += step)
		sum += p[i];
	(void)sum; /* the volatile is read, so the compiler counts it as used */
}

/* Units of a dependent floating-point chain per second on t threads for `seconds`: the
 * speedup the machine offers t threads right now, whatever else it is running. */
static double cpu_rate(int t, double seconds)
{
	int64_t units = 0;
	const double t0 = cli_now();
#pragma omp parallel num_threads(t) reduction(+ : units)
	{
		volatile double sink;
		double x = 1;
		while (cli_now() - t0 < seconds) {
			for (int i = 0; i < (1 << 18); i++)
				x = x * 1.0000001 + 1e-9;
			units++;
		}
		sink = x;
		(void)sink;
	}
	return (double)units / (cli_now() - t0);
}

typedef struct run_result {
	int64_t batches, edges, inputs;
	double seconds;
} run_result;

/* Sample for `seconds` with o (after two warm-up batches). */
static int measure(const burrow_csr *g, const int64_t *ids, int64_t n, const burrow_sampler_opts *o, double seconds,
		   run_result *r)
{
	burrow_sampler *s;
	int st = burrow_sampler_open(&s, g, ids, n, o);
	if (st < 0)
		return st;
	memset(r, 0, sizeof *r);
	int64_t epoch = 0;
	if ((st = burrow_sampler_start(s, epoch)) < 0)
		goto out_close;
	burrow_batch *b;
	for (int w = 0; w < 2; w++) {
		if ((st = burrow_sampler_next(s, &b)) < 0)
			goto out_close;
		burrow_sampler_release(s, b);
	}
	if ((st = burrow_sampler_start(s, epoch)) < 0)
		goto out_close;
	double t0 = cli_now(), t;
	do {
		st = burrow_sampler_next(s, &b);
		if (st < 0)
			goto out_close;
		if (st == BURROW_DONE) {
			if ((st = burrow_sampler_start(s, ++epoch)) < 0)
				goto out_close;
		} else {
			r->batches++;
			r->inputs += b->num_input;
			for (int l = 0; l < b->num_layers; l++)
				r->edges += b->blocks[l].num_edges;
			burrow_sampler_release(s, b);
		}
		t = cli_now() - t0;
	} while (t < seconds || r->batches < 3);
	r->seconds = t;
	st = 0;
out_close:
	burrow_sampler_close(s);
	return st;
}

/* The first difference between batches a and b into why (empty when they are equal): ids,
 * blocks, and LABOR-*'s edge weights bit for bit. */
static void batch_diff(const burrow_batch *a, const burrow_batch *b, char *why, size_t cap)
{
	*why = 0;
	if (a->num_layers != b->num_layers || a->num_seeds != b->num_seeds || a->num_input != b->num_input ||
	    memcmp(a->input_ids, b->input_ids, (size_t)a->num_input * sizeof *a->input_ids)) {
		snprintf(why, cap, "input nodes differ (%lld vs %lld)", (long long)a->num_input, (long long)b->num_input);
		return;
	}
	for (int l = 0; l < a->num_layers; l++) {
		const burrow_block *x = &a->blocks[l], *y = &b->blocks[l];
		if (x->num_dst != y->num_dst || x->num_src != y->num_src || x->num_edges != y->num_edges ||
		    memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * sizeof *x->indptr) ||
		    memcmp(x->indices, y->indices, (size_t)x->num_edges * sizeof *x->indices)) {
			snprintf(why, cap, "block %d differs (%lld vs %lld edges)", l, (long long)x->num_edges,
				 (long long)y->num_edges);
			return;
		}
		if (!x->edge_weight != !y->edge_weight ||
		    (x->edge_weight && memcmp(x->edge_weight, y->edge_weight, (size_t)x->num_edges * sizeof *x->edge_weight))) {
			snprintf(why, cap, "block %d's edge weights differ", l);
			return;
		}
	}
}

/* Compare the first `count` batches of epoch 0 on o's device with the CPU sampler's (on
 * `threads` OpenMP threads; fewer when the epoch is shorter): *compared = how many were
 * compared, why = the first difference (empty when every one is equal). */
static int verify(const burrow_csr *g, const int64_t *ids, int64_t n, const burrow_sampler_opts *o, int threads,
		  int64_t count, int64_t *compared, char *why, size_t cap)
{
	burrow_sampler_opts oc = *o, od = *o;
	oc.device = NULL;
	oc.threads = threads;
	oc.prefetch = od.prefetch = 0;
	burrow_sampler *sc = NULL, *sd = NULL;
	int st;
	*compared = 0;
	*why = 0;
	if ((st = burrow_sampler_open(&sc, g, ids, n, &oc)) < 0 || (st = burrow_sampler_open(&sd, g, ids, n, &od)) < 0 ||
	    (st = burrow_sampler_start(sc, 0)) < 0 || (st = burrow_sampler_start(sd, 0)) < 0)
		goto out_close;
	for (int64_t i = 0; i < count && !*why; i++) {
		burrow_batch *a, *b;
		if ((st = burrow_sampler_next(sc, &a)) != 0)
			break;
		if ((st = burrow_sampler_next(sd, &b)) != 0) {
			burrow_sampler_release(sc, a);
			break;
		}
		batch_diff(a, b, why, cap);
		++*compared;
		if (*why)
			snprintf(why + strlen(why), cap - strlen(why), " in batch %lld", (long long)i);
		burrow_sampler_release(sc, a);
		burrow_sampler_release(sd, b);
	}
	st = st == BURROW_DONE ? 0 : st;
out_close:
	burrow_sampler_close(sd);
	burrow_sampler_close(sc);
	return st;
}

enum { O_FANOUT = 256, O_BATCH, O_THREADS, O_PRODUCERS, O_OMP, O_SINGLE, O_DEVICE, O_VERIFY, O_SECONDS, O_SEED, O_JSON, O_HELP, O_SAMPLER,
       O_LABOR_ROUNDS };

/* One bench sample: the options, the dataset and the nodes it samples from. */
typedef struct sample_run {
	burrow_sampler_opts o;
	int64_t maxt, nverify;
	double seconds;
	bool json, producers, single, gpu;
	int rounds;           /* --labor-rounds (0: not given) */
	const char *dir;
	burrow_dataset *ds;
	const burrow_csr *g;
	const int64_t *train; /* the train split, else all (every node) */
	int64_t n;
	int64_t *all;
	char fan[96];         /* the fanouts, "15,10,5" */
} sample_run;

/* The command line into r: 0 to go on, -1 after --help, else the exit code. */
static int sample_parse(sample_run *r, int argc, char **argv)
{
	static const struct option lo[] = {
		{"fanout", required_argument, 0, O_FANOUT},   {"batch", required_argument, 0, O_BATCH},
		{"threads", required_argument, 0, O_THREADS}, {"producers", no_argument, 0, O_PRODUCERS},
		{"omp", no_argument, 0, O_OMP},
		{"single", no_argument, 0, O_SINGLE},         {"device", required_argument, 0, O_DEVICE},
		{"verify", required_argument, 0, O_VERIFY},   {"seconds", required_argument, 0, O_SECONDS},
		{"seed", required_argument, 0, O_SEED},       {"sampler", required_argument, 0, O_SAMPLER},
		{"json", no_argument, 0, O_JSON},             {"help", no_argument, 0, O_HELP},
		{"labor-rounds", required_argument, 0, O_LABOR_ROUNDS},
		{0, 0, 0, 0},
	};
	burrow_sampler_opts *o = &r->o;
	int64_t v;
	int c;
	while ((c = cli_getopt("bench sample", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return -1;
		case O_FANOUT:
			if (!parse_fanouts(optarg, o))
				return cli_usage("bench sample", "--fanout wants 1 to %d comma-separated integers >= -1, got '%s'",
						 BURROW_MAX_LAYERS, optarg);
			break;
		case O_BATCH:
			if (!cli_i64(optarg, &o->batch_size) || o->batch_size < 1 || o->batch_size > INT32_MAX)
				return cli_usage("bench sample", "--batch wants an integer >= 1, got '%s'", optarg);
			break;
		case O_THREADS:
			if (!cli_i64(optarg, &r->maxt) || r->maxt < 1 || r->maxt > 256)
				return cli_usage("bench sample", "--threads wants an integer in [1, 256], got '%s'", optarg);
			break;
		case O_PRODUCERS: r->producers = true; break;
		case O_OMP: r->producers = false; break;
		case O_SINGLE: r->single = true; break;
		case O_DEVICE:
			o->device = optarg; /* its availability is checked before any work */
			if (burrow_device_check(optarg) == BURROW_E_INVAL)
				return cli_usage("bench sample", "--device wants cpu, cuda or cuda:N, got '%s'", optarg);
			break;
		case O_VERIFY:
			if (!cli_i64(optarg, &r->nverify) || r->nverify < 0)
				return cli_usage("bench sample", "--verify wants an integer >= 0, got '%s'", optarg);
			break;
		case O_SECONDS:
			if (!cli_f64(optarg, &r->seconds) || r->seconds <= 0 || r->seconds > 3600)
				return cli_usage("bench sample", "--seconds wants a number in (0, 3600], got '%s'", optarg);
			break;
		case O_SEED:
			if (!cli_i64(optarg, &v) || v < 0)
				return cli_usage("bench sample", "--seed wants an integer >= 0, got '%s'", optarg);
			o->seed = (uint64_t)v;
			break;
		case O_JSON: r->json = true; break;
		case O_SAMPLER:
			if (strcmp(optarg, "neighbor") && strcmp(optarg, "labor") && strcmp(optarg, "labor-star"))
				return cli_usage("bench sample", "--sampler wants neighbor, labor or labor-star, got '%s'", optarg);
			o->labor = !strcmp(optarg, "labor");
			o->labor_star = strcmp(optarg, "labor-star") ? 0 : BURROW_LABOR_STAR_ROUNDS;
			break;
		case O_LABOR_ROUNDS:
			if (!cli_i64(optarg, &v) || v < 1 || v > 64)
				return cli_usage("bench sample", "--labor-rounds wants an integer in [1, 64], got '%s'", optarg);
			r->rounds = (int)v;
			break;
		}
	}
	if (argc - optind != 1)
		return cli_usage("bench sample", "expected one dataset directory");
	if (r->rounds && !o->labor_star)
		return cli_usage("bench sample", "--labor-rounds goes with --sampler labor-star");
	o->labor_star = r->rounds ? r->rounds : o->labor_star;
	r->dir = argv[optind];
	return 0;
}

/* The device's check, the thread counts, the dataset and its training nodes (every node
 * when it has no split), the graph read through once, and the head of the report. */
static int sample_open(sample_run *r)
{
	burrow_sampler_opts *o = &r->o;
	int st;
	r->gpu = o->device && strcmp(o->device, "cpu");
	if (r->gpu && (st = burrow_device_check(o->device)) < 0)
		return cli_lib_fail("bench sample", st);
	if (!r->maxt)
		r->maxt = r->gpu ? 4 : sysconf(_SC_NPROCESSORS_ONLN);
	if (r->gpu)
		r->producers = true; /* a GPU's "threads" are producers, each with its stream */
	if ((st = burrow_dataset_open(&r->ds, r->dir)) < 0)
		return cli_lib_fail("bench sample", st);
	if (cli_homogeneous("bench sample", r->dir, r->ds) != EXIT_OK)
		return EXIT_FAIL;
	r->g = burrow_dataset_graph(r->ds);
	r->train = burrow_dataset_split(r->ds, BURROW_SPLIT_TRAIN, &r->n);
	if (!r->train) {
		r->n = r->g->num_nodes;
		r->all = malloc((size_t)r->n * sizeof *r->all);
		if (!r->all)
			return cli_fail("bench sample", "out of memory");
		for (int64_t i = 0; i < r->n; i++)
			r->all[i] = i;
		r->train = r->all;
	}
	double t0 = cli_now();
	touch_graph(r->g);
	double touch = cli_now() - t0;
	char a[32], b2[32], c2[32];
	for (int l = 0; l < o->num_layers; l++)
		snprintf(r->fan + strlen(r->fan), sizeof r->fan - strlen(r->fan), "%s%d", l ? "," : "", o->fanouts[l]);
	if (!r->json) {
		printf("burrow bench sample: %s: %s nodes, %s edges, %s training nodes\n", r->dir,
		       cli_grouped(r->g->num_nodes, a, sizeof a), cli_grouped(r->g->num_edges, b2, sizeof b2),
		       cli_grouped(r->n, c2, sizeof c2));
		printf("fanout %s, batch %lld, %s, %g s per thread count (graph read through in %.1f s)\n\n", r->fan,
		       (long long)o->batch_size,
		       r->gpu ? "GPU producer threads (a stream each)"
			      : r->producers ? "producer threads (1 OpenMP thread each)" : "OpenMP threads in one batch",
		       r->seconds, touch);
	}
	return 0;
}

/* --verify N: the first N batches on the device against the CPU's, reported. EXIT_FAIL when
 * they differ (the measures still run) or the check fails (they do not: *stop). */
static int sample_verify(sample_run *r, bool *stop)
{
	const burrow_sampler_opts *o = &r->o;
	int64_t compared;
	char why[160];
	int st = verify(r->g, r->train, r->n, o, (int)(r->gpu ? sysconf(_SC_NPROCESSORS_ONLN) : r->maxt), r->nverify,
			&compared, why, sizeof why);
	if (st < 0) {
		*stop = true;
		return cli_lib_fail("bench sample", st);
	}
	if (r->json)
		printf("{\"bench\": \"sample\", \"verify\": %lld, \"device\": \"%s\", \"compared\": %lld, "
		       "\"equal\": %s, \"difference\": \"%s\"}\n",
		       (long long)r->nverify, o->device ? o->device : "cpu", (long long)compared, *why ? "false" : "true", why);
	else if (*why)
		printf("verify: on %s, %s (the CPU's first)\n\n", o->device ? o->device : "cpu", why);
	else
		printf("verify: the first %lld batches of epoch 0 on %s equal the CPU's, element for element\n\n",
		       (long long)compared, o->device ? o->device : "cpu");
	fflush(stdout);
	return *why ? EXIT_FAIL : EXIT_OK;
}

/* The measures: a row per thread count (1 .. T, or T alone with --single), its speedup over
 * the first row's, and a plain compute loop's beside it. EXIT_FAIL when one fails. */
static int sample_measure(const sample_run *r)
{
	const burrow_sampler_opts *o = &r->o;
	double anchor = 0, cpu_anchor = 0;
	char a[32];
	if (!r->json)
		printf("threads  batches/s     edges/s  input nodes/batch  edges/batch  speedup    cpu\n");
	for (int t = r->single ? (int)r->maxt : 1; t <= r->maxt; t++) {
		burrow_sampler_opts ot = *o;
		if (r->producers) {
			ot.threads = 1;
			ot.producers = t;
			ot.prefetch = 2 * t;
		} else {
			ot.threads = t;
			ot.prefetch = 0;
		}
		const double cpu = cpu_rate(t, 0.5);
		if (!cpu_anchor)
			cpu_anchor = cpu_rate(1, 0.5);
		run_result m;
		int st = measure(r->g, r->train, r->n, &ot, r->seconds, &m);
		if (st < 0)
			return cli_lib_fail("bench sample", st);
		double bps = (double)m.batches / m.seconds, eps = (double)m.edges / m.seconds;
		double inb = (double)m.inputs / (double)m.batches, epb = (double)m.edges / (double)m.batches;
		if (!anchor)
			anchor = eps; /* --single: its own anchor */
		if (r->json)
			printf("{\"bench\": \"sample\", \"dir\": \"%s\", \"device\": \"%s\", \"mode\": \"%s\", \"threads\": %d, "
			       "\"fanout\": \"%s\", "
			       "\"batch\": %lld, \"batches\": %lld, \"seconds\": %.3f, \"batches_per_s\": %.3f, "
			       "\"edges_per_s\": %.0f, \"input_nodes_per_batch\": %.1f, \"edges_per_batch\": %.1f, "
			       "\"speedup\": %.3f, \"cpu_speedup\": %.3f}\n",
			       r->dir, o->device ? o->device : "cpu", r->producers ? "producers" : "omp", t, r->fan,
			       (long long)o->batch_size, (long long)m.batches, m.seconds, bps, eps, inb, epb, eps / anchor,
			       cpu / cpu_anchor);
		else
			printf("%7d  %9.2f  %10s  %17.0f  %11.0f  %6.2fx  %4.2fx\n", t, bps,
			       cli_grouped((int64_t)eps, a, sizeof a), inb, epb, eps / anchor, cpu / cpu_anchor);
		fflush(stdout);
	}
	return EXIT_OK;
}

int bench_sample(int argc, char **argv)
{
	sample_run r = {.seconds = 3, .producers = true};
	burrow_sampler_defaults(&r.o);
	int rc = sample_parse(&r, argc, argv);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	bool stop = false;
	if (!(rc = sample_open(&r))) {
		if (r.nverify > 0)
			rc = sample_verify(&r, &stop);
		if (!stop) {
			int mrc = sample_measure(&r);
			rc = mrc ? mrc : rc;
		}
	}
	free(r.all);
	burrow_dataset_close(r.ds);
	return rc;
}
