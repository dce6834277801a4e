/* bench_halo.c: burrow bench halo DIR/parts-K (under mpirun): full-graph epochs with the halo
 * exchange overlapped against the same epochs serialized (post, wait, then aggregate), in
 * one run, alternating, and the fraction of the communication the overlap hides. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <string.h>

/* Seconds this process has spent in the kernel (on loopback TCP, mostly copying the
 * exchanged bytes: work the computing cores must do, so overlap cannot hide it). */
static double sys_seconds(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (double)u.ru_stime.tv_sec + 1e-6 * (double)u.ru_stime.tv_usec;
}

static void help(void)
{
	printf("usage: mpirun -np K burrow bench halo DIR/parts-K [--epochs N] [--model M] [--hidden H]\n"
	       "                                      [--layers L] [--threads T] [--boundary-sample p] [--json]\n\n"
	       "Runs full-graph training epochs with the halo exchange overlapped with aggregation and\n"
	       "serialized (post, wait, then aggregate), alternating, after one warm-up epoch of each, and\n"
	       "prints the median epoch times (the slowest rank's), the communication time of the\n"
	       "serialized epochs, the exposed communication of the overlapped ones, and the hidden\n"
	       "fraction (serialized - overlapped) / serialized communication, and the kernel CPU time per\n"
	       "epoch (over loopback TCP the copies of the exchanged bytes: work the ranks' own cores\n"
	       "do, which no overlap can hide when they are busy). Defaults: 5 epochs each,\n"
	       "gcn, hidden 256, 2 layers; --boundary-sample p exchanges a fraction p of the boundary\n"
	       "(BNS-GCN) in both.\n");
}

