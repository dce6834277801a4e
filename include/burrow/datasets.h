/* burrow/datasets.h: where datasets come from: synthetic graphs, the OGB catalog, download, prep, import. */
#ifndef BURROW_DATASETS_PUBLIC_H
#define BURROW_DATASETS_PUBLIC_H

#include "core.h"
#include "graph.h" /* burrow_edge_reduce */

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- synthetic graphs */

/* CSBM: classes carried by edges and features; RMAT: Graph500 Kronecker edges; PAPERS: a
 * graph of ogbn-papers100M's shape (111,059,956 nodes, 1,615,685,872 directed edges before
 * symmetrizing, 128 float16 features, 172 classes, its split sizes, the rest unlabelled)
 * scaled by `fraction`, with power-law degrees and homophilous edges. */
enum burrow_gen_kind { BURROW_GEN_CSBM = 1, BURROW_GEN_RMAT = 2, BURROW_GEN_PAPERS = 3,
		      BURROW_GEN_HSBM = 4 /* typed: papers (target), authors, fields; docs/datasets.md */,
		      BURROW_GEN_CITATION2 = 5 /* ogbl-citation2's shape: a directed link dataset */,
		      BURROW_GEN_MAG = 6 /* typed: OGB-LSC MAG240M's shape times `fraction`; docs/datasets.md */,
		      BURROW_GEN_IGBH = 7 /* typed: IGBH-full's shape (MLPerf's 4 types) times `fraction` */ };

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
	/* hsbm (num_nodes papers and as many authors, avg_degree, homophily, signal of the
	 * authors' features, num_classes, feat_dim, the split fractions as csbm) */
	double target_signal;   /* class signal of the papers' own features (default 0.5: weak) */
	/* csbm */
	int32_t num_tasks;      /* > 0: a multi-label graph of this many binary tasks (labels.npy int8 [N, T]):
				   task t holds a random half of the classes, and a node is positive with
				   probability 0.75 when its (latent) class is among them, else 0.1; 5% of the
				   labels unknown (-1). 0 (default): one class per node */
	/* link prediction (csbm, rmat, papers, citation2): an edge split (docs/format.md, "edge_split")
	 * instead of labels and node splits; the graph then holds the training edges only. The
	 * generated graph is held in memory while it is split (16 bytes per edge, as import's) */
	double edge_split[3];   /* train, valid, test fractions of the edges, the sum in (0, 1]; all 0
				   (default): none (citation2: 86,956 * fraction edges for valid and test each) */
	int32_t neg_per_source; /* valid's and test's fixed negatives: 0 (default) as many uniform non-edge
				   pairs as positives ("pairs", as ogbl-collab); K > 0: K uniform destinations
				   per positive ("per_source", as ogbl-citation2; citation2's default 1000) */
	bool directed;          /* keep each edge as drawn, no reverse added (citation2's default: true) */
	/* csbm: edge features (edge_features.npy [E, De] float32, in CSR order; both directions of an
	 * edge carry its row). Column 0 is (same class ? +1 : -1) * edge_signal + N(0, 1): whether the
	 * edge joins two nodes of one class; columns 1 .. De-1 are (mu[y_u] + mu[y_v]) / 2 + N(0, 1)
	 * with class means of norm about edge_signal. Drawn per input edge from (seed, edge). */
	int64_t edge_feat_dim;  /* De: 0 (default) none, else in [1, 4096] */
	double edge_signal;     /* default 1.0 */
	bool node_features_from_edges; /* features.npy = edge_reduce of each node's edge features
					  (feat_dim, signal unused), as OGB's examples do for ogbn-proteins */
	burrow_edge_reduce edge_reduce; /* default mean */
	/* mag, igbh: featureless types filled after generating (enum burrow_feat_fill; default
	 * BURROW_FEAT_FILL_NONE: they stay featureless) */
	int fill;
	/* all homogeneous kinds: the output renumbered in a locality order (enum burrow_order; default
	 * BURROW_ORDER_NONE: as generated): written to a scratch folder beside dir, then reordered into
	 * dir (burrow_reorder, under mem_bytes; RANDOM draws from seed); mag, igbh, hsbm refuse it */
	int order;
} burrow_gen_opts;

