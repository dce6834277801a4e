/* test_htrain_ckpt.c: checkpoints of typed training (checkpoint.c, htrain.c): resuming equals an
 * uninterrupted run, with and without learned embeddings; refusals of another dataset, model
 * or kind of file, each in one line naming it, leaving the trainer as it was; truncation and
 * corruption; allocation failures on load; burrow eval on a typed dataset. */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>

#include "../train/driver/driver.h"
#include "util.h"
#include "train_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(htrain_ckpt, 240);

enum { PAPERS = 120, AUTHORS = 80, FIELDS = 12, CLASSES = 4, PDIM = 6, ADIM = 4 };

static uint64_t lcg(uint64_t *x)
{
	*x = *x * 6364136223846793005ull + 1442695040888963407ull;
	return *x >> 33;
}

static int32_t label_of(int64_t v) { return (int32_t)((v * 7 + v / 5) % CLASSES); }

/* Relation (src, name, dst) from n pseudo-random edges whose dst is a paper; the src of a
 * paper-typed or field-typed relation follows the paper's class half of the time. */
static void put_relation(burrow_writer *w, int src, const char *name, int dst, int64_t nsrc, int64_t ndst, int n,
			 uint64_t seed)
{
	int64_t *s = malloc((size_t)n * sizeof *s), *d = malloc((size_t)n * sizeof *d);
	uint64_t x = seed;
	for (int i = 0; i < n; i++) {
		d[i] = (int64_t)(lcg(&x) % (uint64_t)ndst);
		s[i] = (int64_t)(lcg(&x) % (uint64_t)nsrc);
		if (i % 2 == 0) /* a source of the destination's class */
			s[i] = (s[i] - s[i] % CLASSES + label_of(d[i])) % nsrc;
	}
	cr_assert_eq(burrow_writer_relation_begin(w, src, name, dst, NULL), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_relation_add(w, s, d, (size_t)n), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_relation_end(w), 0, "%s", burrow_last_error());
	free(s);
	free(d);
}

/* Type t's features: its class's direction plus noise, or noise alone (the papers'). */
static void put_features(burrow_writer *w, int t, int64_t n, int dim, double signal, uint64_t seed)
{
	float *f = malloc((size_t)(n * dim) * sizeof *f);
	uint64_t x = seed;
	for (int64_t v = 0; v < n; v++)
		for (int j = 0; j < dim; j++)
			f[v * dim + j] = (float)((double)(lcg(&x) % 1000) / 1000 - 0.5 + (j == label_of(v) ? signal : 0));
	cr_assert_eq(burrow_writer_type_features_begin(w, t, dim, BURROW_DTYPE_F32), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_features_append(w, f, n), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_features_end(w), 0, "%s", burrow_last_error());
	free(f);
}

/* A typed dataset in tu_dir/<dir>: papers (the target: 6 weak features, 4 classes), authors (4
 * features), fields (none); author writes paper, paper cites paper, field about paper (so a
 * relational model reads the fields: learned embeddings). variant 1: one field more; 2: a
 * relation more (paper has_topic field); 3: named "other"; 4: fewer citations. Caller frees
 * the path. */
