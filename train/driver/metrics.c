/* metrics.c: OGB's evaluation metrics (ROC-AUC, per-task ROC-AUC, Hits@K, MRR), by sorting and selection. */
#include "driver.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The first score of x[0..n) that is not finite: BURROW_E_RANGE naming fn, what and its index. */
static int check_finite(const char *fn, const char *what, const float *x, int64_t n)
{
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(x[i]))
			return bw_err(BURROW_E_RANGE, "%s: %s[%lld] is %g: scores must be finite", fn, what,
				      (long long)i, (double)x[i]);
	return 0;
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return (x > y) - (x < y);
}

/* A float buffer of n elements (n > 0), or BURROW_E_NOMEM naming fn. */
static float *scores_alloc(const char *fn, int64_t n)
{
	if ((uint64_t)n > SIZE_MAX / sizeof(float)) {
		bw_err(BURROW_E_NOMEM, "%s: %lld scores do not fit in memory", fn, (long long)n);
		return NULL;
	}
	float *b = bw_malloc((size_t)n * sizeof(float));
	if (!b)
		bw_err_prefix(BURROW_E_NOMEM, fn);
	return b;
}

/* ROC-AUC of sorted (ascending) positives against sorted negatives: for each distinct value,
 * its positives beat the negatives below it and tie half of those equal to it (Mann-Whitney U
 * with average ranks). np, nn > 0. */
static double auc_sorted(const float *pos, int64_t np, const float *neg, int64_t nn)
{
	double u = 0;
	int64_t i = 0, j = 0;
	while (i < np) {
		float v = pos[i];
		while (j < nn && neg[j] < v)
			j++;
		int64_t i0 = i, j0 = j;
		while (i < np && pos[i] == v)
			i++;
		while (j < nn && neg[j] == v)
			j++;
		u += (double)(i - i0) * ((double)j0 + 0.5 * (double)(j - j0));
	}
	return u / ((double)np * (double)nn);
}

int burrow_metric_auc(const float *pos, int64_t npos, const float *neg, int64_t nneg, double *out)
{
	static const char fn[] = "burrow_metric_auc";
	if (!out || npos < 0 || nneg < 0 || (npos > 0 && !pos) || (nneg > 0 && !neg))
		return bw_err(BURROW_E_INVAL, "%s: NULL scores or output, or a negative count", fn);
	if (npos == 0 || nneg == 0)
		return bw_err(BURROW_E_INVAL, "%s: %lld positives and %lld negatives: ROC-AUC needs both", fn,
			      (long long)npos, (long long)nneg);
	int st = check_finite(fn, "pos", pos, npos);
	if (st == 0)
		st = check_finite(fn, "neg", neg, nneg);
	if (st < 0)
		return st;
	if (npos > INT64_MAX - nneg)
		return bw_err(BURROW_E_INVAL, "%s: too many scores", fn);
	float *b = scores_alloc(fn, npos + nneg);
	if (!b)
		return BURROW_E_NOMEM;
	memcpy(b, pos, (size_t)npos * sizeof *b);
	memcpy(b + npos, neg, (size_t)nneg * sizeof *b);
	qsort(b, (size_t)npos, sizeof *b, cmp_float);
	qsort(b + npos, (size_t)nneg, sizeof *b, cmp_float);
	*out = auc_sorted(b, npos, b + npos, nneg);
	bw_free(b);
	return 0;
}

/* Arguments of burrow_metric_rocauc_tasks: pointers, sizes, the rows' ids. */
static int rocauc_check_args(const float *scores, const int8_t *labels, int64_t n, int64_t T, const int64_t *rows,
			     int64_t nrows, const double *out)
{
	static const char fn[] = "burrow_metric_rocauc_tasks";
	if (!out || n < 0 || T < 0 || nrows < 0)
		return bw_err(BURROW_E_INVAL, "%s: NULL output or a negative size", fn);
	if (n > 0 && T > 0 && (!scores || !labels))
		return bw_err(BURROW_E_INVAL, "%s: NULL scores or labels", fn);
	if (rows && nrows > 0)
		for (int64_t i = 0; i < nrows; i++)
			if (rows[i] < 0 || rows[i] >= n)
				return bw_err(BURROW_E_RANGE, "%s: rows[%lld] = %lld is outside [0, %lld)", fn,
					      (long long)i, (long long)rows[i], (long long)n);
	return 0;
}

/* Task t's scores of the rows picked: positives to the front of buf, negatives to its back
 * (*np and *nn of them); -1 skipped; another label or a score not finite refused. */
static int rocauc_split_task(const float *scores, const int8_t *labels, int64_t T, const int64_t *rows,
			     int64_t nrows, int64_t t, float *buf, int64_t *np, int64_t *nn)
{
	static const char fn[] = "burrow_metric_rocauc_tasks";
	int64_t p = 0, q = 0;
	for (int64_t i = 0; i < nrows; i++) {
		int64_t r = rows ? rows[i] : i;
		int8_t y = labels[r * T + t];
		if (y == -1)
			continue;
		if (y != 0 && y != 1)
			return bw_err(BURROW_E_RANGE, "%s: label of row %lld, task %lld is %d: labels are 1, 0 or -1 "
				      "(unknown)", fn, (long long)r, (long long)t, (int)y);
		float s = scores[r * T + t];
		if (!isfinite(s))
			return bw_err(BURROW_E_RANGE, "%s: score of row %lld, task %lld is %g: scores must be finite",
				      fn, (long long)r, (long long)t, (double)s);
		if (y == 1)
			buf[p++] = s;
		else
			buf[nrows - 1 - q++] = s;
	}
	*np = p;
	*nn = q;
	return 0;
}

