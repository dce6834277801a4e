/* test_loader.c: the batch loader (train/driver/loader.h) on a test device whose streams run
 * their work late, on threads of their own: a slot must not be refilled (its rows re-staged
 * on the copy stream) before the step that read it is done on the compute stream; a source
 * of rows that brings the GCN norms and puts its rows on the device (distributed training's
 * fetch) runs in line and is what the compute stream reads. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <criterion/criterion.h>

#include "../train/driver/loader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

TestSuite(loader, .timeout = 60);

/* ------------------------------------------------------------ a device with late streams */

typedef struct op {
	int kind; /* 0 copy, 1 record event, 2 wait for event */
	void *dst;
	const void *src;
	size_t n;
	struct bw_event *ev;
	uint64_t gen;
	struct op *next;
} op;

struct bw_event {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t recorded, reached; /* generations */
};

struct bw_stream {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	op *head, *tail;
	bool quit;
	int delay_us; /* before each operation */
	pthread_t th;
};

static int g_delay_compute_us; /* the next stream opened by the test (compute) */

static void ev_reach(struct bw_event *e, uint64_t gen)
{
	pthread_mutex_lock(&e->mu);
	if (gen > e->reached)
		e->reached = gen;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

static void ev_wait_gen(struct bw_event *e, uint64_t gen)
{
	pthread_mutex_lock(&e->mu);
	while (e->reached < gen)
		pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
}

static void *stream_main(void *arg)
{
	struct bw_stream *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		while (!s->head && !s->quit)
			pthread_cond_wait(&s->cv, &s->mu);
		op *o = s->head;
		if (!o) {
			pthread_mutex_unlock(&s->mu);
			return NULL;
		}
		s->head = o->next;
		if (!s->head)
			s->tail = NULL;
		pthread_mutex_unlock(&s->mu);
		if (s->delay_us)
			nanosleep(&(struct timespec){.tv_nsec = 1000L * s->delay_us}, NULL);
		if (o->kind == 0)
			memcpy(o->dst, o->src, o->n);
		else if (o->kind == 1)
			ev_reach(o->ev, o->gen);
		else
			ev_wait_gen(o->ev, o->gen);
		free(o);
	}
}

