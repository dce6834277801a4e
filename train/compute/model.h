/* model.h: layers (Linear, SAGE, GCN, GAT) with their backward passes, models built from
 * them over a batch of blocks, and optimizers: the compute layer's top, on the dispatchers. */
#ifndef BURROW_MODEL_H
#define BURROW_MODEL_H

#include "ops.h"

#include <stdbool.h>
#include <stdint.h>

/* ------------------------------------------------------------ layers (layers.c) */

typedef enum bw_layer_kind { BW_LAYER_LINEAR = 0, BW_LAYER_SAGE = 1, BW_LAYER_GCN = 2, BW_LAYER_GAT = 3 } bw_layer_kind;

/* GAT's LeakyReLU slope on the attention logits (PyG's GATConv default). */
#define BW_GAT_SLOPE 0.2f

/* One layer: parameters and their gradients are views into the model's flat buffers (in
 * the model's device memory).
 *   Linear:  z = x_dst W + b
 *   SAGE:    z = x_dst W_self + aggr_{N(i)}(x) W_neigh + b, aggr mean, sum or max
 *            (elementwise max over the neighbors, PyG's SAGEConv(aggr="max"); 0 without any)
 *   GCN:     z = (norm-aggregate with self loops of x) W + b
 *   GAT:     h = x W [num_src, heads F]; per head k, alpha = the edge softmax over N(i) + {i}
 *            of leaky_relu(<h_i^k, a_dst^k> + <h_j^k, a_src^k>, 0.2), dropped out with
 *            attn_p in training; z_i^k = sum_j alpha_ij^k h_j^k, the heads concatenated
 *            (out = heads F) or averaged (out = F), + b (PyG's GATConv). With an edge
 *            dimension De (PyG's GATConv(edge_dim=De)) each edge's logit also adds
 *            <W_e f_ij, a_edge> per head, f_ij the edge's features (the block's edge_feat),
 *            W_e [De, heads F], a_edge [heads F]; a self loop's term is the mean of its row's
 *            (PyG's fill_value "mean"); computed as f_ij (W_e a_edge per head), [De, heads]
 * When in > out, SAGE (mean, sum) and GCN project first and aggregate the narrower result
 * (exact: aggregation and projection commute), as DGL does; max cannot. */
typedef struct bw_layer_shape {
	bw_layer_kind kind;
	int64_t in, out;
	int aggr;          /* SAGE: enum burrow_aggr */
	int64_t heads;     /* GAT: attention heads, >= 1 (concat: they divide out) */
	bool concat;       /* GAT: concatenate the heads (hidden layers) or average them (the output) */
	int64_t edge_dim;  /* GAT: edge feature width De of the attention's edge term (0: none) */
} bw_layer_shape;

typedef struct bw_layer {
	bw_layer_kind kind;
	int64_t in, out;
	int aggr;                  /* SAGE: enum burrow_aggr */
	int64_t heads, f_dim;      /* GAT: heads, and each head's width F */
	bool concat;               /* GAT */
	bool project_first;
	float *w, *w_neigh, *b;    /* [in, out] ([in, heads F] for GAT), [in, out] (SAGE only), [out] */
	float *a_src, *a_dst;      /* GAT: [heads F] each */
	float *gw, *gw_neigh, *gb; /* their gradients */
	float *ga_src, *ga_dst;
	/* set by the model before each forward: GAT's attention dropout (0: none) and its key */
	float attn_p;
	uint64_t attn_key;
	bw_tensor agg;             /* saved: aggregated input [num_dst, in], or projection [num_src, out] (GAT: h) */
	bw_tensor tmp;             /* scratch of the backward pass */
	bw_dbuf arg;               /* SAGE max: the winning source per [num_dst, in] element */
	/* GAT: saved by the forward, scratch of the backward */
	bw_tensor s_src, s_dst, alpha, alpha_drop, cat, gcat, galpha, gs_src, gs_dst;
	bw_tensor mean;            /* [heads F, F]: averages the heads (1/heads where f matches) */
	bw_dbuf attn_mask;         /* [slots, heads] attention dropout mask */
	bool attn_dropped;         /* the last forward dropped attention out */
	/* GAT's edge term (edge_dim > 0): W_e [edge_dim, heads F], a_edge [heads F] after b in
	 * the parameters (gradients alike); saved ve = W_e a_edge per head [edge_dim, heads] and
	 * the edge scores [edges, heads]; their gradients */
	int64_t edge_dim;
	float *w_e, *a_edge, *gw_e, *ga_edge;
	bw_tensor ve, s_edge, gs_edge, gve;
} bw_layer;