static char *typed_dataset(const char *dir, int variant)
{
	char *p = tu_path(tu_dir, "%s", dir);
	burrow_writer *w;
	int paper, author, field;
	cr_assert_eq(burrow_writer_open(&w, p, variant == 3 ? "other" : "typed-toy", NULL), 0, "%s", burrow_last_error());
	const int64_t fields = FIELDS + (variant == 1);
	cr_assert_eq(burrow_writer_add_type(w, "paper", PAPERS, &paper), 0);
	cr_assert_eq(burrow_writer_add_type(w, "author", AUTHORS, &author), 0);
	cr_assert_eq(burrow_writer_add_type(w, "field", fields, &field), 0);
	put_relation(w, author, "writes", paper, AUTHORS, PAPERS, 300, 1);
	put_relation(w, paper, "cites", paper, PAPERS, PAPERS, variant == 4 ? 250 : 300, 2);
	put_relation(w, field, "about", paper, fields, PAPERS, 200, 3);
	if (variant == 2)
		put_relation(w, paper, "has_topic", field, PAPERS, fields, 100, 4);
	put_features(w, paper, PAPERS, PDIM, 0.2, 5);
	put_features(w, author, AUTHORS, ADIM, 1.0, 6);
	cr_assert_eq(burrow_writer_set_target(w, paper), 0);
	int32_t labels[PAPERS];
	int64_t ids[PAPERS];
	for (int64_t v = 0; v < PAPERS; v++) {
		labels[v] = label_of(v);
		ids[v] = v;
	}
	cr_assert_eq(burrow_writer_put_labels(w, labels, PAPERS, CLASSES), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_writer_put_split(w, BURROW_SPLIT_TRAIN, ids, 72), 0);
	cr_assert_eq(burrow_writer_put_split(w, BURROW_SPLIT_VALID, ids + 72, 24), 0);
	cr_assert_eq(burrow_writer_put_split(w, BURROW_SPLIT_TEST, ids + 96, 24), 0);
	cr_assert_eq(burrow_writer_commit(w), 0, "%s", burrow_last_error());
	return p;
}

/* hsbm (burrow gen): its fields are no relation's source, so no model reads them. */
static char *hsbm_dataset(void)
{
	burrow_gen_opts g;
	burrow_gen_defaults(&g, BURROW_GEN_HSBM);
	g.num_nodes = 300;
	g.num_classes = 4;
	g.feat_dim = 8;
	char *p = tu_path(tu_dir, "hsbm");
	cr_assert_eq(burrow_gen(&g, p), 0, "%s", burrow_last_error());
	return p;
}

static burrow_train_opts typed_opts(int model, bool embed)
{
	burrow_train_opts o;
	burrow_train_defaults(&o);
	o.model = model;
	o.layers = 2;
	o.hidden = 8;
	o.heads = 2;
	o.batch_size = 16;
	o.threads = 1;
	o.lr = 0.01;
	o.seed = 7;
	o.embed_types = embed;
	return o;
}

static burrow_trainer *open_trainer(burrow_dataset *ds, const burrow_train_opts *o)
{
	burrow_trainer *t = NULL;
	cr_assert_eq(burrow_trainer_open(&t, ds, o), 0, "%s", burrow_last_error());
	return t;
}

/* Train epochs through `to` (from the trainer's epoch), each evaluated; the last one's loss. */
static double train_to(burrow_trainer *t, int to)
{
	double loss = 0;
	while (burrow_trainer_epoch(t) < to) {
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev};
		cr_assert_eq(burrow_trainer_train_epoch(t, &es), 0, "%s", burrow_last_error());
		cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
		loss = es.loss;
	}
	return loss;
}

/* Are the files at a and b the same bytes? */
static bool same_file(const char *a, const char *b)
{
	size_t na, nb;
	char *x = tu_read(a, &na), *y = tu_read(b, &nb);
	const bool same = x && y && na == nb && !memcmp(x, y, na);
	free(x);
	free(y);
	return same;
}

/* A typed trainer on dir with o, trained `epochs` epochs and saved to tu_dir/<name>; caller
 * frees the path. */
