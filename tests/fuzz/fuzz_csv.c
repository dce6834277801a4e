/* fuzz_csv.c: libFuzzer harness for the text readers of prep and import: csv, tsv and
 * blank-separated lines, plain or gzip. The first byte picks the mode (bit 0: gunzip,
 * bits 1-2: separator ',' '\t' ' ' or any blank, bit 3: '#' comments); the rest is the file.
 * Each line is read as its fields' integers, floats and a label, then the whole file again
 * as an edge list into a CSR builder, the way import reads --edges. */
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

static void read_edges(const bw_src *src, bool gz, char sep, bool comments)
{
	bw_csv c;
	if (bw_csv_open(&c, src, gz, sep, comments) < 0)
		return;
	burrow_csr_builder *b;
	if (burrow_csr_builder_open(&b, 1000, NULL) == 0) {
		int64_t count;
		burrow_csr g;
		if (bw_csv_edges(&c, 1000, b, NULL, NULL, &count, NULL) == 0 && burrow_csr_builder_finish(b, &g) == 0 &&
		    burrow_csr_check(&g, true) != 0)
			abort(); /* the builder's CSR must be well formed */
		burrow_csr_builder_close(b);
	}
	bw_csv_close(&c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t mem0 = fz_mem_now();
	const bool gz = data[0] & 1, comments = data[0] & 8;
	const char sep = SEPS[(data[0] >> 1) & 3];
	char path[512];
	fz_write(fz_path(path, sizeof path, "in.csv"), data + 1, size - 1);
	const bw_src src = {.name = "in.csv", .path = path, .fd = -1};
	read_lines(&src, gz, sep, comments);
	read_edges(&src, gz, sep, comments);
	fz_mem_check(mem0, "csv");
	return 0;
}
