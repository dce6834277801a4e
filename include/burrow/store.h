/* burrow/store.h: the feature store: rows of features.npy gathered with io_uring, and its cache. */
#ifndef BURROW_STORE_PUBLIC_H
#define BURROW_STORE_PUBLIC_H

#include "core.h"
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- feature store */

/* Gathers rows of a features.npy ([N, D], float32 or float16) into caller memory, in the
 * caller's order, without going through the page cache: ids are sorted and de-duplicated,
 * each row is read as the device blocks that cover it (rows need not be aligned), rows
 * sharing a block are read once, adjacent blocks merge into one read up to a size limit,
 * and many reads stay in flight (io_uring, O_DIRECT). Hot rows can be served from a cache
 * with a byte budget. docs/store.md describes the engines, the cache and the memory bound.
 *
 * Threads: submit, wait, poll, gather and the stats calls may be made from any thread, also
 * concurrently; the cache_* calls and close must not overlap any other call on the store.
 * Each ticket is completed exactly once (by wait, or by poll returning non-zero).
 *
 *     burrow_store *s;
 *     if (burrow_store_open(&s, "data/csbm/features.npy", NULL) < 0) return fail();
 *     burrow_store_ticket *t;
 *     burrow_store_submit(s, next_ids, n, next_rows, &t);   // reads run while we compute
 *     train_on(cur_rows);
 *     if (burrow_store_wait(s, t) < 0) return fail();      // next_rows now holds the rows
 *     burrow_store_close(s);
 */
typedef struct burrow_store burrow_store;
typedef struct burrow_store_ticket burrow_store_ticket;

enum burrow_store_engine {
	BURROW_STORE_URING = 0, /* io_uring, O_DIRECT, registered buffers and file (default) */
	BURROW_STORE_PREAD = 1, /* a pool of threads doing blocking pread (O_DIRECT too) */
	BURROW_STORE_MMAP = 2,  /* copies out of a read-only mapping: page faults, the baseline */
};

typedef struct burrow_store_opts {
	size_t size;            /* sizeof(burrow_store_opts), set by burrow_store_defaults(); first */
	int engine;             /* enum burrow_store_engine (default URING; when io_uring cannot be
				   set up the store uses PREAD and logs one warning) */
	int queue_depth;        /* reads in flight, all threads together (default 128) */
	int threads;            /* worker threads; 0 = the engine's default: URING and MMAP 2,
				   PREAD min(queue_depth, 32) (a PREAD thread has one read in flight) */
	size_t max_read_bytes;  /* largest merged read in bytes (default 64 KiB); a row longer than
				   this is read in several pieces */
	burrow_dtype out_dtype; /* dtype of gathered rows: INVALID (default) = the file's; F32 or F16
				   convert a float16 file to float32 or a float32 file to float16 */
	bool direct;            /* O_DIRECT (default true); a file system that refuses it gets
				   buffered reads and one warning */
	bool mmap_random;       /* MMAP only: madvise(MADV_RANDOM), one page per fault; default false
				   keeps the kernel's readahead around each fault, as NumPy memmap has */
} burrow_store_opts;

/* Fill o with the defaults above. */
BURROW_API void burrow_store_defaults(burrow_store_opts *o);

/* Open a 2-D .npy file (any element type; conversion only between float16 and float32) and
 * start the engine's threads. */
BURROW_API int burrow_store_open(burrow_store **out,            /* out: caller closes */
				 const char *path,              /* the features.npy, borrowed */
				 const burrow_store_opts *opts); /* borrowed; NULL = defaults */
/* Open node type `type`'s features of a typed dataset where they are: its features/<type>.npy,
 * an .npy read in place, or a raw file without an .npy header (IGB large's and full's
 * node_feat.npy; docs/format.md, "Features read in place"), which burrow_store_open cannot open. */
BURROW_API int burrow_store_open_type(burrow_store **out,             /* out: caller closes */
				      const burrow_dataset *ds,       /* borrowed, open while the store is */
				      int type,                       /* [0, num_types) */
				      const burrow_store_opts *opts); /* borrowed; NULL = defaults */
/* Wait for every ticket still in flight, release them, stop the threads, free s (NULL is fine). */
BURROW_API void burrow_store_close(burrow_store *s);

/* What a store reads and how. */
typedef struct burrow_store_info {
	const char *path;         /* the file */
	int64_t num_rows;         /* N */
	int64_t dim;              /* D, elements per row */
	burrow_dtype file_dtype;  /* element type in the file */
	burrow_dtype out_dtype;   /* element type of gathered rows */
	size_t row_bytes;         /* bytes of one row in the file */
	size_t out_row_bytes;     /* bytes of one gathered row */
	int64_t data_offset;      /* byte offset of row 0 in the file */
	int engine;               /* the engine in use, after any fallback */
	bool direct;              /* O_DIRECT in use */
	size_t block_bytes;       /* read alignment: offsets and lengths are multiples of it */
	int threads;              /* worker threads */
	int queue_depth;          /* reads in flight at most */
	size_t max_read_bytes;    /* largest read, a multiple of block_bytes */
	size_t staging_bytes;     /* bytes of the aligned staging buffers reads land in */
	int cache_fill;           /* how the last static cache fill read the file: enum
				     burrow_cache_fill (NONE before any) */
	uint64_t cache_fill_bytes; /* bytes that fill asked of the file */
	double cache_fill_seconds; /* its wall time */
	size_t cache_row_bytes;   /* bytes of one cached row: the file's row when a float16 file is
				     gathered as float32 (rows cached as stored, twice as many in a
				     budget, converted on a hit: exact), else out_row_bytes */
} burrow_store_info;
/* How a static cache is filled: RANDOM = the engine's row reads (merged where rows share
 * blocks); SEQUENTIAL = one pass over the file's span in large reads, chosen when the cache
 * holds at least half the rows (the disk streams faster than it seeks, and readahead would
 * read those blocks anyway). The rows are the same bytes either way. */
