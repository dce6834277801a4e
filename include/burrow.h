/* burrow.h: the one public header of libburrow, out-of-core graph neural network training.
 *
 * Burrow keeps a graph as a dataset directory (NumPy files plus meta.json, see
 * docs/format.md) and trains GNNs on it with the vertex features left on disk.
 * This header is the whole API and its documentation.
 *
 * Conventions
 *   - Actions return int: 0 (BURROW_OK) is success, negative is an error
 *     (BURROW_E_*), positive is information (BURROW_DONE). burrow_strerror() names a
 *     status; burrow_last_error() gives the calling thread's last message, which
 *     names the file, line or id at fault.
 *   - Constructors are burrow_x_open(burrow_x **out, ...): *out is NULL on failure.
 *     Destructors accept NULL.
 *   - Options are plain structs filled by burrow_x_defaults(); set the fields you
 *     care about, so new fields never break callers.
 *   - The library never prints or exits; messages go to the callback set with
 *     burrow_log_set().
 *   - CSR widths are fixed: 64-bit row offsets; vertex ids are int32 when the graph
 *     has fewer than 2^31 nodes, else int64 (burrow_csr.index_width says which).
 *
 * Example: generate a small graph and print its size.
 *
 *     burrow_gen_opts g;
 *     burrow_gen_defaults(&g, BURROW_GEN_CSBM);
 *     g.num_nodes = 10000;
 *     if (burrow_gen(&g, "data/csbm") < 0) { fprintf(stderr, "%s\n", burrow_last_error()); return 1; }
 *     burrow_dataset *ds;
 *     if (burrow_dataset_open(&ds, "data/csbm") < 0) { fprintf(stderr, "%s\n", burrow_last_error()); return 1; }
 *     const burrow_dataset_info *in = burrow_dataset_get_info(ds);
 *     printf("%lld nodes, %lld edges\n", (long long)in->num_nodes, (long long)in->num_edges);
 *     burrow_dataset_close(ds);
 */
#ifndef BURROW_H
#define BURROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BURROW_BUILDING) && defined(__GNUC__)
#define BURROW_API __attribute__((visibility("default")))
#else
#define BURROW_API
#endif

/* ---------------------------------------------------------------- version */

#define BURROW_VERSION_MAJOR 0
#define BURROW_VERSION_MINOR 1
#define BURROW_VERSION_PATCH 0
#define BURROW_DATASET_FORMAT_VERSION 1 /* meta.json "version" this library reads and writes */

/* The library's version as "MAJOR.MINOR.PATCH" (static string). */
BURROW_API const char *burrow_version(void);

/* ---------------------------------------------------------------- status */

enum burrow_status {
	BURROW_OK = 0,
	BURROW_DONE = 1,               /* information: an iteration has ended */
	BURROW_E_INVAL = -1,           /* bad argument or option */
	BURROW_E_NOMEM = -2,           /* allocation failed or memory budget exceeded */
	BURROW_E_IO = -3,              /* read, write, open or sync failed */
	BURROW_E_FORMAT = -4,          /* a file's contents are malformed or inconsistent */
	BURROW_E_UNSUPPORTED = -5,     /* not available in this build or on this system */
	BURROW_E_CUDA = -6,            /* CUDA, cuBLAS, cuSPARSE or NCCL failed */
	BURROW_E_MPI = -7,             /* MPI failed */
	BURROW_E_METIS = -8,           /* METIS failed */
	BURROW_E_NOTFOUND = -9,        /* a file or named item does not exist */
	BURROW_E_EXISTS = -10,         /* the output already exists */
	BURROW_E_RANGE = -11,          /* an id or value is out of range */
};

/* A short fixed description of a status code (static string). */
BURROW_API const char *burrow_strerror(int status);
/* The calling thread's most recent error message; "" when none (thread-local, borrowed). */
BURROW_API const char *burrow_last_error(void);

/* ---------------------------------------------------------------- logging */

