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

/* A container id is used as a file name: one plain path component. */
static int
sf_check_id(const char *id, char **cause)
{
	const char	*p;
	char		*esc;
	int		 rc;

	for (p = id; *p != '\0'; p++) {
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			break;
	}
	if (*id != '\0' && *p == '\0' && strcmp(id, ".") != 0 &&
	    strcmp(id, "..") != 0 && strlen(id) <= NAME_MAX)
		return (0);
	esc = log_escape(id, 80);
	rc = atomicfile_error(cause, EINVAL, "container id \"%s\" is not a safe file "
	    "name", esc);
	free(esc);
	return (rc);
}

static int
sf_var_name_ok(const char *s)
{
	const char	*p;

	if (*s == '\0' || (*s >= '0' && *s <= '9'))
		return (0);
	for (p = s; *p != '\0'; p++) {
		if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
			return (0);
	}
	return (1);
}

/* Inside double quotes a shell would still expand these. */
static int
sf_var_value_ok(const char *s)
{
	const char	*p;

	for (p = s; *p != '\0'; p++) {
		if (*p < 0x20 || *p > 0x7e || *p == '"' || *p == '\\' ||
		    *p == '$' || *p == '`')
			return (0);
	}
	return (1);
}

static int
sf_var_cmp(const void *a, const void *b)
{
	const struct statefile_var *const	*va = a, *const *vb = b;

	return (strcmp((*va)->name, (*vb)->name));
}

/* Beside resources.sh: the next one's inode, and the old one's for a
 * moment. */
#define SF_SPARE	".resources.sh.spare"
#define SF_OLD		".resources.sh.old"

/*
 * resources.sh is replaced often (every container whose shared CPUs
 * move) and read by others: atomically, so that a reader sees the old
 * file or the new one, and without making or freeing an inode or a block
 * each time, which costs a journal update and on some disks a synchronous
 * discard. The content goes into a spare file kept beside it, which is
 * exchanged with it (or renamed over it, the old file kept meanwhile by a
 * second link): the old file is the spare of the next time.
 */
