/* partition.c: burrow_partition: options, the symmetric graph, METIS directly or after
 * coarsening, projection and refinement, relabelling, statistics, and the parts directory
 * written under a temporary name and renamed into place. */
#define _GNU_SOURCE
#include "partition_internal.h"
#include "../graph/dataset_internal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LEVELS 24
#define MARGIN ((size_t)128 << 20) /* mapped windows, stacks, METIS beyond its estimate */
#define MAX_PHASES 8
#define COARSE_PASSES 8 /* refinement passes, and relaxed rounds, on each coarse level */

void burrow_partition_defaults(burrow_partition_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->num_parts = 2;
	o->balance = BURROW_BALANCE_NODES;
	o->ufactor = 1.05;
	o->method = BURROW_PART_METIS;
	o->refine_passes = 4;
}

/* The process's resident high-water mark (VmHWM), in bytes; 0 when unknown. */
static int64_t rss_peak(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long long kb = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %lld kB", &kb) == 1)
			break;
	fclose(f);
	return (int64_t)kb * 1024;
}

typedef struct phase {
	const char *name;
	double seconds;
	size_t heap_peak;
	int64_t rss_peak;
} phase;

typedef struct result {
	int64_t metis_cut;
	bool coarsened;
	int levels;
	int64_t coarse_n, coarse_m;
} result;

/* One burrow_partition: its phases' measures, and the state its steps fill in turn (each
 * step owning what it acquires until run_close, which is safe on a run stopped anywhere). */
typedef struct run {
	const burrow_partition_opts *o;
	phase ph[MAX_PHASES];
	int nph;
	double t0;
	double t_start;
	const char *dataset_dir;       /* borrowed */
	burrow_dataset *ds;
	const burrow_dataset_info *in; /* ds's */
	const burrow_csr *gin;         /* ds's graph (NULL for a typed dataset) */
	const burrow_hetero *h;        /* ds's typed graph, or NULL */
	int64_t toff[BURROW_MAX_TYPES + 1]; /* typed: each type's first id in the concatenation of the types */
	const int64_t *deg_ptr;        /* each node's stored entries as row bounds: gin's indptr, or deg */
	int64_t *deg;                  /* typed: [n + 1] in-edges over every relation, summed into bounds */
	int64_t *train_own;            /* typed: the target type's train split in concatenated ids */
	int64_t n;
	int k;
	int ncon, kinds[BW_MAX_CON];   /* the balance constraints */
	const int64_t *train;          /* ds's train split, of ntrain nodes */
	int64_t ntrain;
	char *out, *tmp;               /* the parts directory, and its temporary name ("" until named) */
	int tmp_reg;                   /* tmp's registration for interrupts, or -1 */
	int32_t *part;                 /* [n] each node's part */
	uint64_t *train_bits;          /* [n / 64] training nodes, when there are any */
	int64_t *pw, *scratch;         /* [k * BW_MAX_CON] part weights, [k] */
	int64_t *sym_ptr;              /* the symmetrized copy's indptr, ... */
	void *sym_map;                 /* ... its mapped indices */
	size_t sym_len;
	bw_pgraph g;                   /* the symmetric graph without self-loops */
	result res;
	bw_relabel rl;
	bw_part_out *po;               /* [k] */
	burrow_partition_stats s;
} run;

static void phase_begin(run *r, const char *name)
{
	burrow_mem_reset_peak();
	r->ph[r->nph] = (phase){.name = name};
	r->t0 = bw_now_s();
	if (r->o->progress)
		r->o->progress(r->o->progress_user, name, 0, 0);
}

static void phase_end(run *r)
{
	phase *p = &r->ph[r->nph++];
	p->seconds = bw_now_s() - r->t0;
	burrow_mem_stats(NULL, &p->heap_peak);
	p->rss_peak = rss_peak();
}

static const char *const CON_NAMES[] = {"nodes", "train", "edges"};
static const int CON_BITS[] = {BURROW_BALANCE_NODES, BURROW_BALANCE_TRAIN, BURROW_BALANCE_EDGES};

static int check_opts(const burrow_partition_opts *o)
{
	if (o->num_parts < 1)
		return bw_err(BURROW_E_INVAL, "partition: the number of parts must be at least 1 (got %d)", o->num_parts);
	if (!o->balance || (o->balance & ~7u))
		return bw_err(BURROW_E_INVAL, "partition: balance must be a non-empty set of nodes, train, edges");
	if (!(o->ufactor >= 1.001 && o->ufactor <= 100))
		return bw_err(BURROW_E_INVAL, "partition: ufactor must lie in [1.001, 100] (got %g)", o->ufactor);
	if (o->method != BURROW_PART_METIS && o->method != BURROW_PART_RANDOM)
		return bw_err(BURROW_E_INVAL, "partition: unknown method %d", o->method);
	if (o->coarsen_to < 0 || o->refine_passes < 0)
		return bw_err(BURROW_E_INVAL, "partition: coarsen_to and refine_passes must be >= 0");
	return 0;
}

/* A balanced random assignment: a seeded permutation cut into k equal ranges. */
static int random_parts(int64_t n, int k, uint64_t seed, int32_t *part)
{
	int32_t *perm = bw_malloc((size_t)(n ? n : 1) * sizeof *perm);
	if (!perm)
		return BURROW_E_NOMEM;
	bw_rng rng;
	bw_rng_seed(&rng, bw_key(seed, 0x7061727473ull));
	for (int64_t i = 0; i < n; i++)
		perm[i] = (int32_t)i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = (int64_t)bw_rng_below(&rng, (uint64_t)i + 1);
		int32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	for (int64_t i = 0; i < n; i++)
		part[perm[i]] = (int32_t)((i * k) / n);
	bw_free(perm);
	return 0;
}

