/* gemm_avx512.c: the CPU backend's own sgemm for c = alpha a b + beta c, a and b not
 * transposed, row-major, on AVX-512 (backend_cpu.c, cpu_gemm, calls it where gemm_own_fits).
 *
 * Why not OpenBLAS here: a BLAS packs both operands into its own panel layout on every call.
 * Full-graph training multiplies the same features X [N, F] by a new W every step, and X is
 * the large operand, so each product spent about an eighth of its time copying X (perf:
 * sgemm_oncopy and sgemm_otcopy, 11% of the CiteSeer-sized CSBM job). Here only b (W, or
 * the gradient G [N, H]: the narrow operand) is packed; a is read in place, mr rows at a
 * time along k, which the hardware prefetcher streams. X^T G reads X down its columns, so the
 * trainer keeps a transposed copy of X for it (bw_transposed) and multiplies that instead.
 *
 * The layout is BLIS's: b is packed into NR-column panels of KC rows, zero-padded to a
 * whole panel; the micro-kernel accumulates an MR x NR tile of c in 24 zmm registers over KC
 * steps, broadcasting a's MR values of each step against the panel's two vectors. Each KC
 * block of b (KC x n floats) is swept by every row tile before the next, so it stays in L2
 * while a's tiles stream from memory once per block.
 *
 * Rows of c are split over the threads in whole tiles; a row's sum is taken in the same
 * order whatever the split (KC blocks in turn, k ascending within one), so one and several
 * threads give the same bits. */
#include "gemm_own.h"

#include "../../core/internal.h"

#include <omp.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define MR 12
#define NR 32
#define KC 384

bool bw_gemm_own_available(void)
{
	static int have = -1; /* a race here writes the same value */
	if (have < 0) {
		__builtin_cpu_init();
		have = __builtin_cpu_supports("avx512f") ? 1 : 0;
	}
	return have == 1;
}

/* Row i of a tile: c_i = alpha (r0, r1) + beta c_i when `first` (beta 0: c not read), else
 * c_i + alpha (r0, r1); the first nv of its NR columns. */
__attribute__((target("avx512f,fma"))) static inline void store_row(float *ci, __m512 r0, __m512 r1, __mmask16 m0,
								    __mmask16 m1, __m512 va, __m512 vb, bool first,
								    bool beta0)
{
	r0 = _mm512_mul_ps(va, r0);
	r1 = _mm512_mul_ps(va, r1);
	if (!first) {
		r0 = _mm512_add_ps(_mm512_maskz_loadu_ps(m0, ci), r0);
		r1 = _mm512_add_ps(_mm512_maskz_loadu_ps(m1, ci + 16), r1);
	} else if (!beta0) {
		r0 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m0, ci), r0);
		r1 = _mm512_fmadd_ps(vb, _mm512_maskz_loadu_ps(m1, ci + 16), r1);
	}
	_mm512_mask_storeu_ps(ci, m0, r0);
	_mm512_mask_storeu_ps(ci + 16, m1, r1);
}

/* The tile c[0..mv) x [0..nv) of MR x NR from kc steps of a(r, q) bp[q][0..NR), where
 * a(r, q) = a[r lda + q] (store_row says how it lands). The accumulators are named, not an
 * array, so that nothing indexes them at run time and they stay in registers. */
__attribute__((target("avx512f,fma"))) static void micro(int64_t kc, const float *a, int64_t lda, const float *bp,
							  float *c, int64_t ldc, int mv, int nv, float alpha,
							  float beta, bool first)
{
	__m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
	       c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00,
	       c80 = c00, c81 = c00, c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
	const float *a0 = a, *a4 = a + 4 * lda, *a8 = a + 8 * lda;
	const int64_t l2 = 2 * lda, l3 = 3 * lda;
	for (int64_t q = 0; q < kc; q++) {
		const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);
		__m512 t;
#define ROW(x, y, p)                                                                                                \
	t = _mm512_set1_ps(p);                                                                                      \
	x = _mm512_fmadd_ps(t, b0, x);                                                                              \
	y = _mm512_fmadd_ps(t, b1, y);
		ROW(c00, c01, a0[q]) ROW(c10, c11, a0[lda + q]) ROW(c20, c21, a0[l2 + q]) ROW(c30, c31, a0[l3 + q])
		ROW(c40, c41, a4[q]) ROW(c50, c51, a4[lda + q]) ROW(c60, c61, a4[l2 + q]) ROW(c70, c71, a4[l3 + q])
		ROW(c80, c81, a8[q]) ROW(c90, c91, a8[lda + q]) ROW(ca0, ca1, a8[l2 + q]) ROW(cb0, cb1, a8[l3 + q])
#undef ROW
		bp += NR;
	}
	const __mmask16 m0 = nv >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nv) - 1);
	const __mmask16 m1 = nv >= 32 ? (__mmask16)0xffff : nv <= 16 ? 0 : (__mmask16)((1u << (nv - 16)) - 1);
	const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
	const bool b0 = beta == 0.0f;
