/* cuda_gateway.h: the device layer's one header that asks whether the build has CUDA: the
 * CUDA runtime's queries (device/cuda.cu) and BW_CUDA_BUILT, which C code tests instead of
 * #ifdef. The compute backend's registry is train/compute/backend.c; the GPU sampler's
 * entry points are the sampler's own (sampler/sampler_internal.h). */
#ifndef BURROW_CUDA_GATEWAY_H
#define BURROW_CUDA_GATEWAY_H

#include "../core/internal.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifdef BURROW_CUDA
#define BW_CUDA_BUILT true

/* Devices the CUDA runtime sees; 0 when none or no driver; BURROW_E_CUDA on other errors. */
int bw_cuda_device_count(void);
/* "cuda:N <name>, sm_XY, <memory> GiB" of device `index` into buf. */
int bw_cuda_device_describe(int index, char *buf, size_t cap);

#else /* without CUDA: no runtime to ask; the registries have no CUDA entry */
#define BW_CUDA_BUILT false
#endif

#ifdef __cplusplus
}
#endif
#endif
