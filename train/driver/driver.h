/* driver.h: the training driver over the compute layer: sources of rows, the mini-batch
 * pipeline (sampler + feature store -> the model's device), the trainer behind
 * burrow_trainer_*, layer-wise inference and checkpoints. */
#ifndef BURROW_DRIVER_H
#define BURROW_DRIVER_H

#include "../compute/compute.h"
#include "../../graph/dataset_internal.h"
#include "../../sampler/sampler_internal.h"

#include <pthread.h>

/* ------------------------------------------------------------ rows (rows.c) */

/* A source of rows by id: the features (the feature store, or in memory in full-graph mode)
 * or a layer's embeddings (in memory, or spilled to a scratch npy file and read with pread). */
typedef struct bw_rows {
	int64_t num_rows, dim;
	const float *mem;    /* [num_rows, dim] when all rows are in memory as float32, else NULL */
	/* out [n, dim] = rows ids[0 .. n); ids need not be sorted or unique */
	int (*gather)(struct bw_rows *r, const int64_t *ids, int64_t n, float *out);
	/* where rows are read from disk (the store): start the gather into out (ids are
	 * copied; out must stay untouched until the wait), and wait for it (wait takes the
	 * ticket, once per submit that succeeded); NULL where gather is a copy */
	int (*submit)(struct bw_rows *r, const int64_t *ids, int64_t n, float *out, void **ticket);
	int (*wait)(struct bw_rows *r, void *ticket);
	void *ctx;
	int threads;         /* OpenMP threads of the copy (in-memory rows) */
} bw_rows;

/* Rows of an in-memory float32 matrix (borrowed), copied out with `threads` threads (0: default). */
void bw_rows_from_memory(bw_rows *r, const float *data, int64_t num_rows, int64_t dim, int threads);
/* Rows of a 2-D float32 or float16 npy file, read with pread on demand (f16 converted). */
int bw_rows_open_npy(bw_rows *r, const char *path);
/* Rows of a feature store opened with out_dtype float32 (borrowed): gathered synchronously,
 * or submitted and waited for. */
void bw_rows_from_store(bw_rows *r, burrow_store *s);
void bw_rows_close(bw_rows *r);

/* ------------------------------------------------------------ pipeline (pipeline.c) */

/* Make *x hold at least `need` floats of the device's host memory (pinned for a GPU),
 * growing it by a quarter more; its contents are not kept. */
int bw_host_reserve(const bw_device *dev, float **x, int64_t *cap, int64_t need);

/* One place of the mini-batch pipeline: a sampled batch and the gather of its input rows. */
typedef struct bw_slot {
	burrow_batch *batch;          /* held from the sampler; NULL when empty */
	burrow_store_ticket *ticket;  /* its rows' gather while in flight, else NULL */
	float *x;                     /* [num_input, D] the gathered rows (owned, grows) */
	int64_t x_cap;                /* floats allocated */
	int status;                   /* the loader's error for this batch (0: none) */
	char msg[512];                /* its message */
	/* on a device whose memory is not host memory, the loader also puts the batch there,
	 * on the pipeline's copy stream: its rows, its labels and its blocks (prepared), and
	 * records `ready` after them; the compute stream waits for it */
	bw_dbuf x_dev;                /* [num_input, D] */
	int32_t *labels;              /* [seeds] host, then labels_dev */
	bw_dbuf labels_dev;
	float *norm;                  /* [num_input] GCN norms (host), read by the blocks */
	int64_t labels_cap, norm_cap;
	bw_block blk[BURROW_MAX_LAYERS];  /* over the batch's arrays; released when the slot is reused */
	int nblk;
	bw_event *ready;
} bw_slot;

/* The pipeline: with depth P > 0 a loader thread takes batches from the sampler (whose
 * producers sample ahead) and submits their gathers, keeping up to P batches ready ahead
 * of the one computing; batch k lives in slot k % (P + 1). P = 0 does it all in line. */
typedef struct bw_pipe {
	int depth;                    /* P */
	int nslots;                   /* P + 1 */
	bw_slot *slots;               /* [nslots] (owned) */
	pthread_t thread;
	bool running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool sync_ready;              /* mu and cv initialized */
	/* the current epoch, under mu */
	int64_t num;                  /* batches in it */
	int64_t loaded;               /* batches [0, loaded) are in their slots (or failed) */
	int64_t consumed;             /* batches [0, consumed) are done: their slots may be reused */
	bool stop;                    /* the trainer gave up on the epoch */
	bw_stream *copy;              /* host -> device copies (a device whose memory is not host memory) */
} bw_pipe;

