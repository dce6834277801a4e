/* cmd_import.c: burrow import OUT --edges FILE [--num-nodes N] ...: users' own graphs, with a
 * summary of what was dropped and the split sizes. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow import OUT --edges FILE [--num-nodes N] [--header] [--features F.npy]\n"
	       "                    [--labels L.npy] [--train T.npy --valid V.npy --test S.npy | --split a,b,c]\n"
	       "                    [--seed S] [--undirected] [--feat-dtype f32|f16] [--name NAME] [--mem BYTES]\n"
	       "                    [--tmp DIR] [--force] [--quiet]\n"
	       "                    [--edge-features F.npy|F.csv [--node-features-from-edges mean|sum|max]]\n"
	       "                    [--relabel] [--content NODES.txt] [--split-name NAME] [--multilabel]\n"
	       "                    [--order bfs|degree|rcm|random]\n"
	       "       burrow import --add-split DIR --split-name NAME (--train T.npy --valid V.npy --test S.npy |\n"
	       "                    --split a,b,c [--seed S]) [--force]\n"
	       "       burrow import OUT --edges FILE --edge-split a,b,c [--seed S] [--undirected] [--features F.npy]\n"
	       "                    [other options as above, but no labels or node splits]\n"
	       "       burrow import OUT --node-type NAME=COUNT[:F.npy] ... --relation SRC,NAME,DST=FILE ...\n"
	       "                    [--target TYPE --labels L.npy [--split-dir DIR | --train ... | --split a,b,c]]\n"
	       "                    [--add-reverse] [--fill mean] [other options as above]\n\n"
	       "Write the dataset directory OUT from your own files, then say what was dropped and the\n"
	       "split sizes.\n"
	       "  --edges FILE       .npy of shape (2, E) or (E, 2), int32 or int64; or text: one edge\n"
	       "                     'src dst' a line, separated by a comma, tab or blanks, optionally\n"
	       "                     gzip'ed (.gz), '#' starts a comment line; a first line holding a\n"
	       "                     letter (such as 'src,dst') is a header and skipped\n"
	       "  --header           skip the text's first line whatever it holds\n"
	       "  --num-nodes N      ids must lie in [0, N) (default: the largest id + 1, or the rows of\n"
	       "                     --features or --labels when they have more)\n"
	       "  --features F.npy   [N, D] float32, float16 or float64\n"
	       "  --labels L.npy     [N] or [N, 1]: integers (-1 = unlabeled), or floats with NaN = unlabeled\n"
	       "                     [N, T] (T > 1; int8/int32/int64/bool/float), or a text file of T numbers\n"
	       "                     a line: multi-label, each 1, 0, or -1 / NaN unknown (labels.npy int8 [N, T])\n"
	       "  --train/--valid/--test F.npy   node ids (int32/int64), or bool masks of length N\n"
	       "  --split a,b,c      instead: a random split of the labeled nodes (all nodes without labels),\n"
	       "                     M of them: round(a M) train, round(b M) valid, and the rest test when\n"
	       "                     a + b + c = 1 (else round(c M)); each file sorted (e.g. 0.6,0.2,0.2)\n"
	       "  --seed S           the random split's seed (0); the same seed gives the same split\n"
	       "  --undirected       store both directions of every edge (the graph is then symmetric)\n"
	       "  --feat-dtype T     f32 or f16 (float16 input stays f16, anything else becomes f32)\n"
	       "  --name NAME        the name in meta.json (OUT's folder name)\n"
	       "  --mem BYTES        memory for the edge list before spilling to disk (half the physical memory or of the cgroup's limit)\n"
	       "  --tmp DIR          folder for spilled runs (beside OUT)\n"
	       "  --order O          renumber the nodes in a locality order, bfs, degree, rcm or random (from\n"
	       "                     --seed), as 'burrow reorder' does: OUT gets orig_ids.npy back to the input's\n"
	       "                     ids (composed with --relabel's; docs/store.md); imported into a scratch\n"
	       "                     folder beside OUT first (twice the disk while it runs); one node type only\n"
	       "  --force            replace OUT if it exists\n"
	       "  --quiet            no progress and no summary\n"
	       "  --relabel          the ids are keys (integers, or any text without blanks or commas),\n"
	       "                     numbered 0..N-1 in first-seen order (--content's lines, then the\n"
	       "                     edges); OUT/orig_ids.npy (int64) or orig_ids.txt (text) maps back, and\n"
	       "                     predict / embed write each row's original id beside their output.\n"
	       "                     .npy features, labels and split ids / masks are keyed by the\n"
	       "                     original integer ids (row k = id k)\n"
	       "  --content F        a LINQS-style node file instead of --features and --labels: 'id f_1\n"
	       "                     ... f_D label' a line; labels are class ids or names (numbered in\n"
	       "                     sorted order); nodes without a line get zero features and no label\n"
	       "  --split-name NAME  the split given (files or --split) is the named split split/NAME/\n"
	       "                     (burrow train / eval --split-name NAME; default: split/)\n"
	       "  --add-split DIR    add the named split to the dataset DIR, nothing else rewritten\n"
	       "                     (a dataset's ten published splits: ten --add-split runs)\n"
	       "  --multilabel       labels [N, T] stay T binary tasks even when one-hot (each class a task)\n"
	       "Integer features (int8 ... int64, bool) become float32, one-hot labels [N, C] class ids\n"
	       "(unless --multilabel),\n"
	       "uint8 / bool masks node ids: each said in one line. More than half the nodes without an\n"
	       "edge (sparse ids) is warned about: --relabel.\n"
	       "Self-loops and repeated edges are dropped (with --undirected, (v, u) after (u, v) repeats it).\n"
	       "  --edge-split a,b,c link prediction: the edges (each once) shuffled with --seed and cut into\n"
	       "                     train, valid and test as --split cuts nodes; the graph holds the train\n"
	       "                     edges (both directions with --undirected), valid and test get as many\n"
	       "                     uniformly drawn node pairs that are not edges as negatives (the whole\n"
	       "                     graph is held in memory)\n\n"
	       "  --edge-features F  one row per edge of --edges, in its order: .npy [E] (weights) or [E, De]\n"
	       "                     float, or text (csv, tsv or blanks, .gz) of De numbers a line. Each row\n"
	       "                     follows its edge into the CSR (both directions with --undirected); of\n"
	       "                     repeated edges the first keeps its row (docs/format.md)\n"
	       "  --node-features-from-edges R   node features [N, De] float32: the mean, sum or max of\n"
	       "                     the edge features over each node's stored edges (instead of --features)\n\n"
	       "Typed graphs (format version 2; docs/datasets.md):\n"
	       "  --node-type NAME=COUNT[:F.npy]   a node type, its ids [0, COUNT), its features [COUNT, D]\n"
	       "                     (none: a featureless type); repeat for each type\n"
	       "  --relation SRC,NAME,DST=FILE     edges 'src dst' (SRC-type id, DST-type id) as --edges\n"
	       "                     takes them; repeat for each relation. Repeated edges are stored once,\n"
	       "                     self-loops kept\n"
	       "  --target TYPE      the labelled type: --labels, the splits and --split are its\n"
	       "  --split-dir DIR    DIR/{train,valid,test}.npy, or OGB's DIR/TYPE/{train,valid,test}.npy\n"
	       "  --add-reverse      add (DST, rev_NAME, SRC) for each relation with SRC != DST; a relation\n"
	       "                     with SRC == DST is made symmetric instead\n"
	       "  --fill mean        features for featureless types: the mean of their neighbors' over the\n"
	       "                     relations to types with features (rounds: see docs/datasets.md)\n");
}

enum { O_EDGES = 256, O_NODES, O_FEAT, O_LABELS, O_TRAIN, O_VALID, O_TEST, O_UNDIR, O_DTYPE, O_NAME, O_MEM, O_TMP,
       O_FORCE, O_QUIET, O_HEADER, O_SPLIT, O_SEED, O_NTYPE, O_REL, O_TARGET, O_SPLITDIR, O_REVERSE, O_FILL, O_ESPLIT,
       O_HELP, O_EFEAT, O_FROM_EDGES, O_RELABEL, O_CONTENT, O_SPLIT_NAME, O_ADD_SPLIT, O_MULTILABEL, O_ORDER };

/* --node-type NAME=COUNT[:F.npy], parsed in place. */
static bool parse_type(char *s, burrow_import_type *t)
{
	char *eq = strchr(s, '='), *colon;
	int64_t v;
	if (!eq || eq == s)
		return false;
	*eq = '\0';
	if ((colon = strchr(eq + 1, ':'))) {
		*colon = '\0';
		if (!colon[1])
			return false;
	}
	if (!cli_i64(eq + 1, &v) || v < 1)
		return false;
	*t = (burrow_import_type){.name = s, .num_nodes = v, .features = colon ? colon + 1 : NULL};
	return true;
}