static void push(struct bw_stream *s, op o)
{
	op *p = malloc(sizeof *p);
	*p = o;
	p->next = NULL;
	pthread_mutex_lock(&s->mu);
	if (s->tail)
		s->tail->next = p;
	else
		s->head = p;
	s->tail = p;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

static struct bw_event *ev_new(void)
{
	struct bw_event *e = calloc(1, sizeof *e);
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	return e;
}

static int t_sync(const bw_device *d, bw_stream *s)
{
	(void)d;
	if (!s)
		return 0;
	struct bw_event *w = ev_new(); /* a marker at the end of s's work */
	push(s, (op){.kind = 1, .ev = w, .gen = 1});
	ev_wait_gen(w, 1);
	free(w);
	return 0;
}

static int t_alloc(const bw_device *d, size_t n, void **out)
{
	(void)d;
	return (*out = aligned_alloc(64, (n + 63) / 64 * 64)) ? 0 : BURROW_E_NOMEM;
}
static void t_free(const bw_device *d, void *p) { (void)d, free(p); }
static int t_copy(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	(void)d;
	if (!s)
		memcpy(dst, src, n);
	else
		push(s, (op){.kind = 0, .dst = dst, .src = src, .n = n});
	return 0;
}
static int t_memset(const bw_device *d, void *p, int byte, size_t n, bw_stream *s)
{
	(void)d, (void)s;
	memset(p, byte, n); /* the loader never queues one */
	return 0;
}
static int t_stream_open(const bw_device *d, bw_stream **out)
{
	(void)d;
	struct bw_stream *s = calloc(1, sizeof *s);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->delay_us = g_delay_compute_us;
	pthread_create(&s->th, NULL, stream_main, s);
	*out = s;
	return 0;
}
static void t_stream_close(const bw_device *d, bw_stream *s)
{
	(void)d;
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->quit = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	free(s);
}
static int t_event_open(const bw_device *d, bw_event **out)
{
	(void)d;
	*out = ev_new();
	return 0;
}
static void t_event_close(const bw_device *d, bw_event *e)
{
	(void)d;
	free(e);
}
static int t_event_record(const bw_device *d, bw_event *e, bw_stream *s)
{
	(void)d;
	pthread_mutex_lock(&e->mu);
	const uint64_t gen = ++e->recorded;
	pthread_mutex_unlock(&e->mu);
	if (s)
		push(s, (op){.kind = 1, .ev = e, .gen = gen});
	else
		ev_reach(e, gen);
	return 0;
}
static int t_event_wait(const bw_device *d, bw_stream *s, bw_event *e)
{
	(void)d;
	pthread_mutex_lock(&e->mu);
	const uint64_t gen = e->recorded;
	pthread_mutex_unlock(&e->mu);
	if (s)
		push(s, (op){.kind = 2, .ev = e, .gen = gen});
	else
		ev_wait_gen(e, gen);
	return 0;
}
static int t_event_sync(const bw_device *d, bw_event *e)
{
	(void)d;
	pthread_mutex_lock(&e->mu);
	const uint64_t gen = e->recorded;
	pthread_mutex_unlock(&e->mu);
	ev_wait_gen(e, gen);
	return 0;
}
static int t_host_alloc(const bw_device *d, size_t n, void **out) { return t_alloc(d, n, out); }

static const bw_device_i late_iface = {
	.alloc = t_alloc,
	.free = t_free,
	.memset = t_memset,
	.upload = t_copy,
	.download = t_copy,
	.copy = t_copy,
	.host_alloc = t_host_alloc,
	.host_free = t_free,
	.stream_open = t_stream_open,
	.stream_close = t_stream_close,
	.stream_sync = t_sync,
	.event_open = t_event_open,
	.event_close = t_event_close,
	.event_record = t_event_record,
	.event_wait = t_event_wait,
	.event_sync = t_event_sync,
};

/* ------------------------------------------------------------ a producer of known batches */

#define NB 12  /* batches */
#define NI 64  /* input rows per batch */
#define NN 1000
#define DIM 8

typedef struct batches {
	burrow_batch b[NB];
	int64_t ids[NB][NI];
	int64_t ip[NB][NI + 1];
	int32_t ix[1];
} batches;

static int bt_next(void *ctx, int64_t k, burrow_batch **out)
{
	batches *bt = ctx;
	burrow_batch *b = &bt->b[k];
	for (int j = 0; j < NI; j++)
		bt->ids[k][j] = (k * 131 + j * 7) % NN;
	memset(bt->ip[k], 0, sizeof bt->ip[k]);
	*b = (burrow_batch){.epoch = 0, .index = k, .num_layers = 1, .num_input = NI, .input_ids = bt->ids[k],
			    .num_seeds = NI, .seeds = bt->ids[k]};
	b->blocks[0] = (burrow_block){.num_dst = NI, .num_src = NI, .num_edges = 0, .indptr = bt->ip[k], .indices = bt->ix};
	*out = b;
	return 0;
}

static void bt_release(void *ctx, burrow_batch *b) { (void)ctx, (void)b; }

/* Every batch's rows as the compute stream read them (a late download right after each
 * batch is taken, then done at once, as a step whose work is queued on the GPU) equal the
 * rows of that batch. Without the wait for the step's done event in the loader, the copy
 * stream re-stages slot k % 2 with batch k + 2 before the compute stream reads it. */
Test(loader, a_slot_is_not_restaged_before_its_step_is_done_on_the_device)
{
	static float feat[NN * DIM];
	for (int i = 0; i < NN * DIM; i++)
		feat[i] = (float)i;
	bw_device dev = {.iface = &late_iface, .kind = BW_DEVICE_CUDA, .host_memory = false, .name = "late"};
	for (int thread = 0; thread < 2; thread++) {
		g_delay_compute_us = 0;
		bw_stream *compute;
		cr_assert_eq(bw_stream_open(&dev, &compute), 0);
		compute->delay_us = 3000; /* the compute stream is late; the loader's copy stream is not */
		const bw_loader_cfg lc = {.dev = &dev, .compute = compute, .depth = 1, .thread = thread == 1, .num_layers = 1,
					  .dim = DIM};
		bw_loader *ld;
		cr_assert_eq(bw_loader_open(&ld, &lc), 0, "%s", burrow_last_error());
		batches *bt = calloc(1, sizeof *bt);
		const bw_producer p = {.next = bt_next, .release = bt_release, .ctx = bt};
		bw_rows rows;
		bw_rows_from_memory(&rows, feat, NN, DIM, 1);
		static float seen[NB][NI * DIM];
		memset(seen, 0xff, sizeof seen);
		cr_assert_eq(bw_loader_start(ld, &p, &rows, NB), 0, "%s", burrow_last_error());
		for (int k = 0; k < NB; k++) {
			bw_loaded lb;
			cr_assert_eq(bw_loader_next(ld, &lb), 0, "%s", burrow_last_error());
			cr_assert_eq(lb.k, k);
			cr_assert_eq(bw_device_download_async(&dev, seen[k], lb.b.x.data, sizeof seen[k], compute), 0);
			cr_assert_eq(bw_loader_done(ld), 0);
		}
		bw_loader_stop(ld);
		cr_assert_eq(bw_stream_sync(&dev, compute), 0);
		for (int k = 0; k < NB; k++)
			for (int j = 0; j < NI; j++)
				for (int c = 0; c < DIM; c++)
					cr_assert_eq(seen[k][j * DIM + c], feat[bt->ids[k][j] * DIM + c],
						     "thread %d: batch %d row %d col %d was overwritten (%g, want %g)", thread, k, j,
						     c, seen[k][j * DIM + c], feat[bt->ids[k][j] * DIM + c]);
		bw_loader_close(ld);
		bw_stream_close(&dev, compute);
		free(bt);
	}
}

/* ------------------------------------------------------------ a source that brings norms and puts rows on the device */

#define BASE 5000 /* the first node id: labels by local id (id - BASE), as a rank's */

static struct bw_stream *g_compute; /* where the source queues its rows (the caller's compute stream) */
static float g_feat[NN * DIM];

typedef struct dev_read {
	bool busy;
	const int64_t *ids; /* the batch's (valid while it is held) */
	int64_t n;
	bw_rows_dst dst;
	float rows[NI * DIM]; /* the rows in order, what the compute stream copies (kept until the
				 read is reused, two batches later: that batch's step is done) */
} dev_read;

typedef struct dev_src {
	const bw_device *dev;
	dev_read rd[2];
	int polls_ahead; /* polls of a read not yet waited for */
} dev_src;

static int ds_submit(bw_rows *r, const int64_t *ids, int64_t n, const bw_rows_dst *dst, void **ticket)
{
	dev_src *s = r->ctx;
	dev_read *rd = !s->rd[0].busy ? &s->rd[0] : !s->rd[1].busy ? &s->rd[1] : NULL;
	if (!rd || !dst->norm || !dst->dev_x)
		return bw_err(BURROW_E_INVAL, "test source: no free read, or no room for norms or device rows");
	rd->busy = true;
	rd->ids = ids;
	rd->n = n;
	rd->dst = *dst;
	for (int64_t i = 0; i < n * DIM; i++)
		dst->x[i] = -1; /* host scratch: never what the model reads */
	*ticket = rd;
	return 0;
}

static int ds_wait(bw_rows *r, void *ticket)
{
	dev_src *s = r->ctx;
	dev_read *rd = ticket;
	for (int64_t i = 0; i < rd->n; i++) {
		const int64_t lid = rd->ids[i] - BASE;
		rd->dst.norm[i] = 1.0f / (float)(lid + 1); /* complete only now */
		memcpy(rd->rows + i * DIM, g_feat + lid * DIM, DIM * sizeof(float));
	}
	rd->busy = false;
	return bw_device_upload_async(s->dev, rd->dst.dev_x, rd->rows, (size_t)rd->n * DIM * sizeof(float), g_compute);
}

static int ds_poll(bw_rows *r, void *ticket)
{
	dev_src *s = r->ctx;
	s->polls_ahead += ((dev_read *)ticket)->busy;
	return 0;
}

typedef struct chain {
	burrow_batch b[NB];
	int64_t ids[NB][NI];
	int64_t ip[NB][NI + 1];
	int32_t ix[NI];
} chain;

/* Batch k: NI node ids from BASE, one edge per row (i <- i). */
static int ch_next(void *ctx, int64_t k, burrow_batch **out)
{
	chain *c = ctx;
	for (int j = 0; j < NI; j++) {
		c->ids[k][j] = BASE + (k * 131 + j * 7) % NN;
		c->ip[k][j] = j;
		c->ix[j] = j;
	}
	c->ip[k][NI] = NI;
	burrow_batch *b = &c->b[k];
	*b = (burrow_batch){.index = k, .num_layers = 1, .num_input = NI, .input_ids = c->ids[k], .num_seeds = NI,
			    .seeds = c->ids[k]};
	b->blocks[0] = (burrow_block){.num_dst = NI, .num_src = NI, .num_edges = NI, .indptr = c->ip[k], .indices = c->ix};
	*out = b;
	return 0;
}

/* In line, one batch ahead, on the late device: a source whose reads bring the GCN norms
 * (complete only at its wait) and put the rows on the device itself (queued on the compute
 * stream at its wait). What the compute stream reads of every batch is that batch's rows
 * (not the source's host scratch the loader would otherwise upload), the labels of its seeds
 * by local id (id - label_base), and the norms as the wait completed them (staged after the
 * wait); bw_loader_poll reaches the read in flight of the batch loaded ahead. The loader
 * refuses such a source with a thread. */
Test(loader, a_source_with_norms_and_device_rows_runs_in_line)
{
	static int32_t labels[NN];
	for (int i = 0; i < NN; i++) {
		labels[i] = i % 7;
		for (int c = 0; c < DIM; c++)
			g_feat[i * DIM + c] = (float)(i * DIM + c);
	}
	bw_device dev = {.iface = &late_iface, .kind = BW_DEVICE_CUDA, .host_memory = false, .name = "late"};
	g_delay_compute_us = 0;
	cr_assert_eq(bw_stream_open(&dev, &g_compute), 0);
	g_compute->delay_us = 2000;
	dev_src *src = calloc(1, sizeof *src);
	src->dev = &dev;
	bw_rows rows = {.num_rows = NN, .dim = DIM, .submit = ds_submit, .wait = ds_wait, .poll = ds_poll,
			.norms = true, .on_device = true, .ctx = src};
	chain *ch = calloc(1, sizeof *ch);
	const bw_producer p = {.next = ch_next, .release = bt_release, .ctx = ch};
	bw_loader_cfg lc = {.dev = &dev, .compute = g_compute, .depth = 1, .thread = true, .num_layers = 1, .dim = DIM,
			    .labels = labels, .label_base = BASE, .blocks = true, .gcn = true};
	bw_loader *ld;
	cr_assert_eq(bw_loader_open(&ld, &lc), 0, "%s", burrow_last_error());
	cr_assert_neq(bw_loader_start(ld, &p, &rows, NB), 0, "a source with device rows was taken with a thread");
	bw_loader_close(ld);
	lc.thread = false;
	g_delay_compute_us = 3000; /* the loader's copy stream is later still than the compute stream */
	cr_assert_eq(bw_loader_open(&ld, &lc), 0, "%s", burrow_last_error());
	g_delay_compute_us = 0;
	static float seen_x[NB][NI * DIM], seen_norm[NB][NI];
	static int32_t seen_lab[NB][NI];
	cr_assert_eq(bw_loader_start(ld, &p, &rows, NB), 0, "%s", burrow_last_error());
	for (int k = 0; k < NB; k++) {
		bw_loaded lb;
		cr_assert_eq(bw_loader_next(ld, &lb), 0, "%s", burrow_last_error());
		const int before = src->polls_ahead;
		cr_assert_eq(bw_loader_poll(ld), 0);
		cr_assert_eq(src->polls_ahead, before + (k + 1 < NB), "batch %d: the read ahead was not polled", k);
		const bw_block *b = lb.b.blocks[0];
		cr_assert_eq(bw_device_download_async(&dev, seen_x[k], lb.b.x.data, sizeof seen_x[k], g_compute), 0);
		cr_assert_eq(bw_device_download_async(&dev, seen_lab[k], lb.b.labels, sizeof seen_lab[k], g_compute), 0);
		cr_assert_eq(bw_device_download_async(&dev, seen_norm[k], b->d.src_norm, sizeof seen_norm[k], g_compute), 0);
		cr_assert_eq(bw_loader_done(ld), 0);
	}
	bw_loader_stop(ld);
	cr_assert_eq(bw_stream_sync(&dev, g_compute), 0);
	for (int k = 0; k < NB; k++)
		for (int j = 0; j < NI; j++) {
			const int64_t lid = ch->ids[k][j] - BASE;
			cr_assert_eq(seen_lab[k][j], labels[lid], "batch %d seed %d: label %d, want %d", k, j, seen_lab[k][j],
				     labels[lid]);
			cr_assert_eq(seen_norm[k][j], 1.0f / (float)(lid + 1), "batch %d row %d: norm %g, want %g", k, j,
				     seen_norm[k][j], 1.0f / (float)(lid + 1));
			for (int c = 0; c < DIM; c++)
				cr_assert_eq(seen_x[k][j * DIM + c], g_feat[lid * DIM + c], "batch %d row %d col %d: %g, want %g",
					     k, j, c, seen_x[k][j * DIM + c], g_feat[lid * DIM + c]);
		}
	bw_loader_close(ld);
	bw_stream_close(&dev, g_compute);
	free(ch);
	free(src);
}

/* ------------------------------------------------------------ LABOR-*'s weights */

static float g_star_w[NI];

/* ch_next's batch, its block weighed as a LABOR-* sampler's is (burrow_block.edge_weight). */
static int star_next(void *ctx, int64_t k, burrow_batch **out)
{
	int st = ch_next(ctx, k, out);
	(*out)->blocks[0].edge_weight = g_star_w;
	return st;
}

/* With sampler_weights, the compute block of a weighed batch aggregates by its weights (and
 * its transpose has them for the backward); without, the weights are left aside. */
Test(loader, the_samplers_edge_weights_reach_the_blocks_when_asked)
{
	static float feat[(BASE + NN) * DIM];
	for (int j = 0; j < NI; j++)
		g_star_w[j] = 0.5f + (float)j;
	for (int asked = 0; asked < 2; asked++) {
		chain *ch = calloc(1, sizeof *ch);
		const bw_producer p = {.next = star_next, .release = bt_release, .ctx = ch};
		bw_rows rows;
		bw_rows_from_memory(&rows, feat, BASE + NN, DIM, 1);
		const bw_loader_cfg lc = {.dev = bw_device_cpu(), .depth = 1, .num_layers = 1, .dim = DIM, .blocks = true,
					  .transpose = true, .sampler_weights = asked == 1};
		bw_loader *ld;
		cr_assert_eq(bw_loader_open(&ld, &lc), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_loader_start(ld, &p, &rows, 3), 0, "%s", burrow_last_error());
		for (int k = 0; k < 3; k++) {
			bw_loaded lb;
			cr_assert_eq(bw_loader_next(ld, &lb), 0, "%s", burrow_last_error());
			const bw_block *b = lb.b.blocks[0];
			cr_assert_eq(b->edge_weight, asked ? g_star_w : NULL, "asked %d: batch %d's block weights", asked, k);
			cr_assert_eq(b->t_weight != NULL, asked == 1, "the transpose's weights");
			cr_assert_eq(bw_loader_done(ld), 0);
		}
		bw_loader_stop(ld);
		bw_loader_close(ld);
		free(ch);
	}
}

/* A typed batch of ch_next's shape (one type, one relation of rows i <- i), its block weighed
 * as the typed LABOR-* sampler's is. */
static burrow_typed_batch g_star_tb[NB];

static int star_next_typed(void *ctx, int64_t k, burrow_typed_batch **out)
{
	burrow_batch *b;
	int st = ch_next(ctx, k, &b);
	burrow_typed_batch *t = &g_star_tb[k];
	*t = (burrow_typed_batch){.index = k, .num_layers = 1, .num_types = 1, .num_relations = 1, .num_seeds = NI,
				  .seeds = b->seeds};
	t->num_nodes[0][0] = t->num_nodes[1][0] = NI;
	t->input_ids[0] = b->input_ids;
	t->blocks[0][0] = b->blocks[0];
	t->blocks[0][0].edge_weight = g_star_w;
	*out = t;
	return st;
}

/* The same for typed batches: with sampler_weights each relation's compute block aggregates by
 * its weights (and its transpose has them); without, they are left aside. */
Test(loader, the_typed_samplers_edge_weights_reach_the_blocks_when_asked)
{
	for (int j = 0; j < NI; j++)
		g_star_w[j] = 0.25f + (float)j;
	for (int asked = 0; asked < 2; asked++) {
		chain *ch = calloc(1, sizeof *ch);
		const bw_producer p = {.next_typed = star_next_typed, .ctx = ch};
		bw_rows *const none[1] = {NULL};
		const bw_loader_cfg lc = {.dev = bw_device_cpu(), .depth = 1, .num_layers = 1, .dim = 1, .blocks = true,
					  .transpose = true, .sampler_weights = asked == 1};
		bw_loader *ld;
		cr_assert_eq(bw_loader_open(&ld, &lc), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_loader_start_typed(ld, &p, none, 1, 3), 0, "%s", burrow_last_error());
		for (int k = 0; k < 3; k++) {
			bw_loaded lb;
			cr_assert_eq(bw_loader_next(ld, &lb), 0, "%s", burrow_last_error());
			const bw_block *b = lb.hb.blocks[0][0];
			cr_assert_eq(b->edge_weight, asked ? g_star_w : NULL, "asked %d: typed batch %d's block weights", asked, k);
			cr_assert_eq(b->t_weight != NULL, asked == 1, "the transpose's weights");
			cr_assert_eq(bw_loader_done(ld), 0);
		}
		bw_loader_stop(ld);
		bw_loader_close(ld);
		free(ch);
	}
}
