/* test_link.c: link prediction: the edge-split reader, the edge batch producer (negatives,
 * exclusion of the batch's own edges), the scorer and its loss, the link trainer. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/driver/driver.h"
#include "util.h"
#include "link_util.h"
#include "train_util.h"

#include <math.h>

TU_SCRATCH_SUITE(link_data, 120);

/* A 300-node CSBM graph's edges split 85/5/10 (out: caller frees). */
static char *small_link(const char *neg, int64_t num_neg, const char *metric)
{
	char *src = tu_path(tu_dir, "csbm-300-8"), *out = tu_path(tu_dir, "link-%s", neg);
	if (!tu_exists(src)) {
		free(src);
		src = tu_weak_csbm(tu_dir, 300, 8);
	}
	const tu_link_cfg cfg = {.frac = {0.85, 0.05, 0.1}, .seed = 7, .neg = neg, .num_neg = num_neg, .metric = metric};
	tu_link_dataset(src, out, &cfg);
	free(src);
	return out;
}

Test(link_data, reader_serves_the_layout)
{
	char *dir = small_link("pairs", 3, NULL);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	cr_assert_eq(in->num_classes, 0);
	cr_assert(burrow_dataset_has_edge_split(ds));
	burrow_edge_split sp[3];
	int64_t total = 0;
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(burrow_dataset_edge_split(ds, i, &sp[i]), 0);
		total += sp[i].num_pos;
		cr_assert_eq(sp[i].neg, BURROW_EDGE_NEG_PAIRS);
		cr_assert_eq(sp[i].metric, BURROW_EDGE_METRIC_HITS);
		cr_assert_eq(sp[i].metric_k, 50);
	}
	cr_assert_eq(total, in->num_edges / 2 + sp[1].num_pos + sp[2].num_pos);
	cr_assert_eq(sp[0].num_pos * 2, in->num_edges, "the graph holds the training edges, both ways");
	cr_assert_null(sp[0].neg_pairs);
	cr_assert_eq(sp[1].num_neg, 3 * sp[1].num_pos);
	cr_assert_not_null(sp[2].neg_pairs);
	/* every training positive is in the graph */
	const burrow_csr *g = burrow_dataset_graph(ds);
	for (int64_t i = 0; i < sp[0].num_pos; i++) {
		int64_t u = sp[0].pos[2 * i], v = sp[0].pos[2 * i + 1], hit = 0;
		for (int64_t j = g->indptr[u]; j < g->indptr[u + 1]; j++)
			hit += burrow_csr_index(g, j) == v;
		cr_assert_eq(hit, 1);
	}
	cr_assert_eq(burrow_dataset_verify(ds), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_edge_split(ds, 3, &sp[0]), BURROW_E_RANGE);
	burrow_dataset_close(ds);
	free(dir);
}

Test(link_data, per_source_and_metric)
{
	char *dir = small_link("per_source", 20, "mrr");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_edge_split sp;
	cr_assert_eq(burrow_dataset_edge_split(ds, 2, &sp), 0);
	cr_assert_eq(sp.k, 20);
	cr_assert_eq(sp.num_neg, sp.num_pos);
	cr_assert_not_null(sp.neg_dst);
	cr_assert_eq(sp.metric, BURROW_EDGE_METRIC_MRR);
	burrow_dataset_close(ds);
	free(dir);
}

/* Rewrite dir/meta.json replacing the first `from` by `to`. */
static void meta_sub(const char *dir, const char *from, const char *to)
{
	char *p = tu_path(dir, "meta.json");
	size_t len;
	char *t = tu_read(p, &len), *at = strstr(t, from);
	cr_assert_not_null(at, "%s not in meta.json", from);
	FILE *f = fopen(p, "w");
	fprintf(f, "%.*s%s%s", (int)(at - t), t, to, at + strlen(from));
	fclose(f);
	free(t);
	free(p);
}

