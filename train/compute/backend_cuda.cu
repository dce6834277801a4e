/* backend_cuda.cu: the CUDA backend, the GPU twin of backend_cpu.c: its device (cudaMalloc,
 * cudaMemcpyAsync on streams, events, pinned host memory), its kernels (GEMM through cuBLAS,
 * aggregation through cuSPARSE's generic SpMM, elementwise kernels, the loss with its
 * reductions on the device) and its registry entry. Every slot computes what the CPU's does
 * (the contract is in backend_impl.h); tests/test_ops.c checks each against the same slow
 * references. Elementwise kernels are built without FMA contraction (--fmad=false, see the
 * Makefile) so that they round as the CPU's do; dropout draws the CPU's keyed streams
 * (core/rng.h), so its masks are equal bit for bit.
 *
 * Streams: each device has a main stream (non-blocking) that the backend's kernels run on.
 * A device call with a NULL stream ("synchronous") is queued on the main stream and waited
 * for, so it is ordered after every kernel queued before it; the pipeline's copies run on
 * streams of their own, ordered to the kernels by events. */
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include <dlfcn.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "backend_impl.h"
#include "rowwise.h"
}
#include "kernels.h"

/* ------------------------------------------------------------ errors */

static int cuda_fail(const char *who, const char *expr, cudaError_t e)
{
	return bw_err(BURROW_E_CUDA, "%s: %s: %s", who, expr, cudaGetErrorString(e));
}

