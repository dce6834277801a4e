/* sample_cuda.cu: the GPU twin of sample.c: one batch sampled on a CUDA device, equal to
 * the CPU's element for element.
 *
 * The graph lives in device memory, or in pinned host memory read through unified
 * addressing when it is larger than the budget (bw_cuda_csr). A batch is sampled layer by
 * layer, output layer first, as on the CPU:
 *   1. each destination's sample size (its degree, or the fanout when smaller), prefix-summed
 *      into the block's row offsets;
 *   2. a thread per destination draws its row with draw.h's bw_draw, the CPU's function
 *      compiled for the device, from the CPU's key bw_key(bw_key(key, l), v), or with LABOR
 *      labor.h's bottom-k under the CPU's layer key (bw_labor_layer), and writes the
 *      neighbors' global ids in increasing order (the row's order); a LABOR-* layer instead
 *      runs the CPU's preparation (star_prep: labor_star.h's maths over every row's whole
 *      neighborhood sorted by source, the fixed point's rounds) and a thread per row writes
 *      its picks and their edge weights (k_ls_draw);
 *   3. the numbering: the drawn ids sorted and made unique (CUB), those that are not nodes
 *      yet (a binary search in the nodes sorted by global id) are the new source nodes,
 *      numbered nd, nd + 1, ... in increasing global id, which is the CPU's numbering; each
 *      edge then takes its node's local id;
 *   4. the new nodes merged into the sorted view for the next layer.
 * The block's offsets and indices (and LABOR-*'s weights) are copied into the batch's host
 * arrays as each layer ends, the input ids once the last one has. */
#include "../device/cuda_gateway.h"
#include "../device/cuda_try.h"
#include "sample_kernels.h"
#include "sampler_internal.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* CUB's templates would be instantiated here with default visibility (and NVTX ranges),
 * leaving non-API global symbols in libburrow: hidden, and no NVTX. The C headers come
 * first, so that what they declare keeps its visibility. */
#define CCCL_DISABLE_NVTX
#define NVTX_DISABLE
#pragma GCC visibility push(hidden)
#include <cub/cub.cuh>
#pragma GCC visibility pop

#define THREADS BW_SK_THREADS

static int bits_for(uint64_t v) { return v ? 64 - __builtin_clzll(v) : 0; }

struct bw_cuda_csr {
	int device;
	int64_t num_nodes;
	int index_width;          /* 4 or 8 bytes per neighbor id */
	const int64_t *indptr;    /* [N + 1] device-readable: device memory or mapped pinned memory */
	const void *indices;      /* [E] */
	void *mem;                /* the one allocation holding both (indptr first) */
	bool pinned;              /* mem is cudaHostAlloc'd, else cudaMalloc'd */
};

/* A device array that grows (its contents are not kept unless said). */
typedef struct dbuf {
	void *p;
	size_t cap; /* bytes */
} dbuf;

struct bw_cuda_sample_ctx {
	const bw_cuda_csr *g;     /* borrowed */
	cudaStream_t stream;
	dbuf nodes;               /* int64 [nodes]: the batch's global ids, seeds first */
	dbuf sg, sl, sg2, sl2;    /* the nodes sorted by global id (int64) and their local ids (int32) */
	dbuf cnt, ip;             /* int64 [nd + 1]: sample sizes, row offsets */
	dbuf eid, skey, uniq;     /* int64 [E]: drawn global ids, sorted, unique */
	dbuf flag, rank;          /* int64 [E + 1]: not a node yet, and its new-node rank */
	dbuf ind;                 /* int32 [E]: the block's local source ids */
	dbuf iota;                /* int32 [n]: 0 .. n-1, the seeds' local ids */
	dbuf small;               /* int64 [4]: counts read back (E, unique ids, new nodes, a repeated seed) */
	dbuf temp;                /* CUB's scratch */
	/* a LABOR-* layer (star_prep): every row's whole neighborhood, F neighbors, m sources */
	dbuf loff;                /* int64 [nd + 1]: where each row's neighbors start */
	dbuf lx, lxs;             /* uint64 [F]: (source id << eb | neighbor), then sorted */
	dbuf lrow, lerow, lsrc;   /* int32 [F]: each neighbor's row (by neighbor; by source), its source index */
	dbuf lstart;              /* int64 [m + 1]: where each source's run starts in lxs */
	dbuf lnode;               /* bw_ls_node [m]: each source's pi and variate */
	dbuf lc;                  /* double [nd]: each row's c */
	dbuf ew;                  /* float [E]: the block's edge weights */
	int64_t *host;            /* [4] pinned: where `small` is read back */
};

