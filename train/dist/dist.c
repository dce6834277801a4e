/* dist.c: partition-parallel full-graph training over bw_comm: every rank trains on its part
 * (owned rows plus a 1-hop halo), exchanging each layer's halo rows with its neighbor parts
 * while the inner rows aggregate, sending halo gradients back to their owners in backward,
 * and all-reducing the weight gradients so the replicas stay identical. */
#include "dist_hmb.h"
#include "dist_mb.h"
#include "node.h"

#include "../../core/half.h"

#include <math.h>
#include <string.h>

void burrow_dist_defaults(burrow_dist_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	burrow_train_defaults(&o->train);
	o->train.full_graph = true;
	o->halo = BURROW_HALO_EXACT;
	o->overlap = true;
	o->boundary_sample = 1.0;
}

static const char *const comm_names[] = {"auto", "mpi", "nccl", "staged"};

int burrow_comm_parse(const char *name)
{
	for (int k = 0; k < (int)(sizeof comm_names / sizeof *comm_names); k++)
		if (!strcmp(name, comm_names[k]))
			return k;
	return -1;
}

const char *burrow_comm_name(int kind)
{
	return kind >= 0 && kind < (int)(sizeof comm_names / sizeof *comm_names) ? comm_names[kind] : "?";
}

/* Whether this run can serve the --comm asked for on its --device, before any work. On the
 * CPU the buffers are host memory: auto is MPI, staged runs its copies through the CPU device
 * (memcpy to pinned host memory and back: a check of that path), and NCCL, which moves GPU
 * buffers only, is refused. On a GPU, MPI (host buffers) is refused; auto, staged and NCCL
 * are resolved by bw_comm_open once the device is open. */
static int check_comm(int asked, const char *device)
{
	int kind, index, st;
	if ((st = bw_device_parse(device, &kind, &index)))
		return st;
	switch (asked) {
	case BURROW_COMM_AUTO:
	case BURROW_COMM_STAGED: return 0;
	case BURROW_COMM_MPI:
		if (kind != BW_BACKEND_CPU)
			return bw_err(BURROW_E_UNSUPPORTED, "train: --comm mpi moves host buffers, but --device %s keeps "
							    "the model on a GPU (use --comm staged, nccl or auto)",
				      device);
		return 0;
	case BURROW_COMM_NCCL:
		if (kind == BW_BACKEND_CPU)
			return bw_err(BURROW_E_UNSUPPORTED,
				      "train: --comm nccl moves GPU buffers, but this run computes on the CPU "
				      "(use --device cuda, or --comm mpi, staged or auto)");
		return 0;
	default: return bw_err(BURROW_E_INVAL, "train: unknown communication kind %d", asked);
	}
}

int burrow_dist_rank(const burrow_dist *d) { return d->rank; }
int burrow_dist_comm(const burrow_dist *d) { return d->comm_kind; }
int burrow_dist_epoch(const burrow_dist *d) { return d->epoch; }
int burrow_dist_size(const burrow_dist *d) { return d->K; }
int burrow_dist_threads(const burrow_dist *d) { return d->threads; }
burrow_best burrow_dist_best(const burrow_dist *d) { return d->best; }
bool burrow_dist_should_stop(const burrow_dist *d) { return bw_habits_stop(&d->habits, &d->o.train); }
double burrow_dist_lr(const burrow_dist *d)
{
	bw_habits h = d->habits;
	return bw_habits_epoch_lr(&h, &d->o.train, d->epoch);
}

/* 0 when the weights cannot be read back from the device (not on the CPU) */
uint64_t burrow_dist_weights_checksum(const burrow_dist *d)
{
	uint64_t h = 0;
	if (d->hmb)
		return bw_dist_hmb_checksum(d);
	return bw_model_checksum(d->model, &h) ? 0 : h;
}

/* Layer 0's input: the part's features hold the owned rows and copies of the halo rows. */
static int load_features(burrow_dist *d, const burrow_dataset *ds)
{
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	if (in->feat_dim < 1)
		return bw_err(BURROW_E_INVAL, "train: part %d has no features", d->rank);
	bw_npy h;
	void *raw;
	int st = bw_npy_load(burrow_dataset_features_path(ds), &h, &raw);
	if (st)
		return st;
	const int64_t n = d->n_loc, dim = in->feat_dim;
	const size_t bytes = (size_t)(n * dim) * sizeof(float);
	bw_stage stage = {0};
	void *host;
	if ((st = bw_tensor_alloc(&d->x0, d->be.dev, n, dim)) ||
	    (st = bw_stage_write(&stage, d->be.dev, d->x0.data, bytes, &host)))
		goto out;
	if (h.dtype == BURROW_DTYPE_F32)
		memcpy(host, raw, bytes);
	else
		bw_f16_to_f32_n(host, raw, (size_t)(n * dim));
	if (d->o.train.normalize_features) /* the part's rows are whole rows: each divided by its sum */
		bw_normalize_rows(host, n, dim, d->threads);
	st = bw_stage_write_commit(&stage, d->be.dev, d->x0.data, host, bytes);
out:
	bw_stage_free(&stage);
	bw_free(raw);
	return st;
}

/* x0's sparse copy for layer 0's products, as one process decides (trainer.c's
 * sparse_features) from the whole graph's density: every rank's owned rows counted and
 * summed, so all ranks decide alike. Full-graph mode trains and evaluates on it; mini-batch
 * mode evaluates on it (the forward over the parts) and its batches follow the same decision
 * (dist_mb.c: each batch's copy). Collective over the host world. */
