/* cmd_train_dist.c: mpirun -np K burrow train DIR/parts-K: partition-parallel training, one
 * rank per part, mini-batch (default) or full-graph (burrow.c routes `train` here when DIR is
 * a parts directory). */
#define _GNU_SOURCE
#include "cli.h"
#include "train_cli.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	printf("usage: mpirun -np K burrow train DIR/parts-K [options]\n\n"
	       "Partition-parallel training: rank i trains on part i of a parts directory written by\n"
	       "`burrow partition`, and gradients are all-reduced every step so the model replicas stay\n"
	       "equal. Rank 0 prints the epoch table and writes --log.\n"
	       "  (default)          mini-batch: each rank samples batches from its own training nodes\n"
	       "                     over the whole graph (remote nodes are expanded by their owners) and\n"
	       "                     fetches the input rows it does not hold from their owners; every\n"
	       "                     rank takes the same number of steps. Evaluation is full-graph.\n"
	       "  --full-graph       every epoch one step over all nodes: each layer's halo rows are\n"
	       "                     exchanged while the inner rows aggregate\n\n"
	       "  --model M          sage, gcn or mlp (%s)\n"
	       "  --layers L         %d; or as many as --fanout has values\n"
	       "  --hidden H         %lld\n"
	       "  --dropout p        %g\n"
	       "  --lr r             %g\n"
	       "  --weight-decay w   %g\n"
	       "  --epochs E         %d\n"
	       "  --seed S           %llu\n"
	       "  --eval-every N     evaluate every N epochs and after the last (1)\n"
	       "  --threads T        OpenMP and OpenBLAS threads per rank (the node's cores divided by\n"
	       "                     the ranks on that node, at least 1)\n"
	       "  --log FILE         one JSON object per epoch, then one with \"final\": true\n"
	       "  --checkpoint DIR   rank 0 saves DIR/last.ckpt every epoch and DIR/best.ckpt at each\n"
	       "                     new best (the format of single-process training)\n"
	       "  --resume           continue from DIR/last.ckpt: rank 0 reads it and broadcasts it\n"
	       "Mini-batch mode:\n"
	       "  --batch B          training nodes per batch on each rank (%lld); a step covers up to\n"
	       "                     K x B seeds; also --batch-size\n"
	       "  --fanout a,b,c     neighbors per layer, input layer first; -1 = all (5 x (L - l));\n"
	       "                     without --layers it sets the number of layers\n"
	       "  --prefetch P       0: sample, fetch, compute one after another; > 0: batch k+1 is\n"
	       "                     sampled and its remote rows are in flight while batch k computes (%d)\n"
	       "  --max-batches N    end an epoch after N steps (all)\n"
	       "Full-graph mode:\n"
	       "  --halo exact|stale exact: wait for each layer's halo rows; stale: use last epoch's,\n"
	       "                     so the exchange overlaps the whole layer (PipeGCN) (exact)\n"
	       "  --no-overlap       post, wait, then aggregate (the serialized baseline)\n"
	       "  --boundary-sample p  exchange a random fraction p of the boundary nodes each epoch,\n"
	       "                     rescaled by 1/p (BNS-GCN); evaluation uses all of them (1)\n"
	       "Several machines: mpirun --hostfile hosts -np K burrow train DIR/parts-K, with the same\n"
	       "binary and the parts directory at the same path on every machine.\n",
	       burrow_model_name(o.train.model), o.train.layers, (long long)o.train.hidden, o.train.dropout, o.train.lr,
	       o.train.weight_decay, o.train.epochs, (unsigned long long)o.train.seed, (long long)o.train.batch_size,
	       o.train.prefetch);
}

enum { O_MODEL = 256, O_LAYERS, O_HIDDEN, O_DROPOUT, O_LR, O_WD, O_EPOCHS, O_SEED, O_EVERY, O_HALO, O_NOOV, O_THREADS,
       O_BNS, O_LOG, O_FULL, O_QUIET, O_BATCH, O_FANOUT, O_PREFETCH, O_MAXB, O_CKPT, O_RESUME, O_HELP };

/* The command line beyond the library's options. */
typedef struct run_args {
	int every;
	const char *log, *dir, *ckpt;
	bool resume;
} run_args;

