/* test_metrics.c: OGB's metrics (train/driver/metrics.c) against slow pairwise references, and their refusals.
 *
 * Tolerance: the fast metrics sum in another order than the references: |got - ref| <= 1e-12. */
#include <criterion/criterion.h>

#include "../core/internal.h"
#include "burrow.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MTOL 1e-12

TestSuite(metrics, .timeout = 60);

/* Scores with many ties: a few levels, (rand % levels) / 4 - 1. */
static void tied_scores(float *x, int64_t n, unsigned *seed, int levels)
{
	for (int64_t i = 0; i < n; i++)
		x[i] = (float)(rand_r(seed) % levels) / 4.0f - 1.0f;
}

/* ROC-AUC by its definition: over every (positive, negative) pair, 1 when the positive scores
 * higher, 1/2 on a tie. */
static double ref_auc(const float *pos, int64_t np, const float *neg, int64_t nn)
{
	double u = 0;
	for (int64_t i = 0; i < np; i++)
		for (int64_t j = 0; j < nn; j++)
			u += pos[i] > neg[j] ? 1.0 : pos[i] == neg[j] ? 0.5 : 0.0;
	return u / ((double)np * (double)nn);
}

/* Hits@K by its definition: the K-th highest negative is the one that has fewer than K
 * negatives strictly above it and at least K at or above it. */
static double ref_hits(const float *pos, int64_t np, const float *neg, int64_t nn, int k)
{
	if (nn < k)
		return 1.0;
	float kth = 0;
	for (int64_t j = 0; j < nn; j++) {
		int64_t above = 0, atleast = 0;
		for (int64_t m = 0; m < nn; m++) {
			above += neg[m] > neg[j];
			atleast += neg[m] >= neg[j];
		}
		if (above < k && atleast >= k)
			kth = neg[j];
	}
	int64_t h = 0;
	for (int64_t i = 0; i < np; i++)
		h += pos[i] > kth;
	return (double)h / (double)np;
}

/* MRR by OGB's older rule made tie-fair: the positive's rank among its row is the mean of its
 * best and worst place when ties are broken both ways (places counted one by one). */
static double ref_mrr(const float *pos, const float *neg, int64_t np, int64_t k)
{
	double s = 0;
	for (int64_t i = 0; i < np; i++) {
		int64_t best = 1, worst = 1;
		for (int64_t j = 0; j < k; j++) {
			if (neg[i * k + j] > pos[i])
				best++;
			if (neg[i * k + j] >= pos[i])
				worst++;
		}
		s += 2.0 / (double)(best + worst);
	}
	return s / (double)np;
}

Test(metrics, auc_equals_the_pairwise_count_with_ties)
{
	unsigned seed = 7;
	int64_t sizes[][2] = {{1, 1}, {1, 5}, {7, 3}, {50, 80}, {301, 199}, {1000, 1500}};
	for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
		int64_t np = sizes[c][0], nn = sizes[c][1];
		float *pos = malloc(np * sizeof *pos), *neg = malloc(nn * sizeof *neg);
		for (int levels = 1; levels <= 40; levels += 13) {
			tied_scores(pos, np, &seed, levels);
			tied_scores(neg, nn, &seed, levels);
			for (int64_t i = 0; i < np; i++)
				pos[i] += 0.25f * (float)(rand_r(&seed) % 2); /* positives a little higher */
			double got = -1;
			cr_assert_eq(burrow_metric_auc(pos, np, neg, nn, &got), 0, "%s", burrow_last_error());
			double want = ref_auc(pos, np, neg, nn);
			cr_assert(fabs(got - want) <= MTOL, "npos %lld nneg %lld levels %d: %.15f vs %.15f", (long long)np,
				  (long long)nn, levels, got, want);
		}
		free(pos);
		free(neg);
	}
	/* all tied: 1/2; perfectly separated: 1 and 0 */
	float a[] = {1, 1}, b[] = {1, 1, 1}, lo[] = {-3, -2};
	double v;
	cr_assert_eq(burrow_metric_auc(a, 2, b, 3, &v), 0);
	cr_assert_eq(v, 0.5);
	cr_assert_eq(burrow_metric_auc(a, 2, lo, 2, &v), 0);
	cr_assert_eq(v, 1.0);
	cr_assert_eq(burrow_metric_auc(lo, 2, a, 2, &v), 0);
	cr_assert_eq(v, 0.0);
}

