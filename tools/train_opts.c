/* train_opts.c: burrow train's option table and its parser, shared by one-process training
 * (cmd_train.c) and mpirun on a parts directory (cmd_train_dist.c), and --help from it. */
#define _GNU_SOURCE
#include "train_opts.h"

#include "cli.h"
#include "train_cli.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where an option applies, beyond TRAIN_ONE / TRAIN_DIST. */
enum { W_MB = 4, W_FG = 8, W_NODEF = 16, W_BOTH = TRAIN_ONE | TRAIN_DIST };

enum kind { K_FLAG, K_INT, K_I64, K_U64, K_REAL, K_STR, K_CUSTOM };

/* sage --aggr sum's hidden width and learning rate unless --hidden and --lr are given
 * (docs/train.md: chosen on Cora's valid split, like the layer norm that max and sum get
 * unless --norm is given) */
#define SUM_HIDDEN 128
#define SUM_LR 0.005

typedef struct topt topt;
struct topt {
	const char *name;     /* --name */
	const char *arg;      /* its argument's name in --help; NULL: a flag */
	unsigned where;       /* TRAIN_ONE, TRAIN_DIST; W_MB or W_FG when one training mode only;
			       * W_NODEF: its help says the default (0 means "automatic") */
	const char *group;    /* --help section, printed when it changes */
	enum kind kind;
	size_t off;           /* the field in train_args (K_INT .. K_STR, K_FLAG: a bool) */
	double lo, hi;        /* numeric range, inclusive */
	/* K_CUSTOM: parse v into a; false when malformed (the message is then `want`) */
	bool (*set)(train_args *a, const char *v);
	const char *want;     /* what a value must be, for the usage line */
	const char *help;     /* one or more lines; the default is appended from a defaults-filled train_args */
	/* the default as text, NULL for none shown (K_CUSTOM); others: NULL prints the field */
	const char *(*show)(const train_args *a, char *buf, size_t cap);
};

#define OFF(f) offsetof(train_args, f)

static bool set_model(train_args *a, const char *v) { return (a->d.train.model = burrow_model_parse(v)) != 0; }

static const char *show_model(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", burrow_model_name(a->d.train.model));
	return b;
}

static bool set_aggr(train_args *a, const char *v)
{
	const int k = burrow_aggr_parse(v);
	a->d.train.aggr = k >= 0 ? k : a->d.train.aggr;
	return k >= 0;
}

static const char *show_aggr(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", burrow_aggr_name(a->d.train.aggr));
	return b;
}

static bool set_norm(train_args *a, const char *v)
{
	const int k = burrow_norm_parse(v);
	a->d.train.norm = k >= 0 ? k : a->d.train.norm;
	a->norm_set = k >= 0;
	return k >= 0;
}

static const char *show_norm(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s; layer for --aggr max and sum", burrow_norm_name(a->d.train.norm));
	return b;
}

static const char *show_hidden(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%lld; %d for sage --aggr sum", (long long)a->d.train.hidden, SUM_HIDDEN);
	return b;
}

static const char *show_lr(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%g; %g for sage --aggr sum", a->d.train.lr, SUM_LR);
	return b;
}

static bool set_task(train_args *a, const char *v)
{
	const int k = burrow_task_parse(v);
	a->d.train.task = k >= 0 ? k : a->d.train.task;
	return k >= 0;
}

static const char *show_task(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", burrow_task_name(a->d.train.task));
	return b;
}

static bool set_scorer(train_args *a, const char *v)
{
	const int k = burrow_scorer_parse(v);
	a->d.train.scorer = k >= 0 ? k : a->d.train.scorer;
	return k >= 0;
}

static bool set_sampler(train_args *a, const char *v)
{
	const int k = burrow_sampler_parse(v);
	a->d.train.sampler = k >= 0 ? k : a->d.train.sampler;
	return k >= 0;
}

static bool set_typed_fanout(train_args *a, const char *v)
{
	const bool node = !strcmp(v, "node");
	if (!node && strcmp(v, "relation"))
		return false;
	a->d.train.typed_fanout = node ? BURROW_TYPED_FANOUT_NODE : BURROW_TYPED_FANOUT_RELATION;
	return true;
}

static const char *show_typed_fanout(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", a->d.train.typed_fanout == BURROW_TYPED_FANOUT_NODE ? "node" : "relation");
	return b;
}

static const char *show_sampler(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", burrow_sampler_name(a->d.train.sampler));
	return b;
}

static const char *show_scorer(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", burrow_scorer_name(a->d.train.scorer));
	return b;
}

static bool set_neg_mode(train_args *a, const char *v)
{
	const int k = !strcmp(v, "dst") ? BURROW_NEG_DST : !strcmp(v, "both") ? BURROW_NEG_BOTH : -1;
	a->d.train.neg_mode = k >= 0 ? k : a->d.train.neg_mode;
	return k >= 0;
}

static const char *show_neg_mode(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", a->d.train.neg_mode == BURROW_NEG_BOTH ? "both" : "dst");
	return b;
}

static bool set_optim(train_args *a, const char *v)
{
	int k = !strcmp(v, "adam") ? BURROW_OPTIM_ADAM : !strcmp(v, "adamw") ? BURROW_OPTIM_ADAMW
						    : !strcmp(v, "sgd") ? BURROW_OPTIM_SGD : 0;
	a->d.train.optimizer = k ? k : a->d.train.optimizer;
	return k != 0;
}

static const char *show_optim(const train_args *a, char *b, size_t n)
{
	const int k = a->d.train.optimizer;
	snprintf(b, n, "%s", k == BURROW_OPTIM_ADAM ? "adam" : k == BURROW_OPTIM_ADAMW ? "adamw" : "sgd");
	return b;
}

static bool set_policy(train_args *a, const char *v)
{
	int *p = &a->d.train.cache_policy;
	if (!strcmp(v, "degree"))
		*p = BURROW_CACHE_STATIC;
	else if (!strcmp(v, "clock"))
		*p = BURROW_CACHE_CLOCK;
	else if (!strcmp(v, "none"))
		*p = BURROW_CACHE_NONE;
	else if (!strcmp(v, "profile"))
		*p = BURROW_CACHE_PROFILE;
	else
		return false;
	return true;
}

