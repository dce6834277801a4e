/* internal.h: what every libburrow source shares: errors, logging, memory, files, RNG. */
#ifndef BURROW_INTERNAL_H
#define BURROW_INTERNAL_H

#include <burrow.h>

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#if defined(__GNUC__)
#define BW_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define BW_UNUSED __attribute__((unused))
#else
#define BW_PRINTF(f, a)
#define BW_UNUSED
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define BW_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BW_MAX(a, b) ((a) > (b) ? (a) : (b))
/* Exchange two lvalues of one type (two buffers that trade roles, say). */
#define BW_SWAP(a, b)                                                   \
	do {                                                            \
		__typeof__(a) bw_swap_t_ = (a);                         \
		(a) = (b);                                              \
		(b) = bw_swap_t_;                                       \
	} while (0)

/* ------------------------------------------------------------ errors (core/status.c) */

/* Record a message for burrow_last_error() and return status. */
int bw_err(int status, const char *fmt, ...) BW_PRINTF(2, 3);
/* Map errno (as set by a failed call on `path`) to a status, with "path: what: strerror". */
int bw_err_errno(int errnum, const char *path, const char *what);
/* A thread that cannot start (pthread_create's rc): one status everywhere, BURROW_E_NOMEM (the
 * system lacks the resources), "WHO: cannot start WHAT: <strerror>". */
int bw_err_thread(int rc, const char *who, const char *what);
/* Prefix the current message with "prefix: " (keeps the status); returns status. */
int bw_err_prefix(int status, const char *prefix);

/* When the current message starts with `from`, replace that prefix with `to` (so errors
 * inside a temporary output name the final one); returns status. */
int bw_err_rebase(int status, const char *from, const char *to);

