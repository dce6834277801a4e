/* cuda.cu: CUDA runtime queries; the translation of CUDA errors into Burrow statuses. */
#include "cuda_gateway.h"

#include "cuda_try.h"

#include <stdio.h>

extern "C" int bw_cuda_device_count(void)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
		(void)cudaGetLastError(); /* clear the sticky error */
		return 0;
	}
	CUDA_TRY(e);
	return n;
}

extern "C" int bw_cuda_device_describe(int index, char *buf, size_t cap)
{
	cudaDeviceProp p;
	CUDA_TRY(cudaGetDeviceProperties(&p, index));
	snprintf(buf, cap, "cuda:%d %s, sm_%d%d, %.1f GiB", index, p.name, p.major, p.minor,
		 (double)p.totalGlobalMem / (1024.0 * 1024.0 * 1024.0));
	return 0;
}
