/* test_outputs.c: what a trained model gives back: any layer's embeddings (checked against a
 * slow reference for an mlp), predictions (classes agree with evaluation's accuracy,
 * probabilities are the softmax of the logits), the best epoch's weights kept in memory, and
 * the public .npy reader; and the same through burrow embed / predict. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/driver/driver.h"
#include "util.h"
#include "train_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(outputs, 120);

/* A trained trainer on a small CSBM: 2 layers, hidden 16, full graph, `epochs` epochs each
 * evaluated. */
static burrow_trainer *trained(burrow_dataset **ds, int model, int epochs)
{
	char *d = tu_weak_csbm(tu_dir, 400, 12);
	cr_assert_eq(burrow_dataset_open(ds, d), 0, "%s", burrow_last_error());
	free(d);
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.model = model;
	o.layers = 2;
	o.hidden = 16;
	o.full_graph = true;
	o.threads = 1;
	o.lr = 0.02;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, *ds, &o), 0, "%s", burrow_last_error());
	for (int e = 0; e < epochs; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	}
	return t;
}

static burrow_npy_array read_npy(const char *path)
{
	burrow_npy_array a;
	cr_assert_eq(burrow_npy_read(path, &a), 0, "%s", burrow_last_error());
	return a;
}

Test(outputs, hidden_layer_of_an_mlp_matches_a_slow_reference)
{
	burrow_dataset *ds;
	burrow_trainer *t = trained(&ds, BURROW_MODEL_MLP, 2);
	char *p = tu_path(tu_dir, "h1.npy");
	cr_assert_eq(burrow_trainer_embed_layer(t, 1, p), 0, "%s", burrow_last_error());
	burrow_npy_array h = read_npy(p), x = read_npy(burrow_dataset_features_path(ds));
	const int64_t n = burrow_dataset_get_info(ds)->num_nodes, D = 12, H = 16;
	cr_assert_eq(h.dtype, BURROW_DTYPE_F32);
	cr_assert_eq(h.ndim, 2);
	cr_assert(h.shape[0] == n && h.shape[1] == H, "[%lld, %lld]", (long long)h.shape[0], (long long)h.shape[1]);
	/* layer 1 of an mlp: relu(x W + b), W [D, H] row-major then b [H], first in the parameters */
	const float *w = t->model->params, *b = w + D * H, *xv = x.data, *hv = h.data;
	for (int64_t v = 0; v < n; v++)
		for (int64_t j = 0; j < H; j++) {
			double s = b[j];
			for (int64_t k = 0; k < D; k++)
				s += (double)xv[v * D + k] * w[k * H + j];
			s = s > 0 ? s : 0;
			cr_assert(fabs(hv[v * H + j] - s) <= 1e-4 * (1 + fabs(s)), "node %lld unit %lld: %g, want %g",
				  (long long)v, (long long)j, hv[v * H + j], s);
		}
	/* the last layer is the logits: the same bytes as burrow_trainer_embed; 0 means the last */
	char *l2 = tu_path(tu_dir, "l2.npy"), *l0 = tu_path(tu_dir, "l0.npy"), *lg = tu_path(tu_dir, "logits.npy");
	cr_assert_eq(burrow_trainer_embed_layer(t, 2, l2), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_embed_layer(t, 0, l0), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_embed(t, lg), 0, "%s", burrow_last_error());
	size_t a, c, e;
	char *ba = tu_read(l2, &a), *bc = tu_read(l0, &c), *be = tu_read(lg, &e);
	cr_assert(a == e && c == e && !memcmp(ba, be, e) && !memcmp(bc, be, e));
	/* a layer the model does not have: refused, nothing written */
	char *l3 = tu_path(tu_dir, "l3.npy");
	cr_assert_eq(burrow_trainer_embed_layer(t, 3, l3), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "layer 3"), "%s", burrow_last_error());
	cr_assert(!tu_exists(l3));
	free(ba), free(bc), free(be), free(l2), free(l0), free(lg), free(l3), free(p);
	burrow_npy_free(&h);
	burrow_npy_free(&x);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
}

