/* gen.c: synthetic datasets, deterministic by seed: a contextual stochastic block model
 * (CSBM), Graph500 R-MAT and a graph of ogbn-papers100M's shape, all with Gaussian
 * class-signal features streamed to disk.
 *
 * Every random draw comes from a stream keyed by (seed, purpose, index), so the output
 * depends only on the options, never on the number of threads. */
#include "../core/half.h"
#include "../core/internal.h"
#include "../graph/dataset_internal.h"
#include "dsio.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stream tags: one per purpose, so streams never overlap. */
enum { TAG_LABEL = 1, TAG_EDGE, TAG_MEAN, TAG_FEAT, TAG_PERM, TAG_SPLIT, TAG_HLABEL, TAG_HEDGE, TAG_HMEAN, TAG_HFEAT,
       TAG_TASKSET, TAG_TASKLABEL, TAG_EFEAT, TAG_EMEAN };

#define EDGE_CHUNK ((int64_t)1 << 16)

/* ogbn-papers100M's sizes (OGB's own numbers): nodes, directed edges before symmetrizing,
 * features, classes, and the train / valid / test splits. */
#define PAPERS_NODES 111059956.0
#define PAPERS_EDGES 1615685872.0
#define PAPERS_DIM 128
#define PAPERS_CLASSES 172
static const double PAPERS_SPLIT[3] = {1207179, 125265, 214338};

/* ogbl-citation2's sizes: nodes, directed edges (train + valid + test), features, the
 * positives of valid and of test, and the given negatives per positive. */
#define CIT2_NODES 2927963.0
#define CIT2_EDGES 30561187.0
#define CIT2_DIM 128
#define CIT2_EVAL 86956.0
#define CIT2_NEG 1000

void burrow_gen_defaults(burrow_gen_opts *o, int kind)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->kind = kind;
	o->num_nodes = 10000;
	o->avg_degree = 10;
	o->homophily = 0.8;
	o->scale = 16;
	o->edge_factor = 16;
	o->a = 0.57;
	o->b = 0.19;
	o->c = 0.19;
	o->num_classes = 8;
	o->feat_dim = 64;
	o->feat_dtype = BURROW_DTYPE_F32;
	o->signal = 1.0;
	o->train_frac = 0.6;
	o->valid_frac = 0.2;
	o->fraction = 1.0;
	o->target_signal = 0.5;
	o->edge_signal = 1.0;
	o->order = BURROW_ORDER_NONE;
	if (kind == BURROW_GEN_HSBM) {
		o->avg_degree = 6;
		o->feat_dim = 32;
		o->signal = 2.0;
	}
	if (kind == BURROW_GEN_PAPERS) {
		o->num_classes = PAPERS_CLASSES;
		o->feat_dim = PAPERS_DIM;
		o->feat_dtype = BURROW_DTYPE_F16;
		o->homophily = 0.6;
		o->signal = 3.0; /* 172 classes: weaker signals need far more steps than a 1/64 epoch has */
	}
	if (kind == BURROW_GEN_CITATION2) { /* papers' edges and classes, citation2's sizes, float32 */
		o->num_classes = PAPERS_CLASSES;
		o->feat_dim = CIT2_DIM;
		o->homophily = 0.6;
		o->signal = 3.0;
		o->neg_per_source = CIT2_NEG;
		o->directed = true;
	}
	if (kind == BURROW_GEN_MAG || kind == BURROW_GEN_IGBH)
		bw_gen_typed_defaults(o);
}

static void report(const burrow_gen_opts *o, const char *phase, uint64_t done, uint64_t total)
{
	if (o->progress)
		o->progress(o->progress_user, phase, done, total);
}

/* A link dataset: an edge split given, or citation2's own. */
static bool link_on(const burrow_gen_opts *o)
{
	return o->kind == BURROW_GEN_CITATION2 || o->edge_split[0] != 0 || o->edge_split[1] != 0 || o->edge_split[2] != 0;
}

/* The link options: fractions, negatives, direction, and what they exclude. */
static int check_link(const burrow_gen_opts *o)
{
	const double *f = o->edge_split, sum = f[0] + f[1] + f[2];
	if (!(f[0] >= 0 && f[1] >= 0 && f[2] >= 0) || (link_on(o) && sum != 0 && !(sum > 0 && sum <= 1 + 1e-9)))
		return bw_err(BURROW_E_INVAL, "gen: edge split fractions must be >= 0 with a sum in (0, 1]");
	if (o->neg_per_source < 0 || o->neg_per_source > (1 << 20))
		return bw_err(BURROW_E_INVAL, "gen: negatives per source must lie in [0, 2^20]");
	if (!link_on(o) && (o->directed || o->neg_per_source))
		return bw_err(BURROW_E_INVAL, "gen: directed edges and negatives are for link datasets (an edge split)");
	if (link_on(o) && (o->kind == BURROW_GEN_HSBM || o->num_tasks))
		return bw_err(BURROW_E_INVAL, "gen: an edge split is for homogeneous graphs without tasks (csbm, rmat, "
					      "papers, citation2)");
	return 0;
}

