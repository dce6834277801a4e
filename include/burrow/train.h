/* burrow/train.h: training on one machine: options, the trainer, checkpoints, embeddings and predictions. */
#ifndef BURROW_TRAIN_PUBLIC_H
#define BURROW_TRAIN_PUBLIC_H

#include "core.h"
#include "graph.h"
#include "store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- training */

/* Training and evaluation of a node classifier on a dataset directory. A trainer holds
 * the model, the optimizer and the epoch count; the caller runs epochs, evaluates when it
 * likes and saves checkpoints (see docs/train.md for the pipeline and the file format):
 *
 *     burrow_train_opts o;
 *     burrow_train_defaults(&o);            // mini-batch: sampler -> feature store -> compute
 *     o.cache_fraction = 0.1;               // cache 10% of the feature rows, read the rest
 *     burrow_trainer *t;
 *     if (burrow_trainer_open(&t, ds, &o) < 0) ...
 *     for (int e = 0; e < o.epochs; e++) {
 *         burrow_epoch_stats es = {.size = sizeof es}; burrow_eval_stats ev = {.size = sizeof ev};
 *         if (burrow_trainer_train_epoch(t, &es) < 0 || burrow_trainer_evaluate(t, &ev) < 0) ...
 *     }
 *     burrow_trainer_close(t);
 *
 * Features always come through the feature store (burrow_store on the dataset's
 * features.npy): mini-batch epochs gather each batch's input rows asynchronously, up to
 * `prefetch` batches ahead, and evaluation gathers its chunks' rows; the cache decides how
 * many rows live in memory ("in memory" is cache_fraction = 1). Full-graph mode reads the
 * features whole into memory through the store once, at open. */

/* The last three are typed (relational) models, for typed datasets only: R-GCN (a weight per
 * relation over the mean of its in-neighbors, plus a self weight per node type, summed), R-SAGE
 * (a SAGE layer per relation, summed), R-GAT (a GAT layer per relation, heads concatenated,
 * summed over relations, as MLPerf's IGBH reference). docs/train.md. */
enum burrow_model_kind { BURROW_MODEL_SAGE = 1, BURROW_MODEL_GCN = 2, BURROW_MODEL_MLP = 3, BURROW_MODEL_GAT = 4,
			 BURROW_MODEL_RGCN = 5, BURROW_MODEL_RSAGE = 6, BURROW_MODEL_RGAT = 7 };
/* GraphSAGE's neighbor aggregator: mean, elementwise max over the neighbors (PyG's
 * SAGEConv(aggr="max"), no pooling MLP), or sum. */
enum burrow_aggr { BURROW_AGGR_MEAN = 0, BURROW_AGGR_MAX = 1, BURROW_AGGR_SUM = 2 };
/* Normalization of each hidden layer's output, before its ReLU (with a learned scale and
 * shift): none, batch norm (statistics of the batch's rows in training, running averages,
 * momentum 0.1, in inference) or layer norm (each row's own). */
enum burrow_norm { BURROW_NORM_NONE = 0, BURROW_NORM_BATCH = 1, BURROW_NORM_LAYER = 2 };
enum burrow_optim_kind { BURROW_OPTIM_ADAM = 1, BURROW_OPTIM_ADAMW = 2, BURROW_OPTIM_SGD = 3 };
#define BURROW_CACHE_AUTO (-1) /* burrow_train_opts.cache_bytes: size the feature cache from memory */
/* burrow_train_opts.sparse_input: how the first layer multiplies the features (full-graph,
 * mini-batch, and full-graph under burrow_dist): as a sparse matrix when at most BURROW_SPARSE_AUTO_DENSITY of them are non-zero
 * (AUTO), always (ON) or never (OFF). The sparse product and the dense GEMM cross between 10
 * and 15% non-zero at 1 and 2 threads; at 5% sparse takes about 0.6 of the time (docs/train.md). */
enum burrow_eval_split { BURROW_EVAL_TRAIN = 1, BURROW_EVAL_VALID = 2, BURROW_EVAL_TEST = 4 };
#define BURROW_EVAL_ALL (BURROW_EVAL_TRAIN | BURROW_EVAL_VALID | BURROW_EVAL_TEST)
enum burrow_sparse_input { BURROW_SPARSE_AUTO = 0, BURROW_SPARSE_ON = 1, BURROW_SPARSE_OFF = 2 };
/* burrow_train_opts.task: what is learned. AUTO: from the dataset (multi-label labels ->
 * MULTILABEL; edge splits and no labels -> LINK; else NODE). NODE: one class per node
 * (softmax cross-entropy, accuracy); MULTILABEL: T binary labels per node (binary cross-entropy
 * over the known ones, ROC-AUC averaged over the tasks); LINK: link prediction on the dataset's
 * edge splits (docs/train.md). */
