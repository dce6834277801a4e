/* cmd_bench.c: burrow bench <what>: the project's benchmarks, one file each (tools/bench_*.c). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

/* Each benchmark: argv[0] is its name ("io", "sample", ...). Register new ones below. */
typedef struct bench_entry {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
} bench_entry;

int bench_gemm(int argc, char **argv);
int bench_halo(int argc, char **argv);
int bench_io(int argc, char **argv);
int bench_loader(int argc, char **argv);
int bench_prep(int argc, char **argv);
int bench_sample(int argc, char **argv);
int bench_train(int argc, char **argv);

static const bench_entry BENCHES[] = {
	{"halo", "distributed full-graph epochs, halo exchange overlapped vs serialized (mpirun)", bench_halo},
	{"io", "feature gathers per engine (uring, pread, mmap), cold, against fio", bench_io},
	{"loader", "the data loader loop driven from C: sample, gather, release (anchor of python -m burrow.bench)",
	 bench_loader},
	{"prep", "burrow prep on a generated OGB-style zip against zcat; bounded memory", bench_prep},
	{"sample", "neighbor sampling: batches/s, sampled edges/s, scaling over threads", bench_sample},
	{"train", "a mini-batch epoch from disk against the same in memory and its I/O alone", bench_train},
	{"gemm", "the CPU's float32 GEMM rate at training's shapes: the backend's product and cblas_sgemm", bench_gemm},
	{NULL, NULL, NULL}, /* keeps the table non-empty; entries go above this line */
};

static void help(FILE *f)
{
	fprintf(f, "usage: burrow bench <what> [options]   (burrow bench <what> --help)\n\n"
		   "Benchmarks print ratios against an anchor measured in the same run.\n");
	for (size_t i = 0; BENCHES[i].name; i++)
		fprintf(f, "  %-8s %s\n", BENCHES[i].name, BENCHES[i].summary);
}

int cmd_bench(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		help(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	for (size_t i = 0; BENCHES[i].name; i++)
		if (!strcmp(argv[1], BENCHES[i].name))
			return BENCHES[i].run(argc - 1, argv + 1);
	return cli_usage("bench", "unknown benchmark '%s'", argv[1]);
}