/* Each damage refused at open in one message naming what is wrong. */
Test(link_data, reader_refuses_mismatches)
{
	static const struct {
		const char *from, *to, *says;
	} cases[] = {
		{"\"neg\": \"pairs\"", "\"neg\": \"some\"", "\"neg\" must be"},
		{"\"valid_neg\": ", "\"valid_neg\": 1", "valid_neg.npy: shape"},
		{"\"directed\": false", "\"directed\": false, \"metric\": \"hits@0\"", "\"metric\" must be"},
		{"\"directed\": false", "\"directed\": false, \"metric\": \"mrr\"", "needs \"neg\": \"per_source\""},
		{"\"weight\": false", "\"weight\": true", "train_weight.npy"},
		{"\"weight\": false", "\"weight\": 1", "must be true or false"},
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		char *dir = small_link("pairs", 2, NULL);
		meta_sub(dir, cases[c].from, cases[c].to);
		burrow_dataset *ds;
		const int st = burrow_dataset_open(&ds, dir);
		cr_assert(st == BURROW_E_FORMAT || (c == 4 && st == BURROW_E_NOTFOUND), "case %zu: %d", c, st);
		cr_assert_null(ds);
		cr_assert(strstr(burrow_last_error(), cases[c].says), "case %zu: %s", c, burrow_last_error());
		tu_rmrf(dir);
		free(dir);
	}
	/* an id out of range, in a negative */
	char *dir = small_link("pairs", 2, NULL);
	char *p = tu_path(dir, "edge_split/test_neg.npy");
	bw_npy h;
	int64_t *data;
	cr_assert_eq(bw_npy_load(p, &h, (void **)&data), 0);
	data[5] = 300;
	cr_assert_eq(bw_npy_save(p, BURROW_DTYPE_I64, 2, h.shape, data, 64), 0);
	bw_free(data);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "test_neg.npy: entry [2, 1] is node 300, outside [0, 300)"), "%s",
		  burrow_last_error());
	free(p);
	free(dir);
}

Test(link_data, info_prints_and_verifies)
{
	char *dir = small_link("pairs", 2, "hits@20"), *out = NULL;
	cr_assert_eq(tu_sh(&out, NULL, "%s info %s --verify", tu_burrow(), dir), 0);
	cr_assert(strstr(out, "negatives pairs"), "%s", out);
	cr_assert(strstr(out, "metric hits@20"), "%s", out);
	cr_assert(strstr(out, "edge splits)"), "%s", out);
	free(out);
	cr_assert_eq(tu_sh(&out, NULL, "%s info %s --json", tu_burrow(), dir), 0);
	cr_assert(strstr(out, "\"edge_split\": {\"train\": "), "%s", out);
	cr_assert(strstr(out, "\"metric\": \"hits@20\"}}"), "%s", out);
	free(out);
	free(dir);
}

/* ------------------------------------------------------------ the edge sampler */

TU_SCRATCH_SUITE(link_sampler, 120);

typedef struct link_fixture {
	burrow_dataset *ds;
	const burrow_csr *g;
	burrow_edge_split tr;
} link_fixture;

static void fixture_open(link_fixture *f, int64_t nodes)
{
	char *src = tu_weak_csbm(tu_dir, nodes, 8), *out = tu_path(tu_dir, "link");
	const tu_link_cfg cfg = {.frac = {0.85, 0.05, 0.1}, .seed = 3, .neg = "pairs", .num_neg = 1};
	tu_link_dataset(src, out, &cfg);
	cr_assert_eq(burrow_dataset_open(&f->ds, out), 0, "%s", burrow_last_error());
	f->g = burrow_dataset_graph(f->ds);
	cr_assert_eq(burrow_dataset_edge_split(f->ds, BURROW_SPLIT_TRAIN, &f->tr), 0);
	free(src);
	free(out);
}

/* Edges of b's blocks that are the batch's positives or their reverses; every block edge
 * checked to be a real graph edge on the way. */
