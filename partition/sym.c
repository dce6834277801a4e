/* sym.c: the symmetric graph without self-loops or repeats of a directed CSR, built on disk in
 * bounded memory: rows are gathered one node range at a time, each range taking one streamed
 * pass over the input, then sorted, de-duplicated and appended to a raw id file. */
#define _GNU_SOURCE
#include "partition_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int bw_symmetrize(const burrow_csr *in, const char *dir, size_t buf_bytes, int threads, bw_pgraph *out,
		  int64_t **indptr_out, void **map_out, size_t *map_len)
{
	const int64_t n = in->num_nodes;
	int64_t *ptr = NULL, *cur = NULL;
	int32_t *buf = NULL;
	char *path = NULL;
	int fd = -1, st;

	*indptr_out = NULL;
	*map_out = NULL;
	*map_len = 0;
	if (n > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "partition: %lld nodes: the partitioner needs fewer than 2^31",
			      (long long)n);
	bw_pgraph gin = {.n = n, .m = in->num_edges, .indptr = in->indptr, .indices = in->indices,
			 .width = in->index_width, .mapped = true, .ptr_mapped = true};
	ptr = bw_calloc((size_t)n + 1, sizeof *ptr);
	cur = bw_malloc((size_t)(n ? n : 1) * sizeof *cur);
	path = bw_path_join(dir, "sym.indices");
	if (!ptr || !cur || !path) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	/* upper bound of each symmetric row: out-degree plus in-degree, self-loops left out */
	bw_stream s;
	bw_stream_begin(&s, &gin);
	for (int64_t a = 0; a < n; a += BW_CHUNK) {
		const int64_t b = BW_MIN(n, a + BW_CHUNK);
#pragma omp parallel for schedule(dynamic, 256) num_threads(bw_threads(threads))
		for (int64_t v = a; v < b; v++)
			for (int64_t j = in->indptr[v]; j < in->indptr[v + 1]; j++) {
				int64_t u = bw_pg_nbr(&gin, j);
				if (u == v)
					continue;
				__atomic_fetch_add(&ptr[v + 1], 1, __ATOMIC_RELAXED);
				__atomic_fetch_add(&ptr[u + 1], 1, __ATOMIC_RELAXED);
			}
		bw_stream_release(&s, b);
	}
	int64_t maxrow = 0;
	for (int64_t v = 0; v < n; v++) {
		maxrow = BW_MAX(maxrow, ptr[v + 1]);
		ptr[v + 1] += ptr[v];
	}
	int64_t cap = (int64_t)(buf_bytes / sizeof *buf);
	cap = BW_MAX(cap, BW_MAX(maxrow, (int64_t)1 << 16));
	cap = BW_MIN(cap, BW_MAX(ptr[n], 1));
	buf = bw_malloc((size_t)cap * sizeof *buf);
	if (!buf) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		st = bw_err_errno(errno, path, "create");
		goto fail;
	}
	/* one range of rows per pass; ptr[a .. b) becomes the final indptr once the range is done */
	int64_t written = 0;
	for (int64_t a = 0; a < n;) {
		const int64_t base = ptr[a];
		int64_t b = a;
		while (b < n && ptr[b + 1] - base <= cap)
			b++;
		for (int64_t v = a; v < b; v++)
			cur[v - a] = ptr[v] - base;
		bw_stream_begin(&s, &gin);
		for (int64_t c = 0; c < n; c += BW_CHUNK) {
			const int64_t d = BW_MIN(n, c + BW_CHUNK);
#pragma omp parallel for schedule(dynamic, 256) num_threads(bw_threads(threads))
			for (int64_t u = c; u < d; u++)
				for (int64_t j = in->indptr[u]; j < in->indptr[u + 1]; j++) {
					int64_t v = bw_pg_nbr(&gin, j);
					if (u == v)
						continue;
					if (u >= a && u < b)
						buf[__atomic_fetch_add(&cur[u - a], 1, __ATOMIC_RELAXED)] = (int32_t)v;
					if (v >= a && v < b)
						buf[__atomic_fetch_add(&cur[v - a], 1, __ATOMIC_RELAXED)] = (int32_t)u;
				}
			bw_stream_release(&s, d);
		}
#pragma omp parallel for schedule(dynamic, 64) num_threads(bw_threads(threads))
		for (int64_t v = a; v < b; v++) { /* sorted, repeats dropped: the row's new length */
			int32_t *row = buf + (ptr[v] - base);
			const int64_t len = cur[v - a] - (ptr[v] - base);
			bw_sort_i32(row, len);
			cur[v - a] = bw_unique_i32(row, len);
		}
		/* compact the range's rows and append them */
		int64_t k = 0;
		for (int64_t v = a; v < b; v++) {
			const int64_t lo = ptr[v] - base, len = cur[v - a];
			memmove(buf + k, buf + lo, (size_t)len * sizeof *buf);
			ptr[v] = written + k;
			k += len;
		}
		if ((st = bw_write_all(fd, buf, (size_t)k * sizeof *buf, path)))
			goto fail;
		written += k;
		a = b;
	}
	ptr[n] = written;
	bw_free(buf);
	buf = NULL;
	bw_free(cur);
	cur = NULL;
	void *map = NULL;
	if (written) {
		map = mmap(NULL, (size_t)written * sizeof(int32_t), PROT_READ, MAP_SHARED, fd, 0);
		if (map == MAP_FAILED) {
			st = bw_err_errno(errno, path, "mmap");
			goto fail;
		}
	}
	close(fd);
	bw_free(path);
	*out = (bw_pgraph){.n = n, .m = written, .indptr = ptr, .indices = map, .width = 4, .mapped = true};
	*indptr_out = ptr;
	*map_out = map;
	*map_len = (size_t)written * sizeof(int32_t);
	return 0;
fail:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	bw_free(path);
	bw_free(buf);
	bw_free(cur);
	bw_free(ptr);
	return st;
}