/* Parse the options into o and a; EXIT_OK to go on, else the exit code. */
static int parse(int argc, char **argv, burrow_dist_opts *o, run_args *a)
{
	static const struct option lo[] = {
		{"model", required_argument, 0, O_MODEL},	{"layers", required_argument, 0, O_LAYERS},
		{"hidden", required_argument, 0, O_HIDDEN},	{"dropout", required_argument, 0, O_DROPOUT},
		{"lr", required_argument, 0, O_LR},		{"weight-decay", required_argument, 0, O_WD},
		{"epochs", required_argument, 0, O_EPOCHS},	{"seed", required_argument, 0, O_SEED},
		{"eval-every", required_argument, 0, O_EVERY}, {"halo", required_argument, 0, O_HALO},
		{"no-overlap", no_argument, 0, O_NOOV},	{"threads", required_argument, 0, O_THREADS},
		{"log", required_argument, 0, O_LOG},		{"full-graph", no_argument, 0, O_FULL},
		{"checkpoint", required_argument, 0, O_CKPT},	{"resume", no_argument, 0, O_RESUME},
		{"quiet", no_argument, 0, O_QUIET},		{"help", no_argument, 0, O_HELP},
		{"batch", required_argument, 0, O_BATCH},	{"batch-size", required_argument, 0, O_BATCH},
		{"fanout", required_argument, 0, O_FANOUT},	{"prefetch", required_argument, 0, O_PREFETCH},
		{"max-batches", required_argument, 0, O_MAXB},	{"boundary-sample", required_argument, 0, O_BNS},
		{0, 0, 0, 0},
	};
	int c, nfanout = 0;
	bool layers_set = false;
	const char *fanout = NULL;
	const char *mb_opt = NULL, *fg_opt = NULL; /* an option of the other mode, for the message */
	int64_t i;
	double f;
	while ((c = cli_getopt("train", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return -1;
		case O_MODEL:
			if (!(o->train.model = burrow_model_parse(optarg)))
				return cli_usage("train", "--model wants sage, gcn or mlp, got '%s'", optarg);
			break;
		case O_LAYERS:
			if (!cli_i64(optarg, &i) || i < 1 || i > BURROW_MAX_LAYERS)
				return cli_usage("train", "--layers wants 1 to %d, got '%s'", BURROW_MAX_LAYERS, optarg);
			o->train.layers = (int)i;
			layers_set = true;
			break;
		case O_HIDDEN:
			if (!cli_i64(optarg, &i) || i < 1)
				return cli_usage("train", "--hidden wants a positive integer, got '%s'", optarg);
			o->train.hidden = i;
			break;
		case O_DROPOUT:
			if (!cli_f64(optarg, &f) || f < 0 || f >= 1)
				return cli_usage("train", "--dropout wants a number in [0, 1), got '%s'", optarg);
			o->train.dropout = f;
			break;
		case O_LR:
			if (!cli_f64(optarg, &f) || f <= 0)
				return cli_usage("train", "--lr wants a positive number, got '%s'", optarg);
			o->train.lr = f;
			break;
		case O_WD:
			if (!cli_f64(optarg, &f) || f < 0)
				return cli_usage("train", "--weight-decay wants a number >= 0, got '%s'", optarg);
			o->train.weight_decay = f;
			break;
		case O_EPOCHS:
			if (!cli_i64(optarg, &i) || i < 0 || i > 1000000)
				return cli_usage("train", "--epochs wants an integer in [0, 1000000], got '%s'", optarg);
			o->train.epochs = (int)i;
			break;
		case O_SEED:
			if (!cli_i64(optarg, &i) || i < 0)
				return cli_usage("train", "--seed wants an integer >= 0, got '%s'", optarg);
			o->train.seed = (uint64_t)i;
			break;
		case O_EVERY:
			if (!cli_i64(optarg, &i) || i < 1)
				return cli_usage("train", "--eval-every wants a positive integer, got '%s'", optarg);
			a->every = (int)i;
			break;
		case O_HALO:
			if (!strcmp(optarg, "exact"))
				o->halo = BURROW_HALO_EXACT;
			else if (!strcmp(optarg, "stale"))
				o->halo = BURROW_HALO_STALE;
			else
				return cli_usage("train", "--halo wants exact or stale, got '%s'", optarg);
			fg_opt = "--halo";
			break;
		case O_NOOV:
			o->overlap = false;
			fg_opt = "--no-overlap";
			break;
		case O_BNS:
			if (!cli_f64(optarg, &f) || !(f > 0 && f <= 1))
				return cli_usage("train", "--boundary-sample wants a fraction in (0, 1], got '%s'", optarg);
			o->boundary_sample = f;
			fg_opt = "--boundary-sample";
			break;
		case O_THREADS:
			if (!cli_i64(optarg, &i) || i < 1 || i > 4096)
				return cli_usage("train", "--threads wants a positive integer, got '%s'", optarg);
			o->train.threads = (int)i;
			break;
		case O_LOG: a->log = optarg; break;
		case O_CKPT: a->ckpt = optarg; break;
		case O_RESUME: a->resume = true; break;
		case O_FULL: o->train.full_graph = true; break;
		case O_BATCH:
			if (!cli_i64(optarg, &i) || i < 1)
				return cli_usage("train", "--batch wants a positive integer, got '%s'", optarg);
			o->train.batch_size = i;
			mb_opt = "--batch";
			break;
		case O_FANOUT:
			if (!train_cli_parse_fanout(optarg, &o->train, &nfanout))
				return cli_usage("train", "--fanout wants positive integers or -1 separated by commas, got '%s'",
						 optarg);
			fanout = optarg;
			mb_opt = "--fanout";
			break;
		case O_PREFETCH:
			if (!cli_i64(optarg, &i) || i < 0 || i > 64)
				return cli_usage("train", "--prefetch wants 0 to 64, got '%s'", optarg);
			o->train.prefetch = (int)i;
			mb_opt = "--prefetch";
			break;
		case O_MAXB:
			if (!cli_i64(optarg, &i) || i < 1)
				return cli_usage("train", "--max-batches wants a positive integer, got '%s'", optarg);
			o->train.max_batches = i;
			mb_opt = "--max-batches";
			break;
		default: break;
		}
	}
	if (o->train.full_graph && mb_opt)
		return cli_usage("train", "%s is a mini-batch option: drop --full-graph or %s", mb_opt, mb_opt);
	if (!o->train.full_graph && fg_opt)
		return cli_usage("train", "%s applies to --full-graph training", fg_opt);
	if (o->boundary_sample < 1.0 && o->halo == BURROW_HALO_STALE)
		return cli_usage("train", "--boundary-sample and --halo stale do not combine: choose one");
	if (train_cli_layers_fanout("train", &o->train, layers_set, fanout, nfanout))
		return EXIT_USAGE;
	if (a->resume && !a->ckpt)
		return cli_usage("train", "--resume needs --checkpoint DIR");
	if (argc - optind != 1)
		return cli_usage("train", "expected one parts directory");
	a->dir = argv[optind];
	return EXIT_OK;
}

/* A rank's failure ends the job: its message, then MPI_Abort so no rank waits forever. */
static int fail_all(int rank, const char *what)
{
	fprintf(stderr, "burrow: train: rank %d: %s\n", rank, what);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, 1);
	return EXIT_FAIL;
}

