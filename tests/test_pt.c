/* test_pt.c: the torch.save reader: tensors out of hand-built pickles and real torch files,
 * and one-line refusals of malformed ones (truncated, foreign globals, bad views). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../datasets/pt.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zip.h>

TU_SCRATCH_SUITE(pt, 120);

/* ---------------------------------------------------------------- building pickles */

typedef struct pk {
	uint8_t b[1 << 14];
	size_t n;
} pk;

static void op(pk *p, int c) { p->b[p->n++] = (uint8_t)c; }

static void raw(pk *p, const void *s, size_t n)
{
	memcpy(p->b + p->n, s, n);
	p->n += n;
}

static void str(pk *p, const char *s)
{
	uint32_t n = (uint32_t)strlen(s);
	op(p, 'X');
	raw(p, &n, 4);
	raw(p, s, n);
}

static void glob(pk *p, const char *mod, const char *name)
{
	op(p, 'c');
	raw(p, mod, strlen(mod));
	op(p, '\n');
	raw(p, name, strlen(name));
	op(p, '\n');
}

static void integer(pk *p, int64_t v)
{
	if (v >= INT32_MIN && v <= INT32_MAX) {
		int32_t x = (int32_t)v;
		op(p, 'J');
		raw(p, &x, 4);
	} else {
		op(p, 0x8a);
		op(p, 8);
		raw(p, &v, 8);
	}
}

static void ints(pk *p, int n, const int64_t *v)
{
	op(p, '(');
	for (int k = 0; k < n; k++)
		integer(p, v[k]);
	op(p, 't');
}

/* torch's _rebuild_tensor_v2 of storage `key` as torch.save writes it. */
static void tensor(pk *p, const char *stype, const char *key, int64_t numel, int64_t off, int ndim, const int64_t *size,
		   const int64_t *stride)
{
	glob(p, "torch._utils", "_rebuild_tensor_v2");
	op(p, '(');
	op(p, '(');
	str(p, "storage");
	glob(p, "torch", stype);
	str(p, key);
	str(p, "cpu");
	integer(p, numel);
	op(p, 't');
	op(p, 'Q');
	integer(p, off);
	ints(p, ndim, size);
	ints(p, ndim, stride);
	op(p, 0x89);
	glob(p, "collections", "OrderedDict");
	op(p, ')');
	op(p, 'R');
	op(p, 't');
	op(p, 'R');
}

static void begin(pk *p)
{
	p->n = 0;
	op(p, 0x80);
	op(p, 2);
	op(p, '}');
	op(p, 'q');
	op(p, 0);
	op(p, '(');
}

static void end(pk *p)
{
	op(p, 'u');
	op(p, '.');
}

/* ---------------------------------------------------------------- building the zip */

static const int64_t EDGE[6] = {0, 1, 1, 2, 2, 3};
static const float W[3] = {0.5f, 1.5f, -2.0f};

/* An archive a/data.pkl + a/byteorder + a/data/0 (EDGE) + a/data/1 (W, n_w floats). */
static char *write_pt(const pk *p, size_t n_w)
{
	char *dir = tu_tmpdir(), *path = tu_path(dir, "x.pt");
	free(dir);
	int err;
	zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	cr_assert_not_null(za);
	struct {
		const char *name;
		const void *data;
		size_t n;
	} m[] = {{"a/data.pkl", p->b, p->n}, {"a/byteorder", "little", 6}, {"a/data/0", EDGE, sizeof EDGE},
		 {"a/data/1", W, n_w * sizeof(float)}, {"a/version", "3\n", 2}};
	for (size_t k = 0; k < sizeof m / sizeof *m; k++) {
		zip_source_t *s = zip_source_buffer(za, m[k].data, m[k].n, 0);
		zip_int64_t i = zip_file_add(za, m[k].name, s, ZIP_FL_OVERWRITE);
		cr_assert_geq(i, 0);
		zip_set_file_compression(za, (zip_uint64_t)i, ZIP_CM_STORE, 0);
	}
	cr_assert_eq(zip_close(za), 0);
	return path;
}

/* The good file: edge [3, 2] long, w [3] float, t = edge viewed transposed [2, 3]. */
static void good(pk *p)
{
	begin(p);
	str(p, "edge");
	tensor(p, "LongStorage", "0", 6, 0, 2, (int64_t[]){3, 2}, (int64_t[]){2, 1});
	str(p, "w");
	tensor(p, "FloatStorage", "1", 3, 0, 1, (int64_t[]){3}, (int64_t[]){1});
	str(p, "t");
	tensor(p, "LongStorage", "0", 6, 0, 2, (int64_t[]){2, 3}, (int64_t[]){1, 2});
	end(p);
}