static int check_opts(const burrow_gen_opts *o)
{
	if (o->kind < BURROW_GEN_CSBM || o->kind > BURROW_GEN_CITATION2)
		return bw_err(BURROW_E_INVAL, "gen: unknown generator kind %d", o->kind);
	int st = check_link(o);
	if (st)
		return st;
	if (o->num_classes < 1 || o->feat_dim < 1)
		return bw_err(BURROW_E_INVAL, "gen: need at least 1 class and feature dimension 1");
	if (o->feat_dtype != BURROW_DTYPE_F32 && o->feat_dtype != BURROW_DTYPE_F16)
		return bw_err(BURROW_E_INVAL, "gen: feature dtype must be float32 or float16");
	if (!(o->signal >= 0) || !isfinite(o->signal))
		return bw_err(BURROW_E_INVAL, "gen: signal must be a finite number >= 0");
	if (!(o->train_frac >= 0 && o->valid_frac >= 0 && o->train_frac + o->valid_frac <= 1))
		return bw_err(BURROW_E_INVAL, "gen: split fractions must be >= 0 and sum to at most 1");
	if (o->kind == BURROW_GEN_HSBM) {
		if (o->num_nodes < 2 || o->num_nodes > ((int64_t)1 << 30))
			return bw_err(BURROW_E_INVAL, "gen hsbm: papers must lie in [2, 2^30]");
		if (!(o->avg_degree >= 0 && o->avg_degree <= 1e4))
			return bw_err(BURROW_E_INVAL, "gen hsbm: average degree must lie in [0, 1e4]");
		if (!(o->homophily >= 0 && o->homophily <= 1))
			return bw_err(BURROW_E_INVAL, "gen hsbm: homophily must lie in [0, 1]");
		if (o->num_classes > o->num_nodes)
			return bw_err(BURROW_E_INVAL, "gen hsbm: more classes than papers");
		if (!(o->target_signal >= 0) || !isfinite(o->target_signal))
			return bw_err(BURROW_E_INVAL, "gen hsbm: target signal must be a finite number >= 0");
	} else if (o->kind == BURROW_GEN_CSBM) {
		if (o->num_nodes < 2 || o->num_nodes > ((int64_t)1 << 40))
			return bw_err(BURROW_E_INVAL, "gen csbm: nodes must lie in [2, 2^40]");
		if (!(o->avg_degree >= 0) || o->avg_degree > (double)(o->num_nodes - 1))
			return bw_err(BURROW_E_INVAL, "gen csbm: average degree must lie in [0, nodes - 1]");
		if (!(o->homophily >= 0 && o->homophily <= 1))
			return bw_err(BURROW_E_INVAL, "gen csbm: homophily must lie in [0, 1]");
		if (o->num_classes > o->num_nodes)
			return bw_err(BURROW_E_INVAL, "gen csbm: more classes than nodes");
		if (o->num_tasks < 0 || o->num_tasks > 4096 || (o->num_tasks > 0 && o->num_classes < 2))
			return bw_err(BURROW_E_INVAL, "gen csbm: tasks must lie in [0, 4096], and tasks need 2 classes or more");
		if (o->edge_feat_dim < 0 || o->edge_feat_dim > 4096 || !(o->edge_signal >= 0) || !isfinite(o->edge_signal))
			return bw_err(BURROW_E_INVAL, "gen csbm: edge feature dimension must lie in [0, 4096] and the edge "
				      "signal be a finite number >= 0");
		if (o->node_features_from_edges && (!o->edge_feat_dim || (unsigned)o->edge_reduce > BURROW_EDGE_REDUCE_MAX))
			return bw_err(BURROW_E_INVAL, "gen csbm: node features from edges need edge features (and a "
				      "reduction: mean, sum or max)");
		if (o->edge_feat_dim && link_on(o))
			return bw_err(BURROW_E_UNSUPPORTED, "gen csbm: edge features and an edge split together: not "
				      "supported yet");
	} else if (o->kind == BURROW_GEN_CITATION2) {
		if (!(o->fraction > 0 && o->fraction <= 4))
			return bw_err(BURROW_E_INVAL, "gen citation2: fraction must lie in (0, 4]");
		if (llround(CIT2_EVAL * o->fraction) < 1)
			return bw_err(BURROW_E_INVAL, "gen citation2: fraction %g leaves valid and test empty (at least %g)",
				      o->fraction, 0.5 / CIT2_EVAL);
		if (!(o->homophily >= 0 && o->homophily <= 1))
			return bw_err(BURROW_E_INVAL, "gen citation2: homophily must lie in [0, 1]");
		if ((double)o->num_classes > CIT2_NODES * o->fraction / 2)
			return bw_err(BURROW_E_INVAL, "gen citation2: more classes than half the nodes");
	} else if (o->kind == BURROW_GEN_PAPERS) {
		if (!(o->fraction > 0 && o->fraction <= 4))
			return bw_err(BURROW_E_INVAL, "gen papers: fraction must lie in (0, 4]");
		if (llround(PAPERS_SPLIT[1] * o->fraction) < 1)
			return bw_err(BURROW_E_INVAL, "gen papers: fraction %g leaves the valid split empty (at least %g)",
				      o->fraction, 0.5 / PAPERS_SPLIT[1]);
		if (!(o->homophily >= 0 && o->homophily <= 1))
			return bw_err(BURROW_E_INVAL, "gen papers: homophily must lie in [0, 1]");
		if ((double)o->num_classes > PAPERS_NODES * o->fraction / 2)
			return bw_err(BURROW_E_INVAL, "gen papers: more classes than half the nodes");
	} else {
		if (o->scale < 1 || o->scale > 40)
			return bw_err(BURROW_E_INVAL, "gen rmat: scale must lie in [1, 40]");
		if (!(o->edge_factor > 0) || o->edge_factor > 1e6)
			return bw_err(BURROW_E_INVAL, "gen rmat: edge factor must lie in (0, 1e6]");
		if (!(o->a >= 0 && o->b >= 0 && o->c >= 0 && o->a + o->b + o->c <= 1))
			return bw_err(BURROW_E_INVAL, "gen rmat: a, b, c must be >= 0 and sum to at most 1");
	}
	return 0;
}

/* Uniform class per node. */
static void draw_labels(const burrow_gen_opts *o, int32_t *y, int64_t n)
{
	const uint64_t key = bw_key(o->seed, TAG_LABEL);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++) {
		bw_rng r;
		bw_rng_seed(&r, bw_key(key, (uint64_t)v));
		y[v] = (int32_t)bw_rng_below(&r, (uint64_t)o->num_classes);
	}
}

/* Multi-label targets from the latent classes y: task t's set of classes is a random half of
 * them (never none, never all), and node v is positive for t with probability 0.75 when its
 * class is in the set, else 0.1; 5% of the labels are unknown (-1). Written as labels.npy. */
#define TASK_P_IN 0.75
#define TASK_P_OUT 0.1
#define TASK_P_UNKNOWN 0.05
static int write_multilabels(const burrow_gen_opts *o, burrow_writer *w, const int32_t *y, int64_t n)
{
	const int64_t T = o->num_tasks, C = o->num_classes;
	uint8_t *in = bw_malloc((size_t)(T * C));
	int8_t *lab = bw_malloc((size_t)(n * T));
	int st = BURROW_E_NOMEM;
	if (!in || !lab)
		goto out;
	for (int64_t t = 0; t < T; t++) {
		bw_rng r;
		int64_t k = 0;
		bw_rng_seed(&r, bw_key(bw_key(o->seed, TAG_TASKSET), (uint64_t)t));
		for (int64_t c = 0; c < C; c++)
			k += in[t * C + c] = bw_rng_below(&r, 2) == 1;
		if (k == 0 || k == C) /* both kinds of nodes in every task */
			in[t * C + bw_rng_below(&r, (uint64_t)C)] ^= 1;
	}
	const uint64_t key = bw_key(o->seed, TAG_TASKLABEL);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++) {
		bw_rng r;
		bw_rng_seed(&r, bw_key(key, (uint64_t)v));
		for (int64_t t = 0; t < T; t++) {
			const double u = bw_rng_uniform(&r), p = in[t * C + y[v]] ? TASK_P_IN : TASK_P_OUT;
			lab[v * T + t] = (int8_t)(bw_rng_uniform(&r) < TASK_P_UNKNOWN ? -1 : u < p);
		}
	}
	st = burrow_writer_put_multilabels(w, lab, n, (int32_t)T);
out:
	bw_free(in);
	bw_free(lab);
	return st;
}

