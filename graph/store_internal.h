/* store_internal.h: the feature store's insides shared by its files: plan, tickets, workers,
 * engines (store_uring.c, store_pread.c, store_mmap.c), cache (store_cache.c), test hooks. */
#ifndef BURROW_STORE_INTERNAL_H
#define BURROW_STORE_INTERNAL_H

#include "../core/internal.h"
#include "store_sizing.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

/* ------------------------------------------------------------ test hooks */

/* Called with every read's result before its rows are copied out (all engines): off and len
 * are the request, need the bytes its rows need, res what the read returned (bytes, or
 * -errno). Returns the result the store should see. Called from worker threads. */
typedef int64_t (*bw_store_fault_fn)(int64_t off, size_t len, size_t need, int64_t res);
extern bw_store_fault_fn bw_store_fault_hook;
/* When set, io_uring setup fails as if the kernel refused it (tests the pread fallback). */
extern bool bw_store_uring_refuse;

/* ------------------------------------------------------------ plan */

/* One id to fetch from the file and the output position it goes to. */
typedef struct bw_pair {
	int64_t id;
	uint32_t pos;
	uint32_t pad;
} bw_pair;

/* One read request: block-aligned [off, off + len); rows uniq[first .. first + nrows). */
typedef struct bw_read {
	int64_t off;
	uint32_t len;
	uint32_t need;  /* bytes from off its rows need: a shorter result is an error */
	uint32_t first;
	uint32_t nrows;
} bw_read;

struct burrow_store_ticket {
	burrow_store *s;
	char *out;            /* caller memory, [n, orb] */
	size_t n;
	bool internal;        /* a static cache fill: no cache, no request counters */
	int conv;             /* BW_CONV_* from file rows to out's rows */
	size_t orb;           /* bytes of one row of out (out_row_bytes; a fill: cache_row_bytes) */
	bw_pair *pairs;       /* [npairs] misses sorted by id (then position) */
	size_t npairs;
	uint32_t *ustart;     /* [nuniq + 1]: distinct row j is pairs[ustart[j] .. ustart[j+1]) */
	size_t nuniq;
	bw_read *reads;       /* [nreads] */
	size_t nreads;
	size_t next;          /* next read to hand out (under qlock) */
	atomic_size_t remaining; /* reads not yet finished */
	atomic_int status;    /* 0, or the first error */
	char msg[512];        /* the first error's message (written by whoever set status) */
	bool done;            /* every read finished (under qlock) */
	struct burrow_store_ticket *qnext;        /* queue of tickets with reads to hand out */
	struct burrow_store_ticket *lprev, *lnext; /* all live tickets */
};
typedef struct burrow_store_ticket bw_ticket;

/* A read handed to a worker. */
typedef struct bw_ref {
	bw_ticket *t;
	uint32_t ri;
} bw_ref;

/* ------------------------------------------------------------ latency histogram */

#define BW_LAT_BUCKETS 320
typedef struct bw_lat {
	_Atomic uint64_t n[BW_LAT_BUCKETS];
} bw_lat;
void bw_lat_add(bw_lat *h, uint64_t ns);

/* ------------------------------------------------------------ workers and engines */

typedef struct bw_worker {
	burrow_store *s;
	int index;
	pthread_t thread;
	bool running;
	int slots;       /* reads this worker keeps in flight */
	char *stage;     /* [slots * slot_bytes], aligned; NULL for mmap */
	void *engine;    /* engine-private state */
	bw_lat lat;
} bw_worker;

/* An engine: set up a worker (on the opening thread, so failures are seen at open), run its
 * loop on its own thread until the store stops, and tear it down. */
typedef struct bw_engine {
	const char *name;
	int (*init)(bw_worker *w);   /* optional: 0, or a status with bw_err set */
	void *(*run)(void *w);       /* thread body: bw_store_pop until it returns 0 */
	void (*fini)(bw_worker *w);  /* optional; NULL = nothing to free */
} bw_engine;

extern const bw_engine bw_engine_uring, bw_engine_pread, bw_engine_mmap;

typedef struct bw_cache bw_cache;

struct burrow_store {
	burrow_store_info info;
	char *path;
	int fd;
	int64_t file_size;
	const char *map;      /* mmap engine: the whole file */
	size_t map_len;
	int conv;             /* BW_CONV_*: file rows to gathered rows */
	int cache_conv;       /* BW_CONV_*: cached rows to gathered rows (F16_F32 when a float16 file
				 is gathered as float32: the cache holds the rows as stored) */
	size_t slot_bytes;    /* staging bytes per in-flight read (max_read_bytes) */
	size_t mem_align;     /* staging buffer alignment */
	const bw_engine *engine;
	bw_worker *workers;
	int nworkers;

