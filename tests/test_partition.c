/* test_partition.c: the partitioner, checked by invariants the test recomputes from the input:
 * every node in one part, the partition book, id round trips, rows, halos, send lists, the
 * cut, balance; the coarsening level against a reference contraction; failures and refusals. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../graph/npy.h"
#include "../partition/partition_internal.h"
#include "util.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;
static void setup(void) { dir = tu_tmpdir(); }
static void teardown(void)
{
	bw_mem_fail_after(-1);
	tu_rmrf(dir);
	free(dir);
}
TestSuite(partition, .init = setup, .fini = teardown, .timeout = 120);

/* ---------------------------------------------------------------- fixtures */

/* A directed graph with self-loops, repeated edges, isolated nodes (the last tenth), float32
 * features that encode the node id, labels (some -1) and a random split. */
static char *make_directed(const char *name, int64_t n, double avg_deg, uint64_t seed, bool with_split)
{
	char *out = tu_path(dir, "%s", name);
	burrow_csr_builder *b;
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.drop_self_loops = false;
	co.drop_duplicates = false;
	cr_assert_eq(burrow_csr_builder_open(&b, n, &co), 0);
	bw_rng r;
	bw_rng_seed(&r, seed);
	const int64_t active = n - n / 10, m = (int64_t)(avg_deg * (double)active);
	for (int64_t e = 0; e < m; e++) {
		int64_t s = (int64_t)bw_rng_below(&r, (uint64_t)active), d;
		/* some locality, so that partitions have something to find */
		if (bw_rng_uniform(&r) < 0.7)
			d = (s + 1 + (int64_t)bw_rng_below(&r, 20)) % active;
		else
			d = (int64_t)bw_rng_below(&r, (uint64_t)active);
		if (e % 97 == 0)
			d = s; /* a self-loop */
		cr_assert_eq(burrow_csr_builder_add(b, &s, &d, 1), 0);
		if (e % 89 == 0)
			cr_assert_eq(burrow_csr_builder_add(b, &s, &d, 1), 0); /* a repeat */
	}
	burrow_writer *w;
	cr_assert_eq(burrow_writer_open(&w, out, name, NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_builder(w, b, false), 0, "%s", burrow_last_error());
	burrow_csr_builder_close(b);
	const int64_t dim = 3;
	float *x = malloc((size_t)(n * dim) * sizeof *x);
	for (int64_t v = 0; v < n; v++)
		for (int64_t k = 0; k < dim; k++)
			x[v * dim + k] = (float)(v * 10 + k);
	cr_assert_eq(burrow_writer_features_begin(w, n, dim, BURROW_DTYPE_F32), 0);
	cr_assert_eq(burrow_writer_features_append(w, x, n), 0);
	cr_assert_eq(burrow_writer_features_end(w), 0);
	free(x);
	int32_t *y = malloc((size_t)n * sizeof *y);
	for (int64_t v = 0; v < n; v++)
		y[v] = v % 7 == 3 ? -1 : (int32_t)(v % 5);
	cr_assert_eq(burrow_writer_put_labels(w, y, n, 5), 0);
	free(y);
	if (with_split) {
		int64_t *ids[3];
		int64_t cnt[3] = {0, 0, 0};
		for (int s = 0; s < 3; s++)
			ids[s] = malloc((size_t)n * sizeof(int64_t));
		for (int64_t v = 0; v < n; v++) {
			int s = (int)bw_rng_below(&r, 10);
			s = s < 6 ? 0 : s < 8 ? 1 : 2;
			ids[s][cnt[s]++] = v;
		}
		for (int s = 0; s < 3; s++) {
			cr_assert_eq(burrow_writer_put_split(w, s, ids[s], cnt[s]), 0);
			free(ids[s]);
		}
	}
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	return out;
}

static char *make_csbm(const char *name, int64_t n, uint64_t seed)
{
	char *out = tu_path(dir, "%s", name);
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = n;
	g.feat_dim = 4;
	g.seed = seed;
	cr_assert_eq(burrow_gen(&g, out), 0, "%s", burrow_last_error());
	return out;
}

/* ---------------------------------------------------------------- the invariant checker */

typedef struct input {
	burrow_dataset *ds;
	const burrow_csr *g;
	int64_t n;
	float *feat;          /* [n * dim] or NULL */
	int64_t dim;
} input;

static void input_open(input *in, const char *ds_dir)
{
	memset(in, 0, sizeof *in);
	cr_assert_eq(burrow_dataset_open(&in->ds, ds_dir), 0, "%s", burrow_last_error());
	in->g = burrow_dataset_graph(in->ds);
	in->n = in->g->num_nodes;
	const burrow_dataset_info *di = burrow_dataset_get_info(in->ds);
	if (di->feat_dim) {
		bw_npy h;
		void *data;
		cr_assert_eq(bw_npy_load(burrow_dataset_features_path(in->ds), &h, &data), 0);
		in->feat = data;
		in->dim = di->feat_dim;
	}
}

static void input_close(input *in)
{
	bw_free(in->feat);
	burrow_dataset_close(in->ds);
}

/* The cut of the symmetric graph without self-loops, by brute force over canonical pairs. */
static int64_t ref_cut(const burrow_csr *g, const int32_t *part, int64_t *pairs_out)
{
	int64_t cap = g->num_edges + 1, np = 0, cut = 0;
	int64_t *key = malloc((size_t)cap * sizeof *key);
	for (int64_t v = 0; v < g->num_nodes; v++)
		for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) {
			int64_t u = burrow_csr_index(g, j);
			if (u != v)
				key[np++] = BW_MIN(u, v) * g->num_nodes + BW_MAX(u, v);
		}
	qsort(key, (size_t)np, sizeof *key, bw_cmp_i64);
	int64_t distinct = 0;
	for (int64_t i = 0; i < np; i++) {
		if (i && key[i] == key[i - 1])
			continue;
		distinct++;
		cut += part[key[i] / g->num_nodes] != part[key[i] % g->num_nodes];
	}
	free(key);
	if (pairs_out)
		*pairs_out = distinct;
	return cut;
}

typedef struct check {
	unsigned balance;       /* constraints whose bound is checked; 0 = none */
	double ufactor;
	int32_t *part;          /* out: part of each input node (caller frees) */
} check;