static int64_t excluded_seen(const burrow_csr *g, const burrow_edge_batch *eb)
{
	const burrow_batch *b = eb->nodes;
	const int64_t *ids = b->input_ids;
	int64_t seen = 0;
	for (int l = 0; l < b->num_layers; l++) {
		const burrow_block *blk = &b->blocks[l];
		for (int64_t i = 0; i < blk->num_dst; i++)
			for (int64_t e = blk->indptr[i]; e < blk->indptr[i + 1]; e++) {
				const int64_t a = ids[i], c = ids[blk->indices[e]];
				int64_t real = 0;
				for (int64_t j = g->indptr[a]; j < g->indptr[a + 1]; j++)
					real += burrow_csr_index(g, j) == c;
				cr_assert(real > 0, "block %d: %lld -> %lld is no graph edge", l, (long long)a, (long long)c);
				for (int64_t q = 0; q < eb->num_pos; q++) {
					const int64_t u = b->seeds[eb->src[q]], v = b->seeds[eb->dst[q]];
					seen += (a == u && c == v) || (a == v && c == u);
				}
			}
	}
	return seen;
}

/* Walk every block of every batch of two epochs: no excluded edge appears; with exclusion
 * off the same walk finds them (the check can fail). */
Test(link_sampler, batch_edges_excluded_from_blocks)
{
	link_fixture f;
	fixture_open(&f, 400);
	for (int on = 0; on < 2; on++) {
		burrow_edge_sampler_opts o;
		burrow_edge_sampler_defaults(&o);
		o.num_layers = 2;
		o.fanouts[0] = -1;
		o.fanouts[1] = 4;
		o.batch_size = 64;
		o.neg = 2;
		o.seed = 11;
		o.exclude = on;
		burrow_edge_sampler *s;
		cr_assert_eq(burrow_edge_sampler_open(&s, f.g, f.tr.pos, f.tr.num_pos, &o), 0, "%s", burrow_last_error());
		int64_t seen = 0;
		for (int64_t ep = 0; ep < 2; ep++)
			for (int64_t k = 0; k < burrow_edge_sampler_num_batches(s); k++) {
				burrow_edge_batch *eb;
				cr_assert_eq(burrow_edge_sampler_batch(s, ep, k, &eb), 0, "%s", burrow_last_error());
				seen += excluded_seen(f.g, eb);
				burrow_edge_sampler_release(s, eb);
			}
		if (on)
			cr_assert_eq(seen, 0, "%lld excluded edges in the blocks", (long long)seen);
		else
			cr_assert_gt(seen, 100, "without exclusion the walk must find the positives (%lld)", (long long)seen);
		burrow_edge_sampler_close(s);
	}
	burrow_dataset_close(f.ds);
}

/* The pairs: positives first (an epoch's batches cover each training edge once), then neg
 * per positive sharing its source; labels 1 then 0; seeds distinct and sorted. */
