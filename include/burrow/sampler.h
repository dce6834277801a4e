/* burrow/sampler.h: mini-batches: neighbor sampling of blocks, one batch at a time or pipelined. */
#ifndef BURROW_SAMPLER_PUBLIC_H
#define BURROW_SAMPLER_PUBLIC_H

#include "core.h"
#include "graph.h"

#ifdef __cplusplus
extern "C" {
#endif

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
	const int64_t *edge_ids; /* [num_edges] each edge's position in the graph's CSR (its row of
				    edge_features.npy) with burrow_sampler_opts.edge_ids, else NULL */
	const float *edge_weight; /* [num_edges] LABOR-*'s weights (burrow_sampler_opts.labor_star): a mean
				    aggregation weighted by them estimates the mean over the whole row
				    (each row's weights sum to its edge count; 1 for a row taken whole);
				    NULL for the other samplers */
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
	bool edge_ids;           /* each block also lists its edges' CSR positions (burrow_block.edge_ids),
	                            so that a batch can gather their edge features; the node ids and
	                            blocks are the same bits either way. CPU sampling only (default false) */
	bool labor;              /* LABOR sampling (docs/sampler.md): each layer gives every source node one
	                            random variate shared by all its destinations, and a row keeps its
	                            fanout neighbors of smallest variate: each row's picks are still a
	                            uniform subset of its fanout, but destinations sharing neighbors pick
	                            the same ones, so a batch has fewer distinct inputs. On the CPU or a
	                            CUDA device, the same batches (default false: neighbor sampling) */
	int labor_star;          /* LABOR-* (docs/sampler.md) when > 0, whatever `labor` says: the variates
	                            above, and per-source probabilities pi shared by every row, refined by
	                            at most this many rounds of the paper's fixed point (fewer once the
	                            expected distinct sources stop falling), sources likely taken by
	                            some row made likelier for all; a row of degree d > fanout k keeps
	                            neighbor s when its variate is below min(1, c pi_s), c chosen so that
	                            the row keeps k neighbors in expectation (its count varies), and its
	                            blocks carry edge weights (burrow_block.edge_weight). On the CPU or a
	                            CUDA device, the same batches and weights; 0 .. 64 (default 0: off) */
	int labor_batch_dependency; /* K >= 2 with labor or labor_star: an epoch's batches share LABOR's
	                            variates in groups of K (GraphBolt's batch_dependency): batch i's
	                            variates are i mod K / K of the way from those of group i / K to the
	                            next group's, each batch's still uniform and independent across
	                            sources, so consecutive batches pick overlapping sources and a cache
	                            of recent rows hits more (docs/sampler.md). Epoch batches only
	                            (burrow_sampler_sample keeps its key's). Default 0: off (0 and 1) */
} burrow_sampler_opts;

/* The rounds of LABOR-*'s fixed point that training's --sampler labor-star asks for
 * (burrow_sampler_opts.labor_star). */
#define BURROW_LABOR_STAR_ROUNDS 3

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

/* ---------------------------------------------------------------- typed sampler */

/* Neighbor sampling on a typed graph (burrow_hetero): seeds are target-type nodes; at each
 * layer, every frontier node of type t draws, in each relation r whose dst type is t, up to
 * fanout(l, r) of its in-neighbors in r without replacement (uniformly, the draws keyed as
 * the homogeneous sampler's, by (seed, epoch or key, batch, layer, relation, node)). Node
 * ids are type-local. Per type the node lists nest as in the homogeneous batch:
 *
 *     input_ids[t]: [ type t's level-L nodes (the seeds when t is the target) | new at level L-1 | ... | new at level 0 ]
 *     level l of type t = input_ids[t][0, num_nodes[l][t])      (level 0: the inputs; level L: the seeds)
 *     block (l, r): dst = level l+1 of dst_type(r), src = level l of src_type(r)
 *
 * so a type's level-(l+1) nodes are the first of its level-l nodes (a node of the frontier
 * keeps its row, its self term reads x_t[0, num_dst)). Within a level, the nodes of type t
 * new at that level follow in increasing id. A block's rows are its dst nodes' sampled
 * in-neighbors in r (local ids into src's level-l list), in increasing src id. Batches
 * depend only on (seed, epoch, batch index), never on threads. */
