/* pipeline.c: mini-batch training: the sampler's producer samples ahead, a loader thread
 * submits each batch's feature gather to the store, and the trainer computes batch k while
 * the next `prefetch` batches are sampled and their rows read (docs/train.md, "Pipeline").
 * Batches depend only on (seed, epoch, index) and the store returns the file's bytes, so the
 * depth, the cache and the engine change timings, never results. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, CLOCK_MONOTONIC under -std=c11 */
#include "driver.h"

#include <string.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}


void bw_trainer_trim_graph(void *arg)
{
	const burrow_trainer *t = arg;
	(void)bw_dataset_trim_graph(t->ds, t->graph_keep); /* logs at debug level when it drops */
}

/* The slots, their lock, and a sampler for the seed in force (a loaded checkpoint brings
 * its own seed, so the sampler opens at the first epoch and reopens when the seed changed). */
static int pipe_open(burrow_trainer *t)
{
	bw_pipe *p = &t->pipe;
	int st;
	if (!p->slots) {
		p->depth = t->o.prefetch;
		p->nslots = p->depth + 1;
		if (!(p->slots = bw_calloc((size_t)p->nslots, sizeof *p->slots)))
			return BURROW_E_NOMEM;
	}
	const bw_device *dev = t->be.dev;
	if (!dev->host_memory && !p->copy) {
		if ((st = bw_stream_open(dev, &p->copy)))
			return st;
		for (int i = 0; i < p->nslots; i++)
			if ((st = bw_event_open(dev, &p->slots[i].ready)))
				return st;
	}
	if (!p->sync_ready) {
		if (pthread_mutex_init(&p->mu, NULL))
			return bw_err(BURROW_E_NOMEM, "train: cannot create the pipeline's lock");
		if (pthread_cond_init(&p->cv, NULL)) {
			pthread_mutex_destroy(&p->mu);
			return bw_err(BURROW_E_NOMEM, "train: cannot create the pipeline's condition variable");
		}
		p->sync_ready = true;
	}
	if (t->sampler && t->sampler_seed == t->o.seed)
		return 0;
	for (int i = 0; i < p->nslots; i++) /* batches of the old sampler go back to it */
		if (p->slots[i].batch) {
			burrow_sampler_release(t->sampler, p->slots[i].batch);
			p->slots[i].batch = NULL;
		}
	burrow_sampler_close(t->sampler);
	t->sampler = NULL;
	int64_t n;
	const int64_t *train = bw_trainer_split(t, BURROW_SPLIT_TRAIN, &n);
	if (!train)
		return bw_err(BURROW_E_INVAL, "train: dataset '%s' has no training nodes", t->info->name);
	burrow_sampler_opts so;
	burrow_sampler_defaults(&so);
	so.num_layers = t->o.layers;
	for (int l = 0; l < t->o.layers; l++)
		so.fanouts[l] = burrow_train_fanout(&t->o, l);
	so.batch_size = t->o.batch_size;
	so.seed = t->o.seed;
	so.threads = 1;
	so.prefetch = p->depth;
	so.producers = 1;
	so.device = t->sampler_dev;
	if ((st = bw_sampler_open_checked(&t->sampler, t->graph, train, n, &so, bw_trainer_trim_graph, t)))
		return st;
	t->sampler_seed = t->o.seed;
	return 0;
}

/* The next batch of the epoch into sl, handing back the one it held (done with). */
static int take(burrow_trainer *t, bw_slot *sl)
{
	if (sl->batch) {
		burrow_sampler_release(t->sampler, sl->batch);
		sl->batch = NULL;
	}
	int st = burrow_sampler_next(t->sampler, &sl->batch);
	if (st == BURROW_DONE)
		return bw_err(BURROW_E_INVAL, "train: the sampler's epoch ended before its %lld batches",
			      (long long)t->pipe.num);
	return st;
}

int bw_host_reserve(const bw_device *dev, float **x, int64_t *cap, int64_t need)
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

/* Start the gather of sl's input rows into sl->x (grown as needed). */
static int submit(burrow_trainer *t, bw_slot *sl)
{
	const burrow_batch *b = sl->batch;
	int st = bw_host_reserve(t->be.dev, &sl->x, &sl->x_cap, b->num_input * t->info->feat_dim);
	return st ? st : burrow_store_submit(t->store, b->input_ids, (size_t)b->num_input, sl->x, &sl->ticket);
}