enum burrow_log_level { BURROW_LOG_ERROR = 0, BURROW_LOG_WARN = 1, BURROW_LOG_INFO = 2, BURROW_LOG_DEBUG = 3 };

/* Receives each library message: one line, no trailing newline. */
typedef void (*burrow_log_fn)(int level,      /* enum burrow_log_level */
			      const char *msg, /* borrowed for the call */
			      void *user);     /* the pointer given to burrow_log_set */
/* Route library messages to fn (NULL: drop them, the default) at levels <= max_level. */
BURROW_API void burrow_log_set(burrow_log_fn fn, void *user, int max_level);

/* Progress of a long operation: `done` of `total` units in the named phase. */
typedef void (*burrow_progress_fn)(void *user,        /* the pointer given with the callback */
				   const char *phase,  /* e.g. "edges", "features"; static string */
				   uint64_t done,      /* units done so far */
				   uint64_t total);    /* units in the phase; 0 when unknown */

/* ---------------------------------------------------------------- memory */

/* Bytes the library holds now, and the most it has held (process-wide). */
BURROW_API void burrow_mem_stats(size_t *current, /* out, may be NULL */
				 size_t *peak);    /* out, may be NULL */
/* Reset the peak to the current value. */
BURROW_API void burrow_mem_reset_peak(void);

/* ---------------------------------------------------------------- dtypes */

typedef enum burrow_dtype {
	BURROW_DTYPE_INVALID = 0,
	BURROW_DTYPE_F16,
	BURROW_DTYPE_F32,
	BURROW_DTYPE_F64,
	BURROW_DTYPE_I8,
	BURROW_DTYPE_U8,
	BURROW_DTYPE_I32,
	BURROW_DTYPE_I64,
	BURROW_DTYPE_BOOL,
} burrow_dtype;

/* Bytes per element, 0 for BURROW_DTYPE_INVALID. */
BURROW_API size_t burrow_dtype_size(burrow_dtype t);
/* The name used in meta.json and by NumPy ("float32", "int64", ...); static string. */
BURROW_API const char *burrow_dtype_name(burrow_dtype t);
/* Parse a name ("float32", "f32", "float16", "f16", "int32", ...); INVALID if unknown. */
BURROW_API burrow_dtype burrow_dtype_parse(const char *name);

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
	bool symmetrize;        /* add the reverse of every edge (default false) */
	bool drop_self_loops;   /* drop (v, v) (default true) */
	bool drop_duplicates;   /* keep one copy of repeated (u, v) (default true) */
	int threads;            /* OpenMP threads; 0 = the runtime's default */
	size_t mem_bytes;       /* memory budget for the build; 0 = no limit */
	burrow_progress_fn progress; /* may be NULL */
	void *progress_user;
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
} burrow_dataset_info;

typedef struct burrow_dataset burrow_dataset;

/* Open a dataset directory: reads meta.json and checks every file's magic, dtype, shape
 * and size against it, then maps the graph, labels and splits read-only. A mismatch is
 * BURROW_E_FORMAT with a message naming the file, what was expected and what was found. */
BURROW_API int burrow_dataset_open(burrow_dataset **out, /* out: caller closes */
				   const char *dir);      /* the dataset directory */
BURROW_API void burrow_dataset_close(burrow_dataset *ds);
BURROW_API const burrow_dataset_info *burrow_dataset_get_info(const burrow_dataset *ds);
/* The graph, mapped from indptr.npy and indices.npy (view, valid until close). */
BURROW_API const burrow_csr *burrow_dataset_graph(const burrow_dataset *ds);
/* Labels [N] int32, -1 where unlabeled; NULL when num_classes is 0 (borrowed). */
BURROW_API const int32_t *burrow_dataset_labels(const burrow_dataset *ds);

