/* test_partition_typed.c: partitions of typed datasets (gen hsbm), checked against the input by
 * slow references: every node owned once per type, every relation's edges mapped back through
 * orig ids equal to the input's rows, halos minimal and complete, send lists equal to the
 * other parts' halo segments, features, labels and splits following their nodes, balance
 * within the bound, the cut recomputed; failing allocations leave nothing behind. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../graph/npy.h"
#include "../partition/partition_internal.h"
#include "util.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	bw_mem_fail_after(-1);
	tu_rmrf(dir);
	free(dir);
}
TestSuite(partition_typed, .init = setup, .fini = teardown, .timeout = 120);

static char *gen_hsbm(const char *name, int64_t n, uint64_t seed)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_HSBM);
	g.num_nodes = n;
	g.num_classes = 4;
	g.feat_dim = 6;
	g.seed = seed;
	char *p = tu_path(dir, "%s", name);
	cr_assert_eq(burrow_gen(&g, p), 0, "%s", burrow_last_error());
	return p;
}

/* An int64 npy file of the part, *n its length (bw_free it). */
static int64_t *load_i64(const char *pdir, const char *sub, const char *type, int64_t *n)
{
	char *path = tu_path(pdir, "%s/%s.npy", sub, type);
	bw_npy h;
	void *data;
	cr_assert_eq(bw_npy_load(path, &h, &data), 0, "%s", burrow_last_error());
	cr_assert_eq(h.dtype, BURROW_DTYPE_I64, "%s", path);
	*n = bw_npy_count(&h);
	free(path);
	return data;
}

/* What the checks learn of each type across parts. */
typedef struct tmap {
	int32_t *owner;     /* [N_t] part of each input node */
	int64_t *new_of;    /* [N_t] its new id */
	int64_t *orig_of;   /* [N_t] input id of each new id */
} tmap;

typedef struct part_view {
	burrow_dataset *ds;
	const burrow_hetero *h;
	int64_t *own[BURROW_MAX_TYPES], *halo[BURROW_MAX_TYPES], *hoff[BURROW_MAX_TYPES];
	int64_t n_own[BURROW_MAX_TYPES], n_halo[BURROW_MAX_TYPES];
} part_view;

/* Input id of type t's local node l of part v. */
static int64_t orig_of_local(const part_view *v, const tmap *m, int t, int64_t l)
{
	return l < v->n_own[t] ? v->own[t][l] : m[t].orig_of[v->halo[t][l - v->n_own[t]]];
}

static int cmp_i64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* Every node of every type owned by exactly one part, ascending input ids within a part,
 * counts as the book says. */
static void check_ownership(const burrow_hetero *hin, const burrow_parts_info *pi, part_view *pv, tmap *m)
{
	const int k = pi->num_parts;
	for (int t = 0; t < hin->num_types; t++) {
		const int64_t N = hin->type_nodes[t], *bk = pi->type_offsets + (int64_t)t * (k + 1);
		m[t].owner = malloc((size_t)(N + 1) * sizeof *m[t].owner);
		m[t].new_of = malloc((size_t)(N + 1) * sizeof *m[t].new_of);
		m[t].orig_of = malloc((size_t)(N + 1) * sizeof *m[t].orig_of);
		for (int64_t v = 0; v < N; v++)
			m[t].owner[v] = -1;
		for (int i = 0; i < k; i++) {
			cr_assert_eq(pv[i].n_own[t], bk[i + 1] - bk[i], "part %d type %d: owned count against the book", i, t);
			for (int64_t l = 0; l < pv[i].n_own[t]; l++) {
				const int64_t v = pv[i].own[t][l];
				cr_assert(v >= 0 && v < N, "part %d type %d: orig id %lld out of range", i, t, (long long)v);
				cr_assert_eq(m[t].owner[v], -1, "type %d node %lld owned twice", t, (long long)v);
				cr_assert(l == 0 || v > pv[i].own[t][l - 1], "part %d type %d: orig ids not ascending", i, t);
				m[t].owner[v] = i;
				m[t].new_of[v] = bk[i] + l;
				m[t].orig_of[bk[i] + l] = v;
			}
		}
		for (int64_t v = 0; v < N; v++)
			cr_assert_neq(m[t].owner[v], -1, "type %d node %lld owned by no part", t, (long long)v);
	}
}

