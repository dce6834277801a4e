/* sampler_internal.h: what the sampler's files share: a batch's storage and the sampling kernel. */
#ifndef BURROW_SAMPLER_INTERNAL_H
#define BURROW_SAMPLER_INTERNAL_H

#include "../core/internal.h"
#include "draw.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Keys (the homogeneous and the typed sampler): an epoch's batches use
 * bw_key(bw_key(seed, epoch), index); the shuffle and the explicit-seed batches use
 * coordinates that no epoch or index takes. */
#define BW_KEY_SHUFFLE UINT64_MAX
#define BW_KEY_EXPLICIT (UINT64_MAX - 1)

/* Stable LSD radix sort of a[0, n) by bits [lo, lo + nb), one thread, digits of at most
 * `maxd` bits counted in h (>= 2^maxd entries); returns a or tmp, whichever holds the
 * result (the other is scratch). */
uint64_t *bw_lsd_sort(uint64_t *a, uint64_t *tmp, int64_t n, int lo, int nb, int maxd, size_t *h);

/* A batch as the sampler holds it: the public part first, then the arrays it points
 * into, which keep their capacity when the batch is recycled. */
typedef struct bw_sampled {
	burrow_batch pub;             /* first member: a burrow_batch * is a bw_sampled * */
	const void *owner;            /* the sampler that made it (checked on release) */
	bool held;                    /* handed out or being filled, not on the free list */
	struct bw_sampled *next_all;    /* every batch of the owner, for close */
	struct bw_sampled *next_free;   /* the owner's free list */
	int64_t *nodes;               /* [nodes_cap] input ids */
	size_t nodes_cap;
	int64_t *indptr[BURROW_MAX_LAYERS];
	size_t indptr_cap[BURROW_MAX_LAYERS];
	int32_t *indices[BURROW_MAX_LAYERS];
	size_t indices_cap[BURROW_MAX_LAYERS];
	int64_t *eids[BURROW_MAX_LAYERS];   /* each block edge's CSR position, when the ctx records them */
	size_t eids_cap[BURROW_MAX_LAYERS];
	float *ew[BURROW_MAX_LAYERS];       /* each block edge's LABOR-* weight, when the ctx samples LABOR-* */
	size_t ew_cap[BURROW_MAX_LAYERS];
} bw_sampled;

/* burrow_typed_sampler_open without its pass over every relation (burrow_hetero_check): for
 * a graph already checked, a dataset's (its open validated every relation), so that each
 * evaluation's sampler does not read the whole graph again. */
int bw_typed_sampler_open_checked(burrow_typed_sampler **out, const burrow_hetero *h, const int64_t *ids, int64_t n,
				  const burrow_typed_sampler_opts *opts);
/* burrow_sampler_open on a graph already checked, a dataset's (burrow_dataset_open scanned
 * it, or its validation record says its files have not changed since): it skips the scan of
 * every id, which on a mapped graph costs a pass over the file and leaves all its pages
 * resident (at full papers100M size 13 GB, at every evaluation). after (may be NULL) is
 * called with after_user in the sampling thread once each CPU batch is sampled, and from
 * the sampling threads (several at once) every BW_TRIM_ROWS rows each reads: the trainer drops
 * the graph's mapped pages there (bw_dataset_trim_graph), so that they pile up neither over
 * an epoch nor within one batch's largest layer. */
int bw_sampler_open_checked(burrow_sampler **out, const burrow_csr *g, const int64_t *ids, int64_t n,
			    const burrow_sampler_opts *opts, void (*after)(void *), void *after_user);

/* Free a batch's arrays (not the struct). */
void bw_sampled_free_arrays(bw_sampled *b);
/* Make b hold block l's arrays (nd + 1 offsets, E indices) and `nodes` input ids, keeping
 * the input ids already there (the GPU sampler downloads into them). */
int bw_sampled_reserve(bw_sampled *b, int l, int64_t nd, int64_t E, int64_t nodes);
/* Fill the public view of b once the blocks and input ids are in place. */
void bw_sampled_finish(bw_sampled *b, int num_layers, int64_t nseeds, int64_t ninput);

