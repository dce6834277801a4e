/* rng.h: counter-keyed random numbers: a stream depends only on its key, never on threads. */
#ifndef BURROW_RNG_H
#define BURROW_RNG_H

#include <math.h>
#include <stdint.h>

/* The CUDA backend draws the same streams in its kernels (dropout masks equal bit for bit,
 * the GPU sampler's neighbors equal the CPU's). */
#ifdef __CUDACC__
#define BW_HD __host__ __device__
#else
#define BW_HD
#endif

/* splitmix64's finalizer: a bijective 64-bit mix. */
static inline BW_HD uint64_t bw_mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

/* Combine a key with one more coordinate (seed, tag, epoch, node, ...). */
static inline BW_HD uint64_t bw_key(uint64_t key, uint64_t v)
{
	return bw_mix64(key ^ bw_mix64(v + 0x632BE59BD9B4E019ull));
}

/* xoshiro256** seeded from a key. */
typedef struct bw_rng {
	uint64_t s[4];
} bw_rng;

static inline BW_HD void bw_rng_seed(bw_rng *r, uint64_t key)
{
	for (int i = 0; i < 4; i++) {
		key += 0x9E3779B97F4A7C15ull;
		r->s[i] = bw_mix64(key);
	}
}

static inline BW_HD uint64_t bw_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline BW_HD uint64_t bw_rng_next(bw_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = bw_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = bw_rotl(s[3], 45);
	return out;
}

/* Uniform in [0, 1) with 53 bits. */
static inline BW_HD double bw_rng_uniform(bw_rng *r) { return (double)(bw_rng_next(r) >> 11) * 0x1.0p-53; }

/* The 128-bit product a * b: its high 64 bits returned, its low 64 bits in *lo. */
static inline BW_HD uint64_t bw_mul128(uint64_t a, uint64_t b, uint64_t *lo)
{
#ifdef __CUDA_ARCH__
	*lo = a * b;
	return __umul64hi(a, b);
#else
	unsigned __int128 m = (unsigned __int128)a * b;
	*lo = (uint64_t)m;
	return (uint64_t)(m >> 64);
#endif
}

/* Uniform integer in [0, n), unbiased (Lemire's method); n > 0. The same draws on the
 * host and the device (the GPU sampler's neighbors equal the CPU's). */
static inline BW_HD uint64_t bw_rng_below(bw_rng *r, uint64_t n)
{
	uint64_t lo, hi = bw_mul128(bw_rng_next(r), n, &lo);
	if (lo < n) {
		uint64_t thresh = -n % n;
		while (lo < thresh)
			hi = bw_mul128(bw_rng_next(r), n, &lo);
	}
	return hi;
}

/* Two independent standard normals (Box-Muller). */
static inline void bw_rng_normal2(bw_rng *r, double z[2])
{
	double u1 = 1.0 - bw_rng_uniform(r); /* (0, 1] */
	double u2 = bw_rng_uniform(r);
	double rad = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
	z[0] = rad * cos(th);
	z[1] = rad * sin(th);
}

/* One standard normal. */
static inline double bw_rng_normal(bw_rng *r)
{
	double z[2];
	bw_rng_normal2(r, z);
	return z[0];
}

#endif /* BURROW_RNG_H */