Test(outputs, predictions_agree_with_evaluation_and_the_softmax)
{
	burrow_dataset *ds;
	burrow_trainer *t = trained(&ds, BURROW_MODEL_SAGE, 3);
	burrow_eval_stats ev = {.size = sizeof ev};
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	char *pc = tu_path(tu_dir, "c.npy"), *pp = tu_path(tu_dir, "p.npy"), *pl = tu_path(tu_dir, "logits.npy");
	cr_assert_eq(burrow_trainer_predict(t, NULL, 0, false, pc), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_predict(t, NULL, 0, true, pp), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_embed(t, pl), 0, "%s", burrow_last_error());
	burrow_npy_array c = read_npy(pc), p = read_npy(pp), z = read_npy(pl);
	const int64_t n = burrow_dataset_get_info(ds)->num_nodes, C = burrow_dataset_get_info(ds)->num_classes;
	cr_assert(c.dtype == BURROW_DTYPE_I32 && c.ndim == 1 && c.shape[0] == n);
	cr_assert(p.dtype == BURROW_DTYPE_F32 && p.ndim == 2 && p.shape[0] == n && p.shape[1] == C);
	const int32_t *cls = c.data, *y = burrow_dataset_labels(ds);
	const float *pr = p.data, *lg = z.data;
	for (int64_t v = 0; v < n; v++) {
		double sum = 0, m = lg[v * C], s = 0;
		int best = 0;
		for (int k = 0; k < C; k++) {
			sum += pr[v * C + k];
			if (lg[v * C + k] > lg[v * C + best])
				best = k;
			m = fmax(m, lg[v * C + k]);
		}
		cr_assert(fabs(sum - 1) <= 1e-5, "node %lld: probabilities sum to %.9g", (long long)v, sum);
		cr_assert_eq(cls[v], best, "node %lld: class %d, argmax %d", (long long)v, cls[v], best);
		for (int k = 0; k < C; k++)
			s += exp(lg[v * C + k] - m);
		for (int k = 0; k < C; k++) {
			const double want = exp(lg[v * C + k] - m) / s;
			cr_assert(fabs(pr[v * C + k] - want) <= 1e-6, "node %lld class %d: %g, want %g", (long long)v, k,
				  pr[v * C + k], want);
		}
	}
	/* the accuracy of the predictions is evaluation's, split by split */
	const double want[3] = {ev.train_acc, ev.valid_acc, ev.test_acc};
	for (int s = 0; s < 3; s++) {
		int64_t k, right = 0;
		const int64_t *ids = burrow_dataset_split(ds, s, &k);
		for (int64_t i = 0; i < k; i++)
			right += cls[ids[i]] == y[ids[i]];
		cr_assert_eq((double)right / (double)k, want[s], "split %d: %lld / %lld, evaluation %g", s, (long long)right,
			     (long long)k, want[s]);
	}
	/* a list of nodes, unsorted with repeats: the same rows in the list's order */
	const int64_t ids[6] = {7, 3, n - 1, 3, 0, 7};
	char *ps = tu_path(tu_dir, "ps.npy"), *cs = tu_path(tu_dir, "cs.npy");
	cr_assert_eq(burrow_trainer_predict(t, ids, 6, true, ps), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_predict(t, ids, 6, false, cs), 0, "%s", burrow_last_error());
	burrow_npy_array q = read_npy(ps), qc = read_npy(cs);
	cr_assert(q.shape[0] == 6 && q.shape[1] == C && qc.shape[0] == 6);
	for (int i = 0; i < 6; i++) {
		cr_assert(!memcmp((float *)q.data + i * C, pr + ids[i] * C, (size_t)C * sizeof(float)), "entry %d", i);
		cr_assert_eq(((int32_t *)qc.data)[i], cls[ids[i]]);
	}
	const int64_t bad[2] = {1, n};
	char *pb = tu_path(tu_dir, "bad.npy");
	cr_assert_eq(burrow_trainer_predict(t, bad, 2, false, pb), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "entry 1"), "%s", burrow_last_error());
	cr_assert(!tu_exists(pb));
	burrow_npy_free(&c), burrow_npy_free(&p), burrow_npy_free(&z), burrow_npy_free(&q), burrow_npy_free(&qc);
	free(pc), free(pp), free(pl), free(ps), free(cs), free(pb);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
}

