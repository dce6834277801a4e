/* loader.c: the batch loader (loader.h): slots, the loader thread, the copy stream, and
 * the one function that turns a filled slot into a compute batch (docs/train.md,
 * "Pipeline"). */
#include "loader.h"
#include "../../core/half.h"

#include <pthread.h>
#include <string.h>

/* One source's rows of a batch: the batch's input rows (a batch of nodes), or one type's
 * (a typed batch: one part per node type). */
typedef struct rows_part {
	bw_rows *src;                 /* where they come from (borrowed); NULL: none here (a type whose
					 rows the caller puts in place: learned embeddings) */
	int64_t dim;                  /* row width */
	void *ticket;                 /* the read while in flight (bw_rows.submit), else NULL */
	float *x;                     /* [n, dim] the rows, the device's host memory (owned, grows) */
	int64_t x_cap;                /* floats */
	bw_dbuf x_dev;                /* the rows on a device whose memory is not host memory (and where a
					 source with on_device puts them, on any device) */
} rows_part;

typedef struct slot {
	burrow_batch *sb;             /* held from the producer (a batch of nodes); NULL when empty */
	burrow_typed_batch *tb;       /* or a typed batch */
	rows_part part[BURROW_MAX_TYPES]; /* [ld->nparts] */
	int32_t *labels;              /* [num_seeds] the seeds' labels (host) */
	float *norm;                  /* [num_input] GCN norms (host), read by the blocks (from cfg.norm, or
					 brought by the source of rows) */
	size_t labels_cap, norm_cap;
	float *ew[BURROW_MAX_LAYERS]; /* [num_edges] each block's edge weights (host; cfg.edge_feat) */
	size_t ew_cap[BURROW_MAX_LAYERS];
	float *ef[BURROW_MAX_LAYERS]; /* [num_edges, ew_dim] each block's edge feature rows (host; cfg.ef_rows) */
	size_t ef_cap[BURROW_MAX_LAYERS];
	/* over the batch's arrays, [layer] (typed: [layer * num_relations + relation]); released
	 * when the slot closes */
	bw_block blk[BURROW_MAX_LAYERS * BURROW_MAX_RELATIONS];
	int nblk;
	/* on a device whose memory is not host memory: the rows (rows_part.x_dev) and labels
	 * there, queued on the copy stream with the blocks; `ready` after them, `done` after the
	 * step that used them */
	bw_dbuf labels_dev;
	bw_event *ready, *done;
	bool done_pending;            /* done was recorded and not yet waited for */
	int status;                   /* the load's error (0: none) and its message */
	char msg[512];
} slot;

struct bw_loader {
	bw_loader_cfg c;
	int nslots;                   /* depth + 1 */
	slot *slots;                  /* [nslots] */
	bw_stream *copy;              /* host -> device copies (a device whose memory is not host memory) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool sync_ready;              /* mu and cv initialized */
	pthread_t thread;
	bool running;
	/* the sequence */
	bw_producer p;
	bool typed;                   /* the producer's batches are typed */
	int nparts;                   /* sources of rows: 1, or the types' count */
	bw_rows *rows;                /* = rows_of[0]: the source of a batch of nodes (NULL: no sequence) */
	bw_rows *rows_of[BURROW_MAX_TYPES]; /* typed: each type's source (NULL: the caller's rows) */
	int64_t num;                  /* batches in it */
	int64_t taken;                /* batches [0, taken) were handed out by bw_loader_next */
	int64_t loaded;               /* batches [0, loaded) are in their slots (or failed) (mu) */
	int64_t consumed;             /* batches [0, consumed) are done: their slots may be refilled (mu) */
	bool stop;                    /* the consumer gave up on the sequence (mu) */
};

/* Make *x hold at least `need` floats of the device's host memory (pinned for a GPU),
 * growing it by a quarter more; its contents are not kept. */
