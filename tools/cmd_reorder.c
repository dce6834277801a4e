/* cmd_reorder.c: burrow reorder DIR --out DIR2: the dataset renumbered in a locality order (datasets/reorder.c). */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow reorder DIR --out DIR2 [--order bfs|degree|rcm|random] [--mem BYTES] [--seed S]\n"
	       "                      [--force] [--quiet]\n\n"
	       "Renumber the nodes of the homogeneous (format version 1) dataset DIR so that rows sampled\n"
	       "together sit nearer in features.npy, and write everything in the new order to DIR2: the\n"
	       "CSR (rows permuted, ids renamed, rows sorted), features (read in the new order, written\n"
	       "sequentially), edge features (following their entries), labels, splits (renamed and\n"
	       "sorted), named splits, a link dataset's edge splits (renamed, rows in place) and\n"
	       "orig_ids.npy, row i the input id of node i (composed with DIR's own orig_ids when it has\n"
	       "them). See docs/store.md, \"A locality order\", for what each order saves.\n\n"
	       "  --out DIR2   the output dataset directory (required)\n"
	       "  --order O    bfs: breadth-first from the highest-degree node, neighbors hubs first\n"
	       "               (the default); degree: hubs first; rcm: reverse Cuthill-McKee; random: a\n"
	       "               permutation drawn from --seed (a control)\n"
	       "  --mem BYTES  memory budget, K/M/G suffixes (half of the machine's): 24 bytes a node, the\n"
	       "               labels and splits must fit; features stream through the rest\n"
	       "  --seed S     the random order's seed (0)\n"
	       "  --force      replace DIR2 if it holds a dataset\n"
	       "  --quiet      no progress bar\n");
}

enum { O_OUT = 256, O_ORDER, O_MEM, O_SEED, O_FORCE, O_QUIET, O_HELP };

int cmd_reorder(int argc, char **argv)
{
	static const struct option lo[] = {
		{"out", required_argument, 0, O_OUT},	{"order", required_argument, 0, O_ORDER},
		{"mem", required_argument, 0, O_MEM},	{"seed", required_argument, 0, O_SEED},
		{"force", no_argument, 0, O_FORCE},	{"quiet", no_argument, 0, O_QUIET},
		{"help", no_argument, 0, O_HELP},	{0, 0, 0, 0},
	};
	burrow_reorder_opts o;
	burrow_reorder_defaults(&o);
	const char *out = NULL;
	bool quiet = false;
	int64_t i64;
	int c;
	while ((c = cli_getopt("reorder", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_OUT: out = optarg; break;
		case O_ORDER:
			if (burrow_order_parse(optarg, &o.order))
				return cli_usage("reorder", "--order wants bfs, degree, rcm or random, got '%s'", optarg);
			break;
		case O_MEM:
			if (!cli_bytes(optarg, &i64) || i64 < 1)
				return cli_usage("reorder", "--mem wants a byte count such as 2G, got '%s'", optarg);
			o.mem_bytes = (size_t)i64;
			break;
		case O_SEED:
			if (!cli_i64(optarg, &i64) || i64 < 0)
				return cli_usage("reorder", "--seed wants a non-negative integer, got '%s'", optarg);
			o.seed = (uint64_t)i64;
			break;
		case O_FORCE: o.overwrite = true; break;
		case O_QUIET: quiet = true; break;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return cli_usage("reorder", "expected one dataset directory");
	if (!out)
		return cli_usage("reorder", "--out DIR2 is required");
	cli_progress prog;
	cli_progress_init(&prog, quiet);
	o.progress = cli_progress_cb;
	o.progress_user = &prog;
	const double t0 = cli_now();
	int st = burrow_reorder(argv[optind], out, &o);
	cli_progress_done(&prog);
	if (st == BURROW_E_EXISTS && !o.overwrite)
		return cli_fail("reorder", "%s (use --force to replace it)", burrow_last_error());
	if (st < 0)
		return cli_lib_fail("reorder", st);
	if (!quiet)
		fprintf(stderr, "burrow: reorder: wrote %s (order %s) in %.1f s\n", cli_text(out),
			burrow_order_name(o.order), cli_now() - t0);
	return EXIT_OK;
}
