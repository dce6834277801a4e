/* driver.h: the training driver over the compute layer: the trainer behind burrow_trainer_*
 * (its mini-batch epochs and sampled evaluation run on the batch loader, loader.h; its
 * gathers go through sources of rows, rows.h), layer-wise inference and checkpoints. */
#ifndef BURROW_DRIVER_H
#define BURROW_DRIVER_H

#include "../compute/compute.h"
#include "../../graph/dataset_internal.h"
#include "../../sampler/sampler_internal.h"
#include "loader.h"
#include "rows.h"
#include "htrain.h"
#include "../compute/scorer.h"

typedef struct bw_ltrain bw_ltrain;
typedef struct bw_emb bw_emb;

/* ------------------------------------------------------------ the automatic thread count (autothreads.c) */

/* Full-graph epochs on the CPU: the count asked (--threads, OMP_NUM_THREADS, every core) or
 * one, whichever measured faster lately (off, most 0, at one thread, on a GPU, or when
 * OMP_DYNAMIC=false pins the count). */
typedef struct bw_auto_threads {
	int most, most_gemm; /* the backend's threads and GEMM threads as opened */
	int cur;             /* the count between probes */
	int epochs;          /* epochs measured */
	int next_probe;      /* the epoch (of those) that runs at the other count */
	int interval;        /* epochs from a probe to the next */
	double mean_s[2];    /* running mean epoch time at most [0] and at one thread [1]; 0: none yet */
} bw_auto_threads;

void bw_auto_threads_init(bw_auto_threads *a, const bw_backend *be);
/* The count for the next epoch (0: leave the backend's). */
int bw_auto_threads_next(const bw_auto_threads *a);
/* Set be's threads (and GEMM threads, never above their opened count) to `threads`. */
void bw_auto_threads_set(const bw_auto_threads *a, bw_backend *be, int threads);
/* An epoch at `threads` took `seconds`. */
void bw_auto_threads_done(bw_auto_threads *a, int threads, double seconds);

/* ------------------------------------------------------------ training habits (habits.c) */

/* Early stopping and the learning-rate schedule's state, kept by the trainer and by
 * distributed training alike and carried in checkpoints (resume continues it exactly). */
typedef struct bw_habits {
	double base_lr;         /* opts.lr: the schedule's start */
	double lr;              /* the rate in force: the schedule's for the epoch, plateau's reductions */
	int stale;              /* evaluations in a row without a better valid metric (early stopping) */
	int plateau_bad;        /* plateau: the same since the last improvement or reduction */
} bw_habits;

/* The habits' options (patience, schedule, gamma, step, lr_min): 0, or BURROW_E_INVAL. */
int bw_habits_check(const burrow_train_opts *o);
void bw_habits_init(bw_habits *h, const burrow_train_opts *o);
/* The learning rate of the epoch that follows `epoch` epochs trained (h->lr becomes it). */
double bw_habits_epoch_lr(bw_habits *h, const burrow_train_opts *o, int epoch);
/* An evaluation scored valid (-1: no valid split, not counted); improved: it is the new best. */
void bw_habits_evaluated(bw_habits *h, const burrow_train_opts *o, double valid, bool improved);
/* Early stopping's verdict. */
bool bw_habits_stop(const bw_habits *h, const burrow_train_opts *o);

/* ------------------------------------------------------------ trainer
 * Calls go one way: trainer.c -> outputs.c -> infer.c -> state.c -> loader.c, rows.c;
 * checkpoint.c -> outputs.c (the best weights) and opts.c (the options' names). */

