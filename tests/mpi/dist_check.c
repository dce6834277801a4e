/* dist_check.c: run under mpirun by tests/test_mpi.c with a scratch directory: partition-
 * parallel full-graph forward and backward equal the single-process computation on the
 * unpartitioned graph (loss, logits and gradients within 1e-5 normwise relative) with the
 * halo exchange overlapped or not (--no-overlap), the gradient all-reduce bucketed or not,
 * over the MPI or the staged communicator; the exchanged halo rows equal their owners' rows;
 * the bucketed all-reduce equals one all-reduce and a slow sum of every rank's gradients;
 * after training with dropout the replicas are identical; layer 0 multiplied sparse
 * (--sparse-input on) matches the dense single-process run too. With a second argument "gpu" it
 * runs the same comparison with the model on a GPU (--device cuda: staged, and auto), and
 * says [SKIP] when this machine has none. */
#include "../../train/dist/dist.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* max |a - b| over max |b|: the normwise relative difference */
static double rel_diff(const float *a, const float *b, int64_t n)
{
	double num = 0, den = 1e-30;
	for (int64_t i = 0; i < n; i++) {
		num = fmax(num, fabs((double)a[i] - b[i]));
		den = fmax(den, fabs((double)b[i]));
	}
	return num / den;
}

/* The single-process reference: the whole graph as one block, same seed, same options. */
typedef struct ref {
	bw_model *m;
	bw_block blk;
	float *norm;
	bw_tensor x, glogits;
	const bw_tensor *logits;
	double loss;
} ref;

static void reference(ref *r, const char *dir, const burrow_train_opts *o, burrow_dataset **dsp)
{
	burrow_dataset *ds;
	if (burrow_dataset_open(&ds, dir))
		die("open", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const burrow_csr *g = burrow_dataset_graph(ds);
	bw_npy h;
	void *feat;
	if (bw_npy_load(burrow_dataset_features_path(ds), &h, &feat))
		die("features", burrow_last_error());
	r->x = bw_tensor_view(NULL, feat, in->num_nodes, in->feat_dim);
	bw_block_init(&r->blk, in->num_nodes, in->num_nodes, g->indptr, g->indices);
	if (o->model == BURROW_MODEL_GCN) {
		r->norm = malloc((size_t)in->num_nodes * sizeof *r->norm);
		bw_gcn_norm_from_csr(g, NULL, in->num_nodes, r->norm, 1);
		r->blk.dst_norm = r->blk.src_norm = r->norm;
	}
	if (o->model != BURROW_MODEL_MLP && bw_block_prepare(&r->blk, true, o->model == BURROW_MODEL_GCN))
		die("prepare", burrow_last_error());
	bw_model_cfg cfg = {.kind = o->model, .layers = o->layers, .in_dim = in->feat_dim, .hidden = o->hidden,
			    .classes = in->num_classes, .dropout = 0};
	if (bw_model_open(&r->m, NULL, &cfg, o->seed))
		die("model", burrow_last_error());
	bw_backend be;
	bw_backend_init(&be, BW_BACKEND_CPU, 1);
	bw_batch b = {.num_blocks = o->layers, .x = r->x, .labels = burrow_dataset_labels(ds)};
	for (int l = 0; l < o->layers; l++)
		b.blocks[l] = &r->blk;
	b.loss_rows = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &b.num_loss_rows);
	if (bw_model_forward(&be, r->m, &b, false, o->seed, &r->logits))
		die("reference forward", burrow_last_error());
	bw_loss ld, ls;
	memset(&r->glogits, 0, sizeof r->glogits);
	bw_tensor_reshape(&r->glogits, NULL, r->logits->rows, r->logits->cols);
	if (bw_nll_loss(&be, r->logits, b.labels, b.loss_rows, b.num_loss_rows, &r->glogits, &ld) ||
	    bw_loss_read(&be, &ld, &ls) ||
	    bw_model_backward(&be, r->m, &b, &r->glogits))
		die("reference backward", burrow_last_error());
	r->loss = ls.loss;
	*dsp = ds;
}

/* n floats of device memory of d's backend in new host memory (free with free). */
static float *host_copy(const burrow_dist *d, const float *p, int64_t n)
{
	float *h = malloc((size_t)(n ? n : 1) * sizeof *h);
	if (n && bw_device_download(d->be.dev, h, p, (size_t)n * sizeof *h))
		die("download", burrow_last_error());
	return h;
}

