/* lmetric_check.c: run under mpirun by tests/test_mpi.c: the link metrics over scores spread
 * across the ranks (train/dist/lmetric.c) equal the one-process metrics (burrow_metric_*) of
 * all the scores: Hits@K and ROC-AUC bit for bit, MRR within 1e-12; ties included (scores on a
 * coarse grid), one rank without positives, fewer negatives than K; a second call gives the
 * same bits. Every rank draws the same global scores and keeps its share. Exit 0 when right. */
#include "../../core/internal.h"
#include "../../train/dist/lmetric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, K;

static void die(const char *what, const char *why)
{
	fprintf(stderr, "lmetric-check: rank %d: %s: %s\n", rank, what, why);
	fflush(stderr);
	bw_comm_mpi_abort(1);
}

static uint64_t mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* A score on a grid of `grid` values (a coarse grid: many ties). */
static float score(uint64_t *s, int grid) { return (float)(mix(s) % (uint64_t)grid) * 8.0f / (float)grid - 4.0f; }

/* Row i's rank: uneven shares, and from 3 ranks on rank K-1 gets none of the positives when
 * skip_last. */
static int owner(int64_t i, bool skip_last)
{
	const int k = skip_last && K > 2 ? K - 1 : K;
	return (int)((i * 7 + i / 3) % k);
}

/* One case: np positives, nn pairs negatives or k per source, the metric; checked. */
static void check(const char *name, int metric, int metric_k, int64_t np, int64_t nn, int64_t k, int grid,
		  uint64_t seed)
{
	const bool per = metric == BURROW_EDGE_METRIC_MRR;
	float *pos = malloc((size_t)np * sizeof *pos + 4), *neg = malloc((size_t)nn * sizeof *neg + 4);
	float *lp = malloc((size_t)np * sizeof *lp + 4), *ln = malloc((size_t)nn * sizeof *ln + 4);
	uint64_t s = seed;
	for (int64_t i = 0; i < np; i++)
		pos[i] = score(&s, grid) + 0.5f;
	for (int64_t i = 0; i < nn; i++)
		neg[i] = score(&s, grid);
	int64_t lnp = 0, lnn = 0;
	for (int64_t i = 0; i < np; i++)
		if (owner(i, true) == rank) {
			lp[lnp++] = pos[i];
			if (per) /* a positive's negatives go with it */
				for (int64_t j = 0; j < k; j++)
					ln[lnn++] = neg[i * k + j];
		}
	for (int64_t i = 0; !per && i < nn; i++)
		if (owner(i + 1, false) == rank)
			ln[lnn++] = neg[i];
	double want_m, want_auc, got_m[2], got_auc[2];
	if (burrow_metric_auc(pos, np, neg, nn, &want_auc))
		die(name, burrow_last_error());
	if (per && burrow_metric_mrr(pos, neg, np, k, &want_m))
		die(name, burrow_last_error());
	if (metric == BURROW_EDGE_METRIC_HITS && burrow_metric_hits(pos, np, neg, nn, metric_k, &want_m))
		die(name, burrow_last_error());
	if (metric == BURROW_EDGE_METRIC_AUC) /* the metric is the AUC */
		want_m = want_auc;
	bw_comm *c;
	if (bw_comm_world(&c))
		die(name, burrow_last_error());
	for (int r = 0; r < 2; r++)
		if (bw_dist_link_metric(c, metric, metric_k, lp, lnp, ln, lnn, per ? k : 0, &got_m[r], &got_auc[r]))
			die(name, burrow_last_error());
	bw_comm_close(c);
	char why[256];
	snprintf(why, sizeof why, "metric %.17g (one process %.17g), auc %.17g (one process %.17g)", got_m[0], want_m,
		 got_auc[0], want_auc);
	if (memcmp(&got_auc[0], &want_auc, sizeof want_auc) || memcmp(&got_auc[1], &want_auc, sizeof want_auc))
		die(name, why);
	if (per ? fabs(got_m[0] - want_m) > 1e-12 : memcmp(&got_m[0], &want_m, sizeof want_m))
		die(name, why);
	if (memcmp(&got_m[0], &got_m[1], sizeof got_m[0]))
		die(name, "a second call gave other bits");
	if (rank == 0)
		printf("lmetric-check: %s equals one process (%s)\n", name, why);
	free(pos);
	free(neg);
	free(lp);
	free(ln);
}

int main(void)
{
	if (bw_comm_mpi_start(&rank, &K))
		return 1;
	check("hits@20", BURROW_EDGE_METRIC_HITS, 20, 301, 997, 0, 4096, 1);
	check("hits@50 few negatives", BURROW_EDGE_METRIC_HITS, 50, 40, 33, 0, 64, 2);
	check("hits@3 ties", BURROW_EDGE_METRIC_HITS, 3, 55, 400, 0, 64, 3);
	check("mrr", BURROW_EDGE_METRIC_MRR, 0, 211, 211 * 9, 9, 64, 4);
	check("auc", BURROW_EDGE_METRIC_AUC, 0, 150, 700, 0, 64, 5);
	fflush(stdout);
	bw_comm_mpi_stop();
	return 0;
}
