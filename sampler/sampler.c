/* sampler.c: the public sampler: options, the epoch iterator, the producer threads and
 * their bounded queue, the batch pool (docs/sampler.md). The kernel is in sample.c. */
#define _GNU_SOURCE
#include "../device/cuda_gateway.h"
#include "../device/device.h"
#include "sampler_internal.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

/* One place in the queue: batch `index` of the current epoch, or the error it met. */
typedef struct slot {
	bool full;
	int status;
	bw_sampled *b;
	char msg[256];
} slot;

typedef struct producer {
	struct burrow_sampler *s;
	pthread_t tid;
	bool started;
	bw_sample_ctx ctx;
	bw_cuda_sample_ctx *gpu; /* its GPU stream and scratch when the sampler samples on a GPU */
	int64_t *seeds; /* [batch_size] copied under the lock when a batch is claimed */
} producer;

struct burrow_sampler {
	const burrow_csr *g;     /* borrowed */
	burrow_sampler_opts o;
	int threads;             /* resolved o.threads */
	int64_t n;               /* training ids */
	int64_t *ids;            /* [n] as given */
	int64_t *perm;           /* [n] the current epoch's order */
	int64_t num_batches;
	bw_sample_ctx sync;      /* scratch for the calling thread */
	bw_cuda_csr *gcsr;       /* the graph on the GPU when opts.device names one, else NULL */
	bw_cuda_sample_ctx *gsync; /* the calling thread's GPU scratch */

	pthread_mutex_t mu;      /* guards everything below */
	pthread_cond_t produce;  /* producers wait for room or a new epoch */
	pthread_cond_t consume;  /* the consumer waits for its slot */
	bw_sampled *all, *free;    /* every batch made, and the recycled ones */
	bool started, shutdown;
	int64_t epoch;
	uint64_t gen;            /* bumped by every start: batches of an older one are dropped */
	int64_t next_claim;      /* next batch index a producer takes */
	int64_t next_deliver;    /* next batch index burrow_sampler_next returns */
	slot *slots;             /* [prefetch]: batch i lives in slots[i % prefetch] */
	int nprod;
	producer *prod;          /* [nprod] */
	void (*after)(void *);   /* bw_sampler_open_checked: called after each batch sampled, or NULL */
	void *after_user;
};

void burrow_sampler_defaults(burrow_sampler_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->num_layers = 3;
	o->fanouts[0] = 15;
	o->fanouts[1] = 10;
	o->fanouts[2] = 5;
	o->batch_size = 1024;
	o->threads = 1;
	o->prefetch = 4;
	o->producers = 1;
}

/* A batch from the free list, or a new one (lock held). NULL when out of memory. */
static bw_sampled *pool_get(burrow_sampler *s)
{
	bw_sampled *b = s->free;
	if (b) {
		s->free = b->next_free;
	} else {
		b = bw_calloc(1, sizeof *b);
		if (!b)
			return NULL;
		b->owner = s;
		b->next_all = s->all;
		s->all = b;
	}
	b->next_free = NULL;
	b->held = true;
	return b;
}

/* Back to the free list (lock held). */
static void pool_put(burrow_sampler *s, bw_sampled *b)
{
	b->held = false;
	b->next_free = s->free;
	s->free = b;
}

/* Hand b out as batch `index` of `epoch` (or -1, -1). */
static void stamp(bw_sampled *b, int64_t epoch, int64_t index)
{
	b->pub.epoch = epoch;
	b->pub.index = index;
}

/* The seeds of batch i of the current epoch: perm[i*B, ...); returns their count. */
static int64_t batch_seeds(const burrow_sampler *s, int64_t i, const int64_t **seeds)
{
	int64_t lo = i * s->o.batch_size, hi = BW_MIN(s->n, lo + s->o.batch_size);
	*seeds = s->perm + lo;
	return hi - lo;
}

static uint64_t batch_key(const burrow_sampler *s, int64_t epoch, int64_t index)
{
	return bw_key(bw_key(s->o.seed, (uint64_t)epoch), (uint64_t)index);
}

