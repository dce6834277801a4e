/* checkpoint.c: checkpoint files: model weights, optimizer state, epoch, seed and best
 * evaluation (a typed model's also its types, relations and learned embeddings) in one file
 * written atomically, with its length and a CRC-32 in a trailer so that a truncated or
 * damaged file is refused (format: docs/train.md). */
#define _GNU_SOURCE
#include "driver.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define CK_MAGIC "BURROWCK"
#define CK_END "BWND"
#define CK_VERSION 1       /* a homogeneous model's file */
#define CK_VERSION_TYPED 2 /* a typed model's: the header records its types and relations, the
			    * payload ends with the learned embeddings and their moments */
#define CK_HEAD 16
#define CK_TRAILER 16
#define CK_MAX_HEADER (1 << 20)

static const char *optim_name(int kind)
{
	return kind == BURROW_OPTIM_ADAM ? "adam" : kind == BURROW_OPTIM_ADAMW ? "adamw" : "sgd";
}

static int optim_parse(const char *s)
{
	return !strcmp(s, "adam") ? BURROW_OPTIM_ADAM : !strcmp(s, "adamw") ? BURROW_OPTIM_ADAMW
						: !strcmp(s, "sgd") ? BURROW_OPTIM_SGD : 0;
}

static uint32_t crc_update(uint32_t crc, const void *p, size_t n)
{
	const unsigned char *b = p;
	while (n) {
		const uInt k = (uInt)BW_MIN(n, (size_t)1 << 30);
		crc = (uint32_t)crc32(crc, b, k);
		b += k;
		n -= k;
	}
	return crc;
}

static int put(bw_atomic_file *f, uint32_t *crc, const void *p, size_t n)
{
	*crc = crc_update(*crc, p, n);
	return bw_write_all(f->fd, p, n, f->path);
}

/* Device memory into the file, read back through a host view (the memory itself on the CPU). */
static int put_dev(bw_atomic_file *f, uint32_t *crc, bw_stage *stage, const bw_device *dev, const void *p, size_t n)
{
	const void *host;
	int st = bw_stage_read(stage, dev, p, n, &host);
	return st ? st : put(f, crc, host, n);
}

/* The model as the header records it and the payload holds it: the homogeneous model's
 * configuration, or the typed one's (its input width: the target type's). */
typedef struct ck_shape {
	int kind, layers, aggr, heads, norm;
	bool residual;
	int64_t hidden, in_dim, classes, num_params, num_state;
	int64_t edge_dim;       /* gat's edge feature width (0: none) */
	double attn_dropout;
	float *params, *state;  /* [num_params], [num_state] on dev */
	const bw_device *dev;
} ck_shape;

static ck_shape shape_of(const bw_ck_state *t)
{
	if (t->model) {
		const bw_model *m = t->model;
		return (ck_shape){.kind = m->cfg.kind, .layers = m->cfg.layers, .aggr = m->cfg.aggr, .heads = m->cfg.heads,
				  .norm = m->cfg.norm, .residual = m->cfg.residual, .hidden = m->cfg.hidden,
				  .in_dim = m->cfg.in_dim, .classes = m->cfg.classes, .num_params = m->num_params,
				  .num_state = m->num_state, .attn_dropout = m->cfg.attn_dropout, .params = m->params,
				  .state = m->state, .dev = m->dev, .edge_dim = m->cfg.edge_dim};
	}
	const bw_ck_typed *y = t->typed;
	const int target = y->h->target_type;
	return (ck_shape){.kind = y->kind, .layers = y->layers, .aggr = BURROW_AGGR_MEAN, .heads = y->heads,
			  .norm = BURROW_NORM_NONE, .hidden = y->hidden,
			  .in_dim = y->feat_dim[target] ? y->feat_dim[target] : y->emb_dim[target], .classes = y->classes,
			  .num_params = y->num_params, .attn_dropout = y->attn_dropout, .params = y->params, .dev = y->dev};
}

/* An object appended to array a, or NULL (out of memory: bw_json_nomem says so). */
static cJSON *add_object(cJSON *a)
{
	cJSON *o = cJSON_CreateObject();
	if (o && !cJSON_AddItemToArray(a, o)) {
		cJSON_Delete(o);
		o = NULL;
	}
	return o;
}

/* A typed model's keys: its types (name, nodes, features' width, learned embeddings' width),
 * relations (src, name, dst, edges), target type and training fanouts. A failed adder shows
 * in bw_json_nomem. */
static void add_typed(cJSON *h, const bw_ck_typed *y)
{
	const burrow_hetero *g = y->h;
	cJSON *types = cJSON_AddArrayToObject(h, "node_types"), *rels = cJSON_AddArrayToObject(h, "relations");
	for (int t = 0; types && t < g->num_types; t++) {
		cJSON *o = add_object(types);
		if (!o)
			return;
		cJSON_AddStringToObject(o, "name", g->type_names[t]);
		cJSON_AddNumberToObject(o, "num_nodes", (double)g->type_nodes[t]);
		cJSON_AddNumberToObject(o, "feat_dim", (double)y->feat_dim[t]);
		cJSON_AddNumberToObject(o, "embed_dim", (double)y->emb_dim[t]);
	}
	for (int r = 0; rels && r < g->num_relations; r++) {
		cJSON *o = add_object(rels);
		if (!o)
			return;
		cJSON_AddStringToObject(o, "src", g->type_names[g->rel[r].src_type]);
		cJSON_AddStringToObject(o, "name", g->rel[r].name);
		cJSON_AddStringToObject(o, "dst", g->type_names[g->rel[r].dst_type]);
		cJSON_AddNumberToObject(o, "num_edges", (double)g->rel[r].graph.num_edges);
	}
	cJSON_AddStringToObject(h, "target_type", g->type_names[g->target_type]);
	cJSON *f = cJSON_CreateIntArray(y->fanout, y->layers);
	if (f && !cJSON_AddItemToObject(h, "fanout", f))
		cJSON_Delete(f);
}

