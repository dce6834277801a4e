/* burrow/graph.h: CSR graphs and their builder, dataset directories (open, verify, write), .npy files read back. */
#ifndef BURROW_GRAPH_PUBLIC_H
#define BURROW_GRAPH_PUBLIC_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- CSR graphs */

/* A compressed sparse row graph: row v's neighbors are indices[indptr[v] .. indptr[v+1]).
 * A view: it does not own its arrays unless it came from burrow_csr_builder_finish. */
typedef struct burrow_csr {
	int64_t num_nodes;      /* N */
	int64_t num_edges;      /* stored entries, indptr[N] */
	const int64_t *indptr;  /* [N+1] */
	const void *indices;    /* [num_edges] int32_t or int64_t, sorted within each row */
	int index_width;        /* 4 (int32 ids, N < 2^31) or 8 (int64 ids) */
} burrow_csr;

/* Neighbor j of the CSR's indices array, whichever its width. */
static inline int64_t burrow_csr_index(const burrow_csr *g, int64_t j)
{
	return g->index_width == 4 ? (int64_t)((const int32_t *)g->indices)[j] : ((const int64_t *)g->indices)[j];
}

typedef struct burrow_csr_opts {
	size_t size;            /* sizeof(burrow_csr_opts), set by burrow_csr_defaults(); first */
	bool symmetrize;        /* add the reverse of every edge (default false) */
	bool drop_self_loops;   /* drop (v, v) (default true) */
	bool drop_duplicates;   /* keep one copy of repeated (u, v) (default true) */
	int threads;            /* OpenMP threads; 0 = the runtime's default */
	size_t mem_bytes;       /* memory budget for the build; 0 = no limit (edges kept in memory).
				 * With a budget the edges are sorted in runs of at most this many
				 * bytes and spilled to disk when they do not fit */
	const char *spill_dir;  /* folder for spill files (NULL: $TMPDIR, else /tmp); borrowed */
	burrow_progress_fn progress; /* may be NULL */
	void *progress_user;
	bool edge_ids;          /* record each CSR entry's input edge (burrow_csr_builder_edge_ids), so that
				 * edge features can follow their edges (default false). Both directions of a
				 * symmetrized edge get its id; of repeated (u, v), the first added wins */
} burrow_csr_opts;

/* Fill o with the defaults above. */
BURROW_API void burrow_csr_defaults(burrow_csr_opts *o);

/* Builds a CSR from edges added in any order, in chunks. The build may spill to disk
 * when the edges exceed opts.mem_bytes; the result is the same either way. */
typedef struct burrow_csr_builder burrow_csr_builder;

BURROW_API int burrow_csr_builder_open(burrow_csr_builder **out,   /* out: caller closes */
				       int64_t num_nodes,           /* N: ids must lie in [0, N) */
				       const burrow_csr_opts *opts); /* borrowed; NULL = defaults */
/* Append n edges (src[i] -> dst[i]); an id outside [0, N) is BURROW_E_RANGE naming it. */
BURROW_API int burrow_csr_builder_add(burrow_csr_builder *b,
				      const int64_t *src, /* [n], borrowed */
				      const int64_t *dst, /* [n], borrowed */
				      size_t n);
/* Make room for n more edges up front (optional; avoids regrowing). */
BURROW_API int burrow_csr_builder_reserve(burrow_csr_builder *b, size_t n);
/* Edges added so far (before symmetrizing or de-duplicating). */
BURROW_API int64_t burrow_csr_builder_count(const burrow_csr_builder *b);
/* Build the CSR in memory. The arrays belong to the builder and stay valid until
 * burrow_csr_builder_close; no more edges may be added. */
BURROW_API int burrow_csr_builder_finish(burrow_csr_builder *b, burrow_csr *out /* out: view */);
BURROW_API void burrow_csr_builder_close(burrow_csr_builder *b);
/* After burrow_csr_builder_finish with opts.edge_ids: [num_edges] the input edge (its position
 * among the edges added, from 0) each CSR entry came from (borrowed, valid until close); NULL
 * otherwise. Entry j's features are the input edge's: rows of edge_features.npy follow. */
BURROW_API const int64_t *burrow_csr_builder_edge_ids(const burrow_csr_builder *b);

/* Full check of a CSR: offsets monotone from 0 to num_edges, ids in range, rows sorted
 * (strictly, when `unique`). BURROW_E_FORMAT names the first bad row. */
BURROW_API int burrow_csr_check(const burrow_csr *g, bool unique);

/* ---------------------------------------------------------------- datasets */