static void check_parts(const char *ds_dir, const char *parts_dir, const burrow_partition_stats *st, check *ck)
{
	input in;
	input_open(&in, ds_dir);
	const int64_t n = in.n;
	const burrow_csr *g = in.g;
	burrow_parts *ps;
	cr_assert_eq(burrow_parts_open(&ps, parts_dir), 0, "%s", burrow_last_error());
	const burrow_parts_info *pi = burrow_parts_get_info(ps);
	const int k = pi->num_parts;
	cr_assert_eq(pi->num_nodes, n);
	cr_assert_eq(pi->num_edges, g->num_edges);
	/* the partition book covers [0, N) in order */
	cr_assert_eq(pi->node_offsets[0], 0);
	cr_assert_eq(pi->node_offsets[k], n);
	for (int i = 0; i < k; i++)
		cr_assert_leq(pi->node_offsets[i], pi->node_offsets[i + 1]);

	int32_t *part = malloc((size_t)(n ? n : 1) * sizeof *part);
	int64_t *new_of = malloc((size_t)(n ? n : 1) * sizeof *new_of), *orig_of = malloc((size_t)(n ? n : 1) * sizeof *orig_of);
	for (int64_t v = 0; v < n; v++)
		part[v] = -1;
	burrow_part **pp = calloc((size_t)k, sizeof *pp);
	for (int i = 0; i < k; i++) {
		cr_assert_eq(burrow_part_open(&pp[i], ps, i), 0, "%s", burrow_last_error());
		const burrow_part_info *p = burrow_part_get_info(pp[i]);
		cr_assert_eq(p->num_owned, pi->node_offsets[i + 1] - pi->node_offsets[i]);
		cr_assert_eq(p->first_id, pi->node_offsets[i]);
		cr_assert_eq(burrow_dataset_verify(burrow_part_dataset(pp[i])), 0, "%s", burrow_last_error());
		for (int64_t l = 0; l < p->num_owned; l++) {
			int64_t o = p->orig_ids[l];
			cr_assert(o >= 0 && o < n, "part %d: orig id %lld out of range", i, (long long)o);
			cr_assert_eq(part[o], -1, "node %lld is in parts %d and %d", (long long)o, part[o], i);
			part[o] = i;
			new_of[o] = p->first_id + l;
			orig_of[p->first_id + l] = o;
		}
		/* owned nodes in new-id order are in ascending input order */
		for (int64_t l = 1; l < p->num_owned; l++)
			cr_assert_lt(p->orig_ids[l - 1], p->orig_ids[l]);
	}
	/* every node in exactly one part, and the ids round-trip */
	for (int64_t v = 0; v < n; v++) {
		cr_assert_neq(part[v], -1, "node %lld is in no part", (long long)v);
		cr_assert_eq(orig_of[new_of[v]], v);
	}
	for (int64_t gid = 0; gid < n; gid++) {
		cr_assert_eq(new_of[orig_of[gid]], gid);
		cr_assert_eq(burrow_parts_owner(ps, gid), part[orig_of[gid]]);
	}

	const int32_t *lab = burrow_dataset_labels(in.ds);
	int64_t halo_total = 0;
	uint8_t *mark = calloc((size_t)n + 1, 1);
	for (int i = 0; i < k; i++) {
		const burrow_part_info *p = burrow_part_get_info(pp[i]);
		const burrow_dataset *pd = burrow_part_dataset(pp[i]);
		const burrow_csr *lg = burrow_dataset_graph(pd);
		const int64_t no = p->num_owned, nh = p->num_halo;
		cr_assert_eq(lg->num_nodes, no + nh);
		cr_assert_eq(pi->halo_sizes[i], nh);
		halo_total += nh;
		/* the halo is exactly the remote neighbors of the owned rows, ascending (so grouped
		 * by owner), each owner's segment where halo_offsets says */
		int64_t *want = malloc((size_t)(g->num_edges + 1) * sizeof *want), nw = 0;
		for (int64_t l = 0; l < no; l++) {
			int64_t v = p->orig_ids[l];
			for (int64_t j = g->indptr[v]; j < g->indptr[v + 1]; j++) {
				int64_t u = burrow_csr_index(g, j);
				if (part[u] != i && !mark[u]) {
					mark[u] = 1;
					want[nw++] = new_of[u];
				}
			}
		}
		qsort(want, (size_t)nw, sizeof *want, bw_cmp_i64);
		cr_assert_eq(nh, nw, "part %d: halo has %lld nodes, its remote neighbors are %lld", i, (long long)nh,
			     (long long)nw);
		for (int64_t q = 0; q < nw; q++) {
			cr_assert_eq(p->halo_ids[q], want[q], "part %d: halo entry %lld", i, (long long)q);
			mark[orig_of[want[q]]] = 0;
		}
		free(want);
		for (int j = 0; j < k; j++)
			for (int64_t q = p->halo_offsets[j]; q < p->halo_offsets[j + 1]; q++)
				cr_assert_eq(part[orig_of[p->halo_ids[q]]], j);
		cr_assert_eq(p->halo_offsets[i + 1], p->halo_offsets[i]);
		/* each owned row is the input row, relabelled; halo rows are empty */
		cr_assert_eq(burrow_csr_check(lg, false), 0, "%s", burrow_last_error());
		int64_t *a = malloc((size_t)(g->num_edges + 1) * sizeof *a), *b = malloc((size_t)(g->num_edges + 1) * sizeof *b);
		for (int64_t l = 0; l < no; l++) {
			int64_t v = p->orig_ids[l], d = g->indptr[v + 1] - g->indptr[v];
			cr_assert_eq(lg->indptr[l + 1] - lg->indptr[l], d, "part %d row %lld: length", i, (long long)l);
			for (int64_t q = 0; q < d; q++) {
				a[q] = burrow_csr_index(g, g->indptr[v] + q);
				int64_t loc = burrow_csr_index(lg, lg->indptr[l] + q);
				cr_assert(loc >= 0 && loc < no + nh);
				b[q] = loc < no ? p->orig_ids[loc] : orig_of[p->halo_ids[loc - no]];
			}
			qsort(a, (size_t)d, sizeof *a, bw_cmp_i64);
			qsort(b, (size_t)d, sizeof *b, bw_cmp_i64);
			cr_assert(memcmp(a, b, (size_t)d * sizeof *a) == 0, "part %d: row of node %lld differs", i, (long long)v);
		}
		for (int64_t l = no; l < no + nh; l++)
			cr_assert_eq(lg->indptr[l + 1], lg->indptr[l]);
		free(a);
		free(b);
		/* labels, features and splits follow their nodes */
		const int32_t *pl = burrow_dataset_labels(pd);
		for (int64_t l = 0; lab && l < no + nh; l++)
			cr_assert_eq(pl[l], l < no ? lab[p->orig_ids[l]] : -1);
		if (in.feat) {
			bw_npy h;
			void *data;
			cr_assert_eq(bw_npy_load(burrow_dataset_features_path(pd), &h, &data), 0);
			const float *pf = data;
			for (int64_t l = 0; l < no + nh; l++) {
				int64_t o = l < no ? p->orig_ids[l] : orig_of[p->halo_ids[l - no]];
				cr_assert(memcmp(pf + l * in.dim, in.feat + o * in.dim, (size_t)in.dim * sizeof(float)) == 0,
					  "part %d: features of local %lld", i, (long long)l);
			}
			bw_free(data);
		}
		for (int s = 0; s < 3; s++) {
			int64_t cnt, pcnt, k2 = 0;
			const int64_t *ids = burrow_dataset_split(in.ds, s, &cnt), *pids = burrow_dataset_split(pd, s, &pcnt);
			for (int64_t q = 0; q < cnt; q++)
				k2 += part[ids[q]] == i;
			cr_assert_eq(pcnt, k2, "part %d split %d", i, s);
			for (int64_t q = 0; q < pcnt; q++) {
				cr_assert(pids[q] >= 0 && pids[q] < no);
				cr_assert_eq(part[p->orig_ids[pids[q]]], i);
				if (q)
					cr_assert_lt(pids[q - 1], pids[q]);
			}
		}
	}
	free(mark);
	/* send lists: i's segment for j is j's halo segment for i, element by element */
	for (int i = 0; i < k; i++) {
		const burrow_part_info *p = burrow_part_get_info(pp[i]);
		cr_assert_eq(p->send_offsets[i + 1], p->send_offsets[i]);
		for (int j = 0; j < k; j++) {
			if (j == i)
				continue;
			const burrow_part_info *q = burrow_part_get_info(pp[j]);
			int64_t len = p->send_offsets[j + 1] - p->send_offsets[j];
			cr_assert_eq(len, q->halo_offsets[i + 1] - q->halo_offsets[i], "send %d -> %d: length", i, j);
			for (int64_t x = 0; x < len; x++)
				cr_assert_eq(p->send_ids[p->send_offsets[j] + x], q->halo_ids[q->halo_offsets[i] + x],
					     "send %d -> %d: entry %lld", i, j, (long long)x);
		}
	}
	/* the reported cut is the cut */
	int64_t pairs, cut = ref_cut(g, part, &pairs);
	cr_assert_eq(st->edge_cut, cut, "reported cut %lld, recomputed %lld", (long long)st->edge_cut, (long long)cut);
	cr_assert_eq(pi->edge_cut, cut);
	cr_assert_eq(st->sym_edges, pairs);
	cr_assert_eq(st->halo_total, halo_total);
	cr_assert_eq(st->num_parts, k);
	/* meta.json records the statistics: burrow_parts_get_info reads back what was measured */
	cr_assert_eq(pi->sym_edges, pairs);
	cr_assert_eq(pi->halo_total, halo_total);
	cr_assert_float_eq(pi->cut_fraction, st->cut_fraction, 1e-9);
	cr_assert_float_eq(pi->imbalance_nodes, st->imbalance_nodes, 1e-9);
	cr_assert_float_eq(pi->imbalance_edges, st->imbalance_edges, 1e-9);
	cr_assert_float_eq(pi->imbalance_train, st->imbalance_train > 0 ? st->imbalance_train : -1, 1e-9);
	cr_assert_float_eq(pi->replication, st->replication, 1e-9);
	cr_assert(!strcmp(pi->method, "metis") || !strcmp(pi->method, "random"), "%s", pi->method);
	cr_assert_str_eq(pi->dataset_name, burrow_dataset_get_info(in.ds)->name);
	cr_assert(pi->send_sizes && pi->part_edges);
	for (int i = 0; i < k; i++) {
		const burrow_part_info *p = burrow_part_get_info(pp[i]);
		cr_assert_eq(pi->send_sizes[i], p->num_send, "part %d", i);
		cr_assert_eq(pi->part_edges[i], burrow_dataset_graph(burrow_part_dataset(pp[i]))->num_edges, "part %d", i);
	}
	/* balance, recomputed, per constraint */
	int64_t ntrain;
	const int64_t *train = burrow_dataset_split(in.ds, BURROW_SPLIT_TRAIN, &ntrain);
	const unsigned kinds[3] = {BURROW_BALANCE_NODES, BURROW_BALANCE_TRAIN, BURROW_BALANCE_EDGES};
	const double reported[3] = {st->imbalance_nodes, st->imbalance_train, st->imbalance_edges};
	for (int c = 0; c < 3; c++) {
		int64_t *w = calloc((size_t)k, sizeof *w), total = 0, mx = 0;
		if (kinds[c] == BURROW_BALANCE_TRAIN) {
			for (int64_t q = 0; q < ntrain; q++)
				w[part[train[q]]]++;
			total = ntrain;
		} else {
			for (int64_t v = 0; v < n; v++) {
				int64_t x = kinds[c] == BURROW_BALANCE_NODES ? 1 : g->indptr[v + 1] - g->indptr[v];
				w[part[v]] += x;
				total += x;
			}
		}
		for (int i = 0; i < k; i++)
			mx = BW_MAX(mx, w[i]);
		double imb = total ? (double)mx * k / (double)total : 0;
		cr_assert_float_eq(reported[c], imb, 1e-9, "constraint %d: reported %g, recomputed %g", c, reported[c], imb);
		/* the bound checked: max part weight <= ufactor * total / K, exactly as METIS states it */
		if (ck->balance & kinds[c])
			cr_assert_leq((double)mx, ck->ufactor * (double)total / k + 1e-9,
				      "constraint %d: part weight %lld over the bound %.3f * %lld / %d", c, (long long)mx,
				      ck->ufactor, (long long)total, k);
		free(w);
	}
	for (int i = 0; i < k; i++)
		burrow_part_close(pp[i]);
	free(pp);
	burrow_parts_close(ps);
	free(new_of);
	free(orig_of);
	input_close(&in);
	ck->part = part;
}