static int grow(void **buf, int64_t *cap, int64_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	const int64_t n = BW_MAX(need, *cap * 2);
	void *q = bw_realloc(*buf, (size_t)n * elem);
	if (!q)
		return BURROW_E_NOMEM;
	*buf = q;
	*cap = n;
	return 0;
}

static void release_blocks(bw_slot *sl)
{
	for (int l = 0; l < sl->nblk; l++)
		bw_block_release(&sl->blk[l]);
	sl->nblk = 0;
}

/* On a device whose memory is not host memory: once sl's rows are gathered, queue the
 * batch's rows, labels and blocks (prepared here, off the compute's thread) on the copy
 * stream, and record sl->ready after them. The slot's host arrays stay untouched until the
 * batch is consumed, which is after the compute stream waited for ready. */
static int stage(burrow_trainer *t, bw_slot *sl)
{
	const burrow_batch *sb = sl->batch;
	const bw_device *dev = t->be.dev;
	bw_stream *cs = t->pipe.copy;
	int st = burrow_store_wait(t->store, sl->ticket);
	sl->ticket = NULL;
	if (st)
		return st;
	if (sb->num_layers != t->o.layers)
		return bw_err(BURROW_E_INVAL, "train: a batch of %d blocks for a %d-layer model", sb->num_layers,
			      t->o.layers);
	if ((st = grow((void **)&sl->labels, &sl->labels_cap, sb->num_seeds, sizeof *sl->labels)))
		return st;
	for (int64_t i = 0; i < sb->num_seeds; i++)
		sl->labels[i] = t->labels[sb->seeds[i]];
	const float *norm = NULL;
	if (t->gcn_norm) {
		if ((st = grow((void **)&sl->norm, &sl->norm_cap, sb->num_input, sizeof *sl->norm)))
			return st;
		for (int64_t i = 0; i < sb->num_input; i++)
			sl->norm[i] = t->gcn_norm[sb->input_ids[i]];
		norm = sl->norm;
	}
	const size_t xbytes = (size_t)sb->num_input * (size_t)t->info->feat_dim * sizeof(float);
	if ((st = bw_dbuf_from_host_async(&sl->x_dev, dev, sl->x, xbytes, cs)) ||
	    (st = bw_dbuf_from_host_async(&sl->labels_dev, dev, sl->labels, (size_t)sb->num_seeds * sizeof *sl->labels,
					  cs)))
		return st;
	for (int l = 0; l < sb->num_layers; l++) {
		const burrow_block *sbl = &sb->blocks[l];
		bw_block *b = &sl->blk[l];
		bw_block_reuse(b, sbl->num_dst, sbl->num_src, sbl->indptr, sbl->indices); /* no cudaFree */
		b->dst_norm = b->src_norm = norm;
		sl->nblk = BW_MAX(sl->nblk, l + 1);
		if (t->o.model != BURROW_MODEL_MLP &&
		    ((st = bw_block_prepare(b, true, t->o.model == BURROW_MODEL_GCN)) ||
		     (st = bw_block_upload_async(b, dev, cs))))
			return st;
	}
	return bw_event_record(dev, sl->ready, cs);
}

/* Take the next batch into sl and start its gather; on a device, stage it there too. */
static int load(burrow_trainer *t, bw_slot *sl)
{
	int st = take(t, sl);
	if (!st)
		st = submit(t, sl);
	if (!st && t->pipe.copy)
		st = stage(t, sl);
	return st;
}

/* The loader thread: batch k goes into slot k % nslots once batch k - nslots is done. */
static void *loader(void *arg)
{
	burrow_trainer *t = arg;
	bw_pipe *p = &t->pipe;
	for (int64_t k = 0;; k++) {
		pthread_mutex_lock(&p->mu);
		while (!p->stop && k < p->num && k - p->consumed >= p->nslots)
			pthread_cond_wait(&p->cv, &p->mu);
		const bool go = !p->stop && k < p->num;
		pthread_mutex_unlock(&p->mu);
		if (!go)
			break;
		bw_slot *sl = &p->slots[k % p->nslots];
		int st = load(t, sl);
		pthread_mutex_lock(&p->mu);
		sl->status = st;
		if (st)
			snprintf(sl->msg, sizeof sl->msg, "%s", burrow_last_error());
		p->loaded = k + 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (st)
			break;
	}
	return NULL;
}