/* What meta.json says about a dataset directory. Strings are borrowed from the dataset. */
typedef struct burrow_dataset_info {
	const char *name;
	int64_t num_nodes;
	int64_t num_edges;        /* CSR entries: an undirected edge counts twice */
	int64_t feat_dim;         /* 0 when the dataset has no features */
	burrow_dtype feat_dtype;  /* F32 or F16 */
	int32_t num_classes;      /* 0 when the dataset has no labels */
	bool symmetric;           /* every (u, v) has its (v, u) */
	int index_width;          /* 4 or 8: width of indices.npy */
	int64_t num_train, num_valid, num_test;
	const char *source_json;  /* meta.json's "source" object, serialized; "{}" when absent */
	int num_types;            /* 0 for a homogeneous (version 1) dataset, else its node types */
	int num_relations;        /* 0, else its relations */
	int32_t num_tasks;        /* multi-label: T binary labels per node (labels.npy int8 [N, T]; num_classes
				     is then 0); 0 otherwise */
	/* edge features */
	int64_t edge_feat_dim;        /* De of edge_features.npy [num_edges, De]; 0 when the dataset has none */
	burrow_dtype edge_feat_dtype; /* F32 or F16 when edge_feat_dim > 0 */
} burrow_dataset_info;

typedef struct burrow_dataset burrow_dataset;

/* Open a dataset directory: reads meta.json and checks every file's magic, dtype, shape
 * and size against it, maps the graph, labels and splits read-only and validates their
 * contents in one streamed pass (offsets monotone, ids in range, rows sorted, symmetry
 * when claimed, labels in [-1, C), split ids in range and disjoint; C and D at most
 * 2^20), so that every consumer may trust them. A mismatch is BURROW_E_FORMAT with a
 * message naming the file, what was expected and what was found. */
BURROW_API int burrow_dataset_open(burrow_dataset **out, /* out: caller closes */
				   const char *dir);      /* the dataset directory */
BURROW_API void burrow_dataset_close(burrow_dataset *ds);
BURROW_API const burrow_dataset_info *burrow_dataset_get_info(const burrow_dataset *ds);
/* The graph, mapped from indptr.npy and indices.npy (view, valid until close). */
BURROW_API const burrow_csr *burrow_dataset_graph(const burrow_dataset *ds);
/* Labels [N] int32, -1 where unlabeled; NULL when num_classes is 0 (borrowed). */
BURROW_API const int32_t *burrow_dataset_labels(const burrow_dataset *ds);
/* Multi-label targets [N, num_tasks] int8, row-major: 1, 0, or -1 unknown; NULL when num_tasks is 0
 * (borrowed, valid until close). */
BURROW_API const int8_t *burrow_dataset_multilabels(const burrow_dataset *ds);

enum burrow_split { BURROW_SPLIT_TRAIN = 0, BURROW_SPLIT_VALID = 1, BURROW_SPLIT_TEST = 2 };
/* Use the named split split/<name>/{train,valid,test}.npy (meta.json's "named_splits"; burrow
 * import --split-name / --add-split) instead of the default split/{train,valid,test}.npy: burrow_dataset_split
 * answers with its ids from then on. Its ids are checked (in range, disjoint). name NULL or
 * "": no change. BURROW_E_NOTFOUND (naming the splits there are) when ds has none of that name. */
BURROW_API int burrow_dataset_select_split(burrow_dataset *ds, const char *name);
/* Node ids of a split, int64 (borrowed); *n gets the count. NULL when the split is empty. */
BURROW_API const int64_t *burrow_dataset_split(const burrow_dataset *ds, int split, int64_t *n);
/* Path of the dataset's features.npy (borrowed), and the byte offset of its first row. */
BURROW_API const char *burrow_dataset_features_path(const burrow_dataset *ds);
BURROW_API int64_t burrow_dataset_features_offset(const burrow_dataset *ds);
/* Path of the dataset's edge_features.npy (borrowed; NULL when edge_feat_dim is 0), and the
 * byte offset of its first row (4096 as written; rows are in CSR order). */
BURROW_API const char *burrow_dataset_edge_features_path(const burrow_dataset *ds);
BURROW_API int64_t burrow_dataset_edge_features_offset(const burrow_dataset *ds);
/* Check the contents again (burrow_dataset_open already did, O(N + E) reads: CSR
 * structure, symmetry when claimed, label range, split ids), for files changed since; and
 * every edge feature finite (O(E * De), done here only). */
BURROW_API int burrow_dataset_verify(const burrow_dataset *ds);
/* Bytes the directory's files take on disk (allocated blocks). */
BURROW_API int64_t burrow_dataset_disk_bytes(const burrow_dataset *ds);