Test(outputs, the_best_epochs_weights_come_back)
{
	burrow_dataset *ds;
	burrow_trainer *t = trained(&ds, BURROW_MODEL_SAGE, 0);
	cr_assert_eq(burrow_trainer_use_best(t), BURROW_E_NOTFOUND);
	/* train on, keeping each epoch's evaluation and checksum, past the best; a checkpoint
	 * at each new best valid accuracy, as burrow train writes best.ckpt */
	char *bp = tu_path(tu_dir, "best.ckpt");
	uint64_t sums[12];
	double valid[12], top = -1;
	for (int e = 0; e < 12; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		sums[e] = burrow_trainer_weights_checksum(t);
		valid[e] = ev.valid_acc;
		if (valid[e] > top) {
			top = valid[e];
			cr_assert_eq(burrow_trainer_save(t, bp), 0, "%s", burrow_last_error());
		}
	}
	const burrow_best b = burrow_trainer_best(t);
	int want = 0; /* the first epoch of the highest valid accuracy */
	for (int e = 1; e < 12; e++)
		if (valid[e] > valid[want])
			want = e;
	cr_assert_eq(b.epoch, want + 1);
	cr_assert_eq(burrow_trainer_use_best(t), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_weights_checksum(t), sums[want]);
	burrow_eval_stats ev = {.size = sizeof ev};
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	cr_assert_eq(ev.valid_acc, b.valid_acc);
	/* a checkpoint of the best epoch brings its weights; one of a later epoch (the last,
	 * saved after use_best: the best weights, a later epoch's number) does not */
	char *lp = tu_path(tu_dir, "last.ckpt");
	cr_assert_eq(burrow_trainer_save(t, lp), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	burrow_train_opts o;
	burrow_train_defaults(&o);
	cr_assert_eq(burrow_checkpoint_read_opts(bp, &o), 0, "%s", burrow_last_error());
	o.full_graph = true;
	o.threads = 1;
	const char *ckpt[2] = {bp, lp};
	for (int k = 0; k < 2; k++) {
		burrow_trainer *u;
		cr_assert_eq(burrow_trainer_open(&u, ds, &o), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_load(u, ckpt[k]), 0, "%s", burrow_last_error());
		if (k == 0 || want == 11) {
			cr_assert_eq(burrow_trainer_use_best(u), 0, "%s", burrow_last_error());
			cr_assert_eq(burrow_trainer_weights_checksum(u), sums[want]);
		} else {
			cr_assert_eq(burrow_trainer_use_best(u), BURROW_E_NOTFOUND);
		}
		burrow_trainer_close(u);
	}
	free(bp);
	free(lp);
	burrow_dataset_close(ds);
}

Test(outputs, the_npy_reader_reads_what_burrow_writes_and_refuses_the_rest)
{
	const int64_t s2[2] = {3, 5}, s1[1] = {4};
	float f[15];
	for (int i = 0; i < 15; i++)
		f[i] = (float)i * 0.25f - 1;
	const int64_t q[4] = {-5, 0, 1LL << 40, 7};
	char *pf = tu_path(tu_dir, "f.npy"), *pq = tu_path(tu_dir, "q.npy");
	cr_assert_eq(bw_npy_save(pf, BURROW_DTYPE_F32, 2, s2, f, BW_NPY_FEATURE_ALIGN), 0);
	cr_assert_eq(bw_npy_save(pq, BURROW_DTYPE_I64, 1, s1, q, BW_NPY_ALIGN), 0);
	burrow_npy_array a = read_npy(pf), b = read_npy(pq);
	cr_assert(a.dtype == BURROW_DTYPE_F32 && a.ndim == 2 && a.shape[0] == 3 && a.shape[1] == 5 && a.count == 15);
	cr_assert(!memcmp(a.data, f, sizeof f));
	cr_assert(b.dtype == BURROW_DTYPE_I64 && b.ndim == 1 && b.shape[0] == 4 && !memcmp(b.data, q, sizeof q));
	burrow_npy_free(&a);
	burrow_npy_free(&b);
	burrow_npy_free(&a); /* a freed array is fine */
	cr_assert_null(a.data);
	/* truncated, not an npy, absent: an error naming the file, the array left empty */
	tu_truncate(pf, tu_size(pf) - 4);
	cr_assert_eq(burrow_npy_read(pf, &a), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), pf), "%s", burrow_last_error());
	cr_assert(a.data == NULL && a.count == 0);
	char *pt = tu_path(tu_dir, "t.npy");
	FILE *fp = fopen(pt, "w");
	fputs("src,dst\n0,1\n", fp);
	fclose(fp);
	cr_assert_eq(burrow_npy_read(pt, &a), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), pt), "%s", burrow_last_error());
	char *pn = tu_path(tu_dir, "none.npy");
	cr_assert_lt(burrow_npy_read(pn, &a), 0);
	cr_assert(strstr(burrow_last_error(), pn), "%s", burrow_last_error());
	free(pf), free(pq), free(pt), free(pn);
}

