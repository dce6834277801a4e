/* cmd_train_dist.c: mpirun -np K burrow train DIR/parts-K: partition-parallel training, one
 * rank per part, mini-batch (default) or full-graph (burrow.c routes `train` here when DIR is
 * a parts directory); its options are burrow train's (train_opts.c). */
#define _GNU_SOURCE
#include "cli.h"
#include "train_cli.h"
#include "train_opts.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Is this process rank 0 of its job, or not started by mpirun? Read before MPI starts from the
 * launchers' environment (Open MPI, PMIx, MPICH's PMI), so that a usage error prints once. */
static bool first_rank(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
		const char *v = getenv(vars[i]);
		if (v)
			return atoi(v) == 0;
	}
	return true;
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

int cmd_train_dist(int argc, char **argv)
{
	train_args a;
	int rc = train_args_parse(argc, argv, TRAIN_DIST, first_rank(), &a);
	if (rc > 0 && !first_rank())
		sleep(2); /* mpirun ends the job at the first non-zero exit: let rank 0 print the usage line first */
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	burrow_dist_opts o = a.d;
	int st = burrow_dist_check(&o); /* what no rank can serve: said once, before MPI starts */
	if (st < 0) {
		if (first_rank())
			return cli_lib_fail("train", st);
		sleep(2); /* mpirun ends the job at the first non-zero exit: let rank 0 say why first */
		return EXIT_FAIL;
	}
	const char *log = a.log, *dir = a.dir;
	const double start = cli_now();
	int rank = 0, size = 1;
	if ((st = burrow_mpi_start(&rank, &size)) < 0)
		return cli_lib_fail("train", st);
	burrow_dist *d;
	st = burrow_dist_open(&d, dir, &o);
	if (st < 0)
		return fail_all(rank, cli_lib_message("train", st));
	/* checkpoints: rank 0 keeps the directory (the other ranks need not see it) */
	char *last = NULL, *best = NULL;
	int ck_ok = 1;
	if (a.ckpt && rank == 0)
		ck_ok = train_cli_checkpoint_dir("train", a.ckpt, a.resume, &last, &best, NULL) == 0;
	if ((st = burrow_mpi_bcast(&ck_ok, sizeof ck_ok, 0)) < 0)
		return fail_all(rank, cli_lib_message("train", st));
	if (!ck_ok) {
		burrow_dist_close(d);
		burrow_mpi_stop();
		return EXIT_FAIL;
	}
	if (a.resume) {
		if ((st = burrow_dist_load(d, last ? last : a.ckpt)) < 0)
			return fail_all(rank, cli_lib_message("train", st));
		if (rank == 0)
			fprintf(stderr, "burrow: train: resumed %s after epoch %d\n", last, burrow_dist_epoch(d));
	}
	FILE *lf = NULL;
	if (rank == 0 && log && !(lf = train_cli_log_open(log, a.resume, burrow_dist_epoch(d))))
		return fail_all(rank, "cannot open the --log file");
	/* the compute threads per rank: the same on every rank unless the nodes differ */
	int64_t thr_min[2] = {burrow_dist_threads(d), -burrow_dist_threads(d)};
	if ((st = burrow_mpi_allreduce_i64(thr_min, 2, BURROW_REDUCE_MIN)) < 0)
		return fail_all(rank, cli_lib_message("train", st));
	char threads[64];
	if (thr_min[0] == -thr_min[1])
		snprintf(threads, sizeof threads, "%d thread%s per rank", (int)thr_min[0], thr_min[0] == 1 ? "" : "s");
	else
		snprintf(threads, sizeof threads, "%d to %d threads per rank", (int)thr_min[0], (int)-thr_min[1]);
	snprintf(threads + strlen(threads), sizeof threads - strlen(threads), ", comm %s",
		 burrow_comm_name(burrow_dist_comm(d)));
	if (strcmp(burrow_dist_sampler_device(d), "cpu")) /* draws on a GPU: say where */
		snprintf(threads + strlen(threads), sizeof threads - strlen(threads), ", sampler %s",
			 burrow_dist_sampler_device(d));
	if (rank == 0) {
		if (o.train.full_graph) {
			printf("burrow train: %s, full graph, %d ranks, %s\n", burrow_model_name(o.train.model),
			       burrow_dist_size(d), threads);
		} else {
			char fan[128] = "";
			for (int l = 0; l < o.train.layers; l++) {
				snprintf(fan + strlen(fan), sizeof fan - strlen(fan), "%s%d", l ? "," : "",
					 burrow_train_fanout(&o.train, l));
			}
			printf("burrow train: %s, mini-batch, %d ranks, batch %lld per rank, fanout %s, prefetch %d, %s\n",
			       burrow_model_name(o.train.model), burrow_dist_size(d), (long long)o.train.batch_size, fan,
			       o.train.prefetch, threads);
		}
	}
	const int done = burrow_dist_epoch(d); /* epochs trained before this run */
	int trained = 0;
	if (rank == 0 && done < o.train.epochs) /* a table only when there will be rows */
		printf("%5s %9s %9s %9s %8s %8s %8s %8s\n", "epoch", "loss", "train", "valid", "epoch_s", "comm_s",
		       "exposed", "eval_s");
	for (int e = done + 1; e <= o.train.epochs; e++, trained++) {
		burrow_epoch_stats es = {.size = sizeof es};
		burrow_comm_stats cs = {.size = sizeof cs};
		burrow_eval_stats ev = {.size = sizeof ev, .valid_acc = -1, .test_acc = -1};
		if ((st = burrow_dist_train_epoch(d, &es, &cs)) < 0)
			return fail_all(rank, cli_lib_message("train", st));
		const bool eval = a.every > 0 && (e % a.every == 0 || e == o.train.epochs);
		if (eval && (st = burrow_dist_evaluate(d, &ev)) < 0)
			return fail_all(rank, cli_lib_message("train", st));
		/* the slowest rank's times are the epoch's; rows read add up; the hit rate is the
		 * ranks' mean (-1 where a rank counted none) */
		double tm[8] = {es.epoch_s, cs.comm_s, cs.exposed_comm_s, ev.eval_s, es.sample_s, es.io_wait_s, es.compute_s};
		double hs[2] = {es.cache_hit_rate >= 0 ? es.cache_hit_rate : 0, es.cache_hit_rate >= 0};
		int64_t rows_all = es.rows_read;
		if ((st = burrow_mpi_allreduce_f64(tm, 7, BURROW_REDUCE_MAX)) < 0 ||
		    (st = burrow_mpi_allreduce_f64(hs, 2, BURROW_REDUCE_SUM)) < 0 ||
		    (st = burrow_mpi_allreduce_i64(&rows_all, 1, BURROW_REDUCE_SUM)) < 0)
			return fail_all(rank, cli_lib_message("train", st));
		if (rank == 0) {
			char tr[16], va[16];
			printf("%5d %9.4f %s %s %8.3f %8.3f %8.3f %8.3f\n", e, es.loss,
			       train_cli_num(tr, sizeof tr, 9, 4, 1, "", es.train_acc),
			       train_cli_num(va, sizeof va, 9, 4, 1, "", ev.valid_acc), tm[0], tm[1], tm[2], tm[3]);
			if (lf) {
				burrow_epoch_stats all = es;
				all.epoch = e;
				all.epoch_s = tm[0];
				all.sample_s = tm[4];
				all.io_wait_s = tm[5];
				all.compute_s = tm[6];
				all.rows_read = rows_all;
				all.cache_hit_rate = hs[1] > 0 ? hs[0] / hs[1] : -1;
				burrow_eval_stats eall = ev;
				eall.eval_s = tm[3];
				burrow_comm_stats call = {.size = sizeof call, .comm_s = tm[1], .exposed_comm_s = tm[2]};
				if (train_cli_log_epoch(lf, &all, &eall, burrow_dist_size(d), &call) != 0)
					return fail_all(rank, log_failed(log));
			}
			fflush(stdout);
		}
		if (a.ckpt) { /* collective: rank 0 writes, every rank learns how it went */
			const char *where = rank == 0 ? last : a.ckpt;
			if ((eval && burrow_dist_best(d).epoch == e && (st = burrow_dist_save(d, rank == 0 ? best : a.ckpt)) < 0) ||
			    (st = burrow_dist_save(d, where)) < 0)
				return fail_all(rank, cli_lib_message("train", st));
		}
	}
	burrow_best b = burrow_dist_best(d);
	uint64_t sum = burrow_dist_weights_checksum(d), sum0 = sum;
	if ((st = burrow_mpi_bcast(&sum0, sizeof sum0, 0)) < 0)
		return fail_all(rank, cli_lib_message("train", st));
	int64_t all_same = sum == sum0;
	if ((st = burrow_mpi_allreduce_i64(&all_same, 1, BURROW_REDUCE_MIN)) < 0)
		return fail_all(rank, cli_lib_message("train", st));
	if (rank == 0) {
		char line[4400]; /* holds a checkpoint path */
		printf("%s (%d ranks, weights %s on every rank, checksum %016llx)\n",
		       train_cli_result(line, sizeof line, &b, trained, done, o.train.epochs, a.resume ? last : NULL),
		       burrow_dist_size(d), all_same ? "equal" : "DIFFERENT", (unsigned long long)sum);
		if (lf) {
			const int bad = train_cli_log_final(lf, &b, burrow_dist_epoch(d), trained, cli_now() - start, sum,
							    burrow_dist_size(d), all_same);
			if (fclose(lf) != 0 || bad)
				rc = cli_fail("train", "%s", log_failed(log));
		}
	}
	free(last);
	free(best);
	burrow_dist_close(d);
	burrow_mpi_stop();
	if (!all_same) {
		if (rank == 0)
			fprintf(stderr, "burrow: train: the model replicas differ across ranks\n");
		return EXIT_FAIL;
	}
	return rc;
}