enum burrow_task { BURROW_TASK_AUTO = 0, BURROW_TASK_NODE = 1, BURROW_TASK_MULTILABEL = 2, BURROW_TASK_LINK = 3 };
/* burrow_train_opts.scorer: link prediction's score of a pair (u, v) from the encoder's embeddings
 * (the model's output, hidden wide): DOT <h_u, h_v>; MLP: two layers (hidden wide, ReLU) over the
 * elementwise product h_u * h_v (PyG's LinkPredictor). */
enum burrow_scorer_kind { BURROW_SCORER_DOT = 0, BURROW_SCORER_MLP = 1 };
/* burrow_train_opts.sampler: NEIGHBOR draws each row's fanout uniformly, LABOR shares one variate
 * per source node and layer between the rows (burrow_sampler_opts.labor, docs/sampler.md),
 * LABOR_STAR adds LABOR-*'s importance sampling (burrow_sampler_opts.labor_star =
 * BURROW_LABOR_STAR_ROUNDS; typed datasets: burrow_typed_sampler_opts.labor_star, per relation),
 * its weights feeding SAGE's mean on the CPU (typed: R-SAGE's and R-GCN's; R-GAT and the MLP refuse it). */
enum burrow_sampler_kind { BURROW_SAMPLER_NEIGHBOR = 0, BURROW_SAMPLER_LABOR = 1, BURROW_SAMPLER_LABOR_STAR = 2 };

/* burrow_eval_stats.metric: what its three split values hold (OGB's metric of the task). */
enum burrow_metric_kind { BURROW_METRIC_ACC = 0, BURROW_METRIC_ROCAUC = 1, BURROW_METRIC_HITS = 2,
			  BURROW_METRIC_MRR = 3, BURROW_METRIC_AUC = 4 };
#define BURROW_SPARSE_AUTO_DENSITY 0.05
/* burrow_train_opts.lr_schedule: the learning rate of each epoch, the rules of
 * torch.optim.lr_scheduler with e the epochs trained before it (docs/train.md):
 * NONE: lr. STEP (StepLR): lr * lr_gamma^floor(e / lr_step). COSINE (CosineAnnealingLR,
 * T_max = epochs): lr_min + (lr - lr_min) (1 + cos(pi e / epochs)) / 2. PLATEAU
 * (ReduceLROnPlateau, mode max, threshold 0, cooldown 0, min_lr lr_min): after an evaluation
 * that is the (lr_patience + 1)th in a row without a better valid metric, the rate becomes
 * max(rate * lr_gamma, lr_min) and the count starts again. */
enum burrow_lr_schedule { BURROW_LR_NONE = 0, BURROW_LR_STEP = 1, BURROW_LR_COSINE = 2, BURROW_LR_PLATEAU = 3 };

