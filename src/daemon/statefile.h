/*
 * The state directory on disk (SPEC R-STATE): state.json, the policy's
 * saved document, written atomically and read back defensively (the
 * resources.sh files are resfile.c's). Writes are
 * plain file I/O with fsync; reads go through readfile, so nothing planted
 * in the folder can block them. No libevent.
 *
 * Every function returns 0 or a negative errno and, on error, sets *cause
 * to a text naming the path, which the caller frees.
 */
#ifndef TOPOAWARE_STATEFILE_H
#define TOPOAWARE_STATEFILE_H

#include <stddef.h>

#include <jansson.h>

#include "policy.h"

#define STATEFILE_NAME		"state.json"
/* Where a write is staged; a crash may leave it, the next write replaces
 * it and reads never look at it. */
#define STATEFILE_TMP		"state.json.tmp"
/* A file moved aside is STATEFILE_BAD<unixtime>, then -1, -2... if taken. */
#define STATEFILE_BAD		"state.json.bad-"
#define STATEFILE_VERSION	POLICY_STATE_VERSION	/* older still read */
/* A bigger state file is treated as corrupt rather than read: well above
 * the largest the daemon writes (POLICY_META_BUDGET in policy.h says why),
 * so that a larger one an older version wrote is still read. */
#define STATEFILE_MAX_SIZE	(512 * 1024 * 1024)

/*
 * Makes sure dir is usable: created 0700 if absent (its parent must
 * exist); refused when it is not a directory, is writable by group or
 * others, or belongs to a user other than root and us.
 */
int	statefile_check_dir(const char *dir, char **cause);

/*
 * Replaces <dir>/state.json with doc (borrowed; an object with "version"
 * 1): a temporary file in dir, written whole, fsync'ed and renamed over,
 * then dir fsync'ed. On any error before the rename the old file is left
 * as it was and the temporary one removed.
 */
int	statefile_write(const char *dir, json_t *doc, char **cause);
/*
 * The same for a document already written as compact JSON text (len
 * bytes, borrowed), such as policy_save_text gives: it must open with
 * {"version":1 and is not parsed again. A newline is added unless the
 * text ends with one.
 */
int	statefile_write_text(const char *dir, const char *text, size_t len,
	    char **cause);

/*
 * Reads <dir>/state.json into *doc (a new reference). An absent file gives
 * 0 and *doc NULL. A file that is not a JSON object with a version this
 * daemon reads (corrupt, truncated, empty, too big, missing or newer
 * version), or no regular file at all (a FIFO, a folder), is moved
 * aside with statefile_move_aside and gives -EBADMSG, *doc NULL and a cause
 * saying what was wrong and where the file went. Other errors (EIO,
 * EACCES) leave the file in place.
 */
int	statefile_read(const char *dir, json_t **doc, char **cause);

/*
 * Renames <dir>/state.json to a fresh <dir>/state.json.bad-<unixtime>[-N],
 * never replacing an earlier one, for a document the caller found unusable
 * (statefile_read does it itself). *where, if not NULL, gets the new path.
 */
int	statefile_move_aside(const char *dir, char **where, char **cause);
/* The same for another file of dir, moved to <prefix><unixtime>[-N]. */
int	statefile_move_aside_file(const char *dir, const char *name,
	    const char *prefix, char **where, char **cause);

#endif
