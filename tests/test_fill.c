/* test_fill.c: bw_typed_fill_mean on a written typed dataset against a slow float32 reference (authors from papers over a relation stored the other way, institutions from the filled authors), bytes the same under any memory budget, meta.json's reference to the in-place file kept. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../core/half.h"
#include "../core/internal.h"
#include "../datasets/dsio.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

TU_SCRATCH_SUITE(fill_mean, 120);

enum { AUTHOR, INST, PAPER, NT };
#define NA 12000 /* past one chunk of rows under 1 MiB */
#define NI 50
#define NP 300
#define DIM 8
#define EW 40000 /* writes: past one batch of pairs under 1 MiB */
#define EF 9000

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static int64_t ws[EW], wd[EW], fs[EF], fd[EF];
static uint16_t xp[NP * DIM];

/* authors writing papers, authors affiliated with institutions, the papers' float16 rows. */
static void write_dataset(const char *dir)
{
	uint64_t s = 42;
	for (int i = 0; i < EW; i++) {
		ws[i] = (int64_t)(lcg(&s) % NA);
		wd[i] = (int64_t)(lcg(&s) % NP);
	}
	for (int i = 0; i < EF; i++) {
		fs[i] = (int64_t)(lcg(&s) % (NA - 100)); /* the last 100 authors have no institution */
		fd[i] = (int64_t)(lcg(&s) % NI);
	}
	for (int i = 0; i < NP * DIM; i++)
		xp[i] = bw_f32_to_f16((float)((int64_t)(lcg(&s) % 2001) - 1000) / 97.0f);
	burrow_writer *w;
	int t;
	cr_assert_eq(burrow_writer_open(&w, dir, "fill", NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_add_type(w, "author", NA, &t), 0);
	cr_assert_eq(burrow_writer_add_type(w, "institution", NI, &t), 0);
	cr_assert_eq(burrow_writer_add_type(w, "paper", NP, &t), 0);
	cr_assert_eq(burrow_writer_relation_begin(w, AUTHOR, "affiliated_with", INST, NULL), 0);
	cr_assert_eq(burrow_writer_relation_add(w, fs, fd, EF), 0);
	cr_assert_eq(burrow_writer_relation_end(w), 0);
	cr_assert_eq(burrow_writer_relation_begin(w, AUTHOR, "writes", PAPER, NULL), 0);
	cr_assert_eq(burrow_writer_relation_add(w, ws, wd, EW), 0);
	cr_assert_eq(burrow_writer_relation_end(w), 0);
	cr_assert_eq(burrow_writer_type_features_begin(w, PAPER, DIM, BURROW_DTYPE_F16), 0);
	cr_assert_eq(burrow_writer_features_append(w, xp, NP), 0);
	cr_assert_eq(burrow_writer_features_end(w), 0);
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
}

/* The slow reference: row v = mean over its distinct neighbors, ascending, float32 sums. */
static void ref_mean(const int64_t *key, const int64_t *nb, int e, int64_t nkey, int64_t nnb, const uint16_t *x,
		     uint16_t *out)
{
	bool *seen = calloc((size_t)(nkey * nnb), 1);
	cr_assert(seen);
	for (int i = 0; i < e; i++)
		seen[key[i] * nnb + nb[i]] = true;
	for (int64_t v = 0; v < nkey; v++) {
		float acc[DIM] = {0};
		int64_t c = 0;
		for (int64_t u = 0; u < nnb; u++)
			if (seen[v * nnb + u]) {
				for (int k = 0; k < DIM; k++)
					acc[k] += bw_f16_to_f32(x[u * DIM + k]);
				c++;
			}
		for (int k = 0; k < DIM; k++)
			out[v * DIM + k] = bw_f32_to_f16(c ? acc[k] / (float)c : 0.0f);
	}
	free(seen);
}

static void *load_rows(const char *dir, const char *type, int64_t n)
{
	char *p = tu_path(dir, "/features/%s.npy", type);
	burrow_npy_array a;
	cr_assert_eq(burrow_npy_read(p, &a), 0, "%s", burrow_last_error());
	cr_assert(a.dtype == BURROW_DTYPE_F16 && a.ndim == 2 && a.shape[0] == n && a.shape[1] == DIM);
	free(p);
	return a.data;
}

Test(fill_mean, equals_a_float32_reference_under_any_budget)
{
	char *dir = tu_path(tu_dir, "/ds"), *big = tu_path(tu_dir, "/ds-big");
	write_dataset(dir);
	cr_assert_eq(tu_sh(NULL, NULL, "cp -r %s %s", dir, big), 0);
	cr_assert_eq(bw_typed_fill_mean(dir, (size_t)1 << 20, NULL, NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_typed_fill_mean(big, (size_t)256 << 20, NULL, NULL), 0, "%s", burrow_last_error());
	uint16_t *ra = malloc(NA * DIM * sizeof *ra), *ri = malloc(NI * DIM * sizeof *ri);
	ref_mean(ws, wd, EW, NA, NP, xp, ra);
	ref_mean(fd, fs, EF, NI, NA, ra, ri);
	uint16_t *a = load_rows(dir, "author", NA), *in = load_rows(dir, "institution", NI);
	cr_assert_eq(memcmp(a, ra, sizeof(uint16_t) * NA * DIM), 0, "authors differ from the reference");
	cr_assert_eq(memcmp(in, ri, sizeof(uint16_t) * NI * DIM), 0, "institutions differ from the reference");
	for (int k = 0; k < DIM; k++) /* an author without institution keeps zeros only there */
		cr_assert(bw_f16_to_f32(a[(NA - 1) * DIM + k]) == bw_f16_to_f32(ra[(NA - 1) * DIM + k]));
	uint16_t *b = load_rows(big, "author", NA);
	cr_assert_eq(memcmp(a, b, sizeof(uint16_t) * NA * DIM), 0, "the budget changed the bytes");
	bw_free(a);
	bw_free(in);
	bw_free(b);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_type_info ti;
	cr_assert_eq(burrow_dataset_type_info(ds, INST, &ti), 0);
	cr_assert(ti.feat_dim == DIM && ti.feat_dtype == BURROW_DTYPE_F16 && strstr(ti.features_path, "institution.npy"));
	burrow_dataset_close(ds);
	/* nothing left to fill: meta.json unchanged, no error */
	cr_assert_eq(bw_typed_fill_mean(dir, 0, NULL, NULL), 0, "%s", burrow_last_error());
	free(ra);
	free(ri);
	free(dir);
	free(big);
}

Test(fill_mean, refuses_a_homogeneous_dataset)
{
	char *dir = tu_path(tu_dir, "/csbm");
	cr_assert_eq(tu_sh(NULL, NULL, "%s gen csbm %s --nodes 50 --quiet", tu_burrow(), dir), 0);
	cr_assert_eq(bw_typed_fill_mean(dir, 0, NULL, NULL), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "typed"), "%s", burrow_last_error());
	free(dir);
}
