/* test_pipeline.c: mini-batch training through the sampler + feature store pipeline: it
 * learns what the graph says, its results do not depend on the prefetch depth, the cache or
 * the engine (only its timings do), the store's counters follow from the batches, GCN uses
 * the whole graph's degrees, resume is bit for bit, errors from every stage surface,
 * nothing maps or loads the whole features file, and the sampler's device (the GPU
 * sampler) changes no batch. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../sampler/sampler_internal.h"
#include "../graph/store_sizing.h"
#include "../train/driver/driver.h"
#include "util.h"
#include "train_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(pipeline, .init = setup, .fini = teardown, .timeout = 120);

/* A CSBM whose features alone say little (two classes' means about 0.85 noise deviations
 * apart) while 90% of edges join nodes of one class. */
static burrow_train_opts mb_opts(int model)
{
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.model = model;
	o.layers = 2;
	o.hidden = 32;
	o.dropout = 0.2;
	o.lr = 0.01;
	o.threads = 1;
	o.batch_size = 128;
	o.fanout[0] = 10;
	o.fanout[1] = 5;
	return o;
}

typedef struct run {
	double loss[8];
	int64_t rows_read[8];
	int64_t requested[8], reads[8], pages[8], bytes[8]; /* what the epoch asked of the store */
	double hit[8];
	int64_t batches[8];
	uint64_t checksum;
	double test_acc;
} run;

static run train(burrow_dataset *ds, const burrow_train_opts *o, int epochs, bool evaluate)
{
	run r = {0};
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	for (int e = 0; e < epochs; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(es.epoch, e + 1);
		r.loss[e] = es.loss;
		r.rows_read[e] = es.rows_read;
		r.requested[e] = es.rows_requested;
		r.reads[e] = es.reads;
		r.pages[e] = es.pages_read;
		r.bytes[e] = es.bytes_read;
		r.hit[e] = es.cache_hit_rate;
		r.batches[e] = es.batches;
		cr_assert(isfinite(es.loss) && es.train_acc >= 0 && es.train_acc <= 1);
		cr_assert(es.sample_s >= 0 && es.io_wait_s >= 0 && es.compute_s > 0);
		cr_assert(es.sample_s + es.io_wait_s + es.compute_s <= es.epoch_s + 1e-6, "the parts exceed the epoch");
		if (evaluate) {
			burrow_eval_stats ev = {.size = sizeof ev};
			cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		}
	}
	r.checksum = burrow_trainer_weights_checksum(t);
	r.test_acc = burrow_trainer_best(t).test_acc;
	burrow_trainer_close(t);
	return r;
}

static void same_run(const run *a, const run *b, int epochs, const char *what)
{
	for (int e = 0; e < epochs; e++)
		cr_assert(a->loss[e] == b->loss[e], "%s: epoch %d loss %.17g vs %.17g", what, e + 1, a->loss[e], b->loss[e]);
	cr_assert_eq(a->checksum, b->checksum, "%s: the weights differ", what);
}

Test(pipeline, minibatch_models_learn_what_the_graph_says)
{
	char *d = tu_weak_csbm(dir, 2000, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	double acc[4];
	for (int model = BURROW_MODEL_SAGE; model <= BURROW_MODEL_MLP; model++) {
		const burrow_train_opts o = mb_opts(model);
		acc[model] = train(ds, &o, 8, true).test_acc;
	}
	const double sage = acc[BURROW_MODEL_SAGE], gcn = acc[BURROW_MODEL_GCN], mlp = acc[BURROW_MODEL_MLP];
	cr_log_info("mini-batch test accuracy: mlp %.3f, sage %.3f, gcn %.3f", mlp, sage, gcn);
	cr_assert(mlp < 0.6, "features are meant to be weak: mlp reached %.3f", mlp);
	cr_assert(sage >= 0.8 && sage >= mlp + 0.2, "sage %.3f (mlp %.3f)", sage, mlp);
	cr_assert(gcn >= 0.8 && gcn >= mlp + 0.2, "gcn %.3f (mlp %.3f)", gcn, mlp);
	burrow_dataset_close(ds);
	free(d);
}

/* The depth, the cache (its size, its policy) and the engine change timings only: with one
 * thread every loss and weight is the same bit for bit. */
Test(pipeline, depth_cache_and_engine_change_no_bit)
{
	char *d = tu_weak_csbm(dir, 1500, 24);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	for (int model = BURROW_MODEL_SAGE; model <= BURROW_MODEL_MLP; model++) {
		burrow_train_opts o = mb_opts(model);
		o.prefetch = 0;
		o.cache_fraction = 0; /* every row from the file */
		const run ref = train(ds, &o, 3, false);
		struct {
			int prefetch;
			double frac;
			int policy, engine;
			const char *what;
		} v[] = {
			{4, 0, BURROW_CACHE_STATIC, BURROW_STORE_URING, "prefetch 4, no cache"},
			{1, 1, BURROW_CACHE_STATIC, BURROW_STORE_URING, "prefetch 1, cache 100%"},
			{0, 1, BURROW_CACHE_STATIC, BURROW_STORE_URING, "prefetch 0, cache 100%"},
			{2, 0.3, BURROW_CACHE_CLOCK, BURROW_STORE_PREAD, "prefetch 2, clock 30%, pread"},
			{3, 0.5, BURROW_CACHE_STATIC, BURROW_STORE_MMAP, "prefetch 3, degree 50%, mmap"},
		};
		for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
			o.prefetch = v[i].prefetch;
			o.cache_fraction = v[i].frac;
			o.cache_policy = v[i].policy;
			o.store_engine = v[i].engine;
			const run r = train(ds, &o, 3, false);
			char what[128];
			snprintf(what, sizeof what, "model %d, %s", model, v[i].what);
			same_run(&ref, &r, 3, what);
		}
	}
	burrow_dataset_close(ds);
	free(d);
}