typedef struct burrow_train_opts {
	size_t size;            /* sizeof(burrow_train_opts), set by burrow_train_defaults(); first */
	int model;              /* enum burrow_model_kind (default SAGE) */
	int layers;             /* default 3, at most BURROW_MAX_LAYERS */
	int64_t hidden;         /* hidden width (default 256) */
	double dropout;         /* after each hidden layer's ReLU (default 0.5) */
	int aggr;               /* sage: enum burrow_aggr (default MEAN) */
	int heads;              /* gat: attention heads, concatenated in hidden layers (they must divide
				   hidden) and averaged in the output layer (default 4) */
	double attn_dropout;    /* gat: dropout on the attention coefficients in training (default 0) */
	int norm;               /* enum burrow_norm after each hidden layer (default NONE) */
	bool residual;          /* add a hidden layer's input to its output where their widths match
				   (every hidden layer but the first, unless the features are as wide
				   as the hidden layers) (default false) */
	int optimizer;          /* enum burrow_optim_kind (default ADAM) */
	double lr;              /* learning rate (default 0.003) */
	double weight_decay;    /* default 0 */
	double momentum;        /* SGD only (default 0) */
	int epochs;             /* epochs a caller's loop runs (default 20; the trainer only reports it) */
	uint64_t seed;          /* weights, dropout and batches derive from it (default 0) */
	double split[3];        /* train, valid, test fractions: a random split of the labeled nodes drawn
				   from seed (burrow_split_random) replaces the dataset's, for graphs that
				   have none; all 0 (default): the dataset's splits */
	bool full_graph;        /* every epoch one step over all nodes with all neighbors, features held
				   in memory (default false: mini-batch, the sampler + feature store pipeline) */
	int64_t batch_size;     /* mini-batch: training nodes per batch (default 1024) */
	int32_t fanout[BURROW_MAX_LAYERS]; /* mini-batch: neighbors per layer, input layer first; -1 all;
					      0 = the default 5 * (layers - l): 15,10,5 for 3 layers
					      (default all 0). mlp samples no neighbors */
	int64_t max_batches;    /* end an epoch after this many batches; 0 = all (default 0) */
	int prefetch;           /* mini-batch: batches sampled, and their feature gathers submitted, ahead
				   of the one computing; 0 = sample, gather, compute one after another
				   (default 2) */
	int64_t cache_bytes;    /* feature-cache budget in bytes, or BURROW_CACHE_AUTO (default): every row
				   when that takes at most a quarter of physical memory (or of the
				   cgroup's memory limit when smaller; and, under
				   RLIMIT_AS, of what is left of it at open once threads' stacks are
				   counted), else that quarter. Full-graph mode uses no cache */
	double cache_fraction;  /* when >= 0 (at most 1) it replaces cache_bytes: this share of the budget
				   that holds every row, so 1 = all the features in memory (default -1) */
	int cache_policy;       /* enum burrow_cache_policy: STATIC (default: the rows of highest degree,
				   filled at open), PROFILE (static: the rows most often input nodes of
				   64 batches sampled at open with a seed of their own; node tasks),
				   CLOCK (rows read lately), NONE */
	int store_engine;       /* enum burrow_store_engine of the feature store (default URING) */
	int64_t eval_chunk;     /* destination rows per chunk of layer-wise inference (default 8192) */
	int64_t mem_bytes;      /* layer-wise inference keeps a layer's embeddings in memory while
				   they fit in half of this, else spills them to a scratch npy; 0 = no
				   limit, or under RLIMIT_AS half of what is left of it (default 0) */
	const char *scratch_dir;/* where spills go (borrowed; NULL = $TMPDIR or /tmp) */
	int threads;            /* OpenMP threads of the compute (GEMMs are split over them; OpenBLAS
				   runs single-threaded inside them); 0 = the runtime default, in both
				   modes: the pipeline's sampling and read threads share the cores
				   (docs/train.md, "One thread pool") */
	burrow_progress_fn progress; /* batches within an epoch, phase "train"; evaluation's rows
					(layers x nodes), phase "eval"; may be NULL */
	void *progress_user;
	const char *device;     /* where the model computes: "cpu" (default; NULL too), "cuda" (= cuda:0)
				   or "cuda:N" (borrowed). A device this build or machine lacks is
				   BURROW_E_UNSUPPORTED at open, before any work */
	bool tf32;              /* CUDA: GEMMs may round their inputs to TF32 on tensor cores (default false:
				   float32 throughout, as the CPU) */
	int32_t eval_fanout[BURROW_MAX_LAYERS]; /* evaluation samples each split node's neighbors with
				   these fanouts (input layer first; -1 all), batch_size nodes at a time,
				   instead of layer-wise full-neighbor inference over all nodes. It holds
				   one batch, never N x hidden embeddings: the way to evaluate a graph whose
				   embeddings fit neither memory nor scratch disk (ogbn-papers100M: 114 GB
				   per hidden layer of 256). All 0 (default): layer-wise inference */
	const char *sampler_device; /* mini-batch: where batches are sampled: "cpu", "cuda" (= cuda:0),
				   "cuda:N", or "auto" (NULL too, the default): the model's device when
				   its backend registered a sampler (burrow_sampler_opts.device), else the
				   CPU. The batches are the same on every device, element for element, so
				   the choice changes timings, never results (borrowed; a device this
				   build or machine lacks is BURROW_E_UNSUPPORTED at open) */
	int sparse_input;       /* enum burrow_sparse_input (default AUTO). Sparse: the features' CSR
				   and its transpose are built once at open (full-graph; a rank's own and
				   halo rows under burrow_dist), or each batch's rows' (mini-batch), and the
				   first layer's products with them (X W forward, X^T G backward) visit only
				   the non-zeros: the same sums up to float rounding. A backend without the
				   sparse product (CUDA) multiplies dense whatever this says */
	unsigned eval_splits;   /* the splits evaluation scores: an OR of BURROW_EVAL_TRAIN, _VALID,
				   _TEST; a split left out reads -1 (absent) in burrow_eval_stats. 0
				   (default): all three under layer-wise inference (one pass covers
				   every node), valid and test under eval_fanout, whose cost grows with
				   the nodes scored and where the train split is most of them */
	/* typed datasets (format version 2; models rgcn, rsage, rgat, and mlp on the target type's
	   own features) */
	bool embed_types;       /* a type without features gets a learned embedding per node, trained
				   with sparse row updates (Adam's, on the rows a batch touched) and
				   kept in checkpoints (default false: such a type is refused at open;
				   the alternative is `burrow prep --fill mean`) */
	int64_t embed_dim;      /* their width (default 0: the target type's feature width); also the
				   width of a homogeneous dataset's learned input embeddings, which a
				   dataset without features (feat_dim 0) always trains (default 0:
				   hidden) */
	const char *rel_fanout; /* per-relation fanouts overriding `fanout`: "REL=f0,f1,...[;REL=...]",
				   REL a relation's name or its "src___name___dst" triple, one fanout
				   per layer, input layer first (borrowed; default NULL) */
	int task;               /* enum burrow_task (default AUTO) */
	/* training habits */
	int patience;           /* early stopping: burrow_trainer_should_stop turns true once this many
				   evaluations in a row found no better valid metric than the best; 0
				   (default): never */
	int lr_schedule;        /* enum burrow_lr_schedule (default NONE: lr throughout) */
	int lr_step;            /* STEP: epochs between reductions (>= 1 with STEP; default 0) */
	double lr_gamma;        /* STEP, PLATEAU: the factor of a reduction, in (0, 1) (default 0.1) */
	double lr_min;          /* COSINE: the rate it anneals to; PLATEAU: the floor (default 0) */
	int lr_patience;        /* PLATEAU: evaluations without improvement tolerated before a
				   reduction (default 10, torch's) */
	bool normalize_features; /* divide each feature row by its sum, a row summing to 0 left as it
				   is (PyG's NormalizeFeatures for non-negative features), wherever rows
				   are read: training, evaluation, embeddings, predictions; recorded in
				   checkpoints (default false) */
	/* link prediction (task LINK) */
	int scorer;             /* enum burrow_scorer_kind: how a pair of embeddings is scored (default DOT) */
	int neg;                /* negatives per training positive in a batch, uniform over the nodes for the
				   positive's destination (default 1) */
	/* edge features */
	bool edge_weight;       /* weigh sage (mean, sum) and gcn aggregation by a column of the dataset's
				   edge_features.npy (mini-batch on the CPU, training and evaluation; gcn's
				   norms then come from the blocks' weighted degrees; default false) */
	int edge_weight_col;    /* that column, in [0, edge_feat_dim) (default 0) */
	/* sampling */
	int sampler;            /* enum burrow_sampler_kind: how training batches sample neighbors (default
				   NEIGHBOR; LABOR: homogeneous node tasks, mini-batch, one process, CPU
				   sampling; evaluation samples as before) */
	/* link prediction */
	int neg_mode;           /* enum burrow_neg_mode: a negative corrupts the positive's destination
				   (DST, default) or draws both endpoints uniformly (BOTH) */
	/* edge features */
	bool gat_edge_features; /* gat's attention adds an edge term from the dataset's edge features when it
				   has them (PyG's GATConv(edge_dim)), in mini-batch and full-graph training
				   and evaluation on the CPU (default true; false: attention over the nodes alone) */
	/* typed datasets (appended) */
	int typed_fanout;       /* enum burrow_typed_fanout: a fanout counts per relation (RELATION, default) or
				   per destination node over all its relations (NODE; with rel_fanout unset),
				   in training and evaluation (burrow_typed_sampler_opts.fanout_mode) */
	int labor_batch_dependency; /* LABOR and LABOR-*: an epoch's batches share their variates in groups of
				   this many (burrow_sampler_opts.labor_batch_dependency; default 0: off) */
} burrow_train_opts;

