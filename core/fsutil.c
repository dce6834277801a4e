/* fsutil.c: file helpers: full writes and reads, durable renames and replaces, mkdir -p, rm -rf. */
#define _GNU_SOURCE
#include "internal.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int bw_write_all(int fd, const void *buf, size_t n, const char *path)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t w = write(fd, p, n > (1u << 30) ? (1u << 30) : n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return bw_err_errno(errno, path, "write");
		}
		if (w == 0)
			return bw_err(BURROW_E_IO, "%s: write: no progress (disk full?)", path);
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int bw_pread_all(int fd, void *buf, size_t n, int64_t off, const char *path)
{
	char *p = buf;
	while (n > 0) {
		ssize_t r = pread(fd, p, n > (1u << 30) ? (1u << 30) : n, off);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return bw_err_errno(errno, path, "read");
		}
		if (r == 0)
			return bw_err(BURROW_E_FORMAT, "%s: unexpected end of file at byte %lld", path, (long long)off);
		p += r;
		off += r;
		n -= (size_t)r;
	}
	return 0;
}

int bw_open_input(const char *path, int oflags, int *fd, int64_t *size)
{
	struct stat sb;
	int st, f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | oflags);
	*fd = -1;
	if (f < 0)
		return bw_err_errno(errno, path, "open");
	if (fstat(f, &sb) < 0) {
		st = bw_err_errno(errno, path, "stat");
		goto out_close;
	}
	if (S_ISDIR(sb.st_mode)) {
		st = bw_err(BURROW_E_INVAL, "%s: is a directory, not a file", path);
		goto out_close;
	}
	if (!S_ISREG(sb.st_mode) && !S_ISBLK(sb.st_mode)) {
		st = bw_err(BURROW_E_INVAL, "%s: not a regular file (a %s)", path,
			    S_ISFIFO(sb.st_mode) ? "FIFO" : S_ISSOCK(sb.st_mode) ? "socket" : "character device");
		goto out_close;
	}
	if (fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK) < 0) {
		st = bw_err_errno(errno, path, "fcntl");
		goto out_close;
	}
	if (size)
		*size = (int64_t)sb.st_size;
	*fd = f;
	return 0;
out_close:
	close(f);
	return st;
}

ssize_t bw_read_small(const char *path, char *buf, size_t cap)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK); /* a FIFO reads as empty */
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, cap - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return n;
}

int bw_read_text(const char *path, size_t max_bytes, char **out)
{
	int64_t size;
	int fd, st = bw_open_input(path, 0, &fd, &size);
	*out = NULL;
	if (st)
		return st;
	if ((uint64_t)size > max_bytes) {
		st = bw_err(BURROW_E_FORMAT, "%s: %lld bytes is too large for metadata", path, (long long)size);
		goto out_close;
	}
	char *s = bw_malloc((size_t)size + 1);
	if (!s) {
		st = BURROW_E_NOMEM;
		goto out_close;
	}
	st = bw_pread_all(fd, s, (size_t)size, 0, path);
	if (st) {
		bw_free(s);
		goto out_close;
	}
	s[size] = '\0';
	*out = s;
out_close:
	close(fd);
	return st;
}

int bw_fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return bw_err_errno(errno, dir, "open directory");
	int st = 0;
	if (fsync(fd) < 0 && errno != EINVAL)
		st = bw_err_errno(errno, dir, "fsync directory");
	close(fd);
	return st;
}

int bw_mkdir_p(const char *path, int mode)
{
	char *p = bw_strdup(path);
	if (!p)
		return BURROW_E_NOMEM;
	int st = 0;
	for (char *s = p + 1;; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, (mode_t)mode) < 0 && errno != EEXIST) {
			st = bw_err_errno(errno, p, "mkdir");
			break;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	bw_free(p);
	return st;
}