/* LABOR's batch dependency for batch `index` of `epoch` into c (index < 0, or no dependency:
 * none): with K = labor_batch_dependency, batch i sits (i mod K) / K of the way from group
 * i / K's variates to group i / K + 1's, each group keyed by (seed, epoch, group). */
static void set_dep(const burrow_sampler *s, bw_sample_ctx *c, int64_t epoch, int64_t index)
{
	const int K = s->o.labor_batch_dependency;
	c->dep = (bw_labor_batch){0};
	if (index < 0 || K < 2 || !(s->o.labor || s->o.labor_star))
		return;
	const uint64_t ek = bw_key(bw_key(s->o.seed, (uint64_t)epoch), BW_KEY_LABOR_GROUP);
	c->dep.k1 = bw_key(ek, (uint64_t)(index / K)) | 1;
	c->dep.k2 = bw_key(ek, (uint64_t)(index / K + 1)) | 1;
	c->dep.c = (double)(index % K) / K;
}

static int cpu_devices(void) { return 1; }

static int cuda_devices(void)
{
	const int n = burrow_cuda_device_count();
	return n > 0 ? n : 0;
}

static const bw_sampler_backend backends[] = {{"cpu", cpu_devices}, {"cuda", cuda_devices}};

int bw_sampler_backend_count(void) { return BW_CUDA_BUILT ? 2 : 1; }

const bw_sampler_backend *bw_sampler_backend_at(int i)
{
	return i >= 0 && i < bw_sampler_backend_count() ? &backends[i] : NULL;
}

/* One batch of explicit seeds, on the GPU when the sampler has one (gc), else on the CPU;
 * LABOR's settings and batch dependency are c's either way. */
static int sample_on(const burrow_sampler *s, bw_sample_ctx *c, bw_cuda_sample_ctx *gc, const int64_t *seeds,
		     int64_t n, uint64_t key, bw_sampled *b)
{
	if (gc)
		return bw_cuda_sample_batch(gc, seeds, n, s->o.num_layers, s->o.fanouts, key,
					    c->labor || c->labor_star ? &c->dep : NULL, c->labor_star, b);
	int st = bw_sample_batch(c, s->g, seeds, n, s->o.num_layers, s->o.fanouts, key, b);
	if (s->after)
		s->after(s->after_user);
	return st;
}

/* Producers on CPUs of their own, when there are 2 or more and no more than the CPUs the
 * process may run on: producer i on the (i + pid)-th of them (the offset spreads the
 * producers of several processes). The kernel balances 3 busy threads on 2 CPUs by leaving
 * one alone on its CPU: unpinned, the other process's thread is often the one alone and
 * both producers share one CPU; pinned, a busy core slows one producer, not both
 * (docs/sampler.md, "Producers"). Best effort: a refused affinity leaves the thread free. */
static void pin_producers(burrow_sampler *s)
{
	cpu_set_t allowed;
	if (s->nprod < 2 || sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < s->nprod)
		return;
	int cpus[CPU_SETSIZE], n = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed))
			cpus[n++] = c;
	const int at = (int)(getpid() % n);
	for (int i = 0; i < s->nprod; i++) {
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpus[(i + at) % n], &one);
		(void)pthread_setaffinity_np(s->prod[i].tid, sizeof one, &one);
	}
}

/* A producer: claim the next batch index inside the window, sample it, file it. */
static void *produce(void *arg)
{
	producer *p = arg;
	burrow_sampler *s = p->s;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		while (!s->shutdown && !(s->started && s->next_claim < s->num_batches &&
					 s->next_claim < s->next_deliver + s->o.prefetch))
			pthread_cond_wait(&s->produce, &s->mu);
		if (s->shutdown)
			break;
		const int64_t i = s->next_claim++, epoch = s->epoch;
		const uint64_t gen = s->gen;
		const int64_t *src;
		const int64_t m = batch_seeds(s, i, &src);
		memcpy(p->seeds, src, (size_t)m * sizeof *src);
		bw_sampled *b = pool_get(s);
		pthread_mutex_unlock(&s->mu);

		set_dep(s, &p->ctx, epoch, i);
		int st = b ? sample_on(s, &p->ctx, p->gpu, p->seeds, m, batch_key(s, epoch, i), b) : BURROW_E_NOMEM;

		pthread_mutex_lock(&s->mu);
		if (b && (st < 0 || gen != s->gen)) {
			pool_put(s, b);
			b = NULL;
		}
		if (gen != s->gen)
			continue;
		slot *sl = &s->slots[i % s->o.prefetch];
		sl->full = true;
		sl->status = st;
		sl->b = b;
		if (st < 0)
			snprintf(sl->msg, sizeof sl->msg, "%s", burrow_last_error());
		else
			stamp(b, epoch, i);
		pthread_cond_broadcast(&s->consume);
	}
	pthread_mutex_unlock(&s->mu);
	return NULL;
}