typedef struct burrow_typed_batch {
	int64_t epoch, index;     /* -1 for burrow_typed_sampler_sample */
	int num_layers, num_types, num_relations;
	int64_t num_nodes[BURROW_MAX_LAYERS + 1][BURROW_MAX_TYPES]; /* [level][type] */
	const int64_t *input_ids[BURROW_MAX_TYPES];   /* [num_nodes[0][t]] type-local ids; NULL when 0 */
	burrow_block blocks[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS]; /* [layer][relation]: num_dst =
				     num_nodes[l+1][dst type], num_src = num_nodes[l][src type] */
	int64_t num_seeds;        /* = num_nodes[num_layers][target] */
	const int64_t *seeds;     /* = input_ids[target] */
} burrow_typed_batch;

/* burrow_typed_sampler_opts.fanout_mode: what a fanout counts at a layer. RELATION: each
 * destination draws up to fanout(l, r) in-edges in every relation r into its type apart (the
 * relations' draws multiply a batch). NODE: each destination draws up to fanouts[l] in-edges
 * among all its in-edges of the layer's relations, concatenated (relations ascending, each row
 * in CSR order), uniformly without replacement from the stream (seed, epoch or key, batch,
 * layer, type, node); each pick goes to its relation's block (DGL's MAG240M baseline on its
 * homogenized graph). With LABOR, a destination keeps its fanouts[l] in-edges of smallest
 * shared variate across the relations. */
enum burrow_typed_fanout { BURROW_TYPED_FANOUT_RELATION = 0, BURROW_TYPED_FANOUT_NODE = 1 };