static int sparse_x0(burrow_dist *d)
{
	const int mode = d->o.train.sparse_input;
	const int64_t n = d->x0.rows, dim = d->x0.cols;
	if (mode == BURROW_SPARSE_OFF || !bw_backend_supports(&d->be, BW_OP_SPMM))
		return 0; /* the same on every rank: the options and the backend's kind are */
	double cnt[2] = {(double)bw_count_nonzero(d->x0.data, d->n_own * dim, d->threads), (double)(d->n_own * dim)};
	int st = bw_comm_allreduce(d->world, NULL, cnt, 2, BW_COMM_F64, BW_COMM_SUM, "train: all-reduce (non-zeros)");
	const double density = cnt[1] > 0 ? cnt[0] / cnt[1] : 1.0;
	if (st || (mode == BURROW_SPARSE_AUTO && density > BURROW_SPARSE_AUTO_DENSITY))
		return st;
	if ((st = bw_sparse_build(&d->x0_sp, d->x0.data, n, dim, d->threads)))
		return st;
	d->x0.sp = &d->x0_sp;
	if (d->rank == 0)
		bw_log(BURROW_LOG_INFO, "the features are %.2f%% non-zero: the first layer multiplies %s sparse",
		       100 * density, d->o.train.full_graph ? "them" : "each batch's rows");
	return 0;
}

/* GCN norms 1/sqrt(deg + 1) with every node's degree in the whole graph: owned rows are
 * full input rows; the halo nodes' degrees come from their owners (an exchange of one
 * column). */
static int make_norms(burrow_dist *d)
{
	d->norm = bw_malloc((size_t)(d->n_loc ? d->n_loc : 1) * sizeof *d->norm);
	if (!d->norm)
		return BURROW_E_NOMEM;
	for (int64_t v = 0; v < d->n_own; v++)
		d->norm[v] = (float)(d->blk.indptr[v + 1] - d->blk.indptr[v]);
	/* the exchange moves device memory: the degrees go there and back (on the CPU, in place) */
	const size_t bytes = (size_t)(d->n_loc ? d->n_loc : 1) * sizeof *d->norm;
	bw_dbuf deg = {0};
	int st = bw_dbuf_from_host(&deg, d->be.dev, d->norm, bytes);
	if (!st)
		st = bw_halo_forward_start(d->halo, deg.ptr, 1);
	if (!st)
		st = bw_halo_wait(d->halo);
	if (!st && deg.ptr != (void *)d->norm)
		st = bw_device_download(d->be.dev, d->norm, deg.ptr, bytes);
	bw_dbuf_free(&deg);
	for (int64_t v = 0; !st && v < d->n_loc; v++)
		d->norm[v] = 1.0f / sqrtf(d->norm[v] + 1.0f);
	d->blk.dst_norm = d->norm;
	d->blk.src_norm = d->norm;
	return st;
}

/* This rank's compute threads: the option when set, else the node's CPUs divided by the
 * ranks on the node (at least 1), so the ranks of one machine share its cores instead of
 * each taking all of them; and its place among the node's ranks. Collective. */
static int compute_threads(burrow_dist *d, int *threads)
{
	bw_node_share ns;
	int st = bw_node_share_get(d->world, &ns);
	if (st)
		return st;
	d->local_rank = ns.local;
	*threads = d->o.train.threads;
	if (*threads > 0) {
		bw_log(BURROW_LOG_DEBUG, "train: rank %d: %d compute threads (as asked: train.threads, --threads)", d->rank,
		       *threads);
		return 0;
	}
	*threads = ns.threads;
	bw_log(BURROW_LOG_DEBUG, "train: rank %d: %d compute threads (%d CPUs for %d ranks on this node, %d for this rank)",
	       d->rank, ns.threads, ns.cores, ns.ranks, ns.own);
	return 0;
}

int burrow_dist_check(const burrow_dist_opts *opts)
{
	burrow_dist_opts oo;
	const burrow_dist_opts *o = &oo;
	burrow_dist_defaults(&oo);
	int st = bw_opts_in(&oo, sizeof oo, opts, "burrow_dist_opts");
	if (st || (st = bw_opts_in(&oo.train, sizeof oo.train, &opts->train, "burrow_dist_opts.train")))
		return st;
	if (!(o->boundary_sample > 0.0 && o->boundary_sample <= 1.0))
		return bw_err(BURROW_E_INVAL, "train: boundary sample fraction %g outside (0, 1]", o->boundary_sample);
	if (o->boundary_sample < 1.0 && o->halo == BURROW_HALO_STALE)
		return bw_err(BURROW_E_INVAL, "train: boundary sampling and stale halos do not combine: choose one");
	if (o->train.eval_splits & ~(unsigned)BURROW_EVAL_ALL)
		return bw_err(BURROW_E_INVAL, "train: eval_splits %#x has bits beyond BURROW_EVAL_ALL", o->train.eval_splits);
	if ((st = bw_habits_check(&o->train)))
		return st;
	if (o->train.task == BURROW_TASK_LINK && o->train.full_graph)
		return bw_err(BURROW_E_UNSUPPORTED, "train: link prediction under mpirun trains in mini-batches (no "
			      "--full-graph) in this version");
	if (o->train.task == BURROW_TASK_LINK && (o->train.neg < 0 || o->train.neg > 1024))
		return bw_err(BURROW_E_INVAL, "train: --neg %d: want 0 .. 1024 negatives", o->train.neg);
	if (o->train.task == BURROW_TASK_MULTILABEL)
		return bw_err(BURROW_E_UNSUPPORTED, "train: multi-label training runs in one process in this version "
			      "(distributed training classifies nodes)");
	int kind, index;
	if ((st = bw_device_parse(o->train.device, &kind, &index)))
		return st;
	/* boundary sampling's selection and 1/p scaling of the halo rows run on host memory */
	if (kind != BW_BACKEND_CPU && o->boundary_sample < 1.0)
		return bw_err(BURROW_E_UNSUPPORTED, "train: --boundary-sample is not supported on GPUs in this version "
						    "(its halo selection runs on host memory): drop it, or use --device cpu "
						    "instead of --device %s",
			      o->train.device);
	if ((st = check_comm(o->comm, o->train.device)))
		return st;
	/* a missing GPU is known before MPI starts */
	return kind == BW_BACKEND_CPU ? 0 : burrow_device_check(o->train.device);
}

/* Every rank learns whether every rank succeeded before the next collective (a rank that
 * failed alone would leave the others waiting in it): the lowest status wins; a rank that
 * succeeded reports the failure of another. Collective over the host world. */