static char *make_header(const bw_ck_state *t, const ck_shape *m)
{
	char seed[24];
	snprintf(seed, sizeof seed, "%" PRIu64, *t->seed);
	(void)bw_json_nomem();
	cJSON *h = cJSON_CreateObject();
	if (!h)
		return NULL;
	cJSON_AddStringToObject(h, "format", "burrow-checkpoint");
	cJSON_AddNumberToObject(h, "version", t->model ? CK_VERSION : CK_VERSION_TYPED);
	cJSON_AddStringToObject(h, "model", burrow_model_name(m->kind));
	cJSON_AddNumberToObject(h, "layers", m->layers);
	cJSON_AddNumberToObject(h, "hidden", (double)m->hidden);
	cJSON_AddNumberToObject(h, "in_dim", (double)m->in_dim);
	cJSON_AddNumberToObject(h, "classes", (double)m->classes);
	cJSON_AddNumberToObject(h, "dropout", t->dropout);
	cJSON_AddStringToObject(h, "aggr", burrow_aggr_name(m->aggr));
	cJSON_AddNumberToObject(h, "heads", m->heads);
	cJSON_AddNumberToObject(h, "attn_dropout", m->attn_dropout);
	cJSON_AddStringToObject(h, "norm", burrow_norm_name(m->norm));
	cJSON_AddBoolToObject(h, "residual", m->residual);
	if (m->edge_dim) /* absent: none (checkpoints without edge features keep their bytes) */
		cJSON_AddNumberToObject(h, "edge_dim", (double)m->edge_dim);
	cJSON_AddNumberToObject(h, "num_state", (double)m->num_state);
	cJSON_AddStringToObject(h, "optimizer", optim_name(t->optim->kind));
	cJSON_AddNumberToObject(h, "lr", t->habits ? t->habits->base_lr : t->optim->lr);
	cJSON_AddNumberToObject(h, "weight_decay", t->optim->weight_decay);
	cJSON_AddNumberToObject(h, "momentum", t->optim->momentum);
	cJSON_AddNumberToObject(h, "optimizer_step", (double)t->optim->step);
	cJSON_AddStringToObject(h, "seed", seed);
	cJSON_AddNumberToObject(h, "epoch", *t->epoch);
	cJSON_AddNumberToObject(h, "best_epoch", t->best->epoch);
	cJSON_AddNumberToObject(h, "best_valid_acc", t->best->valid_acc);
	cJSON_AddNumberToObject(h, "best_test_acc", t->best->test_acc);
	cJSON_AddNumberToObject(h, "num_params", (double)m->num_params);
	cJSON_AddNumberToObject(h, "state_per_param", bw_optim_state_per_param(t->optim));
	cJSON_AddStringToObject(h, "dataset", t->dataset ? t->dataset : "");
	cJSON_AddNumberToObject(h, "num_nodes", (double)t->num_nodes);
	if (t->split) { /* [0, 0, 0]: the dataset's splits; else the drawn one's fractions and seed */
		cJSON *a = cJSON_CreateDoubleArray(t->split, 3);
		if (a && !cJSON_AddItemToObject(h, "split", a)) /* its key's copy failed: the array is still ours */
			cJSON_Delete(a);
		if (t->split[0] + t->split[1] + t->split[2] > 0) {
			snprintf(seed, sizeof seed, "%" PRIu64, t->split_seed);
			cJSON_AddStringToObject(h, "split_seed", seed);
		}
	}
	if (t->habits) { /* the schedule's and early stopping's state: resume continues them */
		cJSON_AddNumberToObject(h, "lr_now", t->habits->lr);
		cJSON_AddNumberToObject(h, "stale_evals", t->habits->stale);
		cJSON_AddNumberToObject(h, "plateau_bad_evals", t->habits->plateau_bad);
	}
	cJSON_AddBoolToObject(h, "normalize_features", t->normalize_features);
	if (t->task == BURROW_TASK_MULTILABEL) {
		cJSON_AddStringToObject(h, "task", burrow_task_name(t->task));
		cJSON_AddNumberToObject(h, "tasks", (double)t->tasks);
	}
	if (!t->model)
		add_typed(h, t->typed);
	if (t->model && t->embed_dim > 0) /* learned input embeddings: the table follows the payload */
		cJSON_AddNumberToObject(h, "embed_dim", (double)t->embed_dim);
	if (t->task == BURROW_TASK_LINK) { /* a node classifier's header stays as it was */
		cJSON_AddStringToObject(h, "task", burrow_task_name(t->task));
		cJSON_AddStringToObject(h, "scorer", burrow_scorer_name(t->scorer));
	}
	char *s = cJSON_PrintUnformatted(h);
	cJSON_Delete(h);
	if (bw_json_nomem()) { /* an adder failed: the header would lack a field */
		cJSON_free(s);
		s = NULL;
	}
	return s;
}

/* The host arrays after the optimizer state: how many, and their bytes. */
static int ck_arrays(const bw_ck_state *t, const bw_ck_array **a, size_t *bytes)
{
	const int n = t->model ? t->num_arrays : t->typed->num_arrays;
	*a = t->model ? t->arrays : t->typed->arrays;
	*bytes = 0;
	for (int i = 0; i < n; i++)
		*bytes += (size_t)(*a)[i].n * sizeof(float);
	return n;
}

/* The weights, the optimizer state, batch norm's statistics and the host arrays, in that
 * order, into f. */
static int put_payload(const bw_ck_state *t, const ck_shape *m, bw_atomic_file *f, uint32_t *crc)
{
	const size_t pbytes = (size_t)m->num_params * sizeof(float);
	const size_t sbytes = (size_t)m->num_state * sizeof(float); /* batch norm's running statistics */
	const int k = bw_optim_state_per_param(t->optim);
	const bw_device *od = t->optim->dev;
	const bw_ck_array *a;
	size_t abytes;
	const int na = ck_arrays(t, &a, &abytes);
	bw_stage stage = {0};
	int st;
	if ((st = put_dev(f, crc, &stage, m->dev, m->params, pbytes)) ||
	    (k >= 1 && (st = put_dev(f, crc, &stage, od, t->optim->m, pbytes))) ||
	    (k >= 2 && (st = put_dev(f, crc, &stage, od, t->optim->v, pbytes))) ||
	    (sbytes && (st = put_dev(f, crc, &stage, m->dev, m->state, sbytes))))
		goto out;
	for (int i = 0; i < na && !st; i++)
		st = put(f, crc, *a[i].data, (size_t)a[i].n * sizeof(float));
out:
	bw_stage_free(&stage);
	return st;
}

int bw_checkpoint_save(const bw_ck_state *t, const char *path)
{
	const ck_shape m = shape_of(t);
	char *hdr = make_header(t, &m);
	if (!hdr)
		return bw_err(BURROW_E_NOMEM, "%s: out of memory formatting the checkpoint header", path);
	const size_t hlen = strlen(hdr), hpad = (hlen + 7) & ~(size_t)7;
	bw_atomic_file f;
	int st = bw_atomic_open(&f, path);
	if (st) {
		cJSON_free(hdr);
		return st;
	}
	uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
	unsigned char head[CK_HEAD];
	const uint32_t ver = t->model ? CK_VERSION : CK_VERSION_TYPED, hl = (uint32_t)hpad;
	memcpy(head, CK_MAGIC, 8);
	memcpy(head + 8, &ver, 4);
	memcpy(head + 12, &hl, 4);
	const char spaces[8] = "       ";
	if ((st = put(&f, &crc, head, CK_HEAD)) || (st = put(&f, &crc, hdr, hlen)) ||
	    (st = put(&f, &crc, spaces, hpad - hlen)) || (st = put_payload(t, &m, &f, &crc)))
		goto fail;
	const bw_ck_array *a;
	size_t abytes;
	(void)ck_arrays(t, &a, &abytes);
	const int k = bw_optim_state_per_param(t->optim);
	unsigned char tail[CK_TRAILER];
	const uint64_t total = CK_HEAD + hpad + (uint64_t)(1 + k) * (uint64_t)m.num_params * sizeof(float) +
			       (uint64_t)m.num_state * sizeof(float) + abytes + CK_TRAILER;
	memcpy(tail, &total, 8);
	memcpy(tail + 8, &crc, 4);
	memcpy(tail + 12, CK_END, 4);
	if ((st = bw_write_all(f.fd, tail, CK_TRAILER, f.path)))
		goto fail;
	cJSON_free(hdr);
	return bw_atomic_commit(&f);
fail:
	cJSON_free(hdr);
	bw_atomic_abort(&f);
	return st;
}

