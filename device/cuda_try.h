/* cuda_try.h: CUDA_TRY, the one translation of a CUDA runtime error into a Burrow status,
 * for the .cu files outside the compute backend (device/cuda.cu, sampler/sample_cuda.cu). */
#ifndef BURROW_CUDA_TRY_H
#define BURROW_CUDA_TRY_H

#include "../core/internal.h"

#include <cuda_runtime.h>

/* Record a CUDA error with the expression, function, file and line; return BURROW_E_CUDA. */
#define CUDA_TRY(expr)                                                                              \
	do {                                                                                        \
		cudaError_t e_ = (expr);                                                            \
		if (e_ != cudaSuccess)                                                              \
			return bw_err(BURROW_E_CUDA, "%s: %s failed at %s:%d: %s", __func__, #expr,      \
				      __FILE__, __LINE__, cudaGetErrorString(e_));                  \
	} while (0)

/* After a kernel launch: its launch error, through CUDA_TRY. */
#define CUDA_LAUNCHED() CUDA_TRY(cudaGetLastError())

#endif