static int agree(burrow_dist *d, int st, const char *what)
{
	int all = st;
	int rc = bw_comm_allreduce(d->world, NULL, &all, 1, BW_COMM_INT, BW_COMM_MIN, "train: all-reduce (status)");
	if (rc)
		return rc;
	if (all && !st)
		return bw_err(all, "train: another rank could not %s (its message is on its output)", what);
	return st;
}

/* The compute backend of --device: the CPU, or a GPU: cuda:N as named, and plain `cuda` the
 * node's GPU number (local rank mod the GPUs it has), so the ranks of a node spread over its
 * GPUs and share them when there are more ranks than GPUs. */
static int open_backend(burrow_dist *d)
{
	int kind, index, st;
	if ((st = bw_device_parse(d->o.train.device, &kind, &index)))
		return st;
	if (kind == BW_BACKEND_CPU)
		return bw_backend_init(&d->be, BW_BACKEND_CPU, d->threads);
	if ((st = burrow_device_check(d->o.train.device)))
		return st;
	if (!strchr(d->o.train.device, ':'))
		index = d->local_rank % bw_backend_find(kind)->devices();
	const bw_backend_cfg cfg = {.index = index, .threads = d->threads, .tf32 = d->o.train.tf32};
	const burrow_train_opts *t = &d->o.train;
	const bw_model_cfg need = {.kind = t->model, .layers = t->layers, .aggr = t->aggr, .norm = t->norm};
	if ((st = bw_backend_open(&d->be, kind, &cfg)) || (st = bw_model_supported(&d->be, &need)))
		return st;
	bw_log(BURROW_LOG_DEBUG, "train: rank %d (local %d) computes on %s", d->rank, d->local_rank, d->be.dev->name);
	return 0;
}

/* burrow_dist_open's phases: each fills d, and on failure leaves what it acquired there for
 * burrow_dist_close, which is safe on a partly opened d. */

/* The world, the parts directory and this rank's part: sizes, labels, the local graph. */
static int open_part(burrow_dist *d, const char *parts_dir)
{
	int st;
	if ((st = bw_comm_world(&d->world)))
		return st;
	d->rank = bw_comm_rank(d->world);
	d->K = bw_comm_size(d->world);
	if ((st = burrow_parts_open(&d->parts, parts_dir)))
		return st;
	const burrow_parts_info *pinfo = burrow_parts_get_info(d->parts);
	if (pinfo->num_parts != d->K)
		return bw_err(BURROW_E_INVAL, "%s: holds %d parts, but %d ranks were started (mpirun -np %d)", parts_dir,
			      pinfo->num_parts, d->K, pinfo->num_parts);
	if ((d->typed = pinfo->num_types > 0)) /* typed parts: dist_hmb.c opens this rank's */
		return 0;
	if ((st = burrow_part_open(&d->part, d->parts, d->rank)))
		return st;
	d->pi = burrow_part_get_info(d->part);
	const burrow_dataset *ds = burrow_part_dataset(d->part);
	const burrow_csr *g = burrow_dataset_graph(ds);
	d->n_own = d->pi->num_owned;
	d->n_halo = d->pi->num_halo;
	d->n_loc = d->n_own + d->n_halo;
	if (burrow_dataset_get_info(ds)->num_tasks > 0)
		return bw_err(BURROW_E_UNSUPPORTED, "train: part %d is multi-label: multi-label training runs in one process in "
			      "this version (distributed training classifies nodes)", d->rank);
	d->classes = burrow_dataset_get_info(ds)->num_classes;
	d->labels = burrow_dataset_labels(ds);
	const int task = d->o.train.task;
	d->link = task == BURROW_TASK_LINK || (task == BURROW_TASK_AUTO && (!d->labels || d->classes < 1) &&
					       burrow_dataset_has_edge_split(ds));
	if (d->link && !burrow_dataset_has_edge_split(ds))
		return bw_err(BURROW_E_INVAL, "train: part %d has no edge splits: --task link needs a link dataset's parts",
			      d->rank);
	if (d->link && d->o.train.full_graph)
		return bw_err(BURROW_E_UNSUPPORTED, "train: part %d is a link dataset: link prediction under mpirun trains "
			      "in mini-batches (no --full-graph) in this version", d->rank);
	if (d->link)
		d->classes = d->o.train.hidden; /* the encoder's embeddings */
	else if (!d->labels || d->classes < 1)
		return bw_err(BURROW_E_INVAL, "train: part %d has no labels", d->rank);
	if (g->index_width != 4 || g->num_nodes != d->n_loc)
		return bw_err(BURROW_E_FORMAT, "train: part %d: graph of %lld nodes, expected %lld owned + halo", d->rank,
			      (long long)g->num_nodes, (long long)d->n_loc);
	return 0;
}

/* The block over the local graph, its rows split at the halo (owned sources early, halo
 * sources late); the splits, and the training nodes of all ranks. */
static int open_block(burrow_dist *d)
{
	const burrow_dataset *ds = burrow_part_dataset(d->part);
	const burrow_csr *g = burrow_dataset_graph(ds);
	int st;
	bw_block_init(&d->blk, d->n_own, d->n_loc, g->indptr, g->indices);
	if ((st = bw_block_split(&d->blk, d->n_own)))
		return st;
	for (int s = 0; s < 3; s++)
		d->split[s] = burrow_dataset_split(ds, s, &d->split_n[s]);
	int64_t ntr = d->split_n[BURROW_SPLIT_TRAIN];
	return bw_comm_allreduce(d->world, &ntr, &d->global_train, 1, BW_COMM_I64, BW_COMM_SUM,
				 "train: all-reduce (training nodes)");
}

/* The threads, the device (one per local rank) and the communicator over its buffers. */
static int open_device_comm(burrow_dist *d)
{
	int st = compute_threads(d, &d->threads);
	if (!st)
		st = agree(d, open_backend(d), "open its device");
	if (!st && !(st = bw_comm_open(&d->comm, d->o.comm, d->be.dev)))
		d->comm_kind = bw_comm_kind(d->comm);
	return st;
}