/* Partition ds_dir with o into <dir>/<name>, check everything, return the parts (caller frees). */
static int32_t *run_and_check(const char *ds_dir, const char *name, burrow_partition_opts *o, bool check_balance,
			      burrow_partition_stats *st_out)
{
	char *out = tu_path(dir, "%s", name);
	burrow_partition_stats st = {.size = sizeof st};
	o->out_dir = out;
	cr_assert_eq(burrow_partition(ds_dir, o, &st), 0, "%s", burrow_last_error());
	check ck = {.balance = check_balance ? o->balance : 0, .ufactor = o->ufactor};
	check_parts(ds_dir, out, &st, &ck);
	if (st_out)
		*st_out = st;
	free(out);
	return ck.part;
}

/* ---------------------------------------------------------------- METIS, directly */

Test(partition, metis_symmetric_graph_k4)
{
	char *ds = make_csbm("csbm", 3000, 1);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 4;
	burrow_partition_stats st = {.size = sizeof st};
	int32_t *part = run_and_check(ds, "p4", &o, true, &st);
	cr_assert(!st.coarsened);
	cr_assert_eq(st.coarse_nodes, 3000);
	/* METIS finds structure a random split does not: compare with the random method */
	burrow_partition_opts r = o;
	r.method = BURROW_PART_RANDOM;
	burrow_partition_stats rs = {.size = sizeof rs};
	int32_t *rpart = run_and_check(ds, "r4", &r, false, &rs);
	cr_assert_lt(st.edge_cut * 2, rs.edge_cut, "metis cut %lld, random cut %lld", (long long)st.edge_cut,
		     (long long)rs.edge_cut);
	free(part);
	free(rpart);
	free(ds);
}