/* Open and verify a checkpoint: magic, version, length against the trailer, CRC. On success
 * *hdr is the parsed header (cJSON_Delete it), *fd the open file, *payload the byte offset
 * of the weights, *version the file's (CK_VERSION or CK_VERSION_TYPED). */
static int ck_open(const char *path, cJSON **hdr, int *fdp, int64_t *payload, uint32_t *version)
{
	*hdr = NULL;
	*fdp = -1;
	int64_t size;
	int fd, st = bw_open_input(path, 0, &fd, &size);
	if (st)
		return st;
	unsigned char head[CK_HEAD], tail[CK_TRAILER];
	char *text = NULL;
	void *buf = NULL;
	if (size < CK_HEAD + CK_TRAILER) {
		st = bw_err(BURROW_E_FORMAT, "%s: truncated checkpoint (%lld bytes)", path, (long long)size);
		goto fail;
	}
	if ((st = bw_pread_all(fd, head, CK_HEAD, 0, path)) || (st = bw_pread_all(fd, tail, CK_TRAILER, size - CK_TRAILER, path)))
		goto fail;
	if (memcmp(head, CK_MAGIC, 8)) {
		st = bw_err(BURROW_E_FORMAT, "%s: not a burrow checkpoint (bad magic)", path);
		goto fail;
	}
	uint32_t ver, hl, crc_want;
	uint64_t total;
	memcpy(&ver, head + 8, 4);
	memcpy(&hl, head + 12, 4);
	memcpy(&total, tail, 8);
	memcpy(&crc_want, tail + 8, 4);
	if (ver != CK_VERSION && ver != CK_VERSION_TYPED) {
		st = bw_err(BURROW_E_FORMAT, "%s: checkpoint version %u, this burrow reads versions %d and %d", path, ver,
			    CK_VERSION, CK_VERSION_TYPED);
		goto fail;
	}
	if (memcmp(tail + 12, CK_END, 4) || total != (uint64_t)size) {
		st = bw_err(BURROW_E_FORMAT, "%s: truncated or incomplete checkpoint (%lld bytes, no valid trailer%s)", path,
			    (long long)size, memcmp(tail + 12, CK_END, 4) ? "" : ": length differs");
		goto fail;
	}
	if (hl > CK_MAX_HEADER || CK_HEAD + (int64_t)hl + CK_TRAILER > size) {
		st = bw_err(BURROW_E_FORMAT, "%s: checkpoint header length %u is impossible", path, hl);
		goto fail;
	}
	/* CRC over everything before the trailer */
	const size_t chunk = (size_t)1 << 22;
	if (!(buf = bw_malloc(chunk))) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	uint32_t crc = (uint32_t)crc32(0L, Z_NULL, 0);
	for (int64_t off = 0; off < size - CK_TRAILER;) {
		const size_t n = (size_t)BW_MIN((int64_t)chunk, size - CK_TRAILER - off);
		if ((st = bw_pread_all(fd, buf, n, off, path)))
			goto fail;
		crc = crc_update(crc, buf, n);
		off += (int64_t)n;
	}
	if (crc != crc_want) {
		st = bw_err(BURROW_E_FORMAT, "%s: checkpoint is corrupted (CRC-32 %08x, trailer says %08x)", path, crc, crc_want);
		goto fail;
	}
	if (!(text = bw_malloc(hl + 1))) {
		st = BURROW_E_NOMEM;
		goto fail;
	}
	if ((st = bw_pread_all(fd, text, hl, CK_HEAD, path)))
		goto fail;
	text[hl] = '\0';
	(void)bw_json_nomem();
	*hdr = cJSON_Parse(text);
	if (!*hdr && bw_json_nomem()) {
		st = bw_err(BURROW_E_NOMEM, "%s: out of memory reading the checkpoint header", path);
		goto fail;
	}
	if (!*hdr || !cJSON_IsObject(*hdr)) {
		cJSON_Delete(*hdr);
		*hdr = NULL;
		st = bw_err(BURROW_E_FORMAT, "%s: checkpoint header is not a JSON object", path);
		goto fail;
	}
	bw_free(text);
	bw_free(buf);
	*fdp = fd;
	*payload = CK_HEAD + hl;
	*version = ver;
	return 0;
fail:
	bw_free(text);
	bw_free(buf);
	close(fd);
	return st;
}

static int get_num(const cJSON *h, const char *key, double *v, const char *path)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(h, key);
	if (!cJSON_IsNumber(x))
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header lacks number '%s'", path, key);
	*v = x->valuedouble;
	return 0;
}

static int get_str(const cJSON *h, const char *key, const char **v, const char *path)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(h, key);
	if (!cJSON_IsString(x))
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header lacks string '%s'", path, key);
	*v = x->valuestring;
	return 0;
}

/* The fields both readers need. */
typedef struct ck_info {
	int model, layers, optimizer, epoch, best_epoch, state;
	int aggr, heads;       /* absent from checkpoints before issue 17: mean, 1 head, no norm, no state */
	int norm;
	bool residual;
	int64_t num_state;
	int64_t edge_dim;      /* gat's edge term width; absent: 0 */
	double attn_dropout;
	int64_t hidden, in_dim, classes, num_params, step;
	double dropout, lr, wd, momentum, best_valid, best_test;
	uint64_t seed;
	int task, scorer;      /* absent before link prediction: a node classifier */
	int64_t embed_dim;     /* learned input embeddings' width; absent: none */
	bool has_split;        /* absent before: trained on whatever split the run had */
	double split[3];       /* all 0: the dataset's splits */
	uint64_t split_seed;
	/* training habits: absent before issue 35 (a fresh run's state, raw features) */
	bool has_habits;
	double lr_now;
	int stale, plateau_bad;
	bool normalize_features;
} ck_info;

/* "split": three fractions (all 0: the dataset's splits), and "split_seed" when drawn. */
static int parse_split(const cJSON *h, ck_info *ci, const char *path)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(h, "split");
	ci->has_split = x != NULL;
	memset(ci->split, 0, sizeof ci->split);
	ci->split_seed = 0;
	if (!x)
		return 0;
	if (!cJSON_IsArray(x) || cJSON_GetArraySize(x) != 3)
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'split' is not three fractions", path);
	double sum = 0;
	for (int i = 0; i < 3; i++) {
		const cJSON *f = cJSON_GetArrayItem(x, i);
		if (!cJSON_IsNumber(f) || !(f->valuedouble >= 0 && f->valuedouble <= 1))
			return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'split' is not three fractions", path);
		sum += ci->split[i] = f->valuedouble;
	}
	if (sum == 0)
		return 0;
	const char *seed = NULL;
	int st = get_str(h, "split_seed", &seed, path);
	if (st)
		return st;
	ci->split_seed = strtoull(seed, NULL, 10);
	if (ci->split_seed != ci->seed) /* the trainer draws its split from its seed */
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint's split was drawn from seed %s, its model's seed is %" PRIu64,
			      path, seed, ci->seed);
	return 0;
}