/* The device (one per local rank), then the communicator over its buffers and the halo
 * exchange: the halo rows and the gradients move where the layers compute them. */
static int open_exchange(burrow_dist *d)
{
	/* send lists as local ids of owned rows */
	int64_t *send_local = bw_malloc((size_t)(d->pi->num_send ? d->pi->num_send : 1) * sizeof *send_local);
	if (!send_local)
		return BURROW_E_NOMEM;
	for (int64_t k = 0; k < d->pi->num_send; k++)
		send_local[k] = d->pi->send_ids[k] - d->pi->first_id;
	int st = open_device_comm(d);
	if (!st)
		st = bw_halo_open(&d->halo, d->comm, &d->be, d->n_own, send_local, d->pi->send_offsets,
				  d->pi->halo_offsets);
	bw_free(send_local);
	return st;
}

/* The features, norms and block on the device, the model and its optimizer. */
static int open_model(burrow_dist *d)
{
	const burrow_dataset *ds = burrow_part_dataset(d->part);
	int st;
	/* the halo exchange overlaps each row's early and late sources: gat's edge softmax and
	 * the max aggregator need every source of a row at once */
	if (d->o.train.model == BURROW_MODEL_GAT || (d->o.train.model == BURROW_MODEL_SAGE &&
						     d->o.train.aggr == BURROW_AGGR_MAX))
		return bw_err(BURROW_E_UNSUPPORTED, "train: distributed training supports sage with --aggr mean or sum, gcn "
						    "and mlp, not %s",
			      d->o.train.model == BURROW_MODEL_GAT ? "gat" : "--aggr max");
	if ((st = load_features(d, ds)) || (st = sparse_x0(d)))
		return st;
	if (d->o.train.model == BURROW_MODEL_GCN && (st = make_norms(d)))
		return st;
	if (d->o.train.model != BURROW_MODEL_MLP &&
	    ((st = bw_block_prepare(&d->blk, true, d->o.train.model == BURROW_MODEL_GCN)) ||
	     (st = bw_block_upload(&d->blk, d->be.dev))))
		return st;
	const bw_model_cfg cfg = {
		.kind = d->o.train.model,
		.layers = d->o.train.layers,
		.in_dim = burrow_dataset_get_info(ds)->feat_dim,
		.hidden = d->o.train.hidden,
		.classes = d->classes, /* link: hidden */
		.dropout = (float)d->o.train.dropout,
		.aggr = d->o.train.aggr,
		.heads = d->o.train.heads,
		.attn_dropout = (float)d->o.train.attn_dropout,
		.norm = d->o.train.norm,
		.residual = d->o.train.residual,
	};
	if ((st = bw_dbuf_reserve(&d->loss_dev, d->be.dev, sizeof(bw_loss))) ||
	    (d->labels &&
	     (st = bw_dbuf_from_host(&d->labels_dev, d->be.dev, d->labels, (size_t)d->n_loc * sizeof *d->labels))) ||
	    (st = bw_dbuf_from_host(&d->train_dev, d->be.dev, d->split[BURROW_SPLIT_TRAIN],
				    (size_t)d->split_n[BURROW_SPLIT_TRAIN] * sizeof(int64_t))) ||
	    (st = bw_model_open(&d->model, d->be.dev, &cfg, d->o.train.seed)))
		return st;
	return bw_optim_open(&d->optim, d->be.dev, d->o.train.optimizer, d->model->num_params, d->o.train.lr,
			     d->o.train.weight_decay, d->o.train.momentum);
}

/* Typed parts: the device and the communicator, then the typed trainer (dist_hmb.c). */
static int open_typed(burrow_dist *d, const char *parts_dir)
{
	int st = open_device_comm(d);
	if (!st)
		st = agree(d, bw_dist_hmb_open(d, parts_dir), "open its typed part");
	if (!st) {
		int64_t ntr;
		bw_dist_hmb_train(d, &ntr);
		st = bw_comm_allreduce(d->world, &ntr, &d->global_train, 1, BW_COMM_I64, BW_COMM_SUM,
				       "train: all-reduce (training nodes)");
	}
	return st;
}

int burrow_dist_open(burrow_dist **out, const char *parts_dir, const burrow_dist_opts *o)
{
	int st;
	*out = NULL;
	if (!bw_comm_initialized())
		return bw_err(BURROW_E_INVAL, "train: MPI is not initialized (run under mpirun)");
	burrow_dist *d = bw_calloc(1, sizeof *d);
	if (!d)
		return BURROW_E_NOMEM;
	burrow_dist_defaults(&d->o);
	if ((o && (st = bw_opts_in(&d->o, sizeof d->o, o, "burrow_dist_opts"))) ||
	    (st = burrow_dist_check(&d->o))) {
		bw_free(d); /* nothing opened yet: d->o's defaults are no state to close */
		return st;
	}
	d->o.train.scratch_dir = NULL;
	d->best = (burrow_best){.epoch = -1, .valid_acc = -1, .test_acc = -1};
	bw_habits_init(&d->habits, &d->o.train);
	if ((st = open_part(d, parts_dir)) || (d->typed && (st = open_typed(d, parts_dir))) ||
	    (!d->typed && ((st = open_block(d)) || (st = open_exchange(d)) || (st = open_model(d)) ||
			   (!d->o.train.full_graph && (st = bw_dist_mb_open(d))) ||
			   (d->link && (st = bw_dist_link_open(d)))))) {
		burrow_dist_close(d);
		return st;
	}
	*out = d;
	return 0;
}