Test(partition, metis_directed_graph_three_constraints)
{
	char *ds = make_directed("dir", 2500, 4, 7, true);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 3;
	o.balance = BURROW_BALANCE_NODES | BURROW_BALANCE_TRAIN | BURROW_BALANCE_EDGES;
	o.ufactor = 1.10;
	free(run_and_check(ds, "p3", &o, true, NULL));
	free(ds);
}

Test(partition, one_part_and_random_method)
{
	char *ds = make_directed("dir", 1200, 3, 3, true);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 1;
	burrow_partition_stats st = {.size = sizeof st};
	free(run_and_check(ds, "p1", &o, true, &st));
	cr_assert_eq(st.edge_cut, 0);
	cr_assert_eq(st.halo_total, 0);
	o.num_parts = 5;
	o.method = BURROW_PART_RANDOM;
	free(run_and_check(ds, "r5", &o, false, &st));
	/* the random method cuts a permutation into equal ranges: node counts differ by one at most */
	cr_assert_leq(st.imbalance_nodes * 1200 / 5, 240 + 1e-9);
	free(ds);
}

/* ---------------------------------------------------------------- the coarsening path */

Test(partition, coarsened_symmetric_and_directed)
{
	char *ds = make_csbm("csbm", 4000, 2);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 4;
	o.coarsen_to = 400;
	burrow_partition_stats st = {.size = sizeof st};
	free(run_and_check(ds, "c4", &o, true, &st));
	cr_assert(st.coarsened);
	cr_assert_geq(st.coarsen_levels, 1);
	cr_assert_leq(st.coarse_nodes, 4000);
	char *dd = make_directed("dir", 3000, 5, 11, true);
	o.num_parts = 3;
	o.balance = BURROW_BALANCE_NODES | BURROW_BALANCE_TRAIN;
	o.coarsen_to = 300;
	free(run_and_check(dd, "c3", &o, true, &st));
	cr_assert(st.coarsened);
	free(dd);
	free(ds);
}

Test(partition, same_parts_whatever_the_threads)
{
	char *ds = make_directed("dir", 3000, 5, 5, true);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 4;
	o.coarsen_to = 300;
	o.threads = 1;
	int32_t *a = run_and_check(ds, "t1", &o, true, NULL);
	o.threads = 2;
	int32_t *b = run_and_check(ds, "t2", &o, true, NULL);
	cr_assert(memcmp(a, b, 3000 * sizeof *a) == 0, "the parts depend on the number of threads");
	free(a);
	free(b);
	free(ds);
}

/* The coarse graph of one level against a contraction computed here from the cluster map. */
static void check_level(const burrow_csr *in, const bw_pgraph *g, const bw_coarsen_opts *co, bool matching)
{
	bw_level lv;
	cr_assert_eq(bw_coarsen_level(g, co, &lv), 0, "%s", burrow_last_error());
	const int64_t n = g->n, nc = lv.g.n;
	int64_t *members = calloc((size_t)nc + 1, sizeof *members), *cw = calloc((size_t)nc + 1, sizeof *cw);
	for (int64_t v = 0; v < n; v++) {
		int64_t d = 0;
		for (int64_t j = in->indptr[v]; j < in->indptr[v + 1]; j++)
			d += burrow_csr_index(in, j) != v;
		int32_t c = lv.cmap[v];
		if (c < 0) {
			cr_assert_eq(d, 0, "node %lld has neighbors but was left out", (long long)v);
			continue;
		}
		cr_assert(c < nc);
		members[c]++;
		cw[c] += bw_pg_vw(g, v, 0);
	}
	for (int64_t c = 0; c < nc; c++) {
		cr_assert_gt(members[c], 0, "coarse node %lld is empty", (long long)c);
		cr_assert_eq(lv.g.vwgt[c], cw[c]);
		if (matching)
			cr_assert_leq(members[c], 2);
		if (members[c] > 1)
			cr_assert_leq(cw[c], co->maxw[0]);
	}
	/* reference coarse edges: canonical coarse pairs of every fine entry, with multiplicity */
	int64_t *key = malloc((size_t)(in->num_edges + 1) * sizeof *key), nk = 0;
	for (int64_t v = 0; v < n; v++)
		for (int64_t j = in->indptr[v]; j < in->indptr[v + 1]; j++) {
			int64_t u = burrow_csr_index(in, j);
			if (u == v || lv.cmap[u] == lv.cmap[v])
				continue;
			key[nk++] = (int64_t)lv.cmap[v] * nc + lv.cmap[u];
		}
	qsort(key, (size_t)nk, sizeof *key, bw_cmp_i64);
	/* every stored coarse edge has the reference weight; the stored ones are exactly those at
	 * or above the lightest stored weight (the sparsification threshold) */
	int32_t tmin = INT32_MAX;
	for (int64_t e = 0; e < lv.g.m; e++)
		tmin = BW_MIN(tmin, lv.adjwgt[e]);
	int64_t kept = 0;
	for (int64_t i = 0; i < nk;) {
		int64_t x = i;
		while (x < nk && key[x] == key[i])
			x++;
		const int64_t a = key[i] / nc, b = key[i] % nc, w = x - i;
		int64_t found = -1;
		for (int64_t e = lv.g.indptr[a]; e < lv.g.indptr[a + 1]; e++)
			if (lv.indices[e] == b)
				found = lv.adjwgt[e];
		if (w >= tmin) {
			cr_assert_eq(found, w, "coarse edge %lld-%lld: weight %lld, expected %lld", (long long)a, (long long)b,
				     (long long)found, (long long)w);
			kept++;
		} else {
			cr_assert_eq(found, -1, "coarse edge %lld-%lld of weight %lld kept below the threshold %d",
				     (long long)a, (long long)b, (long long)w, tmin);
		}
		i = x;
	}
	cr_assert_eq(kept, lv.g.m);
	if (co->max_entries)
		cr_assert_leq(lv.g.m, co->max_entries);
	free(key);
	free(members);
	free(cw);
	bw_level_free(&lv);
}