static char *trained_checkpoint(const char *dir, const burrow_train_opts *o, int epochs, const char *name)
{
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	burrow_trainer *t = open_trainer(ds, o);
	train_to(t, epochs);
	char *p = tu_path(tu_dir, "%s", name);
	cr_assert_eq(burrow_trainer_save(t, p), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	return p;
}

/* 2 epochs, a checkpoint, a new trainer loading it and 1 epoch more == 3 epochs straight: the
 * third epoch's loss to the bit and the final checkpoint (weights, optimizer state, learned
 * embeddings and their moments, epoch, best) byte for byte. */
static void resume_case(const char *dir, int model, bool embed)
{
	const burrow_train_opts o = typed_opts(model, embed);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, dir), 0, "%s", burrow_last_error());
	char *a3 = tu_path(tu_dir, "a3.ckpt"), *b2 = tu_path(tu_dir, "b2.ckpt"), *b3 = tu_path(tu_dir, "b3.ckpt");
	burrow_trainer *t = open_trainer(ds, &o);
	const double straight = train_to(t, 3);
	cr_assert_eq(burrow_trainer_save(t, a3), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	t = open_trainer(ds, &o);
	train_to(t, 2);
	cr_assert_eq(burrow_trainer_save(t, b2), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	burrow_train_opts other = o;
	other.seed = 99; /* the checkpoint's seed wins */
	t = open_trainer(ds, &other);
	cr_assert_eq(burrow_trainer_load(t, b2), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_epoch(t), 2);
	const double resumed = train_to(t, 3);
	cr_assert_eq(burrow_trainer_save(t, b3), 0, "%s", burrow_last_error());
	burrow_trainer_close(t);
	cr_assert(memcmp(&straight, &resumed, sizeof straight) == 0, "%s %s: epoch 3's loss %.17g resumed, %.17g straight",
		  burrow_model_name(model), embed ? "embed" : "", resumed, straight);
	cr_assert(same_file(a3, b3), "%s: the resumed run's checkpoint differs from the straight run's",
		  burrow_model_name(model));
	burrow_dataset_close(ds);
	free(a3);
	free(b2);
	free(b3);
}

Test(htrain_ckpt, resume_equals_an_uninterrupted_run)
{
	char *toy = typed_dataset("toy", 0), *hs = hsbm_dataset();
	resume_case(hs, BURROW_MODEL_RGCN, false);
	resume_case(hs, BURROW_MODEL_MLP, false);
	resume_case(toy, BURROW_MODEL_RGCN, true);
	resume_case(toy, BURROW_MODEL_RSAGE, true);
	resume_case(toy, BURROW_MODEL_RGAT, true);
	free(toy);
	free(hs);
}

/* The header of a typed checkpoint records the model, the dataset, its types (with the learned
 * embeddings' width) and relations, and burrow_checkpoint_read_opts gives back what eval needs. */
Test(htrain_ckpt, header_records_types_relations_and_options)
{
	char *toy = typed_dataset("toy", 0);
	burrow_train_opts o = typed_opts(BURROW_MODEL_RGAT, true);
	o.embed_dim = 5;
	o.fanout[0] = 6;
	o.fanout[1] = 3;
	char *ck = trained_checkpoint(toy, &o, 1, "h.ckpt");
	size_t n;
	char *f = tu_read(ck, &n);
	cr_assert(f && !memcmp(f, "BURROWCK\2\0\0\0", 12), "not a version-2 checkpoint");
	const char *want[] = {"\"version\":2", "\"model\":\"rgat\"", "\"heads\":2", "\"dataset\":\"typed-toy\"",
			      "{\"name\":\"field\",\"num_nodes\":12,\"feat_dim\":0,\"embed_dim\":5}",
			      "{\"name\":\"paper\",\"num_nodes\":120,\"feat_dim\":6,\"embed_dim\":0}",
			      "{\"src\":\"field\",\"name\":\"about\",\"dst\":\"paper\",\"num_edges\":",
			      "\"target_type\":\"paper\"", "\"fanout\":[6,3]"};
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
		cr_assert(memmem(f, n, want[i], strlen(want[i])), "header lacks %s", want[i]);
	free(f);
	burrow_train_opts r;
	burrow_train_defaults(&r);
	cr_assert_eq(burrow_checkpoint_read_opts(ck, &r), 0, "%s", burrow_last_error());
	cr_assert(r.model == BURROW_MODEL_RGAT && r.layers == 2 && r.hidden == 8 && r.heads == 2 && r.seed == 7);
	cr_assert(r.embed_types && r.embed_dim == 5 && r.fanout[0] == 6 && r.fanout[1] == 3);
	free(ck);
	free(toy);
}

/* A load that fails: status st, one line naming the file and `what`; the trainer as it was
 * (a checkpoint written after it equals the one written before, byte for byte). */
static void refused(burrow_trainer *t, const char *ck, int st, const char *what)
{
	char *before = tu_path(tu_dir, "before.ckpt"), *after = tu_path(tu_dir, "after.ckpt");
	cr_assert_eq(burrow_trainer_save(t, before), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_load(t, ck), st, "%s: %s", what, burrow_last_error());
	const char *msg = burrow_last_error();
	cr_assert(strstr(msg, ck) && strstr(msg, what) && !strchr(msg, '\n'), "want '%s': %s", what, msg);
	cr_assert_eq(burrow_trainer_save(t, after), 0, "%s", burrow_last_error());
	cr_assert(same_file(before, after), "a refused load (%s) changed the trainer", what);
	free(before);
	free(after);
}

/* Loads that must be refused: another typed dataset (its types, relations, name), another
 * model shape or embedding width, a homogeneous checkpoint on a typed dataset and a typed one
 * on a homogeneous dataset. */
Test(htrain_ckpt, another_dataset_model_or_kind_is_refused)
{
	char *toy = typed_dataset("toy", 0), *more_fields = typed_dataset("toy1", 1), *more_rels = typed_dataset("toy2", 2),
	     *renamed = typed_dataset("toy3", 3), *fewer = typed_dataset("toy4", 4), *csbm = tu_weak_csbm(tu_dir, 200, 8);
	const burrow_train_opts o = typed_opts(BURROW_MODEL_RGCN, true);
	char *ck = trained_checkpoint(toy, &o, 1, "toy.ckpt");
	burrow_train_opts ho = typed_opts(BURROW_MODEL_SAGE, false);
	char *hck = trained_checkpoint(csbm, &ho, 1, "csbm.ckpt");
	struct {
		const char *dir;
		burrow_train_opts o;
		const char *what;
	} cases[] = {
		{more_fields, o, "node type 2 'field' (12 nodes, learned embeddings of width 6); this run's is 'field' (13 nodes"},
		{more_rels, o, "the model trained on 3 relations; this dataset has 4"},
		{renamed, o, "the model trained on dataset 'typed-toy'"},
		{fewer, o, "the model trained on relation 1 paper___cites___paper ("},
		{toy, typed_opts(BURROW_MODEL_RSAGE, true), "checkpoint holds a rgcn model"},
		{toy, o, "width 6); this run's is 'field' (12 nodes, learned embeddings of width 3)"},
		{toy, o, "checkpoint holds a sage model of the homogeneous dataset 'csbm'; this dataset ('typed-toy') is typed"},
		{csbm, ho, "checkpoint holds a rgcn model of the typed dataset 'typed-toy'; this dataset ('csbm') is homogeneous"},
	};
	cases[5].o.embed_dim = 3;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		burrow_dataset *ds;
		cr_assert_eq(burrow_dataset_open(&ds, cases[i].dir), 0, "%s", burrow_last_error());
		burrow_trainer *t = open_trainer(ds, &cases[i].o);
		train_to(t, 1);
		refused(t, i == 6 ? hck : ck, BURROW_E_INVAL, cases[i].what);
		burrow_trainer_close(t);
		burrow_dataset_close(ds);
	}
	free(ck);
	free(hck);
	free(toy);
	free(more_fields);
	free(more_rels);
	free(renamed);
	free(fewer);
	free(csbm);
}

