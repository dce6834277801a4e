/* htrain.c: training on a typed dataset (format version 2): each type's features through a
 * feature store of its own (or learned embeddings, sparse row updates), the typed sampler's
 * batches through the batch loader, the relational models (hmodel.h), sampled evaluation on
 * the target type (docs/train.md, "Typed graphs"). burrow_trainer_* dispatch here. */
#include "driver.h"
#include "../../sampler/sampler_internal.h"

#include <math.h>
#include <string.h>

int bw_htrain_rel_fanout(const burrow_hetero *h, const char *spec, int layers, burrow_typed_sampler_opts *so)
{
	const char *p = spec;
	while (p && *p) {
		const char *eq = strchr(p, '='), *end = strchr(p, ';');
		if (!end)
			end = p + strlen(p);
		if (!eq || eq > end)
			return bw_err(BURROW_E_INVAL, "train: --rel-fanout '%s': want REL=f0,f1,... per relation", spec);
		int found = -1, matches = 0;
		for (int r = 0; r < h->num_relations; r++) {
			const burrow_relation *rel = &h->rel[r];
			char triple[3 * BURROW_MAX_NAME + 8];
			snprintf(triple, sizeof triple, "%s___%s___%s", h->type_names[rel->src_type], rel->name,
				 h->type_names[rel->dst_type]);
			const size_t n = (size_t)(eq - p);
			if ((strlen(rel->name) == n && !strncmp(rel->name, p, n)) ||
			    (strlen(triple) == n && !strncmp(triple, p, n))) {
				found = r;
				matches++;
			}
		}
		if (matches != 1)
			return bw_err(BURROW_E_INVAL, "train: --rel-fanout: '%.*s' names %s relation of this dataset%s",
				      (int)(eq - p), p, matches ? "more than one" : "no",
				      matches ? " (use src___name___dst)" : "");
		const char *q = eq + 1;
		for (int l = 0; l < layers; l++) {
			char *e;
			long f = strtol(q, &e, 10);
			if (e == q || f < -1 || f > (1 << 30) || (l + 1 < layers ? *e != ',' : (e != end)))
				return bw_err(BURROW_E_INVAL, "train: --rel-fanout '%.*s': want %d fanouts (-1 all, 0 none)",
					      (int)(end - p), p, layers);
			so->rel_fanouts[l][found] = (int)f;
			q = e + 1;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

/* Each type's input width: its features', or its learned embeddings' (opts.embed_dim, else
 * the target type's feature width). */
static int type_widths(bw_htrain *ht, const burrow_train_opts *o)
{
	const burrow_hetero *h = ht->h;
	const int64_t d = o->embed_dim > 0 ? o->embed_dim : ht->ti[h->target_type].feat_dim;
	for (int t = 0; t < h->num_types; t++) {
		ht->in_dim[t] = ht->ti[t].feat_dim > 0 ? ht->ti[t].feat_dim : d;
		if (ht->in_dim[t] < 1)
			return bw_err(BURROW_E_INVAL, "train: --embed-dim must be given when the target type has no features");
	}
	return 0;
}

/* Type t's learned embeddings, N(0, 1) as torch.nn.Embedding's, from the stream (seed, t),
 * with their Adam moments; or a refusal. */
static int open_embeddings(bw_htrain *ht, const burrow_train_opts *o, int t)
{
	const burrow_type_info *ti = &ht->ti[t];
	if (!o->embed_types)
		return bw_err(BURROW_E_INVAL, "%s: node type '%s' has no features and the model reads it: train with "
					      "--embed-types (learned embeddings) or prep with --fill mean",
			      bw_dataset_dir(ht->ds), ti->name);
	if (ht->be->dev->kind != BW_DEVICE_CPU)
		return bw_err(BURROW_E_UNSUPPORTED, "train: learned embeddings (--embed-types) train on the CPU only in "
						    "this version");
	const size_t n = (size_t)ti->num_nodes * (size_t)ht->in_dim[t];
	if (!(ht->emb[t] = bw_malloc(n * sizeof(float) + 1)) || !(ht->emb_m[t] = bw_calloc(n + 1, sizeof(float))) ||
	    !(ht->emb_v[t] = bw_calloc(n + 1, sizeof(float))))
		return BURROW_E_NOMEM;
	bw_rng r;
	bw_rng_seed(&r, bw_key(o->seed ^ 0x656d626564ULL, (uint64_t)t));
	for (size_t i = 0; i < n; i++)
		ht->emb[t][i] = (float)bw_rng_normal(&r);
	return 0;
}

/* Does the model read type t's rows at its input? (An MLP: the target's alone.) */
static bool reads_type(const bw_htrain *ht, int t)
{
	return ht->mlp ? t == ht->h->target_type : bw_hmodel_uses(ht->model, 0, t);
}

/* The rows of each type the model reads at its input: a featured type's through a store of
 * its own (float32 out, a CLOCK cache with its share of the budget), a featureless one's
 * learned embeddings. Types the model never reads get neither. */
static int open_types(bw_htrain *ht, const burrow_train_opts *o)
{
	const burrow_hetero *h = ht->h;
	int st;
	size_t all = 0;
	for (int t = 0; t < h->num_types; t++)
		if (reads_type(ht, t))
			all += (size_t)ht->ti[t].num_nodes * (size_t)ht->ti[t].feat_dim * sizeof(float);
	const size_t budget = bw_trainer_cache_budget(o, ht->be->threads, all);
	ht->cache_budget = budget;
	for (int t = 0; t < h->num_types; t++) {
		const burrow_type_info *ti = &ht->ti[t];
		if (!reads_type(ht, t))
			continue;
		if (ti->feat_dim == 0) {
			if ((st = open_embeddings(ht, o, t)))
				return st;
			continue;
		}
		burrow_store_opts so;
		burrow_store_defaults(&so);
		so.engine = o->store_engine;
		so.out_dtype = BURROW_DTYPE_F32;
		if ((st = burrow_store_open_type(&ht->store[t], ht->ds, t, &so)))
			return st;
		const size_t bytes = (size_t)ti->num_nodes * (size_t)ti->feat_dim * sizeof(float);
		const size_t share = all ? (size_t)((double)budget * (double)bytes / (double)all) : 0;
		if (share > 0 && (st = burrow_store_cache_clock(ht->store[t], share)))
			return st;
		burrow_store_reset_stats(ht->store[t]);
		bw_rows_from_store(&ht->rows[t], ht->store[t]);
		ht->rows_of[t] = &ht->rows[t];
	}
	return 0;
}

/* The typed sampler over the training split, for the seed in force. */
static int open_sampler(bw_htrain *ht, const burrow_train_opts *o)
{
	if (ht->sampler && ht->sampler_seed == o->seed)
		return 0;
	burrow_typed_sampler_close(ht->sampler);
	ht->sampler = NULL;
	int64_t n;
	const int64_t *train = burrow_dataset_split(ht->ds, BURROW_SPLIT_TRAIN, &n);
	if (!train)
		return bw_err(BURROW_E_INVAL, "train: dataset '%s' has no training nodes", ht->info->name);
	burrow_typed_sampler_opts so = ht->so;
	so.seed = o->seed;
	int st = bw_typed_sampler_open_checked(&ht->sampler, ht->h, train, n, &so);
	if (!st)
		ht->sampler_seed = o->seed;
	return st;
}

/* The model: a relational one on every relation, or an MLP on the target's own rows. */
static int open_model(bw_htrain *ht, const burrow_train_opts *o)
{
	const burrow_hetero *h = ht->h;
	const int target = h->target_type;
	if (o->model == BURROW_MODEL_MLP) {
		if (ht->ti[target].feat_dim < 1)
			return bw_err(BURROW_E_INVAL, "%s: an mlp reads the target type's features; '%s' has none",
				      bw_dataset_dir(ht->ds), ht->ti[target].name);
		const bw_model_cfg mc = {
			.kind = BURROW_MODEL_MLP,
			.layers = o->layers,
			.in_dim = ht->in_dim[target],
			.hidden = o->hidden,
			.classes = ht->info->num_classes,
			.dropout = (float)o->dropout,
		};
		int st = bw_model_supported(ht->be, &mc);
		return st ? st : bw_model_open(&ht->mlp, ht->be->dev, &mc, o->seed);
	}
	ht->cfg = (bw_hmodel_cfg){
		.kind = o->model,
		.layers = o->layers,
		.num_types = h->num_types,
		.num_rels = h->num_relations,
		.target = target,
		.hidden = o->hidden,
		.classes = ht->info->num_classes,
		.dropout = (float)o->dropout,
		.heads = o->heads,
		.attn_dropout = (float)o->attn_dropout,
	};
	for (int r = 0; r < h->num_relations; r++) {
		ht->cfg.rel_src[r] = h->rel[r].src_type;
		ht->cfg.rel_dst[r] = h->rel[r].dst_type;
	}
	memcpy(ht->cfg.in_dim, ht->in_dim, sizeof ht->in_dim);
	int st = bw_hmodel_supported(ht->be, &ht->cfg);
	return st ? st : bw_hmodel_open(&ht->model, ht->be->dev, &ht->cfg, o->seed);
}

/* The sampler's options: the fanouts (per relation under opts.rel_fanout), none for a
 * relation the model does not run at a layer, none at all for an MLP. */
static int sampler_opts(bw_htrain *ht, const burrow_train_opts *o)
{
	burrow_typed_sampler_opts *so = &ht->so;
	burrow_typed_sampler_defaults(so);
	so->num_layers = o->layers;
	so->batch_size = o->batch_size;
	so->threads = 1;
	so->labor = o->sampler == BURROW_SAMPLER_LABOR;
	so->labor_star = o->sampler == BURROW_SAMPLER_LABOR_STAR ? BURROW_LABOR_STAR_ROUNDS : 0;
	so->fanout_mode = o->typed_fanout;
	if (o->typed_fanout == BURROW_TYPED_FANOUT_NODE && o->rel_fanout && *o->rel_fanout)
		return bw_err(BURROW_E_INVAL, "train: --rel-fanout sets fanouts per relation; --typed-fanout node draws "
					      "--fanout per node over every relation: give one or the other");
	for (int l = 0; l < o->layers; l++)
		so->fanouts[l] = ht->mlp ? 0 : o->fanout[l] != 0 ? o->fanout[l] : 5 * (o->layers - l);
	int st = ht->mlp ? 0 : bw_htrain_rel_fanout(ht->h, o->rel_fanout, o->layers, so);
	for (int l = 0; !st && !ht->mlp && l < o->layers; l++)
		for (int r = 0; r < ht->h->num_relations; r++)
			if (!bw_hmodel_runs(ht->model, l, r))
				so->rel_fanouts[l][r] = 0;
	return st;
}

/* A loader slot of tb (each type's input rows, float32; the batch as the sampler holds it; the
 * loader's transposed copy of each block, with LABOR-*'s weights' copy) and the step's
 * activations (the model's estimate; an MLP's hidden rows, learned embeddings' rows and
 * gradients), in bytes. */
static void batch_bytes(const bw_htrain *ht, const burrow_train_opts *o, const burrow_typed_batch *tb, double *slot,
			double *act)
{
	double rows = 0, emb = 0, blk = bw_typed_batch_bytes(tb);
	for (int t = 0; t < tb->num_types; t++) {
		const double n = (double)tb->num_nodes[0][t];
		rows += ht->rows_of[t] ? n * (double)ht->in_dim[t] * sizeof(float) : 0;
		emb += ht->emb[t] ? 2 * n * (double)ht->in_dim[t] * sizeof(float) : 0;
	}
	for (int l = 0; l < tb->num_layers; l++)
		for (int r = 0; r < tb->num_relations; r++) {
			const burrow_block *k = &tb->blocks[l][r];
			blk += (double)(k->num_src + 1) * sizeof(int64_t) +
			       (double)BW_MAX(k->num_edges, 1) * (sizeof(int32_t) + (k->edge_weight && ht->star_weights ? sizeof(float) : 0));
		}
	*slot = rows + blk;
	*act = emb + (ht->model ? bw_hmodel_batch_bytes(ht->model, tb->num_nodes, ht->star_weights)
				: 3.0 * (double)tb->num_seeds * (double)BW_MAX(o->hidden, ht->in_dim[ht->h->target_type]) *
					  o->layers * sizeof(float));
}

/* The memory a typed batch may take: --mem, else (host memory) what is available now less the
 * CPU device's margin of 256 MiB, less the feature caches' budget (they fill as they read);
 * -1: no bound known. */
static double batch_room(const bw_htrain *ht, const burrow_train_opts *o)
{
	if (o->mem_bytes > 0)
		return (double)o->mem_bytes - (double)ht->cache_budget;
	const size_t avail = bw_mem_available_at(NULL);
	if (avail == SIZE_MAX)
		return -1;
	return (double)avail - (double)ht->cache_budget - (double)(256u << 20);
}

/* b bytes as "1.23 GiB" or "45.6 MiB" into out[32]. */
static const char *gib_or_mib(double b, char *out)
{
	if (b >= (double)(1u << 30))
		snprintf(out, 32, "%.2f GiB", b / (double)(1u << 30));
	else
		snprintf(out, 32, "%.1f MiB", b / (double)(1u << 20));
	return out;
}

/* Size the loader before anything large is allocated: sample the first training batch (its
 * draws are keyed, so nothing else changes), estimate a slot's bytes and the step's; keep
 * opts.prefetch + 1 slots when they fit the room, else as many as fit (ht->depth lower), else
 * refuse in one line naming the bytes and what to lower. */
static int fit_depth(bw_htrain *ht, const burrow_train_opts *o)
{
	ht->depth = o->prefetch;
	burrow_typed_batch *tb;
	int64_t n = 0;
	if (!burrow_dataset_split(ht->ds, BURROW_SPLIT_TRAIN, &n) || n == 0)
		return 0; /* nothing to train on: refused when an epoch starts, not at open (eval, embed) */
	int st = open_sampler(ht, o);
	if (st || burrow_typed_sampler_num_batches(ht->sampler) == 0 ||
	    (st = burrow_typed_sampler_batch(ht->sampler, 0, 0, &tb)))
		return st;
	batch_bytes(ht, o, tb, &ht->slot_bytes, &ht->act_bytes);
	const double room = batch_room(ht, o), act = ht->be->dev->host_memory ? ht->act_bytes : 0;
	char rows[256] = "";
	for (int t = 0; t < tb->num_types; t++)
		if (tb->num_nodes[0][t] && (ht->rows_of[t] || ht->emb[t]))
			snprintf(rows + strlen(rows), sizeof rows - strlen(rows), "%s%lld %s x %lld", rows[0] ? ", " : "",
				 (long long)tb->num_nodes[0][t], ht->ti[t].name, (long long)ht->in_dim[t]);
	burrow_typed_sampler_release(ht->sampler, tb);
	if (room < 0 || (double)(o->prefetch + 1) * ht->slot_bytes + act <= room)
		return 0;
	char b1[32], b2[32], b3[32], b4[32];
	if (ht->slot_bytes + act > room)
		return bw_err(BURROW_E_NOMEM,
			      "train: a typed batch does not fit: its input rows (%s, float32) and blocks take %s, its "
			      "activations about %s, and %s less the feature cache (%s) is %s: lower --fanout, --layers "
			      "or --batch, use --typed-fanout node, or a smaller --cache",
			      rows, gib_or_mib(ht->slot_bytes, b1), gib_or_mib(act, b2),
			      o->mem_bytes > 0 ? "--mem" : "the memory available", gib_or_mib((double)ht->cache_budget, b4),
			      gib_or_mib(BW_MAX(room, 0), b3));
	ht->depth = (int)((room - act) / ht->slot_bytes) - 1;
	return 0;
}

static int64_t num_params(const bw_htrain *ht)
{
	return ht->mlp ? ht->mlp->num_params : bw_hmodel_num_params(ht->model);
}

int bw_htrain_open(bw_htrain **out, burrow_dataset *ds, const burrow_train_opts *o, const bw_backend *be)
{
	*out = NULL;
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const bool mlp = o->model == BURROW_MODEL_MLP;
	if (!mlp && o->model != BURROW_MODEL_RGCN && o->model != BURROW_MODEL_RSAGE && o->model != BURROW_MODEL_RGAT)
		return bw_err(BURROW_E_INVAL, "%s: a typed dataset (%d node types); train it with --model rgcn, rsage, rgat "
					      "(or mlp on the target type's features), not %s",
			      bw_dataset_dir(ds), h->num_types, burrow_model_name(o->model));
	if (o->full_graph || o->split[0] + o->split[1] + o->split[2] > 0 || o->norm || o->residual)
		return bw_err(BURROW_E_UNSUPPORTED, "train: typed datasets train in mini-batches on their own splits, without "
						    "--norm or --residual, in this version");
	if (h->target_type < 0 || !burrow_dataset_labels(ds))
		return bw_err(BURROW_E_INVAL, "%s: the typed dataset has no labelled target type", bw_dataset_dir(ds));
	bw_htrain *ht = bw_calloc(1, sizeof *ht);
	if (!ht)
		return BURROW_E_NOMEM;
	ht->ds = ds;
	ht->h = h;
	ht->be = be;
	ht->star_weights = o->sampler == BURROW_SAMPLER_LABOR_STAR &&
			   (o->model == BURROW_MODEL_RSAGE || o->model == BURROW_MODEL_RGCN) &&
			   bw_backend_supports(be, BW_OP_EDGE_WEIGHT);
	ht->info = burrow_dataset_get_info(ds);
	int st = 0;
	for (int t = 0; !st && t < h->num_types; t++)
		st = burrow_dataset_type_info(ds, t, &ht->ti[t]);
	if (st || (st = type_widths(ht, o)) || (st = open_model(ht, o)) || (st = open_types(ht, o)) ||
	    (st = sampler_opts(ht, o)) || (st = fit_depth(ht, o)) ||
	    (st = bw_optim_open(&ht->optim, be->dev, o->optimizer, num_params(ht), o->lr, o->weight_decay, o->momentum)) ||
	    (st = bw_dbuf_reserve(&ht->loss_dev, be->dev, sizeof(bw_loss))))
		goto fail;
	const bw_loader_cfg lc = {
		.dev = be->dev,
		.compute = be->stream,
		.depth = ht->depth,
		.thread = true,
		.num_layers = o->layers,
		.dim = 1,
		.labels = burrow_dataset_labels(ds),
		.blocks = true,
		.transpose = true,
		.sampler_weights = ht->star_weights,
	};
	bw_loader_cfg c = lc;
	for (int t = 0; t < h->num_types; t++)
		c.type_dim[t] = ht->rows_of[t] ? ht->in_dim[t] : 0;
	if ((st = bw_loader_open(&ht->loader, &c)))
		goto fail;
	*out = ht;
	return 0;
fail:
	bw_htrain_close(ht);
	return st;
}

void bw_htrain_close(bw_htrain *ht)
{
	if (!ht)
		return;
	bw_loader_close(ht->loader);
	burrow_typed_sampler_close(ht->sampler);
	for (int t = 0; t < BURROW_MAX_TYPES; t++) {
		burrow_store_close(ht->store[t]);
		bw_free(ht->emb[t]);
		bw_free(ht->emb_m[t]);
		bw_free(ht->emb_v[t]);
		bw_tensor_free(&ht->xe[t]);
		bw_tensor_free(&ht->gx[t]);
	}
	bw_hmodel_close(ht->model);
	bw_model_close(ht->mlp);
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		bw_block_release(&ht->mlp_blk[l]);
	bw_free(ht->mlp_indptr);
	bw_optim_close(ht->optim);
	bw_tensor_free(&ht->glogits);
	bw_dbuf_free(&ht->loss_dev);
	bw_free(ht);
}

/* Learned embeddings into the batch: type t's rows of its input nodes (CPU memory). */
static int put_embeddings(bw_htrain *ht, bw_hbatch *hb, const burrow_typed_batch *tb)
{
	for (int t = 0; t < tb->num_types; t++) {
		if (!ht->emb[t])
			continue;
		const int64_t n = tb->num_nodes[0][t], d = ht->in_dim[t];
		int st = bw_tensor_reshape(&ht->xe[t], ht->be->dev, n, d);
		if (st)
			return st;
		for (int64_t i = 0; i < n; i++)
			memcpy(ht->xe[t].data + i * d, ht->emb[t] + tb->input_ids[t][i] * d, (size_t)d * sizeof(float));
		hb->x[t] = bw_tensor_view(ht->be->dev, ht->xe[t].data, n, d);
	}
	return 0;
}

/* Adam on the embedding rows the batch touched (each input id once per type), with the
 * dense optimizer's step count and hyper-parameters (torch.optim.SparseAdam's rule). */
static void embeddings_step(bw_htrain *ht, const burrow_typed_batch *tb, const burrow_train_opts *o)
{
	for (int t = 0; t < tb->num_types; t++)
		if (ht->emb[t])
			bw_emb_adam_rows(ht->emb[t], ht->emb_m[t], ht->emb_v[t], ht->in_dim[t], tb->input_ids[t],
					 tb->num_nodes[0][t], ht->gx[t].data, o->lr, ht->optim->step);
}

/* An MLP's batch: the target's rows (its seeds alone: the sampler draws no neighbor), through
 * blocks without edges whose destinations are those rows. */
static int mlp_batch(bw_htrain *ht, const bw_hbatch *hb, bw_batch *b)
{
	const int target = ht->h->target_type;
	const int64_t n = hb->num_nodes[0][target];
	int st = bw_grow(&ht->mlp_indptr, &ht->mlp_cap, (size_t)n + 1, sizeof *ht->mlp_indptr, true);
	if (st)
		return st;
	*b = (bw_batch){.num_blocks = hb->num_layers, .x = hb->x[target], .labels = hb->labels, .epoch = hb->epoch,
			.index = hb->index};
	for (int l = 0; l < hb->num_layers; l++) {
		bw_block_reuse(&ht->mlp_blk[l], n, n, ht->mlp_indptr, NULL);
		b->blocks[l] = &ht->mlp_blk[l];
	}
	return 0;
}

/* The forward pass of either model: *logits over the batch's seeds. */
static int forward(bw_htrain *ht, bw_loaded *lb, bool training, uint64_t seed, const bw_tensor **logits)
{
	int st = put_embeddings(ht, &lb->hb, lb->tb);
	if (st || !ht->mlp)
		return st ? st : bw_hmodel_forward(ht->be, ht->model, &lb->hb, training, seed, logits);
	return (st = mlp_batch(ht, &lb->hb, &ht->mlp_b)) ? st
							 : bw_model_forward(ht->be, ht->mlp, &ht->mlp_b, training, seed, logits);
}

/* Forward, loss over the seeds, and in training backward and the updates. */
static int hstep(bw_htrain *ht, bw_loaded *lb, bool training, const burrow_train_opts *o, bw_loss *ls)
{
	const bw_backend *be = ht->be;
	const bw_hbatch *hb = &lb->hb;
	const bw_tensor *logits;
	int st;
	if ((st = forward(ht, lb, training, o->seed, &logits)) ||
	    (st = bw_tensor_reshape(&ht->glogits, be->dev, logits->rows, logits->cols)) ||
	    (st = bw_nll_loss(be, logits, hb->labels, NULL, 0, &ht->glogits, ht->loss_dev.ptr)) ||
	    (st = bw_loss_read(be, ht->loss_dev.ptr, ls)) || !training)
		return st;
	if (!isfinite(ls->loss))
		return bw_err(BURROW_E_RANGE, "training loss is %s at epoch %llu, batch %llu; stopped before the update "
					      "(try a lower --lr, or check the features for NaN or Inf)",
			      isnan(ls->loss) ? "NaN" : "infinite", (unsigned long long)hb->epoch + 1,
			      (unsigned long long)hb->index + 1);
	if (ht->mlp)
		return (st = bw_model_backward(be, ht->mlp, &ht->mlp_b, &ht->glogits))
			       ? st
			       : bw_optim_step(be, ht->optim, ht->mlp->params, ht->mlp->grads);
	bool any_emb = false;
	for (int t = 0; t < hb->num_types; t++)
		any_emb |= ht->emb[t] != NULL;
	/* the input gradients of every type (the model's rule), read for the learned ones */
	if ((st = bw_hmodel_backward(be, ht->model, hb, &ht->glogits, any_emb ? ht->gx : NULL)) ||
	    (st = bw_optim_step(be, ht->optim, bw_hmodel_params(ht->model), bw_hmodel_grads(ht->model))))
		return st;
	embeddings_step(ht, lb->tb, o);
	return 0;
}

/* The stores' counters summed over the featured types. */
static void store_totals(const bw_htrain *ht, burrow_store_stats *sum)
{
	memset(sum, 0, sizeof *sum);
	for (int t = 0; t < ht->h->num_types; t++) {
		burrow_store_stats x = {.size = sizeof x};
		if (!ht->store[t])
			continue;
		burrow_store_get_stats(ht->store[t], &x);
		sum->rows += x.rows;
		sum->rows_read += x.rows_read;
		sum->cache_hits += x.cache_hits;
	}
}

int bw_htrain_epoch(bw_htrain *ht, const burrow_train_opts *o, int epoch, burrow_epoch_stats *es)
{
	const double t0 = bw_now_s();
	int st;
	if ((st = open_sampler(ht, o)))
		return st;
	int64_t num = burrow_typed_sampler_num_batches(ht->sampler);
	if (o->max_batches > 0 && o->max_batches < num)
		num = o->max_batches;
	bw_typed_epoch te;
	bw_producer p;
	bw_producer_typed_epoch(&p, &te, ht->sampler, epoch);
	burrow_store_stats s0, s1;
	store_totals(ht, &s0);
	double loss_sum = 0;
	int64_t counted = 0, correct = 0;
	if (!(st = bw_loader_start_typed(ht->loader, &p, ht->rows_of, ht->h->num_types, num)))
		for (int64_t k = 0; !st && k < num; k++) {
			bw_loaded lb;
			st = bw_loader_next(ht->loader, &lb);
			es->sample_s += lb.load_s;
			es->io_wait_s += lb.io_wait_s;
			if (st)
				break;
			lb.hb.epoch = (uint64_t)epoch;
			lb.hb.index = (uint64_t)k;
			const double a = bw_now_s();
			bw_loss ls = {0};
			if (!(st = hstep(ht, &lb, true, o, &ls)))
				st = bw_loader_done(ht->loader);
			es->compute_s += bw_now_s() - a;
			loss_sum += ls.loss;
			counted += ls.counted;
			correct += ls.correct;
			if (!st && o->progress)
				o->progress(o->progress_user, "train", (uint64_t)(k + 1), (uint64_t)num);
		}
	bw_loader_stop(ht->loader);
	if (st)
		return st;
	es->batches = num;
	es->loss = num ? loss_sum / (double)num : 0.0;
	es->train_acc = counted ? (double)correct / (double)counted : -1.0;
	store_totals(ht, &s1);
	const uint64_t rows = s1.rows - s0.rows;
	es->rows_read = (int64_t)(s1.rows_read - s0.rows_read);
	es->cache_hit_rate = rows ? (double)(s1.cache_hits - s0.cache_hits) / (double)rows : -1.0;
	es->epoch_s = bw_now_s() - t0;
	return 0;
}

int bw_htrain_evaluate(bw_htrain *ht, const burrow_train_opts *o, int epoch, unsigned splits, int64_t correct[3],
		       int64_t total[3])
{
	burrow_typed_sampler *s = NULL;
	const int64_t *ids[3] = {NULL, NULL, NULL};
	int64_t n[3] = {0, 0, 0};
	for (int sp = 0; sp < 3; sp++) {
		correct[sp] = total[sp] = 0;
		if (splits >> sp & 1)
			ids[sp] = burrow_dataset_split(ht->ds, sp, &n[sp]);
	}
	burrow_typed_sampler_opts so = ht->so;
	so.seed = o->seed;
	so.labor = false; /* evaluation samples neighbors as the homogeneous one does */
	so.labor_star = 0;
	for (int l = 0; o->eval_fanout[0] && l < o->layers; l++) /* else the training fanouts */
		so.fanouts[l] = ht->cfg.num_rels ? o->eval_fanout[l] : 0;
	int st = bw_typed_sampler_open_checked(&s, ht->h, NULL, 0, &so);
	bw_typed_seed_batches sb;
	bw_producer p;
	bw_producer_typed_seeds(&p, &sb, s, ids, n, o->batch_size);
	if (!st)
		st = bw_loader_start_typed(ht->loader, &p, ht->rows_of, ht->h->num_types, sb.at.count);
	for (int64_t k = 0; !st && k < sb.at.count; k++) {
		bw_loaded lb;
		int sp;
		int64_t first, cnt;
		bw_seed_batch_at(&sb.at, k, &sp, &first, &cnt);
		if ((st = bw_loader_next(ht->loader, &lb)))
			break;
		lb.hb.epoch = (uint64_t)epoch;
		lb.hb.index = (uint64_t)first;
		bw_loss ls = {0};
		if ((st = hstep(ht, &lb, false, o, &ls)) || (st = bw_loader_done(ht->loader)))
			break;
		correct[sp] += ls.correct;
		total[sp] += ls.counted;
		if (o->progress)
			o->progress(o->progress_user, "eval", (uint64_t)(first + cnt), (uint64_t)n[sp]);
	}
	bw_loader_stop(ht->loader); /* before the sampler its batches go back to */
	burrow_typed_sampler_close(s);
	return st;
}

uint64_t bw_htrain_checksum(const bw_htrain *ht)
{
	const float *p = ht->mlp ? ht->mlp->params : bw_hmodel_params((bw_hmodel *)ht->model);
	const int64_t n = num_params(ht);
	if (ht->be->dev->kind != BW_DEVICE_CPU)
		return 0;
	uint64_t hash = 1469598103934665603ULL;
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i < (size_t)n * sizeof(float); i++)
		hash = (hash ^ b[i]) * 1099511628211ULL;
	return hash;
}

/* The model, the types and relations, and the learned tables with their moments, as a
 * checkpoint describes them (checkpoint.c). */
void bw_htrain_ck_typed(bw_htrain *ht, bw_ck_typed *out)
{
	const burrow_hetero *h = ht->h;
	*out = (bw_ck_typed){
		.params = ht->mlp ? ht->mlp->params : bw_hmodel_params(ht->model),
		.num_params = num_params(ht),
		.dev = ht->be->dev,
		.kind = ht->mlp ? BURROW_MODEL_MLP : ht->cfg.kind,
		.layers = ht->so.num_layers,
		.heads = ht->mlp ? 1 : ht->cfg.heads,
		.hidden = ht->mlp ? ht->mlp->cfg.hidden : ht->cfg.hidden,
		.classes = ht->info->num_classes,
		.attn_dropout = ht->mlp ? 0 : ht->cfg.attn_dropout,
		.h = h,
	};
	for (int l = 0; l < ht->so.num_layers; l++)
		out->fanout[l] = ht->so.fanouts[l];
	for (int t = 0; t < h->num_types; t++) {
		out->feat_dim[t] = ht->ti[t].feat_dim;
		if (!ht->emb[t])
			continue;
		const int64_t n = ht->ti[t].num_nodes * ht->in_dim[t];
		out->emb_dim[t] = ht->in_dim[t];
		out->arrays[out->num_arrays++] = (bw_ck_array){.data = &ht->emb[t], .n = n};
		out->arrays[out->num_arrays++] = (bw_ck_array){.data = &ht->emb_m[t], .n = n};
		out->arrays[out->num_arrays++] = (bw_ck_array){.data = &ht->emb_v[t], .n = n};
	}
}
