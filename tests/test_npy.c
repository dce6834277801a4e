/* test_npy.c: the .npy reader and writer: round trips, header versions, refusals. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/half.h"
#include "../graph/npy.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(npy, 60);

/* Fill n elements of dtype t with a pattern that differs per element and per dtype. */
static void fill(void *p, burrow_dtype t, int64_t n)
{
	for (int64_t i = 0; i < n; i++) {
		switch (t) {
		case BURROW_DTYPE_F16: ((uint16_t *)p)[i] = bw_f32_to_f16((float)i * 0.25f - 3.0f); break;
		case BURROW_DTYPE_F32: ((float *)p)[i] = (float)i * 1.5f - 7.0f; break;
		case BURROW_DTYPE_F64: ((double *)p)[i] = (double)i * 0.1 - 1e6; break;
		case BURROW_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)(i * 7 - 100); break;
		case BURROW_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)(i * 13); break;
		case BURROW_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)(i * 1000003 - 5); break;
		case BURROW_DTYPE_I64: ((int64_t *)p)[i] = i * 1000000007LL - (1LL << 40); break;
		case BURROW_DTYPE_BOOL: ((uint8_t *)p)[i] = (uint8_t)(i % 3 == 0); break;
		default: break;
		}
	}
}

static void roundtrip(burrow_dtype t, int ndim, const int64_t *shape, size_t align)
{
	bw_npy h = {.dtype = t, .ndim = ndim};
	for (int i = 0; i < ndim; i++)
		h.shape[i] = shape[i];
	int64_t n = bw_npy_count(&h);
	size_t bytes = (size_t)n * burrow_dtype_size(t);
	void *data = malloc(bytes ? bytes : 1);
	fill(data, t, n);
	char *p = tu_path(tu_dir, "a_%d_%d.npy", (int)t, ndim);
	cr_assert_eq(bw_npy_save(p, t, ndim, shape, data, align), 0, "%s", burrow_last_error());

	bw_npy r;
	void *back;
	cr_assert_eq(bw_npy_load(p, &r, &back), 0, "%s", burrow_last_error());
	cr_assert_eq(r.dtype, t);
	cr_assert_eq(r.ndim, ndim);
	for (int i = 0; i < ndim; i++)
		cr_assert_eq(r.shape[i], shape[i]);
	cr_assert_eq(r.data_offset % (int64_t)align, 0, "data offset %lld not a multiple of %zu",
		     (long long)r.data_offset, align);
	cr_assert_eq(tu_size(p), r.data_offset + (long long)bytes);
	cr_assert(memcmp(back, data, bytes) == 0, "data differs after round trip");
	bw_free(back);
	free(data);
	free(p);
}

Test(npy, roundtrip_every_dtype_1d_and_2d)
{
	const burrow_dtype all[] = {BURROW_DTYPE_F16, BURROW_DTYPE_F32, BURROW_DTYPE_F64, BURROW_DTYPE_I8,
				    BURROW_DTYPE_U8,  BURROW_DTYPE_I32, BURROW_DTYPE_I64, BURROW_DTYPE_BOOL};
	const int64_t s1[] = {1001}, s2[] = {37, 13}, s0[] = {0};
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
		roundtrip(all[i], 1, s1, BW_NPY_ALIGN);
		roundtrip(all[i], 2, s2, BW_NPY_ALIGN);
		roundtrip(all[i], 1, s0, BW_NPY_ALIGN);
	}
}

Test(npy, features_header_is_4096_bytes)
{
	const int64_t shape[] = {100, 128};
	roundtrip(BURROW_DTYPE_F32, 2, shape, BW_NPY_FEATURE_ALIGN);
	roundtrip(BURROW_DTYPE_F16, 2, shape, BW_NPY_FEATURE_ALIGN);
	char *p = tu_path(tu_dir, "f.npy");
	float *x = calloc(100 * 128, sizeof *x);
	cr_assert_eq(bw_npy_save(p, BURROW_DTYPE_F32, 2, shape, x, BW_NPY_FEATURE_ALIGN), 0);
	bw_npy h;
	cr_assert_eq(bw_npy_open(p, &h, NULL), 0);
	cr_assert_eq(h.data_offset, 4096);
	cr_assert_eq(h.version, 1);
	free(x);
	free(p);
}

