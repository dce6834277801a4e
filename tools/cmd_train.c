/* cmd_train.c: burrow train DIR: train a node classifier, one line per epoch, OGB accuracy,
 * JSON-lines log, checkpoints and resume. */
#define _GNU_SOURCE
#include "cli.h"
#include "train_cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void help(void)
{
	burrow_train_opts o;
	burrow_train_defaults(&o);
	printf("usage: burrow train DIR [options]\n\n"
	       "Train a node classifier on the dataset directory DIR and report OGB's accuracy\n"
	       "(correct / total on the valid and test splits, from layer-wise full-neighbor inference;\n"
	       "the test accuracy reported is the one at the epoch with the best valid accuracy, or at\n"
	       "the last evaluation without a valid split). An absent value prints '-' (null in --log).\n\n"
	       "Mode:\n"
	       "  (default)             mini-batch: sampled neighborhoods, features gathered through the\n"
	       "                        feature store while the previous batch computes\n"
	       "  --full-graph          every epoch is one step over all nodes with all their neighbors\n"
	       "                        (features read into memory)\n"
	       "Model (defaults):\n"
	       "  --model M             sage, gcn or mlp (%s)\n"
	       "  --layers L            %d; or as many as --fanout has values\n"
	       "  --hidden H            %lld\n"
	       "  --dropout p           after each hidden layer's ReLU (%g)\n"
	       "Optimizer:\n"
	       "  --optimizer O         adam, adamw or sgd (adam)\n"
	       "  --lr r                %g\n"
	       "  --weight-decay w      %g (adam: added to the gradient; adamw: decoupled)\n"
	       "  --momentum m          sgd only (%g)\n"
	       "Mini-batch pipeline:\n"
	       "  --batch B             training nodes per batch (%lld); also --batch-size\n"
	       "  --fanout a,b,c        neighbors per layer, input layer first; -1 = all; without --layers\n"
	       "                        it sets the number of layers (5 x (L - l): 15,10,5 for 3 layers;\n"
	       "                        mlp samples none)\n"
	       "  --max-batches N       end an epoch after N batches (all)\n"
	       "  --prefetch P          batches sampled and gathered ahead of the one computing (%d)\n"
	       "  --cache SIZE          feature cache: bytes (K/M/G suffixes) or a percentage of the\n"
	       "                        features (100%% = all in memory) (auto: all when they fit in a\n"
	       "                        quarter of the memory, else that quarter)\n"
	       "  --cache-policy P      degree: the highest-degree rows, filled at start; clock: rows\n"
	       "                        read lately, second chance; none (degree)\n"
	       "  --engine E            feature reads: uring, pread or mmap (uring)\n"
	       "Run:\n"
	       "  --epochs E            %d\n"
	       "  --seed S              weights, dropout and batches (%llu)\n"
	       "  --eval-every N        evaluate every N epochs and after the last; 0 = never (1)\n"
	       "  --mem BYTES           inference keeps a layer's embeddings in memory up to half of this,\n"
	       "                        else spills them to --scratch (no limit); K/M/G suffixes\n"
	       "  --eval-chunk N        destination rows per inference chunk (%lld)\n"
	       "  --scratch DIR         where spills go ($TMPDIR or /tmp)\n"
	       "  --threads T           compute's OpenMP and OpenBLAS threads (mini-batch: all cores but\n"
	       "                        one, left to sampling and reads; full graph: all)\n"
	       "Output:\n"
	       "  --log FILE            one JSON object per epoch, then one with \"final\": true\n"
	       "  --checkpoint DIR      save DIR/last.ckpt every epoch and DIR/best.ckpt at each new best\n"
	       "                        valid accuracy (atomically)\n"
	       "  --resume              continue from DIR/last.ckpt (its seed, epoch and optimizer state)\n"
	       "  --quiet               no progress bar\n",
	       burrow_model_name(o.model), o.layers, (long long)o.hidden, o.dropout, o.lr, o.weight_decay, o.momentum,
	       (long long)o.batch_size, o.prefetch, o.epochs, (unsigned long long)o.seed, (long long)o.eval_chunk);
}