/* Rows read and hits follow from the batches: without a cache every input row of every
 * batch is read (input ids are distinct within a batch), with a static cache of every row
 * none is, and --max-batches cuts the epoch. */
Test(pipeline, store_counters_follow_from_the_batches)
{
	char *d = tu_weak_csbm(dir, 1500, 8);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	burrow_train_opts o = mb_opts(BURROW_MODEL_SAGE);
	o.max_batches = 4;
	o.prefetch = 3;
	o.cache_fraction = 0;
	const run none = train(ds, &o, 2, false);
	/* the reference: the same batches from a sampler of our own */
	int64_t ntr;
	const int64_t *tr = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &ntr);
	burrow_sampler_opts so;
	burrow_sampler_defaults(&so);
	so.num_layers = 2;
	so.fanouts[0] = 10;
	so.fanouts[1] = 5;
	so.batch_size = o.batch_size;
	so.prefetch = 0;
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, burrow_dataset_graph(ds), tr, ntr, &so), 0, "%s", burrow_last_error());
	cr_assert_gt(burrow_sampler_num_batches(s), 4, "the test wants more batches than --max-batches");
	for (int e = 0; e < 2; e++) {
		int64_t inputs = 0;
		cr_assert_eq(burrow_sampler_start(s, e), 0);
		for (int k = 0; k < 4; k++) {
			burrow_batch *b;
			cr_assert_eq(burrow_sampler_next(s, &b), 0, "%s", burrow_last_error());
			inputs += b->num_input;
			burrow_sampler_release(s, b);
		}
		cr_assert_eq(none.batches[e], 4);
		cr_assert_eq(none.rows_read[e], inputs, "epoch %d: %lld rows read, the batches have %lld input rows", e,
			     (long long)none.rows_read[e], (long long)inputs);
		cr_assert_eq(none.requested[e], inputs, "epoch %d: %lld rows requested, the batches have %lld input rows", e,
			     (long long)none.requested[e], (long long)inputs);
		cr_assert(none.reads[e] > 0 && none.reads[e] <= inputs && none.pages[e] > 0);
		cr_assert(none.bytes[e] >= none.pages[e] * 512 && none.bytes[e] <= none.reads[e] * (64 << 10));
		cr_assert_eq(none.hit[e], 0.0);
	}
	burrow_sampler_close(s);

	o.cache_fraction = 1;
	const run full = train(ds, &o, 2, false);
	for (int e = 0; e < 2; e++) {
		cr_assert_eq(full.rows_read[e], 0, "a cache of every row read %lld rows", (long long)full.rows_read[e]);
		cr_assert(full.reads[e] == 0 && full.pages[e] == 0 && full.bytes[e] == 0);
		cr_assert_eq(full.requested[e], none.requested[e]);
		cr_assert_eq(full.hit[e], 1.0);
	}
	same_run(&none, &full, 2, "cache 0 vs 100%");

	o.cache_fraction = 0.25;
	const run part = train(ds, &o, 2, false);
	for (int e = 0; e < 2; e++) {
		cr_assert(part.rows_read[e] > 0 && part.rows_read[e] < none.rows_read[e]);
		cr_assert(part.hit[e] > 0 && part.hit[e] < 1);
	}
	o.max_batches = 1000; /* more than there are: the whole epoch */
	const run all = train(ds, &o, 1, false);
	cr_assert_eq(all.batches[0], (ntr + o.batch_size - 1) / o.batch_size);
	burrow_dataset_close(ds);
	free(d);
}