/* Rows a sampling thread reads between two calls of bw_sample_ctx.trim, once for their
 * offsets and once for their ids: each row read maps its page and up to 15 cached neighbors
 * (the kernel's fault-around), so at most 4096 x 64 KiB = 256 MiB per thread between two
 * trims. */
#define BW_TRIM_ROWS 4096

/* LABOR-*'s preparation (sample.c, bw_labor_star_prep) splits its work in chunks fixed by the
 * layer's shape, never by the thread count: BW_LS_ROWS rows, or about BW_LS_CHUNK neighbors
 * sorted by source (a chunk starts at a source's first neighbor, so that each source is one
 * thread's). What crosses chunks is exact (counts, maxima, a stable sort) or summed by one
 * thread in source order, so a layer's bits do not depend on the threads. */
#define BW_LS_ROWS 64
#define BW_LS_CHUNK 16384

/* One distinct source of a LABOR-* layer: what the rows read of it together. */
typedef struct bw_ls_node {
	double pi;                    /* its probability weight, shared by every row */
	double r;                     /* its variate in [0, 1) */
} bw_ls_node;

/* LABOR's batch dependency for one batch and layer (labor.h, bw_labor_dep_variate): the
 * variates of its group's and the next group's keys, mixed by the angle c pi / 2. */
typedef struct bw_labor_dep {
	uint64_t k1, k2;              /* the two groups' keys for the layer */
	double cos, sin;              /* cos and sin of c pi / 2, c = (index mod K) / K */
} bw_labor_dep;

/* LABOR's batch dependency for one batch (sampler.c, set_dep), which labor.h's bw_labor_layer
 * turns into each layer's bw_labor_dep on the CPU and on the GPU alike. */
typedef struct bw_labor_batch {
	uint64_t k1, k2;              /* the keys of the batch's group and the next (both 0: none, the
	                                 variates of the batch's own key) */
	double c;                     /* its position in [0, 1) between them */
} bw_labor_batch;

/* Per-OpenMP-thread scratch: for fanouts above BW_SMALL_FANOUT (Floyd with a hash set),
 * and for numbering a bucket of ids (a bitmap and a local id per low id bits). */
typedef struct bw_row_scratch {
	int64_t *pos;                 /* [max_fanout] picked positions */
	int64_t *table;               /* [table_cap] hash set of position + 1 */
	size_t table_cap;             /* a power of two >= 2 * max_fanout */
	uint64_t *bits;               /* [bits_cap] which low id bits a bucket holds */
	int32_t *lid;                 /* [lid_cap] their local ids */
	size_t bits_cap, lid_cap;
} bw_row_scratch;


/* The scratch of one sampling thread (a producer, or the caller): reused across
 * batches, so that sampling allocates nothing once it has warmed up. */
