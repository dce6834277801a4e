/* loader.c: the batch loader (loader.h): slots, the loader thread, the copy stream, and
 * the one function that turns a filled slot into a compute batch (docs/train.md,
 * "Pipeline"). */
#include "loader.h"

#include <pthread.h>
#include <string.h>

typedef struct slot {
	burrow_batch *sb;             /* held from the producer; NULL when empty */
	void *ticket;                 /* its rows' read while in flight (bw_rows.submit), else NULL */
	float *x;                     /* [num_input, dim] the rows, the device's host memory (owned, grows) */
	int64_t x_cap;                /* floats */
	int32_t *labels;              /* [num_seeds] the seeds' labels (host) */
	float *norm;                  /* [num_input] GCN norms (host), read by the blocks (from cfg.norm, or
					 brought by the source of rows) */
	size_t labels_cap, norm_cap;
	bw_block blk[BURROW_MAX_LAYERS];  /* over the batch's arrays; released when the slot closes */
	int nblk;
	/* on a device whose memory is not host memory: the rows and labels there, queued on the
	 * copy stream with the blocks; `ready` after them, `done` after the step that used them.
	 * x_dev also holds the rows a source with on_device puts there, on any device */
	bw_dbuf x_dev, labels_dev;
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
	bw_rows *rows;
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
static bool norms_from_rows(const bw_loader *ld) { return !ld->c.norm && ld->rows->norms; }

/* Room in sl for its batch's rows (host, and on the device for a source that puts them
 * there) and, when the source brings them, its GCN norms. */
static int reserve(bw_loader *ld, slot *sl)
{
	const burrow_batch *sb = sl->sb;
	const int64_t n = sb->num_input * ld->c.dim;
	int st = host_reserve(ld->c.dev, &sl->x, &sl->x_cap, n);
	if (!st && ld->rows->on_device)
		st = bw_dbuf_reserve(&sl->x_dev, ld->c.dev, (size_t)n * sizeof(float) + 1);
	if (!st && norms_from_rows(ld))
		st = bw_grow(&sl->norm, &sl->norm_cap, (size_t)sb->num_input, sizeof *sl->norm, false);
	return st;
}

/* The compute's arrays of sl's batch, on the host: the seeds' labels, the GCN norms of its
 * input nodes (every block's nodes are a prefix of them; brought by the source, they are
 * complete at its wait), the blocks over the batch's arrays, prepared as the step will want
 * them. */
static int fill(bw_loader *ld, slot *sl)
{
	const bw_loader_cfg *c = &ld->c;
	const burrow_batch *sb = sl->sb;
	int st;
	if (sb->num_layers != c->num_layers)
		return bw_err(BURROW_E_INVAL, "loader: a batch of %d blocks for a %d-layer model", sb->num_layers,
			      c->num_layers);
	if (c->labels) {
		if ((st = bw_grow(&sl->labels, &sl->labels_cap, (size_t)sb->num_seeds, sizeof *sl->labels, false)))
			return st;
		for (int64_t i = 0; i < sb->num_seeds; i++)
			sl->labels[i] = c->labels[sb->seeds[i] - c->label_base];
	}
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
		b->dst_norm = b->src_norm = norm;
		sl->nblk = BW_MAX(sl->nblk, l + 1);
		if (c->blocks && (st = bw_block_prepare(b, c->transpose, c->gcn)))
			return st;
	}
	return 0;
}

/* Wait for sl's rows, if they are still being read: after this nothing writes sl->x. */
static int rows_wait(bw_loader *ld, slot *sl)
{
	if (!sl->ticket)
		return 0;
	void *k = sl->ticket;
	sl->ticket = NULL;
	return ld->rows->wait(ld->rows, k);
}

/* On a device whose memory is not host memory: once sl's rows (and the norms that come
 * with them) are in, queue the batch's rows (unless the source put them there), labels and
 * blocks on the copy stream and record sl->ready after them. The slot's host arrays stay
 * untouched until the batch is done. */