/* Bytes of per-node arrays the run needs whatever the edge count (see docs/partition.md). */
static size_t floor_bytes(int64_t n, int ncon) { return (size_t)n * (size_t)(28 + 8 * ncon) + ((size_t)64 << 20); }

/* Heap the budget still allows, less a margin for mapped windows and METIS's overhead. */
static size_t budget_left(size_t mem)
{
	size_t cur;
	burrow_mem_stats(&cur, NULL);
	return mem > cur ? mem - cur : 0;
}

/* metis_parts's coarsening path: the levels it builds and what sizes them. */
typedef struct coarse {
	bw_level lv[MAX_LEVELS];
	int nl;                       /* levels built; lv[nl - 1].g is the coarsest */
	int ncon;                     /* balance constraints */
	int64_t target;               /* coarse nodes to reach */
	int64_t fcap[BW_MAX_CON];     /* the heaviest a coarse node may grow, per constraint */
	int64_t wtotal[BW_MAX_CON];   /* g's total weight, per constraint */
	double avgw[BW_MAX_CON];      /* g's mean node weight, per constraint */
} coarse;

/* The target: --coarsen-to, else as many nodes as the budget lets METIS take (avail bytes).
 * A coarse node weighs at most a small share of a part, so the coarse graph still balances
 * finely (fcap); below that, matching pairs up to METIS's own bound and label propagation's
 * clusters grow with the level (see coarsen_opts). */
static void coarse_sizes(const burrow_partition_opts *o, const bw_pgraph *g, size_t avail, coarse *cs)
{
	const int k = o->num_parts, ncon = g->ncon;
	cs->ncon = ncon;
	cs->target = o->coarsen_to;
	if (!cs->target) {
		double ratio = (double)BW_MIN(avail, (size_t)1 << 40) / (double)bw_metis_bytes(g->n, g->m, ncon);
		ratio = BW_MIN(ratio, (double)(INT32_MAX / 2) / (double)BW_MAX(g->m, 1));
		cs->target = BW_MAX((int64_t)(0.5 * ratio * (double)g->n), (int64_t)64 * k);
	}
	for (int c = 0; c < ncon; c++) {
		int64_t total = 0, maxv = 0;
		for (int64_t v = 0; v < g->n; v++) {
			int64_t w = bw_pg_vw(g, v, c);
			total += w;
			maxv = BW_MAX(maxv, w);
		}
		cs->fcap[c] = BW_MAX(maxv, BW_MAX((int64_t)((o->ufactor - 1.0) * (double)total / k / 4), 1));
		cs->wtotal[c] = total;
		cs->avgw[c] = (double)total / (double)BW_MAX(g->n, 1);
	}
}

/* The options of the next level over cur (left: heap the budget still allows, or SIZE_MAX;
 * lp: label propagation's own bytes). Heavy-edge matching, as METIS coarsens, while the
 * coarse graph fits the budget whole; a level whose coarse graph may not, and a level after
 * matching stalled, uses label propagation instead, which merges as much as the cluster bound
 * allows. */
static bw_coarsen_opts coarsen_opts(const burrow_partition_opts *o, const bw_pgraph *cur, const coarse *cs,
				    size_t left, size_t lp, int stalls)
{
	bw_coarsen_opts co = {.passes = 5, .seed = bw_key(o->seed, (uint64_t)cs->nl), .threads = o->threads};
	if (o->mem_bytes) {
		const size_t room = left > lp ? left - lp : 0;
		co.buf_bytes = BW_MAX(room / 3, (size_t)16 << 20);
		co.max_entries = BW_MAX((int64_t)(room / 3 / 8), (int64_t)1 << 20);
	} else {
		co.buf_bytes = BW_MIN((size_t)cur->m * 8 + 1, (size_t)1 << 30);
	}
	const bool tight = co.max_entries && cur->m > co.max_entries;
	co.match = !tight && !stalls;
	co.ties = !co.match;
	for (int c = 0; c < cs->ncon; c++) {
		const double pair = 1.5 * (double)cs->wtotal[c] / (double)cs->target; /* METIS's own bound */
		const double grow = cs->avgw[c] * ldexp(1.0, cs->nl + 1 + 2 * stalls);
		co.maxw[c] = BW_MIN(cs->fcap[c], BW_MAX((int64_t)(co.match ? pair : tight ? (double)cs->fcap[c] : grow), 1));
	}
	return co;
}

/* The "coarsen" phase: levels over g until the coarsest fits METIS and the budget and has
 * at most the target's nodes, or coarsening stalls (cs->nl levels built, also on failure). */
