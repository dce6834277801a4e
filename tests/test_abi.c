/* test_abi.c: the size field of options and stats structs: an older caller gets defaults, a bad size is refused. */
#include <criterion/criterion.h>

#include "../graph/npy.h"
#include "util.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

TU_SCRATCH_SUITE(abi, 60);

/* ref_: the fanout of a layer as burrow_train_opts documents it (0 = 5 x (L - l)). */
static int ref_fanout(int layers, int given, int layer) { return given != 0 ? given : 5 * (layers - layer); }

/* An older caller's train options end before `fanout`: the library must not read the
 * bytes past its size (here garbage) and takes the default fanout instead; a caller that
 * knows the field gets its own value. */
Test(abi, older_options_get_defaults_for_the_rest)
{
	burrow_train_opts o;
	burrow_train_defaults(&o);
	cr_assert_eq(o.size, sizeof o);
	o.layers = 2;
	for (int l = 0; l < BURROW_MAX_LAYERS; l++)
		o.fanout[l] = 77 + l;
	for (int l = 0; l < 2; l++)
		cr_assert_eq(burrow_train_fanout(&o, l), ref_fanout(2, 77 + l, l));
	burrow_train_opts d;
	burrow_train_defaults(&d);
	o.size = offsetof(burrow_train_opts, fanout);
	/* layers lies before fanout in the struct (checked), so the caller's 2 still counts */
	cr_assert_lt(offsetof(burrow_train_opts, layers), o.size);
	for (int l = 0; l < 2; l++)
		cr_assert_eq(burrow_train_fanout(&o, l), ref_fanout(2, d.fanout[l], l), "layer %d: %d", l,
			     burrow_train_fanout(&o, l));
}

/* Options whose size is 0 (not filled by _defaults()) or smaller than the size field:
 * BURROW_E_INVAL naming the struct, before anything else is looked at. A newer caller's
 * field past what this library knows, when set: BURROW_E_UNSUPPORTED; when zero: fine. */
Test(abi, bad_option_sizes_are_refused)
{
	burrow_store_opts o;
	burrow_store_defaults(&o);
	burrow_store *s;
	for (size_t bad = 0; bad < sizeof(size_t); bad += 3) {
		o.size = bad;
		cr_assert_eq(burrow_store_open(&s, "/nonexistent/f.npy", &o), BURROW_E_INVAL);
		cr_assert(strstr(burrow_last_error(), "burrow_store_opts"), "%s", burrow_last_error());
		cr_assert_null(s);
	}
	burrow_gen_opts g;
	memset(&g, 0, sizeof g); /* a caller that skipped burrow_gen_defaults */
	g.kind = BURROW_GEN_CSBM;
	char *out = tu_path(tu_dir, "g");
	cr_assert_eq(burrow_gen(&g, out), BURROW_E_INVAL);
	cr_assert(strstr(burrow_last_error(), "burrow_gen_opts"), "%s", burrow_last_error());

	/* a newer caller: this library's options followed by one more field */
	struct {
		burrow_gen_opts known;
		int64_t newer;
	} n;
	memset(&n, 0, sizeof n);
	burrow_gen_defaults(&n.known, BURROW_GEN_CSBM);
	n.known.size = sizeof n;
	n.known.num_nodes = 50;
	n.known.feat_dim = 4;
	n.newer = 1;
	cr_assert_eq(burrow_gen(&n.known, out), BURROW_E_UNSUPPORTED);
	cr_assert(strstr(burrow_last_error(), "burrow_gen_opts"), "%s", burrow_last_error());
	n.newer = 0;
	cr_assert_eq(burrow_gen(&n.known, out), 0, "%s", burrow_last_error());
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_get_info(ds)->num_nodes, 50);
	burrow_dataset_close(ds);
	free(out);
}

/* Stats: the library writes at most the caller's size (an older caller's shorter struct
 * keeps the bytes past it), the fields within it as a full-size call gives them; a size
 * below the size field writes nothing and says which struct. */
Test(abi, stats_written_up_to_the_callers_size)
{
	const int64_t shape[2] = {64, 8};
	float rows[64 * 8];
	for (int i = 0; i < 64 * 8; i++)
		rows[i] = (float)i;
	char *path = tu_path(tu_dir, "f.npy");
	cr_assert_eq(bw_npy_save(path, BURROW_DTYPE_F32, 2, shape, rows, 4096), 0, "%s", burrow_last_error());
	burrow_store *s;
	cr_assert_eq(burrow_store_open(&s, path, NULL), 0, "%s", burrow_last_error());
	const int64_t ids[3] = {5, 1, 63};
	float got[3 * 8];
	cr_assert_eq(burrow_store_gather(s, ids, 3, got), 0, "%s", burrow_last_error());

	burrow_store_stats full = {.size = sizeof full};
	burrow_store_get_stats(s, &full);
	cr_assert_eq(full.size, sizeof full);
	cr_assert_eq(full.gathers, 1);
	cr_assert_eq(full.rows, 3);

	const size_t older = offsetof(burrow_store_stats, cache_hits); /* size, gathers, rows */
	unsigned char buf[sizeof(burrow_store_stats) + 16];
	memset(buf, 0xAB, sizeof buf);
	memcpy(buf, &older, sizeof older);
	burrow_store_get_stats(s, (burrow_store_stats *)(void *)buf);
	burrow_store_stats part;
	memcpy(&part, buf, sizeof part);
	cr_assert_eq(part.size, older, "the caller's size was changed");
	cr_assert_eq(part.gathers, full.gathers);
	cr_assert_eq(part.rows, full.rows);
	for (size_t i = older; i < sizeof buf; i++)
		cr_assert_eq(buf[i], 0xAB, "byte %zu past the caller's %zu was written", i, older);

	memset(buf, 0xAB, sizeof buf);
	memset(buf, 0, sizeof(size_t)); /* size 0 */
	burrow_store_get_stats(s, (burrow_store_stats *)(void *)buf);
	for (size_t i = sizeof(size_t); i < sizeof buf; i++)
		cr_assert_eq(buf[i], 0xAB, "byte %zu written for a size of 0", i);
	cr_assert(strstr(burrow_last_error(), "burrow_store_stats"), "%s", burrow_last_error());
	burrow_store_close(s);
	free(path);
}