/* "a random split a,b,c drawn from seed S" or "the dataset's splits". */
static const char *split_words(char *buf, size_t cap, const double *f, uint64_t seed)
{
	if (f[0] + f[1] + f[2] > 0)
		snprintf(buf, cap, "a random split %g,%g,%g drawn from seed %" PRIu64, f[0], f[1], f[2], seed);
	else
		snprintf(buf, cap, "the dataset's splits");
	return buf;
}

/* The habits' keys: "lr_now", "stale_evals", "plateau_bad_evals" (all three or none) and
 * "normalize_features". */
static int parse_habits(const cJSON *h, ck_info *ci, const char *path)
{
	ci->normalize_features = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "normalize_features"));
	ci->has_habits = cJSON_GetObjectItemCaseSensitive(h, "lr_now") != NULL;
	if (!ci->has_habits)
		return 0;
	double v[3];
	static const char *const keys[3] = {"lr_now", "stale_evals", "plateau_bad_evals"};
	for (int i = 0; i < 3; i++) {
		int st = get_num(h, keys[i], &v[i], path);
		if (st)
			return st;
		if (i > 0 && !bw_is_int_in(v[i], 0, INT32_MAX))
			return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's '%s' is %g, not a count", path, keys[i], v[i]);
	}
	if (!(v[0] > 0) || !isfinite(v[0]))
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'lr_now' is %g, not a positive rate", path, v[0]);
	ci->lr_now = v[0];
	ci->stale = (int)v[1];
	ci->plateau_bad = (int)v[2];
	return 0;
}

static int parse_info(const cJSON *h, ck_info *ci, const char *path)
{
	double v[15];
	static const char *const keys[15] = {"layers", "hidden", "in_dim", "classes", "dropout", "lr", "weight_decay",
					     "momentum", "optimizer_step", "epoch", "best_epoch", "best_valid_acc",
					     "best_test_acc", "num_params", "state_per_param"};
	const char *model = NULL, *optim = NULL, *seed = NULL, *format = NULL;
	int st;
	/* the integers' ranges (0: a real number), checked before any cast */
	static const double hi[15] = {INT32_MAX, 9007199254740992.0, 9007199254740992.0, INT32_MAX, 0, 0, 0,
				      0, 9007199254740992.0, INT32_MAX, INT32_MAX, 0, 0, 9007199254740992.0, INT32_MAX};
	for (int i = 0; i < 15; i++) {
		if ((st = get_num(h, keys[i], &v[i], path)))
			return st;
		if (hi[i] > 0 && !bw_is_int_in(v[i], -1, hi[i]))
			return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's '%s' is %g, not an integer in [-1, %.0f]",
				      path, keys[i], v[i], hi[i]);
	}
	if ((st = get_str(h, "format", &format, path)) || (st = get_str(h, "model", &model, path)) ||
	    (st = get_str(h, "optimizer", &optim, path)) || (st = get_str(h, "seed", &seed, path)))
		return st;
	if (strcmp(format, "burrow-checkpoint"))
		return bw_err(BURROW_E_FORMAT, "%s: header format is '%s', not burrow-checkpoint", path, format);
	ci->model = burrow_model_parse(model);
	ci->optimizer = optim_parse(optim);
	if (!ci->model || !ci->optimizer)
		return bw_err(BURROW_E_FORMAT, "%s: unknown model '%s' or optimizer '%s'", path, model, optim);
	ci->layers = (int)v[0];
	ci->hidden = (int64_t)v[1];
	ci->in_dim = (int64_t)v[2];
	ci->classes = (int64_t)v[3];
	ci->dropout = v[4];
	ci->lr = v[5];
	ci->wd = v[6];
	ci->momentum = v[7];
	ci->step = (int64_t)v[8];
	ci->epoch = (int)v[9];
	ci->best_epoch = (int)v[10];
	ci->best_valid = v[11];
	ci->best_test = v[12];
	ci->num_params = (int64_t)v[13];
	ci->state = (int)v[14];
	ci->seed = strtoull(seed, NULL, 10);
	/* keys added later are optional: an older checkpoint holds a mean-aggregating model */
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(h, "aggr");
	ci->aggr = BURROW_AGGR_MEAN;
	if (x && (!cJSON_IsString(x) || (ci->aggr = burrow_aggr_parse(x->valuestring)) < 0))
		return bw_err(BURROW_E_FORMAT, "%s: unknown aggregator in the checkpoint header", path);
	ci->heads = 1;
	ci->attn_dropout = 0;
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "heads")) && (!cJSON_IsNumber(x) || (ci->heads = (int)x->valuedouble) < 1))
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'heads' is not a positive number", path);
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "attn_dropout")) && cJSON_IsNumber(x))
		ci->attn_dropout = x->valuedouble;
	ci->norm = BURROW_NORM_NONE;
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "norm")) &&
	    (!cJSON_IsString(x) || (ci->norm = burrow_norm_parse(x->valuestring)) < 0))
		return bw_err(BURROW_E_FORMAT, "%s: unknown normalization in the checkpoint header", path);
	ci->residual = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(h, "residual"));
	ci->edge_dim = 0;
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "edge_dim")) &&
	    (!cJSON_IsNumber(x) || (ci->edge_dim = (int64_t)x->valuedouble) < 1 || ci->model != BURROW_MODEL_GAT))
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'edge_dim' is not a positive number of a gat", path);
	if ((st = parse_habits(h, ci, path)))
		return st;
	ci->task = BURROW_TASK_NODE;
	ci->scorer = BURROW_SCORER_DOT;
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "task")) &&
	    (!cJSON_IsString(x) || (ci->task = burrow_task_parse(x->valuestring)) < BURROW_TASK_NODE))
		return bw_err(BURROW_E_FORMAT, "%s: unknown task in the checkpoint header", path);
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "scorer")) &&
	    (!cJSON_IsString(x) || (ci->scorer = burrow_scorer_parse(x->valuestring)) < 0))
		return bw_err(BURROW_E_FORMAT, "%s: unknown scorer in the checkpoint header", path);
	ci->embed_dim = 0;
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "embed_dim")) &&
	    (!cJSON_IsNumber(x) || (ci->embed_dim = (int64_t)x->valuedouble) < 1))
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'embed_dim' is not a width", path);
	ci->num_state = 0;
	if ((x = cJSON_GetObjectItemCaseSensitive(h, "num_state")) && (!cJSON_IsNumber(x) || (ci->num_state = (int64_t)x->valuedouble) < 0))
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'num_state' is not a count", path);
	return parse_split(h, ci, path);
}

