/* hdistmb_check.c: run under mpirun by tests/test_mpi.c with a scratch directory: typed
 * mini-batch training over the typed parts of a gen hsbm dataset (dist_hmb.c). The ranks' training
 * nodes are the input's training split, once each, and an epoch steps on exactly them; every
 * sampled block row (relation r, layer l) holds true in-neighbors of its node in the input's
 * relation r (mapped back through each type's orig_ids), distinct, min(fanout, in-degree) of
 * them, and equals the draw the node's owner makes of it under the same key (a remote
 * expansion is a local one); each type's input rows equal the input's features bit for bit;
 * R-SAGE's loss is finite and falls, the replicas stay identical, and the test accuracy is
 * within a few points of one process trained alike. */
#include "../../core/half.h"
#include "../../train/dist/dist_hmb.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FAN0 = 4, FAN1 = 3, BATCH = 48 };

static void dief(const char *what, const char *fmt, long long a, long long b)
{
	char msg[256];
	snprintf(msg, sizeof msg, fmt, a, b);
	die(what, msg);
}

/* The unpartitioned typed dataset, and each type's new id -> input id. */
typedef struct world {
	burrow_dataset *ds;
	const burrow_hetero *h;
	int64_t *orig[BURROW_MAX_TYPES];
	float *feat[BURROW_MAX_TYPES];  /* [N_t, D_t] float32, NULL without features */
	int64_t dim[BURROW_MAX_TYPES];
} world;

static int64_t *load_i64(const char *path, int64_t *n)
{
	bw_npy h;
	void *raw;
	if (bw_npy_load(path, &h, &raw))
		die("load", burrow_last_error());
	if (h.dtype != BURROW_DTYPE_I64 || h.ndim != 1)
		die("load", path);
	*n = h.shape[0];
	return raw;
}

static void world_open(world *w, const char *data, const char *parts, const burrow_parts_info *pi)
{
	if (burrow_dataset_open(&w->ds, data))
		die("open", burrow_last_error());
	w->h = burrow_dataset_hetero(w->ds);
	int *cnt = malloc((size_t)K * sizeof *cnt), *dsp = malloc((size_t)K * sizeof *dsp);
	for (int t = 0; t < w->h->num_types; t++) {
		const int64_t *book = pi->type_offsets + (size_t)t * (size_t)(K + 1);
		char path[4400];
		snprintf(path, sizeof path, "%s/part-%d/orig_ids/%s.npy", parts, rank, w->h->type_names[t]);
		int64_t n;
		int64_t *own = load_i64(path, &n);
		if (n != book[rank + 1] - book[rank])
			dief("orig ids", "%lld owned, the book says %lld", (long long)n, (long long)(book[rank + 1] - book[rank]));
		for (int j = 0; j < K; j++) {
			cnt[j] = (int)(book[j + 1] - book[j]);
			dsp[j] = (int)book[j];
		}
		w->orig[t] = malloc((size_t)(book[K] + 1) * sizeof *w->orig[t]);
		MPI_Allgatherv(own, (int)n, MPI_INT64_T, w->orig[t], cnt, dsp, MPI_INT64_T, MPI_COMM_WORLD);
		bw_free(own);
		burrow_type_info ti;
		if (burrow_dataset_type_info(w->ds, t, &ti))
			die("type", burrow_last_error());
		w->dim[t] = ti.feat_dim;
		if (!ti.feat_dim)
			continue;
		bw_npy h;
		void *raw;
		if (bw_npy_load(ti.features_path, &h, &raw))
			die("features", burrow_last_error());
		if (h.dtype == BURROW_DTYPE_F32) {
			w->feat[t] = raw;
		} else {
			const size_t m = (size_t)(ti.num_nodes * ti.feat_dim);
			w->feat[t] = bw_malloc(m * sizeof(float) + 1);
			bw_f16_to_f32_n(w->feat[t], raw, m);
			bw_free(raw);
		}
	}
	free(cnt);
	free(dsp);
}

static void world_close(world *w)
{
	for (int t = 0; t < BURROW_MAX_TYPES; t++) {
		free(w->orig[t]);
		bw_free(w->feat[t]);
	}
	burrow_dataset_close(w->ds);
}