static int host_reserve(const bw_device *dev, float **x, int64_t *cap, int64_t need)
{
	if (need <= *cap)
		return 0;
	const int64_t n = need + need / 4;
	bw_device_host_free(dev, *x);
	*x = NULL;
	*cap = 0;
	int st = bw_device_host_alloc(dev, (size_t)n * sizeof(float), (void **)x);
	if (!st)
		*cap = n;
	return st;
}

/* Whether a loader thread loads the batches (else the caller, in line). */
static bool threaded(const bw_loader *ld) { return ld->c.thread && ld->c.depth > 0; }

/* Whether the batches' GCN norms are the ones the source of rows brings. */
static bool norms_from_rows(const bw_loader *ld) { return !ld->typed && !ld->c.norm && ld->rows->norms; }

/* The ids of part i of sl's batch: the input nodes, or type i's input nodes. */
static const int64_t *part_ids(const slot *sl, int i, int64_t *n)
{
	if (sl->tb) {
		*n = sl->tb->num_nodes[0][i];
		return sl->tb->input_ids[i];
	}
	*n = sl->sb->num_input;
	return sl->sb->input_ids;
}

/* The seeds of sl's batch (the target type's, in a typed batch). */
static const int64_t *batch_seeds(const slot *sl, int64_t *n)
{
	*n = sl->tb ? sl->tb->num_seeds : sl->sb->num_seeds;
	return sl->tb ? sl->tb->seeds : sl->sb->seeds;
}

/* Room in sl for its batch's rows (host, and on the device for a source that puts them
 * there) and, when the source brings them, its GCN norms. */
static int reserve(bw_loader *ld, slot *sl)
{
	int st = 0;
	for (int i = 0; !st && i < ld->nparts; i++) {
		rows_part *pt = &sl->part[i];
		int64_t n;
		part_ids(sl, i, &n);
		if (!pt->src)
			continue;
		st = host_reserve(ld->c.dev, &pt->x, &pt->x_cap, n * pt->dim);
		if (!st && pt->src->on_device)
			st = bw_dbuf_reserve(&pt->x_dev, ld->c.dev, (size_t)(n * pt->dim) * sizeof(float) + 1);
	}
	if (!st && norms_from_rows(ld))
		st = bw_grow(&sl->norm, &sl->norm_cap, (size_t)sl->sb->num_input, sizeof *sl->norm, false);
	return st;
}

/* The compute's arrays of sl's batch, on the host: the seeds' labels, the GCN norms of its
 * input nodes (every block's nodes are a prefix of them; brought by the source, they are
 * complete at its wait), the blocks over the batch's arrays, prepared as the step will want
 * them. */
static int fill_labels(bw_loader *ld, slot *sl)
{
	const bw_loader_cfg *c = &ld->c;
	int64_t n;
	const int64_t *seeds = batch_seeds(sl, &n);
	int st;
	if ((st = bw_grow(&sl->labels, &sl->labels_cap, (size_t)n, sizeof *sl->labels, false)))
		return st;
	for (int64_t i = 0; i < n; i++)
		sl->labels[i] = c->labels[seeds[i] - c->label_base];
	return 0;
}

/* fill for a typed batch: its labels and its blocks, [layer][relation] (no GCN norms), each
 * with the sampler's edge weights when cfg.sampler_weights. */
