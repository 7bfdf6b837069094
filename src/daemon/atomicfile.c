/*
 * atomicfile.c owns whole-file replacement by rename and the error causes
 * of the files the daemon writes.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#ifdef TOPOAWARE_DEBUG_HOOKS
#include <signal.h>
#endif
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "xmalloc.h"

int
atomicfile_error(char **cause, int error, const char *fmt, ...)
{
	va_list	 ap;
	char	*s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) == -1)
		s = xstrdup("out of memory");
	va_end(ap);
	if (cause != NULL)
		*cause = s;
	else
		free(s);
	return (-error);
}

int
atomicfile_syserr(char **cause, const char *op, const char *path)
{
	int	error = errno;

	if (error == 0)
		error = EIO;
	return (atomicfile_error(cause, error, "%s %s: %s", op, path,
	    strerror(error)));
}

static int
write_all(int fd, const char *data, size_t len)
{
	ssize_t	n;

	while (len > 0) {
		n = write(fd, data, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1)
			return (-1);
		if (n == 0) {
			errno = EIO;
			return (-1);
		}
		data += n;
		len -= (size_t)n;
	}
	return (0);
}

int
atomicfile_sync_dir(const char *dir, char **cause)
{
	int	fd, rc = 0;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return (atomicfile_syserr(cause, "open", dir));
	/* Some file systems cannot sync a folder and say EINVAL. */
	if (fsync(fd) == -1 && errno != EINVAL)
		rc = atomicfile_syserr(cause, "fsync", dir);
	close(fd);
	return (rc);
}

#ifdef TOPOAWARE_DEBUG_HOOKS
/*
 * TOPOAWARE_DEBUG_CRASH=before-rename kills the daemon between the durable
 * write of state.json.tmp and its rename, so tests can see a crash there.
 */
static void
debug_crash(const char *name)
{
	static int	 read_env, crash;
	static long	 countdown;
	const char	*v;
	char		*end;

	if (!read_env) {
		v = getenv("TOPOAWARE_DEBUG_CRASH");
		if (v != NULL && strcmp(v, "before-rename") == 0)
			crash = 1;
		else if (v != NULL && strncmp(v, "before-rename:", 14) == 0) {
			countdown = strtol(v + 14, &end, 10);
			crash = *end == '\0' && countdown > 0;
		}
		read_env = 1;
	}
	if (!crash || strcmp(name, "state.json") != 0)
		return;
	/* before-rename:N dies at the Nth save, the first being at start. */
	if (countdown > 1) {
		countdown--;
		return;
	}
	raise(SIGKILL);
}
#endif

/* atomicfile_fill, and atomicfile_new: the file made where there is
 * none, no open tried first and no cut after (a new file ends where its
 * data does). */
static int
fill(const char *path, const char *data, size_t len, int new, char **cause)
{
	int	fd = -1, rc = 0, made = 0;

	if (!new)
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd == -1 && (new || errno == ENOENT)) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
		    O_NOFOLLOW, 0644);
		made = fd != -1;
		/* Made after all: as atomicfile_fill. */
		if (fd == -1 && new && errno == EEXIST)
			return (fill(path, data, len, 0, cause));
	}
	if (fd == -1)
		return (atomicfile_syserr(cause, "open", path));
	/* The mode, whatever the umask. */
	if (made && fchmod(fd, 0644) == -1)
		rc = atomicfile_syserr(cause, "fchmod", path);
	else if (write_all(fd, data, len) == -1)
		rc = atomicfile_syserr(cause, "write", path);
	else if (!made && ftruncate(fd, (off_t)len) == -1)
		rc = atomicfile_syserr(cause, "ftruncate", path);
	if (close(fd) == -1 && rc == 0)
		rc = atomicfile_syserr(cause, "close", path);
	return (rc);
}

int
atomicfile_fill(const char *path, const char *data, size_t len,
    char **cause)
{
	return (fill(path, data, len, 0, cause));
}

int
atomicfile_new(const char *path, const char *data, size_t len, char **cause)
{
	return (fill(path, data, len, 1, cause));
}

int
atomicfile_replace(const char *dir, const char *name, const char *data,
    size_t len, mode_t mode, int durable, char **cause)
{
	char	*path, *tmp;
	int	 fd, rc, flags;

	xasprintf(&path, "%s/%s", dir, name);
	xasprintf(&tmp, "%s%s", path, ATOMICFILE_TMP_SUFFIX);
	flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
	fd = open(tmp, flags, mode);
	if (fd == -1 && errno == EEXIST && unlink(tmp) == 0)
		fd = open(tmp, flags, mode);
	if (fd == -1) {
		rc = atomicfile_syserr(cause, "create", tmp);
		goto out;
	}
	/* The mode, whatever the umask. */
	if (fchmod(fd, mode) == -1) {
		rc = atomicfile_syserr(cause, "chmod", tmp);
		goto fail;
	}
	if (write_all(fd, data, len) == -1) {
		rc = atomicfile_syserr(cause, "write", tmp);
		goto fail;
	}
	if (durable && fsync(fd) == -1) {
		rc = atomicfile_syserr(cause, "fsync", tmp);
		goto fail;
	}
	rc = close(fd);
	fd = -1;
	if (rc == -1) {
		rc = atomicfile_syserr(cause, "close", tmp);
		goto fail;
	}
#ifdef TOPOAWARE_DEBUG_HOOKS
	debug_crash(name);
#endif
	if (rename(tmp, path) == -1) {
		rc = atomicfile_error(cause, errno, "rename %s to %s: %s", tmp,
		    path, strerror(errno));
		goto fail;
	}
	rc = durable ? atomicfile_sync_dir(dir, cause) : 0;
	goto out;

fail:
	if (fd != -1)
		close(fd);
	unlink(tmp);
out:
	free(tmp);
	free(path);
	return (rc);
}