Test(link_sampler, pairs_and_negatives)
{
	link_fixture f;
	fixture_open(&f, 300);
	burrow_edge_sampler_opts o;
	burrow_edge_sampler_defaults(&o);
	o.num_layers = 2;
	o.batch_size = 50;
	o.neg = 3;
	burrow_edge_sampler *s;
	cr_assert_eq(burrow_edge_sampler_open(&s, f.g, f.tr.pos, f.tr.num_pos, &o), 0);
	int64_t *hit = calloc((size_t)f.tr.num_pos, sizeof *hit), negs_differ = 0;
	for (int64_t k = 0; k < burrow_edge_sampler_num_batches(s); k++) {
		burrow_edge_batch *eb;
		cr_assert_eq(burrow_edge_sampler_batch(s, 0, k, &eb), 0);
		const int64_t *sd = eb->nodes->seeds;
		cr_assert_eq(eb->num_pairs, 4 * eb->num_pos);
		for (int64_t i = 1; i < eb->nodes->num_seeds; i++)
			cr_assert_lt(sd[i - 1], sd[i]);
		for (int64_t q = 0; q < eb->num_pairs; q++) {
			cr_assert_eq(eb->label[q], q < eb->num_pos ? 1.0f : 0.0f);
			cr_assert(eb->src[q] >= 0 && eb->src[q] < eb->nodes->num_seeds);
			cr_assert(eb->dst[q] >= 0 && eb->dst[q] < eb->nodes->num_seeds);
		}
		for (int64_t i = 0; i < eb->num_pos; i++) {
			const int64_t u = sd[eb->src[i]], v = sd[eb->dst[i]];
			int64_t j = 0;
			while (j < f.tr.num_pos && !(f.tr.pos[2 * j] == u && f.tr.pos[2 * j + 1] == v && !hit[j]))
				j++;
			cr_assert_lt(j, f.tr.num_pos, "positive %lld -> %lld is not a training edge", (long long)u, (long long)v);
			hit[j] = 1;
			for (int n = 0; n < 3; n++) {
				const int64_t q = eb->num_pos + i * 3 + n;
				cr_assert_eq(sd[eb->src[q]], u);
				negs_differ += sd[eb->dst[q]] != v;
			}
		}
		burrow_edge_sampler_release(s, eb);
	}
	for (int64_t j = 0; j < f.tr.num_pos; j++)
		cr_assert_eq(hit[j], 1, "training edge %lld not in the epoch", (long long)j);
	cr_assert_gt(negs_differ, f.tr.num_pos * 2);
	free(hit);
	burrow_edge_sampler_close(s);
	burrow_dataset_close(f.ds);
}

/* --neg-mode both: a negative's two endpoints both uniform (the positives as in dst mode); an
 * unknown mode is refused. */
Test(link_sampler, negatives_of_both_endpoints)
{
	link_fixture f;
	fixture_open(&f, 300);
	burrow_edge_sampler_opts o;
	burrow_edge_sampler_defaults(&o);
	cr_assert_eq(o.neg_mode, BURROW_NEG_DST);
	o.num_layers = 2;
	o.batch_size = 50;
	o.neg = 2;
	burrow_edge_sampler *s, *d;
	cr_assert_eq(burrow_edge_sampler_open(&d, f.g, f.tr.pos, f.tr.num_pos, &o), 0);
	o.neg_mode = BURROW_NEG_BOTH;
	cr_assert_eq(burrow_edge_sampler_open(&s, f.g, f.tr.pos, f.tr.num_pos, &o), 0);
	int64_t src_differ = 0, negs = 0;
	for (int64_t k = 0; k < burrow_edge_sampler_num_batches(s); k++) {
		burrow_edge_batch *eb, *ed;
		cr_assert_eq(burrow_edge_sampler_batch(s, 0, k, &eb), 0);
		cr_assert_eq(burrow_edge_sampler_batch(d, 0, k, &ed), 0);
		const int64_t *sd = eb->nodes->seeds, *dd = ed->nodes->seeds;
		cr_assert_eq(eb->num_pairs, 3 * eb->num_pos);
		for (int64_t i = 0; i < eb->num_pos; i++) {
			cr_assert_eq(sd[eb->src[i]], dd[ed->src[i]]);
			cr_assert_eq(sd[eb->dst[i]], dd[ed->dst[i]]);
			for (int n = 0; n < 2; n++) {
				const int64_t q = eb->num_pos + i * 2 + n;
				src_differ += sd[eb->src[q]] != sd[eb->src[i]];
				cr_assert_eq(dd[ed->src[q]], dd[ed->src[i]], "dst mode keeps the source");
				negs++;
			}
		}
		burrow_edge_sampler_release(s, eb);
		burrow_edge_sampler_release(d, ed);
	}
	cr_assert_gt(src_differ, negs * 9 / 10, "%lld of %lld negatives kept the source", (long long)(negs - src_differ),
		     (long long)negs);
	burrow_edge_sampler_close(s);
	burrow_edge_sampler_close(d);
	o.neg_mode = 7;
	cr_assert_eq(burrow_edge_sampler_open(&s, f.g, f.tr.pos, f.tr.num_pos, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "negative mode"), "%s", burrow_last_error());
	burrow_dataset_close(f.ds);
}