static bool set_engine(train_args *a, const char *v)
{
	return (a->d.train.store_engine = burrow_store_engine_parse(v)) >= 0;
}
static bool set_cache(train_args *a, const char *v) { return train_cli_parse_cache(v, &a->d.train); }
static bool set_mem(train_args *a, const char *v)
{
	return cli_bytes(v, &a->d.train.mem_bytes) && a->d.train.mem_bytes > 0;
}

static bool set_sparse(train_args *a, const char *v)
{
	int *p = &a->d.train.sparse_input;
	if (!strcmp(v, "auto"))
		*p = BURROW_SPARSE_AUTO;
	else if (!strcmp(v, "on"))
		*p = BURROW_SPARSE_ON;
	else if (!strcmp(v, "off"))
		*p = BURROW_SPARSE_OFF;
	else
		return false;
	return true;
}

static bool set_schedule(train_args *a, const char *v)
{
	const int k = burrow_lr_schedule_parse(v);
	a->d.train.lr_schedule = k >= 0 ? k : a->d.train.lr_schedule;
	return k >= 0;
}

static const char *show_schedule(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", burrow_lr_schedule_name(a->d.train.lr_schedule));
	return b;
}

static bool set_split(train_args *a, const char *v) { return cli_split(v, a->d.train.split); }

static bool set_edge_weight(train_args *a, const char *v)
{
	int64_t c;
	if (!cli_i64(v, &c) || c < 0 || c >= (1 << 20))
		return false;
	a->d.train.edge_weight = true;
	a->d.train.edge_weight_col = (int)c;
	return true;
}

static bool set_gat_edge_features(train_args *a, const char *v)
{
	const bool on = !strcmp(v, "on"), off = !strcmp(v, "off");
	if (on || off)
		a->d.train.gat_edge_features = on;
	return on || off;
}

static const char *show_gat_edge_features(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", a->d.train.gat_edge_features ? "on" : "off");
	return b;
}

static bool set_fanout(train_args *a, const char *v)
{
	a->fanout = v;
	return train_cli_parse_fanout(v, a->d.train.fanout, &a->nfanout);
}

static bool set_eval_fanout(train_args *a, const char *v)
{
	a->eval_fanout = v;
	return train_cli_parse_fanout(v, a->d.train.eval_fanout, &a->neval_fanout);
}

static bool set_eval_splits(train_args *a, const char *v) { return train_cli_parse_splits(v, &a->d.train.eval_splits); }

static bool set_halo(train_args *a, const char *v)
{
	if (!strcmp(v, "exact"))
		a->d.halo = BURROW_HALO_EXACT;
	else if (!strcmp(v, "stale"))
		a->d.halo = BURROW_HALO_STALE;
	else
		return false;
	return true;
}

static bool set_device(train_args *a, const char *v)
{
	if (burrow_device_check(v) == BURROW_E_INVAL)
		return false;
	a->d.train.device = v; /* its availability is checked by the command, before any work */
	return true;
}

static bool set_sampler_device(train_args *a, const char *v)
{
	if (strcmp(v, "auto") && burrow_device_check(v) == BURROW_E_INVAL)
		return false;
	a->d.train.sampler_device = v; /* its availability is checked at the trainer's open */
	return true;
}

static bool set_no_overlap(train_args *a, const char *v)
{
	(void)v;
	a->d.overlap = false;
	return true;
}

static bool set_comm(train_args *a, const char *v) { return (a->d.comm = burrow_comm_parse(v)) >= 0; }

static const char *show_comm(const train_args *a, char *b, size_t n)
{
	snprintf(b, n, "%s", burrow_comm_name(a->d.comm));
	return b;
}

static const char SECTION_MODE[] = "Mode", SECTION_MODEL[] = "Model", SECTION_OPT[] = "Optimizer",
		  SECTION_MB[] = "Mini-batch pipeline", SECTION_RUN[] = "Run", SECTION_OUT[] = "Output",
		  SECTION_DIST[] = "Under mpirun, on a parts directory (one rank per part)",
		  SECTION_HABITS[] = "Early stopping, learning-rate schedule, features", SECTION_DATA[] = "Dataset";