/* --relation SRC,NAME,DST=FILE, parsed in place. */
static bool parse_relation(char *s, burrow_import_relation *r)
{
	char *eq = strchr(s, '=');
	if (!eq || !eq[1])
		return false;
	*eq = '\0';
	char *a = strchr(s, ','), *b = a ? strchr(a + 1, ',') : NULL;
	if (!a || !b || strchr(b + 1, ',') || a == s || b == a + 1 || !b[1])
		return false;
	*a = *b = '\0';
	*r = (burrow_import_relation){.src = s, .name = a + 1, .dst = b + 1, .edges = eq + 1};
	return true;
}

/* The split sizes, or how to get a split. */
static void split_summary(const burrow_import_stats *is)
{
	if (is->split_sizes[0] + is->split_sizes[1] + is->split_sizes[2] > 0 || is->split_random) {
		char x[32], y[32], z[32];
		fprintf(stderr, "burrow: import: split%s: train %s, valid %s, test %s nodes\n",
			is->split_random ? " (random)" : "", cli_grouped(is->split_sizes[0], x, sizeof x),
			cli_grouped(is->split_sizes[1], y, sizeof y), cli_grouped(is->split_sizes[2], z, sizeof z));
	} else {
		fprintf(stderr, "burrow: import: no split (give --split 0.6,0.2,0.2 or split files to train on it)\n");
	}
}

