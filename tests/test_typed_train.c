/* test_typed_train.c: training on typed datasets through burrow_trainer_*: relational models
 * against an MLP on the target's own features (hsbm, whose classes the relations carry), the
 * same bits whatever the prefetch, cache and read engine, learned embeddings (Adam's first
 * step on exactly the rows a batch read), and the refusals. */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/driver/driver.h"
#include "../sampler/sampler_internal.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(typed_train, 300);

/* hsbm at `dir` (n papers, as many authors). */
static void gen_hsbm(const char *dir, int64_t n, uint64_t seed)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_HSBM);
	g.num_nodes = n;
	g.seed = seed;
	cr_assert_eq(burrow_gen(&g, dir), 0, "%s", burrow_last_error());
}

static burrow_train_opts small_opts(int model, uint64_t seed)
{
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.model = model;
	o.layers = 2;
	o.hidden = 32;
	o.heads = 2;
	o.fanout[0] = 10;
	o.fanout[1] = 10;
	o.batch_size = 256;
	o.lr = 0.01;
	o.seed = seed;
	o.threads = 1;
	return o;
}

/* Train `epochs` epochs; the last evaluation's valid accuracy, and each epoch's loss. */
static double train_valid(burrow_dataset *ds, const burrow_train_opts *o, int epochs, double *loss)
{
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	burrow_eval_stats ev = {.size = sizeof ev};
	for (int e = 0; e < epochs; e++) {
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert(isfinite(es.loss));
		if (loss)
			loss[e] = es.loss;
	}
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	cr_assert(ev.valid_acc >= 0 && ev.valid_acc <= 1 && ev.train_acc >= -1 && ev.train_acc <= 1);
	burrow_trainer_close(t);
	return ev.valid_acc;
}

/* hsbm's papers carry a weak signal of their own (target_signal 0.5) and their authors a
 * strong one: each relational model must beat the MLP on the papers' features by a clear
 * margin (the note has the mean and spread of 3 seeds; this is one). */
Test(typed_train, relational_models_beat_the_mlp_on_hsbm)
{
	char *dir = tu_path(tu_dir, "hs");
	gen_hsbm(dir, 4000, 1);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o = small_opts(BURROW_MODEL_MLP, 0);
	const double mlp = train_valid(ds, &o, 6, NULL);
	const int kinds[3] = {BURROW_MODEL_RGCN, BURROW_MODEL_RSAGE, BURROW_MODEL_RGAT};
	for (int k = 0; k < 3; k++) {
		o = small_opts(kinds[k], 0);
		const double acc = train_valid(ds, &o, 6, NULL);
		cr_expect(acc > mlp + 0.15, "%s: valid %.4f, mlp %.4f", burrow_model_name(kinds[k]), acc, mlp);
	}
	burrow_dataset_close(ds);
	free(dir);
}

/* Batches depend on the seed alone: the loader's depth, the feature cache and the read
 * engine change timings, never a loss bit (R-GAT: attention dropout on, keyed). */
Test(typed_train, same_bits_whatever_prefetch_cache_and_engine)
{
	char *dir = tu_path(tu_dir, "hs");
	gen_hsbm(dir, 1500, 2);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	double ref[2], got[2];
	burrow_train_opts o = small_opts(BURROW_MODEL_RGAT, 3);
	o.attn_dropout = 0.2;
	o.prefetch = 0;
	const double a0 = train_valid(ds, &o, 2, ref);
	for (int v = 0; v < 3; v++) {
		o.prefetch = 1 + 2 * v;
		o.cache_bytes = v == 0 ? 0 : BURROW_CACHE_AUTO;
		o.store_engine = v == 2 ? BURROW_STORE_PREAD : BURROW_STORE_URING;
		const double a = train_valid(ds, &o, 2, got);
		cr_expect(!memcmp(ref, got, sizeof ref) && a == a0, "variant %d: losses %.17g %.17g vs %.17g %.17g", v,
			  got[0], got[1], ref[0], ref[1]);
	}
	o.seed = 4; /* and the seed does change them */
	train_valid(ds, &o, 2, got);
	cr_expect(memcmp(ref, got, sizeof ref));
	burrow_dataset_close(ds);
	free(dir);
}