void burrow_dist_close(burrow_dist *d)
{
	if (!d)
		return;
	bw_dist_link_close(d->lk);
	bw_dist_mb_close(d->mb);
	bw_dist_hmb_close(d->hmb);
	bw_halo_close(d->halo);
	bw_model_close(d->model);
	bw_optim_close(d->optim);
	bw_block_release(&d->blk);
	bw_free(d->norm);
	bw_tensor_free(&d->x0);
	bw_sparse_free(&d->x0_sp);
	bw_dbuf_free(&d->loss_dev);
	bw_dbuf_free(&d->labels_dev);
	bw_dbuf_free(&d->train_dev);
	bw_dbuf_free(&d->pred);
	bw_stage_free(&d->host_view);
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		bw_tensor_free(&d->in[l]);
		bw_tensor_free(&d->stage[l]);
	}
	bw_tensor_free(&d->gbuf[0]);
	bw_tensor_free(&d->gbuf[1]);
	bw_tensor_free(&d->glogits);
	burrow_part_close(d->part);
	burrow_parts_close(d->parts);
	bw_comm_close(d->comm);
	bw_backend_release(&d->be);
	bw_comm_close(d->world);
	bw_free(d);
}

/* ------------------------------------------------------------ forward */

static int halo_poll(void *ctx)
{
	int r = bw_halo_test(ctx);
	return r < 0 ? r : 0;
}

static int halo_wait(void *ctx) { return bw_halo_wait(ctx); }

/* Backward: the halo rows' gradients are final; send them to their owners. */
static int halo_post(void *ctx, const bw_tensor *gx) { return bw_halo_backward_start(ctx, gx->data, gx->cols); }

/* The serialized baseline's backward: send them and wait for what comes back. */
static int halo_post_wait(void *ctx, const bw_tensor *gx)
{
	int st = bw_halo_backward_start(ctx, gx->data, gx->cols);
	return st ? st : bw_halo_wait(ctx);
}
static int no_wait(void *ctx)
{
	(void)ctx;
	return 0;
}

/* Layer l's input: layer l-1's owned output rows, then the halo rows (this epoch's, or in
 * stale mode last epoch's). Posts the exchange that fills the halo rows. */
static int layer_input(burrow_dist *d, int l, const bw_tensor *h_prev, bool stale, bool *posted)
{
	const int64_t dim = h_prev->cols;
	int st;
	*posted = false;
	const bw_device *dev = d->be.dev;
	const size_t own_bytes = (size_t)(d->n_own * dim) * sizeof(float);
	if ((st = bw_tensor_reshape(&d->in[l], dev, d->n_loc, dim)) ||
	    (st = bw_device_copy(dev, d->in[l].data, h_prev->data, own_bytes)))
		return st;
	if (!stale || !d->stale_ready[l]) {
		if ((st = bw_halo_forward_start(d->halo, d->in[l].data, dim)))
			return st;
		*posted = true;
		return 0;
	}
	/* stale: compute with last epoch's halo rows (already in in[l]); this epoch's exchange
	 * runs into stage[l] meanwhile and is copied over when the epoch ends */
	if ((st = bw_tensor_reshape(&d->stage[l], dev, d->n_loc, dim)) ||
	    (st = bw_device_copy(dev, d->stage[l].data, h_prev->data, own_bytes)))
		return st;
	return bw_halo_forward_start(d->halo, d->stage[l].data, dim);
}

/* Stale mode: once backward no longer needs this epoch's inputs, the halo rows that
 * arrived during the epoch become the next epoch's. */
static int apply_stale(burrow_dist *d)
{
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		if (!d->stale_pending[l])
			continue;
		const int64_t dim = d->stage[l].cols;
		int st = bw_device_copy(d->be.dev, d->in[l].data + d->n_own * dim, d->stage[l].data + d->n_own * dim,
					(size_t)(d->n_halo * dim) * sizeof(float));
		if (st)
			return st;
		d->stale_pending[l] = false;
	}
	return 0;
}

static int forward(burrow_dist *d, bool training, const bw_tensor **logits)
{
	const bw_tensor *x = &d->x0;
	const bool stale = training && d->o.halo == BURROW_HALO_STALE;
	int st = 0;
	for (int l = 0; l < d->model->cfg.layers && !st; l++) {
		const bw_tensor *h;
		const uint64_t key = bw_dropout_key(d->o.train.seed, (uint64_t)d->epoch, 0, l);
		bool graph = d->model->cfg.kind != BURROW_MODEL_MLP;
		if (l == 0 || !graph) {
			/* layer 0's halo rows are in the part's features; an MLP reads owned rows only */
			st = bw_model_layer_forward(&d->be, d->model, l, &d->blk, x, training, key, &h);
		} else {
			bool posted;
			bool use_stale = stale && d->stale_ready[l];
			if ((st = layer_input(d, l, x, stale, &posted)))
				break;
			bw_overlap ov = {.poll = halo_poll, .wait = halo_wait, .ctx = d->halo};
			if (use_stale) {
				ov.wait = no_wait; /* the halo rows in in[l] are last epoch's */
			} else if (!d->o.overlap) {
				/* the serialized baseline: wait for the exchange, then compute */
				if ((st = bw_halo_wait(d->halo)))
					break;
				ov.wait = no_wait;
			}
			st = bw_model_layer_forward_overlap(&d->be, d->model, l, &d->blk, &d->in[l], training, key, &ov, &h);
			/* complete the exchange before the next one is posted (in stale mode it has
			 * had the whole layer to arrive) */
			if (!st && (posted || use_stale))
				st = bw_halo_wait(d->halo);
			if (!st && stale) {
				d->stale_pending[l] = use_stale;
				d->stale_ready[l] = true;
			}
		}
		x = h;
	}
	*logits = x;
	return st;
}

int bw_dist_forward(burrow_dist *d, const bw_tensor **logits) { return forward(d, false, logits); }

/* ------------------------------------------------------------ backward */