/* Fill o with the defaults above. */
BURROW_API void burrow_train_defaults(burrow_train_opts *o);
/* Parse "neighbor", "labor", "labor-star" (-1 when unknown) and name a sampler kind (static string). */
BURROW_API int burrow_sampler_parse(const char *name);
BURROW_API const char *burrow_sampler_name(int kind);
/* The neighbors block `layer` (0 = the input layer) samples under o: o->fanout[layer], or when
 * it is 0 the default 5 * (layers - layer) (15,10,5 for 3 layers); 0 for an mlp, whose
 * batches are their seeds alone; -1 = all. The one place that default lives. */
BURROW_API int burrow_train_fanout(const burrow_train_opts *o, int layer);
/* Parse "sage", "gcn", "mlp", "gat", "rgcn", "rsage", "rgat" (0 when unknown) and name a model kind (static string). */
BURROW_API int burrow_model_parse(const char *name);
BURROW_API const char *burrow_model_name(int kind);
/* Parse "mean", "max", "sum" (-1 when unknown) and name an aggregator (static string). */
BURROW_API int burrow_aggr_parse(const char *name);
BURROW_API const char *burrow_aggr_name(int aggr);
/* Parse "none", "batch", "layer" (-1 when unknown) and name a normalization (static string). */
BURROW_API int burrow_norm_parse(const char *name);
BURROW_API const char *burrow_norm_name(int norm);
/* Parse "auto", "node", "multilabel", "link" (-1 when unknown) and name a task (static string). */
BURROW_API int burrow_task_parse(const char *name);
BURROW_API const char *burrow_task_name(int task);
/* Parse "dot", "mlp" (-1 when unknown) and name a scorer (static string). */
BURROW_API int burrow_scorer_parse(const char *name);
BURROW_API const char *burrow_scorer_name(int scorer);

