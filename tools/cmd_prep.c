/* cmd_prep.c: burrow prep NAME|ZIP|DIR: an OGB dataset into a dataset directory. */
#include "dlprogress.h"

#include <stdio.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow prep NAME|ZIP|DIR [--root DIR] [--out DIR] [--feat-dtype f32|f16] [--mem BYTES]\n"
	       "                   [--tmp DIR] [--url URL] [--no-download] [--add-reverse] [--fill mean|none]\n"
	       "                   [--force] [--quiet] [--node-features-from-edges mean|sum|max]\n"
	       "                   [--order bfs|degree|rcm|random]\n"
	       "       burrow prep mag240m|igbh DIR [--out DIR] [--fill mean|none] [--mem BYTES] [--classes 19|2983]\n"
	       "                   [--add-reverse] [--tmp DIR] [--force] [--quiet]\n\n"
	       "Turn an OGB node or link property prediction dataset into a dataset directory: NAME from the\n"
	       "catalog (its zip is looked up in --root and downloaded when missing), any other NAME whose\n"
	       "zip is ROOT/NAME.zip (where 'burrow download NAME --url URL' puts it; downloaded there\n"
	       "with --url), an OGB zip, or an unpacked OGB folder. Members are read straight from the\n"
	       "zip; the graph is written symmetric (both directions, no self-loops or duplicates),\n"
	       "labels -1 where unlabeled, splits as int64. When the edge list exceeds --mem it is\n"
	       "sorted in runs on disk and merged; the output is the same bytes either way. A typed\n"
	       "dataset (ogbn-mag) is written as OGB reads it: a relation per folder of raw/relations/,\n"
	       "stored by destination, duplicates once, self-loops kept; features per type. A link\n"
	       "prediction dataset (ogbl-collab, ogbl-ppa, ogbl-ddi, ogbl-citation2: split/<kind>/*.pt)\n"
	       "gets the graph of its training edges (directed for citation2), no labels, and the edge\n"
	       "split of OGB's .pt files in edge_split/ (docs/datasets.md, 'Link prediction'). Edge features\n"
	       "(raw/edge-feat.csv.gz, ogbn-proteins) follow their edges into edge_features.npy, and\n"
	       "labels of several columns (proteins' 112 tasks) become int8 [N, T] (docs/format.md).\n\n"
	       "mag240m and igbh are not downloadable: DIR is OGB-LSC's unpacked mag240m_kddcup2021 folder or\n"
	       "IGB's <size> folder, each holding processed/. Their feature files (processed/<type>/node_feat.npy)\n"
	       "are read in place, not copied: the dataset names them, so the output holds the graph, labels\n"
	       "and splits only (and the filled types' features). mag240m fills authors and institutions with\n"
	       "their neighbors' mean by default (--fill none: no); igbh's labels are node_label_19.npy or, with\n"
	       "--classes 2983, node_label_2K.npy (docs/datasets.md).\n\n"
	       "  --root DIR        where zips are found or downloaded, and datasets written (data)\n"
	       "  --out DIR         the dataset directory (ROOT/NAME)\n"
	       "  --feat-dtype T    f32 or f16 (f32)\n"
	       "  --mem BYTES       memory for the edge list, K/M/G suffixes (half the physical memory or of the cgroup's limit)\n"
	       "  --tmp DIR         folder for spilled runs (beside the output)\n"
	       "  --url URL         download from URL instead of the catalog's (any NAME then)\n"
	       "  --no-download     fail instead of downloading a missing zip\n"
	       "  --add-reverse     typed datasets (ogbn-mag): add (DST, rev_NAME, SRC) for each relation\n"
	       "                    with SRC != DST, make a relation with SRC == DST (cites) symmetric\n"
	       "  --fill mean|none  typed datasets: features for featureless types, the mean of their\n"
	       "                    neighbors' (docs/datasets.md); mag240m's default is mean\n"
	       "  --node-features-from-edges R   a dataset with edge features and no node features\n"
	       "                    (ogbn-proteins): node features [N, De] float32, the mean, sum or max\n"
	       "                    of each node's edges' features (its 8 association scores)\n"
	       "  --force           replace the dataset directory if it exists\n"
	       "  --quiet           no progress and no summary\n"
	       "  --classes C       igbh: 19 (default) or 2983 classes\n"
	       "  --order O         renumber the nodes in a locality order, bfs, degree, rcm or random (seed\n"
	       "                    0), as 'burrow reorder' does, with orig_ids.npy back to OGB's ids\n"
	       "                    (docs/store.md); prepared into a scratch folder beside the output first\n"
	       "                    (twice the disk while it runs); datasets of one node type only\n");
}

enum { O_ROOT = 256, O_OUT, O_DTYPE, O_MEM, O_TMP, O_URL, O_NODL, O_FORCE, O_QUIET, O_REVERSE, O_FILL, O_HELP,
       O_FROM_EDGES, O_CLASSES, O_ORDER };

/* A typed dataset's line: its types and relations. */
static void typed_summary(burrow_dataset *ds, const char *out, double secs)
{
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	char a[32];
	fprintf(stderr, "burrow: prep: wrote %s in %.1f s: %d node types, %d relations, %s edges, target %s: %d classes, "
		"splits %lld / %lld / %lld\n",
		out, secs, h->num_types, h->num_relations, cli_grouped(in->num_edges, a, sizeof a),
		h->target_type >= 0 ? cli_text(h->type_names[h->target_type]) : "none", in->num_classes,
		(long long)in->num_train, (long long)in->num_valid, (long long)in->num_test);
}