/* Parameters a layer of this shape holds. */
int64_t bw_layer_shape_params(const bw_layer_shape *s);
/* Set up l over params/grads (each bw_layer_shape_params long, borrowed device memory). */
void bw_layer_bind_shape(bw_layer *l, const bw_layer_shape *s, float *params, float *grads);
/* The same for a Linear, mean-SAGE or GCN layer. */
int64_t bw_layer_num_params(bw_layer_kind kind, int64_t in, int64_t out);
void bw_layer_bind(bw_layer *l, bw_layer_kind kind, int64_t in, int64_t out, float *params, float *grads);
/* Glorot-uniform weights drawn from the stream `key`, zero bias, uploaded to dev. */
int bw_layer_init(bw_layer *l, const bw_device *dev, uint64_t key);
/* z [num_dst, out] from x [num_src, in] over block b (Linear reads only x's first num_dst
 * rows); a graph layer's block must be uploaded to be->dev. */
int bw_layer_forward(const bw_backend *be, bw_layer *l, const bw_block *b, const bw_tensor *x, bw_tensor *z);
/* Overlap with a halo exchange: the input rows [split, num_src) arrive late (over the
 * network), and in backward the gradients of those rows leave early. The block is split
 * there (bw_block_split). bw_layer_forward_overlap does everything that needs no late
 * row before it waits (the projection of the rows below split, the early part of every
 * row's aggregation, SAGE's self term), calling poll between chunks; after the wait it
 * adds the late part and finishes. bw_layer_backward_overlap computes the late rows' input
 * gradients first, hands them to post (which sends them), and does the rest (the early
 * rows' input gradients, the weight gradients) while they travel. Results equal the plain
 * passes up to rounding. */