/* Make b hold at least `bytes`, dropping its contents (keep: copying them, on stream s). */
static int dgrow(dbuf *b, size_t bytes, bool keep, cudaStream_t s)
{
	if (bytes <= b->cap && b->p)
		return 0;
	size_t cap = bytes > b->cap + b->cap / 2 ? bytes : b->cap + b->cap / 2;
	if (cap < 256)
		cap = 256;
	void *p;
	CUDA_TRY(cudaMalloc(&p, cap));
	if (keep && b->p && b->cap) {
		CUDA_TRY(cudaMemcpyAsync(p, b->p, b->cap, cudaMemcpyDeviceToDevice, s));
		CUDA_TRY(cudaStreamSynchronize(s));
	}
	if (b->p)
		CUDA_TRY(cudaFree(b->p));
	b->p = p;
	b->cap = cap;
	return 0;
}

static void dfree(dbuf *b)
{
	if (b->p)
		(void)cudaFree(b->p);
	b->p = NULL;
	b->cap = 0;
}

/* ------------------------------------------------------------ the graph */

/* Upload the graph's two arrays (pageable host memory) and wait until they are on the device.
 * A plain cudaMemcpy from pageable memory runs on the legacy stream and may return once the
 * source is staged, before the copy lands ("API synchronization behavior" in the CUDA runtime
 * documentation), and the sampler's kernels run on non-blocking streams, which do not wait
 * for the legacy stream: so the copies go on a stream of their own, which is waited for. */
static int upload_graph(void *ip_dst, const void *ip_src, size_t ipb, void *in_dst, const void *in_src, size_t inb)
{
	cudaStream_t s;
	CUDA_TRY(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	cudaError_t e = cudaMemcpyAsync(ip_dst, ip_src, ipb, cudaMemcpyHostToDevice, s);
	if (e == cudaSuccess && inb)
		e = cudaMemcpyAsync(in_dst, in_src, inb, cudaMemcpyHostToDevice, s);
	const cudaError_t w = cudaStreamSynchronize(s); /* waited for even after a failed copy */
	(void)cudaStreamDestroy(s);
	if (e == cudaSuccess)
		e = w;
	if (e != cudaSuccess)
		return bw_err(BURROW_E_CUDA, "GPU sampler: uploading the graph (%zu bytes): %s", ipb + inb,
			      cudaGetErrorString(e));
	return 0;
}

extern "C" int bw_cuda_csr_open(bw_cuda_csr **out, const burrow_csr *g, int device, int64_t budget)
{
	*out = NULL;
	const size_t ipb = ((size_t)g->num_nodes + 1) * sizeof(int64_t);
	const size_t inb = (size_t)g->num_edges * (size_t)g->index_width;
	const size_t ipb_pad = (ipb + 255) & ~(size_t)255;
	CUDA_TRY(cudaSetDevice(device));
	if (budget <= 0) {
		size_t free_b = 0, total_b = 0;
		CUDA_TRY(cudaMemGetInfo(&free_b, &total_b));
		budget = (int64_t)(free_b / 2);
	}
	bw_cuda_csr *c = (bw_cuda_csr *)bw_calloc(1, sizeof *c);
	if (!c)
		return BURROW_E_NOMEM;
	c->device = device;
	c->num_nodes = g->num_nodes;
	c->index_width = g->index_width;
	c->pinned = ipb_pad + inb > (size_t)budget;
	int st = 0;
	if (c->pinned) {
		cudaError_t e = cudaHostAlloc(&c->mem, ipb_pad + inb, cudaHostAllocMapped | cudaHostAllocPortable);
		if (e != cudaSuccess) {
			c->mem = NULL;
			st = bw_err(BURROW_E_CUDA, "GPU sampler: %zu bytes of pinned host memory for the graph: %s",
				    ipb_pad + inb, cudaGetErrorString(e));
			goto out_free;
		}
		memcpy(c->mem, g->indptr, ipb);
		if (inb)
			memcpy((char *)c->mem + ipb_pad, g->indices, inb);
		void *dp;
		if (cudaHostGetDevicePointer(&dp, c->mem, 0) != cudaSuccess) {
			st = bw_err(BURROW_E_CUDA, "GPU sampler: the device cannot address pinned host memory");
			goto out_free;
		}
		c->indptr = (const int64_t *)dp;
		c->indices = (const char *)dp + ipb_pad;
	} else {
		cudaError_t e = cudaMalloc(&c->mem, ipb_pad + inb);
		if (e != cudaSuccess) {
			c->mem = NULL;
			st = bw_err(BURROW_E_CUDA, "GPU sampler: %zu bytes of device memory for the graph: %s",
				    ipb_pad + inb, cudaGetErrorString(e));
			goto out_free;
		}
		if ((st = upload_graph(c->mem, g->indptr, ipb, (char *)c->mem + ipb_pad, g->indices, inb)))
			goto out_free;
		c->indptr = (const int64_t *)c->mem;
		c->indices = (const char *)c->mem + ipb_pad;
	}
	*out = c;
	return 0;
out_free:
	bw_cuda_csr_close(c);
	return st;
}

extern "C" void bw_cuda_csr_close(bw_cuda_csr *c)
{
	if (!c)
		return;
	if (c->mem) {
		(void)cudaSetDevice(c->device);
		if (c->pinned)
			(void)cudaFreeHost(c->mem);
		else
			(void)cudaFree(c->mem);
	}
	bw_free(c);
}

extern "C" bool bw_cuda_csr_pinned(const bw_cuda_csr *c) { return c && c->pinned; }

extern "C" int bw_cuda_sample_ctx_open(bw_cuda_sample_ctx **out, const bw_cuda_csr *g)
{
	*out = NULL;
	CUDA_TRY(cudaSetDevice(g->device));
	bw_cuda_sample_ctx *x = (bw_cuda_sample_ctx *)bw_calloc(1, sizeof *x);
	if (!x)
		return BURROW_E_NOMEM;
	x->g = g;
	int st = 0;
	if (cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking) != cudaSuccess ||
	    cudaHostAlloc((void **)&x->host, 4 * sizeof(int64_t), cudaHostAllocDefault) != cudaSuccess) {
		st = bw_err(BURROW_E_CUDA, "GPU sampler: a stream and pinned memory: %s",
			    cudaGetErrorString(cudaGetLastError()));
		bw_cuda_sample_ctx_close(x);
		return st;
	}
	*out = x;
	return 0;
}

