/* cmd_train.c: burrow train DIR: train a node classifier, one line per epoch, OGB accuracy,
 * JSON-lines log, checkpoints and resume. */
#define _GNU_SOURCE
#include "cli.h"
#include "train_cli.h"
#include "train_opts.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pipeline's settings and the feature cache, one line under the header. */
static void print_pipeline(burrow_trainer *t, const burrow_train_opts *o, bool typed)
{
	char fan[96] = "none (mlp)", a[32], b[32], c[32], pf[96];
	if (o->model != BURROW_MODEL_MLP) {
		fan[0] = '\0';
		for (int l = 0; l < o->layers; l++)
			snprintf(fan + strlen(fan), sizeof fan - strlen(fan), "%s%d", l ? "," : "", o->fanout[l]);
		if (typed && o->typed_fanout == BURROW_TYPED_FANOUT_NODE)
			snprintf(fan + strlen(fan), sizeof fan - strlen(fan), " per node");
	}
	double bb;
	const int depth = burrow_trainer_prefetch(t, &bb);
	snprintf(pf, sizeof pf, "%d", depth);
	if (depth != o->prefetch) /* a typed batch too large for prefetch + 1 of them */
		snprintf(pf, sizeof pf, "%d -> %d: a batch holds %s", o->prefetch, depth, cli_human_bytes(bb, a, sizeof a));
	burrow_store *s = burrow_trainer_store(t);
	if (!s) { /* learned embeddings: a dataset without features, or a typed one's target type */
		printf("  batch %lld, fanout %s, prefetch %s; features: learned embeddings; sampler %s\n",
		       (long long)o->batch_size, fan, pf, burrow_trainer_sampler_device(t));
		return;
	}
	const burrow_store_info *in = burrow_store_get_info(s);
	burrow_store_stats st = {.size = sizeof st};
	burrow_store_get_stats(s, &st);
	if (typed && st.cache_bytes > 0) { /* each read type's store caches its share as it reads (clock) */
		printf("  batch %lld, fanout %s, prefetch %s; features: %s%s, cache %s on the target type's %s rows "
		       "(its share; every type read caches its own), filled as read (clock); sampler %s\n",
		       (long long)o->batch_size, fan, pf, burrow_store_engine_name(in->engine), in->direct ? " O_DIRECT" : "",
		       cli_human_bytes((double)st.cache_bytes, a, sizeof a), cli_grouped(in->num_rows, c, sizeof c),
		       burrow_trainer_sampler_device(t));
		return;
	}
	printf("  batch %lld, fanout %s, prefetch %s; features: %s%s, cache %s: %s of %s rows (%s); sampler %s\n",
	       (long long)o->batch_size, fan, pf, burrow_store_engine_name(in->engine),
	       in->direct ? " O_DIRECT" : "", cli_human_bytes((double)st.cache_bytes, a, sizeof a),
	       cli_grouped((int64_t)st.cache_rows, b, sizeof b), cli_grouped(in->num_rows, c, sizeof c),
	       st.cache_bytes == 0 ? "none" : typed || o->cache_policy == BURROW_CACHE_CLOCK ? "clock"
						 : o->cache_policy == BURROW_CACHE_PROFILE ? "by profile" : "by degree",
	       burrow_trainer_sampler_device(t));
}

/* --log's config line: the options as resolved (ta's with the trainer's o: a resumed run's
 * split and seed are its checkpoint's; the sampler's device the trainer chose), the dataset,
 * the checkpoint resumed (NULL: a fresh run). */
static int log_config(FILE *log, const train_args *ta, const burrow_train_opts *o, int argc, char **argv,
		      burrow_trainer *t, const burrow_dataset_info *in, const char *resumed_from)
{
	train_args a = *ta;
	a.d.train = *o;
	if (!a.d.train.full_graph)
		a.d.train.sampler_device = burrow_trainer_sampler_device(t);
	cJSON *opts = cJSON_CreateObject();
	if (!opts || !train_args_json(&a, TRAIN_ONE, opts)) {
		cJSON_Delete(opts);
		errno = ENOMEM;
		return -1;
	}
	const train_log_run r = {.argc = argc, .argv = argv, .dir = ta->dir, .name = in->name,
				 .nodes = in->num_nodes, .classes = in->num_classes, .typed = in->num_types > 0,
				 .resumed_from = resumed_from, .after_epoch = burrow_trainer_epoch(t), .options = opts};
	const int rc = train_cli_log_config(log, &r);
	cJSON_Delete(opts);
	return rc;
}

