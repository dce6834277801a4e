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
 *   - Every options and stats struct opens with `size_t size`: _defaults() sets it
 *     for options; for stats the caller does (burrow_epoch_stats es = {.size =
 *     sizeof es}). A library newer than its caller reads only `size` bytes of the
 *     options (the rest keep their defaults) and writes only `size` bytes of the
 *     stats; a size smaller than the size field itself (0: not filled) is
 *     BURROW_E_INVAL naming the struct, and options from a newer caller with a field
 *     set past what this library knows are BURROW_E_UNSUPPORTED.
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

/* The one version source: the Makefile reads these three for the library's file names,
 * SONAME and pkg-config files; every exported symbol is versioned LIBBURROW_MAJOR.MINOR
 * (libburrow.map). */
#define BURROW_VERSION_MAJOR 0
#define BURROW_VERSION_MINOR 1
#define BURROW_VERSION_PATCH 0
#define BURROW_DATASET_FORMAT_VERSION 1 /* meta.json "version" this library reads and writes */
/* Most layers of a model, and most blocks of a sampled batch (one limit for both). */
#define BURROW_MAX_LAYERS 8

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
/* One status for one condition: an id a caller passes outside [0, N) is BURROW_E_RANGE,
 * a thread the library cannot start is BURROW_E_NOMEM. */

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
/* Route library messages to fn (NULL: drop them, the default) at levels <= max_level.
 * Safe to call while library threads log: messages are delivered under a read lock and this
 * call takes the write lock, so when it returns no thread is in, or will call, the previous
 * callback. fn may be called from any library thread, concurrently; it must not call
 * burrow_log_set itself (that would deadlock). */
BURROW_API void burrow_log_set(burrow_log_fn fn, void *user, int max_level);

/* Progress of a long operation: `done` of `total` units in the named phase. */
typedef void (*burrow_progress_fn)(void *user,        /* the pointer given with the callback */
				   const char *phase,  /* e.g. "edges", "features"; static string */
				   uint64_t done,      /* units done so far */
				   uint64_t total);    /* units in the phase; 0 when unknown */

/* ---------------------------------------------------------------- memory */

/* Every allocation of the library is counted, cJSON's included: libburrow sets cJSON's
 * process-wide allocation hooks (cJSON_InitHooks) when it is loaded, so a program that uses
 * cJSON itself must not set other hooks, nor hold cJSON objects made before libburrow was
 * loaded (dlopen) and free them after. */
/* Bytes the library holds now, and the most it has held (process-wide). */
BURROW_API void burrow_mem_stats(size_t *current, /* out, may be NULL */
				 size_t *peak);    /* out, may be NULL */
/* Reset the peak to the current value. */
BURROW_API void burrow_mem_reset_peak(void);

/* ---------------------------------------------------------------- interrupts */

/* Remove every temporary output this process's library calls are writing now (an
 * OUT.tmp.<pid> folder, a file's .tmp.<pid>, an evaluation's spill files), and make any
 * library call that would start a new one wait for good: for a program about to exit on
 * SIGINT or SIGTERM. Not async-signal-safe: call it from an ordinary thread that the
 * signal handler wakes (sem_post), not from the handler. Outputs already renamed into
 * place stay. A later run also removes what a killed process (kill -9) left, by its dead
 * PID. */
BURROW_API void burrow_remove_temporaries(void);

/* Which of the library's file mappings (the dataset's arrays, a parts directory's, the feature
 * store's mmap engine) holds addr: its file's path into buf and 1, or 0 when none does. A
 * mapped file truncated under a run faults (SIGBUS) on its next read; a program's SIGBUS
 * handler can name the file with this and end in one line. Async-signal-safe. */
BURROW_API int burrow_mapped_file(const void *addr, /* si_addr of the fault */
				  char *buf,        /* [cap] receives the path, NUL-terminated, borrowed */
				  size_t cap);

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

enum burrow_split { BURROW_SPLIT_TRAIN = 0, BURROW_SPLIT_VALID = 1, BURROW_SPLIT_TEST = 2 };
/* Node ids of a split, int64 (borrowed); *n gets the count. NULL when the split is empty. */
BURROW_API const int64_t *burrow_dataset_split(const burrow_dataset *ds, int split, int64_t *n);
/* Path of the dataset's features.npy (borrowed), and the byte offset of its first row. */
BURROW_API const char *burrow_dataset_features_path(const burrow_dataset *ds);
BURROW_API int64_t burrow_dataset_features_offset(const burrow_dataset *ds);
/* Check the contents again (burrow_dataset_open already did, O(N + E) reads: CSR
 * structure, symmetry when claimed, label range, split ids), for files changed since. */
BURROW_API int burrow_dataset_verify(const burrow_dataset *ds);
/* Bytes the directory's files take on disk (allocated blocks). */
BURROW_API int64_t burrow_dataset_disk_bytes(const burrow_dataset *ds);

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

/* CSBM: classes carried by edges and features; RMAT: Graph500 Kronecker edges; PAPERS: a
 * graph of ogbn-papers100M's shape (111,059,956 nodes, 1,615,685,872 directed edges before
 * symmetrizing, 128 float16 features, 172 classes, its split sizes, the rest unlabelled)
 * scaled by `fraction`, with power-law degrees and homophilous edges. */
enum burrow_gen_kind { BURROW_GEN_CSBM = 1, BURROW_GEN_RMAT = 2, BURROW_GEN_PAPERS = 3 };

typedef struct burrow_gen_opts {
	size_t size;            /* sizeof(burrow_gen_opts), set by burrow_gen_defaults(); first */
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
	/* all kinds */
	int32_t num_classes;    /* default 8 (papers: 172) */
	int64_t feat_dim;       /* default 64 (papers: 128) */
	burrow_dtype feat_dtype;/* F32 (default) or F16 (papers' default) */
	double signal;          /* class signal to noise ratio of the features (default 1.0) */
	double train_frac, valid_frac; /* random split (default 0.6, 0.2; test gets the rest; not papers) */
	bool overwrite;         /* replace an existing output directory */
	int threads;            /* 0 = the OpenMP default */
	burrow_progress_fn progress; /* may be NULL */
	void *progress_user;
	/* papers */
	double fraction;        /* of ogbn-papers100M's nodes, edges and splits (default 1, in (0, 4]) */
	/* all kinds */
	size_t mem_bytes;       /* memory budget of the CSR build, spilled beyond it (0: csbm and rmat
				 * build in memory; papers takes half the physical memory or of the cgroup's limit) */
	const char *spill_dir;  /* folder for the build's spill files (NULL: $TMPDIR, else /tmp); borrowed */
} burrow_gen_opts;

/* Defaults for a kind (enum burrow_gen_kind). */
BURROW_API void burrow_gen_defaults(burrow_gen_opts *o, int kind);
/* Generate a synthetic dataset into `dir` (written atomically). */
BURROW_API int burrow_gen(const burrow_gen_opts *o, const char *dir);

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
} burrow_store_stats;
/* The counters now (a snapshot; safe while gathers run). */
BURROW_API void burrow_store_get_stats(const burrow_store *s, burrow_store_stats *st /* out */);
/* Zero the counters (not the cache's contents). */
BURROW_API void burrow_store_reset_stats(burrow_store *s);

