/* cmd_train_dist.c: mpirun -np K burrow train DIR/parts-K: partition-parallel training, one
 * rank per part, mini-batch (default) or full-graph (burrow.c routes `train` here when DIR is
 * a parts directory); its options are burrow train's (train_opts.c). */
#define _GNU_SOURCE
#include "cli.h"
#include "train_cli.h"
#include "train_opts.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This process's rank as its launcher (Open MPI, PMIx, MPICH's PMI) put it in the environment,
 * or NULL when no launcher started it. */
static const char *launcher_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		if (getenv(vars[i]))
			return getenv(vars[i]);
	return NULL;
}

/* Is this process rank 0 of its job, or not started by mpirun? Read before MPI starts, so
 * that a usage error prints once. */
static bool first_rank(void)
{
	const char *v = launcher_rank();
	return !v || atoi(v) == 0;
}

/* The parts directory's part count against the job's ranks, read before MPI starts: a plain
 * `burrow train DIR/parts-K` (no launcher: one rank) or a launcher's size that differs is one
 * line from the first rank instead of each rank's MPI_ABORT text. A launcher that does not say
 * its size (1 from cli_launcher_size) is left to MPI. 0 when they fit, else the exit code. */
static int ranks_fit_parts(const char *dir)
{
	int rank, size = cli_launcher_size(&rank);
	burrow_parts *ps;
	int st = burrow_parts_open(&ps, dir), k = 0;
	if (st >= 0)
		k = burrow_parts_get_info(ps)->num_parts;
	burrow_parts_close(ps);
	if (st >= 0 && (k == size || (size == 1 && launcher_rank())))
		return 0;
	if (!first_rank()) {
		sleep(2); /* mpirun ends the job at the first non-zero exit: let rank 0 say why first */
		return EXIT_FAIL;
	}
	if (st < 0)
		return cli_lib_fail("train", st);
	if (size == 1)
		return cli_fail("train", "%s holds %d parts, one MPI rank each: start it as mpirun -np %d burrow train %s", dir,
				k, k, dir);
	return cli_fail("train", "%s holds %d parts, but %d ranks were started (mpirun -np %d)", dir, k, size, k);
}

/* A rank's failure ends the job: its message, then an abort of the job so no rank waits forever. */
static int fail_all(int rank, const char *what)
{
	fprintf(stderr, "burrow: train: rank %d: %s\n", rank, what);
	fflush(stderr);
	burrow_mpi_abort(1);
	return EXIT_FAIL;
}

/* "LOG: write failed: why" (a static buffer), for a --log write errno says failed. */
static const char *log_failed(const char *log)
{
	static char msg[4400];
	snprintf(msg, sizeof msg, "%s: write failed: %s", log, strerror(errno));
	return msg;
}

/* One run of mpirun -np K burrow train: what its phases share. A phase that fails on one
 * rank ends the job (fail_all); dist_run_close undoes what the phases acquired. */
typedef struct dist_run {
	train_args a;
	burrow_dist_opts o;
	double start;
	int rank, size;
	burrow_dist *d;
	char *last, *best; /* rank 0's checkpoint paths (malloc'd), NULL elsewhere */
	FILE *lf;          /* rank 0's --log, NULL elsewhere */
	int done, trained; /* epochs trained before this run, and by it */
	int argc;          /* burrow train's arguments, for the --log config line */
	char **argv;       /* (borrowed) */
	int stopped;       /* early stopping: the last epoch trained, else 0 */
} dist_run;

/* The command line and what no rank can serve, said once before MPI starts: 0 to go on, -1
 * after --help, else the exit code. */
static int dist_parse(dist_run *r, int argc, char **argv)
{
	int rc = train_args_parse(argc, argv, TRAIN_DIST, first_rank(), &r->a);
	if (rc > 0 && !first_rank())
		sleep(2); /* mpirun ends the job at the first non-zero exit: let rank 0 print the usage line first */
	if (rc)
		return rc;
	r->o = r->a.d;
	int st = burrow_dist_check(&r->o);
	if (st < 0) {
		if (first_rank())
			return cli_lib_fail("train", st);
		sleep(2); /* mpirun ends the job at the first non-zero exit: let rank 0 say why first */
		return EXIT_FAIL;
	}
	if ((rc = ranks_fit_parts(r->a.dir)))
		return rc;
	burrow_parts *ps;
	int types = burrow_parts_open(&ps, r->a.dir) >= 0 ? burrow_parts_get_info(ps)->num_types : 0;
	burrow_parts_close(ps);
	if (!types || !r->a.ckpt) /* typed parts: no checkpoints yet (said before the first epoch) */
		return 0;
	if (!first_rank()) {
		sleep(2); /* mpirun ends the job at the first non-zero exit: let rank 0 say why first */
		return EXIT_FAIL;
	}
	return cli_fail("train", "%s: typed parts (%d node types): training under mpirun does not checkpoint them in this "
			"version (drop --checkpoint)", r->a.dir, types);
}

