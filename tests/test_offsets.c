/* test_offsets.c: CSR offsets past 2^31 entries (the full papers100M graph has 3.2 billion) on
 * a sparse indices.npy, so the disk holds only its last page: open, verify, sampling. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../graph/npy.h"
#include "../sampler/sampler_internal.h"
#include "util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* two scans of 8 GiB of holes (read from the page cache as zeros) */
TU_SCRATCH_SUITE(offsets, 600);

#define BIG ((int64_t)1 << 31)
#define ROW 1024                /* entries of each of the first R rows */
#define R (BIG / ROW)           /* rows before entry 2^31 */
#define NN (R + 4)
#define E (BIG + 8)

/* The ids written past entry 2^31: row R's neighbors [BIG, BIG + 5), then row R + 1's. */
static const int32_t ref_tail[8] = {1, 2, 3, 4, 5, 0, 1, 3};

/* A dataset of R + 4 nodes: rows [0, R) of ROW entries each, all 0 (the file's hole), row R
 * {1, 2, 3, 4, 5} from entry 2^31, row R + 1 {0, 1, 3}, rows R + 2 and R + 3 empty. Returns
 * the directory; *ids_off gets the byte offset of entry 0 in indices.npy. */
static char *write_big(int64_t *ids_off)
{
	char *dir = tu_path(tu_dir, "big");
	cr_assert_eq(mkdir(dir, 0755), 0);
	char *meta = tu_path(dir, "meta.json");
	FILE *f = fopen(meta, "w");
	cr_assert(f);
	fprintf(f, "{\"format\": \"burrow-dataset\", \"version\": 1, \"name\": \"big\", \"num_nodes\": %lld, "
		   "\"num_edges\": %lld, \"feat_dim\": 0, \"num_classes\": 0, \"symmetric\": false}\n",
		(long long)NN, (long long)E);
	cr_assert_eq(fclose(f), 0);
	int64_t *indptr = malloc((NN + 1) * sizeof *indptr);
	cr_assert(indptr);
	for (int64_t v = 0; v <= R; v++)
		indptr[v] = v * ROW;
	indptr[R + 1] = BIG + 5;
	indptr[R + 2] = indptr[R + 3] = indptr[R + 4] = E;
	char *ip = tu_path(dir, "indptr.npy");
	int64_t n1 = NN + 1;
	cr_assert_eq(bw_npy_save(ip, BURROW_DTYPE_I64, 1, &n1, indptr, 64), 0, "%s", burrow_last_error());
	free(indptr);
	bw_npy h = {.dtype = BURROW_DTYPE_I32, .ndim = 1, .shape = {E}};
	char hdr[256];
	size_t len;
	cr_assert_eq(bw_npy_format(&h, 64, hdr, sizeof hdr, &len), 0, "%s", burrow_last_error());
	char *ix = tu_path(dir, "indices.npy");
	int fd = open(ix, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0);
	cr_assert_eq(pwrite(fd, hdr, len, 0), (ssize_t)len);
	const off_t at = (off_t)len + (off_t)BIG * 4;
	cr_assert_eq(pwrite(fd, ref_tail, sizeof ref_tail, at), (ssize_t)sizeof ref_tail);
	cr_assert_eq(close(fd), 0);
	*ids_off = (int64_t)len;
	free(meta);
	free(ip);
	free(ix);
	return dir;
}

/* Overwrite entry j of dir's indices.npy (ids start at byte off) with v. */
static void plant(const char *dir, int64_t off, int64_t j, int32_t v)
{
	char *ix = tu_path(dir, "indices.npy");
	int fd = open(ix, O_WRONLY);
	cr_assert(fd >= 0);
	cr_assert_eq(pwrite(fd, &v, sizeof v, (off_t)(off + j * 4)), (ssize_t)sizeof v);
	cr_assert_eq(close(fd), 0);
	free(ix);
}

/* The global ids of seed 0's sampled sources in b's only block, sorted into out. */
static int64_t sources(const burrow_batch *b, int64_t *out, int64_t cap)
{
	const burrow_block *k = &b->blocks[0];
	const int64_t n = k->indptr[1] - k->indptr[0];
	cr_assert_leq(n, cap);
	for (int64_t j = 0; j < n; j++)
		out[j] = b->input_ids[k->indices[k->indptr[0] + j]];
	for (int64_t a = 1; a < n; a++) /* insertion sort: n <= 5 */
		for (int64_t c = a; c > 0 && out[c - 1] > out[c]; c--) {
			int64_t t = out[c];
			out[c] = out[c - 1];
			out[c - 1] = t;
		}
	return n;
}

Test(offsets, open_verify_and_sample_past_2_31_entries)
{
	setenv("BURROW_VALIDATION_CACHE", "0", 1); /* open scans too */
	int64_t off;
	char *dir = write_big(&off);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	const burrow_csr *g = burrow_dataset_graph(ds);
	cr_assert_eq(g->num_edges, E);
	cr_assert_eq(g->index_width, 4);
	cr_assert_eq(g->indptr[R], BIG);
	cr_assert_eq(g->indptr[R + 1], BIG + 5);
	for (int j = 0; j < 8; j++)
		cr_assert_eq(burrow_csr_index(g, BIG + j), ref_tail[j], "entry %lld", (long long)(BIG + j));
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());

	/* the sampler's neighbor ranges: rows R and R + 1 start at and past entry 2^31 */
	burrow_sampler_opts so;
	burrow_sampler_defaults(&so);
	so.num_layers = 1;
	so.fanouts[0] = -1;
	so.batch_size = 1;
	burrow_sampler *s;
	burrow_batch *b;
	int64_t got[5];
	const int64_t last = R + 1, first = R;
	cr_assert_eq(bw_sampler_open_checked(&s, g, NULL, 0, &so, NULL, NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_sampler_sample(s, &last, 1, 7, &b), 0, "%s", burrow_last_error());
	cr_assert_eq(sources(b, got, 5), 3);
	for (int j = 0; j < 3; j++)
		cr_assert_eq(got[j], ref_tail[5 + j], "row R + 1, neighbor %d: %lld", j, (long long)got[j]);
	burrow_sampler_release(s, b);
	burrow_sampler_close(s);
	so.fanouts[0] = 3; /* three distinct of row R's five */
	cr_assert_eq(bw_sampler_open_checked(&s, g, NULL, 0, &so, NULL, NULL), 0, "%s", burrow_last_error());
	for (uint64_t key = 0; key < 8; key++) {
		cr_assert_eq(burrow_sampler_sample(s, &first, 1, key, &b), 0, "%s", burrow_last_error());
		cr_assert_eq(sources(b, got, 5), 3, "key %llu", (unsigned long long)key);
		for (int j = 0; j < 3; j++)
			cr_assert(got[j] >= 1 && got[j] <= 5 && (j == 0 || got[j] > got[j - 1]),
				  "row R's neighbors are 1 to 5, each once: got %lld", (long long)got[j]);
		burrow_sampler_release(s, b);
	}
	burrow_sampler_close(s);

	/* a bad id past 2^31 is found and named by its row and 64-bit entry */
	plant(dir, off, BIG + 6, (int32_t)NN);
	cr_assert_eq(burrow_dataset_verify(ds), BURROW_E_FORMAT);
	char want[128];
	snprintf(want, sizeof want, "row %lld: neighbor %lld (entry %lld) out of range [0, %lld)", (long long)(R + 1),
		 (long long)NN, (long long)(BIG + 6), (long long)NN);
	cr_assert(strstr(burrow_last_error(), want), "%s", burrow_last_error());
	burrow_dataset_close(ds);
	tu_rmrf(dir);
	free(dir);
}