static int coarsen_levels(run *rn, const bw_pgraph *g, coarse *cs)
{
	const burrow_partition_opts *o = rn->o;
	const int ncon = g->ncon;
	const size_t mem = o->mem_bytes;
	const bw_pgraph *cur = g;
	int stalls = 0, st = 0;
	phase_begin(rn, "coarsen");
	while (cs->nl < MAX_LEVELS) {
		const size_t left = mem ? budget_left(mem) : SIZE_MAX;
		const size_t lp = (size_t)cur->n * (size_t)(20 + 8 * ncon) + MARGIN;
		if (cur->n <= cs->target && cur->m < INT32_MAX - 1 &&
		    (!mem || bw_metis_bytes(cur->n, cur->m, ncon) + MARGIN <= left))
			break;
		const bw_coarsen_opts co = coarsen_opts(o, cur, cs, left, lp, stalls);
		bw_level *lv = &cs->lv[cs->nl];
		if ((st = bw_coarsen_level(cur, &co, lv)))
			break;
		bw_log(BURROW_LOG_DEBUG, "partition: level %d (%s): %lld nodes, %lld entries", cs->nl + 1,
		       co.match ? "matching" : "label propagation", (long long)lv->g.n, (long long)lv->g.m);
		const bool stalled = lv->g.n > cur->n - cur->n / 20;
		cur = &lv->g;
		cs->nl++;
		if (o->progress)
			o->progress(o->progress_user, "coarsen", (uint64_t)cs->nl, 0);
		if (stalled && ++stalls > 3)
			break;
		if (!stalled)
			stalls = 0;
	}
	phase_end(rn);
	return st;
}

/* The "refine" phase: project cpart (the coarsest level's parts; taken) back level by
 * level, refining each: coarse levels in memory, the finest (g, into part) streamed. Each
 * level is freed once projected. */
static int refine_levels(run *rn, const bw_pgraph *g, coarse *cs, int32_t *cpart, const double *maxw, int32_t *part)
{
	const burrow_partition_opts *o = rn->o;
	const int k = o->num_parts, nl = cs->nl;
	int st = 0;
	phase_begin(rn, "refine");
	int64_t *pw = bw_malloc((size_t)k * (size_t)g->ncon * sizeof *pw);
	if (!pw)
		st = BURROW_E_NOMEM;
	for (int l = nl - 1; l >= 0 && !st; l--) {
		const bw_pgraph *fine = l ? &cs->lv[l - 1].g : g;
		int32_t *fpart = l ? bw_malloc((size_t)(fine->n ? fine->n : 1) * sizeof *fpart) : part;
		if (!fpart) {
			st = BURROW_E_NOMEM;
			break;
		}
		for (int64_t v = 0; v < fine->n; v++)
			fpart[v] = cs->lv[l].cmap[v] >= 0 ? cpart[cs->lv[l].cmap[v]] : -1;
		bw_place_fillers(fine, k, o->ufactor, cs->wtotal, fpart);
		bw_free(cpart);
		cpart = l ? fpart : NULL;
		bw_level_free(&cs->lv[l]);
		int64_t moved;
		bw_part_weights(fine, fpart, k, pw, o->threads);
		const int passes = l ? COARSE_PASSES : o->refine_passes;
		st = bw_refine(fine, fpart, k, pw, maxw, passes, passes, o->seed, o->threads, &moved);
		if (o->progress)
			o->progress(o->progress_user, "refine", (uint64_t)(nl - l), (uint64_t)nl);
	}
	bw_free(cpart);
	bw_free(pw);
	phase_end(rn);
	return st;
}

/* METIS on the coarsest level (the "metis" phase): its parts into *cpart (malloc'd). */
static int metis_coarse(run *rn, const bw_pgraph *cur, const coarse *cs, int32_t **cpart, result *res)
{
	const burrow_partition_opts *o = rn->o;
	int st;
	phase_begin(rn, "metis");
	*cpart = bw_malloc((size_t)(cur->n ? cur->n : 1) * sizeof **cpart);
	if (!*cpart)
		st = BURROW_E_NOMEM;
	else if ((st = bw_metis_kway(cur, o->num_parts, o->ufactor, cs->wtotal, o->seed, *cpart, &res->metis_cut))) {
		bw_free(*cpart);
		*cpart = NULL;
	}
	phase_end(rn);
	return st;
}

/* METIS on g directly, or after coarsening it; part[] gets the parts of g's nodes. */
static int metis_parts(run *rn, const bw_pgraph *g, const double *maxw, int32_t *part, result *res)
{
	const burrow_partition_opts *o = rn->o;
	const int k = o->num_parts, ncon = g->ncon;
	const size_t mem = o->mem_bytes;
	const size_t fl = floor_bytes(g->n, ncon);
	const size_t avail = mem ? (mem > fl ? mem - fl : 0) : SIZE_MAX;
	int st = 0;

	const bool fits32 = g->m < INT32_MAX - 1;
	const bool direct = k == 1 || (fits32 && bw_metis_bytes(g->n, g->m, ncon) <= avail &&
				       (o->coarsen_to == 0 || o->coarsen_to >= g->n));
	res->coarse_n = g->n;
	res->coarse_m = g->m / 2;
	if (direct) {
		phase_begin(rn, "metis");
		st = bw_metis_kway(g, k, o->ufactor, NULL, o->seed, part, &res->metis_cut);
		phase_end(rn);
		return st;
	}
	res->coarsened = true;
	coarse cs;
	memset(&cs, 0, sizeof cs);
	coarse_sizes(o, g, avail, &cs);
	int32_t *cpart = NULL;
	if (!(st = coarsen_levels(rn, g, &cs))) {
		const bw_pgraph *cur = cs.nl ? &cs.lv[cs.nl - 1].g : g;
		res->levels = cs.nl;
		res->coarse_n = cur->n;
		res->coarse_m = cur->m / 2;
		if (cur->m >= INT32_MAX - 1)
			st = bw_err(BURROW_E_NOMEM, "partition: coarsening stalled at %lld nodes and %lld entries, beyond METIS",
				    (long long)cur->n, (long long)cur->m);
		if (!st && !(st = metis_coarse(rn, cur, &cs, &cpart, res)))
			st = refine_levels(rn, g, &cs, cpart, maxw, part);
	}
	for (int l = 0; l < cs.nl; l++)
		bw_level_free(&cs.lv[l]);
	return st;
}

