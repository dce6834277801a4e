/* test_habits.c: the training habits (train/driver/habits.c): lr schedules, early stopping and
 * normalized features resume bit for bit; the normalizing source of rows against a reference. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/driver/driver.h"
#include "util.h"
#include "train_util.h"

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
TestSuite(habits, .init = setup, .fini = teardown, .timeout = 240);

/* Losses of a --log file as text (their bytes), and its final object's weights checksum. */
static int log_of(const char *tag, char losses[][40], char sum[40])
{
	char *p = tu_path(dir, "%s.jsonl", tag), *text = tu_read(p, NULL);
	cr_assert(text, "%s", p);
	const int n = tu_log_losses(p, losses, 16);
	const char *c = strstr(strrchr(text, '{'), "\"weights_checksum\": \"");
	cr_assert(c, "%s", text);
	snprintf(sum, 40, "%.16s", c + 21);
	free(text);
	free(p);
	return n;
}

/* burrow train d args, logging to dir/tag.jsonl; its stdout is returned (caller frees). */
static char *train(const char *d, const char *args, const char *tag)
{
	char *out = NULL, *err = NULL;
	int rc = tu_sh(&out, &err, "%s train '%s' %s --quiet --log '%s/%s.jsonl'", tu_burrow(), d, args, dir, tag);
	cr_assert_eq(rc, 0, "%s: %s\n%s", args, out, err);
	free(err);
	return out;
}

/* 6 epochs straight against 3, then 3 more resumed: the same loss bytes every epoch and the
 * same final weights, for each schedule (the plateau's rate and counts come from the
 * checkpoint), with normalized features, mini-batch and full-graph. Cosine anneals over
 * --epochs, so a first half run with --epochs 3 is another schedule: it is interrupted in
 * the library test below instead. */
Test(habits, every_schedule_resumes_bit_for_bit)
{
	char *d = tu_weak_csbm(dir, 1500, 12);
	/* plateau at a rate so small that the valid accuracy stalls: it reduces in the first half */
	static const char *const runs[] = {
		"--full-graph --lr-schedule step --lr-step 2 --lr-gamma 0.5",
		"--full-graph --lr-schedule plateau --lr-patience 0 --lr-gamma 0.5 --lr 0.0001",
		"--full-graph --normalize-features --lr-schedule plateau --lr-patience 0 --lr 0.0001",
		"--batch 256 --fanout 5,5 --normalize-features --lr-schedule step --lr-step 1 --lr-gamma 0.7",
		"--batch 256 --fanout 5,5 --lr-schedule plateau --lr-patience 0 --lr 0.0001 --lr-gamma 0.3",
	};
	for (size_t i = 0; i < sizeof runs / sizeof *runs; i++) {
		char args[512], la[16][40], lb[16][40], sa[40], sb[40];
		snprintf(args, sizeof args, "--layers 2 --hidden 16 --threads 1 --seed 3 --epochs 6 %s", runs[i]);
		free(train(d, args, "a"));
		snprintf(args, sizeof args, "--layers 2 --hidden 16 --threads 1 --seed 3 --epochs 3 --checkpoint '%s/ck%zu' %s",
			 dir, i, runs[i]);
		free(train(d, args, "b"));
		snprintf(args, sizeof args,
			 "--layers 2 --hidden 16 --threads 1 --seed 3 --epochs 6 --checkpoint '%s/ck%zu' --resume %s", dir, i,
			 runs[i]);
		free(train(d, args, "b"));
		cr_assert_eq(log_of("a", la, sa), 6);
		cr_assert_eq(log_of("b", lb, sb), 6);
		for (int e = 0; e < 6; e++)
			cr_assert_str_eq(la[e], lb[e], "%s: epoch %d: straight %s, resumed %s", runs[i], e + 1, la[e], lb[e]);
		cr_assert_str_eq(sa, sb, "%s: final weights differ", runs[i]);
	}
	free(d);
}

/* Train o->epochs epochs on d, the first `first` with one trainer, which then saves, the rest
 * with a new trainer that loads (first 0: one trainer throughout); losses[e] and the final
 * weights' checksum out. */
static uint64_t run_split(const char *d, const burrow_train_opts *o, int first, double *losses)
{
	char *ck = tu_path(dir, "split.ckpt");
	burrow_dataset *ds;
	burrow_trainer *t;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	for (int e = 0; e < o->epochs; e++) {
		if (first && e == first) {
			cr_assert_eq(burrow_trainer_save(t, ck), 0, "%s", burrow_last_error());
			burrow_trainer_close(t);
			cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
			cr_assert_eq(burrow_trainer_load(t, ck), 0, "%s", burrow_last_error());
		}
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		losses[e] = es.loss;
	}
	const uint64_t sum = burrow_trainer_weights_checksum(t);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(ck);
	return sum;
}

