/* partition_internal.h: what the partitioner's files share: the graph view they stream, the
 * METIS gateway, coarsening, refinement, symmetrization and the parts writer. */
#ifndef BURROW_PARTITION_INTERNAL_H
#define BURROW_PARTITION_INTERNAL_H

#include "../core/internal.h"
#include "../graph/npy.h"

#define BW_MAX_CON 3      /* nodes, train, edges */
#define BW_CHUNK 16384    /* rows per streamed chunk: decided in parallel, applied in order */

/* A graph as the partitioner sees it: symmetric, rows sorted. Level 0 is the dataset's
 * mapped CSR (or a symmetrized copy on disk), streamed in row order with the pages behind
 * the stream released; its rows may hold self-loops and repeats, which every reader
 * skips. Coarse levels live in memory, with edge and vertex weights, and hold neither. */
typedef struct bw_pgraph {
	int64_t n;                     /* nodes */
	int64_t m;                     /* stored entries, indptr[n] */
	const int64_t *indptr;         /* [n+1], borrowed */
	const void *indices;           /* [m] int32 or int64 (width), borrowed */
	int width;                     /* 4 or 8 */
	const int32_t *adjwgt;         /* [m] edge weights, borrowed; NULL = all 1 */
	int ncon;                      /* vertex-weight constraints, 1..BW_MAX_CON */
	int con_kind[BW_MAX_CON];      /* BURROW_BALANCE_* of each constraint */
	const int64_t *vwgt;           /* [n * ncon], borrowed; NULL = level-0 weights below */
	const int64_t *deg_indptr;     /* level 0: the input's indptr (edges constraint) */
	const uint64_t *train_bits;    /* level 0: training nodes as a bitmap (train constraint) */
	bool mapped;                   /* indices are a file mapping: release pages behind */
	bool ptr_mapped;               /* so is indptr (never set for memory of our own: releasing
					* anonymous pages would zero them) */
} bw_pgraph;

static inline int64_t bw_pg_nbr(const bw_pgraph *g, int64_t j)
{
	return g->width == 4 ? (int64_t)((const int32_t *)g->indices)[j] : ((const int64_t *)g->indices)[j];
}

static inline int64_t bw_pg_ewgt(const bw_pgraph *g, int64_t j) { return g->adjwgt ? g->adjwgt[j] : 1; }

static inline bool bw_bit(const uint64_t *bits, int64_t v) { return (bits[v >> 6] >> (v & 63)) & 1; }
static inline void bw_bit_set(uint64_t *bits, int64_t v) { bits[v >> 6] |= (uint64_t)1 << (v & 63); }

/* Weight of vertex v in constraint c. */
static inline int64_t bw_pg_vw(const bw_pgraph *g, int64_t v, int c)
{
	if (g->vwgt)
		return g->vwgt[v * g->ncon + c];
	switch (g->con_kind[c]) {
	case BURROW_BALANCE_TRAIN: return g->train_bits && bw_bit(g->train_bits, v);
	case BURROW_BALANCE_EDGES: return g->deg_indptr[v + 1] - g->deg_indptr[v];
	default: return 1;
	}
}

/* Row entries ahead whose node's label a walk over a row prefetches (labels indexed by
 * node are cache misses on large graphs; with the next ones requested, the misses overlap). */
#define PREFETCH 16

/* Walk row v skipping self-loops and repeats: for (j = lo; bw_pg_next(g, v, &j, hi, &u, &prev);) */
static inline bool bw_pg_next(const bw_pgraph *g, int64_t v, int64_t *j, int64_t hi, int64_t *u, int64_t *prev)
{
	while (*j < hi) {
		int64_t x = bw_pg_nbr(g, (*j)++);
		if (x != v && x != *prev) {
			*prev = x;
			*u = x;
			return true;
		}
	}
	return false;
}

/* A pass over a mapped graph in row order: pages of rows already done are handed back to
 * the kernel (they stay in the page cache) so the resident set does not grow with E. */
typedef struct bw_stream {
	const bw_pgraph *g;
	uintptr_t idx_done, ptr_done; /* page-aligned addresses released up to */
	int64_t a, b;                 /* bw_stream_next's chunk: rows [a, b) */
} bw_stream;
void bw_stream_begin(bw_stream *s, const bw_pgraph *g);
/* Rows [0, v_end) are done. */
void bw_stream_release(bw_stream *s, int64_t v_end);
/* A pass in chunks of rows, after bw_stream_begin:
 *	for (bw_stream_begin(&s, g); bw_stream_next(&s, n, BW_CHUNK);) ... rows [s.a, s.b) ...
 * Each call releases the chunk before (its rows are done) and moves [a, b) on to the next at
 * most `chunk` rows below n; false once the pass is over. */