Test(partition, coarsening_level_matches_reference_contraction)
{
	char *ds = make_csbm("csbm", 2000, 3);
	burrow_dataset *d;
	cr_assert_eq(burrow_dataset_open(&d, ds), 0);
	const burrow_csr *in = burrow_dataset_graph(d);
	bw_pgraph g = {.n = in->num_nodes, .m = in->num_edges, .indptr = in->indptr, .indices = in->indices,
		       .width = in->index_width, .ncon = 1, .con_kind = {BURROW_BALANCE_NODES}, .mapped = true,
		       .ptr_mapped = true};
	bw_coarsen_opts co = {.maxw = {8}, .passes = 5, .seed = 1, .buf_bytes = 1 << 12};
	co.match = true;
	check_level(in, &g, &co, true); /* matching, many gather passes through a small buffer */
	co.match = false;
	co.ties = true;
	co.maxw[0] = 40;
	check_level(in, &g, &co, false); /* label propagation */
	co.max_entries = in->num_edges / 8;
	check_level(in, &g, &co, false); /* sparsified to fit */
	burrow_dataset_close(d);
	free(ds);
}

/* On R-MAT graphs (half the nodes isolated, the rest around hubs) each coarse node mixes
 * nodes a good partition puts apart, so METIS's partition of the coarse graph is poor; the
 * refinement on the way back must recover, or the coarsened cut ends far above the direct one. */
/* An R-MAT dataset of 2^scale nodes, edge factor 8, in <dir>/rmat (caller frees the path). */
static char *make_rmat(int scale)
{
	char *ds = tu_path(dir, "rmat");
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_RMAT);
	g.scale = scale;
	g.edge_factor = 8;
	g.feat_dim = 1;
	g.num_classes = 2;
	cr_assert_eq(burrow_gen(&g, ds), 0, "%s", burrow_last_error());
	return ds;
}

Test(partition, coarsened_cut_close_to_direct_on_rmat)
{
	char *ds = make_rmat(13);
	for (int k = 4; k <= 8; k += 4) {
		burrow_partition_opts o;
		burrow_partition_defaults(&o);
		o.num_parts = k;
		burrow_partition_stats direct = {.size = sizeof direct}, coarse = {.size = sizeof coarse};
		free(run_and_check(ds, k == 4 ? "d4" : "d8", &o, true, &direct));
		o.coarsen_to = 400;
		free(run_and_check(ds, k == 4 ? "c4" : "c8", &o, true, &coarse));
		cr_assert(coarse.coarsened && !direct.coarsened);
		cr_assert_leq((double)coarse.edge_cut, 1.2 * (double)direct.edge_cut,
			      "K=%d: coarsened cut %lld, direct %lld", k, (long long)coarse.edge_cut,
			      (long long)direct.edge_cut);
	}
	free(ds);
}

/* Several constraints on a skewed graph: METIS and the fillers can leave every part with
 * room in nodes full in edges and the reverse; refinement must still end within every
 * bound (it did not, by a few edges, before nodes without edges could move to the part with
 * the fewest nodes). check_parts recomputes each constraint's imbalance. */
Test(partition, several_constraints_end_within_their_bounds_on_rmat)
{
	char *ds = make_rmat(14);
	for (int k = 4; k <= 8; k += 4) {
		burrow_partition_opts o;
		burrow_partition_defaults(&o);
		o.num_parts = k;
		o.balance = BURROW_BALANCE_NODES | BURROW_BALANCE_EDGES;
		free(run_and_check(ds, k == 4 ? "e4" : "e8", &o, true, NULL));
	}
	free(ds);
}

/* An in-memory weighted graph for bw_refine, as a coarse level looks. */
typedef struct wgraph {
	bw_pgraph g;
	int64_t *indptr;
	int32_t *indices, *adjwgt;
	int64_t *vwgt;
} wgraph;

/* Symmetric, from an edge list (u[i], v[i], w[i]); vertex weights vw [n * ncon], copied. */
static void wgraph_make(wgraph *wg, int64_t n, int64_t m, const int64_t *u, const int64_t *v, const int32_t *w,
			int ncon, const int64_t *vw)
{
	wg->indptr = calloc((size_t)n + 1, sizeof *wg->indptr);
	wg->indices = malloc((size_t)(2 * m + 1) * sizeof *wg->indices);
	wg->adjwgt = malloc((size_t)(2 * m + 1) * sizeof *wg->adjwgt);
	wg->vwgt = malloc((size_t)(n * ncon) * sizeof *wg->vwgt);
	memcpy(wg->vwgt, vw, (size_t)(n * ncon) * sizeof *vw);
	for (int64_t i = 0; i < m; i++) {
		wg->indptr[u[i] + 1]++;
		wg->indptr[v[i] + 1]++;
	}
	for (int64_t x = 0; x < n; x++)
		wg->indptr[x + 1] += wg->indptr[x];
	int64_t *cur = malloc((size_t)n * sizeof *cur);
	memcpy(cur, wg->indptr, (size_t)n * sizeof *cur);
	for (int64_t i = 0; i < m; i++) {
		wg->indices[cur[u[i]]] = (int32_t)v[i];
		wg->adjwgt[cur[u[i]]++] = w[i];
		wg->indices[cur[v[i]]] = (int32_t)u[i];
		wg->adjwgt[cur[v[i]]++] = w[i];
	}
	free(cur);
	wg->g = (bw_pgraph){.n = n, .m = 2 * m, .indptr = wg->indptr, .indices = wg->indices, .width = 4,
			    .adjwgt = wg->adjwgt, .ncon = ncon, .vwgt = wg->vwgt};
	for (int c = 0; c < ncon; c++)
		wg->g.con_kind[c] = BURROW_BALANCE_NODES;
}

static void wgraph_free(wgraph *wg)
{
	free(wg->indptr);
	free(wg->indices);
	free(wg->adjwgt);
	free(wg->vwgt);
}

