/* dist_check.c: run under mpirun by tests/test_mpi.c with a scratch directory: partition-
 * parallel full-graph forward and backward equal the single-process computation on the
 * unpartitioned graph (logits and gradients within 1e-5 relative), the exchanged halo rows
 * equal their owners' rows, and after training with dropout the replicas are identical. */
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
	*dsp = ds;
}

/* grad_overlap: the all-reduce per layer, overlapped with the backward of the layers below. */
static void check_model(const char *data, const char *parts, int model, bool grad_overlap)
{
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.model = model;
	o.train.layers = 2;
	o.train.hidden = 16;
	o.train.dropout = 0;
	o.train.threads = 1;
	o.train.seed = 5;
	o.grad_overlap = grad_overlap;
	ref r = {0};
	burrow_dataset *ds;
	reference(&r, data, &o.train, &ds);
	burrow_dist *d;
	if (burrow_dist_open(&d, parts, &o))
		die("dist open", burrow_last_error());
	const bw_tensor *logits;
	double loss, acc;
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
	double e = rel_diff(logits->data, want, d->n_own * C);
	if (!(e <= 1e-5)) {
		char msg[128];
		snprintf(msg, sizeof msg, "logits differ from the single-process ones by %.3g (relative)", e);
		die(burrow_model_name(model), msg);
	}
	/* the halo rows of layer 1's input are their owners' layer-0 outputs */
	if (model != BURROW_MODEL_MLP) {
		const int64_t H = d->in[1].cols;
		for (int64_t k = 0; k < d->n_halo; k++) {
			int64_t o_id = orig[d->pi->halo_ids[k]];
			if (rel_diff(d->in[1].data + (d->n_own + k) * H, r.m->h[0].data + o_id * H, H) > 1e-5)
				die(burrow_model_name(model), "a halo row differs from its owner's row");
		}
	}
	/* the all-reduced gradients are the single-process gradients */
	e = rel_diff(d->model->grads, r.m->grads, d->model->num_params);
	if (!(e <= 1e-5)) {
		char msg[128];
		snprintf(msg, sizeof msg, "gradients differ from the single-process ones by %.3g (relative)", e);
		die(burrow_model_name(model), msg);
	}
	if (rank == 0)
		printf("dist-check: %s: logits and gradients match the single-process run%s\n", burrow_model_name(model),
		       grad_overlap ? " (gradients all-reduced per layer, overlapped)" : "");
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

int main(int argc, char **argv)
{
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
	check_replicas(parts, BURROW_HALO_EXACT, 1.0, false);
	check_replicas(parts, BURROW_HALO_STALE, 1.0, false);
	check_replicas(parts, BURROW_HALO_EXACT, 0.5, false);
	check_replicas(parts, BURROW_HALO_EXACT, 1.0, true);
	MPI_Finalize();
	return 0;
}