/* Part i's halo of each type: ascending, remote, grouped by owner as halo_offsets say. */
static void check_halo_lists(const burrow_parts_info *pi, const part_view *v, int i)
{
	const int k = pi->num_parts;
	for (int t = 0; t < pi->num_types; t++) {
		const int64_t *bk = pi->type_offsets + (int64_t)t * (k + 1);
		cr_assert_eq(v->h->type_nodes[t], v->n_own[t] + v->n_halo[t], "part %d type %d: local count", i, t);
		cr_assert_eq(pi->type_halo_sizes[(int64_t)t * k + i], v->n_halo[t]);
		for (int64_t q = 0; q < v->n_halo[t]; q++) {
			const int64_t g = v->halo[t][q];
			cr_assert(q == 0 || g > v->halo[t][q - 1], "part %d type %d: halo not ascending", i, t);
			cr_assert(g < bk[i] || g >= bk[i + 1], "part %d type %d: halo node %lld is owned", i, t, (long long)g);
		}
		for (int j = 0; j <= k; j++) {
			int64_t lb = 0;
			while (lb < v->n_halo[t] && v->halo[t][lb] < bk[j])
				lb++;
			cr_assert_eq(v->hoff[t][j], lb, "part %d type %d: halo_offsets[%d]", i, t, j);
		}
	}
}

/* Each relation of part i, mapped back through orig ids, holds exactly the input's rows of its
 * owned destinations (halo rows empty); every halo node is the source of one of them. */
static void check_relations(const burrow_hetero *hin, const part_view *v, const tmap *m, int i, int64_t *edges)
{
	bool *used[BURROW_MAX_TYPES];
	for (int t = 0; t < hin->num_types; t++)
		used[t] = calloc((size_t)v->n_halo[t] + 1, 1);
	for (int q = 0; q < hin->num_relations; q++) {
		const burrow_relation *ri = &hin->rel[q], *rp = &v->h->rel[q];
		cr_assert_str_eq(rp->name, ri->name);
		cr_assert(rp->src_type == ri->src_type && rp->dst_type == ri->dst_type);
		const int s = ri->src_type, d = ri->dst_type;
		edges[q] += rp->graph.num_edges;
		for (int64_t l = 0; l < rp->graph.num_nodes; l++) {
			const int64_t lo = rp->graph.indptr[l], deg = rp->graph.indptr[l + 1] - lo;
			if (l >= v->n_own[d]) {
				cr_assert_eq(deg, 0, "part %d relation %s: halo row %lld holds edges", i, ri->name, (long long)l);
				continue;
			}
			const int64_t vo = v->own[d][l], ilo = ri->graph.indptr[vo];
			int64_t ideg = ri->graph.indptr[vo + 1] - ilo, *a = malloc((size_t)(deg + 1) * 8),
				*b = malloc((size_t)(ideg + 1) * 8);
			for (int64_t j = 0; j < deg; j++) {
				const int64_t x = burrow_csr_index(&rp->graph, lo + j);
				a[j] = orig_of_local(v, m, s, x);
				if (x >= v->n_own[s])
					used[s][x - v->n_own[s]] = true;
			}
			for (int64_t j = 0; j < ideg; j++)
				b[j] = burrow_csr_index(&ri->graph, ilo + j);
			qsort(a, (size_t)deg, 8, cmp_i64);
			int64_t u = 0; /* the input row without repeats */
			for (int64_t j = 0; j < ideg; j++)
				if (!u || b[j] != b[u - 1])
					b[u++] = b[j];
			cr_assert_eq(deg, u, "part %d relation %s: row of %lld has %lld entries, the input %lld", i, ri->name,
				     (long long)vo, (long long)deg, (long long)u);
			cr_assert_eq(memcmp(a, b, (size_t)deg * 8), 0, "part %d relation %s: row of %lld differs", i, ri->name,
				     (long long)vo);
			free(a);
			free(b);
		}
	}
	for (int t = 0; t < hin->num_types; t++) {
		for (int64_t q = 0; q < v->n_halo[t]; q++)
			cr_assert(used[t][q], "part %d type %d: halo node %lld is nobody's source", i, t, (long long)q);
		free(used[t]);
	}
}