static int fill_typed(bw_loader *ld, slot *sl)
{
	const bw_loader_cfg *c = &ld->c;
	const burrow_typed_batch *tb = sl->tb;
	int st;
	if (tb->num_layers != c->num_layers || tb->num_types != ld->nparts)
		return bw_err(BURROW_E_INVAL, "loader: a typed batch of %d layers and %d types for a %d-layer model of %d",
			      tb->num_layers, tb->num_types, c->num_layers, ld->nparts);
	if (c->labels && (st = fill_labels(ld, sl)))
		return st;
	const int nr = tb->num_relations;
	for (int l = 0; l < tb->num_layers; l++)
		for (int r = 0; r < nr; r++) {
			const burrow_block *sbl = &tb->blocks[l][r];
			bw_block *b = &sl->blk[l * nr + r];
			bw_block_reuse(b, sbl->num_dst, sbl->num_src, sbl->indptr, sbl->indices);
			sl->nblk = BW_MAX(sl->nblk, l * nr + r + 1);
			if (c->sampler_weights && c->blocks && sbl->edge_weight)
				b->edge_weight = sbl->edge_weight; /* LABOR-*'s, valid while the slot holds the batch */
			if (c->blocks && (st = bw_block_prepare(b, c->transpose, false)))
				return st;
		}
	return 0;
}

/* Block l's edge weights into sl->ew[l]: column ew_col of the edge features at each edge's
 * CSR position (cfg.edge_feat). */
static int fill_weights(bw_loader *ld, slot *sl, int l, const burrow_block *sbl)
{
	const bw_loader_cfg *c = &ld->c;
	if (!sbl->edge_ids && sbl->num_edges > 0)
		return bw_err(BURROW_E_INVAL, "loader: edge weights, but block %d of the batch has no edge ids "
			      "(burrow_sampler_opts.edge_ids)", l);
	int st = bw_grow(&sl->ew[l], &sl->ew_cap[l], (size_t)BW_MAX(sbl->num_edges, 1), sizeof(float), false);
	if (st)
		return st;
	for (int64_t e = 0; e < sbl->num_edges; e++) {
		const int64_t at = sbl->edge_ids[e] * c->ew_dim + c->ew_col;
		sl->ew[l][e] = c->ew_dtype == BURROW_DTYPE_F16 ? bw_f16_to_f32(((const uint16_t *)c->edge_feat)[at])
							      : ((const float *)c->edge_feat)[at];
	}
	return 0;
}

/* Block l's edge feature rows into sl->ef[l], float32: row edge_ids[e] of the edge features
 * for each edge e (cfg.ef_rows). */
static int fill_edge_rows(bw_loader *ld, slot *sl, int l, const burrow_block *sbl)
{
	const bw_loader_cfg *c = &ld->c;
	const int64_t de = c->ew_dim;
	if (!sbl->edge_ids && sbl->num_edges > 0)
		return bw_err(BURROW_E_INVAL, "loader: edge features, but block %d of the batch has no edge ids "
			      "(burrow_sampler_opts.edge_ids)", l);
	int st = bw_grow(&sl->ef[l], &sl->ef_cap[l], (size_t)BW_MAX(sbl->num_edges * de, 1), sizeof(float), false);
	if (st)
		return st;
	for (int64_t e = 0; e < sbl->num_edges; e++) {
		const int64_t at = sbl->edge_ids[e] * de;
		float *o = sl->ef[l] + e * de;
		if (c->ew_dtype == BURROW_DTYPE_F16)
			for (int64_t k = 0; k < de; k++)
				o[k] = bw_f16_to_f32(((const uint16_t *)c->edge_feat)[at + k]);
		else
			memcpy(o, (const float *)c->edge_feat + at, (size_t)de * sizeof *o);
	}
	return 0;
}