/* Internal invariant: not for input errors. Logs and aborts: a broken invariant is a bug. */
void bw_assert_fail(const char *expr, const char *file, int line);
#define BW_ASSERT(e)                                                    \
	do {                                                            \
		if (!(e))                                               \
			bw_assert_fail(#e, __FILE__, __LINE__);         \
	} while (0)

/* ------------------------------------------------------------ logging (core/log.c) */

void bw_log(int level, const char *fmt, ...) BW_PRINTF(2, 3);

/* ------------------------------------------------------------ memory (core/mem.c) */

/* Every library allocation goes through these: they count current and peak bytes and
 * can be told to fail (tests). Failure returns NULL and records BURROW_E_NOMEM. */
void *bw_malloc(size_t n);
void *bw_calloc(size_t count, size_t size);
void *bw_realloc(void *p, size_t n);
void bw_free(void *p);
char *bw_strdup(const char *s);
/* Memory aligned to `align` (a power of two), freed with bw_aligned_free. */
void *bw_aligned_alloc(size_t align, size_t n);
void bw_aligned_free(void *p);
/* Advise the kernel to back [p, p + n) with huge pages (the 2 MiB-aligned part of it):
 * for large arrays read at random, where a TLB miss per access costs as much as the cache
 * miss. Advice only: nothing changes where transparent huge pages are off. */
void bw_advise_huge(void *p, size_t n);
/* Test hook: make the (n+1)-th allocation from now on fail; n < 0 turns it off. */
void bw_mem_fail_after(long n);
/* Whether a cJSON allocation failed on this thread since the last call (and clear it): cJSON's
 * adders fail silently, so a builder clears this first and checks it before using its text;
 * a parse that returns NULL with this set ran out of memory, it did not meet bad JSON. */
bool bw_json_nomem(void);

/* The one growable array: make *pbuf (a T **) hold at least `need` elements of `elem` bytes,
 * growing the capacity *cap by half (at least 16 elements); the contents are kept when
 * `keep`, else the old block is freed first (no copy). BURROW_E_NOMEM with a message when
 * need * elem overflows or memory runs out; then *pbuf and *cap are unchanged when `keep`
 * (the old block stays the caller's), else *pbuf is NULL and *cap 0. */
int bw_grow(void *pbuf, size_t *cap, size_t need, size_t elem, bool keep);

/* ------------------------------------------------------------ clocks (core/clock.c) */
/* Monotonic time (CLOCK_MONOTONIC), for durations. */
double bw_now_s(void);
uint64_t bw_now_ns(void);

/* ------------------------------------------------------------ files (core/fsutil.c) */

/* write/pread that loop over short transfers; errors name `path`. */
int bw_write_all(int fd, const void *buf, size_t n, const char *path);
int bw_pread_all(int fd, void *buf, size_t n, int64_t off, const char *path);
/* Open an input file read-only (oflags: more flags, such as O_DIRECT) without blocking in
 * the open (O_NONBLOCK, cleared once open), and refuse in one line naming it anything but a
 * regular file (or a block device, which the feature store reads raw): a FIFO where a dataset
 * file should be cannot hang a reader. Every reader of the library opens through it. *fd gets
 * the descriptor (caller closes), *size (may be NULL) the file's size in bytes. */
int bw_open_input(const char *path, int oflags, int *fd, int64_t *size);
/* A small text file read whole, NUL-terminated (bw_free it); larger than max_bytes is
 * BURROW_E_FORMAT naming the file. For metadata such as meta.json. */
int bw_read_text(const char *path, size_t max_bytes, char **out);
/* The first cap - 1 bytes of a small file (a /proc or /sys entry, a marker) into buf,
 * NUL-terminated, with one open and one read: no allocation and no message, so it is safe
 * before main and under an exhausted RLIMIT_AS. The bytes read, or -1 (missing, empty). */
ssize_t bw_read_small(const char *path, char *buf, size_t cap);
/* Rename the finished file tmp to dst (replacing it: rename(2) is atomic for a file), then
 * fsync dst's directory so that the rename is durable. Errors name dst ("rename"). */
int bw_replace_file(const char *tmp, const char *dst);
/* Put the finished directory tmp in dst's place: an existing dst (refused with
 * BURROW_E_EXISTS unless `replace`) is moved aside to "dst.old.PID", tmp renamed to dst,
 * the old one removed, dst's parent fsynced. When tmp cannot take the name, the old one
 * is renamed back, and if that fails too the message says where it is; tmp is left for
 * the caller to remove. Nothing is allocated after the first rename. */
int bw_replace_dir(const char *tmp, const char *dst, bool replace);
/* Test hook: called before each rename of bw_replace_file and bw_replace_dir; a nonzero
 * return is the errno that rename fails with, without renaming. NULL in use. */
typedef int (*bw_rename_fault_fn)(const char *from, const char *to);
extern bw_rename_fault_fn bw_rename_fault_hook;
/* Write text and a final newline to path atomically (temporary name, fsync, rename). */
int bw_write_text_atomic(const char *path, const char *text);
/* fsync a directory so a rename inside it is durable. */
int bw_fsync_dir(const char *dir);
/* mkdir -p. */
int bw_mkdir_p(const char *path, int mode);
/* rm -rf (no error when absent). */
int bw_rm_rf(const char *path);
/* Will an output of at least `bytes` fit on the filesystem that holds `path` (or its
 * nearest existing ancestor)? 0, or BURROW_E_IO naming path, `what` and both sizes.
 * Checked before writing sizes taken from input (a node count), so that an absurd count
 * is refused at once instead of filling the disk. */
int bw_check_space(const char *path, double bytes, const char *what);
/* Remove the leftovers of interrupted writers of `path` ("path.tmp.PID", "path.old.PID")
 * whose process PID is gone and that belong to this user. Best effort (what cannot be
 * removed stays), but BURROW_E_NOMEM when memory runs out. */
int bw_rm_stale_tmp(const char *path);
/* Remove the files in `dir` named "<prefix><PID>-..." whose process PID is gone and that
 * belong to this user (an evaluation's spill files). Best effort, BURROW_E_NOMEM likewise. */
int bw_rm_stale_prefixed(const char *dir, const char *prefix);

/* The registry of temporaries (core/tmpreg.c): a path this process is writing and would
 * leave behind if killed (an OUT.tmp.PID folder, a file's .tmp.PID, a spill file) is
 * registered BEFORE it is created and dropped once renamed into place or removed, so that
 * burrow_remove_temporaries() can remove it when the command is interrupted. bw_tmp_add
 * returns the slot, or -1 when the registry is full (not an error: the rerun's sweep of
 * dead processes' leftovers remains). bw_tmp_drop accepts -1. */
int bw_tmp_add(const char *path);
void bw_tmp_drop(int id);
/* Join a and b with '/' into a new string (bw_free it). NULL on no memory. */
char *bw_path_join(const char *a, const char *b);
/* The directory part of path, new string. */
char *bw_dirname(const char *path);
/* Where scratch files go: `given` when set, else $TMPDIR when set and not empty, else /tmp
 * (borrowed strings). */
const char *bw_scratch_dir(const char *given);
/* A new scratch file dir/<stem>XXXXXX, unlinked at once (nothing outlives the caller): *fd. */
int bw_scratch_fd(const char *dir, const char *stem, int *fd);

/* The library's file mappings (core/mapreg.c), for burrow_mapped_file: register after mmap,
 * unregister before munmap. A full table leaves a mapping unnamed, nothing else. */
void bw_map_register(const void *base, size_t len, const char *path);
void bw_map_unregister(const void *base);

/* An output file written under a temporary name in the same directory, renamed into
 * place on commit; abort (or any failure) unlinks the temporary. */
typedef struct bw_atomic_file {
	int fd;
	char *path;   /* final name, owned */
	char *tmp;    /* temporary name, owned */
	int reg;      /* its slot in the registry of temporaries (bw_tmp_add), -1 when none */
} bw_atomic_file;
/* Also removes "path.tmp.PID" left by dead processes of this user (bw_rm_stale_tmp). */
int bw_atomic_open(bw_atomic_file *f, const char *path);
/* fsync, close, rename to the final name, fsync the directory. Frees names. */
int bw_atomic_commit(bw_atomic_file *f);
/* Close and unlink the temporary (safe to call twice or after commit). */
void bw_atomic_abort(bw_atomic_file *f);

/* ------------------------------------------------------------ struct sizes (core/abi.c) */

/* Every public options and stats struct opens with `size_t size`. An older caller passes a
 * smaller size (the fields it does not know keep their defaults), a newer one a larger
 * size (accepted when the fields this library does not know are all zero). */

/* The caller's options `given` (a struct named `name`) over `local`, which holds this
 * library's defaults (known = sizeof): min(given size, known) bytes are copied, the size
 * field excepted. BURROW_E_INVAL for a size smaller than the size field (0: not filled by
 * _defaults()), BURROW_E_UNSUPPORTED for a set field past `known`. */
int bw_opts_in(void *local, size_t known, const void *given, const char *name);
/* A stats struct the caller passes (NULL is fine): BURROW_E_INVAL unless its size is set. */
int bw_stats_check(const void *out, const char *name);
/* Copy `full` (known bytes, this library's struct) into the caller's `out` (NULL: nothing),
 * at most out's size bytes; out's size field is kept. */
void bw_stats_out(void *out, const void *full, size_t known);

/* ------------------------------------------------------------ address-space limits (core/limits.c) */

/* OpenBLAS's per-thread work buffer (BUFFER_SIZE: 32 << 22 in common_x86_64.h and
 * common_arm64.h, plus a page). Each OpenBLAS thread maps one when it starts, and each
 * thread that calls BLAS maps one on its first call; a failed mapping is retried forever
 * (0.3.x driver/others/memory.c), so it must be known to fit before it is asked for. */
#define BW_BLAS_BUFFER ((size_t)(32u << 22) + 4096)
/* What the io_uring rings, the store's queues and the allocator's own slack may map
 * beside the counted buffers: kept free when sizing from what is left. */
#define BW_AS_SLACK ((size_t)32 << 20)

/* Bytes mapped by the process now (VmSize), 0 when /proc is not there. */
size_t bw_as_used(void);
/* Is the address space limited (RLIMIT_AS)? Then *left = limit - mapped now (0 when
 * over) and *limit = the limit; else false with both SIZE_MAX. */
bool bw_as_left(size_t *left, size_t *limit);
/* The stack a new thread maps (the default pthread attribute: RLIMIT_STACK or glibc's). */
size_t bw_stack_bytes(void);
/* Is the process's memory limited by its cgroup (v2 memory.max, or v1's memory controller's
 * memory.limit_in_bytes; the smallest limit from its cgroup up to the root)? Then *limit =
 * that limit, else false with SIZE_MAX. A container's or a systemd-run -p MemoryMax=
 * "RAM given to the run" is this limit, not the machine's memory. */
bool bw_cgroup_mem_limit(size_t *limit);
/* The same, reading proc_cgroup (a /proc/PID/cgroup) and the hierarchies under sysfs (a
 * /sys/fs/cgroup): for tests, which build such trees in a directory. */
bool bw_cgroup_mem_limit_at(const char *proc_cgroup, const char *sysfs, size_t *limit);
/* The machine's memory, min'ed with the cgroup limit: what "memory" means for a default. */
size_t bw_mem_total(void);
/* /proc/meminfo's MemAvailable in bytes (memory the kernel can hand out without swapping),
 * read from `meminfo` (NULL: /proc/meminfo); SIZE_MAX when it cannot tell. */
size_t bw_mem_available_at(const char *meminfo);

/* ------------------------------------------------------------ threads */
#include <omp.h>
/* OpenMP threads to use: the request when positive, else the runtime's default. */
/* Is d an integer in [lo, hi] (hi at most 2^53)? Compared as doubles before any cast, so
 * that a huge JSON number is refused, not converted out of range. */
static inline bool bw_is_int_in(double d, double lo, double hi)
{
	return d >= lo && d <= hi && d == (double)(int64_t)d;
}

static inline int bw_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

/* Parallel loops go in chunks fixed by the shape, never by the thread count, taken
 * dynamically (`schedule(dynamic, bw_row_chunk(cols))`), so that a thread on a core another
 * process shares takes fewer chunks instead of holding the loop back: BW_CHUNK_ELEMS
 * elements, or whole rows of about as many (the CPU backend's kernels and the driver's loops). */
#define BW_CHUNK_ELEMS 16384
static inline int64_t bw_row_chunk(int64_t cols)
{
	return cols >= BW_CHUNK_ELEMS ? 1 : BW_CHUNK_ELEMS / (cols > 0 ? cols : 1);
}

/* ------------------------------------------------------------ sorting and searching */
/* qsort comparators in ascending order. */
static inline int bw_cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	return (x > y) - (x < y);
}