/* Weighted cut and part weights by brute force over the edge list. */
static int64_t wcut(int64_t m, const int64_t *u, const int64_t *v, const int32_t *w, const int32_t *part)
{
	int64_t cut = 0;
	for (int64_t i = 0; i < m; i++)
		cut += part[u[i]] != part[v[i]] ? w[i] : 0;
	return cut;
}

static void check_weights(const wgraph *wg, const int32_t *part, int k, const int64_t *pw, const double *maxw)
{
	const int ncon = wg->g.ncon;
	int64_t *ref = calloc((size_t)(k * ncon), sizeof *ref);
	for (int64_t x = 0; x < wg->g.n; x++)
		for (int c = 0; c < ncon; c++)
			ref[part[x] * ncon + c] += wg->vwgt[x * ncon + c];
	for (int i = 0; i < k * ncon; i++) {
		cr_assert_eq(pw[i], ref[i], "part weights kept current");
		cr_assert_leq((double)ref[i], maxw[i % ncon], "part %d over its bound in constraint %d", i / ncon,
			      i % ncon);
	}
	free(ref);
}

/* Two cliques of four, each split 3 + 1 across two full parts: no single move fits, so plain
 * refinement is stuck at a cut of 6; a relaxed round trades the two strays and cuts nothing. */
Test(partition, relaxed_round_trades_nodes_between_full_parts)
{
	int64_t u[12], v[12], vw[8];
	int32_t w[12];
	int m = 0;
	for (int c = 0; c < 2; c++)
		for (int a = 0; a < 4; a++)
			for (int b = a + 1; b < 4; b++) {
				u[m] = 4 * c + a;
				v[m] = 4 * c + b;
				w[m++] = 1;
			}
	for (int x = 0; x < 8; x++)
		vw[x] = 1;
	wgraph wg;
	wgraph_make(&wg, 8, m, u, v, w, 1, vw);
	const double maxw[1] = {4.0};
	for (int rounds = 0; rounds <= 1; rounds++) {
		int32_t part[8] = {0, 0, 0, 1, 0, 1, 1, 1};
		int64_t pw[2] = {4, 4}, moved;
		cr_assert_eq(bw_refine(&wg.g, part, 2, pw, maxw, 4, rounds, 1, 1, &moved), 0);
		check_weights(&wg, part, 2, pw, maxw);
		cr_assert_eq(wcut(m, u, v, w, part), rounds ? 0 : 6, "rounds %d: cut %lld", rounds,
			     (long long)wcut(m, u, v, w, part));
	}
	wgraph_free(&wg);
}

/* On random weighted graphs with one and two constraints: rounds never leave the cut above
 * what plain refinement reaches, never leave a part over its bound, keep the part weights
 * current, and do not depend on the number of threads. */
Test(partition, relaxed_rounds_never_lose)
{
	const int64_t n = 3000, m = 12000;
	int64_t *u = malloc(m * sizeof *u), *v = malloc(m * sizeof *v), *vw = malloc(2 * n * sizeof *vw);
	int32_t *w = malloc(m * sizeof *w), *p0 = malloc(n * sizeof *p0), *p1 = malloc(n * sizeof *p1),
		*p2 = malloc(n * sizeof *p2);
	for (int trial = 0; trial < 4; trial++) {
		bw_rng r;
		bw_rng_seed(&r, bw_key(99, (uint64_t)trial));
		const int ncon = 1 + trial % 2, k = 3 + trial;
		for (int64_t i = 0; i < m; i++) {
			u[i] = (int64_t)bw_rng_below(&r, (uint64_t)n);
			/* mostly near u, so that there is structure to find; hubs among the rest */
			v[i] = bw_rng_uniform(&r) < 0.6 ? (u[i] + 1 + (int64_t)bw_rng_below(&r, 30)) % n
							 : (int64_t)bw_rng_below(&r, 1 + (uint64_t)bw_rng_below(&r, (uint64_t)n));
			if (v[i] == u[i])
				v[i] = (u[i] + 1) % n;
			w[i] = 1 + (int32_t)bw_rng_below(&r, 5);
		}
		int64_t total[2] = {0, 0};
		for (int64_t x = 0; x < n * ncon; x++) {
			vw[x] = 1 + (int64_t)bw_rng_below(&r, x % ncon ? 9 : 3);
			total[x % ncon] += vw[x];
		}
		wgraph wg;
		wgraph_make(&wg, n, m, u, v, w, ncon, vw);
		double maxw[2];
		for (int c = 0; c < ncon; c++)
			maxw[c] = 1.05 * (double)total[c] / k;
		/* a balanced start: round robin */
		int32_t *parts[3] = {p0, p1, p2};
		int64_t pws[3][16];
		for (int run = 0; run < 3; run++) {
			memset(pws[run], 0, sizeof pws[run]);
			for (int64_t x = 0; x < n; x++) {
				parts[run][x] = (int32_t)(x % k);
				for (int c = 0; c < ncon; c++)
					pws[run][(x % k) * ncon + c] += vw[x * ncon + c];
			}
			int64_t moved;
			cr_assert_eq(bw_refine(&wg.g, parts[run], k, pws[run], maxw, 8, run ? 8 : 0, 5, run == 2 ? 1 : 2,
					       &moved),
				     0);
			check_weights(&wg, parts[run], k, pws[run], maxw);
		}
		const int64_t plain = wcut(m, u, v, w, p0), relaxed = wcut(m, u, v, w, p1);
		cr_assert_leq(relaxed, plain, "trial %d: rounds raised the cut from %lld to %lld", trial,
			      (long long)plain, (long long)relaxed);
		cr_assert(memcmp(p1, p2, (size_t)n * sizeof *p1) == 0, "trial %d: the result depends on the threads",
			  trial);
		wgraph_free(&wg);
	}
	free(u);
	free(v);
	free(vw);
	free(w);
	free(p0);
	free(p1);
	free(p2);
}

/* ---------------------------------------------------------------- failures and refusals */

/* A balance bound METIS would refuse (at or below 1) is an error naming the option, and
 * nothing is printed (METIS prints its reason to stdout: the call must not reach it);
 * METIS's own codes map to BURROW_E_METIS with their names. */