struct burrow_trainer {
	burrow_train_opts o;
	burrow_dataset *ds;               /* borrowed */
	const burrow_dataset_info *info;
	const burrow_csr *graph;          /* the dataset's, borrowed */
	int64_t graph_keep;               /* resident file bytes past which the graph's mapped pages
					   * are dropped after a batch (bw_trainer_trim_graph) */
	const int32_t *labels;            /* [N], borrowed (NULL for a multi-label task) */
	int task;                         /* opts.task resolved: NODE, MULTILABEL or LINK */
	const int8_t *mlabels;            /* multi-label: [N, tasks] 1, 0, -1 unknown, borrowed; else NULL */
	int64_t tasks;                    /* multi-label: T (the model's output width); else 0 */
	int8_t *ml_batch;                 /* multi-label, mini-batch: a batch's seeds' labels [seeds, T] (owned) */
	size_t ml_batch_cap;
	float *ml_grad;                   /* multi-label on a device: the loss's gradient on the host (owned) */
	size_t ml_grad_cap;
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
	bw_rows feat_rows;                /* the features by id: the store, or feat_buf (normalized
					   * under opts.normalize_features) */
	bw_rows store_rows;               /* opts.normalize_features, mini-batch mode: the store's rows
					   * that feat_rows normalizes */
	bw_habits habits;                 /* early stopping and the lr schedule */
	bw_sparse feat_sp;                /* full-graph mode: feat_buf's sparse copy when the first layer
					   * multiplies it sparse (opts.sparse_input; feat.sp points here) */
	bool sparse_rows;                 /* mini-batch mode: the first layer multiplies each batch's input
					   * rows sparse (opts.sparse_input, decided at open: bw_trainer_sparse_x) */
	bw_sparse rows_sp;                /* mini-batch mode: the sparse copy of the batch computing (its
					   * arrays reused from batch to batch) */
	bw_sparse feat_csr;               /* mini-batch mode, sparse rows: every row's non-zeros (no
					   * transpose) when they fit, which the batches' copies gather */
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
	bw_loader *loader;                /* the epochs' batches (opened with the sampler) */
	bw_htrain *typed;                 /* a typed dataset's trainer (owned): everything above but the
					   * options, the dataset, the backend, epoch and best is unused */
	bw_ltrain *link;                  /* link prediction's side (ltrain.c, owned), or NULL: the model is
					   * its encoder (output hidden wide), labels and node splits unused */
	bw_emb *emb;                      /* learned input embeddings of a dataset without features (embed.c,
					   * owned), or NULL: feat_rows reads its table */
	/* edge weights (opts.edge_weight): edge_features.npy mapped, and layer-wise inference's
	 * weights of one chunk */
	bw_npy_map ew_map;
	float *ew_chunk;                  /* [chunk edges] (owned) */
	int64_t ew_chunk_cap;
	/* GAT's edge features (bw_trainer_gat_edges): ew_map as well; layer-wise inference's rows of
	 * one chunk and the full graph's when edge_features.npy is not float32, the full graph's
	 * weights (opts.edge_weight) */
	bool gat_edges;
	float *ef_chunk;                  /* [chunk edges, edge_feat_dim] (owned), float16 datasets only */
	int64_t ef_chunk_cap;
	float *ef_full;                   /* [E, edge_feat_dim] (owned), float16 datasets only */
	float *ew_full;                   /* [E] (owned) */
	/* burrow_trainer_count_ops: the training epochs' ops, counted while count_ops (t->be.count
	 * points at ops during a training epoch, NULL otherwise), and those epochs' steps */
	bool count_ops;
	bw_op_count ops;
	int64_t ops_batches;
	double ops_compute_s;
	bw_auto_threads auto_threads;     /* full-graph epochs' thread count at the default */
};

/* The loader's edge-weight and edge-feature settings of t (none without opts.edge_weight nor
 * GAT's edge features) into *c. */
void bw_trainer_edge_weights(const burrow_trainer *t, bw_loader_cfg *c);
/* Does t's GAT read edge features (opts.gat_edge_features, a dataset with them, a node task)? */
bool bw_trainer_gat_edges(const burrow_trainer *t);
/* Whether the training batches' LABOR-* weights feed the aggregation: --sampler labor-star with
 * SAGE's mean on a backend with weighted aggregation (elsewhere LABOR-* picks, unweighted). */
bool bw_trainer_star_weights(const burrow_trainer *t);
/* The edge features of CSR entries [e0, e0 + n) as float32 rows [n, edge_feat_dim]: the mapped
 * file itself when it is float32, else converted into *buf (grown, owned by t; *cap its floats). */