extern "C" void bw_cuda_sample_ctx_close(bw_cuda_sample_ctx *x)
{
	if (!x)
		return;
	(void)cudaSetDevice(x->g->device);
	if (x->stream)
		(void)cudaStreamSynchronize(x->stream);
	dbuf *all[] = {&x->nodes, &x->sg, &x->sl, &x->sg2, &x->sl2, &x->cnt, &x->ip,    &x->eid,
		       &x->skey,  &x->uniq, &x->flag, &x->rank, &x->ind, &x->iota, &x->small, &x->temp,
		       &x->loff,  &x->lx,   &x->lxs,  &x->lrow, &x->lerow, &x->lsrc, &x->lstart, &x->lnode,
		       &x->lc,    &x->ew};
	for (size_t i = 0; i < sizeof all / sizeof *all; i++)
		dfree(all[i]);
	if (x->host)
		(void)cudaFreeHost(x->host);
	if (x->stream)
		(void)cudaStreamDestroy(x->stream);
	bw_free(x);
}

/* ------------------------------------------------------------ kernels */

/* Each kernel's per-thread work is sample_kernels.h's (tested on the host:
 * tests/test_kernels.c); a kernel passes its thread's index. */
#define THREAD_INDEX ((int64_t)blockIdx.x * blockDim.x + threadIdx.x)

static __global__ void k_sizes(const int64_t *gp, const int64_t *nodes, int64_t nd, int fanout, int64_t *cnt)
{
	bw_sk_sizes(THREAD_INDEX, gp, nodes, nd, fanout, cnt);
}

static __global__ void k_draw(const int64_t *gp, const void *gi, int width, const int64_t *nodes, int64_t nd,
			      const int64_t *ip, uint64_t lkey, const int64_t *keys, int64_t *eid)
{
	bw_sk_draw(THREAD_INDEX, gp, gi, width, nodes, nd, ip, lkey, keys, eid);
}

static __global__ void k_labor(const int64_t *gp, const void *gi, int width, const int64_t *nodes, int64_t nd,
			       const int64_t *ip, uint64_t lk, bw_labor_dep dep, bool has_dep, uint64_t *hkey,
			       int64_t *eid)
{
	bw_sk_labor(THREAD_INDEX, gp, gi, width, nodes, nd, ip, lk, has_dep ? &dep : NULL, hkey, eid);
}

static __global__ void k_ls_gather(const int64_t *gp, const void *gi, int width, const int64_t *nodes, int64_t nd,
				   const int64_t *off, int eb, uint64_t *items, int32_t *rowof)
{
	bw_sk_ls_gather(THREAD_INDEX, gp, gi, width, nodes, nd, off, eb, items, rowof);
}

static __global__ void k_ls_flag(const uint64_t *x, int64_t F, int eb, int64_t *flag)
{
	bw_sk_ls_flag(THREAD_INDEX, x, F, eb, flag);
}

static __global__ void k_ls_source(const uint64_t *x, int64_t F, int eb, const int64_t *flag, const int64_t *rank,
				   const int32_t *rowof, uint64_t lk, bw_labor_dep dep, bool has_dep, int32_t *src,
				   int32_t *erow, int64_t *start, bw_ls_node *node)
{
	bw_sk_ls_source(THREAD_INDEX, x, F, eb, flag, rank, rowof, lk, has_dep ? &dep : NULL, src, erow, start, node);
}

static __global__ void k_ls_c(const int64_t *off, int64_t nd, int64_t k, const int32_t *src, const bw_ls_node *node,
			      bool ones, double *c)
{
	bw_sk_ls_c(THREAD_INDEX, off, nd, k, src, node, ones, c);
}

static __global__ void k_ls_pi(int64_t m, const int64_t *start, const int32_t *erow, const double *c, bw_ls_node *node)
{
	bw_sk_ls_pi(THREAD_INDEX, m, start, erow, c, node);
}

static __global__ void k_ls_ex(const bw_ls_node *node, int64_t m, double *ex) { bw_sk_ls_ex(THREAD_INDEX, node, m, ex); }