int bw_dist_forward_backward(burrow_dist *d, bool training, const bw_tensor **logits_out, double *loss_out,
			     double *acc_out)
{
	const bw_tensor *logits;
	int st = forward(d, training, &logits);
	if (st)
		return st;
	*logits_out = logits;
	const int64_t ntr = d->split_n[BURROW_SPLIT_TRAIN];
	double loss = 0;
	int64_t counted = 0, correct = 0;
	if ((st = bw_tensor_reshape(&d->glogits, d->be.dev, logits->rows, logits->cols)))
		return st;
	if (ntr) {
		bw_loss ls;
		if ((st = bw_nll_loss(&d->be, logits, d->labels_dev.ptr, d->train_dev.ptr, ntr, &d->glogits,
				      d->loss_dev.ptr)) ||
		    (st = bw_loss_read(&d->be, d->loss_dev.ptr, &ls)))
			return st;
		loss = ls.loss;
		counted = ls.counted;
		correct = ls.correct;
	} else if ((st = bw_tensor_zero_rows(&d->glogits, 0, logits->rows))) {
		return st;
	}
	/* the loss is the mean over every rank's training rows: weigh this rank's mean */
	double part[3] = {loss * (double)counted, (double)counted, (double)correct}, all[3];
	double t0 = bw_comm_now();
	if ((st = bw_comm_allreduce(d->world, part, all, 3, BW_COMM_F64, BW_COMM_SUM, "train: all-reduce (loss)")))
		return st;
	d->reduce_s += bw_comm_now() - t0;
	if (counted && all[1] > 0 && (st = bw_scale(&d->be, (float)((double)counted / all[1]), &d->glogits)))
		return st;
	*loss_out = all[1] > 0 ? all[0] / all[1] : 0;
	*acc_out = all[1] > 0 ? all[2] / all[1] : 0;
	if (!isfinite(*loss_out))
		return bw_err(BURROW_E_RANGE, "train: loss is NaN at epoch %d, batch 1", d->epoch + 1);

	bw_tensor *gh = &d->glogits;
	const int L = d->model->cfg.layers;
	const bool graph = d->model->cfg.kind != BURROW_MODEL_MLP;
	/* replicas stay identical: every rank applies the same summed gradient; with
	 * grad_overlap each layer's gradients are summed while the layers below run backward
	 * (--no-overlap: the serialized baseline, one all-reduce after the whole backward) */
	const bool bucketed = d->o.grad_overlap && d->o.overlap;
	bw_grad_buckets gb;
	bw_grad_buckets_init(&gb);
	for (int l = L - 1; l >= 0; l--) {
		bw_tensor *gx = l > 0 ? &d->gbuf[l % 2] : NULL;
		const bw_tensor *x = l == 0 ? &d->x0 : (graph ? &d->in[l] : bw_model_output(d->model, l - 1));
		/* the halo rows' gradients go back to their owners, posted as soon as they are
		 * final, and add up there once the layer's other gradients are done */
		bw_overlap ov = {.poll = halo_poll, .post = d->o.overlap ? halo_post : halo_post_wait, .ctx = d->halo};
		if ((st = bw_model_layer_backward_overlap(&d->be, d->model, l, &d->blk, x, gh, gx,
							  gx && graph ? &ov : NULL)))
			goto out_wait;
		if (bucketed && (st = bw_grad_buckets_post(&gb, d->model, l, d->comm)))
			goto out_wait;
		if (!gx)
			break;
		if (graph && (st = bw_halo_backward_finish(d->halo, gx->data)))
			goto out_wait;
		gx->rows = d->n_own; /* layer l-1's output: the owned rows */
		gh = gx;
	}
	t0 = bw_comm_now();
	st = bucketed ? bw_grad_buckets_wait(&gb) : bw_dist_allreduce_grads(d->model, d->comm, &d->host_view);
	d->reduce_s += bw_comm_now() - t0;
	return st ? st : apply_stale(d);
out_wait:
	bw_grad_buckets_wait(&gb); /* what was posted completes on every rank */
	return st;
}

static int train_epoch(burrow_dist *d, burrow_epoch_stats *st_out, burrow_comm_stats *cs)
{
	if (d->hmb)
		return bw_dist_hmb_epoch(d, st_out, cs);
	if (d->lk)
		return bw_dist_link_epoch(d, st_out, cs);
	if (d->mb)
		return bw_dist_mb_epoch(d, st_out, cs);
	double t0 = bw_comm_now(), r0 = d->reduce_s;
	bw_halo_stats hs0;
	bw_halo_get_stats(d->halo, &hs0);
	const bw_tensor *logits;
	double loss, acc;
	const double p = d->o.boundary_sample;
	int st = 0;
	if (p < 1.0) /* this epoch's boundary sample, the same decision on both sides of each edge */
		st = bw_halo_sample(d->halo, p, bw_key(d->o.train.seed ^ 0xB0B5ull, (uint64_t)d->epoch), d->pi->send_ids,
				    d->pi->halo_ids);
	if (!st)
		st = bw_dist_forward_backward(d, true, &logits, &loss, &acc);
	if (p < 1.0) { /* evaluation sees every boundary node */
		int st2 = bw_halo_sample(d->halo, 1.0, 0, NULL, NULL);
		st = st ? st : st2;
	}
	if (!st)
		st = bw_optim_step(&d->be, d->optim, d->model->params, d->model->grads);
	if (st)
		return st;
	bw_halo_stats hs1;
	bw_halo_get_stats(d->halo, &hs1);
	d->epoch++;
	double t1 = bw_comm_now();
	if (st_out) {
		memset(st_out, 0, sizeof *st_out);
		st_out->epoch = d->epoch;
		st_out->batches = 1;
		st_out->loss = loss;
		st_out->train_acc = acc;
		st_out->cache_hit_rate = -1; /* every row is in memory */
		st_out->epoch_s = t1 - t0;
		st_out->compute_s = t1 - t0 - (hs1.wait_s - hs0.wait_s) - (d->reduce_s - r0);
	}
	if (cs) {
		cs->comm_s = hs1.comm_s - hs0.comm_s + (d->reduce_s - r0);
		cs->exposed_comm_s = hs1.wait_s - hs0.wait_s + (d->reduce_s - r0);
		cs->progress_s = hs1.test_s - hs0.test_s;
	}
	return 0;
}