/* The sizes of the edge split import drew. */
static void edge_split_summary(const burrow_import_stats *is)
{
	char a[32], b[32], c[32];
	fprintf(stderr, "burrow: import: edge split (random): train %s, valid %s, test %s edges; as many negative pairs "
		"for valid and for test\n", cli_grouped(is->edge_split_sizes[0], a, sizeof a),
		cli_grouped(is->edge_split_sizes[1], b, sizeof b), cli_grouped(is->edge_split_sizes[2], c, sizeof c));
}

/* What a typed import wrote, from the dataset it wrote. */
static void typed_summary(const char *out, double secs)
{
	burrow_dataset *ds;
	if (burrow_dataset_open(&ds, out) != 0)
		return;
	const burrow_hetero *h = burrow_dataset_hetero(ds);
	const burrow_dataset_info *in = burrow_dataset_get_info(ds);
	if (h) {
		char a[32];
		fprintf(stderr, "burrow: import: wrote %s in %.1f s: %d node types, %d relations, %s edges", out, secs,
			h->num_types, h->num_relations, cli_grouped(in->num_edges, a, sizeof a));
		if (h->target_type >= 0)
			fprintf(stderr, ", target %s with %d classes", cli_text(h->type_names[h->target_type]), in->num_classes);
		fputc('\n', stderr);
		for (int t = 0; t < h->num_types; t++) {
			burrow_type_info ti;
			if (burrow_dataset_type_info(ds, t, &ti) == 0)
				fprintf(stderr, "burrow: import:   %s: %s nodes, %lld features\n", cli_text(ti.name),
					cli_grouped(ti.num_nodes, a, sizeof a), (long long)ti.feat_dim);
		}
	}
	burrow_dataset_close(ds);
}

