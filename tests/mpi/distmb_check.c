/* distmb_check.c: run under mpirun by tests/test_mpi.c with a scratch directory: distributed
 * mini-batch mode. Sampled blocks hold true neighbors of the unpartitioned graph (mapped back
 * through orig_ids), no repeats, min(fanout, degree) per row, in burrow_batch's layout; the
 * input rows (owned, halo and fetched) equal the original features bit for bit, and GCN norms
 * follow the whole graph's degrees; a step with all neighbors and every seed moves the weights
 * as the full-graph step does (so the loss weighting is the global mean); after training with
 * dropout and uneven batch counts the replicas are identical on every rank. With a second
 * argument "gpu" it runs the same checks with the model on a GPU (--device cuda, the draws
 * there too), and mini-batch training there against the same on the CPU; a [SKIP] line
 * without a device (DISTMB_DEVICE=cpu runs that mode on the CPU device instead). */
#include "../../train/dist/dist_mb.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *device; /* the model's --device: NULL (the CPU), or "cuda" in the gpu mode */

static void dief(const char *what, const char *fmt, long long a, long long b)
{
	char msg[256];
	snprintf(msg, sizeof msg, fmt, a, b);
	die(what, msg);
}

/* The unpartitioned dataset and new global id -> input id for every node. */
typedef struct world {
	burrow_dataset *ds;
	const burrow_csr *g;
	float *feat;        /* [N, D] */
	int64_t N, D;
	int64_t *orig;      /* [N] */
} world;