static __global__ void k_ls_count(const int64_t *off, int64_t nd, int64_t k, const int32_t *src, const bw_ls_node *node,
				  const double *c, int64_t *cnt)
{
	bw_sk_ls_count(THREAD_INDEX, off, nd, k, src, node, c, cnt);
}

static __global__ void k_ls_draw(const int64_t *gp, const void *gi, int width, const int64_t *nodes, int64_t nd,
				 const int64_t *off, int64_t k, const int32_t *src, const bw_ls_node *node,
				 const double *c, const int64_t *ip, int64_t *eid, float *ew)
{
	bw_sk_ls_draw(THREAD_INDEX, gp, gi, width, nodes, nd, off, k, src, node, c, ip, eid, ew);
}

static __global__ void k_flag(const int64_t *uniq, int64_t nu, const int64_t *sg, int64_t nd, int64_t *flag)
{
	bw_sk_flag(THREAD_INDEX, uniq, nu, sg, nd, flag);
}

static __global__ void k_new(const int64_t *uniq, int64_t nu, const int64_t *rank, int64_t *newn)
{
	bw_sk_new(THREAD_INDEX, uniq, nu, rank, newn);
}

static __global__ void k_edges(const int64_t *eid, int64_t E, const int64_t *sg, const int32_t *sl, int64_t nd,
			       const int64_t *uniq, int64_t nu, const int64_t *rank, int32_t *ind)
{
	bw_sk_edges(THREAD_INDEX, eid, E, sg, sl, nd, uniq, nu, rank, ind);
}

static __global__ void k_merge(const int64_t *sg, const int32_t *sl, int64_t nd, const int64_t *newn, int64_t nnew,
			       int64_t *sg2, int32_t *sl2)
{
	bw_sk_merge(THREAD_INDEX, sg, sl, nd, newn, nnew, sg2, sl2);
}

static __global__ void k_repeat(const int64_t *sg, int64_t n, unsigned long long *out)
{
	bw_sk_repeat(THREAD_INDEX, sg, n, out);
}

static __global__ void k_iota(int32_t *a, int64_t n) { bw_sk_iota(THREAD_INDEX, a, n); }

static unsigned grid(int64_t n) { return bw_sk_grid(n); }

/* ------------------------------------------------------------ one batch */

#define I64(b) ((int64_t *)(b).p)
#define I32(b) ((int32_t *)(b).p)
#define U64(b) ((unsigned long long *)(b).p)

/* Run a CUB call twice: for the scratch it needs, then for the work. */
#define CUB_RUN(call)                                                                                \
	do {                                                                                         \
		size_t need_ = 0;                                                                    \
		void *temp_ = NULL;                                                                  \
		{                                                                                    \
			void *d_temp_storage = temp_;                                                \
			size_t &bytes_ = need_;                                                      \
			CUDA_TRY(call);                                                              \
		}                                                                                    \
		if ((st = dgrow(&x->temp, need_, false, x->stream)))                                 \
			return st;                                                                   \
		temp_ = x->temp.p;                                                                   \
		need_ = x->temp.cap;                                                                 \
		{                                                                                    \
			void *d_temp_storage = temp_;                                                \
			size_t &bytes_ = need_;                                                      \
			CUDA_TRY(call);                                                              \
		}                                                                                    \
	} while (0)

/* Read n counts back from small into x->host (waits for the stream). */
static int read_small(bw_cuda_sample_ctx *x, int n)
{
	CUDA_TRY(cudaMemcpyAsync(x->host, x->small.p, (size_t)n * sizeof(int64_t), cudaMemcpyDeviceToHost, x->stream));
	CUDA_TRY(cudaStreamSynchronize(x->stream));
	return 0;
}

/* The seeds' sorted view (sg, sl); refuses a repeated seed as the CPU does. */
static int seed_view(bw_cuda_sample_ctx *x, const int64_t *seeds, int64_t n, int ub)
{
	int st;
	const size_t b8 = (size_t)n * 8, b4 = (size_t)n * 4;
	if ((st = dgrow(&x->nodes, b8, false, x->stream)) || (st = dgrow(&x->sg, b8, false, x->stream)) ||
	    (st = dgrow(&x->sl, b4, false, x->stream)) || (st = dgrow(&x->iota, b4, false, x->stream)) ||
	    (st = dgrow(&x->small, 4 * sizeof(int64_t), false, x->stream)))
		return st;
	CUDA_TRY(cudaMemcpyAsync(x->nodes.p, seeds, b8, cudaMemcpyHostToDevice, x->stream));
	k_iota<<<grid(n), THREADS, 0, x->stream>>>(I32(x->iota), n);
	CUDA_LAUNCHED();
	const unsigned long long none = ~0ull;
	CUDA_TRY(cudaMemcpyAsync(U64(x->small) + 3, &none, sizeof none, cudaMemcpyHostToDevice, x->stream));
	CUB_RUN(cub::DeviceRadixSort::SortPairs(d_temp_storage, bytes_, U64(x->nodes), U64(x->sg), I32(x->iota),
						 I32(x->sl), (int)n, 0, ub, x->stream));
	k_repeat<<<grid(n), THREADS, 0, x->stream>>>(I64(x->sg), n, U64(x->small) + 3);
	CUDA_LAUNCHED();
	if ((st = read_small(x, 4)))
		return st;
	if (x->host[3] != -1)
		return bw_err(BURROW_E_INVAL, "sampler: seed %lld appears twice in one batch", (long long)x->host[3]);
	return 0;
}