#define CU(who, expr)                                                     \
	do {                                                              \
		cudaError_t e_ = (expr);                                  \
		if (e_ != cudaSuccess)                                    \
			return cuda_fail(who, #expr, e_);                 \
	} while (0)

#define BLAS(expr)                                                                                           \
	do {                                                                                                 \
		cublasStatus_t s_ = (expr);                                                                  \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                                             \
			return bw_err(BURROW_E_CUDA, "cuda: %s: cuBLAS status %d", #expr, (int)s_);          \
	} while (0)

#define SPARSE(expr)                                                                                         \
	do {                                                                                                 \
		cusparseStatus_t s_ = (expr);                                                                \
		if (s_ != CUSPARSE_STATUS_SUCCESS)                                                           \
			return bw_err(BURROW_E_CUDA, "cuda: %s: %s", #expr, sparse_api.error_string(s_));     \
	} while (0)

/* A kernel launch's configuration error, or an earlier asynchronous one. */
#define LAUNCHED(who) CU(who, cudaGetLastError())

/* ------------------------------------------------------------ the device */

#define MAX_DEVICES 64

typedef struct cuda_dev {
	bw_device dev;
	cudaStream_t main; /* the stream of the backend's kernels and of synchronous calls */
	bool ready;
} cuda_dev;

static cuda_dev g_devs[MAX_DEVICES];
static pthread_mutex_t g_devs_mu = PTHREAD_MUTEX_INITIALIZER;

static cudaStream_t main_of(const bw_device *d) { return ((const cuda_dev *)d->ctx)->main; }
static cudaStream_t stream_of(const bw_device *d, bw_stream *s) { return s ? (cudaStream_t)s : main_of(d); }

/* Every call first makes the device current on the calling thread (the loader thread too). */
#define ON_DEVICE(d) CU((d)->name, cudaSetDevice((d)->index))

static int cu_alloc(const bw_device *d, size_t bytes, void **out)
{
	ON_DEVICE(d);
	cudaError_t e = cudaMalloc(out, bytes);
	if (e == cudaErrorMemoryAllocation) {
		(void)cudaGetLastError();
		size_t free_b = 0, total_b = 0;
		(void)cudaMemGetInfo(&free_b, &total_b);
		return bw_err(BURROW_E_NOMEM, "%s: out of device memory for %zu bytes (%zu of %zu free)", d->name,
			      bytes, free_b, total_b);
	}
	CU(d->name, e);
	return 0;
}

static void cu_free(const bw_device *d, void *p)
{
	if (cudaSetDevice(d->index) == cudaSuccess)
		(void)cudaFree(p); /* cudaFree waits for the device's work: no kernel still reads p */
}

/* Queue on s, or on the main stream and wait (s NULL). */
static int finish(const bw_device *d, bw_stream *s)
{
	if (!s)
		CU(d->name, cudaStreamSynchronize(main_of(d)));
	return 0;
}

static int cu_memset(const bw_device *d, void *p, int byte, size_t n, bw_stream *s)
{
	ON_DEVICE(d);
	CU(d->name, cudaMemsetAsync(p, byte, n, stream_of(d, s)));
	return finish(d, s);
}

static int cu_upload(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	ON_DEVICE(d);
	CU(d->name, cudaMemcpyAsync(dst, src, n, cudaMemcpyHostToDevice, stream_of(d, s)));
	return finish(d, s);
}

static int cu_download(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	ON_DEVICE(d);
	CU(d->name, cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToHost, stream_of(d, s)));
	return finish(d, s);
}

static int cu_copy(const bw_device *d, void *dst, const void *src, size_t n, bw_stream *s)
{
	ON_DEVICE(d);
	CU(d->name, cudaMemcpyAsync(dst, src, n, cudaMemcpyDeviceToDevice, stream_of(d, s)));
	return finish(d, s);
}

static int cu_host_alloc(const bw_device *d, size_t bytes, void **out)
{
	ON_DEVICE(d);
	cudaError_t e = cudaHostAlloc(out, bytes, cudaHostAllocPortable);
	if (e == cudaErrorMemoryAllocation) {
		(void)cudaGetLastError();
		return bw_err(BURROW_E_NOMEM, "%s: cannot pin %zu bytes of host memory", d->name, bytes);
	}
	CU(d->name, e);
	return 0;
}

static void cu_host_free(const bw_device *d, void *p)
{
	(void)d;
	(void)cudaFreeHost(p);
}

static int cu_stream_open(const bw_device *d, bw_stream **out)
{
	ON_DEVICE(d);
	cudaStream_t s;
	CU(d->name, cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	*out = (bw_stream *)s;
	return 0;
}

static void cu_stream_close(const bw_device *d, bw_stream *s)
{
	(void)d;
	(void)cudaStreamDestroy((cudaStream_t)s);
}

static int cu_stream_sync(const bw_device *d, bw_stream *s)
{
	ON_DEVICE(d);
	CU(d->name, cudaStreamSynchronize(stream_of(d, s)));
	return 0;
}

static int cu_event_open(const bw_device *d, bw_event **out)
{
	ON_DEVICE(d);
	cudaEvent_t e;
	CU(d->name, cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	*out = (bw_event *)e;
	return 0;
}

static void cu_event_close(const bw_device *d, bw_event *e)
{
	(void)d;
	(void)cudaEventDestroy((cudaEvent_t)e);
}

static int cu_event_record(const bw_device *d, bw_event *e, bw_stream *s)
{
	ON_DEVICE(d);
	CU(d->name, cudaEventRecord((cudaEvent_t)e, stream_of(d, s)));
	return 0;
}

static int cu_event_wait(const bw_device *d, bw_stream *s, bw_event *e)
{
	ON_DEVICE(d);
	CU(d->name, cudaStreamWaitEvent(stream_of(d, s), (cudaEvent_t)e, 0));
	return 0;
}

static int cu_event_sync(const bw_device *d, bw_event *e)
{
	(void)d;
	CU(d->name, cudaEventSynchronize((cudaEvent_t)e));
	return 0;
}

static const bw_device_i cuda_device_i = {
	cu_alloc,      cu_free,        cu_memset,      cu_upload,      cu_download,    cu_copy,
	cu_host_alloc, cu_host_free,   cu_stream_open, cu_stream_close, cu_stream_sync, cu_event_open,
	cu_event_close, cu_event_record, cu_event_wait, cu_event_sync,
};

/* Device `index`, set up at its first use (never freed, as the CPU's static device). */
static int device_get(int index, const bw_device **out)
{
	*out = NULL;
	if (index < 0 || index >= MAX_DEVICES)
		return bw_err(BURROW_E_UNSUPPORTED, "device cuda:%d: this build handles cuda:0 to cuda:%d", index,
			      MAX_DEVICES - 1);
	pthread_mutex_lock(&g_devs_mu);
	cuda_dev *cd = &g_devs[index];
	int st = 0;
	if (!cd->ready) {
		cudaError_t e = cudaSetDevice(index);
		if (e == cudaSuccess)
			e = cudaStreamCreateWithFlags(&cd->main, cudaStreamNonBlocking);
		if (e != cudaSuccess) {
			st = bw_err(BURROW_E_CUDA, "device cuda:%d: %s", index, cudaGetErrorString(e));
		} else {
			cd->dev.iface = &cuda_device_i;
			cd->dev.kind = BW_DEVICE_CUDA;
			cd->dev.index = index;
			cd->dev.host_memory = false;
			snprintf(cd->dev.name, sizeof cd->dev.name, "cuda:%d", index);
			cd->dev.ctx = cd;
			cd->ready = true;
		}
	}
	pthread_mutex_unlock(&g_devs_mu);
	if (!st)
		*out = &cd->dev;
	return st;
}

/* ------------------------------------------------------------ the backend's context */

/* cuBLAS and cuSPARSE are opened on the first CUDA backend, not linked: libcublasLt, which
 * cuBLAS loads, maps and touches about 210 MB in its constructors, 0.05 s at the start of
 * every burrow command and every process loading libburrow, GPU or none (an empty program
 * linked with -lcublas: 0.05-0.07 s and 217 MB of peak RSS, against 0.00 s and 1 MB);
 * cuSPARSE, with the libnvJitLink it loads, 6.7 ms and 38 MB. The entry points used, each
 * typed as the header declares it. */
#define BW_STR2(x) #x
#define BW_STR(x) BW_STR2(x)
#define CUBLAS_SONAME "libcublas.so." BW_STR(CUBLAS_VER_MAJOR)
#define CUSPARSE_SONAME "libcusparse.so." BW_STR(CUSPARSE_VER_MAJOR)
static struct {
	decltype(&cublasCreate) create; /* cublas_v2.h's names are macros for the _v2 symbols */
	decltype(&cublasDestroy) destroy;
	decltype(&cublasSetStream) set_stream;
	decltype(&cublasSetMathMode) set_math_mode;
	decltype(&cublasSgemm) sgemm;
	char why[256]; /* empty when loaded */
} blas_api;
static struct {
	decltype(&cusparseCreate) create;
	decltype(&cusparseDestroy) destroy;
	decltype(&cusparseSetStream) set_stream;
	decltype(&cusparseGetErrorString) error_string;
	decltype(&cusparseCreateCsr) create_csr;
	decltype(&cusparseDestroySpMat) destroy_sp;
	decltype(&cusparseCreateDnMat) create_dn;
	decltype(&cusparseDestroyDnMat) destroy_dn;
	decltype(&cusparseSpMM_bufferSize) spmm_size;
	decltype(&cusparseSpMM) spmm;
	char why[256];
} sparse_api;
static pthread_once_t libs_once = PTHREAD_ONCE_INIT;

/* soname's symbols name[i] into *slot[i]; why gets the first failure, else stays empty. */
static void lib_open(const char *soname, const char *const *name, void **const *slot, size_t n, char *why,
		     size_t why_cap)
{
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why, why_cap, "%s", dlerror());
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (!(*slot[i] = dlsym(h, name[i]))) {
			snprintf(why, why_cap, "%s lacks %s", soname, name[i]);
			return;
		}
}

static void libs_load(void)
{
	static const char *const blas_name[] = {"cublasCreate_v2", "cublasDestroy_v2", "cublasSetStream_v2",
						"cublasSetMathMode", "cublasSgemm_v2"};
	void **const blas_slot[] = {(void **)&blas_api.create, (void **)&blas_api.destroy, (void **)&blas_api.set_stream,
				    (void **)&blas_api.set_math_mode, (void **)&blas_api.sgemm};
	static const char *const sparse_name[] = {"cusparseCreate",	    "cusparseDestroy",	  "cusparseSetStream",
						  "cusparseGetErrorString", "cusparseCreateCsr",  "cusparseDestroySpMat",
						  "cusparseCreateDnMat",    "cusparseDestroyDnMat", "cusparseSpMM_bufferSize",
						  "cusparseSpMM"};
	void **const sparse_slot[] = {(void **)&sparse_api.create,	(void **)&sparse_api.destroy,
				      (void **)&sparse_api.set_stream,	(void **)&sparse_api.error_string,
				      (void **)&sparse_api.create_csr,	(void **)&sparse_api.destroy_sp,
				      (void **)&sparse_api.create_dn,	(void **)&sparse_api.destroy_dn,
				      (void **)&sparse_api.spmm_size,	(void **)&sparse_api.spmm};
	static_assert(sizeof blas_name / sizeof *blas_name == sizeof blas_slot / sizeof *blas_slot, "one name a slot");
	static_assert(sizeof sparse_name / sizeof *sparse_name == sizeof sparse_slot / sizeof *sparse_slot,
		      "one name a slot");
	lib_open(CUBLAS_SONAME, blas_name, blas_slot, sizeof blas_name / sizeof *blas_name, blas_api.why,
		 sizeof blas_api.why);
	lib_open(CUSPARSE_SONAME, sparse_name, sparse_slot, sizeof sparse_name / sizeof *sparse_name, sparse_api.why,
		 sizeof sparse_api.why);
}

typedef struct cuda_ctx {
	cublasHandle_t blas;
	cusparseHandle_t sparse;
	cudaStream_t s;
	bool use_sparse;        /* aggregation through cuSPARSE (else the plain CSR kernel) */
	void *work;             /* cuSPARSE's workspace */
	size_t work_cap;
	int32_t *off;           /* a row range's offsets, rebased to 0 */
	size_t off_cap;
	int32_t *idx;           /* a row range's column indices, copied to aligned storage */
	size_t idx_cap;
	float *val;             /* a row range's edge values */
	size_t val_cap;
	float *xa, *ya;         /* the dense input and output, where theirs are not 16-byte aligned */
	size_t xa_cap, ya_cap;
	void *acc;              /* reductions' accumulators */
	size_t acc_cap;
} cuda_ctx;

static cuda_ctx *ctx_of(const bw_backend *be) { return (cuda_ctx *)be->ctx; }

/* Scratch of at least `bytes` (contents undefined after growth). */
static int scratch(const bw_backend *be, void **p, size_t *cap, size_t bytes)
{
	if (bytes <= *cap)
		return 0;
	const size_t n = bytes + bytes / 2;
	if (*p)
		cu_free(be->dev, *p); /* waits for the kernels that used it */
	*p = NULL;
	*cap = 0;
	int st = cu_alloc(be->dev, n, p);
	if (!st)
		*cap = n;
	return st;
}

/* Threads and blocks for n independent items (a grid-stride loop covers any n). */
#define THREADS BW_K_THREADS
static unsigned grid_for(int64_t n) { return bw_k_grid_for(n); }

/* This thread's place in the grid, for kernels.h's per-thread work. */
static __device__ __forceinline__ bw_kthread this_thread(void)
{
	bw_kthread t = {blockIdx.x, gridDim.x, threadIdx.x, blockDim.x};
	return t;
}

#define FOR_EACH(i, n) for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n); i += (int64_t)blockDim.x * gridDim.x)

/* ------------------------------------------------------------ GEMM */

__global__ void k_scale_matrix(float *c, int64_t m, int64_t n, int64_t ldc, float beta)
{
	FOR_EACH(i, m * n)
	{
		float *p = c + (i / n) * ldc + i % n;
		*p = beta == 0.0f ? 0.0f : beta * *p;
	}
}

/* Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands. */
static int cuda_gemm(const bw_backend *be, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
		     const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
	cuda_ctx *cx = ctx_of(be);
	if (m == 0 || n == 0)
		return 0;
	if (k == 0) {
		k_scale_matrix<<<grid_for(m * n), THREADS, 0, cx->s>>>(c, m, n, ldc, beta);
		LAUNCHED("cuda: gemm");
		return 0;
	}
	BLAS(blas_api.sgemm(cx->blas, tb ? CUBLAS_OP_T : CUBLAS_OP_N, ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m,
			 (int)k, &alpha, b, (int)ldb, a, (int)lda, &beta, c, (int)ldc));
	return 0;
}

/* ------------------------------------------------------------ aggregation */

/* The kernels' per-thread work is kernels.h's (tested on the host: tests/test_kernels.c). */
__global__ void k_csr_values(bw_agg mode, bool transposed, const int64_t *rp, const int32_t *col, int64_t r0,
			     int64_t n, int64_t e0, const int64_t *ip, const float *dn, const float *sn, int32_t *off,
			     int32_t *idx, float *val)
{
	bw_k_csr_values(this_thread(), mode, transposed, rp, col, r0, n, e0, ip, dn, sn, off, idx, val);
}

__global__ void k_self_term(const float *x, int64_t dim, int64_t r0, int64_t n, int64_t self_rows, const float *dn,
			    const float *sn, float *out)
{
	bw_k_self_term(this_thread(), x, dim, r0, n, self_rows, dn, sn, out);
}

__global__ void k_csr_rows(bw_agg mode, bool transposed, bool whole, const int64_t *rp, const int32_t *col,
			   int64_t r0, int64_t n, const int64_t *ip, const float *dn, const float *sn, const float *x,
			   int64_t dim, bool add, float *out)
{
	bw_k_csr_rows(this_thread(), mode, transposed, whole, rp, col, r0, n, ip, dn, sn, x, dim, add, out);
}

/* cuSPARSE's documented requirement is alignment to the element type (4 bytes), but cuSPARSE
 * 12's SpMV and SpMM use vector loads and stores and fault with "misaligned address" (a
 * sticky error that ends the context) on a dense array not aligned to 16 bytes: kokkos-kernels
 * #1889 and #2746 (cuSPARSE 12 wants the output 16-byte aligned for every scalar type),
 * Trilinos #11926, mfem #4065 ("Warp Misaligned Address" inside SpMV). So every array handed
 * to it starts on 16 bytes: the range's offsets, columns and values are written to scratch
 * (cudaMalloc: 256-byte aligned) from index 0, and a dense array that is not aligned (a row
 * range out + r0 * dim, a view) goes through scratch, copied in where its contents are read
 * (keep) and back after the product. */
static bool aligned16(const void *p) { return ((uintptr_t)p & 15) == 0; }

/* *p, or n floats of aligned scratch *buf holding them (copied when keep). */
static int aligned_dense(const bw_backend *be, const float **p, float **buf, size_t *cap, int64_t n, bool keep)
{
	if (aligned16(*p))
		return 0;
	int st = scratch(be, (void **)buf, cap, (size_t)n * sizeof(float));
	if (st)
		return st;
	if (keep)
		CU("cuda: aggregate", cudaMemcpyAsync(*buf, *p, (size_t)n * sizeof(float), cudaMemcpyDeviceToDevice,
						      ctx_of(be)->s));
	*p = *buf;
	return 0;
}

/* out rows [r0, r1) (+)= the weighted CSR rp / col (rows of the walk; hp its host copy) times
 * x [nx, dim]. beta 1 adds to out, 0 overwrites. */
static int spmm_rows(const bw_backend *be, bw_agg mode, bool transposed, bool whole, const int64_t *rp,
		     const int64_t *hp, const int32_t *col, int64_t r0, int64_t r1, int64_t nx, const float *x,
		     int64_t dim, const bw_block_dev *d, float beta, float *out)
{
	cuda_ctx *cx = ctx_of(be);
	const int64_t n = r1 - r0, e0 = hp[r0], nnz = hp[r1] - e0;
	if (n == 0 || dim == 0)
		return 0;
	if (nnz == 0) {
		if (beta == 0.0f)
			CU("cuda: aggregate", cudaMemsetAsync(out + r0 * dim, 0, (size_t)(n * dim) * sizeof(float), cx->s));
		return 0;
	}
	if (!cx->use_sparse || nnz > INT32_MAX || nx > INT32_MAX || n > INT32_MAX) {
		k_csr_rows<<<grid_for(n * 32), THREADS, 0, cx->s>>>(mode, transposed, whole && beta == 0.0f, rp, col,
								     r0, n, d->indptr, d->dst_norm, d->src_norm, x,
								     dim, beta != 0.0f, out);
		LAUNCHED("cuda: aggregate");
		return 0;
	}
	int st;
	if ((st = scratch(be, (void **)&cx->off, &cx->off_cap, (size_t)(n + 1) * sizeof(int32_t))) ||
	    (st = scratch(be, (void **)&cx->idx, &cx->idx_cap, (size_t)nnz * sizeof(int32_t))) ||
	    (st = scratch(be, (void **)&cx->val, &cx->val_cap, (size_t)nnz * sizeof(float))))
		return st;
	k_csr_values<<<grid_for(n + 1), THREADS, 0, cx->s>>>(mode, transposed, rp, col, r0, n, e0, d->indptr,
							      d->dst_norm, d->src_norm, cx->off, cx->idx, cx->val);
	LAUNCHED("cuda: aggregate");
	const float *xs = x;
	float *ys = out + r0 * dim;
	if ((st = aligned_dense(be, &xs, &cx->xa, &cx->xa_cap, nx * dim, true)) ||
	    (st = aligned_dense(be, (const float **)&ys, &cx->ya, &cx->ya_cap, n * dim, beta != 0.0f)))
		return st;
	cusparseSpMatDescr_t A = NULL;
	cusparseDnMatDescr_t X = NULL, Y = NULL;
	const float alpha = 1.0f;
	size_t need = 0;
	cusparseStatus_t s = sparse_api.create_csr(&A, n, nx, nnz, cx->off, cx->idx, cx->val, CUSPARSE_INDEX_32I,
					       CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = sparse_api.create_dn(&X, nx, dim, dim, (void *)xs, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = sparse_api.create_dn(&Y, n, dim, dim, ys, CUDA_R_32F, CUSPARSE_ORDER_ROW);
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = sparse_api.spmm_size(cx->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE,
					    &alpha, A, X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, &need);
	if (s == CUSPARSE_STATUS_SUCCESS && (st = scratch(be, &cx->work, &cx->work_cap, need ? need : 1)))
		s = CUSPARSE_STATUS_ALLOC_FAILED;
	if (s == CUSPARSE_STATUS_SUCCESS)
		s = sparse_api.spmm(cx->sparse, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A,
				 X, &beta, Y, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, cx->work);
	if (Y)
		sparse_api.destroy_dn(Y);
	if (X)
		sparse_api.destroy_dn(X);
	if (A)
		sparse_api.destroy_sp(A);
	if (st)
		return st;
	if (s != CUSPARSE_STATUS_SUCCESS)
		return bw_err(BURROW_E_CUDA, "cuda: aggregate: cuSPARSE SpMM of %lld rows, %lld edges: %s", (long long)n,
			      (long long)nnz, sparse_api.error_string(s));
	if (ys != out + r0 * dim) /* the rows back from the aligned scratch */
		CU("cuda: aggregate", cudaMemcpyAsync(out + r0 * dim, ys, (size_t)(n * dim) * sizeof(float),
						      cudaMemcpyDeviceToDevice, cx->s));
	return 0;
}

static int cuda_agg_fwd(const bw_backend *be, const bw_block *b, bw_block_part part, bw_agg mode, const float *x,
			int64_t dim, int64_t r0, int64_t r1, bool add, float *out)
{
	const bw_block_dev *d = &b->d;
	const int64_t *hp = part == BW_PART_ALL ? b->indptr : b->part_indptr[part - 1];
	float beta = add ? 1.0f : 0.0f;
	if (mode == BW_AGG_GCN && !add) {
		k_self_term<<<grid_for((r1 - r0) * dim), THREADS, 0, ctx_of(be)->s>>>(x, dim, r0, r1 - r0, b->num_dst,
										d->dst_norm, d->src_norm, out);
		LAUNCHED("cuda: aggregate");
		beta = 1.0f;
	}
	return spmm_rows(be, mode, false, part == BW_PART_ALL && !add, d->part_indptr[part], hp, d->part_indices[part],
			 r0, r1, b->num_src, x, dim, d, beta, out);
}

static int cuda_agg_bwd(const bw_backend *be, const bw_block *b, bw_agg mode, const float *gout, int64_t dim,
			int64_t j0, int64_t j1, float *gx)
{
	const bw_block_dev *d = &b->d;
	float beta = 0.0f;
	if (mode == BW_AGG_GCN) {
		k_self_term<<<grid_for((j1 - j0) * dim), THREADS, 0, ctx_of(be)->s>>>(gout, dim, j0, j1 - j0, b->num_dst,
										d->dst_norm, d->src_norm, gx);
		LAUNCHED("cuda: aggregate backward");
		beta = 1.0f;
	}
	return spmm_rows(be, mode, true, false, d->t_indptr, b->t_indptr, d->t_indices, j0, j1, b->num_dst, gout, dim,
			 d, beta, gx);
}

/* ------------------------------------------------------------ elementwise */

__global__ void k_bias_add(float *y, int64_t rows, int64_t cols, const float *bias)
{
	FOR_EACH(i, rows * cols) y[i] += bias[i % cols];
}

static int cuda_bias_add(const bw_backend *be, float *y, int64_t rows, int64_t cols, const float *bias)
{
	k_bias_add<<<grid_for(rows * cols), THREADS, 0, ctx_of(be)->s>>>(y, rows, cols, bias);
	LAUNCHED("cuda: bias add");
	return 0;
}

/* Column sums in double: 32 columns by 8 row lanes per block, partial sums added into acc. */
__global__ void k_col_sum(const float *g, int64_t rows, int64_t cols, double *acc)
{
	__shared__ double part[8][33];
	const int64_t c = blockIdx.x * 32 + threadIdx.x;
	double s = 0.0;
	if (c < cols)
		for (int64_t r = blockIdx.y * 8 + threadIdx.y; r < rows; r += (int64_t)gridDim.y * 8)
			s += g[r * cols + c];
	part[threadIdx.y][threadIdx.x] = s;
	__syncthreads();
	if (threadIdx.y == 0 && c < cols) {
		for (int k = 1; k < 8; k++)
			s += part[k][threadIdx.x];
		atomicAdd(acc + c, s);
	}
}

__global__ void k_to_float(const double *acc, int64_t n, float *out)
{
	FOR_EACH(i, n) out[i] = (float)acc[i];
}

static int cuda_col_sum(const bw_backend *be, const float *g, int64_t rows, int64_t cols, float *out)
{
	cuda_ctx *cx = ctx_of(be);
	if (cols == 0)
		return 0;
	int st = scratch(be, &cx->acc, &cx->acc_cap, (size_t)cols * sizeof(double));
	if (st)
		return st;
	CU("cuda: column sum", cudaMemsetAsync(cx->acc, 0, (size_t)cols * sizeof(double), cx->s));
	const int64_t ry = (rows + 8 * 64 - 1) / (8 * 64);
	const dim3 grid((unsigned)((cols + 31) / 32), (unsigned)(ry < 1 ? 1 : ry > 1024 ? 1024 : ry));
	k_col_sum<<<grid, dim3(32, 8), 0, cx->s>>>(g, rows, cols, (double *)cx->acc);
	k_to_float<<<grid_for(cols), THREADS, 0, cx->s>>>((const double *)cx->acc, cols, out);
	LAUNCHED("cuda: column sum");
	return 0;
}

__global__ void k_relu(float *x, int64_t n)
{
	FOR_EACH(i, n) x[i] = x[i] < 0.0f ? 0.0f : x[i]; /* NaN passes through, as on the CPU */
}

__global__ void k_relu_bwd(float *g, const float *y, int64_t n)
{
	FOR_EACH(i, n) g[i] = y[i] > 0.0f ? g[i] : 0.0f;
}

static int cuda_relu_fwd(const bw_backend *be, float *x, int64_t n)
{
	k_relu<<<grid_for(n), THREADS, 0, ctx_of(be)->s>>>(x, n);
	LAUNCHED("cuda: relu");
	return 0;
}

static int cuda_relu_bwd(const bw_backend *be, float *g, const float *y, int64_t n)
{
	k_relu_bwd<<<grid_for(n), THREADS, 0, ctx_of(be)->s>>>(g, y, n);
	LAUNCHED("cuda: relu backward");
	return 0;
}

/* A thread per row draws the row's stream bw_key(key, r), as the CPU does. */
__global__ void k_dropout(float *x, uint8_t *mask, int64_t rows, int64_t cols, uint64_t thresh, float scale,
			  uint64_t key)
{
	FOR_EACH(r, rows)
	{
		uint8_t *m = mask + r * cols;
		float *xr = x + r * cols;
		bw_dropout_mask_row(m, cols, key, r, thresh);
		for (int64_t c = 0; c < cols; c++)
			xr[c] = m[c] ? xr[c] * scale : 0.0f;
	}
}

static int cuda_dropout_fwd(const bw_backend *be, float *x, uint8_t *mask, int64_t rows, int64_t cols, float p,
			    uint64_t key)
{
	const float scale = 1.0f / (1.0f - p);
	const uint64_t thresh = (uint64_t)llround((double)p * 4294967296.0);
	k_dropout<<<grid_for(rows), THREADS, 0, ctx_of(be)->s>>>(x, mask, rows, cols, thresh, scale, key);
	LAUNCHED("cuda: dropout");
	return 0;
}

__global__ void k_dropout_bwd(float *g, const uint8_t *mask, int64_t n, float scale)
{
	FOR_EACH(i, n) g[i] = mask[i] ? g[i] * scale : 0.0f;
}

static int cuda_dropout_bwd(const bw_backend *be, float *g, const uint8_t *mask, int64_t n, float p)
{
	k_dropout_bwd<<<grid_for(n), THREADS, 0, ctx_of(be)->s>>>(g, mask, n, 1.0f / (1.0f - p));
	LAUNCHED("cuda: dropout backward");
	return 0;
}

__global__ void k_axpy(int64_t n, float alpha, const float *x, float *y)
{
	FOR_EACH(i, n) y[i] += alpha * x[i];
}

__global__ void k_scale(int64_t n, float alpha, float *x)
{
	FOR_EACH(i, n) x[i] *= alpha;
}

static int cuda_axpy(const bw_backend *be, int64_t n, float alpha, const float *x, float *y)
{
	k_axpy<<<grid_for(n), THREADS, 0, ctx_of(be)->s>>>(n, alpha, x, y);
	LAUNCHED("cuda: axpy");
	return 0;
}

static int cuda_scale(const bw_backend *be, int64_t n, float alpha, float *x)
{
	k_scale<<<grid_for(n), THREADS, 0, ctx_of(be)->s>>>(n, alpha, x);
	LAUNCHED("cuda: scale");
	return 0;
}

/* ------------------------------------------------------------ loss and argmax */

typedef bw_loss_acc loss_acc;

__global__ void k_loss_init(loss_acc *a) { bw_k_loss_init(a); }

__global__ void k_loss_check(const int32_t *labels, const int64_t *sel, int64_t n, int64_t rows, int64_t classes,
			     loss_acc *a)
{
	bw_k_loss_check(this_thread(), labels, sel, n, rows, classes, a);
}

__global__ void k_loss_rows(const float *logits, int64_t classes, const int32_t *labels, const int64_t *sel,
			    int64_t n, float *grad, loss_acc *a)
{
	bw_k_loss_rows(this_thread(), logits, classes, labels, sel, n, grad, a);
}

__global__ void k_loss_final(const loss_acc *a, const int32_t *labels, const int64_t *sel, int64_t rows,
			     int64_t classes, bw_loss *out)
{
	bw_k_loss_final(a, labels, sel, rows, classes, out);
}

static int cuda_nll_loss(const bw_backend *be, const float *logits, int64_t rows, int64_t classes,
			 const int32_t *labels, const int64_t *sel, int64_t nsel, float *grad, bw_loss *out)
{
	cuda_ctx *cx = ctx_of(be);
	const int64_t n = sel ? nsel : rows;
	int st = scratch(be, &cx->acc, &cx->acc_cap, sizeof(loss_acc));
	if (st)
		return st;
	loss_acc *a = (loss_acc *)cx->acc;
	if (grad)
		CU("cuda: loss", cudaMemsetAsync(grad, 0, (size_t)(rows * classes) * sizeof(float), cx->s));
	k_loss_init<<<1, 1, 0, cx->s>>>(a);
	k_loss_check<<<grid_for(n), THREADS, 0, cx->s>>>(labels, sel, n, rows, classes, a);
	k_loss_rows<<<grid_for(n), THREADS, 0, cx->s>>>(logits, classes, labels, sel, n, grad, a);
	k_loss_final<<<1, 1, 0, cx->s>>>(a, labels, sel, rows, classes, out);
	LAUNCHED("cuda: loss");
	return 0;
}

__global__ void k_argmax(const float *x, int64_t rows, int64_t cols, int32_t *out)
{
	FOR_EACH(r, rows) out[r] = bw_row_argmax(x + r * cols, cols);
}

static int cuda_argmax(const bw_backend *be, const float *x, int64_t rows, int64_t cols, int32_t *out)
{
	k_argmax<<<grid_for(rows), THREADS, 0, ctx_of(be)->s>>>(x, rows, cols, out);
	LAUNCHED("cuda: argmax");
	return 0;
}

/* ------------------------------------------------------------ optimizers */

__global__ void k_adam(float *p, const float *g, float *m, float *v, int64_t n, bw_adam_k a)
{
	bw_k_adam(this_thread(), p, g, m, v, n, a);
}

/* The scalars as the CPU computes them (in double, then rounded), the update per element. */
static int cuda_adam(const bw_backend *be, float *p, const float *g, float *m, float *v, int64_t n,
		     const bw_adam_args *a)
{
	k_adam<<<grid_for(n), THREADS, 0, ctx_of(be)->s>>>(p, g, m, v, n, bw_k_adam_scalars(a));
	LAUNCHED("cuda: adam");
	return 0;
}

__global__ void k_sgd(float *p, const float *g, float *mom, int64_t n, float lr, float momentum, float wd)
{
	bw_k_sgd(this_thread(), p, g, mom, n, lr, momentum, wd);
}

static int cuda_sgd(const bw_backend *be, float *p, const float *g, float *mom, int64_t n, float lr, float momentum,
		    float weight_decay)
{
	k_sgd<<<grid_for(n), THREADS, 0, ctx_of(be)->s>>>(p, g, mom, n, lr, momentum, weight_decay);
	LAUNCHED("cuda: sgd");
	return 0;
}

/* One thread per element of the n rows of dim floats. */
__global__ void k_gather_rows(const float *x, int64_t dim, const int64_t *idx, int64_t n, float *out)
{
	FOR_EACH(i, n * dim) out[i] = x[idx[i / dim] * dim + i % dim];
}

__global__ void k_scatter_add_rows(const float *in, int64_t dim, const int64_t *idx, int64_t n, float *x)
{
	FOR_EACH(i, n * dim) x[idx[i / dim] * dim + i % dim] += in[i]; /* idx distinct: no two threads meet */
}

static int cuda_gather_rows(const bw_backend *be, const float *x, int64_t dim, const int64_t *idx, int64_t n,
			    float *out)
{
	if (n < 1)
		return 0;
	k_gather_rows<<<grid_for(n * dim), THREADS, 0, ctx_of(be)->s>>>(x, dim, idx, n, out);
	LAUNCHED("cuda: gather rows");
	return 0;
}

static int cuda_scatter_add_rows(const bw_backend *be, const float *in, int64_t dim, const int64_t *idx, int64_t n,
				 float *x)
{
	if (n < 1)
		return 0;
	k_scatter_add_rows<<<grid_for(n * dim), THREADS, 0, ctx_of(be)->s>>>(in, dim, idx, n, x);
	LAUNCHED("cuda: scatter-add rows");
	return 0;
}

/* Designated, in the table's order (C++ requires it); the optional families this backend
 * lacks are NULL: matmul multiplies dense, and bw_model_supported refuses at open a model
 * that needs the max aggregator, attention (GAT) or a normalization. */
static const bw_ops cuda_ops = {
	.name = "cuda",
	.gemm = cuda_gemm,
	.agg_fwd = cuda_agg_fwd,
	.agg_bwd = cuda_agg_bwd,
	.bias_add = cuda_bias_add,
	.col_sum = cuda_col_sum,
	.relu_fwd = cuda_relu_fwd,
	.relu_bwd = cuda_relu_bwd,
	.dropout_fwd = cuda_dropout_fwd,
	.dropout_bwd = cuda_dropout_bwd,
	.axpy = cuda_axpy,
	.scale = cuda_scale,
	.nll_loss = cuda_nll_loss,
	.argmax = cuda_argmax,
	.adam = cuda_adam,
	.sgd = cuda_sgd,
	.gather_rows = cuda_gather_rows,
	.scatter_add_rows = cuda_scatter_add_rows,
	.spmm = NULL,             /* BW_OP_SPMM */
	.seg_max_fwd = NULL,      /* BW_OP_MAX_AGG */
	.seg_max_bwd = NULL,
	.head_dot = NULL,         /* BW_OP_ATTENTION */
	.head_dot_bwd = NULL,
	.edge_softmax_fwd = NULL,
	.edge_softmax_bwd = NULL,
	.att_agg_fwd = NULL,
	.att_agg_bwd = NULL,
	.row_norm_fwd = NULL,     /* BW_OP_LAYER_NORM, BW_OP_BATCH_NORM */
	.row_norm_bwd = NULL,
	.col_norm_fwd = NULL,
	.col_norm_bwd = NULL,
	.col_norm_apply = NULL,
	.col_scale = NULL,
	.col_dot = NULL,
};

/* ------------------------------------------------------------ registry entry */

static int cuda_devices(void)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	if (e != cudaSuccess) {
		(void)cudaGetLastError();
		return 0;
	}
	return n;
}

static void cuda_release(bw_backend *be)
{
	cuda_ctx *cx = ctx_of(be);
	if (cx) {
		(void)cudaSetDevice(be->dev->index);
		(void)cudaStreamSynchronize(cx->s);
		if (cx->blas)
			blas_api.destroy(cx->blas);
		if (cx->sparse)
			sparse_api.destroy(cx->sparse);
		(void)cudaFree(cx->work);
		(void)cudaFree(cx->off);
		(void)cudaFree(cx->idx);
		(void)cudaFree(cx->val);
		(void)cudaFree(cx->xa);
		(void)cudaFree(cx->ya);
		(void)cudaFree(cx->acc);
		bw_free(cx);
	}
	memset(be, 0, sizeof *be);
}

/* The runtime's answer when there is no device: what is missing, in one line. */
static int no_device(int index)
{
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);
	(void)cudaGetLastError();
	if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || n == 0)
		return bw_err(BURROW_E_UNSUPPORTED, "device cuda:%d: no CUDA GPU on this machine (%s)", index,
			      e == cudaSuccess ? "the runtime sees none" : cudaGetErrorString(e));
	if (e != cudaSuccess)
		return bw_err(BURROW_E_UNSUPPORTED, "device cuda:%d: the CUDA runtime cannot start: %s", index,
			      cudaGetErrorString(e));
	return bw_err(BURROW_E_UNSUPPORTED, "device cuda:%d: this machine has %d CUDA device%s (cuda:0 .. cuda:%d)",
		      index, n, n == 1 ? "" : "s", n - 1);
}

static int cuda_init(bw_backend *be, const bw_backend_cfg *cfg)
{
	memset(be, 0, sizeof *be);
	if (cfg->index < 0 || cfg->index >= cuda_devices())
		return no_device(cfg->index);
	const bw_device *dev;
	int st = device_get(cfg->index, &dev);
	if (st)
		return st;
	CU(dev->name, cudaSetDevice(dev->index)); /* the handles belong to the current device */
	cuda_ctx *cx = (cuda_ctx *)bw_calloc(1, sizeof *cx);
	if (!cx)
		return BURROW_E_NOMEM;
	be->ops = &cuda_ops;
	be->dev = dev;
	be->ctx = cx;
	be->kind = BW_BACKEND_CUDA;
	be->threads = bw_threads(cfg->threads);
	be->gemm_threads = be->threads; /* cuBLAS runs the GEMMs; host threads only for host work */
	cx->s = main_of(dev);
	be->stream = (bw_stream *)cx->s;
	const char *agg = getenv("BURROW_CUDA_AGG"); /* "kernel": the plain CSR kernel instead of cuSPARSE */
	cx->use_sparse = !(agg && !strcmp(agg, "kernel"));
	pthread_once(&libs_once, libs_load);
	if (blas_api.why[0] || sparse_api.why[0]) {
		const bool blas = blas_api.why[0];
		cuda_release(be);
		return bw_err(BURROW_E_UNSUPPORTED, "%s: cannot load %s: %s", dev->name, blas ? "cuBLAS" : "cuSPARSE",
			      blas ? blas_api.why : sparse_api.why);
	}
	cublasStatus_t bs = blas_api.create(&cx->blas);
	if (bs == CUBLAS_STATUS_SUCCESS)
		bs = blas_api.set_stream(cx->blas, cx->s);
	if (bs == CUBLAS_STATUS_SUCCESS)
		bs = blas_api.set_math_mode(cx->blas, cfg->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_PEDANTIC_MATH);
	if (bs != CUBLAS_STATUS_SUCCESS)
		st = bw_err(BURROW_E_CUDA, "%s: cannot start cuBLAS (status %d)", dev->name, (int)bs);
	cusparseStatus_t ss = st ? CUSPARSE_STATUS_SUCCESS : sparse_api.create(&cx->sparse);
	if (ss == CUSPARSE_STATUS_SUCCESS && !st)
		ss = sparse_api.set_stream(cx->sparse, cx->s);
	if (ss != CUSPARSE_STATUS_SUCCESS)
		st = bw_err(BURROW_E_CUDA, "%s: cannot start cuSPARSE: %s", dev->name, sparse_api.error_string(ss));
	if (st)
		cuda_release(be);
	return st;
}

static const bw_backend_reg cuda_reg = {
	.kind = BW_BACKEND_CUDA,
	.name = "cuda",
	.ops = &cuda_ops,
	.devices = cuda_devices,
	.init = cuda_init,
	.release = cuda_release,
};

extern "C" const bw_backend_reg *bw_cuda_backend(void) { return &cuda_reg; }
