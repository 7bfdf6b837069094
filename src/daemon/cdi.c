/*
 * cdi.c owns the CDI spec files the DRA plugin hands to the runtime. The
 * runtime watches the folder with inotify and loads every *.json in it
 * strictly, so a file must appear whole: it is staged under a name CDI
 * ignores, synced and renamed over. Claim UIDs and the driver name come
 * from outside (the API server, the config) and end up in a file name and
 * in CDI names, so both are checked against the narrowest rule that fits
 * them rather than escaped.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <dirent.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "atomicfile.h"
#include "cdi.h"
#include "log.h"
#include "policy.h"
#include "readfile.h"
#include "spares.h"
#include "xmalloc.h"

/* Bad names are echoed in causes cut to this many bytes. */
#define CDI_QUOTE_MAX	80

static int
cdi_lower_or_digit(char c)
{
	return ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'));
}

int
cdi_check_driver(const char *driver, char **cause)
{
	const char	*p, *label;
	char		*q;
	size_t		 len;
	int		 rc;

	len = driver == NULL ? 0 : strlen(driver);
	/* CDI wants the vendor to start with a letter; DNS does not. */
	if (len == 0 || len > CDI_DRIVER_MAX || !(*driver >= 'a' &&
	    *driver <= 'z'))
		goto bad;
	label = driver;
	for (p = driver;; p++) {
		if (*p == '.' || *p == '\0') {
			if (p == label || !cdi_lower_or_digit(*label) ||
			    !cdi_lower_or_digit(p[-1]))
				goto bad;
			if (*p == '\0')
				return (0);
			label = p + 1;
		} else if (!cdi_lower_or_digit(*p) && *p != '-')
			goto bad;
	}
bad:
	q = log_escape(driver, CDI_QUOTE_MAX);
	rc = atomicfile_error(cause, EINVAL, "CDI driver name \"%s\" is not a DNS "
	    "subdomain of at most %d characters starting with a letter", q,
	    CDI_DRIVER_MAX);
	free(q);
	return (rc);
}

/*
 * The uid becomes part of a file name and of CDI device names, which
 * allow letters, digits, '-', '_', '.' and ':' only; refusing anything
 * else also keeps '/', control characters and ".." out of the path.
 */
int
cdi_check_uid(const char *uid, char **cause)
{
	char		*q;
	size_t		 len;
	int		 rc;

	/* The policy's rule, so that a saved claim is a valid CDI name. */
	len = uid == NULL ? 0 : strlen(uid);
	if (len <= CDI_UID_MAX && claim_check_uid(uid, NULL) == 0)
		return (0);
	q = log_escape(uid, CDI_QUOTE_MAX);
	rc = atomicfile_error(cause, EINVAL, "claim UID \"%s\" is not a safe CDI "
	    "name (1 to %d letters, digits, -, _, . and :, not \".\", no "
	    "\"..\")", q, CDI_UID_MAX);
	free(q);
	return (rc);
}

/* An env edit "K=V": K not empty, no control characters anywhere. */
static int
cdi_check_edit(const char *uid, size_t i, const char *edit, char **cause)
{
	const char	*p;
	char		*q;
	int		 rc;

	if (edit != NULL && *edit != '=' && strchr(edit, '=') != NULL) {
		for (p = edit; *p != '\0'; p++) {
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				break;
		}
		if (*p == '\0')
			return (0);
	}
	q = log_escape(edit, CDI_QUOTE_MAX);
	rc = atomicfile_error(cause, EINVAL, "CDI spec for claim %s: edit %zu \"%s\" "
	    "is not an environment variable K=V", uid, i, q);
	free(q);
	return (rc);
}

char *
cdi_device_id(const char *driver, const char *uid, size_t i)
{
	char	*s;

	xasprintf(&s, "%s/%s=claim-%s-%zu", driver, CDI_CLASS, uid, i);
	return (s);
}

