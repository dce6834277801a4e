/* fuzz_csv.c: libFuzzer harness for the text readers of prep and import: csv, tsv and
 * blank-separated lines, plain or gzip. The first byte picks the mode (bit 0: gunzip,
 * bits 1-2: separator ',' '\t' ' ' or any blank, bit 3: '#' comments, bit 4: the whole
 * burrow_import instead, bit 5: its header forced, bit 6: with --relabel, bit 7: the file as
 * --content); the rest is the file. Each line is read
 * as its fields' integers, floats and a label, then the whole file again as an edge list
 * into a CSR builder after the header check, the way import reads --edges; or the file is
 * imported by burrow_import itself (1000 nodes, gzip detected by its magic). */
#include "../../datasets/dsio.h"
#include "fuzz.h"

static const char SEPS[4] = {',', '\t', ' ', 0};

static void read_lines(const bw_src *src, bool gz, char sep, bool comments)
{
	bw_csv c;
	if (bw_csv_open(&c, src, gz, sep, comments) < 0)
		return;
	bool more = true;
	for (int64_t line = 0; more && line < 100000; line++) {
		if (bw_csv_next_line(&c, &more) < 0 || !more)
			break;
		int64_t k = bw_csv_count_fields(&c);
		int64_t iv[16];
		float fv[16];
		int st;
		if (k >= 1 && k <= 16)
			st = line % 3 == 0 ? bw_csv_ints(&c, iv, k) : line % 3 == 1 ? bw_csv_floats(&c, fv, k)
									 : bw_csv_label(&c, iv);
		else
			st = bw_csv_label(&c, iv);
		if (st < 0)
			break;
	}
	bw_csv_close(&c);
}

static void read_edges(const bw_src *src, bool gz, char sep, bool comments, bool header)
{
	bw_csv c;
	if (bw_csv_open(&c, src, gz, sep, comments) < 0)
		return;
	burrow_csr_builder *b;
	bool skipped;
	if (burrow_csr_builder_open(&b, 1000, NULL) == 0) {
		int64_t count;
		burrow_csr g;
		if (bw_csv_header(&c, header, &skipped) == 0 && bw_csv_edges(&c, 1000, b, NULL, NULL, &count, NULL) == 0 &&
		    burrow_csr_builder_finish(b, &g) == 0 && burrow_csr_check(&g, true) != 0)
			abort(); /* the builder's CSR must be well formed */
		burrow_csr_builder_close(b);
	}
	bw_csv_close(&c);
}

/* burrow import OUT --edges FILE --num-nodes 1000 [--header], or with --relabel (the ids are
 * keys), or the file as --content beside a fixed three-edge list (--relabel): what it writes
 * must open. */
static void import(const char *path, bool header, bool relabel, bool content)
{
	char out[512], edges[512];
	burrow_import_opts o;
	burrow_import_defaults(&o);
	o.edges = path;
	o.header = header;
	o.num_nodes = relabel || content ? 0 : 1000;
	o.relabel = relabel || content;
	if (content) {
		static const char E[] = "1 2\n2 3\n3 1\n";
		fz_write(fz_path(edges, sizeof edges, "edges.txt"), (const uint8_t *)E, sizeof E - 1);
		o.edges = edges;
		o.content = path;
		o.header = false;
	}
	o.overwrite = true;
	if (burrow_import(fz_path(out, sizeof out, "imported"), &o) == 0) {
		burrow_dataset *ds;
		if (burrow_dataset_open(&ds, out) != 0 || burrow_dataset_verify(ds) != 0)
			abort(); /* import wrote what its own reader refuses */
		burrow_dataset_close(ds);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t mem0 = fz_mem_now();
	const bool gz = data[0] & 1, comments = data[0] & 8, whole = data[0] & 16, header = data[0] & 32,
		   relabel = data[0] & 64, content = data[0] & 128;
	const char sep = SEPS[(data[0] >> 1) & 3];
	char path[512];
	fz_write(fz_path(path, sizeof path, "in.csv"), data + 1, size - 1);
	const bw_src src = {.name = "in.csv", .path = path, .fd = -1};
	if (whole) {
		import(path, header, relabel, content);
	} else {
		read_lines(&src, gz, sep, comments);
		read_edges(&src, gz, sep, comments, header);
	}
	fz_mem_check(mem0, "csv");
	return 0;
}
