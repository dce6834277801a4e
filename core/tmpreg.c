/* tmpreg.c: the temporary outputs this process is writing now, so that an interrupted command
 * can remove them (burrow_remove_temporaries). */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Fixed slots, no allocation: registering cannot fail for memory, and removing needs none. A
 * path that does not fit (more than BW_TMP_SLOTS live temporaries, or longer than PATH_MAX) is
 * not registered; a rerun's sweep of dead processes' leftovers still finds it. */
#define BW_TMP_SLOTS 256

static struct {
	bool used;
	char path[PATH_MAX];
} slots[BW_TMP_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int bw_tmp_add(const char *path)
{
	size_t n = strlen(path);
	if (n >= PATH_MAX)
		return -1;
	int id = -1;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < BW_TMP_SLOTS && id < 0; i++)
		if (!slots[i].used) {
			memcpy(slots[i].path, path, n + 1);
			slots[i].used = true;
			id = i;
		}
	pthread_mutex_unlock(&lock);
	return id;
}

void bw_tmp_drop(int id)
{
	if (id < 0 || id >= BW_TMP_SLOTS)
		return;
	pthread_mutex_lock(&lock);
	slots[id].used = false;
	pthread_mutex_unlock(&lock);
}

/* rm -rf into a fixed buffer (no counting allocator, no error messages): best effort. */
static void remove_tree(char *path, size_t len)
{
	struct stat sb;
	if (lstat(path, &sb) < 0)
		return;
	if (!S_ISDIR(sb.st_mode)) {
		unlink(path);
		return;
	}
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		size_t k = strlen(e->d_name);
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || len + k + 2 > PATH_MAX)
			continue;
		path[len] = '/';
		memcpy(path + len + 1, e->d_name, k + 1);
		remove_tree(path, len + 1 + k);
		path[len] = '\0';
	}
	if (d)
		closedir(d);
	rmdir(path);
}

void burrow_remove_temporaries(void)
{
	static char buf[PATH_MAX];
	/* Held for good: a thread that starts a new temporary from now on waits here before
	 * creating it, so nothing is created after the sweep (the caller is about to exit). */
	pthread_mutex_lock(&lock);
	for (int i = 0; i < BW_TMP_SLOTS; i++) {
		if (!slots[i].used)
			continue;
		/* a directory another thread is still filling may refuse rmdir once: try again */
		for (int tries = 0; tries < 8; tries++) {
			size_t n = strlen(slots[i].path);
			memcpy(buf, slots[i].path, n + 1);
			remove_tree(buf, n);
			struct stat sb;
			if (lstat(slots[i].path, &sb) < 0 && errno == ENOENT)
				break;
		}
		slots[i].used = false;
	}
}
