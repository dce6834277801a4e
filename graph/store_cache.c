/* store_cache.c: the feature store's row cache: a chained hash index over fixed slots, CLOCK
 * eviction for the dynamic policy, top-k selection for the static ones. */
#include "store_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the table */

static size_t bucket_of(const bw_cache *c, int64_t id)
{
	return (size_t)(((uint64_t)id * 0x9E3779B97F4A7C15ull) >> c->shift);
}

int bw_cache_new(bw_cache **out, int policy, size_t budget, size_t row_bytes)
{
	*out = NULL;
	/* per slot: the row, its id, chain link and CLOCK bit; per bucket (at most 2 per slot) 4 */
	const size_t per = row_bytes + sizeof(int64_t) + sizeof(int32_t) + 1;
	if (budget <= sizeof(bw_cache))
		return 0;
	size_t avail = budget - sizeof(bw_cache);
	size_t cap = avail / (per + 2 * sizeof(int32_t));
	if (cap > (size_t)INT32_MAX - 1)
		cap = (size_t)INT32_MAX - 1;
	if (cap == 0)
		return 0;
	size_t nb = 2;
	int lg = 1;
	while (nb < cap) {
		nb <<= 1;
		lg++;
	}
	/* spend what the buckets left over on more slots, keeping slots <= buckets */
	size_t cap2 = (avail - nb * sizeof(int32_t)) / per;
	cap = BW_MIN(BW_MAX(cap, cap2), nb);

	bw_cache *c = bw_malloc(sizeof *c);
	if (!c)
		return BURROW_E_NOMEM;
	*c = (bw_cache){.policy = policy, .cap = cap, .row_bytes = row_bytes, .mask = nb - 1, .shift = 64 - lg};
	c->buckets = bw_malloc(nb * sizeof *c->buckets);
	c->next = bw_malloc(cap * sizeof *c->next);
	c->ids = bw_malloc(cap * sizeof *c->ids);
	c->ref = bw_calloc(cap, 1);
	c->rows = bw_malloc(cap * row_bytes);
	if (!c->buckets || !c->next || !c->ids || !c->ref || !c->rows) {
		bw_cache_free(c);
		return BURROW_E_NOMEM;
	}
	memset(c->buckets, 0xff, nb * sizeof *c->buckets);
	c->bytes = sizeof *c + nb * sizeof *c->buckets + cap * per;
	BW_ASSERT(c->bytes <= budget);
	*out = c;
	return 0;
}

size_t bw_cache_bytes_for(size_t rows, size_t row_bytes)
{
	/* bw_cache_new takes avail / (per + 2 * 4) slots first: paying for two buckets per row
	 * makes that at least `rows` */
	const size_t per = row_bytes + sizeof(int64_t) + sizeof(int32_t) + 1;
	return sizeof(bw_cache) + rows * (per + 2 * sizeof(int32_t)) + 64;
}

void bw_cache_free(bw_cache *c)
{
	if (!c)
		return;
	bw_free(c->buckets);
	bw_free(c->next);
	bw_free(c->ids);
	bw_free(c->ref);
	bw_free(c->rows);
	bw_free(c);
}

static int32_t find(const bw_cache *c, int64_t id)
{
	for (int32_t i = c->buckets[bucket_of(c, id)]; i >= 0; i = c->next[i])
		if (c->ids[i] == id)
			return i;
	return -1;
}

static void link_slot(bw_cache *c, size_t slot, int64_t id)
{
	size_t b = bucket_of(c, id);
	c->ids[slot] = id;
	c->next[slot] = c->buckets[b];
	c->buckets[b] = (int32_t)slot;
}

static void unlink_slot(bw_cache *c, size_t slot)
{
	int32_t *p = &c->buckets[bucket_of(c, c->ids[slot])];
	while (*p != (int32_t)slot)
		p = &c->next[*p];
	*p = c->next[slot];
}

const char *bw_cache_get(bw_cache *c, int64_t id)
{
	int32_t i = find(c, id);
	if (i < 0)
		return NULL;
	c->ref[i] = 1;
	return c->rows + (size_t)i * c->row_bytes;
}

char *bw_cache_put(bw_cache *c, int64_t id)
{
	if (find(c, id) >= 0)
		return NULL;
	size_t slot;
	if (c->count < c->cap) {
		slot = c->count++;
	} else {
		while (c->ref[c->hand]) {
			c->ref[c->hand] = 0;
			c->hand = (c->hand + 1) % c->cap;
		}
		slot = c->hand;
		c->hand = (c->hand + 1) % c->cap;
		unlink_slot(c, slot);
	}
	link_slot(c, slot, id);
	c->ref[slot] = 0;
	return c->rows + slot * c->row_bytes;
}

/* ------------------------------------------------------------ the public calls */

static int check_idle(burrow_store *s)
{
	pthread_mutex_lock(&s->qlock);
	bool busy = s->live != NULL;
	pthread_mutex_unlock(&s->qlock);
	return busy ? bw_err(BURROW_E_INVAL, "%s: the cache cannot change while gathers are in flight", s->path) : 0;
}

static void install(burrow_store *s, bw_cache *c)
{
	pthread_mutex_lock(&s->clock);
	bw_cache *old = s->cache;
	s->cache = c;
	pthread_mutex_unlock(&s->clock);
	bw_cache_free(old);
}