/* ------------------------------------------------------------ trainer (trainer.c, pipeline.c, infer.c, checkpoint.c) */


struct burrow_trainer {
	burrow_train_opts o;
	burrow_dataset *ds;               /* borrowed */
	const burrow_dataset_info *info;
	const burrow_csr *graph;          /* the dataset's, borrowed */
	int64_t graph_keep;               /* resident file bytes past which the graph's mapped pages
					   * are dropped after a batch (bw_trainer_trim_graph) */
	const int32_t *labels;            /* [N], borrowed */
	int8_t *split_of;                 /* [N]: enum burrow_split of each node, -1 none (owned) */
	int64_t *drawn;                   /* opts.split: the drawn split, train | valid | test (owned), or NULL */
	int64_t drawn_n[3];
	uint64_t split_seed;              /* the seed drawn was drawn from (opts.seed at open) */
	bw_backend be;
	bw_model *model;
	bw_optim *optim;
	int epoch;                        /* epochs trained */
	burrow_best best;
	float *best_params;               /* [num_params] host copy of the best epoch's weights (owned), or NULL */
	int best_params_epoch;            /* the epoch they are from; -1 none */
	burrow_store *store;              /* the features, gathered as float32 (owned) */
	size_t cache_budget;              /* bytes given to the store's cache */
	float *feat_buf;                  /* full-graph mode: every row, read through the store (owned host memory) */
	bw_tensor feat;                   /* [N, D] feat_buf on the model's device; empty in mini-batch mode */
	bw_rows feat_rows;                /* the features by id: the store, or feat_buf */
	bw_sparse feat_sp;                /* full-graph mode: feat_buf's sparse copy when the first layer
					   * multiplies it sparse (opts.sparse_input; feat.sp points here) */
	bw_transposed feat_tr;            /* full-graph mode: feat_buf transposed, when the backend multiplies
					   * X^T G faster from it (feat.tr points here) */
	bw_dbuf labels_dev;               /* [N] labels on the model's device (full-graph mode) */
	bw_dbuf train_dev;                /* the training split's ids on the model's device (full-graph mode) */
	bw_dbuf loss_dev;                 /* one bw_loss on the model's device */
	bw_stage stage;                   /* host views of device memory (evaluation, embed) */
	float *gcn_norm;                  /* [N] 1/sqrt(deg + 1) from the whole graph (GCN only) */
	bw_block full;                    /* the whole graph as one block (full-graph training) */
	bool full_ready;
	bw_tensor glogits;                /* dL/dlogits of a step */
	/* full-graph mode: evaluation's layer 0 over the whole graph is the next training
	 * step's layer 0 (the same weights, features and graph), so it keeps its output under
	 * the weights' version and the step takes it (bw_model_infer_layer_keep) */
	bool reuse_layer0;                /* on at open; tests turn it off to compare */
	uint64_t wversion;                /* the weights' version, >= 1: bumped by every optimizer step */
	int32_t *map;                     /* [N] global -> chunk-local ids of layer-wise inference, -1 unset */
	/* full-graph mode, the graph in one inference chunk: each layer's output over the whole
	 * graph, on the device, is the next layer's input (no download, no gather); kept between
	 * evaluations so that an epoch allocates nothing */
	bw_tensor infer_z[2];
	char *scratch_dir;                /* owned copy of opts.scratch_dir, NULL = $TMPDIR or /tmp */
	uint64_t spill_seq;               /* numbers scratch files */
	/* mini-batch mode */
	burrow_sampler *sampler;          /* opened at the first epoch, for the seed then in force */
	char sampler_dev[24];             /* where it samples: "cpu" or "cuda:N" (opts.sampler_device resolved) */
	uint64_t sampler_seed;
	bw_pipe pipe;
	int32_t *mb_labels;               /* [seeds] labels of a batch's output rows (host) */
	bw_dbuf mb_labels_dev;            /* the same on the model's device */
	bw_tensor mb_x;                   /* a batch's input rows on the model's device (a view of its slot on the CPU) */
	float *mb_norm;                   /* [num_input] GCN norms of a batch's nodes */
	int64_t mb_labels_cap, mb_norm_cap;
};

/* One optimizer step on a batch: forward (dropout on), loss over the batch's loss rows,
 * backward, update. A non-finite loss is BURROW_E_RANGE naming the batch's epoch and index
 * (1-based), before any update. The sampler + store pipeline calls this per batch. */
