/*
 * readfile.c owns reading a small file whole without blocking. A FIFO put
 * in place of a file would hold a plain open() until a writer comes, and
 * the loop with it; a device may act on being opened. So the path is
 * looked at first, opened with O_NONBLOCK only when it is a regular file,
 * and looked at again through the descriptor, in case it was swapped in
 * between. The size fstat gives is a hint only (a sysfs attribute says
 * 4096 and holds a few bytes; a file may grow): the bound is checked
 * against what is read.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "readfile.h"
#include "xmalloc.h"

/* The first buffer when the size is unknown or a hint too small to use. */
#define READFILE_MIN_BUF	256

static const char *
readfile_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return ("a directory");
	if (S_ISFIFO(mode))
		return ("a FIFO");
	if (S_ISSOCK(mode))
		return ("a socket");
	if (S_ISCHR(mode))
		return ("a character device");
	if (S_ISBLK(mode))
		return ("a block device");
	return ("of an unknown type");
}

/* *cause = "<what> <path><text>"; returns rc. */
static int __attribute__((__format__(__printf__, 5, 6)))
readfile_fail(char **cause, int rc, const char *what, const char *path,
    const char *fmt, ...)
{
	va_list	 ap;
	char	*text;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) == -1)
		text = NULL;
	va_end(ap);
	xasprintf(cause, "%s%s%s%s", what != NULL ? what : "",
	    what != NULL ? " " : "", path, text != NULL ? text : "");
	free(text);
	return (rc);
}

/* Refuses what is not a regular file, or is over the bound by its size. */
static int
readfile_check(const char *path, const char *what, const struct stat *st,
    size_t max, char **cause)
{
	if (!S_ISREG(st->st_mode))
		return (readfile_fail(cause, S_ISDIR(st->st_mode) ? -EISDIR :
		    -EINVAL, what, path, " is %s, not a regular file",
		    readfile_kind(st->st_mode)));
	if (st->st_size < 0 || (unsigned long long)st->st_size > max)
		return (readfile_fail(cause, -EFBIG, what, path, " is larger "
		    "than %zu bytes", max));
	return (0);
}

int
readfile(const char *path, const char *what, size_t max, char **buf,
    size_t *len, char **cause)
{
	struct stat	 st;
	char		*p = NULL;
	size_t		 size, have = 0;
	ssize_t		 n;
	int		 fd, rc;

	*buf = NULL;
	if (len != NULL)
		*len = 0;
	if (stat(path, &st) != 0)
		return (readfile_fail(cause, -errno, what, path, ": %s",
		    strerror(errno)));
	if ((rc = readfile_check(path, what, &st, max, cause)) != 0)
		return (rc);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd == -1)
		return (readfile_fail(cause, -errno, what, path, ": %s",
		    strerror(errno)));
	if (fstat(fd, &st) != 0) {
		rc = readfile_fail(cause, -errno, what, path, ": fstat: %s",
		    strerror(errno));
		goto out;
	}
	if ((rc = readfile_check(path, what, &st, max, cause)) != 0)
		goto out;

	/* One byte past the size, so that the end comes in the first read. */
	size = (size_t)st.st_size + 1;
	if (size < READFILE_MIN_BUF)
		size = READFILE_MIN_BUF;
	if (size > max + 1)
		size = max + 1;
	p = xmalloc(size + 1);
	for (;;) {
		if (have == size) {
			if (size > max)
				break;
			size = size > max / 2 ? max + 1 : size * 2;
			p = xreallocarray(p, size + 1, 1);
		}
		n = read(fd, p + have, size - have);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			rc = readfile_fail(cause, -errno, what, path,
			    ": read: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		have += (size_t)n;
	}
	if (have > max) {
		rc = readfile_fail(cause, -EFBIG, what, path, " is larger "
		    "than %zu bytes", max);
		goto out;
	}
	p[have] = '\0';
	*buf = p;
	p = NULL;
	if (len != NULL)
		*len = have;
	rc = 0;
out:
	free(p);
	close(fd);
	return (rc);
}
