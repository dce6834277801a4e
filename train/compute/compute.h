/* train.h: the training engine's internals: tensors, blocks, the compute backend's ops table
 * and its dispatchers, layers, models, optimizers, and the batch interface through which
 * full-graph training and the sampler + feature store pipeline feed the same forward and
 * backward passes. */
#ifndef BURROW_TRAIN_H
#define BURROW_TRAIN_H

#include "../core/internal.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define BW_MAX_LAYERS 8

/* ------------------------------------------------------------ tensors (train/tensor.c) */

/* A dense float32 matrix, row-major. Owned tensors allocate through bw_aligned_alloc and
 * grow on demand (bw_tensor_reshape); borrowed ones wrap caller memory and never grow.
 * A zeroed struct is an empty owned tensor. */
typedef struct bw_tensor {
	float *data;    /* [rows, cols]; owned when `owned`, else borrowed */
	int64_t rows, cols;
	int64_t cap;    /* elements allocated (owned tensors only) */
	bool owned;
} bw_tensor;

/* An owned tensor of the shape, zero-filled. */
int bw_tensor_alloc(bw_tensor *t, int64_t rows, int64_t cols);
/* Give t the shape; an owned tensor grows (contents then undefined), a borrowed one must
 * already hold rows * cols elements. */
int bw_tensor_reshape(bw_tensor *t, int64_t rows, int64_t cols);
/* A borrowed view of caller memory. */
bw_tensor bw_tensor_view(float *data, int64_t rows, int64_t cols);
/* A borrowed view of rows [r0, r0 + n) of t. */
bw_tensor bw_tensor_rows(const bw_tensor *t, int64_t r0, int64_t n);
/* Free an owned tensor's memory (borrowed: forget it); t becomes empty. */
void bw_tensor_free(bw_tensor *t);

/* ------------------------------------------------------------ blocks (train/block.c) */

/* One layer's message-flow graph, a CSR from destination rows to source columns in local
 * ids (DGL's convention): the destination nodes are the first num_dst source nodes, so
 * h_dst is rows [0, num_dst) of the layer's input. A full graph is the block with
 * num_dst = num_src = N. The sampler's blocks and the evaluation chunks have this shape.
 * bw_block_prepare derives what the backward pass and GCN need; the block owns those. */
typedef struct bw_block {
	int64_t num_dst, num_src;
	const int64_t *indptr;  /* [num_dst + 1], borrowed: row i's sources are indices[indptr[i] .. indptr[i+1]) */
	const int32_t *indices; /* local source ids in [0, num_src), borrowed */
	/* GCN normalization 1/sqrt(deg + 1) per node (a self loop added); set them (borrowed)
	 * before bw_block_prepare to use degrees from outside the block (the whole graph's),
	 * else prepare computes them from the block: see bw_block_prepare. */
	const float *dst_norm;  /* [num_dst] */
	const float *src_norm;  /* [num_src] */
	/* derived by bw_block_prepare (owned) */
	int64_t *t_indptr;      /* [num_src + 1]: the transpose, source -> destination rows */
	int32_t *t_indices;     /* [num_edges] destination rows, ascending within each source */
	float *norm_buf;        /* storage of computed norms */
} bw_block;

/* A block over caller arrays (borrowed); nothing derived yet. */
void bw_block_init(bw_block *b, int64_t num_dst, int64_t num_src, const int64_t *indptr, const int32_t *indices);
/* Full structural check: offsets monotone, ids in [0, num_src), num_dst <= num_src. */
int bw_block_check(const bw_block *b);
/* Edges of the block. */
static inline int64_t bw_block_edges(const bw_block *b) { return b->indptr[b->num_dst] - b->indptr[0]; }
/* Build the transpose (for backward passes) and, when `gcn` and no norms were set, the GCN
 * norms from the block: dst i and src j < num_dst use row i's length + 1; a source that is
 * not a destination uses the number of rows it appears in + 1. Idempotent. */