/* The table: every option of burrow train, in --help order. */
static const topt opts[] = {
	{"full-graph", NULL, W_BOTH, SECTION_MODE, K_FLAG, OFF(d.train.full_graph), 0, 0, NULL, NULL,
	 "every epoch is one step over all nodes with all their neighbors (features in memory;\n"
	 "under mpirun each layer's halo rows are exchanged while the inner rows aggregate);\n"
	 "without it: mini-batch, sampled neighborhoods, features gathered through the feature\n"
	 "store while the previous batch computes",
	 NULL},
	{"sparse-input", "S", W_BOTH, SECTION_MODE, K_CUSTOM, 0, 0, 0, set_sparse, "auto, on or off",
	 "the first layer multiplies the features as a sparse matrix (--full-graph: a CSR built\n"
	 "at start, of each rank's rows under mpirun; mini-batch: each batch's rows; the same\n"
	 "sums up to float rounding): auto when at most 5% of them are non-zero (Cora: 1.3%),\n"
	 "on, or off (auto; cpu only: cuda multiplies dense)",
	 NULL},
	{"model", "M", W_BOTH, SECTION_MODEL, K_CUSTOM, 0, 0, 0, set_model,
	 "sage, gcn, gat, mlp, or for typed datasets rgcn, rsage, rgat",
	 "sage, gcn, gat or mlp (under mpirun: not gat); typed datasets: rgcn, rsage, rgat,\n"
	 "or mlp on the target type's own features",
	 show_model},
	{"aggr", "A", W_BOTH, SECTION_MODEL, K_CUSTOM, 0, 0, 0, set_aggr, "mean, max or sum",
	 "sage's neighbor aggregator: mean, max (elementwise over the neighbors) or sum (under\n"
	 "mpirun: not max)",
	 show_aggr},
	{"heads", "K", W_BOTH, SECTION_MODEL, K_INT, OFF(d.train.heads), 1, 64, NULL, NULL,
	 "gat: attention heads, concatenated in hidden layers (they must divide --hidden),\n"
	 "averaged in the output layer",
	 NULL},
	{"attn-dropout", "p", W_BOTH, SECTION_MODEL, K_REAL, OFF(d.train.attn_dropout), 0, 0.99, NULL, NULL,
	 "gat: dropout on the attention coefficients", NULL},
	{"norm", "N", W_BOTH, SECTION_MODEL, K_CUSTOM, 0, 0, 0, set_norm, "batch, layer or none",
	 "after each hidden layer, before its ReLU: batch (the batch's statistics in training,\n"
	 "running averages in inference), layer (each row's own) or none (sage's max and\n"
	 "sum grow with a node's degree, mean does not: layer norm rescales each row)",
	 show_norm},
	{"edge-weight", "COL", TRAIN_ONE, SECTION_MODEL, K_CUSTOM, 0, 0, 0, set_edge_weight, "a column >= 0",
	 "weigh sage's (mean, sum) and gcn's aggregation by column COL of the dataset's edge\n"
	 "features (edge_features.npy; gcn's norms then from the blocks' weighted degrees); cpu",
	 NULL},
	{"residual", NULL, W_BOTH, SECTION_MODEL, K_FLAG, OFF(d.train.residual), 0, 0, NULL, NULL,
	 "add each hidden layer's input to its output where their widths match", NULL},
	{"layers", "L", W_BOTH, SECTION_MODEL, K_INT, OFF(d.train.layers), 1, BURROW_MAX_LAYERS, NULL, NULL, "layers",
	 NULL},
	{"hidden", "H", W_BOTH, SECTION_MODEL, K_I64, OFF(d.train.hidden), 1, 1 << 20, NULL, NULL, "hidden width",
	 show_hidden},
	{"dropout", "p", W_BOTH, SECTION_MODEL, K_REAL, OFF(d.train.dropout), 0, 0.99, NULL, NULL,
	 "after each hidden layer's ReLU", NULL},
	{"optimizer", "O", W_BOTH, SECTION_OPT, K_CUSTOM, 0, 0, 0, set_optim, "adam, adamw or sgd", "adam, adamw or sgd",
	 show_optim},
	{"lr", "r", W_BOTH, SECTION_OPT, K_REAL, OFF(d.train.lr), 1e-12, 1e6, NULL, NULL, "learning rate",
	 show_lr},
	{"weight-decay", "w", W_BOTH, SECTION_OPT, K_REAL, OFF(d.train.weight_decay), 0, 1e6, NULL, NULL,
	 "adam: added to the gradient; adamw: decoupled", NULL},
	{"momentum", "m", W_BOTH, SECTION_OPT, K_REAL, OFF(d.train.momentum), 0, 0.999999, NULL, NULL, "sgd only", NULL},
	/* training habits */
	{"patience", "P", W_BOTH | W_NODEF, SECTION_HABITS, K_INT, OFF(d.train.patience), 0, 1 << 24, NULL, NULL,
	 "early stopping: stop once P evaluations in a row found no better valid accuracy than\n"
	 "the best (0, the default: never); the last line says at which epoch", NULL},
	{"lr-schedule", "S", W_BOTH, SECTION_HABITS, K_CUSTOM, 0, 0, 0, set_schedule, "none, step, cosine or plateau",
	 "the learning rate per epoch, as torch.optim.lr_scheduler's: none; step (StepLR:\n"
	 "times --lr-gamma every --lr-step epochs); cosine (CosineAnnealingLR over --epochs down\n"
	 "to --lr-min); plateau (ReduceLROnPlateau on the valid accuracy: times --lr-gamma\n"
	 "after --lr-patience evaluations without improvement, not below --lr-min)",
	 show_schedule},
	{"lr-step", "N", W_BOTH | W_NODEF, SECTION_HABITS, K_INT, OFF(d.train.lr_step), 1, 1 << 24, NULL, NULL,
	 "step: epochs between reductions (required with --lr-schedule step)", NULL},
	{"lr-gamma", "G", W_BOTH, SECTION_HABITS, K_REAL, OFF(d.train.lr_gamma), 1e-9, 0.999999, NULL, NULL,
	 "step, plateau: the factor of each reduction", NULL},
	{"lr-min", "r", W_BOTH, SECTION_HABITS, K_REAL, OFF(d.train.lr_min), 0, 1e6, NULL, NULL,
	 "cosine: the rate it anneals to; plateau: its floor", NULL},
	{"lr-patience", "P", W_BOTH, SECTION_HABITS, K_INT, OFF(d.train.lr_patience), 0, 1 << 24, NULL, NULL,
	 "plateau: evaluations without improvement tolerated before a reduction", NULL},
	{"normalize-features", NULL, W_BOTH, SECTION_HABITS, K_FLAG, OFF(d.train.normalize_features), 0, 0, NULL, NULL,
	 "divide each feature row by its sum, rows summing to 0 left as they are (PyG's\n"
	 "NormalizeFeatures on non-negative features), in training, evaluation, embed and\n"
	 "predict (recorded in checkpoints; not for typed datasets nor mpirun mini-batch on\n"
	 "cuda)", NULL},
	{"batch", "B", W_BOTH | W_MB, SECTION_MB, K_I64, OFF(d.train.batch_size), 1, (double)((int64_t)1 << 40), NULL,
	 NULL, "training nodes per batch (under mpirun: per rank, a step covers up to K x B)", NULL},
	{"batch-size", "B", W_BOTH | W_MB, SECTION_MB, K_I64, OFF(d.train.batch_size), 1, (double)((int64_t)1 << 40),
	 NULL, NULL, "the same as --batch", NULL},
	{"fanout", "a,b,c", W_BOTH | W_MB, SECTION_MB, K_CUSTOM, 0, 0, 0, set_fanout,
	 "positive integers or -1 separated by commas",
	 "neighbors per layer, input layer first; -1 = all; without --layers\n"
	 "it sets the number of layers (default 5 x (L - l): 15,10,5 for 3 layers; mlp\n"
	 "samples none)",
	 NULL},
	{"sampler", "S", TRAIN_ONE | W_MB, SECTION_MB, K_CUSTOM, 0, 0, 0, set_sampler, "neighbor, labor or labor-star",
	 "how training batches sample: neighbor (each row's fanout drawn uniformly on its own)\n"
	 "or labor (LABOR: one variate per source node and layer shared by every row, each\n"
	 "row keeping its fanout of smallest variate: the same fanout and per-row odds, fewer\n"
	 "distinct input rows to read; node tasks, homogeneous or typed; cpu sampling,\n"
	 "or cuda for homogeneous ones)\n"
	 "or labor-star (LABOR-*: rows also prefer the sources other rows are likely to take,\n"
	 "each keeping its fanout in expectation, sage's mean weighing the picks; fewer\n"
	 "input rows again; node tasks; --sampler-device auto samples it on the cpu; typed:\n"
	 "per relation, rsage's and rgcn's means weighing the picks, other models not)",
	 show_sampler},
	{"rel-fanout", "R=a,b", TRAIN_ONE, SECTION_MB, K_STR, OFF(d.train.rel_fanout), 0, 0, NULL, NULL,
	 "typed datasets: fanouts of one relation, one per layer, overriding --fanout for it:\n"
	 "REL=a,b[;REL=...], REL its name or src___name___dst (every relation: --fanout)",
	 NULL},
	{"task", "T", W_BOTH, SECTION_MODEL, K_CUSTOM, 0, 0, 0, set_task, "auto, node, multilabel or link",
	 "what is learned: node (one class per node), multilabel (binary labels per node) or\n"
	 "link (the dataset's edge splits); auto: from the dataset's labels and edge splits\n"
	 "(under mpirun: node or link, in mini-batches for link)",
	 show_task},
	{"scorer", "S", W_BOTH, SECTION_MODEL, K_CUSTOM, 0, 0, 0, set_scorer, "dot or mlp",
	 "link: how a pair of embeddings is scored: dot (their dot product) or mlp (two\n"
	 "layers over their elementwise product, ReLU between)",
	 show_scorer},
	{"neg", "K", W_BOTH | W_MB, SECTION_MB, K_INT, OFF(d.train.neg), 0, 1024, NULL, NULL,
	 "link: negatives per training edge in a batch (the edge's source, a uniform node)", NULL},
	{"embed-types", NULL, TRAIN_ONE, SECTION_MODEL, K_FLAG, OFF(d.train.embed_types), 0, 0, NULL, NULL,
	 "typed datasets: learn an embedding per node of each type without features (sparse\n"
	 "Adam on the rows a batch touches; else such a type is refused: see prep --fill mean)",
	 NULL},
	{"embed-dim", "D", TRAIN_ONE | W_NODEF, SECTION_MODEL, K_I64, OFF(d.train.embed_dim), 1, 1 << 20, NULL, NULL,
	 "the learned embeddings' width: a dataset without features (ogbl-ddi) learns one per\n"
	 "node, its first layer's input (default --hidden); a typed dataset's featureless types\n"
	 "under --embed-types (default the target type's feature width)", NULL},
	{"max-batches", "N", W_BOTH | W_MB | W_NODEF, SECTION_MB, K_I64, OFF(d.train.max_batches), 0,
	 (double)INT64_MAX, NULL, NULL, "end an epoch after N batches (0, the default: all)", NULL},
	{"prefetch", "P", W_BOTH | W_MB, SECTION_MB, K_INT, OFF(d.train.prefetch), 0, 64, NULL, NULL,
	 "batches sampled and gathered ahead of the one computing (under mpirun: > 0 keeps one\n"
	 "batch's remote rows in flight while the previous one computes)",
	 NULL},
	{"cache", "SIZE", W_BOTH | W_MB, SECTION_MB, K_CUSTOM, 0, 0, 0, set_cache,
	 "bytes (K/M/G suffixes) or a percentage up to 100%",
	 "feature cache: bytes (K/M/G suffixes) or a percentage of the features (100% = all in\n"
	 "memory) (auto: all when they fit in a quarter of the memory, or of a cgroup's limit, else\n"
	 "that quarter)",
	 NULL},
	{"cache-policy", "P", W_BOTH | W_MB, SECTION_MB, K_CUSTOM, 0, 0, 0, set_policy, "degree, profile, clock or none",
	 "degree: the highest-degree rows, filled at start; profile: the rows most often input\n"
	 "nodes of 64 batches sampled at start (node tasks); clock: rows read lately, second\n"
	 "chance; none (degree)",
	 NULL},
	{"engine", "E", W_BOTH | W_MB, SECTION_MB, K_CUSTOM, 0, 0, 0, set_engine, "uring, pread or mmap",
	 "feature reads: uring, pread or mmap (uring)", NULL},
	{"epochs", "E", W_BOTH, SECTION_RUN, K_INT, OFF(d.train.epochs), 0, 1 << 24, NULL, NULL, "epochs", NULL},
	{"seed", "S", W_BOTH, SECTION_RUN, K_U64, OFF(d.train.seed), 0, (double)INT64_MAX, NULL, NULL,
	 "weights, dropout and batches", NULL},
	{"split", "a,b,c", TRAIN_ONE, SECTION_RUN, K_CUSTOM, 0, 0, 0, set_split,
	 "three fractions >= 0 summing to at most 1 (such as 0.6,0.2,0.2)",
	 "for a graph without splits: a random split of the labeled nodes from --seed, M of them:\n"
	 "round(a M) train, round(b M) valid, the rest test when a + b + c = 1 (else round(c M));\n"
	 "burrow eval takes the same --split to score on it",
	 NULL},
	{"eval-every", "N", W_BOTH, SECTION_RUN, K_INT, OFF(every), 0, 1 << 24, NULL, NULL,
	 "evaluate every N epochs and after the last; 0 = never", NULL},
	{"mem", "BYTES", TRAIN_ONE, SECTION_RUN, K_CUSTOM, 0, 0, 0, set_mem, "a byte count (K/M/G suffixes)",
	 "inference keeps a layer's embeddings in memory up to half of this, else spills them\n"
	 "to --scratch (no limit); under mpirun each rank holds its part's embeddings in memory;\n"
	 "typed datasets: --prefetch + 1 batches and a step must fit it (else the memory\n"
	 "available): fewer batches ahead, or a refusal at start",
	 NULL},
	{"eval-chunk", "N", TRAIN_ONE, SECTION_RUN, K_I64, OFF(d.train.eval_chunk), 1, 1 << 30, NULL, NULL,
	 "destination rows per inference chunk (under mpirun evaluation is one full-graph pass)", NULL},
	{"eval-fanout", "a,b,c", TRAIN_ONE, SECTION_RUN, K_CUSTOM, 0, 0, 0, set_eval_fanout,
	 "positive integers or -1 separated by commas, one per layer",
	 "evaluate on sampled neighborhoods of the split nodes, --batch at a time, instead of\n"
	 "layer-wise inference over all nodes: memory of one batch, no N x hidden embeddings\n"
	 "(for graphs whose embeddings fit neither memory nor --scratch) (off)",
	 NULL},
	{"eval-splits", "S", W_BOTH, SECTION_RUN, K_CUSTOM, 0, 0, 0, set_eval_splits,
	 "split names train, valid, test separated by commas",
	 "the splits evaluation scores (train,valid,test; valid,test with --eval-fanout, where\n"
	 "scoring the train split would cost most of the evaluation)",
	 NULL},
	{"scratch", "DIR", TRAIN_ONE, SECTION_RUN, K_STR, OFF(d.train.scratch_dir), 0, 0, NULL, NULL,
	 "where spills go ($TMPDIR or /tmp)", NULL},
	{"device", "D", W_BOTH, SECTION_RUN, K_CUSTOM, 0, 0, 0, set_device, "cpu, cuda or cuda:N",
	 "where the model computes: cpu, cuda (= cuda:0) or cuda:N (cpu; under mpirun, both\n"
	 "modes, cuda is cuda:<local rank mod GPUs> and cuda:N puts every rank on N)",
	 NULL},
	{"sampler-device", "D", W_BOTH | W_MB, SECTION_RUN, K_CUSTOM, 0, 0, 0, set_sampler_device,
	 "auto, cpu, cuda or cuda:N",
	 "where mini-batches are sampled: cpu, cuda (= cuda:0), cuda:N, or auto: the --device\n"
	 "when its backend has a sampler (cuda does), else cpu; the batches are the same on\n"
	 "every device (under mpirun: where each rank draws the rows it expands) (auto)",
	 NULL},
	{"tf32", NULL, W_BOTH, SECTION_RUN, K_FLAG, OFF(d.train.tf32), 0, 0, NULL, NULL,
	 "cuda: let GEMMs round their inputs to TF32 (faster, ~1e-3 relative; off: float32)", NULL},
	{"threads", "T", W_BOTH | W_NODEF, SECTION_RUN, K_INT, OFF(d.train.threads), 1, 4096, NULL, NULL,
	 "compute's OpenMP threads, GEMMs split over them (one process: all cores, shared with\n"
	 "the pipeline's light sampling and read threads; under mpirun: the node's cores over\n"
	 "the ranks on it)",
	 NULL},
	{"log", "FILE", W_BOTH, SECTION_OUT, K_STR, OFF(log), 0, 0, NULL, NULL,
	 "one JSON object per epoch, then one with \"final\": true (under mpirun: rank 0)", NULL},
	{"checkpoint", "DIR", W_BOTH, SECTION_OUT, K_STR, OFF(ckpt), 0, 0, NULL, NULL,
	 "save DIR/last.ckpt every epoch (--checkpoint-every) and DIR/best.ckpt at each new best\n"
	 "valid accuracy (atomically; under mpirun rank 0 writes them)",
	 NULL},
	{"checkpoint-every", "N", W_BOTH, SECTION_OUT, K_INT, OFF(ckpt_every), 1, 1 << 24, NULL, NULL,
	 "write last.ckpt every N epochs and after the last one instead of every epoch (a\n"
	 "--resume after a kill repeats the epochs since the last one written, to the same bits)",
	 NULL},
	{"checkpoint-best-only", NULL, W_BOTH, SECTION_OUT, K_FLAG, OFF(best_only), 0, 0, NULL, NULL,
	 "write best.ckpt alone, no last.ckpt (so no --resume; needs evaluation: --eval-every > 0)",
	 NULL},
	{"resume", NULL, W_BOTH, SECTION_OUT, K_FLAG, OFF(resume), 0, 0, NULL, NULL,
	 "continue from DIR/last.ckpt (its seed, epoch and optimizer state)", NULL},
	{"quiet", NULL, W_BOTH, SECTION_OUT, K_FLAG, OFF(quiet), 0, 0, NULL, NULL, "no progress bar", NULL},
	{"halo", "exact|stale", TRAIN_DIST | W_FG, SECTION_DIST, K_CUSTOM, 0, 0, 0, set_halo, "exact or stale",
	 "--full-graph: exact waits for each layer's halo rows; stale uses last epoch's, so the\n"
	 "exchange overlaps the whole layer (PipeGCN) (exact)",
	 NULL},
	{"no-overlap", NULL, TRAIN_DIST | W_FG, SECTION_DIST, K_CUSTOM, 0, 0, 0, set_no_overlap, "",
	 "--full-graph: post, wait, then aggregate (the serialized baseline)", NULL},
	{"boundary-sample", "p", TRAIN_DIST | W_FG, SECTION_DIST, K_REAL, OFF(d.boundary_sample), 1e-9, 1, NULL, NULL,
	 "--full-graph: exchange a random fraction p of the boundary nodes each epoch, rescaled\n"
	 "by 1/p (BNS-GCN); evaluation uses all of them",
	 NULL},
	{"grad-overlap", NULL, TRAIN_DIST, SECTION_DIST, K_FLAG, OFF(d.grad_overlap), 0, 0, NULL, NULL,
	 "all-reduce each layer's gradients as soon as its backward is done, while the layers\n"
	 "below run backward (default, and with --no-overlap: one all-reduce after the backward)",
	 NULL},
	{"comm", "C", TRAIN_DIST, SECTION_DIST, K_CUSTOM, 0, 0, 0, set_comm,
	 "auto, mpi, nccl or staged",
	 "how ranks communicate: auto, mpi (host buffers), nccl (GPU buffers, one GPU per rank)\n"
	 "or staged (device -> pinned host -> MPI, ranks sharing a GPU; on the CPU, copies);\n"
	 "auto: mpi with --device cpu, with --device cuda (--full-graph; each rank on\n"
	 "cuda:<local rank mod GPUs>) nccl where it starts, else staged",
	 show_comm},
	{"edge-features", "on|off", TRAIN_ONE, SECTION_MODEL, K_CUSTOM, 0, 0, 0, set_gat_edge_features, "on or off",
	 "gat: each edge's attention logit adds <W_e f_ij, a_edge> from the dataset's\n"
	 "edge features when it has them (PyG's GATConv(edge_dim)); off: the nodes\n"
	 "alone; cpu",
	 show_gat_edge_features},
	{"neg-mode", "M", TRAIN_ONE | W_MB, SECTION_MB, K_CUSTOM, 0, 0, 0, set_neg_mode, "dst or both",
	 "link: a negative of the edge (u, v) is (u, w), w a uniform node (dst), or a pair of\n"
	 "uniform nodes (both: PyG LinkNeighborLoader's binary negatives)",
	 show_neg_mode},
	{"split-name", "NAME", TRAIN_ONE, SECTION_DATA, K_STR, OFF(split_name), 0, 0, NULL, NULL,
	 "train and evaluate on the named split split/NAME/ of the dataset\n"
	 "(import --split-name, --add-split; default: split/)", NULL},
	{"typed-fanout", "M", TRAIN_ONE | W_MB, SECTION_MB, K_CUSTOM, 0, 0, 0, set_typed_fanout, "relation or node",
	 "typed datasets: what --fanout counts: relation (each destination draws it in every\n"
	 "relation into its type: the relations multiply a batch) or node (each destination\n"
	 "draws it among all its in-edges of every relation, as DGL's MAG240M baseline does;\n"
	 "--rel-fanout unset)",
	 show_typed_fanout},
	{"labor-batch-dependency", "K", TRAIN_ONE | W_MB, SECTION_MB, K_INT, OFF(d.train.labor_batch_dependency), 0,
	 1 << 20, NULL, NULL,
	 "--sampler labor or labor-star: consecutive batches share LABOR's variates in groups\n"
	 "of K, sliding from one group's to the next: each batch keeps its odds, consecutive\n"
	 "ones overlap (GraphBolt's batch_dependency; 0, 1: off)",
	 NULL},
};
#define NOPTS ((int)(sizeof opts / sizeof *opts))
#define OPT_VAL 256 /* getopt_long's value of the first option */