/* How one run is set up beside the single-process reference. */
typedef struct variant {
	int model, layers;
	bool grad_overlap;    /* the all-reduce per layer, overlapped with the backward of the layers below */
	bool no_overlap;      /* the serialized baseline: post, wait, then aggregate */
	int comm;             /* enum burrow_comm_kind */
	const char *device;   /* NULL: the CPU */
	bool sparse;          /* --sparse-input on: layer 0 multiplies the part's features sparse */
} variant;

static void check_model_v(const char *data, const char *parts, variant v)
{
	const int model = v.model;
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.model = model;
	o.train.layers = v.layers;
	o.train.hidden = 16;
	o.train.dropout = 0;
	o.train.threads = 1;
	o.train.seed = 5;
	o.grad_overlap = v.grad_overlap;
	o.overlap = !v.no_overlap;
	o.comm = v.comm;
	if (v.device)
		o.train.device = v.device;
	o.train.sparse_input = v.sparse ? BURROW_SPARSE_ON : BURROW_SPARSE_AUTO;
	ref r = {0};
	burrow_dataset *ds;
	reference(&r, data, &o.train, &ds);
	burrow_dist *d;
	if (burrow_dist_open(&d, parts, &o))
		die("dist open", burrow_last_error());
	const bw_tensor *logits;
	double loss, acc;
	if ((d->x0.sp != NULL) != (v.sparse && !v.device))
		die(burrow_model_name(model), v.sparse ? "--sparse-input on left the features dense"
						       : "auto made the Gaussian features sparse");
	if (bw_dist_forward_backward(d, true, &logits, &loss, &acc))
		die("dist forward/backward", burrow_last_error());
	/* new global id -> input id, for every node */
	const burrow_parts_info *pi = burrow_parts_get_info(d->parts);
	int64_t N = pi->num_nodes, *orig = malloc((size_t)N * sizeof *orig);
	int *cnt = malloc((size_t)K * sizeof *cnt), *dsp = malloc((size_t)K * sizeof *dsp);
	for (int j = 0; j < K; j++) {
		cnt[j] = (int)(pi->node_offsets[j + 1] - pi->node_offsets[j]);
		dsp[j] = (int)pi->node_offsets[j];
	}
	MPI_Allgatherv(d->pi->orig_ids, (int)d->n_own, MPI_INT64_T, orig, cnt, dsp, MPI_INT64_T, MPI_COMM_WORLD);
	/* logits of the owned rows */
	const int64_t C = logits->cols;
	float *want = malloc((size_t)(d->n_own * C) * sizeof *want);
	for (int64_t v = 0; v < d->n_own; v++)
		memcpy(want + v * C, r.logits->data + d->pi->orig_ids[v] * C, (size_t)C * sizeof(float));
	float *got = host_copy(d, logits->data, d->n_own * C);
	double e = rel_diff(got, want, d->n_own * C);
	free(got);
	char msg[160];
	if (!(e <= 1e-5)) {
		snprintf(msg, sizeof msg, "logits differ from the single-process ones by %.3g (relative)", e);
		die(burrow_model_name(model), msg);
	}
	if (!(fabs(loss - r.loss) <= 1e-5 * fabs(r.loss))) {
		snprintf(msg, sizeof msg, "loss %.9g, single process %.9g", loss, r.loss);
		die(burrow_model_name(model), msg);
	}
	/* the halo rows of layer 1's input are their owners' layer-0 outputs */
	if (model != BURROW_MODEL_MLP) {
		const int64_t H = d->in[1].cols;
		float *in1 = host_copy(d, d->in[1].data, d->n_loc * H);
		for (int64_t k = 0; k < d->n_halo; k++) {
			int64_t o_id = orig[d->pi->halo_ids[k]];
			if (rel_diff(in1 + (d->n_own + k) * H, r.m->h[0].data + o_id * H, H) > 1e-5)
				die(burrow_model_name(model), "a halo row differs from its owner's row");
		}
		free(in1);
	}
	/* the all-reduced gradients are the single-process gradients */
	float *grads = host_copy(d, d->model->grads, d->model->num_params);
	e = rel_diff(grads, r.m->grads, d->model->num_params);
	free(grads);
	if (!(e <= 1e-5)) {
		snprintf(msg, sizeof msg, "gradients differ from the single-process ones by %.3g (relative)", e);
		die(burrow_model_name(model), msg);
	}
	if (rank == 0)
		printf("dist-check: %s: logits and gradients match the single-process run%s%s%s%s%s%s (comm %s)\n",
		       burrow_model_name(model), v.grad_overlap ? " (gradients all-reduced per layer, overlapped)" : "",
		       v.no_overlap ? " (no overlap)" : "", v.device ? " on " : "", v.device ? d->be.dev->name : "",
		       v.layers != 2 ? ", 3 layers" : "", v.sparse ? " (sparse input)" : "",
		       burrow_comm_name(burrow_dist_comm(d)));
	burrow_dist_close(d);
	bw_model_close(r.m);
	bw_block_release(&r.blk);
	bw_tensor_free(&r.glogits);
	bw_free(r.x.data);
	free(r.norm);
	free(orig);
	free(cnt);
	free(dsp);
	free(want);
	burrow_dataset_close(ds);
}