/* Block l's draws of its nd rows (sized in ip) into eid: neighbor sampling's from the rows'
 * streams under lkey, or with labor LABOR's under the CPU's layer keys (bw_labor_layer); skey
 * holds the LABOR heaps' keys of rows above BW_SMALL_FANOUT picks until the sort takes it. */
static int draw(bw_cuda_sample_ctx *x, int l, uint64_t lkey, const bw_labor_batch *labor, int64_t nd)
{
	const bw_cuda_csr *g = x->g;
	if (labor) {
		uint64_t lk;
		bw_labor_dep dep = {0, 0, 0.0, 0.0};
		const bool has_dep = bw_labor_layer(labor, l, lkey, &lk, &dep) != NULL;
		k_labor<<<grid(nd), THREADS, 0, x->stream>>>(g->indptr, g->indices, g->index_width, I64(x->nodes), nd,
							    I64(x->ip), lk, dep, has_dep, (uint64_t *)x->skey.p, I64(x->eid));
	} else {
		k_draw<<<grid(nd), THREADS, 0, x->stream>>>(g->indptr, g->indices, g->index_width, I64(x->nodes), nd,
							   I64(x->ip), lkey, NULL, I64(x->eid));
	}
	CUDA_LAUNCHED();
	return 0;
}

/* LABOR-* step 1 of block l: where each of the nd rows' whole neighborhoods starts (loff),
 * their total *F and its bits *eb, room for the steps after. */
static int star_rows(bw_cuda_sample_ctx *x, int l, int64_t nd, int ub, int64_t *F, int *eb)
{
	const bw_cuda_csr *g = x->g;
	int st;
	if ((st = dgrow(&x->loff, (size_t)(nd + 1) * 8, false, x->stream)) ||
	    (st = dgrow(&x->lc, (size_t)nd * 8, false, x->stream)))
		return st;
	k_sizes<<<grid(nd + 1), THREADS, 0, x->stream>>>(g->indptr, I64(x->nodes), nd, -1, I64(x->cnt));
	CUDA_LAUNCHED();
	CUB_RUN(cub::DeviceScan::ExclusiveSum(d_temp_storage, bytes_, I64(x->cnt), I64(x->loff), nd + 1, x->stream));
	CUDA_TRY(cudaMemcpyAsync(x->small.p, I64(x->loff) + nd, 8, cudaMemcpyDeviceToDevice, x->stream));
	if ((st = read_small(x, 1)))
		return st;
	*F = x->host[0];
	*eb = bits_for((uint64_t)(*F > 0 ? *F : 1) - 1);
	if (*F > INT32_MAX || ub + *eb > 64)
		return bw_err(BURROW_E_UNSUPPORTED, "sampler: block %d's rows hold %lld neighbors: too many for LABOR-*", l,
			      (long long)*F);
	const size_t f8 = (size_t)(*F > 0 ? *F : 1) * 8;
	if ((st = dgrow(&x->lx, f8, false, x->stream)) || (st = dgrow(&x->lxs, f8, false, x->stream)) ||
	    (st = dgrow(&x->lrow, f8 / 2, false, x->stream)) || (st = dgrow(&x->lerow, f8 / 2, false, x->stream)) ||
	    (st = dgrow(&x->lsrc, f8 / 2, false, x->stream)) || (st = dgrow(&x->flag, f8 + 8, false, x->stream)) ||
	    (st = dgrow(&x->rank, f8 + 8, false, x->stream)))
		return st;
	return 0;
}

/* LABOR-* step 2 (F > 0 neighbors): the rows' neighbors as (source id << eb | neighbor)
 * items, sorted by source (CUB's radix sort is stable: the CPU's order), the *m distinct
 * sources numbered in increasing id by an exclusive sum of their runs' starts, each
 * neighbor's source index, each source's run, pi = 1 and variate (under lk, or dep). */