typedef struct bw_sample_ctx {
	int threads;                  /* OpenMP threads for one batch */
	int max_fanout;               /* largest positive fanout served (row scratch size) */
	uint64_t *items, *tmp, *srt;  /* packed (global id, edge): drawn, placed by bucket, sorted */
	size_t items_cap, tmp_cap, srt_cap;
	int64_t *row;                 /* [2 * nd]: per destination, graph row start and degree */
	size_t row_cap;
	int64_t *sg, *sg2;            /* the batch's node set sorted by global id ... */
	int32_t *sl, *sl2;            /* ... and their local ids (two copies: merge source, target) */
	size_t sg_cap, sg2_cap, sl_cap, sl2_cap;
	size_t *hist;                 /* [threads * 2048] per-thread bucket counts */
	int64_t *off, *bstart;        /* [threads * 2049] per-thread scatter cursors, bucket starts */
	int64_t *bnew;                /* [2048 + 1] new nodes per bucket, then their offsets */
	bw_row_scratch *rows;         /* [threads] */
	/* called (when set) from the sampling threads every BW_TRIM_ROWS rows each reads, and may
	 * run on several threads at once: the trainer drops the graph's mapped pages there, so
	 * that one large layer (150K rows at fanouts 15,10 and batch 1024) does not map them all
	 * before the batch ends */
	void (*trim)(void *);
	void *trim_user;
	bool edge_ids;                /* record each block edge's CSR position (bw_sampled.eids; not with an expander) */
	bool labor;                   /* LABOR's shared variates instead of per-row draws (not with an expander) */
	int labor_star;               /* > 0: LABOR-* with at most this many rounds (not with an expander) */
	/* LABOR-*'s scratch for one layer (sample.c, bw_labor_star_prep): the layer's distinct
	 * sources (m of them) and every row's whole neighborhood */
	int32_t *ls_src;              /* [sum of the rows' degrees] each neighbor's source index */
	int64_t *ls_off;              /* [nd + 1] where each row's neighbors start in ls_src */
	double *ls_c;                 /* [nd] each row's c (rows taken whole: 1 / their smallest pi) */
	struct bw_ls_node *ls_node;   /* [m] each source's pi and variate */
	double *ls_buf;               /* [threads * largest degree] each thread's row's pi, while its c is solved */
	int64_t *ls_chunk;            /* [2 (chunks + 1)] where each chunk of the sorted neighbors starts, its first source */
	size_t ls_src_cap, ls_off_cap, ls_c_cap, ls_node_cap, ls_buf_cap, ls_chunk_cap;
	/* LABOR's batch dependency for the next batch (set by the caller before bw_sample_batch;
	 * its keys 0: none) */
	bw_labor_batch dep;
} bw_sample_ctx;
/* The key coordinate of LABOR's batch-dependency groups (an index no batch takes). */
#define BW_KEY_LABOR_GROUP (UINT64_MAX - 2)
/* Keys LABOR's per-layer variates apart from the rows' streams bw_key(lkey, v). */
#define BW_LABOR_SALT 0x4C41424F52ull

int bw_sample_ctx_init(bw_sample_ctx *c, int threads, int max_fanout);
void bw_sample_ctx_free(bw_sample_ctx *c);

/* One bipartite block that LABOR-* samples (sample.c): rows of a CSR whose sources share one
 * variate each and one probability weight pi each. A layer of the homogeneous sampler is one;
 * so is each relation of a typed layer (typed.c). The caller sets the first fields; the
 * preparation fills the others, shared by the threads of one parallel region. */
typedef struct bw_ls_layer {
	const void *gi;               /* the CSR's indices (borrowed) ... */
	bool w4;                      /* ... int32 when w4, else int64 */
	const int64_t *row;           /* [2 nd] each row's start in gi and its degree */
	int64_t *ip;                  /* [nd + 1] the block's offsets: a row of degree above k gets its count
					 in ip[i + 1]; the others' entries are left alone */
	int64_t nd, k;                /* rows; the fanout (>= 0) */
	int ub;                       /* bits of a source id */
	uint64_t lk;                  /* source v's variate is bw_key(lk, v) (the top 53 bits) ... */
	const bw_labor_dep *dep;      /* ... or, when not NULL, its batch dependency's */
	char who[64];                 /* what the block is, for messages ("sampler: block 2") */
	/* filled by the preparation */
	int64_t F, dmax;              /* neighbors of the rows; the largest degree (at least 1) */
	int64_t m, nch;               /* distinct sources; chunks of the sorted neighbors */
	int eb;                       /* bits of a neighbor's index */
	const uint64_t *x;            /* [F] (source id << eb | neighbor), sorted */
	int32_t *rowof, *erow;        /* [F] each neighbor's row by neighbor; by source (the sort's other array) */
	int64_t *q0, *u0;             /* [nch + 1] where chunk h starts in x; the sources before it */
	double ex;                    /* a round's expected distinct sources, sum of min(1, pi) */
	int st;                       /* a failure (every thread returns), its message in msg */
	char msg[256];
} bw_ls_layer;

/* LABOR-*'s preparation of block L with c's scratch (c->labor_star rounds), by every thread t
 * of nt of the calling parallel region: number the distinct sources of every row's whole
 * neighborhood (a radix sort of (id, neighbor)), draw each one's variate, run the fixed point,
 * and put each row of degree above k's count in ip[i + 1]. On failure L->st and L->msg. The
 * same bits at any thread count (BW_LS_ROWS). c keeps the block's state until its next call. */
