/* limits.c: what is left of the address space under RLIMIT_AS, what a thread's stack takes of
 * it, and the memory a cgroup gives the process. */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* The process's mapped bytes now (VmSize of /proc/self/status), or 0 when unknown. Read
 * with open/read into a stack buffer: no allocation, so it is safe before main (see
 * tools/env.c) and under a limit that is already exhausted. */
size_t bw_as_used(void)
{
	char buf[4096];
	if (bw_read_small("/proc/self/status", buf, sizeof buf) < 0)
		return 0;
	const char *p = strstr(buf, "\nVmSize:");
	return p ? (size_t)strtoull(p + 8, NULL, 10) * 1024 : 0;
}

bool bw_as_left(size_t *left, size_t *limit)
{
	struct rlimit rl;
	*left = *limit = SIZE_MAX;
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return false;
	const size_t used = bw_as_used();
	*limit = (size_t)rl.rlim_cur;
	*left = used < *limit ? *limit - used : 0;
	return true;
}

size_t bw_stack_bytes(void)
{
	pthread_attr_t a;
	size_t s = 8u << 20;
	if (pthread_getattr_default_np(&a) == 0) {
		if (pthread_attr_getstacksize(&a, &s) != 0)
			s = 8u << 20;
		pthread_attr_destroy(&a);
	}
	return s;
}

/* The number in file path (a cgroup limit), or SIZE_MAX for "max", v1's "unlimited" (a page
 * count near 2^63) or a file that is not there. */
static size_t read_limit(const char *path)
{
	char buf[64];
	if (bw_read_small(path, buf, sizeof buf) < 0)
		return SIZE_MAX;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(buf, &end, 10);
	if (end == buf || errno || v >= (1ull << 62))
		return SIZE_MAX;
	return (size_t)v;
}

/* The smallest of file `name` in dir/path and each of its parents up to dir. */
static size_t smallest_up(const char *dir, const char *path, const char *name)
{
	char p[1024], f[1200];
	size_t best = SIZE_MAX;
	if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p)
		return SIZE_MAX;
	for (;;) {
		size_t len = strlen(p);
		while (len > 1 && p[len - 1] == '/')
			p[--len] = '\0';
		if (snprintf(f, sizeof f, "%s%s/%s", dir, strcmp(p, "/") ? p : "", name) < (int)sizeof f)
			best = BW_MIN(best, read_limit(f));
		char *slash = strrchr(p, '/');
		if (!slash || len <= 1)
			break; /* the root was read */
		if (slash == p)
			p[1] = '\0'; /* "/a" -> "/" */
		else
			*slash = '\0';
	}
	return best;
}

bool bw_cgroup_mem_limit_at(const char *proc_cgroup, const char *sysfs, size_t *limit)
{
	*limit = SIZE_MAX;
	FILE *f = fopen(proc_cgroup, "re");
	if (!f)
		return false;
	char line[1200], dir[600];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2 || c2[1] != '/')
			continue;
		*c1 = *c2 = '\0';
		const char *ctrl = c1 + 1, *path = c2 + 1;
		size_t got = SIZE_MAX;
		if (!strcmp(line, "0") && !*ctrl) {
			/* v2: the unified tree at sysfs, or at sysfs/unified beside a v1 one */
			char probe[700];
			struct stat sb;
			snprintf(probe, sizeof probe, "%s/cgroup.controllers", sysfs);
			if (stat(probe, &sb) == 0)
				snprintf(dir, sizeof dir, "%s", sysfs);
			else
				snprintf(dir, sizeof dir, "%s/unified", sysfs);
			got = smallest_up(dir, path, "memory.max");
		} else {
			bool mem = false;
			for (const char *c = ctrl; *c;) {
				size_t k = strcspn(c, ",");
				mem |= k == 6 && !strncmp(c, "memory", 6);
				c += k + (c[k] == ',');
			}
			if (!mem)
				continue;
			snprintf(dir, sizeof dir, "%s/memory", sysfs);
			got = smallest_up(dir, path, "memory.limit_in_bytes");
		}
		*limit = BW_MIN(*limit, got);
	}
	fclose(f);
	return *limit != SIZE_MAX;
}

bool bw_cgroup_mem_limit(size_t *limit)
{
	return bw_cgroup_mem_limit_at("/proc/self/cgroup", "/sys/fs/cgroup", limit);
}

size_t bw_mem_total(void)
{
	const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	size_t total = pages > 0 && page > 0 ? (size_t)pages * (size_t)page : SIZE_MAX, cg;
	if (bw_cgroup_mem_limit(&cg))
		total = BW_MIN(total, cg);
	return total;
}

size_t bw_mem_available_at(const char *meminfo)
{
	FILE *f = fopen(meminfo ? meminfo : "/proc/meminfo", "r");
	if (!f)
		return SIZE_MAX;
	char line[256];
	size_t got = SIZE_MAX;
	unsigned long long kb;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
			got = kb <= SIZE_MAX / 1024 ? (size_t)kb * 1024 : SIZE_MAX;
			break;
		}
	fclose(f);
	return got;
}