static int fill(bw_loader *ld, slot *sl)
{
	const bw_loader_cfg *c = &ld->c;
	if (sl->tb)
		return fill_typed(ld, sl);
	const burrow_batch *sb = sl->sb;
	int st;
	if (sb->num_layers != c->num_layers)
		return bw_err(BURROW_E_INVAL, "loader: a batch of %d blocks for a %d-layer model", sb->num_layers,
			      c->num_layers);
	if (c->labels && (st = fill_labels(ld, sl)))
		return st;
	const float *norm = norms_from_rows(ld) ? sl->norm : NULL;
	if (c->norm) {
		if ((st = bw_grow(&sl->norm, &sl->norm_cap, (size_t)sb->num_input, sizeof *sl->norm, false)))
			return st;
		for (int64_t i = 0; i < sb->num_input; i++)
			sl->norm[i] = c->norm[sb->input_ids[i]];
		norm = sl->norm;
	}
	for (int l = 0; l < sb->num_layers; l++) {
		const burrow_block *sbl = &sb->blocks[l];
		bw_block *b = &sl->blk[l];
		bw_block_reuse(b, sbl->num_dst, sbl->num_src, sbl->indptr, sbl->indices); /* no cudaFree */
		const bool weighted = c->edge_feat && !c->ef_rows;
		b->dst_norm = b->src_norm = weighted ? NULL : norm; /* weighted: the block's weighted degrees */
		sl->nblk = BW_MAX(sl->nblk, l + 1);
		if (weighted && c->blocks) {
			if ((st = fill_weights(ld, sl, l, sbl)))
				return st;
			b->edge_weight = sl->ew[l];
		} else if (c->sampler_weights && c->blocks && sbl->edge_weight) {
			b->edge_weight = sbl->edge_weight; /* LABOR-*'s, valid while the slot holds the batch */
		}
		if (c->ef_rows && c->blocks) {
			if ((st = fill_edge_rows(ld, sl, l, sbl)))
				return st;
			b->edge_feat = sl->ef[l];
			b->edge_feat_dim = c->ew_dim;
		}
		if (c->blocks && (st = bw_block_prepare(b, c->transpose, c->gcn)))
			return st;
	}
	return 0;
}

/* Wait for sl's rows, if they are still being read: after this nothing writes its parts'
 * x (every read is waited for; the first error is returned). */
static int rows_wait(bw_loader *ld, slot *sl)
{
	int st = 0;
	for (int i = 0; i < ld->nparts; i++) {
		rows_part *pt = &sl->part[i];
		if (!pt->ticket)
			continue;
		void *k = pt->ticket;
		pt->ticket = NULL;
		int s = pt->src->wait(pt->src, k);
		if (!st)
			st = s;
	}
	return st;
}

/* On a device whose memory is not host memory: once sl's rows (and the norms that come
 * with them) are in, queue the batch's rows (unless the source put them there), labels and
 * blocks on the copy stream and record sl->ready after them. The slot's host arrays stay
 * untouched until the batch is done. */
static int stage(bw_loader *ld, slot *sl)
{
	const bw_device *dev = ld->c.dev;
	int st;
	if ((st = rows_wait(ld, sl)))
		return st;
	for (int i = 0; i < ld->nparts; i++) {
		rows_part *pt = &sl->part[i];
		int64_t n;
		part_ids(sl, i, &n);
		const size_t xbytes = (size_t)n * (size_t)pt->dim * sizeof(float);
		if (pt->src && !pt->src->on_device && n > 0 &&
		    (st = bw_dbuf_from_host_async(&pt->x_dev, dev, pt->x, xbytes, ld->copy)))
			return st;
	}
	int64_t ns;
	batch_seeds(sl, &ns);
	if (ld->c.labels && (st = bw_dbuf_from_host_async(&sl->labels_dev, dev, sl->labels,
							  (size_t)ns * sizeof *sl->labels, ld->copy)))
		return st;
	for (int i = 0; ld->c.blocks && i < sl->nblk; i++)
		if ((st = bw_block_upload_async(&sl->blk[i], dev, ld->copy)))
			return st;
	return bw_event_record(dev, sl->ready, ld->copy);
}

/* Hand sl's batch back to the producer. */
static void release_batch(bw_loader *ld, slot *sl)
{
	if (sl->sb)
		ld->p.release(ld->p.ctx, sl->sb);
	if (sl->tb && ld->p.release_typed)
		ld->p.release_typed(ld->p.ctx, sl->tb);
	sl->sb = NULL;
	sl->tb = NULL;
}