enum burrow_split { BURROW_SPLIT_TRAIN = 0, BURROW_SPLIT_VALID = 1, BURROW_SPLIT_TEST = 2 };
/* Node ids of a split, int64 (borrowed); *n gets the count. NULL when the split is empty. */
BURROW_API const int64_t *burrow_dataset_split(const burrow_dataset *ds, int split, int64_t *n);
/* Path of the dataset's features.npy (borrowed), and the byte offset of its first row. */
BURROW_API const char *burrow_dataset_features_path(const burrow_dataset *ds);
BURROW_API int64_t burrow_dataset_features_offset(const burrow_dataset *ds);
/* Check the contents too (O(N + E) reads): CSR structure, label range, split ids. */
BURROW_API int burrow_dataset_verify(const burrow_dataset *ds);
/* Bytes the directory's files take on disk (allocated blocks). */
BURROW_API int64_t burrow_dataset_disk_bytes(const burrow_dataset *ds);

/* ---------------------------------------------------------------- dataset writer */

/* Writes a dataset directory atomically: everything goes into a temporary directory
 * beside `dir`, which is renamed to `dir` by burrow_writer_commit. On any error, or on
 * burrow_writer_abort, the temporary directory is removed and `dir` is untouched. */
typedef struct burrow_writer burrow_writer;

