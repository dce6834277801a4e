/* trainer.c: the public training API: a trainer over a dataset and its feature store, full-graph epochs (the single-process reference of distributed full-graph
 * training), mini-batch epochs over the batch loader (loader.h), evaluation as OGB does it. */
#include "../../graph/store_sizing.h"
#include "../../sampler/sampler_internal.h"
#include "driver.h"
#include "../../core/half.h"

#include <math.h>
#include <string.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

int bw_trainer_check_opts(const burrow_train_opts *o)
{
	if (!burrow_model_parse(burrow_model_name(o->model)))
		return bw_err(BURROW_E_INVAL, "train: unknown model kind %d", o->model);
	if (o->layers < 1 || o->layers > BURROW_MAX_LAYERS)
		return bw_err(BURROW_E_INVAL, "train: layers must lie in [1, %d], got %d", BURROW_MAX_LAYERS, o->layers);
	if (o->hidden < 1 || o->hidden > (1 << 20))
		return bw_err(BURROW_E_INVAL, "train: hidden width must lie in [1, 2^20], got %lld", (long long)o->hidden);
	if (!(o->dropout >= 0 && o->dropout < 1))
		return bw_err(BURROW_E_INVAL, "train: dropout must lie in [0, 1), got %g", o->dropout);
	if (burrow_aggr_parse(burrow_aggr_name(o->aggr)) < 0)
		return bw_err(BURROW_E_INVAL, "train: unknown aggregator %d", o->aggr);
	if ((o->model == BURROW_MODEL_GAT || o->model == BURROW_MODEL_RGAT) && (o->heads < 1 || o->heads > 64 || (o->layers > 1 && o->hidden % o->heads)))
		return bw_err(BURROW_E_INVAL, "train: gat wants 1 to 64 heads that divide the hidden width, got %d heads "
					      "for hidden %lld", o->heads, (long long)o->hidden);
	if (o->sparse_input != BURROW_SPARSE_AUTO && o->sparse_input != BURROW_SPARSE_ON &&
	    o->sparse_input != BURROW_SPARSE_OFF)
		return bw_err(BURROW_E_INVAL, "train: unknown sparse-input mode %d", o->sparse_input);
	if (o->eval_splits & ~(unsigned)BURROW_EVAL_ALL)
		return bw_err(BURROW_E_INVAL, "train: eval_splits %#x has bits beyond BURROW_EVAL_ALL", o->eval_splits);
	if (burrow_norm_parse(burrow_norm_name(o->norm)) < 0)
		return bw_err(BURROW_E_INVAL, "train: unknown normalization %d", o->norm);
	if (burrow_task_parse(burrow_task_name(o->task)) < 0)
		return bw_err(BURROW_E_INVAL, "train: unknown task %d", o->task);
	if (!(o->attn_dropout >= 0 && o->attn_dropout < 1))
		return bw_err(BURROW_E_INVAL, "train: attention dropout must lie in [0, 1), got %g", o->attn_dropout);
	if (!(o->lr > 0) || !isfinite(o->lr) || !(o->weight_decay >= 0) || !(o->momentum >= 0 && o->momentum < 1))
		return bw_err(BURROW_E_INVAL, "train: need lr > 0, weight decay >= 0 and momentum in [0, 1)");
	if (o->eval_chunk < 1 || o->mem_bytes < 0 || o->batch_size < 1 || o->max_batches < 0 || o->epochs < 0)
		return bw_err(BURROW_E_INVAL, "train: eval chunk and batch size must be positive; memory, batches and "
					      "epochs non-negative");
	for (int l = 0; l < o->layers; l++)
		if (o->fanout[l] < -1)
			return bw_err(BURROW_E_INVAL, "train: fanout %d of layer %d: want -1 (all), 0 (default) or > 0",
				      o->fanout[l], l);
	for (int l = 0; o->eval_fanout[0] && l < o->layers; l++)
		if (o->eval_fanout[l] < -1 || o->eval_fanout[l] == 0)
			return bw_err(BURROW_E_INVAL, "train: evaluation fanout %d of layer %d: want -1 (all) or > 0, one per "
						      "layer, or all 0 (layer-wise inference)", o->eval_fanout[l], l);
	if (o->typed_fanout != BURROW_TYPED_FANOUT_RELATION && o->typed_fanout != BURROW_TYPED_FANOUT_NODE)
		return bw_err(BURROW_E_INVAL, "train: typed fanout %d: want RELATION (0) or NODE (1)", o->typed_fanout);
	if (o->prefetch < 0 || o->prefetch > 64)
		return bw_err(BURROW_E_INVAL, "train: prefetch %d is not in [0, 64]", o->prefetch);
	if (o->cache_bytes < BURROW_CACHE_AUTO || !(o->cache_fraction <= 1) || isnan(o->cache_fraction))
		return bw_err(BURROW_E_INVAL, "train: the feature cache wants bytes >= 0 (or BURROW_CACHE_AUTO) and a "
					      "fraction of at most 1");
	if (o->cache_policy != BURROW_CACHE_NONE && o->cache_policy != BURROW_CACHE_STATIC &&
	    o->cache_policy != BURROW_CACHE_CLOCK && o->cache_policy != BURROW_CACHE_PROFILE)
		return bw_err(BURROW_E_INVAL, "train: unknown cache policy %d", o->cache_policy);
	if (!burrow_store_engine_name(o->store_engine))
		return bw_err(BURROW_E_INVAL, "train: unknown store engine %d", o->store_engine);
	int st = bw_habits_check(o);
	if (st)
		return st;
	st = burrow_device_check(o->device);
	if (st || !o->sampler_device || !strcmp(o->sampler_device, "auto"))
		return st;
	if ((st = burrow_device_check(o->sampler_device)) < 0) {
		char why[256];
		snprintf(why, sizeof why, "%s", burrow_last_error());
		return bw_err(st, "train: sampler device: %s", why);
	}
	return 0;
}

/* Where mini-batches are sampled (opts.sampler_device) into t->sampler_dev: as asked, or
 * for auto the model's device when a sampler backend of its kind is registered (the
 * sampler's registry names its backends as the compute's registry does), else the CPU. LABOR-*
 * stays on the CPU under auto: the GPU sampler's LABOR-* is tested on the host (its kernels'
 * per-thread work) but has not run on a device yet; --sampler-device cuda asks for it. */
static void resolve_sampler_device(burrow_trainer *t, const char *asked, int sampler, int kind, int index)
{
	int skind = BW_BACKEND_CPU, sindex = 0;
	if (asked && strcmp(asked, "auto")) {
		bw_device_parse(asked, &skind, &sindex); /* checked by bw_trainer_check_opts */
	} else if (kind != BW_BACKEND_CPU && sampler != BURROW_SAMPLER_LABOR_STAR) {
		const bw_backend_reg *r = bw_backend_find(kind);
		for (int i = 0; r && i < bw_sampler_backend_count(); i++)
			if (!strcmp(bw_sampler_backend_at(i)->name, r->name)) {
				skind = kind;
				sindex = index;
			}
	}
	if (skind == BW_BACKEND_CPU)
		snprintf(t->sampler_dev, sizeof t->sampler_dev, "cpu");
	else
		snprintf(t->sampler_dev, sizeof t->sampler_dev, "%s:%d", bw_backend_find(skind)->name, sindex);
}

/* The cache budget the options ask for, given what caching every row takes (full): never
 * more than that, since a larger budget would only buy empty slots. Automatic: under
 * RLIMIT_AS, a quarter of what is left once the stacks of the threads still to start
 * (kernels, prefetch, store) and the rings are counted, so that batches, model and
 * evaluation keep the rest. */
