/* test_pt.c: the torch.save reader: tensors out of hand-built pickles and real torch files,
 * and one-line refusals of malformed ones (truncated, foreign globals, bad views). */
#define _GNU_SOURCE
#include <criterion/criterion.h>

#include "../datasets/pt.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

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

/* ---------------------------------------------------------------- prep of a link dataset */

/* text gzip'ed into a fresh buffer (*n bytes; free it). */
static void *gz(const char *text, size_t *n)
{
	uLongf cap = compressBound((uLong)strlen(text)) + 64;
	uint8_t *out = malloc(cap);
	z_stream z = {0};
	cr_assert_eq(deflateInit2(&z, 9, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = (Bytef *)text;
	z.avail_in = (uInt)strlen(text);
	z.next_out = out;
	z.avail_out = (uInt)cap;
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	*n = z.total_out;
	deflateEnd(&z);
	return out;
}

/* A tiny ogbl-ddi zip (OGB's layout) in dir: 4 nodes, train edges EDGE, valid and test with
 * negatives (the same rows), made of hand-built .pt files. */
static char *ddi_zip(const char *dir)
{
	pk p[2];
	begin(&p[0]);
	str(&p[0], "edge");
	tensor(&p[0], "LongStorage", "0", 6, 0, 2, (int64_t[]){3, 2}, (int64_t[]){2, 1});
	end(&p[0]);
	begin(&p[1]);
	str(&p[1], "edge");
	tensor(&p[1], "LongStorage", "0", 6, 0, 2, (int64_t[]){3, 2}, (int64_t[]){2, 1});
	str(&p[1], "edge_neg");
	tensor(&p[1], "LongStorage", "0", 6, 0, 2, (int64_t[]){3, 2}, (int64_t[]){2, 1});
	end(&p[1]);
	char *pts[2] = {write_pt(&p[0], 3), write_pt(&p[1], 3)};
	size_t len[5];
	void *raw[3] = {gz("0,1\n1,2\n2,3\n", &len[0]), gz("4\n", &len[1]), gz("3\n", &len[2])};
	void *ptd[2] = {tu_read(pts[0], &len[3]), tu_read(pts[1], &len[4])};
	char *path = tu_path(dir, "ddi.zip");
	int err;
	zip_t *za = zip_open(path, ZIP_CREATE | ZIP_TRUNCATE, &err);
	const char *names[] = {"ddi/raw/edge.csv.gz", "ddi/raw/num-node-list.csv.gz", "ddi/raw/num-edge-list.csv.gz",
			       "ddi/split/target/train.pt", "ddi/split/target/valid.pt", "ddi/split/target/test.pt"};
	const void *data[] = {raw[0], raw[1], raw[2], ptd[0], ptd[1], ptd[1]};
	const size_t n[] = {len[0], len[1], len[2], len[3], len[4], len[4]};
	for (int k = 0; k < 6; k++)
		cr_assert_geq(zip_file_add(za, names[k], zip_source_buffer(za, data[k], n[k], 0), 0), 0);
	cr_assert_eq(zip_close(za), 0);
	for (int k = 0; k < 3; k++)
		free(raw[k]);
	for (int k = 0; k < 2; k++) {
		free(ptd[k]);
		free(pts[k]);
	}
	return path;
}

static int entries(const char *d)
{
	DIR *dd = opendir(d);
	int k = 0;
	struct dirent *e;
	while (dd && (e = readdir(dd)))
		k += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	if (dd)
		closedir(dd);
	return k;
}

/* prep of an ogbl zip under failing allocations: an error, nothing left behind (no output,
 * no temporary, no copied-out .pt), every byte freed; then the dataset opens. */
Test(pt, prep_link_fails_allocations_cleanly)
{
	char *src = tu_tmpdir(), *root = tu_tmpdir(), *zip = ddi_zip(src), *out = tu_path(root, "ddi");
	burrow_prep_opts o;
	burrow_prep_defaults(&o);
	o.root = root;
	o.out = out;
	o.download = false;
	int k;
	for (k = 0; k < 5000; k++) {
		size_t before = tu_mem_now();
		bw_mem_fail_after(k);
		int st = burrow_prep(zip, &o, NULL, 0);
		bw_mem_fail_after(-1);
		cr_assert_eq(tu_mem_now(), before, "allocation %d failed: bytes not freed", k);
		if (st == 0)
			break;
		cr_assert_lt(st, 0);
		cr_assert_eq(entries(root), 0, "allocation %d failed (%s): leftovers in %s", k, burrow_last_error(), root);
	}
	cr_assert_lt(k, 5000);
	cr_assert_gt(k, 10, "only %d allocations: is the hook working?", k);
	burrow_dataset *ds;
	cr_assert_eq(burrow_dataset_open(&ds, out), 0, "%s", burrow_last_error());
	cr_assert_eq(burrow_dataset_get_info(ds)->num_edges, 6);
	burrow_dataset_close(ds);
	char *neg = tu_path(out, "edge_split/test_neg.npy");
	cr_assert(tu_exists(neg));
	free(neg);
	tu_rmrf(src);
	tu_rmrf(root);
	free(src);
	free(root);
	free(zip);
	free(out);
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

/* ---------------------------------------------------------------- numpy arrays (OGB-LSC's split_dict.pt) */

/* Writes numpy arrays and scalars with torch.save: protocol 2 zip (torch's default, the bytes
 * as _codecs.encode of latin-1 strings), protocols 3 and 4 (BINBYTES, STACK_GLOBAL, MEMOIZE),
 * the legacy stream, and protocol 2 with numpy >= 2's module names (numpy._core). */
static const char NP_SCRIPT[] =
	"import sys, zipfile, numpy as np, torch\n"
	"d = sys.argv[1]\n"
	"i8 = np.arange(300, dtype=np.int64) * 7919 - 5\n"
	"m = {'i8': i8, 'i4': (np.arange(12, dtype=np.int32) * -3).reshape(3, 4),\n"
	"     'F': np.asfortranarray((np.arange(12, dtype=np.int32) * -3).reshape(3, 4)),\n"
	"     'u1': (np.arange(256) % 256).astype(np.uint8), 'b1': np.arange(5) % 2 == 0,\n"
	"     'f2': (np.arange(6) / 4).astype(np.float16), 'f4': np.arange(4, dtype=np.float32) / 3,\n"
	"     'f8': np.arange(3, dtype=np.float64) - 0.25, 'empty': np.zeros((0, 3), np.int64),\n"
	"     'n': np.int64(123456789012), 'k': np.int32(-7), 'x': np.float64(0.1), 'ok': np.bool_(True)}\n"
	"for p in (2, 3, 4):\n"
	"    torch.save(m, f'{d}/p{p}.pt', pickle_protocol=p)\n"
	"torch.save(m, f'{d}/legacy.pt', _use_new_zipfile_serialization=False)\n"
	"zi = zipfile.ZipFile(f'{d}/p2.pt')\n"
	"with zipfile.ZipFile(f'{d}/np2.pt', 'w') as zo:\n"
	"    for e in zi.namelist():\n"
	"        b = zi.read(e)\n"
	"        zo.writestr(e, b.replace(b'numpy.core.multiarray', b'numpy._core.multiarray') if e.endswith('.pkl') else b)\n";

static void check_np_file(const char *dir, const char *file)
{
	char *path = tu_path(dir, file);
	bw_pt *pt;
	cr_assert_eq(bw_pt_open(&pt, file, path, -1), 0, "%s: %s", file, burrow_last_error());
	bw_pt_tensor t;
	cr_assert_eq(bw_pt_get(pt, "i8", &t), 0, "%s", burrow_last_error());
	cr_assert(t.dtype == BURROW_DTYPE_I64 && t.ndim == 1 && t.shape[0] == 300);
	for (int64_t k = 0; k < 300; k++)
		cr_assert_eq(((int64_t *)t.data)[k], k * 7919 - 5, "%s i8[%lld]", file, (long long)k);
	bw_free(t.data);
	for (int f = 0; f < 2; f++) { /* C order and Fortran order: the same values row-major */
		cr_assert_eq(bw_pt_get(pt, f ? "F" : "i4", &t), 0, "%s", burrow_last_error());
		cr_assert(t.dtype == BURROW_DTYPE_I64 && t.ndim == 2 && t.shape[0] == 3 && t.shape[1] == 4);
		for (int64_t k = 0; k < 12; k++)
			cr_assert_eq(((int64_t *)t.data)[k], -3 * k, "%s %s[%lld]", file, f ? "F" : "i4", (long long)k);
		bw_free(t.data);
	}
	cr_assert_eq(bw_pt_get(pt, "u1", &t), 0);
	for (int64_t k = 0; k < 256; k++)
		cr_assert_eq(((int64_t *)t.data)[k], k, "%s u1[%lld]", file, (long long)k);
	bw_free(t.data);
	cr_assert_eq(bw_pt_get(pt, "b1", &t), 0);
	for (int64_t k = 0; k < 5; k++)
		cr_assert_eq(((int64_t *)t.data)[k], k % 2 == 0);
	bw_free(t.data);
	const struct {
		const char *key;
		int n;
		double step, base;
	} fl[] = {{"f2", 6, 0.25, 0}, {"f4", 4, 1.0 / 3, 0}, {"f8", 3, 1, -0.25}};
	for (size_t j = 0; j < 3; j++) {
		cr_assert_eq(bw_pt_get(pt, fl[j].key, &t), 0);
		cr_assert(t.dtype == BURROW_DTYPE_F32 && t.ndim == 1 && t.numel == fl[j].n);
		for (int k = 0; k < fl[j].n; k++)
			cr_assert_eq(((float *)t.data)[k], (float)(fl[j].base + k * fl[j].step), "%s %s[%d]", file, fl[j].key, k);
		bw_free(t.data);
	}
	cr_assert_eq(bw_pt_get(pt, "empty", &t), 0);
	cr_assert(t.ndim == 2 && t.shape[0] == 0 && t.shape[1] == 3 && t.numel == 0 && !t.data);
	int64_t v;
	cr_assert_eq(bw_pt_get_int(pt, "n", &v), 0, "%s", burrow_last_error());
	cr_assert_eq(v, 123456789012LL);
	cr_assert_eq(bw_pt_get_int(pt, "k", &v), 0);
	cr_assert_eq(v, -7);
	cr_assert_eq(bw_pt_get_int(pt, "x", &v), BURROW_E_FORMAT);
	cr_assert_eq(bw_pt_get(pt, "n", &t), BURROW_E_FORMAT);
	bw_pt_close(pt);
	free(path);
}

Test(pt, reads_numpy_arrays_torch_saves)
{
	const char *py = "build/venv/bin/python";
	if (access(py, X_OK) != 0)
		cr_skip_test("no %s (make python-venv): numpy files not checked", py);
	char *dir = tu_tmpdir(), *script = tu_path(dir, "w.py");
	FILE *f = fopen(script, "w");
	cr_assert_not_null(f);
	fputs(NP_SCRIPT, f);
	fclose(f);
	if (tu_sh(NULL, NULL, "%s %s %s 2>&1", py, script, dir) != 0)
		cr_skip_test("torch could not run in %s", py);
	static const char *files[] = {"p2.pt", "p3.pt", "p4.pt", "legacy.pt", "np2.pt"};
	for (size_t k = 0; k < sizeof files / sizeof *files; k++)
		check_np_file(dir, files[k]);
	free(script);
	tu_rmrf(dir);
	free(dir);
}

/* An array as numpy pickles it: _reconstruct(ndarray, (0,), b'b') BUILT with (1, shape,
 * dtype(code) BUILT with (3, order, ...), fortran, data); data as BINBYTES, or (latin1) as
 * protocol 2 writes it, _codecs.encode of its bytes as a latin-1 string's UTF-8. */
static void np_array(pk *p, const char *code, const char *order, int ndim, const int64_t *shape, bool fortran,
		     const uint8_t *data, uint32_t n, bool latin1)
{
	glob(p, "numpy.core.multiarray", "_reconstruct");
	glob(p, "numpy", "ndarray");
	integer(p, 0);
	op(p, 0x85);
	op(p, 'C');
	op(p, 1);
	op(p, 'b');
	op(p, 0x87);
	op(p, 'R');
	op(p, '(');
	integer(p, 1);
	ints(p, ndim, shape);
	glob(p, "numpy", "dtype");
	str(p, code);
	op(p, 0x89);
	op(p, 0x88);
	op(p, 0x87);
	op(p, 'R');
	op(p, '(');
	integer(p, 3);
	str(p, order);
	op(p, 'N');
	op(p, 'N');
	op(p, 'N');
	integer(p, -1);
	integer(p, -1);
	integer(p, 0);
	op(p, 't');
	op(p, 'b');
	op(p, fortran ? 0x88 : 0x89);
	if (latin1) {
		glob(p, "_codecs", "encode");
		uint32_t u = 0;
		for (uint32_t k = 0; k < n; k++)
			u += data[k] < 0x80 ? 1 : 2;
		op(p, 'X');
		raw(p, &u, 4);
		for (uint32_t k = 0; k < n; k++)
			if (data[k] < 0x80) {
				op(p, data[k]);
			} else {
				op(p, 0xc0 | data[k] >> 6);
				op(p, 0x80 | (data[k] & 0x3f));
			}
		str(p, "latin1");
		op(p, 0x86);
		op(p, 'R');
	} else {
		op(p, 'B');
		raw(p, &n, 4);
		raw(p, data, n);
	}
	op(p, 't');
	op(p, 'b');
}

static const int64_t NP_W[4] = {-1, 200, 1 << 20, 3};

static void np_w(pk *p, const char *code, const char *order, int64_t rows, uint32_t n, bool latin1)
{
	begin(p);
	str(p, "w");
	np_array(p, code, order, 2, (int64_t[]){rows, 2}, false, (const uint8_t *)NP_W, n, latin1);
	end(p);
}

Test(pt, reads_numpy_pickles)
{
	pk p;
	for (int latin1 = 0; latin1 < 2; latin1++) {
		np_w(&p, "i8", "<", 2, sizeof NP_W, latin1);
		char *path = write_pt(&p, 3);
		bw_pt *pt;
		bw_pt_tensor t;
		cr_assert_eq(bw_pt_open(&pt, "x.pt", path, -1), 0, "%s", burrow_last_error());
		cr_assert_eq(bw_pt_get(pt, "w", &t), 0, "%s", burrow_last_error());
		cr_assert(t.dtype == BURROW_DTYPE_I64 && t.ndim == 2 && t.shape[0] == 2 && t.shape[1] == 2);
		cr_assert_arr_eq(t.data, NP_W, sizeof NP_W);
		bw_free(t.data);
		bw_pt_close(pt);
		free(path);
	}
}

Test(pt, refuses_bad_numpy_pickles)
{
	pk p;
	np_w(&p, "i8", ">", 2, sizeof NP_W, false);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "only little-endian");
	np_w(&p, "i8", "|", 2, sizeof NP_W, false);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "byte order '|'");
	np_w(&p, "i8", "<", 2, sizeof NP_W - 1, false);
	refused(&p, 3, BURROW_E_FORMAT, "4 elements of 8 bytes holds 31 bytes");
	np_w(&p, "i8", "<", 3, sizeof NP_W, true);
	refused(&p, 3, BURROW_E_FORMAT, "holds 32 bytes");
	np_w(&p, "i8", "<", (int64_t)1 << 62, sizeof NP_W, false);
	refused(&p, 3, BURROW_E_FORMAT, "shape too large");
	np_w(&p, "O", "|", 2, sizeof NP_W, false);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "dtype 'O'");
	np_w(&p, "c16", "<", 2, sizeof NP_W, false);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "dtype 'c16'");
	begin(&p); /* a code point above 255 is no latin-1 byte */
	str(&p, "w");
	glob(&p, "_codecs", "encode");
	str(&p, "\xc4\x80");
	str(&p, "latin1");
	op(&p, 0x86);
	op(&p, 'R');
	end(&p);
	refused(&p, 3, BURROW_E_FORMAT, "not latin-1");
	begin(&p);
	str(&p, "w");
	glob(&p, "_codecs", "encode");
	str(&p, "x");
	str(&p, "utf-8");
	op(&p, 0x86);
	op(&p, 'R');
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "(str, 'latin1')");
	begin(&p); /* BUILD of a dict: Python's __setstate__ of anything is refused */
	str(&p, "w");
	op(&p, '}');
	op(&p, '}');
	op(&p, 'b');
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "BUILD of something");
	begin(&p); /* numpy.ndarray is only _reconstruct's argument */
	str(&p, "w");
	glob(&p, "numpy", "ndarray");
	op(&p, ')');
	op(&p, 'R');
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "not an allowed function");
	begin(&p); /* the global allow-list holds for STACK_GLOBAL too */
	str(&p, "w");
	str(&p, "os");
	str(&p, "system");
	op(&p, 0x93);
	end(&p);
	refused(&p, 3, BURROW_E_UNSUPPORTED, "os.system");
}