/* Defaults for a kind (enum burrow_gen_kind). */
BURROW_API void burrow_gen_defaults(burrow_gen_opts *o, int kind);
/* Generate a synthetic dataset into `dir` (written atomically). */
BURROW_API int burrow_gen(const burrow_gen_opts *o, const char *dir);

/* ---------------------------------------------------------------- OGB datasets and import */

/* A dataset the catalog knows (OGB's node and link property prediction sets). Strings are static. */
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
	/* typed datasets (ogbn-mag): num_nodes and num_edges count every type and relation,
	 * feat_dim is the featured types' */
	bool hetero;               /* raw/num-node-dict.csv.gz and raw/relations/ (typed) */
	int num_relations;         /* relations in the zip (0 when not typed) */
	/* link prediction datasets (ogbl-*): num_edges counts raw/edge.csv.gz's training edges,
	 * num_classes is 0, and split/<split>/{train,valid,test}.pt hold the edge split */
	const char *eval_metric;   /* OGB's metric: "hits@50", "hits@100", "hits@20", "mrr"; NULL for node datasets */
	/* edge features and multi-label targets (ogbn-proteins) */
	int64_t edge_feat_dim;     /* columns of raw/edge-feat.csv.gz; 0: none */
	int32_t num_tasks;         /* binary tasks of raw/node-label.csv.gz (multi-label); 0: single-label */
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

/* Features for node types that have none (typed datasets): none, or the mean of the neighbors'
 * features (docs/datasets.md says over which relations). */
enum burrow_feat_fill { BURROW_FEAT_FILL_NONE = 0, BURROW_FEAT_FILL_MEAN = 1 };

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
	/* typed datasets (ogbn-mag) */
	bool add_reverse;          /* add (dst, "rev_" name, src) for each relation with src != dst; make a
				    * relation with src == dst symmetric (default false) */
	int fill;                  /* enum burrow_feat_fill (default BURROW_FEAT_FILL_NONE) */
	/* edge features (ogbn-proteins: no node features of its own) */
	bool node_features_from_edges; /* features.npy [N, De] float32 reduced from the edge features over
					* each node's CSR row (edge_reduce), as OGB's proteins examples do */
	burrow_edge_reduce edge_reduce; /* BURROW_EDGE_REDUCE_MEAN (default), SUM or MAX */
	/* in-place layouts: source is the folder that holds processed/ (OGB-LSC's mag240m_kddcup2021,
	 * or IGB's <size> folder); features are named where they are, not copied (docs/datasets.md) */
	const char *layout;        /* NULL: an OGB dataset (above); "mag240m" or "igbh" */
	int classes;               /* igbh: 19 (default) or 2983 (node_label_19.npy or node_label_2K.npy) */
	int order;                 /* enum burrow_order: the output renumbered as burrow_gen_opts.order
				    * (RANDOM draws from seed 0); BURROW_ORDER_NONE (default): OGB's order.
				    * Typed datasets refuse it */
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
	int64_t edge_split_sizes[3]; /* edges in train, valid, test (burrow_import_opts.edge_split; else 0) */
	int64_t isolated;          /* nodes without an edge (more than half of N is warned about) */
	bool orig_ids_text;        /* relabel: the ids were text (orig_ids.txt), else integers (orig_ids.npy) */
} burrow_import_stats;

/* A node type of a typed import: its name, count and features (or none). */
typedef struct burrow_import_type {
	const char *name;          /* 1 .. 63 of [A-Za-z0-9_-] */
	int64_t num_nodes;         /* >= 1; the type's ids are [0, num_nodes) */
	const char *features;      /* .npy [num_nodes, D] float32/float16/float64, or NULL */
} burrow_import_type;