int bw_block_prepare(bw_block *b, bool transpose, bool gcn);
/* Free what prepare derived; the borrowed arrays are left alone. */
void bw_block_release(bw_block *b);
/* GCN norms from the whole graph's degrees: out[k] = 1/sqrt(deg(ids[k]) + 1), where deg is
 * g's row length (ids NULL: k itself). */
void bw_gcn_norm_from_csr(const burrow_csr *g, const int64_t *ids, int64_t n, float *out, int threads);

/* ------------------------------------------------------------ backend (core/backend.c, train/ops_cpu.c) */

typedef enum bw_agg {
	BW_AGG_SUM = 0,  /* out_i = sum_{j in N(i)} x_j */
	BW_AGG_MEAN = 1, /* out_i = mean_{j in N(i)} x_j (0 when N(i) is empty) */
	BW_AGG_GCN = 2,  /* out_i = sum_{j in N(i) + {i}} dst_norm_i src_norm_j x_j */
} bw_agg;

typedef struct bw_adam_args {
	float lr, beta1, beta2, eps, weight_decay;
	bool decoupled;   /* AdamW: decay the weights directly instead of adding wd * p to the gradient */
	int64_t step;     /* 1-based step count, for the bias corrections */
} bw_adam_args;

typedef struct bw_backend bw_backend;

/* A compute backend: every slot is required. Pointers are to memory the backend owns (host
 * memory for the CPU backend). The dispatchers in train/ops.c check shapes, then call
 * through the table; the CUDA backend fills the same table with cuBLAS / cuSPARSE. */