/* A float16 dataset's cache holds rows as stored: training gives the same bits without a
 * cache, with clock or degree caches of part of the rows and with every row cached, and a byte
 * budget holds about twice the rows it holds of the same dataset in float32. */
Test(pipeline, float16_rows_cached_as_stored_change_no_bit)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = 1500;
	g.num_classes = 4;
	g.feat_dim = 64;
	g.avg_degree = 10;
	char *d32 = tu_path(dir, "csbm32"), *d16 = tu_path(dir, "csbm16");
	cr_assert_eq(burrow_gen(&g, d32), 0, "%s", burrow_last_error());
	g.feat_dtype = BURROW_DTYPE_F16;
	cr_assert_eq(burrow_gen(&g, d16), 0, "%s", burrow_last_error());
	burrow_dataset *ds, *ds32;
	cr_assert_eq(burrow_dataset_open(&ds, d16), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_open(&ds32, d32), 0, "%s", burrow_last_error());
	burrow_train_opts o = mb_opts(BURROW_MODEL_SAGE);
	o.max_batches = 5;
	o.cache_fraction = 0;
	const run ref = train(ds, &o, 2, false);
	const struct {
		double frac;
		int policy;
	} v[] = {{0.3, BURROW_CACHE_CLOCK}, {0.3, BURROW_CACHE_STATIC}, {1, BURROW_CACHE_STATIC}};
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		o.cache_fraction = v[i].frac;
		o.cache_policy = v[i].policy;
		const run r = train(ds, &o, 2, false);
		same_run(&ref, &r, 2, v[i].policy == BURROW_CACHE_CLOCK ? "clock 30%" : "degree");
		cr_assert(r.hit[1] > 0);
		if (v[i].frac == 1)
			cr_assert_eq(r.rows_read[0] + r.rows_read[1], 0, "every row cached, yet rows were read");
	}
	/* the same bytes hold about twice the rows of float16 */
	o.cache_fraction = -1;
	o.cache_bytes = 64 << 10;
	uint64_t cap[2];
	for (int k = 0; k < 2; k++) {
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, k ? ds32 : ds, &o), 0, "%s", burrow_last_error());
		burrow_store_stats st = {.size = sizeof st};
		burrow_store_get_stats(t->store, &st);
		cap[k] = st.cache_capacity;
		burrow_trainer_close(t);
	}
	cr_assert(cap[0] * 100 >= cap[1] * 180, "64 KiB hold %llu float16 rows, %llu float32 rows",
		  (unsigned long long)cap[0], (unsigned long long)cap[1]);
	burrow_dataset_close(ds);
	burrow_dataset_close(ds32);
	free(d16);
	free(d32);
}

/* The profile policy caches first the rows among the input nodes of BW_PROFILE_BATCHES batches
 * sampled with a seed of their own: with room for just those rows (a reference sampler's), every
 * one of them is a hit, which by degree it is not; training's bits do not change. */