Test(npy, scalar_and_3d_shapes)
{
	const int64_t s3[] = {2, 3, 4};
	roundtrip(BURROW_DTYPE_F32, 3, s3, BW_NPY_ALIGN);
	roundtrip(BURROW_DTYPE_I64, 0, NULL, BW_NPY_ALIGN);
}

/* Header text as numpy writes it, so files from numpy parse. */
Test(npy, header_text_matches_numpy)
{
	bw_npy h = {.dtype = BURROW_DTYPE_F32, .ndim = 2, .shape = {3, 4}};
	char buf[4096];
	size_t len;
	cr_assert_eq(bw_npy_format(&h, 64, buf, sizeof buf, &len), 0);
	cr_assert_eq(len % 64, 0);
	cr_assert_eq(buf[len - 1], '\n');
	cr_assert(strstr(buf + 10, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }") == buf + 10);
	h.ndim = 1;
	h.shape[0] = 5;
	cr_assert_eq(bw_npy_format(&h, 64, buf, sizeof buf, &len), 0);
	cr_assert(memmem(buf, len, "'shape': (5,), }", 16) != NULL);
}

/* A version 2.0 header (4-byte length), as numpy writes for very large dicts. */
Test(npy, reads_version_2_header)
{
	const char *dict = "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }";
	size_t dl = strlen(dict), total = (12 + dl + 1 + 63) / 64 * 64, hl = total - 12;
	unsigned char buf[256] = {0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, (unsigned char)hl, 0, 0, 0};
	memcpy(buf + 12, dict, dl);
	memset(buf + 12 + dl, ' ', total - 12 - dl - 1);
	buf[total - 1] = '\n';
	int64_t vals[3] = {5, -6, 1LL << 50};
	char *p = tu_path(tu_dir, "v2.npy");
	FILE *f = fopen(p, "wb");
	fwrite(buf, 1, total, f);
	fwrite(vals, sizeof vals[0], 3, f);
	fclose(f);
	bw_npy h;
	void *d;
	cr_assert_eq(bw_npy_load(p, &h, &d), 0, "%s", burrow_last_error());
	cr_assert_eq(h.version, 2);
	cr_assert_eq(h.dtype, BURROW_DTYPE_I64);
	cr_assert_eq(h.shape[0], 3);
	cr_assert(memcmp(d, vals, sizeof vals) == 0);
	bw_free(d);
	free(p);
}

static int save_i32(const char *p, int64_t n)
{
	int32_t *x = calloc((size_t)n, sizeof *x);
	int st = bw_npy_save(p, BURROW_DTYPE_I32, 1, &n, x, BW_NPY_ALIGN);
	free(x);
	return st;
}

Test(npy, truncated_file_refused_with_sizes)
{
	char *p = tu_path(tu_dir, "t.npy");
	cr_assert_eq(save_i32(p, 1000), 0);
	long long full = tu_size(p);
	tu_truncate(p, full - 4);
	bw_npy h;
	int st = bw_npy_open(p, &h, NULL);
	cr_assert_eq(st, BURROW_E_FORMAT);
	char want[128];
	snprintf(want, sizeof want, "size is %lld bytes, expected %lld", full - 4, full);
	cr_assert(strstr(burrow_last_error(), want), "message was: %s", burrow_last_error());
	cr_assert(strstr(burrow_last_error(), "t.npy"));
	/* a file cut inside the header */
	tu_truncate(p, 20);
	cr_assert_eq(bw_npy_open(p, &h, NULL), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "truncated"), "message was: %s", burrow_last_error());
	tu_truncate(p, 3);
	cr_assert_eq(bw_npy_open(p, &h, NULL), BURROW_E_FORMAT);
	free(p);
}