/* Same bits at any thread count (issue 35 item 7) in typed mini-batch training: R-SAGE and
 * R-GAT on hsbm, two epochs of a few batches at 1 and 2 threads (OMP_DYNAMIC=false: the count
 * asked), every epoch's loss bytes and the valid accuracy alike. */
Test(typed_train, same_bits_at_1_and_2_threads)
{
	char *dir = tu_path(tu_dir, "hs");
	gen_hsbm(dir, 1500, 2);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	setenv("OMP_DYNAMIC", "false", 1);
	const int kinds[2] = {BURROW_MODEL_RSAGE, BURROW_MODEL_RGAT};
	for (int k = 0; k < 2; k++) {
		double ref[2], got[2];
		burrow_train_opts o = small_opts(kinds[k], 3);
		o.attn_dropout = 0.2;
		const double a1 = train_valid(ds, &o, 2, ref);
		o.threads = 2;
		const double a2 = train_valid(ds, &o, 2, got);
		cr_expect(!memcmp(ref, got, sizeof ref) && a1 == a2,
			  "%s, 2 threads: losses %.17g %.17g valid %.17g, 1 thread %.17g %.17g valid %.17g",
			  burrow_model_name(kinds[k]), got[0], got[1], a2, ref[0], ref[1], a1);
	}
	unsetenv("OMP_DYNAMIC");
	burrow_dataset_close(ds);
	free(dir);
}

/* A 4,000-node hsbm of average degree 20 (rows longer than the fanouts: where LABOR and
 * fanout per node differ from neighbor sampling per relation), opened; *dir its path. */
static burrow_dataset *long_rows_hsbm(char **dir)
{
	*dir = tu_path(tu_dir, "hs");
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_HSBM);
	g.num_nodes = 4000;
	g.avg_degree = 20;
	g.seed = 1;
	cr_assert_eq(burrow_gen(&g, *dir), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, *dir), 0, "%s", burrow_last_error());
	return ds;
}

/* LABOR on a typed dataset (--sampler labor): the same bits twice, fewer rows read than
 * neighbor sampling's for the same seeds and fanouts (no cache: every input row is read; an
 * SBM has no hubs, so rows share neighbors only where a batch covers much of the graph: 0.72x
 * here), and R-SAGE's accuracy within 5 points of neighbor sampling's (one seed each). */
Test(typed_train, labor_reads_fewer_rows_and_trains_as_well)
{
	char *dir;
	burrow_dataset *ds = long_rows_hsbm(&dir);
	double acc[2], rows[2];
	for (int labor = 0; labor < 2; labor++) {
		burrow_train_opts o = small_opts(BURROW_MODEL_RSAGE, 0);
		o.sampler = labor ? BURROW_SAMPLER_LABOR : BURROW_SAMPLER_NEIGHBOR;
		o.cache_bytes = 0;
		o.batch_size = 1024; /* a batch that covers much of the graph: rows share neighbors */
		o.fanout[0] = o.fanout[1] = 3;
		double loss[2][6];
		for (int run = 0; run < 2; run++) {
			burrow_trainer *t;
			cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
			rows[labor] = 0;
			for (int e = 0; e < 6; e++) {
				burrow_epoch_stats es = {.size = sizeof es};
				cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
				loss[run][e] = es.loss;
				rows[labor] += (double)es.rows_read;
			}
			burrow_eval_stats ev = {.size = sizeof ev};
			cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
			acc[labor] = ev.valid_acc;
			burrow_trainer_close(t);
		}
		cr_expect(!memcmp(loss[0], loss[1], sizeof loss[0]), "sampler %d: two runs, different losses", labor);
	}
	cr_expect_lt(rows[1], 0.85 * rows[0], "LABOR read %.0f rows, neighbor sampling %.0f", rows[1], rows[0]);
	cr_log_info("LABOR read %.0f rows, neighbor sampling %.0f; valid %.4f and %.4f", rows[1], rows[0], acc[1], acc[0]);
	cr_expect_gt(acc[1], acc[0] - 0.05, "valid: LABOR %.4f, neighbor sampling %.4f", acc[1], acc[0]);
	burrow_dataset_close(ds);
	free(dir);
}