Test(outputs, embed_and_predict_from_the_command_line)
{
	char *d = tu_weak_csbm(tu_dir, 300, 8), *ck = tu_path(tu_dir, "ck"), *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s train %s --layers 2 --hidden 8 --epochs 3 --full-graph --checkpoint %s --quiet",
			   tu_burrow(), d, ck),
		     0, "%s", err);
	free(err);
	char *h = tu_path(tu_dir, "h.npy"), *p = tu_path(tu_dir, "p.npy"), *ids = tu_path(tu_dir, "ids.npy");
	cr_assert_eq(tu_sh(NULL, &err, "%s embed %s --checkpoint %s --layer 1 --out %s", tu_burrow(), d, ck, h), 0, "%s",
		     err);
	cr_assert(strstr(err, "300 x 8 float32, layer 1 of 2"), "%s", err);
	free(err);
	burrow_npy_array a = read_npy(h);
	cr_assert(a.shape[0] == 300 && a.shape[1] == 8);
	burrow_npy_free(&a);
	cr_assert_eq(tu_sh(NULL, &err, "%s embed %s --checkpoint %s --layer 3 --out %s/x.npy", tu_burrow(), d, ck, tu_dir),
		     1);
	cr_assert(strstr(err, "burrow: embed: --layer 3: the model has 2 layers"), "%s", err);
	free(err);
	const int32_t nodes[3] = {5, 0, 5};
	const int64_t shape[1] = {3};
	cr_assert_eq(bw_npy_save(ids, BURROW_DTYPE_I32, 1, shape, nodes, BW_NPY_ALIGN), 0);
	cr_assert_eq(tu_sh(NULL, &err, "%s predict %s --checkpoint %s --proba --nodes %s --out %s", tu_burrow(), d, ck, ids, p),
		     0, "%s", err);
	free(err);
	a = read_npy(p);
	cr_assert(a.dtype == BURROW_DTYPE_F32 && a.shape[0] == 3 && a.shape[1] == 4);
	cr_assert(!memcmp(a.data, (float *)a.data + 8, 4 * sizeof(float)), "repeated node, repeated row");
	burrow_npy_free(&a);
	/* --nodes of floats: refused naming the file */
	const float fl[1] = {1};
	cr_assert_eq(bw_npy_save(ids, BURROW_DTYPE_F32, 1, (const int64_t[1]){1}, fl, BW_NPY_ALIGN), 0);
	cr_assert_eq(tu_sh(NULL, &err, "%s predict %s --checkpoint %s --nodes %s --out %s --force", tu_burrow(), d, ck, ids, p),
		     1);
	cr_assert(strstr(err, "ids.npy: node ids must be int32 or int64, got float32"), "%s", err);
	free(err);
	free(d), free(ck), free(h), free(p), free(ids);
}

