/* catalog.c: the OGB datasets Burrow knows by name (rows from OGB's
 * ogb/nodeproppred/master.csv), and the disk space each needs. */
#include "../core/internal.h"

#include <string.h>
#include <strings.h>

#define OGB_NODEPROP "http://snap.stanford.edu/ogb/data/nodeproppred/"
#define OGB_LINKPROP "http://snap.stanford.edu/ogb/data/linkproppred/"

static const burrow_catalog_entry CATALOG[] = {
	{
		.name = "ogbn-arxiv",
		.url = OGB_NODEPROP "arxiv.zip",
		.download_name = "arxiv",
		.split = "time",
		.num_nodes = 169343,
		.num_edges = 1166243,
		.feat_dim = 128,
		.num_classes = 40,
		.add_inverse_edge = false,
		.binary = false,
		.zip_bytes = (int64_t)79 << 20,          /* about 79 MiB */
	},
	{
		.name = "ogbn-products",
		.url = OGB_NODEPROP "products.zip",
		.download_name = "products",
		.split = "sales_ranking",
		.num_nodes = 2449029,
		.num_edges = 61859140,
		.feat_dim = 100,
		.num_classes = 47,
		.add_inverse_edge = true,
		.binary = false,
		.zip_bytes = (int64_t)1400 * 1000 * 1000, /* about 1.4 GB */
	},
	{
		.name = "ogbn-papers100M",
		.url = OGB_NODEPROP "papers100M-bin.zip",
		.download_name = "papers100M-bin",
		.split = "time",
		.num_nodes = 111059956,
		.num_edges = 1615685872,
		.feat_dim = 128,
		.num_classes = 172,
		.add_inverse_edge = false,
		.binary = true,
		.zip_bytes = (int64_t)(56.17 * 1073741824.0), /* 56.17 GiB */
	},
	{
		.name = "ogbn-mag",
		.url = OGB_NODEPROP "mag.zip",
		.download_name = "mag",
		.split = "time",
		.num_nodes = 1939743,   /* 736,389 papers, 1,134,649 authors, 8,740 institutions, 59,965 fields */
		.num_edges = 21111007,  /* cites, writes, affiliated_with, has_topic */
		.feat_dim = 128,        /* papers only */
		.num_classes = 349,     /* venues of the papers */
		.add_inverse_edge = false,
		.binary = false,
		.zip_bytes = (int64_t)400 * 1000 * 1000, /* about 0.40 GB (OGB's download prompt) */
		.hetero = true,
		.num_relations = 4,
	},
	{
		.name = "ogbn-proteins",
		.url = OGB_NODEPROP "proteins.zip",
		.download_name = "proteins",
		.split = "species",
		.num_nodes = 132534,
		.num_edges = 39561252,
		.feat_dim = 0,          /* none of its own: --node-features-from-edges makes 8 */
		.num_classes = 2,       /* binary, per task */
		.add_inverse_edge = true,
		.binary = false,
		.zip_bytes = (int64_t)216 * 1000 * 1000, /* about 0.21 GB (OGB's download prompt) */
		.edge_feat_dim = 8,
		.num_tasks = 112,
	},
	/* link prediction (OGB's linkproppred master.csv): the zip's raw/edge.csv.gz holds the
	 * training edges (OGB's dataset[0]); the zip sizes are estimates (master.csv has none) */
	{
		.name = "ogbl-collab",
		.url = OGB_LINKPROP "collab.zip",
		.download_name = "collab",
		.split = "time",
		.num_nodes = 235868,
		.num_edges = 1179052,
		.feat_dim = 128,
		.add_inverse_edge = true,
		.zip_bytes = (int64_t)150 * 1000 * 1000,
		.eval_metric = "hits@50",
	},
	{
		.name = "ogbl-ppa",
		.url = OGB_LINKPROP "ppassoc.zip",
		.download_name = "ppassoc",
		.split = "throughput",
		.num_nodes = 576289,
		.num_edges = 21231931,
		.feat_dim = 58,
		.add_inverse_edge = true,
		.zip_bytes = (int64_t)500 * 1000 * 1000,
		.eval_metric = "hits@100",
	},
	{
		.name = "ogbl-ddi",
		.url = OGB_LINKPROP "ddi.zip",
		.download_name = "ddi",
		.split = "target",
		.num_nodes = 4267,
		.num_edges = 1067911,
		.feat_dim = 0,
		.add_inverse_edge = true,
		.zip_bytes = (int64_t)50 * 1000 * 1000,
		.eval_metric = "hits@20",
	},
	{
		.name = "ogbl-citation2",
		.url = OGB_LINKPROP "citation-v2.zip",
		.download_name = "citation-v2",
		.split = "time",
		.num_nodes = 2927963,
		.num_edges = 30387995,
		.feat_dim = 128,
		.add_inverse_edge = false,
		.zip_bytes = (int64_t)2500 * 1000 * 1000,
		.eval_metric = "mrr",
	},
};
#define NCATALOG ((int)(sizeof CATALOG / sizeof CATALOG[0]))