int burrow_store_cache_drop(burrow_store *s)
{
	int st = check_idle(s);
	if (st == 0)
		install(s, NULL);
	return st;
}

int burrow_store_cache_clock(burrow_store *s, size_t bytes)
{
	int st = check_idle(s);
	if (st < 0)
		return st;
	install(s, NULL);
	bw_cache *c;
	if ((st = bw_cache_new(&c, BURROW_CACHE_CLOCK, bytes, s->info.cache_row_bytes)) < 0)
		return st;
	install(s, c);
	return 0;
}

/* A candidate for a static cache: better = higher key, then lower id. */
typedef struct kv {
	uint64_t key;
	int64_t id;
} kv;

static bool better(kv a, kv b) { return a.key > b.key || (a.key == b.key && a.id < b.id); }

/* Sift the worst candidate to the top of a heap of k. */
static void sift_down(kv *h, size_t k, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, w = i;
		if (l < k && better(h[w], h[l]))
			w = l;
		if (r < k && better(h[w], h[r]))
			w = r;
		if (w == i)
			return;
		kv t = h[i];
		h[i] = h[w];
		h[w] = t;
		i = w;
	}
}

static void sift_up(kv *h, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (!better(h[p], h[i]))
			return;
		kv t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

/* Key of row v for a static cache. */
typedef uint64_t (*key_fn)(const void *ctx, int64_t v);

static uint64_t degree_key(const void *ctx, int64_t v)
{
	const burrow_csr *g = ctx;
	return (uint64_t)(g->indptr[v + 1] - g->indptr[v]);
}

static uint64_t profile_key(const void *ctx, int64_t v) { return ((const uint64_t *)ctx)[v]; }

/* Build a static cache of the rows with the highest non-zero keys that fit `bytes`, read
 * by one sequential pass when they are at least half the rows (else with the store's own
 * engine), and install it. */
static int cache_static(burrow_store *s, key_fn key, const void *ctx, size_t bytes)
{
	int st = check_idle(s);
	if (st < 0)
		return st;
	install(s, NULL);
	bw_cache *c;
	if ((st = bw_cache_new(&c, BURROW_CACHE_STATIC, bytes, s->info.cache_row_bytes)) < 0 || !c)
		return st;
	const int64_t N = s->info.num_rows;
	size_t k = (size_t)BW_MIN((int64_t)c->cap, N), m = 0;
	kv *h = k ? bw_malloc(k * sizeof *h) : NULL;
	if (k && !h) {
		bw_cache_free(c);
		return BURROW_E_NOMEM;
	}
	for (int64_t v = 0; v < N && k; v++) {
		kv x = {.key = key(ctx, v), .id = v};
		if (x.key == 0)
			continue;
		if (m < k) {
			h[m] = x;
			sift_up(h, m++);
		} else if (better(x, h[0])) {
			h[0] = x;
			sift_down(h, k, 0);
		}
	}
	/* ids in place of the heap, ascending: the fill reads them in file order */
	int64_t *ids = (int64_t *)h;
	for (size_t i = 0; i < m; i++)
		ids[i] = h[i].id;
	bw_sort_i64(ids, (int64_t)m);
	if (m) {
		/* most rows: one sequential pass; a few: the engine's reads of just those rows */
		const bool seq = m >= (size_t)(N + 1) / 2;
		const uint64_t t0 = bw_now_ns(), b0 = atomic_load(&s->bytes_read);
		bw_ticket *t;
		if (seq)
			st = bw_store_read_seq(s, ids, m, c->rows, s->cache_conv ? BW_CONV_NONE : s->conv,
					       s->info.cache_row_bytes);
		else if ((st = bw_store_submit(s, ids, m, c->rows, true, &t)) == 0)
			st = burrow_store_wait(s, t);
		if (st < 0) {
			bw_free(h);
			bw_cache_free(c);
			return st;
		}
		s->info.cache_fill = seq ? BURROW_FILL_SEQUENTIAL : BURROW_FILL_RANDOM;
		s->info.cache_fill_bytes = atomic_load(&s->bytes_read) - b0;
		s->info.cache_fill_seconds = (double)(bw_now_ns() - t0) * 1e-9;
	}
	for (size_t i = 0; i < m; i++)
		link_slot(c, i, ids[i]);
	c->count = m;
	bw_free(h);
	install(s, c);
	return 0;
}

int burrow_store_cache_degree(burrow_store *s, const burrow_csr *g, size_t bytes)
{
	if (!g || g->num_nodes != s->info.num_rows)
		return bw_err(BURROW_E_INVAL, "%s: the graph for the degree cache has %lld nodes, the file %lld rows", s->path,
			      g ? (long long)g->num_nodes : -1LL, (long long)s->info.num_rows);
	return cache_static(s, degree_key, g, bytes);
}

int burrow_store_cache_profile(burrow_store *s, const uint64_t *counts, int64_t n, size_t bytes)
{
	if (!counts || n != s->info.num_rows)
		return bw_err(BURROW_E_INVAL, "%s: the cache profile has %lld counts, the file %lld rows", s->path,
			      (long long)n, (long long)s->info.num_rows);
	return cache_static(s, profile_key, counts, bytes);
}