/* Refuse what the sampler cannot serve, naming the option. */
static int check_opts(const burrow_sampler_opts *o)
{
	if (o->num_layers < 1 || o->num_layers > BURROW_MAX_LAYERS)
		return bw_err(BURROW_E_INVAL, "sampler: num_layers %d is not in [1, %d]", o->num_layers,
			      BURROW_MAX_LAYERS);
	for (int l = 0; l < o->num_layers; l++)
		if (o->fanouts[l] < -1)
			return bw_err(BURROW_E_INVAL, "sampler: fanout %d of layer %d: want -1 (all) or >= 0",
				      o->fanouts[l], l);
	if (o->batch_size < 1 || o->batch_size > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "sampler: batch_size %lld is not in [1, 2^31)", (long long)o->batch_size);
	if (o->threads < 0 || o->threads > 4096)
		return bw_err(BURROW_E_INVAL, "sampler: threads %d is not in [0, 4096]", o->threads);
	if (o->prefetch < 0 || o->prefetch > 4096)
		return bw_err(BURROW_E_INVAL, "sampler: prefetch %d is not in [0, 4096]", o->prefetch);
	if (o->pin < -1 || o->pin > 0)
		return bw_err(BURROW_E_INVAL, "sampler: pin %d is not 0 (auto) or -1 (never)", o->pin);
	if (o->prefetch > 0 && (o->producers < 1 || o->producers > 256))
		return bw_err(BURROW_E_INVAL, "sampler: producers %d is not in [1, 256]", o->producers);
	if (o->labor_batch_dependency < 0)
		return bw_err(BURROW_E_INVAL, "sampler: labor_batch_dependency %d: want >= 0 (0, 1: off)",
			      o->labor_batch_dependency);
	if (o->labor_star < 0 || o->labor_star > 64)
		return bw_err(BURROW_E_INVAL, "sampler: labor_star %d is not in [0, 64] (rounds of LABOR-*; 0: off)",
			      o->labor_star);
	if (o->device_csr_budget < 0)
		return bw_err(BURROW_E_INVAL, "sampler: device_csr_budget %lld: want >= 0 bytes (0: half the free memory)",
			      (long long)o->device_csr_budget);
	return 0;
}

/* Training ids must be node ids, each at most once (a bitmap over the nodes, freed after). */
static int check_ids(const burrow_csr *g, const int64_t *ids, int64_t n)
{
	uint64_t *seen = bw_calloc(((size_t)g->num_nodes + 63) / 64, sizeof *seen);
	if (!seen)
		return BURROW_E_NOMEM;
	int st = 0;
	for (int64_t i = 0; i < n && !st; i++) {
		int64_t v = ids[i];
		if (v < 0 || v >= g->num_nodes)
			st = bw_err(BURROW_E_RANGE, "sampler: training id %lld at position %lld is not a node id "
						    "(the graph has %lld nodes)",
				    (long long)v, (long long)i, (long long)g->num_nodes);
		else if (seen[v >> 6] >> (v & 63) & 1)
			st = bw_err(BURROW_E_INVAL, "sampler: training id %lld appears twice (again at position %lld)",
				    (long long)v, (long long)i);
		else
			seen[v >> 6] |= 1ull << (v & 63);
	}
	bw_free(seen);
	return st;
}