/* Stop the loader, complete the gathers in flight and hand every batch back. */
static void pipe_drain(burrow_trainer *t)
{
	bw_pipe *p = &t->pipe;
	if (p->running) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
		p->running = false;
	}
	for (int i = 0; p->slots && i < p->nslots; i++) {
		bw_slot *sl = &p->slots[i];
		if (sl->ticket)
			burrow_store_wait(t->store, sl->ticket);
		sl->ticket = NULL;
		if (p->copy) /* nothing still copies from the slot's host memory */
			bw_stream_sync(t->be.dev, p->copy);
		release_blocks(sl);
		if (sl->batch)
			burrow_sampler_release(t->sampler, sl->batch);
		sl->batch = NULL;
		sl->status = 0;
	}
}

void bw_pipe_close(burrow_trainer *t)
{
	bw_pipe *p = &t->pipe;
	pipe_drain(t);
	for (int i = 0; p->slots && i < p->nslots; i++) {
		bw_slot *sl = &p->slots[i];
		bw_device_host_free(t->be.dev, sl->x);
		bw_dbuf_free(&sl->x_dev);
		bw_dbuf_free(&sl->labels_dev);
		bw_free(sl->labels);
		bw_free(sl->norm);
		bw_event_close(t->be.dev, sl->ready);
	}
	bw_stream_close(t->be.dev, p->copy);
	p->copy = NULL;
	bw_free(p->slots);
	p->slots = NULL;
	if (p->sync_ready) {
		pthread_cond_destroy(&p->cv);
		pthread_mutex_destroy(&p->mu);
		p->sync_ready = false;
	}
	burrow_sampler_close(t->sampler);
	t->sampler = NULL;
}


int bw_batch_from_sample(burrow_trainer *t, const burrow_batch *sb, float *x, int64_t index, bw_batch *b,
			 bw_block *blk)
{
	const int L = t->o.layers;
	int st;
	if (sb->num_layers != L)
		return bw_err(BURROW_E_INVAL, "train: a batch of %d blocks for a %d-layer model", sb->num_layers, L);
	if ((st = grow((void **)&t->mb_labels, &t->mb_labels_cap, sb->num_seeds, sizeof *t->mb_labels)))
		return st;
	for (int64_t i = 0; i < sb->num_seeds; i++)
		t->mb_labels[i] = t->labels[sb->seeds[i]];
	const bw_device *dev = t->be.dev;
	if ((st = bw_dbuf_from_host(&t->mb_labels_dev, dev, t->mb_labels, (size_t)sb->num_seeds * sizeof *t->mb_labels)) ||
	    (st = bw_tensor_from_host(&t->mb_x, dev, x, sb->num_input, t->info->feat_dim)))
		return st;
	const float *norm = NULL;
	if (t->gcn_norm) {
		if ((st = grow((void **)&t->mb_norm, &t->mb_norm_cap, sb->num_input, sizeof *t->mb_norm)))
			return st;
		for (int64_t i = 0; i < sb->num_input; i++)
			t->mb_norm[i] = t->gcn_norm[sb->input_ids[i]];
		norm = t->mb_norm;
	}
	*b = (bw_batch){
		.num_blocks = L,
		.x = t->mb_x,
		.labels = t->mb_labels_dev.ptr,
		.epoch = (uint64_t)t->epoch,
		.index = (uint64_t)index,
	};
	for (int l = 0; l < L; l++) {
		const burrow_block *sbl = &sb->blocks[l];
		bw_block_init(&blk[l], sbl->num_dst, sbl->num_src, sbl->indptr, sbl->indices);
		blk[l].dst_norm = blk[l].src_norm = norm;
		b->blocks[l] = &blk[l];
	}
	return 0;
}

/* One optimizer step on a batch staged on the device (stage): the compute stream first
 * waits for its copies. */
