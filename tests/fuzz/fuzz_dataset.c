/* fuzz_dataset.c: libFuzzer harness for whole dataset directories: the input unpacks into
 * a directory (meta.json, indptr.npy, indices.npy, features.npy, labels.npy, the split folder;
 * for a typed dataset, format version 2, relations/<src>___<name>___<dst>/ and features/;
 * see fuzz.h and pack.py), which burrow_dataset_open reads and burrow_dataset_verify checks;
 * what it accepts is read through every accessor. */
#include "fuzz.h"

#include <stdio.h>

/* Every id of every relation of a verified typed dataset, and every type's info. */
static int64_t touch_typed(const burrow_dataset *ds, const burrow_hetero *h)
{
	int64_t sum = burrow_hetero_check(h) == 0;
	for (int i = 0; i < h->num_relations; i++) {
		const burrow_csr *g = &h->rel[i].graph;
		for (int64_t v = 0; v <= g->num_nodes; v++)
			sum += g->indptr[v];
		for (int64_t j = 0; j < g->num_edges; j++)
			sum += burrow_csr_index(g, j);
	}
	for (int t = 0; t < h->num_types; t++) {
		burrow_type_info ti;
		if (burrow_dataset_type_info(ds, t, &ti) == 0)
			sum += ti.num_nodes + ti.feat_dim + ti.features_offset;
	}
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mem0 = fz_mem_now();
	char dir[512];
	fz_unpack(data, size, fz_path(dir, sizeof dir, "ds"));
	burrow_dataset *ds;
	if (burrow_dataset_open(&ds, dir) == 0) {
		const burrow_dataset_info *in = burrow_dataset_get_info(ds);
		const burrow_csr *g = burrow_dataset_graph(ds);
		if (burrow_dataset_verify(ds) == 0) {
			/* verified: every access below is in bounds */
			volatile int64_t sum = 0;
			const burrow_hetero *h = burrow_dataset_hetero(ds);
			if (h)
				sum += touch_typed(ds, h);
			for (int64_t j = 0; g && j < g->num_edges; j++)
				sum += burrow_csr_index(g, j);
			const int32_t *y = burrow_dataset_labels(ds);
			for (int64_t v = 0; y && v < in->num_nodes; v++)
				sum += y[v];
			for (int s = BURROW_SPLIT_TRAIN; s <= BURROW_SPLIT_TEST; s++) {
				int64_t n;
				const int64_t *ids = burrow_dataset_split(ds, s, &n);
				for (int64_t i = 0; ids && i < n; i++)
					sum += ids[i];
			}
			(void)sum;
		}
		(void)burrow_dataset_features_path(ds);
		(void)burrow_dataset_features_offset(ds);
		(void)burrow_dataset_disk_bytes(ds);
		burrow_dataset_close(ds);
	}
	fz_mem_check(mem0, "dataset");
	return 0;
}