/* The cache: each call replaces the one before; none may be made while tickets are in flight
 * (BURROW_E_INVAL). The budget covers rows (as gathered, out_dtype) and the index; rows that
 * do not fit are left out. A static cache is filled now, with the store's own reads. */
enum burrow_cache_policy { BURROW_CACHE_NONE = 0, BURROW_CACHE_STATIC = 1, BURROW_CACHE_CLOCK = 2 };
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

/* ---------------------------------------------------------------- OGB datasets and import */

/* A dataset the catalog knows (OGB's node property prediction sets). Strings are static. */
typedef struct burrow_catalog_entry {
	const char *name;          /* "ogbn-arxiv" */
	const char *url;           /* the official zip */
	const char *download_name; /* the zip's top folder: "arxiv" */
	const char *split;         /* the split folder under split/: "time" */
	int64_t num_nodes;         /* N */
	int64_t num_edges;         /* edges as stored in the zip (one direction) */
	int64_t feat_dim;          /* D */
	int32_t num_classes;
	bool add_inverse_edge;     /* OGB stores each edge once and adds the reverse */
	bool binary;               /* raw/data.npz (papers100M-bin) instead of csv.gz files */
	int64_t zip_bytes;         /* size of the download, approximate */
} burrow_catalog_entry;

/* Disk space a catalog dataset needs, in bytes (upper bounds). */
typedef struct burrow_catalog_space {
	int64_t download;          /* the zip */
	int64_t dataset;           /* the prepared dataset directory */
	int64_t scratch;           /* temporary files while preparing, at most (spilled edge runs, a
				    * compressed .npz member extracted to disk) */
} burrow_catalog_space;

/* Entries in the catalog. */
BURROW_API int burrow_catalog_count(void);
/* Entry i in [0, count); NULL outside (static). */
BURROW_API const burrow_catalog_entry *burrow_catalog_get(int i);
/* The entry named `name` ("ogbn-arxiv") or with that download name ("arxiv"); NULL when unknown. */
BURROW_API const burrow_catalog_entry *burrow_catalog_find(const char *name);
/* Disk space to download and prepare e with features of type feat_dtype (F32 or F16). */
BURROW_API void burrow_catalog_space_of(const burrow_catalog_entry *e, burrow_dtype feat_dtype,
					burrow_catalog_space *out); /* out */

typedef struct burrow_download_opts {
	size_t size;            /* sizeof(burrow_download_opts), set by burrow_download_defaults(); first */
	const char *url;           /* fetch this instead of the catalog's URL (NULL: the catalog's) */
	long connect_timeout_s;    /* give up connecting after this long (default 30) */
	long stall_timeout_s;      /* give up when no byte arrives for this long (default 60) */
	burrow_progress_fn progress; /* phase "download", bytes; may be NULL */
	void *progress_user;
} burrow_download_opts;
BURROW_API void burrow_download_defaults(burrow_download_opts *o);

/* Download dataset `name`'s zip to <root>/<name>.zip through <root>/<name>.zip.part, which
 * an interrupted download leaves behind and the next call resumes (HTTP Range). The size
 * is checked against the server's before the rename. An existing <root>/<name>.zip is
 * kept (returns 0). `name` must be in the catalog unless o->url is set. */
BURROW_API int burrow_download(const char *name,                /* "ogbn-arxiv", or any name with o->url */
			       const char *root,                /* folder for the zip; created if missing */
			       const burrow_download_opts *o,   /* borrowed; NULL = defaults */
			       char *path, size_t path_cap);    /* out, may be NULL: the zip's path */

typedef struct burrow_prep_opts {
	size_t size;            /* sizeof(burrow_prep_opts), set by burrow_prep_defaults(); first */
	const char *root;          /* where zips are found or downloaded, and datasets written (default "data") */
	const char *out;           /* the dataset directory (NULL: <root>/<name>) */
	burrow_dtype feat_dtype;   /* F32 (default) or F16 */
	size_t mem_bytes;          /* memory for the edge list; more spills sorted runs to disk
				    * (0 = half the physical memory or of the cgroup's limit) */
	const char *tmp_dir;       /* spill folder (NULL: beside the output) */
	bool overwrite;            /* replace an existing dataset directory */
	bool download;             /* download the zip when it is missing (default true) */
	const char *url;           /* download from here instead of the catalog's URL */
	burrow_progress_fn progress; /* phases "download", "extract" (a compressed .npz), "edges",
				      * "sort" or "merge", "features", "labels", "splits"; may be NULL */
	void *progress_user;
} burrow_prep_opts;
BURROW_API void burrow_prep_defaults(burrow_prep_opts *o);

/* Turn an OGB dataset into a dataset directory: `source` is a catalog name (the zip is
 * looked up in, or downloaded to, o->root), another name whose zip is <root>/<name>.zip
 * (where burrow_download puts it; downloaded there from o->url when set), the path of an
 * OGB zip, or an unpacked OGB folder. Members are read straight from the zip (csv.gz streamed through zlib, .npz
 * arrays streamed); the graph is written symmetric without self-loops or duplicates,
 * labels -1 where unlabeled (NaN), splits as int64. Written atomically: on failure
 * nothing is left but a download's resumable .part. */
BURROW_API int burrow_prep(const char *source,             /* name, zip or folder */
			   const burrow_prep_opts *o,      /* borrowed; NULL = defaults */
			   char *out_dir, size_t out_cap); /* out, may be NULL: the directory written */

/* What burrow_import read, dropped and wrote. */
typedef struct burrow_import_stats {
	size_t size;            /* set by the caller: sizeof(burrow_import_stats); the library writes at most this */
	int64_t num_nodes;         /* N written */
	bool num_nodes_inferred;   /* N came from the data (largest id + 1, or the features' or labels'
				    * rows when more), not from burrow_import_opts.num_nodes */
	bool header_skipped;       /* a text edge list's first line was a header (detected or forced) */
	int64_t edges_read;        /* edges in the input */
	int64_t self_loops;        /* of those, (u, u): dropped */
	int64_t duplicates;        /* of the rest, repeats of an edge already read, dropped (with
				    * undirected, (v, u) after (u, v) is a repeat too) */
	int64_t entries;           /* CSR entries stored: edges_read - self_loops - duplicates, twice
				    * that with undirected */
	int64_t split_sizes[3];    /* nodes in train, valid, test (0 without splits) */
	bool split_random;         /* the splits were drawn (burrow_import_opts.split) */
} burrow_import_stats;