typedef struct bw_overlap {
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
/* Does the layer read its input x other than through products (bw_matmul, which a sparse
 * copy of x serves on its own)? SAGE max, and SAGE or GCN that aggregate x before they
 * project it, read its dense rows; a Linear, a GAT and a layer that projects first do not. */
bool bw_layer_reads_dense_input(const bw_layer *l);

/* ------------------------------------------------------------ models (model.c) */

typedef struct bw_model_cfg {
	int kind;          /* enum burrow_model_kind */
	int layers;        /* 1 .. BURROW_MAX_LAYERS */
	int64_t in_dim, hidden, classes;
	float dropout;     /* applied after each hidden layer's ReLU, in training */
	int aggr;          /* sage: enum burrow_aggr */
	int heads;         /* gat: heads (>= 1, dividing hidden), concatenated in hidden layers, averaged in the last */
	float attn_dropout;/* gat: on the attention coefficients, in training */
	int norm;          /* enum burrow_norm after each hidden layer, before its ReLU */
	bool residual;     /* add a hidden layer's input to its output where the widths match */
	int64_t edge_dim;  /* gat: edge feature width of every layer's attention edge term (0: none); the
			      batches' blocks then carry edge features */
} bw_model_cfg;

#define BW_NORM_EPS 1e-5f
#define BW_NORM_MOMENTUM 0.1

/* What one forward/backward step consumes: one block per layer (blocks[0] is the input
 * layer, blocks[l]->num_dst == blocks[l+1]->num_src) and the input feature rows of
 * blocks[0]'s sources, on the model's device. The full graph repeats one block; the
 * sampler + store pipeline makes a batch from its blocks and gathered rows. Everything is
 * borrowed; the forward pass prepares and uploads the blocks. */
typedef struct bw_batch {
	int num_blocks;
	bw_block *blocks[BURROW_MAX_LAYERS];
	bw_tensor x;              /* [blocks[0]->num_src, in_dim] input rows (device) */
	const int32_t *labels;    /* [blocks[L-1]->num_dst] labels of the output rows, -1 = none (device) */
	const int64_t *loss_rows; /* output rows the loss covers (device); NULL: all */
	int64_t num_loss_rows;
	uint64_t epoch, index;    /* the batch's coordinates: its dropout masks are keyed by them */
} bw_batch;

typedef struct bw_model {
	bw_model_cfg cfg;
	const bw_device *dev;        /* where everything below lives (borrowed) */
	bw_layer layer[BURROW_MAX_LAYERS];
	int64_t num_params;
	int64_t param_off[BURROW_MAX_LAYERS + 1]; /* layer l's parameters (its norm's included) are
						     params[param_off[l] .. param_off[l + 1]) */
	float *params, *grads;       /* [num_params] each, owned device memory: one flat buffer (optimizer, allreduce, checkpoint) */
	bw_tensor h[BURROW_MAX_LAYERS];  /* h[l + 1]: layer l's output after ReLU and dropout; h[L] the logits */
	bw_dbuf mask[BURROW_MAX_LAYERS]; /* dropout masks, one byte per element */
	bw_tensor g[2];              /* gradient ping-pong */
	bool dropout_on;             /* the last forward pass used dropout */
	/* normalization of hidden layer l (cfg.norm): gamma, beta in params (their gradients in
	 * grads), the normalized output and its statistics saved for the backward */
	float *ngamma[BURROW_MAX_LAYERS], *nbeta[BURROW_MAX_LAYERS], *gngamma[BURROW_MAX_LAYERS], *gnbeta[BURROW_MAX_LAYERS];
	bw_tensor nx[BURROW_MAX_LAYERS];
	bw_dbuf nstat[BURROW_MAX_LAYERS];    /* rstd (layer: [rows]; batch: mean, var, rstd [cols] each) */
	/* batch norm's running mean and variance, not trained: one flat buffer (checkpoints) */
	int64_t num_state;
	float *state;                    /* [num_state] owned device memory, NULL when none */
	float *rmean[BURROW_MAX_LAYERS], *rvar[BURROW_MAX_LAYERS];
	bw_tensor res[BURROW_MAX_LAYERS];    /* residual: layer l's output plus its input */
	bw_tensor gres;                  /* the output gradient kept for the residual's path */
	/* layer 0's output (before its normalization and activation) kept by an inference pass
	 * under a caller's key (bw_model_infer_layer_keep), with layer 0's saved state from that
	 * same pass; a training forward given the same key (bw_model_forward_keyed) takes it
	 * instead of computing layer 0 again. Any other forward of layer 0 drops it. */
	bw_tensor memo;
	uint64_t memo_key;               /* 0: nothing kept */
} bw_model;

/* What layer l handed to the next: its activation, plus its input with cfg.residual. */
const bw_tensor *bw_model_output(const bw_model *m, int l);

/* Layer l's shape under cfg. */
void bw_model_layer_dims(const bw_model_cfg *cfg, int l, int64_t *in, int64_t *out);
/* Layer l's whole shape (kind, aggregator, heads) under cfg. */
bw_layer_shape bw_model_layer_shape(const bw_model_cfg *cfg, int l);
int bw_model_check_cfg(const bw_model_cfg *cfg);
/* Can the backend run a model of cfg (its kind, aggregator, normalization and layers are
 * read)? 0, or BURROW_E_UNSUPPORTED naming the backend, what the model needs and the kernels
 * it lacks, in one line: asked when a trainer opens, before any work. */
int bw_model_supported(const bw_backend *be, const bw_model_cfg *cfg);
/* A model on dev (NULL: the CPU) with Glorot weights drawn from seed. */
int bw_model_open(bw_model **out, const bw_device *dev, const bw_model_cfg *cfg, uint64_t seed);
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
/* The same with a halo exchange in flight (ov may be NULL: plain forward; else blk is split). */
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
/* The same, and the input rows' gradient dL/dx [num_input, in_dim] into gx0 (reshaped; NULL:
 * none), for learned input embeddings. */
int bw_model_backward_input(const bw_backend *be, bw_model *m, const bw_batch *b, const bw_tensor *glogits,
			    bw_tensor *gx0);
/* Zero every gradient (a rank without work joins the all-reduce with zeros). */
int bw_model_zero_grads(bw_model *m);
/* Layer l alone in inference (no dropout), with the ReLU of hidden layers: z from x. */
int bw_model_infer_layer(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z);
/* Can layer 0's output computed in inference stand for the training forward's? Yes unless
 * the layer itself draws randomness in training (GAT's attention dropout): dropout, the
 * normalization and the residual come after the layer's output, which is what is kept. */
bool bw_model_memo_able(const bw_model *m);
/* Do the model's passes read the dense rows of its input (layer 0's x), or only its sparse
 * copy when it has one? The dense rows when layer 0 reads them (bw_layer_reads_dense_input)
 * or adds them as a residual. */
bool bw_model_reads_dense_input(const bw_model *m);
/* bw_model_infer_layer that, for l == 0 and keep != 0, also keeps layer 0's output under
 * the key keep. The caller's key must name the weights and the input (x, b) exactly: a
 * training forward handed the same key trusts it to be the same computation. */
int bw_model_infer_layer_keep(const bw_backend *be, bw_model *m, int l, bw_block *b, const bw_tensor *x, bw_tensor *z,
			      uint64_t keep);
/* Drop what layer 0's inference kept: the weights were written by other means than the
 * caller's key counts (a checkpoint, the best epoch's weights). */
void bw_model_memo_drop(bw_model *m);
/* bw_model_forward that, given take != 0 equal to the key of what layer 0's inference kept
 * (and the batch's layer-0 destinations as many as its rows), takes that output instead of
 * computing layer 0; the result is the same, bit for bit, when the key was honest. */
int bw_model_forward_keyed(const bw_backend *be, bw_model *m, const bw_batch *b, bool training, uint64_t seed,
			   uint64_t take, const bw_tensor **logits);
/* FNV-1a over the weights' bytes (downloaded where they are not host memory): equal
 * weights, equal sums (replicas are compared by it). */
int bw_model_checksum(const bw_model *m, uint64_t *out);
/* The dropout key of (seed, epoch, batch, layer). */
uint64_t bw_dropout_key(uint64_t seed, uint64_t epoch, uint64_t batch, int layer);

/* ------------------------------------------------------------ optimizers (optim.c) */

typedef struct bw_optim {
	int kind;             /* enum burrow_optim_kind */
	const bw_device *dev; /* where the moments live */
	double lr, weight_decay, momentum, beta1, beta2, eps;
	int64_t n;            /* parameters */
	int64_t step;         /* steps taken */
	float *m, *v;         /* Adam moments, or SGD momentum in m; [n] each, owned device memory (NULL when unused) */
} bw_optim;

/* An optimizer for n parameters whose state lives on dev (NULL: the CPU). */
int bw_optim_open(bw_optim **out, const bw_device *dev, int kind, int64_t n, double lr, double weight_decay,
		  double momentum);
/* One step: params -= update(grads) (device memory of be). */
int bw_optim_step(const bw_backend *be, bw_optim *o, float *params, const float *grads);
/* Floats of state the optimizer holds per parameter (0, 1 or 2). */
int bw_optim_state_per_param(const bw_optim *o);
void bw_optim_close(bw_optim *o);


#endif /* BURROW_MODEL_H */