typedef struct burrow_writer_opts {
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
BURROW_API int burrow_writer_features_end(burrow_writer *w);
/* labels.npy: [N] int32 in [0, num_classes) or -1 (borrowed). */
BURROW_API int burrow_writer_put_labels(burrow_writer *w, const int32_t *labels, int64_t n, int32_t num_classes);
/* split/<train|valid|test>.npy: node ids in [0, N) (borrowed). */
BURROW_API int burrow_writer_put_split(burrow_writer *w, int split, const int64_t *ids, int64_t n);
/* Set meta.json's "source" object from a JSON text (borrowed); describes where the data came from. */
BURROW_API int burrow_writer_set_source(burrow_writer *w, const char *json_object);
/* Write meta.json, fsync everything, rename into place, and free w. */
BURROW_API int burrow_writer_commit(burrow_writer *w);
/* Remove the temporary directory and free w (NULL is fine). */
BURROW_API void burrow_writer_abort(burrow_writer *w);

/* ---------------------------------------------------------------- synthetic graphs */

enum burrow_gen_kind { BURROW_GEN_CSBM = 1, BURROW_GEN_RMAT = 2 };

typedef struct burrow_gen_opts {
	int kind;               /* enum burrow_gen_kind */
	uint64_t seed;          /* same seed, same bytes (default 0) */
	/* csbm */
	int64_t num_nodes;      /* default 10000 */
	double avg_degree;      /* mean CSR degree (default 10) */
	double homophily;       /* probability that an edge joins two nodes of one class (default 0.8) */
	/* rmat */
	int scale;              /* 2^scale nodes (default 16) */
	double edge_factor;     /* edges generated = edge_factor * 2^scale (default 16) */
	double a, b, c;         /* Kronecker quadrant probabilities (default 0.57, 0.19, 0.19) */
	/* both */
	int32_t num_classes;    /* default 8 */
	int64_t feat_dim;       /* default 64 */
	burrow_dtype feat_dtype;/* F32 (default) or F16 */
	double signal;          /* class signal to noise ratio of the features (default 1.0) */
	double train_frac, valid_frac; /* random split (default 0.6, 0.2; test gets the rest) */
	bool overwrite;         /* replace an existing output directory */
	int threads;            /* 0 = the OpenMP default */
	burrow_progress_fn progress; /* may be NULL */
	void *progress_user;
} burrow_gen_opts;

/* Defaults for a kind (enum burrow_gen_kind). */
BURROW_API void burrow_gen_defaults(burrow_gen_opts *o, int kind);
/* Generate a synthetic dataset into `dir` (written atomically). */
BURROW_API int burrow_gen(const burrow_gen_opts *o, const char *dir);

/* ---------------------------------------------------------------- partitioning */

/* Split a dataset into K parts for distributed training (docs/partition.md). METIS k-way
 * (edge-cut objective) on the symmetric graph without self-loops, one vertex-weight
 * constraint per balanced quantity; graphs beyond METIS's 32-bit indices or the memory
 * budget are first coarsened by streaming label propagation over the on-disk CSR. Nodes
 * are relabelled so part i owns the new ids [node_offsets[i], node_offsets[i+1]); each
 * part is written as a dataset directory holding its owned rows, its 1-hop halo and the
 * send lists of the halo exchange. The input graph must have fewer than 2^31 nodes. */

enum burrow_balance {                 /* what a partition balances: a bitmask */
	BURROW_BALANCE_NODES = 1,     /* owned nodes per part */
	BURROW_BALANCE_TRAIN = 2,     /* owned training nodes per part */
	BURROW_BALANCE_EDGES = 4,     /* stored CSR entries (row lengths) per part */
};

enum burrow_part_method {
	BURROW_PART_METIS = 0,        /* METIS k-way, coarsened first where needed */
	BURROW_PART_RANDOM = 1,       /* a seeded random permutation cut into K equal ranges */
};

typedef struct burrow_partition_opts {
	int num_parts;                /* K >= 1 (default 2) */
	unsigned balance;             /* enum burrow_balance bits (default NODES) */
	double ufactor;               /* allowed max part weight / average part weight, per
				       * constraint, > 1 (default 1.05) */
	uint64_t seed;                /* METIS seed, tie breaks, random method (default 0) */
	int method;                   /* enum burrow_part_method (default METIS) */
	size_t mem_bytes;             /* memory budget in bytes; 0 = no limit (default 0) */
	int64_t coarsen_to;           /* coarsen until about this many nodes remain, even when
				       * METIS could take the graph; 0 = only when it cannot */
	int refine_passes;            /* boundary refinement passes after projecting a coarse
				       * partition back (default 4) */
	const char *out_dir;          /* borrowed; NULL = <dataset>/parts-K */
	bool overwrite;               /* replace an existing output directory (default false) */
	int threads;                  /* OpenMP threads; 0 = the runtime's default */
	burrow_progress_fn progress;  /* may be NULL */
	void *progress_user;
} burrow_partition_opts;

/* What a partition run measured (also stored in <out>/meta.json). */
typedef struct burrow_partition_stats {
	int num_parts;                /* K */
	int64_t num_nodes;            /* N of the input */
	int64_t num_edges;            /* CSR entries of the input */
	int64_t sym_edges;            /* undirected edges of the symmetric graph without self-loops */
	int64_t edge_cut;             /* of those, edges whose ends lie in different parts */
	int64_t metis_cut;            /* the cut METIS reported for the graph it saw, before
				       * projection and refinement (0 for the random method) */
	double cut_fraction;          /* edge_cut / sym_edges (0 when there are no edges) */
	double imbalance_nodes;       /* max over parts of (part weight / average part weight) */
	double imbalance_train;       /*   for nodes, training nodes (0 without a train split), */
	double imbalance_edges;       /*   and stored CSR entries, balanced or not */
	int64_t halo_total;           /* sum over parts of the halo sizes */
	double replication;           /* (N + halo_total) / N: local nodes per input node */
	bool coarsened;               /* the coarsening path ran */
	int coarsen_levels;           /* label propagation levels */
	int64_t coarse_nodes;         /* nodes of the graph METIS saw (N on the direct path) */
	int64_t coarse_edges;         /* undirected edges of the graph METIS saw */
	double seconds;               /* wall time of the whole run */
	int64_t peak_rss_bytes;       /* the process's resident high-water mark at the end */
	int num_phases;               /* entries of phases[] in use */
	struct burrow_partition_phase {
		const char *name;     /* "symmetrize", "coarsen", "metis", "refine", ...; static */
		double seconds;       /* wall time */
		int64_t heap_peak_bytes; /* the library's own allocations at their peak */
		int64_t rss_peak_bytes;  /* the process's resident high-water mark by the end */
	} phases[8];
} burrow_partition_stats;

/* Fill o with the defaults above. */
BURROW_API void burrow_partition_defaults(burrow_partition_opts *o);
/* Partition the dataset at dataset_dir into opts->num_parts parts and write them to the
 * output directory (written under a temporary name and renamed when complete). A METIS
 * failure is BURROW_E_METIS with METIS's code in the message; a budget too small for the
 * per-node arrays is BURROW_E_NOMEM saying how much is needed. */
BURROW_API int burrow_partition(const char *dataset_dir,             /* input dataset directory */
				const burrow_partition_opts *opts,    /* borrowed; NULL = defaults */
				burrow_partition_stats *stats);       /* out, may be NULL */

/* A parts directory written by burrow_partition (read by distributed training). */
typedef struct burrow_parts burrow_parts;

typedef struct burrow_parts_info {
	int num_parts;                /* K */
	int64_t num_nodes;            /* N: new global ids are [0, N) */
	int64_t num_edges;            /* CSR entries of the input */
	const int64_t *node_offsets;  /* [K+1] partition book: part i owns new ids
				       * [node_offsets[i], node_offsets[i+1]) (borrowed) */
	const int64_t *halo_sizes;    /* [K] halo nodes per part (borrowed) */
	int64_t edge_cut;             /* as in burrow_partition_stats */
	const char *dataset;          /* the input dataset directory as given (borrowed) */
} burrow_parts_info;

/* Open <dir>/meta.json (format "burrow-parts", version 1) and check it. */
BURROW_API int burrow_parts_open(burrow_parts **out,  /* out: caller closes */
				 const char *dir);     /* the parts-K directory */
BURROW_API void burrow_parts_close(burrow_parts *p);
BURROW_API const burrow_parts_info *burrow_parts_get_info(const burrow_parts *p);
/* The part that owns new global id gid, or BURROW_E_RANGE when gid is outside [0, N). */
BURROW_API int burrow_parts_owner(const burrow_parts *p, int64_t gid);

/* One part: its dataset directory (local ids: owned nodes 0 .. n_i-1 in new-id order, then
 * halo nodes n_i .. n_i+h_i-1 in halo_ids order) and its exchange lists. */
typedef struct burrow_part burrow_part;

typedef struct burrow_part_info {
	int part;                     /* i */
	int num_parts;                /* K */
	int64_t num_owned;            /* n_i: local ids [0, n_i) */
	int64_t num_halo;             /* h_i: local ids [n_i, n_i + h_i) */
	int64_t first_id;             /* node_offsets[i]: new global id of local id 0 */
	const int64_t *orig_ids;      /* [n_i] input id of each owned node (borrowed) */
	const int64_t *halo_ids;      /* [h_i] new global ids, grouped by owner, ascending (borrowed) */
	const int64_t *halo_offsets;  /* [K+1] owner j's halo nodes are halo_ids[halo_offsets[j] ..
				       * halo_offsets[j+1]) (borrowed) */
	int64_t num_send;             /* send_offsets[K] */
	const int64_t *send_ids;      /* [num_send] new global ids of owned nodes; the segment for
				       * part j equals part j's halo segment for i (borrowed) */
	const int64_t *send_offsets;  /* [K+1] (borrowed) */
} burrow_part_info;

/* Open part i of an open parts directory: its dataset and its exchange arrays, all checked
 * against each other (ranges, orders, counts). */
BURROW_API int burrow_part_open(burrow_part **out,           /* out: caller closes */
				const burrow_parts *parts,    /* borrowed; must outlive the part */
				int i);                       /* 0 <= i < K */
BURROW_API void burrow_part_close(burrow_part *p);
BURROW_API const burrow_part_info *burrow_part_get_info(const burrow_part *p);
/* The part's dataset (borrowed, valid until burrow_part_close). */
BURROW_API const burrow_dataset *burrow_part_dataset(const burrow_part *p);

/* ---------------------------------------------------------------- CUDA */

/* Number of CUDA devices usable now; BURROW_E_UNSUPPORTED in a build without CUDA,
 * 0 when the build has CUDA but the machine has no device. */
BURROW_API int burrow_cuda_device_count(void);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_H */
