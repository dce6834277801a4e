/* fuzz.c: the harnesses' shared helpers (see fuzz.h). */
#define _GNU_SOURCE
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char scratch[256];

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(p);
	return 0;
}

void fz_rmtree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void rm_scratch(void)
{
	if (scratch[0])
		fz_rmtree(scratch);
}

const char *fz_scratch(void)
{
	if (!scratch[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(scratch, sizeof scratch, "%s/burrow-fuzz.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(scratch)) {
			fprintf(stderr, "fuzz: cannot create %s: %s\n", scratch, strerror(errno));
			abort();
		}
		atexit(rm_scratch);
	}
	return scratch;
}

char *fz_path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", fz_scratch(), name);
	return buf;
}

void fz_write(const char *path, const void *data, size_t n)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
		abort();
	}
	const char *p = data;
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0) {
			fprintf(stderr, "fuzz: cannot write %s: %s\n", path, strerror(errno));
			abort();
		}
		p += w, n -= (size_t)w;
	}
	close(fd);
}

static int name_ok(const char *s)
{
	if (!*s || *s == '/' || strstr(s, ".."))
		return 0;
	for (; *s; s++)
		if (!(( *s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      *s == '.' || *s == '_' || *s == '-' || *s == '/'))
			return 0;
	return 1;
}

/* mkdir -p of the folders above path's last component */
static void make_parents(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = 0;
		mkdir(path, 0755);
		*s = '/';
	}
}

int fz_unpack(const uint8_t *data, size_t size, const char *dir)
{
	fz_rmtree(dir);
	if (mkdir(dir, 0755) != 0) {
		fprintf(stderr, "fuzz: cannot create %s: %s\n", dir, strerror(errno));
		abort();
	}
	int files = 0;
	size_t i = 0;
	while (i < size) {
		size_t nlen = data[i++];
		if (nlen == 0 || size - i < nlen + 4)
			break;
		char name[256];
		memcpy(name, data + i, nlen);
		name[nlen] = 0;
		i += nlen;
		size_t dlen = (size_t)data[i] | (size_t)data[i + 1] << 8 | (size_t)data[i + 2] << 16 |
			      (size_t)data[i + 3] << 24;
		i += 4;
		if (dlen > size - i)
			dlen = size - i; /* a short last file: keep what there is */
		if (name_ok(name)) {
			char path[1024];
			snprintf(path, sizeof path, "%s/%s", dir, name);
			make_parents(path);
			struct stat st, up;
			char parent[1024];
			snprintf(parent, sizeof parent, "%s", path);
			*strrchr(parent, '/') = 0;
			/* a name that is a folder, or under a name that is a file ("split" then
			 * "split/train.npy"): skip, as a directory could not hold both */
			if (stat(parent, &up) == 0 && S_ISDIR(up.st_mode) && (stat(path, &st) != 0 || S_ISREG(st.st_mode))) {
				fz_write(path, data + i, dlen);
				files++;
			}
		}
		i += dlen;
	}
	return files;
}

size_t fz_mem_now(void)
{
	size_t cur;
	burrow_mem_stats(&cur, NULL);
	return cur;
}

void fz_mem_check(size_t start, const char *what)
{
	size_t now = fz_mem_now();
	if (now != start) {
		fprintf(stderr, "fuzz: %s: the library holds %zu bytes after the input, %zu before\n", what, now,
			start);
		abort();
	}
}