/* A typed parts directory's "node_types": per type its name, count, book (K+1 offsets in
 * the type's own new ids) and halo sizes. False when out of memory. */
static bool typed_meta(cJSON *j, const run *rn, const bw_relabel *r, const bw_part_out *po)
{
	const int k = r->k;
	cJSON *types = cJSON_AddArrayToObject(j, "node_types");
	for (int t = 0; types && t < r->num_types; t++) {
		cJSON *o = cJSON_CreateObject();
		if (!o || !cJSON_AddItemToArray(types, o))
			return false;
		const int64_t *bk = r->tbook + (int64_t)t * (k + 1);
		cJSON_AddStringToObject(o, "name", rn->h->type_names[t]);
		cJSON_AddNumberToObject(o, "num_nodes", (double)rn->h->type_nodes[t]);
		cJSON *offs = cJSON_AddArrayToObject(o, "node_offsets"), *hs = cJSON_AddArrayToObject(o, "halo_sizes");
		for (int i = 0; offs && hs && i <= k; i++) {
			cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)(bk[i] - bk[0])));
			if (i < k)
				cJSON_AddItemToArray(hs, cJSON_CreateNumber((double)po[i].type_halo[t]));
		}
		if (!offs || !hs)
			return false;
	}
	if (rn->h->target_type >= 0)
		cJSON_AddStringToObject(j, "target_type", rn->h->type_names[rn->h->target_type]);
	return types != NULL;
}

/* Write <dir>/meta.json for the parts directory. */
static int write_meta(const char *dir, const char *dataset_dir, const burrow_dataset *ds, const run *rn,
		      const burrow_partition_stats *s, const bw_relabel *r, const bw_part_out *po)
{
	const burrow_partition_opts *o = rn->o;
	const int k = r->k;
	cJSON *j = bw_meta_begin("burrow-parts", r->num_types ? 2 : 1), *p = NULL;
	if (!j)
		return bw_meta_write(NULL, dir, false);
	cJSON_AddStringToObject(j, "dataset", dataset_dir);
	cJSON_AddStringToObject(j, "dataset_name", burrow_dataset_get_info(ds)->name);
	cJSON_AddNumberToObject(j, "num_parts", k);
	cJSON_AddNumberToObject(j, "num_nodes", (double)s->num_nodes);
	cJSON_AddNumberToObject(j, "num_edges", (double)s->num_edges);
	cJSON_AddStringToObject(j, "method", o->method == BURROW_PART_METIS ? "metis" : "random");
	cJSON *bal = cJSON_AddArrayToObject(j, "balance");
	for (int c = 0; bal && c < 3; c++)
		if (o->balance & (unsigned)CON_BITS[c])
			cJSON_AddItemToArray(bal, cJSON_CreateString(CON_NAMES[c]));
	cJSON_AddNumberToObject(j, "ufactor", o->ufactor);
	cJSON_AddNumberToObject(j, "seed", (double)o->seed);
	cJSON *offs = cJSON_AddArrayToObject(j, "node_offsets");
	for (int i = 0; offs && i <= k; i++)
		cJSON_AddItemToArray(offs, cJSON_CreateNumber((double)r->offsets[i]));
	if (r->num_types && !typed_meta(j, rn, r, po))
		return bw_meta_write(j, dir, false);
	cJSON_AddNumberToObject(j, "edge_cut", (double)s->edge_cut);
	cJSON_AddNumberToObject(j, "metis_cut", (double)s->metis_cut);
	cJSON_AddNumberToObject(j, "sym_edges", (double)s->sym_edges);
	cJSON_AddNumberToObject(j, "cut_fraction", s->cut_fraction);
	cJSON *imb = cJSON_AddObjectToObject(j, "imbalance");
	if (imb) {
		cJSON_AddNumberToObject(imb, "nodes", s->imbalance_nodes);
		cJSON_AddNumberToObject(imb, "train", s->imbalance_train);
		cJSON_AddNumberToObject(imb, "edges", s->imbalance_edges);
	}
	cJSON *hs = cJSON_AddArrayToObject(j, "halo_sizes"), *ss = cJSON_AddArrayToObject(j, "send_sizes");
	cJSON *pe = cJSON_AddArrayToObject(j, "part_edges");
	for (int i = 0; hs && ss && pe && i < k; i++) {
		cJSON_AddItemToArray(hs, cJSON_CreateNumber((double)po[i].halo));
		cJSON_AddItemToArray(ss, cJSON_CreateNumber((double)po[i].send));
		cJSON_AddItemToArray(pe, cJSON_CreateNumber((double)po[i].edges));
	}
	cJSON_AddNumberToObject(j, "halo_total", (double)s->halo_total);
	cJSON_AddNumberToObject(j, "replication_factor", s->replication);
	cJSON *co = cJSON_AddObjectToObject(j, "coarsening");
	if (co) {
		cJSON_AddBoolToObject(co, "used", s->coarsened);
		cJSON_AddNumberToObject(co, "levels", s->coarsen_levels);
		cJSON_AddNumberToObject(co, "coarse_nodes", (double)s->coarse_nodes);
		cJSON_AddNumberToObject(co, "coarse_edges", (double)s->coarse_edges);
	}
	cJSON_AddNumberToObject(j, "mem_bytes", (double)o->mem_bytes);
	cJSON *phs = cJSON_AddArrayToObject(j, "phases");
	for (int i = 0; phs && i < rn->nph; i++) {
		if (!(p = cJSON_CreateObject()))
			break;
		cJSON_AddStringToObject(p, "phase", rn->ph[i].name);
		cJSON_AddNumberToObject(p, "seconds", rn->ph[i].seconds);
		cJSON_AddNumberToObject(p, "heap_peak_bytes", (double)rn->ph[i].heap_peak);
		cJSON_AddNumberToObject(p, "rss_peak_bytes", (double)rn->ph[i].rss_peak);
		cJSON_AddItemToArray(phs, p);
	}
	cJSON_AddNumberToObject(j, "seconds", s->seconds);
	cJSON_AddNumberToObject(j, "peak_rss_bytes", (double)s->peak_rss_bytes);
	return bw_meta_write(j, dir, bal && offs && imb && hs && ss && pe && co && phs && (p || !rn->nph));
}

