/* dist_mb.h: partition-parallel mini-batch training over bw_comm (dist_mb.c): each rank samples
 * batches from its own training nodes over the whole graph (a frontier node owned elsewhere
 * is expanded by its owner), fetches the input rows it does not hold from their owners, and
 * steps the replicated model with all-reduced gradients, every rank the same number of steps. */
#ifndef BURROW_DIST_MB_H
#define BURROW_DIST_MB_H

#include "dist.h"

#include "../../sampler/sampler_internal.h"

/* One sampled batch in new global ids, in burrow_batch's layout (include/burrow.h, above
 * burrow_block): gid = [ seeds | new in block L-1 | ... | new in block 0 ], block l's
 * destinations are gid[0, num_dst[l]) and its sources gid[0, num_src[l]); row i's sources
 * are indices[l][indptr[l][i] .. indptr[l][i+1]), local ids, increasing global id. The
 * sampler fills s (its numbering, sampler/sample.c); gid, indptr and indices point into it.
 * Every array is owned by the batch (it grows and is reused). */
typedef struct bw_mb_batch {
	bw_sampled s;                        /* the sampler's batch: nodes, indptr, indices */
	int num_layers;
	int64_t num_seeds, num_input;
	int64_t *gid;                        /* [num_input] new global ids (s.nodes) */
	int64_t num_dst[BURROW_MAX_LAYERS], num_src[BURROW_MAX_LAYERS];
	int64_t *indptr[BURROW_MAX_LAYERS];      /* [num_dst[l] + 1] (s.indptr[l]) */
	int32_t *indices[BURROW_MAX_LAYERS];     /* [indptr[l][num_dst[l]]] (s.indices[l]) */
	int32_t *labels;                     /* [num_seeds] */
	float *norm;                         /* [num_input] GCN norms 1/sqrt(deg + 1), whole-graph degrees */
	float *x;                            /* [num_input, D] input rows, once the fetch completed */
	size_t labels_cap, norm_cap, x_cap;

	/* the fetch in flight: rows this rank holds come from its store into x; the others
	 * arrive from their owners into rrows, grouped by owner, for positions fetch_pos */
	int64_t *lids;                       /* [num_input] store row of each input (0 for a remote one) */
	int64_t *fetch_pos;                  /* [n_fetch] positions in gid of the rows that arrive */
	int64_t n_fetch;
	float *rrows, *rnorm;                /* [n_fetch, D], [n_fetch] received */
	int64_t *sids;                       /* [n_serve] local ids of the rows this rank sends */
	int64_t n_serve;
	float *srows, *snorm;                /* [n_serve, D], [n_serve] sent */
	size_t lids_cap, fetch_cap, rrows_cap, rnorm_cap, sids_cap, srows_cap, snorm_cap;
	int *cnt;                            /* [4K]: send counts, send displs, recv counts, recv displs (rows) */
	int *cnt_f;                          /* [4K]: the same in floats (times D) */
	/* where the communicator moves buffers of a device (dist_mb.c, "on_dev"): the rows
	 * arrive in xs_dev after this rank's own rows, and one sum over a block of one edge
	 * per row (scat: row i's source is i, or n + k for the k-th fetched row) puts every
	 * input row in its place on the model's device */
	bw_dbuf xs_dev;                      /* [num_input + n_fetch, D] own rows, then the fetched ones */
	bw_dbuf srows_dev;                   /* [n_serve, D] srows on the device */
	bw_block scat;
	int64_t *scat_ip;                    /* [num_input + 1] */
	int32_t *scat_ind;                   /* [num_input] */
	size_t scat_ip_cap, scat_ind_cap;
	bw_comm_req req[2];                  /* rows (on the communicator), norms (on its host side) */
	int nreq;
	burrow_store_ticket *ticket;
	double post_t, done_t;               /* when the rows were posted, and seen complete (0: not yet) */
	bool pending;                        /* a fetch is in flight */
} bw_mb_batch;

/* Set up mini-batch mode on an open burrow_dist (d->o.train.full_graph false): the feature
 * store on the part's features, the training seeds, the sampler's scratch. Collective. */
int bw_dist_mb_open(burrow_dist *d);
void bw_dist_mb_close(struct bw_dist_mb *m);
/* One mini-batch epoch (burrow_dist_train_epoch dispatches here). Collective. */
int bw_dist_mb_epoch(burrow_dist *d, burrow_epoch_stats *st, burrow_comm_stats *cs);

/* Sample the batch of these seeds (new global ids this rank owns, distinct; n may be 0) for
 * step `step` of epoch `epoch`, and fetch its input rows and norms: on return *out holds
 * everything (valid until the next call). Collective: every rank calls it for the same
 * (epoch, step). For tests and tools. */
/* The key of the draws of (epoch, step, layer), the same on every rank: an owned node gid
 * with more neighbors than the fanout gets the sampler's draw (sampler/draw.h) over its row
 * of the part's CSR from the stream bw_key(key, gid). */
uint64_t bw_dist_mb_draw_key(uint64_t seed, int64_t epoch, int64_t step, int l);

int bw_dist_mb_load(burrow_dist *d, const int64_t *seeds, int64_t n, int64_t epoch, int64_t step,
		    const bw_mb_batch **out);
/* Whether mini-batch mode moves feature rows and gradients in buffers of the model's device
 * (a staged or NCCL communicator), not host buffers through MPI. */
bool bw_dist_mb_on_device(const burrow_dist *d);


#endif
