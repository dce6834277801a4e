/* hinfer.c: layer-wise full-neighbor inference of a typed model (R-GCN, R-SAGE, R-GAT). Layer
 * l runs over every node of each type that level l + 1 holds (bw_hmodel_uses) before layer
 * l + 1 starts, in chunks of destination rows, each chunk with all its in-neighbors in every
 * relation that runs at l into its type; so each node's embedding is computed once per layer
 * from all its neighbors, as infer.c does for homogeneous models. A type's level-0 rows are
 * its features (the feature store) or learned embeddings; a later level's are the last
 * layer's output, in memory or spilled to a scratch npy file under opts.mem_bytes
 * (bw_layer_buf). The target's logits go to the sink chunk by chunk. */
#include "driver.h"

#include <string.h>

/* One chunk's arrays: per relation its block (destinations -> local sources) and its
 * sources' global ids; the destinations' own rows. */
typedef struct hchunk {
	bw_infer_chunk rel[BURROW_MAX_RELATIONS];
	bw_block blk[BURROW_MAX_RELATIONS];
	bw_block *bp[BURROW_MAX_RELATIONS];
	bw_tensor xs[BURROW_MAX_RELATIONS];
	bw_tensor xd, z;
	int64_t *self_ids;
	int64_t self_cap;
} hchunk;

typedef struct hinfer_run {
	burrow_trainer *t;
	bw_htrain *ht;
	bw_hmodel *m;
	int L, T, R;
	bw_rows emb_rows[BURROW_MAX_TYPES];  /* learned embeddings as rows */
	bw_rows *in[BURROW_MAX_TYPES];       /* each type's rows at the current level */
	bw_layer_buf inb[BURROW_MAX_TYPES];  /* the last layer's outputs */
	bw_layer_buf lo[BURROW_MAX_TYPES];   /* this layer's */
	int32_t *map[BURROW_MAX_TYPES];      /* [N_t] global -> chunk-local ids, -1 unset */
	bw_stage stage;
	hchunk c;
	int64_t rows_done, rows_all;         /* progress */
} hinfer_run;

/* rows[0 .. n) of src into the device tensor x [n, dim]. */
static int gather_into(hinfer_run *r, bw_rows *src, const int64_t *ids, int64_t n, int64_t dim, bw_tensor *x)
{
	const bw_device *dev = r->t->be.dev;
	const size_t bytes = (size_t)(n * dim) * sizeof(float);
	void *xh;
	int st;
	if ((st = bw_tensor_reshape(x, dev, n, dim)) || (st = bw_stage_write(&r->stage, dev, x->data, bytes, &xh)) ||
	    (n && (st = src->gather(src, ids, n, xh))))
		return st;
	return bw_stage_write_commit(&r->stage, dev, x->data, xh, bytes);
}

/* Relation rl's block of destination rows [r0, r1): their in-neighbors as local sources. */
static int rel_block(hinfer_run *r, int rl, int64_t r0, int64_t r1)
{
	const burrow_relation *rel = &r->ht->h->rel[rl];
	const burrow_csr *g = &rel->graph;
	bw_infer_chunk *c = &r->c.rel[rl];
	int32_t *map = r->map[rel->src_type];
	const int64_t nd = r1 - r0, edges = g->indptr[r1] - g->indptr[r0];
	int st;
	if ((st = bw_infer_reserve((void **)&c->ids, &c->ids_cap, BW_MAX(edges, 1), sizeof *c->ids)) ||
	    (st = bw_infer_reserve((void **)&c->indptr, &c->indptr_cap, nd + 1, sizeof *c->indptr)) ||
	    (st = bw_infer_reserve((void **)&c->indices, &c->indices_cap, BW_MAX(edges, 1), sizeof *c->indices)))
		return st;
	int64_t ns = 0, k = 0;
	c->indptr[0] = 0;
	for (int64_t i = 0; i < nd; i++) {
		for (int64_t e = g->indptr[r0 + i]; e < g->indptr[r0 + i + 1]; e++) {
			const int64_t v = burrow_csr_index(g, e);
			if (map[v] < 0) {
				map[v] = (int32_t)ns;
				c->ids[ns++] = v;
			}
			c->indices[k++] = map[v];
		}
		c->indptr[i + 1] = k;
	}
	for (int64_t j = 0; j < ns; j++)
		map[c->ids[j]] = -1;
	bw_block_reuse(&r->c.blk[rl], nd, ns, c->indptr, c->indices);
	r->c.bp[rl] = &r->c.blk[rl];
	return gather_into(r, r->in[rel->src_type], c->ids, ns, r->in[rel->src_type]->dim, &r->c.xs[rl]);
}

