/* gemm_avx512.c: the CPU backend's own sgemm for c = alpha op(a) b + beta c, b not
 * transposed, row-major, on AVX-512 (backend_cpu.c, cpu_gemm and cpu_gemm_cat, call it where
 * gemm_own_fits); op(a) is a, a^T, or two pieces side by side (bw_gemm_a, gemm_own.h).
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
 * block of b (KC x n floats) is packed, then swept by every row tile before the next, so it
 * stays in L2 while a's tiles stream from memory once per block (two blocks of scratch: the
 * threads pack the next while none reads it any more). A transposed a (the weight gradient
 * X^T G of a mini-batch, k its rows: tens of thousands) is copied a tile's MR columns by KC
 * steps at a time into the thread's pad, which the micro-kernel then reads as rows. SAGE's two
 * pieces [x_dst | agg] are read in place, one after the other within one sum (issue 38:
 * its two products as one, one pass over c).
 *
 * Rows of c are taken by the threads in whole tiles, dynamically; a row's sum is taken in the
 * same order whoever takes it (KC blocks in turn, k ascending within one), so one and several
 * threads give the same bits. */
#include "gemm_own.h"

#include "../../core/internal.h"

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

/* kc steps of the tile's 12 rows of a (a(r, q) = a[r lda + q]) against the panel bp, which
 * advances past them: the accumulators of micro, named so nothing indexes them at run time. */
#define STEPS(kc, a, lda)                                                                                           \
	do {                                                                                                        \
		const float *a0 = (a), *a4 = a0 + 4 * (lda), *a8 = a0 + 8 * (lda);                                  \
		const int64_t l1 = (lda), l2 = 2 * (lda), l3 = 3 * (lda);                                           \
		for (int64_t q = 0; q < (kc); q++) {                                                                \
			const __m512 b0 = _mm512_load_ps(bp), b1 = _mm512_load_ps(bp + 16);                         \
			__m512 t;                                                                                   \
			ROW(c00, c01, a0[q]) ROW(c10, c11, a0[l1 + q]) ROW(c20, c21, a0[l2 + q])                    \
			ROW(c30, c31, a0[l3 + q]) ROW(c40, c41, a4[q]) ROW(c50, c51, a4[l1 + q])                    \
			ROW(c60, c61, a4[l2 + q]) ROW(c70, c71, a4[l3 + q]) ROW(c80, c81, a8[q])                    \
			ROW(c90, c91, a8[l1 + q]) ROW(ca0, ca1, a8[l2 + q]) ROW(cb0, cb1, a8[l3 + q])               \
			bp += NR;                                                                                   \
		}                                                                                                   \
	} while (0)
#define ROW(x, y, p)                                                                                                \
	t = _mm512_set1_ps(p);                                                                                      \
	x = _mm512_fmadd_ps(t, b0, x);                                                                              \
	y = _mm512_fmadd_ps(t, b1, y);

/* The tile c[0..mv) x [0..nv) of MR x NR from k1 steps of a(r, q) = a[r lda + q], then k2
 * steps of a2 (the same rows of the second operand beside it: [a | a2], k2 may be 0), against
 * the panel bp of k1 + k2 rows; one sum per element over both, in q order (store_row says how
 * it lands). */
__attribute__((target("avx512f,fma"))) static void micro(int64_t k1, const float *a, int64_t lda, int64_t k2,
							  const float *a2, int64_t lda2, const float *bp, float *c,
							  int64_t ldc, int mv, int nv, float alpha, float beta, bool first)
{
	__m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00, c30 = c00,
	       c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00, c60 = c00, c61 = c00, c70 = c00, c71 = c00,
	       c80 = c00, c81 = c00, c90 = c00, c91 = c00, ca0 = c00, ca1 = c00, cb0 = c00, cb1 = c00;
	STEPS(k1, a, lda);
	if (k2)
		STEPS(k2, a2, lda2);
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
#undef ROW
#undef STEPS

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
	/* two blocks of b: the threads read one while they pack the next */
	return 2 * (size_t)BW_MIN(k, (int64_t)KC) * (size_t)((n + NR - 1) / NR * NR) * sizeof(float);
}

/* Rows [p0, p0 + kc) of b packed into d as np panels of [kc, NR], zero-padded past n; the
 * threads take the panels one at a time (a thread on a shared core packs fewer), and the
 * loop's implicit barrier ends the packing for all. */
static void pack_b(const float *b, int64_t ldb, int64_t n, int64_t np, int64_t p0, int64_t kc, float *d)
{
#pragma omp for schedule(dynamic, 1)
	for (int64_t j = 0; j < np; j++) {
		const int64_t nv = BW_MIN(n - j * NR, (int64_t)NR);
		float *dj = d + j * kc * NR;
		for (int64_t q = 0; q < kc; q++) {
			memcpy(dj + q * NR, b + (p0 + q) * ldb + j * NR, (size_t)nv * sizeof(float));
			if (nv < NR)
				memset(dj + q * NR + nv, 0, (size_t)(NR - nv) * sizeof(float));
		}
	}
}

/* A tile's rows of op(a) over one block of steps, as micro reads them: up to two pieces in
 * place, or one copy in the thread's pad. */