/* LABOR-* on a typed dataset (--sampler labor-star: per relation, the relation means of R-SAGE
 * and R-GCN weighing the picks): the loss falls, the same bits twice, valid accuracy within 5
 * points of neighbor sampling's (one seed each; rows longer than the fanouts, where LABOR-*
 * samples). R-GAT and the MLP train on the picks unweighted (the loss falls; only R-SAGE's batches
 * carry weights to the model); fanout per node is refused in one line. */
Test(typed_train, labor_star_trains_rsage_and_rgcn_the_same_bits_twice)
{
	char *dir;
	burrow_dataset *ds = long_rows_hsbm(&dir);
	static const int models[2] = {BURROW_MODEL_RSAGE, BURROW_MODEL_RGCN};
	for (int m = 0; m < 2; m++) {
		const char *name = burrow_model_name(models[m]);
		double acc[3], loss[2][6], rows[2] = {0, 0};
		for (int star = 0; star < 2; star++) {
			burrow_train_opts o = small_opts(models[m], 0);
			o.sampler = star ? BURROW_SAMPLER_LABOR_STAR : BURROW_SAMPLER_NEIGHBOR;
			o.cache_bytes = 0;
			o.batch_size = 1024;
			o.fanout[0] = o.fanout[1] = 5; /* at 3, 3 LABOR-* trails by 4 to 6 points, as on a homogeneous csbm */
			for (int run = 0; run < 1 + star; run++) {
				burrow_trainer *t;
				cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
				for (int e = 0; e < 6; e++) {
					burrow_epoch_stats es = {.size = sizeof es};
					cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
					loss[run][e] = es.loss;
					rows[star] += run ? 0 : (double)es.rows_read;
				}
				burrow_eval_stats ev = {.size = sizeof ev};
				cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
				acc[star + run] = ev.valid_acc;
				burrow_trainer_close(t);
			}
		}
		cr_log_info("%s labor-star: losses %.4f .. %.4f, valid %.4f (neighbor sampling %.4f); rows read %.0f (%.0f)",
			    name, loss[0][0], loss[0][5], acc[1], acc[0], rows[1], rows[0]);
		cr_expect(!memcmp(loss[0], loss[1], sizeof loss[0]) && acc[1] == acc[2], "%s labor-star: two runs, "
			  "different losses", name);
		cr_expect_lt(loss[0][5], 0.8 * loss[0][0], "%s labor-star: the loss went from %.4f to %.4f", name,
			     loss[0][0], loss[0][5]);
		cr_expect_gt(acc[1], acc[0] - 0.05, "%s valid: labor-star %.4f, neighbor sampling %.4f", name, acc[1],
			     acc[0]);
	}
	/* Models that cannot weigh the picks take them unweighted, as on homogeneous datasets. */
	const int kinds[3] = {BURROW_MODEL_RGAT, BURROW_MODEL_MLP, BURROW_MODEL_RSAGE};
	for (int k = 0; k < 3; k++) {
		burrow_train_opts o = small_opts(kinds[k], 0);
		o.sampler = BURROW_SAMPLER_LABOR_STAR;
		burrow_trainer *t = NULL;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		cr_expect_eq(t->typed->star_weights, kinds[k] == BURROW_MODEL_RSAGE, "%s", burrow_model_name(kinds[k]));
		double l[2];
		for (int e = 0; e < 2; e++) {
			burrow_epoch_stats es = {.size = sizeof es};
			cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
			l[e] = es.loss;
		}
		cr_expect(isfinite(l[1]) && l[1] < l[0], "%s labor-star: losses %g, %g", burrow_model_name(kinds[k]), l[0],
			  l[1]);
		burrow_trainer_close(t);
	}
	burrow_train_opts o = small_opts(BURROW_MODEL_RSAGE, 0);
	o.sampler = BURROW_SAMPLER_LABOR_STAR;
	o.typed_fanout = BURROW_TYPED_FANOUT_NODE;
	burrow_trainer *t = NULL;
	cr_expect_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_UNSUPPORTED);
	cr_expect(strstr(burrow_last_error(), "per node"), "%s", burrow_last_error());
	cr_expect_null(t);
	burrow_dataset_close(ds);
	free(dir);
}