/* A random permutation of [0, n) keyed by (seed, tag). */
static void permutation(uint64_t seed, int tag, int64_t *p, int64_t n)
{
	bw_rng r;
	bw_rng_seed(&r, bw_key(seed, (uint64_t)tag));
	for (int64_t i = 0; i < n; i++)
		p[i] = i;
	for (int64_t i = n - 1; i > 0; i--) {
		int64_t j = (int64_t)bw_rng_below(&r, (uint64_t)i + 1), t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
}

/* Random train/valid/test split: a permutation cut by the fractions, each part sorted. */
static int write_split(const burrow_gen_opts *o, burrow_writer *w, int64_t n)
{
	int64_t *p = bw_malloc((size_t)n * sizeof *p);
	if (!p)
		return BURROW_E_NOMEM;
	permutation(o->seed, TAG_SPLIT, p, n);
	int64_t ntr = (int64_t)llround(o->train_frac * (double)n), nva = (int64_t)llround(o->valid_frac * (double)n);
	if (ntr + nva > n)
		nva = n - ntr;
	int64_t cut[4] = {0, ntr, ntr + nva, n};
	int st = 0;
	for (int s = 0; s < 3 && !st; s++) {
		bw_sort_i64(p + cut[s], cut[s + 1] - cut[s]);
		st = burrow_writer_put_split(w, s, p + cut[s], cut[s + 1] - cut[s]);
	}
	bw_free(p);
	return st;
}

/* Features: x_v = mu[y_v] + noise, noise ~ N(0, I), mu[c] ~ N(0, signal^2 / D * I), so
 * ||mu[c]|| is about `signal` and two classes sit about signal * sqrt(2) noise standard
 * deviations apart. Streamed in chunks: memory does not grow with N * D. */
static int write_features_of(const burrow_gen_opts *o, burrow_writer *w, int type, const int32_t *y, int64_t n,
			     double signal, uint64_t mean_key, uint64_t key);

static int write_features(const burrow_gen_opts *o, burrow_writer *w, const int32_t *y, int64_t n)
{
	return write_features_of(o, w, -1, y, n, o->signal, bw_key(o->seed, TAG_MEAN), bw_key(o->seed, TAG_FEAT));
}

/* write_features for node type `type` (-1: features.npy of a homogeneous dataset), class
 * means of norm about `signal` drawn from mean_key, noise from key. */
static int write_features_of(const burrow_gen_opts *o, burrow_writer *w, int type, const int32_t *y, int64_t n,
			     double signal, uint64_t mean_key, uint64_t key)
{
	const int64_t d = o->feat_dim, C = o->num_classes;
	const size_t es = burrow_dtype_size(o->feat_dtype);
	const int64_t chunk = BW_MAX((int64_t)1, (int64_t)(4 << 20) / (d * (int64_t)es));
	int st;

	float *mu = bw_malloc((size_t)(C * d) * sizeof *mu);
	void *buf = bw_malloc((size_t)(chunk * d) * es);
	if (!mu || !buf) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	const double sd = signal / sqrt((double)d);
	for (int64_t c = 0; c < C; c++) {
		bw_rng r;
		bw_rng_seed(&r, bw_key(mean_key, (uint64_t)c));
		for (int64_t j = 0; j < d; j++)
			mu[c * d + j] = (float)(sd * bw_rng_normal(&r));
	}
	if ((st = type < 0 ? burrow_writer_features_begin(w, n, d, o->feat_dtype)
			   : burrow_writer_type_features_begin(w, type, d, o->feat_dtype)))
		goto out;
	for (int64_t lo = 0; lo < n; lo += chunk) {
		const int64_t hi = BW_MIN(n, lo + chunk);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
		for (int64_t v = lo; v < hi; v++) {
			bw_rng r;
			bw_rng_seed(&r, bw_key(key, (uint64_t)v));
			const float *m = mu + (int64_t)y[v] * d;
			for (int64_t j = 0; j < d; j += 2) {
				double z[2];
				bw_rng_normal2(&r, z);
				for (int64_t k = j; k < BW_MIN(j + 2, d); k++) {
					float x = m[k] + (float)z[k - j];
					if (es == 4)
						((float *)buf)[(v - lo) * d + k] = x;
					else
						((uint16_t *)buf)[(v - lo) * d + k] = bw_f32_to_f16(x);
				}
			}
		}
		if ((st = burrow_writer_features_append(w, buf, hi - lo)))
			goto out;
		report(o, "features", (uint64_t)hi, (uint64_t)n);
	}
	st = burrow_writer_features_end(w);
out:
	bw_free(mu);
	bw_free(buf);
	return st;
}

int bw_gen_type_features(const burrow_gen_opts *o, burrow_writer *w, int type, const int32_t *y, int64_t n,
			 double signal, uint64_t mean_key, uint64_t key)
{
	return write_features_of(o, w, type, y, n, signal, mean_key, key);
}

/* Edge i's endpoints, drawn from r, the stream of that edge alone. */
typedef void (*edge_fn)(const void *ctx, bw_rng *r, int64_t *u, int64_t *v);

/* The m edges of a generator, EDGE_CHUNK at a time drawn by all threads and added to b:
 * edge i draws from the stream keyed (seed, TAG_EDGE, i) alone, so the graph is the same
 * on any number of threads. */
static int add_edges(const burrow_gen_opts *o, burrow_csr_builder *b, int64_t m, edge_fn draw, const void *ctx)
{
	int64_t *src = bw_malloc((size_t)EDGE_CHUNK * sizeof *src), *dst = bw_malloc((size_t)EDGE_CHUNK * sizeof *dst);
	int st = BURROW_E_NOMEM;
	if (!src || !dst)
		goto out;
	const uint64_t key = bw_key(o->seed, TAG_EDGE);
	for (int64_t lo = 0; lo < m; lo += EDGE_CHUNK) {
		const int64_t cnt = BW_MIN(EDGE_CHUNK, m - lo);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
		for (int64_t i = 0; i < cnt; i++) {
			bw_rng r;
			bw_rng_seed(&r, bw_key(key, (uint64_t)(lo + i)));
			draw(ctx, &r, &src[i], &dst[i]);
		}
		if ((st = burrow_csr_builder_add(b, src, dst, (size_t)cnt)))
			goto out;
		report(o, "edges", (uint64_t)(lo + cnt), (uint64_t)m);
	}
	st = 0;
out:
	bw_free(src);
	bw_free(dst);
	return st;
}

typedef struct csbm_ctx {
	const burrow_gen_opts *o;
	int64_t n;
	const int32_t *y;       /* [n] classes */
	const int64_t *members; /* [n] nodes grouped by class, in id order */
	const int64_t *off;     /* [C + 1] each class's first position in members */
} csbm_ctx;

static void csbm_edge(const void *ctx, bw_rng *r, int64_t *pu, int64_t *pv)
{
	const csbm_ctx *x = ctx;
	const int64_t n = x->n, *off = x->off;
	int64_t u = (int64_t)bw_rng_below(r, (uint64_t)n), c = x->y[u];
	int64_t size = off[c + 1] - off[c], v;
	if (bw_rng_uniform(r) < x->o->homophily || size == n) {
		v = x->members[off[c] + (int64_t)bw_rng_below(r, (uint64_t)size)];
	} else {
		int64_t k = (int64_t)bw_rng_below(r, (uint64_t)(n - size));
		v = x->members[k < off[c] ? k : k + size];
	}
	*pu = u;
	*pv = v;
}

/* The nodes grouped by class, in id order (*members [n]), and each class's first position
 * (*off [C + 1]); caller frees both. */
static int class_groups(const burrow_gen_opts *o, const int32_t *y, int64_t **members, int64_t **off)
{
	const int64_t n = o->num_nodes, C = o->num_classes;
	int64_t *mb = bw_malloc((size_t)n * sizeof *mb), *of = bw_calloc((size_t)C + 1, sizeof *of);
	*members = mb;
	*off = of;
	if (!mb || !of)
		return BURROW_E_NOMEM;
	for (int64_t v = 0; v < n; v++)
		of[y[v] + 1]++;
	for (int64_t c = 0; c < C; c++)
		of[c + 1] += of[c];
	for (int64_t v = 0; v < n; v++)
		mb[of[y[v]]++] = v;
	for (int64_t c = C; c > 0; c--)
		of[c] = of[c - 1];
	of[0] = 0;
	return 0;
}

/* CSBM's input edges: M = N * d / 2 undirected. */
static int64_t csbm_num_edges(const burrow_gen_opts *o) { return (int64_t)llround((double)o->num_nodes * o->avg_degree / 2.0); }

/* CSBM edges: M of them; each picks u uniformly, then v uniformly in u's class with
 * probability h, else uniformly among the nodes of the other classes. */
static int csbm_edges(const burrow_gen_opts *o, burrow_csr_builder *b, const int32_t *y)
{
	const int64_t m = csbm_num_edges(o);
	int64_t *members, *off;
	int st = class_groups(o, y, &members, &off);
	const csbm_ctx x = {.o = o, .n = o->num_nodes, .y = y, .members = members, .off = off};
	if (!st && !(st = burrow_csr_builder_reserve(b, (size_t)m)))
		st = add_edges(o, b, m, csbm_edge, &x);
	bw_free(members);
	bw_free(off);
	return st;
}

/* csbm's edge features, one row per input edge i in the order edges were added: the edge's
 * endpoints drawn again from its own stream (as add_edges did), then its row from the stream
 * (seed, TAG_EFEAT, i); class means of the columns 1 .. De-1 from (seed, TAG_EMEAN, class).
 * Handed to the writer, which puts each CSR entry's row in place (both directions alike). */
static int csbm_edge_features(const burrow_gen_opts *o, burrow_writer *w, const int32_t *y)
{
	const int64_t de = o->edge_feat_dim, C = o->num_classes, m = csbm_num_edges(o);
	float *rows = bw_malloc((size_t)(BW_MAX(m, 1) * de) * sizeof *rows);
	float *mu = bw_calloc((size_t)(C * de), sizeof *mu);
	int64_t *members, *off;
	int st = class_groups(o, y, &members, &off);
	const csbm_ctx xx = {.o = o, .n = o->num_nodes, .y = y, .members = members, .off = off}, *x = &xx;
	if (!st && (!rows || !mu))
		st = BURROW_E_NOMEM;
	if (st)
		goto out;
	const double sd = de > 1 ? o->edge_signal / sqrt((double)(de - 1)) : 0.0;
	for (int64_t c = 0; c < C; c++) {
		bw_rng r;
		bw_rng_seed(&r, bw_key(bw_key(o->seed, TAG_EMEAN), (uint64_t)c));
		for (int64_t k = 1; k < de; k++)
			mu[c * de + k] = (float)(sd * bw_rng_normal(&r));
	}
	const uint64_t ekey = bw_key(o->seed, TAG_EDGE), fkey = bw_key(o->seed, TAG_EFEAT);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t i = 0; i < m; i++) {
		bw_rng r;
		int64_t u, v;
		bw_rng_seed(&r, bw_key(ekey, (uint64_t)i));
		csbm_edge(x, &r, &u, &v);
		bw_rng_seed(&r, bw_key(fkey, (uint64_t)i));
		float *f = rows + i * de;
		const float *mu_u = mu + (int64_t)x->y[u] * de, *mu_v = mu + (int64_t)x->y[v] * de;
		for (int64_t k = 0; k < de; k++) {
			const double z = bw_rng_normal(&r);
			f[k] = k == 0 ? (float)((x->y[u] == x->y[v] ? 1.0 : -1.0) * o->edge_signal + z)
				      : (float)(0.5 * ((double)mu_u[k] + mu_v[k]) + z);
		}
	}
	report(o, "edge features", 1, 1);
	if (!(st = burrow_writer_put_edge_features(w, rows, m, de, BURROW_DTYPE_F32)) && o->node_features_from_edges)
		st = burrow_writer_features_from_edges(w, o->edge_reduce);
out:
	bw_free(rows);
	bw_free(mu);
	bw_free(members);
	bw_free(off);
	return st;
}