static int
sf_replace_recycled(const char *idir, const char *data, size_t len,
    char **cause)
{
	char	*live, *spare, *old;
	size_t	 done = 0;
	ssize_t	 n;
	int	 fd, rc = 0, kept;

	xasprintf(&live, "%s/%s", idir, STATEFILE_RESOURCES);
	xasprintf(&spare, "%s/%s", idir, SF_SPARE);
	xasprintf(&old, "%s/%s", idir, SF_OLD);
	if ((fd = open(spare, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 &&
	    errno == ENOENT && (fd = open(spare, O_WRONLY | O_CREAT | O_EXCL |
	    O_CLOEXEC | O_NOFOLLOW, 0644)) != -1 && fchmod(fd, 0644) == -1) {
		rc = atomicfile_syserr(cause, "fchmod", spare);
		goto out;
	}
	if (fd == -1) {
		rc = atomicfile_syserr(cause, "open", spare);
		goto out;
	}
	while (done < len) {
		if ((n = pwrite(fd, data + done, len - done, (off_t)done)) ==
		    -1) {
			if (errno == EINTR)
				continue;
			rc = atomicfile_syserr(cause, "write", spare);
			goto out;
		}
		done += (size_t)n;
	}
	if (ftruncate(fd, (off_t)len) == -1) {
		rc = atomicfile_syserr(cause, "ftruncate", spare);
		goto out;
	}
	/* One exchange where the file system has it: the old file is then
	 * the spare, whole. */
	if (renameat2(AT_FDCWD, spare, AT_FDCWD, live, RENAME_EXCHANGE) == 0)
		goto out;
	if (errno != ENOENT && errno != EINVAL && errno != ENOSYS) {
		rc = atomicfile_syserr(cause, "rename", spare);
		goto out;
	}
	kept = link(live, old) == 0;
	if (!kept && errno == EEXIST && unlink(old) == 0)
		kept = link(live, old) == 0;
	if (rename(spare, live) == -1) {
		rc = atomicfile_syserr(cause, "rename", spare);
		if (kept)
			(void)unlink(old);
		goto out;
	}
	if (kept && rename(old, spare) == -1)
		(void)unlink(old);
out:
	if (fd != -1)
		close(fd);
	free(live);
	free(spare);
	free(old);
	return (rc);
}

int
statefile_render_resources(const char *id, const struct statefile_var *vars,
    size_t nvars, char **out, size_t *outlen, char **cause)
{
	const struct statefile_var	**sorted;
	char				 *data, *esc;
	size_t				  i, len = 0, size = 1;
	int				  rc;

	*out = NULL;
	for (i = 0; i < nvars; i++) {
		if (vars[i].name == NULL || !sf_var_name_ok(vars[i].name) ||
		    vars[i].value == NULL || !sf_var_value_ok(vars[i].value)) {
			esc = log_escape(vars[i].name, 80);
			rc = atomicfile_error(cause, EINVAL, "%s for container %s: "
			    "bad variable %s", STATEFILE_RESOURCES, id, esc);
			free(esc);
			return (rc);
		}
		size += strlen(vars[i].name) + strlen(vars[i].value) + 4;
	}
	sorted = xreallocarray(NULL, nvars + 1, sizeof *sorted);
	for (i = 0; i < nvars; i++)
		sorted[i] = &vars[i];
	qsort(sorted, nvars, sizeof *sorted, sf_var_cmp);
	for (i = 1; i < nvars; i++) {
		if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) {
			rc = atomicfile_error(cause, EINVAL, "%s for container %s: "
			    "variable %s given twice", STATEFILE_RESOURCES, id,
			    sorted[i]->name);
			free(sorted);
			return (rc);
		}
	}
	data = xmalloc(size);
	data[0] = '\0';
	for (i = 0; i < nvars; i++) {
		len += (size_t)snprintf(data + len, size - len, "%s=\"%s\"\n",
		    sorted[i]->name, sorted[i]->value);
	}
	free(sorted);
	*out = data;
	*outlen = len;
	return (0);
}

int
statefile_put_resources(const char *dir, const char *id, const char *data,
    size_t len, char **cause)
{
	char	*cdir, *idir;
	int	 rc;

	if ((rc = sf_check_id(id, cause)) != 0)
		return (rc);
	xasprintf(&cdir, "%s/containers", dir);
	xasprintf(&idir, "%s/%s", cdir, id);
	/* The folders are there but for the first write: made on a
	 * failure, and the write tried again (with its cause). */
	if ((rc = sf_replace_recycled(idir, data, len, NULL)) != 0) {
		if (mkdir(cdir, 0700) == -1 && errno != EEXIST)
			rc = atomicfile_syserr(cause, "mkdir", cdir);
		else if (mkdir(idir, 0700) == -1 && errno != EEXIST)
			rc = atomicfile_syserr(cause, "mkdir", idir);
		else
			rc = sf_replace_recycled(idir, data, len, cause);
	}
	free(idir);
	free(cdir);
	return (rc);
}

int
statefile_write_resources(const char *dir, const char *id,
    const struct statefile_var *vars, size_t nvars, char **cause)
{
	char	*data;
	size_t	 len;
	int	 rc;

	if ((rc = sf_check_id(id, cause)) != 0 ||
	    (rc = statefile_render_resources(id, vars, nvars, &data, &len,
	    cause)) != 0)
		return (rc);
	rc = statefile_put_resources(dir, id, data, len, cause);
	free(data);
	return (rc);
}

int
statefile_remove_resources(const char *dir, const char *id, char **cause)
{
	char	*idir, *file;
	int	 rc = 0;

	if ((rc = sf_check_id(id, cause)) != 0)
		return (rc);
	static const char	*names[] = { STATEFILE_RESOURCES,
	    STATEFILE_RESOURCES ".tmp", SF_SPARE, SF_OLD };
	size_t			 i;

	xasprintf(&idir, "%s/containers/%s", dir, id);
	for (i = 0; i < sizeof names / sizeof names[0] && rc == 0; i++) {
		xasprintf(&file, "%s/%s", idir, names[i]);
		if (unlink(file) == -1 && errno != ENOENT && errno != ENOTDIR)
			rc = atomicfile_syserr(cause, "unlink", file);
		free(file);
	}
	if (rc == 0 && rmdir(idir) == -1 && errno != ENOENT)
		rc = atomicfile_syserr(cause, "rmdir", idir);
	free(idir);
	return (rc);
}

int
statefile_prune_resources(const char *dir, int (*keep)(const char *, void *),
    void *arg, char **cause)
{
	struct dirent	*de;
	DIR		*d;
	char		*cdir, *why = NULL;
	int		 rc = 0, n = 0;

	xasprintf(&cdir, "%s/containers", dir);
	if ((d = opendir(cdir)) == NULL) {
		if (errno != ENOENT)
			rc = atomicfile_syserr(cause, "opendir", cdir);
		free(cdir);
		return (rc);
	}
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 || keep(de->d_name, arg))
			continue;
		if (statefile_remove_resources(dir, de->d_name, &why) != 0) {
			if (rc == 0) {
				rc = -EIO;
				*cause = why;
			} else
				free(why);
			why = NULL;
			continue;
		}
		n++;
	}
	closedir(d);
	free(cdir);
	return (rc != 0 ? rc : n);
}