Test(pt, reads_tensors_and_views)
{
	pk p;
	good(&p);
	char *path = write_pt(&p, 3);
	size_t mem0 = tu_mem_now();
	bw_pt *pt;
	cr_assert_eq(bw_pt_open(&pt, "x.pt", path, -1), 0, "%s", burrow_last_error());
	bw_pt_tensor t;
	cr_assert_eq(bw_pt_get(pt, "edge", &t), 0, "%s", burrow_last_error());
	cr_assert_eq(t.dtype, BURROW_DTYPE_I64);
	cr_assert(t.ndim == 2 && t.shape[0] == 3 && t.shape[1] == 2);
	cr_assert_arr_eq(t.data, EDGE, sizeof EDGE);
	bw_free(t.data);
	cr_assert_eq(bw_pt_get(pt, "w", &t), 0, "%s", burrow_last_error());
	cr_assert(t.dtype == BURROW_DTYPE_F32 && t.ndim == 1 && t.shape[0] == 3);
	cr_assert_arr_eq(t.data, W, sizeof W);
	bw_free(t.data);
	cr_assert_eq(bw_pt_get(pt, "t", &t), 0, "%s", burrow_last_error());
	const int64_t tt[6] = {0, 1, 2, 1, 2, 3}; /* EDGE's columns as rows */
	cr_assert(t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 3);
	cr_assert_arr_eq(t.data, tt, sizeof tt);
	bw_free(t.data);
	cr_assert(bw_pt_has(pt, "w") && !bw_pt_has(pt, "nope"));
	cr_assert_eq(bw_pt_get(pt, "nope", &t), BURROW_E_NOTFOUND);
	bw_pt_close(pt);
	cr_assert_eq(tu_mem_now(), mem0);
	free(path);
}

Test(pt, fails_allocations_cleanly)
{
	pk p;
	good(&p);
	char *path = write_pt(&p, 3);
	int k;
	for (k = 0; k < 2000; k++) {
		size_t mem0 = tu_mem_now();
		bw_pt *pt = NULL;
		bw_pt_tensor t = {0};
		bw_mem_fail_after(k);
		int st = bw_pt_open(&pt, "x.pt", path, -1);
		if (!st)
			st = bw_pt_get(pt, "t", &t);
		bw_mem_fail_after(-1);
		bw_free(t.data);
		bw_pt_close(pt);
		cr_assert_eq(tu_mem_now(), mem0, "allocation %d: leaked", k);
		if (!st)
			break;
		cr_assert_eq(st, BURROW_E_NOMEM, "allocation %d: %s", k, burrow_last_error());
	}
	cr_assert_gt(k, 5);
	cr_assert_lt(k, 2000);
	free(path);
}

/* ---------------------------------------------------------------- refusals */

/* p (with W's storage n_w floats long) must be refused with status st, one line naming x.pt
 * and holding `what`. */
static void refused(const pk *p, size_t n_w, int st, const char *what)
{
	char *path = write_pt(p, n_w);
	size_t mem0 = tu_mem_now();
	bw_pt *pt;
	bw_pt_tensor t = {0};
	int got = bw_pt_open(&pt, "x.pt", path, -1);
	if (!got) { /* a view is refused at open; a storage that reads short at get */
		got = bw_pt_get(pt, "w", &t);
		bw_free(t.data);
		bw_pt_close(pt);
	}
	const char *msg = burrow_last_error();
	cr_assert_eq(got, st, "status %d, want %d: %s", got, st, msg);
	cr_assert(strstr(msg, "x.pt") && strstr(msg, what), "message '%s' lacks '%s'", msg, what);
	cr_assert_null(strchr(msg, '\n'), "message is more than one line: %s", msg);
	cr_assert_eq(tu_mem_now(), mem0);
	free(path);
}

/* The good file with tensor w replaced by view (size, stride) over storage 1 of numel. */
static void with_w(pk *p, int64_t numel, int64_t off, int ndim, const int64_t *size, const int64_t *stride)
{
	begin(p);
	str(p, "w");
	tensor(p, "FloatStorage", "1", numel, off, ndim, size, stride);
	end(p);
}

Test(pt, refuses_truncated_zip)
{
	pk p;
	good(&p);
	char *path = write_pt(&p, 3);
	tu_truncate(path, tu_size(path) / 2);
	bw_pt *pt;
	int st = bw_pt_open(&pt, "x.pt", path, -1);
	cr_assert(st == BURROW_E_FORMAT && strstr(burrow_last_error(), "x.pt"), "%d %s", st, burrow_last_error());
	free(path);
}

Test(pt, refuses_truncated_pickle)
{
	pk p;
	good(&p);
	p.n -= 10;
	refused(&p, 3, BURROW_E_FORMAT, "truncated");
}

Test(pt, refuses_unknown_opcode)
{
	pk p;
	begin(&p);
	op(&p, 'i'); /* INST: not among the opcodes torch.save writes */
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "opcode 0x69");
}

