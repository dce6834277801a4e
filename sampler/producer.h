/* producer.h: the batch loader's producers (train/driver/loader.h): what fills a loader's
 * slot with a sampled batch. A producer hands out batch k of a sequence, k = 0, 1, ... in
 * order, and takes each back; a new kind of batch (blocks per relation, edge batches with
 * negatives) is a new producer and a new batch layout, never a new pipeline. */
#ifndef BURROW_PRODUCER_H
#define BURROW_PRODUCER_H

#include "../core/internal.h"

typedef struct bw_producer {
	/* batch k of the sequence into *out (held until release); called with k = 0, 1, ...
	 * in order, from one thread at a time */
	int (*next)(void *ctx, int64_t k, burrow_batch **out);
	/* hand a batch back; NULL is fine */
	void (*release)(void *ctx, burrow_batch *b);
	/* a producer of typed batches sets these two instead of the two above */
	int (*next_typed)(void *ctx, int64_t k, burrow_typed_batch **out);
	void (*release_typed)(void *ctx, burrow_typed_batch *b);
	void *ctx;     /* the producer's own (borrowed) */
} bw_producer;

/* The batches of an epoch of s, started with burrow_sampler_start (borrowed), in order. */
void bw_producer_epoch(bw_producer *p, burrow_sampler *s);

/* Batches over up to three lists of seeds (evaluation's splits): list by list, `batch`
 * seeds at a time, the last batch of a list short; empty or NULL lists have none. Batch
 * (list, first) is sampled in the calling thread with the key (list << 48) ^ first, so
 * it depends on neither threads nor order. */
typedef struct bw_seed_batches {
	burrow_sampler *s;          /* borrowed */
	const int64_t *ids[3];      /* [n[i]] borrowed */
	int64_t n[3];
	int64_t batch;              /* seeds per batch, >= 1 */
	int64_t count;              /* batches in all */
} bw_seed_batches;

/* Set sb over the lists (ids[i] NULL or n[i] 0: none) and p over sb (borrowed). */
void bw_producer_seeds(bw_producer *p, bw_seed_batches *sb, burrow_sampler *s, const int64_t *const ids[3],
		       const int64_t n[3], int64_t batch);
/* Where batch k of sb lies: its list, first seed's position and seed count. */
void bw_seed_batch_at(const bw_seed_batches *sb, int64_t k, int *list, int64_t *first, int64_t *count);

/* The batches of epoch `epoch` of a typed sampler (borrowed), in order: batch k is
 * burrow_typed_sampler_batch(s, epoch, k), sampled in the loader's thread. */
typedef struct bw_typed_epoch {
	burrow_typed_sampler *s;
	int64_t epoch;
} bw_typed_epoch;
void bw_producer_typed_epoch(bw_producer *p, bw_typed_epoch *te, burrow_typed_sampler *s, int64_t epoch);

/* Typed batches over up to three lists of target seeds (evaluation's splits), as
 * bw_producer_seeds: batch (list, first) keyed by (list << 48) ^ first. */
typedef struct bw_typed_seed_batches {
	burrow_typed_sampler *s;    /* borrowed */
	bw_seed_batches at;         /* the lists and the batch positions (its s unused) */
} bw_typed_seed_batches;
void bw_producer_typed_seeds(bw_producer *p, bw_typed_seed_batches *tb, burrow_typed_sampler *s,
			     const int64_t *const ids[3], const int64_t n[3], int64_t batch);

/* The edge batches of epoch `epoch` of an edge sampler (borrowed), in order: batch k is
 * burrow_edge_sampler_batch(s, epoch, k), sampled in the loader's thread; the loader holds
 * its node batch (edge->nodes), and bw_edge_batch_of gives the edge batch back. */
typedef struct bw_edge_epoch {
	burrow_edge_sampler *s;
	int64_t epoch;
} bw_edge_epoch;
void bw_producer_edge_epoch(bw_producer *p, bw_edge_epoch *ee, burrow_edge_sampler *s, int64_t epoch);

#endif /* BURROW_PRODUCER_H */