typedef struct bw_ops {
	const char *name;
	/* c[m, n] = alpha * op(a) op(b) + beta * c, row-major, as cblas_sgemm */
	void (*gemm)(const bw_backend *be, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
		     const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
	/* out[i] = aggregation of x over row i, for the rows listed (rows NULL: all num_dst).
	 * With lo and hi (both [num_dst]), only the edges [lo[i], hi[i]) of row i are summed,
	 * scaled as for the whole row (its degree, its GCN norms); add then adds them to out[i]
	 * instead of overwriting it (and GCN's self term is left to the pass that overwrites). */
	void (*agg_fwd)(const bw_backend *be, const bw_block *b, bw_agg mode, const float *x, int64_t dim,
			const int64_t *rows, int64_t nrows, const int64_t *lo, const int64_t *hi, bool add,
			float *out);
	/* gx[j] = d(sum of gout . out)/d x_j for the sources listed (NULL: all num_src); overwrites */
	void (*agg_bwd)(const bw_backend *be, const bw_block *b, bw_agg mode, const float *gout, int64_t dim,
			const int64_t *srcs, int64_t nsrcs, float *gx);
	/* y[r, :] += bias */
	void (*bias_add)(const bw_backend *be, float *y, int64_t rows, int64_t cols, const float *bias);
	/* out[c] = sum_r g[r, c] (overwrites) */
	void (*col_sum)(const bw_backend *be, const float *g, int64_t rows, int64_t cols, float *out);
	void (*relu_fwd)(const bw_backend *be, float *x, int64_t n);
	/* g *= (y > 0), y the ReLU's output */
	void (*relu_bwd)(const bw_backend *be, float *g, const float *y, int64_t n);
	/* Zero each element with probability p and scale the rest by 1/(1-p); mask gets 1 for
	 * kept elements. Row r draws from the stream bw_key(key, r): independent of threads. */
	void (*dropout_fwd)(const bw_backend *be, float *x, uint8_t *mask, int64_t rows, int64_t cols, float p,
			    uint64_t key);
	void (*dropout_bwd)(const bw_backend *be, float *g, const uint8_t *mask, int64_t n, float p);
	/* y += alpha * x */
	void (*axpy)(const bw_backend *be, int64_t n, float alpha, const float *x, float *y);
	/* Mean over the selected rows with a label >= 0 of -log_softmax(logits)[label]; grad (may
	 * be NULL) gets its gradient for every row (0 outside the selection); *counted the rows
	 * averaged, *correct those whose argmax is the label. sel NULL: all rows. */
	double (*nll_loss)(const bw_backend *be, const float *logits, int64_t rows, int64_t classes,
			   const int32_t *labels, const int64_t *sel, int64_t nsel, float *grad, int64_t *counted,
			   int64_t *correct);
	/* out[r] = the first column holding row r's maximum */
	void (*argmax)(const bw_backend *be, const float *x, int64_t rows, int64_t cols, int32_t *out);
	void (*adam)(const bw_backend *be, float *p, const float *g, float *m, float *v, int64_t n, const bw_adam_args *a);
	/* mom (may be NULL when momentum is 0) = momentum * mom + g + wd * p; p -= lr * mom */
	void (*sgd)(const bw_backend *be, float *p, const float *g, float *mom, int64_t n, float lr, float momentum,
		    float weight_decay);
} bw_ops;

enum bw_backend_kind { BW_BACKEND_CPU = 0, BW_BACKEND_CUDA = 1 };

struct bw_backend {
	const bw_ops *ops;
	int kind;     /* enum bw_backend_kind */
	int threads;  /* OpenMP threads for CPU kernels, >= 1 */
};

/* The CPU backend's table (train/ops_cpu.c). */
const bw_ops *bw_cpu_ops(void);
/* Fill be for a kind (core/backend.c, the registry); threads 0 = the OpenMP default.
 * CUDA in a build without it is BURROW_E_UNSUPPORTED. */
int bw_backend_init(bw_backend *be, int kind, int threads);

/* ------------------------------------------------------------ dispatchers (train/ops.c) */
/* Each checks its arguments (BURROW_E_INVAL naming the op and the shapes) and calls through
 * be->ops. Tensors are passed by pointer and read as [rows, cols]. */

/* c = alpha * op(a) op(b) + beta * c */
int bw_matmul(const bw_backend *be, const bw_tensor *a, bool trans_a, const bw_tensor *b, bool trans_b, float alpha,
	      float beta, bw_tensor *c);
/* out [num_dst, d] = aggregate(x [num_src, d]) over the rows listed (NULL: all) */
int bw_aggregate(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, const int64_t *rows,
		 int64_t nrows, bw_tensor *out);
/* The same over part of each row: edges [lo[i], hi[i]) of the rows listed (lo, hi NULL:
 * whole rows), added to out when add (see bw_ops.agg_fwd); the sum over a split of every
 * row equals bw_aggregate. */
int bw_aggregate_edges(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *x, const int64_t *rows,
		       int64_t nrows, const int64_t *lo, const int64_t *hi, bool add, bw_tensor *out);
/* gx [num_src, d] = the aggregation's transpose applied to gout [num_dst, d] (srcs NULL: all) */
int bw_aggregate_backward(const bw_backend *be, const bw_block *b, bw_agg mode, const bw_tensor *gout,
			  const int64_t *srcs, int64_t nsrcs, bw_tensor *gx);
int bw_bias_add(const bw_backend *be, bw_tensor *y, const float *bias, int64_t n);
int bw_col_sum(const bw_backend *be, const bw_tensor *g, float *out, int64_t n);
int bw_relu(const bw_backend *be, bw_tensor *x);
int bw_relu_backward(const bw_backend *be, bw_tensor *g, const bw_tensor *y);
int bw_dropout(const bw_backend *be, bw_tensor *x, uint8_t *mask, float p, uint64_t key);
int bw_dropout_backward(const bw_backend *be, bw_tensor *g, const uint8_t *mask, float p);
int bw_axpy(const bw_backend *be, float alpha, const bw_tensor *x, bw_tensor *y);
int bw_nll_loss(const bw_backend *be, const bw_tensor *logits, const int32_t *labels, const int64_t *sel,
		int64_t nsel, bw_tensor *grad, double *loss, int64_t *counted, int64_t *correct);
int bw_argmax(const bw_backend *be, const bw_tensor *x, int32_t *out);

/* ------------------------------------------------------------ layers (train/layers.c) */

typedef enum bw_layer_kind { BW_LAYER_LINEAR = 0, BW_LAYER_SAGE = 1, BW_LAYER_GCN = 2 } bw_layer_kind;

/* One layer: parameters and their gradients are views into the model's flat buffers.
 *   Linear:  z = x_dst W + b
 *   SAGE:    z = x_dst W_self + mean_{N(i)}(x) W_neigh + b
 *   GCN:     z = (norm-aggregate with self loops of x) W + b
 * When in > out the graph layers project first and aggregate the narrower result (exact:
 * aggregation and projection commute), as DGL does. */
typedef struct bw_layer {
	bw_layer_kind kind;
	int64_t in, out;
	bool project_first;
	float *w, *w_neigh, *b;    /* [in, out], [in, out] (SAGE only), [out] */
	float *gw, *gw_neigh, *gb; /* their gradients */
	bw_tensor agg;             /* saved: aggregated input [num_dst, in], or projection [num_src, out] */
	bw_tensor tmp;             /* scratch of the backward pass */
} bw_layer;

/* Parameters a layer of this kind and shape holds. */
int64_t bw_layer_num_params(bw_layer_kind kind, int64_t in, int64_t out);
/* Set up l over params/grads (each bw_layer_num_params long, borrowed). */
void bw_layer_bind(bw_layer *l, bw_layer_kind kind, int64_t in, int64_t out, float *params, float *grads);
/* Glorot-uniform weights drawn from the stream `key`, zero bias. */
void bw_layer_init(bw_layer *l, uint64_t key);
/* z [num_dst, out] from x [num_src, in] over block b (Linear reads only x's first num_dst rows). */
int bw_layer_forward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z);
/* Overlap with a halo exchange: the input rows [split, num_src) arrive late (over the
 * network), and in backward the gradients of those rows leave early. A plan
 * (bw_overlap_plan_build) reorders each destination row's sources so that the ones below
 * split come first (mid[i] is the first late one) and lists the rows that have late
 * sources. bw_layer_forward_overlap then does everything that needs no late row before
 * it waits (the projection of the rows below split, the aggregation of every row over its
 * early sources, SAGE's self term), calling poll between chunks; after the wait it adds
 * the late sources and finishes. bw_layer_backward_overlap computes the late rows' input
 * gradients first, hands them to post (which sends them), and does the rest (the early
 * rows' input gradients, the weight gradients) while they travel. Results equal the
 * plain passes up to rounding. */