/* Features (owned and halo rows), labels (-1 on the halo) and splits follow their nodes. */
static void check_payload(const burrow_dataset *in, const part_view *v, const tmap *m, int i, int64_t *split_cnt)
{
	const burrow_hetero *hin = burrow_dataset_hetero(in);
	for (int t = 0; t < hin->num_types; t++) {
		burrow_type_info a, b;
		cr_assert_eq(burrow_dataset_type_info(in, t, &a), 0);
		cr_assert_eq(burrow_dataset_type_info(v->ds, t, &b), 0);
		cr_assert_eq(a.feat_dim, b.feat_dim);
		if (!a.feat_dim)
			continue;
		cr_assert_eq(a.feat_dtype, b.feat_dtype);
		const size_t rowb = (size_t)a.feat_dim * burrow_dtype_size(a.feat_dtype);
		size_t la, lb;
		char *fa = tu_read(a.features_path, &la), *fb = tu_read(b.features_path, &lb);
		for (int64_t l = 0; l < v->n_own[t] + v->n_halo[t]; l++)
			cr_assert_eq(memcmp(fb + b.features_offset + (size_t)l * rowb,
					    fa + a.features_offset + (size_t)orig_of_local(v, m, t, l) * rowb, rowb),
				     0, "part %d type %d: feature row %lld", i, t, (long long)l);
		free(fa);
		free(fb);
	}
	const int tt = hin->target_type;
	const int32_t *yin = burrow_dataset_labels(in), *yp = burrow_dataset_labels(v->ds);
	for (int64_t l = 0; yin && l < v->n_own[tt] + v->n_halo[tt]; l++)
		cr_assert_eq(yp[l], l < v->n_own[tt] ? yin[v->own[tt][l]] : -1, "part %d: label of %lld", i, (long long)l);
	for (int s = 0; s < 3; s++) {
		int64_t ni, np = 0;
		const int64_t *si = burrow_dataset_split(in, s, &ni), *sp = burrow_dataset_split(v->ds, s, &np);
		for (int64_t q = 0; q < np; q++) {
			cr_assert(sp[q] < v->n_own[tt], "part %d split %d: a halo node", i, s);
			const int64_t o = v->own[tt][sp[q]];
			bool found = false;
			for (int64_t x = 0; x < ni && !found; x++)
				found = si[x] == o;
			cr_assert(found, "part %d split %d: node %lld is not in the input's split", i, s, (long long)o);
		}
		split_cnt[s] += np;
	}
}

/* The send segment of part i for j is part j's halo segment for i, per type. */
static void check_sends(const char *parts_dir, const burrow_parts_info *pi, const part_view *pv)
{
	const int k = pi->num_parts;
	for (int i = 0; i < k; i++)
		for (int t = 0; t < pi->num_types; t++) {
			char *pdir = tu_path(parts_dir, "part-%d", i);
			int64_t ns, no;
			int64_t *ids = load_i64(pdir, "send_ids", pi->type_names[t], &ns);
			int64_t *off = load_i64(pdir, "send_offsets", pi->type_names[t], &no);
			cr_assert_eq(no, k + 1);
			for (int j = 0; j < k; j++) {
				const int64_t *ho = pv[j].hoff[t];
				const int64_t len = j == i ? 0 : ho[i + 1] - ho[i];
				cr_assert_eq(off[j + 1] - off[j], len, "part %d type %d: send count for %d", i, t, j);
				if (len)
					cr_assert_eq(memcmp(ids + off[j], pv[j].halo[t] + ho[i], (size_t)len * 8), 0);
			}
			cr_assert_eq(off[k], ns);
			bw_free(ids);
			bw_free(off);
			free(pdir);
		}
}