int burrow_catalog_count(void) { return NCATALOG; }

const burrow_catalog_entry *burrow_catalog_get(int i) { return i >= 0 && i < NCATALOG ? &CATALOG[i] : NULL; }

const burrow_catalog_entry *burrow_catalog_find(const char *name)
{
	for (int i = 0; name && i < NCATALOG; i++)
		if (!strcasecmp(name, CATALOG[i].name) || !strcasecmp(name, CATALOG[i].download_name))
			return &CATALOG[i];
	return NULL;
}

void burrow_catalog_space_of(const burrow_catalog_entry *e, burrow_dtype feat_dtype, burrow_catalog_space *out)
{
	const int64_t n = e->num_nodes, entries = 2 * e->num_edges; /* symmetrized, before de-duplication */
	const int64_t id = n < ((int64_t)1 << 31) ? 4 : 8, fsz = feat_dtype == BURROW_DTYPE_F16 ? 2 : 4;
	const int64_t key = n <= ((int64_t)1 << 32) ? 8 : 16;
	out->download = e->zip_bytes;
	/* a typed dataset: an indptr per relation and per reverse (each at most N + 1 rows); with
	 * --fill mean every type may get features */
	const int64_t indptrs = e->hetero ? 2 * e->num_relations : 1;
	out->dataset = 8 * (n + 1) * indptrs + id * entries /* indptr.npy, indices.npy */
		       + 4096 + fsz * n * e->feat_dim /* features.npy */
		       + 4 * n + 8 * n                /* labels.npy, the three splits together */
		       + 16 * 4096 * indptrs;         /* headers, meta.json */
	/* every stored entry as a sort key when the edges spill; a compressed .npz member
	 * (papers100M-bin) is extracted to disk once */
	out->scratch = key * entries + (e->binary ? e->zip_bytes : 0);
	if (e->edge_feat_dim > 0) {
		/* edge_features.npy per entry, features.npy from them (--node-features-from-edges),
		 * int8 labels [N, T]; keys carry an edge id (8 bytes more), and each entry's edge id
		 * waits in a scratch file until the features are gathered */
		out->dataset += 4096 + fsz * entries * e->edge_feat_dim + 4096 + 4 * n * e->edge_feat_dim +
				(int64_t)e->num_tasks * n;
		out->scratch += 8 * entries + 8 * entries;
	}
	/* a link dataset: the edge split beside the graph (positives and OGB's negatives, at most
	 * the stored edges' worth plus citation2's 1000 negatives for each of ~2x86,596 positives),
	 * and its .pt files copied out of the zip once */
	if (e->eval_metric) {
		const int64_t negs = !strcmp(e->eval_metric, "mrr") ? 8 * 1000 * 2 * (int64_t)86596 : 16 * e->num_edges / 4;
		out->dataset += 24 * e->num_edges + negs;
		out->scratch += 16 * e->num_edges + negs;
	}
}