int bw_trainer_edge_rows(burrow_trainer *t, int64_t e0, int64_t n, float **buf, int64_t *cap, const float **rows);

/* ------------------------------------------------------------ the trainer's shared state (state.c) */

/* The nodes of split s (enum burrow_split): the drawn split under opts.split, else the
 * dataset's; NULL when empty. */
const int64_t *bw_trainer_split(const burrow_trainer *t, int s, int64_t *n);
/* The key under which layer 0's output over the whole graph with the weights now in place
 * may be kept and taken (full-graph mode, t->reuse_layer0, a model that allows it); 0: none. */
uint64_t bw_trainer_layer0_key(const burrow_trainer *t);
/* The sampler's after-batch hook (t a burrow_trainer *): drop the graph's mapped pages once
 * the process's resident file bytes pass t->graph_keep. */
void bw_trainer_trim_graph(void *t);
/* t->full, the whole graph as one block (its local ids are the dataset's), built and
 * prepared once. */
int bw_trainer_full_block(burrow_trainer *t);
/* The splits evaluation scores: opts.eval_splits, or its default when 0 (burrow.h). */
unsigned bw_trainer_eval_splits(const burrow_trainer *t);

/* The feature cache's budget under o for features of `full` bytes (trainer.c). */
size_t bw_trainer_cache_budget(const burrow_train_opts *o, int threads, size_t full);
/* BURROW_E_UNSUPPORTED naming what a typed dataset cannot do yet, when t trains one; else 0. */
int bw_trainer_not_typed(const burrow_trainer *t, const char *what);

/* ------------------------------------------------------------ inference (infer.c) */

/* Layer-wise full-neighbor inference over all nodes in chunks of destination rows, layers
 * 0 .. last_layer (t->o.layers - 1 for the logits); each chunk of last_layer's output
 * (rows [r0, r0 + z->rows)) goes to sink. Hidden layers' embeddings stay in memory or
 * spill to scratch npy files under opts.mem_bytes. */
typedef int (*bw_infer_sink)(void *ctx, int64_t r0, const bw_tensor *z);
int bw_trainer_infer(burrow_trainer *t, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes);
/* The same, stopping after layer `layers` (1-based, <= the model's): its output (a hidden
 * layer's after its activation, as the next layer reads it) goes to sink. */
int bw_trainer_infer_upto(burrow_trainer *t, int layers, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes);
/* The same for a typed dataset's relational model (hinfer.c): the target type's logits,
 * rows r0.. of the target type, go to sink. */
int bw_trainer_hinfer(burrow_trainer *t, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes);
/* A layer's output in layer-wise inference, written in row order chunk by chunk: in memory
 * while it fits half of `budget` bytes, else streamed to a scratch npy file (removed when
 * freed, or if the command is interrupted); sealed, it is the next layer's rows. */
typedef struct bw_layer_buf {
	int64_t n, dim;
	float *mem;      /* [n, dim] (owned), or NULL: */
	bw_npy_writer w; /* the spill being written */
	bool writing;
	char *path;      /* the spill file (owned) */
	int reg;         /* path's slot in the registry of temporaries */
	bw_rows rows;    /* once sealed */
	bool sealed;
} bw_layer_buf;
/* budget: bytes (INFINITY: none), normally bw_trainer_infer_budget(t). */
int bw_layer_buf_open(burrow_trainer *t, bw_layer_buf *lb, int layer, int64_t n, int64_t dim, double budget);
/* Rows [r0, r0 + z->rows) from z on the trainer's device; chunks come in row order. */
int bw_layer_buf_put(burrow_trainer *t, bw_layer_buf *lb, int64_t r0, const bw_tensor *z);
/* Commit a spill and open lb->rows over the whole output; *spilled grows by its bytes. */
int bw_layer_buf_seal(burrow_trainer *t, bw_layer_buf *lb, int64_t *spilled);
void bw_layer_buf_free(bw_layer_buf *lb);
/* Bytes layer-wise inference may hold: opts.mem_bytes, or under RLIMIT_AS what is left of it,
 * else INFINITY. */