size_t bw_trainer_cache_budget(const burrow_train_opts *o, int threads, size_t full)
{
	if (o->full_graph || o->cache_policy == BURROW_CACHE_NONE)
		return 0;
	if (o->cache_fraction >= 0)
		return (size_t)((double)full * o->cache_fraction);
	if (o->cache_bytes >= 0)
		return BW_MIN((size_t)o->cache_bytes, full);
	/* auto: everything when it takes at most a quarter of the memory (the machine's, or
	 * the cgroup's when it gives the run less), else that quarter */
	const size_t mem = bw_mem_total();
	double cap = mem != SIZE_MAX ? (double)mem / 4 : (double)full;
	size_t left, limit;
	if (bw_as_left(&left, &limit)) {
		const size_t later = (size_t)(threads + o->prefetch + 4) * bw_stack_bytes() + BW_AS_SLACK;
		cap = BW_MIN(cap, left > later ? (double)(left - later) / 4 : 0);
	}
	return (double)full <= cap ? full : (size_t)cap;
}

/* Every row into memory through the store (full-graph mode), in runs of consecutive ids. */
static int read_all_rows(burrow_trainer *t)
{
	const int64_t n = t->info->num_nodes, d = t->info->feat_dim, run = 16384;
	t->feat_buf = bw_aligned_alloc(64, (size_t)(n * d) * sizeof(float) + 1);
	int64_t *ids = bw_malloc((size_t)BW_MIN(n, run) * sizeof *ids + 1);
	bw_rows store, norm, *src = &store;
	bw_rows_from_store(&store, t->store);
	int st = 0;
	if (!t->feat_buf || !ids)
		st = BURROW_E_NOMEM;
	if (!st && t->o.normalize_features && !(st = bw_rows_normalized(&norm, &store)))
		src = &norm;
	for (int64_t r0 = 0; !st && r0 < n; r0 += run) {
		const int64_t k = BW_MIN(run, n - r0);
		for (int64_t i = 0; i < k; i++)
			ids[i] = r0 + i;
		st = src->gather(src, ids, k, t->feat_buf + r0 * d);
	}
	bw_free(ids);
	if (st || (st = bw_tensor_from_host(&t->feat, t->be.dev, t->feat_buf, n, d)))
		return st;
	bw_rows_from_memory(&t->feat_rows, t->feat_buf, n, d, t->be.threads);
	return 0;
}

/* Full-graph mode: the features' sparse copy for the first layer's products, when
 * opts.sparse_input asks (AUTO: at most BURROW_SPARSE_AUTO_DENSITY non-zero) and the backend
 * has the sparse product; otherwise it multiplies them dense. */
static int sparse_features(burrow_trainer *t)
{
	const int mode = t->o.sparse_input;
	const int64_t n = t->info->num_nodes, d = t->info->feat_dim;
	if (mode == BURROW_SPARSE_OFF || n == 0)
		return 0;
	if (!bw_backend_supports(&t->be, BW_OP_SPMM)) {
		if (mode == BURROW_SPARSE_ON)
			bw_log(BURROW_LOG_INFO, "the %s backend has no sparse product: the features are multiplied dense",
			       bw_backend_name(&t->be));
		return 0;
	}
	const int64_t nnz = bw_count_nonzero(t->feat_buf, n * d, t->be.threads);
	const double density = (double)nnz / ((double)n * (double)d);
	if (mode == BURROW_SPARSE_AUTO && density > BURROW_SPARSE_AUTO_DENSITY)
		return 0;
	int st = bw_sparse_build(&t->feat_sp, t->feat_buf, n, d, t->be.threads);
	if (st)
		return st;
	t->feat.sp = &t->feat_sp;
	bw_log(BURROW_LOG_INFO, "the features are %.2f%% non-zero: the first layer multiplies them sparse", 100 * density);
	return 0;
}

static double mem_available(void);

/* Mini-batch mode, rows multiplied sparse: every row's non-zeros in t->feat_csr, read once
 * through the rows the batches gather (the store, normalized or not), when they take at most
 * a quarter of the memory available (estimated from the density); then each batch's copy
 * gathers its rows' non-zeros (bw_sparse_gather) instead of scanning its dense rows for them
 * (two passes over n x D floats per batch). Else nothing: the batches scan. */
static int read_sparse_rows(burrow_trainer *t, double density)
{
	const int64_t n = t->info->num_nodes, d = t->info->feat_dim;
	const double need = density * (double)n * (double)d * 8.0 + 8.0 * (double)n, avail = mem_available();
	if (avail > 0 && need > avail / 4)
		return 0;
	const int64_t run = BW_MAX(1, BW_MIN(4096, (1 << 24) / d));
	float *buf = bw_malloc((size_t)(run * d) * sizeof *buf);
	int64_t *ids = bw_malloc((size_t)run * sizeof *ids);
	int st = buf && ids ? 0 : BURROW_E_NOMEM;
	for (int64_t r0 = 0; !st && r0 < n; r0 += run) {
		const int64_t k = BW_MIN(run, n - r0);
		for (int64_t i = 0; i < k; i++)
			ids[i] = r0 + i;
		if (!(st = t->feat_rows.gather(&t->feat_rows, ids, k, buf)))
			st = bw_sparse_append(&t->feat_csr, buf, k, d, t->be.threads);
	}
	bw_free(buf);
	bw_free(ids);
	if (st)
		bw_sparse_free(&t->feat_csr);
	return st;
}

/* Mini-batch mode: whether the first layer multiplies the batches' input rows sparse, as
 * sparse_features decides for full-graph mode, from the density of up to SAMPLE rows spread
 * evenly over the ids (every row of a graph that small: Cora's 2,708), counted once here;
 * each batch's sparse copy is then built from its gathered rows (bw_trainer_sparse_x). */
static int sparse_rows(burrow_trainer *t)
{
	enum { SAMPLE = 4096, RUN = 256 };
	const int mode = t->o.sparse_input;
	const int64_t n = t->info->num_nodes, d = t->info->feat_dim;
	if (mode == BURROW_SPARSE_OFF || n == 0)
		return 0;
	if (!bw_backend_supports(&t->be, BW_OP_SPMM)) {
		if (mode == BURROW_SPARSE_ON)
			bw_log(BURROW_LOG_INFO, "the %s backend has no sparse product: the features are multiplied dense",
			       bw_backend_name(&t->be));
		return 0;
	}
	const int64_t k = BW_MIN(n, SAMPLE);
	int64_t ids[RUN], nnz = 0;
	float *buf = bw_malloc((size_t)(RUN * d) * sizeof *buf);
	if (!buf)
		return BURROW_E_NOMEM;
	int st = 0;
	for (int64_t r0 = 0; !st && r0 < k; r0 += RUN) {
		const int64_t m = BW_MIN(RUN, k - r0);
		for (int64_t i = 0; i < m; i++)
			ids[i] = k == n ? r0 + i : (int64_t)((double)(r0 + i) * (double)n / (double)k);
		if (!(st = t->feat_rows.gather(&t->feat_rows, ids, m, buf)))
			nnz += bw_count_nonzero(buf, m * d, t->be.threads);
	}
	bw_free(buf);
	const double density = (double)nnz / ((double)k * (double)d);
	if (st || (mode == BURROW_SPARSE_AUTO && density > BURROW_SPARSE_AUTO_DENSITY))
		return st;
	t->sparse_rows = true;
	bw_log(BURROW_LOG_INFO, "the features are %.2f%% non-zero%s: the first layer multiplies each batch's rows sparse",
	       100 * density, k < n ? " (rows sampled)" : "");
	return read_sparse_rows(t, density);
}

