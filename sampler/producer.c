/* producer.c: the loader's producers over a sampler: an epoch's batches, or batches over
 * lists of seeds (sampled evaluation). */
#include "producer.h"
#include "sampler_internal.h"

static int epoch_next(void *ctx, int64_t k, burrow_batch **out)
{
	int st = burrow_sampler_next(ctx, out);
	if (st == BURROW_DONE)
		return bw_err(BURROW_E_INVAL, "sampler: the epoch ended before its batch %lld", (long long)k + 1);
	return st;
}

static void sampler_release(void *ctx, burrow_batch *b) { burrow_sampler_release(ctx, b); }

void bw_producer_epoch(bw_producer *p, burrow_sampler *s)
{
	*p = (bw_producer){.next = epoch_next, .release = sampler_release, .ctx = s};
}

static int64_t batches_of(const bw_seed_batches *sb, int i)
{
	return sb->ids[i] && sb->n[i] > 0 ? (sb->n[i] + sb->batch - 1) / sb->batch : 0;
}

void bw_seed_batch_at(const bw_seed_batches *sb, int64_t k, int *list, int64_t *first, int64_t *count)
{
	int i = 0;
	for (int64_t c; i < 2 && k >= (c = batches_of(sb, i)); i++)
		k -= c;
	*list = i;
	*first = k * sb->batch;
	*count = BW_MIN(sb->batch, sb->n[i] - *first);
}

static int seeds_next(void *ctx, int64_t k, burrow_batch **out)
{
	const bw_seed_batches *sb = ctx;
	if (k < 0 || k >= sb->count)
		return bw_err(BURROW_E_INVAL, "sampler: no batch %lld of %lld", (long long)k, (long long)sb->count);
	int i;
	int64_t first, count;
	bw_seed_batch_at(sb, k, &i, &first, &count);
	return burrow_sampler_sample(sb->s, sb->ids[i] + first, count, ((uint64_t)i << 48) ^ (uint64_t)first, out);
}

static void seeds_release(void *ctx, burrow_batch *b)
{
	const bw_seed_batches *sb = ctx;
	burrow_sampler_release(sb->s, b);
}

void bw_producer_seeds(bw_producer *p, bw_seed_batches *sb, burrow_sampler *s, const int64_t *const ids[3],
		       const int64_t n[3], int64_t batch)
{
	*sb = (bw_seed_batches){.s = s, .batch = batch};
	for (int i = 0; i < 3; i++) {
		sb->ids[i] = ids[i];
		sb->n[i] = ids[i] ? n[i] : 0;
		sb->count += batches_of(sb, i);
	}
	*p = (bw_producer){.next = seeds_next, .release = seeds_release, .ctx = sb};
}

static int typed_epoch_next(void *ctx, int64_t k, burrow_typed_batch **out)
{
	bw_typed_epoch *te = ctx;
	return burrow_typed_sampler_batch(te->s, te->epoch, k, out);
}

static void typed_epoch_release(void *ctx, burrow_typed_batch *b)
{
	bw_typed_epoch *te = ctx;
	burrow_typed_sampler_release(te->s, b);
}

void bw_producer_typed_epoch(bw_producer *p, bw_typed_epoch *te, burrow_typed_sampler *s, int64_t epoch)
{
	*te = (bw_typed_epoch){.s = s, .epoch = epoch};
	*p = (bw_producer){.next_typed = typed_epoch_next, .release_typed = typed_epoch_release, .ctx = te};
}

static int typed_seeds_next(void *ctx, int64_t k, burrow_typed_batch **out)
{
	const bw_typed_seed_batches *tb = ctx;
	const bw_seed_batches *sb = &tb->at;
	if (k < 0 || k >= sb->count)
		return bw_err(BURROW_E_INVAL, "sampler: no batch %lld of %lld", (long long)k, (long long)sb->count);
	int i;
	int64_t first, count;
	bw_seed_batch_at(sb, k, &i, &first, &count);
	return burrow_typed_sampler_sample(tb->s, sb->ids[i] + first, count, ((uint64_t)i << 48) ^ (uint64_t)first,
					   out);
}

static void typed_seeds_release(void *ctx, burrow_typed_batch *b)
{
	const bw_typed_seed_batches *tb = ctx;
	burrow_typed_sampler_release(tb->s, b);
}

void bw_producer_typed_seeds(bw_producer *p, bw_typed_seed_batches *tb, burrow_typed_sampler *s,
			     const int64_t *const ids[3], const int64_t n[3], int64_t batch)
{
	bw_producer inner;
	tb->s = s;
	bw_producer_seeds(&inner, &tb->at, NULL, ids, n, batch);
	*p = (bw_producer){.next_typed = typed_seeds_next, .release_typed = typed_seeds_release, .ctx = tb};
}

static int edge_epoch_next(void *ctx, int64_t k, burrow_batch **out)
{
	bw_edge_epoch *ee = ctx;
	burrow_edge_batch *eb;
	int st = burrow_edge_sampler_batch(ee->s, ee->epoch, k, &eb);
	*out = st ? NULL : (burrow_batch *)eb->nodes;
	return st;
}

static void edge_epoch_release(void *ctx, burrow_batch *b)
{
	bw_edge_epoch *ee = ctx;
	if (b)
		burrow_edge_sampler_release(ee->s, (burrow_edge_batch *)bw_edge_batch_of(b));
}

void bw_producer_edge_epoch(bw_producer *p, bw_edge_epoch *ee, burrow_edge_sampler *s, int64_t epoch)
{
	*ee = (bw_edge_epoch){.s = s, .epoch = epoch};
	*p = (bw_producer){.next = edge_epoch_next, .release = edge_epoch_release, .ctx = ee};
}