typedef struct tile_a {
	const float *a, *a2;
	int64_t lda, lda2, k1, k2;
} tile_a;

/* Rows [i, i + mv) of op(a) over steps [p0, p0 + kc): in place where a is not transposed
 * and the tile is whole (the steps before op->split from a, the rest from a2), else copied
 * into pad [MR, KC], zero past mv (a short last tile, or a transposed piece: row i + r of
 * op(a) is column r of the piece that holds row i, since no tile straddles op->split). */
static tile_a tile_rows(const bw_gemm_a *op, int64_t i, int mv, int64_t p0, int64_t kc, float *pad)
{
	if (op->trans) {
		const bool second = i >= op->split;
		const float *src = second ? op->a2 + (i - op->split) : op->a + i;
		const int64_t ld = second ? op->lda2 : op->lda;
		for (int64_t q = 0; q < kc; q++) {
			const float *sq = src + (p0 + q) * ld;
			for (int r = 0; r < MR; r++)
				pad[r * KC + q] = r < mv ? sq[r] : 0.0f;
		}
		return (tile_a){.a = pad, .lda = KC, .k1 = kc};
	}
	const int64_t k1 = BW_MAX((int64_t)0, BW_MIN(op->split - p0, kc)), k2 = kc - k1;
	const float *a = op->a + i * op->lda + p0, *a2 = k2 ? op->a2 + i * op->lda2 + (p0 + k1 - op->split) : NULL;
	if (mv == MR)
		return k1 ? (tile_a){.a = a, .lda = op->lda, .k1 = k1, .a2 = a2, .lda2 = op->lda2, .k2 = k2}
			  : (tile_a){.a = a2, .lda = op->lda2, .k1 = k2};
	for (int r = 0; r < MR; r++)
		for (int64_t q = 0; q < kc; q++)
			pad[r * KC + q] = r >= mv ? 0.0f : q < k1 ? a[r * op->lda + q] : a2[r * op->lda2 + q - k1];
	return (tile_a){.a = pad, .lda = KC, .k1 = kc};
}

int bw_gemm_own_op(int threads, int64_t m, int64_t n, int64_t k, float alpha, const bw_gemm_a *a, const float *b,
		   int64_t ldb, float beta, float *c, int64_t ldc, float *scratch)
{
	/* row tiles: those of op(a)'s first `seg` rows, then those of the rest (a transposed
	 * pair of pieces: no tile takes rows of both) */
	const int64_t np = (n + NR - 1) / NR, seg = a->trans ? a->split : m;
	const int64_t t1 = (seg + MR - 1) / MR, tiles = t1 + (m - seg + MR - 1) / MR;
	const int nt = (int)BW_MIN((int64_t)threads, tiles);
	const int64_t half = BW_MIN(k, (int64_t)KC) * np * NR;
#pragma omp parallel num_threads(nt)
	{
		/* block by block: pack b's block into one half of scratch (every thread has done
		 * the block before the last with the other half: it passed the last packing's
		 * barrier), then the row tiles, taken one at a time by whichever thread is free (a
		 * thread on a core shared with another process takes fewer; each tile's sums are
		 * the same whoever takes it) */
		float pad[MR * KC] __attribute__((aligned(64)));
		for (int64_t p0 = 0, x = 0; p0 < k; p0 += KC, x ^= 1) {
			const int64_t kc = BW_MIN(k - p0, (int64_t)KC);
			const float *bp = scratch + x * half;
			pack_b(b, ldb, n, np, p0, kc, scratch + x * half);
#pragma omp for schedule(dynamic, 1) nowait
			for (int64_t u = 0; u < tiles; u++) {
				const int64_t i = u < t1 ? u * MR : seg + (u - t1) * MR;
				const int mv = (int)BW_MIN((u < t1 ? seg : m) - i, (int64_t)MR);
				const tile_a r = tile_rows(a, i, mv, p0, kc, pad);
				for (int64_t j = 0; j < np; j++)
					micro(r.k1, r.a, r.lda, r.k2, r.a2, r.lda2, bp + j * kc * NR, c + i * ldc + j * NR, ldc,
					      mv, (int)BW_MIN(n - j * NR, (int64_t)NR), alpha, beta, p0 == 0);
			}
		}
	}
	return 0;
}

int bw_gemm_own(int threads, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
		const float *b, int64_t ldb, float beta, float *c, int64_t ldc, float *scratch)
{
	const bw_gemm_a op = {.a = a, .lda = lda, .split = k};
	return bw_gemm_own_op(threads, m, n, k, alpha, &op, b, ldb, beta, c, ldc, scratch);
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
int bw_gemm_own_op(int threads, int64_t m, int64_t n, int64_t k, float alpha, const bw_gemm_a *a, const float *b,
		   int64_t ldb, float beta, float *c, int64_t ldc, float *scratch)
{
	(void)threads, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)b, (void)ldb, (void)beta, (void)c;
	(void)ldc, (void)scratch;
	return bw_err(BURROW_E_UNSUPPORTED, "gemm: this build has no AVX-512 kernel");
}

#endif