Test(npy, corrupted_headers_refused)
{
	char *p = tu_path(tu_dir, "c.npy");
	struct {
		size_t off;
		const char *bytes;
		const char *msg;
	} cases[] = {
		{0, "\x92", "bad magic"},
		{6, "\x07", "unsupported .npy version"},
		{21, "> ", "big-endian"},              /* '<i4' -> '>i4'... */
		{22, "q", "unsupported dtype"},        /* '<i4' -> '<q4' */
		{10, "[", "malformed"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_assert_eq(save_i32(p, 10), 0);
		size_t len;
		char *b = tu_read(p, &len);
		/* locate the descr value so the offsets above stay right whatever the layout */
		char *d = memmem(b, len, "'<i4'", 5);
		cr_assert(d);
		size_t off = cases[i].off;
		if (off == 21)
			off = (size_t)(d - b) + 1;
		if (off == 22)
			off = (size_t)(d - b) + 2;
		memcpy(b + off, cases[i].bytes, 1);
		FILE *f = fopen(p, "wb");
		fwrite(b, 1, len, f);
		fclose(f);
		free(b);
		bw_npy h;
		cr_assert_eq(bw_npy_open(p, &h, NULL), BURROW_E_FORMAT, "case %zu accepted", i);
		cr_assert(strstr(burrow_last_error(), cases[i].msg), "case %zu: message was: %s", i,
			  burrow_last_error());
	}
	free(p);
}

Test(npy, streaming_writer_commits_only_when_complete)
{
	char *p = tu_path(tu_dir, "s.npy");
	int64_t shape[2] = {10, 3};
	bw_npy_writer w;
	cr_assert_eq(bw_npy_writer_open(&w, p, BURROW_DTYPE_F32, 2, shape, BW_NPY_FEATURE_ALIGN), 0);
	float row[3] = {1, 2, 3};
	for (int i = 0; i < 9; i++)
		cr_assert_eq(bw_npy_writer_append(&w, row, sizeof row), 0);
	cr_assert_eq(bw_npy_writer_commit(&w), BURROW_E_INVAL, "short file committed");
	cr_assert(!tu_exists(p), "a short file was left under the final name");
	/* no temporary left either */
	char *out;
	tu_sh(&out, NULL, "ls -A '%s'", tu_dir);
	cr_assert_str_empty(out, "left behind: %s", out);
	free(out);
	/* too much data is refused */
	cr_assert_eq(bw_npy_writer_open(&w, p, BURROW_DTYPE_F32, 2, shape, BW_NPY_ALIGN), 0);
	float big[31] = {0};
	cr_assert_eq(bw_npy_writer_append(&w, big, sizeof big), BURROW_E_INVAL);
	bw_npy_writer_abort(&w);
	cr_assert(!tu_exists(p));
	free(p);
}

Test(npy, half_conversion_round_trips)
{
	/* every finite half converts to float and back exactly */
	for (uint32_t h = 0; h < 0x10000; h++) {
		if ((h & 0x7c00) == 0x7c00)
			continue;
		float f = bw_f16_to_f32((uint16_t)h);
		cr_assert_eq(bw_f32_to_f16(f), (uint16_t)h, "half %04x -> %g -> %04x", h, f, bw_f32_to_f16(f));
	}
	cr_assert_eq(bw_f32_to_f16(1.0f), 0x3c00);
	cr_assert_eq(bw_f32_to_f16(-2.0f), 0xc000);
	cr_assert_eq(bw_f32_to_f16(65504.0f), 0x7bff);
	cr_assert_eq(bw_f32_to_f16(1e6f), 0x7c00); /* overflow to inf */
	cr_assert_eq(bw_f32_to_f16(1.0f + 1.0f / 4096), 0x3c00); /* tie rounds to even */
}
