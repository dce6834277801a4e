/* log.c: the settable log callback through which all library messages go. */
#define _POSIX_C_SOURCE 200809L /* pthread_rwlock_t under -std=c11 */
#include "internal.h"

#include <pthread.h>

/* The callback, its pointer and level change together under the write lock; messages are
 * delivered under the read lock, so library threads log concurrently, and once
 * burrow_log_set returns no thread is still inside (or about to call) the old callback. */
static pthread_rwlock_t log_lock = PTHREAD_RWLOCK_INITIALIZER;
static burrow_log_fn log_fn;
static void *log_user;
static int log_max = BURROW_LOG_INFO;

void burrow_log_set(burrow_log_fn fn, void *user, int max_level)
{
	pthread_rwlock_wrlock(&log_lock);
	log_fn = fn;
	log_user = user;
	log_max = max_level;
	pthread_rwlock_unlock(&log_lock);
}

void bw_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	pthread_rwlock_rdlock(&log_lock);
	if (log_fn && level <= log_max) {
		va_start(ap, fmt);
		vsnprintf(msg, sizeof msg, fmt, ap);
		va_end(ap);
		log_fn(level, msg, log_user);
	}
	pthread_rwlock_unlock(&log_lock);
}
