/* fuzz_pt.c: libFuzzer harness for torch.save files as prep reads OGB's split .pt files and
 * OGB-LSC's split_dict.pt and meta.pt (numpy arrays and scalars): the input is the .pt file;
 * it is opened, each key they use read as a tensor and the counts as integers. */
#include "../../datasets/pt.h"
#include "fuzz.h"

static const char *KEYS[] = {"edge", "edge_neg", "weight", "year", "source_node", "target_node", "target_node_neg",
			     "w", "t", "train", "valid", "test", "test-dev"};
static const char *INTS[] = {"paper", "author", "num_classes"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mem0 = fz_mem_now();
	char path[512];
	fz_write(fz_path(path, sizeof path, "in.pt"), data, size);
	bw_pt *pt;
	if (bw_pt_open(&pt, "in.pt", path, -1) == 0) {
		for (size_t k = 0; k < sizeof KEYS / sizeof *KEYS; k++) {
			bw_pt_tensor t;
			if (bw_pt_get(pt, KEYS[k], &t) == 0)
				bw_free(t.data);
		}
		for (size_t k = 0; k < sizeof INTS / sizeof *INTS; k++) {
			int64_t v;
			(void)bw_pt_get_int(pt, INTS[k], &v);
		}
		bw_pt_close(pt);
	}
	fz_mem_check(mem0, "pt");
	return 0;
}
