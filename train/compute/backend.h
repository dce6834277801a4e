/* backend.h: a compute backend in use (its device, its kernels' table, their context), the
 * registry of the backends this build has, device names, and what a backend can run
 * (bw_backend_supports: asked when a trainer opens, not at its first batch). The table
 * itself (bw_ops) is in backend_impl.h, for the backends and the dispatchers only. */
#ifndef BURROW_BACKEND_H
#define BURROW_BACKEND_H

#include "../../device/device.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct bw_backend bw_backend;
typedef struct bw_ops bw_ops; /* a backend's kernels (backend_impl.h) */
typedef struct bw_op_count bw_op_count; /* what its ops add to when counted (opcount.h) */

enum bw_backend_kind { BW_BACKEND_CPU = 0, BW_BACKEND_CUDA = 1, BW_BACKEND_KINDS = 2 };

/* A backend in use: its device, its kernels, and their context. */
struct bw_backend {
	const bw_ops *ops;
	const bw_device *dev;  /* where its tensors live (borrowed from the registry) */
	void *ctx;             /* the backend's own state: library handles; the CPU's GEMM scratch */
	bw_stream *stream;     /* the compute stream its kernels run on; NULL on the CPU */
	int kind;              /* enum bw_backend_kind */
	int threads;           /* OpenMP threads for CPU kernels, >= 1 */
	int gemm_threads;      /* of those, how many a GEMM splits over: threads, or 1 under
	                          RLIMIT_AS (backend_cpu.c, blas_fit: each concurrent OpenBLAS
	                          caller maps its own work buffer, and a failed mapping hangs) */
	bool gemm_wants_transposed; /* a^T b of a constant a is faster on a's transposed copy
	                          (bw_transposed): the CPU with its own AVX-512 GEMM */
	bw_op_count *count;    /* NULL, or where the dispatchers count each op (opcount.h;
	                          borrowed, set by its user after init) */
};

/* What a backend is opened with. */
typedef struct bw_backend_cfg {
	int index;    /* device index of the kind (CUDA:N); 0 for the CPU */
	int threads;  /* host threads of its kernels; 0 = the OpenMP default */
	bool tf32;    /* the GPU's GEMMs may round their inputs to TF32 (default off: float32 throughout) */
} bw_backend_cfg;

/* One entry of the registry: a kind this build knows. */
typedef struct bw_backend_reg {
	int kind;
	const char *name;
	/* its kernels, the same table init gives every backend of the kind: what it can run is
	 * known without its device (bw_ops_supports) */
	const bw_ops *ops;
	/* devices of this kind present now: > 0, 0 for none (a registered backend without its
	 * device: tests count it as skipped) */
	int (*devices)(void);
	/* fill be for cfg's device (the CPU backend sets its OpenMP and BLAS threads here) */
	int (*init)(bw_backend *be, const bw_backend_cfg *cfg);
	void (*release)(bw_backend *be);
} bw_backend_reg;

/* The registered backends (the CPU first; CUDA only in CUDA builds). */
int bw_backend_count(void);
const bw_backend_reg *bw_backend_at(int i);
/* The registry's entry for a kind, NULL when this build lacks it. */
const bw_backend_reg *bw_backend_find(int kind);
/* Fill be for a kind's device 0; a kind this build lacks is BURROW_E_UNSUPPORTED. */
int bw_backend_init(bw_backend *be, int kind, int threads);
/* The same for any device of the kind, with cfg's settings; a kind without the device, or
 * a build without the kind, is BURROW_E_UNSUPPORTED naming what is missing. */
int bw_backend_open(bw_backend *be, int kind, const bw_backend_cfg *cfg);
void bw_backend_release(bw_backend *be);
/* The CPU backend's registry entry (backend_cpu.c). */
const bw_backend_reg *bw_cpu_backend(void);
/* Timing products (burrow bench gemm, gemm_bench.c): the kernel a CPU backend's gemm runs for
 * the shape, "avx512" or "openblas"; and c [m, n] = op(a) op(b), packed, by one cblas_sgemm
 * with OpenBLAS at `threads` threads (then back at the backend's one). */
const char *bw_cpu_gemm_kernel(const bw_backend *be, bool ta, bool tb, int64_t m, int64_t n, int64_t k);
int bw_cpu_cblas_gemm(int threads, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b,
		      float *c);
#ifdef BURROW_CUDA
/* The CUDA backend's registry entry (backend_cuda.cu). */
const bw_backend_reg *bw_cuda_backend(void);
#endif

/* The backend's name, "cpu" or "cuda" (its table's). */
const char *bw_backend_name(const bw_backend *be);

/* Families of kernels a backend may lack: each is one or more optional slots of its table
 * (backend_impl.h). The required slots are always there and are not asked about. */
typedef enum bw_op {
	BW_OP_SPMM = 0,      /* spmm: bw_matmul of a sparse copy (without it: multiplied dense) */
	BW_OP_MAX_AGG = 1,   /* seg_max_fwd, seg_max_bwd: SAGE's max aggregator */
	BW_OP_ATTENTION = 2, /* head_dot(_bwd), edge_softmax_fwd / _bwd, att_agg_fwd / _bwd: GAT */
	BW_OP_LAYER_NORM = 3,/* row_norm_fwd / _bwd, col_scale, col_dot */
	BW_OP_BATCH_NORM = 4,/* col_norm_fwd / _bwd / _apply, col_scale, col_dot */
	BW_OP_EDGE_WEIGHT = 5,/* agg_w_fwd, agg_w_bwd: aggregation with edge weights (--edge-weight) */
	BW_OP_COUNT = 6
} bw_op;

/* Does the table run op? Every slot of the family is filled. The answer comes from the
 * table alone, so a registry entry's (bw_backend_reg.ops) is known without its device, and
 * it cannot disagree with the dispatchers, which answer BURROW_E_UNSUPPORTED for a NULL slot. */
bool bw_ops_supports(const bw_ops *ops, bw_op op);
/* The same for a backend in use. */
bool bw_backend_supports(const bw_backend *be, bw_op op);
/* The family's kernels in words, "attention (head_dot, edge_softmax, att_agg)"; NULL for no family. */
const char *bw_op_name(bw_op op);

#endif /* BURROW_BACKEND_H */