int bw_trainer_sparse_x(burrow_trainer *t, bw_tensor *x, const int64_t *ids)
{
	if (!t->sparse_rows)
		return 0;
	int st = ids && t->feat_csr.indptr
			 ? bw_sparse_gather(&t->rows_sp, &t->feat_csr, ids, x->rows, x->data, t->be.threads)
			 : bw_sparse_update(&t->rows_sp, x->data, x->rows, x->cols, t->be.threads);
	x->sp = st ? NULL : &t->rows_sp;
	return st;
}

int bw_trainer_batch_input(burrow_trainer *t, bw_loaded *lb)
{
	int st = t->emb ? bw_emb_put(t->emb, lb->sb, &lb->b) : 0;
	return st ? st : bw_trainer_sparse_x(t, &lb->b.x, lb->sb ? lb->sb->input_ids : NULL);
}

bool bw_trainer_rows_unread(const burrow_trainer *t)
{
	return t->sparse_rows && t->feat_csr.indptr && !t->emb && t->be.dev->host_memory &&
	       !bw_model_reads_dense_input(t->model);
}

/* The memory available now: MemAvailable (free plus reclaimable page cache), no more than
 * the cgroup's limit; 0 when unknown. */
static double mem_available(void)
{
	long long avail_kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");
	if (f) {
		char line[128];
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "MemAvailable: %lld kB", &avail_kb) == 1)
				break;
		fclose(f);
	}
	if (avail_kb < 0) {
		const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
		if (pages <= 0 || page <= 0)
			return 0;
		avail_kb = (long long)pages * page / 1024;
	}
	/* a cgroup's limit bounds its page cache too */
	size_t cg;
	double avail = (double)avail_kb * 1024.0;
	if (bw_cgroup_mem_limit(&cg))
		avail = BW_MIN(avail, (double)cg);
	return avail;
}

/* Does the file at path take at most half the memory available now? Then the page cache
 * holds it and buffered reads beat direct ones from the second touch of a block on. */
static bool fits_page_cache(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0 && (double)sb.st_size <= mem_available() / 2;
}

/* Full-graph mode, features multiplied dense: their transposed copy, for the first layer's
 * weight gradient X^T G, when the backend multiplies faster that way (the CPU's own GEMM
 * reads its first operand along the reduction: X^T's rows) and the copy takes at most a
 * quarter of the memory available and of what RLIMIT_AS leaves. Without it the product is
 * the same up to float rounding, only slower. */
static int transposed_features(burrow_trainer *t)
{
	const int64_t n = t->info->num_nodes, d = t->info->feat_dim;
	const double bytes = (double)n * (double)d * sizeof(float);
	size_t left, limit;
	if (t->feat.sp || !t->be.gemm_wants_transposed || !bw_gemm_own_fits(d, t->o.hidden, n) ||
	    !bw_gemm_own_fits(n, t->o.hidden, d))
		return 0;
	if (bytes > mem_available() / 4 || (bw_as_left(&left, &limit) && bytes > (double)left / 4)) {
		bw_log(BURROW_LOG_INFO, "the features' transposed copy (%.0f MiB) would not fit: the first layer's gradient "
					"multiplies them through OpenBLAS",
		       bytes / 1048576.0);
		return 0;
	}
	int st = bw_transposed_build(&t->feat_tr, t->feat_buf, n, d, t->be.threads);
	if (st)
		return st;
	t->feat.tr = &t->feat_tr;
	return 0;
}

/* --sampler labor-star's and --labor-batch-dependency's limits: LABOR's samplers, the batch
 * dependency on homogeneous datasets, and labor-star not with --edge-weight (both weigh the
 * blocks' edges); a typed dataset's labor-star is htrain.c's to check (its models). */
static int labor_star_check(const burrow_dataset *ds, const burrow_train_opts *o)
{
	if (o->labor_batch_dependency > 1 && o->sampler == BURROW_SAMPLER_NEIGHBOR)
		return bw_err(BURROW_E_INVAL, "%s: --labor-batch-dependency goes with --sampler labor or labor-star",
			      bw_dataset_dir(ds));
	if (o->labor_batch_dependency > 1 && burrow_dataset_hetero(ds))
		return bw_err(BURROW_E_UNSUPPORTED, "%s: --labor-batch-dependency samples homogeneous datasets in this "
						    "version", bw_dataset_dir(ds));
	if (o->sampler != BURROW_SAMPLER_LABOR_STAR)
		return 0;
	if (o->edge_weight)
		return bw_err(BURROW_E_UNSUPPORTED, "%s: --edge-weight and LABOR-* (--sampler labor-star) both weigh the "
						    "blocks' edges: not built together", bw_dataset_dir(ds));
	return 0;
}

/* The training epochs' sampler: layers, fanouts, batch size, seed and LABOR from the options
 * (the profile draws the same kind of batches under a seed of its own). */
static void epoch_sampler_opts(const burrow_trainer *t, burrow_sampler_opts *so)
{
	burrow_sampler_defaults(so);
	so->num_layers = t->o.layers;
	for (int l = 0; l < t->o.layers; l++)
		so->fanouts[l] = burrow_train_fanout(&t->o, l);
	so->batch_size = t->o.batch_size;
	so->seed = t->o.seed;
	so->labor = t->o.sampler == BURROW_SAMPLER_LABOR;
	so->labor_star = t->o.sampler == BURROW_SAMPLER_LABOR_STAR ? BURROW_LABOR_STAR_ROUNDS : 0;
	so->labor_batch_dependency = t->o.labor_batch_dependency;
}

/* Add 2^40 to key[v] for each pre-sampled batch that has v among its input nodes: the first
 * BW_PROFILE_BATCHES batches of an epoch of a sampler as the training one (fanouts, batch
 * size, LABOR or not) but keyed by a seed of its own, so that the profile is a fresh draw of
 * what epochs ask for, not their own batches, and no draw of training changes. */
static int profile_counts(burrow_trainer *t, uint64_t *key)
{
	int64_t n;
	const int64_t *train = bw_trainer_split(t, BURROW_SPLIT_TRAIN, &n);
	if (!train)
		return bw_err(BURROW_E_INVAL, "train: dataset '%s' has no training nodes", t->info->name);
	burrow_sampler_opts so;
	epoch_sampler_opts(t, &so);
	so.seed = t->o.seed ^ BW_PROFILE_SEED;
	so.threads = t->be.threads;
	so.prefetch = 0;
	burrow_sampler *s;
	int st = burrow_sampler_open(&s, t->graph, train, n, &so);
	if (st)
		return st;
	const int64_t k = BW_MIN(burrow_sampler_num_batches(s), BW_PROFILE_BATCHES);
	st = burrow_sampler_start(s, 0);
	for (int64_t i = 0; i < k && !st; i++) {
		burrow_batch *b;
		if ((st = burrow_sampler_next(s, &b)))
			break;
		for (int64_t j = 0; j < b->num_input; j++)
			key[b->input_ids[j]] += (uint64_t)1 << 40;
		burrow_sampler_release(s, b);
	}
	burrow_sampler_close(s);
	return st;
}

/* A static cache's keys, every row eligible: degree + 1, so that isolated nodes come last
 * rather than never (a full cache then holds every row); for the profile policy (node tasks;
 * link tasks keep degree) the times a row was pre-sampled come first, degree breaks ties. */