int bw_trainer_step(burrow_trainer *t, const bw_batch *b, double *loss, int64_t *counted, int64_t *correct);
/* The key under which layer 0's output over the whole graph with the weights now in place
 * may be kept and taken (full-graph mode, t->reuse_layer0, a model that allows it); 0: none. */
uint64_t bw_trainer_layer0_key(const burrow_trainer *t);

/* The nodes of split s (enum burrow_split): the drawn split under opts.split, else the
 * dataset's; NULL when empty. */
const int64_t *bw_trainer_split(const burrow_trainer *t, int s, int64_t *n);
/* Copy the model's weights into t->best_params, as the best epoch's (outputs.c). */
int bw_trainer_keep_best(burrow_trainer *t);

/* ------------------------------------------------------------ checkpoints (checkpoint.c) */

/* What a checkpoint holds, as pointers into its owner (a trainer, a distributed run). */
typedef struct bw_ck_state {
	bw_model *model;
	bw_optim *optim;
	uint64_t *seed;
	double dropout;
	int *epoch;
	burrow_best *best;
	const char *dataset;   /* recorded, not checked */
	int64_t num_nodes;     /* recorded, not checked */
	/* the random split the model trains on (opts.split, drawn from split_seed): saved, and
	 * load refuses a checkpoint whose split differs; NULL (distributed: parts carry their
	 * splits) writes and checks none */
	const double *split;   /* [3] fractions, all 0: the dataset's splits */
	uint64_t split_seed;
} bw_ck_state;
/* Write s to path atomically; load restores it (the model's shape and the optimizer must
 * match; nothing changes unless the whole file is read and verified). */
int bw_checkpoint_save(const bw_ck_state *s, const char *path);
int bw_checkpoint_load(bw_ck_state *s, const char *path);

/* The compute's view of a sampled batch whose input rows are x ([num_input, D], host
 * memory from bw_device_host_alloc, borrowed; on the model's device through the device layer):
 * blk[0 .. L) over the sampler's blocks, b over them; the seeds' labels, and for GCN the
 * norms from the whole graph's degrees (one per input node: every block's nodes are a
 * prefix of the input nodes), live in the trainer until the next call. Dropout is keyed by
 * (t->epoch, index). Release each blk[l] after use. */
int bw_batch_from_sample(burrow_trainer *t, const burrow_batch *sb, float *x, int64_t index, bw_batch *b,
			 bw_block *blk);
/* One mini-batch epoch through the pipeline (pipeline.c); fills es except epoch. */
int bw_trainer_minibatch_epoch(burrow_trainer *t, burrow_epoch_stats *es);
/* The sampler's after-batch hook (t a burrow_trainer *): drop the graph's mapped pages once
 * the process's resident file bytes pass t->graph_keep. */
void bw_trainer_trim_graph(void *t);
/* Stop the loader, complete every gather in flight, hand every batch back, free the slots
 * and the sampler. */
void bw_pipe_close(burrow_trainer *t);

/* Layer-wise full-neighbor inference over all nodes in chunks of destination rows, layers
 * 0 .. last_layer (t->o.layers - 1 for the logits); each chunk of last_layer's output (rows [r0, r0 + z->rows)) goes to sink. Hidden layers'
 * embeddings stay in memory or spill to scratch npy files under opts.mem_bytes. */
typedef int (*bw_infer_sink)(void *ctx, int64_t r0, const bw_tensor *z);
int bw_trainer_infer(burrow_trainer *t, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes);
/* The same, stopping after layer `layers` (1-based, <= the model's): its output (a hidden
 * layer's after its activation, as the next layer reads it) goes to sink. */
int bw_trainer_infer_upto(burrow_trainer *t, int layers, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes);
/* Evaluation with sampled neighborhoods (opts.eval_fanout): correct and labelled counts of
 * the splits whose bit is set in `splits` (bit s for split s; the others get 0 and 0), one
 * or two batches in memory at a time. */
int bw_trainer_eval_sampled(burrow_trainer *t, unsigned splits, int64_t correct[3], int64_t total[3]);
/* t->full, the whole graph as one block (its local ids are the dataset's), built and
 * prepared once. */
int bw_trainer_full_block(burrow_trainer *t);
/* The splits evaluation scores: opts.eval_splits, or its default when 0 (burrow.h). */
unsigned bw_trainer_eval_splits(const burrow_trainer *t);

#endif /* BURROW_DRIVER_H */