Test(partition, metis_failure_is_a_clear_error)
{
	int32_t xadj[] = {0, 1, 2, 3, 4}, adj[] = {1, 0, 3, 2}, part[4];
	const float ubs[] = {0.5f, 1.0f};
	int64_t obj;
	FILE *cap = tmpfile();
	cr_assert(cap);
	fflush(stdout);
	const int saved = dup(STDOUT_FILENO);
	cr_assert(saved >= 0 && dup2(fileno(cap), STDOUT_FILENO) >= 0);
	int st[2];
	char msg[2][256];
	for (int i = 0; i < 2; i++) {
		st[i] = bw_metis_call(4, 1, xadj, adj, NULL, NULL, 2, &ubs[i], 0, part, &obj);
		snprintf(msg[i], sizeof msg[i], "%s", burrow_last_error());
	}
	fflush(stdout);
	dup2(saved, STDOUT_FILENO);
	close(saved);
	struct stat sb;
	cr_assert_eq(fstat(fileno(cap), &sb), 0);
	const long printed = (long)sb.st_size;
	fclose(cap);
	for (int i = 0; i < 2; i++) {
		cr_assert_eq(st[i], BURROW_E_INVAL, "bound %g: status %d", (double)ubs[i], st[i]);
		cr_assert(strstr(msg[i], "ufactor must exceed 1"), "message: %s", msg[i]);
	}
	cr_assert_eq(printed, 0, "the refused call printed %ld bytes to stdout", printed);
	cr_assert_eq(bw_metis_status(-2, "x"), BURROW_E_METIS); /* METIS_ERROR_INPUT */
	cr_assert(strstr(burrow_last_error(), "METIS_ERROR_INPUT"), "message: %s", burrow_last_error());
	cr_assert_eq(bw_metis_status(1, "x"), 0); /* METIS_OK is 1 */
	cr_assert_eq(bw_metis_status(-3, "x"), BURROW_E_METIS);
	cr_assert(strstr(burrow_last_error(), "memory"));
}

Test(partition, refusals)
{
	char *ds = make_directed("dir", 500, 3, 1, false);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	char *out = tu_path(dir, "out");
	o.out_dir = out;
	o.ufactor = 1.0;
	cr_assert_eq(burrow_partition(ds, &o, NULL), BURROW_E_INVAL);
	burrow_partition_defaults(&o);
	o.out_dir = out;
	o.balance = BURROW_BALANCE_TRAIN;
	cr_assert_eq(burrow_partition(ds, &o, NULL), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "train split"), "%s", burrow_last_error());
	burrow_partition_defaults(&o);
	o.out_dir = out;
	o.num_parts = 501;
	cr_assert_eq(burrow_partition(ds, &o, NULL), BURROW_E_INVAL);
	o.num_parts = 2;
	o.mem_bytes = 1 << 20;
	cr_assert_eq(burrow_partition(ds, &o, NULL), BURROW_E_NOMEM);
	cr_assert(strstr(burrow_last_error(), "at least"), "%s", burrow_last_error());
	cr_assert(!tu_exists(out));
	o.mem_bytes = 0;
	cr_assert_eq(burrow_partition(ds, &o, NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_partition(ds, &o, NULL), BURROW_E_EXISTS);
	o.overwrite = true;
	o.num_parts = 3;
	cr_assert_eq(burrow_partition(ds, &o, NULL), 0, "%s", burrow_last_error());
	burrow_parts *ps;
	cr_assert_eq(burrow_parts_open(&ps, out), 0);
	cr_assert_eq(burrow_parts_get_info(ps)->num_parts, 3);
	cr_assert_eq(burrow_parts_owner(ps, 500), BURROW_E_RANGE);
	burrow_part *p;
	cr_assert_eq(burrow_part_open(&p, ps, 3), BURROW_E_RANGE);
	burrow_parts_close(ps);
	free(out);
	free(ds);
}

Test(partition, reader_refuses_inconsistent_parts)
{
	char *ds = make_directed("dir", 800, 4, 2, true);
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 3;
	char *out = tu_path(dir, "p");
	o.out_dir = out;
	cr_assert_eq(burrow_partition(ds, &o, NULL), 0, "%s", burrow_last_error());
	burrow_parts *ps;
	burrow_part *p;
	/* a halo id owned by the part itself */
	cr_assert_eq(burrow_parts_open(&ps, out), 0);
	cr_assert_eq(burrow_part_open(&p, ps, 1), 0, "%s", burrow_last_error());
	const int64_t nh = burrow_part_get_info(p)->num_halo;
	burrow_part_close(p);
	cr_assert_gt(nh, 0);
	char *hp = tu_path(out, "part-1/halo_ids.npy");
	int64_t *bad = calloc((size_t)nh, sizeof *bad); /* all zeros: not ascending, maybe not remote */
	cr_assert_eq(bw_npy_save(hp, BURROW_DTYPE_I64, 1, &nh, bad, BW_NPY_ALIGN), 0);
	cr_assert_eq(burrow_part_open(&p, ps, 1), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "halo_ids.npy"), "%s", burrow_last_error());
	burrow_parts_close(ps);
	/* a partition book that does not cover the nodes */
	char *mp = tu_path(out, "meta.json");
	char *cmd;
	cr_assert(asprintf(&cmd, "sed -i 's/\"num_nodes\":\t800/\"num_nodes\":\t801/' '%s'", mp) > 0);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(burrow_parts_open(&ps, out), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "node_offsets"), "%s", burrow_last_error());
	free(cmd);
	/* a number too large for any integer (cast before the range check once: UB) */
	cr_assert(asprintf(&cmd, "sed -i 's/\"num_nodes\":\t801/\"num_nodes\":\t1e30/' '%s'", mp) > 0);
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(burrow_parts_open(&ps, out), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "\"num_nodes\" must be a non-negative integer"), "%s", burrow_last_error());
	free(cmd);
	free(mp);
	free(bad);
	free(hp);
	free(out);
	free(ds);
}

/* No file or directory name in d containing ".tmp." (a leftover of a failed write). */
static void assert_no_leftovers(const char *d)
{
	DIR *dd = opendir(d);
	struct dirent *e;
	while (dd && (e = readdir(dd)))
		cr_assert(!strstr(e->d_name, ".tmp."), "leftover %s/%s", d, e->d_name);
	if (dd)
		closedir(dd);
}

Test(partition, failing_allocations_leave_nothing_behind)
{
	char *ds = make_directed("dir", 400, 3, 9, true);
	char *out = tu_path(dir, "p");
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	o.num_parts = 3;
	o.coarsen_to = 60;
	o.out_dir = out;
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
		assert_no_leftovers(dir);
		cr_assert_lt(n, 100000);
	}
	cr_assert_gt(failures, 10);
	burrow_partition_stats st = {.size = sizeof st};
	o.overwrite = true;
	cr_assert_eq(burrow_partition(ds, &o, &st), 0, "%s", burrow_last_error());
	check ck = {.balance = o.balance, .ufactor = o.ufactor};
	check_parts(ds, out, &st, &ck);
	free(ck.part);
	free(out);
	free(ds);
}