static int step_staged(burrow_trainer *t, bw_slot *sl, int64_t index, double *loss, int64_t *counted,
		       int64_t *correct)
{
	const burrow_batch *sb = sl->batch;
	const bw_device *dev = t->be.dev;
	bw_batch b = {
		.num_blocks = sl->nblk,
		.x = bw_tensor_view(dev, sl->x_dev.ptr, sb->num_input, t->info->feat_dim),
		.labels = sl->labels_dev.ptr,
		.epoch = (uint64_t)t->epoch,
		.index = (uint64_t)index,
	};
	for (int l = 0; l < sl->nblk; l++)
		b.blocks[l] = &sl->blk[l];
	int st = bw_event_wait(dev, t->be.stream, sl->ready);
	return st ? st : bw_trainer_step(t, &b, loss, counted, correct);
}

/* One optimizer step on a sampled batch whose input rows are in x. */
static int step(burrow_trainer *t, const burrow_batch *sb, float *x, int64_t index, double *loss, int64_t *counted,
		int64_t *correct)
{
	bw_batch b;
	bw_block blk[BURROW_MAX_LAYERS];
	int st = bw_batch_from_sample(t, sb, x, index, &b, blk);
	if (st)
		return st;
	st = bw_trainer_step(t, &b, loss, counted, correct);
	for (int l = 0; l < b.num_blocks; l++)
		bw_block_release(&blk[l]);
	return st;
}

int bw_trainer_minibatch_epoch(burrow_trainer *t, burrow_epoch_stats *es)
{
	const double t0 = now_s();
	bw_pipe *p = &t->pipe;
	int st;
	if ((st = pipe_open(t)) || (st = burrow_sampler_start(t->sampler, t->epoch)))
		return st;
	int64_t num = burrow_sampler_num_batches(t->sampler);
	if (t->o.max_batches > 0 && t->o.max_batches < num)
		num = t->o.max_batches;
	burrow_store_stats s0 = {.size = sizeof s0}, s1 = {.size = sizeof s1};
	burrow_store_get_stats(t->store, &s0);
	p->num = num;
	p->loaded = p->consumed = 0;
	p->stop = false;
	if (p->depth > 0 && num > 0) {
		int rc = pthread_create(&p->thread, NULL, loader, t);
		if (rc)
			return bw_err_thread(rc, "train", "the pipeline's loader thread");
		p->running = true;
	}
	double loss_sum = 0;
	int64_t counted = 0, correct = 0, k;
	for (k = 0; k < num; k++) {
		bw_slot *sl = &p->slots[k % p->nslots];
		double a = now_s();
		if (p->depth == 0) { /* in line: sample, then gather while nothing else runs */
			if ((st = take(t, sl)))
				break;
			es->sample_s += now_s() - a;
			a = now_s();
			if ((st = submit(t, sl)) || (p->copy && (st = stage(t, sl))))
				break;
		} else {
			pthread_mutex_lock(&p->mu);
			while (p->loaded <= k)
				pthread_cond_wait(&p->cv, &p->mu);
			pthread_mutex_unlock(&p->mu);
			es->sample_s += now_s() - a;
			if (sl->status) {
				st = bw_err(sl->status, "%s", sl->msg);
				break;
			}
			a = now_s();
		}
		if (!p->copy) { /* on a device the loader waited for the rows (the wait above) */
			st = burrow_store_wait(t->store, sl->ticket);
			sl->ticket = NULL;
		}
		es->io_wait_s += now_s() - a;
		if (st)
			break;
		a = now_s();
		double loss;
		int64_t c, r;
		st = p->copy ? step_staged(t, sl, k, &loss, &c, &r) : step(t, sl->batch, sl->x, k, &loss, &c, &r);
		es->compute_s += now_s() - a;
		if (st)
			break;
		loss_sum += loss;
		counted += c;
		correct += r;
		pthread_mutex_lock(&p->mu);
		p->consumed = k + 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (t->o.progress)
			t->o.progress(t->o.progress_user, "train", (uint64_t)(k + 1), (uint64_t)num);
	}
	pipe_drain(t);
	if (st)
		return st;
	burrow_store_get_stats(t->store, &s1);
	const uint64_t rows = s1.rows - s0.rows, hits = s1.cache_hits - s0.cache_hits;
	es->batches = num;
	es->loss = num ? loss_sum / (double)num : 0.0;
	es->train_acc = counted ? (double)correct / (double)counted : -1.0;
	es->rows_read = (int64_t)(s1.rows_read - s0.rows_read);
	es->cache_hit_rate = rows ? (double)hits / (double)rows : -1.0;
	es->epoch_s = now_s() - t0;
	return 0;
}