/* train --split draws a split from --seed (the sizes burrow_split_random gives), and eval
 * --split scores on the same one: its accuracies are the run's best epoch's. */
Test(outputs, train_and_eval_on_a_drawn_split)
{
	char *d = tu_weak_csbm(tu_dir, 500, 8), *ck = tu_path(tu_dir, "ck"), *log = tu_path(tu_dir, "l.jsonl"), *out, *err;
	cr_assert_eq(tu_sh(&out, &err, "%s train %s --split 0.5,0.25,0.25 --seed 2 --layers 2 --hidden 8 --epochs 3 "
				       "--full-graph --checkpoint %s --log %s --quiet",
			   tu_burrow(), d, ck, log),
		     0, "%s", err);
	const char *best = strstr(out, "best valid ");
	cr_assert(best, "%s", out);
	double bv, bt;
	int be;
	cr_assert_eq(sscanf(best, "best valid %lf at epoch %d: test accuracy %lf", &bv, &be, &bt), 3, "%s", best);
	free(out), free(err);
	cr_assert_eq(tu_sh(&out, &err, "%s eval %s --checkpoint %s --split 0.5,0.25,0.25", tu_burrow(), d, ck), 0, "%s", err);
	char want[96];
	snprintf(want, sizeof want, "model after epoch %d:", be);
	cr_assert(strstr(out, want), "%s", out);
	double tr, va, te;
	cr_assert_eq(sscanf(strstr(out, "train "), "train %lf  valid %lf  test %lf", &tr, &va, &te), 3, "%s", out);
	cr_assert(va == bv && te == bt, "eval %s vs train's best valid %.4f test %.4f", out, bv, bt);
	free(out), free(err);
	/* the split the trainer drew is the library's, and differs from the dataset's */
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.split[0] = 0.5, o.split[1] = 0.25, o.split[2] = 0.25;
	o.seed = 2;
	o.full_graph = true;
	o.layers = 1;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	int64_t *ids = malloc(500 * sizeof *ids), sz[3], k;
	cr_assert_eq(burrow_split_random(burrow_dataset_labels(ds), 500, o.split, 2, ids, sz), 0);
	const int64_t *tr_ids = bw_trainer_split(t, BURROW_SPLIT_TRAIN, &k);
	cr_assert(k == sz[0] && k == 250 && !memcmp(tr_ids, ids, (size_t)k * sizeof *ids));
	const int64_t *ds_ids = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &k);
	cr_assert(k != sz[0] || memcmp(ds_ids, ids, (size_t)k * sizeof *ids));
	free(ids);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(d), free(ck), free(log);
}

/* A checkpoint records the split it trained on (fractions and seed): eval and a resumed run
 * use it, whatever --seed says; a different --split is refused, and so is loading it into a
 * trainer whose split was drawn from another seed. */