typedef struct rmat_ctx {
	int scale;
	double a, ab, abc;    /* a, a + b, a + b + c */
	const int64_t *perm;  /* [2^scale] the scrambling of ids */
} rmat_ctx;

static void rmat_edge(const void *ctx, bw_rng *r, int64_t *pu, int64_t *pv)
{
	const rmat_ctx *x = ctx;
	int64_t u = 0, v = 0;
	for (int l = 0; l < x->scale; l++) {
		double p = bw_rng_uniform(r);
		int bu = p >= x->ab, bv = (p >= x->a && p < x->ab) || p >= x->abc;
		u = (u << 1) | bu;
		v = (v << 1) | bv;
	}
	*pu = x->perm[u];
	*pv = x->perm[v];
}

/* Graph500 R-MAT edges: each bit level picks a quadrant with probabilities a, b, c, d;
 * vertex ids are then scrambled by a random permutation. */
static int rmat_edges(const burrow_gen_opts *o, burrow_csr_builder *b)
{
	const int64_t n = (int64_t)1 << o->scale;
	const int64_t m = (int64_t)llround(o->edge_factor * (double)n);
	int64_t *perm = bw_malloc((size_t)n * sizeof *perm);
	if (!perm)
		return BURROW_E_NOMEM;
	permutation(o->seed, TAG_PERM, perm, n);
	const rmat_ctx x = {.scale = o->scale, .a = o->a, .ab = o->a + o->b, .abc = o->a + o->b + o->c, .perm = perm};
	int st = burrow_csr_builder_reserve(b, (size_t)m);
	if (!st)
		st = add_edges(o, b, m, rmat_edge, &x);
	bw_free(perm);
	return st;
}

/* ---------------------------------------------------------------- papers100M-shaped */

/* A keyed bijection of [0, n): a 4-round Feistel network on the smallest even number of
 * bits that covers n, walking the cycle until the value falls inside [0, n). O(1) memory,
 * so ids can be scrambled at any size. */
typedef bw_feistel feistel; /* dsio.h: gen_typed.c draws with it too */

