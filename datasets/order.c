/* order.c: node orders for burrow reorder: hubs first (degree), breadth-first from hubs, reverse Cuthill-McKee, random. */
#include "../graph/dataset_internal.h"
#include "../core/rng.h"

#include <stdlib.h>
#include <string.h>

static const char *const ORDER_NAMES[] = {"degree", "bfs", "rcm", "random"};
#define NORDERS ((int)(sizeof ORDER_NAMES / sizeof ORDER_NAMES[0]))

const char *burrow_order_name(int order) { return order >= 0 && order < NORDERS ? ORDER_NAMES[order] : "?"; }

int burrow_order_parse(const char *s, int *out)
{
	for (int i = 0; s && i < NORDERS; i++)
		if (!strcmp(s, ORDER_NAMES[i])) {
			*out = i;
			return 0;
		}
	return bw_err(BURROW_E_INVAL, "unknown order '%s' (degree, bfs, rcm or random)", s ? s : "");
}

static inline int64_t degree(const burrow_csr *g, int64_t v) { return g->indptr[v + 1] - g->indptr[v]; }

/* perm = the nodes by degree, descending, ties to the lower id: a counting sort (stable). */
static int by_degree(const burrow_csr *g, int64_t *perm)
{
	const int64_t n = g->num_nodes;
	int64_t maxd = 0;
	for (int64_t v = 0; v < n; v++)
		maxd = BW_MAX(maxd, degree(g, v));
	int64_t *start = bw_calloc((size_t)maxd + 2, sizeof *start);
	if (!start)
		return BURROW_E_NOMEM;
	for (int64_t v = 0; v < n; v++)
		start[maxd - degree(g, v) + 1]++;
	for (int64_t d = 1; d <= maxd + 1; d++)
		start[d] += start[d - 1];
	for (int64_t v = 0; v < n; v++)
		perm[start[maxd - degree(g, v)]++] = v;
	bw_free(start);
	return 0;
}

typedef struct deg_id {
	int64_t deg, id;
} deg_id;

static int cmp_desc(const void *a, const void *b)
{
	const deg_id *x = a, *y = b;
	if (x->deg != y->deg)
		return x->deg < y->deg ? 1 : -1;
	return (x->id > y->id) - (x->id < y->id);
}

static int cmp_asc(const void *a, const void *b)
{
	const deg_id *x = a, *y = b;
	if (x->deg != y->deg)
		return x->deg > y->deg ? 1 : -1;
	return (x->id > y->id) - (x->id < y->id);
}

/* Breadth-first: perm doubles as the queue. Each component starts at the next node of
 * `starts` not yet placed; a row's unplaced neighbors join the queue in degree order
 * (descending when desc, else ascending; ties to the lower id). */
static int breadth_first(const burrow_csr *g, const int64_t *starts, bool desc, int64_t *perm)
{
	const int64_t n = g->num_nodes;
	int64_t maxd = 0;
	for (int64_t v = 0; v < n; v++)
		maxd = BW_MAX(maxd, degree(g, v));
	uint64_t *placed = bw_calloc((size_t)(n + 63) / 64 + 1, sizeof *placed);
	deg_id *row = bw_malloc((size_t)(maxd ? maxd : 1) * sizeof *row);
	int st = placed && row ? 0 : BURROW_E_NOMEM;
	int64_t head = 0, tail = 0, next = 0;
	while (!st && tail < n) {
		if (head == tail) { /* a new component */
			while (placed[starts[next] >> 6] >> (starts[next] & 63) & 1)
				next++;
			placed[starts[next] >> 6] |= UINT64_C(1) << (starts[next] & 63);
			perm[tail++] = starts[next];
		}
		const int64_t v = perm[head++];
		int64_t k = 0;
		for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) {
			const int64_t u = burrow_csr_index(g, j);
			if (placed[u >> 6] >> (u & 63) & 1)
				continue;
			placed[u >> 6] |= UINT64_C(1) << (u & 63);
			row[k++] = (deg_id){degree(g, u), u};
		}
		qsort(row, (size_t)k, sizeof *row, desc ? cmp_desc : cmp_asc);
		for (int64_t q = 0; q < k; q++)
			perm[tail++] = row[q].id;
	}
	bw_free(placed);
	bw_free(row);
	return st;
}

/* Fisher-Yates from the seed. */
static void random_order(int64_t n, uint64_t seed, int64_t *perm)
{
	bw_rng r;
	bw_rng_seed(&r, bw_key(seed, UINT64_C(0x52454f52))); /* "REOR" */
	for (int64_t i = 0; i < n; i++)
		perm[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		const int64_t j = (int64_t)bw_rng_below(&r, (uint64_t)i + 1), t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
}

static void reverse(int64_t *a, int64_t n)
{
	for (int64_t i = 0, j = n - 1; i < j; i++, j--) {
		const int64_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

int burrow_order_compute(const burrow_csr *g, int order, uint64_t seed, int64_t *perm)
{
	if (!g || !perm || order < 0 || order >= NORDERS)
		return bw_err(BURROW_E_INVAL, "order: %s", !g || !perm ? "no graph or no output" : "unknown order");
	const int64_t n = g->num_nodes;
	if (order == BURROW_ORDER_RANDOM) {
		random_order(n, seed, perm);
		return 0;
	}
	if (order == BURROW_ORDER_DEGREE || n == 0)
		return by_degree(g, perm);
	int64_t *starts = bw_malloc((size_t)n * sizeof *starts);
	int st = starts ? by_degree(g, starts) : BURROW_E_NOMEM;
	if (!st && order == BURROW_ORDER_RCM)
		reverse(starts, n); /* lowest degree first */
	if (!st)
		st = breadth_first(g, starts, order == BURROW_ORDER_BFS, perm);
	if (!st && order == BURROW_ORDER_RCM)
		reverse(perm, n);
	bw_free(starts);
	return st;
}