Test(outputs, a_checkpoint_keeps_its_drawn_split)
{
	char *d = tu_weak_csbm(tu_dir, 500, 8), *ck = tu_path(tu_dir, "ck"), *last = tu_path(tu_dir, "ck/last.ckpt"),
	     *out, *err;
	cr_assert_eq(tu_sh(&out, &err, "%s train %s --split 0.5,0.25,0.25 --seed 2 --layers 2 --hidden 8 --epochs 2 "
				       "--full-graph --checkpoint %s --quiet",
			   tu_burrow(), d, ck),
		     0, "%s", err);
	double bv, bt;
	int be;
	cr_assert_eq(sscanf(strstr(out, "best valid "), "best valid %lf at epoch %d: test accuracy %lf", &bv, &be, &bt), 3,
		     "%s", out);
	free(out), free(err);
	/* eval without --split scores on the recorded one */
	cr_assert_eq(tu_sh(&out, &err, "%s eval %s --checkpoint %s", tu_burrow(), d, ck), 0, "%s", err);
	double tr, va, te;
	cr_assert_eq(sscanf(strstr(out, "train "), "train %lf  valid %lf  test %lf", &tr, &va, &te), 3, "%s", out);
	cr_assert(va == bv && te == bt, "eval %s vs train's best valid %.4f test %.4f", out, bv, bt);
	free(out), free(err);
	/* another --split: refused by eval and by a resumed train, naming the recorded one */
	cr_assert_eq(tu_sh(NULL, &err, "%s eval %s --checkpoint %s --split 0.6,0.2,0.2", tu_burrow(), d, ck), 1);
	cr_assert(strstr(err, "random split 0.5,0.25,0.25 drawn from seed 2; --split 0.6,0.2,0.2 differs"), "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s train %s --split 0.6,0.2,0.2 --layers 2 --hidden 8 --epochs 3 --full-graph "
				       "--checkpoint %s --resume --quiet",
			   tu_burrow(), d, ck),
		     1);
	cr_assert(strstr(err, "--split 0.6,0.2,0.2 differs"), "%s", err);
	free(err);
	/* resumed with another --seed and no --split: the checkpoint's seed and split go on */
	cr_assert_eq(tu_sh(NULL, &err, "%s train %s --seed 7 --layers 2 --hidden 8 --epochs 3 --full-graph "
				       "--checkpoint %s --resume --quiet",
			   tu_burrow(), d, ck),
		     0, "%s", err);
	free(err);
	burrow_train_opts o;
	burrow_train_defaults(&o);
	cr_assert_eq(burrow_checkpoint_read_opts(last, &o), 0, "%s", burrow_last_error());
	cr_assert(o.seed == 2 && o.split[0] == 0.5 && o.split[1] == 0.25 && o.split[2] == 0.25, "seed %llu split %g,%g,%g",
		  (unsigned long long)o.seed, o.split[0], o.split[1], o.split[2]);
	/* the library: a trainer whose split came from another seed, or the dataset's, refuses it */
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	burrow_trainer *t;
	for (int k = 0; k < 3; k++) {
		burrow_train_opts p = o;
		if (k == 1)
			p.seed = 7;
		if (k == 2)
			p.split[0] = p.split[1] = p.split[2] = 0;
		cr_assert_eq(burrow_trainer_open(&t, ds, &p), 0, "%s", burrow_last_error());
		const int st = burrow_trainer_load(t, last);
		if (k == 0) {
			cr_assert_eq(st, 0, "%s", burrow_last_error());
		} else {
			cr_assert_eq(st, BURROW_E_INVAL);
			cr_assert(strstr(burrow_last_error(), "trained on a random split 0.5,0.25,0.25 drawn from seed 2, this "
							      "run's split is "),
				  "%s", burrow_last_error());
		}
		burrow_trainer_close(t);
	}
	burrow_dataset_close(ds);
	/* a model of the dataset's splits: eval --split is refused */
	cr_assert_eq(tu_sh(NULL, &err, "%s train %s --layers 2 --hidden 8 --epochs 1 --full-graph --checkpoint %s/ds --quiet",
			   tu_burrow(), d, ck),
		     0, "%s", err);
	free(err);
	cr_assert_eq(tu_sh(NULL, &err, "%s eval %s --checkpoint %s/ds --split 0.5,0.25,0.25", tu_burrow(), d, ck), 1);
	cr_assert(strstr(err, "the model trained on the dataset's splits; --split 0.5,0.25,0.25 differs"), "%s", err);
	free(err);
	free(d), free(ck), free(last);
}