static int star_sources(bw_cuda_sample_ctx *x, int64_t nd, int ub, int64_t F, int eb, uint64_t lk,
			const bw_labor_dep *dep, int64_t *m)
{
	const bw_cuda_csr *g = x->g;
	const uint64_t *xs = (const uint64_t *)x->lxs.p;
	int st;
	k_ls_gather<<<grid(nd), THREADS, 0, x->stream>>>(g->indptr, g->indices, g->index_width, I64(x->nodes), nd,
							I64(x->loff), eb, (uint64_t *)x->lx.p, I32(x->lrow));
	CUDA_LAUNCHED();
	CUB_RUN(cub::DeviceRadixSort::SortKeys(d_temp_storage, bytes_, U64(x->lx), U64(x->lxs), F, eb, eb + ub,
						x->stream));
	k_ls_flag<<<grid(F + 1), THREADS, 0, x->stream>>>(xs, F, eb, I64(x->flag));
	CUDA_LAUNCHED();
	CUB_RUN(cub::DeviceScan::ExclusiveSum(d_temp_storage, bytes_, I64(x->flag), I64(x->rank), F + 1, x->stream));
	CUDA_TRY(cudaMemcpyAsync(x->small.p, I64(x->rank) + F, 8, cudaMemcpyDeviceToDevice, x->stream));
	if ((st = read_small(x, 1)))
		return st;
	*m = x->host[0];
	if ((st = dgrow(&x->lstart, (size_t)(*m + 1) * 8, false, x->stream)) ||
	    (st = dgrow(&x->lnode, (size_t)*m * sizeof(bw_ls_node), false, x->stream)))
		return st;
	const bw_labor_dep dv = dep ? *dep : bw_labor_dep{0, 0, 0.0, 0.0};
	k_ls_source<<<grid(F), THREADS, 0, x->stream>>>(xs, F, eb, I64(x->flag), I64(x->rank), I32(x->lrow), lk, dv,
						       dep != NULL, I32(x->lsrc), I32(x->lerow), I64(x->lstart),
						       (bw_ls_node *)x->lnode.p);
	CUDA_LAUNCHED();
	return 0;
}

/* LABOR-* step 3: every row's c from pi = 1, then at most `rounds` rounds: each source's pi
 * times the largest c of the rows reading it (a thread per source over its sorted run), the
 * expected distinct sources summed by one thread in source order and read back, every row's
 * c again; the last round is the CPU's (bw_ls_last on the same sums). Ends with each row's
 * sample size (fanout k) in cnt [nd + 1]. */
static int star_rounds(bw_cuda_sample_ctx *x, int64_t nd, int64_t k, int rounds, int64_t m)
{
	bw_ls_node *node = m > 0 ? (bw_ls_node *)x->lnode.p : NULL;
	const int64_t *off = I64(x->loff);
	const int32_t *src = I32(x->lsrc);
	double *c = (double *)x->lc.p;
	int st;
	k_ls_c<<<grid(nd), THREADS, 0, x->stream>>>(off, nd, k, src, node, true, c);
	CUDA_LAUNCHED();
	double prev = INFINITY;
	for (int it = 0; it < rounds; it++) {
		if (m > 0) {
			k_ls_pi<<<grid(m), THREADS, 0, x->stream>>>(m, I64(x->lstart), I32(x->lerow), c, node);
			CUDA_LAUNCHED();
		}
		k_ls_ex<<<1, 1, 0, x->stream>>>(node, m, (double *)x->small.p);
		CUDA_LAUNCHED();
		k_ls_c<<<grid(nd), THREADS, 0, x->stream>>>(off, nd, k, src, node, false, c);
		CUDA_LAUNCHED();
		if ((st = read_small(x, 1)))
			return st;
		double ex;
		memcpy(&ex, x->host, sizeof ex);
		if (bw_ls_last(ex, &prev))
			break;
	}
	k_ls_count<<<grid(nd + 1), THREADS, 0, x->stream>>>(off, nd, k, src, node, c, I64(x->cnt));
	CUDA_LAUNCHED();
	return 0;
}

/* Block l's LABOR-* preparation over its nd rows (fanout k, at most `rounds` rounds, the
 * layer's keys lk / dep), the CPU's bw_labor_star_prep on the device in three steps: the rows'
 * whole neighborhoods (star_rows), their distinct sources (star_sources), the fixed point and
 * the rows' sample sizes in cnt (star_rounds). The scratch stays in x until k_ls_draw has
 * drawn the rows. */
static int star_prep(bw_cuda_sample_ctx *x, int l, int64_t k, int rounds, uint64_t lk, const bw_labor_dep *dep,
		     int64_t nd, int ub)
{
	int64_t F = 0, m = 0;
	int eb = 0, st;
	if ((st = star_rows(x, l, nd, ub, &F, &eb)) || (F > 0 && (st = star_sources(x, nd, ub, F, eb, lk, dep, &m))))
		return st;
	return star_rounds(x, nd, k, rounds, m);
}

/* Block l over the nd nodes (sorted view in sg/sl): its offsets and indices into b, its new
 * source nodes after the nodes; *nsrc = the node count after them. The sorted view is
 * extended unless `last`. labor: LABOR's draws with the batch's dependency (NULL: neighbor
 * sampling's); with rounds > 0 and a fanout >= 0, LABOR-*'s (star_prep), whose weights go to
 * the block's edge_weight, as the CPU's do. */