/* A typed checkpoint cut short (its embeddings' moments partly gone), or with one byte of its
 * embeddings changed, is refused naming the file; the trainer stays as it was. */
Test(htrain_ckpt, truncated_or_corrupted_typed_checkpoint_is_refused)
{
	char *toy = typed_dataset("toy", 0);
	const burrow_train_opts o = typed_opts(BURROW_MODEL_RGCN, true);
	char *ck = trained_checkpoint(toy, &o, 2, "toy.ckpt"), *cut = tu_path(tu_dir, "cut.ckpt");
	const long long size = tu_size(ck);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, toy), 0, "%s", burrow_last_error());
	burrow_trainer *t = open_trainer(ds, &o);
	train_to(t, 1);
	tu_sh(NULL, NULL, "head -c %lld '%s' > '%s'", size - 200, ck, cut);
	refused(t, cut, BURROW_E_FORMAT, "truncated");
	/* the trailer put back after the cut: the length it records differs */
	tu_sh(NULL, NULL, "tail -c 16 '%s' >> '%s'", ck, cut);
	refused(t, cut, BURROW_E_FORMAT, "truncated");
	/* a byte of the last embedding table's moments */
	tu_sh(NULL, NULL, "cp '%s' '%s' && printf '\\177' | dd of='%s' bs=1 seek=%lld conv=notrunc 2>/dev/null", ck, cut,
	      cut, size - 40);
	refused(t, cut, BURROW_E_FORMAT, "corrupted");
	cr_assert_eq(burrow_trainer_load(t, ck), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_epoch(t), 2);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(ck);
	free(cut);
	free(toy);
}

