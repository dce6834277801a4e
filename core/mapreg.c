/* mapreg.c: the library's file mappings by address range, so that a SIGBUS handler can name
 * the file a fault hit (a mapped file truncated under a run) and tell it from a fault of
 * some other mapping. */
#define _GNU_SOURCE
#include "internal.h"

#include <limits.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define BW_MAP_SLOTS 256

/* A slot is live while hi != 0; writers publish path and lo before hi, readers (the signal
 * handler, which cannot lock) read hi first. */
static struct {
	_Atomic uintptr_t lo, hi;
	char path[PATH_MAX];
} slots[BW_MAP_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void bw_map_register(const void *base, size_t len, const char *path)
{
	if (!base || !len)
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < BW_MAP_SLOTS; i++) {
		if (atomic_load(&slots[i].lo))
			continue;
		/* taken (lo set) before the name is written, live (hi set) after */
		atomic_store(&slots[i].lo, (uintptr_t)base);
		snprintf(slots[i].path, sizeof slots[i].path, "%s", path);
		atomic_store_explicit(&slots[i].hi, (uintptr_t)base + len, memory_order_release);
		break;
	} /* all slots taken: a fault in it stays a plain SIGBUS */
	pthread_mutex_unlock(&lock);
}

void bw_map_unregister(const void *base)
{
	if (!base)
		return;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < BW_MAP_SLOTS; i++)
		if (atomic_load(&slots[i].lo) == (uintptr_t)base && atomic_load(&slots[i].hi)) {
			atomic_store(&slots[i].hi, 0);
			atomic_store(&slots[i].lo, 0);
			break;
		}
	pthread_mutex_unlock(&lock);
}

int burrow_mapped_file(const void *addr, char *buf, size_t cap)
{
	const uintptr_t a = (uintptr_t)addr;
	for (int i = 0; i < BW_MAP_SLOTS; i++) {
		const uintptr_t hi = atomic_load_explicit(&slots[i].hi, memory_order_acquire);
		if (!hi || a >= hi || a < atomic_load(&slots[i].lo))
			continue;
		size_t n = 0; /* strlen and memcpy by hand: async-signal-safe for certain */
		while (cap && n < cap - 1 && slots[i].path[n]) {
			buf[n] = slots[i].path[n];
			n++;
		}
		if (cap)
			buf[n] = '\0';
		return 1;
	}
	return 0;
}