/* Rename tmp to out, replacing out when allowed (checking the rollback: core's). */
static int rename_into_place(const char *tmp, const char *out, bool overwrite)
{
	return bw_replace_dir(tmp, out, overwrite);
}

/* max part weight / average, from per-node weights w(v) (NULL = 1). */
static double imbalance_of(const int32_t *part, int64_t n, int k, const int64_t *indptr, const int64_t *train,
			   int64_t ntrain, int64_t *scratch)
{
	memset(scratch, 0, (size_t)k * sizeof *scratch);
	int64_t total = 0;
	if (train) {
		for (int64_t q = 0; q < ntrain; q++)
			scratch[part[train[q]]]++;
		total = ntrain;
	} else {
		for (int64_t v = 0; v < n; v++) {
			int64_t w = indptr ? indptr[v + 1] - indptr[v] : 1;
			scratch[part[v]] += w;
			total += w;
		}
	}
	if (!total)
		return 0;
	int64_t mx = 0;
	for (int i = 0; i < k; i++)
		mx = BW_MAX(mx, scratch[i]);
	return (double)mx * k / (double)total;
}

/* Release the pages of the input's train split (mapped; a typed run's copy is its own). */
static void release_train(const run *r)
{
	if (!r->h)
		bw_release_range(r->train, (size_t)r->ntrain * sizeof *r->train);
}

/* A typed dataset as one graph of sum(N_type) nodes, type t's node v being toff[t] + v: the
 * offsets, each node's in-edges over every relation (the edges constraint) and the target
 * type's training nodes in those ids. */
static int typed_inputs(run *r)
{
	const burrow_hetero *h = r->h;
	int64_t cnt;
	r->toff[0] = 0;
	for (int t = 0; t < h->num_types; t++)
		r->toff[t + 1] = r->toff[t] + h->type_nodes[t];
	r->n = r->toff[h->num_types];
	if (r->n > INT32_MAX - 1)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: %lld nodes of all types: the partitioner needs fewer than 2^31",
			      r->dataset_dir, (long long)r->n);
	if (!(r->deg = bw_calloc((size_t)r->n + 1, sizeof *r->deg)))
		return BURROW_E_NOMEM;
	for (int q = 0; q < h->num_relations; q++) {
		const burrow_relation *rel = &h->rel[q];
		const int64_t base = r->toff[rel->dst_type];
		for (int64_t v = 0; v < rel->graph.num_nodes; v++)
			r->deg[base + v + 1] += rel->graph.indptr[v + 1] - rel->graph.indptr[v];
		bw_release_range(rel->graph.indptr, (size_t)(rel->graph.num_nodes + 1) * sizeof *rel->graph.indptr);
	}
	for (int64_t v = 0; v < r->n; v++)
		r->deg[v + 1] += r->deg[v];
	r->deg_ptr = r->deg;
	const int64_t *ids = burrow_dataset_split(r->ds, BURROW_SPLIT_TRAIN, &cnt);
	if (!ids || h->target_type < 0)
		return 0;
	if (!(r->train_own = bw_malloc((size_t)cnt * sizeof *r->train_own)))
		return BURROW_E_NOMEM;
	for (int64_t q = 0; q < cnt; q++)
		r->train_own[q] = r->toff[h->target_type] + ids[q];
	bw_release_range(ids, (size_t)cnt * sizeof *ids);
	r->train = r->train_own;
	r->ntrain = cnt;
	return 0;
}

/* The dataset's sizes and what the options ask of them: the constraints, the memory floor,
 * a train split to balance. */