/* Batch k into its slot: once the batch the slot held is done (on a device, its step
 * completed), take batch k from the producer, start the read of its rows, fill its
 * compute arrays and, on a device with a loader thread, stage it there (in line,
 * bw_loader_next stages it). */
static int load(bw_loader *ld, int64_t k)
{
	slot *sl = &ld->slots[k % ld->nslots];
	int st;
	if (sl->done_pending) {
		sl->done_pending = false;
		if ((st = bw_event_sync(ld->c.dev, sl->done)))
			return st;
	}
	release_batch(ld, sl);
	if ((st = ld->typed ? ld->p.next_typed(ld->p.ctx, k, &sl->tb) : ld->p.next(ld->p.ctx, k, &sl->sb)))
		return st;
	if ((st = reserve(ld, sl)))
		return st;
	for (int i = 0; !st && i < ld->nparts; i++) {
		rows_part *pt = &sl->part[i];
		bw_rows *r = pt->src;
		int64_t n;
		const int64_t *ids = part_ids(sl, i, &n);
		/* (a batch of nodes always submits: a remote fetch is collective, a rank without rows
		   joins it; rows_unread: the compute reads none) */
		if (!r || ld->c.rows_unread || (ld->typed && n == 0 && !r->collective))
			continue;
		const bw_rows_dst dst = {
			.x = pt->x,
			.norm = norms_from_rows(ld) ? sl->norm : NULL,
			.dev_x = r->on_device ? pt->x_dev.ptr : NULL,
		};
		st = r->submit ? r->submit(r, ids, n, &dst, &pt->ticket) : r->gather(r, ids, n, pt->x);
	}
	if (!st)
		st = fill(ld, sl);
	if (!st && ld->copy && threaded(ld))
		st = stage(ld, sl);
	return st;
}

/* Load batch k and publish it (with its error, if any). */
static int load_publish(bw_loader *ld, int64_t k)
{
	slot *sl = &ld->slots[k % ld->nslots];
	int st = load(ld, k);
	pthread_mutex_lock(&ld->mu);
	sl->status = st;
	if (st)
		snprintf(sl->msg, sizeof sl->msg, "%s", burrow_last_error());
	ld->loaded = k + 1;
	pthread_cond_broadcast(&ld->cv);
	pthread_mutex_unlock(&ld->mu);
	return st;
}

/* The loader thread: batch k goes into slot k % nslots once batch k - nslots is done. */
static void *loader_main(void *arg)
{
	bw_loader *ld = arg;
	for (int64_t k = 0;; k++) {
		pthread_mutex_lock(&ld->mu);
		while (!ld->stop && k < ld->num && k - ld->consumed >= ld->nslots)
			pthread_cond_wait(&ld->cv, &ld->mu);
		const bool go = !ld->stop && k < ld->num;
		pthread_mutex_unlock(&ld->mu);
		if (!go || load_publish(ld, k))
			break;
	}
	return NULL;
}

int bw_loader_open(bw_loader **out, const bw_loader_cfg *cfg)
{
	*out = NULL;
	if (cfg->depth < 0 || cfg->num_layers < 1 || cfg->num_layers > BURROW_MAX_LAYERS || cfg->dim < 1)
		return bw_err(BURROW_E_INVAL, "loader: depth %d, %d layers, rows of %lld", cfg->depth, cfg->num_layers,
			      (long long)cfg->dim);
	if (cfg->rows_unread && !cfg->dev->host_memory)
		return bw_err(BURROW_E_INVAL, "loader: unread rows on a device: its batches' rows are copied there");
	bw_loader *ld = bw_calloc(1, sizeof *ld);
	if (!ld)
		return BURROW_E_NOMEM;
	ld->c = *cfg;
	ld->nslots = cfg->depth + 1;
	int st = 0;
	if (!(ld->slots = bw_calloc((size_t)ld->nslots, sizeof *ld->slots))) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	if (!cfg->dev->host_memory) {
		if ((st = bw_stream_open(cfg->dev, &ld->copy)))
			goto fail;
		for (int i = 0; i < ld->nslots; i++)
			if ((st = bw_event_open(cfg->dev, &ld->slots[i].ready)) ||
			    (st = bw_event_open(cfg->dev, &ld->slots[i].done)))
				goto fail;
	}
	if (pthread_mutex_init(&ld->mu, NULL)) {
		st = bw_err(BURROW_E_NOMEM, "loader: cannot create its lock");
		goto fail;
	}
	if (pthread_cond_init(&ld->cv, NULL)) {
		pthread_mutex_destroy(&ld->mu);
		st = bw_err(BURROW_E_NOMEM, "loader: cannot create its condition variable");
		goto fail;
	}
	ld->sync_ready = true;
	*out = ld;
	return 0;
fail:
	bw_loader_close(ld);
	return st;
}