int bw_rm_rf(const char *path)
{
	struct stat sb;
	if (lstat(path, &sb) < 0)
		return errno == ENOENT ? 0 : bw_err_errno(errno, path, "stat");
	if (S_ISDIR(sb.st_mode)) {
		DIR *d = opendir(path);
		if (!d)
			return bw_err_errno(errno, path, "opendir");
		struct dirent *e;
		int st = 0;
		while (st == 0 && (e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			char *sub = bw_path_join(path, e->d_name);
			st = sub ? bw_rm_rf(sub) : BURROW_E_NOMEM;
			bw_free(sub);
		}
		closedir(d);
		if (st)
			return st;
		if (rmdir(path) < 0)
			return bw_err_errno(errno, path, "rmdir");
		return 0;
	}
	if (unlink(path) < 0 && errno != ENOENT)
		return bw_err_errno(errno, path, "unlink");
	return 0;
}

char *bw_path_join(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s = bw_malloc(la + lb + 2);
	if (!s)
		return NULL;
	memcpy(s, a, la);
	size_t k = la;
	if (la && a[la - 1] != '/')
		s[k++] = '/';
	memcpy(s + k, b, lb + 1);
	return s;
}

const char *bw_scratch_dir(const char *given)
{
	if (given)
		return given;
	const char *env = getenv("TMPDIR");
	return env && *env ? env : "/tmp";
}

char *bw_dirname(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return bw_strdup(".");
	if (slash == path)
		return bw_strdup("/");
	size_t n = (size_t)(slash - path);
	char *s = bw_malloc(n + 1);
	if (s) {
		memcpy(s, path, n);
		s[n] = '\0';
	}
	return s;
}

bw_rename_fault_fn bw_rename_fault_hook;

/* rename(2), or the failure the test hook asks for. */
static int hooked_rename(const char *from, const char *to)
{
	int e = bw_rename_fault_hook ? bw_rename_fault_hook(from, to) : 0;
	if (e) {
		errno = e;
		return -1;
	}
	return rename(from, to);
}

int bw_scratch_fd(const char *dir, const char *stem, int *fd)
{
	char name[64];
	snprintf(name, sizeof name, "%sXXXXXX", stem);
	char *p = bw_path_join(dir, name);
	if (!p)
		return BURROW_E_NOMEM;
	int st = 0;
	if ((*fd = mkostemp(p, O_CLOEXEC)) < 0)
		st = bw_err_errno(errno, p, "create a scratch file");
	else
		unlink(p);
	bw_free(p);
	return st;
}

int bw_replace_file(const char *tmp, const char *dst)
{
	if (hooked_rename(tmp, dst) < 0)
		return bw_err_errno(errno, dst, "rename");
	char *dir = bw_dirname(dst);
	int st = dir ? bw_fsync_dir(dir) : BURROW_E_NOMEM;
	bw_free(dir);
	return st;
}

int bw_replace_dir(const char *tmp, const char *dst, bool replace)
{
	struct stat sb;
	int st = 0;
	/* allocate before the first rename: nothing may fail for want of memory after it */
	char *old = NULL, *parent = bw_dirname(dst);
	if (!parent)
		return BURROW_E_NOMEM;
	if (stat(dst, &sb) == 0) {
		if (!replace) {
			st = bw_err(BURROW_E_EXISTS, "%s: already exists", dst);
			goto out;
		}
		if (!(old = bw_malloc(strlen(dst) + 32))) {
			st = BURROW_E_NOMEM;
			goto out;
		}
		sprintf(old, "%s.old.%ld", dst, (long)getpid());
		if (hooked_rename(dst, old) < 0) {
			st = bw_err_errno(errno, dst, "move aside");
			goto out;
		}
	}
	if (hooked_rename(tmp, dst) < 0) {
		const int e = errno;
		st = bw_err_errno(e, dst, "rename into place");
		if (old && hooked_rename(old, dst) < 0)
			bw_err(st, "%s: rename into place: %s; moving the previous one back failed too (%s): it is in %s",
			       dst, strerror(e), strerror(errno), old);
		goto out;
	}
	if (old)
		bw_rm_rf(old); /* best effort: a leftover is removed by the next writer of dst */
	st = bw_fsync_dir(parent);
out:
	bw_free(old);
	bw_free(parent);
	return st;
}

/* Forget the temporary's slot in the registry and free both names. */
static void atomic_release(bw_atomic_file *f)
{
	bw_tmp_drop(f->reg);
	f->reg = -1;
	bw_free(f->path);
	bw_free(f->tmp);
	f->path = f->tmp = NULL;
}

int bw_atomic_open(bw_atomic_file *f, const char *path)
{
	f->fd = -1;
	f->reg = -1;
	f->path = f->tmp = NULL;
	int st = bw_rm_stale_tmp(path);
	if (st)
		return st;
	f->path = bw_strdup(path);
	f->tmp = bw_malloc(strlen(path) + 32);
	if (!f->path || !f->tmp) {
		bw_free(f->path);
		bw_free(f->tmp);
		f->path = f->tmp = NULL;
		return BURROW_E_NOMEM;
	}
	sprintf(f->tmp, "%s.tmp.%ld", path, (long)getpid());
	f->reg = bw_tmp_add(f->tmp);
	f->fd = open(f->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		st = bw_err_errno(errno, f->path, "create"); /* the temporary is gone: name what was asked for */
		atomic_release(f);
		return st;
	}
	return 0;
}

int bw_atomic_commit(bw_atomic_file *f)
{
	int st = 0;
	if (fsync(f->fd) < 0)
		st = bw_err_errno(errno, f->path, "fsync");
	if (close(f->fd) < 0 && !st)
		st = bw_err_errno(errno, f->path, "close");
	f->fd = -1;
	if (!st)
		st = bw_replace_file(f->tmp, f->path);
	if (st)
		unlink(f->tmp);
	atomic_release(f);
	return st;
}

void bw_atomic_abort(bw_atomic_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp)
		unlink(f->tmp);
	atomic_release(f);
}

