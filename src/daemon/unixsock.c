/*
 * unixsock.c owns the checks shared by the admin socket and the gRPC
 * listeners before they bind: never steal a live server's path, never
 * replace a file that is not a socket.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "unixsock.h"
#include "xmalloc.h"

int
unixsock_addr(struct sockaddr_un *sun, const char *path, char **cause)
{
	memset(sun, 0, sizeof *sun);
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun->sun_path) {
		xasprintf(cause, "%s: path too long for a unix socket", path);
		return (-ENAMETOOLONG);
	}
	memcpy(sun->sun_path, path, strlen(path) + 1);
	return (0);
}

int
unixsock_check_stale(const struct sockaddr_un *sun, char **cause)
{
	const char	*path = sun->sun_path;
	struct stat	 sb;
	int		 fd, rc;

	if (lstat(path, &sb) != 0) {
		if (errno == ENOENT)
			return (0);
		rc = -errno;
		xasprintf(cause, "%s: %s", path, strerror(errno));
		return (rc);
	}
	if (!S_ISSOCK(sb.st_mode)) {
		xasprintf(cause, "%s exists and is not a socket; not replacing "
		    "it", path);
		return (-EEXIST);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1) {
		rc = -errno;
		xasprintf(cause, "socket: %s", strerror(errno));
		return (rc);
	}
	/* A listening server accepts, or is too busy to (EAGAIN). */
	if (connect(fd, (const struct sockaddr *)sun, sizeof *sun) == 0 ||
	    errno == EAGAIN || errno == EINPROGRESS) {
		close(fd);
		xasprintf(cause, "%s: another server is answering on it", path);
		return (-EADDRINUSE);
	}
	rc = errno;
	close(fd);
	if (rc != ECONNREFUSED) {
		xasprintf(cause, "%s: cannot tell whether it is in use: %s",
		    path, strerror(rc));
		return (-rc);
	}
	return (0);
}