Test(pipeline, profile_cache_holds_the_pre_sampled_rows)
{
	char *d = tu_weak_csbm(dir, 6000, 8);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const int64_t N = burrow_dataset_get_info(ds)->num_nodes;
	burrow_train_opts o = mb_opts(BURROW_MODEL_SAGE);
	o.batch_size = 8;
	o.fanout[0] = o.fanout[1] = 2;
	o.max_batches = 20;
	o.cache_fraction = 0;
	const run none = train(ds, &o, 1, false);
	int64_t ntr;
	const int64_t *tr = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &ntr);
	burrow_sampler_opts so;
	burrow_sampler_defaults(&so);
	so.num_layers = 2;
	so.fanouts[0] = so.fanouts[1] = 2;
	so.batch_size = 8;
	so.seed = o.seed ^ BW_PROFILE_SEED;
	so.prefetch = 0;
	burrow_sampler *s;
	cr_assert_eq(burrow_sampler_open(&s, burrow_dataset_graph(ds), tr, ntr, &so), 0, "%s", burrow_last_error());
	cr_assert_gt(burrow_sampler_num_batches(s), BW_PROFILE_BATCHES);
	char *seen = calloc((size_t)N, 1);
	int64_t *rows = malloc((size_t)N * sizeof *rows), k = 0;
	cr_assert_eq(burrow_sampler_start(s, 0), 0);
	for (int b = 0; b < BW_PROFILE_BATCHES; b++) {
		burrow_batch *bt;
		cr_assert_eq(burrow_sampler_next(s, &bt), 0, "%s", burrow_last_error());
		for (int64_t j = 0; j < bt->num_input; j++)
			if (!seen[bt->input_ids[j]]++)
				rows[k++] = bt->input_ids[j];
		burrow_sampler_release(s, bt);
	}
	burrow_sampler_close(s);
	cr_assert(k > 0 && k < N / 2, "%lld profiled rows of %lld", (long long)k, (long long)N);
	o.cache_fraction = -1;
	o.cache_bytes = (int64_t)bw_cache_bytes_for((size_t)k, 8 * sizeof(float));
	for (int policy = BURROW_CACHE_STATIC; policy <= BURROW_CACHE_PROFILE; policy += 2) {
		o.cache_policy = policy;
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		burrow_store_stats st = {.size = sizeof st};
		burrow_store_get_stats(t->store, &st);
		cr_assert(st.cache_rows >= (uint64_t)k, "%llu rows cached for %lld",
			  (unsigned long long)st.cache_rows, (long long)k);
		float *out = malloc((size_t)k * 8 * sizeof *out);
		cr_assert_eq(burrow_store_gather(t->store, rows, (size_t)k, out), 0, "%s", burrow_last_error());
		burrow_store_get_stats(t->store, &st);
		if (policy == BURROW_CACHE_PROFILE)
			cr_assert_eq(st.cache_hits, (uint64_t)k, "%llu of the %lld profiled rows are cached",
				     (unsigned long long)st.cache_hits, (long long)k);
		else
			cr_assert_lt(st.cache_hits, (uint64_t)k, "the degree cache holds every profiled row: a vacuous test");
		free(out);
		burrow_trainer_close(t);
		const run r = train(ds, &o, 1, false);
		same_run(&none, &r, 1, policy == BURROW_CACHE_PROFILE ? "profile cache" : "degree cache");
	}
	free(rows);
	free(seen);
	burrow_dataset_close(ds);
	free(d);
}

/* With every neighbor sampled (fanout -1), a batch's output rows are what full-neighbor
 * inference computes for its seeds: so the blocks, the gathered rows and GCN's norms (from
 * the whole graph's degrees, not the block's) are wired right; for SAGE's sum too. */
Test(pipeline, full_fanout_batches_equal_full_neighbor_inference)
{
	char *d = tu_weak_csbm(dir, 600, 12);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const int64_t n = burrow_dataset_get_info(ds)->num_nodes, C = burrow_dataset_get_info(ds)->num_classes;
	const int64_t D = burrow_dataset_get_info(ds)->feat_dim;
	for (int k = 0; k < 3; k++) {
		const int model = k == 1 ? BURROW_MODEL_GCN : BURROW_MODEL_SAGE;
		burrow_train_opts o = mb_opts(model);
		o.aggr = k == 2 ? BURROW_AGGR_SUM : BURROW_AGGR_MEAN;
		o.fanout[0] = o.fanout[1] = -1;
		o.cache_fraction = 0.5;
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		tu_grab g = {.z = malloc((size_t)(n * C) * sizeof(float)), .cols = C};
		int64_t spilled;
		cr_assert_eq(bw_trainer_infer(t, tu_grab_sink, &g, &spilled), 0, "%s", burrow_last_error());
		/* one batch of the trainer's own sampler through a loader, its rows from the trainer's store */
		cr_assert_eq(burrow_sampler_start(t->sampler, 7), 0);
		const bw_loader_cfg lc = {.dev = t->be.dev, .num_layers = o.layers, .dim = D, .labels = t->labels,
					  .norm = t->gcn_norm, .blocks = true, .gcn = model == BURROW_MODEL_GCN};
		bw_loader *ld;
		cr_assert_eq(bw_loader_open(&ld, &lc), 0, "%s", burrow_last_error());
		bw_producer p;
		bw_producer_epoch(&p, t->sampler);
		bw_rows rows;
		bw_rows_from_store(&rows, t->store);
		bw_loaded lb;
		cr_assert_eq(bw_loader_start(ld, &p, &rows, 1), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_loader_next(ld, &lb), 0, "%s", burrow_last_error());
		const burrow_batch *sb = lb.sb;
		const bw_tensor *logits;
		cr_assert_eq(bw_model_forward(&t->be, t->model, &lb.b, false, 0, &logits), 0, "%s", burrow_last_error());
		cr_assert_eq(logits->rows, sb->num_seeds);
		for (int64_t i = 0; i < sb->num_seeds; i++) {
			cr_assert_eq(lb.b.labels[i], t->labels[sb->seeds[i]]);
			for (int64_t c = 0; c < C; c++) {
				const double got = logits->data[i * C + c], ref = g.z[sb->seeds[i] * C + c];
				cr_assert(fabs(got - ref) <= 1e-4 * (1 + fabs(ref)), "model %d, seed %lld class %lld: %g vs %g",
					  model, (long long)sb->seeds[i], (long long)c, got, ref);
			}
		}
		cr_assert_eq(bw_loader_done(ld), 0);
		bw_loader_close(ld);
		free(g.z);
		burrow_trainer_close(t);
	}
	burrow_dataset_close(ds);
	free(d);
}


