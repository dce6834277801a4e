/* test_embed.c: learned input embeddings of homogeneous datasets without features
 * (train/driver/embed.c): they learn (link and node tasks), same bits across threads and
 * prefetch, resume equals an uninterrupted run, refusals. The input gradient they train on is
 * checked against finite differences in test_train.c (train_grad). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../train/driver/driver.h"
#include "util.h"
#include "link_util.h"
#include "train_util.h"

#include <math.h>

TU_SCRATCH_SUITE(embed, 300);

/* Replace the first "feat_dim" of dir's meta.json by 0 and drop features.npy: the dataset
 * without features. */
static void strip_features(const char *dir)
{
	char *meta = tu_path(dir, "meta.json"), *feat = tu_path(dir, "features.npy");
	FILE *f = fopen(meta, "r");
	cr_assert(f);
	char buf[8192];
	const size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strstr(buf, "\"feat_dim\"");
	cr_assert(p);
	char *q = strchr(p, ',');
	cr_assert(q);
	f = fopen(meta, "w");
	fprintf(f, "%.*s\"feat_dim\": 0%s", (int)(p - buf), buf, q);
	fclose(f);
	unlink(feat);
	free(meta);
	free(feat);
}

/* A featureless link dataset over a CSBM graph whose edges follow 4 hidden classes (homophily
 * 0.95): only the structure says which pairs link. */
static char *featureless_link(int64_t nodes)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_CSBM);
	g.num_nodes = nodes;
	g.num_classes = 4;
	g.feat_dim = 4;
	g.homophily = 0.95;
	g.avg_degree = 10;
	char *src = tu_path(tu_dir, "csbm-%lld", (long long)nodes), *out = tu_path(tu_dir, "nofeat-link-%lld", (long long)nodes);
	cr_assert_eq(burrow_gen(&g, src), 0, "%s", burrow_last_error());
	const tu_link_cfg cfg = {.frac = {0.85, 0.05, 0.1}, .seed = 1, .neg = "pairs", .num_neg = 1, .metric = NULL};
	tu_link_dataset(src, out, &cfg);
	strip_features(out);
	free(src);
	return out;
}

static void emb_opts(burrow_train_opts *o)
{
	burrow_train_defaults(o);
	o->task = BURROW_TASK_LINK;
	o->layers = 2;
	o->hidden = 32;
	o->fanout[0] = 10;
	o->fanout[1] = 5;
	o->batch_size = 256;
	o->dropout = 0;
	o->lr = 0.01;
	o->threads = 1;
}

/* The table's bytes' FNV-1a hash (its checkpoint array 0). */
static uint64_t table_hash(burrow_trainer *t)
{
	bw_ck_array a[3];
	cr_assert(t->emb);
	cr_assert_eq(bw_emb_ck_arrays(t->emb, a), 3);
	const unsigned char *p = (const unsigned char *)*a[0].data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < (size_t)a[0].n * sizeof(float); i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* E epochs from t's state: the losses' bytes into loss[], the evaluation into *ev. */
static void epochs(burrow_trainer *t, int e, double *loss, burrow_eval_stats *ev)
{
	for (int i = 0; i < e; i++) {
		burrow_epoch_stats es = {.size = sizeof es};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		loss[i] = es.loss;
	}
	*ev = (burrow_eval_stats){.size = sizeof *ev};
	cr_assert_eq(burrow_trainer_evaluate(t, ev), 0, "%s", burrow_last_error());
}

/* A link model on a graph without features learns through its embeddings: test AUC well above
 * a random scorer's 0.5. Narrow embeddings (8), so that message passing over fixed random
 * ones cannot do it alone (frozen embeddings, the planted bug: about 0.61). */
Test(embed, link_learns_without_features)
{
	char *dir = featureless_link(1000);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_get_info(ds)->feat_dim, 0);
	burrow_train_opts o;
	emb_opts(&o);
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_emb_dim(t->emb), 32, "the width defaults to --hidden");
	burrow_trainer_close(t);
	o.embed_dim = 8;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	double loss[12];
	burrow_eval_stats ev;
	epochs(t, 12, loss, &ev);
	fprintf(stderr, "featureless link: loss %g -> %g, test auc %g hits@50 %g\n", loss[0], loss[11], ev.test_auc,
		ev.test_acc);
	cr_assert_lt(loss[11], loss[0] - 0.1, "loss %g -> %g", loss[0], loss[11]);
	cr_assert_gt(ev.test_auc, 0.75, "test AUC %g", ev.test_auc);
	cr_assert_gt(ev.valid_auc, 0.75, "valid AUC %g", ev.valid_auc);
	/* embed: the encoder over the learned table, [N, hidden] */
	char *npy = tu_path(tu_dir, "emb.npy");
	cr_assert_eq(burrow_trainer_embed(t, npy), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	free(npy);
	burrow_dataset_close(ds);
	free(dir);
}

