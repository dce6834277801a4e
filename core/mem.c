/* mem.c: the one allocation wrapper: counts current and peak bytes, fails on request in tests. */
#define _GNU_SOURCE /* madvise, MADV_HUGEPAGE */
#include "internal.h"

#include <cjson/cJSON.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* Each block carries a 16-byte header holding its size (keeps 16-byte alignment). */
#define HDR 16

static atomic_size_t mem_current;
static atomic_size_t mem_peak;
static atomic_long fail_countdown = -1;

static bool should_fail(void)
{
	long n = atomic_load(&fail_countdown);
	while (n >= 0) {
		if (atomic_compare_exchange_weak(&fail_countdown, &n, n - 1))
			return n == 0;
	}
	return false;
}

static void account(size_t add, size_t sub)
{
	size_t cur = atomic_fetch_add(&mem_current, add) + add;
	atomic_fetch_sub(&mem_current, sub);
	cur -= sub;
	size_t peak = atomic_load(&mem_peak);
	while (cur > peak && !atomic_compare_exchange_weak(&mem_peak, &peak, cur))
		;
}

void burrow_mem_stats(size_t *current, size_t *peak)
{
	if (current)
		*current = atomic_load(&mem_current);
	if (peak)
		*peak = atomic_load(&mem_peak);
}

void burrow_mem_reset_peak(void) { atomic_store(&mem_peak, atomic_load(&mem_current)); }

void bw_mem_fail_after(long n) { atomic_store(&fail_countdown, n); }

static void *nomem(size_t n)
{
	bw_err(BURROW_E_NOMEM, "out of memory allocating %zu bytes", n);
	return NULL;
}

void *bw_malloc(size_t n)
{
	if (n > SIZE_MAX - HDR || should_fail())
		return nomem(n);
	char *p = malloc(n + HDR);
	if (!p)
		return nomem(n);
	memcpy(p, &n, sizeof n);
	account(n, 0);
	return p + HDR;
}

void *bw_calloc(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return nomem(SIZE_MAX);
	size_t n = count * size;
	if (n > SIZE_MAX - HDR || should_fail())
		return nomem(n);
	char *p = calloc(1, n + HDR);
	if (!p)
		return nomem(n);
	memcpy(p, &n, sizeof n);
	account(n, 0);
	return p + HDR;
}

void *bw_realloc(void *q, size_t n)
{
	if (!q)
		return bw_malloc(n);
	char *base = (char *)q - HDR;
	size_t old;
	memcpy(&old, base, sizeof old);
	if (n > SIZE_MAX - HDR || should_fail())
		return nomem(n);
	char *p = realloc(base, n + HDR);
	if (!p)
		return nomem(n);
	memcpy(p, &n, sizeof n);
	account(n, old);
	return p + HDR;
}

void bw_free(void *q)
{
	if (!q)
		return;
	char *base = (char *)q - HDR;
	size_t n;
	memcpy(&n, base, sizeof n);
	atomic_fetch_sub(&mem_current, n);
	free(base);
}

/* cJSON's allocations go through the counter too (so its memory is counted and fails on
 * request in the tests). Its hooks are process-wide: they are set when libburrow is loaded,
 * before a program linking it can hold a cJSON object (include/burrow.h says so). */
static _Thread_local bool json_failed;

static void *json_malloc(size_t n)
{
	void *p = bw_malloc(n);
	if (!p)
		json_failed = true;
	return p;
}

bool bw_json_nomem(void)
{
	bool f = json_failed;
	json_failed = false;
	return f;
}

__attribute__((constructor)) static void json_hooks(void)
{
	cJSON_Hooks h = {.malloc_fn = json_malloc, .free_fn = bw_free};
	cJSON_InitHooks(&h);
}

char *bw_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = bw_malloc(n);
	if (d)
		memcpy(d, s, n);
	return d;
}

/* Aligned blocks: over-allocate, keep the malloc'd base and size just below the block. */
void *bw_aligned_alloc(size_t align, size_t n)
{
	if (align < HDR)
		align = HDR;
	if (n > SIZE_MAX - align - HDR || should_fail())
		return nomem(n);
	char *base = malloc(n + align + HDR);
	if (!base)
		return nomem(n);
	uintptr_t p = ((uintptr_t)base + HDR + align - 1) & ~(uintptr_t)(align - 1);
	size_t total = n + align + HDR;
	memcpy((char *)p - HDR, &base, sizeof base);
	memcpy((char *)p - HDR + sizeof base, &total, sizeof total);
	account(total, 0);
	return (void *)p;
}

void bw_aligned_free(void *q)
{
	if (!q)
		return;
	char *base;
	size_t total;
	memcpy(&base, (char *)q - HDR, sizeof base);
	memcpy(&total, (char *)q - HDR + sizeof base, sizeof total);
	atomic_fetch_sub(&mem_current, total);
	free(base);
}

void bw_advise_huge(void *p, size_t n)
{
	const uintptr_t huge = (uintptr_t)2 << 20;
	const uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + n) & ~(huge - 1);
	if (hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
}

int bw_grow(void *pbuf, size_t *cap, size_t need, size_t elem, bool keep)
{
	void **p = pbuf;
	if (need <= *cap && *p)
		return 0;
	const size_t most = elem ? SIZE_MAX / elem : SIZE_MAX; /* elements whose bytes a size_t holds */
	if (need > most)
		return bw_err(BURROW_E_NOMEM, "%zu elements of %zu bytes do not fit in memory", need, elem);
	size_t n = *cap > most - *cap / 2 ? most : *cap + *cap / 2; /* half again, up to the most */
	n = BW_MIN(BW_MAX(BW_MAX(n, need), (size_t)16), most);
	if (!keep) {
		bw_free(*p);
		*p = NULL;
		*cap = 0;
	}
	void *q = keep ? bw_realloc(*p, n * elem) : bw_malloc(n * elem);
	if (!q)
		return BURROW_E_NOMEM;
	*p = q;
	*cap = n;
	return 0;
}