/* 4 epochs straight and 2 + resume + 2 give the same losses and weights bit for bit; the
 * resumed half names another --seed on its command line, which the checkpoint's overrides
 * (the sampler follows the checkpoint's seed too). */
Test(pipeline, resume_is_bit_for_bit_in_minibatch_mode)
{
	char *d = tu_weak_csbm(dir, 1200, 8);
	const char *common = "--model sage --layers 2 --hidden 16 --fanout 5,5 --batch 100 --max-batches 5 --lr 0.01 "
			     "--threads 1 --quiet --cache 30%";
	char *err = NULL;
	int rc = tu_sh(NULL, &err, "%s train '%s' %s --seed 3 --epochs 4 --prefetch 3 --log '%s/a.jsonl'", tu_burrow(), d,
		       common, dir);
	cr_assert_eq(rc, 0, "straight run failed: %s", err);
	free(err);
	rc = tu_sh(NULL, &err, "%s train '%s' %s --seed 3 --epochs 2 --checkpoint '%s/ck' --log '%s/b.jsonl'", tu_burrow(),
		   d, common, dir, dir);
	cr_assert_eq(rc, 0, "first half failed: %s", err);
	free(err);
	rc = tu_sh(NULL, &err, "%s train '%s' %s --seed 0 --prefetch 0 --epochs 4 --checkpoint '%s/ck' --resume --log '%s/b.jsonl'",
		   tu_burrow(), d, common, dir, dir);
	cr_assert_eq(rc, 0, "resume failed: %s", err);
	free(err);
	char la[8][40], lb[8][40];
	char *pa = tu_path(dir, "a.jsonl"), *pb = tu_path(dir, "b.jsonl");
	cr_assert_eq(tu_log_losses(pa, la, 8), 4);
	cr_assert_eq(tu_log_losses(pb, lb, 8), 4);
	for (int e = 0; e < 4; e++)
		cr_assert_str_eq(la[e], lb[e], "epoch %d: straight %s, resumed %s", e + 1, la[e], lb[e]);
	char *ta = tu_read(pa, NULL), *tb = tu_read(pb, NULL);
	const char *ca = strstr(ta, "weights_checksum"), *cb = strrchr(tb, '{');
	cr_assert(ca && cb && strstr(cb, "weights_checksum"));
	cr_assert_eq(strncmp(ca, strstr(cb, "weights_checksum"), 38), 0, "final weights differ");
	/* the log's per-epoch fields are filled */
	cr_assert(strstr(ta, "\"batches\": 5,"), "%s", ta);
	cr_assert(strstr(ta, "\"rows_read\": ") && strstr(ta, "\"cache_hit_rate\": 0."), "%s", ta);
	free(ta);
	free(tb);
	free(pa);
	free(pb);
	free(d);
}

/* A NaN in a training node's features stops training at the batch that reads it, with a
 * message naming epoch 1 and that batch, whatever the depth; a gather that fails stops it
 * with the store's message. */
Test(pipeline, errors_of_every_stage_surface)
{
	char *d = tu_weak_csbm(dir, 800, 8);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	int64_t ntr;
	const int64_t node = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &ntr)[0];
	const long long off = burrow_dataset_features_offset(ds) + node * burrow_dataset_get_info(ds)->feat_dim * 4;
	char *feat = bw_strdup(burrow_dataset_features_path(ds));
	burrow_dataset_close(ds);
	tu_sh(NULL, NULL, "printf '\\000\\000\\300\\177' | dd of='%s' bs=1 seek=%lld conv=notrunc 2>/dev/null", feat, off);
	for (int depth = 0; depth <= 3; depth += 3) {
		char *err = NULL;
		int rc = tu_sh(NULL, &err, "%s train '%s' --model mlp --layers 2 --hidden 8 --epochs 2 --batch 64 --prefetch %d "
				      "--quiet --cache 0",
			       tu_burrow(), d, depth);
		cr_assert_eq(rc, 1, "%s", err);
		cr_assert(strstr(err, "NaN at epoch 1, batch "), "%s", err);
		free(err);
	}
	bw_free(feat);
	free(d);
	/* the features file cut short after open: reads past its end fail */
	d = tu_weak_csbm(dir, 801, 8);
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	feat = bw_strdup(burrow_dataset_features_path(ds));
	burrow_train_opts o = mb_opts(BURROW_MODEL_SAGE);
	o.cache_fraction = 0;
	o.prefetch = 2;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	tu_truncate(feat, burrow_dataset_features_offset(ds) + 100 * 8 * 4);
	burrow_epoch_stats es = {.size = sizeof es};
	const int st = burrow_trainer_train_epoch(t, &es);
	cr_assert_eq(st, BURROW_E_IO, "status %d: %s", st, burrow_last_error());
	cr_assert(strstr(burrow_last_error(), "features.npy"), "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_epoch(t), 0);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	bw_free(feat);
	free(d);
}

