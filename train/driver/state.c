/* state.c: what the trainer's parts share of its state (trainer.c, infer.c, outputs.c call
 * these; they call nothing of those files): the splits in force, the whole graph as one
 * block, the key of layer 0's kept output, the sampler's trim hook, the evaluated splits. */
#include "driver.h"
#include "../../core/half.h"

const int64_t *bw_trainer_split(const burrow_trainer *t, int s, int64_t *n)
{
	if (!t->drawn)
		return burrow_dataset_split(t->ds, s, n);
	int64_t at = 0;
	for (int k = 0; k < s; k++)
		at += t->drawn_n[k];
	*n = t->drawn_n[s];
	return *n ? t->drawn + at : NULL;
}

uint64_t bw_trainer_layer0_key(const burrow_trainer *t)
{
	return t->o.full_graph && t->reuse_layer0 && bw_model_memo_able(t->model) ? t->wversion : 0;
}

void bw_trainer_trim_graph(void *arg)
{
	const burrow_trainer *t = arg;
	(void)bw_dataset_trim_graph(t->ds, t->graph_keep); /* logs at debug level when it drops */
}

/* The whole graph's edge weights (opts.edge_weight: one column of the mapped edge features,
 * in CSR order) and GAT's edge feature rows, set on t->full. */
static int full_edge_data(burrow_trainer *t)
{
	const int64_t e = t->graph->indptr[t->graph->num_nodes], de = t->info->edge_feat_dim;
	if (t->o.edge_weight) {
		bw_free(t->ew_full);
		if (!(t->ew_full = bw_malloc((size_t)BW_MAX(e, 1) * sizeof *t->ew_full)))
			return BURROW_E_NOMEM;
		for (int64_t j = 0; j < e; j++) {
			const int64_t at = j * de + t->o.edge_weight_col;
			t->ew_full[j] = t->info->edge_feat_dtype == BURROW_DTYPE_F16
						? bw_f16_to_f32(((const uint16_t *)t->ew_map.data)[at])
						: ((const float *)t->ew_map.data)[at];
		}
		t->full.edge_weight = t->ew_full;
	}
	if (t->gat_edges) {
		int64_t cap = 0;
		bw_free(t->ef_full);
		t->ef_full = NULL;
		int st = bw_trainer_edge_rows(t, 0, e, &t->ef_full, &cap, &t->full.edge_feat);
		if (st)
			return st;
		t->full.edge_feat_dim = de;
	}
	return 0;
}

/* The whole graph as one block: int32 local ids are the dataset's own. */
int bw_trainer_full_block(burrow_trainer *t)
{
	if (t->full_ready)
		return 0;
	const burrow_csr *g = t->graph;
	if (g->index_width != 4 || g->num_nodes > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "train: full-graph training needs int32 node ids (%lld nodes)",
			      (long long)g->num_nodes);
	bw_block_init(&t->full, g->num_nodes, g->num_nodes, g->indptr, g->indices);
	int st = full_edge_data(t);
	if (st)
		return st;
	if (t->gcn_norm && !t->o.edge_weight) /* weighted: the whole graph's weighted degrees, from the block */
		t->full.dst_norm = t->full.src_norm = t->gcn_norm;
	st = bw_block_prepare(&t->full, t->o.model != BURROW_MODEL_MLP, t->o.model == BURROW_MODEL_GCN);
	t->full_ready = st == 0;
	return st;
}

unsigned bw_trainer_eval_splits(const burrow_trainer *t)
{
	if (t->o.eval_splits)
		return t->o.eval_splits;
	return t->o.eval_fanout[0] ? BURROW_EVAL_VALID | BURROW_EVAL_TEST : BURROW_EVAL_ALL;
}