/* A typed checkpoint's types, relations and training fanouts (its header's "node_types",
 * "relations", "target_type", "fanout"); the names are the parsed header's. */
typedef struct ck_types {
	int num_types, num_rels, target;
	const char *type_name[BURROW_MAX_TYPES];
	int64_t num_nodes[BURROW_MAX_TYPES], feat_dim[BURROW_MAX_TYPES], emb_dim[BURROW_MAX_TYPES];
	const char *rel_name[BURROW_MAX_RELATIONS];
	int rel_src[BURROW_MAX_RELATIONS], rel_dst[BURROW_MAX_RELATIONS];
	int64_t rel_edges[BURROW_MAX_RELATIONS];
	int32_t fanout[BURROW_MAX_LAYERS];
} ck_types;

/* A count in [0, 2^53] under key of the object o. */
static int get_count(const cJSON *o, const char *key, int64_t *v, const char *path)
{
	double d = 0;
	int st = get_num(o, key, &d, path);
	if (!st && !bw_is_int_in(d, 0, 9007199254740992.0))
		st = bw_err(BURROW_E_FORMAT, "%s: checkpoint header's '%s' is %g, not a count", path, key, d);
	if (!st)
		*v = (int64_t)d;
	return st;
}

/* The index of the type called name among y's, or a refusal naming the key it came from. */
static int type_named(const ck_types *y, const char *name, const char *key, int *out, const char *path)
{
	for (int t = 0; t < y->num_types; t++)
		if (!strcmp(y->type_name[t], name)) {
			*out = t;
			return 0;
		}
	return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's '%s' names type '%s', which 'node_types' lacks", path,
		      key, name);
}

/* A list under key holding 1 .. max entries, or a refusal. */
static const cJSON *get_list(const cJSON *h, const char *key, int max, int *n, const char *path)
{
	const cJSON *x = cJSON_GetObjectItemCaseSensitive(h, key);
	*n = cJSON_IsArray(x) ? cJSON_GetArraySize(x) : 0;
	if (*n < 1 || *n > max) {
		(void)bw_err(BURROW_E_FORMAT, "%s: checkpoint header's '%s' is not a list of 1 to %d entries", path, key,
			     max);
		return NULL;
	}
	return x;
}

static int parse_node_types(const cJSON *h, ck_types *y, const char *path)
{
	const cJSON *types = get_list(h, "node_types", BURROW_MAX_TYPES, &y->num_types, path), *x;
	int t = 0, st = 0;
	if (!types)
		return BURROW_E_FORMAT;
	cJSON_ArrayForEach(x, types)
	{
		if ((st = get_str(x, "name", &y->type_name[t], path)) ||
		    (st = get_count(x, "num_nodes", &y->num_nodes[t], path)) ||
		    (st = get_count(x, "feat_dim", &y->feat_dim[t], path)) ||
		    (st = get_count(x, "embed_dim", &y->emb_dim[t], path)))
			return st;
		t++;
	}
	return 0;
}

static int parse_relations(const cJSON *h, ck_types *y, const char *path)
{
	const cJSON *rels = get_list(h, "relations", BURROW_MAX_RELATIONS, &y->num_rels, path), *x;
	int r = 0, st = 0;
	if (!rels)
		return BURROW_E_FORMAT;
	cJSON_ArrayForEach(x, rels)
	{
		const char *src = NULL, *dst = NULL;
		if ((st = get_str(x, "src", &src, path)) || (st = get_str(x, "name", &y->rel_name[r], path)) ||
		    (st = get_str(x, "dst", &dst, path)) || (st = get_count(x, "num_edges", &y->rel_edges[r], path)) ||
		    (st = type_named(y, src, "relations", &y->rel_src[r], path)) ||
		    (st = type_named(y, dst, "relations", &y->rel_dst[r], path)))
			return st;
		r++;
	}
	return 0;
}

/* A typed checkpoint's keys (file version 2), for a model of ci->layers layers. */
static int parse_types(const cJSON *h, const ck_info *ci, ck_types *y, const char *path)
{
	memset(y, 0, sizeof *y);
	const char *target = NULL;
	int st, n;
	if ((st = parse_node_types(h, y, path)) || (st = parse_relations(h, y, path)) ||
	    (st = get_str(h, "target_type", &target, path)) || (st = type_named(y, target, "target_type", &y->target, path)))
		return st;
	const cJSON *f = get_list(h, "fanout", BURROW_MAX_LAYERS, &n, path), *x;
	if (!f)
		return BURROW_E_FORMAT;
	if (n != ci->layers)
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'fanout' has %d values for %d layers", path, n,
			      ci->layers);
	int l = 0;
	cJSON_ArrayForEach(x, f)
	{
		if (!cJSON_IsNumber(x) || !bw_is_int_in(x->valuedouble, -1, 1 << 30))
			return bw_err(BURROW_E_FORMAT, "%s: checkpoint header's 'fanout' is not a list of integers >= -1", path);
		y->fanout[l++] = (int32_t)x->valuedouble;
	}
	return 0;
}

/* The model and optimizer a checkpoint describes, into o. */
static void ck_opts(const ck_info *ci, burrow_train_opts *o)
{
	o->model = ci->model;
	o->layers = ci->layers;
	o->hidden = ci->hidden;
	o->dropout = ci->dropout;
	o->aggr = ci->aggr;
	o->heads = ci->heads;
	o->attn_dropout = ci->attn_dropout;
	o->norm = ci->norm;
	o->residual = ci->residual;
	o->gat_edge_features = ci->edge_dim > 0;
	o->optimizer = ci->optimizer;
	o->lr = ci->lr;
	o->weight_decay = ci->wd;
	o->momentum = ci->momentum;
	o->seed = ci->seed;
	o->normalize_features = ci->normalize_features;
	o->task = ci->task;
	o->scorer = ci->scorer;
	if (ci->embed_dim > 0)
		o->embed_dim = ci->embed_dim;
}

/* What a typed checkpoint adds to its model's options: learned embeddings (their width), and
 * the fanouts it trained with, evaluation's default. */
static void typed_opts(const ck_types *y, burrow_train_opts *o)
{
	for (int t = 0; t < y->num_types; t++)
		if (y->emb_dim[t] > 0) {
			o->embed_types = true;
			o->embed_dim = y->emb_dim[t];
		}
	for (int l = 0; l < o->layers; l++)
		o->fanout[l] = y->fanout[l];
}

/* A header whose model the trainer would refuse (hidden 0, a dropout of 2) is the
 * checkpoint's fault: refused here naming the file, so that what burrow_trainer_open refuses
 * later is the dataset's or the machine's, not blamed on the checkpoint. */
