/* sample_nocuda.c: the GPU sampler's entry points in a build without CUDA (the Makefile
 * compiles it instead of sample_cuda.cu): each refuses, naming the build. */
#include "sampler_internal.h"

static int no_cuda(void) { return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA"); }

int bw_cuda_csr_open(bw_cuda_csr **out, const burrow_csr *g, int device, int64_t budget)
{
	(void)g, (void)device, (void)budget;
	*out = NULL;
	return no_cuda();
}

void bw_cuda_csr_close(bw_cuda_csr *c) { (void)c; }

bool bw_cuda_csr_pinned(const bw_cuda_csr *c) { return (void)c, false; }

int bw_cuda_sample_ctx_open(bw_cuda_sample_ctx **out, const bw_cuda_csr *c)
{
	(void)c;
	*out = NULL;
	return no_cuda();
}

void bw_cuda_sample_ctx_close(bw_cuda_sample_ctx *x) { (void)x; }

int bw_cuda_sample_batch(bw_cuda_sample_ctx *x, const int64_t *seeds, int64_t n, int num_layers, const int *fanouts,
			 uint64_t key, const bw_labor_batch *labor, int labor_star, bw_sampled *b)
{
	(void)x, (void)seeds, (void)n, (void)num_layers, (void)fanouts, (void)key, (void)labor, (void)labor_star, (void)b;
	return no_cuda();
}

int bw_cuda_draw_rows(bw_cuda_sample_ctx *x, const int64_t *rows, const int64_t *keys, int64_t n, const int64_t *ip,
		      uint64_t lkey, int64_t *out)
{
	(void)x, (void)rows, (void)keys, (void)n, (void)ip, (void)lkey, (void)out;
	return no_cuda();
}