int burrow_metric_rocauc_tasks(const float *scores, const int8_t *labels, int64_t n, int64_t T, const int64_t *rows,
			       int64_t nrows, double *out, int64_t *scored)
{
	static const char fn[] = "burrow_metric_rocauc_tasks";
	int st = rocauc_check_args(scores, labels, n, T, rows, nrows, out);
	if (st < 0)
		return st;
	if (!rows)
		nrows = n;
	if (scored)
		*scored = 0;
	if (nrows == 0 || T == 0)
		return bw_err(BURROW_E_INVAL, "%s: %lld rows and %lld tasks: nothing to score", fn,
			      (long long)nrows, (long long)T);
	float *buf = scores_alloc(fn, nrows);
	if (!buf)
		return BURROW_E_NOMEM;
	double sum = 0;
	int64_t cnt = 0;
	for (int64_t t = 0; t < T; t++) {
		int64_t np = 0, nn = 0;
		st = rocauc_split_task(scores, labels, T, rows, nrows, t, buf, &np, &nn);
		if (st < 0)
			goto out_free;
		if (np == 0 || nn == 0)
			continue; /* OGB: a task needs a positive and a negative to be scored */
		float *neg = buf + nrows - nn;
		qsort(buf, (size_t)np, sizeof *buf, cmp_float);
		qsort(neg, (size_t)nn, sizeof *buf, cmp_float);
		sum += auc_sorted(buf, np, neg, nn);
		cnt++;
	}
	if (cnt == 0) {
		st = bw_err(BURROW_E_INVAL, "%s: none of the %lld tasks has both a positive and a negative label "
			    "among the %lld rows scored", fn, (long long)T, (long long)nrows);
		goto out_free;
	}
	*out = sum / (double)cnt;
	if (scored)
		*scored = cnt;
out_free:
	bw_free(buf);
	return st;
}

/* The value a[t] would hold were a[0..n) sorted ascending (t < n): quickselect with a
 * median-of-three pivot and a three-way partition, so runs of equal scores end it early.
 * Reorders a. */
static float select_kth(float *a, int64_t n, int64_t t)
{
	int64_t lo = 0, hi = n - 1;
	while (lo < hi) {
		float x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi];
		float p = x < y ? (y < z ? y : (x < z ? z : x)) : (x < z ? x : (y < z ? z : y));
		int64_t lt = lo, i = lo, gt = hi;
		while (i <= gt) {
			if (a[i] < p) {
				BW_SWAP(a[lt], a[i]);
				lt++;
				i++;
			} else if (a[i] > p) {
				BW_SWAP(a[i], a[gt]);
				gt--;
			} else {
				i++;
			}
		}
		if (t < lt)
			hi = lt - 1;
		else if (t > gt)
			lo = gt + 1;
		else
			return p;
	}
	return a[t];
}

int burrow_metric_hits(const float *pos, int64_t npos, const float *neg, int64_t nneg, int k, double *out)
{
	static const char fn[] = "burrow_metric_hits";
	if (!out || npos < 0 || nneg < 0 || (npos > 0 && !pos) || (nneg > 0 && !neg))
		return bw_err(BURROW_E_INVAL, "%s: NULL scores or output, or a negative count", fn);
	if (npos == 0 || k <= 0)
		return bw_err(BURROW_E_INVAL, "%s: %lld positives, K = %d: Hits@K needs a positive and K > 0", fn,
			      (long long)npos, k);
	int st = check_finite(fn, "pos", pos, npos);
	if (st == 0)
		st = check_finite(fn, "neg", neg, nneg);
	if (st < 0)
		return st;
	if (nneg < k) {
		*out = 1.0; /* OGB: fewer negatives than K, every positive is a hit */
		return 0;
	}
	float *b = scores_alloc(fn, nneg);
	if (!b)
		return BURROW_E_NOMEM;
	memcpy(b, neg, (size_t)nneg * sizeof *b);
	float kth = select_kth(b, nneg, nneg - k);
	bw_free(b);
	int64_t hits = 0;
	for (int64_t i = 0; i < npos; i++)
		hits += pos[i] > kth;
	*out = (double)hits / (double)npos;
	return 0;
}

int burrow_metric_mrr(const float *pos, const float *neg, int64_t npos, int64_t k, double *out)
{
	static const char fn[] = "burrow_metric_mrr";
	if (!out || !pos || !neg || npos < 0 || k < 0)
		return bw_err(BURROW_E_INVAL, "%s: NULL scores or output, or a negative count", fn);
	if (npos == 0 || k == 0)
		return bw_err(BURROW_E_INVAL, "%s: %lld positives with %lld negatives each: MRR needs both", fn,
			      (long long)npos, (long long)k);
	if (npos > INT64_MAX / k)
		return bw_err(BURROW_E_INVAL, "%s: %lld x %lld negatives overflow", fn, (long long)npos,
			      (long long)k);
	int st = check_finite(fn, "pos", pos, npos);
	if (st == 0)
		st = check_finite(fn, "neg", neg, npos * k);
	if (st < 0)
		return st;
	double sum = 0;
	for (int64_t i = 0; i < npos; i++) {
		const float *row = neg + i * k;
		int64_t gt = 0, ge = 0;
		for (int64_t j = 0; j < k; j++) {
			gt += row[j] > pos[i];
			ge += row[j] >= pos[i];
		}
		sum += 1.0 / (1.0 + 0.5 * (double)(gt + ge));
	}
	*out = sum / (double)npos;
	return 0;
}
