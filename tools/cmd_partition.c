/* cmd_partition.c: burrow partition DIR --parts K: METIS parts with halos, one dataset per part. */
#define _GNU_SOURCE
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	burrow_partition_opts d;
	burrow_partition_defaults(&d);
	printf("usage: burrow partition DIR --parts K [--balance nodes,train,edges] [--ufactor U] [--seed S]\n"
	       "                        [--method metis|random] [--mem BYTES] [--coarsen-to M] [--out DIR]\n\n"
	       "Split the dataset DIR into K parts for distributed training and write DIR/parts-K/:\n"
	       "meta.json (partition book node_offsets, edge cut, imbalance, halo sizes, timings) and\n"
	       "part-i/, a dataset directory in local ids (owned nodes, then the halo grouped by owner)\n"
	       "with orig_ids.npy, halo_ids.npy, halo_offsets.npy, send_ids.npy, send_offsets.npy;\n"
	       "edge features, multi-label labels and a link dataset's edge splits go with their\n"
	       "rows (edge splits to the part owning each positive's source).\n"
	       "A typed dataset (format version 2) is partitioned with all its types together, each\n"
	       "type getting a book of its own; its parts are typed datasets (docs/partition.md).\n"
	       "METIS k-way (edge cut) runs on the symmetric graph without self-loops; when the graph is\n"
	       "beyond METIS's 32-bit indices or the --mem budget, or --coarsen-to is given, it is first\n"
	       "coarsened in passes streamed over the on-disk CSR, and the parts refined level by level\n"
	       "on the way back. See docs/partition.md.\n\n"
	       "  --parts K          number of parts (required)\n"
	       "  --balance LIST     constraints, comma-separated from nodes, train, edges (nodes)\n"
	       "  --ufactor U        allowed max part weight / average, per constraint (%g)\n"
	       "  --seed S           METIS seed and tie breaks (0)\n"
	       "  --method M         metis or random (metis)\n"
	       "  --mem BYTES        memory budget, K/M/G suffixes (no limit)\n"
	       "  --coarsen-to M     coarsen to about M nodes before METIS, even when it is not needed\n"
	       "  --refine-passes P  refinement passes and relaxed rounds after METIS (%d)\n"
	       "  --out DIR          output directory (DIR/parts-K)\n"
	       "  --threads T        OpenMP threads (all)\n"
	       "  --force            replace the output if it exists\n"
	       "  --json             print the statistics as one JSON object\n"
	       "  --quiet            no progress bar\n",
	       d.ufactor, d.refine_passes);
}

/* "nodes,train,edges" into a bitmask; 0 when malformed. */
static unsigned parse_balance(const char *s)
{
	unsigned bits = 0;
	char *copy = strdup(s), *save = NULL;
	for (char *t = copy ? strtok_r(copy, ",", &save) : NULL; t; t = strtok_r(NULL, ",", &save)) {
		if (!strcmp(t, "nodes"))
			bits |= BURROW_BALANCE_NODES;
		else if (!strcmp(t, "train"))
			bits |= BURROW_BALANCE_TRAIN;
		else if (!strcmp(t, "edges"))
			bits |= BURROW_BALANCE_EDGES;
		else {
			bits = 0;
			break;
		}
	}
	free(copy);
	return bits;
}

enum { O_PARTS = 256, O_BAL, O_UF, O_SEED, O_METHOD, O_MEM, O_COARSEN, O_REFINE, O_OUT, O_THREADS, O_FORCE,
       O_JSON, O_QUIET, O_HELP };