enum { O_FULL = 256, O_MODEL, O_LAYERS, O_HIDDEN, O_DROPOUT, O_OPTIM, O_LR, O_WD, O_MOM, O_EPOCHS, O_SEED, O_BATCH,
       O_FANOUT, O_MAXB, O_PREFETCH, O_CACHE, O_POLICY, O_ENGINE, O_EVERY, O_MEM, O_CHUNK, O_SCRATCH, O_THREADS, O_LOG,
       O_CKPT, O_RESUME, O_QUIET, O_HELP };

/* A progress bar within an epoch that erases itself (terminal only). */
typedef struct bar {
	bool on;
	int epoch;
	double last;
} bar;

static void bar_cb(void *user, const char *phase, uint64_t done, uint64_t total)
{
	bar *b = user;
	double now = cli_now();
	if (!b->on || (now - b->last < 0.2 && done && done != total))
		return;
	b->last = now;
	int w = 30, fill = total ? (int)((double)done / (double)total * w) : 0;
	fprintf(stderr, "\r  epoch %d %s [%.*s%*s] %llu/%llu\033[K", b->epoch, phase, fill,
		"##############################", w - fill, "", (unsigned long long)done, (unsigned long long)total);
	if (done == total)
		fprintf(stderr, "\r\033[K");
	fflush(stderr);
}

/* The long name of option c. */
static const char *opt_name(const struct option *lo, int c)
{
	for (; lo->name; lo++)
		if (lo->val == c)
			return lo->name;
	return "?";
}

/* The pipeline's settings and the feature cache, one line under the header. */
static void print_pipeline(burrow_trainer *t, const burrow_train_opts *o)
{
	char fan[96] = "none (mlp)", a[32], b[32], c[32];
	if (o->model != BURROW_MODEL_MLP) {
		fan[0] = '\0';
		for (int l = 0; l < o->layers; l++)
			snprintf(fan + strlen(fan), sizeof fan - strlen(fan), "%s%d", l ? "," : "", o->fanout[l]);
	}
	burrow_store *s = burrow_trainer_store(t);
	const burrow_store_info *in = burrow_store_get_info(s);
	burrow_store_stats st;
	burrow_store_get_stats(s, &st);
	printf("  batch %lld, fanout %s, prefetch %d; features: %s%s, cache %s: %s of %s rows (%s)\n",
	       (long long)o->batch_size, fan, o->prefetch, burrow_store_engine_name(in->engine),
	       in->direct ? " O_DIRECT" : "", cli_human_bytes((double)st.cache_bytes, a, sizeof a),
	       cli_grouped((int64_t)st.cache_rows, b, sizeof b), cli_grouped(in->num_rows, c, sizeof c),
	       st.cache_bytes == 0 ? "none" : o->cache_policy == BURROW_CACHE_CLOCK ? "clock" : "by degree");
}