static int layer(bw_cuda_sample_ctx *x, bw_sampled *b, int l, int fanout, uint64_t lkey, const bw_labor_batch *labor,
		 int rounds, int64_t nd, bool last, int ub, int64_t *nsrc)
{
	const bw_cuda_csr *g = x->g;
	const bool star = rounds > 0 && fanout >= 0;
	int st;
	if ((st = dgrow(&x->cnt, (size_t)(nd + 1) * 8, false, x->stream)) ||
	    (st = dgrow(&x->ip, (size_t)(nd + 1) * 8, false, x->stream)))
		return st;
	if (star) {
		uint64_t lk;
		bw_labor_dep dep = {0, 0, 0.0, 0.0};
		const bw_labor_dep *dp = bw_labor_layer(labor, l, lkey, &lk, &dep);
		if ((st = star_prep(x, l, fanout, rounds, lk, dp, nd, ub)))
			return st;
	} else {
		k_sizes<<<grid(nd + 1), THREADS, 0, x->stream>>>(g->indptr, I64(x->nodes), nd, fanout, I64(x->cnt));
		CUDA_LAUNCHED();
	}
	CUB_RUN(cub::DeviceScan::ExclusiveSum(d_temp_storage, bytes_, I64(x->cnt), I64(x->ip), nd + 1, x->stream));
	CUDA_TRY(cudaMemcpyAsync(x->small.p, I64(x->ip) + nd, 8, cudaMemcpyDeviceToDevice, x->stream));
	if ((st = read_small(x, 1)))
		return st;
	const int64_t E = x->host[0];
	const size_t e8 = (size_t)(E > 0 ? E : 1) * 8;
	if ((st = dgrow(&x->eid, e8, false, x->stream)) || (st = dgrow(&x->skey, e8, false, x->stream)) ||
	    (st = dgrow(&x->uniq, e8, false, x->stream)) || (st = dgrow(&x->flag, e8 + 8, false, x->stream)) ||
	    (st = dgrow(&x->rank, e8 + 8, false, x->stream)) || (st = dgrow(&x->ind, e8 / 2, false, x->stream)) ||
	    (st = dgrow(&x->nodes, (size_t)(nd + E) * 8, true, x->stream)) ||
	    (star && (st = dgrow(&x->ew, e8 / 2, false, x->stream))))
		return st;
	int64_t nu = 0, nnew = 0;
	if (E > 0) {
		if (star) {
			k_ls_draw<<<grid(nd), THREADS, 0, x->stream>>>(g->indptr, g->indices, g->index_width, I64(x->nodes), nd,
								      I64(x->loff), fanout, I32(x->lsrc),
								      (const bw_ls_node *)x->lnode.p, (const double *)x->lc.p,
								      I64(x->ip), I64(x->eid), (float *)x->ew.p);
			CUDA_LAUNCHED();
		} else if ((st = draw(x, l, lkey, labor, nd))) {
			return st;
		}
		CUB_RUN(cub::DeviceRadixSort::SortKeys(d_temp_storage, bytes_, U64(x->eid), U64(x->skey), E, 0, ub,
							x->stream));
		CUB_RUN(cub::DeviceSelect::Unique(d_temp_storage, bytes_, I64(x->skey), I64(x->uniq), I64(x->small), E,
						  x->stream));
		if ((st = read_small(x, 1)))
			return st;
		nu = x->host[0];
		k_flag<<<grid(nu + 1), THREADS, 0, x->stream>>>(I64(x->uniq), nu, I64(x->sg), nd, I64(x->flag));
		CUDA_LAUNCHED();
		CUB_RUN(cub::DeviceScan::ExclusiveSum(d_temp_storage, bytes_, I64(x->flag), I64(x->rank), nu + 1,
						      x->stream));
		CUDA_TRY(cudaMemcpyAsync(x->small.p, I64(x->rank) + nu, 8, cudaMemcpyDeviceToDevice, x->stream));
		if ((st = read_small(x, 1)))
			return st;
		nnew = x->host[0];
		if (nd + nnew > INT32_MAX)
			return bw_err(BURROW_E_UNSUPPORTED, "sampler: block %d has %lld source nodes: local ids are int32", l,
				      (long long)(nd + nnew));
		k_new<<<grid(nu), THREADS, 0, x->stream>>>(I64(x->uniq), nu, I64(x->rank), I64(x->nodes) + nd);
		CUDA_LAUNCHED();
		k_edges<<<grid(E), THREADS, 0, x->stream>>>(I64(x->eid), E, I64(x->sg), I32(x->sl), nd, I64(x->uniq), nu,
							   I64(x->rank), I32(x->ind));
		CUDA_LAUNCHED();
	}
	if ((st = bw_sampled_reserve(b, l, nd, E, nd + nnew)))
		return st;
	CUDA_TRY(cudaMemcpyAsync(b->indptr[l], x->ip.p, (size_t)(nd + 1) * 8, cudaMemcpyDeviceToHost, x->stream));
	if (E > 0)
		CUDA_TRY(cudaMemcpyAsync(b->indices[l], x->ind.p, (size_t)E * 4, cudaMemcpyDeviceToHost, x->stream));
	if (star && (st = bw_grow(&b->ew[l], &b->ew_cap[l], (size_t)(E > 0 ? E : 1), sizeof(float), false)))
		return st;
	if (star && E > 0)
		CUDA_TRY(cudaMemcpyAsync(b->ew[l], x->ew.p, (size_t)E * 4, cudaMemcpyDeviceToHost, x->stream));
	b->pub.blocks[l] = (burrow_block){nd, nd + nnew, E, b->indptr[l], b->indices[l], NULL, star ? b->ew[l] : NULL};
	*nsrc = nd + nnew;
	if (last || nnew == 0)
		return 0;
	const size_t n2 = (size_t)(nd + nnew);
	if ((st = dgrow(&x->sg2, n2 * 8, false, x->stream)) || (st = dgrow(&x->sl2, n2 * 4, false, x->stream)))
		return st;
	k_merge<<<grid((int64_t)n2), THREADS, 0, x->stream>>>(I64(x->sg), I32(x->sl), nd, I64(x->nodes) + nd, nnew,
							     I64(x->sg2), I32(x->sl2));
	CUDA_LAUNCHED();
	BW_SWAP(x->sg, x->sg2);
	BW_SWAP(x->sl, x->sl2);
	return 0;
}

