/* rows.h: sources of rows by id (rows.c): the features (the feature store, or in memory in
 * full-graph mode) or a layer's embeddings (in memory, or spilled to a scratch npy file).
 * Every gather of the driver goes through one: a new source (per-type stores, a remote
 * fetch) is one implementation, not a new code path. */
#ifndef BURROW_ROWS_H
#define BURROW_ROWS_H

#include "../../core/internal.h"

/* A source of rows by id (spilled embeddings are read with pread). */
typedef struct bw_rows {
	int64_t num_rows, dim;
	const float *mem;    /* [num_rows, dim] when all rows are in memory as float32, else NULL */
	/* out [n, dim] = rows ids[0 .. n); ids need not be sorted or unique */
	int (*gather)(struct bw_rows *r, const int64_t *ids, int64_t n, float *out);
	/* where rows are read from disk (the store): start the gather into out (ids are
	 * copied; out must stay untouched until the wait), and wait for it (wait takes the
	 * ticket, once per submit that succeeded); NULL where gather is a copy */
	int (*submit)(struct bw_rows *r, const int64_t *ids, int64_t n, float *out, void **ticket);
	int (*wait)(struct bw_rows *r, void *ticket);
	void *ctx;
	int threads;         /* OpenMP threads of the copy (in-memory rows) */
} bw_rows;

/* Rows of an in-memory float32 matrix (borrowed), copied out with `threads` threads (0: default). */
void bw_rows_from_memory(bw_rows *r, const float *data, int64_t num_rows, int64_t dim, int threads);
/* Rows of a 2-D float32 or float16 npy file, read with pread on demand (f16 converted). */
int bw_rows_open_npy(bw_rows *r, const char *path);
/* Rows of a feature store opened with out_dtype float32 (borrowed): gathered synchronously,
 * or submitted and waited for. */
void bw_rows_from_store(bw_rows *r, burrow_store *s);
void bw_rows_close(bw_rows *r);

#endif /* BURROW_ROWS_H */
