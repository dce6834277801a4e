/* lmetric.h: OGB's link-prediction metrics over scores spread across the ranks (lmetric.c). */
#ifndef BURROW_DIST_LMETRIC_H
#define BURROW_DIST_LMETRIC_H

#include "../driver/driver.h"
#include "comm.h"

/* The metric (enum burrow_edge_metric, HITS with its K) and ROC-AUC of a split whose positives
 * and negatives are spread across the ranks of c, on every rank; each rank passes its own:
 * pos [np], neg [nn] (MRR: [np, k] row-major, each positive's k negatives; else any negatives,
 * e.g. the pairs of the part). Equal to the one-process metric of all the scores: Hits@K and
 * ROC-AUC exactly (the bar is the global K-th highest negative; AUC is computed over every
 * rank's scores gathered, on every rank), MRR up to the order of one sum over the ranks.
 * Both -1 when the split has no positives or no negatives in all. Collective. */
int bw_dist_link_metric(bw_comm *c, int metric, int metric_k, const float *pos, int64_t np, const float *neg,
			int64_t nn, int64_t k, double *metric_out, double *auc_out);

#endif
