/* burrow/core.h: version and limits, status codes and messages, logging, memory counters, temporaries, dtypes. */
#ifndef BURROW_CORE_PUBLIC_H
#define BURROW_CORE_PUBLIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(BURROW_BUILDING) && defined(__GNUC__)
#define BURROW_API __attribute__((visibility("default")))
#else
#define BURROW_API
#endif

/* ---------------------------------------------------------------- version */

/* The one version source: the Makefile reads these three for the library's file names,
 * SONAME and pkg-config files; every exported symbol is versioned LIBBURROW_MAJOR.MINOR
 * (libburrow.map). */
#define BURROW_VERSION_MAJOR 0
#define BURROW_VERSION_MINOR 1
#define BURROW_VERSION_PATCH 0
#define BURROW_DATASET_FORMAT_VERSION 1 /* meta.json "version" of a homogeneous dataset directory */
#define BURROW_DATASET_FORMAT_TYPED 2   /* and of a typed one (node types and relations); both read and written */
/* Most layers of a model, and most blocks of a sampled batch (one limit for both). */
#define BURROW_MAX_LAYERS 8

/* The library's version as "MAJOR.MINOR.PATCH" (static string). */
BURROW_API const char *burrow_version(void);

/* ---------------------------------------------------------------- status */

enum burrow_status {
	BURROW_OK = 0,
	BURROW_DONE = 1,               /* information: an iteration has ended */
	BURROW_E_INVAL = -1,           /* bad argument or option */
	BURROW_E_NOMEM = -2,           /* allocation failed or memory budget exceeded */
	BURROW_E_IO = -3,              /* read, write, open or sync failed */
	BURROW_E_FORMAT = -4,          /* a file's contents are malformed or inconsistent */
	BURROW_E_UNSUPPORTED = -5,     /* not available in this build or on this system */
	BURROW_E_CUDA = -6,            /* CUDA, cuBLAS, cuSPARSE or NCCL failed */
	BURROW_E_MPI = -7,             /* MPI failed */
	BURROW_E_METIS = -8,           /* METIS failed */
	BURROW_E_NOTFOUND = -9,        /* a file or named item does not exist */
	BURROW_E_EXISTS = -10,         /* the output already exists */
	BURROW_E_RANGE = -11,          /* an id or value is out of range */
};
/* One status for one condition: an id a caller passes outside [0, N) is BURROW_E_RANGE,
 * a thread the library cannot start is BURROW_E_NOMEM. */

/* A short fixed description of a status code (static string). */
BURROW_API const char *burrow_strerror(int status);
/* The calling thread's most recent error message; "" when none (thread-local, borrowed). */
BURROW_API const char *burrow_last_error(void);

/* ---------------------------------------------------------------- logging */

enum burrow_log_level { BURROW_LOG_ERROR = 0, BURROW_LOG_WARN = 1, BURROW_LOG_INFO = 2, BURROW_LOG_DEBUG = 3 };

/* Receives each library message: one line, no trailing newline. */
typedef void (*burrow_log_fn)(int level,      /* enum burrow_log_level */
			      const char *msg, /* borrowed for the call */
			      void *user);     /* the pointer given to burrow_log_set */
/* Route library messages to fn (NULL: drop them, the default) at levels <= max_level.
 * Safe to call while library threads log: messages are delivered under a read lock and this
 * call takes the write lock, so when it returns no thread is in, or will call, the previous
 * callback. fn may be called from any library thread, concurrently; it must not call
 * burrow_log_set itself (that would deadlock). */
BURROW_API void burrow_log_set(burrow_log_fn fn, void *user, int max_level);

/* Progress of a long operation: `done` of `total` units in the named phase. */
typedef void (*burrow_progress_fn)(void *user,        /* the pointer given with the callback */
				   const char *phase,  /* e.g. "edges", "features"; static string */
				   uint64_t done,      /* units done so far */
				   uint64_t total);    /* units in the phase; 0 when unknown */

/* ---------------------------------------------------------------- memory */

/* Every allocation of the library is counted, cJSON's included: libburrow sets cJSON's
 * process-wide allocation hooks (cJSON_InitHooks) when it is loaded, so a program that uses
 * cJSON itself must not set other hooks, nor hold cJSON objects made before libburrow was
 * loaded (dlopen) and free them after. */
/* Bytes the library holds now, and the most it has held (process-wide). */
BURROW_API void burrow_mem_stats(size_t *current, /* out, may be NULL */
				 size_t *peak);    /* out, may be NULL */
/* Reset the peak to the current value. */
BURROW_API void burrow_mem_reset_peak(void);

/* ---------------------------------------------------------------- interrupts */

/* Remove every temporary output this process's library calls are writing now (an
 * OUT.tmp.<pid> folder, a file's .tmp.<pid>, an evaluation's spill files), and make any
 * library call that would start a new one wait for good: for a program about to exit on
 * SIGINT or SIGTERM. Not async-signal-safe: call it from an ordinary thread that the
 * signal handler wakes (sem_post), not from the handler. Outputs already renamed into
 * place stay. A later run also removes what a killed process (kill -9) left, by its dead
 * PID. */
BURROW_API void burrow_remove_temporaries(void);

/* Which of the library's file mappings (the dataset's arrays, a parts directory's, the feature
 * store's mmap engine) holds addr: its file's path into buf and 1, or 0 when none does. A
 * mapped file truncated under a run faults (SIGBUS) on its next read; a program's SIGBUS
 * handler can name the file with this and end in one line. Async-signal-safe. */
BURROW_API int burrow_mapped_file(const void *addr, /* si_addr of the fault */
				  char *buf,        /* [cap] receives the path, NUL-terminated, borrowed */
				  size_t cap);

/* ---------------------------------------------------------------- dtypes */

typedef enum burrow_dtype {
	BURROW_DTYPE_INVALID = 0,
	BURROW_DTYPE_F16,
	BURROW_DTYPE_F32,
	BURROW_DTYPE_F64,
	BURROW_DTYPE_I8,
	BURROW_DTYPE_U8,
	BURROW_DTYPE_I32,
	BURROW_DTYPE_I64,
	BURROW_DTYPE_BOOL,
	BURROW_DTYPE_I16,   /* read by import (converted to float32 features); never written */
} burrow_dtype;

/* Bytes per element, 0 for BURROW_DTYPE_INVALID. */
BURROW_API size_t burrow_dtype_size(burrow_dtype t);
/* The name used in meta.json and by NumPy ("float32", "int64", ...); static string. */
BURROW_API const char *burrow_dtype_name(burrow_dtype t);
/* Parse a name ("float32", "f32", "float16", "f16", "int32", ...); INVALID if unknown. */
BURROW_API burrow_dtype burrow_dtype_parse(const char *name);

#ifdef __cplusplus
}
#endif
#endif /* BURROW_CORE_PUBLIC_H */