void bw_labor_star_prep(bw_sample_ctx *c, bw_ls_layer *L, int t, int nt);
/* Stage one of row i (start s, degree d above the fanout) of the block c prepared last: its
 * picks, neighbor p when its source's variate is below min(1, c_i pi), as absolute positions
 * into out (as many as the preparation counted), and with w (may be NULL) their weights: 1 /
 * that probability, scaled so that the row's weights sum to its count (a weighted mean is then
 * sum (h / p) / sum (1 / p), the ratio estimator of the row's mean). */
void bw_labor_star_row(const bw_sample_ctx *c, int64_t i, int64_t s, int64_t d, uint64_t *out, float *w);

/* Sample a batch into b for `n` distinct seeds with fanouts[0 .. L) (input layer first).
 * Row v of block l draws from the stream bw_key(bw_key(key, l), v), so the batch is a
 * function of (g, seeds, fanouts, key) alone. Fills b->pub except epoch and index. */
int bw_sample_batch(bw_sample_ctx *c, const burrow_csr *g, const int64_t *seeds, int64_t n, int num_layers,
		    const int *fanouts, uint64_t key, bw_sampled *b);

/* Where a layer's edges come from when they are not drawn from one CSR in memory
 * (distributed mini-batch training, whose remote nodes are expanded by their owners): the
 * sampler's layer step calls `expand` once per block, from the calling thread (collective
 * communication inside is fine), for block l's destinations nodes[0, nd) (global ids),
 * with its fanout (< 0: whole rows) and key bw_key(key, l); it returns *ip [nd + 1]
 * offsets from 0 and *ids [ip[nd]] each row's neighbor ids, distinct within a row, in the
 * block's edge order (both borrowed until its next call). The sampler then numbers the
 * sources exactly as for its own draws. */
typedef struct bw_expander {
	int (*expand)(void *ctx, int l, int fanout, uint64_t lkey, const int64_t *nodes, int64_t nd,
		      const int64_t **ip, const int64_t **ids);
	void *ctx;            /* the expander's own (borrowed) */
	int64_t num_nodes;    /* every id is in [0, num_nodes) */
} bw_expander;

/* bw_sample_batch with the edges of every block from ex (g unused: ids are checked against
 * ex->num_nodes). */
int bw_sample_batch_ex(bw_sample_ctx *c, const bw_expander *ex, const int64_t *seeds, int64_t n, int num_layers,
		       const int *fanouts, uint64_t key, bw_sampled *b);

/* The typed sampler's expander (distributed typed training, dist_hmb.c): layer l's rows of
 * relation r for its destinations nodes[0, nd) (ids of r's dst type) under fanout fanout,
 * drawn from the streams bw_key(rkey, node) where rkey = bw_key(bw_key(key, l), r) as the
 * typed sampler's own draws; *ip [nd + 1] and *ids [ip[nd]] (src-type ids) as bw_expander's.
 * Called for every relation of every layer in order, also when nd is 0 (it may be collective). */
typedef struct bw_typed_expander {
	int (*expand)(void *ctx, int l, int r, int fanout, uint64_t rkey, const int64_t *nodes, int64_t nd,
		      const int64_t **ip, const int64_t **ids);
	void *ctx;            /* the expander's own (borrowed) */
} bw_typed_expander;

/* The bytes a typed batch holds while handed out (tb from burrow_typed_sampler_batch or
 * _sample): its record and every array it points into at its capacity. */
double bw_typed_batch_bytes(const burrow_typed_batch *tb);

/* A typed sampler whose rows come from ex (borrowed) instead of h's relations: h gives the
 * types (counts: every id is in [0, type_nodes)), the relations' src and dst types and names;
 * its graphs are not read. Batches come from bw_typed_sampler_sample_key only. */
int bw_typed_sampler_open_ex(burrow_typed_sampler **out, const burrow_hetero *h, const bw_typed_expander *ex,
			     const burrow_typed_sampler_opts *opts);
/* The batch of the n seeds (n may be 0) drawn with exactly `key` (no remixing), stamped
 * (epoch, index); released with burrow_typed_sampler_release. */
