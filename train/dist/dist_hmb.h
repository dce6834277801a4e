/* dist_hmb.h: partition-parallel mini-batch training over typed parts (dist_hmb.c): dist_mb's
 * design with a node as (type, id): each rank samples from its own target-type training nodes,
 * each relation's frontier rows drawn by the owner of their dst node (that type's book), each
 * type's input rows from the rank's per-type store or fetched from their owners. */
#ifndef BURROW_DIST_HMB_H
#define BURROW_DIST_HMB_H

#include "dist.h"

/* Open the typed side of d (d->parts typed; d->world, rank, K, threads and the backend set):
 * this rank's part as a typed dataset, the per-type books, halos and stores, the relational
 * model and its optimizer, the sampler over the parts and the loader. Collective. */
int bw_dist_hmb_open(burrow_dist *d, const char *parts_dir);
void bw_dist_hmb_close(struct bw_dist_hmb *m);
/* One epoch (burrow_dist_train_epoch dispatches here). Collective. */
int bw_dist_hmb_epoch(burrow_dist *d, burrow_epoch_stats *es, burrow_comm_stats *cs);
/* Sampled evaluation of each rank's owned valid and test (and train, when asked) target
 * nodes with the eval fanouts (else the training ones), counts all-reduced: correct[s] and
 * total[s] over every rank. Collective. */
int bw_dist_hmb_evaluate(burrow_dist *d, unsigned splits, int64_t correct[3], int64_t total[3]);
/* FNV-1a over the weights (host memory). */
uint64_t bw_dist_hmb_checksum(const burrow_dist *d);

/* For tests: the batch of these seeds (new target-type ids this rank owns, distinct; n may be
 * 0) of step `step` of epoch `epoch`, sampled and its rows fetched as an epoch does, through
 * the loader: *out valid until the next call. Collective. */
int bw_dist_hmb_load(burrow_dist *d, const int64_t *seeds, int64_t n, int64_t epoch, int64_t step,
		     bw_loaded *out);
/* For tests: relation r's row of node gid (a new id of r's dst type that this rank owns) as
 * this rank draws it for layer l of (epoch, step) under fanout fan: into out (room for its
 * degree), as new ids of r's src type; how many, or a negative status. Not collective. */
int64_t bw_dist_hmb_draw(burrow_dist *d, int64_t epoch, int64_t step, int l, int r, int fan, int64_t gid,
			 int64_t *out);
/* This rank's owned range of type t's new ids: [*first, *first + *n). */
void bw_dist_hmb_owned(const burrow_dist *d, int t, int64_t *first, int64_t *n);
/* This rank's owned training nodes (new target-type ids) and the typed view of the whole
 * graph the sampler sees (global counts; graphs not set). */
const int64_t *bw_dist_hmb_train(const burrow_dist *d, int64_t *n);
const burrow_hetero *bw_dist_hmb_hetero(const burrow_dist *d);
/* The training sampler's fanout of relation r at layer l (0: a relation the model does not
 * run there). */
int bw_dist_hmb_fanout(const burrow_dist *d, int l, int r);
/* The training seeds the steps so far took (count, sum, sum of squares, wrapping). */
void bw_dist_hmb_seen(const burrow_dist *d, uint64_t seen[3]);

#endif