/* The cut over the union of the relations, symmetric, without self loops and repeats. */
static void check_cut(const burrow_hetero *hin, const tmap *m, const burrow_parts_info *pi)
{
	int64_t toff[BURROW_MAX_TYPES + 1] = {0}, cap = 0, ne = 0;
	for (int t = 0; t < hin->num_types; t++)
		toff[t + 1] = toff[t] + hin->type_nodes[t];
	for (int q = 0; q < hin->num_relations; q++)
		cap += hin->rel[q].graph.num_edges;
	int64_t *e = malloc((size_t)(cap + 1) * 2 * 8);
	int32_t *own = malloc((size_t)toff[hin->num_types] * 4);
	for (int t = 0; t < hin->num_types; t++)
		for (int64_t v = 0; v < hin->type_nodes[t]; v++)
			own[toff[t] + v] = m[t].owner[v];
	for (int q = 0; q < hin->num_relations; q++) {
		const burrow_relation *r = &hin->rel[q];
		for (int64_t v = 0; v < r->graph.num_nodes; v++)
			for (int64_t j = r->graph.indptr[v]; j < r->graph.indptr[v + 1]; j++) {
				int64_t a = toff[r->dst_type] + v, b = toff[r->src_type] + burrow_csr_index(&r->graph, j);
				if (a == b)
					continue;
				e[2 * ne] = a < b ? a : b;
				e[2 * ne + 1] = a < b ? b : a;
				ne++;
			}
	}
	int64_t *key = malloc((size_t)(ne + 1) * 8), u = 0, cut = 0;
	for (int64_t q = 0; q < ne; q++)
		key[q] = e[2 * q] * toff[hin->num_types] + e[2 * q + 1];
	qsort(key, (size_t)ne, 8, cmp_i64);
	for (int64_t q = 0; q < ne; q++)
		if (!q || key[q] != key[q - 1]) {
			u++;
			cut += own[key[q] / toff[hin->num_types]] != own[key[q] % toff[hin->num_types]];
		}
	cr_assert_eq(pi->sym_edges, u, "sym_edges %lld, recomputed %lld", (long long)pi->sym_edges, (long long)u);
	cr_assert_eq(pi->edge_cut, cut, "edge_cut %lld, recomputed %lld", (long long)pi->edge_cut, (long long)cut);
	free(e);
	free(own);
	free(key);
}

/* The whole check of parts_dir against the input at in_dir. */
static void check_typed_parts(const char *in_dir, const char *parts_dir, int k, double ufactor, unsigned balance)
{
	burrow_dataset *in;
	burrow_parts *ps;
	cr_assert_eq(burrow_dataset_open(&in, in_dir), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_parts_open(&ps, parts_dir), 0, "%s", burrow_last_error());
	const burrow_hetero *hin = burrow_dataset_hetero(in);
	const burrow_parts_info *pi = burrow_parts_get_info(ps);
	cr_assert_eq(pi->num_parts, k);
	cr_assert_eq(pi->num_types, hin->num_types);
	cr_assert_eq(pi->target_type, hin->target_type);
	part_view *pv = calloc((size_t)k, sizeof *pv);
	tmap m[BURROW_MAX_TYPES];
	for (int i = 0; i < k; i++) {
		char *pdir = tu_path(parts_dir, "part-%d", i);
		cr_assert_eq(burrow_dataset_open(&pv[i].ds, pdir), 0, "%s", burrow_last_error());
		pv[i].h = burrow_dataset_hetero(pv[i].ds);
		cr_assert_not_null(pv[i].h);
		for (int t = 0; t < hin->num_types; t++) {
			int64_t nh;
			cr_assert_str_eq(pi->type_names[t], hin->type_names[t]);
			pv[i].own[t] = load_i64(pdir, "orig_ids", hin->type_names[t], &pv[i].n_own[t]);
			pv[i].halo[t] = load_i64(pdir, "halo_ids", hin->type_names[t], &pv[i].n_halo[t]);
			pv[i].hoff[t] = load_i64(pdir, "halo_offsets", hin->type_names[t], &nh);
			cr_assert_eq(nh, k + 1);
		}
		free(pdir);
	}
	check_ownership(hin, pi, pv, m);
	int64_t edges[BURROW_MAX_RELATIONS] = {0}, split_cnt[3] = {0}, train_max = 0, nodes_max = 0, nodes = 0;
	for (int i = 0; i < k; i++) {
		check_halo_lists(pi, &pv[i], i);
		check_relations(hin, &pv[i], m, i, edges);
		check_payload(in, &pv[i], m, i, split_cnt);
		int64_t nt, own = 0;
		burrow_dataset_split(pv[i].ds, BURROW_SPLIT_TRAIN, &nt);
		for (int t = 0; t < hin->num_types; t++)
			own += pv[i].n_own[t];
		train_max = nt > train_max ? nt : train_max;
		nodes_max = own > nodes_max ? own : nodes_max;
		nodes += own;
	}
	for (int q = 0; q < hin->num_relations; q++)
		cr_assert_eq(edges[q], hin->rel[q].graph.num_edges, "relation %s: %lld edges in the parts, %lld in the input",
			     hin->rel[q].name, (long long)edges[q], (long long)hin->rel[q].graph.num_edges);
	for (int s = 0; s < 3; s++) {
		int64_t ni;
		burrow_dataset_split(in, s, &ni);
		cr_assert_eq(split_cnt[s], ni, "split %d: %lld in the parts, %lld in the input", s, (long long)split_cnt[s],
			     (long long)ni);
	}
	/* the bound the refinement holds: max part weight <= ufactor * W / K */
	if (balance & BURROW_BALANCE_TRAIN)
		cr_assert_leq((double)train_max, ufactor * (double)split_cnt[0] / k + 1e-9, "train nodes: max %lld of %lld",
			      (long long)train_max, (long long)split_cnt[0]);
	if (balance & BURROW_BALANCE_NODES)
		cr_assert_leq((double)nodes_max, ufactor * (double)nodes / k + 1e-9, "nodes: max %lld of %lld",
			      (long long)nodes_max, (long long)nodes);
	check_sends(parts_dir, pi, pv);
	check_cut(hin, m, pi);
	for (int i = 0; i < k; i++) {
		for (int t = 0; t < hin->num_types; t++) {
			bw_free(pv[i].own[t]);
			bw_free(pv[i].halo[t]);
			bw_free(pv[i].hoff[t]);
		}
		burrow_dataset_close(pv[i].ds);
	}
	for (int t = 0; t < hin->num_types; t++) {
		free(m[t].owner);
		free(m[t].new_of);
		free(m[t].orig_of);
	}
	free(pv);
	burrow_parts_close(ps);
	burrow_dataset_close(in);
}

