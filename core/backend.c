/* backend.c: the registry of compute backends: the only C file that asks whether the
 * build has CUDA. */
#include "internal.h"

#ifdef BURROW_CUDA
#include "cuda_gateway.h"

int burrow_cuda_device_count(void) { return bw_cuda_device_count(); }
#else
int burrow_cuda_device_count(void)
{
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
#endif
