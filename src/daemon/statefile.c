/*
 * statefile.c owns the files under the state directory. Every file is
 * replaced the same way, through a temporary file in the same directory
 * that is written, synced and renamed over the old one, so a crash at any
 * moment leaves the old or the new content and never a mixture. What is
 * read back is untrusted: a bad state file is moved aside for a person to
 * look at, and the daemon starts without it rather than dying.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "atomicfile.h"
#include "readfile.h"
#include "statefile.h"
#include "xmalloc.h"

/* How many state.json.bad-<t>-N names to try before giving up. */
#define STATEFILE_BAD_TRIES	1000

int
statefile_check_dir(const char *dir, char **cause)
{
	struct stat	st;

	if (stat(dir, &st) == -1) {
		if (errno != ENOENT)
			return (atomicfile_syserr(cause, "stat", dir));
		if (mkdir(dir, 0700) == -1 && errno != EEXIST)
			return (atomicfile_syserr(cause, "mkdir", dir));
		/* Exactly 0700, whatever the umask. */
		if (chmod(dir, 0700) == -1 || stat(dir, &st) == -1)
			return (atomicfile_syserr(cause, "chmod", dir));
	}
	if (!S_ISDIR(st.st_mode))
		return (atomicfile_error(cause, ENOTDIR, "state directory %s: not a "
		    "directory", dir));
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return (atomicfile_error(cause, EPERM, "state directory %s: writable "
		    "by group or others (mode %04o); make it 0700", dir,
		    (unsigned)(st.st_mode & 07777)));
	if (st.st_uid != 0 && st.st_uid != geteuid())
		return (atomicfile_error(cause, EPERM, "state directory %s: owned by "
		    "uid %u, not by root or uid %u", dir, (unsigned)st.st_uid,
		    (unsigned)geteuid()));
	return (0);
}

/* The file is the document and a newline; only a text without one is
 * copied to add it. */
static int
sf_write_state(const char *dir, const char *text, size_t len, char **cause)
{
	char	*data;
	int	 rc;

	if (len > 0 && text[len - 1] == '\n')
		return (atomicfile_replace(dir, STATEFILE_NAME, text, len, 0600,
		    1, cause));
	data = xmalloc(len + 1);
	memcpy(data, text, len);
	data[len] = '\n';
	rc = atomicfile_replace(dir, STATEFILE_NAME, data, len + 1, 0600, 1,
	    cause);
	free(data);
	return (rc);
}

int
statefile_write(const char *dir, json_t *doc, char **cause)
{
	json_t	*v;
	char	*text;
	int	 rc;

	v = json_object_get(doc, "version");
	if (!json_is_integer(v) ||
	    json_integer_value(v) != STATEFILE_VERSION)
		return (atomicfile_error(cause, EINVAL, "%s/%s: refusing to save a "
		    "document without \"version\": %d", dir, STATEFILE_NAME,
		    STATEFILE_VERSION));
	if ((text = json_dumps(doc, JSON_COMPACT)) == NULL)
		return (atomicfile_error(cause, EINVAL, "%s/%s: the document cannot "
		    "be encoded", dir, STATEFILE_NAME));
	rc = sf_write_state(dir, text, strlen(text), cause);
	free(text);
	return (rc);
}

int
statefile_write_text(const char *dir, const char *text, size_t len,
    char **cause)
{
	char	prefix[32];
	int	n;

	/* The writer puts "version" first: checking costs no parse. */
	n = snprintf(prefix, sizeof prefix, "{\"version\":%d",
	    STATEFILE_VERSION);
	if (text == NULL || len <= (size_t)n ||
	    memcmp(text, prefix, (size_t)n) != 0 ||
	    (text[n] != ',' && text[n] != '}'))
		return (atomicfile_error(cause, EINVAL, "%s/%s: refusing to save a "
		    "document without \"version\": %d", dir, STATEFILE_NAME,
		    STATEFILE_VERSION));
	return (sf_write_state(dir, text, len, cause));
}

/* rename() that fails with EEXIST instead of replacing the target. */
static int
sf_rename_noreplace(const char *from, const char *to)
{
	struct stat	st;

	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return (0);
	if (errno != EINVAL && errno != ENOSYS)
		return (-1);
	/* The file system lacks the flag; nobody else writes here. */
	if (lstat(to, &st) == 0) {
		errno = EEXIST;
		return (-1);
	}
	if (errno != ENOENT)
		return (-1);
	return (rename(from, to));
}