/* Every allocation of a load failing in turn: BURROW_E_NOMEM, nothing leaked, the trainer as
 * it was (its checkpoint unchanged); once the load succeeds the trainer saves the very file it
 * loaded. */
Test(htrain_ckpt, failed_allocations_on_load_leave_the_trainer, .timeout = 240)
{
	char *toy = typed_dataset("toy", 0);
	const burrow_train_opts o = typed_opts(BURROW_MODEL_RGCN, true);
	char *ck = trained_checkpoint(toy, &o, 2, "toy.ckpt");
	char *before = tu_path(tu_dir, "before.ckpt"), *after = tu_path(tu_dir, "after.ckpt");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, toy), 0, "%s", burrow_last_error());
	burrow_trainer *t = open_trainer(ds, &o);
	train_to(t, 1);
	cr_assert_eq(burrow_trainer_save(t, before), 0, "%s", burrow_last_error());
	int st = -1;
	long n = 0;
	for (; st; n++) {
		cr_assert_lt(n, 1000, "never succeeded");
		const size_t base = tu_mem_now();
		bw_mem_fail_after(n);
		st = burrow_trainer_load(t, ck);
		bw_mem_fail_after(-1);
		cr_assert(st == 0 || st == BURROW_E_NOMEM, "allocation %ld: %d (%s)", n, st, burrow_last_error());
		if (st) {
			cr_assert_eq(tu_mem_now(), base, "allocation %ld: %zu bytes not freed", n, tu_mem_now() - base);
			cr_assert_eq(burrow_trainer_save(t, after), 0, "%s", burrow_last_error());
			cr_assert(same_file(before, after), "allocation %ld: a failed load changed the trainer", n);
		}
	}
	cr_log_info("the load succeeded once %ld allocations could", n - 1);
	cr_assert_eq(burrow_trainer_save(t, after), 0, "%s", burrow_last_error());
	cr_assert(same_file(ck, after), "the loaded trainer saves another file than it loaded");
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(ck);
	free(before);
	free(after);
	free(toy);
}

/* The "loss" and the last epoch line's "valid_acc" and "test_acc" fields of a --log file. */
static int log_fields(const char *path, char losses[][40], int max, char *valid, char *test)
{
	const int n = tu_log_losses(path, losses, max);
	size_t len;
	char *f = tu_read(path, &len);
	cr_assert(f, "%s", path);
	char *last = NULL;
	for (char *p = strstr(f, "{\"epoch\""); p; p = strstr(p + 1, "{\"epoch\""))
		last = p;
	cr_assert(last);
	cr_assert_eq(sscanf(strstr(last, "\"valid_acc\""), "\"valid_acc\": %39[^,}]", valid), 1);
	cr_assert_eq(sscanf(strstr(last, "\"test_acc\""), "\"test_acc\": %39[^,}]", test), 1);
	free(f);
	return n;
}

