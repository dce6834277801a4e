/* test_multilabel.c: multi-label datasets and training: the format (written, read, checked), gen csbm --tasks,
 * the binary cross-entropy loss against a double reference and its finite differences, unknown labels, and
 * training that beats chance and an MLP, evaluated by ROC-AUC as OGB does, predictions, checkpoints.
 *
 * Tolerances: loss vs its double reference |got - ref| <= 1e-6 (1 + |ref|); gradient vs central finite
 * differences of the reference (step 1e-6): |analytic - numeric| <= 1e-4 (1 + |numeric|). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/compute/backend_impl.h"
#include "../train/driver/driver.h"
#include "../graph/npy.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	tu_rmrf(dir);
	free(dir);
}
TestSuite(multilabel, .init = setup, .fini = teardown, .timeout = 240);

/* ------------------------------------------------------------ the loss */

/* The mean over the known labels of the selected rows of -y log s(x) - (1 - y) log(1 - s(x)), in
 * double, written the textbook way (fine for the moderate logits used here). */
static double ref_bce(const double *x, const int8_t *y, int64_t rows, int64_t T, const int64_t *sel, int64_t nsel)
{
	double s = 0;
	int64_t cnt = 0;
	for (int64_t k = 0; k < (sel ? nsel : rows); k++) {
		const int64_t r = sel ? sel[k] : k;
		for (int64_t t = 0; t < T; t++) {
			const int8_t v = y[r * T + t];
			if (v < 0)
				continue;
			const double p = 1 / (1 + exp(-x[r * T + t]));
			s += v ? -log(p) : -log(1 - p);
			cnt++;
		}
	}
	return cnt ? s / (double)cnt : 0;
}

enum { R = 9, T = 5 };

static void loss_case(float *x, double *xd, int8_t *y, unsigned seed)
{
	for (int i = 0; i < R * T; i++) {
		xd[i] = x[i] = (float)((rand_r(&seed) % 2001) / 250.0 - 4.0);
		xd[i] = x[i];
		y[i] = (int8_t)(rand_r(&seed) % 3 - 1);
	}
}

Test(multilabel, bce_loss_and_gradient_match_the_reference_and_finite_differences)
{
	float x[R * T], g[R * T];
	double xd[R * T];
	int8_t y[R * T];
	const int64_t sel[] = {7, 0, 3, 4, 8};
	loss_case(x, xd, y, 1);
	for (int pass = 0; pass < 2; pass++) {
		const int64_t *s = pass ? sel : NULL;
		const int64_t ns = pass ? 5 : 0;
		bw_loss ls;
		cr_assert_eq(bw_bce_loss_host(x, R, T, y, s, ns, g, &ls, 2), 0);
		cr_assert_eq(ls.bad, 0);
		const double want = ref_bce(xd, y, R, T, s, ns);
		cr_assert(fabs(ls.loss - want) <= 1e-6 * (1 + fabs(want)), "pass %d: loss %.9g vs %.9g", pass, ls.loss, want);
		bool in_sel[R] = {false};
		for (int k = 0; k < (s ? ns : R); k++)
			in_sel[s ? s[k] : k] = true;
		for (int i = 0; i < R * T; i++) {
			const double keep = xd[i], h = 1e-6;
			xd[i] = keep + h;
			const double up = ref_bce(xd, y, R, T, s, ns);
			xd[i] = keep - h;
			const double down = ref_bce(xd, y, R, T, s, ns);
			xd[i] = keep;
			const double num = (up - down) / (2 * h);
			cr_assert(fabs(g[i] - num) <= 1e-4 * (1 + fabs(num)), "pass %d, entry %d: grad %g vs %g", pass, i, g[i],
				  num);
			if (!in_sel[i / T] || y[i] < 0)
				cr_assert_eq(g[i], 0.0f, "entry %d outside the selection or unknown has gradient %g", i, g[i]);
		}
	}
}