/* burrow_sampler_open, and bw_sampler_open_checked when check_graph is false. */
static int sampler_open(burrow_sampler **out, const burrow_csr *g, const int64_t *ids, int64_t n,
			const burrow_sampler_opts *opts, bool check_graph, void (*after)(void *), void *after_user)
{
	*out = NULL;
	burrow_sampler_opts o;
	burrow_sampler_defaults(&o);
	int st0 = opts ? bw_opts_in(&o, sizeof o, opts, "burrow_sampler_opts") : 0;
	if (st0)
		return st0;
	int st;
	if (!g || !g->indptr || (g->num_edges && !g->indices) || g->num_nodes < 1 ||
	    (g->index_width != 4 && g->index_width != 8))
		return bw_err(BURROW_E_INVAL, "sampler: the graph is empty or malformed");
	if (n < 0 || (n && !ids))
		return bw_err(BURROW_E_INVAL, "sampler: %lld training ids", (long long)n);
	/* the graph may come from the caller, not a dataset (whose open checked it): every
	 * offset and id is checked once here, so that sampling trusts them */
	int kind = BW_DEVICE_CPU, index = 0;
	if ((st = check_opts(&o)) || (st = bw_device_parse(o.device, &kind, &index)))
		return st;
	if (kind == BW_DEVICE_CUDA && (st = burrow_device_check(o.device)) < 0) {
		char why[256];
		snprintf(why, sizeof why, "%s", burrow_last_error());
		return bw_err(st, "sampler: %s", why);
	}
	if ((check_graph && (st = burrow_csr_check(g, false))) || (st = check_ids(g, ids, n)))
		return st;
	if (o.edge_ids && kind == BW_DEVICE_CUDA)
		return bw_err(BURROW_E_UNSUPPORTED, "sampler: edge ids (edge features) are sampled on the CPU only, not on %s",
			      o.device);
	o.device = NULL; /* borrowed: the kind and index are what is kept */
	burrow_sampler *s = bw_calloc(1, sizeof *s);
	if (!s)
		return BURROW_E_NOMEM;
	s->g = g;
	s->o = o;
	s->after = after;
	s->after_user = after_user;
	s->threads = bw_threads(o.threads);
	s->n = n;
	s->num_batches = o.drop_last ? n / o.batch_size : (n + o.batch_size - 1) / o.batch_size;
	int max_fanout = 0;
	for (int l = 0; l < o.num_layers; l++)
		max_fanout = BW_MAX(max_fanout, o.fanouts[l]);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->produce, NULL);
	pthread_cond_init(&s->consume, NULL);
	s->ids = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *s->ids);
	s->perm = bw_malloc((size_t)BW_MAX(n, 1) * sizeof *s->perm);
	if (!s->ids || !s->perm) {
		st = BURROW_E_NOMEM;
		goto out_close;
	}
	if (n)
		memcpy(s->ids, ids, (size_t)n * sizeof *ids);
	if ((st = bw_sample_ctx_init(&s->sync, s->threads, max_fanout)))
		goto out_close;
	s->sync.edge_ids = o.edge_ids;
	s->sync.labor = o.labor;
	s->sync.labor_star = o.labor_star;
	s->sync.trim = after;
	s->sync.trim_user = after_user;
	if (kind == BW_DEVICE_CUDA &&
	    ((st = bw_cuda_csr_open(&s->gcsr, g, index, o.device_csr_budget)) ||
	     (st = bw_cuda_sample_ctx_open(&s->gsync, s->gcsr))))
		goto out_close;
	if (o.prefetch > 0) {
		s->slots = bw_calloc((size_t)o.prefetch, sizeof *s->slots);
		s->prod = bw_calloc((size_t)o.producers, sizeof *s->prod);
		if (!s->slots || !s->prod) {
			st = BURROW_E_NOMEM;
			goto out_close;
		}
		for (int i = 0; i < o.producers; i++) {
			producer *p = &s->prod[i];
			p->s = s;
			s->nprod = i + 1;
			p->seeds = bw_malloc((size_t)o.batch_size * sizeof *p->seeds);
			if (!p->seeds) {
				st = BURROW_E_NOMEM;
				goto out_close;
			}
			if ((st = bw_sample_ctx_init(&p->ctx, s->threads, max_fanout)))
				goto out_close;
			p->ctx.edge_ids = o.edge_ids;
			p->ctx.labor = o.labor;
			p->ctx.labor_star = o.labor_star;
			p->ctx.trim = after;
			p->ctx.trim_user = after_user;
			if (s->gcsr && (st = bw_cuda_sample_ctx_open(&p->gpu, s->gcsr)))
				goto out_close;
			int e = pthread_create(&p->tid, NULL, produce, p);
			if (e) {
				st = bw_err_thread(e, "sampler", "a producer thread");
				goto out_close;
			}
			p->started = true;
			(void)pthread_setname_np(p->tid, "burrow-sample"); /* for top -H and the tests */
		}
		if (o.pin >= 0)
			pin_producers(s);
	}
	*out = s;
	return 0;