/* The trainer never maps features.npy and never holds much of it: with no cache, the
 * library's peak allocation through open, two epochs and an evaluation stays under the
 * store's fixed staging buffers plus a third of the file (small batches, small chunks). */
Test(pipeline, features_are_never_mapped_or_loaded_whole)
{
	char *d = tu_weak_csbm(dir, 12000, 1024); /* 47 MiB of features */
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	const double fbytes = (double)tu_size(burrow_dataset_features_path(ds));
	burrow_train_opts o = mb_opts(BURROW_MODEL_SAGE);
	o.cache_fraction = 0;
	o.batch_size = 8;
	o.fanout[0] = o.fanout[1] = 5;
	o.max_batches = 3;
	o.eval_chunk = 16;
	burrow_mem_reset_peak();
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_epoch_stats es = {.size = sizeof es};
	burrow_eval_stats ev = {.size = sizeof ev};
	for (int e = 0; e < 2; e++)
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	size_t peak;
	burrow_mem_stats(NULL, &peak);
	char *maps = NULL;
	tu_sh(&maps, NULL, "grep -c 'features.npy' /proc/%d/maps || true", (int)getpid());
	cr_assert_eq(atoi(maps), 0, "features.npy is mapped");
	free(maps);
	const double staging = (double)burrow_store_get_info(burrow_trainer_store(t))->staging_bytes;
	cr_log_info("peak %.1f MiB (staging %.1f MiB) for %.1f MiB of features", peak / 1048576.0, staging / 1048576.0,
		    fbytes / 1048576.0);
	cr_assert_lt((double)peak, staging + fbytes / 3, "peak %zu bytes (staging %.0f) for a %.0f-byte features file",
		     peak, staging, fbytes);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(d);
}

/* The progress callback counts the epoch's batches, and the CLI takes the pipeline's
 * options (and refuses bad ones as usage errors). */
typedef struct prog {
	uint64_t calls, last, total;
	bool ordered;
} prog;

static void prog_cb(void *user, const char *phase, uint64_t done, uint64_t total)
{
	prog *p = user;
	p->ordered = p->ordered && !strcmp(phase, "train") && done == p->last + 1;
	p->calls++;
	p->last = done;
	p->total = total;
}

Test(pipeline, progress_and_options)
{
	char *d = tu_weak_csbm(dir, 800, 8);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	burrow_train_opts o = mb_opts(BURROW_MODEL_GCN);
	prog p = {.ordered = true};
	o.progress = prog_cb;
	o.progress_user = &p;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_epoch_stats es = {.size = sizeof es};
	cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	cr_assert(p.ordered && p.calls == (uint64_t)es.batches && p.last == p.total && p.total == (uint64_t)es.batches);
	burrow_trainer_close(t);
	o = mb_opts(BURROW_MODEL_SAGE);
	o.prefetch = -1;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	o = mb_opts(BURROW_MODEL_SAGE);
	o.cache_fraction = 1.5;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	o = mb_opts(BURROW_MODEL_SAGE);
	o.fanout[1] = -2;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	burrow_dataset_close(ds);

	char *out = NULL, *err = NULL;
	const char *bad[] = {"--cache 120%", "--cache lots", "--cache-policy lru", "--engine aio", "--prefetch -1",
			     "--fanout 5,0"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_assert_eq(tu_sh(NULL, &err, "%s train '%s' --layers 2 %s", tu_burrow(), d, bad[i]), 2, "%s", bad[i]);
		free(err);
	}
	/* --eval-every 0: training only; the header says what the pipeline runs with */
	int rc = tu_sh(&out, &err,
		       "%s train '%s' --layers 2 --hidden 8 --epochs 2 --batch 200 --cache 1M --cache-policy clock "
		       "--engine pread --eval-every 0 --quiet --log '%s/l.jsonl'",
		       tu_burrow(), d, dir);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(strstr(out, "batch 200, fanout 10,5, prefetch 2; features: pread"), "%s", out);
	cr_assert(strstr(out, "(clock)"), "%s", out);
	char *lp = tu_path(dir, "l.jsonl"), *log = tu_read(lp, NULL);
	cr_assert(strstr(log, "\"valid_acc\": null") && strstr(log, "\"best_epoch\": null"), "%s", log);
	free(log);
	free(lp);
	free(out);
	free(err);
	free(d);
}

