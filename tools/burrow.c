/* burrow.c: the burrow command: dispatch to one subcommand per file (tools/cmd_*.c). */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cmd_bench(int argc, char **argv);
int cmd_datasets(int argc, char **argv);
int cmd_download(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_prep(int argc, char **argv);
int cmd_embed(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_partition(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_train_dist(int argc, char **argv);
int cmd_reorder(int argc, char **argv);

static const cli_cmd COMMANDS[] = {
	{"gen", "generate a synthetic dataset (csbm, rmat)", cmd_gen},
	{"info", "describe a dataset directory", cmd_info},
	{"datasets", "list the OGB datasets burrow knows, with the disk space they need", cmd_datasets},
	{"download", "download a dataset's zip (resumable)", cmd_download},
	{"prep", "turn an OGB dataset (name, zip or folder) into a dataset directory", cmd_prep},
	{"import", "turn your own edge list, features, labels and splits into a dataset directory", cmd_import},
	{"train", "train a GNN (sage, gcn, gat, mlp; rgcn, rsage, rgat) and report OGB accuracy", cmd_train},
	{"eval", "accuracy of a checkpointed model", cmd_eval},
	{"embed", "a layer's outputs (the logits by default) of a checkpointed model for every node", cmd_embed},
	{"predict", "classes or class probabilities of a checkpointed model, per node", cmd_predict},
	{"report", "an HTML report (inline SVG charts) of burrow train --log files", cmd_report},
	{"partition", "split a dataset into K parts with halos (METIS)", cmd_partition},
	{"bench", "benchmarks: ratios against anchors measured in the same run", cmd_bench},
	{"reorder", "renumber a dataset's nodes in a locality order (bfs, degree, rcm)", cmd_reorder},
};
#define NCOMMANDS (sizeof COMMANDS / sizeof COMMANDS[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: burrow <command> [options]\n"
		   "       burrow <command> --help\n"
		   "       burrow --version\n\n"
		   "Out-of-core graph neural network training. Commands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
	fprintf(f, "\nExit status: 0 success, 1 failure, 2 usage error, 130 / 143 interrupted (SIGINT /\n"
		   "SIGTERM: the command's temporary outputs are removed).\n");
}

/* Is one of the arguments a parts directory (meta.json of format "burrow-parts")? Then
 * `train` is partition-parallel training under mpirun. */
static bool names_parts_dir(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (argv[i][0] != '-' && cli_is_parts_dir(argv[i]))
			return true;
	return false;
}

/* A command's exit code, or 1 with one line when what it printed to standard output did not
 * all arrive (a full disk under `burrow bench io --json > out`), which exit would not say. */
static int stdout_flushed(const char *cmd, int rc)
{
	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return rc;
	fprintf(stderr, "burrow: %s: standard output: write failed: %s\n", cmd, strerror(errno ? errno : EIO));
	return rc == EXIT_OK ? EXIT_FAIL : rc;
}

int main(int argc, char **argv)
{
	cli_env(argv);
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			for (size_t i = 0; i < NCOMMANDS; i++)
				if (!strcmp(argv[2], COMMANDS[i].name)) {
					char *hargv[] = {argv[2], "--help", NULL};
					return COMMANDS[i].run(2, hargv);
				}
			fprintf(stderr, "burrow: help: unknown command '%s'\n", argv[2]);
			return EXIT_USAGE;
		}
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V")) {
		int n = burrow_cuda_device_count();
		printf("burrow %s (dataset formats %d and %d, typed; %s)\n", burrow_version(), BURROW_DATASET_FORMAT_VERSION,
		       BURROW_DATASET_FORMAT_TYPED,
		       n == BURROW_E_UNSUPPORTED ? "CPU build" : "CUDA build");
		printf("devices: cpu");
		for (int i = 0; i < n; i++) {
			char d[160];
			if (burrow_cuda_device_describe(i, d, sizeof d) == 0)
				printf(", %s", d);
		}
		printf(n == BURROW_E_UNSUPPORTED ? "\n" : n > 0 ? "\n" : " (no CUDA GPU seen)\n");
		return EXIT_OK;
	}
	/* past a file size limit, let write() fail with EFBIG so the error is reported and the
	 * temporary output removed, instead of the process being killed half-way */
	signal(SIGXFSZ, SIG_IGN);
	/* BURROW_DEBUG=1 in the environment: the library's debug lines too (per-pass details) */
	const char *dbg = getenv("BURROW_DEBUG");
	burrow_log_set(cli_log, NULL, dbg && *dbg && strcmp(dbg, "0") ? BURROW_LOG_DEBUG : BURROW_LOG_INFO);
	int rank, size = cli_launcher_size(&rank);
	/* Ctrl-C, SIGTERM: remove the temporary outputs, one line (from rank 0), exit 130 / 143 */
	cli_interrupts_init(cmd, rank != 0);
	if (!strcmp(cmd, "train") && names_parts_dir(argc - 1, argv + 1))
		return stdout_flushed(cmd, cmd_train_dist(argc - 1, argv + 1));
	if (size > 1 && !strcmp(cmd, "train")) {
		/* every rank would do all of the work and write the same files */
		if (rank == 0)
			fprintf(stderr,
				"burrow: train: started as one of %d MPI ranks on a plain dataset; under mpirun train "
				"takes a parts directory (burrow partition DIR --parts %d, then mpirun -np %d burrow "
				"train DIR/parts-%d)\n",
				size, size, size, size);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(cmd, COMMANDS[i].name))
			return stdout_flushed(cmd, COMMANDS[i].run(argc - 1, argv + 1));
	fprintf(stderr, "burrow: unknown command '%s' (see 'burrow --help')\n", cmd);
	return EXIT_USAGE;
}