/* ---------------------------------------------------------------- typed graphs (format version 2) */

/* A typed (heterogeneous) graph: node types, each with its own id space [0, count), and
 * relations (src_type, name, dst_type), each stored by destination so the sampler walks a
 * destination's in-edges: relation r's graph has one row per node of its dst type, and its
 * ids are src-type ids. Labels and splits are on the target type. docs/format.md. */
#define BURROW_MAX_TYPES 16      /* node types of one dataset */
#define BURROW_MAX_RELATIONS 32  /* relations of one dataset (reverses included) */
#define BURROW_MAX_NAME 64       /* type and relation names: 1 .. 63 of [A-Za-z0-9_-] */

typedef struct burrow_relation {
	const char *name;       /* e.g. "writes" (borrowed) */
	int src_type, dst_type; /* type indices */
	burrow_csr graph;       /* in-edges: graph.num_nodes = the dst type's count, row v's ids are the
				   src-type nodes with an edge into v, sorted; index_width by the src
				   type's count (int32 below 2^31) */
} burrow_relation;

/* A view of a typed graph (borrowed arrays; the dataset's, or the caller's). */
typedef struct burrow_hetero {
	int num_types;                                  /* 1 .. BURROW_MAX_TYPES */
	const char *type_names[BURROW_MAX_TYPES];       /* [num_types] */
	int64_t type_nodes[BURROW_MAX_TYPES];           /* [num_types] nodes of each type */
	int num_relations;                              /* 1 .. BURROW_MAX_RELATIONS */
	burrow_relation rel[BURROW_MAX_RELATIONS];      /* [num_relations] */
	int target_type;                                /* the type labels and splits are on; -1: none */
} burrow_hetero;

/* Full check of a typed graph: counts, names (valid, distinct), relation types in range,
 * each relation's rows = its dst count, ids in [0, src count), rows sorted. BURROW_E_FORMAT
 * names the relation and the first bad row. */
BURROW_API int burrow_hetero_check(const burrow_hetero *h);

/* One node type of a typed dataset. Strings are borrowed from the dataset. */
typedef struct burrow_type_info {
	const char *name;
	int64_t num_nodes;
	int64_t feat_dim;          /* 0: the type has no features (learn embeddings, or --fill mean) */
	burrow_dtype feat_dtype;   /* F32 or F16 when feat_dim > 0 */
	const char *features_path; /* its [num_nodes, feat_dim] npy (or raw) file; NULL when none */
	int64_t features_offset;   /* byte offset of its first row in that file */
} burrow_type_info;

/* The typed graph of a version-2 dataset (a view valid until close), or NULL for a
 * homogeneous (version 1) dataset. For a typed dataset burrow_dataset_get_info describes
 * the target type (num_nodes, feat_dim, num_classes, splits) and num_edges counts every
 * relation's edges; burrow_dataset_graph is NULL. */
BURROW_API const burrow_hetero *burrow_dataset_hetero(const burrow_dataset *ds);
/* Type t of a typed dataset into *out; BURROW_E_RANGE for a t out of range. */
BURROW_API int burrow_dataset_type_info(const burrow_dataset *ds, int t, burrow_type_info *out);

/* ---------------------------------------------------------------- edge splits (link prediction) */

/* A link dataset's edge splits (meta.json's "edge_split", the edge_split/ npy files; docs/format.md):
 * per split its positive edges, OGB's fixed negatives for valid and test where the dataset
 * has them (pairs, or per positive K corrupted destinations), weights and years where
 * given. The graph holds the training edges only. Checked at open: dtypes and shapes against
 * meta.json, every id in [0, N), weights finite. */
enum burrow_edge_neg { BURROW_EDGE_NEG_NONE = 0, BURROW_EDGE_NEG_PAIRS = 1, BURROW_EDGE_NEG_PER_SOURCE = 2 };
/* The dataset's metric: "hits@K", "mrr" (per-source negatives only) or "auc"; absent in
 * meta.json: mrr with per-source negatives, else hits@50. */
enum burrow_edge_metric { BURROW_EDGE_METRIC_HITS = 0, BURROW_EDGE_METRIC_MRR = 1, BURROW_EDGE_METRIC_AUC = 2 };