/* Node classification without features: the classes follow the graph (homophily 0.9), the
 * embeddings learn them, accuracy well above chance (0.25; frozen embeddings, the planted
 * bug, about 0.42). */
Test(embed, node_learns_without_features)
{
	char *dir = tu_weak_csbm(tu_dir, 1000, 4);
	strip_features(dir);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	emb_opts(&o);
	o.task = BURROW_TASK_NODE;
	o.embed_dim = 16;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_emb_dim(t->emb), 16);
	double loss[12];
	burrow_eval_stats ev;
	epochs(t, 12, loss, &ev);
	fprintf(stderr, "featureless node: loss %g -> %g, valid %g test %g\n", loss[0], loss[11], ev.valid_acc, ev.test_acc);
	cr_assert_gt(ev.test_acc, 0.8, "test accuracy %g", ev.test_acc);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(dir);
}

/* Same bits whatever the pipeline (prefetch 0 and 2, threads 1 and 2): losses, evaluation,
 * the table. */
Test(embed, same_bits_across_threads_and_prefetch)
{
	char *dir = featureless_link(500);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	emb_opts(&o);
	o.batch_size = 64;
	o.prefetch = 0;
	double ref[3], loss[3];
	burrow_eval_stats ev0, ev;
	uint64_t h0 = 0;
	for (int run = 0; run < 3; run++) {
		o.prefetch = run == 0 ? 0 : 2;
		o.threads = run == 2 ? 2 : 1;
		burrow_trainer *t;
		cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
		epochs(t, 3, run ? loss : ref, run ? &ev : &ev0);
		const uint64_t h = table_hash(t);
		burrow_trainer_close(t);
		if (!run) {
			h0 = h;
			continue;
		}
		cr_assert_eq(memcmp(ref, loss, sizeof ref), 0, "run %d: loss %.17g vs %.17g", run, loss[2], ref[2]);
		cr_assert_eq(ev.test_auc, ev0.test_auc, "run %d", run);
		cr_assert_eq(h, h0, "run %d: the tables differ", run);
	}
	burrow_dataset_close(ds);
	free(dir);
}

/* 2 epochs, a checkpoint, a new trainer loads it and trains 2 more: the same losses, table and
 * evaluation as 4 uninterrupted epochs; read_opts brings the width back. */
Test(embed, resume_equals_uninterrupted)
{
	char *dir = featureless_link(500), *ck = tu_path(tu_dir, "emb.ckpt");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	emb_opts(&o);
	o.batch_size = 64;
	o.embed_dim = 12;
	burrow_trainer *t;
	double ref[4], loss[4];
	burrow_eval_stats ev0, ev;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	epochs(t, 4, ref, &ev0);
	const uint64_t h0 = table_hash(t);
	burrow_trainer_close(t);
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	epochs(t, 2, loss, &ev);
	cr_assert_eq(burrow_trainer_save(t, ck), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	burrow_train_opts ro;
	burrow_train_defaults(&ro);
	cr_assert_eq(burrow_checkpoint_read_opts(ck, &ro), 0, "%s", burrow_last_error());
	cr_assert_eq(ro.embed_dim, 12);
	o.seed = 99; /* the checkpoint brings its own */
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_load(t, ck), 0, "%s", burrow_last_error());
	epochs(t, 2, loss + 2, &ev);
	cr_assert_eq(memcmp(ref, loss, sizeof ref), 0, "loss %.17g %.17g vs %.17g %.17g", loss[2], loss[3], ref[2], ref[3]);
	cr_assert_eq(table_hash(t), h0, "the resumed table differs");
	cr_assert_eq(ev.test_auc, ev0.test_auc);
	burrow_trainer_close(t);
	/* another width is refused in one line */
	o.embed_dim = 8;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_load(t, ck), BURROW_E_INVAL);
	cr_assert(!strchr(burrow_last_error(), '\n'), "%s", burrow_last_error());
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(ck);
	free(dir);
}

/* Refused in one line: a table (and its moments) beyond --mem; --full-graph. */
Test(embed, refusals)
{
	char *dir = featureless_link(500);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_train_opts o;
	emb_opts(&o);
	o.embed_dim = 64; /* 500 x 64 x 4 B x 3 = 375 KiB */
	o.mem_bytes = 300 << 10;
	burrow_trainer *t;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), BURROW_E_NOMEM);
	cr_assert(strstr(burrow_last_error(), "--mem"), "%s", burrow_last_error());
	cr_assert(!strchr(burrow_last_error(), '\n'), "%s", burrow_last_error());
	o.mem_bytes = 400 << 10;
	cr_assert_eq(burrow_trainer_open(&t, ds, &o), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(dir);
}