/* burrow train --checkpoint, then --resume: 2 epochs + 1 == 3 epochs, the logs' loss fields
 * equal as printed; burrow eval of the checkpoint scores what the run's last evaluation did. */
static void cli_case(const char *dir, const char *args)
{
	char *a = tu_path(tu_dir, "a"), *b = tu_path(tu_dir, "b"), *out = NULL, *err = NULL;
	const char *common = "--layers 2 --hidden 8 --batch 16 --threads 1 --lr 0.01 --seed 3 --quiet";
	tu_rmrf(a);
	tu_rmrf(b);
	int rc = tu_sh(NULL, &err, "'%s' train '%s' %s %s --epochs 3 --checkpoint '%s/ck' --log '%s/log'", tu_burrow(), dir,
		       args, common, a, a);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = tu_sh(NULL, &err, "'%s' train '%s' %s %s --epochs 2 --checkpoint '%s/ck' --log '%s/log'", tu_burrow(), dir,
		   args, common, b, b);
	cr_assert_eq(rc, 0, "%s", err);
	free(err);
	rc = tu_sh(NULL, &err, "'%s' train '%s' %s %s --epochs 3 --checkpoint '%s/ck' --log '%s/log' --resume", tu_burrow(),
		   dir, args, common, b, b);
	cr_assert_eq(rc, 0, "%s", err);
	cr_assert(strstr(err, "resumed"), "%s", err);
	free(err);
	char la[4][40], lb[4][40], va[40], ta[40], vb[40], tb[40];
	char *pa = tu_path(a, "log"), *pb = tu_path(b, "log");
	cr_assert_eq(log_fields(pa, la, 4, va, ta), 3);
	cr_assert_eq(log_fields(pb, lb, 4, vb, tb), 3);
	for (int e = 0; e < 3; e++)
		cr_assert_str_eq(la[e], lb[e], "%s: epoch %d's loss", args, e + 1);
	cr_assert(!strcmp(va, vb) && !strcmp(ta, tb), "%s: accuracies %s %s resumed, %s %s straight", args, vb, tb, va, ta);
	char *la3 = tu_path(a, "ck/last.ckpt"), *lb3 = tu_path(b, "ck/last.ckpt");
	cr_assert(same_file(la3, lb3), "%s: last.ckpt differs", args);
	/* eval: the checkpoint's model, options and seed; the run's --batch */
	rc = tu_sh(&out, &err, "'%s' eval '%s' --checkpoint '%s' --batch 16 --threads 1 --json", tu_burrow(), dir, lb3);
	cr_assert_eq(rc, 0, "%s", err);
	char want[192];
	snprintf(want, sizeof want, "\"valid_acc\": %s, \"test_acc\": %s,", va, ta);
	cr_assert(strstr(out, want), "%s: eval says %s, the run's last evaluation %s", args, out, want);
	free(out);
	free(err);
	free(la3);
	free(lb3);
	free(pa);
	free(pb);
	free(a);
	free(b);
}

Test(htrain_ckpt, cli_resume_and_eval)
{
	char *toy = typed_dataset("toy", 0), *hs = hsbm_dataset();
	cli_case(hs, "--model rgcn");
	cli_case(toy, "--model rgcn --embed-types");
	cli_case(toy, "--model rgat --heads 2 --embed-types --embed-dim 5");
	free(toy);
	free(hs);
}

/* embed refuses a typed model's hidden layer and predict a typed MLP; eval refuses a checkpoint
 * of the other kind; each in one line naming the dataset or the file, exit 1. */