static void check_model(const char *data, const char *parts, int model, bool grad_overlap)
{
	check_model_v(data, parts, (variant){.model = model, .layers = 2, .grad_overlap = grad_overlap});
}

/* Rank r's gradient element i: distinct per rank and element, exact in float. */
static float grad_of(int r, int64_t i) { return (float)((i * 7 + r * 13) % 101 - 50) / 64.0f; }

/* The bucketed all-reduce (one bucket per layer, posted last layer first) equals one
 * all-reduce of the whole flat buffer and the slow sum of every rank's values, over the
 * communicator of kind `comm` on the CPU device. */
static void check_buckets(int comm)
{
	bw_model_cfg cfg = {.kind = BURROW_MODEL_SAGE, .layers = 3, .in_dim = 7, .hidden = 9, .classes = 4,
			    .norm = BURROW_NORM_BATCH};
	bw_model *m[2];
	bw_comm *c;
	bw_stage stage = {0};
	if (bw_comm_open(&c, comm, NULL) || bw_model_open(&m[0], NULL, &cfg, 1) || bw_model_open(&m[1], NULL, &cfg, 1))
		die("buckets", burrow_last_error());
	const int64_t n = m[0]->num_params;
	for (int k = 0; k < 2; k++)
		for (int64_t i = 0; i < n; i++)
			m[k]->grads[i] = grad_of(rank, i);
	bw_grad_buckets gb;
	bw_grad_buckets_init(&gb);
	for (int l = cfg.layers - 1; l >= 0; l--)
		if (bw_grad_buckets_post(&gb, m[0], l, c))
			die("buckets: post", burrow_last_error());
	if (bw_grad_buckets_wait(&gb) || bw_dist_allreduce_grads(m[1], c, &stage))
		die("buckets: wait", burrow_last_error());
	for (int64_t i = 0; i < n; i++) {
		double ref_sum = 0;
		for (int r = 0; r < K; r++)
			ref_sum += grad_of(r, i);
		if (m[0]->grads[i] != m[1]->grads[i] || fabs(m[0]->grads[i] - ref_sum) > 1e-6 * (1 + fabs(ref_sum)))
			die("buckets", "the bucketed all-reduce differs from one all-reduce or from the sum of the ranks");
	}
	if (rank == 0)
		printf("dist-check: bucketed all-reduce (%s, %lld parameters in %d buckets) equals one all-reduce\n",
		       burrow_comm_name(comm), (long long)n, cfg.layers);
	bw_stage_free(&stage);
	bw_model_close(m[0]);
	bw_model_close(m[1]);
	bw_comm_close(c);
}

/* Training with dropout, in each halo mode and with boundary sampling: the replicas end
 * identical on every rank. */
