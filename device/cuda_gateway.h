/* cuda_gateway.h: the one header through which C code reaches CUDA code (the compute
 * backend's registry is train/compute/backend.c; the GPU sampler is sampler/sample_cuda.cu).
 * In a build without CUDA the sampler's entry points return BURROW_E_UNSUPPORTED, naming
 * the build. */
#ifndef BURROW_CUDA_GATEWAY_H
#define BURROW_CUDA_GATEWAY_H

#include "../core/internal.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct bw_sampled;
/* The graph as the GPU sampler reads it: in device memory, or in pinned host memory read
 * through unified addressing when it is larger than the budget; shared by every context. */
typedef struct bw_cuda_csr bw_cuda_csr;
/* One sampling thread's stream and device scratch (as bw_sample_ctx is on the CPU). */
typedef struct bw_cuda_sample_ctx bw_cuda_sample_ctx;

#ifdef BURROW_CUDA
#define BW_CUDA_BUILT true

/* Devices the CUDA runtime sees; 0 when none or no driver; BURROW_E_CUDA on other errors. */
int bw_cuda_device_count(void);
/* "cuda:N <name>, sm_XY, <memory> GiB" of device `index` into buf. */
int bw_cuda_device_describe(int index, char *buf, size_t cap);

/* Put g on device `device`: device memory when its indptr and indices take at most
 * `budget` bytes (0: half the device's free memory), else pinned host memory. */
int bw_cuda_csr_open(bw_cuda_csr **out, const burrow_csr *g, int device, int64_t budget);
void bw_cuda_csr_close(bw_cuda_csr *c);
/* Whether the graph lives in pinned host memory (read through unified addressing). */
bool bw_cuda_csr_pinned(const bw_cuda_csr *c);
int bw_cuda_sample_ctx_open(bw_cuda_sample_ctx **out, const bw_cuda_csr *c);
void bw_cuda_sample_ctx_close(bw_cuda_sample_ctx *x);
/* bw_sample_batch (sampler_internal.h) on the GPU: the same keys, the same batch element
 * for element, downloaded into b's host arrays. */
int bw_cuda_sample_batch(bw_cuda_sample_ctx *x, const int64_t *seeds, int64_t n, int num_layers, const int *fanouts,
			 uint64_t key, struct bw_sampled *b);
/* The draws of n rows of the graph on the GPU, as the CPU's sampler draws them: row
 * rows[i] takes ip[i+1] - ip[i] neighbors (its whole row when that is its degree, else
 * draw.h's bw_draw from the stream bw_key(lkey, keys[i])), written in increasing row
 * position to out[ip[i] .. ip[i+1]) as the graph's neighbor ids. ip [n + 1] from 0 (the
 * caller sizes the rows: min(fanout, degree), or the degree), rows, keys [n] and out
 * [ip[n]] host memory. Distributed mini-batch training draws its part's rows with it,
 * keyed by their global ids. */
int bw_cuda_draw_rows(bw_cuda_sample_ctx *x, const int64_t *rows, const int64_t *keys, int64_t n, const int64_t *ip,
		      uint64_t lkey, int64_t *out);

#else /* a build without CUDA: the sampler's entry points refuse (compute has backend.c) */
#define BW_CUDA_BUILT false

static inline int bw_cuda_csr_open(bw_cuda_csr **out, const burrow_csr *g, int device, int64_t budget)
{
	(void)g, (void)device, (void)budget;
	*out = NULL;
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
static inline void bw_cuda_csr_close(bw_cuda_csr *c) { (void)c; }
static inline bool bw_cuda_csr_pinned(const bw_cuda_csr *c) { return (void)c, false; }
static inline int bw_cuda_sample_ctx_open(bw_cuda_sample_ctx **out, const bw_cuda_csr *c)
{
	(void)c;
	*out = NULL;
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
static inline void bw_cuda_sample_ctx_close(bw_cuda_sample_ctx *x) { (void)x; }
static inline int bw_cuda_sample_batch(bw_cuda_sample_ctx *x, const int64_t *seeds, int64_t n, int num_layers,
				       const int *fanouts, uint64_t key, struct bw_sampled *b)
{
	(void)x, (void)seeds, (void)n, (void)num_layers, (void)fanouts, (void)key, (void)b;
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
static inline int bw_cuda_draw_rows(bw_cuda_sample_ctx *x, const int64_t *rows, const int64_t *keys, int64_t n,
				    const int64_t *ip, uint64_t lkey, int64_t *out)
{
	(void)x, (void)rows, (void)keys, (void)n, (void)ip, (void)lkey, (void)out;
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
#endif

#ifdef __cplusplus
}
#endif
#endif
