/* half.h: IEEE 754 binary16 <-> binary32 conversion (round to nearest even). */
#ifndef BURROW_HALF_H
#define BURROW_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint16_t bw_f32_to_f16(float f)
{
	uint32_t x;
	memcpy(&x, &f, sizeof x);
	uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7fffffu;
	int32_t exp = (int32_t)((x >> 23) & 0xff);
	if (exp == 0xff) /* inf or nan */
		return (uint16_t)(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0));
	exp = exp - 127 + 15;
	if (exp >= 0x1f)
		return (uint16_t)(sign | 0x7c00u); /* overflow to inf */
	if (exp <= 0) {                             /* subnormal or zero */
		if (exp < -10)
			return (uint16_t)sign;
		mant |= 0x800000u;
		uint32_t shift = (uint32_t)(14 - exp);
		uint32_t half = mant >> shift, rem = mant & ((1u << shift) - 1), mid = 1u << (shift - 1);
		if (rem > mid || (rem == mid && (half & 1)))
			half++;
		return (uint16_t)(sign | half);
	}
	uint32_t h = sign | ((uint32_t)exp << 10) | (mant >> 13), rem = mant & 0x1fffu;
	if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
		h++; /* may carry into the exponent, which is right */
	return (uint16_t)h;
}

static inline float bw_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu, x;
	if (exp == 0) {
		if (!mant) {
			x = sign;
		} else { /* subnormal: normalize */
			exp = 127 - 15 + 1;
			while (!(mant & 0x400u)) {
				mant <<= 1;
				exp--;
			}
			x = sign | (exp << 23) | ((mant & 0x3ffu) << 13);
		}
	} else if (exp == 0x1f) {
		x = sign | 0x7f800000u | (mant << 13);
	} else {
		x = sign | ((exp + 127 - 15) << 23) | (mant << 13);
	}
	float f;
	memcpy(&f, &x, sizeof f);
	return f;
}

/* n elements converted from src to dst, either unaligned (each moved by memcpy). In place
 * is fine from f32 to f16 (half i lands on bytes float i was read from) but not back. */
static inline void bw_f16_to_f32_n(void *dst, const void *src, size_t n)
{
	for (size_t e = 0; e < n; e++) {
		uint16_t h;
		memcpy(&h, (const char *)src + 2 * e, 2);
		const float f = bw_f16_to_f32(h);
		memcpy((char *)dst + 4 * e, &f, 4);
	}
}

static inline void bw_f32_to_f16_n(void *dst, const void *src, size_t n)
{
	for (size_t e = 0; e < n; e++) {
		float f;
		memcpy(&f, (const char *)src + 4 * e, 4);
		const uint16_t h = bw_f32_to_f16(f);
		memcpy((char *)dst + 2 * e, &h, 2);
	}
}

#endif /* BURROW_HALF_H */
