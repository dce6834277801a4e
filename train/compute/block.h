/* block.h: message-flow-graph blocks (one layer's CSR from destination rows to source
 * columns in local ids), what is derived from them (transpose, GCN norms, the early / late
 * split) and their copies in a device's memory. */
#ifndef BURROW_BLOCK_H
#define BURROW_BLOCK_H

#include "../../device/device.h"

#include <stdbool.h>
#include <stdint.h>

/* Which edges of a block an aggregation reads. With a split s (bw_block_split) the early
 * part of row i is its sources below s, the late part the others; each is a CSR over the
 * block's rows, what a GPU runs as two SpMMs around a halo exchange. */
typedef enum bw_block_part { BW_PART_ALL = 0, BW_PART_EARLY = 1, BW_PART_LATE = 2 } bw_block_part;

/* A block's arrays in the memory of a device, as the kernels read them. On a host-memory
 * device they are the host arrays themselves (borrowed); elsewhere owned copies. */
typedef struct bw_block_dev {
	const bw_device *dev;        /* NULL until bw_block_upload */
	const int64_t *indptr;       /* [num_dst + 1] */
	const int32_t *indices;      /* [edges] */
	const int64_t *t_indptr;     /* [num_src + 1] the transpose (when prepared) */
	const int32_t *t_indices;
	const float *dst_norm;       /* [num_dst] (GCN) */
	const float *src_norm;       /* [num_src] */
	const int64_t *part_indptr[3];   /* [num_dst + 1] per part; [BW_PART_ALL] = indptr */
	const int32_t *part_indices[3];
	const float *edge_weight;    /* [edges] (weighted aggregation), host memory only: the host arrays */
	const float *t_weight;       /* [edges] in the transpose's order */
	bw_dbuf buf[10];             /* owned copies on a non-host device */
	bool has_transpose, has_norms, has_split;
} bw_block_dev;

/* One layer's message-flow graph, a CSR from destination rows to source columns in local
 * ids (DGL's convention): the destination nodes are the first num_dst source nodes, so
 * h_dst is rows [0, num_dst) of the layer's input. A full graph is the block with
 * num_dst = num_src = N. The sampler's blocks and the evaluation chunks have this shape.
 * The host arrays are built here; bw_block_upload puts what the kernels read on a device. */
typedef struct bw_block {
	int64_t num_dst, num_src;
	const int64_t *indptr;  /* [num_dst + 1], borrowed host memory: row i's sources are indices[indptr[i] .. indptr[i+1]) */
	const int32_t *indices; /* local source ids in [0, num_src), borrowed host memory */
	/* GCN normalization 1/sqrt(deg + 1) per node (a self loop added), host memory; set
	 * them (borrowed) before bw_block_prepare to use degrees from outside the block (the
	 * whole graph's), else prepare computes them from the block. */
	const float *dst_norm;  /* [num_dst] */
	const float *src_norm;  /* [num_src] */
	/* A typed (relational) block: its destinations are nodes of another list than its
	 * sources, not their first rows, so num_dst may exceed num_src, and attention adds no
	 * self loop (its slots are its edges, PyG's add_self_loops=False). GCN aggregation,
	 * whose self term reads source i for destination i, refuses it. Set after init. */
	bool bipartite;
	/* Edge weights (--edge-weight): w_e per edge, indexed as indices is (borrowed host memory;
	 * NULL: unweighted). Read by the weighted aggregation (bw_aggregate_weighted) and, when
	 * set before bw_block_prepare computes GCN norms, by them (weighted degrees). Set after
	 * init. */
	const float *edge_weight;
	float *t_weight;        /* [num_edges] the weights in the transpose's order (bw_block_prepare), owned */
	/* Edge features (GAT's edge term): row e (edge_feat_dim floats) belongs to the edge at
	 * indices[e], indexed as indices is (borrowed host memory; NULL: none). Read by GAT layers
	 * built with an edge dimension, on a host-memory device. Set after init. */
	const float *edge_feat;
	int64_t edge_feat_dim;
	/* derived by bw_block_prepare and bw_block_split (owned host memory) */
	int64_t *t_indptr;      /* [num_src + 1]: the transpose, source -> destination rows */
	int32_t *t_indices;     /* [num_edges] destination rows, ascending within each source */
	float *norm_buf;        /* storage of computed norms */
	int64_t split;          /* the sources [split, num_src) form the late part; 0: no split */
	int64_t *part_indptr[2];   /* [num_dst + 1] early, late (BW_PART_EARLY - 1, BW_PART_LATE - 1) */
	int32_t *part_indices[2];
	/* on a device */
	bw_block_dev d;
} bw_block;

/* A block over caller arrays (borrowed); nothing derived yet. */
void bw_block_init(bw_block *b, int64_t num_dst, int64_t num_src, const int64_t *indptr, const int32_t *indices);
/* Full structural check: offsets monotone, ids in [0, num_src), num_dst <= num_src (any
 * num_dst for a bipartite block). */
int bw_block_check(const bw_block *b);
/* Edges of the block. */
static inline int64_t bw_block_edges(const bw_block *b) { return b->indptr[b->num_dst] - b->indptr[0]; }
/* Attention slots of the block: its edges plus one self loop per destination row, or its
 * edges alone for a bipartite block (bw_ops). */
static inline int64_t bw_block_slots(const bw_block *b) { return bw_block_edges(b) + (b->bipartite ? 0 : b->num_dst); }
/* Build the transpose (for backward passes) and, when `gcn` and no norms were set, the GCN
 * norms from the block: dst i and src j < num_dst use row i's length + 1; a source that is
 * not a destination uses the number of rows it appears in + 1. Idempotent. */
int bw_block_prepare(bw_block *b, bool transpose, bool gcn);
/* Split every row's sources at `split` (in [num_dst, num_src]) into an early and a late
 * CSR, each keeping the row's order (a stable partition): the overlap plan of a halo
 * exchange, where rows [split, num_src) of the input arrive late. */
int bw_block_split(bw_block *b, int64_t split);
/* Put what the kernels read (the CSR, and what prepare and split derived) in dev's memory:
 * nothing is copied on a host-memory device. Call after the last prepare / split; again
 * after new derivations. */
int bw_block_upload(bw_block *b, const bw_device *dev);
/* The same with the copies queued on stream s: the host arrays must stay unchanged until s
 * has done them (an event recorded after this call marks that). */
int bw_block_upload_async(bw_block *b, const bw_device *dev, bw_stream *s);
/* Free what prepare, split and upload made; the borrowed arrays are left alone. */
void bw_block_release(bw_block *b);
/* b (zeroed, or a block used before) over new arrays, as bw_block_init, keeping the device
 * buffers of its last upload for the next one to the same device: reusing a block then
 * costs no cudaFree, which would wait for the whole device. bw_block_release frees them. */
void bw_block_reuse(bw_block *b, int64_t num_dst, int64_t num_src, const int64_t *indptr, const int32_t *indices);
/* GCN norms from the whole graph's degrees: out[k] = 1/sqrt(deg(ids[k]) + 1), where deg is
 * g's row length (ids NULL: k itself); host memory. */
void bw_gcn_norm_from_csr(const burrow_csr *g, const int64_t *ids, int64_t n, float *out, int threads);

#endif /* BURROW_BLOCK_H */