int bw_typed_sampler_sample_key(burrow_typed_sampler *s, const int64_t *seeds, int64_t n, uint64_t key,
				int64_t epoch, int64_t index, burrow_typed_batch **out);

/* The full-neighbor block over nodes [first, first + count) (one layer). */
int bw_sample_full(bw_sample_ctx *c, const burrow_csr *g, int64_t first, int64_t count, bw_sampled *b);

/* Where batches can be sampled: the CPU always, CUDA in a build with it. A registered
 * backend may have no device on this machine (devices() == 0): the tests skip it, counted. */
typedef struct bw_sampler_backend {
	const char *name;             /* what burrow_sampler_opts.device takes */
	int (*devices)(void);         /* devices it sees now */
} bw_sampler_backend;
int bw_sampler_backend_count(void);
const bw_sampler_backend *bw_sampler_backend_at(int i);

/* The edge batch whose node batch is `nodes` (one handed out by burrow_edge_sampler_batch,
 * e.g. through the loader's edge producer). */
const burrow_edge_batch *bw_edge_batch_of(const burrow_batch *nodes);

/* ------------------------------------------------------------ on a GPU (sample_cuda.cu) */
/* The GPU sampler's entry points: sample_cuda.cu in a CUDA build; in a build without CUDA,
 * sample_nocuda.c, whose functions refuse with BURROW_E_UNSUPPORTED naming the build (the
 * Makefile compiles one or the other, so the callers have no #ifdef). */

/* The graph as the GPU sampler reads it: in device memory, or in pinned host memory read
 * through unified addressing when it is larger than the budget; shared by every context. */
typedef struct bw_cuda_csr bw_cuda_csr;
/* One sampling thread's stream and device scratch (as bw_sample_ctx is on the CPU). */
typedef struct bw_cuda_sample_ctx bw_cuda_sample_ctx;

/* Put g on device `device`: device memory when its indptr and indices take at most
 * `budget` bytes (0: half the device's free memory), else pinned host memory. */
int bw_cuda_csr_open(bw_cuda_csr **out, const burrow_csr *g, int device, int64_t budget);
void bw_cuda_csr_close(bw_cuda_csr *c);
/* Whether the graph lives in pinned host memory (read through unified addressing). */
bool bw_cuda_csr_pinned(const bw_cuda_csr *c);
int bw_cuda_sample_ctx_open(bw_cuda_sample_ctx **out, const bw_cuda_csr *c);
void bw_cuda_sample_ctx_close(bw_cuda_sample_ctx *x);
/* bw_sample_batch on the GPU: the same keys, the same batch element for element (LABOR-*'s
 * edge weights bit for bit), downloaded into b's host arrays. labor: LABOR's variates with
 * this batch dependency (the CPU's bw_sample_ctx dep, given when its labor or labor_star is
 * set), NULL: neighbor sampling's; labor_star > 0: LABOR-* with at most that many rounds
 * (the CPU's labor_star) in every layer of a fanout >= 0, else LABOR's bottom-k. */
int bw_cuda_sample_batch(bw_cuda_sample_ctx *x, const int64_t *seeds, int64_t n, int num_layers, const int *fanouts,
			 uint64_t key, const bw_labor_batch *labor, int labor_star, bw_sampled *b);
/* The draws of n rows of the graph on the GPU, as the CPU's sampler draws them: row
 * rows[i] takes ip[i+1] - ip[i] neighbors (its whole row when that is its degree, else
 * draw.h's bw_draw from the stream bw_key(lkey, keys[i])), written in increasing row
 * position to out[ip[i] .. ip[i+1]) as the graph's neighbor ids. ip [n + 1] from 0 (the
 * caller sizes the rows: min(fanout, degree), or the degree), rows, keys [n] and out
 * [ip[n]] host memory. Distributed mini-batch training draws its part's rows with it,
 * keyed by their global ids. */
int bw_cuda_draw_rows(bw_cuda_sample_ctx *x, const int64_t *rows, const int64_t *keys, int64_t n, const int64_t *ip,
		      uint64_t lkey, int64_t *out);

#ifdef __cplusplus
}
#endif

#endif