typedef struct burrow_import_opts {
	size_t size;            /* sizeof(burrow_import_opts), set by burrow_import_defaults(); first */
	const char *edges;         /* required: .npy (2, E) or (E, 2) int32/int64, or text (csv, tsv or
				    * blank-separated; .gz; '#' comments) one edge "src dst" a line; a
				    * first line holding a letter ("src,dst") is a header and skipped */
	bool header;               /* text: skip the first line whatever it holds (default false) */
	int64_t num_nodes;         /* N, every id must lie in [0, N); 0 (default): the largest id + 1,
				    * or the rows of features or labels when they have more (a first
				    * pass over the edges finds the largest id) */
	const char *features;      /* .npy [N, D] float32/float16/float64, or NULL */
	const char *labels;        /* .npy [N] or [N, 1] integer, or float with NaN = unlabeled; or NULL */
	const char *train, *valid, *test; /* .npy int32/int64 node ids, or bool masks [N]; or NULL */
	double split[3];           /* train, valid, test fractions of a random split (burrow_split_random)
				    * instead of split files; all 0 (default): none */
	uint64_t split_seed;       /* its seed (default 0) */
	bool undirected;           /* store both directions of every edge */
	burrow_dtype feat_dtype;   /* F32 or F16; INVALID (default) keeps float16 input as is, else F32 */
	const char *name;          /* dataset name for meta.json (NULL: the output folder's name) */
	size_t mem_bytes;          /* as in burrow_prep_opts (0 = half the physical memory or of the cgroup's limit) */
	const char *tmp_dir;       /* spill folder (NULL: beside the output) */
	bool overwrite;            /* replace an existing output directory */
	burrow_progress_fn progress; /* phases "edges", "sort" or "merge", "features", "labels"; may be NULL */
	void *progress_user;
	burrow_import_stats *stats; /* out, may be NULL: filled on success */
} burrow_import_opts;
BURROW_API void burrow_import_defaults(burrow_import_opts *o);

/* Write a dataset directory from a user's own files (see burrow_import_opts), atomically. */
BURROW_API int burrow_import(const char *out,                /* the dataset directory to write */
			     const burrow_import_opts *o);   /* borrowed; edges required */

/* A random split for a graph that has none: the candidates (the labeled nodes, labels[v] >= 0;
 * every node when labels is NULL) in an order drawn from seed, cut into train, valid and test
 * of sizes round(frac[0] M), round(frac[1] M) and, when the fractions sum to 1, the rest
 * (M - train - valid), else round(frac[2] M), M being the candidates' count (each size capped
 * by what is left). ids gets train | valid | test, each part ascending; sizes their counts.
 * The same seed, candidates and fractions give the same split. Fractions must be >= 0 with a
 * sum in (0, 1 + 1e-9]. */
BURROW_API int burrow_split_random(const int32_t *labels, /* [n] or NULL, borrowed */
				   int64_t n,             /* nodes */
				   const double frac[3],  /* train, valid, test */
				   uint64_t seed,
				   int64_t *ids,          /* out: [n] caller memory, the first
							     sizes[0] + sizes[1] + sizes[2] used */
				   int64_t sizes[3]);     /* out */

/* ---------------------------------------------------------------- sampler */

/* Uniform neighbor sampling without replacement for mini-batch training, and the
 * epoch iterator that feeds it (docs/sampler.md).
 *
 * A mini-batch is a list of blocks, one per GNN layer, ordered from the input layer
 * (blocks[0]) to the output layer (blocks[num_layers-1]), as DGL orders them. Each
 * block is a small CSR from destination to source nodes in local ids, and the
 * destination nodes are the first source nodes (DGL's message-flow graph). The node
 * sets nest: block l's destinations are block l+1's sources, and every block's source
 * nodes are a prefix of the batch's input nodes, so one array of global ids,
 * input_ids, names the nodes of every layer:
 *
 *     input_ids: [ seeds | new in block L-1 | ... | new in block 0 ]
 *     block l:   dst = input_ids[0, num_dst)   src = input_ids[0, num_src)
 *
 * Within one block, the source nodes that are not destinations follow in increasing
 * global id. A batch depends only on (opts.seed, epoch, batch index): never on the
 * number of threads, producers or timing.
 *
 * Threads: the calls on one sampler are made from one thread at a time. Batches are
 * owned by the sampler: hand each back with burrow_sampler_release (which recycles its
 * memory); burrow_sampler_close frees any still held. */


/* One layer of a mini-batch: destination row i's sampled neighbors are
 * indices[indptr[i] .. indptr[i+1]), local source ids, increasing global id. */
typedef struct burrow_block {
	int64_t num_dst;         /* destination nodes: local ids [0, num_dst), also the first sources */
	int64_t num_src;         /* source nodes: local ids [0, num_src); global ids input_ids[0, num_src) */
	int64_t num_edges;       /* indptr[num_dst] */
	const int64_t *indptr;   /* [num_dst + 1] row offsets; borrowed from the batch */
	const int32_t *indices;  /* [num_edges] local source ids in [0, num_src); borrowed from the batch */
} burrow_block;

/* A mini-batch. Every pointer is owned by the sampler and valid until the batch is
 * released (or the sampler closed); read it, never free it. */
typedef struct burrow_batch {
	int64_t epoch;           /* the epoch it belongs to; -1 for burrow_sampler_sample/_full */
	int64_t index;           /* its index within the epoch; -1 for burrow_sampler_sample/_full */
	int num_layers;          /* blocks in use */
	burrow_block blocks[BURROW_MAX_LAYERS]; /* [num_layers]: input layer first */
	int64_t num_input;       /* = blocks[0].num_src */
	const int64_t *input_ids;/* [num_input] global ids of every layer's nodes: the rows to gather */
	int64_t num_seeds;       /* output nodes = blocks[num_layers-1].num_dst */
	const int64_t *seeds;    /* [num_seeds] their global ids: the first num_seeds input_ids */
} burrow_batch;

typedef struct burrow_sampler_opts {
	size_t size;            /* sizeof(burrow_sampler_opts), set by burrow_sampler_defaults(); first */
	int num_layers;          /* blocks per batch, 1 .. BURROW_MAX_LAYERS (default 3) */
	int fanouts[BURROW_MAX_LAYERS]; /* neighbors per node in block l, input layer
	                            first; -1 = all, 0 = none (default 15, 10, 5: seeds get 5) */
	int64_t batch_size;      /* seeds per batch (default 1024) */
	uint64_t seed;           /* shuffles and samples are a function of it (default 0) */
	bool drop_last;          /* drop the last batch of an epoch when it is short (default false) */
	int threads;             /* OpenMP threads sampling one batch; 0 = the runtime's default
	                            (default 1: a producer sampling ahead keeps up on one thread
	                            and leaves the other cores to training; see docs/sampler.md) */
	int prefetch;            /* batches sampled ahead into a bounded queue; 0 = sample inside
	                            burrow_sampler_next (default 4) */
	int producers;           /* threads filling that queue, each sampling whole batches with
	                            `threads` OpenMP threads; used when prefetch > 0 (default 1) */
	const char *device;      /* where batches are sampled: "cpu" (default; NULL too), "cuda"
	                            (= cuda:0) or "cuda:N" (borrowed, read by open). The batches are
	                            the CPU's element for element; burrow_sampler_full stays on the
	                            CPU. A device this build or machine lacks fails open */
	int64_t device_csr_budget; /* bytes of GPU memory the graph may take there; a larger graph
	                            stays in pinned host memory, read through unified addressing
	                            (default 0: half the device's free memory) */
	int pin;                 /* producers on CPUs of their own: 0 = when 2 <= producers <= the
	                            CPUs the process may use (a busy core then slows one producer,
	                            not two), -1 = never, leaving placement to the kernel (default 0) */
} burrow_sampler_opts;