int cmd_train(int argc, char **argv)
{
	static const struct option lo[] = {
		{"full-graph", no_argument, 0, O_FULL},       {"model", required_argument, 0, O_MODEL},
		{"layers", required_argument, 0, O_LAYERS},   {"hidden", required_argument, 0, O_HIDDEN},
		{"dropout", required_argument, 0, O_DROPOUT}, {"optimizer", required_argument, 0, O_OPTIM},
		{"lr", required_argument, 0, O_LR},           {"weight-decay", required_argument, 0, O_WD},
		{"momentum", required_argument, 0, O_MOM},    {"epochs", required_argument, 0, O_EPOCHS},
		{"seed", required_argument, 0, O_SEED},       {"batch-size", required_argument, 0, O_BATCH},
		{"batch", required_argument, 0, O_BATCH},     {"prefetch", required_argument, 0, O_PREFETCH},
		{"cache", required_argument, 0, O_CACHE},     {"cache-policy", required_argument, 0, O_POLICY},
		{"engine", required_argument, 0, O_ENGINE},
		{"fanout", required_argument, 0, O_FANOUT},   {"max-batches", required_argument, 0, O_MAXB},
		{"eval-every", required_argument, 0, O_EVERY}, {"mem", required_argument, 0, O_MEM},
		{"eval-chunk", required_argument, 0, O_CHUNK}, {"scratch", required_argument, 0, O_SCRATCH},
		{"threads", required_argument, 0, O_THREADS}, {"log", required_argument, 0, O_LOG},
		{"checkpoint", required_argument, 0, O_CKPT}, {"resume", no_argument, 0, O_RESUME},
		{"quiet", no_argument, 0, O_QUIET},           {"help", no_argument, 0, O_HELP},
		{0, 0, 0, 0},
	};
	burrow_train_opts o;
	burrow_train_defaults(&o);
	const char *log_path = NULL, *ckpt_dir = NULL;
	bool resume = false, quiet = false, layers_set = false;
	const char *fanout = NULL;
	int64_t every = 1, i64;
	int nfanout = 3;
	double f;
	int c;
#define INT_OPT(field, lo_, hi_)                                                                              \
	do {                                                                                                  \
		if (!cli_i64(optarg, &i64) || i64 < (lo_) || i64 > (hi_))                                     \
			return cli_usage("train", "--%s wants an integer in [%lld, %lld], got '%s'", opt_name(lo, c), \
					 (long long)(lo_), (long long)(hi_), optarg);                           \
		field = i64;                                                                                  \
	} while (0)
#define REAL_OPT(field, lo_, hi_)                                                                          \
	do {                                                                                               \
		if (!cli_f64(optarg, &f) || f < (lo_) || f > (hi_))                                         \
			return cli_usage("train", "--%s wants a number in [%g, %g], got '%s'", opt_name(lo, c), \
					 (double)(lo_), (double)(hi_), optarg);                              \
		field = f;                                                                                 \
	} while (0)
	while ((c = cli_getopt("train", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_FULL: o.full_graph = true; break;
		case O_MODEL:
			if (!(o.model = burrow_model_parse(optarg)))
				return cli_usage("train", "--model wants sage, gcn or mlp, got '%s'", optarg);
			break;
		case O_LAYERS:
			INT_OPT(o.layers, 1, BURROW_MAX_LAYERS);
			layers_set = true;
			break;
		case O_HIDDEN: INT_OPT(o.hidden, 1, 1 << 20); break;
		case O_DROPOUT: REAL_OPT(o.dropout, 0, 0.99); break;
		case O_OPTIM:
			if (!strcmp(optarg, "adam"))
				o.optimizer = BURROW_OPTIM_ADAM;
			else if (!strcmp(optarg, "adamw"))
				o.optimizer = BURROW_OPTIM_ADAMW;
			else if (!strcmp(optarg, "sgd"))
				o.optimizer = BURROW_OPTIM_SGD;
			else
				return cli_usage("train", "--optimizer wants adam, adamw or sgd, got '%s'", optarg);
			break;
		case O_LR: REAL_OPT(o.lr, 1e-12, 1e6); break;
		case O_WD: REAL_OPT(o.weight_decay, 0, 1e6); break;
		case O_MOM: REAL_OPT(o.momentum, 0, 0.999999); break;
		case O_EPOCHS: INT_OPT(o.epochs, 0, 1 << 24); break;
		case O_SEED: INT_OPT(o.seed, 0, INT64_MAX); break;
		case O_BATCH: INT_OPT(o.batch_size, 1, (int64_t)1 << 40); break;
		case O_FANOUT:
			if (!train_cli_parse_fanout(optarg, &o, &nfanout))
				return cli_usage("train", "--fanout wants positive integers or -1 separated by commas, got '%s'",
						 optarg);
			fanout = optarg;
			break;
		case O_MAXB: INT_OPT(o.max_batches, 1, INT64_MAX); break;
		case O_PREFETCH: INT_OPT(o.prefetch, 0, 64); break;
		case O_CACHE:
			if (!train_cli_parse_cache(optarg, &o))
				return cli_usage("train", "--cache wants bytes (K/M/G suffixes) or a percentage up to 100%%, "
						 "got '%s'", optarg);
			break;
		case O_POLICY:
			if (!strcmp(optarg, "degree"))
				o.cache_policy = BURROW_CACHE_STATIC;
			else if (!strcmp(optarg, "clock"))
				o.cache_policy = BURROW_CACHE_CLOCK;
			else if (!strcmp(optarg, "none"))
				o.cache_policy = BURROW_CACHE_NONE;
			else
				return cli_usage("train", "--cache-policy wants degree, clock or none, got '%s'", optarg);
			break;
		case O_ENGINE:
			if ((o.store_engine = burrow_store_engine_parse(optarg)) < 0)
				return cli_usage("train", "--engine wants uring, pread or mmap, got '%s'", optarg);
			break;
		case O_EVERY: INT_OPT(every, 0, 1 << 24); break;
		case O_MEM:
			if (!cli_bytes(optarg, &o.mem_bytes) || o.mem_bytes < 1)
				return cli_usage("train", "--mem wants a byte count (K/M/G suffixes), got '%s'", optarg);
			break;
		case O_CHUNK: INT_OPT(o.eval_chunk, 1, (int64_t)1 << 30); break;
		case O_SCRATCH: o.scratch_dir = optarg; break;
		case O_THREADS: INT_OPT(o.threads, 1, 4096); break;
		case O_LOG: log_path = optarg; break;
		case O_CKPT: ckpt_dir = optarg; break;
		case O_RESUME: resume = true; break;
		case O_QUIET: quiet = true; break;
		default: return EXIT_USAGE;
		}
	}
#undef INT_OPT
#undef REAL_OPT
	if (argc - optind != 1)
		return cli_usage("train", "expected one dataset directory");
	if (train_cli_layers_fanout("train", &o, layers_set, fanout, nfanout))
		return EXIT_USAGE;
	if (resume && !ckpt_dir)
		return cli_usage("train", "--resume needs --checkpoint DIR");
	const char *dir = argv[optind];

	char *last_path = NULL, *best_path = NULL;
	if (ckpt_dir && train_cli_checkpoint_dir("train", ckpt_dir, resume, &last_path, &best_path))
		return EXIT_FAIL;

	burrow_dataset *ds;
	int st = burrow_dataset_open(&ds, dir);
	if (st < 0) {
		cli_lib_fail("train", st);
		goto fail_paths;
	}
	bar pb = {.on = !quiet && isatty(STDERR_FILENO)};
	o.progress = bar_cb;
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
	}
	FILE *log = NULL;
	if (log_path && !(log = fopen(log_path, resume ? "a" : "w"))) {
		cli_fail("train", "%s: cannot open the log: %s", log_path, strerror(errno));
		goto fail_trainer;
	}

	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	char a[32];
	printf("burrow train: %s on %s (%s nodes, %d classes), %s, %d layers, hidden %lld, dropout %g, lr %g\n",
	       burrow_model_name(o.model), in->name, cli_grouped(in->num_nodes, a, sizeof a), in->num_classes,
	       o.full_graph ? "full graph" : "mini-batch", o.layers, (long long)o.hidden, o.dropout, o.lr);
	if (!o.full_graph)
		print_pipeline(t, &o);
	const int done = burrow_trainer_epoch(t); /* epochs trained before this run */
	int trained = 0;
	if (done < o.epochs) /* a table only when there will be rows */
		printf("%5s %9s %7s %7s %7s %8s %8s %9s %9s %7s %10s %6s\n", "epoch", "loss", "train", "valid", "test",
		       "epoch_s", "sample_s", "io_wait_s", "compute_s", "eval_s", "rows_read", "hit");
	fflush(stdout);
	int rc = EXIT_OK;
	const double start = cli_now();
	for (int e = done + 1; e <= o.epochs; e++, trained++) {
		burrow_epoch_stats es;
		burrow_eval_stats ev = {.train_acc = -1, .valid_acc = -1, .test_acc = -1};
		pb.epoch = e;
		if ((st = burrow_trainer_train_epoch(t, &es)) < 0) {
			rc = cli_lib_fail("train", st);
			break;
		}
		const bool evaluate = every > 0 && (e % every == 0 || e == o.epochs);
		if (evaluate && (st = burrow_trainer_evaluate(t, &ev)) < 0) {
			rc = cli_lib_fail("train", st);
			break;
		}
		char tr[16], va[16], te[16], hit[16];
		printf("%5d %9.4f %s %s %s %8.3f %8.3f %9.3f %9.3f %7.3f %10lld %s\n", es.epoch, es.loss,
		       train_cli_num(tr, sizeof tr, 7, 4, 1, "", es.train_acc),
		       train_cli_num(va, sizeof va, 7, 4, 1, "", ev.valid_acc),
		       train_cli_num(te, sizeof te, 7, 4, 1, "", ev.test_acc), es.epoch_s, es.sample_s, es.io_wait_s,
		       es.compute_s, ev.eval_s, (long long)es.rows_read,
		       train_cli_num(hit, sizeof hit, 6, 1, 100, "%", es.cache_hit_rate));
		fflush(stdout);
		if (log) {
			fprintf(log, "{\"epoch\": %d, \"loss\": %.17g", es.epoch, es.loss);
			train_cli_json_num(log, "train_acc", 'g', 17, es.train_acc);
			train_cli_json_num(log, "valid_acc", 'g', 17, ev.valid_acc);
			train_cli_json_num(log, "test_acc", 'g', 17, ev.test_acc);
			fprintf(log,
				", \"batches\": %lld, \"epoch_s\": %.6f, \"sample_s\": %.6f, \"io_wait_s\": %.6f, "
				"\"compute_s\": %.6f, \"eval_s\": %.6f, \"rows_read\": %lld",
				(long long)es.batches, es.epoch_s, es.sample_s, es.io_wait_s, es.compute_s, ev.eval_s,
				(long long)es.rows_read);
			train_cli_json_num(log, "cache_hit_rate", 'f', 6, es.cache_hit_rate);
			fprintf(log, ", \"spilled_bytes\": %lld}\n", (long long)ev.spilled_bytes);
			fflush(log);
		}
		if (ckpt_dir) {
			const burrow_best b = burrow_trainer_best(t);
			if ((evaluate && b.epoch == e && (st = burrow_trainer_save(t, best_path)) < 0) ||
			    (st = burrow_trainer_save(t, last_path)) < 0) {
				rc = cli_lib_fail("train", st);
				break;
			}
		}
	}
	if (rc == EXIT_OK) {
		const burrow_best b = burrow_trainer_best(t);
		char line[4400]; /* holds a checkpoint path */
		printf("%s\n", train_cli_result(line, sizeof line, &b, trained, done, o.epochs, resume ? last_path : NULL));
		if (log) {
			fprintf(log, "{\"final\": true");
			train_cli_json_num(log, "best_epoch", 'g', 10, b.epoch);
			train_cli_json_num(log, "valid_acc", 'g', 17, b.valid_acc);
			train_cli_json_num(log, "test_acc", 'g', 17, b.test_acc);
			fprintf(log, ", \"epochs\": %d, \"trained\": %d, \"total_s\": %.6f, \"weights_checksum\": \"%016llx\"}\n",
				burrow_trainer_epoch(t), trained, cli_now() - start,
				(unsigned long long)burrow_trainer_weights_checksum(t));
		}
	}
	if (log && fclose(log) != 0 && rc == EXIT_OK)
		rc = cli_fail("train", "%s: write failed: %s", log_path, strerror(errno));
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
	free(last_path);
	free(best_path);
	return EXIT_FAIL;
}
