/* gemm_own.h: the CPU backend's own AVX-512 sgemm (gemm_avx512.c), beside OpenBLAS: what
 * the CPU backend calls, and what the trainer asks before making a transposed copy. */
#ifndef BURROW_GEMM_OWN_H
#define BURROW_GEMM_OWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The CPU backend's own sgemm (gemm_avx512.c): c [m, n] = alpha a b + beta c, row-major,
 * neither transposed, on AVX-512, a read in place and only b packed, into `scratch` of
 * bw_gemm_own_scratch(n, k) bytes, 64-byte aligned. Rows of c split over `threads` OpenMP
 * threads with the same bits for any count. Available: this CPU and build have it (the CPU
 * backend uses it then, unless BURROW_CPU_GEMM=blas when it opens); fits: the shape is one
 * where it beats OpenBLAS's packing of both operands. */
bool bw_gemm_own_available(void);
bool bw_gemm_own_fits(int64_t m, int64_t n, int64_t k);
size_t bw_gemm_own_scratch(int64_t n, int64_t k);
int bw_gemm_own(int threads, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
		const float *b, int64_t ldb, float beta, float *c, int64_t ldc, float *scratch);

#endif /* BURROW_GEMM_OWN_H */