static int stage(bw_loader *ld, slot *sl)
{
	const bw_device *dev = ld->c.dev;
	const burrow_batch *sb = sl->sb;
	int st;
	if ((st = rows_wait(ld, sl)))
		return st;
	const size_t xbytes = (size_t)sb->num_input * (size_t)ld->c.dim * sizeof(float);
	if ((!ld->rows->on_device && (st = bw_dbuf_from_host_async(&sl->x_dev, dev, sl->x, xbytes, ld->copy))) ||
	    (ld->c.labels && (st = bw_dbuf_from_host_async(&sl->labels_dev, dev, sl->labels,
							   (size_t)sb->num_seeds * sizeof *sl->labels, ld->copy))))
		return st;
	for (int l = 0; ld->c.blocks && l < sb->num_layers; l++)
		if ((st = bw_block_upload_async(&sl->blk[l], dev, ld->copy)))
			return st;
	return bw_event_record(dev, sl->ready, ld->copy);
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
	if (sl->sb) {
		ld->p.release(ld->p.ctx, sl->sb);
		sl->sb = NULL;
	}
	if ((st = ld->p.next(ld->p.ctx, k, &sl->sb)))
		return st;
	const burrow_batch *sb = sl->sb;
	bw_rows *r = ld->rows;
	if ((st = reserve(ld, sl)))
		return st;
	const bw_rows_dst dst = {
		.x = sl->x,
		.norm = norms_from_rows(ld) ? sl->norm : NULL,
		.dev_x = r->on_device ? sl->x_dev.ptr : NULL,
	};
	st = r->submit ? r->submit(r, sb->input_ids, sb->num_input, &dst, &sl->ticket)
		       : r->gather(r, sb->input_ids, sb->num_input, sl->x);
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
		if (sl->sb)
			ld->p.release(ld->p.ctx, sl->sb);
		sl->sb = NULL;
		sl->status = 0;
	}
	ld->num = ld->taken = ld->loaded = ld->consumed = 0;
	ld->rows = NULL;
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
		bw_device_host_free(dev, sl->x);
		bw_dbuf_free(&sl->x_dev);
		bw_dbuf_free(&sl->labels_dev);
		bw_free(sl->labels);
		bw_free(sl->norm);
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

int bw_loader_start(bw_loader *ld, const bw_producer *p, bw_rows *rows, int64_t n)
{
	if (ld->running || ld->rows)
		return bw_err(BURROW_E_INVAL, "loader: a sequence is still in progress");
	if ((rows->norms || rows->on_device) && !rows->submit)
		return bw_err(BURROW_E_INVAL, "loader: a source of rows that brings norms or puts its rows on the "
					      "device needs a submit");
	if (rows->on_device && threaded(ld))
		return bw_err(BURROW_E_INVAL, "loader: a source that puts its rows on the device runs in line "
					      "(no loader thread)");
	ld->p = *p;
	ld->rows = rows;
	ld->num = n;
	ld->taken = ld->loaded = ld->consumed = 0;
	ld->stop = false;
	if (threaded(ld) && n > 0) {
		int rc = pthread_create(&ld->thread, NULL, loader_main, ld);
		if (rc) {
			ld->rows = NULL;
			return bw_err_thread(rc, "loader", "its thread");
		}
		ld->running = true;
	}
	return 0;
}

/* The compute batch of a loaded slot: views of its host arrays on a host-memory device,
 * else of its device copies, after the compute stream waits for them; the rows where a
 * source with on_device put them. */
static int to_batch(bw_loader *ld, slot *sl, bw_batch *b)
{
	const bw_device *dev = ld->c.dev;
	const burrow_batch *sb = sl->sb;
	const bool host = !ld->copy;
	float *x = host && !ld->rows->on_device ? sl->x : sl->x_dev.ptr;
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
	if (st || (st = to_batch(ld, sl, &out->b)))
		return st;
	out->k = k;
	out->sb = sl->sb;
	return 0;
}

int bw_loader_poll(bw_loader *ld)
{
	bw_rows *r = ld->rows;
	if (ld->running || !r || !r->poll)
		return 0;
	for (int64_t j = ld->taken; j < ld->loaded; j++) {
		slot *sl = &ld->slots[j % ld->nslots];
		int st = sl->ticket ? r->poll(r, sl->ticket) : 0;
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