double bw_trainer_infer_budget(const burrow_trainer *t);
/* The growable arrays of an inference chunk's block (infer.c, hinfer.c). */
typedef struct bw_infer_chunk {
	int64_t *ids;
	int64_t ids_cap;
	int64_t *indptr;
	int64_t indptr_cap;
	int32_t *indices;
	int64_t indices_cap;
	float *src_norm;
	int64_t norm_cap;
} bw_infer_chunk;
void bw_infer_chunk_free(bw_infer_chunk *c);
/* Grow *p (of *cap elements of elem bytes) to hold need, at least doubling. */
int bw_infer_reserve(void **p, int64_t *cap, int64_t need, size_t elem);
/* Evaluation with sampled neighborhoods (opts.eval_fanout) on the batch loader: correct and
 * labelled counts of the splits whose bit is set in `splits` (bit s for split s; the
 * others get 0 and 0), two batches in memory at a time. */
int bw_trainer_eval_sampled(burrow_trainer *t, unsigned splits, int64_t correct[3], int64_t total[3]);
/* The same for a multi-label task: the logits of the splits' nodes into scores [N, T] (host; the
 * rows of other nodes are left as they are). */
int bw_trainer_eval_sampled_scores(burrow_trainer *t, unsigned splits, float *scores);

/* ------------------------------------------------------------ multi-label (multilabel.c) */

/* A multi-label step's loss: binary cross-entropy over the known labels of the batch's rows
 * (seeds: the batch's seed ids, its output rows in order; NULL: full-graph mode, the rows of
 * the training split), its gradient into t->glogits; ls as bw_nll_loss leaves it. */
int bw_trainer_ml_loss(burrow_trainer *t, const bw_tensor *logits, const int64_t *seeds, bw_loss *ls);
/* Multi-label evaluation: ROC-AUC of each split in `want` (OGB's, averaged over the tasks with
 * both classes there; -1 for a split not scored, empty, or with no such task). */
int bw_trainer_ml_evaluate(burrow_trainer *t, unsigned want, double auc[3], int64_t *spilled_bytes);

/* ------------------------------------------------------------ outputs (outputs.c) */

/* Copy the model's weights into t->best_params, as the best epoch's. */
int bw_trainer_keep_best(burrow_trainer *t);

/* ------------------------------------------------------------ steps (trainer.c) */

/* The options' ranges and combinations, as burrow_trainer_open checks them before it opens
 * anything: 0, or BURROW_E_INVAL with the message ("train: ..."). */
int bw_trainer_check_opts(const burrow_train_opts *o);

/* One optimizer step on a batch: forward (dropout on), loss over the batch's loss rows,
 * backward, update. A non-finite loss is BURROW_E_RANGE naming the batch's epoch and index
 * (1-based), before any update. */
int bw_trainer_step(burrow_trainer *t, const bw_batch *b, double *loss, int64_t *counted, int64_t *correct);
/* Mini-batch mode: x (a batch's or an inference chunk's input rows, host memory: the rows of
 * the global ids `ids`, or NULL when unknown) gets its sparse copy (t->rows_sp, valid until
 * the next call) when t->sparse_rows, so the first layer's products visit only its
 * non-zeros: gathered from t->feat_csr when it is held and ids given, else scanned from x's
 * rows (the same copy either way); else x is left as it is. */
int bw_trainer_sparse_x(burrow_trainer *t, bw_tensor *x, const int64_t *ids);
/* A training batch's first-layer input made ready: learned embeddings' rows (bw_emb_put, after
 * the last step's update), then bw_trainer_sparse_x on them or the gathered features. */
int bw_trainer_batch_input(burrow_trainer *t, bw_loaded *lb);
/* Whether a mini-batch loader may leave the batches' dense input rows unread
 * (bw_loader_cfg.rows_unread): each batch's sparse copy is gathered from t->feat_csr, no
 * learned embeddings go into the rows and the model reads only the sparse copy
 * (bw_model_reads_dense_input). Then the store reads nothing per batch. */
