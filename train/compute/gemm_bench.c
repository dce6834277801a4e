/* gemm_bench.c: burrow_gemm, single products on a CPU backend for timing them (burrow bench
 * gemm): through the backend's dispatcher as training multiplies, or one cblas_sgemm. */
#include "ops.h"

struct burrow_gemm {
	bw_backend be;
};

int burrow_gemm_open(burrow_gemm **out, int threads)
{
	*out = NULL;
	if (threads < 0)
		return bw_err(BURROW_E_INVAL, "gemm: %d threads", threads);
	burrow_gemm *g = bw_calloc(1, sizeof *g);
	if (!g)
		return BURROW_E_NOMEM;
	int st = bw_backend_init(&g->be, BW_BACKEND_CPU, threads);
	if (st) {
		bw_free(g);
		return st;
	}
	*out = g;
	return 0;
}

void burrow_gemm_close(burrow_gemm *g)
{
	if (!g)
		return;
	bw_backend_release(&g->be);
	bw_free(g);
}

static int check(int path, int64_t m, int64_t n, int64_t k, const float *a, const float *b, const float *c)
{
	if (path != BURROW_GEMM_BACKEND && path != BURROW_GEMM_CBLAS)
		return bw_err(BURROW_E_INVAL, "gemm: unknown path %d", path);
	if (m < 1 || n < 1 || k < 1 || m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || !a || !b || !c)
		return bw_err(BURROW_E_INVAL, "gemm: shape %lld x %lld x %lld outside [1, 2^31 - 1] or no data", (long long)m,
			      (long long)n, (long long)k);
	return 0;
}

int burrow_gemm_run(burrow_gemm *g, int path, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
		    const float *a, const float *b, float *c)
{
	int st = check(path, m, n, k, a, b, c);
	if (st)
		return st;
	if (path == BURROW_GEMM_CBLAS)
		return bw_cpu_cblas_gemm(g->be.threads, trans_a, trans_b, m, n, k, a, b, c);
	const bw_device *dev = g->be.dev;
	/* views of the caller's arrays: the dispatcher reads a and b only */
	const bw_tensor ta = bw_tensor_view(dev, (float *)a, trans_a ? k : m, trans_a ? m : k);
	const bw_tensor tb = bw_tensor_view(dev, (float *)b, trans_b ? n : k, trans_b ? k : n);
	bw_tensor tc = bw_tensor_view(dev, c, m, n);
	return bw_matmul(&g->be, &ta, trans_a, &tb, trans_b, 1.0f, 0.0f, &tc);
}

const char *burrow_gemm_kernel(const burrow_gemm *g, int path, bool trans_a, bool trans_b, int64_t m, int64_t n,
			       int64_t k)
{
	return path == BURROW_GEMM_BACKEND ? bw_cpu_gemm_kernel(&g->be, trans_a, trans_b, m, n, k) : "openblas";
}