/* Every allocation of open, a mini-batch epoch (the loader's and the sampler's threads
 * included), an evaluation and a checkpoint round trip is made to fail in turn, for every
 * model, aggregator and normalization: each failure is BURROW_E_NOMEM, whichever thread met
 * it, and nothing crashes or leaks. */
Test(pipeline, every_allocation_failure_is_reported, .timeout = 300) /* ~2000 runs */
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = 300;
	g.feat_dim = 8;
	g.num_classes = 3;
	char *d = tu_path(dir, "tiny"), *ckf = tu_path(dir, "m.ckpt");
	cr_assert_eq(burrow_gen(&g, d), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	const struct {
		int model, prefetch;
		double cache;
		int aggr, norm;
		bool residual;
	} v[] = {{BURROW_MODEL_SAGE, 2, 0.5, BURROW_AGGR_MEAN, BURROW_NORM_NONE, false},
		 {BURROW_MODEL_GCN, 0, 1, BURROW_AGGR_MEAN, BURROW_NORM_NONE, false},
		 {BURROW_MODEL_MLP, 1, 0, BURROW_AGGR_MEAN, BURROW_NORM_NONE, false},
		 {BURROW_MODEL_GAT, 1, 0.5, BURROW_AGGR_MEAN, BURROW_NORM_LAYER, true},
		 {BURROW_MODEL_SAGE, 0, 1, BURROW_AGGR_MAX, BURROW_NORM_BATCH, true},
		 {BURROW_MODEL_SAGE, 2, 0.5, BURROW_AGGR_SUM, BURROW_NORM_LAYER, false}};
	const size_t base = tu_mem_now();
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		bool done = false;
		for (long n = 0; !done; n++) {
			cr_assert_lt(n, 20000, "never succeeded");
			burrow_train_opts o = mb_opts(v[i].model);
			o.hidden = 8;
			o.batch_size = 64; /* whole epochs: every batch sampled ahead is consumed */
			o.prefetch = v[i].prefetch;
			o.aggr = v[i].aggr;
			o.norm = v[i].norm;
			o.residual = v[i].residual;
			o.heads = 2;
			o.attn_dropout = v[i].model == BURROW_MODEL_GAT ? 0.2 : 0;
			o.cache_fraction = v[i].cache;
			o.eval_chunk = 64;
			burrow_trainer *t = NULL;
			burrow_epoch_stats es = {.size = sizeof es};
			burrow_eval_stats ev = {.size = sizeof ev};
			bw_mem_fail_after(n);
			int st = burrow_trainer_open(&t, ds, &o);
			if (!st)
				st = burrow_trainer_train_epoch(t, &es);
			if (!st)
				st = burrow_trainer_evaluate(t, &ev);
			if (!st)
				st = burrow_trainer_save(t, ckf);
			if (!st)
				st = burrow_trainer_load(t, ckf);
			if (!st)
				st = burrow_trainer_train_epoch(t, &es);
			bw_mem_fail_after(-1);
			cr_assert(st == 0 || st == BURROW_E_NOMEM, "case %zu, allocation %ld: status %d (%s)", i, n, st,
				  burrow_last_error());
			done = st == 0;
			if (done)
				cr_log_info("case %zu: succeeded once %ld allocations could succeed", i, n);
			burrow_trainer_close(t);
			cr_assert_eq(tu_mem_now(), base, "case %zu, allocation %ld: %zu bytes not freed", i, n,
				     tu_mem_now() - base);
		}
	}
	burrow_dataset_close(ds);
	free(d);
	free(ckf);
}

/* --sampler-device on the CPU: unset, "auto" and "cpu" all sample on the CPU and train the
 * same weights bit for bit; a malformed name is refused at open naming the option, and a
 * device this build or machine lacks too (where there is none: a GPU makes it moot). */