Test(htrain_ckpt, cli_refusals)
{
	char *toy = typed_dataset("toy", 0), *csbm = tu_weak_csbm(tu_dir, 200, 8);
	const burrow_train_opts o = typed_opts(BURROW_MODEL_RGCN, true);
	char *ck = trained_checkpoint(toy, &o, 1, "toy.ckpt");
	burrow_train_opts ho = typed_opts(BURROW_MODEL_SAGE, false);
	char *hck = trained_checkpoint(csbm, &ho, 1, "csbm.ckpt"), *npy = tu_path(tu_dir, "x.npy");
	const burrow_train_opts mo = typed_opts(BURROW_MODEL_MLP, false);
	char *mck = trained_checkpoint(toy, &mo, 1, "mlp.ckpt");
	struct {
		const char *cmd, *dir, *ck, *what;
	} cases[] = {
		{"embed --layer 1", toy, ck, "a typed model gives its last layer's output (the target type's logits)"},
		{"predict", toy, mck, "the MLP of a typed dataset has no layer-wise outputs"},
		{"eval", csbm, ck, "the checkpoint holds a rgcn model of a typed dataset;"},
		{"eval", toy, hck, "the checkpoint holds a sage model of a homogeneous dataset;"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *err = NULL;
		const bool out = strcmp(cases[i].cmd, "eval");
		int rc = tu_sh(NULL, &err, "'%s' %s '%s' --checkpoint '%s'%s%s", tu_burrow(), cases[i].cmd, cases[i].dir,
			       cases[i].ck, out ? " --out " : "", out ? npy : "");
		cr_assert_eq(rc, 1, "%s: exit %d: %s", cases[i].cmd, rc, err);
		cr_assert(strstr(err, cases[i].what), "%s: %s", cases[i].cmd, err);
		cr_assert(strstr(err, out ? cases[i].dir : cases[i].ck), "%s: %s", cases[i].cmd, err);
		cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1, "%s: more than one line: %s", cases[i].cmd, err);
		cr_assert(!tu_exists(npy), "%s left %s", cases[i].cmd, npy);
		free(err);
	}
	free(ck);
	free(hck);
	free(mck);
	free(npy);
	free(toy);
	free(csbm);
}


/* One evaluation of t with these inference settings (the trainer's own options, poked). */
static burrow_eval_stats eval_with(burrow_trainer *t, int32_t fanout, int64_t mem, int64_t chunk)
{
	for (int l = 0; l < t->o.layers; l++)
		t->o.eval_fanout[l] = fanout;
	t->o.eval_splits = BURROW_EVAL_ALL;
	t->o.mem_bytes = mem;
	t->o.eval_chunk = chunk;
	burrow_eval_stats ev = {.size = sizeof ev};
	cr_assert_eq(burrow_trainer_evaluate(t, &ev), 0, "%s", burrow_last_error());
	return ev;
}

/* Layer-wise full-neighbor evaluation (every node of each level once per layer, in chunks,
 * spilled under --mem) scores every split as the per-batch full-neighbor evaluation does (the
 * typed sampler with fanout -1 and the whole model's forward pass: another path to the same
 * sums), on a dataset where a featureless type with learned embeddings is computed at a hidden
 * level and read again above it (paper has_topic field, field about paper), at 3 layers. */