static int static_cache_keys(burrow_trainer *t, uint64_t *key)
{
	const int64_t n = t->info->num_nodes, *ip = t->graph->indptr;
	const uint64_t most = ((uint64_t)1 << 40) - 1;
#pragma omp parallel for schedule(dynamic, BW_CHUNK_ELEMS) num_threads(t->be.threads)
	for (int64_t v = 0; v < n; v++)
		key[v] = BW_MIN((uint64_t)(ip[v + 1] - ip[v]) + 1, most);
	if (t->o.cache_policy != BURROW_CACHE_PROFILE)
		return 0;
	if (t->o.task == BURROW_TASK_LINK) {
		bw_log(BURROW_LOG_INFO, "the profile cache policy profiles node batches: link prediction caches by degree");
		return 0;
	}
	return profile_counts(t, key);
}

/* The feature store on features.npy (gathering float32), its cache, and the rows it serves:
 * in full-graph mode every row is read into memory once. */
static int open_features(burrow_trainer *t)
{
	const char *path = burrow_dataset_features_path(t->ds);
	const int64_t n = t->info->num_nodes, d = t->info->feat_dim;
	int st;
	if (d < 1) /* no features: learned embeddings (embed.c) */
		return bw_emb_open(t);
	if (!path)
		return bw_err(BURROW_E_INVAL, "%s: the dataset has no features file", bw_dataset_dir(t->ds));
	burrow_store_opts so;
	burrow_store_defaults(&so);
	so.engine = t->o.store_engine;
	so.out_dtype = BURROW_DTYPE_F32;
	if (!t->o.full_graph)
		t->cache_budget = bw_trainer_cache_budget(
			&t->o, t->be.threads,
			bw_cache_bytes_for((size_t)n, bw_cache_row_bytes((size_t)d, burrow_dtype_size(t->info->feat_dtype), sizeof(float))));
	if (!t->o.full_graph && t->cache_budget == 0 && so.engine != BURROW_STORE_MMAP && fits_page_cache(path)) {
		so.direct = false;
		bw_log(BURROW_LOG_INFO, "%s fits in the page cache and no feature cache is set: buffered reads", path);
	}
	if ((st = burrow_store_open(&t->store, path, &so)))
		return st;
	const burrow_store_info *in = burrow_store_get_info(t->store);
	if (in->num_rows != n || in->dim != d)
		return bw_err(BURROW_E_FORMAT, "%s: shape [%lld, %lld] differs from meta.json's [%lld, %lld]", path,
			      (long long)in->num_rows, (long long)in->dim, (long long)n, (long long)d);
	if (t->o.full_graph)
		return (st = read_all_rows(t)) || (st = sparse_features(t)) ? st : transposed_features(t);
	if (t->cache_budget > 0 && t->o.cache_policy == BURROW_CACHE_CLOCK) {
		st = burrow_store_cache_clock(t->store, t->cache_budget);
	} else if (t->cache_budget > 0) {
		uint64_t *key = bw_malloc((size_t)n * sizeof *key + 1);
		if (!key)
			return BURROW_E_NOMEM;
		if (!(st = static_cache_keys(t, key)))
			st = burrow_store_cache_profile(t->store, key, n, t->cache_budget);
		bw_free(key);
	}
	if (st)
		return st;
	if (!t->o.normalize_features) {
		bw_rows_from_store(&t->feat_rows, t->store);
	} else {
		bw_rows_from_store(&t->store_rows, t->store);
		if ((st = bw_rows_normalized(&t->feat_rows, &t->store_rows)))
			return st;
	}
	st = sparse_rows(t);
	burrow_store_reset_stats(t->store);
	return st;
}

static int make_split_index(burrow_trainer *t)
{
	const int64_t n = t->info->num_nodes;
	int st;
	t->split_of = bw_malloc((size_t)(n ? n : 1));
	if (!t->split_of)
		return BURROW_E_NOMEM;
	memset(t->split_of, -1, (size_t)n);
	if (t->o.split[0] + t->o.split[1] + t->o.split[2] > 0) { /* a drawn split instead of the dataset's */
		if (!(t->drawn = bw_malloc((size_t)(n ? n : 1) * sizeof *t->drawn)))
			return BURROW_E_NOMEM;
		t->split_seed = t->o.seed;
		if ((st = burrow_split_random(t->labels, n, t->o.split, t->o.seed, t->drawn, t->drawn_n)))
			return st;
	}
	for (int s = 0; s < 3; s++) {
		int64_t k;
		const int64_t *ids = bw_trainer_split(t, s, &k);
		for (int64_t i = 0; i < k; i++)
			t->split_of[ids[i]] = (int8_t)s;
	}
	return 0;
}

static int open_edge_weights(burrow_trainer *t);

/* The task t trains (opts.task; AUTO: link prediction on a dataset with edge splits and no
 * labels, else node classification) into t->o.task, refusing a dataset that lacks what it needs. */
static int resolve_task(burrow_trainer *t)
{
	const char *dir = bw_dataset_dir(t->ds);
	const int32_t T = t->info->num_tasks;
	const bool edges = burrow_dataset_has_edge_split(t->ds), labels = t->labels && t->info->num_classes > 0;
	if (t->o.task == BURROW_TASK_AUTO)
		t->o.task = T > 0 ? BURROW_TASK_MULTILABEL
			    : edges && !labels && !burrow_dataset_hetero(t->ds) ? BURROW_TASK_LINK
										  : BURROW_TASK_NODE;
	if (t->o.task == BURROW_TASK_LINK && !edges)
		return bw_err(BURROW_E_INVAL, "%s: link prediction needs edge splits (meta.json's \"edge_split\"; burrow "
					      "import --edge-split draws one)", dir);
	if (t->o.task == BURROW_TASK_MULTILABEL && T == 0)
		return bw_err(BURROW_E_INVAL, "%s: task multilabel needs multi-label labels (meta.json's num_tasks); this "
			      "dataset has %d classes, one per node (--task node)", dir, t->info->num_classes);
	if (t->o.task == BURROW_TASK_NODE && T > 0)
		return bw_err(BURROW_E_INVAL, "%s: task node needs one class per node; this dataset is multi-label (%d "
			      "tasks: --task multilabel)", dir, T);
	if (t->o.task == BURROW_TASK_NODE && !labels)
		return bw_err(BURROW_E_INVAL, "%s: the dataset has no labels (meta.json's num_classes is 0)", dir);
	t->task = t->o.task;
	if (t->task == BURROW_TASK_MULTILABEL) {
		t->labels = NULL;
		t->mlabels = burrow_dataset_multilabels(t->ds);
		t->tasks = T;
	}
	return 0;
}