typedef struct bw_overlap_plan {
	int64_t num_dst, num_src, split;
	int32_t *indices;  /* [edges] the block's sources, early ones first in every row */
	int64_t *mid;      /* [num_dst] first edge of row i whose source is >= split */
	int64_t *outer;    /* [n_outer] rows with a late source */
	int64_t n_outer;
	int64_t *seq;      /* [num_src] 0, 1, 2, ...: row and source lists for chunks */
} bw_overlap_plan;
/* Build p for a block's rows (indptr, indices: [num_dst + 1], [edges]); the caller then
 * runs the block over p->indices. */
int bw_overlap_plan_build(bw_overlap_plan *p, int64_t num_dst, int64_t num_src, const int64_t *indptr,
			  const int32_t *indices, int64_t split);
void bw_overlap_plan_free(bw_overlap_plan *p);

typedef struct bw_overlap {
	const bw_overlap_plan *plan;  /* the block must use plan->indices */
	int (*poll)(void *ctx);       /* drive progress; < 0 is an error (may be NULL) */
	int (*wait)(void *ctx);       /* forward: block until rows [split, num_src) of x are in place */
	int (*post)(void *ctx, const bw_tensor *gx); /* backward: gx's rows [split, num_src) are final */
	void *ctx;
} bw_overlap;
int bw_layer_forward_overlap(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z,
			     const bw_overlap *ov);
/* Backward with the late rows' input gradients posted early; gx is required. */
int bw_layer_backward_overlap(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x,
			      const bw_tensor *gz, bw_tensor *gx, const bw_overlap *ov);
