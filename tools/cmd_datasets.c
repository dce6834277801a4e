/* cmd_datasets.c: burrow datasets: the catalog, with the disk space each dataset needs. */
#include "cli.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static void help(void)
{
	printf("usage: burrow datasets [--root DIR] [--feat-dtype f32|f16]\n\n"
	       "List the datasets 'burrow download' and 'burrow prep' know by name, with the disk space\n"
	       "they need: the download, the prepared dataset directory (upper bound), and scratch space\n"
	       "while preparing (only used when the edges exceed --mem, or for a compressed .npz).\n"
	       "The last column says what DIR already holds (zip, dataset).\n\n"
	       "  --root DIR          where zips and datasets live (data)\n"
	       "  --feat-dtype T      feature type the sizes assume (f32)\n");
}

static bool exists(const char *root, const char *name, const char *suffix)
{
	char p[4096];
	struct stat sb;
	snprintf(p, sizeof p, "%s/%s%s", root, name, suffix);
	return stat(p, &sb) == 0;
}

int cmd_datasets(int argc, char **argv)
{
	static const struct option lo[] = {{"root", required_argument, 0, 'r'}, {"feat-dtype", required_argument, 0, 't'},
					   {"help", no_argument, 0, 'h'},       {0, 0, 0, 0}};
	const char *root = "data";
	burrow_dtype t = BURROW_DTYPE_F32;
	int c;
	while ((c = cli_getopt("datasets", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h': help(); return EXIT_OK;
		case 'r': root = optarg; break;
		case 't':
			t = burrow_dtype_parse(optarg);
			if (t != BURROW_DTYPE_F32 && t != BURROW_DTYPE_F16)
				return cli_usage("datasets", "--feat-dtype wants f32 or f16, got '%s'", optarg);
			break;
		}
	}
	if (argc != optind)
		return cli_usage("datasets", "unexpected argument '%s'", argv[optind]);
	printf("%-16s %13s %15s %5s %7s %10s %10s %10s  %s\n", "name", "nodes", "edges", "feat", "classes", "download",
	       "dataset", "scratch", "in root");
	for (int i = 0; i < burrow_catalog_count(); i++) {
		const burrow_catalog_entry *e = burrow_catalog_get(i);
		burrow_catalog_space s;
		burrow_catalog_space_of(e, t, &s);
		char n[32], m[32], a[32], b[32], d[32], have[64] = "";
		if (exists(root, e->name, ".zip") || exists(root, e->download_name, ".zip"))
			strcat(have, "zip ");
		else if (exists(root, e->name, ".zip.part"))
			strcat(have, "partial-zip ");
		if (exists(root, e->name, "/meta.json"))
			strcat(have, "dataset");
		printf("%-16s %13s %15s %5lld %7d %10s %10s %10s  %s\n", e->name, cli_grouped(e->num_nodes, n, sizeof n),
		       cli_grouped(e->num_edges, m, sizeof m), (long long)e->feat_dim, e->num_classes,
		       cli_human_bytes((double)s.download, a, sizeof a), cli_human_bytes((double)s.dataset, b, sizeof b),
		       cli_human_bytes((double)s.scratch, d, sizeof d), have[0] ? have : "-");
	}
	printf("\nedges: as stored in the zip; the dataset holds both directions. Sizes are upper bounds\n"
	       "(the download's is approximate). 'burrow prep NAME' downloads a missing zip first.\n"
	       "mag240m (OGB-LSC) and igbh (IGB) are not downloadable here: 'burrow prep mag240m|igbh DIR'\n"
	       "reads their unpacked processed/ folder, features in place (docs/datasets.md).\n");
	for (int i = 0; i < burrow_catalog_count(); i++) {
		const burrow_catalog_entry *e = burrow_catalog_get(i);
		if (e->edge_feat_dim > 0 || e->num_tasks > 1)
			printf("%s: %d binary tasks (multi-label), %lld features per edge; node features with "
			       "'prep --node-features-from-edges mean|sum|max'\n",
			       e->name, e->num_tasks, (long long)e->edge_feat_dim);
	}
	return EXIT_OK;
}