int burrow_trainer_open(burrow_trainer **out, burrow_dataset *ds, const burrow_train_opts *opts)
{
	*out = NULL;
	burrow_train_opts def;
	const burrow_train_opts *o = &def;
	burrow_train_defaults(&def);
	int st = opts ? bw_opts_in(&def, sizeof def, opts, "burrow_train_opts") : 0;
	if (st || (st = bw_trainer_check_opts(o)))
		return st;
	burrow_trainer *t = bw_calloc(1, sizeof *t);
	if (!t)
		return BURROW_E_NOMEM;
	t->be.dev = bw_device_cpu(); /* until the backend opens: what close frees through */
	t->o = *o;
	t->o.scratch_dir = NULL; /* borrowed pointers are not kept past open */
	t->o.device = NULL;
	t->o.sampler_device = NULL;
	t->ds = ds;
	t->info = burrow_dataset_get_info(ds);
	t->graph = burrow_dataset_graph(ds);
	t->graph_keep = bw_dataset_graph_keep_bytes();
	if (t->graph)
		bw_dataset_graph_random(ds); /* the sampler reads rows at random: no readahead (the open's scan is done) */
	t->labels = burrow_dataset_labels(ds);
	t->best = (burrow_best){.epoch = -1, .valid_acc = -1, .test_acc = -1};
	t->best_params_epoch = -1;
	t->reuse_layer0 = true;
	t->wversion = 1;
	bw_habits_init(&t->habits, o);
	if (o->scratch_dir && !(t->scratch_dir = bw_strdup(o->scratch_dir))) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	if ((st = resolve_task(t)))
		goto fail;
	const bool link = t->o.task == BURROW_TASK_LINK;
	/* every core, in both modes: the pipeline's threads (sampling, submits, the store's
	 * reads) are light beside the compute, and the compute's waits are passive, so they
	 * interleave instead of spinning against each other (docs/train.md, "One thread pool") */
	const int threads = o->threads;
	int kind, index;
	if ((st = bw_device_parse(o->device, &kind, &index)))
		goto fail;
	resolve_sampler_device(t, o->sampler_device, o->sampler, kind, index);
	const bw_backend_cfg bcfg = {.index = index, .threads = threads, .tf32 = o->tf32};
	t->gat_edges = o->model == BURROW_MODEL_GAT && o->gat_edge_features && t->info->edge_feat_dim > 0 && !link &&
		       !burrow_dataset_hetero(ds);
	const bw_model_cfg need = {.kind = o->model, .layers = o->layers, .aggr = o->aggr, .norm = o->norm,
				   .edge_dim = t->gat_edges ? t->info->edge_feat_dim : 0};
	if ((st = bw_backend_open(&t->be, kind, &bcfg)))
		goto fail;
	bw_auto_threads_init(&t->auto_threads, &t->be);
	if ((o->sampler == BURROW_SAMPLER_LABOR || o->sampler == BURROW_SAMPLER_LABOR_STAR) && (link || o->full_graph)) {
		st = bw_err(BURROW_E_UNSUPPORTED, "%s: LABOR sampling trains node tasks in mini-batch mode in this "
						  "version, not %s",
			    bw_dataset_dir(ds), o->full_graph ? "full-graph" : "link prediction");
		goto fail;
	}
	if ((st = labor_star_check(ds, o)))
		goto fail;
	if (burrow_dataset_hetero(ds)) { /* a typed dataset: its own side (htrain.c) */
		if (o->normalize_features) {
			st = bw_err(BURROW_E_UNSUPPORTED, "%s: normalized features are not available for typed datasets in "
							  "this version", bw_dataset_dir(ds));
			goto fail;
		}
		snprintf(t->sampler_dev, sizeof t->sampler_dev, "cpu");
		if ((st = bw_htrain_open(&t->typed, ds, o, &t->be)) || (st = make_split_index(t)))
			goto fail;
		*out = t;
		return 0;
	}
	if (o->model >= BURROW_MODEL_RGCN) {
		st = bw_err(BURROW_E_INVAL, "%s: %s trains typed datasets (format version 2); this one is homogeneous",
			    bw_dataset_dir(ds), burrow_model_name(o->model));
		goto fail;
	}
	if ((st = bw_model_supported(&t->be, &need)))
		goto fail;
	const bw_device *dev = t->be.dev;
	/* the splits before the features: a profile cache samples the training split */
	if ((st = open_edge_weights(t)) || (!link && (st = make_split_index(t))) || (st = open_features(t)) ||
	    (!link && t->labels &&
	     (st = bw_dbuf_from_host(&t->labels_dev, dev, t->labels, (size_t)t->info->num_nodes * sizeof *t->labels))) ||
	    (st = bw_dbuf_reserve(&t->loss_dev, dev, sizeof(bw_loss))))
		goto fail;
	const bw_model_cfg cfg = {
		.kind = o->model,
		.layers = o->layers,
		.in_dim = bw_trainer_in_dim(t),
		.hidden = o->hidden,
		.classes = link ? o->hidden : t->tasks ? t->tasks : t->info->num_classes, /* link: the encoder's embeddings; multi-label: one logit per task */
		.dropout = (float)o->dropout,
		.aggr = o->aggr,
		.heads = o->heads,
		.attn_dropout = (float)o->attn_dropout,
		.norm = o->norm,
		.residual = o->residual,
		.edge_dim = need.edge_dim,
	};
	if ((st = bw_model_open(&t->model, dev, &cfg, o->seed)) ||
	    (st = bw_optim_open(&t->optim, dev, o->optimizer, t->model->num_params, o->lr, o->weight_decay, o->momentum)))
		goto fail;
	if (o->model == BURROW_MODEL_GCN) {
		if (!(t->gcn_norm = bw_malloc((size_t)(t->info->num_nodes + 1) * sizeof *t->gcn_norm))) {
			st = BURROW_E_NOMEM;
			goto fail;
		}
		bw_gcn_norm_from_csr(t->graph, NULL, t->info->num_nodes, t->gcn_norm, t->be.threads);
	}
	if (link && (st = bw_ltrain_open(t)))
		goto fail;
	*out = t;
	return 0;
fail:
	burrow_trainer_close(t);
	return st;
}

void burrow_trainer_close(burrow_trainer *t)
{
	if (!t)
		return;
	bw_htrain_close(t->typed);
	bw_ltrain_close(t->link);
	bw_emb_close(t->emb);
	bw_loader_close(t->loader);
	burrow_sampler_close(t->sampler);
	burrow_store_close(t->store);
	bw_model_close(t->model);
	bw_optim_close(t->optim);
	bw_aligned_free(t->feat_buf);
	bw_free(t->split_of);
	bw_free(t->drawn);
	bw_free(t->best_params);
	bw_free(t->gcn_norm);
	bw_npy_unmap(&t->ew_map);
	bw_free(t->ew_chunk);
	bw_free(t->ef_chunk);
	bw_free(t->ef_full);
	bw_free(t->ew_full);
	bw_free(t->map);
	bw_tensor_free(&t->infer_z[0]);
	bw_tensor_free(&t->infer_z[1]);
	bw_free(t->scratch_dir);
	bw_free(t->ml_batch);
	bw_free(t->ml_grad);
	bw_block_release(&t->full);
	bw_tensor_free(&t->glogits);
	bw_tensor_free(&t->feat);
	bw_sparse_free(&t->feat_sp);
	bw_sparse_free(&t->rows_sp);
	bw_sparse_free(&t->feat_csr);
	bw_transposed_free(&t->feat_tr);
	bw_dbuf_free(&t->labels_dev);
	bw_dbuf_free(&t->train_dev);
	bw_dbuf_free(&t->loss_dev);
	bw_stage_free(&t->stage);
	bw_backend_release(&t->be);
	bw_free(t);
}

int burrow_trainer_epoch(const burrow_trainer *t) { return t->epoch; }
burrow_store *burrow_trainer_store(burrow_trainer *t)
{
	return t->typed ? t->typed->store[t->typed->h->target_type] : t->store;
}

int bw_trainer_not_typed(const burrow_trainer *t, const char *what)
{
	if (!t->typed)
		return 0;
	return bw_err(BURROW_E_UNSUPPORTED, "%s: %s is not available for typed datasets in this version",
		      bw_dataset_dir(t->ds), what);
}
burrow_best burrow_trainer_best(const burrow_trainer *t) { return t->best; }
bool burrow_trainer_should_stop(const burrow_trainer *t) { return bw_habits_stop(&t->habits, &t->o); }
double burrow_trainer_lr(const burrow_trainer *t)
{
	bw_habits h = t->habits; /* what the next epoch will set */
	return bw_habits_epoch_lr(&h, &t->o, t->epoch);
}
const char *burrow_trainer_sampler_device(const burrow_trainer *t) { return t->sampler_dev; }