static void feistel_init(feistel *f, uint64_t key, uint64_t n)
{
	int bits = 2;
	while (bits < 64 && ((uint64_t)1 << bits) < n)
		bits += 2;
	f->key = key;
	f->n = n;
	f->half = bits / 2;
	f->mask = ((uint64_t)1 << f->half) - 1;
}

static uint64_t feistel_round(const feistel *f, int r, uint64_t x)
{
	return bw_key(bw_key(f->key, (uint64_t)r), x) & f->mask;
}

static uint64_t feistel_fwd(const feistel *f, uint64_t x)
{
	do {
		uint64_t l = x >> f->half, r = x & f->mask;
		for (int k = 0; k < 4; k++) {
			uint64_t t = r;
			r = l ^ feistel_round(f, k, r);
			l = t;
		}
		x = (l << f->half) | r;
	} while (x >= f->n);
	return x;
}

static uint64_t feistel_inv(const feistel *f, uint64_t x)
{
	do {
		uint64_t l = x >> f->half, r = x & f->mask;
		for (int k = 3; k >= 0; k--) {
			uint64_t t = l;
			l = r ^ feistel_round(f, k, l);
			r = t;
		}
		x = (l << f->half) | r;
	} while (x >= f->n);
	return x;
}

/* The bijection and the power-law rank for gen_typed.c (dsio.h); the same draws as here. */
void bw_feistel_init(bw_feistel *f, uint64_t key, uint64_t n) { feistel_init(f, key, n); }
uint64_t bw_feistel_fwd(const bw_feistel *f, uint64_t x) { return feistel_fwd(f, x); }
uint64_t bw_feistel_inv(const bw_feistel *f, uint64_t x) { return feistel_inv(f, x); }

/* The sizes of a papers-shaped graph at o->fraction. */
static void papers_sizes(const burrow_gen_opts *o, int64_t *n, int64_t *m, int64_t split[3])
{
	*n = (int64_t)llround(PAPERS_NODES * o->fraction);
	*m = (int64_t)llround(PAPERS_EDGES * o->fraction);
	for (int s = 0; s < 3; s++)
		split[s] = (int64_t)llround(PAPERS_SPLIT[s] * o->fraction);
}

/* A rank in [0, n) drawn with density proportional to rank^(-1/2) (Chung-Lu weights):
 * expected degrees fall as rank^(-1/2), so the degree distribution has a power-law tail
 * P(deg > d) ~ d^-2 (exponent 3), with the largest degree about sqrt(N) times the mean. */
static inline int64_t plaw_rank(bw_rng *r, int64_t n)
{
	double u = bw_rng_uniform(r);
	int64_t x = (int64_t)((double)n * u * u);
	return x < n ? x : n - 1;
}

int64_t bw_plaw_rank(bw_rng *r, int64_t n) { return plaw_rank(r, n); }

typedef struct papers_ctx {
	const feistel *ids; /* rank -> node id */
	int64_t n, C;
	double homophily;
} papers_ctx;

static void papers_edge(const void *ctx, bw_rng *r, int64_t *pu, int64_t *pv)
{
	const papers_ctx *x = ctx;
	const int64_t n = x->n, C = x->C;
	int64_t u = plaw_rank(r, n), v;
	if (bw_rng_uniform(r) < x->homophily) {
		const int64_t c = u % C, nc = (n - c + C - 1) / C; /* ranks c, c + C, ... below n */
		v = plaw_rank(r, nc) * C + c;
	} else {
		v = plaw_rank(r, n);
	}
	*pu = (int64_t)feistel_fwd(x->ids, (uint64_t)u);
	*pv = (int64_t)feistel_fwd(x->ids, (uint64_t)v);
}

/* Node ids are ranks scrambled by a Feistel bijection; the class of rank k is k mod C, so
 * each class owns hubs and tail alike. Edge i draws its source rank from the power law;
 * with probability h its destination is a power-law rank of the same class, else a
 * power-law rank of any class. The builder symmetrizes and drops loops and repeats. */
static int papers_edges(const burrow_gen_opts *o, burrow_csr_builder *b, const feistel *ids, int64_t n, int64_t m)
{
	const papers_ctx x = {.ids = ids, .n = n, .C = o->num_classes, .homophily = o->homophily};
	return add_edges(o, b, m, papers_edge, &x);
}

/* The splits: the first train + valid + test ids of a second keyed bijection, cut in that
 * order and sorted; memory grows with the splits, not with N. */
static int papers_splits(const burrow_gen_opts *o, burrow_writer *w, int64_t n, const int64_t cnt[3],
			 int64_t **ids, int64_t *total)
{
	feistel f;
	feistel_init(&f, bw_key(o->seed, TAG_SPLIT), (uint64_t)n);
	*total = cnt[0] + cnt[1] + cnt[2];
	int64_t *p = *ids = bw_malloc((size_t)BW_MAX(*total, 1) * sizeof *p);
	if (!p)
		return BURROW_E_NOMEM;
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t i = 0; i < *total; i++)
		p[i] = (int64_t)feistel_fwd(&f, (uint64_t)i);
	int st = 0;
	for (int64_t s = 0, lo = 0; s < 3 && !st; lo += cnt[s++]) {
		bw_sort_i64(p + lo, cnt[s]);
		st = burrow_writer_put_split(w, (int)s, p + lo, cnt[s]);
	}
	return st;
}

/* Classes of every node (rank mod C, through the inverse bijection): the features carry
 * them for all nodes; labels.npy keeps them for the split nodes only, -1 elsewhere, as
 * ogbn-papers100M labels only its 1.5M arXiv papers. */
static int papers_nodes(const burrow_gen_opts *o, burrow_writer *w, const feistel *ids, int64_t n,
			const int64_t cnt[3])
{
	int64_t total, *split = NULL;
	int32_t *y = bw_malloc((size_t)n * sizeof *y);
	int st = BURROW_E_NOMEM;
	if (!y)
		goto out;
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++)
		y[v] = (int32_t)(feistel_inv(ids, (uint64_t)v) % (uint64_t)o->num_classes);
	if ((st = write_features(o, w, y, n)) || (st = papers_splits(o, w, n, cnt, &split, &total)))
		goto out;
	/* keep the split nodes' classes aside, blank everything, put them back */
	int32_t *keep = bw_malloc((size_t)BW_MAX(total, 1) * sizeof *keep);
	if (!keep) {
		st = BURROW_E_NOMEM;
		goto out;
	}
	for (int64_t i = 0; i < total; i++)
		keep[i] = y[split[i]];
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++)
		y[v] = -1;
	for (int64_t i = 0; i < total; i++)
		y[split[i]] = keep[i];
	bw_free(keep);
	st = burrow_writer_put_labels(w, y, n, o->num_classes);
out:
	bw_free(split);
	bw_free(y);
	return st;
}

/* ---------------------------------------------------------------- hsbm: a typed graph */

/* Types of hsbm, in the order they are declared. */
enum { H_PAPER, H_AUTHOR, H_FIELD, H_TYPES };
/* Relations: (author, writes, paper), (paper, cites, paper), (paper, has_topic, field). */
enum { H_WRITES, H_CITES, H_TOPIC, H_RELATIONS };

