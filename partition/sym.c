/* sym.c: the symmetric graph without self-loops or repeats of a directed CSR (or of the union
 * of a typed graph's relations, each placed by its types' offsets), built on disk in bounded
 * memory: rows are gathered one node range at a time, each range taking one streamed pass over
 * the input, then sorted, de-duplicated and appended to a raw id file. */
#define _GNU_SOURCE
#include "partition_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* One bw_symmetrize: the input, the row bounds that become the output's indptr, the
 * range buffer and the id file the phases fill. */
typedef struct sym_run {
	const bw_sym_piece *pc;  /* [npc] the input's pieces */
	int npc;
	bw_pgraph gin[BW_MAX_PIECES]; /* each piece, as the streaming helpers read it */
	int64_t n;
	int threads;
	int64_t *ptr;      /* [n + 1] row bounds, then the output's indptr */
	int64_t *cur;      /* [n] a range's fill positions, then its rows' lengths */
	int32_t *buf;      /* [cap] one range of rows */
	int64_t cap;
	char *path;        /* dir/sym.indices */
	int fd;            /* open on path, or -1 */
	int64_t written;   /* ids appended to path */
} sym_run;

/* ptr: the upper bound of each symmetric row (out-degree plus in-degree, self-loops left
 * out), summed into row bounds; the range buffer: buf_bytes, at least the longest row and
 * 2^16 ids, at most every id. */
static int sym_bounds(sym_run *r, size_t buf_bytes)
{
	const int64_t n = r->n;
	int64_t *ptr = r->ptr;
	for (int p = 0; p < r->npc; p++) {
		const burrow_csr *in = r->pc[p].csr;
		const bw_pgraph *gin = &r->gin[p];
		const int64_t ro = r->pc[p].row_off, co = r->pc[p].col_off;
		bw_stream s;
		for (bw_stream_begin(&s, gin); bw_stream_next(&s, in->num_nodes, BW_CHUNK);) {
#pragma omp parallel for schedule(dynamic, 256) num_threads(bw_threads(r->threads))
			for (int64_t v = s.a; v < s.b; v++)
				for (int64_t j = in->indptr[v]; j < in->indptr[v + 1]; j++) {
					int64_t u = bw_pg_nbr(gin, j) + co;
					if (u == v + ro)
						continue;
					__atomic_fetch_add(&ptr[v + ro + 1], 1, __ATOMIC_RELAXED);
					__atomic_fetch_add(&ptr[u + 1], 1, __ATOMIC_RELAXED);
				}
		}
	}
	int64_t maxrow = 0;
	for (int64_t v = 0; v < n; v++) {
		maxrow = BW_MAX(maxrow, ptr[v + 1]);
		ptr[v + 1] += ptr[v];
	}
	int64_t cap = (int64_t)(buf_bytes / sizeof *r->buf);
	cap = BW_MAX(cap, BW_MAX(maxrow, (int64_t)1 << 16));
	r->cap = BW_MIN(cap, BW_MAX(ptr[n], 1));
	r->buf = bw_malloc((size_t)r->cap * sizeof *r->buf);
	return r->buf ? 0 : BURROW_E_NOMEM;
}

/* Rows [a, b), whose bounds from ptr[a] fit the buffer: one streamed pass over the input
 * gathers them, then each is sorted and de-duplicated, and the rows, compacted, are appended
 * to the file; ptr[a .. b) becomes their final indptr. */