typedef struct burrow_typed_sampler_opts {
	size_t size;             /* sizeof(burrow_typed_sampler_opts), set by the defaults; first */
	int num_layers;          /* default 2 */
	int fanouts[BURROW_MAX_LAYERS];  /* every relation's fanout at layer l, input layer first (default 25, 20) */
	/* per relation, when set: rel_fanouts[l][r] > -2 overrides fanouts[l] for relation r
	   (-1 all, 0 none); default every entry -2 (unset) */
	int rel_fanouts[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
	int64_t batch_size;      /* default 1024 */
	uint64_t seed;           /* default 0 */
	bool drop_last;          /* default false */
	int threads;             /* OpenMP threads per batch; 0 = runtime default (default 1) */
	bool labor;              /* LABOR: per layer and source type, one variate per source node shared by every
				    relation and row; a row keeps its fanout of smallest variate (default false) */
	int fanout_mode;         /* enum burrow_typed_fanout: RELATION (default) draws fanout(l, r) per relation;
				    NODE draws fanouts[l] per destination among all its in-edges of the layer's
				    relations into its type (rel_fanouts may only leave a relation out: 0) */
	int labor_star;          /* LABOR-* (docs/sampler.md) when > 0, whatever `labor` says: each relation of a
				    layer is one block of burrow_sampler_opts.labor_star's, its sources' probabilities
				    pi by at most this many rounds of the fixed point over that relation's rows, the
				    variates LABOR's (per layer and source type); a row of degree d > fanout(l, r)
				    keeps its fanout in expectation, and the block carries edge weights
				    (burrow_block.edge_weight; NULL where the fanout is -1). Fanouts per relation
				    only (not FANOUT_NODE); 0 .. 64 (default 0: off) */
} burrow_typed_sampler_opts;
BURROW_API void burrow_typed_sampler_defaults(burrow_typed_sampler_opts *o);

typedef struct burrow_typed_sampler burrow_typed_sampler;
/* A sampler over h (borrowed, must outlive it; checked at open by burrow_hetero_check, one pass over every relation) and the
 * target-type seeds ids (copied, distinct, in range). */
BURROW_API int burrow_typed_sampler_open(burrow_typed_sampler **out, const burrow_hetero *h, const int64_t *ids,
					 int64_t n, const burrow_typed_sampler_opts *opts);
BURROW_API void burrow_typed_sampler_close(burrow_typed_sampler *s);
BURROW_API int64_t burrow_typed_sampler_num_batches(const burrow_typed_sampler *s);
/* Batch k of epoch `epoch` (the ids shuffled as a function of (seed, epoch)), in the
 * calling thread: any k in any order gives the same batch. */
BURROW_API int burrow_typed_sampler_batch(burrow_typed_sampler *s, int64_t epoch, int64_t k,
					  burrow_typed_batch **out /* out: release it */);
/* A batch over explicit target-type seeds (distinct), its draws keyed by key. */
BURROW_API int burrow_typed_sampler_sample(burrow_typed_sampler *s, const int64_t *seeds, int64_t n, uint64_t key,
					   burrow_typed_batch **out);
BURROW_API void burrow_typed_sampler_release(burrow_typed_sampler *s, burrow_typed_batch *b /* taken */);

/* ---------------------------------------------------------------- edge sampler (link prediction) */

/* Edge mini-batches for link prediction. The training positive edges are shuffled per epoch
 * as a function of (seed, epoch); batch k takes the next batch_size of them and, per
 * positive (u, v), `neg` negatives (u, w) with w uniform over [0, N), drawn from the stream
 * of (seed, epoch, k). Its seeds are the distinct endpoints of every pair (in increasing id)
 * and ONE neighborhood is sampled for all of them, as burrow_sampler_sample would (the same
 * draws, keyed by (seed, epoch, k)), except that the batch's positive edges (and their
 * reverses with exclude_reverse) are left out of every block: a row that holds an excluded
 * edge draws among its other entries. A batch depends only on (seed, epoch, k), never on
 * threads. Batches are owned by the sampler: release each. */
typedef struct burrow_edge_batch {
	const burrow_batch *nodes;  /* the seeds' sampled blocks; nodes->seeds are the pairs' endpoints */
	int64_t num_pairs;          /* positives first, then negatives (num_pos * neg of them) */
	int64_t num_pos;
	const int32_t *src, *dst;   /* [num_pairs] seed-local indices: the pair's ids are seeds[src[i]], seeds[dst[i]] */
	const float *label;         /* [num_pairs] 1 for a positive, 0 for a negative */
	int64_t epoch, index;
} burrow_edge_batch;

/* burrow_edge_sampler_opts.neg_mode: how a negative of the positive (u, v) is drawn. */
enum burrow_neg_mode {
	BURROW_NEG_DST = 0,  /* (u, w), w uniform over the nodes: the destination corrupted */
	BURROW_NEG_BOTH = 1, /* (w1, w2), both uniform (PyG LinkNeighborLoader's binary negatives) */
};

typedef struct burrow_edge_sampler_opts {
	size_t size;             /* sizeof(burrow_edge_sampler_opts), set by the defaults; first */
	int num_layers;          /* default 3 */
	int fanouts[BURROW_MAX_LAYERS]; /* as burrow_sampler_opts' (default 15, 10, 5) */
	int64_t batch_size;      /* positive edges per batch (default 1024) */
	int neg;                 /* negatives per positive, >= 0 (default 1) */
	uint64_t seed;           /* default 0 */
	bool exclude;            /* leave the batch's positives out of its blocks (default true) */
	bool exclude_reverse;    /* and their reverses (a symmetric graph; default true) */
	int threads;             /* OpenMP threads per batch; 0 = the runtime default (default 1) */
	int neg_mode;            /* enum burrow_neg_mode (default DST) */
} burrow_edge_sampler_opts;
BURROW_API void burrow_edge_sampler_defaults(burrow_edge_sampler_opts *o);

typedef struct burrow_edge_sampler burrow_edge_sampler;
/* A sampler over g (borrowed; checked with burrow_csr_check at open) and the n positive
 * training edges pos [n, 2] (copied; ids in [0, N)). */
BURROW_API int burrow_edge_sampler_open(burrow_edge_sampler **out, const burrow_csr *g, const int64_t *pos, int64_t n,
					const burrow_edge_sampler_opts *opts);
BURROW_API void burrow_edge_sampler_close(burrow_edge_sampler *s);
/* ceil(n / batch_size). */
BURROW_API int64_t burrow_edge_sampler_num_batches(const burrow_edge_sampler *s);
/* Batch k of epoch `epoch`, in the calling thread: any k in any order gives the same batch. */
BURROW_API int burrow_edge_sampler_batch(burrow_edge_sampler *s, int64_t epoch, int64_t k,
					 burrow_edge_batch **out /* out: release it */);
BURROW_API void burrow_edge_sampler_release(burrow_edge_sampler *s, burrow_edge_batch *b /* taken */);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_SAMPLER_PUBLIC_H */