static void world_open(world *w, const char *data, burrow_dist *d)
{
	if (burrow_dataset_open(&w->ds, data))
		die("open", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(w->ds);
	w->g = burrow_dataset_graph(w->ds);
	w->N = in->num_nodes;
	w->D = in->feat_dim;
	bw_npy h;
	void *raw;
	if (bw_npy_load(burrow_dataset_features_path(w->ds), &h, &raw))
		die("features", burrow_last_error());
	w->feat = raw;
	const burrow_parts_info *pi = burrow_parts_get_info(d->parts);
	w->orig = malloc((size_t)w->N * sizeof *w->orig);
	int *cnt = malloc((size_t)K * sizeof *cnt), *dsp = malloc((size_t)K * sizeof *dsp);
	for (int j = 0; j < K; j++) {
		cnt[j] = (int)(pi->node_offsets[j + 1] - pi->node_offsets[j]);
		dsp[j] = (int)pi->node_offsets[j];
	}
	MPI_Allgatherv(d->pi->orig_ids, (int)d->n_own, MPI_INT64_T, w->orig, cnt, dsp, MPI_INT64_T, MPI_COMM_WORLD);
	free(cnt);
	free(dsp);
}

static void world_close(world *w)
{
	bw_free(w->feat);
	free(w->orig);
	burrow_dataset_close(w->ds);
}

static int64_t deg_of(const world *w, int64_t v) { return w->g->indptr[v + 1] - w->g->indptr[v]; }

/* Is u a neighbor of v in the input graph (rows are sorted)? */
static int is_neighbor(const world *w, int64_t v, int64_t u)
{
	const int32_t *ind = w->g->indices;
	int64_t lo = w->g->indptr[v], hi = w->g->indptr[v + 1];
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (ind[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < w->g->indptr[v + 1] && ind[lo] == u;
}

/* Every property of one batch (seeds this rank's first training nodes). Returns the rows
 * this rank fetched from other ranks. */
static int64_t check_batch(const world *w, burrow_dist *d, const bw_mb_view *bv, const int64_t *seeds, int64_t n,
			   const int *fanout, int L, bool gcn)
{
	const burrow_batch *b = bv->sb;
	if (b->num_layers != L || b->num_seeds != n)
		die("batch", "wrong number of layers or seeds");
	for (int64_t i = 0; i < n; i++)
		if (b->input_ids[i] != seeds[i])
			die("batch", "the first input nodes are not the seeds");
	/* every node once */
	char *seen = calloc((size_t)w->N, 1);
	for (int64_t i = 0; i < b->num_input; i++) {
		if (b->input_ids[i] < 0 || b->input_ids[i] >= w->N || seen[b->input_ids[i]])
			dief("batch", "input node %lld (position %lld) is out of range or repeated", (long long)b->input_ids[i], i);
		seen[b->input_ids[i]] = 1;
	}
	free(seen);
	for (int l = L - 1; l >= 0; l--) {
		const int64_t nd = b->blocks[l].num_dst, ns = b->blocks[l].num_src;
		if (nd != (l == L - 1 ? n : b->blocks[l + 1].num_src) || ns < nd || (l == 0 && ns != b->num_input))
			die("batch", "blocks do not nest");
		const int64_t *ip = b->blocks[l].indptr;
		const int32_t *ix = b->blocks[l].indices;
		char *used = calloc((size_t)(ns - nd + 1), 1);
		for (int64_t i = 0; i < nd; i++) {
			const int64_t v = w->orig[b->input_ids[i]], dg = deg_of(w, v);
			const int64_t want = fanout[l] < 0 || dg <= fanout[l] ? dg : fanout[l];
			if (ip[i + 1] - ip[i] != want)
				dief("sampling", "a row has %lld neighbors, want min(fanout, degree) = %lld",
				     (long long)(ip[i + 1] - ip[i]), (long long)want);
			for (int64_t e = ip[i]; e < ip[i + 1]; e++) {
				if (ix[e] < 0 || ix[e] >= ns)
					die("sampling", "a local source id is out of range");
				const int64_t gu = b->input_ids[ix[e]];
				if (!is_neighbor(w, v, w->orig[gu]))
					dief("sampling", "node %lld is not a neighbor of node %lld in the input graph",
					     (long long)w->orig[gu], (long long)v);
				if (e > ip[i] && b->input_ids[ix[e - 1]] >= gu)
					die("sampling", "a row repeats a neighbor or is not in increasing global id");
				if (ix[e] >= nd)
					used[ix[e] - nd] = 1;
			}
		}
		for (int64_t j = nd; j < ns; j++) {
			if (!used[j - nd])
				die("sampling", "a new source node is no row's neighbor");
			if (j > nd && b->input_ids[j - 1] >= b->input_ids[j])
				die("sampling", "new source nodes are not in increasing global id");
		}
		free(used);
	}
	/* input rows bit for bit, norms from the whole graph's degrees */
	int64_t fetched = 0;
	for (int64_t i = 0; i < b->num_input; i++) {
		const int64_t v = w->orig[b->input_ids[i]];
		if (memcmp(bv->x + i * w->D, w->feat + v * w->D, (size_t)w->D * sizeof(float)))
			dief("fetch", "the input row of node %lld (position %lld) differs from its features", (long long)v, i);
		if (gcn) {
			double want = 1.0 / sqrt((double)deg_of(w, v) + 1.0);
			if (fabs(bv->norm[i] - want) > 1e-6 * want)
				dief("fetch", "the GCN norm of node %lld (position %lld) is not 1/sqrt(degree + 1)", (long long)v, i);
		}
		const int64_t lid = b->input_ids[i] - d->pi->first_id;
		bool held = lid >= 0 && lid < d->n_own;
		for (int64_t h = 0; !held && h < d->n_halo; h++)
			held = d->pi->halo_ids[h] == b->input_ids[i];
		fetched += !held;
	}
	if (fetched != bv->n_fetch)
		dief("fetch", "%lld rows arrived from other ranks, but %lld inputs are neither owned nor halo",
		     (long long)bv->n_fetch, (long long)fetched);
	return fetched;
}

/* New global id of local id lid of this rank's part. */
static int64_t local_gid(const burrow_dist *d, int64_t lid)
{
	return lid < d->n_own ? d->pi->first_id + lid : d->pi->halo_ids[lid - d->n_own];
}

/* Each row of b whose destination this rank owns and which has more neighbors than the
 * fanout holds exactly the picks of a slow Floyd's draw (membership in a flag array) from
 * the stream bw_key(bw_dist_mb_draw_key(seed, epoch, step, l), gid) over the node's row of
 * the part's CSR: the draw is the sampler's, keyed as documented. Returns the rows checked. */
static int64_t check_draws(const burrow_dist *d, const burrow_batch *b, const int *fanout, int L, int64_t epoch,
			   int64_t step)
{
	const burrow_csr *g = burrow_dataset_graph(burrow_part_dataset(d->part));
	const int32_t *ind = g->indices;
	int64_t checked = 0;
	for (int l = 0; l < L; l++) {
		const int64_t fan = fanout[l];
		const uint64_t key = bw_dist_mb_draw_key(d->o.train.seed, epoch, step, l);
		for (int64_t i = 0; i < b->blocks[l].num_dst; i++) {
			const int64_t gid = b->input_ids[i], lid = gid - d->pi->first_id;
			if (lid < 0 || lid >= d->n_own)
				continue;
			const int64_t s = g->indptr[lid], deg = g->indptr[lid + 1] - s;
			if (fan < 0 || deg <= fan)
				continue;
			bw_rng r;
			bw_rng_seed(&r, bw_key(key, (uint64_t)gid));
			char *taken = calloc((size_t)deg, 1);
			int64_t *want = malloc((size_t)fan * sizeof *want), n = 0;
			for (int64_t j = deg - fan; j < deg; j++) {
				int64_t t = (int64_t)bw_rng_below(&r, (uint64_t)j + 1);
				if (taken[t])
					t = j;
				taken[t] = 1;
				want[n++] = local_gid(d, ind[s + t]);
			}
			qsort(want, (size_t)n, sizeof *want, bw_cmp_i64);
			const int64_t *ip = b->blocks[l].indptr;
			if (ip[i + 1] - ip[i] != fan)
				die("draw", "a sampled row has the wrong number of picks");
			for (int64_t e = 0; e < fan; e++)
				if (b->input_ids[b->blocks[l].indices[ip[i] + e]] != want[e])
					dief("draw", "node %lld's picks in layer %lld differ from Floyd's draw of its key",
					     (long long)gid, (long long)l);
			free(want);
			free(taken);
			checked++;
		}
	}
	return checked;
}

static void open_mb(burrow_dist **d, const char *parts, int model, int L, const int *fanout, int64_t batch)
{
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.full_graph = false;
	o.train.model = model;
	o.train.layers = L;
	o.train.hidden = 8;
	o.train.threads = 1;
	o.train.seed = 3;
	o.train.batch_size = batch;
	for (int l = 0; l < L; l++)
		o.train.fanout[l] = fanout[l];
	o.train.sampler_device = getenv("DISTMB_SAMPLER"); /* cuda: the owned rows drawn on the GPU */
	if (device)
		o.train.device = device;
	const char *comm = getenv("DISTMB_COMM"); /* staged: rows and gradients in device buffers */
	if (comm && (o.comm = burrow_comm_parse(comm)) < 0)
		die("usage", "DISTMB_COMM: want auto, mpi, nccl or staged");
	if (burrow_dist_open(d, parts, &o))
		die("dist open", burrow_last_error());
	if (rank == 0 && comm)
		printf("distmb-check: --comm %s: rows and gradients in %s buffers\n", comm,
		       bw_dist_mb_on_device(*d) ? "device" : "host");
	if (rank == 0 && o.train.sampler_device)
		printf("distmb-check: draws on %s\n", burrow_dist_sampler_device(*d));
}

/* Batches of this rank's first training nodes, under several fanouts (small picks, large
 * picks through the hash set, all neighbors). */
static void check_sampling(const char *data, const char *parts)
{
	static const int fan_a[3] = {3, 40, 2}, fan_b[2] = {-1, 5};
	const struct {
		int model, L;
		const int *fan;
	} cfg[] = {{BURROW_MODEL_GCN, 3, fan_a}, {BURROW_MODEL_SAGE, 2, fan_b}};
	for (size_t c = 0; c < sizeof cfg / sizeof *cfg; c++) {
		burrow_dist *d;
		open_mb(&d, parts, cfg[c].model, cfg[c].L, cfg[c].fan, 1024);
		world w;
		world_open(&w, data, d);
		const int64_t ntr = d->split_n[BURROW_SPLIT_TRAIN], n = ntr < 40 ? ntr : 40;
		int64_t *seeds = malloc((size_t)(n + 1) * sizeof *seeds), fetched = 0, drawn = 0;
		for (int64_t i = 0; i < n; i++)
			seeds[i] = d->pi->first_id + d->split[BURROW_SPLIT_TRAIN][i];
		bw_mb_view b;
		for (int64_t stepi = 0; stepi < 2; stepi++) {
			if (bw_dist_mb_load(d, seeds, n, 1, stepi, &b))
				die("load", burrow_last_error());
			fetched += check_batch(&w, d, &b, seeds, n, cfg[c].fan, cfg[c].L, cfg[c].model == BURROW_MODEL_GCN);
			drawn += check_draws(d, b.sb, cfg[c].fan, cfg[c].L, 1, stepi);
		}
		/* the same (epoch, step), the same batch */
		if (bw_dist_mb_load(d, seeds, n, 1, 1, &b))
			die("load", burrow_last_error());
		int64_t *g1 = malloc((size_t)b.sb->num_input * sizeof *g1), n1 = b.sb->num_input;
		memcpy(g1, b.sb->input_ids, (size_t)n1 * sizeof *g1);
		if (bw_dist_mb_load(d, seeds, n, 1, 1, &b))
			die("load", burrow_last_error());
		if (b.sb->num_input != n1 || memcmp(g1, b.sb->input_ids, (size_t)n1 * sizeof *g1))
			die("sampling", "the same epoch and step gave a different batch");
		/* a rank without seeds still joins every exchange */
		if (bw_dist_mb_load(d, seeds, rank == 0 ? 0 : n, 2, 0, &b))
			die("load", burrow_last_error());
		if (rank == 0 && b.sb->num_input != 0)
			die("sampling", "an empty batch has input nodes");
		if (rank != 0)
			fetched += check_batch(&w, d, &b, seeds, n, cfg[c].fan, cfg[c].L, cfg[c].model == BURROW_MODEL_GCN);
		int64_t all, all_drawn;
		MPI_Allreduce(&fetched, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		MPI_Allreduce(&drawn, &all_drawn, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
		if (K > 1 && all == 0)
			die("fetch", "no rank fetched a row from another: the test does not reach the fetch");
		if (all_drawn == 0)
			die("draw", "no row was sampled: the test does not reach the draw");
		if (rank == 0)
			printf("distmb-check: %s: sampled blocks are true neighbors, %lld owned rows are Floyd's draw "
			       "of their key, inputs equal the features (%lld rows fetched from other ranks)\n",
			       burrow_model_name(cfg[c].model), (long long)all_drawn, (long long)all);
		free(g1);
		free(seeds);
		world_close(&w);
		burrow_dist_close(d);
	}
}

/* The model's weights in new host memory (free with free), wherever they live. */
static float *host_params(const burrow_dist *d)
{
	const int64_t n = d->model->num_params;
	float *h = malloc((size_t)(n ? n : 1) * sizeof *h);
	if (n && bw_device_download(d->be.dev, h, d->model->params, (size_t)n * sizeof *h))
		die("download", burrow_last_error());
	return h;
}

/* With all neighbors, every seed in one batch, no dropout and SGD, one mini-batch epoch moves
 * the weights as one full-graph epoch does: the same gradient of the global mean loss. */
static void check_exact_step(const char *parts, int model)
{
	float *before = NULL, *delta[2] = {NULL, NULL};
	int64_t np = 0;
	for (int mode = 0; mode < 2; mode++) {
		burrow_dist_opts o;
		burrow_dist_defaults(&o);
		o.train.full_graph = mode == 0;
		o.train.model = model;
		o.train.layers = 2;
		o.train.hidden = 8;
		o.train.dropout = 0;
		o.train.threads = 1;
		o.train.seed = 9;
		o.train.optimizer = BURROW_OPTIM_SGD;
		o.train.lr = 1.0;
		o.train.batch_size = 1 << 20;
		o.train.fanout[0] = o.train.fanout[1] = -1;
		if (device)
			o.train.device = device;
		burrow_dist *d;
		if (burrow_dist_open(&d, parts, &o))
			die("dist open", burrow_last_error());
		np = d->model->num_params;
		if (!before)
			before = host_params(d);
		burrow_epoch_stats es = {.size = sizeof es};
		if (burrow_dist_train_epoch(d, &es, NULL))
			die("train", burrow_last_error());
		if (es.batches != 1)
			die("train", "one batch per epoch expected");
		delta[mode] = host_params(d);
		for (int64_t i = 0; i < np; i++)
			delta[mode][i] -= before[i];
		burrow_dist_close(d);
	}
	double num = 0, den = 1e-30;
	for (int64_t i = 0; i < np; i++) {
		num = fmax(num, fabs((double)delta[1][i] - delta[0][i]));
		den = fmax(den, fabs((double)delta[0][i]));
	}
	if (!(num / den <= 1e-4)) {
		char msg[160];
		snprintf(msg, sizeof msg, "a mini-batch step with all neighbors differs from the full-graph step by %.3g",
			 num / den);
		die(burrow_model_name(model), msg);
	}
	if (rank == 0)
		printf("distmb-check: %s: an all-neighbor step equals the full-graph step (%.2g relative)%s%s\n",
		       burrow_model_name(model), num / den, device ? " on " : "", device ? device : "");
	free(before);
	free(delta[0]);
	free(delta[1]);
}

/* Training with dropout and uneven batch counts (rank 0's batches are smaller, so the other
 * ranks take empty steps): replicas identical after every epoch. */
static void check_replicas(const char *parts)
{
	static const int fan[3] = {5, 4, 3};
	burrow_dist *d;
	open_mb(&d, parts, BURROW_MODEL_SAGE, 3, fan, rank == 0 ? 16 : 64);
	for (int e = 0; e < 3; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		train_epoch_checked(d, &es);
		const int64_t want = (d->split_n[BURROW_SPLIT_TRAIN] + 15) / 16;
		if (rank == 0 && es.batches != want)
			dief("train", "%lld steps, want rank 0's %lld batches", (long long)es.batches, (long long)want);
		check_replicas_equal(d, "weights differ from rank 0's after an epoch");
	}
	burrow_eval_stats ev = {.size = sizeof ev};
	if (burrow_dist_evaluate(d, &ev))
		die("evaluate", burrow_last_error());
	if (rank == 0)
		printf("distmb-check: replicas identical after 3 mini-batch epochs (valid %.3f)%s%s\n", ev.valid_acc,
		       device ? " on " : "", device ? d->be.dev->name : "");
	burrow_dist_close(d);
}

/* Two mini-batch epochs of SGD without dropout on device dev (NULL: the CPU, over MPI) and
 * communicator comm: the weights' change (new host memory, *np floats), the replicas checked
 * equal, and the final evaluation's valid accuracy. */
static float *train_delta(const char *parts, int model, const char *dev, int comm, bool grad_overlap, int64_t *np,
			  double *valid)
{
	static const int fan[2] = {4, 3};
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.full_graph = false;
	o.train.model = model;
	o.train.layers = 2;
	o.train.hidden = 8;
	o.train.dropout = 0;
	o.train.threads = 1;
	o.train.seed = 11;
	o.train.optimizer = BURROW_OPTIM_SGD;
	o.train.lr = 0.5;
	o.train.batch_size = 64;
	for (int l = 0; l < 2; l++)
		o.train.fanout[l] = fan[l];
	o.comm = comm;
	o.grad_overlap = grad_overlap;
	if (dev)
		o.train.device = dev;
	burrow_dist *d;
	if (burrow_dist_open(&d, parts, &o))
		die("dist open", burrow_last_error());
	*np = d->model->num_params;
	float *before = host_params(d);
	for (int e = 0; e < 2; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		train_epoch_checked(d, &es);
		check_replicas_equal(d, "weights differ from rank 0's after an epoch");
	}
	burrow_eval_stats ev = {.size = sizeof ev};
	if (burrow_dist_evaluate(d, &ev))
		die("evaluate", burrow_last_error());
	*valid = ev.valid_acc;
	float *delta = host_params(d);
	for (int64_t i = 0; i < *np; i++)
		delta[i] -= before[i];
	free(before);
	burrow_dist_close(d);
	return delta;
}

/* Mini-batch training with the model on the GPU (the rows fetched and the gradients summed in
 * its buffers, the draws there too) takes the CPU's steps: the same batches, so after two
 * epochs the weights moved as on the CPU over MPI within 1e-4 (normwise relative), and the
 * valid accuracy is the CPU's within one point; staged and auto, gcn with the gradients
 * all-reduced per layer. */
static void check_gpu_equals_cpu(const char *parts)
{
	static const struct {
		int model, comm;
		bool grad_overlap;
	} v[] = {
		{BURROW_MODEL_SAGE, BURROW_COMM_STAGED, false},
		{BURROW_MODEL_GCN, BURROW_COMM_STAGED, true},
		{BURROW_MODEL_SAGE, BURROW_COMM_AUTO, false},
	};
	for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
		int64_t np, np2;
		double va_cpu, va_gpu;
		float *ref = train_delta(parts, v[k].model, NULL, BURROW_COMM_MPI, v[k].grad_overlap, &np, &va_cpu);
		float *got = train_delta(parts, v[k].model, device, v[k].comm, v[k].grad_overlap, &np2, &va_gpu);
		if (np != np2)
			die("gpu", "the GPU's model has another number of weights");
		double num = 0, den = 0;
		for (int64_t i = 0; i < np; i++) {
			num += ((double)got[i] - ref[i]) * ((double)got[i] - ref[i]);
			den += (double)ref[i] * ref[i];
		}
		const double rel = sqrt(num / (den > 0 ? den : 1e-30));
		char msg[200];
		if (!(den > 0) || !(rel <= 1e-4)) {
			snprintf(msg, sizeof msg, "%s (comm %s): the weights moved %.3g (normwise relative) from the CPU's",
				 burrow_model_name(v[k].model), burrow_comm_name(v[k].comm), rel);
			die("gpu", msg);
		}
		if (!(fabs(va_gpu - va_cpu) <= 0.01)) {
			snprintf(msg, sizeof msg, "%s (comm %s): valid accuracy %.4f on the GPU, %.4f on the CPU",
				 burrow_model_name(v[k].model), burrow_comm_name(v[k].comm), va_gpu, va_cpu);
			die("gpu", msg);
		}
		if (rank == 0)
			printf("distmb-check: gpu: %s (comm %s%s) trains as on the CPU: weights %.2g relative, valid %.4f vs "
			       "%.4f\n",
			       burrow_model_name(v[k].model), burrow_comm_name(v[k].comm),
			       v[k].grad_overlap ? ", gradients per layer" : "", rel, va_gpu, va_cpu);
		free(ref);
		free(got);
	}
}

int main(int argc, char **argv)
{
	const bool gpu = argc == 3 && !strcmp(argv[2], "gpu");
	if (gpu)
		argc--;
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = 1000;
	g.avg_degree = 30; /* rows both shorter and longer than the fanouts */
	g.feat_dim = 6;
	g.num_classes = 3;
	char data[4096], parts[4096];
	check_setup(&argc, &argv, "distmb-check", &g, data, parts);
	const char *dry = getenv("DISTMB_DEVICE"); /* cpu: the gpu mode's checks on the CPU device (a dry run) */
	if (gpu && dry && !strcmp(dry, "cpu")) {
		device = "cpu";
	} else if (gpu) {
		const bw_backend_reg *cu = bw_backend_find(BW_BACKEND_CUDA);
		if (!cu || cu->devices() < 1) {
			if (rank == 0)
				printf("[SKIP] distmb-check: mini-batch training on a GPU: no device (%s)\n",
				       cu ? "the CUDA runtime sees no GPU" : "this build has no CUDA");
			MPI_Finalize();
			return 0;
		}
		device = "cuda";
	}
	check_sampling(data, parts);
	check_exact_step(parts, BURROW_MODEL_GCN);
	check_exact_step(parts, BURROW_MODEL_SAGE);
	check_replicas(parts);
	if (gpu) {
		check_gpu_equals_cpu(parts);
		if (rank == 0)
			printf("distmb-check: gpu: every check passes on %s\n", device);
	}
	MPI_Finalize();
	return 0;
}