/* From gz = dL/dz: the parameter gradients (overwritten) and, when gx is not NULL, dL/dx
 * [num_src, in]. x must be the forward's input, unchanged. */
int bw_layer_backward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, const bw_tensor *gz,
		      bw_tensor *gx);
void bw_layer_release(bw_layer *l);

/* ------------------------------------------------------------ models (train/model.c) */

typedef struct bw_model_cfg {
	int kind;          /* enum burrow_model_kind */
	int layers;        /* 1 .. BW_MAX_LAYERS */
	int64_t in_dim, hidden, classes;
	float dropout;     /* applied after each hidden layer's ReLU, in training */
} bw_model_cfg;

/* What one forward/backward step consumes: one block per layer (blocks[0] is the input
 * layer, blocks[l]->num_dst == blocks[l+1]->num_src) and the input feature rows of
 * blocks[0]'s sources. The full graph repeats one block; the sampler + store pipeline
 * makes a batch from its blocks and gathered rows. Everything is borrowed. */
typedef struct bw_batch {
	int num_blocks;
	bw_block *blocks[BW_MAX_LAYERS];
	bw_tensor x;              /* [blocks[0]->num_src, in_dim] input rows */
	const int32_t *labels;    /* [blocks[L-1]->num_dst] labels of the output rows, -1 = none */
	const int64_t *loss_rows; /* output rows the loss covers; NULL: all */
	int64_t num_loss_rows;
	uint64_t epoch, index;    /* the batch's coordinates: its dropout masks are keyed by them */
} bw_batch;

typedef struct bw_model {
	bw_model_cfg cfg;
	bw_layer layer[BW_MAX_LAYERS];
	int64_t num_params;
	float *params, *grads;       /* [num_params] each, owned: one flat buffer (optimizer, allreduce, checkpoint) */
	bw_tensor h[BW_MAX_LAYERS];  /* h[l + 1]: layer l's output after ReLU and dropout; h[L] the logits */
	uint8_t *mask[BW_MAX_LAYERS];
	int64_t mask_cap[BW_MAX_LAYERS];
	bw_tensor g[2];              /* gradient ping-pong */
	bool dropout_on;             /* the last forward pass used dropout */
} bw_model;

/* Layer l's shape under cfg. */
void bw_model_layer_dims(const bw_model_cfg *cfg, int l, int64_t *in, int64_t *out);
int bw_model_check_cfg(const bw_model_cfg *cfg);
/* A model with Glorot weights drawn from seed. */
int bw_model_open(bw_model **out, const bw_model_cfg *cfg, uint64_t seed);
void bw_model_close(bw_model *m);
/* Forward over a batch; *logits points at the model's output [num_out, classes]. In
 * training the hidden layers use dropout keyed by (seed, epoch, index, layer). */
int bw_model_forward(const bw_backend *be, bw_model *m, const bw_batch *b, bool training, uint64_t seed,
		     const bw_tensor **logits);
/* One layer of the forward pass, for callers that fill its input themselves (distributed
 * full-graph training appends halo rows between layers): z = layer l of x over blk, then,
 * for hidden layers, ReLU and (training) dropout keyed by key. *h points at the result,
 * [blk->num_dst, out], held by the model until its next forward pass of layer l. */
int bw_model_layer_forward(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x, bool training,
			   uint64_t key, const bw_tensor **h);
/* The same with a halo exchange in flight (ov may be NULL: plain forward). */
int bw_model_layer_forward_overlap(const bw_backend *be, bw_model *m, int l, bw_block *blk, const bw_tensor *x,
				   bool training, uint64_t key, const bw_overlap *ov, const bw_tensor **h);
/* Its backward: gh = dL/dh for layer l's output (rewritten in place for hidden layers);
 * fills layer l's parameter gradients and, when gx is not NULL, dL/dx [blk->num_src, in].
 * x must be the forward's input, unchanged. */