Test(metrics, rocauc_tasks_average_the_tasks_with_both_classes)
{
	enum { N = 400, T = 6 };
	unsigned seed = 11;
	float *sc = malloc(N * T * sizeof *sc);
	int8_t *lab = malloc(N * T);
	tied_scores(sc, N * T, &seed, 9);
	for (int64_t i = 0; i < N * T; i++) {
		int t = (int)(i % T);
		int r = rand_r(&seed) % 10;
		lab[i] = (int8_t)(r < 2 ? -1 : r < 5 + (t % 3) ? 0 : 1);
		if (t == 3)
			lab[i] = (int8_t)(r < 3 ? -1 : 1); /* task 3: positives and unknowns only, skipped */
		if (lab[i] == 1)
			sc[i] += 0.5f;
	}
	int64_t rows[N / 2];
	for (int64_t i = 0; i < N / 2; i++)
		rows[i] = (i * 7 + 3) % N; /* a split: every row once at most (7 and 400 coprime, 200 of them) */
	for (int pass = 0; pass < 2; pass++) {
		const int64_t *rr = pass ? rows : NULL;
		int64_t nr = pass ? N / 2 : N;
		double sum = 0;
		int64_t cnt = 0;
		float *p = malloc(nr * sizeof *p), *q = malloc(nr * sizeof *q);
		for (int t = 0; t < T; t++) {
			int64_t np = 0, nn = 0;
			for (int64_t i = 0; i < nr; i++) {
				int64_t r = rr ? rr[i] : i;
				if (lab[r * T + t] == 1)
					p[np++] = sc[r * T + t];
				else if (lab[r * T + t] == 0)
					q[nn++] = sc[r * T + t];
			}
			if (np && nn) {
				sum += ref_auc(p, np, q, nn);
				cnt++;
			}
		}
		free(p);
		free(q);
		cr_assert_eq(cnt, T - 1);
		double got = -1;
		int64_t scored = -1;
		cr_assert_eq(burrow_metric_rocauc_tasks(sc, lab, N, T, rr, nr, &got, &scored), 0, "%s",
			     burrow_last_error());
		cr_assert_eq(scored, cnt);
		cr_assert(fabs(got - sum / (double)cnt) <= MTOL, "pass %d: %.15f vs %.15f", pass, got,
			  sum / (double)cnt);
	}
	/* an unknown label's score is never read: a NaN there changes nothing */
	int64_t at = 0;
	while (lab[at] != -1)
		at++;
	double before, after;
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, lab, N, T, NULL, 0, &before, NULL), 0);
	sc[at] = NAN;
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, lab, N, T, NULL, 0, &after, NULL), 0);
	cr_assert_eq(before, after);
	free(sc);
	free(lab);
}

Test(metrics, hits_count_positives_above_the_kth_negative)
{
	unsigned seed = 5;
	int64_t sizes[][2] = {{1, 1}, {10, 3}, {40, 100}, {200, 1000}, {33, 2500}};
	int ks[] = {1, 3, 10, 20, 50, 100};
	for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
		int64_t np = sizes[c][0], nn = sizes[c][1];
		float *pos = malloc(np * sizeof *pos), *neg = malloc(nn * sizeof *neg);
		for (int levels = 2; levels <= 600; levels *= 7) {
			tied_scores(pos, np, &seed, levels);
			tied_scores(neg, nn, &seed, levels);
			for (size_t ki = 0; ki < sizeof ks / sizeof ks[0]; ki++) {
				double got = -1, want = ref_hits(pos, np, neg, nn, ks[ki]);
				cr_assert_eq(burrow_metric_hits(pos, np, neg, nn, ks[ki], &got), 0, "%s",
					     burrow_last_error());
				cr_assert(fabs(got - want) <= MTOL, "npos %lld nneg %lld K %d levels %d: %g vs %g",
					  (long long)np, (long long)nn, ks[ki], levels, got, want);
			}
		}
		free(pos);
		free(neg);
	}
	/* fewer negatives than K: every positive counts, OGB's rule */
	float p[] = {-5}, n[] = {1, 2};
	double v = 0;
	cr_assert_eq(burrow_metric_hits(p, 1, n, 2, 3, &v), 0);
	cr_assert_eq(v, 1.0);
	cr_assert_eq(burrow_metric_hits(p, 1, NULL, 0, 1, &v), 0);
	cr_assert_eq(v, 1.0);
	/* a tie with the K-th negative is not a hit */
	float t[] = {2, 1};
	cr_assert_eq(burrow_metric_hits(t, 2, n, 2, 1, &v), 0);
	cr_assert_eq(v, 0.0);
}