/* End of the chunk of type u starting at r0: at most eval_chunk rows, and (past the first
 * row) at most 16 * eval_chunk in-edges over the relations that run into u at layer l. */
static int64_t chunk_end(const hinfer_run *r, int l, int u, int64_t r0)
{
	const int64_t n = r->ht->h->type_nodes[u], cap = r->t->o.eval_chunk;
	const int64_t r1 = BW_MIN(n, r0 + cap);
	int64_t end = r0 + 1;
	for (; end < r1; end++) {
		int64_t edges = 0;
		for (int rl = 0; rl < r->R; rl++)
			if (bw_hmodel_runs(r->m, l, rl) && r->ht->h->rel[rl].dst_type == u) {
				const int64_t *ip = r->ht->h->rel[rl].graph.indptr;
				edges += ip[end + 1] - ip[r0];
			}
		if (edges > 16 * cap)
			break;
	}
	return end;
}

/* Layer l over type u's destination rows [r0, r1). */
static int chunk_run(hinfer_run *r, int l, int u, int64_t r0, int64_t r1, bw_infer_sink sink, void *ctx)
{
	hchunk *c = &r->c;
	const int64_t nd = r1 - r0;
	int st;
	if ((st = bw_infer_reserve((void **)&c->self_ids, &c->self_cap, nd, sizeof *c->self_ids)))
		return st;
	for (int64_t i = 0; i < nd; i++)
		c->self_ids[i] = r0 + i;
	if ((st = gather_into(r, r->in[u], c->self_ids, nd, r->in[u]->dim, &c->xd)))
		return st;
	for (int rl = 0; rl < r->R; rl++) {
		c->bp[rl] = NULL;
		if (bw_hmodel_runs(r->m, l, rl) && r->ht->h->rel[rl].dst_type == u && (st = rel_block(r, rl, r0, r1)))
			return st;
	}
	if ((st = bw_hmodel_infer_layer(&r->t->be, r->m, l, u, &c->xd, c->bp, c->xs, &c->z)))
		return st;
	return l + 1 == r->L ? sink(ctx, r0, &c->z) : bw_layer_buf_put(r->t, &r->lo[u], r0, &c->z);
}

/* After hidden layer l: each computed type's output is its rows at level l + 1. */
static int layer_end(hinfer_run *r, int l, int64_t *spilled)
{
	for (int u = 0; u < r->T; u++) {
		if (!bw_hmodel_uses(r->m, l + 1, u))
			continue;
		bw_layer_buf_free(&r->inb[u]);
		r->inb[u] = r->lo[u];
		memset(&r->lo[u], 0, sizeof r->lo[u]);
		int st = bw_layer_buf_seal(r->t, &r->inb[u], spilled);
		if (st)
			return st;
		r->in[u] = &r->inb[u].rows;
	}
	return 0;
}