int burrow_trainer_prefetch(const burrow_trainer *t, double *batch_bytes)
{
	if (batch_bytes)
		*batch_bytes = t->typed ? t->typed->slot_bytes : 0;
	return t->typed ? t->typed->depth : t->o.prefetch;
}

/* 0 when the weights cannot be read back from the device (not on the CPU) */
uint64_t burrow_trainer_weights_checksum(const burrow_trainer *t)
{
	uint64_t h = 0;
	if (t->typed)
		return bw_htrain_checksum(t->typed);
	return bw_model_checksum(t->model, &h) ? 0 : h;
}

/* One step; take: the key of layer 0's kept output that stands for this batch's (0: none);
 * seeds: a mini-batch's seed ids (its output rows; the multi-label loss reads their labels). */
static int step(burrow_trainer *t, const bw_batch *b, uint64_t take, const int64_t *seeds, double *loss,
		int64_t *counted, int64_t *correct)
{
	const bw_tensor *logits;
	int st = bw_model_forward_keyed(&t->be, t->model, b, true, t->o.seed, take, &logits);
	if (st)
		return st;
	bw_loss ls;
	if ((st = bw_tensor_reshape(&t->glogits, t->be.dev, logits->rows, logits->cols)))
		return st;
	if (t->task == BURROW_TASK_MULTILABEL)
		st = bw_trainer_ml_loss(t, logits, seeds, &ls);
	else if (!(st = bw_nll_loss(&t->be, logits, b->labels, b->loss_rows, b->num_loss_rows, &t->glogits,
				    t->loss_dev.ptr)))
		st = bw_loss_read(&t->be, t->loss_dev.ptr, &ls);
	if (st)
		return st;
	*loss = ls.loss;
	*counted = ls.counted;
	*correct = ls.correct;
	if (!isfinite(*loss))
		return bw_err(BURROW_E_RANGE, "training loss is %s at epoch %llu, batch %llu; stopped before the update "
					      "(try a lower --lr, or check the features for NaN or Inf)",
			      isnan(*loss) ? "NaN" : "infinite", (unsigned long long)b->epoch + 1,
			      (unsigned long long)b->index + 1);
	if ((st = bw_model_backward_input(&t->be, t->model, b, &t->glogits, t->emb ? bw_emb_grad(t->emb) : NULL)))
		return st;
	t->wversion++;
	return bw_optim_step(&t->be, t->optim, t->model->params, t->model->grads);
}

int bw_trainer_step(burrow_trainer *t, const bw_batch *b, double *loss, int64_t *counted, int64_t *correct)
{
	return step(t, b, 0, NULL, loss, counted, correct);
}

/* opts.edge_weight or GAT's edge features: the dataset's edge features mapped, after checking
 * that the weights can be used (a column that exists, a model whose aggregation takes them, a
 * backend with the weighted aggregation, sampling on the CPU). */
static int open_edge_weights(burrow_trainer *t)
{
	const burrow_train_opts *o = &t->o;
	const burrow_dataset_info *in = t->info;
	const char *dir = bw_dataset_dir(t->ds);
	bw_npy h;
	if (!o->edge_weight && !t->gat_edges)
		return 0;
	if (o->edge_weight && !in->edge_feat_dim)
		return bw_err(BURROW_E_INVAL, "%s: --edge-weight, but the dataset has no edge features", dir);
	if (o->edge_weight && (o->edge_weight_col < 0 || o->edge_weight_col >= in->edge_feat_dim))
		return bw_err(BURROW_E_INVAL, "%s: --edge-weight column %d, the edge features have %lld", dir,
			      o->edge_weight_col, (long long)in->edge_feat_dim);
	if (o->edge_weight && !(o->model == BURROW_MODEL_GCN || (o->model == BURROW_MODEL_SAGE && o->aggr != BURROW_AGGR_MAX)))
		return bw_err(BURROW_E_UNSUPPORTED, "--edge-weight weighs sage (mean, sum) and gcn aggregation, not %s%s",
			      burrow_model_name(o->model), o->model == BURROW_MODEL_SAGE ? " max" : "");
	if (o->edge_weight && !bw_backend_supports(&t->be, BW_OP_EDGE_WEIGHT))
		return bw_err(BURROW_E_UNSUPPORTED, "--edge-weight: the %s backend has no %s", bw_backend_name(&t->be),
			      bw_op_name(BW_OP_EDGE_WEIGHT));
	if (!o->full_graph && strcmp(t->sampler_dev, "cpu"))
		return bw_err(BURROW_E_UNSUPPORTED, "%s: the blocks' edge ids come from sampling on the cpu, not %s",
			      o->edge_weight ? "--edge-weight" : "gat's edge features (--edge-features off trains without)",
			      t->sampler_dev);
	return bw_npy_mmap(burrow_dataset_edge_features_path(t->ds), &h, &t->ew_map);
}

void bw_trainer_edge_weights(const burrow_trainer *t, bw_loader_cfg *c)
{
	if (!t->o.edge_weight && !t->gat_edges)
		return;
	c->edge_feat = t->ew_map.data;
	c->ew_dim = t->info->edge_feat_dim;
	c->ew_col = t->o.edge_weight ? t->o.edge_weight_col : 0;
	c->ew_dtype = t->info->edge_feat_dtype;
	c->ef_rows = t->gat_edges;
}

bool bw_trainer_gat_edges(const burrow_trainer *t) { return t->gat_edges; }

bool bw_trainer_star_weights(const burrow_trainer *t)
{
	return t->o.sampler == BURROW_SAMPLER_LABOR_STAR && t->o.model == BURROW_MODEL_SAGE &&
	       t->o.aggr == BURROW_AGGR_MEAN && bw_backend_supports(&t->be, BW_OP_EDGE_WEIGHT);
}

int bw_trainer_edge_rows(burrow_trainer *t, int64_t e0, int64_t n, float **buf, int64_t *cap, const float **rows)
{
	const int64_t de = t->info->edge_feat_dim;
	if (t->info->edge_feat_dtype == BURROW_DTYPE_F32) {
		*rows = (const float *)t->ew_map.data + e0 * de;
		return 0;
	}
	if (*cap < BW_MAX(n * de, 1)) {
		float *p = bw_realloc(*buf, (size_t)BW_MAX(n * de, 1) * sizeof *p);
		if (!p)
			return BURROW_E_NOMEM;
		*buf = p;
		*cap = BW_MAX(n * de, 1);
	}
	const uint16_t *h = (const uint16_t *)t->ew_map.data + e0 * de;
	for (int64_t i = 0; i < n * de; i++)
		(*buf)[i] = bw_f16_to_f32(h[i]);
	*rows = *buf;
	return 0;
}

/* The sampler for the seed in force, and the loader of its batches (a loaded checkpoint
 * brings its own seed, so the sampler opens at the first epoch and reopens when the seed
 * changed). */