Test(htrain_ckpt, layer_wise_evaluation_equals_full_neighbor_batches)
{
	char *toy = typed_dataset("lw", 2);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, toy), 0, "%s", burrow_last_error());
	const int kinds[3] = {BURROW_MODEL_RGCN, BURROW_MODEL_RSAGE, BURROW_MODEL_RGAT};
	for (int k = 0; k < 3; k++) {
		burrow_train_opts o = typed_opts(kinds[k], true);
		o.layers = 3;
		burrow_trainer *t = open_trainer(ds, &o);
		train_to(t, 2);
		const burrow_eval_stats lw = eval_with(t, 0, 0, 8192), fb = eval_with(t, -1, 0, 8192),
					spill = eval_with(t, 0, 1, 7);
		const double a[3][3] = {{lw.train_acc, lw.valid_acc, lw.test_acc},
					{fb.train_acc, fb.valid_acc, fb.test_acc},
					{spill.train_acc, spill.valid_acc, spill.test_acc}};
		for (int s = 0; s < 3; s++) {
			cr_expect(a[0][s] >= 0 && a[0][s] == a[1][s] && a[0][s] == a[2][s],
				  "%s, split %d: layer-wise %.6f, full-neighbor batches %.6f, spilled %.6f",
				  burrow_model_name(kinds[k]), s, a[0][s], a[1][s], a[2][s]);
		}
		cr_expect(lw.spilled_bytes == 0 && spill.spilled_bytes > 0, "%s: spilled %lld and %lld bytes",
			  burrow_model_name(kinds[k]), (long long)lw.spilled_bytes, (long long)spill.spilled_bytes);
		burrow_trainer_close(t);
	}
	burrow_dataset_close(ds);
	free(toy);
}

/* predict of a typed model: the argmax of the layer-wise logits, which score each split as the
 * evaluation does; for a list of nodes, those nodes' rows; embed: the logits themselves. */
Test(htrain_ckpt, predict_scores_what_evaluation_scores)
{
	char *toy = typed_dataset("pr", 2), *all = tu_path(tu_dir, "p.npy"), *some = tu_path(tu_dir, "q.npy"),
	     *logits = tu_path(tu_dir, "z.npy");
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, toy), 0, "%s", burrow_last_error());
	burrow_train_opts o = typed_opts(BURROW_MODEL_RSAGE, true);
	burrow_trainer *t = open_trainer(ds, &o);
	train_to(t, 2);
	const burrow_eval_stats ev = eval_with(t, 0, 0, 8192);
	cr_assert_eq(burrow_trainer_predict(t, NULL, 0, false, all), 0, "%s", burrow_last_error());
	int64_t nv;
	const int64_t *valid = burrow_dataset_split(ds, BURROW_SPLIT_VALID, &nv);
	cr_assert_eq(burrow_trainer_predict(t, valid, nv, false, some), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_trainer_embed(t, logits), 0, "%s", burrow_last_error());
	burrow_npy_array p, q, z;
	cr_assert_eq(burrow_npy_read(all, &p), 0);
	cr_assert_eq(burrow_npy_read(some, &q), 0);
	cr_assert_eq(burrow_npy_read(logits, &z), 0);
	cr_assert(p.shape[0] == PAPERS && q.shape[0] == nv && z.shape[0] == PAPERS && z.shape[1] == CLASSES);
	const int32_t *pc = p.data, *qc = q.data, *y = burrow_dataset_labels(ds);
	const float *zl = z.data;
	const double want[3] = {ev.train_acc, ev.valid_acc, ev.test_acc};
	for (int s = 0; s < 3; s++) {
		int64_t n, right = 0;
		const int64_t *ids = burrow_dataset_split(ds, s, &n);
		for (int64_t i = 0; i < n; i++)
			right += pc[ids[i]] == y[ids[i]];
		cr_expect_eq((double)right / (double)n, want[s], "split %d: predictions score %lld / %lld, evaluation %.6f", s,
			     (long long)right, (long long)n, want[s]);
	}
	for (int64_t i = 0; i < nv; i++)
		cr_expect_eq(qc[i], pc[valid[i]], "node %lld", (long long)valid[i]);
	for (int64_t v = 0; v < PAPERS; v++) {
		int best = 0;
		for (int c = 1; c < CLASSES; c++)
			best = zl[v * CLASSES + c] > zl[v * CLASSES + best] ? c : best;
		cr_expect_eq(best, pc[v], "node %lld: argmax of the logits %d, prediction %d", (long long)v, best, pc[v]);
	}
	burrow_npy_free(&p);
	burrow_npy_free(&q);
	burrow_npy_free(&z);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(toy);
	free(all);
	free(some);
	free(logits);
}