/* Parse "none", "step", "cosine", "plateau" (-1 when unknown) and name a schedule (static string). */
BURROW_API int burrow_lr_schedule_parse(const char *name);
BURROW_API const char *burrow_lr_schedule_name(int schedule);

/* What one training epoch did. Times in seconds. */
typedef struct burrow_epoch_stats {
	size_t size;            /* set by the caller: sizeof(burrow_epoch_stats); the library writes at most this */
	int epoch;              /* 1-based number of the epoch just trained */
	int64_t batches;        /* optimizer steps taken */
	double loss;            /* mean of the batches' losses */
	double train_acc;       /* correct / total over the batches' training rows, dropout on; -1 when
				   no row had a label. Multi-label: over the known labels, a label
				   correct when its logit's sign matches (> 0 for 1) */
	double epoch_s;         /* training only (no evaluation) */
	double sample_s;        /* time the compute waited for the next batch to be sampled (and its gather
				   submitted): sampling not hidden by the pipeline (0 in full-graph mode) */
	double io_wait_s;       /* time the compute waited for a batch's feature rows (0 in full-graph mode) */
	double compute_s;       /* forward, backward and optimizer */
	int64_t rows_read;      /* feature rows read from disk for the epoch's batches (0 in full-graph mode) */
	double cache_hit_rate;  /* the epoch's feature-cache hits / rows requested; -1 when nothing was
				   requested (full-graph mode) or counted (distributed training) */
	/* What the epoch asked of the feature store (node and link mini-batch epochs; 0 otherwise): */
	int64_t rows_requested; /* rows asked for: each batch's input nodes, which are distinct within a
				   batch, so rows_requested / batches is the mean input nodes a batch */
	int64_t reads;          /* read requests issued for the rows not cached (merged up to 64 KiB) */
	int64_t pages_read;     /* 4 KiB pages of the features file those requests covered, a page
				   counted once per gather */
	int64_t bytes_read;     /* bytes those requests asked for (whole device blocks) */
	int threads;            /* the compute's CPU threads this epoch: one-process full-graph
				   training runs the count asked or one, whichever measured faster
				   (docs/train.md); 0 on a GPU and under mpirun */
} burrow_epoch_stats;

/* Accuracy of the current model, OGB's way: correct / total on each split, from layer-wise
 * full-neighbor inference over all nodes. -1 for an empty split. A multi-label task's are
 * OGB's ROC-AUC (burrow_metric_rocauc_tasks; metric ROCAUC), -1 also for a split where no task
 * has both classes. */
typedef struct burrow_eval_stats {
	size_t size;            /* set by the caller: sizeof(burrow_eval_stats); the library writes at most this */
	double train_acc, valid_acc, test_acc;
	double eval_s;          /* seconds the evaluation took */
	int64_t spilled_bytes;  /* embeddings written to scratch files (0 when they fit --mem) */
	int metric;             /* enum burrow_metric_kind: what train_acc, valid_acc and test_acc hold
				   (ACC for node classification) */
	int metric_k;           /* HITS: its K; else 0 */
	double valid_auc, test_auc; /* LINK: ROC-AUC of the split's positives against its negatives; else -1 */
} burrow_eval_stats;

/* The best evaluation so far: by valid accuracy, the first wins ties; without a valid
 * split (valid_acc -1), the latest evaluation. */
typedef struct burrow_best {
	int epoch;              /* -1 when nothing was evaluated yet */
	double valid_acc, test_acc;
} burrow_best;

typedef struct burrow_trainer burrow_trainer;

/* A trainer for ds (borrowed: it must outlive the trainer) with a fresh model from o->seed.
 * Opens the feature store on the dataset's features.npy and fills a static cache; in
 * full-graph mode reads every row into memory through it. Nothing else maps or loads the
 * features file. The sampler opens at the first mini-batch epoch. */
