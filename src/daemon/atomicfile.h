/*
 * Replacing a file whole: the new content is staged in <name>.tmp beside
 * it and renamed over it, so a reader or a crash sees the old file or the
 * new one, never a part. Shared by the state file, resources.sh and CDI
 * specs, with the error causes they give.
 */
#ifndef TOPOAWARE_ATOMICFILE_H
#define TOPOAWARE_ATOMICFILE_H

#include <sys/types.h>

#define ATOMICFILE_TMP_SUFFIX	".tmp"

/*
 * Replaces <dir>/<name>. Only this daemon writes these names, so a
 * temporary file already there was left by a crash and is replaced.
 * Durable writes fsync the file and the folder before returning; the
 * others are atomic for readers only (for files derived from the state).
 * On failure the old file is intact and no temporary file is left.
 */
int	atomicfile_replace(const char *dir, const char *name, const char *data,
	    size_t len, mode_t mode, int durable, char **cause);
/*
 * Writes data over the file at path from its start and cuts it there
 * (made, mode 0644, when absent; a link is not followed): for a file
 * nobody reads yet, about to be renamed into place, whose inode is
 * reused. Not synced. 0 or a negative errno and a cause.
 */
int	atomicfile_fill(const char *path, const char *data, size_t len,
	    char **cause);
/* The same where the caller knows there is no file yet (its folder was
 * just made): two system calls fewer. */
int	atomicfile_new(const char *path, const char *data, size_t len,
	    char **cause);
/* fsync a folder after a rename or unlink in it (EINVAL is no error). */
int	atomicfile_sync_dir(const char *dir, char **cause);

/* Sets *cause (when cause is not NULL) and returns -error. */
int	atomicfile_error(char **cause, int error, const char *fmt, ...)
	    __attribute__((__format__(__printf__, 3, 4)));
/* The same for the system call that just failed: "<op> <path>: <why>". */
int	atomicfile_syserr(char **cause, const char *op, const char *path);

#endif
