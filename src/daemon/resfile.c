/*
 * resfile.c owns the resources.sh files under the state directory
 * (R-STATE-4): containers/<id>/resources.sh of each container, and
 * pools/<pool>/resources.sh, the one file every shared container of a
 * pool reads: its folder containers/<id> is a link to pools/<pool>, a hard
 * link of the pool's own link containers/.pool.<pool>, so links make and
 * free no inode. A file is replaced atomically, recycling its inode, so a
 * reader sees the old content or the new; a link and a folder take each
 * other's place by exchange; the folder of a container that goes is kept
 * as a spare for the next. Nothing here knows the policy: the caller
 * renders the text.
 */
#include "autoconf.h"

#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "log.h"
#include "resfile.h"
#include "spares.h"
#include "xmalloc.h"

/* A container id is used as a file name: one plain path component, and
 * not a hidden one (those are the stages' and the spares'). */
static int
rf_check_id(const char *id, char **cause)
{
	const char	*p;
	char		*esc;
	int		 rc;

	for (p = id; *p != '\0'; p++) {
		if (*p == '/' || (unsigned char)*p < 0x20 || *p == 0x7f)
			break;
	}
	if (*id != '\0' && *id != '.' && *p == '\0' &&
	    strlen(id) <= NAME_MAX)
		return (0);
	esc = log_escape(id, 80);
	rc = atomicfile_error(cause, EINVAL, "container id \"%s\" is not a safe file "
	    "name", esc);
	free(esc);
	return (rc);
}

static int
rf_var_name_ok(const char *s)
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
rf_var_value_ok(const char *s)
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
rf_var_cmp(const void *a, const void *b)
{
	const struct resfile_var *const	*va = a, *const *vb = b;

	return (strcmp((*va)->name, (*vb)->name));
}

/* Beside resources.sh: the next one's inode, and the old one's for a
 * moment. */
#define RF_SPARE	".resources.sh.spare"
#define RF_OLD		".resources.sh.old"
/* The prefix of the names a container's next link or folder is staged
 * under in containers/. */
#define RF_STAGE	".resfile-"
/* The prefix of the spare folders in containers/ (spares.h). */
#define RF_SPARES	".spare."
/* How many spare folders are kept at most. */
#define RF_SPARES_CAP	128
/* The prefix of a pool's own link in containers/, which every shared
 * container's link to the pool is a hard link of. */
#define RF_TEMPLATE	".pool."

static char	*rf_live(const char *, const char *);
static char	*rf_stage(const char *, const char *, const char *);
static int	 rf_remove_any(const char *, char **);
static int	 rf_swap_in(struct spares *, const char *, const char *,
		    char **);
