/* cuda_gateway.h: the one header through which C code reaches the CUDA backend
 * (compiled only when the build has CUDA; see train/compute/backend.c). */
#ifndef BURROW_CUDA_GATEWAY_H
#define BURROW_CUDA_GATEWAY_H

#ifdef __cplusplus
extern "C" {
#endif

/* Devices the CUDA runtime sees; 0 when none or no driver; BURROW_E_CUDA on other errors. */
int bw_cuda_device_count(void);
/* "cuda:N <name>, sm_XY, <memory> GiB" of device `index` into buf. */
int bw_cuda_device_describe(int index, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif
#endif
