/* fuzz_npy.c: libFuzzer harness for .npy files: the header parser on the bytes, then the
 * file read whole (bw_npy_load) and mapped (bw_npy_mmap), which check the data's size
 * against the header. */
#include "../../core/internal.h"
#include "../../graph/npy.h"
#include "fuzz.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mem0 = fz_mem_now();
	bw_npy h;
	if (bw_npy_parse(data, size, &h, "fuzz.npy") == 0)
		(void)bw_npy_data_bytes(&h);
	char path[512];
	fz_write(fz_path(path, sizeof path, "a.npy"), data, size);
	void *buf = NULL;
	if (bw_npy_load(path, &h, &buf) == 0)
		bw_free(buf);
	bw_npy_map m;
	if (bw_npy_mmap(path, &h, &m) == 0)
		bw_npy_unmap(&m);
	fz_mem_check(mem0, "npy");
	return 0;
}
