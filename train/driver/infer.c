/* infer.c: layer-wise full-neighbor inference over all nodes, in chunks of destination rows
 * (evaluation and embed). Layer l runs over every node before layer l + 1 starts, so each
 * node's embedding is computed once per layer from all its neighbors; a chunk is a block in
 * the sampler's convention (its destination rows first, then their other neighbors), so the
 * same layer forward serves training batches and inference. A hidden layer's embeddings
 * stay in memory while they fit in half of opts.mem_bytes (when 0 under RLIMIT_AS: of what
 * is left of it), else they are streamed to a scratch npy file and read back with pread. */
#include "driver.h"
#include "../../core/half.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bw_infer_reserve(void **p, int64_t *cap, int64_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	int64_t n = BW_MAX(need, *cap * 2);
	void *q = bw_realloc(*p, (size_t)n * elem);
	if (!q)
		return BURROW_E_NOMEM;
	*p = q;
	*cap = n;
	return 0;
}

void bw_infer_chunk_free(bw_infer_chunk *c)
{
	bw_free(c->ids);
	bw_free(c->indptr);
	bw_free(c->indices);
	bw_free(c->src_norm);
}

/* The weights of rows [r0, r1)'s edges, which the chunk lists in CSR order (opts.edge_weight):
 * a column of the mapped edge features into t->ew_chunk, set as blk's. */
static int chunk_weights(burrow_trainer *t, int64_t r0, int64_t r1, bw_block *blk)
{
	const int64_t e0 = t->graph->indptr[r0], n = t->graph->indptr[r1] - e0, de = t->info->edge_feat_dim;
	const int64_t col = t->o.edge_weight_col;
	int st = bw_infer_reserve((void **)&t->ew_chunk, &t->ew_chunk_cap, BW_MAX(n, 1), sizeof *t->ew_chunk);
	if (st)
		return st;
	for (int64_t e = 0; e < n; e++) {
		const int64_t at = (e0 + e) * de + col;
		t->ew_chunk[e] = t->info->edge_feat_dtype == BURROW_DTYPE_F16
					 ? bw_f16_to_f32(((const uint16_t *)t->ew_map.data)[at])
					 : ((const float *)t->ew_map.data)[at];
	}
	blk->edge_weight = t->ew_chunk;
	return 0;
}

/* Rows [r0, r1) and their neighbors as a block. Fails only before touching t->map, which
 * the caller resets for blk's sources afterwards (blk is empty on failure). */
static int build_chunk(burrow_trainer *t, bw_infer_chunk *c, int64_t r0, int64_t r1, bool graph, bw_block *blk)
{
	const burrow_csr *g = t->graph;
	const int64_t nd = r1 - r0;
	const int64_t edges = graph ? g->indptr[r1] - g->indptr[r0] : 0;
	int st;
	memset(blk, 0, sizeof *blk);
	if ((st = bw_infer_reserve((void **)&c->ids, &c->ids_cap, nd + edges, sizeof *c->ids)) ||
	    (st = bw_infer_reserve((void **)&c->indptr, &c->indptr_cap, nd + 1, sizeof *c->indptr)) ||
	    (st = bw_infer_reserve((void **)&c->indices, &c->indices_cap, BW_MAX(edges, 1), sizeof *c->indices)) ||
	    (t->gcn_norm && (st = bw_infer_reserve((void **)&c->src_norm, &c->norm_cap, nd + edges, sizeof *c->src_norm))))
		return st;
	int64_t ns = nd;
	for (int64_t i = 0; i < nd; i++) {
		c->ids[i] = r0 + i;
		if (graph)
			t->map[r0 + i] = (int32_t)i;
	}
	c->indptr[0] = 0;
	for (int64_t i = 0; i < nd; i++) {
		int64_t k = c->indptr[i];
		if (graph) {
			for (int64_t e = g->indptr[r0 + i]; e < g->indptr[r0 + i + 1]; e++) {
				const int64_t v = burrow_csr_index(g, e);
				if (t->map[v] < 0) {
					t->map[v] = (int32_t)ns;
					c->ids[ns++] = v;
				}
				c->indices[k++] = t->map[v];
			}
		}
		c->indptr[i + 1] = k;
	}
	bw_block_init(blk, nd, ns, c->indptr, c->indices);
	if (graph && t->o.edge_weight && (st = chunk_weights(t, r0, r1, blk)))
		return st;
	if (graph && t->gat_edges) { /* the chunk lists rows r0.. r1's entries in CSR order */
		if ((st = bw_trainer_edge_rows(t, g->indptr[r0], edges, &t->ef_chunk, &t->ef_chunk_cap, &blk->edge_feat)))
			return st;
		blk->edge_feat_dim = t->info->edge_feat_dim;
	}
	if (t->gcn_norm && !t->o.edge_weight) {
		for (int64_t j = 0; j < ns; j++)
			c->src_norm[j] = t->gcn_norm[c->ids[j]];
		blk->dst_norm = t->gcn_norm + r0;
		blk->src_norm = c->src_norm;
	}
	return 0;
}

