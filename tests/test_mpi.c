/* test_mpi.c: MPI programs run under mpirun with several ranks (the programs in tests/mpi/). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "util.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cli_time(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

TestSuite(mpi, .timeout = 120);

/* mpirun as a user would, allowing root (CI runs as root) and more ranks than cores. Under
 * AddressSanitizer, leak detection is off for the ranks: Open MPI's plugins leak at exit
 * from modules already unloaded, which no suppression can name; memory errors still abort. */
#define MPIRUN                                                                                       \
	"ASAN_OPTIONS=\"${ASAN_OPTIONS}:detect_leaks=0\" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " \
	"OMPI_MCA_rmaps_base_oversubscribe=1 mpirun"

static const char *prog(const char *name)
{
	static char path[4096];
	const char *b = getenv("BURROW_BUILD");
	snprintf(path, sizeof path, "%s/tests/%s", b && *b ? b : "build", name);
	return path;
}

Test(mpi, halo_exchange_forward_and_backward)
{
	const int ranks[] = {2, 4};
	for (int i = 0; i < 2; i++) {
		char *out, *err;
		int rc = tu_sh(&out, &err, MPIRUN " -np %d %s", ranks[i], prog("halo_check"));
		cr_assert_eq(rc, 0, "-np %d exited %d:\n%s\n%s", ranks[i], rc, out, err);
		int ok = 0;
		for (char *p = out; (p = strstr(p, " ok (")); p++)
			ok++;
		cr_assert_eq(ok, ranks[i], "-np %d: %d ranks reported ok:\n%s", ranks[i], ok, out);
		free(out);
		free(err);
	}
}

/* Partition-parallel full-graph training equals the single-process computation, at 2 and
 * 4 ranks (the program checks itself and exits 0 only when every check holds). */
Test(mpi, distributed_full_graph_equals_single_process)
{
	const int ranks[] = {2, 4};
	for (int i = 0; i < 2; i++) {
		char *dir = tu_tmpdir(), *out, *err;
		int rc = tu_sh(&out, &err, MPIRUN " -np %d %s %s", ranks[i], prog("dist_check"), dir);
		cr_assert_eq(rc, 0, "-np %d exited %d:\n%s\n%s", ranks[i], rc, out, err);
		cr_assert(strstr(out, "gcn: logits and gradients match") && strstr(out, "sage: logits and gradients match") &&
				  strstr(out, "stale halos, boundary sample 1: replicas identical") &&
				  strstr(out, "exact halos, boundary sample 0.5: replicas identical"),
			  "%s", out);
		free(out);
		free(err);
		tu_rmrf(dir);
		free(dir);
	}
}

/* Distributed mini-batch mode at 1, 2 and 4 ranks: sampled blocks are true neighbors of the
 * unpartitioned graph with min(fanout, degree) per row, the input rows equal the features,
 * an all-neighbor step equals the full-graph step, replicas stay identical (the program
 * checks itself and exits 0 only when every check holds). */
Test(mpi, distributed_minibatch)
{
	const int ranks[] = {1, 2, 4};
	for (int i = 0; i < 3; i++) {
		char *dir = tu_tmpdir(), *out, *err;
		int rc = tu_sh(&out, &err, MPIRUN " -np %d %s %s", ranks[i], prog("distmb_check"), dir);
		cr_assert_eq(rc, 0, "-np %d exited %d:\n%s\n%s", ranks[i], rc, out, err);
		cr_assert(strstr(out, "gcn: sampled blocks are true neighbors") &&
				  strstr(out, "sage: sampled blocks are true neighbors") &&
				  strstr(out, "gcn: an all-neighbor step equals the full-graph step") &&
				  strstr(out, "sage: an all-neighbor step equals the full-graph step") &&
				  strstr(out, "replicas identical after 3 mini-batch epochs"),
			  "%s", out);
		free(out);
		free(err);
		tu_rmrf(dir);
		free(dir);
	}
}

/* burrow train under mpirun: the epoch table and equal replicas; a rank whose part is
 * missing ends every rank, non-zero, with its message, well within 10 seconds. */