static inline int bw_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static inline int bw_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* First index of sorted a[0 .. n) holding a value >= x (n when none). */
static inline int64_t bw_lower_bound_i64(const int64_t *a, int64_t n, int64_t x)
{
	int64_t lo = 0, hi = n;
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------ RNG (core/rng.h) */
#include "rng.h"

/* ------------------------------------------------------------ the small sort */
#include <stdlib.h>
/* Ascending sorts of integers, the one small sort every module uses (an order of equal
 * integers cannot be told apart, so how they are sorted changes no result):
 *   bw_isort_T(a, n)   insertion sort of a[0, n): short rows, and the device (BW_HD);
 *   bw_sort_T(a, n)    insertion sort up to BW_ISORT_MAX elements, qsort above;
 *   bw_unique_T(a, n)  drop the repeats of a sorted a[0, n); returns the new length;
 * for T = i32 (int32_t), i64 (int64_t) and u64 (uint64_t). */
#define BW_ISORT_MAX 32
#define BW_DEFINE_SORT(T, sfx, cmp)                                             \
	static inline BW_HD void bw_isort_##sfx(T *a, int64_t n)                \
	{                                                                       \
		for (int64_t i = 1; i < n; i++) {                               \
			T x = a[i];                                             \
			int64_t j = i;                                          \
			for (; j > 0 && a[j - 1] > x; j--)                      \
				a[j] = a[j - 1];                                \
			a[j] = x;                                               \
		}                                                               \
	}                                                                       \
	static inline void bw_sort_##sfx(T *a, int64_t n)                       \
	{                                                                       \
		if (n <= BW_ISORT_MAX)                                          \
			bw_isort_##sfx(a, n);                                   \
		else                                                            \
			qsort(a, (size_t)n, sizeof *a, cmp);                    \
	}                                                                       \
	static inline int64_t bw_unique_##sfx(T *a, int64_t n)                  \
	{                                                                       \
		int64_t k = n > 0;                                              \
		for (int64_t i = 1; i < n; i++)                                 \
			if (a[i] != a[k - 1])                                   \
				a[k++] = a[i];                                  \
		return k;                                                       \
	}
BW_DEFINE_SORT(int32_t, i32, bw_cmp_i32)
BW_DEFINE_SORT(int64_t, i64, bw_cmp_i64)
BW_DEFINE_SORT(uint64_t, u64, bw_cmp_u64)
#undef BW_DEFINE_SORT

/* Counts h[0, n) -> where each bucket starts (exclusive prefix sums), for a counting or
 * radix sort's scatter; returns the total. */
static inline size_t bw_exclusive_scan(size_t *h, size_t n)
{
	size_t run = 0;
	for (size_t d = 0; d < n; d++) {
		const size_t x = h[d];
		h[d] = run;
		run += x;
	}
	return run;
}

#endif /* BURROW_INTERNAL_H */
