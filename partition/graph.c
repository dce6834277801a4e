/* graph.c: streaming over the partitioner's graph view: releasing pages behind a pass, part
 * weights and the edge cut. */
#define _GNU_SOURCE
#include "partition_internal.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uintptr_t page_size(void)
{
	static uintptr_t ps;
	if (!ps)
		ps = (uintptr_t)sysconf(_SC_PAGESIZE);
	return ps;
}

static uintptr_t page_down(uintptr_t a) { return a & ~(page_size() - 1); }

/* Drop our mapping of the whole pages in [from, to): MADV_DONTNEED on a shared read-only
 * file mapping only unmaps them from this process; the data stays in the page cache. */
static void drop(uintptr_t from, uintptr_t to)
{
	if (to > from)
		madvise((void *)from, to - from, MADV_DONTNEED);
}

void bw_stream_begin(bw_stream *s, const bw_pgraph *g)
{
	s->g = g;
	s->a = s->b = 0;
	s->idx_done = page_down((uintptr_t)g->indices);
	s->ptr_done = page_down((uintptr_t)g->indptr);
	if (g->mapped && g->m > 0)
		madvise((void *)s->idx_done, (size_t)g->m * (size_t)g->width + page_size(), MADV_SEQUENTIAL);
}

void bw_stream_release(bw_stream *s, int64_t v_end)
{
	const bw_pgraph *g = s->g;
	if (!g->mapped)
		return;
	uintptr_t idx_end = page_down((uintptr_t)g->indices + (uintptr_t)g->indptr[v_end] * (uintptr_t)g->width);
	uintptr_t ptr_end = page_down((uintptr_t)(g->indptr + v_end));
	drop(s->idx_done, idx_end);
	if (g->ptr_mapped)
		drop(s->ptr_done, ptr_end);
	if (idx_end > s->idx_done)
		s->idx_done = idx_end;
	if (ptr_end > s->ptr_done)
		s->ptr_done = ptr_end;
}

bool bw_stream_next(bw_stream *s, int64_t n, int64_t chunk)
{
	if (s->b > 0)
		bw_stream_release(s, s->b);
	if (s->b >= n)
		return false;
	s->a = s->b;
	s->b = BW_MIN(n, s->a + chunk);
	return true;
}

void bw_release_range(const void *p, size_t bytes)
{
	if (!p || !bytes)
		return;
	uintptr_t a = page_down((uintptr_t)p), b = page_down((uintptr_t)p + bytes);
	/* only whole pages inside the array: its first page may hold other data (a header) */
	if (a < (uintptr_t)p)
		a += page_size();
	drop(a, b);
}

void bw_part_weights(const bw_pgraph *g, const int32_t *part, int k, int64_t *pw, int threads)
{
	const int ncon = g->ncon;
	memset(pw, 0, (size_t)k * (size_t)ncon * sizeof *pw);
	(void)threads;
	for (int64_t v = 0; v < g->n; v++)
		for (int c = 0; c < ncon; c++)
			pw[(int64_t)part[v] * ncon + c] += bw_pg_vw(g, v, c);
}

void bw_edge_cut(const bw_pgraph *g, const int32_t *part, int threads, int64_t *cut_out, int64_t *total_out)
{
	int64_t cut = 0, total = 0;
	bw_stream s;
	bw_stream_begin(&s, g);
	for (int64_t a = 0; a < g->n; a += BW_CHUNK) {
		const int64_t b = BW_MIN(g->n, a + BW_CHUNK);
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : cut, total) num_threads(bw_threads(threads))
		for (int64_t v = a; v < b; v++) {
			int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1;
			while (bw_pg_next(g, v, &j, hi, &u, &prev)) {
				int64_t w = bw_pg_ewgt(g, j - 1);
				total += w;
				if (part[u] != part[v])
					cut += w;
			}
		}
		bw_stream_release(&s, b);
	}
	*cut_out = cut / 2;
	*total_out = total / 2;
}