Test(mpi, train_cli_and_a_failing_rank)
{
	char *dir = tu_tmpdir(), *out, *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s/g --nodes 800 --feat-dim 8 --classes 3 --quiet && "
				       "%s partition %s/g --parts 2 --quiet",
			   tu_burrow(), dir, tu_burrow(), dir),
		     0, "%s", err);
	free(err);
	int rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --epochs 3 --hidden 16 --threads 1", tu_burrow(), dir);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "mini-batch, 2 ranks") && strstr(out, "weights equal on every rank"), "%s", out);
	free(out);
	free(err);
	rc = tu_sh(&out, &err,
		   MPIRUN " -np 2 %s train %s/g/parts-2 --epochs 2 --fanout 4,-1 --batch 32 --prefetch 0 "
			  "--hidden 16 --threads 1",
		   tu_burrow(), dir);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	/* the fanout list alone sets the number of layers (2) */
	cr_assert(strstr(out, "fanout 4,-1, prefetch 0") && strstr(out, "weights equal on every rank"), "%s", out);
	free(out);
	free(err);
	rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --full-graph --epochs 2 --hidden 16 --threads 1",
		   tu_burrow(), dir);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "full graph, 2 ranks") && strstr(out, "weights equal on every rank"), "%s", out);
	free(out);
	free(err);
	rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --layers 3 --fanout 4,4 --threads 1", tu_burrow(), dir);
	cr_assert_eq(rc, 2, "%s\n%s", out, err);
	cr_assert(strstr(err, "--fanout 4,4 has 2 values but --layers is 3"), "%s", err);
	free(out);
	free(err);
	rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --halo stale --threads 1", tu_burrow(), dir);
	cr_assert_eq(rc, 2, "%s\n%s", out, err);
	cr_assert(strstr(err, "--halo applies to --full-graph training"), "%s", err);
	free(out);
	free(err);
	rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --full-graph --halo stale --boundary-sample 0.5",
		   tu_burrow(), dir);
	cr_assert_eq(rc, 2, "%s\n%s", out, err);
	cr_assert(strstr(err, "--boundary-sample and --halo stale do not combine"), "%s", err);
	free(out);
	free(err);
	/* the wrong number of ranks */
	rc = tu_sh(&out, &err, MPIRUN " -np 3 %s train %s/g/parts-2 --epochs 1 --threads 1", tu_burrow(), dir);
	cr_assert_neq(rc, 0);
	cr_assert(strstr(err, "holds 2 parts, but 3 ranks were started"), "%s", err);
	free(out);
	free(err);
	/* part 1 missing: rank 1 fails, every rank ends */
	tu_sh(NULL, NULL, "rm -rf %s/g/parts-2/part-1", dir);
	double t0 = cli_time();
	rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --epochs 50 --threads 1", tu_burrow(), dir);
	double dt = cli_time() - t0;
	cr_assert_neq(rc, 0);
	cr_assert(strstr(err, "burrow: train: rank 1:") && strstr(err, "part-1"), "%s", err);
	cr_assert(dt < 10, "took %.1f s", dt);
	free(out);
	free(err);
	tu_rmrf(dir);
	free(dir);
}

/* The default compute threads per rank are the node's CPUs divided by its ranks (at least
 * 1): at 1, 2 and 4 ranks on this machine (not bound by mpirun, so every rank may run on
 * every CPU the test may), each rank reports the ranks on its node and the CPUs they share
 * (BURROW_DEBUG), and rank 0's banner the threads; --threads wins. */
Test(mpi, default_threads_share_the_node)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	cr_assert_eq(sched_getaffinity(0, sizeof set, &set), 0);
	const int cpus = CPU_COUNT(&set);
	char *dir = tu_tmpdir(), *out, *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s/g --nodes 400 --feat-dim 8 --classes 3 --quiet && "
				       "for k in 1 2 4; do %s partition %s/g --parts $k --quiet || exit 1; done",
			   tu_burrow(), dir, tu_burrow(), dir),
		     0, "%s", err);
	free(err);
	const int ranks[] = {1, 2, 4};
	for (int i = 0; i < 3; i++) {
		const int k = ranks[i], want = cpus / k > 1 ? cpus / k : 1;
		int rc = tu_sh(&out, &err,
			       "BURROW_DEBUG=1 " MPIRUN " --bind-to none -np %d %s train %s/g/parts-%d --epochs 1 --hidden 8",
			       k, tu_burrow(), dir, k);
		cr_assert_eq(rc, 0, "-np %d: %s\n%s", k, out, err);
		char line[160];
		snprintf(line, sizeof line, "%d ranks, batch 1024 per rank, fanout 15,10,5, prefetch 2, %d thread%s per rank\n",
			 k, want, want == 1 ? "" : "s");
		cr_assert(strstr(out, line), "-np %d on %d CPUs: want '%s' in\n%s", k, cpus, line, out);
		for (int r = 0; r < k; r++) {
			snprintf(line, sizeof line, "train: rank %d: %d compute threads (%d CPUs for %d ranks on this node", r,
				 want, cpus, k);
			cr_assert(strstr(err, line), "-np %d: want '%s' in\n%s", k, line, err);
		}
		free(out);
		free(err);
	}
	int rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --full-graph --epochs 1 --hidden 8 --threads 3",
		       tu_burrow(), dir);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "full graph, 2 ranks, 3 threads per rank\n"), "%s", out);
	free(out);
	free(err);
	tu_rmrf(dir);
	free(dir);
}