int
cdi_list(const char *dir, const char *driver, char ***uids, size_t *n,
    char **cause)
{
	struct dirent	*de;
	DIR		*d;
	char		*prefix, *uid;
	size_t		 plen, len;

	*uids = NULL;
	*n = 0;
	if ((d = opendir(dir)) == NULL)
		return (errno == ENOENT ? 0 : atomicfile_syserr(cause,
		    "opendir", dir));
	xasprintf(&prefix, "%s-%s_", driver, CDI_CLASS);
	plen = strlen(prefix);
	while ((de = readdir(d)) != NULL) {
		len = strlen(de->d_name);
		if (len <= plen + 5 || strncmp(de->d_name, prefix, plen) != 0 ||
		    strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		uid = xstrndup(de->d_name + plen, len - plen - 5);
		if (cdi_check_uid(uid, NULL) != 0) {
			free(uid);
			continue;
		}
		*uids = xreallocarray(*uids, *n + 1, sizeof **uids);
		(*uids)[(*n)++] = uid;
	}
	closedir(d);
	free(prefix);
	return (0);
}

char *
cdi_path(const char *dir, const char *driver, const char *uid)
{
	char	*s;

	xasprintf(&s, "%s/%s-%s_%s.json", dir, driver, CDI_CLASS, uid);
	return (s);
}

/* The spec as text (caller frees), or NULL when jansson refuses a string
 * (not UTF-8). */
static char *
cdi_render(const char *driver, const char *uid, const char *const *edits,
    size_t n)
{
	json_t	*doc, *devices, *dev;
	char	*kind, *name, *text, *out = NULL;
	size_t	 i;

	xasprintf(&kind, "%s/%s", driver, CDI_CLASS);
	doc = json_pack("{s:s, s:s, s:[]}", "cdiVersion", CDI_VERSION,
	    "kind", kind, "devices");
	free(kind);
	if (doc == NULL)
		return (NULL);
	devices = json_object_get(doc, "devices");
	for (i = 0; i < n; i++) {
		xasprintf(&name, "claim-%s-%zu", uid, i);
		dev = json_pack("{s:s, s:{s:[s]}}", "name", name,
		    "containerEdits", "env", edits[i]);
		free(name);
		/* append_new takes dev, even when it fails. */
		if (dev == NULL || json_array_append_new(devices, dev) != 0)
			goto out;
	}
	if ((text = json_dumps(doc, JSON_INDENT(2))) != NULL) {
		xasprintf(&out, "%s\n", text);
		free(text);
	}
out:
	json_decref(doc);
	return (out);
}

char *
cdi_spec_text(const char *driver, const char *uid, const char *const *edits,
    size_t n)
{
	return (cdi_render(driver, uid, edits, n));
}

/* The folder exists (made 0755 if it did not) and is a folder. */
static int
cdi_ensure_dir(const char *dir, char **cause)
{
	struct stat	st;

	if (stat(dir, &st) == -1) {
		if (errno != ENOENT)
			return (atomicfile_syserr(cause, "stat", dir));
		if (mkdir(dir, 0755) == -1 && errno != EEXIST)
			return (atomicfile_syserr(cause, "mkdir", dir));
		/* The runtime may not run as us: 0755 whatever the umask. */
		if (chmod(dir, 0755) == -1 || stat(dir, &st) == -1)
			return (atomicfile_syserr(cause, "chmod", dir));
	}
	if (!S_ISDIR(st.st_mode))
		return (atomicfile_error(cause, ENOTDIR, "CDI directory %s: %s", dir,
		    strerror(ENOTDIR)));
	return (0);
}

/*
 * The spec written into a spare and renamed into place, as atomic for
 * readers as atomicfile_replace without a new inode; 0, or -1 (the
 * spare, if any, removed) for the caller to write it the usual way.
 */
static int
cdi_put_spare(struct spares *sp, const char *path, const char *data,
    size_t len)
{
	char	*spare;
	int	 rc;

	if (sp == NULL || (spare = spares_take(sp)) == NULL)
		return (-1);
	if ((rc = atomicfile_fill(spare, data, len, NULL)) == 0 &&
	    rename(spare, path) == -1)
		rc = -1;
	if (rc != 0) {
		(void)unlink(spare);
		rc = -1;
	}
	free(spare);
	return (rc);
}

int
cdi_write(struct spares *sp, const char *dir, const char *driver,
    const char *uid, const char *const *edits, size_t n, int fresh,
    char **cause)
{
	char	*path, *data, *old = NULL, *why = NULL;
	size_t	 i, oldlen;
	int	 rc;

	if ((rc = cdi_check_driver(driver, cause)) != 0 ||
	    (rc = cdi_check_uid(uid, cause)) != 0)
		return (rc);
	/* CDI refuses a spec without devices, so an empty claim has none. */
	if (n == 0 || n > CDI_MAX_DEVICES)
		return (atomicfile_error(cause, EINVAL, "CDI spec for claim %s: %zu "
		    "devices, not 1 to %d", uid, n, CDI_MAX_DEVICES));
	for (i = 0; i < n; i++) {
		if ((rc = cdi_check_edit(uid, i, edits[i], cause)) != 0)
			return (rc);
	}
	if ((data = cdi_render(driver, uid, edits, n)) == NULL)
		return (atomicfile_error(cause, EINVAL, "CDI spec for claim %s: an "
		    "edit is not valid UTF-8", uid));
	path = cdi_path(dir, driver, uid);
	/* A claim prepared again: the spec it has is left alone. */
	if (!fresh &&
	    readfile(path, NULL, CDI_SPEC_MAX, &old, &oldlen, &why) == 0 &&
	    oldlen == strlen(data) && memcmp(old, data, oldlen) == 0)
		rc = 0;
	else if ((rc = cdi_ensure_dir(dir, cause)) == 0 &&
	    cdi_put_spare(sp, path, data, strlen(data)) != 0)
		rc = atomicfile_replace(dir, path + strlen(dir) + 1, data,
		    strlen(data), 0644, 0, cause);
	free(why);
	free(old);
	free(path);
	free(data);
	return (rc);
}

int
cdi_remove(struct spares *sp, const char *dir, const char *driver,
    const char *uid, char **cause)
{
	struct stat	 st;
	const char	*kept;
	char		*path, *tmp;
	int		 rc;

	if ((rc = cdi_check_driver(driver, cause)) != 0 ||
	    (rc = cdi_check_uid(uid, cause)) != 0)
		return (rc);
	path = cdi_path(dir, driver, uid);
	xasprintf(&tmp, "%s%s", path, CDI_TMP_SUFFIX);
	/*
	 * A dir that is not a folder holds no spec either. The removal is
	 * not synced: a spec back after a crash names a claim the journal
	 * no longer holds, and goes at the next start (dra.c tidy_specs).
	 * Kept as a spare, it is emptied: no stale spec lies about.
	 */
	if (sp != NULL && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (kept = spares_keep(sp, path)) != NULL)
		(void)truncate(kept, 0);
	else if (unlink(path) == -1 && errno != ENOENT && errno != ENOTDIR) {
		rc = atomicfile_syserr(cause, "unlink", path);
		goto out;
	}
	if (unlink(tmp) == -1 && errno != ENOENT && errno != ENOTDIR) {
		rc = atomicfile_syserr(cause, "unlink", tmp);
		goto out;
	}
out:
	free(tmp);
	free(path);
	return (rc);
}

/* A spare found in the CDI folder: a plain file (anything else with our
 * prefix is left alone: the folder is shared), emptied. A stop between
 * filling a spare and renaming it, or between keeping a removed spec and
 * emptying it, leaves one with a spec in it. */
static int
cdi_spare_fits(const char *path, void *arg)
{
	struct stat	st;

	(void)arg;
	return (lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
	    (st.st_size == 0 || truncate(path, 0) == 0));
}

/* An empty file for a spec to be written into, made as atomicfile.h
 * makes a new one (mode 0644 whatever the umask); errno says why not. */
static int
cdi_spare_make(const char *path, void *arg)
{
	int	rc;

	(void)arg;
	if ((rc = atomicfile_new(path, "", 0, NULL)) == 0)
		return (0);
	errno = -rc;
	return (-1);
}

int
cdi_spares_ahead(struct spares *sp, const char *dir, size_t want,
    char **cause)
{
	int	rc, made = 0;

	if (spares_count(sp) >= want)
		return (0);
	if ((rc = cdi_ensure_dir(dir, cause)) != 0)
		return (rc);
	while (spares_count(sp) < want) {
		/* Not set by spares_make when it keeps no more. */
		errno = ENOSPC;
		if (spares_make(sp, cdi_spare_make, NULL) != 0)
			return (atomicfile_syserr(cause, "make a spare in",
			    dir));
		made++;
	}
	return (made);
}

struct spares *
cdi_spares_new(const char *dir)
{
	return (spares_new(dir, CDI_SPARES, CDI_SPARES_CAP, cdi_spare_fits,
	    NULL));
}