void bw_loader_stop(bw_loader *ld)
{
	if (!ld)
		return;
	if (ld->running) {
		pthread_mutex_lock(&ld->mu);
		ld->stop = true;
		pthread_cond_broadcast(&ld->cv);
		pthread_mutex_unlock(&ld->mu);
		pthread_join(ld->thread, NULL);
		ld->running = false;
	}
	const bw_device *dev = ld->c.dev;
	if (ld->copy) /* nothing still copies from the slots' host memory */
		bw_stream_sync(dev, ld->copy);
	for (int i = 0; ld->slots && i < ld->nslots; i++) {
		slot *sl = &ld->slots[i];
		(void)rows_wait(ld, sl); /* no read may still write sl->x */
		if (sl->done_pending) /* nor a step still read the slot's device memory */
			(void)bw_event_sync(dev, sl->done);
		sl->done_pending = false;
		release_batch(ld, sl);
		sl->status = 0;
	}
	ld->num = ld->taken = ld->loaded = ld->consumed = 0;
	ld->rows = NULL;
	ld->nparts = 0;
	memset(ld->rows_of, 0, sizeof ld->rows_of);
}

void bw_loader_close(bw_loader *ld)
{
	if (!ld)
		return;
	bw_loader_stop(ld);
	const bw_device *dev = ld->c.dev;
	for (int i = 0; ld->slots && i < ld->nslots; i++) {
		slot *sl = &ld->slots[i];
		for (int l = 0; l < sl->nblk; l++)
			bw_block_release(&sl->blk[l]);
		for (int i = 0; i < BURROW_MAX_TYPES; i++) {
			bw_device_host_free(dev, sl->part[i].x);
			bw_dbuf_free(&sl->part[i].x_dev);
		}
		bw_dbuf_free(&sl->labels_dev);
		bw_free(sl->labels);
		bw_free(sl->norm);
		for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
			bw_free(sl->ew[l]);
			bw_free(sl->ef[l]);
		}
		bw_event_close(dev, sl->ready);
		bw_event_close(dev, sl->done);
	}
	bw_stream_close(dev, ld->copy);
	bw_free(ld->slots);
	if (ld->sync_ready) {
		pthread_cond_destroy(&ld->cv);
		pthread_mutex_destroy(&ld->mu);
	}
	bw_free(ld);
}