#define PUT(i, x, y)                                                                                                \
	if ((i) < mv)                                                                                               \
		store_row(c + (i) * ldc, x, y, m0, m1, va, vb, first, b0);
	PUT(0, c00, c01) PUT(1, c10, c11) PUT(2, c20, c21) PUT(3, c30, c31) PUT(4, c40, c41) PUT(5, c50, c51)
	PUT(6, c60, c61) PUT(7, c70, c71) PUT(8, c80, c81) PUT(9, c90, c91) PUT(10, ca0, ca1) PUT(11, cb0, cb1)
#undef PUT
}

bool bw_gemm_own_fits(int64_t m, int64_t n, int64_t k)
{
	/* whole panels waste little (n = 70 computes 96 columns: too many), the tiles and the
	 * fork pay for themselves, and b's packed copy stays modest */
	const int64_t np = (n + NR - 1) / NR * NR;
	return m >= 4 * MR && n >= 64 && np * 4 <= n * 5 && k >= 64 && n <= 4096 &&
	       (double)m * (double)n * (double)k >= (double)(1 << 22);
}

size_t bw_gemm_own_scratch(int64_t n, int64_t k)
{
	return (size_t)k * (size_t)((n + NR - 1) / NR * NR) * sizeof(float);
}

int bw_gemm_own(int threads, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
		const float *b, int64_t ldb, float beta, float *c, int64_t ldc, float *scratch)
{
	const int64_t np = (n + NR - 1) / NR, nb = (k + KC - 1) / KC, tiles = (m + MR - 1) / MR;
	const int nt = (int)BW_MIN((int64_t)threads, tiles);
	/* b as nb blocks of KC rows (the last shorter), each np panels of [kc, NR], panel-major */
#pragma omp parallel num_threads(nt)
	{
#pragma omp for schedule(static)
		for (int64_t x = 0; x < nb * np; x++) {
			const int64_t p0 = x / np * KC, j = x % np, kc = BW_MIN(k - p0, (int64_t)KC);
			const int64_t nv = BW_MIN(n - j * NR, (int64_t)NR);
			float *d = scratch + p0 * np * NR + j * kc * NR;
			for (int64_t q = 0; q < kc; q++) {
				memcpy(d + q * NR, b + (p0 + q) * ldb + j * NR, (size_t)nv * sizeof(float));
				if (nv < NR)
					memset(d + q * NR + nv, 0, (size_t)(NR - nv) * sizeof(float));
			}
		}
		/* the implicit barrier: b is packed; then whole row tiles, each thread a run of them */
		float pad[MR * KC] __attribute__((aligned(64)));
		const int me = omp_get_thread_num();
		const int64_t t0 = tiles * me / nt, t1 = tiles * (me + 1) / nt;
		for (int64_t p0 = 0; p0 < k; p0 += KC) {
			const int64_t kc = BW_MIN(k - p0, (int64_t)KC);
			const float *bp = scratch + p0 * np * NR;
			for (int64_t tile = t0; tile < t1; tile++) {
				const int64_t i = tile * MR;
				const int mv = (int)BW_MIN(m - i, (int64_t)MR);
				const float *ai = a + i * lda + p0;
				int64_t ld = lda;
				if (mv < MR) { /* the last rows, zero-padded to a whole tile */
					for (int r = 0; r < MR; r++)
						for (int64_t q = 0; q < kc; q++)
							pad[r * KC + q] = r < mv ? ai[r * lda + q] : 0.0f;
					ai = pad;
					ld = KC;
				}
				for (int64_t j = 0; j < np; j++)
					micro(kc, ai, ld, bp + j * kc * NR, c + i * ldc + j * NR, ldc, mv,
					      (int)BW_MIN(n - j * NR, (int64_t)NR), alpha, beta, p0 == 0);
			}
		}
	}
	return 0;
}

#else /* not x86-64 with GCC's intrinsics: OpenBLAS does every product */

bool bw_gemm_own_available(void) { return false; }
bool bw_gemm_own_fits(int64_t m, int64_t n, int64_t k)
{
	(void)m, (void)n, (void)k;
	return false;
}
size_t bw_gemm_own_scratch(int64_t n, int64_t k)
{
	(void)n, (void)k;
	return 0;
}
int bw_gemm_own(int threads, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
		const float *b, int64_t ldb, float beta, float *c, int64_t ldc, float *scratch)
{
	(void)threads, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta;
	(void)c, (void)ldc, (void)scratch;
	return bw_err(BURROW_E_UNSUPPORTED, "gemm: this build has no AVX-512 kernel");
}

#endif