Test(multilabel, an_unknown_label_contributes_nothing)
{
	float x[R * T], g[R * T], g2[R * T];
	double xd[R * T];
	int8_t y[R * T];
	loss_case(x, xd, y, 2);
	int u = 0;
	while (y[u] != -1)
		u++;
	bw_loss a, b;
	cr_assert_eq(bw_bce_loss_host(x, R, T, y, NULL, 0, g, &a, 1), 0);
	x[u] = 1e4f; /* an unknown label's logit, however extreme, changes nothing */
	cr_assert_eq(bw_bce_loss_host(x, R, T, y, NULL, 0, g2, &b, 1), 0);
	cr_assert_eq(a.loss, b.loss);
	cr_assert_eq(a.counted, b.counted);
	cr_assert_eq(memcmp(g, g2, sizeof g), 0);
	cr_assert_eq(g2[u], 0.0f);
	y[u] = 0; /* known now: counted, and it moves the loss */
	cr_assert_eq(bw_bce_loss_host(x, R, T, y, NULL, 0, g2, &b, 1), 0);
	cr_assert_eq(b.counted, a.counted + 1);
	cr_assert(b.loss > a.loss);
	/* the stable form: huge logits give finite terms and gradients */
	float big[2] = {100.0f, -100.0f};
	int8_t yb[2] = {0, 1};
	cr_assert_eq(bw_bce_loss_host(big, 1, 2, yb, NULL, 0, g, &b, 1), 0);
	cr_assert(fabs(b.loss - 100.0) < 1e-9, "loss %g", b.loss);
	cr_assert(isfinite(g[0]) && isfinite(g[1]));
	/* a label outside -1, 0, 1 or a selected row out of range: counted as bad */
	y[3] = 2;
	cr_assert_eq(bw_bce_loss_host(x, R, T, y, NULL, 0, g, &b, 1), 0);
	cr_assert(b.bad && !b.bad_is_row && b.bad_row == 0 && b.bad_value == 2);
	const int64_t out_of_range[] = {R};
	cr_assert_eq(bw_bce_loss_host(x, R, T, y, out_of_range, 1, g, &b, 1), 0);
	cr_assert(b.bad && b.bad_is_row && b.bad_value == R);
}

/* ------------------------------------------------------------ the format */

Test(multilabel, written_labels_read_back_and_bad_ones_are_refused)
{
	enum { N = 6, TT = 3 };
	char *d = tu_path(dir, "ml");
	burrow_writer *w;
	int64_t indptr[N + 1] = {0, 1, 2, 3, 4, 5, 6};
	int32_t idx[N] = {1, 0, 3, 2, 5, 4};
	burrow_csr g = {.num_nodes = N, .num_edges = N, .indptr = indptr, .indices = idx, .index_width = 4};
	int8_t lab[N * TT] = {1, 0, -1, 0, 1, 1, -1, -1, 0, 1, 1, 1, 0, 0, 0, 1, -1, 0};
	cr_assert_eq(burrow_writer_open(&w, d, "ml", NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_graph(w, &g, true), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_multilabels(w, lab, N, TT), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_labels(w, (int32_t[N]){0}, N, 2), BURROW_E_INVAL); /* one or the other */
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_eq(in->num_tasks, TT);
	cr_assert_eq(in->num_classes, 0);
	cr_assert_null(burrow_dataset_labels(ds));
	cr_assert_eq(memcmp(burrow_dataset_multilabels(ds), lab, sizeof lab), 0);
	cr_assert_eq(burrow_dataset_verify(ds), 0);
	burrow_dataset_close(ds);

	/* a 2 in labels.npy: refused at open, naming the node and the task */
	char *lp = tu_path(d, "labels.npy");
	lab[4 * TT + 1] = 2;
	const int64_t shape[2] = {N, TT};
	cr_assert_eq(bw_npy_save(lp, BURROW_DTYPE_I8, 2, shape, lab, 64), 0);
	setenv("BURROW_VALIDATION_CACHE", "0", 1);
	cr_assert_eq(burrow_dataset_open(&ds, d), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "labels.npy: node 4, task 1 has label 2"), "%s", burrow_last_error());
	/* int32 [N] where meta.json says num_tasks: the shape and dtype are named */
	cr_assert_eq(bw_npy_save(lp, BURROW_DTYPE_I32, 1, shape, (int32_t[N]){0}, 64), 0);
	cr_assert_eq(burrow_dataset_open(&ds, d), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "labels.npy: dtype is int32, expected int8"), "%s", burrow_last_error());
	/* the writer refuses a bad value before writing anything */
	char *d2 = tu_path(dir, "ml2");
	cr_assert_eq(burrow_writer_open(&w, d2, "ml", NULL), 0);
	cr_assert_eq(burrow_writer_put_multilabels(w, lab, N, TT), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "node 4, task 1 has label 2"), "%s", burrow_last_error());
	burrow_writer_abort(w);
	free(lp);
	free(d);
	free(d2);
}

/* burrow import --labels with several columns: multi-label from .npy (bool, float with NaN) and text;
 * a value other than 0, 1, -1 or NaN, or a wrong row count, refused naming the file. */