static int part_inputs(run *r)
{
	const burrow_partition_opts *o = r->o;
	const char *dir = r->dataset_dir;
	int st;
	r->in = burrow_dataset_get_info(r->ds);
	r->gin = burrow_dataset_graph(r->ds);
	r->h = burrow_dataset_hetero(r->ds);
	r->n = r->in->num_nodes;
	r->deg_ptr = r->gin ? r->gin->indptr : NULL;
	if (r->h && (st = typed_inputs(r)))
		return st;
	r->k = o->num_parts;
	if (r->n > INT32_MAX - 1)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: %lld nodes: the partitioner needs fewer than 2^31", dir,
			      (long long)r->n);
	if (r->k > r->n)
		return bw_err(BURROW_E_INVAL, "%s: %d parts for %lld nodes: at most one part per node", dir, r->k,
			      (long long)r->n);
	for (int c = 0; c < 3; c++)
		if (o->balance & (unsigned)CON_BITS[c])
			r->kinds[r->ncon++] = CON_BITS[c];
	const size_t floor = floor_bytes(r->n, r->ncon) + (r->h ? (size_t)r->n * 8 : 0);
	if (o->mem_bytes && floor > o->mem_bytes)
		return bw_err(BURROW_E_NOMEM, "%s: %lld nodes need at least %zu bytes of memory, more than the budget of %zu",
			      dir, (long long)r->n, floor, o->mem_bytes);
	if (!r->h)
		r->train = burrow_dataset_split(r->ds, BURROW_SPLIT_TRAIN, &r->ntrain);
	if ((o->balance & BURROW_BALANCE_TRAIN) && !r->ntrain)
		return bw_err(BURROW_E_INVAL, "%s: cannot balance training nodes: the dataset has no train split", dir);
	return 0;
}

/* The output under a temporary name beside its final place (out.tmp.<pid>, registered to be
 * removed if the command is interrupted), after checking the final place may be taken. */
static int part_tmp_dir(run *r)
{
	const burrow_partition_opts *o = r->o;
	if (o->out_dir) {
		r->out = bw_strdup(o->out_dir);
	} else {
		char name[32];
		snprintf(name, sizeof name, "parts-%d", r->k);
		r->out = bw_path_join(r->dataset_dir, name);
	}
	if (!r->out || !(r->tmp = bw_malloc(strlen(r->out) + 32)))
		return BURROW_E_NOMEM;
	r->tmp[0] = '\0'; /* nothing to remove on the way out until it is named */
	size_t ol = strlen(r->out);
	while (ol > 1 && r->out[ol - 1] == '/')
		r->out[--ol] = '\0';
	struct stat sb;
	int st;
	if (!o->overwrite && stat(r->out, &sb) == 0)
		return bw_err(BURROW_E_EXISTS, "%s: already exists", r->out);
	if ((o->overwrite && (st = bw_check_replaceable(r->out, r->dataset_dir))) || (st = bw_rm_stale_tmp(r->out)))
		return st;
	sprintf(r->tmp, "%s.tmp.%ld", r->out, (long)getpid());
	r->tmp_reg = bw_tmp_add(r->tmp);
	if ((st = bw_rm_rf(r->tmp)))
		return st;
	return bw_mkdir_p(r->tmp, 0755);
}

/* The per-node and per-part arrays, and the training nodes as bits. */
static int part_arrays(run *r)
{
	const int64_t n = r->n;
	const int k = r->k;
	r->part = bw_malloc((size_t)(n ? n : 1) * sizeof *r->part);
	r->pw = bw_malloc((size_t)k * BW_MAX_CON * sizeof *r->pw);
	r->scratch = bw_malloc((size_t)k * sizeof *r->scratch);
	r->po = bw_calloc((size_t)k, sizeof *r->po);
	if (r->ntrain)
		r->train_bits = bw_calloc((size_t)(n + 63) / 64, sizeof *r->train_bits);
	if (!r->part || !r->pw || !r->scratch || !r->po || (r->ntrain && !r->train_bits))
		return BURROW_E_NOMEM;
	for (int64_t q = 0; q < r->ntrain; q++)
		bw_bit_set(r->train_bits, r->train[q]);
	release_train(r);
	return 0;
}

/* The symmetric graph without self-loops: the input itself when meta.json says it is
 * symmetric (its readers skip loops and repeats), else a symmetrized copy on disk (the
 * "symmetrize" phase); with the constraints' weights. */
static int part_graph(run *r)
{
	const burrow_partition_opts *o = r->o;
	const burrow_csr *gin = r->gin;
	bw_sym_piece pc[BW_MAX_PIECES];
	int npc = 0;
	if (gin) {
		r->g = (bw_pgraph){.n = r->n, .m = gin->num_edges, .indptr = gin->indptr, .indices = gin->indices,
				   .width = gin->index_width, .mapped = true, .ptr_mapped = true};
		pc[npc++] = (bw_sym_piece){.csr = gin};
	}
	for (int q = 0; r->h && q < r->h->num_relations; q++) /* relations: rows of dst, ids of src */
		pc[npc++] = (bw_sym_piece){.csr = &r->h->rel[q].graph, .row_off = r->toff[r->h->rel[q].dst_type],
					   .col_off = r->toff[r->h->rel[q].src_type]};
	if (r->h || !r->in->symmetric) {
		phase_begin(r, "symmetrize");
		size_t buf = o->mem_bytes ? budget_left(o->mem_bytes) / 2 : ((size_t)1 << 30);
		int st = bw_symmetrize(pc, npc, r->n, r->tmp, BW_MAX(buf, (size_t)16 << 20), o->threads, &r->g,
				       &r->sym_ptr, &r->sym_map, &r->sym_len);
		phase_end(r);
		if (st)
			return st;
	}
	r->g.ncon = r->ncon;
	memcpy(r->g.con_kind, r->kinds, sizeof r->kinds);
	r->g.deg_indptr = r->deg_ptr;
	r->g.train_bits = r->train_bits;
	return 0;
}