typedef struct hsbm_ctx {
	int64_t n, nf, C;            /* papers (= authors), fields, classes */
	double h;                    /* homophily */
	const int32_t *y;            /* [n] papers' classes */
	const int64_t *members[2];   /* papers, authors grouped by class, in id order */
	const int64_t *off[2];       /* [C + 1] each class's first position in members */
} hsbm_ctx;

/* A node of class c among n nodes grouped by class (members, off); with probability 1 - h (or
 * when the class is empty) any node. */
static int64_t hsbm_pick(const hsbm_ctx *x, bw_rng *r, int g, int64_t c)
{
	const int64_t lo = x->off[g][c], hi = x->off[g][c + 1];
	if (bw_rng_uniform(r) < x->h && hi > lo)
		return x->members[g][lo + (int64_t)bw_rng_below(r, (uint64_t)(hi - lo))];
	return (int64_t)bw_rng_below(r, (uint64_t)x->n);
}

/* Edge i of relation rel from its own stream: a uniform paper p, and the other end of p's
 * class with probability h. Fields: field f has class f mod C. */
static void hsbm_edge(const hsbm_ctx *x, int rel, bw_rng *r, int64_t *src, int64_t *dst)
{
	const int64_t p = (int64_t)bw_rng_below(r, (uint64_t)x->n), c = x->y[p];
	if (rel == H_WRITES) {
		*src = hsbm_pick(x, r, 1, c);
		*dst = p;
	} else if (rel == H_CITES) {
		*src = p;
		*dst = hsbm_pick(x, r, 0, c);
	} else {
		const int64_t per = (x->nf - c + x->C - 1) / x->C; /* fields c, c + C, ... below nf */
		*src = p;
		*dst = bw_rng_uniform(r) < x->h && per > 0 ? c + x->C * (int64_t)bw_rng_below(r, (uint64_t)per)
							   : (int64_t)bw_rng_below(r, (uint64_t)x->nf);
	}
}

/* Relation rel's m edges into w, EDGE_CHUNK at a time drawn by all threads, each edge from the
 * stream keyed (seed, TAG_HEDGE, rel, i). */
static int hsbm_relation(const burrow_gen_opts *o, burrow_writer *w, const hsbm_ctx *x, int rel, int64_t m)
{
	static const struct {
		int src;
		const char *name;
		int dst;
	} R[H_RELATIONS] = {{H_AUTHOR, "writes", H_PAPER}, {H_PAPER, "cites", H_PAPER}, {H_PAPER, "has_topic", H_FIELD}};
	int64_t *src = bw_malloc((size_t)EDGE_CHUNK * sizeof *src), *dst = bw_malloc((size_t)EDGE_CHUNK * sizeof *dst);
	const uint64_t key = bw_key(bw_key(o->seed, TAG_HEDGE), (uint64_t)rel);
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.threads = o->threads;
	co.mem_bytes = o->mem_bytes;
	co.spill_dir = o->spill_dir;
	int st = src && dst ? burrow_writer_relation_begin(w, R[rel].src, R[rel].name, R[rel].dst, &co) : BURROW_E_NOMEM;
	for (int64_t lo = 0; lo < m && !st; lo += EDGE_CHUNK) {
		const int64_t cnt = BW_MIN(EDGE_CHUNK, m - lo);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
		for (int64_t i = 0; i < cnt; i++) {
			bw_rng r;
			bw_rng_seed(&r, bw_key(key, (uint64_t)(lo + i)));
			hsbm_edge(x, rel, &r, &src[i], &dst[i]);
		}
		st = burrow_writer_relation_add(w, src, dst, (size_t)cnt);
		report(o, "edges", (uint64_t)(lo + cnt), (uint64_t)m);
	}
	if (!st)
		st = burrow_writer_relation_end(w);
	bw_free(src);
	bw_free(dst);
	return st;
}

/* Nodes of n grouped by class y: members [n], off [C + 1]. */
static void group_by_class(const int32_t *y, int64_t n, int64_t C, int64_t *members, int64_t *off)
{
	for (int64_t v = 0; v < n; v++)
		off[y[v] + 1]++;
	for (int64_t c = 0; c < C; c++)
		off[c + 1] += off[c];
	for (int64_t v = 0; v < n; v++)
		members[off[y[v]]++] = v;
	for (int64_t c = C; c > 0; c--)
		off[c] = off[c - 1];
	off[0] = 0;
}

/* The three relations: papers average avg_degree / 2 authors, cite avg_degree / 2 papers and
 * have one field each, every edge in the paper's class with probability h. */
static int hsbm_relations(const burrow_gen_opts *o, burrow_writer *w, const int32_t *y, const int32_t *ya)
{
	const int64_t n = o->num_nodes, C = o->num_classes;
	const int64_t half = (int64_t)llround((double)n * o->avg_degree / 2.0);
	int64_t *members[2] = {bw_malloc((size_t)n * sizeof(int64_t)), bw_malloc((size_t)n * sizeof(int64_t))};
	int64_t *off[2] = {bw_calloc((size_t)C + 1, sizeof(int64_t)), bw_calloc((size_t)C + 1, sizeof(int64_t))};
	int st = BURROW_E_NOMEM;
	if (!members[0] || !members[1] || !off[0] || !off[1])
		goto out;
	group_by_class(y, n, C, members[0], off[0]);
	group_by_class(ya, n, C, members[1], off[1]);
	const hsbm_ctx x = {.n = n, .nf = BW_MAX(C, n / 100), .C = C, .h = o->homophily, .y = y,
			    .members = {members[0], members[1]}, .off = {off[0], off[1]}};
	if (!(st = hsbm_relation(o, w, &x, H_WRITES, half)) && !(st = hsbm_relation(o, w, &x, H_CITES, half)))
		st = hsbm_relation(o, w, &x, H_TOPIC, n);
out:
	for (int g = 0; g < 2; g++) {
		bw_free(members[g]);
		bw_free(off[g]);
	}
	return st;
}

/* hsbm: papers (the target: classes uniform, features of weak signal target_signal), authors
 * (classes uniform, features of strong signal `signal`) and fields (class f mod C, no
 * features); the relations above carry the papers' classes. */