int burrow_dist_train_epoch(burrow_dist *d, burrow_epoch_stats *es_out, burrow_comm_stats *cs_out)
{
	burrow_epoch_stats es = {.size = sizeof es};
	burrow_comm_stats cs = {.size = sizeof cs};
	int st = bw_stats_check(es_out, "burrow_epoch_stats");
	if (st || (st = bw_stats_check(cs_out, "burrow_comm_stats")))
		return st;
	d->optim->lr = bw_habits_epoch_lr(&d->habits, &d->o.train, d->epoch); /* the same on every rank */
	st = train_epoch(d, &es, &cs);
	bw_stats_out(es_out, &es, sizeof es);
	bw_stats_out(cs_out, &cs, sizeof cs);
	return st;
}

/* The best epoch so far and the habits' view of an evaluation whose valid metric is v (all
 * ranks agree on it). */
static void evaluated(burrow_dist *d, double v, double test)
{
	/* as single-process training: without a valid split the latest evaluation is the best */
	const bool improved = d->best.epoch < 0 || v < 0 || v > d->best.valid_acc;
	bw_habits_evaluated(&d->habits, &d->o.train, v, improved);
	if (improved) {
		d->best.epoch = d->epoch;
		d->best.valid_acc = v;
		d->best.test_acc = test;
	}
}

/* Link prediction's evaluation: the valid split's metric (Hits@K, MRR or AUC) takes the place
 * of the accuracy. */
static int evaluate_link(burrow_dist *d, burrow_eval_stats *ev)
{
	const double t0 = bw_comm_now();
	memset(ev, 0, sizeof *ev);
	int st = bw_dist_link_evaluate(d, ev);
	if (st)
		return st;
	ev->eval_s = bw_comm_now() - t0;
	evaluated(d, ev->valid_acc, ev->test_acc);
	return 0;
}

/* Typed parts: sampled evaluation of the target type's splits (valid and test unless asked). */
static int evaluate_typed(burrow_dist *d, burrow_eval_stats *ev)
{
	const double t0 = bw_comm_now();
	const unsigned want = d->o.train.eval_splits ? d->o.train.eval_splits : BURROW_EVAL_VALID | BURROW_EVAL_TEST;
	int64_t correct[3], total[3];
	int st = bw_dist_hmb_evaluate(d, want, correct, total);
	if (st)
		return st;
	double acc[3];
	for (int s = 0; s < 3; s++)
		acc[s] = total[s] && (want >> s & 1) ? (double)correct[s] / (double)total[s] : -1;
	memset(ev, 0, sizeof *ev);
	ev->valid_auc = ev->test_auc = -1;
	ev->train_acc = acc[0];
	ev->valid_acc = acc[1];
	ev->test_acc = acc[2];
	ev->eval_s = bw_comm_now() - t0;
	evaluated(d, acc[1], acc[2]); /* all-reduced counts: every rank agrees */
	return 0;
}

static int evaluate(burrow_dist *d, burrow_eval_stats *ev)
{
	if (d->hmb)
		return evaluate_typed(d, ev);
	if (d->lk)
		return evaluate_link(d, ev);
	double t0 = bw_comm_now();
	const bw_tensor *logits;
	int st = bw_dist_forward(d, &logits);
	if (st)
		return st;
	const size_t pbytes = (size_t)(d->n_own ? d->n_own : 1) * sizeof(int32_t);
	const int32_t *pred;
	if ((st = bw_dbuf_reserve(&d->pred, d->be.dev, pbytes)) || (st = bw_argmax(&d->be, logits, d->pred.ptr)) ||
	    (st = bw_stage_read(&d->host_view, d->be.dev, d->pred.ptr, pbytes, (const void **)&pred)))
		return st;
	int64_t cnt[6] = {0}, all[6];
	for (int s = 0; s < 3; s++)
		for (int64_t k = 0; k < d->split_n[s]; k++) {
			int64_t v = d->split[s][k];
			if (d->labels[v] < 0)
				continue;
			cnt[2 * s]++;
			cnt[2 * s + 1] += pred[v] == d->labels[v];
		}
	if ((st = bw_comm_allreduce(d->world, cnt, all, 6, BW_COMM_I64, BW_COMM_SUM, "eval: all-reduce (counts)")))
		return st;
	const unsigned want = d->o.train.eval_splits ? d->o.train.eval_splits : BURROW_EVAL_ALL;
	double acc[3];
	for (int s = 0; s < 3; s++)
		acc[s] = all[2 * s] && (want >> s & 1) ? (double)all[2 * s + 1] / (double)all[2 * s] : -1;
	if (ev) {
		memset(ev, 0, sizeof *ev);
		ev->train_acc = acc[0];
		ev->valid_acc = acc[1];
		ev->test_acc = acc[2];
		ev->eval_s = bw_comm_now() - t0;
	}
	evaluated(d, acc[1], acc[2]); /* all-reduced counts: every rank agrees */
	return 0;
}

int burrow_dist_evaluate(burrow_dist *d, burrow_eval_stats *out)
{
	burrow_eval_stats ev = {.size = sizeof ev};
	int st = bw_stats_check(out, "burrow_eval_stats");
	if (st)
		return st;
	st = evaluate(d, &ev);
	bw_stats_out(out, &ev, sizeof ev);
	return st;
}

/* ------------------------------------------------------------ checkpoints */

static bw_ck_state ck_state(burrow_dist *d)
{
	const burrow_parts_info *pi = burrow_parts_get_info(d->parts);
	return (bw_ck_state){.model = d->model, .optim = d->optim, .seed = &d->o.train.seed,
			     .dropout = d->o.train.dropout, .epoch = &d->epoch, .best = &d->best,
			     .dataset = pi->dataset_name[0] ? pi->dataset_name : "parts", .num_nodes = pi->num_nodes,
			     .habits = &d->habits, .normalize_features = d->o.train.normalize_features};
}

/* Every rank learns rank 0's status; the others name the file and point at rank 0. */
static int rank0_status(burrow_dist *d, int st, const char *path, const char *what)
{
	int rc = bw_comm_bcast(d->world, &st, 1, BW_COMM_INT, 0, "train: broadcast (checkpoint status)");
	if (rc)
		return rc;
	if (st && d->rank != 0)
		return bw_err(st, "%s: rank 0 could not %s the checkpoint (its message is on its output)", path, what);
	return st;
}

