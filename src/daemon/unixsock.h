/*
 * What every listener of ours on a unix socket needs before it binds: the
 * address, and whether the path is free, a socket file a dead process
 * left, or in use.
 */
#ifndef TOPOAWARE_UNIXSOCK_H
#define TOPOAWARE_UNIXSOCK_H

#include <sys/socket.h>
#include <sys/un.h>

/* Fills a unix address; -ENAMETOOLONG (with *cause) when path won't fit. */
int	unixsock_addr(struct sockaddr_un *, const char *path, char **cause);
/*
 * 0 when the path is free or a socket nobody answers on (left by a process
 * that died: the caller may replace it); -EADDRINUSE when someone answers,
 * -EEXIST when it is not a socket, another error when it cannot tell.
 */
int	unixsock_check_stale(const struct sockaddr_un *, char **cause);

#endif
