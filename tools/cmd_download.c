/* cmd_download.c: burrow download NAME: fetch a dataset's zip (resumable). */
#include "dlprogress.h"

#include <stdio.h>
#include <string.h>

static void help(void)
{
	printf("usage: burrow download NAME [--root DIR] [--url URL] [--quiet]\n\n"
	       "Download the zip of dataset NAME (see 'burrow datasets') to DIR/NAME.zip. Bytes go to\n"
	       "DIR/NAME.zip.part first, which an interrupted download leaves behind and the next run\n"
	       "resumes (HTTP Range); the size is checked against the server's before the rename.\n"
	       "An existing DIR/NAME.zip is kept.\n\n"
	       "  --root DIR   folder for the zip (data)\n"
	       "  --url URL    fetch from URL instead of the catalog's (any NAME then)\n"
	       "  --quiet      no progress (without a terminal it is one line every 10 s)\n");
}

int cmd_download(int argc, char **argv)
{
	static const struct option lo[] = {{"root", required_argument, 0, 'r'}, {"url", required_argument, 0, 'u'},
					   {"quiet", no_argument, 0, 'q'},      {"help", no_argument, 0, 'h'},
					   {0, 0, 0, 0}};
	const char *root = "data", *url = NULL;
	bool quiet = false;
	int c;
	while ((c = cli_getopt("download", argc, argv, "h", lo)) != -1) {
		switch (c) {
		case '?': return EXIT_USAGE;
		case 'h': help(); return EXIT_OK;
		case 'r': root = optarg; break;
		case 'u': url = optarg; break;
		case 'q': quiet = true; break;
		}
	}
	if (argc - optind != 1)
		return cli_usage("download", "expected one dataset name");
	const char *name = argv[optind];
	if (!url && !burrow_catalog_find(name))
		return cli_fail("download", "'%s' is not in the catalog (see 'burrow datasets'); give --url", name);
	burrow_download_opts o;
	burrow_download_defaults(&o);
	o.url = url;
	dl_progress prog;
	dl_progress_init(&prog, quiet, NULL);
	o.progress = dl_progress_cb;
	o.progress_user = &prog;
	char path[4096];
	double t0 = cli_now();
	int st = burrow_download(name, root, &o, path, sizeof path);
	dl_progress_done(&prog);
	if (st < 0)
		return cli_lib_fail("download", st);
	if (!quiet) {
		char b[32];
		long long n = 0;
		FILE *f = fopen(path, "rb");
		if (f) {
			fseek(f, 0, SEEK_END);
			n = ftell(f);
			fclose(f);
		}
		fprintf(stderr, "burrow: download: %s (%s) in %.1f s\n", path, cli_human_bytes((double)n, b, sizeof b),
			cli_now() - t0);
	}
	return EXIT_OK;
}