/* The classes of the dataset of a parts directory: part 0's meta.json says them; 0 when it
 * cannot be read (the trainer has read it already). */
static int part_classes(const char *dir)
{
	char path[4200], buf[1 << 14];
	snprintf(path, sizeof path, "%s/part-0/meta.json", dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	const size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	cJSON *m = cJSON_Parse(buf);
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(m, "num_classes");
	const int k = cJSON_IsNumber(c) ? c->valueint : 0;
	cJSON_Delete(m);
	return k;
}

/* Rank 0's --log config line: the options as resolved (the communication and the sampler's
 * device the job chose), the dataset the parts came from, the checkpoint resumed. */
static int log_config(const dist_run *r)
{
	train_args a = r->a;
	a.d = r->o;
	a.d.comm = burrow_dist_comm(r->d);
	if (!a.d.train.full_graph)
		a.d.train.sampler_device = burrow_dist_sampler_device(r->d);
	burrow_parts *ps = NULL;
	cJSON *opts = cJSON_CreateObject();
	int rc = -1;
	errno = ENOMEM;
	if (opts && train_args_json(&a, TRAIN_DIST, opts)) {
		const bool have = burrow_parts_open(&ps, r->a.dir) >= 0; /* opened by every rank already */
		const burrow_parts_info *pi = have ? burrow_parts_get_info(ps) : NULL;
		const train_log_run lr = {.argc = r->argc, .argv = r->argv, .dir = r->a.dir,
					  .name = pi ? pi->dataset_name : NULL, .nodes = pi ? pi->num_nodes : 0,
					  .classes = part_classes(r->a.dir), .ranks = burrow_dist_size(r->d),
					  .resumed_from = r->a.resume ? r->last : NULL, .after_epoch = r->done,
					  .options = opts};
		rc = train_cli_log_config(r->lf, &lr);
	}
	burrow_parts_close(ps);
	cJSON_Delete(opts);
	return rc;
}

/* With MPI started: the distributed trainer, the checkpoint directory (rank 0 keeps it: the
 * other ranks need not see it), --resume, the --log file. */
static int dist_open(dist_run *r)
{
	int st = burrow_dist_open(&r->d, r->a.dir, &r->o);
	if (st < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	int ck_ok = 1;
	if (r->a.ckpt && r->rank == 0)
		ck_ok = train_cli_checkpoint_dir("train", r->a.ckpt, r->a.resume, r->a.best_only, &r->last, &r->best,
						 NULL) == 0;
	if ((st = burrow_mpi_bcast(&ck_ok, sizeof ck_ok, 0)) < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	if (!ck_ok)
		return EXIT_FAIL;
	if (r->a.resume) {
		if ((st = burrow_dist_load(r->d, r->last ? r->last : r->a.ckpt)) < 0)
			return fail_all(r->rank, cli_lib_message("train", st));
		if (r->rank == 0) {
			fprintf(stderr, "burrow: train: resumed %s after epoch %d\n", r->last, burrow_dist_epoch(r->d));
			train_cli_resume_warn("train", r->last, &r->o.train);
		}
	}
	if (r->rank == 0 && r->a.log && !(r->lf = train_cli_log_open(r->a.log, r->a.resume, burrow_dist_epoch(r->d))))
		return fail_all(r->rank, "cannot open the --log file");
	r->done = burrow_dist_epoch(r->d);
	if (r->lf && log_config(r) != 0)
		return fail_all(r->rank, log_failed(r->a.log));
	return 0;
}

/* Rank 0's first line (the model, the mode, the compute threads per rank: the same on every
 * rank unless the nodes differ) and the table's header when there will be rows. */
static int dist_banner(dist_run *r)
{
	const burrow_train_opts *t = &r->o.train;
	int64_t thr_min[2] = {burrow_dist_threads(r->d), -burrow_dist_threads(r->d)};
	int st = burrow_mpi_allreduce_i64(thr_min, 2, BURROW_REDUCE_MIN);
	if (st < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	char threads[64];
	if (thr_min[0] == -thr_min[1])
		snprintf(threads, sizeof threads, "%d thread%s per rank", (int)thr_min[0], thr_min[0] == 1 ? "" : "s");
	else
		snprintf(threads, sizeof threads, "%d to %d threads per rank", (int)thr_min[0], (int)-thr_min[1]);
	snprintf(threads + strlen(threads), sizeof threads - strlen(threads), ", comm %s",
		 burrow_comm_name(burrow_dist_comm(r->d)));
	if (strcmp(burrow_dist_sampler_device(r->d), "cpu")) /* draws on a GPU: say where */
		snprintf(threads + strlen(threads), sizeof threads - strlen(threads), ", sampler %s",
			 burrow_dist_sampler_device(r->d));
	if (r->rank != 0)
		return 0;
	if (t->full_graph) {
		printf("burrow train: %s, full graph, %d ranks, %s%s\n", burrow_model_name(t->model), burrow_dist_size(r->d),
		       threads, train_cli_habits(t));
	} else {
		char fan[128] = "";
		for (int l = 0; l < t->layers; l++)
			snprintf(fan + strlen(fan), sizeof fan - strlen(fan), "%s%d", l ? "," : "", burrow_train_fanout(t, l));
		printf("burrow train: %s, mini-batch, %d ranks, batch %lld per rank, fanout %s, prefetch %d, %s%s\n",
		       burrow_model_name(t->model), burrow_dist_size(r->d), (long long)t->batch_size, fan, t->prefetch,
		       threads, train_cli_habits(t));
	}
	if (r->done < t->epochs) /* a table only when there will be rows */
		printf("%5s %9s %9s %9s %8s %8s %8s %8s\n", "epoch", "loss", "train", "valid", "epoch_s", "comm_s",
		       "exposed", "eval_s");
	return 0;
}

/* Rank 0's row of epoch e and its --log line: the slowest rank's times are the epoch's
 * (tm: epoch, comm, exposed comm, eval, sample, io wait, compute), rows read add up, the hit
 * rate is the ranks' mean (hs: sum and count of the ranks that counted one). */
static int dist_report(dist_run *r, int e, const burrow_epoch_stats *es, const burrow_eval_stats *ev,
			const double tm[7], const double hs[2], int64_t rows_all)
{
	char tr[16], va[16];
	printf("%5d %9.4f %s %s %8.3f %8.3f %8.3f %8.3f\n", e, es->loss,
	       train_cli_num(tr, sizeof tr, 9, 4, 1, "", es->train_acc),
	       train_cli_num(va, sizeof va, 9, 4, 1, "", ev->valid_acc), tm[0], tm[1], tm[2], tm[3]);
	if (r->lf) {
		burrow_epoch_stats all = *es;
		all.epoch = e;
		all.epoch_s = tm[0];
		all.sample_s = tm[4];
		all.io_wait_s = tm[5];
		all.compute_s = tm[6];
		all.rows_read = rows_all;
		all.cache_hit_rate = hs[1] > 0 ? hs[0] / hs[1] : -1;
		burrow_eval_stats eall = *ev;
		eall.eval_s = tm[3];
		burrow_comm_stats call = {.size = sizeof call, .comm_s = tm[1], .exposed_comm_s = tm[2]};
		if (train_cli_log_epoch(r->lf, &all, &eall, burrow_dist_size(r->d), &call) != 0)
			return fail_all(r->rank, log_failed(r->a.log));
	}
	fflush(stdout);
	return 0;
}

/* Epoch e: train, evaluate when due, the ranks' times reduced and reported, the checkpoints
 * (collective: rank 0 writes, every rank learns how it went). */
static int dist_epoch(dist_run *r, int e)
{
	burrow_epoch_stats es = {.size = sizeof es};
	burrow_comm_stats cs = {.size = sizeof cs};
	burrow_eval_stats ev = {.size = sizeof ev, .valid_acc = -1, .test_acc = -1};
	int st;
	if ((st = burrow_dist_train_epoch(r->d, &es, &cs)) < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	const bool eval = r->a.every > 0 && (e % r->a.every == 0 || e == r->o.train.epochs);
	if (eval && (st = burrow_dist_evaluate(r->d, &ev)) < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	if (eval) /* link prediction: the valid and test columns hold the split's metric */
		train_cli_set_metric(&ev);
	double tm[8] = {es.epoch_s, cs.comm_s, cs.exposed_comm_s, ev.eval_s, es.sample_s, es.io_wait_s, es.compute_s};
	double hs[2] = {es.cache_hit_rate >= 0 ? es.cache_hit_rate : 0, es.cache_hit_rate >= 0};
	int64_t rows_all = es.rows_read;
	if ((st = burrow_mpi_allreduce_f64(tm, 7, BURROW_REDUCE_MAX)) < 0 ||
	    (st = burrow_mpi_allreduce_f64(hs, 2, BURROW_REDUCE_SUM)) < 0 ||
	    (st = burrow_mpi_allreduce_i64(&rows_all, 1, BURROW_REDUCE_SUM)) < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	if (r->rank == 0 && (st = dist_report(r, e, &es, &ev, tm, hs, rows_all)))
		return st;
	if (r->a.ckpt) {
		const char *where = r->rank == 0 ? r->last : r->a.ckpt;
		if ((eval && burrow_dist_best(r->d).epoch == e &&
		     (st = burrow_dist_save(r->d, r->rank == 0 ? r->best : r->a.ckpt)) < 0) ||
		    (train_cli_save_last(e, r->o.train.epochs, r->a.ckpt_every, r->a.best_only) &&
		     (st = burrow_dist_save(r->d, where)) < 0))
			return fail_all(r->rank, cli_lib_message("train", st));
	}
	return 0;
}

/* The run's last line and --log object: the best evaluation and whether every rank holds the
 * same weights (EXIT_FAIL when not, said after the job's end). */
static int dist_finish(dist_run *r, bool *all_same)
{
	burrow_best b = burrow_dist_best(r->d);
	uint64_t sum = burrow_dist_weights_checksum(r->d), sum0 = sum;
	int st = burrow_mpi_bcast(&sum0, sizeof sum0, 0);
	if (st < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	int64_t same = sum == sum0;
	if ((st = burrow_mpi_allreduce_i64(&same, 1, BURROW_REDUCE_MIN)) < 0)
		return fail_all(r->rank, cli_lib_message("train", st));
	*all_same = same;
	if (r->rank == 0) {
		char line[4400]; /* holds a checkpoint path */
		printf("%s (%d ranks, weights %s on every rank, checksum %016llx)%s\n",
		       train_cli_result(line, sizeof line, &b, r->trained, r->done, r->o.train.epochs,
					r->a.resume ? r->last : NULL),
		       burrow_dist_size(r->d), same ? "equal" : "DIFFERENT", (unsigned long long)sum,
		       train_cli_stopped(r->stopped, r->o.train.patience));
		if (r->lf) {
			const int bad = train_cli_log_final(r->lf, &b, burrow_dist_epoch(r->d), r->trained,
							    cli_now() - r->start, sum, burrow_dist_size(r->d), same);
			const int closed = fclose(r->lf);
			r->lf = NULL;
			if (closed != 0 || bad)
				return cli_fail("train", "%s", log_failed(r->a.log));
		}
	}
	return 0;
}

/* Undo what the phases after MPI's start acquired; safe on a run that stopped in any of them. */
static void dist_run_close(dist_run *r)
{
	if (r->lf)
		fclose(r->lf);
	free(r->last);
	free(r->best);
	burrow_dist_close(r->d);
	burrow_mpi_stop();
}

int cmd_train_dist(int argc, char **argv)
{
	dist_run r = {.d = NULL, .argc = argc, .argv = argv};
	int rc = dist_parse(&r, argc, argv);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	r.start = cli_now();
	int st = burrow_mpi_start(&r.rank, &r.size);
	if (st < 0)
		return cli_lib_fail("train", st);
	bool all_same = false;
	if (!(rc = dist_open(&r)) && !(rc = dist_banner(&r)))
		for (int e = r.done + 1; e <= r.o.train.epochs && !rc; e++, r.trained++) {
			if (burrow_dist_should_stop(r.d)) { /* --patience ran out: every rank agrees */
				r.stopped = e - 1;
				break;
			}
			rc = dist_epoch(&r, e);
		}
	if (!rc)
		rc = dist_finish(&r, &all_same);
	dist_run_close(&r);
	if (!rc && !all_same) {
		if (r.rank == 0)
			fprintf(stderr, "burrow: train: the model replicas differ across ranks\n");
		return EXIT_FAIL;
	}
	return rc;
}
