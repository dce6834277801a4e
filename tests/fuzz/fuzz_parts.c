/* fuzz_parts.c: libFuzzer harness for whole parts directories (meta.json of the parts and
 * part-i/ dataset directories with their exchange arrays; the input unpacks as in fuzz.h):
 * burrow_parts_open, then burrow_part_open of every part it accepts, and an owner lookup of
 * every id. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mem0 = fz_mem_now();
	char dir[512];
	fz_unpack(data, size, fz_path(dir, sizeof dir, "parts"));
	burrow_parts *ps;
	if (burrow_parts_open(&ps, dir) == 0) {
		const burrow_parts_info *in = burrow_parts_get_info(ps);
		for (int i = 0; i < in->num_parts && i < 8; i++) {
			burrow_part *p;
			if (burrow_part_open(&p, ps, i) == 0) {
				const burrow_part_info *pi = burrow_part_get_info(p);
				volatile int64_t sum = 0;
				for (int64_t k = 0; k < pi->num_halo; k++)
					sum += pi->halo_ids[k];
				for (int64_t k = 0; k < pi->num_send; k++)
					sum += pi->send_ids[k];
				(void)sum;
				burrow_part_close(p);
			}
		}
		for (int64_t g = -1; g <= in->num_nodes && g < 4096; g++)
			(void)burrow_parts_owner(ps, g);
		burrow_parts_close(ps);
	}
	fz_mem_check(mem0, "parts");
	return 0;
}