/* The defaults: the library's, then the command line's own. */
static void defaults(train_args *a)
{
	memset(a, 0, sizeof *a);
	burrow_dist_defaults(&a->d);
	a->d.train.full_graph = false; /* mini-batch unless --full-graph, in both modes */
	a->every = 1;
	a->ckpt_every = 1;
}

static const char *mode_name(int mode) { return mode == TRAIN_DIST ? "under mpirun" : "in one process"; }

/* A usage line when speaking; always the usage exit code. */
static int usage(bool speak, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage(bool speak, const char *fmt, ...)
{
	if (!speak)
		return EXIT_USAGE;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return cli_usage("train", "%s", msg);
}

static int set_value(const topt *t, train_args *a, const char *v, bool speak)
{
	char *p = (char *)a + t->off;
	int64_t i;
	double f;
	switch (t->kind) {
	case K_FLAG: *(bool *)p = true; return 0;
	case K_STR: *(const char **)p = v; return 0;
	case K_CUSTOM:
		if (!t->set(a, v))
			return usage(speak, "--%s wants %s, got '%s'", t->name, t->want, v);
		return 0;
	case K_REAL:
		if (!cli_f64(v, &f) || !(f >= t->lo && f <= t->hi))
			return usage(speak, "--%s wants a number in [%g, %g], got '%s'", t->name, t->lo, t->hi, v);
		*(double *)p = f;
		return 0;
	default:
		if (!cli_i64(v, &i) || (double)i < t->lo || (double)i > t->hi)
			return usage(speak, "--%s wants an integer in [%.0f, %.0f], got '%s'", t->name, t->lo, t->hi, v);
		if (t->kind == K_INT)
			*(int *)p = (int)i;
		else if (t->kind == K_I64)
			*(int64_t *)p = i;
		else
			*(uint64_t *)p = (uint64_t)i;
		return 0;
	}
}

/* The default of t as text, or NULL for none shown. */
static const char *show_default(const topt *t, const train_args *a, char *b, size_t n)
{
	const char *p = (const char *)a + t->off;
	if (t->where & W_NODEF)
		return NULL;
	if (t->show)
		return t->show(a, b, n);
	switch (t->kind) {
	case K_CUSTOM: return NULL;
	case K_INT: snprintf(b, n, "%d", *(const int *)p); return b;
	case K_I64: snprintf(b, n, "%lld", (long long)*(const int64_t *)p); return b;
	case K_U64: snprintf(b, n, "%llu", (unsigned long long)*(const uint64_t *)p); return b;
	case K_REAL: snprintf(b, n, "%g", *(const double *)p); return b;
	default: return NULL;
	}
}

#define HELP_WIDTH 70 /* columns of help text beside the 24 of the names */

static void help(void)
{
	train_args def;
	defaults(&def);
	printf("usage: burrow train DIR [options]\n"
	       "       mpirun [--allow-run-as-root] [--oversubscribe] -np K burrow train DIR/parts-K [options]\n\n"
	       "Train a node classifier on the dataset directory DIR and report OGB's accuracy\n"
	       "(correct / total on the valid and test splits; the test accuracy reported is the one at\n"
	       "the epoch with the best valid accuracy). On a parts directory written by `burrow\n"
	       "partition`, under mpirun, rank i trains on part i and the gradients are all-reduced\n"
	       "every step so the model replicas stay equal; rank 0 prints the table and writes --log.\n"
	       "Every option applies to both unless it says otherwise; the others are refused naming\n"
	       "the mode.\n");
	const char *group = NULL;
	for (int i = 0; i < NOPTS; i++) {
		const topt *t = &opts[i];
		if (t->group != group) {
			group = t->group;
			printf("%s:\n", group);
		}
		char name[48], dflt[64];
		snprintf(name, sizeof name, "--%s%s%s", t->name, t->arg ? " " : "", t->arg ? t->arg : "");
		const char *d = show_default(t, &def, dflt, sizeof dflt);
		const char *only = (t->where & W_BOTH) == TRAIN_ONE ? " [one process only]"
				   : (t->where & W_BOTH) == TRAIN_DIST ? " [mpirun only]" : "";
		/* the help, its default and mode appended, wrapped at HELP_WIDTH under the name */
		char text[1024];
		snprintf(text, sizeof text, "%s%s%s%s%s", t->help, d ? " (" : "", d ? d : "", d ? ")" : "", only);
		for (char *q = text; *q; q++)
			if (*q == '\n')
				*q = ' ';
		const char *h = text;
		bool first = strlen(name) < 22; /* else the name on a line of its own */
		if (!first)
			printf("  %s\n", name);
		while (*h) {
			int len = (int)strlen(h);
			if (len > HELP_WIDTH) { /* break at the last space that fits */
				len = HELP_WIDTH;
				while (len > 0 && h[len] != ' ')
					len--;
				if (len == 0)
					len = HELP_WIDTH;
			}
			printf("  %-22s%.*s\n", first ? name : "", len, h);
			first = false;
			h += len;
			while (*h == ' ')
				h++;
		}
	}
	printf("Several machines: mpirun --hostfile hosts -np K burrow train DIR/parts-K, with the same\n"
	       "binary and the parts directory at the same path on every machine.\n");
}

int train_args_parse(int argc, char **argv, int mode, bool speak, train_args *a)
{
	struct option lo[sizeof opts / sizeof *opts + 2];
	/* getopt_long's value of option i: OPT_VAL + i, clear of the characters it returns itself
	 * (':', '?', 'h'), which the table's indices reached once it held 58 options */
	for (int i = 0; i < NOPTS; i++)
		lo[i] = (struct option){opts[i].name, opts[i].arg ? required_argument : no_argument, 0, OPT_VAL + i};
	lo[NOPTS] = (struct option){"help", no_argument, 0, 'h'};
	lo[NOPTS + 1] = (struct option){0, 0, 0, 0};
	defaults(a);
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		if (c == 'h') {
			if (speak)
				help();
			return -1;
		}
		if (c == '?')
			return optopt ? usage(speak, "unknown option '-%c'", optopt)
				      : usage(speak, "unknown option '%s'", argv[optind - 1]);
		if (c == ':')
			return usage(speak, "option '%s' needs a value", argv[optind - 1]);
		const topt *t = &opts[c - OPT_VAL];
		if (!(t->where & mode))
			return usage(speak, "--%s does not apply %s%s", t->name, mode_name(mode),
				     mode == TRAIN_ONE ? " (it is an option of mpirun on a parts directory)"
				     : !strncmp(t->help, "typed datasets", 14) ? " (typed datasets train in one process)"
										: " (each rank evaluates its part in memory)");
		int st = set_value(t, a, t->arg ? optarg : NULL, speak);
		if (st)
			return st;
		if (!strcmp(t->name, "layers"))
			a->layers_set = true;
		if (!strcmp(t->name, "hidden"))
			a->hidden_set = true;
		if (!strcmp(t->name, "lr"))
			a->lr_set = true;
		if (!strcmp(t->name, "checkpoint-every"))
			a->every_set = true;
		if (t->where & W_MB)
			a->mb_only = t->name;
		if (t->where & W_FG)
			a->fg_only = t->name;
	}
	burrow_train_opts *o = &a->d.train;
	if (!a->norm_set && o->model == BURROW_MODEL_SAGE && o->aggr != BURROW_AGGR_MEAN)
		o->norm = BURROW_NORM_LAYER; /* chosen on Cora's valid split (docs/train.md) */
	if (!a->hidden_set && o->model == BURROW_MODEL_SAGE && o->aggr == BURROW_AGGR_SUM)
		o->hidden = SUM_HIDDEN; /* likewise */
	if (!a->lr_set && o->model == BURROW_MODEL_SAGE && o->aggr == BURROW_AGGR_SUM)
		o->lr = SUM_LR;
	if (o->full_graph && a->mb_only)
		return usage(speak, "--%s is a mini-batch option: drop --full-graph or --%s", a->mb_only, a->mb_only);
	if (!o->full_graph && a->fg_only)
		return usage(speak, "--%s applies to --full-graph training", a->fg_only);
	if (a->d.boundary_sample < 1.0 && a->d.halo == BURROW_HALO_STALE)
		return usage(speak, "--boundary-sample and --halo stale do not combine: choose one");
	if (mode == TRAIN_DIST && (o->model == BURROW_MODEL_GAT || (o->model == BURROW_MODEL_SAGE && o->aggr == BURROW_AGGR_MAX)))
		return usage(speak, "%s does not apply under mpirun (the halo exchange splits each row's neighbors; "
				    "gat and max need them all at once)", o->model == BURROW_MODEL_GAT ? "--model gat" : "--aggr max");
	if (a->resume && !a->ckpt)
		return usage(speak, "--resume needs --checkpoint DIR");
	if ((a->every_set || a->best_only) && !a->ckpt)
		return usage(speak, "--%s needs --checkpoint DIR", a->best_only ? "checkpoint-best-only" : "checkpoint-every");
	if (a->best_only && (a->resume || a->every_set || a->every == 0))
		return usage(speak, "--checkpoint-best-only writes no last.ckpt%s",
			     a->resume ? ": there is none to --resume from" : a->every_set ? ": drop --checkpoint-every"
				     : " and best.ckpt needs evaluation: drop --eval-every 0");
	if (o->lr_schedule == BURROW_LR_STEP && o->lr_step < 1)
		return usage(speak, "--lr-schedule step needs --lr-step N (epochs between reductions)");
	if (o->lr_min > o->lr)
		return usage(speak, "--lr-min %g is above --lr %g", o->lr_min, o->lr);
	if (argc - optind != 1)
		return usage(speak, "expected one %s directory", mode == TRAIN_DIST ? "parts" : "dataset");
	a->dir = argv[optind];
	if (train_cli_layers_fanout(speak ? "train" : NULL, o, a->layers_set, a->fanout, a->nfanout))
		return EXIT_USAGE;
	if (a->eval_fanout && a->neval_fanout != o->layers)
		return usage(speak, "--eval-fanout %s has %d value%s but the model has %d layers", a->eval_fanout,
			     a->neval_fanout, a->neval_fanout == 1 ? "" : "s", o->layers);
	return 0;
}