Test(pipeline, sampler_device_option)
{
	char *d = tu_weak_csbm(dir, 800, 8);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	burrow_train_opts o = mb_opts(BURROW_MODEL_SAGE);
	const run ref = train(ds, &o, 2, false);
	const char *same[] = {"auto", "cpu"};
	for (size_t i = 0; i < 2; i++) {
		o.sampler_device = same[i];
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		cr_assert_str_eq(burrow_trainer_sampler_device(t), "cpu", "--sampler-device %s", same[i]);
		burrow_trainer_close(t);
		const run r = train(ds, &o, 2, false);
		same_run(&ref, &r, 2, same[i]);
	}
	burrow_trainer *t = NULL;
	o.sampler_device = "gpu";
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_assert_null(t);
	cr_assert(strstr(burrow_last_error(), "sampler device") && strstr(burrow_last_error(), "'gpu'"), "%s",
		  burrow_last_error());
	if (burrow_cuda_device_count() <= 0) {
		o.sampler_device = "cuda";
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_UNSUPPORTED);
		cr_assert_null(t);
		cr_assert(strstr(burrow_last_error(), "sampler device") && strstr(burrow_last_error(), "cuda"), "%s",
			  burrow_last_error());
	}
	burrow_dataset_close(ds);
	free(d);
}

/* A GPU sampler backend (every registered one past the CPU) with a device here, or a
 * skipped test saying why not. */
static const char *gpu_sampler(void)
{
	for (int i = 1; i < bw_sampler_backend_count(); i++)
		if (bw_sampler_backend_at(i)->devices() > 0)
			return bw_sampler_backend_at(i)->name;
	if (bw_sampler_backend_count() < 2)
		cr_skip_test("no device: this build has no GPU sampler");
	cr_skip_test("no device: the GPU sampler is registered but this machine has no GPU");
	return NULL;
}

/* Training batches from the GPU sampler are the CPU sampler's: with the model on the CPU,
 * every loss and weight is the same bit for bit, for every model, prefetching or not. */
Test(pipeline, gpu_sampled_batches_train_as_cpu_sampled, .timeout = 240)
{
	const char *gpu = gpu_sampler();
	char *d = tu_weak_csbm(dir, 1500, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	for (int model = BURROW_MODEL_SAGE; model <= BURROW_MODEL_GAT; model++)
		for (int prefetch = 0; prefetch <= 2; prefetch += 2) {
			burrow_train_opts o = mb_opts(model);
			o.prefetch = prefetch;
			o.sampler_device = "cpu";
			const run ref = train(ds, &o, 2, true);
			o.sampler_device = gpu;
			const run r = train(ds, &o, 2, true);
			char what[96];
			snprintf(what, sizeof what, "model %s, prefetch %d, sampler %s", burrow_model_name(model), prefetch, gpu);
			same_run(&ref, &r, 2, what);
			cr_assert(ref.test_acc == r.test_acc, "%s: test accuracy %g vs %g", what, ref.test_acc, r.test_acc);
		}
	burrow_dataset_close(ds);
	free(d);
}

/* A mini-batch epoch on the GPU (its sampler by default, and the CPU's) has the CPU run's
 * loss within 1e-3 relative per epoch (float32 GEMMs and SpMMs in another order, TF32 off,
 * through two epochs of Adam). */
Test(pipeline, gpu_minibatch_loss_equals_the_cpu, .timeout = 240)
{
	const char *gpu = gpu_sampler();
	if (burrow_device_check("cuda") < 0)
		cr_skip_test("no device: %s", burrow_last_error());
	char *d = tu_weak_csbm(dir, 1500, 16);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	for (int model = BURROW_MODEL_SAGE; model <= BURROW_MODEL_MLP; model++) {
		burrow_train_opts o = mb_opts(model);
		const run ref = train(ds, &o, 2, false);
		o.device = "cuda";
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		cr_assert_str_eq(burrow_trainer_sampler_device(t), "cuda:0", "auto on cuda samples there (%s)", gpu);
		burrow_trainer_close(t);
		const char *samplers[] = {NULL, "cpu"};
		for (int k = 0; k < 2; k++) {
			o.sampler_device = samplers[k];
			const run r = train(ds, &o, 2, false);
			for (int e = 0; e < 2; e++)
				cr_assert(fabs(r.loss[e] - ref.loss[e]) <= 1e-3 * fabs(ref.loss[e]),
					  "model %s, sampler %s, epoch %d: loss %.9g on cuda vs %.9g on the cpu",
					  burrow_model_name(model), samplers[k] ? samplers[k] : "auto", e + 1, r.loss[e],
					  ref.loss[e]);
		}
	}
	burrow_dataset_close(ds);
	free(d);
}