static int minibatch_open(burrow_trainer *t)
{
	int st;
	if (!t->loader) {
		bw_loader_cfg lc = {
			.dev = t->be.dev,
			.compute = t->be.stream,
			.depth = t->o.prefetch,
			.thread = true,
			.num_layers = t->o.layers,
			.dim = bw_trainer_in_dim(t),
			.labels = t->labels,
			.norm = t->gcn_norm,
			.blocks = t->o.model != BURROW_MODEL_MLP,
			.transpose = true,
			.gcn = t->o.model == BURROW_MODEL_GCN,
			.sampler_weights = bw_trainer_star_weights(t),
			.rows_unread = bw_trainer_rows_unread(t),
		};
		bw_trainer_edge_weights(t, &lc);
		if ((st = bw_loader_open(&t->loader, &lc)))
			return st;
	}
	if (t->sampler && t->sampler_seed == t->o.seed)
		return 0;
	burrow_sampler_close(t->sampler);
	t->sampler = NULL;
	int64_t n;
	const int64_t *train = bw_trainer_split(t, BURROW_SPLIT_TRAIN, &n);
	if (!train)
		return bw_err(BURROW_E_INVAL, "train: dataset '%s' has no training nodes", t->info->name);
	burrow_sampler_opts so;
	epoch_sampler_opts(t, &so);
	so.threads = 1;
	so.prefetch = t->o.prefetch;
	so.producers = 1;
	so.device = t->sampler_dev;
	so.edge_ids = t->o.edge_weight || t->gat_edges;
	if ((st = bw_sampler_open_checked(&t->sampler, t->graph, train, n, &so, bw_trainer_trim_graph, t)))
		return st;
	t->sampler_seed = t->o.seed;
	return 0;
}

/* The steps of one mini-batch epoch: the loader keeps the next batches sampled and their
 * rows read (and, on a device, staged there) while batch k computes. */
static int minibatch_steps(burrow_trainer *t, int64_t num, burrow_epoch_stats *es, double *loss_sum,
			   int64_t *counted, int64_t *correct)
{
	for (int64_t k = 0; k < num; k++) {
		bw_loaded lb;
		int st = bw_loader_next(t->loader, &lb);
		es->sample_s += lb.load_s;
		es->io_wait_s += lb.io_wait_s;
		if (st)
			return st;
		lb.b.epoch = (uint64_t)t->epoch;
		lb.b.index = (uint64_t)k;
		const double a = bw_now_s();
		double loss;
		int64_t c, r;
		st = bw_trainer_batch_input(t, &lb);
		if (!st)
			st = step(t, &lb.b, 0, lb.sb ? lb.sb->seeds : NULL, &loss, &c, &r);
		if (!st && t->emb)
			bw_emb_step(t->emb, lb.sb, t->optim->lr, t->optim->step);
		if (!st)
			st = bw_loader_done(t->loader);
		es->compute_s += bw_now_s() - a;
		if (st)
			return st;
		*loss_sum += loss;
		*counted += c;
		*correct += r;
		if (t->o.progress)
			t->o.progress(t->o.progress_user, "train", (uint64_t)(k + 1), (uint64_t)num);
	}
	return 0;
}

void bw_trainer_epoch_io(burrow_epoch_stats *es, const burrow_store_stats *s0, const burrow_store_stats *s1)
{
	const uint64_t rows = s1->rows - s0->rows, hits = s1->cache_hits - s0->cache_hits;
	es->rows_read = (int64_t)(s1->rows_read - s0->rows_read);
	es->cache_hit_rate = rows ? (double)hits / (double)rows : -1.0;
	es->rows_requested = (int64_t)rows;
	es->reads = (int64_t)(s1->reads - s0->reads);
	es->pages_read = (int64_t)(s1->pages_read - s0->pages_read);
	es->bytes_read = (int64_t)(s1->bytes_read - s0->bytes_read);
}

/* One mini-batch epoch through the loader; fills es except epoch. */
static int minibatch_epoch(burrow_trainer *t, burrow_epoch_stats *es)
{
	const double t0 = bw_now_s();
	int st;
	if ((st = minibatch_open(t)) || (st = burrow_sampler_start(t->sampler, t->epoch)))
		return st;
	int64_t num = burrow_sampler_num_batches(t->sampler);
	if (t->o.max_batches > 0 && t->o.max_batches < num)
		num = t->o.max_batches;
	burrow_store_stats s0 = {.size = sizeof s0}, s1 = {.size = sizeof s1};
	if (t->store)
		burrow_store_get_stats(t->store, &s0);
	bw_producer p;
	bw_producer_epoch(&p, t->sampler);
	double loss_sum = 0;
	int64_t counted = 0, correct = 0;
	bw_rows none;
	if (t->emb)
		bw_emb_train_rows(t->emb, &none);
	if (!(st = bw_loader_start(t->loader, &p, t->emb ? &none : &t->feat_rows, num)))
		st = minibatch_steps(t, num, es, &loss_sum, &counted, &correct);
	bw_loader_stop(t->loader);
	if (st)
		return st;
	if (t->store)
		burrow_store_get_stats(t->store, &s1);
	es->batches = num;
	es->loss = num ? loss_sum / (double)num : 0.0;
	es->train_acc = counted ? (double)correct / (double)counted : -1.0;
	bw_trainer_epoch_io(es, &s0, &s1);
	es->epoch_s = bw_now_s() - t0;
	return 0;
}

static void progress(const burrow_trainer *t, uint64_t done, uint64_t total)
{
	if (t->o.progress)
		t->o.progress(t->o.progress_user, "train", done, total);
}

static int train_epoch(burrow_trainer *t, burrow_epoch_stats *es)
{
	memset(es, 0, sizeof *es);
	/* the schedule's rate for this epoch (the same double as opts.lr under none) */
	(t->typed ? t->typed->optim : t->optim)->lr = bw_habits_epoch_lr(&t->habits, &t->o, t->epoch);
	if (t->link)
		bw_ltrain_set_lr(t->link, t->optim->lr);
	if (t->typed) {
		int st = bw_htrain_epoch(t->typed, &t->o, t->epoch, es);
		if (!st)
			es->epoch = ++t->epoch;
		return st;
	}
	if (t->link) {
		int st = bw_ltrain_epoch(t, es);
		if (!st)
			es->epoch = ++t->epoch;
		return st;
	}
	if (!t->o.full_graph) {
		int st = minibatch_epoch(t, es);
		if (st)
			return st;
		t->epoch++;
		es->epoch = t->epoch;
		return 0;
	}
	const double t0 = bw_now_s();
	const int threads = bw_auto_threads_next(&t->auto_threads); /* bits do not depend on it */
	bw_auto_threads_set(&t->auto_threads, &t->be, threads);
	int st = bw_trainer_full_block(t);
	if (st)
		return st;
	int64_t ntrain;
	const int64_t *train = bw_trainer_split(t, BURROW_SPLIT_TRAIN, &ntrain);
	if (!train)
		return bw_err(BURROW_E_INVAL, "train: dataset '%s' has no training nodes", t->info->name);
	if (!t->train_dev.ptr &&
	    (st = bw_dbuf_from_host(&t->train_dev, t->be.dev, train, (size_t)ntrain * sizeof *train)))
		return st;
	bw_batch b = {
		.num_blocks = t->o.layers,
		.x = t->feat,
		.labels = t->labels_dev.ptr,
		.loss_rows = t->train_dev.ptr,
		.num_loss_rows = ntrain,
		.epoch = (uint64_t)t->epoch,
		.index = 0,
	};
	for (int l = 0; l < t->o.layers; l++)
		b.blocks[l] = &t->full;
	progress(t, 0, 1);
	double loss;
	int64_t counted, correct;
	if ((st = step(t, &b, bw_trainer_layer0_key(t), NULL, &loss, &counted, &correct)))
		return st;
	progress(t, 1, 1);
	t->epoch++;
	es->epoch = t->epoch;
	es->batches = 1;
	es->loss = loss;
	es->train_acc = counted ? (double)correct / (double)counted : -1.0;
	es->cache_hit_rate = -1.0; /* every row is in memory: nothing is asked of the cache */
	es->epoch_s = es->compute_s = bw_now_s() - t0;
	bw_auto_threads_done(&t->auto_threads, threads, es->epoch_s);
	return 0;
}