/* Fill o with the defaults above. */
BURROW_API void burrow_sampler_defaults(burrow_sampler_opts *o);

typedef struct burrow_sampler burrow_sampler;

/* Open a sampler on graph g over the training nodes ids. The graph is read in place
 * (it may be mmap'd and larger than memory) and checked once (burrow_csr_check: one
 * pass over its ids); the ids are copied and must be distinct and in [0, N). Memory: 16 bytes per training id plus the batches in flight and their
 * scratch, nothing of size N beyond an N-bit check of the ids during open. */
BURROW_API int burrow_sampler_open(burrow_sampler **out,            /* out: caller closes */
				   const burrow_csr *g,             /* borrowed: must outlive the sampler */
				   const int64_t *ids,              /* [n] training node ids, copied */
				   int64_t n,                       /* may be 0: every epoch is empty */
				   const burrow_sampler_opts *opts); /* borrowed; NULL = defaults */
/* Stop the producers and free the sampler and every batch it handed out. NULL is fine. */
BURROW_API void burrow_sampler_close(burrow_sampler *s);
/* Batches in one epoch: ceil(n / batch_size), or floor with drop_last. */
BURROW_API int64_t burrow_sampler_num_batches(const burrow_sampler *s);
/* Where s samples, in words: "cpu", "cuda, graph in device memory" or "cuda, graph in
 * pinned host memory". Static storage. */
BURROW_API const char *burrow_sampler_where(const burrow_sampler *s);
/* Begin epoch `epoch`: the training ids are shuffled as a function of (seed, epoch) and
 * the producers start sampling ahead. Abandons the rest of a current epoch. */
BURROW_API int burrow_sampler_start(burrow_sampler *s, int64_t epoch /* >= 0 */);
/* The next batch of the current epoch into *out (release it when done), or BURROW_DONE
 * (*out = NULL) when the epoch is over. BURROW_E_INVAL before burrow_sampler_start.
 * A producer's error is returned here, with its message, for the batch it failed on. */
BURROW_API int burrow_sampler_next(burrow_sampler *s, burrow_batch **out /* out: release it */);
/* Hand a batch back to the sampler that made it (its memory is reused). NULL is fine. */
BURROW_API void burrow_sampler_release(burrow_sampler *s, burrow_batch *b /* taken */);
/* Sample a batch for explicit seeds in the calling thread, with the sampler's fanouts.
 * The draws are a function of (opts.seed, key, seeds): e.g. evaluation with sampling. */
BURROW_API int burrow_sampler_sample(burrow_sampler *s,
				     const int64_t *seeds,  /* [n] distinct node ids in [0, N), borrowed */
				     int64_t n,             /* >= 1 */
				     uint64_t key,          /* any value; same key, same batch */
				     burrow_batch **out);   /* out: release it */
/* Full-neighbor block over the nodes [first, first + count) for layer-wise inference:
 * a batch with one block (num_layers = 1) whose rows are the whole graph rows. A range that
 * leaves [0, N) is BURROW_E_RANGE. */
BURROW_API int burrow_sampler_full(burrow_sampler *s,
				   int64_t first,           /* first node id */
				   int64_t count,           /* nodes, >= 1, first + count <= N */
				   burrow_batch **out);     /* out: release it */

/* ---------------------------------------------------------------- training */

/* Training and evaluation of a node classifier on a dataset directory. A trainer holds
 * the model, the optimizer and the epoch count; the caller runs epochs, evaluates when it
 * likes and saves checkpoints (see docs/train.md for the pipeline and the file format):
 *
 *     burrow_train_opts o;
 *     burrow_train_defaults(&o);            // mini-batch: sampler -> feature store -> compute
 *     o.cache_fraction = 0.1;               // cache 10% of the feature rows, read the rest
 *     burrow_trainer *t;
 *     if (burrow_trainer_open(&t, ds, &o) < 0) ...
 *     for (int e = 0; e < o.epochs; e++) {
 *         burrow_epoch_stats es = {.size = sizeof es}; burrow_eval_stats ev = {.size = sizeof ev};
 *         if (burrow_trainer_train_epoch(t, &es) < 0 || burrow_trainer_evaluate(t, &ev) < 0) ...
 *     }
 *     burrow_trainer_close(t);
 *
 * Features always come through the feature store (burrow_store on the dataset's
 * features.npy): mini-batch epochs gather each batch's input rows asynchronously, up to
 * `prefetch` batches ahead, and evaluation gathers its chunks' rows; the cache decides how
 * many rows live in memory ("in memory" is cache_fraction = 1). Full-graph mode reads the
 * features whole into memory through the store once, at open. */

enum burrow_model_kind { BURROW_MODEL_SAGE = 1, BURROW_MODEL_GCN = 2, BURROW_MODEL_MLP = 3, BURROW_MODEL_GAT = 4 };
/* GraphSAGE's neighbor aggregator: mean, elementwise max over the neighbors (PyG's
 * SAGEConv(aggr="max"), no pooling MLP), or sum. */
enum burrow_aggr { BURROW_AGGR_MEAN = 0, BURROW_AGGR_MAX = 1, BURROW_AGGR_SUM = 2 };
/* Normalization of each hidden layer's output, before its ReLU (with a learned scale and
 * shift): none, batch norm (statistics of the batch's rows in training, running averages,
 * momentum 0.1, in inference) or layer norm (each row's own). */
enum burrow_norm { BURROW_NORM_NONE = 0, BURROW_NORM_BATCH = 1, BURROW_NORM_LAYER = 2 };
enum burrow_optim_kind { BURROW_OPTIM_ADAM = 1, BURROW_OPTIM_ADAMW = 2, BURROW_OPTIM_SGD = 3 };
#define BURROW_CACHE_AUTO (-1) /* burrow_train_opts.cache_bytes: size the feature cache from memory */
/* burrow_train_opts.sparse_input: how full-graph training's first layer multiplies the
 * features: as a sparse matrix when at most BURROW_SPARSE_AUTO_DENSITY of them are non-zero
 * (AUTO), always (ON) or never (OFF). The sparse product and the dense GEMM cross between 10
 * and 15% non-zero at 1 and 2 threads; at 5% sparse takes about 0.6 of the time (docs/train.md). */