/* End of the chunk starting at r0: at most eval_chunk rows, and (past the first row) at most
 * 16 * eval_chunk neighbors, so the gathered sources stay bounded on high-degree graphs. */
static int64_t chunk_end(const burrow_trainer *t, int64_t r0, bool graph)
{
	const int64_t n = t->info->num_nodes, cap = t->o.eval_chunk;
	int64_t r1 = BW_MIN(n, r0 + cap);
	if (!graph)
		return r1;
	const int64_t *ip = t->graph->indptr;
	int64_t r = r0 + 1;
	while (r < r1 && ip[r + 1] - ip[r0] <= 16 * cap)
		r++;
	return r;
}

static char *spill_path(burrow_trainer *t, int layer)
{
	const char *dir = bw_scratch_dir(t->scratch_dir);
	/* what evaluations killed before they could remove their spills left */
	if (bw_rm_stale_prefixed(dir, "burrow-spill-"))
		return NULL;
	char name[96];
	snprintf(name, sizeof name, "burrow-spill-%ld-%llu-layer%d.npy", (long)getpid(),
		 (unsigned long long)t->spill_seq++, layer);
	return bw_path_join(dir, name);
}

/* --mem, else what RLIMIT_AS leaves, else the memory available now: without a limit an
 * evaluation of a typed twin at 1/16 (two types of 7.6M nodes, [N, 256] float32 per type and
 * level) kept every layer in memory and was killed by the kernel at 24 GB. */
double bw_trainer_infer_budget(const burrow_trainer *t)
{
	size_t left, limit;
	if (t->o.mem_bytes > 0)
		return (double)t->o.mem_bytes;
	if (bw_as_left(&left, &limit))
		return (double)left;
	const size_t avail = bw_mem_available_at(NULL);
	return avail == SIZE_MAX ? INFINITY : (double)avail;
}

int bw_layer_buf_open(burrow_trainer *t, bw_layer_buf *lb, int layer, int64_t n, int64_t dim, double budget)
{
	memset(lb, 0, sizeof *lb);
	lb->n = n;
	lb->dim = dim;
	const double bytes = (double)n * (double)dim * sizeof(float);
	if (bytes <= budget / 2)
		return (lb->mem = bw_aligned_alloc(64, (size_t)(n * dim) * sizeof(float) + 1)) ? 0 : BURROW_E_NOMEM;
	const int64_t shape[2] = {n, dim};
	if (!(lb->path = spill_path(t, layer)))
		return BURROW_E_NOMEM;
	lb->reg = bw_tmp_add(lb->path); /* removed if the command is interrupted */
	int st = bw_npy_writer_open(&lb->w, lb->path, BURROW_DTYPE_F32, 2, shape, BW_NPY_ALIGN);
	lb->writing = st == 0;
	return st;
}

int bw_layer_buf_put(burrow_trainer *t, bw_layer_buf *lb, int64_t r0, const bw_tensor *z)
{
	const bw_device *dev = t->be.dev;
	const size_t bytes = (size_t)(z->rows * lb->dim) * sizeof(float);
	if (lb->mem)
		return bw_device_download(dev, lb->mem + r0 * lb->dim, z->data, bytes);
	const void *zh;
	int st = bw_stage_read(&t->stage, dev, z->data, bytes, &zh);
	return st ? st : bw_npy_writer_append(&lb->w, zh, bytes);
}

int bw_layer_buf_seal(burrow_trainer *t, bw_layer_buf *lb, int64_t *spilled)
{
	int st;
	if (lb->writing) {
		lb->writing = false;
		if ((st = bw_npy_writer_commit(&lb->w)))
			return st;
		*spilled += lb->n * lb->dim * (int64_t)sizeof(float);
	}
	if (lb->mem) {
		bw_rows_from_memory(&lb->rows, lb->mem, lb->n, lb->dim, t->be.threads);
		lb->sealed = true;
		return 0;
	}
	st = bw_rows_open_npy(&lb->rows, lb->path);
	lb->sealed = st == 0;
	return st;
}