/* n int32 values as a JSON array, or null when the first is 0 (not given). */
static cJSON *int_array(const int32_t *v, int n)
{
	if (n < 1 || v[0] == 0)
		return cJSON_CreateNull();
	cJSON *arr = cJSON_CreateArray();
	for (int i = 0; arr && i < n; i++)
		cJSON_AddItemToArray(arr, cJSON_CreateNumber(v[i]));
	return arr;
}

/* --eval-splits as resolved: the names of the splits evaluation scores. */
static cJSON *splits_json(const burrow_train_opts *o)
{
	static const char *const names[3] = {"train", "valid", "test"};
	unsigned m = o->eval_splits ? o->eval_splits
		     : o->eval_fanout[0] ? (unsigned)(BURROW_EVAL_VALID | BURROW_EVAL_TEST) : (unsigned)BURROW_EVAL_ALL;
	cJSON *arr = cJSON_CreateArray();
	for (int k = 0; arr && k < 3; k++)
		if (m & 1u << k)
			cJSON_AddItemToArray(arr, cJSON_CreateString(names[k]));
	return arr;
}

/* A K_CUSTOM option's value; one this function does not know: its --help default as text
 * (from a, so the value given), else null. */
static cJSON *custom_json(const topt *t, const train_args *a)
{
	const burrow_train_opts *o = &a->d.train;
	static const char *const sparse[3] = {"auto", "on", "off"}, *const policy[4] = {"degree", "clock", "none", "profile"};
	char b[64];
	if (t->set == set_sparse)
		return cJSON_CreateString(sparse[o->sparse_input % 3]);
	if (t->set == set_model || t->set == set_aggr || t->set == set_task || t->set == set_optim || t->set == set_comm)
		return cJSON_CreateString(t->show(a, b, sizeof b));
	if (t->set == set_norm)
		return cJSON_CreateString(burrow_norm_name(o->norm));
	if (t->set == set_fanout) {
		int32_t f[BURROW_MAX_LAYERS];
		for (int l = 0; l < o->layers; l++)
			f[l] = burrow_train_fanout(o, l);
		return int_array(f, o->model == BURROW_MODEL_MLP ? 0 : o->layers);
	}
	if (t->set == set_eval_fanout)
		return int_array(o->eval_fanout, o->layers);
	if (t->set == set_eval_splits)
		return splits_json(o);
	if (t->set == set_cache) {
		if (o->cache_fraction >= 0) {
			snprintf(b, sizeof b, "%g%%", o->cache_fraction * 100);
			return cJSON_CreateString(b);
		}
		return o->cache_bytes == BURROW_CACHE_AUTO ? cJSON_CreateString("auto") : cJSON_CreateNumber((double)o->cache_bytes);
	}
	if (t->set == set_policy)
		return cJSON_CreateString(policy[o->cache_policy == BURROW_CACHE_CLOCK	  ? 1
						 : o->cache_policy == BURROW_CACHE_NONE	  ? 2
						 : o->cache_policy == BURROW_CACHE_PROFILE ? 3
											   : 0]);
	if (t->set == set_engine)
		return cJSON_CreateString(burrow_store_engine_name(o->store_engine));
	if (t->set == set_split)
		return o->split[0] + o->split[1] + o->split[2] > 0 ? cJSON_CreateDoubleArray(o->split, 3) : cJSON_CreateNull();
	if (t->set == set_mem)
		return cJSON_CreateNumber((double)o->mem_bytes);
	if (t->set == set_device)
		return cJSON_CreateString(o->device ? o->device : "cpu");
	if (t->set == set_sampler_device)
		return cJSON_CreateString(o->sampler_device ? o->sampler_device : "auto");
	if (t->set == set_halo)
		return cJSON_CreateString(a->d.halo == BURROW_HALO_STALE ? "stale" : "exact");
	if (t->set == set_no_overlap)
		return cJSON_CreateBool(!a->d.overlap);
	const char *shown = t->show ? t->show(a, b, sizeof b) : NULL;
	return shown ? cJSON_CreateString(shown) : cJSON_CreateNull();
}