typedef struct burrow_edge_split {
	int64_t num_pos;          /* E_split positive edges */
	const int64_t *pos;       /* [num_pos, 2] (src, dst) node ids; NULL when num_pos is 0 */
	int neg;                  /* enum burrow_edge_neg (the dataset's; the train split has none) */
	int64_t num_neg;          /* rows of neg_pairs (M), or of neg_dst (= num_pos); 0 when none */
	const int64_t *neg_pairs; /* pairs: [num_neg, 2] (src, dst), else NULL */
	const int64_t *neg_dst;   /* per_source: [num_pos, k] destinations corrupting each positive's, else NULL */
	int64_t k;                /* per_source: negatives per positive, else 0 */
	const float *weight;      /* [num_pos] edge weights, or NULL */
	const int32_t *year;      /* [num_pos] edge years, or NULL */
	bool directed;            /* the edges are directed (citation2); else each stands for both ways */
	int metric;               /* enum burrow_edge_metric */
	int metric_k;             /* HITS: its K; else 0 */
} burrow_edge_split;

/* Does ds have edge splits? */
BURROW_API bool burrow_dataset_has_edge_split(const burrow_dataset *ds);
/* Split `split` (enum burrow_split) of ds's edge splits into *out (views valid until close).
 * BURROW_E_NOTFOUND when ds has none, BURROW_E_RANGE for a split out of range. */
BURROW_API int burrow_dataset_edge_split(const burrow_dataset *ds, int split, burrow_edge_split *out);
/* "none", "pairs", "per_source" (static string; "?" when unknown). */
BURROW_API const char *burrow_edge_neg_name(int neg);

/* ---------------------------------------------------------------- dataset writer */

/* Writes a dataset directory atomically: everything goes into a temporary directory
 * beside `dir`, which is renamed to `dir` by burrow_writer_commit. On any error, or on
 * burrow_writer_abort, the temporary directory is removed and `dir` is untouched. */
typedef struct burrow_writer burrow_writer;

typedef struct burrow_writer_opts {
	size_t size;            /* sizeof(burrow_writer_opts), set by burrow_writer_defaults(); first */
	bool overwrite;          /* replace an existing `dir` (default false: BURROW_E_EXISTS) */
} burrow_writer_opts;
BURROW_API void burrow_writer_defaults(burrow_writer_opts *o);

BURROW_API int burrow_writer_open(burrow_writer **out,           /* out: commit or abort */
				  const char *dir,               /* final directory path */
				  const char *name,              /* dataset name for meta.json */
				  const burrow_writer_opts *opts); /* NULL = defaults */
/* Write indptr.npy and indices.npy from a CSR (borrowed; ids of width g->index_width,
 * which must match the rule int32 when N < 2^31). Sets num_nodes and num_edges. */
BURROW_API int burrow_writer_put_graph(burrow_writer *w, const burrow_csr *g, bool symmetric);
/* Build the CSR with b and write it (b is finished and may then be closed). */
BURROW_API int burrow_writer_put_builder(burrow_writer *w, burrow_csr_builder *b, bool symmetric);
/* Stream features.npy: begin with the shape, append rows in order, end when all N are in.
 * The data starts at byte 4096 of the file. */
BURROW_API int burrow_writer_features_begin(burrow_writer *w, int64_t num_rows, int64_t dim, burrow_dtype dtype);
BURROW_API int burrow_writer_features_append(burrow_writer *w,
					     const void *rows, /* [n, dim] of the begin dtype, borrowed */
					     int64_t n);
BURROW_API int burrow_writer_features_end(burrow_writer *w); /* also ends a type's features */
/* labels.npy: [N] int32 in [0, num_classes) or -1 (borrowed). */
BURROW_API int burrow_writer_put_labels(burrow_writer *w, const int32_t *labels, int64_t n, int32_t num_classes);
/* labels.npy of a multi-label dataset: [n, num_tasks] int8, 1, 0 or -1 unknown (borrowed); meta.json
 * then has "num_tasks" and "num_classes" 0. A version-1 dataset only, and not with put_labels. */
BURROW_API int burrow_writer_put_multilabels(burrow_writer *w, const int8_t *labels, int64_t n, int32_t num_tasks);
/* split/<train|valid|test>.npy: node ids in [0, N) (borrowed). */
BURROW_API int burrow_writer_put_split(burrow_writer *w, int split, const int64_t *ids, int64_t n);
/* Typed datasets (version 2): declare the types first (in order; they are numbered from
 * 0), then each relation and each type's features; labels and splits then go to the
 * target type (set before them). A writer with any type writes a version-2 directory and
 * refuses burrow_writer_put_graph / features_begin (those are version 1's). */
BURROW_API int burrow_writer_add_type(burrow_writer *w, const char *name, int64_t num_nodes,
				      int *type /* out: its index */);