void bw_layer_buf_free(bw_layer_buf *lb)
{
	if (lb->sealed)
		bw_rows_close(&lb->rows);
	if (lb->writing)
		bw_npy_writer_abort(&lb->w);
	if (lb->path) {
		unlink(lb->path);
		bw_tmp_drop(lb->reg);
	}
	bw_free(lb->path);
	bw_aligned_free(lb->mem);
	memset(lb, 0, sizeof *lb);
}

int bw_trainer_infer(burrow_trainer *t, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes)
{
	return bw_trainer_infer_upto(t, t->o.layers, sink, ctx, spilled_bytes);
}

/* One layer-wise inference: its phases share this, and infer_end frees whatever of it was
 * acquired (every field starts empty). */
typedef struct infer_run {
	burrow_trainer *t;
	int64_t n;
	bool graph;             /* the model reads the graph (not an MLP) */
	bool whole;             /* full-graph mode, the graph in one chunk (t->infer_z) */
	bw_infer_chunk c;
	bw_tensor x, z;         /* a chunk's input rows and output on the device */
	bw_stage in_stage;
	bw_rows *in;            /* this layer's input rows: the features, then the last layer's output */
	bw_layer_buf inb;       /* the last layer's output (layers > 0) */
	bw_layer_buf lo;        /* where this layer's output goes (a hidden layer's) */
	bw_infer_sink sink;
	void *ctx;
	int64_t *spilled;
} infer_run;

static int infer_begin(infer_run *r)
{
	burrow_trainer *t = r->t;
	const bw_device *dev = t->be.dev;
	r->x = bw_tensor_empty(dev);
	r->z = bw_tensor_empty(dev);
	r->in = &t->feat_rows;
	r->graph = t->o.model != BURROW_MODEL_MLP;
	if (r->graph && !t->map) {
		if (!(t->map = bw_malloc((size_t)(r->n ? r->n : 1) * sizeof *t->map)))
			return BURROW_E_NOMEM;
		memset(t->map, -1, (size_t)r->n * sizeof *t->map);
	}
	/* full-graph mode with the whole graph in one chunk: every layer runs over the whole graph
	 * in its own ids, as in a training step; layer 0 reads the features on the device and
	 * each next layer the previous one's output there (t->infer_z) */
	r->whole = t->o.full_graph && chunk_end(t, 0, r->graph) >= r->n;
	if (r->whole && t->infer_z[0].dev != dev) {
		t->infer_z[0] = bw_tensor_empty(dev);
		t->infer_z[1] = bw_tensor_empty(dev);
	}
	return 0;
}

/* Layer l over destination rows [r0, r1): its block, its input rows on the device, the
 * layer's forward, and the output to the sink (last layer), memory or the spill. */
static int chunk_run(infer_run *r, int l, int64_t r0, int64_t r1, int64_t din, bool last)
{
	burrow_trainer *t = r->t;
	const bw_device *dev = t->be.dev;
	bw_block blk, *bp = &blk;
	int st;
	/* the whole graph: the training's block, built once (build_chunk would rebuild the
	 * same CSR in the dataset's own ids at every evaluation, on one thread) */
	if (r->whole && r->graph && t->graph->index_width == 4 && r->n <= INT32_MAX) {
		memset(&blk, 0, sizeof blk);
		if (!(st = bw_trainer_full_block(t)))
			bp = &t->full;
	} else {
		st = build_chunk(t, &r->c, r0, r1, r->graph, &blk);
	}
	/* whole: layer 0's output is kept for the next training step (trainer.c) */
	bw_tensor x0 = r->x; /* layer 0's chunk rows, with their sparse copy (mini-batch mode) */
	const bw_tensor *xin = !r->whole ? (l == 0 ? &x0 : &r->x) : l == 0 ? &t->feat : &t->infer_z[(l - 1) & 1];
	bw_tensor *zout = r->whole ? &t->infer_z[l & 1] : &r->z;
	/* else the chunk's input rows, gathered on the host and put on the device */
	const size_t xbytes = (size_t)(blk.num_src * din) * sizeof(float);
	void *xh;
	if (!st && !r->whole && !(st = bw_tensor_reshape(&r->x, dev, blk.num_src, din)) &&
	    !(st = bw_stage_write(&r->in_stage, dev, r->x.data, xbytes, &xh)) &&
	    !(st = r->in->gather(r->in, r->c.ids, blk.num_src, xh)))
		st = bw_stage_write_commit(&r->in_stage, dev, r->x.data, xh, xbytes);
	x0 = r->x;
	if (!st && !r->whole && l == 0)
		st = bw_trainer_sparse_x(t, &x0, r->c.ids);
	if (!st)
		st = bw_model_infer_layer_keep(&t->be, t->model, l, bp, xin, zout,
					       r->whole && l == 0 ? bw_trainer_layer0_key(t) : 0);
	if (r->graph && bp == &blk)
		for (int64_t j = 0; j < blk.num_src; j++)
			t->map[r->c.ids[j]] = -1;
	bw_block_release(&blk);
	if (st)
		return st;
	if (last)
		return r->sink(r->ctx, r0, zout);
	if (r->whole)
		return 0; /* the next layer reads zout where it is */
	return bw_layer_buf_put(t, &r->lo, r0, &r->z);
}