/* --add-split DIR --split-name NAME: a named split into an existing dataset. */
static int add_split(const char *dir, burrow_import_opts *o, int extra, bool quiet)
{
	if (extra)
		return cli_usage("import", "--add-split DIR takes no output directory");
	if (!o->split_name)
		return cli_usage("import", "--add-split wants --split-name NAME");
	if (o->edges || o->features || o->labels || o->content || o->relabel || o->num_types || o->num_relations)
		return cli_usage("import", "--add-split writes a split only: give --train/--valid/--test or --split");
	int st = burrow_import_add_split(dir, o);
	if (st == BURROW_E_EXISTS && !o->overwrite)
		return cli_fail("import", "%s (use --force to replace it)", burrow_last_error());
	if (st < 0)
		return cli_lib_fail("import", st);
	if (!quiet) {
		char x[32], y[32], z[32];
		const burrow_import_stats *is = o->stats;
		fprintf(stderr, "burrow: import: added split %s%s to %s: train %s, valid %s, test %s nodes\n", o->split_name,
			is->split_random ? " (random)" : "", dir, cli_grouped(is->split_sizes[0], x, sizeof x),
			cli_grouped(is->split_sizes[1], y, sizeof y), cli_grouped(is->split_sizes[2], z, sizeof z));
	}
	return EXIT_OK;
}