enum burrow_eval_split { BURROW_EVAL_TRAIN = 1, BURROW_EVAL_VALID = 2, BURROW_EVAL_TEST = 4 };
#define BURROW_EVAL_ALL (BURROW_EVAL_TRAIN | BURROW_EVAL_VALID | BURROW_EVAL_TEST)
enum burrow_sparse_input { BURROW_SPARSE_AUTO = 0, BURROW_SPARSE_ON = 1, BURROW_SPARSE_OFF = 2 };
#define BURROW_SPARSE_AUTO_DENSITY 0.05

typedef struct burrow_train_opts {
	size_t size;            /* sizeof(burrow_train_opts), set by burrow_train_defaults(); first */
	int model;              /* enum burrow_model_kind (default SAGE) */
	int layers;             /* default 3, at most BURROW_MAX_LAYERS */
	int64_t hidden;         /* hidden width (default 256) */
	double dropout;         /* after each hidden layer's ReLU (default 0.5) */
	int aggr;               /* sage: enum burrow_aggr (default MEAN) */
	int heads;              /* gat: attention heads, concatenated in hidden layers (they must divide
				   hidden) and averaged in the output layer (default 4) */
	double attn_dropout;    /* gat: dropout on the attention coefficients in training (default 0) */
	int norm;               /* enum burrow_norm after each hidden layer (default NONE) */
	bool residual;          /* add a hidden layer's input to its output where their widths match
				   (every hidden layer but the first, unless the features are as wide
				   as the hidden layers) (default false) */
	int optimizer;          /* enum burrow_optim_kind (default ADAM) */
	double lr;              /* learning rate (default 0.003) */
	double weight_decay;    /* default 0 */
	double momentum;        /* SGD only (default 0) */
	int epochs;             /* epochs a caller's loop runs (default 20; the trainer only reports it) */
	uint64_t seed;          /* weights, dropout and batches derive from it (default 0) */
	double split[3];        /* train, valid, test fractions: a random split of the labeled nodes drawn
				   from seed (burrow_split_random) replaces the dataset's, for graphs that
				   have none; all 0 (default): the dataset's splits */
	bool full_graph;        /* every epoch one step over all nodes with all neighbors, features held
				   in memory (default false: mini-batch, the sampler + feature store pipeline) */
	int64_t batch_size;     /* mini-batch: training nodes per batch (default 1024) */
	int32_t fanout[BURROW_MAX_LAYERS]; /* mini-batch: neighbors per layer, input layer first; -1 all;
					      0 = the default 5 * (layers - l): 15,10,5 for 3 layers
					      (default all 0). mlp samples no neighbors */
	int64_t max_batches;    /* end an epoch after this many batches; 0 = all (default 0) */
	int prefetch;           /* mini-batch: batches sampled, and their feature gathers submitted, ahead
				   of the one computing; 0 = sample, gather, compute one after another
				   (default 2) */
	int64_t cache_bytes;    /* feature-cache budget in bytes, or BURROW_CACHE_AUTO (default): every row
				   when that takes at most a quarter of physical memory (or of the
				   cgroup's memory limit when smaller; and, under
				   RLIMIT_AS, of what is left of it at open once threads' stacks are
				   counted), else that quarter. Full-graph mode uses no cache */
	double cache_fraction;  /* when >= 0 (at most 1) it replaces cache_bytes: this share of the budget
				   that holds every row, so 1 = all the features in memory (default -1) */
	int cache_policy;       /* enum burrow_cache_policy: STATIC (default: the rows of highest degree,
				   filled at open), CLOCK (rows read lately), NONE */
	int store_engine;       /* enum burrow_store_engine of the feature store (default URING) */
	int64_t eval_chunk;     /* destination rows per chunk of layer-wise inference (default 8192) */
	int64_t mem_bytes;      /* layer-wise inference keeps a layer's embeddings in memory while
				   they fit in half of this, else spills them to a scratch npy; 0 = no
				   limit, or under RLIMIT_AS half of what is left of it (default 0) */
	const char *scratch_dir;/* where spills go (borrowed; NULL = $TMPDIR or /tmp) */
	int threads;            /* OpenMP threads of the compute (GEMMs are split over them; OpenBLAS
				   runs single-threaded inside them); 0 = the runtime default, in both
				   modes: the pipeline's sampling and read threads share the cores
				   (docs/train.md, "One thread pool") */
	burrow_progress_fn progress; /* batches within an epoch, phase "train"; evaluation's rows
					(layers x nodes), phase "eval"; may be NULL */
	void *progress_user;
	const char *device;     /* where the model computes: "cpu" (default; NULL too), "cuda" (= cuda:0)
				   or "cuda:N" (borrowed). A device this build or machine lacks is
				   BURROW_E_UNSUPPORTED at open, before any work */
	bool tf32;              /* CUDA: GEMMs may round their inputs to TF32 on tensor cores (default false:
				   float32 throughout, as the CPU) */
	int32_t eval_fanout[BURROW_MAX_LAYERS]; /* evaluation samples each split node's neighbors with
				   these fanouts (input layer first; -1 all), batch_size nodes at a time,
				   instead of layer-wise full-neighbor inference over all nodes. It holds
				   one batch, never N x hidden embeddings: the way to evaluate a graph whose
				   embeddings fit neither memory nor scratch disk (ogbn-papers100M: 114 GB
				   per hidden layer of 256). All 0 (default): layer-wise inference */
	const char *sampler_device; /* mini-batch: where batches are sampled: "cpu", "cuda" (= cuda:0),
				   "cuda:N", or "auto" (NULL too, the default): the model's device when
				   its backend registered a sampler (burrow_sampler_opts.device), else the
				   CPU. The batches are the same on every device, element for element, so
				   the choice changes timings, never results (borrowed; a device this
				   build or machine lacks is BURROW_E_UNSUPPORTED at open) */
	int sparse_input;       /* full-graph: enum burrow_sparse_input (default AUTO). Sparse: the
				   features' CSR and its transpose are built once at open and the first
				   layer's products with them (X W forward, X^T G backward) visit only the
				   non-zeros: the same sums up to float rounding. A backend without the
				   sparse product (CUDA) multiplies dense whatever this says */
	unsigned eval_splits;   /* the splits evaluation scores: an OR of BURROW_EVAL_TRAIN, _VALID,
				   _TEST; a split left out reads -1 (absent) in burrow_eval_stats. 0
				   (default): all three under layer-wise inference (one pass covers
				   every node), valid and test under eval_fanout, whose cost grows with
				   the nodes scored and where the train split is most of them */
} burrow_train_opts;

/* Fill o with the defaults above. */
BURROW_API void burrow_train_defaults(burrow_train_opts *o);
/* The neighbors block `layer` (0 = the input layer) samples under o: o->fanout[layer], or when
 * it is 0 the default 5 * (layers - layer) (15,10,5 for 3 layers); 0 for an mlp, whose
 * batches are their seeds alone; -1 = all. The one place that default lives. */