/* Each node's part: random ("random"), or METIS (metis_parts) and, when METIS ran on the
 * graph itself, its refinement ("refine"). */
static int part_assign(run *r)
{
	const burrow_partition_opts *o = r->o;
	const int k = r->k;
	int st;
	if (o->method == BURROW_PART_RANDOM) {
		phase_begin(r, "random");
		st = random_parts(r->n, k, o->seed, r->part);
		phase_end(r);
		return st;
	}
	double maxw[BW_MAX_CON];
	for (int c = 0; c < r->ncon; c++) {
		int64_t total = 0;
		for (int64_t v = 0; v < r->n; v++)
			total += bw_pg_vw(&r->g, v, c);
		if (!total)
			return bw_err(BURROW_E_INVAL, "%s: the %s constraint weighs 0 in total; nothing to balance",
				      r->dataset_dir, r->kinds[c] == BURROW_BALANCE_TRAIN ? "train" : "edges");
		maxw[c] = o->ufactor * (double)total / k;
	}
	st = metis_parts(r, &r->g, maxw, r->part, &r->res);
	if (!st && !r->res.coarsened && k > 1) {
		/* the same bounded refinement, relaxed rounds included, as the finest level
		 * after projection: METIS may leave a part a little over its bound, and on
		 * skewed graphs the rounds find far lower cuts (R-MAT scale 20, K=4: 1,943,896
		 * after plain refinement, 1,008,665 with the rounds) */
		int64_t moved;
		phase_begin(r, "refine");
		bw_part_weights(&r->g, r->part, k, r->pw, o->threads);
		st = bw_refine(&r->g, r->part, k, r->pw, maxw, o->refine_passes, o->refine_passes, o->seed, o->threads,
			       &moved);
		phase_end(r);
	}
	return st;
}

/* The "stats" phase: the cut and the balance; then the symmetrized copy and the training
 * bits are dropped (the write needs neither). */
static void part_stats(run *r)
{
	const burrow_partition_opts *o = r->o;
	burrow_partition_stats *s = &r->s;
	const int64_t n = r->n;
	const int k = r->k;
	phase_begin(r, "stats");
	bw_edge_cut(&r->g, r->part, o->threads, &s->edge_cut, &s->sym_edges);
	s->num_parts = k;
	s->num_nodes = n;
	s->num_edges = r->h ? r->deg[n] : r->in->num_edges;
	s->cut_fraction = s->sym_edges ? (double)s->edge_cut / (double)s->sym_edges : 0;
	s->imbalance_nodes = imbalance_of(r->part, n, k, NULL, NULL, 0, r->scratch);
	s->imbalance_train = r->ntrain ? imbalance_of(r->part, n, k, NULL, r->train, r->ntrain, r->scratch) : 0;
	s->imbalance_edges = imbalance_of(r->part, n, k, r->deg_ptr, NULL, 0, r->scratch);
	release_train(r);
	if (r->gin)
		bw_release_range(r->gin->indptr, (size_t)(n + 1) * sizeof *r->gin->indptr);
	s->metis_cut = r->res.metis_cut;
	s->coarsened = r->res.coarsened;
	s->coarsen_levels = r->res.levels;
	s->coarse_nodes = o->method == BURROW_PART_METIS ? r->res.coarse_n : 0;
	s->coarse_edges = o->method == BURROW_PART_METIS ? (r->res.coarsened ? r->res.coarse_m : s->sym_edges) : 0;
	phase_end(r);
	if (r->sym_map) {
		munmap(r->sym_map, r->sym_len);
		r->sym_map = NULL;
		bw_free(r->sym_ptr);
		r->sym_ptr = NULL;
		char *sp = bw_path_join(r->tmp, "sym.indices");
		if (sp)
			unlink(sp);
		bw_free(sp);
	}
	bw_free(r->train_bits);
	r->train_bits = NULL;
}

/* Relabel a typed input: within each type, part i owns the new ids [tbook[t][i],
 * tbook[t][i+1]) of the concatenation (ascending input id within a part); offsets[i] counts
 * the nodes of all types parts below i own. */
static int relabel_typed(run *r)
{
	bw_relabel *rl = &r->rl;
	const int k = r->k, nt = r->h->num_types;
	rl->num_types = nt;
	rl->toff = r->toff;
	int64_t *cur = bw_calloc((size_t)nt * (size_t)k, sizeof *cur);
	rl->tbook = bw_calloc((size_t)nt * (size_t)(k + 1), sizeof *rl->tbook);
	if (!cur || !rl->tbook) {
		bw_free(cur);
		return BURROW_E_NOMEM;
	}
	for (int t = 0; t < nt; t++) {
		int64_t *bk = rl->tbook + (int64_t)t * (k + 1);
		for (int64_t v = r->toff[t]; v < r->toff[t + 1]; v++)
			bk[r->part[v] + 1]++;
		bk[0] = r->toff[t];
		for (int i = 0; i < k; i++) {
			rl->offsets[i + 1] += bk[i + 1];
			bk[i + 1] += bk[i];
			cur[t * k + i] = bk[i];
		}
		for (int64_t v = r->toff[t]; v < r->toff[t + 1]; v++) {
			int64_t id = cur[t * k + r->part[v]]++;
			rl->new_of_orig[v] = (int32_t)id;
			rl->orig_of_new[id] = (int32_t)v;
		}
	}
	for (int i = 0; i < k; i++)
		rl->offsets[i + 1] += rl->offsets[i];
	bw_free(cur);
	return 0;
}

