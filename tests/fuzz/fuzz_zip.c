/* fuzz_zip.c: libFuzzer harness for zip archives and their members as prep reads them:
 * every member (at most 32) streamed whole (gunzipped when its name ends in .gz, as csv
 * lines then), .npy members streamed as arrays, and the arrays OGB keeps in an .npz member
 * (edge_index, node_feat, node_label, num_nodes_list, num_edges_list) read through the
 * nested-member path. */
#include "../../datasets/dsio.h"
#include "fuzz.h"

#include <zip.h>

static const char *NPZ_ARRAYS[] = {"edge_index.npy", "node_feat.npy", "node_label.npy", "num_nodes_list.npy",
				   "num_edges_list.npy"};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static void read_stream(const bw_src *src, bool gz)
{
	bw_rd *r;
	if (bw_rd_open(&r, src, gz, gz) < 0)
		return;
	const char *p;
	size_t n;
	while (bw_rd_next(r, &p, &n) == 0 && n > 0)
		;
	bw_rd_close(r);
}

static void read_npy(const bw_src *src)
{
	bw_npys s;
	if (bw_npys_open(&s, src) < 0)
		return;
	char buf[4096];
	uint64_t left = (uint64_t)bw_npy_data_bytes(&s.h);
	while (left > 0) {
		size_t n = left < sizeof buf ? (size_t)left : sizeof buf;
		if (bw_npys_read(&s, buf, n) < 0)
			break;
		left -= n;
	}
	bw_npys_close(&s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mem0 = fz_mem_now();
	char path[512];
	fz_write(fz_path(path, sizeof path, "in.zip"), data, size);
	struct zip *za;
	if (bw_zip_open(&za, path, -1) == 0) {
		zip_int64_t n = zip_get_num_entries(za, 0);
		for (zip_int64_t i = 0; i < n && i < 32; i++) {
			const char *name = zip_get_name(za, (zip_uint64_t)i, 0);
			if (!name || ends_with(name, "/"))
				continue;
			char member[512];
			snprintf(member, sizeof member, "%s", name);
			const bw_src src = {.name = member, .path = path, .fd = -1, .member = member};
			if (ends_with(member, ".npy")) {
				read_npy(&src);
			} else if (ends_with(member, ".npz")) {
				for (size_t a = 0; a < sizeof NPZ_ARRAYS / sizeof *NPZ_ARRAYS; a++) {
					const bw_src in = {.name = member, .path = path, .fd = -1, .nested = member,
							   .member = NPZ_ARRAYS[a]};
					read_npy(&in);
				}
			} else {
				read_stream(&src, ends_with(member, ".gz"));
			}
		}
		zip_discard(za);
	}
	fz_mem_check(mem0, "zip");
	return 0;
}