int cmd_train(int argc, char **argv)
{
	train_args ta;
	int rc = train_args_parse(argc, argv, TRAIN_ONE, true, &ta);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	burrow_train_opts o = ta.d.train;
	const char *log_path = ta.log, *ckpt_dir = ta.ckpt, *dir = ta.dir;
	const bool resume = ta.resume, quiet = ta.quiet;
	const int every = ta.every;

	if ((rc = burrow_device_check(o.device)) < 0) /* before any work: a missing GPU is known at once */
		return cli_lib_fail("train", rc);
	if (o.sampler_device && strcmp(o.sampler_device, "auto") && (rc = burrow_device_check(o.sampler_device)) < 0) {
		char why[256];
		snprintf(why, sizeof why, "%s", burrow_last_error());
		return cli_fail("train", "--sampler-device: %s", why);
	}
	char *last_path = NULL, *best_path = NULL;
	int made = 0; /* folders of --checkpoint's path this run created */
	if (ckpt_dir && train_cli_checkpoint_dir("train", ckpt_dir, resume, ta.best_only, &last_path, &best_path, &made))
		return EXIT_FAIL;

	/* a resumed run continues on the checkpoint's split, drawn from its seed */
	if (resume && train_cli_checkpoint_split("train", last_path, &o))
		goto fail_paths;
	burrow_dataset *ds;
	int st = burrow_dataset_open(&ds, dir);
	if (st < 0) {
		cli_lib_fail("train", st);
		goto fail_paths;
	}
	train_cli_use_split(ta.split_name);
	if (train_cli_select_split("train", ds))
		goto fail_ds;
	cli_progress pb; /* gen's bar, with the epoch before the phase, erased when a phase ends */
	cli_progress_init(&pb, quiet);
	pb.erase = true;
	o.progress = cli_progress_cb;
	o.progress_user = &pb;
	burrow_trainer *t;
	if ((st = burrow_trainer_open(&t, ds, &o)) < 0) {
		cli_lib_fail("train", st);
		goto fail_ds;
	}
	if (resume) {
		if ((st = burrow_trainer_load(t, last_path)) < 0) {
			cli_lib_fail("train", st);
			goto fail_trainer;
		}
		fprintf(stderr, "burrow: train: resumed %s after epoch %d\n", last_path, burrow_trainer_epoch(t));
		train_cli_resume_warn("train", last_path, &o);
	}
	FILE *log = NULL;
	if (log_path && !(log = train_cli_log_open(log_path, resume, burrow_trainer_epoch(t)))) {
		cli_fail("train", "%s: cannot open the log: %s", log_path, strerror(errno));
		goto fail_trainer;
	}
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	if (log && log_config(log, &ta, &o, argc, argv, t, in, resume ? last_path : NULL) != 0) {
		cli_fail("train", "%s: write failed: %s", log_path, strerror(errno));
		fclose(log);
		goto fail_trainer;
	}

	char a[32];
	char what[48];
	if (in->num_tasks) /* multi-label (the task AUTO picks; node is refused on such a dataset) */
		snprintf(what, sizeof what, "%d tasks, multi-label, rocauc", in->num_tasks);
	else
		snprintf(what, sizeof what, "%d classes", in->num_classes);
	const burrow_eval_stats named = {.metric = in->num_tasks ? BURROW_METRIC_ROCAUC : BURROW_METRIC_ACC};
	train_cli_set_metric(&named);
	printf("burrow train: %s on %s (%s nodes, %s), %s, %d layers, hidden %lld, dropout %g, lr %g%s\n",
	       burrow_model_name(o.model), cli_text(in->name), cli_grouped(in->num_nodes, a, sizeof a), what,
	       o.full_graph ? "full graph" : "mini-batch", o.layers, (long long)o.hidden, o.dropout, o.lr,
	       train_cli_habits(&o));
	if (!o.full_graph)
		print_pipeline(t, &o, in->num_types > 0); /* typed stores cache as they read (clock) */
	const int done = burrow_trainer_epoch(t); /* epochs trained before this run */
	int trained = 0;
	if (done < o.epochs) /* a table only when there will be rows */
		printf("%5s %9s %7s %7s %7s %8s %8s %9s %9s %7s %10s %6s\n", "epoch", "loss", "train", "valid", "test",
		       "epoch_s", "sample_s", "io_wait_s", "compute_s", "eval_s", "rows_read", "hit");
	fflush(stdout);
	rc = EXIT_OK;
	const double start = cli_now();
	int stopped = 0; /* early stopping: the last epoch trained */
	for (int e = done + 1; e <= o.epochs; e++, trained++) {
		if (burrow_trainer_should_stop(t)) { /* --patience ran out (a resumed run: already at its save) */
			stopped = e - 1;
			break;
		}
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_eval_stats ev = {.size = sizeof ev, .train_acc = -1, .valid_acc = -1, .test_acc = -1};
		snprintf(pb.label, sizeof pb.label, "epoch %d ", e);
		if ((st = burrow_trainer_train_epoch(t, &es)) < 0) {
			rc = cli_lib_fail("train", st);
			break;
		}
		const bool evaluate = every > 0 && (e % every == 0 || e == o.epochs);
		if (evaluate && (st = burrow_trainer_evaluate(t, &ev)) < 0) {
			rc = cli_lib_fail("train", st);
			break;
		}
		if (evaluate)
			train_cli_set_metric(&ev);
		char tr[16], va[16], te[16], hit[16];
		printf("%5d %9.4f %s %s %s %8.3f %8.3f %9.3f %9.3f %7.3f %10lld %s\n", es.epoch, es.loss,
		       train_cli_num(tr, sizeof tr, 7, 4, 1, "", es.train_acc),
		       train_cli_num(va, sizeof va, 7, 4, 1, "", ev.valid_acc),
		       train_cli_num(te, sizeof te, 7, 4, 1, "", ev.test_acc), es.epoch_s, es.sample_s, es.io_wait_s,
		       es.compute_s, ev.eval_s, (long long)es.rows_read,
		       train_cli_num(hit, sizeof hit, 6, 1, 100, "%", es.cache_hit_rate));
		fflush(stdout);
		if (log && train_cli_log_epoch(log, &es, &ev, 0, NULL) != 0) {
			rc = cli_fail("train", "%s: write failed: %s", log_path, strerror(errno));
			break;
		}
		if (ckpt_dir) {
			const burrow_best b = burrow_trainer_best(t);
			if ((evaluate && b.epoch == e && (st = burrow_trainer_save(t, best_path)) < 0) ||
			    (train_cli_save_last(e, o.epochs, ta.ckpt_every, ta.best_only) &&
			     (st = burrow_trainer_save(t, last_path)) < 0)) {
				rc = cli_lib_fail("train", st);
				break;
			}
		}
	}
	if (rc == EXIT_OK) {
		const burrow_best b = burrow_trainer_best(t);
		char line[4400]; /* holds a checkpoint path */
		train_cli_result(line, sizeof line, &b, trained, done, o.epochs, resume ? last_path : NULL);
		printf("%s%s\n", line, train_cli_stopped(stopped, o.patience));
		if (log && train_cli_log_final(log, &b, burrow_trainer_epoch(t), trained, cli_now() - start,
					       burrow_trainer_weights_checksum(t), 0, true) != 0)
			rc = cli_fail("train", "%s: write failed: %s", log_path, strerror(errno));
	}
	if (log && fclose(log) != 0 && rc == EXIT_OK)
		rc = cli_fail("train", "%s: write failed: %s", log_path, strerror(errno));
	if (rc != EXIT_OK && ckpt_dir)
		train_cli_checkpoint_unmake(ckpt_dir, made);
	burrow_trainer_close(t);
	burrow_dataset_close(ds);
	free(last_path);
	free(best_path);
	return rc;

fail_trainer:
	burrow_trainer_close(t);
fail_ds:
	burrow_dataset_close(ds);
fail_paths:
	if (ckpt_dir)
		train_cli_checkpoint_unmake(ckpt_dir, made);
	free(last_path);
	free(best_path);
	return EXIT_FAIL;
}