enum burrow_cache_fill { BURROW_FILL_NONE = 0, BURROW_FILL_RANDOM = 1, BURROW_FILL_SEQUENTIAL = 2 };
/* What the store reads and how (borrowed, valid until close). */
BURROW_API const burrow_store_info *burrow_store_get_info(const burrow_store *s);
/* Engine name ("uring", "pread", "mmap"); NULL when unknown. */
BURROW_API const char *burrow_store_engine_name(int engine);
/* Parse an engine name; -1 when unknown. */
BURROW_API int burrow_store_engine_parse(const char *name);

/* Gather rows: row i of out becomes row ids[i] of the file; blocks until done. An id outside
 * [0, N) is BURROW_E_RANGE naming it, before anything is read. On any error out's contents
 * are unspecified and the store stays usable. */
BURROW_API int burrow_store_gather(burrow_store *s,
				   const int64_t *ids, /* [n] row ids, any order, repeats allowed; borrowed */
				   size_t n,           /* rows to gather, < 2^32 */
				   void *out);         /* [n, D] of out_dtype, caller memory */
/* Start a gather and return at once; the reads run on the store's threads. ids are copied
 * before the call returns; out must stay valid, and must not be read or written, until the
 * ticket completes. Tickets are independent: any number may be in flight. */
BURROW_API int burrow_store_submit(burrow_store *s,
				   const int64_t *ids,            /* [n], borrowed for the call */
				   size_t n,
				   void *out,                     /* [n, D] of out_dtype, caller memory */
				   burrow_store_ticket **ticket); /* out: complete with wait or poll */
/* Block until the ticket's reads are done and release it: 0 when out holds the rows, < 0
 * (BURROW_E_IO, ...) when it does not. No read touches out after this returns. */
BURROW_API int burrow_store_wait(burrow_store *s, burrow_store_ticket *ticket /* taken */);
/* Without blocking: 0 while in flight (the ticket stays valid); otherwise the ticket is
 * released and the result is BURROW_DONE when out holds the rows, < 0 when it does not. */
BURROW_API int burrow_store_poll(burrow_store *s, burrow_store_ticket *ticket);

/* Counters since open or the last reset. Ids count once per requested position. */
typedef struct burrow_store_stats {
	size_t size;            /* set by the caller: sizeof(burrow_store_stats); the library writes at most this */
	uint64_t gathers;         /* gathers submitted */
	uint64_t rows;            /* ids requested */
	uint64_t cache_hits;      /* ids served from the cache */
	uint64_t cache_misses;    /* ids that went to the file (cache_hits + cache_misses = rows) */
	uint64_t rows_read;       /* distinct rows read from the file */
	uint64_t reads;           /* read requests completed */
	uint64_t bytes_read;      /* bytes those requests asked for (whole blocks) */
	uint64_t read_errors;     /* requests that failed or came back short */
	double read_p50_us;       /* read latency, issue until its rows are in caller memory */
	double read_p99_us;
	uint64_t cache_rows;      /* rows the cache holds now */
	uint64_t cache_capacity;  /* rows it can hold */
	uint64_t cache_bytes;     /* bytes it takes, counted by the allocator (<= its budget) */
	uint64_t pages_read;      /* 4 KiB pages of the file the read requests covered, a page counted
				     once per gather (a static cache fill: once per read) */
} burrow_store_stats;
/* The counters now (a snapshot; safe while gathers run). */
BURROW_API void burrow_store_get_stats(const burrow_store *s, burrow_store_stats *st /* out */);
/* Zero the counters (not the cache's contents). */
BURROW_API void burrow_store_reset_stats(burrow_store *s);

/* The cache: each call replaces the one before; none may be made while tickets are in flight
 * (BURROW_E_INVAL). The budget covers rows (info.cache_row_bytes each) and the index; rows that
 * do not fit are left out. A static cache is filled now, with the store's own reads. */
/* PROFILE is for training (burrow_train_opts.cache_policy): static, the rows most often among
 * the input nodes of pre-sampled batches (burrow_store_cache_profile with their counts). */
enum burrow_cache_policy { BURROW_CACHE_NONE = 0, BURROW_CACHE_STATIC = 1, BURROW_CACHE_CLOCK = 2, BURROW_CACHE_PROFILE = 3 };
/* Static: the rows of highest degree in g (ties to the lower id; degree 0 never cached). */
BURROW_API int burrow_store_cache_degree(burrow_store *s,
					 const burrow_csr *g, /* g->num_nodes == N, borrowed */
					 size_t bytes);       /* budget */
/* Static: the rows most often seen in a profile, e.g. counts from a pre-sampling pass
 * (ties to the lower id; count 0 never cached). */
BURROW_API int burrow_store_cache_profile(burrow_store *s,
					  const uint64_t *counts, /* [n] times each row was seen, borrowed */
					  int64_t n,              /* == N */
					  size_t bytes);          /* budget */
/* Dynamic: CLOCK (second chance). Rows read for a gather are inserted, in id order, when it
 * completes, with their bit clear; a hit sets the bit; the hand clears bits until it finds a
 * clear one, which it evicts. */
BURROW_API int burrow_store_cache_clock(burrow_store *s, size_t bytes /* budget */);
/* Drop the cache and free its memory. */
BURROW_API int burrow_store_cache_drop(burrow_store *s);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_STORE_PUBLIC_H */
