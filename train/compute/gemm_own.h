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

/* The first operand of bw_gemm_own_op: op(a) [m, k] is a (trans false: a [m, k] read in
 * place) or a's transpose (trans: a [k, m], copied a tile at a time), in one piece or two
 * side by side. Not transposed: op(a) = [a | a2], a [m, split] and a2 [m, k - split]
 * (SAGE's [x_dst | agg] against its stacked [W; W_neigh]); transposed: op(a) = [a | a2]^T,
 * a [k, split] and a2 [k, m - split], so c's first `split` rows are a^T b and the rest
 * a2^T b (the stacked weight gradient [x_dst | agg]^T gz). One piece: a2 NULL and split = k
 * (not transposed) or m (transposed). */
typedef struct bw_gemm_a {
	const float *a, *a2; /* borrowed */
	int64_t lda, lda2;
	int64_t split;
	bool trans;
} bw_gemm_a;

/* bw_gemm_own with op(a) as above: each element of c one sum over all of k in step order,
 * k in blocks of the kernel's depth (the first applies beta, the others add), whatever the
 * pieces and the threads. */
int bw_gemm_own_op(int threads, int64_t m, int64_t n, int64_t k, float alpha, const bw_gemm_a *a, const float *b,
		   int64_t ldb, float beta, float *c, int64_t ldc, float *scratch);

#endif /* BURROW_GEMM_OWN_H */
