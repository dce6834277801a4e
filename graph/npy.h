/* npy.h: NumPy .npy files: header parse and format (versions 1.0 and 2.0), load, map, stream. */
#ifndef BURROW_NPY_H
#define BURROW_NPY_H

#include "../core/internal.h"

#define BW_NPY_MAX_DIMS 4
#define BW_NPY_ALIGN 64          /* data offset numpy itself uses */
#define BW_NPY_FEATURE_ALIGN 4096 /* data offset of features.npy (O_DIRECT-friendly) */

typedef struct bw_npy {
	burrow_dtype dtype;
	int ndim;
	int64_t shape[BW_NPY_MAX_DIMS];
	int64_t data_offset; /* bytes before the first element */
	int version;         /* major version: 1, 2 or 3 */
} bw_npy;

/* Elements in the array (product of the shape). */
int64_t bw_npy_count(const bw_npy *h);
/* Bytes of the data part. */
int64_t bw_npy_data_bytes(const bw_npy *h);

/* Parse a header held in buf[0 .. len) (at least the whole header). */
int bw_npy_parse(const void *buf, size_t len, bw_npy *h, const char *path);
/* Open path, parse its header and check the file size against the shape.
 * *fd gets the open file (read-only) when fd is not NULL, else it is closed. */
int bw_npy_open(const char *path, bw_npy *h, int *fd);
/* Format a header into buf (cap >= align); its length, a multiple of align, is returned
 * through *len. Version 1.0 when the dict fits, else 2.0. */
int bw_npy_format(const bw_npy *h, size_t align, char *buf, size_t cap, size_t *len);

/* Load a whole file into memory (bw_free *data). */
int bw_npy_load(const char *path, bw_npy *h, void **data);
/* Map a file read-only. *data points at the first element (NULL when empty);
 * release with bw_npy_unmap(base, len). */
typedef struct bw_npy_map {
	void *base;
	size_t len;
	const void *data;
} bw_npy_map;
int bw_npy_mmap(const char *path, bw_npy *h, bw_npy_map *m);
void bw_npy_unmap(bw_npy_map *m);
/* Drop m's pages from the process (madvise MADV_DONTNEED on the read-only shared mapping): they
 * stay in the page cache and fault back in when read, but no longer count in the RSS. For an
 * array read once at open (the checks) and maybe never again. */
void bw_npy_map_drop(const bw_npy_map *m);
/* The same for the whole pages inside [p, p + len) of such a mapping (a piece just scanned). */
void bw_drop_mapped(const void *p, size_t len);

/* Streaming writer: the header up front, data appended in order, committed atomically
 * only when exactly the declared number of bytes has been written. */
typedef struct bw_npy_writer {
	bw_atomic_file f;
	int64_t expected, written;
	char *buf;
	size_t fill, cap;
} bw_npy_writer;
int bw_npy_writer_open(bw_npy_writer *w, const char *path, burrow_dtype t, int ndim, const int64_t *shape,
		       size_t align);
int bw_npy_writer_append(bw_npy_writer *w, const void *data, size_t bytes);
int bw_npy_writer_commit(bw_npy_writer *w);
void bw_npy_writer_abort(bw_npy_writer *w);
/* Write a whole array in one call. */
int bw_npy_save(const char *path, burrow_dtype t, int ndim, const int64_t *shape, const void *data, size_t align);

#endif /* BURROW_NPY_H */
