/* edgefeat.h: edge feature rows as prep and import read them (an .npy mapped, or CSV text
 * parsed into memory), and their way into a dataset writer. */
#ifndef BURROW_EDGEFEAT_H
#define BURROW_EDGEFEAT_H

#include "dsio.h"

/* Rows [m, dim] of one input edge each, in the edges' input order. */
typedef struct bw_edge_rows {
	const void *rows;       /* [m, dim] of dtype: the mapping's or `owned` */
	int64_t m, dim;
	burrow_dtype dtype;     /* F32 or F16 */
	void *owned;            /* parsed text rows, owned; NULL when mapped */
	bw_npy_map map;
} bw_edge_rows;

/* An .npy [M] (weights: dim 1) or [M, De] of float32, float16 or float64 (converted to float32). */
int bw_edge_rows_npy(const char *path, bw_edge_rows *r);
/* Text: one edge's values a line, separated by `sep` (0: blanks, tabs or commas), gzip when
 * `gunzip`; every line with the first line's count of columns. Converted to `dtype`. */
int bw_edge_rows_csv(const bw_src *src, bool gunzip, char sep, burrow_dtype dtype, bw_edge_rows *r,
		     burrow_progress_fn fn, void *user);
/* A path of either kind: ".npy" by its name, else text (gzip by its magic). */
int bw_edge_rows_load(const char *path, burrow_dtype dtype, bw_edge_rows *r, burrow_progress_fn fn, void *user);
/* Write r as w's edge features (its graph from a builder with edge ids: r has one row per
 * edge added, `edges`, checked), then, when `from_edges`, features.npy reduced from them. */
int bw_edge_rows_put(burrow_writer *w, const bw_edge_rows *r, int64_t edges, const char *name, bool from_edges,
		     burrow_edge_reduce reduce);
void bw_edge_rows_free(bw_edge_rows *r);

#endif
