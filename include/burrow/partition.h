/* burrow/partition.h: partitioning for distributed training: METIS parts, the partition book, each part. */
#ifndef BURROW_PARTITION_PUBLIC_H
#define BURROW_PARTITION_PUBLIC_H

#include "core.h"
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

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
	/* Typed parts (version 2, a typed input; docs/partition.md "Typed graphs"): a node is (type,
	 * id), and each type has its own book; node_offsets[i+1] - node_offsets[i] counts part i's
	 * nodes of all types, halo_sizes its halo nodes of all types. */
	int num_types;                /* 0 for homogeneous parts */
	const char *const *type_names; /* [num_types] (borrowed) */
	const int64_t *type_nodes;    /* [num_types] nodes of each type */
	const int64_t *type_offsets;  /* [num_types][K+1]: part i owns type t's new ids
				       * [type_offsets[t*(K+1)+i], type_offsets[t*(K+1)+i+1]) (borrowed) */
	const int64_t *type_halo_sizes; /* [num_types][K] halo nodes of each type per part (borrowed) */
	int target_type;              /* the type labels and splits are on; -1: none (or homogeneous) */
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
 * against each other (ranges, orders, counts). Typed parts are BURROW_E_UNSUPPORTED: their
 * part-i/ is a version-2 dataset with per-type arrays (docs/partition.md "Typed graphs"). */
BURROW_API int burrow_part_open(burrow_part **out,           /* out: caller closes */
				const burrow_parts *parts,    /* borrowed; must outlive the part */
				int i);                       /* 0 <= i < K */
BURROW_API void burrow_part_close(burrow_part *p);
BURROW_API const burrow_part_info *burrow_part_get_info(const burrow_part *p);
/* The part's dataset (borrowed, valid until burrow_part_close). */
BURROW_API const burrow_dataset *burrow_part_dataset(const burrow_part *p);
/* Check every part of typed parts (burrow info --verify): each part's dataset against the
 * books (types owned + halo, no edges into halo rows, splits owned) and its contents
 * (burrow_dataset_verify); per type, orig_ids distinct over the parts and in range, halo_ids
 * ascending ids of their owners, send_ids owned, each send segment equal to its receiver's
 * halo segment. BURROW_E_FORMAT names the file; BURROW_E_INVAL for homogeneous parts. */
BURROW_API int burrow_parts_verify_typed(const burrow_parts *p);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_PARTITION_PUBLIC_H */