static char	*rf_link_target(const char *);

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
rf_replace_recycled(const char *idir, const char *data, size_t len,
    int fresh, char **cause)
{
	char	*live, *spare, *old;
	int	 rc = 0, kept;

	live = xstrcat3(idir, "/", RESFILE_NAME);
	spare = xstrcat3(idir, "/", RF_SPARE);
	old = xstrcat3(idir, "/", RF_OLD);
	if ((rc = (fresh ? atomicfile_new : atomicfile_fill)(spare, data, len,
	    cause)) != 0)
		goto out;
	/* A folder just made has no file to keep. */
	if (fresh) {
		if (rename(spare, live) == -1)
			rc = atomicfile_syserr(cause, "rename", spare);
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
	free(live);
	free(spare);
	free(old);
	return (rc);
}

int
resfile_render(const char *id, const struct resfile_var *vars,
    size_t nvars, char **out, size_t *outlen, char **cause)
{
	const struct resfile_var	**sorted;
	char				 *data, *esc;
	size_t				  i, len = 0, size = 1;
	int				  rc;

	*out = NULL;
	for (i = 0; i < nvars; i++) {
		if (vars[i].name == NULL || !rf_var_name_ok(vars[i].name) ||
		    vars[i].value == NULL || !rf_var_value_ok(vars[i].value)) {
			esc = log_escape(vars[i].name, 80);
			rc = atomicfile_error(cause, EINVAL, "%s for container %s: "
			    "bad variable %s", RESFILE_NAME, id, esc);
			free(esc);
			return (rc);
		}
		size += strlen(vars[i].name) + strlen(vars[i].value) + 4;
	}
	sorted = xreallocarray(NULL, nvars + 1, sizeof *sorted);
	for (i = 0; i < nvars; i++)
		sorted[i] = &vars[i];
	qsort(sorted, nvars, sizeof *sorted, rf_var_cmp);
	for (i = 1; i < nvars; i++) {
		if (strcmp(sorted[i - 1]->name, sorted[i]->name) == 0) {
			rc = atomicfile_error(cause, EINVAL, "%s for container %s: "
			    "variable %s given twice", RESFILE_NAME, id,
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

/* Makes <dir>/<sub> and <dir>/<sub>/<name>, 0700, where missing. */
static int
rf_mkdirs(const char *dir, const char *sub, const char *name, char **cause)
{
	char	*cdir, *idir;
	int	 rc = 0;

	cdir = xstrcat3(dir, "/", sub);
	idir = xstrcat3(cdir, "/", name);
	/* <dir>/<sub> is there but for the first. */
	if (mkdir(idir, 0700) == 0 || errno == EEXIST)
		rc = 0;
	else if (errno != ENOENT)
		rc = atomicfile_syserr(cause, "mkdir", idir);
	else if (mkdir(cdir, 0700) == -1 && errno != EEXIST)
		rc = atomicfile_syserr(cause, "mkdir", cdir);
	else if (mkdir(idir, 0700) == -1 && errno != EEXIST)
		rc = atomicfile_syserr(cause, "mkdir", idir);
	free(idir);
	free(cdir);
	return (rc);
}

/* Writes <dir>/<sub>/<name>/resources.sh; the folders are there but for
 * the first write (fresh when the caller knows it): made on a failure,
 * and the write tried again. */
static int
rf_put(const char *dir, const char *sub, const char *name, const char *data,
    size_t len, int fresh, char **cause)
{
	char	*idir;
	int	 rc;

	xasprintf(&idir, "%s/%s/%s", dir, sub, name);
	if (fresh && rf_mkdirs(dir, sub, name, NULL) == 0 &&
	    rf_replace_recycled(idir, data, len, 1, NULL) == 0)
		rc = 0;
	else if ((rc = rf_replace_recycled(idir, data, len, 0, NULL)) != 0 &&
	    (rc = rf_mkdirs(dir, sub, name, cause)) == 0)
		rc = rf_replace_recycled(idir, data, len, 0, cause);
	free(idir);
	return (rc);
}

/*
 * Writes data into a folder spare and puts it in live's place: renamed
 * in where there was nothing, exchanged with a link (kept as a spare in
 * turn). 0, or -1 with the spare removed.
 */
static int
rf_put_spare(struct spares *sp, char *spare, const char *live, int fresh,
    const char *data, size_t len)
{
	int	rc = -1;

	if (rf_replace_recycled(spare, data, len, 0, NULL) == 0)
		rc = fresh ? rename(spare, live) : rf_swap_in(sp, spare, live,
		    NULL);
	if (rc != 0) {
		(void)rf_remove_any(spare, NULL);
		rc = -1;
	}
	free(spare);
	return (rc);
}

int
resfile_put(struct spares *sp, const char *dir, const char *id,
    const char *data, size_t len, char **cause)
{
	struct stat	 st;
	char		*live, *stage;
	int		 rc, fresh, linked;

	if ((rc = rf_check_id(id, cause)) != 0)
		return (rc);
	live = rf_live(dir, id);
	if (lstat(live, &st) == 0) {
		fresh = 0;
		linked = S_ISLNK(st.st_mode);
	} else {
		fresh = errno == ENOENT;
		linked = 0;
	}
	/* A new folder, or one taking a link's place: a spare's, if any. */
	if ((fresh || linked) && sp != NULL &&
	    (stage = spares_take(sp)) != NULL &&
	    rf_put_spare(sp, stage, live, fresh, data, len) == 0) {
		free(live);
		return (0);
	}
	if (!linked) {
		free(live);
		return (rf_put(dir, "containers", id, data, len, fresh,
		    cause));
	}
	/* Linked to its pool until now: a folder of its own is staged,
	 * then takes the link's place at once. */
	stage = rf_stage(dir, id, "new");
	if ((rc = rf_remove_any(stage, cause)) == 0) {
		if (mkdir(stage, 0700) == -1)
			rc = atomicfile_syserr(cause, "mkdir", stage);
		else if ((rc = rf_replace_recycled(stage, data, len, 1,
		    cause)) == 0)
			rc = rf_swap_in(sp, stage, live, cause);
		if (rc != 0)
			(void)rf_remove_any(stage, NULL);
	}
	free(stage);
	free(live);
	return (rc);
}

int
resfile_put_pool(const char *dir, const char *pool, const char *data,
    size_t len, char **cause)
{
	int	rc;

	if ((rc = rf_check_id(pool, cause)) != 0)
		return (rc);
	return (rf_put(dir, "pools", pool, data, len, 0, cause));
}

char *
resfile_pool_name(const char *name)
{
	char	*out = xmalloc(strlen(name) + 1), *o = out;
	int	 dash = 0;

	for (; *name != '\0'; name++) {
		if (isalnum((unsigned char)*name)) {
			if (dash && o != out)
				*o++ = '-';
			*o++ = (char)tolower((unsigned char)*name);
			dash = 0;
		} else
			dash = 1;
	}
	if (o == out)
		*o++ = '-';
	*o = '\0';
	return (out);
}

/* A shared container's folder is a link to its pool's: ../pools/<pool>. */
static char *
rf_link_target(const char *pool)
{
	char	*t;

	t = xstrcat3("../pools/", pool, "");
	return (t);
}

static char *
rf_live(const char *dir, const char *id)
{
	char	*p;

	p = xstrcat3(dir, "/containers/", id);
	return (p);
}

/* Where a container's next link or folder is made before it takes the
 * place of the live one; prune takes what a crash leaves there away. */
static char *
rf_stage(const char *dir, const char *id, const char *what)
{
	char	*p;

	/* Cut to fit a name; stages are used one at a time. */
	xasprintf(&p, "%s/containers/" RF_STAGE "%.200s.%s", dir, id, what);
	return (p);
}

/* A container folder's files and the folder, never through a link. */
static int
rf_rmdir_files(const char *idir, char **cause)
{
	static const char	*names[] = { RESFILE_NAME,
	    RESFILE_NAME ".tmp", RF_SPARE, RF_OLD };
	char			*file;
	size_t			 i;
	int			 rc = 0;

	for (i = 0; i < sizeof names / sizeof names[0] && rc == 0; i++) {
		xasprintf(&file, "%s/%s", idir, names[i]);
		if (unlink(file) == -1 && errno != ENOENT && errno != ENOTDIR)
			rc = atomicfile_syserr(cause, "unlink", file);
		free(file);
	}
	if (rc == 0 && rmdir(idir) == -1 && errno != ENOENT)
		rc = atomicfile_syserr(cause, "rmdir", idir);
	return (rc);
}

/* Whatever is at path: a link or a file unlinked, a folder emptied and
 * removed (a link is never followed). */
static int
rf_remove_any(const char *path, char **cause)
{
	struct stat	st;

	if (lstat(path, &st) == -1)
		return (errno == ENOENT ? 0 :
		    atomicfile_syserr(cause, "lstat", path));
	if (S_ISDIR(st.st_mode))
		return (rf_rmdir_files(path, cause));
	if (unlink(path) == -1 && errno != ENOENT)
		return (atomicfile_syserr(cause, "unlink", path));
	return (0);
}

/*
 * Whatever is at path goes: a folder is kept as a spare when sp has room
 * for it (its inode then serves a next container), else removed; a link
 * is one of its pool's (rf_make_link) and just goes.
 */
static int
rf_retire(struct spares *sp, const char *path, char **cause)
{
	struct stat	 st;

	if (sp != NULL && lstat(path, &st) == 0 && S_ISDIR(st.st_mode) &&
	    spares_keep(sp, path) != NULL)
		return (0);
	return (rf_remove_any(path, cause));
}

/*
 * Puts staged (a link or a folder) in live's place at once: exchanged
 * with it, then what was live retired from the staged name; where the
 * file system cannot exchange, live goes first and staged is renamed in.
 */
static int
rf_swap_in(struct spares *sp, const char *staged, const char *live,
    char **cause)
{
	int	rc;

	if (renameat2(AT_FDCWD, staged, AT_FDCWD, live, RENAME_EXCHANGE) ==
	    0) {
		(void)rf_retire(sp, staged, NULL);
		return (0);
	}
	if (errno != EINVAL && errno != ENOSYS)
		return (atomicfile_syserr(cause, "rename", staged));
	if ((rc = rf_retire(sp, live, cause)) != 0)
		return (rc);
	if (rename(staged, live) == -1)
		return (atomicfile_syserr(cause, "rename", staged));
	return (0);
}

/*
 * Makes path a link to the pool's folder: a hard link of the pool's own
 * link, containers/.pool.<pool> (made, or mended, here), so that a new
 * container's link makes no inode and a gone one's frees none; a link of
 * its own where that cannot be (too many links to one inode, a file
 * system without hard links). -EEXIST, with no cause, when path is there.
 * With *known set, the pool's link was found right a moment ago (by the
 * caller's last call): linked at once, not read first; it is set when the
 * pool's link was read or made right.
 */
static int
rf_make_link(const char *dir, const char *pool, const char *path, int *known,
    char **cause)
{
	char	*tmpl, *target = NULL, *stage = NULL, *cdir, buf[PATH_MAX];
	size_t	 tlen;
	ssize_t	 n;
	int	 rc = 0, tries;

	tmpl = xstrcat3(dir, "/containers/" RF_TEMPLATE, pool);
	if (known != NULL && *known) {
		if (linkat(AT_FDCWD, tmpl, AT_FDCWD, path, 0) == 0)
			goto out;
		if (errno == EEXIST) {
			rc = -EEXIST;
			goto out;
		}
		*known = 0;
	}
	stage = xstrcat3(dir, "/containers/" RF_STAGE "pool.", pool);
	target = rf_link_target(pool);
	tlen = strlen(target);
	for (tries = 0; tries < 3; tries++) {
		n = readlink(tmpl, buf, sizeof buf);
		if (n == (ssize_t)tlen && memcmp(buf, target, tlen) == 0) {
			if (known != NULL)
				*known = 1;
			if (linkat(AT_FDCWD, tmpl, AT_FDCWD, path, 0) == 0)
				goto out;
			if (errno == ENOENT)
				continue;
			if (errno == EEXIST) {
				rc = -EEXIST;
				goto out;
			}
			break;
		}
		if (n == -1 && errno == ENOENT) {
			if (symlink(target, tmpl) == 0 || errno == EEXIST)
				continue;
			if (errno != ENOENT)
				break;
			/* The first container: containers/ is made. */
			xasprintf(&cdir, "%s/containers", dir);
			if (mkdir(cdir, 0700) == -1 && errno != EEXIST) {
				rc = atomicfile_syserr(cause, "mkdir", cdir);
				free(cdir);
				goto out;
			}
			free(cdir);
			continue;
		}
		/* Not the pool's link: put right at once. */
		(void)unlink(stage);
		if (symlink(target, stage) == -1 || rename(stage, tmpl) == -1) {
			(void)unlink(stage);
			break;
		}
	}
	if (symlink(target, path) == -1)
		rc = errno == EEXIST ? -EEXIST :
		    atomicfile_syserr(cause, "symlink", path);
out:
	free(target);
	free(stage);
	free(tmpl);
	return (rc);
}

/*
 * Makes a container's folder a link to its pool's folder, so that its
 * resources.sh is the pool's. An existing link or folder is replaced at
 * once.
 */
int
resfile_link(struct spares *sp, const char *dir, const char *id,
    const char *pool, int *known, char **cause)
{
	char		*live, *tmp = NULL;
	int		 rc = 0;

	if ((rc = rf_check_id(id, cause)) != 0 ||
	    (rc = rf_check_id(pool, cause)) != 0)
		return (rc);
	/* Most often there is nothing yet: linked at once, not looked up
	 * first (in a folder of thousands, a name not there is dear). */
	live = rf_live(dir, id);
	if ((rc = rf_make_link(dir, pool, live, known, cause)) != -EEXIST)
		goto out;
	tmp = rf_stage(dir, id, "link");
	if ((rc = rf_remove_any(tmp, cause)) == 0 &&
	    (rc = rf_make_link(dir, pool, tmp, known, cause)) == 0 &&
	    (rc = rf_swap_in(sp, tmp, live, cause)) != 0)
		(void)unlink(tmp);
	if (rc == -EEXIST)	/* something came back in the stage's place */
		rc = atomicfile_error(cause, EEXIST, "link %s: %s", tmp,
		    strerror(EEXIST));
out:
	free(tmp);
	free(live);
	return (rc);
}

int
resfile_linked(const char *dir, const char *id, const char *pool)
{
	char	*live, *target, buf[PATH_MAX];
	ssize_t	 n;
	int	 same;

	if (rf_check_id(id, NULL) != 0)
		return (0);
	live = rf_live(dir, id);
	target = rf_link_target(pool);
	n = readlink(live, buf, sizeof buf);
	same = n > 0 && (size_t)n == strlen(target) &&
	    memcmp(buf, target, (size_t)n) == 0;
	free(target);
	free(live);
	return (same);
}

int
resfile_write(const char *dir, const char *id,
    const struct resfile_var *vars, size_t nvars, char **cause)
{
	char	*data;
	size_t	 len;
	int	 rc;

	if ((rc = rf_check_id(id, cause)) != 0 ||
	    (rc = resfile_render(id, vars, nvars, &data, &len,
	    cause)) != 0)
		return (rc);
	rc = resfile_put(NULL, dir, id, data, len, cause);
	free(data);
	return (rc);
}

int
resfile_remove(struct spares *sp, const char *dir, const char *id,
    char **cause)
{
	char	*live, *stage;
	int	 rc;

	if ((rc = rf_check_id(id, cause)) != 0)
		return (rc);
	live = rf_live(dir, id);
	rc = rf_retire(sp, live, cause);
	/* What a crash may have left staged. */
	stage = rf_stage(dir, id, "link");
	(void)rf_remove_any(stage, NULL);
	free(stage);
	stage = rf_stage(dir, id, "new");
	(void)rf_remove_any(stage, NULL);
	free(stage);
	free(live);
	return (rc);
}

int
resfile_prune(struct spares *sp, const char *dir,
    int (*keep)(const char *, void *), void *arg, char **cause)
{
	struct dirent	*de;
	DIR		*d;
	char		*cdir, *path, *why = NULL;
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
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (strncmp(de->d_name, RF_STAGE, strlen(RF_STAGE)) == 0) {
			/* Staged by a write a crash cut short. */
			xasprintf(&path, "%s/%s", cdir, de->d_name);
			(void)rf_remove_any(path, NULL);
			free(path);
			continue;
		}
		/* No container's (ids are never hidden): the spares and
		 * the pools' links. */
		if (de->d_name[0] == '.' || keep(de->d_name, arg))
			continue;
		if (resfile_remove(sp, dir, de->d_name, &why) != 0) {
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

/* A spare found in containers/ at the first use: a folder; anything
 * else under the prefix goes. */
static int
rf_spare_fits(const char *path, void *arg)
{
	struct stat	 st;

	(void)arg;
	if (lstat(path, &st) == -1)
		return (0);
	if (S_ISDIR(st.st_mode))
		return (1);
	(void)rf_remove_any(path, NULL);
	return (0);
}

struct spares *
resfile_spares_new(const char *dir)
{
	struct spares	*sp;
	char		*cdir;

	xasprintf(&cdir, "%s/containers", dir);
	sp = spares_new(cdir, RF_SPARES, RF_SPARES_CAP, rf_spare_fits, NULL);
	free(cdir);
	return (sp);
}