static void check_replicas(const char *parts, int halo, double boundary_sample, bool grad_overlap)
{
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.layers = 3;
	o.train.hidden = 12;
	o.train.threads = 1;
	o.halo = halo;
	o.boundary_sample = boundary_sample;
	o.grad_overlap = grad_overlap;
	burrow_dist *d;
	if (burrow_dist_open(&d, parts, &o))
		die("dist open", burrow_last_error());
	for (int e = 0; e < 3; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		train_epoch_checked(d, &es);
	}
	burrow_eval_stats ev = {.size = sizeof ev};
	if (burrow_dist_evaluate(d, &ev))
		die("evaluate", burrow_last_error());
	check_replicas_equal(d, "weights differ from rank 0's after training");
	if (rank == 0)
		printf("dist-check: %s halos, boundary sample %g%s: replicas identical after 3 epochs (valid %.3f)\n",
		       halo == BURROW_HALO_STALE ? "stale" : "exact", boundary_sample,
		       grad_overlap ? ", gradients per layer" : "", ev.valid_acc);
	burrow_dist_close(d);
}

/* The model on a GPU (--device cuda: every rank on its node's GPU, shared when the node has
 * fewer GPUs than ranks): staged and auto, overlapped or not, bucketed or not, equal the
 * single-process CPU run; a [SKIP] line without a device. */
static void check_gpu(const char *data, const char *parts)
{
	const bw_backend_reg *cu = bw_backend_find(BW_BACKEND_CUDA);
	if (!cu || cu->devices() < 1) {
		if (rank == 0)
			printf("[SKIP] dist-check: full-graph training on a GPU: no device (%s)\n",
			       cu ? "the CUDA runtime sees no GPU" : "this build has no CUDA");
		return;
	}
	static const int comms[] = {BURROW_COMM_STAGED, BURROW_COMM_AUTO};
	for (int c = 0; c < 2; c++) {
		check_model_v(data, parts, (variant){.model = BURROW_MODEL_SAGE, .layers = 3, .comm = comms[c], .device = "cuda"});
		check_model_v(data, parts, (variant){.model = BURROW_MODEL_SAGE, .layers = 3, .comm = comms[c], .device = "cuda",
						     .no_overlap = true});
		check_model_v(data, parts, (variant){.model = BURROW_MODEL_GCN, .layers = 2, .comm = comms[c], .device = "cuda",
						     .grad_overlap = true});
	}
	if (rank == 0)
		printf("dist-check: gpu: every variant matches the single-process run\n");
}

int main(int argc, char **argv)
{
	bool gpu = argc == 3 && !strcmp(argv[2], "gpu");
	if (gpu)
		argc--;
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = 1200;
	g.avg_degree = 6;
	g.feat_dim = 10;
	g.num_classes = 4;
	char data[4096], parts[4096];
	check_setup(&argc, &argv, "dist-check", &g, data, parts);
	check_model(data, parts, BURROW_MODEL_GCN, false);
	check_model(data, parts, BURROW_MODEL_SAGE, false);
	check_model(data, parts, BURROW_MODEL_MLP, false);
	check_model(data, parts, BURROW_MODEL_GCN, true);
	check_model(data, parts, BURROW_MODEL_SAGE, true);
	if (gpu) {
		check_gpu(data, parts);
		MPI_Finalize();
		return 0;
	}
	/* 3 layers: overlapped (default), serialized, bucketed, and over the staged communicator */
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_SAGE, .layers = 3});
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_SAGE, .layers = 3, .no_overlap = true});
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_SAGE, .layers = 3, .no_overlap = true,
					     .grad_overlap = true});
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_SAGE, .layers = 3, .grad_overlap = true,
					     .comm = BURROW_COMM_STAGED});
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_GCN, .layers = 2, .comm = BURROW_COMM_STAGED});
	/* layer 0 sparse over the part's own and halo rows (sage: the self term through the view of the owned rows) */
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_SAGE, .layers = 3, .sparse = true});
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_GCN, .layers = 2, .sparse = true});
	check_model_v(data, parts, (variant){.model = BURROW_MODEL_MLP, .layers = 2, .sparse = true});
	check_buckets(BURROW_COMM_MPI);
	check_buckets(BURROW_COMM_STAGED);
	check_replicas(parts, BURROW_HALO_EXACT, 1.0, false);
	check_replicas(parts, BURROW_HALO_STALE, 1.0, false);
	check_replicas(parts, BURROW_HALO_EXACT, 0.5, false);
	check_replicas(parts, BURROW_HALO_EXACT, 1.0, true);
	MPI_Finalize();
	return 0;
}