/* After a hidden layer: its output (spill committed) becomes the next layer's input. */
static int layer_end(infer_run *r)
{
	bw_layer_buf_free(&r->inb);
	r->inb = r->lo;
	memset(&r->lo, 0, sizeof r->lo);
	int st = bw_layer_buf_seal(r->t, &r->inb, r->spilled);
	r->in = &r->inb.rows;
	return st;
}

/* Free what the run holds, whatever phase it stopped in. */
static void infer_end(infer_run *r)
{
	bw_layer_buf_free(&r->lo);
	bw_layer_buf_free(&r->inb);
	bw_tensor_free(&r->x);
	bw_tensor_free(&r->z);
	bw_stage_free(&r->in_stage);
	bw_infer_chunk_free(&r->c);
}

int bw_trainer_infer_upto(burrow_trainer *t, int layers, bw_infer_sink sink, void *ctx, int64_t *spilled_bytes)
{
	*spilled_bytes = 0;
	if (layers < 1 || layers > t->o.layers)
		return bw_err(BURROW_E_INVAL, "inference: layer %d is not in [1, %d]", layers, t->o.layers);
	infer_run r = {.t = t, .n = t->info->num_nodes, .sink = sink, .ctx = ctx, .spilled = spilled_bytes};
	int st = infer_begin(&r);
	for (int l = 0; !st && l < layers; l++) {
		int64_t din, dout;
		bw_model_layer_dims(&t->model->cfg, l, &din, &dout);
		const bool last = l == layers - 1;
		if (!last && !r.whole)
			st = bw_layer_buf_open(t, &r.lo, l, r.n, dout, bw_trainer_infer_budget(t));
		for (int64_t r0 = 0, r1; !st && r0 < r.n; r0 = r1) {
			r1 = chunk_end(t, r0, r.graph);
			st = chunk_run(&r, l, r0, r1, din, last);
			if (!st && t->o.progress) /* every layer's rows, phase "eval" */
				t->o.progress(t->o.progress_user, "eval", (uint64_t)(l * r.n + r1), (uint64_t)(layers * r.n));
		}
		if (!st && !last && !r.whole)
			st = layer_end(&r);
	}
	infer_end(&r);
	return st;
}

/* A multi-label batch of sampled evaluation: its seeds' logits into their rows of scores [N, T]. */
static int eval_scores(burrow_trainer *t, const burrow_batch *sb, const bw_tensor *logits, float *scores)
{
	const size_t row = (size_t)logits->cols * sizeof(float);
	const float *z;
	int st = bw_stage_read(&t->stage, t->be.dev, logits->data, (size_t)sb->num_seeds * row, (const void **)&z);
	for (int64_t i = 0; !st && i < sb->num_seeds; i++)
		memcpy(scores + sb->seeds[i] * logits->cols, z + i * logits->cols, row);
	return st;
}

/* Count the correct predictions of one loaded batch of sampled evaluation (split sp); with
 * scores (multi-label), keep its logits there instead. */
static int eval_score(burrow_trainer *t, const bw_loaded *lb, int sp, bw_dbuf *pred, int64_t *correct, int64_t *total,
		      float *scores)
{
	const bw_device *dev = t->be.dev;
	const burrow_batch *sb = lb->sb;
	const bw_tensor *logits;
	const int32_t *p;
	const size_t bytes = (size_t)sb->num_seeds * sizeof(int32_t);
	int st;
	if (scores)
		return (st = bw_model_forward(&t->be, t->model, &lb->b, false, t->o.seed, &logits)) ? st
													: eval_scores(t, sb, logits, scores);
	if ((st = bw_model_forward(&t->be, t->model, &lb->b, false, t->o.seed, &logits)) ||
	    (st = bw_dbuf_reserve(pred, dev, bytes)) || (st = bw_argmax(&t->be, logits, pred->ptr)) ||
	    (st = bw_stage_read(&t->stage, dev, pred->ptr, bytes, (const void **)&p)))
		return st;
	for (int64_t i = 0; i < sb->num_seeds; i++) {
		const int32_t y = t->labels[sb->seeds[i]];
		total[sp] += y >= 0;
		correct[sp] += y >= 0 && p[i] == y;
	}
	return 0;
}

