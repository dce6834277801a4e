/* hmodel.h: relational layers (R-GCN, R-SAGE, R-GAT) over typed blocks, with their backward
 * passes, and the typed model built from them: the compute layer's side of typed graphs. */
#ifndef BURROW_HMODEL_H
#define BURROW_HMODEL_H

#include "model.h"

/* What one typed step consumes, on the model's device: per layer and relation a block from
 * the relation's dst-type nodes of level l+1 (rows) to its src-type nodes of level l (columns,
 * local ids), which may be bipartite (num_dst > num_src is allowed: other types); per type
 * its input rows (level 0); the target type's labels. A type's level-(l+1) nodes are the first
 * rows of its level-l nodes (the self term reads x_t[0, num_dst)). Everything is borrowed. */
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

int bw_hmodel_check_cfg(const bw_hmodel_cfg *cfg);
/* Can the backend run it? 0, or BURROW_E_UNSUPPORTED in one line (asked when a trainer opens). */
int bw_hmodel_supported(const bw_backend *be, const bw_hmodel_cfg *cfg);
/* A model on dev (NULL: CPU), Glorot weights drawn from seed. */
int bw_hmodel_open(bw_hmodel **out, const bw_device *dev, const bw_hmodel_cfg *cfg, uint64_t seed);
void bw_hmodel_close(bw_hmodel *m);
/* Parameters: one flat buffer each (optimizer, checkpoint), [n] device memory. */
int64_t bw_hmodel_num_params(const bw_hmodel *m);
float *bw_hmodel_params(bw_hmodel *m);
float *bw_hmodel_grads(bw_hmodel *m);
/* Forward: *logits [num_nodes[L][target], classes], held by the model. In training the hidden
 * layers use dropout keyed by (seed, epoch, index, layer). Types a layer's output never
 * reaches (no relation into them) carry no rows there. */
int bw_hmodel_forward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, bool training, uint64_t seed,
		      const bw_tensor **logits);
/* Backward from dL/dlogits: fills the grads; when gx is not NULL also dL/dx per type
 * (gx[t] [num_nodes[0][t], in_dim[t]], for learned embeddings). */
int bw_hmodel_backward(const bw_backend *be, bw_hmodel *m, const bw_hbatch *b, const bw_tensor *glogits,
		       bw_tensor *gx /* [num_types] or NULL */);

#endif /* BURROW_HMODEL_H */