int cmd_train_dist(int argc, char **argv)
{
	burrow_dist_opts o;
	burrow_dist_defaults(&o);
	o.train.full_graph = false; /* mini-batch unless --full-graph */
	run_args a = {.every = 1};
	int rc = parse(argc, argv, &o, &a);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	const char *log = a.log, *dir = a.dir;
	int provided;
	MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	burrow_dist *d;
	int st = burrow_dist_open(&d, dir, &o);
	if (st < 0)
		return fail_all(rank, cli_lib_message("train", st));
	/* checkpoints: rank 0 keeps the directory (the other ranks need not see it) */
	char *last = NULL, *best = NULL;
	int ck_ok = 1;
	if (a.ckpt && rank == 0)
		ck_ok = train_cli_checkpoint_dir("train", a.ckpt, a.resume, &last, &best) == 0;
	MPI_Bcast(&ck_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!ck_ok) {
		MPI_Finalize();
		return EXIT_FAIL;
	}
	if (a.resume) {
		if ((st = burrow_dist_load(d, last ? last : a.ckpt)) < 0)
			return fail_all(rank, cli_lib_message("train", st));
		if (rank == 0)
			fprintf(stderr, "burrow: train: resumed %s after epoch %d\n", last, burrow_dist_epoch(d));
	}
	FILE *lf = NULL;
	if (rank == 0 && log && !(lf = fopen(log, a.resume ? "a" : "w")))
		return fail_all(rank, "cannot open the --log file");
	/* the compute threads per rank: the same on every rank unless the nodes differ */
	int thr[2] = {burrow_dist_threads(d), -burrow_dist_threads(d)}, thr_min[2];
	MPI_Allreduce(thr, thr_min, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	char threads[48];
	if (thr_min[0] == -thr_min[1])
		snprintf(threads, sizeof threads, "%d thread%s per rank", thr_min[0], thr_min[0] == 1 ? "" : "s");
	else
		snprintf(threads, sizeof threads, "%d to %d threads per rank", thr_min[0], -thr_min[1]);
	if (rank == 0) {
		if (o.train.full_graph) {
			printf("burrow train: %s, full graph, %d ranks, %s\n", burrow_model_name(o.train.model),
			       burrow_dist_size(d), threads);
		} else {
			char fan[128] = "";
			for (int l = 0; l < o.train.layers; l++) {
				int f = o.train.model == BURROW_MODEL_MLP ? 0
					: o.train.fanout[l] ? o.train.fanout[l]
							    : 5 * (o.train.layers - l);
				snprintf(fan + strlen(fan), sizeof fan - strlen(fan), "%s%d", l ? "," : "", f);
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
		burrow_epoch_stats es;
		burrow_comm_stats cs;
		burrow_eval_stats ev = {.valid_acc = -1, .test_acc = -1};
		if ((st = burrow_dist_train_epoch(d, &es, &cs)) < 0)
			return fail_all(rank, cli_lib_message("train", st));
		bool eval = e % a.every == 0 || e == o.train.epochs;
		if (eval && (st = burrow_dist_evaluate(d, &ev)) < 0)
			return fail_all(rank, cli_lib_message("train", st));
		/* the slowest rank's times are the epoch's */
		double t[4] = {es.epoch_s, cs.comm_s, cs.exposed_comm_s, ev.eval_s}, tm[4];
		MPI_Reduce(t, tm, 4, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
		if (rank == 0) {
			char tr[16], va[16];
			printf("%5d %9.4f %s %s %8.3f %8.3f %8.3f %8.3f\n", e, es.loss,
			       train_cli_num(tr, sizeof tr, 9, 4, 1, "", es.train_acc),
			       train_cli_num(va, sizeof va, 9, 4, 1, "", ev.valid_acc), tm[0], tm[1], tm[2], tm[3]);
			if (lf) {
				fprintf(lf, "{\"epoch\": %d, \"loss\": %.9g", e, es.loss);
				train_cli_json_num(lf, "train_acc", 'f', 6, es.train_acc);
				train_cli_json_num(lf, "valid_acc", 'f', 6, ev.valid_acc);
				train_cli_json_num(lf, "test_acc", 'f', 6, ev.test_acc);
				fprintf(lf,
					", \"epoch_s\": %.6f, \"comm_s\": %.6f, \"exposed_comm_s\": %.6f, \"eval_s\": %.6f, "
					"\"ranks\": %d}\n",
					tm[0], tm[1], tm[2], tm[3], burrow_dist_size(d));
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
	MPI_Bcast(&sum0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	int same = sum == sum0, all_same;
	MPI_Allreduce(&same, &all_same, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rank == 0) {
		char line[4400]; /* holds a checkpoint path */
		printf("%s (%d ranks, weights %s on every rank, checksum %016llx)\n",
		       train_cli_result(line, sizeof line, &b, trained, done, o.train.epochs, a.resume ? last : NULL),
		       burrow_dist_size(d), all_same ? "equal" : "DIFFERENT", (unsigned long long)sum);
		if (lf) {
			fprintf(lf, "{\"final\": true");
			train_cli_json_num(lf, "best_epoch", 'g', 10, b.epoch);
			train_cli_json_num(lf, "valid_acc", 'f', 6, b.valid_acc);
			train_cli_json_num(lf, "test_acc", 'f', 6, b.test_acc);
			fprintf(lf, ", \"epochs\": %d, \"trained\": %d, \"weights_equal\": %s, \"ranks\": %d}\n",
				burrow_dist_epoch(d), trained, all_same ? "true" : "false", burrow_dist_size(d));
			fclose(lf);
		}
	}
	free(last);
	free(best);
	burrow_dist_close(d);
	MPI_Finalize();
	if (!all_same) {
		if (rank == 0)
			fprintf(stderr, "burrow: train: the model replicas differ across ranks\n");
		return EXIT_FAIL;
	}
	return EXIT_OK;
}
