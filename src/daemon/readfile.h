/*
 * The one way the daemon reads a file whole: the config, state.json, the
 * kubeconfig and its credentials, sysfs. Nothing here can block the loop
 * on a FIFO or a device planted where a file should be, and nothing larger
 * than the caller's bound is read.
 */
#ifndef TOPOAWARE_READFILE_H
#define TOPOAWARE_READFILE_H

#include <stddef.h>

/*
 * Reads the regular file at path (a symlink to one is fine) into *buf,
 * NUL-terminated, *len bytes without the NUL (len may be NULL); the caller
 * frees *buf. what names the file in the cause ("config" gives "config
 * /etc/x is a FIFO, not a regular file"); NULL names it by its path alone.
 *
 * Returns 0, or a negative errno with *cause (the caller frees), which
 * always names the path: -ENOENT or -ENOTDIR when it does not exist,
 * -EISDIR for a folder, -EINVAL for anything else that is not a regular
 * file (FIFO, socket, device), -EFBIG when it holds more than max bytes,
 * or what open or read failed with.
 */
int	readfile(const char *path, const char *what, size_t max, char **buf,
	    size_t *len, char **cause);

#endif