/* Interrupted after 3 of 6 epochs and resumed by a new trainer: the same loss bits and
 * weights as one trainer throughout, under each schedule; and the rate of each epoch is the
 * schedule's (cosine's from lr to lr_min over the epochs). */
Test(habits, an_interrupted_run_resumes_bit_for_bit_under_each_schedule)
{
	char *d = tu_weak_csbm(dir, 1500, 12);
	for (int k = BURROW_LR_NONE; k <= BURROW_LR_PLATEAU; k++) {
		burrow_train_opts o;
		burrow_train_defaults(&o);
		o.full_graph = k % 2 == 0;
		o.layers = 2;
		o.hidden = 16;
		o.threads = 1;
		o.epochs = 6;
		o.lr = 0.05;
		o.fanout[0] = o.fanout[1] = 5;
		o.batch_size = 256;
		o.lr_schedule = k;
		o.lr_step = 2;
		o.lr_gamma = 0.5;
		o.lr_min = 0.001;
		o.lr_patience = 0;
		o.normalize_features = k == BURROW_LR_COSINE;
		double a[6], b[6];
		const uint64_t sa = run_split(d, &o, 0, a), sb = run_split(d, &o, 3, b);
		for (int e = 0; e < 6; e++)
			cr_assert_eq(memcmp(&a[e], &b[e], sizeof a[e]), 0, "%s: epoch %d: %.17g vs %.17g",
				     burrow_lr_schedule_name(k), e + 1, a[e], b[e]);
		cr_assert_eq(sa, sb, "%s: the weights differ", burrow_lr_schedule_name(k));
	}
	/* the rates: cosine's formula, step's powers */
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.epochs = 6;
	o.lr = 0.05;
	o.lr_min = 0.001;
	o.lr_schedule = BURROW_LR_COSINE;
	bw_habits h;
	bw_habits_init(&h, &o);
	for (int e = 0; e < 6; e++)
		cr_assert_float_eq(bw_habits_epoch_lr(&h, &o, e), 0.001 + 0.049 * (1 + cos(M_PI * e / 6)) / 2, 1e-15);
	o.lr_schedule = BURROW_LR_STEP;
	o.lr_step = 2;
	for (int e = 0; e < 6; e++)
		cr_assert_float_eq(bw_habits_epoch_lr(&h, &o, e), 0.05 * pow(0.1, e / 2), 1e-15);
	free(d);
}

/* --patience stops the run after the epoch where P evaluations in a row found nothing better,
 * and a run checkpointed before that epoch and resumed stops at the same epoch. */
Test(habits, patience_stops_where_a_resumed_run_stops)
{
	char *d = tu_weak_csbm(dir, 1500, 12);
	const char *common = "--full-graph --layers 2 --hidden 16 --threads 1 --seed 3 --lr 0.05 --patience 2";
	char args[512];
	snprintf(args, sizeof args, "%s --epochs 200", common);
	char *out = train(d, args, "a");
	const char *s = strstr(out, "; stopped early after epoch ");
	cr_assert(s, "%s", out);
	const int stop = atoi(s + strlen("; stopped early after epoch "));
	cr_assert(stop > 3 && stop < 200, "%s", out);
	free(out);
	char la[16][40], sa[40], sb[40], lb[16][40];
	snprintf(args, sizeof args, "%s --epochs %d --checkpoint '%s/ck'", common, stop - 1, dir);
	free(train(d, args, "b"));
	snprintf(args, sizeof args, "%s --epochs 200 --checkpoint '%s/ck' --resume", common, dir);
	out = train(d, args, "b");
	char want[96];
	snprintf(want, sizeof want, "; stopped early after epoch %d:", stop);
	cr_assert(strstr(out, want), "%s\nlacks %s", out, want);
	free(out);
	/* resumed where it had stopped: it trains nothing more and says so again */
	snprintf(args, sizeof args, "%s --epochs 200 --checkpoint '%s/ck' --resume", common, dir);
	out = train(d, args, "c");
	cr_assert(strstr(out, want), "%s\nlacks %s", out, want);
	free(out);
	log_of("a", la, sa);
	log_of("b", lb, sb);
	cr_assert_str_eq(sa, sb, "the stopped runs' weights differ");
	free(d);
}

/* The normalizing source over an in-memory one and over the feature store (gathered, and
 * submitted then waited for): each row divided by its sum in double, zero rows unchanged. */