static void partition_and_check(const char *ds, int k, unsigned balance, int64_t coarsen_to, size_t mem)
{
	char *out = tu_path(dir, "p%d-%u-%lld", k, balance, (long long)coarsen_to);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = k;
	o.balance = balance;
	o.coarsen_to = coarsen_to;
	o.mem_bytes = mem;
	o.out_dir = out;
	o.threads = 1;
	burrow_partition_stats st = {.size = sizeof st};
	cr_assert_eq(burrow_partition(ds, &o, &st), 0, "%s", burrow_last_error());
	cr_assert_eq(st.coarsened, coarsen_to > 0);
	check_typed_parts(ds, out, k, o.ufactor, balance);
	free(out);
}

Test(partition_typed, hsbm_into_2_and_3_parts)
{
	char *ds = gen_hsbm("h", 2000, 3);
	partition_and_check(ds, 2, BURROW_BALANCE_NODES | BURROW_BALANCE_TRAIN, 0, 0);
	partition_and_check(ds, 3, BURROW_BALANCE_NODES | BURROW_BALANCE_TRAIN | BURROW_BALANCE_EDGES, 0, 0);
	free(ds);
}

Test(partition_typed, coarsened_and_under_a_budget)
{
	char *ds = gen_hsbm("h", 3000, 4);
	partition_and_check(ds, 3, BURROW_BALANCE_NODES | BURROW_BALANCE_TRAIN, 300, (size_t)256 << 20);
	free(ds);
}

/* Same seed, same bytes, whatever the threads (meta.json's timings aside). */
Test(partition_typed, same_parts_whatever_the_threads)
{
	char *ds = gen_hsbm("h", 1500, 5);
	char *err = NULL;
	int rc = tu_sh(NULL, &err,
		       "cd %s && %s partition h --parts 3 --balance nodes,train --threads 1 --out a --quiet >a.txt && "
		       "%s partition h --parts 3 --balance nodes,train --threads 2 --out b --quiet >/dev/null && "
		       "diff -r -x meta.json a b && diff a/part-1/meta.json b/part-1/meta.json && "
		       "grep -q '^  paper *owned / halo:' a.txt && %s info a >/dev/null",
		       dir, tu_burrow(), tu_burrow(), tu_burrow());
	cr_assert_eq(rc, 0, "%s", err ? err : "");
	free(err);
	free(ds);
}

Test(partition_typed, failing_allocations_leave_nothing_behind)
{
	char *ds = gen_hsbm("h", 300, 6);
	char *out = tu_path(dir, "p");
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 3;
	o.balance = BURROW_BALANCE_NODES | BURROW_BALANCE_TRAIN;
	o.out_dir = out;
	o.threads = 1;
	int failures = 0;
	const size_t base = tu_mem_now();
	for (long n = 0;; n++) {
		bw_mem_fail_after(n);
		int st = burrow_partition(ds, &o, NULL);
		bw_mem_fail_after(-1);
		cr_assert_eq(tu_mem_now(), base, "allocation %ld failed: %zu bytes not freed", n, tu_mem_now() - base);
		if (st == 0)
			break;
		failures++;
		cr_assert_lt(st, 0);
		cr_assert(!tu_exists(out), "allocation %ld failed, yet the output exists", n);
		cr_assert_lt(n, 100000);
	}
	cr_assert_gt(failures, 10);
	check_typed_parts(ds, out, 3, o.ufactor, o.balance);
	free(out);
	free(ds);
}