Test(multilabel, import_reads_several_label_columns_as_tasks)
{
	enum { N = 5, TT = 3 };
	char *e = tu_path(dir, "e.npy"), *yb = tu_path(dir, "y.npy"), *yt = tu_path(dir, "y.txt");
	char *out = tu_path(dir, "imp"), *bad = tu_path(dir, "bad.txt");
	const int64_t es[2] = {4, 2}, ys[2] = {N, TT};
	cr_assert_eq(bw_npy_save(e, BURROW_DTYPE_I64, 2, es, (int64_t[]){0, 1, 1, 2, 2, 3, 3, 4}, 64), 0);
	const float yf[N * TT] = {1, 0, NAN, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1};
	const int8_t want[N * TT] = {1, 0, -1, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1};
	cr_assert_eq(bw_npy_save(yb, BURROW_DTYPE_F32, 2, ys, yf, 64), 0);
	FILE *f = fopen(yt, "w");
	fputs("1,0,-1\n0 1 1\n1,1,0\n0,0,0\n1,0,1\n", f);
	fclose(f);
	f = fopen(bad, "w");
	fputs("1,0,-1\n0 1 1\n1,1,0\n0,0.5,0\n1,0,1\n", f);
	fclose(f);
	const char *srcs[] = {yb, yt};
	for (int i = 0; i < 2; i++) {
		burrow_import_opts o;
		burrow_import_defaults(&o);
		o.edges = e;
		o.labels = srcs[i];
		o.undirected = true;
		o.overwrite = true;
		o.split[0] = 0.6;
		o.split[1] = o.split[2] = 0.2;
		cr_assert_eq(burrow_import(out, &o), 0, "%s", burrow_last_error());
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_dataset_get_info(ds)->num_tasks, TT);
		cr_assert_eq(memcmp(burrow_dataset_multilabels(ds), want, sizeof want), 0, "%s", srcs[i]);
		burrow_dataset_close(ds);
		if (i == 1) {
			o.labels = bad;
			cr_assert_eq(burrow_import(out, &o), BURROW_E_RANGE);
			cr_assert(strstr(burrow_last_error(), "bad.txt: node 3, task 1 has label 0.5"), "%s", burrow_last_error());
			o.num_nodes = N + 1;
			o.labels = yb;
			cr_assert_eq(burrow_import(out, &o), BURROW_E_FORMAT);
			cr_assert(strstr(burrow_last_error(), "y.npy: labels of shape [5, 3] float32, expected [6, T]"), "%s",
				  burrow_last_error());
		}
	}
	free(e);
	free(yb);
	free(yt);
	free(out);
	free(bad);
}

/* ------------------------------------------------------------ training */

/* gen csbm --tasks 6: the graph carries the latent class strongly, the features weakly. */
static char *ml_csbm(int64_t nodes)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = nodes;
	g.num_classes = 6;
	g.num_tasks = 6;
	g.feat_dim = 16;
	g.signal = 0.5;
	g.homophily = 0.9;
	g.avg_degree = 10;
	g.threads = 1;
	char *d = tu_path(dir, "mlcsbm");
	cr_assert_eq(burrow_gen(&g, d), 0, "%s", burrow_last_error());
	return d;
}

static burrow_eval_stats train_ml(burrow_dataset *ds, int model, bool full, int epochs)
{
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.model = model;
	o.layers = 2;
	o.hidden = 32;
	o.lr = 0.01;
	o.threads = 1;
	o.full_graph = full;
	o.batch_size = 256;
	o.cache_fraction = 1;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_eval_stats ev = {.size = sizeof ev};
	for (int e = 0; e < epochs; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert(isfinite(es.loss) && es.train_acc >= 0 && es.train_acc <= 1);
	}
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	cr_assert_eq(ev.metric, BURROW_METRIC_ROCAUC);
	burrow_trainer_close(t);
	return ev;
}

Test(multilabel, sage_beats_chance_and_an_mlp_on_csbm_tasks)
{
	char *d = ml_csbm(2000);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const burrow_eval_stats sage = train_ml(ds, BURROW_MODEL_SAGE, false, 15);
	const burrow_eval_stats full = train_ml(ds, BURROW_MODEL_SAGE, true, 60);
	const burrow_eval_stats mlp = train_ml(ds, BURROW_MODEL_MLP, false, 15);
	cr_log_info("test ROC-AUC: sage mini-batch %.4f, full graph %.4f, mlp %.4f", sage.test_acc, full.test_acc,
		    mlp.test_acc);
	/* chance is 0.5; the best any model can do knowing each node's class is about 0.84 */
	cr_assert(sage.test_acc > 0.68, "sage %.4f", sage.test_acc);
	cr_assert(full.test_acc > 0.68, "full-graph sage %.4f", full.test_acc);
	cr_assert(sage.test_acc > mlp.test_acc + 0.05, "sage %.4f vs mlp %.4f", sage.test_acc, mlp.test_acc);
	burrow_dataset_close(ds);
	free(d);
}

