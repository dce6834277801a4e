/* fuzz.h: what the libFuzzer harnesses share: a scratch folder per process, writing an
 * input to a file, unpacking an input into a whole directory, and the check that the
 * library's counted memory returns to where it started after each input. */
#ifndef BURROW_FUZZ_H
#define BURROW_FUZZ_H

#include "burrow.h"

#include <stddef.h>
#include <stdint.h>

/* The process's scratch folder (created on first use, removed at exit); static string. */
const char *fz_scratch(void);
/* <scratch>/<name> into buf (cap bytes); returns buf. */
char *fz_path(char *buf, size_t cap, const char *name);
/* Write n bytes to path (replacing it); aborts when the scratch folder fails. */
void fz_write(const char *path, const void *data, size_t n);
/* Remove path and everything under it. */
void fz_rmtree(const char *path);
/* Replace directory dir by the files an input packs. The container is a sequence of
 *   name length (1 byte), name (relative, [A-Za-z0-9._-/], no ".."), data length (4 bytes
 *   little-endian), data
 * as tests/fuzz/pack.py writes it from a real directory; a malformed entry ends the list
 * (what came before it is kept), a bad name skips its entry. Returns the files written. */
int fz_unpack(const uint8_t *data, size_t size, const char *dir);
/* The library's current counted bytes, and a check that they came back to `start`
 * (aborts with the difference, which libFuzzer reports as a crash with its input). */
size_t fz_mem_now(void);
void fz_mem_check(size_t start, const char *what);

#endif