static int check_model(const ck_info *ci, const char *path)
{
	burrow_train_opts m;
	burrow_train_defaults(&m);
	ck_opts(ci, &m);
	int st = bw_trainer_check_opts(&m);
	if (!st)
		return 0;
	char why[512];
	const char *msg = burrow_last_error();
	snprintf(why, sizeof why, "%s", strncmp(msg, "train: ", 7) ? msg : msg + 7);
	return bw_err(st, "%s: the checkpoint's model: %s", path, why);
}

int burrow_checkpoint_read_opts(const char *path, burrow_train_opts *opts)
{
	cJSON *h;
	int fd;
	int64_t payload;
	uint32_t ver;
	ck_info ci;
	ck_types y;
	burrow_train_opts oo, *o = &oo;
	burrow_train_defaults(&oo);
	int st = bw_opts_in(&oo, sizeof oo, opts, "burrow_train_opts");
	if (st || (st = ck_open(path, &h, &fd, &payload, &ver)))
		return st;
	close(fd);
	st = parse_info(h, &ci, path);
	if (!st && ver == CK_VERSION_TYPED)
		st = parse_types(h, &ci, &y, path);
	const cJSON *task = cJSON_GetObjectItemCaseSensitive(h, "task");
	const int ck_task = cJSON_IsString(task) ? burrow_task_parse(task->valuestring) : -1;
	cJSON_Delete(h); /* y's names with it: typed_opts reads numbers only */
	if (st || (st = check_model(&ci, path)))
		return st;
	ck_opts(&ci, o);
	if (ver == CK_VERSION_TYPED)
		typed_opts(&y, o);
	if (ck_task == BURROW_TASK_MULTILABEL) /* a multi-label model's header says so (a classifier's does not) */
		o->task = ck_task;
	if (ci.has_split) /* an older checkpoint leaves the caller's */
		memcpy(o->split, ci.split, sizeof o->split);
	bw_stats_out(opts, o, sizeof *o); /* at most the caller's size */
	return 0;
}

/* The dataset the model trained on (the header's "dataset" and "num_nodes") against the one
 * it is loaded for: a different name or node count is refused naming both. A header without
 * them (written by hand) or without a name ("") is not checked for what it lacks; "parts",
 * what distributed training recorded before it recorded the input dataset's name, checks
 * the node count only. */
static int check_dataset(const cJSON *h, const bw_ck_state *t, const char *path)
{
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(h, "dataset");
	const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(h, "num_nodes");
	if (!t->dataset)
		return 0;
	const char *was = cJSON_IsString(name) ? name->valuestring : "";
	const bool any = !*was || !*t->dataset || !strcmp(was, "parts") || !strcmp(t->dataset, "parts");
	if ((any || !strcmp(was, t->dataset)) && (!cJSON_IsNumber(nodes) || nodes->valuedouble == (double)t->num_nodes))
		return 0;
	char n[32] = "?";
	if (cJSON_IsNumber(nodes))
		snprintf(n, sizeof n, "%.0f", nodes->valuedouble);
	return bw_err(BURROW_E_INVAL, "%s: the model trained on dataset '%s' (%s nodes); this dataset is '%s' (%lld nodes)",
		      path, was, n, t->dataset, (long long)t->num_nodes);
}

/* A file of one kind (version 1: homogeneous, 2: typed) for a trainer of the other. */
static int check_kind(const cJSON *h, uint32_t ver, const ck_info *ci, const bw_ck_state *t, const char *path)
{
	if ((ver == CK_VERSION_TYPED) == (t->model == NULL))
		return 0;
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(h, "dataset");
	return bw_err(BURROW_E_INVAL, "%s: checkpoint holds a %s model of the %s dataset '%s'; this dataset ('%s') is %s",
		      path, burrow_model_name(ci->model), t->model ? "typed" : "homogeneous",
		      cJSON_IsString(name) ? name->valuestring : "", t->dataset ? t->dataset : "",
		      t->model ? "homogeneous" : "typed");
}

/* "12 nodes, 4 features", "12 nodes, learned embeddings of width 8" or "12 nodes, no features". */
static const char *type_words(char *buf, size_t cap, int64_t nodes, int64_t feat, int64_t emb)
{
	int k = snprintf(buf, cap, "%lld nodes, ", (long long)nodes);
	if (feat > 0)
		snprintf(buf + k, cap - (size_t)k, "%lld features", (long long)feat);
	else if (emb > 0)
		snprintf(buf + k, cap - (size_t)k, "learned embeddings of width %lld", (long long)emb);
	else
		snprintf(buf + k, cap - (size_t)k, "no features");
	return buf;
}

/* The node types a typed checkpoint records (names, counts, widths) against the trainer's. */
static int check_node_types(const ck_types *c, const bw_ck_typed *y, const char *path)
{
	const burrow_hetero *g = y->h;
	if (c->num_types != g->num_types)
		return bw_err(BURROW_E_INVAL, "%s: the model trained on %d node types; this dataset has %d", path,
			      c->num_types, g->num_types);
	for (int t = 0; t < g->num_types; t++) {
		if (!strcmp(c->type_name[t], g->type_names[t]) && c->num_nodes[t] == g->type_nodes[t] &&
		    c->feat_dim[t] == y->feat_dim[t] && c->emb_dim[t] == y->emb_dim[t])
			continue;
		char a[96], b[96];
		return bw_err(BURROW_E_INVAL, "%s: the model trained on node type %d '%s' (%s); this run's is '%s' (%s)", path,
			      t, c->type_name[t], type_words(a, sizeof a, c->num_nodes[t], c->feat_dim[t], c->emb_dim[t]),
			      g->type_names[t], type_words(b, sizeof b, g->type_nodes[t], y->feat_dim[t], y->emb_dim[t]));
	}
	if (c->target != g->target_type)
		return bw_err(BURROW_E_INVAL, "%s: the model trained on target type '%s'; this dataset's is '%s'", path,
			      c->type_name[c->target], g->type_names[g->target_type]);
	return 0;
}

/* The relations a typed checkpoint records (src, name, dst, edges) against the dataset's. */
static int check_relations(const ck_types *c, const bw_ck_typed *y, const char *path)
{
	const burrow_hetero *g = y->h;
	if (c->num_rels != g->num_relations)
		return bw_err(BURROW_E_INVAL, "%s: the model trained on %d relations; this dataset has %d", path, c->num_rels,
			      g->num_relations);
	for (int r = 0; r < g->num_relations; r++) {
		const burrow_relation *e = &g->rel[r];
		if (!strcmp(c->rel_name[r], e->name) && c->rel_src[r] == e->src_type && c->rel_dst[r] == e->dst_type &&
		    c->rel_edges[r] == e->graph.num_edges)
			continue;
		return bw_err(BURROW_E_INVAL, "%s: the model trained on relation %d %s___%s___%s (%lld edges); this dataset's "
					      "is %s___%s___%s (%lld edges)",
			      path, r, c->type_name[c->rel_src[r]], c->rel_name[r], c->type_name[c->rel_dst[r]],
			      (long long)c->rel_edges[r], g->type_names[e->src_type], e->name, g->type_names[e->dst_type],
			      (long long)e->graph.num_edges);
	}
	return 0;
}

