/* burrow/device.h: compute devices: the CUDA devices present, and whether a device name can compute here. */
#ifndef BURROW_DEVICE_PUBLIC_H
#define BURROW_DEVICE_PUBLIC_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- CUDA */

/* Number of CUDA devices usable now; BURROW_E_UNSUPPORTED in a build without CUDA,
 * 0 when the build has CUDA but the machine has no device. */
BURROW_API int burrow_cuda_device_count(void);
/* Whether `device` ("cpu", "cuda", "cuda:N"; NULL: the CPU) can compute here: 0, or
 * BURROW_E_INVAL for a name that is none of those and BURROW_E_UNSUPPORTED naming what is
 * missing (a build without CUDA, no GPU, no such index). Cheap: what a CLI calls before any
 * work. */
BURROW_API int burrow_device_check(const char *device);
/* One line about CUDA device `index` ("cuda:0 NVIDIA H200, sm_90, 139.8 GiB") into buf;
 * BURROW_E_UNSUPPORTED without CUDA or that device. */
BURROW_API int burrow_cuda_device_describe(int index, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_DEVICE_PUBLIC_H */