Test(multilabel, evaluation_predictions_and_checkpoints_agree)
{
	char *d = ml_csbm(800);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	const int64_t N = 800, TT = 6;
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.layers = 2;
	o.hidden = 16;
	o.threads = 1;
	o.task = BURROW_TASK_MULTILABEL;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_epoch_stats es = {.size = sizeof es};
	burrow_eval_stats ev = {.size = sizeof ev};
	cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	/* sampled evaluation with every neighbor scores what layer-wise inference scores */
	burrow_trainer *t2;
	burrow_train_opts o2 = o;
	o2.eval_fanout[0] = o2.eval_fanout[1] = -1;
	burrow_eval_stats ev2 = {.size = sizeof ev2};
	cr_assert_eq(burrow_trainer_open(&t2, ds, &o2), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_train_epoch(t2, &es), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_evaluate(t2, &ev2), 0, "%s", burrow_last_error());
	cr_assert(fabs(ev2.valid_acc - ev.valid_acc) < 1e-4 && fabs(ev2.test_acc - ev.test_acc) < 1e-4,
		  "sampled %.6f %.6f vs layer-wise %.6f %.6f", ev2.valid_acc, ev2.test_acc, ev.valid_acc, ev.test_acc);
	burrow_trainer_close(t2);
	/* the valid ROC-AUC is OGB's over the logits embed writes */
	char *zp = tu_path(dir, "z.npy"), *pp = tu_path(dir, "p.npy"), *lp = tu_path(dir, "l.npy");
	char *ck = tu_path(dir, "m.ckpt");
	cr_assert_eq(burrow_trainer_embed(t, zp), 0, "%s", burrow_last_error());
	burrow_npy_array z, p, l;
	cr_assert_eq(burrow_npy_read(zp, &z), 0);
	cr_assert(z.ndim == 2 && z.shape[0] == N && z.shape[1] == TT);
	int64_t nv;
	const int64_t *valid = burrow_dataset_split(ds, BURROW_SPLIT_VALID, &nv);
	double auc;
	cr_assert_eq(burrow_metric_rocauc_tasks(z.data, burrow_dataset_multilabels(ds), N, TT, valid, nv, &auc, NULL), 0);
	cr_assert_eq(auc, ev.valid_acc, "%.17g vs %.17g", auc, ev.valid_acc);
	/* predictions: sigmoid of the logits, and int8 labels where it exceeds 1/2 */
	cr_assert_eq(burrow_trainer_predict(t, NULL, 0, true, pp), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_predict(t, NULL, 0, false, lp), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_npy_read(pp, &p), 0);
	cr_assert_eq(burrow_npy_read(lp, &l), 0);
	cr_assert(p.dtype == BURROW_DTYPE_F32 && l.dtype == BURROW_DTYPE_I8 && l.ndim == 2 && l.shape[1] == TT);
	for (int64_t i = 0; i < N * TT; i++) {
		const float zi = ((float *)z.data)[i], pi = ((float *)p.data)[i];
		cr_assert(fabs(pi - 1 / (1 + exp(-(double)zi))) < 1e-6, "entry %lld", (long long)i);
		cr_assert_eq(((int8_t *)l.data)[i], zi > 0);
	}
	/* a checkpoint records the task: a node classifier's trainer refuses it, and the other way round */
	cr_assert_eq(burrow_trainer_save(t, ck), 0, "%s", burrow_last_error());
	burrow_train_opts ro;
	burrow_train_defaults(&ro);
	cr_assert_eq(burrow_checkpoint_read_opts(ck, &ro), 0);
	cr_assert_eq(ro.task, BURROW_TASK_MULTILABEL);
	cr_assert_eq(burrow_trainer_load(t, ck), 0, "%s", burrow_last_error());
	t->task = BURROW_TASK_NODE; /* as a classifier's trainer of the same shape would be */
	cr_assert_eq(burrow_trainer_load(t, ck), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "trained for task multilabel (6 tasks)"), "%s", burrow_last_error());
	t->task = BURROW_TASK_MULTILABEL;
	burrow_trainer_close(t);
	/* task node on a multi-label dataset: refused in one line */
	o.task = BURROW_TASK_NODE;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "multi-label (6 tasks"), "%s", burrow_last_error());
	burrow_npy_free(&z);
	burrow_npy_free(&p);
	burrow_npy_free(&l);
	burrow_dataset_close(ds);
	free(zp);
	free(pp);
	free(lp);
	free(ck);
	free(d);
}