int bench_halo(int argc, char **argv)
{
	static const struct option lo[] = {{"epochs", required_argument, 0, 'e'}, {"model", required_argument, 0, 'm'},
					   {"hidden", required_argument, 0, 'H'}, {"layers", required_argument, 0, 'L'},
					   {"threads", required_argument, 0, 't'}, {"json", no_argument, 0, 'j'},
					   {"help", no_argument, 0, 'h'},	     {"boundary-sample", required_argument, 0, 'b'},
					   {0, 0, 0, 0}};
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.model = BURROW_MODEL_GCN;
	o.train.layers = 2;
	o.train.hidden = 256;
	o.train.dropout = 0;
	int epochs = 5, c;
	bool json = false;
	int64_t v;
	while ((c = cli_getopt("bench halo", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h': help(); return EXIT_OK;
		case 'e':
			if (!cli_i64(optarg, &v) || v < 1 || v > 1000)
				return cli_usage("bench halo", "--epochs wants 1 to 1000, got '%s'", optarg);
			epochs = (int)v;
			break;
		case 'm':
			if (!(o.train.model = burrow_model_parse(optarg)))
				return cli_usage("bench halo", "--model wants sage, gcn or mlp, got '%s'", optarg);
			break;
		case 'H':
			if (!cli_i64(optarg, &v) || v < 1)
				return cli_usage("bench halo", "--hidden wants a positive integer, got '%s'", optarg);
			o.train.hidden = v;
			break;
		case 'L':
			if (!cli_i64(optarg, &v) || v < 2 || v > BURROW_MAX_LAYERS)
				return cli_usage("bench halo", "--layers wants 2 to %d, got '%s'", BURROW_MAX_LAYERS, optarg);
			o.train.layers = (int)v;
			break;
		case 't':
			if (!cli_i64(optarg, &v) || v < 1)
				return cli_usage("bench halo", "--threads wants a positive integer, got '%s'", optarg);
			o.train.threads = (int)v;
			break;
		case 'j': json = true; break;
		case 'b': {
			double f;
			if (!cli_f64(optarg, &f) || !(f > 0 && f <= 1))
				return cli_usage("bench halo", "--boundary-sample wants a fraction in (0, 1], got '%s'", optarg);
			o.boundary_sample = f;
			break;
		}
		default: break;
		}
	}
	if (argc - optind != 1)
		return cli_usage("bench halo", "expected one parts directory");
	int rank = 0, size = 1;
	if (burrow_mpi_start(&rank, &size) < 0) {
		fprintf(stderr, "burrow: bench halo: %s\n", burrow_last_error());
		return EXIT_FAIL;
	}
	burrow_dist *d[2] = {NULL, NULL}; /* [0] overlapped, [1] serialized: same seed, same model */
	for (int k = 0; k < 2; k++) {
		o.overlap = k == 0;
		if (burrow_dist_open(&d[k], argv[optind], &o) < 0) {
			fprintf(stderr, "burrow: bench halo: rank %d: %s\n", rank, burrow_last_error());
			burrow_mpi_abort(1);
		}
	}
	double *ep[2], *comm[2], *exp_[2], *sys[2], *prog[2];
	for (int k = 0; k < 2; k++) {
		sys[k] = calloc((size_t)epochs, sizeof(double));
		prog[k] = calloc((size_t)epochs, sizeof(double));
		ep[k] = calloc((size_t)epochs, sizeof(double));
		comm[k] = calloc((size_t)epochs, sizeof(double));
		exp_[k] = calloc((size_t)epochs, sizeof(double));
	}
	for (int e = -1; e < epochs; e++) {
		for (int k = 0; k < 2; k++) {
			burrow_epoch_stats es = {.size = sizeof es};
			burrow_comm_stats cs = {.size = sizeof cs};
			double s0 = 0;
			if (burrow_mpi_barrier() < 0 || ((s0 = sys_seconds()), burrow_dist_train_epoch(d[k], &es, &cs) < 0)) {
				fprintf(stderr, "burrow: bench halo: rank %d: %s\n", rank, burrow_last_error());
				burrow_mpi_abort(1);
			}
			double tm[5] = {es.epoch_s, cs.comm_s, cs.exposed_comm_s, sys_seconds() - s0, cs.progress_s};
			if (burrow_mpi_allreduce_f64(tm, 5, BURROW_REDUCE_MAX) < 0) {
				fprintf(stderr, "burrow: bench halo: rank %d: %s\n", rank, burrow_last_error());
				burrow_mpi_abort(1);
			}
			if (e >= 0) {
				ep[k][e] = tm[0];
				comm[k][e] = tm[1];
				exp_[k][e] = tm[2];
				sys[k][e] = tm[3];
				prog[k][e] = tm[4];
			}
		}
	}
	double ov = cli_median(ep[0], epochs), se = cli_median(ep[1], epochs), comm_se = cli_median(comm[1], epochs),
	       exp_ov = cli_median(exp_[0], epochs), exp_se = cli_median(exp_[1], epochs), comm_ov = cli_median(comm[0], epochs);
	double hidden = comm_se > 0 ? (se - ov) / comm_se : 0;
	double sys_ov = cli_median(sys[0], epochs), sys_se = cli_median(sys[1], epochs), prog_ov = cli_median(prog[0], epochs);
	if (rank == 0) {
		if (json)
			printf("{\"ranks\": %d, \"epochs\": %d, \"overlapped_epoch_s\": %.6f, \"serialized_epoch_s\": %.6f, "
			       "\"comm_s\": %.6f, \"exposed_comm_s\": %.6f, \"serialized_exposed_comm_s\": %.6f, "
			       "\"overlapped_comm_s\": %.6f, \"hidden_fraction\": %.4f, \"epoch_ratio\": %.4f, "
			       "\"serialized_sys_s\": %.6f, \"overlapped_sys_s\": %.6f, \"overlapped_progress_s\": %.6f}\n",
			       size, epochs, ov, se, comm_se, exp_ov, exp_se, comm_ov, hidden, se > 0 ? ov / se : 0, sys_se,
			       sys_ov, prog_ov);
		else
			printf("ranks %d, %d epochs each (medians, slowest rank)\n"
			       "  serialized  epoch %.4f s  communication %.4f s (exposed %.4f s)\n"
			       "  overlapped  epoch %.4f s  communication %.4f s (exposed %.4f s)\n"
			       "  overlapped / serialized epoch: %.3f; hidden fraction of communication: %.3f\n"
			       "  overlapped: %.4f s inside the test calls that drive the exchange during compute\n"
			       "  kernel CPU per epoch (slowest rank): serialized %.4f s, overlapped %.4f s\n",
			       size, epochs, se, comm_se, exp_se, ov, comm_ov, exp_ov, se > 0 ? ov / se : 0, hidden, prog_ov,
			       sys_se, sys_ov);
	}
	for (int k = 0; k < 2; k++) {
		burrow_dist_close(d[k]);
		free(ep[k]);
		free(comm[k]);
		free(exp_[k]);
		free(sys[k]);
		free(prog[k]);
	}
	burrow_mpi_stop();
	return EXIT_OK;
}