static bool same_batch(const burrow_batch *a, const burrow_batch *b)
{
	if (a->num_input != b->num_input || a->num_seeds != b->num_seeds || a->num_layers != b->num_layers ||
	    memcmp(a->input_ids, b->input_ids, (size_t)a->num_input * sizeof *a->input_ids))
		return false;
	for (int l = 0; l < a->num_layers; l++) {
		const burrow_block *x = &a->blocks[l], *y = &b->blocks[l];
		if (x->num_dst != y->num_dst || x->num_src != y->num_src || x->num_edges != y->num_edges ||
		    memcmp(x->indptr, y->indptr, (size_t)(x->num_dst + 1) * sizeof *x->indptr) ||
		    memcmp(x->indices, y->indices, (size_t)x->num_edges * sizeof *x->indices))
			return false;
	}
	return true;
}

/* Without exclusion the edge sampler's blocks are the sampling kernel's for the same seeds
 * and key (the expander draws as the kernel does); threads 1 and 2 give the same bits. */
Test(link_sampler, expander_draws_as_the_kernel_and_threads_agree)
{
	link_fixture f;
	fixture_open(&f, 3000);
	burrow_edge_sampler *s[3];
	for (int v = 0; v < 3; v++) {
		burrow_edge_sampler_opts o;
		burrow_edge_sampler_defaults(&o);
		o.num_layers = 3;
		o.fanouts[0] = 40; /* past BW_SMALL_FANOUT: Floyd's hash set */
		o.batch_size = 256;
		o.seed = 5;
		o.exclude = v != 0;
		o.threads = v == 2 ? 2 : 1;
		cr_assert_eq(burrow_edge_sampler_open(&s[v], f.g, f.tr.pos, f.tr.num_pos, &o), 0);
	}
	bw_sample_ctx c;
	bw_sampled ref = {0};
	cr_assert_eq(bw_sample_ctx_init(&c, 1, 40), 0);
	const int fan[3] = {40, 10, 5};
	for (int64_t k = 0; k < 3; k++) {
		burrow_edge_batch *a, *b, *d;
		cr_assert_eq(burrow_edge_sampler_batch(s[0], 1, k, &a), 0);
		cr_assert_eq(burrow_edge_sampler_batch(s[1], 1, k, &b), 0);
		cr_assert_eq(burrow_edge_sampler_batch(s[2], 1, k, &d), 0);
		cr_assert_eq(bw_sample_batch(&c, f.g, a->nodes->seeds, a->nodes->num_seeds, 3, fan,
					     bw_key(bw_key(5, 1), (uint64_t)k), &ref), 0);
		cr_assert(same_batch(a->nodes, &ref.pub), "batch %lld differs from the kernel's", (long long)k);
		cr_assert(!same_batch(b->nodes, &ref.pub), "exclusion changed nothing");
		cr_assert(same_batch(b->nodes, d->nodes), "threads 1 and 2 differ at batch %lld", (long long)k);
		cr_assert_eq(memcmp(b->dst, d->dst, (size_t)b->num_pairs * sizeof *b->dst), 0);
		burrow_edge_sampler_release(s[0], a);
		burrow_edge_sampler_release(s[1], b);
		burrow_edge_sampler_release(s[2], d);
	}
	bw_sampled_free_arrays(&ref);
	bw_sample_ctx_free(&c);
	for (int v = 0; v < 3; v++)
		burrow_edge_sampler_close(s[v]);
	burrow_dataset_close(f.ds);
}

/* ------------------------------------------------------------ the scorer and its loss */

#include "../train/compute/scorer.h"

TestSuite(link_scorer, .timeout = 60);

/* The backward of both scorers against central differences of the loss, for h and for the
 * mlp's weights; pairs share nodes (and one pairs a node with itself). */