int cmd_partition(int argc, char **argv)
{
	static const struct option lo[] = {
		{"parts", required_argument, 0, O_PARTS},	 {"balance", required_argument, 0, O_BAL},
		{"ufactor", required_argument, 0, O_UF},	 {"seed", required_argument, 0, O_SEED},
		{"method", required_argument, 0, O_METHOD},	 {"mem", required_argument, 0, O_MEM},
		{"coarsen-to", required_argument, 0, O_COARSEN}, {"refine-passes", required_argument, 0, O_REFINE},
		{"out", required_argument, 0, O_OUT},		 {"threads", required_argument, 0, O_THREADS},
		{"force", no_argument, 0, O_FORCE},		 {"json", no_argument, 0, O_JSON},
		{"quiet", no_argument, 0, O_QUIET},		 {"help", no_argument, 0, O_HELP},
		{0, 0, 0, 0},
	};
	burrow_partition_opts o;
	burrow_partition_defaults(&o);
	bool have_parts = false, json = false, quiet = false;
	int64_t i64;
	double f;
	int c;
	while ((c = cli_getopt("partition", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_PARTS:
			if (!cli_i64(optarg, &i64) || i64 < 1 || i64 > 1 << 20)
				return cli_usage("partition", "--parts wants an integer in [1, 1048576], got '%s'", optarg);
			o.num_parts = (int)i64;
			have_parts = true;
			break;
		case O_BAL:
			if (!(o.balance = parse_balance(optarg)))
				return cli_usage("partition", "--balance wants a list of nodes, train, edges, got '%s'", optarg);
			break;
		case O_UF:
			if (!cli_f64(optarg, &f) || f < 1.001 || f > 100)
				return cli_usage("partition", "--ufactor wants a number in [1.001, 100], got '%s'", optarg);
			o.ufactor = f;
			break;
		case O_SEED:
			if (!cli_i64(optarg, &i64) || i64 < 0)
				return cli_usage("partition", "--seed wants a non-negative integer, got '%s'", optarg);
			o.seed = (uint64_t)i64;
			break;
		case O_METHOD:
			if (!strcmp(optarg, "metis"))
				o.method = BURROW_PART_METIS;
			else if (!strcmp(optarg, "random"))
				o.method = BURROW_PART_RANDOM;
			else
				return cli_usage("partition", "--method wants metis or random, got '%s'", optarg);
			break;
		case O_MEM:
			if (!cli_bytes(optarg, &i64) || i64 < 1)
				return cli_usage("partition", "--mem wants a byte count such as 2G, got '%s'", optarg);
			o.mem_bytes = (size_t)i64;
			break;
		case O_COARSEN:
			if (!cli_i64(optarg, &i64) || i64 < 2)
				return cli_usage("partition", "--coarsen-to wants an integer >= 2, got '%s'", optarg);
			o.coarsen_to = i64;
			break;
		case O_REFINE:
			if (!cli_i64(optarg, &i64) || i64 < 0 || i64 > 1000)
				return cli_usage("partition", "--refine-passes wants an integer in [0, 1000], got '%s'", optarg);
			o.refine_passes = (int)i64;
			break;
		case O_OUT: o.out_dir = optarg; break;
		case O_THREADS:
			if (!cli_i64(optarg, &i64) || i64 < 1 || i64 > 4096)
				return cli_usage("partition", "--threads wants an integer in [1, 4096], got '%s'", optarg);
			o.threads = (int)i64;
			break;
		case O_FORCE: o.overwrite = true; break;
		case O_JSON: json = true; break;
		case O_QUIET: quiet = true; break;
		default: return EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return cli_usage("partition", "expected one dataset directory");
	if (!have_parts)
		return cli_usage("partition", "--parts K is required");
	const char *dir = argv[optind];
	char outbuf[4096];
	if (!o.out_dir) {
		snprintf(outbuf, sizeof outbuf, "%s/parts-%d", dir, o.num_parts);
		o.out_dir = outbuf;
	}
	cli_progress prog;
	cli_progress_init(&prog, quiet);
	o.progress = cli_progress_cb;
	o.progress_user = &prog;
	burrow_partition_stats s = {.size = sizeof s};
	int st = burrow_partition(dir, &o, &s);
	cli_progress_done(&prog);
	if (st == BURROW_E_EXISTS && !o.overwrite)
		return cli_fail("partition", "%s (use --force to replace it)", burrow_last_error());
	if (st < 0)
		return cli_lib_fail("partition", st);
	if (json) {
		printf("{\"out\": \"%s\", \"num_parts\": %d, \"method\": \"%s\", \"edge_cut\": %lld, \"metis_cut\": %lld, \"sym_edges\": %lld, "
		       "\"cut_fraction\": %.6f, \"imbalance\": {\"nodes\": %.6f, \"train\": %.6f, \"edges\": %.6f}, "
		       "\"halo_total\": %lld, \"replication_factor\": %.6f, \"coarsened\": %s, \"coarsen_levels\": %d, "
		       "\"coarse_nodes\": %lld, \"coarse_edges\": %lld, \"seconds\": %.3f, \"peak_rss_bytes\": %lld}\n",
		       o.out_dir, s.num_parts, o.method == BURROW_PART_METIS ? "metis" : "random", (long long)s.edge_cut,
		       (long long)s.metis_cut, (long long)s.sym_edges, s.cut_fraction, s.imbalance_nodes, s.imbalance_train, s.imbalance_edges,
		       (long long)s.halo_total, s.replication, s.coarsened ? "true" : "false", s.coarsen_levels,
		       (long long)s.coarse_nodes, (long long)s.coarse_edges, s.seconds, (long long)s.peak_rss_bytes);
		return EXIT_OK;
	}
	char a[64], b[64];
	printf("parts      %s (%d parts, %s%s)\n", o.out_dir, s.num_parts,
	       o.method == BURROW_PART_METIS ? "metis" : "random", s.coarsened ? ", coarsened" : "");
	if (s.coarsened)
		printf("coarse     %d levels to %s nodes, %s edges\n", s.coarsen_levels, cli_grouped(s.coarse_nodes, a, sizeof a),
		       cli_grouped(s.coarse_edges, b, sizeof b));
	printf("edge cut   %s of %s undirected edges (%.2f%%)\n", cli_grouped(s.edge_cut, a, sizeof a),
	       cli_grouped(s.sym_edges, b, sizeof b), 100 * s.cut_fraction);
	if (o.method == BURROW_PART_METIS)
		printf("metis cut  %s on the graph METIS saw, before refinement\n", cli_grouped(s.metis_cut, a, sizeof a));
	printf("imbalance  nodes %.4f  train %.4f  edges %.4f  (max part / average)\n", s.imbalance_nodes,
	       s.imbalance_train, s.imbalance_edges);
	printf("halo       %s nodes in all, replication factor %.3f\n", cli_grouped(s.halo_total, a, sizeof a),
	       s.replication);
	burrow_parts *ps;
	if (burrow_parts_open(&ps, o.out_dir) == 0) {
		const burrow_parts_info *pi = burrow_parts_get_info(ps);
		printf("parts      owned / halo:");
		for (int i = 0; i < pi->num_parts; i++)
			printf("%s %lld/%lld", i ? "," : "", (long long)(pi->node_offsets[i + 1] - pi->node_offsets[i]),
			       (long long)pi->halo_sizes[i]);
		printf("\n");
		for (int t = 0; t < pi->num_types; t++) { /* typed parts: each type's share */
			const int64_t *bk = pi->type_offsets + (int64_t)t * (pi->num_parts + 1);
			printf("  %-8s owned / halo:", pi->type_names[t]);
			for (int i = 0; i < pi->num_parts; i++)
				printf("%s %lld/%lld", i ? "," : "", (long long)(bk[i + 1] - bk[i]),
				       (long long)pi->type_halo_sizes[(int64_t)t * pi->num_parts + i]);
			printf("\n");
		}
		burrow_parts_close(ps);
	}
	for (int i = 0; i < s.num_phases; i++)
		printf("%-10s %8.2f s  heap peak %s  RSS peak %s\n", s.phases[i].name, s.phases[i].seconds,
		       cli_human_bytes((double)s.phases[i].heap_peak_bytes, a, sizeof a),
		       cli_human_bytes((double)s.phases[i].rss_peak_bytes, b, sizeof b));
	printf("total      %8.2f s  RSS peak %s\n", s.seconds, cli_human_bytes((double)s.peak_rss_bytes, b, sizeof b));
	return EXIT_OK;
}