Test(pt, refuses_foreign_globals)
{
	pk p;
	begin(&p);
	str(&p, "w");
	glob(&p, "os", "system");
	str(&p, "echo hi");
	op(&p, 0x85);
	op(&p, 'R');
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "os.system");
	begin(&p);
	str(&p, "w");
	glob(&p, "builtins", "eval");
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "builtins.eval");
}

Test(pt, refuses_huge_shape)
{
	pk p;
	with_w(&p, 3, 0, 2, (int64_t[]){(int64_t)1 << 40, (int64_t)1 << 40}, (int64_t[]){1, 1});
	refused(&p, 3, BURROW_E_FORMAT, "too large");
	with_w(&p, 3, 0, 1, (int64_t[]){(int64_t)1 << 40}, (int64_t[]){1});
	refused(&p, 3, BURROW_E_FORMAT, "outside its storage");
}

Test(pt, refuses_storage_shorter_than_claimed)
{
	pk p;
	with_w(&p, 3, 0, 1, (int64_t[]){3}, (int64_t[]){1});
	refused(&p, 2, BURROW_E_FORMAT, "the member has 8 bytes"); /* 3 floats claimed, 2 stored */
	with_w(&p, 3, 1, 1, (int64_t[]){3}, (int64_t[]){1});
	refused(&p, 3, BURROW_E_FORMAT, "outside its storage"); /* offset 1 + 3 elements > 3 */
}

Test(pt, refuses_negative_stride_and_offset)
{
	pk p;
	with_w(&p, 3, 2, 1, (int64_t[]){3}, (int64_t[]){-1});
	refused(&p, 3, BURROW_E_FORMAT, "stride -1 is negative");
	with_w(&p, 3, -1, 1, (int64_t[]){3}, (int64_t[]){1});
	refused(&p, 3, BURROW_E_FORMAT, "offset -1");
}

Test(pt, refuses_overlapping_views)
{
	pk p;
	with_w(&p, 3, 0, 2, (int64_t[]){2, 2}, (int64_t[]){1, 1});
	refused(&p, 3, BURROW_E_FORMAT, "overlaps");
	with_w(&p, 3, 0, 1, (int64_t[]){3}, (int64_t[]){0});
	refused(&p, 3, BURROW_E_FORMAT, "overlaps");
}

Test(pt, refuses_memo_out_of_range)
{
	pk p;
	begin(&p);
	str(&p, "w");
	op(&p, 'h');
	op(&p, 200);
	end(&p);
	refused(&p, 3, BURROW_E_FORMAT, "memo index 200");
	begin(&p);
	str(&p, "w");
	op(&p, 'r');
	raw(&p, (uint32_t[]){0xfffffff0u}, 4);
	end(&p);
	refused(&p, 3, BURROW_E_FORMAT, "memo index 4294967280");
	begin(&p); /* a put at 40 grows the memo: slot 3 below it was still never set */
	str(&p, "w");
	op(&p, 'q');
	op(&p, 40);
	op(&p, 'h');
	op(&p, 3);
	end(&p);
	refused(&p, 3, BURROW_E_FORMAT, "memo index 3 was never set");
}

Test(pt, refuses_deep_nesting)
{
	pk p;
	begin(&p);
	for (int k = 0; k < 1000; k++)
		op(&p, '(');
	end(&p);
	refused(&p, 3, BURROW_E_FORMAT, "nested deeper");
}

Test(pt, refuses_too_many_dims_and_missing_storage)
{
	pk p;
	int64_t size[9] = {1, 1, 1, 1, 1, 1, 1, 1, 3}, stride[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
	with_w(&p, 3, 0, 9, size, stride);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "9 dimensions");
	begin(&p);
	str(&p, "w");
	tensor(&p, "FloatStorage", "7", 3, 0, 1, (int64_t[]){3}, (int64_t[]){1});
	end(&p);
	refused(&p, 3, BURROW_E_FORMAT, "a/data/7 is missing");
}

Test(pt, refuses_stack_abuse)
{
	pk p;
	begin(&p);
	op(&p, 'u'); /* SETITEMS to the dict's own mark with nothing: fine; then one more pops nothing */
	op(&p, 's');
	op(&p, '.');
	refused(&p, 3, BURROW_E_FORMAT, "stack underflow");
	begin(&p);
	str(&p, "w");
	op(&p, 'N');
	op(&p, 'R'); /* REDUCE of a string */
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "REDUCE");
	p.n = 0;
	op(&p, 0x80);
	op(&p, 2);
	op(&p, ']');
	op(&p, '.');
	refused(&p, 3, BURROW_E_FORMAT, "no dict");
}

