/* metis.c: the one gateway to METIS: its return codes mapped once, the graph converted to its
 * 32-bit arrays, weight sums scaled to fit them. */
#include "partition_internal.h"

#include <metis.h>
#include <string.h>

_Static_assert(sizeof(idx_t) == sizeof(int32_t), "burrow expects METIS built with 32-bit idx_t");
_Static_assert(sizeof(real_t) == sizeof(float), "burrow expects METIS built with 32-bit real_t");

int bw_metis_status(int rc, const char *what)
{
	switch (rc) {
	case METIS_OK: return 0; /* METIS's success code is 1, not 0 */
	case METIS_ERROR_INPUT:
		return bw_err(BURROW_E_METIS, "%s: METIS rejected its input (METIS_ERROR_INPUT, %d)", what, rc);
	case METIS_ERROR_MEMORY:
		return bw_err(BURROW_E_METIS, "%s: METIS ran out of memory (METIS_ERROR_MEMORY, %d)", what, rc);
	case METIS_ERROR:
		return bw_err(BURROW_E_METIS, "%s: METIS failed (METIS_ERROR, %d)", what, rc);
	default: return bw_err(BURROW_E_METIS, "%s: METIS returned the unknown code %d", what, rc);
	}
}

int bw_metis_call(int32_t n, int32_t ncon, int32_t *xadj, int32_t *adjncy, int32_t *vwgt, int32_t *adjwgt,
		  int32_t k, const float *ubvec, uint64_t seed, int32_t *part, int64_t *objval)
{
	idx_t options[METIS_NOPTIONS];
	idx_t nv = n, nc = ncon, np = k, obj = 0;
	real_t ub[BW_MAX_CON];
	/* what METIS would refuse is refused here: METIS prints its reason to stdout, and the
	 * library never prints */
	if (ncon < 1 || ncon > BW_MAX_CON || k < 1)
		return bw_err(BURROW_E_INVAL, "partition: %d constraints and %d parts for METIS (want 1 to %d, >= 1)",
			      (int)ncon, (int)k, BW_MAX_CON);
	for (int c = 0; c < ncon; c++) {
		if (!(ubvec[c] > 1.0f))
			return bw_err(BURROW_E_INVAL, "partition: balance bound %g of constraint %d: ufactor must exceed 1",
				      (double)ubvec[c], c);
		ub[c] = ubvec[c];
	}
	METIS_SetDefaultOptions(options);
	options[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
	options[METIS_OPTION_NUMBERING] = 0;
	/* seed 0 is METIS's own default seed (gpmetis's), so equal inputs give its partition */
	options[METIS_OPTION_SEED] = seed ? (idx_t)(seed & 0x7fffffff) : -1;
	int rc = METIS_PartGraphKway(&nv, &nc, xadj, adjncy, vwgt, NULL, adjwgt, &np, NULL, ub, options, &obj, part);
	*objval = obj;
	return bw_metis_status(rc, "partition");
}

size_t bw_metis_bytes(int64_t n, int64_t m, int ncon)
{
	return (size_t)(64 * m + (160 + 24 * (int64_t)ncon) * n + (16 << 20));
}

/* A divisor that brings a sum of weights below 2^29 (METIS sums them in 32 bits). */
static int64_t scale_for(int64_t total) { return total > (1 << 29) ? (total + (1 << 29) - 1) / (1 << 29) : 1; }

void bw_place_fillers(const bw_pgraph *g, int k, double ufactor, const int64_t *total, int32_t *part)
{
	const int ncon = g->ncon;
	int64_t *load = bw_calloc((size_t)k * (size_t)ncon, sizeof *load);
	double cap[BW_MAX_CON] = {0};
	if (!load) { /* not worth failing for: round robin keeps the node counts even */
		for (int64_t v = 0, r = 0; v < g->n; v++)
			if (part[v] < 0)
				part[v] = (int32_t)(r++ % k);
		return;
	}
	for (int64_t v = 0; v < g->n; v++)
		for (int c = 0; c < ncon; c++) {
			int64_t w = bw_pg_vw(g, v, c);
			cap[c] += w;
			if (part[v] >= 0)
				load[(int64_t)part[v] * ncon + c] += w;
		}
	for (int c = 0; c < ncon; c++)
		cap[c] = BW_MAX(ufactor * (double)(total ? total[c] : (int64_t)cap[c]) / k, 1.0);
	for (int64_t v = 0; v < g->n; v++) {
		if (part[v] >= 0)
			continue;
		int32_t best = 0;
		double best_f = 0;
		for (int32_t t = 0; t < k; t++) {
			double f = 0;
			for (int c = 0; c < ncon; c++)
				f = BW_MAX(f, (double)(load[(int64_t)t * ncon + c] + bw_pg_vw(g, v, c)) / cap[c]);
			if (t == 0 || f < best_f) {
				best = t;
				best_f = f;
			}
		}
		part[v] = best;
		for (int c = 0; c < ncon; c++)
			load[(int64_t)best * ncon + c] += bw_pg_vw(g, v, c);
	}
	bw_free(load);
}

int bw_metis_kway(const bw_pgraph *g, int k, double ufactor, const int64_t *total_in, uint64_t seed, int32_t *part,
		  int64_t *objval)
{
	const int64_t n = g->n;
	const int ncon = g->ncon;
	int32_t *xadj = NULL, *adjncy = NULL, *vwgt = NULL, *adjwgt = NULL, *act = NULL, *apart = NULL;
	int st = BURROW_E_NOMEM;

	*objval = 0;
	if (k == 1 || n == 0) {
		memset(part, 0, (size_t)n * sizeof *part);
		return 0;
	}
	/* nodes without neighbors cut nothing wherever they go: METIS sees only the others (with
	 * the balance bound widened by the weight left out), and the rest fill the parts up
	 * evenly afterwards. On skewed graphs with many isolated nodes this frees METIS to
	 * cut far less. act[v]: v's id among the nodes METIS sees, or -1. */
	act = bw_malloc((size_t)n * sizeof *act);
	if (!act)
		return BURROW_E_NOMEM;
	int64_t m = 0, na = 0;
	bw_stream s;
	bw_stream_begin(&s, g);
	for (int64_t v = 0; v < n; v++) {
		int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1, d = 0;
		while (bw_pg_next(g, v, &j, hi, &u, &prev))
			d++;
		m += d;
		act[v] = d ? (int32_t)na++ : -1;
		if ((v + 1) % BW_CHUNK == 0)
			bw_stream_release(&s, v + 1);
	}
	if (m > INT32_MAX - 1) {
		st = bw_err(BURROW_E_UNSUPPORTED, "partition: %lld entries exceed METIS's 32-bit indices", (long long)m);
		goto out;
	}
	if (na < 2 * (int64_t)k) { /* too few to cut: all are fillers */
		for (int64_t v = 0; v < n; v++)
			part[v] = -1;
		bw_place_fillers(g, k, ufactor, total_in, part);
		st = 0;
		goto out;
	}
	xadj = bw_malloc((size_t)(na + 1) * sizeof *xadj);
	adjncy = bw_malloc((size_t)(m ? m : 1) * sizeof *adjncy);
	vwgt = bw_malloc((size_t)(na * ncon) * sizeof *vwgt);
	apart = bw_malloc((size_t)na * sizeof *apart);
	if (g->adjwgt)
		adjwgt = bw_malloc((size_t)(m ? m : 1) * sizeof *adjwgt);
	if (!xadj || !adjncy || !vwgt || !apart || (g->adjwgt && !adjwgt))
		goto out;
	int64_t wtotal = 0;
	for (int64_t j = 0; g->adjwgt && j < g->m; j++)
		wtotal += g->adjwgt[j];
	const int64_t escale = scale_for(wtotal);
	int64_t q = 0;
	xadj[0] = 0;
	bw_stream_begin(&s, g);
	for (int64_t v = 0; v < n; v++) {
		int64_t j = g->indptr[v], hi = g->indptr[v + 1], u, prev = -1;
		while (bw_pg_next(g, v, &j, hi, &u, &prev)) {
			if (adjwgt)
				adjwgt[q] = (int32_t)((bw_pg_ewgt(g, j - 1) + escale - 1) / escale);
			adjncy[q++] = act[u];
		}
		if (act[v] >= 0)
			xadj[act[v] + 1] = (int32_t)q;
		if ((v + 1) % BW_CHUNK == 0)
			bw_stream_release(&s, v + 1);
	}
	float ub[BW_MAX_CON];
	for (int c = 0; c < ncon; c++) {
		int64_t total = 0, atotal = 0;
		for (int64_t v = 0; v < n; v++) {
			int64_t w = bw_pg_vw(g, v, c);
			total += w;
			atotal += act[v] >= 0 ? w : 0;
		}
		if (total_in)
			total = total_in[c];
		if (total == 0) {
			st = bw_err(BURROW_E_INVAL, "partition: the %s constraint weighs 0 in total; nothing to balance",
				    g->con_kind[c] == BURROW_BALANCE_TRAIN ? "train" : "edges");
			goto out;
		}
		const int64_t sc = scale_for(atotal);
		for (int64_t v = 0; v < n; v++)
			if (act[v] >= 0)
				vwgt[(int64_t)act[v] * ncon + c] = (int32_t)((bw_pg_vw(g, v, c) + sc - 1) / sc);
		/* the active nodes may weigh up to the part bound of the whole graph */
		ub[c] = atotal ? (float)BW_MIN(ufactor * (double)total / (double)atotal, 50.0) : (float)ufactor;
	}
	st = bw_metis_call((int32_t)na, ncon, xadj, adjncy, vwgt, adjwgt, k, ub, seed, apart, objval);
	if (st)
		goto out;
	if (escale > 1)
		*objval *= escale; /* an estimate; the caller recomputes the cut */
	for (int64_t v = 0; v < n; v++)
		part[v] = act[v] >= 0 ? apart[act[v]] : -1;
	bw_place_fillers(g, k, ufactor, total_in, part);
out:
	bw_free(act);
	bw_free(apart);
	bw_free(xadj);
	bw_free(adjncy);
	bw_free(vwgt);
	bw_free(adjwgt);
	return st;
}