/* A relation of a typed import: edges src -> dst, one file. */
typedef struct burrow_import_relation {
	const char *src, *name, *dst; /* type names and the relation's name */
	const char *edges;         /* as burrow_import_opts.edges: ids of src's type, then dst's */
} burrow_import_relation;

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
	/* typed graphs (format version 2), instead of edges, num_nodes and features: labels,
	 * splits (files, split_dir or split) are the target type's. Stats count every type and
	 * relation; self-loops and duplicates are not tallied (a relation keeps self-loops). */
	int num_types;             /* 0 (default): homogeneous; else 1 .. BURROW_MAX_TYPES */
	const burrow_import_type *types;         /* [num_types], borrowed */
	int num_relations;         /* 1 .. BURROW_MAX_RELATIONS (reverses included) */
	const burrow_import_relation *relations; /* [num_relations], borrowed */
	const char *target;        /* the labelled type (required with labels) */
	const char *split_dir;     /* DIR/{train,valid,test}.npy, or OGB's DIR/<target>/{...}.npy */
	bool add_reverse;          /* as burrow_prep_opts.add_reverse */
	int fill;                  /* as burrow_prep_opts.fill */
	/* link prediction (homogeneous graphs; no labels or node splits then): a random split of
	 * the edges, seeded by split_seed; the graph holds the training edges, valid and test get
	 * as many uniformly drawn non-edge node pairs as negatives (docs/format.md, "edge_split") */
	double edge_split[3];      /* train, valid, test fractions of the edges; all 0 (default): none */
	/* edge features (homogeneous graphs; docs/format.md) */
	const char *edge_features; /* .npy [M] (weights) or [M, De] float32/float16/float64, or text (csv, tsv
				    * or blank-separated, .gz): one row per input edge, in the edge list's
				    * order (M = the edges read); each row follows its edge into the CSR
				    * (both directions when undirected; of repeats, the first wins); NULL: none */
	bool node_features_from_edges; /* features.npy [N, De] float32 reduced from the edge features
					* over each node's CSR row (edge_reduce); excludes `features` */
	burrow_edge_reduce edge_reduce; /* BURROW_EDGE_REDUCE_MEAN (default), SUM or MAX */
	/* users' ids (homogeneous graphs; docs/format.md, "Original ids") */
	bool relabel;              /* the edge list's ids (integers, or any text without blanks or commas) are
				    * keys numbered 0..N-1 in first-seen order (content's lines first, then the
				    * edges' src, dst, line by line); orig_ids.npy (int64) or orig_ids.txt (text
				    * keys) maps back. .npy features, labels and split ids / masks are then keyed
				    * by the original integer ids (row k = id k). num_nodes must be 0 */
	const char *content;       /* a LINQS-style node file instead of features and labels: "id f_1 .. f_D
				    * label" a line (blanks, tabs or commas; .gz; '#' comments); labels are class
				    * ids, or names numbered in sorted order; nodes it lacks get zero features and
				    * no label. NULL: none */
	const char *split_name;    /* the split given (files or split) is split/<name>/{train,valid,test}.npy
				    * and meta.json's "named_splits"[name] (1 .. 63 of [A-Za-z0-9_-]), chosen
				    * at training with burrow_dataset_select_split; NULL: the default split/ */
	bool multilabel;           /* labels [N, T] of 0 and 1 stay T binary tasks even when every row has one 1
				    * (default false: such one-hot labels become class ids) */
	int order;                 /* enum burrow_order: the output renumbered as burrow_gen_opts.order
				    * (RANDOM draws from split_seed), orig_ids composed with relabel's;
				    * BURROW_ORDER_NONE (default): the input's ids. Typed graphs refuse it */
} burrow_import_opts;
BURROW_API void burrow_import_defaults(burrow_import_opts *o);