	pthread_mutex_t qlock;
	pthread_cond_t work_cv, done_cv;
	bw_ticket *qhead, *qtail;
	bw_ticket *live;
	bool stop;

	pthread_mutex_t clock; /* the cache */
	bw_cache *cache;

	_Atomic uint64_t gathers, rows, hits, misses, rows_read, reads, bytes_read, read_errors, pages_read;
};

enum { BW_CONV_NONE = 0, BW_CONV_F16_F32 = 1, BW_CONV_F32_F16 = 2 };

/* Hand out up to max reads, oldest ticket first. When block is true and there are none, wait
 * for some. Returns 0 only when the store is stopping (block) or there is nothing (!block). */
size_t bw_store_pop(burrow_store *s, bw_ref *out, size_t max, bool block);
/* A read came back: res bytes (or -errno) of read r are at buf (the bytes at file offset
 * r.off). Checks the result, copies rows out, counts, and finishes the ticket when it was the
 * last read. t0 is when the read was issued (bw_now_ns). */
void bw_store_complete(bw_worker *w, bw_ref r, const char *buf, int64_t res, uint64_t t0);
/* Has the read's ticket already failed? Then the engine skips it with bw_store_complete(w, r,
 * NULL, 0, 0), which only counts it finished. */
static inline bool bw_store_failed(bw_ref r) { return atomic_load_explicit(&r.t->status, memory_order_relaxed) < 0; }

/* ------------------------------------------------------------ cache (store_cache.c) */

struct bw_cache {
	int policy;           /* BURROW_CACHE_STATIC or BURROW_CACHE_CLOCK */
	size_t cap;           /* slots */
	size_t count;         /* slots in use */
	size_t row_bytes;     /* bytes of one cached row (info.cache_row_bytes) */
	uint64_t mask;        /* buckets - 1 */
	int shift;            /* 64 - log2(buckets) */
	int32_t *buckets;     /* [mask + 1] first slot of the chain, -1 when empty */
	int32_t *next;        /* [cap] next slot in the chain, -1 at the end */
	int64_t *ids;         /* [cap] */
	uint8_t *ref;         /* [cap] CLOCK bits */
	char *rows;           /* [cap, row_bytes] */
	size_t hand;          /* CLOCK hand */
	size_t bytes;         /* everything above, as allocated */
};
/* A cache of at most `budget` bytes, all counted; *out = NULL (and 0) when not one row fits. */
int bw_cache_new(bw_cache **out, int policy, size_t budget, size_t row_bytes);
void bw_cache_free(bw_cache *c);
/* The cached row of id (setting its CLOCK bit), or NULL. */
const char *bw_cache_get(bw_cache *c, int64_t id);
/* Make room for id's row (evicting by CLOCK when full) and return the slot's row bytes for
 * the caller to fill; NULL when id is already cached. */
char *bw_cache_put(bw_cache *c, int64_t id);

/* Start a gather; internal = a static cache fill (no cache lookup, no request counters). */
int bw_store_submit(burrow_store *s, const int64_t *ids, size_t n, void *out, bool internal,
		    bw_ticket **ticket);

/* Rows ids[0 .. m) (ascending, distinct, in [0, N)) into out ([m, orb], converted by conv) by one
 * sequential pass over the file from the first row's block to the last row's, in reads of
 * about BW_SEQ_CHUNK bytes, BW_SEQ_THREADS of them in flight (the fault hook sees each);
 * what the static cache fill uses when it holds most rows. */
#define BW_SEQ_CHUNK ((size_t)4 << 20)
#define BW_SEQ_THREADS 4
int bw_store_read_seq(burrow_store *s, const int64_t *ids, size_t m, char *out, int conv, size_t orb);

/* The 4 KiB pages of the file that reads r[0 .. n) cover (offset order, not overlapping), a page
 * shared by two reads counted once. */
#define BW_PAGE_BYTES 4096
uint64_t bw_reads_pages(const bw_read *r, size_t n);

/* Sort pairs by id (stable: positions stay in order), ids in [0, 2^bits). tmp: [n] scratch. */
void bw_pairs_sort(bw_pair *p, bw_pair *tmp, size_t n, int bits);

#endif /* BURROW_STORE_INTERNAL_H */