int bw_model_layer_backward(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
			    bw_tensor *gh, bw_tensor *gx);
/* The same with the late rows' input gradients posted early (ov may be NULL: plain). */
int bw_model_layer_backward_overlap(const bw_backend *be, bw_model *m, int l, const bw_block *blk, const bw_tensor *x,
				    bw_tensor *gh, bw_tensor *gx, const bw_overlap *ov);
/* Backward from dL/dlogits: fills m->grads. Call after bw_model_forward on the same batch. */
int bw_model_backward(const bw_backend *be, bw_model *m, const bw_batch *b, const bw_tensor *glogits);
/* Layer l alone in inference (no dropout), with the ReLU of hidden layers: z from x. */
int bw_model_infer_layer(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z);
/* FNV-1a over the weights' bytes: equal weights, equal sums (replicas are compared by it). */
uint64_t bw_model_checksum(const bw_model *m);
/* The dropout key of (seed, epoch, batch, layer). */
uint64_t bw_dropout_key(uint64_t seed, uint64_t epoch, uint64_t batch, int layer);

/* ------------------------------------------------------------ optimizers (train/optim.c) */

typedef struct bw_optim {
	int kind;             /* enum burrow_optim_kind */
	double lr, weight_decay, momentum, beta1, beta2, eps;
	int64_t n;            /* parameters */
	int64_t step;         /* steps taken */
	float *m, *v;         /* Adam moments, or SGD momentum in m; [n] each, owned (NULL when unused) */
} bw_optim;

int bw_optim_open(bw_optim **out, int kind, int64_t n, double lr, double weight_decay, double momentum);
/* One step: params -= update(grads). */
int bw_optim_step(const bw_backend *be, bw_optim *o, float *params, const float *grads);
/* Floats of state the optimizer holds per parameter (0, 1 or 2). */
int bw_optim_state_per_param(const bw_optim *o);
void bw_optim_close(bw_optim *o);

/* ------------------------------------------------------------ rows (train/rows.c) */

/* A source of rows by id: the features (the feature store, or in memory in full-graph mode)
 * or a layer's embeddings (in memory, or spilled to a scratch npy file and read with pread). */
typedef struct bw_rows {
	int64_t num_rows, dim;
	const float *mem;    /* [num_rows, dim] when all rows are in memory as float32, else NULL */
	/* out [n, dim] = rows ids[0 .. n); ids need not be sorted or unique */
	int (*gather)(struct bw_rows *r, const int64_t *ids, int64_t n, float *out);
	void *ctx;
	int threads;         /* OpenMP threads of the copy (in-memory rows) */
} bw_rows;

/* Rows of an in-memory float32 matrix (borrowed), copied out with `threads` threads (0: default). */
void bw_rows_from_memory(bw_rows *r, const float *data, int64_t num_rows, int64_t dim, int threads);
/* Rows of a 2-D float32 or float16 npy file, read with pread on demand (f16 converted). */
int bw_rows_open_npy(bw_rows *r, const char *path);
/* Rows of a feature store opened with out_dtype float32 (borrowed), gathered synchronously. */
void bw_rows_from_store(bw_rows *r, burrow_store *s);
void bw_rows_close(bw_rows *r);

/* ------------------------------------------------------------ pipeline (train/pipeline.c) */

/* One place of the mini-batch pipeline: a sampled batch and the gather of its input rows. */
typedef struct bw_slot {
	burrow_batch *batch;          /* held from the sampler; NULL when empty */
	burrow_store_ticket *ticket;  /* its rows' gather while in flight, else NULL */
	float *x;                     /* [num_input, D] the gathered rows (owned, grows) */
	int64_t x_cap;                /* floats allocated */
	int status;                   /* the loader's error for this batch (0: none) */
	char msg[512];                /* its message */
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
} bw_pipe;

/* ------------------------------------------------------------ trainer (train/trainer.c, pipeline.c, infer.c, checkpoint.c) */

#include "../graph/npy.h"