bool bw_stream_next(bw_stream *s, int64_t n, int64_t chunk);
/* Hand back the whole pages of an array inside a read-only file mapping (never call it on
 * memory of our own: releasing anonymous pages zeroes them). */
void bw_release_range(const void *p, size_t bytes);

/* Part weights [k * ncon] of an assignment, and the largest part weight over the average per
 * constraint. */
void bw_part_weights(const bw_pgraph *g, const int32_t *part, int k, int64_t *pw, int threads);
/* Undirected edges of g whose ends lie in different parts (edge weights counted), and the
 * total edge weight, in one streamed pass. */
void bw_edge_cut(const bw_pgraph *g, const int32_t *part, int threads, int64_t *cut, int64_t *total);

/* ---------------------------------------------------------------- METIS (metis.c) */

/* Map a METIS return code to a status, once, keeping METIS's name for it. */
int bw_metis_status(int rc, const char *what);
/* METIS_PartGraphKway on g, converted to METIS's arrays: part[v] gets v's part; *objval the
 * cut METIS reports. Nodes without neighbors are left out of METIS and placed as fillers.
 * total[c]: the weight of constraint c of the whole graph g stands for (the finest level,
 * whose isolated nodes coarse levels leave out); NULL = g's own. Weight sums beyond 32 bits
 * are scaled down. */
int bw_metis_kway(const bw_pgraph *g, int k, double ufactor, const int64_t *total, uint64_t seed, int32_t *part,
		  int64_t *objval);
/* Give every node with part[v] < 0 to the part it fills least, relative to the bound
 * ufactor * total[c] / k of every constraint (total NULL: g's own weights). */
void bw_place_fillers(const bw_pgraph *g, int k, double ufactor, const int64_t *total, int32_t *part);
/* The raw call with METIS's own arrays (exposed for the tests' failure case). A bound of
 * ubvec at or below 1, which METIS would refuse with a line on stdout, is BURROW_E_INVAL. */
int bw_metis_call(int32_t n, int32_t ncon, int32_t *xadj, int32_t *adjncy, int32_t *vwgt, int32_t *adjwgt,
		  int32_t k, const float *ubvec, uint64_t seed, int32_t *part, int64_t *objval);
/* Bytes METIS is expected to need for a graph of n nodes and m stored entries (measured:
 * Debian's METIS 5.1 kway peaks near 60 bytes per entry on R-MAT graphs). */
size_t bw_metis_bytes(int64_t n, int64_t m, int ncon);

/* ---------------------------------------------------------------- symmetrize (sym.c) */

/* One piece of the graph to symmetrize: a CSR whose row x is node x + row_off and whose ids are
 * nodes id + col_off (a homogeneous input is one piece at 0, 0; a typed one a piece per
 * relation, its rows at the dst type's offset and its ids at the src type's, in the
 * concatenation of the types). */
#define BW_MAX_PIECES 32
typedef struct bw_sym_piece {
	const burrow_csr *csr;     /* borrowed, mapped */
	int64_t row_off, col_off;
} bw_sym_piece;

/* Write the symmetric graph without self-loops or repeats of the union of the pieces, on n
 * nodes, to <dir>/sym.indices (raw int32) and map it: *out views it (its indptr is allocated,
 * *indptr_out; free it and unmap *map when done). The input is streamed in as many passes as
 * the buffer of buf_bytes needs. */
int bw_symmetrize(const bw_sym_piece *pc, int npc, int64_t n, const char *dir, size_t buf_bytes, int threads,
		  bw_pgraph *out, int64_t **indptr_out, void **map, size_t *map_len);

/* ---------------------------------------------------------------- coarsening (coarsen.c) */

/* One coarse level: the graph (owned arrays) and the map from the finer level. */
typedef struct bw_level {
	bw_pgraph g;
	int64_t *indptr;   /* owned */
	int32_t *indices;  /* owned */
	int32_t *adjwgt;   /* owned */
	int64_t *vwgt;     /* owned */
	int32_t *cmap;     /* [n of the finer level]: its node's coarse node, owned */
} bw_level;
void bw_level_free(bw_level *l);