BURROW_API int burrow_train_fanout(const burrow_train_opts *o, int layer);
/* Parse "sage", "gcn", "mlp", "gat" (0 when unknown) and name a model kind (static string). */
BURROW_API int burrow_model_parse(const char *name);
BURROW_API const char *burrow_model_name(int kind);
/* Parse "mean", "max", "sum" (-1 when unknown) and name an aggregator (static string). */
BURROW_API int burrow_aggr_parse(const char *name);
BURROW_API const char *burrow_aggr_name(int aggr);
/* Parse "none", "batch", "layer" (-1 when unknown) and name a normalization (static string). */
BURROW_API int burrow_norm_parse(const char *name);
BURROW_API const char *burrow_norm_name(int norm);

/* What one training epoch did. Times in seconds. */
typedef struct burrow_epoch_stats {
	size_t size;            /* set by the caller: sizeof(burrow_epoch_stats); the library writes at most this */
	int epoch;              /* 1-based number of the epoch just trained */
	int64_t batches;        /* optimizer steps taken */
	double loss;            /* mean of the batches' losses */
	double train_acc;       /* correct / total over the batches' training rows, dropout on; -1 when
				   no row had a label */
	double epoch_s;         /* training only (no evaluation) */
	double sample_s;        /* time the compute waited for the next batch to be sampled (and its gather
				   submitted): sampling not hidden by the pipeline (0 in full-graph mode) */
	double io_wait_s;       /* time the compute waited for a batch's feature rows (0 in full-graph mode) */
	double compute_s;       /* forward, backward and optimizer */
	int64_t rows_read;      /* feature rows read from disk for the epoch's batches (0 in full-graph mode) */
	double cache_hit_rate;  /* the epoch's feature-cache hits / rows requested; -1 when nothing was
				   requested (full-graph mode) or counted (distributed training) */
} burrow_epoch_stats;

/* Accuracy of the current model, OGB's way: correct / total on each split, from layer-wise
 * full-neighbor inference over all nodes. -1 for an empty split. */
typedef struct burrow_eval_stats {
	size_t size;            /* set by the caller: sizeof(burrow_eval_stats); the library writes at most this */
	double train_acc, valid_acc, test_acc;
	double eval_s;          /* seconds the evaluation took */
	int64_t spilled_bytes;  /* embeddings written to scratch files (0 when they fit --mem) */
} burrow_eval_stats;

/* The best evaluation so far: by valid accuracy, the first wins ties; without a valid
 * split (valid_acc -1), the latest evaluation. */
typedef struct burrow_best {
	int epoch;              /* -1 when nothing was evaluated yet */
	double valid_acc, test_acc;
} burrow_best;

typedef struct burrow_trainer burrow_trainer;

/* A trainer for ds (borrowed: it must outlive the trainer) with a fresh model from o->seed.
 * Opens the feature store on the dataset's features.npy and fills a static cache; in
 * full-graph mode reads every row into memory through it. Nothing else maps or loads the
 * features file. The sampler opens at the first mini-batch epoch. */
BURROW_API int burrow_trainer_open(burrow_trainer **out,        /* out: caller closes */
				   burrow_dataset *ds,           /* borrowed */
				   const burrow_train_opts *o);  /* copied; NULL = defaults */
BURROW_API void burrow_trainer_close(burrow_trainer *t);
/* Train one epoch. A loss that is not finite stops it with BURROW_E_RANGE naming the epoch
 * and batch; the model is then left as it was before that batch's update. */
BURROW_API int burrow_trainer_train_epoch(burrow_trainer *t, burrow_epoch_stats *st /* out */);
/* Evaluate the current model and update the best (by valid accuracy) with this epoch. */
BURROW_API int burrow_trainer_evaluate(burrow_trainer *t, burrow_eval_stats *ev /* out */);
/* The trainer's feature store (borrowed, valid until close): its info, cache and counters. */
BURROW_API burrow_store *burrow_trainer_store(burrow_trainer *t);
/* Epochs trained so far (restored by burrow_trainer_load). */
BURROW_API int burrow_trainer_epoch(const burrow_trainer *t);
BURROW_API burrow_best burrow_trainer_best(const burrow_trainer *t);
/* Where the trainer samples its mini-batches (opts.sampler_device resolved): "cpu" or
 * "cuda:N" (static storage in the trainer, valid until close). */
BURROW_API const char *burrow_trainer_sampler_device(const burrow_trainer *t);
/* A checksum of the model's weights (FNV-1a over their bytes): equal weights, equal sums. */
BURROW_API uint64_t burrow_trainer_weights_checksum(const burrow_trainer *t);
/* Write a checkpoint file atomically: model, optimizer state, epoch, seed, best. */
BURROW_API int burrow_trainer_save(burrow_trainer *t, const char *path);
/* Restore a checkpoint written by burrow_trainer_save. The model's shape must match, and
 * the split it trained on (opts.split and the seed it was drawn from) the trainer's
 * (BURROW_E_INVAL naming both otherwise); a truncated or corrupted file is BURROW_E_FORMAT
 * naming it. The trainer takes the checkpoint's seed, epoch and best. */
BURROW_API int burrow_trainer_load(burrow_trainer *t, const char *path);
/* Read a checkpoint's model options (model, layers, hidden, dropout, aggr, heads,
 * attn_dropout, norm, residual, optimizer, lr, weight decay, momentum, seed, and split when
 * it records one) into o, leaving the other fields. */
BURROW_API int burrow_checkpoint_read_opts(const char *path, burrow_train_opts *o /* in/out */);
/* Write the final layer's output (the logits) for every node, [N, classes] float32, to an
 * npy file, atomically. */
BURROW_API int burrow_trainer_embed(burrow_trainer *t, const char *out_npy);

/* ---------------------------------------------------------------- model outputs */

/* What a trained model gives back, for every node or for a list of nodes, from layer-wise
 * full-neighbor inference (the same as evaluation); every file is written atomically. The
 * trainer keeps the best epoch's weights in memory (a copy taken at each new best of
 * burrow_trainer_evaluate, or loaded from a checkpoint of its best epoch); call
 * burrow_trainer_use_best first to get the outputs of the best model rather than the last.
 *
 *     burrow_trainer_use_best(t);                         // the weights of the best valid epoch
 *     burrow_trainer_embed_layer(t, 1, "h1.npy");         // [N, hidden] after layer 1
 *     burrow_trainer_predict(t, NULL, 0, true, "p.npy");  // [N, classes] probabilities
 *     burrow_npy_array a;
 *     burrow_npy_read("p.npy", &a);                       // back in C: a.shape, a.data
 *     burrow_npy_free(&a);
 */

/* Put the best epoch's weights (burrow_trainer_best) into the model. The optimizer state is
 * left as it is. BURROW_E_NOTFOUND when nothing was evaluated, or when the best epoch came
 * from a loaded checkpoint of a later epoch (its best.ckpt holds those weights). */
BURROW_API int burrow_trainer_use_best(burrow_trainer *t);
/* Write layer `layer`'s output for every node, [N, width] float32, to an npy file: 1 .. the
 * number of layers, 1-based (0 = the last, the logits, as burrow_trainer_embed). A hidden
 * layer's output is taken after its activation, as the next layer reads it. */