bool bw_trainer_rows_unread(const burrow_trainer *t);

/* ------------------------------------------------------------ link prediction (ltrain.c) */

/* t->link for t (its model, store and options in place; o.task LINK): the dataset's edge
 * splits, the scorer and its optimizer. */
int bw_ltrain_open(burrow_trainer *t);
void bw_ltrain_close(bw_ltrain *lt);
/* The scorer optimizer's rate for the next epoch (the schedule's, as the encoder's). */
void bw_ltrain_set_lr(bw_ltrain *lt, double lr);
/* One epoch of edge mini-batches; fills es except epoch. */
int bw_ltrain_epoch(burrow_trainer *t, burrow_epoch_stats *es);
/* The epoch's feature-store figures into es (rows_read, cache_hit_rate, rows_requested, reads,
 * pages_read, bytes_read): the difference of the store's counters after (s1) and before (s0). */
void bw_trainer_epoch_io(burrow_epoch_stats *es, const burrow_store_stats *s0, const burrow_store_stats *s1);
/* The profile cache policy: the first BW_PROFILE_BATCHES batches of epoch 0 of a sampler keyed
 * by opts.seed ^ BW_PROFILE_SEED, as the epochs' otherwise, count each row's appearances. */
#define BW_PROFILE_BATCHES 64
#define BW_PROFILE_SEED 0x70726f66696c65ull /* "profile" */
/* The valid and test splits' metric (the dataset's: Hits@K, MRR or AUC) and ROC-AUC into ev
 * (train_acc -1), from layer-wise embeddings of every node. */
int bw_ltrain_evaluate(burrow_trainer *t, burrow_eval_stats *ev);
/* The scorer's weights with the model's best (bw_trainer_keep_best): copied aside, or put back
 * (use: burrow_trainer_use_best). */
int bw_ltrain_keep_best(burrow_trainer *t, bool use);

/* ------------------------------------------------------------ checkpoints (checkpoint.c) */

/* A host array a checkpoint carries after the optimizer state (a learned embedding table or
 * its Adam moments): saved from *data; a load reads it into an allocation of its own and,
 * once the whole file is read, frees *data and puts the new array there. */
typedef struct bw_ck_array {
	float **data;           /* [n] host memory, owned by the checkpoint's owner */
	int64_t n;
} bw_ck_array;

/* A typed model's side of a checkpoint (file version 2; docs/train.md): its flat weights, what
 * the header records of the model and the dataset's types and relations, and the learned
 * embeddings with their moments. Described by its owner (bw_htrain_ck_typed). */
typedef struct bw_ck_typed {
	float *params;          /* [num_params] on dev; the optimizer's state is as long */
	int64_t num_params;
	const bw_device *dev;
	int kind, layers, heads;                  /* enum burrow_model_kind (rgcn, rsage, rgat, mlp) */
	int64_t hidden, classes;
	double attn_dropout;
	const burrow_hetero *h;                   /* the dataset's types and relations (borrowed) */
	int64_t feat_dim[BURROW_MAX_TYPES];       /* [num_types] each type's features' width (0: none) */
	int64_t emb_dim[BURROW_MAX_TYPES];        /* [num_types] its learned embeddings' width, 0: none */
	int32_t fanout[BURROW_MAX_LAYERS];        /* [layers] the training fanouts (defaults resolved) */
	int num_arrays;
	bw_ck_array arrays[3 * BURROW_MAX_TYPES]; /* per learned type, ascending: table, m, v */
} bw_ck_typed;