Test(pt, refuses_non_zip_and_bad_legacy)
{
	char *dir = tu_tmpdir(), *path = tu_path(dir, "x.pt");
	FILE *f = fopen(path, "wb");
	fwrite("\x80\x02\x8a\x0a", 1, 4, f);
	fclose(f);
	bw_pt *pt;
	cr_assert_eq(bw_pt_open(&pt, "x.pt", path, -1), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "legacy magic number"), "%s", burrow_last_error());
	f = fopen(path, "wb");
	fwrite("hello world", 1, 11, f);
	fclose(f);
	cr_assert_eq(bw_pt_open(&pt, "x.pt", path, -1), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "x.pt: not a torch.save file"), "%s", burrow_last_error());
	free(path);
	free(dir);
}

/* ---------------------------------------------------------------- real torch files */

/* dir/file (written by torch) against dir/ref.npy and the values the script chose. */
static void check_torch_file(const char *dir, const char *file)
{
	char *path = tu_path(dir, "%s", file);
	bw_pt *pt;
	cr_assert_eq(bw_pt_open(&pt, file, path, -1), 0, "%s", burrow_last_error());
	bw_pt_tensor e, v, w, y, h, b;
	cr_assert_eq(bw_pt_get(pt, "edge", &e), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_pt_get(pt, "view", &v), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_pt_get(pt, "weight", &w), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_pt_get(pt, "year", &y), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_pt_get(pt, "half", &h), 0, "%s", burrow_last_error());
	cr_assert_eq(bw_pt_get(pt, "flag", &b), 0, "%s", burrow_last_error());
	cr_assert(b.numel == 2 && ((int64_t *)b.data)[0] == 1 && ((int64_t *)b.data)[1] == 0);
	bw_free(b.data);
	cr_assert_eq(bw_pt_get(pt, "n", &b), BURROW_E_FORMAT);
	cr_assert(e.shape[0] == 50 && e.shape[1] == 2 && v.shape[0] == 2 && v.shape[1] == 14);
	const int64_t *E = e.data, *V = v.data;
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 14; j++)
			cr_assert_eq(V[i * 14 + j], E[(5 + 3 * j) * 2 + i]);
	for (int j = 0; j < 50; j++)
		cr_assert_eq(((int64_t *)y.data)[j], j);
	cr_assert(w.dtype == BURROW_DTYPE_F32 && h.dtype == BURROW_DTYPE_F32 && h.numel == 12);
	for (int j = 0; j < 50; j++)
		cr_assert(((float *)w.data)[j] >= 0 && ((float *)w.data)[j] < 1);
	char *ref = tu_path(dir, "ref.npy");
	size_t n;
	uint8_t *npy = tu_read(ref, &n);
	cr_assert_arr_eq(npy + n - 28 * 8, v.data, 28 * 8, "the strided view differs from numpy's");
	free(npy);
	free(ref);
	bw_free(e.data);
	bw_free(v.data);
	bw_free(w.data);
	bw_free(y.data);
	bw_free(h.data);
	bw_pt_close(pt);
	free(path);
}

Test(pt, reads_what_torch_saves)
{
	const char *py = "build/venv/bin/python";
	if (access(py, X_OK) != 0)
		cr_skip_test("no %s (make python-venv): torch-written files not checked", py);
	char *dir = tu_tmpdir();
	int rc = tu_sh(NULL, NULL,
		       "%s -c \"import torch; g = torch.Generator().manual_seed(1);"
		       "e = torch.randint(0, 1000, (50, 2), generator=g);"
		       "torch.save({'edge': e, 'weight': torch.rand(50, generator=g).double(),"
		       " 'year': torch.arange(50, dtype=torch.int32), 'half': torch.rand(4, 3, generator=g).half(),"
		       " 'view': e.t()[:, 5:45:3], 'flag': torch.tensor([True, False]), 'n': 3, 'l': [1, 2.5, None]},"
		       " '%s/r.pt'); torch.save(torch.load('%s/r.pt'), '%s/r1.pt', _use_new_zipfile_serialization=False);"
		       " import numpy as np; np.save('%s/ref.npy', e.t()[:, 5:45:3].numpy())\" 2>&1",
		       py, dir, dir, dir, dir);
	if (rc != 0)
		cr_skip_test("torch could not run in %s", py);
	for (int legacy = 0; legacy < 2; legacy++)
		check_torch_file(dir, legacy ? "r1.pt" : "r.pt");
	char *path = tu_path(dir, "r1.pt"); /* a legacy file cut short: its last storage is refused */
	tu_truncate(path, tu_size(path) - 3);
	bw_pt *pt;
	cr_assert_eq(bw_pt_open(&pt, "r1.pt", path, -1), BURROW_E_FORMAT);
	cr_assert(strstr(burrow_last_error(), "r1.pt: legacy: storage"), "%s", burrow_last_error());
	free(path);
	tu_rmrf(dir);
	free(dir);
}