static int hsbm(const burrow_gen_opts *o, burrow_writer *w)
{
	const int64_t n = o->num_nodes;
	int32_t *y = bw_malloc((size_t)n * sizeof *y), *ya = bw_malloc((size_t)n * sizeof *ya);
	int t, st = y && ya ? 0 : BURROW_E_NOMEM;
	if (st)
		goto out;
	draw_labels(o, y, n);
	const uint64_t akey = bw_key(o->seed, TAG_HLABEL);
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++) {
		bw_rng r;
		bw_rng_seed(&r, bw_key(akey, (uint64_t)v));
		ya[v] = (int32_t)bw_rng_below(&r, (uint64_t)o->num_classes);
	}
	if ((st = burrow_writer_add_type(w, "paper", n, &t)) || (st = burrow_writer_add_type(w, "author", n, &t)) ||
	    (st = burrow_writer_add_type(w, "field", BW_MAX((int64_t)o->num_classes, n / 100), &t)) ||
	    (st = burrow_writer_set_target(w, H_PAPER)) || (st = hsbm_relations(o, w, y, ya)))
		goto out;
	if ((st = write_features_of(o, w, H_PAPER, y, n, o->target_signal, bw_key(o->seed, TAG_MEAN),
				    bw_key(o->seed, TAG_FEAT))) ||
	    (st = write_features_of(o, w, H_AUTHOR, ya, n, o->signal, bw_key(o->seed, TAG_HMEAN),
				    bw_key(o->seed, TAG_HFEAT))) ||
	    (st = burrow_writer_put_labels(w, y, n, o->num_classes)))
		goto out;
	st = write_split(o, w, n);
out:
	bw_free(y);
	bw_free(ya);
	return st;
}

/* The "source" object of meta.json: the generator and its options. */
static void source_json(const burrow_gen_opts *o, char *source, size_t cap)
{
	if (o->kind == BURROW_GEN_CSBM && o->num_tasks)
		snprintf(source, cap,
			 "{\"generator\": \"csbm\", \"seed\": %llu, \"num_nodes\": %lld, \"avg_degree\": %.17g, "
			 "\"homophily\": %.17g, \"num_classes\": %d, \"feat_dim\": %lld, \"signal\": %.17g, "
			 "\"num_tasks\": %d}",
			 (unsigned long long)o->seed, (long long)o->num_nodes, o->avg_degree, o->homophily,
			 o->num_classes, (long long)o->feat_dim, o->signal, o->num_tasks);
	else if (o->kind == BURROW_GEN_CSBM)
		snprintf(source, cap,
			 "{\"generator\": \"csbm\", \"seed\": %llu, \"num_nodes\": %lld, \"avg_degree\": %.17g, "
			 "\"homophily\": %.17g, \"num_classes\": %d, \"feat_dim\": %lld, \"signal\": %.17g}",
			 (unsigned long long)o->seed, (long long)o->num_nodes, o->avg_degree, o->homophily,
			 o->num_classes, (long long)o->feat_dim, o->signal);
	else if (o->kind == BURROW_GEN_HSBM)
		snprintf(source, cap,
			 "{\"generator\": \"hsbm\", \"seed\": %llu, \"num_nodes\": %lld, \"avg_degree\": %.17g, "
			 "\"homophily\": %.17g, \"num_classes\": %d, \"feat_dim\": %lld, \"signal\": %.17g, "
			 "\"target_signal\": %.17g}",
			 (unsigned long long)o->seed, (long long)o->num_nodes, o->avg_degree, o->homophily,
			 o->num_classes, (long long)o->feat_dim, o->signal, o->target_signal);
	else if (o->kind == BURROW_GEN_RMAT)
		snprintf(source, cap,
			 "{\"generator\": \"rmat\", \"seed\": %llu, \"scale\": %d, \"edge_factor\": %.17g, "
			 "\"a\": %.17g, \"b\": %.17g, \"c\": %.17g, \"num_classes\": %d, \"feat_dim\": %lld, "
			 "\"signal\": %.17g}",
			 (unsigned long long)o->seed, o->scale, o->edge_factor, o->a, o->b, o->c, o->num_classes,
			 (long long)o->feat_dim, o->signal);
	else
		snprintf(source, cap,
			 "{\"generator\": \"%s\", \"seed\": %llu, \"fraction\": %.17g, \"homophily\": %.17g, "
			 "\"num_classes\": %d, \"feat_dim\": %lld, \"signal\": %.17g}",
			 o->kind == BURROW_GEN_PAPERS ? "papers" : "citation2", (unsigned long long)o->seed, o->fraction,
			 o->homophily, o->num_classes, (long long)o->feat_dim, o->signal);
	size_t len = strlen(source);
	if (link_on(o) && len > 0) /* the link options, before the closing brace */
		snprintf(source + len - 1, cap - (len - 1),
			 ", \"edge_split\": [%.17g, %.17g, %.17g], \"neg_per_source\": %d, \"directed\": %s}",
			 o->edge_split[0], o->edge_split[1], o->edge_split[2], o->neg_per_source,
			 o->directed ? "true" : "false");
	len = strlen(source);
	if (o->kind == BURROW_GEN_CSBM && o->edge_feat_dim && len > 0 && len < cap)
		snprintf(source + len - 1, cap - len + 1, ", \"edge_feat_dim\": %lld, \"edge_signal\": %.17g%s%s%s}",
			 (long long)o->edge_feat_dim, o->edge_signal,
			 o->node_features_from_edges ? ", \"node_features_from_edges\": \"" : "",
			 o->node_features_from_edges ? burrow_edge_reduce_name(o->edge_reduce) : "",
			 o->node_features_from_edges ? "\"" : "");
}

/* ---------------------------------------------------------------- link datasets */

/* The sizes of a citation2-shaped graph at o->fraction: nodes and edges drawn. */
static void cit2_sizes(const burrow_gen_opts *o, int64_t *n, int64_t *m)
{
	*n = (int64_t)llround(CIT2_NODES * o->fraction);
	*m = (int64_t)llround(CIT2_EDGES * o->fraction);
}

/* The graph built in b split into w's edge split (bw_link_split_random, keyed by the seed):
 * the training edges become w's graph. citation2 without fractions keeps 86,956 * fraction
 * edges for valid and for test. */
static int link_split(const burrow_gen_opts *o, burrow_writer *w, burrow_csr_builder *b)
{
	burrow_csr g;
	int st = burrow_csr_builder_finish(b, &g);
	if (st)
		return st;
	bw_link_draw in = {.name = bw_writer_dir(w), .graph = &g, .symmetric = !o->directed, .seed = o->seed,
			   .mem_bytes = o->mem_bytes, .spill_dir = o->spill_dir, .per_source = o->neg_per_source};
	memcpy(in.frac, o->edge_split, sizeof in.frac);
	if (in.frac[0] == 0 && in.frac[1] == 0 && in.frac[2] == 0) {
		const double e = (double)llround(CIT2_EVAL * o->fraction);
		if (2 * e >= (double)g.num_edges)
			return bw_err(BURROW_E_INVAL, "gen citation2: %lld edges, too few for valid and test of %.0f each",
				      (long long)g.num_edges, e);
		in.frac[0] = ((double)g.num_edges - 2 * e) / (double)g.num_edges;
		in.frac[1] = in.frac[2] = e / (double)g.num_edges;
	}
	return bw_link_split_random(w, &in);
}

/* A link dataset's nodes: the features alone (the classes y, or from the rank bijection ids
 * when y is NULL, carry the signal; no labels, no node splits). */