BURROW_API int burrow_trainer_embed_layer(burrow_trainer *t, int layer, const char *out_npy);
/* Write predictions to an npy file: the class of each node (argmax of the logits, the one
 * evaluation scores), [n] int32; or with proba the softmax of the logits, [n, classes]
 * float32, each row summing to 1 (within float32 rounding). nodes NULL: every node in id
 * order (n is ignored); else the nodes listed, in that order, repeats allowed; an id outside
 * [0, N) is BURROW_E_RANGE naming it. */
BURROW_API int burrow_trainer_predict(burrow_trainer *t,
				      const int64_t *nodes, /* [n] node ids, borrowed; NULL = all */
				      int64_t n,
				      bool proba,           /* probabilities instead of classes */
				      const char *out_npy); /* written atomically */

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

/* ---------------------------------------------------------------- partitioning */

/* Split a dataset into K parts for distributed training (docs/partition.md). METIS k-way
 * (edge-cut objective) on the symmetric graph without self-loops, one vertex-weight
 * constraint per balanced quantity; graphs beyond METIS's 32-bit indices or the memory
 * budget are first coarsened in passes streamed over the on-disk CSR. Nodes
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
	size_t size;            /* sizeof(burrow_partition_opts), set by burrow_partition_defaults(); first */
	int num_parts;                /* K >= 1 (default 2) */
	unsigned balance;             /* enum burrow_balance bits (default NODES) */
	double ufactor;               /* allowed max part weight / average part weight, per
				       * constraint, > 1 (default 1.05) */
	uint64_t seed;                /* METIS seed, tie breaks, random method (default 0) */
	int method;                   /* enum burrow_part_method (default METIS) */
	size_t mem_bytes;             /* memory budget in bytes; 0 = no limit (default 0) */
	int64_t coarsen_to;           /* coarsen until about this many nodes remain, even when
				       * METIS could take the graph; 0 = only when it cannot */
	int refine_passes;            /* boundary refinement passes and relaxed rounds after
				       * METIS, and on the finest level after coarsening
				       * (default 4) */
	const char *out_dir;          /* borrowed; NULL = <dataset>/parts-K */
	bool overwrite;               /* replace an existing output directory (default false) */
	int threads;                  /* OpenMP threads; 0 = the runtime's default */
	burrow_progress_fn progress;  /* may be NULL */
	void *progress_user;
} burrow_partition_opts;