BURROW_API int burrow_trainer_open(burrow_trainer **out,        /* out: caller closes */
				   burrow_dataset *ds,           /* borrowed */
				   const burrow_train_opts *o);  /* copied; NULL = defaults */
BURROW_API void burrow_trainer_close(burrow_trainer *t);
/* Train one epoch. A loss that is not finite stops it with BURROW_E_RANGE naming the epoch
 * and batch; the model is then left as it was before that batch's update. */
BURROW_API int burrow_trainer_train_epoch(burrow_trainer *t, burrow_epoch_stats *st /* out */);
/* Evaluate the current model and update the best (by valid accuracy) with this epoch. */
BURROW_API int burrow_trainer_evaluate(burrow_trainer *t, burrow_eval_stats *ev /* out */);
/* The trainer's feature store (borrowed, valid until close): its info, cache and counters. */
BURROW_API burrow_store *burrow_trainer_store(burrow_trainer *t);
/* Epochs trained so far (restored by burrow_trainer_load). */
BURROW_API int burrow_trainer_epoch(const burrow_trainer *t);
BURROW_API burrow_best burrow_trainer_best(const burrow_trainer *t);
/* Early stopping (opts.patience > 0): true once the last `patience` evaluations found no
 * better valid metric than the best (evaluations without a valid split do not count); a
 * caller's loop then ends. Restored by burrow_trainer_load, so a resumed run stops where the
 * straight one would. Always false with patience 0. */
BURROW_API bool burrow_trainer_should_stop(const burrow_trainer *t);
/* The learning rate the next epoch trains with (opts.lr under no schedule). */
BURROW_API double burrow_trainer_lr(const burrow_trainer *t);
/* Where the trainer samples its mini-batches (opts.sampler_device resolved): "cpu" or
 * "cuda:N" (static storage in the trainer, valid until close). */
BURROW_API const char *burrow_trainer_sampler_device(const burrow_trainer *t);
/* The batches the loader keeps ahead of the one computing: opts.prefetch, or on a typed dataset
 * fewer when opts.prefetch + 1 of its batches and a step's activations would not fit --mem (or
 * the memory available less the feature cache); *batch_bytes (may be NULL): a typed batch's
 * estimated bytes in the loader (input rows as float32, blocks), from the first training batch
 * sampled at open, else 0. */
BURROW_API int burrow_trainer_prefetch(const burrow_trainer *t, double *batch_bytes);
/* A checksum of the model's weights (FNV-1a over their bytes): equal weights, equal sums. */
BURROW_API uint64_t burrow_trainer_weights_checksum(const burrow_trainer *t);
/* Write a checkpoint file atomically: model, optimizer state, epoch, seed, best (a typed
 * dataset's trainer: also its learned embeddings and their moments; docs/train.md). */
BURROW_API int burrow_trainer_save(burrow_trainer *t, const char *path);
/* Restore a checkpoint written by burrow_trainer_save. The model's shape must match, the
 * split it trained on (opts.split and the seed it was drawn from) the trainer's, and the
 * dataset it records (meta.json's name, num_nodes) the trainer's (BURROW_E_INVAL naming
 * both otherwise; a header without them is not checked); a truncated or corrupted file is
 * BURROW_E_FORMAT naming it. On a typed dataset the node types, relations and learned
 * embeddings' widths must match too, and a checkpoint of a homogeneous model is refused (a
 * typed one on a homogeneous dataset likewise). The trainer takes the checkpoint's seed,
 * epoch and best; a refused load leaves it as it was. */
BURROW_API int burrow_trainer_load(burrow_trainer *t, const char *path);
/* Read a checkpoint's model options (model, layers, hidden, dropout, aggr, heads,
 * attn_dropout, norm, residual, optimizer, lr, weight decay, momentum, seed, and split when
 * it records one; a typed model's also embed_types, embed_dim and the training fanouts) into
 * o, leaving the other fields; values burrow_trainer_open would refuse (hidden 0) are
 * BURROW_E_INVAL naming the file. */
BURROW_API int burrow_checkpoint_read_opts(const char *path, burrow_train_opts *o /* in/out */);
/* Write the final layer's output (the logits) for every node, [N, classes] float32, to an
 * npy file, atomically. */
BURROW_API int burrow_trainer_embed(burrow_trainer *t, const char *out_npy);

/* ---------------------------------------------------------------- where compute time goes */

/* What burrow_op_stats sorts the compute ops into, as the dispatchers run them: products
 * (dense GEMM and the sparse-input product), aggregation over a block's edges (sum, mean,
 * GCN, max, attention), elementwise and row-wise ops (activations, dropout, bias, loss,
 * normalization, GAT's scores and softmax) and the optimizer's step. */