/* Fanout per node (--typed-fanout node) on a typed dataset: the same bits twice, fewer rows
 * read than per relation at the same fanouts (each destination draws its fanout once over
 * its relations, not once per relation), R-SAGE's accuracy within 5 points of per relation's
 * (one seed each). */
Test(typed_train, node_fanout_reads_fewer_rows_and_trains_as_well)
{
	char *dir;
	burrow_dataset *ds = long_rows_hsbm(&dir);
	double acc[2], rows[2];
	for (int node = 0; node < 2; node++) {
		burrow_train_opts o = small_opts(BURROW_MODEL_RSAGE, 0);
		o.typed_fanout = node ? BURROW_TYPED_FANOUT_NODE : BURROW_TYPED_FANOUT_RELATION;
		o.cache_bytes = 0;
		o.fanout[0] = o.fanout[1] = 5;
		double loss[2][4];
		for (int run = 0; run < 2; run++) {
			burrow_trainer *t;
			cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
			cr_assert_eq(t->typed->so.fanout_mode, o.typed_fanout);
			rows[node] = 0;
			for (int e = 0; e < 4; e++) {
				burrow_epoch_stats es = {.size = sizeof es};
				cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
				loss[run][e] = es.loss;
				rows[node] += (double)es.rows_read;
			}
			burrow_eval_stats ev = {.size = sizeof ev};
			cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
			acc[node] = ev.valid_acc;
			burrow_trainer_close(t);
		}
		cr_expect(!memcmp(loss[0], loss[1], sizeof loss[0]), "typed fanout %d: two runs, different losses", node);
	}
	cr_expect_lt(rows[1], 0.85 * rows[0], "per node read %.0f rows, per relation %.0f", rows[1], rows[0]);
	cr_log_info("per node read %.0f rows, per relation %.0f; valid %.4f and %.4f", rows[1], rows[0], acc[1], acc[0]);
	cr_expect_gt(acc[1], acc[0] - 0.05, "valid: per node %.4f, per relation %.4f", acc[1], acc[0]);
	burrow_train_opts o = small_opts(BURROW_MODEL_RSAGE, 0);
	o.typed_fanout = BURROW_TYPED_FANOUT_NODE;
	o.rel_fanout = "cites=3,3";
	burrow_trainer *t = NULL;
	cr_expect_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_expect(strstr(burrow_last_error(), "--typed-fanout"), "%s", burrow_last_error());
	burrow_dataset_close(ds);
	free(dir);
}

/* Open a trainer under o, train one epoch, its loss into *loss; the loader's depth. */
static int depth_and_loss(burrow_dataset *ds, const burrow_train_opts *o, double *slot, double *act, double *loss)
{
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	const int d = burrow_trainer_prefetch(t, slot);
	cr_assert_eq(d, t->typed->depth);
	*act = t->typed->act_bytes + (double)t->typed->cache_budget; /* --mem holds the feature cache too */
	burrow_epoch_stats es = {.size = sizeof es};
	cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	*loss = es.loss;
	burrow_trainer_close(t);
	return d;
}

/* A typed batch sized before it is built: under --mem (less the feature cache) the loader
 * keeps prefetch + 1 slots when they and a step's activations fit, else as many as fit, else
 * the trainer refuses at open in one line naming what to lower; the depth changes no loss
 * bit. The slot's estimate covers the batch's input rows (float32). */