/* Write a dataset directory from a user's own files (see burrow_import_opts), atomically. */
BURROW_API int burrow_import(const char *out,                /* the dataset directory to write */
			     const burrow_import_opts *o);   /* borrowed; edges required */

/* Add the named split o->split_name to the dataset directory dir, from o's train / valid / test
 * files or its random split (split, split_seed; over the labeled nodes), as burrow_import reads
 * them (a dataset with orig_ids maps the files' original ids): split/<name>/ is written whole
 * and renamed into place, then meta.json's "named_splits" gets it; nothing else is rewritten.
 * An existing split of that name is BURROW_E_EXISTS unless o->overwrite. o->stats gets the
 * split sizes. Datasets of one node type. */
BURROW_API int burrow_import_add_split(const char *dir, const burrow_import_opts *o);

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

/* ---------------------------------------------------------------- reorder: a locality order */

/* How burrow_reorder numbers the nodes (docs/store.md, "A locality order"). */
typedef enum burrow_order {
	BURROW_ORDER_NONE = -1,  /* no reordering (gen, prep and import's default; burrow_reorder refuses it) */
	BURROW_ORDER_DEGREE = 0, /* hubs first: degree descending, ties to the lower id */
	BURROW_ORDER_BFS = 1,    /* breadth-first from the highest-degree node not yet placed, each row's new
				    neighbors in degree order (descending, ties to the lower id) */
	BURROW_ORDER_RCM = 2,    /* reverse Cuthill-McKee: breadth-first from the lowest-degree node not yet
				    placed, neighbors by ascending degree, the whole order reversed */
	BURROW_ORDER_RANDOM = 3, /* a permutation drawn from the seed (a control: no locality) */
} burrow_order;

typedef struct burrow_reorder_opts {
	size_t size;               /* sizeof(burrow_reorder_opts), set by burrow_reorder_defaults(); first */
	int order;                 /* enum burrow_order (default BFS) */
	const int64_t *perm;       /* [N] borrowed, or NULL (default): perm[i] is the input id of new node i,
				      used instead of the order (checked: a permutation of [0, N)) */
	uint64_t seed;             /* BURROW_ORDER_RANDOM's draw (default 0) */
	size_t mem_bytes;          /* memory budget; 0 (default): half of the machine's. The id maps
				      (24 bytes a node), labels and splits must fit; features stream through
				      the rest in chunks */
	bool overwrite;            /* replace an existing output dataset (default false) */
	burrow_progress_fn progress; /* may be NULL */
	void *progress_user;
} burrow_reorder_opts;
BURROW_API void burrow_reorder_defaults(burrow_reorder_opts *o);
/* The order's permutation of g: perm[i] is the node of g placed at i. */
BURROW_API int burrow_order_compute(const burrow_csr *g,  /* borrowed */
				    int order,            /* enum burrow_order */
				    uint64_t seed,        /* RANDOM's draw */
				    int64_t *perm);       /* out: [g->num_nodes] caller memory */
/* Renumber the nodes of the homogeneous (version 1) dataset in_dir and write it to out_dir: the
 * CSR (rows permuted, ids renamed, rows sorted), features (read in the new order, written
 * sequentially), edge features (following their entries), labels, splits (renamed, sorted),
 * named splits, edge splits (renamed, rows in place) and orig_ids.npy (composed with the input's
 * own, if any), atomically. Refuses a typed dataset. */
BURROW_API int burrow_reorder(const char *in_dir, const char *out_dir, const burrow_reorder_opts *o /* NULL = defaults */);
/* "degree", "bfs", "rcm", "random" into *out; else BURROW_E_INVAL. */
BURROW_API int burrow_order_parse(const char *s, int *out);
/* The order's name (static; "?" when unknown). */
BURROW_API const char *burrow_order_name(int order);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_DATASETS_PUBLIC_H */
