/* lmetric.c: OGB's link metrics over scores spread across the ranks (each rank scores the
 * positives of its part and their negatives): Hits@K from the global K-th highest negative
 * (the union of each rank's K highest holds it), MRR from summed reciprocal ranks, ROC-AUC
 * over every rank's scores gathered. */
#include "lmetric.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int cmp_desc(const void *a, const void *b)
{
	const float x = *(const float *)a, y = *(const float *)b;
	return (x < y) - (x > y);
}

/* Every rank's n floats x, one after another in rank order, into *out (bw_free it; *total). */
static int allgather(bw_comm *c, const float *x, int64_t n, float **out, int64_t *total, const char *what)
{
	const int K = bw_comm_size(c);
	int *cnt = bw_malloc((size_t)4 * (size_t)K * sizeof *cnt);
	int64_t nn = n, all = 0;
	int st = cnt ? 0 : BURROW_E_NOMEM;
	*out = NULL;
	if (!st && n > INT_MAX)
		st = bw_err(BURROW_E_UNSUPPORTED, "%s: %lld scores exceed one MPI message (int counts)", what, (long long)n);
	if (!st) {
		for (int p = 0; p < K; p++) {
			cnt[p] = (int)nn; /* the same scores to everyone */
			cnt[K + p] = 0;
		}
		st = bw_comm_alltoall(c, cnt, cnt + 2 * K, 1, BW_COMM_INT, what);
	}
	for (int p = 0; !st && p < K; p++) {
		cnt[3 * K + p] = (int)all;
		all += cnt[2 * K + p];
		if (all > INT_MAX)
			st = bw_err(BURROW_E_UNSUPPORTED, "%s: %lld scores exceed one MPI message (int counts)", what,
				    (long long)all);
	}
	if (!st && !(*out = bw_malloc((size_t)all * sizeof **out + 1)))
		st = BURROW_E_NOMEM;
	if (!st)
		st = bw_comm_alltoallv(c, x, cnt, cnt + K, *out, cnt + 2 * K, cnt + 3 * K, BW_COMM_F32, what);
	*total = all;
	bw_free(cnt);
	if (st) {
		bw_free(*out);
		*out = NULL;
	}
	return st;
}

/* Hits@K: the K-th highest of all ranks' negatives is the bar (fewer than K in all: every
 * positive a hit, as OGB); the hits and positives summed over the ranks. */
static int hits(bw_comm *c, const float *pos, int64_t np, const float *neg, int64_t nn, int k, double *out)
{
	float *top = bw_malloc((size_t)nn * sizeof *top + 1), *all = NULL;
	int64_t cnt[3] = {0, np, nn}, na = 0;
	int st = top ? 0 : BURROW_E_NOMEM;
	if (!st)
		memcpy(top, neg, (size_t)nn * sizeof *top);
	if (!st)
		qsort(top, (size_t)nn, sizeof *top, cmp_desc);
	if (!st)
		st = allgather(c, top, BW_MIN(nn, (int64_t)k), &all, &na, "train: link metric (negatives)");
	if (!st && na >= k) {
		qsort(all, (size_t)na, sizeof *all, cmp_desc);
		for (int64_t i = 0; i < np; i++)
			cnt[0] += pos[i] > all[k - 1];
	}
	if (!st)
		st = bw_comm_allreduce(c, NULL, cnt, 3, BW_COMM_I64, BW_COMM_SUM, "train: link metric (hits)");
	if (!st)
		*out = cnt[2] < k ? 1.0 : (double)cnt[0] / (double)cnt[1];
	bw_free(top);
	bw_free(all);
	return st;
}

/* MRR: each positive's reciprocal rank among its k negatives (ties as OGB counts them). */
static int mrr(bw_comm *c, const float *pos, int64_t np, const float *neg, int64_t k, double *out)
{
	double s[2] = {0, (double)np};
	for (int64_t i = 0; i < np; i++) {
		int64_t gt = 0, ge = 0;
		for (int64_t j = 0; j < k; j++) {
			gt += neg[i * k + j] > pos[i];
			ge += neg[i * k + j] >= pos[i];
		}
		s[0] += 1.0 / (1.0 + 0.5 * (double)(gt + ge));
	}
	int st = bw_comm_allreduce(c, NULL, s, 2, BW_COMM_F64, BW_COMM_SUM, "train: link metric (mrr)");
	if (!st)
		*out = s[0] / s[1];
	return st;
}

int bw_dist_link_metric(bw_comm *c, int metric, int metric_k, const float *pos, int64_t np, const float *neg,
			int64_t nn, int64_t k, double *metric_out, double *auc_out)
{
	float *ap = NULL, *an = NULL;
	int64_t tp = 0, tn = 0;
	int st;
	*metric_out = *auc_out = -1;
	if (metric == BURROW_EDGE_METRIC_MRR && (k < 1 || nn != np * k))
		return bw_err(BURROW_E_INVAL, "train: link metric: MRR wants k >= 1 negatives per positive, got %lld for "
			      "%lld positives", (long long)nn, (long long)np);
	if ((st = allgather(c, pos, np, &ap, &tp, "train: link metric (positives)")) ||
	    (st = allgather(c, neg, nn, &an, &tn, "train: link metric (negatives)")))
		goto out;
	if (tp == 0 || tn == 0) /* nothing to rank, as in one process */
		goto out;
	if ((st = burrow_metric_auc(ap, tp, an, tn, auc_out)))
		goto out;
	if (metric == BURROW_EDGE_METRIC_MRR)
		st = mrr(c, pos, np, neg, k, metric_out);
	else if (metric == BURROW_EDGE_METRIC_HITS)
		st = hits(c, pos, np, neg, nn, metric_k, metric_out);
	else
		*metric_out = *auc_out;
out:
	bw_free(ap);
	bw_free(an);
	return st;
}