static int sym_range(sym_run *r, int64_t a, int64_t b)
{
	const int64_t base = r->ptr[a];
	int64_t *ptr = r->ptr, *cur = r->cur;
	int32_t *buf = r->buf;
	for (int64_t v = a; v < b; v++)
		cur[v - a] = ptr[v] - base;
	for (int p = 0; p < r->npc; p++) {
		const burrow_csr *in = r->pc[p].csr;
		const bw_pgraph *gin = &r->gin[p];
		const int64_t ro = r->pc[p].row_off, co = r->pc[p].col_off;
		bw_stream s;
		for (bw_stream_begin(&s, gin); bw_stream_next(&s, in->num_nodes, BW_CHUNK);) {
#pragma omp parallel for schedule(dynamic, 256) num_threads(bw_threads(r->threads))
			for (int64_t x = s.a; x < s.b; x++)
				for (int64_t j = in->indptr[x]; j < in->indptr[x + 1]; j++) {
					const int64_t u = x + ro, v = bw_pg_nbr(gin, j) + co;
					if (u == v)
						continue;
					if (u >= a && u < b)
						buf[__atomic_fetch_add(&cur[u - a], 1, __ATOMIC_RELAXED)] = (int32_t)v;
					if (v >= a && v < b)
						buf[__atomic_fetch_add(&cur[v - a], 1, __ATOMIC_RELAXED)] = (int32_t)u;
				}
		}
	}
#pragma omp parallel for schedule(dynamic, 64) num_threads(bw_threads(r->threads))
	for (int64_t v = a; v < b; v++) { /* sorted, repeats dropped: the row's new length */
		int32_t *row = buf + (ptr[v] - base);
		const int64_t len = cur[v - a] - (ptr[v] - base);
		bw_sort_i32(row, len);
		cur[v - a] = bw_unique_i32(row, len);
	}
	int64_t k = 0;
	for (int64_t v = a; v < b; v++) {
		const int64_t lo = ptr[v] - base, len = cur[v - a];
		memmove(buf + k, buf + lo, (size_t)len * sizeof *buf);
		ptr[v] = r->written + k;
		k += len;
	}
	int st = bw_write_all(r->fd, buf, (size_t)k * sizeof *buf, r->path);
	if (!st)
		r->written += k;
	return st;
}

/* Create the id file and fill it one range of rows per pass. */
static int sym_write(sym_run *r)
{
	r->fd = open(r->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (r->fd < 0)
		return bw_err_errno(errno, r->path, "create");
	for (int64_t a = 0; a < r->n;) {
		int64_t b = a;
		while (b < r->n && r->ptr[b + 1] - r->ptr[a] <= r->cap)
			b++;
		int st = sym_range(r, a, b);
		if (st)
			return st;
		a = b;
	}
	r->ptr[r->n] = r->written;
	return 0;
}

/* What the phases hold: all of it on failure (the file removed), all but ptr and the file's
 * mapping on success (the file stays, mapped). */
static void sym_run_free(sym_run *r, bool ok)
{
	if (r->fd >= 0) {
		close(r->fd);
		if (!ok)
			unlink(r->path);
	}
	bw_free(r->path);
	bw_free(r->buf);
	bw_free(r->cur);
	if (!ok)
		bw_free(r->ptr);
}

int bw_symmetrize(const bw_sym_piece *pc, int npc, int64_t n, const char *dir, size_t buf_bytes, int threads,
		  bw_pgraph *out, int64_t **indptr_out, void **map_out, size_t *map_len)
{
	*indptr_out = NULL;
	*map_out = NULL;
	*map_len = 0;
	if (n > INT32_MAX)
		return bw_err(BURROW_E_UNSUPPORTED, "partition: %lld nodes: the partitioner needs fewer than 2^31",
			      (long long)n);
	if (npc < 1 || npc > BW_MAX_PIECES)
		return bw_err(BURROW_E_INVAL, "partition: %d pieces to symmetrize (1 to %d)", npc, BW_MAX_PIECES);
	sym_run r = {.pc = pc, .npc = npc, .n = n, .threads = threads, .fd = -1};
	for (int p = 0; p < npc; p++) {
		const burrow_csr *in = pc[p].csr;
		r.gin[p] = (bw_pgraph){.n = in->num_nodes, .m = in->num_edges, .indptr = in->indptr,
				       .indices = in->indices, .width = in->index_width, .mapped = true,
				       .ptr_mapped = true};
	}
	r.ptr = bw_calloc((size_t)n + 1, sizeof *r.ptr);
	r.cur = bw_malloc((size_t)(n ? n : 1) * sizeof *r.cur);
	r.path = bw_path_join(dir, "sym.indices");
	int st = !r.ptr || !r.cur || !r.path ? BURROW_E_NOMEM : 0;
	if (!st && !(st = sym_bounds(&r, buf_bytes)))
		st = sym_write(&r);
	void *map = NULL;
	if (!st && r.written) {
		map = mmap(NULL, (size_t)r.written * sizeof(int32_t), PROT_READ, MAP_SHARED, r.fd, 0);
		if (map == MAP_FAILED)
			st = bw_err_errno(errno, r.path, "mmap");
	}
	sym_run_free(&r, !st);
	if (st)
		return st;
	*out = (bw_pgraph){.n = n, .m = r.written, .indptr = r.ptr, .indices = map, .width = 4, .mapped = true};
	*indptr_out = r.ptr;
	*map_out = map;
	*map_len = (size_t)r.written * sizeof(int32_t);
	return 0;
}