/* The homogeneous model a checkpoint holds against the trainer's. */
static int check_shape(const ck_info *ci, const bw_model *m, const char *path)
{
	const bw_model_cfg *c = &m->cfg;
	if (ci->model != c->kind || ci->layers != c->layers || ci->in_dim != c->in_dim || ci->classes != c->classes ||
	    (c->layers > 1 && ci->hidden != c->hidden) || ci->num_params != m->num_params ||
	    (c->kind == BURROW_MODEL_SAGE && ci->aggr != c->aggr) || (c->kind == BURROW_MODEL_GAT && ci->heads != c->heads) ||
	    ci->norm != c->norm || ci->residual != c->residual || ci->num_state != m->num_state)
		return bw_err(BURROW_E_INVAL,
			      "%s: checkpoint holds a %s model (%d layers, hidden %lld, %lld -> %lld, aggr %s, %d heads, norm %s%s), "
			      "the trainer has a %s model (%d layers, hidden %lld, %lld -> %lld, aggr %s, %d heads, norm %s%s)",
			      path, burrow_model_name(ci->model), ci->layers, (long long)ci->hidden, (long long)ci->in_dim,
			      (long long)ci->classes, burrow_aggr_name(ci->aggr), ci->heads, burrow_norm_name(ci->norm),
			      ci->residual ? ", residual" : "", burrow_model_name(c->kind), c->layers, (long long)c->hidden,
			      (long long)c->in_dim, (long long)c->classes, burrow_aggr_name(c->aggr), c->heads,
			      burrow_norm_name(c->norm), c->residual ? ", residual" : "");
	return 0;
}

/* GAT's edge term: a checkpoint's against the trainer's (their widths, 0 for none). */
static int check_edge_dim(const ck_info *ci, const bw_model *m, const char *path)
{
	if (ci->edge_dim == m->cfg.edge_dim)
		return 0;
	return bw_err(BURROW_E_INVAL, "%s: checkpoint holds a gat whose attention reads edge features of width %lld, "
		      "the trainer's reads %lld (0: none; --edge-features on or off, and the dataset's edge features, decide)",
		      path, (long long)ci->edge_dim, (long long)m->cfg.edge_dim);
}

/* The typed model a checkpoint holds against the trainer's (its input widths are the types'). */
static int check_typed_shape(const ck_info *ci, const bw_ck_typed *y, const char *path)
{
	if (ci->model == y->kind && ci->layers == y->layers && ci->classes == y->classes &&
	    (y->layers == 1 || ci->hidden == y->hidden) && (y->kind != BURROW_MODEL_RGAT || ci->heads == y->heads) &&
	    ci->num_params == y->num_params && ci->num_state == 0)
		return 0;
	return bw_err(BURROW_E_INVAL,
		      "%s: checkpoint holds a %s model (%d layers, hidden %lld, %lld classes, %d heads, %lld weights), the "
		      "trainer has a %s model (%d layers, hidden %lld, %lld classes, %d heads, %lld weights)",
		      path, burrow_model_name(ci->model), ci->layers, (long long)ci->hidden, (long long)ci->classes, ci->heads,
		      (long long)ci->num_params, burrow_model_name(y->kind), y->layers, (long long)y->hidden,
		      (long long)y->classes, y->heads, (long long)y->num_params);
}

/* The task the header records ("task" and "tasks"; absent: node classification) against the
 * trainer's: a multi-label model's logits are not classes, nor the other way round. */
static int check_task(const cJSON *h, const bw_ck_state *t, const char *path)
{
	const cJSON *task = cJSON_GetObjectItemCaseSensitive(h, "task"), *n = cJSON_GetObjectItemCaseSensitive(h, "tasks");
	const int was = cJSON_IsString(task) ? burrow_task_parse(task->valuestring) : BURROW_TASK_NODE;
	const int64_t was_n = was == BURROW_TASK_MULTILABEL && cJSON_IsNumber(n) ? (int64_t)n->valuedouble : 0;
	const int now = t->task == BURROW_TASK_MULTILABEL ? BURROW_TASK_MULTILABEL : BURROW_TASK_NODE;
	const int64_t now_n = now == BURROW_TASK_MULTILABEL ? t->tasks : 0;
	if (was == now && was_n == now_n)
		return 0;
	return bw_err(BURROW_E_INVAL, "%s: the model was trained for task %s (%lld tasks); this trainer's is %s (%lld tasks)",
		      path, was < 0 ? task->valuestring : burrow_task_name(was), (long long)was_n, burrow_task_name(now),
		      (long long)now_n);
}

/* Everything the header says against the trainer: the file's kind, the dataset (a typed
 * one's types and relations), the model, the split, the optimizer. */
static int check_header(const cJSON *h, uint32_t ver, ck_info *ci, const bw_ck_state *t, const char *path)
{
	ck_types y;
	int st;
	if ((st = parse_info(h, ci, path)))
		return st;
	if ((ci->task == BURROW_TASK_LINK) != (t->task == BURROW_TASK_LINK) ||
	    (t->task == BURROW_TASK_LINK && ci->scorer != t->scorer))
		return bw_err(BURROW_E_INVAL, "%s: checkpoint holds a %s model%s%s; this trainer does %s%s", path,
			      ci->task == BURROW_TASK_LINK ? "link-prediction" : "node-classification",
			      ci->task == BURROW_TASK_LINK ? " with the scorer " : "",
			      ci->task == BURROW_TASK_LINK ? burrow_scorer_name(ci->scorer) : "",
			      t->task == BURROW_TASK_LINK ? "link prediction with the scorer " : "node classification",
			      t->task == BURROW_TASK_LINK ? burrow_scorer_name(t->scorer) : "");
	if ((st = check_kind(h, ver, ci, t, path)) || (st = check_dataset(h, t, path)) ||
	    (t->task != BURROW_TASK_LINK && (st = check_task(h, t, path))))
		return st;
	if (t->model && (ci->embed_dim > 0) != (t->embed_dim > 0)) /* the dataset's features came or went */
		return bw_err(BURROW_E_INVAL, "%s: the dataset has %s; the model in %s was trained %s",
			      t->dir ? t->dir : path, t->embed_dim ? "no features (meta.json's feat_dim is 0)" : "features",
			      path, ci->embed_dim ? "without features (learned embeddings)" : "on features");
	if (t->model) {
		if (!(st = check_edge_dim(ci, t->model, path)))
			st = check_shape(ci, t->model, path);
	} else if (!(st = parse_types(h, ci, &y, path)) && !(st = check_node_types(&y, t->typed, path)) &&
		 !(st = check_relations(&y, t->typed, path)))
		st = check_typed_shape(ci, t->typed, path);
	if (st)
		return st;
	if (ci->has_split && t->split &&
	    (ci->split[0] != t->split[0] || ci->split[1] != t->split[1] || ci->split[2] != t->split[2] ||
	     (ci->split[0] + ci->split[1] + ci->split[2] > 0 && ci->split_seed != t->split_seed))) {
		char a[96], b[96];
		return bw_err(BURROW_E_INVAL, "%s: checkpoint's model trained on %s, this run's split is %s", path,
			      split_words(a, sizeof a, ci->split, ci->split_seed),
			      split_words(b, sizeof b, t->split, t->split_seed));
	}
	const int k = bw_optim_state_per_param(t->optim);
	if (ci->optimizer != t->optim->kind || ci->state != k)
		return bw_err(BURROW_E_INVAL, "%s: checkpoint's optimizer is %s with %d state values per weight; this run "
					      "uses %s with %d",
			      path, optim_name(ci->optimizer), ci->state, optim_name(t->optim->kind), k);
	if (ci->normalize_features != t->normalize_features)
		return bw_err(BURROW_E_INVAL, "%s: checkpoint's model trained on %s features; this run reads them %s "
					      "(--normalize-features)", path, ci->normalize_features ? "normalized" : "raw",
			      t->normalize_features ? "normalized" : "raw");
	return 0;
}