Test(typed_train, a_typed_batch_is_sized_to_the_memory_before_it_is_built)
{
	char *dir = tu_path(tu_dir, "hs");
	gen_hsbm(dir, 3000, 4);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o = small_opts(BURROW_MODEL_RSAGE, 0);
	o.prefetch = 2;
	o.mem_bytes = (int64_t)1 << 34;
	double slot, act, loss2, loss, s2, a2;
	cr_assert_eq(depth_and_loss(ds, &o, &slot, &act, &loss2), 2);
	cr_assert_gt(slot, 0);
	cr_assert_gt(act, 0);
	burrow_typed_sampler_opts so;
	burrow_typed_sampler_defaults(&so);
	so.fanouts[0] = so.fanouts[1] = 10;
	so.batch_size = 256;
	int64_t n;
	const int64_t *train = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &n);
	burrow_typed_sampler *s;
	cr_assert_eq(burrow_typed_sampler_open(&s, burrow_dataset_hetero(ds), train, n, &so), 0, "%s", burrow_last_error());
	burrow_typed_batch *tb;
	cr_assert_eq(burrow_typed_sampler_batch(s, 0, 0, &tb), 0, "%s", burrow_last_error());
	double in = 0;
	for (int t = 0; t < tb->num_types; t++) {
		burrow_type_info ti;
		cr_assert_eq(burrow_dataset_type_info(ds, t, &ti), 0);
		in += (double)tb->num_nodes[0][t] * (double)ti.feat_dim * sizeof(float);
	}
	burrow_typed_sampler_release(s, tb);
	burrow_typed_sampler_close(s);
	cr_assert(slot >= in && slot < 3 * in, "a slot of %.0f bytes for %.0f bytes of input rows", slot, in);
	for (int want = 1; want >= 0; want--) {
		o.mem_bytes = (int64_t)((want + 1) * slot + act) + 1;
		cr_assert_eq(depth_and_loss(ds, &o, &s2, &a2, &loss), want, "--mem %lld", (long long)o.mem_bytes);
		cr_assert(s2 == slot && a2 == act);
		cr_expect(loss == loss2, "depth %d: loss %.17g, depth 2: %.17g", want, loss, loss2);
	}
	o.mem_bytes = (int64_t)(slot + act) - 1;
	burrow_trainer *t = NULL;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_NOMEM);
	cr_assert_null(t);
	cr_assert(strstr(burrow_last_error(), "does not fit") && strstr(burrow_last_error(), "--typed-fanout node") &&
			  strstr(burrow_last_error(), "--mem"),
		  "%s", burrow_last_error());
	burrow_dataset_close(ds);
	free(dir);
}

/* A typed loader slot's estimate (what --mem and the prefetch depth are sized by) is what the
 * batch it was taken from holds once sampled and prepared for a step, within 1%: its input
 * rows (float32), the sampler's batch at its arrays' capacities, the loader's transposed
 * blocks, and with LABOR-* each relation block's weights and their transposed copy. Held =
 * the allocator's live bytes around batch 0 drawn while batch 1 is held (a fresh batch
 * record; the sampler's scratch already grown by an earlier draw of batch 0), its blocks
 * prepared as the loader prepares them. Fanouts 3, 3: most edges are weighted. */
