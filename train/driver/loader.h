/* loader.h: the batch loader: one pipeline for every way of training and evaluating on
 * sampled batches. It owns the slots in flight, the thread that fills them and the copy
 * stream; a producer (sampler/producer.h) fills a slot's batch, a source of rows (bw_rows:
 * the feature store, rows in memory) its input rows, and one function turns a filled slot
 * into the compute batch on the model's device, for host and device memory alike.
 *
 * Batch k lives in slot k % (depth + 1). With a thread, the loader keeps up to `depth`
 * batches loaded ahead of the one computing; without one (in line: a producer or a source
 * of rows that must run on the caller's thread, evaluation's, or distributed training's
 * collective sampler and remote fetch), bw_loader_next loads the batches up to k + depth
 * itself, then waits for batch k's rows and, on a device, stages batch k there (so loading
 * ahead never waits for a read). A slot is refilled only after the batch it held is done:
 * on a device, after the compute stream's work recorded at bw_loader_done completed, so a
 * step still running on the GPU never sees its inputs overwritten. Batches depend only on
 * the producer; depth, thread, cache and engine change timings, never results.
 *
 * The source of rows may bring the batch's GCN norms with its rows (bw_rows.norms: a
 * remote fetch brings other ranks'), and may put the rows on the device itself
 * (bw_rows.on_device: rows that arrive in device memory, put in order by the source on the
 * compute stream; in line only); bw_loader_poll drives the reads of the batches loaded
 * ahead while a step runs. */
#ifndef BURROW_LOADER_H
#define BURROW_LOADER_H

#include "../compute/compute.h"
#include "../../sampler/producer.h"
#include "rows.h"
#include "../compute/hmodel.h"

typedef struct bw_loader_cfg {
	const bw_device *dev;     /* the model's device (borrowed) */
	bw_stream *compute;       /* the stream the batches are computed on (borrowed; NULL: default) */
	int depth;                /* batches loaded ahead of the one computing, >= 0 */
	bool thread;              /* a loader thread loads them (else the caller, in bw_loader_next) */
	int num_layers;           /* blocks per batch */
	int64_t dim;              /* input row width */
	int64_t type_dim[BURROW_MAX_TYPES]; /* typed batches: each type's row width (0: the caller's rows) */
	const int32_t *labels;    /* each node's label (borrowed): node id's is labels[id - label_base],
				     uploaded per batch for its seeds; NULL: none */
	int64_t label_base;       /* the first node id labels covers (a rank's part: its first id), else 0 */
	const float *norm;        /* [N] GCN norms from the whole graph's degrees (borrowed), or NULL:
				     those the source of rows brings (bw_rows.norms), else none */
	bool blocks;              /* the model reads the blocks (not an MLP): prepare them (and upload on a device) */
	bool transpose;           /* prepare each block's transpose (a backward pass runs) */
	bool gcn;                 /* prepare GCN norms (from `norm` when set) */
	/* edge weights (--edge-weight): block edge e's weight is column ew_col of row
	 * edge_ids[e] of the graph's edge features (the batches' blocks must carry edge ids:
	 * burrow_sampler_opts.edge_ids), gathered per batch on the host */
	const void *edge_feat;    /* [E, ew_dim] of ew_dtype (F32 or F16): edge_features.npy's data, mapped
				     (borrowed); NULL: neither weights nor feature rows */
	int64_t ew_dim;
	int64_t ew_col;           /* in [0, ew_dim) */
	burrow_dtype ew_dtype;
	bool ef_rows;             /* edge_feat gives each block's edge feature rows, float32 (GAT's edge
				     term), instead of its weights */
	bool rows_unread;         /* batches of nodes on a host-memory device: the compute never reads the
				     dense input rows (it builds its own copy from the batch's ids: the sparse
				     first layer's, bw_trainer_sparse_x), so the source of rows is not asked
				     for them and b.x holds whatever its buffer held */
	bool sampler_weights;     /* without edge_feat: a block the sampler weighed (LABOR-*'s
				     burrow_block.edge_weight) is aggregated with its weights (borrowed) */
} bw_loader_cfg;

typedef struct bw_loader bw_loader;

/* One loaded batch, as the compute takes it: b's blocks, rows and labels are on cfg.dev
 * (the caller sets b.epoch, b.index and the loss rows). Valid until bw_loader_done. */
typedef struct bw_loaded {
	int64_t k;                   /* its position in the sequence */
	const burrow_batch *sb;      /* the producer's batch (ids, seeds), or NULL */
	bw_batch b;
	const burrow_typed_batch *tb;/* or its typed batch, and what the compute takes of it: the rows of a
					type without a source are left empty for the caller */
	bw_hbatch hb;
	double load_s;               /* the caller's time waiting for the batch to be loaded (or loading it) */
	double io_wait_s;            /* and then for its rows (in line on a device: and its staging) */
} bw_loaded;

int bw_loader_open(bw_loader **out, const bw_loader_cfg *cfg);
/* Stops the sequence in progress; NULL is fine. */
void bw_loader_close(bw_loader *ld);
/* Start a sequence of n batches of p (copied) with rows from rows (borrowed until the
 * sequence stops); the last one must have stopped. A source of rows with on_device needs
 * the loader in line (no thread); one with norms or on_device, a submit. */
int bw_loader_start(bw_loader *ld, const bw_producer *p, bw_rows *rows, int64_t n);
/* The same for a producer of typed batches (p.next_typed) with each type's source of rows
 * (rows[t] borrowed; NULL: the caller puts type t's rows in place, e.g. learned
 * embeddings); rows of type t are cfg.type_dim[t] wide. */
int bw_loader_start_typed(bw_loader *ld, const bw_producer *p, bw_rows *const *rows, int num_types, int64_t n);
/* The next batch of the sequence (in order), loaded and its rows in place. An error of the
 * loader for this batch is returned with its message. */
int bw_loader_next(bw_loader *ld, bw_loaded *out);
/* In line: drive the reads in flight of the batches loaded ahead (bw_rows.poll) without
 * blocking, between a step's phases; 0 and nothing done with a thread or a source without
 * poll. */
int bw_loader_poll(bw_loader *ld);
/* The batch taken last is done: its slot may be refilled once the work queued so far on
 * cfg.compute (its step) has completed. */
int bw_loader_done(bw_loader *ld);
/* End the sequence: stop the thread, complete the reads in flight, wait for the steps
 * still running on the device, hand every batch back. Safe to call twice. */
void bw_loader_stop(bw_loader *ld);

#endif /* BURROW_LOADER_H */