Test(habits, normalized_rows_are_each_row_over_its_sum)
{
	char *d = tu_weak_csbm(dir, 300, 7);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0, "%s", burrow_last_error());
	burrow_store_opts so;
	burrow_store_defaults(&so);
	so.out_dtype = BURROW_DTYPE_F32;
	burrow_store *s;
	cr_assert_eq(burrow_store_open(&s, burrow_dataset_features_path(ds), &so), 0, "%s", burrow_last_error());
	const int64_t n = 300, dim = 7, ids[] = {5, 0, 299, 5, 17};
	const int64_t k = sizeof ids / sizeof *ids;
	float *all = malloc((size_t)(n * dim) * sizeof *all), want[5 * 7], got[5 * 7];
	int64_t every[300];
	for (int64_t i = 0; i < n; i++)
		every[i] = i;
	cr_assert_eq(burrow_store_gather(s, every, (size_t)n, all), 0);
	for (int c = 0; c < dim; c++) /* a zero row, and a row summing to 0, stay as they are */
		all[17 * dim + c] = 0;
	for (int64_t r = 0; r < k; r++) {
		double sum = 0;
		for (int c = 0; c < dim; c++)
			sum += all[ids[r] * dim + c];
		for (int c = 0; c < dim; c++)
			want[r * dim + c] = sum == 0 ? all[ids[r] * dim + c] : (float)(all[ids[r] * dim + c] / sum);
	}
	bw_rows mem, store, norm;
	bw_rows_from_memory(&mem, all, n, dim, 1);
	cr_assert_eq(bw_rows_normalized(&norm, &mem), 0);
	cr_assert_null(norm.submit);
	cr_assert_eq(norm.gather(&norm, ids, k, got), 0);
	cr_assert_arr_eq(got, want, sizeof got);
	/* the store's rows (row 17 as read: its sum is not 0) through submit and wait */
	bw_rows_from_store(&store, s);
	cr_assert_eq(bw_rows_normalized(&norm, &store), 0);
	void *ticket;
	const bw_rows_dst dst = {.x = got};
	cr_assert_eq(norm.submit(&norm, ids, k, &dst, &ticket), 0, "%s", burrow_last_error());
	cr_assert_eq(norm.wait(&norm, ticket), 0, "%s", burrow_last_error());
	float g2[5 * 7];
	cr_assert_eq(norm.gather(&norm, ids, k, g2), 0);
	cr_assert_arr_eq(got, g2, sizeof got);
	for (int64_t r = 0; r < k; r++) {
		if (ids[r] == 17)
			continue;
		for (int c = 0; c < dim; c++)
			cr_assert_eq(got[r * dim + c], want[r * dim + c], "row %lld col %d", (long long)ids[r], c);
	}
	/* a source that puts its rows on the device is refused */
	store.on_device = true;
	cr_assert_eq(bw_rows_normalized(&norm, &store), BURROW_E_UNSUPPORTED);
	free(all);
	burrow_store_close(s);
	burrow_dataset_close(ds);
	free(d);
}

/* A checkpoint trained on normalized features is evaluated on normalized features: burrow
 * eval of its best.ckpt scores what the run's last line reported. */
Test(habits, eval_of_a_normalized_checkpoint_normalizes)
{
	char *d = tu_weak_csbm(dir, 1500, 12);
	char args[512];
	snprintf(args, sizeof args, "--full-graph --layers 2 --hidden 16 --threads 1 --epochs 3 --lr 0.05 "
				    "--normalize-features --checkpoint '%s/ck'", dir);
	char *out = train(d, args, "a"), *ev = NULL, *err = NULL;
	const char *best = strstr(out, "best valid ");
	cr_assert(best, "%s", out);
	char want[32];
	snprintf(want, sizeof want, "valid %.6s", best + 11);
	cr_assert_eq(tu_sh(&ev, &err, "%s eval '%s' --checkpoint '%s/ck'", tu_burrow(), d, dir), 0, "%s", err);
	cr_assert(strstr(ev, want), "eval: %s\nlacks %s (training: %s)", ev, want, out);
	free(ev);
	free(err);
	free(out);
	free(d);
}

/* Every allocation of a mini-batch epoch over normalized rows (the submitted reads' tickets),
 * an evaluation under the plateau schedule, a save and a load may fail: each failure is
 * BURROW_E_NOMEM and frees all it took. */
Test(habits, every_allocation_failure_is_reported)
{
	char *d = tu_weak_csbm(dir, 300, 8), *ckf = tu_path(dir, "m.ckpt");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, d), 0);
	const size_t base = tu_mem_now();
	bool done = false;
	for (long n = 0; !done; n++) {
		cr_assert_lt(n, 10000, "never succeeded");
		burrow_train_opts o;
		burrow_train_defaults(&o);
		o.layers = 2;
		o.hidden = 8;
		o.fanout[0] = o.fanout[1] = 3;
		o.batch_size = 64;
		o.threads = 1;
		o.normalize_features = true;
		o.lr_schedule = BURROW_LR_PLATEAU;
		o.patience = 1;
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
		bw_mem_fail_after(-1);
		cr_assert(st == 0 || st == BURROW_E_NOMEM, "allocation %ld: status %d (%s)", n, st, burrow_last_error());
		done = st == 0;
		burrow_trainer_close(t);
		cr_assert_eq(tu_mem_now(), base, "allocation %ld: %zu bytes not freed", n, tu_mem_now() - base);
	}
	burrow_dataset_close(ds);
	free(ckf);
	free(d);
}
