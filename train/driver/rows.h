/* rows.h: sources of rows by id (rows.c): the features (the feature store, or in memory in
 * full-graph mode) or a layer's embeddings (in memory, or spilled to a scratch npy file).
 * Every gather of the driver goes through one: a new source (per-type stores, a remote
 * fetch) is one implementation, not a new code path. */
#ifndef BURROW_ROWS_H
#define BURROW_ROWS_H

#include "../../core/internal.h"

/* Where a submitted read puts what it brings (bw_rows.submit); each stays untouched by the
 * caller until the wait. */
typedef struct bw_rows_dst {
	float *x;            /* [n, dim] host memory: the rows (a source with on_device: what it
				reads on the host, its scratch) */
	float *norm;         /* [n] the rows' GCN norms, for a source with norms; else NULL */
	float *dev_x;        /* [n, dim] memory of the device the source computes on, for a source
				with on_device: the rows in order; else NULL */
} bw_rows_dst;

/* A source of rows by id (spilled embeddings are read with pread). */
typedef struct bw_rows {
	int64_t num_rows, dim;
	const float *mem;    /* [num_rows, dim] when all rows are in memory as float32, else NULL */
	/* out [n, dim] = rows ids[0 .. n); ids need not be sorted or unique */
	int (*gather)(struct bw_rows *r, const int64_t *ids, int64_t n, float *out);
	/* where rows are read from disk or another rank (the store, a remote fetch): start the
	 * read of rows ids[0 .. n) into dst (ids are copied), and wait for it (wait takes the
	 * ticket, once per submit that succeeded); NULL where gather is a copy */
	int (*submit)(struct bw_rows *r, const int64_t *ids, int64_t n, const bw_rows_dst *dst, void **ticket);
	int (*wait)(struct bw_rows *r, void *ticket);
	/* optional (NULL: nothing to drive): progress a read in flight without blocking (an
	 * exchange with other ranks that moves only while someone tests it) */
	int (*poll)(struct bw_rows *r, void *ticket);
	/* a source with submit may bring more than host rows (the store brings neither):
	 * norms: each read brings its rows' GCN norms too, into dst.norm (a remote fetch: those
	 * of other ranks' nodes arrive with their rows), complete at the wait;
	 * on_device: the wait puts the rows, in order, into dst.dev_x, with the work queued on
	 * the caller's compute stream (rows that arrive in device memory), and runs on the
	 * caller's thread */
	bool norms, on_device;
	/* the loader submits a typed batch's rows of this source even when there are none (a
	 * remote fetch: collective, every rank joins it) */
	bool collective;
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
/* Rows of inner (borrowed: it must outlive r), each divided by its sum, a row summing to 0
 * left as it is (opts.normalize_features), in gathers and submitted reads alike. A source that
 * puts its rows on the device (on_device) is BURROW_E_UNSUPPORTED. */
int bw_rows_normalized(bw_rows *r, bw_rows *inner);
/* Divide each of the n rows of x [n, dim] by its sum (in double), a row summing to 0 left as
 * it is (habits.c). */
void bw_normalize_rows(float *x, int64_t n, int64_t dim, int threads);

#endif /* BURROW_ROWS_H */
