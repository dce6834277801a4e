/* csr_internal.h: streaming a finished CSR out of the builder (the writer uses it so that
 * a build that spilled to disk never holds the whole graph in memory). */
#ifndef BURROW_CSR_INTERNAL_H
#define BURROW_CSR_INTERNAL_H

#include "../core/internal.h"

/* Receives a CSR in order: indptr[0 .. N] in slices, and the indices of rows 0, 1, ...
 * in slices; the two streams interleave. Each callback returns 0 or a status. */
typedef struct bw_csr_sink {
	int (*indptr)(void *user, const int64_t *offs, size_t n); /* [n] borrowed for the call */
	int (*indices)(void *user, const void *ids, size_t n);   /* [n] ids of the CSR's width */
	void *user;
	/* with opts.edge_ids: [n] the input edge of each entry, in the order of the indices (the
	 * two streams interleave); NULL: not wanted */
	int (*edge_ids)(void *user, const int64_t *eids, size_t n);
} bw_csr_sink;

/* Finish b into sink. When b spilled, this merges the runs from disk in bounded
 * memory; the bytes are the same as burrow_csr_builder_finish would give. Sets
 * *num_edges (the CSR's entries) and *width (4 or 8). No arrays stay in b afterwards. */
int bw_csr_builder_stream(burrow_csr_builder *b, const bw_csr_sink *sink, int64_t *num_edges, int *width);

/* An upper bound on the entries the CSR will have (what was added, doubled when
 * symmetrizing), for sizing an output before the exact count is known. */
int64_t bw_csr_builder_max_entries(const burrow_csr_builder *b);

/* Does b record each entry's input edge (opts.edge_ids)? */
bool bw_csr_builder_has_edge_ids(const burrow_csr_builder *b);

/* The builder's node count N. */
int64_t bw_csr_builder_nodes(const burrow_csr_builder *b);

/* Sorted runs written to disk so far (0 when everything fit in memory). */
int bw_csr_builder_runs(const burrow_csr_builder *b);

/* Test hook: use two-word keys (the layout for graphs past 2^32 nodes) on a small graph.
 * Call right after open. */
void bw_csr_builder_force_wide_keys(burrow_csr_builder *b);

/* burrow_csr_check in one parallel pass over the ids; with `symmetric` non-NULL it also
 * sets *symmetric to whether the entries equal their reverses as a multiset (hashed: a
 * false "true" has probability about 2^-64). Messages begin with `offs` for a fault of the
 * offsets, `ids` for one of the ids (the files' names, or "csr"). drop_pages: g's ids
 * are a read-only file mapping whose pages each piece unmaps once scanned
 * (madvise(MADV_DONTNEED)), so the scan's resident set stays a few pieces, not the file;
 * never on memory of the caller's own (it would zero it). */
int bw_csr_scan(const burrow_csr *g, bool unique, bool *symmetric, const char *offs, const char *ids,
		bool drop_pages);
/* bw_csr_scan of a rectangular CSR (a typed relation): g->num_nodes rows whose ids lie in
 * [0, num_ids), without the symmetry test. */
int bw_csr_scan_rect(const burrow_csr *g, int64_t num_ids, bool unique, const char *offs, const char *ids,
		     bool drop_pages);

#endif /* BURROW_CSR_INTERNAL_H */
