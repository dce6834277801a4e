/* backend.c: the registry of compute backends: the only C file that asks whether the
 * build has CUDA. */
#include "internal.h"
#include "../train/train.h"

#ifdef BURROW_CUDA
#include "cuda_gateway.h"

int burrow_cuda_device_count(void) { return bw_cuda_device_count(); }
#else
int burrow_cuda_device_count(void)
{
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
#endif

int bw_backend_init(bw_backend *be, int kind, int threads)
{
	be->kind = kind;
	be->threads = bw_threads(threads);
	switch (kind) {
	case BW_BACKEND_CPU:
		be->ops = bw_cpu_ops();
		return 0;
	case BW_BACKEND_CUDA:
		/* The CUDA table (cuBLAS, cuSPARSE) registers here when it lands. */
		be->ops = NULL;
		return bw_err(BURROW_E_UNSUPPORTED, "the CUDA training backend is not available in this build");
	default:
		be->ops = NULL;
		return bw_err(BURROW_E_INVAL, "backend: unknown kind %d", kind);
	}
}