/* The checksum of the weights from the run's last line. */
static char *checksum_of(const char *out)
{
	const char *p = strstr(out, "checksum ");
	cr_assert(p, "%s", out);
	return strndup(p + 9, 16);
}

/* --checkpoint / --resume under mpirun: 2 epochs, then 2 more resumed, end with the very
 * weights of 4 epochs in one go, in both modes; rank 0 keeps the files; misuse is refused. */
Test(mpi, checkpoint_and_resume_are_bit_for_bit)
{
	char *dir = tu_tmpdir(), *out, *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s/g --nodes 600 --feat-dim 8 --classes 3 --quiet && "
				       "%s partition %s/g --parts 2 --quiet",
			   tu_burrow(), dir, tu_burrow(), dir),
		     0, "%s", err);
	free(err);
	const char *modes[2] = {"--batch 64", "--full-graph"};
	for (int m = 0; m < 2; m++) {
		const char *run = MPIRUN " -np 2 %s train %s/g/parts-2 %s --hidden 16 --threads 1 --checkpoint %s/%s";
		char *cmd;
		cr_assert(asprintf(&cmd, run, tu_burrow(), dir, modes[m], dir, m ? "a2" : "a1") > 0);
		int rc = tu_sh(&out, &err, "%s --epochs 4", cmd);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		char *whole = checksum_of(out);
		free(out);
		free(err);
		free(cmd);
		cr_assert(asprintf(&cmd, run, tu_burrow(), dir, modes[m], dir, m ? "b2" : "b1") > 0);
		rc = tu_sh(&out, &err, "%s --epochs 2", cmd);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		free(out);
		free(err);
		/* starting afresh over a checkpoint is refused */
		rc = tu_sh(&out, &err, "%s --epochs 4", cmd);
		cr_assert_eq(rc, 1, "%s\n%s", out, err);
		cr_assert(strstr(err, "already holds a checkpoint"), "%s", err);
		free(out);
		free(err);
		rc = tu_sh(&out, &err, "%s --epochs 4 --resume", cmd);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		cr_assert(strstr(err, "resumed") && strstr(err, "after epoch 2"), "%s", err);
		char *resumed = checksum_of(out);
		cr_assert_str_eq(resumed, whole, "%s: 2 + 2 epochs end with %s, 4 epochs with %s", modes[m], resumed, whole);
		free(resumed);
		free(whole);
		free(out);
		free(err);
		free(cmd);
	}
	/* resuming from nothing */
	int rc = tu_sh(&out, &err, MPIRUN " -np 2 %s train %s/g/parts-2 --checkpoint %s/none --resume", tu_burrow(), dir, dir);
	cr_assert_eq(rc, 1, "%s\n%s", out, err);
	cr_assert(strstr(err, "no checkpoint to resume from"), "%s", err);
	free(out);
	free(err);
	tu_rmrf(dir);
	free(dir);
}

/* The distributed table and log print an absent measurement as "-" and null: epochs not
 * evaluated, and an empty valid split (whose best is the last evaluation). */