int cmd_import(int argc, char **argv)
{
	static const struct option lo[] = {
		{"edges", required_argument, 0, O_EDGES},   {"num-nodes", required_argument, 0, O_NODES},
		{"features", required_argument, 0, O_FEAT}, {"labels", required_argument, 0, O_LABELS},
		{"train", required_argument, 0, O_TRAIN},   {"valid", required_argument, 0, O_VALID},
		{"test", required_argument, 0, O_TEST},     {"undirected", no_argument, 0, O_UNDIR},
		{"feat-dtype", required_argument, 0, O_DTYPE}, {"name", required_argument, 0, O_NAME},
		{"mem", required_argument, 0, O_MEM},       {"tmp", required_argument, 0, O_TMP},
		{"force", no_argument, 0, O_FORCE},         {"quiet", no_argument, 0, O_QUIET},
		{"header", no_argument, 0, O_HEADER},       {"split", required_argument, 0, O_SPLIT},
		{"seed", required_argument, 0, O_SEED},     {"node-type", required_argument, 0, O_NTYPE},
		{"relation", required_argument, 0, O_REL},  {"target", required_argument, 0, O_TARGET},
		{"split-dir", required_argument, 0, O_SPLITDIR}, {"add-reverse", no_argument, 0, O_REVERSE},
		{"fill", required_argument, 0, O_FILL},     {"help", no_argument, 0, O_HELP},
		{"edge-split", required_argument, 0, O_ESPLIT},
		{"edge-features", required_argument, 0, O_EFEAT},
		{"node-features-from-edges", required_argument, 0, O_FROM_EDGES},
		{"relabel", no_argument, 0, O_RELABEL},     {"content", required_argument, 0, O_CONTENT},
		{"split-name", required_argument, 0, O_SPLIT_NAME}, {"add-split", required_argument, 0, O_ADD_SPLIT},
		{"multilabel", no_argument, 0, O_MULTILABEL}, {"order", required_argument, 0, O_ORDER},
		{0, 0, 0, 0},
	};
	burrow_import_type types[BURROW_MAX_TYPES];
	burrow_import_relation rels[BURROW_MAX_RELATIONS];
	burrow_import_opts o;
	burrow_import_defaults(&o);
	burrow_import_stats is = {.size = sizeof is};
	o.stats = &is;
	bool quiet = false;
	const char *add_to = NULL; /* --add-split DIR */
	int64_t v;
	int c;
	while ((c = cli_getopt("import", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h':
		case O_HELP: help(); return EXIT_OK;
		case O_EDGES: o.edges = optarg; break;
		case O_NODES:
			if (!cli_i64(optarg, &v) || v < 1)
				return cli_usage("import", "--num-nodes wants a count >= 1, got '%s' (leave it out to take the "
						 "largest id + 1)", optarg);
			o.num_nodes = v;
			break;
		case O_HEADER: o.header = true; break;
		case O_SPLIT:
			if (!cli_split(optarg, o.split))
				return cli_usage("import", "--split wants three fractions a,b,c >= 0 summing to at most 1 "
						 "(such as 0.6,0.2,0.2), got '%s'", optarg);
			break;
		case O_ESPLIT:
			if (!cli_split(optarg, o.edge_split))
				return cli_usage("import", "--edge-split wants three fractions a,b,c >= 0 summing to at most 1 "
						 "(such as 0.8,0.1,0.1), got '%s'", optarg);
			break;
		case O_SEED:
			if (!cli_i64(optarg, &v) || v < 0)
				return cli_usage("import", "--seed wants an integer >= 0, got '%s'", optarg);
			o.split_seed = (uint64_t)v;
			break;
		case O_FEAT: o.features = optarg; break;
		case O_LABELS: o.labels = optarg; break;
		case O_TRAIN: o.train = optarg; break;
		case O_VALID: o.valid = optarg; break;
		case O_TEST: o.test = optarg; break;
		case O_UNDIR: o.undirected = true; break;
		case O_DTYPE:
			o.feat_dtype = burrow_dtype_parse(optarg);
			if (o.feat_dtype != BURROW_DTYPE_F32 && o.feat_dtype != BURROW_DTYPE_F16)
				return cli_usage("import", "--feat-dtype wants f32 or f16, got '%s'", optarg);
			break;
		case O_NAME: o.name = optarg; break;
		case O_MEM:
			if (!cli_bytes(optarg, &v) || v < 1)
				return cli_usage("import", "--mem wants a size in bytes (K/M/G suffixes), got '%s'", optarg);
			o.mem_bytes = (size_t)v;
			break;
		case O_TMP: o.tmp_dir = optarg; break;
		case O_FORCE: o.overwrite = true; break;
		case O_QUIET: quiet = true; break;
		case O_NTYPE:
			if (o.num_types == BURROW_MAX_TYPES)
				return cli_usage("import", "at most %d --node-type", BURROW_MAX_TYPES);
			if (!parse_type(optarg, &types[o.num_types++]))
				return cli_usage("import", "--node-type wants NAME=COUNT or NAME=COUNT:FEATURES.npy (COUNT >= 1)");
			o.types = types;
			break;
		case O_REL:
			if (o.num_relations == BURROW_MAX_RELATIONS)
				return cli_usage("import", "at most %d --relation", BURROW_MAX_RELATIONS);
			if (!parse_relation(optarg, &rels[o.num_relations++]))
				return cli_usage("import", "--relation wants SRC,NAME,DST=EDGES");
			o.relations = rels;
			break;
		case O_TARGET: o.target = optarg; break;
		case O_SPLITDIR: o.split_dir = optarg; break;
		case O_REVERSE: o.add_reverse = true; break;
		case O_FILL:
			if (strcmp(optarg, "mean"))
				return cli_usage("import", "--fill wants mean, got '%s'", optarg);
			o.fill = BURROW_FEAT_FILL_MEAN;
			break;
		case O_EFEAT: o.edge_features = optarg; break;
		case O_RELABEL: o.relabel = true; break;
		case O_MULTILABEL: o.multilabel = true; break;
		case O_CONTENT: o.content = optarg; break;
		case O_SPLIT_NAME: o.split_name = optarg; break;
		case O_ADD_SPLIT: add_to = optarg; break;
		case O_ORDER:
			if (burrow_order_parse(optarg, &o.order))
				return cli_usage("import", "--order wants bfs, degree, rcm or random, got '%s'", optarg);
			break;
		case O_FROM_EDGES:
			if (burrow_edge_reduce_parse(optarg, &o.edge_reduce) < 0)
				return cli_usage("import", "--node-features-from-edges wants mean, sum or max, got '%s'", optarg);
			o.node_features_from_edges = true;
			break;
		}
	}
	if (add_to)
		return add_split(add_to, &o, argc - optind, quiet);
	if (argc - optind != 1)
		return cli_usage("import", "expected one output directory");
	const bool typed = o.num_types > 0 || o.num_relations > 0;
	if (typed && (!o.num_types || !o.num_relations))
		return cli_usage("import", "a typed graph wants --node-type and --relation, each at least once");
	if (typed && (o.edges || o.features || o.num_nodes))
		return cli_usage("import", "--edges, --features and --num-nodes are for one node type; a typed graph takes "
				 "--relation and --node-type");
	if (!typed && (o.target || o.split_dir || o.add_reverse || o.fill))
		return cli_usage("import", "--target, --split-dir, --add-reverse and --fill are for typed graphs "
				 "(--node-type, --relation)");
	if (!typed && !o.edges)
		return cli_usage("import", "--edges is required");
	if (o.order != BURROW_ORDER_NONE && typed)
		return cli_usage("import", "--order renumbers datasets of one node type (--edges), not a typed graph");
	if ((o.relabel || o.content) && typed)
		return cli_usage("import", "--relabel and --content are for one node type (--edges)");
	if (o.relabel && o.num_nodes)
		return cli_usage("import", "--relabel counts the ids it finds: leave --num-nodes out");
	if (o.content && (o.features || o.labels))
		return cli_usage("import", "--content gives the features and labels: no --features or --labels with it");
	if (o.edge_split[0] + o.edge_split[1] + o.edge_split[2] > 0 &&
	    (typed || o.labels || o.train || o.split[0] + o.split[1] + o.split[2] > 0))
		return cli_usage("import", "--edge-split (link prediction) takes one node type and no --labels, --split "
				 "or split files");
	if (o.train && o.split[0] + o.split[1] + o.split[2] > 0)
		return cli_usage("import", "--split draws a split: give it or --train/--valid/--test, not both");
	const char *out = argv[optind];
	cli_progress prog;
	cli_progress_init(&prog, quiet);
	o.progress = cli_progress_cb;
	o.progress_user = &prog;
	double t0 = cli_now();
	int st = burrow_import(out, &o);
	cli_progress_done(&prog);
	if (st == BURROW_E_EXISTS && !o.overwrite)
		return cli_fail("import", "%s (use --force to replace it)", burrow_last_error());
	if (st < 0)
		return cli_lib_fail("import", st);
	if (!quiet && typed)
		typed_summary(out, cli_now() - t0);
	if (!quiet && !typed) {
		burrow_dataset *ds;
		if (burrow_dataset_open(&ds, out) == 0) {
			const burrow_dataset_info *in = burrow_dataset_get_info(ds);
			char a[32], b[32];
			fprintf(stderr, "burrow: import: wrote %s in %.1f s: %s nodes%s, %s edges%s, %lld features, %d classes\n",
				out, cli_now() - t0, cli_grouped(in->num_nodes, a, sizeof a),
				o.relabel ? (is.orig_ids_text ? " (relabelled; orig_ids.txt)" : " (relabelled; orig_ids.npy)")
				: is.num_nodes_inferred ? " (largest id + 1)" : "", cli_grouped(in->num_edges, b, sizeof b),
				in->symmetric ? " (both directions)" : "", (long long)in->feat_dim, in->num_classes);
			burrow_dataset_close(ds);
		}
		char r[32], l[32], d[32];
		fprintf(stderr, "burrow: import: read %s edges%s; dropped %s self-loops and %s repeated edges\n",
			cli_grouped(is.edges_read, r, sizeof r), is.header_skipped ? " (after a header line)" : "",
			cli_grouped(is.self_loops, l, sizeof l), cli_grouped(is.duplicates, d, sizeof d));
	}
	if (!quiet && o.edge_split[0] + o.edge_split[1] + o.edge_split[2] > 0)
		edge_split_summary(&is);
	else if (!quiet)
		split_summary(&is);
	return EXIT_OK;
}