/* Read the payload (the file verified, its header checked) into memory of its own, then put
 * it into the trainer: a failure before that leaves the trainer as it was. The host arrays
 * (learned embeddings) are read into new allocations that replace the trainer's. */
static int restore(bw_ck_state *t, const ck_info *ci, int fd, int64_t payload, const char *path)
{
	const ck_shape m = shape_of(t);
	const int k = bw_optim_state_per_param(t->optim);
	const size_t pbytes = (size_t)m.num_params * sizeof(float), sbytes = (size_t)m.num_state * sizeof(float);
	const size_t wbytes = (size_t)(1 + k) * pbytes + sbytes;
	const bw_ck_array *a;
	size_t abytes;
	const int na = ck_arrays(t, &a, &abytes);
	float *fresh[3 * BURROW_MAX_TYPES] = {NULL};
	void *tmp = NULL;
	struct stat sb;
	int st = 0;
	if (fstat(fd, &sb) != 0)
		return bw_err_errno(errno, path, "stat");
	if (payload + (int64_t)(wbytes + abytes) + CK_TRAILER != sb.st_size)
		return bw_err(BURROW_E_FORMAT, "%s: checkpoint payload size differs from its header's %lld weights", path,
			      (long long)ci->num_params);
	if (!(tmp = bw_aligned_alloc(64, wbytes + 1)))
		return BURROW_E_NOMEM;
	if ((st = bw_pread_all(fd, tmp, wbytes, payload, path)))
		goto out;
	int64_t off = payload + (int64_t)wbytes;
	for (int i = 0; i < na; i++) {
		const size_t n = (size_t)a[i].n * sizeof(float);
		if (!(fresh[i] = bw_malloc(n + 1))) {
			st = BURROW_E_NOMEM;
			goto out;
		}
		if ((st = bw_pread_all(fd, fresh[i], n, off, path)))
			goto out;
		off += (int64_t)n;
	}
	if (sbytes && (st = bw_device_upload(m.dev, m.state, (char *)tmp + (size_t)(1 + k) * pbytes, sbytes)))
		goto out;
	if (t->model)
		bw_model_memo_drop(t->model);
	if ((st = bw_device_upload(m.dev, m.params, tmp, pbytes)) ||
	    (k >= 1 && (st = bw_device_upload(t->optim->dev, t->optim->m, (char *)tmp + pbytes, pbytes))) ||
	    (k >= 2 && (st = bw_device_upload(t->optim->dev, t->optim->v, (char *)tmp + 2 * pbytes, pbytes))))
		goto out;
	for (int i = 0; i < na; i++) {
		bw_free(*a[i].data);
		*a[i].data = fresh[i];
		fresh[i] = NULL;
	}
	t->optim->step = ci->step;
	*t->seed = ci->seed;
	*t->epoch = ci->epoch;
	*t->best = (burrow_best){.epoch = ci->best_epoch, .valid_acc = ci->best_valid, .test_acc = ci->best_test};
	if (t->habits) { /* an older checkpoint: the state of a fresh run at its epoch */
		t->habits->lr = ci->has_habits ? ci->lr_now : t->habits->base_lr;
		t->habits->stale = ci->has_habits ? ci->stale : 0;
		t->habits->plateau_bad = ci->has_habits ? ci->plateau_bad : 0;
	}
out:
	for (int i = 0; i < na; i++)
		bw_free(fresh[i]);
	bw_aligned_free(tmp);
	return st;
}

int bw_checkpoint_load(bw_ck_state *t, const char *path)
{
	cJSON *h;
	int fd;
	int64_t payload;
	uint32_t ver;
	ck_info ci;
	int st = ck_open(path, &h, &fd, &payload, &ver);
	if (st)
		return st;
	st = check_header(h, ver, &ci, t, path);
	cJSON_Delete(h);
	if (!st)
		st = restore(t, &ci, fd, payload, path);
	close(fd);
	return st;
}

/* The trainer's view of what a checkpoint holds; a typed trainer's model is described in y. */
static bw_ck_state trainer_state(burrow_trainer *t, bw_ck_typed *y)
{
	if (t->typed)
		bw_htrain_ck_typed(t->typed, y);
	bw_ck_state s = {.model = t->model, .typed = t->typed ? y : NULL,
			 .optim = t->typed ? t->typed->optim : t->optim, .seed = &t->o.seed, .dropout = t->o.dropout,
			 .epoch = &t->epoch, .best = &t->best, .dataset = t->info->name, .habits = &t->habits,
			 .normalize_features = t->o.normalize_features,
			 .num_nodes = t->info->num_nodes, .split = t->o.split, .split_seed = t->split_seed,
			 .task = t->task, .tasks = t->tasks, .scorer = t->o.scorer, .dir = bw_dataset_dir(t->ds)};
	if (t->link)
		s.num_arrays = bw_ltrain_ck_arrays(t, s.arrays);
	if (t->emb) {
		s.num_arrays += bw_emb_ck_arrays(t->emb, s.arrays + s.num_arrays);
		s.embed_dim = bw_emb_dim(t->emb);
	}
	return s;
}

int burrow_trainer_save(burrow_trainer *t, const char *path)
{
	bw_ck_typed y;
	bw_ck_state s = trainer_state(t, &y);
	return bw_checkpoint_save(&s, path);
}

int burrow_trainer_load(burrow_trainer *t, const char *path)
{
	bw_ck_typed y;
	bw_ck_state s = trainer_state(t, &y);
	int st = bw_checkpoint_load(&s, path);
	if (!st && t->link)
		bw_ltrain_loaded(t);
	if (!st && t->emb)
		bw_emb_eval_rows(t); /* the load replaced the table */
	/* a checkpoint of the best epoch (best.ckpt) holds the best weights (a typed trainer keeps
	 * no copy of them: burrow_trainer_use_best refuses it) */
	if (!st && !t->typed && t->best.epoch >= 0 && t->best.epoch == t->epoch)
		st = bw_trainer_keep_best(t);
	return st;
}