/* The sampler of evaluation (opts.eval_fanout) and a loader over its batches: in line (the
 * sampler draws on the caller's thread), one batch ahead. */
static int eval_open(burrow_trainer *t, burrow_sampler **s, bw_loader **ld)
{
	burrow_sampler_opts so;
	burrow_sampler_defaults(&so);
	so.num_layers = t->o.layers;
	for (int l = 0; l < t->o.layers; l++)
		so.fanouts[l] = t->o.model == BURROW_MODEL_MLP ? 0 : t->o.eval_fanout[l];
	so.batch_size = t->o.batch_size;
	so.seed = t->o.seed;
	so.threads = t->be.threads;
	so.prefetch = 0;
	so.device = t->sampler_dev;
	so.edge_ids = t->o.edge_weight || t->gat_edges;
	bw_loader_cfg lc = {
		.dev = t->be.dev,
		.compute = t->be.stream,
		.depth = 1,
		.thread = false,
		.num_layers = t->o.layers,
		.dim = bw_trainer_in_dim(t),
		.norm = t->gcn_norm,
		.blocks = t->o.model != BURROW_MODEL_MLP,
		.transpose = false,
		.gcn = t->o.model == BURROW_MODEL_GCN,
		.rows_unread = bw_trainer_rows_unread(t),
	};
	bw_trainer_edge_weights(t, &lc);
	int st = bw_sampler_open_checked(s, t->graph, NULL, 0, &so, bw_trainer_trim_graph, t);
	return st ? st : bw_loader_open(ld, &lc);
}

/* Evaluation by sampling: the nodes of each split, batch_size at a time, with their
 * neighbors sampled by opts.eval_fanout (keyed by split and batch, so the result does not
 * depend on threads), their input rows gathered from the features, the model run in
 * inference mode on the batch, the argmax compared with the labels; only the splits whose
 * bit is set in `splits` (bit s for split s). The loader holds two batches: nothing of size
 * N x hidden, whatever the graph. The next batch is sampled and its rows read while the
 * current one waits for its reads and runs, as in training: one batch at a time left the
 * disk idle while sampling and computing (at papers100M's size, a batch's reads are most
 * of its time). The batches and their order are the same either way. */
static int eval_sampled(burrow_trainer *t, unsigned splits, int64_t correct[3], int64_t total[3], float *scores)
{
	burrow_sampler *s = NULL;
	bw_loader *ld = NULL;
	bw_dbuf pred = {0};
	const int64_t *ids[3] = {NULL, NULL, NULL};
	int64_t n[3] = {0, 0, 0};
	for (int sp = 0; sp < 3; sp++) {
		correct[sp] = total[sp] = 0;
		if (splits >> sp & 1)
			ids[sp] = bw_trainer_split(t, sp, &n[sp]);
	}
	int st = eval_open(t, &s, &ld);
	bw_seed_batches sb;
	bw_producer p;
	bw_producer_seeds(&p, &sb, s, ids, n, t->o.batch_size);
	if (!st)
		st = bw_loader_start(ld, &p, &t->feat_rows, sb.count);
	for (int64_t k = 0; !st && k < sb.count; k++) {
		bw_loaded lb;
		int sp;
		int64_t first, cnt;
		bw_seed_batch_at(&sb, k, &sp, &first, &cnt);
		if ((st = bw_loader_next(ld, &lb)))
			break;
		lb.b.epoch = (uint64_t)t->epoch;
		lb.b.index = (uint64_t)first;
		if ((st = bw_trainer_sparse_x(t, &lb.b.x, lb.sb ? lb.sb->input_ids : NULL)) || (st = eval_score(t, &lb, sp, &pred, correct, total, scores)) ||
		    (st = bw_loader_done(ld)))
			break;
		if (t->o.progress)
			t->o.progress(t->o.progress_user, "eval", (uint64_t)(first + cnt), (uint64_t)n[sp]);
	}
	bw_loader_close(ld); /* before the sampler its batches go back to */
	burrow_sampler_close(s);
	bw_dbuf_free(&pred);
	return st;
}

int bw_trainer_eval_sampled(burrow_trainer *t, unsigned splits, int64_t correct[3], int64_t total[3])
{
	return eval_sampled(t, splits, correct, total, NULL);
}

int bw_trainer_eval_sampled_scores(burrow_trainer *t, unsigned splits, float *scores)
{
	int64_t correct[3], total[3];
	return eval_sampled(t, splits, correct, total, scores);
}