struct burrow_trainer {
	burrow_train_opts o;
	burrow_dataset *ds;               /* borrowed */
	const burrow_dataset_info *info;
	const burrow_csr *graph;          /* the dataset's, borrowed */
	const int32_t *labels;            /* [N], borrowed */
	int8_t *split_of;                 /* [N]: enum burrow_split of each node, -1 none (owned) */
	bw_backend be;
	bw_model *model;
	bw_optim *optim;
	int epoch;                        /* epochs trained */
	burrow_best best;
	burrow_store *store;              /* the features, gathered as float32 (owned) */
	size_t cache_budget;              /* bytes given to the store's cache */
	float *feat_buf;                  /* full-graph mode: every row, read through the store (owned) */
	const float *feat;                /* [N, D] = feat_buf; NULL in mini-batch mode */
	bw_rows feat_rows;                /* the features by id: the store, or feat_buf */
	float *gcn_norm;                  /* [N] 1/sqrt(deg + 1) from the whole graph (GCN only) */
	bw_block full;                    /* the whole graph as one block (full-graph training) */
	bool full_ready;
	bw_tensor glogits;                /* dL/dlogits of a step */
	int32_t *map;                     /* [N] global -> chunk-local ids of layer-wise inference, -1 unset */
	char *scratch_dir;                /* owned copy of opts.scratch_dir, NULL = $TMPDIR or /tmp */
	uint64_t spill_seq;               /* numbers scratch files */
	/* mini-batch mode */
	burrow_sampler *sampler;          /* opened at the first epoch, for the seed then in force */
	uint64_t sampler_seed;
	bw_pipe pipe;
	int32_t *mb_labels;               /* [seeds] labels of a batch's output rows */
	float *mb_norm;                   /* [num_input] GCN norms of a batch's nodes */
	int64_t mb_labels_cap, mb_norm_cap;
};

/* One optimizer step on a batch: forward (dropout on), loss over the batch's loss rows,
 * backward, update. A non-finite loss is BURROW_E_RANGE naming the batch's epoch and index
 * (1-based), before any update. The sampler + store pipeline calls this per batch. */
int bw_trainer_step(burrow_trainer *t, const bw_batch *b, double *loss, int64_t *counted, int64_t *correct);

/* ------------------------------------------------------------ checkpoints (train/checkpoint.c) */

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
} bw_ck_state;
/* Write s to path atomically; load restores it (the model's shape and the optimizer must
 * match; nothing changes unless the whole file is read and verified). */
int bw_checkpoint_save(const bw_ck_state *s, const char *path);
int bw_checkpoint_load(bw_ck_state *s, const char *path);

/* The compute's view of a sampled batch whose input rows are x ([num_input, D], borrowed):
 * blk[0 .. L) over the sampler's blocks, b over them; the seeds' labels, and for GCN the
 * norms from the whole graph's degrees (one per input node: every block's nodes are a
 * prefix of the input nodes), live in the trainer until the next call. Dropout is keyed by
 * (t->epoch, index). Release each blk[l] after use. */
int bw_batch_from_sample(burrow_trainer *t, const burrow_batch *sb, float *x, int64_t index, bw_batch *b,
			 bw_block *blk);
/* One mini-batch epoch through the pipeline (pipeline.c); fills es except epoch. */
int bw_trainer_minibatch_epoch(burrow_trainer *t, burrow_epoch_stats *es);
/* Stop the loader, complete every gather in flight, hand every batch back, free the slots
 * and the sampler. */
void bw_pipe_close(burrow_trainer *t);

/* Layer-wise full-neighbor inference over all nodes in chunks of destination rows; each
 * chunk of the last layer's output (rows [r0, r0 + z->rows)) goes to sink. Hidden layers'
 * embeddings stay in memory or spill to scratch npy files under opts.mem_bytes. */
typedef int (*bw_infer_sink)(void *ctx, int64_t r0, const bw_tensor *z);
int bw_trainer_infer(burrow_trainer *t, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes);

#endif /* BURROW_TRAIN_H */
