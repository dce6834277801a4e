/* fuzz_lsc.c: libFuzzer harness for burrow prep mag240m|igbh: the input unpacks into the folder that holds processed/ (fuzz.h, pack.py), the first file named "layout" picks igbh when it holds 'i' and --fill none when it holds 'n'; what prep accepts is opened, verified and read through every type's features. */
#include "fuzz.h"

#include <stdio.h>
#include <string.h>

/* The 'layout' file's first bytes, or "". */
static void layout_of(const char *dir, char *buf, size_t cap)
{
	char p[600];
	snprintf(p, sizeof p, "%s/layout", dir);
	FILE *f = fopen(p, "rb");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;
	buf[n] = '\0';
	if (f)
		fclose(f);
}

/* Every featured type's rows through a store: the in-place file and the filled ones. */
static void read_types(const burrow_dataset *ds, const burrow_hetero *h)
{
	for (int t = 0; t < h->num_types; t++) {
		burrow_type_info ti;
		burrow_store *s;
		if (burrow_dataset_type_info(ds, t, &ti) || !ti.feat_dim)
			continue;
		burrow_store_opts so;
		burrow_store_defaults(&so);
		so.engine = BURROW_STORE_PREAD;
		so.out_dtype = BURROW_DTYPE_F32;
		if (burrow_store_open_type(&s, ds, t, &so)) /* an .npy or a raw file, where it is */
			continue;
		float row[1024];
		for (int64_t v = 0; v < ti.num_nodes && ti.feat_dim <= 1024; v++)
			(void)burrow_store_gather(s, &v, 1, row);
		burrow_store_close(s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t mem0 = fz_mem_now();
	char dir[512], out[512], mode[8];
	fz_unpack(data, size, fz_path(dir, sizeof dir, "lsc"));
	fz_path(out, sizeof out, "lsc-out");
	layout_of(dir, mode, sizeof mode);
	burrow_prep_opts o;
	burrow_prep_defaults(&o);
	o.layout = strchr(mode, 'i') ? "igbh" : "mag240m";
	o.fill = strchr(mode, 'n') ? BURROW_FEAT_FILL_NONE : BURROW_FEAT_FILL_MEAN;
	o.out = out;
	o.overwrite = true;
	o.mem_bytes = (size_t)4 << 20;
	burrow_dataset *ds;
	if (burrow_prep(dir, &o, NULL, 0) == 0 && burrow_dataset_open(&ds, out) == 0) {
		const burrow_hetero *h = burrow_dataset_hetero(ds);
		if (burrow_dataset_verify(ds) == 0 && h)
			read_types(ds, h);
		burrow_dataset_close(ds);
	}
	fz_rmtree(out);
	fz_mem_check(mem0, "lsc");
	return 0;
}