Test(metrics, mrr_averages_the_optimistic_and_pessimistic_ranks)
{
	unsigned seed = 3;
	for (int64_t k = 1; k <= 60; k += 19) {
		int64_t np = 137;
		float *pos = malloc(np * sizeof *pos), *neg = malloc(np * k * sizeof *neg);
		tied_scores(pos, np, &seed, 6);
		tied_scores(neg, np * k, &seed, 6);
		double got = -1, want = ref_mrr(pos, neg, np, k);
		cr_assert_eq(burrow_metric_mrr(pos, neg, np, k, &got), 0, "%s", burrow_last_error());
		cr_assert(fabs(got - want) <= MTOL, "k %lld: %.15f vs %.15f", (long long)k, got, want);
		free(pos);
		free(neg);
	}
	/* one positive tied with both of its two negatives: rank 1 + (0 + 2) / 2 = 2 */
	float p[] = {1}, n[] = {1, 1};
	double v;
	cr_assert_eq(burrow_metric_mrr(p, n, 1, 2, &v), 0);
	cr_assert_eq(v, 0.5);
}

Test(metrics, refusals_name_what_is_wrong)
{
	float ok[] = {0.5f, 0.25f}, bad[] = {0.5f, NAN}, inf[] = {INFINITY, 0};
	double v = 42;
	cr_assert_eq(burrow_metric_auc(ok, 2, bad, 2, &v), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "neg[1] is nan"), "%s", burrow_last_error());
	cr_assert_eq(burrow_metric_auc(inf, 2, ok, 2, &v), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "pos[0] is inf"), "%s", burrow_last_error());
	cr_assert_eq(burrow_metric_auc(ok, 0, ok, 2, &v), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_auc(ok, 2, ok, 0, &v), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_auc(ok, 2, ok, 2, NULL), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_hits(ok, 0, ok, 2, 1, &v), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_hits(ok, 2, ok, 2, 0, &v), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_hits(ok, 2, bad, 2, 1, &v), BURROW_E_RANGE);
	cr_assert_eq(burrow_metric_hits(bad, 2, ok, 2, 5, &v), BURROW_E_RANGE); /* checked before nneg < K */
	cr_assert_eq(burrow_metric_mrr(ok, ok, 0, 2, &v), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_mrr(ok, ok, 2, 0, &v), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_mrr(ok, bad, 1, 2, &v), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "neg[1]"), "%s", burrow_last_error());
	cr_assert_eq(v, 42, "a refusal leaves *out alone");

	/* per task: no row, no task, no task with both classes, a bad label, a row out of range, NaN */
	float sc[6] = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
	int8_t one_class[6] = {1, -1, 1, 0, -1, 0}, mixed[6] = {1, 0, 0, 1, -1, -1}, odd[6] = {1, 0, 0, 2, 1, 1};
	int64_t scored = 9, rows[] = {0, 3};
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, mixed, 0, 2, NULL, 0, &v, &scored), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, mixed, 3, 0, NULL, 0, &v, &scored), BURROW_E_INVAL);
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, one_class, 3, 2, NULL, 0, &v, &scored), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "none of the 2 tasks"), "%s", burrow_last_error());
	cr_assert_eq(scored, 0);
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, odd, 3, 2, NULL, 0, &v, NULL), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "row 1, task 1 is 2"), "%s", burrow_last_error());
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, mixed, 3, 2, rows, 2, &v, NULL), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "rows[1] = 3"), "%s", burrow_last_error());
	sc[2] = NAN;
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, mixed, 3, 2, NULL, 0, &v, NULL), BURROW_E_RANGE);
	cr_assert(strstr(burrow_last_error(), "row 1, task 0 is nan"), "%s", burrow_last_error());
	cr_assert_eq(v, 42);
	sc[2] = 0.3f;
	/* rows 0 and 1 only: task 0 has 1 and 0 (0.1 vs 0.3: AUC 0), task 1 has 0 and 1 (0.2 < 0.4: 1) */
	cr_assert_eq(burrow_metric_rocauc_tasks(sc, mixed, 3, 2, (int64_t[]){0, 1}, 2, &v, &scored), 0);
	cr_assert_eq(scored, 2);
	cr_assert_eq(v, 0.5);
}

Test(metrics, out_of_memory_is_reported)
{
	float a[] = {1, 2}, b[] = {0, 3};
	int8_t lab[] = {1, 0};
	double v;
	bw_mem_fail_after(0);
	int s1 = burrow_metric_auc(a, 2, b, 2, &v);
	bw_mem_fail_after(0);
	int s2 = burrow_metric_hits(a, 2, b, 2, 1, &v);
	bw_mem_fail_after(0);
	int s3 = burrow_metric_rocauc_tasks(a, lab, 2, 1, NULL, 0, &v, NULL);
	bw_mem_fail_after(-1);
	cr_assert_eq(s1, BURROW_E_NOMEM);
	cr_assert_eq(s2, BURROW_E_NOMEM);
	cr_assert_eq(s3, BURROW_E_NOMEM);
}
