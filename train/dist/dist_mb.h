/* dist_mb.h: partition-parallel mini-batch training over bw_comm (dist_mb.c): each rank samples
 * batches from its own training nodes over the whole graph (a frontier node owned elsewhere
 * is expanded by its owner), fetches the input rows it does not hold from their owners, and
 * steps the replicated model with all-reduced gradients, every rank the same number of steps. */
#ifndef BURROW_DIST_MB_H
#define BURROW_DIST_MB_H

#include "dist.h"
#include "../driver/loader.h"

/* One batch as bw_dist_mb_load hands it out: the sampler's batch in new global ids
 * (burrow_batch's layout: input_ids = [ seeds | new in block L-1 | ... | new in block 0 ],
 * each row's sources in increasing global id), its input rows as the model reads them, and
 * their GCN norms from the whole graph's degrees. Valid until the next call. */
typedef struct bw_mb_view {
	const burrow_batch *sb;
	const float *x;          /* [num_input, D] host memory */
	const float *norm;       /* [num_input] host memory; NULL for models other than GCN */
	int64_t n_fetch;         /* input rows that arrived from other ranks */
} bw_mb_view;

/* Set up mini-batch mode on an open burrow_dist (d->o.train.full_graph false): the feature
 * store on the part's features, the training seeds, the sampler's scratch. Collective. */
int bw_dist_mb_open(burrow_dist *d);
void bw_dist_mb_close(struct bw_dist_mb *m);
/* One mini-batch epoch (burrow_dist_train_epoch dispatches here). Collective. */
int bw_dist_mb_epoch(burrow_dist *d, burrow_epoch_stats *st, burrow_comm_stats *cs);

/* The key of the draws of (epoch, step, layer), the same on every rank: an owned node gid
 * with more neighbors than the fanout gets the sampler's draw (sampler/draw.h) over its row
 * of the part's CSR from the stream bw_key(key, gid). */
uint64_t bw_dist_mb_draw_key(uint64_t seed, int64_t epoch, int64_t step, int l);

/* Sample the batch of these seeds (new global ids this rank owns, distinct; n may be 0) for
 * step `step` of epoch `epoch`, and fetch its input rows and norms, through the batch loader
 * as an epoch does: on return *out holds everything (valid until the next call, or the next
 * epoch). Collective: every rank calls it for the same (epoch, step). For tests and tools. */
int bw_dist_mb_load(burrow_dist *d, const int64_t *seeds, int64_t n, int64_t epoch, int64_t step,
		    bw_mb_view *out);
/* Whether mini-batch mode moves feature rows and gradients in buffers of the model's device
 * (a staged or NCCL communicator), not host buffers through MPI. */
bool bw_dist_mb_on_device(const burrow_dist *d);

/* Link training's epoch on the loader: steps batches whose seeds (new global ids, any rank's,
 * distinct) are seq[off[k] .. off[k+1]) (off [steps + 1]; a batch may be empty), sampled with
 * the key of (epoch, k), each loaded batch handed to fn (step k). Collective. */
typedef int (*bw_mb_step_fn)(void *ctx, bw_loaded *lb, int64_t k);
int bw_dist_mb_run(burrow_dist *d, const int64_t *seq, const int64_t *off, int64_t steps, int64_t epoch,
		   bw_mb_step_fn fn, void *ctx);
/* The model's gradients summed over the ranks (mini-batch mode: on the model's device with a
 * staged or NCCL communicator, else through host memory). Collective. */
int bw_dist_mb_reduce_grads(burrow_dist *d);

/* ------------------------------------------------------------ typed sides (dist_hmb.c)
 * The machinery above over one node type's book: a relation's expansion (its dst type's
 * book and rows, its src type's ids) or a type's rows (the type's store, the rest fetched
 * from the owners). Every call on a side is collective over comm, in the same order. */
typedef struct bw_mb_side_cfg {
	bw_comm *comm;                 /* a host communicator (MPI; borrowed) */
	int K, rank;
	const int64_t *offsets;        /* [K+1] the (dst) type's book (borrowed) */
	int64_t first, n_own, n_halo;  /* this rank's (dst) type's owned range and halo */
	const int64_t *halo_ids;       /* [n_halo] ascending (borrowed) */
	int64_t sfirst, sn_own;        /* a relation's src type: owned range and ... */
	const int64_t *shalo;          /* ... halo (local ids past sn_own), borrowed */
	const int64_t *ip;             /* a relation's CSR over local ids (dst rows, src ids), borrowed */
	const int32_t *ind;
	burrow_store *store;           /* a type's rows: owned, then halo (borrowed) */
	int64_t dim;
} bw_mb_side_cfg;
int bw_mb_side_open(struct bw_dist_mb **out, const bw_mb_side_cfg *c);
/* bw_dist_mb_close frees a side too (not what it borrows). */
/* A relation's rows of the destinations nodes[0, nd) (new ids of the dst type) under fan,
 * rows drawn from bw_key(lkey, node) by their owners, as new ids of the src type, each row
 * in increasing id (valid until the next call). Collective. */
int bw_mb_side_expand(struct bw_dist_mb *m, int fan, uint64_t lkey, const int64_t *nodes, int64_t nd,
		      const int64_t **eip, const int64_t **eids);
/* The draw of owned node gid's row here (not collective): its picks into out (room for
 * the count it returns when out is NULL), or a negative status. */
int64_t bw_mb_side_draw(struct bw_dist_mb *m, int64_t gid, int fan, uint64_t lkey, int64_t *out);
/* The type's rows as a source for the loader (collective: submitted also for no rows). */
void bw_mb_side_rows(struct bw_dist_mb *m, bw_rows *out);
/* Add the side's seconds (sampling, id exchanges, fetch on the wire, fetch exposed, store
 * waits) to t; reset them when asked. */
void bw_mb_side_times(struct bw_dist_mb *m, double t[5], bool reset);
/* Rows that arrived from other ranks for the last batch submitted. */
int64_t bw_mb_side_fetched(const struct bw_dist_mb *m);

#endif