Test(typed_train, a_typed_slot_covers_a_batch_with_labor_stars_weights)
{
	char *dir = tu_path(tu_dir, "hs");
	gen_hsbm(dir, 3000, 4);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	for (int star = 0; star < 2; star++) {
		burrow_train_opts o = small_opts(BURROW_MODEL_RSAGE, 0);
		o.fanout[0] = o.fanout[1] = 3;
		o.mem_bytes = (int64_t)1 << 34;
		o.sampler = star ? BURROW_SAMPLER_LABOR_STAR : BURROW_SAMPLER_NEIGHBOR;
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		double slot;
		burrow_trainer_prefetch(t, &slot);
		const bw_htrain *ht = t->typed;
		int64_t n;
		const int64_t *train = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &n);
		burrow_typed_sampler *s;
		cr_assert_eq(burrow_typed_sampler_open(&s, burrow_dataset_hetero(ds), train, n, &ht->so), 0, "%s",
			     burrow_last_error());
		burrow_typed_batch *tb, *first;
		cr_assert_eq(burrow_typed_sampler_batch(s, 0, 0, &first), 0, "%s", burrow_last_error());
		burrow_typed_sampler_release(s, first);
		cr_assert_eq(burrow_typed_sampler_batch(s, 0, 1, &first), 0, "%s", burrow_last_error());
		size_t before, after;
		burrow_mem_stats(&before, NULL);
		cr_assert_eq(burrow_typed_sampler_batch(s, 0, 0, &tb), 0, "%s", burrow_last_error());
		static bw_block blk[BURROW_MAX_LAYERS][BURROW_MAX_RELATIONS];
		int64_t weighted = 0, edges = 0;
		for (int l = 0; l < tb->num_layers; l++)
			for (int r = 0; r < tb->num_relations; r++) {
				const burrow_block *k = &tb->blocks[l][r];
				bw_block *b = &blk[l][r];
				*b = (bw_block){0};
				bw_block_reuse(b, k->num_dst, k->num_src, k->indptr, k->indices);
				b->edge_weight = k->edge_weight;
				weighted += k->edge_weight ? k->num_edges : 0;
				edges += k->num_edges;
				cr_assert_eq(bw_block_prepare(b, true, false), 0, "%s", burrow_last_error());
			}
		burrow_mem_stats(&after, NULL);
		double held = (double)after - (double)before, rows = 0;
		for (int ty = 0; ty < tb->num_types; ty++)
			rows += ht->rows_of[ty] ? (double)tb->num_nodes[0][ty] * (double)ht->in_dim[ty] * sizeof(float) : 0;
		held += rows;
		cr_assert_eq(weighted > edges / 2, star, "%lld of %lld edges weighted", (long long)weighted,
			     (long long)edges);
		cr_expect(held <= slot && slot <= 1.01 * held,
			  "labor-star %d: a batch holds %.0f bytes (%lld of %lld edges weighted), its slot is estimated at %.0f",
			  star, held, (long long)weighted, (long long)edges, slot);
		for (int l = 0; l < tb->num_layers; l++)
			for (int r = 0; r < tb->num_relations; r++)
				bw_block_release(&blk[l][r]);
		burrow_typed_sampler_release(s, tb);
		burrow_typed_sampler_release(s, first);
		burrow_typed_sampler_close(s);
		burrow_trainer_close(t);
	}
	burrow_dataset_close(ds);
	free(dir);
}

/* A typed dataset whose target (paper, features) reads a featureless type (topic) through
 * relation topic -> paper. */