out_close:
	burrow_sampler_close(s);
	return st;
}

int burrow_sampler_open(burrow_sampler **out, const burrow_csr *g, const int64_t *ids, int64_t n,
			const burrow_sampler_opts *opts)
{
	return sampler_open(out, g, ids, n, opts, true, NULL, NULL);
}

int bw_sampler_open_checked(burrow_sampler **out, const burrow_csr *g, const int64_t *ids, int64_t n,
			    const burrow_sampler_opts *opts, void (*after)(void *), void *after_user)
{
	return sampler_open(out, g, ids, n, opts, false, after, after_user);
}

void burrow_sampler_close(burrow_sampler *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->shutdown = true;
	pthread_cond_broadcast(&s->produce);
	pthread_mutex_unlock(&s->mu);
	for (int i = 0; i < s->nprod; i++) {
		producer *p = &s->prod[i];
		if (p->started)
			pthread_join(p->tid, NULL);
		bw_sample_ctx_free(&p->ctx);
		bw_cuda_sample_ctx_close(p->gpu);
		bw_free(p->seeds);
	}
	for (bw_sampled *b = s->all, *nx; b; b = nx) {
		nx = b->next_all;
		bw_sampled_free_arrays(b);
		bw_free(b);
	}
	bw_sample_ctx_free(&s->sync);
	bw_cuda_sample_ctx_close(s->gsync);
	bw_cuda_csr_close(s->gcsr);
	bw_free(s->prod);
	bw_free(s->slots);
	bw_free(s->perm);
	bw_free(s->ids);
	pthread_cond_destroy(&s->consume);
	pthread_cond_destroy(&s->produce);
	pthread_mutex_destroy(&s->mu);
	bw_free(s);
}

int64_t burrow_sampler_num_batches(const burrow_sampler *s) { return s ? s->num_batches : 0; }

const char *burrow_sampler_where(const burrow_sampler *s)
{
	if (!s || !s->gcsr)
		return "cpu";
	return bw_cuda_csr_pinned(s->gcsr) ? "cuda, graph in pinned host memory" : "cuda, graph in device memory";
}

