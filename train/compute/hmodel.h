/* hmodel.h: relational layers (R-GCN, R-SAGE, R-GAT) over typed blocks, with their backward
 * passes, and the typed model built from them: the compute layer's side of typed graphs. */
#ifndef BURROW_HMODEL_H
#define BURROW_HMODEL_H

#include "model.h"

/* What one typed step consumes, on the model's device: per layer and relation a block from
 * the relation's dst-type nodes of level l+1 (rows) to its src-type nodes of level l (columns,
 * local ids), which may be bipartite (num_dst > num_src is allowed: other types); per type
 * its input rows (level 0); the target type's labels. A type's level-(l+1) nodes are the first
 * rows of its level-l nodes (the self term reads x_t[0, num_dst)). Everything is borrowed;
 * the forward pass marks the blocks it runs bipartite (bw_block.bipartite), prepares and
 * uploads them, as bw_model_forward does its blocks. Only what the model uses must be
 * there (bw_hmodel_uses, bw_hmodel_runs): other blocks may be NULL, other x[t] empty. */
typedef struct bw_hbatch {
	int num_layers, num_types, num_rels;
	int64_t num_nodes[BURROW_MAX_LAYERS + 1][BURROW_MAX_TYPES];  /* [level][type] */
	bw_block *blocks[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];    /* [layer][relation] */
	bw_tensor x[BURROW_MAX_TYPES];  /* [num_nodes[0][t], in_dim[t]]; rows = 0 where a type has none */
	const int32_t *labels;          /* [num_nodes[L][target]] (device), -1 = none */
	const int64_t *loss_rows;       /* target rows the loss covers (device); NULL: all */
	int64_t num_loss_rows;
	uint64_t epoch, index;          /* dropout keys */
} bw_hbatch;

typedef struct bw_hmodel_cfg {
	int kind;                       /* BURROW_MODEL_RGCN, _RSAGE or _RGAT */
	int layers;                     /* 1 .. BURROW_MAX_LAYERS */
	int num_types, num_rels, target;
	int rel_src[BURROW_MAX_RELATIONS], rel_dst[BURROW_MAX_RELATIONS];
	int64_t in_dim[BURROW_MAX_TYPES];  /* each type's input width (> 0) */
	int64_t hidden, classes;
	float dropout;                  /* after each hidden layer's ReLU, in training */
	int heads;                      /* R-GAT: heads (dividing hidden), concatenated in hidden layers, averaged in the last */
	float attn_dropout;             /* R-GAT */
} bw_hmodel_cfg;

typedef struct bw_hmodel bw_hmodel;

/* The model's plan, fixed by cfg: which relations run at which layer and which types each
 * level holds. Level 0 holds every type; level l+1 the types that receive, at layer l, a
 * relation from a type level l holds (a type that receives none has no output there). Of
 * these only what the layers above read is computed, walking down from the target (level
 * L holds the target alone): relation r runs at layer l when level l+1 needs its dst type
 * and level l holds its src type. The target must receive a relation at the last layer. */
int bw_hmodel_check_cfg(const bw_hmodel_cfg *cfg);
/* Can the backend run it? 0, or BURROW_E_UNSUPPORTED in one line (asked when a trainer opens). */
int bw_hmodel_supported(const bw_backend *be, const bw_hmodel_cfg *cfg);
/* A model on dev (NULL: CPU), Glorot weights drawn from seed. */
int bw_hmodel_open(bw_hmodel **out, const bw_device *dev, const bw_hmodel_cfg *cfg, uint64_t seed);
void bw_hmodel_close(bw_hmodel *m);
/* Parameters: one flat buffer each (optimizer, checkpoint), [n] device memory. */
int64_t bw_hmodel_num_params(const bw_hmodel *m);
/* An estimate of the bytes a training step of m keeps for a batch of these level sizes
 * ([level][type], as burrow_typed_batch.num_nodes): each relation's aggregate (or the
 * largest projection), each type's output and dropout mask per layer, the hidden input
 * gradients and the backward's largest temporaries; weighted: the blocks carry edge weights
 * (LABOR-*), and a relation that projects first holds its weighted mean's aggregate
 * [destinations, out] beside the projection. R-GAT's per-edge attention is not counted. */
double bw_hmodel_batch_bytes(const bw_hmodel *m, const int64_t (*num_nodes)[BURROW_MAX_TYPES], bool weighted);
float *bw_hmodel_params(bw_hmodel *m);
float *bw_hmodel_grads(bw_hmodel *m);
/* The plan: does level l (0 .. L) use type t? Level 0: the forward reads x[t] (the rows to
 * gather); level l >= 1: type t's output is computed there. Does relation r run at layer l? */
bool bw_hmodel_uses(const bw_hmodel *m, int level, int t);
bool bw_hmodel_runs(const bw_hmodel *m, int l, int r);
/* Where parameters lie in the flat buffer: offsets, -1 for what the layer has not. Layer l
 * (in = l ? hidden : in_dim[type], out = l < L - 1 ? hidden : classes) holds, in this order,
 * R-GCN's self term of each type it computes (t ascending): w_self [in_t, out], b [out];
 * then each relation it runs (r ascending):
 *   R-GCN   w [in_src, out]
 *   R-SAGE  w_self [in_dst, out], w (W_neigh) [in_src, out], b [out]
 *   R-GAT   w (W_src) [in_src, heads F], w_self (W_dst) [in_dst, heads F], a_src [heads F],
 *           a_dst [heads F], b [out]   (F = hidden / heads in hidden layers, classes in the last)
 * Matrices row-major. bw_hmodel_rel_params: false when r does not run at l;
 * bw_hmodel_self_params: false unless R-GCN computes type t at level l + 1. */
typedef struct bw_hparams {
	int64_t w, w_self, a_src, a_dst, b;
	int64_t in_src, in_dst, out, heads_f;  /* the shapes: widths, and heads F (R-GAT) */
} bw_hparams;
bool bw_hmodel_rel_params(const bw_hmodel *m, int l, int r, bw_hparams *out);
bool bw_hmodel_self_params(const bw_hmodel *m, int l, int t, bw_hparams *out);
/* Forward: *logits [num_nodes[L][target], classes], held by the model. In training the hidden
 * layers use dropout keyed by (seed, epoch, index, layer) and the type: layer l's output of
 * type t by bw_key(bw_dropout_key(seed, epoch, index, l), t); R-GAT's attention dropout by
 * the relation likewise. Types a layer's output never reaches (no relation into them) carry
 * no rows there. */
int bw_hmodel_forward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, bool training, uint64_t seed,
		      const bw_tensor **logits);
/* Inference of layer l alone for nd nodes of type t (layer-wise full-neighbor evaluation):
 * z [nd, out] = their output at level l + 1, ReLU after a hidden layer, no dropout. xd [nd,
 * in]: their own level-l rows; for each relation r that runs at l into t, blocks[r] (nd
 * destinations -> local sources, marked bipartite, prepared and uploaded here) over xs[r], the
 * level-l rows of those sources; other entries are not read. Same sums as the forward pass. */
int bw_hmodel_infer_layer(const bw_backend *be, bw_hmodel *m, int l, int t, const bw_tensor *xd,
			  bw_block *const *blocks, const bw_tensor *xs, bw_tensor *z);
/* Backward from dL/dlogits: fills the grads; when gx is not NULL also dL/dx per type
 * (gx[t] [num_nodes[0][t], in_dim[t]], for learned embeddings). */
int bw_hmodel_backward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, const bw_tensor *glogits,
		       bw_tensor *gx /* [num_types] or NULL */);

#endif /* BURROW_HMODEL_H */