static void write_with_topics(const char *dir)
{
	enum { NP = 300, NT = 40, D = 8 };
	burrow_writer *w;
	int paper, topic;
	cr_assert_eq(burrow_writer_open(&w, dir, "topics", NULL), 0);
	cr_assert_eq(burrow_writer_add_type(w, "paper", NP, &paper), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_add_type(w, "topic", NT, &topic), 0);
	cr_assert_eq(burrow_writer_set_target(w, paper), 0);
	int64_t s[NP * 2], d[NP * 2];
	int32_t y[NP];
	for (int64_t v = 0; v < NP; v++) {
		y[v] = (int32_t)(v % 4);
		for (int k = 0; k < 2; k++) {
			s[2 * v + k] = (y[v] * 10 + (v * 7 + k * 3) % 10) % NT;
			d[2 * v + k] = v;
		}
	}
	cr_assert_eq(burrow_writer_relation_begin(w, topic, "about", paper, NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_relation_add(w, s, d, NP * 2), 0);
	cr_assert_eq(burrow_writer_relation_end(w), 0, "%s", burrow_last_error());
	float x[NP * D];
	for (int i = 0; i < NP * D; i++)
		x[i] = (float)((i * 37) % 11) / 11.0f;
	cr_assert_eq(burrow_writer_type_features_begin(w, paper, D, BURROW_DTYPE_F32), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_features_append(w, x, NP), 0);
	cr_assert_eq(burrow_writer_features_end(w), 0);
	cr_assert_eq(burrow_writer_put_labels(w, y, NP, 4), 0, "%s", burrow_last_error());
	int64_t tr[200], va[100];
	for (int i = 0; i < 200; i++)
		tr[i] = i;
	for (int i = 0; i < 100; i++)
		va[i] = 200 + i;
	cr_assert_eq(burrow_writer_put_split(w, BURROW_SPLIT_TRAIN, tr, 200), 0);
	cr_assert_eq(burrow_writer_put_split(w, BURROW_SPLIT_VALID, va, 100), 0);
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
}

/* --embed-types: one step changes exactly the rows of topic its batch read, each element by
 * Adam's first step, lr * m / (sqrt(v) + eps) with bias correction = lr * sign(g) for
 * |g| >> eps; every other row keeps its bits. */
Test(typed_train, embeddings_take_adam_steps_on_the_rows_a_batch_read)
{
	char *dir = tu_path(tu_dir, "topics");
	write_with_topics(dir);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o = small_opts(BURROW_MODEL_RGCN, 5);
	o.layers = 1; /* topics reach papers over one layer (nothing reaches topics) */
	o.batch_size = 64;
	o.max_batches = 1;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL); /* a featureless type read, no embeddings */
	cr_expect(strstr(burrow_last_error(), "topic") && strstr(burrow_last_error(), "--embed-types"), "%s",
		  burrow_last_error());
	o.embed_types = true;
	o.embed_dim = 6;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	const bw_htrain *ht = t->typed;
	const int topic = 1;
	cr_assert(ht && ht->emb[topic] && !ht->emb[0] && ht->in_dim[topic] == 6);
	const int64_t n = ht->ti[topic].num_nodes, d = 6;
	float *before = malloc((size_t)(n * d) * sizeof(float));
	memcpy(before, ht->emb[topic], (size_t)(n * d) * sizeof(float));
	/* the rows batch 0 of epoch 0 reads: the same sampler, its own call */
	burrow_typed_sampler *s;
	int64_t ntr;
	const int64_t *tr = burrow_dataset_split(ds, BURROW_SPLIT_TRAIN, &ntr);
	burrow_typed_sampler_opts so = ht->so;
	so.seed = o.seed;
	cr_assert_eq(burrow_typed_sampler_open(&s, ht->h, tr, ntr, &so), 0);
	burrow_typed_batch *b;
	cr_assert_eq(burrow_typed_sampler_batch(s, 0, 0, &b), 0);
	bool *read = calloc((size_t)n, 1);
	for (int64_t i = 0; i < b->num_nodes[0][topic]; i++)
		read[b->input_ids[topic][i]] = true;
	burrow_epoch_stats es = {.size = sizeof es};
	cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
	cr_assert_eq(es.batches, 1);
	int64_t moved = 0;
	for (int64_t v = 0; v < n; v++)
		for (int64_t j = 0; j < d; j++) {
			const float a = before[v * d + j], c = ht->emb[topic][v * d + j];
			if (!read[v]) {
				cr_assert_eq(memcmp(&a, &c, sizeof a), 0, "row %lld, unread, changed", (long long)v);
				continue;
			}
			const double step = fabs((double)c - a);
			cr_assert(step <= o.lr * (1 + 1e-4) + 1e-6, "row %lld: step %g > lr", (long long)v, step);
			moved += step > 0.9 * o.lr;
		}
	int64_t nread = 0;
	for (int64_t v = 0; v < n; v++)
		nread += read[v];
	cr_assert(nread > 0);
	cr_expect(moved >= nread * d * 9 / 10, "%lld of %lld elements took a full step", (long long)moved,
		  (long long)(nread * d));
	burrow_typed_sampler_release(s, b);
	burrow_typed_sampler_close(s);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(read);
	free(before);
	free(dir);
}

/* What typed training refuses, each in one line: a homogeneous model, options it does not
 * take, a --rel-fanout naming no relation or with the wrong count of fanouts. */
Test(typed_train, refusals)
{
	char *dir = tu_path(tu_dir, "hs");
	gen_hsbm(dir, 500, 3);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_trainer *t = NULL;
	burrow_train_opts o = small_opts(BURROW_MODEL_SAGE, 0);
	cr_expect_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_expect(strstr(burrow_last_error(), "rgcn"), "%s", burrow_last_error());
	o = small_opts(BURROW_MODEL_RGCN, 0);
	o.full_graph = true;
	cr_expect_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_UNSUPPORTED);
	o = small_opts(BURROW_MODEL_RGCN, 0);
	o.rel_fanout = "nosuch=3,3";
	cr_expect_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	cr_expect(strstr(burrow_last_error(), "nosuch"), "%s", burrow_last_error());
	o.rel_fanout = "writes=3";
	cr_expect_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_INVAL);
	o.rel_fanout = "author___writes___paper=3,-1;cites=0,2";
	cr_expect_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	cr_expect_eq(t->typed->so.rel_fanouts[1][1], 2);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(dir);
}