/* ---------------------------------------------------------------- the command */

Test(partition, command_line)
{
	char *ds = make_csbm("csbm", 1500, 4), *out = NULL, *err = NULL;
	int rc = tu_sh(&out, &err, "%s partition %s --parts 3 --balance nodes,train --json --quiet", tu_burrow(), ds);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(strstr(out, "\"edge_cut\""), "%s", out);
	char *meta = tu_path(ds, "parts-3/meta.json");
	cr_assert(tu_exists(meta));
	free(out);
	free(err);
	rc = tu_sh(NULL, &err, "%s partition %s", tu_burrow(), ds);
	cr_assert_eq(rc, 2);
	cr_assert(strstr(err, "--parts"), "%s", err);
	free(err);
	rc = tu_sh(NULL, &err, "%s partition %s --parts 2 --balance nodes,weights", tu_burrow(), ds);
	cr_assert_eq(rc, 2);
	free(err);
	rc = tu_sh(NULL, &err, "%s partition %s --parts 3", tu_burrow(), ds);
	cr_assert_eq(rc, 1);
	cr_assert(strstr(err, "burrow: partition: ") && strstr(err, "exists"), "%s", err);
	free(err);
	free(meta);
	free(ds);
}

/* ---------------------------------------------------------------- real Cora */

/* Cora from cora.cites ("<cited>\t<citing>", LINQS paper ids), as a directed dataset
 * (citing -> cited) with ids given in ascending paper-id order. NULL when absent. */
static char *cora_from_cites(void)
{
	const char *root = tu_datasets();
	if (!root)
		return NULL;
	char *path = tu_path(root, "cora-npz/cora.cites");
	FILE *f = fopen(path, "r");
	free(path);
	if (!f)
		return NULL;
	int64_t cap = 8192, m = 0, a, b;
	int64_t *src = malloc((size_t)cap * sizeof *src), *dst = malloc((size_t)cap * sizeof *dst);
	while (fscanf(f, "%lld %lld", (long long *)&a, (long long *)&b) == 2) {
		if (m == cap) {
			cap *= 2;
			src = realloc(src, (size_t)cap * sizeof *src);
			dst = realloc(dst, (size_t)cap * sizeof *dst);
		}
		src[m] = b;
		dst[m++] = a;
	}
	fclose(f);
	int64_t *ids = malloc((size_t)(2 * m) * sizeof *ids), n = 0;
	for (int64_t e = 0; e < m; e++) {
		ids[2 * e] = src[e];
		ids[2 * e + 1] = dst[e];
	}
	qsort(ids, (size_t)(2 * m), sizeof *ids, bw_cmp_i64);
	for (int64_t i = 0; i < 2 * m; i++)
		if (!n || ids[n - 1] != ids[i])
			ids[n++] = ids[i];
	for (int64_t e = 0; e < m; e++) {
		src[e] = (int64_t *)bsearch(&src[e], ids, (size_t)n, sizeof *ids, bw_cmp_i64) - ids;
		dst[e] = (int64_t *)bsearch(&dst[e], ids, (size_t)n, sizeof *ids, bw_cmp_i64) - ids;
	}
	char *out = tu_path(dir, "cora");
	burrow_csr_builder *bld;
	burrow_writer *w;
	cr_assert_eq(burrow_csr_builder_open(&bld, n, NULL), 0);
	cr_assert_eq(burrow_csr_builder_add(bld, src, dst, (size_t)m), 0);
	cr_assert_eq(burrow_writer_open(&w, out, "cora", NULL), 0);
	cr_assert_eq(burrow_writer_put_builder(w, bld, false), 0);
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	burrow_csr_builder_close(bld);
	free(src);
	free(dst);
	free(ids);
	return out;
}

Test(partition, real_cora)
{
	char *ds = cora_from_cites();
	if (!ds)
		cr_skip_test("cora-npz/cora.cites is absent from the real datasets folder "
			     "(BURROW_DATASETS, default ../shared/datasets)");
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	for (int k = 4; k <= 8; k += 4) {
		char name[16];
		o.num_parts = k;
		snprintf(name, sizeof name, "m%d", k);
		burrow_partition_stats st = {.size = sizeof st}, rs = {.size = sizeof rs};
		free(run_and_check(ds, name, &o, true, &st));
		cr_assert_eq(st.num_nodes, 2708);
		burrow_partition_opts r = o;
		r.method = BURROW_PART_RANDOM;
		snprintf(name, sizeof name, "r%d", k);
		free(run_and_check(ds, name, &r, false, &rs));
		cr_assert_lt(st.edge_cut * 4, rs.edge_cut, "k=%d: metis %lld, random %lld", k, (long long)st.edge_cut,
			     (long long)rs.edge_cut);
	}
	free(ds);
}

/* bw_stream_next: the chunks of a streamed pass cover [0, n) in order, each at most `chunk`
 * rows, none empty; nothing for an empty graph. (A pass over the small graphs above is one
 * chunk of BW_CHUNK rows, so this is where a lost or repeated row between chunks shows.) */
Test(partition, stream_chunks)
{
	static const int64_t indptr[11] = {0};
	const bw_pgraph g = {.n = 10, .indptr = indptr, .width = 4, .ncon = 1};
	const struct {
		int64_t n, chunk, want;
	} cases[] = {{10, 3, 4}, {10, 5, 2}, {10, 10, 1}, {10, 16384, 1}, {1, 1, 1}, {0, 4, 0}};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bw_stream s;
		int64_t next = 0, chunks = 0;
		for (bw_stream_begin(&s, &g); bw_stream_next(&s, cases[i].n, cases[i].chunk); chunks++) {
			cr_assert_eq(s.a, next, "n %lld chunk %lld: a chunk starts at %lld, not %lld", (long long)cases[i].n,
				     (long long)cases[i].chunk, (long long)s.a, (long long)next);
			cr_assert(s.b > s.a && s.b - s.a <= cases[i].chunk && s.b <= cases[i].n);
			next = s.b;
		}
		cr_assert_eq(next, cases[i].n);
		cr_assert_eq(chunks, cases[i].want, "n %lld chunk %lld: %lld chunks", (long long)cases[i].n,
			     (long long)cases[i].chunk, (long long)chunks);
	}
}