/* Swap int64 entry q of <pdir>/<sub>/<type>.npy for v; the old value. */
static int64_t poke_i64(const char *pdir, const char *sub, const char *type, int64_t q, int64_t v)
{
	char *path = tu_path(pdir, "%s/%s.npy", sub, type);
	bw_npy h;
	int fd;
	cr_assert_eq(bw_npy_open(path, &h, &fd), 0, "%s", burrow_last_error());
	close(fd);
	fd = open(path, O_RDWR);
	cr_assert(fd >= 0, "%s", path);
	int64_t old;
	const off_t at = (off_t)(h.data_offset + q * 8);
	cr_assert_eq(pread(fd, &old, 8, at), 8);
	cr_assert_eq(pwrite(fd, &v, 8, at), 8);
	close(fd);
	free(path);
	return old;
}

/* burrow_parts_verify_typed (burrow info --verify) passes on what burrow partition writes and
 * names the file of each planted fault: a halo id out of order, an input id owned twice, a send
 * list that is not its receiver's halo, a split member that is a halo node; each undone after. */
Test(partition_typed, verify_finds_each_fault)
{
	char *ds = gen_hsbm("hv", 1500, 5), *out = tu_path(dir, "pv");
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 3;
	o.out_dir = out;
	o.threads = 1;
	cr_assert_eq(burrow_partition(ds, &o, NULL), 0, "%s", burrow_last_error());
	burrow_parts *ps;
	cr_assert_eq(burrow_parts_open(&ps, out), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_parts_verify_typed(ps), 0, "%s", burrow_last_error());
	const burrow_parts_info *pi = burrow_parts_get_info(ps);
	char *p0 = tu_path(out, "part-0"), *p1 = tu_path(out, "part-1");
	const char *paper = pi->type_names[0];
	int64_t n;
	int64_t *halo = load_i64(p0, "halo_ids", paper, &n), *orig1 = load_i64(p1, "orig_ids", paper, &n);
	int64_t *send = load_i64(p0, "send_ids", paper, &n);
	cr_assert(n >= 2);
	const struct {
		const char *pdir, *sub, *file;
		int64_t q, v;
	} faults[] = {
		{p0, "halo_ids", "halo_ids/paper", 1, halo[0]},          /* not ascending */
		{p0, "orig_ids", "orig_ids/paper", 0, orig1[0]},         /* owned by part 1 too */
		{p0, "send_ids", "send lists", 0, send[1]},              /* not part j's halo */
	};
	for (size_t f = 0; f < sizeof faults / sizeof *faults; f++) {
		const int64_t old = poke_i64(faults[f].pdir, faults[f].sub, paper, faults[f].q, faults[f].v);
		cr_expect_eq(burrow_parts_verify_typed(ps), BURROW_E_FORMAT, "fault %zu passed", f);
		cr_expect(strstr(burrow_last_error(), faults[f].file) || strstr(burrow_last_error(), "send list"),
			  "fault %zu: %s", f, burrow_last_error());
		poke_i64(faults[f].pdir, faults[f].sub, paper, faults[f].q, old);
	}
	/* a split member past the owned nodes (a halo node) */
	const int64_t own0 = pi->type_offsets[1] - pi->type_offsets[0];
	const int64_t old = poke_i64(p0, "split", "train", 0, own0);
	cr_expect_eq(burrow_parts_verify_typed(ps), BURROW_E_FORMAT);
	cr_expect(strstr(burrow_last_error(), "not an owned node"), "%s", burrow_last_error());
	poke_i64(p0, "split", "train", 0, old);
	cr_assert_eq(burrow_parts_verify_typed(ps), 0, "%s", burrow_last_error());
	bw_free(halo);
	bw_free(orig1);
	bw_free(send);
	burrow_parts_close(ps);
	free(p0);
	free(p1);
	free(out);
	free(ds);
}