int burrow_trainer_train_epoch(burrow_trainer *t, burrow_epoch_stats *out)
{
	burrow_epoch_stats es = {.size = sizeof es};
	int st = bw_stats_check(out, "burrow_epoch_stats");
	if (st)
		return st;
	t->be.count = t->count_ops ? &t->ops : NULL;
	st = train_epoch(t, &es);
	t->be.count = NULL;
	es.threads = t->be.kind == BW_BACKEND_CPU ? t->be.threads : 0;
	if (t->count_ops) {
		t->ops_batches += es.batches;
		t->ops_compute_s += es.compute_s;
	}
	bw_stats_out(out, &es, sizeof es);
	return st;
}

int burrow_trainer_count_ops(burrow_trainer *t, bool on)
{
	if (on) {
		t->ops = (bw_op_count){.layer = -1};
		t->ops_batches = 0;
		t->ops_compute_s = 0;
	}
	t->count_ops = on;
	return 0;
}

int burrow_trainer_op_stats(const burrow_trainer *t, burrow_op_stats *out)
{
	int st = bw_stats_check(out, "burrow_op_stats");
	if (st || !out)
		return st;
	burrow_op_stats s = {.size = sizeof s, .batches = t->ops_batches, .compute_s = t->ops_compute_s};
	const bw_op_count *n = &t->ops;
	for (int c = 0; c < BURROW_OP_CLASSES; c++) {
		s.calls[c] = n->calls[c];
		s.seconds[c] = n->seconds[c];
		s.flops[c] = n->flops[c];
	}
	for (int l = 0; l < BURROW_MAX_LAYERS; l++) {
		s.layer_calls[l] = n->layer_calls[l];
		s.layer_seconds[l] = n->layer_seconds[l];
		s.layer_flops[l] = n->layer_flops[l];
	}
	bw_stats_out(out, &s, sizeof s);
	return 0;
}

/* Evaluation's sink: count argmax == label per split. */
typedef struct acc_ctx {
	burrow_trainer *t;
	bw_dbuf pred;           /* [chunk rows] argmax on the device */
	int64_t correct[3], total[3];
} acc_ctx;

static int acc_sink(void *ctx, int64_t r0, const bw_tensor *z)
{
	acc_ctx *a = ctx;
	const bw_device *dev = a->t->be.dev;
	const size_t bytes = (size_t)z->rows * sizeof(int32_t);
	const int32_t *pred;
	int st;
	if ((st = bw_dbuf_reserve(&a->pred, dev, bytes)) || (st = bw_argmax(&a->t->be, z, a->pred.ptr)) ||
	    (st = bw_stage_read(&a->t->stage, dev, a->pred.ptr, bytes, (const void **)&pred)))
		return st;
	for (int64_t i = 0; i < z->rows; i++) {
		const int s = a->t->split_of[r0 + i];
		const int32_t y = a->t->labels[r0 + i];
		if (s < 0 || y < 0)
			continue;
		a->total[s]++;
		a->correct[s] += pred[i] == y;
	}
	return 0;
}

/* The splits evaluation scores, bit s for split s (BURROW_EVAL_TRAIN is 1 << BURROW_SPLIT_TRAIN
 * and so on): opts.eval_splits, or when 0 all of them layer-wise and valid and test sampled. */
_Static_assert(BURROW_EVAL_TRAIN == 1 << BURROW_SPLIT_TRAIN && BURROW_EVAL_VALID == 1 << BURROW_SPLIT_VALID &&
		       BURROW_EVAL_TEST == 1 << BURROW_SPLIT_TEST,
	       "an eval_splits bit is 1 << its split");

/* The best evaluation so far: by valid score (accuracy, or a link task's metric), the first
 * wins ties; its weights kept. */
static int update_best(burrow_trainer *t, const burrow_eval_stats *ev)
{
	/* without a valid split there is nothing to choose by: the latest evaluation is the best */
	const bool improved = t->best.epoch < 0 || ev->valid_acc < 0 || ev->valid_acc > t->best.valid_acc;
	bw_habits_evaluated(&t->habits, &t->o, ev->valid_acc, improved);
	if (improved) {
		t->best = (burrow_best){.epoch = t->epoch, .valid_acc = ev->valid_acc, .test_acc = ev->test_acc};
		return t->typed ? 0 : bw_trainer_keep_best(t);
	}
	return 0;
}

static int evaluate(burrow_trainer *t, burrow_eval_stats *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->valid_auc = ev->test_auc = -1;
	const double t0 = bw_now_s();
	if (t->link) {
		int st = bw_ltrain_evaluate(t, ev);
		ev->eval_s = bw_now_s() - t0;
		return st ? st : update_best(t, ev);
	}
	acc_ctx a = {.t = t};
	/* a typed MLP is evaluated in batches of its target rows (exact: it reads no neighbor) */
	const bool sampled = t->o.eval_fanout[0] || (t->typed && !t->typed->model);
	const unsigned want = sampled && !t->o.eval_splits ? BURROW_EVAL_VALID | BURROW_EVAL_TEST
							   : bw_trainer_eval_splits(t);
	double acc[3];
	int st = t->task == BURROW_TASK_MULTILABEL ? bw_trainer_ml_evaluate(t, want, acc, &ev->spilled_bytes)
		 : t->typed && sampled		    ? bw_htrain_evaluate(t->typed, &t->o, t->epoch, want, a.correct, a.total)
		 : t->typed			    ? bw_trainer_hinfer(t, acc_sink, &a, &ev->spilled_bytes)
		 : sampled			    ? bw_trainer_eval_sampled(t, want, a.correct, a.total)
				     : bw_trainer_infer(t, acc_sink, &a, &ev->spilled_bytes);
	bw_dbuf_free(&a.pred);
	if (st)
		return st;
	for (int s = 0; s < 3 && t->task != BURROW_TASK_MULTILABEL; s++)
		acc[s] = a.total[s] && (want >> s & 1) ? (double)a.correct[s] / (double)a.total[s] : -1.0;
	ev->metric = t->task == BURROW_TASK_MULTILABEL ? BURROW_METRIC_ROCAUC : BURROW_METRIC_ACC;
	ev->train_acc = acc[BURROW_SPLIT_TRAIN];
	ev->valid_acc = acc[BURROW_SPLIT_VALID];
	ev->test_acc = acc[BURROW_SPLIT_TEST];
	ev->eval_s = bw_now_s() - t0;
	return update_best(t, ev);
}

int burrow_trainer_evaluate(burrow_trainer *t, burrow_eval_stats *out)
{
	burrow_eval_stats ev = {.size = sizeof ev};
	int st = bw_stats_check(out, "burrow_eval_stats");
	if (st)
		return st;
	st = evaluate(t, &ev);
	bw_stats_out(out, &ev, sizeof ev);
	return st;
}

/* embed's sink: stream the rows (read back from the device) into the npy writer. */
/* The logits: the last layer's output (outputs.c). */
int burrow_trainer_embed(burrow_trainer *t, const char *out_npy) { return burrow_trainer_embed_layer(t, 0, out_npy); }