/* Begin a sequence of n batches of p over the sources of rows set in ld->rows_of. */
static int start(bw_loader *ld, const bw_producer *p, int64_t n)
{
	for (int i = 0; i < ld->nparts; i++) {
		const bw_rows *r = ld->rows_of[i];
		if (r && (r->norms || r->on_device) && !r->submit)
			return bw_err(BURROW_E_INVAL, "loader: a source of rows that brings norms or puts its rows "
						      "on the device needs a submit");
		if (r && r->on_device && threaded(ld))
			return bw_err(BURROW_E_INVAL, "loader: a source that puts its rows on the device runs in "
						      "line (no loader thread)");
	}
	for (int k = 0; k < ld->nslots; k++)
		for (int i = 0; i < ld->nparts; i++) {
			ld->slots[k].part[i].src = ld->rows_of[i];
			ld->slots[k].part[i].dim = ld->typed ? ld->c.type_dim[i] : ld->c.dim;
		}
	ld->p = *p;
	ld->rows = ld->rows_of[0];
	ld->num = n;
	ld->taken = ld->loaded = ld->consumed = 0;
	ld->stop = false;
	if (threaded(ld) && n > 0) {
		int rc = pthread_create(&ld->thread, NULL, loader_main, ld);
		if (rc) {
			ld->nparts = 0;
			return bw_err_thread(rc, "loader", "its thread");
		}
		ld->running = true;
	}
	return 0;
}

int bw_loader_start(bw_loader *ld, const bw_producer *p, bw_rows *rows, int64_t n)
{
	if (ld->running || ld->nparts)
		return bw_err(BURROW_E_INVAL, "loader: a sequence is still in progress");
	if (ld->c.rows_unread && (rows->norms || rows->on_device))
		return bw_err(BURROW_E_INVAL, "loader: unread rows, yet their source brings norms or device rows");
	ld->typed = false;
	ld->nparts = 1;
	ld->rows_of[0] = rows;
	int st = start(ld, p, n);
	if (st)
		ld->nparts = 0;
	return st;
}

int bw_loader_start_typed(bw_loader *ld, const bw_producer *p, bw_rows *const *rows, int num_types, int64_t n)
{
	if (ld->running || ld->nparts)
		return bw_err(BURROW_E_INVAL, "loader: a sequence is still in progress");
	if (ld->c.rows_unread)
		return bw_err(BURROW_E_INVAL, "loader: unread rows are a batch of nodes' (typed batches read theirs)");
	if (num_types < 1 || num_types > BURROW_MAX_TYPES || !p->next_typed)
		return bw_err(BURROW_E_INVAL, "loader: a typed sequence needs a typed producer and 1 .. %d types",
			      BURROW_MAX_TYPES);
	for (int i = 0; i < num_types; i++)
		if (rows[i] && (rows[i]->norms || rows[i]->on_device))
			return bw_err(BURROW_E_INVAL, "loader: a typed batch's rows neither bring norms nor arrive on the device");
	ld->typed = true;
	ld->nparts = num_types;
	memcpy(ld->rows_of, rows, (size_t)num_types * sizeof *rows);
	int st = start(ld, p, n);
	if (st)
		ld->nparts = 0;
	return st;
}

/* to_batch of a typed batch: its blocks, each type's rows (left empty for a type without a
 * source: the caller puts them in place) and the target's labels. */
static void to_hbatch(bw_loader *ld, slot *sl, bw_hbatch *hb)
{
	const bw_device *dev = ld->c.dev;
	const burrow_typed_batch *tb = sl->tb;
	const bool host = !ld->copy;
	*hb = (bw_hbatch){
		.num_layers = tb->num_layers,
		.num_types = tb->num_types,
		.num_rels = tb->num_relations,
		.labels = !ld->c.labels ? NULL : host ? sl->labels : sl->labels_dev.ptr,
	};
	memcpy(hb->num_nodes, tb->num_nodes, sizeof hb->num_nodes);
	for (int l = 0; l < tb->num_layers; l++)
		for (int r = 0; r < tb->num_relations; r++)
			hb->blocks[l][r] = &sl->blk[l * tb->num_relations + r];
	for (int t = 0; t < tb->num_types; t++) {
		rows_part *pt = &sl->part[t];
		if (pt->src)
			hb->x[t] = bw_tensor_view(dev, host ? pt->x : pt->x_dev.ptr, tb->num_nodes[0][t], pt->dim);
	}
}

