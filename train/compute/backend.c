/* backend.c: the registry of compute backends: the only C file that asks whether the
 * build has CUDA. The CPU registers always; CUDA registers in CUDA builds, where it
 * reports its devices (its ops table lands with the CUDA backend). */
#include "compute.h"

#include <string.h>

#ifdef BURROW_CUDA
#include "../../core/cuda_gateway.h"

int burrow_cuda_device_count(void) { return bw_cuda_device_count(); }

static int cuda_devices(void)
{
	const int n = bw_cuda_device_count();
	return n > 0 ? n : 0;
}

static int cuda_init(bw_backend *be, int index, int threads)
{
	(void)threads;
	memset(be, 0, sizeof *be);
	return bw_err(BURROW_E_UNSUPPORTED, "backend: CUDA:%d: the CUDA training backend has no kernels yet", index);
}

static void cuda_release(bw_backend *be) { memset(be, 0, sizeof *be); }

static const bw_backend_reg cuda_reg = {
	.kind = BW_BACKEND_CUDA,
	.name = "cuda",
	.devices = cuda_devices,
	.init = cuda_init,
	.release = cuda_release,
};
#define CUDA_REG (&cuda_reg)
#else
int burrow_cuda_device_count(void)
{
	return bw_err(BURROW_E_UNSUPPORTED, "this libburrow was built without CUDA");
}
#define CUDA_REG NULL
#endif

static const bw_backend_reg *registry(int i)
{
	const bw_backend_reg *all[] = {bw_cpu_backend(), CUDA_REG};
	int n = 0;
	for (int k = 0; k < (int)(sizeof all / sizeof *all); k++)
		if (all[k] && n++ == i)
			return all[k];
	return NULL;
}

int bw_backend_count(void)
{
	int n = 0;
	while (registry(n))
		n++;
	return n;
}

const bw_backend_reg *bw_backend_at(int i) { return i >= 0 ? registry(i) : NULL; }

const bw_backend_reg *bw_backend_find(int kind)
{
	for (int i = 0; registry(i); i++)
		if (registry(i)->kind == kind)
			return registry(i);
	return NULL;
}

int bw_backend_init(bw_backend *be, int kind, int threads)
{
	memset(be, 0, sizeof *be);
	const bw_backend_reg *r = bw_backend_find(kind);
	if (!r)
		return kind == BW_BACKEND_CUDA
			       ? bw_err(BURROW_E_UNSUPPORTED, "the CUDA training backend is not available in this build")
			       : bw_err(BURROW_E_INVAL, "backend: unknown kind %d", kind);
	return r->init(be, 0, threads);
}

void bw_backend_release(bw_backend *be)
{
	const bw_backend_reg *r = be->ops ? bw_backend_find(be->kind) : NULL;
	if (r)
		r->release(be);
}