typedef struct bw_coarsen_opts {
	int64_t maxw[BW_MAX_CON];  /* clusters weigh at most this in each constraint */
	int passes;                /* label propagation passes at most */
	bool match;                /* heavy-edge matching instead of label propagation */
	bool ties;                 /* on a tie, join the heavier cluster (more shrinking) */
	uint64_t seed;
	int threads;
	size_t buf_bytes;          /* bounds the contraction's buffer (more passes when small) */
	int64_t max_entries;       /* keep only the heaviest coarse edges beyond this; 0 = all */
} bw_coarsen_opts;

/* Size-constrained label propagation over g (streamed), then contraction into a coarse graph
 * in memory. */
int bw_coarsen_level(const bw_pgraph *g, const bw_coarsen_opts *o, bw_level *out);

/* ---------------------------------------------------------------- refinement (refine.c) */

/* Bounded boundary refinement of part[] over g (streamed): up to `passes` passes of moves
 * that lower the cut and keep every part within maxw, then, while a part is over maxw, moves
 * out of it that cost the least cut; then up to `rounds` relaxed rounds (moves that lower
 * the cut into parts up to 50% over maxw, then back within maxw cheapest first; a round
 * that does not lower the cut or cannot rebalance is undone), stopping once a round gains
 * less than 0.1% of the cut. pw [k * ncon] is kept current. Returns the number of moves
 * in *moved. */
int bw_refine(const bw_pgraph *g, int32_t *part, int k, int64_t *pw, const double *maxw, int passes, int rounds,
	      uint64_t seed, int threads, int64_t *moved);

/* ---------------------------------------------------------------- writing (write.c) */

typedef struct bw_relabel {
	int k;
	int64_t n;
	const int32_t *part;       /* [n] by input id */
	int64_t *offsets;          /* [k+1] partition book (typed: part i's nodes of all types are
				      offsets[i+1] - offsets[i]) */
	int32_t *new_of_orig;      /* [n] */
	int32_t *orig_of_new;      /* [n] */
	/* A typed input: ids are those of the concatenation of the types (type t's node v is
	 * toff[t] + v, before and after relabelling: a type keeps its id range) */
	int num_types;             /* 0 for a homogeneous input */
	const int64_t *toff;       /* [num_types + 1], borrowed */
	int64_t *tbook;            /* [num_types][k+1]: part i owns type t's new ids
				      [tbook[t][i], tbook[t][i+1]), owned */
} bw_relabel;

/* Per-part results of writing, for meta.json. */
typedef struct bw_part_out {
	int64_t owned, halo, edges, send;
	int64_t type_halo[BURROW_MAX_TYPES]; /* typed: halo nodes of each type */
} bw_part_out;

/* Input row of the part's local row l (bw_copy_rows). */
typedef int64_t (*bw_row_of_fn)(const void *ctx, int64_t l);
/* Append nl rows of rowb bytes to the writer's open features: row l is row row_of(ctx, l) of
 * the file at path whose row 0 starts at byte off, read in ascending id per chunk of 4 MiB,
 * neighboring rows in one read. */
int bw_copy_rows(burrow_writer *w, const char *path, int64_t off, size_t rowb, int64_t nl, bw_row_of_fn row_of,
		 const void *ctx);
/* <dir>/<name> as an int64 npy of n entries. */
int bw_save_i64(const char *dir, const char *name, const int64_t *a, int64_t n);
/* send_ids.npy and send_offsets.npy of part i (type given: send_ids/<type>.npy and
 * send_offsets/<type>.npy): part j's halo segment for i, for each j, read from part j's
 * halo_ids.npy (halo_ids/<type>.npy); halo_off_all [k][k+1] holds every part's halo offsets. */
int bw_write_sends(const char *dir, int k, int i, const int64_t *halo_off_all, const char *type, int64_t *count);
/* Write a typed input's parts (write_typed.c): per part a version-2 dataset with, per type,
 * the owned nodes and the halo (remote sources of the owned nodes' in-edges, any relation),
 * and orig_ids/, halo_ids/, halo_offsets/, send_ids/, send_offsets/ per type. mem_bytes
 * bounds each relation's build (0: in memory). */
int bw_write_typed_parts(const burrow_dataset *ds, const char *dataset_dir, const bw_relabel *r, const char *dir,
			 size_t mem_bytes, burrow_progress_fn progress, void *progress_user, bw_part_out *out);

/* Write part-0 .. part-(k-1) into dir (the parts directory's temporary name). */
int bw_write_parts(const burrow_dataset *ds, const char *dataset_dir, const bw_relabel *r, const char *dir,
		   int threads, burrow_progress_fn progress, void *progress_user, bw_part_out *out);

#endif
