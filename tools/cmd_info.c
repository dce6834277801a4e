/* cmd_info.c: burrow info DIR: what a dataset holds, after checking it against meta.json. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow info DIR [--verify] [--json]\n\n"
	       "Check a dataset directory against its meta.json (every file's dtype, shape and size)\n"
	       "and describe it: nodes, edges, degrees, isolated nodes, features, classes and their\n"
	       "histogram, split sizes, bytes on disk.\n\n"
	       "  --verify   also check the contents: CSR structure, symmetry, label range, split ids\n"
	       "  --json     print one JSON object instead of the table\n");
}

int cmd_info(int argc, char **argv)
{
	static const struct option lo[] = {
		{"verify", no_argument, 0, 'v'}, {"json", no_argument, 0, 'j'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	bool verify = false, json = false;
	int c;
	while ((c = cli_getopt("info", argc, argv, "h", lo)) != -1) {
		if (c == '?')
			return EXIT_USAGE;
		if (c == 'h') {
			help();
			return EXIT_OK;
		}
		if (c == 'v')
			verify = true;
		if (c == 'j')
			json = true;
	}
	if (argc - optind != 1)
		return cli_usage("info", "expected one dataset directory");
	const char *dir = argv[optind];

	burrow_dataset *ds;
	int st = burrow_dataset_open(&ds, dir);
	if (st < 0)
		return cli_lib_fail("info", st);
	if (verify && (st = burrow_dataset_verify(ds)) < 0) {
		burrow_dataset_close(ds);
		return cli_lib_fail("info", st);
	}
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	const burrow_csr *g = burrow_dataset_graph(ds);

	int64_t dmin = g->num_nodes ? INT64_MAX : 0, dmax = 0, isolated = 0;
	for (int64_t v = 0; v < g->num_nodes; v++) {
		int64_t d = g->indptr[v + 1] - g->indptr[v];
		dmin = d < dmin ? d : dmin;
		dmax = d > dmax ? d : dmax;
		isolated += d == 0;
	}
	double dmean = g->num_nodes ? (double)g->num_edges / (double)g->num_nodes : 0;
	int64_t *hist = calloc((size_t)in->num_classes + 1, sizeof *hist); /* last slot: unlabeled */
	if (!hist) {
		burrow_dataset_close(ds);
		return cli_fail("info", "out of memory");
	}
	const int32_t *lab = burrow_dataset_labels(ds);
	for (int64_t v = 0; lab && v < in->num_nodes; v++)
		hist[lab[v] >= 0 && lab[v] < in->num_classes ? lab[v] : in->num_classes]++;
	int64_t disk = burrow_dataset_disk_bytes(ds);
	double feat_bytes = (double)in->num_nodes * (double)in->feat_dim * (double)burrow_dtype_size(in->feat_dtype);

	char a[64], b[64];
	if (json) {
		printf("{\"dir\": \"%s\", \"name\": \"%s\", \"num_nodes\": %lld, \"num_edges\": %lld, "
		       "\"symmetric\": %s, \"degree_min\": %lld, \"degree_mean\": %.6g, \"degree_max\": %lld, "
		       "\"isolated\": %lld, \"feat_dim\": %lld, \"feat_dtype\": \"%s\", \"num_classes\": %d, "
		       "\"class_counts\": [",
		       dir, in->name, (long long)in->num_nodes, (long long)in->num_edges,
		       in->symmetric ? "true" : "false", (long long)dmin, dmean, (long long)dmax, (long long)isolated,
		       (long long)in->feat_dim, in->feat_dim ? burrow_dtype_name(in->feat_dtype) : "", in->num_classes);
		for (int32_t k = 0; k < in->num_classes; k++)
			printf("%s%lld", k ? ", " : "", (long long)hist[k]);
		printf("], \"unlabeled\": %lld, \"num_train\": %lld, \"num_valid\": %lld, \"num_test\": %lld, "
		       "\"disk_bytes\": %lld, \"source\": %s}\n",
		       (long long)(lab ? hist[in->num_classes] : in->num_nodes), (long long)in->num_train,
		       (long long)in->num_valid, (long long)in->num_test, (long long)disk, in->source_json);
	} else {
		printf("dataset    %s (%s)\n", dir, in->name);
		printf("source     %s\n", in->source_json);
		printf("nodes      %s\n", cli_grouped(in->num_nodes, a, sizeof a));
		printf("edges      %s CSR entries%s\n", cli_grouped(in->num_edges, a, sizeof a),
		       in->symmetric ? " (symmetric: each undirected edge stored both ways)" : " (directed)");
		printf("degree     min %lld  mean %.2f  max %lld\n", (long long)dmin, dmean, (long long)dmax);
		printf("isolated   %s nodes\n", cli_grouped(isolated, a, sizeof a));
		if (in->feat_dim)
			printf("features   %lld x %s (%s)\n", (long long)in->feat_dim, burrow_dtype_name(in->feat_dtype),
			       cli_human_bytes(feat_bytes, b, sizeof b));
		else
			printf("features   none\n");
		printf("classes    %d", in->num_classes);
		for (int32_t k = 0; k < in->num_classes; k++)
			printf("%s%d:%lld", k ? " " : "  ", k, (long long)hist[k]);
		if (lab && hist[in->num_classes])
			printf("  unlabeled:%lld", (long long)hist[in->num_classes]);
		printf("\n");
		printf("splits     train %lld  valid %lld  test %lld\n", (long long)in->num_train,
		       (long long)in->num_valid, (long long)in->num_test);
		printf("disk       %s\n", cli_human_bytes((double)disk, a, sizeof a));
		if (verify)
			printf("verify     ok (CSR structure%s, labels, splits)\n", in->symmetric ? ", symmetry" : "");
	}
	free(hist);
	burrow_dataset_close(ds);
	return EXIT_OK;
}
