/* htrain.h: the trainer's typed side (htrain.c): what burrow_trainer_* run on a typed
 * dataset (format version 2). */
#ifndef BURROW_HTRAIN_H
#define BURROW_HTRAIN_H

#include "../compute/hmodel.h"
#include "../../graph/dataset_internal.h"
#include "loader.h"
#include "rows.h"

typedef struct bw_htrain {
	burrow_dataset *ds;                        /* borrowed */
	const burrow_hetero *h;                    /* the dataset's */
	const burrow_dataset_info *info;
	const bw_backend *be;                      /* the trainer's (borrowed) */
	burrow_type_info ti[BURROW_MAX_TYPES];
	int64_t in_dim[BURROW_MAX_TYPES];          /* each type's input width (features, or embeddings) */
	burrow_store *store[BURROW_MAX_TYPES];     /* a featured type's features (owned), else NULL */
	bw_rows rows[BURROW_MAX_TYPES];            /* over store[t] */
	bw_rows *rows_of[BURROW_MAX_TYPES];        /* &rows[t], or NULL: learned embeddings */
	float *emb[BURROW_MAX_TYPES];              /* [N_t, in_dim[t]] learned embeddings (owned), or NULL */
	float *emb_m[BURROW_MAX_TYPES], *emb_v[BURROW_MAX_TYPES]; /* their Adam moments */
	bw_tensor xe[BURROW_MAX_TYPES];            /* a batch's embedding rows */
	bw_tensor gx[BURROW_MAX_TYPES];            /* and their gradients */
	bw_hmodel_cfg cfg;
	bw_hmodel *model;                          /* the relational model, or NULL: */
	bw_model *mlp;                             /* an MLP on the target's rows (--model mlp) */
	bw_block mlp_blk[BURROW_MAX_LAYERS];       /* its blocks: the seeds, no edges */
	int64_t *mlp_indptr;                       /* [seeds + 1] zeros */
	size_t mlp_cap;
	bw_batch mlp_b;
	bw_optim *optim;
	burrow_typed_sampler_opts so;              /* fanouts (per relation), batch size; seed set at open */
	bool star_weights;                         /* LABOR-*'s weights feed the relation means (rsage, rgcn
						      on a backend with weighted aggregation); else its picks
						      are taken unweighted */
	burrow_typed_sampler *sampler;             /* the training split's, for sampler_seed */
	uint64_t sampler_seed;
	bw_loader *loader;
	bw_tensor glogits;
	bw_dbuf loss_dev;
	size_t cache_budget;                       /* the feature caches' bytes, all types */
	int depth;                                 /* the loader's depth: opts.prefetch, or lower to fit (fit_depth) */
	double slot_bytes, act_bytes;              /* a loader slot's bytes and the step's activations, estimated
						      from the first training batch (0: not estimated) */
} bw_htrain;

/* Parse opts.rel_fanout ("REL=f0,f1;REL=...") into so->rel_fanouts; REL is a relation's name
 * (when it names one relation) or its src___name___dst triple (h's names). */
int bw_htrain_rel_fanout(const burrow_hetero *h, const char *spec, int layers, burrow_typed_sampler_opts *so);

/* Open the typed side for ds (a typed dataset, borrowed) on the backend be (borrowed). */
int bw_htrain_open(bw_htrain **out, burrow_dataset *ds, const burrow_train_opts *o, const bw_backend *be);
void bw_htrain_close(bw_htrain *ht);
/* One epoch (number `epoch`, 0-based) of mini-batches; fills es except epoch and store fields. */
int bw_htrain_epoch(bw_htrain *ht, const burrow_train_opts *o, int epoch, burrow_epoch_stats *es);
/* Sampled evaluation of the target type's splits set in `splits` (bit s for split s):
 * correct and labelled counts (eval_fanout, else the training fanouts). */
int bw_htrain_evaluate(bw_htrain *ht, const burrow_train_opts *o, int epoch, unsigned splits, int64_t correct[3],
		       int64_t total[3]);
/* FNV-1a over the weights (0 when they are not in host memory). */
uint64_t bw_htrain_checksum(const bw_htrain *ht);

/* ------------------------------------------------------------ checkpoints (checkpoint.c) */

struct bw_ck_typed;
/* What a checkpoint of ht holds (driver.h): pointers into ht, valid while it stays open. */
void bw_htrain_ck_typed(bw_htrain *ht, struct bw_ck_typed *out);

#endif /* BURROW_HTRAIN_H */