BURROW_API int burrow_writer_set_target(burrow_writer *w, int type);
/* Relation (src_type, name, dst_type) from edges src[i] -> dst[i] (type-local ids, any
 * order, duplicates kept once), added in chunks: begin, add any number of times, end. The
 * edges may spill to disk under opts.mem_bytes as burrow_csr_builder's do (NULL: defaults,
 * with symmetrize and drop_self_loops ignored: a relation keeps self loops and is never
 * symmetrized; --add-reverse is a relation of its own). An id past its type's count is
 * BURROW_E_RANGE naming the relation and the id. */
BURROW_API int burrow_writer_relation_begin(burrow_writer *w, int src_type, const char *name, int dst_type,
					    const burrow_csr_opts *opts);
BURROW_API int burrow_writer_relation_add(burrow_writer *w, const int64_t *src, const int64_t *dst, size_t n);
BURROW_API int burrow_writer_relation_end(burrow_writer *w);
/* Stream type t's features (as features_begin / append / end, data at byte 4096). */
BURROW_API int burrow_writer_type_features_begin(burrow_writer *w, int type, int64_t dim, burrow_dtype dtype);

/* Edge features (version 1, docs/format.md): edge_features.npy [num_edges, dim], row j the
 * features of CSR entry j, the data at byte 4096. After the graph: from a builder opened with
 * opts.edge_ids, rows are the INPUT edges' [m, dim] (m = the edges added), and each entry gets
 * its input edge's row (both directions of a symmetrized edge; of repeats, the first added);
 * after burrow_writer_put_graph, or a builder without edge ids, rows are in CSR order (m =
 * num_edges). An entry naming a row past m is BURROW_E_RANGE. */
BURROW_API int burrow_writer_put_edge_features(burrow_writer *w,
					       const void *rows, /* [m, dim] of dtype, borrowed */
					       int64_t m, int64_t dim, burrow_dtype dtype /* F32 or F16 */);
/* How node features are made from edge features: over the entries of each CSR row (the edges
 * a node's aggregation reads: its in-edges, for a symmetric graph also its out-edges). */
typedef enum burrow_edge_reduce {
	BURROW_EDGE_REDUCE_MEAN = 0, /* a node without entries gets 0 */
	BURROW_EDGE_REDUCE_SUM = 1,
	BURROW_EDGE_REDUCE_MAX = 2,  /* a node without entries gets 0 */
} burrow_edge_reduce;
/* features.npy [N, edge_feat_dim] float32 from the written graph and edge features, streamed
 * (takes the place of features_begin / append / end; OGB's proteins examples' node features). */
BURROW_API int burrow_writer_features_from_edges(burrow_writer *w, burrow_edge_reduce reduce);
BURROW_API const char *burrow_edge_reduce_name(burrow_edge_reduce r);
/* "mean", "sum" or "max" into *out; else BURROW_E_INVAL. */
BURROW_API int burrow_edge_reduce_parse(const char *s, burrow_edge_reduce *out);

/* Set meta.json's "source" object from a JSON text (borrowed); describes where the data came from. */
BURROW_API int burrow_writer_set_source(burrow_writer *w, const char *json_object);
/* Write meta.json, fsync everything, rename into place, and free w. */
BURROW_API int burrow_writer_commit(burrow_writer *w);
/* Remove the temporary directory and free w (NULL is fine). */
BURROW_API void burrow_writer_abort(burrow_writer *w);

/* ---------------------------------------------------------------- reading .npy files */

/* A NumPy array read whole into memory: what Burrow writes (embeddings, predictions, the
 * dataset's arrays) read back from C. Versions 1.0, 2.0 and 3.0 of the format, little-endian,
 * C order; the dtypes of burrow_dtype. */
#define BURROW_NPY_MAX_DIMS 4
typedef struct burrow_npy_array {
	burrow_dtype dtype;
	int ndim;                          /* 0 .. BURROW_NPY_MAX_DIMS */
	int64_t shape[BURROW_NPY_MAX_DIMS];/* [ndim] */
	int64_t count;                     /* elements: the product of the shape */
	void *data;                        /* [count] of dtype, row-major; owned: burrow_npy_free */
} burrow_npy_array;

/* Read path into *a (zeroed first). A file that is not an .npy, a big-endian or Fortran-order
 * array, a dtype Burrow does not know, or a size that does not match the header is
 * BURROW_E_FORMAT naming the file. */
BURROW_API int burrow_npy_read(const char *path, burrow_npy_array *a /* out: burrow_npy_free */);
/* Free a's data and zero it (a zeroed or freed array is fine). */
BURROW_API void burrow_npy_free(burrow_npy_array *a);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_GRAPH_PUBLIC_H */