extern "C" int bw_cuda_sample_batch(bw_cuda_sample_ctx *x, const int64_t *seeds, int64_t n, int num_layers,
				    const int *fanouts, uint64_t key, const bw_labor_batch *labor, int labor_star,
				    bw_sampled *b)
{
	const bw_cuda_csr *g = x->g;
	if (n < 1 || n > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "sampler: %lld seeds are too many for one batch", (long long)n);
	for (int64_t i = 0; i < n; i++)
		if (seeds[i] < 0 || seeds[i] >= g->num_nodes)
			return bw_err(BURROW_E_RANGE, "sampler: seed %lld is not a node id (the graph has %lld nodes)",
				      (long long)seeds[i], (long long)g->num_nodes);
	CUDA_TRY(cudaSetDevice(g->device));
	const int ub = bits_for((uint64_t)g->num_nodes - 1) > 0 ? bits_for((uint64_t)g->num_nodes - 1) : 1;
	int st;
	if ((st = seed_view(x, seeds, n, ub)))
		return st;
	int64_t nd = n;
	for (int l = num_layers - 1; l >= 0; l--)
		if ((st = layer(x, b, l, fanouts[l], bw_key(key, (uint64_t)l), labor, labor_star, nd, l == 0, ub, &nd)))
			return st;
	if ((st = bw_sampled_reserve(b, 0, b->pub.blocks[0].num_dst, b->pub.blocks[0].num_edges, nd)))
		return st;
	CUDA_TRY(cudaMemcpyAsync(b->nodes, x->nodes.p, (size_t)nd * 8, cudaMemcpyDeviceToHost, x->stream));
	CUDA_TRY(cudaStreamSynchronize(x->stream));
	bw_sampled_finish(b, num_layers, n, nd);
	return 0;
}

extern "C" int bw_cuda_draw_rows(bw_cuda_sample_ctx *x, const int64_t *rows, const int64_t *keys, int64_t n,
				 const int64_t *ip, uint64_t lkey, int64_t *out)
{
	const bw_cuda_csr *g = x->g;
	if (n < 1)
		return 0;
	for (int64_t i = 0; i < n; i++)
		if (rows[i] < 0 || rows[i] >= g->num_nodes)
			return bw_err(BURROW_E_RANGE, "sampler: row %lld is not a node id (the graph has %lld nodes)",
				      (long long)rows[i], (long long)g->num_nodes);
	const int64_t E = ip[n];
	if (E < 1)
		return 0;
	CUDA_TRY(cudaSetDevice(g->device));
	int st;
	const size_t b8 = (size_t)n * 8;
	if ((st = dgrow(&x->nodes, b8, false, x->stream)) || (st = dgrow(&x->flag, b8, false, x->stream)) ||
	    (st = dgrow(&x->ip, b8 + 8, false, x->stream)) || (st = dgrow(&x->eid, (size_t)E * 8, false, x->stream)))
		return st;
	CUDA_TRY(cudaMemcpyAsync(x->nodes.p, rows, b8, cudaMemcpyHostToDevice, x->stream));
	CUDA_TRY(cudaMemcpyAsync(x->flag.p, keys, b8, cudaMemcpyHostToDevice, x->stream));
	CUDA_TRY(cudaMemcpyAsync(x->ip.p, ip, b8 + 8, cudaMemcpyHostToDevice, x->stream));
	k_draw<<<grid(n), THREADS, 0, x->stream>>>(g->indptr, g->indices, g->index_width, I64(x->nodes), n, I64(x->ip),
						   lkey, I64(x->flag), I64(x->eid));
	CUDA_LAUNCHED();
	CUDA_TRY(cudaMemcpyAsync(out, x->eid.p, (size_t)E * 8, cudaMemcpyDeviceToHost, x->stream));
	CUDA_TRY(cudaStreamSynchronize(x->stream));
	return 0;
}