Test(link_scorer, backward_matches_finite_differences)
{
	enum { R = 6, D = 5, P = 7 };
	const int32_t src[P] = {0, 1, 2, 3, 0, 4, 5}, dst[P] = {1, 2, 3, 0, 5, 4, 1};
	const float lab[P] = {1, 1, 1, 0, 0, 0, 1};
	float h[R * D];
	bw_rng r;
	bw_rng_seed(&r, 9);
	for (int i = 0; i < R * D; i++)
		h[i] = (float)(2 * bw_rng_uniform(&r) - 1);
	for (int kind = 0; kind < 2; kind++) {
		bw_scorer *s;
		cr_assert_eq(bw_scorer_open(&s, kind, D, 17, 1), 0);
		for (int64_t i = 0; i < s->num_params; i++) /* biases too, off zero */
			s->params[i] += (float)(0.3 * (2 * bw_rng_uniform(&r) - 1));
		float gh[R * D] = {0}, gp[64];
		double loss, lp, lm;
		cr_assert_eq(bw_scorer_loss(s, h, src, dst, lab, P, &loss, gh), 0);
		memcpy(gp, s->grads, (size_t)s->num_params * sizeof *gp);
		float junk[R * D];
		const double eps = 2e-3;
		for (int i = 0; i < R * D; i++) {
			const float keep = h[i];
			h[i] = keep + (float)eps;
			bw_scorer_loss(s, h, src, dst, lab, P, &lp, junk);
			h[i] = keep - (float)eps;
			bw_scorer_loss(s, h, src, dst, lab, P, &lm, junk);
			h[i] = keep;
			const double fd = (lp - lm) / (2 * eps);
			cr_assert(fabs(fd - gh[i]) <= 2e-3 + 2e-2 * fabs(fd), "kind %d dh[%d]: backward %g, differences %g", kind,
				  i, (double)gh[i], fd);
		}
		for (int64_t i = 0; i < s->num_params; i++) {
			const float keep = s->params[i];
			s->params[i] = keep + (float)eps;
			bw_scorer_loss(s, h, src, dst, lab, P, &lp, junk);
			s->params[i] = keep - (float)eps;
			bw_scorer_loss(s, h, src, dst, lab, P, &lm, junk);
			s->params[i] = keep;
			const double fd = (lp - lm) / (2 * eps);
			cr_assert(fabs(fd - gp[i]) <= 2e-3 + 2e-2 * fabs(fd), "mlp dparam[%lld]: backward %g, differences %g",
				  (long long)i, (double)gp[i], fd);
		}
		/* the loss itself: mean softplus(s) - y s of the scores */
		float sc[P];
		cr_assert_eq(bw_scorer_score(s, h, src, dst, P, sc), 0);
		double ref = 0;
		for (int i = 0; i < P; i++)
			ref += log1p(exp(sc[i])) - lab[i] * sc[i];
		cr_assert_float_eq(loss, ref / P, 1e-6);
		if (kind == 0) {
			double dot = 0;
			for (int j = 0; j < D; j++)
				dot += (double)h[0 * D + j] * h[1 * D + j];
			cr_assert_float_eq(sc[0], dot, 1e-5);
		}
		bw_scorer_close(s);
	}
}

/* ------------------------------------------------------------ the link trainer */

TU_SCRATCH_SUITE(link_train, 300);

/* A link dataset over a CSBM graph whose edges follow its classes (homophily 0.9) and whose
 * features carry the class: a model that learns scores same-class pairs high. */
static char *planted_link(int64_t nodes, const char *neg, int64_t num_neg, const char *metric)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = nodes;
	g.num_classes = 4;
	g.feat_dim = 16;
	g.signal = 1.5;
	g.homophily = 0.95;
	g.avg_degree = 8;
	char *src = tu_path(tu_dir, "planted-%lld", (long long)nodes), *out = tu_path(tu_dir, "planted-link-%s", neg);
	cr_assert_eq(burrow_gen(&g, src), 0, "%s", burrow_last_error());
	const tu_link_cfg cfg = {.frac = {0.85, 0.05, 0.1}, .seed = 1, .neg = neg, .num_neg = num_neg, .metric = metric};
	tu_link_dataset(src, out, &cfg);
	free(src);
	return out;
}