int
statefile_move_aside(const char *dir, char **where, char **cause)
{
	return (statefile_move_aside_file(dir, STATEFILE_NAME, STATEFILE_BAD,
	    where, cause));
}

int
statefile_move_aside_file(const char *dir, const char *name,
    const char *prefix, char **where, char **cause)
{
	char		*path, *bad = NULL;
	long long	 now = (long long)time(NULL);
	int		 i, rc;

	xasprintf(&path, "%s/%s", dir, name);
	for (i = 0; i < STATEFILE_BAD_TRIES; i++) {
		if (i == 0)
			xasprintf(&bad, "%s/%s%lld", dir, prefix, now);
		else
			xasprintf(&bad, "%s/%s%lld-%d", dir, prefix, now, i);
		if (sf_rename_noreplace(path, bad) == 0)
			break;
		if (errno != EEXIST) {
			rc = atomicfile_error(cause, errno, "rename %s to %s: %s",
			    path, bad, strerror(errno));
			goto out;
		}
		free(bad);
		bad = NULL;
	}
	if (bad == NULL) {
		rc = atomicfile_error(cause, EEXIST, "rename %s: %d names %s%lld-N "
		    "are taken", path, STATEFILE_BAD_TRIES, prefix, now);
		goto out;
	}
	/* The move is done; losing it in a crash only repeats it. */
	(void)atomicfile_sync_dir(dir, NULL);
	if (where != NULL) {
		*where = bad;
		bad = NULL;
	}
	rc = 0;
out:
	free(bad);
	free(path);
	return (rc);
}

/* Why a state document cannot be used, or NULL when it can. */
static char *
sf_check_doc(const char *buf, size_t len, json_t **doc)
{
	json_error_t	 err;
	json_t		*d, *v;
	char		*why = NULL;

	*doc = NULL;
	if (len == 0)
		return (xstrdup("is empty"));
	d = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &err);
	if (d == NULL) {
		if (json_error_code(&err) == json_error_premature_end_of_input)
			xasprintf(&why, "is truncated (%s)", err.text);
		else
			xasprintf(&why, "is not valid JSON (line %d column %d: "
			    "%s)", err.line, err.column, err.text);
		return (why);
	}
	v = json_object_get(d, "version");
	if (!json_is_object(d))
		why = xstrdup("is not a JSON object");
	else if (v == NULL)
		why = xstrdup("has no \"version\"");
	else if (!json_is_integer(v))
		why = xstrdup("has a \"version\" that is not an integer");
	else if (json_integer_value(v) > STATEFILE_VERSION)
		xasprintf(&why, "has version %lld, newer than version %d that "
		    "this topoawared reads", (long long)json_integer_value(v),
		    STATEFILE_VERSION);
	else if (json_integer_value(v) < 1)
		xasprintf(&why, "has unknown version %lld",
		    (long long)json_integer_value(v));
	if (why != NULL)
		json_decref(d);
	else
		*doc = d;
	return (why);
}

int
statefile_read(const char *dir, json_t **doc, char **cause)
{
	char	*path, *buf = NULL, *why = NULL, *where = NULL;
	char	*mcause = NULL;
	size_t	 len = 0;
	int	 rc;

	*doc = NULL;
	xasprintf(&path, "%s/%s", dir, STATEFILE_NAME);
	/* Never blocks: a FIFO planted here must not hang the start. */
	rc = readfile(path, "state file", STATEFILE_MAX_SIZE, &buf, &len,
	    &why);
	if (rc == -ENOENT) {
		rc = 0;
		goto out;
	}
	if (rc == 0) {
		if ((why = sf_check_doc(buf, len, doc)) == NULL)
			goto out;
		/* The same shape as readfile's causes. */
		xasprintf(&mcause, "state file %s %s", path, why);
		free(why);
		why = mcause;
		mcause = NULL;
	} else if (rc != -EISDIR && rc != -EINVAL && rc != -EFBIG) {
		/* EIO, EACCES: the file may be fine, leave it. */
		*cause = why;
		why = NULL;
		goto out;
	}

	rc = statefile_move_aside(dir, &where, &mcause);
	if (rc == 0) {
		rc = atomicfile_error(cause, EBADMSG, "%s; moved aside to %s",
		    why, where);
	} else {
		rc = atomicfile_error(cause, -rc, "%s, and it could not be "
		    "moved aside: %s", why, mcause);
	}
out:
	free(mcause);
	free(where);
	free(why);
	free(buf);
	free(path);
	return (rc);
}