/* What a checkpoint holds, as pointers into its owner (a trainer, a distributed run). */
typedef struct bw_ck_state {
	bw_model *model;        /* a homogeneous model (file version 1), or NULL: typed */
	const bw_ck_typed *typed; /* a typed model (file version 2) when model is NULL */
	bw_optim *optim;
	uint64_t *seed;
	double dropout;
	int *epoch;
	burrow_best *best;
	/* the dataset's name and node count: saved, and load refuses a checkpoint recording
	 * another (distributed: the input dataset's, its N; "parts" for the name checks the
	 * count only) */
	const char *dataset;
	int64_t num_nodes;
	/* early stopping and the lr schedule (NULL: none kept), and whether the features are
	 * normalized: saved, restored (an older checkpoint: the state of a fresh run) */
	bw_habits *habits;
	bool normalize_features;
	/* the random split the model trains on (opts.split, drawn from split_seed): saved, and
	 * load refuses a checkpoint whose split differs; NULL (distributed: parts carry their
	 * splits) writes and checks none */
	const double *split;   /* [3] fractions, all 0: the dataset's splits */
	uint64_t split_seed;
	/* the task (enum burrow_task: NODE, MULTILABEL or LINK) and link prediction's scorer: saved
	 * (a header without them holds a node classifier), and load refuses a checkpoint of another;
	 * a multi-label model's header records "task": "multilabel" and "tasks": T; the link
	 * scorer's weights and optimizer state are host arrays after the model's payload */
	int task, scorer;
	int64_t tasks;         /* MULTILABEL: T */
	int num_arrays;
	bw_ck_array arrays[6];  /* the link scorer's, then learned embeddings' (table, m, v) */
	int64_t embed_dim;     /* learned input embeddings' width (header "embed_dim"), 0: none */
	const char *dir;       /* the dataset's directory, for messages that blame it (NULL: none) */
} bw_ck_state;
/* A link trainer's scorer in a checkpoint: its weights and their optimizer state as host
 * arrays (a[0 .. 3), none for dot: returns how many); after a load, bw_ltrain_loaded puts the
 * loaded arrays in use. */
int bw_ltrain_ck_arrays(burrow_trainer *t, bw_ck_array *a);
void bw_ltrain_loaded(burrow_trainer *t);

/* Learned input embeddings (embed.c) of a homogeneous dataset without features: the table
 * [N, D] (D = opts.embed_dim, else opts.hidden) Glorot-uniform from the seed, refused in one
 * line under --full-graph, on a device, or when it and its Adam moments exceed
 * opts.mem_bytes; open points t->feat_rows (evaluation, embed) at it. */
int bw_emb_open(burrow_trainer *t);
void bw_emb_close(bw_emb *e);
int64_t bw_emb_dim(const bw_emb *e);                /* D, 0 for NULL */
/* The model's input width: the features', or the learned embeddings'. */
static inline int64_t bw_trainer_in_dim(const burrow_trainer *t)
{
	return t->emb ? bw_emb_dim(t->emb) : t->info->feat_dim;
}
void bw_emb_train_rows(const bw_emb *e, bw_rows *r); /* the loader's source in training: gathers nothing */
void bw_emb_eval_rows(burrow_trainer *t);           /* t->feat_rows over the table (again, after a load) */
/* b->x = the table's rows of sb's input nodes (CPU memory of e's, valid until the next put). */
int bw_emb_put(bw_emb *e, const burrow_batch *sb, bw_batch *b);
bw_tensor *bw_emb_grad(bw_emb *e);                  /* where the backward pass puts dL/dx of the put rows */
/* Adam (torch.optim.SparseAdam's rule) on the rows of sb's input nodes with that gradient,
 * learning rate lr, the dense optimizer's step count step (>= 1). */
void bw_emb_step(bw_emb *e, const burrow_batch *sb, double lr, int64_t step);
void bw_emb_adam_rows(float *table, float *m, float *v, int64_t d, const int64_t *ids, int64_t n, const float *g,
		      double lr, int64_t step);
int bw_emb_ck_arrays(bw_emb *e, bw_ck_array *a);    /* the table, m, v as checkpoint arrays: 3 */
int bw_emb_keep_best(bw_emb *e, bool use);          /* copy the table aside (use: back) */

/* Write s to path atomically; load restores it (the model's shape and the optimizer must
 * match; nothing changes unless the whole file is read and verified). */
int bw_checkpoint_save(const bw_ck_state *s, const char *path);
int bw_checkpoint_load(bw_ck_state *s, const char *path);

#endif /* BURROW_DRIVER_H */