static int link_nodes(const burrow_gen_opts *o, burrow_writer *w, const feistel *ids, const int32_t *y, int64_t n)
{
	if (y)
		return write_features(o, w, y, n);
	int32_t *c = bw_malloc((size_t)n * sizeof *c);
	if (!c)
		return BURROW_E_NOMEM;
#pragma omp parallel for schedule(static) num_threads(bw_threads(o->threads))
	for (int64_t v = 0; v < n; v++)
		c[v] = (int32_t)(feistel_inv(ids, (uint64_t)v) % (uint64_t)o->num_classes);
	int st = write_features(o, w, c, n);
	bw_free(c);
	return st;
}

/* ---------------------------------------------------------------- burrow_gen */

/* The graph of a homogeneous kind (edges drawn into a builder) into w: symmetrized, or split
 * into a link dataset; y [n] the classes (csbm, rmat), ids the rank bijection (papers shapes). */
static int gen_graph(const burrow_gen_opts *o, burrow_writer *w, const feistel *ids, const int32_t *y, int64_t n,
		     int64_t m)
{
	const bool papers = o->kind == BURROW_GEN_PAPERS || o->kind == BURROW_GEN_CITATION2, link = link_on(o);
	burrow_csr_builder *b = NULL;
	burrow_csr_opts co;
	burrow_csr_defaults(&co);
	co.symmetrize = !(link && o->directed);
	co.edge_ids = o->kind == BURROW_GEN_CSBM && o->edge_feat_dim > 0 && !link; /* csbm_edge_features */
	co.threads = o->threads;
	/* papers-sized edges do not fit in memory: sort them in bounded runs by default; a link
	 * split holds the whole graph in memory (its training graph is built within the budget) */
	co.mem_bytes = link ? 0 : o->mem_bytes ? o->mem_bytes : papers ? bw_half_memory() : 0;
	co.spill_dir = o->spill_dir;
	co.progress = o->progress;
	co.progress_user = o->progress_user;
	int st = burrow_csr_builder_open(&b, n, &co);
	if (!st)
		st = papers ? papers_edges(o, b, ids, n, m) : o->kind == BURROW_GEN_CSBM ? csbm_edges(o, b, y) : rmat_edges(o, b);
	report(o, "csr", 0, 1);
	if (!st)
		st = link ? link_split(o, w, b) : burrow_writer_put_builder(w, b, true);
	report(o, "csr", 1, 1);
	burrow_csr_builder_close(b);
	return st;
}

/* A homogeneous kind into w: the classes (csbm, rmat: drawn; papers shapes: from the rank
 * bijection ids), the graph, then labels, splits and features, or a link dataset's features. */
static int gen_homogeneous(const burrow_gen_opts *o, burrow_writer *w, const feistel *ids, int64_t n, int64_t m,
			   const int64_t split[3])
{
	int32_t *y = NULL;
	int st = 0;
	if (!ids && !(y = bw_malloc((size_t)n * sizeof *y)))
		return BURROW_E_NOMEM;
	if (!ids)
		draw_labels(o, y, n);
	if ((st = gen_graph(o, w, ids, y, n, m)))
		goto out;
	if (link_on(o))
		st = link_nodes(o, w, ids, y, n);
	else if (ids)
		st = papers_nodes(o, w, ids, n, split);
	else if (!(st = o->kind == BURROW_GEN_CSBM && o->edge_feat_dim ? csbm_edge_features(o, w, y) : 0) &&
		 !(st = o->num_tasks ? write_multilabels(o, w, y, n) : burrow_writer_put_labels(w, y, n, o->num_classes)) &&
		 !(st = write_split(o, w, n)) && !o->node_features_from_edges)
		st = write_features(o, w, y, n);
out:
	bw_free(y);
	return st;
}

static int gen_plain(void *ctx, const char *dir) { return burrow_gen(ctx, dir); }

/* --order: the kind generated as usual into a scratch folder, then reordered into dir. */
static int gen_ordered(const burrow_gen_opts *o, const char *dir)
{
	if (o->kind == BURROW_GEN_HSBM || o->kind == BURROW_GEN_MAG || o->kind == BURROW_GEN_IGBH)
		return bw_err(BURROW_E_UNSUPPORTED, "gen: --order renumbers datasets of one node type; %s is typed",
			      o->kind == BURROW_GEN_HSBM ? "hsbm" : o->kind == BURROW_GEN_MAG ? "mag" : "igbh");
	burrow_gen_opts plain = *o;
	plain.order = BURROW_ORDER_NONE;
	plain.overwrite = false;
	const bw_order_job j = {.order = o->order, .seed = o->seed, .mem_bytes = o->mem_bytes, .overwrite = o->overwrite,
				.progress = o->progress, .progress_user = o->progress_user, .write = gen_plain,
				.ctx = &plain};
	return bw_write_ordered(dir, &j);
}

int burrow_gen(const burrow_gen_opts *opts, const char *dir)
{
	static const char *const NAMES[] = {"", "csbm", "rmat", "papers", "hsbm", "citation2"};
	burrow_writer *w = NULL;
	char source[768];
	int64_t n, m = 0, split[3] = {0};
	feistel ids;
	burrow_gen_opts oo;
	const burrow_gen_opts *o = &oo;
	int st;

	/* the defaults of the caller's kind under the fields the caller knows */
	burrow_gen_defaults(&oo, BURROW_GEN_CSBM);
	if ((st = bw_opts_in(&oo, sizeof oo, opts, "burrow_gen_opts")))
		return st;
	burrow_gen_defaults(&oo, oo.kind);
	if ((st = bw_opts_in(&oo, sizeof oo, opts, "burrow_gen_opts")))
		return st;
	if (o->order != BURROW_ORDER_NONE)
		return gen_ordered(o, dir);
	if (o->kind == BURROW_GEN_MAG || o->kind == BURROW_GEN_IGBH)
		return bw_gen_typed(o, dir);
	if ((st = check_opts(o)))
		return st;
	const bool papers = o->kind == BURROW_GEN_PAPERS || o->kind == BURROW_GEN_CITATION2;
	if (papers) {
		if (o->kind == BURROW_GEN_PAPERS)
			papers_sizes(o, &n, &m, split);
		else
			cit2_sizes(o, &n, &m);
		feistel_init(&ids, bw_key(o->seed, TAG_PERM), (uint64_t)n);
	} else {
		n = o->kind == BURROW_GEN_CSBM || o->kind == BURROW_GEN_HSBM ? o->num_nodes : (int64_t)1 << o->scale;
	}
	burrow_writer_opts wo;
	burrow_writer_defaults(&wo);
	wo.overwrite = o->overwrite;
	if ((st = burrow_writer_open(&w, dir, NAMES[o->kind], &wo)))
		return st;
	st = o->kind == BURROW_GEN_HSBM ? hsbm(o, w) : gen_homogeneous(o, w, papers ? &ids : NULL, n, m, split);
	source_json(o, source, sizeof source);
	if (!st)
		st = burrow_writer_set_source(w, source);
	if (st) {
		burrow_writer_abort(w);
		return st;
	}
	return burrow_writer_commit(w);
}