int cmd_prep(int argc, char **argv)
{
	static const struct option lo[] = {
		{"root", required_argument, 0, O_ROOT},   {"out", required_argument, 0, O_OUT},
		{"feat-dtype", required_argument, 0, O_DTYPE}, {"mem", required_argument, 0, O_MEM},
		{"tmp", required_argument, 0, O_TMP},     {"url", required_argument, 0, O_URL},
		{"no-download", no_argument, 0, O_NODL},
		{"force", no_argument, 0, O_FORCE},       {"quiet", no_argument, 0, O_QUIET},
		{"add-reverse", no_argument, 0, O_REVERSE}, {"fill", required_argument, 0, O_FILL},
		{"help", no_argument, 0, O_HELP},
		{"node-features-from-edges", required_argument, 0, O_FROM_EDGES},
		{"classes", required_argument, 0, O_CLASSES}, {"order", required_argument, 0, O_ORDER},
		{0, 0, 0, 0},
	};
	burrow_prep_opts o;
	burrow_prep_defaults(&o);
	bool quiet = false, fill_given = false;
	int64_t v;
	int c;
	while ((c = cli_getopt("prep", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_ROOT: o.root = optarg; break;
		case O_OUT: o.out = optarg; break;
		case O_DTYPE:
			o.feat_dtype = burrow_dtype_parse(optarg);
			if (o.feat_dtype != BURROW_DTYPE_F32 && o.feat_dtype != BURROW_DTYPE_F16)
				return cli_usage("prep", "--feat-dtype wants f32 or f16, got '%s'", optarg);
			break;
		case O_MEM:
			if (!cli_bytes(optarg, &v) || v < 1)
				return cli_usage("prep", "--mem wants a size in bytes (K/M/G suffixes), got '%s'", optarg);
			o.mem_bytes = (size_t)v;
			break;
		case O_TMP: o.tmp_dir = optarg; break;
		case O_URL: o.url = optarg; break;
		case O_NODL: o.download = false; break;
		case O_FORCE: o.overwrite = true; break;
		case O_QUIET: quiet = true; break;
		case O_REVERSE: o.add_reverse = true; break;
		case O_FILL:
			if (strcmp(optarg, "mean") && strcmp(optarg, "none"))
				return cli_usage("prep", "--fill wants mean or none, got '%s'", optarg);
			o.fill = strcmp(optarg, "mean") ? BURROW_FEAT_FILL_NONE : BURROW_FEAT_FILL_MEAN;
			fill_given = true;
			break;
		case O_CLASSES:
			if (!cli_bytes(optarg, &v) || (v != 19 && v != 2983))
				return cli_usage("prep", "--classes wants 19 or 2983, got '%s'", optarg);
			o.classes = (int)v;
			break;
		case O_ORDER:
			if (burrow_order_parse(optarg, &o.order))
				return cli_usage("prep", "--order wants bfs, degree, rcm or random, got '%s'", optarg);
			break;
		case O_FROM_EDGES:
			if (burrow_edge_reduce_parse(optarg, &o.edge_reduce) < 0)
				return cli_usage("prep", "--node-features-from-edges wants mean, sum or max, got '%s'", optarg);
			o.node_features_from_edges = true;
			break;
		}
	}
	const bool layout = argc - optind == 2 && (!strcmp(argv[optind], "mag240m") || !strcmp(argv[optind], "igbh"));
	if (argc - optind != 1 && !layout)
		return cli_usage("prep", "expected one dataset: a catalog name, an OGB zip or an OGB folder (or mag240m|igbh "
				 "DIR)");
	if (o.classes && !(layout && !strcmp(argv[optind], "igbh")))
		return cli_usage("prep", "--classes is for 'burrow prep igbh DIR'");
	if (layout && o.order != BURROW_ORDER_NONE)
		return cli_usage("prep", "--order renumbers datasets of one node type; %s is typed", argv[optind]);
	if (layout) {
		o.layout = argv[optind++];
		if (!fill_given && !strcmp(o.layout, "mag240m"))
			o.fill = BURROW_FEAT_FILL_MEAN;
	}
	cli_progress bar;
	dl_progress prog;
	cli_progress_init(&bar, quiet);
	dl_progress_init(&prog, quiet, &bar);
	o.progress = dl_progress_cb;
	o.progress_user = &prog;
	char out[4096];
	double t0 = cli_now();
	int st = burrow_prep(argv[optind], &o, out, sizeof out);
	dl_progress_done(&prog);
	cli_progress_done(&bar);
	if (st == BURROW_E_EXISTS && !o.overwrite)
		return cli_fail("prep", "%s (use --force to replace it)", burrow_last_error());
	if (st < 0)
		return cli_lib_fail("prep", st);
	if (!quiet) {
		burrow_dataset *ds;
		if (burrow_dataset_open(&ds, out) == 0 && burrow_dataset_hetero(ds)) {
			typed_summary(ds, out, cli_now() - t0);
			burrow_dataset_close(ds);
		} else if (ds) {
			const burrow_dataset_info *in = burrow_dataset_get_info(ds);
			char a[32], b[32];
			fprintf(stderr,
				"burrow: prep: wrote %s in %.1f s: %s nodes, %s edges%s, %lld %s "
				"features, %d classes, splits %lld / %lld / %lld\n",
				out, cli_now() - t0, cli_grouped(in->num_nodes, a, sizeof a),
				cli_grouped(in->num_edges, b, sizeof b), in->symmetric ? " (both directions)" : " (directed)",
				(long long)in->feat_dim,
				burrow_dtype_name(in->feat_dtype), in->num_classes, (long long)in->num_train,
				(long long)in->num_valid, (long long)in->num_test);
			burrow_dataset_close(ds);
		}
	}
	return EXIT_OK;
}