int burrow_sampler_start(burrow_sampler *s, int64_t epoch)
{
	if (!s || epoch < 0)
		return bw_err(BURROW_E_INVAL, "burrow_sampler_start: epoch %lld: want >= 0", (long long)epoch);
	pthread_mutex_lock(&s->mu);
	s->gen++;
	for (int i = 0; i < s->o.prefetch; i++) {
		if (s->slots[i].b)
			pool_put(s, s->slots[i].b);
		s->slots[i] = (slot){0};
	}
	/* shuffle the ids as given, so that the order is a function of (seed, epoch) only */
	if (s->n)
		memcpy(s->perm, s->ids, (size_t)s->n * sizeof *s->ids);
	bw_shuffle(s->perm, s->n, bw_key(bw_key(s->o.seed, (uint64_t)epoch), BW_KEY_SHUFFLE));
	s->started = true;
	s->epoch = epoch;
	s->next_claim = s->next_deliver = 0;
	pthread_cond_broadcast(&s->produce);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* Sample into a pooled batch in the calling thread with the sync scratch. */
static int sample_sync(burrow_sampler *s, const int64_t *seeds, int64_t n, uint64_t key, int64_t index,
		       int64_t first, int64_t count, burrow_batch **out)
{
	set_dep(s, &s->sync, s->epoch, index);
	pthread_mutex_lock(&s->mu);
	bw_sampled *b = pool_get(s);
	pthread_mutex_unlock(&s->mu);
	if (!b)
		return BURROW_E_NOMEM;
	int st = seeds ? sample_on(s, &s->sync, s->gsync, seeds, n, key, b) : bw_sample_full(&s->sync, s->g, first, count, b);
	if (st < 0) {
		pthread_mutex_lock(&s->mu);
		pool_put(s, b);
		pthread_mutex_unlock(&s->mu);
		return st;
	}
	stamp(b, -1, -1);
	*out = &b->pub;
	return 0;
}

int burrow_sampler_next(burrow_sampler *s, burrow_batch **out)
{
	*out = NULL;
	if (!s || !s->started)
		return bw_err(BURROW_E_INVAL, "burrow_sampler_next: no epoch started (call burrow_sampler_start first)");
	if (s->o.prefetch == 0) {
		if (s->next_deliver >= s->num_batches)
			return BURROW_DONE;
		const int64_t i = s->next_deliver, *seeds;
		const int64_t m = batch_seeds(s, i, &seeds);
		int st = sample_sync(s, seeds, m, batch_key(s, s->epoch, i), i, 0, 0, out);
		if (st < 0)
			return st;
		stamp((bw_sampled *)*out, s->epoch, i);
		s->next_deliver++;
		return 0;
	}
	int st = 0;
	pthread_mutex_lock(&s->mu);
	if (s->next_deliver >= s->num_batches) {
		st = BURROW_DONE;
		goto out_unlock;
	}
	slot *sl = &s->slots[s->next_deliver % s->o.prefetch];
	while (!sl->full)
		pthread_cond_wait(&s->consume, &s->mu);
	if (sl->status < 0) { /* stays in place: the epoch cannot go past it */
		st = bw_err(sl->status, "%s", sl->msg);
		goto out_unlock;
	}
	*out = &sl->b->pub;
	*sl = (slot){0};
	s->next_deliver++;
	pthread_cond_broadcast(&s->produce);
out_unlock:
	pthread_mutex_unlock(&s->mu);
	return st;
}

void burrow_sampler_release(burrow_sampler *s, burrow_batch *pub)
{
	if (!s || !pub)
		return;
	bw_sampled *b = (bw_sampled *)pub;
	pthread_mutex_lock(&s->mu);
	if (b->owner != s || !b->held)
		bw_log(BURROW_LOG_ERROR, "burrow_sampler_release: batch %p is not held from this sampler (ignored)",
		       (void *)pub);
	else
		pool_put(s, b);
	pthread_mutex_unlock(&s->mu);
}

int burrow_sampler_sample(burrow_sampler *s, const int64_t *seeds, int64_t n, uint64_t key, burrow_batch **out)
{
	*out = NULL;
	if (!s || !seeds || n < 1 || n > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "burrow_sampler_sample: %lld seeds: want 1 .. 2^31-1", (long long)n);
	return sample_sync(s, seeds, n, bw_key(bw_key(s->o.seed, BW_KEY_EXPLICIT), key), -1, 0, 0, out);
}

int burrow_sampler_full(burrow_sampler *s, int64_t first, int64_t count, burrow_batch **out)
{
	*out = NULL;
	if (!s || count < 1 || count > INT32_MAX)
		return bw_err(BURROW_E_INVAL, "burrow_sampler_full: %lld nodes: want 1 .. 2^31-1", (long long)count);
	if (first < 0 || first > s->g->num_nodes - count)
		return bw_err(BURROW_E_RANGE, "burrow_sampler_full: nodes [%lld, %lld + %lld) are not a range of "
					      "the graph's node ids",
			      (long long)first, (long long)first, (long long)count);
	return sample_sync(s, NULL, 0, 0, -1, first, count, out);
}