static burrow_dist *open_dist(const char *parts, int epochs)
{
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.full_graph = false;
	o.train.model = BURROW_MODEL_RSAGE;
	o.train.layers = 2;
	o.train.fanout[0] = FAN0;
	o.train.fanout[1] = FAN1;
	o.train.eval_fanout[0] = FAN0;
	o.train.eval_fanout[1] = FAN1;
	o.train.batch_size = BATCH;
	o.train.hidden = 16;
	o.train.lr = 0.02;
	o.train.epochs = epochs;
	o.train.threads = 1;
	o.train.seed = 7;
	burrow_dist *d;
	if (burrow_dist_open(&d, parts, &o))
		die("open", burrow_last_error());
	return d;
}

/* The ranks' training nodes are the input's split, each once; *out this rank's. */
static void check_train_nodes(burrow_dist *d, const world *w)
{
	int64_t n, nin;
	const int64_t *tr = bw_dist_hmb_train(d, &n);
	const int64_t *in = burrow_dataset_split(w->ds, BURROW_SPLIT_TRAIN, &nin);
	const int tt = w->h->target_type;
	char *mark = calloc((size_t)w->h->type_nodes[tt], 1), *all = calloc((size_t)w->h->type_nodes[tt], 1);
	int64_t first, own;
	bw_dist_hmb_owned(d, tt, &first, &own);
	for (int64_t i = 0; i < n; i++) {
		if (tr[i] < first || tr[i] >= first + own)
			dief("train nodes", "%lld is not owned here (first %lld)", (long long)tr[i], (long long)first);
		if (mark[w->orig[tt][tr[i]]]++)
			dief("train nodes", "%lld twice", (long long)tr[i], 0);
	}
	MPI_Allreduce(mark, all, (int)w->h->type_nodes[tt], MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
	int64_t total = 0;
	for (int64_t v = 0; v < w->h->type_nodes[tt]; v++)
		total += all[v];
	for (int64_t i = 0; i < nin; i++)
		if (all[in[i]] != 1)
			dief("train nodes", "input training node %lld held %lld times", (long long)in[i], (long long)all[in[i]]);
	if (total != nin)
		dief("train nodes", "the ranks hold %lld, the input %lld", (long long)total, (long long)nin);
	free(mark);
	free(all);
}

/* Is u an in-neighbor of v in the input's relation r (sorted rows)? */
static bool in_row(const burrow_csr *g, int64_t v, int64_t u)
{
	int64_t lo = g->indptr[v], hi = g->indptr[v + 1];
	while (lo < hi) {
		const int64_t mid = lo + (hi - lo) / 2;
		const int64_t x = g->index_width == 4 ? ((const int32_t *)g->indices)[mid] : ((const int64_t *)g->indices)[mid];
		if (x == u)
			return true;
		if (x < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static int cmp64(const void *a, const void *b)
{
	const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

/* The first batch of this rank's training nodes: blocks against the input graph, rows
 * against the owners' draws (records gathered on every rank), rows against the features. */
static void check_batch(burrow_dist *d, const world *w)
{
	int64_t n;
	const int64_t *tr = bw_dist_hmb_train(d, &n);
	bw_loaded lb;
	if (bw_dist_hmb_load(d, tr, BW_MIN(n, BATCH), 0, 0, &lb))
		die("load", burrow_last_error());
	const burrow_typed_batch *tb = lb.tb;
	const burrow_hetero *h = w->h;
	/* records (l, r, v, k, k new ids) of every row, for the owners */
	int64_t *rec = NULL, nrec = 0, cap = 0, remote = 0;
	for (int l = 0; l < tb->num_layers; l++)
		for (int r = 0; r < tb->num_relations; r++) {
			const burrow_block *b = &tb->blocks[l][r];
			const int fan = bw_dist_hmb_fanout(d, l, r);
			if (fan != 0 && fan != (l ? FAN1 : FAN0))
				dief("fanout", "relation %lld's fanout %lld", (long long)r, (long long)fan);
			const int s = h->rel[r].src_type, t = h->rel[r].dst_type;
			if (b->num_dst != tb->num_nodes[l + 1][t] || b->num_src != tb->num_nodes[l][s])
				dief("blocks", "block of %lld rows over %lld sources: not its levels", (long long)b->num_dst,
				     (long long)b->num_src);
			for (int64_t i = 0; i < b->num_dst; i++) {
				const int64_t v = tb->input_ids[t][i], ov = w->orig[t][v];
				const int64_t k = b->indptr[i + 1] - b->indptr[i];
				const int64_t deg = h->rel[r].graph.indptr[ov + 1] - h->rel[r].graph.indptr[ov];
				if (k != BW_MIN(deg, (int64_t)fan))
					dief("blocks", "a row of %lld picks, in-degree %lld", (long long)k, (long long)deg);
				if (cap < nrec + 4 + k) {
					cap = 2 * (nrec + 4 + k);
					rec = realloc(rec, (size_t)cap * sizeof *rec);
				}
				int64_t *q = rec + nrec;
				q[0] = l, q[1] = r, q[2] = v, q[3] = k;
				for (int64_t j = 0; j < k; j++) {
					const int64_t u = tb->input_ids[s][b->indices[b->indptr[i] + j]];
					if (!in_row(&h->rel[r].graph, ov, w->orig[s][u]))
						dief("blocks", "%lld is not an in-neighbor of %lld", (long long)w->orig[s][u], (long long)ov);
					q[4 + j] = u;
				}
				qsort(q + 4, (size_t)k, sizeof *q, cmp64);
				for (int64_t j = 1; j < k; j++)
					if (q[4 + j] == q[3 + j])
						dief("blocks", "%lld twice in the row of %lld", (long long)q[4 + j], (long long)v);
				nrec += 4 + k;
			}
		}
	/* every rank's records to every rank; each checks the rows of the nodes it owns */
	int nr = (int)nrec, *cnt = malloc((size_t)K * sizeof *cnt), *dsp = malloc((size_t)K * sizeof *dsp);
	MPI_Allgather(&nr, 1, MPI_INT, cnt, 1, MPI_INT, MPI_COMM_WORLD);
	int64_t tot = 0;
	for (int j = 0; j < K; j++) {
		dsp[j] = (int)tot;
		tot += cnt[j];
	}
	int64_t *all = malloc((size_t)(tot + 1) * sizeof *all), out[64];
	MPI_Allgatherv(rec, nr, MPI_INT64_T, all, cnt, dsp, MPI_INT64_T, MPI_COMM_WORLD);
	int64_t checked = 0;
	for (int j = 0; j < K; j++)
		for (int64_t p = dsp[j]; p < dsp[j] + cnt[j]; p += 4 + all[p + 3]) {
			const int l = (int)all[p], r = (int)all[p + 1], t = h->rel[r].dst_type;
			int64_t first, own;
			bw_dist_hmb_owned(d, t, &first, &own);
			if (all[p + 2] < first || all[p + 2] >= first + own)
				continue;
			const int64_t k = bw_dist_hmb_draw(d, 0, 0, l, r, bw_dist_hmb_fanout(d, l, r), all[p + 2], out);
			if (k != all[p + 3])
				dief("owner's draw", "%lld picks here, %lld in the batch", (long long)k, (long long)all[p + 3]);
			qsort(out, (size_t)k, sizeof *out, cmp64);
			if (memcmp(out, all + p + 4, (size_t)k * sizeof *out))
				dief("owner's draw", "rank %lld's row of node %lld differs from its owner's draw", (long long)j,
				     (long long)all[p + 2]);
			checked++;
			remote += j != rank;
		}
	/* each type's rows */
	for (int t = 0; t < h->num_types; t++) {
		const int64_t m = tb->num_nodes[0][t], D = w->dim[t];
		if (!m || !w->feat[t])
			continue;
		if (lb.hb.x[t].rows != m || lb.hb.x[t].cols != D)
			dief("rows", "type rows %lld, want %lld", (long long)lb.hb.x[t].rows, (long long)m);
		for (int64_t i = 0; i < m; i++)
			if (memcmp(lb.hb.x[t].data + i * D, w->feat[t] + w->orig[t][tb->input_ids[t][i]] * D,
				   (size_t)D * sizeof(float)))
				dief("rows", "row %lld of type %lld differs from the input's", (long long)i, (long long)t);
	}
	int64_t sums[2] = {checked, remote}, g[2];
	MPI_Allreduce(sums, g, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (K > 1 && g[1] == 0)
		die("owner's draw", "no row was expanded by another rank");
	if (rank == 0)
		printf("hdistmb-check: blocks are true in-neighbors, min(fanout, degree) a row; %lld rows equal their "
		       "owner's draw (%lld expanded remotely); input rows equal the features\n",
		       (long long)g[0], (long long)g[1]);
	free(rec);
	free(all);
	free(cnt);
	free(dsp);
}

/* Train: every epoch steps on exactly this rank's training nodes; the loss is finite and
 * falls; the replicas agree; the accuracy is near one process's. */
static void check_training(burrow_dist *d, const world *w, const char *data)
{
	enum { EPOCHS = 16 };
	int64_t n;
	const int64_t *tr = bw_dist_hmb_train(d, &n);
	uint64_t want[3] = {0, 0, 0}, got[3];
	for (int64_t i = 0; i < n; i++) {
		want[0]++;
		want[1] += (uint64_t)tr[i];
		want[2] += (uint64_t)tr[i] * (uint64_t)tr[i];
	}
	double loss[EPOCHS];
	for (int e = 0; e < EPOCHS; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		train_epoch_checked(d, &es);
		loss[e] = es.loss;
		if (!isfinite(es.loss))
			die("train", "loss not finite");
		bw_dist_hmb_seen(d, got);
		for (int i = 0; i < 3; i++)
			if (got[i] != want[i] * (uint64_t)(e + 1))
				dief("train", "epoch %lld stepped on other seeds than the rank's training nodes (count %lld)",
				     (long long)e + 1, (long long)got[0]);
	}
	if (!(loss[EPOCHS - 1] < 0.8 * loss[0]))
		dief("train", "loss did not fall: %lld -> %lld (x1000)", (long long)(1000 * loss[0]),
		     (long long)(1000 * loss[EPOCHS - 1]));
	check_replicas_equal(d, "after typed training");
	burrow_eval_stats ev = {.size = sizeof ev};
	if (burrow_dist_evaluate(d, &ev))
		die("eval", burrow_last_error());
	double one = -1;
	if (rank == 0) { /* one process, the same options, on the input */
		burrow_train_opts o;
		burrow_train_defaults(&o);
		o.model = BURROW_MODEL_RSAGE;
		o.layers = 2;
		o.fanout[0] = o.eval_fanout[0] = FAN0;
		o.fanout[1] = o.eval_fanout[1] = FAN1;
		o.batch_size = BATCH * K;
		o.hidden = 16;
		o.lr = 0.02;
		o.threads = 1;
		o.seed = 7;
		burrow_trainer *t;
		burrow_eval_stats e1 = {.size = sizeof e1};
		if (burrow_trainer_open(&t, w->ds, &o))
			die("one process", burrow_last_error());
		for (int e = 0; e < EPOCHS; e++) {
			burrow_epoch_stats es = {.size = sizeof es};
			if (burrow_trainer_train_epoch(t, &es))
				die("one process", burrow_last_error());
		}
		if (burrow_trainer_evaluate(t, &e1))
			die("one process", burrow_last_error());
		one = e1.test_acc;
		burrow_trainer_close(t);
		(void)data;
		printf("hdistmb-check: loss %.4f -> %.4f over %d epochs; test accuracy %.4f on %d ranks, %.4f in one process\n",
		       loss[0], loss[EPOCHS - 1], EPOCHS, ev.test_acc, K, one);
		if (!(ev.test_acc >= 0 && fabs(ev.test_acc - one) <= 0.05))
			die("accuracy", "more than 5 points from one process's");
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_HSBM);
	g.num_nodes = 2000;
	char data[4096], parts[4096];
	check_setup(&argc, &argv, "hdistmb-check", &g, data, parts);
	burrow_dist *d = open_dist(parts, 8);
	world w = {0};
	world_open(&w, data, parts, burrow_parts_get_info(d->parts));
	check_train_nodes(d, &w);
	check_batch(d, &w);
	check_training(d, &w, data);
	if (rank == 0)
		printf("hdistmb-check: every check passes on %d ranks\n", K);
	world_close(&w);
	burrow_dist_close(d);
	MPI_Finalize();
	return 0;
}