/* The compute batch of a loaded slot: views of its host arrays on a host-memory device,
 * else of its device copies, after the compute stream waits for them; the rows where a
 * source with on_device put them. */
static int to_batch(bw_loader *ld, slot *sl, bw_loaded *out)
{
	bw_batch *b = &out->b;
	const bw_device *dev = ld->c.dev;
	const burrow_batch *sb = sl->sb;
	const bool host = !ld->copy;
	if (sl->tb) {
		to_hbatch(ld, sl, &out->hb);
		return host ? 0 : bw_event_wait(dev, ld->c.compute, sl->ready);
	}
	const rows_part *pt = &sl->part[0];
	float *x = host && !pt->src->on_device ? pt->x : pt->x_dev.ptr;
	*b = (bw_batch){
		.num_blocks = sb->num_layers,
		.x = bw_tensor_view(dev, x, sb->num_input, ld->c.dim),
		.labels = !ld->c.labels ? NULL : host ? sl->labels : sl->labels_dev.ptr,
	};
	for (int l = 0; l < sb->num_layers; l++)
		b->blocks[l] = &sl->blk[l];
	return host ? 0 : bw_event_wait(dev, ld->c.compute, sl->ready);
}

int bw_loader_next(bw_loader *ld, bw_loaded *out)
{
	const int64_t k = ld->taken;
	memset(out, 0, sizeof *out);
	if (k >= ld->num)
		return bw_err(BURROW_E_INVAL, "loader: batch %lld of a sequence of %lld", (long long)k, (long long)ld->num);
	slot *sl = &ld->slots[k % ld->nslots];
	double a = bw_now_s();
	int st = 0;
	if (!ld->running) { /* in line: load up to `depth` batches past this one, then wait for its rows */
		const int64_t end = BW_MIN(ld->num, k + ld->c.depth + 1);
		while (!st && ld->loaded < end)
			st = load_publish(ld, ld->loaded);
		if (st && sl->status == 0) /* a later batch failed: report it now */
			return st;
	} else {
		pthread_mutex_lock(&ld->mu);
		while (ld->loaded <= k)
			pthread_cond_wait(&ld->cv, &ld->mu);
		pthread_mutex_unlock(&ld->mu);
	}
	out->load_s = bw_now_s() - a;
	if (sl->status)
		return bw_err(sl->status, "%s", sl->msg);
	ld->taken = k + 1;
	a = bw_now_s();
	st = rows_wait(ld, sl); /* (a loader thread on a device waited before staging them) */
	if (!st && ld->copy && !ld->running) /* in line: stage the batch now that its rows are in */
		st = stage(ld, sl);
	out->io_wait_s = bw_now_s() - a;
	if (st || (st = to_batch(ld, sl, out)))
		return st;
	out->k = k;
	out->sb = sl->sb;
	out->tb = sl->tb;
	return 0;
}

int bw_loader_poll(bw_loader *ld)
{
	bw_rows *r = ld->rows;
	if (ld->running || !r || !r->poll)
		return 0;
	for (int64_t j = ld->taken; j < ld->loaded; j++) {
		slot *sl = &ld->slots[j % ld->nslots];
		int st = sl->part[0].ticket ? r->poll(r, sl->part[0].ticket) : 0;
		if (st)
			return st;
	}
	return 0;
}

int bw_loader_done(bw_loader *ld)
{
	const int64_t k = ld->taken - 1;
	if (k < ld->consumed)
		return bw_err(BURROW_E_INVAL, "loader: no batch taken to be done with");
	slot *sl = &ld->slots[k % ld->nslots];
	int st = 0;
	if (ld->copy && !(st = bw_event_record(ld->c.dev, sl->done, ld->c.compute)))
		sl->done_pending = true;
	pthread_mutex_lock(&ld->mu);
	ld->consumed = k + 1;
	pthread_cond_broadcast(&ld->cv);
	pthread_mutex_unlock(&ld->mu);
	return st;
}