/* The "write" phase: relabel (part i owns [offsets[i], offsets[i+1]), in ascending input
 * id within a part; a typed input per type, relabel_typed), then write the parts into the
 * temporary directory. */
static int part_write(run *r)
{
	bw_relabel *rl = &r->rl;
	const int64_t n = r->n;
	const int k = r->k;
	int st;
	phase_begin(r, "write");
	rl->k = k;
	rl->n = n;
	rl->part = r->part;
	rl->offsets = bw_calloc((size_t)k + 1, sizeof *rl->offsets);
	rl->new_of_orig = bw_malloc((size_t)(n ? n : 1) * sizeof *rl->new_of_orig);
	rl->orig_of_new = bw_malloc((size_t)(n ? n : 1) * sizeof *rl->orig_of_new);
	if (!rl->offsets || !rl->new_of_orig || !rl->orig_of_new) {
		st = BURROW_E_NOMEM;
	} else if (r->h) {
		if (!(st = relabel_typed(r)))
			st = bw_write_typed_parts(r->ds, r->dataset_dir, rl, r->tmp, r->o->mem_bytes, r->o->progress,
						  r->o->progress_user, r->po);
	} else {
		for (int64_t v = 0; v < n; v++)
			rl->offsets[r->part[v] + 1]++;
		for (int i = 0; i < k; i++)
			rl->offsets[i + 1] += rl->offsets[i];
		memcpy(r->scratch, rl->offsets, (size_t)k * sizeof *r->scratch);
		for (int64_t v = 0; v < n; v++) {
			int64_t id = r->scratch[r->part[v]]++;
			rl->new_of_orig[v] = (int32_t)id;
			rl->orig_of_new[id] = (int32_t)v;
		}
		st = bw_write_parts(r->ds, r->dataset_dir, rl, r->tmp, r->o->threads, r->o->progress, r->o->progress_user,
				    r->po);
	}
	phase_end(r);
	return st;
}

/* The run's totals and phases into the statistics, meta.json, and the temporary directory
 * renamed into place. */
static int part_finish(run *r)
{
	burrow_partition_stats *s = &r->s;
	for (int i = 0; i < r->k; i++)
		s->halo_total += r->po[i].halo;
	s->replication = r->n ? (double)(r->n + s->halo_total) / (double)r->n : 1;
	s->seconds = bw_now_s() - r->t_start;
	s->peak_rss_bytes = rss_peak();
	s->num_phases = r->nph;
	for (int i = 0; i < r->nph; i++)
		s->phases[i] = (struct burrow_partition_phase){r->ph[i].name, r->ph[i].seconds, (int64_t)r->ph[i].heap_peak,
							       r->ph[i].rss_peak};
	int st;
	if ((st = write_meta(r->tmp, r->dataset_dir, r->ds, r, s, &r->rl, r->po)) || (st = bw_fsync_dir(r->tmp)))
		return st;
	return rename_into_place(r->tmp, r->out, r->o->overwrite);
}

/* Everything the steps acquired, whichever step the run stopped at; a failed run's
 * temporary directory is removed. */
static void run_close(run *r, int st)
{
	if (r->sym_map)
		munmap(r->sym_map, r->sym_len);
	bw_free(r->sym_ptr);
	if (st && r->tmp && r->tmp[0])
		bw_rm_rf(r->tmp);
	bw_tmp_drop(r->tmp_reg);
	bw_free(r->rl.offsets);
	bw_free(r->rl.new_of_orig);
	bw_free(r->rl.orig_of_new);
	bw_free(r->po);
	bw_free(r->part);
	bw_free(r->pw);
	bw_free(r->scratch);
	bw_free(r->train_bits);
	bw_free(r->deg);
	bw_free(r->train_own);
	bw_free(r->rl.tbook);
	bw_free(r->out);
	bw_free(r->tmp);
	burrow_dataset_close(r->ds);
}

int burrow_partition(const char *dataset_dir, const burrow_partition_opts *opts, burrow_partition_stats *stats)
{
	burrow_partition_opts o;
	run rn = {.o = &o, .t_start = bw_now_s(), .dataset_dir = dataset_dir, .tmp_reg = -1, .s = {.size = sizeof rn.s}};
	int st;
	burrow_partition_defaults(&o);
	if ((opts && (st = bw_opts_in(&o, sizeof o, opts, "burrow_partition_opts"))) ||
	    (st = bw_stats_check(stats, "burrow_partition_stats")))
		return st;
	burrow_partition_stats zero = {.size = sizeof zero};
	bw_stats_out(stats, &zero, sizeof zero);
	if ((st = check_opts(&o)) || (st = burrow_dataset_open(&rn.ds, dataset_dir)))
		return st;
	if (!(st = part_inputs(&rn)) && !(st = part_tmp_dir(&rn)) && !(st = part_arrays(&rn)) &&
	    !(st = part_graph(&rn)) && !(st = part_assign(&rn))) {
		part_stats(&rn);
		if (!(st = part_write(&rn)) && !(st = part_finish(&rn)))
			bw_stats_out(stats, &rn.s, sizeof rn.s);
	}
	run_close(&rn, st);
	return st;
}