static int layer_run(hinfer_run *r, int l, bw_infer_sink sink, void *ctx, int64_t *spilled)
{
	burrow_trainer *t = r->t;
	const bool last = l + 1 == r->L;
	const int64_t width = last ? r->ht->cfg.classes : r->ht->cfg.hidden;
	double budget = bw_trainer_infer_budget(t);
	int st = 0;
	for (int u = 0; !st && u < r->T; u++) {
		if (!bw_hmodel_uses(r->m, l + 1, u))
			continue;
		const int64_t n = r->ht->h->type_nodes[u];
		if (!last) { /* the outputs held in memory share the budget */
			if ((st = bw_layer_buf_open(t, &r->lo[u], l, n, width, budget)))
				break;
			if (r->lo[u].mem)
				budget -= 2.0 * (double)n * (double)width * sizeof(float);
		}
		for (int64_t r0 = 0, r1; !st && r0 < n; r0 = r1) {
			r1 = chunk_end(r, l, u, r0);
			st = chunk_run(r, l, u, r0, r1, sink, ctx);
			r->rows_done += r1 - r0;
			if (!st && t->o.progress)
				t->o.progress(t->o.progress_user, "eval", (uint64_t)r->rows_done, (uint64_t)r->rows_all);
		}
	}
	return st || last ? st : layer_end(r, l, spilled);
}

static void hinfer_end(hinfer_run *r)
{
	for (int u = 0; u < BURROW_MAX_TYPES; u++) {
		bw_layer_buf_free(&r->lo[u]);
		bw_layer_buf_free(&r->inb[u]);
		bw_free(r->map[u]);
	}
	hchunk *c = &r->c;
	for (int rl = 0; rl < BURROW_MAX_RELATIONS; rl++) {
		bw_infer_chunk_free(&c->rel[rl]);
		bw_block_release(&c->blk[rl]);
		bw_tensor_free(&c->xs[rl]);
	}
	bw_tensor_free(&c->xd);
	bw_tensor_free(&c->z);
	bw_free(c->self_ids);
	bw_stage_free(&r->stage);
}

int bw_trainer_hinfer(burrow_trainer *t, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes)
{
	*spilled_bytes = 0;
	bw_htrain *ht = t->typed;
	if (!ht || !ht->model)
		return bw_err(BURROW_E_INVAL, "inference: layer-wise typed inference needs a relational model");
	const bw_device *dev = t->be.dev;
	hinfer_run r = {.t = t, .ht = ht, .m = ht->model, .L = ht->cfg.layers, .T = ht->h->num_types,
			.R = ht->h->num_relations};
	hchunk *c = &r.c;
	c->xd = bw_tensor_empty(dev);
	c->z = bw_tensor_empty(dev);
	for (int rl = 0; rl < BURROW_MAX_RELATIONS; rl++)
		c->xs[rl] = bw_tensor_empty(dev);
	int st = 0;
	for (int u = 0; !st && u < r.T; u++) {
		const int64_t n = ht->h->type_nodes[u];
		if (ht->emb[u]) {
			bw_rows_from_memory(&r.emb_rows[u], ht->emb[u], n, ht->in_dim[u], t->be.threads);
			r.in[u] = &r.emb_rows[u];
		} else {
			r.in[u] = ht->rows_of[u];
		}
		bool src = false;
		for (int l = 0; l < r.L; l++) {
			if (bw_hmodel_uses(r.m, l + 1, u))
				r.rows_all += n;
			for (int rl = 0; rl < r.R; rl++)
				src |= bw_hmodel_runs(r.m, l, rl) && ht->h->rel[rl].src_type == u;
		}
		if (src && !(st = (r.map[u] = bw_malloc((size_t)(n ? n : 1) * sizeof(int32_t))) ? 0 : BURROW_E_NOMEM))
			memset(r.map[u], -1, (size_t)n * sizeof(int32_t));
		if (!st && bw_hmodel_uses(r.m, 0, u) && !r.in[u])
			st = bw_err(BURROW_E_INVAL, "inference: type %s has no input rows", ht->h->type_names[u]);
	}
	for (int l = 0; !st && l < r.L; l++)
		st = layer_run(&r, l, sink, ctx, spilled_bytes);
	hinfer_end(&r);
	return st;
}