/* What a partition run measured (also stored in <out>/meta.json). */
typedef struct burrow_partition_stats {
	size_t size;            /* set by the caller: sizeof(burrow_partition_stats); the library writes at most this */
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
	int coarsen_levels;           /* coarsening levels */
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
	/* What burrow_partition measured, as in burrow_partition_stats; -1 (NULL, "") where
	 * meta.json does not record it. */
	const char *dataset_name;     /* the input dataset's name (borrowed) */
	const char *method;           /* "metis" or "random" (borrowed) */
	int64_t sym_edges;            /* undirected edges of the symmetric graph without self-loops */
	double cut_fraction;          /* edge_cut / sym_edges */
	double imbalance_nodes;       /* max part / average, for owned nodes, */
	double imbalance_train;       /*   training nodes (-1 also without a train split) */
	double imbalance_edges;       /*   and stored CSR entries */
	int64_t halo_total;           /* sum of halo_sizes */
	double replication;           /* (N + halo_total) / N */
	const int64_t *send_sizes;    /* [K] entries of each part's send_ids.npy (borrowed) */
	const int64_t *part_edges;    /* [K] CSR entries each part stores (borrowed) */
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

/* ---------------------------------------------------------------- distributed training */

/* Partition-parallel training over MPI (docs/distributed.md): one rank per part of a parts
 * directory written by burrow_partition. Each rank holds its part's rows and halo, and the
 * model is replicated, its gradients all-reduced after every step. Full-graph mode exchanges
 * each layer's halo rows with a non-blocking neighbor all-to-all while the inner rows
 * aggregate. Mini-batch mode (train.full_graph false) samples batches from each rank's own
 * training nodes over the whole graph (nodes owned elsewhere are expanded by their owners),
 * fetches the input rows the rank does not hold from their owners, and runs the same number
 * of steps on every rank. The caller starts MPI (burrow_mpi_start, or MPI_Init itself) before
 * burrow_dist_open and stops it after burrow_dist_close; every call below is collective over
 * every rank of the job, whose number must equal the number of parts. The burrow_dist_* calls are in
 * libburrow_mpi (pkg-config burrow-mpi), which holds all of libburrow too and links MPI;
 * libburrow itself links no MPI. */

enum burrow_halo_mode {
	BURROW_HALO_EXACT = 0,  /* every layer waits for this epoch's halo rows */
	BURROW_HALO_STALE = 1,  /* layers use the previous epoch's halo rows (PipeGCN-style): the
				   exchange overlaps the whole layer; the first epoch is exact */
};

/* How ranks communicate (--comm). */
enum burrow_comm_kind {
	BURROW_COMM_AUTO = 0,   /* MPI for host-memory buffers (the CPU); for GPU buffers NCCL where
				   the build has it, each rank of a node has its own GPU and NCCL
				   starts, else STAGED */
	BURROW_COMM_MPI = 1,    /* MPI on host buffers */
	BURROW_COMM_NCCL = 2,   /* NCCL on device buffers, one GPU per rank (CUDA builds) */
	BURROW_COMM_STAGED = 3, /* device -> pinned host -> MPI -> device on a copy stream, for ranks
				   that share a GPU; on the CPU its copies are memcpy (a check of
				   the path: it trains the same weights as MPI) */
};
/* "auto", "mpi", "nccl" or "staged" as enum burrow_comm_kind; -1 when unknown. */
BURROW_API int burrow_comm_parse(const char *name);
/* The name of an enum burrow_comm_kind ("?" when unknown). */
BURROW_API const char *burrow_comm_name(int kind);

typedef struct burrow_dist_opts {
	size_t size;            /* sizeof(burrow_dist_opts), set by burrow_dist_defaults(); first */
	burrow_train_opts train; /* model, optimizer, seed, threads (0: the node's CPUs divided by
				    its ranks, see burrow_dist_threads); full_graph true (the default
				    here) or false: mini-batch, with batch_size (per rank), fanout,
				    prefetch (0: no overlap with the previous batch's compute),
				    max_batches and the feature-cache options */
	int halo;                /* enum burrow_halo_mode (default EXACT) */
	bool overlap;            /* aggregate inner rows while the exchange is in flight (default
				    true); false posts, waits, then computes: the serialized baseline */
	double boundary_sample;  /* in (0, 1]: each training epoch exchanges a random fraction of
				    the boundary nodes, rescaled by 1 / fraction (BNS-GCN); layer 0
				    reads the halo features stored with the part, evaluation uses
				    every boundary node; not with BURROW_HALO_STALE (default 1: all) */
	bool grad_overlap;       /* both modes: all-reduce each layer's gradients as soon as its
				    backward is done, overlapped with the layers below (default
				    false: one all-reduce after the whole backward, as with overlap
				    false in full-graph mode; see docs/distributed.md) */
	int comm;                /* enum burrow_comm_kind (default AUTO: MPI on the CPU; with
				    train.device a GPU, NCCL where it starts, else STAGED). MPI
				    needs host buffers, NCCL GPU buffers: burrow_dist_check and
				    burrow_dist_open refuse a mismatch with BURROW_E_UNSUPPORTED
				    before anything is opened. train.device "cuda" puts each rank
				    on cuda:<local rank mod the node's GPUs>, "cuda:N" every rank
				    on cuda:N, in both modes; GPUs need boundary_sample 1 */
} burrow_dist_opts;

/* What an epoch communicated (seconds summed over this rank's layers and steps). */
typedef struct burrow_comm_stats {
	size_t size;            /* set by the caller: sizeof(burrow_comm_stats); the library writes at most this */
	double comm_s;          /* halo exchanges from post to completion, plus gradient all-reduces;
				   mini-batch: the sampling exchanges, the feature fetch from post to
				   completion seen, and the all-reduces */
	double exposed_comm_s;  /* of that, the time this rank was blocked waiting */
	double progress_s;      /* full-graph: time inside the test calls that drive the halo
				   exchange between chunks of compute (over TCP, mostly the copies
				   of the exchanged bytes); 0 in mini-batch mode */
} burrow_comm_stats;

typedef struct burrow_dist burrow_dist;

BURROW_API void burrow_dist_defaults(burrow_dist_opts *o);
/* Check o the way burrow_dist_open does before it opens anything (ranges, combinations, a
 * --comm this run cannot serve): 0, or the status and message it would fail with. Needs no
 * MPI, so a launcher can refuse once, before it starts MPI. */
BURROW_API int burrow_dist_check(const burrow_dist_opts *o);
/* Open part <rank> of parts_dir on every rank. A part count that differs from the number
 * of ranks, or a missing or inconsistent part, is an error on the rank that finds it. */
BURROW_API int burrow_dist_open(burrow_dist **out,           /* out: caller closes */
				const char *parts_dir,        /* a parts-K directory */
				const burrow_dist_opts *o);   /* copied; NULL = defaults */
BURROW_API void burrow_dist_close(burrow_dist *d);
BURROW_API int burrow_dist_rank(const burrow_dist *d);
BURROW_API int burrow_dist_size(const burrow_dist *d);
/* This rank's OpenMP and OpenBLAS threads: train.threads when positive, else the CPUs of
 * its node (the union of the affinity masks of the node's ranks) divided by the ranks on
 * that node, at most the CPUs this rank may run on, at least 1. */
BURROW_API int burrow_dist_threads(const burrow_dist *d);
/* The communication this run uses (enum burrow_comm_kind, never AUTO: what auto chose). */
BURROW_API int burrow_dist_comm(const burrow_dist *d);
/* Where a mini-batch run draws the rows this rank expands (train.sampler_device resolved,
 * auto: the model's device when it is a GPU): "cpu" or "cuda:N"; "cpu" in full-graph mode.
 * Static storage in d. */
BURROW_API const char *burrow_dist_sampler_device(const burrow_dist *d);
/* One epoch: full-graph, one step over all parts; mini-batch, max over ranks of
 * ceil(train nodes / batch_size) steps (st->batches). st (loss, train accuracy: global) and
 * cs may be NULL. */
BURROW_API int burrow_dist_train_epoch(burrow_dist *d, burrow_epoch_stats *st, burrow_comm_stats *cs);
/* Accuracy on each split over all parts (correct / total, reduced), updating the best. */
BURROW_API int burrow_dist_evaluate(burrow_dist *d, burrow_eval_stats *ev);
BURROW_API burrow_best burrow_dist_best(const burrow_dist *d);
/* Epochs trained so far (restored by burrow_dist_load). */
BURROW_API int burrow_dist_epoch(const burrow_dist *d);
/* The launcher's MPI (libburrow_mpi): what a program that calls no MPI itself, like the burrow
 * command, needs around burrow_dist_*. Each is over every rank of the job; a failure is
 * BURROW_E_MPI with MPI's message. Start MPI (threads funneled) unless it is started, and
 * this process's rank and the job's size. */
BURROW_API int burrow_mpi_start(int *rank,                    /* out */
				int *size);                   /* out: ranks of the job */
/* Stop MPI (after every burrow_dist_close); nothing when it is not started. */
BURROW_API int burrow_mpi_stop(void);
/* End the whole job with exit code `code` (a rank's fatal failure, so that no rank waits). */
BURROW_API void burrow_mpi_abort(int code);
enum burrow_reduce { BURROW_REDUCE_SUM = 0, BURROW_REDUCE_MAX = 1, BURROW_REDUCE_MIN = 2 };
/* Reduce n values in place over every rank (enum burrow_reduce), the result on every rank. */
BURROW_API int burrow_mpi_allreduce_f64(double *v,            /* [n], in and out */
					int n, int op);
BURROW_API int burrow_mpi_allreduce_i64(int64_t *v,           /* [n], in and out */
					int n, int op);
/* Rank root's `bytes` bytes at buf to every rank's buf. */
BURROW_API int burrow_mpi_bcast(void *buf, size_t bytes, int root);
/* Every rank has reached this call. */
BURROW_API int burrow_mpi_barrier(void);

/* Write a checkpoint of the replicated model (the format of burrow_trainer_save): rank 0
 * writes path atomically; collective, every rank returns rank 0's status. */
BURROW_API int burrow_dist_save(burrow_dist *d, const char *path);
/* Restore one: rank 0 reads and verifies path and broadcasts weights, optimizer state,
 * seed, epoch and best, so only rank 0 needs the file. Collective; on failure nothing
 * changes on any rank. Stale halos restart exact for one epoch. */
BURROW_API int burrow_dist_load(burrow_dist *d, const char *path);
/* FNV-1a over this rank's weights: equal on every rank when the replicas agree. */
BURROW_API uint64_t burrow_dist_weights_checksum(const burrow_dist *d);

/* ---------------------------------------------------------------- CUDA */

/* Number of CUDA devices usable now; BURROW_E_UNSUPPORTED in a build without CUDA,
 * 0 when the build has CUDA but the machine has no device. */
BURROW_API int burrow_cuda_device_count(void);
/* Whether `device` ("cpu", "cuda", "cuda:N"; NULL: the CPU) can compute here: 0, or
 * BURROW_E_INVAL for a name that is none of those and BURROW_E_UNSUPPORTED naming what is
 * missing (a build without CUDA, no GPU, no such index). Cheap: what a CLI calls before any
 * work. */
BURROW_API int burrow_device_check(const char *device);
/* One line about CUDA device `index` ("cuda:0 NVIDIA H200, sm_90, 139.8 GiB") into buf;
 * BURROW_E_UNSUPPORTED without CUDA or that device. */
BURROW_API int burrow_cuda_device_describe(int index, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_H */