static void link_opts(burrow_train_opts *o)
{
	burrow_train_defaults(o);
	o->layers = 2;
	o->hidden = 32;
	o->fanout[0] = 10;
	o->fanout[1] = 5;
	o->batch_size = 128;
	o->dropout = 0;
	o->lr = 0.01;
	o->threads = 1;
	o->cache_fraction = 1;
}

/* Three epochs; the losses' bytes into loss[3] and the last evaluation into *ev. */
static void run_link(burrow_dataset *ds, const burrow_train_opts *o, double loss[3], burrow_eval_stats *ev)
{
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	for (int e = 0; e < 3; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		loss[e] = es.loss;
	}
	*ev = (burrow_eval_stats){.size = sizeof *ev};
	cr_assert_eq(burrow_trainer_evaluate(t, ev), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
}

/* Link prediction learns: the test ROC-AUC of a trained SAGE beats a random scorer's 0.5 by
 * a margin, and Hits@50 is far from 0; the loss falls. */
Test(link_train, learns_on_a_planted_graph)
{
	char *dir = planted_link(1200, "pairs", 1, NULL);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	link_opts(&o);
	double loss[3];
	burrow_eval_stats ev;
	run_link(ds, &o, loss, &ev);
	cr_assert_eq(ev.metric, BURROW_METRIC_HITS);
	cr_assert_eq(ev.metric_k, 50);
	cr_assert_lt(loss[2], loss[0] - 0.05, "loss %g -> %g", loss[0], loss[2]);
	fprintf(stderr, "planted: loss %g -> %g, test auc %g hits %g\n", loss[0], loss[2], ev.test_auc, ev.test_acc);
	cr_assert_gt(ev.test_auc, 0.75, "test AUC %g: no better than a random scorer's 0.5 by the margin", ev.test_auc);
	cr_assert_gt(ev.valid_auc, 0.75, "valid AUC %g", ev.valid_auc);
	cr_assert_gt(ev.test_acc, 0.2, "test hits@50 %g", ev.test_acc);
	cr_assert_eq(ev.train_acc, -1);
	burrow_dataset_close(ds);
	free(dir);
}

/* The same bits whatever the pipeline: prefetch 0 and 2, threads 1 and 2; the mlp scorer and
 * per-source negatives (MRR) train too. */
Test(link_train, same_bits_across_prefetch_and_threads)
{
	char *dir = planted_link(600, "per_source", 20, NULL);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	double ref[3], loss[3];
	burrow_eval_stats ev0, ev;
	burrow_train_opts o;
	link_opts(&o);
	o.scorer = BURROW_SCORER_MLP;
	o.neg = 3;
	o.prefetch = 0;
	run_link(ds, &o, ref, &ev0);
	cr_assert_eq(ev0.metric, BURROW_METRIC_MRR);
	cr_assert(ev0.test_acc > 0 && ev0.test_acc <= 1);
	cr_assert_lt(ref[2], ref[0], "mlp loss %g -> %g", ref[0], ref[2]);
	o.prefetch = 2;
	run_link(ds, &o, loss, &ev);
	cr_assert_eq(memcmp(ref, loss, sizeof ref), 0, "prefetch 0 and 2 differ: %.17g %.17g", ref[2], loss[2]);
	cr_assert_eq(ev.test_acc, ev0.test_acc);
	o.threads = 2;
	run_link(ds, &o, loss, &ev);
	cr_assert_eq(memcmp(ref, loss, sizeof ref), 0, "threads 1 and 2 differ: %.17g %.17g", ref[2], loss[2]);
	burrow_dataset_close(ds);
	free(dir);
}

/* --neg-mode reaches the trainer's sampler: both endpoints uniform trains other batches (other
 * losses) than the destination corrupted, and learns too. */
Test(link_train, neg_mode_both_trains)
{
	char *dir = planted_link(600, "pairs", 1, "auc");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	double dst[3], both[3];
	burrow_eval_stats ev;
	burrow_train_opts o;
	link_opts(&o);
	run_link(ds, &o, dst, &ev);
	o.neg_mode = BURROW_NEG_BOTH;
	run_link(ds, &o, both, &ev);
	cr_assert_neq(memcmp(dst, both, sizeof dst), 0, "--neg-mode both trained the same batches as dst");
	cr_assert_gt(ev.test_auc, 0.75, "test AUC %g", ev.test_auc);
	o.neg_mode = 5;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	burrow_dataset_close(ds);
	free(dir);
}

/* The task: auto picks link on a dataset with edge splits and no labels; link on a node
 * dataset and node on a link dataset are refused in one line. A checkpoint carries the task
 * and the scorer's weights: reloaded, the same evaluation; a node checkpoint is refused by a
 * link trainer (and a link one with another scorer). */
Test(link_train, task_and_checkpoints)
{
	char *dir = planted_link(400, "pairs", 1, "auc"), *node = tu_path(tu_dir, "planted-400");
	burrow_dataset *ds, *nds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_open(&nds, node), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	link_opts(&o);
	burrow_trainer *t, *u;
	o.task = BURROW_TASK_NODE;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "no labels"), "%s", burrow_last_error());
	o.task = BURROW_TASK_LINK;
	cr_assert_eq(burrow_trainer_open(&t, nds, &o), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "needs edge splits"), "%s", burrow_last_error());
	o.task = BURROW_TASK_AUTO;
	o.scorer = BURROW_SCORER_MLP;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_epoch_stats es = {.size = sizeof es};
	burrow_eval_stats ev = {.size = sizeof ev}, ev2 = {.size = sizeof ev2};
	cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0);
	cr_assert_eq(ev.metric, BURROW_METRIC_AUC);
	cr_assert_eq(ev.test_acc, ev.test_auc);
	char *ck = tu_path(tu_dir, "link.ckpt"), *nck = tu_path(tu_dir, "node.ckpt");
	cr_assert_eq(burrow_trainer_save(t, ck), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_open(&u, ds, &o), 0);
	cr_assert_eq(burrow_trainer_load(u, ck), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_evaluate(u, &ev2), 0);
	cr_assert_eq(ev2.test_auc, ev.test_auc, "reloaded: %g, saved: %g", ev2.test_auc, ev.test_auc);
	cr_assert_eq(ev2.valid_acc, ev.valid_acc);
	burrow_train_opts ro;
	burrow_train_defaults(&ro);
	cr_assert_eq(burrow_checkpoint_read_opts(ck, &ro), 0);
	cr_assert_eq(ro.task, BURROW_TASK_LINK);
	cr_assert_eq(ro.scorer, BURROW_SCORER_MLP);
	burrow_trainer_close(u);
	/* a node classifier's checkpoint of the same shape */
	burrow_train_opts no;
	link_opts(&no);
	no.hidden = 32;
	burrow_trainer *n;
	cr_assert_eq(burrow_trainer_open(&n, nds, &no), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_save(n, nck), 0);
	cr_assert_eq(burrow_trainer_load(t, nck), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "checkpoint holds a node-classification model; this trainer does link "
					      "prediction with the scorer mlp"),
		  "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_load(n, ck), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "link-prediction model with the scorer mlp; this trainer does node"),
		  "%s", burrow_last_error());
	burrow_trainer_close(n);
	o.scorer = BURROW_SCORER_DOT;
	cr_assert_eq(burrow_trainer_open(&u, ds, &o), 0);
	cr_assert_eq(burrow_trainer_load(u, ck), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "with the scorer dot"), "%s", burrow_last_error());
	burrow_trainer_close(u);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	burrow_dataset_close(nds);
	free(ck);
	free(nck);
	free(node);
	free(dir);
}