/* A table option's value in a (its field by kind, or custom_json). */
static cJSON *value_json(const topt *t, const train_args *a)
{
	const char *p = (const char *)a + t->off;
	switch (t->kind) {
	case K_FLAG: return cJSON_CreateBool(*(const bool *)p);
	case K_INT: return cJSON_CreateNumber(*(const int *)p);
	case K_I64: return cJSON_CreateNumber((double)*(const int64_t *)p);
	case K_U64: return cJSON_CreateNumber((double)*(const uint64_t *)p);
	case K_REAL: return cJSON_CreateNumber(*(const double *)p);
	case K_STR: return *(const char *const *)p ? cJSON_CreateString(*(const char *const *)p) : cJSON_CreateNull();
	default: return custom_json(t, a);
	}
}

/* An option that names another's field (--batch-size for --batch): written once. */
static bool is_alias(int i)
{
	for (int j = 0; j < i && opts[i].kind != K_CUSTOM; j++)
		if (opts[j].kind == opts[i].kind && opts[j].off == opts[i].off)
			return true;
	return false;
}

bool train_args_json(const train_args *a, int mode, cJSON *obj)
{
	const bool fg = a->d.train.full_graph;
	bool ok = cJSON_AddStringToObject(obj, "mode", fg ? "full-graph" : "mini-batch") != NULL;
	for (int i = 0; i < NOPTS && ok; i++) {
		const topt *t = &opts[i];
		if (!strcmp(t->name, "full-graph") || is_alias(i))
			continue;
		char key[48];
		snprintf(key, sizeof key, "%s", t->name);
		for (char *q = key; *q; q++)
			*q = *q == '-' ? '_' : *q;
		const bool applies = (t->where & mode) && !((t->where & W_MB) && fg) && !((t->where & W_FG) && !fg);
		cJSON *v = applies ? value_json(t, a) : cJSON_CreateNull();
		ok = v && cJSON_AddItemToObject(obj, key, v);
		if (v && !ok)
			cJSON_Delete(v);
	}
	return ok;
}