int burrow_dist_save(burrow_dist *d, const char *path)
{
	int st = 0;
	if (d->hmb)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: typed training under mpirun does not checkpoint in this version", path);
	if (d->lk) /* the scorer's weights and moments have no place in the checkpoint yet */
		return bw_err(BURROW_E_UNSUPPORTED, "%s: link prediction under mpirun does not checkpoint in this version",
			      path);
	if (d->rank == 0) {
		bw_ck_state s = ck_state(d);
		st = bw_checkpoint_save(&s, path);
	}
	return rank0_status(d, st, path, "write");
}

/* Rank 0's n floats of device memory p to every rank, through host views. */
static int bcast_device(burrow_dist *d, float *p, int n)
{
	void *host;
	const size_t bytes = (size_t)n * sizeof(float);
	int st;
	if (d->rank == 0) {
		if ((st = bw_stage_read(&d->host_view, d->be.dev, p, bytes, (const void **)&host)))
			return st;
	} else if ((st = bw_stage_write(&d->host_view, d->be.dev, p, bytes, &host))) {
		return st;
	}
	if ((st = bw_comm_bcast(d->world, host, n, BW_COMM_F32, 0, "train: broadcast (weights, optimizer)")))
		return st;
	return d->rank == 0 ? 0 : bw_stage_write_commit(&d->host_view, d->be.dev, p, host, bytes);
}

void bw_grad_buckets_init(bw_grad_buckets *g) { memset(g, 0, sizeof *g); }

int bw_grad_buckets_post(bw_grad_buckets *g, bw_model *m, int l, bw_comm *comm)
{
	if (g->n >= BURROW_MAX_LAYERS)
		return bw_err(BURROW_E_INVAL, "train: more gradient buckets than layers");
	if (comm->dev != m->dev)
		return bw_err(BURROW_E_INVAL, "train: gradient buckets: the communicator moves %s buffers, the model is on %s",
			      comm->dev->name, m->dev->name);
	/* the backward's kernels (the device's default order) have written the slice before the
	 * communicator, on its own stream or the host, reads it */
	int st = bw_stream_sync(m->dev, NULL);
	if (st)
		return st;
	/* the layer's whole slice of the flat gradients: its weights, and its norm's scale and shift */
	return bw_comm_iallreduce(comm, m->grads + m->param_off[l], m->param_off[l + 1] - m->param_off[l], BW_COMM_F32,
				  BW_COMM_SUM, &g->req[g->n++], "train: all-reduce (a layer's gradients)");
}

int bw_grad_buckets_wait(bw_grad_buckets *g)
{
	int st = g->n ? bw_comm_wait(g->req, g->n, "train: all-reduce (waiting for the gradients)") : 0;
	g->n = 0;
	return st;
}

int bw_dist_allreduce_grads(bw_model *m, bw_comm *comm, bw_stage *stage)
{
	const size_t bytes = (size_t)m->num_params * sizeof(float);
	const void *rd;
	int st;
	if (comm->dev == m->dev) {
		/* in place on the device, after the kernels that wrote them (the default order) */
		if ((st = bw_stream_sync(m->dev, NULL)))
			return st;
		return bw_comm_allreduce(comm, NULL, m->grads, m->num_params, BW_COMM_F32, BW_COMM_SUM,
					 "train: all-reduce (gradients)");
	}
	/* a host view of the gradients, summed in place over the host communicator */
	if ((st = bw_stage_read(stage, m->dev, m->grads, bytes, &rd)))
		return st;
	void *host = (void *)rd;
	if ((st = bw_comm_allreduce(comm->host, NULL, host, m->num_params, BW_COMM_F32, BW_COMM_SUM,
				      "train: all-reduce (gradients)")))
		return st;
	return bw_stage_write_commit(stage, m->dev, m->grads, host, bytes);
}

int burrow_dist_load(burrow_dist *d, const char *path)
{
	int st = 0;
	if (d->hmb)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: typed training under mpirun does not checkpoint in this version", path);
	if (d->lk)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: link prediction under mpirun does not checkpoint in this version",
			      path);
	if (d->rank == 0) {
		bw_ck_state s = ck_state(d);
		st = bw_checkpoint_load(&s, path);
	}
	if ((st = rank0_status(d, st, path, "read")))
		return st;
	const int k = bw_optim_state_per_param(d->optim), n = (int)d->model->num_params;
	double best[3] = {d->best.valid_acc, d->best.test_acc, d->habits.lr};
	int64_t ints[5] = {d->epoch, d->best.epoch, d->optim->step, d->habits.stale, d->habits.plateau_bad};
	float *state[3] = {d->model->params, d->optim->m, d->optim->v};
	for (int i = 0; i <= k; i++)
		if ((st = bcast_device(d, state[i], n)))
			return st;
	/* the model's own state (a batch norm's running statistics): rank 0's, as its weights */
	if (d->model->num_state > 0 && (st = bcast_device(d, d->model->state, (int)d->model->num_state)))
		return st;
	if ((st = bw_comm_bcast(d->world, ints, 5, BW_COMM_I64, 0, "train: broadcast (epoch)")))
		return st;
	if ((st = bw_comm_bcast(d->world, best, 3, BW_COMM_F64, 0, "train: broadcast (best, lr)")))
		return st;
	if ((st = bw_comm_bcast(d->world, &d->o.train.seed, 1, BW_COMM_U64, 0, "train: broadcast (seed)")))
		return st;
	d->epoch = (int)ints[0];
	d->best = (burrow_best){.epoch = (int)ints[1], .valid_acc = best[0], .test_acc = best[1]};
	d->optim->step = ints[2];
	d->habits = (bw_habits){.base_lr = d->habits.base_lr, .lr = best[2], .stale = (int)ints[3],
				.plateau_bad = (int)ints[4]};
	/* stale halos were last epoch's of the old run: the next epoch exchanges exactly */
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		d->stale_ready[l] = d->stale_pending[l] = false;
	return 0;
}