int bw_write_text_atomic(const char *path, const char *text)
{
	bw_atomic_file f;
	int st = bw_atomic_open(&f, path);
	if (st)
		return st;
	if ((st = bw_write_all(f.fd, text, strlen(text), f.path)) || (st = bw_write_all(f.fd, "\n", 1, f.path))) {
		bw_atomic_abort(&f);
		return st;
	}
	return bw_atomic_commit(&f);
}

/* Does the name hold, at `digits`, a PID of no live process followed by `stop` (a
 * character, or '\0' for the end), and is parent/name this user's? Then its full path
 * (bw_free it) in *full; *full stays NULL otherwise. BURROW_E_NOMEM when memory runs out. */
static int stale_path(const char *parent, const char *name, const char *digits, char stop, char **full)
{
	char *end;
	*full = NULL;
	long pid = strtol(digits, &end, 10);
	if (end == digits || *end != stop || pid <= 0 || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 ||
	    errno != ESRCH)
		return 0;
	char *p = bw_path_join(parent, name);
	if (!p)
		return BURROW_E_NOMEM;
	struct stat sb;
	if (lstat(p, &sb) < 0 || sb.st_uid != geteuid()) {
		bw_free(p);
		return 0;
	}
	*full = p;
	return 0;
}

int bw_rm_stale_tmp(const char *path)
{
	char *parent = bw_dirname(path);
	if (!parent)
		return BURROW_E_NOMEM;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t bl = strlen(base);
	DIR *d = opendir(parent);
	struct dirent *e;
	int st = 0;
	while (!st && d && bl && (e = readdir(d))) {
		const char *rest = e->d_name + bl;
		if (strncmp(e->d_name, base, bl) || (strncmp(rest, ".tmp.", 5) && strncmp(rest, ".old.", 5)))
			continue;
		char *p;
		if (!(st = stale_path(parent, e->d_name, rest + 5, '\0', &p)) && p)
			bw_rm_rf(p);
		bw_free(p);
	}
	if (d)
		closedir(d);
	bw_free(parent);
	return st;
}

int bw_rm_stale_prefixed(const char *dir, const char *prefix)
{
	const size_t pl = strlen(prefix);
	DIR *d = opendir(dir);
	struct dirent *e;
	int st = 0;
	while (!st && d && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, pl))
			continue;
		char *p;
		if (!(st = stale_path(dir, e->d_name, e->d_name + pl, '-', &p)) && p)
			unlink(p);
		bw_free(p);
	}
	if (d)
		closedir(d);
	return st;
}

int bw_check_space(const char *path, double bytes, const char *what)
{
	char *p = bw_strdup(path);
	struct statvfs vs;
	int rc = -1;
	while (p && (rc = statvfs(p, &vs)) < 0 && strcmp(p, "/") && strcmp(p, ".")) {
		char *up = bw_dirname(p);
		bw_free(p);
		p = up;
	}
	if (!p)
		return BURROW_E_NOMEM;
	bw_free(p);
	if (rc < 0)
		return 0; /* cannot tell: the writes will say */
	double avail = (double)vs.f_bavail * (double)vs.f_frsize;
	if (bytes > avail)
		return bw_err(BURROW_E_IO, "%s: %s needs at least %.0f bytes, but only %.0f are free there", path, what,
			      bytes, avail);
	return 0;
}
