/* dist.h: partition-parallel full-graph training over bw_comm (comm.h): one rank per part of a parts
 * directory (burrow partition), model replicated, gradients all-reduced, halo rows
 * exchanged every layer (halo.c) while inner rows aggregate. */
#ifndef BURROW_DIST_H
#define BURROW_DIST_H

#include "../driver/driver.h"
#include "halo.h"

struct burrow_dist {
	burrow_dist_opts o;
	bw_comm *comm;                 /* the world over buffers of be.dev (--comm): halo rows, gradients */
	bw_comm *world;                /* the world over host buffers (MPI): losses, counts, checkpoints */
	int rank, K;
	int threads;                   /* compute threads of this rank (burrow_dist_threads) */
	int local_rank;                /* this rank's place among its node's ranks (picks its GPU) */
	int comm_kind;                 /* enum burrow_comm_kind this run uses (auto resolved) */
	burrow_parts *parts;
	burrow_part *part;
	const burrow_part_info *pi;
	int64_t n_own, n_halo, n_loc;  /* owned rows, halo rows, their sum */
	int64_t classes;
	bw_backend be;
	bw_model *model;
	bw_optim *optim;
	bw_halo *halo;
	bw_block blk;                  /* owned rows over owned + halo sources, split at the halo */
	float *norm;                   /* [n_loc] GCN norms from the global degrees */
	bw_tensor x0;                  /* [n_loc, D] features of owned and halo nodes */
	bw_sparse x0_sp;               /* full-graph mode: x0's sparse copy when layer 0 multiplies it
					  sparse (opts.train.sparse_input; x0.sp points here) */
	bw_tensor in[BURROW_MAX_LAYERS];   /* layer l > 0 inputs: owned rows, then halo rows */
	bw_tensor stage[BURROW_MAX_LAYERS];/* stale mode: the exchange of this epoch lands here */
	bool stale_ready[BURROW_MAX_LAYERS];
	bool stale_pending[BURROW_MAX_LAYERS]; /* stage[l] holds halo rows for the next epoch */
	bw_tensor gbuf[2];             /* gradient ping-pong, [n_loc, d] */
	bw_tensor glogits;
	const int32_t *labels;         /* [n_loc], -1 on halo rows (host) */
	bw_dbuf labels_dev;            /* the same on the device */
	bw_dbuf train_dev;             /* the training split's local ids on the device */
	bw_dbuf loss_dev;              /* one bw_loss on the device */
	bw_dbuf pred;                  /* [n_own] argmax of evaluation on the device */
	bw_stage host_view;            /* host views of device memory (all-reduce, broadcast, evaluation) */
	const int64_t *split[3];       /* local ids of each split (owned) */
	int64_t split_n[3];
	int64_t global_train;          /* training nodes over all ranks */
	int epoch;
	burrow_best best;
	bw_habits habits;              /* early stopping and the lr schedule (as the trainer's) */
	double reduce_s;               /* seconds in gradient and loss all-reduces (summed) */
	struct bw_dist_mb *mb;         /* mini-batch mode's state (dist_mb.c); NULL in full-graph mode */
	bool link;                     /* link prediction (a part with edge splits, no labels) */
	struct bw_dist_link *lk;       /* its state (dist_link.c); NULL otherwise */
	bool typed;                    /* typed parts: the model, its rows and batches are hmb's */
	struct bw_dist_hmb *hmb;       /* typed mini-batch training's state (dist_hmb.c), or NULL */
};

/* Link prediction in mini-batch mode (dist_link.c): open after bw_dist_mb_open; an epoch and an
 * evaluation (collective), as burrow_dist_train_epoch / burrow_dist_evaluate dispatch them. */
int bw_dist_link_open(burrow_dist *d);
void bw_dist_link_close(struct bw_dist_link *lk);
int bw_dist_link_epoch(burrow_dist *d, burrow_epoch_stats *es, burrow_comm_stats *cs);
int bw_dist_link_evaluate(burrow_dist *d, burrow_eval_stats *ev);

/* Forward and backward over the whole partitioned graph: logits of the owned rows in
 * *logits, all-reduced gradients in the model (no optimizer step). training turns dropout
 * on (keyed by epoch and layer). loss and acc are the global training loss and accuracy. */
int bw_dist_forward_backward(burrow_dist *d, bool training, const bw_tensor **logits, double *loss, double *acc);
/* Sum the model's gradients over comm in place: on the device when comm moves the model's
 * device buffers (after the device's compute work so far), else through a host view of them
 * (stage) over comm's host communicator. Collective. */
int bw_dist_allreduce_grads(bw_model *m, bw_comm *comm, bw_stage *stage);
/* The gradient all-reduce in buckets, one per layer, posted as each layer's backward
 * finishes (the last layer first) so that it travels while the layers below run backward;
 * the gradients themselves are summed in place, so comm must move the model's device
 * buffers (MPI on the CPU, staged or NCCL on a GPU). Post layer l
 * once its parameter gradients are final; wait before the optimizer step (and on an error
 * path, so that what every rank posted completes). */
typedef struct bw_grad_buckets {
	bw_comm_req req[BURROW_MAX_LAYERS];
	int n;
} bw_grad_buckets;
void bw_grad_buckets_init(bw_grad_buckets *g);
int bw_grad_buckets_post(bw_grad_buckets *g, bw_model *m, int l, bw_comm *comm);
int bw_grad_buckets_wait(bw_grad_buckets *g);
/* Forward only, no dropout: logits of the owned rows. */
int bw_dist_forward(burrow_dist *d, const bw_tensor **logits);

#endif