enum burrow_op_class { BURROW_OP_PRODUCT = 0, BURROW_OP_AGGREGATE = 1, BURROW_OP_ELEMENTWISE = 2,
		       BURROW_OP_OPTIMIZER = 3, BURROW_OP_CLASSES = 4 };

/* Each op class's calls, seconds and floating-point operations over the training epochs
 * counted (burrow_trainer_count_ops), and the products of each model layer (layer 0 is the
 * input layer; its forward and backward). FLOPs are counted from the shapes: 2 m n k for a
 * product (2 nnz n for a sparse one), 2 edges dim for an aggregation (self loops counted as
 * edges), and a fixed count per element elsewhere (docs/bench.md). Seconds are wall time
 * around each kernel; on a GPU the kernel is waited for. */
typedef struct burrow_op_stats {
	size_t size;                       /* set by the caller: sizeof(burrow_op_stats) */
	int64_t calls[BURROW_OP_CLASSES];  /* by enum burrow_op_class */
	double seconds[BURROW_OP_CLASSES];
	double flops[BURROW_OP_CLASSES];
	int64_t layer_calls[BURROW_MAX_LAYERS];   /* products of layer l */
	double layer_seconds[BURROW_MAX_LAYERS];
	double layer_flops[BURROW_MAX_LAYERS];
	int64_t batches;                   /* training steps counted */
	double compute_s;                  /* those steps' compute time (burrow_epoch_stats.compute_s) */
} burrow_op_stats;

/* Count the ops of the training epochs that follow (on: from zero) or stop counting (off:
 * the totals stay readable). Off costs nothing; on, a clock read per op (on a GPU also a
 * wait for each kernel, which slows the epoch). Numerics are the same either way. */
BURROW_API int burrow_trainer_count_ops(burrow_trainer *t, bool on);
/* The totals counted so far (zero when counting never started). */
BURROW_API int burrow_trainer_op_stats(const burrow_trainer *t, burrow_op_stats *out /* out */);

/* A CPU backend for timing single-precision products (burrow bench gemm): the rate the
 * compute can reach at the shapes training multiplies. */
typedef struct burrow_gemm burrow_gemm;
/* How burrow_gemm_run multiplies: through the CPU backend's gemm as training calls it
 * (BACKEND: its own AVX-512 kernel where the shape fits, else OpenBLAS at one thread per
 * slice of rows, over the threads), or one cblas_sgemm call with OpenBLAS at the threads
 * (CBLAS). */
enum burrow_gemm_path { BURROW_GEMM_BACKEND = 0, BURROW_GEMM_CBLAS = 1 };
BURROW_API int burrow_gemm_open(burrow_gemm **out, /* out: caller closes */
				int threads);      /* 0 = the OpenMP default */
BURROW_API void burrow_gemm_close(burrow_gemm *g);
/* c = op(a) op(b), row-major, packed (lda = k, or m when trans_a; ldb = n, or k when trans_b;
 * ldc = n). */
BURROW_API int burrow_gemm_run(burrow_gemm *g, int path, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
			       const float *a, /* [m, k], or [k, m] when trans_a; borrowed */
			       const float *b, /* [k, n], or [n, k] when trans_b; borrowed */
			       float *c);      /* [m, n] out */
/* The kernel that path runs for the shape: "avx512" (the backend's own) or "openblas"
 * (static storage). */
BURROW_API const char *burrow_gemm_kernel(const burrow_gemm *g, int path, bool trans_a, bool trans_b, int64_t m,
					  int64_t n, int64_t k);

/* ---------------------------------------------------------------- model outputs */

/* What a trained model gives back, for every node or for a list of nodes, from layer-wise
 * full-neighbor inference (the same as evaluation); every file is written atomically. The
 * trainer keeps the best epoch's weights in memory (a copy taken at each new best of
 * burrow_trainer_evaluate, or loaded from a checkpoint of its best epoch); call
 * burrow_trainer_use_best first to get the outputs of the best model rather than the last.
 *
 *     burrow_trainer_use_best(t);                         // the weights of the best valid epoch
 *     burrow_trainer_embed_layer(t, 1, "h1.npy");         // [N, hidden] after layer 1
 *     burrow_trainer_predict(t, NULL, 0, true, "p.npy");  // [N, classes] probabilities
 *     burrow_npy_array a;
 *     burrow_npy_read("p.npy", &a);                       // back in C: a.shape, a.data
 *     burrow_npy_free(&a);
 */

/* Put the best epoch's weights (burrow_trainer_best) into the model. The optimizer state is
 * left as it is. BURROW_E_NOTFOUND when nothing was evaluated, or when the best epoch came
 * from a loaded checkpoint of a later epoch (its best.ckpt holds those weights). */