Test(mpi, train_cli_absent_measurements)
{
	char *dir = tu_tmpdir(), *out, *err;
	cr_assert_eq(tu_sh(NULL, &err,
			   "%s gen csbm %s/g --nodes 600 --feat-dim 8 --classes 3 --quiet && rm %s/g/split/valid.npy && "
			   "sed -i 's/\"valid\":\t[0-9]*/\"valid\":\t0/' %s/g/meta.json && %s partition %s/g --parts 2 --quiet",
			   tu_burrow(), dir, dir, dir, tu_burrow(), dir),
		     0, "%s", err);
	free(err);
	const char *modes[2] = {"--batch 64", "--full-graph"};
	for (int m = 0; m < 2; m++) {
		int rc = tu_sh(&out, &err,
			       MPIRUN " -np 2 %s train %s/g/parts-2 %s --epochs 3 --eval-every 2 --hidden 16 --threads 1 "
				      "--log %s/l%d.jsonl",
			       tu_burrow(), dir, modes[m], dir, m);
		cr_assert_eq(rc, 0, "%s\n%s", out, err);
		cr_assert(!strstr(out, "-1.0"), "a number for an absent value:\n%s", out);
		for (int e = 1; e <= 3; e++) {
			char head[16];
			snprintf(head, sizeof head, "\n%5d ", e);
			const char *line = strstr(out, head);
			cr_assert(line, "%s", out);
			char valid[16];
			cr_assert_eq(sscanf(line, "%*d %*f %*s %15s", valid), 1, "%s", out);
			cr_assert_str_eq(valid, "-", "epoch %d:\n%s", e, out);
		}
		cr_assert(strstr(out, "no valid split: test accuracy 0.") && strstr(out, "at epoch 3, the last evaluation (2 ranks"),
			  "%s", out);
		char *log;
		cr_assert(asprintf(&log, "%s/l%d.jsonl", dir, m) > 0);
		char *text = tu_read(log, NULL);
		cr_assert(text, "%s", log);
		cr_assert(!strstr(text, "-1"), "a number for an absent value in the log:\n%s", text);
		cr_assert(strstr(text, "\"valid_acc\": null, \"test_acc\": null"), "%s", text);
		cr_assert(strstr(text, "{\"final\": true, \"best_epoch\": 3, \"valid_acc\": null, \"test_acc\": 0."), "%s", text);
		free(text);
		free(log);
		free(out);
		free(err);
	}
	tu_rmrf(dir);
	free(dir);
}

/* Every distributed run ends with a final line and the log's final object: --epochs 0 and a
 * resume with no epoch left say that nothing was trained. */
Test(mpi, train_cli_final_line_when_nothing_is_trained)
{
	char *dir = tu_tmpdir(), *out, *err;
	cr_assert_eq(tu_sh(NULL, &err, "%s gen csbm %s/g --nodes 400 --feat-dim 8 --classes 3 --quiet && "
				       "%s partition %s/g --parts 2 --quiet",
			   tu_burrow(), dir, tu_burrow(), dir),
		     0, "%s", err);
	free(err);
	const char *run = MPIRUN " -np 2 %s train %s/g/parts-2 --hidden 8 --threads 1 --log %s/l.jsonl %s";
	int rc = tu_sh(&out, &err, run, tu_burrow(), dir, dir, "--epochs 0");
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	cr_assert(strstr(out, "\nnothing trained: --epochs 0 (2 ranks, weights equal on every rank"), "%s", out);
	char *path, *text;
	cr_assert(asprintf(&path, "%s/l.jsonl", dir) > 0);
	cr_assert((text = tu_read(path, NULL)));
	cr_assert(strstr(text, "{\"final\": true, \"best_epoch\": null,") && strstr(text, "\"epochs\": 0, \"trained\": 0,"),
		  "%s", text);
	free(text);
	free(out);
	free(err);
	char *ck;
	cr_assert(asprintf(&ck, "--checkpoint %s/ck --epochs 2", dir) > 0);
	rc = tu_sh(&out, &err, run, tu_burrow(), dir, dir, ck);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	free(out);
	free(err);
	free(ck);
	cr_assert(asprintf(&ck, "--checkpoint %s/ck --epochs 2 --resume", dir) > 0);
	rc = tu_sh(&out, &err, run, tu_burrow(), dir, dir, ck);
	cr_assert_eq(rc, 0, "%s\n%s", out, err);
	char want[256];
	snprintf(want, sizeof want, "\nnothing trained: %s/ck/last.ckpt already holds 2 epochs (--epochs 2); best valid 0.", dir);
	cr_assert(strstr(out, want), "%s\nlacks: %s", out, want);
	cr_assert((text = tu_read(path, NULL)));
	cr_assert(strstr(strrchr(text, '{'), "\"epochs\": 2, \"trained\": 0,"), "%s", text);
	free(text);
	free(out);
	free(err);
	free(ck);
	free(path);
	tu_rmrf(dir);
	free(dir);
}