BURROW_API int burrow_trainer_use_best(burrow_trainer *t);
/* Write layer `layer`'s output for every node, [N, width] float32, to an npy file: 1 .. the
 * number of layers, 1-based (0 = the last, the logits, as burrow_trainer_embed). A hidden
 * layer's output is taken after its activation, as the next layer reads it. */
BURROW_API int burrow_trainer_embed_layer(burrow_trainer *t, int layer, const char *out_npy);
/* Write predictions to an npy file: the class of each node (argmax of the logits, the one
 * evaluation scores), [n] int32; or with proba the softmax of the logits, [n, classes]
 * float32, each row summing to 1 (within float32 rounding). A multi-label task's: int8
 * [n, T], 1 where a task's logit is > 0; with proba each logit's sigmoid, [n, T] float32. nodes NULL: every node in id
 * order (n is ignored); else the nodes listed, in that order, repeats allowed; an id outside
 * [0, N) is BURROW_E_RANGE naming it. */
BURROW_API int burrow_trainer_predict(burrow_trainer *t,
				      const int64_t *nodes, /* [n] node ids, borrowed; NULL = all */
				      int64_t n,
				      bool proba,           /* probabilities instead of classes */
				      const char *out_npy); /* written atomically */

/* ---------------------------------------------------------------- metrics */

/* OGB's Evaluator (ogb/nodeproppred, ogb/linkproppred), in O(n log n) by sorting (MRR: O(npos k)).
 * Scores must be finite: the first that is not (of those a metric reads) is BURROW_E_RANGE
 * naming it; a metric with nothing to score is BURROW_E_INVAL. Results are doubles; scores are
 * compared as float32, as OGB's torch tensors compare them.
 *
 *     double auc;
 *     int64_t tasks;
 *     burrow_metric_rocauc_tasks(proba, labels, n, T, valid, nvalid, &auc, &tasks);  // ogbn-proteins
 *     burrow_metric_hits(pos, npos, neg, nneg, 50, &hits);                          // ogbl-collab
 */

/* ROC-AUC of positives against negatives, ties counted half (sklearn's roc_auc_score, the
 * Mann-Whitney U with average ranks): the share of (positive, negative) pairs where the positive
 * scores higher. npos and nneg must be > 0 (BURROW_E_INVAL). */
BURROW_API int burrow_metric_auc(const float *pos, int64_t npos, /* [npos] scores of positives, borrowed */
				 const float *neg, int64_t nneg, /* [nneg] scores of negatives, borrowed */
				 double *out);                   /* out: in [0, 1] */
/* ogbn-proteins: ROC-AUC per task over the rows whose label is 0 or 1 (-1 skipped), averaged over the tasks that
 * have both classes among those rows (*scored gets their count; none: BURROW_E_INVAL). scores and labels [n, T]
 * row-major; rows (NULL = all n) picks the rows scored (a split). A label other than -1, 0, 1 or a row outside
 * [0, n) is BURROW_E_RANGE naming it. */
BURROW_API int burrow_metric_rocauc_tasks(const float *scores,  /* [n, T] row-major, borrowed */
					  const int8_t *labels, /* [n, T] row-major: 1, 0, -1 unknown, borrowed */
					  int64_t n, int64_t T,
					  const int64_t *rows,  /* [nrows] row ids, borrowed; NULL = all n */
					  int64_t nrows,
					  double *out,          /* out: mean ROC-AUC over the scored tasks */
					  int64_t *scored);     /* out (may be NULL): tasks averaged */
/* Hits@K: the share of positives scoring strictly above the K-th highest negative; 1 when nneg < K
 * (OGB's rule). npos > 0 and k > 0 (BURROW_E_INVAL). */
BURROW_API int burrow_metric_hits(const float *pos, int64_t npos, /* [npos], borrowed */
				  const float *neg, int64_t nneg, /* [nneg], the same for every positive, borrowed */
				  int k, double *out);            /* out: in [0, 1] */
/* MRR: neg [npos, K] row-major, positive i against its K negatives; rank = 1 + (#neg > pos + #neg >= pos) / 2
 * (OGB's optimistic/pessimistic average); mean of 1 / rank. npos > 0 and k > 0 (BURROW_E_INVAL). */
BURROW_API int burrow_metric_mrr(const float *pos,    /* [npos], borrowed */
				 const float *neg,    /* [npos, k] row-major: row i the negatives of positive i, borrowed */
				 int64_t npos, int64_t k,
				 double *out);        /* out: in (0, 1] */

#ifdef __cplusplus
}
#endif
#endif /* BURROW_TRAIN_PUBLIC_H */
